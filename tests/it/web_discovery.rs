//! The discovery documents of `check-storage-scanner web` (`/.well-known/ai.json`,
//! `/openapi.json`, `/arazzo.json`) as a real process serves them: every URL in them is
//! absolute under `--base-url`, ai.json's MCP client configuration is exact, the OpenAPI
//! document passes `openapi-spec-validator` and `redocly lint`, the Arazzo document passes
//! `redocly lint` and a structural check against the OpenAPI document, and its workflow, walked
//! step by step as the document describes it, scans a fake instance and downloads the export.
//! The validators come from `make deps` (packaging/ci-deps.sh) and run offline.

use crate::support::FakeInstance;
use crate::support::plugin::healthy;
use crate::support::service::{Answer, ScannerService};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::web::fresh_dir;
const BASE: &str = "https://scan.example.com";
const CACHE_CONTROL: &str = "public, max-age=300";

fn start(dir: &Path, extra: &[&str]) -> ScannerService {
    let mut args = vec!["--base-url", BASE];
    args.extend_from_slice(extra);
    crate::support::web::start(dir, &args)
}

/// The path of an absolute URL under the base URL (what to ask the loopback server for).
fn path_of(url: &str) -> &str {
    url.strip_prefix(BASE)
        .filter(|p| p.starts_with('/'))
        .unwrap_or_else(|| panic!("{url} is not under {BASE}"))
}

/// A document as the server answers it: 200, JSON, and the same on HEAD (no body).
fn fetch(web: &ScannerService, path: &str) -> Value {
    let answer = web.get(path, &[]);
    assert_eq!(answer.status, 200, "{path}: {}", answer.text());
    assert_eq!(
        answer.header("content-type"),
        Some("application/json"),
        "{path}"
    );
    let head = web.request("HEAD", path, &[], b"");
    assert_eq!(head.status, 200, "HEAD {path}");
    assert!(head.body.is_empty(), "HEAD {path} has a body");
    assert_eq!(head.header("content-type"), Some("application/json"));
    answer.json()
}

/// Every string of a document that is a URL (has a scheme), with where it is.
fn urls(value: &Value, at: &str, found: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) if s.contains("://") => found.push((at.to_string(), s.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                urls(item, &format!("{at}/{i}"), found);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                urls(v, &format!("{at}/{k}"), found);
            }
        }
        _ => {}
    }
}

fn assert_urls_under_base(name: &str, document: &Value) -> Vec<String> {
    let mut found = Vec::new();
    urls(document, "", &mut found);
    assert!(!found.is_empty(), "{name} names no URL");
    for (at, url) in &found {
        assert!(
            url == BASE || url.starts_with(&format!("{BASE}/")),
            "{name}{at}: {url} is not an absolute URL under {BASE}"
        );
    }
    found.into_iter().map(|(_, url)| url).collect()
}

/// (method, path) of every operationId of an OpenAPI document.
fn operations(openapi: &Value) -> HashMap<String, (String, String)> {
    let mut all = HashMap::new();
    for (path, item) in openapi["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if let Some(id) = operation.get("operationId").and_then(Value::as_str) {
                let previous = all.insert(id.to_string(), (method.to_uppercase(), path.clone()));
                assert!(previous.is_none(), "operationId {id} twice");
            }
        }
    }
    all
}

/// The operationId a step names (`opId` or `$sourceDescriptions.<name>.opId`).
fn step_operation<'a>(arazzo: &Value, step: &'a Value) -> &'a str {
    let id = step["operationId"]
        .as_str()
        .unwrap_or_else(|| panic!("step without operationId: {step}"));
    match id.strip_prefix("$sourceDescriptions.") {
        Some(qualified) => {
            let (source, op) = qualified.split_once('.').unwrap();
            let sources = arazzo["sourceDescriptions"].as_array().unwrap();
            assert!(sources.iter().any(|s| s["name"] == source), "{id}");
            op
        }
        None => id,
    }
}

/// The `Cache-Control` headers of a document: only the discovery one (public, five minutes).
fn assert_cacheable(web: &ScannerService, path: &str) {
    let answer = web.get(path, &[]);
    let cache: Vec<&str> = answer
        .headers
        .iter()
        .filter(|(n, _)| n == "cache-control")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(cache, [CACHE_CONTROL], "{path}: {:?}", answer.headers);
}

fn write(dir: &Path, name: &str, document: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(document).unwrap()).unwrap();
    path
}

fn run(program: &str, args: &[&str], hint: &str) -> (bool, String) {
    let output = Command::new(program)
        .args(args)
        // Redocly phones home (telemetry, an update check) unless told not to; the tests reach
        // nothing beyond loopback.
        .env("REDOCLY_TELEMETRY", "off")
        .env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true")
        .env("NO_UPDATE_NOTIFIER", "1")
        .output()
        .unwrap_or_else(|e| {
            panic!("{program} does not run ({e}); install it with `make deps` ({hint})")
        });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// `redocly lint` with every warning an error. The test base URL is an example.com address on
/// purpose, so that one rule is skipped.
fn redocly_lint(file: &Path) {
    let file = file.display().to_string();
    let (ok, text) = run(
        "redocly",
        &[
            "lint",
            "--extends",
            "recommended-strict",
            "--skip-rule",
            "no-server-example.com",
            "--format",
            "stylish",
            &file,
        ],
        "packaging/ci-deps.sh, npm @redocly/cli",
    );
    assert!(ok, "redocly lint {file}:\n{text}");
}

/// What the HTTP layer answers before any route, so every operation can get it.
const TRANSPORT: [&str; 7] = ["400", "408", "411", "413", "431", "500", "503"];

/// The statuses an operation documents, each refusal checked to have a body schema: JSON
/// (the Error schema) for the API and for the answers of the HTTP layer, an HTML page for the
/// pages' own refusals (tag `pages`).
fn statuses(openapi: &Value, operation_id: &str) -> std::collections::BTreeSet<String> {
    let operation = openapi["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .find(|op| op["operationId"] == operation_id)
        .unwrap_or_else(|| panic!("no operation {operation_id}"));
    let page = operation["tags"] == json!(["pages"]);
    let mut found = std::collections::BTreeSet::new();
    for (status, response) in operation["responses"].as_object().unwrap() {
        let response = match response["$ref"].as_str() {
            Some(reference) => {
                let name = reference.strip_prefix("#/components/responses/").unwrap();
                &openapi["components"]["responses"][name]
            }
            None => response,
        };
        assert!(
            response["description"].is_string(),
            "{operation_id} {status}"
        );
        if status.starts_with('4') || status.starts_with('5') || status == "default" {
            let own = operation["responses"][status.as_str()]["$ref"].is_null();
            let media = if page && own {
                "text/html"
            } else {
                "application/json"
            };
            assert!(
                response["content"][media]["schema"].is_object(),
                "{operation_id} {status} has no {media} body schema: {response}"
            );
        }
        found.insert(status.clone());
    }
    found
}

/// `openapi-spec-validator` and `redocly lint` on an OpenAPI document.
fn validate_openapi(dir: &Path, name: &str, openapi: &Value) {
    let file = write(dir, name, openapi);
    let (ok, text) = run(
        "python3",
        &["-m", "openapi_spec_validator", &file.display().to_string()],
        "packaging/ci-deps.sh, PyPI openapi-spec-validator",
    );
    assert!(
        ok && text.contains("OK"),
        "openapi-spec-validator {name}:\n{text}"
    );
    redocly_lint(&file);
}

/// `/mcp` in openapi.json as it is served: with `--mcp-token` its operations name the bearer
/// scheme and their 401; with `--no-mcp` it is gone. Both documents pass the validators; over
/// the three, every status the server answers is listed.
#[test]
fn the_openapi_document_describes_mcp_as_it_is_served() {
    let dir = fresh_dir("web-discovery-mcp-token");
    let file = dir.join("mcp-token");
    std::fs::write(&file, "a-random-mcp-token-of-at-least-32-characters\n").unwrap();
    let reference = format!("file://{}", file.display());
    let web = start(&dir, &["--mcp-token", &reference]);
    let openapi = fetch(&web, "/openapi.json");
    // ai.json says what it asks: the bearer scheme for /mcp, nothing for the API.
    let ai = fetch(&web, "/.well-known/ai.json");
    web.terminate();
    assert_eq!(ai["authentication"]["api"], "none", "{ai}");
    assert_eq!(ai["authentication"]["mcp"]["scheme"], "bearer", "{ai}");
    assert_eq!(ai["mcp"]["authentication"]["scheme"], "bearer", "{ai}");
    assert_eq!(
        ai["mcp"]["client_configuration"]["headers"]["Authorization"],
        "Bearer ${input:storage-security-token}"
    );
    assert!(!ai.to_string().contains("a-random-mcp-token"), "{ai}");
    let mut all = std::collections::BTreeSet::new();
    for id in ["callMcp", "endMcpSession"] {
        let answered = statuses(&openapi, id);
        assert!(answered.contains("401"), "{id}: {answered:?}");
        all.extend(answered);
    }
    for id in operations(&openapi).keys() {
        all.extend(statuses(&openapi, id));
    }
    let operation = &openapi["paths"]["/mcp"]["post"];
    assert_eq!(operation["security"], json!([{"mcpToken": []}]));
    assert_eq!(
        openapi["components"]["securitySchemes"]["mcpToken"]["scheme"],
        "bearer"
    );
    let expected = [
        "200", "202", "204", "303", "400", "401", "403", "404", "408", "409", "411", "413", "415",
        "429", "431", "500", "503", "default",
    ];
    assert_eq!(all.iter().map(String::as_str).collect::<Vec<_>>(), expected);
    validate_openapi(&dir, "openapi-token.json", &openapi);

    let dir = fresh_dir("web-discovery-no-mcp");
    let web = start(&dir, &["--no-mcp"]);
    let openapi = fetch(&web, "/openapi.json");
    web.terminate();
    assert!(openapi["paths"].get("/mcp").is_none(), "{openapi}");
    assert!(
        openapi["components"]["schemas"]
            .get("JsonRpcMessage")
            .is_none()
    );
    validate_openapi(&dir, "openapi-no-mcp.json", &openapi);
}

#[test]
fn the_documents_name_absolute_urls_and_pass_real_validators() {
    let dir = fresh_dir("web-discovery-documents");
    let web = start(&dir, &[]);

    let ai = fetch(&web, "/.well-known/ai.json");
    assert_eq!(
        ai["mcp"]["client_configuration"],
        json!({"type": "http", "url": format!("{BASE}/mcp")}),
        "{ai}"
    );
    assert!(!ai.to_string().to_lowercase().contains("later"), "{ai}");
    assert_urls_under_base("ai.json", &ai);
    let openapi_url = ai["documents"]["openapi"].as_str().unwrap();
    let arazzo_url = ai["documents"]["arazzo"].as_str().unwrap();
    assert_eq!(openapi_url, format!("{BASE}/openapi.json"));
    assert_eq!(arazzo_url, format!("{BASE}/arazzo.json"));
    assert_eq!(ai["api"]["base_url"], format!("{BASE}/api"));

    // The documents are where ai.json says they are.
    let openapi = fetch(&web, path_of(openapi_url));
    let arazzo = fetch(&web, path_of(arazzo_url));
    assert_urls_under_base("openapi.json", &openapi);
    assert_urls_under_base("arazzo.json", &arazzo);
    // Everything ai.json names under the base answers (the MCP endpoint is not part of this
    // server yet, so it is left out).
    let mut named = Vec::new();
    urls(&ai, "", &mut named);
    for (at, url) in named {
        if at.starts_with("/mcp") || url == BASE || url.ends_with("/api") {
            continue;
        }
        let answer = web.get(path_of(&url), &[]);
        assert_eq!(answer.status, 200, "ai.json{at}: {url}: {}", answer.text());
    }

    // OpenAPI: what the issue asks of it, then the validators.
    assert_eq!(openapi["openapi"], "3.1.0");
    assert_eq!(openapi["servers"], json!([{"url": BASE}]));
    let ops = operations(&openapi);
    for (id, method, path) in [
        ("submitScan", "POST", "/api/scans"),
        ("getScan", "GET", "/api/scans/{uuid}"),
        ("exportScan", "GET", "/api/scans/{uuid}/export/{format}"),
        ("eraseScan", "DELETE", "/api/scans/{uuid}"),
        ("getHealth", "GET", "/healthz"),
    ] {
        assert_eq!(
            ops.get(id),
            Some(&(method.to_string(), path.to_string())),
            "{id}"
        );
    }
    let schemas = &openapi["components"]["schemas"];
    let submission = &schemas["ScanSubmission"];
    let mut fields: Vec<&String> = submission["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    fields.sort();
    assert_eq!(
        fields,
        ["format", "release_track", "target_url", "waive"],
        "{submission}"
    );
    assert_eq!(submission["additionalProperties"], false);
    assert_eq!(submission["required"], json!(["target_url"]));
    assert_eq!(
        submission["properties"]["release_track"]["enum"],
        json!(["auto", "rolling", "production", "lts"])
    );
    assert_eq!(
        submission["properties"]["format"]["enum"],
        json!(["json", "csv", "sarif", "pdf"])
    );
    assert_eq!(
        submission["properties"]["waive"]["items"]["type"],
        json!("string")
    );
    let submit = &openapi["paths"]["/api/scans"]["post"];
    assert!(submit["responses"]["202"]["headers"]["Location"].is_object());
    for status in ["400", "429"] {
        assert!(submit["responses"][status].is_object(), "{status}");
    }
    let too_many = &openapi["components"]["responses"]["TooManyRequests"];
    assert!(too_many["headers"]["Retry-After"].is_object(), "{too_many}");
    let retry_after = &openapi["components"]["headers"]["RetryAfter"];
    assert!(retry_after["description"].is_string() && retry_after["schema"]["type"] == "integer");
    let export = &openapi["paths"]["/api/scans/{uuid}/export/{format}"]["get"]["responses"];
    for media in [
        "application/json",
        "text/csv",
        "application/sarif+json",
        "application/pdf",
    ] {
        assert!(export["200"]["content"][media].is_object(), "{media}");
    }
    assert!(export["404"].is_object() && export["409"].is_object());
    assert_eq!(
        schemas["ScanCompleted"]["properties"]["status"]["const"],
        "completed"
    );
    assert_eq!(
        schemas["ScanPending"]["properties"]["status"]["enum"],
        json!(["queued", "running"])
    );
    assert!(schemas["Erased"]["properties"]["erased"].is_object());
    assert!(schemas["Error"]["properties"]["error"]["properties"]["field"].is_object());

    // Every status the server can answer, for each operation where it applies.
    for (id, own) in [
        ("submitScan", &["202", "400", "415", "429"][..]),
        ("getScan", &["200", "404"]),
        ("eraseScan", &["200", "403", "404"]),
        ("exportScan", &["200", "404", "409"]),
        ("getHealth", &["200"]),
        ("callMcp", &["200", "202", "400", "403", "404", "415"]),
        ("endMcpSession", &["204", "403", "404"]),
    ] {
        let answered = statuses(&openapi, id);
        for status in own.iter().chain(&TRANSPORT) {
            assert!(
                answered.contains(*status),
                "{id} lacks {status}: {answered:?}"
            );
        }
        // Without --mcp-token nothing asks for a token.
        assert!(!answered.contains("401"), "{id}: {answered:?}");
    }

    let arazzo_file = write(&dir, "arazzo.json", &arazzo);
    validate_openapi(&dir, "openapi.json", &openapi);

    // Arazzo: its version, its source, every operation it names exists, every step it jumps
    // to exists; and redocly lints it too.
    assert_eq!(arazzo["arazzo"], "1.0.1");
    let sources = arazzo["sourceDescriptions"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "{arazzo}");
    assert_eq!(sources[0]["url"], openapi_url);
    assert_eq!(sources[0]["type"], "openapi");
    let workflows = arazzo["workflows"].as_array().unwrap();
    assert!(!workflows.is_empty());
    for workflow in workflows {
        let steps = workflow["steps"].as_array().unwrap();
        let ids: Vec<&str> = steps
            .iter()
            .map(|s| s["stepId"].as_str().unwrap())
            .collect();
        for step in steps {
            let op = step_operation(&arazzo, step);
            assert!(ops.contains_key(op), "{op} is not in openapi.json");
            for kind in ["onSuccess", "onFailure"] {
                for action in step[kind].as_array().into_iter().flatten() {
                    if let Some(target) = action["stepId"].as_str() {
                        assert!(ids.contains(&target), "{kind} goes to {target}");
                    }
                }
            }
        }
        for (name, expression) in workflow["outputs"].as_object().unwrap() {
            let step = expression
                .as_str()
                .and_then(|e| e.strip_prefix("$steps."))
                .and_then(|e| e.split('.').next())
                .unwrap_or_else(|| panic!("output {name}: {expression}"));
            assert!(ids.contains(&step), "output {name}: {expression}");
        }
    }
    let workflow = &workflows[0];
    let outputs: Vec<&String> = workflow["outputs"].as_object().unwrap().keys().collect();
    for wanted in ["uuid", "result", "export"] {
        assert!(outputs.iter().any(|o| *o == wanted), "{outputs:?}");
    }
    let poll = workflow["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| step_operation(&arazzo, s) == "getScan")
        .expect("a step polls the scan");
    assert!(
        poll["successCriteria"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["condition"] == "$response.body#/status == 'completed'"),
        "{poll}"
    );
    assert!(
        poll["onFailure"]
            .as_array()
            .unwrap()
            .iter()
            .any(
                |a| ["retry", "goto"].contains(&a["type"].as_str().unwrap_or_default())
                    && a["retryAfter"].as_f64().is_some_and(|s| s > 0.0)
            ),
        "{poll}"
    );
    redocly_lint(&arazzo_file);

    // Public and cacheable for five minutes, and nothing else (the HTTP layer's default
    // `no-store` must give way).
    for path in ["/.well-known/ai.json", "/openapi.json", "/arazzo.json"] {
        assert_cacheable(&web, path);
    }

    web.terminate();
}

/// A tiny Arazzo runner: as much of the specification as the document uses (runtime
/// expressions `$inputs.*`, `$steps.*.outputs.*`, `$statusCode`, `$response.body[#/ptr]`,
/// `$response.header.*`; conditions `<expression> == <literal>`; goto and retry actions).
struct Runner<'a> {
    web: &'a ScannerService,
    openapi: &'a Value,
    inputs: Map<String, Value>,
    outputs: HashMap<String, Map<String, Value>>,
    /// Every answer: (operationId, status).
    answered: Vec<(String, u16)>,
}

struct Response {
    status: u16,
    answer: Answer,
    body: Value,
}

impl Runner<'_> {
    fn value(&self, expression: &Value, response: Option<&Response>) -> Value {
        let Some(text) = expression.as_str() else {
            // A literal, or an object whose members are evaluated.
            return match expression {
                Value::Object(map) => Value::Object(
                    map.iter()
                        .map(|(k, v)| (k.clone(), self.value(v, response)))
                        .collect(),
                ),
                other => other.clone(),
            };
        };
        if let Some(name) = text.strip_prefix("$inputs.") {
            return self.inputs.get(name).cloned().unwrap_or(Value::Null);
        }
        if let Some(rest) = text.strip_prefix("$steps.") {
            let (step, output) = rest.split_once(".outputs.").expect(text);
            return self.outputs[step]
                .get(output)
                .cloned()
                .unwrap_or(Value::Null);
        }
        let response = || response.unwrap_or_else(|| panic!("{text} outside a response"));
        if text == "$statusCode" {
            return json!(response().status);
        }
        if text == "$response.body" {
            return response().body.clone();
        }
        if let Some(pointer) = text.strip_prefix("$response.body#") {
            return response()
                .body
                .pointer(pointer)
                .cloned()
                .unwrap_or(Value::Null);
        }
        if let Some(name) = text.strip_prefix("$response.header.") {
            return json!(response().answer.header(name));
        }
        assert!(
            !text.starts_with('$'),
            "an expression this runner lacks: {text}"
        );
        expression.clone()
    }

    fn holds(&self, criteria: &Value, response: &Response) -> bool {
        criteria.as_array().into_iter().flatten().all(|criterion| {
            assert!(
                criterion.get("type").is_none_or(|t| t == "simple"),
                "{criterion}"
            );
            let condition = criterion["condition"].as_str().unwrap();
            let (left, right) = condition
                .split_once(" == ")
                .unwrap_or_else(|| panic!("a condition this runner lacks: {condition}"));
            let left = self.value(&json!(left.trim()), Some(response));
            let right = right.trim();
            let right = match right.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
                Some(text) => json!(text),
                None => serde_json::from_str(right).unwrap(),
            };
            left == right
        })
    }

    fn call(&mut self, operation: &str, step: &Value) -> Response {
        let (method, template) = operations(self.openapi)
            .remove(operation)
            .unwrap_or_else(|| panic!("{operation} not in openapi.json"));
        let mut path = template.clone();
        for parameter in step["parameters"].as_array().into_iter().flatten() {
            assert_eq!(parameter["in"], "path", "{parameter}");
            let value = self.value(&parameter["value"], None);
            let value = value
                .as_str()
                .unwrap_or_else(|| panic!("{parameter}: {value}"));
            let name = parameter["name"].as_str().unwrap();
            path = path.replace(&format!("{{{name}}}"), value);
        }
        assert!(
            !path.contains('{'),
            "{template}: a path parameter is not set"
        );
        // servers[0] is the base URL itself, so the template is the path to ask for.
        let server = self.openapi["servers"][0]["url"].as_str().unwrap();
        assert_eq!(server, BASE);
        let (headers, body) = match step.get("requestBody") {
            Some(request) => {
                let content_type = request["contentType"].as_str().unwrap();
                let payload = self.value(&request["payload"], None);
                (
                    vec![("Content-Type", content_type)],
                    payload.to_string().into_bytes(),
                )
            }
            None => (Vec::new(), Vec::new()),
        };
        let answer = self.web.request(&method, &path, &headers, &body);
        let body = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
        self.answered.push((operation.to_string(), answer.status));
        Response {
            status: answer.status,
            answer,
            body,
        }
    }

    /// Runs a workflow; its outputs.
    fn run(&mut self, arazzo: &Value, workflow: &Value) -> Map<String, Value> {
        // Inputs: the caller's, then the defaults of the inputs schema.
        for (name, schema) in workflow["inputs"]["properties"].as_object().unwrap() {
            if let (false, Some(default)) = (self.inputs.contains_key(name), schema.get("default"))
            {
                self.inputs.insert(name.clone(), default.clone());
            }
        }
        let steps = workflow["steps"].as_array().unwrap();
        let index = |id: &str| steps.iter().position(|s| s["stepId"] == id).unwrap();
        let until = Instant::now() + Duration::from_secs(120);
        let mut retries: HashMap<String, u64> = HashMap::new();
        let mut at = 0;
        while at < steps.len() {
            assert!(Instant::now() < until, "the workflow did not end");
            let step = &steps[at];
            let id = step["stepId"].as_str().unwrap();
            let operation = step_operation(arazzo, step);
            let response = self.call(operation, step);
            if self.holds(&step["successCriteria"], &response) {
                let outputs: Map<String, Value> = step["outputs"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), self.value(v, Some(&response))))
                    .collect();
                self.outputs.insert(id.to_string(), outputs);
                let jump = step["onSuccess"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|a| self.holds(&a["criteria"], &response));
                at = match jump {
                    Some(action) if action["type"] == "end" => steps.len(),
                    Some(action) => {
                        assert_eq!(action["type"], "goto", "{action}");
                        index(action["stepId"].as_str().unwrap())
                    }
                    None => at + 1,
                };
                continue;
            }
            let action = step["onFailure"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| self.holds(&a["criteria"], &response))
                .unwrap_or_else(|| {
                    panic!(
                        "step {id} failed ({} {}) and no onFailure action applies",
                        response.status,
                        response.answer.text()
                    )
                });
            match action["type"].as_str().unwrap() {
                "retry" => {
                    let count = retries.entry(id.to_string()).or_default();
                    *count += 1;
                    let limit = action["retryLimit"].as_u64().unwrap_or(1);
                    assert!(*count <= limit, "step {id}: retried {limit} times");
                    // The document's wait is checked, not served: a test does not wait on
                    // real time, so the next poll comes after a short pause.
                    let wait = action["retryAfter"].as_f64().unwrap_or(0.0);
                    assert!(wait > 0.0, "step {id}: a retry without a wait: {action}");
                    std::thread::sleep(Duration::from_millis(20));
                    if let Some(target) = action["stepId"].as_str() {
                        at = index(target);
                    }
                }
                "goto" => at = index(action["stepId"].as_str().unwrap()),
                other => panic!("step {id} failed: onFailure {other}"),
            }
        }
        workflow["outputs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), self.value(v, None)))
            .collect()
    }
}

#[test]
fn the_arazzo_workflow_walked_against_the_server_scans_and_exports() {
    let fake = FakeInstance::start(healthy("7.2.4"));
    let dir = fresh_dir("web-discovery-workflow");
    let ca = fake.ca_file().display().to_string();
    let web = start(&dir, &["--allow-private-targets", "--ca-file", &ca]);
    let ai = fetch(&web, "/.well-known/ai.json");
    let openapi = fetch(&web, path_of(ai["documents"]["openapi"].as_str().unwrap()));
    let arazzo = fetch(&web, path_of(ai["documents"]["arazzo"].as_str().unwrap()));
    let workflow = &arazzo["workflows"][0];

    let mut runner = Runner {
        web: &web,
        openapi: &openapi,
        inputs: json!({"target_url": fake.host_port()})
            .as_object()
            .unwrap()
            .clone(),
        outputs: HashMap::new(),
        answered: Vec::new(),
    };
    let outputs = runner.run(&arazzo, workflow);

    let uuid = outputs["uuid"].as_str().expect("the uuid output");
    assert_eq!(uuid.len(), 36, "{uuid}");
    let result = &outputs["result"];
    assert_eq!(result["state"], "OK", "{result}");
    assert_eq!(result["product"]["version"], "7.2.4", "{result}");
    // The default export is JSON: the result document itself.
    assert_eq!(outputs["export"], *result);
    assert!(fake.requests().iter().any(|r| r.path() == "/status.php"));
    // Submitted once, polled until completed, exported once.
    let calls: Vec<&str> = runner.answered.iter().map(|(op, _)| op.as_str()).collect();
    assert_eq!(calls.first(), Some(&"submitScan"), "{calls:?}");
    assert_eq!(calls.last(), Some(&"exportScan"), "{calls:?}");
    assert!(calls.contains(&"getScan"), "{calls:?}");
    // The submission's Location is the poll URL, under the base URL.
    let location = runner.outputs["submit"]["location"].as_str().unwrap();
    assert_eq!(location, format!("{BASE}/api/scans/{uuid}"));

    // Every answer of the walk, and every export, is one openapi.json documents.
    let documented = |operation: &str, status: u16| {
        let (method, path) = &operations(&openapi)[operation];
        let responses = &openapi["paths"][path][method.to_lowercase()]["responses"];
        let class = format!("{}XX", status / 100);
        responses[status.to_string()].is_object() || responses[class].is_object()
    };
    for (operation, status) in &runner.answered {
        assert!(
            documented(operation, *status),
            "{operation} answered {status}"
        );
    }
    let export = &openapi["paths"]["/api/scans/{uuid}/export/{format}"]["get"]["responses"];
    for format in ["json", "csv", "sarif", "pdf"] {
        let answer = web.get(&format!("/api/scans/{uuid}/export/{format}"), &[]);
        assert!(
            documented("exportScan", answer.status),
            "{format}: {}",
            answer.status
        );
        if answer.status == 200 {
            let media = answer.header("content-type").unwrap();
            let media = media.split(';').next().unwrap().trim();
            assert!(
                export["200"]["content"][media].is_object(),
                "{format}: {media}"
            );
        }
    }
    let missing = web.get("/api/scans/0f8fad5b-d9cb-469f-a165-70867728950e", &[]);
    assert!(documented("getScan", missing.status));
    // Erased with the workflow's erase key output, as eraseScan documents it; without it, 403.
    let refused = web.request("DELETE", path_of(location), &[], b"");
    assert_eq!(refused.status, 403);
    assert!(documented("eraseScan", refused.status));
    let erase_key = outputs["eraseKey"].as_str().expect("the eraseKey output");
    let erased = web.request(
        "DELETE",
        path_of(location),
        &[("X-Erase-Key", erase_key)],
        b"",
    );
    assert!(documented("eraseScan", erased.status), "{}", erased.status);
    assert_eq!(erased.json()["erased"], 1);

    web.terminate();
}

/// `/openapi.json` describes every route the server answers, the documents and the pages
/// included, and nothing it does not answer: each route of the table is in the served
/// document exactly when the server answers its method there (with MCP and with `--no-mcp`),
/// and each documented path without parameters answers GET (and HEAD) with 200 and a media
/// type the document names. Only `/mcp`'s answer to any other method is not an operation.
#[test]
fn the_openapi_document_describes_every_route_the_server_answers() {
    use storage_security::web::routes::ROUTES;
    for (name, flags) in [
        ("web-discovery-every-route", &[][..]),
        ("web-discovery-every-route-no-mcp", &["--no-mcp"][..]),
    ] {
        let dir = fresh_dir(name);
        let web = start(&dir, flags);
        let openapi = fetch(&web, "/openapi.json");
        for route in ROUTES.iter().filter(|r| !r.methods.is_empty()) {
            let method = route.methods[0];
            let documented = openapi["paths"][route.path][method.to_lowercase()].is_object();
            // A parameter stands for a uuid no scan has: the route still answers (404 from
            // the handler, with its JSON or page), never the router's 404 or 405.
            let path = route
                .path
                .replace("{uuid}", "00000000-0000-4000-8000-000000000000")
                .replace("{format}", "json");
            let answer = web.request(method, &path, &[], b"");
            let routed = !(answer.status == 405
                || answer.status == 404 && answer.text().contains("no such route"));
            assert_eq!(
                documented,
                routed,
                "{name}: {method} {} answered {}: {}",
                route.path,
                answer.status,
                answer.text()
            );
        }
        for (path, item) in openapi["paths"].as_object().unwrap() {
            let Some(get) = item.get("get").filter(|_| !path.contains('{')) else {
                continue;
            };
            let answer = web.get(path, &[]);
            assert_eq!(answer.status, 200, "{name}: GET {path}");
            let media = answer.header("content-type").unwrap_or_default();
            let media = media.split(';').next().unwrap_or_default().trim();
            assert!(
                get["responses"]["200"]["content"][media].is_object(),
                "{name}: GET {path} answered {media}, not documented"
            );
            assert_eq!(
                web.request("HEAD", path, &[], b"").status,
                200,
                "HEAD {path}"
            );
        }
        let served = |path: &str| openapi["paths"].get(path).is_some();
        assert!(
            served("/") && served("/scans") && served("/openapi.json"),
            "{name}"
        );
        assert_eq!(served("/static/webmcp.js"), flags.is_empty(), "{name}");
        web.terminate();
    }
}
