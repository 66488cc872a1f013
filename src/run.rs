//! One run of the plugin: flags to exit code. Reads settings, scans each target (retrying the
//! whole scan on transient failures), assesses, renders. The binaries are thin wrappers.

use crate::assess::baseline::Baseline;
use crate::budget::Budget;
use crate::diagnostics::{clear_progress, debug_log};
use crate::output;
use crate::process::{Outcome, setup_process, unknown, version_text};
use crate::redact;
use crate::report::{self, ScanResult, State};
use crate::settings::secrets::Environment;
use crate::settings::{Format, Settings, cli, manual};
use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

/// The whole plugin: arguments (without the program name) and environment to output. Whatever
/// it prints passes the secret guard (`redact`) last.
/// A fleet's output may be written to `out` as its hosts complete (`output::stream`); `out`
/// guards its own writes.
pub fn main<I>(args: I, env: &dyn Environment, out: &mut (dyn Write + Send)) -> Outcome
where
    I: IntoIterator,
    I::Item: Into<std::ffi::OsString>,
{
    let mut outcome = run(args, env, out);
    outcome.stdout = redact::apply(&outcome.stdout);
    outcome
}

fn run<I>(args: I, env: &dyn Environment, out: &mut (dyn Write + Send)) -> Outcome
where
    I: IntoIterator,
    I::Item: Into<std::ffi::OsString>,
{
    // The time budget counts from the start, as the monitoring core's timeout does.
    let started = Instant::now();
    let line = match cli::parse(args) {
        Ok(cli::Invocation::Help) => return Outcome::ok(manual::PLUGIN.help_text()),
        Ok(cli::Invocation::Version) => return Outcome::ok(version_text()),
        Ok(cli::Invocation::Scan(line)) => line,
        Err(message) => return unknown(&message),
    };
    if line.last(crate::settings::options::Id::configure).is_some() {
        return crate::wizard::main(crate::settings::options::Program::Plugin, &line, env);
    }
    // --upgrade-self [check]: an action of its own that scans nothing.
    if line
        .last(crate::settings::options::Id::upgrade_self)
        .is_some()
        || line
            .last(crate::settings::options::Id::check_only)
            .is_some()
    {
        return crate::self_update::upgrade::run(&line, env);
    }
    scan(&line, env, started, out).unwrap_or_else(unknown)
}

/// The scan of the configured targets (or the exporter, or `--verify-remediation`); `Err` is
/// the line the run ends UNKNOWN with.
fn scan(
    line: &cli::CommandLine,
    env: &dyn Environment,
    started: Instant,
    out: &mut (dyn Write + Send),
) -> Result<Outcome, String> {
    let settings = Settings::resolve(line, env).map_err(|e| e.0)?;
    let now = setup_process(&settings)?;
    // --prometheus-listen-port: serve the metrics until stopped instead of scanning once.
    if settings.exporter.is_some() {
        return Ok(crate::exporter::run(settings));
    }
    let budget = Budget::new(started, settings.time_budget);
    let mut scanner = settings.scanner(now, budget)?;
    scanner.show_progress = true;
    // --verify-remediation: only the probes of the named ids; no rating, no baseline, no webhook.
    if !settings.verify_remediation.is_empty() {
        let mut stdout = String::new();
        let mut worst = State::Ok;
        let access = crate::verify::Access {
            config: &settings.scan,
            tls_min_days: settings.tls_min_days,
            roots: &scanner.roots,
            proxy: scanner.proxy.as_ref(),
            budget: scanner.budget(),
        };
        for target in &settings.targets {
            let (text, code) = crate::verify::run(
                target,
                &settings.verify_remediation,
                &access,
                settings.format,
                now,
            );
            stdout.push_str(&text);
            worst = worst.worst(match code {
                0 => State::Ok,
                1 => State::Warning,
                2 => State::Critical,
                _ => State::Unknown,
            });
        }
        clear_progress();
        return Ok(Outcome {
            stdout,
            exit_code: worst.exit_code(),
        });
    }
    // Read once before scanning: a corrupt baseline is an operator problem, found before any
    // traffic. Every host is compared with it in its assessment; it is saved once after.
    let previous = settings
        .baseline
        .as_deref()
        .map(Baseline::load)
        .transpose()?;
    let scanner = scanner.with_baseline(previous.as_ref());
    // Without a baseline to save or a change report, which need every result, a format
    // written host by host is written as the hosts complete.
    if previous.is_none()
        && settings.diff_format.is_none()
        && output::stream::streams(settings.format)
    {
        return stream_all(&settings, &scanner, now, out);
    }
    let mut results = scanner.scan_all(&settings.targets)?;
    clear_progress();
    if let (Some(path), Some(previous)) = (&settings.baseline, &previous) {
        previous.save(path, &results)?;
    }
    if let Some(webhook) = &settings.webhook {
        // The metrics formats report a failed scan as a metric value (`scrape_success 0`),
        // not as an event (spec, Events 8): its host sends no notification.
        let metrics = matches!(settings.format, Format::Metrics | Format::Otlp);
        let mut notified: Vec<&mut ScanResult> = results
            .iter_mut()
            .filter(|r| !(metrics && r.error.is_some()))
            .collect();
        notify_all(webhook, &mut notified, scanner.budget());
    }
    let context = settings.output_context(now);
    let mut stdout = match settings.diff_format {
        // The change report instead of the normal output; the exit code stays the verdict's.
        Some(format) => output::changes::render(format, &results),
        None => output::render(settings.format, &results, &context),
    };
    // --self-update-check: at most one extra line; never a change of the exit code.
    if settings.self_update_check
        && let Some(line) = crate::self_update::check::notice(&settings, now, scanner.budget())
    {
        stdout = crate::self_update::check::add_line(settings.format, stdout, &line);
    }
    Ok(Outcome {
        stdout,
        // The metrics formats report a failed scan as a metric value, not as a state.
        exit_code: match settings.format {
            Format::Metrics | Format::Otlp => output::metrics::exit_code(&results),
            _ => output::overall_state(&results).exit_code(),
        },
    })
}

/// Scans the targets and writes each host's part of the output as it completes, in input
/// order (`output::stream`): no document outlives its host's part. Each host's notification is
/// sent as its scan ends.
fn stream_all(
    settings: &Settings,
    scanner: &crate::scanner::Scanner<'_>,
    now: crate::clock::Now,
    out: &mut (dyn Write + Send),
) -> Result<Outcome, String> {
    use output::stream::{Stream, part};
    // A holder that panicked leaves consistent data: a part is taken whole.
    use crate::server::lock;
    let context = settings.output_context(now);
    let hosts = settings.targets.len();
    let stream = Mutex::new(Stream::new(settings.format, &mut *out));
    // An operator mistake found late (an unreadable advisory file) ends the run UNKNOWN.
    let mistake: Mutex<Option<String>> = Mutex::new(None);
    scanner.scan_each(&settings.targets, |index, scanned| {
        let mut result = match scanned {
            Ok(result) => result,
            Err(e) => {
                lock(&mistake).get_or_insert(e);
                return;
            }
        };
        if let Some(webhook) = &settings.webhook {
            notify_all(webhook, &mut [&mut result], scanner.budget());
        }
        let part = part(settings.format, &result, hosts, &context);
        let state = result.state;
        drop(result);
        // A reader gone away (`| head`) ends the writing, not the scans.
        let _ = lock(&stream).take(index, state, part);
    })?;
    clear_progress();
    if let Some(mistake) = lock(&mistake).take() {
        return Err(mistake);
    }
    let stream = stream.into_inner().unwrap_or_else(|e| e.into_inner());
    let exit_code = stream.tally().worst().exit_code();
    // --self-update-check: at most one extra line; never a change of the exit code.
    let notice = settings
        .self_update_check
        .then(|| crate::self_update::check::notice(settings, now, scanner.budget()))
        .flatten();
    // A reader gone away (`| head`) is no reason to change the verdict.
    let _ = stream.finish(notice.as_deref());
    Ok(Outcome {
        stdout: String::new(),
        exit_code,
    })
}

/// One notification per host whose state reaches the webhook level; a failed delivery is
/// reported on the host's output and never changes its state.
fn notify_all(
    webhook: &crate::notify::WebhookSettings,
    results: &mut [&mut ScanResult],
    budget: &Budget,
) {
    for result in results.iter_mut() {
        if !crate::notify::wanted(webhook, result) {
            continue;
        }
        // Deliveries come last and share what is left of the time budget.
        let left = budget.left();
        let outcome = if left < std::time::Duration::from_millis(100) {
            Err(format!(
                "not sent: the {} s time budget (--time-budget) was spent",
                budget.total.as_secs_f64()
            ))
        } else {
            crate::notify::deliver(webhook, result, budget)
        };
        if let Err(e) = &outcome {
            debug_log(&format!("webhook for {}: {e}", result.host));
        }
        result.webhook = Some(report::WebhookDelivery {
            delivered: outcome.is_ok(),
            error: outcome.err(),
        });
    }
}
