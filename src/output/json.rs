//! `--format json`: one JSON array, one result document per host, even for a single host. The
//! document is `report::ScanResult` itself; its schema is `docs/result.schema.json`.

use crate::report::ScanResult;

pub fn render(results: &[ScanResult]) -> String {
    let mut out = String::new();
    for (i, result) in results.iter().enumerate() {
        out.push_str(separator(i));
        out.push_str(&element(result));
    }
    out.push_str(END);
    out
}

/// What goes before the array's element `index`.
pub fn separator(index: usize) -> &'static str {
    if index == 0 { "[\n" } else { ",\n" }
}

/// What closes the array after its last element.
pub const END: &str = "\n]\n";

/// One element of the array as `serde_json::to_string_pretty` writes it inside one: the
/// document pretty-printed, every line indented by two spaces (a string holds no raw line
/// break, so every line is the document's).
pub fn element(result: &ScanResult) -> String {
    let text = serde_json::to_string_pretty(result)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise the result: {e}\"}}"));
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("  ");
        out.push_str(line);
    }
    out
}
