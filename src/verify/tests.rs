//! The selection of probes, the judging of ids and the exit states of `--verify-remediation`.

use super::*;
use crate::family::ProductFamily;
use crate::net::http::Endpoint;
use crate::net::http::Response;

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn selected(list: &[&str]) -> Selection {
    plan(&ids(list)).unwrap()
}

fn reported<'a>(selection: &'a Selection) -> Vec<&'a str> {
    let id = |r: &'a Requested| match r {
        Requested::Finding(id) | Requested::Settled { id, .. } => id.as_str(),
        Requested::Family(root) => root,
    };
    selection.requested.iter().map(id).collect()
}

fn settled(selection: &Selection, id: &str) -> Option<Outcome> {
    selection.requested.iter().find_map(|r| match r {
        Requested::Settled { id: i, outcome } if i == id => Some(outcome.clone()),
        _ => None,
    })
}

#[test]
fn no_id_is_an_error() {
    assert!(plan(&[]).is_err());
    assert!(plan(&ids(&["", "  "])).is_err());
}

#[test]
fn ids_no_probe_run_settles_need_a_full_scan() {
    let list = [
        "eol",
        "vulnerability:GHSA-xxxx-yyyy-zzzz",
        "vulnerability",
        "httpsAvailable",
        "addressParity",
        "tlsAddressParity",
        "dnsAddresses",
    ];
    let selection = selected(&list);
    for id in list {
        assert_eq!(
            settled(&selection, id),
            Some(Outcome::NeedsFullScan {
                why: NEEDS_FULL_SCAN.into()
            }),
            "{id}"
        );
    }
    assert!(!selection.needs_probes());
    assert!(selection.keys.is_empty());
}

#[test]
fn unknown_ids_and_unknown_members_are_unknown() {
    let list = [
        "nonsense",
        "traceMethodDisabled:x",
        "exposed:/etc/passwd",
        "authentication:/nowhere",
        "debugPort:http",
        "debugPort:0",
        "debugEndpoint:/healthz",
        "debugEndpoint:9205/nothing",
        "versionDisclosure:not a header",
    ];
    let selection = selected(&list);
    for id in list {
        assert_eq!(
            settled(&selection, id),
            Some(Outcome::Unknown {
                why: UNKNOWN_ID.into()
            }),
            "{id}"
        );
    }
    assert!(selection.keys.is_empty(), "{:?}", selection.keys);
}

#[test]
fn every_verifiable_row_is_measured_by_some_probe_plan() {
    for row in checks::registry().filter(|c| c.verifiable()) {
        let selection = selected(&[row.id]);
        assert!(
            !selection
                .requested
                .iter()
                .any(|r| matches!(r, Requested::Settled { .. })),
            "{} has no probes in the verification plan",
            row.id
        );
    }
}

#[test]
fn what_the_checks_read_names_probes_of_the_plan() {
    let endpoint = Endpoint {
        scheme: Scheme::Https,
        url_host: "cloud.example".into(),
        port: 443,
        base_path: String::new(),
    };
    let mut http: Vec<String> = plan::independent(true)
        .into_iter()
        .chain(plan::throttling(&endpoint))
        .map(|p| p.key)
        .collect();
    // The sign-ins that follow a discovery document naming the built-in identity provider.
    let discovery = Ok(probe::fixture(
        "opencloud-4.0.0/well-known-openid-configuration.txt",
    ));
    for family in ProductFamily::ALL {
        let dependent = plan::dependent(&endpoint, Some(&discovery), family);
        assert!(!dependent.is_empty());
        http.extend(dependent.into_iter().map(|p| p.key));
    }
    let other = [probe::LEGACY_TLS, probe::PLAIN_HTTP, probe::DNS];
    for row in checks::registry() {
        for measure in row.verified_by {
            match measure {
                Measure::Probe(key) => assert!(
                    http.iter().any(|k| k == key) || other.contains(key),
                    "{}: no probe has the key {key}",
                    row.id
                ),
                Measure::Probes(prefix) => assert!(
                    http.iter().any(|k| k.starts_with(prefix)),
                    "{}: no probe key starts with {prefix}",
                    row.id
                ),
                Measure::Keys(keys) => {
                    for key in keys() {
                        assert!(
                            http.contains(&key),
                            "{}: no probe has the key {key}",
                            row.id
                        );
                    }
                }
                Measure::Transport | Measure::EveryAnswer | Measure::DebugPorts => {}
            }
        }
    }
}

#[test]
fn trace_runs_the_trace_probe_only() {
    let selection = selected(&["traceMethodDisabled"]);
    assert_eq!(reported(&selection), ["traceMethodDisabled"]);
    assert_eq!(selection.keys, BTreeSet::from([plan::TRACE.to_string()]));
    assert!(selection.wants(plan::TRACE));
    let file = format!("{}/.env", plan::EXPOSED);
    let listener = format!("{}9205", probe::DEBUG_PORT);
    for key in [
        "demo:dennis",
        "basic:dennis",
        &file,
        plan::BASELINE,
        plan::ROOT,
        plan::CAPABILITIES,
        plan::OIDC,
        &listener,
        "throttle:1",
        probe::LEGACY_TLS,
        probe::PLAIN_HTTP,
        probe::DNS,
    ] {
        assert!(!selection.wants(key), "{key}");
    }
    assert!(selection.debug_ports(&[9205, 9141]).is_empty());
    assert!(!selection.login_throttling());
}

#[test]
fn a_family_root_rechecks_every_member() {
    let selection = selected(&["exposed"]);
    let expected: Vec<String> = plan::exposed_files()
        .iter()
        .map(|p| format!("exposed:{p}"))
        .collect();
    assert_eq!(reported(&selection), expected);
    for path in plan::exposed_files() {
        let key = format!("{}{path}", plan::EXPOSED);
        assert!(selection.wants(&key), "{key}");
    }
    assert!(
        selection.wants(plan::BASELINE),
        "answers are compared to it"
    );
    assert!(!selection.wants("demo:dennis"));

    let selection = selected(&["authentication"]);
    assert_eq!(reported(&selection).len(), 6);
    for (key, _, _, _) in plan::AUTHENTICATION {
        assert!(selection.wants(key), "{key}");
    }

    // Members known only once measured: the family is reported as it is found.
    let selection = selected(&["versionDisclosure", "versionDisclosure:x-web-version"]);
    assert_eq!(
        selection.requested,
        [Requested::Family("versionDisclosure")]
    );
    assert!(selection.every_http_probe);
    assert!(selection.wants("demo:dennis") && selection.wants(plan::TRACE));
    let listener = format!("{}9205", probe::DEBUG_PORT);
    assert!(!selection.wants("throttle:1") && !selection.wants(&listener));

    let selection = selected(&["debugPort"]);
    assert_eq!(selection.debug_ports(&[9205, 9141]), [9205, 9141]);
    let selection = selected(&["debugPort:9999", "debugEndpoint:9205/config"]);
    assert_eq!(
        reported(&selection),
        ["debugPort:9999", "debugEndpoint:9205/config"]
    );
    assert_eq!(selection.debug_ports(&[9141]), [9205, 9999]);
}

#[test]
fn members_are_named_as_the_checks_name_them() {
    let selection = selected(&[
        "versionDisclosure:x-WEB-version",
        "exposed:/.env",
        "exposed:/.env",
        "exposed",
    ]);
    assert_eq!(
        reported(&selection)[..2],
        ["versionDisclosure:X-Web-Version", "exposed:/.env"]
    );
    assert_eq!(reported(&selection).len(), 1 + plan::exposed_files().len());
}

#[test]
fn sign_in_checks_need_the_discovery_document() {
    let selection = selected(&["demoUsersDisabled"]);
    assert!(selection.wants(plan::OIDC));
    assert!(
        ProductFamily::all_demo_users()
            .iter()
            .all(|u| selection.wants(&format!("demo:{u}")))
    );
    assert!(!selection.wants("basic:dennis") && !selection.wants(plan::TRACE));
    // A refused credential proves basic auth off only for an account that signs in.
    let selection = selected(&["basicAuthDisabled"]);
    for family in ProductFamily::ALL {
        let first = family.describe().demo_accounts[0].user;
        assert!(selection.wants(plan::OIDC), "{first}");
        assert!(selection.wants(&format!("demo:{first}")), "{first}");
        assert!(selection.wants(&format!("basic:{first}")), "{first}");
    }
    assert!(!selection.wants(plan::TRACE) && !selection.login_throttling());
    // Only the first account's sign-in: the one tried over basic auth.
    assert!(!selection.wants("demo:margaret"));
    let selection = selected(&["loginThrottling"]);
    assert!(selection.login_throttling() && selection.wants("throttle:6"));
}

fn outcome(id: &str, outcome: Outcome) -> IdOutcome {
    IdOutcome {
        id: id.into(),
        outcome,
        findings: Vec::new(),
    }
}

fn verification(results: Vec<IdOutcome>) -> Verification {
    Verification {
        host: "cloud.example".into(),
        url: None,
        checked_at: "2026-11-22T03:00:00Z".into(),
        error: None,
        results,
    }
}

fn fails(severity: Severity) -> Outcome {
    Outcome::Fails { severity }
}

#[test]
fn exit_states_follow_the_table() {
    let pass = || outcome("traceMethodDisabled", Outcome::Passes);
    assert_eq!(exit_state(&verification(vec![pass(), pass()])), State::Ok);
    for (severity, state) in [
        (Severity::Low, State::Warning),
        (Severity::Medium, State::Warning),
        (Severity::High, State::Critical),
        (Severity::Critical, State::Critical),
    ] {
        let v = verification(vec![pass(), outcome("x", fails(severity))]);
        assert_eq!(exit_state(&v), state, "{severity}");
    }
    let full = outcome(
        "eol",
        Outcome::NeedsFullScan {
            why: NEEDS_FULL_SCAN.into(),
        },
    );
    assert_eq!(
        exit_state(&verification(vec![pass(), full.clone()])),
        State::Unknown
    );
    let undecided = outcome("basicAuthDisabled", unknown("not decided"));
    assert_eq!(exit_state(&verification(vec![undecided])), State::Unknown);
    // A definite failure outranks an id only a full scan can settle.
    let v = verification(vec![full.clone(), outcome("x", fails(Severity::Medium))]);
    assert_eq!(exit_state(&v), State::Warning);
    let v = verification(vec![full, outcome("x", fails(Severity::High))]);
    assert_eq!(exit_state(&v), State::Critical);
    assert_eq!(exit_state(&verification(Vec::new())), State::Unknown);
}

fn measurements() -> Measurements {
    let mut m = Measurements::empty(
        Endpoint {
            scheme: Scheme::Http,
            url_host: "cloud.example".into(),
            port: 80,
            base_path: String::new(),
        },
        HttpsObservation::Unavailable("connection refused".into()),
    );
    m.root = Some(Response {
        status: 200,
        headers: vec![("X-Web-Version".into(), "4.0.0".into())],
        body: b"<html></html>".to_vec(),
        truncated: false,
        digest: None,
    });
    m
}

fn ctx() -> checks::Context {
    checks::Context {
        now: "2026-11-22T03:00:00Z".parse().unwrap(),
        tls_min_days: 14,
        insecure: false,
        check_hardening: true,
        extra_checks_rating: true,
        waived: Vec::new(),
    }
}

fn echo(echoed: bool) -> Response {
    Response {
        status: if echoed { 200 } else { 405 },
        headers: vec![("Content-Type".into(), "message/http".into())],
        body: b"TRACE / HTTP/1.1\r\nX-Cos-Trace-Probe: cos-trace-echo\r\n".to_vec(),
        truncated: false,
        digest: None,
    }
}

#[test]
fn judged_by_the_registry_checks() {
    let selection = selected(&[
        "traceMethodDisabled",
        "versionDisclosure:X-Web-Version",
        "versionDisclosure:Server",
        "cookieHttpOnly",
        "demoUsersDisabled",
        "caaRecord",
        "dnssec",
        "eol",
        "nonsense",
    ]);
    let mut m = measurements();
    m.http.insert(plan::TRACE.into(), Ok(echo(true)));
    let results = judge(&selection, &m, &ctx());
    let by_id = |id: &str| results.iter().find(|r| r.id == id).unwrap();
    assert_eq!(
        by_id("traceMethodDisabled").outcome,
        fails(Severity::Medium)
    );
    assert_eq!(
        by_id("versionDisclosure:X-Web-Version").outcome,
        fails(Severity::Low)
    );
    assert_eq!(by_id("versionDisclosure:Server").outcome, Outcome::Passes);
    assert_eq!(by_id("cookieHttpOnly").outcome, Outcome::Passes);
    assert!(matches!(
        &by_id("demoUsersDisabled").outcome,
        Outcome::Unknown { why } if why.contains("skipped")
    ));
    assert!(matches!(
        &by_id("caaRecord").outcome,
        Outcome::Unknown { why } if why.starts_with("not measured")
    ));
    assert!(matches!(
        &by_id("dnssec").outcome,
        Outcome::Unknown { why } if why == "not measured: DNSSEC is looked up for DNS names only"
    ));
    assert_eq!(results.len(), 9);
    // Both DNS checks come from the one DNS probe.
    let dns = selected(&["caaRecord", "dnssec"]);
    assert_eq!(dns.keys, BTreeSet::from([probe::DNS.to_string()]));
    assert!(dns.wants(probe::DNS) && !dns.wants(plan::ROOT));

    m.http.insert(plan::TRACE.into(), Ok(echo(false)));
    let results = judge(&selected(&["traceMethodDisabled"]), &m, &ctx());
    assert_eq!(results[0].outcome, Outcome::Passes);
    assert_eq!(results[0].findings.len(), 1);
}

#[test]
fn a_family_found_by_measuring_reports_each_member() {
    let mut m = measurements();
    m.root
        .as_mut()
        .unwrap()
        .headers
        .push(("Server".into(), "nginx/1.25.3".into()));
    let results = judge(&selected(&["versionDisclosure"]), &m, &ctx());
    let reported: Vec<(&str, &Outcome)> = results
        .iter()
        .map(|r| (r.id.as_str(), &r.outcome))
        .collect();
    assert_eq!(
        reported,
        [
            ("versionDisclosure:Server", &fails(Severity::Low)),
            ("versionDisclosure:X-Web-Version", &fails(Severity::Low)),
        ]
    );
    m.root.as_mut().unwrap().headers.clear();
    let results = judge(&selected(&["versionDisclosure"]), &m, &ctx());
    assert_eq!(results.len(), 1);
    assert_eq!(
        (results[0].id.as_str(), &results[0].outcome),
        ("versionDisclosure", &Outcome::Passes)
    );
    let results = judge(&selected(&["debugPort"]), &m, &ctx());
    assert!(matches!(
        &results[0].outcome,
        Outcome::Unknown { why } if why.contains("--no-debug-ports")
    ));
}

#[test]
fn text_lines_lead_with_the_state() {
    let mut failing = outcome("demoUsersDisabled", fails(Severity::Critical));
    failing.findings.push(
        checks::finding_for(
            "demoUsersDisabled",
            Status::Failed,
            "demo accounts sign in | with their published password",
        )
        .unwrap(),
    );
    let v = verification(vec![
        failing,
        outcome("traceMethodDisabled", Outcome::Passes),
        outcome(
            "eol",
            Outcome::NeedsFullScan {
                why: NEEDS_FULL_SCAN.into(),
            },
        ),
    ]);
    let text = render_text(&v);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "CRITICAL: remediation not verified on cloud.example: still failing: \
             demoUsersDisabled (critical); not settled: eol (can only be settled by a full \
             scan); 1 of 3 pass",
            "demoUsersDisabled: still fails (critical): demo accounts sign in / with their \
             published password",
            "traceMethodDisabled: passes",
            "eol: needs a full scan: can only be settled by a full scan",
        ]
    );
    let ok = verification(vec![outcome("traceMethodDisabled", Outcome::Passes)]);
    assert!(render_text(&ok).starts_with(
        "OK: remediation verified on cloud.example: 1 of 1 pass (traceMethodDisabled)\n"
    ));
    let json: serde_json::Value = serde_json::from_str(&render_json(&v)).unwrap();
    assert_eq!(json["state"], "CRITICAL");
    assert_eq!(json["results"][0]["outcome"], "fails");
    assert_eq!(json["results"][0]["severity"], "critical");
    assert_eq!(json["results"][2]["outcome"], "needs-full-scan");
    assert_eq!(json["results"][2]["why"], NEEDS_FULL_SCAN);
    assert_eq!(json["checkedAt"], "2026-11-22T03:00:00Z");
}
