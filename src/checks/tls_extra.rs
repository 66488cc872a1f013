//! Protocol checks beyond the certificate: `tlsDeprecatedProtocol` (TLS 1.0 / 1.1 still
//! accepted, from the hand-built handshakes of `net::legacy_tls`), `tlsProtocol` (the version
//! the scan's own handshake negotiated) and `httpsEnforced` (plain HTTP on the HTTP port
//! redirects to HTTPS).

use super::{CheckSpec, DOCS, Fix, Measure, REVERSE_PROXY, Unmeasured, Verdict, verdict};
use crate::net::http::{Response, Scheme};
use crate::net::legacy_tls::LegacyTls;
use crate::probe::status::printable;
use crate::probe::{self, Measurements, Observation};
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

/// The port plain HTTP is probed on: the probe only runs when the target names no port, so
/// it is the default HTTP port (a target with a port serves both schemes on it, if at all).
pub const PLAIN_HTTP_PORT: u16 = 80;

/// What the rows share: checks of the TLS listener at the reverse proxy; the protocol checks
/// are high and fixed by a TLS 1.2 minimum.
const PROTOCOL_ROW: CheckSpec = CheckSpec {
    role: Role::Check,
    severity: Severity::High,
    category: Category::Transport,
    documentation: "https://datatracker.ietf.org/doc/html/rfc8996",
    fixed_in: REVERSE_PROXY,
    fix: Fix::TlsMinimum,
    ..CheckSpec::ROW
};

pub static TLS_DEPRECATED_PROTOCOL: CheckSpec = CheckSpec {
    id: "tlsDeprecatedProtocol",
    unmeasured: &[Unmeasured::OverPlainHttp],
    title: "TLS 1.0 and TLS 1.1 are refused",
    remediation: "Set the minimum protocol of the TLS listener to TLS 1.2 (nginx \
                  ssl_protocols TLSv1.2 TLSv1.3; Apache SSLProtocol -all +TLSv1.2 +TLSv1.3; \
                  Caddy and Traefik default to TLS 1.2) so no client can be held to the old \
                  protocols.",
    verified_by: &[Measure::Probe(probe::LEGACY_TLS)],
    ..PROTOCOL_ROW
};

pub static TLS_PROTOCOL: CheckSpec = CheckSpec {
    id: "tlsProtocol",
    unmeasured: &[Unmeasured::OverPlainHttp],
    title: "The negotiated protocol is TLS 1.2 or newer",
    remediation: "Enable TLS 1.2 and TLS 1.3 on the TLS listener and disable every older \
                  protocol.",
    verified_by: &[Measure::Transport],
    ..PROTOCOL_ROW
};

pub static HTTPS_ENFORCED: CheckSpec = CheckSpec {
    id: "httpsEnforced",
    unmeasured: &[
        Unmeasured::OverPlainHttp,
        Unmeasured::Because(
            "plain HTTP is probed only on a port of its own, and HTTP and HTTPS share one here",
        ),
    ],
    role: Role::Hardening,
    severity: Severity::Medium,
    title: "Plain HTTP redirects to HTTPS",
    remediation: "Answer every plain-HTTP request with a permanent redirect (301 or 308) to \
                  the same path over https://, or close port 80.",
    documentation: DOCS,
    verified_by: &[Measure::Probe(probe::PLAIN_HTTP)],
    fix: Fix::HttpsRedirect,
    ..PROTOCOL_ROW
};

pub static ROWS: &[&CheckSpec] = &[&TLS_DEPRECATED_PROTOCOL, &TLS_PROTOCOL, &HTTPS_ENFORCED];

pub fn evaluate(m: &Measurements) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Some(legacy) = &m.legacy_tls {
        findings.push(verdict(
            &TLS_DEPRECATED_PROTOCOL,
            deprecated_protocols(legacy),
        ));
    }
    if let Some(handshake) = m.https.handshake() {
        findings.push(verdict(
            &TLS_PROTOCOL,
            negotiated_protocol(&handshake.protocol),
        ));
    }
    // Over plain HTTP the scan itself is the finding (`httpsAvailable`).
    if m.endpoint.scheme == Scheme::Https
        && m.https.handshake().is_some()
        && let Some(plain) = &m.plain_http
    {
        findings.push(verdict(&HTTPS_ENFORCED, https_enforced(plain)));
    }
    findings
}

fn deprecated_protocols(legacy: &LegacyTls) -> Verdict {
    let versions = [("TLS 1.0", legacy.tls1_0), ("TLS 1.1", legacy.tls1_1)];
    let answered = |accepted: bool| -> Vec<&str> {
        let versions = versions.iter().filter(|(_, v)| *v == Some(accepted));
        versions.map(|(n, _)| *n).collect()
    };
    let (accepted, refused) = (answered(true), answered(false));
    if !accepted.is_empty() {
        let accepted = accepted.join(" and ");
        return (
            Status::Failed,
            format!("the server still accepts {accepted}"),
        );
    }
    if refused.len() == versions.len() {
        return (Status::Passed, "TLS 1.0 and TLS 1.1 are refused".into());
    }
    let why = legacy
        .error
        .as_deref()
        .map(printable)
        .unwrap_or_else(|| "no answer".into());
    let detail = if refused.is_empty() {
        format!("TLS 1.0 and TLS 1.1 could not be tested ({why})")
    } else {
        format!(
            "{} is refused, the other version could not be tested ({why})",
            refused.join(", ")
        )
    };
    (Status::Indeterminate, detail)
}

fn negotiated_protocol(protocol: &str) -> Verdict {
    let normalized = protocol
        .trim()
        .to_ascii_lowercase()
        .replace(['_', ' '], ".");
    let shown = printable(protocol);
    match normalized.as_str() {
        "tlsv1.2" | "tlsv1.3" => (Status::Passed, format!("the scan negotiated {shown}")),
        "tlsv1" | "tlsv1.0" | "tlsv1.1" | "sslv3" | "sslv2" => (
            Status::Failed,
            format!("the scan negotiated {shown}, older than TLS 1.2"),
        ),
        "" => (
            Status::Indeterminate,
            "the negotiated protocol was not recorded".into(),
        ),
        _ => (
            Status::Indeterminate,
            format!("unknown negotiated protocol {shown}"),
        ),
    }
}

/// Go's answer to plain HTTP on a TLS port, and nginx's: HTTP is not served there.
fn https_only_answer(response: &Response) -> bool {
    if response.status != 400 {
        return false;
    }
    let body = String::from_utf8_lossy(&response.body[..response.body.len().min(4096)])
        .to_ascii_lowercase();
    body.contains("client sent an http request to an https server")
        || body.contains("plain http request was sent to https port")
}

fn https_enforced(plain: &Observation) -> Verdict {
    let port = PLAIN_HTTP_PORT;
    let response = match plain {
        Err(e) => {
            let why = printable(e.message());
            let detail = format!("port {port} does not serve plain HTTP ({why})");
            return (Status::Passed, detail);
        }
        Ok(r) => r,
    };
    let status = response.status;
    if matches!(status, 301 | 302 | 303 | 307 | 308) {
        let Some(location) = response.header("location").map(str::trim) else {
            let detail = format!("port {port} answers HTTP {status} without a Location");
            return (Status::Indeterminate, detail);
        };
        let shown = printable(location);
        let redirects = format!("plain HTTP on port {port} redirects ({status}) to {shown}");
        return if location
            .get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
        {
            (Status::Passed, redirects)
        } else {
            (
                Status::Failed,
                format!("{redirects}, which is not an https:// address"),
            )
        };
    }
    if https_only_answer(response) {
        let detail = format!("port {port} speaks only HTTPS (plain HTTP is answered 400)");
        return (Status::Passed, detail);
    }
    let detail = if status == 200 {
        format!("the instance is served over plain HTTP on port {port} without a redirect")
    } else {
        format!("plain HTTP on port {port} is answered HTTP {status} without a redirect to HTTPS")
    };
    (Status::Failed, detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::HttpsObservation;
    use crate::net::http::{Endpoint, FetchError};
    use crate::net::tls::{Handshake, TrustedBy};

    fn handshake(protocol: &str) -> Handshake {
        Handshake {
            protocol: protocol.into(),
            cipher_suite: "TLS13_AES_128_GCM_SHA256".into(),
            chain: Vec::new(),
            trust: Ok(TrustedBy::PublicRoots),
        }
    }

    fn measurements(https: bool) -> Measurements {
        let endpoint = Endpoint {
            scheme: if https { Scheme::Https } else { Scheme::Http },
            url_host: "cloud.example.org".into(),
            port: if https { 443 } else { 80 },
            base_path: String::new(),
        };
        let observation = if https {
            HttpsObservation::Verified(handshake("TLSv1.3"))
        } else {
            HttpsObservation::Unavailable("connection refused".into())
        };
        Measurements::empty(endpoint, observation)
    }

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: body.as_bytes().to_vec(),
            truncated: false,
            digest: None,
        }
    }

    fn only<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
        let matching: Vec<&Finding> = findings.iter().filter(|f| f.id == id).collect();
        assert_eq!(matching.len(), 1, "{id} in {findings:?}");
        matching[0]
    }

    fn enforced(plain: Observation) -> Finding {
        let mut m = measurements(true);
        m.plain_http = Some(plain);
        only(&evaluate(&m), "httpsEnforced").clone()
    }

    #[test]
    fn redirect_to_https_enforces() {
        for status in [301, 302, 307, 308] {
            let f = enforced(Ok(response(
                status,
                &[("Location", "https://cloud.example.org/")],
                "",
            )));
            assert_eq!(f.status, Status::Passed, "{f:?}");
            assert_eq!(f.role, Role::Hardening);
            assert_eq!(f.severity, Severity::Medium);
            assert_eq!(f.fixed_in, REVERSE_PROXY);
            assert!(!f.counts);
        }
        let f = enforced(Ok(response(
            301,
            &[("location", "HTTPS://cloud.example.org/x")],
            "",
        )));
        assert_eq!(f.status, Status::Passed);
    }

    #[test]
    fn plain_200_fails() {
        let f = enforced(Ok(response(200, &[], "<html>OpenCloud</html>")));
        assert_eq!(f.status, Status::Failed);
        assert_eq!(
            f.detail,
            "the instance is served over plain HTTP on port 80 without a redirect"
        );
        let f = enforced(Ok(response(404, &[], "not found")));
        assert_eq!(f.status, Status::Failed);
        assert!(f.detail.contains("404"), "{}", f.detail);
    }

    #[test]
    fn redirect_staying_on_http_fails() {
        for location in [
            "http://cloud.example.org/",
            "/login",
            "//cloud.example.org/",
        ] {
            let f = enforced(Ok(response(302, &[("Location", location)], "")));
            assert_eq!(f.status, Status::Failed, "{location}");
        }
        let f = enforced(Ok(response(301, &[], "")));
        assert_eq!(f.status, Status::Indeterminate);
    }

    #[test]
    fn go_answer_to_http_on_a_tls_port_passes() {
        let f = enforced(Ok(response(
            400,
            &[],
            "Client sent an HTTP request to an HTTPS server.\n",
        )));
        assert_eq!(f.status, Status::Passed, "{f:?}");
        // Any other 400 is HTTP being served.
        let f = enforced(Ok(response(400, &[], "Bad Request")));
        assert_eq!(f.status, Status::Failed);
    }

    #[test]
    fn refused_or_silent_port_passes() {
        for e in [
            FetchError::Transient("http://cloud.example.org:80/: connection refused".into()),
            FetchError::Transient("timed out".into()),
        ] {
            let f = enforced(Err(e));
            assert_eq!(f.status, Status::Passed);
            assert!(f.detail.starts_with("port 80 does not serve plain HTTP"));
        }
    }

    #[test]
    fn no_plain_http_measurement_no_finding() {
        let m = measurements(true);
        assert!(evaluate(&m).iter().all(|f| f.id != "httpsEnforced"));
        // The scan itself over plain HTTP is httpsAvailable's business.
        let mut m = measurements(false);
        m.plain_http = Some(Ok(response(200, &[], "")));
        let findings = evaluate(&m);
        assert!(findings.is_empty(), "{findings:?}");
    }

    fn deprecated(tls1_0: Option<bool>, tls1_1: Option<bool>, error: Option<&str>) -> Finding {
        let mut m = measurements(true);
        m.legacy_tls = Some(LegacyTls {
            tls1_0,
            tls1_1,
            error: error.map(String::from),
        });
        only(&evaluate(&m), "tlsDeprecatedProtocol").clone()
    }

    #[test]
    fn deprecated_protocols_are_judged() {
        let f = deprecated(Some(false), Some(false), None);
        assert_eq!(f.status, Status::Passed);
        assert_eq!(f.role, Role::Check);
        assert_eq!(f.severity, Severity::High);
        assert_eq!(f.category, Category::Transport);
        assert!(f.counts);

        let f = deprecated(Some(true), Some(false), None);
        assert_eq!(f.status, Status::Failed);
        assert_eq!(f.detail, "the server still accepts TLS 1.0");
        let f = deprecated(Some(true), Some(true), None);
        assert_eq!(f.detail, "the server still accepts TLS 1.0 and TLS 1.1");
        let f = deprecated(None, Some(true), Some("TLS 1.0: timed out"));
        assert_eq!(f.status, Status::Failed);

        let f = deprecated(Some(false), None, Some("TLS 1.1: timed out"));
        assert_eq!(f.status, Status::Indeterminate);
        assert!(f.detail.contains("TLS 1.1: timed out"), "{}", f.detail);
        let f = deprecated(None, None, Some("connection refused\r\n"));
        assert_eq!(f.status, Status::Indeterminate);
        assert!(!f.detail.contains('\n'));

        let m = measurements(true);
        assert!(evaluate(&m).iter().all(|f| f.id != "tlsDeprecatedProtocol"));
    }

    #[test]
    fn negotiated_protocol_is_judged() {
        let mut m = measurements(true);
        assert_eq!(only(&evaluate(&m), "tlsProtocol").status, Status::Passed);
        for (protocol, status) in [
            ("TLSv1.2", Status::Passed),
            ("TLSv1_1", Status::Failed),
            ("TLSv1.0", Status::Failed),
            ("SSLv3", Status::Failed),
            ("", Status::Indeterminate),
            ("Unknown(0x7f1c)", Status::Indeterminate),
        ] {
            m.https = HttpsObservation::Unverified(handshake(protocol));
            let f = only(&evaluate(&m), "tlsProtocol").clone();
            assert_eq!(f.status, status, "{protocol}");
            assert_eq!(f.severity, Severity::High);
        }
        let m = measurements(false);
        assert!(evaluate(&m).is_empty());
    }
}
