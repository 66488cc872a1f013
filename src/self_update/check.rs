//! `--self-update-check`: is there a newer release of this plugin?
//!
//! - At most one look a day: the time of the last look is kept in
//!   `<state dir>/self-update.json` (mode 0600) and compared with the run's clock (`COS_NOW`
//!   moves it). The time is written before the feed is asked, so a failing feed is asked
//!   again the next day, not on every run. Without a state directory there is no look at all.
//! - The feed's answer is kept in the feed cache (`<state dir>/feeds/`, the same files,
//!   validators and caps as the product's release feed, with a window of a day), so the line
//!   keeps appearing on every run until the plugin is upgraded, without asking again; a look
//!   that fails lets the last answer stand.
//! - One extra line while the newest published release is newer than the running program
//!   ([`add_line`] says where it goes in each format). Anything that goes wrong is silent
//!   (the reason is logged with `--debug`), and the exit code never depends on this.

use super::{owner, parse_feed, running_version};
use crate::budget::Budget;
use crate::clock::Now;
use crate::diagnostics::debug_log;
use crate::feeds::{Feed, FeedCache, Origin, within};
use crate::net::feed::Validators;
use crate::net::http::ClientOptions;
use crate::program::user_agent;
use crate::settings::manual::PROGRAM;
use crate::settings::{Format, Settings};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// How often the feed is asked at most.
pub const INTERVAL: Duration = Duration::from_secs(24 * 3600);
/// The file that remembers the last look, in the state directory.
pub const STAMP_FILE: &str = "self-update.json";
/// A look starts only with this much of the run's time budget left.
const MIN_LEFT: Duration = Duration::from_secs(1);
const FORMAT: &str = "check-storage-security self-update 1";
const MAX_STAMP: u64 = 4096;

/// What `self-update.json` holds.
#[derive(Serialize, Deserialize)]
struct Stamp {
    format: String,
    /// When the feed was last asked (or about to be).
    checked: Timestamp,
    /// How this installation is upgraded, found when a newer release was last seen: the
    /// package manager's command for a packaged binary.
    upgrade: Option<String>,
}

/// The extra line, when a newer release is known; `None` otherwise and on any failure.
pub fn notice(settings: &Settings, now: Now, budget: &Budget) -> Option<String> {
    look(settings, now, budget).unwrap_or_else(|e| {
        debug_log(&format!("self-update check: {e}"));
        None
    })
}

fn look(settings: &Settings, now: Now, budget: &Budget) -> Result<Option<String>, String> {
    let state = settings
        .scan
        .state_dir
        .as_deref()
        .ok_or("no state directory (--state-dir) to remember the last look in; not checked")?;
    let stamp_path = state.join(STAMP_FILE);
    let stamp = read_stamp(&stamp_path);
    let due = stamp
        .as_ref()
        .is_none_or(|s| !within(s.checked, now.0, INTERVAL));
    let cache = FeedCache::new(Some(state), INTERVAL, now.0, debug_log);
    let url = settings.self_update_url.as_str();
    let parse = |body: &[u8]| parse_feed(body).map(|release| release.version);
    let answer = if due {
        if budget.left() < MIN_LEFT {
            return Err("the run's time budget is spent; a later run looks".into());
        }
        write_stamp(&stamp_path, now.0, None).map_err(|e| {
            format!(
                "cannot record the look in {} ({e}); not checked",
                stamp_path.display()
            )
        })?;
        let options = ClientOptions {
            timeout: budget.step_timeout(settings.scan.timeout),
            pin: None,
            proxy: settings.scan.proxy.clone(),
            user_agent: user_agent(),
        };
        let fetch = |validators: Option<&Validators>| {
            crate::net::feed::fetch(url, None, validators, Feed::Releases.cap(), &options)
        };
        cache.get(Feed::Releases, url, false, &fetch, &parse)?
    } else {
        let fetch = |_: Option<&Validators>| Err("asked within the last day".to_string());
        cache.get(Feed::Releases, url, false, &fetch, &parse)?
    };
    if let Origin::Stale { error, .. } = &answer.origin {
        debug_log(&format!(
            "self-update check: {error}; the last answer stands in"
        ));
    }
    let newest = answer.value;
    let running = running_version();
    debug_log(&format!(
        "self-update check: newest release {newest}, running {running}{}",
        if due {
            ""
        } else {
            " (looked within the last day)"
        }
    ));
    if newest <= running {
        return Ok(None);
    }
    let command = match stamp.and_then(|s| s.upgrade).filter(|_| !due) {
        Some(command) => command,
        None => {
            let command = upgrade_command();
            if let Err(e) = write_stamp(&stamp_path, now.0, Some(&command)) {
                debug_log(&format!(
                    "self-update check: cannot record {STAMP_FILE} ({e})"
                ));
            }
            command
        }
    };
    Ok(Some(format!(
        "Plugin update: {PROGRAM} {newest} is available (installed {running}); upgrade with: \
         {command}"
    )))
}

/// How this installation is upgraded: its package manager's command, or `--upgrade-self`.
fn upgrade_command() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| owner::owner(&exe))
        .map(|o| o.command)
        .unwrap_or_else(|| format!("{PROGRAM} --upgrade-self"))
}

fn read_stamp(path: &Path) -> Option<Stamp> {
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = Vec::new();
    file.take(MAX_STAMP).read_to_end(&mut text).ok()?;
    let stamp: Stamp = serde_json::from_slice(&text).ok()?;
    (stamp.format == FORMAT).then_some(stamp)
}

fn write_stamp(path: &Path, checked: Timestamp, upgrade: Option<&str>) -> std::io::Result<()> {
    let stamp = Stamp {
        format: FORMAT.to_string(),
        checked,
        upgrade: upgrade.map(str::to_string),
    };
    crate::feeds::write_private(path, &stamp, &[])
}

/// Adds the line to the run's output: in the default format after the detail lines, before
/// the performance data; with `--format summary` after the tally. The machine formats keep
/// their documents as they are (a parser, a schema or a monitoring agent reads them), so the
/// line goes to stderr instead.
pub fn add_line(format: Format, stdout: String, line: &str) -> String {
    let at = match format {
        Format::Monitoring => stdout
            .trim_end_matches('\n')
            .rfind("\n|")
            .map(|i| i + 1)
            .unwrap_or(stdout.len()),
        Format::Summary => stdout.len(),
        Format::Metrics
        | Format::Otlp
        | Format::AgentLocal
        | Format::Json
        | Format::Sarif
        | Format::Junit => {
            eprintln!("{line}");
            return stdout;
        }
    };
    let mut out = String::with_capacity(stdout.len() + line.len() + 2);
    out.push_str(&stdout[..at]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(line);
    out.push('\n');
    out.push_str(&stdout[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_goes_before_the_perfdata_or_after_the_tally() {
        let monitoring = "OK: fine\nOpenCloud 4.0.8 on h, rating: A+\n|rating=5;3;1;0;5\n";
        assert_eq!(
            add_line(Format::Monitoring, monitoring.into(), "Plugin update: x"),
            "OK: fine\nOpenCloud 4.0.8 on h, rating: A+\nPlugin update: x\n|rating=5;3;1;0;5\n"
        );
        assert_eq!(
            add_line(Format::Summary, "HOST\n1 host(s): 1 OK\n".into(), "P"),
            "HOST\n1 host(s): 1 OK\nP\n"
        );
        let json = "[]\n".to_string();
        assert_eq!(add_line(Format::Json, json.clone(), "P"), json);
    }

    #[test]
    fn a_day_is_counted_by_the_run_clock() {
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        let then = t("2026-11-22T03:00:00Z");
        assert!(within(then, t("2026-11-22T03:00:00Z"), INTERVAL));
        assert!(within(then, t("2026-11-23T02:59:59Z"), INTERVAL));
        assert!(!within(then, t("2026-11-23T03:00:00Z"), INTERVAL));
        assert!(
            !within(then, t("2026-11-22T02:00:00Z"), INTERVAL),
            "a clock moved back looks again"
        );
    }
}
