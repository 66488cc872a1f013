//! Findings of the additional probes, end to end through the exit code, against fake instances
//! that answer like the real OpenCloud 4.0.0 (the captured install has demo accounts, CORS for
//! any origin, which is public access and passes, and version headers).

use crate::support::{FakeInstance, InstanceConfig};

use crate::support::plugin::Run;

/// A hermetic scan of one fake instance with `--debug`, which lists every finding.
fn scan(fake: &FakeInstance, name: &str, extra: &[&str]) -> Run {
    let mut args = vec!["--debug"];
    args.extend(extra);
    crate::support::plugin::scan(&format!("findings-{name}"), &fake.host_port(), fake, &args)
}

fn default_install() -> InstanceConfig {
    InstanceConfig::default().version("8.1.0")
}

#[test]
fn a_default_install_with_demo_accounts_warns_and_pages_with_critical_2() {
    let fake = FakeInstance::start(default_install());
    let run = scan(&fake, "default", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.line(0).starts_with("WARNING: demoUsersDisabled failed (critical): demo accounts sign in with their published password: dennis (administrator), margaret, alan, lynn, mary"), "{}", run.stdout);
    assert!(
        run.line(1)
            .ends_with("rating: D, last scanned: 2026-11-22T03:00:00Z"),
        "{}",
        run.stdout
    );
    assert!(
        run.has_line("Additional checks failed (4): demoUsersDisabled, versionDisclosure:X-Graph-Version, versionDisclosure:X-Idp-Version, versionDisclosure:X-Web-Version"),
        "{}",
        run.stdout
    );
    // Decided by the demo credential: dennis signs in through the IDP but not over basic auth.
    assert_eq!(
        run.finding("basicAuthDisabled").as_deref(),
        Some("Passed, medium")
    );
    for id in [
        "exposed:/opencloud.yaml",
        "exposed:/.env",
        "exposed:/proxy/server.key",
        "directoryListing",
        "traceMethodDisabled",
        "authentication:/remote.php/dav/files/",
        "authentication:/graph/v1.0/users",
        "identityProviderConsistent",
        "corsOriginRestricted",
    ] {
        assert_eq!(
            run.finding(id).map(|s| s.starts_with("Passed")),
            Some(true),
            "{id}: {}",
            run.stdout
        );
    }
    let run = scan(&fake, "default-critical", &["--critical", "2"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
}

#[test]
fn a_default_instance_of_the_current_release_rates_a_plus() {
    // OpenCloud's own defaults: no demo accounts (IDM_CREATE_DEMO_USERS is false), the Graph
    // preflight answered with `*` (public access), version headers (low: they do not cap).
    let fake = FakeInstance::start(default_install().demo_users(false));
    let run = scan(&fake, "default-current", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.line(1).contains("rating: A+,"), "{}", run.stdout);
    assert!(
        run.has_line("Additional checks failed (3): versionDisclosure:X-Graph-Version, versionDisclosure:X-Idp-Version, versionDisclosure:X-Web-Version"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.finding("corsOriginRestricted").as_deref(),
        Some("Passed, critical")
    );
}

#[test]
fn line_one_says_failed_checks_are_not_rated_when_rating_ignores_them() {
    let fake = FakeInstance::start(default_install());
    let mut args = vec!["-H".to_string(), fake.host_port(), "--debug".to_string()];
    args.extend(crate::support::plugin::hermetic(&fake.ca_file()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = crate::support::plugin::run(
        "findings-unrated",
        &args,
        &[("COS_SCANNER_EXTRA_CHECKS_RATING", "false")],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        "OK: OpenCloud 8.1.0 is up to date; 4 checks failed but are not rated",
        "{}",
        run.stdout
    );
    assert!(run.line(1).contains("rating: A+,"), "{}", run.stdout);
    assert!(
        run.has_line("Additional checks failed (4): demoUsersDisabled (not rated), versionDisclosure:X-Graph-Version (not rated), versionDisclosure:X-Idp-Version (not rated), versionDisclosure:X-Web-Version (not rated)"),
        "{}",
        run.stdout
    );

    // Rated, the low-severity version headers alone leave A+ and line 1 says they failed.
    let fake = FakeInstance::start(default_install().demo_users(false));
    let run = scan(&fake, "low-only", &[]);
    assert_eq!(
        run.line(0),
        "OK: OpenCloud 8.1.0 is up to date; 3 low-severity checks failed (they do not lower the rating)",
        "{}",
        run.stdout
    );
}

#[test]
fn basic_auth_enabled_is_found_with_a_real_credential() {
    let fake = FakeInstance::start(default_install().basic_auth(true));
    let run = scan(&fake, "basic-on", &[]);
    let status = run.finding("basicAuthDisabled").unwrap_or_default();
    assert!(status.starts_with("Failed, medium"), "{}", run.stdout);
}

#[test]
fn without_demo_accounts_basic_auth_cannot_be_decided() {
    let fake = FakeInstance::start(default_install().demo_users(false));
    let run = scan(&fake, "no-demo", &[]);
    assert_eq!(
        run.finding("demoUsersDisabled").as_deref(),
        Some("Passed, critical")
    );
    assert_eq!(
        run.finding("basicAuthDisabled").as_deref(),
        Some("Indeterminate, medium")
    );
    assert!(
        run.stdout.lines().any(|l| l.starts_with("Coverage: ")
            && l.ends_with(" 0 skipped, 1 indeterminate, 0 network-limited")),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.perf("coverage_inconclusive").as_deref(),
        Some("coverage_inconclusive=1;;;0")
    );
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("Configuration fingerprint: ")
                && l.len() == "Configuration fingerprint: ".len() + 8)
    );
}

#[test]
fn an_exposed_configuration_file_is_high() {
    let fake = FakeInstance::start(default_install().demo_users(false).route(
        "GET",
        "/opencloud.yaml",
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\ntoken_manager:\n  jwt_secret: s3cret\nmachine_auth_api_key: k\n",
    ));
    let run = scan(&fake, "exposed-yaml", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.finding("exposed:/opencloud.yaml").as_deref(),
        Some("Failed, high, decisive"),
        "{}",
        run.stdout
    );
    assert!(run.line(1).contains("rating: C"), "{}", run.stdout);
}

#[test]
fn a_trace_echo_and_an_anonymous_file_api_are_found() {
    let fake = FakeInstance::start(
        default_install()
            .demo_users(false)
            .route("TRACE", "/", "HTTP/1.1 200 OK\r\nContent-Type: message/http\r\n\r\nTRACE / HTTP/1.1\r\nX-Cos-Trace-Probe: cos-trace-echo\r\n")
            .route("PROPFIND", "/remote.php/dav/files/", "HTTP/1.1 207 Multi-Status\r\nContent-Type: application/xml\r\n\r\n<d:multistatus xmlns:d=\"DAV:\"/>"),
    );
    let run = scan(&fake, "trace-dav", &["--critical", "2"]);
    assert_eq!(
        run.finding("traceMethodDisabled")
            .as_deref()
            .map(|s| s.starts_with("Failed, medium")),
        Some(true),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.finding("authentication:/remote.php/dav/files/")
            .as_deref(),
        Some("Failed, critical, decisive"),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
}

#[test]
fn hardening_from_headers_and_capabilities() {
    let fake = FakeInstance::start(default_install().demo_users(false));
    let run = scan(&fake, "hardening", &["--check-hardening"]);
    assert!(
        run.has_line("Missing hardening: hstsPreload, cspWithoutUnsafeInline, Permissions-Policy"),
        "{}",
        run.stdout
    );
    for id in [
        "publicLinkPasswordEnforced",
        "userEnumerationRestricted",
        "passwordPolicyEnforced",
    ] {
        assert_eq!(
            run.finding(id).map(|s| s.starts_with("Passed")),
            Some(true),
            "{id}"
        );
    }
    assert_eq!(
        run.finding("publicLinkExpirationEnforced")
            .map(|s| s.starts_with("Indeterminate")),
        Some(true)
    );
    assert_eq!(
        run.perf("hardenings_missing").as_deref(),
        Some("hardenings_missing=3;;;0")
    );
}

#[test]
fn no_extra_checks_runs_only_the_version_and_transport_checks() {
    let fake = FakeInstance::start(default_install());
    let run = scan(&fake, "no-extra", &["--no-extra-checks"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.finding("demoUsersDisabled").is_none());
    // Not "all passed": the additional checks did not run.
    assert!(
        run.has_line("Additional checks: not run (--no-extra-checks); the transport checks passed"),
        "{}",
        run.stdout
    );
    // Nothing but the status document, capabilities and the start page was asked for.
    let paths: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.path().to_string())
        .collect();
    assert!(
        paths
            .iter()
            .all(|p| ["/status.php", "/ocs/v1.php/cloud/capabilities", "/"].contains(&p.as_str())),
        "{paths:?}"
    );
    // The result document says so too.
    for (name, flags, ran) in [
        (
            "no-extra-json",
            &["--no-extra-checks", "--format", "json"][..],
            false,
        ),
        ("extra-json", &["--format", "json"][..], true),
    ] {
        let run = scan(&fake, name, flags);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
        assert_eq!(doc[0]["extraChecks"], ran, "{name}");
    }
}

#[test]
fn ignore_hardening_waives_by_id_and_pattern() {
    let fake = FakeInstance::start(
        default_install()
            .demo_users(false)
            .remove_header("Access-Control-Allow-Origin"),
    );
    let run = scan(
        &fake,
        "ignore-hardening",
        &[
            "--check-hardening",
            "--ignore-hardening",
            "hstsPreload, csp*,versionDisclosure,Permissions-Policy",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(!run.stdout.contains("Missing hardening"), "{}", run.stdout);
    assert!(
        run.has_line("Additional checks: all passed"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.perf("hardenings_missing").as_deref(),
        Some("hardenings_missing=0;;;0")
    );
    assert_eq!(
        run.perf("extra_checks_failed").as_deref(),
        Some("extra_checks_failed=0;;;0")
    );
}

#[test]
fn login_throttling_is_reported_but_never_rated() {
    let fake = FakeInstance::start(default_install().demo_users(false));
    let run = scan(&fake, "throttling", &["--login-throttling"]);
    assert!(
        run.has_line("Login throttling (not rated): 6 failed sign-ins for an account that cannot exist were all answered at once"),
        "{}",
        run.stdout
    );
    let attempts = fake
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.body_str().contains("cos-no-such-user"))
        .count();
    assert_eq!(attempts, 6);
    let without = scan(&fake, "throttling-off", &[]);
    assert_eq!(run.code, without.code, "never rated");
    assert!(!without.stdout.contains("Login throttling"));

    let throttled = FakeInstance::start(default_install().demo_users(false).route(
        "POST",
        "/signin/v1/identifier/_/logon",
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 60\r\n\r\n",
    ));
    let run = scan(&throttled, "throttled", &["--login-throttling"]);
    assert!(
        run.has_line("Login throttling (not rated): failed sign-ins are throttled from attempt 1"),
        "{}",
        run.stdout
    );
}

#[test]
fn weakened_sharing_settings_inconsistent_discovery_and_a_listing() {
    let capabilities = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/weakened-capabilities.json"
    ))
    .unwrap();
    let fake = FakeInstance::start(
        default_install()
            .demo_users(false)
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
            .route(
                "GET",
                "/data/",
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><head><title>Index of /data/</title></head><body><a href=\"idm/\">idm/</a></body></html>",
            ),
    );
    let run = scan(&fake, "weakened", &["--check-hardening"]);
    for id in [
        "publicLinkPasswordEnforced",
        "userEnumerationRestricted",
        "passwordPolicyEnforced",
    ] {
        assert!(
            run.finding(id).unwrap_or_default().starts_with("Failed"),
            "{id}\n{}",
            run.stdout
        );
    }
    assert!(
        run.finding("identityProviderConsistent")
            .unwrap_or_default()
            .starts_with("Failed, medium"),
        "{}",
        run.stdout
    );
    assert!(
        run.finding("directoryListing")
            .unwrap_or_default()
            .starts_with("Failed, high"),
        "{}",
        run.stdout
    );
    // A listing caps at 3 (C): WARNING.
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.line(1).contains("rating: C"), "{}", run.stdout);
}
