//! Unit tests of `report`.

use super::*;

#[test]
fn grade_table_of_the_spec() {
    let grades: Vec<&str> = (0..=5).rev().map(|r| grade(Some(r))).collect();
    assert_eq!(grades, ["A+", "A", "C", "D", "E", "F"]);
    assert_eq!(grade(Some(6)), "U");
    assert_eq!(grade(None), "U");
}

#[test]
fn worst_state_follows_monitoring_priority() {
    assert_eq!(State::Ok.worst(State::Unknown), State::Unknown);
    assert_eq!(State::Unknown.worst(State::Warning), State::Warning);
    assert_eq!(State::Critical.worst(State::Warning), State::Critical);
    assert_eq!(State::Critical.exit_code(), 2);
}

/// A document with a member of every kind filled in, as assess, policy, baseline,
/// webhook and the public API write them.
fn rich() -> ScanResult {
    let mut r = ScanResult::failed(
        "cloud.example.com".into(),
        "connection reset".into(),
        2,
        "2026-11-22T03:00:00Z".parse().unwrap(),
        1.25,
        true,
        3,
        1,
    );
    r.url = Some("https://cloud.example.com/".into());
    r.state = State::Warning;
    r.rating = Some(3);
    r.grade = grade(Some(3)).into();
    r.product = Some(Product {
        family: ProductFamily::OpenCloud,
        name: "OpenCloud".into(),
        version: "4.0.5".into(),
        legacy_version: Some("0.1.0.0".into()),
        edition: None,
    });
    r.lifecycle = Some(Lifecycle {
        line: "4.0".into(),
        track: Some(Track::Lts),
        track_detected: true,
        track_note: Some("lts judged".into()),
        state: LineState::EndingSoon,
        line_opened: Some("2026-01-01".parse().unwrap()),
        support_end: Some("2027-12-01".parse().unwrap()),
        support_days_left: Some(30),
        current_release: false,
        latest_in_line: Some("4.0.8".into()),
        upgrade_target: Some("7.2.4".into()),
        upgrade_target_track: Some(Track::Production),
        schedule_updated: Some(jiff::civil::date(2026, 10, 12)),
        schedule_stale: false,
    });
    r.update = Some(UpdateCheck {
        mode: crate::knowledge::update::UpdateMode::Auto,
        source: Some(crate::knowledge::update::AnswerSource::Bundled),
        installed: "4.0.5".into(),
        recommended: Some("4.0.8".into()),
        newest: Some("8.1.0".into()),
        update_available: Some(true),
        error: None,
        upgrade_path_complete: Some(true),
    });
    r.upgrade_options = vec![UpgradeOption {
        version: "4.0.8".into(),
        kinds: vec![UpgradeKind::Patch, UpgradeKind::Track],
        fixes: vec!["GHSA-1".into()],
        stays_open: Vec::new(),
        rating: 4,
        grade: grade(Some(4)).into(),
        line: "4.0".into(),
        line_state: Some(LineState::Supported),
        line_support_end: Some("2027-12-01".parse().unwrap()),
        outlasts_installed: None,
        best: true,
    }];
    r.tls = Some(Tls {
        scheme: crate::target::Scheme::Https,
        protocol: Some("TLSv1.3".into()),
        trusted: Some(false),
        cert_days_left: Some(-3),
        ..Tls::default()
    });
    r.vulnerabilities = vec![Vulnerability {
        id: "GHSA-1".into(),
        aliases: vec!["CVE-2026-1".into()],
        severity: Some(Severity::High),
        summary: "s".into(),
        url: None,
        affected: vec![">=4.0.0, <4.0.8".into()],
        fixed_in: Some("4.0.8".into()),
    }];
    let snippet = Snippet {
        form: Form::Nginx,
        file: "server block".into(),
        text: "add_header X-A b;".into(),
    };
    r.findings = vec![Finding {
        id: "hsts".into(),
        role: Role::Check,
        status: Status::Failed,
        severity: Severity::Medium,
        category: Category::Transport,
        detail: "d".into(),
        remediation: "r".into(),
        documentation: Some("https://docs.example/".into()),
        fixed_in: System::ReverseProxy,
        counts: true,
        decisive: true,
        ignored: false,
    }];
    r.rating_explanation.limits = vec![RatingLimit {
        id: "hsts".into(),
        severity: Severity::Medium,
        cap: 4,
    }];
    r.remediation_plan = RemediationPlan {
        steps: vec![RemediationStep {
            order: 1,
            action: "Send HSTS.".into(),
            resolves: vec!["hsts".into()],
            fixed_in: System::ReverseProxy,
            snippets: vec![snippet.clone()],
        }],
        groups: vec![RemediationGroup {
            system: System::ReverseProxy,
            findings: vec!["hsts".into()],
        }],
        group_summary: vec!["one".into()],
        snippets: vec![snippet],
    };
    let waiver = WaiverReport {
        pattern: "hstsPreload".into(),
        source: "--waive-until".into(),
        state: crate::report::WaiverState::Active,
        permanent: false,
        expires: Some("2026-12-01T00:00:00Z".parse().unwrap()),
        reason: Some("later".into()),
        days_left: Some(8),
        matched: vec!["hstsPreload".into()],
    };
    r.waivers = vec![waiver.clone()];
    r.waiver_days_left = Some(8);
    r.policy = Some(PolicyVerdict {
        met: false,
        unmet: vec!["rating C below A".into()],
    });
    r.baseline = Some(BaselineComparison {
        new_findings: vec!["hsts".into()],
        changes: vec![Change {
            id: "hsts".into(),
            cause: ChangeCause::Instance,
            detail: "the instance changed".into(),
        }],
        recorded_on: Some(jiff::civil::date(2026, 11, 1)),
        ..BaselineComparison::default()
    });
    r.webhook = Some(WebhookDelivery {
        delivered: false,
        error: Some("timeout".into()),
    });
    r.coverage = Some(Coverage::of(&r.findings));
    r.configuration_fingerprint = Some(Fingerprint {
        short: "abcd1234".into(),
        digest: "abcd1234ef".into(),
        areas: [("headers".to_string(), "00ff".to_string())].into(),
    });
    r.conditions = Some(Conditions {
        scanner_version: "0.1.0".into(),
        waivers: vec!["hstsPreload until 2026-12-01T00:00:00Z".into()],
        checks: 90,
        ..Conditions::default()
    });
    r.submitter_waivers = Some(SubmitterWaivers {
        patterns: vec!["hsts".into()],
        grade: "A".into(),
        rating: Some(4),
        state: State::Ok,
        message: "m".into(),
        waived: vec!["hsts".into()],
        waivers: vec![waiver],
    });
    r
}

#[test]
fn a_document_reads_back_as_it_was_written() {
    let written = serde_json::to_value(rich()).unwrap();
    let read = read_document(written.to_string().as_bytes()).unwrap();
    assert_eq!(serde_json::to_value(&read).unwrap(), written);
    // Every member of the document was filled: nothing reads back by default.
    let members = written.as_object().unwrap();
    assert!(members.values().all(|v| !v.is_null()), "{written}");
    // A list of them, and a pretty-printed one.
    let two = serde_json::to_vec_pretty(&[rich(), rich()]).unwrap();
    assert_eq!(read_documents(&two).unwrap().len(), 2);
    assert_eq!(
        read_documents(written.to_string().as_bytes())
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn an_older_document_reads_with_what_it_lacks_empty() {
    let old = br#"{"host": "a.example", "scannedAt": "2026-01-01T00:00:00Z", "state": "OK",
        "rating": 5, "findings": [{"id": "hsts", "status": "passed", "severity": "medium"}],
        "waivers": [], "someMemberOfANewerScanner": {"x": [1]}}"#;
    let r = read_document(old).unwrap();
    assert_eq!(
        (r.host.as_str(), r.state, r.rating),
        ("a.example", State::Ok, Some(5))
    );
    assert_eq!(r.findings[0].role, Role::Observation, "an unrated finding");
    assert!(r.upgrade_options.is_empty() && r.conditions.is_none() && r.policy.is_none());
    // What identifies a document is required.
    for member in ["host", "scannedAt", "state", "findings", "waivers"] {
        let mut value: serde_json::Value = serde_json::from_slice(old).unwrap();
        value.as_object_mut().unwrap().remove(member);
        let problem = read_document(value.to_string().as_bytes()).unwrap_err();
        assert!(
            problem.to_string().starts_with(&format!(
                "is not a result document (missing field `{member}`"
            )),
            "{problem}"
        );
    }
}

#[test]
fn what_is_not_a_document_is_refused_in_one_line() {
    for (bytes, expected) in [
        (&b"{"[..], "is not JSON (EOF while parsing"),
        (
            b"[]",
            "is not a result document (an empty array holds no result document)",
        ),
        (
            b"\"x\"",
            "is not a result document (invalid type: string \"x\", expected a result document (a JSON object)",
        ),
        (
            b"[1]",
            "is not a result document (invalid type: integer `1`, expected a result document",
        ),
        (
            br#"{"host": "a", "scannedAt": "2026-01-01T00:00:00Z", "state": "OK",
                "findings": [], "waivers": [{"pattern": "hsts", "source": "--waive-until",
                "expires": "2026-12-01\nnext"}]}"#,
            "is not a result document (a waiver expiry \"2026-12-01 next\" that is no timestamp \
             with a time zone",
        ),
    ] {
        let problem = read_documents(bytes).unwrap_err().to_string();
        assert!(problem.starts_with(expected), "{problem}");
    }
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let problem = read_documents(deep.as_bytes()).unwrap_err().to_string();
    assert!(problem.len() < 260 && !problem.contains('\n'), "{problem}");
    // Past the byte cap nothing is parsed.
    let large = vec![b' '; MAX_READ_BYTES as usize + 1];
    assert_eq!(read_document(&large).unwrap_err(), ReadError::TooLarge);
    assert_eq!(ReadError::TooLarge.to_string(), "is larger than 16 MiB");
}

#[test]
fn decisions_through_a_network_limit_move_to_network_limited() {
    let c = Coverage {
        evaluated: 10,
        skipped: 1,
        indeterminate: 2,
        network_limited: 1,
    }
    .limited_by_network(5);
    assert_eq!(
        (c.evaluated, c.skipped, c.indeterminate, c.network_limited),
        (5, 1, 2, 6)
    );
    assert_eq!(
        Coverage::default().limited_by_network(3),
        Coverage::default()
    );
}
