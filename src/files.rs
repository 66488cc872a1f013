//! Operator files: every file the operator points the check at is read here and nowhere else.
//!
//! A monitoring plugin runs unattended thousands of times a day, so one wrong path must never
//! hang a run past the monitoring core's timeout or take the memory of the host. Each read:
//!
//! 1. looks at the path's metadata first (symbolic links followed: a link to a regular file is
//!    fine) and refuses anything that is not a regular file: a FIFO would block the open and
//!    the read forever (ignoring `--timeout`), a device such as `/dev/zero` never ends, a
//!    directory or a socket is a wrong path;
//! 2. refuses a file larger than the cap of its kind (the table below), before reading;
//! 3. opens without blocking and looks again at what was opened, so a path swapped for
//!    something else between the two looks is still refused;
//! 4. reads at most the cap plus one byte, so a file that grows after the look is still
//!    bounded and refused.
//!
//! | Kind | Setting | Cap |
//! |---|---|---|
//! | configuration | `--config`, `COS_CONFIG_FILE`, the search list | 1 MiB |
//! | policy | `--policy` | 1 MiB |
//! | baseline | `--baseline` | 4 MiB |
//! | CA bundle | `--ca-file` | 4 MiB |
//! | advisory file | `scanner.vulnerability_db` | 4 MiB |
//! | release schedule | `scanner.release_schedule` | 1 MiB |
//! | result document | `--result` (`check-storage-scanner review-waivers`) | 16 MiB |
//! | value file | `file://`, `secret://`, `_file` / `_FILE` | 64 KiB |
//!
//! A refusal is one line: what the file is, the problem, and the fix naming the setting. The
//! caller names the file: by its path, or by the reference it came from when the path itself
//! was read from one (`Given::shown`).
//!
//! YAML files (configuration, policy) are parsed with [`yaml_options`]: a small alias budget,
//! so a "billion laughs" document is refused instead of expanded.

use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// What an operator file is for; decides its cap, how messages name it and the fix they give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The configuration file (`--config`, `COS_CONFIG_FILE` or the search list).
    Configuration,
    /// `--policy`.
    Policy,
    /// `--baseline`: a missing file is not an error (the first run records it).
    Baseline,
    /// `--ca-file`.
    CaBundle,
    /// One file of `scanner.vulnerability_db`.
    AdvisoryFile,
    /// `scanner.release_schedule`.
    ReleaseSchedule,
    /// `--result`: the plugin's `--format json` output, or `check-storage-scanner scan`'s.
    ResultDocument,
    /// `--host-list`: targets, one a line.
    HostList,
    /// A value behind a `file://` or `secret://` reference or a `_file` / `_FILE` setting.
    Value,
}

impl Kind {
    /// The largest file of this kind, in bytes.
    ///
    /// Configuration and policy files are a few hundred bytes. A baseline holds about 2.5 KiB
    /// per host (60 finding ids), 8 KiB for a host with every exposure: 32 hosts take at most
    /// 256 KiB, and 4 MiB leaves room for well over a thousand hosts sharing one file. The
    /// public-root bundle of a distribution is about 220 KiB; a private CA bundle is smaller.
    /// The bundled advisories are 3 KiB and an OSV or GitHub advisory answer for one product is
    /// tens of KiB; the bundled release schedule is 5 KiB. Secret values are tokens and URLs.
    /// A result document takes about 40 KiB per host (pretty-printed, every finding with its
    /// remediation), so 16 MiB holds the `--format json` array of a few hundred hosts. A
    /// list of targets takes a line each: 16 MiB holds 100,000 URLs of 160 bytes.
    pub const fn cap(self) -> u64 {
        match self {
            Kind::Configuration | Kind::Policy | Kind::ReleaseSchedule => MIB,
            Kind::Baseline | Kind::CaBundle | Kind::AdvisoryFile => 4 * MIB,
            Kind::ResultDocument | Kind::HostList => 16 * MIB,
            Kind::Value => 64 * KIB,
        }
    }

    /// How a message names a file of this kind, before its path.
    pub const fn noun(self) -> &'static str {
        match self {
            Kind::Configuration => "configuration file",
            Kind::Policy => "policy file",
            Kind::Baseline => "baseline file",
            Kind::CaBundle => "--ca-file",
            Kind::AdvisoryFile => "scanner.vulnerability_db file",
            Kind::ReleaseSchedule => "scanner.release_schedule file",
            Kind::ResultDocument => "result file",
            Kind::HostList => "host list",
            Kind::Value => "value file",
        }
    }

    /// The fix, naming the setting.
    pub const fn fix(self) -> &'static str {
        match self {
            Kind::Configuration => {
                "point --config or COS_CONFIG_FILE at a YAML or JSON configuration file"
            }
            Kind::Policy => "point --policy at a YAML or JSON policy file",
            Kind::Baseline => {
                "point --baseline at a baseline file, or at a path that does not exist yet to \
                 record one"
            }
            Kind::CaBundle => "give --ca-file the path of a PEM bundle of the CA",
            Kind::AdvisoryFile => {
                "point scanner.vulnerability_db at native, GitHub advisory or OSV JSON files"
            }
            Kind::ReleaseSchedule => {
                "point scanner.release_schedule at a release schedule JSON file"
            }
            Kind::ResultDocument => {
                "give --result what check-storage-security --format json or \
                 check-storage-scanner scan printed (split a larger fleet over several --result)"
            }
            Kind::HostList => "point --host-list at a text file of targets, one a line",
            Kind::Value => "check the path and point to a regular file holding only the value",
        }
    }
}

/// Why an operator file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Nothing at the path (or a dangling symbolic link).
    Missing,
    /// The operating system refused to show or open it (permissions, I/O error).
    Unreadable(String),
    /// Not a regular file: `a directory`, `a FIFO (named pipe)`, `a character device`, ...
    NotRegular(&'static str),
    /// Larger than the cap; the size when it was known before reading.
    TooLarge(Option<u64>),
    /// The file is not UTF-8 text.
    NotText,
}

/// An operator file that cannot be used: the problem, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub kind: Kind,
    pub problem: Problem,
}

impl Refusal {
    fn new(kind: Kind, problem: Problem) -> Refusal {
        Refusal { kind, problem }
    }

    pub fn is_missing(&self) -> bool {
        self.problem == Problem::Missing
    }

    /// The problem as the rest of a sentence about the file: `is a directory, not a regular
    /// file`.
    pub fn problem_text(&self) -> String {
        match &self.problem {
            Problem::Missing => "does not exist".to_string(),
            Problem::Unreadable(e) => format!("cannot be read ({e})"),
            Problem::NotRegular(what) => format!("is {what}, not a regular file"),
            Problem::TooLarge(Some(size)) => format!(
                "is larger than {} ({})",
                size_text(self.kind.cap()),
                size_beside(*size, self.kind.cap())
            ),
            Problem::TooLarge(None) => format!(
                "is larger than {} (it grew while being read)",
                size_text(self.kind.cap())
            ),
            Problem::NotText => "is not UTF-8 text (save it as UTF-8)".to_string(),
        }
    }

    /// The problem and the fix: `is a FIFO (named pipe), not a regular file; point --policy
    /// at a YAML or JSON policy file`.
    pub fn reason(&self) -> String {
        format!("{}; {}", self.problem_text(), self.kind.fix())
    }

    /// The whole line, naming the file as `shown` (its path, or `(from <reference>)`).
    pub fn line(&self, shown: &str) -> String {
        format!("{} {shown} {}", self.kind.noun(), self.reason())
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason())
    }
}

/// `64 KiB`, `1 MiB`, `150.0 MiB`, `812 bytes`.
pub fn size_text(bytes: u64) -> String {
    let exact = |unit: u64, name: &str| {
        if bytes % unit == 0 {
            format!("{} {name}", bytes / unit)
        } else {
            format!("{:.1} {name}", bytes as f64 / unit as f64)
        }
    };
    if bytes >= MIB {
        exact(MIB, "MiB")
    } else if bytes >= KIB {
        exact(KIB, "KiB")
    } else {
        format!("{bytes} bytes")
    }
}

/// A size shown beside a cap: in bytes while close to it (`65537 bytes`, not `64.0 KiB`).
fn size_beside(size: u64, cap: u64) -> String {
    if size < cap.saturating_mul(2) {
        format!("{size} bytes")
    } else {
        size_text(size)
    }
}

/// Checks that the file is usable without reading it: a regular file, readable, within the
/// cap. Settings call it for every operator file before the first packet of a run.
pub fn check(path: &Path, kind: Kind) -> Result<(), Refusal> {
    open(path, kind).map(|_| ())
}

/// Reads the whole file, refusing what [`check`] refuses and a file that grows past the cap
/// while being read.
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, Refusal> {
    let (file, len) = open(path, kind)?;
    let cap = kind.cap();
    // One byte of room past the size seen, so reading ends without growing the buffer.
    let mut bytes = Vec::with_capacity(len.min(cap) as usize + 1);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Refusal::new(kind, unreadable(&e)))?;
    if bytes.len() as u64 > cap {
        return Err(Refusal::new(kind, Problem::TooLarge(None)));
    }
    Ok(bytes)
}

/// Reads the whole file as UTF-8 text (see [`read`]).
pub fn read_text(path: &Path, kind: Kind) -> Result<String, Refusal> {
    String::from_utf8(read(path, kind)?).map_err(|_| Refusal::new(kind, Problem::NotText))
}

/// Opens a regular file within the cap; returns it and its size.
fn open(path: &Path, kind: Kind) -> Result<(File, u64), Refusal> {
    let refuse = |problem| Refusal::new(kind, problem);
    // Metadata first: opening a FIFO for reading blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(|e| refuse(looked_at(&e)))?;
    regular_within_cap(&meta, kind)?;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Should the path have become a FIFO since the look above, the open returns at once.
        options.custom_flags(NONBLOCK);
    }
    let file = options.open(path).map_err(|e| refuse(looked_at(&e)))?;
    // What was opened is what is read: look again at the open file itself.
    let meta = file.metadata().map_err(|e| refuse(unreadable(&e)))?;
    regular_within_cap(&meta, kind)?;
    Ok((file, meta.len()))
}

/// `O_NONBLOCK`: 04000 on Linux's common architectures (and most others), 4 on the BSDs and
/// macOS. On a regular file it changes nothing.
#[cfg(unix)]
const NONBLOCK: i32 = if cfg!(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
)) {
    0x4
} else if cfg!(any(target_arch = "mips", target_arch = "mips64")) {
    0x80
} else if cfg!(any(target_arch = "sparc", target_arch = "sparc64")) {
    0x4000
} else {
    0o4000
};

fn regular_within_cap(meta: &Metadata, kind: Kind) -> Result<(), Refusal> {
    let refuse = |problem| Err(Refusal::new(kind, problem));
    if !meta.is_file() {
        return refuse(Problem::NotRegular(file_type_name(meta)));
    }
    if meta.len() > kind.cap() {
        return refuse(Problem::TooLarge(Some(meta.len())));
    }
    Ok(())
}

fn file_type_name(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "something else"
}

fn looked_at(e: &io::Error) -> Problem {
    match e.kind() {
        io::ErrorKind::NotFound => Problem::Missing,
        _ => unreadable(e),
    }
}

fn unreadable(e: &io::Error) -> Problem {
    // One line, whatever the operating system says.
    Problem::Unreadable(crate::text::one_line(&e.to_string()))
}

/// Aliases a YAML operator file may use: plenty for a configuration that names a list
/// twice, far too few for an alias bomb.
pub const YAML_MAX_ALIASES: usize = 64;
/// Nodes replayed from aliases, in all.
pub const YAML_MAX_REPLAYED: usize = 1024;

/// Parser options for YAML operator files: a small alias budget and a nesting limit, so a
/// document that expands into millions of nodes is refused while it is being read.
pub fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_aliases: YAML_MAX_ALIASES,
            max_anchors: YAML_MAX_ALIASES,
            max_depth: 32,
            max_nodes: 100_000,
            max_documents: 1,
            max_merge_keys: YAML_MAX_ALIASES,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: YAML_MAX_REPLAYED,
            max_replay_stack_depth: 8,
        },
    }
}

/// What is wrong with a YAML document, as a clause that reads after "is" or a colon: the
/// alias budget in words when that stopped the parse, else the parser's first line without
/// its advice meant for programmers.
pub fn yaml_problem(error: &serde_saphyr::Error) -> String {
    use serde_saphyr::Error;
    use serde_saphyr::budget::BudgetBreach;
    let mut root = error;
    while let Error::AliasError { error, .. } | Error::WithSnippet { error, .. } = root {
        root = error;
    }
    let aliases = format!(
        "over the YAML alias budget ({YAML_MAX_ALIASES} aliases, {YAML_MAX_REPLAYED} nodes \
         repeated through them); write the values out instead of aliasing them"
    );
    match root {
        Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. }
        | Error::AliasReplayCounterOverflow { .. } => aliases,
        Error::Budget { breach, .. } => match breach {
            BudgetBreach::Aliases { .. }
            | BudgetBreach::Anchors { .. }
            | BudgetBreach::AliasAnchorRatio { .. }
            | BudgetBreach::MergeKeys { .. }
            | BudgetBreach::RecordedAnchorEvents { .. }
            | BudgetBreach::RecordedAnchorBytes { .. } => aliases,
            BudgetBreach::Depth { .. } => {
                "nested deeper than 32 levels; an operator file is a few levels deep".to_string()
            }
            other => format!("beyond what an operator file may hold ({other:?}); shorten it"),
        },
        _ => {
            // The whole error: its text carries the line and column.
            let text = error.to_string();
            let line = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("syntax error");
            let line = line.strip_prefix("error: ").unwrap_or(line);
            match line.split_once(", set DuplicateKeyPolicy") {
                Some((duplicate, _)) => {
                    format!("not valid YAML ({duplicate}); write each key once")
                }
                None => format!("not valid YAML ({line}); fix the syntax"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Scratch {
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "cos-files-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_regular_file_and_a_link_to_one_are_read() {
        let dir = Scratch::new();
        let path = dir.0.join("policy.yml");
        std::fs::write(&path, "minimum_rating: 4\n").unwrap();
        assert_eq!(
            read_text(&path, Kind::Policy).unwrap(),
            "minimum_rating: 4\n"
        );
        #[cfg(unix)]
        {
            let link = dir.0.join("link.yml");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            assert_eq!(
                read_text(&link, Kind::Policy).unwrap(),
                "minimum_rating: 4\n"
            );
            assert!(check(&link, Kind::Policy).is_ok());
        }
    }

    #[test]
    fn missing_files_and_directories_are_refused() {
        let dir = Scratch::new();
        let missing = dir.0.join("absent");
        let refusal = read(&missing, Kind::Baseline).unwrap_err();
        assert!(refusal.is_missing());
        assert_eq!(
            refusal.line("/x"),
            "baseline file /x does not exist; point --baseline at a baseline file, or at a \
             path that does not exist yet to record one"
        );
        let refusal = check(&dir.0, Kind::CaBundle).unwrap_err();
        assert_eq!(
            refusal.line("/d"),
            "--ca-file /d is a directory, not a regular file; give --ca-file the path of a PEM \
             bundle of the CA"
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_without_reading() {
        let refusal = read(Path::new("/dev/zero"), Kind::Value).unwrap_err();
        assert_eq!(refusal.problem, Problem::NotRegular("a character device"));

        let dir = Scratch::new();
        let fifo = dir.0.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let started = std::time::Instant::now();
            let refusal = read(&fifo, Kind::Policy).unwrap_err();
            assert_eq!(refusal.problem, Problem::NotRegular("a FIFO (named pipe)"));
            assert!(started.elapsed() < std::time::Duration::from_secs(5));
        }
    }

    #[test]
    fn files_over_the_cap_are_refused_before_reading() {
        let dir = Scratch::new();
        let path = dir.0.join("big");
        let file = File::create(&path).unwrap();
        file.set_len(Kind::Value.cap() + 1).unwrap();
        let refusal = read(&path, Kind::Value).unwrap_err();
        assert_eq!(refusal.problem, Problem::TooLarge(Some(65537)));
        assert!(
            refusal
                .reason()
                .starts_with("is larger than 64 KiB (65537 bytes); "),
            "{}",
            refusal.reason()
        );
        file.set_len(Kind::Value.cap()).unwrap();
        assert_eq!(read(&path, Kind::Value).unwrap().len(), 65536);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(64 * KIB), "64 KiB");
        assert_eq!(size_text(4 * MIB), "4 MiB");
        assert_eq!(size_text(150 * MIB + 1), "150.0 MiB");
        assert_eq!(size_text(812), "812 bytes");
    }

    #[test]
    fn non_utf8_text_is_refused() {
        let dir = Scratch::new();
        let path = dir.0.join("latin1");
        std::fs::write(&path, b"caf\xe9").unwrap();
        assert_eq!(
            read_text(&path, Kind::Value).unwrap_err().problem,
            Problem::NotText
        );
    }
}
