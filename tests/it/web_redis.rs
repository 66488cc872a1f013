//! Two `check-storage-scanner web` processes on one real `redis-server` behave as one service:
//! a scan submitted on one node is polled and exported on the other, the per-target limit
//! counts across nodes, and an erasure on one node is seen on the other.

use crate::support::FakeInstance;
use crate::support::plugin::healthy;
use crate::support::redis::RedisServer;
use crate::support::service::{Answer, ScannerService};
use crate::support::web::{fresh_dir, run_scanner, start_at};
use std::time::{Duration, Instant};

/// The clock of the nodes (`COS_NOW`) unless a test moves it.
const NOW: &str = crate::support::web::NOW;

/// A web node on `store` started at `now` on its clock, with `extra` flags.
fn node_at(name: &str, store: &str, now: &str, extra: &[&str]) -> ScannerService {
    let mut args = vec!["--store", store];
    args.extend_from_slice(extra);
    start_at(&fresh_dir(name), now, &args)
}

fn node(name: &str, store: &str, ca: &str) -> ScannerService {
    node_at(
        name,
        store,
        NOW,
        &["--allow-private-targets", "--ca-file", ca],
    )
}

fn submit(web: &ScannerService, target: &str) -> Answer {
    let body = serde_json::json!({ "target_url": target }).to_string();
    web.request(
        "POST",
        "/api/scans",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
}

#[test]
fn two_nodes_on_one_redis_are_one_service() {
    let redis = RedisServer::start("web-two-nodes");
    let store = redis.url(0);
    let fake = FakeInstance::start(healthy("7.2.4"));
    let ca = fake.ca_file().display().to_string();
    let a = node("web-redis-a", &store, &ca);
    let b = node("web-redis-b", &store, &ca);

    let submitted = submit(&a, &fake.host_port());
    assert_eq!(submitted.status, 202, "{}", submitted.text());
    let uuid = submitted.json()["uuid"].as_str().unwrap().to_string();
    let erase_key = submitted.json()["erase_key"].as_str().unwrap().to_string();

    // Polled on the other node until one of the two nodes' workers completed it.
    let until = Instant::now() + Duration::from_secs(60);
    let result = loop {
        let polled = b.get(&format!("/api/scans/{uuid}"), &[]);
        assert_eq!(polled.status, 200, "{}", polled.text());
        let value = polled.json();
        if value["status"] == "completed" {
            break value["result"].clone();
        }
        assert!(Instant::now() < until, "not completed: {value}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(result["state"], "OK", "{result}");
    // Scanned once, whichever node's worker took it.
    let status_requests = fake
        .requests()
        .iter()
        .filter(|r| r.path() == "/status.php")
        .count();
    assert!(status_requests >= 1);
    let export = b.get(&format!("/api/scans/{uuid}/export/json"), &[]);
    assert_eq!(export.status, 200);
    assert_eq!(export.json()["host"], result["host"]);

    // The per-target limit counts across nodes.
    let again = submit(&b, &fake.host_port());
    assert_eq!(again.status, 429, "{}", again.text());
    assert_eq!(again.json()["error"]["code"], "target_cooldown");
    // The operator sees it from the command line against the same Redis, and lifts it.
    let limits = |args: &[&str]| {
        let mut all = vec!["limits"];
        all.extend_from_slice(args);
        all.extend(["--store", &store]);
        let (printed, code) = run_scanner(&fresh_dir("web-redis-limits"), &all);
        assert_eq!(code, 0, "{printed}");
        printed
    };
    let listed = limits(&["list"]);
    assert!(
        listed.starts_with(&format!("target_cooldown  {}  until ", fake.host_port())),
        "{listed}"
    );
    assert_eq!(
        limits(&["lift", &fake.host_port()]),
        format!("lifted the cooldown of {}\n", fake.host_port())
    );
    let second = submit(&b, &fake.host_port());
    assert_eq!(second.status, 202, "{}", second.text());
    let second = second.json()["uuid"].as_str().unwrap().to_string();

    // Redis holds the erase key's hash, never the key.
    let mut con = redis::Client::open(store.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let record: std::collections::HashMap<String, String> = redis::cmd("HGETALL")
        .arg(format!("css:rec:{uuid}"))
        .query(&mut con)
        .unwrap();
    assert_eq!(record["erase_hash"].len(), 64, "{record:?}");
    assert!(
        !record.values().any(|v| v.contains(&erase_key)),
        "{record:?}"
    );

    // An erasure on one node, with the submission's key, is seen on the other; it erases
    // that scan and not the next one of the same instance.
    let refused = b.request("DELETE", &format!("/api/scans/{uuid}"), &[], b"");
    assert_eq!(refused.status, 403, "{}", refused.text());
    let erased = b.request(
        "DELETE",
        &format!("/api/scans/{uuid}"),
        &[("X-Erase-Key", &erase_key)],
        b"",
    );
    assert_eq!(erased.status, 200, "{}", erased.text());
    assert_eq!(a.get(&format!("/api/scans/{uuid}"), &[]).status, 404);
    assert_eq!(a.get(&format!("/api/scans/{second}"), &[]).status, 200);

    // The store's address is named on start, never with a password (there is none here).
    assert!(
        a.stderr_lines()
            .iter()
            .any(|l| l.contains(&format!("store {store}"))),
        "{:?}",
        a.stderr_lines()
    );
}

/// Redis' own clock (`TIME`), which the test process' clock need not agree with (a test run
/// under `faketime` keeps `redis-server` on the real one).
fn redis_clock(store: &str) -> i64 {
    let mut con = redis::Client::open(store)
        .unwrap()
        .get_connection()
        .unwrap();
    let (seconds, _micros): (i64, i64) = redis::cmd("TIME").query(&mut con).unwrap();
    seconds
}

/// A node's `COS_NOW` for Unix second `at`.
fn stamp(at: i64) -> String {
    jiff::Timestamp::from_second(at).unwrap().to_string()
}

/// Records live by their own length, not by an instant of another clock: two nodes whose
/// clocks are a week behind Redis' and 90 s apart from each other keep a record for its whole
/// life (an `EXPIREAT` on a node's clock would have Redis drop it the moment it is written).
/// Redis' TTL of the record is its life; a node whose clock reaches the record's last minute
/// still reads it, one past its end does not.
#[test]
fn nodes_a_week_off_redis_clock_keep_every_record_for_its_whole_life() {
    let redis = RedisServer::start("web-clocks");
    let store = redis.url(0);
    let fake = FakeInstance::start(healthy("7.2.4"));
    let ca = fake.ca_file().display().to_string();
    let ttl: i64 = 3_600;
    let ttl_flag = ttl.to_string();
    let flags = [
        "--allow-private-targets",
        "--ca-file",
        ca.as_str(),
        "--record-ttl",
        ttl_flag.as_str(),
    ];
    let a_clock = redis_clock(&store) - 7 * 86_400;
    let a = node_at("web-clocks-a", &store, &stamp(a_clock), &flags);
    let b = node_at("web-clocks-b", &store, &stamp(a_clock + 90), &flags);

    let submitted = submit(&a, &fake.host_port());
    assert_eq!(submitted.status, 202, "{}", submitted.text());
    let uuid = submitted.json()["uuid"].as_str().unwrap().to_string();
    let path = format!("/api/scans/{uuid}");
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let polled = b.get(&path, &[]);
        assert_eq!(polled.status, 200, "{}", polled.text());
        if polled.json()["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < until, "not completed: {}", polled.text());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(a.get(&path, &[]).status, 200);

    let mut con = redis::Client::open(store.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let left: i64 = redis::cmd("TTL")
        .arg(format!("css:rec:{uuid}"))
        .query(&mut con)
        .unwrap();
    assert!(
        (ttl - 120..=ttl).contains(&left),
        "Redis keeps the record {left} s; its life is {ttl} s"
    );

    // In its last minute on the submitting node's clock, a node still reads it; past its end,
    // nobody does.
    let last_minute = node_at("web-clocks-c", &store, &stamp(a_clock + ttl - 60), &flags);
    assert_eq!(last_minute.get(&path, &[]).status, 200);
    let after = node_at("web-clocks-d", &store, &stamp(a_clock + ttl + 1), &flags);
    assert_eq!(after.get(&path, &[]).status, 404);
}

/// A node killed in the middle of a scan loses nothing: once its claim's lease has ended,
/// another node's worker takes the scan up and completes it. The second node starts a day
/// later on its clock (`COS_NOW`), so the first node's lease has ended for it.
#[test]
fn a_scan_whose_node_was_killed_mid_scan_is_completed_by_another_node() {
    let redis = RedisServer::start("web-killed-node");
    let store = redis.url(0);
    // A target that accepts connections and never answers: the scan hangs there.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let target = silent.local_addr().unwrap().to_string();
    // The first node's scan waits 20 s for the silent target; the second's gives up after 1 s.
    let start = |name: &str, now: &str, timeout: &str| {
        node_at(
            name,
            &store,
            now,
            &[
                "--workers",
                "1",
                "--allow-private-targets",
                "--timeout",
                timeout,
                "--time-budget",
                "50",
            ],
        )
    };
    let mut first = start("web-killed-a", "2026-11-22T03:00:00Z", "20");
    let submitted = submit(&first, &target);
    assert_eq!(submitted.status, 202, "{}", submitted.text());
    let uuid = submitted.json()["uuid"].as_str().unwrap().to_string();
    let until = Instant::now() + Duration::from_secs(30);
    while first.get(&format!("/api/scans/{uuid}"), &[]).json()["status"] != "running" {
        assert!(
            Instant::now() < until,
            "the first node never started the scan"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Killed mid-scan: no completion, no clean-up.
    first.kill();

    let second = start("web-killed-b", "2026-11-23T03:00:00Z", "1");
    let until = Instant::now() + Duration::from_secs(60);
    let result = loop {
        let value = second.get(&format!("/api/scans/{uuid}"), &[]).json();
        if value["status"] == "completed" {
            break value["result"].clone();
        }
        assert!(
            Instant::now() < until,
            "never completed: {value}\n{}",
            second.stderr_lines().join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // The target never answers, so the scan ends UNKNOWN, but it ended: nothing was lost.
    assert_eq!(result["state"], "UNKNOWN", "{result}");
    drop(silent);
}

/// Past the record TTL, the purger of a node erases the record and every key it left (the
/// limit logs, the network's outcomes, the indexes), by the node's clock: the node is started
/// again a week and a day later on its clock, and the Redis is empty.
#[test]
fn expired_records_leave_redis() {
    let redis = RedisServer::start("web-purge");
    let store = redis.url(0);
    let target = format!("127.0.0.1:{}", crate::support::closed_port());
    let start = |name: &str, now: &str| {
        node_at(
            name,
            &store,
            now,
            &[
                "--workers",
                "1",
                "--record-ttl",
                "60",
                "--allow-private-targets",
            ],
        )
    };
    // A clock ahead of Redis' own, so Redis expires nothing by itself meanwhile.
    let mut node = start("web-purge-a", "2100-01-01T00:00:00Z");
    let submitted = submit(&node, &target);
    assert_eq!(submitted.status, 202, "{}", submitted.text());
    let uuid = submitted.json()["uuid"].as_str().unwrap().to_string();
    let until = Instant::now() + Duration::from_secs(60);
    while node.get(&format!("/api/scans/{uuid}"), &[]).json()["status"] != "completed" {
        assert!(Instant::now() < until, "the scan did not complete");
        std::thread::sleep(Duration::from_millis(50));
    }
    node.terminate();
    assert_eq!(node.wait_exit(Duration::from_secs(30)), Some(0));
    let client = redis::Client::open(store.as_str()).unwrap();
    let mut con = client.get_connection().unwrap();
    let keys = |con: &mut redis::Connection| -> Vec<String> {
        redis::cmd("KEYS").arg("*").query(con).unwrap()
    };
    assert!(keys(&mut con).contains(&format!("css:rec:{uuid}")));

    let later = start("web-purge-b", "2100-01-09T00:00:01Z");
    let purged = later.wait_for_line(Duration::from_secs(30), |l| l.contains("purged"));
    assert_eq!(
        purged.as_deref(),
        Some("check-storage-scanner web: purged 1 expired record"),
        "{:?}",
        later.stderr_lines()
    );
    assert_eq!(keys(&mut con), Vec::<String>::new());
}

/// With its Redis frozen (SIGSTOP: connections are accepted, nothing answers), a node says so
/// at once instead of hanging: `/healthz` (GET and HEAD) answers 503 with `Retry-After` within
/// 2 s and a submission 503 with `Retry-After` within 3 s, bounded by `--store-timeout` (0.5 s
/// here); thawed, the next calls connect again and both work.
#[test]
fn a_frozen_redis_makes_the_node_unhealthy_not_hung() {
    let redis = RedisServer::start("web-frozen");
    let store = redis.url(0);
    let node = node_at(
        "web-frozen",
        &store,
        "2100-01-01T00:00:00Z",
        &[
            "--store-timeout",
            "0.5",
            "--workers",
            "1",
            "--allow-private-targets",
        ],
    );
    let health = |method: &str| node.request(method, "/healthz", &[], b"");
    assert_eq!(health("GET").status, 200);
    assert_eq!(health("HEAD").status, 200);

    redis.signal("STOP");
    for method in ["GET", "HEAD", "GET"] {
        let asked = Instant::now();
        let answer = health(method);
        let took = asked.elapsed();
        assert_eq!(answer.status, 503, "{method}: {}", answer.text());
        assert!(
            took < Duration::from_secs(2),
            "{method} /healthz took {took:?}"
        );
        assert!(answer.header("retry-after").is_some(), "{answer:?}");
        if method == "HEAD" {
            assert!(answer.body.is_empty(), "{answer:?}");
        } else {
            assert_eq!(answer.json()["error"]["code"], "unavailable");
        }
    }
    let target = format!("127.0.0.1:{}", crate::support::closed_port());
    let asked = Instant::now();
    let refused = submit(&node, &target);
    let took = asked.elapsed();
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert!(
        took < Duration::from_secs(3),
        "the submission took {took:?}"
    );
    assert!(refused.header("retry-after").is_some(), "{refused:?}");
    // The store's address goes to the log, not to the client.
    assert!(!refused.text().contains(&redis.addr.to_string()));

    redis.signal("CONT");
    assert_eq!(health("GET").status, 200);
    let accepted = submit(&node, &target);
    assert_eq!(accepted.status, 202, "{}", accepted.text());
}

/// Issue 31, item 7: a frozen store costs one deadline. With Redis frozen and the default
/// `--store-timeout 2`, every `/healthz` answers 503 within a second (its own deadline), and a
/// submission, a poll and MCP `initialize` each answer 503 within the store timeout, once:
/// connecting and the command share it, and so do a request's calls.
#[test]
fn a_frozen_redis_costs_a_request_one_deadline() {
    let redis = RedisServer::start("web-frozen-one-deadline");
    let store = redis.url(0);
    let node = node_at(
        "web-frozen-one-deadline",
        &store,
        NOW,
        &["--workers", "1", "--allow-private-targets"],
    );
    assert_eq!(node.get("/healthz", &[]).status, 200);
    redis.signal("STOP");
    let timed = |answer: &dyn Fn() -> Answer| {
        let asked = Instant::now();
        let answer = answer();
        (answer, asked.elapsed())
    };
    for _ in 0..3 {
        let (answer, took) = timed(&|| node.get("/healthz", &[]));
        assert_eq!(answer.status, 503, "{}", answer.text());
        assert!(took < Duration::from_secs(1), "/healthz took {took:?}");
    }
    let target = format!("127.0.0.1:{}", crate::support::closed_port());
    let json = [("Content-Type", "application/json")];
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18"},
    })
    .to_string();
    let calls: [(&str, &dyn Fn() -> Answer); 4] = [
        ("submission", &|| submit(&node, &target)),
        ("second submission", &|| submit(&node, &target)),
        ("poll", &|| {
            node.get("/api/scans/00000000-0000-4000-8000-000000000000", &[])
        }),
        ("MCP initialize", &|| {
            node.request("POST", "/mcp", &json, initialize.as_bytes())
        }),
    ];
    for (name, call) in calls {
        let (answer, took) = timed(call);
        assert_eq!(answer.status, 503, "{name}: {}", answer.text());
        assert!(
            took < Duration::from_millis(2_500),
            "{name} took {took:?}: more than one store timeout"
        );
    }
    redis.signal("CONT");
    assert_eq!(node.get("/healthz", &[]).status, 200);
}
