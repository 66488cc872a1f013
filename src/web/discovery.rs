//! The documents that describe the public API to programs and agents: `/.well-known/ai.json`,
//! `/openapi.json` and `/arazzo.json`, all naming absolute URLs from `--base-url`.
//!
//! They are built from what the handlers validate with, not kept by hand: the paths are the
//! described routes of `web::routes::ROUTES` (each route names its [`Operation`] here), the
//! component schemas are the typed bodies the handlers read and write (`ScanRequest`,
//! `ScanAccepted`, ... through `web::schema`), the states the store's `Status` (every
//! variant, through an exhaustive match), the export paths and links `api::EXPORT_FORMATS`. A
//! new field or value changes the documents in the same edit; the unit tests below hold the
//! documents to those types and to `api::parse_submission`.
//!
//! The documents are public (no authentication) and cacheable for five minutes.

use super::api::{
    Api, ApiConfig, ERASE_KEY_HEADER, EXPORT_FORMATS, Erased, ErrorBody, Health, Links,
    RELEASE_TRACKS, ScanAccepted, ScanCompleted, ScanPending, erase_key_keywords, pending_statuses,
    uuid_keywords,
};
use super::schema::{Schema, input, member};
use super::store::{ScanRequest, Status};
use crate::server::http::{Operation, Response, Route};
use serde_json::{Map, Value, json};

pub const AI_PATH: &str = "/.well-known/ai.json";
pub const OPENAPI_PATH: &str = "/openapi.json";
pub const ARAZZO_PATH: &str = "/arazzo.json";
pub const CACHE_CONTROL: &str = "public, max-age=300";

/// The name of the service in the documents.
const SERVICE: &str = "check-storage-scanner";
const VERSION: &str = env!("CARGO_PKG_VERSION");
const LICENSE: &str = env!("CARGO_PKG_LICENSE");
/// What the poll answers in `Retry-After` while a scan is pending, and so how long the
/// workflow waits between polls.
const POLL_INTERVAL_SECS: u64 = 2;

/// How `/mcp` is served, as the documents describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mcp {
    /// `--no-mcp`: not at all.
    Off,
    Open,
    /// Behind `--mcp-token`: a bearer token, 401 without it.
    Token,
}

impl Mcp {
    pub fn of(config: &ApiConfig) -> Mcp {
        match (config.mcp, &config.mcp_token) {
            (false, _) => Mcp::Off,
            (true, None) => Mcp::Open,
            (true, Some(_)) => Mcp::Token,
        }
    }
}

/// A document as it is served: public, cacheable for five minutes.
pub fn answer(document: Value) -> Response {
    Response::json(200, &document).with_header("Cache-Control", CACHE_CONTROL)
}

/// The submission's schema: `ScanRequest`'s, nothing else.
pub fn submission_schema() -> Value {
    let mut schema = input::<ScanRequest>();
    schema["examples"] =
        json!([{"target_url": "cloud.example.com", "release_track": "auto", "format": "json"}]);
    schema
}

/// `schema` with its description.
fn described(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}

/// A refusal answered with the Error schema.
fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    })
}

/// A refusal answered with the Error schema and `Retry-After`, which says when to retry.
fn retried_error_response(description: &str) -> Value {
    let mut response = error_response(description);
    response["headers"] = json!({"Retry-After": {"$ref": "#/components/headers/RetryAfter"}});
    response
}

/// What the HTTP layer (`server::http`) answers before any route sees the request, so every
/// operation can get it: (status, the component that describes it).
const TRANSPORT_ANSWERS: [(&str, &str); 8] = [
    ("400", "BadRequest"),
    ("408", "RequestTimeout"),
    ("411", "LengthRequired"),
    ("413", "PayloadTooLarge"),
    ("429", "TooManyConnections"),
    ("431", "HeadTooLarge"),
    ("500", "Internal"),
    ("503", "Unavailable"),
];

/// An operation's responses: its own, and every answer of the HTTP layer it does not describe
/// itself.
fn responses(mut all: Value) -> Value {
    for (status, component) in TRANSPORT_ANSWERS {
        if all.get(status).is_none() {
            all[status] = json!({"$ref": format!("#/components/responses/{component}")});
        }
    }
    all
}

fn components() -> Value {
    let mut components = json!({
        "schemas": {
            "ScanSubmission": submission_schema(),
            "Links": described(Links::schema(), "Absolute URLs of the scan."),
            "ScanAccepted": ScanAccepted::schema(),
            "ScanPending": described(
                ScanPending::schema(),
                "A scan waiting for a worker or being scanned: poll again after Retry-After \
                 seconds.",
            ),
            "ScanCompleted": ScanCompleted::schema(),
            "Erased": Erased::schema(),
            "Error": ErrorBody::schema(),
        },
        "parameters": {
            "EraseKey": {
                "name": ERASE_KEY_HEADER,
                "in": "header",
                "required": true,
                "description": "The erase key the submission of this scan was answered with \
                                (erase_key of its 202).",
                "schema": member(String::schema(), erase_key_keywords()),
            },
            "Uuid": {
                "name": "uuid",
                "in": "path",
                "required": true,
                "description": "The uuid the submission answered.",
                "schema": member(String::schema(), uuid_keywords()),
            },
        },
        "headers": {
            "RetryAfter": {
                "description": "Seconds to wait before asking again.",
                "schema": {"type": "integer", "minimum": 1},
            },
            "Location": {
                "description": "The absolute URL to poll the scan at.",
                "schema": {"type": "string", "format": "uri"},
            },
        },
        "responses": {
            "BadRequest": error_response(
                "The request could not be read (a malformed request line, header or length), \
                 or the body is not a JSON object, carries an unknown field, a wrong type or an \
                 invalid value, or the target is refused (error.field names the field).",
            ),
            "NotFound": error_response(
                "No such scan: unknown, expired or erased (a uuid tells nothing about another scan).",
            ),
            "UnsupportedMediaType": error_response(
                "The body is not sent as Content-Type: application/json (parameters such as \
                 charset aside). A page of another site can make a browser send a form or \
                 text/plain anywhere, never application/json without asking first.",
            ),
            "TooManyRequests": retried_error_response(
                "A limit was reached: 10 submissions within any minute from one address, one \
                 scan of an instance within any 5 minutes (kept for its host with each port its \
                 scan connects to, and for each address the host resolves to: every spelling \
                 and every name of one server share it), 50 scans within any 24 hours from one \
                 network (code rate_limited, target_cooldown, network_daily_limit), or a network \
                 paused after scans that found no supported product (network_paused; the \
                 message names the end of the pause, RFC 3339). Every attempt counts against \
                 its address's minute, before anything else (no DNS lookup) is done for it; \
                 the target's cooldown and the network's day count only a submission that \
                 passes both. Or (too_many_connections) the client holds as many connections \
                 (or, behind a trusted proxy, requests) as one client may. Retry-After says \
                 when to try again.",
            ),
            "TooManyConnections": retried_error_response(
                "The client (an IPv4 address, an IPv6 /64, or behind a trusted proxy the \
                 forwarded address) holds as many open connections, or requests in progress, \
                 as one client may (--connections-per-address, default 8), or its network \
                 (IPv4 /24, IPv6 /56) four times as many; code too_many_connections. Close \
                 one and retry after Retry-After.",
            ),
            "RequestTimeout": error_response(
                "The request head did not arrive within 5 seconds, or its body within 10.",
            ),
            "LengthRequired": error_response(
                "The body was sent chunked: send it with Content-Length.",
            ),
            "PayloadTooLarge": error_response(
                "The body is larger than the service reads (8 KiB; a submission is a few \
                 hundred bytes).",
            ),
            "HeadTooLarge": error_response(
                "The request head is larger than 16 KiB or has more than 100 headers.",
            ),
            "Internal": error_response(
                "The request could not be handled (a fault of the service, logged).",
            ),
            "Unavailable": retried_error_response(
                "The service cannot answer now: every worker is busy, its store cannot be \
                 reached, or (resolver_busy) every resolver thread is busy with a target's \
                 name. Try again after Retry-After seconds.",
            ),
        },
    });
    // The result document and the types it names, generated from `report`'s types.
    for (name, schema) in crate::report::schema::openapi_components() {
        components["schemas"][name] = schema;
    }
    components
}

/// `POST /api/scans`.
pub const SUBMIT_SCAN: Operation = Operation {
    id: "submitScan",
    summary: "Submit an instance for a scan",
    tag: "scans",
    describe: || {
        json!({
            "description": "Queues a scan of one instance. The scan is asynchronous: poll the \
                            Location (or links.self) until status is completed.",
            "requestBody": {
                "required": true,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ScanSubmission"}}},
            },
            "responses": {
                "202": {
                    "description": "Queued.",
                    "headers": {"Location": {"$ref": "#/components/headers/Location"}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ScanAccepted"}}},
                },
                "400": {"$ref": "#/components/responses/BadRequest"},
                "403": error_response(
                    "Sent from another site's page (a foreign or null Origin, Sec-Fetch-Site \
                     cross-site or same-site): a submission starts a scan, which no other \
                     site may ask for (forbidden_origin).",
                ),
                "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                "429": {"$ref": "#/components/responses/TooManyRequests"},
            },
        })
    },
};

/// `GET /api/scans/{uuid}`.
pub const GET_SCAN: Operation = Operation {
    id: "getScan",
    summary: "Poll a scan",
    tag: "scans",
    describe: || {
        let pending_list = pending_statuses().join(" or ");
        json!({
            "description": format!("While the scan is {pending_list} the answer carries its \
                                    links and a Retry-After header; once completed, its result."),
            "responses": {
                "200": {
                    "description": "The scan's state, and its result once completed.",
                    "headers": {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}},
                    "content": {"application/json": {"schema": {"oneOf": [
                        {"$ref": "#/components/schemas/ScanPending"},
                        {"$ref": "#/components/schemas/ScanCompleted"},
                    ]}}},
                },
                "404": {"$ref": "#/components/responses/NotFound"},
            },
        })
    },
};

/// `DELETE /api/scans/{uuid}`.
pub const ERASE_SCAN: Operation = Operation {
    id: "eraseScan",
    summary: "Erase a scan, with its erase key",
    tag: "scans",
    describe: || {
        json!({
            "description": format!("Erases the scan's stored record and its result, given \
                            the erase key its submission was answered with in the \
                            {ERASE_KEY_HEADER} header: only the submitter can, and only that \
                            scan (another submission of the same instance has its own key). \
                            The service keeps only the key's SHA-256; no other answer \
                            carries the key."),
            "parameters": [{"$ref": "#/components/parameters/EraseKey"}],
            "responses": {
                "200": {
                    "description": "Erased.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Erased"}}},
                },
                "403": error_response(
                    "No erase key (erase_key_required), or not this scan's \
                     (erase_key_invalid): nothing was erased.",
                ),
                "404": {"$ref": "#/components/responses/NotFound"},
            },
        })
    },
};

/// `GET /api/scans/{uuid}/export/{format}`.
pub const EXPORT_SCAN: Operation = Operation {
    id: "exportScan",
    summary: "Download an export of a completed scan",
    tag: "scans",
    describe: || {
        let content: Map<String, Value> = EXPORT_FORMATS
            .iter()
            .map(|f| {
                // The handler's media type, without its parameters (`; charset=utf-8`).
                let media = super::export::media_type(f)
                    .split(';')
                    .next()
                    .unwrap_or_default();
                let schema = match media {
                    "application/json" => json!({"$ref": "#/components/schemas/Result"}),
                    "application/sarif+json" => {
                        json!({"type": "object", "description": "A SARIF 2.1.0 log."})
                    }
                    _ => json!({"type": "string", "contentMediaType": media}),
                };
                (media.to_string(), json!({"schema": schema}))
            })
            .collect();
        json!({
            "responses": {
                "200": {
                    "description": "The export, as an attachment.",
                    "headers": {"Content-Disposition": {
                        "description": "attachment, with a file name naming the host.",
                        "schema": {"type": "string"},
                    }},
                    "content": content,
                },
                "404": {"$ref": "#/components/responses/NotFound"},
                "409": retried_error_response(
                    "The scan has not completed yet; poll it, then export.",
                ),
            },
        })
    },
};

/// `GET /healthz`.
pub const GET_HEALTH: Operation = Operation {
    id: "getHealth",
    summary: "Health of the service",
    tag: "service",
    describe: || {
        json!({
            "responses": {
                "200": {
                    "description": "The service answers and its store too.",
                    "content": {"application/json": {"schema": Health::schema()}},
                },
            },
        })
    },
};

/// The `Mcp-Session-Id` header of a request to `/mcp`.
fn mcp_session(required: bool) -> Value {
    json!({
        "name": "Mcp-Session-Id",
        "in": "header",
        "required": required,
        "description": "The session initialize answered; every request after initialize \
                        carries it.",
        "schema": {"type": "string"},
    })
}

/// `POST /mcp`: JSON-RPC messages in, JSON-RPC answers (or server-sent events) out, each
/// refusal the endpoint can answer (`web::mcp::handle`).
pub const CALL_MCP: Operation = Operation {
    id: "callMcp",
    summary: "Send one MCP message (JSON-RPC 2.0)",
    tag: "mcp",
    describe: || {
        let rpc = json!({"$ref": "#/components/schemas/JsonRpcMessage"});
        json!({
            "description": "The Model Context Protocol over streamable HTTP: initialize, tools/list, \
                            tools/call, prompts/list, prompts/get, ping; one message per request (no \
                            batches). A tools/call with _meta.progressToken from a client that \
                            accepts text/event-stream is answered as server-sent events.",
            "parameters": [mcp_session(false)],
            "requestBody": {
                "required": true,
                "content": {"application/json": {"schema": rpc}},
            },
            "responses": {
                "200": {
                    "description": "The JSON-RPC response (a protocol error included), or for a \
                                    tools/call with a progress token the progress notifications and \
                                    then the response as server-sent events.",
                    "headers": {"Mcp-Session-Id": {
                        "description": "On the answer to initialize: the new session.",
                        "schema": {"type": "string"},
                    }},
                    "content": {
                        "application/json": {"schema": rpc},
                        "text/event-stream": {"schema": {"type": "string"}},
                    },
                },
                "202": {"description": "A notification or a response of the client: taken, no body."},
                "400": {
                    "description": "Not one JSON-RPC 2.0 message, an unsupported protocol version, \
                                    or no Mcp-Session-Id after initialize (a JSON-RPC error); or a \
                                    request the server could not read (the Error schema).",
                    "content": {"application/json": {"schema": {"anyOf": [
                        rpc,
                        {"$ref": "#/components/schemas/Error"},
                    ]}}},
                },
                "403": error_response(
                    "Sent from another site's page (its Origin is not the base URL's): refused, \
                     DNS-rebinding protection.",
                ),
                "404": {
                    "description": "The session is unknown (ended or forgotten): initialize again.",
                    "content": {"application/json": {"schema": rpc}},
                },
                "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
            },
        })
    },
};

/// `DELETE /mcp`.
pub const END_MCP_SESSION: Operation = Operation {
    id: "endMcpSession",
    summary: "End an MCP session",
    tag: "mcp",
    describe: || {
        json!({
            "parameters": [mcp_session(true)],
            "responses": {
                "204": {"description": "The session ended."},
                "403": error_response("Sent from another site's page: refused."),
                "404": error_response("No such session."),
            },
        })
    },
};

/// A document of this module, as its operation describes it.
fn document(description: &str) -> Value {
    json!({
        "description": description,
        "responses": {
            "200": {
                "description": "The document: public, cacheable for five minutes.",
                "headers": {"Cache-Control": {
                    "description": CACHE_CONTROL,
                    "schema": {"type": "string"},
                }},
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
        },
    })
}

/// `GET /.well-known/ai.json`.
pub const GET_AI: Operation = Operation {
    id: "getAiDocument",
    summary: "The service described for agents",
    tag: "documents",
    describe: || {
        document(
            "What the service does, its MCP endpoint with the client configuration to use it, \
             and the absolute URLs of the other documents.",
        )
    },
};

/// `GET /openapi.json`.
pub const GET_OPENAPI: Operation = Operation {
    id: "getOpenApi",
    summary: "This OpenAPI 3.1 description",
    tag: "documents",
    describe: || document("Every route the service answers, generated from its route table."),
};

/// `GET /arazzo.json`.
pub const GET_ARAZZO: Operation = Operation {
    id: "getArazzo",
    summary: "The Arazzo 1.0.1 workflows",
    tag: "documents",
    describe: || document("Submit a scan, poll it until it completed, download an export."),
};

/// An HTML page answer.
fn page(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"text/html": {"schema": {"type": "string"}}},
    })
}

/// `GET /`.
pub const GET_LANDING_PAGE: Operation = Operation {
    id: "getLandingPage",
    summary: "The page with the scan form",
    tag: "pages",
    describe: || json!({"responses": {"200": page("The form that submits a scan.")}}),
};

/// `POST /scans`: the landing page's form, for browsers without JavaScript.
pub const SUBMIT_SCAN_FORM: Operation = Operation {
    id: "submitScanForm",
    summary: "Submit an instance from the page's form",
    tag: "pages",
    describe: || {
        let retried = |description: &str| {
            let mut answer = page(description);
            answer["headers"] = json!({"Retry-After": {"$ref": "#/components/headers/RetryAfter"}});
            answer
        };
        json!({
            "description": "The form of the landing page, read by submitScan's own reader; the \
                            browser is sent on to the scan's result page. A scan submitted \
                            here has no erase key anyone was shown: it expires.",
            "requestBody": {
                "required": true,
                "content": {"application/x-www-form-urlencoded": {"schema": {
                    "type": "object",
                    "properties": {
                        "target_url": {"type": "string", "description": "The instance."},
                        "waive": {
                            "type": "string",
                            "description": "Check ids or patterns to waive, comma-separated.",
                        },
                        "release_track": {"type": "string", "enum": RELEASE_TRACKS},
                    },
                    "required": ["target_url"],
                }}},
            },
            "responses": {
                "303": {
                    "description": "Queued: the Location is the scan's result page.",
                    "headers": {"Location": {
                        "description": "The result page of the scan.",
                        "schema": {"type": "string"},
                    }},
                },
                "400": page("A field is missing or invalid: the form again with the reason."),
                "403": page("Posted from another site's page: the form, refused."),
                "429": retried(
                    "A limit was reached (as submitScan's 429): the form again with the reason.",
                ),
                "503": retried(
                    "The service cannot queue the scan now: the form again with the reason.",
                ),
                // The form is never answered 2xx: a queued scan is a 303 to its page.
                "default": page(
                    "Any other refusal of the submission: the form again, with the reason.",
                ),
            },
        })
    },
};

/// `GET /scans/{uuid}`.
pub const GET_RESULT_PAGE: Operation = Operation {
    id: "getResultPage",
    summary: "The page of a scan",
    tag: "pages",
    describe: || {
        json!({
            "description": "The grade, findings and export links once the scan completed; \
                            while it is pending, a page that refreshes itself.",
            "responses": {
                "200": page("The scan, completed or pending."),
                "404": page("No such scan: unknown, expired or erased."),
                "503": page("The service cannot read the scan now; try again shortly."),
            },
        })
    },
};

/// A static file of the pages.
fn static_file(description: &str, media: &str) -> Value {
    json!({
        "description": description,
        "responses": {"200": {
            "description": "The file, cacheable for an hour.",
            "content": {media: {"schema": {"type": "string"}}},
        }},
    })
}

/// `GET /static/style.css`.
pub const GET_STYLESHEET: Operation = Operation {
    id: "getStylesheet",
    summary: "The pages' stylesheet",
    tag: "pages",
    describe: || static_file("The style of every page.", "text/css"),
};

/// `GET /static/app.js`.
pub const GET_PAGE_SCRIPT: Operation = Operation {
    id: "getPageScript",
    summary: "The pages' script",
    tag: "pages",
    describe: || {
        static_file(
            "Submits the form and polls a pending scan through the JSON API; the pages work \
             without it.",
            "text/javascript",
        )
    },
};

/// `GET /static/webmcp.js`, while MCP is served.
pub const GET_WEBMCP_SCRIPT: Operation = Operation {
    id: "getWebMcpScript",
    summary: "The pages' WebMCP tools",
    tag: "pages",
    describe: || {
        static_file(
            "Offers the pages' tools to an agent in the browser (draft WebMCP): they call the \
             JSON API.",
            "text/javascript",
        )
    },
};

/// A path parameter (`{name}` of a route's path) as the operations take it.
fn path_parameter(name: &str) -> Value {
    match name {
        "uuid" => json!({"$ref": "#/components/parameters/Uuid"}),
        "format" => json!({
            "name": "format",
            "in": "path",
            "required": true,
            "description": "The export format.",
            "schema": {"type": "string", "enum": EXPORT_FORMATS},
        }),
        other => {
            json!({"name": other, "in": "path", "required": true, "schema": {"type": "string"}})
        }
    }
}

/// The paths of the document: every described route of `routes` (the table's served ones;
/// `/mcp`'s behind its token when it has one), each operation with every answer of the HTTP
/// layer it does not describe itself.
fn paths<'a>(routes: impl IntoIterator<Item = &'a Route<Api>>, mcp: Mcp) -> Value {
    let mut paths = Map::new();
    for route in routes {
        let (Some(doc), Some(method)) = (&route.doc, route.methods.first()) else {
            continue;
        };
        if doc.tag == "mcp" && mcp == Mcp::Off {
            continue;
        }
        let item = paths.entry(route.path).or_insert_with(|| {
            let parameters: Vec<Value> = route
                .path
                .split('/')
                .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                .map(path_parameter)
                .collect();
            match parameters.is_empty() {
                true => json!({}),
                false => json!({ "parameters": parameters }),
            }
        });
        let mut operation = (doc.describe)();
        operation["operationId"] = json!(doc.id);
        operation["summary"] = json!(doc.summary);
        operation["tags"] = json!([doc.tag]);
        operation["responses"] = responses(operation["responses"].take());
        if doc.tag == "mcp" && mcp == Mcp::Token {
            operation["security"] = json!([{"mcpToken": []}]);
            operation["responses"]["401"] = error_response(
                "No Authorization: Bearer with the operator's MCP token (WWW-Authenticate \
                 says so).",
            );
        }
        item[method.to_ascii_lowercase()] = operation;
    }
    Value::Object(paths)
}

/// `/openapi.json`: OpenAPI 3.1.0 of every route the server answers (`/mcp` as it is served),
/// the documents and the pages included: its paths are those of `routes`, the served routes of
/// the table (`web::routes::ROUTES`). Every GET path answers HEAD with the head of its GET
/// answer.
pub fn openapi<'a>(
    base: &str,
    mcp: Mcp,
    routes: impl IntoIterator<Item = &'a Route<Api>>,
) -> Value {
    let mut document = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Storage security scan API",
            "version": VERSION,
            "summary": "Grade the security of an OpenCloud or oCIS instance.",
            "description": "Submit an instance, poll until the scan completed, read its grade and \
                            findings, download an export. Public: no authentication; rate limits \
                            answer 429 with Retry-After. Every GET path also answers HEAD.",
            "license": {"name": LICENSE, "identifier": LICENSE},
        },
        "servers": [{"url": base}],
        "security": [],
        "tags": [
            {"name": "scans", "description": "Submit, poll, export and erase scans."},
            {"name": "service", "description": "The service itself."},
            {"name": "documents", "description": "The documents that describe the service."},
            {"name": "pages", "description": "The web pages for people, and their files."},
        ],
        "paths": paths(routes, mcp),
        "components": components(),
    });
    if mcp != Mcp::Off {
        document["tags"]
            .as_array_mut()
            .expect("tags")
            .push(json!({"name": "mcp", "description": "The scan API as MCP tools for agents."}));
        document["components"]["schemas"]["JsonRpcMessage"] = json!({
            "type": "object",
            "description": "One JSON-RPC 2.0 message: a request (id and method), a \
                            notification (method only) or a response (id with result or error).",
            "properties": {
                "jsonrpc": {"type": "string", "const": "2.0"},
                "id": {"type": ["string", "integer"]},
                "method": {"type": "string"},
                "params": {"type": "object"},
                "result": {"type": "object"},
                "error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "integer"},
                        "message": {"type": "string"},
                    },
                    "required": ["code", "message"],
                },
            },
            "required": ["jsonrpc"],
        });
    }
    if mcp == Mcp::Token {
        document["components"]["securitySchemes"] = json!({"mcpToken": {
            "type": "http",
            "scheme": "bearer",
            "description": "The operator's MCP token (--mcp-token); only /mcp asks for it.",
        }});
    }
    document
}

/// `/arazzo.json`: Arazzo 1.0.1, the workflow submit → poll until completed → export.
pub fn arazzo(base: &str) -> Value {
    let completed = format!("$response.body#/status == '{}'", Status::Completed.as_str());
    let description = "The submission; its format is also the export to download.";
    let mut inputs = described(submission_schema(), description);
    inputs["properties"]["format"]["default"] = json!("json");
    // Each field of the submission from the input of the same name (an absent input is null,
    // which the handler takes as not given).
    let payload: Map<String, Value> = ScanRequest::FIELDS
        .iter()
        .map(|f| (f.to_string(), json!(format!("$inputs.{f}"))))
        .collect();
    json!({
        "arazzo": "1.0.1",
        "info": {
            "title": "Storage security scan workflows",
            "version": VERSION,
            "description": "How to scan an instance with the public scan API.",
        },
        "sourceDescriptions": [
            {"name": "scanApi", "url": format!("{base}{OPENAPI_PATH}"), "type": "openapi"},
        ],
        "workflows": [{
            "workflowId": "scanAndExport",
            "summary": "Submit a scan, poll until it completed, and download an export",
            "description": "The scan is asynchronous: submit it, poll it until its status is \
                            completed (waiting Retry-After seconds between polls), then export it.",
            "inputs": inputs,
            "steps": [
                {
                    "stepId": "submit",
                    "description": "Submit the instance; the answer names the scan's uuid and \
                                    its erase key (keep it: only it erases the scan, with \
                                    eraseScan).",
                    "operationId": SUBMIT_SCAN.id,
                    "requestBody": {
                        "contentType": "application/json",
                        "payload": payload,
                    },
                    "successCriteria": [{"condition": "$statusCode == 202"}],
                    "onFailure": [{
                        "name": "rateLimited",
                        "type": "retry",
                        "retryAfter": 60,
                        "retryLimit": 5,
                        "criteria": [{"condition": "$statusCode == 429"}],
                    }],
                    "outputs": {
                        "uuid": "$response.body#/uuid",
                        "location": "$response.header.Location",
                        "eraseKey": "$response.body#/erase_key",
                    },
                },
                {
                    "stepId": "poll",
                    "description": "Poll the scan until its status is completed (detects \
                                    completion); while it is pending, wait and poll again.",
                    "operationId": GET_SCAN.id,
                    "parameters": [
                        {"name": "uuid", "in": "path", "value": "$steps.submit.outputs.uuid"},
                    ],
                    "successCriteria": [
                        {"condition": "$statusCode == 200"},
                        {"condition": completed},
                    ],
                    "onSuccess": [{
                        "name": "completed",
                        "type": "goto",
                        "stepId": "export",
                        "criteria": [{"condition": completed}],
                    }],
                    "onFailure": [{
                        "name": "notCompleted",
                        "type": "retry",
                        "stepId": "poll",
                        "retryAfter": POLL_INTERVAL_SECS,
                        "retryLimit": 900,
                        "criteria": [{"condition": "$statusCode == 200"}],
                    }],
                    "outputs": {
                        "status": "$response.body#/status",
                        "result": "$response.body#/result",
                    },
                },
                {
                    "stepId": "export",
                    "description": "Download the export in the format asked for.",
                    "operationId": EXPORT_SCAN.id,
                    "parameters": [
                        {"name": "uuid", "in": "path", "value": "$steps.submit.outputs.uuid"},
                        {"name": "format", "in": "path", "value": "$inputs.format"},
                    ],
                    "successCriteria": [{"condition": "$statusCode == 200"}],
                    "outputs": {
                        "export": "$response.body",
                        "contentType": "$response.header.Content-Type",
                    },
                },
            ],
            "outputs": {
                "uuid": "$steps.submit.outputs.uuid",
                "result": "$steps.poll.outputs.result",
                "export": "$steps.export.outputs.export",
                "eraseKey": "$steps.submit.outputs.eraseKey",
            },
        }],
    })
}

/// `/.well-known/ai.json`: what the service is and where everything else is described, and
/// what each part asks of a client: the API nothing, `/mcp` behind `--mcp-token` a bearer token
/// (the same scheme OpenAPI's `securitySchemes` names).
pub fn ai(base: &str, served: Mcp) -> Value {
    let mcp = format!("{base}{}", super::mcp::PATH);
    let mut document = json!({
        "name": SERVICE,
        "description": "Grades the storage security of OpenCloud and oCIS instances: submit an \
                        instance, poll the scan, read its grade and findings, export it as JSON, \
                        CSV, SARIF or PDF.",
        "version": VERSION,
        "url": base,
        "authentication": "none",
        "documents": {
            "ai": format!("{base}{AI_PATH}"),
            "openapi": format!("{base}{OPENAPI_PATH}"),
            "arazzo": format!("{base}{ARAZZO_PATH}"),
        },
        "api": {
            "base_url": format!("{base}/api"),
            "openapi": format!("{base}{OPENAPI_PATH}"),
            "health": format!("{base}/healthz"),
        },
        "workflows": {
            "arazzo": format!("{base}{ARAZZO_PATH}"),
            "ids": ["scanAndExport"],
        },
        "mcp": {
            "url": mcp,
            "transport": "streamable-http",
            "client_configuration": {"type": "http", "url": mcp},
            "authentication": "none",
        },
    });
    if served == Mcp::Off
        && let Some(object) = document.as_object_mut()
    {
        object.remove("mcp");
    }
    if served == Mcp::Token {
        let bearer = json!({
            "type": "bearer",
            "scheme": "bearer",
            "header": "Authorization",
            "description": "Authorization: Bearer <token>, the token the operator gave with \
                            --mcp-token; 401 with WWW-Authenticate without it",
        });
        document["authentication"] = json!({"api": "none", "mcp": bearer.clone()});
        document["mcp"]["authentication"] = bearer;
        document["mcp"]["client_configuration"]["headers"] =
            json!({"Authorization": "Bearer ${input:storage-security-token}"});
    }
    document
}

#[cfg(test)]
mod tests;
