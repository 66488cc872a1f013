//! `/mcp`: the scan API as Model Context Protocol tools and prompts, over streamable HTTP,
//! blocking, on our own serde JSON-RPC types.
//!
//! One JSON-RPC 2.0 request per `POST /mcp` (batches are refused), answered with
//! `application/json`; notifications and client responses get 202 without a body. `initialize`
//! negotiates the protocol version and issues `Mcp-Session-Id`; every later request must carry
//! it (missing → 400, unknown → 404); `DELETE /mcp` ends it. Sessions live in the server's
//! memory (`Api::mcp_sessions`, see `sessions`), at most [`MAX_SESSIONS`] (then only the
//! busiest network gives one up). `GET /mcp` is 405: there is no standalone SSE stream. A request from another site's page is refused with 403 (DNS
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
//!
//! Rooms: this file is the transport (JSON-RPC over HTTP, the session header);
//! `sessions` who holds a session; `progress` the SSE stream of one call; `schemas` the
//! tools' argument and answer types; `tools` and `prompts` what the server offers.

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
            Some(id) if api.mcp_sessions().remove(id) => {
                Response::new(204, "application/json", vec![])
            }
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
            return check_session(api, request, Value::Null)
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
    if let Err(answer) = check_session(api, request, id.clone().unwrap_or(Value::Null)) {
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

fn check_session(api: &Api, request: &Request, id: Value) -> Result<(), Response> {
    let missing =
        "Mcp-Session-Id is required: send initialize first and repeat the header it answers";
    match request.header(SESSION_HEADER) {
        None => Err(invalid_request(id, missing)),
        Some(session) if api.mcp_sessions().contains(session) => Ok(()),
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
    let inserted = api.mcp_sessions().insert(
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

mod progress;
mod prompts;
mod schemas;
pub(crate) mod sessions;
mod tools;

use progress::Progress;
use prompts::get_prompt;
pub use prompts::prompts;
pub use tools::tools;
use tools::{call_tool, refusal_text};

#[cfg(test)]
mod tests;
