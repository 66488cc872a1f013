//! `check-storage-scanner`: the scanner once (`scan <host>`), as a local caching service
//! (`serve`), the waiver review (`review-waivers --result FILE`) and the fix snippets of saved
//! results (`snippets --result FILE`). Every subcommand reads the
//! plugin's settings the plugin's way (option table, `COS_*` variables, configuration file),
//! and scans with the plugin's pipeline (`crate::scanner`).

use crate::assess::waiver_review;
use crate::budget::Budget;
use crate::process::{Outcome, setup_process, unknown};
use crate::report::State;
use crate::settings::manual::{self, Page};
use crate::settings::options::{self, Program};
use crate::settings::secrets::Environment;
use crate::settings::{
    Component, ComponentSettings, FleetSettings, NamedFile, ReadsResults, ReviewSettings, Settings,
    SnippetsSettings, cli,
};
use std::ffi::OsString;
use std::time::Instant;

/// The subcommands, in the order `-h` lists them.
pub const SUBCOMMANDS: [(&str, &str); 8] = [
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
    crate::web::admin::USAGE,
    (
        "review-waivers --result <file>",
        "list expired, expiring, unused, overlapping and permanent waivers; change nothing",
    ),
    (
        "fleet <paths> [--format json]",
        "judge saved result documents again with today's knowledge: which hosts to act on first, and why",
    ),
    (
        "snippets --result <file> [--for <form>]",
        "print the fixes of saved results as lines to paste: nginx, caddy, apache, traefik, env, zone",
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
    outcome.stdout = crate::redact::apply(&outcome.stdout);
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
    let mut line = match invocation {
        cli::Invocation::Help => return Outcome::ok(PAGE.help_text()),
        cli::Invocation::Version => {
            return Outcome::ok(crate::process::version_text().replacen(
                crate::settings::manual::PROGRAM,
                Program::Scanner.name(),
                1,
            ));
        }
        cli::Invocation::Scan(line) => line,
    };
    let Some(subcommand) = words.first() else {
        return Outcome {
            stdout: format!(
                "UNKNOWN: name a subcommand: {}\n{}",
                names(),
                PAGE.usage_text()
            ),
            exit_code: 3,
        };
    };
    let rest = &words[1..];
    if let Some(component) = component_of(subcommand)
        && let Err(message) = line.bind_to(component, Program::Scanner)
    {
        return match component {
            // A server's refusal goes to stderr, where its service manager logs it.
            Component::Serve | Component::Web => refuse_to_serve(&message),
            _ => unknown(&message),
        };
    }
    // `Err`: the line a subcommand ends UNKNOWN with.
    // A subcommand is named as its component (`Component::name`); only `configure` is none.
    match (component_of(subcommand), subcommand.as_str()) {
        (Some(Component::Scan), _) => scan(line, rest, env, started).unwrap_or_else(unknown),
        (Some(Component::ReviewWaivers), _) => {
            review_waivers(line, rest, env).unwrap_or_else(unknown)
        }
        (Some(Component::Fleet), _) => fleet(line, rest, env).unwrap_or_else(unknown),
        (Some(Component::Snippets), _) => snippets(line, rest, env).unwrap_or_else(unknown),
        (Some(Component::Serve), _) => run_server(
            line,
            rest,
            env,
            (
                Component::Serve,
                "serve takes no arguments; the hosts to scan come with the requests",
            ),
            crate::service::serve,
        ),
        (Some(Component::Web), _) => run_server(
            line,
            rest,
            env,
            (
                Component::Web,
                "web takes no arguments; the instances to scan come with the submissions",
            ),
            crate::web::server::serve,
        ),
        (Some(Component::Limits), _) => crate::web::admin::main(line, rest, env),
        (None, "configure") if rest.is_empty() => crate::wizard::main(Program::Scanner, &line, env),
        (None, "configure") => unknown("configure takes no arguments; it asks for the settings"),
        (_, other) => {
            let shown: String = other.chars().take(40).collect();
            unknown(format!(
                "unknown subcommand {shown:?}; use one of {} (see -h)",
                names()
            ))
        }
    }
}

/// The component a subcommand is, for the settings it reads; `None` for a word that is none
/// (the wizard writes every component's settings).
fn component_of(subcommand: &str) -> Option<Component> {
    use Component::{Fleet, Limits, ReviewWaivers, Scan, Serve, Snippets, Web};
    [Scan, Serve, Web, ReviewWaivers, Fleet, Snippets, Limits]
        .into_iter()
        .find(|component| component.name() == subcommand)
}

/// Each subcommand's name (the first word of its form) and description, in `-h`'s order.
pub fn subcommands() -> impl Iterator<Item = (&'static str, &'static str)> {
    SUBCOMMANDS
        .iter()
        .map(|(form, what)| (form.split(' ').next().unwrap_or(form), *what))
}

/// The subcommands' names, for the refusals that list them.
fn names() -> String {
    subcommands()
        .map(|(name, _)| name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `scan <host>`: the result document of one host, the same object as one element of the
/// plugin's `--format json`, and the host's state as the exit code.
fn scan(
    mut line: cli::CommandLine,
    rest: &[String],
    env: &dyn Environment,
    started: Instant,
) -> Result<Outcome, String> {
    let host = match rest {
        [host] => host.clone(),
        [] => return Err("scan needs a host: check-storage-scanner scan cloud.example.com".into()),
        _ => {
            return Err(
                "scan takes one host; scan several with check-storage-security -H a,b --format json"
                    .into(),
            );
        }
    };
    if !line.all(crate::settings::options::Id::host).is_empty() {
        return Err("give the host once: after scan, not also with -H".into());
    }
    line.values.push((options::spec(options::Id::host), host));
    let settings = Settings::<()>::resolve_for(&line, env, Component::Scan).map_err(|e| e.0)?;
    let now = setup_process(&settings)?;
    let scanner = settings.scanner(now, Budget::new(started, settings.time_budget))?;
    let result = scanner.scan(&settings.targets[0])?;
    let mut stdout = serde_json::to_string_pretty(&result)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise the result: {e}\"}}"));
    stdout.push('\n');
    let state: State = crate::output::overall_state(std::slice::from_ref(&result));
    Ok(Outcome {
        stdout,
        exit_code: state.exit_code(),
    })
}

/// A server's function: its settings and the stop flag set by SIGTERM or SIGINT.
type ServeFn<Own> =
    fn(Settings<Own>, std::sync::Arc<std::sync::atomic::AtomicBool>) -> Result<(), String>;

/// A server's reason not to start: one line on stderr, exit 3, stdout empty (a service manager
/// logs stderr).
fn refuse_to_serve(message: &str) -> Outcome {
    eprintln!(
        "{}: {}",
        Program::Scanner.name(),
        crate::redact::apply(message)
    );
    Outcome {
        stdout: String::new(),
        exit_code: 3,
    }
}

/// A server subcommand until SIGTERM or SIGINT (exit 0); `no_arguments` is the refusal of
/// words after the subcommand.
fn run_server<Own: ComponentSettings>(
    line: cli::CommandLine,
    rest: &[String],
    env: &dyn Environment,
    (component, no_arguments): (Component, &str),
    serve: ServeFn<Own>,
) -> Outcome {
    let served = || {
        if !rest.is_empty() {
            return Err(no_arguments.to_string());
        }
        let settings = Settings::resolve_for(&line, env, component).map_err(|e| e.0)?;
        setup_process(&settings)?;
        serve(settings, crate::server::signals::stop_flag()?)
    };
    match served() {
        Ok(()) => Outcome::ok(String::new()),
        Err(e) => refuse_to_serve(&e),
    }
}

/// The settings of a subcommand that reads files and never the network (review-waivers,
/// snippets, fleet), with the process set up and the run's clock; `Err` is the refusal.
fn offline_settings<Own: ComponentSettings>(
    line: &cli::CommandLine,
    env: &dyn Environment,
    component: Component,
) -> Result<(Settings<Own>, crate::clock::Now), String> {
    let settings = Settings::resolve_for(line, env, component).map_err(|e| e.0)?;
    let now = setup_process(&settings)?;
    Ok((settings, now))
}

/// The settings of a subcommand that reads the result documents `--result` names and takes
/// no other argument (review-waivers, snippets), as [`offline_settings`]; without a
/// `--result`, or with an argument, the refusal.
fn result_settings<Own: ReadsResults>(
    line: &cli::CommandLine,
    rest: &[String],
    env: &dyn Environment,
    component: Component,
) -> Result<(Settings<Own>, crate::clock::Now), String> {
    let name = component.name();
    if let Some(word) = rest.first() {
        let shown: String = word.chars().take(40).collect();
        return Err(format!(
            "{name} takes its files with --result FILE, not as {shown:?}"
        ));
    }
    let ready = offline_settings::<Own>(line, env, component)?;
    if ready.0.own.results().is_empty() {
        return Err(format!(
            "{name} needs --result FILE: what check-storage-security --format json or \
             check-storage-scanner scan printed (repeat --result for several files)"
        ));
    }
    Ok(ready)
}

/// `review-waivers --result FILE`: the waivers of the result documents, reviewed at the run's
/// clock (`COS_NOW` pins it); changes nothing. Exit 0 when no waiver needs attention, 1
/// otherwise, 3 when a file is not a result document (one line naming it).
fn review_waivers(
    line: cli::CommandLine,
    rest: &[String],
    env: &dyn Environment,
) -> Result<Outcome, String> {
    let (settings, now) =
        result_settings::<ReviewSettings>(&line, rest, env, Component::ReviewWaivers)?;
    let mut documents = waiver_review::Documents::default();
    for file in &settings.own.results {
        documents.load(&file.path, &file.shown)?;
    }
    let window = settings
        .waiver_warning
        .unwrap_or(waiver_review::DEFAULT_WINDOW_DAYS);
    let review = waiver_review::review(&documents, now.0, window)
        .map_err(|problem| format!("the waivers of the --result files {problem}"))?;
    Ok(Outcome {
        stdout: review.text(),
        exit_code: review.exit_code(),
    })
}

/// `snippets --result FILE [--for FORM]`: the fix snippets of the result documents' remediation
/// plans, per host, ready to paste (all forms, or the one `--for` names). Exit 0 when it
/// printed them or there is nothing to fix (it says so); 3 when a file is not a result
/// document (one line naming it and the fix).
fn snippets(
    line: cli::CommandLine,
    rest: &[String],
    env: &dyn Environment,
) -> Result<Outcome, String> {
    use crate::files::Kind;
    let (settings, _) = result_settings::<SnippetsSettings>(&line, rest, env, Component::Snippets)?;
    let mut hosts = Vec::new();
    for file in &settings.own.results {
        let bytes = crate::files::read(&file.path, Kind::ResultDocument)
            .map_err(|refusal| refusal.line(&file.shown))?;
        hosts.extend(crate::report::read_documents(&bytes).map_err(|problem| {
            format!(
                "{} {} {problem}; {}",
                Kind::ResultDocument.noun(),
                file.shown,
                Kind::ResultDocument.fix()
            )
        })?);
    }
    Ok(Outcome::ok(crate::assess::snippets::saved_text(
        &hosts,
        settings.own.form,
    )))
}

/// The fix for a file `fleet` cannot read.
const FLEET_FIX: &str = "give fleet what check-storage-security --format json or \
                         check-storage-scanner scan printed, as files or directories of *.json \
                         files";

/// The files `fleet` reads: each file named, and the `*.json` files of each directory named
/// (not recursive, sorted by name), each with how messages name it. A directory that cannot
/// be listed or holds no `*.json` file is a problem line, as an unreadable file is; more than
/// `fleet::MAX_FILES` files is an error.
fn fleet_files(paths: &[NamedFile]) -> Result<(Vec<NamedFile>, Vec<String>), String> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let too_many = || {
        format!(
            "fleet reads at most {} files; name fewer files or directories",
            crate::fleet::MAX_FILES
        )
    };
    for named in paths {
        let (path, shown) = (&named.path, &named.shown);
        if !path.is_dir() {
            files.push(named.clone());
            if files.len() > crate::fleet::MAX_FILES {
                return Err(too_many());
            }
            continue;
        }
        let entries = match std::fs::read_dir(path) {
            Ok(entries) => entries,
            Err(e) => {
                problems.push(format!(
                    "directory {shown} cannot be read ({e}); {FLEET_FIX}"
                ));
                continue;
            }
        };
        let mut found = Vec::new();
        for entry in entries {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            if !name.to_string_lossy().ends_with(".json") {
                continue;
            }
            found.push(name);
            if files.len() + found.len() > crate::fleet::MAX_FILES {
                return Err(too_many());
            }
        }
        if found.is_empty() {
            problems.push(format!(
                "directory {shown} holds no *.json file; {FLEET_FIX}"
            ));
        }
        found.sort();
        for name in found {
            let path = path.join(&name);
            let shown = path.display().to_string();
            files.push(NamedFile { path, shown });
        }
    }
    Ok((files, problems))
}

/// `fleet <paths>`: saved result documents judged again at the run's clock (`COS_NOW` pins
/// it) with the bundled knowledge and the operator's `scanner.release_schedule` and
/// `scanner.vulnerability_db` files (never the network), most urgent host first. A file that
/// cannot be read is skipped with a line on stderr (and the exit is at least 1); when no file
/// holds a result document, the lines are the output and the exit is 3.
fn fleet(
    line: cli::CommandLine,
    rest: &[String],
    env: &dyn Environment,
) -> Result<Outcome, String> {
    let (settings, now) = offline_settings::<FleetSettings>(&line, env, Component::Fleet)?;
    let mut paths: Vec<NamedFile> = rest
        .iter()
        .map(|p| NamedFile {
            path: p.into(),
            shown: p.clone(),
        })
        .collect();
    paths.extend(settings.own.results.iter().cloned());
    if paths.is_empty() {
        return Err(
            "fleet needs result documents: check-storage-scanner fleet results/ (a directory of \
             what check-storage-security --format json printed) or fleet a.json b.json"
                .into(),
        );
    }
    let (files, mut problems) = fleet_files(&paths)?;
    let mut documents = Vec::new();
    let (mut read, mut bytes_read) = (0usize, 0u64);
    for NamedFile { path, shown } in &files {
        let bytes = match crate::files::read(path, crate::files::Kind::ResultDocument) {
            Ok(bytes) => bytes,
            Err(refusal) => {
                problems.push(format!(
                    "result file {shown} {}; {FLEET_FIX}",
                    refusal.problem_text()
                ));
                continue;
            }
        };
        bytes_read += bytes.len() as u64;
        if bytes_read > crate::fleet::MAX_TOTAL_BYTES {
            return Err(format!(
                "the files hold more than {} of result documents; name fewer files or directories",
                crate::files::size_text(crate::fleet::MAX_TOTAL_BYTES)
            ));
        }
        let room = crate::fleet::MAX_DOCUMENTS - documents.len();
        match crate::fleet::read(&bytes, room) {
            Ok(docs) => {
                documents.extend(docs);
                read += 1;
            }
            Err(problem) if problem.starts_with("holds more than") => {
                return Err(format!("result file {shown} {problem}"));
            }
            Err(problem) => problems.push(format!("result file {shown} {problem}; {FLEET_FIX}")),
        }
    }
    if documents.is_empty() {
        return match problems.as_slice() {
            [] => Err(format!("no result document to judge; {FLEET_FIX}")),
            [one] => Err(one.clone()),
            many => Ok(Outcome {
                stdout: format!(
                    "UNKNOWN: no result document to judge in {} files or directories\n{}\n",
                    many.len(),
                    many.join("\n")
                ),
                exit_code: 3,
            }),
        };
    }
    for problem in &problems {
        eprintln!(
            "{}: skipped {}",
            Program::Scanner.name(),
            crate::redact::apply(problem)
        );
    }
    // Offline: the operator's files and the bundled data, never the advisory feed.
    let sources = crate::knowledge::KnowledgeSources {
        release_schedule: settings.scan.release_schedule.clone(),
        vulnerability_db: settings.scan.vulnerability_db.clone(),
        vulnerability_feed: None,
    };
    let offline = |_: &str| Err("fleet does not use the network".to_string());
    let knowledge = crate::fleet::families(&documents)
        .into_iter()
        .map(|family| crate::knowledge::Knowledge::load(family, &sources, &offline))
        .collect::<Result<Vec<_>, String>>()?;
    let today = crate::fleet::Today {
        now: now.0,
        knowledge: &knowledge,
        warning: settings.warning,
        critical: settings.critical,
        eol_warning: settings.eol_warning,
        use_release_schedule: settings.use_release_schedule,
    };
    let view = crate::fleet::judge(documents, &today);
    let stdout = if settings.own.json {
        view.json()
    } else {
        view.text(read, problems.len())
    };
    Ok(Outcome {
        stdout,
        // A file that could not be read leaves the view incomplete: never OK.
        exit_code: view.exit_code().max(i32::from(!problems.is_empty())),
    })
}

/// The manual of `check-storage-scanner`: `-h` and `man/check-storage-scanner.1`, with the
/// option rows this program takes (`settings::manual` renders both).
pub static PAGE: Page = Page {
    program: Program::Scanner,
    summary: "one scan, a local caching scan service, the waiver review, the fleet view and fix \
              snippets",
    usage: &SUBCOMMANDS,
    description: &[
        "Runs the scanner of check-storage-security without the monitoring plugin around it: \
         once for one host (scan), as a local HTTP service that scans the hosts its requests \
         name and caches each result (serve), as the public scan API that anyone may submit an \
         instance to, with its web pages, exports, discovery documents and MCP endpoint (web; \
         limits lists and lifts its holds), and offline over saved result documents \
         (review-waivers, fleet, snippets). Every subcommand reads the settings of check-storage-security: the \
         options below (the plugin's that apply to a scan, and the scanner's own), the COS_* \
         variables and the configuration file. A flag only the plugin takes (--baseline, \
         --webhook-url, ...; --format everywhere but fleet) is refused by name.",
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
                 preferred export), sent as Content-Type: application/json (anything else is \
                 415), queues a scan and answers 202 with its uuid, links and erase_key (for \
                 the submitter only; the service keeps its SHA-256); GET \
                 /api/scans/<uuid> answers queued, running, or completed with the result \
                 document; GET /api/scans/<uuid>/export/json|csv|sarif|pdf gives the result as a \
                 download (the PDF a one-to-two page report); DELETE /api/scans/<uuid> with \
                 the header X-Erase-Key: <erase_key> erases that scan (403 without the key or \
                 with another). Any other field, a wrong type or value is \
                 400 with {\"error\": {\"code\", \"message\", \"field\"}}; an unknown or \
                 expired uuid is 404.",
                "Pages for a browser: / has the submission form, /scans/<uuid> the result (the \
                 grade, the failed findings worst first with their fix, the remediation plan, \
                 the exports), rendered on the server with no external assets. Discovery \
                 documents: /.well-known/ai.json (what the service is and where everything is \
                 described), /openapi.json (OpenAPI 3.1: every operation, schema and status) and \
                 /arazzo.json (the submit, poll, export workflow). POST /mcp speaks the Model \
                 Context Protocol (streamable HTTP): the tools scan_instance, scan_instances, \
                 get_scan_result, plan_remediation, export_scan and erase_instance_data (with \
                 the erase_key scan_instance answered) call \
                 the same handlers, limits and guard as the JSON API; --mcp-token makes it \
                 require a bearer token, --no-mcp removes it. GET or HEAD /healthz answers 200 \
                 while the node and its store can serve.",
                "The grade, state and findings of a scan are always those without the \
                 submitter's waive patterns; the result's submitterWaivers holds the grade and \
                 state with them, which the page, the PDF and the MCP summaries show beside the \
                 headline as the submitter's. The form of the pages (POST /scans, answered 303 \
                 See Other to the result page) refuses with 403 a post its browser says comes \
                 from another site (Origin, Sec-Fetch-Site). A --base-url with a path \
                 (https://example.com/scanner, for a reverse proxy that strips it before \
                 forwarding) is carried by every link, asset, form, redirect and discovery URL. \
                 With an https:// --base-url on a loopback --listen and no --trusted-proxy, web \
                 warns once that every client shares the proxy's limits.",
                "Limits, answered 429 with Retry-After: 10 submissions a minute from one \
                 address, one scan of an instance per 5 minutes (kept for its host with each \
                 port its scan connects to, the given one or else 443 and 80, and for each \
                 address the host resolves to, so every spelling and name of one server share \
                 it), 50 scans a day from one network \
                 (IPv4 /24, IPv6 /56), and a network whose last 5 scans found no supported \
                 instance pauses for a day (the message says until when). They roll (no 11th \
                 within any 60 s, not per clock minute). Every attempt counts against its \
                 address's minute before anything else, no DNS lookup included; the target's \
                 cooldown and the network's day count only a submission that passes both. \
                 The subcommand limits lists and lifts them. The client is the socket's address, or the one \
                 X-Forwarded-For names when the socket is a --trusted-proxy. A target must \
                 resolve within 2 s to public addresses only (no loopback, private, link-local, shared, \
                 unique-local, multicast, reserved or documentation address, in no IPv6 \
                 encoding); its scan connects only to the addresses checked. At most 8 lookups \
                 run at once; a submission finding them all busy gets 503 with Retry-After. \
                 --allow-private-targets lifts the address rule for internal deployments.",
                "--workers scans run at once on this node; records, queue and counters live in \
                 --store (sqlite:PATH, the default in the state directory; or redis://HOST:PORT/DB \
                 shared by several nodes) and expire --record-ttl seconds after submission, \
                 then a purge every minute erases them. Every store call is bounded by \
                 --store-timeout; GET or HEAD /healthz answers 503 with Retry-After when the store \
                 does not answer within a second. A scan whose worker died is taken up again. SIGTERM or SIGINT stops the service \
                 after the requests and scans in flight (exit 0).",
            ],
        ),
        crate::web::admin::TOPIC,
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
            "fleet <paths> [--format json]",
            &[
                "Reads saved result documents (what check-storage-security --format json or scan \
                 printed, each file at most 16 MiB): the files named, and every *.json file of \
                 each directory named (not recursive, in name order), and any --result FILE; at \
                 most 10000 files, 1 GiB and 100000 documents in all. A host named by several \
                 documents is judged by its newest. Each host is judged again at the current \
                 time (COS_NOW pins it) with today's knowledge: the bundled release schedule and \
                 advisories, or scanner.release_schedule and scanner.vulnerability_db; never the \
                 network. A release line that reached end of life since the scan (on the track \
                 the document judged), one that ends within --eol-warning days, an advisory \
                 matching the version that the document did not list, and a waiver that expired \
                 since the scan while it hid a failing finding of the host are reasons; so are the document's \
                 own WARNING or CRITICAL, a failed scan, and a scan 7 days old or older.",
                "The state now is estimated the plugin's way from the document's rating and \
                 --warning and --critical: end of life is CRITICAL, a new high or critical \
                 advisory starts the rating at 1 and any other at 2, a failing check a waiver no \
                 longer hides caps it by its severity; never better than the state at the scan. \
                 Hosts are listed most urgent first: CRITICAL now, then WARNING or UNKNOWN now \
                 or an old scan or an expired waiver that hid a failing finding, then the rest; \
                 within that by the state now, by how much is new since the scan, by the age of \
                 the scan (oldest first) and by host name.",
                "The output is a summary line for a monitoring system (CRITICAL: 2 of 5 hosts \
                 need action now (2 critical, 1 warning)), what was judged, a table with the \
                 columns # (the priority), HOST, PRODUCT (family and version), STATE (the state \
                 at the scan, an arrow, the state now) and WHY (one reason a line; nothing new for an \
                 unchanged healthy host), and performance data; plain text, never colors. \
                 --format json prints a JSON array instead, one object per host in the same \
                 order: priority, host, product (opencloud or ocis), version, scannedAt, \
                 daysSinceScan, stateThen, stateNow, urgency (critical, warning, none) and \
                 reasons (objects with kind: end-of-life, advisory, ending-soon, \
                 waiver-expired, state-at-scan, scan-failed or old-scan; and detail).",
                "A file that cannot be read or is not a result document is skipped with one line \
                 on stderr naming it and the fix, and makes the exit at least 1; when no file \
                 holds a result document, those lines are the output and the exit is 3.",
            ],
        ),
        (
            "snippets --result <file> [--for <form>]",
            &[
                "Reads result documents (what check-storage-security --format json or scan \
                 printed; repeat --result for several files, each at most 16 MiB) and prints, \
                 per host, the changes of its remediation plan as lines to paste, one snippet \
                 per file: nginx (the instance's server block, and a server for port 80 beside \
                 it), caddy (the Caddyfile site block, and an http:// site beside it), apache \
                 (the instance's VirtualHost, and the server level), traefik (Docker labels of \
                 the instance's service, and a dynamic file for TLS options), env (.env or the \
                 service's environment:, with the family's OC_ or OCIS_ settings) and zone \
                 (records for the DNS zone holding the name). --for keeps one form. Each snippet \
                 follows a comment line naming the host, the product, the form and the file; a \
                 host with nothing to paste gets one comment line saying why. The snippets are \
                 worked out again from the finding ids of each plan, the same as the \
                 document's remediationPlan.snippets.",
                "Exit 0 when it printed snippets or there is nothing to fix; 3 with one line \
                 naming the fix for an unknown --for form or a --result file that is not a \
                 result document.",
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
            "scan: the host is OK. serve and web: stopped by SIGTERM or SIGINT. limits: \
             listed or lifted. review-waivers: no waiver needs attention. fleet: no host needs action now. snippets: printed, or \
             nothing to fix. configure: the file is written.",
        ),
        (
            "1",
            "scan: the host is WARNING. review-waivers: a waiver is expired, expiring, unused or \
             overlapping. fleet: the most urgent host is WARNING or UNKNOWN now, its scan is \
             old, or a waiver that hid a failing finding expired; or a file was skipped.",
        ),
        (
            "2",
            "scan: the host is CRITICAL. fleet: a host is CRITICAL now.",
        ),
        (
            "3",
            "scan: UNKNOWN (the scan failed after its retries, or the server is not a supported \
             product). serve and web: it refused to start (the reason on stderr: a wrong \
             setting, a token that is too short, a store that cannot be opened, an address in \
             use). limits: the store cannot be opened, or the argument is neither a network nor \
             a target. review-waivers: a \
             --result file is not a result document. fleet: no file holds a result document. \
             snippets: an unknown --for form, or a --result file that is not a result document. \
             configure: nothing written (refused \
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
        (
            "Which instances to act on first, judged today from a directory of saved results:",
            "check-storage-scanner fleet /var/lib/check-storage-security/results/",
        ),
        (
            "The nginx lines that fix the hosts of a saved run:",
            "check-storage-scanner snippets --result fleet.json --for nginx",
        ),
    ],
    see_also: &["check-storage-security(1)"],
    help_footer: "See man check-storage-scanner(1), and docs/outputs.md for the result document.",
};

#[cfg(test)]
mod tests {
    use super::*;

    /// `-h` names each subcommand as the dispatch reads it: its component's name, or
    /// `configure`, which is none.
    #[test]
    fn every_subcommand_of_the_help_is_dispatched_by_its_name() {
        for (name, _) in subcommands() {
            assert!(
                name == "configure" || component_of(name).is_some(),
                "{name} is listed by -h but dispatched by no component"
            );
        }
        assert_eq!(subcommands().count(), SUBCOMMANDS.len());
    }
}
