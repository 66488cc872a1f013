//! Settings that name operator files: each file is checked (`crate::files::check`) while the
//! settings are read, so a wrong path ends the run UNKNOWN before the first packet, with one
//! line naming the setting and the fix, instead of after a scan (or never, for a FIFO).

use super::options::Id;
use super::{Layers, SettingsError};
use crate::files::{self, Kind};
use std::path::PathBuf;

impl Layers<'_> {
    /// The file of a single-valued setting, checked. A missing baseline is fine: the first
    /// run records it.
    pub fn operator_file(&self, id: Id, kind: Kind) -> Result<Option<PathBuf>, SettingsError> {
        self.given(id)?
            .map(|given| checked(&given, kind))
            .transpose()
    }

    /// The files of a repeatable setting, each checked, with how messages name each file, for
    /// readers that find something wrong inside it later.
    pub fn named_operator_files(
        &self,
        id: Id,
        kind: Kind,
    ) -> Result<Vec<NamedFile>, SettingsError> {
        self.given_list(id)?
            .iter()
            .map(|given| named_file(given, kind))
            .collect()
    }
}

/// An operator file, and how a message names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedFile {
    pub path: PathBuf,
    /// The path, or `(from <reference>)` when the path was read from a reference.
    pub shown: String,
}

/// The file a value names, checked, with how messages name it.
pub(super) fn named_file(given: &super::Given, kind: Kind) -> Result<NamedFile, SettingsError> {
    checked(given, kind).map(|path| NamedFile {
        shown: shown(given, &path),
        path,
    })
}

/// A path read from a reference is named by the reference, never shown.
fn shown(given: &super::Given, path: &std::path::Path) -> String {
    match &given.reference {
        Some(reference) => format!("(from {reference})"),
        None => path.display().to_string(),
    }
}

fn checked(given: &super::Given, kind: Kind) -> Result<PathBuf, SettingsError> {
    let path = PathBuf::from(&given.text);
    match files::check(&path, kind) {
        Ok(()) => Ok(path),
        // A missing baseline is recorded by this run: its directory must take it, or the
        // save would fail only after the scan.
        Err(refusal) if kind == Kind::Baseline && refusal.is_missing() => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if dir.is_dir() {
                Ok(path)
            } else {
                Err(SettingsError(format!(
                    "baseline file {} cannot be recorded: its directory does not exist; \
                     create it or point --baseline into an existing directory",
                    shown(given, &path)
                )))
            }
        }
        Err(refusal) => Err(SettingsError(refusal.line(&shown(given, &path)))),
    }
}
