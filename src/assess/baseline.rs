//! Baselines (`--baseline FILE`): what an earlier run found, so a run can tell what is new or
//! worse and, with `--warn-on-new`, alert only on that.
//!
//! The file holds one entry per host (keyed by `result.host`, so several hosts or several
//! service checks can share one file):
//!
//! ```json
//! {"version": 1, "hosts": {"cloud.example.com": {
//!     "recordedAt": "2026-11-22T03:00:00Z", "rating": 3,
//!     "failed": ["exposed:/opencloud.yaml"], "concluded": ["eol", "exposed:/opencloud.yaml"],
//!     "fingerprint": "9f86d081..."}}}
//! ```
//!
//! A host missing from the file is recorded on the run that first scans it successfully. After
//! that the entry only ever tightens, so the baseline keeps meaning "what was accepted":
//! a failure that later passes leaves `failed` (coming back is new again), the rating keeps the
//! best value seen, `concluded` gathers every check that ever reached a decision. New failures
//! are never absorbed: they alert until they are fixed or the file is deleted to record a new
//! baseline. `recordedAt` and the configuration fingerprint stay as recorded.

use crate::capped::{self, Reader, Shallow};
use crate::checks;
use crate::files::{self, Kind};
use crate::knowledge::lifecycle::LineState;
use crate::report::{Role, ScanResult, State, Status};
use crate::text::one_line;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// The version of the file format this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// Most hosts a baseline may hold, and most finding ids in all its entries. A host has about
/// 60 ids; the caps keep what a file takes in memory near its size however it is shaped (a
/// file of millions of two-letter ids would otherwise take ten times its size).
pub const MAX_HOSTS: usize = 4096;
pub const MAX_IDS: usize = 65_536;

/// What the baseline holds for one host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostEntry {
    /// When the entry was recorded (the `scannedAt` of that run).
    pub recorded_at: String,
    /// The accepted rating, 0-5 (the best seen since recording); `null` when it was unknown.
    pub rating: Option<u8>,
    /// Accepted failed findings (checks, hardening measures, version standing; not waived ones).
    #[serde(deserialize_with = "counted_ids")]
    pub failed: BTreeSet<String>,
    /// Checks that reached a decision (passed or failed).
    #[serde(deserialize_with = "counted_ids")]
    pub concluded: BTreeSet<String>,
    /// Digest of the configuration fingerprint as recorded.
    pub fingerprint: Option<String>,
    /// What the scanner knew when the entry was recorded, to tell later whether a change came
    /// from the instance or from knowledge; absent in entries recorded before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<RecordedConditions>,
}

/// The conditions of the recording run, as far as attributing a change needs them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedConditions {
    pub scanner_version: String,
    /// The product version the instance ran.
    pub version: Option<String>,
    pub schedule_updated: Option<jiff::civil::Date>,
    pub advisories_updated: Option<jiff::civil::Date>,
    /// Where the advisories came from (`bundled`, files, the feed).
    #[serde(default)]
    pub advisory_sources: Vec<String>,
    /// Failed findings a waiver hid.
    #[serde(deserialize_with = "counted_ids")]
    pub waived: BTreeSet<String>,
}

pub use crate::report::{BaselineComparison, Change, ChangeCause as Cause};

/// The stored baseline file: one entry per host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    hosts: BTreeMap<String, HostEntry>,
}

/// The file as written (version 1).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File1 {
    version: u64,
    #[serde(deserialize_with = "counted_hosts")]
    hosts: BTreeMap<String, HostEntry>,
}

/// The file as it is written back: the entries of the previous file, by reference, with the
/// entries this run changed. Serializes like [`File1`].
#[derive(Serialize)]
struct FileView<'a> {
    version: u64,
    hosts: BTreeMap<&'a str, &'a HostEntry>,
}

impl Baseline {
    /// An empty baseline when the file does not exist yet (every host is recorded on this
    /// run); an unreadable, corrupt, oversized or foreign file is an error naming the file and
    /// the fix, never a silent reset. Anything but a regular file is refused unread
    /// (`crate::files`).
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let bytes = match files::read(path, Kind::Baseline) {
            Ok(bytes) => bytes,
            Err(refusal) if refusal.is_missing() => return Ok(Baseline::default()),
            Err(refusal) => return Err(refusal.line(&path.display().to_string())),
        };
        Baseline::parse(&bytes).map_err(|what| {
            format!(
                "baseline file {} {}; delete it to record a new baseline",
                path.display(),
                one_line(&what)
            )
        })
    }

    /// Reads the file's content; `Err` says what is wrong with it. Typed throughout: the
    /// `version` member is looked at first (the rest skipped unread), then the entries are
    /// read within [`MAX_HOSTS`] and [`MAX_IDS`].
    fn parse(bytes: &[u8]) -> Result<Baseline, String> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let version = capped::read(&mut de, VersionProbe)
            .and_then(|version| de.end().map(|()| version))
            .map_err(|e| match e.classify() {
                serde_json::error::Category::Data => {
                    "is not a baseline (no JSON object)".to_string()
                }
                _ => format!("is not valid JSON ({e})"),
            })?;
        match version {
            Some(Shallow::Number(n)) if n == FORMAT_VERSION.to_string() => {}
            Some(seen) => {
                return Err(format!(
                    "has version {}; this check reads baseline version {FORMAT_VERSION}",
                    version_text(&seen)
                ));
            }
            None => return Err("is not a baseline (no \"version\" member)".into()),
        }
        let file: File1 = Counting::run(|| serde_json::from_slice(bytes)).map_err(|e| {
            e.unwrap_or_else(|e| format!("is not a baseline of version {FORMAT_VERSION} ({e})"))
        })?;
        for (host, entry) in &file.hosts {
            if entry.rating.is_some_and(|r| r > 5) {
                return Err(format!(
                    "is not a baseline of version {FORMAT_VERSION} (rating of {host} outside 0-5)"
                ));
            }
            if entry.recorded_at.parse::<jiff::Timestamp>().is_err() {
                return Err(format!(
                    "is not a baseline of version {FORMAT_VERSION} (recordedAt of {host} is no \
                     timestamp)"
                ));
            }
        }
        Ok(Baseline { hosts: file.hosts })
    }

    /// Compares one result with its host's entry (`None`: the host is recorded on this run).
    pub fn compare(entry: Option<&HostEntry>, result: &ScanResult) -> BaselineComparison {
        let Some(entry) = entry else {
            return BaselineComparison {
                recorded: true,
                ..BaselineComparison::default()
            };
        };
        let new_findings: Vec<String> = failed_ids(result)
            .into_iter()
            .filter(|id| !entry.failed.contains(id))
            .collect();
        let worse_rating =
            matches!((entry.rating, result.rating), (Some(before), Some(now)) if now < before);
        let inconclusive_now = once_each(
            result
                .findings
                .iter()
                .filter(|f| {
                    rated_role(f.role)
                        && !f.ignored
                        && matches!(f.status, Status::Indeterminate | Status::NetworkLimited)
                        && entry.concluded.contains(&f.id)
                })
                .map(|f| f.id.clone()),
        );
        let fingerprint_drift = matches!(
            (&entry.fingerprint, fingerprint_of(result)),
            (Some(before), Some(now)) if *before != now
        );
        let changes = explain(
            entry,
            result,
            &new_findings,
            worse_rating,
            fingerprint_drift,
        );
        BaselineComparison {
            recorded: false,
            new_findings,
            worse_rating,
            inconclusive_now,
            fingerprint_drift,
            changes,
            recorded_on: date_of(&entry.recorded_at),
        }
    }

    /// Compares one host's result with its entry, sets `result.baseline`, and applies the
    /// verdict rules of baselines (the last step of the assessment, after the policy). A failed
    /// scan is left alone. Only `state` and `message` change: rating, performance data and
    /// findings stay as assessed.
    ///
    /// - With `warn_on_new`, a WARNING or CRITICAL with nothing new or worse reports OK (the
    ///   message keeps the normal verdict); a new failed finding or a lower rating keeps the
    ///   normal state, and so do end of life (always) and an unmet policy requirement (applied
    ///   before: a policy only worsens a verdict).
    /// - A check that concluded in the baseline and is inconclusive now turns OK into WARNING,
    ///   also after `warn_on_new` made it OK.
    /// - Drift of the configuration fingerprint is reported in the comparison only.
    ///
    /// A host recorded on this run has nothing to compare with and keeps its normal verdict.
    pub fn judge(&self, result: &mut ScanResult, warn_on_new: bool) {
        if result.error.is_some() {
            return;
        }
        let entry = self.hosts.get(&result.host);
        let comparison = Baseline::compare(entry, result);
        if let Some(entry) = entry {
            if warn_on_new
                && matches!(result.state, State::Warning | State::Critical)
                && comparison.new_findings.is_empty()
                && !comparison.worse_rating
                && !end_of_life(result)
                // A policy only worsens a verdict: an unmet requirement is never excused.
                && result.policy.as_ref().is_none_or(|p| p.met)
            {
                let since = match date_of(&entry.recorded_at) {
                    Some(date) => format!("nothing new or worse since the baseline of {date}"),
                    None => "nothing new or worse since the baseline".to_string(),
                };
                let text = format!(
                    "{since} (normally {}: {})",
                    result.state.label(),
                    result.message
                );
                result.set_causes(vec![crate::report::Cause::new(text, since)]);
                result.state = State::Ok;
            }
            if !comparison.inconclusive_now.is_empty() {
                let count = comparison.inconclusive_now.len();
                let mut causes = result.take_causes();
                causes.push(crate::report::Cause::new(
                    format!(
                        "{count} check(s) concluded before are inconclusive now: {}",
                        comparison.inconclusive_now.join(", ")
                    ),
                    format!("{count} check(s) inconclusive now"),
                ));
                result.set_causes(causes);
                if result.state == State::Ok {
                    result.state = State::Warning;
                }
            }
        }
        result.baseline = Some(comparison);
    }

    /// The entries this run changes (see the module documentation): hosts recorded for the
    /// first time and known hosts whose entry tightens; hosts not scanned, and hosts whose scan
    /// failed, keep theirs. A host listed twice tightens the entry of its first scan.
    fn changes(&self, results: &[ScanResult]) -> BTreeMap<String, HostEntry> {
        let mut changed: BTreeMap<String, HostEntry> = BTreeMap::new();
        for result in results.iter().filter(|r| r.error.is_none()) {
            let before = changed
                .get(&result.host)
                .or_else(|| self.hosts.get(&result.host));
            let entry = match before {
                Some(entry) => tightened(entry, result),
                None => recorded(result),
            };
            if before != Some(&entry) {
                changed.insert(result.host.clone(), entry);
            }
        }
        changed
    }

    /// Writes the baseline of these results atomically: a temporary file in the same
    /// directory, flushed to disk, renamed over the target, then the directory flushed. A run
    /// killed at any point leaves the old file or the new one, never a mix. Nothing is written
    /// when nothing changed, or when there is nothing to record yet. The file is written
    /// from the previous entries and the changed ones as they are: no second copy of the
    /// baseline and no text of the whole file is held in memory.
    pub fn save(&self, path: &Path, results: &[ScanResult]) -> Result<(), String> {
        let changed = self.changes(results);
        if changed.is_empty() {
            return Ok(());
        }
        let mut hosts: BTreeMap<&str, &HostEntry> =
            self.hosts.iter().map(|(h, e)| (h.as_str(), e)).collect();
        hosts.extend(changed.iter().map(|(h, e)| (h.as_str(), e)));
        let view = FileView {
            version: FORMAT_VERSION,
            hosts,
        };
        write_atomically(path, |file| {
            let mut out = io::BufWriter::new(file);
            serde_json::to_writer_pretty(&mut out, &view)?;
            out.write_all(b"\n")?;
            out.flush()
        })
    }
}

/// Reads the `version` member of a file, if it has one; everything else is skipped unread. A
/// document that is not an object is an error.
struct VersionProbe;

impl<'de> Reader<'de> for VersionProbe {
    type Value = Option<Shallow>;

    fn shallow<E: de::Error>(self, _: Shallow) -> Result<Option<Shallow>, E> {
        Err(E::custom("not a JSON object"))
    }

    fn list<A: SeqAccess<'de>>(self, _: A) -> Result<Option<Shallow>, A::Error> {
        Err(de::Error::custom("not a JSON object"))
    }

    fn mapping<A: MapAccess<'de>>(self, map: A) -> Result<Option<Shallow>, A::Error> {
        let mut version = None;
        capped::each_member(map, |key, map| {
            if key != "version" {
                return Ok(false);
            }
            version = Some(map.next_value()?);
            Ok(true)
        })?;
        Ok(version)
    }
}

/// A version as written, shown as JSON (`2`, `1.0`, `"1"`, `[...]`).
fn version_text(seen: &Shallow) -> String {
    match seen {
        Shallow::Null => "null".into(),
        Shallow::Bool(b) => b.to_string(),
        Shallow::Number(n) => n.clone(),
        Shallow::Text(text) => {
            let shown: String = text.chars().take(40).collect();
            serde_json::to_string(&shown).unwrap_or_default()
        }
        Shallow::List => "[...]".into(),
        Shallow::Mapping => "{...}".into(),
    }
}

thread_local! {
    /// Hosts and finding ids the file being read may still add, and the problem once one of
    /// them ran out. Only [`Counting::run`] sets them; serde's derive gives the entries no
    /// other way to share a count.
    static LEFT: Cell<[usize; 2]> = const { Cell::new([usize::MAX; 2]) };
    static EXCEEDED: Cell<Option<Names>> = const { Cell::new(None) };
}

/// What a file may hold only so many of (the index of its count in `LEFT`).
#[derive(Clone, Copy)]
enum Names {
    Hosts = 0,
    Ids = 1,
}

/// Counts the hosts and ids of one parse against [`MAX_HOSTS`] and [`MAX_IDS`].
struct Counting;

impl Counting {
    /// Runs `parse` with fresh counts; `Err(Ok(problem))` when a count ran out.
    fn run<T>(
        parse: impl FnOnce() -> Result<T, serde_json::Error>,
    ) -> Result<T, Result<String, serde_json::Error>> {
        LEFT.set([MAX_HOSTS, MAX_IDS]);
        EXCEEDED.set(None);
        let parsed = parse();
        LEFT.set([usize::MAX; 2]);
        match (parsed, EXCEEDED.take()) {
            (Ok(value), _) => Ok(value),
            (Err(_), Some(Names::Hosts)) => Err(Ok(format!("holds more than {MAX_HOSTS} hosts"))),
            (Err(_), Some(Names::Ids)) => Err(Ok(format!(
                "holds more than {MAX_IDS} finding ids (hosts hold about 60 each)"
            ))),
            (Err(e), None) => Err(Err(e)),
        }
    }

    fn spend<E: de::Error>(names: Names) -> Result<(), E> {
        let mut left = LEFT.get();
        let Some(rest) = left[names as usize].checked_sub(1) else {
            EXCEEDED.set(Some(names));
            return Err(E::custom("too many names"));
        };
        left[names as usize] = rest;
        LEFT.set(left);
        Ok(())
    }
}

fn counted_hosts<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, HostEntry>, D::Error> {
    struct Hosts;
    impl<'de> Visitor<'de> for Hosts {
        type Value = BTreeMap<String, HostEntry>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of hosts")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut hosts = BTreeMap::new();
            while let Some(host) = map.next_key::<String>()? {
                Counting::spend(Names::Hosts)?;
                hosts.insert(host, map.next_value()?);
            }
            Ok(hosts)
        }
    }
    deserializer.deserialize_map(Hosts)
}

fn counted_ids<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeSet<String>, D::Error> {
    struct Ids;
    impl<'de> Visitor<'de> for Ids {
        type Value = BTreeSet<String>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of finding ids")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut ids = BTreeSet::new();
            while let Some(id) = seq.next_element::<String>()? {
                Counting::spend(Names::Ids)?;
                ids.insert(id);
            }
            Ok(ids)
        }
    }
    deserializer.deserialize_seq(Ids)
}

/// Roles whose failures the baseline tracks; observations never count.
fn rated_role(role: Role) -> bool {
    matches!(role, Role::Check | Role::Hardening | Role::Version)
}

/// Failed findings that count for the baseline (not waived), in result order, once each.
fn failed_ids(result: &ScanResult) -> Vec<String> {
    let failed = result
        .findings
        .iter()
        .filter(|f| rated_role(f.role) && f.status == Status::Failed && !f.ignored);
    once_each(failed.map(|f| f.id.clone()))
}

/// The ids in their order, each once.
fn once_each(ids: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    ids.filter(|id| seen.insert(id.clone())).collect()
}

fn concluded_ids(result: &ScanResult) -> BTreeSet<String> {
    result
        .findings
        .iter()
        .filter(|f| rated_role(f.role) && matches!(f.status, Status::Passed | Status::Failed))
        .map(|f| f.id.clone())
        .collect()
}

fn fingerprint_of(result: &ScanResult) -> Option<String> {
    result
        .configuration_fingerprint
        .as_ref()
        .map(|f| f.digest.clone())
}

fn end_of_life(result: &ScanResult) -> bool {
    result
        .lifecycle
        .as_ref()
        .is_some_and(|l| l.state == LineState::EndOfLife)
        || result
            .findings
            .iter()
            .any(|f| f.id == checks::EOL.id && f.status == Status::Failed)
}

fn recorded(result: &ScanResult) -> HostEntry {
    HostEntry {
        recorded_at: result.scanned_at.to_string(),
        rating: result.rating.filter(|r| *r <= 5),
        failed: failed_ids(result).into_iter().collect(),
        concluded: concluded_ids(result),
        fingerprint: fingerprint_of(result),
        conditions: recorded_conditions(result),
    }
}

/// The conditions of `result` as a baseline keeps them.
fn recorded_conditions(result: &ScanResult) -> Option<RecordedConditions> {
    let c = result.conditions.as_ref()?;
    Some(RecordedConditions {
        scanner_version: c.scanner_version.clone(),
        version: result.product.as_ref().map(|p| p.version.clone()),
        schedule_updated: c.schedule_updated,
        advisories_updated: c.advisories_updated,
        advisory_sources: c.advisory_sources.clone(),
        waived: result
            .findings
            .iter()
            .filter(|f| f.ignored && f.status == Status::Failed)
            .map(|f| f.id.clone())
            .collect(),
    })
}

/// Why each new failure (and a lower rating without one) appeared since `entry`.
fn explain(
    entry: &HostEntry,
    result: &ScanResult,
    new_findings: &[String],
    worse_rating: bool,
    fingerprint_drift: bool,
) -> Vec<Change> {
    let change = |id: &str, cause: Cause, detail: String| Change {
        id: id.to_string(),
        cause,
        detail,
    };
    let Some(then) = &entry.conditions else {
        let why = "the baseline was recorded before scan conditions were kept; record a new one \
                   to tell the instance from knowledge";
        let mut all: Vec<Change> = new_findings
            .iter()
            .map(|id| change(id, Cause::Unknown, why.into()))
            .collect();
        if worse_rating && new_findings.is_empty() {
            all.push(change("rating", Cause::Unknown, why.into()));
        }
        return all;
    };
    let now_version = result.product.as_ref().map(|p| p.version.clone());
    let upgraded = (then.version != now_version).then(|| {
        format!(
            "the instance now runs {} (it ran {} at the baseline)",
            now_version.as_deref().unwrap_or("an unknown release"),
            then.version.as_deref().unwrap_or("an unknown release")
        )
    });
    let detail_of = |id: &str| {
        result
            .findings
            .iter()
            .find(|f| f.id == id)
            .map(|f| f.detail.clone())
            .unwrap_or_default()
    };
    let mut all = Vec::new();
    for id in new_findings {
        let spec_id = crate::checks::spec(id).map(|s| s.id).unwrap_or(id.as_str());
        let advisory = checks::VULNERABILITY.member_of(id);
        // The version's standing (an advisory, end of life) of another release: the instance
        // changed.
        let c = if let Some(upgrade) = upgraded
            .as_ref()
            .filter(|_| advisory.is_some() || id == checks::EOL.id)
        {
            change(id, Cause::Instance, upgrade.clone())
        } else if let Some(advisory) = advisory {
            // The same release, newly matched: the advisory data changed (learned, or its
            // ranges widened).
            let now = result.conditions.as_ref();
            change(
                id,
                Cause::Knowledge,
                format!(
                    "{advisory} matches the same release since the baseline: the advisory data \
                     changed (advisories now from {}, bundled data of {}; then from {}, of {})",
                    now.map(|c| c.advisory_sources.join(", "))
                        .unwrap_or_default(),
                    date_or_unknown(now.and_then(|c| c.advisories_updated)),
                    then.advisory_sources.join(", "),
                    date_or_unknown(then.advisories_updated),
                ),
            )
        } else if id == checks::EOL.id {
            change(id, Cause::Knowledge, detail_of(id))
        } else if then.waived.contains(id) {
            change(
                id,
                Cause::Waiver,
                "a waiver hid it at the baseline; it expired or was removed".into(),
            )
        } else if !entry.concluded.contains(id.as_str())
            && !entry.concluded.contains(spec_id)
            && then.scanner_version != env!("CARGO_PKG_VERSION")
        {
            // Never decided at the baseline, and another scanner version since: the check is
            // new (an existing check would have passed or failed then).
            change(
                id,
                Cause::Scanner,
                format!(
                    "the check is new in this scanner ({}; the baseline was recorded by {})",
                    env!("CARGO_PKG_VERSION"),
                    then.scanner_version
                ),
            )
        } else {
            let mut why = format!("the instance changed: {}", detail_of(id));
            if fingerprint_drift {
                why.push_str(" (its configuration fingerprint changed too)");
            }
            change(id, Cause::Instance, why)
        };
        all.push(c);
    }
    if worse_rating && new_findings.is_empty() {
        all.push(match upgraded {
            Some(upgrade) => change("rating", Cause::Instance, upgrade),
            None => change(
                "rating",
                Cause::Knowledge,
                "the same release stands lower: newer releases or changed data moved its \
                 standing"
                    .into(),
            ),
        });
    }
    all
}

/// A known host's entry after a successful scan: a failure that passes now leaves it, the
/// rating keeps the best value, concluded checks accumulate.
fn tightened(entry: &HostEntry, result: &ScanResult) -> HostEntry {
    let passed: BTreeSet<&str> = result
        .findings
        .iter()
        .filter(|f| f.status == Status::Passed)
        .map(|f| f.id.as_str())
        .collect();
    let mut concluded = entry.concluded.clone();
    concluded.extend(concluded_ids(result));
    HostEntry {
        recorded_at: entry.recorded_at.clone(),
        rating: entry.rating.max(result.rating.filter(|r| *r <= 5)),
        failed: entry
            .failed
            .iter()
            .filter(|id| !passed.contains(id.as_str()))
            .cloned()
            .collect(),
        concluded,
        fingerprint: entry.fingerprint.clone().or_else(|| fingerprint_of(result)),
        // Kept as recorded, like the date: the conditions the accepted state was judged under.
        conditions: entry
            .conditions
            .clone()
            .or_else(|| recorded_conditions(result)),
    }
}

/// `2026-11-22` of `2026-11-22T03:00:00Z` (a baseline's times are checked when it is read).
fn date_of(recorded_at: &str) -> Option<jiff::civil::Date> {
    let at = recorded_at.parse::<jiff::Timestamp>().ok()?;
    Some(at.to_zoned(jiff::tz::TimeZone::UTC).date())
}

fn date_or_unknown(date: Option<jiff::civil::Date>) -> String {
    date.map_or_else(|| "an unknown date".into(), |d| d.to_string())
}

/// Replaces `path` with what `write` produces, atomically: the target is either its old
/// content or the complete new one (`atomic_file`, which also removes what killed runs left).
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(), String> {
    crate::atomic_file::replace(path, 0o666, write).map_err(|failure| {
        format!(
            "cannot save baseline file {}: {} ({})",
            path.display(),
            failure.step,
            one_line(&failure.error.to_string())
        )
    })
}

#[cfg(test)]
mod tests;
