//! `check-storage-scanner web`: the store, the workers and the HTTP routes put together.

use super::api::{Api, ApiConfig, Clock, Completed, StartedClock, SystemClock, TargetCheck};
use super::store::{self, ScanRecord, Store};
use super::worker::{Pool, RecordScan, Wakeup, start_purger};
use crate::budget::Budget;
use crate::clock::Now;
use crate::knowledge::Track;
use crate::knowledge::lifecycle::TrackChoice;
use crate::net::guard;
use crate::output::sarif;
use crate::scanner::{RenewedMemory, Scanner};
use crate::serve::http::{Limits, Request, Server};
use crate::settings::options::Program;
use crate::settings::{Settings, redact};
use crate::target::Target;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Connections handled at once (a request never waits for a scan, so few are needed).
pub const HTTP_WORKERS: usize = 32;
/// How long the target's name may take to resolve, at submission and before the scan.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);
/// A caller waiting for its scan waits the time budget and this much for the queue.
const SCAN_WAIT_MARGIN: Duration = Duration::from_secs(35);
/// A claim outlasts the longest scan (the time budget) by this much.
const LEASE_MARGIN_SECS: i64 = 60;

/// The store the settings name: `--store`, else SQLite in the state directory (or the working
/// directory).
pub fn store_spec(settings: &Settings) -> String {
    settings.scanner.web.store.clone().unwrap_or_else(|| {
        let dir = settings
            .state_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        format!("sqlite:{}", dir.join("web.sqlite").display())
    })
}

/// Resolves the target once and checks every address with the guard: the pins every
/// connection of its scan will use. With `allow_private` every address is accepted (but
/// still pinned).
pub fn guard_target(target: &Target, allow_private: bool) -> Result<guard::Pins, String> {
    let port = target.port.unwrap_or(443);
    guard::guarded(&target.host_str(), port, RESOLVE_TIMEOUT, allow_private)
        .map_err(|refusal| refusal.to_string())
}

/// The scan of one record with the plugin's pipeline: the operator's settings, the
/// submitter's waivers and release track, the target pinned to its guarded addresses.
pub fn record_scan(settings: Arc<Settings>, clock: Arc<dyn Clock>) -> Arc<RecordScan> {
    let memory = RenewedMemory::new(settings.feed_cache_ttl);
    let allow_private = settings.scanner.web.allow_private_targets;
    Arc::new(move |record: &ScanRecord| {
        let target = Target::parse(&record.request.target_url).map_err(|e| e.0)?;
        let pins = guard_target(&target, allow_private)?;
        let mut scan_settings = (*settings).clone();
        for pattern in &record.request.waive {
            scan_settings
                .waivers
                .push(crate::assess::waivers::Waiver::permanent(pattern, "waive"));
        }
        if let Some(track) = &record.request.release_track {
            scan_settings.release_track = Track::parse(track)
                .map(TrackChoice::Fixed)
                .unwrap_or(TrackChoice::Auto);
        }
        let now = settings
            .now
            .map(Now)
            .unwrap_or_else(|| Now(jiff::Timestamp::from_second(clock.now()).unwrap_or_default()));
        let budget = Budget::new(Instant::now(), settings.time_budget);
        let result = Scanner::new(&scan_settings, now, budget)?
            .with_memory(memory.current())
            .with_pins(pins)
            .scan(&target)?;
        let found_product = result.product.is_some();
        let document = serde_json::to_string(&result)
            .map_err(|e| format!("cannot serialise the result: {e}"))?;
        let document = serde_json::from_str(&redact::apply(&document))
            .map_err(|e| format!("cannot serialise the result: {e}"))?;
        let sarif = sarif::document(std::slice::from_ref(&result), now);
        Ok((Completed { document, sarif }, found_product))
    })
}

/// Serves until `stop` is set.
pub fn serve(settings: Settings, stop: Arc<AtomicBool>) -> Result<(), String> {
    let web = settings.scanner.web.clone();
    // Operator mistakes a scan would meet (a CA file without certificates) end the start.
    Scanner::new(
        &settings,
        settings.now.map(Now).unwrap_or_else(Now::system),
        Budget::new(Instant::now(), settings.time_budget),
    )?;
    if let Some(token) = &web.mcp_token {
        check_mcp_token(token)?;
    }
    let spec = store_spec(&settings);
    let store: Arc<dyn Store> =
        Arc::from(store::open(&spec, web.store_timeout).map_err(|e| e.to_string())?);
    let server =
        Server::bind(web.listen).map_err(|e| format!("cannot listen on {}: {e}", web.listen))?;
    let base_url = web
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{}", server.local_addr()));
    let clock: Arc<dyn Clock> = match settings.now {
        Some(start) => Arc::new(StartedClock {
            start: start.as_second(),
            at: Instant::now(),
        }),
        None => Arc::new(SystemClock),
    };
    let wakeup = Arc::new(Wakeup::default());
    let lease_secs = settings.time_budget.as_secs() as i64 + LEASE_MARGIN_SECS;
    let settings = Arc::new(settings);
    let workers = Pool {
        store: store.clone(),
        clock: clock.clone(),
        scan: record_scan(settings.clone(), clock.clone()),
        wakeup: wakeup.clone(),
        lease_secs,
        node: node_name(),
    }
    .start(web.workers, stop.clone());
    let purger = start_purger(store.clone(), clock.clone(), stop.clone());
    let allow_private = web.allow_private_targets;
    let check_target: Arc<TargetCheck> =
        Arc::new(move |target: &Target| guard_target(target, allow_private).map(|_| ()));
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
        },
        check_target,
        wakeup: wakeup.clone(),
    };
    eprintln!(
        "{}: web: {} scan workers, store {}",
        Program::Scanner.name(),
        web.workers,
        redact::apply(&spec),
    );
    eprintln!(
        "{}: listening on http://{}",
        Program::Scanner.name(),
        server.local_addr()
    );
    server.run(
        HTTP_WORKERS,
        Limits::default(),
        move |request: &Request| api.handle(request),
        stop,
    );
    for worker in workers.into_iter().chain([purger]) {
        let _ = worker.join();
    }
    eprintln!("{}: stopped", Program::Scanner.name());
    Ok(())
}

/// Why `web` must not start with this `--mcp-token` (never naming the token).
pub fn check_mcp_token(token: &str) -> Result<(), String> {
    const GIVE: &str = "give --mcp-token (COS_WEB_MCP_TOKEN, web.mcp_token) a random value of at \
                        least 32 characters (openssl rand -hex 32) as a secret reference such as \
                        secret://mcp-token";
    if token.chars().count() < crate::serve::service::MIN_TOKEN_CHARS {
        return Err(format!(
            "refusing to start: the MCP token is shorter than {} characters; {GIVE}",
            crate::serve::service::MIN_TOKEN_CHARS
        ));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "refusing to start: the MCP token holds white space or control characters, which an \
             Authorization header cannot carry; {GIVE}"
        ));
    }
    Ok(())
}

/// This node's name in the store: host name and process id.
fn node_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "node".into());
    format!("{host}-{}", std::process::id())
}
