//! Whether a server still accepts TLS 1.0 or 1.1. rustls cannot speak them, so this sends a
//! hand-built ClientHello pinned to the old versions and reads the server's first record: a
//! ServerHello names the version the server picked; an alert, a ServerHello for a newer
//! version or a closed connection means the old versions are refused. The handshake is never
//! completed, so no old cipher is ever used for data.
//!
//! One hello offers both (TLS 1.1 at most): a server picks the highest version it shares with
//! the client, so a refusal refuses both and a TLS 1.0 answer refuses 1.1. Only a server that
//! picks TLS 1.1 needs a second hello, offering TLS 1.0 alone, on a connection of its own.

use super::tls::{Route, TlsFailure};
use std::io::{ErrorKind, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// `legacy_version` of TLS 1.0.
pub const TLS1_0: u16 = 0x0301;
/// `legacy_version` of TLS 1.1.
pub const TLS1_1: u16 = 0x0302;

/// The most the reader takes from a server before giving up on finding a decision.
pub const MAX_READ_BYTES: usize = 16 * 1024;

/// Record content types.
const HANDSHAKE: u8 = 22;
const ALERT: u8 = 21;
/// Handshake message types.
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;
/// The largest record a TLS 1.0-1.2 peer may send (2^14 plus the expansion allowance).
const MAX_RECORD: usize = (1 << 14) + 2048;

/// Cipher suites a TLS 1.0/1.1 client of the last decade offered (no TLS 1.2-only AEADs).
pub const LEGACY_CIPHER_SUITES: &[u16] = &[
    0xC014, // TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA
    0xC013, // TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA
    0xC00A, // TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA
    0xC009, // TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA
    0x0039, // TLS_DHE_RSA_WITH_AES_256_CBC_SHA
    0x0033, // TLS_DHE_RSA_WITH_AES_128_CBC_SHA
    0x0035, // TLS_RSA_WITH_AES_256_CBC_SHA
    0x002F, // TLS_RSA_WITH_AES_128_CBC_SHA
    0xC012, // TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA
    0xC008, // TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA
    0x0016, // TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA
    0x000A, // TLS_RSA_WITH_3DES_EDE_CBC_SHA
    0x0005, // TLS_RSA_WITH_RC4_128_SHA
];

/// The outcome for one protocol version: `Some(true)` accepted, `Some(false)` refused,
/// `None` could not be decided (connection failed, garbage).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LegacyTls {
    pub tls1_0: Option<bool>,
    pub tls1_1: Option<bool>,
    /// Why a version could not be decided.
    pub error: Option<String>,
}

/// Connections the probe holds open at once: one, and for a server that refuses the old
/// versions (a healthy one) one in all.
pub const CONNECTIONS: usize = 1;

/// Probes TLS 1.0 and TLS 1.1 on `host:port` over `route` (the operator's proxy, or a guarded
/// scan's pinned addresses), within `timeout`.
pub fn probe(host: &str, port: u16, route: &Route, timeout: Duration) -> LegacyTls {
    let deadline = Instant::now() + timeout;
    let (tls1_0, tls1_1) = match probe_version(host, port, route, TLS1_1, deadline) {
        Err(why) => {
            return LegacyTls {
                error: Some(why),
                ..LegacyTls::default()
            };
        }
        Ok(Some(TLS1_1)) => match probe_version(host, port, route, TLS1_0, deadline) {
            Ok(picked) => (Ok(picked == Some(TLS1_0)), Ok(true)),
            Err(why) => (Err(why), Ok(true)),
        },
        Ok(picked) => (Ok(picked == Some(TLS1_0)), Ok(false)),
    };
    let errors: Vec<String> = [("TLS 1.0", &tls1_0), ("TLS 1.1", &tls1_1)]
        .iter()
        .filter_map(|(name, result)| Some(format!("{name}: {}", result.as_ref().err()?)))
        .collect();
    LegacyTls {
        tls1_0: tls1_0.ok(),
        tls1_1: tls1_1.ok(),
        error: (!errors.is_empty()).then(|| errors.join("; ")),
    }
}

/// One connection, one ClientHello offering `version` at most: the version the server picked,
/// or `None` when it refused.
fn probe_version(
    host: &str,
    port: u16,
    route: &Route,
    version: u16,
    deadline: Instant,
) -> Result<Option<u16>, String> {
    let mut stream = route
        .dial(host, port, deadline)
        .map_err(TlsFailure::message)?;
    exchange(&mut stream, &client_hello(host, version), version, deadline)
}

/// Sends the hello and reads until the first records decide, the connection closes, the cap
/// is reached or the deadline passes.
fn exchange(
    stream: &mut TcpStream,
    hello: &[u8],
    version: u16,
    deadline: Instant,
) -> Result<Option<u16>, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err("sending the ClientHello timed out".into());
    }
    let _ = stream.set_write_timeout(Some(left));
    if let Err(e) = stream.write_all(hello).and_then(|()| stream.flush()) {
        return match e.kind() {
            // The server hung up on the hello: it does not talk this version.
            ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe => {
                Ok(None)
            }
            ErrorKind::TimedOut | ErrorKind::WouldBlock => {
                Err("sending the ClientHello timed out".into())
            }
            _ => Err(format!("sending the ClientHello: {e}")),
        };
    }
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match inspect(&received, version) {
            Reading::Picked(picked) => return Ok(Some(picked)),
            Reading::Refused => return Ok(None),
            Reading::Garbage(why) => return Err(format!("the server answered {why}")),
            Reading::NeedMore => {}
        }
        if received.len() >= MAX_READ_BYTES {
            return Err(format!(
                "no ServerHello or alert within the first {} KiB",
                MAX_READ_BYTES / 1024
            ));
        }
        let room = (MAX_READ_BYTES - received.len()).min(chunk.len());
        match super::read_before(stream, &mut chunk[..room], Some(deadline)) {
            // Closing on the hello is how some servers refuse an old version.
            Ok(0) if received.is_empty() => return Ok(None),
            Ok(0) => {
                return Err("the server closed the connection in the middle of a record".into());
            }
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(e) => match e.kind() {
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
                    if received.is_empty() =>
                {
                    return Ok(None);
                }
                ErrorKind::TimedOut | ErrorKind::WouldBlock => {
                    return Err("waiting for the server's answer timed out".into());
                }
                ErrorKind::Interrupted => {}
                _ => return Err(format!("reading the server's answer: {e}")),
            },
        }
    }
}

/// Builds one TLS record holding a ClientHello whose `legacy_version` is `version`
/// (`0x0301` TLS 1.0, `0x0302` TLS 1.1), with [`LEGACY_CIPHER_SUITES`], SNI when `host` is a
/// DNS name, and the extensions clients of that era sent (supported groups, EC point
/// formats, renegotiation info, extended master secret). No `supported_versions` extension,
/// so a TLS 1.3 server cannot upgrade the connection.
pub fn client_hello(host: &str, version: u16) -> Vec<u8> {
    let mut random = [0u8; 32];
    fill_random(&mut random);

    let mut extensions = Vec::new();
    if let Some(name) = sni_name(host) {
        // server_name: a list of one name of type host_name (0).
        let entry = [&[0][..], &prefixed(name.as_bytes())].concat();
        push_extension(&mut extensions, 0x0000, &prefixed(&entry));
    }
    // supported_groups: x25519, secp256r1, secp384r1, secp521r1.
    let groups = be_u16s(&[0x001D, 0x0017, 0x0018, 0x0019]);
    push_extension(&mut extensions, 0x000A, &prefixed(&groups));
    // ec_point_formats: uncompressed.
    push_extension(&mut extensions, 0x000B, &[1, 0]);
    // renegotiation_info: empty (initial handshake).
    push_extension(&mut extensions, 0xFF01, &[0]);
    // extended_master_secret.
    push_extension(&mut extensions, 0x0017, &[]);

    let hello = [
        &version.to_be_bytes()[..],
        &random,
        &[0], // no session id
        &prefixed(&be_u16s(LEGACY_CIPHER_SUITES)),
        &[1, 0], // compression methods: null only
        &prefixed(&extensions),
    ]
    .concat();
    let length = (hello.len() as u32).to_be_bytes();
    let handshake = [&[CLIENT_HELLO][..], &length[1..], &hello].concat();
    // The record layer says TLS 1.0, as clients do for their first flight.
    [
        &[HANDSHAKE][..],
        &TLS1_0.to_be_bytes(),
        &prefixed(&handshake),
    ]
    .concat()
}

/// The name sent as SNI: only DNS names (no addresses), without a trailing dot.
fn sni_name(host: &str) -> Option<String> {
    use rustls::pki_types::ServerName;
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    match ServerName::try_from(name.as_str()) {
        Ok(ServerName::DnsName(_)) if name.len() <= 253 => Some(name),
        _ => None,
    }
}

fn fill_random(buf: &mut [u8]) {
    let provider = rustls::crypto::ring::default_provider();
    if provider.secure_random.fill(buf).is_err() {
        // The random only has to differ between hellos; nothing is ever encrypted with it.
        use sha2::{Digest, Sha256};
        let seed = format!("{:?}-{}", Instant::now(), std::process::id());
        let digest = Sha256::digest(seed.as_bytes());
        for (b, d) in buf.iter_mut().zip(digest.iter().cycle()) {
            *b = *d;
        }
    }
}

/// `bytes` after their length (two bytes, big-endian).
fn prefixed(bytes: &[u8]) -> Vec<u8> {
    [&(bytes.len() as u16).to_be_bytes()[..], bytes].concat()
}

fn be_u16s(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

fn push_extension(out: &mut Vec<u8>, kind: u16, body: &[u8]) {
    out.extend_from_slice(&kind.to_be_bytes());
    out.extend_from_slice(&prefixed(body));
}

/// What the bytes read so far say.
#[derive(Debug, PartialEq, Eq)]
pub enum Reading {
    /// A ServerHello for this old version (at most the one offered).
    Picked(u16),
    Refused,
    /// Nothing decided yet: the first record or the ServerHello header is incomplete.
    NeedMore,
    /// Not TLS, or TLS that makes no sense as an answer to a ClientHello.
    Garbage(&'static str),
}

/// Reads the first bytes a server sent in answer to a ClientHello for `requested`. Warning-level
/// alerts before the ServerHello (e.g. `unrecognized_name`) are skipped. Pure and bounded: it
/// looks at no more than the records it needs.
pub fn inspect(bytes: &[u8], requested: u16) -> Reading {
    // Handshake bytes gathered across records (a ServerHello may be fragmented).
    let mut handshake: Vec<u8> = Vec::new();
    let mut rest = bytes;
    loop {
        if handshake.len() >= 6 {
            return server_hello(&handshake, requested);
        }
        if rest.len() < 5 {
            return Reading::NeedMore;
        }
        let content_type = rest[0];
        if content_type != HANDSHAKE && content_type != ALERT {
            return Reading::Garbage("with something that is not a TLS handshake record");
        }
        if rest[1] != 3 || rest[2] > 4 {
            return Reading::Garbage("with a record of an unknown protocol version");
        }
        let length = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        if length == 0 || length > MAX_RECORD {
            return Reading::Garbage("with a record of an impossible length");
        }
        let payload = &rest[5..];
        match content_type {
            ALERT => {
                // Alerts are two bytes; the level decides even before the record is complete.
                let Some(&level) = payload.first() else {
                    return Reading::NeedMore;
                };
                match level {
                    2 => return Reading::Refused,
                    1 => {
                        if !handshake.is_empty() {
                            return Reading::Garbage("with an alert inside the ServerHello");
                        }
                        if payload.len() < length {
                            return Reading::NeedMore;
                        }
                        rest = &payload[length..];
                    }
                    _ => return Reading::Garbage("with an alert of an unknown level"),
                }
            }
            _ => {
                let available = payload.len().min(length);
                let wanted = 6 - handshake.len();
                handshake.extend_from_slice(&payload[..available.min(wanted)]);
                if available < length {
                    // The record is incomplete; decide from what there is.
                    return if handshake.len() >= 6 {
                        server_hello(&handshake, requested)
                    } else {
                        Reading::NeedMore
                    };
                }
                rest = &payload[length..];
            }
        }
    }
}

/// Reads the first six handshake bytes: message type, length, server_version. A version
/// newer than `offered` means the server ignored the offer: refused, as before.
fn server_hello(header: &[u8], offered: u16) -> Reading {
    if header[0] != SERVER_HELLO {
        return Reading::Garbage("with a handshake message that is not a ServerHello");
    }
    let length =
        (usize::from(header[1]) << 16) | (usize::from(header[2]) << 8) | usize::from(header[3]);
    // version + random + session id length + suite + compression, at least.
    if length < 38 {
        return Reading::Garbage("with a ServerHello too short to be one");
    }
    let version = u16::from_be_bytes([header[4], header[5]]);
    if version >> 8 != 3 {
        Reading::Garbage("with a ServerHello of an unknown protocol version")
    } else if version <= offered && version >= TLS1_0 {
        Reading::Picked(version)
    } else {
        Reading::Refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// `legacy_version`, cipher suites and extensions (type, body) of a ClientHello.
    type Hello = (u16, Vec<u16>, Vec<(u16, Vec<u8>)>);

    /// Parses the record back, checking every length field against the bytes that follow.
    fn parse_hello(record: &[u8]) -> Hello {
        assert_eq!(record[0], HANDSHAKE);
        assert_eq!(&record[1..3], &[3, 1]);
        let record_len = usize::from(u16::from_be_bytes([record[3], record[4]]));
        assert_eq!(record_len, record.len() - 5);
        let hs = &record[5..];
        assert_eq!(hs[0], CLIENT_HELLO);
        let hs_len = (usize::from(hs[1]) << 16) | (usize::from(hs[2]) << 8) | usize::from(hs[3]);
        assert_eq!(hs_len, hs.len() - 4);
        let body = &hs[4..];
        let version = u16::from_be_bytes([body[0], body[1]]);
        let mut at = 2 + 32;
        let sid = usize::from(body[at]);
        at += 1 + sid;
        let suites_len = usize::from(u16::from_be_bytes([body[at], body[at + 1]]));
        assert_eq!(suites_len % 2, 0);
        at += 2;
        let suites = body[at..at + suites_len]
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        at += suites_len;
        let compression_len = usize::from(body[at]);
        assert_eq!(&body[at + 1..at + 1 + compression_len], &[0]);
        at += 1 + compression_len;
        let ext_len = usize::from(u16::from_be_bytes([body[at], body[at + 1]]));
        at += 2;
        assert_eq!(ext_len, body.len() - at, "extensions fill the rest exactly");
        let mut extensions = Vec::new();
        let mut ext = &body[at..];
        while !ext.is_empty() {
            let kind = u16::from_be_bytes([ext[0], ext[1]]);
            let len = usize::from(u16::from_be_bytes([ext[2], ext[3]]));
            extensions.push((kind, ext[4..4 + len].to_vec()));
            ext = &ext[4 + len..];
        }
        (version, suites, extensions)
    }

    #[test]
    fn client_hello_is_a_well_formed_record() {
        for version in [TLS1_0, TLS1_1] {
            let record = client_hello("cloud.example.org", version);
            let (v, suites, extensions) = parse_hello(&record);
            assert_eq!(v, version);
            for wanted in [0xC013, 0xC009, 0x002F, 0x000A] {
                assert!(suites.contains(&wanted), "{wanted:04x}");
            }
            let kinds: Vec<u16> = extensions.iter().map(|(k, _)| *k).collect();
            assert_eq!(kinds, [0x0000, 0x000A, 0x000B, 0xFF01, 0x0017]);
            let sni = &extensions[0].1;
            assert_eq!(
                usize::from(u16::from_be_bytes([sni[0], sni[1]])),
                sni.len() - 2
            );
            assert_eq!(sni[2], 0);
            assert_eq!(&sni[5..], b"cloud.example.org");
            assert!(!kinds.contains(&0x002B), "no supported_versions");
        }
    }

    #[test]
    fn client_hello_sends_no_sni_for_addresses() {
        for host in ["127.0.0.1", "::1", "not a name!"] {
            let (_, _, extensions) = parse_hello(&client_hello(host, TLS1_0));
            assert!(extensions.iter().all(|(k, _)| *k != 0x0000), "{host}");
        }
        let (_, _, extensions) = parse_hello(&client_hello("Example.COM.", TLS1_1));
        assert_eq!(&extensions[0].1[5..], b"example.com");
    }

    fn server_hello_record(version: u16) -> Vec<u8> {
        let mut body = version.to_be_bytes().to_vec();
        body.extend_from_slice(&[7u8; 32]);
        body.push(0);
        body.extend_from_slice(&[0xC0, 0x13, 0]);
        let mut hs = vec![SERVER_HELLO, 0, 0, body.len() as u8];
        hs.extend_from_slice(&body);
        let mut record = vec![HANDSHAKE, 3, 1, 0, hs.len() as u8];
        record.extend_from_slice(&hs);
        record
    }

    /// `Some(true)` for a ServerHello with `requested`, `Some(false)` for a refusal, `None`
    /// when undecided.
    fn classify_record(bytes: &[u8], requested: u16) -> Option<bool> {
        match inspect(bytes, requested) {
            Reading::Picked(version) => Some(version == requested),
            Reading::Refused => Some(false),
            Reading::NeedMore | Reading::Garbage(_) => None,
        }
    }

    #[test]
    fn records_classify() {
        let hello = server_hello_record(TLS1_0);
        assert_eq!(classify_record(&hello, TLS1_0), Some(true));
        assert_eq!(classify_record(&hello, TLS1_1), Some(false));
        assert_eq!(
            classify_record(&server_hello_record(0x0303), TLS1_1),
            Some(false)
        );
        // The decision needs only the ServerHello header.
        assert_eq!(classify_record(&hello[..11], TLS1_0), Some(true));
        assert_eq!(classify_record(&hello[..10], TLS1_0), None);
        assert_eq!(
            classify_record(&[21, 3, 3, 0, 2, 2, 70], TLS1_0),
            Some(false)
        );
        assert_eq!(
            classify_record(&[21, 3, 1, 0, 2, 2, 40], TLS1_1),
            Some(false)
        );
        // A warning before the ServerHello is skipped.
        let mut warned = vec![21, 3, 1, 0, 2, 1, 112];
        warned.extend_from_slice(&hello);
        assert_eq!(classify_record(&warned, TLS1_0), Some(true));
        assert_eq!(inspect(&warned[..7], TLS1_0), Reading::NeedMore);
        // A ServerHello split over two records.
        let mut split = vec![HANDSHAKE, 3, 1, 0, 3];
        split.extend_from_slice(&hello[5..8]);
        split.extend_from_slice(&[HANDSHAKE, 3, 1, 0, (hello.len() - 8) as u8]);
        split.extend_from_slice(&hello[8..]);
        assert_eq!(classify_record(&split, TLS1_0), Some(true));
        for garbage in [
            &b"HTTP/1.1 400 Bad Request\r\n"[..],
            &[23, 3, 1, 0, 5, 1, 2, 3, 4, 5],
            &[22, 3, 1, 0, 0],
            &[22, 2, 0, 0, 4, 2, 0, 0, 0],
            &[21, 3, 1, 0, 2, 9, 9],
        ] {
            assert_eq!(classify_record(garbage, TLS1_0), None);
            assert!(matches!(inspect(garbage, TLS1_0), Reading::Garbage(_)));
        }
        assert_eq!(inspect(&[], TLS1_0), Reading::NeedMore);
    }

    /// A fake server for `connections` connections: reads each hello, then does `answer`
    /// with the version the hello offered.
    fn fake_server(
        connections: usize,
        answer: fn(&mut TcpStream, u16),
    ) -> (u16, std::thread::JoinHandle<Vec<Vec<u8>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let mut hellos = Vec::new();
            for _ in 0..connections {
                let (mut stream, _) = listener.accept().unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut head = [0u8; 5];
                stream.read_exact(&mut head).unwrap();
                let len = usize::from(u16::from_be_bytes([head[3], head[4]]));
                let mut body = vec![0u8; len];
                stream.read_exact(&mut body).unwrap();
                let mut hello = head.to_vec();
                hello.extend_from_slice(&body);
                answer(&mut stream, parse_hello(&hello).0);
                hellos.push(hello);
            }
            hellos
        });
        (port, handle)
    }

    fn offered(hellos: &[Vec<u8>]) -> Vec<u16> {
        hellos.iter().map(|h| parse_hello(h).0).collect()
    }

    #[test]
    fn a_server_answering_a_tls_1_0_server_hello_accepts_1_0_only() {
        // One hello settles both: TLS 1.1 offered, TLS 1.0 picked.
        let (port, server) = fake_server(1, |s, _| {
            let _ = s.write_all(&server_hello_record(TLS1_0));
        });
        let result = probe("127.0.0.1", port, &Route::Direct, Duration::from_secs(5));
        assert_eq!(result.tls1_0, Some(true), "{result:?}");
        assert_eq!(result.tls1_1, Some(false), "{result:?}");
        assert_eq!(result.error, None);
        assert_eq!(offered(&server.join().unwrap()), [TLS1_1]);
    }

    #[test]
    fn a_server_picking_tls_1_1_is_asked_about_1_0_alone() {
        let (port, server) = fake_server(2, |s, offered| {
            let _ = s.write_all(&server_hello_record(offered));
        });
        let result = probe("127.0.0.1", port, &Route::Direct, Duration::from_secs(5));
        assert_eq!(
            (result.tls1_0, result.tls1_1, result.error),
            (Some(true), Some(true), None)
        );
        assert_eq!(offered(&server.join().unwrap()), [TLS1_1, TLS1_0]);
    }

    #[test]
    fn a_server_accepting_1_1_only_refuses_the_1_0_hello() {
        let (port, server) = fake_server(2, |s, offered| {
            if offered == TLS1_1 {
                let _ = s.write_all(&server_hello_record(TLS1_1));
            } else {
                let _ = s.write_all(&[21, 3, 1, 0, 2, 2, 70]);
            }
        });
        let result = probe("127.0.0.1", port, &Route::Direct, Duration::from_secs(5));
        assert_eq!((result.tls1_0, result.tls1_1), (Some(false), Some(true)));
        assert_eq!(offered(&server.join().unwrap()), [TLS1_1, TLS1_0]);
    }

    #[test]
    fn a_protocol_version_alert_refuses_both_on_one_connection() {
        let (port, server) = fake_server(1, |s, _| {
            let _ = s.write_all(&[21, 3, 3, 0, 2, 2, 70]);
        });
        let result = probe("localhost", port, &Route::Direct, Duration::from_secs(5));
        assert_eq!(
            result,
            LegacyTls {
                tls1_0: Some(false),
                tls1_1: Some(false),
                error: None
            }
        );
        assert_eq!(offered(&server.join().unwrap()), [TLS1_1]);
    }

    #[test]
    fn a_newer_version_than_offered_refuses() {
        let (port, server) = fake_server(1, |s, _| {
            let _ = s.write_all(&server_hello_record(0x0303));
        });
        let result = probe("127.0.0.1", port, &Route::Direct, Duration::from_secs(5));
        assert_eq!((result.tls1_0, result.tls1_1), (Some(false), Some(false)));
        server.join().unwrap();
    }

    #[test]
    fn closing_the_connection_refuses() {
        let (port, server) = fake_server(1, |s, _| {
            let _ = s.shutdown(std::net::Shutdown::Both);
        });
        let result = probe("127.0.0.1", port, &Route::Direct, Duration::from_secs(5));
        assert_eq!((result.tls1_0, result.tls1_1), (Some(false), Some(false)));
        server.join().unwrap();
    }

    #[test]
    fn silence_is_undecided_within_the_timeout() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            // Keep the connection open and silent until the test is done.
            let held = listener.accept().unwrap();
            let _ = rx.recv();
            drop(held);
        });
        let started = Instant::now();
        let result = probe(
            "127.0.0.1",
            port,
            &Route::Direct,
            Duration::from_millis(200),
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        tx.send(()).unwrap();
        server.join().unwrap();
        assert_eq!((result.tls1_0, result.tls1_1), (None, None));
        let error = result.error.unwrap();
        assert!(error.contains("timed out"), "{error}");
    }

    #[test]
    fn garbage_is_undecided() {
        let (port, server) = fake_server(1, |s, _| {
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        });
        let result = probe("127.0.0.1", port, &Route::Direct, Duration::from_secs(5));
        assert_eq!((result.tls1_0, result.tls1_1), (None, None));
        assert!(result.error.unwrap().contains("not a TLS"));
        server.join().unwrap();
    }

    #[test]
    fn a_closed_port_is_undecided() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let result = probe("127.0.0.1", port, &Route::Direct, Duration::from_secs(2));
        assert_eq!((result.tls1_0, result.tls1_1), (None, None));
        assert!(result.error.is_some());
    }
}
