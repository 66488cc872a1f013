//! The assessment: from measurements, version knowledge, the operator's rules and the clock to
//! the finished result document: rated, the verdict decided, the policy applied and the
//! baseline compared. No face changes the verdict after it (the plugin records its webhook
//! deliveries, the public API adds the submitter's waivers beside it). Pure: no I/O, the clock
//! is an input.

mod causes;
use causes::causes;
pub mod baseline;
pub mod fingerprint;
pub mod policy;
pub mod rating;
pub mod snippets;
pub mod upgrade;
pub mod waiver_review;
pub mod waivers;

use crate::checks;
use crate::clock::Now;
use crate::knowledge::lifecycle::{self, LineState, TrackChoice};
use crate::knowledge::update::{AnswerSource, UpdateMode, UpdateSource};
use crate::knowledge::{Knowledge, ProductFamily, Track, advisories, parse_version, update};
use crate::net::HttpsObservation;
use crate::probe::Measurements;
use crate::report::{self, Finding, KnowledgeInfo, Role, ScanResult, Status};
use crate::severity::Severity;
use crate::verdict;
use semver::Version;
use waiver_review::counted;

/// The product a scan recognised.
#[derive(Clone, Debug)]
pub struct Identified {
    pub family: ProductFamily,
    pub name: String,
    /// As reported (`4.0.0`, `3.7.0+abc`).
    pub version_text: String,
    pub version: Version,
    pub legacy_version: Option<String>,
    pub edition: Option<String>,
}

/// What the update check learned before the assessment.
#[derive(Clone, Debug, Default)]
pub struct UpdateInputs {
    /// Releases read from the feed (auto and feed modes), when it answered.
    pub feed: Option<Vec<Version>>,
    /// Why the feed was not used although wanted, or (with `cached_at`) why its cached answer
    /// stands in.
    pub feed_error: Option<String>,
    /// The feed failed and the answer it gave an earlier run (cached in the state directory)
    /// stands in: when that answer was fetched.
    pub cached_at: Option<String>,
}

/// The operator's rules the assessment follows (`Settings::assess_rules`): thresholds, the
/// release track, what counts, the update source, the policy, the waivers and the baseline.
#[derive(Clone, Debug)]
pub struct Rules<'a> {
    pub warning: u8,
    pub critical: u8,
    pub check_hardening: bool,
    pub release_track: TrackChoice,
    pub eol_warning: Option<i64>,
    pub waiver_warning: Option<i64>,
    pub extra_checks_rating: bool,
    pub insecure: bool,
    pub use_release_schedule: bool,
    pub update_source: UpdateSource,
    pub update_warning: bool,
    pub tls_min_days: i64,
    pub policy: Option<&'a policy::Policy>,
    pub waivers: &'a [waivers::Waiver],
    /// `--baseline`: the file as the run loaded it before its scans (the run saves it after).
    pub baseline: Option<&'a baseline::Baseline>,
    pub warn_on_new: bool,
}

pub struct Input<'a> {
    pub host: String,
    pub measurements: &'a Measurements,
    pub product: Identified,
    pub knowledge: &'a Knowledge,
    pub update: UpdateInputs,
    pub rules: &'a Rules<'a>,
    pub now: Now,
    pub duration_seconds: f64,
}

/// The finished result document of one successfully measured host, in named stages: what
/// the knowledge says of the release, every finding, the rating, the verdict, the document.
pub fn assess(input: Input) -> ScanResult {
    let standing = version_standing(&input);
    let mut findings = all_findings(&input, &standing);
    let installed = &input.product.version;
    let rated = rate(input.rules, &standing, installed, &mut findings, input.now);
    let verdict = judge(&input, &standing, &findings, &rated);
    let mut result = document(&input, standing, findings, rated, verdict.state);
    result.set_causes(verdict.causes);
    finish(result, input.rules)
}

/// What the knowledge says of the installed release: its line's life (from the release
/// schedule, unless the operator turned it off), the update check on its track, and the
/// advisories that match it.
struct Standing<'k> {
    schedule: Option<&'k crate::knowledge::releases::ReleaseSchedule>,
    life: Option<lifecycle::Lifecycle>,
    end_of_life: bool,
    update: report::UpdateCheck,
    /// The release the update check recommends.
    recommended: Option<Version>,
    /// Where the update check established nothing (off, or a feed that failed in feed
    /// mode), the newer release the schedule lists: the rating and the message follow what
    /// is known, never a claim of "up to date".
    known_without_check: Option<Version>,
    matched: Vec<&'k advisories::Advisory>,
    vulnerabilities: Vec<report::Vulnerability>,
}

fn version_standing<'k>(input: &Input<'k>) -> Standing<'k> {
    let (rules, knowledge, product) = (input.rules, input.knowledge, &input.product);
    let installed = &product.version;
    let schedule = knowledge
        .schedule
        .as_ref()
        .filter(|_| rules.use_release_schedule);
    let life = schedule.map(|schedule| {
        lifecycle::assess(
            schedule,
            installed,
            rules.release_track,
            input.now.today(),
            rules.eol_warning,
        )
    });
    let end_of_life = life
        .as_ref()
        .is_some_and(|l| l.state == LineState::EndOfLife);

    // The update check on the instance's track.
    let track = life
        .as_ref()
        .and_then(|l| l.track)
        .or(rules.release_track.fixed());
    let schedule_target = life.as_ref().and_then(|l| l.upgrade_target.clone());
    let schedule_newest = knowledge
        .schedule
        .as_ref()
        .and_then(|s| s.newest_overall().cloned());
    let mut update = update_check(
        rules,
        installed,
        &product.version_text,
        track,
        schedule_target.as_ref(),
        schedule_newest.as_ref(),
        &input.update,
    );
    let recommended = update.recommended.as_deref().and_then(parse_version);
    let known_without_check = match update.update_available {
        Some(_) => None,
        None => update::recommend(
            installed,
            schedule_target.as_ref(),
            track == Some(Track::Rolling),
            &[],
        ),
    };

    let matched = advisories::matching(&knowledge.advisories, installed);
    if !matched.is_empty() {
        update.upgrade_path_complete = Some(
            recommended
                .as_ref()
                .is_some_and(|r| advisories::matching(&knowledge.advisories, r).is_empty()),
        );
    }
    let vulnerabilities = matched
        .iter()
        .map(|a| vulnerability(a, installed))
        .collect();
    Standing {
        schedule,
        life,
        end_of_life,
        update,
        recommended,
        known_without_check,
        matched,
        vulnerabilities,
    }
}

/// Every finding: the checks' from the measurements, then the version's standing (end of
/// life, each advisory), in the words of the product's family.
fn all_findings(input: &Input, standing: &Standing) -> Vec<Finding> {
    let rules = input.rules;
    let ctx = checks::Context {
        now: input.now.0,
        tls_min_days: rules.tls_min_days,
        insecure: rules.insecure,
        // A policy that requires measures has them evaluated, without the --check-hardening
        // rule that turns OK into WARNING.
        check_hardening: rules.check_hardening
            || rules.policy.as_ref().is_some_and(|p| p.needs_hardening()),
        extra_checks_rating: rules.extra_checks_rating,
        waived: rules.waivers.iter().map(|w| w.pattern.clone()).collect(),
    };
    let mut findings = checks::evaluate(input.measurements, &ctx);
    if let Some(l) = &standing.life {
        let line = line_name(l);
        let detail = match l.state {
            LineState::EndOfLife => format!(
                "release line {line} ({}) reached end of life on {}",
                track_name(l.track),
                l.support_end.map(|d| d.to_string()).unwrap_or_default()
            ),
            LineState::Unknown if l.latest_in_line.is_some() => format!(
                "release line {line} ({}): support end unknown, its successor was released on a \
                 day not documented",
                track_name(l.track)
            ),
            LineState::Unknown => format!("release line {line} is not in the release schedule"),
            _ => format!("release line {line} ({}) is supported", track_name(l.track)),
        };
        let status = match l.state {
            LineState::EndOfLife => Status::Failed,
            LineState::Unknown => Status::Indeterminate,
            _ => Status::Passed,
        };
        findings.push(checks::finding(&checks::EOL, status, detail));
    }
    for (advisory, vuln) in standing.matched.iter().zip(&standing.vulnerabilities) {
        let mut f = checks::finding(
            &checks::VULNERABILITY.member(&advisory.id),
            Status::Failed,
            format!("{}: {}", advisory.id, advisory.summary),
        );
        if let Some(sev) = advisory.severity {
            f.severity = sev;
        }
        if let Some(fixed) = &vuln.fixed_in {
            f.remediation = format!("Upgrade to {fixed} or later.");
        }
        findings.push(f);
    }

    // The checks' advice is written for OpenCloud; the family's own settings and docs replace it.
    let family = input.product.family;
    for f in &mut findings {
        if let Some(advice) = checks::spec(&f.id).and_then(|c| c.advice_for(family)) {
            f.remediation = advice.to_string();
        }
        if let Some(link) = &f.documentation {
            f.documentation = Some(family.describe().documentation_for(link));
        }
    }
    findings
}

/// The rating: the waivers applied, the version's standing as the start, the failed checks'
/// caps, and why checks were left out of it.
struct Rated {
    waived: waivers::Applied,
    start: u8,
    start_reason: String,
    rating: u8,
    limits: Vec<report::RatingLimit>,
    notes: Vec<String>,
}

fn rate(
    rules: &Rules,
    standing: &Standing,
    installed: &Version,
    findings: &mut [Finding],
    now: Now,
) -> Rated {
    let waived = waivers::apply(rules.waivers, findings, now.0);
    let version = rating::VersionStanding {
        end_of_life: standing.end_of_life,
        advisories: standing.matched.iter().map(|a| a.severity).collect(),
        installed: Some(installed.clone()),
        recommended: standing
            .recommended
            .clone()
            .or_else(|| standing.known_without_check.clone()),
    };
    let (start, start_reason) = rating::starting_rating(&version);
    let (rating, limits) = rating::apply_caps(start, findings);
    for f in findings
        .iter_mut()
        .filter(|f| f.role == Role::Version && f.status == Status::Failed)
    {
        f.decisive = start == rating;
    }
    let mut notes = Vec::new();
    if rules.insecure
        && findings
            .iter()
            .any(|f| f.id == checks::transport::TLS_TRUSTED.id && f.status == Status::Failed)
    {
        notes.push(
            "--insecure: the untrusted certificate chain is listed but does not count".into(),
        );
    }
    if !rules.extra_checks_rating {
        notes.push(
            "scanner.extra_checks_rating is false: failed checks do not cap the rating".into(),
        );
    }
    Rated {
        waived,
        start,
        start_reason,
        rating,
        limits,
        notes,
    }
}

/// The monitoring state and what made it, by the verdict's rules.
struct Judged {
    state: report::State,
    causes: Vec<report::Cause>,
}

fn judge(input: &Input, standing: &Standing, findings: &[Finding], rated: &Rated) -> Judged {
    let rules = input.rules;
    let missing_hardening = findings
        .iter()
        .filter(|f| f.role == Role::Hardening && f.status == Status::Failed && !f.ignored)
        .count();
    let inputs = verdict::Inputs {
        rating: Some(rated.rating),
        warning: rules.warning,
        critical: rules.critical,
        vulnerabilities: standing.vulnerabilities.len(),
        end_of_life: standing.end_of_life,
        check_hardening: rules.check_hardening,
        missing_hardening,
        update_warning: rules.update_warning,
        update_available: standing.update.update_available == Some(true),
        eol_warning: rules.eol_warning,
        support_days_left: standing.life.as_ref().and_then(|l| l.support_days_left),
        waiver_warning: rules.waiver_warning,
        waiver_days_left: rated.waived.waiver_days_left,
    };
    Judged {
        state: verdict::decide(&inputs),
        causes: causes(
            &input.product,
            standing.life.as_ref(),
            &standing.vulnerabilities,
            findings,
            &standing.update,
            standing.known_without_check.as_ref(),
            &inputs,
        ),
    }
}

/// The result document of the stages.
fn document(
    input: &Input,
    standing: Standing,
    findings: Vec<Finding>,
    rated: Rated,
    state: report::State,
) -> ScanResult {
    let (rules, knowledge, product, m, now) = (
        input.rules,
        input.knowledge,
        &input.product,
        input.measurements,
        input.now,
    );
    let installed = &product.version;
    let schedule_updated = knowledge.schedule.as_ref().map(|s| s.updated);
    let life = standing.life.as_ref();
    let lifecycle_report = life.map(|l| report::Lifecycle {
        line: line_name(l),
        track: l.track,
        track_detected: l.track_detected,
        track_note: match rules.release_track {
            TrackChoice::Fixed(asked) if !product.family.describe().offers(asked) => Some(format!(
                "{} publishes no {asked} track; {}",
                product.family.display_name(),
                match l.track {
                    Some(t) => format!("judged on the {t} track"),
                    None => "judged without a track".to_string(),
                }
            )),
            _ => None,
        },
        state: l.state,
        line_opened: l.opened,
        support_end: l.support_end,
        support_days_left: l.support_days_left,
        current_release: l.current_release,
        latest_in_line: l.latest_in_line.as_ref().map(Version::to_string),
        upgrade_target: l.move_to.as_ref().map(|(v, _)| v.to_string()),
        upgrade_target_track: l.move_to.as_ref().map(|(_, t)| *t),
        schedule_updated,
        schedule_stale: l.schedule_stale,
    });

    // Filtered debug ports pass (nothing answers from here) but are a network limit.
    let filtered_ports = m
        .debug_ports
        .iter()
        .flatten()
        .filter(|p| p.state == crate::probe::debug_ports::PortState::Filtered)
        .count();
    let coverage = report::Coverage::of(&findings).limited_by_network(filtered_ports);
    let tls = tls_report(m, now);
    let plan = remediation_plan(
        &findings,
        &standing.update,
        standing.end_of_life,
        &snippets::Subject {
            family: product.family,
            host: &input.host,
            certificate_issuer: tls.certificate_issuer.as_deref(),
        },
    );
    let scan_conditions = conditions(rules, knowledge, &standing.update);
    let upgrade_options = upgrade::rehearse(&upgrade::Rehearsal {
        installed,
        schedule: standing.schedule,
        advisories: &knowledge.advisories,
        track_choice: rules.release_track,
        today: now.today(),
        life,
        recommended: standing.recommended.as_ref(),
        findings: &findings,
    });
    ScanResult {
        host: input.host.clone(),
        url: Some(m.endpoint.base_url()),
        scanned_at: now.whole_second(),
        duration_seconds: input.duration_seconds,
        state,
        rating: Some(rated.rating),
        grade: report::grade(Some(rated.rating)).into(),
        product: Some(report::Product {
            family: product.family,
            name: product.name.clone(),
            version: product.version_text.clone(),
            legacy_version: product.legacy_version.clone(),
            edition: product.edition.clone(),
        }),
        lifecycle: lifecycle_report,
        update: Some(standing.update),
        upgrade_options,
        tls: Some(tls),
        vulnerabilities: standing.vulnerabilities,
        findings,
        check_hardening: rules.check_hardening,
        extra_checks: m.extra_checks,
        rating_explanation: report::RatingExplanation {
            starting_rating: Some(rated.start),
            starting_reason: rated.start_reason,
            limits: rated.limits,
            final_rating: Some(rated.rating),
            final_grade: report::grade(Some(rated.rating)).into(),
            warning_threshold: rules.warning,
            critical_threshold: rules.critical,
            notes: rated.notes,
        },
        remediation_plan: plan,
        waiver_days_left: rated.waived.waiver_days_left,
        waivers: rated.waived.reports,
        coverage: Some(coverage),
        configuration_fingerprint: Some(fingerprint::of(m)),
        knowledge: KnowledgeInfo {
            advisories_updated: knowledge.advisories_updated,
            schedule_updated,
            advisory_sources: knowledge.advisory_sources.clone(),
            notes: knowledge.notes.clone(),
        },
        conditions: Some(scan_conditions),
        ..ScanResult::default()
    }
}

/// The finished result document of a host that could not be measured or recognised: UNKNOWN,
/// rating unknown, `message` saying why.
pub fn failed(
    rules: &Rules,
    host: String,
    message: String,
    attempts: u32,
    now: Now,
    duration_seconds: f64,
) -> ScanResult {
    let result = ScanResult::failed(
        host,
        message,
        attempts,
        now.whole_second(),
        duration_seconds,
        rules.check_hardening,
        rules.warning,
        rules.critical,
    );
    finish(result, rules)
}

/// The rules that judge the assessed document last, in this order: the policy (which only
/// worsens a verdict), then the baseline (which never excuses an unmet policy).
fn finish(mut result: ScanResult, rules: &Rules) -> ScanResult {
    if let Some(policy) = rules.policy {
        policy.judge(&mut result);
    }
    if let Some(baseline) = rules.baseline {
        baseline.judge(&mut result, rules.warn_on_new);
    }
    result
}

/// The release line as the document names it (`4.0`).
pub(crate) fn line_name(l: &lifecycle::Lifecycle) -> String {
    format!("{}.{}", l.line.0, l.line.1)
}

fn track_name(track: Option<Track>) -> &'static str {
    track.map(Track::as_str).unwrap_or("unknown track")
}

/// The conditions of this scan (`conditions`): what a later run compares to tell a change of
/// the instance from a change of knowledge, scanner or rules.
fn conditions(
    rules: &Rules,
    knowledge: &Knowledge,
    update: &report::UpdateCheck,
) -> report::Conditions {
    use sha2::{Digest, Sha256};
    let digest = |text: &str| crate::text::hex(&Sha256::digest(text.as_bytes())[..8]);
    let waivers: Vec<String> = rules
        .waivers
        .iter()
        .map(|w| match w.expires {
            Some(until) => format!("{} until {until}", w.pattern),
            None => w.pattern.clone(),
        })
        .collect();
    // Every setting that moves a verdict, named, in a fixed order.
    let rules = format!(
        "warning={} critical={} check_hardening={} release_track={:?} eol_warning={:?} \
         waiver_warning={:?} extra_checks_rating={} insecure={} use_release_schedule={} \
         update_source={:?} update_warning={} policy={} waivers={}",
        rules.warning,
        rules.critical,
        rules.check_hardening,
        rules.release_track,
        rules.eol_warning,
        rules.waiver_warning,
        rules.extra_checks_rating,
        rules.insecure,
        rules.use_release_schedule,
        rules.update_source,
        rules.update_warning,
        rules.policy.is_some(),
        waivers.join(","),
    );
    let checks: Vec<&str> = checks::registry().map(|c| c.id).collect();
    report::Conditions {
        scanner_version: env!("CARGO_PKG_VERSION").to_string(),
        schedule_updated: knowledge.schedule.as_ref().map(|s| s.updated),
        advisories_updated: knowledge.advisories_updated,
        advisory_sources: knowledge.advisory_sources.clone(),
        release_feed: update.source,
        settings_fingerprint: digest(&rules),
        waivers,
        checks: checks.len(),
        checks_digest: digest(&checks.join(",")),
    }
}

fn vulnerability(a: &advisories::Advisory, installed: &Version) -> report::Vulnerability {
    let affected = a
        .ranges
        .iter()
        .map(|r| {
            let bounds = [
                (">=", &r.introduced),
                ("<", &r.fixed),
                ("<=", &r.last_affected),
            ];
            let parts: Vec<String> = bounds
                .iter()
                .filter_map(|(op, v)| v.as_ref().map(|v| format!("{op}{v}")))
                .collect();
            if parts.is_empty() {
                "all versions".to_string()
            } else {
                parts.join(", ")
            }
        })
        .collect();
    let fixed_in = a
        .fixed_versions()
        .into_iter()
        .filter(|f| f > installed)
        .min()
        .map(|v| v.to_string());
    report::Vulnerability {
        id: a.id.clone(),
        aliases: a.aliases.clone(),
        severity: a.severity,
        summary: a.summary.clone(),
        url: a.url.clone(),
        affected,
        fixed_in,
    }
}

fn update_check(
    rules: &Rules,
    installed: &Version,
    installed_text: &str,
    track: Option<Track>,
    schedule_target: Option<&Version>,
    schedule_newest: Option<&Version>,
    inputs: &UpdateInputs,
) -> report::UpdateCheck {
    let mode = rules.update_source.mode();
    let rolling = track == Some(Track::Rolling);
    // What the release schedule alone says: bundled mode, and auto mode without the feed.
    let bundled = |error| {
        let recommended = update::recommend(installed, schedule_target, rolling, &[]);
        (
            Some(AnswerSource::Bundled),
            recommended,
            schedule_newest.cloned(),
            error,
        )
    };
    let (source, recommended, newest, error) = match &rules.update_source {
        UpdateSource::Off => (None, None, None, None::<String>),
        UpdateSource::Pinned(v) => (
            Some(AnswerSource::Pinned),
            Some(v.clone()),
            Some(v.clone()),
            None,
        ),
        UpdateSource::Bundled => bundled(None),
        UpdateSource::Auto | UpdateSource::Feed => match &inputs.feed {
            Some(feed) => (
                Some(if inputs.cached_at.is_some() {
                    AnswerSource::Cache
                } else {
                    AnswerSource::Feed
                }),
                update::recommend(installed, schedule_target, rolling, feed),
                feed.iter()
                    .max()
                    .into_iter()
                    .chain(schedule_newest)
                    .max()
                    .cloned(),
                inputs
                    .cached_at
                    .as_ref()
                    .map(|at| match &inputs.feed_error {
                        Some(error) => format!("cached answer from {at}, {error}"),
                        None => format!("cached answer from {at}"),
                    }),
            ),
            None if rules.update_source == UpdateSource::Auto => bundled(inputs.feed_error.clone()),
            None => (None, None, None, inputs.feed_error.clone()),
        },
    };
    let update_available = match (&rules.update_source, &recommended) {
        (UpdateSource::Off, _) | (_, None) => None,
        (_, Some(r)) => Some(r > installed),
    };
    report::UpdateCheck {
        mode,
        source,
        installed: installed_text.to_string(),
        recommended: recommended.map(|v| v.to_string()),
        newest: newest.map(|v| v.to_string()),
        update_available,
        error,
        upgrade_path_complete: None,
    }
}

fn tls_report(m: &Measurements, now: Now) -> report::Tls {
    let handshake = m.https.handshake();
    let leaf = handshake.and_then(|h| h.chain.first()).and_then(|der| {
        x509_parser::parse_x509_certificate(der)
            .ok()
            .map(|(_, c)| c)
    });
    report::Tls {
        scheme: m.endpoint.scheme,
        protocol: handshake.map(|h| h.protocol.clone()),
        cipher_suite: handshake
            .map(|h| h.cipher_suite.clone())
            .filter(|s| !s.is_empty()),
        trusted: handshake.map(|h| h.trust.is_ok()),
        trust_error: handshake.and_then(|h| h.trust.clone().err()),
        certificate_subject: leaf.as_ref().map(|c| c.subject().to_string()),
        certificate_issuer: leaf.as_ref().map(|c| c.issuer().to_string()),
        certificate_not_after: leaf
            .as_ref()
            .and_then(|c| jiff::Timestamp::from_second(c.validity().not_after.timestamp()).ok()),
        cert_days_left: handshake.and_then(|h| crate::net::tls::leaf_days_left(&h.chain, now.0)),
        https_error: match &m.https {
            HttpsObservation::Unavailable(reason) => Some(reason.clone()),
            _ => None,
        },
    }
}

fn remediation_plan(
    findings: &[Finding],
    update: &report::UpdateCheck,
    end_of_life: bool,
    subject: &snippets::Subject,
) -> report::RemediationPlan {
    let mut steps = Vec::new();
    let version_ids: Vec<String> = findings
        .iter()
        .filter(|f| f.role == Role::Version && f.status == Status::Failed)
        .map(|f| f.id.clone())
        .collect();
    if !version_ids.is_empty() || update.update_available == Some(true) {
        let target = update
            .recommended
            .clone()
            .unwrap_or_else(|| "a supported release".into());
        steps.push(report::RemediationStep {
            action: if end_of_life {
                format!("Upgrade to {target}: the running release line receives no security fixes.")
            } else {
                format!("Upgrade to {target}.")
            },
            resolves: version_ids,
            fixed_in: checks::INSTANCE,
            ..Default::default()
        });
    }
    // Then the failed checks, most severe first, then missing hardening. Findings fixed by the
    // same change (one remediation sentence) share one step.
    let mut open: Vec<&Finding> = findings
        .iter()
        .filter(|f| {
            matches!(f.role, Role::Check | Role::Hardening)
                && f.status == Status::Failed
                && !f.ignored
        })
        .collect();
    open.sort_by_key(|f| (f.role == Role::Hardening, std::cmp::Reverse(f.severity)));
    let first_fixed = steps.len();
    for f in &open {
        match steps[first_fixed..]
            .iter_mut()
            .find(|s| s.action == f.remediation)
        {
            Some(step) => step.resolves.push(f.id.clone()),
            None => steps.push(report::RemediationStep {
                action: f.remediation.clone(),
                resolves: vec![f.id.clone()],
                fixed_in: f.fixed_in,
                ..Default::default()
            }),
        }
    }
    // Each step's change in the syntax of the file it goes into; then every step's, one
    // snippet per file.
    for (i, step) in steps.iter_mut().enumerate() {
        step.order = i + 1;
        step.snippets = snippets::for_findings(&step.resolves, subject);
    }
    let all: Vec<&String> = steps.iter().flat_map(|s| &s.resolves).collect();
    let merged = snippets::for_findings(&all, subject);
    let mut groups: Vec<report::RemediationGroup> = Vec::new();
    for step in &steps {
        match groups.iter_mut().find(|g| g.system == step.fixed_in) {
            Some(g) => g.findings.extend(step.resolves.iter().cloned()),
            None => groups.push(report::RemediationGroup {
                system: step.fixed_in,
                findings: step.resolves.clone(),
            }),
        }
    }
    let group_summary = steps
        .iter()
        .filter(|s| s.resolves.len() > 1)
        .map(|s| format!("{} resolves {}", s.action, s.resolves.join(", ")))
        .collect();
    report::RemediationPlan {
        steps,
        groups,
        group_summary,
        snippets: merged,
    }
}

#[cfg(test)]
mod tests;
