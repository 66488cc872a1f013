//! The API's handlers against a real SQLite store and a clock the tests move: every limit of
//! the spec, the client address behind a trusted proxy, the 404 of expired and unknown scans,
//! erasure, and a worker's result (through `worker::Pool::run`, as the workers run it).

use super::api::{Api, ApiConfig};
use super::limits;
use super::lookups::{TargetCheck, TargetRefusal};
use super::store::sqlite::SqliteStore;
use super::store::{Status, Store};
use super::worker::Completed;
use super::worker::{Pool, RecordScan, Wakeup};
use crate::clock::Clock;
use crate::report::ScanResult;
use crate::server::http::{Request, Response};
use serde_json::{Value, json};

/// The result document a fake scan completes with.
fn scan_result(document: Value) -> ScanResult {
    crate::report::read_document(document.to_string().as_bytes()).unwrap()
}
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

const T0: i64 = 1_795_600_000;

/// A clock the test moves, in milliseconds.
struct ManualClock(AtomicI64);

impl Clock for ManualClock {
    fn now(&self) -> i64 {
        self.now_millis().div_euclid(1000)
    }

    fn now_millis(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

struct Rig {
    api: Api,
    clock: Arc<ManualClock>,
    store: Arc<dyn Store>,
    _dir: TempDir,
}

/// A directory removed when the test ends.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn rig(name: &str, trusted: &[(&str, u8)]) -> Rig {
    // The guard is tested on its own (net::guard, web::lookups, tests/guard.rs); here every
    // target passes.
    rig_checking(name, trusted, Arc::new(|_| Ok(Vec::new())))
}

/// A rig whose address guard is `check`.
fn rig_checking(name: &str, trusted: &[(&str, u8)], check: Arc<TargetCheck>) -> Rig {
    let dir = std::env::temp_dir().join(format!(
        "web-api-{name}-{}-{}",
        std::process::id(),
        crate::server::new_uuid().unwrap()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.join("web.sqlite")).unwrap());
    let clock = Arc::new(ManualClock(AtomicI64::new(T0 * 1000)));
    let api = Api {
        store: store.clone(),
        clock: clock.clone(),
        config: ApiConfig {
            base_url: "https://scan.example.com".into(),
            record_ttl_secs: 7 * 24 * 3600,
            scan_wait: std::time::Duration::from_secs(90),
            mcp: true,
            target_port: None,
            mcp_token: None,
            store_timeout: super::store::DEFAULT_TIMEOUT,
            trusted_proxies: trusted
                .iter()
                .map(|(ip, len)| (ip.parse().unwrap(), *len))
                .collect(),
        },
        check_target: check,
        wakeup: Arc::new(Wakeup::default()),
        waits: crate::server::occupancy::Occupancy::new(
            super::server::WAITING_CALLS_PER_CLIENT,
            Some(super::server::WAITING_CALLS),
        ),
        mcp_sessions: Default::default(),
    };
    Rig {
        api,
        clock,
        store,
        _dir: TempDir(dir),
    }
}

impl Rig {
    fn advance(&self, secs: i64) {
        self.advance_ms(secs * 1000);
    }

    fn advance_ms(&self, ms: i64) {
        self.clock.0.fetch_add(ms, Ordering::SeqCst);
    }

    fn request(
        &self,
        method: &str,
        path: &str,
        body: &str,
        peer: &str,
        xff: Option<&str>,
    ) -> Response {
        let request = Request {
            method: method.into(),
            path: path.into(),
            query: Vec::new(),
            headers: std::iter::once(("content-type".to_string(), "application/json".to_string()))
                .chain(xff.map(|v| ("x-forwarded-for".to_string(), v.to_string())))
                .collect(),
            body: body.as_bytes().to_vec(),
            peer: SocketAddr::new(peer.parse::<IpAddr>().unwrap(), 40000),
        };
        self.api.handle(&request)
    }

    fn submit(&self, target: &str, peer: &str) -> Response {
        self.request(
            "POST",
            "/api/scans",
            &json!({ "target_url": target }).to_string(),
            peer,
            None,
        )
    }

    /// The workers' pool on this rig's store and clock, scanning with `scan` (a 120 s lease).
    fn pool(&self, scan: Arc<RecordScan>) -> Pool {
        Pool {
            store: self.store.clone(),
            clock: self.clock.clone(),
            scan,
            wakeup: Arc::new(Wakeup::default()),
            lease_secs: 120,
            node: "test".into(),
        }
    }

    fn get(&self, path: &str) -> Response {
        self.request("GET", path, "", "192.0.2.1", None)
    }

    /// A request from `peer` with exactly `headers`.
    fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
        peer: &str,
    ) -> Response {
        let request = Request {
            method: method.into(),
            path: path.into(),
            query: Vec::new(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
                .collect(),
            body: body.to_vec(),
            peer: SocketAddr::new(peer.parse::<IpAddr>().unwrap(), 40000),
        };
        self.api.handle(&request)
    }

    /// The page form's submission of `target` from `peer`.
    fn submit_form(&self, target: &str, peer: &str) -> Response {
        let body = format!("target_url={}", target.replace(':', "%3A"));
        self.send(
            "POST",
            "/scans",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            body.as_bytes(),
            peer,
        )
    }

    /// An MCP session of `peer`.
    fn mcp_session(&self, peer: &str) -> String {
        let answer = self.mcp(
            None,
            peer,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}}),
        );
        assert_eq!(answer.status, 200, "{:?}", body(&answer));
        header(&answer, "Mcp-Session-Id").unwrap().to_string()
    }

    /// One JSON-RPC message to `/mcp` from `peer`.
    fn mcp(&self, session: Option<&str>, peer: &str, message: Value) -> Response {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(session) = session {
            headers.push(("Mcp-Session-Id", session));
        }
        self.send(
            "POST",
            "/mcp",
            &headers,
            message.to_string().as_bytes(),
            peer,
        )
    }

    /// The result of the MCP tool `tool` called with `arguments` in `session` from `peer`.
    fn call_tool(&self, session: &str, peer: &str, tool: &str, arguments: Value) -> Value {
        let answer = self.mcp(
            Some(session),
            peer,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}),
        );
        assert_eq!(answer.status, 200, "{:?}", body(&answer));
        body(&answer)["result"].clone()
    }
}

fn body(response: &Response) -> Value {
    serde_json::from_slice(&response.body).unwrap()
}

fn header<'a>(response: &'a Response, name: &str) -> Option<&'a str> {
    response
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn assert_limited(response: &Response, code: &str, retry_after: i64) {
    assert_eq!(
        response.status,
        429,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    assert_eq!(body(response)["error"]["code"], code);
    assert_eq!(
        header(response, "Retry-After"),
        Some(retry_after.to_string().as_str())
    );
}

/// Fifty scans from 198.51.100.0/24, its day's cap: five addresses of it, each under its
/// per-minute limit, for targets `host0` to `host49.example.com`.
fn fill_network_day(rig: &Rig) {
    for n in 0..50 {
        if n % 10 == 0 {
            rig.advance(60);
        }
        let peer = format!("198.51.100.{}", n % 5 + 1);
        let answer = rig.submit(&format!("host{n}.example.com"), &peer);
        assert_eq!(answer.status, 202, "submission {n}");
    }
}

#[test]
fn a_submission_is_queued_with_its_uuid_links_and_location() {
    let rig = rig("submit", &[]);
    let answer = rig.submit("cloud.example.com", "198.51.100.7");
    assert_eq!(answer.status, 202);
    let value = body(&answer);
    let uuid = value["uuid"].as_str().unwrap();
    assert_eq!(value["status"], "queued");
    let own = format!("https://scan.example.com/api/scans/{uuid}");
    assert_eq!(header(&answer, "Location"), Some(own.as_str()));
    assert_eq!(value["links"]["self"], own);
    assert_eq!(
        value["links"]["exports"]["csv"],
        format!("{own}/export/csv")
    );
    // No preferred export was named; with one, `export` links it.
    assert!(value["links"].get("export").is_none());
    let preferring = rig.request(
        "POST",
        "/api/scans",
        r#"{"target_url": "pdf.example.com", "format": "pdf"}"#,
        "198.51.100.7",
        None,
    );
    let uuid_pdf = body(&preferring)["uuid"].as_str().unwrap().to_string();
    assert_eq!(
        body(&preferring)["links"]["export"],
        format!("https://scan.example.com/api/scans/{uuid_pdf}/export/pdf")
    );
    // Version 4, random.
    assert_eq!(&uuid[14..15], "4");
    let polled = rig.get(&format!("/api/scans/{uuid}"));
    assert_eq!(polled.status, 200);
    assert_eq!(body(&polled)["status"], "queued");
    // An export before completion is refused, and says when to come back.
    let early = rig.get(&format!("/api/scans/{uuid}/export/json"));
    assert_eq!(early.status, 409);
    assert_eq!(header(&early, "Retry-After"), Some("2"));
}

#[test]
fn ten_submissions_a_minute_from_one_address() {
    let rig = rig("address", &[]);
    for n in 0..10 {
        let answer = rig.submit(&format!("host{n}.example.com"), "198.51.100.7");
        assert_eq!(answer.status, 202, "submission {n}");
    }
    rig.advance(15);
    let refused = rig.submit("host10.example.com", "198.51.100.7");
    // A minute after the first ten, not at the next clock minute.
    assert_limited(&refused, "rate_limited", 45);
    // Another address is not limited by it.
    assert_eq!(rig.submit("host11.example.com", "198.51.100.8").status, 202);
    rig.advance(44);
    assert_eq!(rig.submit("host12.example.com", "198.51.100.7").status, 429);
    rig.advance(1);
    assert_eq!(rig.submit("host12.example.com", "198.51.100.7").status, 202);
}

/// Cheap refusals first (issue 21, item 3): the address's rate is counted on each attempt
/// before the guard resolves anything, so a flood of names that do not resolve from one
/// address is refused 429 after its tenth without a lookup, through the JSON API, the form
/// and MCP alike; the guard's refusals spend no target's cooldown and no network's day.
#[test]
fn a_flood_of_unresolvable_names_is_refused_before_any_lookup() {
    let looked_up = Arc::new(AtomicI64::new(0));
    let counted = looked_up.clone();
    let check: Arc<TargetCheck> = Arc::new(move |target| {
        counted.fetch_add(1, Ordering::SeqCst);
        Err(TargetRefusal::Refused(format!(
            "cannot resolve {}: timed out after 2s",
            target.host_str()
        )))
    });
    let rig = rig_checking("cheap-refusals", &[], check);
    let mut statuses = Vec::new();
    for n in 0..30 {
        let answer = rig.submit(&format!("nx{n}.invalid"), "198.51.100.7");
        if answer.status == 429 {
            assert_limited(&answer, "rate_limited", 60);
        } else {
            assert_eq!(body(&answer)["error"]["code"], "target_refused");
        }
        statuses.push(answer.status);
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 400).count(),
        10,
        "{statuses:?}"
    );
    assert_eq!(looked_up.load(Ordering::SeqCst), 10, "lookups made");
    // The form and MCP count on the same attempts, before any lookup too.
    let form = rig.submit_form("nx-form.invalid", "198.51.100.7");
    assert_eq!(form.status, 429);
    assert!(header(&form, "Retry-After").is_some());
    let session = rig.mcp_session("198.51.100.7");
    let tool = rig.call_tool(
        &session,
        "198.51.100.7",
        "scan_instance",
        json!({"target_url": "nx-mcp.invalid"}),
    );
    assert_eq!(tool["isError"], true, "{tool}");
    let text = tool["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("429 rate_limited"), "{text}");
    assert_eq!(looked_up.load(Ordering::SeqCst), 10, "lookups made");
    // Another address of the same network is a client of its own, and the network's day
    // was not spent by the refused targets: it still has room for all 50.
    for n in 0..10 {
        assert_eq!(
            rig.submit(&format!("other{n}.invalid"), "198.51.100.8")
                .status,
            400
        );
    }
    assert_eq!(looked_up.load(Ordering::SeqCst), 20, "lookups made");
    assert_eq!(
        rig.store
            .full_limits(
                "network:",
                limits::NETWORK_SCANS_PER_DAY,
                86_400_000,
                rig.clock.now_millis()
            )
            .unwrap(),
        []
    );
    assert_eq!(
        rig.store
            .full_limits("target:", 1, 300_000, rig.clock.now_millis())
            .unwrap(),
        []
    );
}

/// The address's own minute is spent on its attempt even when the scan is then refused by
/// its network's day: the day and the target's cooldown are still all or nothing (a refused
/// network spends no victim's cooldown), but an address cannot retry without limit.
#[test]
fn an_attempt_spends_its_address_minute_whatever_refuses_it_later() {
    let rig = rig("attempt-spent", &[]);
    fill_network_day(&rig);
    rig.advance(60);
    for _ in 0..10 {
        let refused = rig.submit("victim.example.com", "198.51.100.77");
        assert_eq!(body(&refused)["error"]["code"], "network_daily_limit");
    }
    assert_limited(
        &rig.submit("victim.example.com", "198.51.100.77"),
        "rate_limited",
        60,
    );
    // The victim's cooldown was never spent.
    assert_eq!(rig.submit("victim.example.com", "203.0.113.9").status, 202);
}

/// A busy resolver is a 503 with Retry-After, not a wait.
#[test]
fn a_busy_resolver_is_a_503_with_retry_after() {
    let rig = rig_checking("busy", &[], Arc::new(|_| Err(TargetRefusal::Busy)));
    let answer = rig.submit("cloud.example.com", "198.51.100.7");
    assert_eq!(answer.status, 503);
    assert_eq!(body(&answer)["error"]["code"], "resolver_busy");
    assert_eq!(header(&answer, "Retry-After"), Some("2"));
}

/// Asking for an MCP session is limited like submitting: ten a minute from one address (an
/// IPv6 /64), rolling, with `Retry-After`; another address is not limited by it, and a
/// session refused costs the caller nothing else.
#[test]
fn ten_mcp_sessions_a_minute_from_one_address() {
    let rig = rig("mcp-sessions", &[]);
    let initialize = |peer: &str| {
        mcp_message(
            &rig,
            peer,
            None,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}}),
        )
    };
    for n in 0..10 {
        let answer = initialize("198.51.100.7");
        assert_eq!(answer.status, 200, "session {n}: {:?}", body(&answer));
    }
    rig.advance(20);
    let refused = initialize("198.51.100.7");
    assert_eq!(refused.status, 429, "{:?}", body(&refused));
    assert_eq!(header(&refused, "Retry-After"), Some("40"));
    // The same /64 is the same client; another address is not.
    for n in 0..10 {
        let peer = format!("2001:db8:1:2::{n:x}");
        assert_eq!(initialize(&peer).status, 200, "{peer}");
    }
    assert_eq!(initialize("2001:db8:1:2::ff").status, 429);
    assert_eq!(initialize("198.51.100.8").status, 200);
    rig.advance(40);
    assert_eq!(initialize("198.51.100.7").status, 200);
}

/// The issue's reproduction: eleven submissions from one address in 4 s across a minute
/// edge, and one target scanned at 17:34:59.4 and again at 17:35:00.3. Rolling limits refuse
/// both, and say exactly when to come back (rounded up to the second).
#[test]
fn limits_roll_across_clock_edges() {
    let rig = rig("rolling", &[]);
    // To 17:34:57.0 (T0 is 09:46:40).
    rig.advance(7 * 3600 + 48 * 60 + 17);
    for n in 0..10 {
        let answer = rig.submit(&format!("burst{n}.example.com"), "198.51.100.7");
        assert_eq!(answer.status, 202, "submission {n}");
        rig.advance_ms(300);
    }
    // 17:35:00.0 has passed; 17:35:01.0 is 4 s after the first.
    rig.advance_ms(1000);
    let eleventh = rig.submit("burst10.example.com", "198.51.100.7");
    assert_limited(&eleventh, "rate_limited", 56);

    // A target scanned at 17:34:59.4 from one address...
    let rig = self::rig("rolling-target", &[]);
    rig.advance(7 * 3600 + 48 * 60 + 19);
    rig.advance_ms(400);
    assert_eq!(rig.submit("cloud.example.com", "198.51.100.7").status, 202);
    // ...and at 17:35:00.3 from another network: 0.9 s later, not in another window.
    rig.advance_ms(900);
    let again = rig.submit("cloud.example.com", "203.0.113.9");
    assert_limited(&again, "target_cooldown", 300);
    // 299.1 s to wait: at 299 s still refused, at 299.1 s admitted.
    rig.advance(299);
    assert_eq!(rig.submit("cloud.example.com", "203.0.113.9").status, 429);
    rig.advance_ms(100);
    assert_eq!(rig.submit("cloud.example.com", "203.0.113.9").status, 202);
}

/// A network at its daily cap is refused without spending the target's cooldown or its
/// address's rate: it cannot lock someone else's target.
#[test]
fn a_refusal_spends_no_limit() {
    let rig = rig("all-or-nothing", &[]);
    fill_network_day(&rig);
    rig.advance(60);
    for _ in 0..3 {
        let refused = rig.submit("victim.example.com", "198.51.100.77");
        assert_eq!(body(&refused)["error"]["code"], "network_daily_limit");
    }
    // The victim's target was never spent: another network scans it now.
    assert_eq!(rig.submit("victim.example.com", "203.0.113.9").status, 202);
    // Refused by the cooldown and the day now, the capped network is told the longer wait:
    // the day, which has room when its first scan (5 minutes ago) leaves it.
    let refused = rig.submit("victim.example.com", "198.51.100.77");
    assert_limited(&refused, "network_daily_limit", 24 * 3600 - 5 * 60);
}

#[test]
fn one_scan_per_target_per_five_minutes_whoever_asks() {
    let rig = rig("target", &[]);
    assert_eq!(rig.submit("cloud.example.com", "198.51.100.7").status, 202);
    // The same target written differently is the same target.
    let refused = rig.submit("https://CLOUD.example.com/", "203.0.113.9");
    assert_eq!(refused.status, 429);
    assert_eq!(body(&refused)["error"]["code"], "target_cooldown");
    let retry: i64 = header(&refused, "Retry-After").unwrap().parse().unwrap();
    assert!((1..=300).contains(&retry), "{retry}");
    // Another port is another instance.
    assert_eq!(
        rig.submit("cloud.example.com:8443", "203.0.113.9").status,
        202
    );
    rig.advance(retry);
    assert_eq!(rig.submit("cloud.example.com", "203.0.113.9").status, 202);
}

/// One instance, one cooldown (issue 21, item 5): the issue's spellings of one instance, each
/// submitted from a network of its own inside the first one's five minutes, are refused; the
/// cooldown is kept by name with the ports the scan connects to and by the addresses the
/// guard resolved, so `127.0.0.1` and `localhost`, or two names of one address, share it.
#[test]
fn every_spelling_of_one_instance_meets_its_cooldown() {
    let check: Arc<TargetCheck> = Arc::new(|target| {
        let host = target.host_str();
        Ok(match host.as_str() {
            "vm" | "alias.example" => vec!["192.0.2.10".parse().unwrap()],
            "localhost" => vec!["127.0.0.1".parse().unwrap(), "::1".parse().unwrap()],
            literal => vec![literal.parse().unwrap()],
        })
    });
    let rig = rig_checking("one-instance", &[], check);
    let mut network = 0;
    let mut submit = |target: &str| {
        network += 1;
        rig.submit(target, &format!("198.51.{network}.7"))
    };
    let assert_cooling = |refused: Response, spelling: &str| {
        assert_eq!(refused.status, 429, "{spelling}");
        assert_eq!(
            body(&refused)["error"]["code"],
            "target_cooldown",
            "{spelling}"
        );
    };
    let first = submit("vm");
    assert_eq!(first.status, 202);
    // The record keeps the addresses its cooldown was spent on: its scan connects to those.
    let uuid = body(&first)["uuid"].as_str().unwrap().to_string();
    let record = rig.store.get(&uuid, rig.clock.now()).unwrap().unwrap();
    assert_eq!(record.addresses, ["192.0.2.10".parse::<IpAddr>().unwrap()]);
    for spelling in [
        "vm:443",
        "VM.",
        "https://vm",
        "http://vm",
        "http://vm:80",
        "https://vm/x",
        "https://vm/%2e",
        "https://vm/./",
        "alias.example",
        "192.0.2.10",
        "https://192.0.2.10:443/",
        "[::ffff:192.0.2.10]",
        // The IPv6 forms that carry it (issue 31, item 5): NAT64 (what a DNS64 network
        // answers), IPv4-compatible, IPv4-translated, 6to4 and Teredo.
        "[64:ff9b::c000:20a]",
        "[::c000:20a]",
        "[::ffff:0:c000:20a]",
        "[2002:c000:20a::1]",
        "[2001:0:4136:e378:8000:63bf:3fff:fdf5]",
    ] {
        assert_cooling(submit(spelling), spelling);
    }
    // Another port is another instance.
    assert_eq!(submit("vm:8443").status, 202);
    assert_eq!(submit("127.0.0.1").status, 202);
    for spelling in [
        "localhost",
        "https://LOCALHOST/",
        "http://localhost:80",
        "[::ffff:127.0.0.1]:443",
    ] {
        assert_cooling(submit(spelling), spelling);
    }
    // The refused spellings spent nothing: five minutes after the first scans, all is free.
    rig.advance(300);
    assert_eq!(submit("localhost").status, 202);
    assert_eq!(submit("https://vm/x").status, 202);
    assert_eq!(submit("[::1]").status, 429, "localhost spent ::1 too");
}

/// MCP `scan_instances` scans an instance named twice once, by the same key as the cooldown:
/// `vm`, `vm:443` and `http://vm:80/x` are one instance, `vm:8443` another.
#[test]
fn scan_instances_scans_each_instance_once_however_written() {
    let mut rig = rig("mcp-same-instance", &[]);
    // No worker runs here: answer at once with the queued scans.
    rig.api.config.scan_wait = std::time::Duration::ZERO;
    let session = rig.mcp_session("198.51.100.7");
    let answer = rig.call_tool(
        &session,
        "198.51.100.7",
        "scan_instances",
        json!({"target_urls": ["vm", "vm:443", "http://vm:80/x", "vm:8443", "https://VM/./"]}),
    );
    assert_eq!(answer["isError"], false, "{answer}");
    let results = answer["structuredContent"]["results"].as_array().unwrap();
    let same_as: Vec<&Value> = results.iter().map(|r| &r["same_as"]).collect();
    assert_eq!(
        same_as,
        [&Value::Null, &json!(0), &json!(0), &Value::Null, &json!(0)],
        "{answer}"
    );
    assert_eq!(results[1]["uuid"], results[0]["uuid"]);
    assert_ne!(results[3]["uuid"], results[0]["uuid"]);
    for entry in results {
        assert_eq!(entry["status"], "queued", "{entry}");
        assert_eq!(
            entry["erase_key"].as_str().map(str::len),
            Some(64),
            "{entry}"
        );
    }
    assert_eq!(results[1]["erase_key"], results[0]["erase_key"]);
    assert_ne!(results[3]["erase_key"], results[0]["erase_key"]);
}

/// Through MCP too: scan_instance answers its erase key, and erase_instance_data erases with
/// it and with nothing else.
#[test]
fn mcp_erases_a_scan_with_its_erase_key_only() {
    let mut rig = rig("mcp-erase-key", &[]);
    rig.api.config.scan_wait = std::time::Duration::ZERO;
    let session = rig.mcp_session("198.51.100.7");
    let scanned = rig.call_tool(
        &session,
        "198.51.100.7",
        "scan_instance",
        json!({"target_url": "cloud.example.com"}),
    );
    assert_eq!(scanned["isError"], false, "{scanned}");
    let uuid = scanned["structuredContent"]["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let key = scanned["structuredContent"]["erase_key"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        scanned["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&key)
    );
    // get_scan_result never answers it.
    let polled = rig.call_tool(
        &session,
        "198.51.100.7",
        "get_scan_result",
        json!({"uuid": uuid}),
    );
    assert!(!polled.to_string().contains(&key), "{polled}");
    // No key is no call; another key is refused.
    let missing = rig.mcp(
        Some(&session),
        "198.51.100.7",
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "erase_instance_data", "arguments": {"uuid": uuid}}}),
    );
    assert_eq!(
        body(&missing)["error"]["code"],
        -32602,
        "{:?}",
        body(&missing)
    );
    let wrong = rig.call_tool(
        &session,
        "198.51.100.7",
        "erase_instance_data",
        json!({"uuid": uuid, "erase_key": "0".repeat(64)}),
    );
    assert_eq!(wrong["isError"], true, "{wrong}");
    assert!(
        wrong["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("403 erase_key_invalid"),
        "{wrong}"
    );
    assert_eq!(rig.get(&format!("/api/scans/{uuid}")).status, 200);
    let erased = rig.call_tool(
        &session,
        "198.51.100.7",
        "erase_instance_data",
        json!({"uuid": uuid, "erase_key": key}),
    );
    assert_eq!(
        erased["structuredContent"],
        json!({"erased": 1}),
        "{erased}"
    );
    assert_eq!(rig.get(&format!("/api/scans/{uuid}")).status, 404);
}

#[test]
fn fifty_scans_a_day_from_one_network() {
    let rig = rig("network", &[]);
    fill_network_day(&rig);
    rig.advance(60);
    let refused = rig.submit("host50.example.com", "198.51.100.200");
    assert_eq!(refused.status, 429);
    assert_eq!(body(&refused)["error"]["code"], "network_daily_limit");
    // The next /24 is another network.
    assert_eq!(rig.submit("host51.example.com", "198.51.101.1").status, 202);
    // IPv6: one /56.
    for n in 0..50 {
        if n % 10 == 0 {
            rig.advance(60);
        }
        let peer = format!("2001:db8:0:{:x}::1", n % 4);
        assert_eq!(
            rig.submit(&format!("v6-{n}.example.com"), &peer).status,
            202
        );
    }
    rig.advance(60);
    let v6 = rig.submit("v6-50.example.com", "2001:db8:0:ff::9");
    assert_eq!(body(&v6)["error"]["code"], "network_daily_limit");
    assert_eq!(
        rig.submit("v6-51.example.com", "2001:db8:0:100::1").status,
        202
    );
}

#[test]
fn a_network_whose_last_five_scans_found_nothing_is_paused_for_a_day() {
    let rig = rig("pause", &[]);
    let network = limits::network_key("198.51.100.7".parse().unwrap());
    for found in [true, false, false, false, false] {
        limits::record_outcome(&*rig.store, &network, found, rig.clock.now()).unwrap();
    }
    assert_eq!(rig.submit("a.example.com", "198.51.100.7").status, 202);
    limits::record_outcome(&*rig.store, &network, false, rig.clock.now()).unwrap();
    let paused = rig.submit("b.example.com", "198.51.100.99");
    assert_limited(&paused, "network_paused", limits::PAUSE_SECS);
    // The body says when the pause ends, not only the header.
    let ends = jiff::Timestamp::from_second(rig.clock.now() + limits::PAUSE_SECS).unwrap();
    let message = body(&paused)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains(&ends.to_string()), "{message}");
    // It ends by itself.
    rig.advance(limits::PAUSE_SECS - 1);
    assert_eq!(rig.submit("b.example.com", "198.51.100.99").status, 429);
    rig.advance(1);
    assert_eq!(rig.submit("b.example.com", "198.51.100.99").status, 202);
}

/// Every `X-Forwarded-For` line counts, read from the right past the trusted proxies: a
/// client that writes its own line first cannot take a fresh address from it (HAProxy adds the
/// real client's line last), and `ip:port` and `[v6]:port` entries name their address.
#[test]
fn every_forwarded_for_line_is_read_from_the_right() {
    let rig = rig("proxy-lines", &[("10.0.0.0", 8)]);
    let submit = |n: usize, lines: &[&str]| {
        let request = Request {
            method: "POST".into(),
            path: "/api/scans".into(),
            query: Vec::new(),
            headers: std::iter::once(("content-type".to_string(), "application/json".to_string()))
                .chain(
                    lines
                        .iter()
                        .map(|l| ("X-Forwarded-For".to_string(), l.to_string())),
                )
                .collect(),
            body: json!({"target_url": format!("lines{n}.example.com")})
                .to_string()
                .into_bytes(),
            peer: SocketAddr::new("10.0.0.2".parse().unwrap(), 40000),
        };
        rig.api.handle(&request).status
    };
    // The client's own line first, a fresh address each time; the proxy's line last.
    for n in 0..10 {
        let own = format!("198.18.0.{n}");
        assert_eq!(submit(n, &[&own, "203.0.113.9"]), 202, "{n}");
    }
    assert_eq!(submit(10, &["198.18.0.77", "203.0.113.9"]), 429);
    // ip:port entries are the address; twelve clients are twelve buckets, not one.
    for n in 0..12 {
        let entry = format!("198.51.100.{}:{}", n + 1, 40000 + n);
        assert_eq!(submit(20 + n, &[&entry]), 202, "{entry}");
    }
    let v6 = "[2001:db8:5::1]:4711";
    assert_eq!(submit(40, &[v6]), 202);
    assert_eq!(
        limits::client_of(
            &Request {
                method: "GET".into(),
                path: "/".into(),
                query: Vec::new(),
                headers: vec![(
                    "x-forwarded-for".into(),
                    "[2001:db8:5::1]:4711, 10.9.9.9".into()
                )],
                body: Vec::new(),
                peer: SocketAddr::new("10.0.0.2".parse().unwrap(), 1),
            },
            &[("10.0.0.0".parse().unwrap(), 8)],
        ),
        "2001:db8:5::1".parse::<IpAddr>().unwrap()
    );
}

/// IPv6 clients count by their /64: fifty addresses of one /64 are one client.
#[test]
fn ipv6_clients_count_by_their_slash_64() {
    let rig = rig("v6-64", &[]);
    for n in 0..10 {
        let peer = format!("2001:db8:7:8::{:x}", n + 1);
        assert_eq!(
            rig.submit(&format!("v6a{n}.example.com"), &peer).status,
            202
        );
    }
    let refused = rig.submit("v6a10.example.com", "2001:db8:7:8::ff");
    assert_limited(&refused, "rate_limited", 60);
    // The next /64 is another client.
    assert_eq!(rig.submit("v6b.example.com", "2001:db8:7:9::1").status, 202);
}

#[test]
fn forwarded_for_is_believed_from_trusted_proxies_only() {
    let rig = rig("proxy", &[("10.0.0.0", 8)]);
    // Through the trusted proxy, clients are told apart by X-Forwarded-For...
    for n in 0..10 {
        let body = json!({"target_url": format!("p{n}.example.com")}).to_string();
        let answer = rig.request("POST", "/api/scans", &body, "10.0.0.2", Some("203.0.113.1"));
        assert_eq!(answer.status, 202);
    }
    let body_11 = json!({"target_url": "p10.example.com"}).to_string();
    let limited = rig.request(
        "POST",
        "/api/scans",
        &body_11,
        "10.0.0.2",
        Some("203.0.113.1"),
    );
    assert_eq!(limited.status, 429);
    let other = rig.request(
        "POST",
        "/api/scans",
        &body_11,
        "10.0.0.2",
        Some("203.0.113.2"),
    );
    assert_eq!(other.status, 202);
    // ...while an untrusted peer cannot escape its limit by writing the header.
    for n in 0..10 {
        let body = json!({"target_url": format!("q{n}.example.com")}).to_string();
        let fake = format!("198.18.0.{n}");
        let answer = rig.request("POST", "/api/scans", &body, "198.51.100.50", Some(&fake));
        assert_eq!(answer.status, 202);
    }
    let body = json!({"target_url": "q10.example.com"}).to_string();
    let refused = rig.request(
        "POST",
        "/api/scans",
        &body,
        "198.51.100.50",
        Some("198.18.0.99"),
    );
    assert_eq!(refused.status, 429);
}

#[test]
fn unknown_expired_and_malformed_uuids_are_404_alike() {
    let rig = rig("expiry", &[]);
    let uuid = body(&rig.submit("cloud.example.com", "198.51.100.7"))["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    for path in [
        "/api/scans/0f8fad5b-d9cb-469f-a165-70867728950e".to_string(),
        "/api/scans/not-a-uuid".to_string(),
        "/api/scans/..%2F..%2Fetc".to_string(),
        format!("/api/scans/{uuid}/export/xml"),
    ] {
        let answer = rig.get(&path);
        assert_eq!(answer.status, 404, "{path}");
        assert_eq!(body(&answer)["error"]["code"], "not_found");
    }
    rig.advance(7 * 24 * 3600);
    assert_eq!(rig.get(&format!("/api/scans/{uuid}")).status, 404);
}

#[test]
fn a_worker_completes_the_record_and_its_submitter_erases_it() {
    let rig = rig("complete", &[]);
    let submitted = body(&rig.submit("cloud.example.com", "198.51.100.7"));
    let first = submitted["uuid"].as_str().unwrap().to_string();
    let erase_key = submitted["erase_key"].as_str().unwrap().to_string();
    let other = body(&rig.submit("other.example.com", "198.51.100.7"))["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let pool = rig.pool(Arc::new(|record| {
        Ok((
            Completed {
                document: scan_result(json!({
                    "host": record.target, "state": "OK", "rating": 5, "grade": "A+",
                    "scannedAt": "2026-11-25T10:00:00Z", "waivers": [],
                    "findings": [{"id": "hsts", "status": "passed", "severity": "medium",
                                  "category": "headers", "detail": "=cmd", "remediation": "r",
                                  "fixedIn": "reverse proxy", "ignored": false}],
                })),
                sarif: json!({"version": "2.1.0"}),
            },
            true,
        ))
    }));
    let claimed = rig
        .store
        .claim("test-0", rig.clock.now(), 120)
        .unwrap()
        .unwrap();
    assert_eq!(claimed.uuid, first);
    assert_eq!(
        body(&rig.get(&format!("/api/scans/{first}")))["status"],
        "running"
    );
    pool.run("test-0", &claimed);
    let done = body(&rig.get(&format!("/api/scans/{first}")));
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["grade"], "A+");
    // The exports, with their media types and download names.
    for (format, media) in [
        ("json", "application/json"),
        ("sarif", "application/sarif+json"),
        ("csv", "text/csv; charset=utf-8"),
        ("pdf", "application/pdf"),
    ] {
        let answer = rig.get(&format!("/api/scans/{first}/export/{format}"));
        assert_eq!(answer.status, 200, "{format}");
        assert_eq!(header(&answer, "Content-Type"), Some(media));
        let disposition = header(&answer, "Content-Disposition").unwrap();
        assert_eq!(
            disposition,
            format!(
                "attachment; filename=\"storage-security-cloud.example.com-{}.{format}\"",
                &first[..8]
            )
        );
    }
    let csv = String::from_utf8(rig.get(&format!("/api/scans/{first}/export/csv")).body).unwrap();
    assert!(csv.contains(",'=cmd,"), "{csv}");
    // The outcome counts for the network (a supported product: no pause).
    assert_eq!(
        rig.store
            .outcomes(&limits::network_key("198.51.100.7".parse().unwrap()))
            .unwrap(),
        [true]
    );
    // Neither the poll nor an export nor the page carries the erase key.
    for path in [
        format!("/api/scans/{first}"),
        format!("/api/scans/{first}/export/json"),
        format!("/api/scans/{first}/export/csv"),
        format!("/api/scans/{first}/export/sarif"),
        format!("/scans/{first}"),
    ] {
        let answer = rig.get(&path);
        assert_eq!(answer.status, 200, "{path}");
        let text = String::from_utf8_lossy(&answer.body);
        assert!(!text.contains(&erase_key), "{path}");
        assert!(!text.contains("erase_key"), "{path}");
    }
    // DELETE with the erase key erases that record, and nothing else.
    let erased = rig.send(
        "DELETE",
        &format!("/api/scans/{first}"),
        &[("X-Erase-Key", &erase_key)],
        b"",
        "192.0.2.1",
    );
    assert_eq!(erased.status, 200);
    assert_eq!(body(&erased)["erased"], 1);
    assert_eq!(rig.get(&format!("/api/scans/{first}")).status, 404);
    assert_eq!(rig.get(&format!("/api/scans/{other}")).status, 200);
    assert_eq!(
        rig.store
            .get(&other, rig.clock.now())
            .unwrap()
            .unwrap()
            .status,
        Status::Queued
    );
}

/// Erasure needs the right to erase (issue 21, item 8): two submitters of one instance each
/// get an erase key of their own with their 202; a DELETE without a key, or with the other's,
/// is 403 and erases nothing; each key erases its own record only. The store keeps the key's
/// SHA-256, never the key.
#[test]
fn only_a_scan_s_own_erase_key_erases_it() {
    let rig = rig("erase-key", &[]);
    let submit = |peer: &str| {
        let answer = rig.submit("cloud.example.com", peer);
        assert_eq!(answer.status, 202, "{:?}", body(&answer));
        assert_eq!(header(&answer, "Cache-Control"), Some("no-store"));
        let value = body(&answer);
        let key = value["erase_key"].as_str().unwrap().to_string();
        assert_eq!(key.len(), 64, "{key}");
        assert!(
            key.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        (value["uuid"].as_str().unwrap().to_string(), key)
    };
    let (victims, victim_key) = submit("198.51.100.7");
    rig.advance(300);
    let (mine, my_key) = submit("203.0.113.9");
    assert_ne!(victim_key, my_key);
    let delete = |uuid: &str, key: Option<&str>| {
        let headers: Vec<(&str, &str)> = key.map(|k| ("X-Erase-Key", k)).into_iter().collect();
        rig.send(
            "DELETE",
            &format!("/api/scans/{uuid}"),
            &headers,
            b"",
            "203.0.113.9",
        )
    };
    let required = delete(&victims, None);
    assert_eq!(required.status, 403);
    assert_eq!(body(&required)["error"]["code"], "erase_key_required");
    let wrong = delete(&victims, Some(&my_key));
    assert_eq!(wrong.status, 403);
    assert_eq!(body(&wrong)["error"]["code"], "erase_key_invalid");
    assert_eq!(delete(&victims, Some("not-a-key")).status, 403);
    assert_eq!(
        delete(&victims, Some(&victim_key.to_uppercase())).status,
        403
    );
    assert_eq!(rig.get(&format!("/api/scans/{victims}")).status, 200);
    // My key erases my record, and the victim's stays.
    let erased = delete(&mine, Some(&my_key));
    assert_eq!(erased.status, 200);
    assert_eq!(body(&erased), json!({"erased": 1}));
    assert_eq!(rig.get(&format!("/api/scans/{mine}")).status, 404);
    assert_eq!(rig.get(&format!("/api/scans/{victims}")).status, 200);
    // Gone is gone: the key finds nothing any more.
    assert_eq!(delete(&mine, Some(&my_key)).status, 404);
    // The store holds the key's hash, never the key.
    let kept = rig.store.get(&victims, rig.clock.now()).unwrap().unwrap();
    assert_eq!(
        kept.erase_hash.as_deref(),
        Some(super::api::erase_hash(&victim_key).as_str())
    );
    assert_ne!(kept.erase_hash.as_deref(), Some(victim_key.as_str()));
    let erased = delete(&victims, Some(&victim_key));
    assert_eq!(erased.status, 200);
    // A record of before erase keys cannot be erased by anyone's key.
    let old = super::store::ScanRecord::queued(
        "0f8fad5b-d9cb-469f-a165-70867728950e".into(),
        "old.example.com".into(),
        "n".into(),
        Default::default(),
        rig.clock.now(),
        3600,
    );
    rig.store.insert(&old, old.submitted_at).unwrap();
    assert_eq!(delete(&old.uuid, Some(&victim_key)).status, 403);
}

#[test]
fn a_scan_that_panics_completes_with_an_error_document() {
    let rig = rig("panic", &[]);
    let uuid = body(&rig.submit("cloud.example.com", "198.51.100.7"))["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let pool = rig.pool(Arc::new(|_| panic!("a bug")));
    let claimed = rig
        .store
        .claim("test-0", rig.clock.now(), 120)
        .unwrap()
        .unwrap();
    pool.run("test-0", &claimed);
    let done = body(&rig.get(&format!("/api/scans/{uuid}")));
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["state"], "UNKNOWN");
}

/// One JSON-RPC message to `/mcp` from `peer`, in `session` when given.
fn mcp_message(rig: &Rig, peer: &str, session: Option<&str>, message: Value) -> Response {
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), "application/json".to_string()),
        ("host".to_string(), "127.0.0.1".to_string()),
    ];
    if let Some(session) = session {
        headers.push(("mcp-session-id".to_string(), session.to_string()));
    }
    rig.api.handle(&Request {
        method: "POST".into(),
        path: "/mcp".into(),
        query: Vec::new(),
        headers,
        body: message.to_string().into_bytes(),
        peer: SocketAddr::new(peer.parse::<IpAddr>().unwrap(), 40000),
    })
}

/// A session of `peer`: its `Mcp-Session-Id`.
fn mcp_session(rig: &Rig, peer: &str) -> String {
    let answer = mcp_message(
        rig,
        peer,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}}}),
    );
    assert_eq!(answer.status, 200, "{:?}", body(&answer));
    header(&answer, "mcp-session-id")
        .expect("a session id")
        .to_string()
}

/// `scan_instance` of `target` from `peer`: the tool's result.
fn mcp_scan(rig: &Rig, peer: &str, target: &str) -> Value {
    let session = mcp_session(rig, peer);
    let answer = mcp_message(
        rig,
        peer,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "scan_instance", "arguments": {"target_url": target}}}),
    );
    assert_eq!(answer.status, 200);
    body(&answer)["result"].clone()
}

/// Polls (no sleep to pass: each look is immediate) until `what` holds, for at most 10 s.
fn eventually(what: &str, holds: impl Fn() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !holds() {
        assert!(std::time::Instant::now() < until, "never: {what}");
        std::thread::yield_now();
    }
}

/// A call that waits for its scan holds an HTTP worker until the scan ends (up to 90 s), so
/// only a quarter of the workers wait at once, two per client. Past that, the call answers at
/// once with its queued scan's uuid and tells the agent to poll `get_scan_result`; the other
/// routes keep their workers meanwhile.
#[test]
fn mcp_calls_wait_for_their_scans_within_a_bounded_share_of_the_workers() {
    use super::server::{WAITING_CALLS, WAITING_CALLS_PER_CLIENT};
    let rig = Arc::new(rig("mcp-waits", &[]));
    // No worker runs: every scan stays queued and every call with a seat waits.
    let waiting: Vec<_> = (0..WAITING_CALLS)
        .map(|n| {
            let rig = rig.clone();
            std::thread::spawn(move || {
                mcp_scan(&rig, &format!("10.0.{n}.1"), &format!("w{n}.example.com"))
            })
        })
        .collect();
    eventually("every waiting seat taken", || {
        rig.api.waits.taken() == WAITING_CALLS
    });
    // One more call, from a network of its own, answers at once: queued, poll for it.
    let started = std::time::Instant::now();
    let answered = mcp_scan(&rig, "10.0.200.1", "late.example.com");
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert_eq!(
        answered["structuredContent"]["status"], "queued",
        "{answered}"
    );
    let uuid = answered["structuredContent"]["uuid"].as_str().unwrap();
    assert!(
        answered["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("call get_scan_result with this uuid"),
        "{answered}"
    );
    // The JSON API answers meanwhile.
    assert_eq!(rig.get(&format!("/api/scans/{uuid}")).status, 200);
    assert_eq!(rig.get("/healthz").status, 200);
    // The scans end, and so do the waits.
    let pool = rig.pool(Arc::new(|record| {
        Ok((
            Completed {
                document: scan_result(json!({"host": record.target, "state": "OK",
                                 "rating": 5, "grade": "A+", "findings": [], "waivers": [],
                                 "scannedAt": "2026-11-25T10:00:00Z"})),
                sarif: json!({"version": "2.1.0"}),
            },
            true,
        ))
    }));
    while let Some(claimed) = rig.store.claim("test-0", rig.clock.now(), 120).unwrap() {
        pool.run("test-0", &claimed);
    }
    for call in waiting {
        let result = call.join().unwrap();
        assert_eq!(
            result["structuredContent"]["status"], "completed",
            "{result}"
        );
    }
    assert_eq!(rig.api.waits.taken(), 0);
    // One client's share: its first calls wait, the next answers at once.
    let mine: Vec<_> = (0..WAITING_CALLS_PER_CLIENT)
        .map(|n| {
            let rig = rig.clone();
            std::thread::spawn(move || mcp_scan(&rig, "10.1.0.1", &format!("m{n}.example.com")))
        })
        .collect();
    eventually("the client's seats taken", || {
        rig.api.waits.taken() == WAITING_CALLS_PER_CLIENT
    });
    let over = mcp_scan(&rig, "10.1.0.1", "m-over.example.com");
    assert_eq!(over["structuredContent"]["status"], "queued", "{over}");
    while let Some(claimed) = rig.store.claim("test-0", rig.clock.now(), 120).unwrap() {
        pool.run("test-0", &claimed);
    }
    for call in mine {
        assert_eq!(
            call.join().unwrap()["structuredContent"]["status"],
            "completed"
        );
    }
}

/// The discovery documents, as the route table serves them: GET and HEAD, cacheable, a
/// trailing slash of the path or of the base URL aside; nothing else answers so.
#[test]
fn the_documents_are_served_cacheable_for_get_and_head_only() {
    use super::discovery::{AI_PATH, ARAZZO_PATH, CACHE_CONTROL, OPENAPI_PATH};
    let header = |response: &Response, name: &str| {
        response
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut rig = rig("discovery", &[]);
    for path in [AI_PATH, OPENAPI_PATH, ARAZZO_PATH, "/openapi.json/"] {
        for method in ["GET", "HEAD"] {
            let response = rig.send(method, path, &[], b"", "192.0.2.1");
            assert_eq!(response.status, 200, "{method} {path}");
            assert_eq!(
                header(&response, "content-type").as_deref(),
                Some("application/json")
            );
            assert_eq!(
                header(&response, "cache-control").as_deref(),
                Some(CACHE_CONTROL)
            );
            let _: Value = serde_json::from_slice(&response.body).unwrap();
        }
        let refused = rig.send("POST", path, &[], b"", "192.0.2.1");
        assert_eq!(refused.status, 405);
        assert_eq!(header(&refused, "allow").as_deref(), Some("GET, HEAD"));
    }
    for path in [
        "/",
        "/api/scans",
        "/healthz",
        "/.well-known/",
        "/openapi.yaml",
    ] {
        let other = rig.send("GET", path, &[], b"", "192.0.2.1");
        assert_ne!(
            header(&other, "cache-control").as_deref(),
            Some(CACHE_CONTROL),
            "{path}"
        );
    }
    // A trailing slash on the base URL makes no double slash.
    rig.api.config.base_url = "https://scan.example.com/".into();
    let response = rig.get(AI_PATH);
    let value: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(
        value["mcp"]["client_configuration"],
        json!({"type": "http", "url": "https://scan.example.com/mcp"})
    );
}
