//! Upgrade rehearsal: before an operator upgrades, what each candidate release would bring.
//!
//! Candidates: the newest patch of the installed line, the newest release on the instance's
//! track, and the newest release of the current production line (the same release may be
//! several of them). For each: the advisories it would fix and those that stay open, the
//! rating the instance would reach (the candidate's version standing, capped by the checks the
//! instance fails today: an upgrade changes the release, not the configuration), and whether
//! its line's support outlasts the installed one's. The best choice is the highest rating,
//! then a line still supported, then the smallest step. Pure: everything comes in as arguments.

use super::rating;
use crate::knowledge::advisories::{self, Advisory};
use crate::knowledge::lifecycle::{self, LineState, TrackChoice};
use crate::knowledge::releases::ReleaseSchedule;
use crate::knowledge::{Track, without_build as strip};
use crate::report::{self, Finding};
use jiff::civil::Date;
use semver::Version;

/// What one candidate is, in the order a person would consider them (the smallest step first).
pub use crate::report::UpgradeKind as Kind;

impl Kind {
    /// How the best choice's line says it.
    fn said(self) -> &'static str {
        match self {
            Kind::Patch => "newest patch of the installed line",
            Kind::Track => "newest on the track",
            Kind::Production => "newest production release",
        }
    }
}

/// What the rehearsal needs of a scan.
pub struct Rehearsal<'a> {
    pub installed: &'a Version,
    pub schedule: Option<&'a ReleaseSchedule>,
    pub advisories: &'a [Advisory],
    pub track_choice: TrackChoice,
    pub today: Date,
    /// The installed release's lifecycle, when the schedule was used.
    pub life: Option<&'a lifecycle::Lifecycle>,
    /// The newest release on the instance's track (the update check's recommendation).
    pub recommended: Option<&'a Version>,
    /// The scan's findings; their failed checks cap every candidate's rating.
    pub findings: &'a [Finding],
}

/// How long a line keeps support. Ended is shorter than anything; two dates compare; a line
/// supported "until its successor" (no date) compares only with another such line (equal), not
/// with a date: a production line may end in a month, an LTS date may be two years out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Horizon {
    Ended,
    Until(Date),
    Open,
}

impl Horizon {
    fn of(l: &lifecycle::Lifecycle, today: Date) -> Option<Horizon> {
        match (l.state, l.support_end) {
            (LineState::EndOfLife, _) => Some(Horizon::Ended),
            (LineState::Unknown, _) => None,
            (_, Some(end)) if end <= today => Some(Horizon::Ended),
            (_, Some(end)) => Some(Horizon::Until(end)),
            (_, None) => Some(Horizon::Open),
        }
    }

    /// Whether `self` lasts longer than `other`; `None` when nobody can say.
    fn outlasts(self, other: Horizon) -> Option<bool> {
        match (self, other) {
            (Horizon::Ended, _) => Some(false),
            (_, Horizon::Ended) => Some(true),
            (Horizon::Until(a), Horizon::Until(b)) => Some(a > b),
            (Horizon::Open, Horizon::Open) => Some(false),
            _ => None,
        }
    }
}

/// The candidates, each release once with every kind it is, in kind order.
fn candidates(r: &Rehearsal) -> Vec<(Version, Vec<Kind>)> {
    let production = r.schedule.and_then(|s| {
        s.entries
            .iter()
            .filter(|e| e.track == Track::Production && e.supported_on(r.today))
            .map(|e| &e.current)
            .max()
            .cloned()
    });
    let found = [
        (Kind::Patch, r.life.and_then(|l| l.latest_in_line.clone())),
        (
            Kind::Track,
            r.recommended
                .cloned()
                .or_else(|| r.life.and_then(|l| l.upgrade_target.clone())),
        ),
        (Kind::Production, production),
    ];
    let installed = strip(r.installed);
    let mut out: Vec<(Version, Vec<Kind>)> = Vec::new();
    for (kind, version) in found {
        let Some(version) = version.map(|v| strip(&v)).filter(|v| *v > installed) else {
            continue;
        };
        match out.iter_mut().find(|(v, _)| *v == version) {
            Some((_, kinds)) => kinds.push(kind),
            None => out.push((version, vec![kind])),
        }
    }
    out
}

/// How a candidate ranks for the best choice: rating, then a supported line, then the smallest
/// step (the greatest `Reverse(kind)`).
type Preference = (u8, bool, std::cmp::Reverse<Kind>);

/// Every candidate upgrade with what it would bring; the best one is marked. Empty when the
/// instance runs the newest of every candidate (or nothing is known to compare with).
pub fn rehearse(r: &Rehearsal) -> Vec<report::UpgradeOption> {
    let installed_ids: Vec<&str> = advisories::matching(r.advisories, r.installed)
        .iter()
        .map(|a| a.id.as_str())
        .collect();
    let installed_horizon = r.life.and_then(|l| Horizon::of(l, r.today));
    // What today's failed checks allow, whatever the release: an upgrade keeps them.
    let (checks_cap, _) = rating::apply_caps(5, &mut r.findings.to_vec());
    let mut options: Vec<(report::UpgradeOption, Preference)> = Vec::new();
    for (version, kinds) in candidates(r) {
        let open: Vec<&Advisory> = advisories::matching(r.advisories, &version);
        let stays_open: Vec<String> = open.iter().map(|a| a.id.clone()).collect();
        let fixes: Vec<String> = installed_ids
            .iter()
            .filter(|id| !stays_open.iter().any(|o| o == *id))
            .map(|id| id.to_string())
            .collect();
        let life = r
            .schedule
            .map(|s| lifecycle::assess(s, &version, r.track_choice, r.today, None));
        let standing = rating::VersionStanding {
            end_of_life: life
                .as_ref()
                .is_some_and(|l| l.state == LineState::EndOfLife),
            advisories: open.iter().map(|a| a.severity).collect(),
            installed: Some(version.clone()),
            recommended: r
                .recommended
                .map(strip)
                .or_else(|| r.life.and_then(|l| l.upgrade_target.as_ref().map(strip))),
        };
        let (start, _) = rating::starting_rating(&standing);
        let rating = start.min(checks_cap);
        let candidate_horizon = life.as_ref().and_then(|l| Horizon::of(l, r.today));
        let outlasts = candidate_horizon
            .zip(installed_horizon)
            .and_then(|(candidate, installed)| candidate.outlasts(installed));
        // A supported line beats an ended or unknown one; dates beyond that are not ranked.
        let alive = matches!(candidate_horizon, Some(Horizon::Until(_) | Horizon::Open));
        options.push((
            report::UpgradeOption {
                version: version.to_string(),
                kinds: kinds.clone(),
                fixes,
                stays_open,
                rating,
                grade: report::grade(Some(rating)).into(),
                line: format!("{}.{}", version.major, version.minor),
                line_state: life.as_ref().map(|l| l.state),
                line_support_end: life.as_ref().and_then(|l| l.support_end),
                outlasts_installed: outlasts,
                best: false,
            },
            (rating, alive, std::cmp::Reverse(kinds[0])),
        ));
    }
    if let Some((best, _)) = options.iter_mut().max_by_key(|(_, key)| *key) {
        best.best = true;
    }
    options.into_iter().map(|(o, _)| o).collect()
}

/// The detail line naming the best choice, e.g. `Upgrade rehearsal: best 4.0.9 (newest patch
/// of the installed line): fixes GHSA-x, nothing stays open, rating A+, support outlasts the
/// installed line`.
pub fn best_line(options: &[report::UpgradeOption]) -> Option<String> {
    let best = options.iter().find(|o| o.best)?;
    let kinds: Vec<&str> = best.kinds.iter().map(|k| k.said()).collect();
    let fixes = match best.fixes.as_slice() {
        [] => "fixes no known advisory".to_string(),
        ids => format!("fixes {}", ids.join(", ")),
    };
    let open = match best.stays_open.as_slice() {
        [] => "nothing stays open".to_string(),
        ids => format!("{} stay(s) open", ids.join(", ")),
    };
    let support = match best.outlasts_installed {
        Some(true) => ", support outlasts the installed line",
        Some(false) => ", support ends no later than the installed line's",
        None => "",
    };
    Some(format!(
        "Upgrade rehearsal: best {} ({}): {fixes}, {open}, rating {}{support}",
        best.version,
        kinds.join(", "),
        best.grade
    ))
}

#[cfg(test)]
mod tests;
