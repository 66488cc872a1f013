//! The rating: a starting point from version knowledge, then caps by the severity of failed
//! checks that count (spec "Grades and ratings").

use crate::report::{Finding, RatingLimit, Role, Status};
use crate::severity::Severity;
use semver::Version;

/// What the version knowledge says about the installed release.
#[derive(Clone, Debug, Default)]
pub struct VersionStanding {
    pub end_of_life: bool,
    /// Severities of matched advisories (`None`: the advisory gives none).
    pub advisories: Vec<Option<Severity>>,
    pub installed: Option<Version>,
    /// The release recommended on the instance's track, if known.
    pub recommended: Option<Version>,
}

/// Starting rating and the reason, in the words of the spec's table.
pub fn starting_rating(s: &VersionStanding) -> (u8, String) {
    if s.end_of_life {
        return (0, "the release line is end of life".into());
    }
    let severe = s
        .advisories
        .iter()
        .any(|sev| matches!(sev, Some(Severity::High | Severity::Critical)));
    if severe {
        return (
            1,
            "critical or high vulnerabilities match the version".into(),
        );
    }
    if !s.advisories.is_empty() {
        return (2, "known vulnerabilities match the version".into());
    }
    if let (Some(installed), Some(recommended)) = (&s.installed, &s.recommended)
        && recommended > installed
    {
        if (recommended.major, recommended.minor) != (installed.major, installed.minor) {
            return (
                3,
                format!("a whole release line behind ({recommended} is available)"),
            );
        }
        return (4, format!("a patch update is pending ({recommended})"));
    }
    (5, "up to date".into())
}

/// Applies the caps of failed counting checks; marks the findings that set the final rating.
pub fn apply_caps(start: u8, findings: &mut [Finding]) -> (u8, Vec<RatingLimit>) {
    let caps =
        |f: &Finding| f.role == Role::Check && f.status == Status::Failed && f.counts && !f.ignored;
    let limits: Vec<RatingLimit> = findings
        .iter()
        .filter(|f| caps(f))
        .map(|f| RatingLimit {
            id: f.id.clone(),
            severity: f.severity,
            cap: f.severity.rating_cap(),
        })
        .collect();
    let rating = limits.iter().map(|l| l.cap).fold(start, u8::min);
    // Decisive: the caps equal to the final rating when they lowered it below the start.
    for f in findings.iter_mut() {
        f.decisive = caps(f) && f.severity.rating_cap() == rating && rating < start;
    }
    (rating, limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::finding_for;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn standing(installed: &str, recommended: &str) -> VersionStanding {
        VersionStanding {
            installed: Some(v(installed)),
            recommended: Some(v(recommended)),
            ..Default::default()
        }
    }

    #[test]
    fn starting_points_follow_the_spec_table() {
        assert_eq!(starting_rating(&standing("8.1.0", "8.1.0")).0, 5);
        assert_eq!(starting_rating(&standing("7.2.1", "7.2.4")).0, 4);
        assert_eq!(starting_rating(&standing("8.1.0", "8.2.0")).0, 3);
        let mut s = standing("4.0.5", "4.0.8");
        s.advisories = vec![Some(Severity::Medium)];
        assert_eq!(starting_rating(&s).0, 2);
        s.advisories.push(Some(Severity::High));
        assert_eq!(starting_rating(&s).0, 1);
        s.advisories = vec![None];
        assert_eq!(starting_rating(&s).0, 2);
        s.end_of_life = true;
        assert_eq!(starting_rating(&s).0, 0);
    }

    #[test]
    fn caps_by_severity_and_decisive_marking() {
        let mut findings = vec![
            finding_for("httpsAvailable", Status::Failed, "plain").unwrap(),
            finding_for("tlsTrusted", Status::Passed, "ok").unwrap(),
        ];
        let (rating, limits) = apply_caps(5, &mut findings);
        assert_eq!(rating, 2);
        assert_eq!(limits.len(), 1);
        assert!(findings[0].decisive);

        // A failure that does not lower the rating is listed but not decisive.
        let mut findings = vec![finding_for("tlsTrusted", Status::Failed, "self-signed").unwrap()];
        let (rating, limits) = apply_caps(1, &mut findings);
        assert_eq!((rating, limits.len()), (1, 1));
        assert!(!findings[0].decisive);

        // Checks that do not count (--insecure, extra_checks_rating false) never cap.
        let mut findings = vec![finding_for("tlsTrusted", Status::Failed, "self-signed").unwrap()];
        findings[0].counts = false;
        assert_eq!(apply_caps(5, &mut findings).0, 5);
    }

    #[test]
    fn hardening_never_caps() {
        let mut findings =
            vec![finding_for("cspWithoutUnsafeInline", Status::Failed, "unsafe-inline").unwrap()];
        assert_eq!(apply_caps(5, &mut findings).0, 5);
    }
}
