//! The shared store (`--store redis://host:port/db`): several nodes behind a load balancer keep
//! queue, records and limit counters in one Redis, so a scan submitted on one node is polled on
//! another and the limits count across nodes. Every change that reads before it writes is one
//! Lua script, which Redis runs atomically: two nodes never claim the same record and a refused
//! hit is never counted.
//!
//! Keys, all under a prefix (`css:` unless told otherwise):
//! - `rec:<uuid>`: the record, a hash of its fields (`request` as JSON), `EXPIREAT` its
//!   `expires_at`;
//! - `queue`: queued records, a sorted set scored by submission time; `running`: running ones
//!   scored by `lease_until` (a claim moves those whose lease ran out back to `queue`);
//! - `expiry`: every record scored by `expires_at`, for `purge_expired`;
//! - `target:<target>`: the uuids of a target, for `erase_target`;
//! - `hit:<key>:<window start>`: a counter, expiring when its window ends;
//! - `outcomes:<network>`: a list, newest first, trimmed to `keep`;
//! - `pause:<network>`: the end of the pause, `EXPIREAT` then.
//!
//! Redis expires keys by its own clock while the API passes `now`, so every read also checks
//! the time itself (`get` refuses a record with `expires_at <= now`): the stores behave alike
//! when a test moves the clock. The scripts build record key names from the prefix, which a
//! standalone Redis (or a replicated one) allows; Redis Cluster is not supported.
//!
//! One connection behind a mutex serves every thread of the process. It connects, reads and
//! writes with a timeout, so a dead or hung Redis is a [`StoreError`] within seconds, never a
//! hang; a connection that failed is dropped and the next call connects again.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use redis::{Client, Connection, ConnectionLike, RedisResult, Script};

use super::{Hit, ScanRecord, ScanRequest, Status, Store, StoreError, StoreResult, redact_url};

/// The key prefix of [`RedisStore::open`].
pub const DEFAULT_PREFIX: &str = "css:";

/// Connect, read and write timeout of [`RedisStore::open`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3);

/// Records `purge_expired` removes per script run (Redis serves nobody else meanwhile).
const PURGE_BATCH: usize = 500;

/// KEYS: record, queue, running, expiry, target set. ARGV: uuid, status, submitted_at,
/// lease_until (or ''), expires_at, then the hash's field/value pairs.
const INSERT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('a record with uuid ' .. ARGV[1] .. ' exists already')
end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('EXPIREAT', KEYS[1], ARGV[5])
if ARGV[2] == 'queued' then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
elseif ARGV[2] == 'running' then
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
end
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
redis.call('SADD', KEYS[5], ARGV[1])
-- The target's set lives as long as its longest-lived record.
local ttl = redis.call('TTL', KEYS[5])
local clock = tonumber(redis.call('TIME')[1])
if ttl < 0 or clock + ttl < tonumber(ARGV[5]) then
  redis.call('EXPIREAT', KEYS[5], ARGV[5])
end
return 1
";

/// KEYS: queue, running. ARGV: record key prefix, now, lease_secs, worker.
/// Returns the claimed record's hash (field, value, ...) or nil.
const CLAIM: &str = r"
local now = tonumber(ARGV[2])
-- Leases that ran out: back to the queue. The record stays 'running' under its old worker
-- (which may still renew or complete it) until someone claims it.
for _, uuid in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)) do
  redis.call('ZREM', KEYS[2], uuid)
  local submitted = redis.call('HGET', ARGV[1] .. uuid, 'submitted_at')
  if submitted then
    redis.call('ZADD', KEYS[1], submitted, uuid)
  end
end
while true do
  local head = redis.call('ZRANGE', KEYS[1], 0, 0)
  if #head == 0 then
    return false
  end
  local uuid = head[1]
  redis.call('ZREM', KEYS[1], uuid)
  local key = ARGV[1] .. uuid
  local expires = redis.call('HGET', key, 'expires_at')
  if expires and tonumber(expires) > now then
    local lease = now + tonumber(ARGV[3])
    redis.call('HSET', key, 'status', 'running', 'worker', ARGV[4], 'lease_until', lease)
    redis.call('HINCRBY', key, 'attempts', 1)
    redis.call('HSETNX', key, 'started_at', now)
    redis.call('ZADD', KEYS[2], lease, uuid)
    return redis.call('HGETALL', key)
  end
end
";

/// KEYS: record, queue, running. ARGV: uuid, worker, now, lease_secs.
const RENEW: &str = r"
local now = tonumber(ARGV[3])
local held = redis.call('HMGET', KEYS[1], 'status', 'worker', 'expires_at')
if held[1] ~= 'running' or held[2] ~= ARGV[2] or tonumber(held[3]) <= now then
  return 0
end
local lease = now + tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'lease_until', lease)
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], lease, ARGV[1])
return 1
";

/// KEYS: record, queue, running. ARGV: uuid, worker, now, result.
const COMPLETE: &str = r"
local now = tonumber(ARGV[3])
local held = redis.call('HMGET', KEYS[1], 'status', 'worker', 'expires_at')
if held[1] ~= 'running' or held[2] ~= ARGV[2] or tonumber(held[3]) <= now then
  return 0
end
redis.call('HSET', KEYS[1], 'status', 'completed', 'result', ARGV[4], 'finished_at', now)
redis.call('HDEL', KEYS[1], 'worker', 'lease_until')
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
";

/// KEYS: target set, queue, running, expiry. ARGV: record key prefix.
const ERASE_TARGET: &str = r"
local erased = 0
for _, uuid in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  erased = erased + redis.call('DEL', ARGV[1] .. uuid)
  redis.call('ZREM', KEYS[2], uuid)
  redis.call('ZREM', KEYS[3], uuid)
  redis.call('ZREM', KEYS[4], uuid)
end
redis.call('DEL', KEYS[1])
return erased
";

/// KEYS: counter. ARGV: limit, seconds until the window ends. Returns the count, or -1 when
/// the limit is reached (and nothing was counted).
const HIT: &str = r"
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then
  return -1
end
count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return count
";

/// KEYS: queue, running, expiry. ARGV: record key prefix, target key prefix, now, batch.
/// Returns how many expired records went.
const PURGE: &str = r"
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[3], 'LIMIT', 0, ARGV[4])
for _, uuid in ipairs(gone) do
  local key = ARGV[1] .. uuid
  local target = redis.call('HGET', key, 'target')
  redis.call('DEL', key)
  if target then
    redis.call('SREM', ARGV[2] .. target, uuid)
  end
  redis.call('ZREM', KEYS[1], uuid)
  redis.call('ZREM', KEYS[2], uuid)
  redis.call('ZREM', KEYS[3], uuid)
end
return #gone
";

/// The Redis store. Several of them (on several nodes) share one Redis safely.
pub struct RedisStore {
    client: Client,
    connection: Mutex<Option<Connection>>,
    /// The URL as errors name it: password replaced by `***`.
    shown: String,
    prefix: String,
    timeout: Duration,
    scripts: Scripts,
}

struct Scripts {
    insert: Script,
    claim: Script,
    renew: Script,
    complete: Script,
    erase_target: Script,
    hit: Script,
    purge: Script,
}

impl RedisStore {
    /// Connects to `url` (`redis://[:password@]host:port/db`) with the default prefix and
    /// timeout; fails at once when Redis does not answer.
    pub fn open(url: &str) -> StoreResult<RedisStore> {
        RedisStore::open_with(url, DEFAULT_PREFIX, DEFAULT_TIMEOUT)
    }

    /// Like [`RedisStore::open`] with every key under `prefix` and `timeout` for connecting,
    /// reading and writing.
    pub fn open_with(url: &str, prefix: &str, timeout: Duration) -> StoreResult<RedisStore> {
        let shown = redact_url(url);
        let client = Client::open(url).map_err(|e| StoreError(format!("store {shown}: {e}")))?;
        let store = RedisStore {
            client,
            connection: Mutex::new(None),
            shown,
            prefix: prefix.to_string(),
            timeout,
            scripts: Scripts {
                insert: Script::new(INSERT),
                claim: Script::new(CLAIM),
                renew: Script::new(RENEW),
                complete: Script::new(COMPLETE),
                erase_target: Script::new(ERASE_TARGET),
                hit: Script::new(HIT),
                purge: Script::new(PURGE),
            },
        };
        store.with(|con| redis::cmd("PING").query::<String>(con).map(drop))?;
        Ok(store)
    }

    fn key(&self, parts: &[&str]) -> String {
        let mut key = self.prefix.clone();
        key.push_str(&parts.join(":"));
        key
    }

    fn record_prefix(&self) -> String {
        self.key(&["rec", ""])
    }

    fn record_key(&self, uuid: &str) -> String {
        self.key(&["rec", uuid])
    }

    fn target_key(&self, target: &str) -> String {
        self.key(&["target", target])
    }

    fn lock(&self) -> MutexGuard<'_, Option<Connection>> {
        // A panic while holding the lock may have left a half-read reply: start afresh.
        self.connection.lock().unwrap_or_else(|poisoned| {
            let mut guard = poisoned.into_inner();
            *guard = None;
            guard
        })
    }

    fn connect(&self) -> RedisResult<Connection> {
        let connection = self.client.get_connection_with_timeout(self.timeout)?;
        connection.set_read_timeout(Some(self.timeout))?;
        connection.set_write_timeout(Some(self.timeout))?;
        Ok(connection)
    }

    /// Runs `f` on the connection, connecting first when there is none. Any error drops the
    /// connection (a timed-out reply may still arrive and must not answer the next command).
    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> RedisResult<T>) -> StoreResult<T> {
        let mut guard = self.lock();
        if guard.as_ref().is_some_and(|con| !con.is_open()) {
            *guard = None;
        }
        let connection = match &mut *guard {
            Some(connection) => connection,
            empty => empty.insert(self.connect().map_err(|e| self.error(e))?),
        };
        f(connection).map_err(|e| {
            *guard = None;
            self.error(e)
        })
    }

    fn error(&self, e: redis::RedisError) -> StoreError {
        StoreError(format!("store {}: {e}", self.shown))
    }

    fn parse(&self, fields: HashMap<String, String>) -> StoreResult<ScanRecord> {
        let mut fields = Fields {
            uuid: fields.get("uuid").cloned().unwrap_or_default(),
            map: fields,
            shown: &self.shown,
        };
        let request = fields.text("request")?;
        let request: ScanRequest =
            serde_json::from_str(&request).map_err(|_| fields.bad("request", &request))?;
        let status = match fields.text("status")?.as_str() {
            "queued" => Status::Queued,
            "running" => Status::Running,
            "completed" => Status::Completed,
            other => return Err(fields.bad("status", other)),
        };
        let attempts = match fields.map.remove("attempts") {
            Some(v) => v.parse::<u32>().map_err(|_| fields.bad("attempts", &v))?,
            None => 0,
        };
        Ok(ScanRecord {
            uuid: fields.uuid.clone(),
            target: fields.text("target")?,
            network: fields.text("network")?,
            request,
            status,
            submitted_at: fields.int("submitted_at")?,
            started_at: fields.optional_int("started_at")?,
            finished_at: fields.optional_int("finished_at")?,
            worker: fields.map.remove("worker"),
            lease_until: fields.optional_int("lease_until")?,
            attempts,
            result: fields.map.remove("result"),
            expires_at: fields.int("expires_at")?,
        })
    }
}

/// A record's hash as Redis returns it, read field by field.
struct Fields<'a> {
    map: HashMap<String, String>,
    uuid: String,
    shown: &'a str,
}

impl Fields<'_> {
    fn bad(&self, field: &str, value: &str) -> StoreError {
        StoreError(format!(
            "store {}: record {}: bad {field} {value:?}",
            self.shown, self.uuid
        ))
    }

    fn text(&mut self, field: &str) -> StoreResult<String> {
        self.map
            .remove(field)
            .ok_or_else(|| self.bad(field, "(missing)"))
    }

    fn optional_int(&mut self, field: &str) -> StoreResult<Option<i64>> {
        self.map
            .remove(field)
            .map(|v| v.parse::<i64>().map_err(|_| self.bad(field, &v)))
            .transpose()
    }

    fn int(&mut self, field: &str) -> StoreResult<i64> {
        self.optional_int(field)?
            .ok_or_else(|| self.bad(field, "(missing)"))
    }
}

impl Store for RedisStore {
    fn insert(&self, record: &ScanRecord) -> StoreResult<()> {
        let request = serde_json::to_string(&record.request)
            .map_err(|e| StoreError(format!("store {}: {e}", self.shown)))?;
        let mut fields: Vec<(&str, String)> = vec![
            ("uuid", record.uuid.clone()),
            ("target", record.target.clone()),
            ("network", record.network.clone()),
            ("request", request),
            ("status", record.status.as_str().to_string()),
            ("submitted_at", record.submitted_at.to_string()),
            ("attempts", record.attempts.to_string()),
            ("expires_at", record.expires_at.to_string()),
        ];
        for (field, value) in [
            ("started_at", record.started_at.map(|v| v.to_string())),
            ("finished_at", record.finished_at.map(|v| v.to_string())),
            ("worker", record.worker.clone()),
            ("lease_until", record.lease_until.map(|v| v.to_string())),
            ("result", record.result.clone()),
        ] {
            if let Some(value) = value {
                fields.push((field, value));
            }
        }
        let record_key = self.record_key(&record.uuid);
        let queue = self.key(&["queue"]);
        let running = self.key(&["running"]);
        let expiry = self.key(&["expiry"]);
        let target = self.target_key(&record.target);
        self.with(|con| {
            let mut invocation = self.scripts.insert.prepare_invoke();
            invocation
                .key(&record_key)
                .key(&queue)
                .key(&running)
                .key(&expiry)
                .key(&target)
                .arg(&record.uuid)
                .arg(record.status.as_str())
                .arg(record.submitted_at)
                .arg(
                    record
                        .lease_until
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                )
                .arg(record.expires_at);
            for (field, value) in &fields {
                invocation.arg(*field).arg(value);
            }
            invocation.invoke::<i64>(con).map(drop)
        })
    }

    fn get(&self, uuid: &str, now: i64) -> StoreResult<Option<ScanRecord>> {
        let key = self.record_key(uuid);
        let fields: HashMap<String, String> =
            self.with(|con| redis::cmd("HGETALL").arg(&key).query(con))?;
        if fields.is_empty() {
            return Ok(None);
        }
        let record = self.parse(fields)?;
        Ok((record.expires_at > now).then_some(record))
    }

    fn claim(&self, worker: &str, now: i64, lease_secs: i64) -> StoreResult<Option<ScanRecord>> {
        let claimed: Option<HashMap<String, String>> = self.with(|con| {
            self.scripts
                .claim
                .key(self.key(&["queue"]))
                .key(self.key(&["running"]))
                .arg(self.record_prefix())
                .arg(now)
                .arg(lease_secs)
                .arg(worker)
                .invoke(con)
        })?;
        claimed.map(|fields| self.parse(fields)).transpose()
    }

    fn renew(&self, uuid: &str, worker: &str, now: i64, lease_secs: i64) -> StoreResult<bool> {
        let renewed: i64 = self.with(|con| {
            self.scripts
                .renew
                .key(self.record_key(uuid))
                .key(self.key(&["queue"]))
                .key(self.key(&["running"]))
                .arg(uuid)
                .arg(worker)
                .arg(now)
                .arg(lease_secs)
                .invoke(con)
        })?;
        Ok(renewed == 1)
    }

    fn complete(&self, uuid: &str, worker: &str, result: &str, now: i64) -> StoreResult<bool> {
        let completed: i64 = self.with(|con| {
            self.scripts
                .complete
                .key(self.record_key(uuid))
                .key(self.key(&["queue"]))
                .key(self.key(&["running"]))
                .arg(uuid)
                .arg(worker)
                .arg(now)
                .arg(result)
                .invoke(con)
        })?;
        Ok(completed == 1)
    }

    fn erase_target(&self, target: &str) -> StoreResult<usize> {
        self.with(|con| {
            self.scripts
                .erase_target
                .key(self.target_key(target))
                .key(self.key(&["queue"]))
                .key(self.key(&["running"]))
                .key(self.key(&["expiry"]))
                .arg(self.record_prefix())
                .invoke(con)
        })
    }

    fn hit(&self, key: &str, limit: u32, window_secs: i64, now: i64) -> StoreResult<Hit> {
        let window_secs = window_secs.max(1);
        let window_start = now - now.rem_euclid(window_secs);
        let retry_after = window_start + window_secs - now;
        if limit == 0 {
            return Ok(Hit::Exceeded { retry_after });
        }
        let counter = self.key(&["hit", key, &window_start.to_string()]);
        // The counter lives until its window ends, measured from `now` (not Redis' clock), so
        // clocks that disagree shorten no window.
        let count: i64 = self.with(|con| {
            self.scripts
                .hit
                .key(&counter)
                .arg(limit)
                .arg(retry_after)
                .invoke(con)
        })?;
        Ok(match u32::try_from(count) {
            Ok(count) => Hit::Allowed { count },
            Err(_) => Hit::Exceeded { retry_after },
        })
    }

    fn record_outcome(
        &self,
        network: &str,
        found_product: bool,
        keep: usize,
        _now: i64,
    ) -> StoreResult<()> {
        let key = self.key(&["outcomes", network]);
        self.with(|con| {
            let mut pipe = redis::pipe();
            pipe.atomic()
                .cmd("LPUSH")
                .arg(&key)
                .arg(if found_product { "1" } else { "0" })
                .ignore();
            if keep == 0 {
                pipe.cmd("DEL").arg(&key).ignore();
            } else {
                pipe.cmd("LTRIM").arg(&key).arg(0).arg(keep - 1).ignore();
            }
            pipe.query::<()>(con)
        })
    }

    fn outcomes(&self, network: &str) -> StoreResult<Vec<bool>> {
        let key = self.key(&["outcomes", network]);
        let values: Vec<String> =
            self.with(|con| redis::cmd("LRANGE").arg(&key).arg(0).arg(-1).query(con))?;
        Ok(values.iter().map(|v| v == "1").collect())
    }

    fn pause(&self, network: &str, until: i64) -> StoreResult<()> {
        let key = self.key(&["pause", network]);
        self.with(|con| {
            redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(&key)
                .arg(until)
                .ignore()
                .cmd("EXPIREAT")
                .arg(&key)
                .arg(until)
                .ignore()
                .query::<()>(con)
        })
    }

    fn paused_until(&self, network: &str, now: i64) -> StoreResult<Option<i64>> {
        let key = self.key(&["pause", network]);
        let until: Option<i64> = self.with(|con| redis::cmd("GET").arg(&key).query(con))?;
        Ok(until.filter(|until| *until > now))
    }

    fn purge_expired(&self, now: i64) -> StoreResult<usize> {
        // Counters and pauses expire in Redis by themselves.
        let mut purged = 0;
        loop {
            let gone: usize = self.with(|con| {
                self.scripts
                    .purge
                    .key(self.key(&["queue"]))
                    .key(self.key(&["running"]))
                    .key(self.key(&["expiry"]))
                    .arg(self.record_prefix())
                    .arg(self.key(&["target", ""]))
                    .arg(now)
                    .arg(PURGE_BATCH)
                    .invoke(con)
            })?;
            purged += gone;
            if gone < PURGE_BATCH {
                return Ok(purged);
            }
        }
    }
}
