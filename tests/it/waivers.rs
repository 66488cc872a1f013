//! Time-limited waivers end to end: a waived finding stops counting until its expiry and alerts
//! again afterwards with no change of configuration; `--waiver-warning` warns ahead of it.

use crate::support::{FakeInstance, InstanceConfig};
use std::path::Path;
use std::process::Command;

fn run(name: &str, now: &str, args: &[&str], fake: &FakeInstance) -> (String, i32) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("waivers-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ca = fake.ca_file().display().to_string();
    let host = fake.host_port();
    let mut all = vec![
        "-H",
        &host,
        "--ca-file",
        &ca,
        "--update-source",
        "bundled",
        "--backoff-factor",
        "0",
        "--no-debug-ports",
    ];
    all.extend(args);
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-security"))
        .args(&all)
        .env_clear()
        .env("HOME", &dir)
        .env("COS_NOW", now)
        .current_dir(&dir)
        .output()
        .unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        output.status.code().unwrap(),
    )
}

fn perf<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    out.lines()
        .last()?
        .trim_start_matches('|')
        .split(' ')
        .find(|m| m.starts_with(&format!("{name}=")))
}

/// A default install: demo accounts (critical), wildcard CORS (public access, passes) and
/// version headers (low).
fn default_install() -> FakeInstance {
    FakeInstance::start(InstanceConfig::default().version("8.1.0"))
}

const WAIVER: &str =
    "demoUsersDisabled|2026-12-01T00:00:00Z|accounts are deleted in the December maintenance";

#[test]
fn a_waiver_hides_a_finding_until_it_expires() {
    let fake = default_install();
    let (out, code) = run(
        "active",
        "2026-11-22T03:00:00Z",
        &["--waive-until", WAIVER],
        &fake,
    );
    assert_eq!(
        code, 0,
        "the demo finding no longer counts; version headers (low) leave A+\n{out}"
    );
    assert!(out.lines().nth(1).unwrap().contains("rating: A+,"), "{out}");
    assert_eq!(
        perf(&out, "waiver_days_left"),
        Some("waiver_days_left=8;;;0"),
        "{out}"
    );

    // The same command after the expiry alerts again.
    let (out, code) = run(
        "expired",
        "2026-12-01T00:00:00Z",
        &["--waive-until", WAIVER],
        &fake,
    );
    assert_eq!(code, 1, "critical caps at D again\n{out}");
    assert!(out.contains("demoUsersDisabled failed (critical)"), "{out}");
    assert_eq!(perf(&out, "waiver_days_left"), None, "{out}");
}

#[test]
fn waiver_warning_warns_before_the_expiry() {
    let fake = default_install();
    let mut args = vec!["--waive-until", WAIVER, "--waiver-warning", "8"];
    let (out, code) = run("warning", "2026-11-22T03:00:00Z", &args, &fake);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("WARNING: "), "{out}");
    assert!(
        out.contains("a waiver hiding a failing check ends in 8 day(s)"),
        "{out}"
    );
    assert_eq!(
        perf(&out, "waiver_days_left"),
        Some("waiver_days_left=8;@~:8;;0")
    );
    args[3] = "7";
    let (out, code) = run("no-warning", "2026-11-22T03:00:00Z", &args, &fake);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_permanent_pattern_takes_the_deadline_out() {
    let fake = default_install();
    let (out, _) = run(
        "permanent",
        "2026-11-22T03:00:00Z",
        &[
            "--waive-until",
            WAIVER,
            "--ignore-hardening",
            "demoUsers*",
            "--waiver-warning",
            "30",
        ],
        &fake,
    );
    assert_eq!(perf(&out, "waiver_days_left"), None, "{out}");
    assert!(!out.contains("waiver hiding"), "{out}");
}

#[test]
fn bad_waivers_are_refused_with_the_fix() {
    let fake = default_install();
    for (waiver, expected) in [
        (
            "demoUsersDisabled|2026-12-01|later",
            "is not an ISO 8601 timestamp with a time zone",
        ),
        (
            "demoUsersDisabled|2026-12-01T00:00:00Z| ",
            "has an empty reason",
        ),
    ] {
        let (out, code) = run(
            "bad",
            "2026-11-22T03:00:00Z",
            &["--waive-until", waiver],
            &fake,
        );
        assert_eq!(code, 3, "{out}");
        assert!(
            out.starts_with("UNKNOWN: ") && out.contains(expected),
            "{out}"
        );
    }
}

#[test]
fn the_json_lists_every_waiver_with_its_state() {
    let fake = default_install();
    let (out, _) = run(
        "json",
        "2026-11-22T03:00:00Z",
        &[
            "--format",
            "json",
            "--waive-until",
            WAIVER,
            "--waive-until",
            "tlsTrusted|2026-11-01T00:00:00Z|old certificate",
            "--ignore-hardening",
            "nothingMatches",
        ],
        &fake,
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let states: Vec<(&str, &str)> = doc[0]["waivers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["pattern"].as_str().unwrap(), w["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        vec![
            ("nothingMatches", "unmatched"),
            ("demoUsersDisabled", "active"),
            ("tlsTrusted", "expired")
        ]
    );
    let demo = doc[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "demoUsersDisabled")
        .unwrap();
    assert_eq!(demo["ignored"], true, "waived findings stay in the JSON");
}
