//! The public API's web pages from the real `check-storage-scanner web` process: the landing
//! form posts without JavaScript and lands on the result page, which follows the scan to its
//! grade, findings and export links under a strict Content-Security-Policy; headless Chromium
//! (Debian's package, installed by `make deps`) renders both pages to PNG for a person to look
//! at (`target/tmp/web-pages/*.png`).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::service::Answer;
use support::{FakeInstance, InstanceConfig};

use support::web::fresh_dir;

fn assert_strict_page(answer: &Answer) {
    assert_eq!(
        answer.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let csp = answer.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let html = answer.text();
    assert!(
        !html.contains("<style") && !html.contains(" style="),
        "inline style"
    );
    assert!(!html.contains("<script>"), "inline script");
}

/// Headless Chromium's screenshot of `url`; the PNG's path.
fn screenshot(url: &str, file: &Path) -> PathBuf {
    let profile = file.with_extension("profile");
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--window-size=1100,1400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", file.display()))
        .arg(url)
        .output()
        .expect("chromium runs: run `make deps`");
    let png = std::fs::read(file).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "no screenshot of {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    file.to_path_buf()
}

#[test]
fn the_form_leads_to_a_result_page_with_grade_findings_and_exports() {
    // A default install of 4.0.0: known advisories, demo accounts; plenty to show.
    let fake = FakeInstance::start(InstanceConfig::default());
    let dir = fresh_dir("web-pages");
    let ca = fake.ca_file().display().to_string();
    let web = support::web::start(&dir, &["--allow-private-targets", "--ca-file", &ca]);

    let landing = web.get("/", &[]);
    assert_eq!(landing.status, 200);
    assert_strict_page(&landing);
    assert!(
        landing
            .text()
            .contains("<form method=\"post\" action=\"/scans\"")
    );
    for asset in ["/static/style.css", "/static/app.js"] {
        assert_eq!(web.get(asset, &[]).status, 200, "{asset}");
    }

    // The form, as a browser without JavaScript posts it.
    let form = format!(
        "target_url={}&release_track=auto&waive=",
        support::service::form_encode(&fake.host_port())
    );
    let posted = web.request(
        "POST",
        "/scans",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        form.as_bytes(),
    );
    assert_eq!(posted.status, 303, "{}", posted.text());
    let location = posted.header("location").unwrap().to_string();
    assert!(location.starts_with("/scans/"), "{location}");
    let uuid = location.trim_start_matches("/scans/").to_string();

    // Until the scan completes the page refreshes itself (no script needed)...
    let until = Instant::now() + Duration::from_secs(60);
    let result = loop {
        let page = web.get(&location, &[]);
        assert_eq!(page.status, 200);
        assert_strict_page(&page);
        let html = page.text();
        if !html.contains("http-equiv=\"refresh\"") {
            break page;
        }
        assert!(html.contains("Refresh now"), "{html}");
        assert!(Instant::now() < until, "the scan did not complete");
        std::thread::sleep(Duration::from_millis(50));
    };
    // ...then shows the grade, the state, the findings with remediation, and the exports.
    let html = result.text();
    let api = web.get(&format!("/api/scans/{uuid}"), &[]).json();
    let grade = api["result"]["grade"].as_str().unwrap().to_string();
    assert!(html.contains(&format!(">{grade}</div>")), "{html}");
    assert!(html.contains(api["result"]["state"].as_str().unwrap()));
    assert!(
        html.contains("How to fix it") && html.contains("demoUsers"),
        "{html}"
    );
    for format in ["json", "csv", "sarif", "pdf"] {
        assert!(
            html.contains(&format!("/api/scans/{uuid}/export/{format}\"")),
            "{format}"
        );
    }

    // A form with nothing usable is answered on the form, with the reason.
    let empty = web.request(
        "POST",
        "/scans",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"target_url=ftp%3A%2F%2Fx",
    );
    assert_eq!(empty.status, 400);
    assert_strict_page(&empty);
    assert!(empty.text().contains("class=\"error\""));
    let missing = web.get("/scans/0f8fad5b-d9cb-469f-a165-70867728950e", &[]);
    assert_eq!(missing.status, 404);
    assert_strict_page(&missing);

    // Pictures for a person to look at.
    let base = format!("http://{}", web.addr);
    screenshot(&format!("{base}/"), &dir.join("landing.png"));
    screenshot(&format!("{base}{location}"), &dir.join("result.png"));
}
