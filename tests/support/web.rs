//! `check-storage-scanner web` for a test: a free loopback port, bundled release data, no
//! debug ports, no retries, the state (its SQLite store) in `dir`, the clock at `NOW`.

use super::service::ScannerService;
use std::path::{Path, PathBuf};

pub const SCANNER: &str = env!("CARGO_BIN_EXE_check-storage-scanner");
pub const NOW: &str = "2026-11-22T03:00:00Z";

/// A fresh directory named after the test under the target's temporary directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts `web` with the flags above and `extra`; panics with what it printed when it refuses.
pub fn start(dir: &Path, extra: &[&str]) -> ScannerService {
    start_at(dir, NOW, extra)
}

/// Like [`start`] with the clock at `now`.
pub fn start_at(dir: &Path, now: &str, extra: &[&str]) -> ScannerService {
    let state = dir.display().to_string();
    let mut args = vec![
        "web",
        "--listen",
        "127.0.0.1:0",
        "--update-source",
        "bundled",
        "--no-debug-ports",
        "--retries",
        "0",
    ];
    args.extend_from_slice(extra);
    ScannerService::start_with(
        Path::new(SCANNER),
        dir,
        &args,
        &[("COS_STATE_DIR", &state), ("COS_NOW", now)],
    )
    .unwrap_or_else(|refused| panic!("web did not start: {refused:?}"))
}
