//! Where a running version stands in its release line's life: which track it follows, how long
//! its line is supported, and what to upgrade to. Pure: `today` is passed in so that results
//! are reproducible and testable.

use super::Track;
use super::releases::{ReleaseSchedule, ScheduleEntry};
use jiff::civil::Date;
use semver::Version;
use serde::{Deserialize, Serialize};

/// Which track the operator says the instance follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TrackChoice {
    /// Pick the track under which the line is supported longest.
    #[default]
    Auto,
    Fixed(Track),
}

impl TrackChoice {
    pub fn fixed(self) -> Option<Track> {
        match self {
            TrackChoice::Fixed(t) => Some(t),
            TrackChoice::Auto => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LineState {
    Supported,
    /// Inside the operator's `--eol-warning` window.
    EndingSoon,
    EndOfLife,
    /// The line is missing from the schedule although newer lines are listed, or its
    /// successor was released on an undocumented day: we cannot say, and calling it end of
    /// life on a guess would page someone for nothing.
    Unknown,
}

/// The lifecycle verdict for one version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lifecycle {
    pub line: (u64, u64),
    /// The track the assessment used; `None` when the schedule does not know the line and no
    /// track was given.
    pub track: Option<Track>,
    /// True when the track was chosen by us rather than taken from the operator's setting.
    pub track_detected: bool,
    pub opened: Option<Date>,
    pub support_end: Option<Date>,
    /// Whole days from today to `support_end`; 0 on the end day, negative afterwards.
    pub support_days_left: Option<i64>,
    pub state: LineState,
    /// The version is at or above the upgrade target (or newer than anything the schedule
    /// knows).
    pub current_release: bool,
    /// The newest release of the version's line.
    pub latest_in_line: Option<Version>,
    /// The release to move to on the chosen track (what the update check recommends).
    pub upgrade_target: Option<Version>,
    /// The release an operator should move to given the line's state, and the track its line
    /// is on: for a line ending inside the `--eol-warning` window, the newest release of a
    /// line still supported after the window (the installed LTS patch is no way out of its
    /// line's end); otherwise the upgrade target.
    pub move_to: Option<(Version, Track)>,
    pub newest_overall: Option<Version>,
    /// The version is newer than every release the schedule knows: the schedule is out of date,
    /// so nothing here may count against the instance.
    pub schedule_stale: bool,
}

/// The entry under which the line is supported longest: a missing end date (support runs until
/// a successor that has not appeared) beats an unknown one, which beats any date; a later date
/// beats an earlier one, and on a tie lts beats production beats rolling.
fn longest_supported<'a>(entries: &[&'a ScheduleEntry]) -> Option<&'a ScheduleEntry> {
    entries.iter().copied().max_by_key(|e| {
        (
            e.support_end.is_none() && !e.support_end_unknown,
            e.support_end.is_none(),
            e.support_end,
            // `Track` orders by how long a track keeps a line alive.
            e.track,
        )
    })
}

/// The newest release among lines of `tracks` that still have support on `day`, with the
/// track of its line; a release published on several tracks is named on the first of `tracks`.
fn newest_supported(
    schedule: &ReleaseSchedule,
    tracks: &[Track],
    day: Date,
) -> Option<(Version, Track)> {
    let preference = |t: Track| std::cmp::Reverse(tracks.iter().position(|x| *x == t));
    schedule
        .entries
        .iter()
        .filter(|e| tracks.contains(&e.track) && e.supported_on(day))
        .max_by_key(|e| (&e.current, preference(e.track)))
        .map(|e| (e.current.clone(), e.track))
}

/// Where to go from a line on `track`, for support on `day`. When nothing on the track is
/// supported any more (oCIS ended its rolling track), the newest supported release of any track
/// is the way out; an upgrade target that is itself out of support would be no advice at all.
fn upgrade_target(
    schedule: &ReleaseSchedule,
    entry: Option<&ScheduleEntry>,
    track: Track,
    day: Date,
) -> Option<(Version, Track)> {
    if let Some(e) = entry
        && track == Track::Lts
        && e.supported_on(day)
    {
        // An LTS line stays on its line while it is the newest one: the target is its newest
        // patch. Once a newer LTS line is out, the instance is a line behind, as on the other
        // tracks, and the newest LTS release is where to go.
        let newest_lts = newest_supported(schedule, &[Track::Lts], day)
            .filter(|(v, _)| (v.major, v.minor) > (e.current.major, e.current.minor));
        return Some(newest_lts.unwrap_or_else(|| (e.current.clone(), e.track)));
    }
    let tracks: &[Track] = match track {
        Track::Lts => &[Track::Lts, Track::Production],
        Track::Production => &[Track::Production, Track::Lts],
        Track::Rolling => &[Track::Rolling],
    };
    newest_supported(schedule, tracks, day)
        .or_else(|| {
            newest_supported(
                schedule,
                &[track, Track::Lts, Track::Production, Track::Rolling],
                day,
            )
        })
        .or_else(|| schedule.newest_on_track(track).map(|v| (v.clone(), track)))
}

/// Assesses `version` against the schedule on `today`.
///
/// `eol_warning_days`: with `Some(d)`, a line with `d` or fewer days of support left is
/// `EndingSoon`. Support ends at the start of `support_end`, so on that day the line is
/// `EndOfLife` with 0 days left.
///
/// A `Fixed` track the line was never published on (a 3.7 instance told "production") cannot
/// be judged on that track; the line is then assessed as with `Auto` and `track_detected` is
/// set, so the report shows the track actually used.
pub fn assess(
    schedule: &ReleaseSchedule,
    version: &Version,
    choice: TrackChoice,
    today: Date,
    eol_warning_days: Option<i64>,
) -> Lifecycle {
    let version = super::without_build(version);
    let line = (version.major, version.minor);
    let newest_overall = schedule.newest_overall().cloned();
    let beyond_schedule = newest_overall.as_ref().is_some_and(|n| version > *n);
    let entries = schedule.entries_for_line(line);

    if entries.is_empty() {
        let fixed = choice.fixed();
        let newer_than_schedule = schedule.newest_line().is_none_or(|n| line > n);
        let move_to = if newer_than_schedule {
            None
        } else {
            fixed.and_then(|t| upgrade_target(schedule, None, t, today))
        };
        return Lifecycle {
            line,
            track: fixed,
            track_detected: false,
            opened: None,
            support_end: None,
            support_days_left: None,
            // A line newer than the schedule is a release the schedule has not heard of yet:
            // never penalised.
            state: if newer_than_schedule {
                LineState::Supported
            } else {
                LineState::Unknown
            },
            current_release: newer_than_schedule,
            latest_in_line: None,
            upgrade_target: move_to.as_ref().map(|(v, _)| v.clone()),
            move_to,
            newest_overall,
            schedule_stale: newer_than_schedule,
        };
    }

    let on_fixed_track = choice
        .fixed()
        .and_then(|t| entries.iter().find(|e| e.track == t));
    let (entry, track_detected) = match on_fixed_track {
        Some(e) => (*e, false),
        None => (
            longest_supported(&entries).expect("entries is not empty"),
            true,
        ),
    };
    let support_days_left = entry
        .support_end
        .map(|end| i64::from((end - today).get_days()));
    let state = match (entry.support_end, support_days_left) {
        // The successor is out, on a day nobody documented: neither supported nor, on a
        // guess, end of life.
        _ if entry.support_end_unknown => LineState::Unknown,
        (Some(end), _) if today >= end => LineState::EndOfLife,
        (_, Some(left)) if eol_warning_days.is_some_and(|d| left <= d) => LineState::EndingSoon,
        _ => LineState::Supported,
    };
    let on_track = upgrade_target(schedule, Some(entry), entry.track, today);
    let target = on_track.as_ref().map(|(v, _)| v.clone());
    let current_release = beyond_schedule || target.as_ref().is_none_or(|t| version >= *t);
    let move_to = match (state, eol_warning_days) {
        // Support must outlast the window: the newest release of a line supported after it.
        (LineState::EndingSoon, Some(days)) => today
            .checked_add(jiff::Span::new().days(days))
            .ok()
            .and_then(|after| upgrade_target(schedule, None, entry.track, after))
            .or(on_track),
        _ => on_track,
    };
    Lifecycle {
        line,
        track: Some(entry.track),
        track_detected,
        opened: entry.opened,
        support_end: entry.support_end,
        support_days_left,
        state,
        current_release,
        latest_in_line: Some(entry.current.clone()),
        upgrade_target: target,
        move_to,
        newest_overall,
        schedule_stale: beyond_schedule,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::ProductFamily;
    use jiff::civil::date;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn oc() -> ReleaseSchedule {
        ReleaseSchedule::bundled(ProductFamily::OpenCloud)
    }

    /// The day the reference facts were collected.
    const TODAY: Date = date(2026, 11, 22);

    fn auto(version: &str) -> Lifecycle {
        assess(&oc(), &v(version), TrackChoice::Auto, TODAY, None)
    }

    #[test]
    fn lts_line_picked_automatically() {
        let l = auto("4.0.0");
        assert_eq!(l.line, (4, 0));
        assert_eq!(l.track, Some(Track::Lts));
        assert!(l.track_detected);
        assert_eq!(l.opened, Some(date(2025, 12, 1)));
        assert_eq!(l.support_end, Some(date(2027, 12, 1)));
        assert_eq!(l.support_days_left, Some(374));
        assert_eq!(l.state, LineState::Supported);
        assert_eq!(l.upgrade_target, Some(v("4.0.8")));
        assert_eq!(l.latest_in_line, Some(v("4.0.8")));
        assert!(!l.current_release);
        assert_eq!(l.newest_overall, Some(v("8.1.0")));
        assert!(!l.schedule_stale);

        let current = auto("4.0.8");
        assert!(current.current_release);
        assert_eq!(current.state, LineState::Supported);
        // A patch the schedule has not heard of yet is current too, without staleness: newer
        // lines exist.
        let newer_patch = auto("4.0.9");
        assert!(newer_patch.current_release && !newer_patch.schedule_stale);
    }

    #[test]
    fn an_ending_line_is_moved_to_a_line_supported_past_the_window() {
        let l = assess(&oc(), &v("4.0.8"), TrackChoice::Auto, TODAY, Some(400));
        assert_eq!(l.state, LineState::EndingSoon);
        // The update check's target stays the LTS patch; the way out is the production line.
        assert_eq!(l.upgrade_target, Some(v("4.0.8")));
        assert!(l.current_release);
        assert_eq!(l.move_to, Some((v("7.2.4"), Track::Production)));

        // Outside the window the LTS line's own newest patch is where to go.
        let l = assess(&oc(), &v("4.0.3"), TrackChoice::Auto, TODAY, Some(30));
        assert_eq!(l.state, LineState::Supported);
        assert_eq!(l.move_to, Some((v("4.0.8"), Track::Lts)));

        // End of life names the track of the target.
        let l = auto("7.3.0");
        assert_eq!(l.move_to, Some((v("8.1.0"), Track::Rolling)));
    }

    #[test]
    fn production_current_and_patch_pending() {
        let l = auto("7.2.4");
        assert_eq!(l.track, Some(Track::Production));
        assert_eq!(l.support_end, None);
        assert_eq!(l.support_days_left, None);
        assert_eq!(l.state, LineState::Supported);
        assert!(l.current_release);
        assert_eq!(l.upgrade_target, Some(v("7.2.4")));

        let pending = auto("7.2.1");
        assert_eq!(pending.track, Some(Track::Production));
        assert_eq!(pending.state, LineState::Supported);
        assert!(!pending.current_release);
        assert_eq!(pending.upgrade_target, Some(v("7.2.4")));
        // Build metadata does not make a release older or newer.
        assert!(auto("7.2.4+abc123").current_release);
    }

    #[test]
    fn rolling_end_of_life_and_current() {
        let l = auto("7.3.0");
        assert_eq!(l.track, Some(Track::Rolling));
        assert_eq!(l.state, LineState::EndOfLife);
        assert_eq!(l.support_end, Some(date(2026, 8, 3)));
        assert_eq!(l.support_days_left, Some(-111));
        assert_eq!(l.upgrade_target, Some(v("8.1.0")));
        assert!(!l.current_release);

        let current = auto("8.1.0");
        assert_eq!(current.track, Some(Track::Rolling));
        assert_eq!(current.state, LineState::Supported);
        assert_eq!(current.support_end, None);
        assert!(current.current_release);
        assert!(!current.schedule_stale);

        let old_production = auto("2.0.5");
        assert_eq!(old_production.track, Some(Track::Production));
        assert_eq!(old_production.state, LineState::EndOfLife);
        assert_eq!(old_production.upgrade_target, Some(v("7.2.4")));
    }

    #[test]
    fn versions_beyond_the_schedule_are_never_penalised() {
        for version in ["9.0.0", "8.2.0", "8.1.1"] {
            let l = assess(&oc(), &v(version), TrackChoice::Auto, TODAY, Some(30));
            assert_eq!(l.state, LineState::Supported, "{version}");
            assert!(l.schedule_stale, "{version}");
            assert!(l.current_release, "{version}");
            assert_eq!(l.newest_overall, Some(v("8.1.0")));
        }
        let nine = auto("9.0.0");
        assert_eq!(nine.track, None);
        assert!(!nine.track_detected);
        assert_eq!(nine.upgrade_target, None);
        let fixed = assess(
            &oc(),
            &v("9.0.0"),
            TrackChoice::Fixed(Track::Production),
            TODAY,
            None,
        );
        assert_eq!(fixed.track, Some(Track::Production));
        assert_eq!(fixed.state, LineState::Supported);
    }

    #[test]
    fn missing_older_line_is_unknown_not_end_of_life() {
        let l = auto("4.2.0");
        assert_eq!(l.state, LineState::Unknown);
        assert!(!l.schedule_stale);
        assert!(!l.current_release);
        assert_eq!(l.support_end, None);
        assert_eq!(l.track, None);
        let fixed = assess(
            &oc(),
            &v("4.2.0"),
            TrackChoice::Fixed(Track::Rolling),
            TODAY,
            None,
        );
        assert_eq!(fixed.state, LineState::Unknown);
        assert_eq!(fixed.upgrade_target, Some(v("8.1.0")));
    }

    #[test]
    fn eol_warning_window_boundary() {
        // 4.0 LTS ends 2027-12-01: 30 days before is 2027-11-01.
        let at = |today, window| assess(&oc(), &v("4.0.8"), TrackChoice::Auto, today, window);
        let exactly = at(date(2027, 11, 1), Some(30));
        assert_eq!(exactly.support_days_left, Some(30));
        assert_eq!(exactly.state, LineState::EndingSoon);
        let one_more = at(date(2027, 10, 31), Some(30));
        assert_eq!(one_more.support_days_left, Some(31));
        assert_eq!(one_more.state, LineState::Supported);
        assert_eq!(
            at(date(2027, 11, 1), None).state,
            LineState::Supported,
            "no window, no warning"
        );
        assert_eq!(at(date(2027, 11, 1), Some(0)).state, LineState::Supported);
    }

    #[test]
    fn support_end_day_is_already_end_of_life() {
        let at = |today| assess(&oc(), &v("4.0.8"), TrackChoice::Auto, today, Some(30));
        let last = at(date(2027, 11, 30));
        assert_eq!(last.support_days_left, Some(1));
        assert_eq!(last.state, LineState::EndingSoon);
        let end = at(date(2027, 12, 1));
        assert_eq!(end.support_days_left, Some(0));
        assert_eq!(end.state, LineState::EndOfLife);
        // Once LTS support is gone the way out is the newest supported production release.
        assert_eq!(end.upgrade_target, Some(v("7.2.4")));
        assert!(!end.current_release);
        // The day 7.3 opened, 7.2 rolling lost support.
        let rolling = |today| {
            assess(
                &oc(),
                &v("7.2.4"),
                TrackChoice::Fixed(Track::Rolling),
                today,
                None,
            )
            .state
        };
        assert_eq!(rolling(date(2026, 7, 13)), LineState::Supported);
        assert_eq!(rolling(date(2026, 7, 14)), LineState::EndOfLife);
    }

    #[test]
    fn fixed_track_choices() {
        let fixed = |version: &str, track| {
            assess(&oc(), &v(version), TrackChoice::Fixed(track), TODAY, None)
        };
        let production = fixed("4.0.5", Track::Production);
        assert_eq!(production.track, Some(Track::Production));
        assert!(!production.track_detected);
        assert_eq!(production.state, LineState::EndOfLife);
        assert_eq!(production.support_end, Some(date(2026, 6, 25)));
        assert_eq!(production.upgrade_target, Some(v("7.2.4")));

        let lts = fixed("4.0.5", Track::Lts);
        assert_eq!(lts.track, Some(Track::Lts));
        assert!(!lts.track_detected);
        assert_eq!(lts.state, LineState::Supported);
        assert_eq!(lts.upgrade_target, Some(v("4.0.8")));

        let rolling = fixed("7.2.4", Track::Rolling);
        assert_eq!(rolling.track, Some(Track::Rolling));
        assert_eq!(rolling.state, LineState::EndOfLife);
        assert_eq!(rolling.upgrade_target, Some(v("8.1.0")));
        assert!(!rolling.current_release);

        // 3.7 was never a production line: falls back to auto and says the track was detected.
        let fallback = fixed("3.7.0", Track::Production);
        assert_eq!(fallback.track, Some(Track::Rolling));
        assert!(fallback.track_detected);
        assert_eq!(fallback.state, LineState::EndOfLife);
        assert_eq!(fallback.upgrade_target, Some(v("8.1.0")));

        let lts_fallback = fixed("8.1.0", Track::Lts);
        assert_eq!(lts_fallback.track, Some(Track::Rolling));
        assert!(lts_fallback.track_detected);
        assert!(lts_fallback.current_release);
    }

    #[test]
    fn ocis_rolling_track_hands_over_to_production() {
        let s = ReleaseSchedule::bundled(ProductFamily::InfiniteScale);
        let l = assess(&s, &v("6.6.1"), TrackChoice::Auto, TODAY, None);
        assert_eq!(l.track, Some(Track::Rolling));
        assert_eq!(l.state, LineState::EndOfLife);
        assert_eq!(
            l.upgrade_target,
            Some(v("8.1.0")),
            "no rolling line is left"
        );
        let current = assess(&s, &v("8.1.0"), TrackChoice::Auto, TODAY, None);
        assert_eq!(current.state, LineState::Supported);
        assert!(current.current_release && !current.schedule_stale);
        assert_eq!(current.opened, None, "8.1.0's date is not documented");
        let newer = assess(&s, &v("8.2.0"), TrackChoice::Auto, TODAY, None);
        assert!(newer.schedule_stale && newer.current_release);
        assert_eq!(newer.state, LineState::Supported);
    }

    /// oCIS 8.1.0 is documented without a date: 8.0's support ended on a day nobody can name.
    /// It is neither supported nor, on a guess, end of life; it moves to 8.1.0.
    #[test]
    fn a_line_whose_successor_is_undated_has_an_unknown_support_end() {
        let s = ReleaseSchedule::bundled(ProductFamily::InfiniteScale);
        let l = assess(&s, &v("8.0.5"), TrackChoice::Auto, TODAY, Some(30));
        assert_eq!(l.state, LineState::Unknown);
        assert_eq!(l.track, Some(Track::Production));
        assert_eq!((l.support_end, l.support_days_left), (None, None));
        assert_eq!(l.latest_in_line, Some(v("8.0.5")));
        assert_eq!(l.upgrade_target, Some(v("8.1.0")));
        assert!(!l.current_release);
        // An older line whose successor is dated keeps its known end.
        let seven = assess(&s, &v("7.3.2"), TrackChoice::Auto, TODAY, None);
        assert_eq!(seven.state, LineState::EndOfLife);
        assert_eq!(seven.support_end, Some(date(2026, 2, 13)));
        assert_eq!(seven.upgrade_target, Some(v("8.1.0")));
    }

    /// On the lts track, an older LTS line is a line behind once a newer LTS line is out: its
    /// own newest patch is no longer where to go (spec: "3 a whole release line behind").
    #[test]
    fn an_older_lts_line_is_a_line_behind_a_newer_one() {
        let two_lts = ReleaseSchedule::parse(
            r#"{"updated": "2026-11-01", "entries": [
                {"line": "4.0", "track": "lts", "opened": "2025-12-01", "current": "4.0.8",
                 "support_end": "2027-12-01"},
                {"line": "6.0", "track": "lts", "opened": "2026-06-01", "current": "6.0.3",
                 "support_end": "2028-06-01"},
                {"line": "6.1", "track": "rolling", "opened": "2026-07-01", "current": "6.1.0",
                 "support_end": null}
            ]}"#,
            ProductFamily::OpenCloud,
        )
        .unwrap();
        let lts = TrackChoice::Fixed(Track::Lts);
        let behind = assess(&two_lts, &v("4.0.8"), lts, TODAY, None);
        assert_eq!(behind.state, LineState::Supported);
        assert_eq!(behind.latest_in_line, Some(v("4.0.8")));
        assert_eq!(behind.upgrade_target, Some(v("6.0.3")));
        assert_eq!(behind.move_to, Some((v("6.0.3"), Track::Lts)));
        assert!(!behind.current_release);
        // Chosen automatically, 4.0 is on its LTS track too.
        let detected = assess(&two_lts, &v("4.0.8"), TrackChoice::Auto, TODAY, None);
        assert_eq!(detected.upgrade_target, Some(v("6.0.3")));
        // The newest LTS line stays on its line: its newest patch.
        let newest = assess(&two_lts, &v("6.0.1"), lts, TODAY, None);
        assert_eq!(newest.upgrade_target, Some(v("6.0.3")));
        assert!(assess(&two_lts, &v("6.0.3"), lts, TODAY, None).current_release);
        // With one LTS line (the bundled schedule), 4.0 keeps its own newest patch.
        assert_eq!(auto("4.0.3").upgrade_target, Some(v("4.0.8")));
    }

    #[test]
    fn line_states_serialize_for_reports() {
        assert_eq!(
            serde_json::to_value(LineState::EndingSoon).unwrap(),
            "ending_soon"
        );
        assert_eq!(
            serde_json::to_value(LineState::EndOfLife).unwrap(),
            "end_of_life"
        );
    }
}
