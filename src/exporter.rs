//! The metrics exporter: `check-storage-security --prometheus-listen-port PORT` serves the
//! metrics of every configured target on `GET /metrics` in the Prometheus text format (spec
//! "Metrics exporter"), rendered by `output::metrics`, the renderer of `--format metrics`, so
//! the two cannot drift.
//!
//! Rounds. One round scans every `-H` target with the plugin's pipeline (`crate::scanner`, a
//! fresh scanner and time budget per round, `--concurrency` host workers). The first scrape of
//! `/metrics` starts the first round; it, and any scrape during that round, waits for the round
//! until [`FIRST_SCRAPE_WAIT`] after it began; a target not done by then is reported
//! `storage_security_scrape_success 0`. From then on one thread
//! starts a round `--scrape-interval` after the previous one started, or when it ended if it
//! took longer: rounds never overlap, and a slow round is not made up for by a burst. Every
//! later scrape answers at once with the text of the last completed round: a scrape never
//! waits for a scan and never starts one. A failed scan is a value (`scrape_success 0`), never
//! an HTTP error.
//!
//! Besides the eight families of the spec the exporter reports itself:
//! `storage_security_exporter_build_info`, `_targets`, `_rounds_total`, and once a round has
//! completed `_last_round_timestamp_seconds` and `_last_round_duration_seconds`.
//!
//! Other paths: `/` points at `/metrics`, `/healthz` answers 200 while the process serves;
//! anything else is 404, methods other than GET and HEAD 405, as JSON errors of `server::http`
//! (its route table, [`ROUTES`]).

use crate::budget::Budget;
use crate::clock::Now;
use crate::output::metrics;
use crate::process::Outcome;
use crate::redact;
use crate::report::ScanResult;
use crate::scanner::RenewedMemory;
use crate::server::http::{self, ConnectionCap, Limits, Request, Response, Route, Server};
use crate::server::{lock, signals};
use crate::settings::{Settings, UpdateSource};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long the first scrape waits for the first round before it answers with what is done.
/// Below Prometheus's default scrape timeout (10 s).
pub const FIRST_SCRAPE_WAIT: Duration = Duration::from_secs(8);

/// The Prometheus text exposition format, version 0.0.4.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// HTTP workers: scrapes are answered from memory (only those of the first round wait), so
/// the cost of a worker is a thread. With the four queue places of each (`server::http`), 80
/// scrapes read at once get the metrics, the next a 503 with `Retry-After`.
const WORKERS: usize = 16;
/// Connections one client (an address, an IPv6 /64) holds at once: a Prometheus with many
/// scrapers fits; a client dripping request heads holds at most this many of the readers,
/// and a network twice as many.
const CONNECTIONS_PER_CLIENT: usize = 64;

/// What a round's host worker reports: the target's index and its result.
type Done<'a> = dyn Fn(usize, ScanResult) + Sync + 'a;

/// One round: scans every target and reports each result as its scan ends.
type RoundFn = dyn Fn(&Done) + Send + Sync;

/// The exporter: its settings, the round function and what the rounds produced.
struct Exporter {
    settings: Arc<Settings>,
    interval: Duration,
    first_wait: Duration,
    round: Arc<RoundFn>,
    state: Mutex<State>,
    /// Signalled when a round completes.
    completed: Condvar,
    stop: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    /// When the first round started; set by the first scrape, which starts the round thread.
    first_round: Option<Instant>,
    /// The results of the round in flight, by target, as they come in.
    in_flight: Vec<Option<ScanResult>>,
    /// The last completed round.
    last: Option<Completed>,
    rounds: u64,
}

/// A completed round: its exposition, rendered once, and when and how fast it ran.
struct Completed {
    text: String,
    /// Unix time of its end on the report clock (`COS_NOW` when pinned).
    ended_at: f64,
    duration: Duration,
}

/// Runs the exporter until SIGTERM or SIGINT; exit 0 then. A mistake found before serving
/// (the address is taken, a CA file without certificates) ends UNKNOWN as the plugin does.
pub fn run(settings: Settings) -> Outcome {
    Outcome::of(serve(settings).map(|()| String::new()))
}

fn serve(settings: Settings) -> Result<(), String> {
    let exporter = settings
        .exporter
        .clone()
        .ok_or("the metrics exporter needs --prometheus-listen-port")?;
    // Found before listening, as the plugin finds it before any traffic.
    let now = Now::pinned_or_system(settings.now);
    settings.scanner(now, Budget::new(Instant::now(), settings.time_budget))?;
    let stop = signals::stop_flag()?;
    let server = Server::bind(exporter.listen).map_err(|e| {
        format!(
            "the metrics exporter cannot listen on {}: {e}; choose another \
             --prometheus-listen-port or --prometheus-listen-addr",
            exporter.listen
        )
    })?;
    let workers = settings.scan.concurrency.min(settings.targets.len()).max(1);
    let pool = crate::scanner::host_workers(workers, "exporter-host")?;
    let settings = Arc::new(settings);
    announce(&settings, server.local_addr());
    let exporter = Exporter::new(
        settings.clone(),
        FIRST_SCRAPE_WAIT,
        scan_round(settings, pool),
        stop.clone(),
    );
    let same_host = crate::server::http::SameHost::of(server.local_addr(), None);
    let cap = ConnectionCap::by_address(CONNECTIONS_PER_CLIENT, 2 * CONNECTIONS_PER_CLIENT);
    server.cap_connections(cap).run(
        WORKERS,
        Limits::default(),
        same_host.guard(move |request| exporter.handle(request)),
        stop,
    );
    log("stopped");
    Ok(())
}

/// The lines an operator reads at start: where it listens (first, the line tests and
/// scripts wait for), what it will scan, and what deserves a warning.
fn announce(settings: &Settings, listening: std::net::SocketAddr) {
    eprintln!("listening on {listening}");
    let interval = settings
        .exporter
        .as_ref()
        .map_or(0.0, |e| e.scrape_interval.as_secs_f64());
    log(&format!(
        "{} target(s) on http://{listening}/metrics; the first scrape starts the first round, \
         then a round every {interval} s (--scrape-interval)",
        settings.targets.len()
    ));
    if !listening.ip().is_loopback() {
        log(&format!(
            "warning: {listening} is reachable from other hosts; anyone who can connect reads \
             the targets' names, versions and ratings (the exporter has no access control: \
             restrict it with a firewall, or put a reverse proxy with TLS and authentication \
             in front)"
        ));
    }
    let asks_feed = matches!(
        settings.scan.update_source,
        UpdateSource::Auto | UpdateSource::Feed
    );
    if asks_feed && settings.scan.feed_cache_ttl.is_zero() {
        log(
            "note: --feed-cache-ttl 0, so every round asks the release feed, whose anonymous \
             limit is 60 requests an hour",
        );
    }
    if settings.scan.login_throttling {
        log(&format!(
            "note: --login-throttling sends six failed sign-ins to every target each round \
             (every {interval} s)"
        ));
    }
    if settings.webhook.is_some() {
        log(
            "note: the exporter sends no webhooks (they are for single runs); alert on the \
             metrics in Prometheus",
        );
    }
}

/// One line on stderr, beside the request log, secrets hidden.
fn log(message: &str) {
    eprintln!("exporter: {}", redact::apply(message));
}

/// The result of a target that has no scan result: UNKNOWN, `scrape_success 0`.
fn without_result(settings: &Settings, host: String, why: &str, now: Now) -> ScanResult {
    crate::assess::failed(&settings.assess_rules(), host, why.to_string(), 0, now, 0.0)
}

/// The production round: the plugin's scanner, a fresh time budget, `--concurrency` workers.
fn scan_round(settings: Arc<Settings>, pool: rayon::ThreadPool) -> Arc<RoundFn> {
    // Rounds within the feed cache's window share what they learn: the feeds are asked once
    // per window, not once per round.
    let memory = RenewedMemory::new(settings.scan.feed_cache_ttl);
    Arc::new(move |done: &Done| {
        let now = Now::pinned_or_system(settings.now);
        let budget = Budget::new(Instant::now(), settings.time_budget);
        let scanner = match settings.scanner(now, budget) {
            Ok(scanner) => scanner.with_memory(memory.current()),
            Err(e) => {
                log(&e);
                for (i, target) in settings.targets.iter().enumerate() {
                    done(i, without_result(&settings, target.display_name(), &e, now));
                }
                return;
            }
        };
        pool.install(|| {
            use rayon::prelude::*;
            settings
                .targets
                .par_iter()
                .enumerate()
                .for_each(|(i, target)| {
                    let host = target.display_name();
                    // A bug in one scan must not end the rounds: the host is reported failed.
                    let scanned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        scanner.scan(target)
                    }));
                    let result = match scanned {
                        Ok(Ok(result)) => result,
                        Ok(Err(e)) => {
                            log(&format!("{host}: {e}"));
                            without_result(&settings, host, &e, now)
                        }
                        Err(_) => without_result(
                            &settings,
                            host,
                            "internal error during the scan (see stderr)",
                            now,
                        ),
                    };
                    done(i, result);
                });
        });
    })
}

impl Exporter {
    fn new(
        settings: Arc<Settings>,
        first_wait: Duration,
        round: Arc<RoundFn>,
        stop: Arc<AtomicBool>,
    ) -> Arc<Exporter> {
        let interval = settings
            .exporter
            .as_ref()
            .map_or(Duration::from_secs(60), |e| e.scrape_interval);
        Arc::new(Exporter {
            settings,
            interval,
            first_wait,
            round,
            state: Mutex::new(State::default()),
            completed: Condvar::new(),
            stop,
        })
    }

    fn handle(self: &Arc<Self>, request: &Request) -> Response {
        http::route(
            ROUTES,
            self,
            request,
            "no such path; the metrics are at /metrics",
            "",
        )
    }

    /// The answer to a scrape: the last completed round, or during the first round what is
    /// done once it ended or the first wait is over, and the exporter's own metrics.
    fn scrape(self: &Arc<Self>) -> String {
        let mut state = lock(&self.state);
        let first_round = match state.first_round {
            Some(started) => started,
            None => {
                let started = Instant::now();
                state.first_round = Some(started);
                state.in_flight = vec![None; self.settings.targets.len()];
                let exporter = self.clone();
                let spawned = std::thread::Builder::new()
                    .name("exporter-rounds".into())
                    .spawn(move || exporter.rounds());
                if let Err(e) = spawned {
                    log(&format!("cannot start the round thread: {e}"));
                }
                started
            }
        };
        let left = (first_round + self.first_wait).saturating_duration_since(Instant::now());
        let (state, _) = self
            .completed
            .wait_timeout_while(state, left, |state| state.last.is_none())
            .unwrap_or_else(|p| p.into_inner());
        let own = self.own_metrics(&state);
        match &state.last {
            Some(round) => round.text.clone() + &own,
            None => {
                // The first round is still running: what is done, the rest not scanned yet.
                let partial = state.in_flight.clone();
                drop(state);
                let now = Now::pinned_or_system(self.settings.now);
                let results = self.fill_in(
                    partial,
                    "not scanned yet: the exporter's first round is still running",
                    now,
                );
                self.render(&results, now) + &own
            }
        }
    }

    /// The results of a round, a host without one failed for `why`.
    fn fill_in(&self, partial: Vec<Option<ScanResult>>, why: &str, now: Now) -> Vec<ScanResult> {
        partial
            .into_iter()
            .zip(&self.settings.targets)
            .map(|(result, target)| {
                result.unwrap_or_else(|| {
                    without_result(&self.settings, target.display_name(), why, now)
                })
            })
            .collect()
    }

    /// The round thread: a round, then the next one an interval after this one started (or
    /// at once when it took longer), until the process stops.
    fn rounds(self: Arc<Self>) {
        loop {
            let started = Instant::now();
            lock(&self.state).in_flight = vec![None; self.settings.targets.len()];
            let done = |i: usize, result: ScanResult| {
                if let Some(slot) = lock(&self.state).in_flight.get_mut(i) {
                    *slot = Some(result);
                }
            };
            let round = self.round.clone();
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| round(&done))).is_err() {
                log("internal error during a round (see stderr); its hosts are reported failed");
            }
            let now = Now::pinned_or_system(self.settings.now);
            let partial = std::mem::take(&mut lock(&self.state).in_flight);
            let results = self.fill_in(
                partial,
                "the round ended without a result for this host",
                now,
            );
            let text = self.render(&results, now);
            let duration = started.elapsed();
            let failed = results.iter().filter(|r| r.error.is_some()).count();
            let number = {
                let mut state = lock(&self.state);
                state.rounds += 1;
                state.last = Some(Completed {
                    text,
                    ended_at: now.0.as_millisecond() as f64 / 1000.0,
                    duration,
                });
                state.rounds
            };
            self.completed.notify_all();
            log(&format!(
                "round {number}: {} target(s) in {:.2} s, {failed} failed",
                results.len(),
                duration.as_secs_f64()
            ));
            let next = started + self.interval;
            loop {
                if self.stop.load(Ordering::SeqCst) {
                    return;
                }
                let left = next.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                std::thread::sleep(left.min(Duration::from_millis(100)));
            }
        }
    }

    /// The eight families of the targets, as `--format metrics` prints them.
    fn render(&self, results: &[ScanResult], now: Now) -> String {
        metrics::render(results, &self.settings.output_context(now))
    }

    /// The exporter's own families.
    fn own_metrics(&self, state: &State) -> String {
        let version = metrics::escape_label_value(env!("CARGO_PKG_VERSION"));
        let mut out = String::new();
        let mut family = |name: &str, kind: &str, help: &str, sample: String| {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{sample}\n"
            ));
        };
        family(
            "storage_security_exporter_build_info",
            "gauge",
            "Version of check-storage-security serving these metrics; always 1",
            format!("{{version=\"{version}\"}} 1"),
        );
        family(
            "storage_security_exporter_targets",
            "gauge",
            "Targets scanned in each round",
            format!(" {}", self.settings.targets.len()),
        );
        family(
            "storage_security_exporter_rounds_total",
            "counter",
            "Rounds of scans of every target completed since the exporter started",
            format!(" {}", state.rounds),
        );
        if let Some(round) = &state.last {
            family(
                "storage_security_exporter_last_round_timestamp_seconds",
                "gauge",
                "Unix time at which the last completed round ended",
                format!(" {:.3}", round.ended_at),
            );
            family(
                "storage_security_exporter_last_round_duration_seconds",
                "gauge",
                "Duration of the last completed round in seconds",
                format!(" {:.3}", round.duration.as_secs_f64()),
            );
        }
        out
    }
}

/// Every route of the exporter.
const ROUTES: &[Route<Arc<Exporter>>] = &[
    // The first scrape starts the first round: not at the request of another site's page.
    Route::new(
        &["GET", "HEAD"],
        "/metrics",
        |exporter: &Arc<Exporter>, _, _| Response::new(200, CONTENT_TYPE, exporter.scrape()),
    )
    .starts_work(),
    Route::new(&["GET", "HEAD"], "/", |_, _, _| {
        Response::new(200, "text/html; charset=utf-8", index_page())
    }),
    Route::new(&["GET", "HEAD"], "/healthz", |_, _, _| {
        Response::new(200, "text/plain; charset=utf-8", "ok\n")
    }),
];

fn index_page() -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>check-storage-security \
         exporter</title></head>\n<body><h1>check-storage-security {} exporter</h1>\n<p><a \
         href=\"/metrics\">/metrics</a>: the security rating and findings of the configured \
         instances, in the Prometheus text format.</p></body></html>\n",
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::metrics::testing::{failed, scanned, settings};
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;

    fn request(method: &str, path: &str) -> Request {
        Request::local(method, path)
    }

    fn body(response: &Response) -> String {
        String::from_utf8(response.body.clone()).unwrap()
    }

    fn exporter(interval: &str, first_wait: Duration, round: Arc<RoundFn>) -> Arc<Exporter> {
        let settings = settings(&[
            "-H",
            "a.example,b.example",
            "--prometheus-listen-port",
            "0",
            "--scrape-interval",
            interval,
        ]);
        Exporter::new(
            Arc::new(settings),
            first_wait,
            round,
            Arc::new(AtomicBool::new(false)),
        )
    }

    fn sample<'a>(text: &'a str, series: &str) -> Option<&'a str> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
    }

    #[test]
    fn the_first_scrape_waits_for_the_first_round_at_most_the_first_wait() {
        // Host a answers at once, host b when the test lets it.
        let (release, held) = mpsc::channel::<()>();
        let held = Mutex::new(held);
        let round: Arc<RoundFn> = Arc::new(move |done: &Done| {
            done(0, scanned("a.example", "8.1.0", Some(30)));
            let _ = held.lock().unwrap().recv_timeout(Duration::from_secs(10));
            done(1, scanned("b.example", "8.1.0", Some(30)));
        });
        let e = exporter("3600", Duration::from_millis(300), round);
        let asked = Instant::now();
        let first = body(&e.handle(&request("GET", "/metrics")));
        let waited = asked.elapsed();
        assert!(
            waited >= Duration::from_millis(300) && waited < Duration::from_secs(3),
            "{waited:?}"
        );
        let a = "storage_security_scrape_success{host=\"a.example\"}";
        let b = "storage_security_scrape_success{host=\"b.example\"}";
        assert_eq!(sample(&first, a), Some("1"), "{first}");
        assert_eq!(sample(&first, b), Some("0"), "{first}");
        assert_eq!(
            sample(&first, "storage_security_exporter_rounds_total"),
            Some("0")
        );
        assert!(!first.contains("last_round_timestamp"), "{first}");
        // A later scrape during the first round does not wait again.
        let asked = Instant::now();
        let second = body(&e.handle(&request("GET", "/metrics")));
        assert!(asked.elapsed() < Duration::from_millis(250));
        assert_eq!(sample(&second, b), Some("0"), "{second}");
        release.send(()).unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let done = loop {
            let text = body(&e.handle(&request("GET", "/metrics")));
            if sample(&text, "storage_security_exporter_rounds_total") == Some("1")
                || Instant::now() > until
            {
                break text;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(sample(&done, b), Some("1"), "{done}");
        assert!(
            sample(
                &done,
                "storage_security_exporter_last_round_duration_seconds"
            )
            .is_some()
        );
        e.stop.store(true, Ordering::SeqCst);
    }

    #[test]
    fn the_first_scrape_answers_when_the_round_ends() {
        let round: Arc<RoundFn> = Arc::new(|done: &Done| {
            done(1, failed("b.example"));
            done(0, scanned("a.example", "8.1.0", None));
        });
        let e = exporter("3600", Duration::from_secs(30), round);
        let asked = Instant::now();
        let text = body(&e.handle(&request("GET", "/metrics")));
        assert!(asked.elapsed() < Duration::from_secs(5));
        // A failed scan is a value; targets keep their input order.
        assert!(text.contains(
            "storage_security_scrape_success{host=\"a.example\"} 1\n\
             storage_security_scrape_success{host=\"b.example\"} 0\n"
        ));
        assert_eq!(
            sample(&text, "storage_security_exporter_rounds_total"),
            Some("1")
        );
        e.stop.store(true, Ordering::SeqCst);
    }

    #[test]
    fn rounds_follow_the_interval_never_overlap_and_scrapes_never_wait_for_them() {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let rounds = Arc::new(AtomicUsize::new(0));
        let round: Arc<RoundFn> = {
            let (running, most, rounds) = (running.clone(), most.clone(), rounds.clone());
            Arc::new(move |done: &Done| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // Every round after the first is slower than the interval.
                if rounds.fetch_add(1, Ordering::SeqCst) > 0 {
                    std::thread::sleep(Duration::from_millis(150));
                }
                done(0, scanned("a.example", "8.1.0", None));
                done(1, scanned("b.example", "8.1.0", None));
                running.fetch_sub(1, Ordering::SeqCst);
            })
        };
        let e = exporter("0.05", FIRST_SCRAPE_WAIT, round);
        assert_eq!(body(&e.handle(&request("GET", "/healthz"))), "ok\n");
        assert_eq!(rounds.load(Ordering::SeqCst), 0, "no round before a scrape");
        e.handle(&request("GET", "/metrics"));
        let mut took = Vec::new();
        while rounds.load(Ordering::SeqCst) < 5 {
            let asked = Instant::now();
            let text = body(&e.handle(&request("GET", "/metrics")));
            took.push(asked.elapsed());
            assert!(text.contains("storage_security_rating_score{"), "{text}");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(most.load(Ordering::SeqCst), 1, "two rounds ran at once");
        // Rounds take 150 ms; a scrape that waited for them would take half that on average.
        took.sort();
        assert!(took[took.len() / 2] < Duration::from_millis(20), "{took:?}");
        e.stop.store(true, Ordering::SeqCst);
    }

    #[test]
    fn the_manual_states_the_first_wait() {
        let help =
            crate::settings::options::spec(crate::settings::options::Id::scrape_interval).help;
        let said = format!("up to {} s", FIRST_SCRAPE_WAIT.as_secs());
        assert!(help.contains(&said), "{help}");
    }

    #[test]
    fn other_paths_and_methods() {
        let round: Arc<RoundFn> = Arc::new(|_: &Done| {});
        let e = exporter("60", FIRST_SCRAPE_WAIT, round);
        let index = e.handle(&request("GET", "/"));
        assert_eq!(index.status, 200);
        assert!(body(&index).contains("href=\"/metrics\""));
        let missing = e.handle(&request("GET", "/metric"));
        assert_eq!(missing.status, 404);
        assert!(body(&missing).contains("\"code\":\"not_found\""));
        let post = e.handle(&request("POST", "/metrics"));
        assert_eq!(post.status, 405);
        assert!(post.headers.contains(&("Allow".into(), "GET, HEAD".into())));
        assert!(
            lock(&e.state).first_round.is_none(),
            "only /metrics starts a round"
        );
    }
}
