//! The DNS findings end to end: the real binary scans the fake instance by name and asks a
//! fake DNS server on loopback (`COS_SCANNER_DNS_SERVER`) that counts every question. Names
//! public DNS cannot know (`localhost`, `*.localhost`, a single label, `.home.arpa`, ...) send
//! it none and skip CAA and DNSSEC; a certificate of a private CA skips CAA (no public CA
//! issued it, and only public CAs obey CAA). The fake answers every CAA question with a record,
//! so a question that should not have been asked would turn into a pass. It refuses every other
//! question (tests/it/dnssec.rs asks a real server those). Names other than `localhost` reach the
//! fake instance through `scanner.resolve`, so the system's nameserver is never asked.

use crate::support::plugin::{Run, hermetic, hermetic_untrusting, run};
use crate::support::{FakeInstance, InstanceConfig};
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// A fake DNS server that counts the questions

const TYPE_SOA: u16 = 6;
const TYPE_CAA: u16 = 257;
const CLASS_IN: u16 = 1;
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

/// An answer to a query: `issue "letsencrypt.org"` for a CAA question, REFUSED for any other.
fn answer(id: u16, qname: &str, qtype: u16) -> Vec<u8> {
    let caa = qtype == TYPE_CAA;
    let mut out = Vec::new();
    out.extend_from_slice(&id.to_be_bytes());
    let flags = if caa { 0x8180 } else { 0x8180 | RCODE_REFUSED };
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&u16::from(caa).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    push_name(&mut out, qname);
    out.extend_from_slice(&qtype.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    if caa {
        let mut rdata = vec![0, 5];
        rdata.extend_from_slice(b"issueletsencrypt.org");
        out.extend_from_slice(&[0xC0, 12]);
        out.extend_from_slice(&TYPE_CAA.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&300u32.to_be_bytes());
        out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
        out.extend_from_slice(&rdata);
    }
    out
}

/// The name of the question [`CountingDns::asked`] sends itself to know it has seen all
/// questions sent before.
const SENTINEL: &str = "sentinel.invalid";

struct CountingDns {
    addr: SocketAddr,
    asked: mpsc::Receiver<String>,
}

impl CountingDns {
    /// Listens on 127.0.0.1 and records every datagram, as `TYPE name` (`? ?` when it is no
    /// query), before answering it.
    fn start() -> CountingDns {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = socket.local_addr().unwrap();
        let (tx, asked) = mpsc::channel();
        thread::spawn(move || {
            let mut buf = [0u8; 1500];
            while let Ok((n, peer)) = socket.recv_from(&mut buf) {
                let Some((id, qname, qtype)) = question_of(&buf[..n]) else {
                    if tx.send("? ?".to_string()).is_err() {
                        return;
                    }
                    continue;
                };
                let kind = match qtype {
                    TYPE_CAA => "CAA".to_string(),
                    TYPE_SOA => "SOA".to_string(),
                    other => other.to_string(),
                };
                if tx.send(format!("{kind} {qname}")).is_err() {
                    return;
                }
                let _ = socket.send_to(&answer(id, &qname, qtype), peer);
            }
        });
        CountingDns { addr, asked }
    }

    /// Every question asked since the last call. A question of its own, queued behind
    /// everything the scan sent, marks the end: no datagram still in the socket is missed.
    fn asked(&self) -> Vec<String> {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut query = vec![0x5E, 0xC5, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        push_name(&mut query, SENTINEL);
        query.extend_from_slice(&TYPE_SOA.to_be_bytes());
        query.extend_from_slice(&CLASS_IN.to_be_bytes());
        socket.send_to(&query, self.addr).unwrap();
        let end = format!("SOA {SENTINEL}");
        let mut asked = Vec::new();
        loop {
            let question = self
                .asked
                .recv_timeout(Duration::from_secs(30))
                .expect("the counting DNS server records its own question");
            if question == end {
                return asked;
            }
            asked.push(question);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scans

/// Scans `host:<port of the fake>` asking `dns`, with `pins` as `scanner.resolve` when given;
/// `flags` replace the hermetic ones (which trust the fake's private CA) when given.
fn scan(
    case: &str,
    host: &str,
    fake: &FakeInstance,
    dns: &CountingDns,
    pins: Option<&str>,
    flags: Option<&[&str]>,
) -> Run {
    let target = format!("{host}:{}", fake.port());
    let base = hermetic(&fake.ca_file());
    let mut args: Vec<&str> = vec!["-H", &target, "--debug"];
    match flags {
        Some(flags) => args.extend(flags),
        None => args.extend(base.iter().map(String::as_str)),
    }
    let server = dns.addr.to_string();
    let mut env = vec![("COS_SCANNER_DNS_SERVER", server.as_str())];
    if let Some(pins) = pins {
        env.push(("COS_SCANNER_RESOLVE", pins));
    }
    run(&format!("dns-{case}"), &args, &env)
}

/// The status and detail of a finding from the `--debug` list (`  <id> [<Status>, ...]: ...`).
fn finding<'a>(run: &'a Run, id: &str) -> (&'a str, &'a str) {
    let prefix = format!("  {id} [");
    let line = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {id} finding:\n{}\n{}", run.stdout, run.stderr));
    let status = line.split([',', ']']).next().unwrap();
    let detail = line.split_once("]: ").map_or("", |(_, d)| d);
    (status, detail)
}

#[test]
fn names_public_dns_cannot_know_ask_no_nameserver_and_skip_caa_and_dnssec() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let dns = CountingDns::start();
    for (case, host, pins, kind) in [
        (
            "localhost",
            "localhost",
            None,
            "a special-use name (.localhost, RFC 6761)",
        ),
        // Below localhost: resolved as localhost is, by the hosts file.
        (
            "sub-localhost",
            "cloud.localhost",
            None,
            "a special-use name (.localhost, RFC 6761)",
        ),
        (
            "single-label",
            "cloud",
            Some("cloud=127.0.0.1"),
            "a single-label name",
        ),
        (
            "home-arpa",
            "cloud.home.arpa",
            Some("cloud.home.arpa=127.0.0.1"),
            "a special-use name (.home.arpa, RFC 8375)",
        ),
    ] {
        let run = scan(case, host, &fake, &dns, pins, None);
        assert_eq!(dns.asked(), Vec::<String>::new(), "{host}: {}", run.stdout);
        assert_eq!(
            finding(&run, "caaRecord"),
            (
                "Skipped",
                format!(
                    "{host} is {kind}, which public DNS does not serve: no CAA record applies \
                     to it, none was asked"
                )
                .as_str()
            ),
            "{}",
            run.stdout
        );
        assert_eq!(
            finding(&run, "dnssec"),
            (
                "Skipped",
                format!(
                    "{host} is {kind}, which public DNS does not serve: it has no zone there \
                     to sign, none was asked"
                )
                .as_str()
            ),
            "{}",
            run.stdout
        );
        // The addresses still come from the hosts file or the pins.
        let (status, addresses) = finding(&run, "dnsAddresses");
        assert_eq!(status, "Passed", "{}", run.stdout);
        assert!(
            addresses.starts_with(&format!("{host} resolves to 127.0.0.1")),
            "{addresses}"
        );
    }
}

#[test]
fn a_certificate_of_a_private_ca_skips_caa_for_a_public_name() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let dns = CountingDns::start();
    let name = "cloud.example.net";
    let pins = format!("{name}=127.0.0.1");

    // The fake's certificate, for the name, from its private CA (--ca-file).
    let run = scan("private-ca", name, &fake, &dns, Some(&pins), None);
    assert_eq!(finding(&run, "tlsTrusted").0, "Passed", "{}", run.stdout);
    assert_eq!(
        finding(&run, "caaRecord"),
        (
            "Skipped",
            "the certificate of cloud.example.net chains to a private CA (--ca-file), not to a \
             publicly trusted one: only publicly trusted CAs must obey CAA records, so none was \
             asked"
        ),
        "{}",
        run.stdout
    );
    // DNSSEC is still asked about (the fake refuses, so it stays undecided); CAA is not.
    let asked = dns.asked();
    assert!(!asked.iter().any(|q| q.starts_with("CAA ")), "{asked:?}");
    assert!(asked.contains(&format!("SOA {name}")), "{asked:?}");
    assert_eq!(finding(&run, "dnssec").0, "Indeterminate", "{}", run.stdout);

    // Without the CA: an untrusted chain, no public CA behind it either.
    let untrusting = hermetic_untrusting();
    let flags: Vec<&str> = untrusting.iter().map(String::as_str).collect();
    let run = scan("untrusted", name, &fake, &dns, Some(&pins), Some(&flags));
    let (status, detail) = finding(&run, "caaRecord");
    assert_eq!(status, "Skipped", "{}", run.stdout);
    assert!(
        detail.starts_with(&format!(
            "the certificate of {name} does not chain to a publicly trusted CA ("
        )) && detail
            .ends_with("): only publicly trusted CAs must obey CAA records, so none was asked"),
        "{detail}"
    );
    assert!(
        !dns.asked().iter().any(|q| q.starts_with("CAA ")),
        "{}",
        run.stdout
    );
}

#[test]
fn plain_http_skips_the_caa_check() {
    let fake = FakeInstance::start(InstanceConfig::default().plain());
    let dns = CountingDns::start();
    let name = "cloud.example.net";
    let pins = format!("{name}=127.0.0.1");
    let run = scan("plain", name, &fake, &dns, Some(&pins), None);
    assert_eq!(
        finding(&run, "caaRecord"),
        (
            "Skipped",
            "the scan runs over plain HTTP: no certificate of cloud.example.net to restrict"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(finding(&run, "dnsAddresses").0, "Passed", "{}", run.stdout);
    assert!(!dns.asked().iter().any(|q| q.starts_with("CAA ")));
}

#[test]
fn an_address_target_has_no_dns_findings() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let dns = CountingDns::start();
    let run = scan("address", "127.0.0.1", &fake, &dns, None, None);
    assert!(run.stdout.contains("Findings:"), "{}", run.stdout);
    for id in ["caaRecord", "dnssec", "dnsAddresses"] {
        assert!(
            !run.stdout.contains(&format!("  {id} [")),
            "{id}: {}",
            run.stdout
        );
    }
    assert_eq!(dns.asked(), Vec::<String>::new());
}
