//! The network guard: which addresses the program may contact on someone else's say-so, and
//! the pins that hold a connection to the addresses that were checked.
//!
//! Two faces use it. Webhook delivery (`notify`) resolves the receiver's name before every
//! attempt, picks an allowed address ([`choose`]) and connects to exactly that one. A scan
//! submitted to a server (the public scan API) resolves the target once ([`guarded`]), refuses
//! it unless every address is public unicast, and scans only those addresses: the [`Pins`] go
//! into the scan (`Scanner::with_pins`), and every connection of the scan (the TLS inspection,
//! HTTPS and plain HTTP, debug ports, the legacy-TLS handshake, `--all-addresses`) takes its
//! addresses from them, never from a second lookup. A DNS answer that changes between the check
//! and the connection (rebinding) therefore gains nothing.
//!
//! What is refused (without the operator's opt-out): every address that is not global unicast,
//! and every IPv6 address that leads to an IPv4 address which is not (see [`blocked`]).
//! NAT64 of a public IPv4 address (`64:ff9b::8.8.8.8`) is allowed: it is what DNS64 answers
//! for public names on IPv6-only networks, and the translator reaches the public address it
//! embeds. The local-use NAT64 prefix `64:ff9b:1::/48` is refused whatever it embeds: it is
//! local by definition and where the IPv4 address sits depends on the local prefix length.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

/// Why an address is refused as a destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// `0.0.0.0`, `::`: connecting to it reaches the local host.
    Unspecified,
    /// `0.0.0.0/8` other than `0.0.0.0`: "this network".
    ThisNetwork,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`.
    Private,
    /// `169.254.0.0/16`, `fe80::/10` (cloud metadata services live here).
    LinkLocal,
    /// `100.64.0.0/10`: shared address space of carrier-grade NAT.
    SharedAddressSpace,
    /// `fc00::/7`.
    UniqueLocal,
    /// `fec0::/10`: deprecated site-local, private in practice.
    SiteLocal,
    /// `224.0.0.0/4`, `ff00::/8`: not a receiver.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `240.0.0.0/4`, and IPv6 outside `2000::/3` that no other class names (unassigned by
    /// the IETF, e.g. `4000::/3` with the SRv6 SIDs `5f00::/16`).
    Reserved,
    /// `192.0.0.0/24`, `2001::/23` (besides Teredo, benchmarking and ORCHID): IETF protocol
    /// assignments, not hosts.
    ProtocolAssignment,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// `192.88.99.0/24`: the deprecated 6to4 relay anycast.
    RelayAnycast,
    /// `100::/64`: discard-only.
    Discard,
    /// `2001:10::/28`, `2001:20::/28`: ORCHID identifiers, not routable addresses.
    Orchid,
    /// `64:ff9b:1::/48`: local-use NAT64.
    LocalNat64,
}

impl Blocked {
    pub fn describe(self) -> &'static str {
        match self {
            Blocked::Unspecified => "an unspecified address",
            Blocked::ThisNetwork => "a \"this network\" address (0.0.0.0/8)",
            Blocked::Loopback => "a loopback address",
            Blocked::Private => "a private address",
            Blocked::LinkLocal => "a link-local address",
            Blocked::SharedAddressSpace => "a carrier-grade NAT address (100.64.0.0/10)",
            Blocked::UniqueLocal => "a unique-local address (fc00::/7)",
            Blocked::SiteLocal => "a site-local address (fec0::/10)",
            Blocked::Multicast => "a multicast address",
            Blocked::Broadcast => "the broadcast address",
            Blocked::Reserved => "a reserved address",
            Blocked::ProtocolAssignment => "an IETF protocol assignment address",
            Blocked::Documentation => "a documentation address",
            Blocked::Benchmarking => "a benchmarking address",
            Blocked::RelayAnycast => "a 6to4 relay anycast address (192.88.99.0/24)",
            Blocked::Discard => "a discard-only address (100::/64)",
            Blocked::Orchid => "an ORCHID identifier, not a routable address",
            Blocked::LocalNat64 => "a local-use NAT64 address (64:ff9b:1::/48)",
        }
    }
}

/// Why `ip` is refused as a destination, or `None` when it is public unicast. IPv6 addresses
/// that carry an IPv4 address (mapped, translated, compatible, NAT64, 6to4, Teredo) are judged
/// by the IPv4 address they lead to.
pub fn blocked(ip: IpAddr) -> Option<Blocked> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4),
        IpAddr::V6(v6) => blocked_v6(v6),
    }
}

fn blocked_v4(ip: Ipv4Addr) -> Option<Blocked> {
    let [a, b, c, _] = ip.octets();
    if ip.is_unspecified() {
        Some(Blocked::Unspecified)
    } else if a == 0 {
        Some(Blocked::ThisNetwork)
    } else if a == 127 {
        Some(Blocked::Loopback)
    } else if a == 10 || (a == 172 && (16..=31).contains(&b)) || (a == 192 && b == 168) {
        Some(Blocked::Private)
    } else if a == 169 && b == 254 {
        Some(Blocked::LinkLocal)
    } else if a == 100 && (64..=127).contains(&b) {
        Some(Blocked::SharedAddressSpace)
    } else if (a, b, c) == (192, 0, 0) {
        Some(Blocked::ProtocolAssignment)
    } else if matches!((a, b, c), (192, 0, 2) | (198, 51, 100) | (203, 0, 113)) {
        Some(Blocked::Documentation)
    } else if a == 198 && (b == 18 || b == 19) {
        Some(Blocked::Benchmarking)
    } else if (a, b, c) == (192, 88, 99) {
        Some(Blocked::RelayAnycast)
    } else if ip.is_broadcast() {
        Some(Blocked::Broadcast)
    } else if ip.is_multicast() {
        Some(Blocked::Multicast)
    } else if a >= 240 {
        Some(Blocked::Reserved)
    } else {
        None
    }
}

fn blocked_v6(ip: Ipv6Addr) -> Option<Blocked> {
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some(Blocked::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Blocked::Loopback);
    }
    if let Some((_, v4)) = embedded_v4(ip) {
        return blocked_v4(v4);
    }
    if s[..3] == [0x64, 0xff9b, 1] {
        return Some(Blocked::LocalNat64);
    }
    if s[..4] == [0x100, 0, 0, 0] {
        return Some(Blocked::Discard);
    }
    match s[0] {
        x if x & 0xfe00 == 0xfc00 => return Some(Blocked::UniqueLocal),
        x if x & 0xffc0 == 0xfe80 => return Some(Blocked::LinkLocal),
        x if x & 0xffc0 == 0xfec0 => return Some(Blocked::SiteLocal),
        x if x & 0xff00 == 0xff00 => return Some(Blocked::Multicast),
        // Global unicast is 2000::/3; the rest is unassigned (or named above).
        x if x & 0xe000 != 0x2000 => return Some(Blocked::Reserved),
        _ => {}
    }
    if s[..2] == [0x2001, 0xdb8] || s[0] == 0x3fff && s[1] & 0xf000 == 0 {
        return Some(Blocked::Documentation);
    }
    if s[0] == 0x2001 && s[1] < 0x200 {
        // 2001::/23, IETF protocol assignments (Teredo was judged by its client above).
        return Some(if s[1] == 2 && s[2] == 0 {
            Blocked::Benchmarking
        } else if s[1] & 0xfff0 == 0x10 || s[1] & 0xfff0 == 0x20 {
            Blocked::Orchid
        } else {
            Blocked::ProtocolAssignment
        });
    }
    None
}

/// The IPv4 address an IPv6 address leads to, and how it is carried, as messages name it:
/// IPv4-mapped `::ffff:0:0/96`, IPv4-translated `::ffff:0:0:0/96` (SIIT), IPv4-compatible
/// `::/96` (deprecated), NAT64 `64:ff9b::/96`, 6to4 `2002::/16` (bits 16-47), Teredo
/// `2001::/32` (the client, the last 32 bits inverted).
pub fn embedded_v4(ip: Ipv6Addr) -> Option<(&'static str, Ipv4Addr)> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    let how = if s[..6] == [0, 0, 0, 0, 0, 0xffff] {
        "IPv4-mapped"
    } else if s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        "IPv4-translated"
    } else if s[..6] == [0; 6] {
        "IPv4-compatible"
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        "NAT64"
    } else if s[0] == 0x2002 {
        return Some(("6to4", v4(s[1], s[2])));
    } else if s[..2] == [0x2001, 0] {
        return Some(("Teredo", v4(!s[6], !s[7])));
    } else {
        return None;
    };
    Some((how, v4(s[6], s[7])))
}

/// How a message names an address: with the IPv4 address it carries when the address does
/// not show it already (`2002:7f00:1:: (6to4 127.0.0.1)`).
pub fn shown(ip: IpAddr) -> String {
    let text = ip.to_string();
    match ip {
        IpAddr::V6(v6) if !text.contains('.') && !v6.is_loopback() && !v6.is_unspecified() => {
            match embedded_v4(v6) {
                Some((how, v4)) => format!("{text} ({how} {v4})"),
                None => text,
            }
        }
        _ => text,
    }
}

/// Picks the address a webhook connects to among the resolved ones: the first allowed one.
/// With `allow_private` every address is allowed. `Err` names the refused addresses and the fix.
pub fn choose(name: &str, addresses: &[IpAddr], allow_private: bool) -> Result<IpAddr, String> {
    let Some(&first) = addresses.first() else {
        return Err(format!("{name} resolves to no address"));
    };
    if allow_private {
        return Ok(first);
    }
    if let Some(ip) = addresses.iter().find(|ip| blocked(**ip).is_none()) {
        return Ok(*ip);
    }
    let refused: Vec<String> = addresses
        .iter()
        .take(4)
        .map(|ip| {
            format!(
                "{} is {}",
                shown(*ip),
                blocked(*ip).map_or("blocked", Blocked::describe)
            )
        })
        .collect();
    Err(format!(
        "destination {name} refused: {}; pass --allow-private-webhooks to deliver to private, \
         loopback or link-local receivers",
        refused.join(", ")
    ))
}

/// Resolves `host` (a name or an address literal, without brackets) within `timeout`: the
/// operator's pinned names first (`scanner.resolve`), then the system resolver.
pub fn resolve(host: &str, port: u16, timeout: Duration) -> Result<Vec<IpAddr>, String> {
    resolve_with(host, port, timeout, crate::net::resolve::lookup)
}

/// [`resolve`] with the lookup given (tests inject one that never leaves the process). An
/// address literal is its own answer: `lookup` is not called.
pub fn resolve_with<F>(
    host: &str,
    port: u16,
    timeout: Duration,
    lookup: F,
) -> Result<Vec<IpAddr>, String>
where
    F: FnOnce(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + 'static,
{
    let host = bare(host);
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![ip]);
    }
    let name = host.to_string();
    // The system resolver cannot be interrupted; a lookup that outlives the time limit is
    // left to finish on its own.
    let deadline = Instant::now() + timeout;
    match crate::net::resolve::answer_until(deadline, move || lookup(&name, port)) {
        Some(Ok(addresses)) => Ok(dedup(addresses)),
        Some(Err(e)) => Err(format!("cannot resolve {host}: {e}")),
        None => Err(format!(
            "cannot resolve {host}: timed out after {timeout:?}"
        )),
    }
}

fn dedup(addresses: Vec<SocketAddr>) -> Vec<IpAddr> {
    let mut out: Vec<IpAddr> = Vec::new();
    for a in addresses {
        if !out.contains(&a.ip()) {
            out.push(a.ip());
        }
    }
    out
}

/// A host as compared: no brackets, no final dot, lower case.
fn bare(host: &str) -> &str {
    let host = host.trim();
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// One name and its validated addresses: `resolve::Pins`, where connections look it up.
pub use super::resolve::Pins;

/// Why a target may not be scanned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The target is, or resolves to, an address that is not public unicast.
    Blocked {
        host: String,
        address: IpAddr,
        class: Blocked,
    },
    /// The name did not resolve (in time, or to any address): why.
    Unresolved(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Blocked {
                host,
                address,
                class,
            } => {
                if bare(host).parse::<IpAddr>() == Ok(*address) {
                    write!(f, "{} is {}", shown(*address), class.describe())
                } else {
                    write!(
                        f,
                        "{host} resolves to {}, {}",
                        shown(*address),
                        class.describe()
                    )
                }
            }
            Refusal::Unresolved(reason) => f.write_str(reason),
        }
    }
}

/// Judges resolved addresses: every one must be public unicast (the first that is not is
/// named), unless `allow_private`. The pins hold all of them.
pub fn check(host: &str, addresses: &[IpAddr], allow_private: bool) -> Result<Pins, Refusal> {
    if addresses.is_empty() {
        return Err(Refusal::Unresolved(format!(
            "{} resolves to no address",
            bare(host)
        )));
    }
    if !allow_private
        && let Some((address, class)) = addresses
            .iter()
            .find_map(|ip| blocked(*ip).map(|class| (*ip, class)))
    {
        return Err(Refusal::Blocked {
            host: bare(host).to_string(),
            address,
            class,
        });
    }
    Ok(Pins::new(host, addresses.to_vec()))
}

/// Resolves a scan target once, within `timeout`, and checks every address: the pins to scan
/// it with (`Scanner::with_pins`), or why it may not be scanned. An address literal is checked
/// as it is. With `allow_private` (`--allow-private-targets`) every address passes, and the
/// scan is still pinned to what was resolved here.
pub fn guarded(
    host: &str,
    port: u16,
    timeout: Duration,
    allow_private: bool,
) -> Result<Pins, Refusal> {
    guarded_with(
        host,
        port,
        timeout,
        allow_private,
        crate::net::resolve::lookup,
    )
}

/// [`guarded`] with the lookup given (tests; a server with a resolver of its own).
pub fn guarded_with<F>(
    host: &str,
    port: u16,
    timeout: Duration,
    allow_private: bool,
    lookup: F,
) -> Result<Pins, Refusal>
where
    F: FnOnce(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + 'static,
{
    let addresses = resolve_with(host, port, timeout, lookup).map_err(Refusal::Unresolved)?;
    check(host, &addresses, allow_private)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<Blocked> {
        blocked(text.parse().unwrap())
    }

    /// The one table: every range with its edges, every encoded form of an IPv4 address, and
    /// public addresses that must pass.
    #[test]
    fn the_table() {
        use Blocked::*;
        let cases: &[(&str, Option<Blocked>)] = &[
            // IPv4
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(ThisNetwork)),
            ("0.255.255.255", Some(ThisNetwork)),
            ("1.0.0.0", None),
            ("9.255.255.255", None),
            ("10.0.0.0", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("11.0.0.0", None),
            ("100.63.255.255", None),
            ("100.64.0.0", Some(SharedAddressSpace)),
            ("100.100.100.200", Some(SharedAddressSpace)),
            ("100.127.255.255", Some(SharedAddressSpace)),
            ("100.128.0.0", None),
            ("126.255.255.255", None),
            ("127.0.0.0", Some(Loopback)),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.255", Some(Loopback)),
            ("128.0.0.0", None),
            ("169.253.255.255", None),
            ("169.254.0.0", Some(LinkLocal)),
            ("169.254.169.254", Some(LinkLocal)),
            ("169.254.255.255", Some(LinkLocal)),
            ("169.255.0.0", None),
            ("172.15.255.255", None),
            ("172.16.0.0", Some(Private)),
            ("172.20.1.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.32.0.0", None),
            ("191.255.255.255", None),
            ("192.0.0.0", Some(ProtocolAssignment)),
            ("192.0.0.170", Some(ProtocolAssignment)),
            ("192.0.0.255", Some(ProtocolAssignment)),
            ("192.0.1.0", None),
            ("192.0.2.0", Some(Documentation)),
            ("192.0.2.255", Some(Documentation)),
            ("192.0.3.0", None),
            ("192.88.98.255", None),
            ("192.88.99.1", Some(RelayAnycast)),
            ("192.88.100.0", None),
            ("192.167.255.255", None),
            ("192.168.0.0", Some(Private)),
            ("192.168.255.255", Some(Private)),
            ("192.169.0.0", None),
            ("198.17.255.255", None),
            ("198.18.0.0", Some(Benchmarking)),
            ("198.19.255.255", Some(Benchmarking)),
            ("198.20.0.0", None),
            ("198.51.99.255", None),
            ("198.51.100.0", Some(Documentation)),
            ("198.51.100.255", Some(Documentation)),
            ("198.51.101.0", None),
            ("203.0.112.255", None),
            ("203.0.113.0", Some(Documentation)),
            ("203.0.113.255", Some(Documentation)),
            ("203.0.114.0", None),
            ("223.255.255.255", None),
            ("224.0.0.0", Some(Multicast)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.255", Some(Multicast)),
            ("240.0.0.0", Some(Reserved)),
            ("255.255.255.254", Some(Reserved)),
            ("255.255.255.255", Some(Broadcast)),
            // IPv6
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("::2", Some(ThisNetwork)),
            ("::1:0:0:0", Some(Reserved)),
            ("100::", Some(Discard)),
            ("100::ffff:ffff:ffff:ffff", Some(Discard)),
            ("100:0:0:1::", Some(Reserved)),
            ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(Reserved)),
            ("2000::", None),
            ("2001:1::1", Some(ProtocolAssignment)),
            ("2001:2::1", Some(Benchmarking)),
            ("2001:2:0:ffff::1", Some(Benchmarking)),
            ("2001:3::1", Some(ProtocolAssignment)),
            ("2001:10::1", Some(Orchid)),
            ("2001:20::1", Some(Orchid)),
            ("2001:2f:ffff::1", Some(Orchid)),
            (
                "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some(ProtocolAssignment),
            ),
            ("2001:200::1", None),
            ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", None),
            ("2001:db8::", Some(Documentation)),
            ("2001:db8::1", Some(Documentation)),
            (
                "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
                Some(Documentation),
            ),
            ("2001:db9::", None),
            ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
            ("3fff::", Some(Documentation)),
            (
                "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
                Some(Documentation),
            ),
            ("3fff:1000::", None),
            ("4000::1", Some(Reserved)),
            ("5f00::1", Some(Reserved)),
            ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(Reserved)),
            ("fc00::", Some(UniqueLocal)),
            ("fd12:3456:789a::1", Some(UniqueLocal)),
            ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(UniqueLocal)),
            ("fe00::1", Some(Reserved)),
            ("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(Reserved)),
            ("fe80::", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(LinkLocal)),
            ("fec0::1", Some(SiteLocal)),
            ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(SiteLocal)),
            ("ff02::1", Some(Multicast)),
            ("ff0e::1", Some(Multicast)),
            // IPv4-mapped
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:7f00:1", Some(Loopback)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:172.16.0.1", Some(Private)),
            ("::ffff:192.168.1.1", Some(Private)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:100.64.0.1", Some(SharedAddressSpace)),
            ("::ffff:0.0.0.0", Some(Unspecified)),
            ("::ffff:192.0.2.1", Some(Documentation)),
            ("::ffff:224.0.0.1", Some(Multicast)),
            ("::ffff:1.1.1.1", None),
            // IPv4-translated (SIIT)
            ("::ffff:0:127.0.0.1", Some(Loopback)),
            ("::ffff:0:a00:1", Some(Private)),
            ("::ffff:0:8.8.8.8", None),
            // IPv4-compatible
            ("::127.0.0.1", Some(Loopback)),
            ("::10.0.0.1", Some(Private)),
            ("::169.254.169.254", Some(LinkLocal)),
            ("::8.8.8.8", None),
            // NAT64 (well-known prefix): judged by the embedded address
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::a00:1", Some(Private)),
            ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
            ("64:ff9b::1.1.1.1", None),
            ("64:ff9b::8.8.8.8", None),
            // NAT64, local use: always refused
            ("64:ff9b:1::", Some(LocalNat64)),
            ("64:ff9b:1::808:808", Some(LocalNat64)),
            ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", Some(LocalNat64)),
            ("64:ff9b:2::1", Some(Reserved)),
            // 6to4
            ("2002:7f00:0001::1", Some(Loopback)),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:c0a8:0101::", Some(Private)),
            ("2002:a9fe:a9fe::1", Some(LinkLocal)),
            ("2002:0a00:0001:ffff::1", Some(Private)),
            ("2002:101:101::1", None),
            ("2002:808:808::1", None),
            // Teredo: server 65.54.227.120, client 10.0.0.1 (inverted: f5ff:fffe)
            ("2001:0:4136:e378:8000:63bf:f5ff:fffe", Some(Private)),
            // client 127.0.0.1
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", Some(Loopback)),
            // client 192.168.1.1
            ("2001:0:4136:e378:8000:63bf:3f57:fefe", Some(Private)),
            // client 8.8.8.8
            ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", None),
            // Public
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("93.184.216.34", None),
            ("2606:4700:4700::1111", None),
            ("2a00:1450::1", None),
            ("2a00:1450:4001:81c::200e", None),
            ("2620:4f:8000::1", None),
        ];
        let mut wrong = Vec::new();
        for (ip, expected) in cases {
            if class(ip) != *expected {
                wrong.push(format!("{ip}: {:?}, expected {expected:?}", class(ip)));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn embedded_addresses_are_found_where_each_form_puts_them() {
        let cases: &[(&str, &str, &str)] = &[
            ("::ffff:7f00:1", "IPv4-mapped", "127.0.0.1"),
            ("::ffff:0:a00:1", "IPv4-translated", "10.0.0.1"),
            ("::a00:1", "IPv4-compatible", "10.0.0.1"),
            ("64:ff9b::808:808", "NAT64", "8.8.8.8"),
            ("2002:c0a8:0101::", "6to4", "192.168.1.1"),
            ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo", "10.0.0.1"),
        ];
        for (v6, how, v4) in cases {
            assert_eq!(
                embedded_v4(v6.parse().unwrap()),
                Some((*how, v4.parse().unwrap())),
                "{v6}"
            );
        }
        assert_eq!(embedded_v4("2606:4700::1".parse().unwrap()), None);
    }

    #[test]
    fn every_reason_is_described() {
        for ip in [
            "0.0.0.0",
            "0.0.0.1",
            "127.0.0.1",
            "10.0.0.1",
            "169.254.1.1",
            "100.64.0.1",
            "fc00::1",
            "fec0::1",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "192.88.99.1",
            "100::1",
            "2001:20::1",
            "64:ff9b:1::1",
        ] {
            let reason = class(ip).unwrap();
            assert!(
                reason.describe().starts_with("a") || reason.describe().starts_with("the"),
                "{ip}"
            );
        }
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|t| t.parse().unwrap()).collect()
    }

    #[test]
    fn choose_pins_the_first_allowed_address() {
        let list = ips(&["127.0.0.1", "10.0.0.5", "93.184.216.34", "1.1.1.1"]);
        assert_eq!(
            choose("hook.example", &list, false),
            Ok("93.184.216.34".parse().unwrap())
        );
        assert_eq!(
            choose("hook.example", &list, true),
            Ok("127.0.0.1".parse().unwrap())
        );
    }

    #[test]
    fn choose_refuses_when_every_address_is_blocked() {
        let list = ips(&["127.0.0.1", "::1", "fd00::1"]);
        let error = choose("hook.example", &list, false).unwrap_err();
        assert!(
            error.starts_with("destination hook.example refused: 127.0.0.1 is a loopback address, ::1 is a loopback address, fd00::1 is a unique-local address"),
            "{error}"
        );
        assert!(error.contains("--allow-private-webhooks"), "{error}");
        assert!(choose("hook.example", &[], false).is_err());
        assert!(choose("hook.example", &[], true).is_err());
    }

    #[test]
    fn address_literals_resolve_to_themselves() {
        assert_eq!(
            resolve("192.0.2.7", 443, Duration::from_secs(1)),
            Ok(ips(&["192.0.2.7"]))
        );
        assert_eq!(
            resolve("::1", 443, Duration::from_secs(1)),
            Ok(ips(&["::1"]))
        );
        assert_eq!(
            resolve("[::1]", 443, Duration::from_secs(1)),
            Ok(ips(&["::1"]))
        );
    }

    fn answer(
        list: &'static [&'static str],
    ) -> impl FnOnce(&str, u16) -> io::Result<Vec<SocketAddr>> {
        move |_: &str, port| {
            Ok(list
                .iter()
                .map(|ip| SocketAddr::new(ip.parse().unwrap(), port))
                .collect())
        }
    }

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn guarded_names_the_first_blocked_address_and_its_class() {
        let refusal = guarded_with(
            "cloud.example.com",
            443,
            SECOND,
            false,
            answer(&["93.184.216.34", "10.0.0.5"]),
        )
        .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "cloud.example.com resolves to 10.0.0.5, a private address"
        );
        assert!(matches!(refusal, Refusal::Blocked { .. }), "{refusal:?}");
        let refusal =
            guarded_with("x.example", 443, SECOND, false, answer(&["::ffff:7f00:1"])).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "x.example resolves to ::ffff:127.0.0.1, a loopback address"
        );
        let refusal =
            guarded_with("y.example", 443, SECOND, false, answer(&["2002:7f00:1::"])).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "y.example resolves to 2002:7f00:1:: (6to4 127.0.0.1), a loopback address"
        );
        let refusal = guarded_with("[fd00::1]", 443, SECOND, false, answer(&[])).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "fd00::1 is a unique-local address (fc00::/7)"
        );
    }

    #[test]
    fn guarded_pins_every_public_address_and_literals_skip_the_lookup() {
        let pins = guarded_with(
            "Cloud.Example.COM.",
            443,
            SECOND,
            false,
            answer(&["93.184.216.34", "2606:4700:4700::1111", "93.184.216.34"]),
        )
        .unwrap();
        assert_eq!(pins.name(), "cloud.example.com");
        assert_eq!(
            pins.addresses(),
            ips(&["93.184.216.34", "2606:4700:4700::1111"])
        );
        let never = |_: &str, _: u16| -> io::Result<Vec<SocketAddr>> { panic!("looked up") };
        let pins = guarded_with("8.8.8.8", 443, SECOND, false, never).unwrap();
        assert_eq!(pins.addresses(), ips(&["8.8.8.8"]));
        let pins = guarded_with("127.0.0.1", 443, SECOND, true, never).unwrap();
        assert_eq!(pins.addresses(), ips(&["127.0.0.1"]));
    }

    #[test]
    fn guarded_refuses_what_does_not_resolve_in_time_or_at_all() {
        // A lookup that answers only when the test ends (the sender drops): no real wait.
        let (_answer, held) = std::sync::mpsc::channel::<()>();
        let slow = move |_: &str, _: u16| -> io::Result<Vec<SocketAddr>> {
            let _ = held.recv();
            Ok(Vec::new())
        };
        let refusal =
            guarded_with("slow.example", 443, Duration::from_millis(50), false, slow).unwrap_err();
        assert!(matches!(refusal, Refusal::Unresolved(_)), "{refusal:?}");
        assert!(refusal.to_string().contains("timed out"), "{refusal}");
        let refusal = guarded_with("none.example", 443, SECOND, false, answer(&[])).unwrap_err();
        assert_eq!(refusal.to_string(), "none.example resolves to no address");
        let failing =
            |_: &str, _: u16| -> io::Result<Vec<SocketAddr>> { Err(io::Error::other("NXDOMAIN")) };
        let refusal = guarded_with("gone.example", 443, SECOND, true, failing).unwrap_err();
        assert_eq!(refusal.to_string(), "cannot resolve gone.example: NXDOMAIN");
    }

    #[test]
    fn pins_answer_their_name_and_addresses_and_nothing_else() {
        let pins = Pins::new("Pinned.Test.", ips(&["192.0.2.1", "2001:db8::1"]));
        assert!(pins.covers("pinned.test"));
        assert!(pins.covers("PINNED.test."));
        assert!(pins.covers("[2001:db8::1]"));
        assert!(pins.covers("2001:db8:0::1"));
        assert!(!pins.covers("other.test"));
        assert!(!pins.covers("192.0.2.2"));
        assert_eq!(
            pins.lookup("pinned.test", 8443).unwrap(),
            vec![
                "192.0.2.1:8443".parse::<SocketAddr>().unwrap(),
                "[2001:db8::1]:8443".parse().unwrap()
            ]
        );
        assert_eq!(
            pins.lookup("192.0.2.1", 80).unwrap(),
            vec!["192.0.2.1:80".parse::<SocketAddr>().unwrap()]
        );
        let error = pins.lookup("localhost", 80).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
        assert!(pins.lookup("127.0.0.1", 80).is_err());
        assert!(
            Pins::new("empty.test", Vec::new())
                .lookup("empty.test", 1)
                .is_err()
        );
    }
}
