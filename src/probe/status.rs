//! The status document (`/status.php`) and the unauthenticated v1 capabilities document.
//!
//! The release is `productversion`; the `version` field is a legacy constant (`0.1.0.0` on every
//! OpenCloud, `10.11.0.0` on oCIS). Capabilities are read from the v1 path because v2 needs a
//! sign-in on real instances.

use super::ProbeFailure;
use crate::capped::{self, Reader, Shallow};
use crate::net::http::{Client, Keep, Response};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess};
use serde_json::Value;
use std::cell::Cell;

pub const STATUS_PATH: &str = "/status.php";
/// What the probe keeps of `/status.php`: parsed whole [246 bytes] (the budgets of every probe
/// are in `plan`).
pub const KEEP_STATUS: Keep = Keep::Document(64 * 1024);
pub const CAPABILITIES_PATH: &str = "/ocs/v1.php/cloud/capabilities?format=json";

/// The fields of `/status.php` the scanner uses, as the server sent them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusReport {
    pub product_name: Option<String>,
    pub product: Option<String>,
    pub product_version: Option<String>,
    pub legacy_version: Option<String>,
    pub edition: Option<String>,
}

impl StatusReport {
    /// The product name to recognise the family by: `productname`, else `product`.
    pub fn name(&self) -> Option<&str> {
        self.product_name
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .or(self.product.as_deref().filter(|s| !s.trim().is_empty()))
    }

    /// The family the name belongs to; OpenCloud when it names none we know.
    pub fn family(&self) -> crate::family::ProductFamily {
        self.name()
            .and_then(crate::family::ProductFamily::from_product_name)
            .unwrap_or(crate::family::ProductFamily::OpenCloud)
    }
}

/// The members of a status document the report takes, as `parse_status` reads them.
const STATUS_MEMBERS: [&str; 5] = [
    "productname",
    "product",
    "productversion",
    "version",
    "edition",
];

/// Parses a status document; `None` when the body is not one (an HTML catch-all page, a JSON
/// document of another shape). Read member by member: the members the report takes are kept,
/// the rest skipped unread, so a hostile document never becomes a tree.
pub fn parse_status(body: &[u8]) -> Option<StatusReport> {
    let [name, product, version, legacy, edition] =
        capped::json_members::<Shallow, 5>(body, STATUS_MEMBERS)?;
    // A string or number as sent (any other JSON type reads as absent), bounded and
    // printable: these strings end up in every output format.
    let text = |value: Shallow| match value {
        Shallow::Text(text) | Shallow::Number(text) => Some(printable(&text)),
        _ => None,
    };
    let report = StatusReport {
        product_name: text(name),
        product: text(product),
        product_version: text(version),
        legacy_version: text(legacy),
        edition: text(edition).filter(|e| !e.is_empty()),
    };
    // A status document names a product or at least a version; anything else is not one.
    (report.name().is_some() || report.product_version.is_some() || report.legacy_version.is_some())
        .then_some(report)
}

pub fn probe_status(client: &Client) -> Result<StatusReport, ProbeFailure> {
    let response = client.get(STATUS_PATH, KEEP_STATUS)?;
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
        let size = body_size(&response);
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

/// The members of the capabilities object that are read: the release (`core.status`), the
/// sharing and password settings (`sharing`, `parity`) and what the configuration fingerprint
/// digests (`graph`). The others are skipped unread.
const CAPABILITIES_READ: &[&str] = &["core", "files_sharing", "password_policy", "graph"];

/// The most values (objects, lists, scalars) kept of a capabilities document; one with more is
/// not read. The members read hold 77 on OpenCloud 4.0.0 (179 in the whole object).
pub const MAX_CAPABILITY_VALUES: usize = 512;

/// The `capabilities` object of a v1 document (`ocs.data.capabilities`) with the members that
/// are read ([`CAPABILITIES_READ`]), or `None` when the body is not such a document. The rest
/// is skipped as it is parsed, and what is kept is bounded by [`MAX_CAPABILITY_VALUES`].
pub fn parse_capabilities(body: &[u8]) -> Option<Value> {
    let budget = Cell::new(MAX_CAPABILITY_VALUES);
    let mut de = serde_json::Deserializer::from_slice(body);
    let capabilities = Descend {
        steps: &["ocs", "data", "capabilities"],
        budget: &budget,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    capabilities
}

/// Follows object members named by `steps` and reads the object at their end, keeping its
/// [`CAPABILITIES_READ`] members; `None` when a step is missing or not an object.
struct Descend<'b> {
    steps: &'static [&'static str],
    budget: &'b Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for Descend<'_> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        capped::read(d, self)
    }
}

impl<'de> Reader<'de> for Descend<'_> {
    type Value = Option<Value>;

    fn shallow<E: de::Error>(self, _: Shallow) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn mapping<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let Some((step, rest)) = self.steps.split_first() else {
            let mut kept = serde_json::Map::new();
            capped::each_member(map, |key, map| {
                if !CAPABILITIES_READ.contains(&key) {
                    return Ok(false);
                }
                let value = map.next_value_seed(capped::BoundedValue {
                    budget: self.budget,
                })?;
                kept.insert(key.to_string(), value);
                Ok(true)
            })?;
            return Ok(Some(Value::Object(kept)));
        };
        // A later member of the same name wins, as in a JSON object read whole.
        let mut found = None;
        capped::each_member(map, |key, map| {
            if key != *step {
                return Ok(false);
            }
            found = map.next_value_seed(Descend {
                steps: rest,
                budget: self.budget,
            })?;
            Ok(true)
        })?;
        Ok(found)
    }
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

/// How long a body was: `1234 bytes`, or `more than 1 MiB` when reading stopped at the cap.
pub fn body_size(r: &Response) -> String {
    if r.truncated {
        let cap = crate::net::http::MAX_BODY_BYTES as u64;
        format!("more than {}", crate::files::size_text(cap))
    } else {
        format!("{} bytes", r.length())
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

    /// How the status document was read before it was read member by member.
    fn parse_status_as_a_tree(body: &[u8]) -> Option<StatusReport> {
        let value: Value = serde_json::from_slice(body).ok()?;
        let object = value.as_object()?;
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
        };
        (report.name().is_some()
            || report.product_version.is_some()
            || report.legacy_version.is_some())
        .then_some(report)
    }

    #[test]
    fn status_documents_read_member_by_member_as_they_were_read_whole() {
        let real = [
            fixture_body("tests/fixtures/opencloud-4.0.0/status.php.txt"),
            fixture_body("tests/fixtures/ocis-7.0.0/status.php.txt"),
            fixture_body("tests/fixtures/opencloud-4.0.0/random-nonexistent-path.txt"),
        ];
        let crafted: Vec<Vec<u8>> = [
            r#"{"productversion": 4, "version": 1.5, "edition": 1e3, "maintenance": "yes"}"#,
            r#"{"productname": "A", "productname": "B", "maintenance": true, "x": [{"y": 1}]}"#,
            r#"{"product": -7, "productversion": 18446744073709551615, "edition": ""}"#,
            r#"{"productname": null, "product": ["x"], "version": {"a": 1}, "edition": true}"#,
            r#"{"productversion": "4.0.0\u0000\r\nx", "maintenance": false}  "#,
            r#"{"productversion": "4.0.0"} trailing"#,
            r#"["productname", "OpenCloud"]"#,
            r#""OpenCloud""#,
            r#"{}"#,
            "",
            r#"{"productname": "\u00e9\u00e9", "product": "\ud800"}"#,
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
        let long = format!(r#"{{"productname": "{}"}}"#, "x".repeat(10_000)).into_bytes();
        for body in real.iter().chain(&crafted).chain([&long]) {
            assert_eq!(
                parse_status(body),
                parse_status_as_a_tree(body),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    /// How the capabilities were read before only the members read were kept.
    fn capabilities_as_a_tree(body: &[u8]) -> Option<Value> {
        let value: Value = serde_json::from_slice(body).ok()?;
        let capabilities = value.pointer("/ocs/data/capabilities")?.as_object()?;
        let kept: serde_json::Map<String, Value> = capabilities
            .iter()
            .filter(|(k, _)| CAPABILITIES_READ.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Some(Value::Object(kept))
    }

    #[test]
    fn capabilities_keep_the_members_read_as_they_were_in_the_tree() {
        let real = [
            fixture_body("tests/fixtures/opencloud-4.0.0/ocs-v1-capabilities.txt"),
            fixture_body("tests/fixtures/ocis-7.0.0/ocs-v1-capabilities-unauth.txt"),
            fixture_body("tests/fixtures/ocis-7.0.0/ocs-v1-capabilities-basic-admin.txt"),
            fixture_body("tests/fixtures/opencloud-4.0.0/ocs-v2-capabilities.txt"),
        ];
        let crafted: Vec<Vec<u8>> = [
            r#"{"ocs": {"data": {"capabilities": {"core": 1, "graph": [1.5, null], "x": {}}}}}"#,
            r#"{"ocs": {"data": {"capabilities": {"core": 1}}}, "ocs": {"data": {}}}"#,
            r#"{"ocs": {"data": {"capabilities": {"core": 1}, "capabilities": {"graph": 2}}}}"#,
            r#"{"ocs": {"data": {"capabilities": []}}}"#,
            r#"{"ocs": [{"data": {}}]}"#,
            r#"{"ocs": {"data": {"capabilities": {}}}} x"#,
            r#"[1]"#,
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
        for body in real.iter().chain(&crafted) {
            assert_eq!(
                parse_capabilities(body),
                capabilities_as_a_tree(body),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        let caps = parse_capabilities(&real[0]).unwrap();
        assert_eq!(capabilities_version(&caps).as_deref(), Some("4.0.0"));
        assert!(caps.pointer("/files_sharing/public/password").is_some());
    }

    #[test]
    fn a_capabilities_document_of_many_values_is_not_read() {
        // 60 KiB of `{"a":0}` in a member that is read: refused at the budget, never a tree.
        let many = vec!["{\"a\":0}"; 60 * 1024 / 8].join(",");
        let body = format!(r#"{{"ocs":{{"data":{{"capabilities":{{"graph":[{many}]}}}}}}}}"#);
        assert_eq!(parse_capabilities(body.as_bytes()), None);
        // The same in a member that is not read is skipped.
        let body = format!(r#"{{"ocs":{{"data":{{"capabilities":{{"search":[{many}]}}}}}}}}"#);
        assert_eq!(
            parse_capabilities(body.as_bytes()),
            Some(Value::Object(serde_json::Map::new()))
        );
    }

    #[test]
    fn printable_strips_controls_and_bounds_length() {
        assert_eq!(printable("a\r\nb\u{1b}[31m"), "a  b [31m");
        assert_eq!(printable(&"x".repeat(500)).len(), 120);
    }
}
