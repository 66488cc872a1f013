//! The plugin under the real Icinga 2 (Debian 12's 2.13), and `promtool` present for
//! `tests/it/format_metrics.rs`; `make deps` (`packaging/ci-deps.sh`) installs both.
//!
//! A throw-away configuration in a temporary directory, the daemon in the foreground with every
//! path defined into that directory, one Host and one Service per scenario whose CheckCommand
//! runs the plugin against a fake instance on loopback, and a `PerfdataWriter` that records
//! what Icinga made of each result: `$service.state$`, `$service.output$` and
//! `$service.perfdata$`. The perfdata Icinga writes is its own re-serialisation of the labels
//! and values it parsed, so a label that comes back with a space shows how Icinga read it.
//!
//! What Icinga 2.13 does with plugin output (seen here, and in the control service below):
//! stdout with stderr appended, trimmed, split into lines; from every line holding a `|`
//! followed by a `=` the part after the `|` is perfdata (the parts joined with one space) and
//! the part before it stays in the output, trailing spaces included. The output is those
//! lines joined with `\n`, not trimmed again: the plugin's `|` line leaves an empty last line,
//! so the stored output is line 1 and the detail lines, each ending in `\n`. A label is
//! whatever stands between a space and the next `=`, so a second perfdata part that starts
//! with a space (`| rating=`) keeps that space in its label (written back as `' rating'`).

use crate::support::{FakeInstance, InstanceConfig};
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NOW: &str = crate::support::PINNED_NOW;
const PLUGIN: &str = env!("CARGO_BIN_EXE_check-storage-security");
/// How long the daemon gets to record a result for every service.
const RESULT_DEADLINE: Duration = Duration::from_secs(60);
/// The environment of the daemon, and so of the plugin it runs (plus the CheckCommand's `env`
/// and Icinga's own `LC_NUMERIC=C`).
const SEARCH_PATH: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

/// Field markers of one PerfdataWriter record: the output spans several lines.
const RESULT: &str = "<<<RESULT>>>";
const STATE: &str = "<<<STATE>>>";
const OUTPUT: &str = "<<<OUTPUT>>>";
const PERFDATA: &str = "<<<PERFDATA>>>";
const END: &str = "<<<END>>>";

fn healthy(version: &str) -> InstanceConfig {
    InstanceConfig::default()
        .version(version)
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
}

/// A program on `PATH` or in the system directories (`/usr/sbin` is not on every `PATH`).
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(std::env::split_paths(SEARCH_PATH))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn icinga2_binary() -> PathBuf {
    find_program("icinga2").unwrap_or_else(|| panic!("icinga2 is not installed: run `make deps`"))
}

fn promtool_binary() -> PathBuf {
    find_program("promtool").unwrap_or_else(|| panic!("promtool is not installed: run `make deps`"))
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An Icinga 2 string literal. `$` is doubled: command arguments and `env` values are
/// resolved as macros.
fn icinga_string(value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('$', "$$");
    format!("\"{escaped}\"")
}

fn path_string(path: &Path) -> String {
    icinga_string(&path.display().to_string())
}

fn id(flag: &str) -> String {
    let out = Command::new("id").arg(flag).output().expect("run id");
    assert!(out.status.success(), "id {flag} failed");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// One Host and one Service: the plugin with these targets.
struct Scenario {
    name: &'static str,
    hosts: String,
    expected_code: i32,
    /// Metrics that must reach Icinga (a failed scan has no `vulnerabilities`).
    metrics: &'static [&'static str],
}

impl Scenario {
    /// The CheckCommand's `command`.
    fn command(&self, ca: &Path) -> Vec<String> {
        std::iter::once(PLUGIN.to_string())
            .chain(self.plugin_args(ca))
            .collect()
    }

    fn plugin_args(&self, ca: &Path) -> Vec<String> {
        [
            "-H",
            &self.hosts,
            "--ca-file",
            &ca.display().to_string(),
            "--update-source",
            "bundled",
            "--no-debug-ports",
            "--backoff-factor",
            "0",
        ]
        .map(String::from)
        .to_vec()
    }
}

/// The throw-away configuration, its `--define`s and the daemon's files.
struct Rig {
    dir: PathBuf,
    conf: PathBuf,
    perfdata_dir: PathBuf,
    defines: Vec<String>,
}

impl Rig {
    /// `services`: a host name and the command its one Service runs.
    fn new(dir: &Path, services: &[(&str, Vec<String>)]) -> Rig {
        let sub = |name: &str| {
            let path = dir.join(name);
            std::fs::create_dir_all(&path).unwrap();
            path
        };
        let (etc, lib, cache, spool, log, run) = (
            sub("etc"),
            sub("lib"),
            sub("cache"),
            sub("spool"),
            sub("log"),
            sub("run"),
        );
        let perfdata_dir = sub("perfdata");
        // Every path Icinga 2.13 knows, from `icinga2 --version` ("General paths", "Internal
        // paths"). The deprecated LocalStateDir, SysconfDir and RunDir are left alone: setting
        // them recomputes the others from them.
        let defines = [
            ("ConfigDir", etc.clone()),
            ("DataDir", lib.clone()),
            ("LogDir", log),
            ("CacheDir", cache.clone()),
            ("SpoolDir", spool),
            ("InitRunDir", run.clone()),
            ("StatePath", lib.join("icinga2.state")),
            ("ModAttrPath", lib.join("modified-attributes.conf")),
            ("ObjectsPath", cache.join("icinga2.debug")),
            ("VarsPath", cache.join("icinga2.vars")),
            ("PidPath", run.join("icinga2.pid")),
        ]
        .into_iter()
        .map(|(name, path)| format!("--define={name}={}", path.display()))
        .chain([
            // Run as whoever runs the test: as root Icinga would switch to `nagios`.
            format!("--define=RunAsUser={}", id("-un")),
            format!("--define=RunAsGroup={}", id("-gn")),
        ])
        .collect();

        let in_perfdata = |name: &str| path_string(&perfdata_dir.join(name));
        let template = format!(
            "{RESULT}$host.name${STATE}$service.state${OUTPUT}$service.output${PERFDATA}$service.perfdata${END}"
        );
        let mut conf = format!(
            "// Written by tests/it/icinga2.rs.
include <itl>

object CheckerComponent \"checker\" {{ }}

object PerfdataWriter \"results\" {{
  host_perfdata_path = {}
  host_temp_path = {}
  service_perfdata_path = {}
  service_temp_path = {}
  service_format_template = \"{template}\"
  rotation_interval = 1s
}}
",
            in_perfdata("host-perfdata"),
            in_perfdata("host-perfdata.tmp"),
            in_perfdata("service-perfdata"),
            in_perfdata("service-perfdata.tmp"),
        );
        for (name, command) in services {
            let command = command
                .iter()
                .map(|arg| icinga_string(arg))
                .collect::<Vec<_>>()
                .join(", ");
            conf.push_str(&format!(
                "
object CheckCommand \"storage_security_{name}\" {{
  command = [ {command} ]
  env = {{ COS_NOW = {now} }}
  timeout = 60s
}}

object Host \"{name}\" {{
  check_command = \"dummy\"
  enable_active_checks = false
}}

object Service \"storage-security\" {{
  host_name = \"{name}\"
  check_command = \"storage_security_{name}\"
  check_interval = 1s
  retry_interval = 1s
  max_check_attempts = 1
}}
",
                now = icinga_string(NOW),
            ));
        }
        let conf_path = etc.join("icinga2.conf");
        std::fs::write(&conf_path, conf).unwrap();
        Rig {
            dir: dir.to_path_buf(),
            conf: conf_path,
            perfdata_dir,
            defines,
        }
    }

    fn command(&self, icinga2: &Path) -> Command {
        self.command_with(icinga2, &[], &[])
    }

    /// The daemon's command with more `--define`s and variables in its environment (which
    /// every plugin it runs inherits).
    fn command_with(&self, icinga2: &Path, defines: &[&str], env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(icinga2);
        command
            .arg("daemon")
            .arg("-c")
            .arg(&self.conf)
            .args(&self.defines)
            .env_clear()
            .env("PATH", SEARCH_PATH)
            .env("HOME", &self.dir)
            .envs(env.iter().copied())
            .args(defines)
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        command
    }

    /// `icinga2 daemon -C`: a configuration error shows here with Icinga's message.
    fn validate(&self, icinga2: &Path) {
        self.validate_with(icinga2, &[]);
    }

    fn validate_with(&self, icinga2: &Path, defines: &[&str]) {
        let out = self
            .command_with(icinga2, defines, &[])
            .arg("-C")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "icinga2 daemon -C rejected {}:\n{}{}",
            self.conf.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Every complete record the PerfdataWriter wrote so far (rotated files and the open one).
    fn records(&self) -> Vec<Recorded> {
        let mut text = String::new();
        for entry in std::fs::read_dir(&self.perfdata_dir).unwrap().flatten() {
            if entry.file_name().to_string_lossy().starts_with("service-") {
                // A file rotated away between listing and reading is read on the next poll.
                text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
            }
        }
        text.split(RESULT).filter_map(Recorded::parse).collect()
    }
}

/// What the PerfdataWriter recorded for one check result.
#[derive(Debug, Clone)]
struct Recorded {
    host: String,
    state: String,
    output: String,
    perfdata: String,
}

impl Recorded {
    fn parse(record: &str) -> Option<Recorded> {
        let record = &record[..record.find(END)?];
        let (host, rest) = record.split_once(STATE)?;
        let (state, rest) = rest.split_once(OUTPUT)?;
        let (output, perfdata) = rest.split_once(PERFDATA)?;
        Some(Recorded {
            host: host.to_string(),
            state: state.to_string(),
            output: output.to_string(),
            perfdata: perfdata.to_string(),
        })
    }
}

/// The daemon in its own process group: dropping it (also on panic) stops the umbrella
/// process, the worker it forks and the process spawn helper.
struct Daemon {
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn start(rig: &Rig, icinga2: &Path) -> Daemon {
        Daemon::start_with(rig, icinga2, &[], &[])
    }

    fn start_with(rig: &Rig, icinga2: &Path, defines: &[&str], env: &[(&str, &str)]) -> Daemon {
        let log = rig.dir.join("daemon.log");
        let file = File::create(&log).unwrap();
        let child = rig
            .command_with(icinga2, defines, env)
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .process_group(0)
            .spawn()
            .expect("start icinga2 daemon");
        Daemon { child, log }
    }

    /// Whether the umbrella process has ended, without reaping it: while it is a zombie its
    /// pid, and so the process group id, cannot be reused, so signalling the group stays safe.
    fn exited(&self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()));
        match stat {
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_none_or(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
            Err(_) => true,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends `signal` to the umbrella process (`group` false) or to its whole process group.
    /// The shell's `kill` builtin: std only sends SIGKILL, and to one process.
    fn signal(&self, signal: &str, group: bool) {
        let target = if group {
            format!("-{}", self.child.id())
        } else {
            self.child.id().to_string()
        };
        let _ = Command::new("/bin/sh")
            .args(["-c", "kill -s \"$0\" -- \"$1\" 2>/dev/null"])
            .arg(signal)
            .arg(target)
            .env_clear()
            .status();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // As systemd's `KillMode=mixed` in Debian's unit: SIGTERM to the umbrella process,
        // which stops its worker (about half a second; a SIGTERM to the whole group makes the
        // worker shut down twice and fail renaming its state file), then SIGKILL to whatever
        // is left of the group. Plugins run in their own sessions and end by themselves (a
        // scan of loopback takes milliseconds).
        self.signal("TERM", false);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.exited() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.signal("KILL", true);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The plugin run directly, as Icinga runs it (same arguments, environment and directory).
struct Direct {
    stdout: String,
    stderr: String,
    code: i32,
}

impl Direct {
    fn run(scenario: &Scenario, ca: &Path, dir: &Path) -> Direct {
        let out = Command::new(PLUGIN)
            .args(scenario.plugin_args(ca))
            .env_clear()
            .env("PATH", SEARCH_PATH)
            .env("HOME", dir)
            .env("COS_NOW", NOW)
            .current_dir(dir)
            .output()
            .unwrap();
        Direct {
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
            code: out.status.code().unwrap(),
        }
    }

    fn state(&self) -> &'static str {
        match self.code {
            0 => "OK",
            1 => "WARNING",
            2 => "CRITICAL",
            _ => "UNKNOWN",
        }
    }

    /// Line 1 and the detail lines: everything but the last line, the `|` performance data.
    fn text(&self) -> String {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let (last, text) = lines.split_last().expect("the plugin printed nothing");
        assert!(
            last.starts_with('|'),
            "the last line is not the performance data:\n{}",
            self.stdout
        );
        assert!(
            text.iter().all(|line| !line.contains('|')),
            "a '|' before the last line:\n{}",
            self.stdout
        );
        text.join("\n")
    }

    fn perfdata(&self) -> &str {
        let last = self.stdout.lines().last().unwrap_or("");
        last.strip_prefix('|').unwrap_or(last)
    }
}

/// One performance data item: the label as written (quoted or not), the label it stands for,
/// and the value with its thresholds.
#[derive(Debug, Clone, PartialEq)]
struct Perf {
    written: String,
    label: String,
    value: String,
}

/// Splits performance data the way the monitoring-plugin guidelines write it: items separated
/// by spaces, a label in single quotes may hold spaces (`''` is a quote), then `=value;...`.
fn parse_perfdata(perfdata: &str) -> Vec<Perf> {
    let chars: Vec<char> = perfdata.chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
    loop {
        while i < chars.len() && chars[i] == ' ' {
            i += 1;
        }
        if i == chars.len() {
            return items;
        }
        let start = i;
        let mut label = String::new();
        if chars[i] == '\'' {
            i += 1;
            loop {
                assert!(i < chars.len(), "unterminated quoted label in {perfdata:?}");
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        label.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                label.push(chars[i]);
                i += 1;
            }
        } else {
            while i < chars.len() && chars[i] != '=' && chars[i] != ' ' {
                label.push(chars[i]);
                i += 1;
            }
        }
        assert!(
            chars.get(i) == Some(&'='),
            "no '=' after label {label:?} in {perfdata:?}"
        );
        let written: String = chars[start..i].iter().collect();
        i += 1;
        let value_start = i;
        while i < chars.len() && chars[i] != ' ' {
            i += 1;
        }
        items.push(Perf {
            written,
            label,
            value: chars[value_start..i].iter().collect(),
        });
    }
}

fn is_metric(label: &str, metric: &str) -> bool {
    label == metric || label.ends_with(&format!(" {metric}"))
}

/// `0.021s;;;0` -> `s;;;0`: the scan time differs between two runs, its unit and thresholds
/// do not.
fn without_number(value: &str) -> &str {
    value.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
}

/// Every label Icinga recorded must be one the plugin printed, without surrounding
/// whitespace, with the same value and thresholds (the scan time aside), in the same order.
fn perfdata_problems(name: &str, printed: &str, recorded: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let printed_items = parse_perfdata(printed);
    let printed_by_label: BTreeMap<&str, &Perf> = printed_items
        .iter()
        .map(|p| (p.label.as_str(), p))
        .collect();
    let parsed = parse_perfdata(recorded);
    for item in &parsed {
        if item.label != item.label.trim() {
            problems.push(format!(
                "{name}: PLUGIN BUG: Icinga recorded the perfdata label {:?} (written {}) with \
                 leading/trailing whitespace; the plugin printed {:?}",
                item.label, item.written, printed
            ));
            continue;
        }
        let Some(original) = printed_by_label.get(item.label.as_str()) else {
            problems.push(format!(
                "{name}: Icinga recorded the perfdata label {:?} (written {}), which the plugin \
                 did not print; the plugin printed {:?}",
                item.label, item.written, printed
            ));
            continue;
        };
        let same = if is_metric(&item.label, "time") {
            without_number(&item.value) == without_number(&original.value)
        } else {
            item.value == original.value
        };
        if !same {
            problems.push(format!(
                "{name}: {:?}: Icinga recorded {:?}, the plugin printed {:?}",
                item.label, item.value, original.value
            ));
        }
    }
    let labels = |items: &[Perf]| items.iter().map(|p| p.label.clone()).collect::<Vec<_>>();
    if labels(&parsed) != labels(&printed_items) {
        problems.push(format!(
            "{name}: Icinga recorded the labels {:?}, the plugin printed {:?}",
            labels(&parsed),
            labels(&printed_items)
        ));
    }
    problems
}

/// Compares what Icinga recorded with the plugin's own run; returns the problems found.
fn compare(scenario: &Scenario, direct: &Direct, recorded: &Recorded) -> Vec<String> {
    let mut problems = Vec::new();
    let name = scenario.name;
    if direct.code != scenario.expected_code {
        problems.push(format!(
            "{name}: the plugin exited {} (expected {}):\n{}",
            direct.code, scenario.expected_code, direct.stdout
        ));
    }
    if !direct.stderr.is_empty() {
        problems.push(format!(
            "{name}: the plugin wrote to stderr, which Icinga appends to the output: {:?}",
            direct.stderr
        ));
    }
    if recorded.state != direct.state() {
        problems.push(format!(
            "{name}: Icinga recorded state {} but the plugin exited {} ({})",
            recorded.state,
            direct.code,
            direct.state()
        ));
    }
    // Icinga keeps the text before the `|` of every line: the perfdata line leaves an empty
    // last line, so the stored output ends with a newline.
    let text = format!("{}\n", direct.text());
    if recorded.output != text {
        problems.push(format!(
            "{name}: Icinga recorded the output\n{:?}\nbut the plugin's text without the performance data (and the newline the `|` line leaves) is\n{:?}",
            recorded.output, text
        ));
    }

    problems.extend(perfdata_problems(
        name,
        direct.perfdata(),
        &recorded.perfdata,
    ));
    let parsed = parse_perfdata(&recorded.perfdata);
    for metric in scenario.metrics {
        if !parsed.iter().any(|p| is_metric(&p.label, metric)) {
            problems.push(format!(
                "{name}: no {metric} in what Icinga recorded: {:?}",
                recorded.perfdata
            ));
        }
    }
    problems
}

/// Not the plugin: what Icinga makes of a second perfdata part that starts with a space (the
/// form the issue warns about). It shows that a label with a space would be seen here.
const CONTROL: &str = "printf 'OK: control | first=1\\ndetail\\n| rating=5;@0:3;@0:1;0;5\\n'";

#[test]
fn icinga2_records_the_plugins_state_output_and_perfdata() {
    let icinga2 = icinga2_binary();
    let ok = FakeInstance::start(healthy("8.1.0"));
    let critical = FakeInstance::start(InstanceConfig::default());
    let ca = ok.ca_file();
    let scanned = &["rating", "vulnerabilities", "time"];
    let scenarios = [
        Scenario {
            name: "healthy",
            hosts: ok.host_port(),
            expected_code: 0,
            metrics: scanned,
        },
        Scenario {
            name: "critical",
            hosts: critical.host_port(),
            expected_code: 2,
            metrics: scanned,
        },
        Scenario {
            name: "two-hosts",
            hosts: format!("{},{}", ok.host_port(), critical.host_port()),
            expected_code: 2,
            metrics: scanned,
        },
        Scenario {
            name: "unreachable",
            hosts: format!("127.0.0.1:{}", crate::support::closed_port()),
            expected_code: 3,
            metrics: &["rating", "time"],
        },
    ];
    let dir = fresh_dir("icinga2");
    let mut services: Vec<(&str, Vec<String>)> = scenarios
        .iter()
        .map(|scenario| (scenario.name, scenario.command(&ca)))
        .collect();
    services.push((
        "control",
        ["/bin/sh", "-c", CONTROL].map(String::from).to_vec(),
    ));
    let rig = Rig::new(&dir, &services);
    rig.validate(&icinga2);

    let daemon = Daemon::start(&rig, &icinga2);
    let deadline = Instant::now() + RESULT_DEADLINE;
    let mut first: BTreeMap<String, Recorded> = BTreeMap::new();
    loop {
        for record in rig.records() {
            first.entry(record.host.clone()).or_insert(record);
        }
        if first.len() == services.len() {
            break;
        }
        assert!(!daemon.exited(), "icinga2 ended early:\n{}", daemon.log());
        assert!(
            Instant::now() < deadline,
            "no result for every service within {RESULT_DEADLINE:?} (have {:?}); daemon log:\n{}",
            first.keys().collect::<Vec<_>>(),
            daemon.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(daemon);

    let mut problems = Vec::new();
    for scenario in &scenarios {
        let recorded = &first[scenario.name];
        let direct = Direct::run(scenario, &ca, &dir);
        println!(
            "--- {}: Icinga recorded state {:?}\noutput: {:?}\nperfdata: {:?}\n--- the plugin printed (exit {}):\n{}",
            scenario.name,
            recorded.state,
            recorded.output,
            recorded.perfdata,
            direct.code,
            direct.stdout
        );
        problems.extend(compare(scenario, &direct, recorded));
    }

    // The two-host run: every label carries its host, quoted because of the space.
    let two = parse_perfdata(&first["two-hosts"].perfdata);
    for instance in [&ok, &critical] {
        let host = instance.host_port();
        let labelled = two
            .iter()
            .filter(|p| p.label.starts_with(&format!("{host} ")))
            .inspect(|p| assert_eq!(p.written, format!("'{}'", p.label)))
            .count();
        if labelled < 3 || !two.iter().any(|p| p.label == format!("{host} rating")) {
            problems.push(format!(
                "two-hosts: too few labels of {host} in what Icinga recorded: {two:?}"
            ));
        }
    }

    // The control: Icinga keeps the space after the second `|` in the label, and the check
    // above reports it.
    let control = &first["control"];
    println!("--- control: Icinga recorded {control:?}");
    let written: Vec<String> = parse_perfdata(&control.perfdata)
        .into_iter()
        .map(|p| p.written)
        .collect();
    let caught = perfdata_problems(
        "control",
        "first=1 rating=5;@0:3;@0:1;0;5",
        &control.perfdata,
    );
    if written != ["first", "' rating'"]
        || caught.len() != 2
        || !caught[0].contains("PLUGIN BUG: Icinga recorded the perfdata label \" rating\"")
    {
        problems.push(format!(
            "control: expected Icinga 2.13 to record the labels first and ' rating' for \
             {CONTROL:?} and the check to report ' rating'; Icinga recorded {:?}, the check \
             said {caught:?}",
            control.perfdata
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The shipped CheckCommand runs the plugin: a Service that only sets custom variables (a
/// value, switches, a repeated flag) gets the plugin's verdict, output and performance data.
#[test]
fn the_shipped_check_command_runs_the_plugin_from_custom_variables() {
    let icinga2 = icinga2_binary();
    let fake = FakeInstance::start(healthy("8.1.0"));
    let dir = fresh_dir("icinga2-shipped");
    let rig = Rig::new(&dir, &[]);
    let packaged =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/icinga2/check-storage-security.conf");
    let conf = format!(
        "{}
include {}

object Host \"shipped\" {{
  check_command = \"dummy\"
  enable_active_checks = false
  address = \"127.0.0.1\"
}}

object Service \"storage-security\" {{
  host_name = \"shipped\"
  check_command = \"storage_security\"
  check_interval = 1s
  retry_interval = 1s
  max_check_attempts = 1
  vars.storage_security_host = {}
  vars.storage_security_ca_file = {}
  vars.storage_security_update_source = \"bundled\"
  vars.storage_security_no_debug_ports = true
  vars.storage_security_check_hardening = false
  vars.storage_security_eol_warning = 30
  vars.storage_security_waive_until = [
    \"versionDisclosure:X-*|2027-01-01T00:00:00Z|the web app version is public anyway\",
    \"cookieAttributes|2027-01-01T00:00:00Z|ticket OPS-1\"
  ]
}}
",
        std::fs::read_to_string(&rig.conf).unwrap(),
        path_string(&packaged),
        icinga_string(&fake.host_port()),
        path_string(&fake.ca_file()),
    );
    std::fs::write(&rig.conf, conf).unwrap();
    let plugin_dir = Path::new(PLUGIN).parent().unwrap().display().to_string();
    let define = format!("--define=PluginDir={plugin_dir}");
    rig.validate_with(&icinga2, &[&define]);

    let daemon = Daemon::start_with(&rig, &icinga2, &[&define], &[("COS_NOW", NOW)]);
    let deadline = Instant::now() + RESULT_DEADLINE;
    let recorded = loop {
        if let Some(record) = rig.records().into_iter().next() {
            break record;
        }
        assert!(!daemon.exited(), "icinga2 ended early:\n{}", daemon.log());
        assert!(
            Instant::now() < deadline,
            "no result within {RESULT_DEADLINE:?}; daemon log:\n{}",
            daemon.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(daemon);
    assert_eq!(recorded.host, "shipped");
    assert_eq!(recorded.state, "OK", "{recorded:?}");
    assert!(
        recorded.output.starts_with("OK: ") && recorded.output.contains("OpenCloud 8.1.0"),
        "{recorded:?}"
    );
    assert!(recorded.perfdata.contains("rating=5;"), "{recorded:?}");
    // The scan reached the instance the variables named.
    assert!(fake.requests().iter().any(|r| r.path() == "/status.php"));
}

/// The shipped CheckCommand (`packaging/icinga2/`) is valid Icinga 2 configuration.
#[test]
fn packaged_icinga2_configuration_validates() {
    let icinga2 = icinga2_binary();
    let dir = fresh_dir("icinga2-packaged");
    let rig = Rig::new(&dir, &[]);
    let packaged = Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/icinga2");
    let conf = format!(
        "{}\ninclude {}\n",
        std::fs::read_to_string(&rig.conf).unwrap(),
        path_string(&packaged.join("check-storage-security.conf"))
    );
    std::fs::write(&rig.conf, conf).unwrap();
    let plugin_dir = Path::new(PLUGIN).parent().unwrap();
    let out = rig
        .command(&icinga2)
        .arg("-C")
        .arg(format!("--define=PluginDir={}", plugin_dir.display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "icinga2 daemon -C:\n{log}");
    assert!(
        log.contains("Instantiated 1 CheckerComponent") && log.contains("CheckCommands"),
        "{log}"
    );
}

/// `promtool` is installed and runs. The `--format metrics` output itself is checked with
/// `promtool check metrics` in `tests/it/format_metrics.rs`, which falls back to its own parser
/// when promtool is missing: this test makes a missing promtool fail `make test` instead.
#[test]
fn promtool_is_installed() {
    let promtool = promtool_binary();
    let version = Command::new(&promtool).arg("--version").output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&version.stdout),
        String::from_utf8_lossy(&version.stderr)
    );
    assert!(
        version.status.success() && text.starts_with("promtool, version "),
        "{} --version failed: {text}",
        promtool.display()
    );
}
