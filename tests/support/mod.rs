//! Test support: a fake OpenCloud (or oCIS) instance on loopback that replays real captured
//! answers (`tests/fixtures/`), with TLS variants, faults and request recording.
//!
//! ```ignore
//! mod support;
//! use support::{FakeInstance, InstanceConfig};
//!
//! let fake = FakeInstance::start(InstanceConfig::default().version("7.2.4"));
//! // scan fake.base_url() trusting fake.ca_file() ...
//! assert!(fake.requests().iter().any(|r| r.path() == "/status.php"));
//! ```
//!
//! Included from integration tests (`mod support;`) and from the `fake-instance` example
//! (`#[path = "mod.rs"] mod support;`), so not every item is used everywhere.
#![allow(dead_code, unused_imports)]

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

pub mod certs;
pub mod debug_listener;
pub mod drip;
pub mod exporter;
pub mod feed;
pub mod fixtures;
pub mod fleet;
pub mod http;
pub mod instance;
/// Only in integration tests: it needs the test binary's compile-time paths.
#[cfg(test)]
pub mod junit_xsd;
/// Only in integration tests: it needs the test binary's compile-time paths.
#[cfg(test)]
pub mod plugin;
pub mod proxy;
pub mod redis;
pub mod server;
pub mod service;
pub mod stall;
/// Only in integration tests: the checks every store passes (tests/it/store_*.rs).
#[cfg(test)]
pub mod store_conformance;
/// Only in integration tests: it needs the test binary's compile-time paths.
#[cfg(test)]
pub mod web;

/// The clock every test pins (`COS_NOW`), and the day the fake instances' certificates are
/// dated around: a test never reads the machine's clock for a date it asserts.
pub const PINNED_NOW: &str = "2026-11-22T03:00:00Z";

/// `command` without libfaketime: a real component with a clock of its own (redis-server,
/// named and the bind9 tools that sign its zones, Chromium) keeps the machine's real time when
/// `make test-clock` runs the tests with libfaketime preloaded. Several of them cannot even
/// start under it (jemalloc's clock calls recurse into libfaketime).
pub fn on_the_real_clock(command: &mut std::process::Command) -> &mut std::process::Command {
    if std::env::var("LD_PRELOAD").is_ok_and(|preload| preload.contains("faketime")) {
        command.env_remove("LD_PRELOAD");
    }
    command
}

pub use certs::TlsMode;
pub use debug_listener::{DebugListener, start_debug_listener};
pub use feed::FeedServer;
pub use fixtures::RawResponse;
pub use http::RecordedRequest;
pub use instance::{
    DemoAccount, FakeInstance, Fault, FaultKind, HeaderEdit, InstanceConfig, LogonGate, Product,
    Route, SignIns,
};
pub use proxy::ConnectProxy;
pub use server::Traffic;

/// A loopback port the test holds closed: bound but never listening, so a connection to it
/// is refused, and no other process can listen on it (nor on the wildcard address at that
/// port) while the test holds it. A scan's debug ports are these when the test does not
/// start listeners of its own: the machine's own debug ports (a developer's OpenCloud on
/// 9205, ...) are never what a test asserts about.
pub struct HeldClosedPort(socket2::Socket);

impl HeldClosedPort {
    pub fn new() -> HeldClosedPort {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .expect("a TCP socket");
        socket
            .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
            .expect("bind 127.0.0.1:0");
        HeldClosedPort(socket)
    }

    pub fn port(&self) -> u16 {
        self.0
            .local_addr()
            .ok()
            .and_then(|addr| addr.as_socket())
            .expect("a bound address")
            .port()
    }
}

/// `n` [`HeldClosedPort`]s and `COS_SCANNER_DEBUG_PORTS` naming them: a scan's debug ports
/// that are closed whatever else runs on the machine (hold the ports while the scan runs).
pub fn held_debug_ports(n: usize) -> (Vec<HeldClosedPort>, (&'static str, String)) {
    let held: Vec<HeldClosedPort> = (0..n).map(|_| HeldClosedPort::new()).collect();
    let list: Vec<String> = held.iter().map(|p| p.port().to_string()).collect();
    (held, ("COS_SCANNER_DEBUG_PORTS", list.join(",")))
}

/// A loopback port nothing listens on (bound, read, released).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("local addr").port();
    drop(listener);
    port
}

/// A listener whose accept queue is full: Linux drops further SYNs, so connects time out as
/// they do against a firewall that drops packets. `None` when the kernel never drops.
pub fn filtered_listener() -> Option<(TcpListener, Vec<TcpStream>)> {
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    let addr = listener.local_addr().ok()?;
    let mut held = Vec::new();
    for _ in 0..5000 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(stream) => held.push(stream),
            Err(e) if e.kind() == ErrorKind::TimedOut => {
                // Confirm: a second connect must time out too.
                match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                    Err(_) => return Some((listener, held)),
                    Ok(stream) => held.push(stream),
                }
            }
            Err(_) => return None,
        }
    }
    None
}
