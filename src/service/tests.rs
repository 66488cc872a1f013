//! Unit tests of `service`.

use super::*;
use std::sync::Barrier;

fn request(
    method: &str,
    path: &str,
    query: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Request {
    Request {
        query: http::parse_form(query.as_bytes()),
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
            .collect(),
        body: body.to_vec(),
        ..Request::local(method, path)
    }
}

fn body(r: &Response) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

fn header<'a>(r: &'a Response, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A service whose scans count themselves and wait at `gate` (when given) before ending.
fn service(
    token: Option<&str>,
    cache_ttl: u64,
    gate: Option<Arc<Barrier>>,
) -> (Service, Arc<AtomicUsize>) {
    let scans = Arc::new(AtomicUsize::new(0));
    let counted = scans.clone();
    let scan: Arc<ScanFn> = Arc::new(move |target: &Target| {
        let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(gate) = &gate {
            gate.wait();
        }
        if target.host_str() == "fails.example" {
            return Err("an operator mistake".into());
        }
        Ok(Scanned {
            document: format!("{{\"host\":\"{}\",\"scan\":{n}}}\n", target.display_name())
                .into_bytes(),
            cacheable: target.host_str() != "down.example",
        })
    });
    let config = Config {
        token: token.map(String::from),
        cache_ttl: Duration::from_secs(cache_ttl),
        scan_workers: 2,
        wait_limit: Duration::from_secs(10),
    };
    (Service::start(config, scan), scans)
}

#[test]
fn a_token_guards_every_api_route_and_not_healthz() {
    let token = "0123456789abcdef0123456789abcdef";
    let (s, _) = service(Some(token), 900, None);
    for (method, path) in [
        ("POST", "/api/queue"),
        ("GET", "/api/result/x"),
        ("POST", "/api/requeue"),
        ("GET", "/api/scan"),
        ("GET", "/api/nothing"),
        ("GET", "/api"),
    ] {
        let r = s.handle(&request(method, path, "url=a.example", &[], b""));
        assert_eq!(r.status, 401, "{method} {path}");
        assert_eq!(
            header(&r, "WWW-Authenticate"),
            Some("Bearer realm=\"check-storage-scanner\"")
        );
        assert_eq!(body(&r)["error"]["code"], "unauthorized");
        let wrong = format!("Bearer {}", &token[1..]);
        let r = s.handle(&request(
            method,
            path,
            "",
            &[("Authorization", &wrong)],
            b"",
        ));
        assert_eq!(r.status, 401);
        assert!(
            header(&r, "WWW-Authenticate")
                .unwrap()
                .contains("invalid_token")
        );
    }
    let r = s.handle(&request("GET", "/healthz", "", &[], b""));
    assert_eq!((r.status, body(&r)), (200, json!({"status": "ok"})));
    let bearer = format!("Bearer {token}");
    let r = s.handle(&request(
        "GET",
        "/api/scan",
        "url=a.example",
        &[("Authorization", &bearer)],
        b"",
    ));
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
}

#[test]
fn requests_for_one_host_in_flight_share_one_scan() {
    // Ten requests join the scan before it ends: the gate holds it until all have joined.
    let gate = Arc::new(Barrier::new(2));
    let (s, scans) = service(None, 0, Some(gate.clone()));
    let s = Arc::new(s);
    let waiters: Vec<_> = (0..10)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                s.handle(&request(
                    "GET",
                    "/api/scan",
                    "url=Cloud.example:9200",
                    &[],
                    b"",
                ))
            })
        })
        .collect();
    // Every waiter has joined once the one job has ten holders besides the host entry.
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let holders = lock(&s.shared.state)
            .hosts
            .get("cloud.example:9200")
            .and_then(|h| h.in_flight.clone())
            .map(|j| Arc::strong_count(&j));
        // The entry, this clone, the worker's and ten waiters' copies.
        if holders.is_some_and(|n| n >= 13) || Instant::now() > until {
            break;
        }
        std::thread::yield_now();
    }
    gate.wait();
    let answers: Vec<Response> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(scans.load(Ordering::SeqCst), 1);
    assert!(
        answers
            .iter()
            .all(|a| a.status == 200 && body(a)["scan"] == 1)
    );
}

#[test]
fn results_are_cached_until_requeued_and_failures_are_not() {
    let (s, scans) = service(None, 900, None);
    let get = |url: &str| {
        body(&s.handle(&request(
            "GET",
            "/api/scan",
            &format!("url={url}"),
            &[],
            b"",
        )))
    };
    assert_eq!(get("a.example")["scan"], 1);
    assert_eq!(get("https://A.example/")["scan"], 1, "same key: cached");
    assert_eq!(
        get("a.example:443")["scan"],
        2,
        "a written port is another scan"
    );
    let r = s.handle(&request(
        "POST",
        "/api/requeue",
        "",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"url=a.example",
    ));
    assert_eq!(r.status, 202);
    let uuid = body(&r)["uuid"].as_str().unwrap().to_string();
    let path = format!("/api/result/{uuid}");
    let until = Instant::now() + Duration::from_secs(10);
    let doc = loop {
        let r = s.handle(&request("GET", &path, "", &[], b""));
        let b = body(&r);
        if b.get("status").is_none() || Instant::now() > until {
            break b;
        }
        assert!(b["status"] == "queued" || b["status"] == "running", "{b}");
        std::thread::yield_now();
    };
    assert_eq!(doc["scan"], 3);
    assert_eq!(get("a.example")["scan"], 3, "the requeued result is cached");
    assert_eq!(get("down.example")["scan"], 4);
    assert_eq!(
        get("down.example")["scan"],
        5,
        "a failed scan is not cached"
    );
    let r = s.handle(&request("GET", "/api/scan", "url=fails.example", &[], b""));
    assert_eq!(
        (r.status, body(&r)["error"]["code"].clone()),
        (500, json!("scan_failed"))
    );
    assert_eq!(scans.load(Ordering::SeqCst), 6);
}

#[test]
fn bad_requests_get_json_errors() {
    let (s, scans) = service(None, 900, None);
    let json_type = [("Content-Type", "application/json")];
    let form_type = [("Content-Type", "application/x-www-form-urlencoded")];
    for (method, path, query, headers, body_bytes, status, code) in [
        (
            "GET",
            "/api/scan",
            "",
            &[][..],
            &b""[..],
            400,
            "missing_url",
        ),
        ("GET", "/api/scan", "url=a%20b", &[], b"", 400, "bad_target"),
        (
            "GET",
            "/api/scan",
            "url=ftp://a",
            &[],
            b"",
            400,
            "bad_target",
        ),
        (
            "GET",
            "/api/scan",
            "url=a.example&x=1",
            &[],
            b"",
            400,
            "unknown_parameter",
        ),
        (
            "GET",
            "/api/scan",
            "url=a.example&url=b.example",
            &[],
            b"",
            400,
            "ambiguous_url",
        ),
        (
            "GET",
            "/api/scan",
            "url=[fe80::1%25eth0]",
            &[],
            b"",
            400,
            "bad_target",
        ),
        (
            "POST",
            "/api/queue",
            "",
            &json_type[..],
            b"{\"url\":",
            400,
            "bad_json",
        ),
        (
            "POST",
            "/api/queue",
            "",
            &json_type[..],
            b"[\"a.example\"]",
            400,
            "bad_json",
        ),
        (
            "POST",
            "/api/queue",
            "",
            &json_type[..],
            b"{\"url\": 7}",
            400,
            "bad_json",
        ),
        (
            "POST",
            "/api/queue",
            "",
            &json_type[..],
            b"{\"uri\": \"a.example\"}",
            400,
            "unknown_parameter",
        ),
        (
            "POST",
            "/api/queue",
            "",
            &form_type[..],
            b"url=\xff",
            400,
            "bad_form",
        ),
        (
            "POST",
            "/api/queue",
            "",
            &form_type[..],
            b"host=a.example",
            400,
            "unknown_parameter",
        ),
        (
            "POST",
            "/api/queue",
            "",
            &[("Content-Type", "text/plain")][..],
            b"a.example",
            415,
            "unsupported_media_type",
        ),
        ("GET", "/api/queue", "", &[], b"", 405, "method_not_allowed"),
        (
            "DELETE",
            "/api/result/x",
            "",
            &[],
            b"",
            405,
            "method_not_allowed",
        ),
        ("GET", "/api/result/x", "", &[], b"", 404, "unknown_uuid"),
        ("GET", "/api/result/", "", &[], b"", 404, "not_found"),
        ("GET", "/", "", &[], b"", 404, "not_found"),
    ] {
        let r = s.handle(&request(method, path, query, headers, body_bytes));
        assert_eq!(
            r.status,
            status,
            "{method} {path}?{query} {}",
            String::from_utf8_lossy(body_bytes)
        );
        assert_eq!(body(&r)["error"]["code"], code, "{method} {path}?{query}");
    }
    assert_eq!(scans.load(Ordering::SeqCst), 0);
    // The three ways to name the target of a POST.
    for (query, headers, body_bytes) in [
        ("url=a.example", &[][..], &b""[..]),
        ("", &form_type[..], b"url=a.example"),
        ("", &json_type[..], b"{\"url\": \"a.example\"}"),
        ("", &[][..], b"url=a.example"),
    ] {
        let r = s.handle(&request("POST", "/api/queue", query, headers, body_bytes));
        assert_eq!(r.status, 202);
        let uuid = body(&r)["uuid"].as_str().unwrap().to_string();
        assert_eq!(
            header(&r, "Location"),
            Some(format!("/api/result/{uuid}").as_str())
        );
    }
}

#[test]
fn uuids_are_random_version_4() {
    let a = new_uuid().unwrap();
    let b = new_uuid().unwrap();
    assert_ne!(a, b);
    assert_eq!(a.len(), 36);
    assert_eq!(&a[14..15], "4");
    assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    assert!(a.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));
}

#[test]
fn records_and_cached_hosts_stay_within_their_caps() {
    let (s, _) = service(None, 900, None);
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let mut uuids = Vec::new();
    let mut i = 0;
    while uuids.len() < MAX_RECORDS + 5 {
        let host = format!("url=h{}.example", i % (MAX_CACHED_HOSTS + 50));
        let r = s.handle(&request("POST", "/api/queue", "", &form, host.as_bytes()));
        if r.status == 503 {
            // The two workers are behind: let them drain the queue.
            std::thread::yield_now();
            continue;
        }
        assert_eq!(r.status, 202);
        uuids.push(body(&r)["uuid"].as_str().unwrap().to_string());
        i += 1;
    }
    let last = format!("/api/result/{}", uuids[uuids.len() - 1]);
    let first = format!("/api/result/{}", uuids[0]);
    assert_eq!(
        s.handle(&request("GET", &first, "", &[], b"")).status,
        404,
        "dropped"
    );
    assert_eq!(s.handle(&request("GET", &last, "", &[], b"")).status, 200);
    let until = Instant::now() + Duration::from_secs(30);
    while lock(&s.shared.state)
        .hosts
        .values()
        .any(|h| h.in_flight.is_some())
        && Instant::now() < until
    {
        std::thread::yield_now();
    }
    let state = lock(&s.shared.state);
    assert_eq!(state.records.len(), MAX_RECORDS);
    assert_eq!(state.order.len(), MAX_RECORDS);
    let cached = state.hosts.values().filter(|h| h.cached.is_some()).count();
    assert_eq!(cached, MAX_CACHED_HOSTS);
}

#[test]
fn records_and_cached_results_expire() {
    let (s, _) = service(None, 900, None);
    let r = s.handle(&request("POST", "/api/queue", "url=a.example", &[], b""));
    let uuid = body(&r)["uuid"].as_str().unwrap().to_string();
    let path = format!("/api/result/{uuid}");
    let r = s.handle(&request("GET", "/api/scan", "url=a.example", &[], b""));
    assert_eq!(r.status, 200);
    assert!(s.shared.kept.load(Ordering::Relaxed) > 0);
    // The clock is an argument of the sweep: a quarter of an hour and a second later.
    let later = Instant::now() + Duration::from_secs(901);
    s.shared.sweep(&mut lock(&s.shared.state), later);
    assert_eq!(s.handle(&request("GET", &path, "", &[], b"")).status, 404);
    assert!(lock(&s.shared.state).hosts.is_empty());
    assert_eq!(
        s.shared.kept.load(Ordering::Relaxed),
        0,
        "every document dropped"
    );
}
