//! `check-storage-scanner review-waivers --result FILE`: the real binary on result documents the
//! plugin and `scan <host>` produced from fake instances, several hosts and files together; and
//! files that are not result documents, each refused in one line naming it, exit 3.

use crate::support::plugin::{NOW, healthy, hermetic, scratch};
use crate::support::{FakeInstance, InstanceConfig};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Out {
    stdout: String,
    code: i32,
}

fn scanner(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut command = Command::new(env!("CARGO_BIN_EXE_check-storage-scanner"));
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("COS_NOW", NOW)
        .current_dir(dir);
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().expect("run the scanner");
    Out {
        stdout: String::from_utf8(output.stdout).expect("UTF-8"),
        code: output.status.code().expect("exit code"),
    }
}

/// Writes what a hermetic run of `program` (the plugin or the scanner) printed to `file`.
fn save(dir: &Path, file: &str, program: &str, args: &[&str], ca: &Path) -> PathBuf {
    let base = hermetic(ca);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(base.iter().map(String::as_str));
    let stdout = if program == "scanner" {
        scanner(dir, &all, &[]).stdout
    } else {
        crate::support::plugin::run(&format!("review-{file}"), &all, &[]).stdout
    };
    serde_json::from_str::<serde_json::Value>(&stdout).expect("a JSON document");
    let path = dir.join(file);
    std::fs::write(&path, stdout).unwrap();
    path
}

const DEMO: &str = "demoUsersDisabled|2026-12-01T00:00:00Z|accounts go in the December maintenance";

#[test]
fn reviews_the_result_documents_of_several_hosts_and_files_together() {
    let dir = scratch("review-fleet");
    // A default install (demo accounts, version headers) and one without demo accounts.
    let a = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let b = FakeInstance::start(healthy("8.1.0"));
    let hosts = format!("{},{}", a.host_port(), b.host_port());
    let fleet = save(
        &dir,
        "fleet.json",
        "plugin",
        &[
            "-H",
            &hosts,
            "--format",
            "json",
            "--waive-until",
            DEMO,
            "--waive-until",
            "tlsTrusted|2026-11-01T00:00:00Z|old certificate",
            "--ignore-hardening",
            "nothingMatches,versionDisclosure,versionDisclosure:X-*",
        ],
        &a.ca_file(),
    );
    // One host's document from the scanner, with a later date for the demo accounts.
    let single = save(
        &dir,
        "single.json",
        "scanner",
        &[
            "scan",
            &a.host_port(),
            "--waive-until",
            "demoUsersDisabled|2027-01-31T00:00:00Z|postponed to January",
        ],
        &a.ca_file(),
    );
    let (fleet, single) = (fleet.display().to_string(), single.display().to_string());
    let args = ["review-waivers", "--result", &fleet, "--result", &single];
    let out = scanner(&dir, &args, &[]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "WARNING: 4 waivers need attention (1 expired, 1 expiring, 1 unused, 1 overlapping)"
    );
    assert_eq!(
        lines[1],
        "Reviewed 3 result documents of 2 hosts from 2 files at 2026-11-22T03:00:00Z; expiring \
         means ending within 14 days (--waiver-warning)"
    );
    let (a, b) = (a.host_port(), b.host_port());
    for expected in [
        "Expired (1):".to_string(),
        "  tlsTrusted (--waive-until, until 2026-11-01T00:00:00Z, \"old certificate\"): ended 21 \
         days ago; remove it or renew it with a new date and reason"
            .to_string(),
        "Expiring within 14 days (1):".to_string(),
        format!(
            "  demoUsersDisabled (--waive-until, until 2026-12-01T00:00:00Z, \"accounts go in the \
             December maintenance\"): ends in 8 days; then demoUsersDisabled on {a} will alert again; \
             fix what it hides, or renew it with a new date and reason"
        ),
        "Unused (1):".to_string(),
        format!(
            "  nothingMatches (--ignore-hardening): matches no failing finding on {a} and {b}; \
             remove it"
        ),
        "Overlapping (1):".to_string(),
        format!(
            "  versionDisclosure (--ignore-hardening) and versionDisclosure:X-* \
             (--ignore-hardening) both hide versionDisclosure:X-Graph-Version, \
             versionDisclosure:X-Idp-Version and versionDisclosure:X-Web-Version on {a} and {b}: \
             keep the narrower versionDisclosure:X-*; remove versionDisclosure"
        ),
        "Permanent (3):".to_string(),
        "| waivers=6;;;0 expired=1;0;;0 expiring=1;0;;0 unused=1;0;;0 overlapping=1;0;;0 \
         permanent=3;;;0"
            .to_string(),
    ] {
        assert!(
            lines.contains(&expected.as_str()),
            "missing {expected:?}\n{}",
            out.stdout
        );
    }

    // The window is --waiver-warning, from the command line or the environment.
    let out = scanner(&dir, &[&args[..], &["--waiver-warning", "7"]].concat(), &[]);
    assert!(
        out.stdout.starts_with(
            "WARNING: 3 waivers need attention (1 expired, 1 unused, 1 overlapping)\n"
        ),
        "{}",
        out.stdout
    );
    let out = scanner(&dir, &args, &[("COS_WAIVER_WARNING", "90")]);
    assert!(
        out.stdout.contains("Expiring within 90 days (2):\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn nothing_to_clean_up_is_ok() {
    let dir = scratch("review-ok");
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let path = save(
        &dir,
        "ok.json",
        "plugin",
        &[
            "-H",
            &fake.host_port(),
            "--format",
            "json",
            "--waive-until",
            "demoUsersDisabled|2027-03-01T00:00:00Z|accounts go in the March maintenance",
        ],
        &fake.ca_file(),
    );
    let path = path.display().to_string();
    let out = scanner(&dir, &["review-waivers", "--result", &path], &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        out.stdout.lines().next(),
        Some("OK: 1 waiver, none needs attention")
    );
    // The same file reviewed later: the clock is the review's, not the scan's.
    let out = scanner(
        &dir,
        &["review-waivers", "--result", &path],
        &[("COS_NOW", "2027-02-20T00:00:00Z")],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("WARNING: 1 waiver needs attention (1 expiring)\n"),
        "{}",
        out.stdout
    );
}

/// The one line a refused `--result` gets, and its exit code.
fn refused(dir: &Path, args: &[&str]) -> (String, i32) {
    let out = scanner(dir, args, &[]);
    assert_eq!(
        out.stdout.lines().count(),
        1,
        "one line, not a report\n{}",
        out.stdout
    );
    (out.stdout.trim_end().to_string(), out.code)
}

const FIX: &str = "; give --result what check-storage-security --format json or \
                   check-storage-scanner scan printed (split a larger fleet over several --result)";

#[test]
fn a_file_that_is_not_a_result_document_is_one_line_and_exit_3() {
    let dir = scratch("review-hostile");
    let file = |name: &str, content: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        path.display().to_string()
    };
    let html = file("page.html", b"<html>not JSON</html>");
    let baseline = file(
        "baseline.json",
        br#"{"version": 1, "hosts": {"a.example": {"recordedAt": "2026-11-22T03:00:00Z"}}}"#,
    );
    let empty = file("empty.json", b"[]");
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(16 * 1024 * 1024 + 1)
        .unwrap();
    let big = big.display().to_string();
    let missing = dir.join("missing.json").display().to_string();
    let folder = dir.display().to_string();
    for (path, problem) in [
        (
            html.as_str(),
            "is not JSON (expected value at line 1 column 1)",
        ),
        (
            baseline.as_str(),
            "is not a result document (missing field `host` at line 1 column 78)",
        ),
        (
            empty.as_str(),
            "is not a result document (an empty array holds no result document)",
        ),
        (big.as_str(), "is larger than 16 MiB (16777217 bytes)"),
        (missing.as_str(), "does not exist"),
        (folder.as_str(), "is a directory, not a regular file"),
    ] {
        let (line, code) = refused(&dir, &["review-waivers", "--result", path]);
        assert_eq!(code, 3, "{line}");
        assert_eq!(line, format!("UNKNOWN: result file {path} {problem}{FIX}"));
    }

    // A FIFO is refused without waiting for a writer.
    let fifo = dir.join("fifo");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let fifo = fifo.display().to_string();
        let started = std::time::Instant::now();
        let (line, code) = refused(&dir, &["review-waivers", "--result", &fifo]);
        assert_eq!(code, 3);
        assert_eq!(
            line,
            format!("UNKNOWN: result file {fifo} is a FIFO (named pipe), not a regular file{FIX}")
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    // A path read from a reference is named by the reference.
    let holder = file("holder", html.as_bytes());
    let reference = format!("file://{holder}");
    let (line, code) = refused(&dir, &["review-waivers", "--result", &reference]);
    assert_eq!(code, 3);
    assert_eq!(
        line,
        format!(
            "UNKNOWN: result file (from {reference}) is not JSON (expected value at line 1 column \
             1){FIX}"
        )
    );

    // One bad file among good ones: no partial report.
    let good = file(
        "good.json",
        br#"{"host": "a.example", "scannedAt": "2026-11-22T03:00:00Z", "state": "OK",
             "findings": [], "waivers": []}"#,
    );
    let (line, code) = refused(
        &dir,
        &["review-waivers", "--result", &good, "--result", &html],
    );
    assert_eq!(code, 3);
    assert!(
        line.starts_with(&format!("UNKNOWN: result file {html} ")),
        "{line}"
    );
}

#[test]
fn the_review_needs_its_files_given_with_result() {
    let dir = scratch("review-usage");
    let (line, code) = refused(&dir, &["review-waivers"]);
    assert_eq!(code, 3);
    assert_eq!(
        line,
        "UNKNOWN: review-waivers needs --result FILE: what check-storage-security --format json \
         or check-storage-scanner scan printed (repeat --result for several files)"
    );
    let (line, code) = refused(&dir, &["review-waivers", "results.json"]);
    assert_eq!(code, 3);
    assert_eq!(
        line,
        "UNKNOWN: review-waivers takes its files with --result FILE, not as \"results.json\""
    );
}

#[test]
fn a_large_file_of_what_the_review_skips_is_read_quickly() {
    // Just under the cap: one document whose 15 MiB are passed findings and skipped members.
    let dir = scratch("review-large");
    let finding = r#"{"id": "exposed:/some/long/path/to/a/file/that/is/checked", "status": "passed", "severity": "low", "detail": "nothing there"},"#;
    let count = 15 * 1024 * 1024 / finding.len();
    let mut text = String::from(
        r#"{"host": "a.example", "scannedAt": "2026-11-22T03:00:00Z", "state": "OK", "waivers": [], "findings": ["#,
    );
    for _ in 0..count {
        text.push_str(finding);
    }
    text.pop();
    text.push_str("]}");
    let path = dir.join("large.json");
    std::fs::write(&path, &text).unwrap();
    let path = path.display().to_string();
    let started = std::time::Instant::now();
    let out = scanner(&dir, &["review-waivers", "--result", &path], &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("OK: no waivers in 1 result document\n"),
        "{}",
        out.stdout
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
