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

// ---------------------------------------------------------------------------------------------
// Native format

/// The native `advisories` list, converted entry by entry. The first entry that is not an
/// object or has no `id` decides the error (the rest is still read, keeping nothing).
fn read_native<'de, A: MapAccess<'de>>(
    ctx: C,
    map: &mut A,
) -> Result<Result<Vec<Advisory>, AdvisoryError>, A::Error> {
    let mut list = ItemList::default();
    let was_list = each_object(ctx, map, |entry: Result<NativeEntry, Shallow>| {
        list.add(|index| match entry {
                Ok(entry) => entry.finish(ctx, index),
                Err(_) => Err(format!(
                    "advisory entry {index} is not an object: give each entry `id`, `introduced` and `fixed`"
                )),
            })
    })?;
    if !was_list {
        return Ok(Err(String::from(
            "`advisories` is not a list: write `\"advisories\": [ {\"id\": ..., \"introduced\": ..., \"fixed\": ...} ]`",
        )));
    }
    Ok(list.result())
}

/// One native entry.
#[derive(Default)]
struct NativeEntry {
    id: Text,
    enabled: Flag,
    /// `ranges` when it is a list: its usable ranges.
    ranges: Option<Vec<AffectedRange>>,
    /// The entry's own `introduced` / `fixed` / `last_affected`, used without `ranges`.
    own: RangeFields,
    aliases: Vec<String>,
    cve: Text,
    cve_id: Text,
    title: Text,
    summary: Text,
    severity: Text,
    url: Text,
}

members!(NativeEntry, |this, ctx, key, map| match key {
    "id" => this.id = map.next_value()?,
    "enabled" => this.enabled = map.next_value()?,
    "introduced" => this.own.introduced = map.next_value()?,
    "fixed" => this.own.fixed = map.next_value()?,
    "last_affected" => this.own.last_affected = map.next_value()?,
    "aliases" => this.aliases = read_strings(map, |t: Text| t)?,
    "cve" => this.cve = map.next_value()?,
    "cve_id" => this.cve_id = map.next_value()?,
    "title" => this.title = map.next_value()?,
    "summary" => this.summary = map.next_value()?,
    "severity" => this.severity = map.next_value()?,
    "url" => this.url = map.next_value()?,
    "ranges" => {
        let mut ranges = Vec::new();
        let was_list = each(map, |fields: Obj<RangeFields>| {
            if let Some(range) = fields.0.as_ref().and_then(native_range)
                && range.is_usable()
                && ctx.keep(RANGE_COST)
            {
                ranges.push(range);
            }
        })?;
        this.ranges = was_list.then_some(ranges);
    }
    _ => return Ok(false),
});

impl NativeEntry {
    fn finish(self, ctx: C, index: usize) -> Result<Option<Advisory>, AdvisoryError> {
        let Some(id) = self.id.get() else {
            return Err(format!(
                "advisory entry {index} has no `id`: give every entry a string `id`"
            ));
        };
        if self.enabled.0 == Some(false) {
            return Ok(None);
        }
        let ranges = match self.ranges {
            Some(list) => list,
            None => native_range(&self.own)
                .into_iter()
                .filter(AffectedRange::is_usable)
                .collect(),
        };
        if ranges.is_empty() {
            return Ok(None);
        }
        let cves = [&self.cve, &self.cve_id].into_iter().filter_map(Text::get);
        let aliases = aliases_of(id, self.aliases.iter().map(String::as_str).chain(cves));
        let advisory = Advisory {
            id: id.to_string(),
            aliases,
            summary: self
                .title
                .get()
                .or_else(|| self.summary.get())
                .unwrap_or(id)
                .to_string(),
            severity: severity(&self.severity),
            url: self.url.get().map(str::to_string),
            ranges,
        };
        Ok(ctx.keep_advisory(advisory))
    }
}

/// The members of a native `{introduced, fixed, last_affected}` object.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct RangeFields {
    introduced: Shallow,
    fixed: Shallow,
    last_affected: Shallow,
}

/// A native range; `None` when a member is not a version string. An object that names none
/// of the three members is open on both sides, which [`AffectedRange::is_usable`] refuses
/// (rather than reading it as "every version").
fn native_range(fields: &RangeFields) -> Option<AffectedRange> {
    // A member as text: empty when absent or `null`, `None` (spoiling the range) for another
    // JSON type.
    let text = |member: &Shallow| match member {
        Shallow::Null => Some(String::new()),
        Shallow::Text(text) => Text::new(text).0,
        _ => None,
    };
    let upper = |member: &Shallow| match text(member)?.trim() {
        "" => Some(None),
        text => parse_bound(text).map(Some),
    };
    Some(AffectedRange::new(
        parse_lower(&text(&fields.introduced)?).ok()?,
        upper(&fields.fixed)?,
        upper(&fields.last_affected)?,
    ))
}
// ---------------------------------------------------------------------------------------------
// GitHub advisory API (global `/advisories/{id}` and repository `/security-advisories`)

fn package_matches(name: &str, family: ProductFamily) -> bool {
    let wanted = family.package_name();
    let name = name.trim();
    if name.eq_ignore_ascii_case(wanted) {
        return true;
    }
    // Go modules at major version 2+ carry a `/vN` suffix.
    name.get(..wanted.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(wanted))
        && name[wanted.len()..]
            .strip_prefix("/v")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a GitHub `package` object names the product. Besides the module path, OpenCloud's
/// own repository advisories name the package just `opencloud` (ecosystem `go` or
/// `opencloud`); that bare name is accepted unless a foreign ecosystem (npm, pip...) claims it.
/// No `package` object (or one without a name) concerns the product: repository advisories
/// are filed in the product's own repository.
fn github_package_matches(package: Option<&Package>, family: ProductFamily) -> bool {
    let Some(package) = package else { return true };
    let Some(name) = package.name.get() else {
        return true;
    };
    if package_matches(name, family) {
        return true;
    }
    let bare = family.package_name().rsplit('/').next().unwrap_or_default();
    let ecosystem = package.ecosystem.get().unwrap_or("");
    name.eq_ignore_ascii_case(bare)
        && ["", "go", "other", bare, family.id()]
            .iter()
            .any(|e| ecosystem.eq_ignore_ascii_case(e))
}

/// One entry of a GitHub advisory's `vulnerabilities`.
#[derive(Default)]
struct GithubVulnerability {
    package: Obj<Package>,
    vulnerable_version_range: Text,
    patched_versions: Text,
    first_patched_version: Text,
}

members!(GithubVulnerability, |this, ctx, key, map| match key {
    "package" => this.package = map.next_value()?,
    "vulnerable_version_range" => this.vulnerable_version_range = map.next_value()?,
    "patched_versions" => this.patched_versions = map.next_value()?,
    "first_patched_version" => {
        // A version string, or an object with `identifier`.
        this.first_patched_version = match map.next_value_seed(ObjSeed::new(ctx))? {
            Ok(PatchedObject { identifier }) => identifier,
            Err(value) => Text::from(value),
        }
    }
    _ => return Ok(false),
});

impl GithubVulnerability {
    /// The usable ranges of this entry when it concerns the product.
    fn ranges(&self, ctx: C) -> Vec<AffectedRange> {
        if !github_package_matches(self.package.0.as_ref(), ctx.family) {
            return Vec::new();
        }
        let patched = self
            .patched_versions
            .get()
            .or_else(|| self.first_patched_version.get());
        let found = match (self.vulnerable_version_range.get(), patched) {
            (Some(expr), _) => parse_range_expression(expr),
            // Only the fixes are known: each one ends the range of its own line.
            (None, Some(patched)) => {
                let list: Option<Vec<String>> = patched
                    .split(',')
                    .map(|p| parse_bound(p).map(|v| format!("< {v}")))
                    .collect();
                list.and_then(|l| parse_range_expression(&l.join(", ")))
            }
            (None, None) => None,
        };
        found
            .into_iter()
            .flatten()
            .filter(AffectedRange::is_usable)
            .take_while(|_| ctx.keep(RANGE_COST))
            .collect()
    }
}

/// `first_patched_version` when it is an object: `{"identifier": "4.0.3"}`.
#[derive(Default)]
struct PatchedObject {
    identifier: Text,
}

members!(PatchedObject, |this, _, key, map| match key {
    "identifier" => this.identifier = map.next_value()?,
    _ => return Ok(false),
});

/// Parses GitHub's `vulnerable_version_range` (`>= 4.0.0, < 4.0.3`, `<= 1.2.0`, `= 2.0.0`).
/// `None` when any part is not understood (prose such as `stable releases 4.0.x`): a guessed
/// range is worse than none.
///
/// Comma means "and", except for a list of upper bounds only (`< 4.0.8, < 7.2.0`): OpenCloud's
/// repository advisories write one fix per release line that way, and reading it as "and"
/// would clear every version of the later lines. Each bound then closes its own line's range,
/// which starts at the line after the previous fix.
fn parse_range_expression(expr: &str) -> Option<Vec<AffectedRange>> {
    let mut lower: Option<Version> = None;
    // (bound, inclusive); `false < true`, so the smallest tuple is the tightest bound.
    let mut uppers: Vec<(Version, bool)> = Vec::new();
    let mut has_exact = false;
    let raise = |v: Version, lower: &mut Option<Version>| {
        if lower.as_ref().is_none_or(|l| v > *l) {
            *lower = Some(v);
        }
    };
    for part in expr.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (op, rest) = ["<=", ">=", "==", "<", ">", "="]
            .iter()
            .find_map(|op| part.strip_prefix(op).map(|rest| (*op, rest)))
            .unwrap_or(("=", part));
        let v = parse_bound(rest)?;
        match op {
            ">=" => raise(v, &mut lower),
            ">" => raise(successor(&v), &mut lower),
            "<" => uppers.push((v, false)),
            "<=" => uppers.push((v, true)),
            _ => {
                has_exact = true;
                raise(v.clone(), &mut lower);
                uppers.push((v, true));
            }
        }
    }
    uppers.sort();
    let close = |introduced: Option<Version>, (bound, inclusive): (Version, bool)| {
        if inclusive {
            AffectedRange::new(introduced, None, Some(bound))
        } else {
            AffectedRange::new(introduced, Some(bound), None)
        }
    };
    if lower.is_some() || has_exact || uppers.len() <= 1 {
        // A real intersection: the tightest upper bound wins.
        let range = match uppers.into_iter().next() {
            Some(upper) => close(lower, upper),
            None => AffectedRange::new(lower, None, None),
        };
        return Some(vec![range]);
    }
    let mut ranges = Vec::new();
    let mut start: Option<Version> = None;
    for (bound, inclusive) in uppers {
        let next_line = Version::new(bound.major, bound.minor + 1, 0);
        ranges.push(close(start.take(), (bound, inclusive)));
        start = Some(next_line);
    }
    Some(ranges)
}

// ---------------------------------------------------------------------------------------------
// OSV

/// One entry of an OSV document's `affected`.
#[derive(Default)]
struct OsvAffected {
    package: Obj<Package>,
    /// `ranges` when it is a list.
    ranges: Option<Vec<AffectedRange>>,
    ecosystem_specific: Option<EcosystemSpecific>,
    database_specific: Obj<SeverityOnly>,
    /// `versions`: explicit affected versions, each its own range.
    versions: Vec<AffectedRange>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SeverityOnly {
    severity: Text,
}

members!(OsvAffected, |this, ctx, key, map| match key {
    "package" => this.package = map.next_value()?,
    "ranges" => this.ranges = read_osv_ranges(ctx, map)?.map(|(_, ranges)| ranges),
    "ecosystem_specific" => {
        this.ecosystem_specific = map
            .next_value_seed(ObjSeed::<EcosystemSpecific, _>::new(ctx))?
            .ok()
    }
    "database_specific" => this.database_specific = map.next_value()?,
    "versions" => {
        each(map, |t: Text| {
            if let Some(v) = t.get().and_then(parse_bound)
                && ctx.keep(RANGE_COST)
            {
                this.versions
                    .push(AffectedRange::new(Some(v.clone()), None, Some(v)));
            }
        })?;
    }
    _ => return Ok(false),
});

impl OsvAffected {
    /// The ranges and severity of this entry when it concerns the product.
    fn finish(self, family: ProductFamily) -> Option<(Vec<AffectedRange>, Option<Severity>)> {
        let name = self.package.0.as_ref().and_then(|p| p.name.get());
        if !name.is_some_and(|n| package_matches(n, family)) {
            return None;
        }
        let eco_severity = self
            .ecosystem_specific
            .as_ref()
            .and_then(|e| severity(&e.severity));
        let db_severity = self
            .database_specific
            .0
            .as_ref()
            .and_then(|d| severity(&d.severity));
        // The Go database files products with non-module versions as `introduced: 0` without
        // a fix (every version!) and keeps the real ranges in `custom_ranges`.
        let custom = self
            .ecosystem_specific
            .and_then(|e| e.custom_ranges)
            .filter(|(elements, _)| *elements > 0)
            .map(|(_, ranges)| ranges);
        // Without any range list, only explicit versions are listed.
        let ranges = custom.or(self.ranges).unwrap_or(self.versions);
        Some((ranges, eco_severity.max(db_severity)))
    }
}

/// An OSV `affected[].ecosystem_specific` object.
#[derive(Default)]
struct EcosystemSpecific {
    severity: Text,
    /// `custom_ranges` when it is a list: (its number of elements, its ranges).
    custom_ranges: Option<(usize, Vec<AffectedRange>)>,
}

members!(EcosystemSpecific, |this, ctx, key, map| match key {
    "severity" => this.severity = map.next_value()?,
    "custom_ranges" => this.custom_ranges = read_osv_ranges(ctx, map)?,
    _ => return Ok(false),
});

/// A list of OSV range objects, when the value is a list: its number of elements and the
/// ranges they describe (GIT ranges and unreadable event lists give none).
fn read_osv_ranges<'de, A: MapAccess<'de>>(
    ctx: C,
    map: &mut A,
) -> Result<Option<(usize, Vec<AffectedRange>)>, A::Error> {
    let mut elements = 0;
    let mut ranges = Vec::new();
    let was_list = each_object(ctx, map, |range: Result<OsvRange, Shallow>| {
        elements += 1;
        if let Ok(range) = range {
            for found in range.finish() {
                if ctx.keep(RANGE_COST) {
                    ranges.push(found);
                }
            }
        }
    })?;
    Ok(was_list.then_some((elements, ranges)))
}

/// One OSV range object: its type and its events, read as they come.
#[derive(Default)]
struct OsvRange {
    git: bool,
    /// `events` when it is a list; `None` inside when a version in it cannot be read.
    events: Option<Option<Vec<Event>>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct EventFields {
    introduced: Text,
    fixed: Text,
    last_affected: Text,
}

members!(OsvRange, |this, ctx, key, map| match key {
    "type" => {
        let kind: Text = map.next_value()?;
        this.git = kind.get().is_some_and(|t| t.eq_ignore_ascii_case("GIT"));
    }
    "events" => {
        let mut events = Some(Vec::new());
        let was_list = each(map, |fields: Obj<EventFields>| {
            let (Some(list), Some(fields)) = (events.as_mut(), fields.0) else {
                return;
            };
            match Event::read(&fields) {
                Ok(Some(event)) => {
                    if ctx.keep(EVENT_COST) {
                        list.push(event);
                    }
                }
                Ok(None) => {}
                // One unreadable version spoils the whole list.
                Err(()) => events = None,
            }
        })?;
        this.events = was_list.then_some(events);
    }
    _ => return Ok(false),
});

impl OsvRange {
    fn finish(self) -> Vec<AffectedRange> {
        match self.events {
            Some(Some(events)) if !self.git => osv_events(events),
            _ => Vec::new(),
        }
    }
}

/// One OSV event.
enum Event {
    Introduced(Option<Version>),
    Fixed(Version),
    LastAffected(Version),
}

impl Event {
    /// `Ok(None)` for an event we do not use (`limit` only narrows git ranges), `Err` when its
    /// version cannot be read.
    fn read(fields: &EventFields) -> Result<Option<Event>, ()> {
        Ok(Some(if let Some(s) = fields.introduced.get() {
            Event::Introduced(parse_lower(s)?)
        } else if let Some(s) = fields.fixed.get() {
            Event::Fixed(parse_bound(s).ok_or(())?)
        } else if let Some(s) = fields.last_affected.get() {
            Event::LastAffected(parse_bound(s).ok_or(())?)
        } else {
            return Ok(None);
        }))
    }
}

/// Turns an OSV event list into ranges (the caller has already skipped a list with a version
/// it cannot read: dropping one event would change what the others mean).
fn osv_events(mut events: Vec<Event>) -> Vec<AffectedRange> {
    // OSV evaluates events in version order; "introduced 0" sorts first.
    let key = |e: &Event| -> (Option<Version>, u8) {
        match e {
            Event::Introduced(v) => (v.clone(), 1),
            Event::Fixed(v) => (Some(v.clone()), 0),
            Event::LastAffected(v) => (Some(v.clone()), 2),
        }
    };
    events.sort_by_key(key);
    let mut ranges = Vec::new();
    let mut open: Option<Option<Version>> = None;
    for event in events {
        match event {
            Event::Introduced(v) => {
                if open.is_none() {
                    open = Some(v);
                }
            }
            Event::Fixed(v) => {
                if let Some(introduced) = open.take() {
                    ranges.push(AffectedRange::new(introduced, Some(v), None));
                }
            }
            Event::LastAffected(v) => {
                if let Some(introduced) = open.take() {
                    ranges.push(AffectedRange::new(introduced, None, Some(v)));
                }
            }
        }
    }
    if let Some(introduced) = open {
        ranges.push(AffectedRange::new(introduced, None, None));
    }
    ranges
}

/// Severity band of a CVSS v3 base vector (v4 vectors and anything else: `None`), for OSV
/// documents that carry only a vector.
fn cvss3_severity(vector: &str) -> Option<Severity> {
    let score = cvss3_base_score(vector)?;
    match score {
        s if s >= 9.0 => Some(Severity::Critical),
        s if s >= 7.0 => Some(Severity::High),
        s if s >= 4.0 => Some(Severity::Medium),
        s if s > 0.0 => Some(Severity::Low),
        _ => None,
    }
}

fn cvss3_base_score(vector: &str) -> Option<f64> {
    let mut parts = vector.trim().split('/');
    let prefix = parts.next()?;
    if prefix != "CVSS:3.0" && prefix != "CVSS:3.1" {
        return None;
    }
    let metrics: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once(':')).collect();
    let get = |name: &str| metrics.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    // The metric's weight from the specification's table; `None` when absent or unknown.
    let weight = |name: &str, table: &[(&str, f64)]| {
        let value = get(name)?;
        table.iter().find(|(v, _)| *v == value).map(|(_, w)| *w)
    };
    let changed = match get("S")? {
        "U" => false,
        "C" => true,
        _ => return None,
    };
    let av = weight("AV", &[("N", 0.85), ("A", 0.62), ("L", 0.55), ("P", 0.2)])?;
    let ac = weight("AC", &[("L", 0.77), ("H", 0.44)])?;
    let pr = if changed {
        weight("PR", &[("N", 0.85), ("L", 0.68), ("H", 0.5)])?
    } else {
        weight("PR", &[("N", 0.85), ("L", 0.62), ("H", 0.27)])?
    };
    let ui = weight("UI", &[("N", 0.85), ("R", 0.62)])?;
    let cia = |name: &str| weight(name, &[("H", 0.56), ("L", 0.22), ("N", 0.0)]);
    let iss = 1.0 - (1.0 - cia("C")?) * (1.0 - cia("I")?) * (1.0 - cia("A")?);
    let impact = if changed {
        7.52 * (iss - 0.029) - 3.25 * (iss - 0.02_f64).powi(15)
    } else {
        6.42 * iss
    };
    if impact <= 0.0 {
        return Some(0.0);
    }
    let exploitability = 8.22 * av * ac * pr * ui;
    let raw = if changed {
        (1.08 * (impact + exploitability)).min(10.0)
    } else {
        (impact + exploitability).min(10.0)
    };
    // CVSS 3.1 "Roundup": the smallest one-decimal number >= raw, robust to float noise.
    let int = (raw * 100_000.0).round() as i64;
    Some(if int % 10_000 == 0 {
        int as f64 / 100_000.0
    } else {
        ((int / 10_000) + 1) as f64 / 10.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OSV_4447: &str = include_str!("../../tests/fixtures/advisories/OSV-GO-2026-4447.json");
    const OSV_4444: &str = include_str!("../../tests/fixtures/advisories/OSV-GO-2026-4444.json");
    const GHSA_GLOBAL: &str =
        include_str!("../../tests/fixtures/advisories/github-global-GHSA-vf5j-r2hw-2hrw.json");
    const GHSA_REPO: &str =
        include_str!("../../tests/fixtures/advisories/github-repository-advisories.json");

    fn v(s: &str) -> Version {
        parse_version(s).unwrap()
    }

    fn range(introduced: Option<&str>, fixed: Option<&str>) -> AffectedRange {
        AffectedRange {
            introduced: introduced.map(v),
            fixed: fixed.map(v),
            last_affected: None,
        }
    }

    fn find<'a>(list: &'a [Advisory], id: &str) -> &'a Advisory {
        list.iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| panic!("{id} missing"))
    }

    #[test]
    fn half_open_range_boundaries() {
        let r = range(Some("4.0.0"), Some("4.0.3"));
        assert!(r.contains(&v("4.0.0")), "introduced is included");
        assert!(r.contains(&v("4.0.2")));
        assert!(!r.contains(&v("4.0.3")), "fixed is excluded");
        assert!(!r.contains(&v("3.7.0")));
        assert!(
            r.contains(&v("4.0.3-rc.1")),
            "a pre-release of the fix is still affected"
        );
        assert!(
            !r.contains(&v("4.0.0-rc.3")),
            "pre-releases before introduced are not"
        );
        assert!(
            r.contains(&Version::parse("4.0.1+abc").unwrap()),
            "build metadata ignored"
        );

        let last = AffectedRange {
            last_affected: Some(v("1.2.0")),
            ..range(Some("1.0.0"), None)
        };
        assert!(last.contains(&v("1.2.0")), "last_affected is included");
        assert!(!last.contains(&v("1.2.1")));
        assert!(!last.contains(&v("0.9.0")));

        let open = range(None, None);
        assert!(open.contains(&v("0.0.1")) && open.contains(&v("99.0.0")));
        assert!(range(None, Some("2.0.0")).contains(&v("0.1.0")));
    }

    #[test]
    fn native_document_with_ranges_disabled_entries_and_bad_versions() {
        let doc = r#"{"updated": "2026-01-01", "advisories": [
            {"id": "OC-EOL", "severity": "critical", "introduced": null, "fixed": null, "enabled": false},
            {"id": "X-1", "title": "One", "summary": "long", "severity": "moderate",
             "url": "https://example.org/x1", "aliases": ["CVE-1"], "cve": "CVE-1",
             "introduced": "1.0.0", "fixed": "1.0.5"},
            {"id": "X-2", "summary": "Two", "introduced": "4.0.0", "fixed": "4.0.3",
             "ranges": [{"introduced": "v4.0.0", "fixed": "4.0.3"}, {"introduced": "junk", "fixed": "5.0.2"},
                        {"introduced": "5.0.0", "fixed": "5.0.2"}]},
            {"id": "X-3", "introduced": "not-a-version", "fixed": "1.0.0"},
            {"id": "X-4", "introduced": "2.0.0", "fixed": "1.0.0"},
            {"id": "X-5", "title": "no range fields"},
            {"id": "X-6", "introduced": "0", "last_affected": "2.1"},
            {"id": "X-7", "introduced": null, "fixed": null}
        ]}"#;
        let list = parse_document(doc, ProductFamily::OpenCloud).unwrap();
        let ids: Vec<&str> = list.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            ids,
            ["X-1", "X-2", "X-6"],
            "disabled, unreadable, empty and unbounded are skipped"
        );
        let x1 = find(&list, "X-1");
        assert_eq!(x1.summary, "One");
        assert_eq!(x1.severity, Some(Severity::Medium));
        assert_eq!(x1.aliases, ["CVE-1"]);
        assert_eq!(x1.url.as_deref(), Some("https://example.org/x1"));
        let x2 = find(&list, "X-2");
        assert_eq!(
            x2.ranges,
            [
                range(Some("4.0.0"), Some("4.0.3")),
                range(Some("5.0.0"), Some("5.0.2"))
            ],
            "`ranges` replaces the single pair and the unreadable range is skipped"
        );
        assert_eq!(x2.severity, None);
        assert_eq!(x2.fixed_versions(), [v("4.0.3"), v("5.0.2")]);
        let x6 = find(&list, "X-6");
        assert!(x6.affects(&v("0.1.0")) && x6.affects(&v("2.1.0")) && !x6.affects(&v("2.1.1")));
    }

    #[test]
    fn native_structure_errors_are_reported() {
        let no_list = parse_document(r#"{"advisories": {}}"#, ProductFamily::OpenCloud);
        assert!(no_list.unwrap_err().to_string().contains("not a list"));
        let no_id = parse_document(
            r#"{"advisories": [{"introduced": "1.0.0"}]}"#,
            ProductFamily::OpenCloud,
        );
        assert!(no_id.unwrap_err().to_string().contains("has no `id`"));
        assert_eq!(
            parse_document(r#"{"advisories": []}"#, ProductFamily::OpenCloud).unwrap(),
            []
        );
    }

    #[test]
    fn malformed_and_unrecognised_documents_are_errors_not_panics() {
        for text in ["", "{", "[1,", "not json", "{\"advisories\": [}"] {
            let err = parse_document(text, ProductFamily::OpenCloud).unwrap_err();
            assert!(
                err.to_string().contains("not valid JSON"),
                "{text:?}: {err}"
            );
            assert!(!err.to_string().contains('\n'));
        }
        for text in [
            r#"{"foo": 1}"#,
            "42",
            "\"x\"",
            "null",
            "[1, 2]",
            r#"[{"name": "x"}]"#,
            "[{}]",
        ] {
            let err = parse_document(text, ProductFamily::OpenCloud).unwrap_err();
            assert!(
                err.to_string()
                    .contains("is not a native, GitHub advisory or OSV document"),
                "{text:?}: {err}"
            );
        }
        assert!(
            parse_document("[]", ProductFamily::OpenCloud)
                .unwrap()
                .is_empty()
        );
        // OSV's query answer when nothing matches.
        assert!(
            parse_document("{}", ProductFamily::OpenCloud)
                .unwrap()
                .is_empty()
        );
        let no_vulns = parse_document(r#"{"vulns": []}"#, ProductFamily::OpenCloud);
        assert!(no_vulns.unwrap().is_empty());
    }

    #[test]
    fn hostile_documents_keep_little_or_are_refused() {
        let oc = ProductFamily::OpenCloud;
        let empties = format!("[{}{{}}]", "{},".repeat(100_000));
        let err = parse_document(&empties, oc).unwrap_err().to_string();
        assert!(
            err.starts_with("list item 1: an empty JSON object is not"),
            "{err}"
        );
        // A syntax error after the first bad item is still reported as one.
        let broken = format!("[{}", "{},".repeat(1000));
        assert!(
            parse_document(&broken, oc)
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        let entries = vec![r#"{"id": "X", "title": "no range"}"#; 100_000].join(",");
        let native = format!(r#"{{"advisories": [{entries}]}}"#);
        assert_eq!(parse_document(&native, oc).unwrap(), []);
        let skipped = format!(
            r#"{{"advisories": [], "x": {}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(parse_document(&skipped, oc).unwrap(), []);
        // Usable advisories past the budget: refused, not kept.
        let usable: Vec<String> = (0..40_000)
            .map(|n| format!(r#"{{"id": "X-{n}", "introduced": "1.0.0", "fixed": "1.0.1"}}"#))
            .collect();
        let many = format!(r#"{{"advisories": [{}]}}"#, usable.join(","));
        let err = parse_document(&many, oc).unwrap_err().to_string();
        assert!(err.contains("refused"), "{err}");
        let events = vec![r#"{"introduced": "1.0.0"}"#; 100_000].join(",");
        let osv = format!(
            r#"{{"id": "O-1", "affected": [{{"package": {{"name": "github.com/opencloud-eu/opencloud"}},
                "ranges": [{{"type": "SEMVER", "events": [{events}]}}]}}]}}"#
        );
        assert!(parse_document(&osv, oc).is_err());
    }

    #[test]
    fn osv_sample_uses_custom_ranges_not_the_catch_all() {
        let list = parse_document(OSV_4447, ProductFamily::OpenCloud).unwrap();
        assert_eq!(list.len(), 1);
        let a = &list[0];
        assert_eq!(a.id, "GO-2026-4447");
        assert_eq!(a.aliases, ["GHSA-vf5j-r2hw-2hrw"]);
        assert_eq!(
            a.ranges,
            [
                range(Some("4.0.0"), Some("4.0.3")),
                range(Some("5.0.0"), Some("5.0.2"))
            ]
        );
        assert_eq!(
            a.url.as_deref(),
            Some(
                "https://github.com/opencloud-eu/opencloud/security/advisories/GHSA-vf5j-r2hw-2hrw"
            )
        );
        assert_eq!(a.severity, None, "the sample carries no severity");
        assert!(
            !a.affects(&v("3.7.0")),
            "introduced 0 without a fix must not mark everything"
        );
        assert!(!a.affects(&v("8.1.0")));
        assert!(a.affects(&v("4.0.2")) && a.affects(&v("5.0.1")));
        // The parent product is a different module.
        assert!(
            parse_document(OSV_4447, ProductFamily::InfiniteScale)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn osv_reva_component_advisory_is_not_an_opencloud_advisory() {
        assert!(
            parse_document(OSV_4444, ProductFamily::OpenCloud)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn osv_lists_events_severity_and_cvss() {
        let doc = r#"{"vulns": [
            {"id": "OSV-1", "modified": "2026-01-01T00:00:00Z",
             "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:L/A:N"}],
             "affected": [{"package": {"ecosystem": "Go", "name": "github.com/opencloud-eu/opencloud"},
                "ranges": [{"type": "SEMVER", "events": [{"introduced": "v1.0.0"}, {"last_affected": "v1.2.0"},
                                                          {"introduced": "2.0.0"}]}]}]},
            {"id": "OSV-2", "modified": "2026-01-01T00:00:00Z", "database_specific": {"severity": "MODERATE"},
             "affected": [{"package": {"ecosystem": "Go", "name": "github.com/opencloud-eu/opencloud/v4"},
                "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "v3.0.0"}]},
                           {"type": "SEMVER", "events": [{"introduced": "bogus"}, {"fixed": "9.0.0"}]}]}]},
            {"id": "OSV-3", "modified": "2026-01-01T00:00:00Z",
             "affected": [{"package": {"ecosystem": "Go", "name": "github.com/opencloud-eu/opencloud"},
                "ecosystem_specific": {"severity": "critical"},
                "ranges": [{"type": "GIT", "events": [{"introduced": "abc"}]},
                           {"type": "SEMVER", "events": [{"fixed": "6.0.0"}, {"introduced": "5.0.0"}]}]}]},
            {"id": "OSV-4", "modified": "2026-01-01T00:00:00Z", "withdrawn": "2026-02-01T00:00:00Z",
             "affected": [{"package": {"ecosystem": "Go", "name": "github.com/opencloud-eu/opencloud"},
                "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}]}]}
        ]}"#;
        let list = parse_document(doc, ProductFamily::OpenCloud).unwrap();
        assert_eq!(list.len(), 3, "withdrawn advisories are dropped");
        let one = find(&list, "OSV-1");
        assert_eq!(one.severity, Some(Severity::High), "CVSS 8.2 is high");
        assert!(one.affects(&v("1.2.0")) && !one.affects(&v("1.3.0")) && one.affects(&v("9.0.0")));
        let two = find(&list, "OSV-2");
        assert_eq!(two.severity, Some(Severity::Medium));
        assert_eq!(
            two.ranges,
            [range(None, Some("3.0.0"))],
            "module /v4 suffix accepted"
        );
        let three = find(&list, "OSV-3");
        assert_eq!(three.severity, Some(Severity::Critical));
        assert_eq!(
            three.ranges,
            [range(Some("5.0.0"), Some("6.0.0"))],
            "events are sorted"
        );
        // A single OSV document in a list.
        let single = format!("[{OSV_4447}]");
        assert_eq!(
            parse_document(&single, ProductFamily::OpenCloud)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn cvss_scores_follow_the_specification() {
        let score = |v: &str| cvss3_base_score(v).unwrap();
        assert_eq!(score("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:L/A:N"), 8.2);
        assert_eq!(score("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"), 9.8);
        assert_eq!(score("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H"), 10.0);
        assert_eq!(score("CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:L/I:N/A:N"), 4.3);
        assert_eq!(score("CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N"), 6.1);
        assert_eq!(score("CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:N/I:N/A:N"), 0.0);
        assert_eq!(
            cvss3_severity("CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"),
            None
        );
        assert_eq!(cvss3_severity("CVSS:3.1/AV:N"), None);
        assert_eq!(
            cvss3_severity("CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N"),
            Some(Severity::Low)
        );
    }

    #[test]
    fn github_global_advisory_filters_packages() {
        let list = parse_document(GHSA_GLOBAL, ProductFamily::OpenCloud).unwrap();
        assert_eq!(list.len(), 1);
        let a = &list[0];
        assert_eq!(a.id, "GHSA-vf5j-r2hw-2hrw");
        assert_eq!(a.severity, Some(Severity::High));
        assert_eq!(
            a.ranges,
            [
                range(Some("4.0.0"), Some("4.0.3")),
                range(Some("5.0.0"), Some("5.0.2"))
            ],
            "the reva package entry is ignored"
        );
        assert_eq!(
            a.url.as_deref(),
            Some("https://github.com/advisories/GHSA-vf5j-r2hw-2hrw")
        );
        assert!(
            parse_document(GHSA_GLOBAL, ProductFamily::InfiniteScale)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn github_repository_advisories_accept_missing_packages() {
        let list = parse_document(GHSA_REPO, ProductFamily::OpenCloud).unwrap();
        let ids: Vec<&str> = list.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            ids,
            ["GHSA-gf4p-7p27-26w7", "GHSA-aaaa-bbbb-cccc"],
            "the prose-only record and the draft are dropped"
        );
        let gf4p = find(&list, "GHSA-gf4p-7p27-26w7");
        assert_eq!(gf4p.aliases, ["CVE-2026-57500"]);
        assert_eq!(gf4p.severity, Some(Severity::Medium));
        assert_eq!(
            gf4p.ranges,
            [
                range(None, Some("4.0.8")),
                range(Some("4.1.0"), Some("7.2.0"))
            ]
        );
        assert_eq!(gf4p.fixed_versions(), [v("4.0.8"), v("7.2.0")]);
        let other = find(&list, "GHSA-aaaa-bbbb-cccc");
        assert_eq!(
            other.ranges.len(),
            1,
            "the reva and npm packages are ignored"
        );
        let r = &other.ranges[0];
        assert_eq!(r.introduced, Some(successor(&v("2.0.0"))));
        assert_eq!(r.last_affected, Some(v("3.1.0")));
        assert!(!other.affects(&v("2.0.0")) && other.affects(&v("2.0.1-rc.1")));
        assert!(other.affects(&v("3.1.0")) && !other.affects(&v("3.1.1")));
    }

    #[test]
    fn range_expressions() {
        let p = |e: &str| -> Option<Vec<AffectedRange>> {
            parse_range_expression(e)
                .map(|l| l.into_iter().filter(AffectedRange::is_usable).collect())
        };
        let inclusive = |i: Option<&str>, l: &str| AffectedRange {
            last_affected: Some(v(l)),
            ..range(i, None)
        };
        assert_eq!(
            p(">= 4.0.0, < 4.0.3"),
            Some(vec![range(Some("4.0.0"), Some("4.0.3"))])
        );
        assert_eq!(p("< v4.0.8"), Some(vec![range(None, Some("4.0.8"))]));
        assert_eq!(p("<= 5.0.1"), Some(vec![inclusive(None, "5.0.1")]));
        assert_eq!(p("= 7.0.0"), Some(vec![inclusive(Some("7.0.0"), "7.0.0")]));
        assert_eq!(p("7.0.0"), Some(vec![inclusive(Some("7.0.0"), "7.0.0")]));
        assert_eq!(p(">= 1.0"), Some(vec![range(Some("1.0.0"), None)]));
        assert_eq!(
            p(">= 1.0.0, < 3.0.0, < 2.0.0"),
            Some(vec![range(Some("1.0.0"), Some("2.0.0"))])
        );
        // One fix per line, as OpenCloud's repository advisories write it.
        assert_eq!(
            p("< 4.0.8, < 7.2.0"),
            Some(vec![
                range(None, Some("4.0.8")),
                range(Some("4.1.0"), Some("7.2.0"))
            ])
        );
        assert_eq!(
            p("< 7.1.3, < 7.2.0"),
            Some(vec![range(None, Some("7.1.3"))])
        );
        // Prose is never guessed at.
        for prose in [
            "stable releases 4.0.x",
            "rolling releases <= 5.0.1",
            "all versions",
            "< 4.0.8 or so",
        ] {
            assert_eq!(p(prose), None, "{prose}");
        }
        assert_eq!(p(">= 4.0.0, < banana"), None);
        assert_eq!(
            p("= 1.0.0, = 2.0.0"),
            Some(vec![]),
            "contradictory bounds match nothing"
        );
        assert_eq!(successor(&v("4.0.3-rc.1")).to_string(), "4.0.3-rc.1.0");
        assert_eq!(successor(&v("4.0.2")).to_string(), "4.0.3-0");
    }

    #[test]
    fn github_package_names() {
        let pkg = |eco: &str, name: &str| Package {
            name: Text::new(name),
            ecosystem: Text::new(eco),
        };
        let oc = ProductFamily::OpenCloud;
        assert!(github_package_matches(None, oc));
        assert!(github_package_matches(Some(&pkg("go", "")), oc));
        assert!(github_package_matches(
            Some(&pkg("go", "github.com/opencloud-eu/opencloud")),
            oc
        ));
        assert!(github_package_matches(
            Some(&pkg("go", "github.com/opencloud-eu/opencloud/v5")),
            oc
        ));
        assert!(github_package_matches(Some(&pkg("go", "opencloud")), oc));
        assert!(github_package_matches(
            Some(&pkg("opencloud", "OpenCloud")),
            oc
        ));
        assert!(!github_package_matches(Some(&pkg("npm", "opencloud")), oc));
        assert!(!github_package_matches(
            Some(&pkg("go", "github.com/opencloud-eu/opencloud-web")),
            oc
        ));
        assert!(!github_package_matches(
            Some(&pkg("go", "github.com/opencloud-eu/reva/v2")),
            oc
        ));
        let ocis = ProductFamily::InfiniteScale;
        assert!(github_package_matches(
            Some(&pkg("go", "github.com/owncloud/ocis/v2")),
            ocis
        ));
        assert!(!github_package_matches(Some(&pkg("go", "opencloud")), ocis));
    }

    #[test]
    fn github_single_objects_and_fallbacks() {
        let doc = r#"{"ghsa_id": "GHSA-1111-2222-3333", "summary": "S", "severity": "unknown",
            "cvss": {"vector_string": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", "score": 9.8},
            "withdrawn_at": null,
            "vulnerabilities": [{"package": {"ecosystem": "go", "name": "github.com/opencloud-eu/opencloud"},
                                 "vulnerable_version_range": null, "first_patched_version": {"identifier": "3.0.1"}}]}"#;
        let list = parse_document(doc, ProductFamily::OpenCloud).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(
            list[0].severity,
            Some(Severity::Critical),
            "from the CVSS vector"
        );
        assert_eq!(list[0].ranges, [range(None, Some("3.0.1"))]);
        let withdrawn = doc.replace(
            "\"withdrawn_at\": null",
            "\"withdrawn_at\": \"2026-01-01T00:00:00Z\"",
        );
        assert!(
            parse_document(&withdrawn, ProductFamily::OpenCloud)
                .unwrap()
                .is_empty()
        );
        let unbounded = r#"{"ghsa_id": "GHSA-x", "vulnerabilities": [{"package": null}]}"#;
        assert!(
            parse_document(unbounded, ProductFamily::OpenCloud)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn merge_keeps_the_first_source_and_matches_aliases() {
        let bundled = bundled(ProductFamily::OpenCloud);
        let osv = parse_document(OSV_4447, ProductFamily::OpenCloud).unwrap();
        let mut file_copy = find(&bundled, "GHSA-gf4p-7p27-26w7").clone();
        file_copy.summary = "file copy".into();
        let other = Advisory {
            id: "X-9".into(),
            aliases: vec![],
            summary: "new".into(),
            severity: None,
            url: None,
            ranges: vec![range(None, Some("1.0.0"))],
        };
        // A third copy sharing an alias only with the dropped OSV entry.
        let third = Advisory {
            id: "OTHER-1".into(),
            aliases: vec!["go-2026-4447".into()],
            ..other.clone()
        };
        let merged = merge(vec![
            bundled.clone(),
            vec![file_copy, other],
            osv,
            vec![third],
        ]);
        let ids: Vec<&str> = merged.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7", "X-9"]);
        assert_eq!(
            find(&merged, "GHSA-gf4p-7p27-26w7"),
            find(&bundled, "GHSA-gf4p-7p27-26w7")
        );
        assert_eq!(
            find(&merged, "GHSA-vf5j-r2hw-2hrw").severity,
            Some(Severity::High)
        );
        // Order of sources decides: the feed first would win.
        let osv = parse_document(OSV_4447, ProductFamily::OpenCloud).unwrap();
        let flipped = merge(vec![osv, bundled]);
        assert_eq!(flipped[0].id, "GO-2026-4447");
        assert_eq!(flipped.len(), 2);
    }

    #[test]
    fn bundled_opencloud_advisories() {
        let list = bundled(ProductFamily::OpenCloud);
        assert_eq!(list.len(), 2);
        let gf4p = find(&list, "GHSA-gf4p-7p27-26w7");
        assert_eq!(gf4p.severity, Some(Severity::Medium));
        assert_eq!(gf4p.aliases, ["CVE-2026-57500"]);
        for affected in ["1.0.0", "4.0.0", "4.0.7", "4.1.0", "7.1.0", "7.2.0-rc.1"] {
            assert!(gf4p.affects(&v(affected)), "{affected}");
        }
        for clean in ["0.9.0", "4.0.8", "4.0.9", "7.2.0", "7.2.4", "8.1.0"] {
            assert!(!gf4p.affects(&v(clean)), "{clean}");
        }
        let vf5j = find(&list, "GHSA-vf5j-r2hw-2hrw");
        assert_eq!(vf5j.severity, Some(Severity::High));
        assert!(vf5j.aliases.iter().any(|a| a == "GO-2026-4447"));
        let ids = |version: &str| -> Vec<String> {
            matching(&list, &v(version))
                .iter()
                .map(|a| a.id.clone())
                .collect()
        };
        assert_eq!(ids("4.0.0"), ["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7"]);
        assert_eq!(ids("4.0.3"), ["GHSA-gf4p-7p27-26w7"]);
        assert_eq!(ids("5.0.1"), ["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7"]);
        assert!(ids("4.0.8").is_empty());
        assert!(ids("7.2.4").is_empty());
        assert!(bundled(ProductFamily::InfiniteScale).is_empty());
    }
}
