//! `--format json` and the default format, golden for one and three hosts (fixed clock), and
//! hostile server text coming back intact as data. Regenerate the goldens with
//! `COS_BLESS_GOLDEN=1 cargo nextest run -E 'test(/^format_json::/)'`.

use crate::support::FakeInstance;
use serde_json::Value;
use std::path::Path;

use crate::support::plugin::healthy;

fn run(name: &str, args: &[&str], ca: &Path) -> (String, i32) {
    let base = crate::support::plugin::hermetic(ca);
    let mut all: Vec<&str> = base.iter().map(String::as_str).collect();
    all.extend(args);
    let r = crate::support::plugin::run(&format!("format-json-{name}"), &all, &[]);
    (r.stdout, r.code)
}

/// Replaces what varies between runs: ports (as HOST1..), durations, the cipher suite, and
/// the fingerprint (its digests cover the port-bearing discovery document).
fn normalise(mut doc: Value, hosts: &[String]) -> String {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    match k.as_str() {
                        "durationSeconds" => *child = Value::from("DURATION"),
                        "cipherSuite" => *child = Value::from("SUITE"),
                        // The discovery document names the port, so its digest moves with it.
                        "configurationFingerprint" if child.is_object() => {
                            *child = Value::from("FINGERPRINT")
                        }
                        _ => walk(child),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            Value::String(s) if s.contains("the certificate is valid for") => *s = "CERT".into(),
            _ => {}
        }
    }
    walk(&mut doc);
    let mut text = serde_json::to_string_pretty(&doc).unwrap();
    for (i, host) in hosts.iter().enumerate() {
        text = text.replace(host.as_str(), &format!("HOST{}", i + 1));
        // The fake instance names itself localhost:<port> in its discovery document.
        if let Some(port) = host.strip_prefix("127.0.0.1:") {
            text = text.replace(
                &format!("localhost:{port}"),
                &format!("localhost:PORT{}", i + 1),
            );
        }
    }
    text
}

fn golden(name: &str, actual: &str) {
    let path = format!(
        "{}/tests/fixtures/golden/json/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    if std::env::var_os("COS_BLESS_GOLDEN").is_some() {
        std::fs::create_dir_all(Path::new(&path).parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}; generate it with COS_BLESS_GOLDEN=1"));
    assert!(
        expected == actual,
        "{name} differs from its golden file; if the change is intended, run COS_BLESS_GOLDEN=1 cargo nextest run -E 'test(/^format_json::/)'\n{actual}"
    );
}

#[test]
fn one_and_three_hosts_match_their_goldens() {
    let ok = FakeInstance::start(healthy("8.1.0"));
    let (out, code) = run(
        "one",
        &["-H", &ok.host_port(), "--format", "json"],
        &ok.ca_file(),
    );
    assert_eq!(code, 0, "{out}");
    golden(
        "one-host.json",
        &normalise(serde_json::from_str(&out).unwrap(), &[ok.host_port()]),
    );

    let eol = FakeInstance::start(healthy("7.3.0"));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let hosts = [ok.host_port(), eol.host_port(), down];
    let (out, code) = run(
        "three",
        &["-H", &hosts.join(","), "--format", "json"],
        &ok.ca_file(),
    );
    assert_eq!(code, 2, "{out}");
    golden(
        "three-hosts.json",
        &normalise(serde_json::from_str(&out).unwrap(), &hosts),
    );
}

#[test]
fn hostile_server_text_is_data_in_json() {
    let hostile = FakeInstance::start(
        healthy("8.1.0")
            .set_header("X-Web-Version", "8.1.0</x>\"|=\u{e9}")
            .status_override(
                r#"{"productname":"OpenCloud","productversion":"8.1.0","edition":"e\"<&>|="}"#,
            ),
    );
    let (out, _) = run(
        "hostile",
        &["-H", &hostile.host_port(), "--format", "json"],
        &hostile.ca_file(),
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc[0]["product"]["edition"], "e\"<&>|=");
    let disclosure = doc[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "versionDisclosure:X-Web-Version")
        .expect("the version header is a finding");
    assert_eq!(disclosure["detail"], "X-Web-Version: 8.1.0</x>\"|=\u{e9}");
}

/// The default monitoring output with timing masked.
fn mask_monitoring(text: &str, hosts: &[String]) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let masked: Vec<String> = line
            .split(' ')
            .map(|word| {
                for metric in ["time=", "time'="] {
                    if let Some(at) = word.find(metric) {
                        let rest = &word[at + metric.len()..];
                        let tail = rest.find(';').map(|i| &rest[i..]).unwrap_or("");
                        return format!("{}{metric}N{tail}", &word[..at]);
                    }
                }
                word.to_string()
            })
            .collect();
        out.push_str(&masked.join(" "));
        out.push('\n');
    }
    let mut out: String = out
        .lines()
        .map(|l| match l.strip_prefix("Configuration fingerprint: ") {
            // Its digests cover the port-bearing discovery document.
            Some(_) => "Configuration fingerprint: FINGERPRINT\n".to_string(),
            None => format!("{l}\n"),
        })
        .collect();
    for (i, host) in hosts.iter().enumerate() {
        out = out.replace(host.as_str(), &format!("HOST{}", i + 1));
        if let Some(port) = host.strip_prefix("127.0.0.1:") {
            out = out.replace(
                &format!("localhost:{port}"),
                &format!("localhost:PORT{}", i + 1),
            );
        }
    }
    out
}

#[test]
fn default_format_goldens_for_one_and_three_hosts() {
    let ok = FakeInstance::start(healthy("8.1.0"));
    let (out, code) = run(
        "monitoring-one",
        &["-H", &ok.host_port(), "--check-hardening"],
        &ok.ca_file(),
    );
    assert_eq!(code, 1, "{out}");
    golden(
        "one-host.monitoring.txt",
        &mask_monitoring(&out, &[ok.host_port()]),
    );

    let eol = FakeInstance::start(healthy("7.3.0"));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let hosts = [ok.host_port(), eol.host_port(), down];
    let (out, code) = run("monitoring-three", &["-H", &hosts.join(",")], &ok.ca_file());
    assert_eq!(code, 2, "{out}");
    golden("three-hosts.monitoring.txt", &mask_monitoring(&out, &hosts));
}
