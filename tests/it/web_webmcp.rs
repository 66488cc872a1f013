//! The pages' WebMCP tools (`/static/webmcp.js`) in a real headless Chromium, driven over the
//! W3C WebDriver protocol by Debian's `chromedriver` (package chromium-driver, installed by
//! `make deps`) on a free loopback port. A `navigator.modelContext` stand-in, put in place
//! before the page's scripts run (`Page.addScriptToEvaluateOnNewDocument` through chromedriver's
//! CDP bridge), records what the pages register; the test then calls those tools as an agent
//! would: a scan of a fake instance from the landing page, the result and the exports from the
//! result page. Without the stand-in the pages register nothing and the console stays clean.

use crate::support::web::fresh_dir;
use crate::support::{FakeInstance, InstanceConfig};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Collects script errors and unhandled rejections into `window.__webmcpTest.errors`.
const COLLECTOR: &str = r#"
window.__webmcpTest = { tools: {}, errors: [], provided: 0 };
window.addEventListener("error", function (e) { window.__webmcpTest.errors.push("error: " + e.message); });
window.addEventListener("unhandledrejection", function (e) {
  window.__webmcpTest.errors.push("unhandled rejection: " + e.reason);
});
"#;

/// A `navigator.modelContext` with the draft's `registerTool`.
const REGISTER_TOOL: &str = r#"
Object.defineProperty(navigator, "modelContext", { configurable: true, value: {
  registerTool: function (tool) { window.__webmcpTest.tools[tool.name] = tool; },
  unregisterTool: function (name) { delete window.__webmcpTest.tools[name]; }
} });
"#;

/// A `navigator.modelContext` of the earlier draft: `provideContext({tools})` only.
const PROVIDE_CONTEXT: &str = r#"
Object.defineProperty(navigator, "modelContext", { configurable: true, value: {
  provideContext: function (context) {
    window.__webmcpTest.provided += 1;
    (context.tools || []).forEach(function (tool) { window.__webmcpTest.tools[tool.name] = tool; });
  }
} });
"#;

const LIST_TOOLS: &str = r#"
return Object.keys(window.__webmcpTest.tools).sort().map(function (name) {
  var tool = window.__webmcpTest.tools[name];
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema,
           execute: typeof tool.execute };
});
"#;

const CALL_TOOL: &str = r#"
var name = arguments[0], args = arguments[1], done = arguments[arguments.length - 1];
var tool = window.__webmcpTest.tools[name];
if (!tool) { done({ missing: name }); return; }
var client = { requestUserInteraction: function (callback) { return callback(); } };
Promise.resolve(tool.execute(args, client)).then(
  function (result) { done({ result: result }); },
  function (e) { done({ thrown: String(e) }); });
"#;

/// One HTTP/1.1 exchange with chromedriver; the status and the JSON body.
fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut stream = TcpStream::connect(addr).expect("connect to chromedriver");
    stream
        .set_read_timeout(Some(Duration::from_secs(300)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer from chromedriver: {line:?}"));
    let mut length = None;
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut raw = Vec::new();
    match length {
        Some(n) => {
            raw.resize(n, 0);
            reader.read_exact(&mut raw).unwrap();
        }
        None => {
            reader.read_to_end(&mut raw).unwrap();
        }
    }
    let value = if raw.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&raw).unwrap_or_else(|e| {
            panic!(
                "chromedriver answered no JSON ({e}): {}",
                String::from_utf8_lossy(&raw)
            )
        })
    };
    (status, value)
}

/// `chromedriver` on a free loopback port; killed on drop.
struct Driver {
    child: Child,
    addr: SocketAddr,
}

impl Driver {
    fn start(dir: &Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = crate::support::on_the_real_clock(&mut Command::new("chromedriver"))
            .arg(format!("--port={port}"))
            .arg(format!(
                "--log-path={}",
                dir.join("chromedriver.log").display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver runs: run `make deps` (Debian package chromium-driver)");
        let driver = Driver {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(driver.addr).is_ok() {
                let (status, value) = http(driver.addr, "GET", "/status", None);
                if status == 200 && value["value"]["ready"] == true {
                    return driver;
                }
            }
            assert!(Instant::now() < until, "chromedriver did not get ready");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A headless Chromium session with its own profile under `dir`.
    fn session(&self, dir: &Path) -> Session {
        let profile = dir.join("chromium-profile");
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                         format!("--user-data-dir={}", profile.display())],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let (status, value) = http(self.addr, "POST", "/session", Some(&capabilities));
        assert_eq!(status, 200, "no session: {value}");
        let session = Session {
            addr: self.addr,
            id: value["value"]["sessionId"].as_str().unwrap().to_string(),
        };
        session.post("/timeouts", json!({"script": 240_000, "pageLoad": 60_000}));
        session
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Session {
    addr: SocketAddr,
    id: String,
}

impl Session {
    fn post(&self, path: &str, body: Value) -> Value {
        let path = format!("/session/{}{path}", self.id);
        let (status, value) = http(self.addr, "POST", &path, Some(&body));
        assert_eq!(status, 200, "{path}: {value}");
        value["value"].clone()
    }

    fn navigate(&self, url: &str) {
        self.post("/url", json!({"url": url}));
    }

    /// Runs `source` in every new document before its own scripts; the script's identifier.
    fn before_scripts(&self, source: &str) -> String {
        let value = self.post(
            "/goog/cdp/execute",
            json!({"cmd": "Page.addScriptToEvaluateOnNewDocument", "params": {"source": source}}),
        );
        value["identifier"].as_str().unwrap().to_string()
    }

    fn forget_script(&self, identifier: &str) {
        self.post(
            "/goog/cdp/execute",
            json!({"cmd": "Page.removeScriptToEvaluateOnNewDocument",
                   "params": {"identifier": identifier}}),
        );
    }

    fn run(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": args}))
    }

    fn tools(&self) -> Vec<String> {
        let tools = self.run(LIST_TOOLS, json!([]));
        for tool in tools.as_array().unwrap() {
            assert_eq!(tool["execute"], "function", "{tool}");
            assert!(
                tool["description"].as_str().unwrap_or_default().len() > 20,
                "{tool}"
            );
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        }
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// Calls a registered tool as an agent would; its result (`{content, structuredContent?}`).
    fn call(&self, name: &str, args: Value) -> Value {
        let answer = self.post(
            "/execute/async",
            json!({"script": CALL_TOOL, "args": [name, args]}),
        );
        assert!(answer.get("result").is_some(), "{name}: {answer}");
        let result = answer["result"].clone();
        assert_eq!(result["content"][0]["type"], "text", "{name}: {result}");
        result
    }

    /// The browser console's entries since the last call.
    fn console(&self) -> Vec<Value> {
        self.post("/se/log", json!({"type": "browser"}))
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    fn errors(&self) -> Vec<Value> {
        self.run("return window.__webmcpTest.errors;", json!([]))
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = http(self.addr, "DELETE", &format!("/session/{}", self.id), None);
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn the_pages_offer_their_webmcp_tools_to_an_agent_in_the_browser() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let dir = fresh_dir("web-webmcp");
    let ca = fake.ca_file().display().to_string();
    let web = crate::support::web::start(&dir, &["--allow-private-targets", "--ca-file", &ca]);
    let base = format!("http://{}", web.addr);

    // A static asset under the page's policy, included by every page.
    let script = web.get("/static/webmcp.js", &[]);
    assert_eq!(script.status, 200);
    assert_eq!(
        script.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert!(script.text().contains("modelContext"));
    assert!(
        web.get("/", &[])
            .text()
            .contains("<script src=\"/static/webmcp.js\" defer></script>")
    );

    let driver = Driver::start(&dir);
    let browser = driver.session(&dir);
    browser.before_scripts(COLLECTOR);
    let stand_in = browser.before_scripts(REGISTER_TOOL);

    // The landing page: one tool, which submits, waits and answers with the completed result.
    browser.navigate(&format!("{base}/"));
    assert_eq!(browser.tools(), ["scan_storage_security"]);
    let scanned = browser.call(
        "scan_storage_security",
        json!({"target_url": fake.host_port()}),
    );
    assert_ne!(scanned["isError"], true, "{scanned}");
    let uuid = scanned["structuredContent"]["uuid"]
        .as_str()
        .unwrap_or_else(|| panic!("{scanned}"))
        .to_string();
    let api = web.get(&format!("/api/scans/{uuid}"), &[]).json();
    assert_eq!(api["status"], "completed");
    let grade = api["result"]["grade"].as_str().unwrap().to_string();
    assert_eq!(scanned["structuredContent"]["status"], "completed");
    assert_eq!(scanned["structuredContent"]["result"]["grade"], grade);
    assert!(
        text(&scanned).contains(&format!("grade {grade} ")),
        "{}",
        text(&scanned)
    );
    assert!(text(&scanned).contains(&format!("/scans/{uuid}")));

    // The same target again within five minutes: the API's limit answers, as a tool error.
    let again = browser.call(
        "scan_storage_security",
        json!({"target_url": fake.host_port()}),
    );
    assert_eq!(again["isError"], true, "{again}");
    assert!(text(&again).contains("429"), "{}", text(&again));
    let empty = browser.call("scan_storage_security", json!({}));
    assert_eq!(empty["isError"], true, "{empty}");

    // The result page: its scan's result and exports, and nothing to submit.
    browser.navigate(&format!("{base}/scans/{uuid}"));
    assert_eq!(browser.tools(), ["export_scan_report", "get_scan_result"]);
    let result = browser.call("get_scan_result", json!({}));
    assert_eq!(result["structuredContent"]["uuid"], uuid.as_str());
    assert_eq!(result["structuredContent"]["result"], api["result"]);
    let exported = browser.call("export_scan_report", json!({"format": "json"}));
    let document: Value = serde_json::from_str(text(&exported)).unwrap();
    assert_eq!(document, api["result"]);
    let csv = browser.call("export_scan_report", json!({"format": "csv"}));
    assert!(text(&csv).contains("demoUsers"), "{}", text(&csv));
    let pdf = browser.call("export_scan_report", json!({"format": "pdf"}));
    assert_eq!(pdf["content"][1]["resource"]["mimeType"], "application/pdf");
    assert!(
        pdf["content"][1]["resource"]["blob"]
            .as_str()
            .unwrap_or_default()
            .starts_with("JVBERi0"), // %PDF-
        "{pdf}"
    );
    let unknown = browser.call("export_scan_report", json!({"format": "xlsx"}));
    assert_eq!(unknown["isError"], true, "{unknown}");
    assert!(browser.errors().is_empty(), "{:?}", browser.errors());

    // The earlier draft's provideContext({tools}) is used when registerTool is missing.
    browser.forget_script(&stand_in);
    let earlier = browser.before_scripts(PROVIDE_CONTEXT);
    browser.navigate(&format!("{base}/scans/{uuid}"));
    assert_eq!(browser.tools(), ["export_scan_report", "get_scan_result"]);
    assert_eq!(
        browser.run("return window.__webmcpTest.provided;", json!([])),
        1
    );
    let result = browser.call("get_scan_result", json!({}));
    assert_eq!(result["structuredContent"]["result"]["grade"], grade);

    // Without navigator.modelContext: no tool, no script error, nothing on the console.
    browser.forget_script(&earlier);
    // The refusals above logged their 429: the console is read.
    let earlier_console = browser.console();
    assert!(
        earlier_console
            .iter()
            .any(|e| e["message"].as_str().unwrap_or_default().contains("429")),
        "{earlier_console:?}"
    );
    for path in ["/".to_string(), format!("/scans/{uuid}")] {
        browser.navigate(&format!("{base}{path}"));
        assert_eq!(
            browser.run("return 'modelContext' in navigator;", json!([])),
            false,
            "this Chromium offers WebMCP itself"
        );
        assert!(browser.tools().is_empty(), "{path}");
        assert!(
            browser.errors().is_empty(),
            "{path}: {:?}",
            browser.errors()
        );
        let console: Vec<Value> = browser
            .console()
            .into_iter()
            .filter(|entry| {
                entry["level"] != "INFO"
                    && entry["level"] != "DEBUG"
                    && !entry["message"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("favicon.ico")
            })
            .collect();
        assert!(console.is_empty(), "{path}: {console:?}");
    }
}
