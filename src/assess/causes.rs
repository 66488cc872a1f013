//! What made a host's state, most urgent first: line 1 of the monitoring output and the
//! document's `message` are made from them. The rules that raised the state are the
//! verdict's own (`verdict::raises`).

use super::*;

/// What made the state, most urgent first (line 1 of the output is made from them).
/// `known_without_check`: where the update check established nothing, the newest release the
/// release schedule lists for the instance.
pub(super) fn causes(
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
