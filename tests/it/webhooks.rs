//! Webhook notifications (spec "Events"): every body format parsed back from a loopback
//! receiver, extra headers, the `--webhook-on` levels, retries, redirects, the destination
//! guard and the proxy rule, and the `pushtopic` topic check at start.
//!
//! Two kinds of tests:
//! - `plugin_*`: the real binary scanning fake instances and notifying a loopback receiver.
//!   They need the run to call `notify::wanted`/`notify::deliver` per host, set
//!   `result.webhook` and print `Webhook delivery failed` (the integration in `run.rs`).
//! - `post_*`: `storage_security::notify::post` against the receiver, in process.
//!
//! No test sleeps: retries run with `--backoff-factor 0`, the only waits are the plugin's own
//! short `--webhook-timeout` against a receiver that never answers.

use crate::support::{ConnectProxy, FakeInstance, InstanceConfig};
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use storage_security::notify::{self, BodyFormat, NotifyOn, WebhookSettings};

const NOW: &str = crate::support::PINNED_NOW;
const FAILED: &str = "Webhook delivery failed";

// --- The receiver --------------------------------------------------------------------------

/// One request as the receiver saw it.
#[derive(Clone, Debug)]
struct Received {
    method: String,
    /// Path and query, as sent.
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.header_all(name).first().copied()
    }

    fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// How the receiver answers a request.
#[derive(Clone, Debug)]
enum Answer {
    Status(u16),
    /// 302 with this `Location`.
    Redirect(String),
    /// Never answers (the request is held until the receiver stops).
    Hang,
}

/// A loopback webhook receiver: answers the n-th request with the n-th answer (the last one
/// repeats) and records method, path, headers and body of each.
struct Receiver {
    server: Arc<tiny_http::Server>,
    port: u16,
    seen: Arc<Mutex<Vec<Received>>>,
    worker: Option<thread::JoinHandle<()>>,
}

impl Receiver {
    fn start(answers: Vec<Answer>) -> Receiver {
        assert!(!answers.is_empty());
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind receiver"));
        let port = server.server_addr().to_ip().expect("ip listener").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (srv, record) = (server.clone(), seen.clone());
        let worker = thread::spawn(move || {
            let mut held = Vec::new();
            for (index, mut request) in srv.incoming_requests().enumerate() {
                let mut body = Vec::new();
                let _ = request
                    .as_reader()
                    .take(4 * 1024 * 1024)
                    .read_to_end(&mut body);
                record.lock().unwrap().push(Received {
                    method: request.method().as_str().to_string(),
                    path: request.url().to_string(),
                    headers: request
                        .headers()
                        .iter()
                        .map(|h| (h.field.as_str().to_string(), h.value.to_string()))
                        .collect(),
                    body,
                });
                match &answers[index.min(answers.len() - 1)] {
                    Answer::Status(code) => {
                        let _ = request.respond(
                            tiny_http::Response::from_string("{}").with_status_code(*code),
                        );
                    }
                    Answer::Redirect(location) => {
                        let header =
                            tiny_http::Header::from_bytes("Location", location.as_bytes()).unwrap();
                        let _ =
                            request.respond(tiny_http::Response::empty(302).with_header(header));
                    }
                    Answer::Hang => held.push(request),
                }
            }
        });
        Receiver {
            server,
            port,
            seen,
            worker: Some(worker),
        }
    }

    fn ok() -> Receiver {
        Receiver::start(vec![Answer::Status(200)])
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn requests(&self) -> Vec<Received> {
        self.seen.lock().unwrap().clone()
    }

    /// The only request; fails when there was not exactly one.
    fn single(&self) -> Received {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "{requests:#?}");
        requests.into_iter().next().unwrap()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

// --- The plugin ----------------------------------------------------------------------------

struct Run {
    stdout: String,
    stderr: String,
    code: i32,
}

impl Run {
    fn line(&self, n: usize) -> &str {
        self.stdout.lines().nth(n).unwrap_or("")
    }

    fn has_line(&self, line: &str) -> bool {
        self.stdout.lines().any(|l| l == line)
    }

    fn failed_deliveries(&self) -> usize {
        self.stdout.lines().filter(|l| *l == FAILED).count()
    }

    fn show(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("webhooks-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the plugin against `hosts` with a cleared environment, trusting the fake instances'
/// CA, bundled update data, no debug ports and no waiting between retries.
fn plugin(name: &str, hosts: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let dir = scratch(name);
    let ca = crate::support::certs::ca_file().display().to_string();
    let mut args = vec![
        "-H",
        hosts,
        "--ca-file",
        &ca,
        "--update-source",
        "bundled",
        "--backoff-factor",
        "0",
        "--no-debug-ports",
    ];
    args.extend(extra);
    let mut command = Command::new(env!("CARGO_BIN_EXE_check-storage-security"));
    command
        .args(&args)
        .env_clear()
        .env("HOME", &dir)
        .env("COS_NOW", NOW)
        .current_dir(&dir);
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().expect("run the plugin");
    Run {
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().expect("exit code"),
    }
}

/// Scans one fake instance, notifying `url`, with private receivers allowed.
fn notify_run(name: &str, fake: &FakeInstance, url: &str, extra: &[&str]) -> Run {
    let mut args = vec!["--webhook-url", url, "--allow-private-webhooks"];
    args.extend(extra);
    plugin(name, &fake.host_port(), &args, &[])
}

/// An instance without the weaknesses of a default install (demo accounts, CORS for any origin,
/// version headers): the version knowledge alone decides.
fn healthy() -> InstanceConfig {
    InstanceConfig::default()
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
        .remove_header("X-Web-Version")
        .remove_header("X-Idp-Version")
        .remove_header("X-Graph-Version")
}

/// OK: the current lts release, rating A+.
fn ok_instance() -> FakeInstance {
    FakeInstance::start(healthy().version("4.0.8"))
}

/// CRITICAL: an end-of-life release line, rating F.
fn critical_instance() -> FakeInstance {
    FakeInstance::start(healthy().version("7.3.0"))
}

/// WARNING: a default install (demo accounts cap the rating at D).
fn warning_instance() -> FakeInstance {
    FakeInstance::start(InstanceConfig::default().version("8.1.0"))
}

const EOL_LINE: &str = "CRITICAL: OpenCloud 7.3.0 is end of life";

// --- Body formats through the plugin -------------------------------------------------------

#[test]
fn plugin_generic_body_is_the_per_host_result_document() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    let run = notify_run(
        "generic",
        &fake,
        &receiver.url("/hooks/storage"),
        &["--format", "json"],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    let request = receiver.single();
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/hooks/storage");
    assert_eq!(request.header_all("Content-Type"), ["application/json"]);
    let mut body = request.json();
    assert_eq!(body["host"], fake.host_port().as_str());
    assert_eq!(body["state"], "CRITICAL");
    assert_eq!(body["grade"], "F");
    assert_eq!(body["product"]["version"], "7.3.0");
    assert!(
        body.as_object().unwrap().contains_key("policy"),
        "the policy verdict is a member of the generic body: {body:#}"
    );
    // The same document as the JSON output of the run, which adds the delivery outcome.
    let mut printed: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    let printed = printed.as_array_mut().expect("one array")[0].take();
    assert_eq!(
        printed["webhook"],
        serde_json::json!({ "delivered": true, "error": null })
    );
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("webhook");
        v
    };
    body = strip(body);
    assert_eq!(body, strip(printed));
}

#[test]
fn plugin_chatblocks_body_is_a_block_message() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    let run = notify_run(
        "chatblocks",
        &fake,
        &receiver.url("/services/T0/B0/x"),
        &["--webhook-format", "chatblocks"],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(run.line(0).starts_with(EOL_LINE), "{}", run.show());
    assert!(!run.has_line(FAILED), "{}", run.show());
    let request = receiver.single();
    assert_eq!(request.path, "/services/T0/B0/x");
    let body = request.json();
    let host = fake.host_port();
    assert!(
        body["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!("CRITICAL: {host}")),
        "{body:#}"
    );
    let blocks = body["blocks"].as_array().expect("blocks");
    let kinds: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["header", "section", "context"], "{body:#}");
    assert_eq!(
        blocks[0]["text"]["text"],
        format!("CRITICAL: {host}").as_str()
    );
    let fields: Vec<&str> = blocks[1]["fields"]
        .as_array()
        .expect("section fields")
        .iter()
        .map(|f| f["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "State: CRITICAL".to_string(),
            format!("Host: {host}"),
            "Grade: F".to_string(),
            "Version: OpenCloud 7.3.0".to_string(),
        ]
    );
    assert!(
        blocks[2]["elements"][0]["text"]
            .as_str()
            .unwrap()
            .contains(NOW),
        "{body:#}"
    );
}

#[test]
fn plugin_chatembed_body_is_an_embed_coloured_by_state() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    let run = notify_run(
        "chatembed",
        &fake,
        &receiver.url("/api/webhooks/1/abc"),
        &["--webhook-format", "chatembed"],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    let body = receiver.single().json();
    let host = fake.host_port();
    assert!(
        body["content"]
            .as_str()
            .unwrap()
            .starts_with(&format!("CRITICAL: {host}")),
        "{body:#}"
    );
    let embeds = body["embeds"].as_array().expect("embeds");
    assert_eq!(embeds.len(), 1);
    let embed = &embeds[0];
    assert_eq!(embed["title"], format!("CRITICAL: {host}").as_str());
    assert!(
        embed["description"]
            .as_str()
            .unwrap()
            .contains("is end of life"),
        "{body:#}"
    );
    assert_eq!(embed["color"], 0xD32F2F);
    let fields: Vec<(&str, &str)> = embed["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["value"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fields,
        [
            ("State", "CRITICAL"),
            ("Host", host.as_str()),
            ("Grade", "F"),
            ("Version", "OpenCloud 7.3.0"),
        ]
    );
}

#[test]
fn plugin_pushtopic_publishes_to_the_server_root_with_the_topic_of_the_url() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    let run = notify_run(
        "pushtopic",
        &fake,
        &receiver.url("/storage-alerts"),
        &["--webhook-format", "pushtopic"],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    let request = receiver.single();
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/");
    assert_eq!(request.header("Content-Type"), Some("application/json"));
    let body = request.json();
    assert_eq!(body["topic"], "storage-alerts");
    assert_eq!(
        body["title"],
        format!("CRITICAL: {}", fake.host_port()).as_str()
    );
    assert_eq!(body["priority"], 5);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("OpenCloud 7.3.0 is end of life"),
        "{body:#}"
    );
    let tags = body["tags"].as_array().expect("tags");
    assert!(
        !tags.is_empty() && tags.iter().all(Value::is_string),
        "{body:#}"
    );
}

#[test]
fn plugin_pushserver_posts_to_the_url_as_given() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    let run = notify_run(
        "pushserver",
        &fake,
        &receiver.url("/message?token=AbC123"),
        &["--webhook-format", "pushserver"],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    let request = receiver.single();
    assert_eq!(request.path, "/message?token=AbC123");
    let body = request.json();
    let mut keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(keys, ["message", "priority", "title"], "{body:#}");
    assert_eq!(
        body["title"],
        format!("CRITICAL: {}", fake.host_port()).as_str()
    );
    assert!(body["priority"].as_u64().is_some(), "{body:#}");
    assert!(
        body["message"].as_str().unwrap().contains("7.3.0"),
        "{body:#}"
    );
}

#[test]
fn plugin_sends_the_extra_headers_from_flags_and_environment() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    let run = notify_run(
        "headers",
        &fake,
        &receiver.url("/hook"),
        &[
            "--webhook-header",
            "Authorization: Bearer s3cret",
            "--webhook-header",
            "X-Trace: one two",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    let request = receiver.single();
    assert_eq!(request.header("Authorization"), Some("Bearer s3cret"));
    assert_eq!(request.header("X-Trace"), Some("one two"));
    assert_eq!(request.header_all("Content-Type"), ["application/json"]);
    assert!(
        request
            .header("User-Agent")
            .is_some_and(|ua| ua.starts_with("check-storage-security/")),
        "{request:?}"
    );

    // COS_WEBHOOK_HEADERS separates entries with ';'.
    let receiver = Receiver::ok();
    let url = receiver.url("/hook");
    let run = plugin(
        "headers-env",
        &fake.host_port(),
        &[],
        &[
            ("COS_WEBHOOK_URL", &url),
            ("COS_ALLOW_PRIVATE_WEBHOOKS", "yes"),
            ("COS_WEBHOOK_HEADERS", "X-First: 1; X-Second: two"),
        ],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    let request = receiver.single();
    assert_eq!(request.header("X-First"), Some("1"));
    assert_eq!(request.header("X-Second"), Some("two"));
}

// --- Levels --------------------------------------------------------------------------------

#[test]
fn plugin_a_healthy_host_is_notified_only_with_always() {
    let fake = ok_instance();
    let receiver = Receiver::ok();
    let url = receiver.url("/hook");
    let run = notify_run("ok-critical", &fake, &url, &[]);
    assert_eq!(run.code, 0, "{}", run.show());
    assert!(run.line(0).starts_with("OK: "), "{}", run.show());
    assert!(receiver.requests().is_empty(), "{:#?}", receiver.requests());
    for level in ["critical", "warning", "unknown"] {
        let run = notify_run("ok-level", &fake, &url, &["--webhook-on", level]);
        assert_eq!(run.code, 0, "{level}: {}", run.show());
    }
    assert!(receiver.requests().is_empty(), "{:#?}", receiver.requests());

    let run = notify_run("ok-always", &fake, &url, &["--webhook-on", "always"]);
    assert_eq!(run.code, 0, "{}", run.show());
    assert!(!run.has_line(FAILED), "{}", run.show());
    let body = receiver.single().json();
    assert_eq!(body["state"], "OK");
    assert_eq!(body["grade"], "A+");
}

#[test]
fn plugin_a_warning_host_is_notified_from_the_warning_level() {
    let fake = warning_instance();
    let receiver = Receiver::ok();
    let url = receiver.url("/hook");
    let run = notify_run("warning-critical", &fake, &url, &[]);
    assert_eq!(run.code, 1, "{}", run.show());
    assert!(receiver.requests().is_empty(), "{:#?}", receiver.requests());
    let run = notify_run("warning-warning", &fake, &url, &["--webhook-on", "warning"]);
    assert_eq!(run.code, 1, "{}", run.show());
    assert_eq!(receiver.single().json()["state"], "WARNING");
    let run = notify_run("warning-unknown", &fake, &url, &["--webhook-on", "unknown"]);
    assert_eq!(run.code, 1, "{}", run.show());
    assert_eq!(receiver.requests().len(), 2);
}

#[test]
fn plugin_a_failed_scan_is_notified_from_the_unknown_level() {
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let receiver = Receiver::ok();
    let url = receiver.url("/hook");
    let args = |level: &'static str| {
        vec![
            "--webhook-url".to_string(),
            url.clone(),
            "--allow-private-webhooks".to_string(),
            "--retries".to_string(),
            "0".to_string(),
            "--webhook-on".to_string(),
            level.to_string(),
        ]
    };
    for level in ["critical", "warning"] {
        let a = args(level);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let run = plugin("down-quiet", &down, &a, &[]);
        assert_eq!(run.code, 3, "{level}: {}", run.show());
    }
    assert!(receiver.requests().is_empty(), "{:#?}", receiver.requests());
    let a = args("unknown");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let run = plugin("down-unknown", &down, &a, &[]);
    assert_eq!(run.code, 3, "{}", run.show());
    assert!(
        run.line(0)
            .starts_with(&format!("UNKNOWN: cannot scan {down}")),
        "{}",
        run.show()
    );
    let body = receiver.single().json();
    assert_eq!(body["state"], "UNKNOWN");
    assert_eq!(body["host"], down.as_str());
}

/// The metrics formats report a failed scan as a metric value, not as an event (spec,
/// Events 8): `scrape_success 0` and no notification, even with `--webhook-on always`; a host
/// scanned in the same run still notifies.
#[test]
fn plugin_the_metrics_formats_send_no_event_for_a_failed_scan() {
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let up = ok_instance();
    let hosts = format!("{down},{}", up.host_port());
    for format in ["metrics", "otlp"] {
        let receiver = Receiver::ok();
        let url = receiver.url("/hook");
        let run = plugin(
            &format!("metrics-no-event-{format}"),
            &hosts,
            &[
                "--webhook-url",
                &url,
                "--allow-private-webhooks",
                "--retries",
                "0",
                "--webhook-on",
                "always",
                "--format",
                format,
            ],
            &[],
        );
        if format == "metrics" {
            assert!(
                run.stdout.contains(&format!(
                    "storage_security_scrape_success{{host=\"{down}\"}} 0"
                )),
                "{}",
                run.show()
            );
        }
        let bodies: Vec<serde_json::Value> = receiver.requests().iter().map(|r| r.json()).collect();
        assert_eq!(bodies.len(), 1, "{format}: {bodies:#?}");
        assert_eq!(bodies[0]["host"], up.host_port().as_str(), "{format}");
    }
}

#[test]
fn plugin_each_host_of_a_multi_host_run_is_notified() {
    let first = critical_instance();
    let second = critical_instance();
    let healthy = ok_instance();
    let receiver = Receiver::ok();
    let hosts = format!(
        "{},{},{}",
        first.host_port(),
        healthy.host_port(),
        second.host_port()
    );
    let url = receiver.url("/hook");
    let run = plugin(
        "multi",
        &hosts,
        &["--webhook-url", &url, "--allow-private-webhooks"],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    assert_eq!(run.failed_deliveries(), 0, "{}", run.show());
    let mut notified: Vec<String> = receiver
        .requests()
        .iter()
        .map(|r| r.json()["host"].as_str().unwrap().to_string())
        .collect();
    notified.sort();
    let mut expected = vec![first.host_port(), second.host_port()];
    expected.sort();
    assert_eq!(notified, expected);
}

// --- Failures never change the exit state --------------------------------------------------

#[test]
fn plugin_a_failing_receiver_is_retried_then_reported_without_changing_the_exit_code() {
    let fake = critical_instance();
    let receiver = Receiver::start(vec![Answer::Status(500)]);
    let run = notify_run(
        "receiver-500",
        &fake,
        &receiver.url("/hook"),
        &["--retries", "2"],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(run.line(0).starts_with(EOL_LINE), "{}", run.show());
    assert!(run.has_line(FAILED), "{}", run.show());
    // One try and two retries.
    assert_eq!(receiver.requests().len(), 3);
    // Every attempt sent the same body.
    let bodies: Vec<Vec<u8>> = receiver.requests().into_iter().map(|r| r.body).collect();
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));

    // A 5xx followed by success is a delivery.
    let receiver = Receiver::start(vec![Answer::Status(503), Answer::Status(204)]);
    let run = notify_run("receiver-503-204", &fake, &receiver.url("/hook"), &[]);
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(!run.has_line(FAILED), "{}", run.show());
    assert_eq!(receiver.requests().len(), 2);
}

#[test]
fn plugin_a_client_error_is_final() {
    let fake = critical_instance();
    let receiver = Receiver::start(vec![Answer::Status(404)]);
    let run = notify_run(
        "receiver-404",
        &fake,
        &receiver.url("/hook"),
        &["--retries", "2"],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(run.has_line(FAILED), "{}", run.show());
    assert_eq!(receiver.requests().len(), 1);
}

#[test]
fn plugin_a_redirect_is_not_followed() {
    let fake = critical_instance();
    let elsewhere = Receiver::ok();
    let receiver = Receiver::start(vec![Answer::Redirect(elsewhere.url("/stolen"))]);
    let run = notify_run("redirect", &fake, &receiver.url("/hook"), &[]);
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(run.has_line(FAILED), "{}", run.show());
    assert_eq!(receiver.requests().len(), 1);
    assert!(elsewhere.requests().is_empty());
}

#[test]
fn plugin_a_receiver_that_never_answers_is_cut_off_by_the_webhook_timeout() {
    let fake = critical_instance();
    let receiver = Receiver::start(vec![Answer::Hang]);
    let started = Instant::now();
    let run = notify_run(
        "hang",
        &fake,
        &receiver.url("/hook"),
        &["--webhook-timeout", "0.5", "--retries", "1"],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(run.has_line(FAILED), "{}", run.show());
    assert_eq!(receiver.requests().len(), 2);
    // Far below the 10-second default, which would be 20 s for two attempts.
    assert!(started.elapsed() < Duration::from_secs(15));
}

// --- The destination guard -----------------------------------------------------------------

#[test]
fn plugin_the_guard_refuses_loopback_without_the_opt_out() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    for (name, url) in [
        ("guard-literal", receiver.url("/hook")),
        (
            "guard-name",
            format!("http://localhost:{}/hook", receiver.port),
        ),
    ] {
        let run = plugin(
            name,
            &fake.host_port(),
            &["--webhook-url", &url, "--format", "json"],
            &[],
        );
        assert_eq!(run.code, 2, "{url}: {}", run.show());
        let printed: Value = serde_json::from_str(&run.stdout).expect("JSON output");
        let delivery = &printed[0]["webhook"];
        assert_eq!(delivery["delivered"], false, "{url}: {}", run.show());
        let error = delivery["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("loopback") && error.contains("--allow-private-webhooks"),
            "{url}: {error}"
        );
    }
    let run = plugin(
        "guard-default",
        &fake.host_port(),
        &["--webhook-url", &receiver.url("/hook")],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(run.line(0).starts_with(EOL_LINE), "{}", run.show());
    assert!(run.has_line(FAILED), "{}", run.show());
    assert!(receiver.requests().is_empty(), "{:#?}", receiver.requests());
}

#[test]
fn plugin_proxied_delivery_needs_the_opt_out() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    let proxy = ConnectProxy::start();
    let url = receiver.url("/hook");
    let run = plugin(
        "proxy-refused",
        &fake.host_port(),
        &[
            "--webhook-url",
            &url,
            "--proxy",
            &proxy.url(),
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.show());
    let printed: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    let error = printed[0]["webhook"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("proxy") && error.contains("--allow-private-webhooks"),
        "{error}"
    );
    assert!(receiver.requests().is_empty());

    let run = notify_run("proxy-allowed", &fake, &url, &["--proxy", &proxy.url()]);
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(!run.has_line(FAILED), "{}", run.show());
    assert_eq!(receiver.single().json()["state"], "CRITICAL");
    let to_receiver = format!("127.0.0.1:{}", receiver.port);
    assert!(
        proxy.tunnels().contains(&to_receiver),
        "{:?}",
        proxy.tunnels()
    );
}

// --- Refused at start ----------------------------------------------------------------------

#[test]
fn plugin_pushtopic_without_a_topic_is_refused_at_start() {
    let fake = critical_instance();
    let receiver = Receiver::ok();
    for url in [receiver.url(""), receiver.url("/")] {
        let run = notify_run(
            "pushtopic-no-topic",
            &fake,
            &url,
            &["--webhook-format", "pushtopic"],
        );
        assert_eq!(run.code, 3, "{url}: {}", run.show());
        assert!(run.line(0).starts_with("UNKNOWN: "), "{}", run.show());
        assert!(run.line(0).contains("topic"), "{}", run.show());
        assert_eq!(run.stdout.lines().count(), 1, "{}", run.show());
    }
    // Refused before any scan or delivery.
    assert_eq!(fake.request_count(), 0);
    assert!(receiver.requests().is_empty());
}

// --- Delivery in process -------------------------------------------------------------------

fn settings(url: &str, format: BodyFormat) -> WebhookSettings {
    WebhookSettings {
        url: url.to_string(),
        url_reference: None,
        on: NotifyOn::Critical,
        format,
        headers: Vec::new(),
        timeout: Duration::from_secs(5),
        allow_private: true,
        retries: 2,
        backoff_factor: 0.0,
        proxy: None,
    }
}

#[test]
fn post_sends_the_body_and_headers_once_on_success() {
    let receiver = Receiver::ok();
    let mut s = settings(&receiver.url("/in?key=1"), BodyFormat::Generic);
    s.headers = vec![("Authorization".into(), "Bearer t".into())];
    notify::post(&s, br#"{"a":1}"#).unwrap();
    let request = receiver.single();
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/in?key=1");
    assert_eq!(request.body, br#"{"a":1}"#);
    assert_eq!(request.header("Authorization"), Some("Bearer t"));
    assert_eq!(request.header_all("Content-Type"), ["application/json"]);
}

#[test]
fn post_retries_server_errors_but_not_client_errors_or_redirects() {
    let receiver = Receiver::start(vec![
        Answer::Status(500),
        Answer::Status(502),
        Answer::Status(200),
    ]);
    notify::post(&settings(&receiver.url("/"), BodyFormat::Generic), b"{}").unwrap();
    assert_eq!(receiver.requests().len(), 3);

    let receiver = Receiver::start(vec![Answer::Status(500)]);
    let error = notify::post(
        &settings(&receiver.url("/x?token=secret"), BodyFormat::Generic),
        b"{}",
    )
    .unwrap_err();
    assert_eq!(receiver.requests().len(), 3);
    assert!(error.contains("HTTP 500"), "{error}");
    assert!(error.contains("gave up after 3 attempt(s)"), "{error}");
    assert!(
        !error.contains("secret"),
        "the query may hold a token: {error}"
    );

    let receiver = Receiver::start(vec![Answer::Status(401)]);
    let error =
        notify::post(&settings(&receiver.url("/"), BodyFormat::Generic), b"{}").unwrap_err();
    assert_eq!(receiver.requests().len(), 1);
    assert!(error.contains("HTTP 401"), "{error}");

    let elsewhere = Receiver::ok();
    let receiver = Receiver::start(vec![Answer::Redirect(elsewhere.url("/"))]);
    let error =
        notify::post(&settings(&receiver.url("/"), BodyFormat::Generic), b"{}").unwrap_err();
    assert_eq!(receiver.requests().len(), 1);
    assert!(elsewhere.requests().is_empty());
    assert!(error.contains("redirect"), "{error}");
}

#[test]
fn post_transport_errors_are_retried() {
    let port = crate::support::closed_port();
    let url = format!("http://127.0.0.1:{port}/");
    let error = notify::post(&settings(&url, BodyFormat::Generic), b"{}").unwrap_err();
    assert!(error.contains("gave up after 3 attempt(s)"), "{error}");
}

#[test]
fn post_the_guard_refuses_loopback_names_and_literals_without_the_opt_out() {
    let receiver = Receiver::ok();
    for url in [
        receiver.url("/"),
        format!("http://localhost:{}/", receiver.port),
        format!("http://[::ffff:127.0.0.1]:{}/", receiver.port),
    ] {
        let mut s = settings(&url, BodyFormat::Generic);
        s.allow_private = false;
        let error = notify::post(&s, b"{}").unwrap_err();
        assert!(error.contains("loopback"), "{url}: {error}");
        assert!(error.contains("--allow-private-webhooks"), "{url}: {error}");
        // Refused once, not retried.
        assert!(!error.contains("gave up"), "{url}: {error}");
    }
    assert!(receiver.requests().is_empty());
}

#[test]
fn post_through_a_proxy_only_with_the_opt_out() {
    let receiver = Receiver::ok();
    let proxy = ConnectProxy::start();
    let mut s = settings(&receiver.url("/"), BodyFormat::Generic);
    s.proxy = Some(proxy.url());
    s.allow_private = false;
    let error = notify::post(&s, b"{}").unwrap_err();
    assert!(
        error.contains("validated addresses are pinned, so a resolving proxy cannot be used"),
        "{error}"
    );
    assert!(proxy.tunnels().is_empty());
    s.allow_private = true;
    notify::post(&s, b"{}").unwrap();
    assert_eq!(receiver.requests().len(), 1);
    assert_eq!(proxy.tunnels(), [format!("127.0.0.1:{}", receiver.port)]);
}

#[test]
fn post_pushtopic_goes_to_the_server_root() {
    let receiver = Receiver::ok();
    let s = settings(&receiver.url("/alerts"), BodyFormat::PushTopic);
    s.validate().unwrap();
    notify::post(&s, br#"{"topic":"alerts"}"#).unwrap();
    assert_eq!(receiver.single().path, "/");
}

#[test]
fn post_a_receiver_that_never_answers_times_out() {
    let receiver = Receiver::start(vec![Answer::Hang]);
    let mut s = settings(&receiver.url("/"), BodyFormat::Generic);
    s.timeout = Duration::from_millis(300);
    s.retries = 0;
    let error = notify::post(&s, b"{}").unwrap_err();
    assert!(error.contains("timed out"), "{error}");
    assert_eq!(receiver.requests().len(), 1);
}
