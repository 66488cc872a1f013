//! `check-storage-scanner serve` as a real process on loopback, asked by a real HTTP client:
//! the token rules at start, 401s, the queue and its records, the cache and requeue, one scan
//! for a hundred simultaneous requests, hostile clients, the request log and SIGTERM. Scans go
//! to fake instances; what a scan cost is counted by the fake, never guessed from timing.

use crate::support::plugin::{NOW, healthy, hermetic, scratch};
use crate::support::service::{Answer, Refused, ScannerService, form_encode, request};
use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const TOKEN: &str = "0f4c2a9e7d1b3c5a8e6f0d2b4c6a8e1f";
/// How long a test waits for something the service does at once (a generous upper bound).
const PROMPT: Duration = Duration::from_secs(30);

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_check-storage-scanner"))
}

/// Starts the service with hermetic scan flags (trusting the fakes' CA) and `extra`.
fn start(name: &str, extra: &[&str], env: &[(&str, &str)]) -> Result<ScannerService, Refused> {
    let dir = scratch(name);
    let mut args = hermetic(&crate::support::certs::ca_file());
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut env = env.to_vec();
    env.push(("COS_NOW", NOW));
    ScannerService::start(bin(), &dir, &args, &env)
}

fn started(name: &str, extra: &[&str], env: &[(&str, &str)]) -> ScannerService {
    start(name, extra, env).unwrap_or_else(|r| panic!("the service did not start: {r:?}"))
}

fn refused(name: &str, extra: &[&str], env: &[(&str, &str)]) -> Refused {
    match start(name, extra, env) {
        Ok(s) => panic!("the service started on {}", s.addr),
        Err(r) => r,
    }
}

/// A refusal as the issue says: exit 3, stdout empty, one line on stderr.
fn assert_refusal(r: &Refused, says: &str) {
    assert_eq!(r.code, Some(3), "{r:?}");
    assert_eq!(r.stdout, "", "{r:?}");
    assert_eq!(r.stderr.lines().count(), 1, "{r:?}");
    assert!(
        r.stderr.starts_with("check-storage-scanner: ") && r.stderr.contains(says),
        "{r:?}"
    );
}

fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

fn scan_path(host: &str) -> String {
    format!("/api/scan?url={}", form_encode(host))
}

fn status_requests(fake: &FakeInstance) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.path() == "/status.php")
        .count()
}

/// Polls a record until it holds a document; every answer before is queued or running.
fn result_document(service: &ScannerService, uuid: &str, headers: &[(&str, &str)]) -> Answer {
    let until = Instant::now() + PROMPT;
    loop {
        let a = service.get(&format!("/api/result/{uuid}"), headers);
        assert_eq!(a.status, 200, "{}", a.text());
        let body = a.json();
        match body.get("status").and_then(Value::as_str) {
            Some("queued" | "running") => {
                assert_eq!(body["uuid"], uuid);
                assert!(Instant::now() < until, "the scan did not end");
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => return a,
        }
    }
}

fn uuid_of(a: &Answer) -> String {
    assert_eq!(a.status, 202, "{}", a.text());
    a.json()["uuid"].as_str().expect("a uuid").to_string()
}

#[test]
fn refuses_to_listen_beyond_loopback_without_a_token() {
    // A documentation address: even a service that failed to refuse could not bind it.
    let r = refused("service-no-token", &["--listen", "192.0.2.1"], &[]);
    assert_refusal(&r, "refusing to listen on 192.0.2.1 without a token");
    let r = refused(
        "service-no-token-env",
        &[],
        &[("COS_SERVICE_LISTEN", "192.0.2.1")],
    );
    assert_refusal(&r, "refusing to listen on 192.0.2.1 without a token");
}

#[test]
fn refuses_a_short_token_and_the_shipped_placeholder() {
    let short = &TOKEN[..31];
    let r = refused("service-short", &["--token", short], &[]);
    assert_refusal(&r, "shorter than 32 characters");
    assert!(!r.stderr.contains(short), "the token is never printed");
    let r = refused("service-short-env", &[], &[("COS_SERVICE_TOKEN", short)]);
    assert_refusal(&r, "shorter than 32 characters");

    // The sample file ships the placeholder; starting with it as it is must fail.
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("packaging/check-storage-scanner.sample.yml");
    let text = std::fs::read_to_string(&sample).unwrap();
    assert!(text.contains("token: replace-me-with-a-random-scanner-token"));
    let r = refused(
        "service-placeholder",
        &["--config", &sample.display().to_string()],
        &[],
    );
    assert_refusal(&r, "placeholder");
    assert!(!r.stderr.contains("replace-me-with"), "{r:?}");
}

#[test]
fn a_token_from_a_file_or_a_reference_guards_the_api() {
    let dir = scratch("service-token-files");
    let file = dir.join("scanner-token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let from_file = file.display().to_string();
    let by_reference = format!("file://{from_file}");
    for (name, extra, env) in [
        (
            "service-token-file",
            vec![],
            vec![("COS_SERVICE_TOKEN_FILE", from_file.as_str())],
        ),
        (
            "service-token-env",
            vec!["--token", "env://SCANNER_TOKEN"],
            vec![("SCANNER_TOKEN", TOKEN)],
        ),
        (
            "service-token-ref",
            vec!["--token", by_reference.as_str()],
            vec![],
        ),
    ] {
        let service = started(name, &extra, &env);
        let a = service.get("/api/result/none", &[]);
        assert_eq!(a.status, 401, "{name}: {}", a.text());
        let a = service.get("/api/result/none", &[("Authorization", &bearer())]);
        assert_eq!(a.status, 404, "{name}: {}", a.text());
        assert!(
            service.stderr_lines().iter().all(|l| !l.contains(TOKEN)),
            "{name}: {:?}",
            service.stderr_lines()
        );
    }
}

#[test]
fn with_a_token_every_api_route_answers_401_and_healthz_stays_open() {
    let service = started("service-401", &["--token", TOKEN], &[]);
    let wrong = format!("Bearer {}x", &TOKEN[1..]);
    for (method, path) in [
        ("POST", "/api/queue?url=a.example"),
        ("GET", "/api/result/00000000-0000-4000-8000-000000000000"),
        ("POST", "/api/requeue?url=a.example"),
        ("GET", "/api/scan?url=a.example"),
        ("GET", "/api/unknown"),
    ] {
        for headers in [vec![], vec![("Authorization", wrong.as_str())]] {
            let a = service.request(method, path, &headers, b"");
            assert_eq!(a.status, 401, "{method} {path}: {}", a.text());
            let challenge = a.header("www-authenticate").unwrap_or_default();
            assert!(challenge.starts_with("Bearer"), "{challenge}");
            assert_eq!(a.json()["error"]["code"], "unauthorized");
            assert_eq!(a.header("content-type"), Some("application/json"));
        }
    }
    let a = service.get("/healthz", &[]);
    assert_eq!(a.status, 200);
    assert_eq!(a.json(), serde_json::json!({"status": "ok"}));
}

#[test]
fn queue_reports_queued_and_running_then_the_document() {
    // One scan worker: a silent instance holds it (its scan ends with the 1.5 s budget), so a
    // second scan is queued behind it for certain.
    let silent = FakeInstance::start(InstanceConfig::default().delay(Duration::from_secs(30)));
    let fake = FakeInstance::start(healthy("8.1.0"));
    let service = started(
        "service-queue",
        &[
            "--concurrency",
            "1",
            "--timeout",
            "0.5",
            "--time-budget",
            "1.5",
        ],
        &[],
    );
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let body = format!("url={}", form_encode(&silent.host_port()));
    let held = uuid_of(&service.request("POST", "/api/queue", &form, body.as_bytes()));
    let json = [("Content-Type", "application/json")];
    let body = serde_json::json!({"url": fake.base_url()}).to_string();
    let waiting = uuid_of(&service.request("POST", "/api/queue", &json, body.as_bytes()));
    assert_ne!(held, waiting);

    let until = Instant::now() + PROMPT;
    loop {
        let a = service.get(&format!("/api/result/{held}"), &[]);
        if a.json()["status"] == "running" {
            break;
        }
        assert_eq!(a.json()["status"], "queued");
        assert!(Instant::now() < until);
        std::thread::sleep(Duration::from_millis(5));
    }
    let a = service.get(&format!("/api/result/{waiting}"), &[]);
    assert_eq!(
        a.json(),
        serde_json::json!({"uuid": waiting, "status": "queued"})
    );
    assert_eq!(fake.request_count(), 0, "not scanned while queued");

    let doc = result_document(&service, &waiting, &[]).json();
    assert_eq!(doc["host"], fake.host_port());
    assert_eq!(doc["state"], "OK", "{doc}");
    let doc = result_document(&service, &held, &[]).json();
    assert_eq!(doc["state"], "UNKNOWN", "{doc}");
    assert!(doc["error"]["message"].is_string(), "{doc}");

    let a = service.get("/api/result/00000000-0000-4000-8000-000000000000", &[]);
    assert_eq!(a.status, 404);
    assert_eq!(a.json()["error"]["code"], "unknown_uuid");
}

#[test]
fn results_come_from_the_cache_until_requeued() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    // The token from the environment: on the command line it would add a warning to the log.
    let service = started("service-cache", &[], &[("COS_SERVICE_TOKEN", TOKEN)]);
    let auth = [("Authorization", bearer())];
    let auth: Vec<(&str, &str)> = auth.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let host = fake.host_port();

    let first = service.get(&scan_path(&host), &auth);
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(first.header("content-type"), Some("application/json"));
    let scanned = fake.request_count();
    assert_eq!(status_requests(&fake), 1);
    let doc = first.json();
    assert_eq!(
        (doc["host"].as_str(), doc["state"].as_str()),
        (Some(host.as_str()), Some("OK"))
    );

    // From the cache: the instance sees nothing, the document is the same to the byte
    // (scannedAt and durationSeconds included), by query, queue record, URL form alike.
    let again = service.get(&scan_path(&fake.base_url()), &auth);
    assert_eq!(again.body, first.body);
    let uuid = uuid_of(&service.request("POST", &format!("/api/queue?url={host}"), &auth, b""));
    assert_eq!(result_document(&service, &uuid, &auth).body, first.body);
    assert_eq!(fake.request_count(), scanned, "served from the cache");

    // Requeue discards the cached result and scans again.
    let mut json = auth.clone();
    json.push(("Content-Type", "application/json"));
    let body = serde_json::json!({"url": host}).to_string();
    let uuid = uuid_of(&service.request("POST", "/api/requeue", &json, body.as_bytes()));
    let rescanned = result_document(&service, &uuid, &auth);
    assert_eq!(
        status_requests(&fake),
        2,
        "a new scan: {}",
        rescanned.text()
    );
    assert_eq!(fake.request_count(), 2 * scanned);
    let redoc = rescanned.json();
    assert_ne!(
        redoc["durationSeconds"], doc["durationSeconds"],
        "another scan"
    );
    // The new result replaced the cached one.
    let cached = service.get(&scan_path(&host), &auth);
    assert_eq!(cached.body, rescanned.body);
    assert_eq!(status_requests(&fake), 2);

    // One log line per request: method, path, status, duration; no query, no token.
    let log = service.stderr_lines();
    assert!(
        log[0].starts_with("check-storage-scanner: listening on http://127.0.0.1:"),
        "{log:?}"
    );
    for line in &log[1..] {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 4, "{line}");
        assert!(["GET", "POST"].contains(&fields[0]), "{line}");
        assert!(
            fields[1].starts_with("/api/") && !fields[1].contains('?'),
            "{line}"
        );
        assert!(
            fields[2].parse::<u16>().is_ok() && fields[3].ends_with("ms"),
            "{line}"
        );
    }
    assert!(
        log.iter().any(|l| l.starts_with("GET /api/scan 200 ")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.starts_with("POST /api/requeue 202 ")),
        "{log:?}"
    );
    assert!(
        log.iter().all(|l| !l.contains(&host) && !l.contains(TOKEN)),
        "{log:?}"
    );
}

#[test]
fn a_hundred_simultaneous_requests_for_a_cold_host_cost_one_scan() {
    // What one scan costs the instance, counted on an instance of its own.
    let calibration = FakeInstance::start(healthy("8.1.0"));
    // Every answer 20 ms late: the scan lasts long enough for the requests to join it.
    let fake = FakeInstance::start(healthy("8.1.0").delay(Duration::from_millis(20)));
    let service = started("service-single-flight", &[], &[]);
    let one = service.get(&scan_path(&calibration.host_port()), &[]);
    assert_eq!(one.status, 200, "{}", one.text());
    let per_scan = status_requests(&calibration);
    assert_eq!(per_scan, 1);

    let gate = Arc::new(Barrier::new(100));
    let path = scan_path(&fake.host_port());
    let clients: Vec<_> = (0..100)
        .map(|_| {
            let (gate, path, addr) = (gate.clone(), path.clone(), service.addr);
            std::thread::spawn(move || {
                gate.wait();
                request(addr, "GET", &path, &[], b"")
            })
        })
        .collect();
    let answers: Vec<Answer> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert!(
        answers.iter().all(|a| a.status == 200),
        "{:?}",
        answers.iter().map(|a| a.status).collect::<Vec<_>>()
    );
    assert!(
        answers.iter().all(|a| a.body == answers[0].body),
        "one scan, one document"
    );
    assert_eq!(status_requests(&fake), per_scan, "exactly one scan");
    assert_eq!(fake.request_count(), calibration.request_count());
}

#[test]
fn oversized_and_malformed_requests_get_json_errors() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let service = started("service-hostile", &[], &[]);
    let big = vec![b'a'; 8 * 1024 + 1];
    // As curl sends a large body: it waits for 100 Continue and gets the refusal instead.
    let a = service.request(
        "POST",
        "/api/queue",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Content-Length", "8193"),
            ("Expect", "100-continue"),
        ],
        b"",
    );
    assert_eq!(a.status, 413, "{}", a.text());
    assert_eq!(a.json()["error"]["code"], "body_too_large");
    // Sent whole, unasked.
    let a = service.request(
        "POST",
        "/api/queue",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &big,
    );
    assert_eq!(a.status, 413, "{}", a.text());

    let json = [("Content-Type", "application/json")];
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    for (headers, body, status, code) in [
        (&json[..], &b"{\"url\": "[..], 400, "bad_json"),
        (&json[..], b"{\"url\": [\"a\"]}", 400, "bad_json"),
        (&json[..], b"\"a.example\"", 400, "bad_json"),
        (&form[..], b"url=\xff\xfe", 400, "bad_form"),
        (&form[..], b"url=", 400, "bad_target"),
        (
            &form[..],
            b"url=https%3A%2F%2Fuser%3Apw%40a.example",
            400,
            "bad_target",
        ),
        (&form[..], b"target=a.example", 400, "unknown_parameter"),
        (
            &[("Content-Type", "text/xml")][..],
            b"<url/>",
            415,
            "unsupported_media_type",
        ),
    ] {
        let a = service.request("POST", "/api/queue", headers, body);
        assert_eq!(
            a.status,
            status,
            "{}: {}",
            String::from_utf8_lossy(body),
            a.text()
        );
        assert_eq!(a.json()["error"]["code"], code, "{}", a.text());
        assert_eq!(a.header("content-type"), Some("application/json"));
    }
    let a = service.get("/api/scan?url=ftp%3A%2F%2Fa.example", &[]);
    assert_eq!(a.status, 400);
    assert_eq!(
        a.json()["error"]["message"],
        "invalid target \"ftp://a.example\": unsupported scheme \"ftp\"; use https:// or http://, or give the host without a scheme"
    );
    let a = service.get("/api/nothing", &[]);
    assert_eq!(
        (a.status, a.json()["error"]["code"].clone()),
        (404, Value::from("not_found"))
    );
    let a = service.request("DELETE", "/api/scan", &[], b"");
    assert_eq!(a.status, 405);
    assert_eq!(a.header("allow"), Some("GET"));
    // Credentials in a target are refused without being echoed.
    let a = service.request(
        "POST",
        "/api/queue",
        &form,
        b"url=https%3A%2F%2Fuser%3Apw%40a.example",
    );
    assert!(!a.text().contains("pw"), "{}", a.text());
    assert_eq!(fake.request_count(), 0);
    // Still serving.
    assert_eq!(service.get("/healthz", &[]).status, 200);
}

#[test]
fn a_slow_drip_client_does_not_hold_up_other_requests() {
    use std::io::Write;
    let service = started("service-drip", &[], &[]);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let drippers: Vec<_> = (0..4)
        .map(|_| {
            let (addr, stop) = (service.addr, stop.clone());
            std::thread::spawn(move || {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                let _ = c.write_all(b"GET /healthz HTTP/1.1\r\nX-Drip: ");
                // A header byte every 20 ms, until the others are done.
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    if c.write_all(b"x").is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        })
        .collect();
    for _ in 0..20 {
        let started = Instant::now();
        let a = service.get("/healthz", &[]);
        assert_eq!(a.status, 200);
        // Far below the 10 s head deadline the drippers could hold a worker for.
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for d in drippers {
        d.join().unwrap();
    }
}

#[test]
fn sigterm_finishes_the_request_in_flight_and_exits_0() {
    // Every answer 50 ms late: the scan is in flight for a while.
    let fake = FakeInstance::start(healthy("8.1.0").delay(Duration::from_millis(50)));
    let mut service = started("service-sigterm", &[], &[]);
    let (addr, path) = (service.addr, scan_path(&fake.host_port()));
    let in_flight = std::thread::spawn(move || request(addr, "GET", &path, &[], b""));
    let until = Instant::now() + PROMPT;
    while fake.request_count() == 0 {
        assert!(Instant::now() < until, "the scan did not start");
        std::thread::sleep(Duration::from_millis(2));
    }
    service.terminate();
    let answer = in_flight.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["state"], "OK");
    assert_eq!(service.wait_exit(PROMPT), Some(0));
    let log = service.stderr_lines();
    assert!(
        log.iter().any(|l| l.starts_with("GET /api/scan 200 ")),
        "{log:?}"
    );
    assert_eq!(
        log.last().map(String::as_str),
        Some("check-storage-scanner: stopped"),
        "{log:?}"
    );
}

#[test]
fn scans_share_what_they_learn_so_the_release_feed_is_asked_once_per_window() {
    let first = FakeInstance::start(healthy("8.1.0"));
    let second = FakeInstance::start(healthy("8.1.0"));
    let feed = crate::support::FeedServer::github_releases(&["v8.1.0", "v7.2.4"]);
    let url = feed.url("/releases");
    // No usable state directory: the feed cache cannot answer, only the service's memory.
    let service = started(
        "service-memory",
        &[
            "--update-source",
            "feed",
            "--state-dir",
            "/proc/no-such-state-dir",
        ],
        &[("COS_RELEASES_URL", url.as_str())],
    );
    for fake in [&first, &second] {
        let answer = service.get(&scan_path(&fake.host_port()), &[]);
        assert_eq!(answer.status, 200, "{}", answer.text());
        assert_eq!(
            answer.json()["update"]["source"],
            "feed",
            "{}",
            answer.text()
        );
    }
    assert_eq!(feed.requests().len(), 1, "{:?}", feed.requests());
}

/// Issue 31, item 3: a web page an operator opens cannot drive the local scan service. What a
/// browser marks as another site's request (`Origin: null` from a sandboxed frame's form, a
/// foreign `Origin`, `Sec-Fetch-Site: cross-site` or `same-site` from an `<img src>`) is
/// refused with 403 on every route that starts work, and nothing is scanned; a program's
/// request (no such header) and the operator's own navigation (`Sec-Fetch-Site: none`) work;
/// a route that changes state never runs on GET.
#[test]
fn another_sites_page_cannot_make_the_service_scan() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let service = started("service-cross-site", &[], &[]);
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    let body = format!("url={}", form_encode(&fake.host_port()));
    for (path, marks) in [
        ("/api/queue", &[("Origin", "null")][..]),
        ("/api/queue", &[("Origin", "https://evil.example")][..]),
        ("/api/queue", &[("Sec-Fetch-Site", "cross-site")][..]),
        ("/api/requeue", &[("Origin", "null")][..]),
        ("/api/requeue", &[("Sec-Fetch-Site", "same-site")][..]),
    ] {
        let mut headers = vec![form];
        headers.extend_from_slice(marks);
        let a = service.request("POST", path, &headers, body.as_bytes());
        assert_eq!(a.status, 403, "{path} {marks:?}: {}", a.text());
        assert_eq!(a.json()["error"]["code"], "forbidden_origin", "{path}");
    }
    for site in ["cross-site", "same-site"] {
        let a = service.get(&scan_path(&fake.host_port()), &[("Sec-Fetch-Site", site)]);
        assert_eq!(a.status, 403, "{site}: {}", a.text());
    }
    let a = service.get(&scan_path(&fake.host_port()), &[("Origin", "null")]);
    assert_eq!(a.status, 403, "{}", a.text());
    assert_eq!(
        fake.request_count(),
        0,
        "another site's page scanned nothing"
    );

    // A state-changing route never runs on GET.
    for path in ["/api/queue", "/api/requeue"] {
        let a = service.get(
            &format!("{path}?url={}", form_encode(&fake.host_port())),
            &[],
        );
        assert_eq!(a.status, 405, "{path}: {}", a.text());
    }
    assert_eq!(fake.request_count(), 0);

    // The operator's own navigation and a program still scan.
    let a = service.get(&scan_path(&fake.host_port()), &[("Sec-Fetch-Site", "none")]);
    assert_eq!(a.status, 200, "{}", a.text());
    let a = service.request("POST", "/api/queue", &[form], body.as_bytes());
    assert_eq!(a.status, 202, "{}", a.text());
}
