//! The release schedule: which lines exist on which track, since when, their newest release and
//! when their support ends.
//!
//! Neither product publishes support end dates, so `support_end` in the bundled files is our
//! policy (stated in each file's `_note`): a rolling line is supported until the next rolling
//! line opens, a production line until the next production line opens, an LTS line for 730
//! days after it opened. Where the successor is known to exist but its release date is not
//! (oCIS 8.1.0), the file says `"support_end": "unknown"` and the successor `"opened":
//! "unknown"`: the line is then neither called supported nor end of life.

use super::{ProductFamily, Track, parse_version};
use jiff::civil::Date;
use semver::Version;
use serde::Deserialize;

/// One release line on one track. A line published on two tracks (OpenCloud 4.0 on production
/// and LTS) has two entries, because each track ends its support at a different time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleEntry {
    /// `(major, minor)`.
    pub line: (u64, u64),
    pub track: Track,
    /// Date of the line's first release; `None` when the release is documented but its date
    /// is not.
    pub opened: Option<Date>,
    /// The newest release of the line (on any track).
    pub current: Version,
    /// The first day WITHOUT support: support ends at the start of this day, the day the
    /// successor opens. `None`: supported until its successor on this track opens, which has
    /// not happened yet, unless `support_end_unknown`.
    pub support_end: Option<Date>,
    /// The successor on this track was released on a date nobody documented: support ended
    /// or ends at a day we cannot name.
    pub support_end_unknown: bool,
}

impl ScheduleEntry {
    /// Whether the line still has support on `today` (support ends at the start of
    /// `support_end`). A line whose end is unknown is never called supported.
    pub fn supported_on(&self, today: Date) -> bool {
        !self.support_end_unknown && self.support_end.is_none_or(|end| today < end)
    }

    /// The line as `major.minor`, as users and the schedule file write it.
    pub fn line_text(&self) -> String {
        format!("{}.{}", self.line.0, self.line.1)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReleaseSchedule {
    pub family: ProductFamily,
    /// When the schedule was last brought up to date; releases after it are unknown to it.
    pub updated: Date,
    pub entries: Vec<ScheduleEntry>,
}

/// Why a schedule file was rejected: one line that says how to fix it.
type ScheduleError = String;

#[derive(Deserialize)]
struct RawSchedule {
    product: Option<String>,
    updated: String,
    #[serde(alias = "lines")]
    entries: Vec<RawEntry>,
}

/// What a schedule file writes for a date that is not documented.
const UNKNOWN: &str = "unknown";

#[derive(Deserialize)]
struct RawEntry {
    line: String,
    track: String,
    opened: String,
    current: String,
    support_end: Option<String>,
}

/// Strict `YYYY-MM-DD`: jiff also reads other ISO 8601 spellings, and a schedule that mixes
/// them is more likely a mistake than a choice.
fn parse_date(text: &str) -> Option<Date> {
    let b = text.as_bytes();
    let shape_ok = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        });
    if !shape_ok {
        return None;
    }
    text.parse().ok()
}

fn parse_line(text: &str) -> Option<(u64, u64)> {
    let (major, minor) = text.trim().split_once('.')?;
    let num = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    Some((num(major)?, num(minor)?))
}

impl ReleaseSchedule {
    /// Reads a schedule file (`{"updated": "YYYY-MM-DD", "entries": [{"line", "track",
    /// "opened", "current", "support_end"}]}`). Every entry is checked, because a wrong entry
    /// silently changes whether an instance is called end of life.
    pub fn parse(text: &str, family: ProductFamily) -> Result<ReleaseSchedule, ScheduleError> {
        let raw: RawSchedule = serde_json::from_str(text).map_err(|e| {
            format!(
                "release schedule is not valid ({e}): expected {{\"updated\": \"YYYY-MM-DD\", \"entries\": [{{\"line\": \"4.0\", \"track\": \"lts\", \"opened\": \"YYYY-MM-DD\" or \"unknown\", \"current\": \"4.0.8\", \"support_end\": \"YYYY-MM-DD\", \"unknown\" or null}}]}}"
            )
        })?;
        if let Some(product) = raw.product.as_deref().map(str::trim)
            && !product.eq_ignore_ascii_case(family.id())
        {
            return Err(format!(
                "release schedule is for product \"{product}\", not {}: use a {} schedule (\"product\": \"{}\")",
                family.display_name(),
                family.display_name(),
                family.id()
            ));
        }
        let updated = parse_date(&raw.updated).ok_or_else(|| {
            format!(
                "release schedule `updated` \"{}\" is not a date: write it as YYYY-MM-DD",
                raw.updated
            )
        })?;
        let mut entries: Vec<ScheduleEntry> = Vec::with_capacity(raw.entries.len());
        for (index, e) in raw.entries.iter().enumerate() {
            let at = format!("release schedule entry {} (line \"{}\")", index + 1, e.line);
            let fail = |what: String| format!("{at}: {what}");
            let line = parse_line(&e.line).ok_or_else(|| {
                fail("the line is not MAJOR.MINOR: write it like \"4.0\"".to_string())
            })?;
            let track = Track::parse(&e.track).ok_or_else(|| {
                fail(format!(
                    "unknown track \"{}\": use rolling, production or lts",
                    e.track
                ))
            })?;
            let date = |field: &str, text: &str| {
                parse_date(text).ok_or_else(|| {
                    fail(format!(
                        "`{field}` \"{text}\" is not a date: write it as YYYY-MM-DD"
                    ))
                })
            };
            let opened = match e.opened.trim() {
                UNKNOWN => None,
                text => Some(date("opened", text)?),
            };
            let (support_end, support_end_unknown) = match e.support_end.as_deref().map(str::trim) {
                Some(UNKNOWN) => (None, true),
                Some(text) => (Some(date("support_end", text)?), false),
                None => (None, false),
            };
            let current = parse_version(&e.current).ok_or_else(|| {
                fail(format!(
                    "`current` \"{}\" is not a version: write it like \"4.0.8\"",
                    e.current
                ))
            })?;
            if (current.major, current.minor) != line {
                return Err(fail(format!(
                    "`current` {current} is not in line {}.{}: give the newest release of that line",
                    line.0, line.1
                )));
            }
            if let (Some(end), Some(opened)) = (support_end, opened)
                && end <= opened
            {
                return Err(fail(format!(
                    "`support_end` {end} is not after `opened` {opened}: check both dates"
                )));
            }
            if entries.iter().any(|x| x.line == line && x.track == track) {
                return Err(fail(format!(
                    "line {}.{} is listed twice on the {track} track: keep one entry per line and track",
                    line.0, line.1
                )));
            }
            entries.push(ScheduleEntry {
                line,
                track,
                opened,
                current,
                support_end,
                support_end_unknown,
            });
        }
        if entries.is_empty() {
            return Err("release schedule has no entries: list at least one release line".into());
        }
        // An unknown end means a successor exists: without one, the end is not unknown but
        // still to come (null).
        for e in entries.iter().filter(|e| e.support_end_unknown) {
            if !entries
                .iter()
                .any(|x| x.track == e.track && x.line > e.line)
            {
                return Err(format!(
                    "release schedule line {} ({}): `support_end` \"unknown\" needs a newer {} line \
                     in the schedule; write null while no successor is released",
                    e.line_text(),
                    e.track,
                    e.track
                ));
            }
        }
        Ok(ReleaseSchedule {
            family,
            updated,
            entries,
        })
    }

    /// The schedule shipped inside the package.
    pub fn bundled(family: ProductFamily) -> ReleaseSchedule {
        let text = family.describe().release_schedule;
        // The bundled files are checked by the unit tests; a broken one is a build defect.
        ReleaseSchedule::parse(text, family).expect("bundled release schedule is valid")
    }

    pub fn entries_for_line(&self, line: (u64, u64)) -> Vec<&ScheduleEntry> {
        self.entries.iter().filter(|e| e.line == line).collect()
    }

    /// The newest release published on `track`.
    pub fn newest_on_track(&self, track: Track) -> Option<&Version> {
        self.entries
            .iter()
            .filter(|e| e.track == track)
            .map(|e| &e.current)
            .max()
    }

    /// The newest release the schedule knows on any track.
    pub fn newest_overall(&self) -> Option<&Version> {
        self.entries.iter().map(|e| &e.current).max()
    }

    /// The newest line the schedule knows.
    pub fn newest_line(&self) -> Option<(u64, u64)> {
        self.entries.iter().map(|e| e.line).max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn with_entry(entry: &str) -> String {
        format!(r#"{{"updated": "2026-10-12", "entries": [{entry}]}}"#)
    }

    const GOOD: &str = r#"{"line": "4.0", "track": "lts", "opened": "2025-12-01", "current": "4.0.8", "support_end": "2027-12-01"}"#;

    #[test]
    fn bundled_opencloud_schedule() {
        let s = ReleaseSchedule::bundled(ProductFamily::OpenCloud);
        assert_eq!(s.updated, date(2026, 10, 12));
        assert_eq!(s.newest_overall(), Some(&v("8.1.0")));
        assert_eq!(s.newest_on_track(Track::Production), Some(&v("7.2.4")));
        assert_eq!(s.newest_on_track(Track::Rolling), Some(&v("8.1.0")));
        assert_eq!(s.newest_on_track(Track::Lts), Some(&v("4.0.8")));
        assert_eq!(s.newest_line(), Some((8, 1)));

        let four = s.entries_for_line((4, 0));
        let tracks: Vec<Track> = four.iter().map(|e| e.track).collect();
        assert_eq!(tracks, [Track::Production, Track::Lts]);
        let lts = four.iter().find(|e| e.track == Track::Lts).unwrap();
        assert_eq!(lts.opened, Some(date(2025, 12, 1)));
        assert_eq!(lts.support_end, Some(date(2027, 12, 1)));
        assert_eq!(lts.current, v("4.0.8"));
        let prod = four.iter().find(|e| e.track == Track::Production).unwrap();
        assert_eq!(prod.support_end, Some(date(2026, 6, 25)));

        let end = |line, track| {
            s.entries
                .iter()
                .find(|e| e.line == line && e.track == track)
                .unwrap()
                .support_end
        };
        assert_eq!(end((2, 0), Track::Production), Some(date(2025, 12, 1)));
        assert_eq!(end((2, 0), Track::Rolling), Some(date(2025, 4, 7)));
        assert_eq!(end((7, 2), Track::Production), None);
        assert_eq!(end((7, 2), Track::Rolling), Some(date(2026, 7, 14)));
        assert_eq!(
            end((3, 7), Track::Rolling),
            Some(date(2025, 12, 15)),
            "rolling skipped 4.0"
        );
        assert_eq!(end((8, 1), Track::Rolling), None);
        assert!(s.entries_for_line((4, 2)).is_empty());
        // Every line from 1.0 to 8.1 that OpenCloud released (30 lines, 33 entries).
        assert_eq!(s.entries.len(), 33);
    }

    #[test]
    fn bundled_schedules_follow_the_support_policy() {
        for family in [ProductFamily::OpenCloud, ProductFamily::InfiniteScale] {
            let s = ReleaseSchedule::bundled(family);
            for e in &s.entries {
                // The next line on the track: its opening ends this line's support, on a day
                // that is unknown when the successor's date is.
                let successor = s
                    .entries
                    .iter()
                    .filter(|x| x.track == e.track && x.line > e.line)
                    .min_by_key(|x| x.line);
                if let Some(next) = successor
                    && next.opened.is_none()
                {
                    assert!(e.support_end_unknown, "{family:?} {:?}", e.line);
                    assert_eq!(e.support_end, None);
                    continue;
                }
                assert!(!e.support_end_unknown, "{family:?} {:?}", e.line);
                let successor = successor.and_then(|x| x.opened);
                match e.track {
                    Track::Lts => assert_eq!(
                        e.support_end,
                        e.opened
                            .and_then(|o| o.checked_add(jiff::Span::new().days(730)).ok())
                    ),
                    // oCIS's last rolling line hands over to the production track.
                    _ if family == ProductFamily::InfiniteScale && e.line == (6, 6) => {
                        assert_eq!(e.support_end, Some(date(2024, 12, 17)))
                    }
                    _ => assert_eq!(e.support_end, successor, "{family:?} {:?}", e.line),
                }
            }
        }
    }

    #[test]
    fn bundled_ocis_schedule() {
        let s = ReleaseSchedule::bundled(ProductFamily::InfiniteScale);
        assert_eq!(s.family, ProductFamily::InfiniteScale);
        assert!(
            s.entries.iter().all(|e| e.track != Track::Lts),
            "oCIS has no LTS"
        );
        assert_eq!(s.newest_on_track(Track::Production), Some(&v("8.1.0")));
        assert_eq!(s.newest_on_track(Track::Rolling), Some(&v("6.6.1")));
        let eight = s.entries_for_line((8, 0));
        assert!(eight[0].support_end_unknown && eight[0].support_end.is_none());
        assert!(
            !eight[0].supported_on(date(2026, 3, 1)),
            "never called supported"
        );
        let eight_one = s.entries_for_line((8, 1));
        assert_eq!(eight_one[0].opened, None);
        assert!(eight_one[0].supported_on(date(2026, 11, 22)));
        let five = s.entries_for_line((5, 0));
        assert_eq!(five.len(), 1);
        assert_eq!(five[0].support_end, Some(date(2024, 12, 17)));
    }

    #[test]
    fn unknown_dates_are_read_and_an_unknown_end_needs_a_successor() {
        let two = r#"{"updated": "2026-10-12", "entries": [
            {"line": "8.0", "track": "production", "opened": "2026-02-13", "current": "8.0.5", "support_end": "unknown"},
            {"line": "8.1", "track": "production", "opened": "unknown", "current": "8.1.0", "support_end": null}]}"#;
        let s = ReleaseSchedule::parse(two, ProductFamily::InfiniteScale).unwrap();
        assert!(s.entries[0].support_end_unknown);
        assert_eq!(s.entries[1].opened, None);
        let alone = with_entry(
            r#"{"line": "8.0", "track": "production", "opened": "2026-02-13", "current": "8.0.5", "support_end": "unknown"}"#,
        );
        let err = ReleaseSchedule::parse(&alone, ProductFamily::InfiniteScale).unwrap_err();
        assert!(
            err.as_str()
                .contains("`support_end` \"unknown\" needs a newer production line"),
            "{err}"
        );
        let garbled = with_entry(
            r#"{"line": "8.0", "track": "production", "opened": "someday", "current": "8.0.5"}"#,
        );
        let err = ReleaseSchedule::parse(&garbled, ProductFamily::InfiniteScale).unwrap_err();
        assert!(
            err.as_str().contains("`opened` \"someday\" is not a date"),
            "{err}"
        );
    }

    #[test]
    fn support_ends_at_the_start_of_the_day() {
        let s = ReleaseSchedule::parse(&with_entry(GOOD), ProductFamily::OpenCloud).unwrap();
        let e = &s.entries[0];
        assert!(e.supported_on(date(2027, 11, 30)));
        assert!(!e.supported_on(date(2027, 12, 1)));
        assert_eq!(e.line_text(), "4.0");
    }

    #[test]
    fn accepts_null_or_missing_support_end_and_the_lines_alias() {
        let text = r#"{"updated": "2026-10-12", "product": "opencloud", "lines": [
            {"line": "8.1", "track": "rolling", "opened": "2026-10-05", "current": "v8.1.0", "support_end": null},
            {"line": "7.2", "track": "Production", "opened": "2026-06-25", "current": "7.2.4"}]}"#;
        let s = ReleaseSchedule::parse(text, ProductFamily::OpenCloud).unwrap();
        assert_eq!(s.entries.len(), 2);
        assert!(s.entries.iter().all(|e| e.support_end.is_none()));
        assert_eq!(s.entries[1].track, Track::Production);
        assert_eq!(s.entries[0].current, v("8.1.0"));
    }

    #[test]
    fn rejects_bad_entries_with_clear_messages() {
        let cases = [
            (
                GOOD.replace("\"lts\"", "\"stable\""),
                "unknown track \"stable\"",
            ),
            (
                GOOD.replace("2025-12-01", "2025-13-01"),
                "`opened` \"2025-13-01\" is not a date",
            ),
            (GOOD.replace("2025-12-01", "01.12.2025"), "is not a date"),
            (GOOD.replace("2025-12-01", "20251201"), "is not a date"),
            (
                GOOD.replace("2027-12-01", "soon"),
                "`support_end` \"soon\" is not a date",
            ),
            (GOOD.replace("\"4.0\"", "\"4\""), "not MAJOR.MINOR"),
            (GOOD.replace("\"4.0\"", "\"4.0.1\""), "not MAJOR.MINOR"),
            (GOOD.replace("\"4.0\"", "\"four.0\""), "not MAJOR.MINOR"),
            (
                GOOD.replace("4.0.8", "4.1.0"),
                "`current` 4.1.0 is not in line 4.0",
            ),
            (
                GOOD.replace("4.0.8", "latest"),
                "`current` \"latest\" is not a version",
            ),
            (
                GOOD.replace("2027-12-01", "2025-11-01"),
                "is not after `opened`",
            ),
            (format!("{GOOD}, {GOOD}"), "listed twice on the lts track"),
        ];
        for (entry, expected) in cases {
            let err = ReleaseSchedule::parse(&with_entry(&entry), ProductFamily::OpenCloud)
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{entry}: {err}");
            assert!(err.starts_with("release schedule entry"), "{err}");
        }
        let others = [
            ("", "not valid"),
            ("{", "not valid"),
            (r#"{"entries": []}"#, "not valid"),
            (r#"{"updated": "2026-10-12", "entries": []}"#, "no entries"),
            (
                r#"{"updated": "yesterday", "entries": []}"#,
                "`updated` \"yesterday\" is not a date",
            ),
        ];
        for (text, expected) in others {
            let err = ReleaseSchedule::parse(text, ProductFamily::OpenCloud)
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
        let foreign =
            format!(r#"{{"product": "ocis", "updated": "2026-10-12", "entries": [{GOOD}]}}"#);
        let err = ReleaseSchedule::parse(&foreign, ProductFamily::OpenCloud).unwrap_err();
        assert!(err.to_string().contains("not OpenCloud"), "{err}");
    }
}
