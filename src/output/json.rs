//! `--format json`: one JSON array, one result document per host, even for a single host. The
//! document is `report::ScanResult` itself; its schema is `docs/result.schema.json`.

use crate::report::ScanResult;

pub fn render(results: &[ScanResult]) -> String {
    serde_json::to_string_pretty(results)
        .unwrap_or_else(|e| format!("[{{\"error\": \"cannot serialise the result: {e}\"}}]"))
        + "\n"
}
