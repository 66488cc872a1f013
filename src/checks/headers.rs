//! Security headers of the page a browser loads (`GET /`), evaluated as hardening measures
//! with `--check-hardening`. They never cap the rating; a missing one turns OK into WARNING.

use super::{
    AcrossNodes, CheckSpec, Fix, INSTANCE, Measure, REVERSE_PROXY, Verdict, finding, verdict,
};
use crate::family::ProductFamily;
use crate::net::HttpsObservation;
use crate::net::http::Response;
use crate::probe::status::printable;
use crate::probe::{Measurements, plan};
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

/// One year, the usual floor for HSTS preloading.
const HSTS_PRELOAD_MIN_AGE: u64 = 31_536_000;

/// What every row of this module shares: a hardening measure of the start page's headers,
/// most of them set at the reverse proxy.
const HEADER_ROW: CheckSpec = CheckSpec {
    role: Role::Hardening,
    category: Category::Headers,
    fixed_in: REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::ROOT)],
    ..CheckSpec::ROW
};

pub static STRICT_TRANSPORT_SECURITY: CheckSpec = CheckSpec {
    id: "Strict-Transport-Security",
    across_nodes: AcrossNodes::Header("Strict-Transport-Security"),
    severity: Severity::Medium,
    title: "HSTS is sent",
    remediation: "Send Strict-Transport-Security: max-age=31536000; includeSubDomains from the \
                  reverse proxy (OpenCloud only sends it when it terminates TLS itself).",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Strict-Transport-Security",
    fix: Fix::Hsts { preload: false },
    advice: &[(
        ProductFamily::InfiniteScale,
        "Send Strict-Transport-Security: max-age=31536000; includeSubDomains from the \
         reverse proxy (Infinite Scale only sends it when its proxy terminates TLS itself, \
         or from 8.0 with PROXY_FORCE_STRICT_TRANSPORT_SECURITY=true).",
    )],
    ..HEADER_ROW
};

pub static HSTS_PRELOAD: CheckSpec = CheckSpec {
    id: "hstsPreload",
    severity: Severity::Low,
    title: "HSTS is ready for preloading",
    remediation: "Add includeSubDomains and preload to Strict-Transport-Security with a max-age \
                  of at least one year, then submit the domain to the preload list.",
    documentation: "https://hstspreload.org/",
    fix: Fix::Hsts { preload: true },
    ..HEADER_ROW
};

pub static CONTENT_SECURITY_POLICY: CheckSpec = CheckSpec {
    id: "Content-Security-Policy",
    across_nodes: AcrossNodes::Header("Content-Security-Policy"),
    severity: Severity::Medium,
    title: "A Content-Security-Policy is sent",
    remediation: "Keep OpenCloud's built-in Content-Security-Policy and make sure the reverse \
                  proxy does not strip it.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Content-Security-Policy",
    fix: Fix::CspPassthrough,
    advice: &[(
        ProductFamily::InfiniteScale,
        "Keep Infinite Scale's built-in Content-Security-Policy (or your own through \
         PROXY_CSP_CONFIG_FILE_LOCATION) and make sure the reverse proxy does not strip it.",
    )],
    ..HEADER_ROW
};

pub static CSP_WITHOUT_UNSAFE_INLINE: CheckSpec = CheckSpec {
    id: "cspWithoutUnsafeInline",
    severity: Severity::Low,
    title: "The CSP allows no inline scripts",
    remediation: "Replace the policy (PROXY_CSP_CONFIG_FILE_OVERRIDE_LOCATION) with one whose \
                  script-src has no 'unsafe-inline' or 'unsafe-eval', using nonces or hashes \
                  where inline code is needed.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Content-Security-Policy/script-src",
    fixed_in: INSTANCE,
    fix: Fix::CspWithoutInline,
    ..HEADER_ROW
};

pub static X_CONTENT_TYPE_OPTIONS: CheckSpec = CheckSpec {
    id: "X-Content-Type-Options",
    across_nodes: AcrossNodes::Header("X-Content-Type-Options"),
    severity: Severity::Low,
    title: "MIME sniffing is disabled",
    remediation: "Send X-Content-Type-Options: nosniff.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/X-Content-Type-Options",
    fix: Fix::Header {
        name: "X-Content-Type-Options",
        value: "nosniff",
        traefik: "contentTypeNosniff=true",
    },
    ..HEADER_ROW
};

pub static X_FRAME_OPTIONS: CheckSpec = CheckSpec {
    id: "X-Frame-Options",
    across_nodes: AcrossNodes::Header("X-Frame-Options"),
    severity: Severity::Medium,
    title: "Framing by other sites is refused",
    remediation: "Send X-Frame-Options: SAMEORIGIN (or DENY), or a CSP frame-ancestors \
                  directive without wildcards.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/X-Frame-Options",
    fix: Fix::Header {
        name: "X-Frame-Options",
        value: "SAMEORIGIN",
        traefik: "customFrameOptionsValue=SAMEORIGIN",
    },
    ..HEADER_ROW
};

pub static REFERRER_POLICY: CheckSpec = CheckSpec {
    id: "Referrer-Policy",
    across_nodes: AcrossNodes::Header("Referrer-Policy"),
    severity: Severity::Low,
    title: "A restrictive Referrer-Policy is sent",
    remediation: "Send Referrer-Policy: strict-origin-when-cross-origin (or stricter).",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Referrer-Policy",
    fix: Fix::Header {
        name: "Referrer-Policy",
        value: "strict-origin-when-cross-origin",
        traefik: "referrerPolicy=strict-origin-when-cross-origin",
    },
    ..HEADER_ROW
};

pub static PERMISSIONS_POLICY: CheckSpec = CheckSpec {
    id: "Permissions-Policy",
    across_nodes: AcrossNodes::Header("Permissions-Policy"),
    severity: Severity::Low,
    title: "Browser features the app does not use are switched off",
    remediation: "Send Permissions-Policy from the reverse proxy, e.g. camera=(), microphone=(), \
                  geolocation=(), payment=(), usb=() (OpenCloud sends none itself).",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Headers/Permissions-Policy",
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
    ..HEADER_ROW
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
        let unread = |row| {
            finding(
                row,
                Status::Indeterminate,
                "the start page could not be read",
            )
        };
        return ROWS.iter().copied().map(unread).collect();
    };
    let over_https = !matches!(m.https, HttpsObservation::Unavailable(_));
    let (sts, preload) = hsts(root, over_https);
    let (policy, inline) = csp(root);
    vec![
        verdict(&STRICT_TRANSPORT_SECURITY, sts),
        verdict(&HSTS_PRELOAD, preload),
        verdict(&CONTENT_SECURITY_POLICY, policy),
        verdict(&CSP_WITHOUT_UNSAFE_INLINE, inline),
        verdict(&X_CONTENT_TYPE_OPTIONS, nosniff(root)),
        verdict(&X_FRAME_OPTIONS, framing(root)),
        verdict(&REFERRER_POLICY, referrer(root)),
        verdict(&PERMISSIONS_POLICY, permissions(root)),
    ]
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

/// `Strict-Transport-Security` and `hstsPreload`.
fn hsts(root: &Response, over_https: bool) -> (Verdict, Verdict) {
    let failed = |detail: &str| (Status::Failed, detail.to_string());
    let value = match (over_https, root.header("strict-transport-security")) {
        (false, _) => {
            return (
                failed("served over plain HTTP, where browsers ignore HSTS"),
                failed("no HSTS over HTTPS"),
            );
        }
        (true, None) => {
            let missing = failed("no Strict-Transport-Security header");
            return (missing.clone(), missing);
        }
        (true, Some(value)) => value.trim(),
    };
    let (max_age, subdomains, preload) = parse_hsts(value);
    let sts = match max_age {
        Some(age) if age > 0 => (
            Status::Passed,
            format!("Strict-Transport-Security: {value}"),
        ),
        _ => (
            Status::Failed,
            format!("Strict-Transport-Security without a positive max-age: {value}"),
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
        (Status::Passed, "HSTS meets the preload requirements".into())
    } else {
        (Status::Failed, format!("HSTS lacks {}", missing.join(", ")))
    };
    (sts, preload)
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

/// `Content-Security-Policy` and `cspWithoutUnsafeInline`.
fn csp(root: &Response) -> (Verdict, Verdict) {
    let Some(value) = root.header("content-security-policy") else {
        let missing = (Status::Failed, "no Content-Security-Policy header".into());
        return (missing.clone(), missing);
    };
    let directives = parse_csp(value);
    let sources = |name: &str| directives.iter().find(|(n, _)| n == name).map(|(_, s)| s);
    let inline = match sources("script-src").or_else(|| sources("default-src")) {
        None => (
            Status::Failed,
            "the CSP restricts neither script-src nor default-src".into(),
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
                (Status::Passed, "script-src allows no inline code".into())
            } else {
                let allowed = unsafe_sources.join(" and ");
                (Status::Failed, format!("script-src allows {allowed}"))
            }
        }
    };
    let sent = (Status::Passed, "a Content-Security-Policy is sent".into());
    (sent, inline)
}

fn nosniff(root: &Response) -> Verdict {
    match root.header("x-content-type-options") {
        Some(v) if v.trim().eq_ignore_ascii_case("nosniff") => {
            (Status::Passed, "X-Content-Type-Options: nosniff".into())
        }
        Some(v) => (
            Status::Failed,
            format!("X-Content-Type-Options is {:?}, not nosniff", printable(v)),
        ),
        None => (Status::Failed, "no X-Content-Type-Options header".into()),
    }
}

fn framing(root: &Response) -> Verdict {
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
        let sources = sources.join(" ");
        return (Status::Passed, format!("CSP frame-ancestors {sources}"));
    }
    match root
        .header("x-frame-options")
        .map(|v| v.trim().to_ascii_uppercase())
    {
        Some(v) if v == "DENY" || v == "SAMEORIGIN" => {
            (Status::Passed, format!("X-Frame-Options: {v}"))
        }
        Some(v) => (
            Status::Failed,
            format!(
                "X-Frame-Options {:?} is not DENY or SAMEORIGIN",
                printable(&v)
            ),
        ),
        None => (
            Status::Failed,
            "neither X-Frame-Options nor a restrictive CSP frame-ancestors is sent".into(),
        ),
    }
}

fn permissions(root: &Response) -> Verdict {
    match root.header("permissions-policy").map(str::trim) {
        Some(v) if !v.is_empty() => (
            Status::Passed,
            format!("Permissions-Policy: {}", printable(v)),
        ),
        _ => (Status::Failed, "no Permissions-Policy header".into()),
    }
}

fn referrer(root: &Response) -> Verdict {
    const WEAK: [&str; 2] = ["unsafe-url", "no-referrer-when-downgrade"];
    let Some(v) = root.header("referrer-policy") else {
        return (Status::Failed, "no Referrer-Policy header".into());
    };
    // Browsers use the last policy they understand in a comma-separated list.
    let last = v
        .split(',')
        .map(str::trim)
        .rfind(|p| !p.is_empty())
        .unwrap_or("");
    if WEAK.contains(&last.to_ascii_lowercase().as_str()) || last.is_empty() {
        let shown = printable(v);
        (
            Status::Failed,
            format!("Referrer-Policy {shown:?} leaks full addresses"),
        )
    } else {
        (Status::Passed, format!("Referrer-Policy: {last}"))
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
