//! Unit tests of `dns`.

use super::*;

const RCODE_SERVFAIL: u16 = 2;
const RCODE_REFUSED: u16 = 5;
use std::net::TcpListener;
use std::sync::mpsc;
use std::thread;

// -----------------------------------------------------------------------------------------
// A small encoder for canned answers

fn push_name(out: &mut Vec<u8>, name: &str) {
    for label in name.split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
}

fn caa_rdata(flags: u8, tag: &str, value: &str) -> Vec<u8> {
    let mut rdata = vec![flags, tag.len() as u8];
    rdata.extend_from_slice(tag.as_bytes());
    rdata.extend_from_slice(value.as_bytes());
    rdata
}

/// One answer record: owner (as a name or a pointer), type, rdata.
struct Rr {
    owner: Owner,
    rtype: u16,
    rdata: Vec<u8>,
}

enum Owner {
    Name(&'static str),
    /// A compression pointer to the question name (offset 12).
    Question,
}

fn caa(tag: &str, value: &str) -> Rr {
    Rr {
        owner: Owner::Question,
        rtype: TYPE_CAA,
        rdata: caa_rdata(0, tag, value),
    }
}

/// The question name of a query (the bytes between the header and QTYPE).
fn question_of(query: &[u8]) -> (u16, String) {
    let id = u16_at(query, 0).unwrap();
    let (name, _) = read_name(query, 12).unwrap();
    (id, name)
}

/// What the fake server was asked.
#[derive(Clone, Debug)]
struct FakeQuery {
    id: u16,
    name: String,
    qtype: u16,
    /// An OPT record with the DO bit came along.
    dnssec: bool,
}

fn query_of(query: &[u8]) -> FakeQuery {
    let (id, name) = question_of(query);
    let (_, after) = read_name(query, 12).unwrap();
    let qtype = u16_at(query, after).unwrap();
    let arcount = u16_at(query, 10).unwrap();
    // The OPT record: root owner, TYPE 41, payload, extended RCODE, version, flags.
    let opt = after + 4;
    let dnssec = arcount == 1
        && query.get(opt) == Some(&0)
        && u16_at(query, opt + 1) == Some(TYPE_OPT)
        && u16_at(query, opt + 7).is_some_and(|f| f & EDNS_DO != 0);
    FakeQuery {
        id,
        name,
        qtype,
        dnssec,
    }
}

fn response(id: u16, qname: &str, flags: u16, answers: &[Rr]) -> Vec<u8> {
    message(id, qname, TYPE_CAA, flags, answers, &[], None)
}

/// An answer to the question (`qname`, `qtype`) with header `flags` besides QR, RD and RA
/// (the low four bits are the RCODE), the records of the answer and authority sections,
/// and an OPT record with this extended RCODE when given.
fn message(
    id: u16,
    qname: &str,
    qtype: u16,
    flags: u16,
    answers: &[Rr],
    authority: &[Rr],
    opt: Option<u8>,
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&(FLAG_QR | FLAG_RD | FLAG_RA | flags).to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&(answers.len() as u16).to_be_bytes());
    out.extend_from_slice(&(authority.len() as u16).to_be_bytes());
    out.extend_from_slice(&u16::from(opt.is_some()).to_be_bytes());
    push_name(&mut out, qname);
    out.extend_from_slice(&qtype.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    for rr in answers.iter().chain(authority) {
        match rr.owner {
            Owner::Name(name) => push_name(&mut out, name),
            Owner::Question => out.extend_from_slice(&[0xC0, 12]),
        }
        out.extend_from_slice(&rr.rtype.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&300u32.to_be_bytes());
        out.extend_from_slice(&(rr.rdata.len() as u16).to_be_bytes());
        out.extend_from_slice(&rr.rdata);
    }
    if let Some(extended) = opt {
        out.push(0);
        out.extend_from_slice(&TYPE_OPT.to_be_bytes());
        out.extend_from_slice(&1232u16.to_be_bytes());
        out.extend_from_slice(&[extended, 0]);
        out.extend_from_slice(&EDNS_DO.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
    }
    out
}

// -----------------------------------------------------------------------------------------
// A fake DNS server

/// What the fake server does with a query for a name.
type Zone = fn(id: u16, qname: &str) -> Vec<Vec<u8>>;

struct FakeDns {
    addr: SocketAddr,
    asked: mpsc::Receiver<FakeQuery>,
}

impl FakeDns {
    /// Answers every query on 127.0.0.1 with the datagrams `zone` returns (none: silence).
    fn start(zone: Zone) -> FakeDns {
        FakeDns::serve(move |q| zone(q.id, &q.name))
    }

    /// Answers every query with the datagrams `answer` returns for it.
    fn serve(answer: impl Fn(&FakeQuery) -> Vec<Vec<u8>> + Send + 'static) -> FakeDns {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = socket.local_addr().unwrap();
        let (tx, asked) = mpsc::channel();
        thread::spawn(move || {
            let mut buf = [0u8; 512];
            while let Ok((n, peer)) = socket.recv_from(&mut buf) {
                let query = query_of(&buf[..n]);
                if tx.send(query.clone()).is_err() {
                    return;
                }
                for datagram in answer(&query) {
                    let _ = socket.send_to(&datagram, peer);
                }
            }
        });
        FakeDns { addr, asked }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.try_iter().map(|q| q.name).collect()
    }

    /// Every question asked, as `TYPE name`, each checked to carry DO when `dnssec`.
    fn asked_typed(&self, dnssec: bool) -> Vec<String> {
        self.asked
            .try_iter()
            .map(|q| {
                assert_eq!(q.dnssec, dnssec, "{q:?}");
                format!("{} {}", type_name(q.qtype), q.name)
            })
            .collect()
    }
}

const TIMEOUT: Duration = Duration::from_secs(5);

fn lookup(server: &FakeDns, name: &str) -> CaaLookup {
    lookup_caa(name, Some(server.addr), TIMEOUT)
}

#[test]
fn caa_on_the_name_itself() {
    let dns = FakeDns::start(|id, qname| {
        vec![response(
            id,
            qname,
            0,
            &[
                caa("issue", "letsencrypt.org"),
                caa("iodef", "mailto:security@example.net"),
            ],
        )]
    });
    let got = lookup(&dns, "Cloud.Example.Net.");
    assert_eq!(
        got,
        CaaLookup::Records {
            owner: "cloud.example.net".into(),
            records: vec![
                CaaRecord {
                    flags: 0,
                    tag: "issue".into(),
                    value: "letsencrypt.org".into()
                },
                CaaRecord {
                    flags: 0,
                    tag: "iodef".into(),
                    value: "mailto:security@example.net".into()
                },
            ],
        }
    );
    assert_eq!(dns.asked(), ["cloud.example.net"]);
}

#[test]
fn caa_only_on_the_parent() {
    let dns = FakeDns::start(|id, qname| {
        let answers = if qname == "example.net" {
            vec![caa("issue", "ca.example.net; validationmethods=dns-01")]
        } else {
            Vec::new()
        };
        vec![response(id, qname, 0, &answers)]
    });
    match lookup(&dns, "cloud.example.net") {
        CaaLookup::Records { owner, records } => {
            assert_eq!(owner, "example.net");
            assert_eq!(records.len(), 1);
            assert_eq!(records[0].value, "ca.example.net; validationmethods=dns-01");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(dns.asked(), ["cloud.example.net", "example.net"]);
}

#[test]
fn caa_behind_a_cname_counts() {
    let dns = FakeDns::start(|id, qname| {
        let mut cname = Vec::new();
        push_name(&mut cname, "edge.cdn.net");
        vec![response(
            id,
            qname,
            0,
            &[
                Rr {
                    owner: Owner::Question,
                    rtype: 5,
                    rdata: cname,
                },
                Rr {
                    owner: Owner::Name("edge.cdn.net"),
                    rtype: TYPE_CAA,
                    rdata: caa_rdata(128, "ISSUE", "ca.example.net"),
                },
            ],
        )]
    });
    match lookup(&dns, "cloud.example.net") {
        CaaLookup::Records { owner, records } => {
            assert_eq!(owner, "cloud.example.net");
            assert_eq!(
                records,
                [CaaRecord {
                    flags: 128,
                    tag: "issue".into(),
                    value: "ca.example.net".into()
                }]
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_caa_anywhere_climbs_to_the_last_label() {
    let dns = FakeDns::start(|id, qname| {
        // NXDOMAIN for the name, an empty NOERROR above it.
        let rcode = if qname == "cloud.example.net" {
            RCODE_NXDOMAIN
        } else {
            0
        };
        vec![response(id, qname, rcode, &[])]
    });
    assert_eq!(lookup(&dns, "cloud.example.net"), CaaLookup::NoRecords);
    assert_eq!(dns.asked(), ["cloud.example.net", "example.net", "net"]);
}

#[test]
fn servfail_fails() {
    let dns = FakeDns::start(|id, qname| vec![response(id, qname, RCODE_SERVFAIL, &[])]);
    match lookup(&dns, "cloud.example.net") {
        CaaLookup::Failed(reason) => assert!(reason.contains("SERVFAIL"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(dns.asked(), ["cloud.example.net"]);
}

#[test]
fn refused_fails() {
    let dns = FakeDns::start(|id, qname| vec![response(id, qname, RCODE_REFUSED, &[])]);
    match lookup(&dns, "cloud.example.net") {
        CaaLookup::Failed(reason) => assert!(reason.contains("REFUSED"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_truncated_answer_is_asked_again_over_tcp() {
    // The UDP server answers with TC set; the TCP listener on the same port has the records.
    let (dns, listener) = loop {
        let dns = FakeDns::start(|id, qname| vec![response(id, qname, FLAG_TC, &[])]);
        if let Ok(listener) = TcpListener::bind(dns.addr) {
            break (dns, listener);
        }
    };
    let tcp = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut prefix = [0u8; 2];
        stream.read_exact(&mut prefix).unwrap();
        let mut query = vec![0u8; u16::from_be_bytes(prefix) as usize];
        stream.read_exact(&mut query).unwrap();
        let (id, qname) = question_of(&query);
        let many: Vec<Rr> = (0..40)
            .map(|i| caa("issue", &format!("ca{i}.example.net")))
            .collect();
        let answer = response(id, &qname, 0, &many);
        stream
            .write_all(&(answer.len() as u16).to_be_bytes())
            .unwrap();
        // In two pieces: the reader must gather them.
        stream.write_all(&answer[..7]).unwrap();
        stream.flush().unwrap();
        stream.write_all(&answer[7..]).unwrap();
        qname
    });
    match lookup(&dns, "cloud.example.net") {
        CaaLookup::Records { owner, records } => {
            assert_eq!(owner, "cloud.example.net");
            assert_eq!(records.len(), 40);
            assert_eq!(records[39].value, "ca39.example.net");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(tcp.join().unwrap(), "cloud.example.net");
}

#[test]
fn a_silent_server_fails_within_the_timeout() {
    let dns = FakeDns::start(|_, _| Vec::new());
    let started = Instant::now();
    let got = lookup_caa(
        "cloud.example.net",
        Some(dns.addr),
        Duration::from_millis(300),
    );
    let took = started.elapsed();
    match got {
        CaaLookup::Failed(reason) => assert!(reason.contains("no answer"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(took >= Duration::from_millis(250), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn a_wrong_id_or_question_is_ignored() {
    let dns = FakeDns::start(|id, qname| {
        vec![
            response(
                id.wrapping_add(1),
                qname,
                0,
                &[caa("issue", "forged.example")],
            ),
            response(id, "other.net", 0, &[caa("issue", "forged.example")]),
            response(id, qname, 0, &[caa("issue", "letsencrypt.org")]),
        ]
    });
    match lookup(&dns, "cloud.example.net") {
        CaaLookup::Records { records, .. } => {
            assert_eq!(records.len(), 1);
            assert_eq!(records[0].value, "letsencrypt.org");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_malformed_answer_fails() {
    let dns = FakeDns::start(|id, qname| {
        let mut answer = response(id, qname, 0, &[caa("issue", "letsencrypt.org")]);
        answer.truncate(answer.len() - 5);
        vec![answer]
    });
    match lookup(&dns, "cloud.example.net") {
        CaaLookup::Failed(reason) => assert!(reason.contains("malformed"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_walk_is_bounded() {
    let dns = FakeDns::start(|id, qname| vec![response(id, qname, 0, &[])]);
    let long = "a.b.c.d.e.f.g.h.i.example.net";
    match lookup(&dns, long) {
        CaaLookup::Failed(reason) => assert!(reason.contains("gave up"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(dns.asked().len(), MAX_QUERIES);
    // Eight labels are walked completely.
    assert_eq!(
        lookup(&dns, "a.b.c.d.e.f.example.net"),
        CaaLookup::NoRecords
    );
}

#[test]
fn addresses_and_garbage_are_not_looked_up() {
    // Nothing listens: a query would fail with another reason.
    let server: SocketAddr = "127.0.0.1:9".parse().unwrap();
    for name in [
        "192.0.2.1",
        "::1",
        "[::1]",
        "",
        ".",
        "a..b",
        "a b.net",
        &"x".repeat(64),
    ] {
        assert_eq!(
            lookup_caa(name, Some(server), Duration::from_millis(50)),
            CaaLookup::Failed("not a DNS name".into()),
            "{name:?}"
        );
    }
}

#[test]
fn special_use_names_are_known_by_their_suffix() {
    for (name, kind) in [
        ("localhost", "a special-use name (.localhost, RFC 6761)"),
        (
            "cloud.localhost",
            "a special-use name (.localhost, RFC 6761)",
        ),
        ("LocalHost.", "a special-use name (.localhost, RFC 6761)"),
        ("nas.local", "a special-use name (.local, RFC 6762)"),
        (
            "cloud.home.arpa",
            "a special-use name (.home.arpa, RFC 8375)",
        ),
        ("cloud.example.test", "a special-use name (.test, RFC 6761)"),
        ("cloud.example", "a special-use name (.example, RFC 6761)"),
        ("cloud.invalid", "a special-use name (.invalid, RFC 6761)"),
        (
            "abcdefghijklmnop.onion",
            "a special-use name (.onion, RFC 7686)",
        ),
        ("cloud.alt", "a special-use name (.alt, RFC 9476)"),
        (
            "cloud.corp.internal",
            "a special-use name (.internal, ICANN)",
        ),
        ("cloud", "a single-label name"),
        ("cloud.", "a single-label name"),
    ] {
        assert_eq!(special_use(name).as_deref(), Some(kind), "{name}");
    }
    // Public names, also ones that merely contain a special label, and what is no name.
    for name in [
        "cloud.example.net",
        "example.com",
        "localhost.example.net",
        "mylocalhost.net",
        "local.example.org",
        "test.example.org",
        "arpa.example.org",
        "home.arpa.example.org",
        "127.0.0.1",
        "::1",
        "[::1]",
        "",
        "a..b",
    ] {
        assert_eq!(special_use(name), None, "{name}");
    }
    assert!(is_localhost("localhost") && is_localhost("a.b.LOCALHOST."));
    assert!(!is_localhost("localhost.example.net") && !is_localhost("127.0.0.1"));
}

#[test]
fn special_use_names_are_never_asked_about() {
    let dns = FakeDns::start(|id, qname| vec![response(id, qname, 0, &[caa("issue", "ca.net")])]);
    for name in [
        "localhost",
        "cloud.localhost",
        "cloud",
        "nas.local",
        "cloud.home.arpa",
    ] {
        assert_eq!(lookup(&dns, name), CaaLookup::NotAsked, "{name}");
        assert_eq!(dnssec(&dns, name), DnssecLookup::NotAsked, "{name}");
        // Not even without a server to ask.
        assert_eq!(lookup_caa(name, None, TIMEOUT), CaaLookup::NotAsked);
        assert_eq!(lookup_dnssec(name, None, TIMEOUT), DnssecLookup::NotAsked);
    }
    assert_eq!(dns.asked(), Vec::<String>::new());
    // A public name without a server: failed, saying what to set.
    let none = "no DNS server known (set scanner.dns_server)".to_string();
    assert_eq!(
        lookup_caa("cloud.example.net", None, TIMEOUT),
        CaaLookup::Failed(none.clone())
    );
    assert_eq!(
        lookup_dnssec("cloud.example.net", None, TIMEOUT),
        DnssecLookup::Failed(none)
    );
}

#[test]
fn resolv_conf_first_nameserver() {
    let text = "# generated\nsearch example.net\n; nameserver 192.0.2.9\n\
                nameserver    fe80::1%eth0   # link-local\nnameserver 192.0.2.53\n";
    assert_eq!(
        parse_resolv_conf(text),
        Some("[fe80::1]:53".parse().unwrap())
    );
    assert_eq!(
        parse_resolv_conf("nameserver 192.0.2.53\nnameserver 192.0.2.54\n"),
        Some("192.0.2.53:53".parse().unwrap())
    );
    assert_eq!(
        parse_resolv_conf("nameserver bogus\nnameserver ::1\n"),
        Some("[::1]:53".parse().unwrap())
    );
    assert_eq!(parse_resolv_conf("search example.net\n"), None);
    assert_eq!(parse_resolv_conf("nameservers 192.0.2.1\n"), None);
}

#[test]
fn the_query_is_a_caa_question_with_recursion_desired() {
    let q = encode_query(0xBEEF, &Question::new("cloud.example.net", TYPE_CAA, false));
    assert_eq!(&q[..4], &[0xBE, 0xEF, 0x01, 0x00]);
    assert_eq!(&q[4..12], &[0, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(read_name(&q, 12), Some(("cloud.example.net".into(), 31)));
    assert_eq!(&q[31..], &[1, 1, 0, 1]);
}

#[test]
fn compression_pointer_loops_are_bounded() {
    // A pointer to itself, and two pointing at each other.
    assert_eq!(read_name(&[0xC0, 0x00], 0), None);
    assert_eq!(read_name(&[0xC0, 0x02, 0xC0, 0x00], 0), None);
    // A label then a pointer back to the label: a name growing without end.
    assert_eq!(read_name(&[1, b'a', 0xC0, 0x00], 0), None);
    // A valid pointer chain.
    let msg = [
        3, b'c', b'o', b'm', 0, 7, b'E', b'x', b'a', b'm', b'p', b'l', b'e', 0xC0, 0,
    ];
    assert_eq!(read_name(&msg, 5), Some(("example.com".into(), 15)));
    // Out of bounds and extended label types.
    assert_eq!(read_name(&[5, b'a'], 0), None);
    assert_eq!(read_name(&[0xC0], 0), None);
    assert_eq!(read_name(&[0x40, 0], 0), None);
    assert_eq!(read_name(&[], 0), None);
}

// -----------------------------------------------------------------------------------------
// DNSSEC

fn rr(owner: &'static str, rtype: u16, rdata: Vec<u8>) -> Rr {
    Rr {
        owner: Owner::Name(owner),
        rtype,
        rdata,
    }
}

fn dnskey_rdata(flags: u16, algorithm: u8, key: &[u8]) -> Vec<u8> {
    let mut rdata = flags.to_be_bytes().to_vec();
    rdata.extend_from_slice(&[DNSKEY_PROTOCOL, algorithm]);
    rdata.extend_from_slice(key);
    rdata
}

fn ds_rdata(key_tag: u16, algorithm: u8, digest_type: u8) -> Vec<u8> {
    let mut rdata = key_tag.to_be_bytes().to_vec();
    rdata.extend_from_slice(&[algorithm, digest_type]);
    rdata.extend_from_slice(&[0xAB; 32]);
    rdata
}

fn soa(owner: &'static str) -> Rr {
    let mut rdata = Vec::new();
    push_name(&mut rdata, "ns.example.net");
    push_name(&mut rdata, "hostmaster.example.net");
    for value in [1u32, 3600, 600, 86400, 300] {
        rdata.extend_from_slice(&value.to_be_bytes());
    }
    rr(owner, TYPE_SOA, rdata)
}

/// The public key of a real ECDSA P-256 key-signing key, made by `dnssec-keygen -a
/// ECDSAP256SHA256 -f KSK signed.test`, which gave it the key tag 31663.
const REAL_KEY: &str = "839facbbbeb5984ca422e65902e05631106cca7783b0286815cff7f842912f22\
                        4d84e7cd118cd3da95238d5dd075730fc0d64817684fd1eab050ad18bbac2940";
const REAL_KEY_TAG: u16 = 31663;

fn real_key() -> Vec<u8> {
    (0..REAL_KEY.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&REAL_KEY[i..i + 2], 16).unwrap())
        .collect()
}

/// A zone `example.net` holding `cloud.example.net`, signed with the real key (and a
/// zone-signing key), its parent `net` publishing a DS for it; answers carry `flags`.
fn signed_zone(q: &FakeQuery, flags: u16) -> Vec<Vec<u8>> {
    let answer = match (q.qtype, q.name.as_str()) {
        // NODATA: the zone's SOA in the authority section names the apex.
        (TYPE_SOA, "cloud.example.net") => message(
            q.id,
            &q.name,
            q.qtype,
            flags,
            &[],
            &[soa("example.net")],
            Some(0),
        ),
        (TYPE_DNSKEY, "example.net") => message(
            q.id,
            &q.name,
            q.qtype,
            flags,
            &[
                rr(
                    "example.net",
                    TYPE_DNSKEY,
                    dnskey_rdata(257, 13, &real_key()),
                ),
                rr("example.net", TYPE_DNSKEY, dnskey_rdata(256, 13, &[7; 64])),
                // An RRSIG (type 46) rides along with DO: not a key.
                rr("example.net", 46, vec![0; 40]),
            ],
            &[],
            Some(0),
        ),
        (TYPE_DS, "example.net") => message(
            q.id,
            &q.name,
            q.qtype,
            flags,
            &[rr("example.net", TYPE_DS, ds_rdata(REAL_KEY_TAG, 13, 2))],
            &[],
            Some(0),
        ),
        _ => message(q.id, &q.name, q.qtype, RCODE_REFUSED, &[], &[], None),
    };
    vec![answer]
}

fn dnssec(server: &FakeDns, name: &str) -> DnssecLookup {
    lookup_dnssec(name, Some(server.addr), TIMEOUT)
}

fn zone_of(lookup: DnssecLookup) -> DnssecZone {
    match lookup {
        DnssecLookup::Zone(zone) => zone,
        other => panic!("{other:?}"),
    }
}

fn failure_of(lookup: DnssecLookup) -> String {
    match lookup {
        DnssecLookup::Failed(reason) => reason,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_dnssec_query_carries_an_opt_record_with_do() {
    let q = encode_query(0xBEEF, &Question::new("example.net", TYPE_DNSKEY, true));
    // RD set, AD and CD clear; one question, one additional record.
    assert_eq!(&q[..4], &[0xBE, 0xEF, 0x01, 0x00]);
    assert_eq!(&q[4..12], &[0, 1, 0, 0, 0, 0, 0, 1]);
    assert_eq!(read_name(&q, 12), Some(("example.net".into(), 25)));
    assert_eq!(&q[25..29], &[0, 48, 0, 1]);
    // OPT: root, type 41, payload 1232, extended RCODE 0, version 0, DO, no options.
    assert_eq!(&q[29..], &[0, 0, 41, 0x04, 0xD0, 0, 0, 0x80, 0, 0, 0]);
    let parsed = query_of(&q);
    assert!(parsed.dnssec && parsed.qtype == TYPE_DNSKEY);
    // The CAA query stays as it was: no OPT record.
    assert!(!query_of(&encode_query(1, &Question::new("a.net", TYPE_CAA, false))).dnssec);
}

#[test]
fn the_key_tag_of_a_real_key() {
    let rdata = dnskey_rdata(257, 13, &real_key());
    assert_eq!(key_tag(&rdata), REAL_KEY_TAG);
    assert_eq!(
        parse_dnskey(&rdata),
        Some(Dnskey {
            flags: 257,
            algorithm: 13,
            key_tag: REAL_KEY_TAG
        })
    );
    // Algorithm 1 (RSA/MD5) takes its tag from the end of the modulus.
    let rsamd5 = dnskey_rdata(256, 1, &[1, 2, 3, 0x12, 0x34, 0x56]);
    assert_eq!(key_tag(&rsamd5), 0x1234);
    // Too short, a protocol other than 3, no key at all.
    assert_eq!(parse_dnskey(&[1, 1, 3]), None);
    assert_eq!(parse_dnskey(&[1, 1, 2, 13, 0xAA]), None);
    assert_eq!(parse_dnskey(&[1, 1, 3, 13]), None);
    assert_eq!(
        parse_ds(&ds_rdata(4711, 8, 2)),
        Some(DsRecord {
            key_tag: 4711,
            algorithm: 8,
            digest_type: 2
        })
    );
    assert_eq!(parse_ds(&[0x12, 0x67, 8, 2]), None);
    assert_eq!(parse_ds(&[0x12]), None);
}

#[test]
fn a_signed_zone_validated_by_a_resolver() {
    let dns = FakeDns::serve(|q| signed_zone(q, FLAG_AD));
    let zone = zone_of(dnssec(&dns, "Cloud.Example.Net."));
    assert_eq!(zone.apex, "example.net");
    assert_eq!(
        zone.dnskeys,
        [
            Dnskey {
                flags: 257,
                algorithm: 13,
                key_tag: REAL_KEY_TAG
            },
            Dnskey {
                flags: 256,
                algorithm: 13,
                key_tag: key_tag(&dnskey_rdata(256, 13, &[7; 64]))
            },
        ]
    );
    assert_eq!(
        zone.ds,
        [DsRecord {
            key_tag: REAL_KEY_TAG,
            algorithm: 13,
            digest_type: 2
        }]
    );
    assert!(zone.authenticated && zone.resolver, "{zone:?}");
    // One SOA question finds the apex (its authority section names it), then the keys
    // and the delegation; every question with DO.
    assert_eq!(
        dns.asked_typed(true),
        [
            "SOA cloud.example.net",
            "DNSKEY example.net",
            "DS example.net"
        ]
    );
}

#[test]
fn without_ad_the_zone_is_signed_but_not_authenticated() {
    let dns = FakeDns::serve(|q| signed_zone(q, 0));
    let zone = zone_of(dnssec(&dns, "cloud.example.net"));
    assert_eq!(zone.dnskeys.len(), 2);
    assert_eq!(zone.ds.len(), 1);
    assert!(!zone.authenticated && zone.resolver, "{zone:?}");

    // AD on the keys but not on the delegation: not authenticated either.
    let dns = FakeDns::serve(|q| {
        let flags = if q.qtype == TYPE_DS { 0 } else { FLAG_AD };
        signed_zone(q, flags)
    });
    assert!(!zone_of(dnssec(&dns, "cloud.example.net")).authenticated);

    // An authoritative server: no RA, no AD.
    let dns = FakeDns::serve(|q| {
        signed_zone(q, 0)
            .into_iter()
            .map(|mut m| {
                m[3] &= !(FLAG_RA as u8);
                m
            })
            .collect()
    });
    let zone = zone_of(dnssec(&dns, "cloud.example.net"));
    assert!(!zone.authenticated && !zone.resolver, "{zone:?}");
}

#[test]
fn an_unsigned_zone_has_neither_keys_nor_ds() {
    let dns = FakeDns::serve(|q| {
        let authority = match q.qtype {
            // The DS NODATA comes from the parent zone.
            TYPE_DS => soa("net"),
            _ => soa("example.net"),
        };
        vec![message(
            q.id,
            &q.name,
            q.qtype,
            0,
            &[],
            &[authority],
            Some(0),
        )]
    });
    let zone = zone_of(dnssec(&dns, "cloud.example.net"));
    assert_eq!(zone.apex, "example.net");
    assert!(zone.dnskeys.is_empty() && zone.ds.is_empty(), "{zone:?}");
}

#[test]
fn the_apex_is_found_by_climbing() {
    // No authority section: the SOA of each ancestor is asked until one answers with it.
    // `cloud` is an alias whose target's zone must not be taken for the name's own.
    let dns = FakeDns::serve(|q| {
        let answer = match (q.qtype, q.name.as_str()) {
            (TYPE_SOA, "cloud.example.net") => {
                let mut target = Vec::new();
                push_name(&mut target, "edge.cdn.net");
                message(
                    q.id,
                    &q.name,
                    q.qtype,
                    0,
                    &[rr("cloud.example.net", TYPE_CNAME, target)],
                    &[soa("cdn.net")],
                    None,
                )
            }
            // An SOA of an unrelated zone in the authority section is no apex.
            (TYPE_SOA, "example.net") => {
                message(q.id, &q.name, q.qtype, 0, &[], &[soa("evil.example")], None)
            }
            (TYPE_SOA, "net") => message(q.id, &q.name, q.qtype, 0, &[soa("net")], &[], None),
            _ => message(q.id, &q.name, q.qtype, 0, &[], &[soa("")], None),
        };
        vec![answer]
    });
    let zone = zone_of(dnssec(&dns, "cloud.example.net"));
    assert_eq!(zone.apex, "net");
    assert_eq!(
        dns.asked_typed(true),
        [
            "SOA cloud.example.net",
            "SOA example.net",
            "SOA net",
            "DNSKEY net",
            "DS net"
        ]
    );
}

#[test]
fn an_nxdomain_answer_names_the_zone_too() {
    let dns = FakeDns::serve(|q| {
        let rcode = if q.qtype == TYPE_SOA {
            RCODE_NXDOMAIN
        } else {
            RCODE_NOERROR
        };
        let authority = if q.qtype == TYPE_DS {
            soa("net")
        } else {
            soa("example.net")
        };
        vec![message(
            q.id,
            &q.name,
            q.qtype,
            rcode,
            &[],
            &[authority],
            None,
        )]
    });
    assert_eq!(
        zone_of(dnssec(&dns, "gone.example.net")).apex,
        "example.net"
    );
}

#[test]
fn undecidable_answers_fail() {
    // SERVFAIL (what a validating resolver answers for a zone that does not validate).
    let dns = FakeDns::serve(|q| match q.qtype {
        TYPE_DNSKEY => vec![message(
            q.id,
            &q.name,
            q.qtype,
            RCODE_SERVFAIL,
            &[],
            &[],
            None,
        )],
        _ => signed_zone(q, 0),
    });
    let reason = failure_of(dnssec(&dns, "cloud.example.net"));
    assert!(
        reason.contains("SERVFAIL for the DNSKEY records of example.net"),
        "{reason}"
    );

    // REFUSED for the SOA.
    let dns = FakeDns::serve(|q| {
        vec![message(
            q.id,
            &q.name,
            q.qtype,
            RCODE_REFUSED,
            &[],
            &[],
            None,
        )]
    });
    let reason = failure_of(dnssec(&dns, "cloud.example.net"));
    assert!(
        reason.contains("REFUSED for the SOA records of cloud.example.net"),
        "{reason}"
    );

    // BADVERS is an extended RCODE: 16, its low bits 0 in the header, 1 in the OPT record.
    let dns = FakeDns::serve(|q| vec![message(q.id, &q.name, q.qtype, 0, &[], &[], Some(1))]);
    let reason = failure_of(dnssec(&dns, "cloud.example.net"));
    assert!(reason.contains("BADVERS"), "{reason}");

    // The root zone answers for the name: there is no zone to judge.
    let dns = FakeDns::serve(|q| {
        vec![message(
            q.id,
            &q.name,
            q.qtype,
            RCODE_NXDOMAIN,
            &[],
            &[soa("")],
            None,
        )]
    });
    let reason = failure_of(dnssec(&dns, "cloud.nowhere"));
    assert!(
        reason.ends_with("from the root zone: cloud.nowhere is in no zone below the root"),
        "{reason}"
    );

    // No SOA anywhere.
    let dns = FakeDns::serve(|q| vec![message(q.id, &q.name, q.qtype, 0, &[], &[], None)]);
    let reason = failure_of(dnssec(&dns, "cloud.example.net"));
    assert!(
        reason.contains("named no zone for cloud.example.net"),
        "{reason}"
    );
    assert_eq!(dns.asked().len(), 3);
}

#[test]
fn a_server_without_the_parent_zone_cannot_tell_the_ds() {
    // An authoritative server for example.net alone answers the DS question from the
    // zone itself: its "no DS" is no answer about the parent.
    let dns = FakeDns::serve(|q| match q.qtype {
        TYPE_DS => vec![message(
            q.id,
            &q.name,
            q.qtype,
            0,
            &[],
            &[soa("example.net")],
            None,
        )],
        _ => signed_zone(q, 0),
    });
    let reason = failure_of(dnssec(&dns, "cloud.example.net"));
    assert!(
        reason.ends_with(
            "from the zone example.net itself, not from its parent: it does not serve the \
             parent zone (set scanner.dns_server to a recursive resolver)"
        ),
        "{reason}"
    );
}

#[test]
fn records_of_other_owners_do_not_count() {
    let dns = FakeDns::serve(|q| match q.qtype {
        TYPE_DNSKEY => vec![message(
            q.id,
            &q.name,
            q.qtype,
            0,
            &[rr(
                "other.net",
                TYPE_DNSKEY,
                dnskey_rdata(257, 13, &[1; 64]),
            )],
            &[],
            None,
        )],
        TYPE_DS => vec![message(
            q.id,
            &q.name,
            q.qtype,
            0,
            &[rr("other.net", TYPE_DS, ds_rdata(1, 13, 2))],
            &[soa("net")],
            None,
        )],
        _ => signed_zone(q, 0),
    });
    let zone = zone_of(dnssec(&dns, "cloud.example.net"));
    assert!(zone.dnskeys.is_empty() && zone.ds.is_empty(), "{zone:?}");
}

#[test]
fn malformed_and_cut_dnssec_answers_fail() {
    // A DNSKEY record whose protocol is not 3.
    let dns = FakeDns::serve(|q| match q.qtype {
        TYPE_DNSKEY => vec![message(
            q.id,
            &q.name,
            q.qtype,
            0,
            &[rr("example.net", TYPE_DNSKEY, vec![1, 1, 9, 13, 0xAA])],
            &[],
            None,
        )],
        _ => signed_zone(q, 0),
    });
    let reason = failure_of(dnssec(&dns, "cloud.example.net"));
    assert_eq!(
        reason,
        format!(
            "malformed DNS answer from {} for the DNSKEY records of example.net: a DNSKEY \
             record does not parse",
            dns.addr
        )
    );

    // A DS record cut short.
    let dns = FakeDns::serve(|q| match q.qtype {
        TYPE_DS => vec![message(
            q.id,
            &q.name,
            q.qtype,
            0,
            &[rr("example.net", TYPE_DS, vec![0x12])],
            &[],
            None,
        )],
        _ => signed_zone(q, 0),
    });
    let reason = failure_of(dnssec(&dns, "cloud.example.net"));
    assert!(reason.ends_with("a DS record does not parse"), "{reason}");

    // Every answer cut in its authority section, then in its additional section.
    for cut in [20, 5] {
        let dns = FakeDns::serve(move |q| {
            signed_zone(q, 0)
                .into_iter()
                .map(|mut m| {
                    m.truncate(m.len() - cut);
                    m
                })
                .collect()
        });
        let reason = failure_of(dnssec(&dns, "cloud.example.net"));
        assert!(
            reason.starts_with("malformed DNS answer") && reason.contains("SOA records"),
            "{reason}"
        );
    }
}

#[test]
fn a_silent_server_leaves_dnssec_undecided_within_the_timeout() {
    let dns = FakeDns::serve(|_| Vec::new());
    let started = Instant::now();
    let got = lookup_dnssec(
        "cloud.example.net",
        Some(dns.addr),
        Duration::from_millis(300),
    );
    let took = started.elapsed();
    let reason = failure_of(got);
    assert!(reason.contains("no answer"), "{reason}");
    assert!(took >= Duration::from_millis(250), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn the_apex_walk_is_bounded() {
    let dns = FakeDns::serve(|q| vec![message(q.id, &q.name, q.qtype, 0, &[], &[], None)]);
    let reason = failure_of(dnssec(&dns, "a.b.c.d.e.f.g.h.example.net"));
    assert!(reason.contains("gave up after 6 queries"), "{reason}");
    assert_eq!(dns.asked().len(), MAX_QUERIES - 2);
}

#[test]
fn addresses_and_garbage_get_no_dnssec_lookup() {
    let server: SocketAddr = "127.0.0.1:9".parse().unwrap();
    for name in ["192.0.2.1", "[::1]", "", "a..b"] {
        assert_eq!(
            lookup_dnssec(name, Some(server), Duration::from_millis(50)),
            DnssecLookup::Failed("not a DNS name".into()),
            "{name:?}"
        );
    }
}

#[test]
fn within_a_zone_is_label_wise() {
    assert!(is_within("cloud.example.net", "example.net"));
    assert!(is_within("example.net", "example.net"));
    assert!(is_within("example.net", ""));
    assert!(!is_within("cloud.badexample.net", "example.net"));
    assert!(!is_within("net", "example.net"));
}

/// A small xorshift generator: reproducible "random" input without a dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Feeds `valid` mutated (and pure noise) to the parsers; how many still parse as answers.
fn fuzz(rng: &mut XorShift, valid: &[u8], id: u16, question: &Question) -> usize {
    let mut answers = 0;
    for round in 0..20_000 {
        let msg: Vec<u8> = if round % 4 == 0 {
            // Pure noise, with the header made to match now and then.
            let len = rng.below(300);
            let mut msg: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if msg.len() >= 12 && rng.below(2) == 0 {
                msg[..6].copy_from_slice(&[0x12, 0x34, 0x81, 0x80, 0, 1]);
            }
            msg
        } else {
            // The valid answer, mutated: flipped bytes, pointers, cuts, inserted bytes.
            let mut msg = valid.to_vec();
            for _ in 0..1 + rng.below(6) {
                let at = rng.below(msg.len());
                match rng.below(5) {
                    0 => msg[at] = rng.next() as u8,
                    1 => msg[at] ^= 1 << rng.below(8),
                    2 => {
                        msg[at] = 0xC0 | (rng.next() as u8 & 0x3F);
                        if at + 1 < msg.len() {
                            msg[at + 1] = rng.next() as u8;
                        }
                    }
                    3 => msg.truncate(at),
                    _ => msg.insert(at, rng.next() as u8),
                }
                if msg.is_empty() {
                    break;
                }
            }
            msg
        };
        if let Parsed::Answer(answer) = parse_response(&msg, id, question) {
            answers += 1;
            let _ = answer.records(TYPE_CAA, None, parse_caa);
            let _ = answer.records(TYPE_DNSKEY, Some(question.name), parse_dnskey);
            let _ = answer.records(TYPE_DS, Some(question.name), parse_ds);
            let _ = answer.authority_soa(question.name);
        }
        let _ = read_name(&msg, rng.below(msg.len() + 2));
        let _ = parse_caa(&msg);
        let _ = parse_dnskey(&msg);
        let _ = parse_ds(&msg);
        let _ = key_tag(&msg);
    }
    answers
}

#[test]
fn hostile_answers_never_panic() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let qname = "cloud.example.net";
    let id = 0x1234;
    let question = Question::new(qname, TYPE_CAA, false);
    let valid = response(
        id,
        qname,
        0,
        &[
            caa("issue", "letsencrypt.org"),
            Rr {
                owner: Owner::Name("alias.example.net"),
                rtype: 5,
                rdata: vec![0xC0, 12],
            },
            caa("issuewild", ";"),
        ],
    );
    assert!(matches!(
        parse_response(&valid, id, &question),
        Parsed::Answer(ref answer)
            if answer.records(TYPE_CAA, None, parse_caa).map(|c| c.len()) == Ok(2)
    ));
    // The mutations leave many answers intact enough to parse.
    let answers = fuzz(&mut rng, &valid, id, &question);
    assert!(answers > 100, "{answers}");

    // A DNSSEC answer: keys, a signature, an authority SOA and an OPT record.
    let question = Question::new("example.net", TYPE_DNSKEY, true);
    let valid = message(
        id,
        "example.net",
        TYPE_DNSKEY,
        FLAG_AD,
        &[
            rr(
                "example.net",
                TYPE_DNSKEY,
                dnskey_rdata(257, 13, &real_key()),
            ),
            rr("example.net", 46, vec![0; 40]),
        ],
        &[soa("example.net")],
        Some(0),
    );
    match parse_response(&valid, id, &question) {
        Parsed::Answer(answer) => {
            let keys = answer.records(TYPE_DNSKEY, Some("example.net"), parse_dnskey);
            assert_eq!(keys.unwrap().len(), 1);
            assert_eq!(answer.authority_soa("example.net"), Some("example.net"));
            assert_ne!(answer.flags & FLAG_AD, 0);
        }
        other => panic!("{other:?}"),
    }
    let answers = fuzz(&mut rng, &valid, id, &question);
    assert!(answers > 100, "{answers}");
}
