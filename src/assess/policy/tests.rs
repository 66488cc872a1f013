//! Unit tests of `policy`.

use super::*;
use crate::checks::finding_for;
use crate::output::metrics::testing::{failed, scanned};
use crate::report::Vulnerability;
use crate::severity::Severity;

fn yaml(text: &str) -> Result<Policy, String> {
    Policy::parse(text, false)
}

fn err(text: &str) -> String {
    let e = yaml(text).expect_err(text);
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cos-policy-tests-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A rated host (rating `rating`) with these findings.
fn host(rating: u8, findings: Vec<Finding>) -> ScanResult {
    let mut r = scanned("cloud.example", "8.1.0", Some(90));
    r.rating = Some(rating);
    r.grade = grade(Some(rating)).into();
    r.findings = findings;
    r
}

fn waived(mut f: Finding) -> Finding {
    f.ignored = true;
    f
}

fn policy(text: &str) -> Policy {
    yaml(text).unwrap()
}

// --- Parsing ---------------------------------------------------------------------------

#[test]
fn every_key_in_yaml_and_json() {
    let expected = Policy {
        minimum_rating: Some(4),
        required_hardenings: vec!["cspWithoutUnsafeInline".into(), "hstsPreload".into()],
        forbidden: vec![
            "demoUsersDisabled".into(),
            "vulnerability:GHSA-aaaa-bbbb-cccc".into(),
            "exposed".into(),
            "versionDisclosure:X-*".into(),
        ],
    };
    let from_yaml = yaml(
        "# CI gate\nminimum_rating: 4\nrequired_hardenings:\n  - cspWithoutUnsafeInline\n  \
         - hstsPreload\nforbidden:\n  - demoUsersDisabled\n  - \
         vulnerability:GHSA-aaaa-bbbb-cccc\n  - exposed\n  - \"versionDisclosure:X-*\"\n",
    )
    .unwrap();
    assert_eq!(from_yaml, expected);
    let from_json = Policy::parse(
        r#"{"minimum_rating": 4,
            "required_hardenings": ["cspWithoutUnsafeInline", "hstsPreload"],
            "forbidden": ["demoUsersDisabled", "vulnerability:GHSA-aaaa-bbbb-cccc",
                          "exposed", "versionDisclosure:X-*"]}"#,
        true,
    )
    .unwrap();
    assert_eq!(from_json, expected);
    // Flow style YAML lists too.
    assert_eq!(
        yaml("forbidden: [demoUsersDisabled, exposed]")
            .unwrap()
            .forbidden,
        ["demoUsersDisabled", "exposed"]
    );
}

#[test]
fn every_key_is_optional() {
    for text in ["", "  \n", "# nothing asked yet\n", "---\n"] {
        assert_eq!(yaml(text), Ok(Policy::default()), "{text:?}");
    }
    assert_eq!(Policy::parse("{}", true), Ok(Policy::default()));
    assert_eq!(
        yaml("minimum_rating: 3").unwrap(),
        Policy {
            minimum_rating: Some(3),
            ..Policy::default()
        }
    );
    // A key written without a value asks for nothing.
    assert_eq!(
        yaml("minimum_rating:\nrequired_hardenings:\nforbidden:\n"),
        Ok(Policy::default())
    );
    assert_eq!(yaml("minimum_rating: 0").unwrap().minimum_rating, Some(0));
    assert_eq!(yaml("minimum_rating: 5").unwrap().minimum_rating, Some(5));
}

#[test]
fn unknown_keys_are_refused_naming_the_fix() {
    assert_eq!(
        err("minimum_grade: A"),
        "unknown key \"minimum_grade\"; the known keys are minimum_rating, \
         required_hardenings and forbidden"
    );
    assert_eq!(
        err("minimumRating: 4"),
        "unknown key \"minimumRating\"; did you mean minimum_rating?"
    );
    assert_eq!(
        err("required-hardenings: [hstsPreload]"),
        "unknown key \"required-hardenings\"; did you mean required_hardenings?"
    );
    // Control characters in a key stay escaped: the error is one line.
    assert!(err("\"evil\\nkey\": 1").contains("\"evil\\nkey\""));
    assert!(
        Policy::parse(r#"{"forbidden": [], "extra": true}"#, true)
            .unwrap_err()
            .starts_with("unknown key \"extra\";")
    );
}

#[test]
fn minimum_rating_must_be_an_integer_from_0_to_5() {
    for (text, start) in [
        ("minimum_rating: 6", "minimum_rating 6 is outside 0-5;"),
        ("minimum_rating: -1", "minimum_rating -1 is outside 0-5;"),
        ("minimum_rating: 400", "minimum_rating 400 is outside 0-5;"),
        (
            "minimum_rating: 4.5",
            "minimum_rating 4.5 is not an integer;",
        ),
        (
            "minimum_rating: A",
            "minimum_rating is text, not an integer;",
        ),
        (
            "minimum_rating: \"4\"",
            "minimum_rating is text, not an integer;",
        ),
        (
            "minimum_rating: [4]",
            "minimum_rating is a list, not an integer;",
        ),
        (
            "minimum_rating: true",
            "minimum_rating is a boolean, not an integer;",
        ),
    ] {
        let e = err(text);
        assert!(e.starts_with(start), "{text}: {e}");
        assert!(
            e.ends_with(
                "write an integer from 0 (F) to 5 (A+), e.g. minimum_rating: 4 for grade A"
            ),
            "{text}: {e}"
        );
    }
    assert!(
        Policy::parse(r#"{"minimum_rating": 9}"#, true)
            .unwrap_err()
            .starts_with("minimum_rating 9 is outside 0-5;")
    );
}

#[test]
fn required_hardenings_must_name_hardening_measures() {
    // Every hardening row of the registry is a known measure.
    let all: Vec<&str> = hardening_measures().collect();
    assert!(all.contains(&"cspWithoutUnsafeInline") && all.contains(&"caaRecord"));
    let text = format!("required_hardenings: [{}]", all.join(", "));
    assert_eq!(yaml(&text).unwrap().required_hardenings, all);

    let e = err("required_hardenings: [hstsPreload, noSuchMeasure]");
    assert!(
        e.starts_with("required_hardenings: unknown measure \"noSuchMeasure\"; use one of "),
        "{e}"
    );
    assert!(e.contains("cspWithoutUnsafeInline, "), "{e}");
    assert_eq!(
        err("required_hardenings: [cspwithoutunsafeinline]"),
        "required_hardenings: unknown measure \"cspwithoutunsafeinline\"; did you mean \
         cspWithoutUnsafeInline? (names are case-sensitive)"
    );
    assert_eq!(
        err("required_hardenings: [demoUsersDisabled]"),
        "required_hardenings: \"demoUsersDisabled\" is an additional-check finding, not a \
         hardening measure; list it under forbidden instead"
    );
    assert!(
        err("required_hardenings: [\"vulnerability:GHSA-1\"]")
            .contains("is a version finding, not a hardening measure")
    );
    // Patterns are not measure names.
    assert!(err("required_hardenings: [\"csp*\"]").contains("unknown measure \"csp*\""));
}

#[test]
fn lists_must_hold_non_empty_names() {
    assert_eq!(
        err("required_hardenings: hstsPreload"),
        "required_hardenings is text, not a list; write one name per line as a YAML list \
         (- name) or a JSON array"
    );
    assert_eq!(
        err("forbidden: [demoUsersDisabled, 3]"),
        "forbidden entry 2 is a number, not a name; write each entry as text"
    );
    assert_eq!(
        err("forbidden: [demoUsersDisabled, \"  \"]"),
        "forbidden entry 2 is empty; remove it or name a finding"
    );
    assert!(err("forbidden:\n  - a: b\n").starts_with("forbidden entry 1 is a mapping"));
    // Forbidden entries are ids or patterns, not validated against the registry.
    let p =
        policy("forbidden: [\" demoUsersDisabled \", CVE-2026-1, \"*Preload\", demoUsersDisabled]");
    assert_eq!(p.forbidden, ["demoUsersDisabled", "CVE-2026-1", "*Preload"]);
}

#[test]
fn syntax_errors_and_other_documents_are_one_line() {
    assert!(err("forbidden: [a, b\nminimum_rating: 4").starts_with("not valid YAML ("));
    assert!(err("minimum_rating: 4\n  bad: indentation\n").starts_with("not valid YAML ("));
    assert_eq!(
        err("minimum_rating: 4\nminimum_rating: 2\n"),
        "not valid YAML (line 2 column 1: duplicate mapping key: minimum_rating); write each \
         key once"
    );
    assert!(err("forbidden: *nope").starts_with("not valid YAML (line 1 column 12: "));
    let e = Policy::parse("{\"minimum_rating\": 4,}", true).unwrap_err();
    assert!(
        e.starts_with("not valid JSON (") && e.ends_with("); fix the syntax"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    assert_eq!(
        err("- minimum_rating: 4"),
        "the top level is a list, not a mapping; write keys such as minimum_rating: 4"
    );
    assert!(err("just some text").starts_with("the top level is text, not a mapping"));
    assert!(
        Policy::parse("", true)
            .unwrap_err()
            .starts_with("not valid JSON (")
    );
}

#[test]
fn load_reads_yaml_or_json_by_suffix() {
    let dir = scratch("load");
    let yml = dir.join("policy.yml");
    std::fs::write(
        &yml,
        "minimum_rating: 4\nforbidden:\n  - demoUsersDisabled\n",
    )
    .unwrap();
    let p = Policy::load(&yml).unwrap();
    assert_eq!(p.minimum_rating, Some(4));
    assert_eq!(p.forbidden, ["demoUsersDisabled"]);

    let json = dir.join("policy.JSON");
    std::fs::write(&json, r#"{"required_hardenings": ["hstsPreload"]}"#).unwrap();
    assert_eq!(
        Policy::load(&json).unwrap().required_hardenings,
        ["hstsPreload"]
    );
    // JSON text under a YAML name still parses (JSON is YAML), but a YAML file named
    // .json is judged as JSON.
    let wrong = dir.join("policy.json");
    std::fs::write(&wrong, "minimum_rating: 4\n").unwrap();
    let e = Policy::load(&wrong).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "policy file {}: not valid JSON (",
            wrong.display()
        )),
        "{e}"
    );
}

#[test]
fn load_errors_name_the_file_and_the_fix() {
    let dir = scratch("errors");
    let missing = dir.join("missing.yml");
    assert_eq!(
        Policy::load(&missing).unwrap_err(),
        format!(
            "policy file {} does not exist; point --policy at a YAML or JSON policy file",
            missing.display()
        )
    );
    assert_eq!(
        Policy::load(&dir).unwrap_err(),
        format!(
            "policy file {} is a directory, not a regular file; point --policy at a YAML or \
             JSON policy file",
            dir.display()
        )
    );
    let big = dir.join("big.yml");
    let mut text = String::from("forbidden:\n");
    while text.len() <= 1024 * 1024 {
        text.push_str("  - demoUsersDisabled\n");
    }
    std::fs::write(&big, &text).unwrap();
    assert_eq!(
        Policy::load(&big).unwrap_err(),
        format!(
            "policy file {} is larger than 1 MiB ({} bytes); point --policy at a YAML or \
             JSON policy file",
            big.display(),
            text.len()
        )
    );
    let binary = dir.join("binary.yml");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x41]).unwrap();
    assert_eq!(
        Policy::load(&binary).unwrap_err(),
        format!(
            "policy file {} is not UTF-8 text (save it as UTF-8); point --policy at a YAML \
             or JSON policy file",
            binary.display()
        )
    );
    let unknown = dir.join("unknown.yaml");
    std::fs::write(&unknown, "minimum_rating: 4\nmaximum_rating: 5\n").unwrap();
    assert_eq!(
        Policy::load(&unknown).unwrap_err(),
        format!(
            "policy file {}: unknown key \"maximum_rating\"; the known keys are \
             minimum_rating, required_hardenings and forbidden",
            unknown.display()
        )
    );
}

// --- Evaluation ------------------------------------------------------------------------

#[test]
fn an_empty_policy_is_always_met() {
    let verdict = Policy::default().evaluate(&failed("down.example"));
    assert_eq!(
        verdict,
        PolicyVerdict {
            met: true,
            unmet: Vec::new()
        }
    );
    assert_eq!(verdict.summary(), "every requirement is met");
}

#[test]
fn minimum_rating_is_a_floor() {
    let p = policy("minimum_rating: 4");
    assert!(p.evaluate(&host(5, Vec::new())).met);
    assert!(
        p.evaluate(&host(4, Vec::new())).met,
        "at the minimum is met"
    );
    assert_eq!(
        p.evaluate(&host(2, Vec::new())).unmet,
        ["rating 2 (D) is below the minimum 4 (A)"]
    );
    assert_eq!(
        policy("minimum_rating: 5")
            .evaluate(&host(0, Vec::new()))
            .unmet,
        ["rating 0 (F) is below the minimum 5 (A+)"]
    );
    assert!(
        policy("minimum_rating: 0")
            .evaluate(&host(0, Vec::new()))
            .met
    );
}

#[test]
fn a_failed_scan_has_no_rating_to_meet_the_minimum() {
    let verdict = policy("minimum_rating: 0").evaluate(&failed("down.example"));
    assert!(!verdict.met);
    assert_eq!(
        verdict.unmet,
        ["no rating (the scan failed) to meet the minimum 0 (F)"]
    );
    let mut unrated = host(3, Vec::new());
    unrated.rating = None;
    assert_eq!(
        policy("minimum_rating: 3").evaluate(&unrated).unmet,
        ["no rating (U) to meet the minimum 3 (C)"]
    );
}

#[test]
fn required_hardenings_must_have_passed() {
    let p = policy(
        "required_hardenings: [hstsPreload, cspWithoutUnsafeInline, Permissions-Policy, \
         Referrer-Policy, caaRecord, publicLinkExpirationEnforced]",
    );
    let all_passed = host(
        5,
        [
            "hstsPreload",
            "cspWithoutUnsafeInline",
            "Permissions-Policy",
            "Referrer-Policy",
            "caaRecord",
            "publicLinkExpirationEnforced",
        ]
        .iter()
        .map(|id| finding_for(id, Status::Passed, "in place").unwrap())
        .collect(),
    );
    assert!(p.evaluate(&all_passed).met);

    let mixed = host(
        5,
        vec![
            finding_for("hstsPreload", Status::Passed, "preloaded").unwrap(),
            finding_for("cspWithoutUnsafeInline", Status::Failed, "unsafe-inline").unwrap(),
            finding_for("Permissions-Policy", Status::Indeterminate, "?").unwrap(),
            finding_for("Referrer-Policy", Status::NetworkLimited, "timeout").unwrap(),
            finding_for("caaRecord", Status::Skipped, "no DNS").unwrap(),
        ],
    );
    let verdict = p.evaluate(&mixed);
    assert!(!verdict.met);
    assert_eq!(
        verdict.unmet,
        [
            "required hardening cspWithoutUnsafeInline is missing",
            "required hardening Permissions-Policy is indeterminate (the check could not \
             decide)",
            "required hardening Referrer-Policy could not be checked (network-limited)",
            "required hardening caaRecord was skipped",
            "required hardening publicLinkExpirationEnforced was not evaluated",
        ]
    );
    assert_eq!(
        verdict.summary(),
        format!("5 requirement(s) unmet: {}", verdict.unmet.join("; "))
    );
    assert_eq!(
        p.evaluate(&failed("down.example")).unmet[0],
        "required hardening hstsPreload was not evaluated (the scan failed)"
    );
}

#[test]
fn waivers_never_excuse_a_required_hardening() {
    let p = policy("required_hardenings: [cspWithoutUnsafeInline]");
    let result = host(
        5,
        vec![waived(
            finding_for("cspWithoutUnsafeInline", Status::Failed, "unsafe-inline").unwrap(),
        )],
    );
    assert_eq!(result.missing_hardening().count(), 0, "the waiver hides it");
    let verdict = p.evaluate(&result);
    assert!(!verdict.met);
    assert_eq!(
        verdict.unmet,
        [
            "required hardening cspWithoutUnsafeInline is missing (waived, but waivers never \
          excuse a policy requirement)"
        ]
    );
}

#[test]
fn a_forbidden_failure_is_unmet() {
    let p = policy("forbidden: [demoUsersDisabled]");
    assert_eq!(
        p.evaluate(&host(
            2,
            vec![finding_for("demoUsersDisabled", Status::Failed, "dennis signs in").unwrap()]
        ))
        .unmet,
        ["forbidden finding demoUsersDisabled is present"]
    );
    for status in [
        Status::Passed,
        Status::Indeterminate,
        Status::NetworkLimited,
        Status::Skipped,
    ] {
        let result = host(
            5,
            vec![finding_for("demoUsersDisabled", status, "x").unwrap()],
        );
        assert!(p.evaluate(&result).met, "{status:?}");
    }
    assert!(p.evaluate(&host(5, Vec::new())).met, "absent is met");
}

#[test]
fn waivers_never_excuse_a_forbidden_finding() {
    let p = policy("forbidden: [demoUsersDisabled, hstsPreload]");
    let result = host(
        5,
        vec![
            waived(finding_for("demoUsersDisabled", Status::Failed, "dennis").unwrap()),
            waived(finding_for("hstsPreload", Status::Failed, "no preload").unwrap()),
        ],
    );
    assert_eq!(
        p.evaluate(&result).unmet,
        [
            "forbidden finding demoUsersDisabled is present (waived, but waivers never \
             excuse a policy requirement)",
            "forbidden finding hstsPreload is present (waived, but waivers never excuse a \
             policy requirement)",
        ]
    );
}

#[test]
fn forbidden_patterns_cover_families_and_wildcards() {
    let result = host(
        2,
        vec![
            finding_for("exposed:/.env", Status::Failed, "served").unwrap(),
            finding_for("exposed:/.git/config", Status::Failed, "served").unwrap(),
            finding_for("exposed:/opencloud.yaml", Status::Passed, "refused").unwrap(),
            finding_for("versionDisclosure:X-Web-Version", Status::Failed, "8.1.0").unwrap(),
            finding_for("hstsPreload", Status::Failed, "no preload").unwrap(),
            // Observations are never forbidden findings.
            finding_for("loginThrottling", Status::Failed, "not throttled").unwrap(),
        ],
    );
    assert_eq!(
        policy("forbidden: [exposed]").evaluate(&result).unmet,
        ["forbidden finding exposed is present: exposed:/.env, exposed:/.git/config"]
    );
    assert_eq!(
        policy("forbidden: [\"exposed:/.env\"]")
            .evaluate(&result)
            .unmet,
        ["forbidden finding exposed:/.env is present"]
    );
    assert_eq!(
        policy("forbidden: [\"versionDisclosure:X-*\", \"*Preload\"]")
            .evaluate(&result)
            .unmet,
        [
            "forbidden finding versionDisclosure:X-* is present: \
             versionDisclosure:X-Web-Version",
            "forbidden finding *Preload is present: hstsPreload",
        ]
    );
    assert!(
        policy("forbidden: [loginThrottling, \"exposed:/opencloud.yaml\", expo]")
            .evaluate(&result)
            .met
    );
    assert_eq!(
        policy("forbidden: [\"*\"]").evaluate(&result).unmet,
        [
            "forbidden finding * is present: exposed:/.env, exposed:/.git/config, \
          versionDisclosure:X-Web-Version, hstsPreload"
        ]
    );
}

#[test]
fn forbidden_vulnerabilities_by_id_alias_or_family() {
    let mut result = host(
        3,
        vec![
            finding_for("vulnerability:GHSA-aaaa-bbbb-cccc", Status::Failed, "bad").unwrap(),
            finding_for("eol", Status::Passed, "supported").unwrap(),
        ],
    );
    result.vulnerabilities = vec![Vulnerability {
        id: "GHSA-aaaa-bbbb-cccc".into(),
        aliases: vec!["CVE-2026-1".into()],
        severity: Some(Severity::Medium),
        summary: "bad".into(),
        url: None,
        affected: vec![">=4.0.0, <4.0.3".into()],
        fixed_in: Some("4.0.3".into()),
    }];
    assert_eq!(
        policy("forbidden: [\"vulnerability:GHSA-aaaa-bbbb-cccc\"]")
            .evaluate(&result)
            .unmet,
        ["forbidden finding vulnerability:GHSA-aaaa-bbbb-cccc is present"]
    );
    for pattern in [
        "GHSA-aaaa-bbbb-cccc",
        "CVE-2026-1",
        "vulnerability:CVE-2026-1",
        "vulnerability",
        "GHSA-*",
    ] {
        assert_eq!(
            policy(&format!("forbidden: [\"{pattern}\"]"))
                .evaluate(&result)
                .unmet,
            [format!(
                "forbidden finding {pattern} is present: vulnerability:GHSA-aaaa-bbbb-cccc"
            )],
            "{pattern}"
        );
    }
    assert!(
        policy("forbidden: [GHSA-zzzz-zzzz-zzzz, CVE-2026-2, eol]")
            .evaluate(&result)
            .met
    );
    // End of life is a version finding: forbidding it works like any other.
    result.findings[1].status = Status::Failed;
    assert_eq!(
        policy("forbidden: [eol]").evaluate(&result).unmet,
        ["forbidden finding eol is present"]
    );
}

#[test]
fn every_unmet_requirement_is_listed_in_order() {
    let p = policy(
        "forbidden: [demoUsersDisabled]\nrequired_hardenings: [hstsPreload]\n\
         minimum_rating: 4\n",
    );
    let verdict = p.evaluate(&host(
        2,
        vec![
            finding_for("demoUsersDisabled", Status::Failed, "dennis").unwrap(),
            finding_for("hstsPreload", Status::Failed, "no preload").unwrap(),
        ],
    ));
    assert_eq!(
        verdict.unmet,
        [
            "rating 2 (D) is below the minimum 4 (A)",
            "required hardening hstsPreload is missing",
            "forbidden finding demoUsersDisabled is present",
        ]
    );
    assert_eq!(
        serde_json::to_value(&verdict).unwrap(),
        serde_json::json!({
            "met": false,
            "unmet": [
                "rating 2 (D) is below the minimum 4 (A)",
                "required hardening hstsPreload is missing",
                "forbidden finding demoUsersDisabled is present",
            ],
        })
    );
    assert_eq!(
        verdict.summary(),
        "3 requirement(s) unmet: rating 2 (D) is below the minimum 4 (A); required \
         hardening hstsPreload is missing; forbidden finding demoUsersDisabled is present"
    );
    let met = p.evaluate(&host(
        5,
        vec![finding_for("hstsPreload", Status::Passed, "ok").unwrap()],
    ));
    assert_eq!(
        serde_json::to_value(&met).unwrap(),
        serde_json::json!({"met": true, "unmet": []})
    );
}

#[test]
fn hardening_is_needed_for_required_or_forbidden_measures() {
    assert!(!Policy::default().needs_hardening());
    assert!(!policy("minimum_rating: 4").needs_hardening());
    assert!(policy("required_hardenings: [hstsPreload]").needs_hardening());
    assert!(!policy("forbidden: [demoUsersDisabled, exposed]").needs_hardening());
    assert!(policy("forbidden: [hstsPreload]").needs_hardening());
    assert!(policy("forbidden: [\"csp*\"]").needs_hardening());
    assert!(policy("forbidden: [\"*\"]").needs_hardening());
}
