//! Severity of a finding or an advisory, shared by checks, advisories and every output format.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Ordered from least to most severe, so `max()` picks the worst.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// Parses the usual spellings found in advisory documents (`LOW`, `moderate`, ...).
    pub fn parse(text: &str) -> Option<Severity> {
        match text.trim().to_ascii_lowercase().as_str() {
            "low" => Some(Severity::Low),
            "medium" | "moderate" => Some(Severity::Medium),
            "high" | "important" => Some(Severity::High),
            "critical" => Some(Severity::Critical),
            _ => None,
        }
    }

    /// The highest rating a failed check of this severity still allows
    /// (spec: critical caps at 2, high at 3, medium at 4, low at 5).
    pub fn rating_cap(self) -> u8 {
        // Each step of severity (declared from low, 0, to critical, 3) caps one lower.
        5 - self as u8
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_follow_the_spec() {
        assert_eq!(Severity::Critical.rating_cap(), 2);
        assert_eq!(Severity::High.rating_cap(), 3);
        assert_eq!(Severity::Medium.rating_cap(), 4);
        assert_eq!(Severity::Low.rating_cap(), 5);
    }

    #[test]
    fn parses_advisory_spellings() {
        assert_eq!(Severity::parse("MODERATE"), Some(Severity::Medium));
        assert_eq!(Severity::parse(" High "), Some(Severity::High));
        assert_eq!(Severity::parse("none"), None);
    }
}
