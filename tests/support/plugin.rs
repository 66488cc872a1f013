//! Running the real plugin from integration tests: a cleared environment (nothing of the
//! developer's machine leaks in), an empty working directory and HOME, and a pinned clock.

use super::{FakeInstance, InstanceConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use storage_security::settings::Settings;
use storage_security::settings::cli::{self, Invocation};
use storage_security::settings::secrets::MapEnv;

/// The clock every test pins with `COS_NOW`.
pub const NOW: &str = super::PINNED_NOW;

/// What one run printed and how it exited.
pub struct Run {
    pub stdout: String,
    /// The `--debug` log and anything else on stderr (not UTF-8 checked).
    pub stderr: String,
    pub code: i32,
}

impl Run {
    pub fn line(&self, n: usize) -> &str {
        self.stdout.lines().nth(n).unwrap_or("")
    }

    pub fn has_line(&self, line: &str) -> bool {
        self.stdout.lines().any(|l| l == line)
    }

    /// `Status, severity...` of a finding from the `--debug` list (`  <id> [Status, ...]: ...`).
    pub fn finding(&self, id: &str) -> Option<String> {
        let prefix = format!("  {id} [");
        self.stdout
            .lines()
            .find(|l| l.starts_with(&prefix))
            .map(|l| {
                l[prefix.len()..]
                    .split(']')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
    }

    /// One metric of the closing perfdata line, e.g. `rating=5;@0:3;@0:1;0;5`.
    pub fn perf(&self, name: &str) -> Option<String> {
        self.stdout
            .lines()
            .last()?
            .trim_start_matches('|')
            .split(' ')
            .find(|m| m.starts_with(&format!("{name}=")))
            .map(String::from)
    }
}

/// A fresh directory for one run, under the target's temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the plugin with `args`; `env` adds variables (and may override `COS_NOW`).
pub fn run(name: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let dir = scratch(name);
    let mut command = Command::new(env!("CARGO_BIN_EXE_check-storage-security"));
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &dir)
        .env("COS_NOW", NOW)
        .current_dir(&dir);
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().expect("run the plugin");
    Run {
        stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().expect("exit code"),
    }
}

/// Runs the plugin like [`run`] and follows its peak resident memory: the highest `VmHWM` of
/// `/proc/<pid>/status` seen while it runs, in KiB (`None` where `/proc` cannot tell). Polling
/// is a measuring interval, not a wait: the run ends as soon as the plugin exits.
pub fn run_with_peak(name: &str, args: &[&str], env: &[(&str, &str)]) -> (Run, Option<u64>) {
    let dir = scratch(name);
    let mut command = Command::new(env!("CARGO_BIN_EXE_check-storage-security"));
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &dir)
        .env("COS_NOW", NOW)
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("run the plugin");
    let mut out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut text);
        text
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak: Option<u64> = None;
    let status = loop {
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        }) {
            peak = Some(peak.map_or(kib, |p| p.max(kib)));
        }
        if let Some(status) = child.try_wait().expect("wait for the plugin") {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    let run = Run {
        stdout: reader.join().unwrap_or_default(),
        stderr: String::new(),
        code: status.code().expect("exit code"),
    };
    (run, peak)
}

/// The flags of a hermetic scan: trust the fake instances' CA, and [`hermetic_untrusting`].
pub fn hermetic(ca: &Path) -> Vec<String> {
    let mut flags = vec!["--ca-file".to_string(), ca.display().to_string()];
    flags.extend(hermetic_untrusting());
    flags
}

/// The flags of a hermetic scan that trusts no private CA: bundled update data, no waiting
/// between retries, no debug ports (they would be probed on this machine's loopback).
pub fn hermetic_untrusting() -> Vec<String> {
    [
        "--update-source",
        "bundled",
        "--backoff-factor",
        "0",
        "--retries",
        "0",
        "--no-debug-ports",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// An instance without the weaknesses of a default install (demo accounts, CORS for any
/// origin), so the version knowledge decides the rating.
pub fn healthy(version: &str) -> InstanceConfig {
    InstanceConfig::default()
        .version(version)
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
}

/// Scans `hosts` (comma-separated) hermetically with `extra` flags.
pub fn scan(name: &str, hosts: &str, fake_for_ca: &FakeInstance, extra: &[&str]) -> Run {
    scan_with_env(name, hosts, fake_for_ca, extra, &[])
}

/// [`scan`] with variables added to the environment (`env` of [`run`]).
pub fn scan_with_env(
    name: &str,
    hosts: &str,
    fake_for_ca: &FakeInstance,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let base = hermetic(&fake_for_ca.ca_file());
    let mut args: Vec<&str> = vec!["-H", hosts];
    args.extend(base.iter().map(String::as_str));
    args.extend(extra);
    run(name, &args, env)
}

/// [`hermetic`] for a scan that probes the debug ports the test names
/// (`COS_SCANNER_DEBUG_PORTS`: its own listeners, never the machine's).
pub fn hermetic_with_debug_ports(ca: &Path) -> Vec<String> {
    let mut flags = hermetic(ca);
    flags.retain(|f| f != "--no-debug-ports");
    flags
}

/// A loopback UDP port nobody answers on: a scan's DNS questions go there (and are refused at
/// once) instead of to this machine's nameserver.
pub fn silent_dns() -> std::net::SocketAddr {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind a UDP port");
    socket.local_addr().expect("local addr")
}

/// The settings the plugin would resolve from `args`, for tests that call the library's
/// scanner in process: a fresh HOME, the pinned clock, DNS questions to [`silent_dns`], and
/// `env` added.
pub fn settings(name: &str, args: &[&str], env: &[(&str, &str)]) -> Settings {
    let line = match cli::parse(args.iter().copied()).expect("valid arguments") {
        Invocation::Scan(line) => line,
        other => panic!("{other:?}"),
    };
    let home = scratch(name).display().to_string();
    let dns = silent_dns().to_string();
    let mut vars = vec![
        ("HOME", home.as_str()),
        ("COS_NOW", NOW),
        ("COS_SCANNER_DNS_SERVER", dns.as_str()),
    ];
    vars.extend_from_slice(env);
    Settings::resolve(&line, &MapEnv::with(&vars)).unwrap_or_else(|e| panic!("{}", e.0))
}
