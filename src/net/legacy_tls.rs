//! Whether a server still accepts TLS 1.0 or 1.1. rustls cannot speak them, so this sends a
//! hand-built ClientHello pinned to the old version and reads the server's first record.
//! (Being written: see the issue note.)

use super::proxy::Proxy;
use std::time::Duration;

/// The outcome for one protocol version: `Some(true)` accepted, `Some(false)` refused,
/// `None` could not be decided (connection failed, garbage).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LegacyTls {
    pub tls1_0: Option<bool>,
    pub tls1_1: Option<bool>,
    /// Why a version could not be decided.
    pub error: Option<String>,
}

pub fn probe(_host: &str, _port: u16, _proxy: Option<&Proxy>, _timeout: Duration) -> LegacyTls {
    LegacyTls {
        tls1_0: None,
        tls1_1: None,
        error: Some("not probed yet".into()),
    }
}
