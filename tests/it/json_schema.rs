//! Every `--format json` output validates against the published schema
//! (`docs/result.schema.json`), which is generated from the types of `src/report.rs`; a real
//! validator (Python's jsonschema, Draft 2020-12) judges.

use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result.schema.json")
}

/// Errors of `document` against the published schema, by a real validator (Python's
/// jsonschema, Draft 2020-12), each as `path: message`.
fn errors_of(document: &Value) -> Vec<String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("schema-document-{}.json", std::process::id()));
    std::fs::write(&file, document.to_string()).unwrap();
    const VALIDATE: &str = r#"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
document = json.load(open(sys.argv[2]))
for e in Draft202012Validator(schema).iter_errors(document):
    print("$" + "".join("[%r]" % p for p in e.absolute_path) + ": " + e.message[:300])
"#;
    let output = crate::support::on_the_real_clock(
        Command::new("python3")
            .arg("-c")
            .arg(VALIDATE)
            .arg(schema_path())
            .arg(&file),
    )
    .output()
    .expect("python3 runs (make deps installs jsonschema)");
    let _ = std::fs::remove_file(&file);
    assert!(
        output.status.success(),
        "the validator failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The published schema is the one the types generate (`report::schema::document`);
/// `COS_BLESS_GOLDEN=1` (or `make man`) writes it.
#[test]
fn the_published_schema_is_what_the_types_generate() {
    let generated = format!("{:#}\n", storage_security::report::schema::document());
    if std::env::var_os("COS_BLESS_GOLDEN").is_some() {
        std::fs::write(schema_path(), &generated).unwrap();
    }
    let published = std::fs::read_to_string(schema_path()).unwrap();
    assert!(
        published == generated,
        "docs/result.schema.json differs from what src/report.rs generates; \
         run COS_BLESS_GOLDEN=1 cargo nextest run -E 'test(/json_schema::/)' (or make man)"
    );
}

fn run_json(name: &str, args: &[&str], ca: &Path) -> (Value, i32) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("schema-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ca = ca.display().to_string();
    let mut all = vec![
        "--ca-file",
        &ca,
        "--update-source",
        "bundled",
        "--backoff-factor",
        "0",
        "--retries",
        "0",
        "--no-debug-ports",
        "--format",
        "json",
    ];
    all.extend(args);
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-security"))
        .args(&all)
        .env_clear()
        .env("HOME", &dir)
        .env("COS_NOW", crate::support::PINNED_NOW)
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (doc, output.status.code().unwrap())
}

#[test]
fn every_kind_of_result_validates() {
    let healthy = FakeInstance::start(InstanceConfig::default().version("8.1.0").demo_users(false));
    let default_install = FakeInstance::start(InstanceConfig::default());
    let plain = FakeInstance::start(InstanceConfig::default().version("7.3.0").plain());
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let hosts = format!(
        "{},{},{},{}",
        healthy.host_port(),
        default_install.host_port(),
        plain.host_port(),
        down
    );
    for (name, extra) in [
        ("plain-run", &[][..]),
        (
            "hardening",
            &[
                "--check-hardening",
                "--ignore-hardening",
                "hstsPreload,nothing*",
            ][..],
        ),
        ("throttling", &["--login-throttling", "--insecure"][..]),
    ] {
        let mut args = vec!["-H", hosts.as_str()];
        args.extend(extra);
        let (doc, code) = run_json(name, &args, &healthy.ca_file());
        assert_eq!(doc.as_array().map(Vec::len), Some(4));
        assert_eq!(code, 2, "end of life and vulnerabilities are CRITICAL");
        let errors = errors_of(&doc);
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}

#[test]
fn the_validator_catches_drift() {
    let healthy = FakeInstance::start(InstanceConfig::default().version("8.1.0").demo_users(false));
    let (mut doc, _) = run_json("drift", &["-H", &healthy.host_port()], &healthy.ca_file());
    assert!(errors_of(&doc).is_empty());
    doc[0]["unexpected"] = Value::from(1);
    doc[0]["rating"] = Value::from(7);
    doc[0]["findings"][0]["status"] = Value::from("maybe");
    let errors = errors_of(&doc);
    assert_eq!(errors.len(), 3, "{errors:#?}");
}
