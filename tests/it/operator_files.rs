//! Operator files (issue 9): whatever the operator points the plugin at, one wrong file ends
//! the run UNKNOWN with one line, quickly, in little memory, and before the first packet.
//!
//! Every run has a watchdog: a run still going after 20 s hangs (a FIFO opened for reading
//! waits for a writer forever) and fails the test instead of hanging the suite. Peak memory
//! is the child's VmHWM, read from `/proc/<pid>/status` while it runs (Linux; elsewhere the
//! memory bounds are not checked). The bound holds for the debug build the tests run; the
//! release binary's figures are in docs/performance.md (Limits).

use crate::support::plugin::{NOW, scratch};
use crate::support::{FakeInstance, InstanceConfig};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use storage_security::files::Kind;

/// A run still going after this hangs.
const WATCHDOG: Duration = Duration::from_secs(20);

/// The most memory (VmHWM, KiB) a run refusing a hostile file may take. The goal is
/// 32 MiB for one host; today's reads took 72 MiB (an alias bomb) to 1.59 GB (a baseline).
const MAX_PEAK_KIB: u64 = 32 * 1024;

struct Run {
    args: Vec<String>,
    stdout: String,
    code: i32,
    /// VmHWM in KiB; `None` where `/proc` cannot tell.
    peak_kib: Option<u64>,
    took: Duration,
}

impl Run {
    /// Exit 3 with one line: `UNKNOWN: ...`, returned without the prefix.
    fn refusal(&self) -> &str {
        assert_eq!(self.code, 3, "{:?}: {}", self.args, self.stdout);
        assert_eq!(
            self.stdout.lines().count(),
            1,
            "{:?}: not one line: {}",
            self.args,
            self.stdout
        );
        self.stdout
            .trim_end()
            .strip_prefix("UNKNOWN: ")
            .unwrap_or_else(|| panic!("{:?}: {}", self.args, self.stdout))
    }

    fn assert_small(&self) {
        if let Some(peak) = self.peak_kib {
            assert!(
                peak <= MAX_PEAK_KIB,
                "{:?} took {peak} KiB, more than {MAX_PEAK_KIB} KiB: {}",
                self.args,
                self.stdout
            );
        }
    }
}

/// Runs the plugin in `dir` (its working directory and HOME) with a cleared environment plus
/// `env`, under the watchdog, following its peak memory.
fn run(dir: &Path, args: &[String], env: &[(String, String)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_check-storage-security"));
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("COS_NOW", NOW)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let started = Instant::now();
    let mut child = command.spawn().expect("run the plugin");
    let mut out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = None;
    let status = loop {
        if let Some(kib) = vm_hwm(&status_file) {
            peak_kib = Some(peak_kib.unwrap_or(0).max(kib));
        }
        match child.try_wait().expect("wait for the plugin") {
            Some(status) => break status,
            None if started.elapsed() > WATCHDOG => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?} still ran after {WATCHDOG:?}: it hangs (killed)");
            }
            // Waiting for the child, not for time to pass: it ends as soon as it exits.
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    };
    Run {
        args: args.to_vec(),
        stdout: reader.join().unwrap_or_default(),
        code: status.code().expect("exit code"),
        peak_kib,
        took: started.elapsed(),
    }
}

/// The high-water mark of the resident set, in KiB.
fn vm_hwm(status_file: &str) -> Option<u64> {
    let text = std::fs::read_to_string(status_file).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The flags of a scan of `fake` that needs nothing from this machine.
fn scan_args(fake: &FakeInstance) -> Vec<String> {
    strings(&[
        "-H",
        &fake.host_port(),
        "--update-source",
        "bundled",
        "--no-debug-ports",
        "--retries",
        "0",
        "--backoff-factor",
        "0",
    ])
}

/// A sparse file of `len` bytes: as large as asked, without the disk space.
fn sparse(path: &Path, len: u64) -> PathBuf {
    let file = std::fs::File::create(path).unwrap();
    file.set_len(len).unwrap();
    path.to_path_buf()
}

fn fifo(path: &Path) -> PathBuf {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
    path.to_path_buf()
}

/// Extra flags and variables of a run.
type Given = (Vec<String>, Vec<(String, String)>);

/// One setting that names a file: how a path is given, and how the refusal names it.
struct Setting {
    kind: Kind,
    /// Flags and variables that give `path` to the setting.
    give: fn(&str) -> Given,
    /// The refusal's line up to the problem, for `path`.
    named: fn(&str) -> String,
}

fn flag(name: &'static str) -> impl Fn(&str) -> Given {
    move |path| (strings(&[name, path]), Vec::new())
}

fn settings() -> Vec<(&'static str, Setting)> {
    vec![
        (
            "--config",
            Setting {
                kind: Kind::Configuration,
                give: |p| flag("--config")(p),
                named: |p| format!("configuration file {p} "),
            },
        ),
        (
            "--policy",
            Setting {
                kind: Kind::Policy,
                give: |p| flag("--policy")(p),
                named: |p| format!("policy file {p} "),
            },
        ),
        (
            "--baseline",
            Setting {
                kind: Kind::Baseline,
                give: |p| flag("--baseline")(p),
                named: |p| format!("baseline file {p} "),
            },
        ),
        (
            "--ca-file",
            Setting {
                kind: Kind::CaBundle,
                give: |p| flag("--ca-file")(p),
                named: |p| format!("--ca-file {p} "),
            },
        ),
        (
            "scanner.vulnerability_db",
            Setting {
                kind: Kind::AdvisoryFile,
                give: |p| {
                    (
                        Vec::new(),
                        vec![("COS_SCANNER_VULNERABILITY_DB".into(), p.into())],
                    )
                },
                named: |p| format!("scanner.vulnerability_db file {p} "),
            },
        ),
        (
            "scanner.release_schedule",
            Setting {
                kind: Kind::ReleaseSchedule,
                give: |p| {
                    (
                        Vec::new(),
                        vec![("COS_SCANNER_RELEASE_SCHEDULE".into(), p.into())],
                    )
                },
                named: |p| format!("scanner.release_schedule file {p} "),
            },
        ),
        (
            "file:// reference",
            Setting {
                kind: Kind::Value,
                // The token is read only where the feed is asked: the feed mode, its address a
                // closed loopback port (never reached: the reference is refused first).
                give: |p| {
                    (
                        strings(&[
                            "--release-token",
                            &format!("file://{p}"),
                            "--update-source",
                            "feed",
                        ]),
                        vec![(
                            "COS_RELEASES_URL".into(),
                            "http://127.0.0.1:9/releases".into(),
                        )],
                    )
                },
                named: |p| format!("--release-token: secret reference \"file://{p}\": the file "),
            },
        ),
        (
            "_FILE variable",
            Setting {
                kind: Kind::Value,
                give: |p| {
                    (
                        strings(&["--update-source", "feed"]),
                        vec![
                            ("COS_RELEASES_TOKEN_FILE".into(), p.into()),
                            (
                                "COS_RELEASES_URL".into(),
                                "http://127.0.0.1:9/releases".into(),
                            ),
                        ],
                    )
                },
                named: |p| format!("COS_RELEASES_TOKEN_FILE: value file \"{p}\": the file "),
            },
        ),
    ]
}

#[test]
fn files_that_are_not_regular_files_or_too_large_are_refused_before_the_first_packet() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let dir = scratch("operator-files-refused");
    let home = scratch("operator-files-refused-home");
    let fifo = fifo(&dir.join("fifo"));
    let directory = dir.join("a-directory");
    std::fs::create_dir_all(&directory).unwrap();
    for (name, setting) in settings() {
        let cap = setting.kind.cap();
        let oversized = sparse(&dir.join(format!("oversized-{}", cap + 1)), cap + 1);
        let mut cases: Vec<(PathBuf, String)> = vec![
            (
                PathBuf::from("/dev/zero"),
                "is a character device, not a regular file; ".into(),
            ),
            (
                fifo.clone(),
                "is a FIFO (named pipe), not a regular file; ".into(),
            ),
            (
                directory.clone(),
                "is a directory, not a regular file; ".into(),
            ),
            (
                oversized,
                format!(
                    "is larger than {} ({} bytes); ",
                    storage_security::files::size_text(cap),
                    cap + 1
                ),
            ),
        ];
        // A missing baseline is recorded by the run; every other missing file is an error.
        if setting.kind != Kind::Baseline {
            cases.push((dir.join("missing"), "does not exist; ".into()));
        }
        for (path, problem) in cases {
            let path = path.display().to_string();
            let (extra, env) = (setting.give)(&path);
            let mut args = scan_args(&fake);
            args.extend(extra);
            let run = run(&home, &args, &env);
            let line = run.refusal();
            let expected = format!("{}{problem}{}", (setting.named)(&path), setting.kind.fix());
            assert_eq!(line, expected, "{name}");
            assert!(
                run.took < Duration::from_secs(5),
                "{name} {path}: {:?}",
                run.took
            );
        }
    }
    // Every refusal came before the first packet.
    assert_eq!(fake.request_count(), 0, "{:?}", fake.requests());
}

#[test]
fn a_path_read_from_a_reference_is_named_by_the_reference() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let home = scratch("operator-files-reference");
    let mut args = scan_args(&fake);
    args.extend(strings(&["--baseline", "env://BASELINE_PATH"]));
    let env = [("BASELINE_PATH".to_string(), "/dev/zero".to_string())];
    let run = run(&home, &args, &env);
    assert_eq!(
        run.refusal(),
        "baseline file (from env://BASELINE_PATH) is a character device, not a regular file; \
         point --baseline at a baseline file, or at a path that does not exist yet to record one"
    );
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn a_missing_release_schedule_is_reported_before_the_scan() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let home = scratch("operator-files-schedule");
    let env = [(
        "COS_SCANNER_RELEASE_SCHEDULE".to_string(),
        "/nonexistent/schedule.json".to_string(),
    )];
    let run = run(&home, &scan_args(&fake), &env);
    assert_eq!(
        run.refusal(),
        "scanner.release_schedule file /nonexistent/schedule.json does not exist; point \
         scanner.release_schedule at a release schedule JSON file"
    );
    assert_eq!(fake.request_count(), 0, "{:?}", fake.requests());
}

#[test]
fn a_baseline_that_could_not_be_recorded_is_reported_before_the_scan() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let home = scratch("operator-files-baseline-dir");
    let mut args = scan_args(&fake);
    args.extend([
        "--baseline".to_string(),
        "/nonexistent/dir/b.json".to_string(),
    ]);
    let run = run(&home, &args, &[]);
    assert_eq!(
        run.refusal(),
        "baseline file /nonexistent/dir/b.json cannot be recorded: its directory does not \
         exist; create it or point --baseline into an existing directory"
    );
    assert_eq!(fake.request_count(), 0, "{:?}", fake.requests());
}

// --- Memory: hostile files that today take tens of MiB to gigabytes ------------------------

/// `[{"":0},{"":0},...]` of at most `len` bytes.
fn empty_objects(len: usize) -> String {
    let mut text = String::with_capacity(len);
    text.push('[');
    while text.len() + 2 * "{\"\":0},".len() < len {
        text.push_str("{\"\":0},");
    }
    text.push_str("{\"\":0}]");
    assert!(text.len() <= len);
    text
}

#[test]
fn a_16_mib_baseline_of_empty_objects_is_refused_unread() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let home = scratch("operator-files-baseline-16m");
    let path = home.join("baseline.json");
    let text = empty_objects(16 * 1024 * 1024);
    std::fs::write(&path, &text).unwrap();
    let mut args = scan_args(&fake);
    args.extend(strings(&["--baseline", &path.display().to_string()]));
    let run = run(&home, &args, &[]);
    assert!(
        run.refusal().starts_with(&format!(
            "baseline file {} is larger than 4 MiB ({}); ",
            path.display(),
            storage_security::files::size_text(text.len() as u64)
        )),
        "{}",
        run.stdout
    );
    run.assert_small();
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn a_baseline_of_tiny_ids_within_the_cap_is_refused_in_little_memory() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let home = scratch("operator-files-baseline-ids");
    let path = home.join("baseline.json");
    // A valid baseline just under the cap: one host, hundreds of thousands of short ids,
    // which as strings in a set would take ten times the file.
    let mut text = String::from(
        "{\"version\": 1, \"hosts\": {\"a.example\": {\"recordedAt\": \"2026-11-22T03:00:00Z\", \
         \"rating\": 5, \"fingerprint\": null, \"concluded\": [], \"failed\": [",
    );
    let mut n = 0u64;
    while text.len() < Kind::Baseline.cap() as usize - 64 {
        text.push_str(&format!("\"{n:x}\","));
        n += 1;
    }
    text.push_str("\"end\"]}}}");
    std::fs::write(&path, &text).unwrap();
    let mut args = scan_args(&fake);
    args.extend(strings(&["--baseline", &path.display().to_string()]));
    let run = run(&home, &args, &[]);
    assert_eq!(
        run.refusal(),
        format!(
            "baseline file {} holds more than 65536 finding ids (hosts hold about 60 each); \
             delete it to record a new baseline",
            path.display()
        )
    );
    run.assert_small();
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn a_1_mib_configuration_of_empty_objects_is_refused_in_little_memory() {
    let home = scratch("operator-files-config-1m");
    let path = home.join("config.json");
    for (name, text) in [
        ("top level", empty_objects(1024 * 1024 - 64)),
        (
            "under a key",
            format!(
                "{{\"host\": \"a.example\", \"scanner\": {{\"debug_ports\": {}}}}}",
                empty_objects(1024 * 1024 - 128)
            ),
        ),
        (
            "a long list",
            format!(
                "{{\"scanner\": {{\"vulnerability_db\": [{}\"a\"]}}}}",
                "\"a\",".repeat(250_000)
            ),
        ),
    ] {
        std::fs::write(&path, &text).unwrap();
        let args = strings(&["--config", &path.display().to_string()]);
        let run = run(&home, &args, &[]);
        let line = run.refusal();
        let shown = path.display();
        let expected = match name {
            "top level" => format!(
                "configuration file {shown} must hold a mapping of keys to values at the top level"
            ),
            "under a key" => format!(
                "configuration file {shown}: key \"scanner.debug_ports\" must be a list of plain \
                 values"
            ),
            _ => format!(
                "configuration file {shown}: holds more than 10000 list entries (at key \
                 \"scanner.vulnerability_db\"); a configuration names far fewer hosts and files"
            ),
        };
        assert_eq!(line, expected, "{name}");
        run.assert_small();
    }
}

#[test]
fn a_1_mib_policy_of_empty_objects_is_refused_in_little_memory() {
    let home = scratch("operator-files-policy-1m");
    let path = home.join("policy.json");
    for text in [
        empty_objects(1024 * 1024 - 64),
        format!("{{\"forbidden\": {}}}", empty_objects(1024 * 1024 - 64)),
        format!("{{\"unknown\": {}}}", empty_objects(1024 * 1024 - 64)),
    ] {
        std::fs::write(&path, &text).unwrap();
        let fake = FakeInstance::start(InstanceConfig::default());
        let mut args = scan_args(&fake);
        args.extend(strings(&["--policy", &path.display().to_string()]));
        let run = run(&home, &args, &[]);
        let line = run.refusal();
        assert!(
            line.starts_with(&format!("policy file {}: ", path.display())),
            "{line}"
        );
        assert!(
            [
                "the top level is a list, not a mapping",
                "forbidden has more than 4096 entries",
                "unknown key \"unknown\"",
            ]
            .iter()
            .any(|problem| line.contains(problem)),
            "{line}"
        );
        run.assert_small();
        assert_eq!(fake.request_count(), 0);
    }
}

/// A "billion laughs" document: ten levels of nine aliases each, 9^10 nodes expanded.
fn billion_laughs(first_key: &str) -> String {
    let mut text = format!("{first_key}: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..10 {
        let aliases = vec![format!("*a{}", level - 1); 9].join(", ");
        text.push_str(&format!("l{level}: &a{level} [{aliases}]\n"));
    }
    text
}

#[test]
fn a_yaml_alias_bomb_is_refused_saying_so() {
    let home = scratch("operator-files-alias-bomb");
    let budget = "over the YAML alias budget (64 aliases, 1024 nodes repeated through them); \
                  write the values out instead of aliasing them";

    let policy = home.join("policy.yml");
    std::fs::write(&policy, billion_laughs("forbidden")).unwrap();
    let fake = FakeInstance::start(InstanceConfig::default());
    let mut args = scan_args(&fake);
    args.extend(strings(&["--policy", &policy.display().to_string()]));
    let refused = run(&home, &args, &[]);
    assert_eq!(
        refused.refusal(),
        format!("policy file {}: {budget}", policy.display())
    );
    refused.assert_small();

    // A configuration stops at the first key it does not know, before any alias is replayed;
    // within known keys, aliases count against the same budget.
    let config = home.join("config.yml");
    std::fs::write(&config, billion_laughs("host")).unwrap();
    let refused = run(
        &home,
        &strings(&["--config", &config.display().to_string()]),
        &[],
    );
    assert!(
        refused
            .refusal()
            .starts_with(&format!("configuration file {}: ", config.display())),
        "{}",
        refused.stdout
    );
    refused.assert_small();
    let aliases = vec!["*h"; 100_000].join(", ");
    std::fs::write(
        &config,
        format!("host: &h a.example\nscanner:\n  vulnerability_db: [{aliases}]\n"),
    )
    .unwrap();
    let refused = run(
        &home,
        &strings(&["--config", &config.display().to_string()]),
        &[],
    );
    assert_eq!(
        refused.refusal(),
        format!("configuration file {} is {budget}", config.display())
    );
    refused.assert_small();
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn a_150_mib_ca_file_is_refused_unread() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let home = scratch("operator-files-ca-150m");
    let path = sparse(&home.join("ca.pem"), 150 * 1024 * 1024);
    let mut args = scan_args(&fake);
    args.extend(strings(&["--ca-file", &path.display().to_string()]));
    let run = run(&home, &args, &[]);
    assert_eq!(
        run.refusal(),
        format!(
            "--ca-file {} is larger than 4 MiB (150 MiB); give --ca-file the path of a PEM \
             bundle of the CA",
            path.display()
        )
    );
    run.assert_small();
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn a_baseline_of_a_thousand_hosts_is_read_and_written_back_in_little_memory() {
    let fake = FakeInstance::start(InstanceConfig::default().version("4.0.0"));
    let home = scratch("operator-files-baseline-fleet");
    let path = home.join("baseline.json");
    let ca = fake.ca_file().display().to_string();
    let mut args = scan_args(&fake);
    args.extend(strings(&[
        "--ca-file",
        &ca,
        "--check-hardening",
        "--baseline",
        &path.display().to_string(),
    ]));
    // The first run records the fake instance; its entry then stands for a thousand hosts.
    let first = run(&home, &args, &[]);
    assert_eq!(first.code, 2, "{}", first.stdout);
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let entry = recorded["hosts"][fake.host_port()].clone();
    let mut hosts = serde_json::Map::new();
    for n in 0..1000 {
        hosts.insert(format!("cloud{n}.example.com"), entry.clone());
    }
    let fleet = serde_json::json!({"version": 1, "hosts": hosts});
    let text = serde_json::to_string_pretty(&fleet).unwrap() + "\n";
    assert!(text.len() > 2 * 1024 * 1024, "{} bytes", text.len());
    std::fs::write(&path, &text).unwrap();

    let second = run(&home, &args, &[]);
    assert_eq!(second.code, 2, "{}", second.stdout);
    assert!(
        second.stdout.contains("Baseline: recorded on this run"),
        "{}",
        second.stdout
    );
    second.assert_small();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(written["hosts"].as_object().unwrap().len(), 1001);
}
