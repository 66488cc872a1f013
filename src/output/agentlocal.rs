//! `--format agentlocal`: one Checkmk agent local-check line per host, for a script in the
//! agent's `local/` directory (the agent adds the `<<<local>>>` section header itself):
//!
//! ```text
//! 0 "Storage_Security_cloud.example.com" rating=5;@0:3;@0:1;0;5|vulnerabilities=0;0;;0|time=1.204s;;;0 OpenCloud 8.1.0 ...
//! ```
//!
//! State digit, quoted service name, the performance data of the host joined by `|` (`-` when
//! there is none), and the host's message as the one-line detail. The thresholds stay in
//! monitoring range syntax: the state is the plugin's digit, so Checkmk uses them only to draw
//! the levels. A host that could not be scanned reports `rating=U`, as every performance-data
//! form does (spec: "In performance data an unknown rating is `U`"): the state digit 3 says
//! why, and the U keeps a graph from drawing a rating nobody measured.

use super::{Context, perfdata};
use crate::report::ScanResult;

/// The service name part after `Storage_Security_`: Checkmk forbids both quote characters in
/// item names, and the line must stay one line.
fn service_safe(host: &str) -> String {
    host.chars()
        .map(|c| match c {
            c if c.is_control() || c == '"' || c == '\'' => '_',
            c => c,
        })
        .collect()
}

/// The detail: one printable line. Checkmk turns the two characters `\n` into a line break,
/// so that sequence is broken up as well.
fn detail_safe(text: &str) -> String {
    crate::text::one_line(text).replace("\\n", "/n")
}

pub fn host_line(result: &ScanResult, ctx: &Context) -> String {
    let metrics: Vec<String> = perfdata::metrics(result, &ctx.thresholds)
        .iter()
        .map(perfdata::Metric::render)
        .collect();
    let metrics = if metrics.is_empty() {
        "-".to_string()
    } else {
        metrics.join("|")
    };
    let mut detail = detail_safe(&result.message);
    if detail.is_empty() {
        detail = result.state.label().to_string();
    }
    format!(
        "{} \"Storage_Security_{}\" {metrics} {detail}",
        result.state.exit_code(),
        service_safe(&result.host)
    )
}

pub fn render(results: &[ScanResult], ctx: &Context) -> String {
    results.iter().map(|r| host_line(r, ctx) + "\n").collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::metrics::testing::{failed, now, scanned, settings};

    #[test]
    fn one_line_per_host_with_four_fields() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let mut hostile = scanned("b.example", "8.1.0", None);
        hostile.message = "line one\nline \"two\" \\n x|y".into();
        let out = render(&[hostile, failed("c\"d'e:1")], &ctx);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "0 \"Storage_Security_b.example\" rating=5;@0:3;@0:1;0;5|vulnerabilities=0;0;;0|\
             time=1.250s;;;0|extra_checks_failed=0;;;0 line one line \"two\" /n x|y"
        );
        assert_eq!(
            lines[1],
            "3 \"Storage_Security_c_d_e:1\" rating=U;@0:3;@0:1;0;5|time=0.500s;;;0 cannot scan \
             c\"d'e:1: connection refused"
        );
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn an_empty_message_falls_back_to_the_state() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let mut r = failed("x");
        r.message = "\n".into();
        let line = host_line(&r, &ctx);
        assert!(
            line.starts_with("3 \"Storage_Security_x\" rating=U;@0:3;@0:1;0;5|time="),
            "{line}"
        );
        assert!(line.ends_with(" UNKNOWN"), "{line}");
    }
}
