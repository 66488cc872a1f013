//! `check-storage-scanner limits [list | lift NETWORK-OR-TARGET]`: what holds submissions back
//! in the public API's store, and lifting it, against the store `web` uses (`--store`, else
//! the state directory's SQLite file; `--store-timeout`).
//!
//! `list` names every paused network, every target in its cooldown, every network at its
//! daily limit and every address at its rate, each with when it ends. `lift` takes a network
//! as `list` shows it (`203.0.113.0/24`, `2001:db8:0:100::/56`; any address with /24 or /56
//! names its network) and ends its pause (forgetting its recent outcomes, else its next
//! fruitless scan pauses it again) and its day's count; or a target as submitted
//! (`cloud.example.com`, `https://cloud.example.com:8443/`) and ends its cooldown: every key a
//! scan of it spends, its names (`cloud.example.com:443`, `cloud.example.com:80`) and the
//! addresses the name resolves to now with those ports; a bare address (`198.51.100.7`) also
//! loses its count of the minute as a client.

use super::limits::{self, RULES, Rule};
use super::store::{self, Store, StoreResult};
use crate::process::{Outcome, setup_process};
use crate::settings::secrets::Environment;
use crate::settings::{Component, Settings, cli, parse_cidr};
use crate::target::{HostName, Target};
use std::net::IpAddr;

/// The lines of `check-storage-scanner -h` and the manual on this subcommand.
pub const USAGE: (&str, &str) = (
    "limits [list | lift <network-or-target>]",
    "list the public API's paused networks and cooldowns with their ends, or lift one (--store)",
);

pub const TOPIC: (&str, &[&str]) = (
    USAGE.0,
    &[
        "Works on the store of web (--store, else web.sqlite in the state directory; \
         --store-timeout), so every node sharing it sees the change at once. limits (or limits \
         list) prints one line per hold: network_paused (a network whose last 5 scans found no \
         supported instance), target_cooldown (an instance scanned within 5 minutes, one \
         line per name and address with its port), \
         network_daily_limit (50 scans within 24 hours) and rate_limited (10 submissions \
         within a minute from one address), who it holds, and when it ends (RFC 3339, and how \
         long from now); nothing held prints so.",
        "limits lift NETWORK (203.0.113.0/24, 2001:db8:0:100::/56 as list shows it; any \
         address of it with /24 or /56) ends the network's pause, forgetting its recent \
         outcomes, and its count of the day. limits lift TARGET (as submitted: \
         cloud.example.com, https://cloud.example.com:8443/) ends the target's cooldown, which \
         is kept per instance: by its name with each port its scan connects to (the port \
         given, else 443 and 80; as list shows it: cloud.example.com:443) and by each address \
         the name resolves to (198.51.100.7:443); lift resolves the name again and lifts all \
         of them (an address the name no longer resolves to is lifted by giving that \
         address). A bare address (198.51.100.7) also loses its count of the minute as a \
         client. It prints what it lifted, or that \
         nothing held it. Exit 0; 3 with one line naming the fix for a store that cannot be \
         opened (a SQLite file that does not exist is not created) or an argument that is \
         neither a network nor a target.",
    ],
);

/// Something that refuses submissions for now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    /// The API's error code for it (`network_paused`, `target_cooldown`, ...).
    pub code: &'static str,
    /// The network, target or address it holds.
    pub who: String,
    /// When it ends, in Unix milliseconds.
    pub until_ms: i64,
}

/// Every hold at `now_ms`: pauses first, then each rule's full limits, each by name.
pub fn holds(store: &dyn Store, now_ms: i64) -> StoreResult<Vec<Hold>> {
    let mut holds: Vec<Hold> = store
        .pauses(now_ms.div_euclid(1000))?
        .into_iter()
        .map(|(network, until)| Hold {
            code: limits::PAUSED,
            who: network,
            until_ms: until * 1000,
        })
        .collect();
    for rule in RULES {
        for (key, wait) in
            store.full_limits(rule.prefix, rule.limit, rule.window_secs * 1000, now_ms)?
        {
            holds.push(Hold {
                code: rule.code,
                who: key[rule.prefix.len()..].to_string(),
                until_ms: now_ms + wait,
            });
        }
    }
    Ok(holds)
}

/// What `lift` was given.
#[derive(Debug, PartialEq, Eq)]
enum Subject {
    /// A network key (`203.0.113.0/24`).
    Network(String),
    /// A target, and the client address it also is when it was given as a bare address.
    Target {
        target: Box<Target>,
        address: Option<IpAddr>,
    },
}

fn subject(text: &str) -> Result<Subject, String> {
    let text = text.trim();
    if let Some((_, length)) = text.split_once('/')
        && let Some((address, given)) = parse_cidr(text)
        && length.trim().parse::<u8>().is_ok()
    {
        let network = limits::network_key(address);
        let expected = if network.ends_with("/24") { 24 } else { 56 };
        if given != expected {
            return Err(format!(
                "{text} is not a network the limits count: they count IPv4 /24 and IPv6 /56 \
                 networks, as limits list shows them ({network})"
            ));
        }
        return Ok(Subject::Network(network));
    }
    let target = Target::parse(text).map_err(|e| {
        format!(
            "{text:?} is neither a network (203.0.113.0/24) nor a target (cloud.example.com): {}",
            e.0
        )
    })?;
    Ok(Subject::Target {
        target: Box::new(target),
        // Only a bare address is also a client's: 127.0.0.1:8443 is an instance.
        address: text.parse().ok(),
    })
}

/// Resolves a name for `lift` (any address: an operator lifts what a scan spent).
pub type Resolve<'a> = &'a dyn Fn(&str, u16) -> Vec<IpAddr>;

/// The system resolver (with the operator's pinned names) within the API's lookup time.
fn resolve_now(host: &str, port: u16) -> Vec<IpAddr> {
    crate::net::guard::resolve(host, port, super::lookups::LOOKUP_TIMEOUT).unwrap_or_default()
}

/// Lifts what holds `text` (a network or a target) at `now`: one line per thing lifted, or
/// one saying that nothing held it. A target's cooldown is lifted by every key a scan of it
/// spends: its names (host and each port its scan connects to) and the addresses its name
/// resolves to now (`resolve`) with those ports. `Err` is a line naming the fix.
pub fn lift(
    store: &dyn Store,
    text: &str,
    now: i64,
    default_port: Option<u16>,
    resolve: Resolve<'_>,
) -> Result<Vec<String>, String> {
    let failed = |e: store::StoreError| e.to_string();
    let forget = |rule: &Rule, who: &str, what: &str| -> Result<Option<String>, String> {
        let key = rule.limit_for(who).key;
        let forgotten = store.forget_hits(&key).map_err(failed)?;
        Ok(forgotten.then(|| format!("lifted {what} of {who}")))
    };
    let lifted: Vec<String> = match subject(text)? {
        Subject::Network(network) => {
            let paused = store.lift_pause(&network, now).map_err(failed)?;
            [
                paused.then(|| {
                    format!("lifted the pause of {network} (its recent outcomes forgotten)")
                }),
                forget(&limits::NETWORK_DAY, &network, "the daily count")?,
            ]
            .into_iter()
            .flatten()
            .collect()
        }
        Subject::Target { target, address } => {
            let addresses = match target.host {
                // On the first port its scan connects to (there is one at least).
                HostName::Domain(_) => {
                    let port = limits::instance_ports(&target, default_port)[0];
                    resolve(&target.host_str(), port)
                }
                HostName::Ipv4(ip) => vec![IpAddr::V4(ip)],
                HostName::Ipv6(ip) => vec![IpAddr::V6(ip)],
            };
            let mut lifted = Vec::new();
            for key in limits::cooldown_keys(&target, default_port, &addresses) {
                lifted.extend(forget(&limits::TARGET_COOLDOWN, &key, "the cooldown")?);
            }
            if let Some(address) = address.map(|a| a.to_string()) {
                let minute = forget(&limits::ADDRESS_RATE, &address, "the count of the minute")?;
                lifted.extend(minute);
            }
            lifted
        }
    };
    if lifted.is_empty() {
        return Ok(vec![format!("nothing held {}", text.trim())]);
    }
    Ok(lifted)
}

/// "in 23 h 59 min", "in 4 min 8 s", "in 12 s".
fn in_words(ms: i64) -> String {
    let secs = (ms.max(0) + 999) / 1000;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("in {s} s"),
        (0, _) => format!("in {m} min {s} s"),
        _ => format!("in {h} h {m} min"),
    }
}

/// The lines of `limits list`.
pub fn list_text(holds: &[Hold], now_ms: i64) -> String {
    if holds.is_empty() {
        return "nothing holds submissions back: no network is paused, no target, network or \
                address is at its limit\n"
            .to_string();
    }
    let code_width = holds.iter().map(|h| h.code.len()).max().unwrap_or(0);
    let who_width = holds.iter().map(|h| h.who.len()).max().unwrap_or(0);
    let mut text = String::new();
    for hold in holds {
        let until = jiff::Timestamp::from_millisecond(hold.until_ms)
            .map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string())
            .unwrap_or_else(|_| hold.until_ms.to_string());
        text.push_str(&format!(
            "{:<code_width$}  {:<who_width$}  until {until} ({})\n",
            hold.code,
            hold.who,
            in_words(hold.until_ms - now_ms),
        ));
    }
    text
}

/// `check-storage-scanner limits ...`.
pub fn main(line: cli::CommandLine, rest: &[String], env: &dyn Environment) -> Outcome {
    Outcome::of(run(line, rest, env))
}

/// What `limits` prints, or the line naming the fix.
fn run(line: cli::CommandLine, rest: &[String], env: &dyn Environment) -> Result<String, String> {
    let lifting = match rest {
        [] => None,
        [action] if action == "list" => None,
        [action, what] if action == "lift" => Some(what.clone()),
        [action] if action == "lift" => {
            let missing = "limits lift needs what to lift: a network (203.0.113.0/24) or a \
                           target (cloud.example.com), as limits list shows them";
            return Err(missing.into());
        }
        _ => {
            let shown: String = rest.join(" ").chars().take(60).collect();
            return Err(format!(
                "limits takes list, or lift NETWORK-OR-TARGET, not {shown:?}"
            ));
        }
    };
    let settings =
        Settings::<crate::settings::WebSettings>::resolve_for(&line, env, Component::Limits)
            .map_err(|e| e.0)?;
    let now = setup_process(&settings)?.0.as_millisecond();
    let spec = super::server::store_spec(&settings);
    if let Some(path) = spec.strip_prefix("sqlite:")
        && !std::path::Path::new(path).is_file()
    {
        return Err(format!(
            "store {spec} does not exist; name the store web uses with --store (or its state \
             directory with COS_STATE_DIR)"
        ));
    }
    let store = store::open(&spec, settings.own.store_timeout).map_err(|e| e.0)?;
    Ok(match lifting {
        None => list_text(&holds(&*store, now).map_err(|e| e.0)?, now),
        Some(what) => {
            let (secs, port) = (now.div_euclid(1000), settings.scan.target_port);
            let lines = lift(&*store, &what, secs, port, &resolve_now)?;
            lines.into_iter().map(|l| l + "\n").collect()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_and_targets_are_told_apart() {
        let network = |n: &str| Ok(Subject::Network(n.to_string()));
        assert_eq!(subject("203.0.113.0/24"), network("203.0.113.0/24"));
        assert_eq!(subject(" 203.0.113.77/24 "), network("203.0.113.0/24"));
        assert_eq!(
            subject("2001:db8:0:1ff::/56"),
            network("2001:db8:0:100::/56")
        );
        assert!(subject("203.0.113.0/16").unwrap_err().contains("/24"));
        let target = |text: &str, address: Option<&str>| {
            Ok(Subject::Target {
                target: Box::new(Target::parse(text).unwrap()),
                address: address.map(|a| a.parse().unwrap()),
            })
        };
        assert_eq!(
            subject("https://Cloud.Example.com:8443/"),
            target("https://Cloud.Example.com:8443/", None)
        );
        assert_eq!(
            subject("198.51.100.7:8443"),
            target("198.51.100.7:8443", None)
        );
        assert_eq!(
            subject("198.51.100.7"),
            target("198.51.100.7", Some("198.51.100.7"))
        );
        assert!(
            subject("ftp://x")
                .unwrap_err()
                .contains("neither a network")
        );
    }

    /// A cooldown is lifted by every key a scan spent: a name lifts itself and the addresses
    /// it resolves to; an address lifts itself, whichever name spent it.
    #[test]
    fn a_target_s_cooldown_is_lifted_by_name_and_address() {
        let dir = std::env::temp_dir().join(format!(
            "css-admin-lift-{}-{}",
            std::process::id(),
            crate::server::new_uuid().unwrap()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let store = store::sqlite::SqliteStore::open(dir.join("web.sqlite")).unwrap();
        let now = 1_795_600_000;
        let client: IpAddr = "198.51.100.7".parse().unwrap();
        let loopback: Vec<IpAddr> = vec!["127.0.0.1".parse().unwrap(), "::1".parse().unwrap()];
        // What the guard resolves: a name the loopback addresses, a literal itself.
        let scan = |text: &str| {
            let target = Target::parse(text).unwrap();
            let addresses = match target.host {
                HostName::Domain(_) => loopback.clone(),
                _ => vec![target.host_str().parse().unwrap()],
            };
            let keys = limits::cooldown_keys(&target, None, &addresses);
            limits::admit_scan(&store, client, &keys, now * 1000)
                .unwrap()
                .is_ok()
        };
        let resolve = |host: &str, _: u16| -> Vec<IpAddr> {
            if host == "localhost" {
                loopback.clone()
            } else {
                Vec::new()
            }
        };
        assert!(scan("localhost:9200"));
        assert!(
            !scan("https://127.0.0.1:9200/"),
            "the address is cooling down"
        );
        assert_eq!(
            lift(&store, "localhost:9200", now, None, &resolve).unwrap(),
            [
                "lifted the cooldown of localhost:9200",
                "lifted the cooldown of 127.0.0.1:9200",
                "lifted the cooldown of [::1]:9200",
            ]
        );
        assert!(scan("127.0.0.1:9200"));
        assert!(!scan("localhost:9200"), "its address is cooling down");
        // Spent by the literal's scan: the address and nothing else.
        assert_eq!(
            lift(&store, "http://127.0.0.1:9200/x", now, None, &resolve).unwrap(),
            ["lifted the cooldown of 127.0.0.1:9200"]
        );
        assert_eq!(
            lift(&store, "localhost:9200", now, None, &resolve).unwrap(),
            ["nothing held localhost:9200"]
        );
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ends_are_said_in_words() {
        assert_eq!(in_words(12_000), "in 12 s");
        assert_eq!(in_words(11_001), "in 12 s");
        assert_eq!(in_words(248_000), "in 4 min 8 s");
        assert_eq!(in_words(86_322_000), "in 23 h 58 min");
    }
}
