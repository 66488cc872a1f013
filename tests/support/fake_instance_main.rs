//! `cargo run --example fake-instance -- [--bind IP] [--port N] [--debug-port N]... [--version V]
//! [--ocis] [--plain] [--self-signed] [--basic-auth] [--ca-out PATH] [--ready-file PATH]
//! [--debug-port-file PATH] [--traffic-file PATH]`
//!
//! Serves a fake OpenCloud 4.0.0 instance (real captured answers) on 127.0.0.1 (or `--bind`)
//! until SIGTERM or SIGINT, with a debug listener on an ephemeral port, or one on each
//! `--debug-port`. The private CA's PEM goes to `--ca-out` only; without it, to a file in the
//! system's temporary directory that is removed when the instance stops, so nothing is left
//! behind. With `--traffic-file`, it writes there on stop the connections it accepted and
//! the requests it read, each listener on a line (`<address> connections=N requests=M`).
//!
//! `make test-neighbour` runs it as the OpenCloud a developer has on the machine (`--bind
//! 0.0.0.0 --port 9200` and the default debug ports) while the whole suite runs: no test may
//! scan it.

#[path = "mod.rs"]
mod support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::{FakeInstance, InstanceConfig, Product, TlsMode};

fn usage() -> ! {
    eprintln!(
        "usage: fake-instance [--bind IP] [--port N] [--debug-port N]... [--version V] [--ocis] \
         [--plain] [--self-signed] [--basic-auth] [--ca-out PATH] [--ready-file PATH] \
         [--debug-port-file PATH] [--traffic-file PATH]"
    );
    std::process::exit(2);
}

fn main() {
    // `make demo` scans it on the real clock: its certificates are valid today.
    support::certs::date_around_today();
    let mut port: u16 = 0;
    let mut bind: std::net::IpAddr = [127, 0, 0, 1].into();
    let mut debug_ports: Vec<u16> = Vec::new();
    let mut config = InstanceConfig::default();
    let mut ca_out: Option<PathBuf> = None;
    let mut ready_file: Option<PathBuf> = None;
    let mut debug_port_file: Option<PathBuf> = None;
    let mut traffic_file: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("fake-instance: {name} needs a value");
                usage()
            })
        };
        match arg.as_str() {
            "--port" => {
                port = value("--port").parse().unwrap_or_else(|_| usage());
            }
            "--bind" => bind = value("--bind").parse().unwrap_or_else(|_| usage()),
            "--debug-port" => {
                debug_ports.push(value("--debug-port").parse().unwrap_or_else(|_| usage()));
            }
            "--version" => config = config.version(value("--version")),
            "--ocis" => config = config.product(Product::InfiniteScale),
            "--plain" => config = config.tls(TlsMode::Plain),
            "--self-signed" => config = config.tls(TlsMode::SelfSigned),
            "--basic-auth" => config = config.basic_auth(true),
            "--ca-out" => ca_out = Some(PathBuf::from(value("--ca-out"))),
            "--ready-file" => ready_file = Some(PathBuf::from(value("--ready-file"))),
            "--traffic-file" => traffic_file = Some(PathBuf::from(value("--traffic-file"))),
            "--debug-port-file" => {
                debug_port_file = Some(PathBuf::from(value("--debug-port-file")))
            }
            "-h" | "--help" => usage(),
            other => {
                eprintln!("fake-instance: unknown argument {other}");
                usage()
            }
        }
    }

    // Before anything asks for the CA file: the one place it is written.
    let ca_path = ca_out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("fake-opencloud-ca-{}.pem", std::process::id()))
    });
    if let Err(e) = support::certs::use_ca_file(&ca_path) {
        eprintln!("fake-instance: cannot write {}: {e}", ca_path.display());
        std::process::exit(1);
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(signal, stop.clone()) {
            eprintln!("fake-instance: cannot handle signals: {e}");
            std::process::exit(1);
        }
    }
    let listen = |port: u16| SocketAddr::new(bind, port);
    let instance = FakeInstance::start_at(config.clone(), listen(port)).unwrap_or_else(|e| {
        eprintln!("fake-instance: cannot listen on {}: {e}", listen(port));
        std::process::exit(1);
    });
    if debug_ports.is_empty() {
        debug_ports.push(0);
    }
    let debug: Vec<support::DebugListener> = debug_ports
        .iter()
        .map(|port| {
            support::debug_listener::start_debug_listener_at(&config, listen(*port)).unwrap_or_else(
                |e| {
                    eprintln!("fake-instance: cannot listen on {}: {e}", listen(*port));
                    std::process::exit(1);
                },
            )
        })
        .collect();
    if let Some(path) = &debug_port_file {
        if let Err(e) = std::fs::write(path, debug[0].host_port()) {
            eprintln!("fake-instance: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
    if let Some(path) = &ready_file {
        // Write then rename, so a watcher never reads a half-written file.
        let tmp = path.with_extension("tmp");
        if let Err(e) =
            std::fs::write(&tmp, instance.host_port()).and_then(|()| std::fs::rename(&tmp, path))
        {
            eprintln!("fake-instance: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
    let product = match config.product {
        Product::OpenCloud => "OpenCloud",
        Product::InfiniteScale => "Infinite Scale",
    };
    let debug_urls: Vec<String> = debug.iter().map(|d| d.base_url()).collect();
    eprintln!(
        "fake-instance: {product} {} on {} ({:?}), debug listener {}, CA {}",
        config.effective_version(),
        instance.base_url(),
        config.tls,
        debug_urls.join(" "),
        instance.ca_file().display()
    );
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if let Some(path) = &traffic_file {
        let line = |addr: String, traffic: support::Traffic| {
            format!(
                "{addr} connections={} requests={}\n",
                traffic.connections, traffic.requests
            )
        };
        let mut report = line(instance.base_url(), instance.traffic());
        for listener in &debug {
            report.push_str(&line(listener.base_url(), listener.traffic()));
        }
        if let Err(e) = std::fs::write(path, report) {
            eprintln!("fake-instance: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
    // The CA file it made on its own is its to remove; the one --ca-out names is the caller's.
    if ca_out.is_none() {
        let _ = std::fs::remove_file(&ca_path);
    }
    drop(instance);
}
