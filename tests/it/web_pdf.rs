//! The public API's PDF export (`storage_security::web::pdf::render`), checked with the tools a
//! reader's viewer stands for: `qpdf --check` for the structure, poppler's `pdftotext`,
//! `pdfinfo` and `pdftoppm` for the text, the page count and the rendering.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use storage_security::report::{ScanResult, read_document};
use storage_security::web::pdf::render;

fn tool(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} is not installed (make deps): {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The document of `members`, with the members every document has where they are missing
/// (the empty ones).
fn document(members: &Value) -> ScanResult {
    let mut value = json!({"host": "", "scannedAt": "2026-11-22T03:00:00Z", "state": "UNKNOWN", "findings": [],
                           "waivers": []});
    for (key, member) in members.as_object().unwrap() {
        value[key] = member.clone();
    }
    read_document(value.to_string().as_bytes()).unwrap()
}

/// The report written to the target's scratch directory, checked by qpdf.
fn write(name: &str, members: &Value) -> PathBuf {
    let pdf = render(&document(members));
    assert!(pdf.starts_with(b"%PDF-"));
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, &pdf).unwrap();
    let file = path.to_str().unwrap();
    let check = tool("qpdf", &["--check", file]);
    assert!(
        check.contains("No syntax or stream encoding errors"),
        "{check}"
    );
    path
}

fn text(path: &Path) -> String {
    tool("pdftotext", &["-layout", path.to_str().unwrap(), "-"])
}

/// The text with its whitespace collapsed: wrapped lines read as one.
fn flat(path: &Path) -> String {
    text(path).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn pages(path: &Path) -> usize {
    let info = tool("pdfinfo", &[path.to_str().unwrap()]);
    info.lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no page count in {info}"))
}

/// The first page rendered at 60 dpi; its path.
fn png(path: &Path) -> PathBuf {
    let prefix = path.with_extension("");
    tool(
        "pdftoppm",
        &[
            "-png",
            "-r",
            "60",
            "-f",
            "1",
            "-l",
            "1",
            "-singlefile",
            path.to_str().unwrap(),
            prefix.to_str().unwrap(),
        ],
    );
    let image = prefix.with_extension("png");
    let bytes = std::fs::read(&image).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(bytes.len() > 2000, "an almost empty rendering");
    image
}

fn finding(id: &str, status: &str, severity: &str, detail: &str, remediation: &str) -> Value {
    json!({
        "id": id, "role": "check", "status": status, "severity": severity,
        "category": "exposure", "detail": detail, "remediation": remediation,
        "documentation": null, "fixedIn": "reverse proxy", "counts": true,
        "decisive": false, "ignored": false,
    })
}

/// A result document as the plugin writes it for the fake OpenCloud 4.0.0.
fn realistic() -> Value {
    let mut findings = vec![
        finding(
            "versionDisclosure:X-Web-Version",
            "failed",
            "low",
            "X-Web-Version: 4.0.0",
            "Strip version headers (X-*-Version, Server, X-Powered-By) at the reverse proxy, \
             e.g. nginx proxy_hide_header X-Web-Version;.",
        ),
        finding(
            "demoUsersDisabled",
            "failed",
            "critical",
            "demo accounts sign in with their published password: dennis (administrator), \
             margaret, alan, lynn, mary",
            "Delete the demo accounts (dennis, margaret, alan, lynn, mary) and set \
             IDM_CREATE_DEMO_USERS=false; switching the setting off later does not remove \
             accounts already created.",
        ),
        finding(
            "vulnerability:GHSA-vf5j-r2hw-2hrw",
            "failed",
            "high",
            "GHSA-vf5j-r2hw-2hrw: OpenCloud Affected by Public Link Exploit",
            "Upgrade to 4.0.3 or later.",
        ),
        finding(
            "cspHeader",
            "failed",
            "medium",
            "no Content-Security-Policy header",
            "Set a Content-Security-Policy at the proxy.",
        ),
    ];
    findings[3]["ignored"] = json!(true);
    for n in 0..30 {
        findings.push(finding(
            &format!("passedCheck{n}"),
            "passed",
            "medium",
            "fine",
            "",
        ));
    }
    findings.push(finding(
        "wopiReachable",
        "skipped",
        "low",
        "not applicable",
        "",
    ));
    json!({
        "host": "cloud.example.com",
        "url": "https://cloud.example.com",
        "scannedAt": "2026-11-25T11:44:34Z",
        "state": "CRITICAL",
        "message": "OpenCloud 4.0.0 has 1 known vulnerability (GHSA-vf5j-r2hw-2hrw high); \
                    upgrade to 4.0.8; demoUsersDisabled failed (critical)",
        "rating": 1,
        "grade": "E",
        "product": {"family": "opencloud", "name": "OpenCloud", "version": "4.0.0"},
        "findings": findings,
        "ratingExplanation": {"startingRating": 1, "finalGrade": "E"},
        "remediationPlan": {"steps": [
            {"order": 1, "action": "Upgrade to 4.0.8.",
             "resolves": ["vulnerability:GHSA-vf5j-r2hw-2hrw"], "fixedIn": "the instance"},
            {"order": 2, "action": "Delete the demo accounts (dennis, margaret, alan, lynn, \
              mary) and set IDM_CREATE_DEMO_USERS=false.",
             "resolves": ["demoUsersDisabled"], "fixedIn": "identity provider"},
            {"order": 3, "action": "Strip version headers at the reverse proxy.",
             "resolves": ["versionDisclosure:X-Web-Version"], "fixedIn": "reverse proxy"},
        ]},
    })
}

#[test]
fn a_realistic_report_fits_one_page_and_reads_well() {
    let path = write("report-realistic.pdf", &realistic());
    assert_eq!(pages(&path), 1);
    let text = flat(&path);
    for expected in [
        "Storage security report",
        "cloud.example.com",
        "2026-11-25T11:44:34Z",
        "CRITICAL",
        "OpenCloud 4.0.0",
        "Failed findings (4)",
        "demoUsersDisabled",
        "vulnerability:GHSA-vf5j-r2hw-2hrw",
        "versionDisclosure:X-Web-Version",
        "CRITICAL demoUsersDisabled",
        "IDM_CREATE_DEMO_USERS=false",
        "Upgrade to 4.0.3 or later.",
        "cspHeader [waived]",
        "Remediation plan",
        "Upgrade to 4.0.8.",
        "in identity provider; resolves 1 finding",
        "35 checked: 4 failed (1 waived), 30 passed, 1 not evaluated",
        "page 1 of 1",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} is missing from {text}"
        );
    }
    // The grade, large, on a line of its own.
    assert!(
        self::text(&path).lines().any(|l| l.trim() == "E"),
        "{}",
        self::text(&path)
    );
    // Passed checks are not listed; the most severe finding comes first, the waived one last.
    assert!(!text.contains("passedCheck"));
    let at = |s: &str| text.find(s).unwrap();
    assert!(at("demoUsersDisabled") < at("vulnerability:GHSA-vf5j"));
    assert!(at("vulnerability:GHSA-vf5j") < at("versionDisclosure:X-Web"));
    assert!(at("versionDisclosure:X-Web") < at("cspHeader"));
    let image = png(&path);
    eprintln!("first page: {}", image.display());
}

#[test]
fn a_clean_result_says_no_check_failed() {
    let mut document = realistic();
    document["grade"] = json!("A+");
    document["state"] = json!("OK");
    document["message"] = json!("OpenCloud 4.0.8 is up to date");
    document["remediationPlan"] = json!({"steps": []});
    for finding in document["findings"].as_array_mut().unwrap() {
        finding["status"] = json!("passed");
    }
    let path = write("report-clean.pdf", &document);
    assert_eq!(pages(&path), 1);
    let text = flat(&path);
    assert!(text.contains("A+"), "{text}");
    assert!(text.contains("No check failed."), "{text}");
    assert!(!text.contains("Remediation plan"), "{text}");
}

/// 200 failed findings full of text meant to break out of PDF strings, non-Latin text and
/// words longer than a line.
fn hostile() -> Value {
    let long_word = "A".repeat(3000);
    let findings: Vec<Value> = (0..200)
        .map(|n| {
            let mut f = finding(
                &format!("hostile{n:03}) Tj ("),
                "failed",
                ["critical", "high", "medium", "low"][n % 4],
                &format!(
                    "detail {n} ) Tj ET BT /F1 99 Tf (owned) Tj \\ \\\\ ( endstream endobj \
                     Привет мир 漢字 😀 Grüße {long_word}"
                ),
                &format!("remediation{n:03} ))) (( \r\n\t\u{0} {long_word}"),
            );
            f["ignored"] = json!(n % 10 == 9);
            f
        })
        .collect();
    json!({
        "host": format!("evil.example) Tj (\\ {}", "h".repeat(5000)),
        "url": format!("https://evil.example/{}", "u".repeat(5000)),
        "scannedAt": "2026-11-25T11:44:34Z",
        "state": "CRITICAL",
        "message": format!("%PDF-1.4 trailer << >> ) Tj ( {}", "m ".repeat(5000)),
        "grade": "F",
        "product": {"family": "opencloud", "name": "Ünïcødé 产品", "version": ") Tj ("},
        "findings": findings,
        "remediationPlan": {"steps": (0..40).map(|n| json!({
            "order": n + 1,
            "action": format!("step{n:02} ) Tj ( {long_word}"),
            "resolves": ["a", "b"],
            "fixedIn": "the instance",
        })).collect::<Vec<_>>()},
    })
}

#[test]
fn two_hundred_hostile_findings_stop_at_two_pages() {
    let path = write("report-hostile.pdf", &hostile());
    assert_eq!(pages(&path), 2);
    let text = flat(&path);
    // The first findings are shown, escaped text intact, with a line for the rest.
    assert!(text.contains("evil.example) Tj (\\"), "{text}");
    assert!(text.contains("hostile000) Tj ("), "{text}");
    assert!(text.contains("remediation000 ))) (("), "{text}");
    assert!(text.contains("detail 0 ) Tj ET BT /F1 99 Tf (owned) Tj \\ \\\\ ("));
    // Non-Latin letters become `?`, Latin-1 ones stay.
    assert!(text.contains("?????? ??? ?? ? Grüße"), "{text}");
    assert!(text.contains("Ünïcødé ??"), "{text}");
    let shown = (0..200)
        .filter(|n| text.contains(&format!("hostile{n:03}")))
        .count();
    // Even at every field's cap, five findings at least: they give way to the plan only so far.
    assert!((5..200).contains(&shown), "{shown} shown");
    let left_out = 200 - shown;
    assert!(
        text.contains(&format!(
            "{left_out} more failed findings are left out; the JSON export has them all."
        )),
        "{text}"
    );
    // The remediation plan comes after the findings, capped too.
    assert!(text.contains("step00 ) Tj ("), "{text}");
    let steps = (0..40)
        .filter(|n| text.contains(&format!("step{n:02} )")))
        .count();
    assert!(steps >= 3, "{steps} steps shown");
    assert!(
        text.contains(&format!(
            "{} more steps are left out; the JSON export has them all.",
            40 - steps
        )),
        "{text}"
    );
    assert!(text.contains("page 2 of 2"));
    // Each line of the layout stays on the page: no line wider than an A4 text block.
    for line in self::text(&path).lines() {
        assert!(line.chars().count() < 160, "{line}");
    }
    let bbox = tool("pdftotext", &["-bbox", path.to_str().unwrap(), "-"]);
    for word in bbox.lines().filter(|l| l.contains("<word ")) {
        let coordinate = |name: &str| -> f32 {
            let start = word.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            let end = start + word[start..].find('"').unwrap();
            word[start..end].parse().unwrap()
        };
        assert!(coordinate("xMin") >= 49.0, "{word}");
        assert!(coordinate("xMax") <= 546.0, "{word}");
        assert!(coordinate("yMin") >= 49.0, "{word}");
        assert!(coordinate("yMax") <= 796.0, "{word}");
    }
    png(&path);
}

#[test]
fn empty_and_odd_documents_render_one_page_or_are_not_read() {
    let path = write("report-empty.pdf", &json!({}));
    assert_eq!(pages(&path), 1);
    assert!(flat(&path).contains("No check failed."));
    // Odd documents never reach the report: the reader refuses them.
    for odd in [
        Value::Null,
        json!({"host": 7, "grade": null, "findings": "no", "remediationPlan": []}),
    ] {
        assert!(read_document(odd.to_string().as_bytes()).is_err(), "{odd}");
    }
}
