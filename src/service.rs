//! The scan service (`check-storage-scanner serve`): a route table over `server::http` that scans
//! with the plugin's own pipeline (`crate::scanner`) and caches each host's result.
//!
//! - **Token.** A token, when configured, guards every `/api/` route (`Authorization: Bearer`,
//!   compared in constant time; 401 with `WWW-Authenticate: Bearer` otherwise), on loopback
//!   too. `/healthz` stays open and says nothing about targets. The service refuses to start
//!   when it would listen beyond loopback without a token, or with a weak one
//!   (`settings::start_rules`, before the settings reach it).
//! - **Single flight.** One scan at a time per target key (host as displayed, port as written,
//!   base path): a request for a host whose scan is queued or running joins that scan, so a
//!   hundred simultaneous requests for one cold host cost it one scan.
//! - **Bounded work.** Scans run on `--concurrency` workers; at most `MAX_PENDING_SCANS` wait
//!   for one, beyond that a new scan is refused with 503 and `Retry-After`. `GET /api/scan`
//!   waits at most the time budget plus `WAIT_MARGIN` for its scan.
//! - **Bounded memory.** Results are cached per host for `service.cache_ttl`; a scan that
//!   failed (UNKNOWN with an error) is not cached. Records of `/api/queue` live `cache_ttl` (at
//!   least `MIN_RECORD_LIFETIME`) after their scan ended; at most `MAX_RECORDS` records,
//!   `MAX_CACHED_HOSTS` cached hosts and `MAX_KEPT_BYTES` of result documents are held, the
//!   oldest dropped first.
//!
//! The service scans whatever host a request names, loopback and private addresses included:
//! it is the operator's own scanner. The token is what keeps others from using it.

use crate::budget::Budget;
use crate::clock::Now;
use crate::redact;
use crate::scanner::RenewedMemory;
use crate::server::http::{self, ConnectionCap, Limits, Request, Response, Route, Server};
use crate::server::{lock, new_uuid};
use crate::settings::options::Program;
use crate::settings::{ComponentSettings, ServeSettings, Settings};
use crate::target::Target;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Connections handled at once. `GET /api/scan` holds its connection for the scan, so there
/// are more of these than scan workers; waiting connections queue four times as many.
pub const HTTP_WORKERS: usize = 64;
/// Connections one client (an address, an IPv6 /64) holds at once: a monitoring host with
/// many checks at once fits; a client dripping request heads (before the token is read) holds
/// at most this many of the readers, and a network twice as many.
pub const CONNECTIONS_PER_CLIENT: usize = 128;
/// Scans waiting for a worker; a new scan beyond them is answered 503.
pub const MAX_PENDING_SCANS: usize = 64;
/// Records of `/api/queue` and `/api/requeue` held at most; the oldest go first.
pub const MAX_RECORDS: usize = 10_000;
/// Hosts whose result is cached at most; the oldest result goes first.
pub const MAX_CACHED_HOSTS: usize = 1_000;
/// Result documents held at most (records and cache together), in bytes.
pub const MAX_KEPT_BYTES: usize = 64 << 20;
/// A record outlives its scan at least this long, even with `service.cache_ttl` 0.
pub const MIN_RECORD_LIFETIME: Duration = Duration::from_secs(60);
/// `GET /api/scan` waits for its scan this much longer than the time budget (the scan may wait
/// for a worker first).
pub const WAIT_MARGIN: Duration = Duration::from_secs(5);
/// `Retry-After` of a full scan queue, in seconds.
const BUSY_RETRY_AFTER: &str = "10";
/// `realm` of the `WWW-Authenticate` challenge.
const REALM: &str = "check-storage-scanner";

/// What a scan produced: the result document (JSON, secrets already redacted) and whether it
/// may be served from the cache (not when the scan failed).
pub struct Scanned {
    pub document: Vec<u8>,
    pub cacheable: bool,
}

/// A scan of one target. `Err` is an operator mistake found late (an unreadable advisory
/// file); a scan that fails against the target is a document.
pub type ScanFn = dyn Fn(&Target) -> Result<Scanned, String> + Send + Sync;

/// The production scan: the plugin's pipeline, a fresh clock reading and a fresh time budget
/// per scan.
pub fn pipeline<Own: ComponentSettings>(settings: Arc<Settings<Own>>) -> Arc<ScanFn> {
    // Knowledge and the release-feed answer are learned once and shared by the scans until
    // the feed cache's window (--feed-cache-ttl, 1 h by default) has passed: a stream of scans
    // asks the feeds once per window even without a state directory.
    let memory = RenewedMemory::new(settings.scan.feed_cache_ttl);
    Arc::new(move |target: &Target| {
        let now = Now::pinned_or_system(settings.now);
        let budget = Budget::new(Instant::now(), settings.time_budget);
        let result = settings
            .scanner(now, budget)?
            .with_memory(memory.current())
            .scan(target)?;
        let text = serde_json::to_string(&result)
            .map_err(|e| format!("cannot serialise the result: {e}"))?;
        let mut document = redact::apply(&text).into_bytes();
        document.push(b'\n');
        Ok(Scanned {
            document,
            cacheable: result.error.is_none(),
        })
    })
}

/// What the service needs besides its scan function.
#[derive(Clone, Debug)]
pub struct Config {
    pub token: Option<String>,
    pub cache_ttl: Duration,
    pub scan_workers: usize,
    /// How long `GET /api/scan` waits for its scan.
    pub wait_limit: Duration,
}

/// `check-storage-scanner serve` (its settings met the token rules, `settings::start_rules`): binds, says where on stderr, serves
/// until `stop`. `Err` is a reason not to start, one line.
pub fn serve(settings: Settings<ServeSettings>, stop: Arc<AtomicBool>) -> Result<(), String> {
    let listen = settings.own.listen;
    // Operator mistakes a scan would meet (a CA file without certificates) end the start.
    let now = Now::pinned_or_system(settings.now);
    settings.scanner(now, Budget::new(Instant::now(), settings.time_budget))?;
    let addr = SocketAddr::new(listen, settings.own.port);
    let server = Server::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let config = Config {
        token: settings.own.token.clone(),
        cache_ttl: settings.own.cache_ttl,
        scan_workers: settings.scan.concurrency.max(1),
        wait_limit: settings.time_budget + WAIT_MARGIN,
    };
    // Said once bound: a request sent now waits in the listener's queue until the workers run.
    crate::server::announce_listening(&settings.warnings, server.local_addr());
    let service = Service::start(config, pipeline(Arc::new(settings)));
    let same_host = http::SameHost::of(server.local_addr(), None);
    let cap = ConnectionCap::by_address(CONNECTIONS_PER_CLIENT, 2 * CONNECTIONS_PER_CLIENT);
    server.cap_connections(cap).run(
        HTTP_WORKERS,
        Limits::default(),
        same_host.guard(move |request: &Request| service.handle(request)),
        stop,
    );
    eprintln!("{}: stopped", Program::Scanner.name());
    Ok(())
}

/// Where a scan stands.
enum Progress {
    Queued,
    Running,
    Finished {
        at: Instant,
        outcome: Result<Arc<[u8]>, String>,
    },
}

/// One scan of one target, shared by every request that joined it.
struct Job {
    key: String,
    target: Target,
    progress: Mutex<Progress>,
    changed: Condvar,
    /// The service's count of result bytes held; this job's document counts until it is dropped.
    kept: Arc<AtomicUsize>,
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Progress::Finished {
            outcome: Ok(doc), ..
        } = &*lock(&self.progress)
        {
            self.kept.fetch_sub(doc.len(), Ordering::Relaxed);
        }
    }
}

impl Job {
    /// The name of the stage the scan is at, or its outcome once it ended.
    fn seen(&self) -> Result<&'static str, Result<Arc<[u8]>, String>> {
        match &*lock(&self.progress) {
            Progress::Queued => Ok("queued"),
            Progress::Running => Ok("running"),
            Progress::Finished { outcome, .. } => Err(outcome.clone()),
        }
    }

    /// The result once the scan ends, or `None` after `limit`.
    fn wait(&self, limit: Duration) -> Option<Result<Arc<[u8]>, String>> {
        let running = |progress: &mut Progress| !matches!(progress, Progress::Finished { .. });
        let (progress, _) = self
            .changed
            .wait_timeout_while(lock(&self.progress), limit, running)
            .unwrap_or_else(|e| e.into_inner());
        match &*progress {
            Progress::Finished { outcome, .. } => Some(outcome.clone()),
            _ => None,
        }
    }

    fn finished_at(&self) -> Option<Instant> {
        match &*lock(&self.progress) {
            Progress::Finished { at, .. } => Some(*at),
            _ => None,
        }
    }

    fn set(&self, progress: Progress) {
        if let Progress::Finished {
            outcome: Ok(doc), ..
        } = &progress
        {
            self.kept.fetch_add(doc.len(), Ordering::Relaxed);
        }
        *lock(&self.progress) = progress;
        self.changed.notify_all();
    }
}

#[derive(Default)]
struct Host {
    /// The scan queued or running for this host: new requests join it.
    in_flight: Option<Arc<Job>>,
    /// The last successful scan, served until it is `cache_ttl` old.
    cached: Option<Arc<Job>>,
}

#[derive(Default)]
struct State {
    hosts: HashMap<String, Host>,
    records: HashMap<String, Arc<Job>>,
    /// Record uuids, oldest first.
    order: VecDeque<String>,
    last_sweep: Option<Instant>,
}

/// What the scan workers share with the request handlers.
struct Shared {
    state: Mutex<State>,
    cache_ttl: Duration,
    record_lifetime: Duration,
    kept: Arc<AtomicUsize>,
}

impl Shared {
    fn is_fresh(&self, job: &Job, now: Instant) -> bool {
        job.finished_at()
            .is_some_and(|at| now.saturating_duration_since(at) < self.cache_ttl)
    }

    /// Drops expired cache entries (at most once a second) and expired records, then the
    /// oldest records beyond `MAX_RECORDS`, then while the documents held exceed
    /// `MAX_KEPT_BYTES` the oldest cached results (a cache is cheap to refill) and records.
    fn sweep(&self, state: &mut State, now: Instant) {
        let due = state
            .last_sweep
            .is_none_or(|last| now.saturating_duration_since(last) >= Duration::from_secs(1));
        if due {
            state.last_sweep = Some(now);
            state.hosts.retain(|_, host| {
                if host.cached.as_ref().is_some_and(|j| !self.is_fresh(j, now)) {
                    host.cached = None;
                }
                host.in_flight.is_some() || host.cached.is_some()
            });
        }
        while let Some(uuid) = state.order.front() {
            let expired = state.records.get(uuid).is_none_or(|job| {
                job.finished_at()
                    .is_some_and(|at| now.saturating_duration_since(at) >= self.record_lifetime)
            });
            if !expired && state.order.len() <= MAX_RECORDS {
                break;
            }
            if let Some(uuid) = state.order.pop_front() {
                state.records.remove(&uuid);
            }
        }
        while self.kept.load(Ordering::Relaxed) > MAX_KEPT_BYTES {
            if !evict_oldest_cached(state) {
                let Some(uuid) = state.order.pop_front() else {
                    break;
                };
                state.records.remove(&uuid);
            }
        }
    }

    /// A job ended: its waiters wake, it takes no more joiners, and its result is cached if
    /// it may be. One step under the state lock: a request that follows an answer never
    /// joins the scan that gave it (a requeue would get the old result).
    fn finish(&self, job: &Arc<Job>, outcome: Result<Arc<[u8]>, String>, cacheable: bool) {
        let mut state = lock(&self.state);
        job.set(Progress::Finished {
            at: Instant::now(),
            outcome,
        });
        let mut cached = false;
        if let Some(host) = state.hosts.get_mut(&job.key) {
            if host.in_flight.as_ref().is_some_and(|j| Arc::ptr_eq(j, job)) {
                host.in_flight = None;
            }
            if cacheable && !self.cache_ttl.is_zero() {
                host.cached = Some(job.clone());
                cached = true;
            }
            if host.in_flight.is_none() && host.cached.is_none() {
                state.hosts.remove(&job.key);
            }
        }
        if cached {
            let count = state.hosts.values().filter(|h| h.cached.is_some()).count();
            for _ in MAX_CACHED_HOSTS..count {
                evict_oldest_cached(&mut state);
            }
        }
        self.sweep(&mut state, Instant::now());
    }
}

/// Drops the oldest cached result; `false` when nothing is cached.
fn evict_oldest_cached(state: &mut State) -> bool {
    let oldest = state
        .hosts
        .iter()
        .filter_map(|(key, h)| Some((h.cached.as_ref()?.finished_at()?, key.clone())))
        .min();
    let Some((_, key)) = oldest else {
        return false;
    };
    if let Some(host) = state.hosts.get_mut(&key) {
        host.cached = None;
        if host.in_flight.is_none() {
            state.hosts.remove(&key);
        }
    }
    true
}

/// The request side of the service.
pub struct Service {
    shared: Arc<Shared>,
    jobs: SyncSender<Arc<Job>>,
    config: Config,
}

impl Service {
    /// Starts the scan workers; they end when the service is dropped and the queue is empty.
    pub fn start(config: Config, scan: Arc<ScanFn>) -> Service {
        let kept = Arc::new(AtomicUsize::new(0));
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cache_ttl: config.cache_ttl,
            record_lifetime: config.cache_ttl.max(MIN_RECORD_LIFETIME),
            kept,
        });
        let (jobs, waiting) = mpsc::sync_channel::<Arc<Job>>(MAX_PENDING_SCANS);
        let waiting = Arc::new(Mutex::new(waiting));
        for i in 0..config.scan_workers.max(1) {
            let shared = shared.clone();
            let waiting = waiting.clone();
            let scan = scan.clone();
            std::thread::Builder::new()
                .name(format!("scan-worker-{i}"))
                .spawn(move || scan_worker(&shared, &waiting, &*scan))
                .expect("start a scan worker");
        }
        Service {
            shared,
            jobs,
            config,
        }
    }

    /// The job that answers a request for `target`: the one in flight, the cached one (unless
    /// `fresh`), or a new one on the queue; the answer 503 when the queue is full.
    fn join(&self, target: Target, fresh: bool) -> Result<Arc<Job>, Response> {
        let key = target.scan_key();
        let now = Instant::now();
        let mut state = lock(&self.shared.state);
        self.shared.sweep(&mut state, now);
        if let Some(host) = state.hosts.get(&key) {
            if let Some(job) = &host.in_flight {
                return Ok(job.clone());
            }
            if !fresh
                && let Some(job) = &host.cached
                && self.shared.is_fresh(job, now)
            {
                return Ok(job.clone());
            }
        }
        let job = Arc::new(Job {
            key: key.clone(),
            target,
            progress: Mutex::new(Progress::Queued),
            changed: Condvar::new(),
            kept: self.shared.kept.clone(),
        });
        self.jobs.try_send(job.clone()).map_err(|_| busy())?;
        let host = state.hosts.entry(key).or_default();
        host.in_flight = Some(job.clone());
        // A new scan replaces the cached result (requeue discards it).
        host.cached = None;
        Ok(job)
    }

    fn record(&self, job: Arc<Job>) -> Result<String, Response> {
        let uuid = new_uuid().map_err(|e| Response::error(500, "internal", &e))?;
        let mut state = lock(&self.shared.state);
        state.records.insert(uuid.clone(), job);
        state.order.push_back(uuid.clone());
        self.shared.sweep(&mut state, Instant::now());
        Ok(uuid)
    }

    /// Answers one request.
    pub fn handle(&self, request: &Request) -> Response {
        let path = request.path.as_str();
        if (path == "/api" || path.starts_with("/api/"))
            && let Some(token) = &self.config.token
            && !request.bearer_matches(token)
        {
            let presented = request.header("authorization").is_some();
            let challenge = if presented {
                format!("Bearer realm=\"{REALM}\", error=\"invalid_token\"")
            } else {
                format!("Bearer realm=\"{REALM}\"")
            };
            return Response::error(
                401,
                "unauthorized",
                "this service needs the header Authorization: Bearer <token> (its --token)",
            )
            .with_header("WWW-Authenticate", &challenge);
        }
        http::route(
            ROUTES,
            self,
            request,
            "no such path; the service answers /api/queue, /api/result/<uuid>, /api/requeue, \
             /api/scan and /healthz",
            "",
        )
    }
}

fn scan_worker(shared: &Shared, waiting: &Mutex<Receiver<Arc<Job>>>, scan: &ScanFn) {
    loop {
        let next = lock(waiting).recv();
        let Ok(job) = next else { return };
        job.set(Progress::Running);
        let scanned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scan(&job.target)))
            .unwrap_or_else(|_| Err("internal error during the scan (see stderr)".to_string()));
        let (outcome, cacheable) = match scanned {
            Ok(s) => (Ok(Arc::from(s.document)), s.cacheable),
            Err(e) => (Err(redact::apply(&e)), false),
        };
        shared.finish(&job, outcome, cacheable);
    }
}

/// Every route of the service. `/api/` routes need the token when one is configured.
const ROUTES: &[Route<Service>] = &[
    Route::new(&["GET"], "/healthz", healthz),
    Route::new(&["POST"], "/api/queue", |service, request, _| {
        submit(service, request, false).unwrap_or_else(|refusal| refusal)
    })
    .starts_work(),
    Route::new(&["GET"], "/api/result/{uuid}", result),
    Route::new(&["POST"], "/api/requeue", |service, request, _| {
        submit(service, request, true).unwrap_or_else(|refusal| refusal)
    })
    .starts_work(),
    // The spec's one GET that scans: an <img src> of another site's page must not reach it.
    Route::new(&["GET"], "/api/scan", |service, request, _| {
        scan(service, request).unwrap_or_else(|refusal| refusal)
    })
    .starts_work(),
];

fn healthz(_: &Service, _: &Request, _: &[&str]) -> Response {
    Response::json(200, &json!({"status": "ok"}))
}

/// `POST /api/queue` and `/api/requeue`: a record for the scan, answered at once.
fn submit(service: &Service, request: &Request, fresh: bool) -> Result<Response, Response> {
    let job = service.join(target_of(request, true)?, fresh)?;
    let uuid = service.record(job)?;
    Ok(Response::json(202, &json!({"uuid": uuid}))
        .with_header("Location", &format!("/api/result/{uuid}")))
}

/// `GET /api/result/<uuid>`.
fn result(service: &Service, _: &Request, path: &[&str]) -> Response {
    let uuid = path[0];
    let job = lock(&service.shared.state).records.get(uuid).cloned();
    let Some(job) = job else {
        return Response::error(
            404,
            "unknown_uuid",
            &format!(
                "no scan has this uuid: it never existed, or its record expired ({} s after \
                 its scan ended) or was dropped for newer ones",
                service.shared.record_lifetime.as_secs()
            ),
        );
    };
    match job.seen() {
        Ok(status) => Response::json(200, &json!({"uuid": uuid, "status": status})),
        Err(outcome) => document(outcome),
    }
}

/// `GET /api/scan?url=<host>`: the document, from the cache or a scan it waits for.
fn scan(service: &Service, request: &Request) -> Result<Response, Response> {
    let target = target_of(request, false)?;
    let shown = target.display_name();
    let job = service.join(target, false)?;
    Ok(match job.wait(service.config.wait_limit) {
        Some(outcome) => document(outcome),
        None => Response::error(
            504,
            "scan_pending",
            &format!(
                "the scan of {shown} did not end within {} s; it goes on: ask again later",
                service.config.wait_limit.as_secs()
            ),
        ),
    })
}

fn document(outcome: Result<Arc<[u8]>, String>) -> Response {
    match outcome {
        Ok(doc) => Response::new(200, "application/json", doc.to_vec()),
        Err(message) => Response::error(500, "scan_failed", &message),
    }
}

fn busy() -> Response {
    Response::error(
        503,
        "busy",
        &format!(
            "{MAX_PENDING_SCANS} scans are waiting for a worker already; retry shortly \
             (--concurrency sets the workers)"
        ),
    )
    .with_header("Retry-After", BUSY_RETRY_AFTER)
}

/// The target a request names with `url`: in the query, or for a POST in a form or JSON body.
fn target_of(request: &Request, body_allowed: bool) -> Result<Target, Response> {
    let bad = |code: &str, message: &str| Err(Response::error(400, code, message));
    let mut given: Vec<(String, String)> = request.query.clone();
    if body_allowed && !request.body.is_empty() {
        match request.media_type().as_str() {
            "application/json" => given.extend(json_body(&request.body)?),
            "" | "application/x-www-form-urlencoded" => {
                if std::str::from_utf8(&request.body).is_err() {
                    return bad("bad_form", "the form body is not UTF-8 text");
                }
                given.extend(http::parse_form(&request.body));
            }
            _ => {
                return Err(Response::error(
                    415,
                    "unsupported_media_type",
                    "send url=<host> as application/x-www-form-urlencoded, or {\"url\": \
                     \"<host>\"} as application/json",
                ));
            }
        }
    }
    if let Some((name, _)) = given.iter().find(|(name, _)| name != "url") {
        let shown: String = name.chars().take(40).collect();
        return bad(
            "unknown_parameter",
            &format!("unknown parameter {shown:?}; this route takes url=<host>"),
        );
    }
    let mut urls = given.into_iter().map(|(_, value)| value);
    let Some(url) = urls.next() else {
        return bad(
            "missing_url",
            "name the instance to scan with url=<host> (a hostname, IPv4, [IPv6] or URL)",
        );
    };
    if urls.any(|other| other != url) {
        return bad("ambiguous_url", "give url once");
    }
    let target = Target::parse(&url).map_err(|e| Response::error(400, "bad_target", &e.0))?;
    if target.zone.is_some() {
        return bad(
            "bad_target",
            "the service does not scan link-local IPv6 addresses with a zone; scan them with \
             check-storage-security -H",
        );
    }
    Ok(target)
}

/// `{"url": "<host>"}`; any other shape or member is refused.
fn json_body(body: &[u8]) -> Result<Vec<(String, String)>, Response> {
    let bad = |message: &str| Response::error(400, "bad_json", message);
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| bad(&format!("the body is not valid JSON: {e}")))?;
    let Value::Object(members) = value else {
        return Err(bad("the body must be a JSON object: {\"url\": \"<host>\"}"));
    };
    members
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(text) => Ok((name, text)),
            _ => {
                let shown: String = name.chars().take(40).collect();
                Err(bad(&format!("member {shown:?} must be a string")))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
