//! DNS checks: `caaRecord` (the zone limits which CAs may issue certificates for the name,
//! RFC 8659), `dnssec` (the name's zone is signed and its parent vouches for the keys, RFC
//! 9364) and the `dnsAddresses` observation (what the name resolves to, so the result document
//! carries it). All need a DNS name: address targets have no DNS findings. A name public DNS
//! cannot know (`net::dns::special_use`: `localhost`, `.local`, a single label, ...) skips CAA
//! and DNSSEC; CAA also needs a certificate a publicly trusted CA issued, the only kind CAA
//! binds.

use super::{CheckSpec, DNS_ZONE, Fix, Measure, Unmeasured, Verdict, finding, verdict};
use crate::net::HttpsObservation;
use crate::net::dns::{
    CaaLookup, CaaRecord, DnssecLookup, DnssecZone, algorithm_name, special_use,
};
use crate::net::http::Scheme;
use crate::net::tls::TrustedBy;
use crate::probe::status::printable;
use crate::probe::{self, DnsObservation, Measurements, distinct};
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

const CAA_DOCS: &str = "https://www.rfc-editor.org/rfc/rfc8659";
const DNSSEC_DOCS: &str = "https://www.rfc-editor.org/rfc/rfc9364";

/// What every row of this module shares: read from DNS, fixed in the zone.
const DNS_ROW: CheckSpec = CheckSpec {
    role: Role::Hardening,
    severity: Severity::Low,
    category: Category::Dns,
    fixed_in: DNS_ZONE,
    verified_by: &[Measure::Probe(probe::DNS)],
    ..CheckSpec::ROW
};

pub static CAA_RECORD: CheckSpec = CheckSpec {
    id: "caaRecord",
    unmeasured: &[Unmeasured::Because(
        "CAA records are looked up for DNS names only",
    )],
    title: "A CAA record names the CAs that may issue certificates for the name",
    remediation: "Publish a CAA record on the name or its domain naming the CA that issues \
                  the instance's certificate (e.g. `example.com. CAA 0 issue \
                  \"letsencrypt.org\"`), so no other CA may issue one for it.",
    documentation: CAA_DOCS,
    fix: Fix::CaaRecord,
    ..DNS_ROW
};

pub static DNSSEC: CheckSpec = CheckSpec {
    id: "dnssec",
    unmeasured: &[Unmeasured::Because(
        "DNSSEC is looked up for DNS names only",
    )],
    title: "The name's DNS zone is signed (DNSSEC) and its parent publishes DS for it",
    remediation: "Sign the zone holding the name (in BIND `dnssec-policy default;` on the \
                  zone, or the DNS host's DNSSEC switch), then publish the key-signing \
                  key's DS record at the registrar (or in the parent zone) so validating \
                  resolvers can verify the answers for the name.",
    documentation: DNSSEC_DOCS,
    ..DNS_ROW
};

pub static DNS_ADDRESSES: CheckSpec = CheckSpec {
    id: "dnsAddresses",
    role: Role::Observation,
    title: "The addresses the name resolves to (for information)",
    remediation: "Nothing to fix: the addresses are listed so the result records them; \
                  check they are the ones the instance should be reached at.",
    documentation: super::DOCS,
    // An observation: nothing to verify.
    verified_by: &[],
    ..DNS_ROW
};

pub static ROWS: &[&CheckSpec] = &[&CAA_RECORD, &DNSSEC, &DNS_ADDRESSES];

/// At most this many CAs or addresses are named in a detail.
const LISTED: usize = 8;

pub fn evaluate(m: &Measurements) -> Vec<Finding> {
    let Some(dns) = &m.dns else {
        return Vec::new();
    };
    vec![
        caa_record(dns, m.endpoint.scheme, &m.https),
        verdict(&DNSSEC, dnssec(dns)),
        verdict(&DNS_ADDRESSES, dns_addresses(dns)),
    ]
}

fn caa_record(dns: &DnsObservation, scheme: Scheme, https: &HttpsObservation) -> Finding {
    let name = printable(&dns.name);
    let skipped = |detail: String| finding(&CAA_RECORD, Status::Skipped, detail);
    if scheme == Scheme::Http {
        return skipped(format!(
            "the scan runs over plain HTTP: no certificate of {name} to restrict"
        ));
    }
    if let Some(kind) = special_use(&dns.name) {
        return skipped(format!(
            "{name} is {kind}, which public DNS does not serve: no CAA record applies to it, \
             none was asked"
        ));
    }
    // The CA/Browser Forum rules make publicly trusted CAs obey CAA; a private CA need not.
    let not_public = "only publicly trusted CAs must obey CAA records, so none was asked";
    match https.handshake().map(|h| &h.trust) {
        Some(Ok(TrustedBy::PublicRoots)) | None => {}
        Some(Ok(TrustedBy::PrivateCa)) => {
            return skipped(format!(
                "the certificate of {name} chains to a private CA (--ca-file), not to a \
                 publicly trusted one: {not_public}"
            ));
        }
        Some(Err(reason)) => {
            return skipped(format!(
                "the certificate of {name} does not chain to a publicly trusted CA ({}): \
                 {not_public}",
                printable(reason)
            ));
        }
    }
    match &dns.caa {
        CaaLookup::Records { owner, records } => {
            let owner = printable(owner);
            let issue = issuers(records, "issue");
            let wild = issuers(records, "issuewild");
            if issue.is_empty() && wild.is_empty() {
                let tags = listed(records.iter().map(|r| r.tag.as_str()));
                let detail = format!(
                    "the CAA records on {owner} ({tags}) have no issue or issuewild property: \
                     any CA may issue certificates for {name}"
                );
                return finding(&CAA_RECORD, Status::Failed, detail);
            }
            let allows = [(&issue, " allows"), (&wild, " allows for wildcards")];
            let allowed: Vec<String> = allows
                .into_iter()
                .filter(|(cas, _)| !cas.is_empty())
                .map(|(cas, what)| format!("{what} {}", listed(cas.iter().map(String::as_str))))
                .collect();
            let detail = format!("CAA on {owner}{}", allowed.join(";"));
            finding(&CAA_RECORD, Status::Passed, detail)
        }
        CaaLookup::NoRecords => {
            let detail = format!(
                "no CAA record on {name} or its parents: any CA may issue certificates for it"
            );
            finding(&CAA_RECORD, Status::Failed, detail)
        }
        CaaLookup::Failed(reason) => {
            let why = printable(reason);
            let detail = format!("the CAA records of {name} could not be looked up: {why}");
            finding(&CAA_RECORD, Status::Indeterminate, detail)
        }
        CaaLookup::NotAsked => skipped(format!("the CAA records of {name} were not asked")),
    }
}

/// Over plain HTTP too: DNSSEC protects the address lookup itself, whatever the scheme.
fn dnssec(dns: &DnsObservation) -> Verdict {
    let name = printable(&dns.name);
    if let Some(kind) = special_use(&dns.name) {
        let detail = format!(
            "{name} is {kind}, which public DNS does not serve: it has no zone there to sign, \
             none was asked"
        );
        return (Status::Skipped, detail);
    }
    let zone = match &dns.dnssec {
        DnssecLookup::Zone(zone) => zone,
        DnssecLookup::NotAsked => {
            let detail = format!("the zone of {name} was not asked about");
            return (Status::Skipped, detail);
        }
        DnssecLookup::Failed(reason) => {
            let why = printable(reason);
            let detail =
                format!("whether the zone of {name} is signed could not be decided: {why}");
            return (Status::Indeterminate, detail);
        }
    };
    let apex = printable(&zone.apex);
    let the_zone = if apex == name {
        format!("the zone {apex}")
    } else {
        format!("the zone {apex} holding {name}")
    };
    let keys = key_list(zone);
    let ds_tags = tags(zone.ds.iter().map(|d| d.key_tag));
    match (zone.dnskeys.is_empty(), zone.ds.is_empty()) {
        (true, true) => (
            Status::Failed,
            format!("{the_zone} is not signed: no DNSKEY at {apex} and no DS for it at its parent"),
        ),
        (false, true) => (
            Status::Failed,
            format!(
                "{the_zone} is signed with {keys} but its parent publishes no DS for it: \
                 validating resolvers treat it as unsigned"
            ),
        ),
        (true, false) => (
            Status::Failed,
            format!(
                "the parent of {apex} publishes DS for {ds_tags} but {apex} serves no DNSKEY: \
                 validating resolvers reject its answers"
            ),
        ),
        (false, false) if !ds_matches_a_key(zone) => (
            Status::Failed,
            format!(
                "the DS at the parent of {apex} (for {ds_tags}) matches none of the zone's \
                 keys ({keys}): validating resolvers reject its answers"
            ),
        ),
        (false, false) => {
            let validation = if zone.authenticated {
                "the resolver asked validated the answers (AD)"
            } else if zone.resolver {
                "the resolver asked did not mark the answers validated (no AD): it does not \
                 validate, or the chain of trust above the zone is not signed"
            } else {
                "the DNS server asked is authoritative, not a resolver, so it validated nothing"
            };
            (
                Status::Passed,
                format!(
                    "{the_zone} is signed with {keys} and its parent publishes DS for \
                     {ds_tags}; {validation}"
                ),
            )
        }
    }
}

/// `2 DNSKEY (ECDSAP256SHA256, key tags 31663, 4711)`: the keys and their algorithms.
fn key_list(zone: &DnssecZone) -> String {
    let algorithms = distinct(zone.dnskeys.iter().map(|k| algorithm_name(k.algorithm)));
    format!(
        "{} DNSKEY ({}, {})",
        zone.dnskeys.len(),
        listed(algorithms.iter().map(String::as_str)),
        tags(zone.dnskeys.iter().map(|k| k.key_tag))
    )
}

/// `key tag 31663` or `key tags 31663, 4711`, at most [`LISTED`] of them.
fn tags(tags: impl Iterator<Item = u16>) -> String {
    let tags: Vec<String> = distinct(tags).iter().map(u16::to_string).collect();
    let noun = if tags.len() == 1 {
        "key tag"
    } else {
        "key tags"
    };
    format!("{noun} {}", listed(tags.iter().map(String::as_str)))
}

/// Whether some DS names a key of the zone (key tag and algorithm), as a validating resolver
/// needs to follow the chain of trust into the zone. The digest itself is not recomputed: the
/// keys' full records are not kept.
fn ds_matches_a_key(zone: &DnssecZone) -> bool {
    zone.ds.iter().any(|ds| {
        zone.dnskeys
            .iter()
            .any(|k| k.key_tag == ds.key_tag && k.algorithm == ds.algorithm)
    })
}

/// The CA domains of the `issue` (or `issuewild`) properties, once each, in order. A value
/// without a domain (`;`) forbids issuance and reads as "no CA".
fn issuers(records: &[CaaRecord], tag: &str) -> Vec<String> {
    let domains = records.iter().filter(|r| r.tag == tag).map(|record| {
        let domain = record.value.split(';').next().unwrap_or("").trim();
        if domain.is_empty() {
            "no CA".to_string()
        } else {
            printable(domain)
        }
    });
    distinct(domains)
}

/// Comma-separated, at most [`LISTED`] items and a count of the rest, each printable.
fn listed<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    let mut text = items
        .iter()
        .take(LISTED)
        .map(|i| printable(i))
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED {
        text.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    text
}

fn dns_addresses(dns: &DnsObservation) -> Verdict {
    let name = printable(&dns.name);
    match &dns.addresses {
        Ok(addresses) if !addresses.is_empty() => {
            let addresses: Vec<String> = addresses.iter().map(ToString::to_string).collect();
            let listed = listed(addresses.iter().map(String::as_str));
            (Status::Passed, format!("{name} resolves to {listed}"))
        }
        Ok(_) => (
            Status::Indeterminate,
            format!("{name} resolves to no address"),
        ),
        Err(reason) => {
            let detail = format!("{name} could not be resolved: {}", printable(reason));
            (Status::Indeterminate, detail)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::HttpsObservation;
    use crate::net::dns::{Dnskey, DsRecord};
    use crate::net::http::Endpoint;
    use crate::net::tls::{Handshake, TrustedBy};
    use std::net::IpAddr;

    fn measurements(https: bool, dns: Option<DnsObservation>) -> Measurements {
        let endpoint = Endpoint {
            scheme: if https { Scheme::Https } else { Scheme::Http },
            url_host: "cloud.example.net".into(),
            port: if https { 443 } else { 80 },
            base_path: String::new(),
        };
        let observation = if https {
            HttpsObservation::Verified(Handshake {
                protocol: "TLSv1.3".into(),
                cipher_suite: "TLS13_AES_128_GCM_SHA256".into(),
                chain: Vec::new(),
                trust: Ok(TrustedBy::PublicRoots),
            })
        } else {
            HttpsObservation::Unavailable("connection refused".into())
        };
        let mut m = Measurements::empty(endpoint, observation);
        m.dns = dns;
        m
    }

    fn observation(caa: CaaLookup) -> DnsObservation {
        DnsObservation {
            name: "cloud.example.net".into(),
            addresses: Ok(vec![
                "192.0.2.1".parse().unwrap(),
                "2001:db8::1".parse().unwrap(),
            ]),
            caa,
            dnssec: DnssecLookup::Failed("not asked".into()),
        }
    }

    fn record(tag: &str, value: &str) -> CaaRecord {
        CaaRecord {
            flags: 0,
            tag: tag.into(),
            value: value.into(),
        }
    }

    fn only(findings: &[Finding], id: &str) -> Finding {
        let matching: Vec<&Finding> = findings.iter().filter(|f| f.id == id).collect();
        assert_eq!(matching.len(), 1, "{id} in {findings:?}");
        matching[0].clone()
    }

    fn caa(https: bool, lookup: CaaLookup) -> Finding {
        only(
            &evaluate(&measurements(https, Some(observation(lookup)))),
            "caaRecord",
        )
    }

    #[test]
    fn rows_are_as_specified() {
        let caa = crate::checks::spec("caaRecord").unwrap();
        assert_eq!(caa.role, Role::Hardening);
        assert_eq!(caa.severity, Severity::Low);
        assert_eq!(caa.category, Category::Dns);
        assert_eq!(caa.fixed_in, DNS_ZONE);
        assert!(caa.verifiable());
        let dnssec = crate::checks::spec("dnssec").unwrap();
        assert_eq!(dnssec.role, Role::Hardening);
        assert_eq!(dnssec.severity, Severity::Low);
        assert_eq!(dnssec.category, Category::Dns);
        assert_eq!(dnssec.fixed_in, DNS_ZONE);
        assert!(dnssec.verifiable());
        assert!(dnssec.remediation.contains("DS record at the registrar"));
        let addresses = crate::checks::spec("dnsAddresses").unwrap();
        assert_eq!(addresses.role, Role::Observation);
        assert_eq!(addresses.severity, Severity::Low);
        assert_eq!(addresses.category, Category::Dns);
    }

    #[test]
    fn no_dns_observation_no_findings() {
        assert!(evaluate(&measurements(true, None)).is_empty());
    }

    #[test]
    fn an_issue_property_passes_and_names_owner_and_cas() {
        let f = caa(
            true,
            CaaLookup::Records {
                owner: "example.net".into(),
                records: vec![
                    record("issue", "letsencrypt.org; validationmethods=dns-01"),
                    record("issue", "letsencrypt.org"),
                    record("issue", "sectigo.com"),
                    record("iodef", "mailto:security@example.net"),
                ],
            },
        );
        assert_eq!(f.status, Status::Passed, "{f:?}");
        assert_eq!(
            f.detail,
            "CAA on example.net allows letsencrypt.org, sectigo.com"
        );
        assert_eq!(f.role, Role::Hardening);
        assert!(!f.counts);
        assert_eq!(f.fixed_in, DNS_ZONE);
    }

    #[test]
    fn issuewild_alone_passes_and_a_forbidding_value_reads_no_ca() {
        let f = caa(
            true,
            CaaLookup::Records {
                owner: "cloud.example.net".into(),
                records: vec![record("issue", ";"), record("issuewild", "pki.example.net")],
            },
        );
        assert_eq!(f.status, Status::Passed, "{f:?}");
        assert_eq!(
            f.detail,
            "CAA on cloud.example.net allows no CA; allows for wildcards pki.example.net"
        );
        let f = caa(
            true,
            CaaLookup::Records {
                owner: "cloud.example.net".into(),
                records: vec![record("issuewild", "pki.example.net")],
            },
        );
        assert_eq!(f.status, Status::Passed, "{f:?}");
    }

    #[test]
    fn records_without_issue_fail() {
        let f = caa(
            true,
            CaaLookup::Records {
                owner: "example.net".into(),
                records: vec![record("iodef", "mailto:security@example.net")],
            },
        );
        assert_eq!(f.status, Status::Failed, "{f:?}");
        assert!(f.detail.contains("(iodef)"), "{}", f.detail);
        assert!(f.detail.contains("any CA may issue"), "{}", f.detail);
    }

    #[test]
    fn no_records_fail() {
        let f = caa(true, CaaLookup::NoRecords);
        assert_eq!(f.status, Status::Failed);
        assert_eq!(
            f.detail,
            "no CAA record on cloud.example.net or its parents: any CA may issue certificates \
             for it"
        );
    }

    #[test]
    fn a_failed_lookup_is_indeterminate() {
        let f = caa(true, CaaLookup::Failed("SERVFAIL\nfrom\tthe server".into()));
        assert_eq!(f.status, Status::Indeterminate);
        assert!(!f.detail.contains(['\n', '\t']), "{}", f.detail);
        assert!(f.detail.contains("SERVFAIL"), "{}", f.detail);
    }

    #[test]
    fn plain_http_skips_the_caa_check() {
        for lookup in [CaaLookup::NoRecords, CaaLookup::Failed("timeout".into())] {
            let f = caa(false, lookup);
            assert_eq!(f.status, Status::Skipped, "{f:?}");
            assert!(f.detail.contains("plain HTTP"), "{}", f.detail);
        }
    }

    fn with_trust(trust: Result<TrustedBy, String>, verified: bool) -> Measurements {
        let mut m = measurements(true, Some(observation(CaaLookup::NoRecords)));
        let HttpsObservation::Verified(mut handshake) = m.https else {
            unreachable!()
        };
        handshake.trust = trust;
        m.https = if verified {
            HttpsObservation::Verified(handshake)
        } else {
            HttpsObservation::Unverified(handshake)
        };
        m
    }

    #[test]
    fn a_certificate_no_public_ca_issued_skips_the_caa_check() {
        let private = only(
            &evaluate(&with_trust(Ok(TrustedBy::PrivateCa), true)),
            "caaRecord",
        );
        assert_eq!(private.status, Status::Skipped, "{private:?}");
        assert_eq!(
            private.detail,
            "the certificate of cloud.example.net chains to a private CA (--ca-file), not to a \
             publicly trusted one: only publicly trusted CAs must obey CAA records, so none was \
             asked"
        );
        let untrusted = only(
            &evaluate(&with_trust(Err("self-signed\ncertificate".into()), false)),
            "caaRecord",
        );
        assert_eq!(untrusted.status, Status::Skipped, "{untrusted:?}");
        assert_eq!(
            untrusted.detail,
            "the certificate of cloud.example.net does not chain to a publicly trusted CA \
             (self-signed certificate): only publicly trusted CAs must obey CAA records, so none \
             was asked"
        );
        // --insecure: unverified, but a public CA issued it, so CAA binds it.
        let insecure = only(
            &evaluate(&with_trust(Ok(TrustedBy::PublicRoots), false)),
            "caaRecord",
        );
        assert_eq!(insecure.status, Status::Failed, "{insecure:?}");
    }

    #[test]
    fn a_special_use_name_skips_caa_and_dnssec() {
        for (name, kind) in [
            ("localhost", "a special-use name (.localhost, RFC 6761)"),
            ("cloud", "a single-label name"),
        ] {
            let mut dns = observation(CaaLookup::NotAsked);
            dns.name = name.into();
            dns.dnssec = DnssecLookup::NotAsked;
            let findings = evaluate(&measurements(true, Some(dns)));
            let caa = only(&findings, "caaRecord");
            assert_eq!(caa.status, Status::Skipped, "{caa:?}");
            assert_eq!(
                caa.detail,
                format!(
                    "{name} is {kind}, which public DNS does not serve: no CAA record applies \
                     to it, none was asked"
                )
            );
            let dnssec = only(&findings, "dnssec");
            assert_eq!(dnssec.status, Status::Skipped, "{dnssec:?}");
            assert_eq!(
                dnssec.detail,
                format!(
                    "{name} is {kind}, which public DNS does not serve: it has no zone there \
                     to sign, none was asked"
                )
            );
            // The addresses still come from the system's resolver (its hosts file).
            assert_eq!(only(&findings, "dnsAddresses").status, Status::Passed);
        }
    }

    #[test]
    fn hostile_values_are_bounded_and_printable() {
        let many: Vec<CaaRecord> = (0..50)
            .map(|i| {
                record(
                    "issue",
                    &format!("ca{i}.example\u{7}\r\n{}", "x".repeat(500)),
                )
            })
            .collect();
        let f = caa(
            true,
            CaaLookup::Records {
                owner: "example.net".into(),
                records: many,
            },
        );
        assert_eq!(f.status, Status::Passed);
        assert!(!f.detail.chars().any(char::is_control), "{}", f.detail);
        assert!(f.detail.ends_with(" and 42 more"), "{}", f.detail);
        assert!(f.detail.len() < 8 * 130 + 100, "{}", f.detail.len());
    }

    #[test]
    fn addresses_are_listed() {
        let findings = evaluate(&measurements(true, Some(observation(CaaLookup::NoRecords))));
        let f = only(&findings, "dnsAddresses");
        assert_eq!(f.status, Status::Passed);
        assert_eq!(f.role, Role::Observation);
        assert!(!f.counts);
        assert_eq!(
            f.detail,
            "cloud.example.net resolves to 192.0.2.1, 2001:db8::1"
        );
        // Over plain HTTP too.
        let findings = evaluate(&measurements(
            false,
            Some(observation(CaaLookup::NoRecords)),
        ));
        assert_eq!(only(&findings, "dnsAddresses").status, Status::Passed);
    }

    #[test]
    fn unresolved_addresses_are_indeterminate() {
        let mut dns = observation(CaaLookup::NoRecords);
        dns.addresses = Err("failed to lookup address information".into());
        let f = only(
            &evaluate(&measurements(true, Some(dns.clone()))),
            "dnsAddresses",
        );
        assert_eq!(f.status, Status::Indeterminate);
        assert!(f.detail.contains("could not be resolved"), "{}", f.detail);
        dns.addresses = Ok(Vec::<IpAddr>::new());
        let f = only(&evaluate(&measurements(true, Some(dns))), "dnsAddresses");
        assert_eq!(f.status, Status::Indeterminate);
    }

    fn zone(dnskeys: &[(u16, u8)], ds: &[(u16, u8)]) -> DnssecZone {
        DnssecZone {
            apex: "example.net".into(),
            dnskeys: dnskeys
                .iter()
                .map(|&(key_tag, algorithm)| Dnskey {
                    flags: 257,
                    algorithm,
                    key_tag,
                })
                .collect(),
            ds: ds
                .iter()
                .map(|&(key_tag, algorithm)| DsRecord {
                    key_tag,
                    algorithm,
                    digest_type: 2,
                })
                .collect(),
            authenticated: false,
            resolver: false,
        }
    }

    fn dnssec_finding(https: bool, lookup: DnssecLookup) -> Finding {
        let mut dns = observation(CaaLookup::NoRecords);
        dns.dnssec = lookup;
        only(&evaluate(&measurements(https, Some(dns))), "dnssec")
    }

    #[test]
    fn a_signed_zone_with_ds_passes() {
        let f = dnssec_finding(
            true,
            DnssecLookup::Zone(zone(&[(31663, 13), (4711, 13)], &[(31663, 13)])),
        );
        assert_eq!(f.status, Status::Passed, "{f:?}");
        assert_eq!(
            f.detail,
            "the zone example.net holding cloud.example.net is signed with 2 DNSKEY \
             (ECDSAP256SHA256, key tags 31663, 4711) and its parent publishes DS for key tag \
             31663; the DNS server asked is authoritative, not a resolver, so it validated nothing"
        );
        assert_eq!(f.role, Role::Hardening);
        assert!(!f.counts);
        assert_eq!(f.fixed_in, DNS_ZONE);
        assert_eq!(f.documentation.as_deref(), Some(DNSSEC_DOCS));
    }

    #[test]
    fn the_ad_bit_of_a_resolver_is_reported() {
        let mut validated = zone(&[(31663, 13)], &[(31663, 13)]);
        validated.apex = "cloud.example.net".into();
        validated.resolver = true;
        validated.authenticated = true;
        let f = dnssec_finding(true, DnssecLookup::Zone(validated.clone()));
        assert_eq!(f.status, Status::Passed, "{f:?}");
        assert!(
            f.detail
                .starts_with("the zone cloud.example.net is signed with 1 DNSKEY"),
            "{}",
            f.detail
        );
        assert!(
            f.detail
                .ends_with("the resolver asked validated the answers (AD)"),
            "{}",
            f.detail
        );
        validated.authenticated = false;
        let f = dnssec_finding(true, DnssecLookup::Zone(validated));
        assert_eq!(f.status, Status::Passed, "{f:?}");
        assert!(
            f.detail.contains("did not mark the answers validated"),
            "{}",
            f.detail
        );
    }

    #[test]
    fn an_unsigned_zone_fails() {
        let f = dnssec_finding(true, DnssecLookup::Zone(zone(&[], &[])));
        assert_eq!(f.status, Status::Failed, "{f:?}");
        assert_eq!(
            f.detail,
            "the zone example.net holding cloud.example.net is not signed: no DNSKEY at \
             example.net and no DS for it at its parent"
        );
        // Over plain HTTP too: DNSSEC is not about certificates.
        let f = dnssec_finding(false, DnssecLookup::Zone(zone(&[], &[])));
        assert_eq!(f.status, Status::Failed, "{f:?}");
    }

    #[test]
    fn a_broken_chain_fails() {
        // Signed, but the parent has no DS: an island.
        let f = dnssec_finding(true, DnssecLookup::Zone(zone(&[(31663, 8)], &[])));
        assert_eq!(f.status, Status::Failed, "{f:?}");
        assert!(
            f.detail.contains("1 DNSKEY (RSASHA256, key tag 31663)")
                && f.detail.contains("publishes no DS"),
            "{}",
            f.detail
        );
        // A DS, but no key.
        let f = dnssec_finding(true, DnssecLookup::Zone(zone(&[], &[(31663, 13)])));
        assert_eq!(f.status, Status::Failed, "{f:?}");
        assert!(f.detail.contains("serves no DNSKEY"), "{}", f.detail);
        // A DS naming no key of the zone (other tag, or the right tag for another algorithm).
        for ds in [(1, 13), (31663, 8)] {
            let f = dnssec_finding(true, DnssecLookup::Zone(zone(&[(31663, 13)], &[ds])));
            assert_eq!(f.status, Status::Failed, "{f:?}");
            assert!(
                f.detail.contains("matches none of the zone's keys"),
                "{}",
                f.detail
            );
        }
    }

    #[test]
    fn an_undecided_lookup_is_indeterminate() {
        let f = dnssec_finding(
            true,
            DnssecLookup::Failed("the DNS server answered SERVFAIL\r\nfor it".into()),
        );
        assert_eq!(f.status, Status::Indeterminate, "{f:?}");
        assert!(!f.detail.contains(['\r', '\n']), "{}", f.detail);
        assert!(
            f.detail.starts_with(
                "whether the zone of cloud.example.net is signed could not be decided"
            ),
            "{}",
            f.detail
        );
    }

    #[test]
    fn many_keys_are_bounded() {
        let keys: Vec<(u16, u8)> = (0..500).map(|i| (i, (i % 20) as u8)).collect();
        let f = dnssec_finding(true, DnssecLookup::Zone(zone(&keys, &[(3, 3)])));
        assert_eq!(f.status, Status::Passed, "{f:?}");
        assert!(f.detail.contains("and 492 more"), "{}", f.detail);
        assert!(f.detail.len() < 800, "{}", f.detail);
    }
}
