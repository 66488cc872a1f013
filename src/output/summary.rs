//! `--format summary`: one row per host in input order, then the tally.
//!
//! ```text
//! HOST               GRADE    VERSION  EOL  VULNS  NEW
//! cloud.example.com  A+       8.1.0    no   0      -
//! old.example.com    F        7.3.0    YES  0      -
//! down.example.com   UNKNOWN  -        -    -      -
//! 3 host(s): 1 CRITICAL, 1 UNKNOWN, 1 OK
//! ```
//!
//! A failed scan shows its state under GRADE and `-` elsewhere. EOL is `YES` past end of
//! life, `soon` inside the `--eol-warning` window, `no` otherwise, `-` without a lifecycle
//! verdict. VULNS is the `vulnerabilities` performance data value. NEW is `-` without
//! `--baseline`, `new` on the run that records the host's baseline, `+<n>` (new findings)
//! afterwards.

use super::{Context, perfdata};
use crate::knowledge::lifecycle::LineState;
use crate::notify::body::clip;
use crate::report::ScanResult;

const HEADER: [&str; 6] = ["HOST", "GRADE", "VERSION", "EOL", "VULNS", "NEW"];
/// Server text longer than this is cut (with `…`) so one instance cannot stretch the table.
const MAX_CELL: usize = 40;

/// Server text as a table cell: one printable line without runs of blanks, at most
/// [`MAX_CELL`] characters.
fn cell(text: &str) -> String {
    let cleaned = crate::text::one_line(text);
    if cleaned.is_empty() {
        return "-".into();
    }
    clip(&cleaned, MAX_CELL)
}

fn row(result: &ScanResult, ctx: &Context) -> [String; 6] {
    let host = cell(&result.host);
    if result.error.is_some() {
        // The state under GRADE, `-` in every other column.
        let mut row = HEADER.map(|_| "-".to_string());
        row[0] = host;
        row[1] = result.state.label().into();
        return row;
    }
    let version = result
        .product
        .as_ref()
        .map(|p| cell(&p.version))
        .unwrap_or_else(|| "-".into());
    let eol = match result.lifecycle.as_ref().map(|l| l.state) {
        Some(LineState::EndOfLife) => "YES",
        Some(LineState::EndingSoon) => "soon",
        Some(LineState::Supported | LineState::Unknown) => "no",
        None => "-",
    };
    let vulns = perfdata::metrics(result, &ctx.thresholds)
        .into_iter()
        .find(|m| m.name == "vulnerabilities")
        .map(|m| m.value)
        .unwrap_or_else(|| "-".into());
    [
        host,
        result.grade.clone(),
        version,
        eol.into(),
        vulns,
        crate::assess::baseline::BaselineComparison::summary_cell(result.baseline.as_ref()),
    ]
}

pub fn render(results: &[ScanResult], ctx: &Context) -> String {
    let mut rows = vec![HEADER.map(String::from)];
    rows.extend(results.iter().map(|r| row(r, ctx)));
    let mut widths = [0usize; 6];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let line = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect::<Vec<_>>()
            .join("  ");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "{} host(s): {}\n",
        results.len(),
        super::state_counts(results)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::metrics::testing::{failed, now, scanned, settings};
    use crate::report::State;

    #[test]
    fn aligned_rows_in_input_order_then_the_tally() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let mut old = scanned("old.example.com", "7.3.0", Some(-40));
        old.state = State::Critical;
        old.rating = Some(0);
        old.grade = "F".into();
        old.lifecycle.as_mut().unwrap().state = LineState::EndOfLife;
        let mut soon = scanned("s", "4.0.\u{1b}[31m9\n", Some(3));
        soon.lifecycle.as_mut().unwrap().state = LineState::EndingSoon;
        let out = render(
            &[
                scanned("cloud.example.com:8443", "8.1.0", None),
                old,
                soon,
                failed("down.example"),
            ],
            &ctx,
        );
        assert_eq!(
            out,
            "\
HOST                    GRADE    VERSION     EOL   VULNS  NEW
cloud.example.com:8443  A+       8.1.0       no    0      -
old.example.com         F        7.3.0       YES   0      -
s                       A+       4.0. [31m9  soon  0      -
down.example            UNKNOWN  -           -     -      -
4 host(s): 1 CRITICAL, 1 UNKNOWN, 2 OK
"
        );
    }

    #[test]
    fn long_server_text_is_cut() {
        let long = "9".repeat(100);
        assert_eq!(cell(&long).chars().count(), MAX_CELL);
        assert!(cell(&long).ends_with('…'));
        assert_eq!(cell(" \t "), "-");
    }
}
