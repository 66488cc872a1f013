//! The policy file (`--policy`): requirements a CI pipeline gates on.
//!
//! Keys (all optional): `minimum_rating` (integer 0 (F) to 5 (A+)), `required_hardenings`
//! (hardening measures that must be in place) and `forbidden` (finding ids or waiver-style
//! patterns that must not be present as failures; a vulnerability may be named by its advisory
//! id or an alias, with or without the `vulnerability:` prefix). YAML, or JSON for `.json`.
//!
//! Waivers never excuse a requirement: a waived (`ignored`) finding still counts here.

use crate::assess::waivers;
use crate::capped::{self, Listed, Reader, Shallow};
use crate::checks;
use crate::files::{self, Kind};
use crate::report::{Cause, Finding, Role, ScanResult, State, Status, grade};
use serde::de::{self, Deserialize, Deserializer, MapAccess};
use std::path::Path;

/// The keys a policy file may hold.
const KEYS: [&str; 3] = ["minimum_rating", "required_hardenings", "forbidden"];

/// Most entries a list of the policy may have: there are far fewer checks and advisories, and
/// the cap keeps what a file takes near its size.
pub const MAX_LIST_ENTRIES: usize = 4096;

/// A parsed, validated policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    pub minimum_rating: Option<u8>,
    pub required_hardenings: Vec<String>,
    pub forbidden: Vec<String>,
}

/// The `policy` member of a result document.
pub use crate::report::PolicyVerdict;

impl Policy {
    /// Reads and validates a policy file (YAML, or JSON for `.json`); errors are one line.
    pub fn load(path: &Path) -> Result<Policy, String> {
        let shown = path.display();
        let text = files::read_text(path, Kind::Policy)
            .map_err(|refusal| refusal.line(&shown.to_string()))?;
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        Policy::parse(&text, is_json).map_err(|e| format!("policy file {shown}: {e}"))
    }

    /// Parses and validates policy text; errors are one line without the file name.
    pub fn parse(text: &str, is_json: bool) -> Result<Policy, String> {
        let document: Document = if is_json {
            serde_json::from_str(text).map_err(|e| {
                format!(
                    "not valid JSON ({}); fix the syntax",
                    first_line(&e.to_string())
                )
            })?
        } else if text.trim().is_empty() {
            Document::default()
        } else {
            serde_saphyr::from_str_with_options(text, files::yaml_options())
                .map_err(|e| files::yaml_problem(&e))?
        };
        if let Some(other) = document.not_a_mapping {
            return Err(format!(
                "the top level is {other}, not a mapping; write keys such as minimum_rating: 4"
            ));
        }
        if let Some(key) = &document.unknown_key {
            return Err(unknown_key(key));
        }
        let mut policy = Policy::default();
        if let Some(value) = &document.minimum_rating {
            policy.minimum_rating = minimum_rating(value)?;
        }
        if let Some(value) = &document.required_hardenings {
            policy.required_hardenings = required(value)?;
        }
        if let Some(value) = &document.forbidden {
            policy.forbidden = names_list("forbidden", value)?;
        }
        Ok(policy)
    }

    /// Whether the policy asks for hardening measures (they are then evaluated even without
    /// `--check-hardening`, without its OK-to-WARNING rule): required measures, or forbidden
    /// patterns that cover a hardening measure (a missing measure is then forbidden).
    pub fn needs_hardening(&self) -> bool {
        !self.required_hardenings.is_empty()
            || self.forbidden.iter().any(|pattern| {
                hardening_measures().any(|measure| waivers::matches(pattern, measure))
            })
    }

    /// Applies the policy to a host's result: the verdict goes in the `policy` member, and an
    /// unmet requirement makes the state CRITICAL (a policy only ever worsens a verdict). A
    /// failed scan stays UNKNOWN: nothing could be judged.
    pub fn judge(&self, result: &mut ScanResult) {
        let verdict = self.evaluate(result);
        if !verdict.met && result.error.is_none() {
            let mut causes = vec![Cause::new(
                format!("policy requirement(s) unmet: {}", verdict.unmet.join("; ")),
                format!("{} policy requirement(s) unmet", verdict.unmet.len()),
            )];
            causes.extend(result.take_causes());
            result.set_causes(causes);
            result.state = State::Critical;
        }
        result.policy = Some(verdict);
    }

    /// Judges one host's result. Waivers never excuse a requirement.
    fn evaluate(&self, result: &ScanResult) -> PolicyVerdict {
        let mut unmet = Vec::new();
        if let Some(minimum) = self.minimum_rating {
            let wanted = format!("the minimum {minimum} ({})", grade(Some(minimum)));
            match result.rating {
                Some(rating) if rating >= minimum => {}
                Some(rating) => unmet.push(format!(
                    "rating {rating} ({}) is below {wanted}",
                    grade(Some(rating))
                )),
                None if result.error.is_some() => {
                    unmet.push(format!("no rating (the scan failed) to meet {wanted}"))
                }
                None => unmet.push(format!("no rating (U) to meet {wanted}")),
            }
        }
        let required = self.required_hardenings.iter();
        unmet.extend(required.filter_map(|measure| requirement(measure, result)));
        let forbidden = self.forbidden.iter();
        unmet.extend(forbidden.filter_map(|pattern| forbidden_present(pattern, result)));
        PolicyVerdict {
            met: unmet.is_empty(),
            unmet,
        }
    }
}

/// Ids of the hardening measures, from the check registry.
fn hardening_measures() -> impl Iterator<Item = &'static str> {
    crate::checks::registry()
        .filter(|c| c.role == Role::Hardening)
        .map(|c| c.id)
}

/// Why a required measure is not met, or `None` when it passed.
fn requirement(measure: &str, result: &ScanResult) -> Option<String> {
    let found: Vec<&Finding> = result.findings.iter().filter(|f| f.id == measure).collect();
    let worst = found
        .iter()
        .find(|f| f.status == Status::Failed)
        .or_else(|| found.iter().find(|f| f.status != Status::Passed))
        .or_else(|| found.first());
    let Some(finding) = worst else {
        return Some(if result.error.is_some() {
            format!("required hardening {measure} was not evaluated (the scan failed)")
        } else {
            format!("required hardening {measure} was not evaluated")
        });
    };
    let state = match finding.status {
        Status::Passed => return None,
        Status::Failed if finding.ignored => {
            "is missing (waived, but waivers never excuse a policy requirement)"
        }
        Status::Failed => "is missing",
        Status::Indeterminate => "is indeterminate (the check could not decide)",
        Status::NetworkLimited => "could not be checked (network-limited)",
        Status::Skipped => "was skipped",
    };
    Some(format!("required hardening {measure} {state}"))
}

/// Which failed findings a forbidden pattern covers, as one sentence; `None` when none.
fn forbidden_present(pattern: &str, result: &ScanResult) -> Option<String> {
    let hits: Vec<&Finding> = result
        .findings
        .iter()
        .filter(|f| {
            f.status == Status::Failed
                && matches!(f.role, Role::Check | Role::Hardening | Role::Version)
                && names(f, result)
                    .iter()
                    .any(|name| waivers::matches(pattern, name))
        })
        .collect();
    if hits.is_empty() {
        return None;
    }
    let ids: Vec<&str> = hits.iter().map(|f| f.id.as_str()).collect();
    let mut sentence = if ids == [pattern] {
        format!("forbidden finding {pattern} is present")
    } else {
        format!("forbidden finding {pattern} is present: {}", ids.join(", "))
    };
    if hits.iter().any(|f| f.ignored) {
        sentence.push_str(" (waived, but waivers never excuse a policy requirement)");
    }
    Some(sentence)
}

/// The names a finding answers to: its id, and for `vulnerability:<id>` the bare advisory id
/// and its aliases (with and without the prefix).
fn names(finding: &Finding, result: &ScanResult) -> Vec<String> {
    let mut names = vec![finding.id.clone()];
    if let Some(advisory) = checks::VULNERABILITY.member_of(&finding.id) {
        names.push(advisory.to_string());
        for v in result.vulnerabilities.iter().filter(|v| v.id == advisory) {
            for alias in &v.aliases {
                names.push(alias.clone());
                names.push(checks::VULNERABILITY.member(alias).as_str().to_string());
            }
        }
    }
    names
}

fn minimum_rating(value: &Shallow) -> Result<Option<u8>, String> {
    const FIX: &str = "write an integer from 0 (F) to 5 (A+), e.g. minimum_rating: 4 for grade A";
    match value {
        Shallow::Null => Ok(None),
        Shallow::Number(n) if n.parse::<i128>().is_ok() => match n.parse::<u8>() {
            Ok(r) if r <= 5 => Ok(Some(r)),
            _ => Err(format!("minimum_rating {n} is outside 0-5; {FIX}")),
        },
        Shallow::Number(n) => Err(format!("minimum_rating {n} is not an integer; {FIX}")),
        other => Err(format!(
            "minimum_rating is {}, not an integer; {FIX}",
            other.kind()
        )),
    }
}

/// The entries of a list of names: non-empty strings, duplicates dropped, order kept.
fn names_list(key: &str, value: &Names) -> Result<Vec<String>, String> {
    let items = match value {
        Listed::Other(Shallow::Null) => return Ok(Vec::new()),
        Listed::List { items, more: false } => items,
        Listed::List { more: true, .. } => {
            return Err(format!(
                "{key} has more than {MAX_LIST_ENTRIES} entries; a policy names far fewer \
                 findings (use patterns such as exposed or versionDisclosure:*)"
            ));
        }
        Listed::Other(other) => {
            return Err(format!(
                "{key} is {}, not a list; write one name per line as a YAML list (- name) or \
                 a JSON array",
                other.kind()
            ));
        }
    };
    let mut names: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Shallow::Text(text) = item else {
            return Err(format!(
                "{key} entry {} is {}, not a name; write each entry as text",
                i + 1,
                item.kind()
            ));
        };
        let name = text.trim();
        if name.is_empty() {
            return Err(format!(
                "{key} entry {} is empty; remove it or name a finding",
                i + 1
            ));
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

fn required(value: &Names) -> Result<Vec<String>, String> {
    let names = names_list("required_hardenings", value)?;
    let known: Vec<&str> = hardening_measures().collect();
    for name in &names {
        if known.contains(&name.as_str()) {
            continue;
        }
        let shown = quoted(name);
        if let Some(close) = known.iter().find(|k| k.eq_ignore_ascii_case(name)) {
            return Err(format!(
                "required_hardenings: unknown measure {shown}; did you mean {close}? (names \
                 are case-sensitive)"
            ));
        }
        if let Some(check) = crate::checks::spec(name) {
            return Err(format!(
                "required_hardenings: {shown} is {} finding, not a hardening measure; list it \
                 under forbidden instead",
                match check.role {
                    Role::Check => "an additional-check",
                    Role::Version => "a version",
                    Role::Observation => "an observation",
                    Role::Hardening => "a hardening",
                }
            ));
        }
        return Err(format!(
            "required_hardenings: unknown measure {shown}; use one of {}",
            known.join(", ")
        ));
    }
    Ok(names)
}

fn unknown_key(key: &str) -> String {
    let squashed = |k: &str| {
        k.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let shown = quoted(key);
    match KEYS.iter().find(|k| squashed(k) == squashed(key)) {
        Some(close) => format!("unknown key {shown}; did you mean {close}?"),
        None => format!(
            "unknown key {shown}; the known keys are minimum_rating, required_hardenings and \
             forbidden"
        ),
    }
}

/// A name from the file, quoted with control characters escaped and cut to a sane length.
fn quoted(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX).collect();
        format!("{:?}...", cut)
    } else {
        format!("{text:?}")
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("syntax error")
}

/// The policy file as read: the three keys' values, shallow, and what else was there. Typed,
/// so a hostile file never becomes a tree of its own size: an unknown key and anything nested
/// deeper than a list of names are skipped while parsing and only named.
#[derive(Default)]
struct Document {
    minimum_rating: Option<Shallow>,
    required_hardenings: Option<Names>,
    forbidden: Option<Names>,
    /// The first key that is not one of [`KEYS`].
    unknown_key: Option<String>,
    /// The kind of a top level that is not a mapping (`a list`).
    not_a_mapping: Option<&'static str>,
}

/// A list of names as read: at most [`MAX_LIST_ENTRIES`] entries, or what stands there instead.
type Names = Listed<Shallow, MAX_LIST_ENTRIES>;

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Document, D::Error> {
        struct AsDocument;
        impl<'de> Reader<'de> for AsDocument {
            type Value = Document;
            /// An empty document (or one holding only comments) asks for nothing.
            fn shallow<E: de::Error>(self, value: Shallow) -> Result<Document, E> {
                Ok(Document {
                    not_a_mapping: (value != Shallow::Null).then(|| value.kind()),
                    ..Document::default()
                })
            }
            fn mapping<A: MapAccess<'de>>(self, map: A) -> Result<Document, A::Error> {
                let mut document = Document::default();
                capped::each_member(map, |key, map| {
                    match key {
                        "minimum_rating" => document.minimum_rating = Some(map.next_value()?),
                        "required_hardenings" => {
                            document.required_hardenings = Some(map.next_value()?)
                        }
                        "forbidden" => document.forbidden = Some(map.next_value()?),
                        _ => {
                            document.unknown_key.get_or_insert_with(|| key.to_string());
                            return Ok(false);
                        }
                    }
                    Ok(true)
                })?;
                Ok(document)
            }
        }
        capped::read(deserializer, AsDocument)
    }
}

#[cfg(test)]
mod tests;
