//! `check-storage-scanner web` as a real process on loopback: a submission of a fake instance
//! is queued, scanned by a worker with the plugin's pipeline and completed; its exports
//! download; DELETE erases it; the address guard refuses loopback targets unless
//! `--allow-private-targets`; hostile requests get clear errors and leave the server
//! answering; SIGTERM stops it. The limits, stores and guard have their own tests
//! (`src/web/tests.rs`, `tests/store_*.rs`, `tests/it/guard.rs`).

use crate::support::FakeInstance;
use crate::support::plugin::healthy;
use crate::support::service::{Answer, ScannerService};
use std::time::{Duration, Instant};

use crate::support::web::{fresh_dir, start, start_at};

fn submit(web: &ScannerService, body: &str) -> Answer {
    web.request(
        "POST",
        "/api/scans",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
}

/// Polls until the scan completed (a scan of loopback takes well under a second).
fn completed(web: &ScannerService, uuid: &str) -> serde_json::Value {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = web.get(&format!("/api/scans/{uuid}"), &[]);
        assert_eq!(answer.status, 200, "{}", answer.text());
        let value = answer.json();
        if value["status"] == "completed" {
            return value;
        }
        assert!(
            ["queued", "running"].contains(&value["status"].as_str().unwrap_or_default()),
            "{value}"
        );
        assert!(Instant::now() < until, "the scan did not complete: {value}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_submitted_instance_is_scanned_exported_and_erased() {
    let fake = FakeInstance::start(healthy("7.2.4"));
    let dir = fresh_dir("web-api-scan");
    let ca = fake.ca_file().display().to_string();
    let web = start(
        &dir,
        &[
            "--allow-private-targets",
            "--ca-file",
            &ca,
            "--base-url",
            "https://scan.example.com/",
        ],
    );
    let body = serde_json::json!({
        "target_url": fake.host_port(),
        "waive": ["versionDisclosure"],
        "release_track": "production",
        "format": "csv",
    });
    let answer = submit(&web, &body.to_string());
    assert_eq!(answer.status, 202, "{}", answer.text());
    let value = answer.json();
    let uuid = value["uuid"].as_str().unwrap().to_string();
    let erase_key = value["erase_key"].as_str().unwrap().to_string();
    assert_eq!(
        answer.header("location"),
        Some(format!("https://scan.example.com/api/scans/{uuid}").as_str())
    );
    let done = completed(&web, &uuid);
    let result = &done["result"];
    assert_eq!(result["state"], "OK", "{result}");
    assert_eq!(result["product"]["version"], "7.2.4", "{result}");
    // The submitter's waiver reached the scan, beside the headline (which is without it).
    let submitter = &result["submitterWaivers"];
    assert_eq!(
        submitter["patterns"],
        serde_json::json!(["versionDisclosure"])
    );
    // What it hides stays failed and unwaived in the headline.
    let waived = submitter["waived"].as_array().unwrap();
    assert!(!waived.is_empty(), "{result}");
    for id in waived {
        assert!(
            id.as_str().unwrap().starts_with("versionDisclosure"),
            "{id}"
        );
        let finding = result["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| &f["id"] == id)
            .unwrap();
        assert_eq!(
            (&finding["status"], &finding["ignored"]),
            (&serde_json::json!("failed"), &serde_json::json!(false))
        );
    }
    assert!(
        !result["waivers"].to_string().contains("versionDisclosure"),
        "{result}"
    );
    // The worker scanned the instance (the fake saw the status request).
    assert!(fake.requests().iter().any(|r| r.path() == "/status.php"));

    let json = web.get(&format!("/api/scans/{uuid}/export/json"), &[]);
    assert_eq!(json.header("content-type"), Some("application/json"));
    assert_eq!(json.json()["host"], result["host"]);
    let sarif = web.get(&format!("/api/scans/{uuid}/export/sarif"), &[]);
    assert_eq!(sarif.header("content-type"), Some("application/sarif+json"));
    assert_eq!(sarif.json()["version"], "2.1.0");
    let csv = web.get(&format!("/api/scans/{uuid}/export/csv"), &[]);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    assert!(
        csv.text().starts_with("host,check,status,severity,"),
        "{}",
        csv.text()
    );
    assert!(
        csv.header("content-disposition")
            .is_some_and(|d| d.starts_with("attachment; filename=\"storage-security-")),
        "{csv:?}"
    );

    let pdf = web.get(&format!("/api/scans/{uuid}/export/pdf"), &[]);
    assert_eq!(pdf.header("content-type"), Some("application/pdf"));
    assert!(pdf.body.starts_with(b"%PDF-"), "{}", pdf.text());

    // The same target again within five minutes: 429 with Retry-After.
    let again = submit(
        &web,
        &serde_json::json!({"target_url": fake.host_port()}).to_string(),
    );
    assert_eq!(again.status, 429, "{}", again.text());
    assert!(again.header("retry-after").is_some());

    // The erase key is the submitter's: no poll, export or page carries it, nor the store
    // (which keeps its hash), nor the log.
    for path in [
        format!("/api/scans/{uuid}"),
        format!("/api/scans/{uuid}/export/json"),
        format!("/api/scans/{uuid}/export/csv"),
        format!("/api/scans/{uuid}/export/sarif"),
        format!("/api/scans/{uuid}/export/pdf"),
        format!("/scans/{uuid}"),
    ] {
        let answer = web.get(&path, &[]);
        assert_eq!(answer.status, 200, "{path}");
        let holds = answer
            .body
            .windows(erase_key.len())
            .any(|w| w == erase_key.as_bytes());
        assert!(!holds, "{path} carries the erase key");
    }
    let stored: Vec<u8> = ["web.sqlite", "web.sqlite-wal"]
        .iter()
        .flat_map(|name| std::fs::read(dir.join(name)).unwrap_or_default())
        .collect();
    assert!(
        !stored
            .windows(erase_key.len())
            .any(|w| w == erase_key.as_bytes()),
        "the store holds the erase key"
    );

    // Erasing needs the key; with it, the scan is gone.
    let refused = web.request("DELETE", &format!("/api/scans/{uuid}"), &[], b"");
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert_eq!(refused.json()["error"]["code"], "erase_key_required");
    let erased = web.request(
        "DELETE",
        &format!("/api/scans/{uuid}"),
        &[("X-Erase-Key", &erase_key)],
        b"",
    );
    assert_eq!(erased.status, 200, "{}", erased.text());
    assert_eq!(web.get(&format!("/api/scans/{uuid}"), &[]).status, 404);

    web.terminate();
    let printed = web.stderr_lines();
    assert!(
        !printed.iter().any(|l| l.contains(&erase_key)),
        "{printed:?}"
    );
}

#[test]
fn the_guard_refuses_private_targets_and_hostile_requests_get_clear_errors() {
    let dir = fresh_dir("web-api-guard");
    let mut web = start(&dir, &[]);
    for target in [
        "127.0.0.1:9200",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "10.1.2.3",
        "169.254.169.254",
        "[fd00::1]",
        "http://192.168.0.10:8080/",
        "[64:ff9b::a9fe:a9fe]",
    ] {
        let answer = submit(&web, &serde_json::json!({"target_url": target}).to_string());
        assert_eq!(answer.status, 400, "{target}: {}", answer.text());
        let error = &answer.json()["error"];
        assert_eq!(error["code"], "target_refused", "{target}");
        assert_eq!(error["field"], "target_url", "{target}");
    }
    // Malformed JSON, a wrong field, a body far over the cap: clear errors.
    let malformed = submit(&web, "{\"target_url\": ");
    assert_eq!(malformed.status, 400);
    assert_eq!(malformed.json()["error"]["code"], "invalid_request");
    let unknown = submit(&web, r#"{"target_url": "a.example", "concurrency": 64}"#);
    assert_eq!(unknown.status, 400);
    assert_eq!(unknown.json()["error"]["code"], "unknown_field");
    let huge = web.request(
        "POST",
        "/api/scans",
        &[("Content-Length", "10485760")],
        b"{",
    );
    assert_eq!(huge.status, 413, "{}", huge.text());
    // ...and the server still answers.
    let health = web.get("/healthz", &[]);
    assert_eq!(health.status, 200);
    assert_eq!(web.get("/api/scans/nope", &[]).status, 404);
    assert_eq!(web.get("/nothing-here", &[]).status, 404);

    web.terminate();
    assert_eq!(web.wait_exit(Duration::from_secs(30)), Some(0));
}

#[test]
fn a_flood_and_dripping_clients_leave_the_server_answering() {
    use std::io::Write;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = fresh_dir("web-api-flood");
    let web = start(
        &dir,
        &[
            "--allow-private-targets",
            "--workers",
            "1",
            "--timeout",
            "1",
        ],
    );
    // Clients that send a header a byte at a time and never finish it.
    let stop = Arc::new(AtomicBool::new(false));
    let drippers: Vec<_> = (0..4)
        .map(|_| {
            let (addr, stop) = (web.addr, stop.clone());
            std::thread::spawn(move || {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                let _ = c.write_all(b"POST /api/scans HTTP/1.1\r\nX-Drip: ");
                while !stop.load(Ordering::SeqCst) {
                    if c.write_all(b"x").is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        })
        .collect();
    // A flood from one address: ten are queued, the rest told when to come back.
    let mut statuses = Vec::new();
    // Targets on loopback that accept and never answer, each its own: no scan ends during
    // the flood, so no outcome pauses the network meanwhile (five scans that found nothing
    // would), and no target is named twice (it would meet its cooldown).
    let silent: Vec<std::net::TcpListener> = (0..30)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let ports: Vec<u16> = silent
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect();
    for (n, port) in ports.into_iter().enumerate() {
        let started = Instant::now();
        let answer = submit(&web, &format!("{{\"target_url\": \"127.0.0.1:{port}\"}}"));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "submission {n} took {:?}",
            started.elapsed()
        );
        if answer.status == 429 {
            assert!(answer.header("retry-after").is_some());
            assert_eq!(answer.json()["error"]["code"], "rate_limited");
        }
        statuses.push(answer.status);
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 202).count(),
        10,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        20,
        "{statuses:?}"
    );
    assert_eq!(web.get("/healthz", &[]).status, 200);
    stop.store(true, Ordering::SeqCst);
    for d in drippers {
        d.join().unwrap();
    }
    assert_eq!(web.get("/healthz", &[]).status, 200);
}

/// One address holds at most `--connections-per-address` connections (queued or served):
/// 100 connections dripping a header and 200 idle ones from 127.0.0.2 leave the workers to
/// others, and a fresh client from 127.0.0.3 gets its answer within a second throughout. The
/// attacker's connections past its share are answered 429 at once.
#[test]
fn one_address_cannot_starve_the_others() {
    use crate::support::service::{connect_from, request_from};
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = fresh_dir("web-api-per-address");
    let web = start(&dir, &[]);
    let addr = web.addr;
    let stop = Arc::new(AtomicBool::new(false));
    // Drippers: a header byte now and then, never the end of it.
    let mut drippers: Vec<std::net::TcpStream> = (0..100)
        .map(|_| {
            let mut c = connect_from("127.0.0.2", addr);
            let _ = c.write_all(b"GET /healthz HTTP/1.1\r\nX-Drip: ");
            c
        })
        .collect();
    let dripping = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                for c in &mut drippers {
                    let _ = c.write_all(b"x");
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    // Idle connections that never say a word.
    let idle: Vec<std::net::TcpStream> =
        (0..200).map(|_| connect_from("127.0.0.2", addr)).collect();
    for n in 0..10 {
        let started = Instant::now();
        let answer = request_from("127.0.0.3", addr, "GET", "/healthz", &[], b"");
        assert_eq!(answer.status, 200, "try {n}: {}", answer.text());
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "try {n} took {:?}",
            started.elapsed()
        );
    }
    // One more from the attacker is told at once, before it sends anything.
    let mut over = connect_from("127.0.0.2", addr);
    over.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut answer = String::new();
    let _ = over.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 429 "), "{answer}");
    assert!(answer.contains("too_many_connections"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );
    stop.store(true, Ordering::SeqCst);
    dripping.join().unwrap();
    drop(idle);
    // Its connections closed, the attacker is a client like any other again.
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        if request_from("127.0.0.2", addr, "GET", "/healthz", &[], b"").status == 200 {
            break;
        }
        assert!(Instant::now() < until, "127.0.0.2 is still refused");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Threads of the process `pid` now.
fn threads_of(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Cheap refusals first (issue 21, item 3): 40 clients of one address flood the API with names
/// that do not resolve. The address's rate is counted before any lookup, so its first ten are
/// refused by the guard (400) and every other one gets 429 with `Retry-After` at once; the
/// process does not grow a thread per lookup, and `/healthz` from another address answers
/// within a second all along.
#[test]
fn a_flood_of_unresolvable_names_from_one_address_is_refused_cheaply() {
    use crate::support::service::request_from;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = fresh_dir("web-api-cheap-refusals");
    let web = start(&dir, &[]);
    let (addr, pid) = (web.addr, web.pid());
    // The HTTP workers start after the server says it listens, all before it accepts: counted
    // once one answered.
    assert_eq!(web.get("/healthz", &[]).status, 200);
    let before = threads_of(pid);
    let done = Arc::new(AtomicBool::new(false));
    let health = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut slowest = Duration::ZERO;
            let mut most_threads = 0;
            while !done.load(Ordering::SeqCst) {
                let started = Instant::now();
                let answer = request_from("127.0.0.3", addr, "GET", "/healthz", &[], b"");
                assert_eq!(answer.status, 200, "{}", answer.text());
                slowest = slowest.max(started.elapsed());
                most_threads = most_threads.max(threads_of(pid));
                std::thread::sleep(Duration::from_millis(20));
            }
            (slowest, most_threads)
        })
    };
    let clients: Vec<_> = (0..40)
        .map(|client| {
            std::thread::spawn(move || {
                (0..5)
                    .map(|n| {
                        let body = format!("{{\"target_url\": \"nx-{client}-{n}.invalid\"}}");
                        let answer = request_from(
                            "127.0.0.2",
                            addr,
                            "POST",
                            "/api/scans",
                            &[("Content-Type", "application/json")],
                            body.as_bytes(),
                        );
                        if answer.status == 429 {
                            // Past its minute, or past its share of connections (40 at once
                            // from one address): told when to come back, either way.
                            assert!(answer.header("retry-after").is_some());
                            let code = &answer.json()["error"]["code"];
                            assert!(
                                code == "rate_limited" || code == "too_many_connections",
                                "{code}"
                            );
                        }
                        (answer.status, answer.json()["error"]["code"].to_string())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let answers: Vec<(u16, String)> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    done.store(true, Ordering::SeqCst);
    let (slowest, most_threads) = health.join().unwrap();
    let admitted: Vec<&(u16, String)> = answers.iter().filter(|(s, _)| *s != 429).collect();
    assert_eq!(admitted.len(), 10, "{answers:?}");
    for (status, code) in admitted {
        assert!(
            (*status, code.as_str()) == (400, "\"target_refused\"")
                || (*status, code.as_str()) == (503, "\"resolver_busy\""),
            "{status} {code}"
        );
    }
    assert_eq!(answers.len(), 200);
    assert!(
        slowest < Duration::from_secs(1),
        "/healthz took {slowest:?}"
    );
    // The HTTP workers are there from the start; lookups add at most their seats.
    assert!(
        most_threads <= before + 8,
        "threads {before} -> {most_threads}"
    );
    web.terminate();
}

/// One instance, one cooldown (issue 21, item 5), against the real resolver: `localhost` and
/// `127.0.0.1` share the cooldown of their address, the scheme, the path and the default port
/// aside; `limits lift` given the name lifts it through the address it resolves to. Each
/// client is an address of a /24 of its own (127.0.N.1), so no other limit is met.
#[test]
fn localhost_and_127_0_0_1_share_one_cooldown() {
    use crate::support::service::request_from;
    let dir = fresh_dir("web-api-one-instance");
    let web = start(&dir, &["--allow-private-targets", "--workers", "1"]);
    let port = crate::support::closed_port();
    let mut network = 1;
    let mut submit = |target: String| {
        network += 1;
        let body = serde_json::json!({ "target_url": target }).to_string();
        request_from(
            &format!("127.0.{network}.1"),
            web.addr,
            "POST",
            "/api/scans",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
    };
    let first = submit(format!("127.0.0.1:{port}"));
    assert_eq!(first.status, 202, "{}", first.text());
    for spelling in [
        format!("localhost:{port}"),
        format!("LOCALHOST.:{port}"),
        format!("https://localhost:{port}/x"),
        format!("http://127.0.0.1:{port}/./"),
        format!("http://[::ffff:127.0.0.1]:{port}/%2e"),
    ] {
        let refused = submit(spelling.clone());
        assert_eq!(refused.status, 429, "{spelling}: {}", refused.text());
        assert_eq!(
            refused.json()["error"]["code"],
            "target_cooldown",
            "{spelling}"
        );
        assert!(refused.header("retry-after").is_some(), "{spelling}");
    }
    let (listed, code) = limits_command(&dir, &["list"]);
    assert_eq!(code, 0, "{listed}");
    assert!(
        listed.starts_with(&format!("target_cooldown  127.0.0.1:{port}  until ")),
        "{listed}"
    );
    let (lifted, code) = limits_command(&dir, &["lift", &format!("localhost:{port}")]);
    assert_eq!(code, 0, "{lifted}");
    assert_eq!(lifted, format!("lifted the cooldown of 127.0.0.1:{port}\n"));
    assert_eq!(submit(format!("https://localhost:{port}/")).status, 202);
    web.terminate();
}

/// A page of another site can make its visitors' browsers send a form or a `text/plain` body
/// anywhere without asking first (a CORS-simple request), so a browser could be made to submit
/// scans: the JSON routes take only `application/json` (415 otherwise), the HTML form refuses
/// what the browser says comes from another site (403), and the form's 303 says `See Other`.
#[test]
fn requests_a_browser_can_forge_are_refused() {
    use std::io::{Read, Write};
    let dir = fresh_dir("web-api-forgery");
    let web = start(&dir, &["--base-url", "https://scan.example.com/"]);
    // A loopback target: refused by the guard (400), which is what a request gets past the
    // media type and origin checks.
    let body = r#"{"target_url": "127.0.0.1:9200"}"#;
    for content_type in [
        None,
        Some("text/plain"),
        Some("text/plain; charset=utf-8"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/jsonx"),
        Some("application/json-patch+json"),
    ] {
        let headers: Vec<(&str, &str)> = content_type
            .map(|c| ("Content-Type", c))
            .into_iter()
            .collect();
        for route in ["/api/scans", "/mcp"] {
            let answer = web.request("POST", route, &headers, body.as_bytes());
            assert_eq!(
                answer.status,
                415,
                "{route} {content_type:?}: {}",
                answer.text()
            );
            assert_eq!(
                answer.json()["error"]["code"],
                "unsupported_media_type",
                "{route} {content_type:?}"
            );
        }
    }
    for content_type in [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
    ] {
        let answer = web.request(
            "POST",
            "/api/scans",
            &[("Content-Type", content_type)],
            body.as_bytes(),
        );
        assert_eq!(answer.status, 400, "{content_type}: {}", answer.text());
        assert_eq!(answer.json()["error"]["code"], "target_refused");
    }

    // The JSON API's submission starts work: what a browser marks as another site's is
    // refused before anything is read of it (issue 31, item 3), even with the JSON type a
    // page can send only after a preflight.
    for forged in [
        vec![("Origin", "null")],
        vec![("Origin", "https://evil.example")],
        vec![("Sec-Fetch-Site", "cross-site")],
        vec![("Sec-Fetch-Site", "same-site")],
    ] {
        let mut headers = vec![("Content-Type", "application/json")];
        headers.extend_from_slice(&forged);
        let answer = web.request("POST", "/api/scans", &headers, body.as_bytes());
        assert_eq!(answer.status, 403, "{forged:?}: {}", answer.text());
        assert_eq!(answer.json()["error"]["code"], "forbidden_origin");
    }

    // The form: another site's page is refused, this site's own page and curl are not.
    let form = b"target_url=127.0.0.1%3A9200";
    let post_form = |extra: &[(&str, &str)]| {
        let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
        headers.extend_from_slice(extra);
        web.request("POST", "/scans", &headers, form)
    };
    for forged in [
        vec![("Origin", "https://evil.example")],
        vec![("Origin", "null")],
        vec![("Origin", "http://scan.example.com")],
        vec![("Sec-Fetch-Site", "cross-site")],
        vec![
            ("Origin", "https://scan.example.com"),
            ("Sec-Fetch-Site", "cross-site"),
        ],
    ] {
        let answer = post_form(&forged);
        assert_eq!(answer.status, 403, "{forged:?}: {}", answer.text());
        assert!(answer.text().contains("class=\"error\""), "{forged:?}");
    }
    let own_port = web.addr.to_string();
    let own = format!("http://{own_port}");
    for allowed in [
        vec![],
        vec![
            ("Origin", "https://scan.example.com"),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        vec![("Origin", own.as_str())],
        vec![("Sec-Fetch-Site", "none")],
    ] {
        let answer = post_form(&allowed);
        assert_eq!(answer.status, 400, "{allowed:?}: {}", answer.text());
        // The guard's reason on the form: the request got past the origin check.
        assert!(
            answer.text().contains("loopback"),
            "{allowed:?}: {}",
            answer.text()
        );
    }

    // Raw, to read the status line: a form this server takes is answered 303 See Other.
    let open = start(
        &fresh_dir("web-api-see-other"),
        &["--allow-private-targets"],
    );
    let form = b"target_url=127.0.0.1%3A9";
    let mut stream = std::net::TcpStream::connect(open.addr).unwrap();
    write!(
        stream,
        "POST /scans HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\n\r\n",
        open.addr,
        form.len()
    )
    .unwrap();
    stream.write_all(form).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 303 See Other\r\n"), "{answer}");
    open.terminate();
    web.terminate();
}

/// An https base URL on a loopback listen address is a reverse proxy's backend: without
/// --trusted-proxy every client counts as the proxy, so `web` says so once, naming the fix.
#[test]
fn a_proxied_server_without_a_trusted_proxy_warns_once() {
    let dir = fresh_dir("web-api-proxy-warning");
    let web = start(&dir, &["--base-url", "https://scan.example.com"]);
    web.terminate();
    let printed = web.stderr_lines();
    let warnings: Vec<&String> = printed
        .iter()
        .filter(|l| l.contains("share one address's limits"))
        .collect();
    assert_eq!(warnings.len(), 1, "{printed:?}");
    assert!(
        warnings[0].contains("--trusted-proxy 127.0.0.1/32"),
        "{}",
        warnings[0]
    );

    for extra in [
        vec![
            "--base-url",
            "https://scan.example.com",
            "--trusted-proxy",
            "127.0.0.1/32",
        ],
        vec!["--base-url", "http://scan.example.com"],
        vec![],
    ] {
        let dir = fresh_dir("web-api-proxy-no-warning");
        let web = start(&dir, &extra);
        web.terminate();
        let printed = web.stderr_lines();
        assert!(
            !printed.iter().any(|l| l.contains("--trusted-proxy")),
            "{extra:?}: {printed:?}"
        );
    }
}

/// The record TTL promises "then it is gone": past it, the web server's purger erases the
/// record, its limit logs and its network's outcomes from the SQLite file, their bytes too
/// (the web server is started again a week and a day later on its clock).
#[test]
fn expired_records_leave_the_sqlite_file() {
    let dir = fresh_dir("web-api-purge");
    let target = format!("127.0.0.1:{}", crate::support::closed_port());
    let args = [
        "--allow-private-targets",
        "--record-ttl",
        "60",
        "--workers",
        "1",
    ];
    let mut web = start(&dir, &args);
    let answer = submit(
        &web,
        &serde_json::json!({ "target_url": target }).to_string(),
    );
    assert_eq!(answer.status, 202, "{}", answer.text());
    let uuid = answer.json()["uuid"].as_str().unwrap().to_string();
    completed(&web, &uuid);
    web.terminate();
    assert_eq!(web.wait_exit(Duration::from_secs(30)), Some(0));
    let files = || -> Vec<u8> {
        ["web.sqlite", "web.sqlite-wal"]
            .iter()
            .flat_map(|name| std::fs::read(dir.join(name)).unwrap_or_default())
            .collect()
    };
    let holds = |bytes: &[u8], text: &str| bytes.windows(text.len()).any(|w| w == text.as_bytes());
    assert!(holds(&files(), &uuid), "the record is in the file before");

    let later = start_at(&dir, "2026-11-30T03:00:01Z", &args);
    let purged = later.wait_for_line(Duration::from_secs(30), |l| l.contains("purged"));
    assert_eq!(
        purged.as_deref(),
        Some("check-storage-scanner web: purged 1 expired record"),
        "{:?}",
        later.stderr_lines()
    );
    let store = rusqlite::Connection::open(dir.join("web.sqlite")).unwrap();
    for table in ["scans", "hits", "outcomes", "pauses"] {
        let rows: i64 = store
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(rows, 0, "{table}");
    }
    let bytes = files();
    assert!(!holds(&bytes, &uuid), "the uuid is still in the file");
    assert!(!holds(&bytes, &target), "the target is still in the file");
    assert_eq!(later.get(&format!("/api/scans/{uuid}"), &[]).status, 404);
}

/// `check-storage-scanner limits <args>` on the state directory of a web server.
fn limits_command(dir: &std::path::Path, args: &[&str]) -> (String, i32) {
    let mut all = vec!["limits"];
    all.extend_from_slice(args);
    crate::support::web::run_scanner(dir, &all)
}

/// A network whose last five scans found nothing is paused: the 429 says when the pause ends,
/// and the operator lists the pause and the cooldowns from the command line, against the same
/// store, and lifts them.
#[test]
fn an_operator_lists_and_lifts_pauses_and_cooldowns() {
    let dir = fresh_dir("web-api-limits");
    let web = start(&dir, &["--allow-private-targets", "--workers", "1"]);
    let mut ports = std::collections::BTreeSet::new();
    while ports.len() < 6 {
        ports.insert(crate::support::closed_port());
    }
    let targets: Vec<String> = ports
        .into_iter()
        .map(|port| format!("127.0.0.1:{port}"))
        .collect();
    let body = |target: &str| serde_json::json!({ "target_url": target }).to_string();
    // Five scans that find nothing (nothing listens there).
    for target in &targets[..5] {
        let answer = submit(&web, &body(target));
        assert_eq!(answer.status, 202, "{}", answer.text());
        completed(&web, answer.json()["uuid"].as_str().unwrap());
    }
    let until = Instant::now() + Duration::from_secs(30);
    let listed = loop {
        let (listed, code) = limits_command(&dir, &["list"]);
        assert_eq!(code, 0, "{listed}");
        if listed.contains("network_paused") {
            break listed;
        }
        assert!(Instant::now() < until, "never paused: {listed}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 6, "{listed}");
    let pause: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        pause[..3],
        ["network_paused", "127.0.0.0/24", "until"],
        "{listed}"
    );
    let ends = pause[3];
    assert!(ends.starts_with("2026-11-23T03:00:"), "{listed}");
    assert!(lines[0].ends_with("(in 24 h 0 min)"), "{listed}");
    for target in &targets[..5] {
        assert!(
            lines[1..]
                .iter()
                .any(|l| l.starts_with("target_cooldown") && l.contains(target.as_str())),
            "{target}: {listed}"
        );
    }

    // The sixth submission is refused, and the refusal names the end of the pause.
    let refused = submit(&web, &body(&targets[5]));
    assert_eq!(refused.status, 429, "{}", refused.text());
    let error = &refused.json()["error"];
    assert_eq!(error["code"], "network_paused");
    assert!(
        error["message"].as_str().unwrap().contains(ends),
        "{error} should name {ends}"
    );

    let (lifted, code) = limits_command(&dir, &["lift", "127.0.0.0/24"]);
    assert_eq!(code, 0, "{lifted}");
    assert_eq!(
        lifted,
        "lifted the pause of 127.0.0.0/24 (its recent outcomes forgotten)\n\
         lifted the daily count of 127.0.0.0/24\n"
    );
    assert_eq!(submit(&web, &body(&targets[5])).status, 202);

    // A target's cooldown, lifted by the target as submitted.
    assert_eq!(submit(&web, &body(&targets[0])).status, 429);
    let (lifted, code) = limits_command(&dir, &["lift", &format!("https://{}/", targets[0])]);
    assert_eq!(code, 0, "{lifted}");
    assert_eq!(lifted, format!("lifted the cooldown of {}\n", targets[0]));
    assert_eq!(submit(&web, &body(&targets[0])).status, 202);
    let (nothing, code) = limits_command(&dir, &["lift", "never.example"]);
    assert_eq!(
        (nothing.as_str(), code),
        ("nothing held never.example\n", 0)
    );

    // Operator mistakes: one line naming the fix, exit 3.
    let (wrong, code) = limits_command(&dir, &["lift", "127.0.0.0/8"]);
    assert_eq!(code, 3, "{wrong}");
    assert!(wrong.contains("/24"), "{wrong}");
    let (wrong, code) = limits_command(&dir, &["drop"]);
    assert_eq!(code, 3, "{wrong}");
    assert!(wrong.contains("list, or lift"), "{wrong}");
    let elsewhere = fresh_dir("web-api-limits-none");
    let (missing, code) = limits_command(&elsewhere, &[]);
    assert_eq!(code, 3, "{missing}");
    assert!(missing.contains("does not exist"), "{missing}");
    assert!(!elsewhere.join("web.sqlite").exists());
}

/// Issue 31, item 7: health tells the truth for SQLite too. While another process holds the
/// store file's write lock, submissions wait for it and answer 503 within the store timeout,
/// and `/healthz` says 503 within a second instead of 200 (a read passes under that lock);
/// once the lock is released, both work again.
#[test]
fn a_sqlite_file_another_process_holds_is_unhealthy() {
    let dir = fresh_dir("web-api-sqlite-locked");
    let web = start(&dir, &["--allow-private-targets", "--workers", "1"]);
    assert_eq!(web.get("/healthz", &[]).status, 200);
    // This test's process is the other process: it holds the write lock of the file.
    let holder = rusqlite::Connection::open(dir.join("web.sqlite")).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let target = format!(
        r#"{{"target_url": "127.0.0.1:{}"}}"#,
        crate::support::closed_port()
    );
    for _ in 0..2 {
        let asked = Instant::now();
        let health = web.get("/healthz", &[]);
        assert_eq!(health.status, 503, "{}", health.text());
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "{:?}",
            asked.elapsed()
        );
        let asked = Instant::now();
        let refused = submit(&web, &target);
        assert_eq!(refused.status, 503, "{}", refused.text());
        assert!(
            asked.elapsed() < Duration::from_millis(2_500),
            "{:?}",
            asked.elapsed()
        );
    }
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(web.get("/healthz", &[]).status, 200);
    assert_eq!(submit(&web, &target).status, 202);
    web.terminate();
}
