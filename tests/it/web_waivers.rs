//! A submitter's waivers never dress up a dangerous instance: a fake instance whose demo
//! administrator signs in, submitted with `"waive": ["demoUsersDisabled"]` to the real
//! `check-storage-scanner web`, is headed by its grade without the waiver on every face (the
//! JSON API and export, the result page, the PDF as `pdftotext` reads it, the CSV, the MCP
//! summary), and the grade with the waiver stands beside it, marked as the submitter's.

use crate::support::FakeInstance;
use crate::support::service::ScannerService;
use crate::support::web::{fresh_dir, start};
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

const JSON: (&str, &str) = ("Content-Type", "application/json");

/// Polls until the scan completed; its result document.
fn completed(web: &ScannerService, uuid: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let value = web.get(&format!("/api/scans/{uuid}"), &[]).json();
        if value["status"] == "completed" {
            return value["result"].clone();
        }
        assert!(Instant::now() < until, "the scan did not complete: {value}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The text summary of MCP `get_scan_result` for `uuid`.
fn mcp_summary(web: &ScannerService, uuid: &str) -> String {
    let accept = ("Accept", "application/json, text/event-stream");
    let hello = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    });
    let answer = web.request(
        "POST",
        "/mcp",
        &[JSON, accept],
        hello.to_string().as_bytes(),
    );
    let session = answer.header("mcp-session-id").unwrap().to_string();
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_scan_result", "arguments": {"uuid": uuid}},
    });
    let answer = web.request(
        "POST",
        "/mcp",
        &[JSON, accept, ("Mcp-Session-Id", &session)],
        call.to_string().as_bytes(),
    );
    answer.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_headline_is_the_grade_without_the_submitters_waivers_on_every_face() {
    // 7.2.4 with everything else in order, but the demo users (and their admin) sign in.
    let fake = FakeInstance::start(crate::support::plugin::healthy("7.2.4").demo_users(true));
    let dir = fresh_dir("web-submitter-waivers");
    let ca = fake.ca_file().display().to_string();
    let web = start(&dir, &["--allow-private-targets", "--ca-file", &ca]);
    let body = json!({"target_url": fake.host_port(), "waive": ["demoUsersDisabled"]});
    let answer = web.request("POST", "/api/scans", &[JSON], body.to_string().as_bytes());
    assert_eq!(answer.status, 202, "{}", answer.text());
    let uuid = answer.json()["uuid"].as_str().unwrap().to_string();

    // The JSON API: the headline is the scan without the waiver.
    let result = completed(&web, &uuid);
    let grade = result["grade"].as_str().unwrap().to_string();
    let state = result["state"].as_str().unwrap().to_string();
    assert_ne!(state, "OK", "{result}");
    assert_ne!(grade, "A+", "{result}");
    let demo = result["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "demoUsersDisabled")
        .unwrap();
    assert_eq!(
        (&demo["status"], &demo["ignored"]),
        (&json!("failed"), &json!(false))
    );
    // Beside it, the submitter's: the waiver hides the demo accounts and the grade rises.
    let submitter = &result["submitterWaivers"];
    assert_eq!(
        submitter["patterns"],
        json!(["demoUsersDisabled"]),
        "{result}"
    );
    assert_eq!(
        submitter["waived"],
        json!(["demoUsersDisabled"]),
        "{result}"
    );
    assert_eq!(submitter["state"], "OK", "{result}");
    let waived_grade = submitter["grade"].as_str().unwrap().to_string();
    // With the waiver, the instance would read A+ / OK: what the submitter's page would have
    // said before.
    assert_eq!(waived_grade, "A+", "{result}");

    // The JSON export is the same document.
    let exported = web
        .get(&format!("/api/scans/{uuid}/export/json"), &[])
        .json();
    assert_eq!(exported["grade"], grade.as_str());
    assert_eq!(exported["submitterWaivers"]["grade"], waived_grade.as_str());

    // The page: the headline grade in the grade box, the submitter's beside it, the finding
    // failed and marked as the submitter's waiver.
    let page = web.get(&format!("/scans/{uuid}"), &[]).text();
    assert!(page.contains(&format!(">{grade}</div>")), "{page}");
    assert!(!page.contains(&format!(">{waived_grade}</div>")), "{page}");
    assert!(
        page.contains(&format!(
            "With them (<code>demoUsersDisabled</code>): grade <strong>{waived_grade}</strong>, \
             state OK."
        )),
        "{page}"
    );
    assert!(
        page.contains(
            "<code>demoUsersDisabled</code> <span class=\"waived\">waived by the submitter</span>"
        ),
        "{page}"
    );

    // The PDF: the headline grade large on a line of its own, the submitter's in the summary.
    let pdf = web.get(&format!("/api/scans/{uuid}/export/pdf"), &[]);
    let file = dir.join("report.pdf");
    std::fs::write(&file, &pdf.body).unwrap();
    let out = Command::new("pdftotext")
        .args(["-layout", file.to_str().unwrap(), "-"])
        .output()
        .expect("pdftotext runs: run `make deps`");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.lines().any(|l| l.trim() == grade), "{text}");
    assert!(!text.lines().any(|l| l.trim() == waived_grade), "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&format!("{state}:")), "{flat}");
    assert!(
        flat.contains(&format!(
            "Submitter's waivers: the grade and state above are without them. With them \
             (demoUsersDisabled): grade {waived_grade}, state OK."
        )),
        "{flat}"
    );
    assert!(
        flat.contains("demoUsersDisabled [waived by the submitter]"),
        "{flat}"
    );

    // The CSV: the finding failed and not waived in the headline, waived by the submitter.
    let csv = web
        .get(&format!("/api/scans/{uuid}/export/csv"), &[])
        .text();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|c| c == name).unwrap();
    let demo_row = reader
        .records()
        .map(Result::unwrap)
        .find(|r| &r[column("check")] == "demoUsersDisabled")
        .unwrap_or_else(|| panic!("{csv}"));
    assert_eq!(&demo_row[column("status")], "failed", "{csv}");
    assert_eq!(&demo_row[column("waived")], "false", "{csv}");
    assert_eq!(&demo_row[column("submitter_waived")], "true", "{csv}");

    // The MCP summary: the headline first, the submitter's grade after it.
    let summary = mcp_summary(&web, &uuid);
    assert!(
        summary.contains(&format!(
            ": grade {grade}, state {state}, 4 failed check(s)"
        )),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "; with the submitter's waivers (demoUsersDisabled): grade {waived_grade}, state OK"
        )),
        "{summary}"
    );
    web.terminate();
}
