//! Transport checks: `httpsAvailable`, `tlsTrusted`, `tlsCertificate`.

use super::{CheckSpec, Context, DOCS, Measure, REVERSE_PROXY, Unmeasured, finding};
use crate::net::HttpsObservation;
use crate::net::tls;
use crate::probe::Measurements;
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

/// What every row of this module shares: a check of the transport, set up at the reverse
/// proxy.
const TRANSPORT_ROW: CheckSpec = CheckSpec {
    role: Role::Check,
    category: Category::Transport,
    documentation: DOCS,
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Transport],
    ..CheckSpec::ROW
};

pub static HTTPS_AVAILABLE: CheckSpec = CheckSpec {
    id: "httpsAvailable",
    severity: Severity::Critical,
    title: "HTTPS is available",
    remediation: "Serve the instance over HTTPS (terminate TLS at the reverse proxy or enable \
                  PROXY_TLS) so credentials and files never cross the network in clear text.",
    // Only a full scan settles it (see `CheckSpec::verified_by`).
    verified_by: &[],
    ..TRANSPORT_ROW
};

pub static TLS_TRUSTED: CheckSpec = CheckSpec {
    id: "tlsTrusted",
    unmeasured: &[Unmeasured::OverPlainHttp],
    severity: Severity::High,
    title: "The certificate chain is trusted",
    remediation: "Install a certificate from a public CA (or distribute your private CA to \
                  every client) instead of the self-signed certificate; clients that click \
                  through warnings can be intercepted.",
    ..TRANSPORT_ROW
};

pub static TLS_CERTIFICATE: CheckSpec = CheckSpec {
    id: "tlsCertificate",
    unmeasured: &[Unmeasured::OverPlainHttp],
    severity: Severity::High,
    title: "The certificate is valid for long enough",
    remediation: "Renew the certificate (automate renewal, e.g. with ACME) before it expires.",
    ..TRANSPORT_ROW
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
            let available = finding(&HTTPS_AVAILABLE, Status::Passed, "HTTPS is available");
            findings.push(available);
            let (status, detail) = match &handshake.trust {
                Ok(tls::TrustedBy::PublicRoots) => (
                    Status::Passed,
                    "the chain verifies against the public roots",
                ),
                Ok(tls::TrustedBy::PrivateCa) => (
                    Status::Passed,
                    "the chain verifies against the private CA given",
                ),
                Err(reason) => (Status::Failed, reason.as_str()),
            };
            // --insecure: the untrusted chain is still listed but no longer counts.
            let trusted = finding(&TLS_TRUSTED, status, detail);
            findings.push(Finding {
                counts: trusted.counts && !ctx.insecure,
                ..trusted
            });
            findings.push(certificate(handshake, ctx));
        }
    }
    findings
}

fn certificate(handshake: &tls::Handshake, ctx: &Context) -> Finding {
    let id = &TLS_CERTIFICATE;
    match tls::leaf_days_left(&handshake.chain, ctx.now) {
        None => {
            let detail = "the certificate's validity dates could not be read";
            finding(id, Status::Indeterminate, detail)
        }
        Some(days) if days < 0 => {
            let detail = format!("the certificate expired {} day(s) ago", -days);
            finding(id, Status::Failed, detail)
        }
        Some(days) if days <= ctx.tls_min_days => Finding {
            // Still valid: worth fixing soon, not an emergency.
            severity: Severity::Medium,
            ..finding(
                id,
                Status::Failed,
                format!(
                    "the certificate expires in {days} day(s), at or below the {} days asked for",
                    ctx.tls_min_days
                ),
            )
        },
        Some(days) => {
            let detail = format!("the certificate is valid for {days} more day(s)");
            finding(id, Status::Passed, detail)
        }
    }
}
