//! Baselines (`--baseline FILE`): the findings of an earlier run, to report only what is new or
//! worse. (Being written.)

use crate::report::ScanResult;
use serde::Serialize;
use std::path::Path;

/// What the comparison with the baseline found for one host (the `baseline` member).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineComparison {
    /// This run recorded the host's first baseline.
    pub recorded: bool,
    /// Failed findings absent from the baseline.
    pub new_findings: Vec<String>,
    /// The rating is lower than the baseline's.
    pub worse_rating: bool,
    /// Checks that concluded in the baseline and are inconclusive now.
    pub inconclusive_now: Vec<String>,
    /// The configuration fingerprint differs (never a finding, never a state change).
    pub fingerprint_drift: bool,
}

/// The stored baseline file.
#[derive(Clone, Debug, Default)]
pub struct Baseline;

impl Baseline {
    /// `Ok(None)` when the file does not exist yet; a corrupt file is an error, never a reset.
    pub fn load(_path: &Path) -> Result<Option<Baseline>, String> {
        Ok(None)
    }

    /// Compares each result with the baseline, sets `result.baseline`, and applies the verdict
    /// rules of baselines (`--warn-on-new`, inconclusive-now).
    pub fn apply(_previous: Option<&Baseline>, _results: &mut [ScanResult], _warn_on_new: bool) {}

    /// Writes the baseline of these results atomically (write, fsync, rename).
    pub fn save(
        _path: &Path,
        _previous: Option<&Baseline>,
        _results: &[ScanResult],
    ) -> Result<(), String> {
        Ok(())
    }
}
