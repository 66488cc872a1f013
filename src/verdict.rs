//! The monitoring verdict: thresholds and the rules of the spec's "Monitoring verdict rules"
//! table, applied to one host. Pure.

use crate::report::State;

/// Everything the rules look at.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub rating: Option<u8>,
    pub warning: u8,
    pub critical: u8,
    pub vulnerabilities: usize,
    pub end_of_life: bool,
    pub check_hardening: bool,
    pub missing_hardening: usize,
    pub update_warning: bool,
    pub update_available: bool,
    pub eol_warning: Option<i64>,
    pub support_days_left: Option<i64>,
    pub waiver_warning: Option<i64>,
    pub waiver_days_left: Option<i64>,
}

impl Inputs {
    /// `--waiver-warning DAYS` and a waiver hiding a failing check ends within DAYS.
    pub fn waiver_ending(&self) -> bool {
        matches!((self.waiver_warning, self.waiver_days_left), (Some(window), Some(left)) if left <= window)
    }

    /// `--eol-warning DAYS` and DAYS or fewer days of support left.
    pub fn ending_soon(&self) -> bool {
        matches!((self.eol_warning, self.support_days_left), (Some(window), Some(left)) if left <= window)
    }
}

/// A rule that turns OK into WARNING (spec: "Monitoring verdict rules"). The causes of a
/// host's state name the same ones the state was decided by (`assess::causes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raise {
    /// A published advisory affects the release.
    Vulnerabilities,
    /// `--check-hardening` and a hardening measure is missing.
    MissingHardening,
    /// `--update-warning` and an update is available on the instance's track.
    UpdateAvailable,
    /// `--eol-warning DAYS` and the line's support ends within DAYS.
    SupportEnding,
    /// `--waiver-warning DAYS` and a waiver hiding a failing check ends within DAYS.
    WaiverEnding,
}

/// The rules that hold for `i` among those that turn OK into WARNING, in this order.
pub fn raises(i: &Inputs) -> Vec<Raise> {
    [
        (Raise::Vulnerabilities, i.vulnerabilities > 0),
        (
            Raise::MissingHardening,
            i.check_hardening && i.missing_hardening > 0,
        ),
        (
            Raise::UpdateAvailable,
            i.update_warning && i.update_available,
        ),
        (Raise::SupportEnding, i.ending_soon()),
        (Raise::WaiverEnding, i.waiver_ending()),
    ]
    .into_iter()
    .filter_map(|(raise, holds)| holds.then_some(raise))
    .collect()
}

pub fn decide(i: &Inputs) -> State {
    let Some(rating) = i.rating.filter(|r| *r <= 5) else {
        return State::Unknown;
    };
    if i.end_of_life {
        return State::Critical;
    }
    let mut state = if rating <= i.critical {
        State::Critical
    } else if rating <= i.warning {
        State::Warning
    } else {
        State::Ok
    };
    // The remaining rules only ever turn OK into WARNING.
    if !raises(i).is_empty() && state == State::Ok {
        state = State::Warning;
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(rating: u8) -> Inputs {
        Inputs {
            rating: Some(rating),
            warning: 3,
            critical: 1,
            ..Default::default()
        }
    }

    #[test]
    fn the_rules_that_raise_ok_are_named() {
        let mut i = base(5);
        assert!(raises(&i).is_empty());
        i.vulnerabilities = 2;
        i.check_hardening = true;
        i.missing_hardening = 1;
        i.eol_warning = Some(30);
        i.support_days_left = Some(10);
        assert_eq!(
            raises(&i),
            [
                Raise::Vulnerabilities,
                Raise::MissingHardening,
                Raise::SupportEnding
            ]
        );
        i.update_available = true;
        assert!(
            !raises(&i).contains(&Raise::UpdateAvailable),
            "without --update-warning"
        );
    }

    #[test]
    fn thresholds() {
        assert_eq!(decide(&base(5)), State::Ok);
        assert_eq!(decide(&base(4)), State::Ok);
        assert_eq!(decide(&base(3)), State::Warning);
        assert_eq!(decide(&base(2)), State::Warning);
        assert_eq!(decide(&base(1)), State::Critical);
        assert_eq!(decide(&base(0)), State::Critical);
    }

    #[test]
    fn a_single_critical_finding_warns_by_default_and_pages_with_critical_2() {
        // A critical finding caps the rating at 2 (D).
        assert_eq!(decide(&base(2)), State::Warning);
        let mut i = base(2);
        i.critical = 2;
        assert_eq!(decide(&i), State::Critical);
    }

    #[test]
    fn rating_outside_the_scale_is_unknown() {
        assert_eq!(decide(&base(6)), State::Unknown);
        let mut i = base(5);
        i.rating = None;
        assert_eq!(decide(&i), State::Unknown);
    }

    #[test]
    fn vulnerabilities_are_at_least_warning() {
        let mut i = base(5);
        i.vulnerabilities = 1;
        assert_eq!(decide(&i), State::Warning);
        i.warning = 0;
        i.critical = 0;
        assert_eq!(decide(&i), State::Warning);
    }

    #[test]
    fn end_of_life_is_always_critical() {
        let mut i = base(5);
        i.end_of_life = true;
        i.warning = 0;
        i.critical = 0;
        assert_eq!(decide(&i), State::Critical);
    }

    #[test]
    fn warning_rules_only_raise_ok() {
        let mut i = base(5);
        i.check_hardening = true;
        i.missing_hardening = 2;
        assert_eq!(decide(&i), State::Warning);
        i.check_hardening = false;
        assert_eq!(decide(&i), State::Ok);

        let mut i = base(1);
        i.check_hardening = true;
        i.missing_hardening = 2;
        assert_eq!(decide(&i), State::Critical, "never downgrades");

        let mut i = base(5);
        i.update_available = true;
        assert_eq!(decide(&i), State::Ok);
        i.update_warning = true;
        assert_eq!(decide(&i), State::Warning);

        let mut i = base(5);
        i.support_days_left = Some(30);
        i.eol_warning = Some(30);
        assert_eq!(decide(&i), State::Warning);
        i.support_days_left = Some(31);
        assert_eq!(decide(&i), State::Ok);

        let mut i = base(5);
        i.waiver_days_left = Some(7);
        assert_eq!(decide(&i), State::Ok, "no window, no warning");
        i.waiver_warning = Some(7);
        assert_eq!(decide(&i), State::Warning);
        i.waiver_warning = Some(6);
        assert_eq!(decide(&i), State::Ok);
    }
}
