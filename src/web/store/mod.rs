//! Where the public API keeps its state: scan records (which are also the queue), the rolling
//! limits' logs of hits, each network's recent outcomes and pauses. Two implementations pass one
//! conformance suite: SQLite (embedded, one file, survives restarts) and Redis (several nodes
//! share it).
//!
//! Every method takes the time as `now` (Unix seconds; `now_ms` in milliseconds for the limits,
//! whose windows a second's rounding would stretch) so tests move the clock; nothing reads the
//! system clock here. A record past `expires_at` is gone: never returned, purged at will.
//!
//! Every call is bounded by the store's timeout (`--store-timeout`), connecting included, and
//! the calls of one request share one such deadline ([`sharing_deadline`]): a frozen store
//! costs a request one timeout, never one per call or per step of a call.
//!
//! The queue is the records in state `Queued`, oldest submission first. A worker `claim`s one,
//! which moves it to `Running` with a lease (`lease_until`); the worker `renew`s the lease while
//! it scans and `complete`s the record at the end. A record whose lease ran out (its worker
//! died) is claimable again, so no scan is lost.

use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::net::IpAddr;
use std::time::{Duration, Instant};

pub mod redis;
pub mod sqlite;

/// How long one store call may take unless `--store-timeout` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

thread_local! {
    /// The deadline the store calls of this thread's request share ([`sharing_deadline`]).
    static SHARED_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `f` with every store call it makes on this thread sharing one deadline, `timeout` from
/// now: a request's calls (its limits, its insert) cost one store timeout in all when the
/// store is slow or frozen, not one each. A scope inside another replaces it while it runs (a
/// call that waits for its scan gives each poll a deadline of its own).
pub fn sharing_deadline<T>(timeout: Duration, f: impl FnOnce() -> T) -> T {
    /// Puts the outer scope's deadline back, also when `f` panics.
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SHARED_DEADLINE.set(self.0);
        }
    }
    let _restore = Restore(SHARED_DEADLINE.replace(Some(Instant::now() + timeout)));
    f()
}

/// How long one store call may take: `own` (the store's timeout, or a shorter one the caller
/// asks for), within what is left of the deadline its request shares. Zero: nothing is left.
pub fn call_budget(own: Duration) -> Duration {
    SHARED_DEADLINE.get().map_or(own, |until| {
        own.min(until.saturating_duration_since(Instant::now()))
    })
}

/// Opens the store `--store` names: `sqlite:PATH` (the embedded default) or
/// `redis://host:port/db` (shared by several nodes), each call bounded by `timeout`. A
/// password in a Redis URL never shows in an error.
pub fn open(spec: &str, timeout: Duration) -> StoreResult<Box<dyn Store>> {
    if let Some(path) = spec.strip_prefix("sqlite:") {
        if path.is_empty() {
            let message = "--store sqlite: needs a path (sqlite:PATH)";
            return Err(StoreError(message.to_string()));
        }
        return Ok(Box::new(sqlite::SqliteStore::open_with(path, timeout)?));
    }
    if spec.starts_with("redis://") || spec.starts_with("redis+unix://") {
        let store = redis::RedisStore::open_with(spec, redis::DEFAULT_PREFIX, timeout)?;
        return Ok(Box::new(store));
    }
    Err(StoreError(format!(
        "--store {}: expected sqlite:PATH or redis://host:port/db",
        redact_url(spec)
    )))
}

/// `url` with its password (`redis://user:secret@host`, `redis+unix:///s?pass=secret`)
/// replaced by `***`, fit for an error message or a log line.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    let hidden = authority.rsplit_once('@').and_then(|(userinfo, host)| {
        let (user, _) = userinfo.split_once(':')?;
        Some(format!("{user}:***@{host}"))
    });
    let authority = hidden.unwrap_or_else(|| authority.to_string());
    let tail = match tail.split_once('?') {
        Some((path, after)) => {
            let (query, fragment) = after.split_at(after.find('#').unwrap_or(after.len()));
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((name, _))
                        if name.eq_ignore_ascii_case("pass")
                            || name.eq_ignore_ascii_case("password") =>
                    {
                        format!("{name}=***")
                    }
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}{fragment}", pairs.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// Where a scan stands. Serialized as the API writes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    #[default]
    Queued,
    Running,
    Completed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Completed => "completed",
        }
    }

    /// The status [`Status::as_str`] names, as both stores keep it.
    pub fn parse(name: &str) -> Option<Status> {
        [Status::Queued, Status::Running, Status::Completed]
            .into_iter()
            .find(|status| status.as_str() == name)
    }
}

pub use super::submission::ScanRequest;

/// One scan. `target` names the target as the scan service keys it (host, port if given,
/// path; the cooldown has keys of its own,
/// `web::limits::cooldown_keys`), `network` the submitter's network key (what the daily limit
/// and the pause go by).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScanRecord {
    pub uuid: String,
    pub target: String,
    pub network: String,
    pub request: ScanRequest,
    pub status: Status,
    pub submitted_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// While `Running`: the worker holding it and until when.
    pub worker: Option<String>,
    pub lease_until: Option<i64>,
    /// Claims so far (a worker that died leaves one behind).
    pub attempts: u32,
    /// The result document (JSON text), once `Completed`.
    pub result: Option<String>,
    pub expires_at: i64,
    /// The addresses the guard resolved the target to at submission, whose cooldown the
    /// submission spent: its scan connects to these and no others. Empty: none were resolved
    /// then (an older record); the scan resolves the target itself.
    #[serde(default)]
    pub addresses: Vec<IpAddr>,
    /// SHA-256 (lower-case hex) of the erase key the submission was answered with: whoever
    /// shows the key may erase the record. The key itself is never stored. `None`: a record of
    /// before erase keys, which nobody may erase; it expires. (A page form's submission has a
    /// key nobody was shown, so the same holds for it.)
    pub erase_hash: Option<String>,
}

/// A record's addresses as both stores keep them: space-separated.
pub fn addresses_text(addresses: &[IpAddr]) -> String {
    addresses
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The addresses [`addresses_text`] wrote.
pub fn parse_addresses(text: &str) -> Result<Vec<IpAddr>, std::net::AddrParseError> {
    text.split_whitespace().map(str::parse).collect()
}

impl ScanRecord {
    /// A new, queued record.
    pub fn queued(
        uuid: String,
        target: String,
        network: String,
        request: ScanRequest,
        now: i64,
        ttl_secs: i64,
    ) -> ScanRecord {
        ScanRecord {
            uuid,
            target,
            network,
            request,
            submitted_at: now,
            expires_at: now + ttl_secs,
            ..ScanRecord::default()
        }
    }
}

/// A rolling limit: at most `limit` admissions counted on `key` within any `window_ms`
/// milliseconds (a sliding log of hits, so no clock edge lets a burst through).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limit {
    pub key: String,
    pub limit: u32,
    pub window_ms: i64,
}

/// The answer of [`Store::admit`]: admitted (and counted on every limit) when nothing refuses;
/// otherwise nothing was counted and every reason is listed, so the caller names the one that
/// lasts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Admission {
    /// When the network's pause ends (Unix seconds), if it is paused.
    pub paused_until: Option<i64>,
    /// The limits without room, as (index into the limits given, milliseconds until room is
    /// made: the hit that must go leaves its window then).
    pub full: Vec<(usize, i64)>,
}

impl Admission {
    pub fn admitted(&self) -> bool {
        self.paused_until.is_none() && self.full.is_empty()
    }
}

/// When a log whose newest hits are `newest_first` (Unix milliseconds, at most `limit` of them
/// are read) has room for one more hit of a `limit` in `window_ms` at `now_ms`: `None` when it
/// has room now, else the milliseconds until it has. The `limit`-th newest hit is the one that
/// must leave the window: with it gone, `limit - 1` remain.
pub fn room_in(newest_first: &[i64], limit: u32, window_ms: i64, now_ms: i64) -> Option<i64> {
    if limit == 0 {
        return Some(window_ms.max(1));
    }
    let in_window: Vec<i64> = newest_first
        .iter()
        .copied()
        .filter(|at| *at > now_ms - window_ms)
        .take(limit as usize)
        .collect();
    (in_window.len() >= limit as usize)
        .then(|| (in_window[limit as usize - 1] + window_ms - now_ms).max(1))
}

/// A store that cannot answer (I/O, a lost connection): the API answers 503.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// The public API's state. Implementations are shared by every HTTP and worker thread.
pub trait Store: Send + Sync {
    /// Adds a new queued record (its uuid is new) at `now`. A store that expires records by a
    /// clock of its own (Redis) gives the record the life it has left, `expires_at - now`.
    fn insert(&self, record: &ScanRecord, now: i64) -> StoreResult<()>;

    /// The record, unless unknown or expired at `now`.
    fn get(&self, uuid: &str, now: i64) -> StoreResult<Option<ScanRecord>>;

    /// Takes the oldest claimable record for `worker`: a queued one, or a running one whose
    /// lease ended before `now`. It becomes `Running`, `lease_until = now + lease_secs`,
    /// `attempts + 1`, `started_at` set on the first claim. Atomic: two workers (two nodes)
    /// never claim the same record.
    fn claim(&self, worker: &str, now: i64, lease_secs: i64) -> StoreResult<Option<ScanRecord>>;

    /// Extends the lease of a record `worker` holds; `false` when it holds it no longer.
    /// A worker holds a record while it is `Running` under that worker and unexpired at `now`:
    /// a lease that ran out still holds until another worker claims the record.
    fn renew(&self, uuid: &str, worker: &str, now: i64, lease_secs: i64) -> StoreResult<bool>;

    /// Stores the result of a record `worker` holds and marks it `Completed` at `now`;
    /// `false` (and nothing changed) when it holds it no longer.
    fn complete(&self, uuid: &str, worker: &str, result: &str, now: i64) -> StoreResult<bool>;

    /// Erases the record of `uuid` (queued, running or completed: its result with it) and its
    /// place in the queue and every index; whether there was one. A worker holding it holds
    /// nothing after (its `renew` and `complete` answer `false`).
    fn erase(&self, uuid: &str) -> StoreResult<bool>;

    /// Admits one submission at `now_ms` if `network` is not paused and every limit has room
    /// (fewer than `limit` hits on its key within the `window_ms` before `now_ms`), counting
    /// it on every limit; otherwise counts nothing and says why. One atomic step: a refusal by
    /// one limit never spends another, and two nodes never both take the last room.
    fn admit(&self, limits: &[Limit], network: &str, now_ms: i64) -> StoreResult<Admission>;

    /// Records whether a scan from `network` found a supported product; keeps the last
    /// `keep` outcomes, each for `ttl_secs` after the newest.
    fn record_outcome(
        &self,
        network: &str,
        found_product: bool,
        keep: usize,
        now: i64,
        ttl_secs: i64,
    ) -> StoreResult<()>;

    /// The last outcomes of `network`, newest first (at most the `keep` of `record_outcome`).
    fn outcomes(&self, network: &str) -> StoreResult<Vec<bool>>;

    /// Pauses `network` from `now` until `until`.
    fn pause(&self, network: &str, until: i64, now: i64) -> StoreResult<()>;

    /// When the pause of `network` ends, if it is paused at `now`.
    fn paused_until(&self, network: &str, now: i64) -> StoreResult<Option<i64>>;

    /// Every network paused at `now`, with the end of its pause, in network order.
    fn pauses(&self, now: i64) -> StoreResult<Vec<(String, i64)>>;

    /// Ends the pause of `network` and forgets its outcomes (else its next fruitless scan
    /// would pause it again); whether it was paused at `now`.
    fn lift_pause(&self, network: &str, now: i64) -> StoreResult<bool>;

    /// Every limit key starting with `prefix` that has no room at `now_ms` for a `limit` of
    /// hits within `window_ms`, with the milliseconds until it has (what `admit` would
    /// answer), in key order.
    fn full_limits(
        &self,
        prefix: &str,
        limit: u32,
        window_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Vec<(String, i64)>>;

    /// Forgets every hit of the limit key `key`; whether it had any.
    fn forget_hits(&self, key: &str) -> StoreResult<bool>;

    /// Removes expired records, and the limit logs, outcomes and pauses that ended; how many
    /// records went.
    fn purge_expired(&self, now: i64) -> StoreResult<usize>;

    /// Whether the store would take a write within `within` (or its own timeout, if shorter):
    /// what `/healthz` asks. A store that answers reads but keeps every write waiting (a
    /// SQLite file another process holds the write lock of) is not healthy.
    fn ping(&self, within: Duration) -> StoreResult<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_shows() {
        for (url, shown) in [
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
            ("redis://:secret@host:6379/2", "redis://:***@host:6379/2"),
            ("redis://user:secret@host/", "redis://user:***@host/"),
            ("redis://user:p@ss@host", "redis://user:***@host"),
            ("redis://user@host", "redis://user@host"),
            (
                "redis+unix:///run/redis.sock?db=1&pass=secret",
                "redis+unix:///run/redis.sock?db=1&pass=***",
            ),
            ("rediss://:secret@host", "rediss://:***@host"),
            ("sqlite:/var/lib/x.db", "sqlite:/var/lib/x.db"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }

    #[test]
    fn an_unknown_store_names_the_two_forms_and_no_password() {
        let Err(error) = open("rediss://:secret@host:6379/0", DEFAULT_TIMEOUT) else {
            panic!("rediss is not supported");
        };
        assert_eq!(
            error.0,
            "--store rediss://:***@host:6379/0: expected sqlite:PATH or redis://host:port/db"
        );
        let Err(error) = open("sqlite:", DEFAULT_TIMEOUT) else {
            panic!("an empty path");
        };
        assert!(error.0.contains("sqlite:PATH"), "{error}");
    }

    #[test]
    fn an_unreachable_redis_names_its_url_without_the_password() {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let Err(error) = open(
            &format!("redis://:hunter2@127.0.0.1:{port}/0"),
            DEFAULT_TIMEOUT,
        ) else {
            panic!("nothing listens there");
        };
        assert!(!error.0.contains("hunter2"), "{error}");
        assert!(
            error
                .0
                .contains(&format!("redis://:***@127.0.0.1:{port}/0")),
            "{error}"
        );
    }
}
