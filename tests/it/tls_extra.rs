//! The legacy-TLS probe and the cookie checks against the fake instance, directly and through
//! the real binary. The fake instance speaks TLS 1.2 and 1.3 only (rustls), like OpenCloud
//! 4.0.0 with Go's defaults, so TLS 1.0 and 1.1 must both come back refused.

use crate::support::{ConnectProxy, FakeInstance, InstanceConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use storage_security::net::legacy_tls::{self, LegacyTls};
use storage_security::net::proxy::Proxy;
use storage_security::net::tls::Route;

const NOW: &str = crate::support::PINNED_NOW;

const REFUSED: LegacyTls = LegacyTls {
    tls1_0: Some(false),
    tls1_1: Some(false),
    error: None,
};

#[test]
fn the_fake_instance_refuses_tls_1_0_and_1_1() {
    let fake = FakeInstance::start(InstanceConfig::default());
    for host in ["127.0.0.1", "localhost"] {
        let result = legacy_tls::probe(host, fake.port(), &Route::Direct, Duration::from_secs(5));
        assert_eq!(result, REFUSED, "{host}");
    }
}

#[test]
fn the_legacy_probe_takes_the_operators_proxy() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let proxy = ConnectProxy::start();
    let parsed = Proxy::parse(&proxy.url()).unwrap();
    let result = legacy_tls::probe(
        "127.0.0.1",
        fake.port(),
        &Route::via(Some(&parsed)),
        Duration::from_secs(5),
    );
    assert_eq!(result, REFUSED);
    // One ClientHello offering both versions settles a server that refuses them.
    assert_eq!(proxy.tunnels(), [format!("127.0.0.1:{}", fake.port())]);
}

#[test]
fn a_plain_http_port_is_undecided() {
    let fake = FakeInstance::start(InstanceConfig::default().plain());
    let result = legacy_tls::probe(
        "127.0.0.1",
        fake.port(),
        &Route::Direct,
        Duration::from_secs(5),
    );
    assert_eq!((result.tls1_0, result.tls1_1), (None, None), "{result:?}");
    assert!(result.error.is_some());
}

struct Run {
    stdout: String,
}

impl Run {
    /// The `--debug` line of a finding: `  <id> [<Status>, <severity>...]: <detail>`.
    fn finding(&self, id: &str) -> Option<&str> {
        let prefix = format!("  {id} [");
        self.stdout.lines().find(|l| l.starts_with(&prefix))
    }

    fn status(&self, id: &str) -> Option<&str> {
        let line = self.finding(id)?;
        let rest = &line[id.len() + 4..];
        rest.split([',', ']']).next()
    }

    /// Ids on the "Additional checks failed (n): ..." line.
    fn failed_checks(&self) -> Vec<String> {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix("Additional checks failed ("))
            .and_then(|l| l.split_once("): "))
            .map(|(_, ids)| {
                ids.split(", ")
                    .map(|id| id.trim_end_matches(" (not rated)").to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tls-extra-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the plugin with a cleared environment against the fake instance, trusting its CA.
fn scan(fake: &FakeInstance, name: &str) -> Run {
    let dir = scratch_dir(name);
    let ca = fake.ca_file().display().to_string();
    let host = fake.host_port();
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-security"))
        .args([
            "-H",
            host.as_str(),
            "--ca-file",
            ca.as_str(),
            "--backoff-factor",
            "0",
            "--timeout",
            "5",
            "--update-source",
            "bundled",
            "--no-debug-ports",
            "--debug",
        ])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &dir)
        .env("COS_NOW", NOW)
        .current_dir(&dir)
        .output()
        .expect("run the plugin");
    Run {
        stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
    }
}

#[test]
fn a_default_instance_passes_the_protocol_and_cookie_checks() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let run = scan(&fake, "default");
    for id in [
        "tlsDeprecatedProtocol",
        "tlsProtocol",
        "cookieSecure",
        "cookieHttpOnly",
        "cookieSameSite",
        "cookiePrefix",
    ] {
        assert_eq!(run.status(id), Some("Passed"), "{id}:\n{}", run.stdout);
        assert!(
            !run.failed_checks().iter().any(|f| f == id),
            "{id}:\n{}",
            run.stdout
        );
    }
    // The demo sign-in is what sets the instance's only cookie.
    let secure = run.finding("cookieSecure").unwrap();
    assert!(secure.contains("__Secure-KKT"), "{secure}");
    // A target with a port serves both schemes there: no plain-HTTP probe, no finding.
    assert_eq!(run.finding("httpsEnforced"), None, "{}", run.stdout);
}

#[test]
fn a_cookie_without_attributes_fails_the_cookie_checks() {
    let fake = FakeInstance::start(
        InstanceConfig::default().add_header("Set-Cookie", "session=abc; Path=/"),
    );
    let run = scan(&fake, "bare-cookie");
    let failed = run.failed_checks();
    for id in ["cookieSecure", "cookieHttpOnly", "cookieSameSite"] {
        assert_eq!(run.status(id), Some("Failed"), "{id}:\n{}", run.stdout);
        assert!(failed.iter().any(|f| f == id), "{id}: {failed:?}");
        assert!(
            run.finding(id).unwrap().ends_with(": session"),
            "{}",
            run.finding(id).unwrap()
        );
    }
    assert_eq!(run.status("tlsDeprecatedProtocol"), Some("Passed"));
    assert_eq!(run.status("cookiePrefix"), Some("Passed"));
}
