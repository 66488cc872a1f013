//! The embedded store (`--store sqlite:PATH`): one SQLite file in WAL mode, so records, the
//! queue and the limit counters survive a restart. One connection, lent to one call at a
//! time, serves every thread of the process; several processes may share the file (SQLite's
//! write lock and the busy timeout serialize them, and `claim` is one statement, so never two
//! claim one record).

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The one connection, lent to one call at a time: a call waits for it at most until its
/// deadline (std's mutex has no timed lock), and gets it the moment it is given back.
struct Lender {
    slot: Mutex<Option<Connection>>,
    returned: Condvar,
}

/// The connection while a call has it; dropping it (a panic too) gives it back.
struct Loan<'a> {
    lender: &'a Lender,
    connection: Option<Connection>,
}

impl Lender {
    fn new(connection: Connection) -> Lender {
        Lender {
            slot: Mutex::new(Some(connection)),
            returned: Condvar::new(),
        }
    }

    /// The connection, waiting for it until `until` at most.
    fn borrow(&self, until: Instant) -> Option<Loan<'_>> {
        let wait = until.saturating_duration_since(Instant::now());
        let (mut slot, _) = self
            .returned
            .wait_timeout_while(crate::server::lock(&self.slot), wait, |slot| slot.is_none())
            .unwrap_or_else(|e| e.into_inner());
        slot.take().map(|connection| Loan {
            lender: self,
            connection: Some(connection),
        })
    }
}

impl std::ops::Deref for Loan<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.connection.as_ref().expect("lent")
    }
}

impl std::ops::DerefMut for Loan<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.connection.as_mut().expect("lent")
    }
}

impl Drop for Loan<'_> {
    fn drop(&mut self) {
        // A call that panicked left no transaction open (it rolls back on drop).
        *crate::server::lock(&self.lender.slot) = self.connection.take();
        self.lender.returned.notify_one();
    }
}

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::{Admission, Limit, ScanRecord, Status, Store, StoreError, StoreResult, room_in};

/// The schema version this build writes (`PRAGMA user_version`); a file of a newer one is
/// refused rather than misread. A future migration goes from each older version up to this.
const SCHEMA_VERSION: i64 = 3;

/// Rows a purge deletes per statement.
const PURGE_BATCH: i64 = 500;

/// What `purge_expired` deletes besides records (parameters: `now`, a batch size): the hits
/// that left their window, the outcomes and the pauses that ended.
const PURGE_ENDED: [&str; 3] = [
    "DELETE FROM hits WHERE rowid IN \
         (SELECT rowid FROM hits WHERE ends_ms <= ?1 * 1000 LIMIT ?2)",
    "DELETE FROM outcomes WHERE seq IN \
         (SELECT seq FROM outcomes WHERE expires_at <= ?1 LIMIT ?2)",
    "DELETE FROM pauses WHERE network IN \
         (SELECT network FROM pauses WHERE until <= ?1 LIMIT ?2)",
];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS scans (
    seq          INTEGER PRIMARY KEY,
    uuid         TEXT NOT NULL UNIQUE,
    target       TEXT NOT NULL,
    network      TEXT NOT NULL,
    request      TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed')),
    submitted_at INTEGER NOT NULL,
    started_at   INTEGER,
    finished_at  INTEGER,
    worker       TEXT,
    lease_until  INTEGER,
    attempts     INTEGER NOT NULL DEFAULT 0,
    result       TEXT,
    expires_at   INTEGER NOT NULL,
    addresses    TEXT NOT NULL DEFAULT '',
    erase_hash   TEXT
);
-- The queue: claimable records, oldest submission first.
CREATE INDEX IF NOT EXISTS scans_queue ON scans (submitted_at) WHERE status <> 'completed';
CREATE INDEX IF NOT EXISTS scans_target ON scans (target);
CREATE INDEX IF NOT EXISTS scans_expiry ON scans (expires_at);
-- The limits' sliding logs: one row per admitted hit (Unix milliseconds), until it leaves
-- its window (`ends_ms`, what the purge goes by).
CREATE TABLE IF NOT EXISTS hits (
    key     TEXT NOT NULL,
    at_ms   INTEGER NOT NULL,
    ends_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS hits_key ON hits (key, at_ms);
CREATE INDEX IF NOT EXISTS hits_expiry ON hits (ends_ms);
CREATE TABLE IF NOT EXISTS outcomes (
    seq           INTEGER PRIMARY KEY,
    network       TEXT NOT NULL,
    found_product INTEGER NOT NULL,
    at            INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outcomes_network ON outcomes (network, seq);
CREATE INDEX IF NOT EXISTS outcomes_expiry ON outcomes (expires_at);
CREATE TABLE IF NOT EXISTS pauses (
    network TEXT PRIMARY KEY,
    until   INTEGER NOT NULL
) WITHOUT ROWID;
";

/// From schema 1: the fixed-window counters give way to the sliding logs (the windows running
/// at the upgrade start empty), and outcomes get an end (a week after they were recorded).
const MIGRATE_1_TO_2: &str = "
DROP TABLE IF EXISTS counters;
ALTER TABLE outcomes ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
UPDATE outcomes SET expires_at = at + 604800;
";

/// From schema 2: a record keeps the addresses its target was resolved to at submission
/// (space-separated) and the hash of its erase key; older records have neither.
const MIGRATE_2_TO_3: &str = "
ALTER TABLE scans ADD COLUMN addresses TEXT NOT NULL DEFAULT '';
ALTER TABLE scans ADD COLUMN erase_hash TEXT;
";

const COLUMNS: &str = "uuid, target, network, request, status, submitted_at, started_at, \
                       finished_at, worker, lease_until, attempts, result, expires_at, \
                       addresses, erase_hash";

/// The SQLite store. Cheap to share: every method borrows the one connection briefly.
pub struct SqliteStore {
    connection: Lender,
    /// The health check's own connection, opened with the store: a check made while the
    /// process is out of file descriptors (an attack holding connections) still answers,
    /// where opening a connection then would fail. `None` after it failed: reopened.
    health: std::sync::Mutex<Option<Connection>>,
    path: PathBuf,
    /// How long a call waits for another process's write lock (`--store-timeout`).
    timeout: Duration,
}

impl SqliteStore {
    /// Opens (creating if need be) the store file at `path`: WAL mode, the default timeout,
    /// the schema created or checked.
    pub fn open(path: impl AsRef<Path>) -> StoreResult<SqliteStore> {
        SqliteStore::open_with(path, super::DEFAULT_TIMEOUT)
    }

    /// Like [`SqliteStore::open`], a statement waiting at most `timeout` for another
    /// process's write lock before it fails.
    pub fn open_with(path: impl AsRef<Path>, timeout: Duration) -> StoreResult<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        let connection = private_files(&path)
            .map_err(Into::into)
            .and_then(|()| connect(&path, timeout))
            .map_err(|e| StoreError(format!("store {}: {e}", path.display())))?;
        let health = std::sync::Mutex::new(health_connection(&path).ok());
        Ok(SqliteStore {
            connection: Lender::new(connection),
            health,
            path,
            timeout,
        })
    }

    fn error(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError(format!("store {}: {e}", self.path.display()))
    }
}

/// A connection of the health check's own, to the existing store file.
fn health_connection(path: &Path) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)
}

/// Makes the store file the operator's alone (0600) before any data is in it: it holds every
/// submitter's targets and results. A new file is created so; SQLite creates its `-wal` and
/// `-shm` companions with the file's mode. A file of an older version, or companions left
/// over, are narrowed to 0600.
fn private_files(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let companion = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    for file in [path.to_path_buf(), companion("-wal"), companion("-shm")] {
        let Ok(metadata) = std::fs::metadata(&file) else {
            continue;
        };
        if metadata.is_file() && metadata.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

/// Opens the file in WAL mode and brings its schema up to [`SCHEMA_VERSION`].
fn connect(path: &Path, timeout: Duration) -> Result<Connection, Box<dyn std::error::Error>> {
    let mut connection = Connection::open(path)?;
    connection.busy_timeout(timeout)?;
    let mode: String = connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!("SQLite refused WAL mode (journal mode {mode})").into());
    }
    // In WAL mode NORMAL loses at most the last transactions on a power cut, never the file.
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    // An erased or expired record is overwritten, not left in a free page of the file.
    connection.pragma_update(None, "secure_delete", "ON")?;
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(format!(
            "written by a newer version (schema {version}, this one knows {SCHEMA_VERSION})"
        )
        .into());
    }
    if version == 1 {
        tx.execute_batch(MIGRATE_1_TO_2)?;
    }
    // A file without records yet gets the table whole from the schema below.
    let has_scans: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'scans')",
        [],
        |row| row.get(0),
    )?;
    if (1..=2).contains(&version) && has_scans {
        tx.execute_batch(MIGRATE_2_TO_3)?;
    }
    tx.execute_batch(SCHEMA)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(connection)
}

/// A column whose text does not read as its field.
fn unreadable(
    column: usize,
    error: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, error.into())
}

fn record_from_row(row: &Row<'_>) -> rusqlite::Result<ScanRecord> {
    let request: String = row.get(3)?;
    let status: String = row.get(4)?;
    let addresses: String = row.get(13)?;
    Ok(ScanRecord {
        uuid: row.get(0)?,
        target: row.get(1)?,
        network: row.get(2)?,
        request: serde_json::from_str(&request).map_err(|e| unreadable(3, e))?,
        status: Status::parse(&status)
            .ok_or_else(|| unreadable(4, format!("unknown status {status:?}")))?,
        submitted_at: row.get(5)?,
        started_at: row.get(6)?,
        finished_at: row.get(7)?,
        worker: row.get(8)?,
        lease_until: row.get(9)?,
        attempts: row.get(10)?,
        result: row.get(11)?,
        expires_at: row.get(12)?,
        addresses: super::parse_addresses(&addresses).map_err(|e| unreadable(13, e))?,
        erase_hash: row.get(14)?,
    })
}

impl Store for SqliteStore {
    fn insert(&self, record: &ScanRecord, _now: i64) -> StoreResult<()> {
        let request = serde_json::to_string(&record.request).map_err(|e| self.error(e))?;
        self.with(|c| {
            c.execute(
                &format!(
                    "INSERT INTO scans ({COLUMNS}) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
                ),
                params![
                    record.uuid,
                    record.target,
                    record.network,
                    request,
                    record.status.as_str(),
                    record.submitted_at,
                    record.started_at,
                    record.finished_at,
                    record.worker,
                    record.lease_until,
                    record.attempts,
                    record.result,
                    record.expires_at,
                    super::addresses_text(&record.addresses),
                    record.erase_hash,
                ],
            )
            .map(drop)
        })
    }

    fn get(&self, uuid: &str, now: i64) -> StoreResult<Option<ScanRecord>> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM scans WHERE uuid = ?1 AND expires_at > ?2"),
                params![uuid, now],
                record_from_row,
            )
            .optional()
        })
    }

    fn claim(&self, worker: &str, now: i64, lease_secs: i64) -> StoreResult<Option<ScanRecord>> {
        // One statement: SQLite's write lock makes it atomic across threads and processes.
        // `status <> 'completed'` lets the partial queue index serve the subquery.
        self.with(|c| {
            c.query_row(
                &format!(
                    "UPDATE scans SET status = 'running', worker = ?1, lease_until = ?2 + ?3, \
                         attempts = attempts + 1, started_at = COALESCE(started_at, ?2) \
                     WHERE seq = (SELECT seq FROM scans \
                         WHERE status <> 'completed' AND expires_at > ?2 \
                           AND (status = 'queued' OR lease_until < ?2) \
                         ORDER BY submitted_at, seq LIMIT 1) \
                     RETURNING {COLUMNS}"
                ),
                params![worker, now, lease_secs],
                record_from_row,
            )
            .optional()
        })
    }

    fn renew(&self, uuid: &str, worker: &str, now: i64, lease_secs: i64) -> StoreResult<bool> {
        self.changed(
            "UPDATE scans SET lease_until = ?3 + ?4 \
             WHERE uuid = ?1 AND status = 'running' AND worker = ?2 AND expires_at > ?3",
            params![uuid, worker, now, lease_secs],
        )
    }

    fn complete(&self, uuid: &str, worker: &str, result: &str, now: i64) -> StoreResult<bool> {
        self.changed(
            "UPDATE scans SET status = 'completed', result = ?3, finished_at = ?4, \
                 worker = NULL, lease_until = NULL \
             WHERE uuid = ?1 AND status = 'running' AND worker = ?2 AND expires_at > ?4",
            params![uuid, worker, result, now],
        )
    }

    fn erase(&self, uuid: &str) -> StoreResult<bool> {
        self.changed("DELETE FROM scans WHERE uuid = ?1", params![uuid])
    }

    fn admit(&self, limits: &[Limit], network: &str, now_ms: i64) -> StoreResult<Admission> {
        // IMMEDIATE: the write lock from the first read, so another process cannot take the
        // last room between this read and this write.
        self.transaction(|tx| {
            let mut admission = Admission {
                paused_until: tx
                    .query_row(
                        "SELECT until FROM pauses WHERE network = ?1 AND until * 1000 > ?2",
                        params![network, now_ms],
                        |row| row.get(0),
                    )
                    .optional()?,
                full: Vec::new(),
            };
            for (index, limit) in limits.iter().enumerate() {
                let newest_first = tx
                    .prepare_cached(
                        "SELECT at_ms FROM hits WHERE key = ?1 AND at_ms > ?2 \
                         ORDER BY at_ms DESC LIMIT ?3",
                    )?
                    .query_map(
                        params![limit.key, now_ms - limit.window_ms, limit.limit],
                        |row| row.get::<_, i64>(0),
                    )?
                    .collect::<rusqlite::Result<Vec<i64>>>()?;
                if let Some(wait) = room_in(&newest_first, limit.limit, limit.window_ms, now_ms) {
                    admission.full.push((index, wait));
                }
            }
            if admission.admitted() {
                for limit in limits {
                    // The hits that left the window go as the log grows, so a busy key stays
                    // small between purges.
                    tx.execute(
                        "DELETE FROM hits WHERE key = ?1 AND at_ms <= ?2",
                        params![limit.key, now_ms - limit.window_ms],
                    )?;
                    tx.execute(
                        "INSERT INTO hits (key, at_ms, ends_ms) VALUES (?1, ?2, ?3)",
                        params![limit.key, now_ms, now_ms + limit.window_ms],
                    )?;
                }
            }
            Ok(admission)
        })
    }

    fn record_outcome(
        &self,
        network: &str,
        found_product: bool,
        keep: usize,
        now: i64,
        ttl_secs: i64,
    ) -> StoreResult<()> {
        self.transaction(|tx| {
            tx.execute(
                "INSERT INTO outcomes (network, found_product, at, expires_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![network, found_product, now, now + ttl_secs],
            )?;
            // The older outcomes live as long as the newest: they are read together.
            tx.execute(
                "UPDATE outcomes SET expires_at = ?2 WHERE network = ?1",
                params![network, now + ttl_secs],
            )?;
            tx.execute(
                "DELETE FROM outcomes WHERE network = ?1 AND seq NOT IN \
                     (SELECT seq FROM outcomes WHERE network = ?1 ORDER BY seq DESC LIMIT ?2)",
                params![network, i64::try_from(keep).unwrap_or(i64::MAX)],
            )
            .map(drop)
        })
    }

    fn outcomes(&self, network: &str) -> StoreResult<Vec<bool>> {
        self.with(|c| {
            c.prepare_cached(
                "SELECT found_product FROM outcomes WHERE network = ?1 ORDER BY seq DESC",
            )?
            .query_map(params![network], |row| row.get::<_, bool>(0))?
            .collect()
        })
    }

    fn pause(&self, network: &str, until: i64, _now: i64) -> StoreResult<()> {
        let upsert = "INSERT INTO pauses (network, until) VALUES (?1, ?2) \
                      ON CONFLICT (network) DO UPDATE SET until = excluded.until";
        self.with(|c| c.execute(upsert, params![network, until]).map(drop))
    }

    fn paused_until(&self, network: &str, now: i64) -> StoreResult<Option<i64>> {
        self.with(|c| {
            c.query_row(
                "SELECT until FROM pauses WHERE network = ?1 AND until > ?2",
                params![network, now],
                |row| row.get(0),
            )
            .optional()
        })
    }

    fn pauses(&self, now: i64) -> StoreResult<Vec<(String, i64)>> {
        self.with(|c| {
            c.prepare_cached("SELECT network, until FROM pauses WHERE until > ?1 ORDER BY network")?
                .query_map(params![now], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect()
        })
    }

    fn lift_pause(&self, network: &str, now: i64) -> StoreResult<bool> {
        self.transaction(|tx| {
            let paused: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM pauses WHERE network = ?1 AND until > ?2)",
                params![network, now],
                |row| row.get(0),
            )?;
            tx.execute("DELETE FROM pauses WHERE network = ?1", params![network])?;
            tx.execute("DELETE FROM outcomes WHERE network = ?1", params![network])?;
            Ok(paused)
        })
    }

    fn full_limits(
        &self,
        prefix: &str,
        limit: u32,
        window_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Vec<(String, i64)>> {
        let rows: Vec<(String, i64)> = self.with(|c| {
            c.prepare_cached(
                "SELECT key, at_ms FROM hits \
                 WHERE substr(key, 1, length(?1)) = ?1 AND at_ms > ?2 \
                 ORDER BY key, at_ms DESC",
            )?
            .query_map(params![prefix, now_ms - window_ms], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?
            .collect()
        })?;
        let mut full = Vec::new();
        for chunk in rows.chunk_by(|a, b| a.0 == b.0) {
            let newest_first: Vec<i64> = chunk.iter().map(|(_, at)| *at).collect();
            if let Some(wait) = room_in(&newest_first, limit, window_ms, now_ms) {
                full.push((chunk[0].0.clone(), wait));
            }
        }
        Ok(full)
    }

    fn forget_hits(&self, key: &str) -> StoreResult<bool> {
        self.changed("DELETE FROM hits WHERE key = ?1", params![key])
    }

    fn purge_expired(&self, now: i64) -> StoreResult<usize> {
        let records = self.delete_batched(
            "DELETE FROM scans WHERE seq IN \
                 (SELECT seq FROM scans WHERE expires_at <= ?1 LIMIT ?2)",
            now,
        )?;
        let mut others = 0;
        for delete in PURGE_ENDED {
            others += self.delete_batched(delete, now)?;
        }
        if records + others > 0 {
            // secure_delete zeroed the pages in the file; the WAL still holds their older
            // copies until a checkpoint writes them back and empties it.
            self.with(|c| c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())))?;
        }
        Ok(records)
    }

    fn ping(&self, within: Duration) -> StoreResult<()> {
        // Taking the write lock (and giving it back) is the truth: a read passes while another
        // process holds the lock and every write waits. On a connection of its own, so the
        // check never queues behind a call of ours waiting for the same lock.
        let within = super::call_budget(within.min(self.timeout));
        let check = |connection: &Connection| -> rusqlite::Result<()> {
            connection.busy_timeout(within)?;
            connection.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")
        };
        // Another check in flight holds the health connection: this one opens its own.
        let Ok(mut held) = self.health.try_lock() else {
            return health_connection(&self.path)
                .and_then(|c| check(&c))
                .map_err(|e| self.error(e));
        };
        if held.is_none() {
            *held = Some(health_connection(&self.path).map_err(|e| self.error(e))?);
        }
        let checked = held.as_ref().map_or(Ok(()), check);
        if checked.is_err() {
            // A connection that failed is not trusted again: the next check opens a new one.
            *held = None;
        }
        checked.map_err(|e| self.error(e))
    }
}

impl SqliteStore {
    /// Runs `f` on the connection within the store's timeout (what the request has left of
    /// it): waiting for the connection (another thread's call may be waiting for a lock) and
    /// for another process's write lock both come out of that one deadline. An error names the
    /// store.
    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> StoreResult<T> {
        let deadline = Instant::now() + super::call_budget(self.timeout);
        let passed = || self.error("the request's store deadline passed");
        let mut connection = self.connection.borrow(deadline).ok_or_else(passed)?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(passed());
        }
        connection
            .busy_timeout(left)
            .and_then(|()| f(&mut connection))
            .map_err(|e| self.error(e))
    }

    /// Runs `f` in an IMMEDIATE transaction, committed when `f` succeeds (rolled back when it
    /// fails).
    fn transaction<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction) -> rusqlite::Result<T>,
    ) -> StoreResult<T> {
        self.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        })
    }

    /// Runs `statement`; whether it changed a row.
    fn changed(&self, statement: &str, params: impl rusqlite::Params) -> StoreResult<bool> {
        self.with(|c| c.execute(statement, params)).map(|n| n > 0)
    }

    /// Runs `delete` (parameters: `now`, a batch size) until it deletes less than a batch;
    /// how many rows went. The lock is released between batches, so requests are served
    /// while a large purge runs.
    fn delete_batched(&self, delete: &str, now: i64) -> StoreResult<usize> {
        let mut deleted = 0;
        loop {
            let gone = self.with(|c| c.execute(delete, params![now, PURGE_BATCH]))?;
            deleted += gone;
            if (gone as i64) < PURGE_BATCH {
                return Ok(deleted);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::store::ScanRequest;

    #[test]
    fn a_schema_1_file_is_migrated() {
        let dir = std::env::temp_dir().join(format!("css-sqlite-v1-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("store.db");
        let _ = std::fs::remove_file(&path);
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE counters (key TEXT NOT NULL, window_start INTEGER NOT NULL, \
                     window_end INTEGER NOT NULL, count INTEGER NOT NULL, \
                     PRIMARY KEY (key, window_start)) WITHOUT ROWID;
                 CREATE TABLE outcomes (seq INTEGER PRIMARY KEY, network TEXT NOT NULL, \
                     found_product INTEGER NOT NULL, at INTEGER NOT NULL);
                 INSERT INTO counters VALUES ('address:192.0.2.1', 0, 60, 10);
                 INSERT INTO outcomes (network, found_product, at) VALUES ('net', 0, 1000);
                 PRAGMA user_version = 1;",
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(store.outcomes("net").unwrap(), [false]);
        // The outcome ends a week after it was recorded.
        store.purge_expired(1000 + 604_799).unwrap();
        assert_eq!(store.outcomes("net").unwrap(), [false]);
        store.purge_expired(1000 + 604_800).unwrap();
        assert_eq!(store.outcomes("net").unwrap(), Vec::<bool>::new());
        let counters: i64 = store
            .connection
            .borrow(Instant::now() + super::super::DEFAULT_TIMEOUT)
            .unwrap()
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'counters'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(counters, 0);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A schema 2 file's records read on, without addresses or an erase key's hash.
    #[test]
    fn a_schema_2_file_is_migrated() {
        let dir = std::env::temp_dir().join(format!("css-sqlite-v2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("store.db");
        let _ = std::fs::remove_file(&path);
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE scans (seq INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, \
                     target TEXT NOT NULL, network TEXT NOT NULL, request TEXT NOT NULL, \
                     status TEXT NOT NULL, submitted_at INTEGER NOT NULL, started_at INTEGER, \
                     finished_at INTEGER, worker TEXT, lease_until INTEGER, \
                     attempts INTEGER NOT NULL DEFAULT 0, result TEXT, \
                     expires_at INTEGER NOT NULL);
                 INSERT INTO scans (uuid, target, network, request, status, submitted_at, \
                     expires_at) VALUES ('old', 'x.example', 'n', \
                     '{\"target_url\": \"x.example\"}', 'queued', 1000, 9000);
                 PRAGMA user_version = 2;",
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        let old = store.get("old", 1000).unwrap().unwrap();
        assert_eq!((old.addresses.len(), old.erase_hash), (0, None));
        let new = ScanRecord {
            addresses: vec!["192.0.2.1".parse().unwrap(), "2001:db8::1".parse().unwrap()],
            erase_hash: Some("ab".repeat(32)),
            ..ScanRecord::queued(
                "new".into(),
                "y.example".into(),
                "n".into(),
                ScanRequest::default(),
                1000,
                100,
            )
        };
        store.insert(&new, new.submitted_at).unwrap();
        assert_eq!(store.get("new", 1000).unwrap(), Some(new));
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_claim_walks_the_queue_index() {
        let dir = std::env::temp_dir().join(format!("css-sqlite-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = SqliteStore::open(dir.join("store.db")).unwrap();
        let connection = store
            .connection
            .borrow(Instant::now() + super::super::DEFAULT_TIMEOUT)
            .unwrap();
        let mut statement = connection
            .prepare(
                "EXPLAIN QUERY PLAN SELECT seq FROM scans \
                 WHERE status <> 'completed' AND expires_at > 1 \
                   AND (status = 'queued' OR lease_until < 1) \
                 ORDER BY submitted_at, seq LIMIT 1",
            )
            .unwrap();
        let plan: Vec<String> = statement
            .query_map([], |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            plan.iter().any(|step| step.contains("scans_queue")),
            "{plan:?}"
        );
        assert!(
            !plan.iter().any(|step| step.contains("TEMP B-TREE")),
            "{plan:?}"
        );
        drop(statement);
        drop(connection);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
