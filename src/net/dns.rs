//! DNS: the CAA records a zone publishes for the scanned name (RFC 8659), by a minimal UDP
//! client (with the TCP retry a truncated answer asks for), so no resolver library is needed.
//!
//! The relevant record set is that of the name itself or of its closest ancestor that has
//! one: the lookup climbs label by label up to (not including) the root. A recursive server
//! follows aliases, so a CAA record of any owner in an answer counts (the records after a
//! CNAME chain are those of its target).
//!
//! Everything is bounded: one deadline for the whole walk, at most [`MAX_QUERIES`] names
//! asked, answers of at most 4096 bytes over UDP and 65535 over TCP, and a parser that checks
//! every index and follows at most [`MAX_POINTER_JUMPS`] compression pointers per name, so a
//! hostile server can neither hang nor crash the scan.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaaRecord {
    pub flags: u8,
    /// The property tag, lower-cased (`issue`, `issuewild`, `iodef`, ...).
    pub tag: String,
    /// The property value as sent (invalid UTF-8 replaced).
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaaLookup {
    /// The relevant CAA record set (of the name or its closest ancestor that has one).
    Records {
        owner: String,
        records: Vec<CaaRecord>,
    },
    /// No CAA record on the name or any ancestor.
    NoRecords,
    /// The lookup failed (no server, timeout, malformed answer).
    Failed(String),
}

/// Names asked for at most in one walk (a TCP retry belongs to the query it repeats).
pub const MAX_QUERIES: usize = 8;
/// Largest UDP answer accepted; a larger datagram is ignored.
pub const MAX_UDP_ANSWER: usize = 4096;
/// Compression pointers followed at most while reading one name.
pub const MAX_POINTER_JUMPS: usize = 32;
/// A UDP query without an answer is sent again after this long (while the deadline allows).
const RESEND_AFTER: Duration = Duration::from_secs(1);
/// How much of /etc/resolv.conf is read.
const RESOLV_CONF_LIMIT: u64 = 64 * 1024;

const TYPE_CAA: u16 = 257;
const CLASS_IN: u16 = 1;
const FLAG_QR: u16 = 0x8000;
const FLAG_TC: u16 = 0x0200;
const FLAG_RD: u16 = 0x0100;

const RCODE_NOERROR: u8 = 0;
const RCODE_FORMERR: u8 = 1;
const RCODE_SERVFAIL: u8 = 2;
const RCODE_NXDOMAIN: u8 = 3;
const RCODE_NOTIMP: u8 = 4;
const RCODE_REFUSED: u8 = 5;

/// The first `nameserver` of /etc/resolv.conf, port 53.
pub fn system_nameserver() -> Option<SocketAddr> {
    let file = std::fs::File::open("/etc/resolv.conf").ok()?;
    let mut text = String::new();
    file.take(RESOLV_CONF_LIMIT)
        .read_to_string(&mut text)
        .ok()?;
    parse_resolv_conf(&text)
}

/// The first usable `nameserver` line of a resolv.conf text, port 53. A zone suffix
/// (`fe80::1%eth0`) is dropped.
pub fn parse_resolv_conf(text: &str) -> Option<SocketAddr> {
    text.lines().find_map(|line| {
        let line = line.split(['#', ';']).next().unwrap_or("");
        let mut words = line.split_whitespace();
        if words.next() != Some("nameserver") {
            return None;
        }
        let address = words.next()?;
        let address = address.split('%').next().unwrap_or(address);
        let ip: IpAddr = address.parse().ok()?;
        Some(SocketAddr::new(ip, 53))
    })
}

/// The relevant CAA record set of `name`, asking `server`, all within `timeout`.
pub fn lookup_caa(name: &str, server: SocketAddr, timeout: Duration) -> CaaLookup {
    let Some(name) = normalize(name) else {
        return CaaLookup::Failed("not a DNS name".into());
    };
    let deadline = Instant::now() + timeout;
    let labels: Vec<&str> = name.split('.').collect();
    for (asked, start) in (0..labels.len()).enumerate() {
        let candidate = labels[start..].join(".");
        if asked == MAX_QUERIES {
            return CaaLookup::Failed(format!(
                "gave up after {MAX_QUERIES} queries before reaching {candidate}"
            ));
        }
        let answer = match query(&candidate, server, deadline) {
            Ok(answer) => answer,
            Err(reason) => return CaaLookup::Failed(reason),
        };
        match answer.rcode {
            RCODE_NOERROR if !answer.caa.is_empty() => {
                return CaaLookup::Records {
                    owner: candidate,
                    records: answer.caa,
                };
            }
            RCODE_NOERROR | RCODE_NXDOMAIN => continue,
            rcode => {
                return CaaLookup::Failed(format!(
                    "the DNS server {server} answered {} for the CAA records of {candidate}",
                    rcode_name(rcode)
                ));
            }
        }
    }
    CaaLookup::NoRecords
}

/// Lower-case, without the trailing dot; `None` for address literals and names that are not
/// DNS names (empty labels, over-long, spaces or control characters).
fn normalize(name: &str) -> Option<String> {
    let name = name.trim();
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    let unbracketed = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(&name);
    if unbracketed.parse::<IpAddr>().is_ok() || name.is_empty() || name.len() > 253 {
        return None;
    }
    let valid = name.split('.').all(|label| {
        !label.is_empty() && label.len() <= 63 && label.bytes().all(|b| b.is_ascii_graphic())
    });
    valid.then_some(name)
}

fn rcode_name(rcode: u8) -> String {
    match rcode {
        RCODE_FORMERR => "FORMERR".into(),
        RCODE_SERVFAIL => "SERVFAIL".into(),
        RCODE_NXDOMAIN => "NXDOMAIN".into(),
        RCODE_NOTIMP => "NOTIMP".into(),
        RCODE_REFUSED => "REFUSED".into(),
        other => format!("RCODE {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Messages

/// What a matching answer said.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Answer {
    rcode: u8,
    caa: Vec<CaaRecord>,
}

/// How a received message relates to the query.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Parsed {
    /// Not an answer to this query (other id or question, not a response): keep waiting.
    Unrelated,
    /// The answer to this query, truncated (TC): ask again over TCP.
    Truncated,
    Answer(Answer),
    /// The answer to this query, but its records do not parse.
    Malformed(&'static str),
}

/// A 16-bit query id from a cheap source: the clock, the process id and a counter.
fn query_id() -> u16 {
    static COUNTER: AtomicU16 = AtomicU16::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or(0);
    let mixed = nanos ^ std::process::id().rotate_left(16);
    (mixed as u16) ^ ((mixed >> 16) as u16) ^ COUNTER.fetch_add(0x9e37, Ordering::Relaxed)
}

/// A query for the CAA records of `name` (already normalized), recursion desired.
fn encode_query(id: u16, name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(18 + name.len());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&FLAG_RD.to_be_bytes());
    out.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out.extend_from_slice(&TYPE_CAA.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    out
}

fn u16_at(msg: &[u8], pos: usize) -> Option<u16> {
    let bytes = msg.get(pos..pos.checked_add(2)?)?;
    Some(u16::from_be_bytes([bytes[0], bytes[1]]))
}

/// Reads a (possibly compressed) name at `pos`: the name, lower-cased and dot-separated
/// without a trailing dot (`""` for the root), and the position after it. Bytes that cannot
/// be part of a normalized name read as U+FFFD, so such a name never equals one we asked for.
fn read_name(msg: &[u8], mut pos: usize) -> Option<(String, usize)> {
    let mut name = String::new();
    let mut after = None;
    let mut jumps = 0;
    let mut wire_len = 0usize;
    loop {
        let len = *msg.get(pos)? as usize;
        match len & 0xC0 {
            0x00 if len == 0 => {
                return Some((name, after.unwrap_or(pos + 1)));
            }
            0x00 => {
                let label = msg.get(pos + 1..pos + 1 + len)?;
                wire_len += len + 1;
                if wire_len > 255 {
                    return None;
                }
                if !name.is_empty() {
                    name.push('.');
                }
                for &b in label {
                    if b.is_ascii_graphic() && b != b'.' {
                        name.push(b.to_ascii_lowercase() as char);
                    } else {
                        name.push(char::REPLACEMENT_CHARACTER);
                    }
                }
                pos += 1 + len;
            }
            0xC0 => {
                let low = *msg.get(pos + 1)? as usize;
                if after.is_none() {
                    after = Some(pos + 2);
                }
                jumps += 1;
                if jumps > MAX_POINTER_JUMPS {
                    return None;
                }
                pos = ((len & 0x3F) << 8) | low;
            }
            // 0x40 and 0x80: extended label types, obsolete.
            _ => return None,
        }
    }
}

/// Reads an answer to the query `id` for `qname`'s CAA records.
fn parse_response(msg: &[u8], id: u16, qname: &str) -> Parsed {
    let (Some(got_id), Some(flags), Some(qdcount)) =
        (u16_at(msg, 0), u16_at(msg, 2), u16_at(msg, 4))
    else {
        return Parsed::Unrelated;
    };
    if got_id != id || flags & FLAG_QR == 0 || (flags >> 11) & 0xF != 0 || qdcount != 1 {
        return Parsed::Unrelated;
    }
    let Some((name, pos)) = read_name(msg, 12) else {
        return Parsed::Unrelated;
    };
    if name != qname || u16_at(msg, pos) != Some(TYPE_CAA) || u16_at(msg, pos + 2) != Some(CLASS_IN)
    {
        return Parsed::Unrelated;
    }
    if flags & FLAG_TC != 0 {
        return Parsed::Truncated;
    }
    let rcode = (flags & 0xF) as u8;
    let ancount = u16_at(msg, 6).unwrap_or(0);
    let mut pos = pos + 4;
    let mut caa = Vec::new();
    for _ in 0..ancount {
        let Some((_owner, after_name)) = read_name(msg, pos) else {
            return Parsed::Malformed("an answer record's name does not parse");
        };
        let (Some(rtype), Some(class), Some(rdlength)) = (
            u16_at(msg, after_name),
            u16_at(msg, after_name + 2),
            u16_at(msg, after_name + 8),
        ) else {
            return Parsed::Malformed("an answer record is cut short");
        };
        let start = after_name + 10;
        let Some(rdata) = msg.get(start..start + rdlength as usize) else {
            return Parsed::Malformed("an answer record's data is cut short");
        };
        if rtype == TYPE_CAA && class == CLASS_IN {
            match parse_caa(rdata) {
                Some(record) => caa.push(record),
                None => return Parsed::Malformed("a CAA record does not parse"),
            }
        }
        pos = start + rdlength as usize;
    }
    Parsed::Answer(Answer { rcode, caa })
}

/// CAA RDATA: flags, tag length, tag (1-15 letters and digits), value.
fn parse_caa(rdata: &[u8]) -> Option<CaaRecord> {
    let flags = *rdata.first()?;
    let tag_len = *rdata.get(1)? as usize;
    let tag = rdata.get(2..2 + tag_len)?;
    if tag.is_empty() || tag.len() > 15 || !tag.iter().all(u8::is_ascii_alphanumeric) {
        return None;
    }
    let value = rdata.get(2 + tag_len..)?;
    Some(CaaRecord {
        flags,
        tag: String::from_utf8_lossy(tag).to_ascii_lowercase(),
        value: String::from_utf8_lossy(value).into_owned(),
    })
}

// ---------------------------------------------------------------------------------------------
// Transport

/// Asks `server` for the CAA records of `name` over UDP, and over TCP when the UDP answer is
/// truncated.
fn query(name: &str, server: SocketAddr, deadline: Instant) -> Result<Answer, String> {
    let id = query_id();
    let packet = encode_query(id, name);
    match query_udp(&packet, id, name, server, deadline)? {
        Parsed::Answer(answer) => Ok(answer),
        Parsed::Truncated => match query_tcp(&packet, id, name, server, deadline)? {
            Parsed::Answer(answer) => Ok(answer),
            Parsed::Malformed(why) => Err(malformed(server, name, why)),
            Parsed::Truncated | Parsed::Unrelated => Err(format!(
                "the DNS server {server} answered the CAA query for {name} over TCP with \
                 something else"
            )),
        },
        Parsed::Malformed(why) => Err(malformed(server, name, why)),
        // `query_udp` keeps waiting on unrelated datagrams until the deadline.
        Parsed::Unrelated => Err(timed_out(server, name)),
    }
}

fn malformed(server: SocketAddr, name: &str, why: &str) -> String {
    format!("malformed DNS answer from {server} for the CAA records of {name}: {why}")
}

fn timed_out(server: SocketAddr, name: &str) -> String {
    format!("no answer from the DNS server {server} for the CAA records of {name} in time")
}

fn remaining(deadline: Instant) -> Option<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}

fn query_udp(
    packet: &[u8],
    id: u16,
    name: &str,
    server: SocketAddr,
    deadline: Instant,
) -> Result<Parsed, String> {
    let local: SocketAddr = match server {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = UdpSocket::bind(local).map_err(|e| format!("DNS over UDP: {e}"))?;
    socket
        .connect(server)
        .map_err(|e| format!("DNS server {server}: {e}"))?;
    let mut buf = vec![0u8; MAX_UDP_ANSWER + 1];
    let mut resend_at = Instant::now();
    loop {
        let now = Instant::now();
        if now >= resend_at {
            socket
                .send(packet)
                .map_err(|e| format!("DNS server {server}: {e}"))?;
            resend_at = now + RESEND_AFTER;
        }
        let Some(left) = remaining(deadline) else {
            return Err(timed_out(server, name));
        };
        let wait = left.min(
            resend_at
                .saturating_duration_since(now)
                .max(Duration::from_millis(1)),
        );
        socket
            .set_read_timeout(Some(wait))
            .map_err(|e| format!("DNS over UDP: {e}"))?;
        match socket.recv(&mut buf) {
            Ok(n) if n > MAX_UDP_ANSWER => continue,
            Ok(n) => match parse_response(&buf[..n], id, name) {
                Parsed::Unrelated => continue,
                parsed => return Ok(parsed),
            },
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                return Err(format!(
                    "the DNS server {server} refused the query (port closed)"
                ));
            }
            Err(e) => return Err(format!("DNS server {server}: {e}")),
        }
    }
}

fn query_tcp(
    packet: &[u8],
    id: u16,
    name: &str,
    server: SocketAddr,
    deadline: Instant,
) -> Result<Parsed, String> {
    let io_error = |e: std::io::Error| {
        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
            timed_out(server, name)
        } else {
            format!("DNS over TCP to {server}: {e}")
        }
    };
    let left = remaining(deadline).ok_or_else(|| timed_out(server, name))?;
    let mut stream = TcpStream::connect_timeout(&server, left).map_err(io_error)?;
    let mut framed = Vec::with_capacity(packet.len() + 2);
    framed.extend_from_slice(&(packet.len() as u16).to_be_bytes());
    framed.extend_from_slice(packet);
    let left = remaining(deadline).ok_or_else(|| timed_out(server, name))?;
    stream.set_write_timeout(Some(left)).map_err(io_error)?;
    stream.write_all(&framed).map_err(io_error)?;
    let mut prefix = [0u8; 2];
    read_full(&mut stream, &mut prefix, deadline).map_err(io_error)?;
    let mut answer = vec![0u8; u16::from_be_bytes(prefix) as usize];
    read_full(&mut stream, &mut answer, deadline).map_err(io_error)?;
    Ok(parse_response(&answer, id, name))
}

/// Fills `buf` from the stream before the deadline.
fn read_full(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let left = remaining(deadline).ok_or(ErrorKind::TimedOut)?;
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn response(id: u16, qname: &str, flags: u16, answers: &[Rr]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&(FLAG_QR | FLAG_RD | 0x0080 | flags).to_be_bytes());
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&(answers.len() as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        push_name(&mut out, qname);
        out.extend_from_slice(&TYPE_CAA.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        for rr in answers {
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
        out
    }

    // -----------------------------------------------------------------------------------------
    // A fake DNS server

    /// What the fake server does with a query for a name.
    type Zone = fn(id: u16, qname: &str) -> Vec<Vec<u8>>;

    struct FakeDns {
        addr: SocketAddr,
        asked: mpsc::Receiver<String>,
    }

    impl FakeDns {
        /// Answers every query on 127.0.0.1 with the datagrams `zone` returns (none: silence).
        fn start(zone: Zone) -> FakeDns {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            let addr = socket.local_addr().unwrap();
            let (tx, asked) = mpsc::channel();
            thread::spawn(move || {
                let mut buf = [0u8; 512];
                while let Ok((n, peer)) = socket.recv_from(&mut buf) {
                    let (id, qname) = question_of(&buf[..n]);
                    if tx.send(qname.clone()).is_err() {
                        return;
                    }
                    for datagram in zone(id, &qname) {
                        let _ = socket.send_to(&datagram, peer);
                    }
                }
            });
            FakeDns { addr, asked }
        }

        fn asked(&self) -> Vec<String> {
            self.asked.try_iter().collect()
        }
    }

    const TIMEOUT: Duration = Duration::from_secs(5);

    fn lookup(server: &FakeDns, name: &str) -> CaaLookup {
        lookup_caa(name, server.addr, TIMEOUT)
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
                    caa("iodef", "mailto:security@example.test"),
                ],
            )]
        });
        let got = lookup(&dns, "Cloud.Example.Test.");
        assert_eq!(
            got,
            CaaLookup::Records {
                owner: "cloud.example.test".into(),
                records: vec![
                    CaaRecord {
                        flags: 0,
                        tag: "issue".into(),
                        value: "letsencrypt.org".into()
                    },
                    CaaRecord {
                        flags: 0,
                        tag: "iodef".into(),
                        value: "mailto:security@example.test".into()
                    },
                ],
            }
        );
        assert_eq!(dns.asked(), ["cloud.example.test"]);
    }

    #[test]
    fn caa_only_on_the_parent() {
        let dns = FakeDns::start(|id, qname| {
            let answers = if qname == "example.test" {
                vec![caa("issue", "ca.example.net; validationmethods=dns-01")]
            } else {
                Vec::new()
            };
            vec![response(id, qname, 0, &answers)]
        });
        match lookup(&dns, "cloud.example.test") {
            CaaLookup::Records { owner, records } => {
                assert_eq!(owner, "example.test");
                assert_eq!(records.len(), 1);
                assert_eq!(records[0].value, "ca.example.net; validationmethods=dns-01");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(dns.asked(), ["cloud.example.test", "example.test"]);
    }

    #[test]
    fn caa_behind_a_cname_counts() {
        let dns = FakeDns::start(|id, qname| {
            let mut cname = Vec::new();
            push_name(&mut cname, "edge.cdn.test");
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
                        owner: Owner::Name("edge.cdn.test"),
                        rtype: TYPE_CAA,
                        rdata: caa_rdata(128, "ISSUE", "ca.example.net"),
                    },
                ],
            )]
        });
        match lookup(&dns, "cloud.example.test") {
            CaaLookup::Records { owner, records } => {
                assert_eq!(owner, "cloud.example.test");
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
            let rcode = if qname == "cloud.example.test" {
                RCODE_NXDOMAIN as u16
            } else {
                0
            };
            vec![response(id, qname, rcode, &[])]
        });
        assert_eq!(lookup(&dns, "cloud.example.test"), CaaLookup::NoRecords);
        assert_eq!(dns.asked(), ["cloud.example.test", "example.test", "test"]);
    }

    #[test]
    fn servfail_fails() {
        let dns = FakeDns::start(|id, qname| vec![response(id, qname, RCODE_SERVFAIL as u16, &[])]);
        match lookup(&dns, "cloud.example.test") {
            CaaLookup::Failed(reason) => assert!(reason.contains("SERVFAIL"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(dns.asked(), ["cloud.example.test"]);
    }

    #[test]
    fn refused_fails() {
        let dns = FakeDns::start(|id, qname| vec![response(id, qname, RCODE_REFUSED as u16, &[])]);
        match lookup(&dns, "cloud.example.test") {
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
        match lookup(&dns, "cloud.example.test") {
            CaaLookup::Records { owner, records } => {
                assert_eq!(owner, "cloud.example.test");
                assert_eq!(records.len(), 40);
                assert_eq!(records[39].value, "ca39.example.net");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(tcp.join().unwrap(), "cloud.example.test");
    }

    #[test]
    fn a_silent_server_fails_within_the_timeout() {
        let dns = FakeDns::start(|_, _| Vec::new());
        let started = Instant::now();
        let got = lookup_caa("cloud.example.test", dns.addr, Duration::from_millis(300));
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
                response(id, "other.test", 0, &[caa("issue", "forged.example")]),
                response(id, qname, 0, &[caa("issue", "letsencrypt.org")]),
            ]
        });
        match lookup(&dns, "cloud.example.test") {
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
        match lookup(&dns, "cloud.example.test") {
            CaaLookup::Failed(reason) => assert!(reason.contains("malformed"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_walk_is_bounded() {
        let dns = FakeDns::start(|id, qname| vec![response(id, qname, 0, &[])]);
        let long = "a.b.c.d.e.f.g.h.i.example.test";
        match lookup(&dns, long) {
            CaaLookup::Failed(reason) => assert!(reason.contains("gave up"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(dns.asked().len(), MAX_QUERIES);
        // Eight labels are walked completely.
        assert_eq!(
            lookup(&dns, "a.b.c.d.e.f.example.test"),
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
            "a b.test",
            &"x".repeat(64),
        ] {
            assert_eq!(
                lookup_caa(name, server, Duration::from_millis(50)),
                CaaLookup::Failed("not a DNS name".into()),
                "{name:?}"
            );
        }
    }

    #[test]
    fn resolv_conf_first_nameserver() {
        let text = "# generated\nsearch example.test\n; nameserver 192.0.2.9\n\
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
        assert_eq!(parse_resolv_conf("search example.test\n"), None);
        assert_eq!(parse_resolv_conf("nameservers 192.0.2.1\n"), None);
    }

    #[test]
    fn the_query_is_a_caa_question_with_recursion_desired() {
        let q = encode_query(0xBEEF, "cloud.example.test");
        assert_eq!(&q[..4], &[0xBE, 0xEF, 0x01, 0x00]);
        assert_eq!(&q[4..12], &[0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(read_name(&q, 12), Some(("cloud.example.test".into(), 32)));
        assert_eq!(&q[32..], &[1, 1, 0, 1]);
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

    #[test]
    fn hostile_answers_never_panic() {
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        let qname = "cloud.example.test";
        let id = 0x1234;
        let valid = response(
            id,
            qname,
            0,
            &[
                caa("issue", "letsencrypt.org"),
                Rr {
                    owner: Owner::Name("alias.example.test"),
                    rtype: 5,
                    rdata: vec![0xC0, 12],
                },
                caa("issuewild", ";"),
            ],
        );
        assert!(matches!(
            parse_response(&valid, id, qname),
            Parsed::Answer(Answer { ref caa, .. }) if caa.len() == 2
        ));
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
                let mut msg = valid.clone();
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
            if let Parsed::Answer(_) = parse_response(&msg, id, qname) {
                answers += 1;
            }
            let _ = read_name(&msg, rng.below(msg.len() + 2));
            let _ = parse_caa(&msg);
        }
        // The mutations leave many answers intact enough to parse.
        assert!(answers > 100, "{answers}");
    }
}
