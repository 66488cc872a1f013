//! `check-storage-scanner review-waivers --result FILE`: which waivers of past runs need
//! cleaning up. It reads result documents (the plugin's `--format json` array, or one document
//! of `check-storage-scanner scan`), several files and hosts together, and changes nothing.
//!
//! | Class | When | Suggestion |
//! |---|---|---|
//! | expired | its expiry has passed | remove it or renew it with a new date and reason |
//! | expiring | it ends within `--waiver-warning` days (default 14) | fix what it hides, or renew it |
//! | unused | it hides no failing finding where it is listed | remove it |
//! | overlapping | two waivers hide one finding of a host | keep the dated, else the narrower one |
//! | permanent | it has no expiry | give it an expiry and a reason |
//!
//! Every class but permanent needs attention (exit 1). A permanent waiver is a supported choice
//! (`--ignore-hardening`), so it is listed with its suggestion but needs no attention by itself. States are judged at
//! the review's clock (`COS_NOW` pins it), not at the documents' scan times: a waiver that was
//! active when the host was scanned may have expired since. A finding that reached no decision
//! (indeterminate, network-limited) keeps a waiver matching it from being called unused.
//!
//! Reading (`read`) takes the result document's reader (`report::read_documents`, capped in
//! bytes), then keeps of each document only the interned ids and waivers the review needs: a
//! file that holds more than the caps below is refused rather than held in memory. The caps bound the work too: every waiver
//! is matched once against every distinct failing id, and each pair of waivers looks at the
//! sets of waivers found hiding one finding together (at most [`MAX_OVERLAP_SETS`]).

use crate::assess::waivers::{matches, whole_days};
use jiff::Timestamp;
use std::collections::HashMap;

/// The window of expiring waivers when `--waiver-warning` is not given.
pub const DEFAULT_WINDOW_DAYS: i64 = 14;
/// Result documents in all files of one review (a fleet of hosts, or one host's history).
pub const MAX_DOCUMENTS: usize = 4096;
/// Distinct waivers in all documents; a configuration has a handful.
pub const MAX_WAIVERS: usize = 128;
/// Distinct failing or undecided finding ids in all documents; the checks know about a
/// hundred, advisories and exposed paths add some.
pub const MAX_IDS: usize = 4096;
/// Longest host, finding id or waiver pattern; ids of our checks are below 80 bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// Longest waiver reason.
pub const MAX_REASON_BYTES: usize = 1024;
/// Different sets of waivers that hide one finding together. A configuration with a few
/// overlapping patterns makes a few; each set holds two bit sets, and every pair of waivers
/// looks at every set, so a bound keeps both memory and time small.
pub const MAX_OVERLAP_SETS: usize = 1024;

/// A waiver as a result document lists it. Equal waivers of several documents are one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiver {
    pub pattern: String,
    /// Where it was given: `--ignore-hardening`, `--waive-until`.
    pub source: String,
    /// `None` for a permanent waiver.
    pub expires: Option<Timestamp>,
    pub reason: Option<String>,
}

/// What the review keeps of one result document.
#[derive(Clone, Debug, Default)]
struct Document {
    host: String,
    /// The scan failed: no findings, and the plugin lists no waivers for it.
    scan_failed: bool,
    /// Interned ids of failing findings, sorted, once each.
    failed: Vec<u32>,
    /// Interned ids of findings without a decision (indeterminate, network-limited).
    undecided: Vec<u32>,
    /// Interned waivers the document lists, sorted, once each.
    listed: Vec<u32>,
}

/// The result documents of a review, read from one or more files.
#[derive(Debug, Default)]
pub struct Documents {
    docs: Vec<Document>,
    waivers: Vec<Waiver>,
    ids: Vec<String>,
    id_index: HashMap<String, u32>,
    files: usize,
}

/// A set of small numbers (interned ids), one bit each.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }

    fn of(len: usize, members: impl IntoIterator<Item = usize>) -> Bits {
        let mut bits = Bits::new(len);
        for i in members {
            bits.insert(i);
        }
        bits
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    fn and(&self, other: &Bits) -> Bits {
        Bits(self.0.iter().zip(&other.0).map(|(a, b)| a & b).collect())
    }

    fn or_assign(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }

    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn and_not(&self, other: &Bits) -> Bits {
        Bits(self.0.iter().zip(&other.0).map(|(a, b)| a & !b).collect())
    }

    fn is_subset(&self, other: &Bits) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a & !b == 0)
    }

    fn members(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(n, word)| {
            (0..64)
                .filter(move |bit| word & (1 << bit) != 0)
                .map(move |bit| n * 64 + bit)
        })
    }
}

/// The classes of the review, in the order the report lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Expired,
    Expiring,
    Unused,
    Overlapping,
    Permanent,
}

impl Class {
    /// Every class in report order, with its name.
    pub const NAMED: [(Class, &str); 5] = [
        (Class::Expired, "expired"),
        (Class::Expiring, "expiring"),
        (Class::Unused, "unused"),
        (Class::Overlapping, "overlapping"),
        (Class::Permanent, "permanent"),
    ];

    /// Whether a waiver of this class needs the operator's attention (exit 1).
    pub fn needs_attention(self) -> bool {
        self != Class::Permanent
    }
}

/// One line of the report: a waiver in one class, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub class: Class,
    /// The waiver the suggestion is about (for an overlap, the one to remove or narrow).
    pub waiver: Waiver,
    /// The line after the indentation: the waiver, what was found, the suggestion.
    pub line: String,
}

/// The review of a set of result documents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Review {
    pub entries: Vec<Entry>,
    /// Distinct waivers in all documents.
    pub waivers: usize,
    /// Distinct waivers with an entry of a class that needs attention.
    pub attention: usize,
    pub documents: usize,
    pub hosts: usize,
    pub files: usize,
    pub failed_scans: usize,
    pub now: Timestamp,
    pub window_days: i64,
}

/// What the documents say about each waiver, worked out once.
struct Facts<'d> {
    docs: &'d Documents,
    /// What each waiver's pattern covers among the ids seen (matched once per pair).
    covers: Vec<Bits>,
    /// Each document's failing ids.
    failed: Vec<Bits>,
    /// The documents that list each waiver, in order.
    listing: Vec<Vec<usize>>,
    /// Distinct hosts in the order their documents were read, and each document's.
    hosts: Vec<&'d str>,
    host_of: Vec<usize>,
    /// The failing ids each waiver hides (or, expired, no longer hides), and their hosts.
    hides: Vec<Bits>,
    hidden_on: Vec<Bits>,
    /// Whether a waiver matches an undecided finding where it is listed.
    maybe_needed: Vec<bool>,
}

impl<'d> Facts<'d> {
    fn of(docs: &'d Documents) -> Facts<'d> {
        let ids = docs.ids.len();
        let bits_of = |list: &[u32]| Bits::of(ids, list.iter().map(|i| *i as usize));
        let covers: Vec<Bits> = docs
            .waivers
            .iter()
            .map(|w| Bits::of(ids, (0..ids).filter(|i| matches(&w.pattern, &docs.ids[*i]))))
            .collect();
        let failed: Vec<Bits> = docs.docs.iter().map(|d| bits_of(&d.failed)).collect();
        let undecided: Vec<Bits> = docs.docs.iter().map(|d| bits_of(&d.undecided)).collect();
        let mut listing: Vec<Vec<usize>> = vec![Vec::new(); docs.waivers.len()];
        for (d, doc) in docs.docs.iter().enumerate() {
            for w in &doc.listed {
                listing[*w as usize].push(d);
            }
        }
        let (mut hosts, mut host_of) = (Vec::new(), Vec::new());
        let mut host_index: HashMap<&str, usize> = HashMap::new();
        for doc in &docs.docs {
            let h = *host_index.entry(doc.host.as_str()).or_insert_with(|| {
                hosts.push(doc.host.as_str());
                hosts.len() - 1
            });
            host_of.push(h);
        }
        let (mut hides, mut hidden_on, mut maybe_needed) = (Vec::new(), Vec::new(), Vec::new());
        for (cover, listed_in) in covers.iter().zip(&listing) {
            let mut ids_hidden = Bits::new(ids);
            let mut on = Bits::new(hosts.len());
            let mut maybe = false;
            for &d in listed_in {
                let here = failed[d].and(cover);
                if !here.is_empty() {
                    ids_hidden.or_assign(&here);
                    on.insert(host_of[d]);
                }
                maybe |= !undecided[d].and(cover).is_empty();
            }
            hides.push(ids_hidden);
            hidden_on.push(on);
            maybe_needed.push(maybe);
        }
        Facts {
            docs,
            covers,
            failed,
            listing,
            hosts,
            host_of,
            hides,
            hidden_on,
            maybe_needed,
        }
    }

    /// `a, b and c`: ids by name.
    fn ids(&self, bits: &Bits) -> String {
        listed(
            bits.members().map(|i| self.docs.ids[i].as_str()),
            bits.len(),
            "finding",
        )
    }

    /// `a.example and b.example`, `a, b, c and 4 more hosts`.
    fn hosts(&self, bits: &Bits) -> String {
        listed(bits.members().map(|h| self.hosts[h]), bits.len(), "host")
    }
}

/// Reviews every waiver of the documents at `now`; `window_days` is `--waiver-warning`. `Err`
/// (the rest of a sentence about the documents) when they are beyond what one review takes.
pub fn review(docs: &Documents, now: Timestamp, window_days: i64) -> Result<Review, String> {
    let facts = Facts::of(docs);
    let expiring: Vec<bool> = docs
        .waivers
        .iter()
        .map(|w| {
            w.expires
                .is_some_and(|e| e > now && whole_days(now, e) <= window_days)
        })
        .collect();
    let (alerting, alerting_on) = alerting(&facts, &expiring);
    let mut entries = Vec::new();
    for (w, waiver) in docs.waivers.iter().enumerate() {
        let label = label(waiver);
        let mut push = |class, line: String| {
            entries.push(Entry {
                class,
                waiver: waiver.clone(),
                line,
            })
        };
        match waiver.expires {
            Some(expires) if expires <= now => {
                let again = if facts.hides[w].is_empty() {
                    String::new()
                } else {
                    format!(
                        "; it no longer hides {} on {}",
                        facts.ids(&facts.hides[w]),
                        facts.hosts(&facts.hidden_on[w])
                    )
                };
                push(
                    Class::Expired,
                    format!(
                        "{label}: ended {}{again}; remove it or renew it with a new date and \
                         reason",
                        ago(whole_days(expires, now))
                    ),
                );
                // An expired waiver hides nothing: unused and overlapping do not apply.
                continue;
            }
            Some(expires) if expiring[w] => {
                let then = if !alerting[w].is_empty() {
                    format!(
                        "; then {} on {} will alert again",
                        facts.ids(&alerting[w]),
                        facts.hosts(&alerting_on[w])
                    )
                } else if !facts.hides[w].is_empty() {
                    "; a waiver outlasting it hides the same".to_string()
                } else {
                    String::new()
                };
                push(
                    Class::Expiring,
                    format!(
                        "{label}: ends {}{then}; fix what it hides, or renew it with a new date \
                         and reason",
                        within(whole_days(now, expires))
                    ),
                );
            }
            Some(_) => {}
            None => push(
                Class::Permanent,
                format!(
                    "{label}: never expires; give it an expiry and a reason: --waive-until \
                     '{}|EXPIRY|REASON'",
                    shown(&waiver.pattern)
                ),
            ),
        }
        if facts.hides[w].is_empty() && !facts.maybe_needed[w] {
            let hosts = Bits::of(
                facts.hosts.len(),
                facts.listing[w].iter().map(|d| facts.host_of[*d]),
            );
            push(
                Class::Unused,
                format!(
                    "{label}: matches no failing finding on {}; remove it",
                    facts.hosts(&hosts)
                ),
            );
        }
    }
    entries.extend(overlaps(&facts, now)?);
    entries.sort_by_key(|e| e.class);
    let attention = entries.iter().filter(|e| e.class.needs_attention());
    Ok(Review {
        attention: crate::probe::distinct(attention.map(|e| &e.waiver)).len(),
        entries,
        waivers: docs.waivers.len(),
        documents: docs.docs.len(),
        hosts: facts.hosts.len(),
        files: docs.files,
        failed_scans: docs.docs.iter().filter(|d| d.scan_failed).count(),
        now,
        window_days,
    })
}

/// What alerts again when each expiring waiver ends: the failing ids it hides that no waiver
/// of the same document ending later (or never) also hides, and the hosts they fail on.
fn alerting(facts: &Facts, expiring: &[bool]) -> (Vec<Bits>, Vec<Bits>) {
    let docs = facts.docs;
    let ids = docs.ids.len();
    let mut alerting = vec![Bits::new(ids); docs.waivers.len()];
    let mut on = vec![Bits::new(facts.hosts.len()); docs.waivers.len()];
    // When a waiver ends, permanent ones last.
    let end = |w: usize| {
        let expires = docs.waivers[w].expires;
        (expires.is_none(), expires)
    };
    for (d, doc) in docs.docs.iter().enumerate() {
        if !doc.listed.iter().any(|w| expiring[*w as usize]) {
            continue;
        }
        let mut order: Vec<usize> = doc.listed.iter().map(|w| *w as usize).collect();
        order.sort_by_key(|w| std::cmp::Reverse(end(*w)));
        // What the waivers ending after the current ones hide: one pass, latest first.
        let mut outlasting = Bits::new(ids);
        for group in order.chunk_by(|a, b| end(*a) == end(*b)) {
            for &w in group.iter().filter(|w| expiring[**w]) {
                let here = facts.failed[d].and(&facts.covers[w]).and_not(&outlasting);
                if !here.is_empty() {
                    alerting[w].or_assign(&here);
                    on[w].insert(facts.host_of[d]);
                }
            }
            for &w in group {
                outlasting.or_assign(&facts.covers[w]);
            }
        }
    }
    (alerting, on)
}

/// Failing ids that the same set of live waivers hides, and the hosts they fail on.
struct Shared {
    /// The waivers, one bit each (at most [`MAX_WAIVERS`], 128).
    waivers: u128,
    ids: Bits,
    hosts: Bits,
}

const _: () = assert!(MAX_WAIVERS <= 128, "waiver sets are u128 masks");

/// Two live waivers hiding the same failing finding of one document: one line per pair, about
/// the one to remove or narrow. Each failing id of a document is looked at once, grouped by the
/// set of its live waivers that hide it; a pair then looks at the groups (at most one per failing
/// id of a document), not at every document again.
fn overlaps(facts: &Facts, now: Timestamp) -> Result<Vec<Entry>, String> {
    let waivers = &facts.docs.waivers;
    let mask = |ws: &mut dyn Iterator<Item = usize>| ws.fold(0u128, |m, w| m | 1 << w);
    let live =
        mask(&mut (0..waivers.len()).filter(|w| waivers[*w].expires.is_none_or(|e| e > now)));
    // Which waivers cover each id.
    let mut covering = vec![0u128; facts.docs.ids.len()];
    for (w, cover) in facts.covers.iter().enumerate() {
        for i in cover.members() {
            covering[i] |= 1 << w;
        }
    }
    let mut groups: Vec<Shared> = Vec::new();
    let mut group_of: HashMap<u128, usize> = HashMap::new();
    for (d, doc) in facts.docs.docs.iter().enumerate() {
        let here = live & mask(&mut doc.listed.iter().map(|w| *w as usize));
        if here.count_ones() < 2 {
            continue;
        }
        for &i in &doc.failed {
            let set = covering[i as usize] & here;
            if set.count_ones() < 2 {
                continue;
            }
            let g = match group_of.get(&set) {
                Some(g) => *g,
                None if groups.len() >= MAX_OVERLAP_SETS => {
                    return Err(format!(
                        "overlap in more than {MAX_OVERLAP_SETS} different ways (sets of waivers \
                         hiding one finding together); review fewer result documents at once"
                    ));
                }
                None => {
                    groups.push(Shared {
                        waivers: set,
                        ids: Bits::new(facts.docs.ids.len()),
                        hosts: Bits::new(facts.hosts.len()),
                    });
                    group_of.insert(set, groups.len() - 1);
                    groups.len() - 1
                }
            };
            groups[g].ids.insert(i as usize);
            groups[g].hosts.insert(facts.host_of[d]);
        }
    }
    let mut entries = Vec::new();
    for a in 0..waivers.len() {
        for b in a + 1..waivers.len() {
            let pair = (1u128 << a) | (1u128 << b);
            let mut shared = Bits::new(facts.docs.ids.len());
            let mut hosts = Bits::new(facts.hosts.len());
            for group in groups.iter().filter(|g| g.waivers & pair == pair) {
                shared.or_assign(&group.ids);
                hosts.or_assign(&group.hosts);
            }
            if shared.is_empty() {
                continue;
            }
            let (keep, other, why) = keeper(a, b, waivers, &facts.hides);
            let (k, o) = (&waivers[keep], &waivers[other]);
            let action = if facts.hides[other].is_subset(&facts.hides[keep]) {
                format!("remove {}", short(o, k))
            } else {
                format!(
                    "narrow {} so it no longer covers {}",
                    short(o, k),
                    facts.ids(&shared)
                )
            };
            entries.push(Entry {
                class: Class::Overlapping,
                waiver: o.clone(),
                line: format!(
                    "{} and {} both hide {} on {}: keep {why} {}; {action}",
                    label(o),
                    label(k),
                    facts.ids(&shared),
                    facts.hosts(&hosts),
                    short(k, o),
                ),
            });
        }
    }
    Ok(entries)
}

/// Of two overlapping waivers, the one to keep, the other, and the word for why.
fn keeper(a: usize, b: usize, waivers: &[Waiver], hides: &[Bits]) -> (usize, usize, &'static str) {
    let (wa, wb) = (&waivers[a], &waivers[b]);
    match (wa.expires, wb.expires) {
        // The dated one ends; the permanent one would keep hiding the finding after it.
        (Some(_), None) => return (a, b, "the dated"),
        (None, Some(_)) => return (b, a, "the dated"),
        _ => {}
    }
    let (ha, hb) = (&hides[a], &hides[b]);
    if ha != hb {
        if ha.is_subset(hb) {
            return (a, b, "the narrower");
        }
        if hb.is_subset(ha) {
            return (b, a, "the narrower");
        }
    }
    // Equal reach here: the pattern the other one's pattern covers is the narrower.
    match (
        matches(&wb.pattern, &wa.pattern),
        matches(&wa.pattern, &wb.pattern),
    ) {
        (true, false) => return (a, b, "the narrower"),
        (false, true) => return (b, a, "the narrower"),
        _ => {}
    }
    match (wa.expires, wb.expires) {
        // While the later one stands, the earlier expiry changes nothing.
        (Some(ea), Some(eb)) if eb > ea => (b, a, "the later-ending"),
        (Some(ea), Some(eb)) if ea > eb => (a, b, "the later-ending"),
        _ => (a, b, "one of them,"),
    }
}

/// A name from a document as the report shows it: as is when it is plain printable ASCII,
/// else quoted with escapes (no control character or bidirectional override reaches a
/// terminal), and cut at 100 characters.
fn shown(text: &str) -> String {
    cut(text, !text.bytes().all(|b| b.is_ascii_graphic()))
}

/// `text` cut at 100 characters, and `quoted` with escapes.
fn cut(text: &str, quoted: bool) -> String {
    let cut: String = text.chars().take(100).collect();
    let more = if cut.len() < text.len() { "..." } else { "" };
    if quoted {
        format!("{cut:?}{more}")
    } else {
        format!("{cut}{more}")
    }
}

/// `hstsPreload (--ignore-hardening)`, `tlsTrusted (--waive-until, until
/// 2026-11-01T00:00:00Z, "old certificate")`.
fn label(w: &Waiver) -> String {
    let (pattern, source) = (shown(&w.pattern), shown(&w.source));
    let until = w.expires.map(|e| format!(", until {e}"));
    let reason = w.reason.as_ref().map(|r| format!(", {}", cut(r, true)));
    let (until, reason) = (until.unwrap_or_default(), reason.unwrap_or_default());
    format!("{pattern} ({source}{until}{reason})")
}

/// A waiver named against another: by its pattern, with its expiry when the patterns agree.
fn short(w: &Waiver, other: &Waiver) -> String {
    match w.expires {
        Some(expires) if w.pattern == other.pattern => {
            format!("{} (until {expires})", shown(&w.pattern))
        }
        _ => shown(&w.pattern),
    }
}

/// `a.example`, `a.example, b.example and c.example`, `a, b, c and 4 more hosts`: the first
/// three of `total` names shown, the rest counted.
fn listed<'a>(names: impl Iterator<Item = &'a str>, total: usize, noun: &str) -> String {
    let first: Vec<String> = names.take(3).map(shown).collect();
    match (first.len(), total.saturating_sub(first.len())) {
        (0, _) => format!("no {noun}"),
        (1, 0) => first[0].clone(),
        (n, 0) => format!("{} and {}", first[..n - 1].join(", "), first[n - 1]),
        (_, 1) => format!("{} and 1 more {noun}", first.join(", ")),
        (_, more) => format!("{} and {more} more {noun}s", first.join(", ")),
    }
}

fn ago(days: i64) -> String {
    match days {
        0 => "less than a day ago".to_string(),
        n => format!("{} ago", counted(n, "day", "days")),
    }
}

fn within(days: i64) -> String {
    match days {
        0 => "within a day".to_string(),
        n => format!("in {}", counted(n, "day", "days")),
    }
}

/// `1 host`, `3 hosts`.
pub(crate) fn counted<N: std::fmt::Display + PartialEq + From<u8>>(
    n: N,
    one: &str,
    many: &str,
) -> String {
    if n == N::from(1) {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

impl Review {
    /// The entries of one class, in the order the waivers were first listed.
    pub fn of(&self, class: Class) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(move |e| e.class == class)
    }

    /// 0 when nothing needs attention, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.attention > 0)
    }

    /// The report: the summary line a monitoring system reads, what was reviewed, one line
    /// per waiver and class grouped by class, and performance data.
    pub fn text(&self) -> String {
        let count = |class| self.of(class).count();
        let mut out = if self.waivers == 0 {
            format!(
                "OK: no waivers in {}\n",
                counted(self.documents, "result document", "result documents")
            )
        } else if self.attention == 0 {
            let permanent = count(Class::Permanent);
            format!(
                "OK: {}, none needs attention{}\n",
                counted(self.waivers, "waiver", "waivers"),
                if permanent > 0 {
                    format!(" ({permanent} permanent)")
                } else {
                    String::new()
                }
            )
        } else {
            let parts: Vec<String> = Class::NAMED
                .iter()
                .filter(|(c, _)| c.needs_attention() && count(*c) > 0)
                .map(|(c, name)| format!("{} {name}", count(*c)))
                .collect();
            format!(
                "WARNING: {} ({})\n",
                counted(
                    self.attention,
                    "waiver needs attention",
                    "waivers need attention"
                ),
                parts.join(", ")
            )
        };
        out.push_str(&format!(
            "Reviewed {} of {} from {} at {}{}; expiring means ending within {} \
             (--waiver-warning)\n",
            counted(self.documents, "result document", "result documents"),
            counted(self.hosts, "host", "hosts"),
            counted(self.files, "file", "files"),
            crate::clock::Now(self.now).stamp(),
            if self.failed_scans > 0 {
                format!(
                    " ({} without findings to review against)",
                    counted(self.failed_scans, "failed scan", "failed scans")
                )
            } else {
                String::new()
            },
            counted(self.window_days.max(0), "day", "days"),
        ));
        for (class, name) in Class::NAMED {
            let n = count(class);
            if n == 0 {
                continue;
            }
            let mut title = name.to_string();
            title[..1].make_ascii_uppercase();
            if class == Class::Expiring {
                let window = counted(self.window_days.max(0), "day", "days");
                title.push_str(&format!(" within {window}"));
            }
            out.push_str(&format!("{title} ({n}):\n"));
            for entry in self.of(class) {
                out.push_str("  ");
                out.push_str(&entry.line);
                out.push('\n');
            }
        }
        out.push_str(&format!("| waivers={};;;0", self.waivers));
        for (class, name) in Class::NAMED {
            let warn = if class.needs_attention() { "0" } else { "" };
            out.push_str(&format!(" {name}={};{warn};;0", count(class)));
        }
        out.push('\n');
        out
    }
}

mod read;
#[cfg(test)]
mod tests;
