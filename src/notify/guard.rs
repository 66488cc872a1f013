//! The destination guard of webhook delivery: which addresses a notification may go to, and
//! which one address of the receiver's name it is pinned to.
//!
//! A receiver named by the operator could still be steered (a DNS answer changed between the
//! check and the connection, a name that resolves to an internal service); the guard classifies
//! every resolved address, picks one that is allowed, and the delivery connects to exactly that
//! address (see `super::send`), so what was validated is what is reached.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::mpsc;
use std::time::Duration;

/// Why an address is refused as a webhook destination (without `--allow-private-webhooks`).
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
        }
    }
}

/// Why `ip` is refused as a destination, or `None` when it is a public address.
/// IPv6 addresses that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by
/// the IPv4 address they lead to.
pub fn blocked(ip: IpAddr) -> Option<Blocked> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4),
        IpAddr::V6(v6) => blocked_v6(v6),
    }
}

fn blocked_v4(ip: Ipv4Addr) -> Option<Blocked> {
    let [a, b, _, _] = ip.octets();
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
    } else if ip.is_broadcast() {
        Some(Blocked::Broadcast)
    } else if ip.is_multicast() {
        Some(Blocked::Multicast)
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
    if let Some(v4) = embedded_v4(ip) {
        return blocked_v4(v4);
    }
    match s[0] {
        x if x & 0xfe00 == 0xfc00 => Some(Blocked::UniqueLocal),
        x if x & 0xffc0 == 0xfe80 => Some(Blocked::LinkLocal),
        x if x & 0xffc0 == 0xfec0 => Some(Blocked::SiteLocal),
        x if x & 0xff00 == 0xff00 => Some(Blocked::Multicast),
        _ => None,
    }
}

/// The IPv4 address an IPv6 address leads to: IPv4-mapped `::ffff:0:0/96`, IPv4-compatible
/// `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        return Some(low(s[6], s[7]));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return Some(low(s[1], s[2]));
    }
    None
}

/// Picks the address to connect to among the resolved ones: the first allowed one. With
/// `allow_private` every address is allowed. `Err` names the refused addresses and the fix.
pub fn choose(name: &str, addresses: &[IpAddr], allow_private: bool) -> Result<IpAddr, String> {
    if allow_private {
        return addresses
            .first()
            .copied()
            .ok_or_else(|| format!("{name} resolves to no address"));
    }
    if let Some(ip) = addresses.iter().find(|ip| blocked(**ip).is_none()) {
        return Ok(*ip);
    }
    let refused: Vec<String> = addresses
        .iter()
        .take(4)
        .map(|ip| {
            format!(
                "{ip} is {}",
                blocked(*ip).map_or("blocked", Blocked::describe)
            )
        })
        .collect();
    if refused.is_empty() {
        return Err(format!("{name} resolves to no address"));
    }
    Err(format!(
        "destination {name} refused: {}; pass --allow-private-webhooks to deliver to private, \
         loopback or link-local receivers",
        refused.join(", ")
    ))
}

/// Resolves `host` (a name or an address literal, without brackets) within `timeout`: the
/// operator's pinned names first (`scanner.resolve`), then the system resolver.
pub fn resolve(host: &str, port: u16, timeout: Duration) -> Result<Vec<IpAddr>, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![ip]);
    }
    let (tx, rx) = mpsc::channel();
    let name = host.to_string();
    // The system resolver cannot be interrupted; a lookup that outlives the time limit is
    // left to finish on its own.
    std::thread::spawn(move || {
        let _ = tx.send(crate::net::resolve::lookup(&name, port));
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(addresses)) => Ok(dedup(addresses)),
        Ok(Err(e)) => Err(format!("cannot resolve {host}: {e}")),
        Err(_) => Err(format!("cannot resolve {host}: timed out")),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<Blocked> {
        blocked(text.parse().unwrap())
    }

    #[test]
    fn ipv4_ranges_with_their_edges() {
        use Blocked::*;
        let cases: &[(&str, Option<Blocked>)] = &[
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
            ("127.0.0.1", Some(Loopback)),
            ("127.0.0.0", Some(Loopback)),
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
            ("192.167.255.255", None),
            ("192.168.0.0", Some(Private)),
            ("192.168.255.255", Some(Private)),
            ("192.169.0.0", None),
            ("223.255.255.255", None),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.255", Some(Multicast)),
            ("255.255.255.255", Some(Broadcast)),
            ("1.1.1.1", None),
            ("93.184.216.34", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(class(ip), *expected, "{ip}");
        }
    }

    #[test]
    fn ipv6_ranges_with_their_edges() {
        use Blocked::*;
        let cases: &[(&str, Option<Blocked>)] = &[
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("::2", Some(ThisNetwork)),
            ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
            ("fc00::", Some(UniqueLocal)),
            ("fd12:3456:789a::1", Some(UniqueLocal)),
            ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(UniqueLocal)),
            ("fe00::1", None),
            ("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
            ("fe80::", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(LinkLocal)),
            ("fec0::1", Some(SiteLocal)),
            ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(SiteLocal)),
            ("ff02::1", Some(Multicast)),
            ("2606:4700:4700::1111", None),
            ("2001:db8::1", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(class(ip), *expected, "{ip}");
        }
    }

    #[test]
    fn ipv6_addresses_carrying_ipv4_are_judged_by_it() {
        use Blocked::*;
        let cases: &[(&str, Option<Blocked>)] = &[
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:172.16.0.1", Some(Private)),
            ("::ffff:192.168.1.1", Some(Private)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:100.64.0.1", Some(SharedAddressSpace)),
            ("::ffff:0.0.0.0", Some(Unspecified)),
            ("::ffff:1.1.1.1", None),
            ("::127.0.0.1", Some(Loopback)),
            ("::10.0.0.1", Some(Private)),
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
            ("64:ff9b::1.1.1.1", None),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:c0a8:101::1", Some(Private)),
            ("2002:101:101::1", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(class(ip), *expected, "{ip}");
        }
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
        ] {
            let reason = class(ip).unwrap();
            assert!(reason.describe().starts_with("a") || reason.describe().starts_with("the"));
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
    }
}
