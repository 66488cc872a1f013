//! Every class with a fixed clock, several hosts and files together, and what a file that is
//! not a result document gets.

use super::*;
use serde_json::json;

const NOW: &str = "2026-11-22T03:00:00Z";

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// A waiver as the plugin lists it: dated ones come from `--waive-until` with a reason.
fn waiver(pattern: &str, expires: Option<&str>) -> serde_json::Value {
    match expires {
        Some(e) => json!({
            "pattern": pattern, "source": "--waive-until", "state": "active", "permanent": false,
            "expires": e, "reason": "accepted for now", "daysLeft": 3, "matched": []
        }),
        None => json!({
            "pattern": pattern, "source": "--ignore-hardening", "state": "active",
            "permanent": true, "expires": null, "reason": null, "daysLeft": null, "matched": []
        }),
    }
}

/// A result document with the members the review reads (and a few it skips).
fn doc(host: &str, findings: &[(&str, &str)], waivers: &[serde_json::Value]) -> serde_json::Value {
    json!({
        "host": host,
        "scannedAt": "2026-11-20T03:00:00Z",
        "state": "OK",
        "error": null,
        "rating": 5,
        "findings": findings.iter().map(|(id, status)| json!({
            "id": id, "role": "check", "status": status, "severity": "low",
            "detail": "x", "ignored": false
        })).collect::<Vec<_>>(),
        "waivers": waivers,
        "aMemberOfANewerScanner": {"notes": [[[]]]},
    })
}

fn read(files: &[serde_json::Value]) -> Documents {
    let mut docs = Documents::default();
    for file in files {
        docs.read(file.to_string().as_bytes()).unwrap();
    }
    docs
}

fn reviewed(files: &[serde_json::Value], window: i64) -> Review {
    review(&read(files), at(NOW), window).unwrap()
}

/// `(class, pattern)` of every entry, in report order.
fn classes(r: &Review) -> Vec<(Class, String)> {
    r.entries
        .iter()
        .map(|e| (e.class, e.waiver.pattern.clone()))
        .collect()
}

fn line(r: &Review, class: Class) -> String {
    r.of(class)
        .map(|e| e.line.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_expired_waiver_is_to_be_removed_or_renewed() {
    let r = reviewed(
        &[doc(
            "a.example",
            &[("tlsTrusted", "failed")],
            &[waiver("tlsTrusted", Some("2026-11-01T00:00:00Z"))],
        )],
        14,
    );
    assert_eq!(
        classes(&r),
        [(Class::Expired, "tlsTrusted".into())],
        "expired, and neither unused nor expiring"
    );
    assert_eq!(
        line(&r, Class::Expired),
        "tlsTrusted (--waive-until, until 2026-11-01T00:00:00Z, \"accepted for now\"): ended 21 \
         days ago; it no longer hides tlsTrusted on a.example; remove it or renew it with a new \
         date and reason"
    );
    assert_eq!(r.exit_code(), 1);
    assert!(
        r.text()
            .starts_with("WARNING: 1 waiver needs attention (1 expired)\n"),
        "{}",
        r.text()
    );
    // At the expiry itself it has ended: the plugin alerts again from that second on.
    let r = review(
        &read(&[doc(
            "a.example",
            &[],
            &[waiver("x", Some("2026-11-22T03:00:00Z"))],
        )]),
        at(NOW),
        14,
    )
    .unwrap();
    assert_eq!(classes(&r), [(Class::Expired, "x".into())]);
}

#[test]
fn a_waiver_ending_within_the_window_is_expiring() {
    let files = [doc(
        "a.example",
        &[("demoUsersDisabled", "failed"), ("hstsPreload", "failed")],
        &[
            waiver("demoUsersDisabled", Some("2026-12-01T00:00:00Z")),
            waiver("hstsPreload", Some("2026-12-22T03:00:00Z")),
        ],
    )];
    let r = reviewed(&files, 14);
    assert_eq!(classes(&r), [(Class::Expiring, "demoUsersDisabled".into())]);
    assert_eq!(
        line(&r, Class::Expiring),
        "demoUsersDisabled (--waive-until, until 2026-12-01T00:00:00Z, \"accepted for now\"): \
         ends in 8 days; then demoUsersDisabled on a.example will alert again; fix what it hides, or \
         renew it with a new date and reason"
    );
    // The window counts whole days, as --waiver-warning does for the plugin: 30 days left.
    assert_eq!(reviewed(&files, 29).of(Class::Expiring).count(), 1);
    assert_eq!(reviewed(&files, 30).of(Class::Expiring).count(), 2);
    assert_eq!(reviewed(&files, 7).of(Class::Expiring).count(), 0);
    assert_eq!(reviewed(&files, 7).exit_code(), 0);
}

#[test]
fn a_waiver_hiding_nothing_on_any_host_is_unused() {
    let waivers = [
        waiver("nothingMatches", None),
        waiver("exposed", None),
        waiver("corsOriginRestricted", Some("2027-06-01T00:00:00Z")),
        waiver("debugPort:*", None),
    ];
    let r = reviewed(
        &[
            doc(
                "a.example",
                &[
                    ("exposed:/.env", "passed"),
                    ("corsOriginRestricted", "passed"),
                ],
                &waivers,
            ),
            // Used on one host is used; a passing finding is not hidden.
            doc(
                "b.example",
                &[
                    ("exposed:/.env", "failed"),
                    ("corsOriginRestricted", "passed"),
                    ("debugPort:9205", "network-limited"),
                ],
                &waivers,
            ),
        ],
        14,
    );
    let unused: Vec<String> = r.of(Class::Unused).map(|e| e.line.clone()).collect();
    assert_eq!(
        unused,
        [
            "nothingMatches (--ignore-hardening): matches no failing finding on a.example and \
             b.example; remove it",
            "corsOriginRestricted (--waive-until, until 2027-06-01T00:00:00Z, \"accepted for \
             now\"): matches no failing finding on a.example and b.example; remove it",
        ],
        "a waiver matching an undecided finding (debugPort:9205) may still be needed"
    );
    assert_eq!(r.attention, 2);
}

#[test]
fn unused_counts_only_the_hosts_whose_documents_list_the_waiver() {
    // b.example fails hstsPreload, but its run had no such waiver.
    let r = reviewed(
        &[
            doc(
                "a.example",
                &[("hstsPreload", "passed")],
                &[waiver("hstsPreload", None)],
            ),
            doc("b.example", &[("hstsPreload", "failed")], &[]),
        ],
        14,
    );
    assert_eq!(
        line(&r, Class::Unused),
        "hstsPreload (--ignore-hardening): matches no failing finding on a.example; remove it"
    );
}

#[test]
fn a_permanent_and_a_dated_waiver_on_one_finding_keep_the_dated_one() {
    let r = reviewed(
        &[doc(
            "a.example",
            &[("demoUsersDisabled", "failed")],
            &[
                waiver("demoUsers*", None),
                waiver("demoUsersDisabled", Some("2027-01-31T00:00:00Z")),
            ],
        )],
        14,
    );
    assert_eq!(
        line(&r, Class::Overlapping),
        "demoUsers* (--ignore-hardening) and demoUsersDisabled (--waive-until, until \
         2027-01-31T00:00:00Z, \"accepted for now\") both hide demoUsersDisabled on a.example: \
         keep the dated demoUsersDisabled; remove demoUsers*"
    );
    assert_eq!(
        r.of(Class::Overlapping).next().unwrap().waiver.pattern,
        "demoUsers*",
        "the entry is about the waiver to act on"
    );
    // Nothing alerts when the dated one ends while the permanent one stands.
    let expiring = reviewed(
        &[doc(
            "a.example",
            &[("demoUsersDisabled", "failed")],
            &[
                waiver("demoUsers*", None),
                waiver("demoUsersDisabled", Some("2026-12-01T00:00:00Z")),
            ],
        )],
        14,
    );
    assert!(
        line(&expiring, Class::Expiring)
            .contains("ends in 8 days; a waiver outlasting it hides the same; fix what it hides"),
        "{}",
        line(&expiring, Class::Expiring)
    );
    assert_eq!(r.attention, 1, "the permanent one, not the dated one");
}

#[test]
fn a_family_root_and_a_pattern_inside_it_keep_the_narrower() {
    let waivers = [
        waiver("versionDisclosure", None),
        waiver("versionDisclosure:X-*", None),
    ];
    let r = reviewed(
        &[doc(
            "a.example",
            &[("versionDisclosure:X-Web-Version", "failed")],
            &waivers,
        )],
        14,
    );
    assert_eq!(
        line(&r, Class::Overlapping),
        "versionDisclosure (--ignore-hardening) and versionDisclosure:X-* (--ignore-hardening) \
         both hide versionDisclosure:X-Web-Version on a.example: keep the narrower \
         versionDisclosure:X-*; remove versionDisclosure"
    );
    // Where the root also hides what the narrower one does not, it is narrowed, not removed.
    let r = reviewed(
        &[
            doc(
                "a.example",
                &[("versionDisclosure:X-Web-Version", "failed")],
                &waivers,
            ),
            doc(
                "b.example",
                &[
                    ("versionDisclosure:X-Web-Version", "failed"),
                    ("versionDisclosure:Server", "failed"),
                ],
                &waivers,
            ),
        ],
        14,
    );
    assert_eq!(
        line(&r, Class::Overlapping),
        "versionDisclosure (--ignore-hardening) and versionDisclosure:X-* (--ignore-hardening) \
         both hide versionDisclosure:X-Web-Version on a.example and b.example: keep the narrower \
         versionDisclosure:X-*; narrow versionDisclosure so it no longer covers \
         versionDisclosure:X-Web-Version"
    );
}

#[test]
fn two_dated_waivers_of_one_pattern_keep_the_later_one() {
    let r = reviewed(
        &[doc(
            "a.example",
            &[("hstsPreload", "failed")],
            &[
                waiver("hstsPreload", Some("2027-03-01T00:00:00Z")),
                waiver("hstsPreload", Some("2027-05-01T00:00:00Z")),
            ],
        )],
        14,
    );
    let overlap = r.of(Class::Overlapping).next().unwrap();
    assert_eq!(overlap.waiver.expires, Some(at("2027-03-01T00:00:00Z")));
    assert!(
        overlap.line.ends_with(
            "keep the later-ending hstsPreload (until 2027-05-01T00:00:00Z); remove hstsPreload \
             (until 2027-03-01T00:00:00Z)"
        ),
        "{}",
        overlap.line
    );
}

#[test]
fn waivers_of_different_runs_do_not_overlap() {
    // Each host's run had one of the two waivers: no host has both.
    let r = reviewed(
        &[
            doc(
                "a.example",
                &[("hstsPreload", "failed")],
                &[waiver("hstsPreload", None)],
            ),
            doc(
                "b.example",
                &[("hstsPreload", "failed")],
                &[waiver("*Preload", None)],
            ),
        ],
        14,
    );
    assert_eq!(r.of(Class::Overlapping).count(), 0);
    // Nor does an expired waiver overlap: it hides nothing any more.
    let r = reviewed(
        &[doc(
            "a.example",
            &[("hstsPreload", "failed")],
            &[
                waiver("hstsPreload", None),
                waiver("hstsPreload", Some("2026-01-01T00:00:00Z")),
            ],
        )],
        14,
    );
    assert_eq!(r.of(Class::Overlapping).count(), 0);
}

#[test]
fn permanent_waivers_are_listed_but_need_no_attention() {
    let r = reviewed(
        &[doc(
            "a.example",
            &[("hstsPreload", "failed")],
            &[waiver("hstsPreload", None)],
        )],
        14,
    );
    assert_eq!(
        line(&r, Class::Permanent),
        "hstsPreload (--ignore-hardening): never expires; give it an expiry and a reason: \
         --waive-until 'hstsPreload|EXPIRY|REASON'"
    );
    assert_eq!(r.exit_code(), 0);
    assert_eq!(
        r.text(),
        "OK: 1 waiver, none needs attention (1 permanent)\n\
         Reviewed 1 result document of 1 host from 1 file at 2026-11-22T03:00:00Z; expiring \
         means ending within 14 days (--waiver-warning)\n\
         Permanent (1):\n  \
         hstsPreload (--ignore-hardening): never expires; give it an expiry and a reason: \
         --waive-until 'hstsPreload|EXPIRY|REASON'\n\
         | waivers=1;;;0 expired=0;0;;0 expiring=0;0;;0 unused=0;0;;0 overlapping=0;0;;0 \
         permanent=1;;;0\n"
    );
}

#[test]
fn the_report_groups_one_line_per_waiver_and_class_under_a_summary() {
    let waivers = [
        waiver("tlsTrusted", Some("2026-11-01T00:00:00Z")),
        waiver("demoUsersDisabled", Some("2026-12-01T00:00:00Z")),
        waiver("nothingMatches", None),
        waiver("hstsPreload", None),
    ];
    let files = [
        json!([doc(
            "a.example",
            &[
                ("tlsTrusted", "failed"),
                ("demoUsersDisabled", "failed"),
                ("hstsPreload", "failed")
            ],
            &waivers
        )]),
        doc("b.example", &[("hstsPreload", "failed")], &waivers),
    ];
    let r = reviewed(&files, 14);
    let text = r.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "WARNING: 3 waivers need attention (1 expired, 1 expiring, 1 unused)"
    );
    assert_eq!(
        lines[1],
        "Reviewed 2 result documents of 2 hosts from 2 files at 2026-11-22T03:00:00Z; expiring \
         means ending within 14 days (--waiver-warning)"
    );
    let headings: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.starts_with("  ") && l.ends_with("):"))
        .collect();
    assert_eq!(
        headings,
        [
            "Expired (1):",
            "Expiring within 14 days (1):",
            "Unused (1):",
            "Permanent (2):"
        ]
    );
    assert_eq!(
        lines.last().copied(),
        Some(
            "| waivers=4;;;0 expired=1;0;;0 expiring=1;0;;0 unused=1;0;;0 overlapping=0;0;;0 \
             permanent=2;;;0"
        )
    );
    assert_eq!(r.exit_code(), 1);
}

#[test]
fn no_waivers_and_failed_scans_are_said_so() {
    let mut failed = doc("down.example", &[], &[]);
    failed["error"] = json!({"message": "connection refused", "attempts": 3});
    let r = reviewed(&[json!([doc("a.example", &[], &[]), failed])], 14);
    assert_eq!(r.exit_code(), 0);
    let text = r.text();
    assert!(
        text.starts_with(
            "OK: no waivers in 2 result documents\nReviewed 2 result documents of 2 hosts from 1 \
             file at 2026-11-22T03:00:00Z (1 failed scan without findings to review against);"
        ),
        "{text}"
    );
}

#[test]
fn names_from_a_document_cannot_break_the_report() {
    let hostile = "x\nOK: all fine\u{202e}";
    let r = reviewed(
        &[doc(
            hostile,
            &[],
            &[waiver(&format!("{hostile}{}", "y".repeat(200)), None)],
        )],
        14,
    );
    let text = r.text();
    assert_eq!(
        text.lines().count(),
        7,
        "summary, reviewed, two headings, two lines, perfdata\n{text}"
    );
    assert!(!text.contains('\u{202e}'), "{text}");
    assert!(text.contains(r#""x\nOK: all fine\u{202e}yyy"#), "{text}");
    assert!(!text.contains(&"y".repeat(101)), "names are cut\n{text}");
}

/// The problem `read` reports for a file's content.
fn refused(content: &str) -> String {
    let mut docs = read(&[doc("kept.example", &[], &[waiver("kept", None)])]);
    let problem = docs.read(content.as_bytes()).unwrap_err();
    let r = review(&docs, at(NOW), 14).unwrap();
    assert_eq!(
        (r.documents, r.waivers, r.files),
        (1, 1, 1),
        "a refused file adds nothing"
    );
    problem
}

#[test]
fn what_is_not_a_result_document_is_refused_in_one_line() {
    let good = doc("a.example", &[], &[]);
    let without = |member: &str| {
        let mut d = good.clone();
        d.as_object_mut().unwrap().remove(member);
        d.to_string()
    };
    let with = |member: &str, value: serde_json::Value| {
        let mut d = good.clone();
        d[member] = value;
        d.to_string()
    };
    for (content, expected) in [
        (
            "",
            "is not JSON (EOF while parsing a value at line 1 column 0)",
        ),
        ("<html>", "is not JSON (expected value at line 1 column 1)"),
        (
            "\"a string\"",
            "is not a result document (invalid type: string \"a string\", expected a result \
             document (a JSON object)",
        ),
        (
            "[]",
            "is not a result document (an empty array holds no result document",
        ),
        (
            "[1]",
            "is not a result document (invalid type: integer `1`, expected a result document",
        ),
        (
            r#"{"version": 1, "hosts": {}}"#,
            "is not a result document (missing field `host`",
        ),
        (
            &without("waivers"),
            "is not a result document (missing field `waivers`",
        ),
        (
            &format!("[{good}, {}]", without("findings")),
            "is not a result document (missing field `findings`",
        ),
        (
            &format!("{good} {good}"),
            "is not JSON (trailing characters",
        ),
        (
            r#"{"host": "a", "host": "b"}"#,
            "is not a result document (duplicate field `host`",
        ),
        (
            r#"{"host": "a", "scannedAt": "2026-11-22T03:00:00Z", "findings": [{"id": "a", "status": "odd"}]}"#,
            "is not a result document (unknown variant `odd`",
        ),
        (
            r#"{"host": "a", "scannedAt": "2026-11-22T03:00:00Z", "findings": [{"id": "a"}]}"#,
            "is not a result document (missing field `status`",
        ),
        (
            r#"{"host": "a", "scannedAt": "2026-11-22T03:00:00Z", "findings": {}}"#,
            "is not a result document (invalid type: map, expected a sequence",
        ),
        (
            r#"{"host": "a", "scannedAt": "2026-11-22T03:00:00Z", "state": "OK", "findings": [], "waivers": [
                {"pattern": "p", "source": "s", "expires": "2026-12-01"}]}"#,
            "is not a result document (a waiver expiry \"2026-12-01\" that is no timestamp",
        ),
        (
            r#"{"host": "a", "scannedAt": "2026-11-22T03:00:00Z", "findings": [], "waivers": [{"pattern": ""}]}"#,
            "is not a result document (missing field `source`",
        ),
        (
            r#"{"host": "a", "scannedAt": "2026-11-22T03:00:00Z", "state": "OK", "findings": [],
                "waivers": [{"pattern": "", "source": "s"}]}"#,
            "is not a result document (a waiver with an empty pattern",
        ),
        (
            &with("host", json!("h".repeat(MAX_NAME_BYTES + 1))),
            "is not a result document (the host is longer than 256 bytes",
        ),
        (
            &with(
                "findings",
                json!([{"id": "i".repeat(MAX_NAME_BYTES + 1), "status": "failed",
                        "severity": "low"}]),
            ),
            "is not a result document (a finding id that is empty or longer than 256 bytes",
        ),
        (
            &format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
            "is not a result document (invalid type: sequence",
        ),
        (
            &format!(
                r#"{{"host": "a", "x": {}{}}}"#,
                "[".repeat(10_000),
                "]".repeat(10_000)
            ),
            // Skipped members are skipped however deep, without recursion.
            "is not a result document (missing field `scannedAt`",
        ),
    ] {
        let problem = refused(content);
        assert!(
            problem.starts_with(expected),
            "{content:.80}\n  got: {problem}\n want: {expected}"
        );
        assert!(!problem.contains('\n'));
        assert!(problem.len() < 260, "{problem}");
    }
}

#[test]
fn caps_refuse_a_file_instead_of_holding_it() {
    let waivers: Vec<serde_json::Value> = (0..=MAX_WAIVERS)
        .map(|n| waiver(&format!("w{n}"), None))
        .collect();
    assert!(
        refused(&doc("a.example", &[], &waivers).to_string())
            .starts_with("holds more than 128 distinct waivers"),
    );
    let ids: Vec<String> = (0..=MAX_IDS).map(|n| format!("id{n}")).collect();
    let findings: Vec<(&str, &str)> = ids.iter().map(|id| (id.as_str(), "failed")).collect();
    assert!(
        refused(&doc("a.example", &findings, &[]).to_string())
            .starts_with("holds more than 4096 distinct failing finding ids"),
    );
    // Passing findings are not kept, so any number of them is fine.
    let passing: Vec<(&str, &str)> = ids.iter().map(|id| (id.as_str(), "passed")).collect();
    read(&[doc("a.example", &passing, &[])]);
    let many = serde_json::Value::Array(vec![doc("a.example", &[], &[]); MAX_DOCUMENTS + 1]);
    assert!(refused(&many.to_string()).starts_with("holds more than 4096 result documents"));
}

#[test]
fn the_caps_bound_the_work_of_a_hostile_review() {
    // Every waiver matches every failing id of every host: all pairs overlap everywhere.
    let waivers: Vec<serde_json::Value> = (0..MAX_WAIVERS)
        .map(|n| {
            let pattern = format!("{}{}*", "*".repeat(n / 40), "a".repeat(n % 40));
            waiver(&pattern, None)
        })
        .collect();
    let ids: Vec<String> = (0..64).map(|n| format!("{}{n}", "a".repeat(40))).collect();
    let findings: Vec<(&str, &str)> = ids.iter().map(|id| (id.as_str(), "failed")).collect();
    let docs: Vec<serde_json::Value> = (0..64)
        .map(|n| doc(&format!("h{n}.example"), &findings, &waivers))
        .collect();
    let started = std::time::Instant::now();
    let r = reviewed(&[serde_json::Value::Array(docs)], 14);
    assert!(r.of(Class::Overlapping).count() > 1000);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn documents_overlapping_in_too_many_ways_are_refused() {
    // Twelve patterns that each match everything; every document lists its own subset of them.
    let all: Vec<serde_json::Value> = (1..=12).map(|n| waiver(&"*".repeat(n), None)).collect();
    let docs: Vec<serde_json::Value> = (0u32..1 << 12)
        .filter(|set| set.count_ones() >= 2)
        .take(MAX_OVERLAP_SETS + 1)
        .map(|set| {
            let mine: Vec<serde_json::Value> = (0..12)
                .filter(|n| set & (1 << n) != 0)
                .map(|n| all[n].clone())
                .collect();
            doc(
                &format!("h{set}.example"),
                &[("hstsPreload", "failed")],
                &mine,
            )
        })
        .collect();
    let mut files = read(&[serde_json::Value::Array(docs)]);
    assert_eq!(
        review(&files, at(NOW), 14).unwrap_err(),
        "overlap in more than 1024 different ways (sets of waivers hiding one finding together); \
         review fewer result documents at once"
    );
    // One set fewer is reviewed.
    files.docs.pop();
    assert!(review(&files, at(NOW), 14).is_ok());
}
