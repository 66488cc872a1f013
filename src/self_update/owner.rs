//! Whether a package manager owns the binary. A packaged binary is upgraded by its package
//! manager: replacing it by hand would leave the package database describing files that are no
//! longer there (and the next package upgrade would silently put the old release back).
//!
//! The package managers are asked, as an operator would: `dpkg-query --search PATH` (Debian,
//! Ubuntu), then `rpm -qf PATH` (Fedora, RHEL, SUSE), each looked up on `PATH`. One that
//! answers "owned" makes the binary packaged; a manager that is not installed, or that cannot
//! be run, owns nothing.

use std::path::Path;
use std::process::{Command, Stdio};

/// The package a binary belongs to, and the command that upgrades it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// `dpkg` or `rpm`.
    pub manager: &'static str,
    pub package: String,
    /// What to run instead of `--upgrade-self`.
    pub command: String,
}

/// The package manager that owns `path`, if any.
pub fn owner(path: &Path) -> Option<Owner> {
    dpkg(path).or_else(|| rpm(path))
}

/// Runs a query; its standard output when it exits 0.
fn query(program: &str, args: &[&std::ffi::OsStr]) -> Option<String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `dpkg-query --search PATH` prints `package[:arch][, package2]: PATH` for an owned file
/// (and `diversion by ...` lines for diverted ones) and exits 1 for a file no package has.
fn dpkg(path: &Path) -> Option<Owner> {
    let out = query("dpkg-query", &["--search".as_ref(), path.as_os_str()])?;
    let package = dpkg_package(&out, path)?;
    Some(Owner {
        manager: "dpkg",
        command: format!("apt install --only-upgrade {package}"),
        package,
    })
}

fn dpkg_package(out: &str, path: &Path) -> Option<String> {
    let path = path.to_string_lossy();
    out.lines()
        .filter(|l| !l.starts_with("diversion "))
        .find_map(|line| {
            let (packages, file) = line.rsplit_once(": ")?;
            (file.trim() == path).then_some(packages)
        })
        .and_then(|packages| packages.split(',').next())
        .map(|p| p.trim().split(':').next().unwrap_or("").to_string())
        .filter(|p| !p.is_empty())
}

/// `rpm -qf --queryformat '%{NAME}\n' PATH` prints the package name, exit 1 when none owns it.
fn rpm(path: &Path) -> Option<Owner> {
    let out = query(
        "rpm",
        &[
            "-qf".as_ref(),
            "--queryformat".as_ref(),
            "%{NAME}\n".as_ref(),
            path.as_os_str(),
        ],
    )?;
    let package = out.lines().next()?.trim().to_string();
    if package.is_empty() || package.contains(char::is_whitespace) {
        return None;
    }
    Some(Owner {
        manager: "rpm",
        command: format!("dnf upgrade {package}"),
        package,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpkg_answers() {
        let path = Path::new("/usr/bin/check-storage-security");
        assert_eq!(
            dpkg_package(
                "check-storage-security:amd64: /usr/bin/check-storage-security\n",
                path
            ),
            Some("check-storage-security".into())
        );
        assert_eq!(
            dpkg_package(
                "diversion by x from: /usr/bin/check-storage-security\n\
                 a, b: /usr/bin/check-storage-security\n",
                path
            ),
            Some("a".into())
        );
        assert_eq!(dpkg_package("other: /usr/bin/other\n", path), None);
        assert_eq!(dpkg_package("", path), None);
    }
}
