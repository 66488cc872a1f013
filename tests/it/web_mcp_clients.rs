//! `POST /mcp` of `check-storage-scanner web` with real MCP clients: the official Python SDK
//! (PyPI `mcp`) and the official TypeScript SDK (npm `@modelcontextprotocol/sdk`), both
//! installed by `make deps` (packaging/ci-deps.sh). Each client (tests/fixtures/mcp/) connects
//! over streamable HTTP, lists the tools and prompts, scans its own fake instance on loopback
//! with `scan_instance` and prints a JSON summary that is checked here.

use crate::support::FakeInstance;
use crate::support::plugin::healthy;
use crate::support::web::{fresh_dir, start};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Where packaging/ci-deps.sh installs `@modelcontextprotocol/sdk`.
const NODE_DIR: &str = "/opt/check-storage-security-test-node";

const TOOLS: [&str; 6] = [
    "scan_instance",
    "scan_instances",
    "get_scan_result",
    "plan_remediation",
    "export_scan",
    "erase_instance_data",
];
const PROMPTS: [&str; 2] = ["audit_instance", "review_transport_security"];

/// Runs `program script url target` and parses the one JSON line it prints; panics with its
/// output when it fails.
fn run_client(program: &str, script: &str, url: &str, target: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let output = Command::new(program)
        .arg(&script)
        .arg(url)
        .arg(target)
        .env("MCP_SDK_DIR", NODE_DIR)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (make deps installs it): {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{program} {} failed ({}; make deps installs the SDK)\nstdout: {stdout}\nstderr: {stderr}",
        script.display(),
        output.status
    );
    if !stderr.trim().is_empty() {
        eprintln!("{program} said on stderr:\n{stderr}");
    }
    let line = stdout.lines().rev().find(|l| l.starts_with('{'));
    serde_json::from_str(line.unwrap_or_default()).unwrap_or_else(|e| {
        panic!("{program}: no JSON summary ({e})\nstdout: {stdout}\nstderr: {stderr}")
    })
}

fn assert_summary(summary: &Value) {
    eprintln!("{summary}");
    let names = |key: &str| -> Vec<String> {
        summary[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: {summary}"))
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("tools"), TOOLS, "{summary}");
    assert_eq!(names("prompts"), PROMPTS, "{summary}");
    assert_eq!(summary["isError"], false, "{summary}");
    assert_eq!(summary["status"], "completed", "{summary}");
    let grade = summary["grade"]
        .as_str()
        .unwrap_or_else(|| panic!("no grade: {summary}"));
    assert!(!grade.is_empty(), "{summary}");
    let text = summary["text"].as_str().unwrap_or_default();
    assert!(text.contains(&format!("grade {grade}")), "{summary}");
    // The SDK's progress callback saw the scan go from queued to completed, in order.
    let progress = summary["progress"]
        .as_array()
        .unwrap_or_else(|| panic!("no progress: {summary}"));
    let messages: Vec<&str> = progress.iter().filter_map(|p| p[2].as_str()).collect();
    assert_eq!(messages.first(), Some(&"queued"), "{summary}");
    assert_eq!(messages.last(), Some(&"completed"), "{summary}");
    let done: Vec<f64> = progress.iter().filter_map(|p| p[0].as_f64()).collect();
    assert!(done.windows(2).all(|w| w[0] < w[1]), "{summary}");
    assert_eq!(progress.last().unwrap()[1].as_f64(), done.last().copied());
}

#[test]
fn the_python_and_typescript_sdks_list_and_scan_over_streamable_http() {
    let python_fake = FakeInstance::start(healthy("7.2.4"));
    let node_fake = FakeInstance::start(healthy("7.2.4"));
    let dir = fresh_dir("web-mcp-clients");
    let ca = python_fake.ca_file().display().to_string();
    let web = start(&dir, &["--allow-private-targets", "--ca-file", &ca]);
    let url = format!("http://{}/mcp", web.addr);

    let python = run_client(
        "python3",
        "tests/fixtures/mcp/client.py",
        &url,
        &python_fake.host_port(),
    );
    assert_summary(&python);
    assert!(
        python_fake
            .requests()
            .iter()
            .any(|r| r.path() == "/status.php")
    );

    let node = run_client(
        "node",
        "tests/fixtures/mcp/client.mjs",
        &url,
        &node_fake.host_port(),
    );
    assert_summary(&node);
    assert!(
        node_fake
            .requests()
            .iter()
            .any(|r| r.path() == "/status.php")
    );

    assert_eq!(web.get("/healthz", &[]).status, 200);
    web.terminate();
}
