//! The public API's web pages from the real `check-storage-scanner web` process: the landing
//! form posts without JavaScript and lands on the result page, which follows the scan to its
//! grade, findings and export links under a strict Content-Security-Policy; headless Chromium
//! (Debian's package, installed by `make deps`) renders both pages to PNG for a person to look
//! at (`target/tmp/web-pages/*.png`).

use crate::support::service::{Answer, ScannerService};
use crate::support::{FakeInstance, InstanceConfig, TlsMode};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use storage_security::settings::options::OPTIONS;

use crate::support::web::fresh_dir;

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

/// Text as the pages escape it.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Headless Chromium's screenshot of `url`, 1100 pixels wide and `height` high; the PNG's path.
fn screenshot(url: &str, file: &Path, height: u32) -> PathBuf {
    let profile = file.with_extension("profile");
    let out = crate::support::on_the_real_clock(&mut Command::new("chromium"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
        ])
        .arg(format!("--window-size=1100,{height}"))
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
    let web = crate::support::web::start(&dir, &["--allow-private-targets", "--ca-file", &ca]);

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
        crate::support::service::form_encode(&fake.host_port())
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
    // The plan's fix snippets: a tab for each form that has one (the proxies' header lines and
    // the demo accounts' setting here, no zone), each snippet's text as the JSON has it, escaped.
    let snippets = api["result"]["remediationPlan"]["snippets"]
        .as_array()
        .unwrap();
    let forms: Vec<&str> = snippets
        .iter()
        .map(|s| s["for"].as_str().unwrap())
        .collect();
    assert_eq!(forms, ["nginx", "caddy", "apache", "traefik", "env"]);
    for form in ["nginx", "caddy", "apache", "traefik", "env", "zone"] {
        let tab = format!("<input type=\"radio\" name=\"snippets\" id=\"snippets-{form}\"");
        assert_eq!(html.contains(&tab), forms.contains(&form), "{form}: {html}");
    }
    for snippet in snippets {
        let text = escape(snippet["text"].as_str().unwrap());
        assert!(
            html.contains(&format!("<code>{text}</code>")),
            "{text}: {html}"
        );
    }
    assert!(html.contains("<code>proxy_hide_header X-Graph-Version;\nproxy_hide_header X-Idp-Version;\nproxy_hide_header X-Web-Version;</code>"), "{html}");
    assert!(
        html.contains("&quot;traefik.http.routers.opencloud.middlewares=opencloud-security&quot;")
    );

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
    screenshot(&format!("{base}/"), &dir.join("landing.png"), 1400);
    // Tall enough for the fix snippets below the plan.
    screenshot(&format!("{base}{location}"), &dir.join("result.png"), 1900);
}

/// A real nginx on a loopback port, in the foreground, forwarding `/scanner/` to `backend`
/// with the prefix stripped (`location /scanner/ { proxy_pass http://backend/; }`), as an
/// operator puts the public API under a path; killed and reaped on drop.
struct Nginx {
    child: std::process::Child,
    addr: std::net::SocketAddr,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nginx {
    /// On `port` (picked free beforehand: the web server's base URL names it).
    fn start(dir: &Path, backend: std::net::SocketAddr, port: u16) -> Nginx {
        let conf = dir.join("nginx.conf");
        let d = dir.display();
        std::fs::write(
            &conf,
            format!(
                "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
                 error_log {d}/nginx-error.log;\nevents {{ worker_connections 64; }}\n\
                 http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n\
                 proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n\
                 uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
                 server {{\n    listen 127.0.0.1:{port};\n\
                 location /scanner/ {{\n      proxy_pass http://{backend}/;\n\
                 proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n    }}\n  }}\n}}\n"
            ),
        )
        .unwrap();
        let child = crate::support::on_the_real_clock(&mut Command::new("/usr/sbin/nginx"))
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("nginx-error.log"))
            .arg("-c")
            .arg(&conf)
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("nginx runs: install Debian's nginx package with `make deps`");
        let mut nginx = Nginx {
            child,
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let until = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(nginx.addr).is_err() {
            let log = || std::fs::read_to_string(dir.join("nginx-error.log")).unwrap_or_default();
            if let Ok(Some(status)) = nginx.child.try_wait() {
                panic!("nginx ended ({status}): {}", log());
            }
            assert!(Instant::now() < until, "nginx does not listen: {}", log());
            std::thread::sleep(Duration::from_millis(20));
        }
        nginx
    }

    fn request(&self, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
        // nginx keeps a connection open after its answer unless told: the reader reads to EOF.
        let mut all = vec![("Connection", "close")];
        all.extend_from_slice(headers);
        crate::support::service::request(self.addr, method, target, &all, body)
    }
}

/// Every `href`, `src` and `action` of a page.
fn links(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attribute in ["href=\"", "src=\"", "action=\""] {
        for (at, _) in html.match_indices(attribute) {
            let rest = &html[at + attribute.len()..];
            found.push(rest[..rest.find('"').unwrap()].replace("&amp;", "&"));
        }
    }
    found
}

/// Behind nginx under `/scanner/` (`--base-url http://127.0.0.1:PORT/scanner/`, the prefix
/// stripped before forwarding): every link, asset, form action, redirect and discovery URL
/// carries the prefix, and each answers through the proxy.
#[test]
fn behind_a_reverse_proxy_under_a_path_every_link_carries_it() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let other = FakeInstance::start(InstanceConfig::default());
    let dir = fresh_dir("web-pages-proxied");
    let ca = fake.ca_file().display().to_string();
    // The proxy's port first: the base URL names it.
    let port = crate::support::closed_port();
    let base = format!("http://127.0.0.1:{port}/scanner");
    let web = crate::support::web::start(
        &dir,
        &[
            "--allow-private-targets",
            "--ca-file",
            &ca,
            "--trusted-proxy",
            "127.0.0.1/32",
            // A trailing slash is taken and dropped.
            "--base-url",
            &format!("{base}/"),
        ],
    );
    let nginx = Nginx::start(&dir, web.addr, port);
    let get = |path: &str| nginx.request("GET", path, &[], b"");

    // The landing page: every link and asset under the prefix, each answering.
    let landing = get("/scanner/");
    assert_eq!(landing.status, 200, "{}", landing.text());
    let html = landing.text();
    assert!(
        html.contains("<html lang=\"en\" data-root=\"/scanner\">"),
        "{html}"
    );
    let found = links(&html);
    assert!(found.contains(&"/scanner/scans".to_string()), "{found:?}");
    assert!(
        found.contains(&"/scanner/static/style.css".to_string()),
        "{found:?}"
    );
    for link in &found {
        assert!(link.starts_with("/scanner/"), "{link} lacks the prefix");
        if link != "/scanner/scans" {
            assert_eq!(get(link).status, 200, "{link}");
        }
    }

    // The form, as a browser on the proxied page posts it: 303 to the result page, under the
    // prefix, which answers through the proxy.
    let form = format!(
        "target_url={}&release_track=auto&waive=",
        crate::support::service::form_encode(&fake.host_port())
    );
    let origin = format!("http://127.0.0.1:{port}");
    let posted = nginx.request(
        "POST",
        "/scanner/scans",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Origin", &origin),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        form.as_bytes(),
    );
    assert_eq!(posted.status, 303, "{}", posted.text());
    let location = posted.header("location").unwrap().to_string();
    assert!(location.starts_with("/scanner/scans/"), "{location}");
    let until = Instant::now() + Duration::from_secs(60);
    let result = loop {
        let page = get(&location);
        assert_eq!(page.status, 200, "{location}");
        let html = page.text();
        for link in links(&html) {
            assert!(link.starts_with("/scanner/"), "{link} lacks the prefix");
        }
        if !html.contains("http-equiv=\"refresh\"") {
            break html;
        }
        assert!(Instant::now() < until, "the scan did not complete");
        std::thread::sleep(Duration::from_millis(50));
    };
    let found = links(&result);
    assert!(
        found.iter().any(|l| l.ends_with("/export/pdf")),
        "{found:?}"
    );
    for link in &found {
        assert!(link.starts_with("/scanner/"), "{link} lacks the prefix");
        assert_eq!(get(link).status, 200, "{link}");
    }

    // The JSON API's Location and links: absolute under the base URL, answering.
    let body = format!(r#"{{"target_url": "{}"}}"#, other.host_port());
    let submitted = nginx.request(
        "POST",
        "/scanner/api/scans",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    );
    assert_eq!(submitted.status, 202, "{}", submitted.text());
    let value = submitted.json();
    let own = value["links"]["self"].as_str().unwrap();
    assert_eq!(submitted.header("location"), Some(own));
    for url in [own, value["links"]["page"].as_str().unwrap()] {
        let path = url
            .strip_prefix(&format!("http://127.0.0.1:{port}"))
            .unwrap();
        assert!(path.starts_with("/scanner/"), "{url}");
        assert_eq!(get(path).status, 200, "{url}");
    }

    // The discovery documents name URLs under the base URL; each document answers.
    let ai = get("/scanner/.well-known/ai.json").json();
    assert_eq!(ai["mcp"]["url"], format!("{base}/mcp"));
    for key in ["ai", "openapi", "arazzo"] {
        let url = ai["documents"][key].as_str().unwrap();
        let path = url
            .strip_prefix(&format!("http://127.0.0.1:{port}"))
            .unwrap();
        assert!(path.starts_with("/scanner/"), "{url}");
        assert_eq!(get(path).status, 200, "{url}");
    }
    let openapi = get("/scanner/openapi.json").json();
    assert_eq!(openapi["servers"][0]["url"], base.as_str());
    web.terminate();
}

/// Submits `target` to the JSON API and polls until its scan completed; the uuid and the
/// result document.
fn scan(web: &ScannerService, target: &str) -> (String, serde_json::Value) {
    let body = serde_json::json!({ "target_url": target }).to_string();
    let submitted = web.request(
        "POST",
        "/api/scans",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    );
    assert_eq!(submitted.status, 202, "{}", submitted.text());
    let uuid = submitted.json()["uuid"].as_str().unwrap().to_string();
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let value = web.get(&format!("/api/scans/{uuid}"), &[]).json();
        if value["status"] == "completed" {
            return (uuid, value["result"].clone());
        }
        assert!(Instant::now() < until, "the scan did not complete: {value}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The PDF export of `uuid` as `pdftotext` reads it, whitespace collapsed.
fn pdf_text(web: &ScannerService, uuid: &str, file: &Path) -> String {
    let pdf = web.get(&format!("/api/scans/{uuid}/export/pdf"), &[]);
    assert_eq!(pdf.status, 200);
    std::fs::write(file, &pdf.body).unwrap();
    let out = Command::new("pdftotext")
        .args(["-layout", file.to_str().unwrap(), "-"])
        .output()
        .expect("pdftotext runs: run `make deps`");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The scanner's own words in `text`: its flags, `COS_` variables and configuration keys.
fn operator_words(text: &str) -> Vec<String> {
    let mut found: Vec<String> = OPTIONS
        .iter()
        .flat_map(|o| {
            let flag = o.long.map(|long| format!("--{long}"));
            let key = o
                .config_key
                .filter(|k| k.contains(['.', '_']))
                .map(String::from);
            flag.into_iter().chain(key)
        })
        .filter(|word| text.contains(word.as_str()))
        .collect();
    for word in ["COS_", "(see -h)", "-H "] {
        if text.contains(word) {
            found.push(word.into());
        }
    }
    found
}

/// The texts a scan gives its operator (an untrusted certificate: "pass --ca-file"; a failed
/// scan out of time: "--time-budget") stay in the JSON document, and the result page and the
/// PDF say them to a visitor, naming no flag, variable or configuration key.
#[test]
fn the_page_and_the_pdf_speak_to_a_visitor() {
    let untrusted = FakeInstance::start(InstanceConfig::default().tls(TlsMode::SelfSigned));
    let dir = fresh_dir("web-pages-visitor");
    // A retry that would wait past the time budget ends the failing instance's scan at once,
    // saying so (a server error is retried; a refused connection is not).
    let web = crate::support::web::start(
        &dir,
        &[
            "--allow-private-targets",
            "--retries",
            "1",
            "--backoff-factor",
            "60",
        ],
    );
    let failing = FakeInstance::start(
        InstanceConfig::default()
            .tls(TlsMode::Plain)
            .always(crate::support::FaultKind::Status(503)),
    );
    let cases = [
        (
            untrusted.host_port(),
            "--ca-file",
            "not signed by a certificate authority browsers trust",
        ),
        (
            failing.host_port(),
            "--time-budget",
            "time limit of this service",
        ),
    ];
    for (n, (target, operator, visitor)) in cases.into_iter().enumerate() {
        let (uuid, document) = scan(&web, &target);
        // The plugin's document keeps the operator's words...
        assert!(document.to_string().contains(operator), "{document}");
        // ...the page and the PDF the visitor's.
        let page = web.get(&format!("/scans/{uuid}"), &[]).text();
        let pdf = pdf_text(&web, &uuid, &dir.join(format!("report-{n}.pdf")));
        for (face, text) in [("page", &page), ("PDF", &pdf)] {
            assert_eq!(operator_words(text), Vec::<String>::new(), "{face}: {text}");
            assert!(text.contains(visitor), "{face}: {text}");
        }
    }
    web.terminate();
}
