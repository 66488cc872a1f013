//! Debug listeners: one TCP connect per port, all ports at once, then the debug handlers of
//! every port that accepted. (Being written: see the issue note.)

use crate::net::http::Response;
use std::time::Duration;

/// What a connect to one port showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortState {
    /// Accepted the connection.
    Open,
    /// Refused at once (nothing listens).
    Closed,
    /// No answer within the connect timeout (firewalled, or the host drops packets).
    Filtered,
    /// Any other failure (name does not resolve, ...).
    Error(String),
}

#[derive(Clone, Debug)]
pub struct DebugAnswer {
    pub path: String,
    pub answer: Result<Response, String>,
}

#[derive(Clone, Debug)]
pub struct DebugPort {
    pub port: u16,
    pub state: PortState,
    /// Answers of `/healthz`, `/readyz`, `/metrics`, `/config`, `/debug/pprof/` when open.
    pub endpoints: Vec<DebugAnswer>,
}

/// Probes every port concurrently; returns one entry per port, in the order given.
pub fn probe(
    _host: &str,
    ports: &[u16],
    _connect_timeout: Duration,
    _request_timeout: Duration,
) -> Vec<DebugPort> {
    ports
        .iter()
        .map(|port| DebugPort {
            port: *port,
            state: PortState::Error("not probed yet".into()),
            endpoints: Vec::new(),
        })
        .collect()
}
