//! `dnssec` end to end against real DNS servers: BIND's `named` (Debian's bind9, installed by
//! `make deps`), run by the test in the foreground on loopback ports, serving zones the test
//! signs with `dnssec-keygen` and `dnssec-signzone` (bind9-utils):
//!
//! - `example.net.`: the parent, signed: delegates the zones below, with the DS of
//!   `signed.example.net` and a DS for `broken.example.net` made from a key that zone does not
//!   use;
//! - `signed.example.net.`: signed, its DS at the parent;
//! - `unlinked.example.net.`: signed, no DS at the parent;
//! - `plain.example.net.`: not signed;
//! - `broken.example.net.`: signed, but the parent's DS names another key.
//!
//! One `named` is authoritative for them all (no recursion: it never sends a query). A second
//! one is a validating resolver that forwards everything to the first, with the DS of
//! `example.net.` as its only trust anchor, so its AD bit means the chain from `example.net.`
//! down validated. Every query either of them sends stays on 127.0.0.1. The scanned names reach
//! the fake instance through `scanner.resolve`, so the system resolver is never asked. (The
//! zones are not below `test.`: a special-use name is never asked about.)

use crate::support::plugin::{Run, hermetic, run};
use crate::support::{FakeInstance, InstanceConfig};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NAMED: &str = "/usr/sbin/named";

// ---------------------------------------------------------------------------------------------
// The zones

/// The signed test zones in a directory of their own, and the key tags a finding names.
struct Zones {
    dir: PathBuf,
    /// The key tag of `signed.example.net`'s key (and of the DS its parent publishes).
    signed_tag: String,
    /// The DS of `example.net.`: `<key tag> <algorithm> <digest type> <digest>`, the trust
    /// anchor.
    parent_ds: String,
}

fn zone_file(records: &str) -> String {
    format!(
        "$TTL 300\n\
         @ IN SOA ns.example.net. hostmaster.example.net. 1 3600 600 86400 300\n\
         @ IN NS ns.example.net.\n\
         {records}"
    )
}

/// Runs a bind9-utils tool in `dir`; its standard output, or a panic with its error.
fn tool(dir: &Path, program: &str, args: &[&str]) -> String {
    let output = crate::support::on_the_real_clock(&mut Command::new(program))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {program}: {e} (install bind9-utils with `make deps`)")
        });
    assert!(
        output.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A new ECDSA P-256 key for `zone` in `keys` (a directory under `dir`); its file base name.
fn keygen(dir: &Path, keys: &str, zone: &str) -> String {
    std::fs::create_dir_all(dir.join(keys)).unwrap();
    let name = tool(
        dir,
        "dnssec-keygen",
        &[
            "-q",
            "-K",
            keys,
            "-a",
            "ECDSAP256SHA256",
            "-f",
            "KSK",
            "-n",
            "ZONE",
            zone,
        ],
    );
    name.trim().to_string()
}

/// Signs `<zone>.db` into `<zone>.db.signed` with a new key (one key signs everything),
/// leaving the zone's DS in `dsset-<zone>.`; that DS record's data.
fn sign(dir: &Path, zone: &str) -> String {
    keygen(dir, "keys", zone);
    tool(
        dir,
        "dnssec-signzone",
        &[
            "-q",
            "-K",
            "keys",
            "-d",
            ".",
            "-S",
            "-z",
            "-o",
            zone,
            "-f",
            &format!("{zone}.db.signed"),
            &format!("{zone}.db"),
        ],
    );
    let dsset = std::fs::read_to_string(dir.join(format!("dsset-{zone}."))).unwrap();
    ds_data(&dsset)
}

/// `<key tag> <algorithm> <digest type> <digest>` of the first DS line of a dsset file or of
/// `dnssec-dsfromkey`'s output (`name. IN DS 31663 13 2 89D8... 3672...`).
fn ds_data(text: &str) -> String {
    let line = text.lines().find(|l| l.contains(" DS ")).unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    let at = fields.iter().position(|f| *f == "DS").unwrap();
    let (head, digest) = fields[at + 1..].split_at(3);
    format!("{} {}", head.join(" "), digest.concat())
}

impl Zones {
    fn make(dir: &Path) -> Zones {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
        let write = |file: &str, text: String| std::fs::write(dir.join(file), text).unwrap();
        for zone in [
            "signed.example.net",
            "unlinked.example.net",
            "plain.example.net",
            "broken.example.net",
        ] {
            write(&format!("{zone}.db"), zone_file("cloud IN A 127.0.0.1\n"));
        }
        let signed_ds = sign(dir, "signed.example.net");
        sign(dir, "unlinked.example.net");
        sign(dir, "broken.example.net");
        // A key broken.example.net never uses: the parent's DS for it leads nowhere.
        let spare = keygen(dir, "spare", "broken.example.net");
        let spare_ds = ds_data(&tool(
            dir,
            "dnssec-dsfromkey",
            &["-2", &format!("spare/{spare}.key")],
        ));
        write(
            "example.net.db",
            zone_file(&format!(
                "ns IN A 127.0.0.1\n\
                 signed IN NS ns.example.net.\n\
                 signed IN DS {signed_ds}\n\
                 unlinked IN NS ns.example.net.\n\
                 plain IN NS ns.example.net.\n\
                 broken IN NS ns.example.net.\n\
                 broken IN DS {spare_ds}\n"
            )),
        );
        let parent_ds = sign(dir, "example.net");
        Zones {
            dir: dir.to_path_buf(),
            signed_tag: signed_ds.split(' ').next().unwrap().to_string(),
            parent_ds,
        }
    }

    /// named.conf of the authoritative server on `port`.
    fn authoritative_conf(&self, dir: &Path, port: u16) -> String {
        let zones = self.dir.display();
        let mut conf = server_options(dir, port, "recursion no;\n    dnssec-validation no;");
        for (zone, file) in [
            ("example.net", "example.net.db.signed"),
            ("signed.example.net", "signed.example.net.db.signed"),
            ("unlinked.example.net", "unlinked.example.net.db.signed"),
            ("plain.example.net", "plain.example.net.db"),
            ("broken.example.net", "broken.example.net.db.signed"),
        ] {
            conf.push_str(&format!(
                "zone \"{zone}\" {{ type primary; file \"{zones}/{file}\"; }};\n"
            ));
        }
        conf
    }

    /// named.conf of a validating resolver on `port` that forwards every query to `upstream`
    /// and trusts `example.net.` by its DS. The root hints name only 127.0.0.1 too, should
    /// anything ever prime the root rather than forward.
    fn resolver_conf(&self, dir: &Path, port: u16, upstream: SocketAddr) -> String {
        let hints = dir.join("root.hints");
        std::fs::write(
            &hints,
            ". 3600000 NS a.root.example.net.\na.root.example.net. 3600000 A 127.0.0.1\n",
        )
        .unwrap();
        let mut ds = self.parent_ds.splitn(4, ' ');
        let (tag, algorithm, digest_type, digest) = (
            ds.next().unwrap(),
            ds.next().unwrap(),
            ds.next().unwrap(),
            ds.next().unwrap(),
        );
        let mut conf = server_options(
            dir,
            port,
            &format!(
                "recursion yes;\n    \
                 allow-recursion {{ 127.0.0.1; }};\n    \
                 forwarders {{ {} port {}; }};\n    \
                 forward only;\n    \
                 dnssec-validation yes;\n    \
                 trust-anchor-telemetry no;\n    \
                 max-cache-size 16m;",
                upstream.ip(),
                upstream.port()
            ),
        );
        conf.push_str(&format!(
            "trust-anchors {{\n    \
                 example.net. static-ds {tag} {algorithm} {digest_type} \"{digest}\";\n\
             }};\n\
             zone \".\" {{ type hint; file \"{}\"; }};\n",
            hints.display()
        ));
        conf
    }
}

/// The options every test server shares: its files in `dir`, IPv4 loopback only, queries it
/// sends from 127.0.0.1, no NOTIFY, no control channel.
fn server_options(dir: &Path, port: u16, role: &str) -> String {
    let dir = dir.display();
    format!(
        "options {{\n    \
         directory \"{dir}\";\n    \
         pid-file \"{dir}/named.pid\";\n    \
         session-keyfile \"{dir}/session.key\";\n    \
         managed-keys-directory \"{dir}\";\n    \
         listen-on port {port} {{ 127.0.0.1; }};\n    \
         listen-on-v6 {{ none; }};\n    \
         allow-query {{ 127.0.0.1; }};\n    \
         query-source address 127.0.0.1;\n    \
         notify no;\n    \
         {role}\n}};\ncontrols {{ }};\n"
    )
}

// ---------------------------------------------------------------------------------------------
// named

/// A `named` run by the test in the foreground: killed and reaped on drop (also on a panic).
struct Named {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Drop for Named {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port free for both UDP and TCP right now.
fn free_port() -> u16 {
    loop {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = udp.local_addr().unwrap().port();
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Whether a DNS server answers an SOA query for `example.net` at `addr` within `wait`.
fn answers(addr: SocketAddr, wait: Duration) -> bool {
    let Ok(socket) = UdpSocket::bind("127.0.0.1:0") else {
        return false;
    };
    let mut query = vec![0x5E, 0xC5, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    query.extend_from_slice(b"\x07example\x03net\x00\x00\x06\x00\x01");
    let _ = socket.set_read_timeout(Some(wait));
    let mut buf = [0u8; 1024];
    socket.send_to(&query, addr).is_ok()
        && matches!(socket.recv(&mut buf), Ok(n) if n >= 12 && buf[..2] == [0x5E, 0xC5] && buf[2] & 0x80 != 0)
}

impl Named {
    /// Starts named in `dir` with the configuration `conf` makes for a port, on a free port
    /// (another one when something took it meanwhile), and waits until it answers.
    fn start(dir: &Path, conf: impl Fn(u16) -> String) -> Named {
        assert!(
            Path::new(NAMED).is_file(),
            "{NAMED} is missing: install Debian's bind9 package with `make deps` \
             (packaging/ci-deps.sh)"
        );
        std::fs::create_dir_all(dir).unwrap();
        let config = dir.join("named.conf");
        let log = dir.join("named.log");
        for _ in 0..10 {
            let port = free_port();
            std::fs::write(&config, conf(port)).unwrap();
            let output = std::fs::File::create(&log).unwrap();
            // -g: foreground, log to stderr; -4: IPv4 only; as the current user (no -u).
            let child = crate::support::on_the_real_clock(&mut Command::new(NAMED))
                .args(["-g", "-4", "-n", "1", "-c"])
                .arg(&config)
                .current_dir(dir)
                .stdin(Stdio::null())
                .stdout(output.try_clone().unwrap())
                .stderr(output)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {NAMED}: {e}"));
            let mut named = Named {
                child,
                addr: SocketAddr::from(([127, 0, 0, 1], port)),
                log: log.clone(),
            };
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                if answers(named.addr, Duration::from_millis(200)) {
                    return named;
                }
                if let Ok(Some(status)) = named.child.try_wait() {
                    let text = named.log();
                    if text.contains("unable to listen") || text.contains("address in use") {
                        break;
                    }
                    panic!("named ended ({status}):\n{text}");
                }
                assert!(
                    Instant::now() < deadline,
                    "named does not answer on {}:\n{}",
                    named.addr,
                    named.log()
                );
                // Refused at once while named is not yet listening: poll, not spin.
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("named found no free port in 10 tries")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------
// Scans

/// The authoritative server for the zones of a test, in the test's own directory.
fn authoritative(test: &str) -> (Zones, Named) {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dnssec-{test}"));
    let zones = Zones::make(&base.join("zones"));
    let dir = base.join("authoritative");
    let named = Named::start(&dir, |port| zones.authoritative_conf(&dir, port));
    (zones, named)
}

/// Scans `name` (pinned to the fake instance) asking the DNS server `dns`.
fn scan(case: &str, name: &str, fake: &FakeInstance, dns: SocketAddr, extra: &[&str]) -> Run {
    let host = format!("{name}:{}", fake.port());
    let base = hermetic(&fake.ca_file());
    let mut args: Vec<&str> = vec!["-H", &host, "--debug"];
    args.extend(base.iter().map(String::as_str));
    args.extend(extra);
    run(
        &format!("dnssec-scan-{case}"),
        &args,
        &[
            ("COS_SCANNER_DNS_SERVER", &dns.to_string()),
            ("COS_SCANNER_RESOLVE", &format!("{name}=127.0.0.1")),
        ],
    )
}

/// The `--debug` line of the dnssec finding after its id: `[Status, severity...]: detail`.
fn dnssec(run: &Run) -> &str {
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix("  dnssec "))
        .unwrap_or_else(|| panic!("no dnssec finding:\n{}\n{}", run.stdout, run.stderr))
}

fn status(run: &Run) -> &str {
    dnssec(run)
        .trim_start_matches('[')
        .split(',')
        .next()
        .unwrap()
}

fn detail(run: &Run) -> &str {
    dnssec(run).split_once("]: ").map_or("", |(_, d)| d)
}

/// The rating the second line names (`... rating: E, last scanned: ...`).
fn rating(run: &Run) -> &str {
    run.line(1)
        .split_once("rating: ")
        .and_then(|(_, rest)| rest.split(',').next())
        .unwrap_or_else(|| panic!("no rating:\n{}", run.stdout))
}

/// Over plain HTTP: the fake's certificate names only localhost, and DNSSEC is judged over
/// HTTP as over HTTPS.
fn instance() -> FakeInstance {
    FakeInstance::start(InstanceConfig::default().plain())
}

#[test]
fn the_authoritative_server_tells_signed_from_unsigned_zones() {
    let (zones, named) = authoritative("authoritative");
    let fake = instance();
    let tag = &zones.signed_tag;

    let run = scan("signed", "cloud.signed.example.net", &fake, named.addr, &[]);
    assert_eq!(status(&run), "Passed", "{}", run.stdout);
    assert_eq!(
        detail(&run),
        format!(
            "the zone signed.example.net holding cloud.signed.example.net is signed with 1 DNSKEY \
             (ECDSAP256SHA256, key tag {tag}) and its parent publishes DS for key tag {tag}; \
             the DNS server asked is authoritative, not a resolver, so it validated nothing"
        )
    );

    let run = scan("plain", "cloud.plain.example.net", &fake, named.addr, &[]);
    assert_eq!(status(&run), "Failed", "{}", run.stdout);
    assert_eq!(
        detail(&run),
        "the zone plain.example.net holding cloud.plain.example.net is not signed: no DNSKEY at \
         plain.example.net and no DS for it at its parent"
    );
    // A hardening measure: never among the failed additional checks, never capping the rating.
    assert!(
        !run.stdout
            .lines()
            .any(|l| l.starts_with("Additional checks failed") && l.contains("dnssec")),
        "{}",
        run.stdout
    );

    let run = scan(
        "unlinked",
        "cloud.unlinked.example.net",
        &fake,
        named.addr,
        &[],
    );
    assert_eq!(status(&run), "Failed", "{}", run.stdout);
    assert!(
        detail(&run).contains("is signed with 1 DNSKEY")
            && detail(&run).ends_with(
                "but its parent publishes no DS for it: validating resolvers treat it as unsigned"
            ),
        "{}",
        detail(&run)
    );

    let run = scan("broken", "cloud.broken.example.net", &fake, named.addr, &[]);
    assert_eq!(status(&run), "Failed", "{}", run.stdout);
    assert!(
        detail(&run).contains("matches none of the zone's keys"),
        "{}",
        detail(&run)
    );

    // With --check-hardening the unsigned zone is listed as missing hardening, like CAA, and
    // the rating is the same as without it.
    let hardened = scan(
        "plain-hardening",
        "cloud.plain.example.net",
        &fake,
        named.addr,
        &["--check-hardening"],
    );
    let missing = hardened
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Missing hardening: "))
        .unwrap_or_else(|| panic!("{}", hardened.stdout));
    assert!(missing.split(", ").any(|id| id == "dnssec"), "{missing}");
    assert_eq!(rating(&hardened), rating(&run), "{}", hardened.stdout);
    assert_eq!(hardened.code, run.code, "{}", hardened.stdout);

    // --verify-remediation settles it with the DNS lookups alone.
    let verified = scan(
        "verify-signed",
        "cloud.signed.example.net",
        &fake,
        named.addr,
        &["--verify-remediation", "dnssec"],
    );
    assert!(
        verified
            .stdout
            .lines()
            .any(|l| l.starts_with("dnssec: passes")),
        "{}",
        verified.stdout
    );
    let verified = scan(
        "verify-plain",
        "cloud.plain.example.net",
        &fake,
        named.addr,
        &["--verify-remediation", "dnssec"],
    );
    assert!(
        verified
            .stdout
            .lines()
            .any(|l| l.starts_with("dnssec: still fails (low): the zone plain.example.net")),
        "{}",
        verified.stdout
    );
}

#[test]
fn a_validating_resolver_vouches_with_the_ad_bit() {
    let (zones, authoritative) = authoritative("resolver");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dnssec-resolver/resolver");
    let upstream = authoritative.addr;
    let resolver = Named::start(&dir, |port| zones.resolver_conf(&dir, port, upstream));
    let fake = instance();
    let tag = &zones.signed_tag;

    let run = scan(
        "resolver-signed",
        "cloud.signed.example.net",
        &fake,
        resolver.addr,
        &[],
    );
    assert_eq!(status(&run), "Passed", "{}", run.stdout);
    assert_eq!(
        detail(&run),
        format!(
            "the zone signed.example.net holding cloud.signed.example.net is signed with 1 DNSKEY \
             (ECDSAP256SHA256, key tag {tag}) and its parent publishes DS for key tag {tag}; \
             the resolver asked validated the answers (AD)"
        )
    );

    let run = scan(
        "resolver-plain",
        "cloud.plain.example.net",
        &fake,
        resolver.addr,
        &[],
    );
    assert_eq!(status(&run), "Failed", "{}", run.stdout);
    assert!(detail(&run).contains("is not signed"), "{}", detail(&run));

    // A chain that does not validate: the resolver answers SERVFAIL, which decides nothing.
    let run = scan(
        "resolver-broken",
        "cloud.broken.example.net",
        &fake,
        resolver.addr,
        &[],
    );
    assert_eq!(status(&run), "Indeterminate", "{}", run.stdout);
    assert!(
        detail(&run).starts_with(
            "whether the zone of cloud.broken.example.net is signed could not be decided: the DNS \
             server"
        ) && detail(&run).contains("SERVFAIL"),
        "{}",
        detail(&run)
    );
}

#[test]
fn no_answer_leaves_dnssec_indeterminate() {
    let (_zones, named) = authoritative("no-answer");
    let fake = instance();

    // A name the server does not serve: REFUSED.
    let run = scan("refused", "cloud.example.org", &fake, named.addr, &[]);
    assert_eq!(status(&run), "Indeterminate", "{}", run.stdout);
    assert!(detail(&run).contains("REFUSED"), "{}", detail(&run));

    // The server stopped: its port is closed.
    let stopped = named.addr;
    drop(named);
    let run = scan("stopped", "cloud.signed.example.net", &fake, stopped, &[]);
    assert_eq!(status(&run), "Indeterminate", "{}", run.stdout);
    assert!(
        detail(&run).contains("refused the query (port closed)"),
        "{}",
        detail(&run)
    );

    // A server that never answers: undecided once the request timeout is over.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let started = Instant::now();
    let run = scan(
        "silent",
        "cloud.signed.example.net",
        &fake,
        silent.local_addr().unwrap(),
        &["--timeout", "1"],
    );
    assert_eq!(status(&run), "Indeterminate", "{}", run.stdout);
    assert!(detail(&run).contains("no answer"), "{}", detail(&run));
    // CAA and DNSSEC wait at once, not one after the other.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}
