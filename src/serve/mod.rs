//! The long-running faces of the scanner: the scan service (`check-storage-scanner serve`) and
//! the metrics exporter (`check-storage-security --prometheus-listen-port`). Both serve on
//! `http` (caps, deadlines, JSON errors, one log line per request) and scan with
//! `crate::scanner`, the plugin's own pipeline.

pub mod exporter;
pub mod http;
pub mod service;
pub mod signals;
