//! Staying current (issue 11, item 3): `--self-update-check` looks at the plugin's release feed
//! at most once a day, adds one line while a newer release exists, is silent on any failure and
//! never changes the exit code; `--upgrade-self [check]` replaces the binary with the verified
//! release asset, refuses a checksum mismatch and a packaged binary, and `check` changes
//! nothing. Everything runs against a release server on loopback; the clock moves with
//! `COS_NOW`, so nothing waits.

use crate::support::FakeInstance;
use crate::support::plugin::{self, NOW, Run};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;
use storage_security::self_update;

const RUNNING: &str = env!("CARGO_PKG_VERSION");
const NEWER: &str = "99.0.0";
const PLUGIN: &str = "check-storage-security";
const SCANNER: &str = "check-storage-scanner";
/// One hour after `NOW`, a day and an hour after it, and two days after it.
const HOUR_LATER: &str = "2026-11-22T04:00:00Z";
const DAY_LATER: &str = "2026-11-23T04:00:00Z";
const TWO_DAYS_LATER: &str = "2026-11-24T04:00:00Z";

/// A release server on loopback: `/releases` answers the feed, `/download/<name>` an asset,
/// `/redirect/<name>` redirects to `/download/<name>` (as GitHub sends downloads to its
/// storage host). Every request path is recorded.
struct ReleaseServer {
    server: Arc<tiny_http::Server>,
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    feed: Arc<Mutex<(u16, String)>>,
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    worker: Option<thread::JoinHandle<()>>,
}

impl ReleaseServer {
    fn start() -> ReleaseServer {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind"));
        let port = server.server_addr().to_ip().expect("ip listener").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let feed = Arc::new(Mutex::new((404, String::new())));
        let files: Arc<Mutex<HashMap<String, Vec<u8>>>> = Arc::default();
        let (srv, seen, answer, stored) = (
            server.clone(),
            requests.clone(),
            feed.clone(),
            files.clone(),
        );
        let worker = thread::spawn(move || {
            for request in srv.incoming_requests() {
                let path = request.url().to_string();
                seen.lock().unwrap().push(path.clone());
                let response = if path == "/releases" {
                    let (status, body) = answer.lock().unwrap().clone();
                    tiny_http::Response::from_data(body.into_bytes()).with_status_code(status)
                } else if let Some(name) = path.strip_prefix("/redirect/") {
                    tiny_http::Response::from_data(Vec::new())
                        .with_status_code(302)
                        .with_header(
                            tiny_http::Header::from_bytes("Location", format!("/download/{name}"))
                                .unwrap(),
                        )
                } else if let Some(name) = path.strip_prefix("/download/") {
                    match stored.lock().unwrap().get(name) {
                        Some(bytes) => tiny_http::Response::from_data(bytes.clone()),
                        None => tiny_http::Response::from_data(Vec::new()).with_status_code(404),
                    }
                } else {
                    tiny_http::Response::from_data(Vec::new()).with_status_code(404)
                };
                let _ = request.respond(response);
            }
        });
        ReleaseServer {
            server,
            port,
            requests,
            feed,
            files,
            worker: Some(worker),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn feed_url(&self) -> String {
        self.url("/releases")
    }

    fn answer(&self, status: u16, body: &str) {
        *self.feed.lock().unwrap() = (status, body.to_string());
    }

    /// Publishes release `tag` with these assets (served under `route`: `download` or
    /// `redirect`), and a SHA256SUMS listing `sums`.
    fn publish(&self, tag: &str, route: &str, assets: &[(&str, Vec<u8>)], sums: &[(&str, String)]) {
        let mut files = self.files.lock().unwrap();
        files.clear();
        let mut listed = Vec::new();
        for (name, bytes) in assets {
            files.insert(name.to_string(), bytes.clone());
            listed.push(serde_json::json!({
                "name": name,
                "browser_download_url": self.url(&format!("/{route}/{name}")),
                "size": bytes.len(),
            }));
        }
        if !sums.is_empty() {
            let text: String = sums
                .iter()
                .map(|(name, hash)| format!("{hash}  {name}\n"))
                .collect();
            files.insert("SHA256SUMS".to_string(), text.into_bytes());
            listed.push(serde_json::json!({
                "name": "SHA256SUMS",
                "browser_download_url": self.url("/download/SHA256SUMS"),
            }));
        }
        let body = serde_json::json!([
            {"tag_name": "v100.0.0-rc.1", "prerelease": true, "assets": []},
            {"tag_name": tag, "draft": false, "prerelease": false, "assets": listed},
            {"tag_name": "v0.0.1", "assets": []},
        ]);
        drop(files);
        self.answer(200, &body.to_string());
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    fn feed_requests(&self) -> usize {
        self.requests().iter().filter(|p| *p == "/releases").count()
    }

    fn downloads(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|p| p != "/releases")
            .collect()
    }
}

impl Drop for ReleaseServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    storage_security::text::hex(&Sha256::digest(bytes))
}

/// The feed body of one published release without assets.
fn feed_of(tag: &str) -> String {
    serde_json::json!([{"tag_name": tag, "draft": false, "prerelease": false, "assets": []}])
        .to_string()
}

// --- --self-update-check ---------------------------------------------------------------------

/// Scans of a healthy instance, the state in `state`.
struct Scans {
    fake: FakeInstance,
    state: PathBuf,
}

impl Scans {
    fn new(name: &str) -> Scans {
        Scans {
            fake: FakeInstance::start(plugin::healthy("4.0.8")),
            state: plugin::scratch(&format!("{name}-state")),
        }
    }

    /// One scan at `now`; `extra` flags after the hermetic ones; `env` added.
    fn run(&self, name: &str, now: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let mut args = vec!["-H".to_string(), self.fake.host_port()];
        args.extend(plugin::hermetic(&self.fake.ca_file()));
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut vars = vec![
            ("COS_NOW", now),
            ("COS_STATE_DIR", self.state.to_str().unwrap()),
        ];
        vars.extend_from_slice(env);
        plugin::run(name, &args, &vars)
    }

    fn checked(&self, name: &str, now: &str, url: &str, extra: &[&str]) -> Run {
        let mut flags = vec!["--self-update-check"];
        flags.extend_from_slice(extra);
        self.run(name, now, &flags, &[("COS_SELF_UPDATE_URL", url)])
    }
}

fn update_line(newest: &str) -> String {
    format!(
        "Plugin update: {PLUGIN} {newest} is available (installed {RUNNING}); upgrade with: \
         {PLUGIN} --upgrade-self"
    )
}

fn is_update_line(line: &str) -> bool {
    line.starts_with("Plugin update:")
}

#[test]
fn a_newer_release_adds_one_line_before_the_perfdata_and_keeps_the_exit_code() {
    let scans = Scans::new("su-newer");
    let server = ReleaseServer::start();
    server.answer(200, &feed_of(&format!("v{NEWER}")));
    let plain = scans.run("su-newer-plain", NOW, &[], &[]);
    let run = scans.checked("su-newer-0", NOW, &server.feed_url(), &[]);
    assert_eq!(run.code, plain.code, "{}", run.stdout);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        plain.stdout.lines().count() + 1,
        "{}",
        run.stdout
    );
    assert_eq!(lines[lines.len() - 2], update_line(NEWER), "{}", run.stdout);
    assert!(
        lines[lines.len() - 1].starts_with("|rating="),
        "{}",
        run.stdout
    );
    assert_eq!(
        lines[..lines.len() - 2],
        plain.stdout.lines().collect::<Vec<_>>()[..lines.len() - 2]
    );
    assert_eq!(server.feed_requests(), 1);

    // An hour later: the line stays, the feed is not asked.
    let run = scans.checked("su-newer-1", HOUR_LATER, &server.feed_url(), &[]);
    assert!(run.has_line(&update_line(NEWER)), "{}", run.stdout);
    assert_eq!(server.feed_requests(), 1);

    // A day later it is asked again; once the running version is the newest, no line.
    server.answer(200, &feed_of(&format!("v{RUNNING}")));
    let run = scans.checked("su-newer-2", DAY_LATER, &server.feed_url(), &[]);
    assert_eq!(server.feed_requests(), 2);
    assert!(!run.stdout.lines().any(is_update_line), "{}", run.stdout);
    assert_eq!(run.code, plain.code);
    assert_eq!(run.stdout.lines().count(), plain.stdout.lines().count());
}

#[test]
fn a_failing_feed_is_silent_and_still_asked_once_a_day() {
    let scans = Scans::new("su-failing");
    let server = ReleaseServer::start();
    let plain = scans.run("su-failing-plain", NOW, &[], &[]);
    for (n, (now, status, body)) in [
        (NOW, 500, "oops"),
        (HOUR_LATER, 500, "oops"),
        (DAY_LATER, 200, "<html>rate limited</html>"),
        (TWO_DAYS_LATER, 200, r#"[{"tag_name": "nightly"}]"#),
    ]
    .into_iter()
    .enumerate()
    {
        server.answer(status, body);
        let run = scans.checked(&format!("su-failing-{n}"), now, &server.feed_url(), &[]);
        assert_eq!(run.code, plain.code, "{}", run.stdout);
        assert!(!run.stdout.lines().any(is_update_line), "{}", run.stdout);
        assert_eq!(run.stdout.lines().count(), plain.stdout.lines().count());
        assert!(!run.stderr.contains("self-update"), "{}", run.stderr);
    }
    // NOW and DAY_LATER and TWO_DAYS_LATER asked; the hour after NOW did not.
    assert_eq!(server.feed_requests(), 3, "{:?}", server.requests());

    // Nobody listening: silent too, and --debug tells why.
    let closed = format!(
        "http://127.0.0.1:{}/releases",
        crate::support::closed_port()
    );
    let quiet = Scans::new("su-closed");
    let run = quiet.checked("su-closed-0", NOW, &closed, &[]);
    assert_eq!(run.code, plain.code);
    assert!(!run.stdout.lines().any(is_update_line), "{}", run.stdout);
    let debug = Scans::new("su-closed-debug");
    let run = debug.checked("su-closed-1", NOW, &closed, &["--debug"]);
    assert!(
        run.stderr.contains("DEBUG self-update check:"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_stale_answer_stands_in_when_the_daily_look_fails() {
    let scans = Scans::new("su-stale");
    let server = ReleaseServer::start();
    server.answer(200, &feed_of(&format!("v{NEWER}")));
    let run = scans.checked("su-stale-0", NOW, &server.feed_url(), &[]);
    assert!(run.has_line(&update_line(NEWER)), "{}", run.stdout);
    server.answer(503, "down");
    let run = scans.checked("su-stale-1", DAY_LATER, &server.feed_url(), &[]);
    assert_eq!(server.feed_requests(), 2);
    assert!(run.has_line(&update_line(NEWER)), "{}", run.stdout);
}

#[test]
fn without_a_state_directory_nothing_is_asked() {
    let fake = FakeInstance::start(plugin::healthy("4.0.8"));
    let server = ReleaseServer::start();
    server.answer(200, &feed_of(&format!("v{NEWER}")));
    let mut args = vec!["-H".to_string(), fake.host_port()];
    args.extend(plugin::hermetic(&fake.ca_file()));
    args.push("--self-update-check".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let url = server.feed_url();
    let run = plugin::run(
        "su-no-state",
        &args,
        &[("HOME", ""), ("COS_SELF_UPDATE_URL", &url)],
    );
    assert!(!run.stdout.lines().any(is_update_line), "{}", run.stdout);
    assert_eq!(server.feed_requests(), 0);
}

#[test]
fn the_line_in_the_other_formats() {
    let scans = Scans::new("su-formats");
    let server = ReleaseServer::start();
    server.answer(200, &feed_of(&format!("v{NEWER}")));
    let summary = scans.checked(
        "su-formats-summary",
        NOW,
        &server.feed_url(),
        &["--format", "summary"],
    );
    let lines: Vec<&str> = summary.stdout.lines().collect();
    assert!(
        lines[lines.len() - 2].starts_with("1 host(s): "),
        "{}",
        summary.stdout
    );
    assert_eq!(lines[lines.len() - 1], update_line(NEWER));

    // The variable turns it on as well; a document stays a document, the line goes to stderr.
    let url = server.feed_url();
    let json = scans.run(
        "su-formats-json",
        NOW,
        &["--format", "json"],
        &[
            ("COS_SELF_UPDATE_CHECK", "1"),
            ("COS_SELF_UPDATE_URL", &url),
        ],
    );
    let parsed: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON stdout");
    assert!(parsed.is_array());
    assert!(
        json.stderr.lines().any(|l| l == update_line(NEWER)),
        "{}",
        json.stderr
    );
    assert_eq!(
        server.feed_requests(),
        1,
        "the second run reused the day's answer"
    );
}

// --- --upgrade-self --------------------------------------------------------------------------

/// A scratch installation: the plugin (a hard link to the built one, or a copy with its own
/// mode) and optionally the scanner, in `bin/`.
struct Install {
    dir: PathBuf,
    bin: PathBuf,
}

impl Install {
    fn new(name: &str) -> Install {
        let dir = plugin::scratch(name);
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        Install { dir, bin }
    }

    fn plugin(&self) -> PathBuf {
        self.bin.join(PLUGIN)
    }

    fn scanner(&self) -> PathBuf {
        self.bin.join(SCANNER)
    }

    /// Links the built program into `bin/` (a copy where linking is not possible).
    fn link(&self, program: &str) -> PathBuf {
        let built = match program {
            PLUGIN => env!("CARGO_BIN_EXE_check-storage-security"),
            _ => env!("CARGO_BIN_EXE_check-storage-scanner"),
        };
        let to = self.bin.join(program);
        if std::fs::hard_link(built, &to).is_err() {
            std::fs::copy(built, &to).unwrap();
        }
        to
    }

    /// Runs the installed plugin (so that it is the binary upgraded).
    fn run(&self, args: &[&str], url: &str, path_prefix: Option<&Path>) -> Run {
        let mut path = std::env::var("PATH").unwrap_or_default();
        if let Some(prefix) = path_prefix {
            path = format!("{}:{path}", prefix.display());
        }
        let output = Command::new(self.plugin())
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", &self.dir)
            .env("COS_NOW", NOW)
            .env("COS_SELF_UPDATE_URL", url)
            .current_dir(&self.dir)
            .output()
            .expect("run the installed plugin");
        Run {
            stdout: String::from_utf8(output.stdout).expect("UTF-8"),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            code: output.status.code().expect("exit code"),
        }
    }

    /// The names in `bin/`: no temporary file may be left behind.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.bin)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

#[cfg(unix)]
fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().ino()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A stand-in release binary: a script that answers `--version` as the real one does.
fn script(program: &str, version: &str) -> Vec<u8> {
    format!("#!/bin/sh\necho '{program} {version}'\necho 'bundled data'\n").into_bytes()
}

fn target() -> String {
    self_update::targets()[0].clone()
}

fn bare_name(program: &str) -> String {
    format!("{program}-{NEWER}-{}", target())
}

fn archive_name() -> String {
    format!("{PLUGIN}-{NEWER}-{}.tar.gz", target())
}

/// A release archive holding both programs in a versioned directory, made with tar(1).
fn archive(dir: &Path, plugin: &[u8], scanner: &[u8]) -> Vec<u8> {
    let top = format!("{PLUGIN}-{NEWER}-{}", target());
    let staging = dir.join("archive");
    std::fs::create_dir_all(staging.join(&top)).unwrap();
    std::fs::write(staging.join(&top).join(PLUGIN), plugin).unwrap();
    std::fs::write(staging.join(&top).join(SCANNER), scanner).unwrap();
    std::fs::write(staging.join(&top).join("README.md"), "read me").unwrap();
    let out = dir.join("release.tar.gz");
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(&staging)
        .arg(&top)
        .status()
        .expect("tar");
    assert!(status.success());
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_dir_all(&staging).unwrap();
    std::fs::remove_file(&out).unwrap();
    bytes
}

#[cfg(unix)]
#[test]
fn the_binary_is_replaced_by_the_verified_asset_with_its_mode_kept() {
    use std::os::unix::fs::PermissionsExt;
    let install = Install::new("su-upgrade-bare");
    std::fs::copy(
        env!("CARGO_BIN_EXE_check-storage-security"),
        install.plugin(),
    )
    .unwrap();
    std::fs::set_permissions(install.plugin(), std::fs::Permissions::from_mode(0o750)).unwrap();
    let server = ReleaseServer::start();
    let new = script(PLUGIN, NEWER);
    let name = bare_name(PLUGIN);
    server.publish(
        &format!("v{NEWER}"),
        "redirect",
        &[(name.as_str(), new.clone())],
        &[
            ("other-file", "0".repeat(64)),
            (name.as_str(), sha256_hex(&new)),
        ],
    );
    let run = install.run(&["--upgrade-self"], &server.feed_url(), None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let path = std::fs::canonicalize(install.plugin()).unwrap();
    assert_eq!(
        run.stdout,
        format!(
            "{PLUGIN} upgraded from {RUNNING} to {NEWER}: {} replaced (mode 0750 kept); SHA-256 \
             of {name} verified against SHA256SUMS\n",
            path.display()
        )
    );
    assert_eq!(std::fs::read(install.plugin()).unwrap(), new);
    assert_eq!(mode(&install.plugin()), 0o750);
    assert_eq!(install.names(), [PLUGIN], "no temporary file is left");
    assert_eq!(
        server.downloads(),
        [
            "/download/SHA256SUMS".to_string(),
            format!("/redirect/{name}"),
            format!("/download/{name}"),
        ],
        "the redirect to the download is followed"
    );
    // What is installed now is the release.
    let version = Command::new(install.plugin())
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with(&format!("{PLUGIN} {NEWER}\n")));
}

#[cfg(unix)]
#[test]
fn an_archive_upgrades_the_plugin_and_the_scanner_beside_it() {
    let install = Install::new("su-upgrade-archive");
    install.link(PLUGIN);
    install.link(SCANNER);
    let server = ReleaseServer::start();
    let (plugin_new, scanner_new) = (script(PLUGIN, NEWER), script(SCANNER, NEWER));
    let bytes = archive(&install.dir, &plugin_new, &scanner_new);
    let name = archive_name();
    server.publish(
        &format!("v{NEWER}"),
        "download",
        &[(name.as_str(), bytes.clone())],
        &[(name.as_str(), sha256_hex(&bytes))],
    );
    let run = install.run(&["--upgrade-self"], &server.feed_url(), None);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert!(lines[0].starts_with(&format!("{PLUGIN} upgraded from {RUNNING} to {NEWER}: ")));
    assert!(lines[0].ends_with(&format!("SHA-256 of {name} verified against SHA256SUMS")));
    assert!(
        lines[1].starts_with(&format!("{SCANNER} upgraded to {NEWER}: ")),
        "{}",
        lines[1]
    );
    assert_eq!(std::fs::read(install.plugin()).unwrap(), plugin_new);
    assert_eq!(std::fs::read(install.scanner()).unwrap(), scanner_new);
    assert_eq!(mode(&install.plugin()), 0o755);
    assert_eq!(
        install.names(),
        [SCANNER, PLUGIN],
        "no temporary file is left"
    );
}

#[cfg(unix)]
#[test]
fn a_checksum_mismatch_or_a_missing_checksum_is_refused_and_nothing_changes() {
    let install = Install::new("su-upgrade-mismatch");
    install.link(PLUGIN);
    let before = inode(&install.plugin());
    let server = ReleaseServer::start();
    let new = script(PLUGIN, NEWER);
    let name = bare_name(PLUGIN);
    let wrong = sha256_hex(b"something else");
    server.publish(
        &format!("v{NEWER}"),
        "download",
        &[(name.as_str(), new.clone())],
        &[(name.as_str(), wrong.clone())],
    );
    let run = install.run(&["--upgrade-self"], &server.feed_url(), None);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert!(
        run.stdout.starts_with(&format!(
            "UNKNOWN: the SHA-256 of {name} is {}, but SHA256SUMS of release v{NEWER} says {wrong}; refusing",
            sha256_hex(&new)
        )),
        "{}",
        run.stdout
    );
    assert_eq!(inode(&install.plugin()), before, "the binary is untouched");
    assert_eq!(install.names(), [PLUGIN], "the download is removed");

    // No checksum file at all: refused before anything is downloaded.
    let server = ReleaseServer::start();
    server.publish(
        &format!("v{NEWER}"),
        "download",
        &[(name.as_str(), new.clone())],
        &[],
    );
    let run = install.run(&["--upgrade-self"], &server.feed_url(), None);
    assert_eq!(run.code, 3);
    assert_eq!(
        run.stdout,
        format!(
            "UNKNOWN: release v{NEWER} publishes no SHA256SUMS; refusing to install an \
             unverified download (nothing was changed)\n"
        )
    );
    assert!(server.downloads().is_empty(), "{:?}", server.downloads());
    // A checksum file without a line for the asset.
    let server = ReleaseServer::start();
    server.publish(
        &format!("v{NEWER}"),
        "download",
        &[(name.as_str(), new.clone())],
        &[("another-asset", sha256_hex(&new))],
    );
    let run = install.run(&["--upgrade-self"], &server.feed_url(), None);
    assert_eq!(run.code, 3);
    assert!(
        run.stdout.contains("lists no SHA-256 for"),
        "{}",
        run.stdout
    );
    assert_eq!(inode(&install.plugin()), before);
    assert_eq!(install.names(), [PLUGIN]);
}

#[cfg(unix)]
#[test]
fn a_binary_that_does_not_report_the_release_is_not_installed() {
    let install = Install::new("su-upgrade-wrong-binary");
    install.link(PLUGIN);
    let before = inode(&install.plugin());
    let server = ReleaseServer::start();
    let new = script(PLUGIN, "1.0.0");
    let name = bare_name(PLUGIN);
    server.publish(
        &format!("v{NEWER}"),
        "download",
        &[(name.as_str(), new.clone())],
        &[(name.as_str(), sha256_hex(&new))],
    );
    let run = install.run(&["--upgrade-self"], &server.feed_url(), None);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert_eq!(
        run.stdout,
        format!(
            "UNKNOWN: the downloaded {PLUGIN} does not run here (--version printed \
             \"{PLUGIN} 1.0.0\", not \"{PLUGIN} {NEWER}\"); nothing was changed\n"
        )
    );
    assert_eq!(inode(&install.plugin()), before);
    assert_eq!(install.names(), [PLUGIN]);
}

#[cfg(unix)]
#[test]
fn check_shows_what_it_would_do_and_changes_nothing() {
    let install = Install::new("su-upgrade-check");
    install.link(PLUGIN);
    install.link(SCANNER);
    let before = (inode(&install.plugin()), inode(&install.scanner()));
    let server = ReleaseServer::start();
    let bytes = archive(
        &install.dir,
        &script(PLUGIN, NEWER),
        &script(SCANNER, NEWER),
    );
    let name = archive_name();
    server.publish(
        &format!("v{NEWER}"),
        "download",
        &[(name.as_str(), bytes.clone())],
        &[(name.as_str(), sha256_hex(&bytes))],
    );
    let plugin = std::fs::canonicalize(install.plugin()).unwrap();
    let scanner = std::fs::canonicalize(install.scanner()).unwrap();
    let expected = format!(
        "{PLUGIN} {RUNNING} would be upgraded to {NEWER} (release v{NEWER}); nothing was \
         changed (check only)\n\
         would download {name} ({}) and verify its SHA-256 against SHA256SUMS\n\
         would replace {} (mode 0755 kept)\n\
         would replace {} (mode 0755 kept)\n",
        storage_security::files::size_text(bytes.len() as u64),
        plugin.display(),
        scanner.display()
    );
    for args in [
        &["--upgrade-self", "check"][..],
        &["--upgrade-self", "--check-only"],
    ] {
        let run = install.run(args, &server.feed_url(), None);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stdout);
        assert_eq!(run.stdout, expected, "{args:?}");
    }
    assert_eq!(
        (inode(&install.plugin()), inode(&install.scanner())),
        before
    );
    assert_eq!(install.names(), [SCANNER, PLUGIN]);
    assert!(
        server
            .downloads()
            .iter()
            .all(|p| p == "/download/SHA256SUMS"),
        "only the checksums are read: {:?}",
        server.downloads()
    );
}

#[cfg(unix)]
#[test]
fn a_binary_owned_by_dpkg_is_refused_with_the_apt_command() {
    use std::os::unix::fs::PermissionsExt;
    let install = Install::new("su-upgrade-dpkg");
    install.link(PLUGIN);
    let before = inode(&install.plugin());
    // A dpkg-query that says every file belongs to the package, as it does for /usr/bin's.
    let fake_bin = install.dir.join("fake-bin");
    std::fs::create_dir_all(&fake_bin).unwrap();
    let query = fake_bin.join("dpkg-query");
    std::fs::write(
        &query,
        "#!/bin/sh\n[ \"$1\" = --search ] || exit 2\necho \"check-storage-security:amd64: $2\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&query, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = ReleaseServer::start();
    server.answer(200, &feed_of(&format!("v{NEWER}")));
    let path = std::fs::canonicalize(install.plugin()).unwrap();
    for args in [&["--upgrade-self"][..], &["--upgrade-self", "check"]] {
        let run = install.run(args, &server.feed_url(), Some(&fake_bin));
        assert_eq!(run.code, 3, "{}", run.stdout);
        assert_eq!(
            run.stdout,
            format!(
                "UNKNOWN: {} belongs to the package check-storage-security (dpkg); upgrade it \
                 with: apt install --only-upgrade check-storage-security\n",
                path.display()
            )
        );
    }
    assert!(
        server.requests().is_empty(),
        "nothing asked: {:?}",
        server.requests()
    );
    assert_eq!(inode(&install.plugin()), before);
}

#[cfg(unix)]
#[test]
fn nothing_to_do_and_mistakes() {
    let install = Install::new("su-upgrade-current");
    install.link(PLUGIN);
    let server = ReleaseServer::start();
    server.answer(200, &feed_of(&format!("v{RUNNING}")));
    let run = install.run(&["--upgrade-self"], &server.feed_url(), None);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.stdout,
        format!(
            "{PLUGIN} {RUNNING} is up to date (the newest release is {RUNNING}); nothing to do\n"
        )
    );
    assert!(server.downloads().is_empty());

    let cases: &[(&[&str], &str)] = &[
        (
            &["--check-only"],
            "UNKNOWN: --check-only goes with --upgrade-self",
        ),
        (
            &["--upgrade-self", "-H", "x.example"],
            "UNKNOWN: --upgrade-self upgrades this program and scans nothing; remove -H",
        ),
        (
            &["--upgrade-self", "later"],
            "UNKNOWN: unexpected argument \"later\"",
        ),
    ];
    for (args, start) in cases {
        let run = install.run(args, &server.feed_url(), None);
        assert_eq!(run.code, 3, "{args:?}");
        assert!(run.stdout.starts_with(start), "{args:?}: {}", run.stdout);
    }
    // A release feed over plain http elsewhere than loopback is refused before any traffic.
    let run = install.run(&["--upgrade-self"], "http://releases.example/feed", None);
    assert_eq!(run.code, 3);
    assert!(
        run.stdout.contains("release downloads need https"),
        "{}",
        run.stdout
    );
    // A feed that fails.
    server.answer(500, "down");
    let run = install.run(&["--upgrade-self"], &server.feed_url(), None);
    assert_eq!(run.code, 3);
    assert!(
        run.stdout
            .starts_with("UNKNOWN: the release feed cannot be read: "),
        "{}",
        run.stdout
    );
    assert_eq!(install.names(), [PLUGIN]);
}
