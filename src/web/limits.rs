//! Who is asking, and how much they may ask: the client address (the socket's, or
//! `X-Forwarded-For` from a trusted proxy only), its network (IPv4 /24, IPv6 /56), and the
//! spec's limits, counted in the [`Store`] so that every node of a shared store counts alike.
//! The limits are rolling: "10 a minute" means no 11th within any 60 s, not per clock minute.

use super::store::{Admission, Limit, Store, StoreResult};
use crate::target::{HostName, Target};
use std::net::{IpAddr, SocketAddr};

/// Submissions from one address per minute.
pub const SUBMISSIONS_PER_MINUTE: u32 = 10;
/// One scan per target per this many seconds.
pub const TARGET_WINDOW_SECS: i64 = 300;
/// Scans from one network per day.
pub const NETWORK_SCANS_PER_DAY: u32 = 50;
/// A network whose last this many scans all found no supported product is paused...
pub const FRUITLESS_SCANS: usize = 5;
/// ...for this long.
pub const PAUSE_SECS: i64 = 24 * 3600;
/// A network's outcomes are forgotten a week after its last scan.
pub const OUTCOMES_TTL_SECS: i64 = 7 * 24 * 3600;

const MINUTE: i64 = 60;
const DAY: i64 = 24 * 3600;

/// Whether `ip` lies in `network/length`.
pub fn in_network(ip: IpAddr, (network, length): (IpAddr, u8)) -> bool {
    // Both as 128 bits, an IPv4 address in the low 32: its prefix is 96 bits longer.
    let bits = |ip| match canonical(ip) {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    };
    let ((a, width), (n, network_width)) = (bits(ip), bits(network));
    let kept = 128 - width + u32::from(length).min(width);
    let mask = u128::MAX.checked_shl(128 - kept).unwrap_or(0);
    width == network_width && a & mask == n & mask
}

/// Whether `ip` is one of the `--trusted-proxy` networks.
pub fn is_trusted(ip: IpAddr, trusted: &[(IpAddr, u8)]) -> bool {
    trusted.iter().any(|net| in_network(ip, *net))
}

pub use crate::server::clients::{address_key, canonical, network_key};

/// The client of a request: the socket's peer, unless the peer is a trusted proxy; then the
/// nearest address of `X-Forwarded-For` that is not a trusted proxy itself (read from the
/// right: the left part is whatever the client wrote). A header that cannot be read leaves
/// the peer.
pub fn client_address(
    peer: IpAddr,
    forwarded_for: Option<&str>,
    trusted: &[(IpAddr, u8)],
) -> IpAddr {
    let is_trusted = |ip: IpAddr| is_trusted(ip, trusted);
    let mut client = canonical(peer);
    if !is_trusted(client) {
        return client;
    }
    // No header is no entry that can be read: the peer.
    for entry in forwarded_for.unwrap_or_default().rsplit(',') {
        let Some(ip) = forwarded_address(entry) else {
            return client;
        };
        client = canonical(ip);
        if !is_trusted(client) {
            return client;
        }
    }
    client
}

/// The client of `request` as [`client_address`] reads it, from every `X-Forwarded-For` line
/// joined in the order received (the proxy nearest us wrote the last).
pub fn client_of(request: &crate::server::http::Request, trusted: &[(IpAddr, u8)]) -> IpAddr {
    let lines = request.header_lines("x-forwarded-for");
    let joined = (!lines.is_empty()).then(|| lines.join(","));
    client_address(request.peer.ip(), joined.as_deref(), trusted)
}

/// One entry of `X-Forwarded-For`: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1` or
/// `[2001:db8::1]:4711`.
fn forwarded_address(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    let bracketed = || entry.strip_prefix('[')?.split(']').next()?.parse().ok();
    entry
        .parse()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|socket| socket.ip()))
        .or_else(bracketed)
}

/// The ports a scan of `target` connects to on the instance: the port given, else
/// `scanner.target_port` (`default_port`), else 443 and 80 (HTTPS and its plain-HTTP fallback,
/// whatever the scheme: `http://vm` is scanned as `vm` is, on both).
pub fn instance_ports(target: &Target, default_port: Option<u16>) -> Vec<u16> {
    let destination = crate::scanner::destination(target, default_port);
    let mut ports = vec![destination.https_port];
    if destination.http_port != destination.https_port {
        ports.push(destination.http_port);
    }
    ports
}

/// The cooldown keys of `target` by its name: `host:port` for each port its scan connects to
/// ([`instance_ports`]), the name in lower case, an IPv6 address bracketed, the scheme and the
/// path dropped. Spellings of one instance share them: `vm`, `https://VM/x` and
/// `http://vm/./` are `vm:443` and `vm:80`; `vm:443` is `vm:443`, `http://vm:80` is `vm:80`.
pub fn instance_names(target: &Target, default_port: Option<u16>) -> Vec<String> {
    let host = match (&target.host, &target.zone) {
        (HostName::Ipv6(address), Some(zone)) => format!("[{address}%{zone}]"),
        (HostName::Ipv6(address), None) => format!("[{address}]"),
        _ => target.host_str(),
    };
    instance_ports(target, default_port)
        .into_iter()
        .map(|port| format!("{host}:{port}"))
        .collect()
}

/// The address a scan of `ip` reaches, as its cooldown is kept: an IPv6 address that carries
/// an IPv4 address (mapped, translated, compatible, NAT64, 6to4, Teredo:
/// `net::guard::embedded_v4`) is that IPv4 address, so on a DNS64 network `64:ff9b::c000:20a`
/// and `192.0.2.10` are one instance. `::1` and `::` are IPv6's own, not IPv4-compatible.
fn reached(ip: IpAddr) -> IpAddr {
    match canonical(ip) {
        IpAddr::V6(v6) if !v6.is_loopback() && !v6.is_unspecified() => {
            crate::net::guard::embedded_v4(v6).map_or(IpAddr::V6(v6), |(_, v4)| IpAddr::V4(v4))
        }
        other => other,
    }
}

/// Every cooldown key of a scan of `target` whose name the guard resolved to `addresses`: its
/// names ([`instance_names`]), then each address with each port (an IPv6 address that carries
/// an IPv4 address as that IPv4 address: [`reached`]). A scan spends all of them and is
/// refused while any cools down, so the names of one instance share its cooldown through its
/// addresses: `localhost` and `127.0.0.1`, or two names of one server.
pub fn cooldown_keys(
    target: &Target,
    default_port: Option<u16>,
    addresses: &[IpAddr],
) -> Vec<String> {
    let mut keys = instance_names(target, default_port);
    let ports = instance_ports(target, default_port);
    for ip in addresses {
        for port in &ports {
            let key = SocketAddr::new(reached(*ip), *port).to_string();
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

/// What the limits say of a submission: admitted (`Ok(Ok(()))`), refused for now
/// (`Ok(Err(..))`), or the store could not answer.
pub type Verdict = StoreResult<Result<(), Limited>>;

/// Why a submission is refused for now, and when to come back (seconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limited {
    pub code: &'static str,
    pub message: String,
    pub retry_after: i64,
}

/// One of the spec's rolling limits: at most `limit` submissions per `window_secs` for each
/// key `<prefix><who>` (an address, a target, a network), refused with `code`.
pub struct Rule {
    pub code: &'static str,
    pub prefix: &'static str,
    pub limit: u32,
    pub window_secs: i64,
    /// What a refusal says, given who it is about.
    describe: fn(&str) -> String,
}

impl Rule {
    pub fn limit_for(&self, who: &str) -> Limit {
        Limit {
            key: format!("{}{who}", self.prefix),
            limit: self.limit,
            window_ms: self.window_secs * 1000,
        }
    }
}

pub const ADDRESS_RATE: Rule = Rule {
    code: "rate_limited",
    prefix: "address:",
    limit: SUBMISSIONS_PER_MINUTE,
    window_secs: MINUTE,
    describe: |_| format!("at most {SUBMISSIONS_PER_MINUTE} submissions a minute from one address"),
};

pub const TARGET_COOLDOWN: Rule = Rule {
    code: "target_cooldown",
    prefix: "target:",
    limit: 1,
    window_secs: TARGET_WINDOW_SECS,
    describe: |target| {
        format!(
            "{target} was scanned less than {} minutes ago",
            TARGET_WINDOW_SECS / 60
        )
    },
};

pub const NETWORK_DAY: Rule = Rule {
    code: "network_daily_limit",
    prefix: "network:",
    limit: NETWORK_SCANS_PER_DAY,
    window_secs: DAY,
    describe: |_| format!("at most {NETWORK_SCANS_PER_DAY} scans a day from one network"),
};

/// Every rule of a submission, as `limits list` lists them: the address's rate (counted on the
/// attempt, [`admit_attempt`]), the target's cooldown and the network's day (counted on the
/// scan, [`admit_scan`]).
pub const RULES: [&Rule; 3] = [&ADDRESS_RATE, &TARGET_COOLDOWN, &NETWORK_DAY];

/// MCP `initialize` calls from one address (an IPv6 /64) per minute: a session is cheap to ask
/// for and costs this process memory, so asking is limited like submitting.
pub const SESSIONS_PER_MINUTE: u32 = 10;

pub const SESSION_RATE: Rule = Rule {
    code: "rate_limited",
    prefix: "mcp-session:",
    limit: SESSIONS_PER_MINUTE,
    window_secs: MINUTE,
    describe: |_| {
        format!("at most {SESSIONS_PER_MINUTE} new MCP sessions a minute from one address")
    },
};

/// Admits a new MCP session of `client` at `now_ms` when its address has room (rolling, as
/// submissions are); a network's pause does not apply (a paused network may still read its
/// results through MCP).
pub fn admit_session(store: &dyn Store, client: IpAddr, now_ms: i64) -> Verdict {
    // No network is named: a pause is a network's, and none is ever recorded under "".
    admit(store, &[(&SESSION_RATE, &address_key(client))], "", now_ms)
}

/// The code of a network's pause.
pub const PAUSED: &str = "network_paused";

/// Seconds for a `Retry-After` from milliseconds: rounded up, so a client that waits them
/// finds room (at least 1).
fn whole_seconds(ms: i64) -> i64 {
    (ms.max(1) + 999) / 1000
}

/// Admits the attempt of a submission from `client` at `now_ms` (Unix milliseconds) before
/// anything else is done for it (no DNS, no target): when its network is not paused and its
/// address has room in its rolling minute, the attempt is counted on the address, whatever
/// becomes of the submission after. A flood of names that do not resolve, or resolve slowly,
/// from one address is so refused after its tenth, by one store call, before any lookup is made
/// for it. A refusal counts nothing.
pub fn admit_attempt(store: &dyn Store, client: IpAddr, now_ms: i64) -> Verdict {
    // An IPv6 client counts by its /64: it may pick any address of it.
    let (address, network) = (address_key(client), network_key(client));
    admit(store, &[(&ADDRESS_RATE, &address)], &network, now_ms)
}

/// Admits the scan of an instance, once [`admit_attempt`] admitted the attempt and the guard
/// the target: when every cooldown key of the instance (`target_keys`, [`cooldown_keys`]: its
/// names and the addresses it resolved to, with its ports) and the network's day have room (within any 300 s and 24 h, not per clock minute) and the network is not paused,
/// counting it on all of them; a refusal counts it on none, so a network at its daily cap
/// cannot spend a victim's cooldown. A refusal names the reason that lasts longest, with the
/// seconds until it ends: a client that comes back then is not refused again for its own past.
pub fn admit_scan(
    store: &dyn Store,
    client: IpAddr,
    target_keys: &[String],
    now_ms: i64,
) -> Verdict {
    let network = network_key(client);
    let rules: Vec<(&Rule, &str)> = target_keys
        .iter()
        .map(|key| (&TARGET_COOLDOWN, key.as_str()))
        .chain([(&NETWORK_DAY, network.as_str())])
        .collect();
    admit(store, &rules, &network, now_ms)
}

/// Counts a submission of `network` at `now_ms` on every rule of `rules` (each for its own
/// key) when all have room and the network is not paused; else why not.
fn admit(store: &dyn Store, rules: &[(&Rule, &str)], network: &str, now_ms: i64) -> Verdict {
    let limits: Vec<Limit> = rules
        .iter()
        .map(|(rule, who)| rule.limit_for(who))
        .collect();
    let admission = store.admit(&limits, network, now_ms)?;
    Ok(refusal(&admission, rules, now_ms).map_or(Ok(()), Err))
}

/// Why `admission` (of the limits of `rules`) refuses, naming the reason that lasts longest
/// (the first listed among equals: a pause before the rules, the rules in their order); `None`
/// when it admitted.
fn refusal(admission: &Admission, rules: &[(&Rule, &str)], now_ms: i64) -> Option<Limited> {
    // (milliseconds to wait, code, message)
    let mut refusals: Vec<(i64, &'static str, String)> = Vec::new();
    if let Some(until) = admission.paused_until {
        let at = jiff::Timestamp::from_second(until)
            .map_or_else(|_| until.to_string(), |t| t.to_string());
        let message = format!(
            "the last {FRUITLESS_SCANS} scans from your network found no supported instance; it \
             may submit again from {at}"
        );
        refusals.push((until * 1000 - now_ms, PAUSED, message));
    }
    for (index, wait) in &admission.full {
        if let Some((rule, who)) = rules.get(*index) {
            refusals.push((*wait, rule.code, (rule.describe)(who)));
        }
    }
    let (wait, code, message) = refusals.into_iter().rev().max_by_key(|(wait, ..)| *wait)?;
    Some(Limited {
        code,
        message,
        retry_after: whole_seconds(wait),
    })
}

/// After a scan: remembers whether it found a supported product, and pauses the network
/// when its last [`FRUITLESS_SCANS`] scans all found none.
pub fn record_outcome(
    store: &dyn Store,
    network: &str,
    found_product: bool,
    now: i64,
) -> StoreResult<()> {
    let (keep, ttl_secs) = (FRUITLESS_SCANS, OUTCOMES_TTL_SECS);
    store.record_outcome(network, found_product, keep, now, ttl_secs)?;
    let outcomes = store.outcomes(network)?;
    if outcomes.len() >= FRUITLESS_SCANS && outcomes.iter().take(FRUITLESS_SCANS).all(|f| !f) {
        store.pause(network, now + PAUSE_SECS, now)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn keys(text: &str, addresses: &[&str]) -> Vec<String> {
        let addresses: Vec<IpAddr> = addresses.iter().map(|a| ip(a)).collect();
        cooldown_keys(&Target::parse(text).unwrap(), None, &addresses)
    }

    /// With `scanner.target_port`, a target written without a port is scanned on it, so it
    /// shares its cooldown with the spelling that names that port.
    #[test]
    fn the_configured_target_port_is_the_port_of_a_target_without_one() {
        let keys = |text: &str| {
            let addresses = [ip("192.0.2.7")];
            cooldown_keys(&Target::parse(text).unwrap(), Some(9200), &addresses)
        };
        assert_eq!(keys("vm"), ["vm:9200", "192.0.2.7:9200"]);
        assert_eq!(keys("https://VM/x"), keys("vm:9200"));
        assert_eq!(keys("vm:443"), ["vm:443", "192.0.2.7:443"]);
        let target = Target::parse("vm").unwrap();
        assert_eq!(instance_ports(&target, Some(9200)), [9200]);
        assert_eq!(instance_ports(&target, None), [443, 80]);
    }

    /// One instance, one cooldown (issue 21, item 5): every spelling of an instance has the
    /// keys of the ports its scan connects to; the path, the scheme and the case go.
    #[test]
    fn spellings_of_one_instance_share_their_cooldown_keys() {
        let both = ["vm:443", "vm:80"];
        for text in [
            "vm",
            "VM.",
            "https://vm",
            "https://vm/",
            "https://vm/x",
            "https://vm/%2e",
            "https://vm/./",
            "http://vm",
            "http://vm/x",
        ] {
            assert_eq!(keys(text, &[]), both, "{text}");
        }
        for text in ["vm:443", "https://vm:443", "http://vm:443/x", "vm:443/"] {
            assert_eq!(keys(text, &[]), ["vm:443"], "{text}");
        }
        for text in ["vm:80", "http://vm:80", "https://vm:80/"] {
            assert_eq!(keys(text, &[]), ["vm:80"], "{text}");
        }
        assert_eq!(keys("vm:8443", &[]), ["vm:8443"]);
        // By address: a name and the literal it resolves to meet there.
        assert_eq!(
            keys("localhost:9200", &["127.0.0.1", "::1"]),
            ["localhost:9200", "127.0.0.1:9200", "[::1]:9200"]
        );
        assert_eq!(keys("127.0.0.1:9200", &["127.0.0.1"]), ["127.0.0.1:9200"]);
        assert_eq!(
            keys("[::ffff:127.0.0.1]:9200", &["::ffff:127.0.0.1"]),
            ["[::ffff:127.0.0.1]:9200", "127.0.0.1:9200"]
        );
        assert_eq!(
            keys("[2001:DB8::1]", &["2001:db8::1"]),
            ["[2001:db8::1]:443", "[2001:db8::1]:80"]
        );
        // Every IPv6 form that carries an IPv4 address meets that address (issue 31, item 5).
        for carried in [
            "64:ff9b::c000:20a",                    // NAT64
            "::c000:20a",                           // IPv4-compatible
            "::ffff:0:c000:20a",                    // IPv4-translated (SIIT)
            "2002:c000:20a::1",                     // 6to4
            "2001:0:4136:e378:8000:63bf:3fff:fdf5", // Teredo: the client, inverted
        ] {
            let spelled = format!("[{carried}]:9200");
            assert_eq!(
                keys(&spelled, &[carried])[1..],
                ["192.0.2.10:9200"],
                "{carried}"
            );
        }
        // IPv6's own loopback stays itself.
        assert_eq!(keys("[::1]:9200", &["::1"]), ["[::1]:9200"]);
        assert_eq!(
            keys("cloud.example.com", &["192.0.2.1", "192.0.2.1"]),
            [
                "cloud.example.com:443",
                "cloud.example.com:80",
                "192.0.2.1:443",
                "192.0.2.1:80"
            ]
        );
    }

    #[test]
    fn networks_are_slash_24_and_slash_56() {
        assert_eq!(network_key(ip("203.0.113.77")), "203.0.113.0/24");
        assert_eq!(network_key(ip("::ffff:203.0.113.77")), "203.0.113.0/24");
        assert_eq!(
            network_key(ip("2001:db8:1234:56ff:1::1")),
            "2001:db8:1234:5600::/56"
        );
    }

    #[test]
    fn forwarded_for_counts_only_from_trusted_proxies() {
        let trusted = [(ip("10.0.0.0"), 8), (ip("::1"), 128)];
        // An untrusted peer's header is ignored: it could name anyone.
        assert_eq!(
            client_address(ip("198.51.100.9"), Some("1.2.3.4"), &trusted),
            ip("198.51.100.9")
        );
        // From a trusted proxy: the nearest untrusted hop, read from the right.
        assert_eq!(
            client_address(
                ip("10.1.2.3"),
                Some("6.6.6.6, 203.0.113.5, 10.9.9.9"),
                &trusted
            ),
            ip("203.0.113.5")
        );
        assert_eq!(
            client_address(ip("::1"), Some("[2001:db8::7]:4711"), &trusted),
            ip("2001:db8::7")
        );
        // A trusted proxy without the header, or with garbage, is the client.
        assert_eq!(
            client_address(ip("10.1.2.3"), None, &trusted),
            ip("10.1.2.3")
        );
        assert_eq!(
            client_address(ip("10.1.2.3"), Some("not-an-address"), &trusted),
            ip("10.1.2.3")
        );
        assert_eq!(
            client_address(ip("::ffff:10.1.2.3"), Some("203.0.113.5"), &trusted),
            ip("203.0.113.5")
        );
    }

    #[test]
    fn membership_of_networks() {
        assert!(in_network(ip("10.200.0.1"), (ip("10.0.0.0"), 8)));
        assert!(!in_network(ip("11.0.0.1"), (ip("10.0.0.0"), 8)));
        assert!(in_network(ip("192.0.2.1"), (ip("0.0.0.0"), 0)));
        assert!(in_network(ip("2001:db8::1"), (ip("2001:db8::"), 32)));
        assert!(!in_network(ip("2001:db9::1"), (ip("2001:db8::"), 32)));
        assert!(!in_network(ip("10.0.0.1"), (ip("::"), 0)));
    }
}
