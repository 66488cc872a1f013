//! `--baseline FILE` and `--warn-on-new` end to end: the real binary against fake instances on
//! loopback, with a cleared environment and a pinned clock (`COS_NOW`). Between two runs an
//! instance is restarted on the same address with another configuration, so the host key
//! (`127.0.0.1:PORT`) of the baseline stays the same.

use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

const DAY_1: &str = "2026-11-22T03:00:00Z";
const DAY_2: &str = "2026-11-23T03:00:00Z";

struct Run {
    stdout: String,
    code: i32,
}

impl Run {
    fn line(&self, n: usize) -> &str {
        self.stdout.lines().nth(n).unwrap_or("")
    }

    /// The result documents of `--format json`.
    fn json(&self) -> Vec<Value> {
        match serde_json::from_str(&self.stdout) {
            Ok(Value::Array(results)) => results,
            other => panic!("not a JSON array ({other:?}): {}", self.stdout),
        }
    }

    /// The `baseline` member of the only host of `--format json`.
    fn comparison(&self) -> Value {
        let results = self.json();
        assert_eq!(results.len(), 1, "{}", self.stdout);
        results[0]["baseline"].clone()
    }

    /// The NEW cell of `--format summary` for `host`.
    fn new_column(&self, host: &str) -> String {
        let row = self
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(host))
            .unwrap_or_else(|| panic!("no row of {host}: {}", self.stdout));
        row.split_whitespace().last().unwrap_or("").to_string()
    }
}

/// A scratch directory of one test, holding the baseline file; also the working directory
/// and `HOME` of the runs.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("baseline-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the plugin on `hosts` with `--baseline dir/baseline.json` at `now`.
fn run(dir: &Path, hosts: &str, now: &str, extra: &[&str]) -> Run {
    let ca = crate::support::certs::ca_file().display().to_string();
    let baseline = dir.join("baseline.json").display().to_string();
    let mut args = vec![
        "-H",
        hosts,
        "--ca-file",
        &ca,
        "--update-source",
        "bundled",
        "--backoff-factor",
        "0",
        "--retries",
        "0",
        "--timeout",
        "5",
        "--no-debug-ports",
        "--baseline",
        &baseline,
    ];
    args.extend(extra);
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-security"))
        .args(&args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("COS_NOW", now)
        .current_dir(dir)
        .output()
        .expect("run the plugin");
    Run {
        stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
        code: output.status.code().expect("exit code"),
    }
}

/// An instance without the weaknesses of a default install: nothing fails, rating A+, OK.
fn healthy() -> InstanceConfig {
    InstanceConfig::default()
        .version("8.1.0")
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
        .remove_header("X-Web-Version")
        .remove_header("X-Idp-Version")
        .remove_header("X-Graph-Version")
}

/// The deployment configuration file is served: `exposed:/opencloud.yaml` fails (high), the
/// rating drops to C, WARNING.
fn exposing(config: InstanceConfig) -> InstanceConfig {
    config.route(
        "GET",
        "/opencloud.yaml",
        "HTTP/1.1 200 OK\r\n\r\ntoken_manager:\n  jwt_secret: x\n",
    )
}

/// Stops `fake` and starts `config` on the same address, so the host key stays the same.
fn restart(fake: FakeInstance, config: InstanceConfig) -> FakeInstance {
    let addr: SocketAddr = fake.addr();
    drop(fake);
    FakeInstance::start_at(config, addr).expect("restart the fake instance on its address")
}

fn stored(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("baseline.json")).expect("baseline file");
    serde_json::from_str(&text).expect("baseline file is JSON")
}

fn ids(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn the_first_run_records_the_baseline_and_the_second_compares_with_it() {
    let dir = scratch("record");
    let fake = FakeInstance::start(healthy());
    let host = fake.host_port();

    let first = run(&dir, &host, DAY_1, &["--format", "json"]);
    assert_eq!(first.code, 0, "{}", first.stdout);
    assert_eq!(
        first.comparison(),
        serde_json::json!({
            "recorded": true,
            "newFindings": [],
            "worseRating": false,
            "inconclusiveNow": [],
            "fingerprintDrift": false,
            "changes": [],
            "recordedOn": null
        })
    );
    let file = stored(&dir);
    assert_eq!(file["version"], 1, "{file}");
    let entry = &file["hosts"][&host];
    assert_eq!(entry["recordedAt"], DAY_1, "{file}");
    assert_eq!(entry["rating"], 5, "{file}");
    assert_eq!(ids(&entry["failed"]), Vec::<&str>::new(), "{file}");
    assert!(
        ids(&entry["concluded"]).contains(&"exposed:/opencloud.yaml"),
        "{file}"
    );
    let digest = &first.json()[0]["configurationFingerprint"]["digest"];
    assert_eq!(&entry["fingerprint"], digest, "{file}");
    assert!(temp_files(&dir).is_empty());

    let second = run(&dir, &host, DAY_2, &["--format", "json"]);
    assert_eq!(second.code, 0, "{}", second.stdout);
    assert_eq!(
        second.comparison(),
        serde_json::json!({
            "recorded": false,
            "newFindings": [],
            "worseRating": false,
            "inconclusiveNow": [],
            "changes": [],
            "recordedOn": DAY_1.split('T').next().unwrap(),
            "fingerprintDrift": false
        })
    );
    // The baseline keeps the date it was recorded.
    assert_eq!(stored(&dir)["hosts"][&host]["recordedAt"], DAY_1);
}

#[test]
fn the_summary_new_column_says_new_then_counts_new_findings() {
    let dir = scratch("summary");
    let fake = FakeInstance::start(healthy());
    let host = fake.host_port();

    let first = run(&dir, &host, DAY_1, &["--format", "summary"]);
    assert_eq!(first.code, 0, "{}", first.stdout);
    assert!(
        first.line(0).starts_with("HOST ") && first.line(0).ends_with(" NEW"),
        "{}",
        first.stdout
    );
    assert_eq!(first.new_column(&host), "new", "{}", first.stdout);

    let second = run(&dir, &host, DAY_2, &["--format", "summary"]);
    assert_eq!(second.new_column(&host), "+0", "{}", second.stdout);

    let fake = restart(fake, exposing(healthy()));
    let third = run(&dir, &host, DAY_2, &["--format", "summary"]);
    assert_eq!(third.code, 1, "{}", third.stdout);
    assert_eq!(third.new_column(&host), "+1", "{}", third.stdout);
    drop(fake);
}

#[test]
fn without_baseline_the_new_column_is_a_dash() {
    let dir = scratch("no-baseline");
    let fake = FakeInstance::start(healthy());
    let host = fake.host_port();
    let ca = crate::support::certs::ca_file().display().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-security"))
        .args([
            "-H",
            &host,
            "--ca-file",
            &ca,
            "--update-source",
            "bundled",
            "--no-debug-ports",
            "--format",
            "summary",
        ])
        .env_clear()
        .env("HOME", &dir)
        .env("COS_NOW", DAY_1)
        .current_dir(&dir)
        .output()
        .unwrap();
    let run = Run {
        stdout: String::from_utf8(output.stdout).unwrap(),
        code: output.status.code().unwrap(),
    };
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.new_column(&host), "-", "{}", run.stdout);
    assert!(!dir.join("baseline.json").exists());
}

#[test]
fn a_new_finding_alerts_even_with_warn_on_new_and_is_never_absorbed() {
    let dir = scratch("new-finding");
    let fake = FakeInstance::start(healthy());
    let host = fake.host_port();
    let first = run(&dir, &host, DAY_1, &["--warn-on-new"]);
    assert_eq!(first.code, 0, "{}", first.stdout);

    let fake = restart(fake, exposing(healthy()));
    let second = run(&dir, &host, DAY_2, &["--warn-on-new", "--format", "json"]);
    assert_eq!(second.code, 1, "{}", second.stdout);
    let result = &second.json()[0];
    assert_eq!(result["state"], "WARNING");
    assert_eq!(result["rating"], 3);
    assert_eq!(
        ids(&result["baseline"]["newFindings"]),
        ["exposed:/opencloud.yaml"]
    );
    assert_eq!(result["baseline"]["worseRating"], true);
    assert_eq!(result["baseline"]["recorded"], false);

    // The next run still alerts: a new failure stays new until fixed.
    let third = run(&dir, &host, DAY_2, &["--warn-on-new"]);
    assert_eq!(third.code, 1, "{}", third.stdout);
    assert!(
        third
            .line(0)
            .starts_with("WARNING: exposed:/opencloud.yaml failed (high)"),
        "{}",
        third.stdout
    );
    assert_eq!(
        ids(&stored(&dir)["hosts"][&host]["failed"]),
        Vec::<&str>::new()
    );
    drop(fake);
}

#[test]
fn warn_on_new_reports_ok_when_nothing_is_new_or_worse() {
    let dir = scratch("warn-on-new");
    let fake = FakeInstance::start(exposing(healthy()));
    let host = fake.host_port();

    // The recording run has nothing to compare with: the normal verdict.
    let first = run(&dir, &host, DAY_1, &["--warn-on-new"]);
    assert_eq!(first.code, 1, "{}", first.stdout);
    assert!(
        first
            .line(0)
            .starts_with("WARNING: exposed:/opencloud.yaml failed (high)"),
        "{}",
        first.stdout
    );
    assert_eq!(
        ids(&stored(&dir)["hosts"][&host]["failed"]),
        ["exposed:/opencloud.yaml"]
    );

    let second = run(&dir, &host, DAY_2, &["--warn-on-new"]);
    assert_eq!(second.code, 0, "{}", second.stdout);
    assert!(
        second.line(0).starts_with(
            "OK: nothing new or worse since the baseline of 2026-11-22 (normally WARNING: \
             exposed:/opencloud.yaml failed (high)"
        ),
        "{}",
        second.stdout
    );
    // Rating and performance data stay as assessed.
    assert!(second.line(1).contains("rating: C"), "{}", second.stdout);
    let perfdata = second.stdout.lines().last().unwrap_or("");
    assert!(perfdata.contains("rating=3;"), "{}", second.stdout);

    // Without --warn-on-new the same baseline changes nothing.
    let third = run(&dir, &host, DAY_2, &[]);
    assert_eq!(third.code, 1, "{}", third.stdout);
    assert!(third.line(0).starts_with("WARNING: "), "{}", third.stdout);
    drop(fake);
}

#[test]
fn end_of_life_always_alerts() {
    let dir = scratch("eol");
    let fake = FakeInstance::start(healthy().version("7.3.0"));
    let host = fake.host_port();
    let first = run(&dir, &host, DAY_1, &["--warn-on-new"]);
    assert_eq!(first.code, 2, "{}", first.stdout);
    let second = run(&dir, &host, DAY_2, &["--warn-on-new", "--format", "json"]);
    assert_eq!(second.code, 2, "{}", second.stdout);
    let result = &second.json()[0];
    assert_eq!(result["state"], "CRITICAL");
    assert_eq!(ids(&result["baseline"]["newFindings"]), Vec::<&str>::new());
    assert_eq!(result["baseline"]["worseRating"], false);
    drop(fake);
}

#[test]
fn a_check_concluded_before_and_inconclusive_now_warns_also_with_warn_on_new() {
    let dir = scratch("inconclusive");
    let fake = FakeInstance::start(healthy());
    let host = fake.host_port();
    let first = run(&dir, &host, DAY_1, &["--warn-on-new"]);
    assert_eq!(first.code, 0, "{}", first.stdout);
    assert!(
        ids(&stored(&dir)["hosts"][&host]["concluded"])
            .contains(&"authentication:/graph/v1.0/users"),
        "{}",
        stored(&dir)
    );

    // A server error leaves the anonymous user list undecided.
    let fake = restart(
        fake,
        healthy().route(
            "GET",
            "/graph/v1.0/users",
            "HTTP/1.1 500 Internal Server Error\r\n\r\n",
        ),
    );
    let second = run(&dir, &host, DAY_2, &["--warn-on-new"]);
    assert_eq!(second.code, 1, "{}", second.stdout);
    assert!(
        second.line(0).starts_with("WARNING: ")
            && second.line(0).ends_with(
                "; 1 check(s) concluded before are inconclusive now: \
                 authentication:/graph/v1.0/users"
            ),
        "{}",
        second.stdout
    );
    assert!(second.line(1).contains("rating: A+"), "{}", second.stdout);

    let third = run(&dir, &host, DAY_2, &["--format", "json"]);
    assert_eq!(third.code, 1, "{}", third.stdout);
    let comparison = third.comparison();
    assert_eq!(
        ids(&comparison["inconclusiveNow"]),
        ["authentication:/graph/v1.0/users"]
    );
    assert_eq!(ids(&comparison["newFindings"]), Vec::<&str>::new());
    assert_eq!(comparison["worseRating"], false);
    drop(fake);
}

#[test]
fn fingerprint_drift_never_changes_the_exit_code() {
    let dir = scratch("drift");
    let fake = FakeInstance::start(healthy());
    let host = fake.host_port();
    let first = run(&dir, &host, DAY_1, &["--format", "json"]);
    assert_eq!(first.code, 0, "{}", first.stdout);

    let fake = restart(fake, healthy().add_header("X-Robots-Tag", "none"));
    for extra in [&[][..], &["--warn-on-new"][..]] {
        let mut args = vec!["--format", "json"];
        args.extend(extra);
        let second = run(&dir, &host, DAY_2, &args);
        assert_eq!(second.code, 0, "{}", second.stdout);
        let result = &second.json()[0];
        assert_ne!(
            result["configurationFingerprint"]["digest"],
            first.json()[0]["configurationFingerprint"]["digest"]
        );
        assert_eq!(result["state"], "OK");
        assert_eq!(
            result["baseline"],
            serde_json::json!({
                "recorded": false,
                "newFindings": [],
                "worseRating": false,
                "inconclusiveNow": [],
                "fingerprintDrift": true,
                "changes": [],
                "recordedOn": DAY_1.split('T').next().unwrap()
            })
        );
        assert_eq!(
            result["message"],
            first.json()[0]["message"],
            "drift is no finding and no verdict"
        );
    }
    drop(fake);
}

#[test]
fn several_hosts_share_one_file_and_failed_scans_keep_their_entry() {
    let dir = scratch("shared-file");
    let a = FakeInstance::start(healthy());
    let b = FakeInstance::start(exposing(healthy()));
    let down = format!("127.0.0.1:{}", crate::support::closed_port());
    let (host_a, host_b) = (a.host_port(), b.host_port());

    let both = format!("{host_a},{host_b},{down}");
    let first = run(&dir, &both, DAY_1, &["--format", "summary"]);
    assert_eq!(first.new_column(&host_a), "new", "{}", first.stdout);
    assert_eq!(first.new_column(&host_b), "new", "{}", first.stdout);
    let file = stored(&dir);
    let hosts: Vec<&String> = file["hosts"].as_object().unwrap().keys().collect();
    assert_eq!(hosts.len(), 2, "a failed scan records nothing: {file}");
    assert_eq!(file["hosts"][&host_b]["rating"], 3, "{file}");

    // Another service check (host A alone) leaves B's entry as it was.
    let second = run(&dir, &host_a, DAY_2, &[]);
    assert_eq!(second.code, 0, "{}", second.stdout);
    let after = stored(&dir);
    assert_eq!(after["hosts"][&host_b], file["hosts"][&host_b]);

    // B fails now: its entry survives the failed scan.
    let b_addr = b.addr();
    drop(b);
    let third = run(&dir, &host_b, DAY_2, &[]);
    assert_eq!(third.code, 3, "{}", third.stdout);
    assert_eq!(stored(&dir)["hosts"][&host_b], file["hosts"][&host_b]);

    // And when B answers again, it compares with the old entry.
    let b = FakeInstance::start_at(exposing(healthy()), b_addr).expect("restart B");
    let fourth = run(&dir, &host_b, DAY_2, &["--warn-on-new"]);
    assert_eq!(fourth.code, 0, "{}", fourth.stdout);
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    drop((a, b));
}

#[test]
fn a_corrupt_baseline_is_unknown_and_never_reset() {
    let dir = scratch("corrupt");
    let fake = FakeInstance::start(healthy());
    let host = fake.host_port();
    let path = dir.join("baseline.json");
    for content in [
        "{\"version\": 1, \"hosts\": {",
        "{\"version\": 7, \"hosts\": {}}",
    ] {
        std::fs::write(&path, content).unwrap();
        let run = run(&dir, &host, DAY_1, &[]);
        assert_eq!(run.code, 3, "{}", run.stdout);
        assert!(
            run.line(0)
                .starts_with(&format!("UNKNOWN: baseline file {}", path.display())),
            "{}",
            run.stdout
        );
        assert!(
            run.line(0).ends_with("delete it to record a new baseline"),
            "{}",
            run.stdout
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
    }
}

#[test]
fn warn_on_new_never_excuses_an_unmet_policy() {
    let dir = scratch("policy");
    std::fs::write(dir.join("policy.yaml"), "minimum_rating: 4\n").unwrap();
    let policy = dir.join("policy.yaml").display().to_string();
    let fake = FakeInstance::start(exposing(healthy()));
    let host = fake.host_port();
    let first = run(&dir, &host, DAY_1, &["--warn-on-new", "--policy", &policy]);
    assert_eq!(first.code, 2, "{}", first.stdout);
    let second = run(&dir, &host, DAY_2, &["--warn-on-new", "--policy", &policy]);
    assert_eq!(second.code, 2, "{}", second.stdout);
    assert!(
        second
            .line(0)
            .starts_with("CRITICAL: policy requirement(s) unmet"),
        "{}",
        second.stdout
    );
    // Without the policy the same baseline reports OK.
    let third = run(&dir, &host, DAY_2, &["--warn-on-new"]);
    assert_eq!(third.code, 0, "{}", third.stdout);
    drop(fake);
}

#[test]
fn a_temporary_file_left_by_a_killed_run_is_removed_by_the_next() {
    let dir = scratch("leftover");
    let fake = FakeInstance::start(healthy());
    // What a run killed between writing and renaming leaves: its pid no longer runs (this
    // one is above the kernel's pid limit).
    let leftover = dir.join(".baseline.json.4194305.0.tmp");
    std::fs::write(&leftover, "{\"version\": 1, \"hos").unwrap();
    let first = run(&dir, &fake.host_port(), DAY_1, &[]);
    assert_eq!(first.code, 0, "{}", first.stdout);
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    assert_eq!(stored(&dir)["version"], 1);
}
