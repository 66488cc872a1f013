//! The JSON API of the public scan service: submit (`POST /api/scans`), poll
//! (`GET /api/scans/<uuid>`), export (`GET /api/scans/<uuid>/export/<format>`) and erase
//! (`DELETE /api/scans/<uuid>`). Handlers take the request and the time and answer; the HTTP
//! layer (`server::http`) has already capped the request.
//!
//! Errors are `{"error": {"code", "message", "field"}}` (`field` only where one field is at
//! fault); limits answer 429 with `Retry-After`; an unknown, expired or malformed uuid is 404
//! whatever the reason, so a uuid never tells anything about another scan.
//!
//! Erasing needs the right to erase: a submission is answered with an erase key (256 random
//! bits, hex) that only its submitter learns; the store keeps its SHA-256, never the key, and
//! no answer but the submission's (no poll, export, page or log line) carries it. `DELETE`
//! with `X-Erase-Key: <key>` erases that scan's record (its result with it) and nothing else:
//! another submitter of the same instance has a key of their own for their own record.

use super::limits;
use super::lookups::{TargetCheck, TargetRefusal};
use super::schema::described;
use super::store::{ScanRecord, ScanRequest, Status, Store};
use super::worker::{Completed, Wakeup};
use crate::clock::Clock;
use crate::server::http::{Request, Response};
use crate::server::new_uuid;
use crate::target::Target;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

pub use super::submission::{EXPORT_FORMATS, RELEASE_TRACKS};
use super::submission::{MAX_TARGET_CHARS, MAX_WAIVER_CHARS, MAX_WAIVERS};
/// How long `/healthz` waits for the store (or `--store-timeout`, if shorter): the answer,
/// 200 or 503, leaves within a second.
pub const HEALTH_DEADLINE: std::time::Duration = std::time::Duration::from_millis(800);

/// What the API needs besides the store.
#[derive(Clone)]
pub struct ApiConfig {
    /// The absolute URL the API is reached at, without a trailing slash.
    pub base_url: String,
    pub record_ttl_secs: i64,
    pub trusted_proxies: Vec<(IpAddr, u8)>,
    /// How long a caller that waits for its scan (MCP `scan_instance`) waits at most: the
    /// scan's time budget and the queue ahead of it.
    pub scan_wait: std::time::Duration,
    /// `/mcp` served at all (`--no-mcp` turns it off), and the token it requires.
    pub mcp: bool,
    pub mcp_token: Option<String>,
    /// `scanner.target_port`: the port a target written without one is scanned on, so the
    /// cooldown keys name it.
    pub target_port: Option<u16>,
    /// `--store-timeout`: the deadline the store calls of one request share.
    pub store_timeout: std::time::Duration,
}

impl ApiConfig {
    /// The path `--base-url` puts before every route: `/scanner` for
    /// `https://example.com/scanner`, empty at the root. A reverse proxy strips it before it
    /// forwards (nginx `location /scanner/ { proxy_pass http://127.0.0.1:8080/; }`), so requests
    /// arrive without it, and every URL we write for a browser carries it.
    pub fn path_prefix(&self) -> &str {
        let after_scheme = self
            .base_url
            .split_once("://")
            .map_or(self.base_url.as_str(), |(_, rest)| rest);
        after_scheme
            .find('/')
            .map_or("", |slash| &after_scheme[slash..])
            .trim_end_matches('/')
    }
}

/// Cheap to clone: a streamed answer (MCP progress over SSE) takes its own handle.
#[derive(Clone)]
pub struct Api {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub config: ApiConfig,
    pub check_target: Arc<TargetCheck>,
    /// Rung on every new record, so an idle scan worker of this node starts at once.
    pub wakeup: Arc<Wakeup>,
    /// Seats of the calls that wait for their scan while holding an HTTP worker (MCP
    /// `scan_instance`, `scan_instances`, their SSE streams): a bounded share of the workers,
    /// a few per client. A call without a seat answers at once with the queued scan's uuid.
    pub waits: Arc<crate::server::occupancy::Occupancy>,
    /// The MCP sessions this server issued (they live as long as the server).
    pub mcp_sessions: Arc<Mutex<super::mcp::sessions::Sessions>>,
}

/// A refusal of the API: status, code, message and the field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    pub field: Option<&'static str>,
}

impl ApiError {
    /// A refusal that is about no one field.
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            field: None,
        }
    }

    fn invalid(field: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            field: Some(field),
            ..ApiError::new(400, "invalid_field", message)
        }
    }

    /// The refusal with when to retry.
    pub(super) fn retry_after(self, secs: i64) -> Refused {
        Refused {
            error: self,
            retry_after: Some(secs),
        }
    }

    /// A JSON route's body must be declared `application/json`: any page can make its
    /// visitors' browsers send a form or `text/plain` here unasked, but not that.
    pub fn unless_json(request: &Request, route: &str) -> Result<(), ApiError> {
        if request.media_type() == "application/json" {
            return Ok(());
        }
        let message = format!("{route} takes a JSON body sent as Content-Type: application/json");
        Err(ApiError::new(415, "unsupported_media_type", message))
    }

    pub fn response(&self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code,
                message: self.message.clone(),
                field: self.field,
            },
        };
        Response::json(self.status, &json!(body))
    }
}

described! {
    /// The body of every refusal (`Error` of `/openapi.json`).
    #[derive(Serialize)]
    pub struct ErrorBody {
        pub error: ErrorDetail => json!({}),
    }
}

described! {
    #[derive(Serialize)]
    pub struct ErrorDetail {
        pub code: &'static str => json!({"description": "A stable, machine-readable code \
            (invalid_field, unknown_field, target_refused, not_found, rate_limited, \
            target_cooldown, ...)."}),
        pub message: String => json!({"description": "What went wrong, for a person."}),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub field: Option<&'static str> => json!({"description": "The submission field at \
            fault, when one is."}),
    }
}

/// The keywords of a scan's uuid, as the answers carry it and the paths take it.
pub fn uuid_keywords() -> Value {
    json!({"format": "uuid", "description": "The scan's random (v4) uuid."})
}

/// The keywords of an erase key, as the 202 answers it and `DELETE` takes it.
pub fn erase_key_keywords() -> Value {
    json!({
        "pattern": "^[0-9a-f]{64}$",
        "description": "The key that erases this scan (256 random bits, hex), answered to its \
                        submitter only: send it in the X-Erase-Key header of \
                        DELETE /api/scans/{uuid}. The service keeps only its SHA-256; no poll, \
                        export or page carries it.",
    })
}

const LINKS: &str = "#/components/schemas/Links";

/// A URL of the answers.
fn uri(description: &str) -> Value {
    json!({"format": "uri", "description": description})
}

described! {
    /// The absolute URLs of a scan (`Links` of `/openapi.json`), as [`Api::links`] writes them.
    #[derive(Clone, Debug, Serialize)]
    pub struct Links {
        pub poll as "self": String => uri("The poll URL."),
        pub page: String => uri("The result page."),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub export: Option<String> => uri("The export in the submission's preferred format, \
            when it named one."),
        /// Format → URL, one for each of [`EXPORT_FORMATS`].
        pub exports: Map<String, Value> => {
            let each: Map<String, Value> = EXPORT_FORMATS
                .iter()
                .map(|f| {
                    let link = uri(&format!("The {f} export (once completed)."));
                    (f.to_string(), member(String::schema(), link))
                })
                .collect();
            json!({"properties": each, "required": EXPORT_FORMATS})
        },
    }
}

described! {
    /// `/healthz`'s answer.
    #[derive(Serialize)]
    pub struct Health {
        pub status: &'static str => json!({"const": "ok"}),
    }
}

described! {
    /// The 202 answer to a submission.
    #[derive(Serialize)]
    pub struct ScanAccepted {
        pub uuid: String => uuid_keywords(),
        pub status: &'static str => json!({"const": Status::Queued.as_str()}),
        pub links: Links => json!({"$ref": LINKS}),
        pub erase_key: String => erase_key_keywords(),
    }
}

/// The state after `status` in a scan's life (`None` → the first). The match is exhaustive:
/// a new `Status` does not compile until it has its place here, and so in the documents (`discovery`).
fn after(status: Option<Status>) -> Option<Status> {
    match status {
        None => Some(Status::Queued),
        Some(Status::Queued) => Some(Status::Running),
        Some(Status::Running) => Some(Status::Completed),
        Some(Status::Completed) => None,
    }
}

/// Every state, in the order a scan moves through them.
pub fn statuses() -> Vec<Status> {
    std::iter::successors(after(None), |s| after(Some(*s))).collect()
}

/// The states the poll answers with `links` and `Retry-After` (the handler's test: anything
/// but `Completed`).
pub fn pending_statuses() -> Vec<&'static str> {
    statuses()
        .into_iter()
        .filter(|s| *s != Status::Completed)
        .map(Status::as_str)
        .collect()
}

described! {
    /// The poll's answer while the scan waits or runs.
    #[derive(Serialize)]
    pub struct ScanPending {
        pub uuid: String => uuid_keywords(),
        pub status: &'static str => json!({"enum": pending_statuses()}),
        pub links: Links => json!({"$ref": LINKS}),
    }
}

described! {
    /// The poll's answer once the scan completed.
    #[derive(Serialize)]
    pub struct ScanCompleted {
        pub uuid: String => uuid_keywords(),
        pub status: &'static str => json!({"const": Status::Completed.as_str()}),
        pub result: Value => json!({"$ref": "#/components/schemas/Result"}),
    }
}

described! {
    /// The answer to an erasure.
    #[derive(Serialize)]
    pub struct Erased {
        pub erased: u8 => json!({
            "const": 1,
            "description": "The scan's record (its result with it) was erased.",
        }),
    }
}

fn not_found() -> Refused {
    ApiError::new(404, "not_found", "no such scan (unknown, or expired)").into()
}

/// A refusal with the `Retry-After` it comes with, for the JSON API and the pages alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub error: ApiError,
    pub retry_after: Option<i64>,
}

impl From<ApiError> for Refused {
    fn from(error: ApiError) -> Refused {
        Refused {
            error,
            retry_after: None,
        }
    }
}

impl Refused {
    pub(super) fn unavailable(e: impl std::fmt::Display) -> Refused {
        // The store's message may name its address: it goes to the log, not to the client.
        eprintln!("check-storage-scanner web: store: {e}");
        let message = "the service cannot reach its store; try again shortly";
        ApiError::new(503, "unavailable", message).retry_after(10)
    }

    pub fn response(&self) -> Response {
        self.retry(self.error.response())
    }

    /// `response` with the `Retry-After` of this refusal, if it has one.
    pub fn retry(&self, response: Response) -> Response {
        match self.retry_after {
            Some(secs) => response.with_header("Retry-After", &secs.to_string()),
            None => response,
        }
    }
}

/// The answer of a handler that may be refused: its response, or the refusal's.
fn answered(handle: impl FnOnce() -> Result<Response, Refused>) -> Response {
    handle().unwrap_or_else(|refused| refused.response())
}

/// What the limits said of a submission, as a refusal (or none).
fn admitted(admission: limits::Verdict) -> Result<(), Refused> {
    admission
        .map_err(Refused::unavailable)?
        .map_err(|l| ApiError::new(429, l.code, l.message).retry_after(l.retry_after.max(1)))
}

const NOT_STRINGS: &str = "waive must be an array of strings";

/// One pattern of a submission's `waive`, trimmed.
fn waiver(item: &Value) -> Result<String, ApiError> {
    let Value::String(pattern) = item else {
        return Err(ApiError::invalid("waive", NOT_STRINGS));
    };
    let pattern = pattern.trim();
    if pattern.is_empty()
        || pattern.chars().count() > MAX_WAIVER_CHARS
        || pattern
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '|')
    {
        let message = "each waiver is a check id pattern such as hstsPreload, versionDisclosure or \
                       versionDisclosure:X-*";
        return Err(ApiError::invalid("waive", message));
    }
    Ok(pattern.to_string())
}

/// Reads a submission: a JSON object with `target_url` and at most the other three fields,
/// each of its type and value. The target is parsed the way the plugin parses `-H`.
pub fn parse_submission(body: &[u8]) -> Result<(ScanRequest, Target), ApiError> {
    let request = |message: &str| ApiError::new(400, "invalid_request", message);
    let value: Value =
        serde_json::from_slice(body).map_err(|e| request(&format!("the body is not JSON: {e}")))?;
    let Value::Object(object) = value else {
        return Err(request(
            "the body must be a JSON object such as {\"target_url\": \"cloud.example.com\"}",
        ));
    };
    if let Some(unknown) = object
        .keys()
        .find(|k| !ScanRequest::FIELDS.contains(&k.as_str()))
    {
        let shown: String = unknown.chars().take(40).collect();
        let fields = ScanRequest::FIELDS.join(", ");
        let message = format!("unknown field {shown:?}; a submission takes {fields}");
        return Err(ApiError::new(400, "unknown_field", message));
    }
    // Every field is read through here: one the schema (`ScanRequest`) does not name fails the
    // tests that submit it, and could never arrive anyway (refused as unknown above).
    let field = |name: &'static str| {
        debug_assert!(
            ScanRequest::FIELDS.contains(&name),
            "{name} is not in the schema"
        );
        object.get(name)
    };
    let waive = match field("waive") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.len() > MAX_WAIVERS => {
            let message = format!("waive takes at most {MAX_WAIVERS} patterns");
            return Err(ApiError::invalid("waive", message));
        }
        Some(Value::Array(items)) => items.iter().map(waiver).collect::<Result<_, _>>()?,
        Some(_) => return Err(ApiError::invalid("waive", NOT_STRINGS)),
    };
    let choice = |name: &'static str, allowed: &[&str]| -> Result<Option<String>, ApiError> {
        match field(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(v)) if allowed.contains(&v.as_str()) => Ok(Some(v.clone())),
            Some(_) => Err(ApiError::invalid(
                name,
                format!("{name} must be one of {}", allowed.join(", ")),
            )),
        }
    };
    let release_track = choice("release_track", &RELEASE_TRACKS)?;
    let format = choice("format", &EXPORT_FORMATS)?;
    // The target last: a refusal that names another field is about every target of a
    // call with several (MCP scan_instances), one that names target_url about that one only.
    let bad_target = |message: &str| Err(ApiError::invalid("target_url", message));
    let target_url = match field("target_url") {
        Some(Value::String(t)) if !t.trim().is_empty() => t.trim().to_string(),
        Some(Value::String(_)) | None => {
            return bad_target("target_url is required: the instance's hostname, address or URL");
        }
        Some(_) => return bad_target("target_url must be a string"),
    };
    if target_url.chars().count() > MAX_TARGET_CHARS || target_url.contains(',') {
        return bad_target(
            "target_url must name one instance (no commas, at most 2048 characters)",
        );
    }
    let target = Target::parse(&target_url).map_err(|e| ApiError::invalid("target_url", e.0))?;
    let scan = ScanRequest {
        target_url,
        waive,
        release_track,
        format,
    };
    Ok((scan, target))
}

/// The header `DELETE /api/scans/<uuid>` takes the scan's erase key in.
pub const ERASE_KEY_HEADER: &str = "X-Erase-Key";

/// A queued submission: its scan's uuid, and the key that erases its record (for the
/// submitter's eyes only: the store keeps its hash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    pub uuid: String,
    pub erase_key: String,
}

/// A new erase key: 32 bytes of the kernel's generator, 64 lower-case hex digits.
pub fn new_erase_key() -> Result<String, String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom for an erase key: {e}"))?;
    Ok(crate::text::hex(&bytes))
}

/// What the store keeps of an erase key: its SHA-256, lower-case hex.
pub fn erase_hash(key: &str) -> String {
    use sha2::{Digest, Sha256};
    crate::text::hex(&Sha256::digest(key.as_bytes()))
}

/// A uuid as we hand them out: 36 characters, lower-case hex and dashes in their places.
fn is_uuid(text: &str) -> bool {
    text.len() == 36
        && text.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_digit() || ('a'..='f').contains(&c),
        })
}

impl Api {
    pub(super) fn mcp_sessions(&self) -> MutexGuard<'_, super::mcp::sessions::Sessions> {
        crate::server::lock(&self.mcp_sessions)
    }

    /// `/healthz`: 200 when the store answers within [`HEALTH_DEADLINE`], else 503 with
    /// `Retry-After`, so a load balancer stops sending traffic to a node that cannot serve.
    pub(super) fn health(&self, _: &Request, _: &[&str]) -> Response {
        match self.store.ping(HEALTH_DEADLINE) {
            Ok(()) => Response::json(200, &json!(Health { status: "ok" })),
            Err(e) => Refused::unavailable(e).response(),
        }
    }

    /// The scan's URLs; `export` names the preferred export when the submission chose one.
    fn links(&self, uuid: &str, preferred: Option<&str>) -> Links {
        let scan = format!("{}/api/scans/{uuid}", self.config.base_url);
        let export = |format: &str| format!("{scan}/export/{format}");
        Links {
            page: format!("{}/scans/{uuid}", self.config.base_url),
            export: preferred.filter(|f| EXPORT_FORMATS.contains(f)).map(export),
            exports: EXPORT_FORMATS
                .iter()
                .map(|f| (f.to_string(), json!(export(f))))
                .collect(),
            poll: scan,
        }
    }

    pub(super) fn submit(&self, request: &Request, _: &[&str]) -> Response {
        answered(|| {
            ApiError::unless_json(request, "POST /api/scans")?;
            let (scan, target) = parse_submission(&request.body)?;
            let preferred = scan.format.clone();
            let queued = self.enqueue(scan, &target, request)?;
            let links = self.links(&queued.uuid, preferred.as_deref());
            let location = links.poll.clone();
            let accepted = ScanAccepted {
                uuid: queued.uuid,
                status: Status::Queued.as_str(),
                links,
                erase_key: queued.erase_key,
            };
            Ok(Response::json(202, &json!(accepted))
                .with_header("Location", &location)
                // The erase key is the submitter's alone: no cache keeps this answer.
                .with_header("Cache-Control", "no-store"))
        })
    }

    /// Queues a validated submission (the JSON API's, the page form's and MCP's): the
    /// address's rate (before any DNS), the target guard, the target's cooldown and the
    /// network's day, a new record. The new scan's uuid and erase key, or why not.
    pub fn enqueue(
        &self,
        scan: ScanRequest,
        target: &Target,
        request: &Request,
    ) -> Result<Queued, Refused> {
        let now_ms = self.clock.now_millis();
        let now = now_ms.div_euclid(1000);
        let client = limits::client_of(request, &self.config.trusted_proxies);
        // Cheap refusals first: the address's own rate is counted on this attempt before any
        // DNS work, so a flood of (slow) names from one address costs one store call each
        // after its tenth.
        admitted(limits::admit_attempt(&*self.store, client, now_ms))?;
        let addresses = match (self.check_target)(target) {
            Ok(addresses) => addresses,
            Err(TargetRefusal::Refused(message)) => {
                return Err(Refused::from(ApiError {
                    field: Some("target_url"),
                    ..ApiError::new(400, "target_refused", message)
                }));
            }
            // Every resolver thread is busy (`lookups`): the request is not kept waiting.
            Err(TargetRefusal::Busy) => {
                let message = "the service is resolving as many names as it may at once; try \
                               again in a few seconds";
                let busy = ApiError::new(503, "resolver_busy", message);
                return Err(busy.retry_after(super::lookups::BUSY_RETRY_SECS));
            }
        };
        // One instance, one cooldown: its names and the addresses it resolved to, each with
        // the ports its scan connects to, all spent or none.
        let keys = limits::cooldown_keys(target, self.config.target_port, &addresses);
        admitted(limits::admit_scan(&*self.store, client, &keys, now_ms))?;
        let uuid = new_uuid().map_err(Refused::unavailable)?;
        let erase_key = new_erase_key().map_err(Refused::unavailable)?;
        let record = ScanRecord {
            // The scan connects to the addresses whose cooldown was spent, not to what a
            // second lookup answers when it runs.
            addresses,
            erase_hash: Some(erase_hash(&erase_key)),
            ..ScanRecord::queued(
                uuid.clone(),
                target.scan_key(),
                limits::network_key(client),
                scan,
                now,
                self.config.record_ttl_secs,
            )
        };
        self.store
            .insert(&record, now)
            .map_err(Refused::unavailable)?;
        self.wakeup.notify();
        Ok(Queued { uuid, erase_key })
    }

    /// The record of a uuid, or why there is none to answer.
    pub fn record(&self, uuid: &str) -> Result<ScanRecord, Refused> {
        if !is_uuid(uuid) {
            return Err(not_found());
        }
        let record = self.store.get(uuid, self.clock.now());
        record.map_err(Refused::unavailable)?.ok_or_else(not_found)
    }

    /// `GET /api/scans/{uuid}`.
    pub(super) fn poll(&self, _: &Request, path: &[&str]) -> Response {
        answered(|| {
            let record = self.record(path[0])?;
            let status = record.status.as_str();
            if record.status == Status::Completed {
                let result = Completed::parse(record.result.as_deref())
                    .map_or(Value::Null, |c| json!(c.document));
                let completed = ScanCompleted {
                    uuid: record.uuid,
                    status,
                    result,
                };
                return Ok(Response::json(200, &json!(completed)));
            }
            let pending = ScanPending {
                links: self.links(&record.uuid, record.request.format.as_deref()),
                uuid: record.uuid,
                status,
            };
            Ok(Response::json(200, &json!(pending)).with_header("Retry-After", "2"))
        })
    }

    /// `GET /api/scans/{uuid}/export/{format}`.
    pub(super) fn export(&self, _: &Request, path: &[&str]) -> Response {
        answered(|| {
            let (uuid, format) = (path[0], path[1]);
            let record = self.record(uuid)?;
            if !EXPORT_FORMATS.contains(&format) {
                let message = format!("exports are {}", EXPORT_FORMATS.join(", "));
                return Err(ApiError::new(404, "not_found", message).into());
            }
            if record.status != Status::Completed {
                let status = record.status.as_str();
                let message = format!("the scan is {status}; export it once it completed");
                return Err(ApiError::new(409, "not_completed", message).retry_after(2));
            }
            let completed = Completed::parse(record.result.as_deref())
                .ok_or_else(|| Refused::unavailable("a completed record without its result"))?;
            let exported = super::export::file(&completed, &record.uuid, format);
            let disposition = format!("attachment; filename=\"{}\"", exported.filename);
            Ok(Response::new(200, exported.media, exported.body)
                .with_header("Content-Disposition", &disposition))
        })
    }

    /// `DELETE /api/scans/{uuid}`, with the erase key in [`ERASE_KEY_HEADER`].
    pub(super) fn erase(&self, request: &Request, path: &[&str]) -> Response {
        answered(|| {
            self.erase_with_key(path[0], request.header(ERASE_KEY_HEADER))?;
            Ok(Response::json(200, &json!(Erased { erased: 1 })))
        })
    }

    /// Erases the record of `uuid` when `erase_key` is the key its submission was answered
    /// with (compared by its hash, in constant time); else why not: 403
    /// `erase_key_required` without a key, 404 for no such scan, 403 `erase_key_invalid` for
    /// any other key (a record of before erase keys has none that fits).
    pub fn erase_with_key(&self, uuid: &str, erase_key: Option<&str>) -> Result<(), Refused> {
        let forbidden = |code, message| ApiError::new(403, code, message).into();
        let Some(erase_key) = erase_key.map(str::trim).filter(|k| !k.is_empty()) else {
            let message = "erasing a scan needs the erase key its submission was answered with, \
                           in the X-Erase-Key header";
            return Err(forbidden("erase_key_required", message));
        };
        let record = self.record(uuid)?;
        let presented = erase_hash(erase_key);
        let fits = record.erase_hash.as_deref().is_some_and(|kept| {
            crate::server::http::constant_time_eq(presented.as_bytes(), kept.as_bytes())
        });
        if !fits {
            let message = "this is not the erase key of this scan; only its submitter may erase it";
            return Err(forbidden("erase_key_invalid", message));
        }
        match self.store.erase(&record.uuid) {
            Ok(true) => Ok(()),
            Ok(false) => Err(not_found()),
            Err(e) => Err(Refused::unavailable(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> ApiError {
        parse_submission(body.as_bytes()).unwrap_err()
    }

    #[test]
    fn a_submission_takes_exactly_its_four_fields_each_checked() {
        let (scan, target) = parse_submission(
            br#"{"target_url": "https://Cloud.Example.com:8443/", "waive": ["hstsPreload"],
                "release_track": "lts", "format": "pdf"}"#,
        )
        .unwrap();
        assert_eq!(scan.waive, ["hstsPreload"]);
        assert_eq!(scan.release_track.as_deref(), Some("lts"));
        assert_eq!(scan.format.as_deref(), Some("pdf"));
        assert_eq!(target.port, Some(8443));

        let e = refused(r#"{"target_url": "a.example", "workers": 9}"#);
        assert_eq!((e.status, e.code, e.field), (400, "unknown_field", None));
        for (body, field) in [
            (r#"{}"#, "target_url"),
            (r#"{"target_url": ""}"#, "target_url"),
            (r#"{"target_url": 5}"#, "target_url"),
            (r#"{"target_url": "a.example,b.example"}"#, "target_url"),
            (r#"{"target_url": "ftp://a.example"}"#, "target_url"),
            (r#"{"target_url": "a.example", "waive": "hsts"}"#, "waive"),
            (r#"{"target_url": "a.example", "waive": [1]}"#, "waive"),
            (r#"{"target_url": "a.example", "waive": ["a b"]}"#, "waive"),
            (
                r#"{"target_url": "a.example", "release_track": "nightly"}"#,
                "release_track",
            ),
            (r#"{"target_url": "a.example", "format": "xml"}"#, "format"),
            (r#"{"target_url": "a.example", "format": 1}"#, "format"),
        ] {
            let e = refused(body);
            assert_eq!((e.status, e.field), (400, Some(field)), "{body}: {e:?}");
        }
        for body in ["", "nonsense", "[1]", "\"a.example\"", "{\"target_url\": "] {
            let e = refused(body);
            assert_eq!((e.status, e.code), (400, "invalid_request"), "{body}");
        }
        let body = ApiError::invalid("format", "x").response().body;
        let value: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            value,
            json!({"error": {"code": "invalid_field", "message": "x", "field": "format"}})
        );
    }

    #[test]
    fn uuids_are_recognised_by_shape_only() {
        assert!(is_uuid("0f8fad5b-d9cb-469f-a165-70867728950e"));
        assert!(!is_uuid("0F8FAD5B-D9CB-469F-A165-70867728950E"));
        assert!(!is_uuid("0f8fad5b-d9cb-469f-a165-70867728950"));
        assert!(!is_uuid("../../etc/passwd"));
    }
}
