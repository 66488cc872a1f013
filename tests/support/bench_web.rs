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
//!    from [`WEB_CLIENTS`] threads; then the server's peak RSS (VmHWM).

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
    let mut args = vec![
        "web",
        "--listen",
        "127.0.0.1:0",
        "--trusted-proxy",
        "127.0.0.1/32",
        "--workers",
        "1",
        "--allow-private-targets",
        "--retries",
        "0",
        "--timeout",
        "1",
        "--update-source",
        "bundled",
        "--no-debug-ports",
    ];
    if let Some(spec) = spec {
        args.extend(["--store", spec]);
    }
    let service = ScannerService::start_with(bin, home, &args, &[("COS_STATE_DIR", &state)])
        .map_err(|refused| format!("did not start: {refused:?}"))?;
    let addr = service.addr;
    let started_rss = service.peak_rss_kib();
    let mut failures = Vec::new();

    let (submitted, uuids, failed) = drive(service.pid(), ports.len(), |i| {
        let body = format!(r#"{{"target_url": "127.0.0.1:{}"}}"#, ports[i]);
        let client = client_of(i);
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
    failures.extend(failed.map(|f| format!("a submission: {f}")));
    let submitted_rss = service.peak_rss_kib();
    let uuids: Vec<String> = uuids.into_iter().map(|(_, u)| u).collect();
    if uuids.is_empty() {
        return Err(format!("no submission was accepted: {failures:?}"));
    }

    // Every scan completed: the last submission first (the queue is served about oldest
    // first), then each one, so the polls below all read completed records.
    let drain_started = Instant::now();
    let completed = |uuid: &str| {
        let answer = request(addr, "GET", &format!("/api/scans/{uuid}"), &[], b"");
        answer.status == 200 && answer.text().contains(r#""status":"completed""#)
    };
    let mut pending = uuids.len() - 1;
    let drained = loop {
        if completed(&uuids[pending]) {
            if pending == 0 {
                break Some(drain_started.elapsed());
            }
            pending -= 1;
            continue;
        }
        if drain_started.elapsed() >= DRAIN_LIMIT {
            failures.push(format!(
                "the worker did not complete the scans in {}",
                secs(DRAIN_LIMIT)
            ));
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };

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
        println!("{line}");
        for f in &run.failures {
            println!("  first failure of {f}");
        }
    }
}
