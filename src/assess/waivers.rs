//! Waivers: findings the operator accepts. `--ignore-hardening` gives permanent ones.
//!
//! Pattern syntax: an exact finding id (`hstsPreload`, `exposed:/.env`), a family root that
//! covers every member (`exposed`, `versionDisclosure`), or a pattern with `*` matching any run
//! of characters (`versionDisclosure:X-*`, `*Preload`). Matching is case-sensitive, like ids.
//! A waived finding stays in the result with `ignored: true` but no longer counts.

use crate::report::Finding;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiver {
    pub pattern: String,
    /// Where it was given (`--ignore-hardening`, `--waive-until`).
    pub source: &'static str,
    /// When it stops hiding the check; `None` for a permanent waiver.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<jiff::Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Waiver {
    pub fn permanent(pattern: &str, source: &'static str) -> Waiver {
        Waiver {
            pattern: pattern.to_string(),
            source,
            expires: None,
            reason: None,
        }
    }

    /// Parses `--waive-until '<pattern>|<expiry>|<reason>'`: the expiry is an ISO 8601 timestamp
    /// with a time zone, the reason must not be empty.
    pub fn parse_until(text: &str) -> Result<Waiver, String> {
        let parts: Vec<&str> = text.splitn(3, '|').map(str::trim).collect();
        let [pattern, expiry, reason] = parts[..] else {
            return Err(format!(
                "--waive-until {text:?} must be PATTERN|EXPIRY|REASON, e.g. \
                 'hstsPreload|2026-12-31T00:00:00Z|waiting for the DNS change'"
            ));
        };
        if pattern.is_empty() {
            return Err(format!(
                "--waive-until {text:?} has no pattern; name the finding to waive"
            ));
        }
        let expires = expiry.parse::<jiff::Timestamp>().map_err(|_| {
            format!(
                "--waive-until expiry {expiry:?} is not an ISO 8601 timestamp with a time zone; \
                 write e.g. 2026-12-31T00:00:00Z or 2026-12-31T00:00:00+01:00"
            )
        })?;
        if reason.is_empty() {
            return Err(format!(
                "--waive-until {text:?} has an empty reason; say why the finding is accepted"
            ));
        }
        Ok(Waiver {
            pattern: pattern.to_string(),
            source: "--waive-until",
            expires: Some(expires),
            reason: Some(reason.to_string()),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaiverReport {
    pub pattern: String,
    pub source: &'static str,
    /// `active` when it hides at least one failing finding, `unmatched` otherwise.
    pub state: &'static str,
    pub permanent: bool,
    pub matched: Vec<String>,
}

/// Whether `pattern` covers the finding `id`.
pub fn matches(pattern: &str, id: &str) -> bool {
    if pattern == id {
        return true;
    }
    if !pattern.contains('*') {
        // A family root covers `root:anything`.
        return id
            .strip_prefix(pattern)
            .is_some_and(|rest| rest.starts_with(':'));
    }
    glob(pattern.as_bytes(), id.as_bytes())
}

fn glob(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative wildcard match with backtracking to the last star: linear in practice.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

/// Marks the failing findings the waivers cover and reports each waiver's state.
pub fn apply(waivers: &[Waiver], findings: &mut [Finding]) -> Vec<WaiverReport> {
    waivers
        .iter()
        .map(|w| {
            let mut matched = Vec::new();
            for f in findings.iter_mut() {
                if f.status == crate::report::Status::Failed && matches(&w.pattern, &f.id) {
                    f.ignored = true;
                    matched.push(f.id.clone());
                }
            }
            WaiverReport {
                pattern: w.pattern.clone(),
                source: w.source,
                state: if matched.is_empty() {
                    "unmatched"
                } else {
                    "active"
                },
                permanent: true,
                matched,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::finding;
    use crate::report::Status;

    #[test]
    fn exact_family_and_wildcard_patterns() {
        assert!(matches("hstsPreload", "hstsPreload"));
        assert!(!matches("hsts", "hstsPreload"));
        assert!(matches("exposed", "exposed:/.env"));
        assert!(!matches("exposed:/.env", "exposed:/.envx"));
        assert!(matches(
            "versionDisclosure:X-*",
            "versionDisclosure:X-Web-Version"
        ));
        assert!(matches("*Preload", "hstsPreload"));
        assert!(matches("*", "anything"));
        assert!(matches("a*b*c", "axxbyyc"));
        assert!(!matches("a*b*c", "axxbyy"));
        assert!(!matches("HSTSPreload", "hstsPreload"));
    }

    #[test]
    fn waived_failures_are_marked_and_reported() {
        let mut findings = vec![
            finding("hstsPreload", Status::Failed, "x"),
            finding("cspWithoutUnsafeInline", Status::Passed, "x"),
        ];
        let waivers = [
            Waiver::permanent("hstsPreload", "--ignore-hardening"),
            Waiver::permanent("cspWithoutUnsafeInline", "--ignore-hardening"),
        ];
        let reports = apply(&waivers, &mut findings);
        assert!(findings[0].ignored);
        assert!(!findings[1].ignored, "a passing check is not waived");
        assert_eq!(reports[0].state, "active");
        assert_eq!(reports[1].state, "unmatched");
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        let pattern = "*a".repeat(50);
        let text = "a".repeat(5000) + "b";
        let started = std::time::Instant::now();
        assert!(!matches(&pattern, &text));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
