//! `--all-addresses`: every address of a name (pinned here with `scanner.resolve`) probed on
//! its own, the first address the reference, Host and SNI keeping the name.

use crate::support::{FakeInstance, InstanceConfig};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

struct Run {
    stdout: String,
    code: i32,
}

impl Run {
    fn finding(&self, id: &str) -> Option<String> {
        let prefix = format!("  {id} [");
        self.stdout
            .lines()
            .find(|l| l.starts_with(&prefix))
            .map(|l| l[prefix.len()..].to_string())
    }
}

fn healthy(version: &str) -> InstanceConfig {
    InstanceConfig::default()
        .version(version)
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
}

/// Two instances on the same port of 127.0.0.1 and 127.0.0.2 (retrying if the port is taken).
fn pair(first: InstanceConfig, second: InstanceConfig) -> (FakeInstance, FakeInstance) {
    for _ in 0..20 {
        let a = FakeInstance::start(first.clone());
        let addr: SocketAddr = format!("127.0.0.2:{}", a.port()).parse().unwrap();
        if let Ok(b) = FakeInstance::start_at(second.clone(), addr) {
            return (a, b);
        }
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

fn scan(name: &str, port: u16, ca: &Path, pins: &str, extra: &[&str]) -> Run {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("all-addresses-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let host = format!("localhost:{port}");
    let ca = ca.display().to_string();
    let mut args = vec![
        "-H",
        &host,
        "--ca-file",
        &ca,
        "--update-source",
        "bundled",
        "--backoff-factor",
        "0",
        "--no-debug-ports",
        "--debug",
        "--all-addresses",
    ];
    let (env, flags): (Vec<&str>, Vec<&str>) = extra.iter().partition(|a| a.starts_with("COS_"));
    args.extend(flags);
    let mut command = Command::new(env!("CARGO_BIN_EXE_check-storage-security"));
    command.env_clear();
    // `localhost` is never asked about (a special-use name); should that break, the question
    // stays on loopback.
    let no_dns = format!("127.0.0.1:{}", crate::support::closed_port());
    command.env("COS_SCANNER_DNS_SERVER", &no_dns);
    for pair in env {
        let (k, v) = pair.split_once('=').unwrap();
        command.env(k, v);
    }
    let output = command
        .args(&args)
        .env("HOME", &dir)
        .env("COS_NOW", crate::support::PINNED_NOW)
        .env("COS_SCANNER_RESOLVE", pins)
        .current_dir(&dir)
        .output()
        .unwrap();
    Run {
        stdout: String::from_utf8(output.stdout).unwrap(),
        code: output.status.code().unwrap(),
    }
}

#[test]
fn alike_nodes_pass() {
    let (a, b) = pair(healthy("8.1.0"), healthy("8.1.0"));
    let run = scan(
        "alike",
        a.port(),
        &a.ca_file(),
        "localhost=127.0.0.1,127.0.0.2",
        &[],
    );
    assert_eq!(
        run.finding("addressParity").as_deref(),
        Some("Passed, medium]: 127.0.0.1, 127.0.0.2 answer alike"),
        "{}",
        run.stdout
    );
    assert!(run.finding("tlsAddressParity").is_some(), "{}", run.stdout);
    // Both nodes were asked, with the name as Host.
    for fake in [&a, &b] {
        let status = fake
            .requests()
            .into_iter()
            .find(|r| r.path() == "/status.php")
            .expect("node probed");
        assert_eq!(
            status.header("host"),
            Some(format!("localhost:{}", a.port()).as_str())
        );
    }
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn another_release_on_one_node_is_high() {
    let (a, _b) = pair(healthy("8.1.0"), healthy("8.0.1"));
    let run = scan(
        "other-release",
        a.port(),
        &a.ca_file(),
        "localhost=127.0.0.1,127.0.0.2",
        &[],
    );
    let parity = run.finding("addressParity").unwrap_or_default();
    assert!(parity.starts_with("Failed, high"), "{}", run.stdout);
    assert!(
        parity.contains("127.0.0.2 runs 8.0.1 (reference 8.1.0)"),
        "{parity}"
    );
    assert_eq!(run.code, 1, "high caps at 3 (C): WARNING\n{}", run.stdout);
}

#[test]
fn demo_accounts_on_one_node_are_critical() {
    let (a, _b) = pair(
        healthy("8.1.0"),
        InstanceConfig::default()
            .version("8.1.0")
            .remove_header("Access-Control-Allow-Origin"),
    );
    let run = scan(
        "demo-node",
        a.port(),
        &a.ca_file(),
        "localhost=127.0.0.1,127.0.0.2",
        &["--critical", "2"],
    );
    let parity = run.finding("addressParity").unwrap_or_default();
    assert!(parity.starts_with("Failed, critical"), "{}", run.stdout);
    assert!(
        parity.contains("127.0.0.2 accepts a published demo account"),
        "{parity}"
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
}

#[test]
fn an_address_that_does_not_answer_fails_and_one_address_yields_nothing() {
    let a = FakeInstance::start(healthy("8.1.0"));
    let run = scan(
        "silent",
        a.port(),
        &a.ca_file(),
        "localhost=127.0.0.1,127.0.0.3",
        &[],
    );
    let parity = run.finding("addressParity").unwrap_or_default();
    assert!(parity.starts_with("Failed, medium"), "{}", run.stdout);
    assert!(
        parity.contains("127.0.0.3 resolves but does not answer"),
        "{parity}"
    );
    assert!(
        run.finding("tlsAddressParity")
            .unwrap_or_default()
            .starts_with("Failed"),
        "{}",
        run.stdout
    );

    let run = scan("single", a.port(), &a.ca_file(), "localhost=127.0.0.1", &[]);
    assert!(run.finding("addressParity").is_none(), "{}", run.stdout);

    // With IPv6 off, a name with one IPv4 and one IPv6 address is a single node.
    let run = scan(
        "no-ipv6",
        a.port(),
        &a.ca_file(),
        "localhost=127.0.0.1,::1",
        &["COS_SCANNER_IPV6_ENABLED=false"],
    );
    assert!(run.finding("addressParity").is_none(), "{}", run.stdout);
}
