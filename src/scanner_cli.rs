//! `check-storage-scanner`: the scanner once (`scan <host>`), as a local caching service
//! (`serve`), and the waiver review (`review-waivers --result FILE`). Every subcommand reads the
//! plugin's settings the plugin's way (option table, `COS_*` variables, configuration file),
//! and scans with the plugin's pipeline (`crate::scanner`).

use crate::assess::waiver_review;
use crate::budget::Budget;
use crate::report::State;
use crate::run::{Outcome, setup_process, unknown};
use crate::scanner::Scanner;
use crate::settings::options::{self, Program};
use crate::settings::secrets::Environment;
use crate::settings::{Purpose, Settings, cli};
use std::ffi::OsString;
use std::time::Instant;

/// The subcommands, in the order `-h` lists them.
pub const SUBCOMMANDS: [(&str, &str); 4] = [
    (
        "scan <host>",
        "scan one instance and print its result document (JSON); exit with its state",
    ),
    (
        "serve",
        "answer scans over HTTP, caching each host's result (--listen, --port, --token)",
    ),
    (
        "review-waivers --result <file>",
        "list expired, expiring, unused, overlapping and permanent waivers; change nothing",
    ),
    (
        "configure",
        "write a configuration file interactively (not available in this version yet)",
    ),
];

/// The whole scanner: arguments (without the program name) and environment to output.
pub fn main<I>(args: I, env: &dyn Environment) -> Outcome
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let mut outcome = run(args, env);
    outcome.stdout = crate::settings::redact::apply(&outcome.stdout);
    outcome
}

fn run<I>(args: I, env: &dyn Environment) -> Outcome
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let started = Instant::now();
    let (invocation, words) = match cli::parse_for(Program::Scanner, args) {
        Ok(parsed) => parsed,
        Err(message) => return unknown(&message),
    };
    let line = match invocation {
        cli::Invocation::Help => {
            return Outcome {
                stdout: usage(),
                exit_code: 0,
            };
        }
        cli::Invocation::Version => {
            return Outcome {
                stdout: crate::run::version_text().replacen(
                    crate::settings::manual::PROGRAM,
                    Program::Scanner.name(),
                    1,
                ),
                exit_code: 0,
            };
        }
        cli::Invocation::Scan(line) => line,
    };
    let Some(subcommand) = words.first() else {
        return Outcome {
            stdout: format!(
                "UNKNOWN: name a subcommand: {}\n{}",
                names().join(", "),
                usage()
            ),
            exit_code: 3,
        };
    };
    let rest = &words[1..];
    match subcommand.as_str() {
        "scan" => scan(line, rest, env, started),
        "review-waivers" => review_waivers(line, rest, env),
        "serve" | "configure" => unknown(&format!(
            "subcommand {subcommand:?} is not available in this version yet"
        )),
        other => {
            let shown: String = other.chars().take(40).collect();
            unknown(&format!(
                "unknown subcommand {shown:?}; use one of {} (see -h)",
                names().join(", ")
            ))
        }
    }
}

fn names() -> Vec<&'static str> {
    SUBCOMMANDS
        .iter()
        .map(|(form, _)| form.split(' ').next().unwrap_or(form))
        .collect()
}

/// `scan <host>`: the result document of one host, the same object as one element of the
/// plugin's `--format json`, and the host's state as the exit code.
fn scan(
    mut line: cli::CommandLine,
    rest: &[String],
    env: &dyn Environment,
    started: Instant,
) -> Outcome {
    let host = match rest {
        [host] => host.clone(),
        [] => return unknown("scan needs a host: check-storage-scanner scan cloud.example.com"),
        _ => {
            return unknown(
                "scan takes one host; scan several with check-storage-security -H a,b --format json",
            );
        }
    };
    if !line.all("host").is_empty() {
        return unknown("give the host once: after scan, not also with -H");
    }
    line.values.push((options::spec("host"), host));
    let settings = match Settings::resolve_for(&line, env, Purpose::Scan) {
        Ok(s) => s,
        Err(e) => return unknown(&e.0),
    };
    let now = match setup_process(&settings) {
        Ok(now) => now,
        Err(e) => return unknown(&e),
    };
    let scanner = match Scanner::new(&settings, now, Budget::new(started, settings.time_budget)) {
        Ok(s) => s,
        Err(e) => return unknown(&e),
    };
    let result = match scanner.scan(&settings.targets[0]) {
        Ok(r) => r,
        Err(e) => return unknown(&e),
    };
    let mut stdout = serde_json::to_string_pretty(&result)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise the result: {e}\"}}"));
    stdout.push('\n');
    let state: State = crate::output::overall_state(std::slice::from_ref(&result));
    Outcome {
        stdout,
        exit_code: state.exit_code(),
    }
}

/// `review-waivers --result FILE`: the waivers of the result documents, reviewed at the run's
/// clock (`COS_NOW` pins it); changes nothing. Exit 0 when no waiver needs attention, 1
/// otherwise, 3 when a file is not a result document (one line naming it).
fn review_waivers(line: cli::CommandLine, rest: &[String], env: &dyn Environment) -> Outcome {
    if let Some(word) = rest.first() {
        let shown: String = word.chars().take(40).collect();
        return unknown(&format!(
            "review-waivers takes its files with --result FILE, not as {shown:?}"
        ));
    }
    let settings = match Settings::resolve_for(&line, env, Purpose::Offline) {
        Ok(s) => s,
        Err(e) => return unknown(&e.0),
    };
    let now = match setup_process(&settings) {
        Ok(now) => now,
        Err(e) => return unknown(&e),
    };
    if settings.scanner.results.is_empty() {
        return unknown(
            "review-waivers needs --result FILE: what check-storage-security --format json or \
             check-storage-scanner scan printed (repeat --result for several files)",
        );
    }
    let mut documents = waiver_review::Documents::new();
    for file in &settings.scanner.results {
        if let Err(line) = documents.load(&file.path, &file.shown) {
            return unknown(&line);
        }
    }
    let window = settings
        .waiver_warning
        .unwrap_or(waiver_review::DEFAULT_WINDOW_DAYS);
    let review = waiver_review::review(&documents, now.0, window);
    Outcome {
        stdout: review.text(),
        exit_code: review.exit_code(),
    }
}

/// `-h`: the subcommands and where the options are described.
pub fn usage() -> String {
    let mut out = format!(
        "{} - the storage security scanner, once or as a local caching service\n\nUsage:\n",
        Program::Scanner.name()
    );
    let width = SUBCOMMANDS.iter().map(|(f, _)| f.len()).max().unwrap_or(0);
    for (form, what) in SUBCOMMANDS {
        out.push_str(&format!(
            "  {} {form:<width$}  {what}\n",
            Program::Scanner.name()
        ));
    }
    out.push_str(
        "\nEvery subcommand reads the settings of check-storage-security (its options, COS_* \
         variables and configuration file; see check-storage-security -h).\n",
    );
    out
}
