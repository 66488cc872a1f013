//! The result document as a visitor of the public pages reads it. The scanner's texts are
//! written for the operator who runs it ("pass --ca-file to trust a private CA", "the 55 s time
//! budget (--time-budget) was spent"); a visitor of the result page or the PDF cannot pass a
//! flag, so both render [`document`], where every text speaks to the visitor. The JSON API,
//! the exports other than the PDF and the plugin keep the operator's wording.
//!
//! Known advice is reworded ([`PHRASES`]); advice no phrase knows is dropped with its clause, so
//! a new operator hint elsewhere never reaches a visitor as a flag, a `COS_` variable or a
//! configuration key (the option table says which words are ours).

use crate::report::ScanResult;
use crate::settings::options::OPTIONS;
use serde_json::Value;
use std::ops::Range;

/// Operator advice as its producer writes it, and what a visitor reads instead.
const PHRASES: &[(&str, &str)] = &[
    // src/net/tls.rs, an unknown issuer. The scanner trusts the public roots (and the
    // operator's private CA): not signed by one of them is not signed by one browsers trust.
    (
        "certificate is not signed by a trusted CA (self-signed or private CA; pass --ca-file \
         to trust a private CA)",
        "certificate is not signed by a certificate authority browsers trust (it is \
         self-signed or from a private CA)",
    ),
    // src/checks/dns.rs, CAA not judged for a private CA.
    (" a private CA (--ca-file),", " a private CA,"),
    // src/budget.rs, a retry that would outlast the scan's time.
    (
        " s time budget, --time-budget)",
        " s time limit of this service)",
    ),
    // src/budget.rs, a request whose turn came after the scan's time.
    (
        " s time budget (--time-budget) was spent before its turn; raise --concurrency or the \
         budget",
        " s time limit of this service was spent before its turn",
    ),
    // src/assess/mod.rs, the rating explanation's notes.
    (
        "--insecure: the untrusted certificate chain is listed but does not count",
        "this service accepts untrusted certificates: the untrusted certificate chain is \
         listed but does not count",
    ),
    (
        "scanner.extra_checks_rating is false: failed checks do not cap the rating",
        "on this service failed checks do not cap the rating",
    ),
    // src/net/dns.rs, a DNS server that does not serve the parent zone.
    (" (set scanner.dns_server to a recursive resolver)", ""),
    // src/probe/mod.rs, CAA without a DNS server.
    (
        "no DNS server known (set scanner.dns_server)",
        "no DNS server is configured on this service",
    ),
    // src/knowledge/sources.rs, the operator's own data files.
    (
        "scanner.release_schedule ",
        "the release schedule configured on this service, ",
    ),
    (
        "scanner.vulnerability_db file ",
        "the advisory file configured on this service, ",
    ),
];

/// What a visitor reads for `text`.
pub fn for_visitor(text: &str) -> String {
    let mut out = text.to_string();
    for (operator, visitor) in PHRASES {
        out = out.replace(operator, visitor);
    }
    // Advice none of the phrases knows: the clause naming our setting goes.
    while let Some(word) = operator_word(&out) {
        out = without_advice(&out, word);
    }
    out
}

/// The document with every text as a visitor reads it. Snippets stay as they are: they are
/// the scanned instance's configuration, to paste verbatim. Every string member is translated,
/// a member added later too; names of the document's vocabulary (states, statuses, severities)
/// hold none of our words, so the document reads back as the same type.
pub fn document(document: &ScanResult) -> ScanResult {
    serde_json::to_value(document)
        .and_then(|value| serde_json::from_value(translated(&value)))
        .unwrap_or_else(|_| document.clone())
}

fn translated(document: &Value) -> Value {
    match document {
        Value::String(text) => Value::String(for_visitor(text)),
        Value::Array(items) => Value::Array(items.iter().map(translated).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, value)| match key.as_str() {
                    "snippets" => (key.clone(), value.clone()),
                    _ => (key.clone(), translated(value)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Where the first of the scanner's own words stands in `text`: a flag of the option table
/// (`--ca-file`, `-H`, `-h`), a `COS_` variable, a configuration key (`scanner.dns_server`).
fn operator_word(text: &str) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let name_end = |from: usize, allowed: fn(u8) -> bool| {
        from + bytes[from..].iter().take_while(|&&b| allowed(b)).count()
    };
    for start in 0..bytes.len() {
        let starts_word = start == 0
            || matches!(
                bytes[start - 1],
                b' ' | b'\t' | b'\n' | b'(' | b'"' | b'\'' | b'`' | b',' | b';' | b'/' | b'['
            );
        if !starts_word {
            continue;
        }
        let rest = &text[start..];
        if rest.starts_with("--") {
            let end = name_end(start + 2, |b| b.is_ascii_lowercase() || b == b'-');
            let name = &text[start + 2..end];
            if !name.is_empty() && (name == "help" || OPTIONS.iter().any(|o| o.long == Some(name)))
            {
                return Some(start..end);
            }
        } else if let [b'-', letter, after @ ..] = rest.as_bytes() {
            let alone = after
                .first()
                .is_none_or(|b| !b.is_ascii_alphanumeric() && *b != b'-');
            let ours = *letter == b'h' || OPTIONS.iter().any(|o| o.short == Some(*letter as char));
            if alone && ours {
                return Some(start..start + 2);
            }
        } else if rest.starts_with("COS_") {
            let end = name_end(start + 4, |b| {
                b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit()
            });
            if end > start + 4 {
                return Some(start..end);
            }
        } else if let Some(key) = OPTIONS
            .iter()
            .filter_map(|o| o.config_key)
            // Plain words ("warning", "host") are everybody's; keys with a section or an
            // underscore are ours.
            .filter(|key| key.contains(['.', '_']))
            .find(|key| rest.starts_with(key))
        {
            let end = name_end(start + key.len(), |b| b.is_ascii_lowercase() || b == b'_');
            return Some(start..end);
        }
    }
    None
}

/// `text` without the advice around `word`: the parenthesis holding it, else its "; " clause,
/// else the word itself (with a following ":" or ",").
fn without_advice(text: &str, word: Range<usize>) -> String {
    let before = &text[..word.start];
    let after = &text[word.end..];
    let open = before.rfind('(').filter(|&at| !before[at..].contains(')'));
    let close = after.find(')').filter(|&at| !after[..at].contains('('));
    if let (Some(open), Some(close)) = (open, close) {
        let kept = &before[..open];
        let kept = kept.strip_suffix(' ').unwrap_or(kept);
        return format!("{kept}{}", &after[close + 1..]);
    }
    if let Some(clause) = before.rfind("; ") {
        let rest = after.find("; ").map_or("", |at| &after[at..]);
        return format!("{}{rest}", &before[..clause]);
    }
    let rest = after.trim_start_matches([':', ',']).trim_start();
    format!("{before}{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every operator phrase of the scanner, as its producer writes it in full, and what a
    /// visitor reads.
    #[test]
    fn every_known_operator_phrase_reads_as_a_visitor_s() {
        let cases = [
            (
                "tlsTrusted failed (high): certificate is not signed by a trusted CA (self-signed \
                 or private CA; pass --ca-file to trust a private CA)",
                "tlsTrusted failed (high): certificate is not signed by a certificate authority \
                 browsers trust (it is self-signed or from a private CA)",
            ),
            (
                "the certificate of cloud.example.net chains to a private CA (--ca-file), not to \
                 a publicly trusted one: only publicly trusted CAs must obey CAA records, so none \
                 was asked",
                "the certificate of cloud.example.net chains to a private CA, not to a publicly \
                 trusted one: only publicly trusted CAs must obey CAA records, so none was asked",
            ),
            (
                "https://127.0.0.1:1/status.php: Connection refused (os error 111) (stopped after \
                 1 of 2 attempt(s): another would not end within the 55 s time budget, \
                 --time-budget)",
                "https://127.0.0.1:1/status.php: Connection refused (os error 111) (stopped after \
                 1 of 2 attempt(s): another would not end within the 55 s time limit of this \
                 service)",
            ),
            (
                "the 55 s time budget (--time-budget) was spent before its turn; raise \
                 --concurrency or the budget",
                "the 55 s time limit of this service was spent before its turn",
            ),
            (
                "--insecure: the untrusted certificate chain is listed but does not count",
                "this service accepts untrusted certificates: the untrusted certificate chain is \
                 listed but does not count",
            ),
            (
                "scanner.extra_checks_rating is false: failed checks do not cap the rating",
                "on this service failed checks do not cap the rating",
            ),
            (
                "the DNS server 10.0.0.53 answered the DS query for example.com from the zone \
                 example.com itself, not from its parent: it does not serve the parent zone (set \
                 scanner.dns_server to a recursive resolver)",
                "the DNS server 10.0.0.53 answered the DS query for example.com from the zone \
                 example.com itself, not from its parent: it does not serve the parent zone",
            ),
            (
                "no DNS server known (set scanner.dns_server)",
                "no DNS server is configured on this service",
            ),
            (
                "scanner.release_schedule /etc/x.json is for \"ocis\"; the bundled opencloud \
                 schedule judges OpenCloud instances",
                "the release schedule configured on this service, /etc/x.json is for \"ocis\"; \
                 the bundled opencloud schedule judges OpenCloud instances",
            ),
            (
                "scanner.vulnerability_db file /etc/a.json: not JSON",
                "the advisory file configured on this service, /etc/a.json: not JSON",
            ),
        ];
        for (operator, visitor) in cases {
            assert_eq!(for_visitor(operator), visitor, "{operator}");
            assert!(operator_word(visitor).is_none(), "{visitor}");
        }
    }

    /// Advice no phrase knows: the parenthesis, the "; " clause or the word goes.
    #[test]
    fn unknown_advice_never_names_a_flag_variable_or_key() {
        let cases = [
            ("probe failed (raise --timeout)", "probe failed"),
            ("a; pass -H/--host or COS_HOST; b", "a; b"),
            (
                "no target given; pass -H/--host or COS_HOST",
                "no target given",
            ),
            (
                "-H [fe80::1%25eth9]: this host has no network interface \"eth9\"",
                "[fe80::1%25eth9]: this host has no network interface \"eth9\"",
            ),
            (
                "unknown subcommand \"x\" (see -h)",
                "unknown subcommand \"x\"",
            ),
            ("--retries: too many", "too many"),
            ("scanner.check_debug_ports is off", "is off"),
        ];
        for (operator, visitor) in cases {
            assert_eq!(for_visitor(operator), visitor, "{operator}");
        }
    }

    /// What is not ours stays: header removals, host names, product settings, prose.
    #[test]
    fn the_instance_s_own_words_stay() {
        for text in [
            "Strip the X-Web-Version header at the reverse proxy (nginx: proxy_hide_header \
             X-Web-Version; Caddy: header -X-Web-Version; Apache: Header unset X-Web-Version).",
            "xn--bcher-kva.example answers",
            "set IDM_CREATE_DEMO_USERS=false and OC_URL",
            "the warning threshold was reached; a host - b",
            "scanner.example.com resolves to 10.0.0.1",
        ] {
            assert_eq!(for_visitor(text), text);
        }
    }

    #[test]
    fn the_document_is_translated_except_its_snippets() {
        let snippet = json!([{"for": "nginx", "file": "f", "text": "# pass --ca-file"}]);
        let written = json!({
            "host": "cloud.example.com", "scannedAt": "2026-11-22T03:00:00Z",
            "state": "WARNING", "waivers": [],
            "message": "tlsTrusted failed (high): certificate is not signed by a trusted CA \
                        (self-signed or private CA; pass --ca-file to trust a private CA)",
            "findings": [{"id": "tlsTrusted", "role": "check", "status": "network-limited",
                          "severity": "high", "detail": "raise --timeout (the 55 s time \
                          budget (--time-budget) was spent before its turn; raise \
                          --concurrency or the budget)"}],
            "ratingExplanation": {"notes": ["scanner.extra_checks_rating is false: failed \
                                             checks do not cap the rating"]},
            "remediationPlan": {"steps": [{"action": "a", "snippets": snippet}],
                                "snippets": snippet},
            "rating": 1,
        });
        let read = crate::report::read_document(written.to_string().as_bytes()).unwrap();
        let translated = document(&read);
        assert!(
            !translated.message.contains("--ca-file"),
            "{}",
            translated.message
        );
        assert!(
            !translated.findings[0].detail.contains("--"),
            "{}",
            translated.findings[0].detail
        );
        assert_eq!(
            translated.rating_explanation.notes[0],
            "on this service failed checks do not cap the rating"
        );
        // The document's vocabulary reads back as it was.
        let vocabulary = |r: &ScanResult| {
            let f = &r.findings[0];
            (r.state, r.rating, f.role, f.status, f.severity)
        };
        assert_eq!(vocabulary(&translated), vocabulary(&read));
        let json = serde_json::to_value(&translated).unwrap();
        assert_eq!(json["remediationPlan"]["snippets"], snippet);
        assert_eq!(json["remediationPlan"]["steps"][0]["snippets"], snippet);
    }
}
