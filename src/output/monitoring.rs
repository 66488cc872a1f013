//! The default format: the monitoring-plugin lines.
//!
//! ```text
//! <STATE>: <message>
//! <product> <version> on <host>, rating: <grade>, last scanned: <timestamp>
//! [optional detail lines]
//! |<performance data>
//! ```
//! The performance data closes the long output after a `|` with no space, so monitoring cores
//! that keep a leading space in a label of the second perfdata part read clean labels.

use super::perfdata;
use crate::checks;
use crate::knowledge::lifecycle::LineState;
use crate::knowledge::update::{AnswerSource, UpdateMode};
use crate::report::{Role, ScanResult, Status};
use crate::text::monitoring_line;

/// The lines of one host, without the perfdata line, in the order of the spec's "Default
/// output layout": lifecycle, missing hardening, additional checks, update check, coverage,
/// configuration fingerprint, baseline, policy, webhook.
pub fn host_block(result: &ScanResult) -> Vec<String> {
    let (first, shortened) = line_one(result);
    let mut lines = vec![first];
    lines.extend(host_details(result));
    // What line 1 had to leave out stays in the long output, in full.
    if shortened {
        lines.push(format!("Causes: {}", monitoring_line(&result.message)));
    }
    lines
}

/// Line 1 is what monitoring lists and every notification built from `$SERVICEOUTPUT$` show:
/// at most this many characters, the state included.
pub const LINE_ONE_LIMIT: usize = 200;

/// Line 1, `<STATE>: <message>` within [`LINE_ONE_LIMIT`] characters, and whether the message
/// had to be shortened: then the cause that decided the state comes first (cut if it alone is
/// too long), the next causes in a few words each, then "and N more".
pub fn line_one(result: &ScanResult) -> (String, bool) {
    let label = result.state.label();
    let budget = LINE_ONE_LIMIT - label.chars().count() - ": ".len();
    let whole = monitoring_line(&result.message);
    if whole.chars().count() <= budget {
        return (format!("{label}: {whole}"), false);
    }
    let causes = result.line_causes();
    let more = |left: usize| {
        if left == 0 {
            String::new()
        } else {
            format!("; and {left} more")
        }
    };
    let mut text = cut(
        &monitoring_line(&causes[0].text),
        budget - more(causes.len() - 1).chars().count(),
    );
    let mut shown = 1;
    for cause in &causes[1..] {
        let next = format!("; {}", monitoring_line(&cause.short));
        let left = causes.len() - shown - 1;
        if text.chars().count() + next.chars().count() + more(left).chars().count() > budget {
            break;
        }
        text.push_str(&next);
        shown += 1;
    }
    text.push_str(&more(causes.len() - shown));
    (format!("{label}: {text}"), true)
}

/// `text` within `limit` characters: cut at a word where one is near, marked with "…".
fn cut(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let kept: String = text.chars().take(limit.saturating_sub(1)).collect();
    let at_word = match kept.rfind(' ') {
        Some(space) if kept[..space].chars().count() * 4 >= limit * 3 => &kept[..space],
        _ => &kept[..],
    };
    format!("{}…", at_word.trim_end_matches([' ', ';', ',', ':']))
}

/// The lines after line 1.
fn host_details(result: &ScanResult) -> Vec<String> {
    let Some(product) = &result.product else {
        return vec![format!(
            "scan of {} failed, last attempted: {}",
            monitoring_line(&result.host),
            result.scanned_at
        )];
    };
    let mut lines = vec![format!(
        "{} {} on {}, rating: {}, last scanned: {}",
        monitoring_line(&product.name),
        monitoring_line(&product.version),
        monitoring_line(&result.host),
        result.grade,
        result.scanned_at
    )];
    if let Some(line) = lifecycle_line(result) {
        lines.push(line);
    }
    if result.check_hardening {
        let missing: Vec<&str> = result.missing_hardening().map(|f| f.id.as_str()).collect();
        if !missing.is_empty() {
            lines.push(format!("Missing hardening: {}", missing.join(", ")));
        }
    }
    if result.findings.iter().any(|f| f.role == Role::Check) {
        let mut failed: Vec<&crate::report::Finding> = result
            .findings
            .iter()
            .filter(|f| f.role == Role::Check && f.status == Status::Failed && !f.ignored)
            .collect();
        // Most severe first: the line is read from the left.
        failed.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.id.cmp(&b.id)));
        let names: Vec<String> = failed
            .iter()
            .map(|f| match f.counts {
                true => f.id.clone(),
                false => format!("{} (not rated)", f.id),
            })
            .collect();
        // With --no-extra-checks only the transport checks ran: "all passed" would claim the
        // others did.
        lines.push(match (names.len(), result.extra_checks) {
            (0, true) => "Additional checks: all passed".to_string(),
            (0, false) => {
                "Additional checks: not run (--no-extra-checks); the transport checks passed"
                    .to_string()
            }
            (n, true) => format!("Additional checks failed ({n}): {}", names.join(", ")),
            (n, false) => format!(
                "Additional checks failed ({n}): {}; the others were not run (--no-extra-checks)",
                names.join(", ")
            ),
        });
    }
    if let Some(f) = result
        .findings
        .iter()
        .find(|f| f.id == checks::identity::LOGIN_THROTTLING.id)
    {
        lines.push(format!(
            "Login throttling (not rated): {}",
            monitoring_line(&f.detail)
        ));
    }
    if let Some(update) = &result.update
        && update.mode != UpdateMode::Off
    {
        lines.push(format!(
            "Update check ({}, installed {}): {}",
            update.mode,
            monitoring_line(&update.installed),
            update_text(result)
        ));
    }
    if let Some(c) = &result.coverage {
        lines.push(format!(
            "Coverage: {} checks evaluated, {} skipped, {} indeterminate, {} network-limited",
            c.evaluated, c.skipped, c.indeterminate, c.network_limited
        ));
    }
    if let Some(f) = &result.configuration_fingerprint {
        lines.push(format!("Configuration fingerprint: {}", f.short));
    }
    if let Some(b) = &result.baseline {
        lines.push(baseline_line(b));
    }
    if let Some(policy) = &result.policy {
        lines.push(format!("Policy: {}", monitoring_line(&policy.summary())));
    }
    if result.webhook.as_ref().is_some_and(|w| !w.delivered) {
        lines.push("Webhook delivery failed".to_string());
    }
    lines
}

fn baseline_line(b: &crate::assess::baseline::BaselineComparison) -> String {
    if b.recorded {
        return "Baseline: recorded on this run".to_string();
    }
    let mut parts = Vec::new();
    if !b.new_findings.is_empty() {
        parts.push(format!(
            "{} new finding(s): {}",
            b.new_findings.len(),
            b.new_findings.join(", ")
        ));
    }
    if b.worse_rating {
        parts.push("the rating is lower".to_string());
    }
    if !b.inconclusive_now.is_empty() {
        parts.push(format!(
            "inconclusive now: {}",
            b.inconclusive_now.join(", ")
        ));
    }
    if parts.is_empty() {
        parts.push("nothing new or worse".to_string());
    }
    if b.fingerprint_drift {
        parts.push("the configuration fingerprint changed".to_string());
    }
    format!("Baseline: {}", parts.join("; "))
}

/// The release line's standing, and the note on its track when there is one.
fn lifecycle_line(result: &ScanResult) -> Option<String> {
    let l = result.lifecycle.as_ref()?;
    let track = l.track.map(|t| t.as_str()).unwrap_or("unknown track");
    let version = result.product.as_ref().map_or("", |p| p.version.as_str());
    let target = match (&l.upgrade_target, l.upgrade_target_track) {
        (Some(v), Some(t)) => format!("{v} ({} track)", t.as_str()),
        (Some(v), None) => v.clone(),
        _ => "a supported release".to_string(),
    };
    let line = match l.state {
        LineState::EndOfLife => format!(
            "Release lifecycle: {} ({track}) is end of life since {}; upgrade to {target}",
            l.line,
            l.support_end
                .map_or("an unknown date".into(), |d| d.to_string())
        ),
        // In the schedule, but its successor's release day is not documented.
        LineState::Unknown if l.latest_in_line.is_some() => format!(
            "Release lifecycle: {} ({track}) support end unknown: the next {track} line is out, \
             released on a day not documented; upgrade to {target}",
            l.line
        ),
        LineState::Unknown => format!(
            "Release lifecycle: {} is not in the release schedule (updated {}); support cannot be judged",
            l.line,
            l.schedule_updated
                .map(|d| d.to_string())
                .unwrap_or_default()
        ),
        LineState::EndingSoon => format!(
            "Release lifecycle: {} ({track}) support ends {}, {} days left; plan the upgrade to {target}",
            l.line,
            l.support_end.map_or("soon".into(), |d| d.to_string()),
            l.support_days_left.unwrap_or_default()
        ),
        _ if l.current_release => match (&l.support_end, l.support_days_left) {
            (Some(end), Some(days)) => format!(
                "Release lifecycle: {version} is the current release ({track}); line {} supported until {end}, {days} days left",
                l.line
            ),
            _ => format!("Release lifecycle: {version} is the current release ({track})"),
        },
        LineState::Supported => match (&l.support_end, l.support_days_left) {
            (Some(end), Some(days)) => format!(
                "Release lifecycle: {} ({track}) supported until {end}, {days} days left",
                l.line
            ),
            _ => format!(
                "Release lifecycle: {} ({track}) supported until the next {track} line is released",
                l.line
            ),
        },
    };
    Some(match &l.track_note {
        Some(note) => format!("{line} ({note})"),
        None => line,
    })
}

fn update_text(result: &ScanResult) -> String {
    let Some(u) = &result.update else {
        return String::new();
    };
    let track = result
        .lifecycle
        .as_ref()
        .and_then(|l| l.track)
        .map(|t| format!(" on the {t} track"))
        .unwrap_or_default();
    let mut text = match (u.update_available, &u.recommended) {
        (Some(true), Some(r)) => format!("{r} available{track}"),
        (Some(false), _) => format!("up to date{track}"),
        _ => "unknown".to_string(),
    };
    if let Some(newest) = &u.newest
        && Some(newest) != u.recommended.as_ref()
    {
        text.push_str(&format!("; newest release {newest}"));
    }
    match (&u.source, &u.error) {
        // An earlier run's feed answer standing in: the error says when it is from and why.
        (Some(source), Some(error)) if *source == AnswerSource::Cache => {
            text.push_str(&format!(" ({})", monitoring_line(error)));
        }
        (Some(source), Some(error)) if source.as_str() != u.mode.to_string() => {
            text.push_str(&format!(
                " (from {source} data: {})",
                monitoring_line(error)
            ));
        }
        (None, Some(error)) => text.push_str(&format!(" ({})", monitoring_line(error))),
        _ => {}
    }
    text
}

/// The whole monitoring output. One host: its block. Several: a first line with the overall
/// state and the counts, then one block per host in input order. The performance data closes
/// the output; with several hosts each label carries the host (`'cloud.example.com rating'`).
pub fn render(results: &[ScanResult], ctx: &super::Context) -> String {
    let parts: Vec<HostPart> = results
        .iter()
        .map(|r| host_part(r, results.len(), ctx))
        .collect();
    whole(&parts, &super::Tally::of(results))
}

/// What one host adds to the output: its block (with `--debug`, its details) and its
/// performance data.
pub struct HostPart {
    lines: Vec<String>,
    perf: Vec<String>,
}

impl HostPart {
    /// Whether it has no line at all (it adds nothing to the blocks then).
    pub fn is_empty_block(&self) -> bool {
        self.lines.is_empty()
    }

    /// Its block, the lines joined (no line break at the end).
    pub fn block(&self) -> String {
        self.lines.join("\n")
    }

    /// Its performance data, the metrics joined by blanks; empty for none.
    pub fn perf(&self) -> String {
        self.perf.join(" ")
    }
}

/// The opening line of a multi-host run.
pub fn opening(hosts: usize, tally: &super::Tally) -> String {
    format!(
        "Checked {hosts} host(s): overall {} ({})",
        tally.worst().label(),
        tally.counts()
    )
}

/// The part of `result`, one of `hosts` in the run: a single host's performance data is not
/// labelled with its name.
pub fn host_part(result: &ScanResult, hosts: usize, ctx: &super::Context) -> HostPart {
    let mut lines = host_block(result);
    if ctx.debug {
        lines.push(debug_text(result).trim_end().to_string());
    }
    let host = perfdata::label_safe(&result.host);
    let perf = perfdata::metrics(result, &ctx.thresholds)
        .iter()
        .map(|m| match hosts {
            1 => m.render(),
            _ => m.render_labelled(&format!("{host} {}", m.name)),
        })
        .collect();
    HostPart { lines, perf }
}

/// The output of the hosts' parts, in input order: the opening line of a multi-host run (its
/// states from `tally`), the blocks, then the performance data.
pub fn whole(parts: &[HostPart], tally: &super::Tally) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let opening = opening(parts.len(), tally);
    if parts.len() != 1 {
        lines.push(&opening);
    }
    lines.extend(
        parts
            .iter()
            .flat_map(|p| p.lines.iter().map(String::as_str)),
    );
    let perf: Vec<&str> = parts
        .iter()
        .flat_map(|p| p.perf.iter().map(String::as_str))
        .collect();
    format!("{}\n|{}\n", lines.join("\n"), perf.join(" "))
}

/// `--debug`: the rating explanation, the remediation plan and every finding, printed before
/// the performance data so monitoring cores keep reading clean perfdata.
pub fn debug_text(result: &ScanResult) -> String {
    let mut out = String::new();
    let e = &result.rating_explanation;
    out.push_str("Rating explanation:\n");
    match e.starting_rating {
        Some(start) => out.push_str(&format!(
            "  starting rating {start} ({}): {}\n",
            crate::report::grade(Some(start)),
            e.starting_reason
        )),
        None => out.push_str(&format!("  no rating: {}\n", e.starting_reason)),
    }
    for limit in &e.limits {
        out.push_str(&format!(
            "  {} failed ({}): caps the rating at {} ({})\n",
            limit.id,
            limit.severity,
            limit.cap,
            crate::report::grade(Some(limit.cap))
        ));
    }
    for note in &e.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    out.push_str(&format!(
        "  final rating {} ({}); WARNING at or below {}, CRITICAL at or below {}\n",
        e.final_rating
            .map(|r| r.to_string())
            .unwrap_or_else(|| "U".into()),
        e.final_grade,
        e.warning_threshold,
        e.critical_threshold
    ));
    if let Some(best) = crate::assess::upgrade::best_line(&result.upgrade_options) {
        out.push_str(&best);
        out.push('\n');
        for o in &result.upgrade_options {
            let support = match (&o.line_support_end, o.line_state) {
                (Some(end), _) => format!("line {} supported until {end}", o.line),
                (None, Some(crate::knowledge::lifecycle::LineState::Unknown)) => {
                    format!("line {} support end unknown", o.line)
                }
                (None, _) => format!("line {} supported until its successor", o.line),
            };
            let list = |ids: &[String]| match ids {
                [] => "none".to_string(),
                ids => ids.join(", "),
            };
            out.push_str(&format!(
                "  {} ({}): rating {}, fixes {}, stays open {}, {support}\n",
                o.version,
                o.kinds
                    .iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                o.grade,
                list(&o.fixes),
                list(&o.stays_open),
            ));
        }
    }
    out.push_str("Remediation plan:\n");
    if result.remediation_plan.steps.is_empty() {
        out.push_str("  nothing to do\n");
    }
    for step in &result.remediation_plan.steps {
        out.push_str(&format!(
            "  {}. [{}] {} (resolves {})\n",
            step.order,
            step.fixed_in,
            step.action,
            step.resolves.join(", ")
        ));
    }
    // The plan's changes as lines to paste, one snippet per file (no snippet holds a `|`,
    // which would start performance data here; `check-storage-scanner snippets` prints them
    // unindented).
    if !result.remediation_plan.snippets.is_empty() {
        out.push_str("Fix snippets (one per file):\n");
        for s in &result.remediation_plan.snippets {
            out.push_str(&format!("  {}, {}:\n", s.form.as_str(), s.file));
            for line in s.text.lines() {
                out.push_str(&format!("    {}\n", line.replace('|', "/")));
            }
        }
    }
    out.push_str("Findings:\n");
    for f in &result.findings {
        out.push_str(&format!(
            "  {} [{:?}, {}{}]: {}\n",
            f.id,
            f.status,
            f.severity,
            if f.decisive { ", decisive" } else { "" },
            f.detail.replace(['\n', '\r', '|'], " ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks;
    use crate::report::{Cause, State};
    use crate::severity::Severity;

    /// A host with `n` failed checks whose details a hostile instance wrote: long, with
    /// separators, control characters, `|` and multi-byte characters.
    fn hostile(n: usize) -> ScanResult {
        let mut findings = Vec::new();
        let mut causes = Vec::new();
        for i in 0..n {
            let id = format!("exposed:/{i}-{}", "ä".repeat(30));
            let detail = format!("served {}\n|x; y", "€".repeat(300));
            let mut f = checks::finding_for("exposed:/.env", Status::Failed, &detail).unwrap();
            f.id = id.clone();
            f.severity = Severity::High;
            causes.push(Cause::new(
                format!("{id} failed (high): {detail}"),
                format!("{id} failed (high)"),
            ));
            findings.push(f);
        }
        let mut r = crate::output::sarif::tests::result("cloud.example", findings);
        r.state = State::Critical;
        r.set_causes(causes);
        r
    }

    #[test]
    fn line_one_stays_within_its_limit_however_many_findings_fail() {
        for n in [1, 2, 3, 10, 200] {
            let r = hostile(n);
            let (line, shortened) = line_one(&r);
            assert!(
                line.chars().count() <= LINE_ONE_LIMIT,
                "{n}: {} characters: {line}",
                line.chars().count()
            );
            assert!(shortened);
            assert!(line.starts_with("CRITICAL: exposed:/0-"), "{line}");
            assert!(!line.contains('|') && !line.contains('\n'), "{line}");
            if n > 1 {
                assert!(line.ends_with(" more"), "{n}: {line}");
            }
            // The long output keeps every cause in full.
            let block = host_block(&r);
            assert_eq!(block[0], line);
            let causes = block.iter().find(|l| l.starts_with("Causes: ")).unwrap();
            assert!(causes.contains(&format!("exposed:/{}-", n - 1)), "{n}");
        }
        let (line, _) = line_one(&hostile(200));
        assert!(line.ends_with("; and 199 more"), "{line}");
    }

    #[test]
    fn the_cause_that_decided_comes_first_then_the_next_in_a_few_words() {
        let mut r = crate::output::sarif::tests::result("cloud.example", Vec::new());
        r.state = State::Critical;
        r.set_causes(vec![
            Cause::new(
                "OpenCloud 4.0.0 has 2 known vulnerabilities (GHSA-vf5j-r2hw-2hrw high, \
                 GHSA-gf4p-7p27-26w7 medium); upgrade to 4.0.8",
                "2 known vulnerabilities; upgrade to 4.0.8",
            ),
            Cause::new(
                format!(
                    "demoUsersDisabled failed (critical): demo accounts sign in: {}",
                    "dennis, ".repeat(30)
                ),
                "demoUsersDisabled failed (critical)",
            ),
            Cause::new(
                format!("corsOriginRestricted failed (medium): {}", "x".repeat(200)),
                "corsOriginRestricted failed (medium)",
            ),
            Cause::new(
                "3 hardening measure(s) missing",
                "3 hardening measure(s) missing",
            ),
        ]);
        let (line, shortened) = line_one(&r);
        assert!(shortened);
        // The next cause would not fit with the count of the rest.
        assert_eq!(
            line,
            "CRITICAL: OpenCloud 4.0.0 has 2 known vulnerabilities (GHSA-vf5j-r2hw-2hrw high, \
             GHSA-gf4p-7p27-26w7 medium); upgrade to 4.0.8; demoUsersDisabled failed \
             (critical); and 2 more"
        );
        assert!(line.chars().count() <= LINE_ONE_LIMIT);
    }

    #[test]
    fn a_short_message_is_line_one_as_it_is_and_adds_no_causes_line() {
        let mut r = crate::output::sarif::tests::result("cloud.example", Vec::new());
        r.state = State::Ok;
        r.set_causes(vec![Cause::new(
            "OpenCloud 8.1.0 is up to date and no check failed",
            "up to date",
        )]);
        let block = host_block(&r);
        assert_eq!(
            block[0],
            "OK: OpenCloud 8.1.0 is up to date and no check failed"
        );
        assert!(block.iter().all(|l| !l.starts_with("Causes: ")));
    }
}
