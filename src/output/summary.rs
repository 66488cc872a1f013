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

pub fn row(result: &ScanResult, ctx: &Context) -> Row {
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
    let rows: Vec<Row> = results.iter().map(|r| row(r, ctx)).collect();
    table(rows, &super::state_counts(results))
}

/// A host's cells.
pub type Row = [String; 6];

/// The aligned table of `rows` (in input order) under the header, then the tally line
/// (`counts`: `1 CRITICAL, 2 OK`).
pub fn table(host_rows: Vec<Row>, counts: &str) -> String {
    let mut widths = Widths::default();
    host_rows.iter().for_each(|row| widths.fit(row));
    let mut out = header(&widths);
    for row in &host_rows {
        out.push_str(&line(row, &widths));
    }
    out.push_str(&tally_line(host_rows.len(), counts));
    out
}

/// The widths of the columns: the header's, widened to every row's cells.
#[derive(Clone, Copy, Debug)]
pub struct Widths([usize; 6]);

impl Default for Widths {
    fn default() -> Widths {
        Widths(HEADER.map(|h| h.chars().count()))
    }
}

impl Widths {
    pub fn fit(&mut self, row: &Row) {
        for (width, cell) in self.0.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
}

/// The header line at these widths.
pub fn header(widths: &Widths) -> String {
    line(&HEADER.map(String::from), widths)
}

/// One row at these widths, its cells two blanks apart, without trailing blanks.
pub fn line(row: &Row, widths: &Widths) -> String {
    let line = row
        .iter()
        .zip(widths.0)
        .map(|(cell, width)| format!("{cell:<width$}"))
        .collect::<Vec<_>>()
        .join("  ");
    let mut line = line.trim_end().to_string();
    line.push('\n');
    line
}

/// `1000 host(s): 160 CRITICAL, 840 WARNING`.
pub fn tally_line(hosts: usize, counts: &str) -> String {
    format!("{hosts} host(s): {counts}\n")
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
