//! `/mcp`: the scan API as Model Context Protocol tools and prompts, over streamable HTTP,
//! blocking, on our own serde JSON-RPC types.
//!
//! One JSON-RPC 2.0 request per `POST /mcp` (batches are refused), answered with
//! `application/json`; notifications and client responses get 202 without a body. `initialize`
//! negotiates the protocol version and issues `Mcp-Session-Id`; every later request must carry
//! it (missing → 400, unknown → 404); `DELETE /mcp` ends it. Sessions live in this process's
//! memory, at most [`MAX_SESSIONS`] (then only the busiest network gives one up). `GET /mcp` is 405: there is no
//! standalone SSE stream. A request from another site's page is refused with 403 (DNS
//! rebinding; see `origin`), and a body not sent as `application/json` with 415.
//!
//! A `tools/call` whose params carry `_meta.progressToken`, from a client that accepts
//! `text/event-stream`, is answered as SSE: `notifications/progress` (queued → running →
//! completed) and then the JSON-RPC response, each an `event: message` written the moment it
//! happens (a streamed body of [`Response::streaming`]); a comment every 15 s keeps a quiet
//! stream open, and a client that hung up ends the wait (the scan runs on).
//!
//! The tools call the API's own functions ([`Api::enqueue`], [`Api::record`], the store's
//! erase) with the HTTP request they came in, so the target guard, the limits and the target
//! cooldown count against the caller's address. A refusal of the API is a tool result with
//! `isError: true` that says when to retry, not a JSON-RPC error.

use super::api::{
    Api, ApiError, EXPORT_FORMATS, Erased, Queued, Refused, parse_submission, statuses,
};
use super::limits;
use super::schema::described;
use super::schema::{Schema, input};
use super::store::{ScanRecord, ScanRequest, Status};
use super::submission::MAX_TARGET_CHARS;
use super::worker::Completed;
use crate::report::{RemediationPlan, ScanResult, State, Status as FindingStatus};
use crate::server::http::{Request, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const PATH: &str = "/mcp";
/// The protocol versions we speak, newest first.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
pub const SESSION_HEADER: &str = "Mcp-Session-Id";
/// Sessions kept in memory. At the cap, a new session ends the oldest of the network holding
/// the most (when it holds more than one), or is refused: many clients cannot end another's.
pub const MAX_SESSIONS: usize = 10_000;
/// How long a client refused at the cap waits before asking again.
const FULL_RETRY_SECS: u64 = 60;
/// Sessions of one client (an address, an IPv6 /64); a new one beyond ends that client's own
/// oldest, so a flood of `initialize` from one client never evicts another client's session.
pub const MAX_SESSIONS_PER_CLIENT: usize = 16;
const SCAN_POLL: Duration = Duration::from_millis(100);
/// Targets of one `scan_instances` call at most.
pub const MAX_TARGETS: usize = 10;

const SERVER_NAME: &str = "check-storage-scanner";
const VERSION: &str = env!("CARGO_PKG_VERSION");

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// The code the official SDKs answer an unknown session with.
const SESSION_NOT_FOUND: i64 = -32001;

/// A JSON-RPC 2.0 message as received: a request (`id` and `method`), a notification
/// (`method` only) or a response of the client (`result` or `error`).
#[derive(Debug, Deserialize)]
struct Incoming {
    jsonrpc: Option<String>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    method: Option<String>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

/// `id: null` is present (and invalid), unlike a missing `id`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The JSON-RPC response to request `id`: its result or its error.
fn outgoing(id: Value, answer: Result<Value, Failure>) -> Value {
    match answer {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(Failure::Rpc(code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
        // A tool's refusal is the call's result, not a protocol error.
        Err(Failure::Tool(text)) => {
            let result = json!({"content": [{"type": "text", "text": text}], "isError": true});
            outgoing(id, Ok(result))
        }
    }
}

/// A JSON-RPC error, answered with HTTP `status`.
fn rpc_error(status: u16, id: Value, code: i64, message: impl Into<String>) -> Response {
    let error = Failure::Rpc(code, message.into());
    Response::json(status, &outgoing(id, Err(error)))
}

/// A message that is no request we can take: 400, `INVALID_REQUEST`.
fn invalid_request(id: Value, message: impl Into<String>) -> Response {
    rpc_error(400, id, INVALID_REQUEST, message)
}

/// Where the progress notifications of one `tools/call` go: nowhere (no progress token, or a
/// client that does not accept SSE), or written as server-sent events the moment the scan
/// changes state, on the connection of the call.
struct Progress<'a> {
    /// The progress token, and the connection the events go to.
    stream: Option<(Value, &'a mut dyn Write)>,
    /// The client went away: the wait ends (the scan itself runs on).
    gone: bool,
    last_write: Instant,
}

/// An SSE comment sent while nothing changes, so that proxies keep the stream open and a
/// client that left is noticed.
const HEARTBEAT: Duration = Duration::from_secs(15);

impl<'a> Progress<'a> {
    fn new(stream: Option<(Value, &'a mut dyn Write)>) -> Progress<'a> {
        Progress {
            stream,
            gone: false,
            last_write: Instant::now(),
        }
    }

    fn note(&mut self, progress: u64, total: u64, message: String) {
        if let Some((token, _)) = &self.stream {
            let event = json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {
                    "progressToken": token,
                    "progress": progress,
                    "total": total,
                    "message": message,
                },
            });
            self.send(&event);
        }
    }

    /// One `message` event; a failed write marks the client gone.
    fn send(&mut self, message: &Value) {
        self.write(format!("event: message\ndata: {message}\n\n").as_bytes());
    }

    fn heartbeat(&mut self) {
        if self.last_write.elapsed() >= HEARTBEAT {
            self.write(b": waiting\n\n");
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if let Some((_, out)) = self.stream.as_mut()
            && !self.gone
        {
            self.gone = out.write_all(bytes).and_then(|()| out.flush()).is_err();
            self.last_write = Instant::now();
        }
    }
}

/// Why a method call is not answered with its result: a JSON-RPC error (code and message), or
/// a refusal or failure of a tool, said in words (with when to retry), which is answered as the
/// tool's result with `isError: true`.
enum Failure {
    Rpc(i64, String),
    Tool(String),
}

/// A refusal of the API, as a tool answers it.
impl From<Refused> for Failure {
    fn from(refused: Refused) -> Failure {
        Failure::Tool(refusal_text(&refused))
    }
}

fn invalid_params(message: impl Into<String>) -> Failure {
    Failure::Rpc(INVALID_PARAMS, message.into())
}

/// The sessions of this process: id → (sequence, client, network); sequence → id, for each
/// client (an address, an IPv6 /64) and each network (IPv4 /24, IPv6 /56).
#[derive(Default)]
struct Sessions {
    by_id: HashMap<String, (u64, String, String)>,
    by_client: HashMap<String, BTreeMap<u64, String>>,
    by_network: HashMap<String, BTreeMap<u64, String>>,
    next: u64,
}

/// The table is full and no network holds more than one session: nobody's is ended.
#[derive(Debug, PartialEq, Eq)]
struct Full;

impl Sessions {
    /// A new session of `client` in `network`. The client's own oldest goes first when it
    /// holds [`MAX_SESSIONS_PER_CLIENT`]. When [`MAX_SESSIONS`] are held, the network holding
    /// the most sessions gives up its oldest, if it holds more than one; otherwise the new
    /// session is refused. So many addresses, each within its own limits, never end the one
    /// session of another client: they end their own networks' first.
    fn insert(&mut self, id: String, client: &str, network: &str) -> Result<(), Full> {
        while let Some(oldest) = self
            .by_client
            .get(client)
            .filter(|own| own.len() >= MAX_SESSIONS_PER_CLIENT)
            .and_then(|own| own.values().next().cloned())
        {
            self.remove(&oldest);
        }
        while self.by_id.len() >= MAX_SESSIONS {
            // The busiest network; of several as busy, the one whose oldest session is oldest.
            let busiest = self
                .by_network
                .values()
                .max_by_key(|held| (held.len(), held.keys().next().map(|seq| u64::MAX - seq)))
                .filter(|held| held.len() > 1)
                .and_then(|held| held.values().next().cloned());
            match busiest {
                Some(oldest) => self.remove(&oldest),
                None => return Err(Full),
            };
        }
        self.next += 1;
        for (index, key) in [
            (&mut self.by_client, client),
            (&mut self.by_network, network),
        ] {
            index
                .entry(key.to_string())
                .or_default()
                .insert(self.next, id.clone());
        }
        self.by_id
            .insert(id, (self.next, client.to_string(), network.to_string()));
        Ok(())
    }

    fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    fn remove(&mut self, id: &str) -> bool {
        let Some((seq, client, network)) = self.by_id.remove(id) else {
            return false;
        };
        for (index, key) in [
            (&mut self.by_client, client),
            (&mut self.by_network, network),
        ] {
            if let Some(own) = index.get_mut(&key) {
                own.remove(&seq);
                if own.is_empty() {
                    // No entry outlives its last session.
                    index.remove(&key);
                }
            }
        }
        true
    }
}

fn sessions() -> std::sync::MutexGuard<'static, Sessions> {
    static SESSIONS: OnceLock<Mutex<Sessions>> = OnceLock::new();
    crate::server::lock(SESSIONS.get_or_init(Mutex::default))
}

/// The answer to a request for `/mcp`, whatever its method (`web::routes` routes them all
/// here).
pub fn handle(api: &Api, request: &Request, _: &[&str]) -> Response {
    if let Some(token) = &api.config.mcp_token
        && !request.bearer_matches(token)
    {
        let message = "/mcp needs Authorization: Bearer with the operator's MCP token";
        return Response::error(401, "unauthorized", message)
            .with_header("WWW-Authenticate", "Bearer realm=\"mcp\"");
    }
    if request.browser().another_site(&api.config.base_url) {
        let message =
            "requests to /mcp from another site's pages are refused (DNS rebinding protection)";
        return Response::error(403, "forbidden_origin", message);
    }
    match request.method.as_str() {
        "POST" => ApiError::unless_json(request, "POST /mcp")
            .map_or_else(|e| e.response(), |()| post(api, request)),
        "DELETE" => match request.header(SESSION_HEADER) {
            None => Response::error(400, "missing_session", "DELETE /mcp needs Mcp-Session-Id"),
            Some(id) if sessions().remove(id) => Response::new(204, "application/json", vec![]),
            Some(_) => Response::error(404, "unknown_session", "no such MCP session"),
        },
        "GET" | "HEAD" => {
            let message =
                "this is the MCP endpoint: MCP clients POST JSON-RPC here (streamable HTTP)";
            Response::error(405, "method_not_allowed", message).with_header("Allow", "POST")
        }
        _ => Response::error(405, "method_not_allowed", "MCP clients POST JSON-RPC here")
            .with_header("Allow", "POST, DELETE"),
    }
}

fn post(api: &Api, request: &Request) -> Response {
    let value: Value = match serde_json::from_slice(&request.body) {
        Ok(v) => v,
        Err(e) => return rpc_error(400, Value::Null, PARSE_ERROR, format!("parse error: {e}")),
    };
    if value.is_array() {
        let message = "batches are not supported: send one JSON-RPC message per request";
        return invalid_request(Value::Null, message);
    }
    let raw_id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let message: Incoming = match serde_json::from_value(value) {
        Ok(m) => m,
        Err(e) => return invalid_request(raw_id, format!("not a JSON-RPC 2.0 message: {e}")),
    };
    if message.jsonrpc.as_deref() != Some("2.0") {
        return invalid_request(raw_id, "jsonrpc must be \"2.0\"");
    }
    if let Some(version) = request.header("mcp-protocol-version")
        && !PROTOCOL_VERSIONS.contains(&version)
    {
        let spoken = PROTOCOL_VERSIONS.join(", ");
        let message =
            format!("unsupported MCP-Protocol-Version {version:?}; this server speaks {spoken}");
        return invalid_request(raw_id, message);
    }
    let id = match &message.id {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        Some(_) => return invalid_request(Value::Null, "id must be a string or a number"),
    };
    let Some(method) = message.method.as_deref() else {
        if id.is_some() && (message.result.is_some() || message.error.is_some()) {
            // A response of the client: we send no requests, so nothing waits for it.
            return check_session(request, Value::Null)
                .map_or_else(|answer| answer, |()| accepted());
        }
        return invalid_request(raw_id, "a request needs a method");
    };
    if method == "initialize" {
        let Some(id) = id else {
            return invalid_request(Value::Null, "initialize needs an id");
        };
        return initialize(api, request, id, message.params.as_ref());
    }
    if let Err(answer) = check_session(request, id.clone().unwrap_or(Value::Null)) {
        return answer;
    }
    let Some(id) = id else {
        // A notification (`notifications/initialized`, `notifications/cancelled`, ...).
        return accepted();
    };
    let params = message.params.unwrap_or_else(|| json!({}));
    if !params.is_object() {
        return rpc_error(200, id, INVALID_PARAMS, "params must be an object");
    }
    // SSE for a tools/call with a progress token, when the client accepts it: the head goes
    // out now, each progress notification as the scan changes state, the response last.
    if method == "tools/call"
        && request
            .header("accept")
            .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"))
        && let Some(token) = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_number())
            .cloned()
    {
        let (api, request) = (api.clone(), request.clone());
        return Response::streaming(200, "text/event-stream", move |out| {
            let mut progress = Progress::new(Some((token, out)));
            let answer = call_tool(&api, &request, &params, &mut progress);
            progress.send(&outgoing(id, answer));
            Ok(())
        });
    }
    let answer = match method {
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools()})),
        "tools/call" => call_tool(api, request, &params, &mut Progress::new(None)),
        "prompts/list" => Ok(json!({"prompts": prompts()})),
        "prompts/get" => get_prompt(&params),
        _ => Err(Failure::Rpc(
            METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )),
    };
    Response::json(200, &outgoing(id, answer))
}

fn accepted() -> Response {
    Response {
        headers: Vec::new(),
        ..Response::new(202, "", Vec::new())
    }
}

fn check_session(request: &Request, id: Value) -> Result<(), Response> {
    let missing =
        "Mcp-Session-Id is required: send initialize first and repeat the header it answers";
    match request.header(SESSION_HEADER) {
        None => Err(invalid_request(id, missing)),
        Some(session) if sessions().contains(session) => Ok(()),
        Some(_) => {
            let message = "session not found (ended or forgotten): initialize again";
            Err(rpc_error(404, id, SESSION_NOT_FOUND, message))
        }
    }
}

/// The version to answer a client that asked for `requested`: its own if we speak it, else
/// our newest.
pub fn negotiate(requested: &str) -> &'static str {
    PROTOCOL_VERSIONS
        .into_iter()
        .find(|v| *v == requested)
        .unwrap_or(PROTOCOL_VERSIONS[0])
}

fn initialize(api: &Api, request: &Request, id: Value, params: Option<&Value>) -> Response {
    let Some(requested) = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
    else {
        let message = "initialize needs params.protocolVersion";
        return rpc_error(200, id, INVALID_PARAMS, message);
    };
    let version = negotiate(requested);
    // Asking for a session is limited like submitting, before anything is made.
    let client = limits::client_of(request, &api.config.trusted_proxies);
    match limits::admit_session(&*api.store, client, api.clock.now_millis()) {
        Ok(Ok(())) => {}
        Ok(Err(limited)) => {
            let retry = limited.retry_after.to_string();
            let message = format!("{}; try again in {retry} s", limited.message);
            return rpc_error(429, id, INVALID_REQUEST, message).with_header("Retry-After", &retry);
        }
        Err(e) => {
            eprintln!("check-storage-scanner web: mcp: store: {e}");
            let message = "the service cannot reach its store; try again shortly";
            return rpc_error(503, id, INTERNAL_ERROR, message).with_header("Retry-After", "10");
        }
    }
    let session = match crate::server::new_uuid() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("check-storage-scanner web: mcp: {e}");
            return rpc_error(500, id, INTERNAL_ERROR, "cannot create a session");
        }
    };
    let inserted = sessions().insert(
        session.clone(),
        &limits::address_key(client),
        &limits::network_key(client),
    );
    if inserted.is_err() {
        let message = format!(
            "the service holds as many MCP sessions as it may, one per network; try again \
             in {FULL_RETRY_SECS} s"
        );
        return rpc_error(429, id, INVALID_REQUEST, message)
            .with_header("Retry-After", &FULL_RETRY_SECS.to_string());
    }
    let result = json!({
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": false},
                "prompts": {"listChanged": false},
            },
            "serverInfo": {
                "name": SERVER_NAME,
                "title": "Storage security scanner",
                "version": VERSION,
            },
            "instructions": "Scans an OpenCloud or ownCloud Infinite Scale instance from the \
                outside and grades it (A+ to F). Call scan_instance with the instance's URL; \
                then plan_remediation or export_scan with the uuid it answers.",
    });
    Response::json(200, &outgoing(id, Ok(result))).with_header(SESSION_HEADER, &session)
}

fn uuid_keywords() -> Value {
    json!({"description": "the scan's uuid, as scan_instance answered it"})
}

/// The erase key as the submitting tools answer it and erase_instance_data takes it.
fn erase_key_keywords() -> Value {
    json!({
        "pattern": "^[0-9a-f]{64}$",
        "description": "the scan's erase key, answered to its submitter only (by scan_instance \
            or scan_instances, never by get_scan_result); erase_instance_data needs it",
    })
}

/// The schema of the submission's member `name`, with the description `description`.
fn submission_member(name: &str, description: &str) -> Value {
    let mut schema = ScanRequest::schema()["properties"][name].take();
    schema["description"] = json!(description);
    schema
}

described! {
    /// `scan_instances`' arguments: the targets, each read with the rest as `scan_instance`
    /// reads its arguments (a target that is no string is refused in its place).
    #[derive(Deserialize)]
    struct ScanTargets {
        target_urls: Value => json!({
            "type": "array",
            "items": {"type": "string", "description": "an instance's hostname, address or URL"},
            "minItems": 1,
            "maxItems": MAX_TARGETS,
            "description": "the instances, e.g. [\"cloud.example.com\", \"files.example.org\"]",
        }),
        waive: Option<Value> => submission_member("waive", "check id patterns to waive on \
            every target; each grade stays the one without them (submitter_grade is with them)"),
        release_track: Option<Value> => submission_member("release_track", "the release \
            track the instances follow; auto detects it"),
    }
}

described! {
    /// The arguments of the tools that read one scan.
    #[derive(Deserialize)]
    struct ScanRef {
        uuid: String => uuid_keywords(),
    }
}

described! {
    #[derive(Deserialize)]
    struct ExportRequest {
        uuid: String => uuid_keywords(),
        format: String => json!({"enum": EXPORT_FORMATS}),
    }
}

described! {
    #[derive(Deserialize)]
    struct EraseRequest {
        uuid: String => uuid_keywords(),
        erase_key: String => erase_key_keywords(),
    }
}

/// The states of a scan, as its answers name them.
fn status_names() -> Vec<&'static str> {
    statuses().into_iter().map(Status::as_str).collect()
}

fn status_keywords() -> Value {
    json!({"enum": status_names()})
}

fn result_keywords() -> Value {
    json!({
        "type": ["object", "null"],
        "description": "the result document once completed (grade, state, findings, \
            remediationPlan), else null",
    })
}

described! {
    /// `get_scan_result`'s answer.
    #[derive(Serialize)]
    struct ScanState {
        uuid: String => json!({}),
        status: &'static str => status_keywords(),
        result: Value => result_keywords(),
    }
}

described! {
    /// `scan_instance`'s answer: the scan's state, with the erase key of the new submission.
    #[derive(Serialize)]
    struct SubmittedScan {
        uuid: String => json!({}),
        status: &'static str => status_keywords(),
        result: Value => result_keywords(),
        erase_key: String => erase_key_keywords(),
    }
}

described! {
    /// One target of `scan_instances`: its scan as it stands after the wait, or why not.
    #[derive(Default, Serialize)]
    struct TargetEntry {
        target_url: String => json!({}),
        #[serde(skip_serializing_if = "Option::is_none")]
        uuid: Option<String> => json!({}),
        status: &'static str =>
            json!({"enum": ([status_names(), vec!["refused", "error"]].concat())}),
        #[serde(skip_serializing_if = "Option::is_none")]
        grade: Option<String> => json!({"description": "the grade without the submitter's waivers"}),
        #[serde(skip_serializing_if = "Option::is_none")]
        state: Option<State> => json!({}),
        #[serde(skip_serializing_if = "Option::is_none")]
        submitter_grade: Option<String> => json!({
            "description": "the grade with the call's waive patterns (only when it named any)",
        }),
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String> => json!({}),
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_after: Option<i64> => json!({}),
        #[serde(skip_serializing_if = "Option::is_none")]
        erase_key: Option<String> => erase_key_keywords(),
        #[serde(skip_serializing_if = "Option::is_none")]
        same_as: Option<usize> => json!({
            "description": "this target is the same instance as the entry at this index \
                (0-based), and answers with its scan",
        }),
    }
}

described! {
    /// `scan_instances`' answer: one entry per target, in the order named.
    #[derive(Serialize)]
    struct TargetEntries {
        results: Vec<TargetEntry> => json!({}),
    }
}

/// A finding's monitoring state, as the answers write it.
impl Schema for State {
    fn schema() -> Value {
        json!({"type": "string"})
    }
}

described! {
    /// `plan_remediation`'s answer.
    #[derive(Serialize)]
    struct PlanAnswer {
        uuid: String => json!({}),
        host: String => json!({}),
        grade: String => json!({}),
        remediation_plan as "remediationPlan": RemediationPlan => json!({}),
    }
}

/// The report's plan, as `plan_remediation` writes it (every member, always).
impl Schema for RemediationPlan {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "steps": {"type": "array", "items": {"type": "object"}},
                "groups": {"type": "array", "items": {"type": "object"}},
                "groupSummary": {"type": "array", "items": {"type": "string"}},
                "snippets": {
                    "type": "array",
                    "items": {"type": "object"},
                    "description": "the steps' configuration snippets, one per file and form",
                },
            },
            "required": ["steps", "groups", "groupSummary", "snippets"],
        })
    }
}

described! {
    /// `export_scan`'s answer besides the file itself (in the content).
    #[derive(Serialize)]
    struct ExportAnswer {
        uuid: String => json!({}),
        format: String => json!({"enum": EXPORT_FORMATS}),
        mime_type as "mimeType": &'static str => json!({}),
        filename: String => json!({}),
        bytes: usize => json!({}),
    }
}

/// A tool: what `tools/list` says of it, and the function that answers its calls.
struct Tool {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// The schema of its arguments: its typed request's (`input::<T>`).
    input: fn() -> Value,
    /// The schema of its structured content: its answer type's.
    output: fn() -> Value,
    /// The `annotations` hints that hold (each true).
    hints: &'static [&'static str],
    call: fn(Call) -> Result<Value, Failure>,
}

/// One `tools/call`: the API, the HTTP request it came in (the limits count against its
/// address), the checked arguments, and where progress goes.
struct Call<'a, 'p> {
    api: &'a Api,
    request: &'a Request,
    arguments: Arguments,
    progress: &'a mut Progress<'p>,
}

const READ_ONLY: &[&str] = &["readOnlyHint"];

/// The tools, in the order `tools/list` names them.
const TOOLS: [Tool; 6] = [
    Tool {
        name: "scan_instance",
        title: "Scan a storage instance",
        description: "Scans one OpenCloud / oCIS instance from the outside (version and end of \
            life, known vulnerabilities, TLS, security headers, exposed files, demo accounts) \
            and answers its graded result. Waits for the scan (usually seconds; at most the operator's time budget and the queue, \
            then it answers the uuid for get_scan_result); \
            a target may be scanned once per cooldown period. The answer carries the \
            scan's erase_key, which erase_instance_data needs; nothing else answers it.",
        input: input::<ScanRequest>,
        output: SubmittedScan::schema,
        hints: &[],
        call: scan_instance,
    },
    Tool {
        name: "scan_instances",
        title: "Scan several storage instances",
        description: "Scans up to 10 OpenCloud / oCIS instances in parallel (within the \
            operator's limits: each target counts as one submission and has its own \
            cooldown) and answers one entry per target: its uuid, status, grade and state, or \
            why it was refused (a malformed target too, in its place). A target named twice \
            (the same host and port, however written) is scanned once: both entries answer \
            with that scan; two names of one address share its cooldown. Waits \
            at most the operator's time budget; a target not completed by then is answered \
            with its uuid for get_scan_result. Each submitted entry carries its scan's \
            erase_key, which erase_instance_data needs.",
        input: input::<ScanTargets>,
        output: TargetEntries::schema,
        hints: &[],
        call: scan_instances,
    },
    Tool {
        name: "get_scan_result",
        title: "Get a scan's result",
        description: "The state of a scan by uuid, and its result document once completed.",
        input: input::<ScanRef>,
        output: ScanState::schema,
        hints: READ_ONLY,
        call: get_scan_result,
    },
    Tool {
        name: "plan_remediation",
        title: "Remediation plan",
        description: "The remediation plan of a completed scan: ordered steps, and the \
            findings grouped by the system that fixes them (web server, instance, DNS, ...).",
        input: input::<ScanRef>,
        output: PlanAnswer::schema,
        hints: READ_ONLY,
        call: plan_remediation,
    },
    Tool {
        name: "export_scan",
        title: "Export a scan",
        description: "A completed scan as json, csv or sarif (text) or pdf (a base64 embedded \
            resource).",
        input: input::<ExportRequest>,
        output: ExportAnswer::schema,
        hints: READ_ONLY,
        call: export_scan,
    },
    Tool {
        name: "erase_instance_data",
        title: "Erase a scan's data",
        description: "Erases the stored scan of the uuid (its record and result), given \
            the erase key its submission (scan_instance, scan_instances) answered: only its \
            submitter may erase it, and never another submitter's scan of the same instance.",
        input: input::<EraseRequest>,
        output: Erased::schema,
        hints: &["destructiveHint", "idempotentHint"],
        call: erase_instance_data,
    },
];

/// The tools as `tools/list` answers them, each with its input and output schema.
pub fn tools() -> Vec<Value> {
    TOOLS
        .iter()
        .map(|tool| {
            let mut listed = json!({
                "name": tool.name,
                "title": tool.title,
                "description": tool.description,
                "inputSchema": (tool.input)(),
                "outputSchema": (tool.output)(),
            });
            for hint in tool.hints {
                listed["annotations"][*hint] = json!(true);
            }
            listed
        })
        .collect()
}

/// A call's arguments, checked against its tool's input schema, with the tool's name.
struct Arguments {
    tool: &'static str,
    members: Map<String, Value>,
}

impl Arguments {
    /// The arguments of `params` for `tool`, checked against its input schema's property names
    /// and required list (the values' types are checked by [`Arguments::read`]).
    fn of(tool: &Tool, params: &Value) -> Result<Arguments, Failure> {
        let name = tool.name;
        let members = match params.get("arguments").unwrap_or(&Value::Null) {
            Value::Null => Map::new(),
            Value::Object(m) => m.clone(),
            _ => return Err(invalid_params("arguments must be an object")),
        };
        let schema = (tool.input)();
        let known: Vec<&str> = schema["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if let Some(unknown) = members.keys().find(|k| !known.contains(&k.as_str())) {
            let shown: String = unknown.chars().take(40).collect();
            let takes = known.join(", ");
            let message = format!("{name}: unknown argument {shown:?}; it takes {takes}");
            return Err(invalid_params(message));
        }
        for required in schema["required"].as_array().into_iter().flatten() {
            let required = required.as_str().unwrap_or_default();
            if !members.contains_key(required) {
                let message = format!("{name}: argument {required} is required");
                return Err(invalid_params(message));
            }
        }
        Ok(Arguments {
            tool: name,
            members,
        })
    }

    /// The arguments as the tool's typed request (its input schema is that type's).
    fn read<T: serde::de::DeserializeOwned>(self) -> Result<T, Failure> {
        serde_json::from_value(Value::Object(self.members))
            .map_err(|e| invalid_params(format!("{}: {e}", self.tool)))
    }
}

/// A string argument with something in it, trimmed.
fn filled<'a>(value: &'a str, name: &str) -> Result<&'a str, Failure> {
    match value.trim() {
        "" => Err(invalid_params(format!("{name} must be a non-empty string"))),
        trimmed => Ok(trimmed),
    }
}

/// A tool's answer: structured content and its text summary.
fn tool_result(structured: Value, summary: String) -> Value {
    json!({
        "content": [{"type": "text", "text": summary}],
        "structuredContent": structured,
        "isError": false,
    })
}

/// A refusal of the API in words, with when to retry.
fn refusal_text(Refused { error, retry_after }: &Refused) -> String {
    let (status, code, message) = (error.status, error.code, &error.message);
    let mut text = format!("refused ({status} {code}): {message}");
    match retry_after {
        Some(secs) => text.push_str(&format!("; retry after {secs} seconds")),
        None if status == 404 => {
            text.push_str("; do not retry this uuid: scan the instance again with scan_instance")
        }
        None => text.push_str("; do not retry unchanged"),
    }
    text
}

/// What a tool answers of a scan it waited for and no longer finds.
const LOST: &str = "the scan was lost; scan again";
/// What a tool answers of a completed scan whose result this version cannot read.
const UNREADABLE: &str = "the completed scan has no readable result; scan again";

fn call_tool(
    api: &Api,
    request: &Request,
    params: &Value,
    progress: &mut Progress,
) -> Result<Value, Failure> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("tools/call needs params.name"))?;
    let tool = TOOLS
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| invalid_params(format!("unknown tool: {name}")))?;
    let arguments = Arguments::of(tool, params)?;
    (tool.call)(Call {
        api,
        request,
        arguments,
        progress,
    })
}

fn get_scan_result(Call { api, arguments, .. }: Call) -> Result<Value, Failure> {
    let ScanRef { uuid } = arguments.read()?;
    let uuid = filled(&uuid, "uuid")?;
    let record = api.record(uuid)?;
    let (state, summary) = scan_state(uuid, record.status, record.result.as_deref())?;
    Ok(tool_result(json!(state), summary))
}

fn plan_remediation(Call { api, arguments, .. }: Call) -> Result<Value, Failure> {
    let ScanRef { uuid } = arguments.read()?;
    let uuid = filled(&uuid, "uuid")?;
    Ok(plan(uuid, &completed(api, uuid)?.document))
}

fn export_scan(Call { api, arguments, .. }: Call) -> Result<Value, Failure> {
    let ExportRequest { uuid, format } = arguments.read()?;
    let (uuid, format) = (filled(&uuid, "uuid")?, filled(&format, "format")?);
    if !EXPORT_FORMATS.contains(&format) {
        let message = format!("format must be one of {}", EXPORT_FORMATS.join(", "));
        return Err(invalid_params(message));
    }
    Ok(export(api, uuid, format, &completed(api, uuid)?))
}

fn erase_instance_data(Call { api, arguments, .. }: Call) -> Result<Value, Failure> {
    let EraseRequest { uuid, erase_key } = arguments.read()?;
    let uuid = filled(&uuid, "uuid")?;
    let erase_key = filled(&erase_key, "erase_key")?;
    api.erase_with_key(uuid, Some(erase_key))?;
    let summary = format!("erased scan {uuid} and its result; the uuid is gone");
    Ok(tool_result(json!(Erased { erased: 1 }), summary))
}

fn scan_instance(call: Call) -> Result<Value, Failure> {
    let (api, request) = (call.api, call.request);
    // The submission as the JSON API reads it, so the same checks apply.
    let body = serde_json::to_vec(&call.arguments.members).unwrap_or_default();
    let (scan, target) = parse_submission(&body).map_err(|e| invalid_params(e.message))?;
    let queued = api.enqueue(scan, &target, request)?;
    let waited = wait_for(api, request, &[(queued.uuid.clone(), None)], call.progress).pop();
    let record = waited.ok_or_else(|| Failure::Tool(LOST.into()))??;
    let (state, summary) = scan_state(&queued.uuid, record.status, record.result.as_deref())?;
    // The erase key in the structured content and in words: the caller alone learns it.
    let submitted = SubmittedScan {
        uuid: state.uuid,
        status: state.status,
        result: state.result,
        erase_key: queued.erase_key.clone(),
    };
    let summary = format!(
        "{summary}\nErase key of this scan (keep it; erase_instance_data takes it): {}",
        queued.erase_key
    );
    Ok(tool_result(json!(submitted), summary))
}

/// How far a scan is, for progress: its place in a scan's life (queued 1, running 2,
/// completed 3).
fn stage(status: Status) -> u64 {
    let place = statuses().into_iter().position(|s| s == status);
    place.map_or(0, |index| index as u64 + 1)
}

/// Waits until every scan of `uuids` (each with the target to name in progress messages) is
/// completed, or at most the operator's time budget and the queue (ApiConfig::scan_wait);
/// then answers each scan's record as it is (the caller answers an unfinished one's uuid, for
/// get_scan_result). Progress is the sum of the scans' stages, out of 3 per scan; each change
/// of a scan's state is one notification.
///
/// A waiting call holds an HTTP worker, so it waits only with a seat of `Api::waits` (a
/// bounded share of the workers, a few per client): without one, the records are read once
/// and answered as they are, so a flood of calls on never-ending scans leaves the other
/// workers to everyone else.
fn wait_for(
    api: &Api,
    request: &Request,
    uuids: &[(String, Option<&str>)],
    progress: &mut Progress,
) -> Vec<Result<ScanRecord, Refused>> {
    let client = limits::address_key(limits::client_of(request, &api.config.trusted_proxies));
    let seat = api.waits.take(&client);
    let total = 3 * uuids.len() as u64;
    let message = |target: Option<&str>, status: Status| match target {
        Some(target) => format!("{target}: {}", status.as_str()),
        None => status.as_str().to_string(),
    };
    // Every scan was queued when it was inserted.
    let mut seen = vec![Status::Queued; uuids.len()];
    let mut done = 0;
    for (_, target) in uuids {
        done += stage(Status::Queued);
        progress.note(done, total, message(*target, Status::Queued));
    }
    let until = Instant::now()
        + seat
            .as_ref()
            .map_or(Duration::ZERO, |_| api.config.scan_wait);
    let mut answers: Vec<Option<Result<ScanRecord, Refused>>> =
        uuids.iter().map(|_| None).collect();
    let settled = |answer: &Option<Result<ScanRecord, Refused>>| match answer {
        Some(Ok(record)) => record.status == Status::Completed,
        Some(Err(_)) => true,
        None => false,
    };
    loop {
        for (i, (uuid, target)) in uuids.iter().enumerate() {
            if settled(&answers[i]) {
                continue;
            }
            // Each poll has a store deadline of its own: the wait is longer than one.
            let record =
                super::store::sharing_deadline(api.config.store_timeout, || api.record(uuid));
            if let Ok(record) = &record
                && record.status != seen[i]
            {
                done += stage(record.status).saturating_sub(stage(seen[i]));
                seen[i] = record.status;
                progress.note(done, total, message(*target, record.status));
            }
            answers[i] = Some(record);
        }
        if answers.iter().all(settled) || Instant::now() >= until || progress.gone {
            break;
        }
        progress.heartbeat();
        std::thread::sleep(SCAN_POLL);
    }
    // The loop ran once at least: every scan was polled.
    answers.into_iter().flatten().collect()
}

/// `scan_instances`: each target submitted as `scan_instance` submits it (guard, limits and
/// cooldown per target, counted against the caller), then all waited for together. A target
/// that is refused (malformed, guarded, limited) is an entry with `error`, in place; the call is
/// a tool error only when every target was refused. A target naming the same instance as an
/// earlier one (a cooldown key by name in common: host and a port its scan connects to, the
/// scheme and path aside, `limits::instance_names`) is not submitted again: its
/// entry answers with the earlier entry's scan and names it in `same_as`. Arguments that are
/// no call at all (no list of 1 to 10 targets, a malformed `waive` or `release_track`) are a
/// JSON-RPC error, before anything is submitted.
fn scan_instances(call: Call) -> Result<Value, Failure> {
    let (api, request) = (call.api, call.request);
    let asked: ScanTargets = call.arguments.read()?;
    let items = match &asked.target_urls {
        Value::Array(items) if (1..=MAX_TARGETS).contains(&items.len()) => items,
        _ => {
            return Err(invalid_params(format!(
                "target_urls must be an array of 1 to {MAX_TARGETS} instance addresses"
            )));
        }
    };
    // Each entry names its target as the caller gave it (anything but a string as its JSON).
    let targets: Vec<String> = items
        .iter()
        .map(|item| {
            item.as_str()
                .map_or_else(|| item.to_string(), str::to_string)
        })
        .collect();
    // Each target read as scan_instance reads it: a refusal that names target_url is that
    // target's, one that names another argument (checked before the target) the whole call's.
    let mut parsed = Vec::with_capacity(items.len());
    for item in items {
        let one =
            json!({"target_url": item, "waive": asked.waive, "release_track": asked.release_track});
        let body = serde_json::to_vec(&one).unwrap_or_default();
        parsed.push(match parse_submission(&body) {
            Ok(submission) => Ok(submission),
            Err(e) if e.field == Some("target_url") => Err(Refused::from(e)),
            Err(e) => return Err(invalid_params(e.message)),
        });
    }
    // The earlier entry naming the same instance (sharing a cooldown key by name: host and a
    // port its scan connects to), if any.
    let keys: Vec<Vec<String>> = parsed
        .iter()
        .map(|p| {
            p.as_ref()
                .map(|(_, target)| limits::instance_names(target, api.config.target_port))
                .unwrap_or_default()
        })
        .collect();
    let same_as: Vec<Option<usize>> = keys
        .iter()
        .enumerate()
        .map(|(i, names)| {
            keys[..i]
                .iter()
                .position(|earlier| earlier.iter().any(|name| names.contains(name)))
        })
        .collect();
    // Submitted one after the other, so the limits count each; refusals kept in place.
    let mut submitted: Vec<Result<Queued, Refused>> = Vec::with_capacity(parsed.len());
    for (i, submission) in parsed.into_iter().enumerate() {
        submitted.push(match (same_as[i], submission) {
            (Some(first), _) => submitted[first].clone(),
            (None, Ok((scan, target))) => api.enqueue(scan, &target, request),
            (None, Err(refused)) => Err(refused),
        });
    }
    let scans: Vec<(String, Option<&str>)> = submitted
        .iter()
        .zip(&targets)
        .zip(&same_as)
        .filter_map(|((submission, target), same)| match (submission, same) {
            (Ok(queued), None) => Some((queued.uuid.clone(), Some(target.as_str()))),
            _ => None,
        })
        .collect();
    let waited: HashMap<String, Result<ScanRecord, Refused>> = scans
        .iter()
        .map(|(uuid, _)| uuid.clone())
        .zip(wait_for(api, request, &scans, call.progress))
        .collect();
    let mut results = Vec::with_capacity(targets.len());
    let mut lines = Vec::with_capacity(targets.len());
    for (i, (target_url, submission)) in targets.iter().zip(&submitted).enumerate() {
        let (mut entry, mut line) = match submission {
            Ok(queued) => scanned_entry(target_url, queued, waited.get(&queued.uuid)),
            Err(refused) => refused_entry(target_url, refused),
        };
        entry.same_as = same_as[i];
        if let Some(first) = same_as[i] {
            line = format!("{line} (the same instance as {}: one scan)", targets[first]);
        }
        lines.push(line);
        results.push(entry);
    }
    let (structured, lines) = (json!(TargetEntries { results }), lines.join("\n"));
    if scans.is_empty() {
        let mut refused = tool_result(structured, format!("every target was refused:\n{lines}"));
        refused["isError"] = json!(true);
        return Ok(refused);
    }
    let answered = submitted.iter().filter(|s| s.is_ok()).count();
    let (count, scanned) = (targets.len(), scans.len());
    let summary = format!("{answered} of {count} target(s) scanned ({scanned} scan(s)):\n{lines}");
    Ok(tool_result(structured, summary))
}

/// A `scan_instances` entry of a refused target, and its line of the summary.
fn refused_entry(target_url: &str, refused: &Refused) -> (TargetEntry, String) {
    let error = refusal_text(refused);
    let line = format!("{target_url}: {error}");
    let entry = TargetEntry {
        target_url: target_url.to_string(),
        status: "refused",
        error: Some(error),
        retry_after: refused.retry_after,
        ..TargetEntry::default()
    };
    (entry, line)
}

/// A `scan_instances` entry of a submitted target as its scan stands after the wait, and its
/// line of the summary.
fn scanned_entry(
    target_url: &str,
    queued: &Queued,
    waited: Option<&Result<ScanRecord, Refused>>,
) -> (TargetEntry, String) {
    let uuid = &queued.uuid;
    let mut entry = TargetEntry {
        target_url: target_url.to_string(),
        uuid: Some(uuid.clone()),
        status: "error",
        erase_key: Some(queued.erase_key.clone()),
        ..TargetEntry::default()
    };
    let failed = |entry: TargetEntry, error: String| {
        let line = format!("{target_url}: {error}");
        let error = Some(error);
        (TargetEntry { error, ..entry }, line)
    };
    let record = match waited {
        Some(Ok(record)) => record,
        Some(Err(refused)) => return failed(entry, refusal_text(refused)),
        None => return failed(entry, LOST.into()),
    };
    if record.status != Status::Completed {
        entry.status = record.status.as_str();
        let line = format!("{target_url}: {}", pending(uuid, record.status));
        return (entry, line);
    }
    let Some(Completed { document, .. }) = Completed::parse(record.result.as_deref()) else {
        entry.error = Some(UNREADABLE.into());
        let line = format!("{target_url}: scan {uuid} has no readable result");
        return (entry, line);
    };
    entry.status = record.status.as_str();
    entry.grade = Some(document.grade.clone());
    entry.state = Some(document.state);
    entry.submitter_grade = document.submitter_waivers.as_ref().map(|s| s.grade.clone());
    let line = format!(
        "{target_url}: scan {uuid}, grade {}, state {}{}",
        document.grade,
        document.state.label(),
        submitter_note(&document),
    );
    (entry, line)
}

/// The scan as it stands and its summary, or the tool error of a result that cannot be read.
fn scan_state(
    uuid: &str,
    status: Status,
    result: Option<&str>,
) -> Result<(ScanState, String), Failure> {
    let state = |result| ScanState {
        uuid: uuid.to_string(),
        status: status.as_str(),
        result,
    };
    if status != Status::Completed {
        return Ok((state(Value::Null), pending(uuid, status)));
    }
    let done = Completed::parse(result).ok_or_else(|| Failure::Tool(UNREADABLE.into()))?;
    Ok((state(json!(done.document)), summary(uuid, &done.document)))
}

/// What a tool says of a scan that has not completed yet.
fn pending(uuid: &str, status: Status) -> String {
    let status = status.as_str();
    format!("scan {uuid} is {status}; call get_scan_result with this uuid again in a few seconds")
}

fn summary(uuid: &str, document: &ScanResult) -> String {
    let failed = document
        .findings
        .iter()
        .filter(|f| f.status == FindingStatus::Failed && !f.ignored)
        .count();
    format!(
        "scan {uuid} of {}: grade {}, state {}, {failed} failed check(s), {} remediation \
         step(s){}. {}",
        document.host,
        document.grade,
        document.state.label(),
        document.remediation_plan.steps.len(),
        submitter_note(document),
        document.message,
    )
}

/// "; with the submitter's waivers (...): grade A+, state OK" after a headline, or nothing:
/// the headline is always without them.
fn submitter_note(document: &ScanResult) -> String {
    document
        .submitter_waivers
        .as_ref()
        .map(|s| format!("; {}", s.summary()))
        .unwrap_or_default()
}

/// The completed scan of `uuid`, or the tool error to answer instead.
fn completed(api: &Api, uuid: &str) -> Result<Completed, Failure> {
    let record = api.record(uuid)?;
    if record.status != Status::Completed {
        let message = format!("the scan is {}", record.status.as_str());
        return Err(ApiError::new(409, "not_completed", message)
            .retry_after(2)
            .into());
    }
    Completed::parse(record.result.as_deref()).ok_or_else(|| Failure::Tool(UNREADABLE.into()))
}

fn plan(uuid: &str, document: &ScanResult) -> Value {
    let plan = &document.remediation_plan;
    let (host, grade) = (&document.host, &document.grade);
    let mut text = format!("remediation plan for {host} (grade {grade}):");
    if plan.steps.is_empty() {
        text.push_str(" nothing to do.");
    }
    for (i, step) in plan.steps.iter().enumerate() {
        text.push_str(&format!("\n{}. [{}] {}", i + 1, step.fixed_in, step.action));
    }
    for line in &plan.group_summary {
        text.push_str(&format!("\n{line}"));
    }
    let answer = PlanAnswer {
        uuid: uuid.to_string(),
        host: host.clone(),
        grade: grade.clone(),
        remediation_plan: plan.clone(),
    };
    tool_result(json!(answer), text)
}

fn export(api: &Api, uuid: &str, format: &str, done: &Completed) -> Value {
    let exported = super::export::file(done, uuid, format);
    let (filename, body) = (&exported.filename, &exported.body);
    let structured = json!(ExportAnswer {
        uuid: uuid.to_string(),
        format: format.to_string(),
        mime_type: exported.media,
        filename: filename.clone(),
        bytes: body.len(),
    });
    let base = api.config.base_url.trim_end_matches('/');
    let uri = format!("{base}/api/scans/{uuid}/export/{format}");
    let content = if format == "pdf" {
        json!([
            {"type": "text", "text": format!("{filename}: the PDF report ({} bytes), embedded \
                as a base64 resource; also at {uri}", body.len())},
            {"type": "resource", "resource": {
                "uri": uri,
                "mimeType": exported.media,
                "blob": crate::text::base64(body),
            }},
        ])
    } else {
        json!([{"type": "text", "text": String::from_utf8_lossy(body)}])
    };
    json!({"content": content, "structuredContent": structured, "isError": false})
}

/// A prompt: what `prompts/list` says of it, and its message for a target.
struct Prompt {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// What its message for a target is, before the target: "Audit of".
    about: &'static str,
    /// The text of its message for `target`.
    message: fn(&str) -> String,
}

const PROMPTS: [Prompt; 2] = [
    Prompt {
        name: "audit_instance",
        title: "Audit a storage instance",
        description: "Scan an instance and write a remediation plan for its operators.",
        about: "Audit of",
        message: |target| {
            format!(
                "Audit the storage instance at {target}. Call the scan_instance tool with \
                 target_url \"{target}\", then call plan_remediation with the uuid it answers. \
                 Report the grade and the state, explain each failed finding in plain words, \
                 and write a remediation plan for the operators: ordered steps, grouped by the \
                 system that fixes them (web server or proxy, the instance's configuration, \
                 DNS, certificates), most severe first."
            )
        },
    },
    Prompt {
        name: "review_transport_security",
        title: "Review transport security",
        description: "Review only an instance's certificate and TLS handshake.",
        about: "Transport security review of",
        message: |target| {
            format!(
                "Review only the transport security of the storage instance at {target}: call \
                 the scan_instance tool with target_url \"{target}\" and look only at the \
                 certificate (trust, issuer, expiry, names) and the TLS handshake (protocol \
                 versions, HSTS, fallback to plain HTTP). Leave the other findings aside. Say \
                 what is sound, what is not, and how to fix it."
            )
        },
    },
];

/// The prompts, each with its one argument.
pub fn prompts() -> Vec<Value> {
    let target = json!([{
        "name": "target_url",
        "description": "the instance's hostname, address or URL, e.g. cloud.example.com",
        "required": true,
    }]);
    PROMPTS
        .iter()
        .map(|p| {
            json!({"name": p.name, "title": p.title, "description": p.description,
                   "arguments": target})
        })
        .collect()
}

fn get_prompt(params: &Value) -> Result<Value, Failure> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("prompts/get needs params.name"))?;
    let prompt = PROMPTS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| invalid_params(format!("unknown prompt: {name}")))?;
    let target = params
        .get("arguments")
        .and_then(|a| a.get("target_url"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid_params(format!("{name} needs the argument target_url")))?;
    if target.chars().count() > MAX_TARGET_CHARS || target.chars().any(char::is_control) {
        return Err(invalid_params("target_url is no instance address"));
    }
    let text = (prompt.message)(target);
    Ok(json!({
        "description": format!("{} {target}", prompt.about),
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_echoed_when_spoken_else_the_newest() {
        assert_eq!(negotiate("2025-03-26"), "2025-03-26");
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2024-11-05"), "2025-11-25");
        assert_eq!(negotiate("nonsense"), "2025-11-25");
    }

    /// A session of a client at `ip`, keyed as `initialize` keys it.
    fn open(s: &mut Sessions, id: &str, ip: &str) -> Result<(), Full> {
        let ip: std::net::IpAddr = ip.parse().unwrap();
        s.insert(
            id.to_string(),
            &limits::address_key(ip),
            &limits::network_key(ip),
        )
    }

    /// Issue 31, item 4: after a victim opened a session, 1,000 other addresses opening 10
    /// sessions each (within their own limits) fill the table; the victim's session stays,
    /// the flood ends its own networks' oldest.
    #[test]
    fn many_clients_cannot_end_another_clients_session() {
        let mut s = Sessions::default();
        open(&mut s, "victim", "192.0.2.7").unwrap();
        for address in 0..1_000 {
            let ip = format!("10.0.{}.{}", address / 250, address % 250 + 1);
            for i in 0..10 {
                open(&mut s, &format!("a{address}-{i}"), &ip).unwrap();
            }
        }
        assert_eq!(s.by_id.len(), MAX_SESSIONS);
        assert!(s.contains("victim"));
        // The first network's oldest went first.
        assert!(!s.contains("a0-0") && s.contains("a999-9"));
        // An IPv6 victim in a /56 of its own is as safe.
        let mut s = Sessions::default();
        open(&mut s, "victim6", "2001:db8:1::7").unwrap();
        for address in 0..1_000u32 {
            let ip = format!("2001:db8:2:{:x}::1", address);
            for i in 0..10 {
                open(&mut s, &format!("b{address}-{i}"), &ip).unwrap();
            }
        }
        assert!(s.contains("victim6"));
    }

    /// When no network holds more than one session, a full table refuses the next one
    /// instead of ending anybody's.
    #[test]
    fn a_full_table_of_single_sessions_refuses() {
        let mut s = Sessions::default();
        for i in 0..MAX_SESSIONS as u32 {
            let ip = std::net::Ipv4Addr::from((10 << 24) | (i << 8) | 1);
            open(&mut s, &format!("s{i}"), &ip.to_string()).unwrap();
        }
        assert_eq!(open(&mut s, "late", "192.0.2.7"), Err(Full));
        assert!(s.contains("s0") && !s.contains("late"));
        // One ends: there is room again.
        assert!(s.remove("s5"));
        assert!(!s.remove("s5"));
        open(&mut s, "late", "192.0.2.7").unwrap();
        assert_eq!(s.by_id.len(), MAX_SESSIONS);
    }

    /// A flood of sessions from one client ends that client's own oldest, never another's.
    #[test]
    fn one_client_cannot_evict_another_clients_session() {
        let mut s = Sessions::default();
        open(&mut s, "theirs", "192.0.2.7").unwrap();
        for i in 0..10_050 {
            open(&mut s, &format!("flood{i}"), "198.51.100.9").unwrap();
        }
        assert!(s.contains("theirs"));
        assert_eq!(s.by_id.len(), MAX_SESSIONS_PER_CLIENT + 1);
        assert!(
            s.contains("flood10049")
                && !s.contains(&format!("flood{}", 10_049 - MAX_SESSIONS_PER_CLIENT))
        );
        assert_eq!(s.by_client["198.51.100.9"].len(), MAX_SESSIONS_PER_CLIENT);
        // Ending sessions leaves no trace of the client or its network.
        for i in 10_050 - MAX_SESSIONS_PER_CLIENT..10_050 {
            assert!(s.remove(&format!("flood{i}")));
        }
        assert!(!s.by_client.contains_key("198.51.100.9"));
        assert!(!s.by_network.contains_key("198.51.100.0/24"));
    }

    #[test]
    fn an_ipv6_client_is_its_slash_64() {
        use std::net::IpAddr;
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        let key = super::limits::address_key;
        assert_eq!(key(a), key(b));
        assert_ne!(key(a), key(c));
        assert_eq!(key("::ffff:192.0.2.1".parse().unwrap()), "192.0.2.1");
    }

    /// Each tool's arguments are the typed request its handler reads, and nothing else: the
    /// input schema is that type's, so a member the handler reads is in it.
    #[test]
    fn every_tool_takes_exactly_its_typed_request() {
        let requests: [(&str, &[&str]); 6] = [
            ("scan_instance", ScanRequest::FIELDS),
            ("scan_instances", ScanTargets::FIELDS),
            ("get_scan_result", ScanRef::FIELDS),
            ("plan_remediation", ScanRef::FIELDS),
            ("export_scan", ExportRequest::FIELDS),
            ("erase_instance_data", EraseRequest::FIELDS),
        ];
        let tools = tools();
        assert_eq!(tools.len(), requests.len());
        for (tool, (name, fields)) in tools.iter().zip(requests) {
            assert_eq!(tool["name"], name);
            let schema = &tool["inputSchema"];
            let properties: Vec<&str> = schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let mut expected = fields.to_vec();
            expected.sort_unstable();
            assert_eq!(properties, expected, "{name}");
            assert_eq!(schema["additionalProperties"], false, "{name}");
        }
        // Arguments of every member the schema names are read as the handler's type.
        let all = json!({"uuid": "u", "format": "json", "erase_key": "k",
                         "target_urls": ["a.example"], "waive": ["hstsPreload"],
                         "release_track": "lts"});
        let only = |fields: &[&str]| Arguments {
            tool: "t",
            members: fields
                .iter()
                .map(|f| (f.to_string(), all[*f].clone()))
                .collect(),
        };
        assert!(only(ScanTargets::FIELDS).read::<ScanTargets>().is_ok());
        assert!(only(ScanRef::FIELDS).read::<ScanRef>().is_ok());
        assert!(only(ExportRequest::FIELDS).read::<ExportRequest>().is_ok());
        assert!(only(EraseRequest::FIELDS).read::<EraseRequest>().is_ok());
    }

    /// Each tool's structured content is its answer type, written as its output schema says
    /// (every entry of scan_instances: a full one and a refused one).
    #[test]
    fn every_answer_is_written_as_its_output_schema_says() {
        use super::super::schema::assert_written_as_described;
        let text = || "x".to_string();
        assert_written_as_described(ScanState {
            uuid: text(),
            status: "queued",
            result: Value::Null,
        });
        assert_written_as_described(SubmittedScan {
            uuid: text(),
            status: "completed",
            result: json!({}),
            erase_key: text(),
        });
        let refused = TargetEntry {
            target_url: text(),
            status: "refused",
            error: Some(text()),
            ..TargetEntry::default()
        };
        assert_written_as_described(refused);
        let scanned = TargetEntry {
            target_url: text(),
            uuid: Some(text()),
            status: "completed",
            grade: Some(text()),
            state: Some(State::Ok),
            submitter_grade: Some(text()),
            error: Some(text()),
            retry_after: Some(1),
            erase_key: Some(text()),
            same_as: Some(0),
        };
        assert_eq!(json!(&scanned)["state"], "OK");
        assert_written_as_described(scanned);
        assert_written_as_described(TargetEntries { results: vec![] });
        assert_written_as_described(PlanAnswer {
            uuid: text(),
            host: text(),
            grade: text(),
            remediation_plan: RemediationPlan::default(),
        });
        assert_written_as_described(RemediationPlan::default());
        assert_written_as_described(ExportAnswer {
            uuid: text(),
            format: text(),
            mime_type: "text/csv",
            filename: text(),
            bytes: 1,
        });
    }

    #[test]
    fn every_tool_has_both_schemas() {
        for tool in tools() {
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        }
    }
}
