//! DNS: the CAA records a zone publishes for the scanned name (RFC 8659), and whether the
//! name's zone is signed with DNSSEC (RFC 9364), by a minimal UDP client (with the TCP retry a
//! truncated answer asks for), so no resolver library is needed.
//!
//! The relevant CAA record set is that of the name itself or of its closest ancestor that has
//! one: the lookup climbs label by label up to (not including) the root. A recursive server
//! follows aliases, so a CAA record of any owner in an answer counts (the records after a
//! CNAME chain are those of its target).
//!
//! DNSSEC is judged at the apex of the zone that holds the name: its SOA is asked for the name
//! and, climbing the same way, its ancestors, until one is the apex (or an answer's authority
//! section names it). Then the apex's DNSKEY records (the zone is signed) and the DS records its
//! parent zone publishes for it (the delegation is secure) are asked, with the EDNS0 DO bit, so
//! a validating resolver says with the AD bit whether it authenticated them.
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
    /// Not asked: no answer could matter (a [`special_use`] name, or a certificate no publicly
    /// trusted CA issued).
    NotAsked,
}

/// A DNSKEY record at a zone apex (RFC 4034 section 2), without its public key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dnskey {
    /// 256 for a zone-signing key, 257 with the secure entry point bit (a key-signing key).
    pub flags: u16,
    pub algorithm: u8,
    /// The key tag a DS record names it by (RFC 4034 appendix B).
    pub key_tag: u16,
}

/// A DS record the parent zone publishes for a delegated zone (RFC 4034 section 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DsRecord {
    pub key_tag: u16,
    pub algorithm: u8,
    pub digest_type: u8,
}

/// What DNS says about the DNSSEC of the zone holding a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnssecZone {
    /// The apex of the zone that holds the name.
    pub apex: String,
    /// The DNSKEY records at the apex: none when the zone is not signed.
    pub dnskeys: Vec<Dnskey>,
    /// The DS records the parent zone publishes for the apex: none without a secure delegation.
    pub ds: Vec<DsRecord>,
    /// The server set AD (authenticated data) on both the DNSKEY and the DS answer: a
    /// validating resolver checked their signatures up to its trust anchor.
    pub authenticated: bool,
    /// The server offers recursion (RA): a resolver. An authoritative server never sets AD, so
    /// its answers cannot say whether the zone validates.
    pub resolver: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DnssecLookup {
    /// The zone was found and asked for its keys and its delegation.
    Zone(DnssecZone),
    /// No answer could decide it (no server, timeout, SERVFAIL, malformed answer, a server
    /// that cannot see the parent zone).
    Failed(String),
    /// Not asked: a [`special_use`] name has no zone in public DNS.
    NotAsked,
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
/// The UDP payload size a DNSSEC query advertises (EDNS0): the DNS Flag Day 2020 value, small
/// enough never to be fragmented; a larger answer comes truncated and is asked again over TCP.
const EDNS_UDP_PAYLOAD: u16 = 1232;

const TYPE_CNAME: u16 = 5;
const TYPE_SOA: u16 = 6;
const TYPE_OPT: u16 = 41;
const TYPE_DS: u16 = 43;
const TYPE_DNSKEY: u16 = 48;
const TYPE_CAA: u16 = 257;
const CLASS_IN: u16 = 1;
const FLAG_QR: u16 = 0x8000;
const FLAG_TC: u16 = 0x0200;
const FLAG_RD: u16 = 0x0100;
const FLAG_RA: u16 = 0x0080;
const FLAG_AD: u16 = 0x0020;
/// The DO bit (DNSSEC OK) of the EDNS0 OPT record's flags (RFC 3225).
const EDNS_DO: u16 = 0x8000;
/// The protocol field every DNSKEY record carries (RFC 4034 section 2.1.2).
const DNSKEY_PROTOCOL: u8 = 3;

const RCODE_NOERROR: u16 = 0;
const RCODE_NXDOMAIN: u16 = 3;
const RCODE_BADVERS: u16 = 16;

/// Why a lookup had no server to ask.
const NO_SERVER: &str = "no DNS server known (set scanner.dns_server)";

/// Special-use domain names (the IANA registry of RFC 6761 and its successors) that public DNS
/// does not serve, by the suffix that makes them so and where that is written down. A name
/// under one never goes to a nameserver: a question about it would leak the name to the
/// system's resolver and its upstreams, and every answer would be meaningless. (The registry's
/// `example.com`, `.net` and `.org` are left out: they are real, signed zones public DNS serves.)
const SPECIAL_USE: &[(&str, &str)] = &[
    // The machine itself: resolved from the hosts file, never by DNS.
    ("localhost", "RFC 6761"),
    // Multicast DNS on the local link.
    ("local", "RFC 6762"),
    // Home networks' own names.
    ("home.arpa", "RFC 8375"),
    // Testing, documentation and names meant to fail.
    ("test", "RFC 6761"),
    ("example", "RFC 6761"),
    ("invalid", "RFC 6761"),
    // Tor onion services and names of other resolution systems.
    ("onion", "RFC 7686"),
    ("alt", "RFC 9476"),
    // Private networks' names (ICANN board resolution 2024.07.29.06).
    ("internal", "ICANN"),
];

/// What makes `name` a name public DNS cannot know, or `None` when it can know it: a name
/// under a [`SPECIAL_USE`] suffix (`a special-use name (.localhost, RFC 6761)`) or a single
/// label (`a single-label name`), which no public zone delegates to anyone. Address literals
/// and names that are not DNS names are `None`: they are never looked up at all.
pub fn special_use(name: &str) -> Option<String> {
    let name = normalize(name)?;
    let listed = SPECIAL_USE
        .iter()
        .find(|(suffix, _)| is_within(&name, suffix))
        .map(|(suffix, source)| format!("a special-use name (.{suffix}, {source})"));
    listed.or_else(|| (!name.contains('.')).then(|| "a single-label name".into()))
}

/// Whether `name` is `localhost` or a name below it: the machine's own loopback names (RFC
/// 6761 section 6.3), which the system resolver answers for `localhost` itself.
pub fn is_localhost(name: &str) -> bool {
    normalize(name).is_some_and(|n| is_within(&n, "localhost"))
}

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

/// The relevant CAA record set of `name`, asking `server`, all within `timeout`. A
/// [`special_use`] name is not asked about.
pub fn lookup_caa(name: &str, server: Option<SocketAddr>, timeout: Duration) -> CaaLookup {
    let Some(name) = normalize(name) else {
        return CaaLookup::Failed("not a DNS name".into());
    };
    if special_use(&name).is_some() {
        return CaaLookup::NotAsked;
    }
    let Some(server) = server else {
        return CaaLookup::Failed(NO_SERVER.into());
    };
    caa_of(&name, server, Instant::now() + timeout).unwrap_or_else(CaaLookup::Failed)
}

fn caa_of(name: &str, server: SocketAddr, deadline: Instant) -> Result<CaaLookup, String> {
    let labels: Vec<&str> = name.split('.').collect();
    for (asked, start) in (0..labels.len()).enumerate() {
        let candidate = labels[start..].join(".");
        if asked == MAX_QUERIES {
            return Err(format!(
                "gave up after {MAX_QUERIES} queries before reaching {candidate}"
            ));
        }
        let question = Question::new(&candidate, TYPE_CAA, false);
        let answer = query(&question, server, deadline)?;
        match answer.rcode {
            RCODE_NOERROR => {
                // Of any owner: a CNAME chain ends at its target.
                let records = answer
                    .records(TYPE_CAA, None, parse_caa)
                    .map_err(|why| malformed(server, &question, &why))?;
                if !records.is_empty() {
                    return Ok(CaaLookup::Records {
                        owner: candidate,
                        records,
                    });
                }
            }
            RCODE_NXDOMAIN => {}
            rcode => return Err(refused(server, &question, rcode)),
        }
    }
    Ok(CaaLookup::NoRecords)
}

/// Whether the zone holding `name` is signed and securely delegated, asking `server`, all
/// within `timeout`: its apex, then the apex's DNSKEY and DS records. A [`special_use`] name
/// is not asked about.
pub fn lookup_dnssec(name: &str, server: Option<SocketAddr>, timeout: Duration) -> DnssecLookup {
    let Some(name) = normalize(name) else {
        return DnssecLookup::Failed("not a DNS name".into());
    };
    if special_use(&name).is_some() {
        return DnssecLookup::NotAsked;
    }
    let Some(server) = server else {
        return DnssecLookup::Failed(NO_SERVER.into());
    };
    dnssec_of(&name, server, Instant::now() + timeout)
        .map_or_else(DnssecLookup::Failed, DnssecLookup::Zone)
}

fn dnssec_of(name: &str, server: SocketAddr, deadline: Instant) -> Result<DnssecZone, String> {
    let apex = zone_apex(name, server, deadline)?;
    let (keys, dnskeys) = records_of(&apex, TYPE_DNSKEY, parse_dnskey, server, deadline)?;
    let (delegation, ds) = records_of(&apex, TYPE_DS, parse_ds, server, deadline)?;
    // DS records live in the parent zone (RFC 4035 section 3.1.4.1). A server that holds the
    // zone but not its parent answers the DS question from the zone itself, with the zone's
    // own SOA: that "no DS" says nothing about the parent.
    if ds.is_empty() && delegation.authority_soa(&apex) == Some(apex.as_str()) {
        return Err(format!(
            "the DNS server {server} answered the DS query for {apex} from the zone {apex} \
             itself, not from its parent: it does not serve the parent zone (set \
             scanner.dns_server to a recursive resolver)"
        ));
    }
    Ok(DnssecZone {
        authenticated: keys.flags & FLAG_AD != 0 && delegation.flags & FLAG_AD != 0,
        resolver: keys.flags & FLAG_RA != 0,
        apex,
        dnskeys,
        ds,
    })
}

/// The `rtype` records of `owner`, asked with DNSSEC, each read by `parse`; and the answer
/// they came in (its flags and authority section). Anything but NOERROR fails.
fn records_of<T>(
    owner: &str,
    rtype: u16,
    parse: fn(&[u8]) -> Option<T>,
    server: SocketAddr,
    deadline: Instant,
) -> Result<(Answer, Vec<T>), String> {
    let question = Question::new(owner, rtype, true);
    let answer = query(&question, server, deadline)?;
    if answer.rcode != RCODE_NOERROR {
        return Err(refused(server, &question, answer.rcode));
    }
    let records = answer
        .records(rtype, Some(owner), parse)
        .map_err(|why| malformed(server, &question, &why))?;
    Ok((answer, records))
}

/// The apex of the zone holding `name`: the first of the name and its ancestors whose SOA is
/// in an answer, or the owner of the SOA an answer without records puts in its authority
/// section (a NODATA or NXDOMAIN answer names the zone it comes from, RFC 2308).
fn zone_apex(name: &str, server: SocketAddr, deadline: Instant) -> Result<String, String> {
    // Two queries stay for the DNSKEY and the DS records.
    let budget = MAX_QUERIES - 2;
    let labels: Vec<&str> = name.split('.').collect();
    for (asked, start) in (0..labels.len()).enumerate() {
        let candidate = labels[start..].join(".");
        if asked == budget {
            return Err(format!(
                "gave up after {budget} queries before finding the zone of {name} (at {candidate})"
            ));
        }
        let question = Question::new(&candidate, TYPE_SOA, true);
        let answer = query(&question, server, deadline)?;
        if answer.rcode != RCODE_NOERROR && answer.rcode != RCODE_NXDOMAIN {
            return Err(refused(server, &question, answer.rcode));
        }
        if answer
            .answers
            .iter()
            .any(|r| r.rtype == TYPE_SOA && r.owner == candidate)
        {
            return Ok(candidate);
        }
        // An alias (CNAME) at the candidate: its records come from the target's zone, so
        // the authority section says nothing about the candidate's. Climb instead.
        let aliased = answer
            .answers
            .iter()
            .any(|r| r.owner == candidate && r.rtype == TYPE_CNAME);
        if !aliased && let Some(owner) = answer.authority_soa(&candidate) {
            if owner.is_empty() {
                return Err(format!(
                    "the DNS server {server} answered for {candidate} from the root zone: \
                     {name} is in no zone below the root"
                ));
            }
            return Ok(owner.to_string());
        }
    }
    Err(format!(
        "the DNS server {server} named no zone for {name}: no SOA record on it or its parents"
    ))
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

fn rcode_name(rcode: u16) -> String {
    // The names of RFC 1035 (codes 0 to 5) and RFC 6891.
    const NAMES: [&str; 6] = [
        "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
    ];
    match NAMES.get(usize::from(rcode)) {
        Some(name) => name.to_string(),
        None if rcode == RCODE_BADVERS => "BADVERS".into(),
        None => format!("RCODE {rcode}"),
    }
}

fn type_name(rtype: u16) -> &'static str {
    match rtype {
        TYPE_SOA => "SOA",
        TYPE_DS => "DS",
        TYPE_DNSKEY => "DNSKEY",
        TYPE_CAA => "CAA",
        _ => "other",
    }
}

/// The DNSSEC algorithm's mnemonic (IANA "DNS Security Algorithm Numbers").
pub fn algorithm_name(algorithm: u8) -> String {
    match algorithm {
        1 => "RSAMD5".into(),
        3 => "DSA".into(),
        5 => "RSASHA1".into(),
        6 => "DSA-NSEC3-SHA1".into(),
        7 => "RSASHA1-NSEC3-SHA1".into(),
        8 => "RSASHA256".into(),
        10 => "RSASHA512".into(),
        12 => "ECC-GOST".into(),
        13 => "ECDSAP256SHA256".into(),
        14 => "ECDSAP384SHA384".into(),
        15 => "ED25519".into(),
        16 => "ED448".into(),
        other => format!("algorithm {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Messages

/// What is asked: a name (already normalized), a type, and whether with the DO bit.
#[derive(Clone, Copy, Debug)]
struct Question<'a> {
    name: &'a str,
    qtype: u16,
    /// Sends an EDNS0 OPT record with DO set: the answer carries the DNSSEC records and a
    /// validating resolver sets AD on what it authenticated.
    dnssec: bool,
}

impl<'a> Question<'a> {
    fn new(name: &'a str, qtype: u16, dnssec: bool) -> Question<'a> {
        Question {
            name,
            qtype,
            dnssec,
        }
    }
}

/// One record of the IN class: owner (lower-cased, without the trailing dot), type, data.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    owner: String,
    rtype: u16,
    rdata: Vec<u8>,
}

/// What a matching answer said.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Answer {
    /// With the extended bits of the OPT record, when there is one (RFC 6891).
    rcode: u16,
    /// The header flags (AD, RA, ...).
    flags: u16,
    answers: Vec<Record>,
    authority: Vec<Record>,
}

impl Answer {
    /// The `rtype` records of the answer section (of `owner`, or of any owner), each read by
    /// `parse`; one that does not parse fails them all.
    fn records<T>(
        &self,
        rtype: u16,
        owner: Option<&str>,
        parse: fn(&[u8]) -> Option<T>,
    ) -> Result<Vec<T>, String> {
        self.answers
            .iter()
            .filter(|r| r.rtype == rtype && owner.is_none_or(|o| r.owner == o))
            .map(|r| parse(&r.rdata))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("a {} record does not parse", type_name(rtype)))
    }

    /// The owner of an SOA record in the authority section that is `name` or one of its
    /// ancestors (the root is `""`); an SOA of an unrelated zone is ignored.
    fn authority_soa(&self, name: &str) -> Option<&str> {
        self.authority
            .iter()
            .filter(|r| r.rtype == TYPE_SOA)
            .map(|r| r.owner.as_str())
            .find(|owner| is_within(name, owner))
    }
}

/// Whether `name` is `zone` or below it, label-wise (`""` is the root, above every name).
fn is_within(name: &str, zone: &str) -> bool {
    zone.is_empty()
        || name == zone
        || name
            .strip_suffix(zone)
            .is_some_and(|head| head.ends_with('.'))
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
    Malformed(String),
}

/// A 16-bit query id from a cheap source: the clock, the process id and a counter.
fn query_id() -> u16 {
    static COUNTER: AtomicU16 = AtomicU16::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() ^ (d.as_secs() as u32));
    let mixed = nanos ^ std::process::id().rotate_left(16);
    (mixed as u16) ^ ((mixed >> 16) as u16) ^ COUNTER.fetch_add(0x9e37, Ordering::Relaxed)
}

/// A query for `question`, recursion desired; with an OPT record carrying DO when it asks for
/// DNSSEC.
fn encode_query(id: u16, question: &Question) -> Vec<u8> {
    let mut out = Vec::with_capacity(29 + question.name.len());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&FLAG_RD.to_be_bytes());
    // QDCOUNT 1, ANCOUNT 0, NSCOUNT 0, ARCOUNT 1 with the OPT record.
    out.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, u8::from(question.dnssec)]);
    for label in question.name.split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out.extend_from_slice(&question.qtype.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    if question.dnssec {
        // OPT: the root as owner, the UDP payload size as class, then extended RCODE 0,
        // version 0 and the flags with DO as TTL, and no options.
        out.push(0);
        out.extend_from_slice(&TYPE_OPT.to_be_bytes());
        out.extend_from_slice(&EDNS_UDP_PAYLOAD.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&EDNS_DO.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
    }
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

/// The records of one section: those of the IN class, plus the extended RCODE bits of an OPT
/// record (the only record of another class read), and the position after the section.
struct Section {
    records: Vec<Record>,
    extended_rcode: Option<u8>,
    end: usize,
}

/// Reads `count` records from `pos`; `name` says which section in an error.
fn read_section(msg: &[u8], mut pos: usize, count: u16, name: &str) -> Result<Section, String> {
    let mut records = Vec::new();
    let mut extended_rcode = None;
    for _ in 0..count {
        let Some((owner, after_name)) = read_name(msg, pos) else {
            return Err(format!("an {name} record's name does not parse"));
        };
        let (Some(rtype), Some(class), Some(ttl_high), Some(rdlength)) = (
            u16_at(msg, after_name),
            u16_at(msg, after_name + 2),
            u16_at(msg, after_name + 4),
            u16_at(msg, after_name + 8),
        ) else {
            return Err(format!("an {name} record is cut short"));
        };
        let start = after_name + 10;
        let Some(rdata) = msg.get(start..start + rdlength as usize) else {
            return Err(format!("an {name} record's data is cut short"));
        };
        if rtype == TYPE_OPT && owner.is_empty() {
            extended_rcode = Some((ttl_high >> 8) as u8);
        } else if class == CLASS_IN {
            records.push(Record {
                owner,
                rtype,
                rdata: rdata.to_vec(),
            });
        }
        pos = start + rdlength as usize;
    }
    Ok(Section {
        records,
        extended_rcode,
        end: pos,
    })
}

/// Reads an answer to the query `id` for `question`.
fn parse_response(msg: &[u8], id: u16, question: &Question) -> Parsed {
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
    if name != question.name
        || u16_at(msg, pos) != Some(question.qtype)
        || u16_at(msg, pos + 2) != Some(CLASS_IN)
    {
        return Parsed::Unrelated;
    }
    if flags & FLAG_TC != 0 {
        return Parsed::Truncated;
    }
    let count = |at: usize| u16_at(msg, at).unwrap_or(0);
    let sections = read_section(msg, pos + 4, count(6), "answer").and_then(|answers| {
        let authority = read_section(msg, answers.end, count(8), "authority")?;
        let additional = read_section(msg, authority.end, count(10), "additional")?;
        Ok((answers, authority, additional))
    });
    let (answers, authority, additional) = match sections {
        Ok(sections) => sections,
        Err(why) => return Parsed::Malformed(why),
    };
    let extended = u16::from(additional.extended_rcode.unwrap_or(0));
    Parsed::Answer(Answer {
        rcode: (extended << 4) | (flags & 0xF),
        flags,
        answers: answers.records,
        authority: authority.records,
    })
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

/// DNSKEY RDATA: flags, protocol (always 3), algorithm, public key (not empty).
fn parse_dnskey(rdata: &[u8]) -> Option<Dnskey> {
    let &[high, low, DNSKEY_PROTOCOL, algorithm, _, ..] = rdata else {
        return None;
    };
    Some(Dnskey {
        flags: u16::from_be_bytes([high, low]),
        algorithm,
        key_tag: key_tag(rdata),
    })
}

/// The key tag of a DNSKEY's RDATA (RFC 4034 appendix B): a ones'-complement-like sum of its
/// 16-bit words; for algorithm 1 (RSA/MD5) the key's third-to-last and second-to-last bytes.
fn key_tag(rdata: &[u8]) -> u16 {
    if rdata.get(3) == Some(&1) {
        let len = rdata.len();
        return match (len.checked_sub(3), len.checked_sub(2)) {
            (Some(a), Some(b)) if a >= 4 => u16::from_be_bytes([rdata[a], rdata[b]]),
            _ => 0,
        };
    }
    let mut sum: u32 = rdata
        .iter()
        .enumerate()
        .map(|(i, &byte)| u32::from(byte) << if i % 2 == 0 { 8 } else { 0 })
        .sum();
    sum += (sum >> 16) & 0xFFFF;
    (sum & 0xFFFF) as u16
}

/// DS RDATA: key tag, algorithm, digest type, digest (not empty).
fn parse_ds(rdata: &[u8]) -> Option<DsRecord> {
    let &[high, low, algorithm, digest_type, _, ..] = rdata else {
        return None;
    };
    Some(DsRecord {
        key_tag: u16::from_be_bytes([high, low]),
        algorithm,
        digest_type,
    })
}

// ---------------------------------------------------------------------------------------------
// Transport

/// Asks `server` for `question` over UDP, and over TCP when the UDP answer is truncated.
fn query(question: &Question, server: SocketAddr, deadline: Instant) -> Result<Answer, String> {
    let id = query_id();
    let packet = encode_query(id, question);
    match query_udp(&packet, id, question, server, deadline)? {
        Parsed::Answer(answer) => Ok(answer),
        Parsed::Truncated => match query_tcp(&packet, id, question, server, deadline)? {
            Parsed::Answer(answer) => Ok(answer),
            Parsed::Malformed(why) => Err(malformed(server, question, &why)),
            Parsed::Truncated | Parsed::Unrelated => Err(format!(
                "the DNS server {server} answered the {} query for {} over TCP with \
                 something else",
                type_name(question.qtype),
                question.name
            )),
        },
        Parsed::Malformed(why) => Err(malformed(server, question, &why)),
        // `query_udp` keeps waiting on unrelated datagrams until the deadline.
        Parsed::Unrelated => Err(timed_out(server, question)),
    }
}

/// How messages name what was asked: `the CAA records of example.com`.
impl std::fmt::Display for Question<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the {} records of {}", type_name(self.qtype), self.name)
    }
}

fn malformed(server: SocketAddr, question: &Question, why: &str) -> String {
    format!("malformed DNS answer from {server} for {question}: {why}")
}

fn timed_out(server: SocketAddr, question: &Question) -> String {
    format!("no answer from the DNS server {server} for {question} in time")
}

fn refused(server: SocketAddr, question: &Question, rcode: u16) -> String {
    let rcode = rcode_name(rcode);
    format!("the DNS server {server} answered {rcode} for {question}")
}

fn remaining(deadline: Instant) -> Option<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}

fn query_udp(
    packet: &[u8],
    id: u16,
    question: &Question,
    server: SocketAddr,
    deadline: Instant,
) -> Result<Parsed, String> {
    let local: SocketAddr = match server {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let local_error = |e: std::io::Error| format!("DNS over UDP: {e}");
    let server_error = |e: std::io::Error| format!("DNS server {server}: {e}");
    let socket = UdpSocket::bind(local).map_err(local_error)?;
    socket.connect(server).map_err(server_error)?;
    let mut buf = vec![0u8; MAX_UDP_ANSWER + 1];
    let mut resend_at = Instant::now();
    loop {
        let now = Instant::now();
        if now >= resend_at {
            socket.send(packet).map_err(server_error)?;
            resend_at = now + RESEND_AFTER;
        }
        let Some(left) = remaining(deadline) else {
            return Err(timed_out(server, question));
        };
        let wait = left.min(
            resend_at
                .saturating_duration_since(now)
                .max(Duration::from_millis(1)),
        );
        socket.set_read_timeout(Some(wait)).map_err(local_error)?;
        match socket.recv(&mut buf) {
            Ok(n) if n > MAX_UDP_ANSWER => continue,
            Ok(n) => match parse_response(&buf[..n], id, question) {
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
            Err(e) => return Err(server_error(e)),
        }
    }
}

fn query_tcp(
    packet: &[u8],
    id: u16,
    question: &Question,
    server: SocketAddr,
    deadline: Instant,
) -> Result<Parsed, String> {
    let io_error = |e: std::io::Error| {
        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
            timed_out(server, question)
        } else {
            format!("DNS over TCP to {server}: {e}")
        }
    };
    let left = remaining(deadline).ok_or_else(|| timed_out(server, question))?;
    let mut stream = TcpStream::connect_timeout(&server, left).map_err(io_error)?;
    let framed = [&(packet.len() as u16).to_be_bytes()[..], packet].concat();
    let left = remaining(deadline).ok_or_else(|| timed_out(server, question))?;
    stream.set_write_timeout(Some(left)).map_err(io_error)?;
    stream.write_all(&framed).map_err(io_error)?;
    let mut prefix = [0u8; 2];
    read_full(&mut stream, &mut prefix, deadline).map_err(io_error)?;
    let mut answer = vec![0u8; u16::from_be_bytes(prefix) as usize];
    read_full(&mut stream, &mut answer, deadline).map_err(io_error)?;
    Ok(parse_response(&answer, id, question))
}

/// Fills `buf` from the stream before the deadline.
fn read_full(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        // `read_before` waits out interruptions and timeouts itself, up to the deadline.
        match super::read_before(stream, &mut buf[filled..], Some(deadline))? {
            0 => return Err(ErrorKind::UnexpectedEof.into()),
            n => filled += n,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
