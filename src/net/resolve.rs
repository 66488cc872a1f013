//! Name resolution for every direct connection of a scan. The system resolver answers, unless
//! the operator pinned a name to addresses (`scanner.resolve`, like curl's `--resolve`: check
//! the nodes behind a name before DNS points at them, or pin a name that DNS does not know).
//! The table is installed once per process by the run, before any connection is made.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, SocketAddrV6, ToSocketAddrs};
use std::sync::OnceLock;
use std::time::Instant;

static PINNED: OnceLock<HashMap<String, Vec<IpAddr>>> = OnceLock::new();

/// Link-local IPv6 addresses of the targets and the interface (scope id) that reaches them:
/// `[fe80::1%25eth0]` connects through eth0. The zone never goes into a URL or to DNS.
static ZONES: OnceLock<HashMap<Ipv6Addr, u32>> = OnceLock::new();

/// Installs the targets' IPv6 zones; a second call changes nothing (one table per process).
pub fn install_zones(zones: HashMap<Ipv6Addr, u32>) {
    let _ = ZONES.set(zones);
}

/// The interface index of a zone: a number as it is, a name looked up in `/sys/class/net`
/// (Linux). `None` when no such interface exists.
pub fn interface_index(zone: &str) -> Option<u32> {
    if let Ok(index) = zone.parse::<u32>() {
        return Some(index);
    }
    if zone.is_empty() || zone == "." || zone == ".." || zone.contains(['/', '\\', '\0']) {
        return None;
    }
    std::fs::read_to_string(format!("/sys/class/net/{zone}/ifindex"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The address of an IPv6 literal with a known zone, scoped to its interface.
fn zoned(host: &str, port: u16) -> Option<SocketAddr> {
    let addr: Ipv6Addr = host.parse().ok()?;
    let scope = *ZONES.get()?.get(&addr)?;
    Some(SocketAddr::V6(SocketAddrV6::new(addr, port, 0, scope)))
}

/// `ip:port`, scoped to its interface when it is the address of a target with a known zone.
pub fn scoped(ip: IpAddr, port: u16) -> SocketAddr {
    if let IpAddr::V6(v6) = ip
        && let Some(scope) = ZONES.get().and_then(|z| z.get(&v6))
    {
        return SocketAddr::V6(SocketAddrV6::new(v6, port, 0, *scope));
    }
    SocketAddr::new(ip, port)
}

/// Installs the pinned names; a second call changes nothing (one table per process).
pub fn install(pinned: HashMap<String, Vec<IpAddr>>) {
    let _ = PINNED.set(pinned);
}

/// Parses `name=address,address;name=address` (the `scanner.resolve` setting).
pub fn parse_pins(text: &str) -> Option<HashMap<String, Vec<IpAddr>>> {
    let mut pins = HashMap::new();
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, addresses) = entry.split_once('=')?;
        let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
        let addresses: Option<Vec<IpAddr>> = addresses
            .split(',')
            .map(|a| {
                a.trim()
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse()
                    .ok()
            })
            .collect();
        let addresses = addresses.filter(|a| !a.is_empty())?;
        if name.is_empty() {
            return None;
        }
        pins.insert(name, addresses);
    }
    Some(pins)
}

/// Addresses of `host` (a name or an address literal), pinned ones first.
pub fn lookup(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    if let Some(scoped) = zoned(host, port) {
        return Ok(vec![scoped]);
    }
    let key = host.trim_end_matches('.').to_ascii_lowercase();
    if let Some(addresses) = PINNED.get().and_then(|p| p.get(&key)) {
        return Ok(addresses
            .iter()
            .map(|ip| SocketAddr::new(*ip, port))
            .collect());
    }
    Ok((system_name(host), port).to_socket_addrs()?.collect())
}

/// The name the system resolver is asked for `host`: `localhost` for every name below it.
/// They are all the machine's loopback names (RFC 6761 section 6.3), but glibc would ask the
/// nameserver for `cloud.localhost`, sending a name that never leaves the machine off it.
fn system_name(host: &str) -> &str {
    if super::dns::is_localhost(host) {
        "localhost"
    } else {
        host
    }
}

/// [`lookup`] that gives up at `deadline`. Pinned names and address literals answer at once;
/// the system resolver cannot be interrupted, so a lookup that outlives the deadline is left
/// to finish on its own thread and its answer dropped.
pub fn lookup_until(host: &str, port: u16, deadline: Instant) -> io::Result<Vec<SocketAddr>> {
    if answers_at_once(host, port) {
        return lookup(host, port);
    }
    let name = host.to_string();
    answer_until(deadline, move || lookup(&name, port)).unwrap_or_else(|| {
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("looking up {host} timed out"),
        ))
    })
}

/// Whether [`lookup`] answers `host` without a resolver: an address literal (with a known
/// zone or without) or a pinned name.
fn answers_at_once(host: &str, port: u16) -> bool {
    let key = host.trim_end_matches('.').to_ascii_lowercase();
    zoned(host, port).is_some()
        || host.parse::<IpAddr>().is_ok()
        || PINNED.get().is_some_and(|p| p.contains_key(&key))
}

/// The answer of `ask`, run on a thread of its own, if it comes before `deadline`.
pub(crate) fn answer_until<T: Send + 'static>(
    deadline: Instant,
    ask: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(ask());
    });
    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .ok()
}

/// A host as compared: no brackets, no final dot, lower case.
fn key(host: &str) -> String {
    let host = host.trim();
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.trim_end_matches('.').to_ascii_lowercase()
}

/// One name and the addresses it may be reached at: what the guard validated (or, for a node
/// of `--all-addresses` and a webhook, the one address chosen among them). A connection that
/// holds pins never asks a resolver: the pinned name gives the pinned addresses, an address
/// literal among them gives itself, and any other name is an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pins {
    name: String,
    addresses: Vec<IpAddr>,
}

impl Pins {
    /// Pins `name` to `addresses` as they are: the caller vouches for them (the guard's own
    /// result, one address of it, or the operator's `--allow-private-*` choice).
    pub fn new(name: &str, addresses: Vec<IpAddr>) -> Pins {
        Pins {
            name: key(name),
            addresses,
        }
    }

    /// The pinned name (lower case, no brackets, no final dot).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The addresses, in the resolver's order.
    pub fn addresses(&self) -> &[IpAddr] {
        &self.addresses
    }

    /// Whether `host` (a name or an address literal, bracketed or not) is reachable through
    /// these pins.
    pub fn covers(&self, host: &str) -> bool {
        let wanted = key(host);
        wanted == self.name
            || wanted
                .parse::<IpAddr>()
                .is_ok_and(|ip| self.addresses.contains(&ip))
    }

    /// The addresses of `host` with `port`: the pinned ones for the pinned name, the literal
    /// itself when it is one of them; an error for anything else (no lookup is ever made).
    pub fn lookup(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        if !self.covers(host) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{host} is not {}, the only host this connection may reach",
                    self.name
                ),
            ));
        }
        // The pinned name gives every address; a literal among them gives itself.
        let wanted = key(host);
        let ips = match wanted.parse::<IpAddr>() {
            Ok(ip) if wanted != self.name => vec![ip],
            _ => self.addresses.clone(),
        };
        if ips.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is pinned to no address", self.name),
            ));
        }
        Ok(ips.into_iter().map(|ip| scoped(ip, port)).collect())
    }
}

/// The ureq resolver of the scan: the pinned table, or the pins of the connection (a guarded
/// scan's validated addresses; one address of a name for `--all-addresses`, which connects to
/// each address in turn while Host and SNI keep the name; a webhook's chosen address). With
/// pins no resolver is ever asked.
#[derive(Debug, Default)]
pub struct ScanResolver {
    pub pin: Option<Pins>,
}

impl ureq::unversioned::resolver::Resolver for ScanResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().ok_or(ureq::Error::HostNotFound)?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
            Some("http") => 80,
            _ => 443,
        });
        let addresses = match &self.pin {
            Some(pins) => pins.lookup(host, port),
            // ureq's own resolver knows neither zones nor pinned names, and would ask the
            // nameserver for a name below localhost.
            None if answers_at_once(host, port) || system_name(host) != host => lookup(host, port),
            None => {
                return ureq::unversioned::resolver::DefaultResolver::default()
                    .resolve(uri, config, timeout);
            }
        }
        .map_err(|_| ureq::Error::HostNotFound)?;
        let mut out = self.empty();
        for address in addresses.into_iter().take(16) {
            out.push(address);
        }
        if out.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_parse() {
        let pins =
            parse_pins("Cloud.Example.= 192.0.2.1, [2001:db8::1] ; other=127.0.0.2").unwrap();
        assert_eq!(pins["cloud.example"].len(), 2);
        assert_eq!(pins["other"], vec!["127.0.0.2".parse::<IpAddr>().unwrap()]);
        assert!(parse_pins("noequals").is_none());
        assert!(parse_pins("a=not-an-ip").is_none());
        assert!(parse_pins("=127.0.0.1").is_none());
        assert!(parse_pins("").unwrap().is_empty());
    }

    #[test]
    fn a_lookup_ends_at_its_deadline() {
        // Literals answer at once, even with the deadline passed.
        let past = Instant::now();
        let got = lookup_until("127.0.0.1", 8080, past).unwrap();
        assert_eq!(got, vec!["127.0.0.1:8080".parse().unwrap()]);
        // A resolver that does not answer is not waited for past the deadline.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let soon = Instant::now() + std::time::Duration::from_millis(50);
        assert_eq!(answer_until(soon, move || held.recv().is_ok()), None);
        assert!(Instant::now() < soon + std::time::Duration::from_secs(1));
        drop(release);
        let later = Instant::now() + std::time::Duration::from_secs(5);
        assert_eq!(answer_until(later, || 7), Some(7));
    }

    /// Every name below `localhost` gets the system's addresses of `localhost` (its hosts
    /// file), so none of them reaches a nameserver.
    #[test]
    fn localhost_names_resolve_as_localhost() {
        let localhost = lookup("localhost", 443).unwrap();
        assert!(
            localhost.iter().all(|a| a.ip().is_loopback()),
            "{localhost:?}"
        );
        for name in ["cloud.localhost", "A.B.LocalHost."] {
            assert_eq!(lookup(name, 443).unwrap(), localhost, "{name}");
        }
        assert_eq!(
            system_name("localhost.example.net"),
            "localhost.example.net"
        );
        assert_eq!(system_name("127.0.0.1"), "127.0.0.1");
    }
}
