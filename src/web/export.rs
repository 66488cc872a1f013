//! Exports of a completed scan besides its JSON document and SARIF: CSV, one row per finding,
//! for spreadsheets. Every place of a cell where a spreadsheet would start a field and run it
//! as a formula (`=`, `+`, `-`, `@`, a tab or a carriage return at the cell's start, or after a
//! `,`, `;`, tab or line break, whichever separator the reader's locale uses) is neutralised
//! with a `'`: the text comes from the scanned server, which is hostile.

use super::worker::Completed;
use crate::report::ScanResult;
use serde::Serialize;

/// One export of a completed scan as a file: what the HTTP API serves as an attachment and
/// the MCP `export_scan` tool returns.
pub struct Exported {
    pub media: &'static str,
    pub filename: String,
    pub body: Vec<u8>,
}

/// The export of `completed` (scan `uuid`) in `format` (`json`, `sarif`, `csv`; anything else
/// is the PDF report), named `storage-security-<host>-<uuid prefix>.<format>` with the host
/// reduced to letters, digits, dots and dashes (it came from the scanned server).
pub fn file(completed: &Completed, uuid: &str, format: &str) -> Exported {
    let safe_host: String = completed
        .document
        .host
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' => c,
            _ => '_',
        })
        .take(100)
        .collect();
    fn pretty(value: &impl Serialize) -> Vec<u8> {
        let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
        text.push(b'\n');
        text
    }
    let body = match format {
        "json" => pretty(&completed.document),
        "sarif" => pretty(&completed.sarif),
        "csv" => csv(&completed.document),
        _ => super::pdf::render(&completed.document),
    };
    let uuid_prefix = uuid.get(..8).unwrap_or(uuid);
    Exported {
        media: media_type(format),
        filename: format!("storage-security-{safe_host}-{uuid_prefix}.{format}"),
        body,
    }
}

/// The media type an export of `format` is answered with (the discovery documents name it
/// without its parameters).
pub fn media_type(format: &str) -> &'static str {
    match format {
        "json" => "application/json",
        "sarif" => "application/sarif+json",
        "csv" => "text/csv; charset=utf-8",
        _ => "application/pdf",
    }
}

/// The columns, in order. `status` and `waived` are the headline's (the operator's waivers
/// only); `submitter_waived` says whether the submitter's waivers hide the finding.
pub const CSV_COLUMNS: [&str; 11] = [
    "host",
    "check",
    "status",
    "severity",
    "category",
    "detail",
    "remediation",
    "fixed_in",
    "waived",
    "scanned_at",
    "submitter_waived",
];

/// A cell as a spreadsheet will show it, never run it.
pub fn neutralise(cell: &str) -> String {
    let mut out = String::with_capacity(cell.len() + 1);
    // A spreadsheet whose locale separates fields by `;` or a tab splits a cell we quoted
    // for `,` wherever such a character stands, and reads each piece as a field of its own:
    // every place a piece can start is neutralised, not only the cell's first character.
    let mut piece_starts = true;
    for c in cell.chars() {
        if piece_starts && matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r') {
            out.push('\'');
        }
        out.push(c);
        piece_starts = match c {
            ',' | ';' | '\t' | '\n' | '\r' => true,
            // Blanks and quotes before the formula do not stop it.
            ' ' | '"' => piece_starts,
            _ => false,
        };
    }
    out
}

/// The findings of a result document as CSV, a header row first.
pub fn csv(document: &ScanResult) -> Vec<u8> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let _ = writer.write_record(CSV_COLUMNS);
    let submitter = document.submitter_waivers.as_ref();
    for f in &document.findings {
        let by_submitter = submitter.is_some_and(|s| s.hides(&f.id));
        let row = [
            &document.host,
            &f.id,
            f.status.as_str(),
            f.severity.as_str(),
            f.category.as_str(),
            &f.detail,
            &f.remediation,
            f.fixed_in.as_str(),
            &f.ignored.to_string(),
            &document.scanned_at.to_string(),
            &by_submitter.to_string(),
        ];
        let _ = writer.write_record(row.iter().map(|c| neutralise(c)));
    }
    writer.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn document(members: Value) -> ScanResult {
        let mut value = json!({"state": "OK", "waivers": []});
        for (key, member) in members.as_object().unwrap() {
            value[key] = member.clone();
        }
        crate::report::read_document(value.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn formula_cells_are_neutralised_and_quoting_holds() {
        let document = document(json!({
            "host": "cloud.example.com",
            "scannedAt": "2026-11-25T10:00:00Z",
            "findings": [
                {"id": "=HYPERLINK(\"http://evil\",\"x\")", "status": "failed",
                 "severity": "high", "category": "exposure", "detail": "+1", "remediation": "-2",
                 "fixedIn": "reverse proxy", "ignored": false},
                {"id": "@SUM(A1)", "status": "passed", "severity": "medium",
                 "category": "headers", "detail": "line\nbreak, \"quoted\"", "remediation": "\tx",
                 "fixedIn": "the instance", "ignored": true},
                {"id": "\rcmd", "status": "failed", "severity": "low",
                 "category": "", "detail": "", "remediation": "",
                 "fixedIn": "", "ignored": false},
            ]
        }));
        let text = String::from_utf8(csv(&document)).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            reader.headers().unwrap().iter().collect::<Vec<_>>(),
            CSV_COLUMNS
        );
        let rows: Vec<Vec<String>> = reader
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0][1], "'=HYPERLINK(\"http://evil\",\"x\")");
        assert_eq!(rows[0][4], "exposure");
        assert_eq!(rows[0][5], "'+1");
        assert_eq!(rows[0][6], "'-2");
        assert_eq!(rows[1][1], "'@SUM(A1)");
        assert_eq!(rows[1][5], "line\nbreak, \"quoted\"");
        assert_eq!(rows[1][6], "'\tx");
        assert_eq!(rows[0][7], "reverse proxy");
        assert_eq!(rows[1][7], "the instance");
        assert_eq!(rows[2][1], "'\rcmd");
        assert_eq!((&*rows[2][4], &*rows[2][7]), ("", ""), "not stated");
        assert_eq!(rows[1][8], "true");
        for row in &rows {
            for cell in row {
                assert!(
                    !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                    "{cell}"
                );
            }
        }
    }

    /// A server header holding `;=cmd|' /C calc'!A0` must not become a formula in a spreadsheet
    /// that splits the file by `;` (or a tab) instead of `,`: every field any of the three
    /// separators yields starts harmlessly, whatever blanks and quotes stand before it.
    #[test]
    fn no_separator_a_spreadsheet_may_use_starts_a_formula() {
        let hostile = [
            ";=cmd|' /C calc'!A0",
            "X-Web-Version: 4.0;=1+1",
            "a,=HYPERLINK(\"http://evil\")",
            "a\t@SUM(A1)",
            "a; \"+1",
            "a,\t-2",
            "ok\n=line",
        ];
        let findings: Vec<Value> = hostile
            .iter()
            .map(|h| {
                json!({"id": h, "status": "failed", "severity": "low",
                            "category": "headers", "detail": h, "remediation": h,
                            "ignored": false})
            })
            .collect();
        let document = document(
            json!({"host": "cloud.example.com", "scannedAt": "2026-11-22T03:00:00Z", "findings": findings}),
        );
        let text = String::from_utf8(csv(&document)).unwrap();
        for separator in [',', ';', '\t'] {
            for line in text.lines() {
                for field in line.split(separator) {
                    let start = field.trim_start_matches([' ', '"']);
                    assert!(
                        !start.starts_with(['=', '+', '-', '@']),
                        "{separator:?} splits {line:?} into {field:?}"
                    );
                }
            }
        }
        // The text itself is kept, a quote added where a field could start.
        assert_eq!(neutralise(";=cmd|' /C calc'!A0"), ";'=cmd|' /C calc'!A0");
        assert_eq!(neutralise("4.0.0"), "4.0.0");
    }
}
