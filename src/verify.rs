//! `--verify-remediation`: run only the probes that measure the named finding ids and report
//! whether they pass now.
//!
//! After a fix an operator wants to know whether that one finding is gone, without a full scan
//! (and without its rating, baseline update or webhook). [`plan`] turns the ids into the probes
//! that measure them: what each check's registry row says it reads (`CheckSpec::verified_by`),
//! so a verification rests on the same measurements as the full scan's verdict (a family root
//! such as `exposed` stands for every member); [`verify`]
//! runs those probes, and only those, after the transport selection and the status document
//! that every scan needs; the registry's checks then judge the measurements, waivers not
//! applied. [`exit_state`] and [`render_text`] turn the outcome into a monitoring result:
//!
//! | Result | State |
//! |---|---|
//! | every id passes | OK |
//! | one still fails | WARNING, or CRITICAL when that check is high or critical |
//! | one can only be settled by a full scan (or could not be decided) | UNKNOWN |
//!
//! Several outcomes combine by monitoring priority (CRITICAL > WARNING > UNKNOWN > OK): a
//! definite failure is reported even when another id needs a full scan.
//!
//! Not verifiable: `eol`, `vulnerability:...`, `httpsAvailable`, the address-parity checks,
//! every other registry row that declares nothing it reads (`verified_by: &[]`), and ids the
//! registry does not know.

use crate::budget::{Attempt, Budget, GaveUp};
use crate::checks::{self, CheckSpec, Measure};
use crate::clock::Now;
use crate::net::http::{ClientOptions, Scheme, canonical_header_name};
use crate::net::proxy::Proxy;
use crate::net::{self, HttpsObservation, tls};
use crate::output::Format;
use crate::probe::{self, Measurements, ProbeFailure, plan};
use crate::report::{Finding, State, Status};
use crate::scanner;
use crate::severity::Severity;
use crate::target::Target;
use crate::text::monitoring_line;
use serde::Serialize;
use std::collections::BTreeSet;

/// Why an id that no probe run can settle ends UNKNOWN.
pub const NEEDS_FULL_SCAN: &str = "can only be settled by a full scan";
/// Why an id the registry does not know ends UNKNOWN.
pub const UNKNOWN_ID: &str = "unknown finding id; see docs/checks.md";

/// The measurement document of one verification: `--format json` prints it.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    pub host: String,
    /// The address the probes went to, once the transport was chosen.
    pub url: Option<String>,
    pub checked_at: String,
    /// Why the instance could not be measured; every id probes would settle is then unknown.
    pub error: Option<String>,
    /// One entry per id, family roots expanded to their members, in the order asked.
    pub results: Vec<IdOutcome>,
}

/// Whether one finding id passes now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    Passes,
    /// Still fails; `severity` is the finding's (a member may differ from its registry row).
    Fails {
        severity: Severity,
    },
    /// No probe run can settle it (`eol`, advisories, ...): only a full scan can.
    NeedsFullScan {
        why: String,
    },
    /// The probes ran but did not decide it (no answer, a skipped precondition), or the id is
    /// not one the registry knows.
    Unknown {
        why: String,
    },
}

/// The outcome of one id with the findings that decided it.
#[derive(Clone, Debug, Serialize)]
pub struct IdOutcome {
    pub id: String,
    #[serde(flatten)]
    pub outcome: Outcome,
    pub findings: Vec<Finding>,
}

impl IdOutcome {
    /// An outcome no finding of this run decided.
    fn without_findings(id: &str, outcome: Outcome) -> IdOutcome {
        IdOutcome {
            id: id.to_string(),
            outcome,
            findings: Vec::new(),
        }
    }
}

/// One id of the selection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requested {
    /// A finding id the selected probes decide (family roots with a fixed set of members are
    /// expanded into these).
    Finding(String),
    /// A family root whose members are only known once measured (`versionDisclosure`,
    /// `debugPort`, `debugEndpoint`): every finding of the family is reported.
    Family(&'static str),
    /// An id settled without probing: it needs a full scan, or the registry does not know it.
    Settled { id: String, outcome: Outcome },
}

/// Which probes measure the requested ids, and what to report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// What to report, in the order asked, without duplicates.
    pub requested: Vec<Requested>,
    /// Probe keys to run: HTTP probes of the plan (`probe::plan`), `debugPort:<port>`,
    /// `probe::LEGACY_TLS`, `probe::PLAIN_HTTP`, `probe::DNS`.
    pub keys: BTreeSet<String>,
    /// Every probe whose key starts with one of these runs (`plan::DEMO`, ...).
    pub prefixes: BTreeSet<&'static str>,
    /// Every HTTP probe of the plan except the sign-in throttling: cookies and version headers
    /// are read from every answer, as a full scan reads them.
    pub every_http_probe: bool,
    /// Every configured debug port (a root of the debug-listener families).
    pub configured_debug_ports: bool,
}

impl Selection {
    pub fn wants(&self, key: &str) -> bool {
        if self.keys.contains(key) || self.prefixes.iter().any(|p| key.starts_with(p)) {
            return true;
        }
        if key.starts_with(probe::DEBUG_PORT) {
            return self.configured_debug_ports;
        }
        self.every_http_probe
            && ![probe::LEGACY_TLS, probe::PLAIN_HTTP, probe::DNS].contains(&key)
            && !key.starts_with(plan::THROTTLE)
    }

    /// Whether any id needs the instance at all (ids settled without probing do not).
    pub fn needs_probes(&self) -> bool {
        self.requested
            .iter()
            .any(|r| !matches!(r, Requested::Settled { .. }))
    }

    /// The debug ports to connect to: those named, plus the configured ones for a root.
    pub fn debug_ports(&self, configured: &[u16]) -> Vec<u16> {
        let named = self
            .keys
            .iter()
            .filter_map(|k| k.strip_prefix(probe::DEBUG_PORT)?.parse().ok());
        let configured = configured.iter().filter(|_| self.configured_debug_ports);
        probe::distinct(named.chain(configured.copied()))
    }

    /// Whether the sign-in throttling probes run (they are sent only for `loginThrottling`).
    pub fn login_throttling(&self) -> bool {
        self.wants(&format!("{}1", plan::THROTTLE))
    }

    fn key(&mut self, key: impl Into<String>) {
        self.keys.insert(key.into());
    }

    /// Runs what a check reads (its registry row's `verified_by`).
    fn measure(&mut self, measures: &[Measure]) {
        for measure in measures {
            match *measure {
                // Every run selects the transport.
                Measure::Transport => {}
                Measure::Probe(key) => self.key(key),
                Measure::Probes(prefix) => {
                    self.prefixes.insert(prefix);
                }
                Measure::Keys(keys) => self.keys.extend(keys()),
                Measure::EveryAnswer => self.every_http_probe = true,
                Measure::DebugPorts => self.configured_debug_ports = true,
            }
        }
    }

    /// The probes a family's members share (the catch-all page every answer is compared to),
    /// for one member of it.
    fn shared_probes(&mut self, spec: &CheckSpec) {
        for measure in spec.verified_by {
            if let Measure::Probe(key) = measure {
                self.key(*key);
            }
        }
    }

    fn push(&mut self, requested: Requested) {
        if !self.requested.contains(&requested) {
            self.requested.push(requested);
        }
    }

    fn settle(&mut self, id: &str, outcome: Outcome) {
        self.push(Requested::Settled {
            id: id.to_string(),
            outcome,
        });
    }

    fn add(&mut self, id: &str) {
        let Some(spec) = checks::spec(id) else {
            return self.settle(id, unknown(UNKNOWN_ID));
        };
        if !spec.verifiable() {
            return self.settle(
                id,
                Outcome::NeedsFullScan {
                    why: NEEDS_FULL_SCAN.into(),
                },
            );
        }
        let member = id.split_once(':').map(|(_, m)| m).filter(|_| id != spec.id);
        match member {
            None if spec.family == Some(spec.id) => self.add_root(spec),
            None => {
                self.measure(spec.verified_by);
                self.push(Requested::Finding(spec.id.to_string()));
            }
            Some(member) => {
                if !self.add_member(spec, member) {
                    self.settle(id, unknown(UNKNOWN_ID));
                }
            }
        }
    }

    /// A family root: every member, by what the family's check reads.
    fn add_root(&mut self, spec: &'static CheckSpec) {
        self.measure(spec.verified_by);
        match spec.id {
            // Members known before measuring: each is reported, decided or not.
            "exposed" => {
                for path in plan::exposed_files() {
                    self.push(Requested::Finding(format!("{}{path}", plan::EXPOSED)));
                }
            }
            "authentication" => {
                for (_, _, _, id) in plan::AUTHENTICATION {
                    self.push(Requested::Finding(id.to_string()));
                }
            }
            // Members known only once measured (`versionDisclosure`, `debugPort`,
            // `debugEndpoint`): every finding of the family is reported.
            root => self.push(Requested::Family(root)),
        }
    }

    /// One member of a family (`exposed:/.env`); false when the family has no such member.
    fn add_member(&mut self, spec: &'static CheckSpec, member: &str) -> bool {
        let id = format!("{}:{member}", spec.id);
        match spec.id {
            "exposed" if plan::exposed_files().contains(&member) => {
                self.shared_probes(spec);
                self.key(id.clone());
            }
            "authentication" => {
                let keys: Vec<&str> = plan::AUTHENTICATION
                    .iter()
                    .filter(|(_, _, _, fid)| *fid == id)
                    .map(|(key, _, _, _)| *key)
                    .collect();
                if keys.is_empty() {
                    return false;
                }
                self.shared_probes(spec);
                for key in keys {
                    self.key(key);
                }
            }
            "debugEndpoint" if plan::PUBLIC_DEBUG_PATHS.contains(&member) => {
                self.shared_probes(spec);
                self.key(id.clone());
            }
            "debugEndpoint" => {
                // `debugEndpoint:<port><path>`: a handler on a debug port.
                let (port, path) = member.split_at(member.find('/').unwrap_or(member.len()));
                match port_number(port) {
                    Some(port) if plan::PUBLIC_DEBUG_PATHS.contains(&path) => {
                        self.key(format!("{}{port}", probe::DEBUG_PORT))
                    }
                    _ => return false,
                }
            }
            "debugPort" => {
                let Some(port) = port_number(member) else {
                    return false;
                };
                let key = format!("{}{port}", probe::DEBUG_PORT);
                self.key(key.clone());
                // `debugPort:09205` is reported as the finding the check produces.
                self.push(Requested::Finding(key));
                return true;
            }
            "versionDisclosure" if is_header_name(member) => {
                self.measure(spec.verified_by);
                self.push(Requested::Finding(format!(
                    "versionDisclosure:{}",
                    canonical_header_name(member)
                )));
                return true;
            }
            _ => return false,
        }
        self.push(Requested::Finding(id));
        true
    }
}

fn unknown(why: impl Into<String>) -> Outcome {
    Outcome::Unknown { why: why.into() }
}

fn port_number(text: &str) -> Option<u16> {
    text.parse::<u16>().ok().filter(|p| *p > 0)
}

/// An HTTP header name (RFC 9110 token characters).
fn is_header_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Which probes measure the ids. Family roots expand to every member; ids that no probe run
/// can settle (and unknown ids) are part of the selection, already settled. `Err` only when
/// no id was given.
pub fn plan(ids: &[String]) -> Result<Selection, String> {
    let ids: Vec<&str> = ids
        .iter()
        .map(|id| id.trim())
        .filter(|id| !id.is_empty())
        .collect();
    if ids.is_empty() {
        return Err(
            "--verify-remediation names no finding id; name one or more ids \
                    (comma-separated) from docs/checks.md"
                .into(),
        );
    }
    let mut selection = Selection::default();
    for id in ids {
        selection.add(id);
    }
    // A member is reported under its family root when the root was asked for too.
    let families: Vec<&'static str> = selection
        .requested
        .iter()
        .filter_map(|r| match r {
            Requested::Family(root) => Some(*root),
            _ => None,
        })
        .collect();
    selection.requested.retain(|r| match r {
        Requested::Finding(id) => !families.iter().any(|root| in_family(id, root)),
        _ => true,
    });
    Ok(selection)
}

fn in_family(id: &str, root: &str) -> bool {
    id == root
        || id
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with(':'))
}

/// The checks' context of a verification: every measure judged (hardening too, since it was
/// asked for), nothing waived.
pub fn context(access: &Access, now: Now) -> checks::Context {
    checks::Context {
        now: now.0,
        tls_min_days: access.tls_min_days,
        insecure: access.config.insecure,
        check_hardening: true,
        extra_checks_rating: true,
        waived: Vec::new(),
    }
}

/// Judges the selection's ids on measurements (pure: the checks of the registry, no waivers).
pub fn judge(selection: &Selection, m: &Measurements, ctx: &checks::Context) -> Vec<IdOutcome> {
    let findings = checks::evaluate(m, ctx);
    let mut results = Vec::new();
    for requested in &selection.requested {
        match requested {
            Requested::Settled { id, outcome } => {
                results.push(IdOutcome::without_findings(id, outcome.clone()))
            }
            Requested::Finding(id) => {
                let matching: Vec<Finding> =
                    findings.iter().filter(|f| f.id == *id).cloned().collect();
                results.push(if matching.is_empty() {
                    absent(id, m)
                } else {
                    decided(id, matching)
                });
            }
            Requested::Family(root) => {
                let family = findings.iter().filter(|f| in_family(&f.id, root));
                let ids = probe::distinct(family.map(|f| f.id.as_str()));
                if ids.is_empty() {
                    let outcome = unknown(not_measured(root, m));
                    results.push(IdOutcome::without_findings(root, outcome));
                }
                for id in ids {
                    let matching = findings.iter().filter(|f| f.id == id).cloned().collect();
                    results.push(decided(id, matching));
                }
            }
        }
    }
    results
}

/// The outcome of the findings one id produced.
fn decided(id: &str, findings: Vec<Finding>) -> IdOutcome {
    let worst_failure = findings
        .iter()
        .filter(|f| f.status == Status::Failed)
        .map(|f| f.severity)
        .max();
    let outcome = match worst_failure {
        Some(severity) => Outcome::Fails { severity },
        None => match findings.iter().find(|f| f.status != Status::Passed) {
            None => Outcome::Passes,
            Some(f) => unknown(format!("not decided ({}): {}", f.status.as_str(), f.detail)),
        },
    };
    IdOutcome {
        id: id.to_string(),
        outcome,
        findings,
    }
}

/// Whether any probe got an answer (cookies and version headers are read from all of them).
fn answered(m: &Measurements) -> bool {
    m.root.is_some() || m.http.values().any(Result::is_ok)
}

/// An id the checks produced no finding for: some checks only report what they saw.
fn absent(id: &str, m: &Measurements) -> IdOutcome {
    let passed = |detail: String| IdOutcome {
        id: id.to_string(),
        outcome: Outcome::Passes,
        // The selection holds registry ids only.
        findings: checks::finding_for(id, Status::Passed, detail)
            .into_iter()
            .collect(),
    };
    let over_plain_http = m.endpoint.scheme == Scheme::Http;
    if let Some(header) = id.strip_prefix("versionDisclosure:")
        && answered(m)
    {
        return passed(format!(
            "no answer discloses a version in {header} any more"
        ));
    }
    if id.starts_with("cookie") && !(id == "cookieSecure" && over_plain_http) && answered(m) {
        return passed("no answer sets a cookie".into());
    }
    if let Some(rest) = id.strip_prefix("debugEndpoint:")
        && let Some(split) = rest.find('/')
        && let Ok(port) = rest[..split].parse::<u16>()
        && let Some(probed) = m.debug_ports.iter().flatten().find(|p| p.port == port)
        && probed.state != probe::debug_ports::PortState::Open
    {
        return passed(format!(
            "port {port} is not open, so {} is not reachable there",
            &rest[split..]
        ));
    }
    IdOutcome::without_findings(id, unknown(not_measured(id, m)))
}

/// Why the probes produced no finding for an id.
fn not_measured(id: &str, m: &Measurements) -> String {
    let plain_reason = match &m.https {
        HttpsObservation::Unavailable(reason) => Some(reason.as_str()),
        _ => None,
    };
    let why = match id {
        "tlsTrusted"
        | "tlsCertificate"
        | "tlsProtocol"
        | "tlsDeprecatedProtocol"
        | "httpsEnforced"
        | "cookieSecure"
            if plain_reason.is_some() || m.endpoint.scheme == Scheme::Http =>
        {
            format!(
                "the instance was reached over plain HTTP ({}), so HTTPS could not be judged",
                plain_reason.unwrap_or("HTTPS unavailable")
            )
        }
        "httpsEnforced" => {
            "plain HTTP is probed only on a port of its own, and HTTP and HTTPS share one here"
                .into()
        }
        "caaRecord" => "CAA records are looked up for DNS names only".into(),
        "dnssec" => "DNSSEC is looked up for DNS names only".into(),
        "identityProviderConsistent" => "no OpenID discovery document was served".into(),
        "loginThrottling" => {
            "not tried: the discovery document names no built-in identity provider".into()
        }
        "debugPort" | "debugEndpoint" if m.debug_ports.is_none() => {
            "no debug port is configured to probe (--no-debug-ports or \
             scanner.check_debug_ports: false); name one, e.g. debugPort:9205"
                .into()
        }
        _ => "the probes measuring it produced no answer".into(),
    };
    format!("not measured: {why}")
}

/// Every id unsettled because the instance could not be measured.
fn unmeasured(selection: &Selection, message: &str) -> Vec<IdOutcome> {
    let why = || unknown(format!("not measured: {message}"));
    let outcome = |r: &Requested| match r {
        Requested::Settled { id, outcome } => IdOutcome::without_findings(id, outcome.clone()),
        Requested::Finding(id) => IdOutcome::without_findings(id, why()),
        Requested::Family(root) => IdOutcome::without_findings(root, why()),
    };
    selection.requested.iter().map(outcome).collect()
}

/// How a verification reaches the instance and judges it: the scan's configuration, trust
/// roots, the operator's proxy, the run's time budget, and `--tls-min-days`.
pub struct Access<'a> {
    pub config: &'a scanner::Config,
    pub tls_min_days: i64,
    pub roots: &'a tls::Roots,
    pub proxy: Option<&'a Proxy>,
    pub budget: &'a Budget,
}

/// Measures the selection's probes on one target and judges the ids: no rating, no baseline,
/// no webhook, no waivers. Retries like a scan (`--retries`, `--backoff-factor`).
pub fn verify(target: &Target, ids: &[String], access: &Access, now: Now) -> Verification {
    let mut verification = Verification {
        host: target.display_name(),
        checked_at: now.stamp(),
        ..Verification::default()
    };
    let selection = match plan(ids) {
        Ok(s) => s,
        Err(message) => {
            verification.error = Some(message);
            return verification;
        }
    };
    if !selection.needs_probes() {
        verification.results = unmeasured(&selection, "");
        return verification;
    }
    match measure(target, &selection, access) {
        Ok(m) => {
            verification.url = Some(m.endpoint.base_url());
            verification.results = judge(&selection, &m, &context(access, now));
        }
        Err(message) => {
            let message = format!("cannot scan {}: {message}", verification.host);
            verification.results = unmeasured(&selection, &message);
            verification.error = Some(message);
        }
    }
    verification
}

/// Transport selection, the status document and the selected probes, retried on transient
/// failures as a scan is, within the run's time budget.
fn measure(
    target: &Target,
    selection: &Selection,
    access: &Access,
) -> Result<Measurements, String> {
    let config = access.config;
    let dest = scanner::destination(target, config.target_port);
    let wanted = |key: &str| selection.wants(key);
    let measured = access
        .budget
        .retry(config.retries, config.backoff_factor, |_| {
            let options = ClientOptions {
                timeout: access.budget.step_timeout(config.timeout),
                proxy: config.proxy.clone(),
                pin: None,
                user_agent: crate::program::user_agent(),
            };
            let transport = net::select_transport(
                &dest,
                access.roots,
                tls::Route::via(access.proxy),
                config.insecure,
                options.timeout,
            );
            let client = match transport.client(&options) {
                Ok(c) => c,
                Err(e) => return Attempt::Failed(e),
            };
            let plain_client = selection
                .wants(probe::PLAIN_HTTP)
                .then(|| dest.plain_http_client(&options))
                .flatten();
            let probe_options = probe::Options {
                extra_checks: true,
                deadline: access.budget.deadline_in(config.timeout * 3),
                host: dest.host.clone(),
                debug_ports: selection.debug_ports(&config.debug_ports),
                // The ports asked for, whatever the family.
                debug_ports_of_family: false,
                debug_port_timeout: config.debug_port_timeout,
                request_timeout: options.timeout,
                proxy: access.proxy.cloned(),
                plain_client,
                login_throttling: selection.login_throttling(),
                dns_server: selection
                    .wants(probe::DNS)
                    .then(|| config.dns_server.or_else(net::dns::system_nameserver))
                    .flatten(),
            };
            match probe::measure_selected(&client, transport.https, &probe_options, &wanted) {
                Ok(m) => Attempt::Done(m),
                Err(ProbeFailure::Transient(message)) => Attempt::Transient(message),
                Err(ProbeFailure::Definite(message)) => Attempt::Failed(message),
            }
        });
    measured.map_err(|gave_up| match gave_up {
        GaveUp::Failed(message) | GaveUp::Exhausted { message, .. } => message,
    })
}

/// The state of a verification: OK when every id passes; WARNING when one still fails,
/// CRITICAL when that failure is high or critical; UNKNOWN when one can only be settled by a
/// full scan or was not decided. Combined by monitoring priority.
pub fn exit_state(v: &Verification) -> State {
    if v.results.is_empty() {
        return State::Unknown;
    }
    v.results
        .iter()
        .map(|r| match &r.outcome {
            Outcome::Passes => State::Ok,
            Outcome::Fails { severity } if *severity >= Severity::High => State::Critical,
            Outcome::Fails { .. } => State::Warning,
            Outcome::NeedsFullScan { .. } | Outcome::Unknown { .. } => State::Unknown,
        })
        .fold(State::Ok, State::worst)
}

fn details(r: &IdOutcome) -> String {
    r.findings
        .iter()
        .map(|f| f.detail.as_str())
        .filter(|d| !d.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Monitoring-style output: `<STATE>: <summary>`, then one line per id.
pub fn render_text(v: &Verification) -> String {
    let state = exit_state(v);
    let host = monitoring_line(&v.host);
    let total = v.results.len();
    let passing = v
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Passes)
        .count();
    // `id (severity)`, the most severe first.
    let mut failing: Vec<(Severity, String)> = v
        .results
        .iter()
        .filter_map(|r| match r.outcome {
            Outcome::Fails { severity } => Some((severity, format!("{} ({severity})", r.id))),
            _ => None,
        })
        .collect();
    failing.sort_by_key(|f| std::cmp::Reverse(f.0));
    let unsettled: Vec<String> = v
        .results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::NeedsFullScan { why } | Outcome::Unknown { why } => {
                Some(format!("{} ({why})", r.id))
            }
            _ => None,
        })
        .collect();
    let summary = if total == 0 {
        format!(
            "remediation not verified on {host}: {}",
            v.error.as_deref().unwrap_or("no finding id to verify")
        )
    } else if state == State::Ok {
        let ids: Vec<&str> = v.results.iter().map(|r| r.id.as_str()).collect();
        format!(
            "remediation verified on {host}: {passing} of {total} pass ({})",
            ids.join(", ")
        )
    } else {
        let mut parts = Vec::new();
        if !failing.is_empty() {
            let listed: Vec<String> = failing.into_iter().map(|(_, text)| text).collect();
            parts.push(format!("still failing: {}", listed.join(", ")));
        }
        if !unsettled.is_empty() {
            parts.push(format!("not settled: {}", unsettled.join(", ")));
        }
        parts.push(format!("{passing} of {total} pass"));
        format!("remediation not verified on {host}: {}", parts.join("; "))
    };
    let mut out = format!("{}: {}\n", state.label(), monitoring_line(&summary));
    for r in &v.results {
        let (verdict, why) = match &r.outcome {
            Outcome::Passes => ("passes".to_string(), details(r)),
            Outcome::Fails { severity } => (format!("still fails ({severity})"), details(r)),
            Outcome::NeedsFullScan { why } => ("needs a full scan".to_string(), why.clone()),
            Outcome::Unknown { why } => ("unknown".to_string(), why.clone()),
        };
        let line = if why.is_empty() {
            format!("{}: {verdict}", r.id)
        } else {
            format!("{}: {verdict}: {why}", r.id)
        };
        out.push_str(&monitoring_line(&line));
        out.push('\n');
    }
    out
}

/// `--format json`: the measurement document with its state.
pub fn render_json(v: &Verification) -> String {
    #[derive(Serialize)]
    struct Document<'a> {
        state: State,
        #[serde(flatten)]
        verification: &'a Verification,
    }
    let document = Document {
        state: exit_state(v),
        verification: v,
    };
    serde_json::to_string_pretty(&document).unwrap_or_else(|e| {
        format!("{{\"state\": \"UNKNOWN\", \"error\": \"cannot serialise the result: {e}\"}}")
    }) + "\n"
}

/// The run of `--verify-remediation` on one target: what to print and the exit code.
/// `--format json` prints the measurement document; every other format the text lines.
pub fn run(
    target: &Target,
    ids: &[String],
    access: &Access,
    format: Format,
    now: Now,
) -> (String, i32) {
    let v = verify(target, ids, access, now);
    let stdout = match format {
        Format::Json => render_json(&v),
        _ => render_text(&v),
    };
    (stdout, exit_state(&v).exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::ProductFamily;
    use crate::net::http::Endpoint;
    use crate::net::http::Response;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn selected(list: &[&str]) -> Selection {
        plan(&ids(list)).unwrap()
    }

    fn reported<'a>(selection: &'a Selection) -> Vec<&'a str> {
        let id = |r: &'a Requested| match r {
            Requested::Finding(id) | Requested::Settled { id, .. } => id.as_str(),
            Requested::Family(root) => root,
        };
        selection.requested.iter().map(id).collect()
    }

    fn settled(selection: &Selection, id: &str) -> Option<Outcome> {
        selection.requested.iter().find_map(|r| match r {
            Requested::Settled { id: i, outcome } if i == id => Some(outcome.clone()),
            _ => None,
        })
    }

    #[test]
    fn no_id_is_an_error() {
        assert!(plan(&[]).is_err());
        assert!(plan(&ids(&["", "  "])).is_err());
    }

    #[test]
    fn ids_no_probe_run_settles_need_a_full_scan() {
        let list = [
            "eol",
            "vulnerability:GHSA-xxxx-yyyy-zzzz",
            "vulnerability",
            "httpsAvailable",
            "addressParity",
            "tlsAddressParity",
            "dnsAddresses",
        ];
        let selection = selected(&list);
        for id in list {
            assert_eq!(
                settled(&selection, id),
                Some(Outcome::NeedsFullScan {
                    why: NEEDS_FULL_SCAN.into()
                }),
                "{id}"
            );
        }
        assert!(!selection.needs_probes());
        assert!(selection.keys.is_empty());
    }

    #[test]
    fn unknown_ids_and_unknown_members_are_unknown() {
        let list = [
            "nonsense",
            "traceMethodDisabled:x",
            "exposed:/etc/passwd",
            "authentication:/nowhere",
            "debugPort:http",
            "debugPort:0",
            "debugEndpoint:/healthz",
            "debugEndpoint:9205/nothing",
            "versionDisclosure:not a header",
        ];
        let selection = selected(&list);
        for id in list {
            assert_eq!(
                settled(&selection, id),
                Some(Outcome::Unknown {
                    why: UNKNOWN_ID.into()
                }),
                "{id}"
            );
        }
        assert!(selection.keys.is_empty(), "{:?}", selection.keys);
    }

    #[test]
    fn every_verifiable_row_is_measured_by_some_probe_plan() {
        for row in checks::registry().filter(|c| c.verifiable()) {
            let selection = selected(&[row.id]);
            assert!(
                !selection
                    .requested
                    .iter()
                    .any(|r| matches!(r, Requested::Settled { .. })),
                "{} has no probes in the verification plan",
                row.id
            );
        }
    }

    #[test]
    fn what_the_checks_read_names_probes_of_the_plan() {
        let endpoint = Endpoint {
            scheme: Scheme::Https,
            url_host: "cloud.example".into(),
            port: 443,
            base_path: String::new(),
        };
        let mut http: Vec<String> = plan::independent(true)
            .into_iter()
            .chain(plan::throttling(&endpoint))
            .map(|p| p.key)
            .collect();
        // The sign-ins that follow a discovery document naming the built-in identity provider.
        let discovery = Ok(probe::fixture(
            "opencloud-4.0.0/well-known-openid-configuration.txt",
        ));
        for family in ProductFamily::ALL {
            let dependent = plan::dependent(&endpoint, Some(&discovery), family);
            assert!(!dependent.is_empty());
            http.extend(dependent.into_iter().map(|p| p.key));
        }
        let other = [probe::LEGACY_TLS, probe::PLAIN_HTTP, probe::DNS];
        for row in checks::registry() {
            for measure in row.verified_by {
                match measure {
                    Measure::Probe(key) => assert!(
                        http.iter().any(|k| k == key) || other.contains(key),
                        "{}: no probe has the key {key}",
                        row.id
                    ),
                    Measure::Probes(prefix) => assert!(
                        http.iter().any(|k| k.starts_with(prefix)),
                        "{}: no probe key starts with {prefix}",
                        row.id
                    ),
                    Measure::Keys(keys) => {
                        for key in keys() {
                            assert!(
                                http.contains(&key),
                                "{}: no probe has the key {key}",
                                row.id
                            );
                        }
                    }
                    Measure::Transport | Measure::EveryAnswer | Measure::DebugPorts => {}
                }
            }
        }
    }

    #[test]
    fn trace_runs_the_trace_probe_only() {
        let selection = selected(&["traceMethodDisabled"]);
        assert_eq!(reported(&selection), ["traceMethodDisabled"]);
        assert_eq!(selection.keys, BTreeSet::from([plan::TRACE.to_string()]));
        assert!(selection.wants(plan::TRACE));
        for key in [
            "demo:dennis",
            "basic:dennis",
            "exposed:/.env",
            plan::BASELINE,
            plan::ROOT,
            plan::CAPABILITIES,
            plan::OIDC,
            "debugPort:9205",
            "throttle:1",
            "tlsDeprecatedProtocol",
            "httpsEnforced",
            "dns",
        ] {
            assert!(!selection.wants(key), "{key}");
        }
        assert!(selection.debug_ports(&[9205, 9141]).is_empty());
        assert!(!selection.login_throttling());
    }

    #[test]
    fn a_family_root_rechecks_every_member() {
        let selection = selected(&["exposed"]);
        let expected: Vec<String> = plan::exposed_files()
            .iter()
            .map(|p| format!("exposed:{p}"))
            .collect();
        assert_eq!(reported(&selection), expected);
        for id in &expected {
            assert!(selection.wants(id), "{id}");
        }
        assert!(
            selection.wants(plan::BASELINE),
            "answers are compared to it"
        );
        assert!(!selection.wants("demo:dennis"));

        let selection = selected(&["authentication"]);
        assert_eq!(reported(&selection).len(), 6);
        for (key, _, _, _) in plan::AUTHENTICATION {
            assert!(selection.wants(key), "{key}");
        }

        // Members known only once measured: the family is reported as it is found.
        let selection = selected(&["versionDisclosure", "versionDisclosure:x-web-version"]);
        assert_eq!(
            selection.requested,
            [Requested::Family("versionDisclosure")]
        );
        assert!(selection.every_http_probe);
        assert!(selection.wants("demo:dennis") && selection.wants(plan::TRACE));
        assert!(!selection.wants("throttle:1") && !selection.wants("debugPort:9205"));

        let selection = selected(&["debugPort"]);
        assert_eq!(selection.debug_ports(&[9205, 9141]), [9205, 9141]);
        let selection = selected(&["debugPort:9999", "debugEndpoint:9205/config"]);
        assert_eq!(
            reported(&selection),
            ["debugPort:9999", "debugEndpoint:9205/config"]
        );
        assert_eq!(selection.debug_ports(&[9141]), [9205, 9999]);
    }

    #[test]
    fn members_are_named_as_the_checks_name_them() {
        let selection = selected(&[
            "versionDisclosure:x-WEB-version",
            "exposed:/.env",
            "exposed:/.env",
            "exposed",
        ]);
        assert_eq!(
            reported(&selection)[..2],
            ["versionDisclosure:X-Web-Version", "exposed:/.env"]
        );
        assert_eq!(reported(&selection).len(), 1 + plan::exposed_files().len());
    }

    #[test]
    fn sign_in_checks_need_the_discovery_document() {
        let selection = selected(&["demoUsersDisabled"]);
        assert!(selection.wants(plan::OIDC));
        assert!(
            ProductFamily::all_demo_users()
                .iter()
                .all(|u| selection.wants(&format!("demo:{u}")))
        );
        assert!(!selection.wants("basic:dennis") && !selection.wants(plan::TRACE));
        // A refused credential proves basic auth off only for an account that signs in.
        let selection = selected(&["basicAuthDisabled"]);
        for family in ProductFamily::ALL {
            let first = family.describe().demo_accounts[0].user;
            assert!(selection.wants(plan::OIDC), "{first}");
            assert!(selection.wants(&format!("demo:{first}")), "{first}");
            assert!(selection.wants(&format!("basic:{first}")), "{first}");
        }
        assert!(!selection.wants(plan::TRACE) && !selection.login_throttling());
        // Only the first account's sign-in: the one tried over basic auth.
        assert!(!selection.wants("demo:margaret"));
        let selection = selected(&["loginThrottling"]);
        assert!(selection.login_throttling() && selection.wants("throttle:6"));
    }

    fn outcome(id: &str, outcome: Outcome) -> IdOutcome {
        IdOutcome {
            id: id.into(),
            outcome,
            findings: Vec::new(),
        }
    }

    fn verification(results: Vec<IdOutcome>) -> Verification {
        Verification {
            host: "cloud.example".into(),
            url: None,
            checked_at: "2026-11-22T03:00:00Z".into(),
            error: None,
            results,
        }
    }

    fn fails(severity: Severity) -> Outcome {
        Outcome::Fails { severity }
    }

    #[test]
    fn exit_states_follow_the_table() {
        let pass = || outcome("traceMethodDisabled", Outcome::Passes);
        assert_eq!(exit_state(&verification(vec![pass(), pass()])), State::Ok);
        for (severity, state) in [
            (Severity::Low, State::Warning),
            (Severity::Medium, State::Warning),
            (Severity::High, State::Critical),
            (Severity::Critical, State::Critical),
        ] {
            let v = verification(vec![pass(), outcome("x", fails(severity))]);
            assert_eq!(exit_state(&v), state, "{severity}");
        }
        let full = outcome(
            "eol",
            Outcome::NeedsFullScan {
                why: NEEDS_FULL_SCAN.into(),
            },
        );
        assert_eq!(
            exit_state(&verification(vec![pass(), full.clone()])),
            State::Unknown
        );
        let undecided = outcome("basicAuthDisabled", unknown("not decided"));
        assert_eq!(exit_state(&verification(vec![undecided])), State::Unknown);
        // A definite failure outranks an id only a full scan can settle.
        let v = verification(vec![full.clone(), outcome("x", fails(Severity::Medium))]);
        assert_eq!(exit_state(&v), State::Warning);
        let v = verification(vec![full, outcome("x", fails(Severity::High))]);
        assert_eq!(exit_state(&v), State::Critical);
        assert_eq!(exit_state(&verification(Vec::new())), State::Unknown);
    }

    fn measurements() -> Measurements {
        let mut m = Measurements::empty(
            Endpoint {
                scheme: Scheme::Http,
                url_host: "cloud.example".into(),
                port: 80,
                base_path: String::new(),
            },
            HttpsObservation::Unavailable("connection refused".into()),
        );
        m.root = Some(Response {
            status: 200,
            headers: vec![("X-Web-Version".into(), "4.0.0".into())],
            body: b"<html></html>".to_vec(),
            truncated: false,
            digest: None,
        });
        m
    }

    fn ctx() -> checks::Context {
        checks::Context {
            now: "2026-11-22T03:00:00Z".parse().unwrap(),
            tls_min_days: 14,
            insecure: false,
            check_hardening: true,
            extra_checks_rating: true,
            waived: Vec::new(),
        }
    }

    fn echo(echoed: bool) -> Response {
        Response {
            status: if echoed { 200 } else { 405 },
            headers: vec![("Content-Type".into(), "message/http".into())],
            body: b"TRACE / HTTP/1.1\r\nX-Cos-Trace-Probe: cos-trace-echo\r\n".to_vec(),
            truncated: false,
            digest: None,
        }
    }

    #[test]
    fn judged_by_the_registry_checks() {
        let selection = selected(&[
            "traceMethodDisabled",
            "versionDisclosure:X-Web-Version",
            "versionDisclosure:Server",
            "cookieHttpOnly",
            "demoUsersDisabled",
            "caaRecord",
            "dnssec",
            "eol",
            "nonsense",
        ]);
        let mut m = measurements();
        m.http.insert(plan::TRACE.into(), Ok(echo(true)));
        let results = judge(&selection, &m, &ctx());
        let by_id = |id: &str| results.iter().find(|r| r.id == id).unwrap();
        assert_eq!(
            by_id("traceMethodDisabled").outcome,
            fails(Severity::Medium)
        );
        assert_eq!(
            by_id("versionDisclosure:X-Web-Version").outcome,
            fails(Severity::Low)
        );
        assert_eq!(by_id("versionDisclosure:Server").outcome, Outcome::Passes);
        assert_eq!(by_id("cookieHttpOnly").outcome, Outcome::Passes);
        assert!(matches!(
            &by_id("demoUsersDisabled").outcome,
            Outcome::Unknown { why } if why.contains("skipped")
        ));
        assert!(matches!(
            &by_id("caaRecord").outcome,
            Outcome::Unknown { why } if why.starts_with("not measured")
        ));
        assert!(matches!(
            &by_id("dnssec").outcome,
            Outcome::Unknown { why } if why == "not measured: DNSSEC is looked up for DNS names only"
        ));
        assert_eq!(results.len(), 9);
        // Both DNS checks come from the one DNS probe.
        let dns = selected(&["caaRecord", "dnssec"]);
        assert_eq!(dns.keys, BTreeSet::from([probe::DNS.to_string()]));
        assert!(dns.wants(probe::DNS) && !dns.wants(plan::ROOT));

        m.http.insert(plan::TRACE.into(), Ok(echo(false)));
        let results = judge(&selected(&["traceMethodDisabled"]), &m, &ctx());
        assert_eq!(results[0].outcome, Outcome::Passes);
        assert_eq!(results[0].findings.len(), 1);
    }

    #[test]
    fn a_family_found_by_measuring_reports_each_member() {
        let mut m = measurements();
        m.root
            .as_mut()
            .unwrap()
            .headers
            .push(("Server".into(), "nginx/1.25.3".into()));
        let results = judge(&selected(&["versionDisclosure"]), &m, &ctx());
        let reported: Vec<(&str, &Outcome)> = results
            .iter()
            .map(|r| (r.id.as_str(), &r.outcome))
            .collect();
        assert_eq!(
            reported,
            [
                ("versionDisclosure:Server", &fails(Severity::Low)),
                ("versionDisclosure:X-Web-Version", &fails(Severity::Low)),
            ]
        );
        m.root.as_mut().unwrap().headers.clear();
        let results = judge(&selected(&["versionDisclosure"]), &m, &ctx());
        assert_eq!(results.len(), 1);
        assert_eq!(
            (results[0].id.as_str(), &results[0].outcome),
            ("versionDisclosure", &Outcome::Passes)
        );
        let results = judge(&selected(&["debugPort"]), &m, &ctx());
        assert!(matches!(
            &results[0].outcome,
            Outcome::Unknown { why } if why.contains("--no-debug-ports")
        ));
    }

    #[test]
    fn text_lines_lead_with_the_state() {
        let mut failing = outcome("demoUsersDisabled", fails(Severity::Critical));
        failing.findings.push(
            checks::finding_for(
                "demoUsersDisabled",
                Status::Failed,
                "demo accounts sign in | with their published password",
            )
            .unwrap(),
        );
        let v = verification(vec![
            failing,
            outcome("traceMethodDisabled", Outcome::Passes),
            outcome(
                "eol",
                Outcome::NeedsFullScan {
                    why: NEEDS_FULL_SCAN.into(),
                },
            ),
        ]);
        let text = render_text(&v);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "CRITICAL: remediation not verified on cloud.example: still failing: \
                 demoUsersDisabled (critical); not settled: eol (can only be settled by a full \
                 scan); 1 of 3 pass",
                "demoUsersDisabled: still fails (critical): demo accounts sign in / with their \
                 published password",
                "traceMethodDisabled: passes",
                "eol: needs a full scan: can only be settled by a full scan",
            ]
        );
        let ok = verification(vec![outcome("traceMethodDisabled", Outcome::Passes)]);
        assert!(render_text(&ok).starts_with(
            "OK: remediation verified on cloud.example: 1 of 1 pass (traceMethodDisabled)\n"
        ));
        let json: serde_json::Value = serde_json::from_str(&render_json(&v)).unwrap();
        assert_eq!(json["state"], "CRITICAL");
        assert_eq!(json["results"][0]["outcome"], "fails");
        assert_eq!(json["results"][0]["severity"], "critical");
        assert_eq!(json["results"][2]["outcome"], "needs-full-scan");
        assert_eq!(json["results"][2]["why"], NEEDS_FULL_SCAN);
        assert_eq!(json["checkedAt"], "2026-11-22T03:00:00Z");
    }
}
