//! `--all-addresses`: the version, header, hardening and demo-account probes again against
//! every address the name resolves to. Host and SNI keep the name; only the connection is
//! pinned to the address, so each node is seen exactly as a browser reaching it would see it.

use super::{plan, pool, status};
use crate::net::guard::Pins;
use crate::net::http::{Client, ClientOptions, Endpoint, Response, Verification};
use crate::net::tls::{EndpointTls, Roots, Route};
use crate::text::hex;
use sha2::{Digest, Sha256};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// What the TLS handshake with one node showed, reduced to what must match across nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSummary {
    pub protocol: String,
    /// SHA-256 of the leaf certificate.
    pub leaf_sha256: String,
    pub trusted: bool,
}

/// One node's answers.
#[derive(Clone, Debug)]
pub struct NodeObservation {
    pub address: IpAddr,
    /// The status document, or why the node did not answer it.
    pub status: Result<status::StatusReport, String>,
    pub root: Option<Response>,
    pub capabilities: Option<serde_json::Value>,
    /// Whether the first demo account signs in (`None`: not tried or no answer).
    pub demo_sign_in: Option<bool>,
    /// `None` over plain HTTP.
    pub tls: Option<Result<TlsSummary, String>>,
}

/// Addresses of a name to compare: the resolver's order, duplicates dropped, IPv6 left out
/// when disabled. Address literals are a single node.
pub fn addresses_of(
    host: &str,
    ipv6: bool,
    deadline: std::time::Instant,
) -> Result<Vec<IpAddr>, String> {
    let found =
        crate::net::resolve::lookup_until(host, 0, deadline).map_err(|e| format!("{host}: {e}"))?;
    let ips = found.into_iter().map(|a| a.ip());
    Ok(super::distinct(ips.filter(|ip| ipv6 || ip.is_ipv4())))
}

/// What a node observation needs besides its address.
pub struct NodeProbe<'a> {
    pub host: &'a str,
    pub endpoint: &'a Endpoint,
    pub verification: &'a Verification,
    pub options: &'a ClientOptions,
    pub roots: &'a Roots,
    /// Try the demo sign-in (only against the built-in identity provider).
    pub demo: bool,
}

pub fn observe(probe: &NodeProbe, addresses: &[IpAddr]) -> Vec<NodeObservation> {
    pool::run_all(addresses, addresses.len().min(8), |address| {
        node(probe, *address)
    })
}

fn node(p: &NodeProbe, address: IpAddr) -> NodeObservation {
    let options = ClientOptions {
        pin: Some(Pins::new(p.host, vec![address])),
        // A proxy would pick the node itself; pinning means connecting directly.
        proxy: None,
        ..p.options.clone()
    };
    // The node's inspected connection carries its first request, as the scan's does; the
    // node's other connections must meet the scan's verification.
    let inspected = (p.endpoint.scheme == crate::net::http::Scheme::Https).then(|| {
        EndpointTls::new(
            p.host,
            p.endpoint.port,
            p.roots,
            Route::Address(SocketAddr::new(address, p.endpoint.port)),
            p.options.timeout,
        )
        .and_then(|endpoint_tls| {
            let handshake = endpoint_tls.inspect()?;
            endpoint_tls.require(p.verification.requirement());
            Ok((endpoint_tls, handshake))
        })
    });
    let tls = inspected.as_ref().map(|inspected| {
        inspected
            .as_ref()
            .map(|(_, h)| TlsSummary {
                protocol: h.protocol.clone(),
                leaf_sha256: h
                    .chain
                    .first()
                    .map(|der| hex(&Sha256::digest(der)))
                    .unwrap_or_default(),
                trusted: h.trust.is_ok(),
            })
            .map_err(|e| format!("{e:?}"))
    });
    let client = match inspected {
        Some(Ok((endpoint_tls, _))) => {
            Client::with_tls(p.endpoint.clone(), Some(endpoint_tls), &options)
        }
        _ => Client::new(p.endpoint.clone(), p.verification, &options),
    };
    let ready = client.and_then(|client| {
        let report = status::probe_status(&client).map_err(|e| e.message().to_string())?;
        Ok((client, report))
    });
    let (client, report) = match ready {
        Ok(ready) => ready,
        Err(e) => {
            return NodeObservation {
                address,
                status: Err(e),
                root: None,
                capabilities: None,
                demo_sign_in: None,
                tls,
            };
        }
    };
    let mut probes = plan::independent(false);
    if p.demo {
        // The first demo account of the family this node reports.
        probes.extend(
            plan::demo_sign_ins(p.endpoint, report.family())
                .into_iter()
                .take(1),
        );
    }
    // Probes not started by then are skipped; those in flight end with the budget anyway.
    let deadline = std::time::Instant::now() + p.options.timeout.now() * 2 + Duration::from_secs(1);
    let mut answers = pool::run_http(&client, &probes, super::HTTP_CONNECTIONS, deadline);
    let capabilities = answers
        .remove(plan::CAPABILITIES)
        .and_then(Result::ok)
        .filter(|r| r.status == 200 && r.is_whole())
        .and_then(|r| status::parse_capabilities(&r.body));
    let root = answers.remove(plan::ROOT).and_then(Result::ok);
    let demo_sign_in = answers
        .iter()
        .find(|(k, _)| k.starts_with("demo:"))
        .and_then(|(_, o)| o.as_ref().ok())
        .map(plan::is_successful_sign_in);
    NodeObservation {
        address,
        status: Ok(report),
        root,
        capabilities,
        demo_sign_in,
        tls,
    }
}
