//! `check-storage-scanner`: `scan <host>` prints the plugin's per-host result document and
//! exits with its state; each program takes its own flags and refuses the other's by name.

use crate::support::plugin::{NOW, hermetic, scratch};
use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::process::Command;

struct Out {
    stdout: String,
    stderr: String,
    code: i32,
}

fn scanner(name: &str, args: &[&str]) -> Out {
    let dir = scratch(name);
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-scanner"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &dir)
        .env("COS_NOW", NOW)
        .current_dir(&dir)
        .output()
        .expect("run the scanner");
    Out {
        stdout: String::from_utf8(output.stdout).expect("UTF-8"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().expect("exit code"),
    }
}

/// The document without what differs from one scan to the next.
fn stable(mut doc: Value) -> Value {
    doc["durationSeconds"] = Value::Null;
    doc
}

#[test]
fn scan_prints_the_plugins_result_document_and_exits_with_its_state() {
    let fake = FakeInstance::start(InstanceConfig::default().version("4.0.0"));
    let base = hermetic(&fake.ca_file());
    let base: Vec<&str> = base.iter().map(String::as_str).collect();
    let host = fake.host_port();

    let mut args = vec!["scan", host.as_str()];
    args.extend(&base);
    let out = scanner("scanner-scan", &args);
    assert_eq!(
        out.code, 2,
        "4.0.0 with demo accounts is CRITICAL\n{}",
        out.stdout
    );
    let doc: Value = serde_json::from_str(&out.stdout).expect("one JSON document");
    assert!(doc.is_object(), "one document, not an array");

    let mut plugin_args = vec!["-H", host.as_str(), "--format", "json"];
    plugin_args.extend(&base);
    let plugin = crate::support::plugin::run("scanner-scan-plugin", &plugin_args, &[]);
    let array: Value = serde_json::from_str(&plugin.stdout).unwrap();
    assert_eq!(stable(doc), stable(array[0].clone()));
}

#[test]
fn each_program_takes_its_own_flags() {
    let out = scanner("scanner-format", &["scan", "x.example", "--format", "json"]);
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stdout.lines().next(),
        Some(
            "UNKNOWN: --format is an option of check-storage-security and fleet, not of scan; see check-storage-scanner -h"
        )
    );
    let plugin =
        crate::support::plugin::run("plugin-listen", &["-H", "x.example", "--listen", "::"], &[]);
    assert_eq!(plugin.code, 3);
    assert_eq!(
        plugin.line(0),
        "UNKNOWN: --listen is an option of check-storage-scanner, not of check-storage-security; see check-storage-security -h"
    );
    let out = scanner("scanner-no-host", &["scan"]);
    assert_eq!(out.code, 3);
    assert!(
        out.stdout.starts_with("UNKNOWN: scan needs a host"),
        "{}",
        out.stdout
    );
    let out = scanner("scanner-help", &["-h"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("check-storage-scanner scan <host>"),
        "{}",
        out.stdout
    );
}

/// An option of another subcommand is refused by name with the one that takes it, never
/// ignored: `web --token` would leave the API open while the operator believes it guarded.
#[test]
fn each_subcommand_refuses_the_options_of_the_others_by_name() {
    for (args, line) in [
        (
            &["web", "--token", "file:///run/t"][..],
            "check-storage-scanner: --token is an option of serve, not of web; see check-storage-scanner -h",
        ),
        (
            &["serve", "--store", "sqlite:/tmp/x.sqlite"][..],
            "check-storage-scanner: --store is an option of web and limits, not of serve; see check-storage-scanner -h",
        ),
        (
            &["serve", "--workers", "2"][..],
            "check-storage-scanner: --workers is an option of web, not of serve; see check-storage-scanner -h",
        ),
        (
            &["serve", "--no-mcp"][..],
            "check-storage-scanner: --no-mcp is an option of web, not of serve; see check-storage-scanner -h",
        ),
    ] {
        let out = scanner("scanner-scope-server", args);
        assert_eq!(out.code, 3, "{args:?}: {}{}", out.stdout, out.stderr);
        assert_eq!(
            out.stdout, "",
            "{args:?}: a server's refusal goes to stderr"
        );
        assert_eq!(out.stderr.trim_end(), line, "{args:?}");
    }
    for (args, line) in [
        (
            &["scan", "x.example", "--store", "sqlite:/tmp/x.sqlite"][..],
            "UNKNOWN: --store is an option of web and limits, not of scan; see check-storage-scanner -h",
        ),
        (
            &["review-waivers", "--listen", "::1"][..],
            "UNKNOWN: --listen is an option of serve and web, not of review-waivers; see check-storage-scanner -h",
        ),
        (
            &["scan", "x.example", "--result", "r.json"][..],
            "UNKNOWN: --result is an option of review-waivers, fleet and snippets, not of scan; see check-storage-scanner -h",
        ),
    ] {
        let out = scanner("scanner-scope", args);
        assert_eq!(out.code, 3, "{args:?}: {}", out.stdout);
        assert_eq!(out.stdout.lines().next(), Some(line), "{args:?}");
    }
}

/// `web` listens where its own settings say (`web.listen`, `COS_WEB_LISTEN`, `--listen`),
/// never at the scan service's `service.listen` / `service.port` of a shared file.
#[test]
fn web_listens_on_its_own_address_not_the_scan_services() {
    let dir = crate::support::web::fresh_dir("web-own-listen");
    // The scan service's port, held here: a web that took it could not start.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let service_port = held.local_addr().unwrap().port();
    let config = dir.join("config.yml");
    std::fs::write(
        &config,
        format!("service:\n  listen: 127.0.0.1\n  port: {service_port}\nweb:\n  port: 0\n"),
    )
    .unwrap();
    let state = dir.display().to_string();
    let config_env = config.display().to_string();
    let web = crate::support::service::ScannerService::start_with(
        std::path::Path::new(crate::support::web::SCANNER),
        &dir,
        &["web", "--update-source", "bundled"],
        &[("COS_CONFIG_FILE", &config_env), ("COS_STATE_DIR", &state)],
    )
    .unwrap_or_else(|refused| panic!("web did not start: {refused:?}"));
    assert_ne!(web.addr.port(), service_port);
    assert!(web.addr.ip().is_loopback(), "{}", web.addr);
    assert_eq!(web.get("/healthz", &[]).status, 200);
    drop(web);
    // The variable of its own, for a unit's Environment=.
    let web = crate::support::service::ScannerService::start_with(
        std::path::Path::new(crate::support::web::SCANNER),
        &dir,
        &["web", "--update-source", "bundled"],
        &[
            ("COS_CONFIG_FILE", &config_env),
            ("COS_STATE_DIR", &state),
            ("COS_WEB_LISTEN", "127.0.0.1:0"),
            ("COS_SERVICE_LISTEN", "192.0.2.1"),
        ],
    )
    .unwrap_or_else(|refused| panic!("web did not start: {refused:?}"));
    assert!(web.addr.ip().is_loopback(), "{}", web.addr);
}

/// A secret written in clear on a server's command line is visible in `ps`: the server starts
/// (the operator may have no other way at hand) but says so once on stderr, naming the
/// reference forms, and never the value.
#[test]
fn secrets_in_clear_on_the_command_line_are_warned_about_once() {
    let dir = crate::support::web::fresh_dir("secrets-in-clear");
    let state = dir.display().to_string();
    let token = "a-scanner-token-of-at-least-32-characters-in-clear";
    let warned = |service: &crate::support::service::ScannerService, flag: &str, value: &str| {
        let lines = service.stderr_lines();
        let warnings: Vec<&String> = lines.iter().filter(|l| l.contains("warning:")).collect();
        assert_eq!(warnings.len(), 1, "{lines:?}");
        assert!(
            warnings[0].starts_with(&format!(
                "check-storage-scanner: warning: {flag} on the command line"
            )) && warnings[0].contains("secret://NAME")
                && warnings[0].contains("file:///PATH")
                && warnings[0].contains("env://NAME"),
            "{lines:?}"
        );
        assert!(lines.iter().all(|l| !l.contains(value)), "{lines:?}");
    };
    let serve = crate::support::service::ScannerService::start(
        std::path::Path::new(crate::support::web::SCANNER),
        &dir,
        &["--token", token, "--update-source", "bundled"],
        &[("COS_STATE_DIR", &state)],
    )
    .unwrap_or_else(|refused| panic!("serve did not start: {refused:?}"));
    warned(&serve, "--token", token);
    drop(serve);

    let web = crate::support::web::start(&dir, &["--mcp-token", token]);
    warned(&web, "--mcp-token", token);
    drop(web);

    // A password in the store's address (a real Redis that requires it).
    let password = "hunter2-in-clear";
    let redis = crate::support::redis::RedisServer::start_in(&dir.join("redis"))
        .unwrap_or_else(|e| panic!("{e}"));
    {
        use std::io::{Read, Write};
        let mut connection = std::net::TcpStream::connect(redis.addr).unwrap();
        connection
            .write_all(format!("CONFIG SET requirepass {password}\r\n").as_bytes())
            .unwrap();
        let mut answer = [0u8; 5];
        connection.read_exact(&mut answer).unwrap();
        assert_eq!(&answer, b"+OK\r\n");
    }
    let store = format!("redis://:{password}@{}/0", redis.addr);
    let web = crate::support::web::start(&dir, &["--store", &store]);
    warned(&web, "--store", password);
    drop(web);

    // A reference is what the warning asks for: no warning then.
    let secret = dir.join("token");
    std::fs::write(&secret, token).unwrap();
    let reference = format!("file://{}", secret.display());
    let web = crate::support::web::start(&dir, &["--mcp-token", &reference]);
    let lines = web.stderr_lines();
    assert!(lines.iter().all(|l| !l.contains("warning:")), "{lines:?}");
}

/// No DNS rebinding into a server on loopback: a page of `rebind.attacker.example`, whose name
/// the attacker points at 127.0.0.1, cannot drive serve, web or the exporter from a browser on
/// this host. A foreign `Host` is 421, a foreign `Origin` 403; addresses, `localhost` and the
/// base URL's host are answered.
#[test]
fn servers_on_loopback_answer_only_their_own_names() {
    let dir = crate::support::web::fresh_dir("same-host");
    let state = dir.display().to_string();
    let serve = crate::support::service::ScannerService::start(
        std::path::Path::new(crate::support::web::SCANNER),
        &dir,
        &["--update-source", "bundled"],
        &[("COS_STATE_DIR", &state)],
    )
    .unwrap_or_else(|refused| panic!("serve did not start: {refused:?}"));
    let web = crate::support::web::start(&dir, &["--base-url", "https://scan.example.com"]);
    let exporter = crate::support::exporter::ExporterProcess::start(
        std::path::Path::new(env!("CARGO_BIN_EXE_check-storage-security")),
        &[
            "-H".to_string(),
            format!("127.0.0.1:{}", crate::support::closed_port()),
            "--prometheus-listen-port".to_string(),
            "0".to_string(),
            "--update-source".to_string(),
            "bundled".to_string(),
            "--no-debug-ports".to_string(),
        ],
        &[("COS_NOW", crate::support::web::NOW)],
        &dir,
    );
    let ask = |addr: std::net::SocketAddr, path: &str, host: &str, origin: Option<&str>| {
        let mut raw = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n");
        if let Some(origin) = origin {
            raw.push_str(&format!("Origin: {origin}\r\n"));
        }
        raw.push_str("Connection: close\r\n\r\n");
        crate::support::service::exchange(addr, raw.as_bytes()).status
    };
    for (name, addr, path) in [
        ("serve", serve.addr, "/healthz"),
        ("web", web.addr, "/healthz"),
        ("exporter", exporter.addr, "/metrics"),
    ] {
        let port = addr.port();
        let attacker = format!("rebind.attacker.example:{port}");
        assert_eq!(ask(addr, path, &attacker, None), 421, "{name}");
        // web's form and /mcp judge Origin themselves (tests/it/web_api.rs, tests/it/web_mcp.rs).
        if name != "web" {
            assert_eq!(
                ask(
                    addr,
                    path,
                    &addr.to_string(),
                    Some("http://rebind.attacker.example")
                ),
                403,
                "{name}"
            );
        }
        for own in [addr.to_string(), format!("localhost:{port}")] {
            assert_eq!(ask(addr, path, &own, None), 200, "{name}: {own}");
            let origin = format!("http://{own}");
            assert_eq!(
                ask(addr, path, &own, Some(&origin)),
                200,
                "{name}: {origin}"
            );
        }
    }
    // The base URL's host is the public API's own name (a reverse proxy keeps it).
    assert_eq!(ask(web.addr, "/healthz", "scan.example.com", None), 200);
    assert_eq!(
        ask(
            web.addr,
            "/healthz",
            "scan.example.com",
            Some("https://scan.example.com")
        ),
        200
    );
}
