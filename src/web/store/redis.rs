//! The shared store (`--store redis://host:port/db`): several nodes behind a load balancer keep
//! queue, records and limit counters in one Redis, so a scan submitted on one node is polled on
//! another and the limits count across nodes. Every change that reads before it writes is one
//! Lua script, which Redis runs atomically: two nodes never claim the same record and a refused
//! hit is never counted.
//!
//! Keys, all under a prefix (`css:` unless told otherwise), every one with a TTL:
//! - `rec:<uuid>`: the record, a hash of its fields (`request` as JSON, `addresses`
//!   space-separated), `EXPIRE`d after the life it has left (`expires_at - now`);
//! - `queue`: queued records, a sorted set scored by submission time; `running`: running ones
//!   scored by `lease_until` (a claim moves those whose lease ran out back to `queue`);
//! - `expiry`: every record scored by `expires_at`, for `purge_expired`;
//! - `hits:<key>`: a limit's sliding log, its hits scored by their time in milliseconds,
//!   living one window after the newest;
//! - `outcomes:<network>`: a list, newest first, trimmed to `keep`;
//! - `pauses`: paused networks scored by the end of their pause;
//! - `ends`: the keys above that end by the API's clock (logs, outcomes), scored by that end,
//!   so `purge_expired` erases them when a test or a node's clock runs ahead of Redis'.
//!
//! A shared key (`queue`, `running`, `expiry`, `pauses`, `ends`) lives at least as
//! long as the longest-lived of its members, so it goes when they have all gone.
//!
//! Redis expires keys by its own clock while the API passes `now`, so every read also checks
//! the time itself (`get` refuses a record with `expires_at <= now`): the stores behave alike
//! when a test moves the clock. Every lifetime sent to Redis is a duration computed on the
//! API's clock (`EXPIRE`, `PEXPIRE`), never an instant (`EXPIREAT`): a node whose clock is a
//! week off Redis' (or a test's pinned clock) neither loses a key early nor keeps it late.
//! Scores only the API compares (the queue, leases, `expiry`, `ends`, pauses) stay on its
//! clock. The scripts build key names from the
//! prefix, which a standalone Redis (or a replicated one) allows; Redis Cluster is not
//! supported.
//!
//! Each call takes an idle connection of the process (or connects) and gives it back when the
//! call went well, so a call that hangs holds up no other. Connections connect, read and write
//! with the store's timeout, so a dead or hung Redis is a [`StoreError`] within it, never a
//! hang; a connection that failed is dropped and the next call connects again.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use redis::{Client, Connection, ConnectionLike, RedisResult, Script};

use super::{
    Admission, Limit, ScanRecord, ScanRequest, Status, Store, StoreError, StoreResult, redact_url,
    room_in,
};

/// The key prefix `--store redis://...` uses.
pub const DEFAULT_PREFIX: &str = "css:";

/// Idle connections kept for the next calls; more at once are closed after their call.
const MAX_IDLE: usize = 16;

/// Records `purge_expired` removes per script run (Redis serves nobody else meanwhile).
const PURGE_BATCH: usize = 500;

/// Lua functions the scripts below start with ([`script`] puts them there).
const HELPERS: &str = r"
-- `key` lives at least `secs` more seconds, and never less than it already does.
local function outlive(key, secs)
  secs = math.max(1, math.ceil(secs))
  if redis.call('TTL', key) < secs then
    redis.call('EXPIRE', key, secs)
  end
end
-- `key` ends at `at` (seconds, the API's clock; `now` is that clock's time): listed in the
-- `ends` index for the purge, never moved earlier.
local function ends_at(index, key, at, now)
  redis.call('ZADD', index, 'GT', at, key)
  outlive(index, at - now)
end
";

/// A script with the helpers. Made for each call: hashing it costs nothing beside the round
/// trip, and `invoke` loads it into a Redis that does not know it yet.
fn script(body: &str) -> Script {
    Script::new(&format!("{HELPERS}{body}"))
}

/// KEYS: record, queue, running, expiry. ARGV: uuid, status, submitted_at,
/// lease_until (or ''), expires_at, now, then the hash's field/value pairs.
const INSERT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('a record with uuid ' .. ARGV[1] .. ' exists already')
end
redis.call('HSET', KEYS[1], unpack(ARGV, 7))
-- The life left on the API's clock: `expires_at` is an instant of that clock, not Redis'.
local lives = math.max(1, tonumber(ARGV[5]) - tonumber(ARGV[6]))
redis.call('EXPIRE', KEYS[1], lives)
if ARGV[2] == 'queued' then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
elseif ARGV[2] == 'running' then
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
end
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
for i = 2, 4 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    outlive(KEYS[i], lives)
  end
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
    outlive(KEYS[2], tonumber(expires) - now)
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

/// KEYS: record, queue, running, expiry. ARGV: uuid. Returns 1 when the record was there.
const ERASE: &str = r"
local erased = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return erased
";

/// KEYS: pauses, ends, then one log per limit. ARGV: network, now_ms, then limit and window_ms
/// per log. Returns the end of the network's pause (or -1), then (index, milliseconds until
/// room) for each full limit; when that is all of it, the hit was counted on every log.
const ADMIT: &str = r"
local now = tonumber(ARGV[2])
local answer = {-1}
local paused = redis.call('ZSCORE', KEYS[1], ARGV[1])
if paused and tonumber(paused) * 1000 > now then
  answer[1] = tonumber(paused)
end
for i = 3, #KEYS do
  local limit = tonumber(ARGV[2 * i - 3])
  local window = tonumber(ARGV[2 * i - 2])
  if limit == 0 then
    table.insert(answer, i - 3)
    table.insert(answer, math.max(window, 1))
  else
    -- The limit-th newest hit in the window must leave it before there is room.
    local newest = redis.call('ZREVRANGEBYSCORE', KEYS[i], '+inf', '(' .. (now - window),
      'WITHSCORES', 'LIMIT', 0, limit)
    if #newest / 2 >= limit then
      table.insert(answer, i - 3)
      table.insert(answer, math.max(tonumber(newest[2 * limit]) + window - now, 1))
    end
  end
end
if #answer > 1 or answer[1] ~= -1 then
  return answer
end
for i = 3, #KEYS do
  local window = tonumber(ARGV[2 * i - 2])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  -- Members are unique: two hits in one millisecond are two hits.
  local same = redis.call('ZCOUNT', KEYS[i], now, now)
  redis.call('ZADD', KEYS[i], now, ARGV[2] .. '-' .. (same + 1))
  redis.call('PEXPIRE', KEYS[i], window)
  ends_at(KEYS[2], KEYS[i], math.ceil((now + window) / 1000), math.floor(now / 1000))
end
return answer
";

/// KEYS: outcomes list, ends. ARGV: '1' or '0', keep, now, ttl_secs.
const RECORD_OUTCOME: &str = r"
redis.call('LPUSH', KEYS[1], ARGV[1])
local keep = tonumber(ARGV[2])
if keep == 0 then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('LTRIM', KEYS[1], 0, keep - 1)
redis.call('EXPIRE', KEYS[1], math.max(tonumber(ARGV[4]), 1))
local now = tonumber(ARGV[3])
ends_at(KEYS[2], KEYS[1], now + tonumber(ARGV[4]), now)
return 1
";

/// KEYS: pauses. ARGV: network, until, now.
const PAUSE: &str = r"
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
outlive(KEYS[1], tonumber(ARGV[2]) - tonumber(ARGV[3]))
return 1
";

/// KEYS: queue, running, expiry, ends, pauses. ARGV: record key prefix, now, batch. Returns how
/// many expired records and how many ended keys went.
const PURGE: &str = r"
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[2], 'LIMIT', 0, ARGV[3])
for _, uuid in ipairs(gone) do
  redis.call('DEL', ARGV[1] .. uuid)
  redis.call('ZREM', KEYS[1], uuid)
  redis.call('ZREM', KEYS[2], uuid)
  redis.call('ZREM', KEYS[3], uuid)
end
local ended = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[2], 'LIMIT', 0, ARGV[3])
for _, key in ipairs(ended) do
  redis.call('DEL', key)
  redis.call('ZREM', KEYS[4], key)
end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[2])
return {#gone, #ended}
";

/// The Redis store. Several of them (on several nodes) share one Redis safely.
pub struct RedisStore {
    client: Client,
    /// Connections no call is using.
    idle: Mutex<Vec<Connection>>,
    /// The URL as errors name it: password replaced by `***`.
    shown: String,
    prefix: String,
    timeout: Duration,
}

impl RedisStore {
    /// Connects to `url` (`redis://[:password@]host:port/db`) with every key under `prefix` and
    /// `timeout` for connecting, reading and writing; fails at once when Redis does not answer.
    pub fn open_with(url: &str, prefix: &str, timeout: Duration) -> StoreResult<RedisStore> {
        let shown = redact_url(url);
        let opened = |e: redis::RedisError| StoreError(format!("store {shown}: {e}"));
        let info = redis::IntoConnectionInfo::into_connection_info(url).map_err(opened)?;
        // No CLIENT SETINFO after connecting: against a frozen Redis its reply would cost a
        // whole timeout before the call's own command waited another.
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        let client = Client::open(info.set_redis_settings(settings)).map_err(opened)?;
        let store = RedisStore {
            client,
            idle: Mutex::new(Vec::new()),
            shown,
            prefix: prefix.to_string(),
            timeout,
        };
        store.ping(timeout)?;
        Ok(store)
    }

    fn key(&self, parts: &[&str]) -> String {
        format!("{}{}", self.prefix, parts.join(":"))
    }

    /// The keys of `names` (`queue`, `running`, ...), in order: a script's KEYS.
    fn keys(&self, names: &[&str]) -> Vec<String> {
        names.iter().map(|name| self.key(&[name])).collect()
    }

    fn record_prefix(&self) -> String {
        self.key(&["rec", ""])
    }

    fn record_key(&self, uuid: &str) -> String {
        self.key(&["rec", uuid])
    }

    fn connect(&self, timeout: Duration) -> RedisResult<Connection> {
        self.client.get_connection_with_timeout(timeout)
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Connection>> {
        crate::server::lock(&self.idle)
    }

    /// An idle connection, or a new one (connecting within `timeout`).
    fn take(&self, timeout: Duration) -> StoreResult<Connection> {
        // The pool is locked for the pop only, never while connecting.
        let idle = self.idle().pop();
        match idle {
            Some(connection) if connection.is_open() => Ok(connection),
            _ => self.connect(timeout).map_err(|e| self.error(e)),
        }
    }

    fn give_back(&self, connection: Connection) {
        let mut idle = self.idle();
        if idle.len() < MAX_IDLE {
            idle.push(connection);
        }
    }

    /// Runs `f` on a connection of its own within the store's timeout (as much of it as the
    /// request has left: `store::call_budget`).
    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> RedisResult<T>) -> StoreResult<T> {
        self.within(self.timeout, f)
    }

    /// Runs `f` on a connection of its own, connecting and commands together within `limit`
    /// (and what the request has left). Any error drops the connection (a timed-out reply may
    /// still arrive and must not answer the next command).
    fn within<T>(
        &self,
        limit: Duration,
        f: impl FnOnce(&mut Connection) -> RedisResult<T>,
    ) -> StoreResult<T> {
        let budget = super::call_budget(limit);
        if budget.is_zero() {
            return Err(self.error("the request's store deadline passed"));
        }
        let deadline = Instant::now() + budget;
        let mut connection = self.take(budget)?;
        // Connecting spent part of the deadline: the commands get what is left.
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        let answer = connection
            .set_read_timeout(Some(left))
            .and_then(|()| connection.set_write_timeout(Some(left)))
            .and_then(|()| f(&mut connection))
            .map_err(|e| self.error(e))?;
        self.give_back(connection);
        Ok(answer)
    }

    /// Runs `script` ([`RENEW`] or [`COMPLETE`]) on the record of `uuid` if `worker` holds
    /// it; whether it did.
    fn change_held(
        &self,
        script_body: &str,
        uuid: &str,
        worker: &str,
        now: i64,
        value: impl redis::ToRedisArgs,
    ) -> StoreResult<bool> {
        let changed: i64 = self.with(|con| {
            script(script_body)
                .key(self.record_key(uuid))
                .key(self.keys(&["queue", "running"]))
                .arg(uuid)
                .arg(worker)
                .arg(now)
                .arg(value)
                .invoke(con)
        })?;
        Ok(changed == 1)
    }

    fn error(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError(format!("store {}: {e}", self.shown))
    }

    fn parse(&self, fields: HashMap<String, String>) -> StoreResult<ScanRecord> {
        let mut fields = Fields {
            uuid: fields.get("uuid").cloned().unwrap_or_default(),
            map: fields,
            shown: &self.shown,
        };
        let request: String = fields.required("request")?;
        let request: ScanRequest =
            serde_json::from_str(&request).map_err(|_| fields.bad("request", &request))?;
        let status: String = fields.required("status")?;
        let status = Status::parse(&status).ok_or_else(|| fields.bad("status", &status))?;
        let addresses = match fields.map.remove("addresses") {
            Some(v) => super::parse_addresses(&v).map_err(|_| fields.bad("addresses", &v))?,
            None => Vec::new(),
        };
        Ok(ScanRecord {
            uuid: fields.uuid.clone(),
            target: fields.required("target")?,
            network: fields.required("network")?,
            request,
            status,
            submitted_at: fields.required("submitted_at")?,
            started_at: fields.optional("started_at")?,
            finished_at: fields.optional("finished_at")?,
            worker: fields.optional("worker")?,
            lease_until: fields.optional("lease_until")?,
            attempts: fields.optional("attempts")?.unwrap_or(0),
            result: fields.optional("result")?,
            expires_at: fields.required("expires_at")?,
            addresses,
            erase_hash: fields.optional("erase_hash")?,
        })
    }
}

/// `text` as a Redis glob that matches it literally.
fn glob_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
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

    fn optional<T: std::str::FromStr>(&mut self, field: &str) -> StoreResult<Option<T>> {
        self.map
            .remove(field)
            .map(|v| v.parse().map_err(|_| self.bad(field, &v)))
            .transpose()
    }

    fn required<T: std::str::FromStr>(&mut self, field: &str) -> StoreResult<T> {
        self.optional(field)?
            .ok_or_else(|| self.bad(field, "(missing)"))
    }
}

impl Store for RedisStore {
    fn insert(&self, record: &ScanRecord, now: i64) -> StoreResult<()> {
        let request = serde_json::to_string(&record.request).map_err(|e| self.error(e))?;
        let text = |v: Option<i64>| v.map(|v| v.to_string());
        // The hash's fields; one without a value is left out.
        let fields = [
            ("uuid", Some(record.uuid.clone())),
            ("target", Some(record.target.clone())),
            ("network", Some(record.network.clone())),
            ("request", Some(request)),
            ("status", Some(record.status.as_str().to_string())),
            ("submitted_at", text(Some(record.submitted_at))),
            ("attempts", Some(record.attempts.to_string())),
            ("expires_at", text(Some(record.expires_at))),
            ("started_at", text(record.started_at)),
            ("finished_at", text(record.finished_at)),
            ("worker", record.worker.clone()),
            ("lease_until", text(record.lease_until)),
            ("result", record.result.clone()),
            (
                "addresses",
                (!record.addresses.is_empty()).then(|| super::addresses_text(&record.addresses)),
            ),
            ("erase_hash", record.erase_hash.clone()),
        ];
        self.with(|con| {
            let script = script(INSERT);
            let mut invocation = script.prepare_invoke();
            invocation
                .key(self.record_key(&record.uuid))
                .key(self.keys(&["queue", "running", "expiry"]))
                .arg(&record.uuid)
                .arg(record.status.as_str())
                .arg(record.submitted_at)
                .arg(text(record.lease_until).unwrap_or_default())
                .arg(record.expires_at)
                .arg(now);
            for (field, value) in &fields {
                if let Some(value) = value {
                    invocation.arg(*field).arg(value);
                }
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
            script(CLAIM)
                .key(self.keys(&["queue", "running"]))
                .arg(self.record_prefix())
                .arg(now)
                .arg(lease_secs)
                .arg(worker)
                .invoke(con)
        })?;
        claimed.map(|fields| self.parse(fields)).transpose()
    }

    fn renew(&self, uuid: &str, worker: &str, now: i64, lease_secs: i64) -> StoreResult<bool> {
        self.change_held(RENEW, uuid, worker, now, lease_secs)
    }

    fn complete(&self, uuid: &str, worker: &str, result: &str, now: i64) -> StoreResult<bool> {
        self.change_held(COMPLETE, uuid, worker, now, result)
    }

    fn erase(&self, uuid: &str) -> StoreResult<bool> {
        let erased: i64 = self.with(|con| {
            script(ERASE)
                .key(self.record_key(uuid))
                .key(self.keys(&["queue", "running", "expiry"]))
                .arg(uuid)
                .invoke(con)
        })?;
        Ok(erased == 1)
    }

    fn admit(&self, limits: &[Limit], network: &str, now_ms: i64) -> StoreResult<Admission> {
        let answer: Vec<i64> = self.with(|con| {
            let script = script(ADMIT);
            let mut invocation = script.prepare_invoke();
            invocation
                .key(self.keys(&["pauses", "ends"]))
                .arg(network)
                .arg(now_ms);
            for limit in limits {
                invocation
                    .key(self.key(&["hits", &limit.key]))
                    .arg(limit.limit)
                    .arg(limit.window_ms);
            }
            invocation.invoke(con)
        })?;
        let bad = || self.error("a malformed admission answer");
        let (&paused, full) = answer.split_first().ok_or_else(bad)?;
        Ok(Admission {
            paused_until: (paused >= 0).then_some(paused),
            full: full
                .chunks(2)
                .map(|pair| match pair {
                    [index, wait] => usize::try_from(*index)
                        .map(|i| (i, *wait))
                        .map_err(|_| bad()),
                    _ => Err(bad()),
                })
                .collect::<StoreResult<_>>()?,
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
        self.with(|con| {
            script(RECORD_OUTCOME)
                .key(self.key(&["outcomes", network]))
                .key(self.key(&["ends"]))
                .arg(if found_product { "1" } else { "0" })
                .arg(keep)
                .arg(now)
                .arg(ttl_secs)
                .invoke::<i64>(con)
                .map(drop)
        })
    }

    fn outcomes(&self, network: &str) -> StoreResult<Vec<bool>> {
        let key = self.key(&["outcomes", network]);
        let values: Vec<String> =
            self.with(|con| redis::cmd("LRANGE").arg(&key).arg(0).arg(-1).query(con))?;
        Ok(values.iter().map(|v| v == "1").collect())
    }

    fn pause(&self, network: &str, until: i64, now: i64) -> StoreResult<()> {
        self.with(|con| {
            script(PAUSE)
                .key(self.key(&["pauses"]))
                .arg(network)
                .arg(until)
                .arg(now)
                .invoke::<i64>(con)
                .map(drop)
        })
    }

    fn paused_until(&self, network: &str, now: i64) -> StoreResult<Option<i64>> {
        let key = self.key(&["pauses"]);
        let until: Option<i64> =
            self.with(|con| redis::cmd("ZSCORE").arg(&key).arg(network).query(con))?;
        Ok(until.filter(|until| *until > now))
    }

    fn pauses(&self, now: i64) -> StoreResult<Vec<(String, i64)>> {
        let key = self.key(&["pauses"]);
        let pauses: Vec<(String, f64)> = self.with(|con| {
            redis::cmd("ZRANGEBYSCORE")
                .arg(&key)
                .arg(format!("({now}"))
                .arg("+inf")
                .arg("WITHSCORES")
                .query(con)
        })?;
        let mut pauses: Vec<(String, i64)> = pauses
            .into_iter()
            .map(|(network, until)| (network, until as i64))
            .collect();
        pauses.sort();
        Ok(pauses)
    }

    fn lift_pause(&self, network: &str, now: i64) -> StoreResult<bool> {
        let pauses = self.key(&["pauses"]);
        let outcomes = self.key(&["outcomes", network]);
        let (until, ..): (Option<f64>, i64, i64, i64) = self.with(|con| {
            redis::pipe()
                .atomic()
                .cmd("ZSCORE")
                .arg(&pauses)
                .arg(network)
                .cmd("ZREM")
                .arg(&pauses)
                .arg(network)
                .cmd("DEL")
                .arg(&outcomes)
                .cmd("ZREM")
                .arg(self.key(&["ends"]))
                .arg(&outcomes)
                .query(con)
        })?;
        Ok(until.is_some_and(|until| until as i64 > now))
    }

    fn full_limits(
        &self,
        prefix: &str,
        limit: u32,
        window_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Vec<(String, i64)>> {
        // The logs are found through the `ends` index (never KEYS, which blocks Redis), a page
        // at a time.
        let logs = self.key(&["hits", ""]);
        let pattern = format!("{}*", glob_escape(&format!("{logs}{prefix}")));
        let ends = self.key(&["ends"]);
        let mut full = Vec::new();
        let mut cursor = 0u64;
        loop {
            let (next, page): (u64, Vec<(String, f64)>) = self.with(|con| {
                redis::cmd("ZSCAN")
                    .arg(&ends)
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(PURGE_BATCH)
                    .query(con)
            })?;
            if !page.is_empty() {
                let newest: Vec<Vec<(String, f64)>> = self.with(|con| {
                    let mut pipe = redis::pipe();
                    for (key, _) in &page {
                        pipe.cmd("ZREVRANGEBYSCORE")
                            .arg(key)
                            .arg("+inf")
                            .arg(format!("({}", now_ms - window_ms))
                            .arg("WITHSCORES")
                            .arg("LIMIT")
                            .arg(0)
                            .arg(limit);
                    }
                    pipe.query(con)
                })?;
                for ((key, _), hits) in page.iter().zip(newest) {
                    let newest_first: Vec<i64> = hits.iter().map(|(_, at)| *at as i64).collect();
                    if let Some(wait) = room_in(&newest_first, limit, window_ms, now_ms) {
                        let key = key.strip_prefix(&logs).unwrap_or(key);
                        full.push((key.to_string(), wait));
                    }
                }
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
        // ZSCAN may return a key twice.
        full.sort();
        full.dedup_by(|a, b| a.0 == b.0);
        Ok(full)
    }

    fn forget_hits(&self, key: &str) -> StoreResult<bool> {
        let log = self.key(&["hits", key]);
        let (deleted, _): (i64, i64) = self.with(|con| {
            redis::pipe()
                .atomic()
                .cmd("DEL")
                .arg(&log)
                .cmd("ZREM")
                .arg(self.key(&["ends"]))
                .arg(&log)
                .query(con)
        })?;
        Ok(deleted > 0)
    }

    fn ping(&self, within: Duration) -> StoreResult<()> {
        self.within(within.min(self.timeout), |con| {
            redis::cmd("PING").query::<String>(con).map(drop)
        })
    }

    fn purge_expired(&self, now: i64) -> StoreResult<usize> {
        // Redis expires every key by its own clock too; this erases what ended by `now`.
        let mut purged = 0;
        loop {
            let (records, keys): (usize, usize) = self.with(|con| {
                script(PURGE)
                    .key(self.keys(&["queue", "running", "expiry", "ends", "pauses"]))
                    .arg(self.record_prefix())
                    .arg(now)
                    .arg(PURGE_BATCH)
                    .invoke(con)
            })?;
            purged += records;
            if records < PURGE_BATCH && keys < PURGE_BATCH {
                return Ok(purged);
            }
        }
    }
}
