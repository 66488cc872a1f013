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
use crate::checks::{self, CheckSpec, Measure, Unmeasured};
use crate::clock::Now;
use crate::net::http::{ClientOptions, Scheme};
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
        match (spec.member_of(id), spec.members) {
            (None, Some(members)) => self.add_family(spec, members),
            (None, None) => {
                self.measure(spec.verified_by);
                self.push(Requested::Finding(spec.id.to_string()));
            }
            (Some(named), members) => match members.and_then(|m| (m.named)(named)) {
                Some(member) => {
                    self.keys.extend(member.keys);
                    self.every_http_probe |= member.every_answer;
                    self.push(Requested::Finding(format!("{}:{}", spec.id, member.detail)));
                }
                None => self.settle(id, unknown(UNKNOWN_ID)),
            },
        }
    }

    /// A family root: every member, by what the family's check reads. Members known before
    /// measuring are each reported, decided or not; of the others, every finding the family
    /// produces.
    fn add_family(&mut self, spec: &'static CheckSpec, members: checks::Members) {
        self.measure(spec.verified_by);
        match members.listed {
            Some(listed) => {
                for detail in listed() {
                    self.push(Requested::Finding(format!("{}:{detail}", spec.id)));
                }
            }
            None => self.push(Requested::Family(spec.id)),
        }
    }
}

fn unknown(why: impl Into<String>) -> Outcome {
    Outcome::Unknown { why: why.into() }
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

/// An id the checks produced no finding for: what its row says that means.
fn absent(id: &str, m: &Measurements) -> IdOutcome {
    // The selection holds registry ids only.
    let passed = checks::spec(id).and_then(|spec| (spec.when_absent)(spec.member_of(id), m));
    match passed {
        Some(detail) => IdOutcome {
            id: id.to_string(),
            outcome: Outcome::Passes,
            findings: checks::finding_for(id, Status::Passed, detail)
                .into_iter()
                .collect(),
        },
        None => IdOutcome::without_findings(id, unknown(not_measured(id, m))),
    }
}

/// Why the probes produced no finding for an id: the first reason its row gives that applies.
fn not_measured(id: &str, m: &Measurements) -> String {
    let plain_reason = match &m.https {
        HttpsObservation::Unavailable(reason) => Some(reason.as_str()),
        _ => None,
    };
    let reasons = checks::spec(id).map_or(&[][..], |spec| spec.unmeasured);
    let why = reasons.iter().find_map(|reason| match reason {
        Unmeasured::OverPlainHttp
            if plain_reason.is_some() || m.endpoint.scheme == Scheme::Http =>
        {
            Some(format!(
                "the instance was reached over plain HTTP ({}), so HTTPS could not be judged",
                plain_reason.unwrap_or("HTTPS unavailable")
            ))
        }
        Unmeasured::OverPlainHttp => None,
        Unmeasured::NoDebugPort if m.debug_ports.is_none() => Some(
            "no debug port is configured to probe (--no-debug-ports or \
             scanner.check_debug_ports: false); name one, e.g. debugPort:9205"
                .into(),
        ),
        Unmeasured::NoDebugPort => None,
        Unmeasured::Because(why) => Some(why.to_string()),
    });
    let why = why.unwrap_or_else(|| "the probes measuring it produced no answer".into());
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
mod tests;
