//! The assessment: from measurements, version knowledge, the operator's rules and the clock to
//! the finished result document: rated, the verdict decided, the policy applied and the
//! baseline compared. No face changes a document after it. Pure: no I/O, the clock is an input.

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
use crate::knowledge::update::{UpdateMode, UpdateSource};
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

/// The finished result document of one successfully measured host.
pub fn assess(input: Input) -> ScanResult {
    let Input {
        host,
        measurements: m,
        product,
        knowledge,
        update,
        rules,
        now,
        duration_seconds,
    } = input;
    let installed = &product.version;

    // Lifecycle from the release schedule.
    let schedule = knowledge
        .schedule
        .as_ref()
        .filter(|_| rules.use_release_schedule);
    let life = schedule.map(|schedule| {
        lifecycle::assess(
            schedule,
            installed,
            rules.release_track,
            now.today(),
            rules.eol_warning,
        )
    });
    let end_of_life = life
        .as_ref()
        .is_some_and(|l| l.state == LineState::EndOfLife);

    // Update check on the instance's track.
    let track = life
        .as_ref()
        .and_then(|l| l.track)
        .or(rules.release_track.fixed());
    let schedule_target = life.as_ref().and_then(|l| l.upgrade_target.clone());
    let schedule_updated = knowledge.schedule.as_ref().map(|s| s.updated.to_string());
    let schedule_newest = knowledge
        .schedule
        .as_ref()
        .and_then(|s| s.newest_overall().cloned());
    let mut update_report = update_check(
        rules,
        installed,
        &product.version_text,
        track,
        schedule_target.as_ref(),
        schedule_newest.as_ref(),
        &update,
    );
    let recommended = update_report.recommended.as_deref().and_then(parse_version);
    // Where the update check established nothing (off, or a feed that failed in feed mode),
    // what the release schedule knows still holds: a newer release it lists is known, and the
    // rating and the message follow what is known, never a claim of "up to date".
    let known_without_check = match update_report.update_available {
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
        update_report.upgrade_path_complete = Some(
            recommended
                .as_ref()
                .is_some_and(|r| advisories::matching(&knowledge.advisories, r).is_empty()),
        );
    }
    let vulnerabilities: Vec<report::Vulnerability> = matched
        .iter()
        .map(|a| vulnerability(a, installed))
        .collect();

    // Findings: checks from measurements, then the version's standing.
    let ctx = checks::Context {
        now: now.0,
        tls_min_days: rules.tls_min_days,
        insecure: rules.insecure,
        // A policy that requires measures has them evaluated, without the --check-hardening
        // rule that turns OK into WARNING.
        check_hardening: rules.check_hardening
            || rules.policy.as_ref().is_some_and(|p| p.needs_hardening()),
        extra_checks_rating: rules.extra_checks_rating,
        waived: rules.waivers.iter().map(|w| w.pattern.clone()).collect(),
    };
    let mut findings = checks::evaluate(m, &ctx);
    if let Some(l) = &life {
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
    for (advisory, vuln) in matched.iter().zip(&vulnerabilities) {
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
    let family = product.family.describe();
    for f in &mut findings {
        if let Some(advice) = checks::spec(&f.id).and_then(|c| c.advice_for(product.family)) {
            f.remediation = advice.to_string();
        }
        if let Some(link) = &f.documentation {
            f.documentation = Some(family.documentation_for(link));
        }
    }

    let waived = waivers::apply(rules.waivers, &mut findings, now.0);

    let standing = rating::VersionStanding {
        end_of_life,
        advisories: matched.iter().map(|a| a.severity).collect(),
        installed: Some(installed.clone()),
        recommended: recommended.clone().or_else(|| known_without_check.clone()),
    };
    let (start, start_reason) = rating::starting_rating(&standing);
    let (final_rating, limits) = rating::apply_caps(start, &mut findings);
    for f in findings
        .iter_mut()
        .filter(|f| f.role == Role::Version && f.status == Status::Failed)
    {
        f.decisive = start == final_rating;
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

    let missing_hardening = findings
        .iter()
        .filter(|f| f.role == Role::Hardening && f.status == Status::Failed && !f.ignored)
        .count();
    let inputs = verdict::Inputs {
        rating: Some(final_rating),
        warning: rules.warning,
        critical: rules.critical,
        vulnerabilities: vulnerabilities.len(),
        end_of_life,
        check_hardening: rules.check_hardening,
        missing_hardening,
        update_warning: rules.update_warning,
        update_available: update_report.update_available == Some(true),
        eol_warning: rules.eol_warning,
        support_days_left: life.as_ref().and_then(|l| l.support_days_left),
        waiver_warning: rules.waiver_warning,
        waiver_days_left: waived.waiver_days_left,
    };
    let state = verdict::decide(&inputs);
    let causes = causes(
        &product,
        life.as_ref(),
        &vulnerabilities,
        &findings,
        &update_report,
        known_without_check.as_ref(),
        &inputs,
    );

    let lifecycle_report = life.as_ref().map(|l| report::Lifecycle {
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
        line_opened: l.opened.map(|d| d.to_string()),
        support_end: l.support_end.map(|d| d.to_string()),
        support_days_left: l.support_days_left,
        current_release: l.current_release,
        latest_in_line: l.latest_in_line.as_ref().map(Version::to_string),
        upgrade_target: l.move_to.as_ref().map(|(v, _)| v.to_string()),
        upgrade_target_track: l.move_to.as_ref().map(|(_, t)| *t),
        schedule_updated: schedule_updated.clone().unwrap_or_default(),
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
        &update_report,
        end_of_life,
        &snippets::Subject {
            family: product.family,
            host: &host,
            certificate_issuer: tls.certificate_issuer.as_deref(),
        },
    );
    let scan_conditions = conditions(rules, knowledge, &update_report);
    let upgrade_options = upgrade::rehearse(&upgrade::Rehearsal {
        installed,
        schedule,
        advisories: &knowledge.advisories,
        track_choice: rules.release_track,
        today: now.today(),
        life: life.as_ref(),
        recommended: recommended.as_ref(),
        findings: &findings,
    });
    let mut result = ScanResult {
        host,
        url: Some(m.endpoint.base_url()),
        scanned_at: now.stamp(),
        duration_seconds,
        state,
        rating: Some(final_rating),
        grade: report::grade(Some(final_rating)).into(),
        product: Some(report::Product {
            family: product.family,
            name: product.name.clone(),
            version: product.version_text.clone(),
            legacy_version: product.legacy_version.clone(),
            edition: product.edition.clone(),
        }),
        lifecycle: lifecycle_report,
        update: Some(update_report),
        upgrade_options,
        tls: Some(tls),
        vulnerabilities,
        findings,
        check_hardening: rules.check_hardening,
        extra_checks: m.extra_checks,
        rating_explanation: report::RatingExplanation {
            starting_rating: Some(start),
            starting_reason: start_reason,
            limits,
            final_rating: Some(final_rating),
            final_grade: report::grade(Some(final_rating)).into(),
            warning_threshold: rules.warning,
            critical_threshold: rules.critical,
            notes,
        },
        remediation_plan: plan,
        waiver_days_left: waived.waiver_days_left,
        waivers: waived.reports,
        coverage: Some(coverage),
        configuration_fingerprint: Some(fingerprint::of(m)),
        knowledge: KnowledgeInfo {
            advisories_updated: knowledge.advisories_updated.map(|d| d.to_string()),
            schedule_updated,
            advisory_sources: knowledge.advisory_sources.clone(),
            notes: knowledge.notes.clone(),
        },
        conditions: Some(scan_conditions),
        ..ScanResult::default()
    };
    result.set_causes(causes);
    finish(result, rules)
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
        now.stamp(),
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
        schedule_updated: knowledge.schedule.as_ref().map(|s| s.updated.to_string()),
        advisories_updated: knowledge.advisories_updated.map(|d| d.to_string()),
        advisory_sources: knowledge.advisory_sources.clone(),
        release_feed: update.source.clone(),
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
            Some("bundled"),
            recommended,
            schedule_newest.cloned(),
            error,
        )
    };
    let (source, recommended, newest, error) = match &rules.update_source {
        UpdateSource::Off => (None, None, None, None::<String>),
        UpdateSource::Pinned(v) => (Some("pinned"), Some(v.clone()), Some(v.clone()), None),
        UpdateSource::Bundled => bundled(None),
        UpdateSource::Auto | UpdateSource::Feed => match &inputs.feed {
            Some(feed) => (
                Some(if inputs.cached_at.is_some() {
                    "cache"
                } else {
                    "feed"
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
        source: source.map(String::from),
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
        scheme: m.endpoint.scheme.as_str().to_string(),
        protocol: handshake.map(|h| h.protocol.clone()),
        cipher_suite: handshake
            .map(|h| h.cipher_suite.clone())
            .filter(|s| !s.is_empty()),
        trusted: handshake.map(|h| h.trust.is_ok()),
        trust_error: handshake.and_then(|h| h.trust.clone().err()),
        certificate_subject: leaf.as_ref().map(|c| c.subject().to_string()),
        certificate_issuer: leaf.as_ref().map(|c| c.issuer().to_string()),
        certificate_not_after: leaf.as_ref().and_then(|c| {
            jiff::Timestamp::from_second(c.validity().not_after.timestamp())
                .ok()
                .map(|t| t.to_string())
        }),
        cert_days_left: handshake.and_then(|h| crate::net::tls::leaf_days_left(&h.chain, now.0)),
        https_error: match &m.https {
            HttpsObservation::Unavailable(reason) => Some(reason.clone()),
            _ => None,
        },
    }
}

/// What made the state, most urgent first (line 1 of the output is made from them).
/// `known_without_check`: where the update check established nothing, the newest release the
/// release schedule lists for the instance.
fn causes(
    product: &Identified,
    life: Option<&lifecycle::Lifecycle>,
    vulnerabilities: &[report::Vulnerability],
    findings: &[Finding],
    update: &report::UpdateCheck,
    known_without_check: Option<&Version>,
    inputs: &verdict::Inputs,
) -> Vec<report::Cause> {
    let mut reasons: Vec<report::Cause> = Vec::new();
    let installed = format!("{} {}", product.name, product.version_text);
    // Where to go, and on which track, so nobody is told to plan an upgrade to what they run.
    let upgrade_to = life
        .and_then(|l| l.move_to.as_ref())
        .map(|(v, t)| format!("{v} ({} track)", t.as_str()))
        .or_else(|| update.recommended.clone())
        .unwrap_or_else(|| "a supported release".into());
    // The release an earlier cause already told the operator to upgrade to: a later cause
    // names no upgrade that one covers (one cause names the upgrade once).
    let mut named_upgrade: Option<Version> = None;
    if let Some(l) = life.filter(|l| l.state == LineState::EndOfLife) {
        named_upgrade = l
            .move_to
            .as_ref()
            .map(|(v, _)| v.clone())
            .or_else(|| update.recommended.as_deref().and_then(parse_version));
        reasons.push(report::Cause::new(
            format!(
                "{installed} is end of life: release line {} ({}) lost support on {}; upgrade \
                 to {upgrade_to}",
                line_name(l),
                track_name(l.track),
                l.support_end
                    .map(|d| d.to_string())
                    .unwrap_or_else(|| "an unknown date".into()),
            ),
            format!("{installed} end of life (upgrade to {upgrade_to})"),
        ));
    }
    if !vulnerabilities.is_empty() {
        let list: Vec<String> = vulnerabilities
            .iter()
            .map(|v| match v.severity {
                Some(s) => format!("{} {s}", v.id),
                None => v.id.clone(),
            })
            .collect();
        let fix = vulnerabilities
            .iter()
            .filter_map(|v| v.fixed_in.as_deref().and_then(parse_version))
            .max()
            .map(|f| {
                update
                    .recommended
                    .as_deref()
                    .and_then(parse_version)
                    .filter(|r| *r >= f)
                    .unwrap_or(f)
            })
            .filter(|upgrade| named_upgrade.as_ref().is_none_or(|named| upgrade > named))
            .map(|upgrade| format!("; upgrade to {upgrade}"))
            .unwrap_or_default();
        let count = vulnerabilities.len();
        let known = format!(
            "{count} known vulnerabilit{}",
            if count == 1 { "y" } else { "ies" }
        );
        reasons.push(report::Cause::new(
            format!("{installed} has {known} ({}){fix}", list.join(", ")),
            format!("{known}{fix}"),
        ));
    }
    // Low-severity failures never move the rating and waived ones never count; they stay on
    // the detail lines. The most severe first: line 1 is read from the left.
    let mut failed: Vec<&Finding> = findings
        .iter()
        .filter(|f| {
            f.role == Role::Check
                && f.status == Status::Failed
                && f.counts
                && !f.ignored
                && f.severity > Severity::Low
        })
        .collect();
    failed.sort_by_key(|f| std::cmp::Reverse(f.severity));
    for f in failed {
        reasons.push(report::Cause::new(
            format!("{} failed ({}): {}", f.id, f.severity, f.detail),
            format!("{} failed ({})", f.id, f.severity),
        ));
    }
    // The rules that turn OK into WARNING, as the verdict applied them.
    let raises = verdict::raises(inputs);
    let raised = |rule| raises.contains(&rule);
    if raised(verdict::Raise::UpdateAvailable)
        && let Some(r) = &update.recommended
    {
        reasons.push(report::Cause::same(format!("update available: {r}")));
    }
    if raised(verdict::Raise::SupportEnding)
        && let Some(l) = life
    {
        let days = l.support_days_left.unwrap_or_default();
        reasons.push(report::Cause::new(
            format!(
                "release line {} support ends {} ({days} days left); plan the upgrade to \
                 {upgrade_to}",
                line_name(l),
                l.support_end.map(|d| d.to_string()).unwrap_or_default(),
            ),
            format!("support ends in {days} days"),
        ));
    }
    if raised(verdict::Raise::WaiverEnding) {
        reasons.push(report::Cause::same(format!(
            "a waiver hiding a failing check ends in {} day(s)",
            inputs.waiver_days_left.unwrap_or_default()
        )));
    }
    if raised(verdict::Raise::MissingHardening) {
        reasons.push(report::Cause::same(format!(
            "{} hardening measure(s) missing",
            inputs.missing_hardening
        )));
    }
    if reasons.is_empty()
        && let None = life
    {
        // The release schedule was not used (`scanner.use_release_schedule: false`): nothing
        // judged the line's support, and the update check could compare only with a release
        // it had of its own (pinned, the feed), never with the schedule's.
        let failures = quiet_failures(findings);
        let update_part = match (update.update_available, &update.error) {
            (Some(true), _) => format!(
                "{} is available",
                update.recommended.clone().unwrap_or_default()
            ),
            (Some(false), _) => "no newer release is known".to_string(),
            (None, Some(_)) => "the update check failed".to_string(),
            (None, None) if update.mode == UpdateMode::Off => "the update check is off".to_string(),
            (None, None) => format!(
                "the update check ({}) had no release to compare it with",
                update.mode
            ),
        };
        let no_failure = if failures.is_empty() {
            "; no check failed"
        } else {
            ""
        };
        reasons.push(report::Cause::same(format!(
            "{installed}: support not judged (scanner.use_release_schedule is false); \
             {update_part}{no_failure}"
        )));
        reasons.extend(failures.into_iter().map(report::Cause::same));
    }
    if reasons.is_empty() {
        let failures = quiet_failures(findings);
        let support_unknown = life.is_some_and(|l| l.state == LineState::Unknown);
        let supported = if support_unknown {
            "has an unknown support end"
        } else {
            "is supported"
        };
        // Why nothing was established: the mode, or the feed's failure.
        let unchecked = match &update.error {
            Some(_) => "the update check failed",
            None => "the update check is off",
        };
        let standing = if update.update_available == Some(true) {
            format!(
                "{installed} {supported}; {} is available",
                update.recommended.clone().unwrap_or_default()
            )
        } else if update.update_available.is_none() {
            match known_without_check {
                Some(newer) if *newer > product.version => format!(
                    "{installed} {supported}; the release schedule lists {newer} ({unchecked})"
                ),
                Some(_) => format!(
                    "{installed} {supported} and the newest release the release schedule lists \
                     ({unchecked})"
                ),
                None => format!(
                    "{installed} {supported}; whether a newer release exists is unknown \
                     ({unchecked})"
                ),
            }
        } else if failures.is_empty() {
            format!("{installed} is up to date and no check failed")
        } else {
            format!("{installed} is up to date")
        };
        reasons.push(report::Cause::same(standing));
        reasons.extend(failures.into_iter().map(report::Cause::same));
    }
    reasons
}

/// Failed checks that did not move the state, said plainly so line 1 never claims that no
/// check failed while the detail lines list failures: low-severity ones (they cap at A+) and
/// ones not rated (`scanner.extra_checks_rating: false`, or `tlsTrusted` under `--insecure`).
/// Waived failures are left out here as they are on the "Additional checks" line.
fn quiet_failures(findings: &[Finding]) -> Vec<String> {
    let failed = || {
        findings
            .iter()
            .filter(|f| f.role == Role::Check && f.status == Status::Failed && !f.ignored)
    };
    let low = failed().filter(|f| f.counts).count();
    let unrated = failed().filter(|f| !f.counts).count();
    let mut parts = Vec::new();
    if low > 0 {
        parts.push(format!(
            "{} failed ({} not lower the rating)",
            counted(low, "low-severity check", "low-severity checks"),
            if low == 1 { "it does" } else { "they do" }
        ));
    }
    if unrated > 0 {
        parts.push(format!(
            "{} failed but {} not rated",
            counted(unrated, "check", "checks"),
            if unrated == 1 { "is" } else { "are" }
        ));
    }
    parts
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
            fixed_in: checks::INSTANCE.into(),
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
                fixed_in: f.fixed_in.clone(),
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
                system: step.fixed_in.clone(),
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
