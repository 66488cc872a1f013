//! Several hosts in one run: one worker per host up to --concurrency, results in input order,
//! the worst state wins (CRITICAL > WARNING > UNKNOWN > OK).

use crate::support::FakeInstance;
use std::path::Path;

use crate::support::plugin::healthy;

fn run(name: &str, args: &[&str], ca: &Path) -> (String, i32) {
    let base = crate::support::plugin::hermetic(ca);
    let mut all: Vec<&str> = base.iter().map(String::as_str).collect();
    all.extend(args);
    let r = crate::support::plugin::run(&format!("multi-{name}"), &all, &[]);
    (r.stdout, r.code)
}

#[test]
fn worst_state_wins_and_blocks_keep_input_order() {
    let ok = FakeInstance::start(healthy("8.1.0"));
    let critical = FakeInstance::start(healthy("4.0.0"));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let hosts = format!("{} , {},{},", ok.host_port(), critical.host_port(), down);
    let (out, code) = run("mixed", &["-H", &hosts], &ok.ca_file());
    assert_eq!(code, 2, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Checked 3 host(s): overall CRITICAL (1 CRITICAL, 1 UNKNOWN, 1 OK)"
    );
    assert!(lines[1].starts_with("OK: "), "{out}");
    let critical_at = lines
        .iter()
        .position(|l| l.starts_with("CRITICAL: "))
        .unwrap();
    let unknown_at = lines
        .iter()
        .position(|l| l.starts_with("UNKNOWN: "))
        .unwrap();
    assert!(1 < critical_at && critical_at < unknown_at, "{out}");
    assert!(lines[unknown_at].contains(&down), "{out}");
    // Perfdata labels carry the host, quoted.
    let perf = lines.last().unwrap();
    assert!(
        perf.starts_with(&format!("|'{} rating'=5;@0:3;@0:1;0;5 ", ok.host_port())),
        "{perf}"
    );
    assert!(
        perf.contains(&format!("'{} rating'=1;", critical.host_port())),
        "{perf}"
    );
    assert!(perf.contains(&format!("'{down} rating'=U;")), "{perf}");
}

#[test]
fn one_warning_among_ok_hosts_warns() {
    let a = FakeInstance::start(healthy("8.1.0"));
    let b = FakeInstance::start(healthy("4.0.5"));
    let hosts = format!("{},{}", a.host_port(), b.host_port());
    let (out, code) = run(
        "warning",
        &["-H", &hosts, "--concurrency", "1"],
        &a.ca_file(),
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("Checked 2 host(s): overall WARNING (1 WARNING, 1 OK)\n"),
        "{out}"
    );
}

#[test]
fn json_is_an_array_in_input_order_even_for_one_host() {
    let a = FakeInstance::start(healthy("8.1.0"));
    let b = FakeInstance::start(healthy("7.3.0"));
    let hosts = format!("{},{}", a.host_port(), b.host_port());
    let (out, code) = run("json", &["-H", &hosts, "--format", "json"], &a.ca_file());
    assert_eq!(code, 2, "end of life is CRITICAL in every format\n{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let hosts: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, vec![a.host_port(), b.host_port()]);
    for member in [
        "ratingExplanation",
        "remediationPlan",
        "waivers",
        "policy",
        "vulnerabilities",
        "coverage",
        "configurationFingerprint",
    ] {
        assert!(doc[0].get(member).is_some(), "{member} missing");
    }
    let (out, _) = run(
        "json-one",
        &["-H", &a.host_port(), "--format", "json"],
        &a.ca_file(),
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc.as_array().map(Vec::len), Some(1));
}

#[test]
fn concurrency_above_32_is_refused() {
    let (out, code) = run(
        "concurrency",
        &["-H", "a.example,b.example", "--concurrency", "33"],
        Path::new("/nonexistent"),
    );
    assert_eq!(code, 3);
    assert_eq!(
        out,
        "UNKNOWN: --concurrency \"33\" is not a number of workers from 1 to 32\n"
    );
}

/// A perfdata parser per the Monitoring Plugins guidelines: `label=value[uom];warn;crit;min;max`,
/// labels quoted with `'` when they hold spaces.
fn parse_perfdata(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (label, after) = if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted.find("'=").expect("closing quote");
            (quoted[..end].to_string(), &quoted[end + 2..])
        } else {
            let eq = rest.find('=').expect("=");
            (rest[..eq].to_string(), &rest[eq + 1..])
        };
        assert!(
            !label.is_empty() && !label.contains('=') && !label.starts_with(' '),
            "{label:?}"
        );
        let end = after.find(' ').unwrap_or(after.len());
        let value = &after[..end];
        let fields: Vec<&str> = value.split(';').collect();
        assert!(fields.len() <= 5, "{value}");
        let number = fields[0].trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '%');
        assert!(
            number == "U" || number.parse::<f64>().is_ok(),
            "{label}={value}"
        );
        out.push((label, value.to_string()));
        rest = after[end..].trim_start();
    }
    out
}

#[test]
fn server_text_cannot_break_the_monitoring_output() {
    let hostile = FakeInstance::start(
        healthy("8.1.0")
            .set_header("X-Web-Version", "8.1.0|evil=1 'quote' \u{e9}")
            .status_override(
                r#"{"productname":"OpenCloud","productversion":"8.1.0","edition":"a|b=c\nd"}"#,
            ),
    );
    let other = FakeInstance::start(healthy("8.1.0"));
    for hosts in [
        hostile.host_port(),
        format!("{},{}", hostile.host_port(), other.host_port()),
    ] {
        let (out, _) = run("hostile", &["-H", &hosts, "--debug"], &hostile.ca_file());
        assert_eq!(
            out.matches('|').count(),
            1,
            "only the perfdata separator: {out}"
        );
        let perf = out.lines().last().unwrap().strip_prefix('|').unwrap();
        let metrics = parse_perfdata(perf);
        assert!(
            metrics.iter().any(|(l, _)| l.ends_with("rating")),
            "{metrics:?}"
        );
    }
}
