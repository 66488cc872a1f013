//! Checks: the registry of every check (one row each) and the pure functions that turn
//! measurements into findings. SARIF rules, JUnit cases, the remediation plan and the docs are
//! all read from the registry.

pub mod headers;
pub mod transport;

use crate::probe::Measurements;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

/// The system an operator edits to fix a finding.
pub const REVERSE_PROXY: &str = "reverse proxy";
pub const INSTANCE: &str = "the instance";
pub const IDENTITY_PROVIDER: &str = "identity provider";
pub const DNS_ZONE: &str = "DNS zone";

/// One row of the registry.
#[derive(Debug)]
pub struct CheckSpec {
    pub id: &'static str,
    /// Family root (`exposed`, `authentication`, ...) for ids of the form `root:detail`.
    pub family: Option<&'static str>,
    pub role: Role,
    pub severity: Severity,
    pub category: &'static str,
    pub title: &'static str,
    pub remediation: &'static str,
    pub documentation: Option<&'static str>,
    pub fixed_in: &'static str,
    /// `--verify-remediation` can settle it with the probes that measure it.
    pub verifiable: bool,
}

const DOCS: &str = "https://docs.opencloud.eu/docs/admin/";

pub static REGISTRY: &[CheckSpec] = &[
    CheckSpec {
        id: "httpsAvailable",
        family: None,
        role: Role::Check,
        severity: Severity::Critical,
        category: "transport",
        title: "HTTPS is available",
        remediation: "Serve the instance over HTTPS (terminate TLS at the reverse proxy or enable \
                      PROXY_TLS) so credentials and files never cross the network in clear text.",
        documentation: Some(DOCS),
        fixed_in: REVERSE_PROXY,
        verifiable: false,
    },
    CheckSpec {
        id: "tlsTrusted",
        family: None,
        role: Role::Check,
        severity: Severity::High,
        category: "transport",
        title: "The certificate chain is trusted",
        remediation: "Install a certificate from a public CA (or distribute your private CA to \
                      every client) instead of the self-signed certificate; clients that click \
                      through warnings can be intercepted.",
        documentation: Some(DOCS),
        fixed_in: REVERSE_PROXY,
        verifiable: true,
    },
    CheckSpec {
        id: "tlsCertificate",
        family: None,
        role: Role::Check,
        severity: Severity::High,
        category: "transport",
        title: "The certificate is valid for long enough",
        remediation: "Renew the certificate (automate renewal, e.g. with ACME) before it expires.",
        documentation: Some(DOCS),
        fixed_in: REVERSE_PROXY,
        verifiable: true,
    },
    CheckSpec {
        id: "eol",
        family: None,
        role: Role::Version,
        severity: Severity::Critical,
        category: "lifecycle",
        title: "The release line is supported",
        remediation: "Upgrade to a supported release line; an end-of-life line receives no \
                      security fixes.",
        documentation: Some("https://docs.opencloud.eu/docs/admin/resources/lifecycle/"),
        fixed_in: INSTANCE,
        verifiable: false,
    },
    CheckSpec {
        id: "vulnerability",
        family: Some("vulnerability"),
        role: Role::Version,
        severity: Severity::High,
        category: "vulnerability",
        title: "No published advisory affects the running release",
        remediation: "Upgrade to a release that fixes the advisory.",
        documentation: None,
        fixed_in: INSTANCE,
        verifiable: false,
    },
    CheckSpec {
        id: "Strict-Transport-Security",
        family: None,
        role: Role::Hardening,
        severity: Severity::Medium,
        category: "headers",
        title: "HSTS is sent",
        remediation: "Send Strict-Transport-Security: max-age=31536000; includeSubDomains from the \
                      reverse proxy (OpenCloud only sends it when it terminates TLS itself).",
        documentation: Some(
            "https://developer.mozilla.org/docs/Web/HTTP/Headers/Strict-Transport-Security",
        ),
        fixed_in: REVERSE_PROXY,
        verifiable: true,
    },
    CheckSpec {
        id: "hstsPreload",
        family: None,
        role: Role::Hardening,
        severity: Severity::Low,
        category: "headers",
        title: "HSTS is ready for preloading",
        remediation: "Add includeSubDomains and preload to Strict-Transport-Security with a max-age \
                      of at least one year, then submit the domain to the preload list.",
        documentation: Some("https://hstspreload.org/"),
        fixed_in: REVERSE_PROXY,
        verifiable: true,
    },
    CheckSpec {
        id: "Content-Security-Policy",
        family: None,
        role: Role::Hardening,
        severity: Severity::Medium,
        category: "headers",
        title: "A Content-Security-Policy is sent",
        remediation: "Keep OpenCloud's built-in Content-Security-Policy and make sure the reverse \
                      proxy does not strip it.",
        documentation: Some(
            "https://developer.mozilla.org/docs/Web/HTTP/Headers/Content-Security-Policy",
        ),
        fixed_in: REVERSE_PROXY,
        verifiable: true,
    },
    CheckSpec {
        id: "cspWithoutUnsafeInline",
        family: None,
        role: Role::Hardening,
        severity: Severity::Low,
        category: "headers",
        title: "The CSP allows no inline scripts",
        remediation: "Replace the policy (PROXY_CSP_CONFIG_FILE_OVERRIDE_LOCATION) with one whose \
                      script-src has no 'unsafe-inline' or 'unsafe-eval', using nonces or hashes \
                      where inline code is needed.",
        documentation: Some(
            "https://developer.mozilla.org/docs/Web/HTTP/Headers/Content-Security-Policy/script-src",
        ),
        fixed_in: INSTANCE,
        verifiable: true,
    },
    CheckSpec {
        id: "X-Content-Type-Options",
        family: None,
        role: Role::Hardening,
        severity: Severity::Low,
        category: "headers",
        title: "MIME sniffing is disabled",
        remediation: "Send X-Content-Type-Options: nosniff.",
        documentation: Some(
            "https://developer.mozilla.org/docs/Web/HTTP/Headers/X-Content-Type-Options",
        ),
        fixed_in: REVERSE_PROXY,
        verifiable: true,
    },
    CheckSpec {
        id: "X-Frame-Options",
        family: None,
        role: Role::Hardening,
        severity: Severity::Medium,
        category: "headers",
        title: "Framing by other sites is refused",
        remediation: "Send X-Frame-Options: SAMEORIGIN (or DENY), or a CSP frame-ancestors \
                      directive without wildcards.",
        documentation: Some("https://developer.mozilla.org/docs/Web/HTTP/Headers/X-Frame-Options"),
        fixed_in: REVERSE_PROXY,
        verifiable: true,
    },
    CheckSpec {
        id: "Referrer-Policy",
        family: None,
        role: Role::Hardening,
        severity: Severity::Low,
        category: "headers",
        title: "A restrictive Referrer-Policy is sent",
        remediation: "Send Referrer-Policy: strict-origin-when-cross-origin (or stricter).",
        documentation: Some("https://developer.mozilla.org/docs/Web/HTTP/Headers/Referrer-Policy"),
        fixed_in: REVERSE_PROXY,
        verifiable: true,
    },
];

/// Looks a check up by id, or by family root for ids such as `vulnerability:GHSA-...`.
pub fn spec(id: &str) -> Option<&'static CheckSpec> {
    REGISTRY.iter().find(|c| c.id == id).or_else(|| {
        let root = id.split_once(':')?.0;
        REGISTRY.iter().find(|c| c.family == Some(root))
    })
}

/// What the pure checks need besides the measurements.
#[derive(Clone, Debug)]
pub struct Context {
    pub now: jiff::Timestamp,
    pub tls_min_days: i64,
    pub insecure: bool,
    pub check_hardening: bool,
    pub extra_checks_rating: bool,
}

/// Builds a finding from its registry row.
pub fn finding(id: &str, status: Status, detail: impl Into<String>) -> Finding {
    let spec = spec(id).unwrap_or_else(|| panic!("check {id} missing from the registry"));
    Finding {
        id: id.to_string(),
        role: spec.role,
        status,
        severity: spec.severity,
        category: spec.category,
        detail: detail.into(),
        remediation: spec.remediation.to_string(),
        documentation: spec.documentation.map(String::from),
        fixed_in: spec.fixed_in,
        counts: spec.role == Role::Check,
        decisive: false,
        ignored: false,
    }
}

/// Every check that follows from the measurements (version standing is added by the assessment).
pub fn evaluate(m: &Measurements, ctx: &Context) -> Vec<Finding> {
    let mut findings = transport::evaluate(m, ctx);
    if ctx.check_hardening {
        findings.extend(headers::evaluate(m));
    }
    if !ctx.extra_checks_rating {
        for f in findings.iter_mut().filter(|f| f.role == Role::Check) {
            f.counts = false;
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_fixed_severities() {
        assert_eq!(spec("httpsAvailable").unwrap().severity, Severity::Critical);
    }

    #[test]
    fn family_ids_resolve_to_their_root() {
        assert_eq!(spec("vulnerability:GHSA-xxxx").unwrap().id, "vulnerability");
        assert!(spec("nonsense").is_none());
    }

    #[test]
    fn ids_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for c in REGISTRY {
            assert!(seen.insert(c.id), "{} twice", c.id);
        }
    }
}
