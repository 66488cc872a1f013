//! `check-storage-scanner`: `scan <host>` prints the plugin's per-host result document and
//! exits with its state; each program takes its own flags and refuses the other's by name.

mod support;

use serde_json::Value;
use std::process::Command;
use support::plugin::{NOW, hermetic, scratch};
use support::{FakeInstance, InstanceConfig};

struct Out {
    stdout: String,
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
    let plugin = support::plugin::run("scanner-scan-plugin", &plugin_args, &[]);
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
            "UNKNOWN: --format is an option of check-storage-security and of fleet, not of scan; see check-storage-scanner -h"
        )
    );
    let plugin = support::plugin::run("plugin-listen", &["-H", "x.example", "--listen", "::"], &[]);
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
