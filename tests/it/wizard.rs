//! The configuration wizard as the programs run it: answers on a pipe (scriptable), and a
//! person at a real terminal (tmux), then the check run with the file it wrote.

use crate::support::FakeInstance;
use crate::support::plugin::{NOW, healthy, hermetic, scratch};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PLUGIN: &str = env!("CARGO_BIN_EXE_check-storage-security");
const SCANNER: &str = env!("CARGO_BIN_EXE_check-storage-scanner");

struct Out {
    stdout: String,
    code: i32,
}

/// Runs `program args` in `dir` (its HOME and working directory) with `answers` on a pipe.
fn piped(program: &str, args: &[&str], dir: &Path, answers: &[&str]) -> Out {
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("COS_NOW", NOW)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the program");
    let mut stdin = child.stdin.take().expect("stdin");
    for answer in answers {
        writeln!(stdin, "{answer}").expect("write an answer");
    }
    drop(stdin);
    let output = child.wait_with_output().expect("wait for the program");
    Out {
        stdout: String::from_utf8(output.stdout).expect("UTF-8"),
        code: output.status.code().expect("exit code"),
    }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn answers_on_a_pipe_write_the_file_the_check_then_runs_with() {
    let fake = FakeInstance::start(healthy("4.0.0"));
    let dir = scratch("wizard-pipe");
    let path = dir.join("check.json");
    let host = fake.host_port();
    let ca = fake.ca_file().display().to_string();
    let answers = [
        host.as_str(),
        // thresholds or a profile
        "yes",
        "",
        "",
        "2",
        "",
        "",
        // connection: no retries, the fake instance's private CA
        "yes",
        "",
        "",
        "0",
        "",
        ca.as_str(),
        // hardening, webhook
        "",
        "",
        // releases: the bundled data, no network
        "yes",
        "bundled",
        "",
        "",
        // output
        "",
    ];
    let path_arg = path.display().to_string();
    let out = piped(
        PLUGIN,
        &["--configure", "--config", &path_arg],
        &dir,
        &answers,
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(mode(&path), 0o600);
    let command = format!("check-storage-security --config {path_arg}");
    assert!(
        out.stdout.contains(&format!("\n  {command}\n")),
        "{}",
        out.stdout
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        file,
        serde_json::json!({
            "host": host,
            "critical": 2,
            "retries": 0,
            "releases": {"mode": "bundled"},
            "scanner": {"tls_ca_file": ca},
        })
    );

    // The printed command line (plus the test's own no-debug-ports and no-wait flags) checks
    // the instance as the same settings given as flags do.
    let quiet = ["--no-debug-ports", "--backoff-factor", "0"];
    let mut args = vec!["--config", path_arg.as_str()];
    args.extend(quiet);
    let with_file = crate::support::plugin::run("wizard-pipe-check", &args, &[]);
    let flags = hermetic(&fake.ca_file());
    let mut args: Vec<&str> = vec!["-H", &host, "--critical", "2"];
    args.extend(flags.iter().map(String::as_str));
    let with_flags = crate::support::plugin::run("wizard-pipe-flags", &args, &[]);
    assert_eq!(
        (with_file.code, with_file.line(0)),
        (with_flags.code, with_flags.line(0)),
        "file:\n{}\nflags:\n{}",
        with_file.stdout,
        with_flags.stdout
    );
    assert!(with_file.line(1).contains("4.0.0"), "{}", with_file.stdout);
}

#[test]
fn the_scanner_configures_its_service_on_a_pipe() {
    let dir = scratch("wizard-scanner");
    let path = dir.join("scanner.json");
    let path_arg = path.display().to_string();
    let answers = [
        "", "", "", "", "", // no host, no optional group of the check
        "yes", "", "9911", "", "",
    ];
    let out = piped(
        SCANNER,
        &["--config", &path_arg, "configure"],
        &dir,
        &answers,
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(mode(&path), 0o600);
    assert!(
        out.stdout.contains(&format!(
            "\n  check-storage-scanner --config {path_arg} serve\n"
        )),
        "{}",
        out.stdout
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file, serde_json::json!({"service": {"port": 9911}}));
}

#[test]
fn the_end_of_the_input_exits_3_with_one_line_and_writes_nothing() {
    let dir = scratch("wizard-eof");
    let path = dir.join("c.json");
    let path_arg = path.display().to_string();
    let out = piped(
        PLUGIN,
        &["--configure", "--config", &path_arg],
        &dir,
        &["cloud.example.com", "yes"],
    );
    assert_eq!(out.code, 3, "{}", out.stdout);
    assert_eq!(
        out.stdout.lines().last(),
        Some(
            "UNKNOWN: the input ended at \"Profile: strict, ops or lenient (empty: none)\"; nothing written"
        )
    );
    assert!(!path.exists());
    // Without --config the default file of this user is offered; the input ends first.
    let out = piped(PLUGIN, &["--configure"], &dir, &[]);
    assert_eq!(out.code, 3);
    let default = dir.join(".config/check-storage-security/.env.json");
    assert!(
        out.stdout.contains(&format!(
            "Configuration file to write [{}]: ",
            default.display()
        )) || out
            .stdout
            .contains("[/etc/check-storage-security/config.json]"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_wizard_takes_no_other_settings() {
    let dir = scratch("wizard-flags");
    let out = piped(
        PLUGIN,
        &["--configure", "-H", "cloud.example.com"],
        &dir,
        &[],
    );
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stdout,
        "UNKNOWN: --host cannot be given to the configuration wizard: it asks for the settings \
         (only --config PATH, the file to write, comes with it)\n"
    );
    let out = piped(SCANNER, &["configure", "now"], &dir, &[]);
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stdout,
        "UNKNOWN: configure takes no arguments; it asks for the settings\n"
    );
}

/// A tmux server of this test alone (its own socket), killed when the test ends.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn command(&self) -> Command {
        let mut command = Command::new(tmux());
        command.args(["-L", &self.socket]);
        command
    }

    fn send(&self, keys: &str) {
        if !keys.is_empty() {
            let ok = self
                .command()
                .args(["send-keys", "-t", "wizard", "-l", keys])
                .status()
                .expect("tmux send-keys")
                .success();
            assert!(ok, "tmux send-keys {keys:?}");
        }
        let ok = self
            .command()
            .args(["send-keys", "-t", "wizard", "Enter"])
            .status()
            .expect("tmux send-keys")
            .success();
        assert!(ok, "tmux send-keys Enter");
    }

    /// The whole pane, history included, wrapped lines joined.
    fn pane(&self) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-J", "-S", "-", "-t", "wizard"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Polls the pane until it shows `text` `times` times; a bounded wait, never a fixed one.
    fn wait_for(&self, text: &str, times: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let pane = self.pane();
            if pane.matches(text).count() >= times {
                return pane;
            }
            assert!(
                Instant::now() < deadline,
                "the pane did not show {text:?} ({times} times) within 30 s:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Answers the question `prompt` once it is shown (for the `times`th time).
    fn answer(&self, prompt: &str, times: usize, keys: &str) {
        self.wait_for(prompt, times);
        self.send(keys);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}

fn tmux() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("tmux"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("tmux is not installed: run `make deps`"))
}

#[test]
fn a_person_at_a_terminal_is_asked_again_until_an_answer_is_right() {
    let dir = scratch("wizard-terminal");
    let path = dir.join("check.json");
    let tmux = Tmux {
        socket: format!("cos-wizard-{}", std::process::id()),
    };
    // The pane keeps the transcript after the wizard ends: the shell waits for a line.
    let script = format!(
        "{PLUGIN} --configure --config {}; echo \"wizard exit $?\"; read line",
        path.display()
    );
    let started = tmux
        .command()
        .args(["-f", "/dev/null", "new-session", "-d", "-s", "wizard"])
        .args(["-x", "250", "-y", "50", "sh", "-c", &script])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &dir)
        .env("TERM", "xterm")
        .current_dir(&dir)
        .status()
        .expect("start tmux")
        .success();
    assert!(started, "tmux new-session");

    let host = "Host(s) to check";
    tmux.answer(host, 1, "ftp://cloud.example.com");
    tmux.wait_for("  ! invalid target \"ftp://cloud.example.com\"", 1);
    tmux.answer(host, 2, "cloud.example.com");
    tmux.answer("Configure thresholds or a profile?", 1, "y");
    tmux.answer("Profile:", 1, "");
    let warning = "WARNING at this rating (0-5) and below [3]:";
    tmux.answer(warning, 1, "9");
    tmux.wait_for("  ! warning \"9\" is not a rating from 0 to 5", 1);
    tmux.answer(warning, 2, "4");
    tmux.answer("CRITICAL at this rating", 1, "");
    tmux.answer("days of support left", 1, "");
    tmux.answer("A pending update", 1, "");
    tmux.answer("Configure the connection", 1, "");
    tmux.answer("Configure hardening", 1, "");
    tmux.answer("Configure a webhook notification?", 1, "yes");
    let url = "Webhook URL, as a reference";
    tmux.answer(url, 1, "https://chat.example/hooks/T0K3N");
    tmux.wait_for("  ! --webhook-url is a secret: give a reference", 1);
    tmux.answer(url, 2, "");
    tmux.answer("Configure the release track", 1, "");
    tmux.answer("Configure the output format?", 1, "");
    let pane = tmux.wait_for("wizard exit 0", 1);

    assert!(pane.contains("Run the check with it:"), "{pane}");
    // The terminal showed the refused value as it was typed; the wizard never repeated it.
    assert_eq!(pane.matches("T0K3N").count(), 1, "{pane}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        file,
        serde_json::json!({"host": "cloud.example.com", "warning": 4})
    );
    assert_eq!(mode(&path), 0o600);
}
