//! The DNS findings end to end: the real binary scans the fake instance by name (`localhost`)
//! and asks a fake DNS server on loopback (`COS_SCANNER_DNS_SERVER`) for the CAA records. The
//! fake refuses the DNSSEC questions (tests/dnssec.rs asks a real server those).

mod support;

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use support::{FakeInstance, InstanceConfig};

const NOW: &str = "2026-11-22T03:00:00Z";

// ---------------------------------------------------------------------------------------------
// A fake DNS server: answers every CAA query with canned records (or NXDOMAIN), and refuses
// every other question.

const TYPE_CAA: u16 = 257;
const CLASS_IN: u16 = 1;
const RCODE_NXDOMAIN: u16 = 3;
const RCODE_REFUSED: u16 = 5;

fn push_name(out: &mut Vec<u8>, name: &str) {
    for label in name.split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
}

/// The id, question name and type of a query (uncompressed, as queries are).
fn question_of(query: &[u8]) -> Option<(u16, String, u16)> {
    let id = u16::from_be_bytes([*query.first()?, *query.get(1)?]);
    let mut labels = Vec::new();
    let mut pos = 12;
    loop {
        let len = *query.get(pos)? as usize;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(query.get(pos + 1..pos + 1 + len)?).to_lowercase());
        pos += 1 + len;
    }
    let qtype = u16::from_be_bytes([*query.get(pos + 1)?, *query.get(pos + 2)?]);
    Some((id, labels.join("."), qtype))
}

/// An answer to the CAA question for `qname`: `issue` records with the given values, or
/// NXDOMAIN when there are none; REFUSED for a question of another type.
fn caa_response(id: u16, qname: &str, qtype: u16, issuers: &[&str]) -> Vec<u8> {
    let issuers = if qtype == TYPE_CAA { issuers } else { &[] };
    let rcode = if qtype != TYPE_CAA {
        RCODE_REFUSED
    } else if issuers.is_empty() {
        RCODE_NXDOMAIN
    } else {
        0
    };
    let mut out = Vec::new();
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&(0x8180 | rcode).to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&(issuers.len() as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    push_name(&mut out, qname);
    out.extend_from_slice(&qtype.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    for issuer in issuers {
        let mut rdata = vec![0, 5];
        rdata.extend_from_slice(b"issue");
        rdata.extend_from_slice(issuer.as_bytes());
        out.extend_from_slice(&[0xC0, 12]);
        out.extend_from_slice(&TYPE_CAA.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&300u32.to_be_bytes());
        out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
        out.extend_from_slice(&rdata);
    }
    out
}

struct FakeDns {
    addr: SocketAddr,
    asked: mpsc::Receiver<String>,
}

impl FakeDns {
    /// Answers on 127.0.0.1 with `issue` records carrying `issuers` for every name.
    fn start(issuers: &'static [&'static str]) -> FakeDns {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = socket.local_addr().unwrap();
        let (tx, asked) = mpsc::channel();
        thread::spawn(move || {
            let mut buf = [0u8; 512];
            while let Ok((n, peer)) = socket.recv_from(&mut buf) {
                let Some((id, qname, qtype)) = question_of(&buf[..n]) else {
                    continue;
                };
                // Recorded before answering, so the scan cannot finish first.
                if qtype == TYPE_CAA && tx.send(qname.clone()).is_err() {
                    return;
                }
                let _ = socket.send_to(&caa_response(id, &qname, qtype, issuers), peer);
            }
        });
        FakeDns { addr, asked }
    }

    /// The names asked for CAA records.
    fn asked(&self) -> Vec<String> {
        self.asked.try_iter().collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Running the plugin

struct Run {
    stdout: String,
}

impl Run {
    /// The `--debug` line of a finding: `  <id> [<Status>, <severity>...]: <detail>`.
    fn finding(&self, id: &str) -> Option<&str> {
        let prefix = format!("  {id} [");
        self.stdout.lines().find(|l| l.starts_with(&prefix))
    }

    fn has(&self, id: &str, status: &str) -> bool {
        self.finding(id)
            .is_some_and(|l| l.starts_with(&format!("  {id} [{status},")))
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dns-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn scan(host: &str, fake: &FakeInstance, dns: &FakeDns, name: &str, extra: &[&str]) -> Run {
    let dir = scratch(name);
    let ca = fake.ca_file().display().to_string();
    let mut args = vec![
        "-H",
        host,
        "--ca-file",
        &ca,
        "--update-source",
        "bundled",
        "--backoff-factor",
        "0",
        "--no-debug-ports",
        "--debug",
    ];
    args.extend(extra);
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-security"))
        .args(&args)
        .env_clear()
        .env("HOME", &dir)
        .env("COS_NOW", NOW)
        .env("COS_SCANNER_DNS_SERVER", dns.addr.to_string())
        .current_dir(&dir)
        .output()
        .unwrap();
    Run {
        stdout: String::from_utf8(output.stdout).unwrap(),
    }
}

fn by_name(fake: &FakeInstance) -> String {
    format!("localhost:{}", fake.port())
}

#[test]
fn a_caa_record_passes_and_the_addresses_are_listed() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let dns = FakeDns::start(&["letsencrypt.org"]);
    let run = scan(&by_name(&fake), &fake, &dns, "caa-present", &[]);
    assert!(run.has("caaRecord", "Passed"), "{}", run.stdout);
    let caa = run.finding("caaRecord").unwrap();
    assert!(
        caa.ends_with(": CAA on localhost allows letsencrypt.org"),
        "{caa}"
    );
    assert!(run.has("dnsAddresses", "Passed"), "{}", run.stdout);
    let addresses = run.finding("dnsAddresses").unwrap();
    assert!(addresses.contains("localhost resolves to "), "{addresses}");
    assert!(addresses.contains("127.0.0.1"), "{addresses}");
    assert_eq!(dns.asked(), ["localhost"]);
}

#[test]
fn a_missing_caa_record_fails_as_missing_hardening() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let dns = FakeDns::start(&[]);
    let run = scan(&by_name(&fake), &fake, &dns, "caa-absent", &[]);
    assert!(run.has("caaRecord", "Failed"), "{}", run.stdout);
    assert!(
        run.finding("caaRecord").unwrap().ends_with(
            "no CAA record on localhost or its parents: any CA may issue certificates for it"
        ),
        "{}",
        run.stdout
    );
    // A hardening measure: never among the failed additional checks.
    assert!(
        !run.stdout
            .lines()
            .any(|l| l.starts_with("Additional checks failed") && l.contains("caaRecord")),
        "{}",
        run.stdout
    );
    // `localhost` is one label: nothing to climb.
    assert_eq!(dns.asked(), ["localhost"]);

    let run = scan(
        &by_name(&fake),
        &fake,
        &dns,
        "caa-absent-hardening",
        &["--check-hardening"],
    );
    let missing = run
        .stdout
        .lines()
        .find(|l| l.starts_with("Missing hardening: "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        missing["Missing hardening: ".len()..]
            .split(", ")
            .any(|id| id == "caaRecord"),
        "{missing}"
    );
}

#[test]
fn plain_http_skips_the_caa_check() {
    let fake = FakeInstance::start(InstanceConfig::default().plain());
    let dns = FakeDns::start(&[]);
    let run = scan(&by_name(&fake), &fake, &dns, "plain", &[]);
    assert!(run.has("caaRecord", "Skipped"), "{}", run.stdout);
    assert!(run.has("dnsAddresses", "Passed"), "{}", run.stdout);
}

#[test]
fn an_address_target_has_no_dns_findings() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let dns = FakeDns::start(&["letsencrypt.org"]);
    let run = scan(&fake.host_port(), &fake, &dns, "address", &[]);
    assert!(run.stdout.contains("Findings:"), "{}", run.stdout);
    assert!(run.finding("caaRecord").is_none(), "{}", run.stdout);
    assert!(run.finding("dnsAddresses").is_none(), "{}", run.stdout);
    assert!(dns.asked().is_empty());
}
