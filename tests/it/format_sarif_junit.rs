//! `--format sarif` and `--format junit` end to end: golden documents for one host and for
//! three hosts of mixed states (one of them a closed port), hostile server strings that must
//! come through as data, the SARIF structure code scanning relies on, and exit codes.
//!
//! Goldens live in `tests/fixtures/golden/sarif-junit/`, compared after masking what varies
//! between runs (ports, durations, certificate day counts, the tool version, rule positions).
//! Regenerate them with `COS_BLESS_GOLDEN=1 cargo nextest run -E 'test(/^format_sarif_junit::/)'`.

use crate::support::{FakeInstance, InstanceConfig};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const NOW: &str = crate::support::PINNED_NOW;

fn healthy(version: &str) -> InstanceConfig {
    InstanceConfig::default()
        .version(version)
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
}

/// A default install: demo accounts, CORS for any origin, version headers (WARNING).
fn default_install() -> InstanceConfig {
    InstanceConfig::default().version("8.1.0")
}

struct Run {
    stdout: String,
    code: i32,
}

fn run(name: &str, args: &[&str], ca: &Path) -> Run {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sarif-junit-{name}"));
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
    Run {
        stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
        code: output.status.code().unwrap(),
    }
}

// ---------------------------------------------------------------------------------------------
// Normalising and golden files

/// Replaces `:<port>` (not followed by another digit) with `:<label>`.
fn mask_port(text: &str, port: u16, label: &str) -> String {
    let needle = format!(":{port}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&needle) {
        let after = &rest[at + needle.len()..];
        out.push_str(&rest[..at]);
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            out.push_str(&needle);
        } else {
            out.push(':');
            out.push_str(label);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Replaces the number before every ` day(s)` (certificate lifetimes follow the real clock
/// the test certificates were made with, not `COS_NOW`).
fn mask_days(text: &str) -> String {
    mask_count_before(&mask_count_before(text, " more day(s)"), " day(s)")
}

/// Replaces the digits right before every `marker` with `N`.
fn mask_count_before(text: &str, marker: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let before = &rest[..at];
        let digits = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
        out.push_str(&before[..before.len() - digits]);
        out.push_str(if digits > 0 { "N" } else { "" });
        out.push_str(marker);
        rest = &rest[at + marker.len()..];
    }
    out.push_str(rest);
    out
}

/// Replaces the value of every `time="..."` attribute other than `time="0"`.
fn mask_times(text: &str) -> String {
    let marker = " time=\"";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        out.push_str(&rest[..at + marker.len()]);
        rest = &rest[at + marker.len()..];
        let end = rest.find('"').expect("closing quote of time");
        let value = &rest[..end];
        out.push_str(if value == "0" { "0" } else { "SECONDS" });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn mask_ports(text: &str, ports: &[(u16, &str)]) -> String {
    ports.iter().fold(text.to_string(), |t, (port, label)| {
        mask_port(&t, *port, label)
    })
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The SARIF log with everything that varies masked. Fingerprints are checked against
/// `sha256(<host>|<finding id>)` before they are masked.
fn normalise_sarif(text: &str, ports: &[(u16, &str)]) -> String {
    let mut doc: Value = serde_json::from_str(text).expect("SARIF is JSON");
    let run = &mut doc["runs"][0];
    let driver = &mut run["tool"]["driver"];
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    driver["version"] = "TOOL_VERSION".into();
    driver["semanticVersion"] = "TOOL_VERSION".into();
    // The rules are the registry (checked by `sarif_structure_...`); leaving them out keeps the
    // golden independent of checks that never fail here.
    driver["rules"] = "REGISTRY_RULES".into();
    for result in run["results"].as_array_mut().unwrap() {
        let host = result["locations"][0]["logicalLocations"][0]["name"]
            .as_str()
            .unwrap()
            .to_string();
        let id = result["properties"]["findingId"]
            .as_str()
            .unwrap()
            .to_string();
        let print = &mut result["partialFingerprints"]["primaryLocationLineHash"];
        assert_eq!(
            print.as_str(),
            Some(sha256_hex(&format!("{host}|{id}")).as_str())
        );
        *print = "SHA256(HOST|ID)".into();
        result["ruleIndex"] = "RULE_INDEX".into();
    }
    let mut out = serde_json::to_string_pretty(&doc).unwrap();
    out.push('\n');
    mask_days(&mask_ports(&out, ports))
}

fn normalise_junit(text: &str, ports: &[(u16, &str)]) -> String {
    mask_days(&mask_times(&mask_ports(text, ports)))
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden/sarif-junit")
}

fn blessing() -> bool {
    std::env::var("COS_BLESS_GOLDEN").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// Compares with the golden file, or writes it when `COS_BLESS_GOLDEN=1`.
fn assert_golden(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if blessing() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with COS_BLESS_GOLDEN=1 to create it\n{actual}",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from line {}:\n  golden: {:?}\n  actual: {:?}\n\
             (COS_BLESS_GOLDEN=1 regenerates the goldens)\n--- actual ---\n{actual}",
            path.display(),
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the documents back

/// Every event of an XML document, read to the end; panics on any reader error.
fn xml_events(xml: &str) -> Vec<Event<'static>> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => return out,
            Ok(event) => out.push(event.into_owned()),
            Err(e) => panic!("XML error at {}: {e}\n{xml}", reader.error_position()),
        }
    }
}

fn attributes(tag: &BytesStart) -> BTreeMap<String, String> {
    tag.attributes()
        .map(|a| {
            let a = a.expect("well-formed attribute");
            (
                String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                a.unescape_value().expect("valid escapes").into_owned(),
            )
        })
        .collect()
}

/// An element as read back: name, attributes, text, children.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: BTreeMap<String, String>,
    text: String,
    children: Vec<Element>,
}

impl Element {
    fn all(&self, name: &str) -> Vec<&Element> {
        self.children.iter().filter(|c| c.name == name).collect()
    }

    fn attr(&self, key: &str) -> &str {
        self.attrs
            .get(key)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("{} has no {key}: {:?}", self.name, self.attrs))
    }

    fn count(&self, key: &str) -> usize {
        self.attr(key).parse().unwrap()
    }
}

/// The document tree, built from the reader's events.
fn xml_tree(xml: &str) -> Element {
    let mut stack = vec![Element::default()];
    for event in xml_events(xml) {
        match event {
            Event::Start(tag) => stack.push(Element {
                name: String::from_utf8(tag.name().as_ref().to_vec()).unwrap(),
                attrs: attributes(&tag),
                ..Element::default()
            }),
            Event::Empty(tag) => stack.last_mut().unwrap().children.push(Element {
                name: String::from_utf8(tag.name().as_ref().to_vec()).unwrap(),
                attrs: attributes(&tag),
                ..Element::default()
            }),
            Event::End(_) => {
                let done = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(done);
            }
            Event::Text(text) => {
                let text = text.xml10_content().expect("UTF-8 text").into_owned();
                stack.last_mut().unwrap().text.push_str(&text);
            }
            Event::GeneralRef(reference) => {
                let name = reference.decode().unwrap().into_owned();
                let resolved = match name.as_str() {
                    "lt" => "<".to_string(),
                    "gt" => ">".to_string(),
                    "amp" => "&".to_string(),
                    "apos" => "'".to_string(),
                    "quot" => "\"".to_string(),
                    other => {
                        let ch = reference
                            .resolve_char_ref()
                            .expect("valid character reference")
                            .unwrap_or_else(|| panic!("unknown entity &{other};"));
                        ch.to_string()
                    }
                };
                stack.last_mut().unwrap().text.push_str(&resolved);
            }
            Event::Decl(_) | Event::Comment(_) | Event::CData(_) | Event::PI(_) => {}
            Event::DocType(_) => panic!("no DOCTYPE expected"),
            Event::Eof => unreachable!(),
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements");
    let mut root = stack.pop().unwrap();
    assert_eq!(root.children.len(), 1, "one root element");
    root.children.pop().unwrap()
}

/// The JUnit document read back, with every count checked against the cases; it validates
/// against Jenkins' junit-10.xsd (`tests/it/format_junit_xsd.rs` has the details).
fn check_junit(xml: &str) -> Element {
    crate::support::junit_xsd::assert_valid("format_sarif_junit", xml);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    assert!(
        !xml.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "no control characters"
    );
    let root = xml_tree(xml);
    assert_eq!(root.name, "testsuites");
    assert_eq!(root.attr("name"), "check-storage-security");
    let mut totals = [0usize; 4];
    for suite in root.all("testsuite") {
        let cases = suite.all("testcase");
        let with = |name: &str| cases.iter().filter(|c| !c.all(name).is_empty()).count();
        let counts = [cases.len(), with("failure"), with("skipped"), with("error")];
        assert_eq!(
            counts,
            [
                suite.count("tests"),
                suite.count("failures"),
                suite.count("skipped"),
                suite.count("errors")
            ],
            "counts of suite {}",
            suite.attr("name")
        );
        for case in &cases {
            let outcomes = ["failure", "skipped", "error"]
                .iter()
                .map(|n| case.all(n).len())
                .sum::<usize>();
            assert!(outcomes <= 1, "{case:?}");
            assert_eq!(case.attr("time"), "0");
        }
        let rating: Vec<_> = cases
            .iter()
            .filter(|c| c.attr("name") == "rating")
            .collect();
        assert_eq!(rating.len(), 1, "one rating case per suite");
        assert_eq!(suite.attr("timestamp"), NOW);
        for (total, n) in totals.iter_mut().zip(counts) {
            *total += n;
        }
    }
    // junit-10.xsd allows no skipped total on testsuites: the suites carry it.
    assert!(!root.attrs.contains_key("skipped"), "{:?}", root.attrs);
    assert_eq!(
        [totals[0], totals[1], totals[3]],
        [
            root.count("tests"),
            root.count("failures"),
            root.count("errors")
        ],
        "counts of testsuites"
    );
    root
}

fn suite<'a>(root: &'a Element, host: &str) -> &'a Element {
    root.all("testsuite")
        .into_iter()
        .find(|s| s.attr("name") == host)
        .unwrap_or_else(|| panic!("no suite {host}"))
}

fn case<'a>(suite: &'a Element, name: &str) -> &'a Element {
    suite
        .all("testcase")
        .into_iter()
        .find(|c| c.attr("name") == name)
        .unwrap_or_else(|| panic!("no case {name}"))
}

fn sarif_results(doc: &Value) -> &Vec<Value> {
    doc["runs"][0]["results"].as_array().unwrap()
}

/// The SARIF result of a finding on a host.
fn sarif_result<'a>(doc: &'a Value, host: &str, id: &str) -> &'a Value {
    sarif_results(doc)
        .iter()
        .find(|r| {
            r["properties"]["findingId"] == id
                && r["locations"][0]["logicalLocations"][0]["name"] == host
        })
        .unwrap_or_else(|| panic!("no result {id} on {host}"))
}

/// What code scanning relies on: rules resolve, levels are valid, locations are present.
fn check_sarif_structure(doc: &Value) {
    assert_eq!(doc["version"], "2.1.0");
    assert_eq!(
        doc["$schema"],
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "check-storage-security");
    let rules = driver["rules"].as_array().unwrap();
    let levels = ["none", "note", "warning", "error"];
    let mut ids = std::collections::HashSet::new();
    for rule in rules {
        let id = rule["id"].as_str().unwrap();
        assert!(ids.insert(id), "rule {id} twice");
        assert!(levels.contains(&rule["defaultConfiguration"]["level"].as_str().unwrap()));
        assert!(rule["shortDescription"]["text"].is_string());
        assert!(rule["help"]["text"].is_string());
        let score: f64 = rule["properties"]["security-severity"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((0.0..=10.0).contains(&score));
    }
    for result in sarif_results(doc) {
        let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert!(index < rules.len(), "{result}");
        assert_eq!(rules[index]["id"], result["ruleId"], "{result}");
        assert!(
            levels.contains(&result["level"].as_str().unwrap()),
            "{result}"
        );
        assert!(result["message"]["text"].is_string());
        let location = &result["locations"][0];
        let uri = location["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(
            uri.starts_with("https://") || uri.starts_with("http://"),
            "{uri}"
        );
        assert_eq!(location["logicalLocations"][0]["kind"], "resource");
        let print = result["partialFingerprints"]["primaryLocationLineHash"]
            .as_str()
            .unwrap();
        assert_eq!(print.len(), 64);
    }
}

/// Fingerprint of every result, by (host, finding id).
fn fingerprints(doc: &Value) -> BTreeMap<(String, String), String> {
    sarif_results(doc)
        .iter()
        .map(|r| {
            (
                (
                    r["locations"][0]["logicalLocations"][0]["name"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    r["properties"]["findingId"].as_str().unwrap().to_string(),
                ),
                r["partialFingerprints"]["primaryLocationLineHash"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn one_host_matches_the_goldens() {
    let fake = FakeInstance::start(default_install());
    let host = fake.host_port();
    let ports = [(fake.port(), "PORT")];
    let args = ["-H", host.as_str(), "--check-hardening"];

    let sarif = run(
        "one-sarif",
        &[&args[..], &["--format", "sarif"]].concat(),
        &fake.ca_file(),
    );
    assert_eq!(sarif.code, 1, "WARNING under SARIF\n{}", sarif.stdout);
    let doc: Value = serde_json::from_str(&sarif.stdout).unwrap();
    check_sarif_structure(&doc);
    let demo = sarif_result(&doc, &host, "demoUsersDisabled");
    assert_eq!(demo["level"], "error");
    assert_eq!(
        doc["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
    assert_golden(
        "one-host.sarif.json",
        &normalise_sarif(&sarif.stdout, &ports),
    );

    let junit = run(
        "one-junit",
        &[&args[..], &["--format", "junit"]].concat(),
        &fake.ca_file(),
    );
    assert_eq!(junit.code, 1, "WARNING under JUnit\n{}", junit.stdout);
    let root = check_junit(&junit.stdout);
    let rating = case(suite(&root, &host), "rating");
    assert!(
        rating.all("failure")[0]
            .attr("message")
            .starts_with("rating D (2): "),
        "{rating:?}"
    );
    assert_golden(
        "one-host.junit.xml",
        &normalise_junit(&junit.stdout, &ports),
    );
}

#[test]
fn three_hosts_of_mixed_states_match_the_goldens() {
    let ok = FakeInstance::start(healthy("8.1.0"));
    // Its proxy reflects the request's Origin with credentials: a failing check to waive.
    let critical = FakeInstance::start(default_install().version("4.0.0").set_header(
        "Access-Control-Allow-Origin",
        storage_security::probe::plan::FOREIGN_ORIGIN,
    ));
    let down_port = crate::support::closed_port();
    let down = format!("127.0.0.1:{down_port}");
    let hosts = format!("{},{},{down}", ok.host_port(), critical.host_port());
    let ports = [
        (ok.port(), "PORT_OK"),
        (critical.port(), "PORT_CRITICAL"),
        (down_port, "PORT_DOWN"),
    ];
    // A waived finding shows as a suppressed result and a skipped case. No --check-hardening:
    // missing hardening would turn the OK host into a WARNING.
    let args = [
        "-H",
        hosts.as_str(),
        "--ignore-hardening",
        "corsOriginRestricted",
    ];

    let sarif = run(
        "three-sarif",
        &[&args[..], &["--format", "sarif"]].concat(),
        &ok.ca_file(),
    );
    assert_eq!(sarif.code, 2, "CRITICAL wins under SARIF\n{}", sarif.stdout);
    let doc: Value = serde_json::from_str(&sarif.stdout).unwrap();
    check_sarif_structure(&doc);
    let invocation = &doc["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["level"], "error");
    let note = notes[0]["message"]["text"].as_str().unwrap();
    assert!(note.starts_with(&format!("cannot scan {down}: ")), "{note}");
    let waived = sarif_result(&doc, &critical.host_port(), "corsOriginRestricted");
    assert_eq!(waived["suppressions"][0]["kind"], "external");
    assert_eq!(
        waived["suppressions"][0]["justification"],
        "waived by the operator"
    );
    let vulnerabilities: Vec<&Value> = sarif_results(&doc)
        .iter()
        .filter(|r| r["ruleId"] == "vulnerability")
        .collect();
    assert!(!vulnerabilities.is_empty(), "4.0.0 has advisories");
    for v in vulnerabilities {
        assert!(
            !v["properties"]["affectedVersions"]
                .as_array()
                .unwrap()
                .is_empty()
        );
        assert!(v["properties"]["fixedIn"].is_string(), "{v}");
    }
    // Members of a family use the family root's rule.
    let disclosure = sarif_result(
        &doc,
        &critical.host_port(),
        "versionDisclosure:X-Web-Version",
    );
    assert_eq!(disclosure["ruleId"], "versionDisclosure");
    assert_golden(
        "three-hosts.sarif.json",
        &normalise_sarif(&sarif.stdout, &ports),
    );

    let junit = run(
        "three-junit",
        &[&args[..], &["--format", "junit"]].concat(),
        &ok.ca_file(),
    );
    assert_eq!(junit.code, 2, "CRITICAL wins under JUnit\n{}", junit.stdout);
    let root = check_junit(&junit.stdout);
    let names: Vec<&str> = root
        .all("testsuite")
        .iter()
        .map(|s| s.attr("name"))
        .collect();
    assert_eq!(names, [ok.host_port(), critical.host_port(), down.clone()]);
    let ok_rating = case(suite(&root, &ok.host_port()), "rating");
    assert!(ok_rating.children.is_empty(), "OK passes: {ok_rating:?}");
    let critical_rating = case(suite(&root, &critical.host_port()), "rating");
    assert_eq!(critical_rating.all("failure")[0].attr("type"), "CRITICAL");
    let down_suite = suite(&root, &down);
    assert_eq!(
        down_suite.all("testcase").len(),
        1,
        "a failed scan has only the rating"
    );
    assert_eq!(down_suite.count("errors"), 1);
    let error = &case(down_suite, "rating").all("error")[0];
    assert!(
        error
            .attr("message")
            .starts_with("rating U (unknown): cannot scan ")
    );
    let waived = case(suite(&root, &critical.host_port()), "corsOriginRestricted");
    assert!(
        waived.all("skipped")[0]
            .attr("message")
            .starts_with("waived by the operator: ")
    );
    assert_golden(
        "three-hosts.junit.xml",
        &normalise_junit(&junit.stdout, &ports),
    );
}

#[test]
fn hostile_server_strings_come_through_as_data() {
    let edition = "<b>&\"|=\n\u{e9}";
    let header = "8.1.0<script>\"&|=";
    let status = serde_json::json!({
        "installed": true,
        "maintenance": false,
        "needsDbUpgrade": false,
        "version": "0.1.0.0",
        "versionstring": "0.1.0",
        "edition": edition,
        "productname": "OpenCloud",
        "product": "OpenCloud",
        "productversion": "8.1.0",
    });
    let fake = FakeInstance::start(
        default_install()
            .status_override(status.to_string())
            .set_header("X-Web-Version", header),
    );
    let host = fake.host_port();
    // The status probe turns control characters into spaces before anything is reported.
    let reported_edition = "<b>&\"|= \u{e9}";
    let disclosure = format!("X-Web-Version: {header}");

    let sarif = run(
        "hostile-sarif",
        &["-H", &host, "--format", "sarif"],
        &fake.ca_file(),
    );
    assert_eq!(sarif.code, 1, "{}", sarif.stdout);
    let doc: Value = serde_json::from_str(&sarif.stdout).expect("valid JSON");
    check_sarif_structure(&doc);
    let hosts = &doc["runs"][0]["properties"]["hosts"];
    assert_eq!(hosts[0]["edition"], reported_edition);
    let result = sarif_result(&doc, &host, "versionDisclosure:X-Web-Version");
    assert_eq!(
        result["message"]["text"],
        format!("versionDisclosure:X-Web-Version: {disclosure} (host {host})")
    );
    assert!(
        !sarif.stdout.contains("<script>\"&"),
        "the quote is escaped by serde_json"
    );

    let junit = run(
        "hostile-junit",
        &["-H", &host, "--format", "junit"],
        &fake.ca_file(),
    );
    assert_eq!(junit.code, 1, "{}", junit.stdout);
    let root = check_junit(&junit.stdout);
    let suite = suite(&root, &host);
    let properties = &suite.all("properties")[0];
    let edition_property = properties
        .all("property")
        .into_iter()
        .find(|p| p.attr("name") == "edition")
        .expect("edition property");
    assert_eq!(edition_property.attr("value"), reported_edition);
    let failure = &case(suite, "versionDisclosure:X-Web-Version").all("failure")[0];
    assert_eq!(failure.attr("message"), disclosure);
    assert_eq!(failure.attr("type"), "low");
    assert!(
        failure
            .text
            .starts_with("Strip the X-Web-Version header at the reverse proxy"),
        "{failure:?}"
    );
    assert!(!junit.stdout.contains("<script>"), "escaped by quick-xml");
}

#[test]
fn sarif_fingerprints_are_stable_between_runs() {
    let fake = FakeInstance::start(default_install().version("4.0.0"));
    let host = fake.host_port();
    let first = run(
        "stable-1",
        &["-H", &host, "--format", "sarif"],
        &fake.ca_file(),
    );
    let second = run(
        "stable-2",
        &["-H", &host, "--format", "sarif"],
        &fake.ca_file(),
    );
    let first: Value = serde_json::from_str(&first.stdout).unwrap();
    let second: Value = serde_json::from_str(&second.stdout).unwrap();
    check_sarif_structure(&first);
    let a = fingerprints(&first);
    assert!(a.len() >= 4, "{a:?}");
    assert_eq!(a, fingerprints(&second));
    let distinct: std::collections::HashSet<&String> = a.values().collect();
    assert_eq!(distinct.len(), a.len(), "one fingerprint per finding");
    for ((host, id), print) in &a {
        assert_eq!(*print, sha256_hex(&format!("{host}|{id}")));
    }
}

#[test]
fn exit_codes_keep_their_meaning_under_both_formats() {
    let ok = FakeInstance::start(healthy("8.1.0"));
    let warning = FakeInstance::start(default_install());
    let critical = FakeInstance::start(healthy("7.3.0"));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let cases = [
        ("ok", ok.host_port(), 0),
        ("warning", warning.host_port(), 1),
        ("critical", critical.host_port(), 2),
        ("unknown", down, 3),
    ];
    for format in ["sarif", "junit"] {
        for (name, host, code) in &cases {
            let out = run(
                &format!("exit-{format}-{name}"),
                &["-H", host, "--format", format],
                &ok.ca_file(),
            );
            assert_eq!(out.code, *code, "{format} {name}\n{}", out.stdout);
            match format {
                "sarif" => {
                    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
                    check_sarif_structure(&doc);
                    assert_eq!(
                        doc["runs"][0]["invocations"][0]["executionSuccessful"],
                        *code != 3
                    );
                }
                _ => {
                    let root = check_junit(&out.stdout);
                    let rating = case(root.all("testsuite")[0], "rating");
                    let outcome: Vec<&str> =
                        rating.children.iter().map(|c| c.name.as_str()).collect();
                    let expected: &[&str] = match code {
                        0 => &[],
                        3 => &["error"],
                        _ => &["failure"],
                    };
                    assert_eq!(outcome, expected, "{name}");
                }
            }
        }
    }
}

#[test]
fn the_normaliser_masks_only_what_varies() {
    assert_eq!(
        mask_port("https://127.0.0.1:4433/ and :44330 and :4433", 4433, "P"),
        "https://127.0.0.1:P/ and :44330 and :P"
    );
    assert_eq!(
        mask_days("valid for 364 more day(s), 5 day(s)"),
        "valid for N more day(s), N day(s)"
    );
    assert_eq!(
        mask_times("<a time=\"0.123\"><b time=\"0\"/>"),
        "<a time=\"SECONDS\"><b time=\"0\"/>"
    );
}
