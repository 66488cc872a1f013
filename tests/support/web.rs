//! `check-storage-scanner web` for a test: a free loopback port, bundled release data, no
//! debug ports, no retries, the state (its SQLite store) in `dir`, the clock at `NOW`.

use super::service::ScannerService;
use std::path::{Path, PathBuf};

pub const SCANNER: &str = env!("CARGO_BIN_EXE_check-storage-scanner");
pub const NOW: &str = super::PINNED_NOW;

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

/// `check-storage-scanner <args>` run to its end in `dir` (its state directory too), the clock
/// at `NOW`: what it printed and its exit code.
pub fn run_scanner(dir: &Path, args: &[&str]) -> (String, i32) {
    let output = std::process::Command::new(SCANNER)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("COS_STATE_DIR", dir)
        .env("COS_NOW", NOW)
        .current_dir(dir)
        .output()
        .expect("run check-storage-scanner");
    (
        String::from_utf8(output.stdout).expect("UTF-8"),
        output.status.code().expect("an exit code"),
    )
}
