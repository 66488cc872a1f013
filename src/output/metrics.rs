//! `--format metrics`: one shot of the Prometheus text exposition format, the same metric
//! families the exporter serves (spec "Metrics exporter").
//!
//! ```text
//! # HELP storage_security_rating_score Security rating of the instance, 0 (F) to 5 (A+)
//! # TYPE storage_security_rating_score gauge
//! storage_security_rating_score{host="cloud.example.com:8443",domain="cloud.example.com",product="OpenCloud",version="8.1.0"} 5
//! ...
//! storage_security_scrape_success{host="cloud.example.com:8443"} 1
//! ```
//!
//! The values are the performance data of each host (`perfdata::metrics`), so a metric that
//! the perfdata leaves out (support days of an unknown line, hardening without
//! `--check-hardening`, an unknown rating) is absent here too. A failed scan is a metric value,
//! not an alert: `storage_security_scrape_success 0` and the scan duration, nothing else, and
//! it does not count towards the exit code ([`exit_code`]).

use super::{Context, perfdata};
use crate::report::{ScanResult, State};

/// One metric family of the exporter.
pub(crate) struct Family {
    pub name: &'static str,
    pub help: &'static str,
    /// The UCUM unit of the OTLP export.
    pub unit: &'static str,
    /// The performance data metric it reads; `None` for `scrape_success`.
    pub perf: Option<&'static str>,
}

pub(crate) const RATING: &str = "storage_security_rating_score";
const DURATION: &str = "storage_security_scan_duration_seconds";

/// The families in output order.
pub(crate) const FAMILIES: [Family; 8] = [
    Family {
        name: RATING,
        help: "Security rating of the instance, 0 (F) to 5 (A+)",
        unit: "1",
        perf: Some("rating"),
    },
    Family {
        name: "storage_security_vulnerabilities_total",
        help: "Known vulnerabilities matching the reported version",
        unit: "{vulnerability}",
        perf: Some("vulnerabilities"),
    },
    Family {
        name: "storage_security_hardenings_missing_total",
        help: "Missing hardening measures (only with --check-hardening)",
        unit: "{measure}",
        perf: Some("hardenings_missing"),
    },
    Family {
        name: "storage_security_failed_extra_checks_total",
        help: "Failed additional checks",
        unit: "{check}",
        perf: Some("extra_checks_failed"),
    },
    Family {
        name: "storage_security_support_days_remaining",
        help: "Days until the release line loses support, negative when overdue",
        unit: "d",
        perf: Some("support_days_left"),
    },
    Family {
        name: "storage_security_update_available",
        help: "1 when a newer release exists on the instance's track",
        unit: "1",
        perf: Some("update_available"),
    },
    Family {
        name: DURATION,
        help: "Duration of the scan in seconds",
        unit: "s",
        perf: Some("time"),
    },
    Family {
        name: "storage_security_scrape_success",
        help: "1 when the scan of the host succeeded, 0 when it failed",
        unit: "1",
        perf: None,
    },
];

/// One value of one host.
pub(crate) struct Sample {
    pub family: &'static Family,
    /// A number as the performance data formats it (`5`, `-3`, `0.173`).
    pub value: String,
}

/// The samples of one host in family order. A failed scan has its scrape success (0) and its
/// duration only; values the performance data does not know (`U`) are left out.
pub(crate) fn host_samples(result: &ScanResult, ctx: &Context) -> Vec<Sample> {
    let perf = perfdata::metrics(result, &ctx.thresholds);
    let failed = result.error.is_some();
    FAMILIES
        .iter()
        .filter_map(|family| {
            let value = match family.perf {
                None => u8::from(!failed).to_string(),
                Some(_) if failed && family.name != DURATION => return None,
                Some(name) => perf.iter().find(|m| m.name == name)?.value.clone(),
            };
            value.parse::<f64>().ok().filter(|v| v.is_finite())?;
            Some(Sample { family, value })
        })
        .collect()
}

/// The labels of a sample: `host` on every family, and on the rating also `domain`,
/// `product` and `version`.
pub(crate) fn labels(result: &ScanResult, family: &Family) -> Vec<(&'static str, String)> {
    let mut labels = vec![("host", result.host.clone())];
    if family.name == RATING {
        let (product, version) = result
            .product
            .as_ref()
            .map(|p| (p.name.clone(), p.version.clone()))
            .unwrap_or_default();
        labels.push(("domain", domain(&result.host).to_string()));
        labels.push(("product", product));
        labels.push(("version", version));
    }
    labels
}

/// The host without its port: `cloud.example.com:8443` is `cloud.example.com`, `[::1]:9200`
/// is `::1`; a bare IPv6 address stays whole.
pub(crate) fn domain(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        Some((name, port))
            if !name.contains(':')
                && !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit()) =>
        {
            name
        }
        _ => host,
    }
}

/// A label value in the exposition format: `\`, `"` and line feeds escaped; other control
/// characters (which no reader expects inside a line) become spaces.
pub fn escape_label_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The results to export: the first of each `host` in input order. Two targets can name the
/// same host (`a.example,https://a.example`), and a series must not appear twice.
pub(crate) fn distinct_hosts(results: &[ScanResult]) -> Vec<&ScanResult> {
    let mut seen = std::collections::HashSet::new();
    results
        .iter()
        .filter(|r| seen.insert(r.host.as_str()))
        .collect()
}

/// The whole exposition: `# HELP` and `# TYPE` once per family that has samples, then the
/// samples of every host in input order.
pub fn render(results: &[ScanResult], ctx: &Context) -> String {
    let samples: Vec<(&ScanResult, Vec<Sample>)> = distinct_hosts(results)
        .into_iter()
        .map(|r| (r, host_samples(r, ctx)))
        .collect();
    let mut out = String::new();
    for family in &FAMILIES {
        let mut lines = Vec::new();
        for (result, host) in &samples {
            for sample in host.iter().filter(|s| s.family.name == family.name) {
                let labels = labels(result, family)
                    .iter()
                    .map(|(name, value)| format!("{name}=\"{}\"", escape_label_value(value)))
                    .collect::<Vec<_>>()
                    .join(",");
                lines.push(format!("{}{{{labels}}} {}\n", family.name, sample.value));
            }
        }
        if lines.is_empty() {
            continue;
        }
        out.push_str(&format!("# HELP {} {}\n", family.name, family.help));
        out.push_str(&format!("# TYPE {} gauge\n", family.name));
        lines.iter().for_each(|line| out.push_str(line));
    }
    out
}

/// The exit code of the metrics formats (`metrics`, `otlp`): the worst state of the hosts
/// whose scan did not fail; a failed scan is reported as `scrape_success 0` and exits 0
/// (spec "Command line", `--format`). 0 when every scan failed.
pub fn exit_code(results: &[ScanResult]) -> i32 {
    results
        .iter()
        .filter(|r| r.error.is_none())
        .fold(State::Ok, |worst, r| worst.worst(r.state))
        .exit_code()
}

#[cfg(test)]
pub(crate) mod testing {
    //! Result documents and settings for the renderers' unit tests.

    use crate::clock::Now;
    use crate::knowledge::ProductFamily;
    use crate::knowledge::lifecycle::LineState;
    use crate::report::{self, ScanResult, State};
    use crate::settings::secrets::MapEnv;
    use crate::settings::{Settings, cli};

    pub fn settings(args: &[&str]) -> Settings {
        let home = std::env::temp_dir().join(format!("cos-output-tests-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        let mut env = MapEnv::with(&[]);
        env.0.insert("HOME".into(), home.display().to_string());
        let line = match cli::parse(args.iter().copied()).unwrap() {
            cli::Invocation::Scan(line) => line,
            _ => panic!("not a scan"),
        };
        Settings::resolve(&line, &env).unwrap()
    }

    pub fn now() -> Now {
        Now("2026-11-22T03:00:00Z".parse().unwrap())
    }

    /// A scanned host: OpenCloud `version`, rating 5, supported line with `days` left.
    pub fn scanned(host: &str, version: &str, days: Option<i64>) -> ScanResult {
        let mut r = failed(host);
        r.error = None;
        r.state = State::Ok;
        r.message = format!("OpenCloud {version} on {host} is up to date");
        r.rating = Some(5);
        r.grade = report::grade(Some(5)).into();
        r.duration_seconds = 1.25;
        r.product = Some(report::Product {
            family: ProductFamily::OpenCloud,
            name: "OpenCloud".into(),
            version: version.into(),
            legacy_version: None,
            edition: None,
        });
        r.lifecycle = Some(report::Lifecycle {
            line: "8.1".into(),
            track: None,
            track_detected: false,
            track_note: None,
            state: LineState::Supported,
            line_opened: None,
            support_end: None,
            support_days_left: days,
            current_release: false,
            latest_in_line: None,
            upgrade_target: None,
            upgrade_target_track: None,
            schedule_updated: Some(jiff::civil::date(2026, 10, 12)),
            schedule_stale: false,
        });
        r
    }

    /// A scan that failed: UNKNOWN, no assessment.
    pub fn failed(host: &str) -> ScanResult {
        ScanResult::failed(
            host.into(),
            "connection refused".into(),
            1,
            now().whole_second(),
            0.5,
            false,
            3,
            1,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{failed, now, scanned, settings};
    use super::*;

    #[test]
    fn domain_drops_the_port_only() {
        assert_eq!(domain("cloud.example.com:8443"), "cloud.example.com");
        assert_eq!(domain("cloud.example.com"), "cloud.example.com");
        assert_eq!(domain("[2001:db8::1]:9200"), "2001:db8::1");
        assert_eq!(domain("2001:db8::1"), "2001:db8::1");
        assert_eq!(domain("192.0.2.1:443"), "192.0.2.1");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label_value("a\\b\"c\nd\re"), "a\\\\b\\\"c\\nd e");
    }

    #[test]
    fn failed_scan_is_scrape_success_zero_and_duration_only() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let out = render(&[failed("down.example:8443")], &ctx);
        let samples: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            samples,
            [
                "storage_security_scan_duration_seconds{host=\"down.example:8443\"} 0.500",
                "storage_security_scrape_success{host=\"down.example:8443\"} 0",
            ]
        );
    }

    #[test]
    fn families_are_grouped_across_hosts_and_absent_values_stay_absent() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let mut hostile = scanned("b.example", "8.1.0\"|\\\n", None);
        hostile.product.as_mut().unwrap().name = "Open\"Cloud".into();
        let out = render(&[scanned("a.example:1", "8.1.0", Some(30)), hostile], &ctx);
        assert_eq!(
            out.matches("# TYPE storage_security_rating_score gauge")
                .count(),
            1
        );
        assert!(out.contains(
            "storage_security_rating_score{host=\"b.example\",domain=\"b.example\",product=\"Open\\\"Cloud\",version=\"8.1.0\\\"|\\\\\\n\"} 5\n"
        ));
        assert!(out.contains("storage_security_support_days_remaining{host=\"a.example:1\"} 30\n"));
        assert!(!out.contains("support_days_remaining{host=\"b.example\"}"));
        assert!(!out.contains("hardenings_missing"), "{out}");
        // HELP and TYPE precede the family's samples, which stay together.
        let rating_lines: Vec<usize> = out
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("storage_security_rating_score"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(rating_lines, [0, 1, 2, 3]);
    }

    #[test]
    fn a_host_named_twice_is_exported_once() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let out = render(&[scanned("a", "8.1.0", None), failed("a")], &ctx);
        assert_eq!(out.matches("storage_security_scrape_success{").count(), 1);
        assert!(out.contains("storage_security_scrape_success{host=\"a\"} 1\n"));
    }

    #[test]
    fn exit_code_ignores_failed_scans() {
        let mut warning = scanned("a", "8.1.0", None);
        warning.state = State::Warning;
        assert_eq!(exit_code(&[failed("x")]), 0);
        assert_eq!(exit_code(&[failed("x"), warning.clone()]), 1);
        let mut unrated = scanned("b", "8.1.0", None);
        unrated.state = State::Unknown;
        assert_eq!(exit_code(&[warning, unrated]), 1);
        let mut unrated = scanned("b", "8.1.0", None);
        unrated.state = State::Unknown;
        assert_eq!(exit_code(&[unrated]), 3);
    }
}
