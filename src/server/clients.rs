//! Who a peer counts as, for every server's caps and limits: a client (an IPv4 address, or an
//! IPv6 /64: one host's interface usually holds a whole /64 and picks any address of it at
//! will) and the network it is in (IPv4 /24, IPv6 /56), so that four addresses cannot do what
//! one may not.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An IPv4-mapped IPv6 address as the IPv4 address it is (a dual-stack socket reports IPv4
/// clients so).
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// One client: an IPv4 address, or an IPv6 /64.
pub fn address_key(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let n = u128::from(v6) & (u128::MAX << 64);
            format!("{}/64", Ipv6Addr::from(n))
        }
    }
}

/// The network of a client: IPv4 /24, IPv6 /56.
pub fn network_key(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V4(v4) => {
            let n = u32::from(v4) & 0xffff_ff00;
            format!("{}/24", Ipv4Addr::from(n))
        }
        IpAddr::V6(v6) => {
            let n = u128::from(v6) & (u128::MAX << 72);
            format!("{}/56", Ipv6Addr::from(n))
        }
    }
}
