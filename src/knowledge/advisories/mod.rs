//! Security advisories and the readers for the three formats operators can hand us: the native
//! file we ship, GitHub advisory API answers and OSV documents.
//!
//! Readers are forgiving about single bad ranges (a feed with one odd version string must not
//! hide the other advisories) but strict about the document's shape, so that a wrong file is
//! reported instead of silently yielding "no advisories".

use super::{ProductFamily, parse_version};
use crate::capped::{self, Flag, ForEach, Members, NonNull, Obj, ObjSeed, Reader, Shallow, Text};
use crate::severity::Severity;
use semver::{Prerelease, Version};
use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess};
use std::cell::Cell;
use std::collections::HashSet;
use std::marker::PhantomData;

/// Affected versions of one advisory: `[introduced, fixed)`, further bounded above by the
/// inclusive `last_affected` when a source only knows the last vulnerable release (OSV
/// `last_affected`, GitHub `<= x`): turning `<= x` into "fixed in the next patch" would wrongly
/// clear pre-releases of that patch.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AffectedRange {
    /// First affected version, included. `None`: affected from the beginning.
    pub introduced: Option<Version>,
    /// First version with the fix, excluded. `None` (with no `last_affected`): not fixed.
    pub fixed: Option<Version>,
    /// Last affected version, included.
    pub last_affected: Option<Version>,
}

impl AffectedRange {
    fn new(
        introduced: Option<Version>,
        fixed: Option<Version>,
        last_affected: Option<Version>,
    ) -> AffectedRange {
        AffectedRange {
            introduced,
            fixed,
            last_affected,
        }
    }

    /// Whether `v` lies in the range, its build metadata ignored.
    pub fn contains(&self, v: &Version) -> bool {
        let v = &super::without_build(v);
        self.introduced.as_ref().is_none_or(|i| v >= i)
            && self.fixed.as_ref().is_none_or(|f| v < f)
            && self.last_affected.as_ref().is_none_or(|l| v <= l)
    }

    /// Whether the range says anything. One that contains nothing is a data error, and one open
    /// on both sides is what the Go database writes when it could not map a product's versions
    /// (`introduced: 0`, no fix): taken literally it would flag every release ever made.
    fn is_usable(&self) -> bool {
        match (&self.introduced, &self.fixed, &self.last_affected) {
            (None, None, None) => false,
            (Some(i), Some(f), _) if i >= f => false,
            (Some(i), _, Some(l)) if i > l => false,
            _ => true,
        }
    }
}

/// One advisory, already narrowed to the product family it was read for.
#[derive(Clone, Debug, PartialEq)]
pub struct Advisory {
    pub id: String,
    /// Other identifiers of the same flaw (CVE, GO-, GHSA-), used to de-duplicate sources.
    pub aliases: Vec<String>,
    pub summary: String,
    pub severity: Option<Severity>,
    pub url: Option<String>,
    pub ranges: Vec<AffectedRange>,
}

impl Advisory {
    pub fn affects(&self, v: &Version) -> bool {
        self.ranges.iter().any(|r| r.contains(v))
    }

    /// Every release that fixes one of the ranges, ascending: the caller picks the first one
    /// above the installed version.
    pub fn fixed_versions(&self) -> Vec<Version> {
        let mut fixed: Vec<Version> = self.ranges.iter().filter_map(|r| r.fixed.clone()).collect();
        fixed.sort();
        fixed.dedup();
        fixed
    }

    fn identifiers(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.id.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

/// Why an advisory document could not be used: one line that says how to fix it.
type AdvisoryError = String;

/// Reads an advisory document, detecting its format, and keeps what concerns `family`.
///
/// Advisories whose ranges are all unusable are dropped rather than failing the document, so a
/// single odd entry in a feed cannot hide the others; an advisory without any usable range
/// would otherwise match nothing (or, worse, everything).
///
/// The document is read into typed values member by member (`capped`), never into a
/// `serde_json::Value` tree: what does not concern the product is skipped as it is read, and
/// what is kept is bounded by [`MAX_KEPT_BYTES`], so a hostile feed answer costs about its own
/// size (and serde_json's buffer for its longest string), never a tree of it.
pub fn parse_document(text: &str, family: ProductFamily) -> Result<Vec<Advisory>, AdvisoryError> {
    let ctx = Ctx {
        family,
        kept: Cell::new(0),
        over: Cell::new(false),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let read =
        capped::read(&mut de, DocumentSeed(&ctx)).and_then(|document| de.end().map(|()| document));
    let document = read.map_err(|e| {
        format!(
            "advisory document is not valid JSON ({e}): fix the file or point the setting at a JSON advisory document"
        )
    })?;
    if ctx.over.get() {
        return Err(format!(
            "advisory document holds more than {} KiB of advisories for {}: refused; point the \
             setting at a document about {} only",
            MAX_KEPT_BYTES / 1024,
            family.display_name(),
            family.display_name()
        ));
    }
    document
}

/// What one document may keep while it is read (advisories, ranges, events, aliases), roughly
/// counted in bytes. A real document keeps a few KiB; one that would keep more is refused
/// instead of growing the process.
pub const MAX_KEPT_BYTES: usize = 2 * 1024 * 1024;

/// Aliases (and GitHub identifiers) read per advisory; real advisories have two or three.
const MAX_ALIASES: usize = 32;

const RANGE_COST: usize = std::mem::size_of::<AffectedRange>();
const EVENT_COST: usize = std::mem::size_of::<Event>();

/// The reading context: the product family, and what the document has kept so far.
struct Ctx {
    family: ProductFamily,
    kept: Cell<usize>,
    /// Set once the document would keep more than `MAX_KEPT_BYTES`; nothing is kept after.
    over: Cell<bool>,
}

type C<'a> = &'a Ctx;

impl Ctx {
    /// Accounts for `bytes` more kept; false (keep nothing) once the budget is spent.
    fn keep(&self, bytes: usize) -> bool {
        if self.over.get() {
            return false;
        }
        let total = self.kept.get().saturating_add(bytes);
        if total > MAX_KEPT_BYTES {
            self.over.set(true);
            return false;
        }
        self.kept.set(total);
        true
    }

    /// Accounts for a finished advisory; `None` once the budget is spent.
    fn keep_advisory(&self, advisory: Advisory) -> Option<Advisory> {
        let strings = advisory.id.len()
            + advisory.summary.len()
            + advisory.url.as_ref().map_or(0, String::len)
            + advisory.aliases.iter().map(String::len).sum::<usize>();
        self.keep(std::mem::size_of::<Advisory>() + strings)
            .then_some(advisory)
    }
}

fn unrecognised(what: &str) -> AdvisoryError {
    format!(
        "{what} is not a native, GitHub advisory or OSV document: expected an object with `advisories`, a GitHub advisory with `ghsa_id`, or an OSV document with `id` and `affected`"
    )
}

/// The whole document: an object (native, OSV query answer, or one GitHub or OSV advisory) or
/// a list of GitHub or OSV advisories.
struct DocumentSeed<'a>(C<'a>);

impl<'de> Reader<'de> for DocumentSeed<'_> {
    type Value = Result<Vec<Advisory>, AdvisoryError>;

    fn shallow<E: de::Error>(self, value: Shallow) -> Result<Self::Value, E> {
        Ok(Err(unrecognised(json_kind(&value))))
    }

    fn list<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut list = ItemList::default();
        while let Some(item) = seq.next_element_seed(ObjSeed::<AdvisoryObject, _>::new(self.0))? {
            list.push(self.0, item);
        }
        Ok(list.result())
    }

    fn mapping<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let mut top = TopLevel::default();
        capped::each_member(map, |key, map| top.member(self.0, key, map))?;
        Ok(top.finish(self.0))
    }
}

/// A JSON value that is no advisory document or list item, as messages name it.
fn json_kind(value: &Shallow) -> &'static str {
    match value {
        Shallow::Null => "JSON null",
        Shallow::Bool(_) => "a JSON boolean",
        Shallow::Number(_) => "a JSON number",
        Shallow::Text(_) => "a JSON string",
        Shallow::List => "a JSON list",
        Shallow::Mapping => "a JSON object",
    }
}

/// `Members` for a reader of this module: `read` reads the value of a key it knows (the reader
/// as `this`), or skips it with `return Ok(false)`. Written per reader rather than derived, so
/// that a later duplicate key wins, as it did when documents were read into a tree (derive
/// refuses a duplicate key).
macro_rules! members {
    ($reader:ty, |$this:ident, $ctx:pat_param, $key:ident, $map:ident| $read:expr) => {
        impl<'c> Members<C<'c>> for $reader {
            fn member<'de, A: MapAccess<'de>>(
                &mut self,
                ctx: C<'c>,
                $key: &str,
                $map: &mut A,
            ) -> Result<bool, A::Error> {
                let ($this, $ctx) = (self, ctx);
                $read;
                Ok(true)
            }
        }
    };
}

/// Visits the value of a member as a list, each element read as `T`; whether it was a list.
fn each<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    map: &mut A,
    each: impl FnMut(T),
) -> Result<bool, A::Error> {
    Ok(each_or_other(map, each)?.is_none())
}

/// [`each`], giving the value that stood there when it was no list.
fn each_or_other<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    map: &mut A,
    each: impl FnMut(T),
) -> Result<Option<Shallow>, A::Error> {
    map.next_value_seed(ForEach {
        seed: PhantomData::<T>,
        each,
    })
}

/// [`each`] for a list of objects read by one of this module's readers (`Err`: an element
/// that is no object).
fn each_object<'de, 'c, T: Members<C<'c>>, A: MapAccess<'de>>(
    ctx: C<'c>,
    map: &mut A,
    each: impl FnMut(Result<T, Shallow>),
) -> Result<bool, A::Error> {
    let other = map.next_value_seed(ForEach {
        seed: ObjSeed::<T, _>::new(ctx),
        each,
    })?;
    Ok(other.is_none())
}

/// A top-level object: the native format (`advisories`), an OSV query answer (`vulns`, or `{}`
/// when nothing matches), or a single GitHub or OSV advisory. Every reading is made as the
/// members come, and the members present decide at the end which one counts.
#[derive(Default)]
struct TopLevel {
    object: AdvisoryObject,
    native: Option<Result<Vec<Advisory>, AdvisoryError>>,
    vulns: Option<Result<Vec<Advisory>, AdvisoryError>>,
}

members!(TopLevel, |this, ctx, key, map| match key {
    "advisories" => {
        this.object.note_key(key);
        this.native = Some(read_native(ctx, map)?);
    }
    "vulns" => {
        this.object.note_key(key);
        let mut list = ItemList::default();
        let was_list = each_object(ctx, map, |item| list.push(ctx, item))?;
        this.vulns = Some(if was_list {
            list.result()
        } else {
            Err(String::from(
                "OSV `vulns` is not a list: give the OSV query answer unchanged",
            ))
        });
    }
    _ => return this.object.member(ctx, key, map),
});

impl TopLevel {
    fn finish(self, ctx: C) -> Result<Vec<Advisory>, AdvisoryError> {
        if let Some(native) = self.native {
            return native;
        }
        // OSV's query API answers `{}` when nothing matches.
        if self.object.members == 0 {
            return Ok(Vec::new());
        }
        if let Some(vulns) = self.vulns {
            return vulns;
        }
        self.object.finish(ctx).map(|a| a.into_iter().collect())
    }
}

/// A list of advisories (native entries, or GitHub or OSV advisories), converted item by item.
/// The first item that cannot be converted decides the error; the rest is still read (keeping
/// nothing), so that a syntax error further on is reported as what it is.
#[derive(Default)]
struct ItemList {
    advisories: Vec<Advisory>,
    error: Option<AdvisoryError>,
    index: usize,
}

impl ItemList {
    /// Converts the next item with `convert`, given its position (from 1), unless an earlier
    /// item failed.
    fn add(&mut self, convert: impl FnOnce(usize) -> Result<Option<Advisory>, AdvisoryError>) {
        self.index += 1;
        if self.error.is_some() {
            return;
        }
        match convert(self.index) {
            Ok(advisory) => self.advisories.extend(advisory),
            Err(e) => self.error = Some(e),
        }
    }

    /// Adds a GitHub or OSV advisory of a list.
    fn push(&mut self, ctx: C, item: Result<AdvisoryObject, Shallow>) {
        self.add(|index| match item {
            Ok(object) => object
                .finish(ctx)
                .map_err(|e| format!("list item {index}: {e}")),
            Err(kind) => Err(unrecognised(&format!(
                "list item {index} ({})",
                json_kind(&kind)
            ))),
        })
    }

    fn result(self) -> Result<Vec<Advisory>, AdvisoryError> {
        self.error.map_or(Ok(self.advisories), Err)
    }
}

/// One GitHub advisory or OSV document, read as the union of both formats' members (they do
/// not collide but for `severity`, a string in one and a list in the other). Lists are
/// converted as they are read: `vulnerabilities` and `affected` entries become ranges of the
/// product right away, and entries about other packages are dropped.
#[derive(Default)]
struct AdvisoryObject {
    /// The first six keys, in document order, to describe an object we do not recognise.
    keys: Vec<String>,
    members: usize,
    has_ghsa_id: bool,
    ghsa_id: Text,
    id: Text,
    /// `affected`, `modified` or `schema_version` present: the OSV markers.
    osv_marker: bool,
    withdrawn: NonNull,
    withdrawn_at: NonNull,
    state: Text,
    summary: Text,
    details: Text,
    html_url: Text,
    cve_id: Text,
    /// `severity` when it is a word (GitHub).
    severity: Text,
    /// `severity` when it is a list of scores (OSV): the band of the first CVSS v3 vector.
    severity_cvss: Option<Severity>,
    cvss: Obj<Cvss>,
    database_specific: Obj<DatabaseSpecific>,
    aliases: Vec<String>,
    identifiers: Vec<String>,
    references: References,
    github_ranges: Vec<AffectedRange>,
    osv_ranges: Vec<AffectedRange>,
    osv_affected_severity: Option<Severity>,
}

members!(AdvisoryObject, |this, ctx, key, map| {
    this.note_key(key);
    match key {
        "ghsa_id" => {
            this.has_ghsa_id = true;
            this.ghsa_id = map.next_value()?;
        }
        "id" => this.id = map.next_value()?,
        "modified" | "schema_version" => {
            this.osv_marker = true;
            return Ok(false);
        }
        "withdrawn" => this.withdrawn = map.next_value()?,
        "withdrawn_at" => this.withdrawn_at = map.next_value()?,
        "state" => this.state = map.next_value()?,
        "summary" => this.summary = map.next_value()?,
        "details" => this.details = map.next_value()?,
        "html_url" => this.html_url = map.next_value()?,
        "cve_id" => this.cve_id = map.next_value()?,
        "severity" => {
            // GitHub writes a word, OSV a list of scores (the first CVSS v3 vector that gives
            // a band counts).
            let mut cvss = None;
            let other = each_or_other(map, |s: Obj<Score>| {
                if cvss.is_none() {
                    cvss = s.0.and_then(|s| s.score.get().and_then(cvss3_severity));
                }
            })?;
            this.severity = other.map(Text::from).unwrap_or_default();
            this.severity_cvss = cvss;
        }
        "cvss" => this.cvss = map.next_value()?,
        "database_specific" => this.database_specific = map.next_value()?,
        "aliases" => this.aliases = read_strings(map, |t: Text| t)?,
        "identifiers" => {
            this.identifiers = read_strings(map, |i: Obj<Identifier>| {
                i.0.map(|i| i.value).unwrap_or_default()
            })?
        }
        "references" => {
            each(map, |r: Obj<Reference>| this.references.add(r.0))?;
        }
        "vulnerabilities" => {
            each_object(ctx, map, |v: Result<GithubVulnerability, Shallow>| {
                if let Ok(v) = v {
                    this.github_ranges.extend(v.ranges(ctx));
                }
            })?;
        }
        "affected" => {
            this.osv_marker = true;
            each_object(ctx, map, |a: Result<OsvAffected, Shallow>| {
                if let Ok(a) = a
                    && let Some((found, severity)) = a.finish(ctx.family)
                {
                    this.osv_ranges.extend(found);
                    this.osv_affected_severity = this.osv_affected_severity.max(severity);
                }
            })?;
        }
        _ => return Ok(false),
    }
});

impl AdvisoryObject {
    fn note_key(&mut self, key: &str) {
        self.members += 1;
        if self.keys.len() < 6 {
            self.keys.push(key.to_string());
        }
    }

    fn describe(&self) -> String {
        if self.members == 0 {
            "an empty JSON object".into()
        } else {
            format!("a JSON object with keys {}", self.keys.join(", "))
        }
    }

    fn finish(self, ctx: C) -> Result<Option<Advisory>, AdvisoryError> {
        let advisory = if self.has_ghsa_id {
            self.github()
        } else if self.id.is_string() && self.osv_marker {
            self.osv()
        } else {
            return Err(unrecognised(&self.describe()));
        };
        Ok(advisory.and_then(|a| ctx.keep_advisory(a)))
    }

    fn github(self) -> Option<Advisory> {
        let id = self.ghsa_id.get()?;
        if self.withdrawn_at.0 {
            return None;
        }
        // Repository advisories can be drafts or closed reports when read with a maintainer token.
        if self
            .state
            .get()
            .is_some_and(|s| !s.eq_ignore_ascii_case("published"))
        {
            return None;
        }
        if self.github_ranges.is_empty() {
            return None;
        }
        let cve = self.cve_id.get();
        let aliases = aliases_of(
            id,
            cve.into_iter()
                .chain(self.identifiers.iter().map(String::as_str)),
        );
        let severity = severity(&self.severity).or_else(|| {
            self.cvss
                .0
                .as_ref()
                .and_then(|c| c.vector_string.get())
                .and_then(cvss3_severity)
        });
        Some(Advisory {
            id: id.to_string(),
            aliases,
            summary: self.summary.get().unwrap_or(id).to_string(),
            severity,
            url: self.html_url.get().map(str::to_string),
            ranges: self.github_ranges,
        })
    }

    fn osv(self) -> Option<Advisory> {
        let id = self.id.get()?;
        if self.withdrawn.0 {
            return None;
        }
        let ranges: Vec<AffectedRange> = self
            .osv_ranges
            .into_iter()
            .filter(AffectedRange::is_usable)
            .collect();
        if ranges.is_empty() {
            return None;
        }
        let database = self.database_specific.0.as_ref();
        let severity = database
            .and_then(|d| severity(&d.severity))
            .or(self.osv_affected_severity)
            .or(self.severity_cvss);
        let aliases = aliases_of(id, self.aliases.iter().map(String::as_str));
        let url = self
            .references
            .advisory
            .as_deref()
            .or_else(|| database.and_then(|d| d.url.get()))
            .or(self.references.first.as_deref());
        let summary = self
            .summary
            .get()
            .or_else(|| self.details.get().and_then(|d| d.lines().next()))
            .unwrap_or(id);
        Some(Advisory {
            id: id.to_string(),
            aliases,
            summary: summary.to_string(),
            severity,
            url: url.map(str::to_string),
            ranges,
        })
    }
}

/// A list of strings (`aliases`, the `value`s of `identifiers`) as `text` finds them in its
/// elements: blank entries and other JSON types skipped, at most `MAX_ALIASES` kept.
fn read_strings<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    map: &mut A,
    text: impl Fn(T) -> Text,
) -> Result<Vec<String>, A::Error> {
    let mut out = Vec::new();
    each(map, |item: T| {
        if let Some(s) = text(item).get()
            && out.len() < MAX_ALIASES
        {
            out.push(s.to_string());
        }
    })?;
    Ok(out)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Score {
    score: Text,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Cvss {
    vector_string: Text,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct DatabaseSpecific {
    severity: Text,
    url: Text,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Identifier {
    value: Text,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Reference {
    #[serde(rename = "type")]
    kind: Text,
    url: Text,
}

/// OSV `references`: the first of type ADVISORY, and the first of any type.
#[derive(Default)]
struct References {
    advisory: Option<String>,
    first: Option<String>,
}

impl References {
    fn add(&mut self, reference: Option<Reference>) {
        let Some(reference) = reference else { return };
        let Some(url) = reference.url.get() else {
            return;
        };
        self.first.get_or_insert_with(|| url.to_string());
        if self.advisory.is_none()
            && reference
                .kind
                .get()
                .is_some_and(|t| t.eq_ignore_ascii_case("ADVISORY"))
        {
            self.advisory = Some(url.to_string());
        }
    }
}

/// A severity word (`high`, `moderate`...) of a member, when it is one.
fn severity(text: &Text) -> Option<Severity> {
    text.get().and_then(Severity::parse)
}

/// A `package` object (GitHub and OSV).
#[derive(Deserialize, Default, Clone)]
#[serde(default)]
struct Package {
    name: Text,
    ecosystem: Text,
}

/// Combines advisory sources in priority order (bundled, files, feed): the first occurrence of
/// an advisory wins, also when a later source files it under an alias (an OSV `GO-` entry
/// aliasing the bundled GHSA), because the earlier sources are curated.
pub fn merge(sources: Vec<Vec<Advisory>>) -> Vec<Advisory> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut merged = Vec::new();
    for advisory in sources.into_iter().flatten() {
        let duplicate = advisory
            .identifiers()
            .any(|id| seen.contains(&id.to_ascii_uppercase()));
        // A dropped duplicate's identifiers still count, so a third copy that only shares an
        // alias with the dropped one is recognised too.
        seen.extend(advisory.identifiers().map(str::to_ascii_uppercase));
        if !duplicate {
            merged.push(advisory);
        }
    }
    merged
}

/// The advisories that affect `version`, in the order given.
pub fn matching<'a>(advisories: &'a [Advisory], version: &Version) -> Vec<&'a Advisory> {
    advisories.iter().filter(|a| a.affects(version)).collect()
}

/// The advisories shipped inside the package.
pub fn bundled(family: ProductFamily) -> Vec<Advisory> {
    let text = family.describe().advisories;
    // The bundled files are checked by the unit tests; a broken one is a build defect.
    parse_document(text, family).expect("bundled advisory file is valid")
}

/// The other identifiers of advisory `id`, trimmed, without blanks, `id` itself and
/// duplicates (in any case).
fn aliases_of<'a>(id: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut aliases: Vec<String> = Vec::new();
    for alias in candidates.into_iter().map(str::trim) {
        if !alias.is_empty()
            && !alias.eq_ignore_ascii_case(id)
            && !aliases.iter().any(|a| a.eq_ignore_ascii_case(alias))
        {
            aliases.push(alias.to_string());
        }
    }
    aliases
}

/// Parses a version bound as advisory sources spell it: `v` prefixes (Go) and short forms
/// (`4.0`) are accepted; `None` when it is not a version.
fn parse_bound(text: &str) -> Option<Version> {
    let text = text.trim();
    let bare = text.strip_prefix('v').unwrap_or(text);
    if let Some(v) = parse_version(bare) {
        return Some(v);
    }
    let parts: Vec<&str> = bare.split('.').collect();
    if (1..=2).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        let num = |i: usize| parts.get(i).map_or(Some(0), |p| p.parse::<u64>().ok());
        return Some(Version::new(num(0)?, num(1)?, num(2)?));
    }
    None
}

/// A lower bound where `0` (OSV) and an empty value mean "from the beginning".
fn parse_lower(text: &str) -> Result<Option<Version>, ()> {
    let text = text.trim();
    if text.is_empty() || text == "0" {
        return Ok(None);
    }
    parse_bound(text).map(Some).ok_or(())
}

/// The smallest version strictly above `v`, so that `> v` fits an inclusive lower bound:
/// `4.0.2` → `4.0.3-0`, `4.0.3-rc.1` → `4.0.3-rc.1.0`.
fn successor(v: &Version) -> Version {
    if v.pre.is_empty() {
        Version {
            patch: v.patch + 1,
            pre: Prerelease::new("0").expect("valid pre-release"),
            ..v.clone()
        }
    } else {
        let pre = format!("{}.0", v.pre);
        Version {
            pre: Prerelease::new(&pre).unwrap_or_else(|_| v.pre.clone()),
            ..v.clone()
        }
    }
}

mod github;
mod native;
mod osv;

use github::*;
use native::*;
use osv::*;

#[cfg(test)]
mod tests;
