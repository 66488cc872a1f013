//! DNS: the CAA records a zone publishes for the scanned name (RFC 8659), by a minimal UDP
//! client, so no resolver library is needed. (Being written: see the issue note.)

use std::net::SocketAddr;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaaRecord {
    pub flags: u8,
    pub tag: String,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaaLookup {
    /// The relevant CAA record set (of the name or its closest ancestor that has one).
    Records {
        owner: String,
        records: Vec<CaaRecord>,
    },
    /// No CAA record on the name or any ancestor.
    NoRecords,
    /// The lookup failed (no server, timeout, malformed answer).
    Failed(String),
}

/// The first `nameserver` of /etc/resolv.conf, port 53.
pub fn system_nameserver() -> Option<SocketAddr> {
    None
}

pub fn lookup_caa(_name: &str, _server: SocketAddr, _timeout: Duration) -> CaaLookup {
    CaaLookup::Failed("not implemented yet".into())
}
