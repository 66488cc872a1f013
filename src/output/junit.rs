//! `--format junit`: JUnit XML for CI test reporters (GitHub test-report actions, GitLab,
//! Jenkins).
//!
//! - `<testsuites name="check-storage-security">` holds one `<testsuite>` per host, in input
//!   order, named after the host, with the scan time as `timestamp` and its duration as `time`,
//!   and a `<properties>` block (URL, state, rating, product).
//! - One `<testcase classname="<host>.<category>" name="<finding id>">` per finding: a failed
//!   check, hardening measure or version finding is a `<failure>` (message the detail, type the
//!   severity, text the remediation); a waived finding, or one that was skipped, indeterminate
//!   or network-limited, is `<skipped>`; a passed one is an empty case. An observation is never
//!   rated, so it never fails: its outcome goes to `<system-out>`.
//! - Every suite ends with a `rating` case: a failure on WARNING or CRITICAL, an `<error>` on
//!   UNKNOWN (a failed scan has only this case), passed on OK.
//! - The counts on every suite (`tests`, `failures`, `skipped`, `errors`) are the sums of its
//!   cases; `<testsuites>` carries the totals of `tests`, `failures` and `errors` but no
//!   `skipped`: Jenkins' junit-10.xsd (the xunit plugin's schema, which strict consumers
//!   validate against) does not allow it there, and it is the sum of the suites' `skipped`.
//!
//! The output validates against that schema (`tests/fixtures/xsd/junit-10.xsd`, checked with
//! `xmllint --schema` in `tests/it/format_junit_xsd.rs`). It requires `name`, `tests`, `failures`
//! and `errors` on every suite and plain decimal seconds in `time`; three decimals are written,
//! the most older versions of the schema accept.
//!
//! Written with quick-xml's writer, which escapes every attribute and text; characters XML
//! cannot carry (control characters) are replaced first, and attributes hold no line breaks.

use crate::report::{Finding, Role, ScanResult, State, Status};
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use std::io;

/// The JUnit XML of a run over `results`.
pub fn document(results: &[ScanResult]) -> String {
    let suites: Vec<Suite> = results.iter().map(suite).collect();
    // The writer's only errors are those of its `io::Write`, and a `Vec` takes every byte.
    let bytes = write(&suites).expect("writing into memory does not fail");
    String::from_utf8(bytes).expect("every piece written is a `str`") + "\n"
}

/// The element inside a case that did not simply pass: `failure`, `error` (an UNKNOWN
/// rating), `skipped`, or `system-out` (an observation's outcome), with its attributes and text.
#[derive(Debug, Clone, PartialEq)]
struct Inside {
    element: &'static str,
    attributes: Vec<(&'static str, String)>,
    text: Option<String>,
}

impl Inside {
    fn failed(element: &'static str, message: String, kind: String, text: String) -> Inside {
        let attributes = vec![("message", message), ("type", kind)];
        Inside {
            element,
            attributes,
            text: Some(text),
        }
    }

    fn skipped(message: String) -> Inside {
        let attributes = vec![("message", message)];
        Inside {
            element: "skipped",
            attributes,
            text: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Case {
    classname: String,
    name: String,
    /// `None`: passed, an empty case.
    inside: Option<Inside>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Counts {
    tests: usize,
    failures: usize,
    skipped: usize,
    errors: usize,
}

impl Counts {
    fn of<'a>(cases: impl IntoIterator<Item = &'a Case>) -> Counts {
        let mut c = Counts::default();
        for case in cases {
            c.tests += 1;
            match case.inside.as_ref().map(|inside| inside.element) {
                Some("failure") => c.failures += 1,
                Some("error") => c.errors += 1,
                Some("skipped") => c.skipped += 1,
                _ => {}
            }
        }
        c
    }
}

struct Suite {
    name: String,
    timestamp: String,
    seconds: f64,
    properties: Vec<(&'static str, String)>,
    cases: Vec<Case>,
}

fn suite(result: &ScanResult) -> Suite {
    let mut cases: Vec<Case> = result
        .findings
        .iter()
        .map(|f| finding_case(&result.host, f))
        .collect();
    cases.push(rating_case(result));
    Suite {
        name: result.host.clone(),
        timestamp: result.scanned_at.to_string(),
        seconds: result.duration_seconds,
        properties: properties(result),
        cases,
    }
}

fn properties(result: &ScanResult) -> Vec<(&'static str, String)> {
    let product = result.product.as_ref();
    let rating = result.rating.map(|r| r.to_string());
    [
        ("host", Some(result.host.clone())),
        ("url", result.url.clone()),
        ("state", Some(result.state.label().to_string())),
        ("rating", Some(rating.unwrap_or_else(|| "U".into()))),
        ("grade", Some(result.grade.to_string())),
        ("product", product.map(|p| p.name.clone())),
        ("productVersion", product.map(|p| p.version.clone())),
        ("edition", product.and_then(|p| p.edition.clone())),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name, value?)))
    .collect()
}

fn finding_case(host: &str, f: &Finding) -> Case {
    let observation = |outcome: &str| Inside {
        element: "system-out",
        attributes: Vec::new(),
        text: Some(format!(
            "observation (never rated), {outcome}: {}",
            f.detail
        )),
    };
    let inside = if f.ignored {
        Some(Inside::skipped(format!(
            "waived by the operator: {}",
            f.detail
        )))
    } else {
        match f.status {
            Status::Skipped | Status::Indeterminate | Status::NetworkLimited => Some(
                Inside::skipped(format!("{}: {}", f.status.as_str(), f.detail)),
            ),
            Status::Passed if f.role == Role::Observation => Some(observation("passed")),
            Status::Failed if f.role == Role::Observation => Some(observation("failed")),
            Status::Passed => None,
            Status::Failed => {
                let mut text = f.remediation.clone();
                if let Some(doc) = &f.documentation {
                    text.push_str(&format!("\nDocumentation: {doc}"));
                }
                let (message, kind) = (f.detail.clone(), f.severity.to_string());
                Some(Inside::failed("failure", message, kind, text))
            }
        }
    };
    Case {
        classname: format!("{host}.{}", f.category),
        name: f.id.clone(),
        inside,
    }
}

fn rating_case(result: &ScanResult) -> Case {
    let number = result.rating.map_or("unknown".into(), |r| r.to_string());
    let message = format!("rating {} ({number}): {}", result.grade, result.message);
    let kind = result.state.label().to_string();
    let inside = match result.state {
        State::Ok => None,
        State::Warning | State::Critical => Some(Inside::failed(
            "failure",
            message,
            kind,
            explanation(result),
        )),
        // A failed scan's message names the host, the error and the attempts.
        State::Unknown => Some(Inside::failed(
            "error",
            message,
            kind,
            match &result.error {
                Some(_) => result.message.clone(),
                None => explanation(result),
            },
        )),
    };
    Case {
        classname: format!("{}.rating", result.host),
        name: "rating".into(),
        inside,
    }
}

/// The rating explanation as text: start, every limit, the final rating and thresholds.
fn explanation(result: &ScanResult) -> String {
    let e = &result.rating_explanation;
    let rating = |r: Option<u8>| r.map(|r| r.to_string()).unwrap_or_else(|| "U".into());
    let mut lines = vec![format!(
        "starting rating {}: {}",
        rating(e.starting_rating),
        e.starting_reason
    )];
    for limit in &e.limits {
        lines.push(format!(
            "limited to {} by {} ({})",
            limit.cap, limit.id, limit.severity
        ));
    }
    lines.push(format!(
        "final rating {} ({}); WARNING at or below {}, CRITICAL at or below {}",
        rating(e.final_rating),
        e.final_grade,
        e.warning_threshold,
        e.critical_threshold
    ));
    lines.extend(e.notes.iter().cloned());
    lines.join("\n")
}

/// Text content XML 1.0 can carry: tab and line feed stay, a carriage return becomes a line
/// feed (a parser would normalise it anyway), every other control character and the
/// non-characters U+FFFE and U+FFFF become U+FFFD.
fn element_text(text: &str) -> String {
    text.replace("\r\n", "\n")
        .chars()
        .map(|c| match c {
            '\t' | '\n' => c,
            '\r' => '\n',
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// Attribute values hold no control characters at all: tab, line feed and carriage return
/// become a space (what attribute normalisation would make of them), others U+FFFD.
fn attribute_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => ' ',
            c if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// A start tag with its attributes, each value cleaned and then escaped by quick-xml.
fn start<'a>(name: &'a str, attributes: &[(&str, String)]) -> BytesStart<'a> {
    let mut tag = BytesStart::new(name);
    for (key, value) in attributes {
        tag.push_attribute((*key, attribute_text(value).as_str()));
    }
    tag
}

fn seconds(value: f64) -> String {
    let value = Some(value)
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(0.0);
    format!("{value:.3}")
}

fn write(suites: &[Suite]) -> io::Result<Vec<u8>> {
    let total = Counts::of(suites.iter().flat_map(|s| &s.cases));
    let total_seconds: f64 = suites
        .iter()
        .map(|s| s.seconds)
        .filter(|s| s.is_finite() && *s > 0.0)
        .sum();
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::Start(start(
        "testsuites",
        &[
            ("name", "check-storage-security".into()),
            ("tests", total.tests.to_string()),
            ("failures", total.failures.to_string()),
            // No `skipped` here: junit-10.xsd allows it only on `<testsuite>`, and the total is
            // the sum of the suites' counts, so nothing is lost.
            ("errors", total.errors.to_string()),
            ("time", seconds(total_seconds)),
        ],
    )))?;
    for (id, suite) in suites.iter().enumerate() {
        write_suite(&mut w, id, suite, &Counts::of(&suite.cases))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    Ok(w.into_inner())
}

fn write_suite(w: &mut Writer<Vec<u8>>, id: usize, suite: &Suite, c: &Counts) -> io::Result<()> {
    w.write_event(Event::Start(start(
        "testsuite",
        &[
            ("name", suite.name.clone()),
            ("tests", c.tests.to_string()),
            ("failures", c.failures.to_string()),
            ("skipped", c.skipped.to_string()),
            ("errors", c.errors.to_string()),
            ("timestamp", suite.timestamp.clone()),
            ("time", seconds(suite.seconds)),
            ("id", id.to_string()),
        ],
    )))?;
    w.write_event(Event::Start(BytesStart::new("properties")))?;
    for (name, value) in &suite.properties {
        w.write_event(Event::Empty(start(
            "property",
            &[("name", name.to_string()), ("value", value.clone())],
        )))?;
    }
    w.write_event(Event::End(BytesEnd::new("properties")))?;
    for case in &suite.cases {
        write_case(w, case)?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    Ok(())
}

fn write_case(w: &mut Writer<Vec<u8>>, case: &Case) -> io::Result<()> {
    let tag = start(
        "testcase",
        &[
            ("classname", case.classname.clone()),
            ("name", case.name.clone()),
            ("time", "0".into()),
        ],
    );
    let Some(inside) = &case.inside else {
        return w.write_event(Event::Empty(tag));
    };
    w.write_event(Event::Start(tag))?;
    let element = start(inside.element, &inside.attributes);
    match &inside.text {
        // The text is escaped by quick-xml.
        Some(text) => {
            w.write_event(Event::Start(element))?;
            w.write_event(Event::Text(BytesText::new(&element_text(text))))?;
            w.write_event(Event::End(BytesEnd::new(inside.element)))?;
        }
        None => w.write_event(Event::Empty(element))?,
    }
    w.write_event(Event::End(BytesEnd::new("testcase")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks;
    use crate::output::sarif::tests::result;
    use crate::report::ScanError;
    use quick_xml::Reader;
    use quick_xml::events::attributes::Attributes;

    /// Every event of a document, read to the end; panics on any reader error.
    fn events(xml: &str) -> Vec<Event<'static>> {
        let mut reader = Reader::from_str(xml);
        let mut out = Vec::new();
        loop {
            match reader.read_event() {
                Ok(Event::Eof) => return out,
                Ok(e) => out.push(e.into_owned()),
                Err(e) => panic!("{e} at {}\n{xml}", reader.error_position()),
            }
        }
    }

    fn attr(attributes: Attributes, key: &str) -> Option<String> {
        attributes
            .flatten()
            .find(|a| a.key.as_ref() == key.as_bytes())
            .map(|a| a.unescape_value().unwrap().into_owned())
    }

    fn starts<'a>(events: &'a [Event<'static>], name: &str) -> Vec<&'a BytesStart<'static>> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Start(s) | Event::Empty(s) if s.name().as_ref() == name.as_bytes() => {
                    Some(s)
                }
                _ => None,
            })
            .collect()
    }

    fn findings() -> Vec<Finding> {
        let mut waived =
            checks::finding_for("corsOriginRestricted", Status::Failed, "any origin").unwrap();
        waived.ignored = true;
        vec![
            checks::finding_for("httpsAvailable", Status::Passed, "HTTPS is available").unwrap(),
            checks::finding_for(
                "exposed:/.env",
                Status::Failed,
                "served \"x\" <y> & \u{1b}\n",
            )
            .unwrap(),
            waived,
            checks::finding_for("tlsCertificate", Status::NetworkLimited, "timed out").unwrap(),
            checks::finding_for("loginThrottling", Status::Failed, "not throttled").unwrap(),
        ]
    }

    #[test]
    fn counts_add_up_and_every_finding_is_a_case() {
        let mut down = result("down.example", Vec::new());
        down.state = State::Unknown;
        down.rating = None;
        down.grade = "U".into();
        down.product = None;
        down.message = "cannot scan down.example: refused".into();
        down.error = Some(ScanError {
            message: "refused".into(),
            attempts: 3,
        });
        let xml = document(&[result("up.example", findings()), down]);
        let events = events(&xml);
        let top = starts(&events, "testsuites");
        assert_eq!(top.len(), 1);
        let total = |k| attr(top[0].attributes(), k).unwrap();
        assert_eq!(total("tests"), "7");
        assert_eq!(total("failures"), "2", "exposed and the WARNING rating");
        assert_eq!(total("errors"), "1", "the failed scan");
        assert_eq!(
            attr(top[0].attributes(), "skipped"),
            None,
            "junit-10.xsd has no skipped on testsuites"
        );
        let suites = starts(&events, "testsuite");
        assert_eq!(suites.len(), 2);
        assert_eq!(attr(suites[0].attributes(), "tests").unwrap(), "6");
        assert_eq!(
            attr(suites[0].attributes(), "skipped").unwrap(),
            "2",
            "the waived and the network-limited case"
        );
        assert_eq!(attr(suites[1].attributes(), "skipped").unwrap(), "0");
        assert_eq!(attr(suites[1].attributes(), "tests").unwrap(), "1");
        assert_eq!(attr(suites[1].attributes(), "errors").unwrap(), "1");
        assert_eq!(
            attr(suites[0].attributes(), "timestamp").unwrap(),
            "2026-11-22T03:00:00Z"
        );
        assert_eq!(attr(suites[0].attributes(), "time").unwrap(), "0.500");
        let failure = starts(&events, "failure");
        assert_eq!(
            attr(failure[0].attributes(), "message").unwrap(),
            "served \"x\" <y> & \u{fffd} ",
            "control characters replaced, the rest intact"
        );
        assert_eq!(attr(failure[0].attributes(), "type").unwrap(), "high");
        assert_eq!(
            attr(failure[1].attributes(), "message").unwrap(),
            "rating C (3): something failed"
        );
        assert_eq!(attr(failure[1].attributes(), "type").unwrap(), "WARNING");
        let error = starts(&events, "error");
        assert_eq!(
            attr(error[0].attributes(), "message").unwrap(),
            "rating U (unknown): cannot scan down.example: refused"
        );
        let cases = starts(&events, "testcase");
        assert_eq!(
            attr(cases[1].attributes(), "classname").unwrap(),
            "up.example.exposure"
        );
        assert_eq!(
            attr(cases[1].attributes(), "name").unwrap(),
            "exposed:/.env"
        );
        assert_eq!(attr(cases[5].attributes(), "name").unwrap(), "rating");
        assert!(xml.contains("<system-out>observation (never rated), failed: not throttled"));
        assert!(xml.contains("<skipped message=\"waived by the operator: any origin\"/>"));
        assert!(xml.contains("<skipped message=\"network-limited: timed out\"/>"));
        assert!(!xml.contains('\u{1b}'));
    }

    #[test]
    fn a_passing_host_has_a_passing_rating_case() {
        let mut ok = result("ok.example", Vec::new());
        ok.state = State::Ok;
        let xml = document(&[ok]);
        assert!(
            xml.contains("<testcase classname=\"ok.example.rating\" name=\"rating\" time=\"0\"/>"),
            "{xml}"
        );
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
        assert!(xml.contains("<property name=\"edition\" value=\"&lt;b&gt;&quot; \"/>"));
    }

    #[test]
    fn cleaning_keeps_text_and_drops_what_xml_cannot_carry() {
        assert_eq!(
            element_text("a\r\nb\rc\u{0}\u{ffff}é"),
            "a\nb\nc\u{fffd}\u{fffd}é"
        );
        assert_eq!(attribute_text("a\nb\tc\u{7f}é"), "a b c\u{fffd}é");
        assert_eq!(seconds(f64::NAN), "0.000");
        assert_eq!(seconds(1.23456), "1.235");
    }
}
