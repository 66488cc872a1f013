//! Replacing a file atomically, for everything the plugin writes (the baseline, the feed
//! cache, its own binary with `--upgrade-self`): a temporary file in the same directory is written, flushed and renamed over the
//! target, so a reader sees the old file or the complete new one, never a torn one.
//!
//! A run killed between creating its temporary file and renaming it leaves
//! `.<name>.<pid>.<n>.tmp` behind. The next write of the same file removes such leftovers of
//! processes that no longer run (or, where that cannot be told, that are over an hour old); a
//! temporary file of a run still writing is left alone.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Creates `dir` and its parents, the new ones readable by the operator only (0700): what
/// lands in it (the feed cache, the state of the update check and the web store) is theirs.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Leftovers older than this are removed even where a process cannot be looked up.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// Which step failed, and why.
#[derive(Debug)]
pub struct Failure {
    pub step: &'static str,
    pub error: io::Error,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.step, self.error)
    }
}

fn failed(step: &'static str) -> impl FnOnce(io::Error) -> Failure {
    move |error| Failure { step, error }
}

/// Replaces `path` (through a symbolic link, which stays a link) with what `write` produces.
/// A new file gets `mode` (Unix permission bits, before the umask); a replaced one keeps its
/// permissions. The temporary file is removed on every failure.
pub fn replace(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(), Failure> {
    stage(path, mode, write)?.commit()
}

/// The first half of [`replace`]: the new content written, flushed and closed in a temporary
/// file beside `path`, not yet renamed over it. The caller can look at (or run) the staged
/// file before [`Staged::commit`]; a staged file that is dropped uncommitted is removed, and
/// `path` is left as it was.
pub fn stage(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<Staged, Failure> {
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Failure {
            step: "the path names no file",
            error: io::Error::from(io::ErrorKind::InvalidInput),
        })?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    remove_leftovers(&dir, &name);
    let (temp, mut file) = create_temp(&dir, &name, mode)
        .map_err(failed("cannot create a temporary file beside it"))?;
    let staged = Staged {
        temp,
        target,
        dir,
        committed: false,
    };
    if let Ok(meta) = fs::metadata(&staged.target) {
        let _ = file.set_permissions(meta.permissions());
    }
    write(&mut file).map_err(failed("cannot write"))?;
    file.sync_all().map_err(failed("cannot flush to disk"))?;
    drop(file);
    Ok(staged)
}

/// A complete new version of a file, waiting beside it to replace it ([`stage`]).
#[derive(Debug)]
pub struct Staged {
    temp: PathBuf,
    target: PathBuf,
    dir: PathBuf,
    committed: bool,
}

impl Staged {
    /// The temporary file holding the new content (closed: it can be read or executed).
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Renames the staged file over its target: readers see the old file or the new one.
    pub fn commit(mut self) -> Result<(), Failure> {
        fs::rename(&self.temp, &self.target).map_err(failed("cannot replace it"))?;
        self.committed = true;
        // The rename survives a crash once the directory entry is flushed too.
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(failed("cannot flush its directory to disk"))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Unique temporary names within one process; the process id separates processes.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_prefix(name: &str) -> String {
    format!(".{name}.")
}

fn create_temp(dir: &Path, name: &str, mode: u32) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..16 {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(
            "{}{}.{n}.tmp",
            temp_prefix(name),
            std::process::id()
        ));
        let opened = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temp);
        match opened {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

/// Removes temporary files of `name` that a killed run left in `dir`.
fn remove_leftovers(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = temp_prefix(name);
    let own = std::process::id();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|n| n.strip_suffix(".tmp"))
        else {
            continue;
        };
        // `<pid>.<n>`: anything else is not ours.
        let Some(pid) = rest
            .split_once('.')
            .filter(|(_, n)| n.parse::<u64>().is_ok())
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != own && is_leftover(&entry.path(), pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn is_leftover(path: &Path, pid: u32) -> bool {
    let old = fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > STALE_AFTER);
    // Where processes can be looked up (Linux), a writer that no longer runs is certain.
    let proc_fs = Path::new("/proc/self").exists();
    old || (proc_fs && !Path::new(&format!("/proc/{pid}")).exists())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("cos-atomic-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut n: Vec<String> = fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn replaces_and_leaves_no_temporary_file() {
        let d = dir("replace");
        let path = d.join("baseline.json");
        replace(&path, 0o600, |f| f.write_all(b"one")).unwrap();
        replace(&path, 0o600, |f| f.write_all(b"two")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(names(&d), ["baseline.json"]);
        let e = replace(&path, 0o600, |_| Err(io::Error::other("disk full"))).unwrap_err();
        assert_eq!(e.step, "cannot write");
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(names(&d), ["baseline.json"]);
    }

    #[test]
    fn a_staged_file_replaces_on_commit_and_vanishes_when_dropped() {
        let d = dir("stage");
        let path = d.join("tool");
        fs::write(&path, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o750)).unwrap();
        }
        let staged = stage(&path, 0o600, |f| f.write_all(b"new")).unwrap();
        assert_eq!(fs::read_to_string(staged.path()).unwrap(), "new");
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        drop(staged);
        assert_eq!(names(&d), ["tool"], "an uncommitted file is removed");
        let staged = stage(&path, 0o600, |f| f.write_all(b"new")).unwrap();
        staged.commit().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(names(&d), ["tool"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o750, "the replaced file's mode is kept");
        }
    }

    #[test]
    fn leftovers_of_killed_runs_are_removed_and_live_ones_kept() {
        let d = dir("leftovers");
        let path = d.join("baseline.json");
        // A pid no process has (above the kernel's limit), this process, and other names.
        let dead = d.join(".baseline.json.4194305.0.tmp");
        let live = d.join(format!(".baseline.json.{}.7.tmp", std::process::id()));
        let other = d.join(".other.json.4194305.0.tmp");
        let unrelated = d.join(".baseline.json.notes.tmp");
        for p in [&dead, &live, &other, &unrelated] {
            fs::write(p, "x").unwrap();
        }
        replace(&path, 0o600, |f| f.write_all(b"{}")).unwrap();
        assert!(!dead.exists(), "a dead writer's file is removed");
        assert!(live.exists() && other.exists() && unrelated.exists());
    }
}
