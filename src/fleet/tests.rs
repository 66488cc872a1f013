use super::*;
use crate::knowledge::releases::ReleaseSchedule;
use serde_json::{Value, json};

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// The bundled knowledge of every family, as the scanner loads it without operator files.
fn bundled() -> Vec<Knowledge> {
    ProductFamily::ALL
        .iter()
        .map(|f| Knowledge {
            family: *f,
            schedule: Some(ReleaseSchedule::bundled(*f)),
            advisories: advisories::bundled(*f),
            advisories_updated: crate::knowledge::bundled_advisories_updated(*f),
            advisory_sources: vec!["bundled".to_string()],
            notes: Vec::new(),
        })
        .collect()
}

fn today<'k>(now: &str, knowledge: &'k [Knowledge]) -> Today<'k> {
    Today {
        now: ts(now),
        knowledge,
        warning: 3,
        critical: 1,
        eol_warning: None,
        use_release_schedule: true,
    }
}

/// A healthy OpenCloud document as the plugin writes it (the members the view reads, and a
/// few it skips).
fn doc(host: &str, version: &str, scanned: &str, life: Option<(&str, &str)>) -> Value {
    json!({
        "host": host,
        "url": format!("https://{host}/"),
        "scannedAt": scanned,
        "durationSeconds": 1.5,
        "state": "OK",
        "message": format!("OpenCloud {version} is up to date"),
        "rating": 5,
        "grade": "A+",
        "error": null,
        "product": {"family": "opencloud", "name": "OpenCloud", "version": version,
                    "legacyVersion": "0.1.0.0", "edition": null},
        "lifecycle": life.map(|(track, state)| json!({"line": "x", "track": track, "state": state})),
        "vulnerabilities": [],
        "findings": [
            {"id": "httpsAvailable", "role": "check", "status": "passed", "severity": "high",
             "counts": true, "detail": "a long text the view never keeps"}
        ],
        "waivers": [],
        "checkHardening": false,
    })
}

fn read_one(value: &Value) -> ScanResult {
    let mut docs = read(value.to_string().as_bytes(), MAX_DOCUMENTS).unwrap();
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

fn row(value: &Value, now: &str) -> Row {
    let k = bundled();
    judge_one(&read_one(value), &today(now, &k))
}

fn details(row: &Row) -> Vec<&str> {
    row.reasons.iter().map(|r| r.detail.as_str()).collect()
}

#[test]
fn a_line_that_reached_end_of_life_since_the_scan() {
    // 4.0 is supported on the LTS track until 2027-12-01 (bundled schedule).
    let lts = doc(
        "lts.example",
        "4.0.8",
        "2026-11-22T03:00:00Z",
        Some(("lts", "supported")),
    );
    let r = row(&lts, "2027-12-10T00:00:00Z");
    assert_eq!(
        details(&r),
        [
            "line 4.0 reached end of life on 2027-12-01 (since the scan); upgrade to 7.2.4 \
             (production track)",
            "scanned 382 days ago",
        ]
    );
    assert_eq!(r.reasons[0].kind, Kind::EndOfLife);
    assert!(r.reasons[0].new);
    assert_eq!((r.state_then, r.state_now), (State::Ok, State::Critical));
    assert_eq!(r.urgency, Urgency::Critical);

    // The day before the end it is still supported; --eol-warning makes it a warning.
    let k = bundled();
    let mut t = today("2027-11-20T00:00:00Z", &k);
    let before = judge_one(&read_one(&lts), &t);
    assert_eq!(before.state_now, State::Ok);
    assert!(before.reasons.iter().all(|r| r.kind == Kind::OldScan));
    t.eol_warning = Some(30);
    let soon = judge_one(&read_one(&lts), &t);
    assert_eq!(
        soon.reasons[0].detail,
        "line 4.0 loses support on 2027-12-01 (in 11 days, --eol-warning); upgrade to 7.2.4 \
         (production track)"
    );
    assert_eq!(soon.state_now, State::Warning);

    // The document's track is the one judged: 4.0 on production ended on 2026-06-25.
    let production = doc(
        "p.example",
        "4.0.8",
        "2026-06-01T00:00:00Z",
        Some(("production", "supported")),
    );
    let r = row(&production, "2026-06-03T00:00:00Z");
    assert!(details(&r).is_empty(), "{r:?}");
    let r = row(&production, "2026-06-26T00:00:00Z");
    assert!(
        r.reasons[0]
            .detail
            .starts_with("line 4.0 reached end of life on 2026-06-25 (since the scan)"),
        "{r:?}"
    );
}

#[test]
fn an_end_of_life_the_document_knew_is_its_state_not_news() {
    let mut eol = doc(
        "old.example",
        "7.3.0",
        "2026-11-22T03:00:00Z",
        Some(("rolling", "end_of_life")),
    );
    eol["state"] = json!("CRITICAL");
    eol["rating"] = json!(0);
    eol["message"] = json!("OpenCloud 7.3.0 is end of life");
    let r = row(&eol, "2026-11-23T00:00:00Z");
    assert_eq!(
        details(&r),
        ["CRITICAL at the scan: OpenCloud 7.3.0 is end of life"]
    );
    assert!(!r.reasons[0].new);
    assert_eq!(r.state_now, State::Critical);

    // A document without lifecycle (the schedule was off): said, but not "since the scan".
    eol["lifecycle"] = Value::Null;
    let r = row(&eol, "2026-11-23T00:00:00Z");
    assert_eq!(
        r.reasons[0].detail,
        "line 7.3 has been end of life since 2026-08-03; upgrade to 8.1.0 (rolling track)"
    );
    assert!(!r.reasons[0].new);
}

#[test]
fn advisories_the_document_did_not_list() {
    // GHSA-gf4p-7p27-26w7 (medium, CVE-2026-57500) affects 4.0.0 up to 4.0.8.
    let mut old = doc(
        "v.example",
        "4.0.5",
        "2026-11-20T00:00:00Z",
        Some(("lts", "supported")),
    );
    let r = row(&old, "2026-11-22T00:00:00Z");
    assert_eq!(
        details(&r),
        ["GHSA-gf4p-7p27-26w7 (medium) published since the scan; fixed in 4.0.8"]
    );
    assert_eq!(r.reasons[0].kind, Kind::Advisory);
    // A medium advisory starts the rating at 2: WARNING at the default thresholds.
    assert_eq!(r.state_now, State::Warning);

    // Listed under an alias: nothing new.
    old["vulnerabilities"] = json!([{"id": "CVE-2026-57500", "aliases": [], "severity": "medium",
        "summary": "", "url": null, "affected": [], "fixedIn": "4.0.8"}]);
    assert!(row(&old, "2026-11-22T00:00:00Z").reasons.is_empty());

    // 4.0.2 also has GHSA-vf5j-r2hw-2hrw (high): rating 1, CRITICAL.
    let high = doc(
        "h.example",
        "4.0.2",
        "2026-11-20T00:00:00Z",
        Some(("lts", "supported")),
    );
    let r = row(&high, "2026-11-22T00:00:00Z");
    assert_eq!(
        details(&r),
        [
            "GHSA-vf5j-r2hw-2hrw (high) published since the scan; fixed in 4.0.3",
            "GHSA-gf4p-7p27-26w7 (medium) published since the scan; fixed in 4.0.8",
        ]
    );
    assert_eq!(r.state_now, State::Critical);

    // An oCIS document is judged with oCIS knowledge, never OpenCloud's.
    let mut ocis = high.clone();
    ocis["product"]["family"] = json!("ocis");
    let r = row(&ocis, "2026-11-22T00:00:00Z");
    assert!(
        r.reasons.iter().all(|x| !x.detail.starts_with("GHSA-vf5j")),
        "{r:?}"
    );
}

fn with_waiver(expires: &str, also: Option<Value>) -> Value {
    let mut d = doc(
        "w.example",
        "8.1.0",
        "2026-11-28T03:00:00Z",
        Some(("rolling", "supported")),
    );
    d["findings"] = json!([
        {"id": "demoUsersDisabled", "role": "check", "status": "failed", "severity": "critical",
         "counts": true, "ignored": true},
        {"id": "hstsPreload", "role": "hardening", "status": "failed", "severity": "low",
         "counts": false, "ignored": false},
    ]);
    let mut waivers = vec![
        json!({"pattern": "demoUsersDisabled", "source": "--waive-until",
        "state": "active", "permanent": false, "expires": expires, "reason": "December",
        "daysLeft": 8, "matched": ["demoUsersDisabled"]}),
    ];
    waivers.extend(also);
    d["waivers"] = json!(waivers);
    d
}

#[test]
fn waivers_that_expired_since_the_scan() {
    let d = with_waiver("2026-12-01T00:00:00Z", None);
    let r = row(&d, "2026-12-05T00:00:00Z");
    assert_eq!(
        details(&r),
        [
            "waiver for demoUsersDisabled expired 2026-12-01; it no longer hides demoUsersDisabled (critical)"
        ]
    );
    assert_eq!(r.reasons[0].kind, Kind::WaiverExpired);
    // A critical check caps the rating at 2: WARNING.
    assert_eq!((r.state_now, r.urgency), (State::Warning, Urgency::Warning));

    // Not yet expired, or expired before the scan (the document already counted it): nothing.
    assert!(row(&d, "2026-11-30T00:00:00Z").reasons.is_empty());
    let before = with_waiver("2026-11-01T00:00:00Z", None);
    assert!(row(&before, "2026-12-05T00:00:00Z").reasons.is_empty());

    // Another waiver still hides the finding: nothing alerts again, nothing to say here (the
    // waiver review lists the expired one).
    let permanent = json!({"pattern": "demo*", "source": "--ignore-hardening", "state": "active",
        "permanent": true, "expires": null, "reason": null, "daysLeft": null, "matched": []});
    let r = row(
        &with_waiver("2026-12-01T00:00:00Z", Some(permanent)),
        "2026-12-05T00:00:00Z",
    );
    assert!(r.reasons.is_empty(), "{r:?}");
    assert_eq!((r.state_now, r.urgency), (State::Ok, Urgency::None));
    // Nor on a host where it matched no failing finding.
    let mut clean = with_waiver("2026-12-01T00:00:00Z", None);
    clean["findings"] = json!([]);
    assert!(row(&clean, "2026-12-05T00:00:00Z").reasons.is_empty());
}

#[test]
fn failed_scans_and_old_scans() {
    let failed = json!({
        "host": "down.example", "scannedAt": "2026-11-22T03:00:00Z", "state": "UNKNOWN",
        "message": "cannot scan down.example", "rating": null,
        "error": {"message": "connection refused", "attempts": 1},
        "product": null, "lifecycle": null, "vulnerabilities": [], "findings": [], "waivers": []
    });
    let r = row(&failed, "2026-11-22T04:00:00Z");
    assert_eq!(
        details(&r),
        ["the scan failed: connection refused; scan it again"]
    );
    assert_eq!((r.state_now, r.urgency), (State::Unknown, Urgency::Warning));
    assert_eq!((r.family, r.version.as_deref()), (None, None));

    let healthy = doc(
        "a.example",
        "8.1.0",
        "2026-11-22T03:00:00Z",
        Some(("rolling", "supported")),
    );
    let r = row(&healthy, "2026-11-29T02:59:59Z");
    assert!(r.reasons.is_empty(), "six days old is recent");
    assert_eq!(r.urgency, Urgency::None);
    let r = row(&healthy, "2026-11-29T03:00:00Z");
    assert_eq!(details(&r), ["scanned 7 days ago"]);
    assert_eq!((r.state_now, r.urgency), (State::Ok, Urgency::Warning));
}

/// The documents of the ordering and output tests, judged on 2027-12-10.
fn fleet() -> View {
    let mut warned = doc(
        "warned.example",
        "8.1.0",
        "2027-12-09T00:00:00Z",
        Some(("rolling", "supported")),
    );
    warned["state"] = json!("WARNING");
    warned["rating"] = json!(3);
    warned["message"] = json!("OpenCloud 8.1.0: a check failed");
    let values = [
        doc(
            "b-healthy.example",
            "8.1.0",
            "2027-12-09T00:00:00Z",
            Some(("rolling", "supported")),
        ),
        doc(
            "lts.example",
            "4.0.8",
            "2026-11-22T03:00:00Z",
            Some(("lts", "supported")),
        ),
        doc(
            "a-healthy.example",
            "8.1.0",
            "2027-12-08T00:00:00Z",
            Some(("rolling", "supported")),
        ),
        // An older document of the same host: set aside.
        doc(
            "a-healthy.example",
            "4.0.8",
            "2026-11-22T03:00:00Z",
            Some(("lts", "supported")),
        ),
        warned,
        doc(
            "vuln.example",
            "4.0.5",
            "2026-11-22T03:00:00Z",
            Some(("lts", "supported")),
        ),
    ];
    let mut docs = Vec::new();
    for v in &values {
        docs.extend(read(v.to_string().as_bytes(), MAX_DOCUMENTS).unwrap());
    }
    let k = bundled();
    judge(docs, &today("2027-12-10T00:00:00Z", &k))
}

#[test]
fn most_urgent_first_then_by_host() {
    let view = fleet();
    let order: Vec<(usize, &str, Urgency)> = view
        .rows
        .iter()
        .map(|r| (r.priority, r.host.as_str(), r.urgency))
        .collect();
    assert_eq!(
        order,
        [
            // Both CRITICAL now; vuln has more news (end of life and an advisory).
            (1, "vuln.example", Urgency::Critical),
            (2, "lts.example", Urgency::Critical),
            (3, "warned.example", Urgency::Warning),
            // Nothing new: by host name, the newest document of a-healthy judged.
            (4, "a-healthy.example", Urgency::None),
            (5, "b-healthy.example", Urgency::None),
        ]
    );
    assert_eq!(view.superseded, 1);
    assert_eq!(view.rows[3].version.as_deref(), Some("8.1.0"));
    assert_eq!(view.exit_code(), 2);
    assert_eq!(
        view.summary(),
        "CRITICAL: 3 of 5 hosts need action now (2 critical, 1 warning)"
    );
}

#[test]
fn the_table() {
    let text = fleet().text(6, 1);
    let expected = "\
CRITICAL: 3 of 5 hosts need action now (2 critical, 1 warning)
Judged 6 result documents of 5 hosts from 6 files at 2027-12-10T00:00:00Z with OpenCloud release schedule of 2026-10-12, advisories of 2026-10-12; 1 older document of the same hosts set aside; 1 file skipped (see stderr)

#  HOST               PRODUCT          STATE              WHY
1  vuln.example       OpenCloud 4.0.5  OK → CRITICAL      line 4.0 reached end of life on 2027-12-01 (since the scan); upgrade to 7.2.4 (production track)
                                                          GHSA-gf4p-7p27-26w7 (medium) published since the scan; fixed in 4.0.8
                                                          scanned 382 days ago
2  lts.example        OpenCloud 4.0.8  OK → CRITICAL      line 4.0 reached end of life on 2027-12-01 (since the scan); upgrade to 7.2.4 (production track)
                                                          scanned 382 days ago
3  warned.example     OpenCloud 8.1.0  WARNING → WARNING  WARNING at the scan: OpenCloud 8.1.0: a check failed
4  a-healthy.example  OpenCloud 8.1.0  OK → OK            nothing new
5  b-healthy.example  OpenCloud 8.1.0  OK → OK            nothing new
| hosts=5;;;0 critical=2;;;0 warning=1;;;0 none=2;;;0
";
    assert_eq!(text, expected);
    assert!(!text.contains('\x1b'), "plain text, no colors");
}

#[test]
fn the_json_shape() {
    let out: Value = serde_json::from_str(&fleet().json()).unwrap();
    let rows = out.as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(
        rows[0],
        json!({
            "priority": 1,
            "host": "vuln.example",
            "product": "opencloud",
            "version": "4.0.5",
            "scannedAt": "2026-11-22T03:00:00Z",
            "daysSinceScan": 382,
            "stateThen": "OK",
            "stateNow": "CRITICAL",
            "urgency": "critical",
            "reasons": [
                {"kind": "end-of-life", "detail": "line 4.0 reached end of life on 2027-12-01 (since the scan); upgrade to 7.2.4 (production track)"},
                {"kind": "advisory", "detail": "GHSA-gf4p-7p27-26w7 (medium) published since the scan; fixed in 4.0.8"},
                {"kind": "old-scan", "detail": "scanned 382 days ago"},
            ],
        })
    );
    assert_eq!(rows[4]["reasons"], json!([]));
    assert_eq!(rows[4]["urgency"], json!("none"));
}

#[test]
fn exit_codes_follow_the_most_urgent_host() {
    let k = bundled();
    let t = today("2027-12-10T00:00:00Z", &k);
    let healthy = doc(
        "a.example",
        "8.1.0",
        "2027-12-09T00:00:00Z",
        Some(("rolling", "supported")),
    );
    let view = judge(vec![read_one(&healthy)], &t);
    assert_eq!(
        (view.exit_code(), view.summary().as_str()),
        (0, "OK: none of 1 host needs action now")
    );
    let old = doc(
        "a.example",
        "8.1.0",
        "2027-11-09T00:00:00Z",
        Some(("rolling", "supported")),
    );
    let view = judge(vec![read_one(&old)], &t);
    assert_eq!(
        (view.exit_code(), view.summary().as_str()),
        (
            1,
            "WARNING: 1 of 1 host needs action now (0 critical, 1 warning)"
        )
    );
}

#[test]
fn files_that_are_not_result_documents() {
    let problem = |text: &str| read(text.as_bytes(), MAX_DOCUMENTS).unwrap_err();
    assert!(
        problem("{").starts_with("is not JSON ("),
        "{}",
        problem("{")
    );
    assert_eq!(
        problem("[]"),
        "is not a result document (an empty array holds no result document)"
    );
    assert!(
        problem("\"text\"").starts_with("is not a result document (invalid type: string"),
        "{}",
        problem("\"text\"")
    );
    assert!(
        problem(r#"{"host": "a"}"#).contains("missing field `scannedAt`"),
        "{}",
        problem(r#"{"host": "a"}"#)
    );
    assert!(problem("[1]").contains("expected a result document (a JSON object)"));
    let mut d = doc("a.example", "8.1.0", "2026-11-22T03:00:00Z", None);
    d["state"] = json!("FINE");
    assert!(
        problem(&d.to_string()).contains(
            "unknown variant `FINE`, expected one of `OK`, `WARNING`, `CRITICAL`, `UNKNOWN`"
        ),
        "{}",
        problem(&d.to_string())
    );
    let mut d = doc("a.example", "8.1.0", "yesterday", None);
    // A date that is none is no result document: `scannedAt` is a timestamp.
    let refused = problem(&d.to_string());
    assert!(refused.contains("not a result document"), "{refused}");
    d["scannedAt"] = json!("2026-11-22T03:00:00Z");
    d["host"] = json!("x".repeat(MAX_NAME_BYTES + 1));
    assert!(problem(&d.to_string()).contains("a host that is empty or longer than 256 bytes"));
    d["host"] = json!("a.example");
    d["product"]["family"] = json!("nextcloud");
    assert!(problem(&d.to_string()).contains("unknown variant `nextcloud`"));

    // The plugin's array, and the cap over all files.
    let two = json!([
        doc("a", "8.1.0", "2026-11-22T03:00:00Z", None),
        doc("b", "8.1.0", "2026-11-22T03:00:00Z", None)
    ]);
    assert_eq!(read(two.to_string().as_bytes(), 2).unwrap().len(), 2);
    assert!(
        read(two.to_string().as_bytes(), 1)
            .unwrap_err()
            .starts_with("holds more than")
    );
}

#[test]
fn text_from_a_document_cannot_reach_the_terminal_as_is() {
    let mut d = doc("a\u{1b}[31m.example", "8.1.0", "2026-11-22T03:00:00Z", None);
    d["state"] = json!("WARNING");
    d["message"] = json!("red \u{1b}[31m and \u{202e}reversed");
    let k = bundled();
    let view = judge(vec![read_one(&d)], &today("2026-11-23T00:00:00Z", &k));
    let text = view.text(1, 0);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text}"
    );
    assert!(text.contains("a\\u{1b}[31m.example"), "{text}");
    assert!(
        text.contains("red \\u{1b}[31m and \\u{202e}reversed"),
        "{text}"
    );
}
