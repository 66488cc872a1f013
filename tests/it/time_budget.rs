//! The run ends before the monitoring core gives up (`--time-budget`, default 55 s, below the
//! 60 s at which Nagios and Icinga kill a check): no retry starts that could not end within
//! the budget, every blocking step (connect, TLS handshake, request head and body, lookup,
//! webhook delivery) is cut to what is left when it starts, and the run ends UNKNOWN naming
//! the host and what was slow.
//!
//! A budget test waits for its budget, so the budgets here are a second or two and the runs
//! of one test go at once; `make bench` runs the same targets at the budgets of 8, 12, 20 and
//! 55 s. A run must end within its budget and [`SLACK`] (the process starting and writing).

use crate::support::plugin::{Run, hermetic, run};
use crate::support::stall::{Stall, StallingTarget};
use crate::support::{FakeInstance, InstanceConfig};
use std::path::Path;
use std::time::{Duration, Instant};

/// What a run may take beyond its budget: starting the process and writing the output.
const SLACK: Duration = Duration::from_millis(500);

/// The hermetic arguments for `hosts` without `--retries 0` (these tests are about retries)
/// and `--no-debug-ports`, then `extra`.
fn budget_args(hosts: &str, ca: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["-H".to_string(), hosts.to_string()];
    args.extend(hermetic(ca));
    if let Some(i) = args.iter().position(|a| a == "--retries") {
        args.drain(i..i + 2);
    }
    args.retain(|a| a != "--no-debug-ports");
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn scan_timed(name: &str, hosts: &str, fake: &FakeInstance, extra: &[&str]) -> (Run, Duration) {
    let mut args = budget_args(hosts, &fake.ca_file(), extra);
    // Only the tests below that say so probe debug ports.
    args.push("--no-debug-ports".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let started = Instant::now();
    let out = run(name, &args, &[]);
    (out, started.elapsed())
}

/// `--time-budget`, `--timeout`, `--retries`, `--backoff-factor`: short budgets, request
/// timeouts below and far above them, retries that would wait past them.
const LIMITS: [[&str; 4]; 4] = [
    // The defaults' shape: one request timeout is longer than the whole budget.
    ["1.5", "10", "2", "0.5"],
    // Many short attempts with no wait between them.
    ["1", "0.3", "10", "0"],
    // Attempts that fit, and backoff that would carry a retry past the budget.
    ["2", "0.7", "3", "0.5"],
    ["1.2", "60", "0", "0"],
];

/// Scans `target` under every [`LIMITS`] row at once (each run waits for its budget, so
/// together they take one budget, not four): each ends UNKNOWN naming the host, within its
/// budget and [`SLACK`].
fn every_limit_ends_within_the_budget(name: &str, target: &StallingTarget) {
    let ca = crate::support::certs::ca_file();
    let host = target.host_port();
    std::thread::scope(|scope| {
        let runs: Vec<_> = LIMITS
            .iter()
            .enumerate()
            .map(|(i, [budget, timeout, retries, backoff])| {
                let args = budget_args(
                    &host,
                    &ca,
                    &[
                        "--time-budget",
                        budget,
                        "--timeout",
                        timeout,
                        "--retries",
                        retries,
                        "--backoff-factor",
                        backoff,
                        "--no-debug-ports",
                    ],
                );
                let run_name = format!("{name}-{i}");
                let handle = scope.spawn(move || {
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let started = Instant::now();
                    let out = run(&run_name, &args, &[]);
                    (out, started.elapsed())
                });
                (budget, timeout, retries, handle)
            })
            .collect();
        for (budget, timeout, retries, handle) in runs {
            let (out, elapsed) = handle.join().expect("the run's thread");
            let limit = Duration::from_secs_f64(budget.parse().unwrap()) + SLACK;
            let what = format!("--time-budget {budget} --timeout {timeout} --retries {retries}");
            assert!(elapsed <= limit, "{what}: took {elapsed:?}\n{}", out.stdout);
            assert_eq!(out.code, 3, "{what}: {}", out.stdout);
            assert!(
                out.line(0)
                    .starts_with(&format!("UNKNOWN: cannot scan {host}: ")),
                "{what}: {}",
                out.stdout
            );
        }
    });
}

#[test]
fn a_never_answering_target_ends_the_run_within_the_budget() {
    // Before, the TLS handshake took the whole request timeout and the plain-HTTP request
    // after it as much again: `--time-budget 8` ran 16.3 s.
    every_limit_ends_within_the_budget(
        "budget-never",
        &StallingTarget::start(Stall::Silent, false),
    );
}

#[test]
fn a_dripping_target_ends_the_run_within_the_budget() {
    every_limit_ends_within_the_budget(
        "budget-drip",
        &StallingTarget::start(Stall::Dripping, false),
    );
}

#[test]
fn a_target_dripping_over_tls_ends_the_run_within_the_budget() {
    // Each byte comes in a TLS record of its own: a socket timeout set once per read would
    // start again with every byte.
    every_limit_ends_within_the_budget(
        "budget-drip-tls",
        &StallingTarget::start(Stall::Dripping, true),
    );
    every_limit_ends_within_the_budget(
        "budget-drip-handshake",
        &StallingTarget::start(Stall::DrippingHandshake, true),
    );
}

#[test]
fn a_target_stalling_mid_body_ends_the_run_within_the_budget() {
    every_limit_ends_within_the_budget(
        "budget-half-open",
        &StallingTarget::start(Stall::HalfOpen, false),
    );
    every_limit_ends_within_the_budget(
        "budget-half-open-tls",
        &StallingTarget::start(Stall::HalfOpen, true),
    );
}

#[test]
fn a_spent_budget_names_what_took_it() {
    // The TLS handshake took the budget; the plain-HTTP request after it is never sent.
    let silent = StallingTarget::start(Stall::Silent, false);
    let host = silent.host_port();
    let args = budget_args(
        &host,
        &crate::support::certs::ca_file(),
        &[
            "--time-budget",
            "0.8",
            "--timeout",
            "30",
            "--no-debug-ports",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run("budget-named", &args, &[]);
    let cause = format!(
        "cannot scan {host}: HTTPS: TLS handshake timed out, then http://{host}/status.php: not \
         sent: the time budget (--time-budget) was spent (stopped after 1 of 3 attempt(s): \
         another would not end within the 0.8 s time budget, --time-budget)"
    );
    // Line 1 fits a monitoring screen (200 characters); the long output says it in full.
    let first = out.line(0);
    assert!(first.chars().count() <= 200, "{first}");
    assert!(
        first.starts_with(&format!(
            "UNKNOWN: cannot scan {host}: HTTPS: TLS handshake timed out, then http://{host}/status.php"
        )),
        "{first}"
    );
    assert!(
        out.stdout.lines().any(|l| l == format!("Causes: {cause}")),
        "{}",
        out.stdout
    );
}

#[test]
fn side_probes_of_a_healthy_instance_end_within_the_budget() {
    // The instance answers at once; its debug ports (one that accepts and never answers, one
    // whose connects are dropped) and its DNS server (never answers) stall, each with limits
    // far above the budget.
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let silent_port = StallingTarget::start(Stall::Silent, false);
    let filtered = crate::support::filtered_listener();
    let mut ports = vec![silent_port.port().to_string()];
    if let Some((listener, _)) = &filtered {
        ports.push(listener.local_addr().unwrap().port().to_string());
    }
    let dns = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let host = format!("localhost:{}", fake.port());
    let args = budget_args(
        &host,
        &fake.ca_file(),
        &["--time-budget", "1.5", "--timeout", "30"],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let dns_server = dns.local_addr().unwrap().to_string();
    let ports = ports.join(",");
    let started = Instant::now();
    let out = run(
        "budget-side-probes",
        &args,
        &[
            ("COS_SCANNER_RESOLVE", "localhost=127.0.0.1"),
            ("COS_SCANNER_DNS_SERVER", &dns_server),
            ("COS_SCANNER_DEBUG_PORTS", &ports),
            ("COS_SCANNER_DEBUG_PORT_TIMEOUT", "30"),
        ],
    );
    let elapsed = started.elapsed();
    assert!(
        elapsed <= Duration::from_millis(1500) + SLACK,
        "took {elapsed:?}\n{}",
        out.stdout
    );
    // The instance itself was scanned.
    assert!(
        out.stdout
            .contains(&format!("OpenCloud 8.1.0 on {host}, rating: ")),
        "{}",
        out.stdout
    );
}

#[test]
fn a_silent_instance_stops_retrying_when_another_attempt_would_not_fit() {
    // Accepts and never answers within any timeout of this test.
    let fake = FakeInstance::start(InstanceConfig::default().delay(Duration::from_secs(30)));
    let (out, elapsed) = scan_timed(
        "budget-silent",
        &fake.host_port(),
        &fake,
        &[
            "--timeout",
            "0.4",
            "--retries",
            "10",
            "--time-budget",
            "1.5",
        ],
    );
    assert_eq!(out.code, 3, "{}", out.stdout);
    let line = out.line(0);
    assert!(
        line.starts_with(&format!("UNKNOWN: cannot scan {}: ", fake.host_port())),
        "{line}"
    );
    assert!(line.contains("timed out"), "what was slow: {line}");
    assert!(
        line.contains(
            "of 11 attempt(s): another would not end within the 1.5 s time budget, --time-budget)"
        ),
        "{line}"
    );
    // Eleven attempts of at least 0.4 s would take 4.4 s and more.
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
}

#[test]
fn hosts_whose_turn_comes_after_the_budget_are_not_scanned_but_named() {
    let slow = FakeInstance::start(InstanceConfig::default().delay(Duration::from_secs(30)));
    let hosts = format!(
        "{0},127.0.0.1:{1}",
        slow.host_port(),
        crate::support::closed_port()
    );
    let (out, elapsed) = scan_timed(
        "budget-turn",
        &hosts,
        &slow,
        &[
            "--timeout",
            "2",
            "--retries",
            "0",
            "--concurrency",
            "1",
            "--time-budget",
            "0.8",
        ],
    );
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!(
            "UNKNOWN: cannot scan {}: the 0.8 s time budget (--time-budget) was spent before its turn",
            hosts.split(',').nth(1).unwrap()
        )),
        "{}",
        out.stdout
    );
    // The request limit was cut to the budget: not 2 s for the first host, then the second.
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
}

#[test]
fn the_default_budget_is_below_the_monitoring_cores_timeout() {
    let out = run("budget-help", &["-h"], &[]);
    assert!(
        out.stdout.contains("--time-budget SECONDS"),
        "documented in -h"
    );
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let (out, _) = scan_timed(
        "budget-bad",
        &fake.host_port(),
        &fake,
        &["--time-budget", "0"],
    );
    assert_eq!(out.code, 3);
    assert_eq!(
        out.line(0),
        "UNKNOWN: --time-budget \"0\" is not a number of seconds above 0 (at most 3600)"
    );
    let out = run(
        "budget-variable",
        &["-H", "x.example"],
        &[("COS_TIME_BUDGET", "abc")],
    );
    assert!(
        out.line(0)
            .starts_with("UNKNOWN: COS_TIME_BUDGET \"abc\" is not a number"),
        "{}",
        out.stdout
    );
    let spec = storage_security::settings::options::spec(
        storage_security::settings::options::Id::time_budget,
    );
    assert_eq!(spec.default, Some("55"));
}

#[test]
fn webhook_deliveries_share_what_is_left_of_the_budget() {
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    // Connections complete in the kernel's queue and are never answered.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hook = format!("http://{}/hook", silent.local_addr().unwrap());
    let (out, elapsed) = scan_timed(
        "budget-webhook",
        &fake.host_port(),
        &fake,
        &[
            "--webhook-url",
            &hook,
            "--webhook-on",
            "always",
            "--allow-private-webhooks",
            "--webhook-timeout",
            "10",
            "--retries",
            "2",
            "--backoff-factor",
            "0",
            "--time-budget",
            "1.5",
        ],
    );
    assert!(
        out.stdout.contains("Webhook delivery failed"),
        "{}",
        out.stdout
    );
    // Three attempts of 10 s each would take 30 s.
    assert!(
        elapsed <= Duration::from_millis(1500) + SLACK,
        "took {elapsed:?}"
    );
    // Attempts that fit the budget, and waits between them that do not: a retry starts only
    // when its wait and its attempt fit in what is left (before, 0.4 + 0.6 + 0.4 + 1.2 + 0.4 s).
    let (out, elapsed) = scan_timed(
        "budget-webhook-backoff",
        &fake.host_port(),
        &fake,
        &[
            "--webhook-url",
            &hook,
            "--webhook-on",
            "always",
            "--allow-private-webhooks",
            "--webhook-timeout",
            "0.4",
            "--retries",
            "2",
            "--backoff-factor",
            "0.3",
            "--time-budget",
            "1.5",
        ],
    );
    assert!(
        out.stdout.contains("Webhook delivery failed"),
        "{}",
        out.stdout
    );
    assert!(
        elapsed <= Duration::from_millis(1500) + SLACK,
        "took {elapsed:?}"
    );
}
