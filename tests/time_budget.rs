//! The run ends before the monitoring core gives up (`--time-budget`, default 55 s, below the
//! 60 s at which Nagios and Icinga kill a check): no retry starts that could not end within
//! the budget, requests are cut to what is left, and the run ends UNKNOWN naming the host and
//! what was slow. Timeouts are shrunk with flags, so each test takes about a second; the
//! elapsed-time checks are generous upper bounds against a run that would otherwise take many
//! times longer.

mod support;

use std::time::{Duration, Instant};
use support::plugin::{Run, hermetic, run};
use support::{FakeInstance, InstanceConfig};

fn scan_timed(name: &str, hosts: &str, fake: &FakeInstance, extra: &[&str]) -> (Run, Duration) {
    let mut args = vec!["-H".to_string(), hosts.to_string()];
    args.extend(hermetic(&fake.ca_file()));
    // `hermetic` turns retries off; these tests are about retries.
    if let Some(i) = args.iter().position(|a| a == "--retries") {
        args.drain(i..i + 2);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let started = Instant::now();
    let out = run(name, &args, &[]);
    (out, started.elapsed())
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
        support::closed_port()
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
    let spec = storage_security::settings::options::spec("time_budget");
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
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
}
