//! Security headers of the page a browser loads (`GET /`), evaluated as hardening measures
//! with `--check-hardening`. They never cap the rating; a missing one turns OK into WARNING.

use super::{CheckSpec, Fix, INSTANCE, Measure, REVERSE_PROXY, finding};
use crate::family::ProductFamily;
use crate::net::HttpsObservation;
use crate::net::http::Response;
use crate::probe::Measurements;
use crate::probe::plan;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

/// One year, the usual floor for HSTS preloading.
const HSTS_PRELOAD_MIN_AGE: u64 = 31_536_000;

pub static STRICT_TRANSPORT_SECURITY: CheckSpec = CheckSpec {
    id: "Strict-Transport-Security",
    role: Role::Hardening,
    severity: Severity::Medium,
    category: "headers",
    title: "HSTS is sent",
    remediation: "Send Strict-Transport-Security: max-age=31536000; includeSubDomains from the \
                  reverse proxy (OpenCloud only sends it when it terminates TLS itself).",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Strict-Transport-Security",
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::ROOT)],
    fix: Fix::Hsts { preload: false },
    advice: &[(
        ProductFamily::InfiniteScale,
        "Send Strict-Transport-Security: max-age=31536000; includeSubDomains from the \
         reverse proxy (Infinite Scale only sends it when its proxy terminates TLS itself, \
         or from 8.0 with PROXY_FORCE_STRICT_TRANSPORT_SECURITY=true).",
    )],
    ..CheckSpec::ROW
};

pub static HSTS_PRELOAD: CheckSpec = CheckSpec {
    id: "hstsPreload",
    role: Role::Hardening,
    severity: Severity::Low,
    category: "headers",
    title: "HSTS is ready for preloading",
    remediation: "Add includeSubDomains and preload to Strict-Transport-Security with a max-age \
                  of at least one year, then submit the domain to the preload list.",
    documentation: "https://hstspreload.org/",
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::ROOT)],
    fix: Fix::Hsts { preload: true },
    ..CheckSpec::ROW
};

pub static CONTENT_SECURITY_POLICY: CheckSpec = CheckSpec {
    id: "Content-Security-Policy",
    role: Role::Hardening,
    severity: Severity::Medium,
    category: "headers",
    title: "A Content-Security-Policy is sent",
    remediation: "Keep OpenCloud's built-in Content-Security-Policy and make sure the reverse \
                  proxy does not strip it.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Content-Security-Policy",
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::ROOT)],
    fix: Fix::CspPassthrough,
    advice: &[(
        ProductFamily::InfiniteScale,
        "Keep Infinite Scale's built-in Content-Security-Policy (or your own through \
         PROXY_CSP_CONFIG_FILE_LOCATION) and make sure the reverse proxy does not strip it.",
    )],
    ..CheckSpec::ROW
};

pub static CSP_WITHOUT_UNSAFE_INLINE: CheckSpec = CheckSpec {
    id: "cspWithoutUnsafeInline",
    role: Role::Hardening,
    severity: Severity::Low,
    category: "headers",
    title: "The CSP allows no inline scripts",
    remediation: "Replace the policy (PROXY_CSP_CONFIG_FILE_OVERRIDE_LOCATION) with one whose \
                  script-src has no 'unsafe-inline' or 'unsafe-eval', using nonces or hashes \
                  where inline code is needed.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Content-Security-Policy/script-src",
    fixed_in: INSTANCE,
    verified_by: &[Measure::Probe(plan::ROOT)],
    fix: Fix::CspWithoutInline,
    ..CheckSpec::ROW
};

pub static X_CONTENT_TYPE_OPTIONS: CheckSpec = CheckSpec {
    id: "X-Content-Type-Options",
    role: Role::Hardening,
    severity: Severity::Low,
    category: "headers",
    title: "MIME sniffing is disabled",
    remediation: "Send X-Content-Type-Options: nosniff.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/X-Content-Type-Options",
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::ROOT)],
    fix: Fix::Header {
        name: "X-Content-Type-Options",
        value: "nosniff",
        traefik: "contentTypeNosniff=true",
    },
    ..CheckSpec::ROW
};

pub static X_FRAME_OPTIONS: CheckSpec = CheckSpec {
    id: "X-Frame-Options",
    role: Role::Hardening,
    severity: Severity::Medium,
    category: "headers",
    title: "Framing by other sites is refused",
    remediation: "Send X-Frame-Options: SAMEORIGIN (or DENY), or a CSP frame-ancestors \
                  directive without wildcards.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/X-Frame-Options",
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::ROOT)],
    fix: Fix::Header {
        name: "X-Frame-Options",
        value: "SAMEORIGIN",
        traefik: "customFrameOptionsValue=SAMEORIGIN",
    },
    ..CheckSpec::ROW
};

pub static REFERRER_POLICY: CheckSpec = CheckSpec {
    id: "Referrer-Policy",
    role: Role::Hardening,
    severity: Severity::Low,
    category: "headers",
    title: "A restrictive Referrer-Policy is sent",
    remediation: "Send Referrer-Policy: strict-origin-when-cross-origin (or stricter).",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Referrer-Policy",
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::ROOT)],
    fix: Fix::Header {
        name: "Referrer-Policy",
        value: "strict-origin-when-cross-origin",
        traefik: "referrerPolicy=strict-origin-when-cross-origin",
    },
    ..CheckSpec::ROW
};

pub static PERMISSIONS_POLICY: CheckSpec = CheckSpec {
    id: "Permissions-Policy",
    role: Role::Hardening,
    severity: Severity::Low,
    category: "headers",
    title: "Browser features the app does not use are switched off",
    remediation: "Send Permissions-Policy from the reverse proxy, e.g. camera=(), microphone=(), \
                  geolocation=(), payment=(), usb=() (OpenCloud sends none itself).",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Permissions-Policy",
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::ROOT)],
    fix: Fix::Header {
        name: "Permissions-Policy",
        value: "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
        traefik: "permissionsPolicy=camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    },
    advice: &[(
        ProductFamily::InfiniteScale,
        "Send Permissions-Policy from the reverse proxy, e.g. camera=(), microphone=(), \
         geolocation=(), payment=(), usb=() (Infinite Scale sends none itself).",
    )],
    ..CheckSpec::ROW
};

pub static ROWS: &[&CheckSpec] = &[
    &STRICT_TRANSPORT_SECURITY,
    &HSTS_PRELOAD,
    &CONTENT_SECURITY_POLICY,
    &CSP_WITHOUT_UNSAFE_INLINE,
    &X_CONTENT_TYPE_OPTIONS,
    &X_FRAME_OPTIONS,
    &REFERRER_POLICY,
    &PERMISSIONS_POLICY,
];

pub fn evaluate(m: &Measurements) -> Vec<Finding> {
    let Some(root) = &m.root else {
        return ROWS
            .iter()
            .map(|row| {
                finding(
                    *row,
                    Status::Indeterminate,
                    "the start page could not be read",
                )
            })
            .collect();
    };
    let over_https = !matches!(m.https, HttpsObservation::Unavailable(_));
    let mut findings = hsts(root, over_https);
    findings.extend(csp(root));
    findings.push(nosniff(root));
    findings.push(framing(root));
    findings.push(referrer(root));
    findings.push(permissions(root));
    findings
}

/// HSTS directives: (max-age, includeSubDomains, preload).
pub fn parse_hsts(value: &str) -> (Option<u64>, bool, bool) {
    let mut max_age = None;
    let mut subdomains = false;
    let mut preload = false;
    for directive in value.split(';').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if let Some(age) = lower.strip_prefix("max-age=") {
            max_age = age.trim_matches('"').parse().ok();
        } else if lower == "includesubdomains" {
            subdomains = true;
        } else if lower == "preload" {
            preload = true;
        }
    }
    (max_age, subdomains, preload)
}

fn hsts(root: &Response, over_https: bool) -> Vec<Finding> {
    let header = root.header("strict-transport-security");
    let (sts, preload) = match (over_https, header) {
        (false, _) => (
            finding(
                &STRICT_TRANSPORT_SECURITY,
                Status::Failed,
                "served over plain HTTP, where browsers ignore HSTS",
            ),
            finding(&HSTS_PRELOAD, Status::Failed, "no HSTS over HTTPS"),
        ),
        (true, None) => (
            finding(
                &STRICT_TRANSPORT_SECURITY,
                Status::Failed,
                "no Strict-Transport-Security header",
            ),
            finding(
                &HSTS_PRELOAD,
                Status::Failed,
                "no Strict-Transport-Security header",
            ),
        ),
        (true, Some(value)) => {
            let (max_age, subdomains, preload) = parse_hsts(value);
            let sts = match max_age {
                Some(age) if age > 0 => finding(
                    &STRICT_TRANSPORT_SECURITY,
                    Status::Passed,
                    format!("Strict-Transport-Security: {}", value.trim()),
                ),
                _ => finding(
                    &STRICT_TRANSPORT_SECURITY,
                    Status::Failed,
                    format!(
                        "Strict-Transport-Security without a positive max-age: {}",
                        value.trim()
                    ),
                ),
            };
            let mut missing = Vec::new();
            if max_age.unwrap_or(0) < HSTS_PRELOAD_MIN_AGE {
                missing.push("a max-age of at least one year");
            }
            if !subdomains {
                missing.push("includeSubDomains");
            }
            if !preload {
                missing.push("preload");
            }
            let preload = if missing.is_empty() {
                finding(
                    &HSTS_PRELOAD,
                    Status::Passed,
                    "HSTS meets the preload requirements",
                )
            } else {
                finding(
                    &HSTS_PRELOAD,
                    Status::Failed,
                    format!("HSTS lacks {}", missing.join(", ")),
                )
            };
            (sts, preload)
        }
    };
    vec![sts, preload]
}

/// Directive name to its source list, lower-cased.
pub fn parse_csp(value: &str) -> Vec<(String, Vec<String>)> {
    value
        .split(';')
        .filter_map(|d| {
            let mut parts = d.split_whitespace();
            let name = parts.next()?.to_ascii_lowercase();
            Some((name, parts.map(|p| p.to_ascii_lowercase()).collect()))
        })
        .collect()
}

fn csp(root: &Response) -> Vec<Finding> {
    let Some(value) = root.header("content-security-policy") else {
        return vec![
            finding(
                &CONTENT_SECURITY_POLICY,
                Status::Failed,
                "no Content-Security-Policy header",
            ),
            finding(
                &CSP_WITHOUT_UNSAFE_INLINE,
                Status::Failed,
                "no Content-Security-Policy header",
            ),
        ];
    };
    let directives = parse_csp(value);
    let sources = |name: &str| directives.iter().find(|(n, _)| n == name).map(|(_, s)| s);
    let scripts = sources("script-src").or_else(|| sources("default-src"));
    let inline = match scripts {
        None => finding(
            &CSP_WITHOUT_UNSAFE_INLINE,
            Status::Failed,
            "the CSP restricts neither script-src nor default-src",
        ),
        Some(list) => {
            // 'unsafe-inline' is ignored by browsers when a nonce or hash is present.
            let has_nonce = list
                .iter()
                .any(|s| s.starts_with("'nonce-") || s.starts_with("'sha"));
            let mut unsafe_sources: Vec<&str> = Vec::new();
            if list.iter().any(|s| s == "'unsafe-inline'") && !has_nonce {
                unsafe_sources.push("'unsafe-inline'");
            }
            if list.iter().any(|s| s == "'unsafe-eval'") {
                unsafe_sources.push("'unsafe-eval'");
            }
            if unsafe_sources.is_empty() {
                finding(
                    &CSP_WITHOUT_UNSAFE_INLINE,
                    Status::Passed,
                    "script-src allows no inline code",
                )
            } else {
                finding(
                    &CSP_WITHOUT_UNSAFE_INLINE,
                    Status::Failed,
                    format!("script-src allows {}", unsafe_sources.join(" and ")),
                )
            }
        }
    };
    vec![
        finding(
            &CONTENT_SECURITY_POLICY,
            Status::Passed,
            "a Content-Security-Policy is sent",
        ),
        inline,
    ]
}

fn nosniff(root: &Response) -> Finding {
    match root.header("x-content-type-options") {
        Some(v) if v.trim().eq_ignore_ascii_case("nosniff") => finding(
            &X_CONTENT_TYPE_OPTIONS,
            Status::Passed,
            "X-Content-Type-Options: nosniff",
        ),
        Some(v) => finding(
            &X_CONTENT_TYPE_OPTIONS,
            Status::Failed,
            format!(
                "X-Content-Type-Options is {:?}, not nosniff",
                crate::probe::status::printable(v)
            ),
        ),
        None => finding(
            &X_CONTENT_TYPE_OPTIONS,
            Status::Failed,
            "no X-Content-Type-Options header",
        ),
    }
}

fn framing(root: &Response) -> Finding {
    let ancestors = root.header("content-security-policy").and_then(|csp| {
        parse_csp(csp)
            .into_iter()
            .find(|(n, _)| n == "frame-ancestors")
            .map(|(_, s)| s)
    });
    if let Some(sources) = &ancestors
        && !sources.is_empty()
        && !sources
            .iter()
            .any(|s| s == "*" || s == "https:" || s == "http:")
    {
        return finding(
            &X_FRAME_OPTIONS,
            Status::Passed,
            format!("CSP frame-ancestors {}", sources.join(" ")),
        );
    }
    match root
        .header("x-frame-options")
        .map(|v| v.trim().to_ascii_uppercase())
    {
        Some(v) if v == "DENY" || v == "SAMEORIGIN" => finding(
            &X_FRAME_OPTIONS,
            Status::Passed,
            format!("X-Frame-Options: {v}"),
        ),
        Some(v) => finding(
            &X_FRAME_OPTIONS,
            Status::Failed,
            format!(
                "X-Frame-Options {:?} is not DENY or SAMEORIGIN",
                crate::probe::status::printable(&v)
            ),
        ),
        None => finding(
            &X_FRAME_OPTIONS,
            Status::Failed,
            "neither X-Frame-Options nor a restrictive CSP frame-ancestors is sent",
        ),
    }
}

fn permissions(root: &Response) -> Finding {
    match root.header("permissions-policy").map(str::trim) {
        Some(v) if !v.is_empty() => finding(
            &PERMISSIONS_POLICY,
            Status::Passed,
            format!("Permissions-Policy: {}", crate::probe::status::printable(v)),
        ),
        _ => finding(
            &PERMISSIONS_POLICY,
            Status::Failed,
            "no Permissions-Policy header",
        ),
    }
}

fn referrer(root: &Response) -> Finding {
    const WEAK: [&str; 2] = ["unsafe-url", "no-referrer-when-downgrade"];
    match root.header("referrer-policy") {
        None => finding(
            &REFERRER_POLICY,
            Status::Failed,
            "no Referrer-Policy header",
        ),
        Some(v) => {
            // Browsers use the last policy they understand in a comma-separated list.
            let last = v
                .split(',')
                .map(str::trim)
                .rfind(|p| !p.is_empty())
                .unwrap_or("");
            if WEAK.contains(&last.to_ascii_lowercase().as_str()) || last.is_empty() {
                finding(
                    &REFERRER_POLICY,
                    Status::Failed,
                    format!(
                        "Referrer-Policy {:?} leaks full addresses",
                        crate::probe::status::printable(v)
                    ),
                )
            } else {
                finding(
                    &REFERRER_POLICY,
                    Status::Passed,
                    format!("Referrer-Policy: {last}"),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::http::{Endpoint, Scheme};

    /// Headers of the real OpenCloud 4.0.0 start page (fixture root-GET.txt).
    fn real_root() -> Response {
        let text = std::fs::read_to_string("tests/fixtures/opencloud-4.0.0/root-GET.txt").unwrap();
        let head = text.split("\n\n").next().unwrap();
        let headers = head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
            .collect();
        Response {
            status: 200,
            headers,
            body: vec![],
            truncated: false,
            digest: None,
        }
    }

    fn measurements(root: Response, https: bool) -> Measurements {
        let handshake = crate::net::tls::Handshake {
            protocol: "TLSv1.3".into(),
            cipher_suite: String::new(),
            chain: vec![],
            trust: Ok(crate::net::tls::TrustedBy::PublicRoots),
        };
        let endpoint = Endpoint {
            scheme: Scheme::Https,
            url_host: "x".into(),
            port: 443,
            base_path: String::new(),
        };
        let https = if https {
            HttpsObservation::Verified(handshake)
        } else {
            HttpsObservation::Unavailable("refused".into())
        };
        let mut m = Measurements::empty(endpoint, https);
        m.root = Some(root);
        m
    }

    fn status_of(findings: &[Finding], id: &str) -> Status {
        findings.iter().find(|f| f.id == id).unwrap().status
    }

    #[test]
    fn real_default_headers() {
        let findings = evaluate(&measurements(real_root(), true));
        assert_eq!(
            status_of(&findings, "Strict-Transport-Security"),
            Status::Passed
        );
        // Ten years and preload, but no includeSubDomains.
        assert_eq!(status_of(&findings, "hstsPreload"), Status::Failed);
        assert!(
            findings
                .iter()
                .any(|f| f.id == "hstsPreload" && f.detail == "HSTS lacks includeSubDomains")
        );
        assert_eq!(
            status_of(&findings, "Content-Security-Policy"),
            Status::Passed
        );
        assert_eq!(
            status_of(&findings, "cspWithoutUnsafeInline"),
            Status::Failed
        );
        assert_eq!(
            status_of(&findings, "X-Content-Type-Options"),
            Status::Passed
        );
        assert_eq!(status_of(&findings, "X-Frame-Options"), Status::Passed);
        assert_eq!(status_of(&findings, "Referrer-Policy"), Status::Passed);
    }

    #[test]
    fn hsts_over_plain_http_does_not_count() {
        let findings = evaluate(&measurements(real_root(), false));
        assert_eq!(
            status_of(&findings, "Strict-Transport-Security"),
            Status::Failed
        );
    }

    fn with_csp(policy: &str) -> Response {
        let mut root = real_root();
        for (name, value) in root.headers.iter_mut() {
            if name.eq_ignore_ascii_case("content-security-policy") {
                *value = policy.to_string();
            }
        }
        root
    }

    #[test]
    fn nonce_neutralises_unsafe_inline_but_not_eval() {
        let root = with_csp("script-src 'self' 'nonce-abc' 'unsafe-inline'");
        let findings = evaluate(&measurements(root, true));
        assert_eq!(
            status_of(&findings, "cspWithoutUnsafeInline"),
            Status::Passed
        );
        let root = with_csp("default-src 'self' 'unsafe-eval'");
        let findings = evaluate(&measurements(root, true));
        assert_eq!(
            status_of(&findings, "cspWithoutUnsafeInline"),
            Status::Failed
        );
    }

    #[test]
    fn missing_headers_fail_and_weak_values_fail() {
        let mut root = real_root();
        root.headers.clear();
        root.headers
            .push(("Referrer-Policy".into(), "strict-origin, unsafe-url".into()));
        root.headers
            .push(("X-Frame-Options".into(), "ALLOW-FROM https://x".into()));
        let findings = evaluate(&measurements(root, true));
        for id in [
            "Strict-Transport-Security",
            "hstsPreload",
            "Content-Security-Policy",
            "X-Content-Type-Options",
            "X-Frame-Options",
            "Referrer-Policy",
        ] {
            assert_eq!(status_of(&findings, id), Status::Failed, "{id}");
        }
    }

    #[test]
    fn hsts_parsing() {
        assert_eq!(
            parse_hsts("max-age=315360000; preload"),
            (Some(315360000), false, true)
        );
        assert_eq!(
            parse_hsts("MAX-AGE=\"60\"; includeSubDomains"),
            (Some(60), true, false)
        );
        assert_eq!(parse_hsts("garbage"), (None, false, false));
    }
}
