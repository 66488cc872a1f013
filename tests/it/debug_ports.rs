//! Debug ports end to end: the real binary against a fake instance and a fake proxy debug
//! listener (the real 9205 captures) on loopback. Ports are chosen with
//! `COS_SCANNER_DEBUG_PORTS`, the connect timeout with `COS_SCANNER_DEBUG_PORT_TIMEOUT`.

use crate::support::{FakeInstance, InstanceConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const NOW: &str = crate::support::PINNED_NOW;

struct Run {
    stdout: String,
    code: i32,
    elapsed: Duration,
}

impl Run {
    /// The `Additional checks failed (n): ...` line, or `""`.
    fn failed_line(&self) -> &str {
        self.stdout
            .lines()
            .find(|l| l.starts_with("Additional checks failed ("))
            .unwrap_or("")
    }

    /// The ids on the failed line.
    fn failed(&self) -> Vec<&str> {
        self.failed_line()
            .split_once("): ")
            .map(|(_, ids)| ids.split(", ").collect())
            .unwrap_or_default()
    }

    /// `<status, severity[, decisive]>: <detail>` of a finding from the `--debug` list.
    fn finding(&self, id: &str) -> Option<&str> {
        let prefix = format!("  {id} [");
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
    }

    fn has_finding_starting(&self, prefix: &str) -> bool {
        self.stdout
            .lines()
            .any(|l| l.starts_with(&format!("  {prefix}")))
    }

    fn perf(&self, name: &str) -> Option<&str> {
        let last = self.stdout.lines().last()?;
        last.trim_start_matches('|')
            .split(' ')
            .find(|m| m.starts_with(&format!("{name}=")))
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("debug-ports-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Scans the fake with `--debug` (the findings list) and a cleared environment.
fn scan(fake: &FakeInstance, name: &str, extra: &[&str], env: &[(&str, String)]) -> Run {
    let dir = scratch(name);
    let ca = fake.ca_file().display().to_string();
    let host = fake.host_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_check-storage-security"));
    command
        .args([
            "-H",
            host.as_str(),
            "--ca-file",
            ca.as_str(),
            "--update-source",
            "bundled",
            "--backoff-factor",
            "0",
            "--timeout",
            "5",
            "--debug",
        ])
        .args(extra)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &dir)
        .env("COS_NOW", NOW)
        .current_dir(&dir);
    for (k, v) in env {
        command.env(k, v);
    }
    let started = Instant::now();
    let output = command.output().expect("run the plugin");
    Run {
        stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
        code: output.status.code().expect("exit code"),
        elapsed: started.elapsed(),
    }
}

fn ports_env(ports: &[u16]) -> (&'static str, String) {
    let list: Vec<String> = ports.iter().map(u16::to_string).collect();
    ("COS_SCANNER_DEBUG_PORTS", list.join(","))
}

/// 8.1.0 without demo accounts: nothing worse than medium fails, so the debug findings decide.
fn instance() -> InstanceConfig {
    InstanceConfig::default().version("8.1.0").demo_users(false)
}

#[test]
fn an_exposed_debug_listener_warns_and_pages_with_critical_2() {
    let config = instance();
    let fake = FakeInstance::start(config.clone());
    let listener = crate::support::start_debug_listener(&config);
    let closed = crate::support::closed_port();
    let env = [ports_env(&[listener.port(), closed])];
    let port = listener.port();

    let run = scan(&fake, "exposed", &[], &env);
    assert_eq!(
        run.code, 1,
        "critical caps at 2 (D): WARNING\n{}",
        run.stdout
    );
    assert!(run.stdout.starts_with("WARNING: "), "{}", run.stdout);
    assert_eq!(run.perf("rating"), Some("rating=2;@0:3;@0:1;0;5"));
    let failed = run.failed();
    for id in [
        format!("debugPort:{port}"),
        format!("debugEndpoint:{port}/config"),
        format!("debugEndpoint:{port}/metrics"),
    ] {
        assert!(failed.contains(&id.as_str()), "{id}: {}", run.failed_line());
    }
    assert!(
        !run.failed_line().contains(&format!(":{closed}")),
        "{}",
        run.failed_line()
    );
    let config_finding = run
        .finding(&format!("debugEndpoint:{port}/config"))
        .expect("config finding");
    assert!(
        config_finding.starts_with("Failed, critical, decisive]: "),
        "{config_finding}"
    );
    assert!(
        config_finding.contains("ServiceAccount.ServiceAccountSecret"),
        "{config_finding}"
    );
    assert!(!config_finding.contains("REDACTED"), "{config_finding}");
    assert!(
        run.finding(&format!("debugPort:{port}"))
            .unwrap()
            .starts_with("Failed, high]: "),
        "{}",
        run.stdout
    );
    assert!(
        run.finding(&format!("debugEndpoint:{port}/metrics"))
            .unwrap()
            .starts_with("Failed, medium]: ")
    );
    // pprof is off on the default instance: 404.
    assert!(
        run.finding(&format!("debugEndpoint:{port}/debug/pprof/"))
            .unwrap()
            .starts_with("Passed, high]: ")
    );
    assert_eq!(
        run.finding(&format!("debugPort:{closed}")),
        Some(format!("Passed, high]: port {closed} refuses connections (closed)").as_str())
    );
    // Every handler was asked once, over plain HTTP, directly.
    let mut paths: Vec<String> = listener
        .requests()
        .iter()
        .map(|r| r.path().to_string())
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/config",
            "/debug/pprof/",
            "/healthz",
            "/metrics",
            "/readyz"
        ]
    );

    let run = scan(&fake, "exposed-critical", &["--critical", "2"], &env);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stdout.starts_with("CRITICAL: "), "{}", run.stdout);
}

#[test]
fn closed_ports_pass() {
    let fake = FakeInstance::start(instance());
    let closed = [crate::support::closed_port(), crate::support::closed_port()];
    let run = scan(&fake, "closed", &[], &[ports_env(&closed)]);
    for port in closed {
        assert_eq!(
            run.finding(&format!("debugPort:{port}")),
            Some(format!("Passed, high]: port {port} refuses connections (closed)").as_str()),
            "{}",
            run.stdout
        );
        // Nothing answered, so no handler was judged.
        assert!(!run.has_finding_starting(&format!("debugEndpoint:{port}/")));
    }
    assert!(!run.failed_line().contains("debug"), "{}", run.stdout);
    // The public address answers the web app for the debug paths: passed, not failed.
    for path in ["/metrics", "/config", "/debug/pprof/"] {
        let f = run
            .finding(&format!("debugEndpoint:{path}"))
            .unwrap_or_else(|| panic!("{path}: {}", run.stdout));
        assert!(f.starts_with("Passed, "), "{path}: {f}");
        assert!(
            f.contains("the page every unknown path gets"),
            "{path}: {f}"
        );
    }
}

#[test]
fn no_debug_ports_and_no_extra_checks_skip_them() {
    let config = instance();
    let fake = FakeInstance::start(config.clone());
    let listener = crate::support::start_debug_listener(&config);
    let env = [ports_env(&[listener.port()])];

    let run = scan(&fake, "no-debug-ports", &["--no-debug-ports"], &env);
    assert!(!run.has_finding_starting("debugPort:"), "{}", run.stdout);
    assert!(
        !run.has_finding_starting(&format!("debugEndpoint:{}", listener.port())),
        "{}",
        run.stdout
    );
    // The public paths are HTTP probes of the scan itself and still run.
    assert!(
        run.finding("debugEndpoint:/config").is_some(),
        "{}",
        run.stdout
    );

    let mut off = env.to_vec();
    off.push(("COS_SCANNER_CHECK_DEBUG_PORTS", "false".into()));
    let run = scan(&fake, "check-debug-ports-false", &[], &off);
    assert!(!run.has_finding_starting("debugPort:"), "{}", run.stdout);

    let run = scan(&fake, "no-extra-checks", &["--no-extra-checks"], &env);
    assert!(!run.has_finding_starting("debugPort:"), "{}", run.stdout);
    assert!(!run.has_finding_starting("debugEndpoint"), "{}", run.stdout);

    assert_eq!(listener.request_count(), 0, "the listener was never asked");
}

#[test]
fn filtered_ports_cost_one_timeout_not_five() {
    // Filled at once: each fill ends with two short connect timeouts.
    let filled: Vec<_> = (0..5)
        .map(|_| std::thread::spawn(crate::support::filtered_listener))
        .collect();
    let mut listeners = Vec::new();
    for handle in filled {
        match handle.join().ok().flatten() {
            Some(l) => listeners.push(l),
            None => {
                eprintln!(
                    "skipped: this kernel never dropped a SYN on a full accept queue, so no \
                     loopback port can play a firewalled one"
                );
                return;
            }
        }
    }
    let ports: Vec<u16> = listeners
        .iter()
        .map(|(l, _)| l.local_addr().unwrap().port())
        .collect();
    let fake = FakeInstance::start(instance());
    let env = [
        ports_env(&ports),
        ("COS_SCANNER_DEBUG_PORT_TIMEOUT", "0.5".to_string()),
    ];
    let run = scan(&fake, "filtered", &[], &env);
    for port in &ports {
        assert_eq!(
            run.finding(&format!("debugPort:{port}")),
            Some("Passed, high]: no answer within 0.5s (filtered)"),
            "{}",
            run.stdout
        );
    }
    assert!(!run.failed_line().contains("debug"), "{}", run.stdout);
    // They pass, but only as far as the network let us see: the coverage says so.
    let coverage = run
        .stdout
        .lines()
        .find(|l| l.starts_with("Coverage: "))
        .unwrap_or_default();
    assert!(
        coverage.ends_with(", 5 network-limited"),
        "{coverage}\n{}",
        run.stdout
    );
    assert_eq!(
        run.perf("coverage_inconclusive"),
        Some("coverage_inconclusive=6;;;0"),
        "{}",
        run.stdout
    );
    // One after the other they would take 2.5 s on their own.
    assert!(
        run.elapsed < Duration::from_secs(2),
        "five filtered ports took {:?}",
        run.elapsed
    );
}

/// An open debug port costs one connection, not one per handler: the connect that finds it
/// open stays open, and its five handlers are asked over it in turn.
#[test]
fn an_open_port_is_asked_over_one_kept_alive_connection() {
    let config = instance();
    let fake = FakeInstance::start(config.clone());
    let listener = crate::support::start_debug_listener(&config);
    let env = [ports_env(&[listener.port()])];
    let run = scan(&fake, "keep-alive", &[], &env);
    assert!(
        run.failed()
            .contains(&format!("debugPort:{}", listener.port()).as_str()),
        "{}",
        run.stdout
    );
    let traffic = listener.traffic();
    assert_eq!(traffic.requests, 5, "{traffic:?}");
    assert_eq!(traffic.connections, 1, "{traffic:?}");
}
