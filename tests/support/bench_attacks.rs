//! `make bench`, the public scan API under attack (`COS_BENCH_ONLY=attacks`): how long a fresh
//! client from an address of its own (127.0.0.3) waits for `/healthz` while one attack runs.
//! Each attack gets a `web` of its own and [`ATTACK_TIME`] of probes, one every
//! [`PROBE_EVERY`], each on a new connection; the table shows their median, p99 and maximum
//! latency and how many were not answered 200. What the server promises is an answer within
//! a second during each of them.
//!
//! - slow clients: [`DRIPPERS`] connections from 127.0.0.2 that send a request head a byte at
//!   a time and never end it, and [`IDLE`] more that never say a word;
//! - MCP waits: [`MCP_CALLERS`] callers, each from a /24 of its own (forwarded by a trusted
//!   proxy on 127.0.0.1), whose `scan_instance` names a loopback target that accepts and never
//!   answers, so each scan lasts the whole time budget and a call waiting for it would hold an
//!   HTTP worker as long;
//! - a name flood: [`FLOODERS`] clients of one address (127.0.0.2) submit names that never
//!   resolve (`.invalid`) as fast as they are answered, the whole time: the address's minute is
//!   counted before any lookup, so after its first ten they are 429 at once (names public DNS
//!   cannot know are refused without asking a resolver at all, so nothing leaves loopback).

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::support::service::{ScannerService, request, try_connect_from as connect_from};

/// The servers' clock: the bundled release data's, as the tests' `web` has it.
const NOW: &str = "2026-11-22T03:00:00Z";

const ATTACK_TIME: Duration = Duration::from_secs(10);
const PROBE_EVERY: Duration = Duration::from_millis(100);
const DRIPPERS: usize = 100;
const IDLE: usize = 200;
const MCP_CALLERS: usize = 40;
const FLOODERS: usize = 40;

/// What the fresh client saw: its latencies and how many were not answered 200.
type Seen = (Vec<Duration>, usize);

/// An attack run against a `web` while the fresh client probes it.
type Attack = fn(&ScannerService) -> Seen;

/// `/healthz` from 127.0.0.3 every [`PROBE_EVERY`] for [`ATTACK_TIME`]: latencies and the
/// number not answered 200 (a refusal, a reset, or nothing within 5 s).
fn probe_health(addr: SocketAddr) -> Seen {
    use std::io::Read;
    let mut took = Vec::new();
    let mut failed = 0;
    let until = Instant::now() + ATTACK_TIME;
    while Instant::now() < until {
        let sent = Instant::now();
        let ok = connect_from("127.0.0.3", addr).is_ok_and(|mut c| {
            let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = write!(
                c,
                "GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
            );
            let mut answer = String::new();
            let _ = c.read_to_string(&mut answer);
            answer.starts_with("HTTP/1.1 200 ")
        });
        took.push(sent.elapsed());
        failed += usize::from(!ok);
        std::thread::sleep(PROBE_EVERY.saturating_sub(sent.elapsed()));
    }
    (took, failed)
}

fn start_web(bin: &Path, dir: &Path) -> Result<ScannerService, String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let state = dir.display().to_string();
    ScannerService::start_with(
        bin,
        dir,
        &[
            "web",
            "--listen",
            "127.0.0.1:0",
            "--update-source",
            "bundled",
            "--no-debug-ports",
            "--retries",
            "0",
            "--allow-private-targets",
            "--trusted-proxy",
            "127.0.0.1/32",
        ],
        &[("COS_STATE_DIR", &state), ("COS_NOW", NOW)],
    )
    .map_err(|refused| format!("web did not start: {refused:?}"))
}

fn row(attack: &str, (mut took, failed): Seen) {
    took.sort();
    let at = |q: f64| {
        took.get(((took.len() as f64 - 1.0) * q).round() as usize)
            .map_or("-".to_string(), |d| {
                format!("{:.1} ms", d.as_secs_f64() * 1000.0)
            })
    };
    println!(
        "| {attack} | {} | {} | {} | {} of {} |",
        at(0.5),
        at(0.99),
        at(1.0),
        failed,
        took.len()
    );
}

/// Slow clients: see the module's documentation.
fn slow_clients(web: &ScannerService) -> Seen {
    let stop = Arc::new(AtomicBool::new(false));
    let addr = web.addr;
    let attack = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut drippers: Vec<TcpStream> = (0..DRIPPERS)
                .filter_map(|_| connect_from("127.0.0.2", addr).ok())
                .collect();
            for c in &mut drippers {
                let _ = c.write_all(b"POST /api/scans HTTP/1.1\r\nX-Drip: ");
            }
            let _idle: Vec<TcpStream> = (0..IDLE)
                .filter_map(|_| connect_from("127.0.0.2", addr).ok())
                .collect();
            while !stop.load(Ordering::SeqCst) {
                for c in &mut drippers {
                    let _ = c.write_all(b"x");
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        })
    };
    // The attack's connections are open before the first probe.
    std::thread::sleep(Duration::from_millis(500));
    let seen = probe_health(addr);
    stop.store(true, Ordering::SeqCst);
    let _ = attack.join();
    seen
}

/// MCP waits: see the module's documentation.
fn mcp_waits(web: &ScannerService) -> Seen {
    let addr = web.addr;
    let answered_at_once = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Accepts (the kernel's backlog does) and never answers.
    let silent: Vec<TcpListener> = (0..MCP_CALLERS)
        .filter_map(|_| TcpListener::bind("127.0.0.1:0").ok())
        .collect();
    let callers: Vec<_> = silent
        .iter()
        .enumerate()
        .map(|(n, listener)| {
            let port = listener.local_addr().map(|a| a.port()).unwrap_or(9);
            let answered_at_once = answered_at_once.clone();
            std::thread::spawn(move || {
                let forwarded = format!("198.18.{n}.1");
                let json = [
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json"),
                    ("X-Forwarded-For", forwarded.as_str()),
                ];
                let init = request(
                    addr,
                    "POST",
                    "/mcp",
                    &json,
                    br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
                );
                let Some(session) = init.header("mcp-session-id").map(str::to_string) else {
                    return;
                };
                let mut headers = json.to_vec();
                headers.push(("Mcp-Session-Id", session.as_str()));
                let call = format!(
                    r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"scan_instance","arguments":{{"target_url":"http://127.0.0.1:{port}"}}}}}}"#
                );
                let sent = Instant::now();
                let answer = request(addr, "POST", "/mcp", &headers, call.as_bytes());
                if answer.status == 200 && sent.elapsed() < Duration::from_secs(2) {
                    answered_at_once.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let seen = probe_health(addr);
    println!(
        "  (MCP waits: {} of {MCP_CALLERS} calls answered at once with their queued scan's \
         uuid; the others wait for their scans)",
        answered_at_once.load(Ordering::SeqCst)
    );
    // The callers end when their calls answer or the server stops (dropping `web` after).
    drop(callers);
    seen
}

/// The name flood: see the module's documentation.
fn name_flood(web: &ScannerService) -> Seen {
    let addr = web.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let flooders: Vec<_> = (0..FLOODERS)
        .map(|client| {
            let (stop, sent) = (stop.clone(), sent.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let body = format!("{{\"target_url\": \"nx-{client}-{n}.invalid\"}}");
                    if let Ok(mut c) = connect_from("127.0.0.2", addr) {
                        use std::io::Read;
                        let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
                        let _ = write!(
                            c,
                            "POST /api/scans HTTP/1.1\r\nHost: {addr}\r\nContent-Type: \
                             application/json\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = c.read_to_end(&mut Vec::new());
                    }
                    sent.fetch_add(1, Ordering::SeqCst);
                    n += 1;
                }
            })
        })
        .collect();
    let seen = probe_health(addr);
    stop.store(true, Ordering::SeqCst);
    for flooder in flooders {
        let _ = flooder.join();
    }
    println!(
        "  (name flood: {} submissions answered meanwhile)",
        sent.load(Ordering::SeqCst)
    );
    seen
}

pub fn attacks_bench(bin: &Path, work: &Path) {
    println!();
    if !bin.is_file() {
        println!(
            "public scan API under attack: {} not found; build it with `cargo build --release \
             --bins`",
            bin.display()
        );
        return;
    }
    println!(
        "public scan API under attack: /healthz from a fresh client, every {} ms for {} s \
         during each attack",
        PROBE_EVERY.as_millis(),
        ATTACK_TIME.as_secs()
    );
    println!("| attack | p50 | p99 | max | not 200 |");
    println!("|---|---|---|---|---|");
    let attacks: [(&str, Attack); 3] = [
        (
            "slow clients: 100 dripping and 200 idle connections from one address",
            slow_clients,
        ),
        (
            "MCP waits: 40 scan_instance calls from 40 networks on never-answering targets",
            mcp_waits,
        ),
        (
            "name flood: 40 clients of one address submitting names that never resolve",
            name_flood,
        ),
    ];
    for (n, (attack, run)) in attacks.iter().enumerate() {
        match start_web(bin, &work.join(format!("attack-{n}"))) {
            Ok(web) => row(attack, run(&web)),
            Err(e) => println!("| {attack} | {e} | | | |"),
        }
    }
}
