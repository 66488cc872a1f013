//! Waivers: findings the operator accepts. `--ignore-hardening` gives permanent ones.
//!
//! Pattern syntax: an exact finding id (`hstsPreload`, `exposed:/.env`), a family root that
//! covers every member (`exposed`, `versionDisclosure`), or a pattern with `*` matching any run
//! of characters (`versionDisclosure:X-*`, `*Preload`). Matching is case-sensitive, like ids.
//! A waived finding stays in the result with `ignored: true` but no longer counts.

use crate::report::{Finding, WaiverState};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiver {
    pub pattern: String,
    /// Where it was given (`--ignore-hardening`, `--waive-until`).
    pub source: &'static str,
    /// When it stops hiding the check; `None` for a permanent waiver.
    pub expires: Option<jiff::Timestamp>,
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

pub use crate::report::WaiverReport;

/// Waiver patterns are check-id patterns (see `checks::pattern`).
pub use crate::checks::pattern::matches;

/// What the waivers did to one host's findings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub reports: Vec<WaiverReport>,
    /// Days until the next time-limited waiver stops hiding a failing check; `None` when no
    /// failing check depends on a deadline (a check also covered by a permanent waiver does not).
    pub waiver_days_left: Option<i64>,
}

/// Whole days from `from` to `to`, rounded down, never negative.
pub(crate) fn whole_days(from: jiff::Timestamp, to: jiff::Timestamp) -> i64 {
    (to.as_second() - from.as_second())
        .div_euclid(86_400)
        .max(0)
}

/// Marks the failing findings the waivers cover (expired waivers cover nothing) and reports
/// each waiver's state.
pub fn apply(waivers: &[Waiver], findings: &mut [Finding], now: jiff::Timestamp) -> Applied {
    let live = |w: &Waiver| w.expires.is_none_or(|e| e > now);
    let mut reports = Vec::new();
    for w in waivers {
        let mut matched = Vec::new();
        for f in findings.iter_mut() {
            if f.status == crate::report::Status::Failed && matches(&w.pattern, &f.id) {
                if live(w) {
                    f.ignored = true;
                }
                matched.push(f.id.clone());
            }
        }
        let state = if !live(w) {
            WaiverState::Expired
        } else if matched.is_empty() {
            WaiverState::Unmatched
        } else {
            WaiverState::Active
        };
        reports.push(WaiverReport {
            pattern: w.pattern.clone(),
            source: w.source.into(),
            state,
            permanent: w.expires.is_none(),
            expires: w.expires,
            reason: w.reason.clone(),
            days_left: w.expires.filter(|_| live(w)).map(|e| whole_days(now, e)),
            matched,
        });
    }
    // A failing finding hidden only by time-limited waivers is hidden until the last of them
    // expires; the next such moment over all findings is what waiver_days_left counts down to.
    let waiver_days_left = findings
        .iter()
        .filter(|f| f.status == crate::report::Status::Failed && f.ignored)
        .filter(|f| {
            !waivers
                .iter()
                .any(|w| w.expires.is_none() && matches(&w.pattern, &f.id))
        })
        .filter_map(|f| {
            waivers
                .iter()
                .filter(|w| live(w) && matches(&w.pattern, &f.id))
                .filter_map(|w| w.expires)
                .max()
        })
        .min()
        .map(|e| whole_days(now, e));
    Applied {
        reports,
        waiver_days_left,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::finding_for;
    use crate::checks::pattern::glob;
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
            finding_for("hstsPreload", Status::Failed, "x").unwrap(),
            finding_for("cspWithoutUnsafeInline", Status::Passed, "x").unwrap(),
        ];
        let waivers = [
            Waiver::permanent("hstsPreload", "--ignore-hardening"),
            Waiver::permanent("cspWithoutUnsafeInline", "--ignore-hardening"),
        ];
        let reports = apply(&waivers, &mut findings, jiff::Timestamp::UNIX_EPOCH).reports;
        assert!(findings[0].ignored);
        assert!(!findings[1].ignored, "a passing check is not waived");
        assert_eq!(reports[0].state, crate::report::WaiverState::Active);
        assert_eq!(reports[1].state, crate::report::WaiverState::Unmatched);
    }

    /// The matcher before it was made linear: backtracking to the last star.
    fn backtracking_glob(pattern: &[u8], text: &[u8]) -> bool {
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

    #[test]
    fn the_linear_matcher_agrees_with_backtracking() {
        // Every pattern of up to four characters over `a`, `b`, `*` against every text of up
        // to six characters over `a`, `b`.
        fn words(alphabet: &[u8], max: usize) -> Vec<String> {
            let mut all = vec![String::new()];
            let mut last = vec![String::new()];
            for _ in 0..max {
                let next: Vec<String> = last
                    .iter()
                    .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{}", *c as char)))
                    .collect();
                all.extend(next.iter().cloned());
                last = next;
            }
            all
        }
        let texts = words(b"ab", 6);
        for pattern in words(b"ab*", 4).iter().filter(|p| p.contains('*')) {
            for text in &texts {
                assert_eq!(
                    glob(pattern, text),
                    backtracking_glob(pattern.as_bytes(), text.as_bytes()),
                    "{pattern} against {text}"
                );
            }
        }
    }

    #[test]
    fn patterns_that_made_backtracking_quadratic_stay_linear() {
        // A middle part that almost matches everywhere: backtracking took 10^11 steps.
        let pattern = format!("*{}b*", "a".repeat(100_000));
        let text = "a".repeat(1_000_000);
        let started = std::time::Instant::now();
        assert!(!matches(&pattern, &text));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
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

#[cfg(test)]
mod expiry_tests {
    use super::*;
    use crate::checks::finding_for;
    use crate::report::Status;

    fn at(text: &str) -> jiff::Timestamp {
        text.parse().unwrap()
    }

    fn until(pattern: &str, expiry: &str) -> Waiver {
        Waiver::parse_until(&format!("{pattern}|{expiry}|accepted until the migration")).unwrap()
    }

    #[test]
    fn a_waiver_hides_until_its_expiry_and_alerts_again_after_it() {
        let waivers = [until("hstsPreload", "2026-12-01T00:00:00Z")];
        // One second before the expiry: hidden, 0 whole days left.
        let mut findings = vec![finding_for("hstsPreload", Status::Failed, "x").unwrap()];
        let applied = apply(&waivers, &mut findings, at("2026-11-30T23:59:59Z"));
        assert!(findings[0].ignored);
        assert_eq!(applied.reports[0].state, crate::report::WaiverState::Active);
        assert_eq!(applied.waiver_days_left, Some(0));
        // At the expiry: the check alerts again, no configuration change needed.
        let mut findings = vec![finding_for("hstsPreload", Status::Failed, "x").unwrap()];
        let applied = apply(&waivers, &mut findings, at("2026-12-01T00:00:00Z"));
        assert!(!findings[0].ignored);
        assert_eq!(
            applied.reports[0].state,
            crate::report::WaiverState::Expired
        );
        assert_eq!(applied.reports[0].days_left, None);
        assert_eq!(applied.waiver_days_left, None);
    }

    #[test]
    fn days_left_counts_to_the_next_deadline_and_ignores_permanently_covered_checks() {
        let waivers = [
            until("hstsPreload", "2026-12-10T00:00:00Z"),
            until("hstsPreload", "2026-12-20T00:00:00Z"),
            until("cspWithoutUnsafeInline", "2026-12-05T12:00:00Z"),
            Waiver::permanent("csp*", "--ignore-hardening"),
        ];
        let mut findings = vec![
            finding_for("hstsPreload", Status::Failed, "x").unwrap(),
            finding_for("cspWithoutUnsafeInline", Status::Failed, "x").unwrap(),
        ];
        let applied = apply(&waivers, &mut findings, at("2026-11-22T03:00:00Z"));
        // hstsPreload stays hidden until the later of its two waivers; the CSP one is also
        // covered permanently, so its deadline does not count.
        assert_eq!(applied.waiver_days_left, Some(27));
        assert_eq!(applied.reports[2].days_left, Some(13));
    }

    #[test]
    fn expiries_need_a_time_zone_and_reasons_must_not_be_empty() {
        for bad in [
            "hstsPreload|2026-12-01T00:00:00|reason",
            "hstsPreload|2026-12-01|reason",
            "hstsPreload|2026-12-01T00:00:00Z|",
            "hstsPreload|2026-12-01T00:00:00Z",
            "|2026-12-01T00:00:00Z|reason",
        ] {
            assert!(Waiver::parse_until(bad).is_err(), "{bad}");
        }
        let w =
            Waiver::parse_until("hstsPreload | 2026-12-01T00:00:00+01:00 | DNS change").unwrap();
        assert_eq!(w.expires, Some(at("2026-11-30T23:00:00Z")));
        assert_eq!(w.reason.as_deref(), Some("DNS change"));
    }
}
