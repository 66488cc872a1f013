//! What a run says on stderr beside its output: the debug log (`--debug`) and progress for a
//! person at a terminal. At the bottom of the crate, so any layer may log; every line passes
//! the secret guard ([`crate::redact`]).

use crate::redact;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

static DEBUG_LOG: AtomicBool = AtomicBool::new(false);

/// Turns the debug log on or off for the process (`--debug`).
pub fn set_debug(on: bool) {
    DEBUG_LOG.store(on, Ordering::Relaxed);
}

/// Logs to stderr at DEBUG level (`--debug`); stdout stays the monitoring output.
pub fn debug_log(message: &str) {
    if DEBUG_LOG.load(Ordering::Relaxed) {
        eprintln!("DEBUG {}", redact::apply(message));
    }
}

/// Progress for a person at a terminal; silent under a monitoring core, CI or cron, and
/// with the debug log (whose lines it would overwrite).
pub fn progress(message: &str) {
    if std::io::stderr().is_terminal() && !DEBUG_LOG.load(Ordering::Relaxed) {
        eprint!("\r\x1b[2K{message}");
    }
}

/// Clears the progress line before the output.
pub fn clear_progress() {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
}
