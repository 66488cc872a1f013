//! The Redis store (`--store redis://host:port/db`) against a real `redis-server` (Debian's
//! package, installed by `make deps`) that each test starts on a free loopback port, in the
//! foreground, without persistence, and kills when it ends (also on a panic): the store
//! conformance suite, two nodes on one server, and a dead or hung server answering with a
//! `StoreError` in bounded time.

use crate::support::redis::RedisServer;
use crate::support::store_conformance::{self as conformance, T0};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use storage_security::web::store::redis::{DEFAULT_PREFIX, RedisStore};
use storage_security::web::store::{self, Store};

#[test]
fn the_redis_store_passes_the_conformance_suite() {
    let server = RedisServer::start("conformance");
    let url = server.url(0);
    // Each check gets keys of its own under a fresh prefix.
    let next = AtomicUsize::new(0);
    conformance::run_all(&|| {
        let n = next.fetch_add(1, Ordering::Relaxed);
        Box::new(
            RedisStore::open_with(&url, &format!("check{n}:"), Duration::from_secs(3)).unwrap(),
        )
    });
    // The same through `--store`'s parser, on another database with the default prefix.
    let store = store::open(&server.url(3), store::DEFAULT_TIMEOUT).unwrap();
    let (_, check) = conformance::CHECKS
        .iter()
        .find(|(name, _)| *name == "an_expired_lease_is_claimed_again")
        .unwrap();
    check(&*store);
}

/// A store on `url` as `web --store redis://...` opens one: the default prefix and timeout.
fn open(url: &str) -> RedisStore {
    RedisStore::open_with(url, DEFAULT_PREFIX, store::DEFAULT_TIMEOUT).unwrap()
}

#[test]
fn two_nodes_on_one_redis_behave_as_one() {
    let server = RedisServer::start("two-nodes");
    let a = open(&server.url(1));
    let b = open(&server.url(1));
    conformance::two_nodes(&a, &b);
    // Another database or prefix is another service: it sees none of it.
    let elsewhere = open(&server.url(2));
    assert_eq!(elsewhere.outcomes("net").unwrap(), Vec::<bool>::new());
    let other_prefix =
        RedisStore::open_with(&server.url(1), "other:", Duration::from_secs(3)).unwrap();
    assert_eq!(other_prefix.paused_until("net", T0).unwrap(), None);
}

/// A record lives in Redis for the life it has left on the API's clock (`expires_at - now`),
/// whatever Redis' own clock says: a node a week behind Redis' clock, a week ahead, or
/// pinned to 2001 gives every record its whole life, neither less nor more.
#[test]
fn records_live_their_own_length_whatever_the_clocks() {
    let server = RedisServer::start("expiry");
    let store = open(&server.url(0));
    let client = redis::Client::open(server.url(0)).unwrap();
    let mut con = client.get_connection().unwrap();
    let redis_now: i64 = {
        let (seconds, _): (i64, i64) = redis::cmd("TIME").query(&mut con).unwrap();
        seconds
    };
    let week = 7 * 86_400;
    for (uuid, now, ttl) in [
        ("behind", redis_now - week, 3_600),
        ("ahead", redis_now + week, 3_600),
        ("ninety-ahead", redis_now - week + 90, 600),
        ("2001", 1_000_000_000, 86_400),
    ] {
        let record = conformance::queued(uuid, "x.example", "n", now, ttl);
        store.insert(&record, now).unwrap();
        let left: i64 = redis::cmd("TTL")
            .arg(format!("css:rec:{uuid}"))
            .query(&mut con)
            .unwrap();
        assert!(
            (ttl - 5..=ttl).contains(&left),
            "{uuid}: Redis keeps it {left} s, its life is {ttl} s"
        );
        assert!(store.get(uuid, now + ttl - 1).unwrap().is_some(), "{uuid}");
        assert!(store.get(uuid, now + ttl).unwrap().is_none(), "{uuid}");
    }
    // A record inserted when its life has already ended on the API's clock is never returned,
    // and Redis drops it within a second.
    let ended = conformance::queued("ended", "x.example", "n", redis_now - week, 60);
    store.insert(&ended, redis_now - week + 61).unwrap();
    assert!(store.get("ended", redis_now - week + 61).unwrap().is_none());
    let left: i64 = redis::cmd("TTL")
        .arg("css:rec:ended")
        .query(&mut con)
        .unwrap();
    assert!(left <= 1, "an ended record kept {left} s");
}

/// Every key the store writes expires: nothing piles up over months of submissions from new
/// networks (`outcomes:<network>` once had no TTL).
#[test]
fn every_key_the_store_writes_expires() {
    let server = RedisServer::start("ttl");
    let store = open(&server.url(0));
    let day = 86_400;
    // A submission: the limits, the record; a worker claims, renews and completes it; the
    // outcome is recorded and the network paused; another is running, another erased.
    let limits = [
        conformance::limit("address:192.0.2.1", 10, 60),
        conformance::limit("target:x.example", 1, 300),
        conformance::limit("network:192.0.2.0/24", 50, day),
    ];
    assert!(conformance::admit(&store, &limits, T0 * 1000).admitted());
    for (uuid, target) in [
        ("t1", "x.example"),
        ("t2", "y.example"),
        ("t3", "z.example"),
    ] {
        store
            .insert(
                &conformance::queued(uuid, target, "192.0.2.0/24", T0, day),
                T0,
            )
            .unwrap();
    }
    assert_eq!(store.claim("w", T0 + 1, 60).unwrap().unwrap().uuid, "t1");
    assert!(store.renew("t1", "w", T0 + 2, 60).unwrap());
    assert!(store.complete("t1", "w", "{}", T0 + 3).unwrap());
    assert_eq!(store.claim("w", T0 + 4, 60).unwrap().unwrap().uuid, "t2");
    store
        .record_outcome("192.0.2.0/24", false, 5, T0 + 3, 7 * day)
        .unwrap();
    store.pause("192.0.2.0/24", T0 + day, T0 + 3).unwrap();
    assert!(store.erase("t3").unwrap());

    let client = redis::Client::open(server.url(0)).unwrap();
    let mut con = client.get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    for expected in [
        "css:rec:t1",
        "css:rec:t2",
        "css:running",
        "css:expiry",
        "css:hits:address:192.0.2.1",
        "css:hits:target:x.example",
        "css:outcomes:192.0.2.0/24",
        "css:pauses",
        "css:ends",
    ] {
        assert!(keys.iter().any(|k| k == expected), "{expected} in {keys:?}");
    }
    for key in &keys {
        let ttl: i64 = redis::cmd("TTL").arg(key).query(&mut con).unwrap();
        assert!(ttl > 0, "{key} has TTL {ttl}");
    }
}

#[test]
fn a_dead_redis_is_a_store_error_in_bounded_time() {
    let mut server = RedisServer::start("dead");
    let store = RedisStore::open_with(&server.url(0), "css:", Duration::from_secs(1)).unwrap();
    store
        .insert(&conformance::queued("d1", "x.example", "n", T0, 86_400), T0)
        .unwrap();

    // Hung (stopped, its socket still open): the read times out.
    server.signal("STOP");
    let started = Instant::now();
    let error = store.get("d1", T0).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(error.0.contains(&server.url(0)), "{error}");
    server.signal("CONT");
    // Back: the next call connects again and finds everything.
    assert!(store.get("d1", T0).unwrap().is_some());

    // Killed: every call fails at once, none hangs.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let started = Instant::now();
    for _ in 0..3 {
        assert!(store.claim("w", T0, 60).is_err());
        assert!(
            store
                .admit(&[conformance::limit("k", 1, 60)], "net", T0 * 1000)
                .is_err()
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // A new node cannot start on it, and its error hides the password.
    let url = format!("redis://:s3cret@{}/0", server.addr);
    let Err(error) = store::open(&url, store::DEFAULT_TIMEOUT) else {
        panic!("nothing answers");
    };
    assert!(!error.0.contains("s3cret"), "{error}");
    assert!(
        error.0.contains(&format!("redis://:***@{}/0", server.addr)),
        "{error}"
    );
}
