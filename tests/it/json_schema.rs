//! Every `--format json` output validates against the published schema
//! (`docs/result.schema.json`). The validator below implements the part of JSON Schema the
//! schema uses and refuses anything else, so a schema change cannot silently go unchecked.

use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn schema() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/result.schema.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn type_matches(name: &str, v: &Value) -> bool {
    match name {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        other => panic!("unsupported type {other}"),
    }
}

fn resolve<'a>(root: &'a Value, reference: &str) -> &'a Value {
    let name = reference
        .strip_prefix("#/$defs/")
        .unwrap_or_else(|| panic!("unsupported $ref {reference}"));
    &root["$defs"][name]
}

/// Errors of `v` against `s`, with JSON paths.
fn validate(root: &Value, s: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(schema) = s.as_object() else { return };
    for key in schema.keys() {
        assert!(
            [
                "$schema",
                "$id",
                "title",
                "description",
                "$defs",
                "$ref",
                "type",
                "enum",
                "oneOf",
                "required",
                "properties",
                "additionalProperties",
                "items",
                "minimum",
                "maximum",
                "minItems",
                "pattern"
            ]
            .contains(&key.as_str()),
            "unsupported keyword {key}"
        );
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        validate(root, resolve(root, r), v, path, errors);
    }
    if let Some(t) = schema.get("type") {
        let ok = match t {
            Value::String(name) => type_matches(name, v),
            Value::Array(names) => names.iter().any(|n| type_matches(n.as_str().unwrap(), v)),
            _ => panic!("bad type"),
        };
        if !ok {
            errors.push(format!("{path}: {v} is not of type {t}"));
            return;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(v)
    {
        errors.push(format!("{path}: {v} not in {options:?}"));
    }
    if let Some(alternatives) = schema.get("oneOf").and_then(Value::as_array) {
        let passing = alternatives
            .iter()
            .filter(|alt| {
                let mut e = Vec::new();
                validate(root, alt, v, path, &mut e);
                e.is_empty()
            })
            .count();
        if passing != 1 {
            errors.push(format!(
                "{path}: matches {passing} of the oneOf alternatives"
            ));
        }
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            errors.push(format!("{path}: {n} < {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            errors.push(format!("{path}: {n} > {max}"));
        }
    }
    if let (Some(pattern), Some(text)) = (schema.get("pattern").and_then(Value::as_str), v.as_str())
    {
        let count: usize = pattern
            .strip_prefix("^[0-9a-f]{")
            .and_then(|r| r.strip_suffix("}$"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unsupported pattern {pattern}"));
        if text.len() != count
            || !text
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        {
            errors.push(format!("{path}: {text:?} does not match {pattern}"));
        }
    }
    if let Some(object) = v.as_object() {
        for required in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = required.as_str().unwrap();
            if !object.contains_key(name) {
                errors.push(format!("{path}: missing {name}"));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (key, value) in object {
            let child = format!("{path}.{key}");
            match properties.and_then(|p| p.get(key)) {
                Some(sub) => validate(root, sub, value, &child, errors),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => errors.push(format!("{child}: not in the schema")),
                    Some(sub @ Value::Object(_)) => validate(root, sub, value, &child, errors),
                    _ => {}
                },
            }
        }
    }
    if let (Some(min), Some(list)) = (schema.get("minItems").and_then(Value::as_u64), v.as_array())
        && (list.len() as u64) < min
    {
        errors.push(format!("{path}: {} items, fewer than {min}", list.len()));
    }
    if let (Some(items), Some(list)) = (schema.get("items"), v.as_array()) {
        for (i, item) in list.iter().enumerate() {
            validate(root, items, item, &format!("{path}[{i}]"), errors);
        }
    }
}

fn errors_of(document: &Value) -> Vec<String> {
    let root = schema();
    let mut errors = Vec::new();
    validate(&root, &root, document, "$", &mut errors);
    errors
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
