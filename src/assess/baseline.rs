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
    pub schedule_updated: Option<String>,
    pub advisories_updated: Option<String>,
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
            recorded_on: Some(date_of(&entry.recorded_at)),
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
                let since = format!(
                    "nothing new or worse since the baseline of {}",
                    date_of(&entry.recorded_at)
                );
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
        recorded_at: result.scanned_at.clone(),
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
        schedule_updated: c.schedule_updated.clone(),
        advisories_updated: c.advisories_updated.clone(),
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
                    now.and_then(|c| c.advisories_updated.clone())
                        .unwrap_or_else(|| "an unknown date".into()),
                    then.advisory_sources.join(", "),
                    then.advisories_updated
                        .as_deref()
                        .unwrap_or("an unknown date"),
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

/// `2026-11-22` of `2026-11-22T03:00:00Z`; the text itself when it is no timestamp.
fn date_of(recorded_at: &str) -> String {
    recorded_at
        .parse::<jiff::Timestamp>()
        .map(|t| t.to_zoned(jiff::tz::TimeZone::UTC).date().to_string())
        .unwrap_or_else(|_| recorded_at.to_string())
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
mod tests {
    use super::*;
    use crate::checks::finding_for;
    use crate::output::metrics::testing::{failed, scanned};
    use crate::report::Fingerprint;
    use std::fs;
    use std::path::PathBuf;

    impl Baseline {
        /// The baseline `save` writes after a run of `results`.
        pub(crate) fn updated(&self, results: &[ScanResult]) -> Baseline {
            let mut next = self.clone();
            next.hosts.extend(self.changes(results));
            next
        }

        /// The hosts the baseline knows, sorted.
        fn hosts(&self) -> impl Iterator<Item = &str> {
            self.hosts.keys().map(String::as_str)
        }

        /// The file's text as `save` writes it.
        fn to_json(&self) -> String {
            let file = File1 {
                version: FORMAT_VERSION,
                hosts: self.hosts.clone(),
            };
            let mut text = serde_json::to_string_pretty(&file).unwrap();
            text.push('\n');
            text
        }
    }

    /// A healthy host: rating 5, OK, two passed checks, the `eol` check passed, fingerprint `f1`.
    fn healthy(host: &str) -> ScanResult {
        let mut r = scanned(host, "8.1.0", Some(200));
        r.message = "OpenCloud 8.1.0 is up to date and no check failed".into();
        r.findings = vec![
            finding_for("exposed:/opencloud.yaml", Status::Passed, "refused").unwrap(),
            finding_for("corsOriginRestricted", Status::Passed, "restricted").unwrap(),
            finding_for("directoryListing", Status::Passed, "no listing").unwrap(),
            finding_for("eol", Status::Passed, "release line 8.1 is supported").unwrap(),
        ];
        r.configuration_fingerprint = Some(fingerprint("f1"));
        r
    }

    fn fingerprint(digest: &str) -> Fingerprint {
        Fingerprint {
            short: digest.chars().take(8).collect(),
            digest: digest.into(),
            areas: BTreeMap::new(),
        }
    }

    fn set(r: &mut ScanResult, id: &str, status: Status) {
        let f = r.findings.iter_mut().find(|f| f.id == id).unwrap();
        f.status = status;
    }

    /// `exposed:/opencloud.yaml` failed (high): rating 3, WARNING.
    fn exposed(host: &str) -> ScanResult {
        let mut r = healthy(host);
        set(&mut r, "exposed:/opencloud.yaml", Status::Failed);
        r.rating = Some(3);
        r.grade = crate::report::grade(Some(3)).into();
        r.state = State::Warning;
        r.message = "exposed:/opencloud.yaml failed (high): served".into();
        r
    }

    fn with_cors_failed(mut r: ScanResult) -> ScanResult {
        set(&mut r, "corsOriginRestricted", Status::Failed);
        r.message
            .push_str("; corsOriginRestricted failed (medium): any origin");
        r
    }

    /// Judges `now` with a baseline recorded from `before`.
    fn compared(before: ScanResult, mut now: ScanResult, warn_on_new: bool) -> ScanResult {
        Baseline::default()
            .updated(&[before])
            .judge(&mut now, warn_on_new);
        now
    }

    /// A scratch directory, removed when the test ends.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    fn scratch(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cos-baseline-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn temp_files(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn the_first_run_records_and_keeps_the_normal_verdict() {
        let mut results = [exposed("a.example"), failed("down.example")];
        results
            .iter_mut()
            .for_each(|r| Baseline::default().judge(r, true));
        let comparison = results[0].baseline.clone().unwrap();
        assert!(comparison.recorded);
        assert_eq!(
            comparison,
            BaselineComparison {
                recorded: true,
                ..Default::default()
            }
        );
        assert_eq!(
            results[0].state,
            State::Warning,
            "nothing to compare with yet"
        );
        assert_eq!(
            results[0].message,
            "exposed:/opencloud.yaml failed (high): served"
        );
        // A failed scan gets no comparison and no entry.
        assert_eq!(results[1].baseline, None);
        assert_eq!(results[1].state, State::Unknown);

        let baseline = Baseline::default().updated(&results);
        assert_eq!(baseline.hosts().collect::<Vec<_>>(), ["a.example"]);
        let entry = baseline.hosts.get("a.example").unwrap();
        assert_eq!(entry.recorded_at, "2026-11-22T03:00:00Z");
        assert_eq!(entry.rating, Some(3));
        assert_eq!(
            entry.failed.iter().collect::<Vec<_>>(),
            ["exposed:/opencloud.yaml"]
        );
        assert_eq!(
            entry.concluded.iter().collect::<Vec<_>>(),
            [
                "corsOriginRestricted",
                "directoryListing",
                "eol",
                "exposed:/opencloud.yaml"
            ]
        );
        assert_eq!(entry.fingerprint.as_deref(), Some("f1"));
    }

    #[test]
    fn a_host_missing_from_the_file_is_recorded_on_this_run() {
        let previous = Baseline::default().updated(&[healthy("a.example")]);
        let mut results = [healthy("a.example"), healthy("b.example")];
        results.iter_mut().for_each(|r| previous.judge(r, false));
        assert!(!results[0].baseline.as_ref().unwrap().recorded);
        assert!(results[1].baseline.as_ref().unwrap().recorded);
    }

    #[test]
    fn a_second_run_with_nothing_new_compares_clean() {
        let r = compared(exposed("a.example"), exposed("a.example"), false);
        assert_eq!(
            r.baseline,
            Some(BaselineComparison {
                recorded_on: Some("2026-11-22".into()),
                ..BaselineComparison::default()
            })
        );
        assert_eq!(
            r.state,
            State::Warning,
            "without --warn-on-new nothing changes"
        );
        assert_eq!(r.message, "exposed:/opencloud.yaml failed (high): served");
    }

    #[test]
    fn a_new_failed_finding_is_listed_and_restores_the_normal_state() {
        let r = compared(
            exposed("a.example"),
            with_cors_failed(exposed("a.example")),
            true,
        );
        let b = r.baseline.unwrap();
        assert_eq!(b.new_findings, ["corsOriginRestricted"]);
        assert!(!b.worse_rating && !b.recorded);
        assert_eq!(r.state, State::Warning);
        assert!(
            r.message.starts_with("exposed:/opencloud.yaml failed"),
            "{}",
            r.message
        );
        assert_eq!(BaselineComparison::summary_cell(Some(&b)), "+1");
    }

    #[test]
    fn waived_failures_are_not_new_and_observations_never_count() {
        let mut now = healthy("a.example");
        set(&mut now, "corsOriginRestricted", Status::Failed);
        set(&mut now, "exposed:/opencloud.yaml", Status::Failed);
        now.findings[0].ignored = true;
        let mut observation =
            finding_for("loginThrottling", Status::Failed, "not throttled").unwrap();
        observation.role = Role::Observation;
        now.findings.push(observation);
        let r = compared(healthy("a.example"), now, false);
        assert_eq!(r.baseline.unwrap().new_findings, ["corsOriginRestricted"]);
    }

    #[test]
    fn a_lower_rating_is_worse_and_restores_the_normal_state() {
        let mut now = exposed("a.example");
        now.rating = Some(2);
        now.grade = crate::report::grade(Some(2)).into();
        let r = compared(exposed("a.example"), now, true);
        let b = r.baseline.unwrap();
        assert!(b.worse_rating);
        assert!(b.new_findings.is_empty());
        assert_eq!(r.state, State::Warning);
        assert_eq!(r.rating, Some(2));

        // A better rating is not worse.
        let r = compared(exposed("a.example"), healthy("a.example"), false);
        assert!(!r.baseline.unwrap().worse_rating);
    }

    #[test]
    fn warn_on_new_reports_ok_when_nothing_is_new_or_worse() {
        let r = compared(exposed("a.example"), exposed("a.example"), true);
        assert_eq!(r.state, State::Ok);
        assert_eq!(
            r.message,
            "nothing new or worse since the baseline of 2026-11-22 (normally WARNING: \
             exposed:/opencloud.yaml failed (high): served)"
        );
        // Rating, grade and findings stay as assessed.
        assert_eq!(r.rating, Some(3));
        assert_eq!(r.grade, "C");
        assert_eq!(r.failed_checks().count(), 1);
        assert_eq!(BaselineComparison::summary_cell(r.baseline.as_ref()), "+0");

        // CRITICAL too; an OK stays as it is.
        let mut critical = exposed("a.example");
        critical.state = State::Critical;
        let r = compared(critical.clone(), critical, true);
        assert_eq!(r.state, State::Ok);
        assert!(r.message.contains("(normally CRITICAL: "), "{}", r.message);
        let r = compared(healthy("a.example"), healthy("a.example"), true);
        assert_eq!(r.state, State::Ok);
        assert_eq!(
            r.message,
            "OpenCloud 8.1.0 is up to date and no check failed"
        );
    }

    #[test]
    fn warn_on_new_never_excuses_an_unmet_policy() {
        let mut now = exposed("a.example");
        now.state = State::Critical;
        now.message = format!(
            "policy requirement(s) unmet: rating C below A; {}",
            now.message
        );
        now.policy = Some(crate::report::PolicyVerdict {
            met: false,
            unmet: vec!["rating C below A".into()],
        });
        let r = compared(exposed("a.example"), now.clone(), true);
        assert_eq!(r.state, State::Critical);
        assert_eq!(r.message, now.message);
        // A met policy does not stand in the way.
        now.policy = Some(crate::report::PolicyVerdict {
            met: true,
            unmet: Vec::new(),
        });
        now.state = State::Warning;
        assert_eq!(compared(exposed("a.example"), now, true).state, State::Ok);
    }

    #[test]
    fn warn_on_new_never_hides_unknown() {
        let mut now = healthy("a.example");
        now.rating = None;
        now.state = State::Unknown;
        let r = compared(healthy("a.example"), now, true);
        assert_eq!(r.state, State::Unknown);
    }

    #[test]
    fn end_of_life_always_alerts() {
        let mut eol = healthy("a.example");
        eol.lifecycle.as_mut().unwrap().state = LineState::EndOfLife;
        set(&mut eol, "eol", Status::Failed);
        eol.rating = Some(0);
        eol.state = State::Critical;
        eol.message = "OpenCloud 8.1.0 is end of life".into();
        let r = compared(eol.clone(), eol.clone(), true);
        let b = r.baseline.unwrap();
        assert!(b.new_findings.is_empty() && !b.worse_rating);
        assert_eq!(r.state, State::Critical);
        assert_eq!(r.message, "OpenCloud 8.1.0 is end of life");

        // Also when only the finding says so (no lifecycle block).
        eol.lifecycle = None;
        let r = compared(eol.clone(), eol, true);
        assert_eq!(r.state, State::Critical);
    }

    #[test]
    fn a_check_concluded_before_and_inconclusive_now_warns() {
        let mut now = healthy("a.example");
        set(&mut now, "corsOriginRestricted", Status::Indeterminate);
        set(&mut now, "directoryListing", Status::NetworkLimited);
        let r = compared(healthy("a.example"), now, false);
        let b = r.baseline.as_ref().unwrap();
        assert_eq!(
            b.inconclusive_now,
            ["corsOriginRestricted", "directoryListing"]
        );
        assert_eq!(r.state, State::Warning);
        assert_eq!(
            r.message,
            "OpenCloud 8.1.0 is up to date and no check failed; 2 check(s) concluded before \
             are inconclusive now: corsOriginRestricted, directoryListing"
        );
        assert_eq!(r.rating, Some(5), "rating unchanged");
        assert_eq!(r.state.exit_code(), 1);

        // A check that never concluded is no news.
        let mut before = healthy("a.example");
        set(&mut before, "directoryListing", Status::Indeterminate);
        let mut now = healthy("a.example");
        set(&mut now, "directoryListing", Status::NetworkLimited);
        let r = compared(before, now, false);
        assert!(r.baseline.unwrap().inconclusive_now.is_empty());
        assert_eq!(r.state, State::Ok);
    }

    #[test]
    fn inconclusive_now_is_not_suppressed_by_warn_on_new_and_never_downgrades() {
        let mut now = exposed("a.example");
        set(&mut now, "directoryListing", Status::Indeterminate);
        let r = compared(exposed("a.example"), now.clone(), true);
        assert_eq!(r.state, State::Warning);
        assert!(
            r.message
                .starts_with("nothing new or worse since the baseline of 2026-11-22"),
            "{}",
            r.message
        );
        assert!(
            r.message
                .ends_with("; 1 check(s) concluded before are inconclusive now: directoryListing"),
            "{}",
            r.message
        );

        // A CRITICAL stays CRITICAL.
        now.state = State::Critical;
        let r = compared(exposed("a.example"), now, false);
        assert_eq!(r.state, State::Critical);
    }

    #[test]
    fn fingerprint_drift_changes_nothing_else() {
        let mut now = exposed("a.example");
        now.configuration_fingerprint = Some(fingerprint("f2"));
        for warn_on_new in [false, true] {
            let r = compared(exposed("a.example"), now.clone(), warn_on_new);
            assert_eq!(
                r.baseline,
                Some(BaselineComparison {
                    fingerprint_drift: true,
                    recorded_on: Some("2026-11-22".into()),
                    ..Default::default()
                })
            );
            let expected = if warn_on_new {
                State::Ok
            } else {
                State::Warning
            };
            assert_eq!(r.state, expected);
        }
        let r = compared(exposed("a.example"), now.clone(), false);
        assert_eq!(r.message, now.message);
        // An unknown fingerprint on either side is no drift.
        now.configuration_fingerprint = None;
        assert!(
            !compared(exposed("a.example"), now, false)
                .baseline
                .unwrap()
                .fingerprint_drift
        );
    }

    #[test]
    fn the_entry_tightens_and_never_absorbs_new_failures() {
        let before = with_cors_failed(exposed("a.example"));
        let mut baseline = Baseline::default().updated(&[before]);
        // Run 2: CORS fixed, a listing appears, the rating improves, the fingerprint drifts.
        let mut now = exposed("a.example");
        set(&mut now, "directoryListing", Status::Failed);
        now.rating = Some(4);
        now.scanned_at = "2026-11-23T03:00:00Z".into();
        now.configuration_fingerprint = Some(fingerprint("f2"));
        baseline = baseline.updated(&[now.clone()]);
        let entry = baseline.hosts.get("a.example").unwrap();
        assert_eq!(entry.recorded_at, "2026-11-22T03:00:00Z");
        assert_eq!(entry.rating, Some(4));
        assert_eq!(
            entry.failed.iter().collect::<Vec<_>>(),
            ["exposed:/opencloud.yaml"],
            "the fixed CORS finding leaves, the new listing is not absorbed"
        );
        assert_eq!(entry.fingerprint.as_deref(), Some("f1"));
        // Run 3: the listing still alerts, CORS coming back is new again.
        let mut run3 = with_cors_failed(now);
        run3.rating = Some(3);
        let mut results = [run3];
        results.iter_mut().for_each(|r| baseline.judge(r, true));
        assert_eq!(
            results[0].baseline.as_ref().unwrap().new_findings,
            ["corsOriginRestricted", "directoryListing"]
        );
        assert_eq!(results[0].state, State::Warning);
        // A rating that drops after improving is worse.
        assert!(results[0].baseline.as_ref().unwrap().worse_rating);
    }

    #[test]
    fn failed_and_unscanned_hosts_keep_their_entries() {
        let previous = Baseline::default().updated(&[exposed("a.example"), healthy("b.example")]);
        let next = previous.updated(&[failed("a.example")]);
        assert_eq!(next, previous);
        let next = previous.updated(&[healthy("c.example")]);
        assert_eq!(
            next.hosts().collect::<Vec<_>>(),
            ["a.example", "b.example", "c.example"]
        );
        assert_eq!(next.hosts.get("a.example"), previous.hosts.get("a.example"));
    }

    #[test]
    fn summary_cell_of_the_new_column() {
        assert_eq!(BaselineComparison::summary_cell(None), "-");
        let recorded = BaselineComparison {
            recorded: true,
            ..Default::default()
        };
        assert_eq!(BaselineComparison::summary_cell(Some(&recorded)), "new");
    }

    #[test]
    fn save_then_load_round_trips_and_keeps_other_hosts() {
        let dir = scratch("round-trip");
        let path = dir.join("baseline.json");
        assert_eq!(Baseline::load(&path), Ok(Baseline::default()));
        Baseline::default()
            .save(&path, &[exposed("a.example"), failed("b.example")])
            .unwrap();
        let loaded = Baseline::load(&path).unwrap();
        assert_eq!(loaded.hosts().collect::<Vec<_>>(), ["a.example"]);
        let text = fs::read_to_string(&path).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["version"], 1);
        assert_eq!(
            json["hosts"]["a.example"],
            serde_json::json!({
                "recordedAt": "2026-11-22T03:00:00Z",
                "rating": 3,
                "failed": ["exposed:/opencloud.yaml"],
                "concluded": ["corsOriginRestricted", "directoryListing", "eol",
                              "exposed:/opencloud.yaml"],
                "fingerprint": "f1"
            })
        );
        // Another host (another service check sharing the file) is added beside it.
        loaded.save(&path, &[healthy("c.example")]).unwrap();
        let both = Baseline::load(&path).unwrap();
        assert_eq!(both.hosts().collect::<Vec<_>>(), ["a.example", "c.example"]);
        assert_eq!(both.hosts.get("a.example"), loaded.hosts.get("a.example"));
        assert!(temp_files(&dir).is_empty());
        // Written from the entries as they are, the text is that of the whole baseline.
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            loaded.updated(&[healthy("c.example")]).to_json()
        );
    }

    #[test]
    fn hosts_and_ids_beyond_the_caps_are_refused_while_reading() {
        let dir = scratch("caps");
        let path = dir.join("baseline.json");
        let entry = |ids: &str| {
            format!(
                "{{\"recordedAt\": \"2026-11-22T03:00:00Z\", \"rating\": 5, \"failed\": [{ids}], \
                 \"concluded\": [], \"fingerprint\": null}}"
            )
        };
        let hosts: Vec<String> = (0..=MAX_HOSTS)
            .map(|n| format!("\"h{n}\": {}", entry("")))
            .collect();
        fs::write(
            &path,
            format!("{{\"version\": 1, \"hosts\": {{{}}}}}", hosts.join(",")),
        )
        .unwrap();
        let error = Baseline::load(&path).unwrap_err();
        assert!(error.contains("holds more than 4096 hosts;"), "{error}");

        let ids: Vec<String> = (0..=MAX_IDS).map(|n| format!("\"{n}\"")).collect();
        fs::write(
            &path,
            format!(
                "{{\"version\": 1, \"hosts\": {{\"a\": {}}}}}",
                entry(&ids.join(","))
            ),
        )
        .unwrap();
        let error = Baseline::load(&path).unwrap_err();
        assert!(
            error.contains("holds more than 65536 finding ids"),
            "{error}"
        );

        // At the caps exactly the file is read.
        let ids: Vec<String> = (0..MAX_IDS).map(|n| format!("\"{n}\"")).collect();
        fs::write(
            &path,
            format!(
                "{{\"version\": 1, \"hosts\": {{\"a\": {}}}}}",
                entry(&ids.join(","))
            ),
        )
        .unwrap();
        let loaded = Baseline::load(&path).unwrap();
        assert_eq!(loaded.hosts.get("a").unwrap().failed.len(), MAX_IDS);
        // The counts start afresh for every file.
        assert!(Baseline::load(&path).is_ok());
    }

    #[test]
    fn the_version_is_read_first_whatever_follows() {
        let dir = scratch("version-first");
        let path = dir.join("baseline.json");
        for (content, expected) in [
            (
                "{\"hosts\": {\"a\": [1, 2]}, \"version\": 2}",
                "has version 2;",
            ),
            ("{\"version\": [1], \"hosts\": {}}", "has version [...];"),
            ("{\"version\": 1.0, \"hosts\": {}}", "has version 1.0;"),
            ("\"text\"", "no JSON object"),
        ] {
            fs::write(&path, content).unwrap();
            let error = Baseline::load(&path).unwrap_err();
            assert!(error.contains(expected), "{content}: {error}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_read() {
        let error = Baseline::load(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            error,
            "baseline file /dev/zero is a character device, not a regular file; point \
             --baseline at a baseline file, or at a path that does not exist yet to record one"
        );
    }

    #[test]
    fn nothing_is_written_without_anything_to_record() {
        let dir = scratch("nothing");
        let path = dir.join("baseline.json");
        Baseline::default()
            .save(&path, &[failed("a.example")])
            .unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_the_file_and_the_fix() {
        let dir = scratch("corrupt");
        let path = dir.join("baseline.json");
        let cases: &[(&str, &str)] = &[
            ("{\"version\": 1, \"hosts\": {", "is not valid JSON"),
            ("", "is not valid JSON"),
            ("[1, 2]", "no JSON object"),
            ("{\"hosts\": {}}", "no \"version\" member"),
            ("{\"version\": 2, \"hosts\": {}}", "has version 2"),
            ("{\"version\": \"1\", \"hosts\": {}}", "has version \"1\""),
            ("{\"version\": 1}", "is not a baseline of version 1"),
            (
                "{\"version\": 1, \"hosts\": []}",
                "is not a baseline of version 1",
            ),
            (
                "{\"version\": 1, \"hosts\": {\"a\": {\"recordedAt\": \"2026-11-22T03:00:00Z\", \
                 \"rating\": 9, \"failed\": [], \"concluded\": [], \"fingerprint\": null}}}",
                "rating of a outside 0-5",
            ),
            (
                "{\"version\": 1, \"hosts\": {\"a\": {\"recordedAt\": \"yesterday\", \
                 \"rating\": 1, \"failed\": [], \"concluded\": [], \"fingerprint\": null}}}",
                "recordedAt of a is no timestamp",
            ),
            (
                "{\"version\": 1, \"hosts\": {\"a\": {\"recordedAt\": \"2026-11-22T03:00:00Z\", \
                 \"rating\": 1, \"failed\": \"x\", \"concluded\": [], \"fingerprint\": null}}}",
                "is not a baseline of version 1",
            ),
            (
                "{\"version\": 1, \"hosts\": {}, \"extra\": true}",
                "is not a baseline of version 1",
            ),
        ];
        for (content, expected) in cases {
            fs::write(&path, content).unwrap();
            let error = Baseline::load(&path).unwrap_err();
            assert!(error.contains(expected), "{content}: {error}");
            assert!(
                error.starts_with(&format!("baseline file {} ", path.display())),
                "{error}"
            );
            assert!(
                error.ends_with("; delete it to record a new baseline"),
                "{error}"
            );
            assert!(!error.contains('\n'), "{error}");
            // Never a silent reset: the file stays as it was.
            assert_eq!(fs::read_to_string(&path).unwrap(), *content);
        }
        // A directory in place of the file.
        let error = Baseline::load(&dir).unwrap_err();
        assert!(error.contains("is a directory"), "{error}");
    }

    #[test]
    fn an_oversized_file_is_refused() {
        let dir = scratch("oversized");
        let path = dir.join("baseline.json");
        let file = File::create(&path).unwrap();
        file.set_len(Kind::Baseline.cap() + 1).unwrap();
        let error = Baseline::load(&path).unwrap_err();
        assert_eq!(
            error,
            format!(
                "baseline file {} is larger than 4 MiB ({} bytes); point --baseline at a \
                 baseline file, or at a path that does not exist yet to record one",
                path.display(),
                Kind::Baseline.cap() + 1
            )
        );
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = scratch("failed-write");
        let path = dir.join("baseline.json");
        Baseline::default()
            .save(&path, &[exposed("a.example")])
            .unwrap();
        let old = fs::read_to_string(&path).unwrap();
        // The writer dies half-way, as a killed run would.
        let error = write_atomically(&path, |file| {
            file.write_all(b"{\"version\": 1, \"ho")?;
            Err(io::Error::other("killed"))
        })
        .unwrap_err();
        assert!(error.contains("cannot write (killed)"), "{error}");
        assert_eq!(fs::read_to_string(&path).unwrap(), old);
        assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
        assert!(Baseline::load(&path).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_directory_keeps_the_old_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("read-only");
        let path = dir.join("baseline.json");
        Baseline::default()
            .save(&path, &[exposed("a.example")])
            .unwrap();
        let old = fs::read_to_string(&path).unwrap();
        let previous = Baseline::load(&path).unwrap();
        fs::set_permissions(&*dir, fs::Permissions::from_mode(0o555)).unwrap();
        // Root writes anyway: then there is no failure to observe.
        let writable = File::create(dir.join("probe")).is_ok();
        let result = previous.save(&path, &[healthy("b.example")]);
        fs::set_permissions(&*dir, fs::Permissions::from_mode(0o755)).unwrap();
        let _ = fs::remove_file(dir.join("probe"));
        if !writable {
            let error = result.unwrap_err();
            assert!(
                error.starts_with(&format!("cannot save baseline file {}", path.display())),
                "{error}"
            );
            assert_eq!(fs::read_to_string(&path).unwrap(), old);
        } else {
            result.unwrap();
        }
        assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
        assert!(Baseline::load(&path).is_ok());
    }

    #[test]
    fn save_replaces_the_file_and_keeps_its_permissions() {
        let dir = scratch("replace");
        let path = dir.join("baseline.json");
        Baseline::default()
            .save(&path, &[exposed("a.example")])
            .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        }
        let previous = Baseline::load(&path).unwrap();
        previous.save(&path, &[healthy("b.example")]).unwrap();
        let loaded = Baseline::load(&path).unwrap();
        assert_eq!(
            loaded.hosts().collect::<Vec<_>>(),
            ["a.example", "b.example"]
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640);
        }
        assert!(temp_files(&dir).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_stays_a_link() {
        let dir = scratch("symlink");
        let real = dir.join("real.json");
        let link = dir.join("link.json");
        Baseline::default()
            .save(&real, &[exposed("a.example")])
            .unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let previous = Baseline::load(&link).unwrap();
        previous.save(&link, &[healthy("b.example")]).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let loaded = Baseline::load(&real).unwrap();
        assert_eq!(loaded.hosts().count(), 2);
    }

    /// `result` with the conditions a scan records, advisories from `sources`.
    fn with_conditions(mut r: ScanResult, sources: &[&str]) -> ScanResult {
        r.conditions = Some(crate::report::Conditions {
            scanner_version: env!("CARGO_PKG_VERSION").into(),
            advisories_updated: Some("2026-10-12".into()),
            advisory_sources: sources.iter().map(|a| a.to_string()).collect(),
            ..Default::default()
        });
        r
    }

    fn with_failed(mut r: ScanResult, id: &str) -> ScanResult {
        r.findings
            .push(finding_for(id, Status::Failed, "seen now").unwrap());
        r
    }

    fn causes(r: &ScanResult) -> Vec<(String, Cause)> {
        r.baseline
            .as_ref()
            .unwrap()
            .changes
            .iter()
            .map(|c| (c.id.clone(), c.cause))
            .collect()
    }

    /// The same release newly matched by an advisory: our knowledge changed, not the
    /// instance. The same finding after an upgrade: the instance changed.
    #[test]
    fn a_new_advisory_is_knowledge_and_a_new_release_is_the_instance() {
        let before = with_conditions(healthy("a.example"), &["bundled"]);
        let now = with_failed(
            with_conditions(healthy("a.example"), &["bundled", "feed.example"]),
            "vulnerability:GHSA-new",
        );
        let r = compared(before.clone(), now.clone(), false);
        assert_eq!(
            causes(&r),
            [("vulnerability:GHSA-new".to_string(), Cause::Knowledge)]
        );
        let detail = &r.baseline.as_ref().unwrap().changes[0].detail;
        assert!(
            detail.contains(
                "GHSA-new matches the same release since the baseline: the advisory data changed \
                 (advisories now from bundled, feed.example, bundled data of 2026-10-12; then \
                 from bundled, of 2026-10-12)"
            ),
            "{detail}"
        );

        let mut upgraded = now;
        upgraded.product.as_mut().unwrap().version = "8.1.1".into();
        let r = compared(before, upgraded, false);
        assert_eq!(
            causes(&r),
            [("vulnerability:GHSA-new".to_string(), Cause::Instance)]
        );
        assert!(
            r.baseline.as_ref().unwrap().changes[0]
                .detail
                .contains("now runs 8.1.1 (it ran 8.1.0 at the baseline)")
        );
    }

    /// A line reaching end of life on the same release is knowledge; a finding a waiver hid at
    /// the baseline is the waiver; a check the baseline's scanner did not have is the scanner;
    /// anything else is the instance, with the fingerprint drift named.
    #[test]
    fn every_cause_is_told_apart() {
        let mut before = with_conditions(healthy("a.example"), &["bundled"]);
        let mut waived = finding_for("corsOriginRestricted", Status::Failed, "any origin").unwrap();
        waived.ignored = true;
        before.findings.retain(|f| f.id != "corsOriginRestricted");
        before.findings.push(waived);
        let mut previous = Baseline::default().updated(&[before]);
        // A baseline recorded by an older scanner, which never decided dnssec.
        let entry = previous.hosts.get_mut("a.example").unwrap();
        entry.conditions.as_mut().unwrap().scanner_version = "0.0.9".into();
        assert!(!entry.concluded.contains("dnssec"));

        let mut now = with_conditions(healthy("a.example"), &["bundled"]);
        set(&mut now, "eol", Status::Failed);
        set(&mut now, "corsOriginRestricted", Status::Failed);
        set(&mut now, "directoryListing", Status::Failed);
        now.findings
            .push(finding_for("dnssec", Status::Failed, "not signed").unwrap());
        now.configuration_fingerprint = Some(fingerprint("f2"));
        let mut results = [now];
        results.iter_mut().for_each(|r| previous.judge(r, false));
        let mut got = causes(&results[0]);
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            got,
            [
                ("corsOriginRestricted".to_string(), Cause::Waiver),
                ("directoryListing".to_string(), Cause::Instance),
                ("dnssec".to_string(), Cause::Scanner),
                ("eol".to_string(), Cause::Knowledge),
            ]
        );
        let changes = &results[0].baseline.as_ref().unwrap().changes;
        let listing = changes.iter().find(|c| c.id == "directoryListing").unwrap();
        assert!(
            listing.detail.contains("fingerprint changed"),
            "{}",
            listing.detail
        );
    }

    /// A baseline written before conditions were kept: every change is of unknown cause, and
    /// the detail says how to fix that. The file still reads, and gains conditions only when
    /// the entry is recorded anew.
    #[test]
    fn an_old_baseline_without_conditions_says_it_cannot_tell() {
        let old = r#"{"version": 1, "hosts": {"a.example": {"recordedAt": "2026-11-01T03:00:00Z",
            "rating": 5, "failed": [], "concluded": ["eol"], "fingerprint": "f1"}}}"#;
        let previous = Baseline::parse(old.as_bytes()).unwrap();
        let now = with_failed(
            with_conditions(healthy("a.example"), &["bundled"]),
            "vulnerability:GHSA-new",
        );
        let mut results = [now];
        results.iter_mut().for_each(|r| previous.judge(r, false));
        let c = results[0].baseline.as_ref().unwrap();
        assert_eq!(c.changes.len(), 1);
        assert_eq!(c.changes[0].cause, Cause::Unknown);
        assert!(c.changes[0].detail.contains("record a new one"));
        assert_eq!(c.recorded_on.as_deref(), Some("2026-11-01"));
        // Recorded conditions survive a round trip through the file.
        let recorded = Baseline::default().updated(&[with_conditions(
            healthy("b.example"),
            &["bundled", "x.json"],
        )]);
        let again = Baseline::parse(recorded.to_json().as_bytes()).unwrap();
        let kept = again
            .hosts
            .get("b.example")
            .unwrap()
            .conditions
            .as_ref()
            .unwrap();
        assert_eq!(kept.advisory_sources, ["bundled", "x.json"]);
        assert_eq!(kept.version.as_deref(), Some("8.1.0"));
    }
}
