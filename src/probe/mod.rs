//! Probes: the only code besides `net` that talks to the instance. Each returns what it saw
//! (a measurement), never a verdict.

pub mod status;

use crate::net::HttpsObservation;
use crate::net::http::{Client, Endpoint, FetchError, Response};
use status::StatusReport;

/// Everything a scan measured on one host.
#[derive(Clone, Debug)]
pub struct Measurements {
    pub endpoint: Endpoint,
    pub https: HttpsObservation,
    pub status: StatusReport,
    /// The v1 capabilities document (`ocs.data.capabilities`), when the instance served it.
    pub capabilities: Option<serde_json::Value>,
    /// The answer to `GET /`: its headers are what a browser gets.
    pub root: Option<Response>,
}

/// Why a scan could not measure the instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeFailure {
    /// Network trouble or a 5xx: the scan may succeed when run again.
    Transient(String),
    /// The answer is definite and retrying will not change it (not a storage server, ...).
    Definite(String),
}

impl ProbeFailure {
    pub fn message(&self) -> &str {
        match self {
            ProbeFailure::Transient(m) | ProbeFailure::Definite(m) => m,
        }
    }
}

impl From<FetchError> for ProbeFailure {
    fn from(e: FetchError) -> Self {
        match e {
            FetchError::Transient(m) => ProbeFailure::Transient(m),
            FetchError::Tls(m) | FetchError::Protocol(m) => ProbeFailure::Definite(m),
        }
    }
}

/// Runs the probes of one scan attempt over the selected transport.
pub fn measure(client: &Client, https: HttpsObservation) -> Result<Measurements, ProbeFailure> {
    let status = status::probe_status(client)?;
    let capabilities = status::probe_capabilities(client);
    // The root page is informational (headers); a failure there does not fail the scan.
    let root = client.get("/").ok().filter(|r| r.status < 500);
    Ok(Measurements {
        endpoint: client.endpoint.clone(),
        https,
        status,
        capabilities,
        root,
    })
}
