//! `check-storage-scanner`: the scanner once (`scan <host>`), as a local caching service
//! (`serve`), and the waiver review (`review-waivers --result FILE`). Every subcommand reads the
//! plugin's settings the plugin's way (option table, `COS_*` variables, configuration file),
//! and scans with the plugin's pipeline (`crate::scanner`).

use crate::assess::waiver_review;
use crate::budget::Budget;
use crate::report::State;
use crate::run::{Outcome, setup_process, unknown};
use crate::scanner::Scanner;
use crate::settings::manual::{self, Page};
use crate::settings::options::{self, Program};
use crate::settings::secrets::Environment;
use crate::settings::{Purpose, Settings, cli};
use std::ffi::OsString;
use std::time::Instant;

/// The subcommands, in the order `-h` lists them.
pub const SUBCOMMANDS: [(&str, &str); 5] = [
    (
        "scan <host>",
        "scan one instance and print its result document (JSON); exit with its state",
    ),
    (
        "serve",
        "answer scans over HTTP, caching each host's result (--listen, --port, --token)",
    ),
    (
        "web",
        "the public scan API: anyone submits an instance and reads its grade (--listen, --store)",
    ),
    (
        "review-waivers --result <file>",
        "list expired, expiring, unused, overlapping and permanent waivers; change nothing",
    ),
    (
        "configure",
        "write a configuration file interactively (--config names it)",
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
                stdout: PAGE.help_text(),
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
                PAGE.usage_text()
            ),
            exit_code: 3,
        };
    };
    let rest = &words[1..];
    match subcommand.as_str() {
        "scan" => scan(line, rest, env, started),
        "serve" => serve(line, rest, env),
        "web" => web(line, rest, env),
        "review-waivers" => review_waivers(line, rest, env),
        "configure" if rest.is_empty() => crate::wizard::main(Program::Scanner, &line, env),
        "configure" => unknown("configure takes no arguments; it asks for the settings"),
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

/// A server's function: its settings and the stop flag set by SIGTERM or SIGINT.
type ServeFn = fn(Settings, std::sync::Arc<std::sync::atomic::AtomicBool>) -> Result<(), String>;

/// A server subcommand until SIGTERM or SIGINT (exit 0). A reason not to start is one line on
/// stderr and exit 3, stdout empty: a service manager logs stderr. `no_arguments` is the line
/// for words after the subcommand.
fn run_server(
    line: cli::CommandLine,
    rest: &[String],
    env: &dyn Environment,
    no_arguments: &str,
    serve: ServeFn,
) -> Outcome {
    let refuse = |message: &str| {
        eprintln!(
            "{}: {}",
            Program::Scanner.name(),
            crate::settings::redact::apply(message)
        );
        Outcome {
            stdout: String::new(),
            exit_code: 3,
        }
    };
    if !rest.is_empty() {
        return refuse(no_arguments);
    }
    let settings = match Settings::resolve_for(&line, env, Purpose::Serve) {
        Ok(s) => s,
        Err(e) => return refuse(&e.0),
    };
    if let Err(e) = setup_process(&settings) {
        return refuse(&e);
    }
    match crate::serve::signals::stop_flag().and_then(|stop| serve(settings, stop)) {
        Ok(()) => Outcome {
            stdout: String::new(),
            exit_code: 0,
        },
        Err(e) => refuse(&e),
    }
}

/// `serve`: the scan service.
fn serve(line: cli::CommandLine, rest: &[String], env: &dyn Environment) -> Outcome {
    run_server(
        line,
        rest,
        env,
        "serve takes no arguments; the hosts to scan come with the requests",
        crate::serve::service::serve,
    )
}

/// `web`: the public scan API.
fn web(line: cli::CommandLine, rest: &[String], env: &dyn Environment) -> Outcome {
    run_server(
        line,
        rest,
        env,
        "web takes no arguments; the instances to scan come with the submissions",
        crate::web::server::serve,
    )
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
    match waiver_review::review(&documents, now.0, window) {
        Ok(review) => Outcome {
            stdout: review.text(),
            exit_code: review.exit_code(),
        },
        Err(problem) => unknown(&format!("the waivers of the --result files {problem}")),
    }
}

/// The manual of `check-storage-scanner`: `-h` and `man/check-storage-scanner.1`, with the
/// option rows this program takes (`settings::manual` renders both).
pub static PAGE: Page = Page {
    program: Program::Scanner,
    summary: "one scan, a local caching scan service, and the waiver review",
    usage: &SUBCOMMANDS,
    description: &[
        "Runs the scanner of check-storage-security without the monitoring plugin around it: \
         once for one host (scan), as a local HTTP service that scans the hosts its requests \
         name and caches each result (serve), and offline over saved result documents \
         (review-waivers). Every subcommand reads the settings of check-storage-security: the \
         options below (the plugin's that apply to a scan, and the scanner's own), the COS_* \
         variables and the configuration file. A flag only the plugin takes (--format, \
         --baseline, --webhook-url, ...) is refused by name.",
        manual::SETTINGS_SOURCES,
    ],
    topics: &[
        (
            "scan <host>",
            &[
                "Scans one instance with the plugin's pipeline and prints its result document as \
               JSON: the same object as one element of check-storage-security --format json \
               (findings, waivers, rating explanation, remediation plan). The exit code is the \
               host's state, as the plugin's would be. The host is given after scan, not with \
               -H; scan several hosts with check-storage-security -H a,b --format json.",
            ],
        ),
        (
            "serve",
            &[
                "Answers scans over HTTP on --listen (default 127.0.0.1) and --port (default \
                 8811), with the plugin's pipeline and limits. GET /api/scan?url=<host> answers \
                 with the host's result document, from the cache or from a scan it waits for; \
                 POST /api/queue with url=<host> queues a scan and answers at once with its \
                 uuid; GET /api/result/<uuid> answers queued or running until that scan ends, \
                 then with the result document; POST /api/requeue with url=<host> discards the \
                 host's cached result and scans again; GET /healthz says the service is alive. \
                 A host's result is served from the cache for service.cache_ttl seconds \
                 (COS_SERVICE_CACHE_TTL, default 900).",
                "The service scans whatever host a request names, private addresses included: \
                 it is the operator's own scanner, and the token keeps others from using it. A \
                 listen address other than loopback needs --token: the service refuses to start \
                 without one, with one shorter than 32 characters or holding white space, or \
                 with the placeholder replace-me-with-a-random-scanner-token of the sample \
                 configuration. When a token is set, every /api/ request presents it as \
                 Authorization: Bearer TOKEN, on loopback too; /healthz needs none. Give the token as a secret reference \
                 (secret://, file://, env://, exec://) or with the _file suffix, never in clear. \
                 SIGTERM or SIGINT stops the service after the requests in flight (exit 0).",
            ],
        ),
        (
            "web",
            &[
                "The public scan API on --listen (default 127.0.0.1:8080), named --base-url in \
                 what it answers. POST /api/scans with a JSON object {\"target_url\": \"HOST\"} \
                 (and optionally waive, a list of waiver patterns; release_track; format, the \
                 preferred export) queues a scan and answers 202 with its uuid and links; GET \
                 /api/scans/<uuid> answers queued, running, or completed with the result \
                 document; GET /api/scans/<uuid>/export/json|csv|sarif gives the result as a \
                 download; DELETE /api/scans/<uuid> erases every record of that scan's target. \
                 Any other field, a wrong type or value is 400 with {\"error\": {\"code\", \
                 \"message\", \"field\"}}; an unknown or expired uuid is 404.",
                "Limits, answered 429 with Retry-After: 10 submissions a minute from one \
                 address, one scan of a target per 5 minutes, 50 scans a day from one network \
                 (IPv4 /24, IPv6 /56), and a network whose last 5 scans found no supported \
                 instance pauses for a day. The client is the socket's address, or the one \
                 X-Forwarded-For names when the socket is a --trusted-proxy. A target must \
                 resolve to public addresses only (no loopback, private, link-local, shared, \
                 unique-local, multicast, reserved or documentation address, in no IPv6 \
                 encoding); its scan connects only to the addresses checked. \
                 --allow-private-targets lifts that for internal deployments.",
                "--workers scans run at once on this node; records, queue and counters live in \
                 --store (sqlite:PATH, the default in the state directory; or redis://HOST:PORT/DB \
                 shared by several nodes) and expire --record-ttl seconds after submission. A \
                 scan whose worker died is taken up again. SIGTERM or SIGINT stops the service \
                 after the requests and scans in flight (exit 0).",
            ],
        ),
        (
            "review-waivers --result <file>",
            &[
                "Reads result documents (what check-storage-security --format json or scan \
                 printed; repeat --result for several files, each at most 16 MiB) and reviews \
                 the waivers they list at the current time (COS_NOW pins it), every host and \
                 file together; changes nothing. One line per waiver and class, grouped: \
                 expired (its expiry has passed: remove it or renew it with a new date and \
                 reason), expiring (it ends within --waiver-warning days, 14 when unset: fix \
                 what it hides, or renew it), unused (it hides no failing finding on any host \
                 whose document lists it: remove it), overlapping (two waivers hide the same \
                 finding of one host: keep the dated one, else the narrower one, and remove or \
                 narrow the other), permanent (no expiry: give it an expiry and a reason).",
                "The first line is a summary for a monitoring system (WARNING: 3 waivers need \
                 attention (1 expired, 1 expiring, 1 unused), or OK: 4 waivers, none needs \
                 attention), the last line performance data. Every class but permanent needs \
                 attention: exit 1; nothing to clean up exits 0; a file that is not a result \
                 document ends the review with one line naming it, exit 3.",
            ],
        ),
        (
            "configure",
            &[
                "Writes a JSON configuration file interactively, the same wizard as \
                 check-storage-security --configure, with the scan service's group besides \
                 (serve's listen address, port and token, the cache lifetime): the host is \
                 asked for (empty: none, scan and serve name theirs) and the optional groups are \
                 offered; every answer is checked as a run would read it, a secret is taken only \
                 as a reference (env://, file://, secret://), and the file is written \
                 atomically with mode 0600 after confirming before it replaces one. --config \
                 names the file. Without a terminal the answers are read line by line from \
                 standard input; a refused answer or the end of the input stops it with nothing \
                 written (exit 3). Ends with the command line that uses the file.",
            ],
        ),
    ],
    exit_status: &[
        (
            "0",
            "scan: the host is OK. serve: stopped by SIGTERM or SIGINT. review-waivers: no \
             waiver needs attention. configure: the file is written.",
        ),
        (
            "1",
            "scan: the host is WARNING. review-waivers: a waiver is expired, expiring, unused or \
             overlapping.",
        ),
        ("2", "scan: the host is CRITICAL."),
        (
            "3",
            "scan: UNKNOWN (the scan failed after its retries, or the server is not a supported \
             product). serve: it refused to start (the reason on stderr). review-waivers: a \
             --result file is not a result document. configure: nothing written (refused \
             answer, end of input, or a file kept). Any subcommand: an option, variable or \
             configuration file is wrong (the message names the fix).",
        ),
    ],
    examples: &[
        (
            "The result document of one instance:",
            "check-storage-scanner scan cloud.example.com",
        ),
        (
            "The scan service on every address, its token from a systemd credential:",
            "check-storage-scanner serve --listen 0.0.0.0 --token secret://scanner-token",
        ),
        (
            "A scan through the service:",
            "curl -H \"Authorization: Bearer $TOKEN\" 'http://scanner.example:8811/api/scan?url=cloud.example.com'",
        ),
        (
            "The waivers of a fleet's last run, expiring ones 30 days ahead:",
            "check-storage-scanner review-waivers --result fleet.json --waiver-warning 30",
        ),
    ],
    see_also: &["check-storage-security(1)"],
    help_footer: "See man check-storage-scanner(1), and README.md for the result document.",
};
