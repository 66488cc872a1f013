//! Fuzz-style property tests for every parser that reads server (or feed) output: thousands of
//! random and mutated inputs (random bytes, truncations and bit flips of the real captures,
//! JSON nested 100 000 deep, huge strings, invalid UTF-8) must never panic, never hang and
//! keep their outputs within bounds. Deterministic: a fixed-seed xorshift generator, so a
//! failure replays exactly.

use serde_json::Value;
use std::path::{Path, PathBuf};
use storage_security::checks::cookies::{self, SetCookie, parse_cookie_date};
use storage_security::checks::headers::{parse_csp, parse_hsts};
use storage_security::checks::tls_extra;
use storage_security::knowledge::ProductFamily;
use storage_security::knowledge::advisories::parse_document;
use storage_security::knowledge::update::parse_release_feed;
use storage_security::net::HttpsObservation;
use storage_security::net::http::{Endpoint, FetchError, Response, Scheme};
use storage_security::net::legacy_tls::{Reading, TLS1_0, TLS1_1, client_hello, inspect};
use storage_security::net::tls::{Handshake, TrustedBy, leaf_days_left};
use storage_security::probe::Measurements;
use storage_security::probe::status::{
    StatusReport, capabilities_version, parse_capabilities, parse_status, printable,
};

/// xorshift64*: tiny, deterministic, good enough to shake parsers.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    fn bytes(&mut self, max_len: usize) -> Vec<u8> {
        let len = self.below(max_len + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }

    /// Random bytes biased towards the characters parsers split on.
    fn structured(&mut self, max_len: usize, alphabet: &[u8]) -> Vec<u8> {
        let len = self.below(max_len + 1);
        (0..len)
            .map(|_| {
                if self.chance(4) {
                    self.next() as u8
                } else {
                    alphabet[self.below(alphabet.len())]
                }
            })
            .collect()
    }

    /// One to four mutations of `input`: truncation, bit flips, inserted, duplicated or
    /// deleted spans, and bytes replaced by ones that matter to the format.
    fn mutate(&mut self, input: &[u8], alphabet: &[u8]) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..1 + self.below(4) {
            match self.below(6) {
                0 => out.truncate(self.below(out.len() + 1)),
                1 => {
                    for _ in 0..1 + self.below(8) {
                        if !out.is_empty() {
                            let at = self.below(out.len());
                            out[at] ^= 1 << self.below(8);
                        }
                    }
                }
                2 => {
                    let at = self.below(out.len() + 1);
                    let extra = self.bytes(16);
                    out.splice(at..at, extra);
                }
                3 => {
                    if !out.is_empty() {
                        let from = self.below(out.len());
                        let to = (from + self.below(64)).min(out.len());
                        let span = out[from..to].to_vec();
                        let at = self.below(out.len() + 1);
                        out.splice(at..at, span);
                    }
                }
                4 => {
                    if !out.is_empty() {
                        let from = self.below(out.len());
                        let to = (from + self.below(32)).min(out.len());
                        out.drain(from..to);
                    }
                }
                _ => {
                    for _ in 0..1 + self.below(4) {
                        if !out.is_empty() {
                            let at = self.below(out.len());
                            out[at] = alphabet[self.below(alphabet.len())];
                        }
                    }
                }
            }
        }
        out
    }
}

const JSON_ALPHABET: &[u8] = b"{}[]\",:\\0123456789.-eE truefalsn\n\xff\xc3";
const HEADER_ALPHABET: &[u8] = b";=, \t\"'-_:/abcdefxyzSsHhMm0123456789\r\n\x00\x7f\xe2\x80\xae";

fn fixture(rel: &str) -> Vec<u8> {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Splits a `curl -i` capture into header lines and body.
fn capture(rel: &str) -> (Vec<(String, String)>, Vec<u8>) {
    let raw = fixture(rel);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, p + 4))
        .or_else(|| {
            raw.windows(2)
                .position(|w| w == b"\n\n")
                .map(|p| (p, p + 2))
        })
        .expect("a head and a body");
    let head = String::from_utf8_lossy(&raw[..split.0]).into_owned();
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    (headers, raw[split.1..].to_vec())
}

fn body(rel: &str) -> Vec<u8> {
    capture(rel).1
}

fn header_values(rel: &str, name: &str) -> Vec<String> {
    capture(rel)
        .0
        .into_iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
        .collect()
}

/// Inputs every parser must survive besides its own corpus.
fn extremes() -> Vec<Vec<u8>> {
    let mut all = vec![
        Vec::new(),
        b"[".repeat(100_000),
        b"{\"a\":".repeat(100_000),
        [b"[".repeat(50_000), b"]".repeat(50_000)].concat(),
        [&b"\""[..], &b"x".repeat(1 << 18), &b"\""[..]].concat(),
        [&b"{\"ocs\":{\"data\":{\"capabilities\":{\"core\":{\"status\":{\"productversion\":\""[..],
            &"9".repeat(1 << 18).into_bytes(), &b"\"}}}}}}"[..]]
        .concat(),
        vec![0xff; 4096],
        vec![0; 4096],
        b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc".repeat(1000),
        "\u{202e}\u{1b}[31m\r\n\t".repeat(1000).into_bytes(),
        b";".repeat(100_000),
        b"=".repeat(100_000),
        b"a=".repeat(50_000),
        b"1".repeat(100_000),
    ];
    all.push(format!("[{}]", "{\"tag_name\":\"v1.2.3\"},".repeat(2000) + "{}").into_bytes());
    all
}

fn assert_printable_bound(text: &str) {
    assert!(
        text.chars().count() <= 120,
        "{} chars",
        text.chars().count()
    );
    assert!(!text.chars().any(char::is_control), "{text:?}");
    assert_eq!(text.trim(), text);
}

/// Runs `check` on the extremes, random bytes, structured noise and mutations of `corpus`.
fn shake(
    seed: u64,
    rounds: usize,
    corpus: &[Vec<u8>],
    alphabet: &[u8],
    mut check: impl FnMut(&[u8]),
) {
    let mut rng = Rng::new(seed);
    for input in extremes() {
        check(&input);
    }
    for input in corpus {
        check(input);
        for cut in 0..input.len().min(300) {
            check(&input[..cut]);
        }
    }
    for round in 0..rounds {
        let input = match round % 4 {
            0 => rng.bytes(512),
            1 => rng.structured(512, alphabet),
            _ if corpus.is_empty() => rng.bytes(64),
            _ => {
                let base = &corpus[rng.below(corpus.len())];
                rng.mutate(base, alphabet)
            }
        };
        check(&input);
    }
}

#[test]
fn printable_is_bounded_for_any_text() {
    let corpus = vec![
        body("opencloud-4.0.0/status.php.txt"),
        fixture("opencloud-4.0.0/root-GET.txt"),
    ];
    shake(0x5eed_0001, 4000, &corpus, HEADER_ALPHABET, |input| {
        assert_printable_bound(&printable(&String::from_utf8_lossy(input)));
    });
}

#[test]
fn status_documents_never_panic_and_stay_printable() {
    let corpus = vec![
        body("opencloud-4.0.0/status.php.txt"),
        body("ocis-7.0.0/status.php.txt"),
        body("opencloud-4.0.0/root-GET.txt"),
    ];
    let real = parse_status(&corpus[0]).expect("the real status document parses");
    assert_eq!(real.product_version.as_deref(), Some("4.0.0"));
    shake(0x5eed_0002, 4000, &corpus, JSON_ALPHABET, |input| {
        if let Some(report) = parse_status(input) {
            let fields = [
                &report.product_name,
                &report.product,
                &report.product_version,
                &report.legacy_version,
                &report.edition,
            ];
            for text in fields.into_iter().flatten() {
                assert_printable_bound(text);
            }
        }
    });
}

#[test]
fn capabilities_never_panic() {
    let corpus = vec![
        body("opencloud-4.0.0/ocs-v1-capabilities.txt"),
        body("ocis-7.0.0/ocs-v1-capabilities-unauth.txt"),
    ];
    let real = parse_capabilities(&corpus[0]).expect("the real capabilities parse");
    assert_eq!(capabilities_version(&real).as_deref(), Some("4.0.0"));
    shake(0x5eed_0003, 1500, &corpus, JSON_ALPHABET, |input| {
        if let Some(document) = parse_capabilities(input) {
            assert!(document.is_object());
            if let Some(version) = capabilities_version(&document) {
                assert!(!version.is_empty());
                assert_eq!(version.trim(), version);
            }
        }
        // Any JSON value at all, not only capability documents.
        if let Ok(value) = serde_json::from_slice::<Value>(input) {
            let _ = capabilities_version(&value);
        }
    });
}

#[test]
fn security_headers_never_panic() {
    let mut corpus: Vec<Vec<u8>> = Vec::new();
    for name in ["strict-transport-security", "content-security-policy"] {
        corpus.extend(
            header_values("opencloud-4.0.0/root-GET.txt", name)
                .into_iter()
                .map(String::into_bytes),
        );
    }
    assert_eq!(corpus.len(), 2, "the real HSTS and CSP headers");
    assert_eq!(
        parse_hsts(&String::from_utf8_lossy(&corpus[0])),
        (Some(315_360_000), false, true)
    );
    shake(0x5eed_0004, 4000, &corpus, HEADER_ALPHABET, |input| {
        let text = String::from_utf8_lossy(input);
        let (max_age, _, _) = parse_hsts(&text);
        if !text.to_ascii_lowercase().contains("max-age=") {
            assert_eq!(max_age, None);
        }
        let directives = parse_csp(&text);
        assert!(directives.len() <= text.matches(';').count() + 1);
        for (name, sources) in &directives {
            assert!(!name.is_empty() && !name.contains(char::is_whitespace));
            assert_eq!(*name, name.to_ascii_lowercase());
            assert!(sources.iter().all(|s| !s.is_empty()));
        }
    });
}

#[test]
fn release_feeds_never_panic() {
    let feed = br#"[
        {"tag_name":"v4.0.8","draft":false,"prerelease":false},
        {"tag_name":"v7.2.4","draft":false,"prerelease":false},
        {"tag_name":"v8.1.0-rc.1","draft":false,"prerelease":true},
        {"tag_name":"v8.0.0","draft":true,"prerelease":false},
        {"tag_name":"not-a-version"},
        {"tag_name":"v8.1.0"}
    ]"#
    .to_vec();
    let versions = parse_release_feed(&feed).expect("the feed parses");
    assert_eq!(versions.len(), 3);
    shake(0x5eed_0005, 3000, &[feed], JSON_ALPHABET, |input| {
        if let Ok(versions) = parse_release_feed(input) {
            assert!(!versions.is_empty());
            assert!(versions.windows(2).all(|w| w[0] < w[1]), "sorted, unique");
            assert!(versions.iter().all(|v| v.pre.is_empty()));
        }
    });
}

#[test]
fn advisory_documents_never_panic() {
    let corpus: Vec<Vec<u8>> = [
        "advisories/OSV-GO-2026-4444.json",
        "advisories/OSV-GO-2026-4447.json",
        "advisories/github-global-GHSA-vf5j-r2hw-2hrw.json",
        "advisories/github-repository-advisories.json",
    ]
    .iter()
    .map(|p| fixture(p))
    .collect();
    let parsed = parse_document(
        &String::from_utf8_lossy(&corpus[2]),
        ProductFamily::OpenCloud,
    )
    .expect("the real advisory parses");
    assert!(!parsed.is_empty());
    shake(0x5eed_0006, 1500, &corpus, JSON_ALPHABET, |input| {
        let text = String::from_utf8_lossy(input);
        for family in [ProductFamily::OpenCloud, ProductFamily::InfiniteScale] {
            if let Ok(advisories) = parse_document(&text, family) {
                assert!(advisories.len() <= input.len());
            }
        }
    });
}

/// The DER certificate of the real instance, from the `openssl s_client` capture.
fn real_certificate() -> Vec<u8> {
    let text = String::from_utf8(fixture("opencloud-4.0.0/tls/s_client-default.txt")).unwrap();
    let start = text.find("-----BEGIN CERTIFICATE-----").unwrap() + 27;
    let end = text.find("-----END CERTIFICATE-----").unwrap();
    base64_decode(&text[start..end])
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let Some(v) = ALPHABET.iter().position(|a| *a == c) else {
            continue;
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

#[test]
fn certificates_never_panic() {
    let der = real_certificate();
    let now = jiff::Timestamp::from_second(1_795_316_813).unwrap();
    let days =
        leaf_days_left(std::slice::from_ref(&der), now).expect("the real certificate parses");
    assert_eq!(days, 364);
    assert_eq!(leaf_days_left(&[], now), None);
    let mut rng = Rng::new(0x5eed_0007);
    for extreme in extremes() {
        let _ = leaf_days_left(&[extreme], now);
    }
    for cut in 0..der.len() {
        let _ = leaf_days_left(&[der[..cut].to_vec()], now);
    }
    for round in 0..3000 {
        let leaf = if round % 3 == 0 {
            rng.bytes(1024)
        } else {
            rng.mutate(
                &der,
                &[0x30, 0x80, 0x81, 0x82, 0x83, 0x84, 0xff, 0x00, 0x17, 0x18],
            )
        };
        let when = jiff::Timestamp::from_second(rng.next() as i64 % 253_402_300_799).unwrap_or(now);
        let _ = leaf_days_left(&[leaf, rng.bytes(64)], when);
    }
}

#[test]
fn set_cookie_headers_never_panic() {
    let mut corpus: Vec<Vec<u8>> = header_values(
        "opencloud-4.0.0/login-idp-logon-dennis-demo.txt",
        "set-cookie",
    )
    .into_iter()
    .map(String::into_bytes)
    .collect();
    assert_eq!(corpus.len(), 3, "the real sign-in cookies");
    corpus.push(b"__Host-id=1; Secure; Path=/; Max-Age=-1; Expires=Thursday, 01-Jan-70 00:00:00 GMT; Domain=x".to_vec());
    let real = SetCookie::parse(&String::from_utf8_lossy(&corpus[0])).unwrap();
    assert_eq!(real.name, "__Secure-KKT");
    shake(0x5eed_0008, 5000, &corpus, HEADER_ALPHABET, |input| {
        let text = String::from_utf8_lossy(input);
        if let Some(cookie) = SetCookie::parse(&text) {
            assert!(!cookie.name.contains(';') && !cookie.name.contains('='));
            assert!(!cookie.value.contains(';'));
            assert!(!(cookie.name.is_empty() && cookie.value.is_empty()));
            for (name, value) in &cookie.attributes {
                assert!(!name.is_empty() && !name.contains(';') && !value.contains(';'));
                assert_eq!(*name, name.to_ascii_lowercase());
            }
            let _ = (cookie.secure(), cookie.http_only(), cookie.same_site());
            let _ = (
                cookie.max_age(),
                cookie.expires(),
                cookie.prefix_violation(),
            );
            let _ = cookie.is_deletion(None);
            let _ = cookie.is_deletion(Some((2026, 11, 22, 3, 0, 0)));
        }
        if let Some((year, month, day, hour, minute, second)) = parse_cookie_date(&text) {
            assert!((1601..=9999).contains(&year));
            assert!((1..=12).contains(&month) && (1..=31).contains(&day));
            assert!(hour <= 23 && minute <= 59 && second <= 59);
        }
    });
}

fn measurements() -> Measurements {
    let endpoint = Endpoint {
        scheme: Scheme::Https,
        url_host: "cloud.example.org".into(),
        port: 443,
        base_path: String::new(),
    };
    // Nothing observed but the transport, as the unit tests' `Measurements::empty` builds it.
    Measurements {
        endpoint,
        https: HttpsObservation::Verified(Handshake {
            protocol: "TLSv1.3".into(),
            cipher_suite: "TLS13_AES_128_GCM_SHA256".into(),
            chain: Vec::new(),
            trust: Ok(TrustedBy::PublicRoots),
        }),
        status: StatusReport::default(),
        capabilities: None,
        root: None,
        http: Default::default(),
        extra_checks: true,
        debug_ports: None,
        legacy_tls: None,
        plain_http: None,
        dns: None,
        nodes: None,
    }
}

/// The cookie and plain-HTTP checks on hostile answers: no panic, one-line bounded details.
#[test]
fn hostile_answers_give_bounded_findings() {
    let mut rng = Rng::new(0x5eed_0009);
    let seeds = header_values(
        "opencloud-4.0.0/login-idp-logon-dennis-demo.txt",
        "set-cookie",
    );
    let go_answer = b"Client sent an HTTP request to an HTTPS server.\n".to_vec();
    for round in 0..1500 {
        let mut m = measurements();
        let mut headers = Vec::new();
        for _ in 0..rng.below(6) {
            let value = if rng.chance(2) {
                let seed = seeds[rng.below(seeds.len())].as_bytes();
                rng.mutate(seed, HEADER_ALPHABET)
            } else {
                rng.structured(200, HEADER_ALPHABET)
            };
            headers.push((
                "Set-Cookie".to_string(),
                String::from_utf8_lossy(&value).into_owned(),
            ));
        }
        if rng.chance(2) {
            let location = rng.structured(300, b"https://:/?#%\r\n\x00");
            headers.push((
                "Location".into(),
                String::from_utf8_lossy(&location).into_owned(),
            ));
        }
        if rng.chance(3) {
            headers.push((
                "Date".into(),
                String::from_utf8_lossy(&rng.structured(40, HEADER_ALPHABET)).into_owned(),
            ));
        }
        let answer = Response {
            status: [200, 301, 302, 307, 308, 400, 404, 500][rng.below(8)],
            headers,
            body: if rng.chance(2) {
                rng.mutate(&go_answer, HEADER_ALPHABET)
            } else {
                rng.bytes(256)
            },
            truncated: false,
            digest: None,
        };
        m.http.insert(format!("probe{round}"), Ok(answer.clone()));
        m.plain_http = Some(if rng.chance(5) {
            Err(FetchError::Transient(
                String::from_utf8_lossy(&rng.bytes(300)).into_owned(),
            ))
        } else {
            Ok(answer)
        });
        let findings: Vec<_> = cookies::evaluate(&m)
            .into_iter()
            .chain(tls_extra::evaluate(&m))
            .collect();
        for f in findings {
            assert!(f.detail.chars().count() <= 600, "{}: {}", f.id, f.detail);
            assert!(
                !f.detail.chars().any(char::is_control),
                "{}: {:?}",
                f.id,
                f.detail
            );
        }
    }
}

/// What the first bytes of a server's answer to a ClientHello for `requested` decide:
/// `Some(true)` for a ServerHello with that version, `Some(false)` for a fatal alert or a
/// ServerHello with another version, `None` when incomplete or not a TLS answer.
fn classify_record(bytes: &[u8], requested: u16) -> Option<bool> {
    match inspect(bytes, requested) {
        Reading::Picked(version) => Some(version == requested),
        Reading::Refused => Some(false),
        Reading::NeedMore | Reading::Garbage(_) => None,
    }
}

#[test]
fn legacy_tls_records_never_panic_and_decide_on_prefixes() {
    // A real-looking ServerHello for TLS 1.0, and the alert Go sends (protocol_version).
    let mut server_hello = vec![22, 3, 1, 0, 42, 2, 0, 0, 38, 3, 1];
    server_hello.extend_from_slice(&[9; 32]);
    server_hello.extend_from_slice(&[0, 0xc0, 0x13, 0]);
    let alert = vec![21, 3, 3, 0, 2, 2, 70];
    let corpus = vec![
        server_hello.clone(),
        alert.clone(),
        [&[21, 3, 1, 0, 2, 1, 112][..], &server_hello].concat(),
        client_hello("cloud.example.org", TLS1_0),
    ];
    assert_eq!(classify_record(&server_hello, TLS1_0), Some(true));
    assert_eq!(classify_record(&server_hello, TLS1_1), Some(false));
    assert_eq!(classify_record(&alert, TLS1_1), Some(false));
    // Our own hello is not an answer.
    assert_eq!(classify_record(&corpus[3], TLS1_0), None);
    shake(
        0x5eed_000a,
        6000,
        &corpus,
        &[21, 22, 23, 2, 3, 1, 0, 70, 40, 0xff],
        |input| {
            for requested in [TLS1_0, TLS1_1] {
                let whole = classify_record(input, requested);
                // A decision on a prefix is final: more bytes never change it.
                for cut in [5usize, 6, 7, 9, 11, 16, 64] {
                    if cut < input.len()
                        && let Some(early) = classify_record(&input[..cut], requested)
                    {
                        assert_eq!(whole, Some(early), "{input:?}");
                    }
                }
                if !matches!(input.first(), Some(21 | 22)) {
                    assert_eq!(whole, None);
                }
            }
        },
    );
}

#[test]
fn client_hellos_are_well_formed_for_any_host() {
    let mut rng = Rng::new(0x5eed_000b);
    for round in 0..2000 {
        let host = if round % 2 == 0 {
            String::from_utf8_lossy(&rng.structured(300, b"abc.-_:019[]% ")).into_owned()
        } else {
            String::from_utf8_lossy(&rng.bytes(80)).into_owned()
        };
        for version in [TLS1_0, TLS1_1] {
            let record = client_hello(&host, version);
            assert_eq!(&record[..3], &[22, 3, 1]);
            let len = usize::from(u16::from_be_bytes([record[3], record[4]]));
            assert_eq!(len, record.len() - 5);
            assert!(len <= 16_384);
            let hs_len = (usize::from(record[6]) << 16)
                | (usize::from(record[7]) << 8)
                | usize::from(record[8]);
            assert_eq!(hs_len, record.len() - 9);
            assert_eq!(u16::from_be_bytes([record[9], record[10]]), version);
        }
    }
}
