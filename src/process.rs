//! What every face of the crate (the plugin's run, the scanner's CLI, the servers, the wizard,
//! self-update) shares about being a process: what it prints and how it exits, the process-wide
//! set-up its settings decide, and `--version`. Below the faces, so none imports another.

use crate::clock::Now;
use crate::knowledge::releases::ReleaseSchedule;
use crate::knowledge::{self, ProductFamily};
use crate::net;
use crate::redact;
use crate::settings::secrets::{Environment, ProcessEnv};
use crate::settings::{Settings, manual};
use std::io::Write;

/// What the process prints and how it exits.
#[derive(Debug)]
pub struct Outcome {
    pub stdout: String,
    pub exit_code: i32,
}

impl Outcome {
    /// Exit 0 with `stdout`.
    pub fn ok(stdout: String) -> Outcome {
        Outcome {
            stdout,
            exit_code: 0,
        }
    }

    /// A face's answer: its text with exit 0, or its one-line error as UNKNOWN.
    pub fn of(answer: Result<String, String>) -> Outcome {
        answer.map_or_else(unknown, Outcome::ok)
    }
}

/// The UNKNOWN answer (exit 3) with `message`.
pub fn unknown(message: impl std::fmt::Display) -> Outcome {
    Outcome {
        stdout: format!("UNKNOWN: {message}\n"),
        exit_code: 3,
    }
}

/// A program's `main`: runs `face` on the arguments and the process environment, prints its
/// outcome and exits with its code. Nothing a server sends may crash us into a misleading exit
/// code: a panic is UNKNOWN.
pub fn exit_with<F>(face: F) -> !
where
    F: FnOnce(std::iter::Skip<std::env::ArgsOs>, &dyn Environment) -> Outcome
        + std::panic::UnwindSafe,
{
    exit_with_stream(|args, env, _| face(args, env))
}

/// Like [`exit_with`], for a face that may write part of its output as it goes (a fleet's
/// results as they complete, `output::stream`) before its outcome's text: the stream is
/// stdout, each write passed through the secret guard.
pub fn exit_with_stream<F>(face: F) -> !
where
    F: FnOnce(
            std::iter::Skip<std::env::ArgsOs>,
            &dyn Environment,
            &mut (dyn Write + Send),
        ) -> Outcome
        + std::panic::UnwindSafe,
{
    std::panic::set_hook(Box::new(|info| {
        eprintln!("internal error: {info}");
    }));
    let mut streamed = Redacted(std::io::BufWriter::new(std::io::stdout()));
    let mut out = std::panic::AssertUnwindSafe(&mut streamed);
    let outcome = std::panic::catch_unwind(move || {
        face(std::env::args_os().skip(1), &ProcessEnv, &mut **out)
    })
    .unwrap_or_else(|_| unknown("internal error (see stderr); please report it"));
    let _ = streamed.0.flush();
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(outcome.stdout.as_bytes());
    let _ = stdout.flush();
    std::process::exit(outcome.exit_code);
}

/// Two malloc arenas for the whole process: a fleet run scans on up to 32 host workers, and
/// glibc's arena per thread keeps what thousands of scans freed spread over all of them, so
/// the peak grew with the fleet (49 MiB at 10,000 hosts, 41 MiB at 1,000); with two it stays
/// flat. The plugin's `main` calls it first, before any other thread exists (the servers keep
/// glibc's default: their threads serve requests, not fleets).
pub fn bound_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets an allocator parameter and touches no memory of ours; no other
    // thread is running yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Output passed through the secret guard (`redact::apply`) a write at a time: each write is
/// a whole part of the output (a host's block or document), as the guard needs.
pub struct Redacted<W: Write>(pub W);

impl<W: Write> Write for Redacted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact::apply(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// What the settings decide for the whole process, before any traffic: the secrets the output
/// guard hides, the debug log, pinned names and IPv6 zones. Returns the clock of the run.
pub fn setup_process<Own: crate::settings::ComponentSettings>(
    settings: &Settings<Own>,
) -> Result<Now, String> {
    redact::install(settings.secrets.clone());
    crate::diagnostics::set_debug(settings.debug);
    if let Some(path) = &settings.config_file {
        crate::diagnostics::debug_log(&format!("configuration file {}", path.display()));
    }
    net::resolve::install(settings.resolve.clone());
    net::resolve::install_zones(crate::scanner::target_zones(&settings.targets)?);
    Ok(Now::pinned_or_system(settings.now))
}

/// `--version`: the plugin and the age of what it knows.
pub fn version_text() -> String {
    let schedule = ReleaseSchedule::bundled(ProductFamily::OpenCloud);
    let advisories = knowledge::bundled_advisories_updated(ProductFamily::OpenCloud)
        .map_or_else(|| "unknown".into(), |d| d.to_string());
    format!(
        "{} {}\nbundled OpenCloud release schedule updated {} (newest release {}), advisories updated {}\n",
        manual::PROGRAM,
        env!("CARGO_PKG_VERSION"),
        schedule.updated,
        schedule
            .newest_overall()
            .map_or_else(|| "unknown".into(), |v| v.to_string()),
        advisories
    )
}
