//! Feed answers cached in the state directory (issue 9): a fresh answer is reused without a
//! request, a stale one is revalidated with its `ETag`, and stands in (said so) when the feed
//! fails; concurrent runs share the cache safely, a corrupt file is ignored, the token is never
//! written; and hostile feed answers cost a few MiB, not hundreds. The clock is moved with
//! `COS_NOW`, so nothing waits for a window to pass.

use crate::support::feed::{Reply, releases_body};
use crate::support::plugin::{self, NOW, Run};
use crate::support::{FakeInstance, FeedServer};
use serde_json::Value;
use std::path::{Path, PathBuf};

const TAGS: &[&str] = &["v8.2.0", "v7.2.5", "v4.0.9"];
const ETAG: &str = "\"releases-v1\"";
const LAST_MODIFIED: &str = "Sun, 22 Nov 2026 02:00:00 GMT";
const UPDATE_LINE: &str =
    "Update check (auto, installed 4.0.8): 4.0.9 available on the lts track; newest release 8.2.0";
/// Two hours after `NOW`: past the default window of one hour.
const LATER: &str = "2026-11-22T05:00:00Z";

/// The scan of a healthy 4.0.8 with the update check on, the feed cache in `state`.
struct Setup {
    fake: FakeInstance,
    state: PathBuf,
}

impl Setup {
    fn new(name: &str) -> Setup {
        Setup {
            fake: FakeInstance::start(plugin::healthy("4.0.8")),
            state: plugin::scratch(&format!("{name}-state")),
        }
    }

    fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut args = vec!["-H".to_string(), self.fake.host_port()];
        args.extend(plugin::hermetic(&self.fake.ca_file()));
        args.extend(["--update-source".to_string(), "auto".to_string()]);
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    fn env<'a>(&'a self, now: &'a str, more: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut env = vec![
            ("COS_NOW", now),
            ("COS_STATE_DIR", self.state.to_str().unwrap()),
        ];
        env.extend_from_slice(more);
        env
    }

    /// One run at `now` against the release feed `url`.
    fn run(&self, name: &str, now: &str, url: &str, extra: &[&str]) -> Run {
        let args = self.args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        plugin::run(name, &args, &self.env(now, &[("COS_RELEASES_URL", url)]))
    }

    /// The cache files (the `feeds` directory's entries).
    fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.state.join("feeds"))
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    }
}

/// The header and the body of a cache file, both parsed as JSON.
fn parse_cache_file(path: &Path) -> (Value, Value) {
    let bytes = std::fs::read(path).unwrap();
    let newline = bytes.iter().position(|b| *b == b'\n').expect("header line");
    let header: Value = serde_json::from_slice(&bytes[..newline]).expect("header parses");
    let body: Value = serde_json::from_slice(&bytes[newline + 1..]).expect("body parses");
    (header, body)
}

#[test]
fn two_runs_within_the_window_ask_the_feed_once() {
    let setup = Setup::new("cache-fresh");
    let feed = FeedServer::replies(vec![Reply::new(200, releases_body(TAGS)).etag(ETAG)]);
    let url = feed.url("/releases");
    for (n, now) in [NOW, NOW, "2026-11-22T03:59:59Z"].iter().enumerate() {
        let run = setup.run(&format!("cache-fresh-{n}"), now, &url, &[]);
        assert_eq!(run.code, 0, "{}", run.stdout);
        assert!(run.has_line(UPDATE_LINE), "run {n}: {}", run.stdout);
    }
    assert_eq!(feed.requests().len(), 1, "{:?}", feed.requests());
    assert_eq!(setup.files().len(), 1);

    // A window of 0 turns the cache off: asked every time, nothing written.
    let off = Setup::new("cache-off");
    for n in 0..2 {
        let run = off.run(
            &format!("cache-off-{n}"),
            NOW,
            &url,
            &["--feed-cache-ttl", "0"],
        );
        assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    }
    assert_eq!(feed.requests().len(), 3);
    assert!(off.files().is_empty(), "{:?}", off.files());
}

#[test]
fn a_stale_answer_is_revalidated_with_its_etag() {
    let setup = Setup::new("cache-revalidate");
    let feed = FeedServer::replies(vec![
        Reply::new(200, releases_body(TAGS))
            .etag(ETAG)
            .last_modified(LAST_MODIFIED),
    ]);
    let url = feed.url("/releases");
    let run = setup.run("cache-revalidate-0", NOW, &url, &[]);
    assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    assert_eq!(feed.requests()[0].if_none_match, None);

    // Two hours later: a conditional request, answered 304, and the cached answer holds.
    let run = setup.run("cache-revalidate-1", LATER, &url, &[]);
    assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    let requests = feed.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].if_none_match.as_deref(), Some(ETAG));
    assert_eq!(
        requests[1].if_modified_since.as_deref(),
        Some(LAST_MODIFIED)
    );
    let (header, _) = parse_cache_file(&setup.files()[0]);
    assert_eq!(header["fetched"], LATER, "the 304 restarts the window");

    // The window restarted at the 304: half an hour later nobody is asked.
    let run = setup.run("cache-revalidate-2", "2026-11-22T05:30:00Z", &url, &[]);
    assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    assert_eq!(feed.requests().len(), 2);
}

#[test]
fn a_failing_feed_is_answered_from_the_stale_cache_and_said_so() {
    let setup = Setup::new("cache-stale");
    let feed = FeedServer::replies(vec![
        Reply::new(200, releases_body(TAGS)).etag(ETAG),
        Reply::new(500, "upstream trouble"),
        Reply::new(403, r#"{"message": "API rate limit exceeded"}"#),
    ]);
    let url = feed.url("/releases");
    let run = setup.run("cache-stale-0", NOW, &url, &[]);
    assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);

    let run = setup.run("cache-stale-1", LATER, &url, &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let said = format!(
        "{UPDATE_LINE} (cached answer from {NOW}, release feed unavailable: {url} answered HTTP 500)"
    );
    assert!(run.has_line(&said), "{}", run.stdout);

    // feed mode, rate-limited: the cached answer decides rather than "unknown".
    let run = setup.run(
        "cache-stale-2",
        LATER,
        &url,
        &["--update-source", "feed", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let update = &json[0]["update"];
    assert_eq!(update["source"], "cache", "{update}");
    assert_eq!(update["recommended"], "4.0.9");
    assert_eq!(update["updateAvailable"], true);
    assert_eq!(
        update["error"],
        format!("cached answer from {NOW}, release feed unavailable: {url} answered HTTP 403")
    );
    assert_eq!(feed.requests().len(), 3);

    // Without a cached answer the conditions of the specification hold: auto falls back to
    // the bundled data, feed reports unknown.
    let empty = Setup::new("cache-stale-none");
    let run = empty.run("cache-stale-none-auto", LATER, &url, &[]);
    assert!(
        run.stdout
            .contains("newest release 8.1.0 (from bundled data: release feed unavailable:"),
        "{}",
        run.stdout
    );
    let run = empty.run(
        "cache-stale-none-feed",
        LATER,
        &url,
        &["--update-source", "feed"],
    );
    assert!(
        run.stdout
            .contains("Update check (feed, installed 4.0.8): unknown (release feed unavailable:"),
        "{}",
        run.stdout
    );
}

fn osv_document() -> String {
    r#"[{"id": "GO-2026-9001", "summary": "test advisory", "modified": "2026-11-01T00:00:00Z",
        "database_specific": {"severity": "MODERATE"},
        "affected": [{"package": {"name": "github.com/opencloud-eu/opencloud", "ecosystem": "Go"},
          "ranges": [{"type": "SEMVER", "events": [{"introduced": "8.0.0"}, {"fixed": "8.1.1"}]}]}]}]"#
        .to_string()
}

#[test]
fn advisory_feed_answers_are_cached_too() {
    let fake = FakeInstance::start(plugin::healthy("8.1.0"));
    let state = plugin::scratch("cache-advisories-state");
    let feed = FeedServer::replies(vec![
        Reply::new(200, osv_document()).etag("\"osv-1\""),
        Reply::new(500, "down"),
    ]);
    let url = feed.url("/osv.json");
    let mut args = vec!["-H".to_string(), fake.host_port()];
    args.extend(plugin::hermetic(&fake.ca_file()));
    let mut json_args = args.clone();
    json_args.extend(["--format".to_string(), "json".to_string()]);
    let run_at = |name: &str, now: &str, args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        plugin::run(
            name,
            &args,
            &[
                ("COS_NOW", now),
                ("COS_STATE_DIR", state.to_str().unwrap()),
                ("COS_SCANNER_VULNERABILITY_FEED", url.as_str()),
            ],
        )
    };
    let warning = "WARNING: OpenCloud 8.1.0 has 1 known vulnerability (GO-2026-9001 medium); upgrade to 8.1.1";
    for n in 0..2 {
        let run = run_at(&format!("cache-advisories-{n}"), NOW, &args);
        assert_eq!(run.line(0), warning, "{}", run.stdout);
    }
    assert_eq!(feed.requests().len(), 1);

    // Stale, and the feed fails: the cached advisories still count, and a note says why.
    let run = run_at("cache-advisories-stale", LATER, &json_args);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(feed.requests().len(), 2);
    assert_eq!(
        feed.requests()[1].if_none_match.as_deref(),
        Some("\"osv-1\"")
    );
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let notes = json[0]["knowledge"]["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "advisory feed {url} unavailable ({url} answered HTTP 500); its cached answer from {NOW} is used"
        )),
        "{notes}"
    );
    assert!(
        json[0]["vulnerabilities"]
            .to_string()
            .contains("GO-2026-9001"),
        "{}",
        run.stdout
    );
}

#[test]
fn concurrent_runs_share_one_cache_file() {
    let setup = Setup::new("cache-concurrent");
    let feed = FeedServer::replies(vec![Reply::new(200, releases_body(TAGS)).etag(ETAG)]);
    let url = feed.url("/releases");
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|n| {
                let (setup, url) = (&setup, &url);
                scope.spawn(move || setup.run(&format!("cache-concurrent-{n}"), NOW, url, &[]))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        assert_eq!(run.code, 0, "{}", run.stdout);
        assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    }
    let files = setup.files();
    assert_eq!(files.len(), 1, "one file, no temporary left: {files:?}");
    let (header, body) = parse_cache_file(&files[0]);
    assert_eq!(header["format"], "check-storage-security feed cache 1");
    assert_eq!(header["etag"], ETAG);
    assert_eq!(body.as_array().map(Vec::len), Some(3));
    let asked = feed.requests().len();
    assert!((1..=8).contains(&asked), "{asked}");
    let run = setup.run("cache-concurrent-after", NOW, &url, &[]);
    assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    assert_eq!(feed.requests().len(), asked, "the shared answer is fresh");
}

#[test]
fn a_corrupt_cache_file_is_ignored_and_replaced() {
    let setup = Setup::new("cache-corrupt");
    let feed = FeedServer::replies(vec![Reply::new(200, releases_body(TAGS)).etag(ETAG)]);
    let url = feed.url("/releases");
    let run = setup.run("cache-corrupt-0", NOW, &url, &[]);
    assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    let file = setup.files().remove(0);
    let good = std::fs::read(&file).unwrap();
    let header_end = good.iter().position(|b| *b == b'\n').unwrap() + 1;
    let mut not_a_feed = good[..header_end].to_vec();
    not_a_feed.extend(format!("{:<1$}", "<html>", good.len() - header_end).as_bytes());
    let corruptions: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("garbage", b"\x00\xffnot a cache file at all".to_vec()),
        ("torn", good[..good.len() - 10].to_vec()),
        ("not a feed", not_a_feed),
    ];
    for (n, (what, bytes)) in corruptions.into_iter().enumerate() {
        std::fs::write(&file, bytes).unwrap();
        let asked = feed.requests().len();
        let run = setup.run(&format!("cache-corrupt-{what}"), NOW, &url, &[]);
        assert_eq!(run.code, 0, "{what}: {}", run.stdout);
        assert!(run.has_line(UPDATE_LINE), "{what}: {}", run.stdout);
        assert_eq!(
            feed.requests().len(),
            asked + 1,
            "{what}: the feed is asked"
        );
        assert_eq!(
            feed.requests()[asked].if_none_match,
            None,
            "{what}: nothing to revalidate"
        );
        assert_eq!(
            std::fs::read(&file).unwrap(),
            good,
            "{what} (case {n}): replaced"
        );
    }
}

#[test]
fn the_token_is_never_written_to_the_state_directory() {
    let setup = Setup::new("cache-token");
    let feed = FeedServer::replies(vec![Reply::new(200, releases_body(TAGS)).etag(ETAG)]);
    let url = feed.url("/repos/opencloud-eu/opencloud/releases");
    let token = "tok-4f2b9c-never-stored";
    let args = setup.args(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = plugin::run(
        "cache-token-0",
        &args,
        &setup.env(
            NOW,
            &[("COS_RELEASES_URL", &url), ("COS_RELEASES_TOKEN", token)],
        ),
    );
    assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    assert_eq!(
        feed.requests()[0].authorization.as_deref(),
        Some(&*format!("Bearer {token}"))
    );
    let files = setup.files();
    assert_eq!(files.len(), 1);
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [token, "tok-4f2b9c", "opencloud-eu/opencloud/releases"] {
            assert!(
                !name.contains(secret) && !text.contains(secret),
                "{secret} in {name}"
            );
        }
    }
    // Anonymous runs do not get the token's answer: their own file, their own request.
    let run = setup.run("cache-token-anonymous", NOW, &url, &[]);
    assert!(run.has_line(UPDATE_LINE), "{}", run.stdout);
    assert_eq!(feed.requests().len(), 2);
    assert_eq!(feed.requests()[1].authorization, None);
    assert_eq!(setup.files().len(), 2);
}

/// What the plugin printed and its peak resident memory in KiB (the shared poller of
/// `/proc/<pid>/status`).
fn run_measured(name: &str, args: &[&str], env: &[(&str, &str)]) -> (Run, u64) {
    let (run, peak) = plugin::run_with_peak(name, args, env);
    (
        run,
        peak.expect("peak memory from /proc/<pid>/status (Linux)"),
    )
}

/// A JSON list of `{"a":0}` filling `bytes`: millions of one-member objects, the shape that
/// cost 805 MB as a `serde_json::Value`.
fn hostile_list(bytes: usize) -> String {
    let count = (bytes - 2) / 8;
    let mut body = String::with_capacity(bytes);
    body.push('[');
    for n in 0..count {
        if n > 0 {
            body.push(',');
        }
        body.push_str(r#"{"a":0}"#);
    }
    body.push(']');
    body
}

#[test]
fn hostile_feed_answers_cost_a_few_mib() {
    const MIB: usize = 1024 * 1024;
    // The debug binary itself takes about 20 MiB, the release build about 11
    // (docs/performance.md). An answer costs at most about twice its size: the body, and
    // serde_json's scratch buffer (the longest escaped string read, or one byte per level of
    // nesting skipped). Before the typed readers, the 8 MiB list took over 700 MiB.
    const LIMIT_KIB: u64 = 48 * 1024;
    const OVER_BASELINE_KIB: u64 = 20 * 1024;
    let fake = FakeInstance::start(plugin::healthy("4.0.8"));
    let mut base = vec!["-H".to_string(), fake.host_port()];
    base.extend(plugin::hermetic(&fake.ca_file()));
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a = base.clone();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let measure = |name: &str, args: Vec<String>, env: &[(&str, &str)]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_measured(name, &args, env)
    };
    let (run, baseline) = measure("hostile-baseline", args(&[]), &[]);
    assert!(
        run.stdout.contains("Update check (bundled"),
        "{}",
        run.stdout
    );

    let eight = FeedServer::start(vec![(200, hostile_list(8 * MIB))]);
    let under_release_cap = FeedServer::start(vec![(200, hostile_list(4 * MIB - 64))]);
    let entries = vec![r#"{"id":"x"}"#; (8 * MIB - 64) / 11].join(",");
    let native = FeedServer::start(vec![(200, format!(r#"{{"advisories": [{entries}]}}"#))]);
    let deep = FeedServer::start(vec![(200, "[".repeat(8 * MIB))]);
    let state = plugin::scratch("hostile-state");
    let state = state.to_str().unwrap();
    let json = ["--format", "json"];
    let release_url = ("COS_RELEASES_URL", "--update-source", "auto");
    let advisory_url = ("COS_SCANNER_VULNERABILITY_FEED", json[0], json[1]);
    // (what, feed variable and flags, feed, what the output says)
    let cases = [
        (
            "release feed, 8 MiB (over its cap)",
            release_url,
            &eight,
            "answered more than 4096 KiB".to_string(),
        ),
        (
            "release feed, just under its 4 MiB cap",
            release_url,
            &under_release_cap,
            "release feed unavailable: release feed lists no release".to_string(),
        ),
        (
            "advisory feed, 8 MiB list",
            advisory_url,
            &eight,
            "list item 1: a JSON object with keys a is not".to_string(),
        ),
        (
            "advisory feed, 8 MiB of native entries",
            advisory_url,
            &native,
            format!("\"{}\"\n      ],\n      \"notes\": []", native.url("/feed")),
        ),
        (
            "advisory feed, 8 MiB of nested lists",
            advisory_url,
            &deep,
            "advisory document is not valid JSON (EOF while parsing".to_string(),
        ),
    ];
    for (n, (what, (variable, flag, value), feed, expected)) in cases.into_iter().enumerate() {
        let url = feed.url("/feed");
        let env = [(variable, url.as_str()), ("COS_STATE_DIR", state)];
        let args = args(&[flag, value]);
        let (run, peak) = measure(&format!("hostile-{n}"), args, &env);
        eprintln!("{what}: peak {peak} KiB (baseline {baseline} KiB)");
        assert!(peak <= LIMIT_KIB, "{what}: peak RSS {peak} KiB");
        assert!(
            peak <= baseline + OVER_BASELINE_KIB,
            "{what}: peak RSS {peak} KiB, {baseline} KiB without the feed"
        );
        assert!(run.stdout.contains(&expected), "{what}: {}", run.stdout);
        assert!(run.code != 3, "{what}: {}", run.stdout);
    }
}
