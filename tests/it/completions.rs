//! The shipped shell completions (`packaging/completions/`, generated from the option table and
//! kept current by `tests/it/manual.rs`) are accepted by the real shells and complete what the
//! option table says: bash runs its completion function, zsh registers the `#compdef` file with
//! `compinit`, fish answers `complete -C`. `make deps` installs zsh and fish.

use std::path::{Path, PathBuf};
use std::process::Command;

fn completion(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("packaging/completions")
        .join(file)
}

fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .env_remove("BASH_ENV")
        .output()
        .unwrap_or_else(|e| panic!("{program} does not run ({e}): run `make deps`"));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// What the bash completion function offers for the words typed so far (the last one being
/// completed).
fn bash_complete(file: &str, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let function = file.replace('-', "_");
    let script = format!(
        "set -e; source '{}'; COMP_WORDS=({}); COMP_CWORD={}; _{function}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        completion(file).display(),
        quoted.join(" "),
        words.len() - 1,
    );
    run("bash", &["--norc", "--noprofile", "-c", &script])
        .lines()
        .map(String::from)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_accepts_the_files_and_completes_flags_choices_and_subcommands() {
    for file in ["check-storage-security", "check-storage-scanner"] {
        run("bash", &["-n", &completion(file).display().to_string()]);
    }
    assert_eq!(
        bash_complete(
            "check-storage-security",
            &["check-storage-security", "--prof"]
        ),
        ["--profile"]
    );
    assert_eq!(
        bash_complete(
            "check-storage-security",
            &["check-storage-security", "--profile", ""]
        ),
        ["strict", "ops", "lenient"]
    );
    assert_eq!(
        bash_complete(
            "check-storage-security",
            &["check-storage-security", "--release-track", "p"]
        ),
        ["production"]
    );
    // A value of the operator's own (a target) is left to them.
    assert!(
        bash_complete(
            "check-storage-security",
            &["check-storage-security", "-H", ""]
        )
        .is_empty()
    );
    assert_eq!(
        bash_complete("check-storage-scanner", &["check-storage-scanner", "re"]),
        ["review-waivers"]
    );
    let scanner_flags = bash_complete(
        "check-storage-scanner",
        &["check-storage-scanner", "serve", "--to"],
    );
    assert_eq!(scanner_flags, ["--token"]);
    // The plugin's flags are not the scanner's.
    assert!(
        bash_complete(
            "check-storage-scanner",
            &["check-storage-scanner", "scan", "--webhook"]
        )
        .is_empty()
    );
}

#[test]
fn zsh_accepts_the_files_and_compinit_registers_them() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("zsh-completions");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for program in ["check-storage-security", "check-storage-scanner"] {
        let file = completion(&format!("_{program}"));
        run("zsh", &["-n", &file.display().to_string()]);
        std::fs::copy(&file, dir.join(format!("_{program}"))).unwrap();
    }
    let script = format!(
        "fpath=('{dir}' $fpath); autoload -Uz compinit; compinit -u -d '{dir}/zcompdump'; \
         print -r -- $_comps[check-storage-security] $_comps[check-storage-scanner]",
        dir = dir.display()
    );
    let registered = run("zsh", &["-f", "-c", &script]);
    assert_eq!(
        registered.trim(),
        "_check-storage-security _check-storage-scanner"
    );
}

/// What fish offers for a command line (`complete -C`), candidates without descriptions.
fn fish_complete(file: &str, line: &str) -> Vec<String> {
    let script = format!(
        "source '{}'; complete -C '{line}'",
        completion(file).display()
    );
    run("fish", &["--no-config", "-c", &script])
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn fish_accepts_the_files_and_completes_flags_choices_and_subcommands() {
    for file in ["check-storage-security.fish", "check-storage-scanner.fish"] {
        run(
            "fish",
            &["--no-execute", &completion(file).display().to_string()],
        );
    }
    assert_eq!(
        fish_complete(
            "check-storage-security.fish",
            "check-storage-security --prof"
        ),
        ["--profile"]
    );
    let profiles = fish_complete(
        "check-storage-security.fish",
        "check-storage-security --profile ",
    );
    assert_eq!(profiles, ["lenient", "ops", "strict"]);
    let subcommands = fish_complete("check-storage-scanner.fish", "check-storage-scanner ");
    for sub in ["scan", "serve", "review-waivers", "configure"] {
        assert!(subcommands.iter().any(|s| s == sub), "{subcommands:?}");
    }
}
