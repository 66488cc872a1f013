//! `--format junit` validates against Jenkins' `junit-10.xsd`, the schema of the xunit plugin
//! and of most strict JUnit consumers (vendored in `tests/fixtures/xsd/`), checked by a real
//! XSD validator (`xmllint --schema`, `make deps` installs it; without it these tests fail).
//!
//! Documents come from the plugin scanning fake instances on loopback (one host; three hosts
//! with an OK, a CRITICAL with failures of every severity and a waived finding, and a closed
//! port; a failed scan alone; hostile server text) and from the renderer fed text no scan
//! produces (raw control characters, `]]>`, non-characters, odd durations).

use crate::support::junit_xsd::{assert_valid, validate};
use crate::support::plugin::{self, healthy};
use crate::support::{FakeInstance, InstanceConfig};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use std::collections::BTreeSet;
use storage_security::checks;
use storage_security::knowledge::ProductFamily;
use storage_security::output::junit;
use storage_security::report::{Product, RatingLimit, Role, ScanResult, State, Status};
use storage_security::severity::Severity;

/// A default install: demo accounts, CORS for any origin, version headers (WARNING).
fn default_install() -> InstanceConfig {
    InstanceConfig::default().version("8.1.0")
}

/// Scans `hosts` as JUnit and checks the exit code; the document.
fn junit(name: &str, hosts: &str, ca: &FakeInstance, extra: &[&str], code: i32) -> String {
    let args = [&["--format", "junit"], extra].concat();
    let run = plugin::scan(name, hosts, ca, &args);
    assert_eq!(run.code, code, "{name}\n{}", run.stdout);
    run.stdout
}

/// Every start tag of a document with its unescaped attributes, in order.
fn tags(xml: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    let attributes = |tag: &BytesStart| {
        tag.attributes()
            .map(|a| {
                let a = a.expect("well-formed attribute");
                (
                    String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                    a.unescape_value().expect("valid escapes").into_owned(),
                )
            })
            .collect::<Vec<_>>()
    };
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => return out,
            Ok(Event::Start(tag)) | Ok(Event::Empty(tag)) => out.push((
                String::from_utf8(tag.name().as_ref().to_vec()).unwrap(),
                attributes(&tag),
            )),
            Ok(_) => {}
            Err(e) => panic!("XML error at {}: {e}\n{xml}", reader.error_position()),
        }
    }
}

fn attr<'a>(attributes: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attributes
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The attributes of the outcome element (`failure`, `skipped`, `error`) of the first test
/// case named `case`, if it has one.
fn outcome<'a>(
    tags: &'a [(String, Vec<(String, String)>)],
    case: &str,
) -> Option<(&'a str, &'a [(String, String)])> {
    let at = tags
        .iter()
        .position(|(n, a)| n == "testcase" && attr(a, "name") == Some(case))
        .unwrap_or_else(|| panic!("no test case {case}"));
    tags.get(at + 1)
        .filter(|(n, _)| matches!(n.as_str(), "failure" | "skipped" | "error"))
        .map(|(n, a)| (n.as_str(), a.as_slice()))
}

#[test]
fn one_host_validates() {
    let fake = FakeInstance::start(default_install());
    let xml = junit(
        "xsd-one",
        &fake.host_port(),
        &fake,
        &["--check-hardening"],
        1,
    );
    assert_valid("one-host", &xml);
    let tags = tags(&xml);
    let (kind, rating) = outcome(&tags, "rating").expect("WARNING fails the rating case");
    assert_eq!(kind, "failure");
    assert_eq!(attr(rating, "type"), Some("WARNING"));
}

#[test]
fn three_hosts_with_a_failed_scan_validate() {
    let ok = FakeInstance::start(healthy("8.1.0"));
    // Its proxy reflects the request's Origin with credentials: a failing check to waive.
    let critical = FakeInstance::start(default_install().version("4.0.0").set_header(
        "Access-Control-Allow-Origin",
        storage_security::probe::plan::FOREIGN_ORIGIN,
    ));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let hosts = format!("{},{},{down}", ok.host_port(), critical.host_port());
    let xml = junit(
        "xsd-three",
        &hosts,
        &ok,
        &["--ignore-hardening", "corsOriginRestricted"],
        2,
    );
    assert_valid("three-hosts", &xml);

    let tags = tags(&xml);
    let suites: Vec<&str> = tags
        .iter()
        .filter(|(n, _)| n == "testsuite")
        .map(|(_, a)| attr(a, "name").unwrap())
        .collect();
    assert_eq!(suites, [ok.host_port(), critical.host_port(), down.clone()]);
    // Failures of every severity, a waived finding, a passed and an errored rating case.
    let severities: BTreeSet<&str> = tags
        .iter()
        .filter(|(n, _)| n == "failure")
        .filter_map(|(_, a)| attr(a, "type"))
        .collect();
    for severity in ["low", "medium", "high", "critical", "CRITICAL"] {
        assert!(severities.contains(severity), "{severity}: {severities:?}");
    }
    assert!(
        tags.iter().any(|(n, a)| n == "skipped"
            && attr(a, "message").is_some_and(|m| m.starts_with("waived by the operator: "))),
        "a waived finding"
    );
    let ratings: Vec<Option<&str>> = tags
        .iter()
        .enumerate()
        .filter(|(_, (n, a))| n == "testcase" && attr(a, "name") == Some("rating"))
        .map(|(i, _)| {
            tags.get(i + 1)
                .filter(|(n, _)| n != "testcase" && n != "testsuite")
                .map(|(n, _)| n.as_str())
        })
        .collect();
    assert_eq!(ratings, [None, Some("failure"), Some("error")]);
}

#[test]
fn a_failed_scan_alone_validates() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let xml = junit("xsd-down", &down, &fake, &[], 3);
    assert_valid("failed-scan", &xml);
    let tags = tags(&xml);
    assert_eq!(
        tags.iter().filter(|(n, _)| n == "testcase").count(),
        1,
        "only the rating case"
    );
    assert_eq!(outcome(&tags, "rating").unwrap().0, "error");
}

#[test]
fn hostile_server_text_validates() {
    // Control characters (as JSON escapes), the end of a CDATA section, quotes and markup in
    // the status document; the same in a version header; bytes that are not UTF-8 in another.
    let edition = "\u{1b}[31m<b>]]>&\"'\u{7}\u{0}|\r\n\u{e9}";
    let header = "8.1.0 ]]><script>\"'&";
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
            .set_header("X-Web-Version", header)
            .remove_header("Server")
            .add_raw_header("Server", b"nginx/1.25.3 \xff\xfe\xc3(]]>".to_vec()),
    );
    let host = fake.host_port();
    let xml = junit("xsd-hostile", &host, &fake, &["--check-hardening"], 1);
    assert_valid("hostile", &xml);

    let tags = tags(&xml);
    let (_, web) = outcome(&tags, "versionDisclosure:X-Web-Version").expect("a failure");
    assert_eq!(
        attr(web, "message"),
        Some(format!("X-Web-Version: {header}").as_str())
    );
    let (_, server) = outcome(&tags, "versionDisclosure:Server").expect("a failure");
    let message = attr(server, "message").unwrap();
    assert!(
        message.starts_with("Server: nginx/1.25.3 \u{fffd}") && message.ends_with("(]]>"),
        "the bytes that are not UTF-8 became U+FFFD: {message:?}"
    );
    let edition_property = tags
        .iter()
        .find(|(n, a)| n == "property" && attr(a, "name") == Some("edition"))
        .map(|(_, a)| attr(a, "value").unwrap())
        .expect("edition property");
    assert!(
        edition_property.contains("<b>]]>&\"'") && !edition_property.chars().any(char::is_control),
        "{edition_property:?}"
    );
}

/// Every string that reaches the document, hostile, through the renderer directly: the
/// plugin cleans server text before it is reported, the renderer must not rely on it.
#[test]
fn hostile_text_in_every_field_validates() {
    let nasty = "]]><x a=\"1\" b='2'>&amp;\u{0}\u{1}\u{7}\u{8}\u{b}\u{c}\u{1b}\u{7f}\u{85}\r\n\r\t\
                 \u{fffe}\u{ffff}\u{fffd}\u{d7ff}\u{e000}\u{10ffff}\u{2028}é";
    let text = |what: &str| format!("{what} {nasty}");
    let host = text("host");
    let mut findings = Vec::new();
    let severities = [
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];
    let statuses = [
        Status::Passed,
        Status::Failed,
        Status::Indeterminate,
        Status::NetworkLimited,
        Status::Skipped,
    ];
    for (i, status) in statuses.into_iter().enumerate() {
        for (j, role) in [
            Role::Check,
            Role::Hardening,
            Role::Version,
            Role::Observation,
        ]
        .into_iter()
        .enumerate()
        {
            for ignored in [false, true] {
                let mut f =
                    checks::finding_for("corsOriginRestricted", status, text("detail")).unwrap();
                f.id = text("id");
                f.role = role;
                f.severity = severities[(i + j) % severities.len()];
                f.remediation = text("remediation");
                f.documentation = Some(text("documentation"));
                f.ignored = ignored;
                findings.push(f);
            }
        }
    }
    let mut results = Vec::new();
    for (n, state) in [State::Ok, State::Warning, State::Critical, State::Unknown]
        .into_iter()
        .enumerate()
    {
        let mut r = ScanResult::failed(
            host.clone(),
            text("error"),
            3,
            "2026-11-22T03:00:00Z".parse().unwrap(),
            [0.0, 1234.56789, f64::NAN, f64::INFINITY][n],
            true,
            3,
            1,
        );
        r.state = state;
        r.message = text("message");
        if state != State::Unknown {
            r.error = None;
            r.url = Some(text("url"));
            r.rating = Some(4 - n as u8);
            r.grade = "C".into();
            r.product = Some(Product {
                family: ProductFamily::OpenCloud,
                name: text("name"),
                version: text("version"),
                legacy_version: None,
                edition: Some(text("edition")),
            });
            r.findings = findings.clone();
            r.rating_explanation.starting_reason = text("reason");
            r.rating_explanation.limits = vec![RatingLimit {
                id: text("limit"),
                severity: Severity::High,
                cap: 2,
            }];
            r.rating_explanation.notes = vec![text("note")];
        }
        results.push(r);
    }
    let mut unknown_without_error = results[0].clone();
    unknown_without_error.state = State::Unknown;
    unknown_without_error.duration_seconds = -1.0;
    results.push(unknown_without_error);

    let xml = junit::document(&results);
    assert_valid("every-field", &xml);
    for (_, attributes) in tags(&xml) {
        for (key, value) in attributes {
            assert!(
                !value.chars().any(char::is_control),
                "{key}={value:?}: no control characters in attributes"
            );
        }
    }
    assert!(xml.contains("]]&gt;"), "text kept, escaped");
    assert!(junit::document(&[]).contains("<testsuites"));
    assert_valid("no-hosts", &junit::document(&[]));
}

/// The validator is not vacuous: it rejects what the schema forbids, e.g. the `skipped`
/// count on `<testsuites>` the output carried before, or a `time` in exponent notation.
#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let document = |testsuites: &str, testsuite: &str| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites{testsuites}>\
             <testsuite name=\"h\" tests=\"1\" failures=\"0\" errors=\"0\"{testsuite}>\
             <testcase name=\"rating\"/></testsuite></testsuites>\n"
        )
    };
    validate("minimal", &document("", " time=\"0.500\"")).expect("a minimal document is valid");
    let skipped = validate("skipped", &document(" skipped=\"0\"", "")).unwrap_err();
    assert!(skipped.contains("skipped"), "{skipped}");
    let time = validate("exponent", &document("", " time=\"1e3\"")).unwrap_err();
    assert!(time.contains("time"), "{time}");
    let missing = validate(
        "no-errors",
        "<testsuites><testsuite name=\"h\" tests=\"0\" failures=\"0\"/></testsuites>",
    )
    .unwrap_err();
    assert!(missing.contains("errors"), "{missing}");
}
