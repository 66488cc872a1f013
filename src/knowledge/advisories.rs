//! Security advisories and the readers for the three formats operators can hand us: the native
//! file we ship, GitHub advisory API answers and OSV documents.
//!
//! Readers are forgiving about single bad ranges (a feed with one odd version string must not
//! hide the other advisories) but strict about the document's shape, so that a wrong file is
//! reported instead of silently yielding "no advisories".

use super::{ProductFamily, parse_version};
use crate::severity::Severity;
use semver::{Prerelease, Version};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fmt;

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
    /// Whether `v` lies in the range. Build metadata is ignored because it never says anything
    /// about the code (semver's `Ord` would otherwise compare it).
    pub fn contains(&self, v: &Version) -> bool {
        let stripped;
        let v = if v.build.is_empty() {
            v
        } else {
            stripped = Version {
                build: semver::BuildMetadata::EMPTY,
                ..v.clone()
            };
            &stripped
        };
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

impl Serialize for AffectedRange {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = |v: &Option<Version>| v.as_ref().map(Version::to_string);
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("introduced", &text(&self.introduced))?;
        map.serialize_entry("fixed", &text(&self.fixed))?;
        if self.last_affected.is_some() {
            map.serialize_entry("last_affected", &text(&self.last_affected))?;
        }
        map.end()
    }
}

/// One advisory, already narrowed to the product family it was read for.
#[derive(Clone, Debug, PartialEq, Serialize)]
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

/// Why an advisory document could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdvisoryError(String);

impl AdvisoryError {
    fn new(message: impl Into<String>) -> AdvisoryError {
        AdvisoryError(message.into())
    }

    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AdvisoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AdvisoryError {}

/// Reads an advisory document, detecting its format, and keeps what concerns `family`.
///
/// Advisories whose ranges are all unusable are dropped rather than failing the document, so a
/// single odd entry in a feed cannot hide the others; an advisory without any usable range
/// would otherwise match nothing (or, worse, everything).
pub fn parse_document(text: &str, family: ProductFamily) -> Result<Vec<Advisory>, AdvisoryError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        AdvisoryError::new(format!(
            "advisory document is not valid JSON ({e}): fix the file or point the setting at a JSON advisory document"
        ))
    })?;
    match &value {
        Value::Object(map) if map.contains_key("advisories") => parse_native(map),
        // OSV's query API answers `{}` when nothing matches.
        Value::Object(map) if map.is_empty() => Ok(Vec::new()),
        Value::Object(map) if map.contains_key("vulns") => match &map["vulns"] {
            Value::Array(items) => parse_list(items, family),
            _ => Err(AdvisoryError::new(
                "OSV `vulns` is not a list: give the OSV query answer unchanged",
            )),
        },
        Value::Object(map) => parse_one(map, family).map(|a| a.into_iter().collect()),
        Value::Array(items) => parse_list(items, family),
        other => Err(unrecognised(&describe(other))),
    }
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
    let text = match family {
        ProductFamily::OpenCloud => include_str!("../../assets/opencloud/advisories.json"),
        ProductFamily::InfiniteScale => include_str!("../../assets/ocis/advisories.json"),
    };
    // The bundled files are checked by the unit tests; a broken one is a build defect.
    parse_document(text, family).expect("bundled advisory file is valid")
}

fn unrecognised(what: &str) -> AdvisoryError {
    AdvisoryError::new(format!(
        "{what} is not a native, GitHub advisory or OSV document: expected an object with `advisories`, a GitHub advisory with `ghsa_id`, or an OSV document with `id` and `affected`"
    ))
}

fn describe(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().take(6).map(String::as_str).collect();
            if keys.is_empty() {
                "an empty JSON object".into()
            } else {
                format!("a JSON object with keys {}", keys.join(", "))
            }
        }
        Value::Array(_) => "a JSON list".into(),
        Value::String(_) => "a JSON string".into(),
        Value::Number(_) => "a JSON number".into(),
        Value::Bool(_) => "a JSON boolean".into(),
        Value::Null => "JSON null".into(),
    }
}

fn parse_list(items: &[Value], family: ProductFamily) -> Result<Vec<Advisory>, AdvisoryError> {
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(unrecognised(&format!(
                "list item {} ({})",
                index + 1,
                describe(item)
            )));
        };
        out.extend(
            parse_one(map, family)
                .map_err(|e| AdvisoryError::new(format!("list item {}: {e}", index + 1)))?,
        );
    }
    Ok(out)
}

/// One GitHub or OSV advisory object.
fn parse_one(
    map: &Map<String, Value>,
    family: ProductFamily,
) -> Result<Option<Advisory>, AdvisoryError> {
    if map.contains_key("ghsa_id") {
        Ok(parse_github(map, family))
    } else if map.get("id").is_some_and(Value::is_string)
        && (map.contains_key("affected")
            || map.contains_key("modified")
            || map.contains_key("schema_version"))
    {
        Ok(parse_osv(map, family))
    } else {
        Err(unrecognised(&describe(&Value::Object(map.clone()))))
    }
}

fn text_of<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn strings_of(map: &Map<String, Value>, key: &str) -> Vec<String> {
    map.get(key)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

fn push_alias(aliases: &mut Vec<String>, id: &str, alias: &str) {
    let alias = alias.trim();
    if !alias.is_empty()
        && !alias.eq_ignore_ascii_case(id)
        && !aliases.iter().any(|a| a.eq_ignore_ascii_case(alias))
    {
        aliases.push(alias.to_string());
    }
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

fn parse_native(map: &Map<String, Value>) -> Result<Vec<Advisory>, AdvisoryError> {
    let Some(entries) = map["advisories"].as_array() else {
        return Err(AdvisoryError::new(
            "`advisories` is not a list: write `\"advisories\": [ {\"id\": ..., \"introduced\": ..., \"fixed\": ...} ]`",
        ));
    };
    let mut out = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let Value::Object(entry) = entry else {
            return Err(AdvisoryError::new(format!(
                "advisory entry {} is not an object: give each entry `id`, `introduced` and `fixed`",
                index + 1
            )));
        };
        let Some(id) = text_of(entry, "id") else {
            return Err(AdvisoryError::new(format!(
                "advisory entry {} has no `id`: give every entry a string `id`",
                index + 1
            )));
        };
        if entry.get("enabled").and_then(Value::as_bool) == Some(false) {
            continue;
        }
        let ranges: Vec<AffectedRange> = match entry.get("ranges").and_then(Value::as_array) {
            Some(list) => list
                .iter()
                .filter_map(Value::as_object)
                .filter_map(native_range)
                .collect(),
            None => native_range(entry).into_iter().collect(),
        };
        let ranges: Vec<AffectedRange> = ranges
            .into_iter()
            .filter(AffectedRange::is_usable)
            .collect();
        if ranges.is_empty() {
            continue;
        }
        let mut aliases = Vec::new();
        for alias in strings_of(entry, "aliases") {
            push_alias(&mut aliases, id, &alias);
        }
        for key in ["cve", "cve_id"] {
            if let Some(cve) = text_of(entry, key) {
                push_alias(&mut aliases, id, cve);
            }
        }
        out.push(Advisory {
            id: id.to_string(),
            aliases,
            summary: text_of(entry, "title")
                .or_else(|| text_of(entry, "summary"))
                .unwrap_or(id)
                .to_string(),
            severity: text_of(entry, "severity").and_then(Severity::parse),
            url: text_of(entry, "url").map(str::to_string),
            ranges,
        });
    }
    Ok(out)
}

/// A native `{introduced, fixed, last_affected}` object. An object that names none of the
/// three is no range at all (rather than "every version").
fn native_range(obj: &Map<String, Value>) -> Option<AffectedRange> {
    let keys = ["introduced", "fixed", "last_affected"];
    if !keys.iter().any(|k| obj.contains_key(*k)) {
        return None;
    }
    let field = |key: &str| -> Result<Option<&str>, ()> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(()),
        }
    };
    let introduced = match field("introduced").ok()? {
        Some(s) => parse_lower(s).ok()?,
        None => None,
    };
    let upper = |key: &str| -> Result<Option<Version>, ()> {
        match field(key)? {
            Some(s) if !s.trim().is_empty() => parse_bound(s).map(Some).ok_or(()),
            _ => Ok(None),
        }
    };
    Some(AffectedRange {
        introduced,
        fixed: upper("fixed").ok()?,
        last_affected: upper("last_affected").ok()?,
    })
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
fn github_package_matches(package: Option<&Map<String, Value>>, family: ProductFamily) -> bool {
    let Some(package) = package else { return true };
    let Some(name) = text_of(package, "name") else {
        return true;
    };
    if package_matches(name, family) {
        return true;
    }
    let bare = family.package_name().rsplit('/').next().unwrap_or_default();
    let ecosystem = text_of(package, "ecosystem").unwrap_or("");
    name.eq_ignore_ascii_case(bare)
        && ["", "go", "other", bare, family.id()]
            .iter()
            .any(|e| ecosystem.eq_ignore_ascii_case(e))
}

fn parse_github(map: &Map<String, Value>, family: ProductFamily) -> Option<Advisory> {
    let id = text_of(map, "ghsa_id")?;
    if map.get("withdrawn_at").is_some_and(|w| !w.is_null()) {
        return None;
    }
    // Repository advisories can be drafts or closed reports when read with a maintainer token.
    if text_of(map, "state").is_some_and(|s| !s.eq_ignore_ascii_case("published")) {
        return None;
    }
    let mut ranges = Vec::new();
    for vuln in map
        .get("vulnerabilities")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(vuln) = vuln.as_object() else {
            continue;
        };
        // Repository advisories may leave the package out or its name empty: they are filed
        // in the product's own repository, so they concern the product.
        if !github_package_matches(vuln.get("package").and_then(Value::as_object), family) {
            continue;
        }
        let patched = text_of(vuln, "patched_versions")
            .or_else(|| text_of(vuln, "first_patched_version"))
            .or_else(|| {
                vuln.get("first_patched_version")
                    .and_then(Value::as_object)
                    .and_then(|p| text_of(p, "identifier"))
            });
        let found = match (text_of(vuln, "vulnerable_version_range"), patched) {
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
        ranges.extend(found.into_iter().flatten().filter(AffectedRange::is_usable));
    }
    if ranges.is_empty() {
        return None;
    }
    let mut aliases = Vec::new();
    if let Some(cve) = text_of(map, "cve_id") {
        push_alias(&mut aliases, id, cve);
    }
    for ident in map
        .get("identifiers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(value) = ident.as_object().and_then(|o| text_of(o, "value")) {
            push_alias(&mut aliases, id, value);
        }
    }
    let severity = text_of(map, "severity")
        .and_then(Severity::parse)
        .or_else(|| {
            map.get("cvss")
                .and_then(Value::as_object)
                .and_then(|c| text_of(c, "vector_string"))
                .and_then(cvss3_severity)
        });
    Some(Advisory {
        id: id.to_string(),
        aliases,
        summary: text_of(map, "summary").unwrap_or(id).to_string(),
        severity,
        url: text_of(map, "html_url").map(str::to_string),
        ranges,
    })
}

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
            AffectedRange {
                introduced,
                fixed: None,
                last_affected: Some(bound),
            }
        } else {
            AffectedRange {
                introduced,
                fixed: Some(bound),
                last_affected: None,
            }
        }
    };
    if lower.is_some() || has_exact || uppers.len() <= 1 {
        // A real intersection: the tightest upper bound wins.
        let range = match uppers.into_iter().next() {
            Some(upper) => close(lower, upper),
            None => AffectedRange {
                introduced: lower,
                fixed: None,
                last_affected: None,
            },
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

fn parse_osv(map: &Map<String, Value>, family: ProductFamily) -> Option<Advisory> {
    let id = text_of(map, "id")?;
    if map.get("withdrawn").is_some_and(|w| !w.is_null()) {
        return None;
    }
    let mut ranges = Vec::new();
    let mut affected_severity = None;
    for affected in map
        .get("affected")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(affected) = affected.as_object() else {
            continue;
        };
        let name = affected
            .get("package")
            .and_then(Value::as_object)
            .and_then(|p| text_of(p, "name"));
        if !name.is_some_and(|n| package_matches(n, family)) {
            continue;
        }
        let eco = affected
            .get("ecosystem_specific")
            .and_then(Value::as_object);
        // The Go database files products with non-module versions as `introduced: 0` without
        // a fix (every version!) and keeps the real ranges in `custom_ranges`.
        let range_list = eco
            .and_then(|e| e.get("custom_ranges"))
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty())
            .or_else(|| affected.get("ranges").and_then(Value::as_array));
        for range in range_list
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
        {
            if text_of(range, "type").is_some_and(|t| t.eq_ignore_ascii_case("GIT")) {
                continue;
            }
            if let Some(events) = range.get("events").and_then(Value::as_array) {
                ranges.extend(osv_events(events).into_iter().flatten());
            }
        }
        if range_list.is_none() {
            // Only explicit versions listed.
            for v in strings_of(affected, "versions")
                .iter()
                .filter_map(|v| parse_bound(v))
            {
                ranges.push(AffectedRange {
                    introduced: Some(v.clone()),
                    fixed: None,
                    last_affected: Some(v),
                });
            }
        }
        let severity_in = |key: &str| {
            affected
                .get(key)
                .and_then(Value::as_object)
                .and_then(|o| text_of(o, "severity"))
                .and_then(Severity::parse)
        };
        affected_severity = affected_severity
            .max(severity_in("ecosystem_specific"))
            .max(severity_in("database_specific"));
    }
    let ranges: Vec<AffectedRange> = ranges
        .into_iter()
        .filter(AffectedRange::is_usable)
        .collect();
    if ranges.is_empty() {
        return None;
    }
    let severity = map
        .get("database_specific")
        .and_then(Value::as_object)
        .and_then(|d| text_of(d, "severity"))
        .and_then(Severity::parse)
        .or(affected_severity)
        .or_else(|| {
            map.get("severity")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .filter_map(|s| text_of(s, "score"))
                .find_map(cvss3_severity)
        });
    let mut aliases = Vec::new();
    for alias in strings_of(map, "aliases") {
        push_alias(&mut aliases, id, &alias);
    }
    let references: Vec<(&str, &str)> = map
        .get("references")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(|r| Some((text_of(r, "type").unwrap_or(""), text_of(r, "url")?)))
        .collect();
    let url = references
        .iter()
        .find(|(t, _)| t.eq_ignore_ascii_case("ADVISORY"))
        .map(|(_, u)| *u)
        .or_else(|| {
            map.get("database_specific")
                .and_then(Value::as_object)
                .and_then(|d| text_of(d, "url"))
        })
        .or_else(|| references.first().map(|(_, u)| *u));
    let summary = text_of(map, "summary")
        .or_else(|| text_of(map, "details").and_then(|d| d.lines().next()))
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

/// Turns an OSV event list into ranges. `None` when a version in it cannot be read: the
/// whole range is skipped, since dropping one event would change what the others mean.
fn osv_events(events: &[Value]) -> Option<Vec<AffectedRange>> {
    enum Event {
        Introduced(Option<Version>),
        Fixed(Version),
        LastAffected(Version),
    }
    let mut parsed = Vec::new();
    for event in events.iter().filter_map(Value::as_object) {
        if let Some(s) = text_of(event, "introduced") {
            parsed.push(Event::Introduced(parse_lower(s).ok()?));
        } else if let Some(s) = text_of(event, "fixed") {
            parsed.push(Event::Fixed(parse_bound(s)?));
        } else if let Some(s) = text_of(event, "last_affected") {
            parsed.push(Event::LastAffected(parse_bound(s)?));
        }
        // `limit` only narrows git ranges; ignored.
    }
    // OSV evaluates events in version order; "introduced 0" sorts first.
    let key = |e: &Event| -> (Option<Version>, u8) {
        match e {
            Event::Introduced(v) => (v.clone(), 1),
            Event::Fixed(v) => (Some(v.clone()), 0),
            Event::LastAffected(v) => (Some(v.clone()), 2),
        }
    };
    parsed.sort_by_key(key);
    let mut ranges = Vec::new();
    let mut open: Option<Option<Version>> = None;
    for event in parsed {
        match event {
            Event::Introduced(v) => {
                if open.is_none() {
                    open = Some(v);
                }
            }
            Event::Fixed(v) => {
                if let Some(introduced) = open.take() {
                    ranges.push(AffectedRange {
                        introduced,
                        fixed: Some(v),
                        last_affected: None,
                    });
                }
            }
            Event::LastAffected(v) => {
                if let Some(introduced) = open.take() {
                    ranges.push(AffectedRange {
                        introduced,
                        fixed: None,
                        last_affected: Some(v),
                    });
                }
            }
        }
    }
    if let Some(introduced) = open {
        ranges.push(AffectedRange {
            introduced,
            fixed: None,
            last_affected: None,
        });
    }
    Some(ranges)
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
    let changed = match get("S")? {
        "U" => false,
        "C" => true,
        _ => return None,
    };
    let av = match get("AV")? {
        "N" => 0.85,
        "A" => 0.62,
        "L" => 0.55,
        "P" => 0.2,
        _ => return None,
    };
    let ac = match get("AC")? {
        "L" => 0.77,
        "H" => 0.44,
        _ => return None,
    };
    let pr = match (get("PR")?, changed) {
        ("N", _) => 0.85,
        ("L", false) => 0.62,
        ("L", true) => 0.68,
        ("H", false) => 0.27,
        ("H", true) => 0.5,
        _ => return None,
    };
    let ui = match get("UI")? {
        "N" => 0.85,
        "R" => 0.62,
        _ => return None,
    };
    let cia = |name: &str| match get(name)? {
        "H" => Some(0.56),
        "L" => Some(0.22),
        "N" => Some(0.0),
        _ => None,
    };
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
        let pkg = |eco: &str, name: &str| {
            serde_json::json!({"ecosystem": eco, "name": name})
                .as_object()
                .unwrap()
                .clone()
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

    #[test]
    fn advisories_serialize_ranges_as_strings() {
        let list = bundled(ProductFamily::OpenCloud);
        let json = serde_json::to_value(find(&list, "GHSA-vf5j-r2hw-2hrw")).unwrap();
        assert_eq!(json["ranges"][0]["introduced"], "4.0.0");
        assert_eq!(json["ranges"][0]["fixed"], "4.0.3");
        assert!(json["ranges"][0].get("last_affected").is_none());
        assert_eq!(json["severity"], "high");
        let open = serde_json::to_value(range(None, None)).unwrap();
        assert_eq!(open, serde_json::json!({"introduced": null, "fixed": null}));
    }
}
