//! `--verify-remediation` end to end with the real binary against fake instances: each exit of
//! the spec's table, family roots, waivers not applied, `--format json`, and that only the
//! probes measuring the named ids reach the instance (besides the status document every scan
//! needs).

mod support;

use storage_security::probe::plan;
use support::{FakeInstance, InstanceConfig, RecordedRequest};

use support::plugin::{NOW, Run, scratch};

/// The line of one id (`<id>: <verdict>...`).
fn id_line<'a>(run: &'a Run, id: &str) -> Option<&'a str> {
    let prefix = format!("{id}: ");
    run.stdout.lines().skip(1).find(|l| l.starts_with(&prefix))
}

fn verdict(run: &Run, id: &str) -> String {
    let line = id_line(run, id).unwrap_or_default();
    line[line.len().min(id.len() + 2)..].to_string()
}

fn verify(fake: &FakeInstance, name: &str, ids: &str, extra: &[&str]) -> Run {
    let mut args = vec!["--verify-remediation", ids];
    args.extend(extra);
    support::plugin::scan(&format!("verify-{name}"), &fake.host_port(), fake, &args)
}

/// OpenCloud as installed: demo accounts on, CORS for any origin, version headers.
fn default_install() -> InstanceConfig {
    InstanceConfig::default().version("8.1.0")
}

/// A reverse proxy that reflects the request's Origin without credentials: a medium finding.
fn reflecting_cors() -> InstanceConfig {
    default_install()
        .set_header("Access-Control-Allow-Origin", plan::FOREIGN_ORIGIN)
        .remove_header("Access-Control-Allow-Credentials")
}

fn is_sign_in(r: &RecordedRequest) -> bool {
    r.method == "POST" && r.path() == plan::LOGON_PATH
}

fn is_exposed_file_probe(r: &RecordedRequest) -> bool {
    plan::exposed_files().contains(&r.path())
}

#[test]
fn every_id_passing_after_the_fix_is_ok() {
    let fake = FakeInstance::start(
        default_install()
            .demo_users(false)
            .remove_header("Access-Control-Allow-Origin"),
    );
    let run = verify(
        &fake,
        "all-pass",
        "corsOriginRestricted,demoUsersDisabled",
        &["--verify-remediation", "traceMethodDisabled,exposed:/.env"],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.line(0).starts_with("OK: "), "{}", run.stdout);
    for id in [
        "corsOriginRestricted",
        "demoUsersDisabled",
        "traceMethodDisabled",
        "exposed:/.env",
    ] {
        assert!(
            verdict(&run, id).starts_with("passes"),
            "{id}\n{}",
            run.stdout
        );
    }
    assert_eq!(run.stdout.lines().count(), 5, "{}", run.stdout);
}

#[test]
fn demo_accounts_still_signing_in_is_critical() {
    let fake = FakeInstance::start(default_install());
    let run = verify(&fake, "demo-on", "demoUsersDisabled", &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.line(0).starts_with("CRITICAL: "), "{}", run.stdout);
    assert!(
        verdict(&run, "demoUsersDisabled")
            .starts_with("still fails (critical): demo accounts sign in with their published password: dennis (administrator)"),
        "{}",
        run.stdout
    );
    // No rating: a verification is not a scan.
    assert!(!run.stdout.contains("rating"), "{}", run.stdout);
}

#[test]
fn a_medium_finding_still_failing_warns() {
    let fake = FakeInstance::start(reflecting_cors());
    let run = verify(&fake, "cors-reflected", "corsOriginRestricted", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.line(0).starts_with("WARNING: "), "{}", run.stdout);
    assert!(
        verdict(&run, "corsOriginRestricted")
            .starts_with("still fails (medium): /graph/v1.0/me: a foreign origin is reflected"),
        "{}",
        run.stdout
    );
}

#[test]
fn waivers_are_not_applied() {
    let fake = FakeInstance::start(reflecting_cors());
    let run = verify(
        &fake,
        "waived",
        "corsOriginRestricted",
        &["--ignore-hardening", "corsOriginRestricted"],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        verdict(&run, "corsOriginRestricted").starts_with("still fails (medium)"),
        "{}",
        run.stdout
    );
}

#[test]
fn ids_only_a_full_scan_settles_and_unknown_ids_are_unknown() {
    let fake = FakeInstance::start(default_install());
    let run = verify(&fake, "eol", "eol", &[]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(run.line(0).starts_with("UNKNOWN: "), "{}", run.stdout);
    assert_eq!(
        verdict(&run, "eol"),
        "needs a full scan: can only be settled by a full scan",
        "{}",
        run.stdout
    );

    let run = verify(&fake, "unknown-id", "noSuchCheck", &[]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(run.line(0).starts_with("UNKNOWN: "), "{}", run.stdout);
    assert!(
        verdict(&run, "noSuchCheck").ends_with("unknown finding id; see docs/checks.md"),
        "{}",
        run.stdout
    );

    // Together with a passing id the answer is still UNKNOWN.
    let run = verify(
        &fake,
        "mixed",
        "traceMethodDisabled,vulnerability:GHSA-0000-0000-0000,httpsAvailable,addressParity",
        &[],
    );
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(verdict(&run, "traceMethodDisabled").starts_with("passes"));
    for id in [
        "vulnerability:GHSA-0000-0000-0000",
        "httpsAvailable",
        "addressParity",
    ] {
        assert!(
            verdict(&run, id).contains("can only be settled by a full scan"),
            "{id}\n{}",
            run.stdout
        );
    }
}

#[test]
fn a_family_root_rechecks_every_member() {
    let fake = FakeInstance::start(default_install().route(
        "GET",
        "/.env",
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nOC_JWT_SECRET=s3cret\nIDM_ADMIN_PASSWORD=admin\n",
    ));
    let run = verify(&fake, "exposed-root", "exposed", &[]);
    // An exposed .env is high: CRITICAL.
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        verdict(&run, "exposed:/.env").starts_with("still fails (high)"),
        "{}",
        run.stdout
    );
    for path in plan::exposed_files().into_iter().filter(|p| *p != "/.env") {
        let id = format!("exposed:{path}");
        assert!(
            verdict(&run, &id).starts_with("passes"),
            "{id}\n{}",
            run.stdout
        );
    }
    assert_eq!(
        run.stdout.lines().count(),
        1 + plan::exposed_files().len(),
        "{}",
        run.stdout
    );
    let requests = fake.requests();
    for path in plan::exposed_files() {
        assert!(
            requests
                .iter()
                .any(|r| r.method == "GET" && r.path() == path),
            "{path} was not probed"
        );
    }
    assert!(!requests.iter().any(is_sign_in), "no demo sign-in");
    assert!(!requests.iter().any(|r| r.method == "TRACE"));
}

#[test]
fn verifying_trace_sends_only_the_trace_probe() {
    let fake = FakeInstance::start(default_install());
    let run = verify(&fake, "trace-only", "traceMethodDisabled", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        verdict(&run, "traceMethodDisabled").starts_with("passes"),
        "{}",
        run.stdout
    );
    let requests = fake.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.method == "TRACE" && r.path() == "/"),
        "the TRACE probe was not sent"
    );
    assert!(!requests.iter().any(is_sign_in), "demo sign-ins were sent");
    assert!(
        !requests.iter().any(is_exposed_file_probe),
        "exposed-file probes were sent"
    );
    // Only the status document every scan needs, and the probe itself.
    let sent: Vec<String> = requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.path()))
        .collect();
    assert!(
        sent.iter()
            .all(|s| s == "GET /status.php" || s == "TRACE /"),
        "{sent:?}"
    );
}

#[test]
fn json_prints_the_measurement_document() {
    let fake = FakeInstance::start(default_install());
    let run = verify(
        &fake,
        "json",
        "demoUsersDisabled,eol",
        &["--format", "json"],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stdout);
    assert_eq!(doc["state"], "CRITICAL");
    assert_eq!(doc["host"], fake.host_port());
    assert_eq!(doc["checkedAt"], NOW);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["id"], "demoUsersDisabled");
    assert_eq!(results[0]["outcome"], "fails");
    assert_eq!(results[0]["severity"], "critical");
    assert_eq!(results[0]["findings"][0]["status"], "failed");
    assert_eq!(results[1]["id"], "eol");
    assert_eq!(results[1]["outcome"], "needs-full-scan");
    assert_eq!(results[1]["why"], "can only be settled by a full scan");
    // No rating, no baseline, no webhook: a verification is not a scan result.
    for key in ["rating", "grade", "baseline", "webhook", "waivers"] {
        assert!(doc.get(key).is_none(), "{key}");
    }
}

#[test]
fn a_verification_leaves_the_baseline_alone() {
    let fake = FakeInstance::start(reflecting_cors());
    let baseline_dir = scratch("verify-baseline-file");
    let baseline = baseline_dir.join("baseline.json");
    let baseline_arg = baseline.display().to_string();
    let run = verify(
        &fake,
        "baseline",
        "corsOriginRestricted",
        &["--baseline", &baseline_arg],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(!baseline.exists(), "the baseline was written");
}
