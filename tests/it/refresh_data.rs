//! `make refresh-data` (examples/refresh_data.rs): the refresher is run in-process against a
//! temporary copy of `assets/` and loopback servers standing in for GitHub's releases and
//! advisory APIs. An unchanged upstream changes only `updated`; new releases, lines and
//! advisories land in the files in their layout, readable by the plugin's own loaders; a
//! bundled-only advisory stays; a failing source changes nothing and says so in one line. And
//! `--version` prints the dates of the bundled data.

#[path = "../../examples/refresh_data.rs"]
#[allow(dead_code)]
mod refresher;

use crate::support::feed::{FeedServer, Reply};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use storage_security::knowledge::advisories::{self, Advisory};
use storage_security::knowledge::releases::ReleaseSchedule;
use storage_security::knowledge::{Knowledge, KnowledgeSources, ProductFamily, Track};

const TODAY: &str = "2026-11-02";
const TOKEN: &str = "ghp_refresh_secret_never_printed";

fn assets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

fn asset(product: &str, file: &str) -> String {
    std::fs::read_to_string(assets_dir().join(product).join(file)).unwrap()
}

/// A fresh copy of `assets/` (both products) for one test.
fn scratch_assets(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("refresh-data-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    for product in ["opencloud", "ocis"] {
        std::fs::create_dir_all(dir.join(product)).unwrap();
        for file in ["release-schedule.json", "advisories.json"] {
            std::fs::copy(
                assets_dir().join(product).join(file),
                dir.join(product).join(file),
            )
            .unwrap();
        }
    }
    dir
}

/// Every file of a copy, to compare before and after.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for product in ["opencloud", "ocis"] {
        for file in ["release-schedule.json", "advisories.json"] {
            let text = std::fs::read_to_string(dir.join(product).join(file)).unwrap();
            files.push((format!("{product}/{file}"), text));
        }
    }
    files
}

fn read(dir: &Path, product: &str, file: &str) -> String {
    std::fs::read_to_string(dir.join(product).join(file)).unwrap()
}

/// The lines that differ between two texts of the same number of lines.
fn changed_lines(old: &str, new: &str) -> Vec<(String, String)> {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    assert_eq!(old.len(), new.len(), "line count changed");
    old.iter()
        .zip(&new)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn updated_line(date: &str) -> String {
    format!("  \"updated\": \"{date}\",")
}

fn updated_of(text: &str) -> String {
    let value: Value = serde_json::from_str(text).unwrap();
    value["updated"].as_str().unwrap().to_string()
}

/// A GitHub release as the API lists it.
fn release(tag: &str, date: &str) -> Value {
    json!({"tag_name": tag, "name": tag, "draft": false, "prerelease": false,
           "published_at": format!("{date}T10:00:00Z"), "body": "## Changelog", "assets": []})
}

/// The releases GitHub would list for a schedule as bundled: every line's x.y.0 on its open
/// date and its current release, newest first, plus a draft and a pre-release to skip.
fn releases_of(schedule: &str) -> Vec<Value> {
    let value: Value = serde_json::from_str(schedule).unwrap();
    let mut list = vec![
        json!({"tag_name": "v99.0.0", "draft": true, "prerelease": false, "published_at": null}),
        json!({"tag_name": "v98.0.0-rc.1", "draft": false, "prerelease": true,
               "published_at": "2026-10-30T10:00:00Z"}),
    ];
    for entry in value["entries"].as_array().unwrap().iter().rev() {
        let (line, opened) = (
            entry["line"].as_str().unwrap(),
            entry["opened"].as_str().unwrap(),
        );
        // A line the schedule cannot date (oCIS 8.1): the feed has no date for it either.
        if opened == "unknown" {
            continue;
        }
        let current = entry["current"].as_str().unwrap();
        let first = format!("{line}.0");
        if list.iter().any(|r| r["tag_name"] == format!("v{first}")) {
            continue;
        }
        if current != first {
            list.push(release(&format!("v{current}"), opened));
        }
        list.push(release(&format!("v{first}"), opened));
    }
    list
}

fn body(list: &[Value]) -> String {
    serde_json::to_string(list).unwrap()
}

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/advisories")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// GitHub's global database as of the bundled data: GHSA-vf5j-r2hw-2hrw only.
fn global_today() -> Vec<Value> {
    vec![fixture("github-global-GHSA-vf5j-r2hw-2hrw.json")]
}

/// OpenCloud's repository advisories as of the bundled data: GHSA-gf4p-7p27-26w7 (only
/// there) and GHSA-vf5j-r2hw-2hrw with prose ranges (unreadable, so the reader drops it).
fn repository_today() -> Vec<Value> {
    let all = fixture("github-repository-advisories.json");
    all.as_array().unwrap()[..2].to_vec()
}

/// The three loopback sources, each answering OpenCloud's request, then oCIS's.
struct Sources {
    releases: FeedServer,
    repository: FeedServer,
    global: FeedServer,
}

/// What each source answers per product.
struct Answers {
    opencloud_releases: Reply,
    opencloud_repository: Reply,
    opencloud_global: Reply,
    ocis_releases: Reply,
    ocis_repository: Reply,
    ocis_global: Reply,
}

impl Answers {
    /// Upstream exactly as bundled.
    fn unchanged() -> Answers {
        Answers {
            opencloud_releases: ok(body(&releases_of(&asset(
                "opencloud",
                "release-schedule.json",
            )))),
            opencloud_repository: ok(body(&repository_today())),
            opencloud_global: ok(body(&global_today())),
            ocis_releases: ok(body(&releases_of(&asset("ocis", "release-schedule.json")))),
            ocis_repository: ok("[]".into()),
            ocis_global: ok("[]".into()),
        }
    }

    fn start(self) -> Sources {
        Sources {
            releases: FeedServer::replies(vec![self.opencloud_releases, self.ocis_releases]),
            repository: FeedServer::replies(vec![self.opencloud_repository, self.ocis_repository]),
            global: FeedServer::replies(vec![self.opencloud_global, self.ocis_global]),
        }
    }
}

fn ok(body: String) -> Reply {
    Reply::new(200, body)
}

/// OpenCloud's releases as bundled, with these added in front (newest first, as GitHub lists).
fn opencloud_releases_with(added: &[Value]) -> Reply {
    let mut list = added.to_vec();
    list.extend(releases_of(&asset("opencloud", "release-schedule.json")));
    ok(body(&list))
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Outcome {
    fn review_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("REVIEW:"))
            .collect()
    }
}

/// Runs the refresher on `assets` against `sources` (addresses with `{repo}` / `{packages}`).
fn refresh(assets: &Path, sources: &Sources, env: &[(&str, &str)]) -> Outcome {
    let args: Vec<OsString> = vec![
        "--assets".into(),
        assets.into(),
        "--today".into(),
        TODAY.into(),
        "--releases-url".into(),
        sources
            .releases
            .url("/repos/{repo}/releases?per_page=100")
            .into(),
        "--repo-advisories-url".into(),
        sources
            .repository
            .url("/repos/{repo}/security-advisories?per_page=100")
            .into(),
        "--global-advisories-url".into(),
        sources
            .global
            .url("/advisories?ecosystem=go&affects={packages}&per_page=100")
            .into(),
        "--timeout".into(),
        "10".into(),
    ];
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let code = refresher::run(args, &lookup, &mut stdout, &mut stderr);
    Outcome {
        code,
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}

fn schedule(dir: &Path, product: &str, family: ProductFamily) -> ReleaseSchedule {
    ReleaseSchedule::parse(&read(dir, product, "release-schedule.json"), family).unwrap()
}

fn entry(
    s: &ReleaseSchedule,
    line: (u64, u64),
    track: Track,
) -> &storage_security::knowledge::releases::ScheduleEntry {
    s.entries
        .iter()
        .find(|e| e.line == line && e.track == track)
        .unwrap_or_else(|| panic!("no {line:?} {track} entry"))
}

/// The refreshed OpenCloud data as the plugin loads operator files (`scanner.release_schedule`,
/// `scanner.vulnerability_db`).
fn load_opencloud(dir: &Path) -> Knowledge {
    let sources = KnowledgeSources {
        release_schedule: Some(dir.join("opencloud/release-schedule.json")),
        vulnerability_db: vec![dir.join("opencloud/advisories.json")],
        vulnerability_feed: None,
    };
    Knowledge::load(ProductFamily::OpenCloud, &sources, &|_| {
        Err("no feed in this test".into())
    })
    .unwrap()
}

fn matching_ids(list: &[Advisory], version: &str) -> Vec<String> {
    advisories::matching(list, &semver::Version::parse(version).unwrap())
        .into_iter()
        .map(|a| a.id.clone())
        .collect()
}

fn v(text: &str) -> semver::Version {
    semver::Version::parse(text).unwrap()
}

#[test]
fn no_upstream_change_changes_only_updated() {
    let dir = scratch_assets("unchanged");
    let before = snapshot(&dir);
    let sources = Answers::unchanged().start();
    let run = refresh(&dir, &sources, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.review_lines().is_empty(), "{}", run.stderr);
    for ((name, old), (_, new)) in before.iter().zip(snapshot(&dir)) {
        let expected = vec![(updated_line(&updated_of(old)), updated_line(TODAY))];
        assert_eq!(changed_lines(old, &new), expected, "{name}");
    }
    // The sources were asked at the addresses of each product, in order.
    let paths = |server: &FeedServer| -> Vec<String> {
        server.requests().into_iter().map(|r| r.path).collect()
    };
    assert_eq!(
        paths(&sources.releases),
        [
            "/repos/opencloud-eu/opencloud/releases?per_page=100",
            "/repos/owncloud/ocis/releases?per_page=100"
        ]
    );
    assert_eq!(
        paths(&sources.repository),
        [
            "/repos/opencloud-eu/opencloud/security-advisories?per_page=100",
            "/repos/owncloud/ocis/security-advisories?per_page=100"
        ]
    );
    assert_eq!(
        paths(&sources.global),
        [
            "/advisories?ecosystem=go&affects=github.com/opencloud-eu/opencloud&per_page=100",
            "/advisories?ecosystem=go&affects=github.com/owncloud/ocis,github.com/owncloud/ocis/v2&per_page=100"
        ]
    );
    // A second refresh the same day changes nothing at all.
    let after = snapshot(&dir);
    let run = refresh(&dir, &Answers::unchanged().start(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(snapshot(&dir), after);
    assert_eq!(
        run.stdout.matches(": unchanged").count(),
        4,
        "{}",
        run.stdout
    );
}

#[test]
fn a_new_patch_release_updates_current_of_its_line() {
    let dir = scratch_assets("patch");
    let old = read(&dir, "opencloud", "release-schedule.json");
    let mut answers = Answers::unchanged();
    answers.opencloud_releases = opencloud_releases_with(&[
        json!({"tag_name": "v8.1.2", "draft": true, "prerelease": false, "published_at": null}),
        json!({"tag_name": "v8.2.0-rc.1", "draft": false, "prerelease": true,
               "published_at": "2026-10-30T10:00:00Z"}),
        release("v8.1.1", "2026-10-28"),
        release("v4.0.9", "2026-10-27"),
    ]);
    let run = refresh(&dir, &answers.start(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let new = read(&dir, "opencloud", "release-schedule.json");
    let line = |l: &str, t: &str, o: &str, c: &str, e: &str| {
        format!(
            r#"    {{"line": "{l}", "track": "{t}", "opened": "{o}", "current": "{c}", "support_end": {e}}}"#
        )
    };
    assert_eq!(
        changed_lines(&old, &new),
        [
            (updated_line("2026-10-12"), updated_line(TODAY)),
            (
                line("4.0", "production", "2025-12-01", "4.0.8", "\"2026-06-25\"") + ",",
                line("4.0", "production", "2025-12-01", "4.0.9", "\"2026-06-25\"") + ","
            ),
            (
                line("4.0", "lts", "2025-12-01", "4.0.8", "\"2027-12-01\"") + ",",
                line("4.0", "lts", "2025-12-01", "4.0.9", "\"2027-12-01\"") + ","
            ),
            (
                line("8.1", "rolling", "2026-10-05", "8.1.0", "null"),
                line("8.1", "rolling", "2026-10-05", "8.1.1", "null")
            ),
        ]
    );
    let s = schedule(&dir, "opencloud", ProductFamily::OpenCloud);
    assert_eq!(s.newest_on_track(Track::Lts), Some(&v("4.0.9")));
    assert_eq!(
        s.newest_line(),
        Some((8, 1)),
        "drafts and pre-releases are skipped"
    );
    assert!(
        run.stdout
            .contains("line 8.1 (rolling): current 8.1.0 -> 8.1.1"),
        "{}",
        run.stdout
    );
    assert!(run.review_lines().is_empty(), "{}", run.stderr);
}

#[test]
fn a_new_line_is_added_on_the_previous_track_for_review() {
    let dir = scratch_assets("line");
    let mut answers = Answers::unchanged();
    answers.opencloud_releases = opencloud_releases_with(&[
        release("v8.2.1", "2026-10-29"),
        release("v8.2.0", "2026-10-26"),
    ]);
    // oCIS: 8.1 is in the schedule without a date; the releases date it, and open 8.2.
    let mut ocis = vec![
        release("v8.2.0", "2026-10-20"),
        release("v8.1.0", "2026-09-01"),
    ];
    ocis.extend(releases_of(&asset("ocis", "release-schedule.json")));
    // oCIS's 1.x tech previews: older than the schedule's newest line, left out on purpose.
    ocis.push(release("v1.20.0", "2022-06-01"));
    answers.ocis_releases = ok(body(&ocis));
    let run = refresh(&dir, &answers.start(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let text = read(&dir, "opencloud", "release-schedule.json");
    assert!(text.contains(
        "    {\"line\": \"8.1\", \"track\": \"rolling\", \"opened\": \"2026-10-05\", \"current\": \"8.1.0\", \"support_end\": \"2026-10-26\"},\n    {\"line\": \"8.2\", \"track\": \"rolling\", \"opened\": \"2026-10-26\", \"current\": \"8.2.1\", \"support_end\": null}\n  ]\n}\n"
    ), "{text}");
    let s = schedule(&dir, "opencloud", ProductFamily::OpenCloud);
    assert_eq!(s.entries.len(), 34);
    let o = schedule(&dir, "ocis", ProductFamily::InfiniteScale);
    let eight_two = entry(&o, (8, 2), Track::Production);
    assert_eq!(
        eight_two.opened.map(|d| d.to_string()),
        Some("2026-10-20".into())
    );
    assert_eq!(eight_two.support_end, None);
    let eight_one = entry(&o, (8, 1), Track::Production);
    assert_eq!(eight_one.opened, None, "a person dates it, not the refresh");
    assert_eq!(
        eight_one.support_end.map(|d| d.to_string()),
        Some("2026-10-20".into())
    );
    assert!(entry(&o, (8, 0), Track::Production).support_end_unknown);
    assert!(o.entries_for_line((1, 20)).is_empty());
    // The policy of the bundled schedules still holds: support ends when the successor opens.
    for (s, family) in [
        (&s, ProductFamily::OpenCloud),
        (&o, ProductFamily::InfiniteScale),
    ] {
        for e in s.entries.iter().filter(|e| e.track != Track::Lts) {
            if family == ProductFamily::InfiniteScale && e.line == (6, 6) {
                continue;
            }
            let successor = s
                .entries
                .iter()
                .filter(|x| x.track == e.track && x.line > e.line)
                .min_by_key(|x| x.line);
            match successor {
                Some(next) if next.opened.is_none() => assert!(e.support_end_unknown),
                _ => assert_eq!(
                    e.support_end,
                    successor.and_then(|x| x.opened),
                    "{family:?} {:?}",
                    e.line
                ),
            }
        }
    }
    let review = run.review_lines();
    assert!(
        review
            .iter()
            .any(|l| l.contains("new line 8.2 added on the rolling track")
                && l.contains("opencloud/release-schedule.json")
                && l.contains("confirm its track")
                && l.contains("support_end")),
        "{}",
        run.stderr
    );
    assert!(
        review
            .iter()
            .any(|l| l.contains("line 8.1 (rolling) now ends support on 2026-10-26")),
        "{}",
        run.stderr
    );
    assert!(
        review
            .iter()
            .any(|l| l.contains("new line 8.2 added on the production track")
                && l.contains("ocis/release-schedule.json")),
        "{}",
        run.stderr
    );
    assert!(
        review.iter().any(|l| l.contains(
            "line 8.1 (production) has \"opened\": \"unknown\" but the releases date it 2026-09-01"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("note:") && l.contains("1.20")),
        "{}",
        run.stderr
    );
}

#[test]
fn a_new_advisory_is_added_in_the_native_format_the_plugin_reads() {
    let dir = scratch_assets("advisory");
    let new_global = json!({
        "ghsa_id": "GHSA-2222-3333-4444",
        "cve_id": "CVE-2026-70001",
        "html_url": "https://github.com/advisories/GHSA-2222-3333-4444",
        "summary": "Share tokens leak into the proxy log",
        "description": "### Impact\nShare tokens of public links are written to the proxy log\nat info level.\n\n### Patches\nFixed in 7.2.5 and 8.1.1.",
        "type": "reviewed",
        "severity": "high",
        "identifiers": [{"value": "GHSA-2222-3333-4444", "type": "GHSA"},
                        {"value": "CVE-2026-70001", "type": "CVE"}],
        "published_at": "2026-10-20T08:00:00Z",
        "withdrawn_at": null,
        "vulnerabilities": [
            {"package": {"ecosystem": "go", "name": "github.com/opencloud-eu/opencloud"},
             "vulnerable_version_range": ">= 8.0.0, < 8.1.1", "first_patched_version": "8.1.1"},
            {"package": {"ecosystem": "go", "name": "github.com/opencloud-eu/opencloud"},
             "vulnerable_version_range": ">= 7.2.0, < 7.2.5", "first_patched_version": "7.2.5"}
        ],
        "cvss": {"vector_string": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", "score": 7.5},
        "cwes": [{"cwe_id": "CWE-532", "name": "Insertion of Sensitive Information into Log File"}]
    });
    let mut answers = Answers::unchanged();
    let mut global = global_today();
    global.push(new_global);
    answers.opencloud_global = ok(body(&global));
    // The whole repository fixture: a draft (skipped) and a synthetic published advisory.
    answers.opencloud_repository = ok(fixture("github-repository-advisories.json").to_string());
    let run = refresh(&dir, &answers.start(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let text = read(&dir, "opencloud", "advisories.json");
    let expected = r#"    {
      "id": "GHSA-2222-3333-4444",
      "aliases": ["CVE-2026-70001"],
      "title": "Share tokens leak into the proxy log",
      "summary": "Share tokens of public links are written to the proxy log at info level.",
      "severity": "high",
      "cvss_v3": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
      "cwe": "CWE-532",
      "published": "2026-10-20",
      "url": "https://github.com/advisories/GHSA-2222-3333-4444",
      "source": "GitHub advisory database (GET /advisories, github.com/opencloud-eu/opencloud), refreshed 2026-11-02",
      "introduced": "7.2.0",
      "fixed": "7.2.5",
      "ranges": [
        {"introduced": "7.2.0", "fixed": "7.2.5"},
        {"introduced": "8.0.0", "fixed": "8.1.1"}
      ]
    }"#;
    assert!(text.contains(expected), "{text}");
    assert!(
        !text.contains("GHSA-dddd-eeee-ffff"),
        "a draft is not added"
    );
    // The bundled entries are untouched (the file starts as it did, but for `updated`).
    let old = asset("opencloud", "advisories.json");
    let head = old.trim_end().strip_suffix("]\n}").unwrap().trim_end();
    let head = head.replace(&updated_line("2026-10-12"), &updated_line(TODAY));
    assert!(text.starts_with(&head), "{text}");

    // Read back by the plugin's own loaders, as an operator's advisory file.
    let k = load_opencloud(&dir);
    assert!(matching_ids(&k.advisories, "8.1.0").contains(&"GHSA-2222-3333-4444".into()));
    assert!(matching_ids(&k.advisories, "7.2.4").contains(&"GHSA-2222-3333-4444".into()));
    assert!(!matching_ids(&k.advisories, "7.2.5").contains(&"GHSA-2222-3333-4444".into()));
    assert!(!matching_ids(&k.advisories, "8.1.1").contains(&"GHSA-2222-3333-4444".into()));
    // The synthetic repository advisory: `> 2.0.0, <= 3.1.0`, written with `last_affected`.
    assert!(
        text.contains(
            r#""introduced": "2.0.1-0",
      "last_affected": "3.1.0""#
        ),
        "{text}"
    );
    let list = advisories::parse_document(&text, ProductFamily::OpenCloud).unwrap();
    let synthetic = "GHSA-aaaa-bbbb-cccc".to_string();
    assert!(matching_ids(&list, "3.0.0").contains(&synthetic));
    assert!(matching_ids(&list, "3.1.0").contains(&synthetic));
    assert!(!matching_ids(&list, "3.1.1").contains(&synthetic));
    assert!(!matching_ids(&list, "2.0.0").contains(&synthetic));
    let ids: Vec<&str> = list.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "GHSA-vf5j-r2hw-2hrw",
            "GHSA-gf4p-7p27-26w7",
            "GHSA-2222-3333-4444",
            "GHSA-aaaa-bbbb-cccc"
        ]
    );
    assert_eq!(
        run.review_lines()
            .iter()
            .filter(|l| l.contains("new advisory"))
            .count(),
        2,
        "{}",
        run.stderr
    );
}

#[test]
fn bundled_only_advisories_are_kept() {
    let dir = scratch_assets("bundled-only");
    let old = read(&dir, "opencloud", "advisories.json");
    let mut answers = Answers::unchanged();
    answers.opencloud_global = ok("[]".into());
    answers.opencloud_repository = ok("[]".into());
    let run = refresh(&dir, &answers.start(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let new = read(&dir, "opencloud", "advisories.json");
    assert_eq!(
        changed_lines(&old, &new),
        [(updated_line("2026-10-12"), updated_line(TODAY))]
    );
    let k = load_opencloud(&dir);
    assert_eq!(
        matching_ids(&k.advisories, "4.0.2"),
        ["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7"]
    );
}

#[test]
fn a_known_advisory_gains_new_fixes_and_aliases_and_keeps_its_curated_bounds() {
    let dir = scratch_assets("known");
    let mut answers = Answers::unchanged();
    let mut repository = repository_today();
    repository[0]["vulnerabilities"][0]["vulnerable_version_range"] =
        json!("< 4.0.8, < 7.2.0, < 8.1.1");
    answers.opencloud_repository = ok(body(&repository));
    let mut global = global_today();
    global[0]["cve_id"] = json!("CVE-2026-99999");
    answers.opencloud_global = ok(body(&global));
    let run = refresh(&dir, &answers.start(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let text = read(&dir, "opencloud", "advisories.json");
    assert!(
        text.contains(r#""aliases": ["GO-2026-4447", "CVE-2026-99999"],"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"      "ranges": [
        {"introduced": "1.0.0", "fixed": "4.0.8"},
        {"introduced": "4.1.0", "fixed": "7.2.0"},
        {"introduced": "7.3.0", "fixed": "8.1.1"}
      ]"#
        ),
        "{text}"
    );
    // Read as the plugin reads an advisory file (loaded beside the bundled data, the bundled
    // copy of a known advisory would win).
    let list = advisories::parse_document(&text, ProductFamily::OpenCloud).unwrap();
    assert_eq!(
        matching_ids(&list, "8.0.1"),
        ["GHSA-gf4p-7p27-26w7"],
        "the new fix's line"
    );
    assert!(matching_ids(&list, "8.1.1").is_empty());
    assert!(matching_ids(&list, "7.2.4").is_empty());
    assert_eq!(
        matching_ids(&list, "1.0.0"),
        ["GHSA-gf4p-7p27-26w7"],
        "the curated lower bound"
    );
    assert!(
        run.review_lines()
            .iter()
            .any(|l| l.contains("GHSA-gf4p-7p27-26w7 has new fixed ranges")),
        "{}",
        run.stderr
    );
}

/// A refresh that must fail: exit 1, one line naming the source, no file changed.
fn assert_fails(name: &str, answers: Answers, expected: &[&str]) {
    let dir = scratch_assets(name);
    let before = snapshot(&dir);
    let run = refresh(&dir, &answers.start(), &[("GITHUB_TOKEN", TOKEN)]);
    assert_eq!(run.code, 1, "{name}: {}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{name}: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{name}: {}", run.stdout);
    let line = run.stderr.trim_end();
    assert!(line.starts_with("refresh-data: "), "{line}");
    assert!(line.contains("nothing was changed. Fix: "), "{line}");
    for part in expected {
        assert!(line.contains(part), "{name}: {part:?} not in {line}");
    }
    assert!(!line.contains(TOKEN));
    assert!(snapshot(&dir) == before, "{name}: a file changed");
    let leftovers: Vec<_> = ["opencloud", "ocis"]
        .iter()
        .flat_map(|p| std::fs::read_dir(dir.join(p)).unwrap())
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_failing_source_changes_nothing_and_says_so_in_one_line() {
    let mut a = Answers::unchanged();
    a.opencloud_releases = Reply::new(500, "upstream trouble");
    assert_fails(
        "releases-500",
        a,
        &["OpenCloud releases", "answered HTTP 500", "retry later"],
    );

    let mut a = Answers::unchanged();
    a.opencloud_releases = ok(r#"{"message": "Not Found"}"#.into());
    assert_fails(
        "releases-object",
        a,
        &[
            "OpenCloud releases",
            "not a list of releases",
            "--releases-url",
        ],
    );

    let mut a = Answers::unchanged();
    a.opencloud_repository = ok("<html>Service unavailable</html>".into());
    assert_fails(
        "repository-garbage",
        a,
        &[
            "OpenCloud repository advisories",
            "not JSON",
            "--repo-advisories-url",
        ],
    );

    let mut a = Answers::unchanged();
    a.opencloud_global = ok("[{\"ghsa_id\": \"GHSA-x\", ".into());
    assert_fails(
        "global-truncated",
        a,
        &[
            "OpenCloud advisories in GitHub's advisory database",
            "not valid JSON",
        ],
    );

    let mut a = Answers::unchanged();
    a.opencloud_global = Reply::new(403, r#"{"message": "API rate limit exceeded"}"#);
    assert_fails("global-403", a, &["answered HTTP 403", "GITHUB_TOKEN"]);

    // oCIS fails after OpenCloud's sources answered, with a change for OpenCloud: still nothing
    // is written.
    let mut a = Answers::unchanged();
    a.opencloud_releases = opencloud_releases_with(&[release("v8.1.1", "2026-10-28")]);
    a.ocis_releases = Reply::new(502, "bad gateway");
    assert_fails(
        "ocis-after-opencloud",
        a,
        &["ownCloud Infinite Scale releases", "answered HTTP 502"],
    );
}

#[test]
fn an_unreachable_source_changes_nothing() {
    let dir = scratch_assets("unreachable");
    let before = snapshot(&dir);
    // A port nobody listens on: the connection is refused at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sources = Answers::unchanged().start();
    let env = [(
        "COS_REFRESH_RELEASES_URL",
        format!("http://127.0.0.1:{port}/repos/{{repo}}/releases"),
    )];
    let args: Vec<OsString> = vec![
        "--assets".into(),
        dir.clone().into(),
        "--product".into(),
        "opencloud".into(),
        "--repo-advisories-url".into(),
        sources.repository.url("/r").into(),
        "--global-advisories-url".into(),
        sources.global.url("/g").into(),
    ];
    let lookup = |name: &str| env.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = refresher::run(args, &lookup, &mut out, &mut err);
    let err = String::from_utf8(err).unwrap();
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("OpenCloud releases"), "{err}");
    assert!(
        err.contains(&format!(
            "127.0.0.1:{port}/repos/opencloud-eu/opencloud/releases"
        )),
        "{err}"
    );
    assert!(err.contains("check the network"), "{err}");
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn the_token_goes_only_to_github_and_is_never_printed() {
    let dir = scratch_assets("token");
    let mut answers = Answers::unchanged();
    answers.opencloud_releases = opencloud_releases_with(&[release("v8.2.0", "2026-10-26")]);
    let sources = answers.start();
    let run = refresh(&dir, &sources, &[("GITHUB_TOKEN", TOKEN)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN));
    for server in [&sources.releases, &sources.repository, &sources.global] {
        assert!(server.requests().iter().all(|r| r.authorization.is_none()));
    }
    for (_, text) in snapshot(&dir) {
        assert!(!text.contains(TOKEN));
    }
}

#[test]
fn usage_errors_exit_2_and_change_nothing() {
    let dir = scratch_assets("usage");
    let before = snapshot(&dir);
    for args in [
        vec!["--product", "nextcloud"],
        vec!["--today", "yesterday"],
        vec!["--timeout", "0"],
        vec!["--frobnicate"],
    ] {
        let mut all: Vec<OsString> = vec!["--assets".into(), dir.clone().into()];
        all.extend(args.iter().map(OsString::from));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = refresher::run(all, &|_| None, &mut out, &mut err);
        assert_eq!(code, 2, "{args:?}");
        assert!(
            String::from_utf8(err)
                .unwrap()
                .starts_with("refresh-data: ")
        );
    }
    assert_eq!(snapshot(&dir), before);
}

/// `--version` prints the plugin version and the dates of the bundled data, as the asset files
/// say (so a refresh does not break this test).
#[test]
fn version_prints_the_dates_of_the_bundled_data() {
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-security"))
        .arg("--version")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let schedule = updated_of(&asset("opencloud", "release-schedule.json"));
    let advisories = updated_of(&asset("opencloud", "advisories.json"));
    assert!(
        stdout.starts_with(&format!(
            "check-storage-security {}\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("release schedule updated {schedule}")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("advisories updated {advisories}")),
        "{stdout}"
    );
}
