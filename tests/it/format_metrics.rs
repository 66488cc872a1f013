//! The metrics-shaped formats end to end: `metrics` (Prometheus text exposition), `otlp`
//! (OTLP/JSON), `agentlocal` (Checkmk local check) and `summary`, run through the real binary
//! against fake instances on loopback with a pinned clock.
//!
//! Golden files live in `tests/fixtures/golden/metrics/`; what varies between runs (ports,
//! durations, certificate days) is masked first. Regenerate with
//! `COS_BLESS_GOLDEN=1 cargo nextest run -E 'test(/^format_metrics::/)'`.

use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const NOW: &str = crate::support::PINNED_NOW;
/// `NOW` in nanoseconds since the epoch, as OTLP carries it.
const NOW_NANOS: &str = "1795316400000000000";

fn healthy(version: &str) -> InstanceConfig {
    InstanceConfig::default()
        .version(version)
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
}

fn run(name: &str, args: &[&str], ca: &Path) -> (String, i32) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("format-metrics-{name}"));
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
    ];
    all.extend(args);
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-security"))
        .args(&all)
        .env_clear()
        .env("HOME", &dir)
        .env("COS_NOW", NOW)
        .current_dir(&dir)
        .output()
        .unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        output.status.code().unwrap(),
    )
}

// ---------------------------------------------------------------------------------------------
// Golden files and masking

fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/golden/metrics")
        .join(name)
}

fn assert_golden(name: &str, actual: &str) {
    let path = golden_path(name);
    if std::env::var_os("COS_BLESS_GOLDEN").is_some_and(|v| !v.is_empty()) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; generate it with COS_BLESS_GOLDEN=1 cargo nextest run -E 'test(/^format_metrics::/)'",
            path.display()
        )
    });
    assert!(
        actual == expected,
        "{name} differs from {}; if the change is intended, regenerate with \
         COS_BLESS_GOLDEN=1 cargo nextest run -E 'test(/^format_metrics::/)'\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

/// Replaces each host (`127.0.0.1:<port>`) by a stable name; longest first, so that no host
/// is a prefix of one replaced later.
fn mask_hosts(text: &str, hosts: &[(&str, &str)]) -> String {
    let mut hosts = hosts.to_vec();
    hosts.sort_by_key(|(host, _)| std::cmp::Reverse(host.len()));
    hosts
        .iter()
        .fold(text.to_string(), |t, (host, name)| t.replace(host, name))
}

/// Replaces the number after every `prefix` by `mask`.
fn mask_number_after(text: &str, prefix: &str, mask: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let (head, tail) = rest.split_at(at + prefix.len());
        out.push_str(head);
        let end = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
            .unwrap_or(tail.len());
        if end > 0 {
            out.push_str(mask);
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn mask_metrics(text: &str) -> String {
    text.lines()
        .map(|line| match line.rsplit_once(' ') {
            Some((series, _)) if line.starts_with("storage_security_scan_duration_seconds{") => {
                format!("{series} <duration>\n")
            }
            _ => format!("{line}\n"),
        })
        .collect()
}

/// The summary with hosts masked and the table aligned again for the masked widths (the
/// alignment of the real output is checked by `summary_of_three_hosts_is_aligned_in_input_order`).
fn mask_summary(text: &str, hosts: &[(&str, &str)]) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let tally = lines.pop().unwrap_or_default();
    let rows: Vec<Vec<String>> = lines
        .iter()
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|cell| !cell.is_empty())
                .map(|cell| mask_hosts(cell, hosts))
                .collect()
        })
        .collect();
    let mut widths = vec![0; rows.iter().map(Vec::len).max().unwrap_or(0)];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let line = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect::<Vec<_>>()
            .join("  ");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out + &mask_hosts(tally, hosts) + "\n"
}

fn mask_otlp(text: &str) -> String {
    // The scan duration is the only double.
    mask_number_after(text, "\"asDouble\": ", "\"<duration>\"")
}

fn mask_agentlocal(text: &str) -> String {
    mask_number_after(text, "time=", "<duration>")
}

// ---------------------------------------------------------------------------------------------
// A small parser of the Prometheus text exposition format (version 0.0.4), stricter than
// Prometheus itself where this plugin promises more: every family has HELP and TYPE before its
// samples, a family's samples stay together, and no series appears twice.

#[derive(Debug)]
struct PromSample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn valid_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn valid_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
}

fn parse_value(text: &str) -> Result<f64, String> {
    match text {
        "NaN" => Ok(f64::NAN),
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        _ => text
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("value {text:?} is not a number")),
    }
}

/// `{a="x",b="y"}` at the start of `text`: the labels and what follows the closing brace.
fn parse_labels(text: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    let mut rest = text.strip_prefix('{').ok_or("labels must start with {")?;
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((labels, after));
        }
        let eq = rest.find('=').ok_or("label without =")?;
        let name = &rest[..eq];
        if !valid_label_name(name) {
            return Err(format!("invalid label name {name:?}"));
        }
        rest = rest[eq + 1..]
            .strip_prefix('"')
            .ok_or("label value must be quoted")?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("unterminated label value".into()),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, 'n')) => value.push('\n'),
                    other => return Err(format!("invalid escape {other:?} in label value")),
                },
                Some((_, c)) if c.is_control() => {
                    return Err(format!("raw control character {c:?} in label value"));
                }
                Some((_, c)) => value.push(c),
            }
        };
        if labels.insert(name.to_string(), value).is_some() {
            return Err(format!("label {name} given twice"));
        }
        rest = &rest[end + 1..];
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        } else if !rest.starts_with('}') {
            return Err("labels must be separated by commas".into());
        }
    }
}

fn parse_exposition(text: &str) -> Result<Vec<PromSample>, String> {
    if !text.ends_with('\n') {
        return Err("the exposition must end with a line feed".into());
    }
    let mut help = HashSet::new();
    let mut types = HashSet::new();
    let mut finished: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut series = HashSet::new();
    let mut samples = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let fail = |why: String| format!("line {}: {why}: {line:?}", n + 1);
        if line.is_empty() {
            return Err(fail("empty line".into()));
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut words = comment.trim_start().splitn(3, ' ');
            let keyword = words.next().unwrap_or("");
            if keyword != "HELP" && keyword != "TYPE" {
                continue;
            }
            let name = words.next().unwrap_or("");
            let rest = words.next().unwrap_or("");
            if !valid_metric_name(name) {
                return Err(fail(format!("invalid metric name {name:?}")));
            }
            if finished.contains(name) || current.as_deref() == Some(name) {
                return Err(fail(format!("{keyword} after samples of {name}")));
            }
            let fresh = if keyword == "HELP" {
                if rest.is_empty() {
                    return Err(fail("empty HELP".into()));
                }
                help.insert(name.to_string())
            } else {
                if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&rest) {
                    return Err(fail(format!("unknown type {rest:?}")));
                }
                types.insert(name.to_string())
            };
            if !fresh {
                return Err(fail(format!("second {keyword} for {name}")));
            }
            continue;
        }
        let name_end = line
            .find(['{', ' '])
            .ok_or_else(|| fail("no value".into()))?;
        let name = &line[..name_end];
        if !valid_metric_name(name) {
            return Err(fail(format!("invalid metric name {name:?}")));
        }
        let (labels, rest) = if line[name_end..].starts_with('{') {
            parse_labels(&line[name_end..]).map_err(fail)?
        } else {
            (BTreeMap::new(), &line[name_end..])
        };
        let mut fields = rest
            .strip_prefix(' ')
            .ok_or_else(|| fail("no space before the value".into()))?
            .split(' ');
        let value = parse_value(fields.next().unwrap_or("")).map_err(fail)?;
        if let Some(ts) = fields.next() {
            ts.parse::<i64>()
                .map_err(|_| fail(format!("invalid timestamp {ts:?}")))?;
        }
        if fields.next().is_some() {
            return Err(fail("trailing fields".into()));
        }
        if !help.contains(name) || !types.contains(name) {
            return Err(fail(format!(
                "sample of {name} without HELP and TYPE before it"
            )));
        }
        if current.as_deref() != Some(name) {
            if finished.contains(name) {
                return Err(fail(format!("samples of {name} are not together")));
            }
            if let Some(previous) = current.replace(name.to_string()) {
                finished.insert(previous);
            }
        }
        if !series.insert(format!("{name}{labels:?}")) {
            return Err(fail("duplicate series".into()));
        }
        samples.push(PromSample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    Ok(samples)
}

/// Lint findings `promtool check metrics` reports for names the spec fixes ("Metrics
/// exporter"): gauges named `_total`, and days instead of seconds. Nothing else is accepted.
const SPEC_NAME_LINTS: [&str; 4] = [
    r#"storage_security_vulnerabilities_total non-counter metrics should not have "_total" suffix"#,
    r#"storage_security_hardenings_missing_total non-counter metrics should not have "_total" suffix"#,
    r#"storage_security_failed_extra_checks_total non-counter metrics should not have "_total" suffix"#,
    r#"storage_security_support_days_remaining use base unit "seconds" instead of "days""#,
];

/// Checks an exposition: always with the built-in parser, and with `promtool check metrics`
/// as well when it is on PATH.
fn check_exposition(text: &str) -> Vec<PromSample> {
    let samples = parse_exposition(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("promtool is not on PATH: checked with the built-in parser only");
            return samples;
        }
        Err(e) => panic!("cannot run promtool: {e}"),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let report = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => {}
        // 3: lint findings only, the exposition itself parsed.
        Some(3) => {
            for finding in report.lines().filter(|l| !l.trim().is_empty()) {
                assert!(
                    SPEC_NAME_LINTS.contains(&finding),
                    "promtool: {finding}\n{text}"
                );
            }
        }
        other => panic!("promtool check metrics failed ({other:?}): {report}\n{text}"),
    }
    samples
}

fn sample<'a>(samples: &'a [PromSample], name: &str, host: &str) -> Option<&'a PromSample> {
    samples
        .iter()
        .find(|s| s.name == name && s.labels.get("host").map(String::as_str) == Some(host))
}

// ---------------------------------------------------------------------------------------------
// OTLP and agent-local checks

/// Parses the OTLP document and checks every data point's shape; returns it.
fn check_otlp(text: &str) -> Value {
    let doc: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let resources = doc["resourceMetrics"].as_array().expect("resourceMetrics");
    for resource in resources {
        let attributes = resource["resource"]["attributes"].as_array().unwrap();
        assert_eq!(attributes[0]["key"], "service.name");
        assert_eq!(
            attributes[0]["value"]["stringValue"],
            "check-storage-security"
        );
        assert_eq!(attributes[1]["key"], "host.name");
        let scope = &resource["scopeMetrics"][0];
        assert_eq!(scope["scope"]["name"], "check-storage-security");
        for metric in scope["metrics"].as_array().unwrap() {
            assert!(metric["name"].as_str().is_some(), "{metric}");
            assert!(metric["unit"].as_str().is_some(), "{metric}");
            for point in metric["gauge"]["dataPoints"].as_array().unwrap() {
                let time = point["timeUnixNano"].as_str().expect("string timeUnixNano");
                assert_eq!(time, NOW_NANOS);
                match (point.get("asInt"), point.get("asDouble")) {
                    (Some(Value::String(n)), None) => {
                        n.parse::<i64>().expect("asInt is an int64 string");
                    }
                    (None, Some(Value::Number(_))) => {}
                    other => panic!("data point value {other:?}"),
                }
                assert!(point["attributes"].as_array().is_some(), "{point}");
            }
        }
    }
    doc
}

/// The resource of `host` in an OTLP document.
fn otlp_resource<'a>(doc: &'a Value, host: &str) -> &'a Value {
    doc["resourceMetrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["resource"]["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["key"] == "host.name" && a["value"]["stringValue"] == host)
        })
        .unwrap_or_else(|| panic!("no resource for {host}"))
}

fn otlp_metric_names(resource: &Value) -> Vec<&str> {
    resource["scopeMetrics"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect()
}

/// One agent-local line split as Checkmk splits it: state, service name, metrics, detail.
fn split_local_line(line: &str) -> (&str, &str, &str, &str) {
    let (state, rest) = line.split_once(' ').expect("state");
    assert!(
        ["0", "1", "2", "3"].contains(&state),
        "state {state:?}: {line}"
    );
    let rest = rest.strip_prefix('"').expect("quoted service name");
    let (service, rest) = rest.split_once('"').expect("closing quote");
    assert!(
        !service.contains('\'') && !service.is_empty(),
        "service {service:?}"
    );
    let rest = rest
        .strip_prefix(' ')
        .expect("space after the service name");
    let (metrics, detail) = rest.split_once(' ').expect("metrics and detail");
    assert!(!metrics.is_empty() && !detail.is_empty(), "{line}");
    assert!(!line.chars().any(char::is_control), "{line:?}");
    if metrics != "-" {
        for metric in metrics.split('|') {
            let (name, values) = metric.split_once('=').expect("name=value");
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{metric}"
            );
            let fields: Vec<&str> = values.split(';').collect();
            assert!(fields.len() <= 5, "{metric}");
            let number = fields[0].trim_end_matches('s');
            // A number, or U for the rating of a host that could not be scanned.
            assert!(
                number.parse::<f64>().is_ok() || (name == "rating" && number == "U"),
                "{metric}"
            );
        }
    }
    (state, service, metrics, detail)
}

// ---------------------------------------------------------------------------------------------
// Golden outputs

#[test]
fn one_host_golden_outputs() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let host = fake.host_port();
    let hosts = [(host.as_str(), "<host>")];
    let ca = fake.ca_file();

    let (out, code) = run("one-metrics", &["-H", &host, "--format", "metrics"], &ca);
    assert_eq!(code, 0, "{out}");
    let samples = check_exposition(&out);
    let success = sample(&samples, "storage_security_scrape_success", &host).unwrap();
    assert_eq!(success.value, 1.0);
    let rating = sample(&samples, "storage_security_rating_score", &host).unwrap();
    assert_eq!(rating.labels["domain"], "127.0.0.1");
    assert_eq!(rating.labels["product"], "OpenCloud");
    assert_eq!(rating.labels["version"], "8.1.0");
    assert_golden("one-host.prom", &mask_hosts(&mask_metrics(&out), &hosts));

    let (out, code) = run("one-otlp", &["-H", &host, "--format", "otlp"], &ca);
    assert_eq!(code, 0, "{out}");
    check_otlp(&out);
    assert_golden("one-host.otlp.json", &mask_hosts(&mask_otlp(&out), &hosts));

    let (out, code) = run("one-local", &["-H", &host, "--format", "agentlocal"], &ca);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    let (state, service, _, _) = split_local_line(out.lines().next().unwrap());
    assert_eq!(
        (state, service),
        ("0", &*format!("Storage_Security_{host}"))
    );
    assert_golden(
        "one-host.agentlocal.txt",
        &mask_hosts(&mask_agentlocal(&out), &hosts),
    );

    let (out, code) = run("one-summary", &["-H", &host, "--format", "summary"], &ca);
    assert_eq!(code, 0, "{out}");
    assert_golden("one-host.summary.txt", &mask_summary(&out, &hosts));
}

#[test]
fn three_hosts_golden_outputs_with_a_failed_scan() {
    let ok = FakeInstance::start(healthy("8.1.0"));
    let eol = FakeInstance::start(healthy("7.3.0"));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let (ok_host, eol_host) = (ok.host_port(), eol.host_port());
    let list = format!("{ok_host},{eol_host},{down}");
    let hosts = [
        (ok_host.as_str(), "<host-ok>"),
        (eol_host.as_str(), "<host-eol>"),
        (down.as_str(), "<host-down>"),
    ];
    let ca = ok.ca_file();

    let (out, code) = run("three-metrics", &["-H", &list, "--format", "metrics"], &ca);
    assert_eq!(code, 2, "end of life is CRITICAL\n{out}");
    let samples = check_exposition(&out);
    let down_samples: Vec<&str> = samples
        .iter()
        .filter(|s| s.labels["host"] == down)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        down_samples,
        [
            "storage_security_scan_duration_seconds",
            "storage_security_scrape_success"
        ]
    );
    assert_eq!(
        sample(&samples, "storage_security_scrape_success", &down)
            .unwrap()
            .value,
        0.0
    );
    assert_eq!(
        sample(&samples, "storage_security_rating_score", &eol_host)
            .unwrap()
            .value,
        0.0
    );
    assert_golden("three-hosts.prom", &mask_hosts(&mask_metrics(&out), &hosts));

    let (out, code) = run("three-otlp", &["-H", &list, "--format", "otlp"], &ca);
    assert_eq!(code, 2, "{out}");
    let doc = check_otlp(&out);
    assert_eq!(doc["resourceMetrics"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        otlp_metric_names(otlp_resource(&doc, &down)),
        [
            "storage_security_scan_duration_seconds",
            "storage_security_scrape_success"
        ]
    );
    assert_golden(
        "three-hosts.otlp.json",
        &mask_hosts(&mask_otlp(&out), &hosts),
    );

    let (out, code) = run("three-local", &["-H", &list, "--format", "agentlocal"], &ca);
    assert_eq!(code, 2, "{out}");
    let states: Vec<&str> = out.lines().map(|l| split_local_line(l).0).collect();
    assert_eq!(states, ["0", "2", "3"], "{out}");
    assert_golden(
        "three-hosts.agentlocal.txt",
        &mask_hosts(&mask_agentlocal(&out), &hosts),
    );

    let (out, code) = run("three-summary", &["-H", &list, "--format", "summary"], &ca);
    assert_eq!(code, 2, "{out}");
    assert_golden("three-hosts.summary.txt", &mask_summary(&out, &hosts));
}

// ---------------------------------------------------------------------------------------------
// Exit codes

/// A failed scan is a metric value in the metrics formats: it does not raise the exit code
/// there (spec "Command line", `--format metrics`/`otlp`); the other formats keep UNKNOWN.
#[test]
fn a_failed_scan_exits_0_in_the_metrics_formats_only() {
    let ok = FakeInstance::start(healthy("8.1.0"));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let list = format!("{},{down}", ok.host_port());
    for (format, expected) in [
        ("metrics", 0),
        ("otlp", 0),
        ("agentlocal", 3),
        ("summary", 3),
    ] {
        let (out, code) = run(
            &format!("exit-{format}"),
            &["-H", &list, "--format", format],
            &ok.ca_file(),
        );
        assert_eq!(code, expected, "--format {format}\n{out}");
    }
    // Only failed scans: still 0, and the metrics say why.
    for format in ["metrics", "otlp"] {
        let (out, code) = run(
            &format!("exit-down-{format}"),
            &["-H", &down, "--format", format],
            &ok.ca_file(),
        );
        assert_eq!(code, 0, "--format {format}\n{out}");
        assert!(out.contains("storage_security_scrape_success"), "{out}");
    }
}

#[test]
fn warning_is_exit_1_in_every_metrics_format() {
    let fake = FakeInstance::start(healthy("4.0.5"));
    for format in ["metrics", "otlp", "agentlocal", "summary"] {
        let (out, code) = run(
            &format!("warning-{format}"),
            &["-H", &fake.host_port(), "--format", format],
            &fake.ca_file(),
        );
        assert_eq!(code, 1, "--format {format}\n{out}");
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile server text

/// Instances whose status document and headers carry quotes, backslashes, `|`, `=`, `<` and a
/// line break in text that reaches the outputs.
fn hostile_instances() -> (FakeInstance, FakeInstance) {
    let edition = FakeInstance::start(
        InstanceConfig::default()
            .status_override(
                r#"{"productname":"OpenCloud","productversion":"8.1.0","edition":"x\"y\\z"}"#,
            )
            .set_header("X-Web-Version", "8.1.0\"|=<x>"),
    );
    // A product name with a quote, a backslash, a line feed, `|` and `=`: recognised as
    // Infinite Scale, whose scan this version refuses with a message that quotes the name (so
    // it reaches every format as the failure text). Product labels of a completed scan are
    // escaped the same way; the renderers' unit tests cover them with hostile names.
    let name = FakeInstance::start(InstanceConfig::default().status_override(
        r#"{"productname":"Infinite Scale \"q\\z\n|=","productversion":"7.0.0+a-b.c","edition":"\"\n"}"#,
    ));
    (edition, name)
}

#[test]
fn hostile_server_text_breaks_no_format() {
    let (edition, name) = hostile_instances();
    let (a, b) = (edition.host_port(), name.host_port());
    let list = format!("{a},{b}");
    let ca = edition.ca_file();

    // What the scan read, from the JSON document.
    let (json, _) = run("hostile-json", &["-H", &list, "--format", "json"], &ca);
    let json: Value = serde_json::from_str(&json).unwrap();
    let product_of = |i: usize| {
        (
            json[i]["product"]["name"].as_str().map(str::to_string),
            json[i]["product"]["version"].as_str().map(str::to_string),
        )
    };

    let (out, _) = run(
        "hostile-metrics",
        &["-H", &list, "--format", "metrics"],
        &ca,
    );
    let samples = check_exposition(&out);
    for (i, host) in [&a, &b].into_iter().enumerate() {
        assert!(
            sample(&samples, "storage_security_scrape_success", host).is_some(),
            "{out}"
        );
        if let (Some(product), Some(version)) = product_of(i) {
            // Escaped on the way out, the same text after parsing.
            let rating = sample(&samples, "storage_security_rating_score", host).unwrap();
            assert_eq!(rating.labels["product"], product);
            assert_eq!(rating.labels["version"], version);
        }
    }

    let (out, _) = run("hostile-otlp", &["-H", &list, "--format", "otlp"], &ca);
    let doc = check_otlp(&out);
    for (i, host) in [&a, &b].into_iter().enumerate() {
        let resource = otlp_resource(&doc, host);
        if let (Some(product), _) = product_of(i) {
            let attributes = resource["resource"]["attributes"].as_array().unwrap();
            assert!(
                attributes
                    .iter()
                    .any(|a| a["key"] == "product" && a["value"]["stringValue"] == *product),
                "{resource}"
            );
        }
    }

    let (out, _) = run(
        "hostile-local",
        &["-H", &list, "--format", "agentlocal"],
        &ca,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    for (line, host) in lines.iter().zip([&a, &b]) {
        let (_, service, _, _) = split_local_line(line);
        assert_eq!(service, format!("Storage_Security_{host}"));
    }

    let (out, _) = run(
        "hostile-summary",
        &["-H", &list, "--format", "summary"],
        &ca,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "header, two rows, tally\n{out}");
    assert!(
        lines[1].starts_with(&a) && lines[2].starts_with(&b),
        "{out}"
    );
    assert!(lines[3].starts_with("2 host(s): "), "{out}");
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
}

// ---------------------------------------------------------------------------------------------
// Summary end to end

#[test]
fn summary_of_three_hosts_is_aligned_in_input_order() {
    let current = FakeInstance::start(healthy("8.1.0"));
    let ending = FakeInstance::start(healthy("4.0.5"));
    let eol = FakeInstance::start(healthy("7.3.0"));
    let hosts = [current.host_port(), ending.host_port(), eol.host_port()];
    let list = hosts.join(",");
    let (out, code) = run(
        "summary-e2e",
        &["-H", &list, "--format", "summary", "--eol-warning", "400"],
        &current.ca_file(),
    );
    assert_eq!(code, 2, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    let header = lines[0];
    let columns = ["HOST", "GRADE", "VERSION", "EOL", "VULNS", "NEW"];
    let starts: Vec<usize> = columns.iter().map(|c| header.find(c).unwrap()).collect();
    assert_eq!(starts[0], 0);
    let cells = |line: &str| -> Vec<String> {
        let chars: Vec<char> = line.chars().collect();
        starts
            .iter()
            .enumerate()
            .map(|(i, &start)| {
                // Every cell starts at its header's column, after a blank.
                assert!(start == 0 || chars[start - 1] == ' ', "{line}");
                assert_ne!(chars.get(start), Some(&' '), "{line}");
                let end = starts.get(i + 1).copied().unwrap_or(chars.len());
                chars[start..end.min(chars.len())]
                    .iter()
                    .collect::<String>()
                    .trim()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(cells(header), columns);
    let rows: Vec<Vec<String>> = lines[1..4].iter().map(|l| cells(l)).collect();
    let column = |i: usize| rows.iter().map(|r| r[i].as_str()).collect::<Vec<_>>();
    assert_eq!(
        column(0),
        hosts.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(column(2), ["8.1.0", "4.0.5", "7.3.0"]);
    assert_eq!(column(3), ["no", "soon", "YES"], "{out}");
    assert_eq!(column(5), ["-", "-", "-"]);
    assert_eq!(rows[2][1], "F", "{out}");
    assert_eq!(rows[0][4], "0", "{out}");
    assert!(rows[1][4].parse::<u32>().is_ok(), "{out}");
    assert!(
        lines[4].starts_with("3 host(s): 1 CRITICAL, 1 WARNING, 1 OK"),
        "{out}"
    );
}

#[test]
fn a_host_named_twice_is_one_series() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let host = fake.host_port();
    let list = format!("{host},https://{host}");
    let (out, _) = run(
        "twice-metrics",
        &["-H", &list, "--format", "metrics"],
        &fake.ca_file(),
    );
    let samples = check_exposition(&out);
    assert_eq!(
        samples
            .iter()
            .filter(|s| s.name == "storage_security_scrape_success")
            .count(),
        1,
        "{out}"
    );
}

/// The built-in parser is what stands when promtool is missing: it must refuse what
/// Prometheus refuses.
#[test]
fn the_exposition_parser_refuses_broken_text() {
    let head = "# HELP m help\n# TYPE m gauge\n";
    let ok = format!("{head}m{{host=\"a\\\"b\\\\c\\nd\"}} 1\nm{{host=\"x\"}} -2.5\n");
    let samples = parse_exposition(&ok).unwrap();
    assert_eq!(samples[0].labels["host"], "a\"b\\c\nd");
    for broken in [
        format!("{head}m{{host=\"a\"b\"}} 1\n"),
        format!("{head}m{{host=\"a\\x\"}} 1\n"),
        format!("{head}m{{host=\"a\"}} 1\nm{{host=\"a\"}} 2\n"),
        format!("{head}m{{host=\"a\"}} one\n"),
        format!("{head}m{{host=\"a\"}} 1"),
        "# TYPE m gauge\nm 1\n".to_string(),
        format!("{head}m 1\n# HELP m again\n"),
        format!("{head}m 1\n# HELP n h\n# TYPE n gauge\nn 1\nm{{a=\"b\"}} 1\n"),
        format!("{head}m{{1a=\"b\"}} 1\n"),
        format!("{head}m{{a=\"b\",a=\"c\"}} 1\n"),
        format!("{head}\nm 1\n"),
    ] {
        assert!(parse_exposition(&broken).is_err(), "accepted {broken:?}");
    }
}
