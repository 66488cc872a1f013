//! The scan workers of the public API: each claims the oldest queued record from the store,
//! scans it with the plugin's pipeline, and completes the record. A claim is a lease longer
//! than any scan can take (the time budget bounds a scan), so a worker that dies mid-scan
//! (its node killed) leaves a record that another worker claims again once the lease ends:
//! no scan is lost.
//!
//! Beside them, one purger per node erases what expired ([`start_purger`]): a record past its
//! TTL answers 404 at once, and leaves the store within [`PURGE_EVERY`].

use super::limits;
use super::store::{ScanRecord, Store};
use crate::clock::{Clock, Now};
use crate::report::ScanResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long an idle worker waits before asking the store again (a submission on this node
/// wakes it at once; one on another node is seen within this).
pub const IDLE_POLL: Duration = Duration::from_millis(250);
/// After a store error, before trying again.
const STORE_BACKOFF: Duration = Duration::from_secs(1);
/// How often the purger erases expired records, and ended limit logs, outcomes and pauses.
pub const PURGE_EVERY: Duration = Duration::from_secs(60);
/// How often a waiting purger looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(200);

/// Scans one record: the completed result and whether it found a supported product. `Err` is
/// a scan that could not be run at all (it completes with an error document).
pub type RecordScan = dyn Fn(&ScanRecord) -> Result<(Completed, bool), String> + Send + Sync;

/// Wakes idle workers of this node when a submission arrives.
#[derive(Default)]
pub struct Wakeup {
    pending: Mutex<bool>,
    ring: Condvar,
}

impl Wakeup {
    pub fn notify(&self) {
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.ring.notify_all();
    }

    fn wait(&self, limit: Duration) {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let (mut pending, _) = self
            .ring
            .wait_timeout_while(pending, limit, |p| !*p)
            .unwrap_or_else(|p| p.into_inner());
        *pending = false;
    }
}

pub struct Pool {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub scan: Arc<RecordScan>,
    pub wakeup: Arc<Wakeup>,
    /// Seconds a claim lasts: longer than the longest scan.
    pub lease_secs: i64,
    /// Names this node's workers in the store (`<node>-<n>`).
    pub node: String,
}

impl Pool {
    /// Starts `count` workers; they stop (after their current scan) once `stop` is set.
    pub fn start(self, count: usize, stop: Arc<AtomicBool>) -> Vec<JoinHandle<()>> {
        let pool = Arc::new(self);
        (0..count.max(1))
            .map(|n| {
                let (pool, stop) = (pool.clone(), stop.clone());
                std::thread::Builder::new()
                    .name(format!("scan-worker-{n}"))
                    .spawn(move || pool.work(&format!("{}-{n}", pool.node), &stop))
                    .expect("start a scan worker")
            })
            .collect()
    }

    fn work(&self, worker: &str, stop: &AtomicBool) {
        while !stop.load(Ordering::SeqCst) {
            match self.store.claim(worker, self.clock.now(), self.lease_secs) {
                Ok(Some(record)) => self.run(worker, &record),
                Ok(None) => self.wakeup.wait(IDLE_POLL),
                Err(e) => {
                    eprintln!("check-storage-scanner web: store: {e}");
                    std::thread::sleep(STORE_BACKOFF);
                }
            }
        }
    }

    /// Scans one claimed record and completes it. A panic of the scan is caught: the record
    /// completes with an error document instead of waiting for its lease to end.
    pub fn run(&self, worker: &str, record: &ScanRecord) {
        let scanned =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.scan)(record)))
                .unwrap_or_else(|_| Err("the scan stopped on an internal error".into()));
        let (completed, found_product) = scanned
            .unwrap_or_else(|message| (error_document(record, &message, self.clock.now()), false));
        let now = self.clock.now();
        let text = serde_json::to_string(&completed).unwrap_or_default();
        let stored = self.store.complete(&record.uuid, worker, &text, now);
        // Not completed (false): the lease ended and another worker took the record over, and
        // its result stands.
        let outcome = stored.and_then(|completed| match completed {
            true => limits::record_outcome(&*self.store, &record.network, found_product, now),
            false => Ok(()),
        });
        if let Err(e) = outcome {
            eprintln!("check-storage-scanner web: store: {e}");
        }
    }
}

/// Starts the purger: it erases what expired at `clock`'s time at once, then every
/// [`PURGE_EVERY`], until `stop` is set. It runs on its own thread and the stores purge in
/// small batches, so requests are served meanwhile. Every node runs one; purging twice
/// erases nothing twice.
pub fn start_purger(
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("purger".into())
        .spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match store.purge_expired(clock.now()) {
                    Ok(0) => {}
                    Ok(records) => eprintln!(
                        "check-storage-scanner web: purged {records} expired record{}",
                        if records == 1 { "" } else { "s" }
                    ),
                    Err(e) => eprintln!("check-storage-scanner web: store: {e}"),
                }
                let mut waited = Duration::ZERO;
                while waited < PURGE_EVERY && !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(STOP_CHECK);
                    waited += STOP_CHECK;
                }
            }
        })
        .expect("start the purger")
}

/// The result of a scan that could not run (at `now`): UNKNOWN, with the reason. No
/// thresholds were applied, so the rating explanation names none.
fn error_document(record: &ScanRecord, message: &str, now: i64) -> Completed {
    let scanned_at = jiff::Timestamp::from_second(now).unwrap_or_default();
    Completed {
        document: ScanResult::failed(
            record.target.clone(),
            message.to_string(),
            0,
            Now(scanned_at).whole_second(),
            0.0,
            false,
            0,
            0,
        ),
        sarif: serde_json::Value::Null,
    }
}
/// What a worker stores for a completed scan: the result document and the SARIF rendered from
/// the same result, read back through the result document's reader.
#[derive(Serialize, Deserialize)]
pub struct Completed {
    pub document: ScanResult,
    #[serde(default)]
    pub sarif: Value,
}

impl Completed {
    /// `None` for a record without a result, or one no reader of this version can read.
    pub fn parse(text: Option<&str>) -> Option<Completed> {
        crate::report::read(text?.as_bytes()).ok()
    }
}
