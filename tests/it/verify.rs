//! `--verify-remediation` end to end with the real binary against fake instances: each exit of
//! the spec's table, family roots, waivers not applied, `--format json`, and that only the
//! probes measuring the named ids reach the instance (besides the status document every scan
//! needs). In process, over the whole check registry: every id a full scan decides, a
//! verification decides the same way.

use crate::support::{FakeInstance, InstanceConfig, RecordedRequest};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;
use storage_security::budget::Budget;
use storage_security::checks;
use storage_security::clock::Now;
use storage_security::probe::plan;
use storage_security::report::Status;
use storage_security::settings::Settings;
use storage_security::severity::Severity;
use storage_security::verify::{self, Access, Outcome};

use crate::support::plugin::{NOW, Run, scratch};

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
    crate::support::plugin::scan(&format!("verify-{name}"), &fake.host_port(), fake, &args)
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
fn basic_auth_off_is_verified_by_the_demo_sign_in_it_rests_on() {
    // A default install: the demo account signs in, its password is refused over basic auth.
    let fake = FakeInstance::start(default_install());
    let run = verify(&fake, "basic-auth-off", "basicAuthDisabled", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        verdict(&run, "basicAuthDisabled").starts_with(
            "passes: dennis signs in through the identity provider but not over basic auth"
        ),
        "{}",
        run.stdout
    );
    // The first demo account's sign-in only, not every demo account's.
    assert_eq!(fake.sign_ins().count, 1);

    let fake = FakeInstance::start(default_install().basic_auth(true));
    let run = verify(&fake, "basic-auth-on", "basicAuthDisabled", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        verdict(&run, "basicAuthDisabled").starts_with("still fails (medium)"),
        "{}",
        run.stdout
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

// ---------------------------------------------------------------------------------------------
// Every id a full scan decides, verify decides the same way: over the whole registry, in
// process (one fake instance per configuration, one scan, then one verification per id).

/// Rows no loopback test can decide, in a full scan or a verification: plain HTTP is probed
/// only on port 80 beside 443 (a fake listens on one ephemeral port), and CAA and DNSSEC are
/// looked up for DNS names only (the fakes are reached by address, and no test asks real DNS).
const UNDECIDABLE_ON_LOOPBACK: &[&str] = &["httpsEnforced", "caaRecord", "dnssec"];

/// The settings of a hermetic full scan of `fake` (hardening and sign-in throttling on, so
/// the scan decides every row it can), probing `debug_ports`.
fn scan_settings(name: &str, fake: &FakeInstance, debug_ports: &str) -> Settings {
    let host = fake.host_port();
    let flags = crate::support::plugin::hermetic_with_debug_ports(&fake.ca_file());
    let mut args = vec!["-H", &host, "--check-hardening", "--login-throttling"];
    args.extend(flags.iter().map(String::as_str));
    crate::support::plugin::settings(
        &format!("verify-parity-{name}"),
        &args,
        &[("COS_SCANNER_DEBUG_PORTS", debug_ports)],
    )
}

/// What a full scan concluded: `Some(None)` passed, `Some(Some(severity))` failed.
type Decision = Option<Severity>;

fn decision(status: Status, severity: Severity) -> Option<Decision> {
    match status {
        Status::Passed => Some(None),
        Status::Failed => Some(Some(severity)),
        _ => None,
    }
}

/// Scans `fake` in full, then verifies every verifiable id the scan decided and every
/// verifiable registry row on its own, and compares. Returns the registry rows the scan
/// decided (by row id) and the mismatches found.
fn compare_with_full_scan(
    name: &str,
    fake: &FakeInstance,
    debug_ports: &str,
) -> (BTreeSet<&'static str>, Vec<String>) {
    let settings = scan_settings(name, fake, debug_ports);
    let now = Now(NOW.parse().unwrap());
    let budget = Budget::new(Instant::now(), settings.time_budget);
    let scanner = settings.scanner(now, budget).unwrap();
    let target = &settings.targets[0];
    let scan = scanner.scan(target).unwrap();
    assert!(scan.error.is_none(), "{name}: {:?}", scan.error);

    let mut full: BTreeMap<String, Decision> = BTreeMap::new();
    let mut rows = BTreeSet::new();
    for f in &scan.findings {
        let Some(spec) = checks::spec(&f.id).filter(|s| s.verifiable()) else {
            continue;
        };
        if let Some(d) = decision(f.status, f.severity) {
            full.insert(f.id.clone(), d);
            rows.insert(spec.id);
        }
    }
    let mut asked: BTreeSet<String> = full.keys().cloned().collect();
    asked.extend(
        checks::registry()
            .filter(|c| c.verifiable())
            .map(|c| c.id.to_string()),
    );
    let access = Access {
        config: &settings.scan,
        tls_min_days: settings.tls_min_days,
        roots: &scanner.roots,
        proxy: scanner.proxy.as_ref(),
        budget: scanner.budget(),
    };
    let mut mismatches = Vec::new();
    for id in asked {
        let v = verify::verify(target, std::slice::from_ref(&id), &access, now);
        // A family root stands for its members: each is compared on its own.
        for r in &v.results {
            let Some(expected) = full.get(&r.id) else {
                continue;
            };
            let got = match &r.outcome {
                Outcome::Passes => Some(None),
                Outcome::Fails { severity } => Some(Some(*severity)),
                _ => None,
            };
            if got != Some(*expected) {
                mismatches.push(format!(
                    "{name}: --verify-remediation {id}: {} is {:?}, the full scan {}",
                    r.id,
                    r.outcome,
                    match expected {
                        None => "passed it".to_string(),
                        Some(s) => format!("failed it ({s})"),
                    }
                ));
            }
        }
        // Every finding the id stands for is reported (a root: every member the scan found).
        let member_prefix = format!("{id}:");
        for expected in full
            .keys()
            .filter(|k| **k == id || k.starts_with(&member_prefix))
        {
            if !v.results.iter().any(|r| r.id == *expected) {
                mismatches.push(format!(
                    "{name}: --verify-remediation {id} did not report {expected}"
                ));
            }
        }
    }
    (rows, mismatches)
}

/// A hardened OpenCloud: no demo accounts, no version headers, a strict CSP, every cookie
/// well set, failed sign-ins throttled.
fn hardened() -> InstanceConfig {
    default_install()
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
        .remove_header("X-Web-Version")
        .set_header(
            "Content-Security-Policy",
            "default-src 'self'; frame-ancestors 'self'; object-src 'none'",
        )
        .set_header("Permissions-Policy", "camera=(), microphone=()")
        .add_header(
            "Set-Cookie",
            "__Host-session=1; Path=/; Secure; HttpOnly; SameSite=Strict",
        )
        .route(
            "POST",
            plan::LOGON_PATH,
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 60\r\nContent-Length: 0\r\n\r\n",
        )
}

/// An OpenCloud with one of each weakness a route can show.
fn weakened() -> InstanceConfig {
    // Weakened sharing settings, and link expiry reported (and not enforced).
    let capabilities = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/weakened-capabilities.json"
    ))
    .unwrap()
    .replacen(
        r#""expire_date": {"enabled": false}"#,
        r#""expire_date": {"enabled": true, "enforced": false}"#,
        1,
    );
    reflecting_cors()
        .add_header("Set-Cookie", "__Host-sid=1; Path=/")
        .route(
            "GET",
            "/.env",
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nOC_JWT_SECRET=s3cret\n",
        )
        .route(
            "GET",
            "/data/",
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><head><title>Index of /data/</title></head></html>",
        )
        .route(
            "GET",
            "/graph/v1.0/users",
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"value\": []}",
        )
        .route(
            "GET",
            "/metrics",
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 42\n",
        )
        .route(
            "TRACE",
            "/",
            "HTTP/1.1 200 OK\r\nContent-Type: message/http\r\n\r\nTRACE / HTTP/1.1\r\nX-Cos-Trace-Probe: cos-trace-echo\r\n",
        )
        .route(
            "GET",
            "/ocs/v1.php/cloud/capabilities",
            &format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{capabilities}"),
        )
        .route(
            "GET",
            "/.well-known/openid-configuration",
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"issuer\": \"http://cloud.example\", \"authorization_endpoint\": \"https://idp.elsewhere.example/authorize\"}",
        )
}

#[test]
fn verify_decides_every_id_as_a_full_scan_does() {
    let debug = crate::support::start_debug_listener(&default_install());
    let closed = crate::support::closed_port();
    let debug_ports = format!("{},{closed}", debug.port());
    let configurations = [
        ("default", default_install()),
        ("basic-auth", default_install().basic_auth(true)),
        ("hardened", hardened()),
        ("weakened", weakened()),
        ("ocis", InstanceConfig::ocis()),
        ("ocis-basic-auth", InstanceConfig::ocis().basic_auth(true)),
        ("plain-http", default_install().plain()),
    ];
    let mut decided = BTreeSet::new();
    let mut mismatches = Vec::new();
    for (name, config) in configurations {
        let fake = FakeInstance::start(config);
        let (rows, found) = compare_with_full_scan(name, &fake, &debug_ports);
        decided.extend(rows);
        mismatches.extend(found);
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    let never: Vec<&str> = checks::registry()
        .filter(|c| c.verifiable() && !decided.contains(c.id))
        .map(|c| c.id)
        .filter(|id| !UNDECIDABLE_ON_LOOPBACK.contains(id))
        .collect();
    assert!(
        never.is_empty(),
        "no configuration has a full scan decide {never:?}: add one"
    );
}
