//! `make bench`: runs the release binary against fake instances on loopback and prints wall
//! time, CPU time (user + sys of the child) and peak memory (max RSS) per scenario.
//!
//! The binary is `$COS_BENCH_BIN` (default `target/release/check-storage-security`). CPU time
//! and max RSS come from `/usr/bin/time` when it is there; otherwise from polling the child's
//! `/proc/<pid>/stat` and `/proc/<pid>/status` (VmHWM); without either only wall time is shown.
//! `COS_BENCH_METER=time|proc|wall` forces one of the three.
//!
//! Besides time and memory, the fake instance counts what each healthy scan cost it: TCP
//! connections accepted, the most open at once, HTTP requests, TLS handshakes in full and
//! resumed, and the most demo sign-ins in flight at once. Its listener has the standard
//! backlog (`TcpListener::bind`: 128 on Linux), so concurrent connects never stall on a full
//! accept queue: a stall would be the fake's fault, not the scan's.
//!
//! Scenarios:
//! 1. one healthy host (8.1.0, bundled update data, default debug ports closed on loopback);
//! 2. the same, every HTTP answer 20 ms late (a distant or busy instance);
//! 3. one host with five firewalled debug ports (loopback listeners with a full accept queue,
//!    so SYNs are dropped) and the default 3 s debug-port timeout: it should cost ~3 s, not 15;
//! 4. 100 hosts at concurrency 32 in one run (`-H` with 100 targets, `--concurrency 32`);
//! 5. one hostile host: a valid status page, and a 1 GB body on every other path (made by the
//!    fake as it is sent, never held in memory);
//! 6. 32 such hosts at concurrency 32 in one run;
//! 7. 32 hosts at concurrency 32 whose JSON documents (capabilities, discovery, sign-in
//!    answers, `/config`) are lists of `{"a":0}` within what their probes keep: the shape
//!    that costs many times its size as a JSON tree;
//! 8. one host with a 16 MiB `--baseline` of `{"":0}` objects: refused before any traffic;
//! 9. the metrics exporter with 100 hosts at concurrency 32: how long the first scrape takes
//!    (it starts the first round and answers when it ends), and the latency of scrapes
//!    answered from the last round, with no round running and with rounds running beside
//!    them ([`EXPORTER_SCRAPES`] each, p50 / p99 / max).
//!
//! Then the time budget (`bench_budget.rs`): targets that never answer, drip or stall
//! mid-body, at budgets of 8, 12, 20 and 55 s, each run within its budget and half a second.
//!
//! Then the scan service (`check-storage-scanner serve --port 0`, `$COS_BENCH_SCANNER_BIN`,
//! default: beside the plugin) against one fake instance, its cache warmed by one scan: 32
//! client threads send 10,000 cached `GET /api/scan` (requests/s, latency percentiles, the
//! service's CPU time and peak memory after them), then 10,000 `POST /api/queue` for the same
//! host, each a record the service keeps. One connection per request, as the service answers.
//!
//! Last the public scan API (`check-storage-scanner web`), with the SQLite store and with a
//! `redis-server` of its own: submissions and polls per second at 50 clients, poll latency,
//! peak memory after 100,000 polls, the store's keys and memory, and 100,000 submissions of
//! churn over which they must stay flat (`bench_web.rs`); then `/healthz` latency of a fresh
//! client while the public API is attacked (`bench_attacks.rs`).
//!
//! `COS_BENCH_ONLY` picks parts, a comma-separated list of `plugin` (the scenario table and
//! the load table), `budget`, `exporter`, `service`, `web`, `churn` (the web's 100,000
//! submissions) and `attacks`; unset, everything runs.

#[path = "mod.rs"]
mod support;

mod bench_attacks;
mod bench_budget;
mod bench_web;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use support::service::{ScannerService, form_encode};
use support::{FakeInstance, InstanceConfig, RawResponse, SignIns, Traffic};

/// Runs of each single-host scenario (the median is shown).
const SINGLE_RUNS: usize = 5;
const MANY_HOSTS: usize = 100;
const MANY_CONCURRENCY: usize = 32;
/// `/proc/<pid>/stat` counts CPU time in clock ticks; 100 per second on Linux.
const CLOCK_TICKS: u64 = 100;
/// How long the fake may take to see every connection of a finished scan close.
const IDLE_LIMIT: Duration = Duration::from_secs(5);
/// What a hostile instance sends on every path but its status page.
const HOSTILE_BODY_BYTES: u64 = 1 << 30;
/// Hostile hosts scanned together in one run, all at once.
const HOSTILE_HOSTS: usize = 32;
/// The think time of a distant or busy instance: every HTTP answer waits this long, so the
/// scan's wall time shows how many requests it has in flight at once.
const ANSWER_DELAY: Duration = Duration::from_millis(20);

/// Client threads of the service scenarios.
const SERVICE_CLIENTS: usize = 32;
/// Requests of each service scenario.
const SERVICE_REQUESTS: usize = 10_000;
/// Scrapes measured per exporter scenario.
const EXPORTER_SCRAPES: usize = 200;

/// What one child run cost.
#[derive(Clone, Debug)]
struct Measured {
    wall: Duration,
    cpu: Option<Duration>,
    max_rss_kib: Option<u64>,
    code: Option<i32>,
    first_line: String,
}

/// How CPU time and memory are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Meter {
    GnuTime,
    Proc,
    WallOnly,
}

struct Bench {
    bin: PathBuf,
    work: PathBuf,
    meter: Meter,
    counter: AtomicUsize,
}

impl Bench {
    fn run(&self, args: &[String], env: &[(String, String)]) -> Measured {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let home = self.work.join(format!("home-{n}"));
        let _ = std::fs::create_dir_all(&home);
        let time_file = self.work.join(format!("time-{n}.txt"));
        let mut command = if self.meter == Meter::GnuTime {
            let mut c = Command::new("/usr/bin/time");
            c.arg("-f")
                .arg("%U %S %M")
                .arg("-o")
                .arg(&time_file)
                .arg(&self.bin);
            c
        } else {
            Command::new(&self.bin)
        };
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .current_dir(&home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let started = Instant::now();
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                eprintln!("bench: cannot run {}: {e}", self.bin.display());
                std::process::exit(1);
            }
        };
        // Read on a thread of its own, so a full pipe never stalls the child while it is polled.
        let reader = child.stdout.take().map(|mut out| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = std::io::Read::read_to_string(&mut out, &mut text);
                text
            })
        });
        let (mut cpu, mut max_rss_kib) = (None, None);
        if self.meter == Meter::Proc {
            (cpu, max_rss_kib) = poll_proc(child.id());
        }
        let status = child.wait().expect("wait for the child");
        let wall = started.elapsed();
        if self.meter == Meter::GnuTime {
            (cpu, max_rss_kib) = read_time_file(&time_file);
        }
        let stdout = reader.and_then(|r| r.join().ok()).unwrap_or_default();
        Measured {
            wall,
            cpu,
            max_rss_kib,
            code: status.code(),
            first_line: stdout.lines().next().unwrap_or("").to_string(),
        }
    }
}

/// GNU time's `-o` file: maybe a "Command exited with non-zero status" line, then `U S M`.
fn read_time_file(path: &Path) -> (Option<Duration>, Option<u64>) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return (None, None);
    };
    let Some(last) = text.lines().rev().find(|l| !l.trim().is_empty()) else {
        return (None, None);
    };
    let fields: Vec<&str> = last.split_whitespace().collect();
    if fields.len() != 3 {
        return (None, None);
    }
    let user: Option<f64> = fields[0].parse().ok();
    let sys: Option<f64> = fields[1].parse().ok();
    let cpu = user
        .zip(sys)
        .map(|(u, s)| Duration::from_secs_f64((u + s).max(0.0)));
    (cpu, fields[2].parse().ok())
}

/// Polls a running child until it is a zombie: the highest VmHWM seen, and its CPU time read
/// from `stat` while the zombie still holds it (before `wait` reaps it).
fn poll_proc(pid: u32) -> (Option<Duration>, Option<u64>) {
    let mut hwm: Option<u64> = None;
    let mut cpu = None;
    while let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // Fields after the command name, which is in parentheses and may hold spaces.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
        // rest[0] is the state; utime and stime are fields 14 and 15 of stat (1-based).
        if let (Some(u), Some(s)) = (ticks(11), ticks(12)) {
            cpu = Some(Duration::from_millis((u + s) * 1000 / CLOCK_TICKS));
        }
        if fields.first() == Some(&"Z") {
            break;
        }
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            && let Some(kib) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        {
            hwm = Some(hwm.map_or(kib, |h: u64| h.max(kib)));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    (cpu, hwm)
}

/// `/usr/bin/time` when it works, else `/proc` polling, else wall time only;
/// `COS_BENCH_METER=time|proc|wall` forces one.
fn pick_meter() -> Meter {
    match std::env::var("COS_BENCH_METER").as_deref() {
        Ok("time") => return Meter::GnuTime,
        Ok("proc") => return Meter::Proc,
        Ok("wall") => return Meter::WallOnly,
        _ => {}
    }
    let gnu_time = Command::new("/usr/bin/time")
        .args(["-f", "%U %S %M", "-o", "/dev/null", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if gnu_time {
        Meter::GnuTime
    } else if Path::new("/proc/self/status").exists() {
        Meter::Proc
    } else {
        Meter::WallOnly
    }
}

fn scan_args(fake: &FakeInstance) -> Vec<String> {
    vec![
        "-H".into(),
        fake.host_port(),
        "--ca-file".into(),
        fake.ca_file().display().to_string(),
        "--update-source".into(),
        "bundled".into(),
        "--backoff-factor".into(),
        "0".into(),
    ]
}

/// One row of the table.
struct Row {
    scenario: String,
    runs: String,
    wall: String,
    cpu: String,
    rss: String,
    result: String,
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn median(mut values: Vec<Duration>) -> Option<Duration> {
    values.sort();
    values.get(values.len() / 2).copied()
}

fn state_of(m: &Measured) -> String {
    let state = m.first_line.split(':').next().unwrap_or("?");
    match m.code {
        Some(code) => format!("{state} (exit {code})"),
        None => format!("{state} (killed)"),
    }
}

fn single_row(scenario: &str, runs: &[Measured]) -> Row {
    let wall = median(runs.iter().map(|m| m.wall).collect());
    let cpu = median(runs.iter().filter_map(|m| m.cpu).collect());
    let rss = runs.iter().filter_map(|m| m.max_rss_kib).max();
    let mut results: Vec<String> = runs.iter().map(state_of).collect();
    results.dedup();
    Row {
        scenario: scenario.to_string(),
        runs: runs.len().to_string(),
        wall: wall
            .map(|w| secs(w) + " median")
            .unwrap_or_else(|| "-".into()),
        cpu: cpu
            .map(|c| secs(c) + " median")
            .unwrap_or_else(|| "-".into()),
        rss: rss.map(mib).unwrap_or_else(|| "-".into()),
        result: results.join(", "),
    }
}

/// What one scan cost the instance, counted by the fake.
#[derive(Clone, Copy, Debug)]
struct Load {
    traffic: Traffic,
    sign_ins: SignIns,
    /// Every connection closed in time, so the counts are final.
    settled: bool,
}

/// Runs one scan and reads the fake's counters once every connection of it has closed.
fn run_counted(bench: &Bench, fake: &FakeInstance, args: &[String]) -> (Measured, Load) {
    fake.wait_idle(IDLE_LIMIT);
    fake.reset_traffic();
    let measured = bench.run(args, &[]);
    let settled = fake.wait_idle(IDLE_LIMIT);
    let load = Load {
        traffic: fake.traffic(),
        sign_ins: fake.sign_ins(),
        settled,
    };
    (measured, load)
}

/// A healthy host, measured and counted: `config` adds to the healthy 8.1.0 instance.
fn counted(bench: &Bench, scenario: &str, config: InstanceConfig) -> (Row, (String, Vec<Load>)) {
    let fake = FakeInstance::start(config.version("8.1.0").demo_users(false));
    let args = scan_args(&fake);
    // One unmeasured run warms the page cache.
    bench.run(&args, &[]);
    let (runs, loads): (Vec<Measured>, Vec<Load>) = (0..SINGLE_RUNS)
        .map(|_| run_counted(bench, &fake, &args))
        .unzip();
    (single_row(scenario, &runs), (scenario.to_string(), loads))
}

/// `4` when every run agrees, `3-5` when they differ.
fn spread(values: impl Iterator<Item = usize>) -> String {
    let values: Vec<usize> = values.collect();
    let (Some(low), Some(high)) = (values.iter().min(), values.iter().max()) else {
        return "-".into();
    };
    if low == high {
        low.to_string()
    } else {
        format!("{low}-{high}")
    }
}

/// The load table: one line per counter, one column per counted scenario (the spread over
/// its runs).
fn print_load(columns: &[(String, Vec<Load>)]) {
    type Count = fn(&Load) -> usize;
    let counters: [(&str, Count); 8] = [
        ("TCP connections opened", |l| l.traffic.connections),
        ("connections open at once (peak)", |l| l.traffic.peak_open),
        ("HTTP requests", |l| l.traffic.requests),
        ("TLS handshakes, full", |l| l.traffic.full_handshakes),
        ("TLS handshakes, resumed", |l| l.traffic.resumed_handshakes),
        ("TLS handshakes not completed (legacy ClientHello)", |l| {
            l.traffic.failed_handshakes
        }),
        ("demo sign-ins", |l| l.sign_ins.count),
        ("demo sign-ins in flight at once (peak)", |l| {
            l.sign_ins.peak_in_flight
        }),
    ];
    let width = counters
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    println!();
    println!("load on the instance per scan, counted by the fake:");
    for (n, (scenario, loads)) in columns.iter().enumerate() {
        println!("  [{}] {scenario} ({} runs)", n + 1, loads.len());
    }
    let heads: Vec<String> = (1..=columns.len()).map(|n| format!("[{n}]")).collect();
    println!("  {:<width$}  {}", "", heads.join("  "));
    for (name, count) in counters {
        let cells: Vec<String> = columns
            .iter()
            .zip(&heads)
            .map(|((_, loads), head)| {
                let cell = spread(loads.iter().map(count));
                format!("{cell:>w$}", w = head.len())
            })
            .collect();
        println!("  {name:<width$}  {}", cells.join("  "));
    }
    if columns.iter().flat_map(|(_, l)| l).any(|l| !l.settled) {
        println!(
            "  (some connection was still open {IDLE_LIMIT:?} after its scan: counts may be low)"
        );
    }
}

fn firewalled(bench: &Bench) -> Row {
    // Filled at once: each fill ends with two short connect timeouts.
    let filled: Vec<_> = (0..5)
        .map(|_| std::thread::spawn(support::filtered_listener))
        .collect();
    let mut listeners = Vec::new();
    for handle in filled {
        match handle.join().ok().flatten() {
            Some(l) => listeners.push(l),
            None => {
                return Row {
                    scenario: "five firewalled debug ports (3 s timeout)".into(),
                    runs: "0".into(),
                    wall: "-".into(),
                    cpu: "-".into(),
                    rss: "-".into(),
                    result: "skipped: the kernel never dropped a SYN on a full accept queue".into(),
                };
            }
        }
    }
    let ports: Vec<String> = listeners
        .iter()
        .map(|(l, _)| {
            l.local_addr()
                .map(|a| a.port().to_string())
                .unwrap_or_default()
        })
        .collect();
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0").demo_users(false));
    let env = [
        ("COS_SCANNER_DEBUG_PORTS".to_string(), ports.join(",")),
        (
            "COS_SCANNER_DEBUG_PORT_TIMEOUT".to_string(),
            "3".to_string(),
        ),
    ];
    let args = scan_args(&fake);
    let runs: Vec<Measured> = (0..2).map(|_| bench.run(&args, &env)).collect();
    let mut row = single_row("five firewalled debug ports (3 s timeout)", &runs);
    row.result += "; sequential connects would take 15 s";
    row
}

fn many_hosts(bench: &Bench) -> Row {
    let fakes: Vec<FakeInstance> = (0..MANY_HOSTS)
        .map(|_| FakeInstance::start(InstanceConfig::default().version("8.1.0").demo_users(false)))
        .collect();
    let hosts: Vec<String> = fakes.iter().map(FakeInstance::host_port).collect();
    let mut args = scan_args(&fakes[0]);
    args[1] = hosts.join(",");
    args.extend(["--concurrency".to_string(), MANY_CONCURRENCY.to_string()]);
    let run = bench.run(&args, &[]);
    Row {
        scenario: format!("{MANY_HOSTS} hosts, concurrency {MANY_CONCURRENCY} (one process)"),
        runs: "1".into(),
        wall: secs(run.wall),
        cpu: run.cpu.map(secs).unwrap_or_else(|| "-".into()),
        rss: run.max_rss_kib.map(mib).unwrap_or_else(|| "-".into()),
        result: format!(
            "{} (exit {})",
            run.first_line,
            run.code
                .map(|c| c.to_string())
                .unwrap_or_else(|| "killed".into())
        ),
    }
}

/// A hostile instance: the healthy 8.1.0 one, with a 1 GB body on every path but the status page.
fn hostile() -> FakeInstance {
    FakeInstance::start(
        InstanceConfig::default()
            .version("8.1.0")
            .demo_users(false)
            .huge_body(HOSTILE_BODY_BYTES),
    )
}

fn one_hostile_host(bench: &Bench) -> Row {
    let fake = hostile();
    let args = scan_args(&fake);
    let runs: Vec<Measured> = (0..3).map(|_| bench.run(&args, &[])).collect();
    single_row(
        "one hostile host (1 GB on every path but /status.php)",
        &runs,
    )
}

fn many_hostile_hosts(bench: &Bench) -> Row {
    let fakes: Vec<FakeInstance> = (0..HOSTILE_HOSTS).map(|_| hostile()).collect();
    let hosts: Vec<String> = fakes.iter().map(FakeInstance::host_port).collect();
    let mut args = scan_args(&fakes[0]);
    args[1] = hosts.join(",");
    args.extend(["--concurrency".to_string(), HOSTILE_HOSTS.to_string()]);
    let run = bench.run(&args, &[]);
    Row {
        scenario: format!(
            "{HOSTILE_HOSTS} hostile hosts, concurrency {HOSTILE_HOSTS} (one process)"
        ),
        runs: "1".into(),
        wall: secs(run.wall),
        cpu: run.cpu.map(secs).unwrap_or_else(|| "-".into()),
        rss: run.max_rss_kib.map(mib).unwrap_or_else(|| "-".into()),
        result: format!(
            "{} (exit {})",
            run.first_line,
            run.code
                .map(|c| c.to_string())
                .unwrap_or_else(|| "killed".into())
        ),
    }
}

/// One healthy host with a 16 MiB `--baseline` of `{"":0}` objects (the issue's hostile
/// baseline): refused in one line, in little memory, before any traffic.
fn hostile_baseline(bench: &Bench) -> Row {
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let path = bench.work.join("hostile-baseline.json");
    let mut text = String::with_capacity(16 * 1024 * 1024);
    text.push('[');
    while text.len() + 16 < 16 * 1024 * 1024 {
        text.push_str(r#"{"":0},"#);
    }
    text.push_str(r#"{"":0}]"#);
    std::fs::write(&path, text).expect("write the hostile baseline");
    let mut args = scan_args(&fake);
    args.extend(["--baseline".to_string(), path.display().to_string()]);
    let runs: Vec<Measured> = (0..3).map(|_| bench.run(&args, &[])).collect();
    single_row("one host, a 16 MiB baseline of {\"\":0} objects", &runs)
}

/// A JSON answer of `{"a":0}` objects filling about `bytes`, inside `wrap` (`{}` marks where).
fn json_of_many_objects(wrap: &str, bytes: usize) -> RawResponse {
    let list = format!("[{}]", vec![r#"{"a":0}"#; bytes / 8].join(","));
    let mut answer = RawResponse::new(200, "OK");
    answer.add_header("Content-Type", "application/json");
    answer.set_body(wrap.replace("{}", &list));
    answer
}

fn many_hostile_json_hosts(bench: &Bench) -> Row {
    let discovery = r#"{"issuer": "https://localhost", "authorization_endpoint":
        "https://localhost/signin/v1/identifier/_/authorize", "x": {}}"#;
    let fakes: Vec<FakeInstance> = (0..HOSTILE_HOSTS)
        .map(|_| {
            FakeInstance::start(
                InstanceConfig::default()
                    .version("8.1.0")
                    .demo_users(false)
                    .route_response(
                        "GET",
                        "/ocs/v1.php/cloud/capabilities*",
                        json_of_many_objects(
                            r#"{"ocs":{"data":{"capabilities":{"graph":{}}}}}"#,
                            60 * 1024,
                        ),
                    )
                    .route_response(
                        "GET",
                        "/.well-known/openid-configuration",
                        json_of_many_objects(discovery, 60 * 1024),
                    )
                    .route_response("POST", "/signin/*", json_of_many_objects("{}", 15 * 1024))
                    .route_response(
                        "GET",
                        "/config",
                        json_of_many_objects(r#"{"x":{}}"#, 120 * 1024),
                    ),
            )
        })
        .collect();
    let hosts: Vec<String> = fakes.iter().map(FakeInstance::host_port).collect();
    let mut args = scan_args(&fakes[0]);
    args[1] = hosts.join(",");
    args.extend(["--concurrency".to_string(), HOSTILE_HOSTS.to_string()]);
    let run = bench.run(&args, &[]);
    Row {
        scenario: format!(
            "{HOSTILE_HOSTS} hosts of hostile JSON documents, concurrency {HOSTILE_HOSTS}"
        ),
        runs: "1".into(),
        wall: secs(run.wall),
        cpu: run.cpu.map(secs).unwrap_or_else(|| "-".into()),
        rss: run.max_rss_kib.map(mib).unwrap_or_else(|| "-".into()),
        result: format!(
            "{} (exit {})",
            run.first_line,
            run.code
                .map(|c| c.to_string())
                .unwrap_or_else(|| "killed".into())
        ),
    }
}

/// p50, p99 and max of scrape latencies, in milliseconds.
fn latencies(mut took: Vec<Duration>) -> String {
    took.sort();
    let at = |q: f64| {
        let i = ((took.len() as f64 * q).ceil() as usize).clamp(1, took.len()) - 1;
        took[i].as_secs_f64() * 1000.0
    };
    format!(
        "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        at(0.50),
        at(0.99),
        at(1.0)
    )
}

/// The peak resident memory of a running process (VmHWM), if `/proc` tells.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The exporter with 100 hosts: the first scrape, then scrapes from the last round with no
/// round running (interval 3600 s) and beside running rounds (interval 1 s, a scrape every
/// 10 ms), each process on its own fakes' loopback ports.
fn exporter_scrapes(bench: &Bench) {
    use support::exporter::ExporterProcess;
    let fakes: Vec<FakeInstance> = (0..MANY_HOSTS)
        .map(|_| FakeInstance::start(InstanceConfig::default().version("8.1.0").demo_users(false)))
        .collect();
    let hosts: Vec<String> = fakes.iter().map(FakeInstance::host_port).collect();
    let start = |interval: &str, n: usize| {
        let mut args = scan_args(&fakes[0]);
        args[1] = hosts.join(",");
        args.extend(
            [
                "--concurrency",
                &MANY_CONCURRENCY.to_string(),
                "--prometheus-listen-port",
                "0",
                "--scrape-interval",
                interval,
            ]
            .map(String::from),
        );
        let home = bench.work.join(format!("exporter-{n}"));
        let _ = std::fs::create_dir_all(&home);
        ExporterProcess::start(&bench.bin, &args, &[], &home)
    };
    println!();
    println!(
        "metrics exporter, {MANY_HOSTS} hosts, concurrency {MANY_CONCURRENCY} (one process each):"
    );
    let idle = start("3600", 1);
    let first = idle.get("/metrics");
    let succeeded = hosts
        .iter()
        .filter(|h| {
            first.sample(&format!("storage_security_scrape_success{{host=\"{h}\"}}")) == Some(1.0)
        })
        .count();
    println!(
        "  first scrape (starts the first round, answers when it ends): {}; {succeeded} of \
         {MANY_HOSTS} hosts scrape_success 1; {:.1} KiB of text",
        secs(first.took),
        first.body.len() as f64 / 1024.0
    );
    let took: Vec<Duration> = (0..EXPORTER_SCRAPES)
        .map(|_| idle.get("/metrics").took)
        .collect();
    println!(
        "  {EXPORTER_SCRAPES} scrapes from the last round, no round running: {}",
        latencies(took)
    );
    if let Some(kib) = peak_rss_kib(idle.pid()) {
        println!("  peak RSS of the exporter after them: {}", mib(kib));
    }
    drop(idle);
    let busy = start("1", 2);
    busy.get("/metrics");
    let took: Vec<Duration> = (0..EXPORTER_SCRAPES)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(10));
            busy.get("/metrics").took
        })
        .collect();
    let rounds = busy
        .get("/metrics")
        .sample("storage_security_exporter_rounds_total")
        .unwrap_or(0.0);
    println!(
        "  {EXPORTER_SCRAPES} scrapes 10 ms apart, a round of every host each second beside \
         them ({rounds} rounds): {}",
        latencies(took)
    );
    if let Some(kib) = peak_rss_kib(busy.pid()) {
        println!("  peak RSS of the exporter after them: {}", mib(kib));
    }
}

fn print_table(rows: &[Row]) {
    let header = Row {
        scenario: "scenario".into(),
        runs: "runs".into(),
        wall: "wall".into(),
        cpu: "cpu (user+sys)".into(),
        rss: "max RSS".into(),
        result: "result".into(),
    };
    let all: Vec<&Row> = std::iter::once(&header).chain(rows.iter()).collect();
    let width = |f: &dyn Fn(&Row) -> usize| all.iter().map(|r| f(r)).max().unwrap_or(0);
    let w = [
        width(&|r| r.scenario.len()),
        width(&|r| r.runs.len()),
        width(&|r| r.wall.len()),
        width(&|r| r.cpu.len()),
        width(&|r| r.rss.len()),
    ];
    for (i, r) in all.iter().enumerate() {
        println!(
            "{:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {}",
            r.scenario,
            r.runs,
            r.wall,
            r.cpu,
            r.rss,
            r.result,
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4],
        );
        if i == 0 {
            println!("{}", "-".repeat(w.iter().sum::<usize>() + 12 + 20));
        }
    }
}

/// The parts `COS_BENCH_ONLY` picks (every part when it is unset or empty).
fn selected(part: &str) -> bool {
    match std::env::var("COS_BENCH_ONLY") {
        Ok(only) if !only.trim().is_empty() => only.split(',').any(|p| p.trim() == part),
        _ => true,
    }
}

fn main() {
    // The plugin, the scan service and the web API scan the fake instances on the real clock.
    support::certs::date_around_today();
    const PARTS: [&str; 7] = [
        "plugin", "budget", "exporter", "service", "web", "churn", "attacks",
    ];
    if let Ok(only) = std::env::var("COS_BENCH_ONLY")
        && let Some(unknown) = only
            .split(',')
            .map(str::trim)
            .find(|p| !p.is_empty() && !PARTS.contains(p))
    {
        eprintln!(
            "bench: COS_BENCH_ONLY names `{unknown}`; the parts are {}",
            PARTS.join(", ")
        );
        std::process::exit(2);
    }
    let bin = PathBuf::from(
        std::env::var("COS_BENCH_BIN")
            .unwrap_or_else(|_| "target/release/check-storage-security".to_string()),
    );
    let needs_plugin = selected("plugin") || selected("budget") || selected("exporter");
    if needs_plugin && !bin.is_file() {
        eprintln!(
            "bench: {} not found; build it with `cargo build --release` or set COS_BENCH_BIN",
            bin.display()
        );
        std::process::exit(1);
    }
    let bin = std::fs::canonicalize(&bin).unwrap_or(bin);
    let work = std::env::temp_dir().join(format!("cos-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("create the bench work folder");
    let meter = pick_meter();
    let bench = Bench {
        bin,
        work: work.clone(),
        meter,
        counter: AtomicUsize::new(0),
    };
    println!("binary: {}", bench.bin.display());
    println!(
        "measured with: {}",
        match meter {
            Meter::GnuTime => "/usr/bin/time (user+sys CPU, max RSS)",
            Meter::Proc => "/proc polling (CPU from stat, max RSS from VmHWM)",
            Meter::WallOnly => "wall clock only (no /usr/bin/time, no /proc)",
        }
    );
    if selected("plugin") {
        plugin_scenarios(&bench);
    }
    if selected("budget") {
        bench_budget::budget_bench(&bench);
    }
    if selected("exporter") {
        exporter_scrapes(&bench);
    }
    let scanner = scanner_bin(&bench.bin);
    let scanner = std::fs::canonicalize(&scanner).unwrap_or(scanner);
    if selected("service") {
        service_bench(&scanner, &work);
    }
    if selected("web") {
        bench_web::web_bench(&scanner, &work);
    }
    if selected("churn") {
        bench_web::churn(&scanner, &work);
    }
    if selected("attacks") {
        bench_attacks::attacks_bench(&scanner, &work);
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// The scenario table and the load table.
fn plugin_scenarios(bench: &Bench) {
    println!();
    let (healthy, healthy_load) = counted(
        bench,
        "one healthy host (8.1.0, bundled)",
        InstanceConfig::default(),
    );
    let (distant, distant_load) = counted(
        bench,
        &format!(
            "one healthy host, every answer {} ms late",
            ANSWER_DELAY.as_millis()
        ),
        InstanceConfig::default().delay(ANSWER_DELAY),
    );
    let rows = vec![
        healthy,
        distant,
        firewalled(bench),
        many_hosts(bench),
        one_hostile_host(bench),
        many_hostile_hosts(bench),
        many_hostile_json_hosts(bench),
        hostile_baseline(bench),
    ];
    print_table(&rows);
    print_load(&[healthy_load, distant_load]);
}

/// `$COS_BENCH_SCANNER_BIN`, else `check-storage-scanner` beside the plugin.
fn scanner_bin(plugin: &Path) -> PathBuf {
    std::env::var_os("COS_BENCH_SCANNER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| plugin.with_file_name("check-storage-scanner"))
}

/// CPU time (user + sys) a running process has used so far.
fn cpu_of(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
    Some(Duration::from_millis(
        (ticks(11)? + ticks(12)?) * 1000 / CLOCK_TICKS,
    ))
}

/// What one service scenario measured.
struct Hammered {
    wall: Duration,
    /// Sorted.
    latencies: Vec<Duration>,
    failures: usize,
    cpu: Option<Duration>,
}

impl Hammered {
    fn percentile(&self, p: f64) -> Duration {
        let i = ((self.latencies.len() as f64 * p).ceil() as usize).saturating_sub(1);
        self.latencies.get(i).copied().unwrap_or_default()
    }
}

/// `SERVICE_REQUESTS` requests from `SERVICE_CLIENTS` threads at once; `expected` is the
/// status of a good answer.
fn hammer(service: &ScannerService, method: &str, target: &str, expected: u16) -> Hammered {
    let cpu_before = cpu_of(service.pid());
    let next = std::sync::Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let clients: Vec<_> = (0..SERVICE_CLIENTS)
        .map(|_| {
            let (next, addr) = (next.clone(), service.addr);
            let (method, target) = (method.to_string(), target.to_string());
            std::thread::spawn(move || {
                let mut latencies = Vec::new();
                let mut failures = 0;
                while next.fetch_add(1, Ordering::Relaxed) < SERVICE_REQUESTS {
                    let sent = Instant::now();
                    let answer = support::service::request(addr, &method, &target, &[], b"");
                    latencies.push(sent.elapsed());
                    if answer.status != expected {
                        failures += 1;
                    }
                }
                (latencies, failures)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(SERVICE_REQUESTS);
    let mut failures = 0;
    for client in clients {
        let (l, f) = client.join().expect("a client thread");
        latencies.extend(l);
        failures += f;
    }
    let wall = started.elapsed();
    latencies.sort();
    let cpu = cpu_of(service.pid())
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    Hammered {
        wall,
        latencies,
        failures,
        cpu,
    }
}

fn millis(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// The scan service: cached `GET /api/scan` and `POST /api/queue` records, 32 clients.
fn service_bench(bin: &Path, work: &Path) {
    println!();
    if !bin.is_file() {
        println!(
            "scan service: {} not found; build it with `cargo build --release --bins`",
            bin.display()
        );
        return;
    }
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0").demo_users(false));
    let home = work.join("service");
    let _ = std::fs::create_dir_all(&home);
    let ca = fake.ca_file().display().to_string();
    let args = [
        "--ca-file",
        ca.as_str(),
        "--update-source",
        "bundled",
        "--backoff-factor",
        "0",
    ];
    let service = match ScannerService::start(bin, &home, &args, &[]) {
        Ok(s) => s,
        Err(refused) => {
            println!("scan service: did not start: {refused:?}");
            return;
        }
    };
    let host = form_encode(&fake.host_port());
    let scan = format!("/api/scan?url={host}");
    let warm = service.get(&scan, &[]);
    let warmed_rss = service.peak_rss_kib();
    let scans_before = fake.request_count();
    println!(
        "scan service: {} ({SERVICE_CLIENTS} client threads, one connection per request; the \
         warm-up scan answered {}, peak RSS after it {})",
        bin.display(),
        warm.status,
        warmed_rss.map(mib).unwrap_or_else(|| "-".into())
    );
    let cached = hammer(&service, "GET", &scan, 200);
    let cached_rss = service.peak_rss_kib();
    let queue = format!("/api/queue?url={host}");
    let records = hammer(&service, "POST", &queue, 202);
    let records_rss = service.peak_rss_kib();
    let rows = [
        (
            format!("{SERVICE_REQUESTS} cached GET /api/scan"),
            cached,
            cached_rss,
        ),
        (
            format!("{SERVICE_REQUESTS} POST /api/queue (a record each)"),
            records,
            records_rss,
        ),
    ];
    println!(
        "{:<40} {:>10} {:>9} {:>9} {:>9} {:>12} {:>14} {:>8}",
        "scenario", "requests/s", "p50", "p99", "max", "service CPU", "peak RSS after", "failed"
    );
    for (scenario, h, rss) in &rows {
        println!(
            "{:<40} {:>10.0} {:>9} {:>9} {:>9} {:>12} {:>14} {:>8}",
            scenario,
            SERVICE_REQUESTS as f64 / h.wall.as_secs_f64(),
            millis(h.percentile(0.50)),
            millis(h.percentile(0.99)),
            millis(h.latencies.last().copied().unwrap_or_default()),
            h.cpu.map(secs).unwrap_or_else(|| "-".into()),
            rss.map(mib).unwrap_or_else(|| "-".into()),
            h.failures,
        );
    }
    println!(
        "the instance saw {} request(s) during them: every answer came from the cache",
        fake.request_count() - scans_before
    );
}
