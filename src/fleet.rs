//! `check-storage-scanner fleet`: archived result documents judged again with today's
//! knowledge, most urgent host first. Pure: documents, the clock and the knowledge go in, rows
//! come out; the files are found and read by `scanner_cli`.
//!
//! What is judged again, per host (its newest document when several name it):
//!
//! | Reason (`kind`) | When |
//! |---|---|
//! | `end-of-life` | the release line is end of life today and the document did not say so |
//! | `ending-soon` | the line has `--eol-warning` days or fewer left and the document did not say so |
//! | `advisory` | an advisory matches the version today that the document did not list |
//! | `waiver-expired` | a waiver that hid a failing finding of the host expired between the scan and today |
//! | `state-at-scan` | the document itself was WARNING or CRITICAL |
//! | `scan-failed` | the document is a failed scan (UNKNOWN) |
//! | `old-scan` | the scan is [`OLD_SCAN_DAYS`] days old or older |
//!
//! The state now is an estimate made the plugin's way (`verdict::decide`, the rating's start
//! and caps of `assess::rating`) from the document's rating and the thresholds: end of life is
//! CRITICAL; a new advisory starts the rating at 1 (high or critical) or 2; a failing check a
//! waiver no longer hides caps it by its severity; a new advisory, a line ending soon or a
//! hardening finding no longer hidden (under `--check-hardening`) turns OK into WARNING. It is
//! never better than the state at the scan.
//!
//! Documents are read with the result document's reader (`report::read_documents`); the view
//! adds its caps on names and lists, which bound its matching work.
//!
//! Urgency: CRITICAL now is critical; WARNING or UNKNOWN now, an old scan, or an expired
//! waiver that hid a failing finding is a warning; anything else needs no action. Hosts are
//! ordered by urgency, then the state now, then how much is new since the scan, then the age
//! of the scan (older first), then the host name.

use crate::assess::rating::{self, VersionStanding};
use crate::assess::waiver_review::counted;
use crate::assess::waivers::{matches, whole_days};
use crate::clock::Now;
use crate::knowledge::lifecycle::{self, LineState, TrackChoice};
use crate::knowledge::{Knowledge, ProductFamily, advisories, parse_version};
use crate::report::{Finding, Role, ScanResult, State, Status, WaiverReport};
use crate::verdict;
use jiff::Timestamp;
use serde::Serialize;

/// Files one view reads (the files named and the `*.json` files of the directories named).
pub const MAX_FILES: usize = 10_000;
/// Bytes in all files of one view: about 25,000 hosts at 40 KiB each.
pub const MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;
/// Result documents in all files of one view (a fleet of hosts, or its history).
pub const MAX_DOCUMENTS: usize = 100_000;
/// Longest host, version, finding id, advisory id or waiver pattern kept.
pub const MAX_NAME_BYTES: usize = 256;
/// Failing findings and listed advisories of one document.
pub const MAX_LIST: usize = 4096;
/// Aliases of one listed advisory that are matched (a CVE and a GHSA id, a few more at most).
pub const MAX_ALIASES: usize = 16;
/// Waivers of one document; a configuration has a handful.
pub const MAX_WAIVERS: usize = 128;
/// A scan this many days old or older is a reason by itself: scan the host again.
pub const OLD_SCAN_DAYS: i64 = 7;
/// Characters of a document's message or error kept for the `why` column.
const MAX_MESSAGE_CHARS: usize = 200;

/// Today's knowledge and the operator's thresholds.
pub struct Today<'k> {
    pub now: Timestamp,
    /// One per product family; a family without one is not judged again.
    pub knowledge: &'k [Knowledge],
    /// `--warning` and `--critical`: ratings at or below them are WARNING and CRITICAL.
    pub warning: u8,
    pub critical: u8,
    /// `--eol-warning`.
    pub eol_warning: Option<i64>,
    /// `scanner.use_release_schedule`: off, lines are not judged again.
    pub use_release_schedule: bool,
}

/// How soon a host needs the operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Urgency {
    /// The discriminants are the exit codes (`View::exit_code`).
    None = 0,
    Warning = 1,
    Critical = 2,
}

/// Why a host is where it is in the view, in the order a row lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    EndOfLife,
    Advisory,
    EndingSoon,
    WaiverExpired,
    StateAtScan,
    ScanFailed,
    OldScan,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reason {
    pub kind: Kind,
    pub detail: String,
    /// Learnt since the scan (not in the document).
    #[serde(skip)]
    pub new: bool,
}

/// One host of the view; `--format json` prints it as it is declared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// 1 for the most urgent host.
    pub priority: usize,
    pub host: String,
    #[serde(rename = "product")]
    pub family: Option<ProductFamily>,
    pub version: Option<String>,
    #[serde(serialize_with = "whole_seconds")]
    pub scanned_at: Timestamp,
    pub days_since_scan: i64,
    pub state_then: State,
    pub state_now: State,
    pub urgency: Urgency,
    pub reasons: Vec<Reason>,
}

/// A time as the view prints it: RFC 3339, UTC, whole seconds.
fn whole_seconds<S: serde::Serializer>(t: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&Now(*t).stamp())
}

/// The fleet as of today.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub now: Timestamp,
    /// Most urgent first.
    pub rows: Vec<Row>,
    /// Documents set aside because a newer one of the same host was read.
    pub superseded: usize,
    /// The knowledge used, one phrase per family judged (`OpenCloud release schedule of ...`).
    pub knowledge: Vec<String>,
}

/// Text from a document as the view prints it: control characters and bidirectional
/// overrides escaped (nothing of a file reaches a terminal as is), cut at `max` characters.
fn shown(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push_str("...");
            break;
        }
        let hostile = c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if hostile {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// When a waiver of the document expires; `None`: permanent.
fn expires(waiver: &WaiverReport) -> Option<Timestamp> {
    waiver.expires
}

/// The product families of the documents, each once, in their order.
pub fn families(documents: &[ScanResult]) -> Vec<ProductFamily> {
    crate::probe::distinct(
        documents
            .iter()
            .filter_map(|doc| Some(doc.product.as_ref()?.family)),
    )
}

/// Judges every document at `today`, keeps each host's newest, and orders the hosts.
pub fn judge(documents: Vec<ScanResult>, today: &Today) -> View {
    let total = documents.len();
    let mut newest: Vec<ScanResult> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for doc in documents {
        match index.get(&doc.host) {
            Some(&i) if doc.scanned_at <= newest[i].scanned_at => {}
            Some(&i) => newest[i] = doc,
            None => {
                index.insert(doc.host.clone(), newest.len());
                newest.push(doc);
            }
        }
    }
    let superseded = total - newest.len();
    let mut rows: Vec<Row> = newest.iter().map(|d| judge_one(d, today)).collect();
    rows.sort_by(|a, b| {
        let news = |r: &Row| r.reasons.iter().filter(|x| x.new).count();
        b.urgency
            .cmp(&a.urgency)
            // CRITICAL, WARNING, UNKNOWN, OK: the monitoring priority.
            .then(b.state_now.priority().cmp(&a.state_now.priority()))
            .then(news(b).cmp(&news(a)))
            .then(b.days_since_scan.cmp(&a.days_since_scan))
            .then(a.host.cmp(&b.host))
    });
    for (n, row) in rows.iter_mut().enumerate() {
        row.priority = n + 1;
    }
    let knowledge = families(&newest)
        .iter()
        .filter_map(|f| today.knowledge.iter().find(|k| k.family == *f))
        .map(knowledge_text)
        .collect();
    View {
        now: today.now,
        rows,
        superseded,
        knowledge,
    }
}

/// `OpenCloud release schedule of 2026-10-12, advisories of 2026-10-12`.
fn knowledge_text(k: &Knowledge) -> String {
    let mut out = k.family.display_name().to_string();
    match &k.schedule {
        Some(s) => out.push_str(&format!(" release schedule of {}", s.updated)),
        None => out.push_str(" (no release schedule)"),
    }
    match k.advisories_updated {
        Some(d) => out.push_str(&format!(", advisories of {d}")),
        None => out.push_str(", advisories"),
    }
    let extra = k.advisory_sources.len().saturating_sub(1);
    if extra > 0 {
        out.push_str(&format!(
            " and {extra} scanner.vulnerability_db file{}",
            if extra == 1 { "" } else { "s" }
        ));
    }
    out
}

pub fn judge_one(doc: &ScanResult, today: &Today) -> Row {
    let scanned = doc.scanned_at;
    let days = whole_days(scanned, today.now);
    let mut reasons: Vec<Reason> = Vec::new();
    let version = version_today(doc, today, scanned, &mut reasons);
    let counting_again = expired_waivers(doc, today, scanned, &mut reasons);
    said_at_scan(doc, days, &mut reasons);
    let state_now = state_now(
        doc,
        today,
        version.end_of_life,
        version.support_days_left,
        &version.new_advisories,
        &counting_again,
    );
    let urgency = match state_now {
        State::Critical => Urgency::Critical,
        State::Warning | State::Unknown => Urgency::Warning,
        // Every reason but the state at the scan (which the state now weighs) needs the
        // operator by itself.
        State::Ok if reasons.iter().any(|r| r.kind != Kind::StateAtScan) => Urgency::Warning,
        State::Ok => Urgency::None,
    };
    reasons.sort_by_key(|r| r.kind);
    Row {
        host: doc.host.clone(),
        family: doc.product.as_ref().map(|p| p.family),
        version: doc.product.as_ref().map(|p| p.version.clone()),
        scanned_at: scanned,
        days_since_scan: days,
        state_then: doc.state,
        state_now,
        urgency,
        priority: 0,
        reasons,
    }
}

fn reason(reasons: &mut Vec<Reason>, kind: Kind, detail: String, new: bool) {
    reasons.push(Reason { kind, detail, new });
}

/// What today's knowledge says of the scanned release that the document did not.
#[derive(Default)]
struct VersionToday<'k> {
    end_of_life: bool,
    support_days_left: Option<i64>,
    /// Advisories that match the release and the document does not list.
    new_advisories: Vec<&'k advisories::Advisory>,
}

/// The line's life and the advisories, as known today: a line that reached (or nears) its
/// end since the scan, and advisories published since, each a reason.
fn version_today<'k>(
    doc: &ScanResult,
    today: &'k Today,
    scanned: Timestamp,
    reasons: &mut Vec<Reason>,
) -> VersionToday<'k> {
    let version = doc.product.as_ref().and_then(|p| {
        let known = today.knowledge.iter().find(|k| k.family == p.family)?;
        Some((known, parse_version(&p.version)?))
    });
    let mut found = VersionToday::default();
    if let Some((known, version)) = &version {
        if let Some(schedule) = known
            .schedule
            .as_ref()
            .filter(|_| today.use_release_schedule)
        {
            let choice = doc
                .lifecycle
                .as_ref()
                .and_then(|l| l.track)
                .map_or(TrackChoice::Auto, TrackChoice::Fixed);
            let on = Now(today.now).today();
            let life = lifecycle::assess(schedule, version, choice, on, today.eol_warning);
            found.support_days_left = life.support_days_left;
            let then = doc.lifecycle.as_ref().map(|l| l.state);
            let line = crate::assess::line_name(&life);
            let upgrade = life
                .move_to
                .as_ref()
                .map(|(v, t)| format!("; upgrade to {v} ({t} track)"))
                .unwrap_or_default();
            match (life.state, life.support_end) {
                (LineState::EndOfLife, Some(end)) => {
                    found.end_of_life = true;
                    if then != Some(LineState::EndOfLife) {
                        let since = end > Now(scanned).today();
                        let detail = if since {
                            format!("line {line} reached end of life on {end} (since the scan)")
                        } else {
                            format!("line {line} has been end of life since {end}")
                        };
                        reason(
                            reasons,
                            Kind::EndOfLife,
                            format!("{detail}{upgrade}"),
                            since,
                        );
                    }
                }
                (LineState::EndingSoon, Some(end))
                    if !matches!(then, Some(LineState::EndingSoon | LineState::EndOfLife)) =>
                {
                    let left = life.support_days_left.unwrap_or(0);
                    reason(
                        reasons,
                        Kind::EndingSoon,
                        format!(
                            "line {line} loses support on {end} (in {}, --eol-warning){upgrade}",
                            counted(left, "day", "days")
                        ),
                        true,
                    );
                }
                _ => {}
            }
        }
        for advisory in advisories::matching(&known.advisories, version) {
            let listed = std::iter::once(&advisory.id)
                .chain(&advisory.aliases)
                .any(|id| {
                    doc.vulnerabilities
                        .iter()
                        .any(|v| v.id == *id || v.aliases.iter().take(MAX_ALIASES).any(|a| a == id))
                });
            if listed {
                continue;
            }
            found.new_advisories.push(advisory);
            let severity = advisory
                .severity
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            let fixed = advisory
                .fixed_versions()
                .into_iter()
                .find(|f| f > version)
                .map(|f| format!("; fixed in {f}"))
                .unwrap_or_default();
            reason(
                reasons,
                Kind::Advisory,
                format!(
                    "{}{severity} published since the scan{fixed}",
                    shown(&advisory.id, 100)
                ),
                true,
            );
        }
    }

    found
}

/// Waivers that expired between the scan and today, each a reason with what it hid; the
/// failing findings that count again.
fn expired_waivers<'d>(
    doc: &'d ScanResult,
    today: &Today,
    scanned: Timestamp,
    reasons: &mut Vec<Reason>,
) -> Vec<&'d Finding> {
    let live_now = |w: &WaiverReport| expires(w).is_none_or(|e| e > today.now);
    let mut counting_again: Vec<&Finding> = Vec::new();
    for waiver in &doc.waivers {
        let Some(expires) = expires(waiver).filter(|e| *e > scanned && *e <= today.now) else {
            continue;
        };
        let hidden: Vec<&Finding> = doc
            .findings
            .iter()
            .filter(|f| f.status == Status::Failed && matches(&waiver.pattern, &f.id))
            .filter(|f| {
                !doc.waivers
                    .iter()
                    .any(|other| live_now(other) && matches(&other.pattern, &f.id))
            })
            .collect();
        // One that hid nothing of this host is the waiver review's business, not news here.
        if hidden.is_empty() {
            continue;
        }
        let mut names: Vec<String> = hidden
            .iter()
            .take(3)
            .map(|f| format!("{} ({})", shown(&f.id, 100), f.severity))
            .collect();
        if hidden.len() > 3 {
            names.push(format!("{} more", hidden.len() - 3));
        }
        reason(
            reasons,
            Kind::WaiverExpired,
            format!(
                "waiver for {} expired {}; it no longer hides {}",
                shown(&waiver.pattern, 100),
                Now(expires).today(),
                names.join(", ")
            ),
            true,
        );
        for f in hidden {
            if !counting_again.iter().any(|c| std::ptr::eq(*c, f)) {
                counting_again.push(f);
            }
        }
    }

    counting_again
}

/// What the document itself said: its state at the scan, a failed scan, an old scan.
fn said_at_scan(doc: &ScanResult, days: i64, reasons: &mut Vec<Reason>) {
    match doc.state {
        State::Warning | State::Critical => reason(
            reasons,
            Kind::StateAtScan,
            format!(
                "{} at the scan: {}",
                doc.state.label(),
                shown(&doc.message, MAX_MESSAGE_CHARS)
            ),
            false,
        ),
        State::Unknown => reason(
            reasons,
            Kind::ScanFailed,
            format!(
                "the scan failed: {}; scan it again",
                shown(
                    doc.error.as_ref().map_or(&doc.message, |e| &e.message),
                    MAX_MESSAGE_CHARS
                )
            ),
            false,
        ),
        State::Ok => {}
    }
    if days >= OLD_SCAN_DAYS {
        reason(
            reasons,
            Kind::OldScan,
            format!("scanned {} ago", counted(days, "day", "days")),
            false,
        );
    }
}

/// The state the plugin would reach today, as far as the document tells (see the module):
/// the document's rating, started again by the advisories published since and capped by the
/// failing checks a waiver no longer hides, judged by the plugin's rules.
fn state_now(
    doc: &ScanResult,
    today: &Today,
    end_of_life: bool,
    support_days_left: Option<i64>,
    new_advisories: &[&advisories::Advisory],
    counting_again: &[&Finding],
) -> State {
    if doc.state == State::Unknown {
        return State::Unknown;
    }
    let standing = VersionStanding {
        advisories: new_advisories.iter().map(|a| a.severity).collect(),
        ..VersionStanding::default()
    };
    let start = doc
        .rating
        .unwrap_or(5)
        .min(rating::starting_rating(&standing).0);
    let mut no_longer_hidden: Vec<Finding> = counting_again
        .iter()
        .map(|f| Finding {
            ignored: false,
            ..(*f).clone()
        })
        .collect();
    let (rating, _) = rating::apply_caps(start, &mut no_longer_hidden);
    let missing_hardening = doc.missing_hardening().count()
        + no_longer_hidden
            .iter()
            .filter(|f| f.role == Role::Hardening)
            .count();
    let state = verdict::decide(&verdict::Inputs {
        rating: Some(rating),
        warning: today.warning,
        critical: today.critical,
        vulnerabilities: doc.vulnerabilities.len() + new_advisories.len(),
        end_of_life,
        check_hardening: doc.check_hardening,
        missing_hardening,
        eol_warning: today.eol_warning,
        support_days_left,
        ..verdict::Inputs::default()
    });
    // Never better than the document's own state.
    doc.state.worst(state)
}

impl View {
    /// 0 when no host needs action, 1 when the most urgent is a warning, 2 when a host is
    /// CRITICAL now.
    pub fn exit_code(&self) -> i32 {
        self.rows
            .iter()
            .map(|r| r.urgency as i32)
            .max()
            .unwrap_or(0)
    }

    fn count(&self, urgency: Urgency) -> usize {
        self.rows.iter().filter(|r| r.urgency == urgency).count()
    }

    /// The first line, for a monitoring system: `CRITICAL: 2 of 4 hosts need action now (2
    /// critical, 1 warning)`, `OK: none of 3 hosts needs action now`.
    pub fn summary(&self) -> String {
        let total = self.rows.len();
        let (critical, warning) = (self.count(Urgency::Critical), self.count(Urgency::Warning));
        let hosts = if total == 1 { "host" } else { "hosts" };
        match critical + warning {
            0 => format!("OK: none of {total} {hosts} needs action now"),
            n => format!(
                "{}: {n} of {total} {hosts} need{} action now ({critical} critical, {warning} \
                 warning)",
                if critical > 0 { "CRITICAL" } else { "WARNING" },
                if n == 1 { "s" } else { "" }
            ),
        }
    }

    /// The table: the summary, what was judged, one row per host (further reasons on lines of
    /// their own under `WHY`), and performance data. Plain text, no colors.
    pub fn text(&self, files: usize, skipped: usize) -> String {
        let mut judged = format!(
            "Judged {} of {} from {} at {}",
            counted(
                self.rows.len() + self.superseded,
                "result document",
                "result documents"
            ),
            counted(self.rows.len(), "host", "hosts"),
            counted(files, "file", "files"),
            Now(self.now).stamp()
        );
        if !self.knowledge.is_empty() {
            judged.push_str(&format!(" with {}", self.knowledge.join("; ")));
        }
        if self.superseded > 0 {
            judged.push_str(&format!(
                "; {} of the same hosts set aside",
                counted(self.superseded, "older document", "older documents")
            ));
        }
        if skipped > 0 {
            judged.push_str(&format!(
                "; {} skipped (see stderr)",
                counted(skipped, "file", "files")
            ));
        }
        let mut out = format!("{}\n{judged}\n\n", self.summary());
        let header = ["#", "HOST", "PRODUCT", "STATE"].map(String::from);
        let cells: Vec<[String; 4]> = std::iter::once(header)
            .chain(self.rows.iter().map(|r| {
                let product = match (&r.family, &r.version) {
                    (Some(f), Some(v)) => format!("{} {}", f.display_name(), shown(v, 40)),
                    _ => "-".to_string(),
                };
                [
                    r.priority.to_string(),
                    shown(&r.host, 80),
                    product,
                    format!("{} → {}", r.state_then.label(), r.state_now.label()),
                ]
            }))
            .collect();
        let widths: [usize; 4] = std::array::from_fn(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .max()
                .unwrap_or(0)
        });
        let indent: usize = widths.iter().map(|w| w + 2).sum();
        let whys = std::iter::once(vec!["WHY"]).chain(self.rows.iter().map(|row| {
            let why: Vec<&str> = row.reasons.iter().map(|r| r.detail.as_str()).collect();
            if why.is_empty() {
                vec!["nothing new"]
            } else {
                why
            }
        }));
        for (cell, why) in cells.iter().zip(whys) {
            for (text, width) in cell.iter().zip(widths) {
                out.push_str(&format!("{text:<width$}  "));
            }
            out.push_str(&why.join(&format!("\n{}", " ".repeat(indent))));
            out.push('\n');
        }
        out.push_str(&format!(
            "| hosts={};;;0 critical={};;;0 warning={};;;0 none={};;;0\n",
            self.rows.len(),
            self.count(Urgency::Critical),
            self.count(Urgency::Warning),
            self.count(Urgency::None)
        ));
        out
    }

    /// The rows as a JSON array, most urgent first.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(&self.rows).unwrap_or_else(|_| "[]".to_string()) + "\n"
    }
}

// --- Reading ------------------------------------------------------------------------------

/// Reads one file's content: a result document, or a JSON array of them (what
/// `check-storage-security --format json` and `check-storage-scanner scan` print). `room`:
/// how many more documents the view takes. `Err` says what is wrong, as the rest of a sentence
/// about the file (`is not JSON (...)`).
pub fn read(bytes: &[u8], room: usize) -> Result<Vec<ScanResult>, String> {
    let documents = crate::report::read_documents(bytes).map_err(|e| e.to_string())?;
    if documents.len() > room {
        return Err(format!(
            "holds more than {MAX_DOCUMENTS} result documents (with the files before it); give \
             fewer files at once"
        ));
    }
    for doc in &documents {
        within_caps(doc)
            .map_err(|why| format!("is not a result document ({})", shown(&why, 160)))?;
    }
    Ok(documents)
}

fn name(text: &str, what: &str) -> Result<(), String> {
    if text.is_empty() || text.len() > MAX_NAME_BYTES {
        return Err(format!(
            "{what} that is empty or longer than {MAX_NAME_BYTES} bytes"
        ));
    }
    Ok(())
}

/// Every name the view matches within its cap, every list within its cap, and the times it
/// compares readable.
fn within_caps(doc: &ScanResult) -> Result<(), String> {
    name(&doc.host, "a host")?;
    if let Some(p) = &doc.product {
        name(&p.version, "a product version")?;
    }
    if doc.vulnerabilities.len() > MAX_LIST {
        return Err(format!("more than {MAX_LIST} vulnerabilities"));
    }
    for v in &doc.vulnerabilities {
        name(&v.id, "an advisory id")?;
        for alias in v.aliases.iter().take(MAX_ALIASES) {
            name(alias, "an advisory alias")?;
        }
    }
    let failed: Vec<&Finding> = doc
        .findings
        .iter()
        .filter(|f| f.status == Status::Failed)
        .collect();
    if failed.len() > MAX_LIST {
        return Err(format!("more than {MAX_LIST} failing findings"));
    }
    for f in failed {
        name(&f.id, "a finding id")?;
    }
    if doc.waivers.len() > MAX_WAIVERS {
        return Err(format!("more than {MAX_WAIVERS} waivers"));
    }
    for w in &doc.waivers {
        name(&w.pattern, "a waiver pattern")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
