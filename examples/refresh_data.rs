//! `make refresh-data`: refreshes the bundled release schedules and advisories in `assets/` from
//! their sources, for packagers and for hosts that cannot reach the feeds (air-gapped hosts rely
//! on the data inside the binary). An example, so it ships in no binary.
//!
//! ```text
//! cargo run --example refresh_data -- [--assets DIR] [--product opencloud|ocis]... [--today YYYY-MM-DD]
//!     [--releases-url URL] [--repo-advisories-url URL] [--global-advisories-url URL]
//!     [--proxy URL] [--timeout SECONDS]
//! ```
//!
//! Sources (each product in turn; `{repo}` and `{packages}` in an address are replaced by the
//! product's GitHub repository and Go module paths, so one address serves both products):
//! - releases: `https://api.github.com/repos/{repo}/releases?per_page=100` (the newest 100;
//!   drafts and pre-releases skipped), read with the plugin's own release-feed reader;
//! - repository advisories: `https://api.github.com/repos/{repo}/security-advisories?per_page=100`
//!   (some advisories are published only there, e.g. GHSA-gf4p-7p27-26w7);
//! - global advisories: `https://api.github.com/advisories?ecosystem=go&affects={packages}&per_page=100`;
//!   both read with the plugin's own GitHub advisory reader and written in the native format.
//!
//! Addresses can be set with the flags or `COS_REFRESH_RELEASES_URL`,
//! `COS_REFRESH_REPO_ADVISORIES_URL`, `COS_REFRESH_GLOBAL_ADVISORIES_URL`; `COS_PROXY` like
//! `--proxy`; `COS_NOW` (RFC 3339) pins "today" like `--today`. `GITHUB_TOKEN` raises GitHub's
//! rate limit; it is sent only to `https://api.github.com/` and never printed.
//!
//! The merge is conservative: the schedule's policy (tracks, `support_end`, the note) stays as
//! it is; each line's `current` moves up to the newest release of the line (never down); a line
//! newer than every line of the schedule is added from its x.y.0 release date, on the track of
//! the line before it, with a `REVIEW:` line on stderr (the feed cannot tell tracks apart); a
//! line older than the newest one that the schedule leaves out stays out (it was left out on
//! purpose). Advisories are matched by id and alias: a bundled advisory the feeds do not list is
//! kept, a new one is added, a known one gains new aliases and new fixes (the curated lower
//! bounds stay). `updated` becomes today. The files keep their layout, so a refresh without
//! upstream changes changes only `updated`.
//!
//! Every source is fetched and every new file checked with the plugin's own loaders before the
//! first file is replaced (atomically); any failure is one line on stderr naming the source and
//! the fix, exit status 1, and no file changed.

use jiff::civil::Date;
use semver::Version;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storage_security::atomic_file;
use storage_security::knowledge::advisories::{self, Advisory, AffectedRange};
use storage_security::knowledge::releases::ReleaseSchedule;
use storage_security::knowledge::update::parse_release_feed;
use storage_security::knowledge::{ProductFamily, Track, parse_version};
use storage_security::net::feed::{self, Fetched};
use storage_security::net::http::ClientOptions;

fn main() {
    let env = |name: &str| std::env::var(name).ok();
    let code = run(
        std::env::args_os().skip(1).collect(),
        &env,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    std::process::exit(code);
}

const USAGE: &str = "usage: cargo run --example refresh_data -- [--assets DIR] [--product opencloud|ocis]... \
[--today YYYY-MM-DD] [--releases-url URL] [--repo-advisories-url URL] [--global-advisories-url URL] \
[--proxy URL] [--timeout SECONDS]";

const DEFAULT_RELEASES: &str = "https://api.github.com/repos/{repo}/releases?per_page=100";
const DEFAULT_REPO_ADVISORIES: &str =
    "https://api.github.com/repos/{repo}/security-advisories?per_page=100";
const DEFAULT_GLOBAL_ADVISORIES: &str =
    "https://api.github.com/advisories?ecosystem=go&affects={packages}&per_page=100";

/// Where the token may go: GitHub's API only, never an address someone pointed a flag at.
const TOKEN_PREFIX: &str = "https://api.github.com/";

/// 100 releases with their notes and assets can exceed the plugin's 4 MiB release-feed cap.
const RELEASES_CAP: u64 = 16 * 1024 * 1024;
const ADVISORIES_CAP: u64 = 8 * 1024 * 1024;

/// Days an LTS line is supported after it opened (the schedule's documented policy).
const LTS_DAYS: i64 = 730;

/// A product the refresher knows: where its data lives and where it comes from.
#[derive(Clone, Copy)]
struct Product {
    family: ProductFamily,
    repo: &'static str,
    /// The Go module paths GitHub's advisory database files it under.
    packages: &'static str,
}

const PRODUCTS: [Product; 2] = [
    Product {
        family: ProductFamily::OpenCloud,
        repo: "opencloud-eu/opencloud",
        packages: "github.com/opencloud-eu/opencloud",
    },
    Product {
        family: ProductFamily::InfiniteScale,
        repo: "owncloud/ocis",
        packages: "github.com/owncloud/ocis,github.com/owncloud/ocis/v2",
    },
];

/// Runs the refresher; `env` reads environment variables. Returns the exit status: 0 done, 1 a
/// source or a file failed (nothing changed), 2 a usage error.
pub fn run(
    args: Vec<OsString>,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let config = match Config::parse(args, env) {
        Ok(Some(config)) => config,
        Ok(None) => {
            let _ = writeln!(out, "{USAGE}");
            return 0;
        }
        Err(message) => {
            let _ = writeln!(err, "refresh-data: {}\n{USAGE}", one_line(&message));
            return 2;
        }
    };
    match refresh(&config) {
        Ok(report) => {
            for line in &report.out {
                let _ = writeln!(out, "{line}");
            }
            for line in &report.err {
                let _ = writeln!(err, "{line}");
            }
            0
        }
        Err(failure) => {
            let _ = writeln!(err, "{failure}");
            1
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Settings

struct Config {
    assets: PathBuf,
    products: Vec<Product>,
    today: Date,
    releases_url: String,
    repo_advisories_url: String,
    global_advisories_url: String,
    options: ClientOptions,
    token: Option<String>,
}

impl Config {
    /// `None`: help was asked for.
    fn parse(
        args: Vec<OsString>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Config>, String> {
        use lexopt::prelude::*;
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let mut assets = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/assets"));
        let mut products: Vec<Product> = Vec::new();
        let mut today: Option<String> = None;
        let mut releases = set("COS_REFRESH_RELEASES_URL");
        let mut repo = set("COS_REFRESH_REPO_ADVISORIES_URL");
        let mut global = set("COS_REFRESH_GLOBAL_ADVISORIES_URL");
        let mut proxy = set("COS_PROXY");
        let mut timeout = Duration::from_secs(60);
        let mut parser = lexopt::Parser::from_args(args);
        let text = |value: OsString, flag: &str| {
            value
                .into_string()
                .map_err(|_| format!("{flag}: the value is not UTF-8"))
        };
        while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
            match arg {
                Short('h') | Long("help") => return Ok(None),
                Long("assets") => {
                    assets = PathBuf::from(parser.value().map_err(|e| e.to_string())?)
                }
                Long("product") => {
                    let value = text(parser.value().map_err(|e| e.to_string())?, "--product")?;
                    let product = PRODUCTS
                        .iter()
                        .find(|p| p.family.id() == value.trim().to_ascii_lowercase())
                        .ok_or_else(|| {
                            format!("--product {value:?} is not known: use opencloud or ocis")
                        })?;
                    if !products.iter().any(|p| p.family == product.family) {
                        products.push(*product);
                    }
                }
                Long("today") => {
                    today = Some(text(parser.value().map_err(|e| e.to_string())?, "--today")?)
                }
                Long("releases-url") => {
                    releases = Some(text(
                        parser.value().map_err(|e| e.to_string())?,
                        "--releases-url",
                    )?)
                }
                Long("repo-advisories-url") => {
                    repo = Some(text(
                        parser.value().map_err(|e| e.to_string())?,
                        "--repo-advisories-url",
                    )?)
                }
                Long("global-advisories-url") => {
                    global = Some(text(
                        parser.value().map_err(|e| e.to_string())?,
                        "--global-advisories-url",
                    )?)
                }
                Long("proxy") => {
                    proxy = Some(text(parser.value().map_err(|e| e.to_string())?, "--proxy")?)
                }
                Long("timeout") => {
                    let value = text(parser.value().map_err(|e| e.to_string())?, "--timeout")?;
                    let seconds: u64 = value
                        .trim()
                        .parse()
                        .ok()
                        .filter(|s| (1..=600).contains(s))
                        .ok_or_else(|| {
                            format!("--timeout {value:?} is not a number of seconds from 1 to 600")
                        })?;
                    timeout = Duration::from_secs(seconds);
                }
                _ => return Err(arg.unexpected().to_string()),
            }
        }
        if products.is_empty() {
            products = PRODUCTS.to_vec();
        }
        let today = match today {
            Some(text) => text
                .trim()
                .parse::<Date>()
                .map_err(|_| format!("--today {text:?} is not a date: write it as YYYY-MM-DD"))?,
            None => match set("COS_NOW") {
                Some(now) => now
                    .trim()
                    .parse::<jiff::Timestamp>()
                    .map_err(|_| {
                        format!("COS_NOW {now:?} is not an RFC 3339 time (2026-11-22T03:00:00Z)")
                    })?
                    .to_zoned(jiff::tz::TimeZone::UTC)
                    .date(),
                None => jiff::Timestamp::now()
                    .to_zoned(jiff::tz::TimeZone::UTC)
                    .date(),
            },
        };
        Ok(Some(Config {
            assets,
            products,
            today,
            releases_url: releases.unwrap_or_else(|| DEFAULT_RELEASES.into()),
            repo_advisories_url: repo.unwrap_or_else(|| DEFAULT_REPO_ADVISORIES.into()),
            global_advisories_url: global.unwrap_or_else(|| DEFAULT_GLOBAL_ADVISORIES.into()),
            options: ClientOptions {
                timeout: timeout.into(),
                pin: None,
                proxy,
                user_agent: format!(
                    "check-storage-security-refresh-data/{}",
                    env!("CARGO_PKG_VERSION")
                ),
            },
            token: set("GITHUB_TOKEN").map(|t| t.trim().to_string()),
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// Failures

/// Why the refresh stopped; printed as one line. Nothing has been written when it is made.
#[derive(Debug)]
struct Failure {
    source: String,
    problem: String,
    fix: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refresh-data: {}: {}; nothing was changed. Fix: {}",
            one_line(&self.source),
            one_line(&self.problem),
            one_line(&self.fix)
        )
    }
}

/// Messages of other libraries may span lines; the failure is one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One of the three sources of a product.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Releases,
    RepoAdvisories,
    GlobalAdvisories,
}

impl Source {
    fn describe(self, product: &Product) -> String {
        let name = product.family.display_name();
        match self {
            Source::Releases => format!("{name} releases"),
            Source::RepoAdvisories => format!("{name} repository advisories"),
            Source::GlobalAdvisories => format!("{name} advisories in GitHub's advisory database"),
        }
    }

    fn setting(self) -> &'static str {
        match self {
            Source::Releases => "--releases-url / COS_REFRESH_RELEASES_URL",
            Source::RepoAdvisories => "--repo-advisories-url / COS_REFRESH_REPO_ADVISORIES_URL",
            Source::GlobalAdvisories => {
                "--global-advisories-url / COS_REFRESH_GLOBAL_ADVISORIES_URL"
            }
        }
    }

    fn shape(self) -> &'static str {
        match self {
            Source::Releases => "a list of GitHub releases (GET /repos/{owner}/{repo}/releases)",
            Source::RepoAdvisories => {
                "a list of GitHub repository advisories (GET /repos/{owner}/{repo}/security-advisories)"
            }
            Source::GlobalAdvisories => "a list of GitHub advisories (GET /advisories)",
        }
    }

    /// What to do about a failed fetch.
    fn fix(self, problem: &str) -> String {
        let setting = self.setting();
        if problem.contains("answered HTTP 401") {
            "GITHUB_TOKEN was refused: set a valid token (it needs no scopes) or unset it".into()
        } else if problem.contains("answered HTTP 403") || problem.contains("answered HTTP 429") {
            "most likely GitHub's rate limit: set GITHUB_TOKEN (a token without scopes) or retry in an hour".into()
        } else if problem.contains("answered HTTP 404") {
            format!("check the address ({setting})")
        } else if problem.contains("answered HTTP") {
            format!("the source failed: retry later, or check the address ({setting})")
        } else if problem.contains("answered more than") {
            format!("the answer is far larger than expected: check the address ({setting})")
        } else {
            format!(
                "check the network, the proxy (--proxy / COS_PROXY) and the address ({setting})"
            )
        }
    }
}

fn expand(template: &str, product: &Product) -> String {
    template
        .replace("{repo}", product.repo)
        .replace("{packages}", product.packages)
}

// ---------------------------------------------------------------------------------------------
// The refresh

/// What to print once every file is written.
struct Report {
    out: Vec<String>,
    err: Vec<String>,
}

/// A file and its refreshed text.
struct Planned {
    path: PathBuf,
    old: String,
    new: String,
    changes: Vec<String>,
}

fn refresh(config: &Config) -> Result<Report, Failure> {
    // The bundled files first: a broken one stops the refresh before any request.
    let mut files = Vec::new();
    for product in &config.products {
        let dir = config.assets.join(product.family.id());
        let schedule = dir.join("release-schedule.json");
        let advisories = dir.join("advisories.json");
        files.push((
            *product,
            (read_asset(&schedule)?, schedule),
            (read_asset(&advisories)?, advisories),
        ));
    }
    // Every source, before anything is computed or written.
    let mut fetched = Vec::new();
    for (product, _, _) in &files {
        let releases_url = expand(&config.releases_url, product);
        let body = fetch(
            config,
            product,
            Source::Releases,
            &releases_url,
            RELEASES_CAP,
        )?;
        let releases = ReleaseFeed::read(&body).map_err(|problem| Failure {
            source: Source::Releases.describe(product),
            problem: format!("{releases_url} answered {problem}"),
            fix: format!(
                "the answer must be {}: check the address ({})",
                Source::Releases.shape(),
                Source::Releases.setting()
            ),
        })?;
        let mut feed_advisories = Vec::new();
        // The reviewed global database first: its ranges are normalised; the repository's own
        // advisories add what was published only there.
        for (source, template) in [
            (Source::GlobalAdvisories, &config.global_advisories_url),
            (Source::RepoAdvisories, &config.repo_advisories_url),
        ] {
            let url = expand(template, product);
            let body = fetch(config, product, source, &url, ADVISORIES_CAP)?;
            feed_advisories.extend(read_feed_advisories(&body, product, source, &url)?);
        }
        fetched.push((releases, feed_advisories));
    }
    let mut planned = Vec::new();
    let mut review = Vec::new();
    for ((product, schedule, advisories), (releases, feed_advisories)) in
        files.into_iter().zip(fetched)
    {
        planned.push(refresh_schedule(
            product,
            schedule,
            &releases,
            config.today,
            &mut review,
        )?);
        planned.push(refresh_advisories(
            product,
            advisories,
            feed_advisories,
            config.today,
            &mut review,
        )?);
    }
    // Stage every changed file, then rename them all: a failure while staging changes nothing.
    let mut staged = Vec::new();
    for file in planned.iter().filter(|f| f.new != f.old) {
        let stage = atomic_file::stage(&file.path, 0o644, |f| f.write_all(file.new.as_bytes()))
            .map_err(|e| Failure {
                source: file.path.display().to_string(),
                problem: format!("cannot be replaced: {e}"),
                fix: "make the assets directory writable (or pass --assets DIR)".into(),
            })?;
        staged.push((file.path.clone(), stage));
    }
    for (path, stage) in staged {
        stage.commit().map_err(|e| Failure {
            source: path.display().to_string(),
            problem: format!("cannot be replaced: {e}"),
            fix: "make the assets directory writable, then run the refresh again".into(),
        })?;
    }
    let mut out = Vec::new();
    for file in &planned {
        if file.new == file.old {
            out.push(format!("{}: unchanged", file.path.display()));
        } else {
            out.push(format!("{}:", file.path.display()));
            out.extend(file.changes.iter().map(|c| format!("  {c}")));
        }
    }
    Ok(Report { out, err: review })
}

fn read_asset(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure {
        source: path.display().to_string(),
        problem: format!("cannot be read ({e})"),
        fix: "run from the project's directory or pass --assets DIR (the directory holding opencloud/ and ocis/)".into(),
    })
}

fn fetch(
    config: &Config,
    product: &Product,
    source: Source,
    url: &str,
    cap: u64,
) -> Result<Vec<u8>, Failure> {
    let token = config
        .token
        .as_deref()
        .filter(|_| url.starts_with(TOKEN_PREFIX));
    let failed = |problem: String| Failure {
        source: source.describe(product),
        fix: source.fix(&problem),
        problem,
    };
    match feed::fetch(url, token, None, cap, &config.options) {
        Ok(Fetched::Document { body, .. }) => Ok(body),
        Ok(Fetched::NotModified { .. }) => Err(failed(format!(
            "{url} answered 304 Not Modified to an unconditional request"
        ))),
        Err(problem) => Err(failed(problem)),
    }
}

// ---------------------------------------------------------------------------------------------
// Releases

/// What the releases feed says: the newest release of every line (the plugin's own reader) and
/// when each published release came out.
struct ReleaseFeed {
    newest: Vec<Version>,
    published: BTreeMap<Version, Date>,
}

/// The members of a release the dates are read from.
#[derive(Deserialize)]
struct DatedRelease {
    tag_name: Option<String>,
    #[serde(default)]
    draft: Option<bool>,
    #[serde(default)]
    prerelease: Option<bool>,
    #[serde(default)]
    published_at: Option<String>,
}

/// An element of the list: a release, or anything else (skipped, as the plugin's reader does).
#[derive(Deserialize)]
#[serde(untagged)]
enum ReleaseItem {
    Release(DatedRelease),
    #[allow(dead_code)]
    Other(IgnoredAny),
}

impl ReleaseFeed {
    fn read(body: &[u8]) -> Result<ReleaseFeed, String> {
        let newest = parse_release_feed(body)?;
        // The plugin's reader has checked the shape; this pass only adds the dates.
        let items: Vec<ReleaseItem> = serde_json::from_slice(body).unwrap_or_default();
        let mut published = BTreeMap::new();
        for item in items {
            let ReleaseItem::Release(release) = item else {
                continue;
            };
            if release.draft == Some(true) || release.prerelease == Some(true) {
                continue;
            }
            let Some(version) = release.tag_name.as_deref().and_then(parse_version) else {
                continue;
            };
            if !version.pre.is_empty() {
                continue;
            }
            if let Some(date) = release.published_at.as_deref().and_then(utc_date) {
                published.insert(version, date);
            }
        }
        Ok(ReleaseFeed { newest, published })
    }

    fn newest_of(&self, line: (u64, u64)) -> Option<&Version> {
        self.newest.iter().find(|v| (v.major, v.minor) == line)
    }

    /// When a line opened: its x.y.0 release, else (flagged) its earliest dated release.
    fn opened(&self, line: (u64, u64)) -> Option<(Date, Version, bool)> {
        let first = Version::new(line.0, line.1, 0);
        if let Some(date) = self.published.get(&first) {
            return Some((*date, first, true));
        }
        self.published
            .iter()
            .filter(|(v, _)| (v.major, v.minor) == line)
            .min_by_key(|(v, _)| (*v).clone())
            .map(|(v, d)| (*d, v.clone(), false))
    }
}

fn utc_date(text: &str) -> Option<Date> {
    let at: jiff::Timestamp = text.trim().parse().ok()?;
    Some(at.to_zoned(jiff::tz::TimeZone::UTC).date())
}

fn line_text(line: (u64, u64)) -> String {
    format!("{}.{}", line.0, line.1)
}

/// The schedule as the refresh changes it, entry by entry (same order as the file).
struct WorkEntry {
    line: (u64, u64),
    track: Track,
    /// `None`: the file says "unknown".
    opened: Option<Date>,
    support_end: Option<Date>,
    support_end_unknown: bool,
}

fn refresh_schedule(
    product: Product,
    (old, path): (String, PathBuf),
    feed: &ReleaseFeed,
    today: Date,
    review: &mut Vec<String>,
) -> Result<Planned, Failure> {
    let family = product.family;
    let label = path.display().to_string();
    let broken = |problem: String| Failure {
        source: label.clone(),
        problem,
        fix: "repair the file by hand (git diff / git checkout it), then refresh again".into(),
    };
    let schedule =
        ReleaseSchedule::parse(&old, family).map_err(|e| broken(format!("does not load ({e})")))?;
    let mut raw: J =
        serde_json::from_str(&old).map_err(|e| broken(format!("is not JSON ({e})")))?;
    let key = if raw.get("entries").is_some() {
        "entries"
    } else {
        "lines"
    };
    let mut changes = Vec::new();
    let mut work: Vec<WorkEntry> = schedule
        .entries
        .iter()
        .map(|e| WorkEntry {
            line: e.line,
            track: e.track,
            opened: e.opened,
            support_end: e.support_end,
            support_end_unknown: e.support_end_unknown,
        })
        .collect();
    // A line the file dates "unknown" that the releases now date: a person decides, since
    // the predecessor's support end moves with it.
    for e in work.iter().filter(|e| e.opened.is_none()) {
        if let Some((opened, _, _)) = feed.opened(e.line) {
            review.push(format!(
                "REVIEW: {label}: line {} ({}) has \"opened\": \"unknown\" but the releases date it {opened}: set it, and the previous {} line's support_end, by hand",
                line_text(e.line),
                e.track,
                e.track
            ));
        }
    }
    {
        let Some(J::Arr(entries)) = raw.get_mut(key) else {
            return Err(broken(format!("has no `{key}` list")));
        };
        // The parser keeps every entry in file order, so the lists line up.
        for (entry, parsed) in entries.iter_mut().zip(&schedule.entries) {
            if let Some(newest) = feed.newest_of(parsed.line)
                && *newest > parsed.current
            {
                entry.set("current", J::Str(newest.to_string()));
                changes.push(format!(
                    "line {} ({}): current {} -> {newest}",
                    parsed.line_text(),
                    parsed.track,
                    parsed.current
                ));
            }
        }
        let newest_line = schedule.newest_line().unwrap_or((0, 0));
        let left_out: Vec<String> = feed
            .newest
            .iter()
            .map(|v| (v.major, v.minor))
            .filter(|l| *l < newest_line && schedule.entries_for_line(*l).is_empty())
            .map(line_text)
            .collect();
        if !left_out.is_empty() {
            review.push(format!(
                "note: {label}: the releases list lines the schedule leaves out on purpose (older than its newest line {}): {}; not added",
                line_text(newest_line),
                left_out.join(", ")
            ));
        }
        for newest in feed
            .newest
            .iter()
            .filter(|v| (v.major, v.minor) > newest_line)
        {
            let line = (newest.major, newest.minor);
            let Some((opened, first, is_first)) = feed.opened(line) else {
                review.push(format!(
                    "REVIEW: {label}: line {} ({newest}) is new but the releases give it no date; not added: add it by hand",
                    line_text(line)
                ));
                continue;
            };
            if !is_first {
                review.push(format!(
                    "REVIEW: {label}: line {} has no {}.0 in the releases read; its opened date {opened} is that of {first}: confirm it",
                    line_text(line),
                    line_text(line)
                ));
            }
            // The line before it decides the track; rolling first when it had several.
            let previous = work.iter().filter(|e| e.line < line).map(|e| e.line).max();
            let track = previous
                .and_then(|p| work.iter().filter(|e| e.line == p).map(|e| e.track).min())
                .unwrap_or(Track::Rolling);
            let support_end = (track == Track::Lts)
                .then(|| opened.checked_add(jiff::Span::new().days(LTS_DAYS)).ok())
                .flatten();
            // Its predecessor on the track was supported until a successor opens: now.
            if track != Track::Lts
                && let Some(index) = (0..work.len())
                    .filter(|&i| work[i].track == track && work[i].line < line)
                    .max_by_key(|&i| work[i].line)
            {
                let predecessor = &mut work[index];
                if predecessor.support_end.is_none()
                    && !predecessor.support_end_unknown
                    && predecessor.opened.is_none_or(|p| opened > p)
                {
                    predecessor.support_end = Some(opened);
                    entries[index].set("support_end", J::Str(opened.to_string()));
                    changes.push(format!(
                        "line {} ({track}): support_end null -> {opened}",
                        line_text(predecessor.line)
                    ));
                    review.push(format!(
                        "REVIEW: {label}: line {} ({track}) now ends support on {opened}, when {} opened (policy: a {track} line is supported until the next {track} line opens); confirm",
                        line_text(predecessor.line),
                        line_text(line)
                    ));
                }
            }
            entries.push(J::Obj(vec![
                ("line".into(), J::Str(line_text(line))),
                ("track".into(), J::Str(track.as_str().into())),
                ("opened".into(), J::Str(opened.to_string())),
                ("current".into(), J::Str(newest.to_string())),
                (
                    "support_end".into(),
                    support_end.map_or(J::Null, |d| J::Str(d.to_string())),
                ),
            ]));
            work.push(WorkEntry {
                line,
                track,
                opened: Some(opened),
                support_end,
                support_end_unknown: false,
            });
            changes.push(format!(
                "line {} added: {track}, opened {opened}, current {newest}",
                line_text(line)
            ));
            review.push(format!(
                "REVIEW: {label}: new line {} added on the {track} track (copied from line {}; the releases cannot tell tracks apart): confirm its track against the release notes (add a second entry if it is also production or lts) and confirm support_end ({})",
                line_text(line),
                previous.map_or_else(|| "none".to_string(), line_text),
                support_end.map_or_else(|| "null: until its successor opens".to_string(), |d| d.to_string())
            ));
        }
    }
    set_updated(
        &mut raw,
        Some(schedule.updated),
        today,
        &mut changes,
        review,
        &label,
    );
    let new = render(&raw, 2);
    ReleaseSchedule::parse(&new, family).map_err(|e| Failure {
        source: label.clone(),
        problem: format!("the refreshed schedule would not load ({e})"),
        fix: "look at the releases the feed lists and update the file by hand".into(),
    })?;
    Ok(Planned {
        path,
        old,
        new,
        changes,
    })
}

/// `updated` becomes today; never earlier than the date the file already claims.
fn set_updated(
    raw: &mut J,
    old: Option<Date>,
    today: Date,
    changes: &mut Vec<String>,
    review: &mut Vec<String>,
    label: &str,
) {
    let date = match old {
        Some(old) if old > today => {
            review.push(format!(
                "note: {label}: `updated` {old} is after today ({today}); kept"
            ));
            old
        }
        _ => today,
    };
    if old != Some(date) {
        changes.push(format!(
            "updated {} -> {date}",
            old.map_or_else(|| "(none)".to_string(), |d| d.to_string())
        ));
    }
    raw.insert_after("updated", &["product", "_note"], J::Str(date.to_string()));
}

// ---------------------------------------------------------------------------------------------
// Advisories

/// An advisory of a feed, as the plugin read it, with the members only the native file keeps.
struct FeedAdvisory {
    advisory: Advisory,
    extra: Extra,
    source: Source,
}

/// Members of a GitHub advisory the plugin does not read but the native file records.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Extra {
    ghsa_id: Option<String>,
    published_at: Option<String>,
    description: Option<String>,
    cvss: Option<ExtraCvss>,
    cvss_severities: Option<ExtraCvssSeverities>,
    cwes: Option<Vec<ExtraCwe>>,
    cwe_ids: Option<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ExtraCvss {
    vector_string: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ExtraCvssSeverities {
    cvss_v3: Option<ExtraCvss>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ExtraCwe {
    cwe_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ExtraItem {
    Known(Extra),
    #[allow(dead_code)]
    Other(IgnoredAny),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ExtraDocument {
    List(Vec<ExtraItem>),
    One(Extra),
}

impl Extra {
    fn cvss_v3(&self) -> Option<&str> {
        [
            self.cvss.as_ref(),
            self.cvss_severities
                .as_ref()
                .and_then(|c| c.cvss_v3.as_ref()),
        ]
        .into_iter()
        .flatten()
        .filter_map(|c| c.vector_string.as_deref())
        .find(|v| v.starts_with("CVSS:3"))
    }

    fn cwes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let listed = self.cwes.iter().flatten().filter_map(|c| c.cwe_id.clone());
        for cwe in listed.chain(self.cwe_ids.iter().flatten().cloned()) {
            let cwe = cwe.trim().to_string();
            if !cwe.is_empty() && !out.contains(&cwe) {
                out.push(cwe);
            }
        }
        out
    }

    /// The first paragraph of the description that is not a heading, in one line.
    fn summary(&self) -> Option<String> {
        let mut paragraph: Vec<&str> = Vec::new();
        for line in self.description.as_deref()?.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                if paragraph.is_empty() {
                    continue;
                }
                break;
            }
            paragraph.push(line);
        }
        let text = one_line(&paragraph.join(" ").replace("**", ""));
        if text.is_empty() {
            return None;
        }
        const MAX: usize = 400;
        Some(if text.chars().count() > MAX {
            let cut: String = text.chars().take(MAX - 3).collect();
            format!("{}...", cut.trim_end())
        } else {
            text
        })
    }
}

fn read_feed_advisories(
    body: &[u8],
    product: &Product,
    source: Source,
    url: &str,
) -> Result<Vec<FeedAdvisory>, Failure> {
    let failed = |problem: String| Failure {
        source: source.describe(product),
        problem: format!("{url} answered {problem}"),
        fix: format!(
            "the answer must be {}: check the address ({})",
            source.shape(),
            source.setting()
        ),
    };
    let text = std::str::from_utf8(body).map_err(|_| failed("a body that is not UTF-8".into()))?;
    // Only GitHub's shapes: a list, or one advisory with `ghsa_id`. The plugin's reader also
    // takes native and OSV documents, which are not what these addresses answer.
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('[') || trimmed.starts_with('{')) {
        return Err(failed("something that is not JSON".into()));
    }
    let list = advisories::parse_document(text, product.family)
        .map_err(|e| failed(format!("something the advisory reader refuses ({e})")))?;
    let mut extras: BTreeMap<String, Extra> = BTreeMap::new();
    let items = match serde_json::from_str::<ExtraDocument>(text) {
        Ok(ExtraDocument::List(items)) => items,
        Ok(ExtraDocument::One(extra)) => vec![ExtraItem::Known(extra)],
        Err(_) => Vec::new(),
    };
    for item in items {
        if let ExtraItem::Known(extra) = item
            && let Some(id) = extra.ghsa_id.clone()
        {
            extras
                .entry(id.trim().to_ascii_uppercase())
                .or_insert(extra);
        }
    }
    Ok(list
        .into_iter()
        .map(|advisory| FeedAdvisory {
            extra: extras
                .remove(&advisory.id.to_ascii_uppercase())
                .unwrap_or_default(),
            advisory,
            source,
        })
        .collect())
}

/// The identifiers of a native entry as written: `id`, `aliases`, `cve`, `cve_id`.
fn entry_identifiers(entry: &J) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for key in ["id", "cve", "cve_id"] {
        if let Some(text) = entry.get(key).and_then(J::as_str) {
            ids.insert(text.trim().to_ascii_uppercase());
        }
    }
    if let Some(J::Arr(aliases)) = entry.get("aliases") {
        for alias in aliases.iter().filter_map(J::as_str) {
            ids.insert(alias.trim().to_ascii_uppercase());
        }
    }
    ids.remove("");
    ids
}

fn advisory_identifiers(advisory: &Advisory) -> Vec<String> {
    std::iter::once(&advisory.id)
        .chain(&advisory.aliases)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn refresh_advisories(
    product: Product,
    (old, path): (String, PathBuf),
    feed: Vec<FeedAdvisory>,
    today: Date,
    review: &mut Vec<String>,
) -> Result<Planned, Failure> {
    let family = product.family;
    let label = path.display().to_string();
    let broken = |problem: String| Failure {
        source: label.clone(),
        problem,
        fix: "repair the file by hand (git diff / git checkout it), then refresh again".into(),
    };
    let bundled = advisories::parse_document(&old, family)
        .map_err(|e| broken(format!("does not load ({e})")))?;
    let mut raw: J =
        serde_json::from_str(&old).map_err(|e| broken(format!("is not JSON ({e})")))?;
    let old_updated = raw
        .get("updated")
        .and_then(J::as_str)
        .and_then(|d| d.parse::<Date>().ok());
    let mut changes = Vec::new();
    let mut added: Vec<String> = Vec::new();
    {
        let Some(J::Arr(entries)) = raw.get_mut("advisories") else {
            return Err(broken("has no `advisories` list".into()));
        };
        let mut known: Vec<BTreeSet<String>> = entries.iter().map(entry_identifiers).collect();
        // Identifiers already handled in this refresh: a later feed's copy of an advisory
        // (the repository's, after the global database's) is the same advisory.
        let mut handled: BTreeSet<String> = BTreeSet::new();
        for item in feed {
            let ids = advisory_identifiers(&item.advisory);
            let upper: Vec<String> = ids.iter().map(|i| i.to_ascii_uppercase()).collect();
            if upper.iter().any(|i| handled.contains(i)) {
                continue;
            }
            handled.extend(upper.iter().cloned());
            let found = known
                .iter()
                .position(|set| upper.iter().any(|i| set.contains(i)));
            match found {
                Some(index) => {
                    let entry = &mut entries[index];
                    let id = entry
                        .get("id")
                        .and_then(J::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let Some(current) = bundled.iter().find(|b| b.id.eq_ignore_ascii_case(&id))
                    else {
                        review.push(format!(
                            "note: {label}: {id} is disabled or has no usable range in the file; the feed's copy ({}) is not applied",
                            item.advisory.id
                        ));
                        continue;
                    };
                    // New aliases (a CVE assigned later, the GHSA of a GO- entry).
                    let new_aliases: Vec<String> = ids
                        .iter()
                        .filter(|i| !known[index].contains(&i.to_ascii_uppercase()))
                        .cloned()
                        .collect();
                    if !new_aliases.is_empty() {
                        let mut aliases = match entry.get("aliases") {
                            Some(J::Arr(list)) => list.clone(),
                            _ => Vec::new(),
                        };
                        aliases.extend(new_aliases.iter().map(|a| J::Str(a.clone())));
                        entry.insert_after("aliases", &["id"], J::Arr(aliases));
                        known[index].extend(new_aliases.iter().map(|a| a.to_ascii_uppercase()));
                        changes.push(format!("{id}: aliases + {}", new_aliases.join(", ")));
                    }
                    if let Some(ranges) =
                        merge_ranges(&current.ranges, &item.advisory.ranges, review, &label, &id)
                    {
                        changes.push(format!(
                            "{id}: affected {} -> {}",
                            describe_ranges(&current.ranges),
                            describe_ranges(&ranges)
                        ));
                        review.push(format!(
                            "REVIEW: {label}: {id} has new fixed ranges from the {} ({}): confirm them and the summary",
                            source_name(item.source),
                            describe_ranges(&ranges)
                        ));
                        write_ranges(entry, &ranges);
                    }
                }
                None => {
                    let entry = native_entry(&product, &item, today);
                    changes.push(format!(
                        "{} added ({}, affected {})",
                        item.advisory.id,
                        item.advisory.severity.map_or("no severity", |s| s.as_str()),
                        describe_ranges(&item.advisory.ranges)
                    ));
                    review.push(format!(
                        "REVIEW: {label}: new advisory {} added from the {}: check its ranges and summary against the advisory text",
                        item.advisory.id,
                        source_name(item.source)
                    ));
                    known.push(entry_identifiers(&entry));
                    added.push(item.advisory.id.clone());
                    entries.push(entry);
                }
            }
        }
    }
    set_updated(&mut raw, old_updated, today, &mut changes, review, &label);
    let new = render(&raw, 4);
    let check = advisories::parse_document(&new, family).map_err(|e| Failure {
        source: label.clone(),
        problem: format!("the refreshed advisories would not load ({e})"),
        fix: "look at the advisories the feeds list and update the file by hand".into(),
    })?;
    let ids: BTreeSet<String> = check.iter().map(|a| a.id.to_ascii_uppercase()).collect();
    if let Some(lost) = bundled
        .iter()
        .map(|a| &a.id)
        .chain(&added)
        .find(|id| !ids.contains(&id.to_ascii_uppercase()))
    {
        return Err(Failure {
            source: label,
            problem: format!("the refreshed advisories would not list {lost}"),
            fix: "look at the advisories the feeds list and update the file by hand".into(),
        });
    }
    Ok(Planned {
        path,
        old,
        new,
        changes,
    })
}

fn source_name(source: Source) -> &'static str {
    match source {
        Source::Releases => "releases",
        Source::RepoAdvisories => "repository advisories",
        Source::GlobalAdvisories => "GitHub advisory database",
    }
}

/// The upper bound of a range, by which ranges are matched: `(fixed, last_affected)`.
fn upper(range: &AffectedRange) -> (Option<&Version>, Option<&Version>) {
    (range.fixed.as_ref(), range.last_affected.as_ref())
}

/// The release line a range's fix (or last affected release) belongs to.
fn fix_line(range: &AffectedRange) -> Option<(u64, u64)> {
    range
        .fixed
        .as_ref()
        .or(range.last_affected.as_ref())
        .map(|v| (v.major, v.minor))
}

/// The bundled ranges with what the feed adds: a fix the file does not know in a line it knows
/// replaces that line's fix (the curated lower bound stays); a range of a line it does not know
/// is added; a fix for a range the file has as unfixed closes it. Nothing is removed, and lower
/// bounds are never taken from the feed for a known range (GitHub writes "from the beginning"
/// where the file names the first release). `None`: nothing changes.
fn merge_ranges(
    bundled: &[AffectedRange],
    feed: &[AffectedRange],
    review: &mut Vec<String>,
    label: &str,
    id: &str,
) -> Option<Vec<AffectedRange>> {
    let mut out = bundled.to_vec();
    let mut changed = false;
    for range in feed {
        if out.iter().any(|b| upper(b) == upper(range)) {
            continue;
        }
        let line = fix_line(range);
        if let Some(line) = line
            && let Some(known) = out.iter_mut().find(|b| fix_line(b) == Some(line))
        {
            known.fixed = range.fixed.clone();
            known.last_affected = range.last_affected.clone();
            changed = true;
            continue;
        }
        if line.is_some()
            && let Some(open) = out
                .iter_mut()
                .find(|b| fix_line(b).is_none() && b.introduced == range.introduced)
        {
            open.fixed = range.fixed.clone();
            open.last_affected = range.last_affected.clone();
            changed = true;
            continue;
        }
        if line.is_none() && out.iter().any(|b| b.introduced == range.introduced) {
            review.push(format!(
                "REVIEW: {label}: {id}: the feed says the range from {} is not fixed, the file names a fix; the file's range is kept",
                range
                    .introduced
                    .as_ref()
                    .map_or_else(|| "the beginning".to_string(), Version::to_string)
            ));
            continue;
        }
        out.push(range.clone());
        changed = true;
    }
    if !changed {
        return None;
    }
    sort_ranges(&mut out);
    Some(out)
}

/// Ranges in the order of their fixes (unfixed ones last), as the bundled file lists them.
fn sort_ranges(ranges: &mut [AffectedRange]) {
    ranges.sort_by(|a, b| {
        let key = |r: &AffectedRange| {
            (
                r.fixed.is_none() && r.last_affected.is_none(),
                r.fixed.clone().or_else(|| r.last_affected.clone()),
                r.introduced.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
}

fn describe_ranges(ranges: &[AffectedRange]) -> String {
    let text: Vec<String> = ranges
        .iter()
        .map(|r| {
            let from = r
                .introduced
                .as_ref()
                .map_or_else(|| "0".to_string(), Version::to_string);
            match (&r.fixed, &r.last_affected) {
                (Some(fixed), _) => format!("[{from}, {fixed})"),
                (None, Some(last)) => format!("[{from}, {last}]"),
                (None, None) => format!("[{from}, unfixed)"),
            }
        })
        .collect();
    text.join(" ")
}

fn version_or_null(v: Option<&Version>) -> J {
    v.map_or(J::Null, |v| J::Str(v.to_string()))
}

fn range_json(range: &AffectedRange) -> J {
    let mut members = vec![(
        "introduced".to_string(),
        version_or_null(range.introduced.as_ref()),
    )];
    if range.fixed.is_some() || range.last_affected.is_none() {
        members.push(("fixed".into(), version_or_null(range.fixed.as_ref())));
    }
    if let Some(last) = &range.last_affected {
        members.push(("last_affected".into(), J::Str(last.to_string())));
    }
    J::Obj(members)
}

/// Writes the ranges into a native entry: the first as its own `introduced` / `fixed`, all of
/// them as `ranges` when there are several (or the entry already lists `ranges`).
fn write_ranges(entry: &mut J, ranges: &[AffectedRange]) {
    let Some(first) = ranges.first() else { return };
    let J::Obj(first_members) = range_json(first) else {
        return;
    };
    for key in ["introduced", "fixed", "last_affected"] {
        if !first_members.iter().any(|(k, _)| k == key) {
            entry.remove(key);
        }
    }
    let mut after = "source";
    for (key, value) in first_members {
        entry.insert_after(&key, &[after, "url", "published", "severity"], value);
        after = match key.as_str() {
            "introduced" => "introduced",
            "fixed" => "fixed",
            _ => "last_affected",
        };
    }
    if ranges.len() > 1 || entry.get("ranges").is_some() {
        let list = J::Arr(ranges.iter().map(range_json).collect());
        entry.insert_after("ranges", &["last_affected", "fixed", "introduced"], list);
    }
}

/// A new advisory in the native format, members in the order of the bundled entries.
fn native_entry(product: &Product, item: &FeedAdvisory, today: Date) -> J {
    let a = &item.advisory;
    let mut entry = J::Obj(vec![
        ("id".into(), J::Str(a.id.clone())),
        (
            "aliases".into(),
            J::Arr(a.aliases.iter().map(|x| J::Str(x.clone())).collect()),
        ),
        ("title".into(), J::Str(a.summary.clone())),
        (
            "summary".into(),
            J::Str(item.extra.summary().unwrap_or_else(|| a.summary.clone())),
        ),
    ]);
    if let Some(severity) = a.severity {
        entry.set("severity", J::Str(severity.as_str().into()));
    }
    if let Some(vector) = item.extra.cvss_v3() {
        entry.set("cvss_v3", J::Str(vector.into()));
    }
    match item.extra.cwes().as_slice() {
        [] => {}
        [one] => entry.set("cwe", J::Str(one.clone())),
        many => entry.set("cwe", J::Arr(many.iter().cloned().map(J::Str).collect())),
    }
    if let Some(date) = item.extra.published_at.as_deref().and_then(utc_date) {
        entry.set("published", J::Str(date.to_string()));
    }
    if let Some(url) = &a.url {
        entry.set("url", J::Str(url.clone()));
    }
    let source = match item.source {
        Source::RepoAdvisories => format!(
            "{} repository advisory (GitHub /repos/{}/security-advisories), refreshed {today}",
            product.family.display_name(),
            product.repo
        ),
        _ => format!(
            "GitHub advisory database (GET /advisories, {}), refreshed {today}",
            product.packages
        ),
    };
    entry.set("source", J::Str(source));
    let mut ranges = a.ranges.clone();
    sort_ranges(&mut ranges);
    write_ranges(&mut entry, &ranges);
    entry
}

// ---------------------------------------------------------------------------------------------
// JSON that keeps its member order, written in the layout of the bundled files

/// A JSON value whose objects keep their members in file order (serde_json's map sorts them).
#[derive(Clone, Debug, PartialEq)]
enum J {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    fn get(&self, key: &str) -> Option<&J> {
        match self {
            J::Obj(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut J> {
        match self {
            J::Obj(members) => members.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Replaces the member's value, or appends the member.
    fn set(&mut self, key: &str, value: J) {
        self.insert_after(key, &[], value);
    }

    /// Replaces the member's value in place, or inserts the member after the first of `after`
    /// present (appended when none is).
    fn insert_after(&mut self, key: &str, after: &[&str], value: J) {
        let J::Obj(members) = self else { return };
        if let Some(slot) = members.iter_mut().find(|(k, _)| k == key) {
            slot.1 = value;
            return;
        }
        let at = after
            .iter()
            .find_map(|a| members.iter().position(|(k, _)| k == a))
            .map_or(members.len(), |i| i + 1);
        members.insert(at, (key.to_string(), value));
    }

    fn remove(&mut self, key: &str) {
        if let J::Obj(members) = self {
            members.retain(|(k, _)| k != key);
        }
    }

    fn is_container(&self) -> bool {
        matches!(self, J::Arr(_) | J::Obj(_))
    }
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = J;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E: de::Error>(self) -> Result<J, E> {
                Ok(J::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<J, E> {
                Ok(J::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<J, E> {
                Ok(J::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<J, E> {
                Ok(J::Num(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<J, E> {
                Ok(J::Num(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<J, E> {
                serde_json::Number::from_f64(v)
                    .map(J::Num)
                    .ok_or_else(|| E::custom("not a finite number"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<J, E> {
                Ok(J::Str(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<J, E> {
                Ok(J::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(J::Arr(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
                let mut members = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, J>()? {
                    members.push((key, value));
                }
                Ok(J::Obj(members))
            }
        }
        d.deserialize_any(V)
    }
}

/// The bundled files' layout: two spaces per level; an object at depth `compact_from` or deeper
/// on one line (`{"a": 1, "b": 2}`); a list of plain values on one line, a list holding lists
/// or objects one element per line; a final newline.
fn render(value: &J, compact_from: usize) -> String {
    let mut out = String::new();
    write_pretty(value, 0, compact_from, &mut out);
    out.push('\n');
    out
}

fn write_pretty(value: &J, depth: usize, compact_from: usize, out: &mut String) {
    let indent = |n: usize| "  ".repeat(n);
    match value {
        J::Arr(items) if depth < compact_from && items.iter().any(J::is_container) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&indent(depth + 1));
                write_pretty(item, depth + 1, compact_from, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&indent(depth));
            out.push(']');
        }
        J::Obj(members) if depth < compact_from && !members.is_empty() => {
            out.push_str("{\n");
            for (i, (key, item)) in members.iter().enumerate() {
                out.push_str(&indent(depth + 1));
                write_string(key, out);
                out.push_str(": ");
                write_pretty(item, depth + 1, compact_from, out);
                out.push_str(if i + 1 < members.len() { ",\n" } else { "\n" });
            }
            out.push_str(&indent(depth));
            out.push('}');
        }
        _ => write_inline(value, out),
    }
}

fn write_inline(value: &J, out: &mut String) {
    match value {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(n) => out.push_str(&n.to_string()),
        J::Str(s) => write_string(s, out),
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_inline(item, out);
            }
            out.push(']');
        }
        J::Obj(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(key, out);
                out.push_str(": ");
                write_inline(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(text: &str, out: &mut String) {
    out.push_str(&serde_json::to_string(text).expect("a string serialises"));
}
