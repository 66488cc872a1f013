//! Where the state lives when `--state-dir` is not given.

use super::secrets::Environment;
use std::path::{Path, PathBuf};

/// The state directory's name under `$XDG_STATE_HOME` and `~/.local/state`.
pub const STATE_DIR_NAME: &str = "check-storage-security";

/// Where the state lives when `--state-dir` is not given: `$STATE_DIRECTORY` (systemd's
/// `StateDirectory=`; the first, if it lists several), else
/// `$XDG_STATE_HOME/check-storage-security`, else `~/.local/state/check-storage-security`.
/// `None` when none of these is set: nothing is cached.
pub fn default_state_dir(env: &dyn Environment) -> Option<PathBuf> {
    let set = |name: &str| env.var(name).filter(|v| !v.trim().is_empty());
    if let Some(dirs) = set("STATE_DIRECTORY") {
        return dirs.split(':').find(|d| !d.is_empty()).map(PathBuf::from);
    }
    if let Some(xdg) = set("XDG_STATE_HOME").filter(|x| Path::new(x).is_absolute()) {
        return Some(Path::new(&xdg).join(STATE_DIR_NAME));
    }
    set("HOME").map(|home| Path::new(&home).join(".local/state").join(STATE_DIR_NAME))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::secrets::MapEnv;

    #[test]
    fn state_directory_defaults() {
        let dir = |pairs: &[(&str, &str)]| default_state_dir(&MapEnv::with(pairs));
        assert_eq!(
            dir(&[
                ("STATE_DIRECTORY", "/var/lib/cos:/var/lib/other"),
                ("HOME", "/home/n")
            ]),
            Some(PathBuf::from("/var/lib/cos"))
        );
        assert_eq!(
            dir(&[("XDG_STATE_HOME", "/x/state"), ("HOME", "/home/n")]),
            Some(PathBuf::from("/x/state/check-storage-security"))
        );
        // A relative XDG_STATE_HOME is invalid by the specification and ignored.
        assert_eq!(
            dir(&[("XDG_STATE_HOME", "state"), ("HOME", "/home/n")]),
            Some(PathBuf::from("/home/n/.local/state/check-storage-security"))
        );
        assert_eq!(dir(&[("HOME", "")]), None);
        assert_eq!(dir(&[]), None);
    }
}
