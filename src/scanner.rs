//! The one scan pipeline every face of the scanner uses: the plugin (`run`), the scan service
//! and the exporter. A `Scanner` holds what does not depend on the target (its `Config`, the
//! assessment's rules, trust roots, the proxy, the feed cache, per-family knowledge, one
//! release-feed answer) and a time budget; `scan` takes one target from the wire to its
//! finished result document (`assess`). The faces build it from their settings
//! (`Settings::scanner`); nothing here reads the settings.

use crate::assess::baseline::Baseline;
use crate::assess::{self, Identified, Rules, UpdateInputs};
use crate::budget::{Attempt, Budget, GaveUp};
use crate::clock::Now;
use crate::diagnostics::debug_log;
use crate::feeds::{Feed, FeedCache, Origin};
use crate::knowledge::update::UpdateSource;
use crate::knowledge::{self, FeedAdvisories, Knowledge, KnowledgeSources, ProductFamily};
use crate::net::guard::Pins;
use crate::net::http::{ClientOptions, Verification};
use crate::net::{self, Destination, tls};
use crate::probe::{self, Measurements, ProbeFailure, status};
use crate::report::ScanResult;
use crate::target::{HostName, Target};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What a scanner learns once and its scans share: per-family knowledge (bundled data,
/// advisory files, the advisory feed) and the release-feed answer. The plugin's run has one;
/// a server keeps one across its scans and renews it now and then (`with_memory`), so a stream
/// of scans asks the feeds once per renewal, not once per scan.
#[derive(Default)]
pub struct Memory {
    knowledge: Mutex<HashMap<ProductFamily, Arc<Knowledge>>>,
    /// The release feed's answer per family, in the order of `ProductFamily::ALL`.
    update: [OnceLock<UpdateInputs>; ProductFamily::ALL.len()],
}

/// A server's `Memory`, renewed once its window has passed (the feed cache's window,
/// `--feed-cache-ttl`): scans within a window share one, so a stream of scans asks each feed
/// once per window even without a state directory.
pub struct RenewedMemory {
    window: std::time::Duration,
    current: Mutex<(Instant, Arc<Memory>)>,
}

impl RenewedMemory {
    pub fn new(window: std::time::Duration) -> RenewedMemory {
        RenewedMemory {
            window,
            current: Mutex::new((Instant::now(), Arc::new(Memory::default()))),
        }
    }

    /// The memory of the current window (a new one once the window has passed).
    pub fn current(&self) -> Arc<Memory> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.0.elapsed() >= self.window {
            *current = (Instant::now(), Arc::new(Memory::default()));
        }
        current.1.clone()
    }
}

/// What a scan reads besides the assessment's rules: how to reach the instance, what to probe,
/// and where knowledge comes from (`Settings::scan`). `--verify-remediation` reaches the
/// instance with the same.
#[derive(Clone, Debug)]
pub struct Config {
    pub ca_file: Option<PathBuf>,
    pub proxy: Option<String>,
    pub insecure: bool,
    pub timeout: Duration,
    pub retries: u32,
    pub backoff_factor: f64,
    pub concurrency: usize,
    pub target_port: Option<u16>,
    /// Run the additional probes (off with `--no-extra-checks`).
    pub extra_checks: bool,
    /// Repeat checks against every address of the name; IPv6 ones only with `ipv6_enabled`.
    pub all_addresses: bool,
    pub ipv6_enabled: bool,
    /// For the CAA and DNSSEC lookups; the system's when unset.
    pub dns_server: Option<std::net::SocketAddr>,
    pub login_throttling: bool,
    /// Empty with `--no-debug-ports` / `scanner.check_debug_ports: false`.
    pub debug_ports: Vec<u16>,
    /// `--debug-ports` was given: those ports, whatever the family.
    pub debug_ports_given: bool,
    pub debug_port_timeout: Duration,
    /// Where the feed cache lives; `None`: nothing is cached.
    pub state_dir: Option<PathBuf>,
    /// Zero: no feed cache.
    pub feed_cache_ttl: Duration,
    pub release_schedule: Option<PathBuf>,
    pub vulnerability_db: Vec<PathBuf>,
    pub vulnerability_feed: Option<String>,
    pub update_source: UpdateSource,
    /// `--releases-url`, `{product}` standing for the family's id.
    pub releases_url: Option<String>,
    /// Read only where the feed is asked: a run that never asks it needs no credential.
    pub release_token: Option<String>,
}

impl Config {
    /// The release feed of a family: `--releases-url` with `{product}` replaced, or the
    /// family's own.
    pub fn releases_url_for(&self, family: ProductFamily) -> String {
        match &self.releases_url {
            Some(url) => url.replace("{product}", family.id()),
            None => family.describe().releases_url.to_string(),
        }
    }
}

/// Scans targets with a shared configuration, trust roots, per-family knowledge and one release-feed
/// answer: host workers share them, so a run asks each feed at most once, however many hosts,
/// and not at all while the feed cache holds a fresh answer.
pub struct Scanner<'a> {
    config: Config,
    /// The rules a plain `scan` assesses under.
    rules: Rules<'a>,
    /// Prints a progress line per attempt when stderr is a terminal (the plugin); a server
    /// keeps its stderr for its request log.
    pub show_progress: bool,
    /// The run's time budget (`--time-budget`): no attempt starts that could not end within
    /// it, and every request is cut to what is left.
    budget: Budget,
    pub roots: tls::Roots,
    pub proxy: Option<net::proxy::Proxy>,
    /// What the scans learn once and share: knowledge and the release-feed answer.
    memory: Arc<Memory>,
    feeds: FeedCache,
    now: Now,
    /// A guarded scan's target pins (`with_pins`): every connection to the target goes to
    /// these addresses, directly, and nothing about the target is looked up again.
    pins: Option<Pins>,
}

impl<'a> Scanner<'a> {
    /// Everything a scan needs besides its target. `Err` is an operator mistake (a CA file that
    /// holds no certificate), found before any traffic.
    pub fn new(
        config: Config,
        rules: Rules<'a>,
        now: Now,
        budget: Budget,
    ) -> Result<Scanner<'a>, String> {
        Ok(Scanner {
            rules,
            show_progress: false,
            budget,
            roots: tls::Roots::new(config.ca_file.as_deref())?.judged_at(now.0),
            // Validated when the settings were read; parsed once here for the TLS inspection.
            proxy: config
                .proxy
                .as_deref()
                .and_then(|p| net::proxy::Proxy::parse(p.trim()).ok()),
            memory: Arc::new(Memory::default()),
            feeds: FeedCache::new(
                config.state_dir.as_deref(),
                config.feed_cache_ttl,
                now.0,
                debug_log,
            ),
            now,
            pins: None,
            config,
        })
    }

    /// A scanner whose scans reach their target only at `pins` (what `net::guard::guarded`
    /// validated for it): the TLS inspection, HTTPS and plain HTTP, debug ports, the legacy-TLS
    /// handshake and `--all-addresses` all connect to the pinned addresses, directly (never
    /// through `--proxy`, which would resolve the name itself), and nothing about the target
    /// is resolved again (the DNS check reports the pinned addresses; its CAA and DNSSEC
    /// queries still go to the configured DNS server). A target other than the pinned host is
    /// refused.
    pub fn with_pins(mut self, pins: Pins) -> Scanner<'a> {
        self.pins = Some(pins);
        self
    }

    /// A scanner whose scans share `memory` with other scanners (a server's scans).
    pub fn with_memory(mut self, memory: Arc<Memory>) -> Scanner<'a> {
        self.memory = memory;
        self
    }

    /// A scanner whose scans are compared with `baseline` (`--baseline`, loaded by the run).
    pub fn with_baseline(mut self, baseline: Option<&'a Baseline>) -> Scanner<'a> {
        self.rules.baseline = baseline;
        self
    }

    /// The time budget the scans of this scanner share.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Scans every target: one worker per host up to `--concurrency`, results in input order.
    /// A single host runs on the calling thread.
    pub fn scan_all(&self, targets: &[Target]) -> Result<Vec<ScanResult>, String> {
        let slots: Vec<std::sync::Mutex<Option<Result<ScanResult, String>>>> = targets
            .iter()
            .map(|_| std::sync::Mutex::new(None))
            .collect();
        self.scan_each(targets, |i, scanned| {
            *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(scanned);
        })?;
        slots
            .into_iter()
            .map(|slot| {
                let scanned = slot.into_inner().unwrap_or_else(|e| e.into_inner());
                scanned.unwrap_or_else(|| Err("a host worker ended without its result".into()))
            })
            .collect()
    }

    /// Scans every target, handing each result to `done` with its index as its scan ends.
    /// `--concurrency` workers take the targets in input order, one at a time, so the results
    /// come nearly in that order: a caller writing them in that order holds only those that
    /// finished while an earlier, slower host was still scanning (`output::stream`). A single
    /// target is scanned on this thread.
    pub fn scan_each<F>(&self, targets: &[Target], done: F) -> Result<(), String>
    where
        F: Fn(usize, Result<ScanResult, String>) + Sync,
    {
        if let [only] = targets {
            done(0, self.scan(only));
            return Ok(());
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = self.config.concurrency.clamp(1, targets.len());
        std::thread::scope(|scope| {
            let work = || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(target) = targets.get(i) else { break };
                    done(i, self.scan(target));
                }
            };
            for n in 0..workers {
                std::thread::Builder::new()
                    .name(format!("host-worker-{n}"))
                    .spawn_scoped(scope, work)
                    .map_err(|e| format!("cannot start {workers} host workers: {e}"))?;
            }
            Ok(())
        })
    }

    /// Client settings of the requests: each request's time limit is cut to what is left of
    /// the run's budget when it starts.
    fn client_options(&self) -> ClientOptions {
        ClientOptions {
            timeout: self.budget.step_timeout(self.config.timeout),
            proxy: self.config.proxy.clone(),
            pin: None,
            user_agent: crate::program::user_agent(),
        }
    }

    /// Client settings of the requests to the target: a guarded scan's are pinned and direct.
    fn target_options(&self) -> ClientOptions {
        let options = self.client_options();
        match &self.pins {
            Some(pins) => ClientOptions {
                pin: Some(pins.clone()),
                proxy: None,
                ..options
            },
            None => options,
        }
    }

    /// Scans one target. `Err` only for operator mistakes found late (an unreadable advisory
    /// file); everything the server does ends in a result, UNKNOWN at worst.
    pub fn scan(&self, target: &Target) -> Result<ScanResult, String> {
        let mut results = self.scan_under(target, std::slice::from_ref(&self.rules))?;
        Ok(results.remove(0))
    }

    /// Scans one target once and assesses what it measured under each of `views`, in order:
    /// the assessment's rules (waivers, thresholds, policy, release track). The public API
    /// judges a submission with and without its submitter's waivers this way: both grades rest
    /// on the same measurements, and the instance is scanned once.
    pub fn scan_under(&self, target: &Target, views: &[Rules]) -> Result<Vec<ScanResult>, String> {
        if let Some(pins) = &self.pins
            && !pins.covers(&target.host_str())
        {
            return Err(format!(
                "{} is not the target this scanner was guarded for ({})",
                target.display_name(),
                pins.name()
            ));
        }
        let started = Instant::now();
        let dest = destination(target, self.config.target_port);
        let attempts = self.config.retries + 1;
        let measured =
            self.budget
                .retry(self.config.retries, self.config.backoff_factor, |attempt| {
                    if self.show_progress {
                        crate::diagnostics::progress(&format!(
                            "scanning {} (attempt {attempt}/{attempts})",
                            target.display_name()
                        ));
                    }
                    match self.attempt(&dest) {
                        Ok(Ok(m)) => Attempt::Done((m, attempt)),
                        Ok(Err(ProbeFailure::Transient(message))) => Attempt::Transient(message),
                        Ok(Err(ProbeFailure::Definite(message))) => {
                            Attempt::Failed(Ok((message, attempt)))
                        }
                        Err(operator) => Attempt::Failed(Err(operator)),
                    }
                });
        let failed = |message: String, attempts: u32| {
            let host = target.display_name();
            let seconds = started.elapsed().as_secs_f64();
            views
                .iter()
                .map(|v| {
                    assess::failed(
                        v,
                        host.clone(),
                        message.clone(),
                        attempts,
                        self.now,
                        seconds,
                    )
                })
                .collect()
        };
        match measured {
            Ok((m, _)) => views
                .iter()
                .map(|view| self.assess(view, target, &m, started))
                .collect(),
            Err(GaveUp::Failed(Ok((message, attempt)))) => Ok(failed(message, attempt)),
            Err(GaveUp::Failed(Err(operator))) => Err(operator),
            Err(GaveUp::Exhausted { message, attempts }) => Ok(failed(message, attempts)),
        }
    }

    /// One attempt: transport selection, then every probe on one client (one pool of
    /// kept-alive connections), then the other addresses with `--all-addresses`. The outer
    /// `Err` is an operator mistake found late.
    fn attempt(&self, dest: &Destination) -> Result<Result<Measurements, ProbeFailure>, String> {
        let options = self.target_options();
        let pinned = self.pins.clone().map(tls::Route::Pinned);
        let route = pinned.unwrap_or_else(|| tls::Route::via(self.proxy.as_ref()));
        let transport = net::select_transport(
            dest,
            &self.roots,
            route,
            self.config.insecure,
            options.timeout,
        );
        debug_log(&format!(
            "transport {} ({})",
            transport.endpoint.base_url(),
            describe_https(&transport.https)
        ));
        let client = transport.client(&options)?;
        let plain_client = dest.plain_http_client(&options);
        let probe_options = probe::Options {
            extra_checks: self.config.extra_checks,
            // However slowly the instance answers, the scan ends: three request timeouts,
            // and never past the run's budget.
            deadline: self.budget.deadline_in(self.config.timeout * 3),
            host: dest.host.clone(),
            debug_ports: self.config.debug_ports.clone(),
            debug_ports_of_family: !self.config.debug_ports_given,
            debug_port_timeout: self.config.debug_port_timeout,
            request_timeout: options.timeout,
            proxy: self.proxy.clone().filter(|_| self.pins.is_none()),
            plain_client,
            login_throttling: self.config.login_throttling,
            dns_server: self.config.dns_server.or_else(net::dns::system_nameserver),
        };
        let measured = probe::measure(&client, transport.https, &probe_options);
        // Close the attempt's connections before the nodes are probed: a node may be this
        // very server, and idle connections would add to the nodes' own.
        drop((client, probe_options));
        Ok(measured.map(|mut m| {
            if self.config.all_addresses && self.config.extra_checks {
                m.nodes = self.observe_nodes(dest, &m, &transport.verification, &options);
            }
            m
        }))
    }

    /// `--all-addresses`: each address of a name with several, probed on its own.
    fn observe_nodes(
        &self,
        dest: &Destination,
        m: &Measurements,
        verification: &Verification,
        options: &ClientOptions,
    ) -> Option<Vec<probe::addresses::NodeObservation>> {
        if dest.host.parse::<std::net::IpAddr>().is_ok() {
            return None;
        }
        let resolved = match &self.pins {
            // A guarded scan compares the nodes the guard validated.
            Some(pins) => probe::pinned_addresses(pins, &dest.host).map(|ips| {
                ips.into_iter()
                    .filter(|ip| self.config.ipv6_enabled || ip.is_ipv4())
                    .collect::<Vec<_>>()
            }),
            None => probe::addresses::addresses_of(
                &dest.host,
                self.config.ipv6_enabled,
                options.timeout.deadline(),
            ),
        };
        let addresses = match resolved {
            Ok(a) if a.len() > 1 => a,
            Ok(_) => return None,
            Err(e) => {
                debug_log(&format!("--all-addresses: {e}"));
                return None;
            }
        };
        let node_probe = probe::addresses::NodeProbe {
            host: &dest.host,
            endpoint: &m.endpoint,
            verification,
            options,
            roots: &self.roots,
            demo: probe::plan::builtin_identity_provider(m.http.get(probe::plan::OIDC)),
        };
        Some(probe::addresses::observe(&node_probe, &addresses))
    }

    /// The measurements judged under `view` (the scanner's rules, or a variant of them).
    fn assess(
        &self,
        view: &Rules,
        target: &Target,
        m: &Measurements,
        started: Instant,
    ) -> Result<ScanResult, String> {
        let host = target.display_name();
        let product = match identify(m) {
            Ok(p) => p,
            Err(message) => {
                let seconds = started.elapsed().as_secs_f64();
                return Ok(assess::failed(view, host, message, 1, self.now, seconds));
            }
        };
        let family = product.family;
        let slot = ProductFamily::ALL
            .iter()
            .position(|f| *f == family)
            .expect("every family is in ALL");
        let update = self.memory.update[slot]
            .get_or_init(|| self.update_inputs(family))
            .clone();
        let knowledge = self.knowledge_for(product.family)?;
        Ok(assess::assess(assess::Input {
            host,
            measurements: m,
            product,
            knowledge: &knowledge,
            update,
            rules: view,
            now: self.now,
            duration_seconds: started.elapsed().as_secs_f64(),
        }))
    }

    /// Loads a family's knowledge once per run; the lock is held while loading so concurrent
    /// hosts wait for the one load instead of fetching the advisory feed again.
    fn knowledge_for(&self, family: ProductFamily) -> Result<Arc<Knowledge>, String> {
        let mut cache = self
            .memory
            .knowledge
            .lock()
            .map_err(|_| "knowledge cache poisoned")?;
        if let Some(known) = cache.get(&family) {
            return Ok(known.clone());
        }
        let sources = KnowledgeSources {
            release_schedule: self.config.release_schedule.clone(),
            vulnerability_db: self.config.vulnerability_db.clone(),
            vulnerability_feed: self.config.vulnerability_feed.clone(),
        };
        let options = self.client_options();
        let fetch = |url: &str| -> Result<FeedAdvisories, String> {
            let ask = |validators: Option<&net::feed::Validators>| {
                net::feed::fetch(url, None, validators, Feed::Advisories.cap(), &options)
            };
            let parse = |body: &[u8]| {
                let text = std::str::from_utf8(body).map_err(|_| "not UTF-8 text".to_string())?;
                knowledge::advisories::parse_document(text, family).map_err(|e| e.to_string())
            };
            let answer = self.feeds.get(Feed::Advisories, url, false, &ask, &parse)?;
            log_origin(&format!("advisory feed {url}"), &answer.origin);
            let note = match answer.origin {
                Origin::Stale { fetched, error } => Some(format!(
                    "advisory feed {url} unavailable ({error}); its cached answer from {} is used",
                    Now(fetched).stamp()
                )),
                _ => None,
            };
            Ok(FeedAdvisories {
                advisories: answer.value,
                note,
            })
        };
        let loaded = Arc::new(Knowledge::load(family, &sources, &fetch)?);
        for note in &loaded.notes {
            debug_log(note);
        }
        cache.insert(family, loaded.clone());
        Ok(loaded)
    }

    fn update_inputs(&self, family: ProductFamily) -> UpdateInputs {
        if !matches!(
            self.config.update_source,
            UpdateSource::Auto | UpdateSource::Feed
        ) {
            return UpdateInputs::default();
        }
        let url = &self.config.releases_url_for(family);
        let token = self.config.release_token.as_deref();
        let options = self.client_options();
        let ask = |validators: Option<&net::feed::Validators>| {
            net::feed::fetch(url, token, validators, Feed::Releases.cap(), &options)
        };
        let answer = self.feeds.get(
            Feed::Releases,
            url,
            token.is_some(),
            &ask,
            &knowledge::update::parse_release_feed,
        );
        match answer {
            Ok(answer) => {
                log_origin("release feed", &answer.origin);
                let (feed_error, cached_at) = match answer.origin {
                    Origin::Stale { fetched, error } => (
                        Some(format!("release feed unavailable: {error}")),
                        Some(Now(fetched).stamp()),
                    ),
                    _ => (None, None),
                };
                UpdateInputs {
                    feed: Some(answer.value),
                    feed_error,
                    cached_at,
                }
            }
            Err(e) => {
                debug_log(&format!("release feed: {e}"));
                UpdateInputs {
                    feed_error: Some(format!("release feed unavailable: {e}")),
                    ..UpdateInputs::default()
                }
            }
        }
    }
}

/// A pool of `workers` threads that scan one host each, named `{name}-{i}`.
pub fn host_workers(workers: usize, name: &'static str) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .map_err(|e| format!("cannot start {workers} host workers: {e}"))
}

/// Says with `--debug` where a feed answer came from.
fn log_origin(what: &str, origin: &Origin) {
    debug_log(&match origin {
        Origin::Network => format!("{what}: fetched"),
        Origin::Fresh { fetched } => format!(
            "{what}: cached answer from {} is fresh (--feed-cache-ttl); not asked",
            Now(*fetched).stamp()
        ),
        Origin::NotModified { fetched } => format!(
            "{what}: not modified since the cached answer from {}; reused",
            Now(*fetched).stamp()
        ),
        Origin::Stale { fetched, error } => format!(
            "{what}: unavailable ({error}); the cached answer from {} stands in",
            Now(*fetched).stamp()
        ),
    });
}

/// Recognises product and release from what the instance reported.
pub fn identify(m: &Measurements) -> Result<Identified, String> {
    let where_ = m.endpoint.url(status::STATUS_PATH);
    let name = m.status.name().map(str::to_string).ok_or_else(|| {
        format!(
            "{where_} names no product (productname); this does not look like an {} instance",
            ProductFamily::all_names()
        )
    })?;
    let Some(family) = ProductFamily::from_product_name(&name) else {
        return Err(format!(
            "{where_} reports the product {name:?}, which this check does not know (it checks \
             {})",
            ProductFamily::all_names()
        ));
    };
    let version_text = m
        .status
        .product_version
        .clone()
        .filter(|v| !v.is_empty())
        .or_else(|| {
            m.capabilities
                .as_ref()
                .and_then(status::capabilities_version)
        })
        .ok_or_else(|| match &m.status.legacy_version {
            Some(legacy) => format!(
                "{where_} reports no release (productversion; the legacy version {legacy} is not \
                 a release), so the release cannot be judged"
            ),
            None => format!(
                "{where_} reports no release (productversion), so the release cannot be judged"
            ),
        })?;
    let version = knowledge::parse_version(&version_text).ok_or_else(|| {
        format!("{where_} reports the release {version_text:?}, which is not a version number")
    })?;
    Ok(Identified {
        family,
        name,
        version_text,
        version,
        legacy_version: m.status.legacy_version.clone(),
        edition: m.status.edition.clone(),
    })
}

/// The interfaces of the targets' IPv6 zones (`[fe80::1%25eth0]`), looked up once.
pub fn target_zones(targets: &[Target]) -> Result<HashMap<std::net::Ipv6Addr, u32>, String> {
    let mut zones = HashMap::new();
    for target in targets {
        if let (HostName::Ipv6(addr), Some(zone)) = (&target.host, &target.zone) {
            let index = net::resolve::interface_index(zone).ok_or_else(|| {
                format!(
                    "-H {}: this host has no network interface {zone:?} (the IPv6 zone); \
                     write the interface that reaches the address, e.g. [fe80::1%25eth0]",
                    target.display_name()
                )
            })?;
            zones.insert(*addr, index);
        }
    }
    Ok(zones)
}

/// Ports and names to connect to. A port given with the target (or `scanner.target_port`) is
/// used for both HTTPS and the plain-HTTP fallback; otherwise 443 and 80.
pub fn destination(target: &Target, default_port: Option<u16>) -> Destination {
    let host = target.host_str();
    let url_host = match &target.host {
        HostName::Ipv6(_) => format!("[{host}]"),
        _ => host.clone(),
    };
    let explicit = target.port.or(default_port);
    Destination {
        host,
        url_host,
        https_port: explicit.unwrap_or(443),
        http_port: explicit.unwrap_or(80),
        base_path: target.base_path.clone(),
    }
}

fn describe_https(https: &net::HttpsObservation) -> String {
    match https {
        net::HttpsObservation::Verified(h) => format!("verified {}", h.protocol),
        net::HttpsObservation::Unverified(h) => format!(
            "unverified {}: {}",
            h.protocol,
            h.trust.as_ref().err().map_or("--insecure", String::as_str)
        ),
        net::HttpsObservation::Unavailable(reason) => format!("HTTPS unavailable: {reason}"),
    }
}
