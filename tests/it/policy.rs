//! The policy file (`--policy`), end to end through the exit code: invalid files end the run
//! UNKNOWN with one line naming the problem; an unmet requirement is CRITICAL, the output says
//! which, and waivers never excuse a requirement. Against fake instances on loopback, fixed
//! clock, cleared environment.

use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::path::PathBuf;

use crate::support::plugin::{Run, scratch};

/// The `Policy: ...` line of the output.
fn policy_line(run: &Run) -> Option<&str> {
    run.stdout.lines().find(|l| l.starts_with("Policy: "))
}

/// Writes a policy file named `file` into a fresh scratch directory and returns its path.
fn policy_file(name: &str, file: &str, text: &str) -> PathBuf {
    let path = scratch(&format!("policy-file-{name}")).join(file);
    std::fs::write(&path, text).unwrap();
    path
}

fn scan(fake: &FakeInstance, name: &str, extra: &[&str]) -> Run {
    crate::support::plugin::scan(&format!("policy-{name}"), &fake.host_port(), fake, extra)
}

/// Scans with `--policy` pointing at a YAML file holding `policy`.
fn scan_with(fake: &FakeInstance, name: &str, policy: &str, extra: &[&str]) -> Run {
    let path = policy_file(name, "policy.yml", policy);
    let path = path.display().to_string();
    let mut args = vec!["--policy", path.as_str()];
    args.extend(extra);
    scan(fake, name, &args)
}

/// A default install: demo accounts sign in (critical), CORS for any origin, version headers.
/// Rated D, WARNING with the default thresholds.
fn default_install() -> InstanceConfig {
    InstanceConfig::default().version("8.1.0")
}

/// An instance without the weaknesses of a default install: rated A+, OK.
fn healthy() -> InstanceConfig {
    InstanceConfig::default()
        .version("8.1.0")
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
        .remove_header("X-Web-Version")
        .remove_header("X-Idp-Version")
        .remove_header("X-Graph-Version")
}

// --- Invalid policy files: UNKNOWN with the reason (needs only Policy::load) ----------------

#[test]
fn invalid_policy_files_end_the_run_unknown_with_one_line() {
    let fake = FakeInstance::start(healthy());
    let dir = scratch("invalid");
    let big = "forbidden:\n".to_string() + &"  - demoUsersDisabled\n".repeat(60_000);
    let cases: &[(&str, &str, &str)] = &[
        (
            "unknown-key.yml",
            "minimum_rating: 4\nmaximum_rating: 5\n",
            "unknown key \"maximum_rating\"; the known keys are minimum_rating, \
             required_hardenings and forbidden",
        ),
        (
            "near-key.yaml",
            "minimumRating: 4\n",
            "unknown key \"minimumRating\"; did you mean minimum_rating?",
        ),
        (
            "rating-6.yml",
            "minimum_rating: 6\n",
            "minimum_rating 6 is outside 0-5; write an integer from 0 (F) to 5 (A+), e.g. \
             minimum_rating: 4 for grade A",
        ),
        (
            "rating-negative.yml",
            "minimum_rating: -1\n",
            "minimum_rating -1 is outside 0-5; write an integer from 0 (F) to 5 (A+), e.g. \
             minimum_rating: 4 for grade A",
        ),
        (
            "rating-grade.yml",
            "minimum_rating: A\n",
            "minimum_rating is text, not an integer; write an integer from 0 (F) to 5 (A+), \
             e.g. minimum_rating: 4 for grade A",
        ),
        (
            "rating-fraction.json",
            "{\"minimum_rating\": 3.5}",
            "minimum_rating 3.5 is not an integer; write an integer from 0 (F) to 5 (A+), e.g. \
             minimum_rating: 4 for grade A",
        ),
        (
            "unknown-measure.yml",
            "required_hardenings:\n  - cspwithoutunsafeinline\n",
            "required_hardenings: unknown measure \"cspwithoutunsafeinline\"; did you mean \
             cspWithoutUnsafeInline? (names are case-sensitive)",
        ),
        (
            "check-as-measure.yml",
            "required_hardenings: [demoUsersDisabled]\n",
            "required_hardenings: \"demoUsersDisabled\" is an additional-check finding, not a \
             hardening measure; list it under forbidden instead",
        ),
        (
            "empty-forbidden.yml",
            "forbidden:\n  - demoUsersDisabled\n  - \"\"\n",
            "forbidden entry 2 is empty; remove it or name a finding",
        ),
        (
            "not-a-list.json",
            "{\"forbidden\": \"demoUsersDisabled\"}",
            "forbidden is text, not a list; write one name per line as a YAML list (- name) or \
             a JSON array",
        ),
        (
            "top-level-list.yml",
            "- minimum_rating: 4\n",
            "the top level is a list, not a mapping; write keys such as minimum_rating: 4",
        ),
    ];
    for (file, text, reason) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let shown = path.display().to_string();
        let run = scan(&fake, "invalid-run", &["--policy", &shown]);
        assert_eq!(run.code, 3, "{file}: {}", run.stdout);
        assert_eq!(
            run.stdout,
            format!("UNKNOWN: policy file {shown}: {reason}\n"),
            "{file}"
        );
    }

    // Syntax errors name the parser's complaint on the same line.
    for (file, text, start) in [
        (
            "broken.yml",
            "forbidden: [a, b\nminimum_rating: 4\n",
            "not valid YAML (",
        ),
        ("yaml-named.json", "minimum_rating: 4\n", "not valid JSON ("),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let shown = path.display().to_string();
        let run = scan(&fake, "invalid-syntax", &["--policy", &shown]);
        assert_eq!(run.code, 3, "{file}: {}", run.stdout);
        assert_eq!(run.stdout.lines().count(), 1, "{file}: {}", run.stdout);
        assert!(
            run.line(0)
                .starts_with(&format!("UNKNOWN: policy file {shown}: {start}"))
                && run.line(0).ends_with("; fix the syntax"),
            "{file}: {}",
            run.stdout
        );
    }

    // Unreadable, a directory, too large.
    let missing = dir.join("missing.yml").display().to_string();
    let run = scan(&fake, "invalid-missing", &["--policy", &missing]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert_eq!(
        run.line(0),
        format!(
            "UNKNOWN: policy file {missing} does not exist; point --policy at a YAML or JSON \
             policy file"
        )
    );
    let shown = dir.display().to_string();
    let run = scan(&fake, "invalid-dir", &["--policy", &shown]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (
            3,
            format!(
                "UNKNOWN: policy file {shown} is a directory, not a regular file; point --policy \
                 at a YAML or JSON policy file\n"
            )
            .as_str()
        )
    );
    let path = dir.join("big.yml");
    std::fs::write(&path, &big).unwrap();
    let shown = path.display().to_string();
    let run = scan(&fake, "invalid-big", &["--policy", &shown]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (
            3,
            format!(
                "UNKNOWN: policy file {shown} is larger than 1 MiB ({} bytes); point --policy at \
                 a YAML or JSON policy file\n",
                big.len()
            )
            .as_str()
        )
    );

    // Refused before anything was scanned.
    assert_eq!(fake.request_count(), 0, "{:?}", fake.requests());
}

// --- Verdicts (need the integration: result.policy, CRITICAL, the `Policy:` line) -----------

#[test]
fn a_met_policy_says_so_and_never_changes_the_state() {
    let fake = FakeInstance::start(healthy());
    let run = scan_with(
        &fake,
        "met-ok",
        "minimum_rating: 4\nforbidden: [demoUsersDisabled, exposed, \"vulnerability\"]\n",
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.line(0).starts_with("OK: "), "{}", run.stdout);
    assert!(
        run.has_line("Policy: every requirement is met"),
        "{}",
        run.stdout
    );

    // A policy only worsens a verdict: a WARNING host meeting it stays WARNING.
    let weak = FakeInstance::start(default_install());
    let run = scan_with(&weak, "met-warning", "minimum_rating: 2\n", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.line(0).starts_with("WARNING: "), "{}", run.stdout);
    assert!(
        run.has_line("Policy: every requirement is met"),
        "{}",
        run.stdout
    );

    // JSON policies (.json suffix) work the same.
    let path = policy_file("met-json", "policy.json", r#"{"minimum_rating": 5}"#);
    let shown = path.display().to_string();
    let run = scan(&fake, "met-json", &["--policy", &shown]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.has_line("Policy: every requirement is met"),
        "{}",
        run.stdout
    );

    // Without a policy there is no Policy line.
    let run = scan(&fake, "no-policy", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(policy_line(&run), None, "{}", run.stdout);
}

#[test]
fn a_rating_below_the_minimum_is_critical() {
    let fake = FakeInstance::start(default_install());
    let run = scan_with(&fake, "rating", "minimum_rating: 4\n", &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.line(0).starts_with("CRITICAL: "), "{}", run.stdout);
    assert!(
        run.line(1).contains("rating: D"),
        "the rating itself is unchanged: {}",
        run.stdout
    );
    assert_unmet(&run, &["rating 2 (D) is below the minimum 4 (A)"]);
}

#[test]
fn a_forbidden_finding_is_critical_even_when_waived() {
    let fake = FakeInstance::start(default_install());
    let run = scan_with(
        &fake,
        "forbidden",
        "forbidden:\n  - demoUsersDisabled\n",
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.line(0).starts_with("CRITICAL: "), "{}", run.stdout);
    assert_unmet(&run, &["forbidden finding demoUsersDisabled is present"]);

    // The waiver takes the demo accounts out of the rating (OK, rated A, from the rest) ...
    let waiver = ["--ignore-hardening", "demoUsersDisabled"];
    let run = scan(&fake, "forbidden-waived-no-policy", &waiver);
    assert_eq!(run.code, 0, "{}", run.stdout);
    // ... but never excuses the policy requirement.
    let run = scan_with(
        &fake,
        "forbidden-waived",
        "forbidden: [demoUsersDisabled]\n",
        &waiver,
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.line(0).starts_with("CRITICAL: "), "{}", run.stdout);
    assert_unmet(
        &run,
        &[
            "forbidden finding demoUsersDisabled is present (waived, but waivers never excuse a \
           policy requirement)",
        ],
    );

    // A family root forbids every member.
    let run = scan_with(
        &fake,
        "forbidden-family",
        "forbidden: [versionDisclosure]\n",
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_unmet(
        &run,
        &[
            "forbidden finding versionDisclosure is present: versionDisclosure:X-Graph-Version, \
           versionDisclosure:X-Idp-Version, versionDisclosure:X-Web-Version",
        ],
    );
}

#[test]
fn a_forbidden_vulnerability_by_advisory_id_or_alias_is_critical() {
    // 4.0.5: GHSA-gf4p-7p27-26w7 (medium, alias CVE-2026-57500) is open: WARNING by itself.
    let fake = FakeInstance::start(healthy().version("4.0.5"));
    let run = scan(&fake, "vulnerable", &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let run = scan_with(
        &fake,
        "vulnerable-id",
        "forbidden: [\"vulnerability:GHSA-gf4p-7p27-26w7\"]\n",
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_unmet(
        &run,
        &["forbidden finding vulnerability:GHSA-gf4p-7p27-26w7 is present"],
    );
    let run = scan_with(
        &fake,
        "vulnerable-alias",
        "forbidden: [CVE-2026-57500]\n",
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_unmet(
        &run,
        &["forbidden finding CVE-2026-57500 is present: vulnerability:GHSA-gf4p-7p27-26w7"],
    );
    // An advisory that does not affect the release is not present.
    let run = scan_with(
        &fake,
        "vulnerable-other",
        "forbidden: [GHSA-vf5j-r2hw-2hrw]\n",
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.has_line("Policy: every requirement is met"),
        "{}",
        run.stdout
    );
}

#[test]
fn required_hardenings_are_evaluated_without_check_hardening() {
    // The real default CSP allows 'unsafe-inline'; X-Content-Type-Options is in place.
    let fake = FakeInstance::start(healthy());
    let run = scan_with(
        &fake,
        "required-met",
        "required_hardenings: [X-Content-Type-Options]\n",
        &[],
    );
    // Evaluated for the policy, without --check-hardening's OK-to-WARNING rule: still OK
    // although hstsPreload, cspWithoutUnsafeInline and Permissions-Policy are missing.
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.has_line("Policy: every requirement is met"),
        "{}",
        run.stdout
    );

    let run = scan_with(
        &fake,
        "required-unmet",
        "required_hardenings:\n  - X-Content-Type-Options\n  - cspWithoutUnsafeInline\n",
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.line(0).starts_with("CRITICAL: "), "{}", run.stdout);
    assert_unmet(
        &run,
        &["required hardening cspWithoutUnsafeInline is missing"],
    );

    // Forbidding a missing measure also has the measures evaluated.
    let run = scan_with(
        &fake,
        "forbidden-measure",
        "forbidden: [hstsPreload]\n",
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_unmet(&run, &["forbidden finding hstsPreload is present"]);

    // Waiving the measure does not excuse the requirement.
    let run = scan_with(
        &fake,
        "required-waived",
        "required_hardenings: [cspWithoutUnsafeInline]\n",
        &["--check-hardening", "--ignore-hardening", "csp*"],
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_unmet(
        &run,
        &[
            "required hardening cspWithoutUnsafeInline is missing (waived, but waivers never \
           excuse a policy requirement)",
        ],
    );
}

#[test]
fn every_unmet_requirement_is_in_the_output_and_the_json_document() {
    let fake = FakeInstance::start(default_install());
    let policy = "minimum_rating: 4\nrequired_hardenings: [hstsPreload]\n\
                  forbidden: [demoUsersDisabled, exposed]\n";
    let expected = [
        "rating 2 (D) is below the minimum 4 (A)",
        "required hardening hstsPreload is missing",
        "forbidden finding demoUsersDisabled is present",
    ];
    let run = scan_with(&fake, "all-unmet", policy, &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_unmet(&run, &expected);

    let run = scan_with(&fake, "all-unmet-json", policy, &["--format", "json"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let host = &doc[0];
    assert_eq!(host["state"], "CRITICAL", "{}", run.stdout);
    assert_eq!(
        host["policy"],
        serde_json::json!({"met": false, "unmet": expected}),
        "{}",
        run.stdout
    );

    let healthy = FakeInstance::start(healthy());
    let run = scan_with(
        &healthy,
        "met-json-doc",
        "minimum_rating: 5\n",
        &["--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        doc[0]["policy"],
        serde_json::json!({"met": true, "unmet": []}),
        "{}",
        run.stdout
    );
}

/// The `Policy:` line names the count and every unmet requirement in order.
fn assert_unmet(run: &Run, sentences: &[&str]) {
    let line = policy_line(run).unwrap_or_else(|| panic!("no Policy line: {}", run.stdout));
    let head = format!("Policy: {} requirement", sentences.len());
    assert!(line.starts_with(&head), "{line}");
    let listed = line
        .split_once("unmet: ")
        .unwrap_or_else(|| panic!("no unmet list: {line}"))
        .1;
    let mut rest = listed;
    for sentence in sentences {
        let at = rest
            .find(sentence)
            .unwrap_or_else(|| panic!("{sentence:?} missing or out of order in {line:?}"));
        rest = &rest[at + sentence.len()..];
    }
}
