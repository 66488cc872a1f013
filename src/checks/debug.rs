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
use crate::report::Category;
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
    category: Category::Exposure,
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
mod tests;
