//! The embedded store (`--store sqlite:PATH`): one SQLite file in WAL mode, so records, the
//! queue and the limit counters survive a restart. One connection behind a mutex serves every
//! thread of the process; several processes may share the file (SQLite's write lock and the
//! busy timeout serialize them, and `claim` is one statement, so never two claim one record).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::{Hit, ScanRecord, ScanRequest, Status, Store, StoreError, StoreResult};

/// The schema version this build writes (`PRAGMA user_version`); a file of a newer one is
/// refused rather than misread. A future migration goes from each older version up to this.
const SCHEMA_VERSION: i64 = 1;

/// How long a statement waits for another process's write lock before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

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
    expires_at   INTEGER NOT NULL
);
-- The queue: claimable records, oldest submission first.
CREATE INDEX IF NOT EXISTS scans_queue ON scans (submitted_at) WHERE status <> 'completed';
CREATE INDEX IF NOT EXISTS scans_target ON scans (target);
CREATE INDEX IF NOT EXISTS scans_expiry ON scans (expires_at);
-- One row per key and fixed window.
CREATE TABLE IF NOT EXISTS counters (
    key          TEXT NOT NULL,
    window_start INTEGER NOT NULL,
    window_end   INTEGER NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS counters_expiry ON counters (window_end);
CREATE TABLE IF NOT EXISTS outcomes (
    seq           INTEGER PRIMARY KEY,
    network       TEXT NOT NULL,
    found_product INTEGER NOT NULL,
    at            INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outcomes_network ON outcomes (network, seq);
CREATE TABLE IF NOT EXISTS pauses (
    network TEXT PRIMARY KEY,
    until   INTEGER NOT NULL
) WITHOUT ROWID;
";

const COLUMNS: &str = "uuid, target, network, request, status, submitted_at, started_at, \
                       finished_at, worker, lease_until, attempts, result, expires_at";

/// The SQLite store. Cheap to share: every method locks the one connection briefly.
pub struct SqliteStore {
    connection: Mutex<Connection>,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating if need be) the store file at `path`: WAL mode, a busy timeout, the
    /// schema created or checked.
    pub fn open(path: impl AsRef<Path>) -> StoreResult<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        let fail = |e: rusqlite::Error| StoreError(format!("store {}: {e}", path.display()));
        let mut connection = Connection::open(&path).map_err(fail)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        let mode: String = connection
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(fail)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError(format!(
                "store {}: SQLite refused WAL mode (journal mode {mode})",
                path.display()
            )));
        }
        // In WAL mode NORMAL loses at most the last transactions on a power cut, never the file.
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(fail)?;
        let tx = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(fail)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError(format!(
                "store {}: written by a newer version (schema {version}, this one knows {SCHEMA_VERSION})",
                path.display()
            )));
        }
        tx.execute_batch(SCHEMA).map_err(fail)?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(SqliteStore {
            connection: Mutex::new(connection),
            path,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock left no transaction open (it rolls back on drop).
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn error(&self, e: rusqlite::Error) -> StoreError {
        StoreError(format!("store {}: {e}", self.path.display()))
    }
}

fn record_from_row(row: &Row<'_>) -> rusqlite::Result<ScanRecord> {
    let request: String = row.get(3)?;
    let request: ScanRequest = serde_json::from_str(&request).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, Box::new(e))
    })?;
    let status: String = row.get(4)?;
    let status = match status.as_str() {
        "queued" => Status::Queued,
        "running" => Status::Running,
        "completed" => Status::Completed,
        other => {
            return Err(rusqlite::Error::FromSqlConversionFailure(
                4,
                rusqlite::types::Type::Text,
                format!("unknown status {other:?}").into(),
            ));
        }
    };
    Ok(ScanRecord {
        uuid: row.get(0)?,
        target: row.get(1)?,
        network: row.get(2)?,
        request,
        status,
        submitted_at: row.get(5)?,
        started_at: row.get(6)?,
        finished_at: row.get(7)?,
        worker: row.get(8)?,
        lease_until: row.get(9)?,
        attempts: row.get(10)?,
        result: row.get(11)?,
        expires_at: row.get(12)?,
    })
}

impl Store for SqliteStore {
    fn insert(&self, record: &ScanRecord) -> StoreResult<()> {
        let request = serde_json::to_string(&record.request)
            .map_err(|e| StoreError(format!("store {}: {e}", self.path.display())))?;
        self.lock()
            .execute(
                &format!(
                    "INSERT INTO scans ({COLUMNS}) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
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
                ],
            )
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    fn get(&self, uuid: &str, now: i64) -> StoreResult<Option<ScanRecord>> {
        self.lock()
            .query_row(
                &format!("SELECT {COLUMNS} FROM scans WHERE uuid = ?1 AND expires_at > ?2"),
                params![uuid, now],
                record_from_row,
            )
            .optional()
            .map_err(|e| self.error(e))
    }

    fn claim(&self, worker: &str, now: i64, lease_secs: i64) -> StoreResult<Option<ScanRecord>> {
        // One statement: SQLite's write lock makes it atomic across threads and processes.
        // `status <> 'completed'` lets the partial queue index serve the subquery.
        self.lock()
            .query_row(
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
            .map_err(|e| self.error(e))
    }

    fn renew(&self, uuid: &str, worker: &str, now: i64, lease_secs: i64) -> StoreResult<bool> {
        let changed = self
            .lock()
            .execute(
                "UPDATE scans SET lease_until = ?3 + ?4 \
                 WHERE uuid = ?1 AND status = 'running' AND worker = ?2 AND expires_at > ?3",
                params![uuid, worker, now, lease_secs],
            )
            .map_err(|e| self.error(e))?;
        Ok(changed == 1)
    }

    fn complete(&self, uuid: &str, worker: &str, result: &str, now: i64) -> StoreResult<bool> {
        let changed = self
            .lock()
            .execute(
                "UPDATE scans SET status = 'completed', result = ?3, finished_at = ?4, \
                     worker = NULL, lease_until = NULL \
                 WHERE uuid = ?1 AND status = 'running' AND worker = ?2 AND expires_at > ?4",
                params![uuid, worker, result, now],
            )
            .map_err(|e| self.error(e))?;
        Ok(changed == 1)
    }

    fn erase_target(&self, target: &str) -> StoreResult<usize> {
        self.lock()
            .execute("DELETE FROM scans WHERE target = ?1", params![target])
            .map_err(|e| self.error(e))
    }

    fn hit(&self, key: &str, limit: u32, window_secs: i64, now: i64) -> StoreResult<Hit> {
        let window_secs = window_secs.max(1);
        let window_start = now - now.rem_euclid(window_secs);
        let window_end = window_start + window_secs;
        if limit == 0 {
            return Ok(Hit::Exceeded {
                retry_after: window_end - now,
            });
        }
        // Counts only below the limit: the skipped DO UPDATE returns no row.
        let count: Option<u32> = self
            .lock()
            .query_row(
                "INSERT INTO counters (key, window_start, window_end, count) VALUES (?1, ?2, ?3, 1) \
                 ON CONFLICT (key, window_start) DO UPDATE SET count = count + 1 \
                     WHERE count < ?4 \
                 RETURNING count",
                params![key, window_start, window_end, limit],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.error(e))?;
        Ok(match count {
            Some(count) => Hit::Allowed { count },
            None => Hit::Exceeded {
                retry_after: window_end - now,
            },
        })
    }

    fn record_outcome(
        &self,
        network: &str,
        found_product: bool,
        keep: usize,
        now: i64,
    ) -> StoreResult<()> {
        let mut connection = self.lock();
        let tx = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.error(e))?;
        tx.execute(
            "INSERT INTO outcomes (network, found_product, at) VALUES (?1, ?2, ?3)",
            params![network, found_product, now],
        )
        .map_err(|e| self.error(e))?;
        tx.execute(
            "DELETE FROM outcomes WHERE network = ?1 AND seq NOT IN \
                 (SELECT seq FROM outcomes WHERE network = ?1 ORDER BY seq DESC LIMIT ?2)",
            params![network, i64::try_from(keep).unwrap_or(i64::MAX)],
        )
        .map_err(|e| self.error(e))?;
        tx.commit().map_err(|e| self.error(e))
    }

    fn outcomes(&self, network: &str) -> StoreResult<Vec<bool>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached(
                "SELECT found_product FROM outcomes WHERE network = ?1 ORDER BY seq DESC",
            )
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map(params![network], |row| row.get::<_, bool>(0))
            .map_err(|e| self.error(e))?;
        rows.collect::<rusqlite::Result<Vec<bool>>>()
            .map_err(|e| self.error(e))
    }

    fn pause(&self, network: &str, until: i64) -> StoreResult<()> {
        self.lock()
            .execute(
                "INSERT INTO pauses (network, until) VALUES (?1, ?2) \
                 ON CONFLICT (network) DO UPDATE SET until = excluded.until",
                params![network, until],
            )
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    fn paused_until(&self, network: &str, now: i64) -> StoreResult<Option<i64>> {
        self.lock()
            .query_row(
                "SELECT until FROM pauses WHERE network = ?1 AND until > ?2",
                params![network, now],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.error(e))
    }

    fn purge_expired(&self, now: i64) -> StoreResult<usize> {
        let mut connection = self.lock();
        let tx = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.error(e))?;
        let records = tx
            .execute("DELETE FROM scans WHERE expires_at <= ?1", params![now])
            .map_err(|e| self.error(e))?;
        tx.execute("DELETE FROM counters WHERE window_end <= ?1", params![now])
            .map_err(|e| self.error(e))?;
        tx.execute("DELETE FROM pauses WHERE until <= ?1", params![now])
            .map_err(|e| self.error(e))?;
        tx.commit().map_err(|e| self.error(e))?;
        Ok(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claim_walks_the_queue_index() {
        let dir = std::env::temp_dir().join(format!("css-sqlite-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = SqliteStore::open(dir.join("store.db")).unwrap();
        let connection = store.lock();
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
