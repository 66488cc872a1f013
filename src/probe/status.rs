//! The status document (`/status.php`) and the unauthenticated v1 capabilities document.
//!
//! The release is `productversion`; the `version` field is a legacy constant (`0.1.0.0` on every
//! OpenCloud, `10.11.0.0` on oCIS). Capabilities are read from the v1 path because v2 needs a
//! sign-in on real instances.

use super::ProbeFailure;
use crate::net::http::Client;
use serde_json::Value;

pub const STATUS_PATH: &str = "/status.php";
pub const CAPABILITIES_PATH: &str = "/ocs/v1.php/cloud/capabilities?format=json";

/// The fields of `/status.php` the scanner uses, as the server sent them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusReport {
    pub product_name: Option<String>,
    pub product: Option<String>,
    pub product_version: Option<String>,
    pub legacy_version: Option<String>,
    pub edition: Option<String>,
    pub maintenance: Option<bool>,
}

impl StatusReport {
    /// The product name to recognise the family by: `productname`, else `product`.
    pub fn name(&self) -> Option<&str> {
        self.product_name
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .or(self.product.as_deref().filter(|s| !s.trim().is_empty()))
    }
}

/// Parses a status document; `None` when the body is not one (an HTML catch-all page, a JSON
/// document of another shape).
pub fn parse_status(body: &[u8]) -> Option<StatusReport> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let object = value.as_object()?;
    // Bounded and printable: these strings end up in every output format.
    let text = |key: &str| match object.get(key) {
        Some(Value::String(s)) => Some(printable(s)),
        Some(Value::Number(n)) => Some(printable(&n.to_string())),
        _ => None,
    };
    let report = StatusReport {
        product_name: text("productname"),
        product: text("product"),
        product_version: text("productversion"),
        legacy_version: text("version"),
        edition: text("edition").filter(|e| !e.is_empty()),
        maintenance: object.get("maintenance").and_then(Value::as_bool),
    };
    // A status document names a product or at least a version; anything else is not one.
    (report.name().is_some() || report.product_version.is_some() || report.legacy_version.is_some())
        .then_some(report)
}

pub fn probe_status(client: &Client) -> Result<StatusReport, ProbeFailure> {
    let response = client.get(STATUS_PATH, super::plan::KEEP_STATUS)?;
    let where_ = client.endpoint.url(STATUS_PATH);
    match response.status {
        200 => {}
        500..=599 => {
            return Err(ProbeFailure::Transient(format!(
                "{where_} answered HTTP {}",
                response.status
            )));
        }
        300..=399 => {
            let location = response.header("location").unwrap_or("nowhere");
            return Err(ProbeFailure::Definite(format!(
                "{where_} redirects to {}; point -H at the address the instance is served on",
                printable(location)
            )));
        }
        other => {
            return Err(ProbeFailure::Definite(format!(
                "{where_} answered HTTP {other}: no status document, so this does not look like \
                 an OpenCloud instance; check the host and port"
            )));
        }
    }
    if !response.is_whole() {
        let size = if response.truncated {
            format!(
                "more than {}",
                size_text(crate::net::http::MAX_BODY_BYTES as u64)
            )
        } else {
            format!("{} bytes", response.length())
        };
        return Err(ProbeFailure::Definite(format!(
            "{where_} sent {size}; a status document is a few hundred bytes"
        )));
    }
    parse_status(&response.body).ok_or_else(|| {
        ProbeFailure::Definite(format!(
            "{where_} did not answer a status document (got {}); this does not look like an \
             OpenCloud instance; check the host and port",
            response
                .header("content-type")
                .map(printable)
                .unwrap_or_else(|| "no content type".into())
        ))
    })
}

/// The `capabilities` object of the v1 document, or `None` when it cannot be read.
pub fn probe_capabilities(client: &Client) -> Option<Value> {
    let response = client
        .get(CAPABILITIES_PATH, super::plan::KEEP_CAPABILITIES)
        .ok()?;
    if response.status != 200 || !response.is_whole() {
        return None;
    }
    parse_capabilities(&response.body)
}

pub fn parse_capabilities(body: &[u8]) -> Option<Value> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let capabilities = value.pointer("/ocs/data/capabilities")?;
    capabilities.is_object().then(|| capabilities.clone())
}

/// The release the capabilities document reports (`version.productversion`), used when
/// `/status.php` lacks it.
pub fn capabilities_version(document: &Value) -> Option<String> {
    document
        .pointer("/core/status/productversion")
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// A size in our messages: `1 MiB`, `64 KiB`, `300 bytes`.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1024 * 1024 && b % (1024 * 1024) == 0 => format!("{} MiB", b / (1024 * 1024)),
        b if b >= 1024 && b % 1024 == 0 => format!("{} KiB", b / 1024),
        b => format!("{b} bytes"),
    }
}

/// Server text that reaches our messages: one line, printable, bounded.
pub fn printable(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(120)
        .collect();
    cleaned.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_body(path: &str) -> Vec<u8> {
        let text = std::fs::read(path).unwrap();
        let split = text
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|p| p + 4)
            .or_else(|| text.windows(2).position(|w| w == b"\n\n").map(|p| p + 2));
        text[split.unwrap()..].to_vec()
    }

    #[test]
    fn real_opencloud_status_reports_productversion_not_the_legacy_version() {
        let body = fixture_body("tests/fixtures/opencloud-4.0.0/status.php.txt");
        let report = parse_status(&body).unwrap();
        assert_eq!(report.name(), Some("OpenCloud"));
        assert_eq!(report.product_version.as_deref(), Some("4.0.0"));
        assert_eq!(report.legacy_version.as_deref(), Some("0.1.0.0"));
        assert_eq!(report.edition, None);
        assert_eq!(report.maintenance, Some(false));
    }

    #[test]
    fn real_ocis_status_is_recognised() {
        let body = fixture_body("tests/fixtures/ocis-7.0.0/status.php.txt");
        let report = parse_status(&body).unwrap();
        assert_eq!(report.name(), Some("Infinite Scale"));
        assert_eq!(report.product_version.as_deref(), Some("7.0.0+860e1ad9"));
    }

    #[test]
    fn catch_all_page_is_not_a_status_document() {
        let body = fixture_body("tests/fixtures/opencloud-4.0.0/random-nonexistent-path.txt");
        assert_eq!(parse_status(&body), None);
        assert_eq!(parse_status(b"{\"hello\": 1}"), None);
        assert_eq!(parse_status(b"[1,2]"), None);
        assert_eq!(parse_status(&[0xff, 0xfe, 0x00]), None);
    }

    #[test]
    fn real_capabilities_carry_the_release() {
        let body = fixture_body("tests/fixtures/opencloud-4.0.0/ocs-v1-capabilities.txt");
        let caps = parse_capabilities(&body).unwrap();
        assert_eq!(capabilities_version(&caps).as_deref(), Some("4.0.0"));
        let v2 = fixture_body("tests/fixtures/opencloud-4.0.0/ocs-v2-capabilities.txt");
        assert_eq!(parse_capabilities(&v2), None);
    }

    #[test]
    fn printable_strips_controls_and_bounds_length() {
        assert_eq!(printable("a\r\nb\u{1b}[31m"), "a  b [31m");
        assert_eq!(printable(&"x".repeat(500)).len(), 120);
    }
}
