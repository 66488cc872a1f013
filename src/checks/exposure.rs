//! What the instance serves to anybody: exposed files, directory listings, API endpoints that
//! answer without sign-in, TRACE echoes, CORS and version disclosure.
//!
//! Real instances answer every unknown path with their web app and status 200, so nothing is
//! "exposed" because it answered 200: an answer must differ from the catch-all page (the answer
//! to a random path) and look like the thing itself.

use super::{Check, CheckSpec, Fix, Measure, Member, Members, REVERSE_PROXY, finding};
use crate::family::ProductFamily;
use crate::net::http::{Response, canonical_header_name};
use crate::probe::status::{body_size, printable};
use crate::probe::{self, Measurements, Observation, plan};
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

const EXPOSURE_DOCS: &str = "https://docs.opencloud.eu/docs/admin/configuration/";
/// Why version headers matter, and how they are read: OWASP's testing guide.
const VERSION_DISCLOSURE_DOCS: &str = "https://owasp.org/www-project-web-security-testing-guide/latest/4-Web_Application_Security_Testing/01-Information_Gathering/02-Fingerprint_Web_Server";

/// What every row of this module shares: a check of what the reverse proxy serves.
const EXPOSURE_ROW: CheckSpec = CheckSpec {
    role: Role::Check,
    category: Category::Exposure,
    fixed_in: REVERSE_PROXY,
    ..CheckSpec::ROW
};

pub static EXPOSED: CheckSpec = CheckSpec {
    id: "exposed",
    family: Some("exposed"),
    severity: Severity::High,
    title: "No deployment file is served",
    remediation: "Serve only the instance through the web server: remove the file from any \
                  folder the reverse proxy publishes and rotate every secret it contained.",
    documentation: EXPOSURE_DOCS,
    verified_by: &[
        Measure::Probe(plan::BASELINE),
        Measure::Probes(plan::EXPOSED),
    ],
    fix: Fix::DenyPath,
    members: Some(Members {
        listed: Some(|| {
            plan::exposed_files()
                .into_iter()
                .map(String::from)
                .collect()
        }),
        named: |path| {
            let probe = format!("{}{path}", plan::EXPOSED);
            let known = plan::exposed_files().contains(&path);
            known.then(|| Member::measured_by(path, &[plan::BASELINE, &probe]))
        },
    }),
    ..EXPOSURE_ROW
};

pub static DIRECTORY_LISTING: CheckSpec = CheckSpec {
    id: "directoryListing",
    severity: Severity::High,
    title: "No folder is listed",
    remediation: "Turn off directory indexes (nginx autoindex off; Apache Options -Indexes) and \
                  do not publish data folders.",
    documentation: EXPOSURE_DOCS,
    verified_by: &[
        Measure::Probe(plan::BASELINE),
        Measure::Probes(plan::LISTING),
    ],
    fix: Fix::DirectoryListing,
    ..EXPOSURE_ROW
};

pub static AUTHENTICATION: CheckSpec = CheckSpec {
    id: "authentication",
    family: Some("authentication"),
    severity: Severity::Critical,
    category: Category::Authentication,
    title: "File and user APIs refuse anonymous callers",
    remediation: "Route the API paths to the instance unchanged and do not add rules that \
                  answer them without authentication.",
    documentation: EXPOSURE_DOCS,
    verified_by: &[Measure::Probe(plan::BASELINE), Measure::Probes(plan::AUTH)],
    members: Some(Members {
        listed: Some(|| probe::distinct(plan::AUTHENTICATION.iter().map(|c| c.3.to_string()))),
        named: |path| {
            let calls = plan::AUTHENTICATION.iter().filter(|call| call.3 == path);
            let keys: Vec<&str> = calls.map(|call| call.0).collect();
            let keys = [&[plan::BASELINE][..], &keys].concat();
            (keys.len() > 1).then(|| Member::measured_by(path, &keys))
        },
    }),
    ..EXPOSURE_ROW
};

pub static TRACE_METHOD_DISABLED: CheckSpec = CheckSpec {
    id: "traceMethodDisabled",
    severity: Severity::Medium,
    title: "TRACE requests are not echoed",
    remediation: "Refuse the TRACE method at the reverse proxy (e.g. nginx: if ($request_method \
                  = TRACE) { return 405; }).",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Methods/TRACE",
    verified_by: &[Measure::Probe(plan::TRACE)],
    fix: Fix::TraceDisabled,
    ..EXPOSURE_ROW
};

pub static CORS_ORIGIN_RESTRICTED: CheckSpec = CheckSpec {
    id: "corsOriginRestricted",
    // The worst case: a reflected origin with credentials lets any site act as the
    // signed-in user. A reflection without credentials is medium; `*` passes (see `cors`).
    severity: Severity::Critical,
    title: "Other sites cannot call the API with the signed-in user's credentials",
    remediation: "Stop reflecting the request's Origin (or allowing 'null'): remove the rule \
                  that echoes it, usually in the reverse proxy, and list trusted clients in \
                  OC_CORS_ALLOW_ORIGINS. The default '*' is safe: browsers never send \
                  credentials to it.",
    documentation: "https://developer.mozilla.org/docs/Web/HTTP/Guides/CORS#requests_with_credentials",
    verified_by: &[
        Measure::Probe(plan::CORS_PREFLIGHT),
        Measure::Probe(plan::CORS_GET),
    ],
    fix: Fix::CorsReflection,
    advice: &[(
        ProductFamily::InfiniteScale,
        "Stop reflecting the request's Origin (or allowing 'null'): remove the rule that \
         echoes it, usually in the reverse proxy, and list trusted clients in \
         OCIS_CORS_ALLOW_ORIGINS. The default '*' is safe: browsers never send credentials \
         to it.",
    )],
    ..EXPOSURE_ROW
};

pub static VERSION_DISCLOSURE: CheckSpec = CheckSpec {
    id: "versionDisclosure",
    family: Some("versionDisclosure"),
    severity: Severity::Low,
    title: "Response headers do not disclose versions",
    remediation: "Strip the headers that name a version (X-*-Version, Server, X-Powered-By) \
                  at the reverse proxy; each failed header's finding names the line that \
                  removes it.",
    documentation: VERSION_DISCLOSURE_DOCS,
    verified_by: &[Measure::EveryAnswer],
    fix: Fix::StripVersionHeader,
    // The headers are known once the answers are.
    members: Some(Members {
        listed: None,
        named: |name| {
            is_header_name(name).then(|| Member {
                detail: canonical_header_name(name),
                keys: Vec::new(),
                every_answer: true,
            })
        },
    }),
    when_absent: |header, m| {
        let header = header?;
        let answered = m.every_answer().next().is_some();
        answered.then(|| format!("no answer discloses a version in {header} any more"))
    },
    ..EXPOSURE_ROW
};

/// An HTTP header name (RFC 9110 token characters).
fn is_header_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

pub static ROWS: &[&CheckSpec] = &[
    &EXPOSED,
    &DIRECTORY_LISTING,
    &AUTHENTICATION,
    &TRACE_METHOD_DISABLED,
    &CORS_ORIGIN_RESTRICTED,
    &VERSION_DISCLOSURE,
];

/// The answer is the page every unknown path gets, not the thing asked for: the same status
/// and the same body, compared by length and digest over the same bytes read (the probes keep
/// different parts of their bodies, see `plan::KEEP_*`).
pub fn is_catch_all(answer: &Response, baseline: Option<&Response>) -> bool {
    baseline.is_some_and(|b| b.status == answer.status && b.same_body(answer))
}

/// Said of a catch-all answer whose body was longer than the read cap: only its first bytes
/// were compared.
fn compared_part(r: &Response) -> String {
    if r.truncated {
        format!(
            " (both bodies {}; their first {} are the same)",
            body_size(r),
            crate::files::size_text(crate::net::http::MAX_BODY_BYTES as u64)
        )
    } else {
        String::new()
    }
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.starts_with("<?xml")
}

/// Whether a body is the file named by the path, judged by its content.
pub fn looks_like(path: &str, body: &[u8]) -> bool {
    if body.is_empty() || looks_like_html(body) {
        return false;
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
    let has_line = |pred: &dyn Fn(&str) -> bool| text.lines().any(|l| pred(l.trim_end()));
    if path.ends_with(".key") {
        text.contains("-----BEGIN") && text.contains("PRIVATE KEY")
    } else if path.ends_with(".boltdb") {
        // Binary pages; a text catch-all never has NUL bytes.
        body.contains(&0)
    } else if path.ends_with("/.env") {
        has_line(&|l| {
            let Some((key, _)) = l.split_once('=') else {
                return false;
            };
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
    } else if path.ends_with("/.git/config") {
        text.contains("[core]") || text.contains("[remote ")
    } else if path.ends_with(".yml") || path.ends_with(".yaml") {
        has_line(&|l| {
            let t = l.trim_start();
            !t.starts_with('#')
                && t.split_once(':').is_some_and(|(k, rest)| {
                    !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                        && (rest.is_empty() || rest.starts_with(' '))
                })
        })
    } else {
        false
    }
}

fn exposed_severity(path: &str) -> Severity {
    // A private key or the identity store hands over the instance; a deployment
    // configuration file is high (spec).
    if path.ends_with(".key") || path.ends_with(".boltdb") {
        Severity::Critical
    } else {
        Severity::High
    }
}

fn network_limited(id: impl Check, error: &crate::net::http::FetchError) -> Finding {
    let why = printable(error.message());
    finding(id, Status::NetworkLimited, format!("no answer: {why}"))
}

fn exposed_files(m: &Measurements) -> Vec<Finding> {
    let base = m.answer(plan::BASELINE);
    plan::exposed_files()
        .into_iter()
        .filter_map(|path| {
            let id = EXPOSED.member(path);
            let observation = m.http.get(&format!("{}{path}", plan::EXPOSED))?;
            let r = match observation {
                Err(e) => return Some(network_limited(&id, e)),
                Ok(r) => r,
            };
            Some(if r.status != 200 {
                finding(&id, Status::Passed, format!("answered HTTP {}", r.status))
            } else if is_catch_all(r, base) {
                let detail = format!("answered the catch-all page{}", compared_part(r));
                finding(&id, Status::Passed, detail)
            } else if looks_like(path, &r.body) {
                let detail = format!("{path} is served to anybody ({})", body_size(r));
                Finding {
                    severity: exposed_severity(path),
                    ..finding(&id, Status::Failed, detail)
                }
            } else {
                let detail = "answered 200 with content that is not the file";
                finding(&id, Status::Passed, detail)
            })
        })
        .collect()
}

fn directory_listing(m: &Measurements) -> Option<Finding> {
    let base = m.answer(plan::BASELINE);
    let mut listed = Vec::new();
    let mut answered = false;
    for path in plan::LISTING_CANDIDATES {
        let Some(Ok(r)) = m.http.get(&format!("listing:{path}")) else {
            continue;
        };
        answered = true;
        if r.status == 200 && !is_catch_all(r, base) {
            let text = String::from_utf8_lossy(&r.body).to_ascii_lowercase();
            if text.contains("<title>index of")
                || text.contains("<h1>index of")
                || text.contains("directory listing for")
            {
                listed.push(*path);
            }
        }
    }
    if !m.http.keys().any(|k| k.starts_with("listing:")) {
        return None;
    }
    let (status, detail) = if !listed.is_empty() {
        let detail = format!("folder listings are served for {}", listed.join(", "));
        (Status::Failed, detail)
    } else if answered {
        (Status::Passed, "no folder listing is served".into())
    } else {
        let detail = "no listing probe got an answer";
        (Status::NetworkLimited, detail.into())
    };
    Some(finding(&DIRECTORY_LISTING, status, detail))
}

/// Status of one anonymous API call: `Some(true)` refused (protected), `Some(false)` served.
fn refused(answer: &Response, base: Option<&Response>) -> Option<bool> {
    match answer.status {
        401 | 403 | 404 | 405 | 501 => Some(true),
        300..=399 => Some(true), // sent to a login page
        200..=299 if is_catch_all(answer, base) || looks_like_html(&answer.body) => Some(true),
        200..=299 => Some(false),
        _ => None,
    }
}

fn authentication(m: &Measurements) -> Vec<Finding> {
    let base = m.answer(plan::BASELINE);
    let mut paths: Vec<&str> = plan::AUTHENTICATION
        .iter()
        .map(|(_, _, _, path)| *path)
        .collect();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|path| {
            let answers: Vec<(&str, &Observation)> = plan::AUTHENTICATION
                .iter()
                .filter(|(_, _, _, judged)| *judged == path)
                .filter_map(|(key, method, _, _)| m.http.get(*key).map(|o| (*method, o)))
                .collect();
            if answers.is_empty() {
                return None;
            }
            let served: Vec<String> = answers
                .iter()
                .filter_map(|(method, o)| match o {
                    Ok(r) if refused(r, base) == Some(false) => Some(format!(
                        "{method} answered HTTP {} without sign-in",
                        r.status
                    )),
                    _ => None,
                })
                .collect();
            let decided = answers
                .iter()
                .filter(|(_, o)| matches!(o, Ok(r) if refused(r, base).is_some()))
                .count();
            let member = AUTHENTICATION.member(path);
            let mut f = if !served.is_empty() {
                let detail = format!("{path}: {}", served.join("; "));
                finding(&member, Status::Failed, detail)
            } else if decided == answers.len() {
                let detail = format!("{path} refuses anonymous callers");
                finding(&member, Status::Passed, detail)
            } else if let Some((_, Err(e))) = answers.iter().find(|(_, o)| o.is_err()) {
                network_limited(&member, e)
            } else {
                let detail = format!("{path} answered with a server error");
                finding(&member, Status::Indeterminate, detail)
            };
            // User lists and files are critical; the caller's own profile is high.
            if path.ends_with("/cloud/user") || path.ends_with("/me") {
                f.severity = Severity::High;
            }
            Some(f)
        })
        .collect()
}

fn trace(m: &Measurements) -> Option<Finding> {
    let observation = m.http.get(plan::TRACE)?;
    Some(match observation {
        Err(e) => network_limited(&TRACE_METHOD_DISABLED, e),
        Ok(r) => {
            let content_type = r.header("content-type").unwrap_or("").to_ascii_lowercase();
            let body = String::from_utf8_lossy(&r.body).to_ascii_lowercase();
            let echoed = (200..300).contains(&r.status)
                && (content_type.starts_with("message/http")
                    || body.contains(&plan::TRACE_MARKER_HEADER.to_ascii_lowercase()));
            let (status, detail) = if echoed {
                let detail = "TRACE / is answered with an echo of the request (headers, cookies \
                              included)";
                (Status::Failed, detail.to_string())
            } else {
                let detail = format!("TRACE / answered HTTP {} without an echo", r.status);
                (Status::Passed, detail)
            };
            finding(&TRACE_METHOD_DISABLED, status, detail)
        }
    })
}

/// CORS judged the way browsers enforce it (the anchor is Mozilla HTTP Observatory's CORS
/// test): `Access-Control-Allow-Origin: *` is public access, since browsers never send
/// credentials to it and refuse a response that pairs it with
/// `Access-Control-Allow-Credentials: true`; the real default OpenCloud answers its Graph
/// preflight exactly so. What fails is our probe origin (or `null`) allowed by name: with
/// credentials any site can act as the signed-in user (critical), without them any site can
/// read what anonymous callers can (medium).
fn cors(m: &Measurements) -> Option<Finding> {
    let id = &CORS_ORIGIN_RESTRICTED;
    let answers: Vec<&Response> = [plan::CORS_PREFLIGHT, plan::CORS_GET]
        .iter()
        .filter_map(|k| m.answer(k))
        .collect();
    if answers.is_empty() {
        return match m.http.get(plan::CORS_PREFLIGHT) {
            Some(Err(e)) => Some(network_limited(id, e)),
            _ => None,
        };
    }
    let mut worst: Option<(Severity, String)> = None;
    let mut wildcard = false;
    for r in answers {
        let Some(allowed) = r.header("access-control-allow-origin").map(str::trim) else {
            continue;
        };
        let credentials = r
            .header("access-control-allow-credentials")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if allowed == "*" {
            wildcard = true;
            continue;
        }
        let reflected = allowed.eq_ignore_ascii_case(plan::FOREIGN_ORIGIN) || allowed == "null";
        if !reflected {
            continue;
        }
        let allowed = printable(allowed);
        let (severity, what) = if credentials {
            let what = format!(
                "a foreign origin is allowed with credentials (Access-Control-Allow-Origin: \
                 {allowed}, Access-Control-Allow-Credentials: true): any site can act as the \
                 signed-in user"
            );
            (Severity::Critical, what)
        } else {
            let what =
                format!("a foreign origin is reflected (Access-Control-Allow-Origin: {allowed})");
            (Severity::Medium, what)
        };
        if worst.as_ref().is_none_or(|(s, _)| severity > *s) {
            worst = Some((severity, what));
        }
    }
    Some(match worst {
        Some((severity, what)) => Finding {
            severity,
            ..finding(id, Status::Failed, format!("/graph/v1.0/me: {what}"))
        },
        None if wildcard => finding(
            id,
            Status::Passed,
            "/graph/v1.0/me allows any origin (Access-Control-Allow-Origin: *), which is public \
             access: browsers never send credentials to '*' and refuse it paired with \
             Access-Control-Allow-Credentials: true",
        ),
        None => finding(
            id,
            Status::Passed,
            "a foreign origin gets no CORS permission",
        ),
    })
}

/// A header value that names a version (`4.0.0`, `nginx/1.25.3`, `PHP/8.2`).
pub fn discloses_version(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes
        .windows(3)
        .any(|w| w[0].is_ascii_digit() && w[1] == b'.' && w[2].is_ascii_digit())
}

fn version_disclosure(m: &Measurements) -> Vec<Finding> {
    // header name (as first seen) -> an example value
    let mut seen: Vec<(String, String)> = Vec::new();
    for r in m.every_answer() {
        for (name, value) in &r.headers {
            let lower = name.to_ascii_lowercase();
            let relevant = lower == "server"
                || lower == "x-powered-by"
                || (lower.starts_with("x-") && lower.ends_with("-version"));
            if relevant
                && discloses_version(value)
                && !seen.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                seen.push((canonical_header_name(name), printable(value)));
            }
        }
    }
    seen.sort();
    if seen.is_empty() {
        let detail = "no response header names a version";
        return vec![finding(&VERSION_DISCLOSURE, Status::Passed, detail)];
    }
    seen.into_iter()
        .map(|(name, value)| Finding {
            remediation: strip_header_advice(&name),
            ..finding(
                &VERSION_DISCLOSURE.member(&name),
                Status::Failed,
                format!("{name}: {value}"),
            )
        })
        .collect()
}

/// How to strip the header `name` that was seen, at the usual reverse proxies.
fn strip_header_advice(name: &str) -> String {
    if name == "Server" {
        return "Take the version out of the Server header at the reverse proxy (nginx: \
                server_tokens off; Apache: ServerTokens Prod; Caddy: header -Server)."
            .to_string();
    }
    format!(
        "Strip the {name} header at the reverse proxy (nginx: proxy_hide_header {name}; \
         Caddy: header -{name}; Apache: Header unset {name})."
    )
}

pub fn evaluate(m: &Measurements) -> Vec<Finding> {
    let mut findings = exposed_files(m);
    findings.extend(directory_listing(m));
    findings.extend(authentication(m));
    findings.extend(trace(m));
    findings.extend(cors(m));
    findings.extend(version_disclosure(m));
    findings
}

#[cfg(test)]
mod ocis_tests;
#[cfg(test)]
mod tests;
