//! The configuration fingerprint: one digest per area of what the instance reports (transport,
//! headers, sharing, authentication, proxy), and one over all of them. It holds no
//! configuration values, only digests, so it can be stored and compared freely; a change
//! (drift) never creates a finding or changes the exit code.

use crate::net::HttpsObservation;
use crate::probe::{Measurements, plan};
use crate::report::Fingerprint;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Response headers that describe configuration (not per-request values such as Date).
const SECURITY_HEADERS: &[&str] = &[
    "content-security-policy",
    "cross-origin-embedder-policy",
    "cross-origin-opener-policy",
    "cross-origin-resource-policy",
    "permissions-policy",
    "referrer-policy",
    "strict-transport-security",
    "x-content-type-options",
    "x-frame-options",
    "x-permitted-cross-domain-policies",
    "x-robots-tag",
    "x-xss-protection",
];

const PROXY_HEADERS: &[&str] = &["server", "via", "x-powered-by"];

fn digest(parts: &[String]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        // Length-prefixed so ("ab","c") and ("a","bc") differ.
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    crate::text::hex(&hasher.finalize())
}

fn headers(m: &Measurements, names: &[&str]) -> Vec<String> {
    let Some(root) = &m.root else {
        return vec!["unread".into()];
    };
    let mut out: Vec<String> = names
        .iter()
        .map(|n| format!("{n}={}", root.header_values(n).join("\n")))
        .collect();
    out.sort();
    out
}

fn json_at(value: Option<&serde_json::Value>, pointer: &str) -> String {
    value
        .and_then(|v| v.pointer(pointer))
        .map(|v| v.to_string())
        .unwrap_or_else(|| "absent".into())
}

pub fn of(m: &Measurements) -> Fingerprint {
    let transport = match &m.https {
        HttpsObservation::Verified(h) | HttpsObservation::Unverified(h) => vec![
            "https".to_string(),
            h.protocol.clone(),
            format!("trusted={}", h.trust.is_ok()),
        ],
        HttpsObservation::Unavailable(_) => vec!["http".to_string()],
    };
    let caps = m.capabilities.as_ref();
    let sharing = vec![json_at(caps, "/files_sharing")];
    // The issuer as JSON (`"https://..."`, `null` when it is not a string), as it was digested
    // when the document was read whole.
    let oidc_issuer = m
        .answer(plan::OIDC)
        .and_then(|r| plan::parse_discovery(&r.body))
        .map(|d| serde_json::Value::from(d.issuer).to_string())
        .unwrap_or_else(|| "absent".into());
    let authentication = vec![
        json_at(caps, "/password_policy"),
        json_at(caps, "/graph"),
        oidc_issuer,
    ];
    let mut areas: BTreeMap<String, String> = BTreeMap::new();
    areas.insert("transport".into(), digest(&transport));
    areas.insert("headers".into(), digest(&headers(m, SECURITY_HEADERS)));
    areas.insert("sharing".into(), digest(&sharing));
    areas.insert("authentication".into(), digest(&authentication));
    areas.insert("proxy".into(), digest(&headers(m, PROXY_HEADERS)));
    let all: Vec<String> = areas.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    let overall = digest(&all);
    Fingerprint {
        short: overall[..8].to_string(),
        digest: overall,
        areas,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::http::{Endpoint, Response, Scheme};

    fn measurements(csp: &str) -> Measurements {
        let endpoint = Endpoint {
            scheme: Scheme::Http,
            url_host: "x".into(),
            port: 80,
            base_path: String::new(),
        };
        let mut m = Measurements::empty(endpoint, HttpsObservation::Unavailable("off".into()));
        m.root = Some(Response {
            status: 200,
            headers: vec![
                ("Content-Security-Policy".into(), csp.into()),
                ("Date".into(), "changes every time".into()),
            ],
            body: vec![],
            truncated: false,
            digest: None,
        });
        m
    }

    #[test]
    fn a_header_change_moves_only_the_headers_area() {
        let a = of(&measurements("default-src 'self'"));
        let b = of(&measurements("default-src 'none'"));
        assert_ne!(a.digest, b.digest);
        assert_ne!(a.areas["headers"], b.areas["headers"]);
        assert_eq!(a.areas["transport"], b.areas["transport"]);
        assert_eq!(a.short.len(), 8);
    }

    #[test]
    fn it_is_stable_and_holds_no_values() {
        let a = of(&measurements("default-src 'self'"));
        assert_eq!(a, of(&measurements("default-src 'self'")));
        let json = serde_json::to_string(&a).unwrap();
        assert!(!json.contains("default-src"));
    }
}
