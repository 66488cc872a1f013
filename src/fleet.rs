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
//! The state now is an estimate made the plugin's way from the document's rating and the
//! thresholds: end of life is CRITICAL; a new advisory starts the rating at 1 (high or
//! critical) or 2; a failing check a waiver no longer hides caps it by its severity; a new
//! advisory, a line ending soon or a hardening finding no longer hidden (under
//! `--check-hardening`) turns OK into WARNING. It is never better than the state at the scan.
//!
//! Urgency: CRITICAL now is critical; WARNING or UNKNOWN now, an old scan, or an expired
//! waiver that hid a failing finding is a warning; anything else needs no action. Hosts are
//! ordered by urgency, then the state now, then how much is new since the scan, then the age
//! of the scan (older first), then the host name.

use crate::assess::waivers::matches;
use crate::knowledge::lifecycle::{self, LineState, TrackChoice};
use crate::knowledge::{Knowledge, ProductFamily, Track, advisories, parse_version};
use crate::report::State;
use crate::severity::Severity;
use jiff::Timestamp;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

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
/// Waivers of one document; a configuration has a handful.
pub const MAX_WAIVERS: usize = 128;
/// A scan this many days old or older is a reason by itself: scan the host again.
pub const OLD_SCAN_DAYS: i64 = 7;
/// Characters of a document's message or error kept for the `why` column.
const MAX_MESSAGE_CHARS: usize = 200;

/// What the view keeps of one result document.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    pub host: String,
    pub scanned_at: Timestamp,
    pub state: State,
    pub message: String,
    pub rating: Option<u8>,
    /// The scan failed: its message.
    pub error: Option<String>,
    pub product: Option<Product>,
    pub lifecycle: Option<DocumentLifecycle>,
    /// Ids and aliases of the advisories the document lists.
    pub vulnerabilities: Vec<String>,
    /// Failing findings only.
    pub failed: Vec<FailedFinding>,
    pub waivers: Vec<Waiver>,
    pub check_hardening: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Product {
    pub family: ProductFamily,
    /// As the document gives it (`4.0.8`, `v7.1.0+abc`).
    pub version: String,
}

/// The document's lifecycle: the track it judged and what it found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocumentLifecycle {
    pub track: Option<Track>,
    pub state: LineState,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedFinding {
    pub id: String,
    /// `check`, `hardening`, `version`, `observation`.
    pub role: String,
    pub severity: Option<Severity>,
    pub counts: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiver {
    pub pattern: String,
    /// `None`: permanent.
    pub expires: Option<Timestamp>,
}

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
    None,
    Warning,
    Critical,
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
    /// Needs the operator by itself, whatever the state now.
    #[serde(skip)]
    pub action: bool,
}

/// One host of the view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub host: String,
    pub family: Option<ProductFamily>,
    pub version: Option<String>,
    pub scanned_at: Timestamp,
    pub days_since_scan: i64,
    pub state_then: State,
    pub state_now: State,
    pub urgency: Urgency,
    /// 1 for the most urgent host.
    pub priority: usize,
    pub reasons: Vec<Reason>,
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

/// Whole days from `from` to `to`, rounded down, never negative.
fn whole_days(from: Timestamp, to: Timestamp) -> i64 {
    (to.as_second() - from.as_second())
        .div_euclid(86_400)
        .max(0)
}

fn day(t: Timestamp) -> jiff::civil::Date {
    t.to_zoned(jiff::tz::TimeZone::UTC).date()
}

fn stamp(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
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

/// At most `max` characters of `text`, `...` marking a cut; escaped only when shown.
fn truncated(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

fn days_text(n: i64) -> String {
    if n == 1 {
        "1 day".to_string()
    } else {
        format!("{n} days")
    }
}

/// Judges every document at `today`, keeps each host's newest, and orders the hosts.
pub fn judge(documents: Vec<Document>, today: &Today) -> View {
    let total = documents.len();
    let mut newest: Vec<Document> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for doc in documents {
        match index.get(&doc.host) {
            Some(&i) => {
                if doc.scanned_at > newest[i].scanned_at {
                    newest[i] = doc;
                }
            }
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
    let mut families: Vec<ProductFamily> = Vec::new();
    for doc in &newest {
        if let Some(p) = &doc.product
            && !families.contains(&p.family)
        {
            families.push(p.family);
        }
    }
    let knowledge = families
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

/// One document judged at `today`.
pub fn judge_one(doc: &Document, today: &Today) -> Row {
    let days = whole_days(doc.scanned_at, today.now);
    let mut reasons: Vec<Reason> = Vec::new();
    let mut reason = |kind, detail: String, new, action| {
        reasons.push(Reason {
            kind,
            detail,
            new,
            action,
        })
    };

    // Version knowledge: the line's life and the advisories, as known today.
    let version = doc.product.as_ref().and_then(|p| {
        let known = today.knowledge.iter().find(|k| k.family == p.family)?;
        Some((known, parse_version(&p.version)?))
    });
    let mut end_of_life = false;
    let mut ending_soon = false;
    let mut new_advisories: Vec<&advisories::Advisory> = Vec::new();
    if let Some((known, version)) = &version {
        if let Some(schedule) = known
            .schedule
            .as_ref()
            .filter(|_| today.use_release_schedule)
        {
            let choice = doc
                .lifecycle
                .and_then(|l| l.track)
                .map_or(TrackChoice::Auto, TrackChoice::Fixed);
            let life =
                lifecycle::assess(schedule, version, choice, day(today.now), today.eol_warning);
            let then = doc.lifecycle.map(|l| l.state);
            let line = format!("{}.{}", life.line.0, life.line.1);
            let upgrade = life
                .move_to
                .as_ref()
                .map(|(v, t)| format!("; upgrade to {v} ({t} track)"))
                .unwrap_or_default();
            match (life.state, life.support_end) {
                (LineState::EndOfLife, Some(end)) => {
                    end_of_life = true;
                    if then != Some(LineState::EndOfLife) {
                        let since = end > day(doc.scanned_at);
                        let detail = if since {
                            format!("line {line} reached end of life on {end} (since the scan)")
                        } else {
                            format!("line {line} has been end of life since {end}")
                        };
                        reason(Kind::EndOfLife, format!("{detail}{upgrade}"), since, true);
                    }
                }
                (LineState::EndingSoon, Some(end)) => {
                    ending_soon = true;
                    if !matches!(then, Some(LineState::EndingSoon | LineState::EndOfLife)) {
                        let left = life.support_days_left.unwrap_or(0);
                        reason(
                            Kind::EndingSoon,
                            format!(
                                "line {line} loses support on {end} (in {}, --eol-warning){upgrade}",
                                days_text(left)
                            ),
                            true,
                            true,
                        );
                    }
                }
                _ => {}
            }
        }
        for advisory in advisories::matching(&known.advisories, version) {
            let listed = std::iter::once(&advisory.id)
                .chain(&advisory.aliases)
                .any(|id| doc.vulnerabilities.iter().any(|v| v == id));
            if listed {
                continue;
            }
            new_advisories.push(advisory);
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
                Kind::Advisory,
                format!(
                    "{}{severity} published since the scan{fixed}",
                    shown(&advisory.id, 100)
                ),
                true,
                true,
            );
        }
    }

    // Waivers that expired between the scan and today, and what they hid.
    let live_now = |w: &Waiver| w.expires.is_none_or(|e| e > today.now);
    let mut counting_again: Vec<&FailedFinding> = Vec::new();
    for waiver in &doc.waivers {
        let Some(expires) = waiver.expires else {
            continue;
        };
        if expires <= doc.scanned_at || expires > today.now {
            continue;
        }
        let hidden: Vec<&FailedFinding> = doc
            .failed
            .iter()
            .filter(|f| matches(&waiver.pattern, &f.id))
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
            .map(|f| match f.severity {
                Some(s) => format!("{} ({s})", shown(&f.id, 100)),
                None => shown(&f.id, 100),
            })
            .collect();
        if hidden.len() > 3 {
            names.push(format!("{} more", hidden.len() - 3));
        }
        reason(
            Kind::WaiverExpired,
            format!(
                "waiver for {} expired {}; it no longer hides {}",
                shown(&waiver.pattern, 100),
                day(expires),
                names.join(", ")
            ),
            true,
            true,
        );
        for f in hidden {
            if !counting_again.contains(&f) {
                counting_again.push(f);
            }
        }
    }

    // What the document itself said.
    match doc.state {
        State::Warning | State::Critical => reason(
            Kind::StateAtScan,
            format!(
                "{} at the scan: {}",
                doc.state.label(),
                shown(&doc.message, usize::MAX)
            ),
            false,
            false,
        ),
        State::Unknown => reason(
            Kind::ScanFailed,
            format!(
                "the scan failed: {}; scan it again",
                shown(doc.error.as_deref().unwrap_or(&doc.message), usize::MAX)
            ),
            false,
            true,
        ),
        State::Ok => {}
    }
    if days >= OLD_SCAN_DAYS {
        reason(
            Kind::OldScan,
            format!("scanned {} ago", days_text(days)),
            false,
            true,
        );
    }

    let state_now = state_now(
        doc,
        today,
        end_of_life,
        ending_soon,
        &new_advisories,
        &counting_again,
    );
    let urgency = match state_now {
        State::Critical => Urgency::Critical,
        State::Warning | State::Unknown => Urgency::Warning,
        State::Ok if reasons.iter().any(|r| r.action) => Urgency::Warning,
        State::Ok => Urgency::None,
    };
    reasons.sort_by_key(|r| r.kind);
    Row {
        host: doc.host.clone(),
        family: doc.product.as_ref().map(|p| p.family),
        version: doc.product.as_ref().map(|p| p.version.clone()),
        scanned_at: doc.scanned_at,
        days_since_scan: days,
        state_then: doc.state,
        state_now,
        urgency,
        priority: 0,
        reasons,
    }
}

/// The state the plugin would reach today, as far as the document tells (see the module).
fn state_now(
    doc: &Document,
    today: &Today,
    end_of_life: bool,
    ending_soon: bool,
    new_advisories: &[&advisories::Advisory],
    counting_again: &[&FailedFinding],
) -> State {
    if doc.state == State::Unknown {
        return State::Unknown;
    }
    if end_of_life {
        return State::Critical;
    }
    let mut rating = doc.rating.unwrap_or(5);
    for a in new_advisories {
        let start = match a.severity {
            Some(Severity::High | Severity::Critical) => 1,
            _ => 2,
        };
        rating = rating.min(start);
    }
    for f in counting_again {
        if f.role == "check"
            && f.counts
            && let Some(severity) = f.severity
        {
            rating = rating.min(severity.rating_cap());
        }
    }
    let mut state = if rating <= today.critical {
        State::Critical
    } else if rating <= today.warning {
        State::Warning
    } else {
        State::Ok
    };
    let raise = !new_advisories.is_empty()
        || ending_soon
        || (doc.check_hardening && counting_again.iter().any(|f| f.role == "hardening"));
    if raise && state == State::Ok {
        state = State::Warning;
    }
    // Never better than the document's own state (an UNKNOWN one returned above).
    doc.state.worst(state)
}

impl View {
    /// 0 when no host needs action, 1 when the most urgent is a warning, 2 when a host is
    /// CRITICAL now.
    pub fn exit_code(&self) -> i32 {
        match self.rows.iter().map(|r| r.urgency).max() {
            Some(Urgency::Critical) => 2,
            Some(Urgency::Warning) => 1,
            _ => 0,
        }
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
        let mut out = self.summary();
        out.push('\n');
        let mut judged = format!(
            "Judged {} of {} from {} at {}",
            counted(
                self.rows.len() + self.superseded,
                "result document",
                "result documents"
            ),
            counted(self.rows.len(), "host", "hosts"),
            counted(files, "file", "files"),
            stamp(self.now)
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
        out.push_str(&judged);
        out.push_str("\n\n");
        let header = ["#", "HOST", "PRODUCT", "STATE", "WHY"];
        let cells: Vec<[String; 4]> = self
            .rows
            .iter()
            .map(|r| {
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
            })
            .collect();
        let mut widths = [0usize; 4];
        for (i, w) in widths.iter_mut().enumerate() {
            *w = cells
                .iter()
                .map(|c| c[i].chars().count())
                .chain(std::iter::once(header[i].chars().count()))
                .max()
                .unwrap_or(0);
        }
        let pad = |text: &str, width: usize| {
            let n = text.chars().count();
            format!("{text}{}", " ".repeat(width.saturating_sub(n)))
        };
        let indent: usize = widths.iter().map(|w| w + 2).sum();
        let mut line = String::new();
        for (i, w) in widths.iter().enumerate() {
            line.push_str(&pad(header[i], *w));
            line.push_str("  ");
        }
        line.push_str(header[4]);
        out.push_str(&line);
        out.push('\n');
        for (row, cell) in self.rows.iter().zip(&cells) {
            let mut line = String::new();
            for (i, w) in widths.iter().enumerate() {
                line.push_str(&pad(&cell[i], *w));
                line.push_str("  ");
            }
            let mut why = row.reasons.iter().map(|r| r.detail.as_str());
            line.push_str(why.next().unwrap_or("nothing new"));
            out.push_str(&line);
            out.push('\n');
            for more in why {
                out.push_str(&" ".repeat(indent));
                out.push_str(more);
                out.push('\n');
            }
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
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct JsonRow<'r> {
            priority: usize,
            host: &'r str,
            product: Option<&'static str>,
            version: Option<&'r str>,
            scanned_at: String,
            days_since_scan: i64,
            state_then: &'static str,
            state_now: &'static str,
            urgency: Urgency,
            reasons: &'r [Reason],
        }
        let rows: Vec<JsonRow> = self
            .rows
            .iter()
            .map(|r| JsonRow {
                priority: r.priority,
                host: &r.host,
                product: r.family.map(|f| f.id()),
                version: r.version.as_deref(),
                scanned_at: stamp(r.scanned_at),
                days_since_scan: r.days_since_scan,
                state_then: r.state_then.label(),
                state_now: r.state_now.label(),
                urgency: r.urgency,
                reasons: &r.reasons,
            })
            .collect();
        let mut out = serde_json::to_string_pretty(&rows).unwrap_or_else(|_| "[]".to_string());
        out.push('\n');
        out
    }
}

fn counted(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

// --- Reading ------------------------------------------------------------------------------

/// Reads one file's content: a result document, or a JSON array of them (what
/// `check-storage-security --format json` and `check-storage-scanner scan` print). `room`:
/// how many more documents the view takes. `Err` says what is wrong, as the rest of a sentence
/// about the file (`is not JSON (...)`).
pub fn read(bytes: &[u8], room: usize) -> Result<Vec<Document>, String> {
    let mut docs = Vec::new();
    let mut over = false;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = FileSeed {
        docs: &mut docs,
        room,
        over: &mut over,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    match parsed {
        Ok(()) => Ok(docs),
        Err(_) if over => Err(format!(
            "holds more than {MAX_DOCUMENTS} result documents (with the files before it); give \
             fewer files at once"
        )),
        Err(e) => Err(problem(&e)),
    }
}

fn problem(e: &serde_json::Error) -> String {
    let text: String = e
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let text = shown(&text, 160);
    match e.classify() {
        serde_json::error::Category::Data => format!("is not a result document ({text})"),
        _ => format!("is not JSON ({text})"),
    }
}

struct FileSeed<'a> {
    docs: &'a mut Vec<Document>,
    room: usize,
    over: &'a mut bool,
}

impl<'de> DeserializeSeed<'de> for FileSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl FileSeed<'_> {
    fn push<E: de::Error>(&mut self, raw: RawDocument) -> Result<(), E> {
        if self.docs.len() >= self.room {
            *self.over = true;
            return Err(E::custom("over the cap"));
        }
        self.docs.push(raw.checked().map_err(E::custom)?);
        Ok(())
    }
}

impl<'de> Visitor<'de> for FileSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a result document (a JSON object) or an array of them")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, map: A) -> Result<(), A::Error> {
        let raw = RawDocument::deserialize(de::value::MapAccessDeserializer::new(map))?;
        self.push(raw)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let mut n = 0;
        while let Some(raw) = seq.next_element::<RawDocument>()? {
            self.push(raw)?;
            n += 1;
        }
        if n == 0 {
            return Err(de::Error::custom("an empty array holds no result document"));
        }
        Ok(())
    }
}

/// A result document as read: only the members the view uses (the rest is skipped unread).
#[derive(Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a result document (a JSON object)"
)]
struct RawDocument {
    host: String,
    scanned_at: String,
    state: String,
    message: Option<String>,
    rating: Option<u8>,
    error: Option<RawError>,
    product: Option<RawProduct>,
    lifecycle: Option<RawLifecycle>,
    #[serde(default)]
    vulnerabilities: Vec<RawVulnerability>,
    findings: Vec<RawFinding>,
    waivers: Vec<RawWaiver>,
    #[serde(default)]
    check_hardening: bool,
}

#[derive(Deserialize)]
struct RawError {
    message: String,
}

#[derive(Deserialize)]
struct RawProduct {
    family: ProductFamily,
    version: String,
}

#[derive(Deserialize)]
struct RawLifecycle {
    track: Option<Track>,
    state: LineState,
}

#[derive(Deserialize)]
struct RawVulnerability {
    id: String,
    #[serde(default)]
    aliases: Vec<String>,
}

#[derive(Deserialize)]
struct RawFinding {
    id: String,
    status: String,
    role: Option<String>,
    severity: Option<Severity>,
    counts: Option<bool>,
}

#[derive(Deserialize)]
struct RawWaiver {
    pattern: String,
    expires: Option<String>,
}

fn name(text: String, what: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > MAX_NAME_BYTES {
        return Err(format!(
            "{what} that is empty or longer than {MAX_NAME_BYTES} bytes"
        ));
    }
    Ok(text)
}

fn timestamp(text: &str, what: &str) -> Result<Timestamp, String> {
    text.parse::<Timestamp>().map_err(|_| {
        format!(
            "{what} {:?} that is no timestamp with a time zone",
            shown(text, 40)
        )
    })
}

impl RawDocument {
    /// The document the view keeps, every name within its cap.
    fn checked(self) -> Result<Document, String> {
        let host = name(self.host, "a host")?;
        let scanned_at = timestamp(&self.scanned_at, "a scannedAt")?;
        let state = match self.state.as_str() {
            "OK" => State::Ok,
            "WARNING" => State::Warning,
            "CRITICAL" => State::Critical,
            "UNKNOWN" => State::Unknown,
            other => {
                return Err(format!(
                    "a state {:?} that is none of OK, WARNING, CRITICAL, UNKNOWN",
                    shown(other, 40)
                ));
            }
        };
        let product = match self.product {
            Some(p) => Some(Product {
                family: p.family,
                version: name(p.version, "a product version")?,
            }),
            None => None,
        };
        if self.vulnerabilities.len() > MAX_LIST {
            return Err(format!("more than {MAX_LIST} vulnerabilities"));
        }
        let mut vulnerabilities = Vec::new();
        for v in self.vulnerabilities {
            vulnerabilities.push(name(v.id, "an advisory id")?);
            for alias in v.aliases.into_iter().take(16) {
                vulnerabilities.push(name(alias, "an advisory alias")?);
            }
        }
        let mut failed = Vec::new();
        for f in self.findings {
            match f.status.as_str() {
                "failed" => {}
                "passed" | "skipped" | "indeterminate" | "network-limited" => continue,
                other => {
                    return Err(format!(
                        "a finding with the unknown status {:?}",
                        shown(other, 40)
                    ));
                }
            }
            if failed.len() >= MAX_LIST {
                return Err(format!("more than {MAX_LIST} failing findings"));
            }
            failed.push(FailedFinding {
                id: name(f.id, "a finding id")?,
                role: f.role.map(|r| truncated(&r, 20)).unwrap_or_default(),
                severity: f.severity,
                counts: f.counts.unwrap_or(true),
            });
        }
        if self.waivers.len() > MAX_WAIVERS {
            return Err(format!("more than {MAX_WAIVERS} waivers"));
        }
        let mut waivers = Vec::new();
        for w in self.waivers {
            waivers.push(Waiver {
                pattern: name(w.pattern, "a waiver pattern")?,
                expires: match w.expires {
                    Some(text) => Some(timestamp(&text, "a waiver expiry")?),
                    None => None,
                },
            });
        }
        let cut = |text: String| truncated(&text, MAX_MESSAGE_CHARS);
        Ok(Document {
            host,
            scanned_at,
            state,
            message: self.message.map(cut).unwrap_or_default(),
            rating: self.rating,
            error: self.error.map(|e| cut(e.message)),
            product,
            lifecycle: self.lifecycle.map(|l| DocumentLifecycle {
                track: l.track,
                state: l.state,
            }),
            vulnerabilities,
            failed,
            waivers,
            check_hardening: self.check_hardening,
        })
    }
}

#[cfg(test)]
mod tests;
