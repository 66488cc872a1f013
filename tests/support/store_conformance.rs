//! The checks every [`Store`] passes, run by `tests/it/store_sqlite.rs` and `tests/it/store_redis.rs`
//! against the real thing. Each check gets a fresh, empty store from the caller's `make`; the
//! clock is the `now` the checks pass (starting at [`T0`]), never the system's, and no check
//! sleeps.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use storage_security::web::store::{Admission, Limit, ScanRecord, ScanRequest, Status, Store};

/// The checks' clock starts here: 2100-01-01T00:00:00Z, a multiple of every window they use,
/// and far enough ahead that a store expiring keys by its own clock (Redis) keeps them while
/// the checks run.
pub const T0: i64 = 4_102_444_800;

const DAY: i64 = 86_400;
const HOUR: i64 = 3_600;
/// [`T0`] in milliseconds, the limits' clock.
const T0_MS: i64 = T0 * 1000;

/// One check: panics when the store fails it.
pub type Check = fn(&dyn Store);

/// Every check by name.
pub const CHECKS: &[(&str, Check)] = &[
    ("insert_then_get", insert_then_get),
    ("unknown_uuid_is_none", unknown_uuid_is_none),
    ("duplicate_uuid_is_refused", duplicate_uuid_is_refused),
    ("expired_record_is_gone", expired_record_is_gone),
    ("claim_takes_the_oldest_first", claim_takes_the_oldest_first),
    ("claim_starts_a_lease", claim_starts_a_lease),
    ("claim_skips_expired_records", claim_skips_expired_records),
    ("no_record_is_claimed_twice", no_record_is_claimed_twice),
    ("renew_extends_the_lease", renew_extends_the_lease),
    (
        "an_expired_lease_is_claimed_again",
        an_expired_lease_is_claimed_again,
    ),
    ("complete_stores_the_result", complete_stores_the_result),
    (
        "erase_erases_that_record_only",
        erase_erases_that_record_only,
    ),
    ("admit_counts_up_to_the_limit", admit_counts_up_to_the_limit),
    (
        "a_refused_admission_counts_nothing",
        a_refused_admission_counts_nothing,
    ),
    (
        "admissions_from_threads_count_exactly",
        admissions_from_threads_count_exactly,
    ),
    (
        "a_minute_rolls_across_the_clock_minute",
        a_minute_rolls_across_the_clock_minute,
    ),
    (
        "a_target_cooldown_rolls_across_the_five_minute_edge",
        a_target_cooldown_rolls_across_the_five_minute_edge,
    ),
    ("a_day_rolls_across_midnight", a_day_rolls_across_midnight),
    ("a_full_limit_spends_no_other", a_full_limit_spends_no_other),
    (
        "a_paused_network_is_refused_and_spends_nothing",
        a_paused_network_is_refused_and_spends_nothing,
    ),
    ("pauses_are_listed_and_lifted", pauses_are_listed_and_lifted),
    (
        "full_limits_are_listed_and_forgotten",
        full_limits_are_listed_and_forgotten,
    ),
    ("outcomes_newest_first_capped", outcomes_newest_first_capped),
    ("pause_until", pause_until),
    (
        "purge_expired_removes_only_expired",
        purge_expired_removes_only_expired,
    ),
];

/// Runs every check, each on a fresh store from `make`; panics naming every check that failed.
pub fn run_all(make: &dyn Fn() -> Box<dyn Store>) {
    let mut failed = Vec::new();
    for (name, check) in CHECKS {
        let store = make();
        if catch_unwind(AssertUnwindSafe(|| check(&*store))).is_err() {
            failed.push(*name);
        }
    }
    assert!(
        failed.is_empty(),
        "store conformance checks failed: {failed:?}"
    );
}

/// Two stores on the same backing data (two nodes on one Redis, two processes on one SQLite
/// file) behave as one: each sees the other's records, counters, outcomes and pauses, and
/// claiming from both at once takes every record exactly once.
pub fn two_nodes(a: &dyn Store, b: &dyn Store) {
    let record = queued("node-a-1", "shared.example", "198.51.100.0/24", T0, DAY);
    a.insert(&record, record.submitted_at).unwrap();
    assert_eq!(b.get("node-a-1", T0).unwrap(), Some(record));

    let nodes = [limit("nodes", 3, HOUR)];
    assert!(admit(a, &nodes, T0_MS).admitted());
    assert!(admit(b, &nodes, T0_MS + 1).admitted());
    assert!(admit(a, &nodes, T0_MS + 2).admitted());
    assert_eq!(
        admit(b, &nodes, T0_MS + 3).full,
        [(0, HOUR * 1000 - 3)],
        "the first hit, on the other node, leaves first"
    );

    a.record_outcome("net", false, 5, T0, DAY).unwrap();
    b.record_outcome("net", true, 5, T0, DAY).unwrap();
    assert_eq!(a.outcomes("net").unwrap(), [true, false]);
    b.pause("net", T0 + DAY, T0).unwrap();
    assert_eq!(a.paused_until("net", T0).unwrap(), Some(T0 + DAY));

    // The first record plus many more, claimed from both nodes at once.
    let count = 150;
    for i in 0..count {
        let uuid = format!("node-b-{i:03}");
        b.insert(
            &queued(&uuid, "shared.example", "net", T0 + 1 + i, DAY),
            T0 + 1 + i,
        )
        .unwrap();
    }
    let now = T0 + 1000;
    let claimed = claim_from_threads(&[a, b], now, count as usize + 1);
    assert_eq!(claimed.len(), count as usize + 1);
    assert!(a.claim("late", now, 60).unwrap().is_none());
    assert!(b.claim("late", now, 60).unwrap().is_none());
    // Either node completes what the other claimed and both see it.
    let (uuid, worker) = claimed.first().unwrap();
    assert!(b.complete(uuid, worker, "{}", now).unwrap());
    assert_eq!(a.get(uuid, now).unwrap().unwrap().status, Status::Completed);
    // Either node erases what the other stored.
    assert!(b.erase("node-a-1").unwrap());
    assert_eq!(a.get("node-a-1", now).unwrap(), None);
}

/// A limit of `count` in `window_secs` on `key`.
pub fn limit(key: &str, count: u32, window_secs: i64) -> Limit {
    Limit {
        key: key.to_string(),
        limit: count,
        window_ms: window_secs * 1000,
    }
}

/// An admission against `limits` for network `net` at `now_ms`.
pub fn admit(store: &dyn Store, limits: &[Limit], now_ms: i64) -> Admission {
    store.admit(limits, "net", now_ms).unwrap()
}

/// A queued record of `target` submitted at `now` that lives `ttl` seconds.
pub fn queued(uuid: &str, target: &str, network: &str, now: i64, ttl: i64) -> ScanRecord {
    ScanRecord::queued(
        uuid.to_string(),
        target.to_string(),
        network.to_string(),
        ScanRequest {
            target_url: format!("https://{target}/"),
            waive: vec!["tls.*".to_string(), "headers.hsts".to_string()],
            release_track: Some("production".to_string()),
            format: Some("json".to_string()),
        },
        now,
        ttl,
    )
}

/// Claims from one thread per store (several per store) until the queue is empty; every
/// claimed uuid with its worker. Panics if a record is claimed twice.
fn claim_from_threads(stores: &[&dyn Store], now: i64, expected: usize) -> Vec<(String, String)> {
    let claimed = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for (n, store) in stores.iter().enumerate() {
            for t in 0..2 {
                let claimed = &claimed;
                scope.spawn(move || {
                    let worker = format!("worker-{n}-{t}");
                    while let Some(record) = store.claim(&worker, now, 300).unwrap() {
                        assert_eq!(record.worker.as_deref(), Some(worker.as_str()));
                        claimed.lock().unwrap().push((record.uuid, worker.clone()));
                    }
                });
            }
        }
    });
    let claimed = claimed.into_inner().unwrap();
    let unique: HashSet<&String> = claimed.iter().map(|(uuid, _)| uuid).collect();
    assert_eq!(unique.len(), claimed.len(), "a record was claimed twice");
    assert_eq!(claimed.len(), expected, "every record is claimed once");
    claimed
}

fn insert_then_get(store: &dyn Store) {
    let record = queued("a1", "cloud.example.com", "203.0.113.0/24", T0, DAY);
    store.insert(&record, record.submitted_at).unwrap();
    assert_eq!(store.get("a1", T0).unwrap(), Some(record.clone()));
    assert_eq!(store.get("a1", T0 + DAY - 1).unwrap(), Some(record));

    // Every field round-trips, the optional ones too.
    let full = ScanRecord {
        status: Status::Completed,
        started_at: Some(T0 + 1),
        finished_at: Some(T0 + 2),
        worker: None,
        lease_until: None,
        attempts: 3,
        result: Some(r#"{"grade":"A","text":"ünïcode, \"quotes\"\n"}"#.to_string()),
        request: ScanRequest {
            target_url: "cloud.example.com:8443".to_string(),
            waive: Vec::new(),
            release_track: None,
            format: None,
        },
        addresses: vec!["192.0.2.1".parse().unwrap(), "2001:db8::7".parse().unwrap()],
        erase_hash: Some("0f".repeat(32)),
        ..queued("a2", "cloud.example.com:8443", "2001:db8::/56", T0, DAY)
    };
    store.insert(&full, full.submitted_at).unwrap();
    assert_eq!(store.get("a2", T0).unwrap(), Some(full));
    // A completed record is no part of the queue.
    assert_eq!(store.claim("w", T0, 60).unwrap().unwrap().uuid, "a1");
    assert_eq!(store.claim("w", T0, 60).unwrap(), None);
}

fn unknown_uuid_is_none(store: &dyn Store) {
    assert_eq!(store.get("nobody", T0).unwrap(), None);
    store
        .insert(&queued("b1", "x.example", "n", T0, DAY), T0)
        .unwrap();
    assert_eq!(store.get("b2", T0).unwrap(), None);
    assert_eq!(store.get("", T0).unwrap(), None);
}

fn duplicate_uuid_is_refused(store: &dyn Store) {
    let record = queued("dup", "x.example", "n", T0, DAY);
    store.insert(&record, record.submitted_at).unwrap();
    let other = queued("dup", "y.example", "m", T0 + 5, DAY);
    assert!(store.insert(&other, other.submitted_at).is_err());
    assert_eq!(store.get("dup", T0).unwrap(), Some(record));
}

fn expired_record_is_gone(store: &dyn Store) {
    store
        .insert(&queued("e1", "x.example", "n", T0, 100), T0)
        .unwrap();
    assert!(store.get("e1", T0 + 99).unwrap().is_some());
    assert_eq!(store.get("e1", T0 + 100).unwrap(), None);
    assert_eq!(store.get("e1", T0 + DAY).unwrap(), None);
    assert_eq!(store.purge_expired(T0 + 100).unwrap(), 1);
    // Purged: gone even for a clock that looks back.
    assert_eq!(store.get("e1", T0).unwrap(), None);
    assert_eq!(store.purge_expired(T0 + 100).unwrap(), 0);
}

fn claim_takes_the_oldest_first(store: &dyn Store) {
    // Inserted out of order; claimed by submission time.
    for (uuid, at) in [
        ("c3", T0 + 30),
        ("c1", T0 + 10),
        ("c4", T0 + 40),
        ("c2", T0 + 20),
    ] {
        store
            .insert(&queued(uuid, "x.example", "n", at, DAY), at)
            .unwrap();
    }
    let now = T0 + 100;
    let order: Vec<String> = std::iter::from_fn(|| store.claim("w", now, 60).unwrap())
        .map(|record| record.uuid)
        .collect();
    assert_eq!(order, ["c1", "c2", "c3", "c4"]);
    assert_eq!(store.claim("w", now, 60).unwrap(), None);
}

fn claim_starts_a_lease(store: &dyn Store) {
    assert_eq!(store.claim("w1", T0, 60).unwrap(), None, "an empty queue");
    let record = queued("d1", "x.example", "n", T0, DAY);
    store.insert(&record, record.submitted_at).unwrap();
    let now = T0 + 5;
    let claimed = store
        .claim("w1", now, 60)
        .unwrap()
        .expect("claims the queued record");
    let expected = ScanRecord {
        status: Status::Running,
        started_at: Some(now),
        worker: Some("w1".to_string()),
        lease_until: Some(now + 60),
        attempts: 1,
        ..record
    };
    assert_eq!(claimed, expected);
    assert_eq!(store.get("d1", now).unwrap(), Some(expected));
    // Held: nobody else takes it, up to and including the lease's last second.
    assert_eq!(store.claim("w2", now + 1, 60).unwrap(), None);
    assert_eq!(store.claim("w2", now + 60, 60).unwrap(), None);
}

fn claim_skips_expired_records(store: &dyn Store) {
    store
        .insert(&queued("old", "x.example", "n", T0, 100), T0)
        .unwrap();
    store
        .insert(&queued("new", "x.example", "n", T0 + 50, DAY), T0 + 50)
        .unwrap();
    let claimed = store.claim("w", T0 + 100, 60).unwrap().unwrap();
    assert_eq!(claimed.uuid, "new");
    assert_eq!(store.claim("w", T0 + 100, 60).unwrap(), None);
}

fn no_record_is_claimed_twice(store: &dyn Store) {
    let count = 200;
    for i in 0..count {
        store
            .insert(
                &queued(&format!("n{i:03}"), "x.example", "n", T0 + i, DAY),
                T0 + i,
            )
            .unwrap();
    }
    claim_from_threads(&[store], T0 + 1000, count as usize);
    assert_eq!(store.claim("late", T0 + 1000, 60).unwrap(), None);
}

fn renew_extends_the_lease(store: &dyn Store) {
    store
        .insert(&queued("r1", "x.example", "n", T0, DAY), T0)
        .unwrap();
    store.claim("w1", T0, 60).unwrap().unwrap();
    assert!(store.renew("r1", "w1", T0 + 50, 60).unwrap());
    assert_eq!(
        store.get("r1", T0 + 50).unwrap().unwrap().lease_until,
        Some(T0 + 110)
    );
    // The old lease's end is no longer an opening.
    assert_eq!(store.claim("w2", T0 + 61, 60).unwrap(), None);
    assert_eq!(store.claim("w2", T0 + 110, 60).unwrap(), None);
    // Someone else's record, an unknown one: not held.
    assert!(!store.renew("r1", "w2", T0 + 60, 60).unwrap());
    assert!(!store.renew("nobody", "w1", T0 + 60, 60).unwrap());
    // A lease that ran out but was not taken over still holds.
    assert!(store.renew("r1", "w1", T0 + 200, 60).unwrap());
    assert_eq!(
        store.get("r1", T0 + 200).unwrap().unwrap().lease_until,
        Some(T0 + 260)
    );
    assert_eq!(store.claim("w2", T0 + 260, 60).unwrap(), None);
}

fn an_expired_lease_is_claimed_again(store: &dyn Store) {
    store
        .insert(&queued("l1", "x.example", "n", T0, DAY), T0)
        .unwrap();
    store
        .insert(&queued("l2", "x.example", "n", T0 + 10, DAY), T0 + 10)
        .unwrap();
    let first = store.claim("w1", T0 + 20, 60).unwrap().unwrap();
    assert_eq!(first.uuid, "l1");
    // w1 died. After its lease, l1 (older) is claimed before l2 by w2.
    let now = T0 + 81;
    let again = store.claim("w2", now, 60).unwrap().unwrap();
    assert_eq!(again.uuid, "l1");
    assert_eq!(again.status, Status::Running);
    assert_eq!(again.worker.as_deref(), Some("w2"));
    assert_eq!(again.attempts, 2);
    assert_eq!(
        again.started_at,
        Some(T0 + 20),
        "started_at is the first claim's"
    );
    assert_eq!(again.lease_until, Some(now + 60));
    // The old worker holds it no more: neither renew nor complete change anything.
    assert!(!store.renew("l1", "w1", now, 60).unwrap());
    assert!(!store.complete("l1", "w1", "{\"stale\":true}", now).unwrap());
    assert_eq!(store.get("l1", now).unwrap(), Some(again));
    assert!(store.complete("l1", "w2", "{}", now + 1).unwrap());
    // The next claim is l2; nothing after it.
    assert_eq!(store.claim("w3", now + 1, 60).unwrap().unwrap().uuid, "l2");
    assert_eq!(
        store.claim("w3", now + 1000, 60).unwrap().unwrap().uuid,
        "l2"
    );
    assert_eq!(store.claim("w3", now + 1000, 60).unwrap(), None);
}

fn complete_stores_the_result(store: &dyn Store) {
    store
        .insert(&queued("f1", "x.example", "n", T0, DAY), T0)
        .unwrap();
    let claimed = store.claim("w1", T0 + 1, 60).unwrap().unwrap();
    assert!(!store.complete("f1", "w2", "{}", T0 + 2).unwrap());
    let result = r#"{"grade":"B","findings":[{"id":"tls.old"}]}"#;
    assert!(store.complete("f1", "w1", result, T0 + 30).unwrap());
    let done = store.get("f1", T0 + 30).unwrap().unwrap();
    assert_eq!(
        done,
        ScanRecord {
            status: Status::Completed,
            finished_at: Some(T0 + 30),
            worker: None,
            lease_until: None,
            result: Some(result.to_string()),
            ..claimed
        }
    );
    // Done is done: not completed twice, not renewed, never claimed again.
    assert!(!store.complete("f1", "w1", "{}", T0 + 31).unwrap());
    assert!(!store.renew("f1", "w1", T0 + 31, 60).unwrap());
    assert_eq!(store.claim("w1", T0 + 1000, 60).unwrap(), None);
    assert_eq!(store.get("f1", T0 + 1000).unwrap(), Some(done));
    assert!(!store.complete("nobody", "w1", "{}", T0 + 31).unwrap());
}

/// One record goes, queued, running or completed, its result with it; every other record of
/// its target stays, and the queue forgets it.
fn erase_erases_that_record_only(store: &dyn Store) {
    let a = "a.example";
    store.insert(&queued("e1", a, "n", T0, DAY), T0).unwrap();
    store
        .insert(&queued("e2", a, "n", T0 + 1, DAY), T0 + 1)
        .unwrap();
    store
        .insert(&queued("e3", a, "n", T0 + 2, DAY), T0 + 2)
        .unwrap();
    store
        .insert(&queued("e4", "b.example", "n", T0 + 3, DAY), T0 + 3)
        .unwrap();
    let now = T0 + 10;
    assert_eq!(store.claim("w", now, 60).unwrap().unwrap().uuid, "e1");
    assert!(store.complete("e1", "w", "{\"grade\":\"A\"}", now).unwrap());
    assert_eq!(store.claim("w", now, 60).unwrap().unwrap().uuid, "e2");
    // Completed, then running: each erased alone.
    assert!(store.erase("e1").unwrap());
    assert_eq!(store.get("e1", now).unwrap(), None);
    assert!(store.erase("e2").unwrap());
    assert_eq!(store.get("e2", now).unwrap(), None);
    assert!(!store.complete("e2", "w", "{}", now).unwrap());
    assert!(!store.renew("e2", "w", now, 60).unwrap());
    assert!(!store.erase("e1").unwrap());
    assert!(!store.erase("nobody").unwrap());
    // The others stay, in the queue.
    assert!(store.get("e3", now).unwrap().is_some());
    assert!(store.get("e4", now).unwrap().is_some());
    // The running record's lease ran out: it is not claimed again, it is gone.
    let later = now + 1000;
    assert_eq!(store.claim("w", later, 60).unwrap().unwrap().uuid, "e3");
    assert_eq!(store.claim("w", later, 60).unwrap().unwrap().uuid, "e4");
    assert_eq!(store.claim("w", later, 60).unwrap(), None);
    assert!(store.erase("e3").unwrap());
    // Queued: erased before any worker saw it.
    store
        .insert(&queued("e5", a, "n", later, DAY), later)
        .unwrap();
    assert!(store.erase("e5").unwrap());
    assert_eq!(store.claim("w", later, 60).unwrap(), None);
    // Nothing of it is left to purge.
    assert_eq!(store.purge_expired(T0 + 2 * DAY).unwrap(), 1);
}

fn admit_counts_up_to_the_limit(store: &dyn Store) {
    let k = [limit("k", 3, HOUR)];
    let now = T0_MS + 10_000;
    for _ in 0..3 {
        assert_eq!(admit(store, &k, now), Admission::default());
    }
    // Full: room when the oldest of the three leaves, an hour after it came.
    assert_eq!(admit(store, &k, now).full, [(0, HOUR * 1000)]);
    assert_eq!(admit(store, &k, now + HOUR * 1000 - 1).full, [(0, 1)]);
    // Other keys count on their own, a key that merely starts alike too.
    assert!(admit(store, &[limit("k2", 3, HOUR)], now).admitted());
    assert!(admit(store, &[limit("k:", 3, HOUR)], now).admitted());
    // The three leave together: room for three again, no more.
    for _ in 0..3 {
        assert!(admit(store, &k, now + HOUR * 1000).admitted());
    }
    assert!(!admit(store, &k, now + HOUR * 1000).admitted());
    // A limit of zero refuses everything, for a whole window.
    assert_eq!(
        admit(store, &[limit("zero", 0, 60)], T0_MS).full,
        [(0, 60_000)]
    );
    // No limits at all: nothing refuses.
    assert!(admit(store, &[], T0_MS).admitted());
}

fn a_refused_admission_counts_nothing(store: &dyn Store) {
    let r = [limit("r", 3, HOUR)];
    for _ in 0..3 {
        assert!(admit(store, &r, T0_MS).admitted());
    }
    for n in 1..=5 {
        assert!(!admit(store, &r, T0_MS + n).admitted());
    }
    // Had the refusals counted, this would be the ninth hit and refused.
    assert!(admit(store, &[limit("r", 5, HOUR)], T0_MS + 10).admitted());
    assert!(admit(store, &[limit("r", 5, HOUR)], T0_MS + 10).admitted());
    assert!(!admit(store, &[limit("r", 5, HOUR)], T0_MS + 10).admitted());
}

fn admissions_from_threads_count_exactly(store: &dyn Store) {
    let busy = [limit("busy", 60, HOUR)];
    let admitted = Mutex::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            let (admitted, busy) = (&admitted, &busy);
            scope.spawn(move || {
                for _ in 0..25 {
                    if admit(store, busy, T0_MS + 5).admitted() {
                        *admitted.lock().unwrap() += 1;
                    }
                }
            });
        }
    });
    assert_eq!(admitted.into_inner().unwrap(), 60);
}

/// "10 a minute": no 11th within any 60 s, however the hits straddle a clock minute.
fn a_minute_rolls_across_the_clock_minute(store: &dyn Store) {
    let rate = [limit("address:198.51.100.7", 10, 60)];
    // Ten hits between 59.0 and 59.9 s past a clock minute.
    let first = T0_MS + 59_000;
    for n in 0..10 {
        assert!(admit(store, &rate, first + n * 100).admitted(), "hit {n}");
    }
    // The clock minute turned at 60.0: the eleventh, at 60.3, is still within the 60 s of
    // the first, and refused until exactly when that one leaves.
    let eleventh = T0_MS + 60_300;
    assert_eq!(admit(store, &rate, eleventh).full, [(0, 58_700)]);
    assert_eq!(admit(store, &rate, first + 60_000 - 1).full, [(0, 1)]);
    assert!(admit(store, &rate, first + 60_000).admitted());
    // The second leaves 100 ms after the first; until then there is no room again.
    assert_eq!(admit(store, &rate, first + 60_050).full, [(0, 50)]);
    assert!(admit(store, &rate, first + 60_100).admitted());
}

/// "One scan of a target per 5 minutes": a scan at 4:59.4 and another at 5:00.3 are 0.9 s
/// apart, not in two windows.
fn a_target_cooldown_rolls_across_the_five_minute_edge(store: &dyn Store) {
    let target = [limit("target:cloud.example.com", 1, 300)];
    let scanned = T0_MS + 299_400;
    assert!(admit(store, &target, scanned).admitted());
    assert_eq!(admit(store, &target, T0_MS + 300_300).full, [(0, 299_100)]);
    assert_eq!(admit(store, &target, scanned + 299_999).full, [(0, 1)]);
    assert!(admit(store, &target, scanned + 300_000).admitted());
    assert!(!admit(store, &target, scanned + 300_001).admitted());
}

/// "50 a day": no 51st within any 24 h, across midnight too.
fn a_day_rolls_across_midnight(store: &dyn Store) {
    let day = [limit("network:198.51.100.0/24", 50, DAY)];
    // One scan at 23:00, 49 more in the minute before midnight.
    let first = T0_MS + DAY * 1000 - HOUR * 1000;
    assert!(admit(store, &day, first).admitted());
    for n in 0..49 {
        let at = T0_MS + DAY * 1000 - 60_000 + n * 1000;
        assert!(admit(store, &day, at).admitted(), "scan {n}");
    }
    // After midnight the day is still full until 23:00 comes round again.
    let after_midnight = T0_MS + DAY * 1000 + 1;
    assert_eq!(
        admit(store, &day, after_midnight).full,
        [(0, first + DAY * 1000 - after_midnight)]
    );
    assert!(!admit(store, &day, first + DAY * 1000 - 1).admitted());
    assert!(admit(store, &day, first + DAY * 1000).admitted());
    // Full again: the next room is when the scan of 23:59:00 leaves.
    let now = first + DAY * 1000 + 1;
    assert_eq!(
        admit(store, &day, now).full,
        [(0, T0_MS + 2 * DAY * 1000 - 60_000 - now)]
    );
}

/// Every limit is checked before any is spent: a network at its daily cap locks nobody's
/// target, and every full limit is named with its own wait.
fn a_full_limit_spends_no_other(store: &dyn Store) {
    let capped = [
        limit("address:192.0.2.1", 10, 60),
        limit("target:victim.example", 1, 300),
        limit("network:192.0.2.0/24", 1, DAY),
    ];
    assert!(admit(store, &[capped[2].clone()], T0_MS).admitted());
    let refused = admit(store, &capped, T0_MS + 1000);
    assert_eq!(refused.full, [(2, DAY * 1000 - 1000)]);
    // The target's cooldown was not spent, nor the address's rate: another network scans
    // the target at once.
    let other = [
        limit("address:203.0.113.1", 10, 60),
        limit("target:victim.example", 1, 300),
        limit("network:203.0.113.0/24", 1, DAY),
    ];
    assert!(admit(store, &other, T0_MS + 2000).admitted());
    // Now two limits refuse the first network: both are named.
    assert_eq!(
        admit(store, &capped, T0_MS + 3000).full,
        [(1, 299_000), (2, DAY * 1000 - 3000)]
    );
    // Its address spent nothing in all this: ten more fit in its minute.
    let address = [capped[0].clone()];
    for n in 0..10 {
        assert!(
            admit(store, &address, T0_MS + 4000 + n).admitted(),
            "hit {n}"
        );
    }
}

fn a_paused_network_is_refused_and_spends_nothing(store: &dyn Store) {
    let one = [limit("target:x.example", 1, 300)];
    store.pause("net", T0 + HOUR, T0).unwrap();
    assert_eq!(
        admit(store, &one, T0_MS + 500),
        Admission {
            paused_until: Some(T0 + HOUR),
            full: Vec::new(),
        }
    );
    // Another network is not paused by it.
    assert!(store.admit(&[], "other", T0_MS).unwrap().admitted());
    // The pause ends by itself, at its second; the target's room was never spent.
    assert!(!admit(store, &one, T0_MS + HOUR * 1000 - 1).admitted());
    assert!(admit(store, &one, T0_MS + HOUR * 1000).admitted());
}

fn pauses_are_listed_and_lifted(store: &dyn Store) {
    assert_eq!(store.pauses(T0).unwrap(), []);
    store.pause("203.0.113.0/24", T0 + DAY, T0).unwrap();
    store.pause("198.51.100.0/24", T0 + HOUR, T0).unwrap();
    store.pause("192.0.2.0/24", T0 + 10, T0).unwrap();
    let listed = |now| store.pauses(now).unwrap();
    let pause = |network: &str, until| (network.to_string(), until);
    assert_eq!(
        listed(T0),
        [
            pause("192.0.2.0/24", T0 + 10),
            pause("198.51.100.0/24", T0 + HOUR),
            pause("203.0.113.0/24", T0 + DAY),
        ]
    );
    // A pause that ended is no longer listed.
    assert_eq!(
        listed(T0 + 10),
        [
            pause("198.51.100.0/24", T0 + HOUR),
            pause("203.0.113.0/24", T0 + DAY),
        ]
    );
    // Lifted: not paused, its outcomes forgotten (else the next fruitless scan pauses it
    // again), admitted at once.
    store
        .record_outcome("203.0.113.0/24", false, 5, T0, DAY)
        .unwrap();
    assert!(store.lift_pause("203.0.113.0/24", T0 + 1).unwrap());
    assert_eq!(
        store.outcomes("203.0.113.0/24").unwrap(),
        Vec::<bool>::new()
    );
    assert_eq!(store.paused_until("203.0.113.0/24", T0 + 1).unwrap(), None);
    assert!(
        store
            .admit(&[], "203.0.113.0/24", T0_MS + 2000)
            .unwrap()
            .admitted()
    );
    assert!(!store.lift_pause("203.0.113.0/24", T0 + 1).unwrap());
    // A pause that ended is nothing to lift.
    assert!(!store.lift_pause("192.0.2.0/24", T0 + 20).unwrap());
    assert_eq!(listed(T0 + 1), [pause("198.51.100.0/24", T0 + HOUR)]);
}

fn full_limits_are_listed_and_forgotten(store: &dyn Store) {
    let target = |t: &str| [limit(&format!("target:{t}"), 1, 300)];
    // A hit that left its window, then three targets in their cooldown (one with a glob's
    // characters in its name).
    assert!(admit(store, &target("c.example"), T0_MS - 400_000).admitted());
    assert!(admit(store, &target("a.example"), T0_MS).admitted());
    assert!(admit(store, &target("b.example"), T0_MS + 1000).admitted());
    assert!(admit(store, &target("[::1]:443"), T0_MS).admitted());
    // An address below its limit.
    for n in 0..3 {
        assert!(admit(store, &[limit("address:192.0.2.1", 10, 60)], T0_MS + n).admitted());
    }
    let now = T0_MS + 2000;
    let full = |prefix: &str, count, window_secs: i64| {
        store
            .full_limits(prefix, count, window_secs * 1000, now)
            .unwrap()
    };
    let held = |key: &str, wait| (key.to_string(), wait);
    assert_eq!(
        full("target:", 1, 300),
        [
            held("target:[::1]:443", 298_000),
            held("target:a.example", 298_000),
            held("target:b.example", 299_000),
        ]
    );
    assert_eq!(
        full("target:a", 1, 300),
        [held("target:a.example", 298_000)]
    );
    assert_eq!(
        full("target:[", 1, 300),
        [held("target:[::1]:443", 298_000)]
    );
    assert_eq!(full("address:", 10, 60), []);
    assert_eq!(full("address:", 3, 60), [held("address:192.0.2.1", 58_000)]);
    // Forgotten: room at once.
    assert!(store.forget_hits("target:a.example").unwrap());
    assert!(!store.forget_hits("target:a.example").unwrap());
    assert!(admit(store, &target("a.example"), now).admitted());
    assert!(!store.forget_hits("target:nobody.example").unwrap());
}

fn outcomes_newest_first_capped(store: &dyn Store) {
    assert_eq!(store.outcomes("n1").unwrap(), Vec::<bool>::new());
    let sequence = [true, false, false, true, false, false, false];
    for (i, found) in sequence.iter().enumerate() {
        store
            .record_outcome("n1", *found, 5, T0 + i as i64, DAY)
            .unwrap();
    }
    assert_eq!(
        store.outcomes("n1").unwrap(),
        [false, false, false, true, false]
    );
    store.record_outcome("n2", true, 5, T0, DAY).unwrap();
    assert_eq!(store.outcomes("n2").unwrap(), [true]);
    store.record_outcome("n1", true, 5, T0 + 10, DAY).unwrap();
    assert_eq!(
        store.outcomes("n1").unwrap(),
        [true, false, false, false, true]
    );
    // A smaller cap trims the older ones.
    store.record_outcome("n1", false, 2, T0 + 11, DAY).unwrap();
    assert_eq!(store.outcomes("n1").unwrap(), [false, true]);
}

fn pause_until(store: &dyn Store) {
    assert_eq!(store.paused_until("n1", T0).unwrap(), None);
    store.pause("n1", T0 + DAY, T0).unwrap();
    assert_eq!(store.paused_until("n1", T0).unwrap(), Some(T0 + DAY));
    assert_eq!(
        store.paused_until("n1", T0 + DAY - 1).unwrap(),
        Some(T0 + DAY)
    );
    assert_eq!(store.paused_until("n1", T0 + DAY).unwrap(), None);
    assert_eq!(store.paused_until("n2", T0).unwrap(), None);
    // A new pause replaces the old one.
    store.pause("n1", T0 + 2 * DAY, T0 + 1).unwrap();
    assert_eq!(
        store.paused_until("n1", T0 + DAY).unwrap(),
        Some(T0 + 2 * DAY)
    );
}

fn purge_expired_removes_only_expired(store: &dyn Store) {
    store
        .insert(&queued("p1", "x.example", "n", T0, 100), T0)
        .unwrap();
    store
        .insert(&queued("p2", "x.example", "n", T0, 200), T0)
        .unwrap();
    store
        .insert(&queued("p3", "y.example", "n", T0 + 10, 100), T0 + 10)
        .unwrap();
    store.claim("w", T0 + 5, 60).unwrap().unwrap();
    assert!(admit(store, &[limit("k", 1, 60)], T0_MS).admitted());
    store.pause("n", T0 + 100, T0).unwrap();
    store.record_outcome("n", false, 5, T0, 150).unwrap();
    assert_eq!(store.purge_expired(T0 + 99).unwrap(), 0);
    assert_eq!(store.purge_expired(T0 + 110).unwrap(), 2);
    assert_eq!(store.get("p1", T0).unwrap(), None);
    assert_eq!(store.get("p3", T0 + 10).unwrap(), None);
    assert!(store.get("p2", T0 + 110).unwrap().is_some());
    // The purged ones left the queue; the survivor is still claimable.
    assert_eq!(store.claim("w", T0 + 110, 60).unwrap().unwrap().uuid, "p2");
    assert_eq!(store.claim("w", T0 + 110, 60).unwrap(), None);
    assert!(!store.erase("p1").unwrap() && !store.erase("p3").unwrap());
    assert!(store.erase("p2").unwrap());
    // A pause past its end reads as none; a window that passed counts afresh.
    assert_eq!(store.paused_until("n", T0 + 110).unwrap(), None);
    assert!(admit(store, &[limit("k", 1, 60)], T0_MS + 120_000).admitted());
    // Outcomes live their time after the newest, then the purge forgets them.
    assert_eq!(store.outcomes("n").unwrap(), [false]);
    assert_eq!(store.purge_expired(T0 + 149).unwrap(), 0);
    assert_eq!(store.outcomes("n").unwrap(), [false]);
    assert_eq!(store.purge_expired(T0 + 1000).unwrap(), 0);
    assert_eq!(store.outcomes("n").unwrap(), Vec::<bool>::new());
}
