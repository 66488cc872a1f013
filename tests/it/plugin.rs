//! The real binary against fake instances on loopback: exit codes, exact first lines and
//! performance data for the scenarios of the foundation issue. The clock is pinned with
//! `COS_NOW`; the environment is cleared so nothing of the developer's machine leaks in.

use crate::support::{FakeInstance, FaultKind, FeedServer, InstanceConfig, TlsMode};
use std::path::{Path, PathBuf};
use std::process::Command;

const NOW: &str = crate::support::PINNED_NOW;

struct Run {
    stdout: String,
    code: i32,
}

impl Run {
    fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    fn line(&self, n: usize) -> &str {
        self.lines().get(n).copied().unwrap_or("")
    }

    /// The performance data, with the values that depend on timing masked.
    fn perfdata(&self) -> String {
        let last = self.lines().last().copied().unwrap_or("");
        assert!(
            last.starts_with('|'),
            "last line is not perfdata: {}",
            self.stdout
        );
        mask(&last[1..])
    }

    fn has_line(&self, line: &str) -> bool {
        self.lines().contains(&line)
    }
}

/// Masks `time=<seconds>`, the wall time. `cert_days_left` needs no mask: the test
/// certificates are dated around the pinned clock (`tests/support/certs.rs`).
fn mask(perfdata: &str) -> String {
    perfdata
        .split(' ')
        .map(|metric| {
            let (name, rest) = metric.split_once('=').unwrap_or((metric, ""));
            match name {
                "time" => format!("time=T{}", &rest[rest.find('s').unwrap_or(rest.len())..]),
                _ => metric.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plugin-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the plugin in an empty working directory with a cleared environment.
/// Runs the plugin in `dir`. Its debug ports are five ports the test holds closed (never
/// the machine's 9205, 9141, ..., where a developer's OpenCloud answers); `env` may name
/// others.
fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let (_held, debug_ports) = crate::support::held_debug_ports(5);
    let mut command = Command::new(env!("CARGO_BIN_EXE_check-storage-security"));
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("COS_NOW", NOW)
        .env(debug_ports.0, debug_ports.1)
        .current_dir(dir);
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().expect("run the plugin");
    Run {
        stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
        code: output.status.code().expect("exit code"),
    }
}

/// Scans a fake instance trusting its CA, bundled update data, no waiting between retries.
fn scan(fake: &FakeInstance, name: &str, extra: &[&str]) -> Run {
    scan_env(fake, name, extra, &[])
}

fn scan_env(fake: &FakeInstance, name: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let dir = scratch_dir(name);
    let ca = fake.ca_file().display().to_string();
    let host = fake.host_port();
    let mut args = vec![
        "-H",
        host.as_str(),
        "--ca-file",
        ca.as_str(),
        "--backoff-factor",
        "0",
        "--timeout",
        "5",
    ];
    if !extra
        .iter()
        .any(|a| a.starts_with("--update-source") || *a == "--no-update-check")
    {
        args.extend(["--update-source", "bundled"]);
    }
    args.extend(extra);
    run_in(&dir, &args, env)
}

/// An instance without the weaknesses a default install has (demo accounts, CORS for any
/// origin, version headers), so the version knowledge alone decides the rating.
fn healthy() -> InstanceConfig {
    InstanceConfig::default()
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
        .remove_header("X-Web-Version")
        .remove_header("X-Idp-Version")
        .remove_header("X-Graph-Version")
}

fn host_line(fake: &FakeInstance, version: &str, grade: &str) -> String {
    format!(
        "OpenCloud {version} on {}, rating: {grade}, last scanned: {NOW}",
        fake.host_port()
    )
}

#[test]
fn current_release_is_ok_with_a_plus() {
    let fake = FakeInstance::start(healthy().version("4.0.8"));
    let run = scan(&fake, "current", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "OK: OpenCloud 4.0.8 is up to date and no check failed"
    );
    assert_eq!(run.line(1), host_line(&fake, "4.0.8", "A+"));
    assert_eq!(
        run.line(2),
        "Release lifecycle: 4.0.8 is the current release (lts); line 4.0 supported until 2027-12-01, 374 days left"
    );
    assert!(
        run.has_line("Additional checks: all passed"),
        "{}",
        run.stdout
    );
    assert!(
        run.has_line("Update check (bundled, installed 4.0.8): up to date on the lts track; newest release 8.1.0"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.perfdata(),
        "rating=5;@0:3;@0:1;0;5 vulnerabilities=0;0;;0 time=Ts;;;0 extra_checks_failed=0;;;0 \
         update_available=0;;;0;1 support_days_left=374 cert_days_left=364;@~:14;@~:-1 \
         coverage_inconclusive=1;;;0 coverage_not_checked=0;;;0"
    );
}

#[test]
fn certificate_days_are_measured_from_the_leaf() {
    let fake = FakeInstance::start(healthy().version("4.0.8"));
    let run = scan(&fake, "cert-days", &[]);
    let last = run.lines().last().unwrap().to_string();
    let days: i64 = last
        .split(' ')
        .find_map(|m| m.strip_prefix("cert_days_left="))
        .and_then(|v| v.split(';').next())
        .and_then(|v| v.parse().ok())
        .expect("cert_days_left present over HTTPS");
    // The leaf ends 365 days after the pinned day, at midnight: 364 whole days from 03:00.
    assert_eq!(days, 364, "{last}");
}

#[test]
fn patch_pending_is_ok_with_a() {
    let fake = FakeInstance::start(healthy().version("7.2.1"));
    let run = scan(&fake, "patch", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "OK: OpenCloud 7.2.1 is supported; 7.2.4 is available"
    );
    assert_eq!(run.line(1), host_line(&fake, "7.2.1", "A"));
    assert!(
        run.has_line("Release lifecycle: 7.2 (production) supported until the next production line is released"),
        "{}",
        run.stdout
    );
    assert!(run.has_line("Update check (bundled, installed 7.2.1): 7.2.4 available on the production track; newest release 8.1.0"));
    assert!(
        run.perfdata()
            .starts_with("rating=4;@0:3;@0:1;0;5 vulnerabilities=0;0;;0 ")
    );
    assert!(run.perfdata().contains(" update_available=1;;;0;1"));
    assert!(
        !run.perfdata().contains("support_days_left"),
        "no end date known yet"
    );
}

#[test]
fn update_warning_turns_a_pending_patch_into_warning() {
    let fake = FakeInstance::start(healthy().version("7.2.1"));
    let run = scan(&fake, "update-warning", &["--update-warning"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.line(0), "WARNING: update available: 7.2.4");
    assert!(run.perfdata().contains(" update_available=1;0;;0;1"));
}

#[test]
fn a_line_behind_is_warning_with_c() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let run = scan(
        &fake,
        "line-behind",
        &["--update-source", "pinned", "--latest-version", "8.2.0"],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&fake, "8.1.0", "C"));
    assert!(
        run.has_line(
            "Update check (pinned, installed 8.1.0): 8.2.0 available on the rolling track"
        )
    );
    assert!(run.perfdata().starts_with("rating=3;@0:3;@0:1;0;5 "));
}

/// On the lts track, once a newer LTS line is out, an instance on the older one is a whole
/// release line behind (rating 3, WARNING) and the update check names the newer line's
/// release, as on the rolling track; its own line's newest patch is no way forward.
#[test]
fn an_older_lts_line_is_a_line_behind_a_newer_one() {
    let dir = scratch_dir("two-lts-schedule");
    let schedule = dir.join("schedule.json");
    std::fs::write(
        &schedule,
        r#"{"updated": "2026-11-01", "entries": [
            {"line": "4.0", "track": "lts", "opened": "2025-12-01", "current": "4.0.8",
             "support_end": "2027-12-01"},
            {"line": "8.0", "track": "lts", "opened": "2026-09-15", "current": "8.0.1",
             "support_end": "2028-09-15"},
            {"line": "8.1", "track": "rolling", "opened": "2026-10-05", "current": "8.1.0",
             "support_end": null}
        ]}"#,
    )
    .unwrap();
    let schedule = schedule.display().to_string();
    let env = [("COS_SCANNER_RELEASE_SCHEDULE", schedule.as_str())];
    let fake = FakeInstance::start(healthy().version("4.0.8"));
    let run = scan_env(&fake, "older-lts", &["--release-track", "lts"], &env);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&fake, "4.0.8", "C"));
    assert!(
        run.has_line("Update check (bundled, installed 4.0.8): 8.0.1 available on the lts track; newest release 8.1.0"),
        "{}",
        run.stdout
    );
    assert!(run.perfdata().starts_with("rating=3;@0:3;@0:1;0;5 "));
    // The newest LTS line's newest patch is up to date.
    let fake = FakeInstance::start(healthy().version("8.0.1"));
    let run = scan_env(&fake, "newest-lts", &["--release-track", "lts"], &env);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&fake, "8.0.1", "A+"));
}

#[test]
fn known_vulnerability_is_warning_with_d() {
    // 4.0.5: GHSA-gf4p-7p27-26w7 (medium) is open, GHSA-vf5j-r2hw-2hrw fixed in 4.0.3.
    let fake = FakeInstance::start(healthy().version("4.0.5"));
    let run = scan(&fake, "vulnerable", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "WARNING: OpenCloud 4.0.5 has 1 known vulnerability (GHSA-gf4p-7p27-26w7 medium); upgrade to 4.0.8"
    );
    assert_eq!(run.line(1), host_line(&fake, "4.0.5", "D"));
    assert!(
        run.perfdata()
            .starts_with("rating=2;@0:3;@0:1;0;5 vulnerabilities=1;0;;0 ")
    );
    assert!(
        run.perfdata().contains(" upgrade_path_complete=1;;;0;1 "),
        "{}",
        run.stdout
    );
}

#[test]
fn high_advisory_is_critical_with_e() {
    let fake = FakeInstance::start(healthy());
    let run = scan(&fake, "high", &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "CRITICAL: OpenCloud 4.0.0 has 2 known vulnerabilities (GHSA-vf5j-r2hw-2hrw high, GHSA-gf4p-7p27-26w7 medium); upgrade to 4.0.8"
    );
    assert_eq!(run.line(1), host_line(&fake, "4.0.0", "E"));
    assert_eq!(
        run.perfdata(),
        "rating=1;@0:3;@0:1;0;5 vulnerabilities=2;0;;0 time=Ts;;;0 extra_checks_failed=0;;;0 \
         update_available=1;;;0;1 support_days_left=374 cert_days_left=364;@~:14;@~:-1 upgrade_path_complete=1;;;0;1 \
         coverage_inconclusive=1;;;0 coverage_not_checked=0;;;0"
    );
}

#[test]
fn critical_advisory_from_an_extra_database_is_critical() {
    let dir = scratch_dir("critical-db");
    let db = dir.join("extra.json");
    std::fs::write(
        &db,
        r#"{"advisories": [{"id": "TEST-2026-0001", "severity": "critical", "summary": "remote code execution", "introduced": "8.0.0", "fixed": "8.1.1"}]}"#,
    )
    .unwrap();
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let run = scan_env(
        &fake,
        "critical",
        &[],
        &[("COS_SCANNER_VULNERABILITY_DB", &db.display().to_string())],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "CRITICAL: OpenCloud 8.1.0 has 1 known vulnerability (TEST-2026-0001 critical); upgrade to 8.1.1"
    );
    assert!(
        run.perfdata()
            .starts_with("rating=1;@0:3;@0:1;0;5 vulnerabilities=1;0;;0 ")
    );
    // The recommended release (8.1.0, newest known) does not clear the advisory.
    assert!(
        run.perfdata().contains(" upgrade_path_complete=0;;;0;1 "),
        "{}",
        run.stdout
    );
}

#[test]
fn end_of_life_is_critical_with_f_naming_line_track_and_target() {
    let fake = FakeInstance::start(healthy().version("7.3.0"));
    let run = scan(&fake, "eol", &["--warning", "0", "--critical", "0"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "CRITICAL: OpenCloud 7.3.0 is end of life: release line 7.3 (rolling) lost support on 2026-08-03; upgrade to 8.1.0 (rolling track)"
    );
    assert_eq!(run.line(1), host_line(&fake, "7.3.0", "F"));
    assert_eq!(
        run.line(2),
        "Release lifecycle: 7.3 (rolling) is end of life since 2026-08-03; upgrade to 8.1.0 (rolling track)"
    );
    assert!(run.perfdata().starts_with("rating=0;@0:0;@0:0;0;5 "));
    assert!(
        run.perfdata().contains(" support_days_left=-111"),
        "{}",
        run.stdout
    );
}

/// An end-of-life release with open advisories: line 1 names the upgrade once. The lifecycle
/// cause says where to go; the advisory cause lists the advisories and does not repeat it.
#[test]
fn an_end_of_life_release_with_advisories_names_the_upgrade_once() {
    let fake = FakeInstance::start(healthy().version("3.7.0"));
    let run = scan(&fake, "eol-vulnerable", &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let first = run.line(0);
    assert_eq!(first.matches("upgrade to").count(), 1, "{first}");
    assert_eq!(first.matches("8.1.0").count(), 1, "{first}");
    assert!(
        first.starts_with("CRITICAL: OpenCloud 3.7.0 is end of life"),
        "{first}"
    );
    assert!(first.ends_with("; 1 known vulnerability"), "{first}");
    // The full causes name the advisory, and the upgrade once too.
    let causes = run
        .lines()
        .into_iter()
        .find(|l| l.starts_with("Causes: "))
        .unwrap_or_else(|| panic!("a Causes line: {}", run.stdout));
    assert!(
        causes.contains("OpenCloud 3.7.0 has 1 known vulnerability (GHSA-gf4p-7p27-26w7 medium)"),
        "{causes}"
    );
    assert_eq!(causes.matches("upgrade to").count(), 1, "{causes}");
}

/// Across the clock edge of a support end: the last second of support warns (1 day left), the
/// first second of the end day is end of life, CRITICAL, and its `support_days_left=0` lies
/// inside the critical range a monitoring core evaluates (`@~:0`: 0 and below).
#[test]
fn the_end_of_life_day_is_inside_the_critical_range() {
    let fake = FakeInstance::start(healthy().version("7.3.0"));
    let before = scan_env(
        &fake,
        "eol-edge-before",
        &["--eol-warning", "30"],
        &[("COS_NOW", "2026-08-02T23:59:59Z")],
    );
    assert_eq!(before.code, 1, "{}", before.stdout);
    assert!(
        before
            .perfdata()
            .contains(" support_days_left=1;@~:30;@~:0 "),
        "{}",
        before.stdout
    );
    let on = scan_env(
        &fake,
        "eol-edge-on",
        &["--eol-warning", "30"],
        &[("COS_NOW", "2026-08-03T00:00:00Z")],
    );
    assert_eq!(on.code, 2, "{}", on.stdout);
    assert!(on.line(0).contains("is end of life"), "{}", on.stdout);
    assert!(
        on.perfdata().contains(" support_days_left=0;@~:30;@~:0 "),
        "{}",
        on.stdout
    );
}

#[test]
fn eol_warning_window() {
    let fake = FakeInstance::start(healthy().version("4.0.8"));
    let run = scan(&fake, "eol-window", &["--eol-warning", "374"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "WARNING: release line 4.0 support ends 2027-12-01 (374 days left); plan the upgrade to 7.2.4 (production track)"
    );
    // Not the installed LTS patch: the newest release of a line supported past the window.
    assert!(
        run.has_line("Release lifecycle: 4.0 (lts) support ends 2027-12-01, 374 days left; plan the upgrade to 7.2.4 (production track)"),
        "{}",
        run.stdout
    );
    assert!(
        run.perfdata()
            .contains(" support_days_left=374;@~:374;@~:0"),
        "{}",
        run.stdout
    );
    let run = scan(&fake, "eol-window-2", &["--eol-warning", "373"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn untrusted_certificate_fails_tls_trusted() {
    let fake = FakeInstance::start(healthy().version("8.1.0").tls(TlsMode::SelfSigned));
    let run = scan(&fake, "self-signed", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.line(0).starts_with(
            "WARNING: tlsTrusted failed (high): certificate is not signed by a trusted CA"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(run.line(1), host_line(&fake, "8.1.0", "C"));
    assert!(run.has_line("Additional checks failed (1): tlsTrusted"));
    assert!(run.perfdata().starts_with("rating=3;@0:3;@0:1;0;5 "));
    assert!(run.perfdata().contains(" extra_checks_failed=1;;;0 "));

    // --insecure keeps it listed but stops it counting.
    let run = scan(&fake, "self-signed-insecure", &["--insecure"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&fake, "8.1.0", "A+"));
    assert!(
        run.has_line("Additional checks failed (1): tlsTrusted (not rated)"),
        "{}",
        run.stdout
    );
}

#[test]
fn expired_and_wrong_name_certificates() {
    let fake = FakeInstance::start(healthy().version("8.1.0").tls(TlsMode::Expired));
    let run = scan(&fake, "expired", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.line(0)
            .contains("tlsTrusted failed (high): certificate has expired"),
        "{}",
        run.stdout
    );
    assert!(
        run.line(0)
            .contains("tlsCertificate failed (high): the certificate expired"),
        "{}",
        run.stdout
    );
    let cert_days = run
        .lines()
        .last()
        .unwrap()
        .split(' ')
        .find(|m| m.starts_with("cert_days_left="))
        .unwrap()
        .to_string();
    assert!(cert_days.starts_with("cert_days_left=-"), "{cert_days}");

    let fake = FakeInstance::start(healthy().version("8.1.0").tls(TlsMode::WrongName));
    let run = scan(&fake, "wrong-name", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.line(0)
            .contains("certificate is not valid for the scanned name"),
        "{}",
        run.stdout
    );
}

/// A scan judges the certificate's dates at the instant it treats as now (`COS_NOW`), as it
/// judges everything else, never at the machine's clock: the fake's leaf is valid from the day
/// before the pinned day for 365 days, so a clock a week earlier finds it not valid yet and
/// one in 2030 finds it expired, whatever day the machine thinks it is.
#[test]
fn certificates_are_judged_at_the_scans_clock() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    for (name, now, why) in [
        (
            "cert-not-yet",
            "2026-11-15T03:00:00Z",
            "tlsTrusted failed (high): certificate is not valid yet",
        ),
        (
            "cert-expired-later",
            "2030-01-01T00:00:00Z",
            "tlsTrusted failed (high): certificate has expired",
        ),
    ] {
        let run = scan_env(&fake, name, &[], &[("COS_NOW", now)]);
        assert!(run.line(0).contains(why), "{now}: {}", run.stdout);
    }
    let run = scan(&fake, "cert-on-the-pinned-day", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(!run.stdout.contains("tlsTrusted failed"), "{}", run.stdout);
}

#[test]
fn https_unavailable_falls_back_to_plain_http() {
    let fake = FakeInstance::start(healthy().version("8.1.0").plain());
    let run = scan(&fake, "plain", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.line(0)
            .starts_with("WARNING: httpsAvailable failed (critical): HTTPS is not available"),
        "{}",
        run.stdout
    );
    assert_eq!(run.line(1), host_line(&fake, "8.1.0", "D"));
    assert!(run.has_line("Additional checks failed (1): httpsAvailable"));
    assert_eq!(
        run.perfdata(),
        "rating=2;@0:3;@0:1;0;5 vulnerabilities=0;0;;0 time=Ts;;;0 extra_checks_failed=1;;;0 update_available=0;;;0;1 \
         coverage_inconclusive=1;;;0 coverage_not_checked=0;;;0",
        "no cert_days_left without TLS"
    );
    // A single critical finding pages with --critical 2.
    let run = scan(&fake, "plain-critical", &["--critical", "2"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
}

#[test]
fn a_refused_connection_is_attempted_once() {
    // Nothing listens on the port: an answer, not a fault of the moment. The spec retries
    // timeouts, resets and 5xx; a dead target costs one connect, not the backoff of every
    // retry (1 s, then 2 s at the default --backoff-factor 0.5).
    let port = crate::support::closed_port();
    let dir = scratch_dir("unreachable");
    let host = format!("127.0.0.1:{port}");
    let started = std::time::Instant::now();
    let run = run_in(
        &dir,
        &["-H", &host, "--retries", "2", "--update-source", "bundled"],
        &[],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "no backoff wait: {:?}",
        started.elapsed()
    );
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        format!(
            "UNKNOWN: cannot scan {host}: http://{host}/status.php: Connection refused (os \
             error 111) (nothing listens on the port; not retried)"
        ),
    );
    assert!(
        run.perfdata().starts_with("rating=U;@0:3;@0:1;0;5 time=T"),
        "{}",
        run.stdout
    );
    let run = run_in(
        &dir,
        &[
            "-H",
            &host,
            "--retries",
            "2",
            "--update-source",
            "bundled",
            "--format",
            "json",
        ],
        &[],
    );
    let results: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(results[0]["error"]["attempts"], 1, "{}", run.stdout);
}

#[test]
fn server_errors_are_retried_and_the_scan_succeeds() {
    let fake = FakeInstance::start(
        healthy()
            .version("8.1.0")
            .fail_first_n(2, FaultKind::Status(503)),
    );
    let run = scan(&fake, "flaky", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&fake, "8.1.0", "A+"));

    let fake = FakeInstance::start(healthy().version("8.1.0").always(FaultKind::Status(503)));
    let run = scan(&fake, "always-503", &["--retries", "1"]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.line(0)
            .contains("answered HTTP 503 (gave up after 2 attempt(s))"),
        "{}",
        run.stdout
    );
}

#[test]
fn connection_resets_are_retried() {
    let fake = FakeInstance::start(healthy().version("8.1.0").fail_first_n(1, FaultKind::Reset));
    let run = scan(&fake, "reset", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn update_source_modes() {
    let fake = FakeInstance::start(healthy().version("4.0.8"));
    let feed = FeedServer::github_releases(&["v8.2.0", "v7.2.5", "v4.0.9", "v4.1.0"]);
    let url = feed.url("/repos/opencloud-eu/opencloud/releases");
    let env = [
        ("COS_RELEASES_URL", url.as_str()),
        ("COS_RELEASES_TOKEN", "tok-123"),
    ];

    // auto with a working feed: the feed's newer LTS patch, the token sent as bearer.
    let run = scan_env(&fake, "mode-auto", &["--update-source", "auto"], &env);
    assert!(run.has_line("Update check (auto, installed 4.0.8): 4.0.9 available on the lts track; newest release 8.2.0"), "{}", run.stdout);
    assert_eq!(
        feed.requests()[0].authorization.as_deref(),
        Some("Bearer tok-123")
    );

    // feed mode, same answer.
    let run = scan_env(&fake, "mode-feed", &["--update-source", "feed"], &env);
    assert!(run.has_line("Update check (feed, installed 4.0.8): 4.0.9 available on the lts track; newest release 8.2.0"), "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&fake, "4.0.8", "A"));

    // auto with a rate-limited feed falls back to the bundled data; not an error.
    let limited = FeedServer::start(vec![(
        403,
        r#"{"message": "API rate limit exceeded"}"#.into(),
    )]);
    let limited_url = limited.url("/releases");
    let env = [("COS_RELEASES_URL", limited_url.as_str())];
    let run = scan_env(
        &fake,
        "mode-auto-fallback",
        &["--update-source", "auto"],
        &env,
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout.contains("Update check (auto, installed 4.0.8): up to date on the lts track; newest release 8.1.0 (from bundled data: release feed unavailable:"),
        "{}",
        run.stdout
    );

    // feed mode with a failing feed: unknown, and the security check goes on.
    let run = scan_env(&fake, "mode-feed-fail", &["--update-source", "feed"], &env);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("Update check (feed, installed 4.0.8): unknown (release feed unavailable:"),
        "{}",
        run.stdout
    );
    assert!(
        !run.perfdata().contains("update_available"),
        "{}",
        run.stdout
    );

    // pinned: no network, the given version.
    let run = scan(
        &fake,
        "mode-pinned",
        &["--update-source", "pinned", "--latest-version", "4.0.10"],
    );
    assert!(
        run.has_line("Update check (pinned, installed 4.0.8): 4.0.10 available on the lts track"),
        "{}",
        run.stdout
    );

    // bundled and off.
    let run = scan(&fake, "mode-bundled", &["--update-source", "bundled"]);
    assert!(run.has_line(
        "Update check (bundled, installed 4.0.8): up to date on the lts track; newest release 8.1.0"
    ));
    for args in [&["--update-source", "off"][..], &["--no-update-check"][..]] {
        let run = scan(&fake, "mode-off", args);
        assert!(!run.stdout.contains("Update check"), "{}", run.stdout);
        assert!(
            !run.perfdata().contains("update_available"),
            "{}",
            run.stdout
        );
    }
}

/// "Up to date" only when the scan established it: with the update check off, or a feed that
/// failed in feed mode, a 7.2.3 instance whose line the release schedule lists up to 7.2.4 is
/// told what is known (the schedule lists 7.2.4) and rated as the spec's table says for it (a
/// patch update pending: 4, A), never "up to date" with 5.
#[test]
fn up_to_date_only_when_the_scan_established_it() {
    let fake = FakeInstance::start(healthy().version("7.2.3"));
    let failing = FeedServer::start(vec![(500, "{}".into())]);
    let failing_url = failing.url("/releases");
    for (name, args, env, why) in [
        (
            "unknown-off",
            &["--update-source", "off"][..],
            &[][..],
            "the update check is off",
        ),
        (
            "unknown-feed-failed",
            &["--update-source", "feed", "--retries", "0"][..],
            &[("COS_RELEASES_URL", failing_url.as_str())][..],
            "the update check failed",
        ),
    ] {
        let run = scan_env(&fake, name, args, env);
        assert_eq!(run.code, 0, "{name}: {}", run.stdout);
        assert_eq!(
            run.line(0),
            format!("OK: OpenCloud 7.2.3 is supported; the release schedule lists 7.2.4 ({why})"),
            "{name}"
        );
        assert!(!run.stdout.contains("up to date"), "{name}: {}", run.stdout);
        assert_eq!(run.line(1), host_line(&fake, "7.2.3", "A"), "{name}");
    }
    // The newest release the schedule lists, and the check off: nothing newer is known.
    let newest = FakeInstance::start(healthy().version("8.1.0"));
    let run = scan(&newest, "unknown-off-newest", &["--no-update-check"]);
    assert_eq!(
        run.line(0),
        "OK: OpenCloud 8.1.0 is supported and the newest release the release schedule lists \
         (the update check is off)"
    );
    assert_eq!(run.line(1), host_line(&newest, "8.1.0", "A+"));
}

/// With `scanner.use_release_schedule: false` nothing judges the line's support: line 1 says
/// so, never "is supported", and says what the update check, which ran, could tell.
#[test]
fn without_the_release_schedule_line_one_says_what_was_judged() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let off = [("COS_SCANNER_USE_RELEASE_SCHEDULE", "false")];
    for (name, args, state, why) in [
        (
            "no-schedule-bundled",
            &[][..],
            "OK",
            "the update check (bundled) had no release to compare it with",
        ),
        (
            // A whole line behind the pinned release: C, as with the schedule.
            "no-schedule-pinned-newer",
            &["--update-source", "pinned", "--latest-version", "8.2.0"][..],
            "WARNING",
            "8.2.0 is available",
        ),
        (
            "no-schedule-pinned-same",
            &["--update-source", "pinned", "--latest-version", "8.1.0"][..],
            "OK",
            "no newer release is known; no check failed",
        ),
        (
            "no-schedule-off",
            &["--update-source", "off"][..],
            "OK",
            "the update check is off; no check failed",
        ),
    ] {
        let run = scan_env(&fake, name, args, &off);
        let first = run.line(0);
        assert!(
            first.starts_with(&format!(
                "{state}: OpenCloud 8.1.0: support not judged (scanner.use_release_schedule is \
                 false); "
            )),
            "{name}: {}",
            run.stdout
        );
        assert!(first.contains(why), "{name}: {first}");
        assert!(
            !run.stdout.contains("is supported"),
            "{name}: {}",
            run.stdout
        );
        assert!(!run.stdout.contains("Release lifecycle"), "{name}");
        if name != "no-schedule-off" {
            assert!(
                !first.contains("the update check is off"),
                "{name}: {first}"
            );
        }
    }
}

#[test]
fn profiles_set_thresholds_and_rules() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    // strict: hardening on, and the real default CSP allows 'unsafe-inline'.
    let run = scan(&fake, "strict", &["--profile", "strict"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.has_line("Missing hardening: hstsPreload, cspWithoutUnsafeInline, Permissions-Policy"),
        "{}",
        run.stdout
    );
    assert!(run.perfdata().starts_with("rating=5;@0:4;@0:2;0;5 "));
    assert!(run.perfdata().contains(" hardenings_missing=3;;;0 "));

    // ops: hardening on, thresholds 3/1.
    let run = scan(&fake, "ops", &["--profile", "ops"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.perfdata().starts_with("rating=5;@0:3;@0:1;0;5 "));

    // lenient: thresholds 2/0, no hardening; a vulnerable 4.0.0 is still at least WARNING.
    let vulnerable = FakeInstance::start(healthy());
    let run = scan(&vulnerable, "lenient", &["--profile", "lenient"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.perfdata().starts_with("rating=1;@0:2;@0:0;0;5 "));
    assert!(!run.stdout.contains("Missing hardening"));

    // A flag beats the profile.
    let run = scan(
        &fake,
        "strict-flag",
        &["--profile", "strict", "--warning", "3"],
    );
    assert!(
        run.perfdata().starts_with("rating=5;@0:3;@0:2;0;5 "),
        "{}",
        run.stdout
    );
}

#[test]
fn hardening_passes_when_the_headers_are_strong() {
    let fake = FakeInstance::start(
        healthy()
            .version("8.1.0")
            .set_header(
                "Strict-Transport-Security",
                "max-age=63072000; includeSubDomains; preload",
            )
            .set_header(
                "Permissions-Policy",
                "camera=(), microphone=(), geolocation=()",
            )
            .set_header(
                "Content-Security-Policy",
                "default-src 'self'; script-src 'self'; frame-ancestors 'self'",
            ),
    );
    let run = scan(&fake, "strong-headers", &["--check-hardening"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(!run.stdout.contains("Missing hardening"), "{}", run.stdout);
    assert!(run.perfdata().contains(" hardenings_missing=0;;;0 "));
}

#[test]
fn precedence_flag_over_variable_over_config_file() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let dir = scratch_dir("precedence");
    std::fs::write(
        dir.join("check-storage-security.yml"),
        "warning: 2\ncritical: 0\neol_warning: 5\n",
    )
    .unwrap();
    let ca = fake.ca_file().display().to_string();
    let host = fake.host_port();
    let base = [
        "-H",
        host.as_str(),
        "--ca-file",
        ca.as_str(),
        "--update-source",
        "bundled",
    ];

    let run = run_in(&dir, &base, &[]);
    assert!(
        run.perfdata().starts_with("rating=5;@0:2;@0:0;0;5 "),
        "file: {}",
        run.stdout
    );

    let run = run_in(&dir, &base, &[("COS_WARNING", "4")]);
    assert!(
        run.perfdata().starts_with("rating=5;@0:4;@0:0;0;5 "),
        "variable over file: {}",
        run.stdout
    );

    let mut args = base.to_vec();
    args.extend(["--warning", "3"]);
    let run = run_in(&dir, &args, &[("COS_WARNING", "4")]);
    assert!(
        run.perfdata().starts_with("rating=5;@0:3;@0:0;0;5 "),
        "flag over variable: {}",
        run.stdout
    );
}

#[test]
fn proxy_and_netrc_from_the_environment_are_never_used() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let dir = scratch_dir("no-proxy");
    // A proxy that does not exist and credentials for the target: using either would show.
    let dead_proxy = format!("http://127.0.0.1:{}", crate::support::closed_port());
    std::fs::write(
        dir.join(".netrc"),
        "machine 127.0.0.1 login admin password secret\n",
    )
    .unwrap();
    let ca = fake.ca_file().display().to_string();
    let host = fake.host_port();
    let run = run_in(
        &dir,
        &["-H", &host, "--ca-file", &ca, "--update-source", "bundled"],
        &[
            ("HTTP_PROXY", &dead_proxy),
            ("HTTPS_PROXY", &dead_proxy),
            ("ALL_PROXY", &dead_proxy),
            ("http_proxy", &dead_proxy),
            ("https_proxy", &dead_proxy),
            ("SSL_CERT_FILE", "/nonexistent/ca.pem"),
            ("NETRC", dir.join(".netrc").to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    for request in fake.requests() {
        // The only credential a scan sends is the published demo account, never .netrc's.
        if let Some(auth) = request.header("authorization") {
            assert_eq!(
                auth, "Basic ZGVubmlzOmRlbW8=",
                "credentials sent: {request:?}"
            );
        }
        assert!(request.header("proxy-authorization").is_none());
    }
    assert!(fake.requests().iter().any(|r| r.path() == "/status.php"));
}

#[test]
fn other_products_and_non_instances_are_unknown() {
    // A product of neither family (Infinite Scale has its own tests, tests/it/ocis.rs).
    let other = FakeInstance::start(healthy().status_override(
        r#"{"installed": true, "productname": "Nextcloud", "versionstring": "30.0.1"}"#,
    ));
    let run = scan(&other, "other", &[]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        format!(
            "UNKNOWN: cannot scan {host}: https://{host}/status.php reports the product \"Nextcloud\", which this check does not know (it checks OpenCloud or ownCloud Infinite Scale)",
            host = other.host_port()
        )
    );

    // A web server whose /status.php is its catch-all page.
    let spa = FakeInstance::start(healthy().status_override("<!DOCTYPE html><html></html>"));
    let run = scan(&spa, "spa", &[]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.line(0).contains("did not answer a status document"),
        "{}",
        run.stdout
    );

    // Only the legacy version in the status document: the capabilities still carry the release.
    let legacy_status = r#"{"installed": true, "version": "0.1.0.0", "productname": "OpenCloud"}"#;
    let legacy = FakeInstance::start(healthy().status_override(legacy_status));
    let run = scan(&legacy, "legacy", &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&legacy, "4.0.0", "E"));

    // Neither document names the release: it cannot be judged, and 0.1.0.0 is never taken for one.
    let unversioned = FakeInstance::start(healthy().status_override(legacy_status).route(
        "GET",
        "/ocs/v1.php/cloud/capabilities",
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
    ));
    let run = scan(&unversioned, "unversioned", &[]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.line(0).contains(
            "reports no release (productversion; the legacy version 0.1.0.0 is not a release)"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn redirects_are_never_followed() {
    let fake = FakeInstance::start(healthy().redirect_to("https://elsewhere.example/status.php"));
    let run = scan(&fake, "redirect", &[]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.line(0)
            .contains("redirects to https://elsewhere.example/status.php"),
        "{}",
        run.stdout
    );
}

#[test]
fn operator_mistakes_are_unknown_with_one_line() {
    let dir = scratch_dir("mistakes");
    for (args, expected) in [
        (
            &["-H", "x.example", "-w", "2", "-c", "3"][..],
            "UNKNOWN: --critical 3 exceeds --warning 2; both are ratings 0-5 and critical must be at or below warning\n",
        ),
        (
            &["-H", "x.example", "--critcal", "2"][..],
            "UNKNOWN: unknown option --critcal; did you mean --critical? (see -h)\n",
        ),
        (
            &["-H", "x.example", "--check-only"][..],
            "UNKNOWN: --check-only goes with --upgrade-self: write --upgrade-self check (or --upgrade-self --check-only)\n",
        ),
        (
            &["-H", "x.example", "--scrape-interval", "30"][..],
            "UNKNOWN: --scrape-interval configures the metrics exporter, which only --prometheus-listen-port starts; add --prometheus-listen-port 9102 or remove --scrape-interval\n",
        ),
        (
            &[][..],
            "UNKNOWN: no target given; pass -H/--host or --host-list (or set COS_HOST)\n",
        ),
    ] {
        let run = run_in(&dir, args, &[]);
        assert_eq!(run.code, 3, "{args:?}");
        assert_eq!(run.stdout, expected, "{args:?}");
    }
}

#[test]
fn help_and_version() {
    let dir = scratch_dir("help");
    let run = run_in(&dir, &["-h"], &[]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("--eol-warning DAYS"));
    let run = run_in(&dir, &["--version"], &[]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("release schedule updated 2026-10-12"),
        "{}",
        run.stdout
    );
}

#[test]
fn debug_prints_the_explanation_before_the_perfdata() {
    let fake = FakeInstance::start(healthy());
    let run = scan(&fake, "debug", &["--debug"]);
    assert_eq!(run.code, 2);
    assert!(run.has_line("Rating explanation:"), "{}", run.stdout);
    assert!(
        run.has_line("  starting rating 1 (E): critical or high vulnerabilities match the version")
    );
    assert!(run.has_line("Remediation plan:"));
    assert!(run.has_line("  1. [the instance] Upgrade to 4.0.8. (resolves vulnerability:GHSA-vf5j-r2hw-2hrw, vulnerability:GHSA-gf4p-7p27-26w7)"), "{}", run.stdout);
    assert!(run.has_line("Findings:"));
    assert!(run.lines().last().unwrap().starts_with("|rating=1;"));
}

fn osv(id: &str, aliases: &[&str], package: &str, introduced: &str, fixed: &str) -> String {
    let aliases: Vec<String> = aliases.iter().map(|a| format!("\"{a}\"")).collect();
    format!(
        r#"{{"id": "{id}", "aliases": [{}], "summary": "test advisory {id}",
            "database_specific": {{"severity": "MODERATE"}},
            "affected": [{{"package": {{"name": "{package}", "ecosystem": "Go"}},
              "ranges": [{{"type": "SEMVER", "events": [{{"introduced": "{introduced}"}}, {{"fixed": "{fixed}"}}]}}]}}]}}"#,
        aliases.join(",")
    )
}

#[test]
fn advisory_feed_is_merged_after_bundled_data_and_deduplicated() {
    let documents = format!(
        "[{}, {}, {}]",
        osv(
            "GO-2026-9001",
            &["GHSA-test-0001"],
            "github.com/opencloud-eu/opencloud",
            "8.0.0",
            "8.1.1"
        ),
        // The bundled GHSA-vf5j-r2hw-2hrw under its Go id: must not count twice.
        osv(
            "GO-2026-4447",
            &["GHSA-vf5j-r2hw-2hrw"],
            "github.com/opencloud-eu/opencloud",
            "4.0.0",
            "4.0.3"
        ),
        // A component advisory (another package) never matches the product.
        osv(
            "GO-2026-4444",
            &["GHSA-9j2f-3rj3-wgpg"],
            "github.com/opencloud-eu/reva",
            "0",
            "9.9.9"
        )
    );
    let feed = FeedServer::start(vec![(200, documents)]);
    let url = feed.url("/osv.json");
    let env = [("COS_SCANNER_VULNERABILITY_FEED", url.as_str())];

    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let run = scan_env(&fake, "advisory-feed", &[], &env);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "WARNING: OpenCloud 8.1.0 has 1 known vulnerability (GO-2026-9001 medium); upgrade to 8.1.1"
    );

    let old = FakeInstance::start(healthy());
    let run = scan_env(&old, "advisory-feed-dedup", &[], &env);
    assert!(
        run.perfdata().contains(" vulnerabilities=2;0;;0 "),
        "{}",
        run.stdout
    );
}

#[test]
fn unreachable_advisory_feed_is_ignored() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let url = format!(
        "http://127.0.0.1:{}/osv.json",
        crate::support::closed_port()
    );
    let run = scan_env(
        &fake,
        "advisory-feed-down",
        &[],
        &[("COS_SCANNER_VULNERABILITY_FEED", &url)],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&fake, "8.1.0", "A+"));
}

#[test]
fn unreadable_advisory_file_is_an_operator_error() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let run = scan_env(
        &fake,
        "advisory-file-missing",
        &[],
        &[(
            "COS_SCANNER_VULNERABILITY_DB",
            "/nonexistent/advisories.json",
        )],
    );
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert_eq!(
        run.stdout,
        "UNKNOWN: scanner.vulnerability_db file /nonexistent/advisories.json does not exist; \
         point scanner.vulnerability_db at native, GitHub advisory or OSV JSON files\n"
    );
    // Found while the settings were read, before the first packet.
    assert_eq!(fake.request_count(), 0, "{:?}", fake.requests());
}

#[test]
fn a_fixed_release_track_changes_the_lifecycle() {
    // 7.2 is on rolling (ended when 7.3 opened) and production (still supported).
    let fake = FakeInstance::start(healthy().version("7.2.4"));
    let run = scan(&fake, "track-auto", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.has_line("Release lifecycle: 7.2.4 is the current release (production)"),
        "{}",
        run.stdout
    );
    let run = scan(&fake, "track-rolling", &["--release-track", "rolling"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.line(2),
        "Release lifecycle: 7.2 (rolling) is end of life since 2026-07-14; upgrade to 8.1.0 (rolling track)"
    );
}

#[test]
fn hostile_answers_end_unknown_without_hanging() {
    // Headers beyond the cap.
    let fake = FakeInstance::start(healthy().huge_header());
    let run = scan(&fake, "huge-header", &["--retries", "0"]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.line(0).contains("response headers exceed 64 KiB"),
        "{}",
        run.stdout
    );

    // A body that never ends is cut at the cap.
    let fake = FakeInstance::start(healthy().endless_body());
    let run = scan(&fake, "endless", &["--retries", "0"]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.line(0).contains("sent more than 1 MiB"),
        "{}",
        run.stdout
    );

    // A body dripping one byte at a time is cut by the request deadline.
    let fake = FakeInstance::start(healthy().slow_drip(std::time::Duration::from_millis(50)));
    let run = scan(&fake, "slow-drip", &["--retries", "0", "--timeout", "0.5"]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.line(0).contains("gave up after 1 attempt(s)"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_operators_proxy_carries_every_connection() {
    let fake = FakeInstance::start(healthy().version("8.1.0"));
    let proxy = crate::support::ConnectProxy::start();
    let run = scan(&fake, "proxy", &["--proxy", &proxy.url()]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let tunnels = proxy.tunnels();
    // The TLS inspection and the HTTP requests both went through it, to the target only.
    assert!(tunnels.len() >= 2, "{tunnels:?}");
    assert!(
        tunnels.iter().all(|t| *t == fake.host_port()),
        "{tunnels:?}"
    );
    let connections_seen: std::collections::HashSet<_> =
        fake.requests().iter().map(|r| r.peer).collect();
    assert!(!connections_seen.is_empty());

    // COS_PROXY works the same; a proxy that refuses makes the scan fail, not bypass it.
    let dead = format!("http://127.0.0.1:{}", crate::support::closed_port());
    let run = scan_env(
        &fake,
        "proxy-dead",
        &["--retries", "0"],
        &[("COS_PROXY", &dead)],
    );
    assert_eq!(run.code, 3, "{}", run.stdout);
}

#[test]
fn a_target_written_host_port_slash_is_the_instance_root() {
    let fake = FakeInstance::start(healthy().version("4.0.8"));
    let with_slash = format!("{}/", fake.host_port());
    let run = crate::support::plugin::scan("trailing-slash", &with_slash, &fake, &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.line(1), host_line(&fake, "4.0.8", "A+"));

    let with_path = format!("{}/cloud", fake.host_port());
    let run = crate::support::plugin::scan("path-without-scheme", &with_path, &fake, &[]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.line(0).contains("a path needs a scheme"),
        "{}",
        run.stdout
    );
}

#[test]
fn detail_lines_follow_the_default_output_layout() {
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let dir = scratch_dir("layout-files");
    let policy = dir.join("policy.yml");
    std::fs::write(&policy, "minimum_rating: 0\n").unwrap();
    let baseline = dir.join("baseline.json");
    let (policy, baseline) = (policy.display().to_string(), baseline.display().to_string());
    let run = crate::support::plugin::scan(
        "layout",
        &fake.host_port(),
        &fake,
        &[
            "--check-hardening",
            "--policy",
            &policy,
            "--baseline",
            &baseline,
        ],
    );
    // The spec's "Default output layout", in order.
    let layout = [
        "Release lifecycle: ",
        "Missing hardening: ",
        "Additional checks failed (",
        "Update check (",
        "Coverage: ",
        "Configuration fingerprint: ",
        "Baseline: ",
        "Policy: ",
    ];
    let positions: Vec<usize> = layout
        .iter()
        .map(|prefix| {
            run.stdout
                .lines()
                .position(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("no line {prefix:?}\n{}", run.stdout))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "{positions:?}\n{}",
        run.stdout
    );
}

#[test]
fn the_scanner_answers_an_unknown_subcommand_with_its_unknown_line_first() {
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-scanner"))
        .arg("foo")
        .env_clear()
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stdout.lines().next(),
        Some(
            "UNKNOWN: unknown subcommand \"foo\"; use one of scan, serve, web, limits, review-waivers, fleet, snippets, configure (see -h)"
        ),
        "{stdout}"
    );
}

#[test]
fn an_ipv6_target_with_a_zone_connects_through_its_interface_without_dns() {
    let bind: std::net::SocketAddr = "[::1]:0".parse().unwrap();
    let Ok(fake) = FakeInstance::start_at(healthy().version("4.0.8"), bind) else {
        eprintln!("skipped: no IPv6 loopback on this machine");
        return;
    };
    let port = fake.port();
    // `lo` reaches ::1; the zone is resolved to its interface, never looked up as a name.
    let target = format!("[::1%25lo]:{port}");
    let run = crate::support::plugin::scan("ipv6-zone", &target, &fake, &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.line(1)
            .starts_with(&format!("OpenCloud 4.0.8 on [::1%lo]:{port}, rating: A+")),
        "{}",
        run.stdout
    );

    let run = crate::support::plugin::scan(
        "ipv6-zone-unknown",
        &format!("[fe80::1%25nosuchif0]:{port}"),
        &fake,
        &[],
    );
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        format!(
            "UNKNOWN: -H [fe80::1%nosuchif0]:{port}: this host has no network interface \"nosuchif0\" (the IPv6 zone); write the interface that reaches the address, e.g. [fe80::1%25eth0]"
        )
    );
}

/// Line 1 is what monitoring lists and notifications show: at most 200 characters on the real
/// OpenCloud 4.0.0 answers with every weakness the captures hold (demo accounts, basic auth,
/// exposed files, version headers, CORS) and the optional checks on, the cause that decided
/// the state first; every cause stays in full in the long output.
#[test]
fn line_one_fits_a_monitoring_screen_on_a_default_4_0_0() {
    let fake = FakeInstance::start(
        InstanceConfig::default()
            .version("4.0.0")
            .basic_auth(true)
            .route(
                "GET",
                "/.env",
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nOC_JWT_SECRET=x\n",
            ),
    );
    let extra = ["--check-hardening", "--login-throttling"];
    let run = scan(&fake, "line-one-4.0.0", &extra);
    let line = run.line(0);
    assert!(
        line.chars().count() <= 200,
        "{} characters: {line}",
        line.chars().count()
    );
    assert!(line.starts_with("CRITICAL: "), "{line}");
    assert_eq!(run.code, 2);
    let mut json_args = extra.to_vec();
    json_args.extend(["--format", "json"]);
    let json = scan(&fake, "line-one-4.0.0-json", &json_args);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let message = doc[0]["message"].as_str().unwrap();
    assert!(
        message.chars().count() > 200,
        "the captures make a long message: {message}"
    );
    let causes = run
        .stdout
        .lines()
        .find(|l| l.starts_with("Causes: "))
        .unwrap_or_else(|| panic!("no Causes line:\n{}", run.stdout));
    assert_eq!(
        causes,
        format!(
            "Causes: {}",
            message.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    );
    // The performance data still closes the output.
    assert!(run.stdout.lines().last().unwrap().starts_with('|'));
}
