//! Secret references: any configuration value may name where the real value lives, so secrets
//! never have to be written into a configuration file or a process environment.
//!
//! | Value | Resolves to |
//! |---|---|
//! | `env://NAME` | the environment variable `NAME` (unset or empty is an error) |
//! | `file:///abs/path`, `file://relative/path` | the file's contents (relative to the working directory) |
//! | `secret://NAME` | the file `NAME` in the first of the secret directories that holds it (below) |
//! | `exec://program args…` | the standard output of the program, run without a shell, 10 s limit |
//! | anything else | the value itself (a literal) |
//!
//! `secret://NAME` is looked up, first hit wins, in:
//! 1. `$CREDENTIALS_DIRECTORY/NAME`: the systemd credentials directory, filled by
//!    `LoadCredential=` / `SetCredential=` in the unit (skipped when the variable is unset);
//! 2. `$COS_SECRETS_DIR/NAME`, where `COS_SECRETS_DIR` defaults to `/run/secrets`, the
//!    directory where Docker and Podman mount secrets.
//!
//! `NAME` must be a plain file name (no `/`, `\`, and not `.` or `..`) so a reference cannot
//! reach outside those directories.
//!
//! Files (regular files only, read through `crate::files`: a FIFO or a device is refused
//! unread) and program output are capped at 64 KiB and lose exactly one trailing newline
//! (`\n` or `\r\n`), the one editors and `echo` add. The `_file` key convention
//! (`releases.token_file: /path`, `COS_RELEASES_TOKEN_FILE=/path`) reads its file with
//! [`read_value_file`], under the same rules.
//!
//! Errors name the reference, the problem and the fix, never the secret value: they end up in
//! monitoring systems and logs.

use crate::files;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Largest secret read from a file or a program, in bytes.
pub const MAX_SECRET_BYTES: u64 = files::Kind::Value.cap();
/// How long an `exec://` program may run.
pub const EXEC_TIMEOUT: Duration = Duration::from_secs(10);
/// Where container runtimes mount secrets when `COS_SECRETS_DIR` is not set.
pub const DEFAULT_SECRETS_DIR: &str = "/run/secrets";

const ENV_PREFIX: &str = "env://";
const FILE_PREFIX: &str = "file://";
const SECRET_PREFIX: &str = "secret://";
const EXEC_PREFIX: &str = "exec://";

/// Why a reference cannot be resolved: one line naming the problem and the fix, never the
/// secret value.
type SecretError = String;

/// Read access to environment variables, injected so tests need not change the process
/// environment.
pub trait Environment {
    /// The variable's value, `None` when unset (or not valid UTF-8).
    fn var(&self, name: &str) -> Option<String>;
}

/// The environment of this process.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// An environment backed by a map: for tests and for callers that build one explicitly
/// (a service scanning on behalf of a request must not read its own process environment).
#[derive(Debug, Clone, Default)]
pub struct MapEnv(pub std::collections::HashMap<String, String>);

impl MapEnv {
    pub fn with(pairs: &[(&str, &str)]) -> MapEnv {
        MapEnv(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }
}

impl Environment for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
}

/// Whether the value is a reference (`env://`, `file://`, `secret://`, `exec://`) rather than
/// a literal.
pub fn is_reference(value: &str) -> bool {
    [ENV_PREFIX, FILE_PREFIX, SECRET_PREFIX, EXEC_PREFIX]
        .iter()
        .any(|prefix| value.starts_with(prefix))
}

/// Resolves a reference to the value it names; a literal is returned unchanged.
pub fn resolve(value: &str, env: &dyn Environment) -> Result<String, SecretError> {
    check_form(value)?;
    if let Some(name) = value.strip_prefix(ENV_PREFIX) {
        env.var(name).filter(|v| !v.is_empty()).ok_or_else(|| {
            format!(
                "secret reference \"{value}\": environment variable {name} is unset or empty; \
                 set it for this service or use another reference"
            )
        })
    } else if let Some(path) = value.strip_prefix(FILE_PREFIX) {
        read_capped(Path::new(path))
            .map_err(|problem| format!("secret reference \"{value}\": {problem}"))
    } else if let Some(name) = value.strip_prefix(SECRET_PREFIX) {
        resolve_secret(value, name, env)
    } else if let Some(command) = value.strip_prefix(EXEC_PREFIX) {
        run_command(value, command, EXEC_TIMEOUT)
    } else {
        Ok(value.to_string())
    }
}

/// Reads a value from a file (the `_file` key convention): at most 64 KiB, one trailing
/// newline removed.
pub fn read_value_file(path: &Path) -> Result<String, SecretError> {
    read_capped(path).map_err(|problem| format!("value file \"{}\": {problem}", path.display()))
}

/// What is wrong with how an `env://`, `file://` or `secret://` reference is written, whatever
/// the environment: the part of `resolve` that needs no variable, file or secret to exist (the
/// configuration wizard refuses such a reference as it is typed). A literal is well formed.
pub fn check_form(value: &str) -> Result<(), SecretError> {
    if value == ENV_PREFIX {
        return Err(format!(
            "secret reference \"{value}\" names no variable; write env://VARIABLE_NAME"
        ));
    }
    if value == FILE_PREFIX {
        return Err(format!(
            "secret reference \"{value}\" names no file; write file:///absolute/path"
        ));
    }
    if let Some(name) = value.strip_prefix(SECRET_PREFIX)
        && (name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']))
    {
        return Err(format!(
            "secret reference \"{value}\": the name must be a plain file name (no \"/\", \
             no \"..\"); write secret://NAME and mount the secret as NAME"
        ));
    }
    Ok(())
}

fn resolve_secret(
    reference: &str,
    name: &str,
    env: &dyn Environment,
) -> Result<String, SecretError> {
    let mut places: Vec<PathBuf> = Vec::new();
    let credentials_dir = env.var("CREDENTIALS_DIRECTORY").filter(|d| !d.is_empty());
    if let Some(dir) = &credentials_dir {
        places.push(Path::new(dir).join(name));
    }
    let secrets_dir = env
        .var("COS_SECRETS_DIR")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| DEFAULT_SECRETS_DIR.to_string());
    places.push(Path::new(&secrets_dir).join(name));

    for place in &places {
        match std::fs::metadata(place) {
            Ok(_) => {
                return read_capped(place).map_err(|problem| {
                    format!(
                        "secret reference \"{reference}\": {}: {problem}",
                        place.display()
                    )
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(format!(
                    "secret reference \"{reference}\": cannot look at {} ({e}); give this \
                     service read access to it",
                    place.display()
                ));
            }
        }
    }

    let searched: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
    let credentials_note = if credentials_dir.is_none() {
        " (CREDENTIALS_DIRECTORY is not set)"
    } else {
        ""
    };
    Err(format!(
        "secret reference \"{reference}\": not found in {}{credentials_note}; provide it with \
         systemd LoadCredential={name}:… or a container secret, or set COS_SECRETS_DIR to the \
         directory holding it",
        searched.join(", ")
    ))
}

/// Runs an `exec://` program and returns its output. Errors name the command, never its
/// output (which may hold the secret) or its standard error (discarded for the same reason).
fn run_command(reference: &str, command: &str, timeout: Duration) -> Result<String, SecretError> {
    let fail = |problem: String| format!("secret reference \"{reference}\": {problem}");
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return Err(fail(
            "names no program; write exec://program arguments (run without a shell)".to_string(),
        ));
    };
    let deadline = Instant::now() + timeout;
    let stop = |child: &mut std::process::Child| {
        let _ = child.kill();
        let _ = child.wait();
    };

    let mut child = Command::new(program)
        .args(words)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            fail(format!(
                "cannot run {program} ({e}); check that it is installed and on PATH, or give \
                 its full path"
            ))
        })?;

    // The reader runs on its own thread so the deadline holds even while the program is
    // silent; it stops after one byte over the cap, which is enough to know it is too large.
    let Some(stdout) = child.stdout.take() else {
        stop(&mut child);
        return Err(fail(format!("cannot read the output of {program}")));
    };
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut output = Vec::new();
        let result = stdout.take(MAX_SECRET_BYTES + 1).read_to_end(&mut output);
        let _ = sender.send(result.map(|_| output));
    });

    let timed_out = || {
        fail(format!(
            "{program} did not finish within {} s; make it answer faster or use another \
             reference",
            timeout.as_secs_f64()
        ))
    };

    let output = match receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => {
            stop(&mut child);
            return Err(fail(format!("cannot read the output of {program} ({e})")));
        }
        Err(_) => {
            stop(&mut child);
            return Err(timed_out());
        }
    };
    if output.len() as u64 > MAX_SECRET_BYTES {
        stop(&mut child);
        return Err(fail(format!(
            "{program} printed more than 64 KiB; it must print only the secret"
        )));
    }

    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                stop(&mut child);
                return Err(timed_out());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                stop(&mut child);
                return Err(fail(format!("cannot wait for {program} ({e})")));
            }
        }
    };
    if !status.success() {
        let how = match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".to_string(),
        };
        return Err(fail(format!(
            "{program} {how}; run the command by hand to see why"
        )));
    }
    let text = String::from_utf8(output).map_err(|_| {
        fail(format!(
            "{program} printed text that is not UTF-8; print the secret as UTF-8"
        ))
    })?;
    Ok(trim_one_newline(text))
}

/// Reads a whole file of at most 64 KiB as UTF-8 and removes one trailing newline. Only a
/// regular file is read (`crate::files`): a FIFO or a device named by a reference would hang
/// the run or never end. The error is the problem and its fix, without the file name (callers
/// add it).
fn read_capped(path: &Path) -> Result<String, String> {
    let text = files::read_text(path, files::Kind::Value)
        .map_err(|refusal| format!("the file {refusal}"))?;
    Ok(trim_one_newline(text))
}

fn trim_one_newline(mut text: String) -> String {
    if text.ends_with("\r\n") {
        text.truncate(text.len() - 2);
    } else if text.ends_with('\n') {
        text.truncate(text.len() - 1);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const SECRET: &str = "s3cr3t-T0ken-value";

    /// A fresh directory under the system temporary directory, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "cos-secrets-test-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }

        fn write(&self, name: &str, contents: &[u8]) -> PathBuf {
            let path = self.0.join(name);
            std::fs::write(&path, contents).unwrap();
            path
        }

        fn path(&self) -> &str {
            self.0.to_str().unwrap()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn no_env() -> MapEnv {
        // COS_SECRETS_DIR points nowhere so tests never read the machine's /run/secrets.
        MapEnv::with(&[("COS_SECRETS_DIR", "/nonexistent/cos-secrets-test")])
    }

    fn refused(value: &str, env: &dyn Environment) -> String {
        match resolve(value, env) {
            Ok(_) => panic!("{value:?} should fail"),
            Err(e) => {
                let text = e.to_string();
                assert!(!text.contains(SECRET), "error leaks the secret: {text}");
                assert!(!text.contains('\n'), "error is not one line: {text}");
                text
            }
        }
    }

    #[cfg(unix)]
    fn script(dir: &TempDir, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.write(name, format!("#!/bin/sh\n{body}\n").as_bytes());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn literals_pass_through_unchanged() {
        let env = no_env();
        for literal in [
            "plain",
            "",
            "  spaced  ",
            "https://example.com",
            "env:/X",
            "ENV://X",
            "a\n",
        ] {
            assert_eq!(resolve(literal, &env).unwrap(), literal);
            assert!(!is_reference(literal), "{literal:?}");
        }
    }

    #[test]
    fn recognises_references() {
        for reference in [
            "env://X",
            "file:///x",
            "secret://x",
            "exec://true",
            "env://",
        ] {
            assert!(is_reference(reference), "{reference:?}");
        }
    }

    #[test]
    fn env_reference() {
        let env = MapEnv::with(&[("RELEASE_TOKEN", SECRET), ("EMPTY", "")]);
        assert_eq!(resolve("env://RELEASE_TOKEN", &env).unwrap(), SECRET);
        let e = refused("env://MISSING", &env);
        assert!(e.contains("MISSING is unset or empty"), "{e}");
        assert!(refused("env://EMPTY", &env).contains("EMPTY is unset or empty"));
        assert!(refused("env://", &env).contains("names no variable"));
    }

    #[test]
    fn process_env_reads_the_process_environment() {
        // PATH is set for any test run; reading it does not change the environment.
        assert!(ProcessEnv.var("PATH").is_some());
        assert!(
            ProcessEnv
                .var("COS_SECRETS_TEST_SURELY_UNSET_VARIABLE")
                .is_none()
        );
    }

    #[test]
    fn file_reference_absolute() {
        let dir = TempDir::new();
        let path = dir.write("token", format!("{SECRET}\n").as_bytes());
        let value = resolve(&format!("file://{}", path.display()), &no_env()).unwrap();
        assert_eq!(value, SECRET);
    }

    #[test]
    fn file_reference_relative_to_working_directory() {
        // The crate root is the working directory of unit tests; Cargo.toml is always there.
        let value = resolve("file://Cargo.toml", &no_env()).unwrap();
        assert!(value.contains("[package]"));
        assert!(refused("file://", &no_env()).contains("names no file"));
    }

    #[test]
    fn missing_file_is_an_error_naming_the_path() {
        let dir = TempDir::new();
        let missing = dir.0.join("absent");
        let e = refused(&format!("file://{}", missing.display()), &no_env());
        assert!(e.contains(&missing.display().to_string()), "{e}");
        assert!(e.contains("the file does not exist"), "{e}");
        let e = read_value_file(&missing).unwrap_err().to_string();
        assert!(
            e.contains("value file") && e.contains("check the path"),
            "{e}"
        );
    }

    #[test]
    fn oversized_file_is_refused() {
        let dir = TempDir::new();
        let mut big = SECRET.repeat(4000).into_bytes();
        big.truncate(MAX_SECRET_BYTES as usize + 1);
        let path = dir.write("big", &big);
        let e = refused(&format!("file://{}", path.display()), &no_env());
        assert!(e.contains("larger than 64 KiB"), "{e}");
        let e = read_value_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("larger than 64 KiB") && !e.contains(SECRET),
            "{e}"
        );

        let exact = dir.write("exact", &vec![b'a'; MAX_SECRET_BYTES as usize]);
        assert_eq!(
            read_value_file(&exact).unwrap().len(),
            MAX_SECRET_BYTES as usize
        );
    }

    #[test]
    fn non_utf8_file_is_refused() {
        let dir = TempDir::new();
        let path = dir.write("binary", &[0xff, 0xfe, 0x00]);
        assert!(read_value_file(&path).unwrap_err().contains("not UTF-8"));
    }

    #[test]
    fn exactly_one_trailing_newline_is_trimmed() {
        let dir = TempDir::new();
        for (contents, expected) in [
            ("abc", "abc"),
            ("abc\n", "abc"),
            ("abc\r\n", "abc"),
            ("abc\n\n", "abc\n"),
            ("abc\r\n\r\n", "abc\r\n"),
            ("abc\r", "abc\r"),
            (" abc \n", " abc "),
            ("\n", ""),
            ("", ""),
            ("line1\nline2\n", "line1\nline2"),
        ] {
            let path = dir.write("value", contents.as_bytes());
            assert_eq!(read_value_file(&path).unwrap(), expected, "{contents:?}");
            let reference = format!("file://{}", path.display());
            assert_eq!(
                resolve(&reference, &no_env()).unwrap(),
                expected,
                "{contents:?}"
            );
        }
    }

    #[test]
    fn secret_reference_prefers_the_credentials_directory() {
        let credentials = TempDir::new();
        let secrets = TempDir::new();
        credentials.write("token", b"from-credentials\n");
        secrets.write("token", b"from-secrets\n");
        secrets.write("other", b"only-in-secrets\n");
        let env = MapEnv::with(&[
            ("CREDENTIALS_DIRECTORY", credentials.path()),
            ("COS_SECRETS_DIR", secrets.path()),
        ]);
        assert_eq!(resolve("secret://token", &env).unwrap(), "from-credentials");
        assert_eq!(resolve("secret://other", &env).unwrap(), "only-in-secrets");
    }

    #[test]
    fn secret_reference_without_credentials_directory() {
        let secrets = TempDir::new();
        secrets.write("token", format!("{SECRET}\r\n").as_bytes());
        let env = MapEnv::with(&[("COS_SECRETS_DIR", secrets.path())]);
        assert_eq!(resolve("secret://token", &env).unwrap(), SECRET);
    }

    #[test]
    fn secret_reference_not_found_names_every_place() {
        let credentials = TempDir::new();
        let secrets = TempDir::new();
        let env = MapEnv::with(&[
            ("CREDENTIALS_DIRECTORY", credentials.path()),
            ("COS_SECRETS_DIR", secrets.path()),
        ]);
        let e = refused("secret://token", &env);
        assert!(
            e.contains(&credentials.0.join("token").display().to_string()),
            "{e}"
        );
        assert!(
            e.contains(&secrets.0.join("token").display().to_string()),
            "{e}"
        );
        assert!(
            e.contains("LoadCredential") && e.contains("COS_SECRETS_DIR"),
            "{e}"
        );

        // Without either variable the default /run/secrets is searched and named.
        let e = refused("secret://cos-test-surely-absent-name", &MapEnv::default());
        assert!(
            e.contains("/run/secrets/cos-test-surely-absent-name"),
            "{e}"
        );
        assert!(e.contains("CREDENTIALS_DIRECTORY is not set"), "{e}");
    }

    #[test]
    fn secret_reference_refuses_path_traversal() {
        let secrets = TempDir::new();
        secrets.write("token", SECRET.as_bytes());
        let inner = TempDir::new();
        let env = MapEnv::with(&[("COS_SECRETS_DIR", inner.path())]);
        let escape = format!(
            "secret://../{}/token",
            secrets.0.file_name().unwrap().to_str().unwrap()
        );
        for name in [
            escape.as_str(),
            "secret://..",
            "secret://.",
            "secret://a/b",
            "secret:///etc/passwd",
            "secret://a\\b",
            "secret://",
        ] {
            let e = refused(name, &env);
            assert!(e.contains("plain file name"), "{name}: {e}");
        }
    }

    #[test]
    fn oversized_secret_is_refused() {
        let secrets = TempDir::new();
        secrets.write("big", &vec![b'x'; MAX_SECRET_BYTES as usize + 10]);
        let env = MapEnv::with(&[("COS_SECRETS_DIR", secrets.path())]);
        assert!(refused("secret://big", &env).contains("larger than 64 KiB"));
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_read() {
        let dir = TempDir::new();
        let fifo = dir.0.join("fifo");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let started = Instant::now();
        let e = refused(&format!("file://{}", fifo.display()), &no_env());
        assert!(
            e.ends_with(
                "the file is a FIFO (named pipe), not a regular file; check the path and point \
                 to a regular file holding only the value"
            ),
            "{e}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        let e = read_value_file(Path::new("/dev/zero")).unwrap_err();
        assert!(
            e.starts_with("value file \"/dev/zero\": the file is a character device"),
            "{e}"
        );
        let env = MapEnv::with(&[("COS_SECRETS_DIR", dir.path())]);
        std::fs::create_dir(dir.0.join("token")).unwrap();
        assert!(refused("secret://token", &env).contains("the file is a directory"));
    }

    #[cfg(unix)]
    #[test]
    fn exec_with_arguments() {
        assert_eq!(resolve("exec://printf abc", &no_env()).unwrap(), "abc");
        assert_eq!(resolve("exec://printf   abc\\n", &no_env()).unwrap(), "abc");
        assert_eq!(
            resolve("exec://printf abc\\n\\n", &no_env()).unwrap(),
            "abc\n"
        );
        assert_eq!(
            resolve("exec://printf %s-%s one two", &no_env()).unwrap(),
            "one-two"
        );
        // No shell: quotes and $ are passed as they are.
        assert_eq!(
            resolve("exec://printf %s $HOME", &no_env()).unwrap(),
            "$HOME"
        );
    }

    #[cfg(unix)]
    #[test]
    fn exec_failure_names_the_command_not_its_output() {
        let dir = TempDir::new();
        let path = script(
            &dir,
            "fail.sh",
            &format!("echo {SECRET}\necho {SECRET} >&2\nexit 3"),
        );
        let reference = format!("exec://{}", path.display());
        let e = refused(&reference, &no_env());
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(e.contains("exited with status 3"), "{e}");
        assert!(refused("exec://false", &no_env()).contains("false exited with status 1"));
    }

    #[cfg(unix)]
    #[test]
    fn exec_of_missing_program() {
        let e = refused("exec://cos-surely-not-installed-program --flag", &no_env());
        assert!(
            e.contains("cannot run cos-surely-not-installed-program"),
            "{e}"
        );
        assert!(e.contains("PATH"), "{e}");
        assert!(refused("exec://", &no_env()).contains("names no program"));
        assert!(refused("exec://   ", &no_env()).contains("names no program"));
    }

    #[cfg(unix)]
    #[test]
    fn exec_output_over_the_cap_is_refused() {
        let e = refused("exec://head -c 70000 /dev/zero", &no_env());
        assert!(e.contains("more than 64 KiB"), "{e}");
        // An endless writer is stopped too.
        assert!(refused("exec://yes", &no_env()).contains("more than 64 KiB"));
    }

    #[cfg(unix)]
    #[test]
    fn exec_timeout_is_an_error() {
        let started = Instant::now();
        let e = run_command("exec://sleep 5", "sleep 5", Duration::from_millis(200)).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "took {:?}",
            started.elapsed()
        );
        assert!(e.contains("sleep did not finish within 0.2 s"), "{e}");

        // A program that closes its output but keeps running is still held to the deadline.
        let dir = TempDir::new();
        let path = script(&dir, "linger.sh", "exec >&-\nsleep 5");
        let reference = format!("exec://{}", path.display());
        let started = Instant::now();
        let e = run_command(
            &reference,
            &path.display().to_string(),
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "took {:?}",
            started.elapsed()
        );
        assert!(e.contains("did not finish"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn exec_non_utf8_output_is_refused() {
        let e = refused("exec://printf \\377", &no_env());
        assert!(e.contains("not UTF-8"), "{e}");
    }

    #[test]
    fn errors_never_contain_the_secret() {
        let dir = TempDir::new();
        let big = dir.write("big", SECRET.repeat(5000).as_bytes());
        let env = MapEnv::with(&[("COS_SECRETS_DIR", dir.path())]);
        refused(&format!("file://{}", big.display()), &env);
        refused("secret://big", &env);
        assert!(!read_value_file(&big).unwrap_err().contains(SECRET));
    }
}
