//! `check-storage-scanner web`: the store, the workers and the HTTP routes put together.

use super::api::{Api, ApiConfig};
use super::limits;
use super::lookups::{self, Lookups};
use super::store::{self, ScanRecord, Store};
use super::worker::{Completed, Pool, RecordScan, Wakeup, start_purger};
use crate::assess::Rules;
use crate::assess::waivers::Waiver;
use crate::budget::Budget;
use crate::clock::{Clock, Now, StartedClock, SystemClock};
use crate::knowledge::Track;
use crate::knowledge::lifecycle::TrackChoice;
use crate::net::guard;
use crate::output::sarif;
use crate::redact;
use crate::report::{ScanResult, Status as FindingStatus, SubmitterWaivers, WaiverReport};
use crate::scanner::RenewedMemory;
use crate::server::http::{ConnectionCap, Limits, Request, Response, Server};
use crate::server::occupancy::Occupancy;
use crate::settings::options::Program;
use crate::settings::{Settings, WebSettings};
use crate::target::Target;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Connections handled at once (only an MCP call waits for a scan, within its share).
pub const HTTP_WORKERS: usize = 32;
/// MCP calls that wait for their scans at once, in all: a quarter of the HTTP workers.
pub const WAITING_CALLS: usize = HTTP_WORKERS / 4;
/// ... and per client (an IPv4 address, an IPv6 /64, or the forwarded one behind a proxy).
pub const WAITING_CALLS_PER_CLIENT: usize = 2;
/// How long the target's name may take to resolve before the scan (a worker's; a submission
/// waits `lookups::LOOKUP_TIMEOUT`).
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);
/// A caller waiting for its scan waits the time budget and this much for the queue.
const SCAN_WAIT_MARGIN: Duration = Duration::from_secs(35);
/// A claim outlasts the longest scan (the time budget) by this much.
const LEASE_MARGIN_SECS: i64 = 60;

/// The store the settings name: `--store`, else SQLite in the state directory (or the working
/// directory).
pub fn store_spec(settings: &Settings<WebSettings>) -> String {
    settings.own.store.clone().unwrap_or_else(|| {
        let dir = settings.scan.state_dir.as_deref().unwrap_or(Path::new("."));
        format!("sqlite:{}", dir.join("web.sqlite").display())
    })
}

/// The scan of one record with the plugin's pipeline: the operator's settings and the
/// submitter's release track, the target pinned to its guarded addresses. The submitter's
/// waivers never make the headline: the instance is scanned once and judged twice, without
/// them (the document every face shows) and with them (stored beside it as
/// `submitterWaivers`), so a waived finding cannot dress up a dangerous instance.
pub fn record_scan(settings: Arc<Settings<WebSettings>>, clock: Arc<dyn Clock>) -> Arc<RecordScan> {
    let memory = RenewedMemory::new(settings.scan.feed_cache_ttl);
    let allow_private = settings.own.allow_private_targets;
    Arc::new(move |record: &ScanRecord| {
        let target = Target::parse(&record.request.target_url).map_err(|e| e.0)?;
        // A record of before the addresses were kept: resolved once, every address checked
        // with the guard (with `allow_private` every one accepted, but still pinned).
        let pins = lookups::scan_pins(record, &target, allow_private, || {
            let port = target.port.unwrap_or(443);
            guard::guarded(&target.host_str(), port, RESOLVE_TIMEOUT, allow_private)
                .map_err(|refusal| refusal.to_string())
        })?;
        let mut scan_settings = (*settings).clone();
        if let Some(track) = &record.request.release_track {
            scan_settings.release_track =
                Track::parse(track).map_or(TrackChoice::Auto, TrackChoice::Fixed);
        }
        let with_waivers = (!record.request.waive.is_empty()).then(|| {
            let mut waived = scan_settings.clone();
            let waive = &record.request.waive;
            let waivers = waive.iter().map(|p| Waiver::permanent(p, SUBMITTER_WAIVER));
            waived.waivers.extend(waivers);
            waived
        });
        let views: Vec<Rules> = std::iter::once(&scan_settings)
            .chain(with_waivers.as_ref())
            .map(Settings::assess_rules)
            .collect();
        let now = settings
            .now
            .map(Now)
            .unwrap_or_else(|| Now(jiff::Timestamp::from_second(clock.now()).unwrap_or_default()));
        let budget = Budget::new(Instant::now(), settings.time_budget);
        let mut results = scan_settings
            .scanner(now, budget)?
            .with_memory(memory.current())
            .with_pins(pins)
            .scan_under(&target, &views)?;
        let waived = (results.len() > 1).then(|| results.remove(1));
        let mut result = results.remove(0);
        let found_product = result.product.is_some();
        if let Some(waived) = &waived {
            result.submitter_waivers = Some(submitter_view(&result, waived));
        }
        let cannot = |e: serde_json::Error| format!("cannot serialise the result: {e}");
        let written = serde_json::to_string(&result).map_err(cannot)?;
        let document = serde_json::from_str(&redact::apply(&written)).map_err(cannot)?;
        let sarif = sarif::document(std::slice::from_ref(&result), now);
        Ok((Completed { document, sarif }, found_product))
    })
}

/// The source a submitter's waiver reports name.
const SUBMITTER_WAIVER: &str = "waive";

/// What the submitter's waivers make of the scan: the grade, rating, state and message with
/// them, the failed findings they hide (which the headline shows failed), and their reports.
fn submitter_view(headline: &ScanResult, waived: &ScanResult) -> SubmitterWaivers {
    let hidden_before = |id: &str| headline.findings.iter().any(|f| f.id == id && f.ignored);
    let reports: Vec<WaiverReport> = waived
        .waivers
        .iter()
        .filter(|w| w.source == SUBMITTER_WAIVER)
        .cloned()
        .collect();
    SubmitterWaivers {
        patterns: reports.iter().map(|w| w.pattern.clone()).collect(),
        grade: waived.grade.clone(),
        rating: waived.rating,
        state: waived.state,
        message: waived.message.clone(),
        waived: waived
            .findings
            .iter()
            .filter(|f| f.status == FindingStatus::Failed && f.ignored && !hidden_before(&f.id))
            .map(|f| f.id.clone())
            .collect(),
        waivers: reports,
    }
}

/// Serves until `stop` is set.
pub fn serve(settings: Settings<WebSettings>, stop: Arc<AtomicBool>) -> Result<(), String> {
    let web = settings.own.clone();
    // Operator mistakes a scan would meet (a CA file without certificates) end the start.
    settings.scanner(
        Now::pinned_or_system(settings.now),
        Budget::new(Instant::now(), settings.time_budget),
    )?;
    let spec = store_spec(&settings);
    // The default store lives in the state directory, which a run outside systemd (no
    // StateDirectory=) may not have made yet; it is the operator's alone.
    if settings.own.store.is_none()
        && let Some(dir) = &settings.scan.state_dir
    {
        crate::atomic_file::create_private_dir(dir)
            .map_err(|e| format!("cannot create the state directory {}: {e}", dir.display()))?;
    }
    let store: Arc<dyn Store> =
        Arc::from(store::open(&spec, web.store_timeout).map_err(|e| e.to_string())?);
    let server =
        Server::bind(web.listen).map_err(|e| format!("cannot listen on {}: {e}", web.listen))?;
    let base_url = web
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{}", server.local_addr()));
    if let Some(warning) = shared_limits_warning(&web) {
        eprintln!("{}: warning: {warning}", Program::Scanner.name());
    }
    let clock: Arc<dyn Clock> = match settings.now {
        Some(start) => Arc::new(StartedClock {
            start: start.as_second(),
            at: Instant::now(),
        }),
        None => Arc::new(SystemClock),
    };
    let wakeup = Arc::new(Wakeup::default());
    let settings = Arc::new(settings);
    let workers = Pool {
        store: store.clone(),
        clock: clock.clone(),
        scan: record_scan(settings.clone(), clock.clone()),
        wakeup: wakeup.clone(),
        lease_secs: settings.time_budget.as_secs() as i64 + LEASE_MARGIN_SECS,
        node: node_name(),
    }
    .start(web.workers, stop.clone());
    let purger = start_purger(store.clone(), clock.clone(), stop.clone());
    let api = Api {
        store,
        clock,
        config: ApiConfig {
            base_url,
            record_ttl_secs: web.record_ttl.as_secs() as i64,
            trusted_proxies: web.trusted_proxies.clone(),
            scan_wait: settings.time_budget + SCAN_WAIT_MARGIN,
            mcp: web.mcp,
            mcp_token: web.mcp_token.clone(),
            target_port: settings.scan.target_port,
            store_timeout: web.store_timeout,
        },
        check_target: lookups::target_check(Lookups::system(), web.allow_private_targets),
        wakeup,
        waits: Occupancy::new(WAITING_CALLS_PER_CLIENT, Some(WAITING_CALLS)),
        mcp_sessions: Default::default(),
    };
    eprintln!(
        "{}: web: {} scan workers, store {}",
        Program::Scanner.name(),
        web.workers,
        redact::apply(&spec),
    );
    crate::server::announce_listening(&settings.warnings, server.local_addr());
    // The form and /mcp judge Origin themselves (a page of their own, a JSON-RPC error); the
    // JSON API takes only application/json, which another site's page cannot send unasked.
    let same_host = crate::server::http::SameHost {
        check_origin: false,
        ..crate::server::http::SameHost::of(server.local_addr(), web.base_url.as_deref())
    };
    let per_client = ClientShare::new(web.connections_per_address, &web.trusted_proxies);
    server.cap_connections(per_client.connections()).run(
        HTTP_WORKERS,
        Limits::default(),
        same_host.guard(move |request: &Request| per_client.serve(request, |r| api.handle(r))),
        stop,
    );
    for worker in workers.into_iter().chain([purger]) {
        let _ = worker.join();
    }
    eprintln!("{}: stopped", Program::Scanner.name());
    Ok(())
}

/// A network holds at most this many clients' share of connections.
const CLIENTS_PER_NETWORK: usize = 4;

/// How many connections (or, behind a trusted proxy, requests) one client holds at once: a
/// client is an IPv4 address or an IPv6 /64. A direct client's connections are counted as they
/// are accepted; a trusted proxy's are not (it carries everyone), so the client it forwards
/// for is counted per request once the request is read (the proxy reads the request itself
/// before forwarding it, so no client drips into a worker through it).
struct ClientShare {
    per_client: usize,
    trusted: Vec<(std::net::IpAddr, u8)>,
    forwarded: Arc<Occupancy>,
}

impl ClientShare {
    fn new(per_client: usize, trusted: &[(std::net::IpAddr, u8)]) -> ClientShare {
        ClientShare {
            per_client,
            trusted: trusted.to_vec(),
            forwarded: Occupancy::new(per_client, None),
        }
    }

    /// The cap of connections from direct clients: `per_client` of one client, four clients'
    /// worth of one network (IPv4 /24, IPv6 /56), so that four addresses (or four /64s of one
    /// /56) hold no more than that together.
    fn connections(&self) -> ConnectionCap {
        let trusted = self.trusted.clone();
        ConnectionCap::new(
            self.per_client,
            self.per_client * CLIENTS_PER_NETWORK,
            move |peer| {
                (!limits::is_trusted(peer, &trusted))
                    .then(|| (limits::address_key(peer), limits::network_key(peer)))
            },
        )
    }

    /// Serves a request, holding a seat of the forwarded client while it is handled (and
    /// while a streamed answer is written).
    fn serve(&self, request: &Request, handle: impl Fn(&Request) -> Response) -> Response {
        if !limits::is_trusted(request.peer.ip(), &self.trusted) {
            return handle(request);
        }
        let client = limits::client_of(request, &self.trusted);
        if limits::is_trusted(client, &self.trusted) {
            // No forwarded client: the proxy's own request (a health check), not counted.
            return handle(request);
        }
        let Some(seat) = self.forwarded.take(&limits::address_key(client)) else {
            let message = "your address has as many requests in progress as one client may; \
                           wait for one to end and retry";
            return Response::error(429, "too_many_connections", message)
                .with_header("Retry-After", "1");
        };
        let mut response = handle(request);
        if let Some(stream) = response.stream.take() {
            response.stream = Some(stream.holding(seat));
        }
        response
    }
}

/// An https base URL served from a loopback address is a reverse proxy's backend: unless the
/// proxy is a `--trusted-proxy`, every client arrives from the proxy's address and all of them
/// share that one address's limits.
fn shared_limits_warning(web: &WebSettings) -> Option<String> {
    let proxied = web
        .base_url
        .as_deref()
        .is_some_and(|url| url.starts_with("https://"))
        && web.listen.ip().is_loopback();
    (proxied && web.trusted_proxies.is_empty()).then(|| {
        let ip = web.listen.ip();
        let host_bits = if ip.is_ipv4() { 32 } else { 128 };
        format!(
            "--base-url is https:// but this server listens on {ip}, behind a reverse proxy: \
             every client arrives from the proxy's address and all share one address's limits; \
             name the proxy with --trusted-proxy (such as --trusted-proxy {ip}/{host_bits}) so \
             that the limits count each client from X-Forwarded-For"
        )
    })
}

/// This node's name in the store: host name and process id.
fn node_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map_or_else(|_| "node".into(), |h| h.trim().to_string());
    format!("{host}-{}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    /// Behind a trusted proxy every client arrives from the proxy's address, so the share is
    /// counted per forwarded client and per request (a streamed answer holds its seat until it
    /// is written); the proxy itself is never capped.
    #[test]
    fn a_forwarded_client_holds_its_share_of_requests() {
        let share = ClientShare::new(2, &[("127.0.0.1".parse().unwrap(), 32)]);
        let from = |client: &str| Request {
            method: "GET".into(),
            path: "/mcp".into(),
            query: Vec::new(),
            headers: vec![("x-forwarded-for".into(), client.into())],
            body: Vec::new(),
            peer: SocketAddr::from(([127, 0, 0, 1], 40000)),
        };
        let streamed =
            |_: &Request| Response::streaming(200, "text/plain", |out| out.write_all(b"."));
        let first = share.serve(&from("198.51.100.7"), streamed);
        let second = share.serve(&from("198.51.100.7"), streamed);
        assert_eq!((first.status, second.status), (200, 200));
        let over = share.serve(&from("198.51.100.7"), streamed);
        assert_eq!(over.status, 429);
        assert!(String::from_utf8_lossy(&over.body).contains("too_many_connections"));
        // Another client behind the same proxy has a share of its own.
        assert_eq!(share.serve(&from("203.0.113.9"), streamed).status, 200);
        // An answer written frees its seat.
        drop(first);
        assert_eq!(share.serve(&from("198.51.100.7"), streamed).status, 200);
        // The proxy's own requests (no forwarded client) are not counted.
        let own = Request {
            headers: Vec::new(),
            ..from("198.51.100.7")
        };
        let held: Vec<Response> = (0..5).map(|_| share.serve(&own, streamed)).collect();
        assert!(held.iter().all(|r| r.status == 200));
        // A client that is not behind the proxy is counted by its connections, not here.
        let direct = Request {
            peer: SocketAddr::from(([192, 0, 2, 1], 40000)),
            ..from("198.51.100.7")
        };
        assert_eq!(share.serve(&direct, streamed).status, 200);
        drop(second);
    }
}
