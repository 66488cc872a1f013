//! `--upgrade-self [check]`: the operator's action that replaces this program with the newest
//! release. It scans nothing and needs no target.
//!
//! 1. The binary is the running one (`current_exe`, links resolved). One that a package
//!    manager owns is refused, naming the package manager's command ([`owner`]).
//! 2. The release feed (`--self-update-url`, https or loopback http) names the newest
//!    published release; nothing newer than the running version: done, exit 0.
//! 3. The asset for this platform: the archive `check-storage-security-X.Y.Z-TARGET.tar.gz`
//!    (both programs) or the bare binaries `check-storage-security-X.Y.Z-TARGET` and
//!    `check-storage-scanner-X.Y.Z-TARGET`; the release's `SHA256SUMS` (or `<asset>.sha256`)
//!    must list it. A missing asset or checksum is refused.
//! 4. `check` (or `--check-only`) stops here and says what it would do.
//! 5. The asset is downloaded (at most [`MAX_ASSET`], redirects followed, see
//!    `net::download`) into a temporary file beside the binary and its SHA-256 compared with
//!    the published one: a mismatch is refused and the file removed. An archive is unpacked
//!    into temporary files beside the binaries.
//! 6. Each new binary must run and print `<program> X.Y.Z` for `--version` (a binary for
//!    another C library or architecture is caught here, before anything is replaced).
//! 7. Only then is each renamed over its old binary (atomic; the old file's mode is kept):
//!    the plugin, and `check-storage-scanner` when it sits in the same directory.
//!
//! Exit 0 when done or nothing is to be done; any refusal or failure is one line, exit 3,
//! with every temporary file removed and the binaries as they were.

use super::archive;
use super::{
    Asset, CHECKSUMS, Release, archive_asset, binary_asset, checksum_for, owner, parse_feed,
    running_version, targets,
};
use crate::atomic_file::{self, Staged};
use crate::diagnostics::debug_log;
use crate::feeds::Feed;
use crate::net::download::{self, Options};
use crate::net::feed::Fetched;
use crate::net::http::ClientOptions;
use crate::process::{Outcome, unknown};
use crate::program::user_agent;
use crate::settings::cli::CommandLine;
use crate::settings::manual::PROGRAM;
use crate::settings::options::Program;
use crate::settings::secrets::Environment;
use crate::settings::{Component, Settings};
use crate::text::hex;
use semver::Version;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The largest asset downloaded; a release binary is a few MiB.
pub const MAX_ASSET: u64 = 64 * 1024 * 1024;
/// The largest checksum file read.
const MAX_CHECKSUMS: u64 = 1024 * 1024;
/// The most one download may take.
const DOWNLOAD_TIME: Duration = Duration::from_secs(600);
/// How long a new binary may take to print its version.
const VERSION_TIME: Duration = Duration::from_secs(10);

/// The action: `--upgrade-self`, `--upgrade-self check`, `--upgrade-self --check-only`.
pub fn run(line: &CommandLine, env: &dyn Environment) -> Outcome {
    if line
        .last(crate::settings::options::Id::upgrade_self)
        .is_none()
    {
        return unknown(
            "--check-only goes with --upgrade-self: write --upgrade-self check (or \
             --upgrade-self --check-only)",
        );
    }
    if !line.all(crate::settings::options::Id::host).is_empty() {
        return unknown("--upgrade-self upgrades this program and scans nothing; remove -H");
    }
    let check_only = line
        .last(crate::settings::options::Id::check_only)
        .is_some();
    let done = Settings::resolve_for(line, env, Component::Upgrade)
        .map_err(|e| e.0)
        .and_then(|settings| {
            crate::process::setup_process(&settings)?;
            upgrade(&settings, check_only)
        });
    match done {
        Ok(stdout) => Outcome {
            stdout,
            exit_code: 0,
        },
        Err(e) => unknown(&e),
    }
}

/// One program to replace, and where its new version comes from.
struct Item {
    program: Program,
    path: PathBuf,
    /// The bare binary asset, or `None` when it comes out of the archive.
    asset: Option<Asset>,
}

/// What the release offers this platform.
struct Plan {
    release: Release,
    /// The archive holding both programs, when the release has one for this platform.
    archive: Option<Asset>,
    items: Vec<Item>,
    /// Lines about what is not done (a scanner beside the plugin without an asset).
    notes: Vec<String>,
    checksums: Asset,
}

fn upgrade(settings: &Settings, check_only: bool) -> Result<String, String> {
    if !cfg!(unix) {
        return Err(
            "--upgrade-self replaces binaries on Unix systems only; install the new release by \
             hand"
                .into(),
        );
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot tell where this program is installed ({e})"))?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    if let Some(owner) = owner::owner(&exe) {
        return Err(format!(
            "{} belongs to the package {} ({}); upgrade it with: {}",
            exe.display(),
            owner.package,
            owner.manager,
            owner.command
        ));
    }
    let url = settings.self_update_url.as_str();
    download::allowed(url).map_err(|e| format!("--self-update-url: {e}"))?;
    let release = newest_release(settings, url)?;
    let running = running_version();
    if release.version <= running {
        return Ok(format!(
            "{PROGRAM} {running} is up to date (the newest release is {}); nothing to do\n",
            release.version
        ));
    }
    let plan = plan(release, &exe)?;
    let options = Options {
        proxy: settings.scan.proxy.clone(),
        timeout: settings.scan.timeout,
        total: DOWNLOAD_TIME,
        user_agent: user_agent(),
    };
    let sums = fetch_checksums(&plan.checksums, &options)?;
    let downloads: Vec<&Asset> = match &plan.archive {
        Some(archive) => vec![archive],
        None => plan.items.iter().filter_map(|i| i.asset.as_ref()).collect(),
    };
    let mut expected = Vec::new();
    for asset in &downloads {
        let sum = checksum_for(&sums, &asset.name).ok_or_else(|| {
            format!(
                "{} of release {} lists no SHA-256 for {}; refusing to install an unverified \
                 download",
                plan.checksums.name, plan.release.tag, asset.name
            )
        })?;
        if let Some(size) = asset.size.filter(|s| *s > MAX_ASSET) {
            return Err(format!(
                "{} is {} by the release feed, more than the {} an upgrade downloads",
                asset.name,
                crate::files::size_text(size),
                crate::files::size_text(MAX_ASSET)
            ));
        }
        expected.push(sum);
    }
    if check_only {
        return Ok(describe(&plan, &downloads, running));
    }

    // Nothing is downloaded where it could not be put.
    for item in &plan.items {
        drop(
            atomic_file::stage(&item.path, 0o755, |_| Ok(()))
                .map_err(|f| cannot_write(&item.path, &f))?,
        );
    }
    let mut staged: Vec<(&Item, Staged)> = Vec::new();
    match &plan.archive {
        Some(archive) => {
            let holder = exe.with_file_name(format!(".{PROGRAM}-download"));
            let downloaded =
                fetch_verified(&holder, 0o600, archive, &expected[0], &options, &plan)?;
            for item in &plan.items {
                let name = item.program.name();
                let error = RefCell::new(None);
                let result = atomic_file::stage(&item.path, 0o755, |file| {
                    let source = std::fs::File::open(downloaded.path())?;
                    match archive::extract(source, name, file, MAX_ASSET) {
                        Ok(Some(_)) => Ok(()),
                        Ok(None) => Err(keep(&error, format!("{} holds no {name}", archive.name))),
                        Err(e) => Err(keep(&error, format!("{}: {e}", archive.name))),
                    }
                });
                let file = result
                    .map_err(|f| error.take().unwrap_or_else(|| cannot_write(&item.path, &f)))?;
                staged.push((item, file));
            }
        }
        None => {
            for (item, sum) in plan.items.iter().zip(&expected) {
                let asset = item.asset.as_ref().expect("a bare asset");
                let file = fetch_verified(&item.path, 0o755, asset, sum, &options, &plan)?;
                staged.push((item, file));
            }
        }
    }
    for (item, file) in &staged {
        runs_as(file.path(), item.program, &plan.release.version)?;
    }

    let mut out = String::new();
    // The archive, or the bare binaries.
    let via = downloads
        .iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let total = staged.len();
    for (n, (item, file)) in staged.into_iter().enumerate() {
        let mode = mode_text(&item.path);
        if let Err(f) = file.commit() {
            let done = if n == 0 {
                "nothing was replaced".to_string()
            } else {
                format!("{} of {total} binaries were replaced", n)
            };
            return Err(format!(
                "cannot replace {}: {f}; {done}",
                item.path.display()
            ));
        }
        if item.program == Program::Plugin {
            out.push_str(&format!(
                "{PROGRAM} upgraded from {running} to {}: {} replaced{mode}; SHA-256 of {via} \
                 verified against {}\n",
                plan.release.version,
                item.path.display(),
                plan.checksums.name
            ));
        } else {
            out.push_str(&format!(
                "{} upgraded to {}: {} replaced{mode}\n",
                item.program.name(),
                plan.release.version,
                item.path.display()
            ));
        }
    }
    out.extend(plan.notes.iter().map(|note| format!("{note}\n")));
    Ok(out)
}

/// Asks the release feed for its newest published release.
fn newest_release(settings: &Settings, url: &str) -> Result<Release, String> {
    let options = ClientOptions {
        timeout: settings.scan.timeout.into(),
        pin: None,
        proxy: settings.scan.proxy.clone(),
        user_agent: user_agent(),
    };
    let shown = download::shown(url);
    let body = match crate::net::feed::fetch(url, None, None, Feed::Releases.cap(), &options) {
        Ok(Fetched::Document { body, .. }) => body,
        Ok(Fetched::NotModified { .. }) => {
            return Err(format!(
                "the release feed {shown} answered 304 to no question"
            ));
        }
        Err(e) => return Err(format!("the release feed cannot be read: {e}")),
    };
    parse_feed(&body).map_err(|e| format!("{e} ({shown})"))
}

/// Which assets of `release` replace which binaries.
fn plan(release: Release, exe: &Path) -> Result<Plan, String> {
    let platforms = targets();
    let Some(first) = platforms.first() else {
        return Err(format!(
            "no release is built for this platform ({} {}); install from source",
            std::env::consts::OS,
            std::env::consts::ARCH
        ));
    };
    let version = &release.version;
    let bare = |program: &str, target: &str| {
        release
            .asset(&binary_asset(program, version, target))
            .cloned()
    };
    let chosen = platforms.iter().find(|target| {
        release.asset(&archive_asset(version, target)).is_some() || bare(PROGRAM, target).is_some()
    });
    let Some(target) = chosen else {
        return Err(format!(
            "release {} has no asset for this platform ({}); nothing was changed",
            release.tag,
            archive_asset(version, first)
        ));
    };
    let archive = release.asset(&archive_asset(version, target)).cloned();
    // A bare binary is downloaded only when there is no archive to take it from.
    let mut items = vec![Item {
        program: Program::Plugin,
        path: exe.to_path_buf(),
        asset: bare(PROGRAM, target).filter(|_| archive.is_none()),
    }];
    let mut notes = Vec::new();
    let scanner = exe.with_file_name(Program::Scanner.name());
    if std::fs::metadata(&scanner).is_ok_and(|m| m.is_file()) {
        let scanner = std::fs::canonicalize(&scanner).unwrap_or(scanner);
        let bare = bare(Program::Scanner.name(), target);
        if archive.is_some() || bare.is_some() {
            items.push(Item {
                program: Program::Scanner,
                path: scanner,
                asset: bare.filter(|_| archive.is_none()),
            });
        } else {
            notes.push(format!(
                "{} stays as it is: release {} has no {} asset for {target}",
                scanner.display(),
                release.tag,
                Program::Scanner.name()
            ));
        }
    }
    // Without SHA256SUMS, a single download may be covered by its own `<asset>.sha256`.
    let single = match (&archive, items.as_slice()) {
        (Some(archive), _) => Some(archive),
        (None, [only]) => only.asset.as_ref(),
        _ => None,
    };
    let own_sum = single.and_then(|a| release.asset(&format!("{}.sha256", a.name)));
    let checksums = match release.asset(CHECKSUMS).or(own_sum) {
        Some(sums) => sums.clone(),
        None => {
            return Err(format!(
                "release {} publishes no {CHECKSUMS}; refusing to install an unverified \
                 download (nothing was changed)",
                release.tag
            ));
        }
    };
    Ok(Plan {
        release,
        archive,
        items,
        notes,
        checksums,
    })
}

fn fetch_checksums(asset: &Asset, options: &Options) -> Result<String, String> {
    let mut body = Vec::new();
    download::download(&asset.url, MAX_CHECKSUMS, &mut body, options)
        .map_err(|e| format!("{} cannot be downloaded: {e}", asset.name))?;
    String::from_utf8(body).map_err(|_| format!("{} is not text", asset.name))
}

/// Downloads `asset` into a file staged beside `path` and compares its SHA-256 with `sum`.
fn fetch_verified(
    path: &Path,
    mode: u32,
    asset: &Asset,
    sum: &[u8; 32],
    options: &Options,
    plan: &Plan,
) -> Result<Staged, String> {
    let error = RefCell::new(None);
    let started = Instant::now();
    let staged = atomic_file::stage(path, mode, |file| {
        let got = download::download(&asset.url, MAX_ASSET, file, options)
            .map_err(|e| keep(&error, format!("{} cannot be downloaded: {e}", asset.name)))?;
        if &got.sha256 != sum {
            return Err(keep(
                &error,
                format!(
                    "the SHA-256 of {} is {}, but {} of release {} says {}; refusing to \
                     install it (nothing was changed)",
                    asset.name,
                    hex(&got.sha256),
                    plan.checksums.name,
                    plan.release.tag,
                    hex(sum)
                ),
            ));
        }
        debug_log(&format!(
            "downloaded {} ({} bytes in {:.1} s), SHA-256 verified",
            asset.name,
            got.bytes,
            started.elapsed().as_secs_f64()
        ));
        Ok(())
    });
    staged.map_err(|f| error.take().unwrap_or_else(|| cannot_write(path, &f)))
}

/// Keeps a refusal's wording while the file layer only carries an `io::Error`.
fn keep(slot: &RefCell<Option<String>>, message: String) -> std::io::Error {
    let error = std::io::Error::other(message.clone());
    *slot.borrow_mut() = Some(message);
    error
}

fn cannot_write(path: &Path, failure: &atomic_file::Failure) -> String {
    let dir = path.parent().unwrap_or(Path::new("."));
    format!(
        "cannot write beside {}: {failure}; run the upgrade as the user that may write to {} \
         (nothing was changed)",
        path.display(),
        dir.display()
    )
}

/// The new binary must run here and be the release it claims to be.
fn runs_as(path: &Path, program: Program, version: &Version) -> Result<(), String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let expected = format!("{} {version}", program.name());
    let refuse = |why: String| {
        format!(
            "the downloaded {} does not run here ({why}); nothing was changed",
            program.name()
        )
    };
    let mut child = Command::new(path)
        .arg("--version")
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| refuse(e.to_string()))?;
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut stdout).take(64 * 1024).read_to_end(&mut text);
        // Whatever else it prints is read and dropped, so it never blocks on a full pipe.
        let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        text
    });
    let deadline = Instant::now() + VERSION_TIME;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(refuse(format!(
                    "--version did not answer within {} s",
                    VERSION_TIME.as_secs()
                )));
            }
            Err(e) => return Err(refuse(e.to_string())),
        }
    };
    let text = reader.join().unwrap_or_default();
    let first = String::from_utf8_lossy(&text)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    if !status.success() {
        return Err(refuse(format!("--version exited with {status}")));
    }
    if first != expected {
        return Err(refuse(format!(
            "--version printed {:?}, not {expected:?}",
            first.chars().take(80).collect::<String>()
        )));
    }
    Ok(())
}

/// ` (mode 0755 kept)`, from the file about to be replaced.
fn mode_text(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            return format!(" (mode {:04o} kept)", meta.permissions().mode() & 0o7777);
        }
    }
    let _ = path;
    String::new()
}

/// `check`: what the upgrade would do.
fn describe(plan: &Plan, downloads: &[&Asset], running: Version) -> String {
    let mut out = format!(
        "{PROGRAM} {running} would be upgraded to {} (release {}); nothing was changed (check \
         only)\n",
        plan.release.version, plan.release.tag
    );
    for asset in downloads {
        let size = asset
            .size
            .map(|s| format!(" ({})", crate::files::size_text(s)))
            .unwrap_or_default();
        out.push_str(&format!(
            "would download {}{size} and verify its SHA-256 against {}\n",
            asset.name, plan.checksums.name
        ));
    }
    for item in &plan.items {
        out.push_str(&format!(
            "would replace {}{}\n",
            item.path.display(),
            mode_text(&item.path)
        ));
    }
    out.extend(plan.notes.iter().map(|note| format!("{note}\n")));
    out
}
