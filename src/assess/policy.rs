//! The policy file (`--policy`): requirements a CI pipeline gates on. (Being written.)

use crate::report::ScanResult;
use serde::Serialize;
use std::path::Path;

/// A parsed, validated policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    pub minimum_rating: Option<u8>,
    pub required_hardenings: Vec<String>,
    pub forbidden: Vec<String>,
}

/// The `policy` member of a result document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyVerdict {
    pub met: bool,
    /// One sentence per unmet requirement.
    pub unmet: Vec<String>,
}

impl Policy {
    /// Reads and validates a policy file (YAML, or JSON for `.json`); errors are one line.
    pub fn load(path: &Path) -> Result<Policy, String> {
        Err(format!("--policy {}: not implemented yet", path.display()))
    }

    /// Whether the policy asks for hardening measures (they are then evaluated even without
    /// `--check-hardening`, without its OK-to-WARNING rule).
    pub fn needs_hardening(&self) -> bool {
        !self.required_hardenings.is_empty()
    }

    /// Judges one host's result. Waivers never excuse a requirement.
    pub fn evaluate(&self, _result: &ScanResult) -> PolicyVerdict {
        PolicyVerdict {
            met: true,
            unmet: Vec::new(),
        }
    }
}
