//! Probes: the only code besides `net` that talks to the instance. Each returns what it saw
//! (a measurement), never a verdict.
//!
//! A scan runs in phases. The status document comes first: without it there is nothing to
//! assess, and its failure decides whether the whole scan is retried. Then every independent
//! probe runs at once on a small pool (HTTP requests, debug-port connects, the legacy-TLS
//! handshake), so a scan costs about its slowest probe. The probes that depend on an earlier
//! answer (demo sign-ins, only against the instance's own identity provider) join the HTTP
//! queue, ahead of the rest, as soon as that answer is in.
//!
//! A scan is light on the instance: it opens at most [`CONNECTIONS_PER_SCAN`] connections to
//! the scanned port, at once and in all, and resumes TLS sessions rather than repeating full
//! handshakes (see `net::tls`).

pub mod addresses;
pub mod debug_ports;
pub mod plan;
pub mod pool;
pub mod status;

use crate::budget::StepTimeout;
use crate::family::ProductFamily;
use crate::net::guard::Pins;
use crate::net::http::{Client, Endpoint, FetchError, Response, Scheme};
use crate::net::proxy::Proxy;
use crate::net::tls::Route;
use crate::net::{HttpsObservation, legacy_tls};
use status::StatusReport;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The answer to one HTTP probe, or why there was none.
pub type Observation = Result<Response, FetchError>;

/// Connections a scan opens to the scanned port, at most: at once, and in all when the
/// instance keeps connections alive (as every web server does). Each costs the instance an
/// accept and a TLS handshake, and a monitoring system scans many instances; the older Python
/// tool opened three for about forty requests. The budget is the HTTP client's connections
/// ([`HTTP_CONNECTIONS`], the first of them the TLS inspection's own) and the legacy-TLS
/// probe's ([`legacy_tls::CONNECTIONS`]): a ClientHello the server refuses at once still
/// costs it an accept and a parse, so it counts like any other. The debug ports and plain
/// HTTP on port 80 (when the scan uses the default ports) are not the scanned port.
pub const CONNECTIONS_PER_SCAN: usize = 4;

/// HTTP requests in flight at once, each on a kept-alive connection of its own: what the
/// budget leaves once the legacy-TLS probe has its connection.
pub const HTTP_CONNECTIONS: usize = CONNECTIONS_PER_SCAN - legacy_tls::CONNECTIONS;

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
    /// Answers to the HTTP probes of the plan, by probe key (`plan::keys`).
    pub http: BTreeMap<String, Observation>,
    /// Whether the additional probes ran (off with `--no-extra-checks`).
    pub extra_checks: bool,
    /// Debug ports, when probed (`None` with `--no-debug-ports` or `--no-extra-checks`).
    pub debug_ports: Option<Vec<debug_ports::DebugPort>>,
    /// TLS 1.0 / 1.1 acceptance, when the scan runs over HTTPS with extra checks.
    pub legacy_tls: Option<crate::net::legacy_tls::LegacyTls>,
    /// `GET /` over plain HTTP while the scan uses HTTPS: does HTTP redirect to HTTPS?
    pub plain_http: Option<Observation>,
    /// What DNS says about the scanned name (`None` for address targets or without extra checks).
    pub dns: Option<DnsObservation>,
    /// Every address of the name, probed on its own (`--all-addresses`, names with several
    /// addresses only); the first is the reference.
    pub nodes: Option<Vec<addresses::NodeObservation>>,
}

#[derive(Clone, Debug)]
pub struct DnsObservation {
    pub name: String,
    /// Every A and AAAA address the system resolver returns, in its order.
    pub addresses: Result<Vec<std::net::IpAddr>, String>,
    pub caa: crate::net::dns::CaaLookup,
    /// Whether the name's zone is signed and securely delegated.
    pub dnssec: crate::net::dns::DnssecLookup,
}

impl Measurements {
    /// Measurements with nothing observed but the transport: the starting point for building
    /// them by hand in unit tests.
    #[cfg(test)]
    pub fn empty(endpoint: Endpoint, https: HttpsObservation) -> Measurements {
        Measurements {
            endpoint,
            https,
            status: StatusReport::default(),
            capabilities: None,
            root: None,
            http: BTreeMap::new(),
            extra_checks: true,
            debug_ports: None,
            legacy_tls: None,
            plain_http: None,
            dns: None,
            nodes: None,
        }
    }

    /// The family `/status.php` names; OpenCloud when it names none we know (such a scan ends
    /// UNKNOWN before any check reads this).
    pub fn family(&self) -> ProductFamily {
        self.status.family()
    }

    /// Every HTTP answer the scan got: the start page's and every probe's (`Measure::EveryAnswer`
    /// reads cookies and version headers from them all).
    pub fn every_answer(&self) -> impl Iterator<Item = &Response> {
        let answers = self.http.values().filter_map(|o| o.as_ref().ok());
        self.root.iter().chain(answers)
    }

    /// The answer of a probe that ran and got one.
    pub fn answer(&self, key: &str) -> Option<&Response> {
        self.http.get(key).and_then(|o| o.as_ref().ok())
    }
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
            FetchError::Refused(m) => {
                ProbeFailure::Definite(format!("{m} (nothing listens on the port; not retried)"))
            }
            FetchError::Tls(m) | FetchError::Protocol(m) => ProbeFailure::Definite(m),
        }
    }
}

/// Keys of the probes that are not HTTP requests of the plan, as [`measure_selected`] takes
/// them: the legacy-TLS handshake, plain HTTP on the HTTP port, the DNS lookups of the name,
/// and each debug port (`debugListener:<port>`).
pub const LEGACY_TLS: &str = "legacyTls";
pub const PLAIN_HTTP: &str = "plainHttp";
pub const DNS: &str = "dns";
pub const DEBUG_PORT: &str = "debugListener:";

/// What shapes a scan's probes besides the transport.
#[derive(Clone, Debug)]
pub struct Options {
    pub extra_checks: bool,
    /// Probes not started by then are skipped (their checks are network-limited).
    pub deadline: Instant,
    /// Name or address for the direct connections (debug ports, legacy TLS).
    pub host: String,
    /// Debug ports to probe; empty with `--no-debug-ports`.
    pub debug_ports: Vec<u16>,
    /// The operator named no ports: probe those the instance's family binds by default
    /// (`Family::debug_ports`) instead of `debug_ports`.
    pub debug_ports_of_family: bool,
    pub debug_port_timeout: Duration,
    /// Each request's limit, and the end of the run's budget no probe outlives.
    pub request_timeout: StepTimeout,
    pub proxy: Option<Proxy>,
    /// A client for plain HTTP on the HTTP port, when the scan itself runs over HTTPS.
    pub plain_client: Option<Client>,
    /// Send six failed sign-ins for an account that cannot exist (`--login-throttling`).
    pub login_throttling: bool,
    /// DNS server for the CAA and DNSSEC lookups; `None` leaves them undecided.
    pub dns_server: Option<std::net::SocketAddr>,
}

/// Runs the probes of one scan attempt over the selected transport: every probe of the plan.
pub fn measure(
    client: &Client,
    https: HttpsObservation,
    options: &Options,
) -> Result<Measurements, ProbeFailure> {
    measure_selected(client, https, options, &|_| true)
}

/// Runs only the chosen probes of one scan attempt (`--verify-remediation`). The status document
/// always comes first, as in [`measure`]; after it, only the probes `wanted` accepts:
///
/// - HTTP probes of the plan by key (`plan::independent`, `plan::dependent`,
///   `plan::throttling`); with `options.extra_checks` off only `capabilities` and `root` exist,
///   and the sign-in throttling probes also need `options.login_throttling`. A wanted
///   dependent probe brings the discovery probe (`oidc`) along, since it decides them;
/// - the debug ports of `options.debug_ports` by [`DEBUG_PORT`]`<port>`;
/// - the legacy-TLS handshake by [`LEGACY_TLS`] and plain HTTP (with `options.plain_client`)
///   by [`PLAIN_HTTP`], over HTTPS only;
/// - the DNS lookups of a name by [`DNS`].
///
/// With every key wanted this is the full scan ([`measure`]).
pub fn measure_selected(
    client: &Client,
    https: HttpsObservation,
    options: &Options,
    wanted: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Measurements, ProbeFailure> {
    let spent_before = client.budget_spent();
    let status = status::probe_status(client).map_err(|failure| match (failure, &https) {
        // The TLS attempt took what was left of the budget: that is what was slow.
        (ProbeFailure::Transient(m), HttpsObservation::Unavailable(why)) if spent_before => {
            ProbeFailure::Transient(format!("HTTPS: {why}, then {m}"))
        }
        (failure, _) => failure,
    })?;
    let extra = options.extra_checks;
    let over_https = client.endpoint.scheme == Scheme::Https;
    let endpoint = &client.endpoint;
    let family = status.family();
    let debug_port_list: Vec<u16> = debug_ports_for(options, family)
        .iter()
        .copied()
        .filter(|p| wanted(&format!("{DEBUG_PORT}{p}")))
        .collect();
    let want_legacy = extra && over_https && wanted(LEGACY_TLS);
    // A DNS name, not an address literal.
    let want_dns = extra && options.host.parse::<std::net::IpAddr>().is_err() && wanted(DNS);
    let want_plain = extra && over_https && wanted(PLAIN_HTTP);
    let mut dependent_wanted = false;
    let mut throttling_wanted = Vec::new();
    if extra {
        let accounts = family.describe().demo_accounts;
        dependent_wanted = accounts
            .iter()
            .any(|a| wanted(&format!("{}{}", plan::DEMO, a.user)))
            || wanted(&format!("{}{}", plan::BASIC, accounts[0].user));
        if options.login_throttling {
            throttling_wanted = plan::throttling(endpoint);
            throttling_wanted.retain(|p| wanted(&p.key));
        }
    }
    let mut first = plan::independent(extra);
    let needs_oidc = dependent_wanted || !throttling_wanted.is_empty();
    first.retain(|p| wanted(&p.key) || (needs_oidc && p.key == plan::OIDC));
    let (mut http, debug_ports, legacy_tls, plain_http, dns) = std::thread::scope(|scope| {
        let debug = (extra && !debug_port_list.is_empty()).then(|| {
            scope.spawn(|| {
                debug_ports::probe_pinned(
                    &options.host,
                    client.pins(),
                    &debug_port_list,
                    options
                        .request_timeout
                        .with_each(options.debug_port_timeout),
                    options.request_timeout,
                )
            })
        });
        let legacy = want_legacy.then(|| {
            scope.spawn(|| {
                // A pinned client (a guarded scan) pins this connection too.
                let route = match client.pins() {
                    Some(pins) => Route::Pinned(pins.clone()),
                    None => Route::via(options.proxy.as_ref()),
                };
                legacy_tls::probe(
                    &options.host,
                    client.endpoint.port,
                    &route,
                    options.request_timeout.now(),
                )
            })
        });
        let dns = want_dns.then(|| {
            scope.spawn(|| {
                use crate::net::dns;
                // CAA and DNSSEC asked at once, each within the request timeout: a silent
                // server costs one timeout, not two.
                let timeout = options.request_timeout.now();
                let dnssec = scope
                    .spawn(move || dns::lookup_dnssec(&options.host, options.dns_server, timeout));
                let addresses = match client.pins() {
                    // A guarded scan reports what the guard resolved: nothing is looked up again.
                    Some(pins) => pinned_addresses(pins, &options.host),
                    None => resolve_all(&options.host, Instant::now() + timeout),
                };
                // Only publicly trusted CAs are bound by CAA: for any other certificate no
                // answer could matter.
                let caa = if https.trusted_by_public_roots() {
                    dns::lookup_caa(&options.host, options.dns_server, timeout)
                } else {
                    dns::CaaLookup::NotAsked
                };
                let dnssec = dnssec.join().unwrap_or_else(|_| {
                    dns::DnssecLookup::Failed("the DNSSEC lookup ended unexpectedly".into())
                });
                DnsObservation {
                    name: options.host.clone(),
                    addresses,
                    caa,
                    dnssec,
                }
            })
        });
        let plain = options
            .plain_client
            .as_ref()
            .filter(|_| want_plain)
            .map(|plain| scope.spawn(move || plain.get("/", plan::KEEP_PLAIN_HTTP)));
        // The sign-ins follow the discovery document's answer at once, ahead of the probes
        // still queued, and run beside each other, one per connection.
        let follow_up = |probe: &plan::HttpProbe, answer: &Observation| {
            if !dependent_wanted || probe.key != plan::OIDC {
                return Vec::new();
            }
            let mut dependent = plan::dependent(endpoint, Some(answer), family);
            dependent.retain(|p| wanted(&p.key));
            dependent
        };
        let mut http = pool::run_http_then(
            client,
            first,
            HTTP_CONNECTIONS,
            options.deadline,
            &follow_up,
        );
        if !throttling_wanted.is_empty() && plan::builtin_identity_provider(http.get(plan::OIDC)) {
            // One after another: throttling shows in the order of the answers.
            http.extend(pool::run_http(
                client,
                &throttling_wanted,
                1,
                options.deadline,
            ));
        }
        (
            http,
            debug.and_then(|h| h.join().ok()),
            legacy.and_then(|h| h.join().ok()),
            plain.and_then(|h| h.join().ok()),
            dns.and_then(|h| h.join().ok()),
        )
    });
    let capabilities = http
        .remove(plan::CAPABILITIES)
        .and_then(Result::ok)
        .filter(|r| r.status == 200 && r.is_whole())
        .and_then(|r| status::parse_capabilities(&r.body));
    let root = http
        .remove(plan::ROOT)
        .and_then(Result::ok)
        .filter(|r| r.status < 500);
    Ok(Measurements {
        endpoint: client.endpoint.clone(),
        https,
        status,
        capabilities,
        root,
        http,
        extra_checks: extra,
        debug_ports,
        legacy_tls,
        plain_http,
        dns,
        nodes: None,
    })
}

/// The debug ports a scan probes: none with `--no-debug-ports`, the operator's when they named
/// some, otherwise the ones the instance's family binds by default.
fn debug_ports_for(options: &Options, family: ProductFamily) -> &[u16] {
    if options.debug_ports.is_empty() {
        &[]
    } else if options.debug_ports_of_family {
        family.describe().debug_ports
    } else {
        &options.debug_ports
    }
}

/// Every address the system resolver gives for the name, if it answers before `deadline`.
fn resolve_all(host: &str, deadline: Instant) -> Result<Vec<std::net::IpAddr>, String> {
    let found = crate::net::resolve::lookup_until(host, 0, deadline).map_err(|e| e.to_string())?;
    Ok(distinct(found.into_iter().map(|a| a.ip())))
}

/// The distinct addresses pins give for `host`, in their order.
pub fn pinned_addresses(pins: &Pins, host: &str) -> Result<Vec<std::net::IpAddr>, String> {
    let found = pins.lookup(host, 0).map_err(|e| e.to_string())?;
    Ok(distinct(found.into_iter().map(|a| a.ip())))
}

/// Each item once, in the order first seen (addresses of several lookups, ports named twice,
/// the keys and CAs of a DNS zone).
pub(crate) fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Reads a captured answer (`curl -i` output in `tests/fixtures/`) for unit tests of checks.
#[cfg(test)]
pub fn fixture(relative: &str) -> Response {
    let path = format!("{}/tests/fixtures/{relative}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, p + 4))
        .or_else(|| {
            bytes
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|p| (p, p + 2))
        })
        .unwrap_or((bytes.len(), bytes.len()));
    let head = String::from_utf8_lossy(&bytes[..split.0]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .filter(|(n, _)| !n.eq_ignore_ascii_case("transfer-encoding"))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Response {
        status,
        headers,
        body: bytes[split.1..].to_vec(),
        truncated: false,
        digest: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(ports: &[u16], of_family: bool) -> Options {
        Options {
            extra_checks: true,
            deadline: Instant::now(),
            host: "cloud.example".into(),
            debug_ports: ports.to_vec(),
            debug_ports_of_family: of_family,
            debug_port_timeout: Duration::from_secs(3),
            request_timeout: Duration::from_secs(10).into(),
            proxy: None,
            plain_client: None,
            login_throttling: false,
            dns_server: None,
        }
    }

    /// No ports named: the family's defaults; ports named: those; `--no-debug-ports` (an
    /// empty list): none, whatever the family.
    #[test]
    fn debug_ports_come_from_the_family_unless_the_operator_named_them() {
        for family in ProductFamily::ALL {
            let defaults = options(&[9205], true);
            assert_eq!(
                debug_ports_for(&defaults, family),
                family.describe().debug_ports
            );
            let named = options(&[9999, 9205], false);
            assert_eq!(debug_ports_for(&named, family), [9999, 9205]);
            assert!(debug_ports_for(&options(&[], true), family).is_empty());
        }
    }
}
