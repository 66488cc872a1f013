//! `make bench`, the public scan API (`check-storage-scanner web`): submissions and polls per
//! second at [`WEB_CLIENTS`] concurrent clients, poll latency and the server's peak memory,
//! once with each store (SQLite in a fresh state directory, Redis on a `redis-server` of its
//! own).
//!
//! The server runs with one scan worker, `--allow-private-targets` and `--trusted-proxy
//! 127.0.0.1/32`. Each submission comes from a network of its own (an `X-Forwarded-For`
//! address: a /24 of the benchmarking range 198.18.0.0/15, then a /56 of the documentation
//! range 2001:db8::/32; these addresses are only counted, never contacted) and names a target
//! of its own, `127.0.0.1:<port>` where nothing listens, so none of the API's limits answers
//! 429 and every scan fails at once on loopback. The workers never leave 127.0.0.0/8.
//!
//! 1. [`WEB_SUBMISSIONS`] `POST /api/scans` from [`WEB_CLIENTS`] threads;
//! 2. the worker completes every scan (how long the queue took to drain, seen by polling
//!    each scan once it did, so a little more than the worker took);
//! 3. [`WEB_POLLS`] `GET /api/scans/<uuid>` over the submitted uuids, every one completed,
//!    from [`WEB_CLIENTS`] threads; then the server's peak RSS (VmHWM), and the store's size
//!    (Redis: keys and memory; SQLite: the file).
//!
//! Then, a part of its own (`COS_BENCH_ONLY=churn`), the churn ([`churn`]): [`CHURN_ROUNDS`]
//! rounds of [`CHURN_PER_ROUND`] submissions on one `redis-server`, each round on a new `web`
//! whose clock (`COS_NOW`) is a week and a day after the last round's, so everything the
//! rounds before wrote has ended (records after a day, `--record-ttl 86400`; outcomes after a
//! week) and the purger erases it at its start. Each round's submissions come from new
//! networks for new targets (loopback addresses where nothing listens). After each round,
//! every scan completed: Redis' key count, memory and RSS. They stay flat when nothing is left
//! behind.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::support::redis::RedisServer;
use super::support::service::{ScannerService, request};
use super::{Hammered, cpu_of, mib, millis, secs};

/// Client threads, each one request at a time, one connection per request.
pub const WEB_CLIENTS: usize = 50;
/// Submissions per store, each from its own network for its own target.
pub const WEB_SUBMISSIONS: usize = 5_000;
/// Polls per store, spread over the submitted uuids.
pub const WEB_POLLS: usize = 100_000;
/// How long the worker may take to complete every submitted scan.
const DRAIN_LIMIT: Duration = Duration::from_secs(600);
/// Churn rounds, and submissions in each.
pub const CHURN_ROUNDS: usize = 5;
pub const CHURN_PER_ROUND: usize = 20_000;
/// The first round's clock: ahead of Redis' own, so Redis expires nothing of a round by
/// itself while the bench runs; only the purge by web's clock does.
const CHURN_START: i64 = 4_102_444_800;
/// Closed loopback ports the churn's targets use (each on many loopback addresses).
const CHURN_PORTS: usize = 100;
/// A week and a day: what a round's clock is ahead of the last one's.
const CHURN_STEP_SECS: i64 = 8 * 86_400;
/// How long `redis-server` may take to answer PING.
/// The first port tried for the closed loopback targets (below the ephemeral range, so no
/// client socket of the bench holds one of them).
const FIRST_TARGET_PORT: u16 = 20_000;
/// Networks of the benchmarking range 198.18.0.0/15: /24s.
const BENCHMARK_NETWORKS: usize = 512;

/// `count` loopback ports from [`FIRST_TARGET_PORT`] up, below the ephemeral range, where a
/// connect is refused now.
fn closed_ports(count: usize) -> Vec<u16> {
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next().and_then(|p| p.parse().ok()))
        .unwrap_or(32_768u16);
    let mut ports = Vec::with_capacity(count);
    for port in FIRST_TARGET_PORT..ephemeral.max(FIRST_TARGET_PORT) {
        if ports.len() == count {
            break;
        }
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            ports.push(port);
        }
    }
    ports
}

/// The client address of submission `n`: a /24 of 198.18.0.0/15, then a /56 of
/// 2001:db8::/32, each used once.
fn client_of(n: usize) -> String {
    if n < BENCHMARK_NETWORKS {
        format!("198.{}.{}.1", 18 + n / 256, n % 256)
    } else {
        let m = n - BENCHMARK_NETWORKS;
        format!("2001:db8:{:x}:{:x}00::1", m >> 8, m & 0xff)
    }
}

/// What one client thread saw: its latencies, its failures, and its good answers by index.
type Client<T> = (Vec<Duration>, usize, Vec<(usize, T)>);

/// `count` calls of `one` from [`WEB_CLIENTS`] threads, timed each; the service's CPU time
/// over them. `one` answers what a good call returns, or why it failed.
fn drive<T: Send>(
    pid: u32,
    count: usize,
    one: impl Fn(usize) -> Result<T, String> + Sync,
) -> (Hammered, Vec<(usize, T)>, Option<String>) {
    let cpu_before = cpu_of(pid);
    let next = AtomicUsize::new(0);
    let first_failure = Mutex::new(None::<String>);
    let started = Instant::now();
    let per_client: Vec<Client<T>> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..WEB_CLIENTS)
            .map(|_| {
                s.spawn(|| {
                    let (mut latencies, mut failures, mut good) = (Vec::new(), 0, Vec::new());
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        let sent = Instant::now();
                        let answer = one(i);
                        latencies.push(sent.elapsed());
                        match answer {
                            Ok(value) => good.push((i, value)),
                            Err(why) => {
                                failures += 1;
                                first_failure.lock().unwrap().get_or_insert(why);
                            }
                        }
                    }
                    (latencies, failures, good)
                })
            })
            .collect();
        clients
            .into_iter()
            .map(|c| c.join().expect("a client thread"))
            .collect()
    });
    let wall = started.elapsed();
    let mut latencies = Vec::with_capacity(count);
    let mut failures = 0;
    let mut good = Vec::with_capacity(count);
    for (l, f, g) in per_client {
        latencies.extend(l);
        failures += f;
        good.extend(g);
    }
    latencies.sort();
    good.sort_by_key(|(i, _)| *i);
    let cpu = cpu_of(pid)
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    let hammered = Hammered {
        wall,
        latencies,
        failures,
        cpu,
    };
    (hammered, good, first_failure.into_inner().unwrap())
}

/// The flags of every `web` the bench starts: a free port, the proxy trusted, private targets
/// allowed, scans that give up at once.
fn web_args() -> Vec<&'static str> {
    vec![
        "web",
        "--listen",
        "127.0.0.1:0",
        "--trusted-proxy",
        "127.0.0.1/32",
        "--allow-private-targets",
        "--retries",
        "0",
        "--timeout",
        "1",
        "--update-source",
        "bundled",
        "--no-debug-ports",
    ]
}

/// Waits until every scan of `uuids` completed (the last submission first, as the queue is
/// served about oldest first, then each one); how long that took, or `None` (and a failure)
/// after [`DRAIN_LIMIT`].
fn drain(addr: SocketAddr, uuids: &[String], failures: &mut Vec<String>) -> Option<Duration> {
    let started = Instant::now();
    let completed = |uuid: &str| {
        let answer = request(addr, "GET", &format!("/api/scans/{uuid}"), &[], b"");
        answer.status == 200 && answer.text().contains(r#""status":"completed""#)
    };
    let mut pending = uuids.len();
    while pending > 0 {
        if completed(&uuids[pending - 1]) {
            pending -= 1;
            continue;
        }
        if started.elapsed() >= DRAIN_LIMIT {
            failures.push(format!(
                "the worker did not complete the scans in {}",
                secs(DRAIN_LIMIT)
            ));
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(started.elapsed())
}

/// Submits `count` scans, number `first` on: each from its own network ([`client_of`]) for a
/// target of its own on loopback where nothing listens; the uuids of those accepted.
fn submit_all(
    pid: u32,
    addr: SocketAddr,
    first: usize,
    count: usize,
    target_of: impl Fn(usize) -> String + Sync,
) -> (Hammered, Vec<String>, Option<String>) {
    let (submitted, uuids, failed) = drive(pid, count, |i| {
        let body = format!(r#"{{"target_url": "{}"}}"#, target_of(first + i));
        let client = client_of(first + i);
        let answer = request(
            addr,
            "POST",
            "/api/scans",
            &[
                ("Content-Type", "application/json"),
                ("X-Forwarded-For", &client),
            ],
            body.as_bytes(),
        );
        if answer.status != 202 {
            return Err(failure(&answer));
        }
        serde_json::from_slice::<serde_json::Value>(&answer.body)
            .ok()
            .and_then(|v| v["uuid"].as_str().map(String::from))
            .ok_or_else(|| failure(&answer))
    });
    (
        submitted,
        uuids.into_iter().map(|(_, u)| u).collect(),
        failed,
    )
}

/// What a store holds after a run.
#[derive(Default)]
struct StoreSize {
    /// Redis: `DBSIZE`, `used_memory`, and the server's RSS now.
    keys: Option<u64>,
    used_memory: Option<u64>,
    rss_kib: Option<u64>,
    /// SQLite: the file with its WAL.
    file_bytes: Option<u64>,
}

impl StoreSize {
    fn of_redis(redis: &RedisServer) -> StoreSize {
        let measured = redis::Client::open(redis.url(0).as_str())
            .and_then(|client| client.get_connection())
            .and_then(|mut con| {
                let keys: u64 = redis::cmd("DBSIZE").query(&mut con)?;
                let info: String = redis::cmd("INFO").arg("memory").query(&mut con)?;
                Ok((keys, info))
            });
        let Ok((keys, info)) = measured else {
            return StoreSize::default();
        };
        StoreSize {
            keys: Some(keys),
            used_memory: info
                .lines()
                .find_map(|l| l.strip_prefix("used_memory:"))
                .and_then(|v| v.trim().parse().ok()),
            rss_kib: rss_kib(redis.child.id()),
            file_bytes: None,
        }
    }

    fn of_sqlite(home: &Path) -> StoreSize {
        let bytes = ["web.sqlite", "web.sqlite-wal"]
            .iter()
            .filter_map(|name| std::fs::metadata(home.join(name)).ok())
            .map(|m| m.len())
            .sum();
        StoreSize {
            file_bytes: Some(bytes),
            ..StoreSize::default()
        }
    }

    fn text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(keys) = self.keys {
            parts.push(format!("{keys} keys"));
        }
        if let Some(used) = self.used_memory {
            parts.push(format!("used_memory {}", mib(used / 1024)));
        }
        if let Some(kib) = self.rss_kib {
            parts.push(format!("redis-server RSS {}", mib(kib)));
        }
        if let Some(bytes) = self.file_bytes {
            parts.push(format!("file {}", mib(bytes / 1024)));
        }
        parts.join(", ")
    }
}

/// The resident memory of a process now (VmRSS), in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One store's run.
struct StoreRun {
    store: &'static str,
    started_rss: Option<u64>,
    submitted: Hammered,
    submitted_rss: Option<u64>,
    drained: Option<Duration>,
    polled: Hammered,
    polled_rss: Option<u64>,
    /// Polls whose record was completed.
    completed_polls: usize,
    /// The mean size of a poll's answer body.
    answer_bytes: usize,
    failures: Vec<String>,
    /// Of the redis-server, when it was the store.
    redis_rss: Option<u64>,
    /// What the store holds after the polls.
    size: StoreSize,
}

fn failure(answer: &super::support::service::Answer) -> String {
    let mut text = answer.text();
    text.truncate(200);
    format!("{} {text}", answer.status)
}

/// Starts the server on `store` (`None`: SQLite in the state directory), submits, waits for
/// the scans, polls.
fn run_store(
    bin: &Path,
    home: &Path,
    store: &'static str,
    spec: Option<&str>,
    ports: &[u16],
    redis: Option<&RedisServer>,
) -> Result<StoreRun, String> {
    let _ = std::fs::remove_dir_all(home);
    std::fs::create_dir_all(home).map_err(|e| format!("{}: {e}", home.display()))?;
    let state = home.display().to_string();
    let mut args = web_args();
    args.extend(["--workers", "1"]);
    if let Some(spec) = spec {
        args.extend(["--store", spec]);
    }
    let service = ScannerService::start_with(bin, home, &args, &[("COS_STATE_DIR", &state)])
        .map_err(|refused| format!("did not start: {refused:?}"))?;
    let addr = service.addr;
    let started_rss = service.peak_rss_kib();
    let mut failures = Vec::new();

    let (submitted, uuids, failed) = submit_all(service.pid(), addr, 0, ports.len(), |i| {
        format!("127.0.0.1:{}", ports[i])
    });
    failures.extend(failed.map(|f| format!("a submission: {f}")));
    let submitted_rss = service.peak_rss_kib();
    if uuids.is_empty() {
        return Err(format!("no submission was accepted: {failures:?}"));
    }

    let drained = drain(addr, &uuids, &mut failures);

    let (polled, answers, failed) = drive(service.pid(), WEB_POLLS, |i| {
        let target = format!("/api/scans/{}", uuids[i % uuids.len()]);
        let answer = request(addr, "GET", &target, &[], b"");
        if answer.status != 200 {
            return Err(failure(&answer));
        }
        let completed = answer.text().contains(r#""status":"completed""#);
        Ok((completed, answer.body.len()))
    });
    failures.extend(failed.map(|f| format!("a poll: {f}")));
    let polled_rss = service.peak_rss_kib();
    let completed_polls = answers.iter().filter(|(_, (done, _))| *done).count();
    let answer_bytes =
        answers.iter().map(|(_, (_, bytes))| bytes).sum::<usize>() / answers.len().max(1);
    drop(service);
    let size = match redis {
        Some(redis) => StoreSize::of_redis(redis),
        None => StoreSize::of_sqlite(home),
    };
    Ok(StoreRun {
        store,
        started_rss,
        submitted,
        submitted_rss,
        drained,
        polled,
        polled_rss,
        completed_polls,
        answer_bytes,
        failures,
        redis_rss: redis.and_then(|r| super::peak_rss_kib(r.child.id())),
        size,
    })
}

/// Both stores, then the table.
pub fn web_bench(bin: &Path, work: &Path) {
    println!();
    if !bin.is_file() {
        println!(
            "public scan API: {} not found; build it with `cargo build --release --bins`",
            bin.display()
        );
        return;
    }
    let ports = closed_ports(WEB_SUBMISSIONS);
    if ports.len() < WEB_SUBMISSIONS {
        println!(
            "public scan API: only {} closed loopback ports from {FIRST_TARGET_PORT}; \
             submitting {} scans",
            ports.len(),
            ports.len()
        );
    }
    println!(
        "public scan API: {} web, 1 scan worker ({WEB_CLIENTS} client threads, one connection \
         per request; each submission from its own network via X-Forwarded-For, for its own \
         closed port on 127.0.0.1)",
        bin.display()
    );
    let mut runs = Vec::new();
    match run_store(bin, &work.join("web-sqlite"), "SQLite", None, &ports, None) {
        Ok(run) => runs.push(run),
        Err(e) => println!("  SQLite store: {e}"),
    }
    match RedisServer::start_in(&work.join("redis")) {
        Ok(redis) => {
            let spec = format!("redis://{}/0", redis.addr);
            match run_store(
                bin,
                &work.join("web-redis"),
                "Redis",
                Some(&spec),
                &ports,
                Some(&redis),
            ) {
                Ok(run) => runs.push(run),
                Err(e) => println!("  Redis store: {e}"),
            }
        }
        Err(e) => println!("  Redis store: {e}"),
    }
    print_runs(&runs);
}

/// The churn: see the module's documentation.
pub fn churn(bin: &Path, work: &Path) {
    println!();
    if !bin.is_file() {
        println!(
            "public scan API, churn: {} not found; build it with `cargo build --release --bins`",
            bin.display()
        );
        return;
    }
    let ports = closed_ports(CHURN_PORTS);
    if ports.is_empty() {
        println!("public scan API, churn: no closed loopback port from {FIRST_TARGET_PORT}");
        return;
    }
    let redis = match RedisServer::start_in(&work.join("redis-churn")) {
        Ok(redis) => redis,
        Err(e) => {
            println!("public scan API, churn: {e}");
            return;
        }
    };
    println!(
        "public scan API, churn: {CHURN_ROUNDS} rounds of {CHURN_PER_ROUND} submissions on one \
         redis-server, each on a new web (2 scan workers, --record-ttl 86400) a week and a day \
         later on its clock than the last; after each round, every scan completed:"
    );
    println!(
        "{:<6} {:>10} {:>8} {:>12} {:>8}  the store after the round",
        "round", "submitted", "purged", "submit/s", "drained"
    );
    let spec = format!("redis://{}/0", redis.addr);
    let target_of = |n: usize| {
        format!(
            "127.{}.{}.{}:{}",
            1 + n / 65_536,
            n / 256 % 256,
            n % 256,
            ports[n % ports.len()]
        )
    };
    for round in 0..CHURN_ROUNDS {
        let home = work.join(format!("web-churn-{round}"));
        let _ = std::fs::remove_dir_all(&home);
        if let Err(e) = std::fs::create_dir_all(&home) {
            println!("  {}: {e}", home.display());
            return;
        }
        let now = jiff::Timestamp::from_second(CHURN_START + round as i64 * CHURN_STEP_SECS)
            .map(|t| t.to_string())
            .unwrap_or_default();
        let state = home.display().to_string();
        let service = match ScannerService::start_with(
            bin,
            &home,
            &[
                web_args().as_slice(),
                &["--store", &spec, "--workers", "2", "--record-ttl", "86400"],
            ]
            .concat(),
            &[("COS_STATE_DIR", &state), ("COS_NOW", &now)],
        ) {
            Ok(service) => service,
            Err(refused) => {
                println!("  round {round}: web did not start: {refused:?}");
                return;
            }
        };
        // The purger's first pass, at the start (nothing to purge in the first round).
        let purged = if round == 0 {
            "-".to_string()
        } else {
            service
                .wait_for_line(Duration::from_secs(120), |l| l.contains(": purged "))
                .and_then(|l| l.split(": purged ").nth(1).map(String::from))
                .and_then(|l| l.split_whitespace().next().map(String::from))
                .unwrap_or_else(|| "none".into())
        };
        let mut failures = Vec::new();
        let (submitted, uuids, failed) = submit_all(
            service.pid(),
            service.addr,
            round * CHURN_PER_ROUND,
            CHURN_PER_ROUND,
            target_of,
        );
        failures.extend(failed.map(|f| format!("a submission: {f}")));
        let drained = drain(service.addr, &uuids, &mut failures);
        let size = StoreSize::of_redis(&redis);
        println!(
            "{:<6} {:>10} {:>8} {:>12.0} {:>8}  {}",
            round + 1,
            (round + 1) * CHURN_PER_ROUND,
            purged,
            submitted.latencies.len() as f64 / submitted.wall.as_secs_f64(),
            drained.map(secs).unwrap_or_else(|| "-".into()),
            size.text()
        );
        for f in &failures {
            println!("  first failure of {f}");
        }
        drop(service);
    }
}

fn print_runs(runs: &[StoreRun]) {
    let rss = |kib: Option<u64>| kib.map(mib).unwrap_or_else(|| "-".into());
    println!(
        "{:<7} {:<34} {:>10} {:>9} {:>9} {:>9} {:>12} {:>14} {:>7}",
        "store",
        "scenario",
        "requests/s",
        "p50",
        "p99",
        "max",
        "service CPU",
        "peak RSS after",
        "failed"
    );
    for run in runs {
        let rows = [
            (
                format!("{} POST /api/scans", run.submitted.latencies.len()),
                &run.submitted,
                run.submitted_rss,
            ),
            (
                format!("{} GET /api/scans/<uuid>", run.polled.latencies.len()),
                &run.polled,
                run.polled_rss,
            ),
        ];
        for (scenario, h, after) in rows {
            println!(
                "{:<7} {:<34} {:>10.0} {:>9} {:>9} {:>9} {:>12} {:>14} {:>7}",
                run.store,
                scenario,
                h.latencies.len() as f64 / h.wall.as_secs_f64(),
                millis(h.percentile(0.50)),
                millis(h.percentile(0.99)),
                millis(h.latencies.last().copied().unwrap_or_default()),
                h.cpu.map(secs).unwrap_or_else(|| "-".into()),
                rss(after),
                h.failures,
            );
        }
    }
    for run in runs {
        let mut line = format!(
            "{}: peak RSS {} at the start; every scan completed within {} of the last \
             submission (seen by polling each); {} of {} polls found the scan completed ({:.1} \
             KiB answers)",
            run.store,
            rss(run.started_rss),
            run.drained
                .map(secs)
                .unwrap_or_else(|| "not in time".into()),
            run.completed_polls,
            run.polled.latencies.len(),
            run.answer_bytes as f64 / 1024.0,
        );
        if run.redis_rss.is_some() {
            line.push_str(&format!("; redis-server peak RSS {}", rss(run.redis_rss)));
        }
        line.push_str(&format!("; the store after: {}", run.size.text()));
        println!("{line}");
        for f in &run.failures {
            println!("  first failure of {f}");
        }
    }
}
