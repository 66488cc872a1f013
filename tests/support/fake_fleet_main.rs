//! `cargo run --example fake-fleet -- [--size N] [--first N] [--mix SHAPE=WEIGHT,...]
//! --host-list PATH [--counts-file PATH]`
//!
//! Serves a fake fleet (`fleet.rs`): `--size` fake OpenCloud instances (1,000 by default, at
//! most 100,000), each on its own address in 127.1.0.0/16 and beyond, plain HTTP, one port for
//! all, shaped by `--mix` (default `current=60,behind=15,eol=8,advisory=8,demo=4,slow=4,
//! silent=1`) until SIGTERM or SIGINT. When every listener is up it writes the targets to
//! `--host-list` (one a line, as `check-storage-security --host-list` reads them; written then
//! renamed, so its appearance means ready). On stop it writes to `--counts-file` each
//! instance's requests, a line each: `<target> <shape> <requests>`. Each instance holds two
//! open files (its listener and the descriptor its waiting accept reserves): a fleet of N
//! needs `prlimit --nofile=2N+1000`; where the hard limit is lower, several processes serve
//! one fleet, each its share: `--first` numbers this one's instances (and so its addresses)
//! from N, the same mix spread through each share.

#[path = "mod.rs"]
mod support;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::fleet::{FakeFleet, MAX_INSTANCES, Mix};

fn usage() -> ! {
    eprintln!(
        "usage: fake-fleet [--size N] [--first N] [--mix SHAPE=WEIGHT,...] --host-list PATH \
         [--counts-file PATH]"
    );
    std::process::exit(2);
}

fn fail(message: String) -> ! {
    eprintln!("fake-fleet: {message}");
    std::process::exit(1);
}

fn main() {
    let mut size = 1000;
    let mut first = 0;
    let mut mix = Mix::night();
    let mut host_list: Option<PathBuf> = None;
    let mut counts_file: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--size" => {
                size = value()
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_INSTANCES).contains(n))
                    .unwrap_or_else(|| fail(format!("--size is 1 to {MAX_INSTANCES}")));
            }
            "--first" => {
                first = value()
                    .parse()
                    .ok()
                    .filter(|n| *n < MAX_INSTANCES)
                    .unwrap_or_else(|| fail(format!("--first is 0 to {}", MAX_INSTANCES - 1)));
            }
            "--mix" => mix = Mix::parse(&value()).unwrap_or_else(|e| fail(format!("--mix: {e}"))),
            "--host-list" => host_list = Some(PathBuf::from(value())),
            "--counts-file" => counts_file = Some(PathBuf::from(value())),
            "-h" | "--help" => usage(),
            other => {
                eprintln!("fake-fleet: unknown argument {other}");
                usage()
            }
        }
    }
    let Some(host_list) = host_list else { usage() };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(signal, stop.clone()) {
            fail(format!("cannot handle signals: {e}"));
        }
    }
    // Each instance holds two descriptors: its listener, and the one its waiting accept
    // reserves (Linux takes it before the connection comes).
    if first + size > MAX_INSTANCES {
        fail(format!(
            "--first and --size reach past {MAX_INSTANCES} instances"
        ));
    }
    let fleet = FakeFleet::start_from(first, size, &mix).unwrap_or_else(|e| {
        let hint = match e.raw_os_error() {
            Some(24) => format!(
                "; each instance needs two open files: raise the limit (prlimit --nofile={}) or \
                 serve the fleet from several processes (--first)",
                2 * size + 1000
            ),
            _ => String::new(),
        };
        fail(format!("cannot start {size} instances: {e}{hint}"))
    });
    let tmp = host_list.with_extension("tmp");
    if let Err(e) = fleet
        .write_host_list(&tmp)
        .and_then(|()| std::fs::rename(&tmp, &host_list))
    {
        fail(format!("cannot write {}: {e}", host_list.display()));
    }
    eprintln!(
        "fake-fleet: {} instances from {}, targets in {}",
        fleet.len(),
        fleet.targets()[0],
        host_list.display()
    );
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if let Some(path) = &counts_file {
        let mut report = String::new();
        for ((target, shape), count) in fleet
            .targets()
            .iter()
            .zip(fleet.shapes())
            .zip(fleet.request_counts())
        {
            report.push_str(&format!("{target} {} {count}\n", shape.name()));
        }
        if let Err(e) = std::fs::write(path, report) {
            fail(format!("cannot write {}: {e}", path.display()));
        }
    }
}
