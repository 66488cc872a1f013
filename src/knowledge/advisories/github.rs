//! GitHub advisory API answers: the global `/advisories/{id}` and a repository's
//! `/security-advisories`.

use super::*;

pub(super) fn package_matches(name: &str, family: ProductFamily) -> bool {
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
pub(super) fn github_package_matches(package: Option<&Package>, family: ProductFamily) -> bool {
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
pub(super) struct GithubVulnerability {
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
    pub(super) fn ranges(&self, ctx: C) -> Vec<AffectedRange> {
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
pub(super) struct PatchedObject {
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
pub(super) fn parse_range_expression(expr: &str) -> Option<Vec<AffectedRange>> {
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
