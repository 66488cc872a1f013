//! `POST /mcp` of `check-storage-scanner web` as a real process on loopback: the MCP
//! handshake and its sessions, the tools (a scan of a fake instance in one call, its
//! remediation plan and exports), several instances in one call (`scan_instances`), progress
//! over SSE, the prompts, and every refusal: JSON-RPC errors, the guard and the cooldown as
//! tool errors, a foreign `Origin`, a browser's `GET`.

use crate::support::FakeInstance;
use crate::support::plugin::healthy;
use crate::support::service::{Answer, ScannerService};
use serde_json::{Value, json};

use crate::support::web::{fresh_dir, start};

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

fn post(web: &ScannerService, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut all = vec![JSON, ACCEPT];
    all.extend_from_slice(headers);
    web.request("POST", "/mcp", &all, body.as_bytes())
}

/// `initialize` asking for `version`: the answer and its session id.
fn initialize(web: &ScannerService, version: &str) -> (Value, String) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "web_mcp test", "version": "1"},
        },
    });
    let answer = post(web, &[], &body.to_string());
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let session = answer
        .header("mcp-session-id")
        .expect("initialize issues Mcp-Session-Id")
        .to_string();
    (answer.json(), session)
}

/// One request in `session`: the whole JSON-RPC answer (status 200 asserted).
fn rpc(web: &ScannerService, session: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let answer = post(web, &[("Mcp-Session-Id", session)], &body.to_string());
    assert_eq!(answer.status, 200, "{method}: {}", answer.text());
    let value = answer.json();
    assert_eq!(value["jsonrpc"], "2.0");
    assert_eq!(value["id"], 7);
    value
}

fn call(web: &ScannerService, session: &str, tool: &str, arguments: Value) -> Value {
    let value = rpc(
        web,
        session,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    assert!(value.get("error").is_none(), "{tool}: {value}");
    value["result"].clone()
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let bytes = text.as_bytes();
    assert_eq!(bytes.len() % 4, 0);
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let pad = chunk.iter().filter(|b| **b == b'=').count();
        let n = chunk
            .iter()
            .map(|b| if *b == b'=' { 0 } else { value(*b) })
            .fold(0u32, |n, v| (n << 6) | v);
        let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    out
}

#[test]
fn an_agent_audits_an_instance_in_one_call_and_every_refusal_is_clear() {
    let fake = FakeInstance::start(healthy("7.2.4"));
    let dir = fresh_dir("web-mcp-scan");
    let ca = fake.ca_file().display().to_string();
    let web = start(&dir, &["--allow-private-targets", "--ca-file", &ca]);
    let own_origin = format!("http://{}", web.addr);

    // The handshake: a version we speak is echoed, another gets our newest.
    let (hello, session) = initialize(&web, "2025-06-18");
    let result = &hello["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18", "{hello}");
    assert_eq!(result["serverInfo"]["name"], "check-storage-scanner");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(result["capabilities"]["tools"].is_object(), "{hello}");
    assert!(result["capabilities"]["prompts"].is_object(), "{hello}");
    assert_eq!(session.len(), 36, "{session}");
    let (old, other) = initialize(&web, "2024-11-05");
    assert_eq!(old["result"]["protocolVersion"], "2025-11-25", "{old}");
    assert_ne!(other, session);
    let (march, _) = initialize(&web, "2025-03-26");
    assert_eq!(march["result"]["protocolVersion"], "2025-03-26");

    let initialized = post(
        &web,
        &[("Mcp-Session-Id", &session)],
        r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
    );
    assert_eq!(initialized.status, 202, "{}", initialized.text());
    assert!(initialized.body.is_empty());
    assert_eq!(rpc(&web, &session, "ping", json!({}))["result"], json!({}));

    // Without a session, 400; with an unknown one, 404.
    let ping = r#"{"jsonrpc": "2.0", "id": 2, "method": "ping"}"#;
    let without = post(&web, &[], ping);
    assert_eq!(without.status, 400, "{}", without.text());
    assert!(
        without.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Mcp-Session-Id")
    );
    let unknown = post(
        &web,
        &[("Mcp-Session-Id", "0f8fad5b-d9cb-469f-a165-70867728950e")],
        ping,
    );
    assert_eq!(unknown.status, 404, "{}", unknown.text());
    assert!(unknown.json()["error"]["code"].is_i64());

    // The tools, each with both schemas.
    let listed = rpc(&web, &session, "tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "scan_instance",
            "scan_instances",
            "get_scan_result",
            "plan_remediation",
            "export_scan",
            "erase_instance_data"
        ]
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
    }
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["target_url"]));
    assert_eq!(
        tools[4]["inputSchema"]["properties"]["format"]["enum"],
        json!(["json", "csv", "sarif", "pdf"])
    );

    // One call scans the fake and answers the completed result.
    let scan = call(
        &web,
        &session,
        "scan_instance",
        json!({"target_url": fake.host_port(), "release_track": "production",
               "waive": ["versionDisclosure"]}),
    );
    assert_eq!(scan["isError"], false, "{scan}");
    let structured = &scan["structuredContent"];
    assert_eq!(structured["status"], "completed", "{scan}");
    let uuid = structured["uuid"].as_str().unwrap().to_string();
    let erase_key = structured["erase_key"].as_str().unwrap().to_string();
    let document = &structured["result"];
    assert_eq!(document["state"], "OK", "{document}");
    assert_eq!(document["product"]["version"], "7.2.4");
    let grade = document["grade"].as_str().unwrap();
    assert!(!grade.is_empty());
    assert!(text_of(&scan).contains(&format!("grade {grade}")), "{scan}");
    // The failed checks of this instance are the version headers the call waives: the
    // headline counts them (a submitter's waivers never dress it up) and names the grade with
    // the waiver beside it.
    let waived = document["submitterWaivers"]["waived"].as_array().unwrap();
    assert!(!waived.is_empty(), "{document}");
    assert_eq!(failed_checks(&scan), waived.len());
    let with = document["submitterWaivers"]["grade"].as_str().unwrap();
    assert!(
        text_of(&scan).contains(&format!(
            "; with the submitter's waivers (versionDisclosure): grade {with}, state OK"
        )),
        "{scan}"
    );
    assert!(fake.requests().iter().any(|r| r.path() == "/status.php"));

    let again = call(&web, &session, "get_scan_result", json!({"uuid": uuid}));
    assert_eq!(again["structuredContent"]["result"]["grade"], grade);

    let plan = call(&web, &session, "plan_remediation", json!({"uuid": uuid}));
    assert_eq!(plan["isError"], false, "{plan}");
    assert_eq!(
        plan["structuredContent"]["remediationPlan"],
        document["remediationPlan"]
    );
    assert!(plan["structuredContent"]["remediationPlan"]["groups"].is_array());
    assert!(text_of(&plan).starts_with("remediation plan for"), "{plan}");

    let exported = call(
        &web,
        &session,
        "export_scan",
        json!({"uuid": uuid, "format": "json"}),
    );
    assert_eq!(
        exported["structuredContent"]["mimeType"],
        "application/json"
    );
    let exported_document: Value = serde_json::from_str(&text_of(&exported)).unwrap();
    assert_eq!(exported_document["host"], document["host"]);
    let csv = call(
        &web,
        &session,
        "export_scan",
        json!({"uuid": uuid, "format": "csv"}),
    );
    assert!(
        text_of(&csv).starts_with("host,check,status,severity,"),
        "{csv}"
    );
    let pdf = call(
        &web,
        &session,
        "export_scan",
        json!({"uuid": uuid, "format": "pdf"}),
    );
    let resource = pdf["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "resource")
        .unwrap_or_else(|| panic!("no embedded resource: {pdf}"))["resource"]
        .clone();
    assert_eq!(resource["mimeType"], "application/pdf");
    let bytes = base64_decode(resource["blob"].as_str().unwrap());
    assert!(bytes.starts_with(b"%PDF-"));
    assert_eq!(pdf["structuredContent"]["bytes"], bytes.len());

    // The same target again: the cooldown, as a tool error that says when to retry.
    let cooled = call(
        &web,
        &session,
        "scan_instance",
        json!({"target_url": fake.host_port()}),
    );
    assert_eq!(cooled["isError"], true, "{cooled}");
    let said = text_of(&cooled);
    assert!(
        said.contains("429") && said.contains("retry after"),
        "{said}"
    );

    // Bad arguments and unknown tools are JSON-RPC errors.
    for params in [
        json!({"name": "scan_everything", "arguments": {}}),
        json!({"name": "scan_instance", "arguments": {}}),
        json!({"name": "scan_instance", "arguments": {"target_url": "a.example", "workers": 9}}),
        json!({"name": "scan_instance", "arguments": {"target_url": "ftp://a.example"}}),
        json!({"name": "export_scan", "arguments": {"uuid": uuid, "format": "xml"}}),
    ] {
        let answer = rpc(&web, &session, "tools/call", params.clone());
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
    }
    let unknown_uuid = call(
        &web,
        &session,
        "get_scan_result",
        json!({"uuid": "0f8fad5b-d9cb-469f-a165-70867728950e"}),
    );
    assert_eq!(unknown_uuid["isError"], true);
    assert!(text_of(&unknown_uuid).contains("404"), "{unknown_uuid}");

    // Prompts.
    let prompts = rpc(&web, &session, "prompts/list", json!({}));
    let names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["audit_instance", "review_transport_security"]);
    let audit = rpc(
        &web,
        &session,
        "prompts/get",
        json!({"name": "audit_instance", "arguments": {"target_url": "cloud.example.com"}}),
    );
    let text = audit["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("scan_instance") && text.contains("cloud.example.com"),
        "{text}"
    );
    assert!(text.contains("remediation plan"), "{text}");
    let tls = rpc(
        &web,
        &session,
        "prompts/get",
        json!({"name": "review_transport_security", "arguments": {"target_url": "a.example"}}),
    );
    assert!(
        tls["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("TLS handshake")
    );
    let missing = rpc(
        &web,
        &session,
        "prompts/get",
        json!({"name": "audit_instance"}),
    );
    assert_eq!(missing["error"]["code"], -32602);

    // JSON-RPC errors.
    let nothing = rpc(&web, &session, "resources/list", json!({}));
    assert_eq!(nothing["error"]["code"], -32601, "{nothing}");
    let malformed = post(&web, &[("Mcp-Session-Id", &session)], "{\"jsonrpc\": ");
    assert_eq!(malformed.status, 400);
    assert_eq!(malformed.json()["error"]["code"], -32700);
    assert_eq!(malformed.json()["id"], Value::Null);
    let batch = post(&web, &[("Mcp-Session-Id", &session)], &format!("[{ping}]"));
    assert_eq!(batch.json()["error"]["code"], -32600);
    let version = post(
        &web,
        &[("Mcp-Session-Id", &session)],
        r#"{"id": 3, "method": "ping"}"#,
    );
    assert_eq!(version.json()["error"]["code"], -32600);
    assert_eq!(version.json()["id"], 3);

    // A browser's GET, and pages of other sites.
    let get = web.get("/mcp", &[]);
    assert_eq!(get.status, 405);
    assert_eq!(get.header("allow"), Some("POST"));
    assert!(get.text().contains("POST JSON-RPC"), "{}", get.text());
    assert_eq!(get.text().trim().lines().count(), 1);
    let foreign = post(
        &web,
        &[
            ("Mcp-Session-Id", &session),
            ("Origin", "http://evil.example"),
        ],
        ping,
    );
    assert_eq!(foreign.status, 403, "{}", foreign.text());
    let own = post(
        &web,
        &[("Mcp-Session-Id", &session), ("Origin", &own_origin)],
        ping,
    );
    assert_eq!(own.status, 200, "{}", own.text());

    // Erase with the scan's erase key, then the uuid is gone; DELETE ends the session.
    let erased = call(
        &web,
        &session,
        "erase_instance_data",
        json!({"uuid": uuid, "erase_key": erase_key}),
    );
    assert_eq!(erased["structuredContent"]["erased"], 1, "{erased}");
    let gone = call(&web, &session, "plan_remediation", json!({"uuid": uuid}));
    assert_eq!(gone["isError"], true);
    let ended = web.request("DELETE", "/mcp", &[("Mcp-Session-Id", &session)], b"");
    assert_eq!(ended.status, 204, "{}", ended.text());
    assert_eq!(
        post(&web, &[("Mcp-Session-Id", &session)], ping).status,
        404
    );
    assert_eq!(web.get("/healthz", &[]).status, 200);

    web.terminate();
}

#[test]
fn the_guard_refuses_a_loopback_target_as_a_tool_error() {
    let dir = fresh_dir("web-mcp-guard");
    let web = start(&dir, &["--base-url", "https://scan.example.com/"]);
    let (_, session) = initialize(&web, "2025-11-25");
    let refused = call(
        &web,
        &session,
        "scan_instance",
        json!({"target_url": "127.0.0.1:9200"}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    let said = text_of(&refused);
    assert!(said.contains("400 target_refused"), "{said}");
    assert!(refused.get("structuredContent").is_none());
    // The base URL's origin is ours; the loopback origin of another port is not.
    let ping = r#"{"jsonrpc": "2.0", "id": 2, "method": "ping"}"#;
    let ours = post(
        &web,
        &[
            ("Mcp-Session-Id", &session),
            ("Origin", "https://scan.example.com"),
        ],
        ping,
    );
    assert_eq!(ours.status, 200, "{}", ours.text());
    let other_port = post(
        &web,
        &[
            ("Mcp-Session-Id", &session),
            ("Origin", "http://127.0.0.1:1"),
        ],
        ping,
    );
    assert_eq!(other_port.status, 403);
    web.terminate();
}

/// `--mcp-token` (here a secret reference to a file): /mcp answers 401 with
/// `WWW-Authenticate` without the token or with another, and works with it; the token is never
/// printed. A short token keeps the server from starting. `--no-mcp` removes the endpoint, its
/// entry in ai.json and the pages' browser tools.
#[test]
fn the_mcp_token_guards_the_endpoint_and_no_mcp_removes_it() {
    let token = "a-random-mcp-token-of-at-least-32-characters";
    let dir = fresh_dir("web-mcp-token");
    let file = dir.join("mcp-token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let reference = format!("file://{}", file.display());
    let web = start(&dir, &["--mcp-token", &reference]);
    let hello = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}},
    })
    .to_string();
    for presented in [None, Some("Bearer not-the-token"), Some("Basic eDp5")] {
        let headers: Vec<(&str, &str)> = presented
            .map(|p| ("Authorization", p))
            .into_iter()
            .collect();
        let refused = post(&web, &headers, &hello);
        assert_eq!(refused.status, 401, "{presented:?}: {}", refused.text());
        assert_eq!(
            refused.header("www-authenticate"),
            Some("Bearer realm=\"mcp\"")
        );
    }
    let bearer = format!("Bearer {token}");
    let accepted = post(&web, &[("Authorization", bearer.as_str())], &hello);
    assert_eq!(accepted.status, 200, "{}", accepted.text());
    // The rest of the public API stays open.
    assert_eq!(web.get("/healthz", &[]).status, 200);
    // With MCP on, the pages load the browser tools.
    let landing = web.get("/", &[]).text();
    assert!(landing.contains("src=\"/static/webmcp.js\""), "{landing}");
    assert_eq!(web.get("/static/webmcp.js", &[]).status, 200);
    web.terminate();
    let printed = web.stderr_lines().join("\n");
    assert!(!printed.contains(token), "{printed}");

    // A short token: one line, exit 3, the token not in it.
    let short_dir = fresh_dir("web-mcp-short-token");
    let refused = crate::support::service::ScannerService::start_with(
        std::path::Path::new(crate::support::web::SCANNER),
        &short_dir,
        &[
            "web",
            "--listen",
            "127.0.0.1:0",
            "--mcp-token",
            "short-token-1234",
        ],
        &[],
    )
    .err()
    .expect("a short MCP token is refused");
    assert_eq!(refused.code, Some(3));
    assert!(
        refused.stderr.contains("MCP token is shorter than 32"),
        "{}",
        refused.stderr
    );
    assert!(
        !refused.stderr.contains("short-token-1234"),
        "{}",
        refused.stderr
    );

    // --no-mcp: no endpoint, no entry in ai.json, no browser tools.
    let off = start(&fresh_dir("web-mcp-off"), &["--no-mcp"]);
    assert_eq!(post(&off, &[], &hello).status, 404);
    let ai = off.get("/.well-known/ai.json", &[]).json();
    assert!(ai.get("mcp").is_none(), "{ai}");
    assert!(ai["documents"]["openapi"].is_string());
    let landing = off.get("/", &[]).text();
    assert!(landing.contains("src=\"/static/app.js\""), "{landing}");
    assert!(!landing.contains("webmcp"), "{landing}");
    assert_eq!(off.get("/static/webmcp.js", &[]).status, 404);
}

/// `scan_instances`: two fakes, the first one again (named another way) and two malformed
/// targets in one call: both fakes are scanned once each and answered with grade and state, the
/// repeated one answers with the first one's scan, each malformed target is an entry refused in
/// its place (not a protocol error); a second call where every target is refused (cooldown) is
/// a tool error. Arguments that are no call (no list of 1 to 10, a bad waive) are JSON-RPC
/// errors.
#[test]
fn scan_instances_scans_several_targets_and_answers_each_refusal_in_place() {
    let first = FakeInstance::start(healthy("7.2.4"));
    let second = FakeInstance::start(healthy("7.2.4"));
    let dir = fresh_dir("web-mcp-scan-instances");
    let ca = first.ca_file().display().to_string();
    let web = start(&dir, &["--allow-private-targets", "--ca-file", &ca]);
    let (_, session) = initialize(&web, "2025-11-25");

    let listed = rpc(&web, &session, "tools/list", json!({}));
    let tool = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "scan_instances")
        .expect("scan_instances is listed")
        .clone();
    assert_eq!(tool["inputSchema"]["required"], json!(["target_urls"]));
    assert_eq!(
        tool["inputSchema"]["properties"]["target_urls"]["maxItems"],
        10
    );
    assert_eq!(tool["outputSchema"]["required"], json!(["results"]));

    // The first fake again as a URL: the same instance (the cooldown's key), scanned once.
    let targets = json!([
        first.host_port(),
        second.host_port(),
        first.base_url(),
        "ftp://a.example",
        7
    ]);
    let scanned = call(
        &web,
        &session,
        "scan_instances",
        json!({"target_urls": targets, "release_track": "production"}),
    );
    assert_eq!(scanned["isError"], false, "{scanned}");
    let results = scanned["structuredContent"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 5, "{scanned}");
    let mut uuids = Vec::new();
    for (i, entry) in results[..3].iter().enumerate() {
        assert_eq!(entry["target_url"], targets[i], "{entry}");
        assert_eq!(entry["status"], "completed", "{entry}");
        assert_eq!(entry["state"], "OK", "{entry}");
        assert!(!entry["grade"].as_str().unwrap().is_empty(), "{entry}");
        assert!(entry.get("error").is_none(), "{entry}");
        uuids.push(entry["uuid"].as_str().unwrap().to_string());
    }
    assert_ne!(uuids[0], uuids[1]);
    assert_eq!(
        uuids[2], uuids[0],
        "the repeated target answers with the first scan"
    );
    assert_eq!(results[2]["same_as"], 0, "{}", results[2]);
    assert!(results[0].get("same_as").is_none(), "{}", results[0]);
    // Scanned once: the first fake saw what the second saw, request for request.
    let seen = |fake: &FakeInstance| fake.requests().len();
    assert!(seen(&second) > 0);
    assert_eq!(seen(&first), seen(&second));
    for (entry, shown) in results[3..].iter().zip(["ftp://a.example", "7"]) {
        assert_eq!(entry["target_url"], shown, "{entry}");
        assert_eq!(entry["status"], "refused", "{entry}");
        assert!(entry.get("uuid").is_none(), "{entry}");
        let error = entry["error"].as_str().unwrap();
        assert!(
            error.contains("400 invalid_field") && error.contains("do not retry unchanged"),
            "{error}"
        );
    }
    let text = text_of(&scanned);
    assert!(
        text.starts_with("3 of 5 target(s) scanned (2 scan(s))"),
        "{text}"
    );
    assert!(text.contains("(the same instance as 127.0.0.1:"), "{text}");
    // Each uuid is a scan like scan_instance's.
    let one = call(&web, &session, "get_scan_result", json!({"uuid": uuids[1]}));
    assert_eq!(
        one["structuredContent"]["result"]["grade"],
        results[1]["grade"]
    );

    // Every target refused (both cooled down): a tool error, each entry saying why.
    let again = call(
        &web,
        &session,
        "scan_instances",
        json!({"target_urls": [first.host_port(), second.host_port()]}),
    );
    assert_eq!(again["isError"], true, "{again}");
    assert!(
        text_of(&again).starts_with("every target was refused"),
        "{again}"
    );
    for entry in again["structuredContent"]["results"].as_array().unwrap() {
        assert_eq!(entry["status"], "refused", "{entry}");
        assert!(entry["error"].as_str().unwrap().contains("429"), "{entry}");
    }

    // Arguments that are no submission: JSON-RPC errors, nothing submitted.
    let eleven: Vec<String> = (0..11).map(|i| format!("h{i}.example")).collect();
    for arguments in [
        json!({}),
        json!({"target_urls": []}),
        json!({"target_urls": eleven}),
        json!({"target_urls": "a.example"}),
        json!({"target_urls": ["a.example"], "target_url": "b.example"}),
        json!({"target_urls": ["a.example"], "release_track": "nightly-of-doom"}),
        // A malformed argument of the call is the call's, however malformed its targets.
        json!({"target_urls": ["ftp://b.example", 7], "waive": [1]}),
    ] {
        let answer = rpc(
            &web,
            &session,
            "tools/call",
            json!({"name": "scan_instances", "arguments": arguments}),
        );
        assert_eq!(answer["error"]["code"], -32602, "{arguments}: {answer}");
    }
    web.terminate();
}

/// The number of failed, unwaived checks of a scan tool's result, checked against what its
/// text summary says.
fn failed_checks(result: &Value) -> usize {
    let failed = result["structuredContent"]["result"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "failed" && f["ignored"] == false)
        .count();
    let said = format!(", {failed} failed check(s),");
    assert!(text_of(result).contains(&said), "{said}: {result}");
    failed
}

/// The events of an SSE body: each `data:` of an `event: message`, as JSON.
fn sse_events(body: &str) -> Vec<Value> {
    assert!(body.ends_with("\n\n"), "{body:?}");
    body.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|event| {
            let mut lines = event.lines();
            assert_eq!(lines.next(), Some("event: message"), "{event:?}");
            let data = lines
                .next()
                .and_then(|l| l.strip_prefix("data: "))
                .unwrap_or_else(|| panic!("no data: {event:?}"));
            assert_eq!(lines.next(), None, "{event:?}");
            serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}"))
        })
        .collect()
}

/// A `tools/call` with `_meta.progressToken` from a client that accepts SSE: progress
/// notifications with the token and increasing progress (queued first, completed last), then
/// the response as the last event. Without SSE in `Accept`, or without a token, plain JSON.
#[test]
fn a_progress_token_gets_progress_notifications_over_sse() {
    let fake = FakeInstance::start(healthy("7.2.4"));
    let dir = fresh_dir("web-mcp-sse");
    let ca = fake.ca_file().display().to_string();
    let web = start(&dir, &["--allow-private-targets", "--ca-file", &ca]);
    let (_, session) = initialize(&web, "2025-06-18");

    let body = json!({
        "jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
        "params": {
            "name": "scan_instance",
            "arguments": {"target_url": fake.host_port()},
            "_meta": {"progressToken": "tok-42"},
        },
    });
    let answer = post(&web, &[("Mcp-Session-Id", &session)], &body.to_string());
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let events = sse_events(&answer.text());
    let (last, notes) = events.split_last().unwrap();
    assert!(notes.len() >= 2, "{events:?}");
    let mut before = -1.0;
    for note in notes {
        assert_eq!(note["jsonrpc"], "2.0", "{note}");
        assert_eq!(note["method"], "notifications/progress", "{note}");
        assert!(note.get("id").is_none(), "{note}");
        let params = &note["params"];
        assert_eq!(params["progressToken"], "tok-42", "{note}");
        let progress = params["progress"].as_f64().unwrap();
        assert!(progress > before, "{events:?}");
        assert!(progress <= params["total"].as_f64().unwrap(), "{note}");
        before = progress;
        let message = params["message"].as_str().unwrap();
        assert!(
            ["queued", "running", "completed"].contains(&message),
            "{note}"
        );
    }
    assert_eq!(notes[0]["params"]["message"], "queued");
    let final_note = &notes[notes.len() - 1]["params"];
    assert_eq!(final_note["message"], "completed");
    assert_eq!(final_note["progress"], final_note["total"]);
    assert_eq!(last["jsonrpc"], "2.0");
    assert_eq!(last["id"], "call-1", "{last}");
    assert_eq!(last["result"]["isError"], false, "{last}");
    assert_eq!(last["result"]["structuredContent"]["status"], "completed");
    // Without waivers the version headers count: the summary says so.
    assert!(failed_checks(&last["result"]) > 0, "{last}");
    let uuid = last["result"]["structuredContent"]["uuid"]
        .as_str()
        .unwrap()
        .to_string();

    // A refusal over SSE: no progress, the tool error as the only event.
    let refused = post(&web, &[("Mcp-Session-Id", &session)], &body.to_string());
    assert_eq!(refused.header("content-type"), Some("text/event-stream"));
    let events = sse_events(&refused.text());
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["result"]["isError"], true, "{events:?}");

    // A client that accepts only JSON gets JSON, token or not.
    let lookup = json!({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "get_scan_result", "arguments": {"uuid": uuid},
                   "_meta": {"progressToken": 5}},
    });
    let plain = web.request(
        "POST",
        "/mcp",
        &[
            JSON,
            ("Accept", "application/json"),
            ("Mcp-Session-Id", &session),
        ],
        lookup.to_string().as_bytes(),
    );
    assert_eq!(plain.header("content-type"), Some("application/json"));
    assert_eq!(plain.json()["result"]["structuredContent"]["uuid"], uuid);
    // Without a token, JSON even when SSE is accepted.
    let no_token = rpc(
        &web,
        &session,
        "tools/call",
        json!({"name": "get_scan_result", "arguments": {"uuid": uuid}}),
    );
    assert_eq!(no_token["result"]["structuredContent"]["uuid"], uuid);
    web.terminate();
}

/// A target that accepts connections and holds them, unanswered, until released; after
/// that it refuses every connection. A scan of it stays running as long as the test wants.
struct HeldTarget {
    addr: std::net::SocketAddr,
    held: std::sync::Arc<std::sync::Mutex<Option<Vec<std::net::TcpStream>>>>,
    /// One message per connection taken.
    arrived: std::sync::mpsc::Receiver<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HeldTarget {
    fn start() -> HeldTarget {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let held = std::sync::Arc::new(std::sync::Mutex::new(Some(Vec::new())));
        let keep = held.clone();
        let (arrive, arrived) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                match keep.lock().unwrap().as_mut() {
                    Some(streams) => streams.extend(stream.ok()),
                    None => return, // released: the listener closes with this thread
                }
                let _ = arrive.send(());
            }
        });
        HeldTarget {
            addr,
            held,
            arrived,
            thread: Some(thread),
        }
    }

    /// Blocks until the scan has connected (a bounded wait: the scan starts at once).
    fn wait_for_connection(&self) {
        self.arrived
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the scan connects to the target");
    }

    /// Closes every held connection and the listener; answers how many were held.
    fn release(&mut self) -> usize {
        let held = self.held.lock().unwrap().take().map_or(0, |h| h.len());
        let _ = std::net::TcpStream::connect(self.addr); // wakes the accept loop
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        held
    }
}

/// Progress is streamed as it happens: with the scan held inside the target, the client
/// already reads the queued and running notifications; the response follows only once the
/// target lets the scan finish.
#[test]
fn progress_notifications_arrive_while_the_scan_still_runs() {
    use std::io::{Read, Write};
    let mut target = HeldTarget::start();
    let dir = fresh_dir("web-mcp-stream");
    let web = start(&dir, &["--allow-private-targets", "--timeout", "60"]);
    let (_, session) = initialize(&web, "2025-11-25");

    let body = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {
            "name": "scan_instance",
            "arguments": {"target_url": target.addr.to_string()},
            "_meta": {"progressToken": "live"},
        },
    })
    .to_string();
    let mut client = std::net::TcpStream::connect(web.addr).unwrap();
    client
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    write!(
        client,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        web.addr,
        body.len()
    )
    .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let running = |seen: &[u8]| {
        let text = String::from_utf8_lossy(seen);
        text.contains("\"message\":\"running\"")
    };
    while !running(&seen) {
        let n = client.read(&mut buf).unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    let so_far = String::from_utf8_lossy(&seen).into_owned();
    let (head, events) = so_far.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    assert!(head.contains("Content-Type: text/event-stream"), "{head}");
    assert!(!head.contains("Content-Length"), "{head}");
    assert!(events.contains("\"message\":\"queued\""), "{events}");
    assert!(!events.contains("\"id\":3"), "no response yet: {events}");

    // The scan cannot end while the target holds it: the response is still to come.
    target.wait_for_connection();
    assert!(target.release() > 0);
    let mut rest = String::new();
    client.read_to_string(&mut rest).unwrap();
    let all = sse_events(&format!("{events}{rest}"));
    let last = all.last().unwrap();
    assert_eq!(last["id"], 3, "{all:?}");
    assert_eq!(last["result"]["structuredContent"]["status"], "completed");
    let done = &all[all.len() - 2]["params"];
    assert_eq!(done["message"], "completed", "{all:?}");
    assert_eq!(done["progress"], done["total"]);
    web.terminate();
}
