//! Transport checks: `httpsAvailable`, `tlsTrusted`, `tlsCertificate`.

use super::{CheckSpec, Context, DOCS, Measure, REVERSE_PROXY, finding};
use crate::net::HttpsObservation;
use crate::net::tls;
use crate::probe::Measurements;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

pub static HTTPS_AVAILABLE: CheckSpec = CheckSpec {
    id: "httpsAvailable",
    role: Role::Check,
    severity: Severity::Critical,
    category: "transport",
    title: "HTTPS is available",
    remediation: "Serve the instance over HTTPS (terminate TLS at the reverse proxy or enable \
                  PROXY_TLS) so credentials and files never cross the network in clear text.",
    documentation: DOCS,
    fixed_in: REVERSE_PROXY,
    ..CheckSpec::ROW
};

pub static TLS_TRUSTED: CheckSpec = CheckSpec {
    id: "tlsTrusted",
    role: Role::Check,
    severity: Severity::High,
    category: "transport",
    title: "The certificate chain is trusted",
    remediation: "Install a certificate from a public CA (or distribute your private CA to \
                  every client) instead of the self-signed certificate; clients that click \
                  through warnings can be intercepted.",
    documentation: DOCS,
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Transport],
    ..CheckSpec::ROW
};

pub static TLS_CERTIFICATE: CheckSpec = CheckSpec {
    id: "tlsCertificate",
    role: Role::Check,
    severity: Severity::High,
    category: "transport",
    title: "The certificate is valid for long enough",
    remediation: "Renew the certificate (automate renewal, e.g. with ACME) before it expires.",
    documentation: DOCS,
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Transport],
    ..CheckSpec::ROW
};

pub static ROWS: &[&CheckSpec] = &[&HTTPS_AVAILABLE, &TLS_TRUSTED, &TLS_CERTIFICATE];

pub fn evaluate(m: &Measurements, ctx: &Context) -> Vec<Finding> {
    let mut findings = Vec::new();
    match &m.https {
        HttpsObservation::Unavailable(reason) => {
            findings.push(finding(
                &HTTPS_AVAILABLE,
                Status::Failed,
                format!("HTTPS is not available ({reason}); the scan fell back to plain HTTP"),
            ));
        }
        HttpsObservation::Verified(handshake) | HttpsObservation::Unverified(handshake) => {
            findings.push(finding(
                &HTTPS_AVAILABLE,
                Status::Passed,
                "HTTPS is available",
            ));
            let mut trusted = match &handshake.trust {
                Ok(tls::TrustedBy::PublicRoots) => finding(
                    &TLS_TRUSTED,
                    Status::Passed,
                    "the chain verifies against the public roots",
                ),
                Ok(tls::TrustedBy::PrivateCa) => finding(
                    &TLS_TRUSTED,
                    Status::Passed,
                    "the chain verifies against the private CA given",
                ),
                Err(reason) => finding(&TLS_TRUSTED, Status::Failed, reason.clone()),
            };
            // --insecure: the untrusted chain is still listed but no longer counts.
            if ctx.insecure {
                trusted.counts = false;
            }
            findings.push(trusted);
            findings.push(certificate(handshake, ctx));
        }
    }
    findings
}

fn certificate(handshake: &tls::Handshake, ctx: &Context) -> Finding {
    match tls::leaf_days_left(&handshake.chain, ctx.now) {
        None => finding(
            &TLS_CERTIFICATE,
            Status::Indeterminate,
            "the certificate's validity dates could not be read",
        ),
        Some(days) if days < 0 => finding(
            &TLS_CERTIFICATE,
            Status::Failed,
            format!("the certificate expired {} day(s) ago", -days),
        ),
        Some(days) if days <= ctx.tls_min_days => {
            let mut f = finding(
                &TLS_CERTIFICATE,
                Status::Failed,
                format!(
                    "the certificate expires in {days} day(s), at or below the {} days asked for",
                    ctx.tls_min_days
                ),
            );
            // Still valid: worth fixing soon, not an emergency.
            f.severity = Severity::Medium;
            f
        }
        Some(days) => finding(
            &TLS_CERTIFICATE,
            Status::Passed,
            format!("the certificate is valid for {days} more day(s)"),
        ),
    }
}
