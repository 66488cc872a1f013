//! Debug-listener checks: `debugPort:<port>` (a service's debug listener is reachable) and the
//! `debugEndpoint` family (what its handlers hand out): `debugEndpoint:<port><path>` on the
//! debug ports, `debugEndpoint:<path>` on the public address.
//!
//! The proxy's `/config` dump masks password fields but shows `ServiceAccountSecret` in clear
//! text (observed on OpenCloud 3.7.0 and 4.0.0), so a reachable `/config` with such a value is
//! critical. A debug token protects only `/metrics`; `/config` and `/debug/pprof/` never ask
//! for one.

use super::exposure::is_catch_all;
use super::{CheckSpec, Fix, INSTANCE, Measure, Member, MemberId, Members, Unmeasured, finding};
use crate::capped::{self, Read, Reader, Shallow};
use crate::family::ProductFamily;
use crate::net::http::{Response, canonical_header_name};
use crate::probe::debug_ports::{DebugAnswer, DebugPort, PortState};
use crate::probe::{self, Measurements, plan};
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;
use serde::de::{self, MapAccess, SeqAccess};
use std::cell::RefCell;

const PROXY_DOCS: &str = "https://docs.opencloud.eu/docs/dev/server/services/proxy";

/// What both rows share: families of findings about the debug listeners, fixed on the
/// instance.
const DEBUG_ROW: CheckSpec = CheckSpec {
    role: Role::Check,
    severity: Severity::High,
    category: "exposure",
    documentation: PROXY_DOCS,
    fixed_in: INSTANCE,
    ..CheckSpec::ROW
};

pub static DEBUG_PORT: CheckSpec = CheckSpec {
    id: "debugPort",
    family: Some("debugPort"),
    title: "Debug listeners are not reachable from outside",
    remediation: "Bind every service's debug listener to loopback (`<SERVICE>_DEBUG_ADDR`, \
                  e.g. `PROXY_DEBUG_ADDR=127.0.0.1:9205`, the default) and never publish or \
                  forward the debug ports (9205, 9141, 9124, 9134, 9239, ...); block them \
                  at the firewall.",
    verified_by: &[Measure::DebugPorts],
    fix: Fix::DebugPort,
    // The configured ports are known once the family is.
    members: Some(Members {
        listed: None,
        named: |port| {
            let port = port_number(port)?;
            let listener = format!("{}{port}", probe::DEBUG_PORT);
            Some(Member::measured_by(port.to_string(), &[&listener]))
        },
    }),
    unmeasured: &[Unmeasured::NoDebugPort],
    ..DEBUG_ROW
};

pub static DEBUG_ENDPOINT: CheckSpec = CheckSpec {
    id: "debugEndpoint",
    family: Some("debugEndpoint"),
    title: "Debug handlers (/config, /metrics, /debug/pprof/) are not reachable (critical when \
            /config shows a clear-text secret; /metrics medium)",
    remediation: "Keep the debug handlers off the network: bind the debug listeners to \
                  loopback (`PROXY_DEBUG_ADDR=127.0.0.1:9205`, likewise every \
                  `<SERVICE>_DEBUG_ADDR`), never publish the debug ports or route their \
                  paths through the reverse proxy, set `<SERVICE>_DEBUG_TOKEN` for \
                  `/metrics` and leave `<SERVICE>_DEBUG_PPROF` off. After `/config` was \
                  reachable, set `OC_SERVICE_ACCOUNT_SECRET` (and every other secret it \
                  showed) anew.",
    verified_by: &[
        Measure::Probe(plan::BASELINE),
        Measure::Probes(plan::PUBLIC_DEBUG),
        Measure::DebugPorts,
    ],
    fix: Fix::DebugEndpoint,
    members: Some(Members {
        listed: None,
        named: debug_endpoint_member,
    }),
    when_absent: |member, m| {
        // `<port><path>` on a port that was probed and is not open: nothing serves the path.
        let (port, path) = port_and_path(member?)?;
        let probed = m.debug_ports.iter().flatten().find(|p| p.port == port)?;
        (probed.state != PortState::Open)
            .then(|| format!("port {port} is not open, so {path} is not reachable there"))
    },
    unmeasured: &[Unmeasured::NoDebugPort],
    advice: &[(
        ProductFamily::InfiniteScale,
        "Keep the debug handlers off the network: bind the debug listeners to loopback \
         (`PROXY_DEBUG_ADDR=127.0.0.1:9205`, likewise every `<SERVICE>_DEBUG_ADDR`), never \
         publish the debug ports or route their paths through the reverse proxy, set \
         `<SERVICE>_DEBUG_TOKEN` for `/metrics` and leave `<SERVICE>_DEBUG_PPROF` off. After \
         `/config` was reachable, set `OCIS_SERVICE_ACCOUNT_SECRET` (and every other secret \
         it showed) anew.",
    )],
    ..DEBUG_ROW
};

pub static ROWS: &[&CheckSpec] = &[&DEBUG_PORT, &DEBUG_ENDPOINT];

fn port_number(text: &str) -> Option<u16> {
    text.parse::<u16>().ok().filter(|p| *p > 0)
}

/// `9205/config` of `debugEndpoint:9205/config`: a handler on a debug port.
fn port_and_path(member: &str) -> Option<(u16, &str)> {
    let (port, path) = member.split_at(member.find('/')?);
    Some((port_number(port)?, path))
}

/// `debugEndpoint:<path>` on the public address, or `debugEndpoint:<port><path>` on a debug
/// port.
fn debug_endpoint_member(member: &str) -> Option<Member> {
    if plan::PUBLIC_DEBUG_PATHS.contains(&member) {
        let probe = format!("{}{member}", plan::PUBLIC_DEBUG);
        return Some(Member::measured_by(member, &[plan::BASELINE, &probe]));
    }
    let (port, path) = port_and_path(member)?;
    let listener = format!("{}{port}", probe::DEBUG_PORT);
    plan::PUBLIC_DEBUG_PATHS
        .contains(&path)
        .then(|| Member::measured_by(format!("{port}{path}"), &[&listener]))
}

/// The handlers judged on every open debug port, in finding order.
const JUDGED_PATHS: &[&str] = &["/config", "/metrics", "/debug/pprof/"];

pub fn evaluate(m: &Measurements) -> Vec<Finding> {
    let ports = m.debug_ports.iter().flatten();
    let mut findings: Vec<Finding> = ports.flat_map(debug_port).collect();
    findings.extend(public_paths(m));
    findings
}

// ---------------------------------------------------------------------------------------------
// Debug ports

fn debug_port(port: &DebugPort) -> Vec<Finding> {
    let id = DEBUG_PORT.member(port.port);
    let n = port.port;
    let (status, detail) = match &port.state {
        PortState::Closed => (
            Status::Passed,
            format!("port {n} refuses connections (closed)"),
        ),
        // A firewall that drops packets is what the operator wants.
        PortState::Filtered => {
            let detail = format!(
                "no answer within {} (filtered)",
                seconds(port.connect_timeout)
            );
            (Status::Passed, detail)
        }
        PortState::Error(reason) => {
            let detail = format!("port {n} could not be probed: {}", printable(reason));
            (Status::Indeterminate, detail)
        }
        PortState::Open => return open_port(port, &id),
    };
    vec![finding(&id, status, detail)]
}

fn open_port(port: &DebugPort, id: &MemberId) -> Vec<Finding> {
    let n = port.port;
    let at = port
        .address
        .map(|a| format!("port {n} ({a})"))
        .unwrap_or_else(|| format!("port {n}"));
    let answered: Vec<(&str, &Response)> = port
        .endpoints
        .iter()
        .filter_map(|e| e.answer.as_ref().ok().map(|r| (e.path.as_str(), r)))
        .collect();
    let evidence = debug_listener_evidence(&answered);
    let (status, detail) = if !evidence.is_empty() {
        let service = service_of(&answered)
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let evidence = evidence.join(", ");
        let detail = format!("{at} answers like a debug listener{service}: {evidence}");
        (Status::Failed, detail)
    } else if !answered.is_empty() {
        let seen: Vec<String> = answered
            .iter()
            .take(2)
            .map(|(path, r)| format!("{path} {}", r.status))
            .collect();
        let detail = format!(
            "{at} accepts connections but does not answer like a debug listener (another \
             service may use it): {}",
            seen.join(", ")
        );
        (Status::Passed, detail)
    } else if let Some(e) = port.endpoints.iter().find(|e| e.transient) {
        let error = error_text(e);
        let detail = format!("{at} accepts connections but gave no HTTP answer: {error}");
        (Status::NetworkLimited, detail)
    } else {
        let error = port
            .endpoints
            .first()
            .map(|e| format!(": {}", error_text(e)))
            .unwrap_or_default();
        let detail = format!(
            "{at} accepts connections but does not speak HTTP (another service may use \
             it){error}"
        );
        (Status::Passed, detail)
    };
    let mut findings = vec![finding(id, status, detail)];
    for path in JUDGED_PATHS {
        let Some(endpoint) = port.endpoints.iter().find(|e| e.path == *path) else {
            continue;
        };
        let where_ = format!("{path} on {at}");
        let error = || error_text(endpoint);
        let judgment = match &endpoint.answer {
            Ok(response) => judge(path, &where_, response),
            Err(_) if endpoint.transient => {
                let detail = format!("{where_}: no answer: {}", error());
                (Status::NetworkLimited, path_severity(path), detail)
            }
            Err(_) => {
                let detail = format!("{where_}: no HTTP answer ({})", error());
                (Status::Passed, path_severity(path), detail)
            }
        };
        let id = DEBUG_ENDPOINT.member(format!("{n}{path}"));
        findings.push(handler_finding(&id, judgment));
    }
    findings
}

/// What marks an answer set as an OpenCloud (or oCIS) debug listener; empty when nothing does.
fn debug_listener_evidence(answered: &[(&str, &Response)]) -> Vec<String> {
    let mut evidence: Vec<String> = answered
        .iter()
        .filter_map(|(path, r)| match *path {
            "/healthz" | "/readyz" if r.status == 200 && r.is_whole() && is_ok_body(&r.body) => {
                Some(format!("{path} 200 OK"))
            }
            "/metrics" if is_prometheus(r) => Some("/metrics Prometheus text".to_string()),
            "/config" if config_dump(r).is_some() => Some("/config JSON configuration".into()),
            "/debug/pprof/" if is_pprof_index(r) => Some("/debug/pprof/ index".to_string()),
            _ => None,
        })
        .collect();
    // The web service's own port also sends `X-Web-Version`, on its HTML pages: the header
    // counts only on a plain (non-HTML) answer, as every debug handler gives.
    if let Some((path, r)) = answered
        .iter()
        .find(|(_, r)| version_header(r).is_some() && !looks_like_html(&r.body))
    {
        let (name, value) = version_header(r).unwrap_or_default();
        evidence.push(format!(
            "{name}: {} on {path}",
            printable(&value).chars().take(40).collect::<String>()
        ));
    }
    evidence
}

/// The service and release the debug listener names (`proxy 4.0.0`), from `X-<Svc>-Version`.
fn service_of(answered: &[(&str, &Response)]) -> Option<String> {
    answered.iter().find_map(|(_, r)| {
        let (name, value) = version_header(r)?;
        let service = name[2..name.len() - "-version".len()].trim_matches('-');
        let text = format!("{} {}", service.to_ascii_lowercase(), printable(&value));
        Some(text.chars().take(60).collect())
    })
}

/// The first `X-*-Version` header: (name, value).
fn version_header(r: &Response) -> Option<(String, String)> {
    r.headers.iter().find_map(|(n, v)| {
        let lower = n.to_ascii_lowercase();
        (lower.starts_with("x-") && lower.ends_with("-version") && lower.len() > 10)
            .then(|| (canonical_header_name(n), v.clone()))
    })
}

// ---------------------------------------------------------------------------------------------
// Public address

fn public_paths(m: &Measurements) -> Vec<Finding> {
    let baseline = m.answer(plan::BASELINE);
    let mut findings = Vec::new();
    for path in plan::PUBLIC_DEBUG_PATHS {
        let id = DEBUG_ENDPOINT.member(path);
        let Some(observation) = m.http.get(&format!("{}{path}", plan::PUBLIC_DEBUG)) else {
            continue;
        };
        let where_ = format!("{path} on the public address");
        let judgment = match observation {
            Err(e) => {
                let detail = format!("{where_}: no answer: {}", printable(e.message()));
                (Status::NetworkLimited, path_severity(path), detail)
            }
            Ok(response) if is_catch_all(response, baseline) => {
                let detail = format!(
                    "{where_} answers the page every unknown path gets ({}), not the debug \
                     handler",
                    response.status
                );
                (Status::Passed, path_severity(path), detail)
            }
            Ok(response) => judge(path, &where_, response),
        };
        findings.push(handler_finding(&id, judgment));
    }
    findings
}

// ---------------------------------------------------------------------------------------------
// Judging one handler's answer

/// What one handler's answer shows: the finding's status, its severity and its detail.
type Judgment = (Status, Severity, String);

/// The severity of a handler's finding that did not fail: `/metrics` hands out less than the
/// others.
fn path_severity(path: &str) -> Severity {
    match path {
        "/metrics" => Severity::Medium,
        _ => Severity::High,
    }
}

/// The answer of the handler at `path` (`where_`: the path and where it was asked): failed at
/// the severity of what it hands out when it answered with its content.
fn judge(path: &str, where_: &str, r: &Response) -> Judgment {
    let exposed = |severity, what: &str| (Status::Failed, severity, format!("{where_} {what}"));
    let refused = || {
        let what = match r.status {
            401 | 403 => format!("requires authentication ({})", r.status),
            200 => "answers 200 but not with the handler's content".to_string(),
            other => format!("answers {other}"),
        };
        (
            Status::Passed,
            path_severity(path),
            format!("{where_} {what}"),
        )
    };
    match path {
        "/config" => match config_dump(r) {
            Some(dump) if !dump.leaked.is_empty() => exposed(
                Severity::Critical,
                &format!(
                    "answers without authentication and shows {} secret value(s) in clear \
                     text: {}{}",
                    dump.leaked.len(),
                    dump.leaked
                        .iter()
                        .take(8)
                        .map(|k| printable(k))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if dump.leaked.len() > 8 { ", ..." } else { "" }
                ),
            ),
            Some(dump) => exposed(
                Severity::High,
                &format!(
                    "answers the service configuration without authentication (no clear-text \
                     secret found{})",
                    if dump.complete {
                        ""
                    } else {
                        " in the part that could be read"
                    }
                ),
            ),
            None => refused(),
        },
        "/metrics" if is_prometheus(r) => exposed(
            Severity::Medium,
            "answers Prometheus metrics without authentication",
        ),
        "/debug/pprof/" if is_pprof_index(r) => exposed(
            Severity::High,
            "answers the Go profiler index without authentication (heap, goroutine and CPU \
             profiles can be downloaded)",
        ),
        _ => refused(),
    }
}

fn handler_finding(id: &MemberId, (status, severity, detail): Judgment) -> Finding {
    Finding {
        severity,
        ..finding(id, status, detail)
    }
}

fn text_head(body: &[u8], max: usize) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(&body[..body.len().min(max)])
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = text_head(body, 512).to_ascii_lowercase();
    let head = head.trim_start();
    head.starts_with("<!doctype") || head.starts_with("<html") || head.starts_with("<?xml")
}

/// `/healthz` and `/readyz` of a debug listener answer the two bytes `OK`.
fn is_ok_body(body: &[u8]) -> bool {
    body.len() <= 16
        && String::from_utf8_lossy(body)
            .trim()
            .eq_ignore_ascii_case("ok")
}

/// Prometheus (or OpenMetrics) exposition text: `# HELP` / `# TYPE` lines.
fn is_prometheus(r: &Response) -> bool {
    r.status == 200
        && !looks_like_html(&r.body)
        && text_head(&r.body, 64 * 1024).lines().any(|l| {
            let mut words = l.split_whitespace();
            words.next() == Some("#")
                && matches!(words.next(), Some("HELP" | "TYPE"))
                && words.next().is_some()
        })
}

/// The index page of Go's `net/http/pprof`.
fn is_pprof_index(r: &Response) -> bool {
    let text = text_head(&r.body, 64 * 1024);
    r.status == 200
        && text.contains("/debug/pprof/")
        && (text.contains("Types of profiles available")
            || text.contains("goroutine?debug=")
            || text.contains("heap?debug="))
}

/// A configuration dump served by `/config`.
#[derive(Debug, PartialEq, Eq)]
struct ConfigDump {
    /// Paths (`ServiceAccount.ServiceAccountSecret`) of secret values in clear text; leaf
    /// names only when the document could not be parsed whole.
    leaked: Vec<String>,
    /// The whole document was parsed.
    complete: bool,
}

/// Top-level keys of JSON error documents, which are not configuration.
const ERROR_KEYS: &[&str] = &["error", "errors", "message", "ocs", "status", "code"];

fn config_dump(r: &Response) -> Option<ConfigDump> {
    if r.status != 200 {
        return None;
    }
    let text = String::from_utf8_lossy(&r.body);
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        return None;
    }
    // Only a whole body is read as a document; of one cut (the probe keeps the first
    // `plan::KEEP_CONFIG_DUMP` bytes, a capture may be cut) the pairs that are there are read.
    let document = if r.is_whole() {
        scan_config(trimmed)
    } else {
        Err(())
    };
    match document {
        Ok(Some(leaked)) => Some(ConfigDump {
            leaked,
            complete: true,
        }),
        Ok(None) => None,
        // Cut (the probe's keep, or a capture), or not JSON: read the key/value pairs that are
        // there.
        Err(()) => {
            let pairs = string_pairs(trimmed);
            if pairs.len() < 2 {
                return None;
            }
            let mut leaked: Vec<String> = pairs
                .into_iter()
                .filter(|(k, v)| is_secret_name(k) && is_clear_value(v))
                .map(|(k, _)| k)
                .collect();
            leaked.sort();
            leaked.dedup();
            Some(ConfigDump {
                leaked,
                complete: false,
            })
        }
    }
}

/// Reads a whole `/config` document as it is parsed, building no tree: the paths
/// (`ServiceAccount.ServiceAccountSecret`, `a.b[0].c`) of string values under secret-looking
/// names that are not masked, in the order of the keys (as a JSON object read whole lists
/// them), or `None` when the document is JSON but no configuration (not an object, empty, or
/// only error members). `Err` when it is not JSON (or nests deeper than serde_json reads).
fn scan_config(text: &str) -> Result<Option<Vec<String>>, ()> {
    let walk = RefCell::new(Walk::default());
    let mut de = serde_json::Deserializer::from_str(text);
    let top = ConfigWalk {
        walk: &walk,
        secret_name: false,
    };
    let configuration = capped::read(&mut de, top).map_err(|_| ())?;
    de.end().map_err(|_| ())?;
    if !configuration {
        return Ok(None);
    }
    let mut found = walk.into_inner().found;
    found.sort();
    let mut leaked: Vec<String> = found.into_iter().map(|(_, shown)| shown).collect();
    leaked.dedup();
    Ok(Some(leaked))
}

/// One step of a path into the document: keys sort as a JSON object's keys, indexes by number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Key(String),
    Index(usize),
}

/// Where the walk through a `/config` document is, and the leaks it found: each as its path of
/// steps (to sort by) and as shown in findings.
#[derive(Default)]
struct Walk {
    path: Vec<Step>,
    shown: String,
    found: Vec<(Vec<Step>, String)>,
}

impl Walk {
    /// Steps into `step`; gives what [`Walk::leave`] needs to step out again.
    fn enter(&mut self, step: Step) -> usize {
        let before = self.shown.len();
        match &step {
            // As a path was always written: `a.b`, and `b` alone under an empty path.
            Step::Key(key) if self.shown.is_empty() => self.shown.push_str(key),
            Step::Key(key) => {
                self.shown.push('.');
                self.shown.push_str(key);
            }
            Step::Index(i) => self.shown.push_str(&format!("[{i}]")),
        }
        self.path.push(step);
        before
    }

    fn leave(&mut self, before: usize) {
        self.path.pop();
        self.shown.truncate(before);
    }
}

/// A value in the document; `secret_name` when its key names a secret, so a string here that
/// is not masked is a leak. Its value says whether it is configuration: an object with a
/// member that is not an error document's (only the top-level value's is asked).
struct ConfigWalk<'w> {
    walk: &'w RefCell<Walk>,
    secret_name: bool,
}

impl<'de> Reader<'de> for ConfigWalk<'_> {
    type Value = bool;
    fn shallow<E: de::Error>(self, value: Shallow) -> Result<bool, E> {
        if let Shallow::Text(text) = value
            && self.secret_name
            && is_clear_value(&text)
        {
            let mut walk = self.walk.borrow_mut();
            let leak = (walk.path.clone(), walk.shown.clone());
            walk.found.push(leak);
        }
        Ok(false)
    }
    fn mapping<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut configuration = false;
        while let Some(name) = map.next_key::<String>()? {
            configuration |= !ERROR_KEYS.contains(&name.as_str());
            let secret_name = is_secret_name(&name);
            let before = self.walk.borrow_mut().enter(Step::Key(name));
            let walk = self.walk;
            map.next_value_seed(Read(ConfigWalk { walk, secret_name }))?;
            self.walk.borrow_mut().leave(before);
        }
        Ok(configuration)
    }
    fn list<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        for index in 0.. {
            let before = self.walk.borrow_mut().enter(Step::Index(index));
            // An element is never under a secret's name: only members are.
            let element = ConfigWalk {
                walk: self.walk,
                secret_name: false,
            };
            let more = seq.next_element_seed(Read(element))?.is_some();
            self.walk.borrow_mut().leave(before);
            if !more {
                break;
            }
        }
        Ok(false)
    }
}

/// Names of fields that hold secrets: `...Secret`, `...Password`, `...Token`, `...Key`
/// (`JWTSecret`, `MachineAuthAPIKey`, `AuthPassword`, `ServiceAccountSecret`). Names that only
/// contain the word (`AccessTokenVerifyMethod`, `TokenManager`) describe something else.
fn is_secret_name(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    if lower.ends_with("publickey") {
        return false;
    }
    [
        "secret",
        "password",
        "passwd",
        "token",
        "key",
        "credentials",
    ]
    .iter()
    .any(|s| lower.ends_with(s))
}

/// A value that is really there: not empty, not a mask (`************`), not the path of a
/// key file (`TLSKey: /var/lib/.../server.key`).
fn is_clear_value(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() || v.chars().all(|c| c == '*' || c == '•') {
        return false;
    }
    let path_like = (v.starts_with('/') || v.starts_with("./") || v.starts_with("../"))
        && !v.contains(char::is_whitespace);
    let key_file =
        [".pem", ".key", ".crt"].iter().any(|e| v.ends_with(e)) && !v.contains(char::is_whitespace);
    !path_like && !key_file
}

/// `"name": "value"` pairs of a JSON text that may be cut anywhere; other values are skipped.
fn string_pairs(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    let read_string = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Some(s),
                '\\' => {
                    if let Some(escaped) = chars.next() {
                        s.push(escaped);
                    }
                }
                other => s.push(other),
            }
        }
        None
    };
    // Skips white space, then `c` when it comes next: whether it did.
    let next_is = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, c: char| {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        chars.next_if_eq(&c).is_some()
    };
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let Some(name) = read_string(&mut chars) else {
            break;
        };
        if !next_is(&mut chars, ':') {
            continue;
        }
        if next_is(&mut chars, '"') {
            let Some(value) = read_string(&mut chars) else {
                break;
            };
            pairs.push((name, value));
        }
    }
    pairs
}

// ---------------------------------------------------------------------------------------------
// Text helpers

/// `3s`, `0.5s` (a whole number of seconds prints without a fraction).
fn seconds(d: std::time::Duration) -> String {
    format!("{}s", d.as_millis() as f64 / 1000.0)
}

fn error_text(e: &DebugAnswer) -> String {
    match &e.answer {
        Err(message) => printable(message),
        Ok(r) => format!("answered {}", r.status),
    }
}

/// Server-controlled text made safe for one output line: control characters replaced, cut
/// at 200 characters.
fn printable(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    if text.chars().count() > 200 {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::HttpsObservation;
    use crate::net::http::{Endpoint, FetchError, Scheme};
    use crate::probe::fixture;
    use std::net::SocketAddr;
    use std::time::Duration;

    const DEBUG_4: &str = "opencloud-4.0.0/debug";
    const VARIANT_37: &str = "opencloud-3.7.0-variant";

    fn measurements() -> Measurements {
        let endpoint = Endpoint {
            scheme: Scheme::Https,
            url_host: "cloud.example".into(),
            port: 443,
            base_path: String::new(),
        };
        Measurements::empty(endpoint, HttpsObservation::Unavailable("x".into()))
    }

    fn answer(path: &str, response: Response) -> DebugAnswer {
        DebugAnswer {
            path: path.into(),
            answer: Ok(response),
            transient: false,
        }
    }

    fn failure(path: &str, message: &str, transient: bool) -> DebugAnswer {
        DebugAnswer {
            path: path.into(),
            answer: Err(message.into()),
            transient,
        }
    }

    fn port(n: u16, state: PortState, endpoints: Vec<DebugAnswer>) -> DebugPort {
        let open = state == PortState::Open;
        DebugPort {
            port: n,
            state,
            endpoints,
            address: open.then(|| SocketAddr::from(([192, 0, 2, 10], n))),
            connect_timeout: Duration::from_secs(3),
        }
    }

    /// The real proxy debug listener of OpenCloud 4.0.0 (9205), pprof off.
    fn proxy_4_0_0() -> DebugPort {
        port(
            9205,
            PortState::Open,
            vec![
                answer("/healthz", fixture(&format!("{DEBUG_4}/9205-healthz.txt"))),
                answer("/readyz", fixture(&format!("{DEBUG_4}/9205-readyz.txt"))),
                answer(
                    "/metrics",
                    fixture(&format!("{DEBUG_4}/9205-metrics-head50.txt")),
                ),
                answer("/config", fixture(&format!("{DEBUG_4}/9205-config.txt"))),
                answer(
                    "/debug/pprof/",
                    fixture(&format!("{DEBUG_4}/9205-debug-pprof.txt")),
                ),
            ],
        )
    }

    /// The real 3.7.0 proxy debug listener with a debug token and pprof on.
    fn proxy_3_7_0_token_pprof() -> DebugPort {
        port(
            9205,
            PortState::Open,
            vec![
                answer(
                    "/healthz",
                    fixture(&format!("{VARIANT_37}/9205-healthz.txt")),
                ),
                answer(
                    "/metrics",
                    fixture(&format!("{VARIANT_37}/9205-metrics-no-token.txt")),
                ),
                answer(
                    "/config",
                    fixture(&format!("{VARIANT_37}/9205-config-no-token-first1500B.txt")),
                ),
                answer(
                    "/debug/pprof/",
                    fixture(&format!("{VARIANT_37}/9205-debug-pprof-no-token.txt")),
                ),
            ],
        )
    }

    /// The web service's own HTTP port (9100): the web app page for every path.
    fn web_port_9100() -> DebugPort {
        let paths = [
            ("/healthz", "9100-healthz.txt"),
            ("/readyz", "9100-readyz.txt"),
            ("/metrics", "9100-metrics-head50.txt"),
            ("/config", "9100-config.txt"),
            ("/debug/pprof/", "9100-debug-pprof.txt"),
        ];
        port(
            9100,
            PortState::Open,
            paths
                .iter()
                .map(|(p, f)| answer(p, fixture(&format!("{DEBUG_4}/{f}"))))
                .collect(),
        )
    }

    fn with_ports(ports: Vec<DebugPort>) -> Measurements {
        let mut m = measurements();
        m.debug_ports = Some(ports);
        m
    }

    fn get<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
        findings
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("no finding {id} in {findings:#?}"))
    }

    #[test]
    fn registry_rows_resolve_the_families() {
        let port = super::super::spec("debugPort:9205").unwrap();
        assert_eq!(port.id, "debugPort");
        assert_eq!(port.severity, Severity::High);
        assert_eq!(port.category, "exposure");
        assert!(port.remediation.contains("PROXY_DEBUG_ADDR=127.0.0.1:9205"));
        let endpoint = super::super::spec("debugEndpoint:9205/config").unwrap();
        assert_eq!(endpoint.id, "debugEndpoint");
        assert_eq!(
            super::super::spec("debugEndpoint:/metrics").unwrap().id,
            "debugEndpoint"
        );
        assert!(endpoint.remediation.contains("OC_SERVICE_ACCOUNT_SECRET"));
        for row in ROWS {
            assert_eq!(row.fixed_in, INSTANCE);
            assert!(row.verifiable());
            assert_eq!(row.documentation, PROXY_DOCS);
            assert_eq!(row.role, Role::Check);
        }
    }

    #[test]
    fn the_real_proxy_debug_listener_fails() {
        let findings = evaluate(&with_ports(vec![proxy_4_0_0()]));
        let port = get(&findings, "debugPort:9205");
        assert_eq!(port.status, Status::Failed);
        assert_eq!(port.severity, Severity::High);
        assert!(port.detail.contains("(proxy 4.0.0)"), "{}", port.detail);
        assert!(port.detail.contains("/healthz 200 OK"), "{}", port.detail);
        assert!(
            port.detail.contains("/metrics Prometheus text"),
            "{}",
            port.detail
        );
        assert!(port.detail.contains("192.0.2.10:9205"), "{}", port.detail);
        assert!(
            port.detail.contains("X-Proxy-Version: 4.0.0 on /healthz"),
            "{}",
            port.detail
        );

        let config = get(&findings, "debugEndpoint:9205/config");
        assert_eq!(config.status, Status::Failed);
        assert_eq!(config.severity, Severity::Critical);
        assert!(
            config
                .detail
                .contains("ServiceAccount.ServiceAccountSecret"),
            "{}",
            config.detail
        );
        // URLSigningSecret is in clear text in the capture too.
        assert!(
            config.detail.contains("Commons.URLSigningSecret"),
            "{}",
            config.detail
        );
        assert!(
            !config.detail.contains("JWTSecret"),
            "masked: {}",
            config.detail
        );
        assert!(
            !config.detail.contains("TLSKey"),
            "a file path: {}",
            config.detail
        );
        // Never the values themselves.
        assert!(!config.detail.contains("REDACTED"), "{}", config.detail);
        assert!(!config.detail.contains("e@YVL"), "{}", config.detail);

        let metrics = get(&findings, "debugEndpoint:9205/metrics");
        assert_eq!(metrics.status, Status::Failed);
        assert_eq!(metrics.severity, Severity::Medium);

        let pprof = get(&findings, "debugEndpoint:9205/debug/pprof/");
        assert_eq!(pprof.status, Status::Passed, "pprof is off: 404");
        assert_eq!(pprof.severity, Severity::High);
        assert!(pprof.detail.contains("answers 404"), "{}", pprof.detail);

        let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "debugPort:9205",
                "debugEndpoint:9205/config",
                "debugEndpoint:9205/metrics",
                "debugEndpoint:9205/debug/pprof/"
            ]
        );
        assert!(findings.iter().all(|f| f.role == Role::Check && f.counts));
    }

    #[test]
    fn a_debug_token_protects_only_metrics() {
        let findings = evaluate(&with_ports(vec![proxy_3_7_0_token_pprof()]));
        assert_eq!(get(&findings, "debugPort:9205").status, Status::Failed);
        let metrics = get(&findings, "debugEndpoint:9205/metrics");
        assert_eq!(metrics.status, Status::Passed);
        assert_eq!(metrics.severity, Severity::Medium);
        assert!(
            metrics.detail.contains("requires authentication (401)"),
            "{}",
            metrics.detail
        );
        // The capture is cut at 1500 bytes and shows masked secrets only.
        let config = get(&findings, "debugEndpoint:9205/config");
        assert_eq!(config.status, Status::Failed);
        assert_eq!(config.severity, Severity::High);
        assert!(
            config.detail.contains("in the part that could be read"),
            "{}",
            config.detail
        );
        let pprof = get(&findings, "debugEndpoint:9205/debug/pprof/");
        assert_eq!(pprof.status, Status::Failed);
        assert_eq!(pprof.severity, Severity::High);
    }

    #[test]
    fn the_ocis_proxy_debug_listener_leaks_too() {
        let dir = "ocis-7.0.0/debug";
        let p = port(
            9205,
            PortState::Open,
            vec![
                answer(
                    "/healthz",
                    fixture(&format!("{dir}/proxy-9205-healthz.txt")),
                ),
                answer("/config", fixture(&format!("{dir}/proxy-9205-config.txt"))),
            ],
        );
        let findings = evaluate(&with_ports(vec![p]));
        assert!(
            get(&findings, "debugPort:9205")
                .detail
                .contains("proxy 7.0.0")
        );
        let config = get(&findings, "debugEndpoint:9205/config");
        assert_eq!(config.severity, Severity::Critical);
        assert!(
            config
                .detail
                .contains("ServiceAccount.ServiceAccountSecret")
        );
        assert!(!config.detail.contains("FAKE-cleartext"));
    }

    #[test]
    fn another_service_on_the_port_is_not_a_finding() {
        // The web service's port sends X-Web-Version, but on its HTML page.
        let findings = evaluate(&with_ports(vec![web_port_9100()]));
        let port = get(&findings, "debugPort:9100");
        assert_eq!(port.status, Status::Passed);
        assert!(
            port.detail
                .contains("does not answer like a debug listener (another service may use it)"),
            "{}",
            port.detail
        );
        for path in JUDGED_PATHS {
            let f = get(&findings, &format!("debugEndpoint:9100{path}"));
            assert_eq!(f.status, Status::Passed, "{}", f.detail);
        }
    }

    #[test]
    fn a_port_that_speaks_no_http_passes_and_a_silent_one_is_network_limited() {
        let garbage = port(
            9234,
            PortState::Open,
            crate::probe::debug_ports::DEBUG_PATHS
                .iter()
                .map(|p| failure(p, "invalid HTTP status line", false))
                .collect(),
        );
        let silent = port(
            9239,
            PortState::Open,
            crate::probe::debug_ports::DEBUG_PATHS
                .iter()
                .map(|p| failure(p, "timed out", true))
                .collect(),
        );
        let findings = evaluate(&with_ports(vec![garbage, silent]));
        let f = get(&findings, "debugPort:9234");
        assert_eq!(f.status, Status::Passed);
        assert!(f.detail.contains("does not speak HTTP"), "{}", f.detail);
        assert_eq!(
            get(&findings, "debugEndpoint:9234/config").status,
            Status::Passed
        );
        assert_eq!(
            get(&findings, "debugPort:9239").status,
            Status::NetworkLimited
        );
        assert_eq!(
            get(&findings, "debugEndpoint:9239/config").status,
            Status::NetworkLimited
        );
    }

    #[test]
    fn closed_filtered_and_failed_ports() {
        let mut short = port(9124, PortState::Filtered, Vec::new());
        short.connect_timeout = Duration::from_millis(500);
        let findings = evaluate(&with_ports(vec![
            port(9205, PortState::Closed, Vec::new()),
            port(9141, PortState::Filtered, Vec::new()),
            short,
            port(
                9134,
                PortState::Error("network unreachable".into()),
                Vec::new(),
            ),
        ]));
        // Closed and filtered ports get no endpoint findings: nothing could be asked.
        assert_eq!(findings.len(), 4, "{findings:#?}");
        let closed = get(&findings, "debugPort:9205");
        assert_eq!(closed.status, Status::Passed);
        assert_eq!(closed.detail, "port 9205 refuses connections (closed)");
        let filtered = get(&findings, "debugPort:9141");
        assert_eq!(filtered.status, Status::Passed);
        assert_eq!(filtered.detail, "no answer within 3s (filtered)");
        assert_eq!(
            get(&findings, "debugPort:9124").detail,
            "no answer within 0.5s (filtered)"
        );
        let error = get(&findings, "debugPort:9134");
        assert_eq!(error.status, Status::Indeterminate);
        assert!(error.detail.contains("network unreachable"));
    }

    #[test]
    fn no_probe_no_findings() {
        assert!(evaluate(&measurements()).is_empty());
    }

    fn public(answers: &[(&str, Result<Response, FetchError>)]) -> Measurements {
        let mut m = measurements();
        m.http.insert(
            plan::BASELINE.into(),
            Ok(fixture("opencloud-4.0.0/random-nonexistent-path.txt")),
        );
        for (path, answer) in answers {
            m.http
                .insert(format!("{}{path}", plan::PUBLIC_DEBUG), answer.clone());
        }
        m
    }

    #[test]
    fn the_default_instance_answers_the_web_app_on_public_debug_paths() {
        let m = public(&[
            (
                "/metrics",
                Ok(fixture("opencloud-4.0.0/public-metrics.txt")),
            ),
            ("/config", Ok(fixture("opencloud-4.0.0/public-config.txt"))),
            (
                "/debug/pprof/",
                Ok(fixture("opencloud-4.0.0/public-debug-pprof.txt")),
            ),
        ]);
        let findings = evaluate(&m);
        assert_eq!(findings.len(), 3);
        for f in &findings {
            assert_eq!(f.status, Status::Passed, "{}: {}", f.id, f.detail);
            assert!(
                f.detail.contains("the page every unknown path gets (200)"),
                "{}",
                f.detail
            );
        }
        assert_eq!(
            get(&findings, "debugEndpoint:/metrics").severity,
            Severity::Medium
        );
        assert_eq!(
            get(&findings, "debugEndpoint:/config").severity,
            Severity::High
        );
    }

    #[test]
    fn public_debug_handlers_fail_when_they_differ_from_the_baseline_and_are_real() {
        let m = public(&[
            (
                "/metrics",
                Ok(fixture(&format!("{DEBUG_4}/9205-metrics-head50.txt"))),
            ),
            (
                "/config",
                Ok(fixture(&format!("{DEBUG_4}/9205-config.txt"))),
            ),
            (
                "/debug/pprof/",
                Ok(fixture(&format!(
                    "{VARIANT_37}/9205-debug-pprof-no-token.txt"
                ))),
            ),
        ]);
        let findings = evaluate(&m);
        let metrics = get(&findings, "debugEndpoint:/metrics");
        assert_eq!(
            (metrics.status, metrics.severity),
            (Status::Failed, Severity::Medium)
        );
        assert!(
            metrics
                .detail
                .starts_with("/metrics on the public address answers Prometheus")
        );
        let config = get(&findings, "debugEndpoint:/config");
        assert_eq!(
            (config.status, config.severity),
            (Status::Failed, Severity::Critical)
        );
        let pprof = get(&findings, "debugEndpoint:/debug/pprof/");
        assert_eq!(
            (pprof.status, pprof.severity),
            (Status::Failed, Severity::High)
        );
    }

    #[test]
    fn an_answer_equal_to_the_baseline_is_never_a_finding() {
        // A server that answers Prometheus text for every path: the catch-all, not a leak.
        let metrics = fixture(&format!("{DEBUG_4}/9205-metrics-head50.txt"));
        let mut m = public(&[("/metrics", Ok(metrics.clone()))]);
        m.http.insert(plan::BASELINE.into(), Ok(metrics.clone()));
        let f = &evaluate(&m)[0];
        assert_eq!(f.status, Status::Passed, "{}", f.detail);
        // Same body, other status: not the catch-all; judged by content.
        let mut other = metrics.clone();
        other.status = 404;
        m.http.insert(plan::BASELINE.into(), Ok(other));
        assert_eq!(evaluate(&m)[0].status, Status::Failed);
        // Differs from the baseline but is no debug handler: passed.
        let m = public(&[(
            "/config",
            Ok(fixture(&format!("{DEBUG_4}/9205-debug-pprof.txt"))),
        )]);
        let f = &evaluate(&m)[0];
        assert_eq!(f.status, Status::Passed);
        assert!(f.detail.ends_with("answers 404"), "{}", f.detail);
    }

    #[test]
    fn without_a_baseline_the_content_decides() {
        let mut m = measurements();
        m.http.insert(
            format!("{}/metrics", plan::PUBLIC_DEBUG),
            Ok(fixture("opencloud-4.0.0/public-metrics.txt")),
        );
        m.http.insert(
            format!("{}/config", plan::PUBLIC_DEBUG),
            Ok(fixture(&format!("{DEBUG_4}/9205-config.txt"))),
        );
        let findings = evaluate(&m);
        assert_eq!(
            get(&findings, "debugEndpoint:/metrics").status,
            Status::Passed
        );
        assert_eq!(
            get(&findings, "debugEndpoint:/config").status,
            Status::Failed
        );
    }

    #[test]
    fn public_paths_without_an_answer_are_network_limited() {
        let m = public(&[(
            "/config",
            Err(FetchError::Transient(
                "https://cloud.example/config: timed out".into(),
            )),
        )]);
        let f = &evaluate(&m)[0];
        assert_eq!(f.id, "debugEndpoint:/config");
        assert_eq!(f.status, Status::NetworkLimited);
        assert!(f.detail.contains("timed out"));
    }

    fn config(body: &str) -> Option<ConfigDump> {
        config_dump(&Response {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
            truncated: false,
            digest: None,
        })
    }

    #[test]
    fn the_secret_detector_tells_masked_from_clear() {
        let masked = config(
            r#"{"TokenManager":{"JWTSecret":"************"},"MachineAuthAPIKey":"************",
                "Debug":{"Token":""},"HTTP":{"TLSKey":"/var/lib/x/proxy/server.key"},
                "GRPCServiceTLS":{"Key":""},"Oidc":{"AccessTokenVerifyMethod":"jwt"},
                "ServiceAccount":{"ServiceAccountID":"abc","ServiceAccountSecret":"*****"}}"#,
        )
        .unwrap();
        assert!(masked.leaked.is_empty(), "{:?}", masked.leaked);
        assert!(masked.complete);

        let clear = config(
            r#"{"ServiceAccount":{"ServiceAccountID":"abc","ServiceAccountSecret":"s3cr3t"},
                "Policies":[{"Name":"x","Auth":{"Password":"hunter2"}}],
                "Placeholder":{"ClientSecret":"<REDACTED-BY-CAPTURER: value was present>"}}"#,
        )
        .unwrap();
        assert_eq!(
            clear.leaked,
            [
                "Placeholder.ClientSecret",
                "Policies[0].Auth.Password",
                "ServiceAccount.ServiceAccountSecret"
            ]
        );
    }

    #[test]
    fn cut_documents_are_read_as_far_as_they_go() {
        let dump = config(r#"{"A":{"JWTSecret":"************","ServiceAccountSecret":"abc"},"B":"#)
            .unwrap();
        assert!(!dump.complete);
        assert_eq!(dump.leaked, ["ServiceAccountSecret"]);
        let escaped = string_pairs(r#"{"a\"b":"c\\d","n":1,"k":"v"}"#);
        assert_eq!(
            escaped,
            [
                ("a\"b".to_string(), "c\\d".to_string()),
                ("k".to_string(), "v".to_string())
            ]
        );
    }

    /// How a whole `/config` document was read before it was read as it is parsed: as a tree.
    fn scan_config_as_a_tree(text: &str) -> Result<Option<Vec<String>>, ()> {
        fn clear_secrets(value: &serde_json::Value, path: &str, out: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    for (key, v) in map {
                        let here = if path.is_empty() {
                            key.clone()
                        } else {
                            format!("{path}.{key}")
                        };
                        if let serde_json::Value::String(s) = v
                            && is_secret_name(key)
                            && is_clear_value(s)
                        {
                            out.push(here.clone());
                        }
                        clear_secrets(v, &here, out);
                    }
                }
                serde_json::Value::Array(items) => {
                    for (i, v) in items.iter().enumerate() {
                        clear_secrets(v, &format!("{path}[{i}]"), out);
                    }
                }
                _ => {}
            }
        }
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => {
                if map.is_empty() || map.keys().all(|k| ERROR_KEYS.contains(&k.as_str())) {
                    return Ok(None);
                }
                let mut leaked = Vec::new();
                clear_secrets(&serde_json::Value::Object(map), "", &mut leaked);
                leaked.dedup();
                Ok(Some(leaked))
            }
            Ok(_) => Ok(None),
            Err(_) => Err(()),
        }
    }

    #[test]
    fn config_documents_read_as_parsed_find_what_the_tree_found() {
        let mut texts: Vec<String> = Vec::new();
        for dir in [
            "opencloud-4.0.0/debug",
            "ocis-7.0.0/debug",
            "opencloud-3.7.0-variant",
        ] {
            let path = format!("{}/tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
            for entry in std::fs::read_dir(&path).unwrap() {
                let file = entry.unwrap().file_name().to_string_lossy().into_owned();
                if file.contains("config") {
                    texts.push(fixture(&format!("{dir}/{file}")).text());
                }
            }
        }
        assert!(texts.len() > 20, "{}", texts.len());
        texts.extend(
            [
                r#"{"B": {"Password": "p", "a": [{"Token": "t"}, ["x", {"JWTSecret": "s"}]]},
                    "A": {"APIKey": "k", "PublicKey": "pk", "TLSKey": "/etc/x.key"},
                    "": {"Secret": "empty key"}, "Z": {"Secret": "***"}, "A1": {"Secret": " "}}"#,
                r#"{"a": {"b": {"c": {"Secret": "1"}}, "Secret": "2"}, "a.b": {"Secret": "3"}}"#,
                r#"{"Tokens": ["in a list"], "Token": 5, "Token2": null, "Secret": {"x": "y"}}"#,
                r#"{"error": {"Secret": "s"}, "message": "x"}"#,
                r#"{"Secret": "s"} trailing"#,
                r#"{"Secret": "\u00e9", "k": [1, 2.5, -3, true, null, {}, []]}"#,
                "[1, 2]",
                "{}",
                "\"text\"",
                "{",
            ]
            .iter()
            .map(|t| t.to_string()),
        );
        texts.push(format!("{}{}", "{\"a\":".repeat(200), "}".repeat(200)));
        for text in &texts {
            let text = text.trim_start();
            assert_eq!(scan_config(text), scan_config_as_a_tree(text), "{text}");
        }
        // The real dump's secret is found; its other members are not leaks.
        let real = fixture(&format!("{DEBUG_4}/9205-config.txt")).text();
        let leaked = scan_config(real.trim_start()).unwrap().unwrap();
        assert!(leaked.contains(&"ServiceAccount.ServiceAccountSecret".to_string()));
    }

    #[test]
    fn json_that_is_no_configuration() {
        assert!(config(r#"{"error":{"code":"x","message":"y"}}"#).is_none());
        assert!(config("[1,2]").is_none());
        assert!(config("{}").is_none());
        assert!(config("OK").is_none());
        let mut not_ok = fixture(&format!("{DEBUG_4}/9205-config.txt"));
        not_ok.status = 401;
        assert!(config_dump(&not_ok).is_none());
    }

    #[test]
    fn detectors_on_the_captures() {
        assert!(is_prometheus(&fixture(&format!(
            "{DEBUG_4}/9205-metrics-head50.txt"
        ))));
        assert!(!is_prometheus(&fixture(
            "opencloud-4.0.0/public-metrics.txt"
        )));
        assert!(!is_prometheus(&fixture(&format!(
            "{VARIANT_37}/9205-metrics-no-token.txt"
        ))));
        assert!(is_pprof_index(&fixture(&format!(
            "{VARIANT_37}/9205-debug-pprof-no-token.txt"
        ))));
        assert!(!is_pprof_index(&fixture(&format!(
            "{DEBUG_4}/9205-debug-pprof.txt"
        ))));
        assert!(!is_pprof_index(&fixture(
            "opencloud-4.0.0/public-debug-pprof.txt"
        )));
        assert!(is_ok_body(b"OK"));
        assert!(is_ok_body(b"ok\n"));
        assert!(!is_ok_body(b"<html>OK</html>"));
        assert_eq!(seconds(Duration::from_secs(3)), "3s");
        assert_eq!(seconds(Duration::from_millis(300)), "0.3s");
        assert_eq!(printable("a\nb\x1b[31m"), "a b [31m");
    }
}
