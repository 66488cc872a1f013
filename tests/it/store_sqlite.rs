//! The SQLite store (`--store sqlite:PATH`): the store conformance suite on real files, two
//! processes' worth of stores on one file, and a restart that keeps records, queue and counters.

use crate::support::store_conformance::{self as conformance, T0};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use storage_security::web::store::sqlite::SqliteStore;
use storage_security::web::store::{self, Status, Store};

/// A fresh, empty directory under the target's scratch space.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("store-sqlite-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_sqlite_store_passes_the_conformance_suite() {
    let dir = scratch("conformance");
    let next = AtomicUsize::new(0);
    conformance::run_all(&|| {
        let n = next.fetch_add(1, Ordering::Relaxed);
        Box::new(SqliteStore::open(dir.join(format!("store-{n}.db"))).unwrap())
    });
}

#[test]
fn two_stores_on_one_file_behave_as_one() {
    let dir = scratch("two-nodes");
    let path = dir.join("store.db");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    conformance::two_nodes(&a, &b);
}

#[test]
fn a_reopened_store_keeps_records_queue_and_counters() {
    let dir = scratch("reopen");
    let path = dir.join("store.db");
    let spec = format!("sqlite:{}", path.display());
    let day = 86_400;
    {
        let store = store::open(&spec, store::DEFAULT_TIMEOUT).unwrap();
        for (i, uuid) in ["q1", "q2", "q3"].into_iter().enumerate() {
            let at = T0 + i as i64;
            store
                .insert(&conformance::queued(uuid, "x.example", "net", at, day), at)
                .unwrap();
        }
        assert_eq!(store.claim("w1", T0 + 10, 60).unwrap().unwrap().uuid, "q1");
        assert!(
            store
                .complete("q1", "w1", "{\"grade\":\"A\"}", T0 + 20)
                .unwrap()
        );
        assert_eq!(store.claim("w1", T0 + 30, 60).unwrap().unwrap().uuid, "q2");
        let submit = [conformance::limit("submit", 3, 3600)];
        assert!(conformance::admit(&*store, &submit, (T0 + 40) * 1000).admitted());
        assert!(conformance::admit(&*store, &submit, (T0 + 41) * 1000).admitted());
        store.record_outcome("net", false, 5, T0, day).unwrap();
        store.pause("paused-net", T0 + day, T0).unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let done = store.get("q1", T0 + 50).unwrap().unwrap();
    assert_eq!(done.status, Status::Completed);
    assert_eq!(done.result.as_deref(), Some("{\"grade\":\"A\"}"));
    let running = store.get("q2", T0 + 50).unwrap().unwrap();
    assert_eq!(running.status, Status::Running);
    assert!(
        store.renew("q2", "w1", T0 + 50, 60).unwrap(),
        "the lease survives"
    );
    assert_eq!(store.claim("w2", T0 + 50, 60).unwrap().unwrap().uuid, "q3");
    assert_eq!(store.claim("w2", T0 + 50, 60).unwrap(), None);
    let submit = [conformance::limit("submit", 3, 3600)];
    assert!(conformance::admit(&store, &submit, (T0 + 60) * 1000).admitted());
    assert_eq!(
        conformance::admit(&store, &submit, (T0 + 60) * 1000).full,
        [(0, (3600 - 20) * 1000)],
        "the first hit before the restart leaves first"
    );
    assert_eq!(store.outcomes("net").unwrap(), [false]);
    assert_eq!(
        store.paused_until("paused-net", T0).unwrap(),
        Some(T0 + day)
    );
}

#[test]
fn the_file_is_in_wal_mode_with_a_schema_version() {
    let dir = scratch("wal");
    let path = dir.join("store.db");
    drop(SqliteStore::open(&path).unwrap());
    let header = std::fs::read(&path).unwrap();
    // The file header: "SQLite format 3\0", WAL read and write versions (2) at 18 and 19, and
    // the user_version (big-endian) at 60.
    assert!(header.starts_with(b"SQLite format 3\0"));
    assert_eq!((header[18], header[19]), (2, 2), "WAL mode");
    assert_eq!(&header[60..64], &[0, 0, 0, 3], "user_version 3");
    // Opening it again is fine; a file from a newer version is refused.
    drop(SqliteStore::open(&path).unwrap());
    let mut newer = header.clone();
    newer[60..64].copy_from_slice(&[0, 0, 0, 9]);
    let newer_path = dir.join("newer.db");
    std::fs::write(&newer_path, newer).unwrap();
    let Err(error) = SqliteStore::open(&newer_path) else {
        panic!("a newer schema is refused");
    };
    assert!(error.0.contains("newer version"), "{error}");
    assert!(error.0.contains("newer.db"), "{error}");
}

#[test]
fn an_unusable_path_is_a_store_error_naming_it() {
    let dir = scratch("unusable");
    let path = dir.join("missing-dir").join("store.db");
    let Err(error) = store::open(
        &format!("sqlite:{}", path.display()),
        store::DEFAULT_TIMEOUT,
    ) else {
        panic!("a missing directory");
    };
    assert!(error.0.contains(&path.display().to_string()), "{error}");
}

/// The store holds every submitter's targets and results: the file and its WAL and shared
/// memory companions are the operator's alone, new or left by an older version.
#[test]
fn the_file_and_its_companions_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("modes");
    let mode = |name: &str| {
        std::fs::metadata(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .permissions()
            .mode()
            & 0o777
    };
    let written = |path: &Path| {
        let store = SqliteStore::open(path).unwrap();
        store
            .insert(
                &conformance::queued("m1", "x.example", "net", T0, 86_400),
                T0,
            )
            .unwrap();
        store
    };
    let store = written(&dir.join("new.db"));
    for name in ["new.db", "new.db-wal", "new.db-shm"] {
        assert_eq!(mode(name), 0o600, "{name}");
    }
    drop(store);

    // An older file, readable by everyone, with its companions.
    let old = dir.join("old.db");
    drop(written(&old));
    for name in ["old.db", "old.db-wal", "old.db-shm"] {
        let path = dir.join(name);
        if path.exists() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    std::fs::write(dir.join("old.db-wal"), b"").unwrap();
    std::fs::set_permissions(
        dir.join("old.db-wal"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let store = SqliteStore::open(&old).unwrap();
    assert!(store.get("m1", T0).unwrap().is_some());
    for name in ["old.db", "old.db-wal", "old.db-shm"] {
        assert_eq!(mode(name), 0o600, "{name}");
    }
}
