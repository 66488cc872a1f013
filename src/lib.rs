//! check-storage-security: an outside-in security check for self-hosted file-sync and sharing
//! servers (OpenCloud first, ownCloud Infinite Scale second; "storage" in every identifier).
//!
//! One pipeline, pure after the wire (see `shared/DESIGN.md`):
//! settings -> targets -> probes (network) -> measurements -> findings -> assessment -> result
//! -> verdict and output. Only `net` and `probe` touch the network; everything after the
//! measurements is a pure function of them, the settings and an injected clock.

pub mod assess;
pub mod atomic_file;
pub mod budget;
pub mod capped;
pub mod checks;
pub mod clock;
pub mod diagnostics;
pub mod exporter;
pub mod family;
pub mod feeds;
pub mod files;
pub mod fleet;
pub mod knowledge;
pub mod net;
pub mod notify;
pub mod output;
pub mod probe;
pub mod process;
pub mod program;
pub mod redact;
pub mod report;
pub mod run;
pub mod scanner;
pub mod scanner_cli;
pub mod self_update;
pub mod server;
pub mod service;
pub mod settings;
pub mod severity;
pub mod target;
pub mod text;
pub mod verdict;
pub mod verify;
pub mod vocabulary;
pub mod web;
pub mod wizard;
