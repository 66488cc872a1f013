//! `--all-addresses`: every node behind a name must be the same instance. The first address is
//! the reference; `addressParity` takes the worst difference (a demo sign-in on one node carries
//! that finding's severity, another release is high, other drift medium, an address that
//! resolves but does not answer fails it). Waived headers and checks are left out.

use super::pattern;
use super::{AcrossNodes, CheckSpec, REVERSE_PROXY, finding};
use crate::probe::Measurements;
use crate::probe::addresses::NodeObservation;
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

pub static ADDRESS_PARITY: CheckSpec = CheckSpec {
    id: "addressParity",
    role: Role::Check,
    severity: Severity::Medium,
    category: Category::Deployment,
    title: "Every address of the name serves the same instance",
    remediation: "Bring every node behind the name to the same release and configuration \
                  (or take the odd one out of DNS / the load balancer).",
    documentation: super::DOCS,
    fixed_in: REVERSE_PROXY,
    ..CheckSpec::ROW
};

pub static TLS_ADDRESS_PARITY: CheckSpec = CheckSpec {
    id: "tlsAddressParity",
    role: Role::Check,
    severity: Severity::Medium,
    category: Category::Transport,
    title: "Every address of the name offers the same TLS",
    remediation: "Deploy the same certificate and TLS settings on every address, IPv4 and \
                  IPv6 alike.",
    documentation: "https://wiki.mozilla.org/Security/Server_Side_TLS",
    fixed_in: REVERSE_PROXY,
    ..CheckSpec::ROW
};

pub static ROWS: &[&CheckSpec] = &[&ADDRESS_PARITY, &TLS_ADDRESS_PARITY];

/// What the rows say is compared between nodes: (check id, what), headers by name.
fn compared() -> Vec<(&'static str, AcrossNodes)> {
    let mut compared: Vec<(&'static str, AcrossNodes)> = super::registry()
        .map(|row| (row.id, row.across_nodes))
        .filter(|(_, across)| *across != AcrossNodes::Nothing)
        .collect();
    compared.sort_by_key(|(_, across)| match across {
        AcrossNodes::Header(name) => (1, *name),
        AcrossNodes::Capability(_) => (2, ""),
        _ => (0, ""),
    });
    compared
}

fn waived(patterns: &[String], id: &str) -> bool {
    patterns.iter().any(|p| pattern::matches(p, id))
}

/// Differences of `node` against `reference`, each with its severity.
fn differences(
    reference: &NodeObservation,
    node: &NodeObservation,
    waived_ids: &[String],
    compared: &[(&'static str, AcrossNodes)],
) -> Vec<(Severity, String)> {
    let at = node.address;
    let mut out = Vec::new();
    let (Ok(ref_status), Ok(status)) = (&reference.status, &node.status) else {
        if let Err(e) = &node.status {
            out.push((
                Severity::Medium,
                format!("{at} resolves but does not answer ({e})"),
            ));
        }
        return out;
    };
    let release = |s: &crate::probe::status::StatusReport| {
        s.product_version
            .as_deref()
            .unwrap_or("no known release")
            .to_string()
    };
    let waived = |id: &str| waived(waived_ids, id);
    let demo_check = compared.iter().find(|(_, a)| *a == AcrossNodes::DemoSignIn);
    if node.demo_sign_in == Some(true)
        && reference.demo_sign_in != Some(true)
        && !demo_check.is_some_and(|(id, _)| waived(id))
    {
        out.push((
            Severity::Critical,
            format!("{at} accepts a published demo account"),
        ));
    }
    if ref_status.product_version != status.product_version {
        let (runs, reference) = (release(status), release(ref_status));
        out.push((
            Severity::High,
            format!("{at} runs {runs} (reference {reference})"),
        ));
    }
    for (id, across) in compared {
        if waived(id) {
            continue;
        }
        let differs = match *across {
            AcrossNodes::Header(header) => {
                let value = |n: &NodeObservation| {
                    let root = n.root.as_ref();
                    root.map(|r| r.header_values(header).join(", "))
                };
                (value(reference).unwrap_or_default() != value(node).unwrap_or_default())
                    .then(|| format!("sends a different {header}"))
            }
            AcrossNodes::Capability(pointer) => {
                let value = |n: &NodeObservation| {
                    let capabilities = n.capabilities.as_ref();
                    capabilities.and_then(|c| c.pointer(pointer)).cloned()
                };
                (value(reference) != value(node))
                    .then(|| format!("reports different settings for {id}"))
            }
            AcrossNodes::DemoSignIn | AcrossNodes::Nothing => None,
        };
        if let Some(what) = differs {
            out.push((Severity::Medium, format!("{at} {what}")));
        }
    }
    out
}

fn address_parity(nodes: &[NodeObservation], waived_ids: &[String]) -> Finding {
    let reference = &nodes[0];
    let mut diffs: Vec<(Severity, String)> = Vec::new();
    if let Err(e) = &reference.status {
        diffs.push((
            Severity::Medium,
            format!("{} resolves but does not answer ({e})", reference.address),
        ));
    }
    let compared = compared();
    for node in &nodes[1..] {
        diffs.extend(differences(reference, node, waived_ids, &compared));
    }
    let addresses: Vec<String> = nodes.iter().map(|n| n.address.to_string()).collect();
    let Some(worst) = diffs.iter().map(|(s, _)| *s).max() else {
        let detail = format!("{} answer alike", addresses.join(", "));
        return finding(&ADDRESS_PARITY, Status::Passed, detail);
    };
    let detail: Vec<String> = diffs.into_iter().map(|(_, d)| d).collect();
    Finding {
        severity: worst,
        ..finding(&ADDRESS_PARITY, Status::Failed, detail.join("; "))
    }
}

fn tls_parity(nodes: &[NodeObservation]) -> Option<Finding> {
    let reference = nodes[0].tls.as_ref()?;
    let mut diffs = Vec::new();
    for node in nodes {
        let Some(tls) = &node.tls else { continue };
        match (reference, tls) {
            (Ok(a), Ok(b)) if a == b => {}
            (Ok(a), Ok(b)) => {
                let mut what = Vec::new();
                if a.protocol != b.protocol {
                    what.push(format!("protocol {}", b.protocol));
                }
                if a.leaf_sha256 != b.leaf_sha256 {
                    what.push("another certificate".to_string());
                }
                if a.trusted != b.trusted {
                    let chain = if b.trusted {
                        "a trusted"
                    } else {
                        "an untrusted"
                    };
                    what.push(format!("{chain} chain"));
                }
                diffs.push(format!("{} offers {}", node.address, what.join(", ")));
            }
            (_, Err(e)) => diffs.push(format!("{}: no TLS handshake ({e})", node.address)),
            (Err(_), Ok(_)) => diffs.push(format!(
                "{} completes a TLS handshake the reference address does not",
                node.address
            )),
        }
    }
    let (status, detail) = if diffs.is_empty() {
        (Status::Passed, "every address offers the same TLS".into())
    } else {
        (Status::Failed, diffs.join("; "))
    };
    Some(finding(&TLS_ADDRESS_PARITY, status, detail))
}

pub fn evaluate(m: &Measurements, waived_ids: &[String]) -> Vec<Finding> {
    // Names with one address yield no finding.
    let Some(nodes) = m.nodes.as_ref().filter(|n| n.len() > 1) else {
        return Vec::new();
    };
    let mut findings = vec![address_parity(nodes, waived_ids)];
    findings.extend(tls_parity(nodes));
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::http::Response;
    use crate::probe::addresses::TlsSummary;
    use crate::probe::status::StatusReport;

    fn node(address: &str, version: &str) -> NodeObservation {
        NodeObservation {
            address: address.parse().unwrap(),
            status: Ok(StatusReport {
                product_version: Some(version.into()),
                ..Default::default()
            }),
            root: Some(Response {
                status: 200,
                headers: vec![(
                    "Strict-Transport-Security".into(),
                    "max-age=63072000".into(),
                )],
                body: vec![],
                truncated: false,
                digest: None,
            }),
            capabilities: None,
            demo_sign_in: Some(false),
            tls: Some(Ok(TlsSummary {
                protocol: "TLSv1.3".into(),
                leaf_sha256: "aa".into(),
                trusted: true,
            })),
        }
    }

    fn severity_of(nodes: &[NodeObservation]) -> (Status, Severity, String) {
        let f = address_parity(nodes, &[]);
        (f.status, f.severity, f.detail)
    }

    #[test]
    fn alike_nodes_pass() {
        let nodes = [node("192.0.2.1", "8.1.0"), node("192.0.2.2", "8.1.0")];
        assert_eq!(severity_of(&nodes).0, Status::Passed);
        assert_eq!(tls_parity(&nodes).unwrap().status, Status::Passed);
    }

    #[test]
    fn worst_difference_wins() {
        let mut other = node("192.0.2.2", "8.0.1");
        other.root.as_mut().unwrap().headers.clear();
        let (status, severity, detail) = severity_of(&[node("192.0.2.1", "8.1.0"), other.clone()]);
        assert_eq!((status, severity), (Status::Failed, Severity::High));
        assert!(
            detail.contains("192.0.2.2 runs 8.0.1 (reference 8.1.0)"),
            "{detail}"
        );
        assert!(
            detail.contains("different Strict-Transport-Security"),
            "{detail}"
        );

        other.demo_sign_in = Some(true);
        assert_eq!(
            severity_of(&[node("192.0.2.1", "8.1.0"), other]).1,
            Severity::Critical
        );
    }

    #[test]
    fn silent_address_fails_and_waived_headers_are_ignored() {
        let mut silent = node("2001:db8::1", "8.1.0");
        silent.status = Err("connection refused".into());
        let (status, severity, _) = severity_of(&[node("192.0.2.1", "8.1.0"), silent]);
        assert_eq!((status, severity), (Status::Failed, Severity::Medium));

        let mut other = node("192.0.2.2", "8.1.0");
        other.root.as_mut().unwrap().headers.clear();
        let f = address_parity(
            &[node("192.0.2.1", "8.1.0"), other],
            &["Strict-Transport-Security".into()],
        );
        assert_eq!(f.status, Status::Passed, "{}", f.detail);
    }

    #[test]
    fn tls_differences() {
        let mut other = node("192.0.2.2", "8.1.0");
        other.tls = Some(Ok(TlsSummary {
            protocol: "TLSv1.2".into(),
            leaf_sha256: "bb".into(),
            trusted: false,
        }));
        let f = tls_parity(&[node("192.0.2.1", "8.1.0"), other]).unwrap();
        assert_eq!(f.status, Status::Failed);
        assert!(
            f.detail
                .contains("protocol TLSv1.2, another certificate, an untrusted chain"),
            "{}",
            f.detail
        );
    }

    #[test]
    fn one_address_yields_nothing() {
        let endpoint = crate::net::http::Endpoint {
            scheme: crate::net::http::Scheme::Https,
            url_host: "x".into(),
            port: 443,
            base_path: String::new(),
        };
        let mut m = Measurements::empty(
            endpoint,
            crate::net::HttpsObservation::Unavailable("x".into()),
        );
        m.nodes = Some(vec![node("192.0.2.1", "8.1.0")]);
        assert!(evaluate(&m, &[]).is_empty());
    }
}
