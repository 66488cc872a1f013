//! The address guard inside a request: a submitted target's name is resolved within
//! [`LOOKUP_TIMEOUT`] (2 s), by at most [`MAX_LOOKUPS`] resolver threads alive at once in the
//! whole process.
//!
//! The system resolver (`getaddrinfo`) cannot be interrupted: a lookup that outlives its
//! request's deadline can only be left to finish on its own thread, which ends when the
//! resolver gives up (its own timeouts and attempts: seconds). Spawning one such thread per
//! request let a flood of slow names grow the process by a thread per request. So a lookup
//! takes a seat first, and its thread gives the seat back when the resolver answers; when
//! every seat is taken the request is answered at once (503 with `Retry-After`, [`Busy`])
//! instead of waiting or spawning. Each address may start at most ten lookups a minute (the
//! attempt is counted before the lookup, `limits::admit_attempt`), so the seats are shared
//! out by the limits. Address literals take no seat: they are their own answer.
//!
//! [`Busy`]: TargetRefusal::Busy

use super::store::ScanRecord;
use crate::net::guard::{self, Pins};
use crate::server::occupancy::Occupancy;
use crate::target::{HostName, Target};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// How long a submission waits for its target's name to resolve.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(2);
/// Resolver threads alive at once, in the whole process.
pub const MAX_LOOKUPS: usize = 8;
/// What a request told that every seat is taken waits before it tries again.
pub const BUSY_RETRY_SECS: i64 = 2;

/// Decides whether a target may be scanned at all (the address guard, `lookups`): the
/// addresses its name resolved to (every one allowed), or why not.
pub type TargetCheck = dyn Fn(&Target) -> Result<Vec<IpAddr>, TargetRefusal> + Send + Sync;

/// Why the address guard does not let a target through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetRefusal {
    /// Not to be scanned (not public, or not resolvable in time): 400 on `target_url`, with
    /// this message.
    Refused(String),
    /// Every resolver thread is busy with a name: 503, try again shortly.
    Busy,
}

/// A resolver: the system's (with the operator's pinned names), or a test's.
pub type Lookup = dyn Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync;

/// The seats of the resolver threads, and the resolver they run.
pub struct Lookups {
    /// One seat per resolver thread alive (one key: the cap is the total).
    seats: Arc<Occupancy>,
    timeout: Duration,
    lookup: Arc<Lookup>,
}

impl Lookups {
    /// The system resolver, [`MAX_LOOKUPS`] seats, [`LOOKUP_TIMEOUT`].
    pub fn system() -> Lookups {
        let system = Arc::new(crate::net::resolve::lookup);
        Lookups::with(system, MAX_LOOKUPS, LOOKUP_TIMEOUT)
    }

    /// `lookup` with `max` seats, each lookup waited for `timeout` at most.
    pub fn with(lookup: Arc<Lookup>, max: usize, timeout: Duration) -> Lookups {
        Lookups {
            seats: Occupancy::new(max, Some(max)),
            timeout,
            lookup,
        }
    }

    /// Resolver threads alive now (seats taken), as the tests watch them.
    #[cfg(test)]
    pub fn alive(&self) -> usize {
        self.seats.taken()
    }

    /// Resolves `target` (a name on a seat of its own, within the timeout) and checks every
    /// address with the guard (`allow_private`: `--allow-private-targets`): the pins, or why
    /// not.
    ///
    /// A name public DNS cannot know (`.invalid`, `.internal`, a single label; see
    /// `net::dns::special_use`) is refused at once without a lookup unless private targets are
    /// allowed (an internal deployment's resolver knows such names): it could only resolve to
    /// an address the guard refuses, and asking would send the question out for nothing.
    /// `localhost` names resolve on the machine and go on to the guard.
    pub fn guard(&self, target: &Target, allow_private: bool) -> Result<Pins, TargetRefusal> {
        let seat = match &target.host {
            HostName::Domain(name) => {
                if !allow_private
                    && !crate::net::dns::is_localhost(name)
                    && let Some(why) = crate::net::dns::special_use(name)
                {
                    return Err(TargetRefusal::Refused(format!(
                        "{name} is {why}: public DNS never resolves it; name the instance by \
                         its public name"
                    )));
                }
                // A resolver thread's seat, given back when dropped (by the thread, once its
                // lookup returned).
                Some(self.seats.take("lookup").ok_or(TargetRefusal::Busy)?)
            }
            HostName::Ipv4(_) | HostName::Ipv6(_) => None,
        };
        let lookup = self.lookup.clone();
        let port = target.port.unwrap_or(443);
        guard::guarded_with(
            &target.host_str(),
            port,
            self.timeout,
            allow_private,
            move |name: &str, port| {
                // Held on the resolver's thread until its answer, however long the request
                // waited for it.
                let _seat = seat;
                lookup(name, port)
            },
        )
        .map_err(|refusal| TargetRefusal::Refused(refusal.to_string()))
    }
}

/// Addresses of a name its scan may connect to (and its cooldown is kept for): the first
/// ones the resolver answered, as many as a connection of the scan tries.
pub const MAX_ADDRESSES: usize = 16;

/// The API's target check on `lookups`: the guard's addresses of a target (at most
/// [`MAX_ADDRESSES`], every one checked), or why not.
pub fn target_check(lookups: Lookups, allow_private: bool) -> Arc<TargetCheck> {
    Arc::new(move |target: &Target| {
        lookups.guard(target, allow_private).map(|pins| {
            pins.addresses()
                .iter()
                .take(MAX_ADDRESSES)
                .copied()
                .collect()
        })
    })
}

/// The pins a worker scans `record` with: the addresses its submission was guarded at (and
/// its cooldown spent on), judged again by the guard (the operator may have dropped
/// `--allow-private-targets` since); no lookup is made, so a name whose DNS answer changed
/// since (rebinding) reaches nothing new. A record without addresses (written before they
/// were kept) is resolved by `resolve`.
pub fn scan_pins(
    record: &ScanRecord,
    target: &Target,
    allow_private: bool,
    resolve: impl FnOnce() -> Result<Pins, String>,
) -> Result<Pins, String> {
    if record.addresses.is_empty() {
        return resolve();
    }
    guard::check(&target.host_str(), &record.addresses, allow_private)
        .map_err(|refusal| refusal.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Instant;

    fn target(text: &str) -> Target {
        Target::parse(text).unwrap()
    }

    /// A resolver that answers only when the test lets it (or ends), counting the lookups it
    /// was asked for and telling `reached` of each as it starts.
    struct Held {
        release: Mutex<Option<mpsc::Sender<()>>>,
        asked: Arc<AtomicUsize>,
        reached: mpsc::Receiver<()>,
    }

    fn held() -> (Held, Arc<Lookup>) {
        let (release, wait) = mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(wait));
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        let (reaching, reached) = mpsc::channel::<()>();
        let lookup: Arc<Lookup> = Arc::new(move |_: &str, port| {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = reaching.send(());
            // Every held lookup ends when the sender is dropped.
            let _ = wait.lock().unwrap().recv();
            Ok(vec![SocketAddr::new("192.0.2.1".parse().unwrap(), port)])
        });
        (
            Held {
                release: Mutex::new(Some(release)),
                asked,
                reached,
            },
            lookup,
        )
    }

    /// A name public DNS cannot know is refused without asking the resolver, unless private
    /// targets are allowed; localhost names go on to the guard.
    #[test]
    fn special_use_names_are_refused_without_a_lookup() {
        let (held, lookup) = held();
        let lookups = Lookups::with(lookup, 2, Duration::from_millis(100));
        for name in ["nx.invalid", "cloud.internal", "intranet", "a.test"] {
            let refused = lookups.guard(&target(name), false);
            let Err(TargetRefusal::Refused(reason)) = refused else {
                panic!("{name}: {refused:?}");
            };
            assert!(reason.contains("public DNS never resolves it"), "{reason}");
        }
        assert_eq!(held.asked.load(Ordering::SeqCst), 0);
        // Allowed private targets: the operator's resolver is asked.
        let _ = lookups.guard(&target("cloud.internal"), true);
        assert_eq!(held.asked.load(Ordering::SeqCst), 1);
        drop(held);
    }

    /// A flood of slow names cannot grow the resolver threads past the seats: each lookup is
    /// given up at its deadline, a request finding every seat taken is answered at once
    /// without a lookup, and the seats come back when the resolver answers.
    #[test]
    fn slow_names_hold_at_most_the_seats_and_the_rest_are_told_at_once() {
        let (held, lookup) = held();
        let lookups = Lookups::with(lookup, 2, Duration::from_millis(100));
        for n in 0..2 {
            let started = Instant::now();
            let refused = lookups.guard(&target(&format!("slow{n}.example.com")), false);
            let Err(TargetRefusal::Refused(reason)) = refused else {
                panic!("{n}: {refused:?}");
            };
            assert!(reason.contains("timed out"), "{reason}");
            assert!(started.elapsed() < Duration::from_secs(1), "{n}");
        }
        assert_eq!(lookups.alive(), 2);
        for n in 2..20 {
            let started = Instant::now();
            let busy = lookups.guard(&target(&format!("slow{n}.example.com")), false);
            assert!(matches!(busy, Err(TargetRefusal::Busy)), "{n}: {busy:?}");
            assert!(started.elapsed() < Duration::from_millis(50), "{n}");
        }
        // Only the two seated lookups ever reached the resolver. A seated thread may reach it
        // after its caller gave up (a loaded machine starts threads late), so wait for both.
        for n in 0..2 {
            let reached = held.reached.recv_timeout(Duration::from_secs(5));
            assert!(
                reached.is_ok(),
                "seated lookup {n} never reached the resolver"
            );
        }
        assert_eq!(held.asked.load(Ordering::SeqCst), 2);
        // An address literal takes no seat: it is judged at once.
        let literal = lookups.guard(&target("127.0.0.1:8443"), true);
        assert_eq!(
            literal.unwrap().addresses(),
            ["127.0.0.1".parse::<std::net::IpAddr>().unwrap()]
        );
        let refused = lookups.guard(&target("10.0.0.1"), false);
        assert!(
            matches!(refused, Err(TargetRefusal::Refused(_))),
            "{refused:?}"
        );
        // The resolver answers: its threads end and give their seats back.
        drop(held.release.lock().unwrap().take());
        let until = Instant::now() + Duration::from_secs(5);
        while lookups.alive() > 0 {
            assert!(
                Instant::now() < until,
                "seats still taken: {}",
                lookups.alive()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let pins = lookups.guard(&target("again.example.com"), true).unwrap();
        assert_eq!(
            pins.addresses(),
            ["192.0.2.1".parse::<std::net::IpAddr>().unwrap()]
        );
        assert_eq!(lookups.alive(), 0);
    }

    /// A worker scans the addresses the submission was guarded at, without a lookup of its
    /// own; a record of before they were kept is resolved.
    #[test]
    fn a_record_is_scanned_at_the_addresses_it_was_guarded_at() {
        let target = target("https://cloud.example.com/x");
        let record = |addresses: &[&str]| ScanRecord {
            addresses: addresses.iter().map(|a| a.parse().unwrap()).collect(),
            ..ScanRecord::queued(
                "u".into(),
                "cloud.example.com/x".into(),
                "n".into(),
                Default::default(),
                0,
                60,
            )
        };
        let never = || -> Result<Pins, String> { panic!("looked up") };
        let pins = scan_pins(&record(&["93.184.216.34"]), &target, false, never).unwrap();
        assert_eq!(pins.name(), "cloud.example.com");
        assert_eq!(
            pins.addresses(),
            ["93.184.216.34".parse::<std::net::IpAddr>().unwrap()]
        );
        // Judged again: private addresses only with --allow-private-targets.
        let refused = scan_pins(&record(&["127.0.0.1"]), &target, false, never).unwrap_err();
        assert_eq!(
            refused,
            "cloud.example.com resolves to 127.0.0.1, a loopback address"
        );
        assert!(scan_pins(&record(&["127.0.0.1"]), &target, true, never).is_ok());
        let resolved = scan_pins(&record(&[]), &target, false, || {
            Ok(Pins::new(
                "cloud.example.com",
                vec!["192.0.2.9".parse().unwrap()],
            ))
        });
        assert_eq!(resolved.unwrap().addresses().len(), 1);
    }

    #[test]
    fn a_name_that_answers_is_guarded_and_gives_its_seat_back() {
        let lookup: Arc<Lookup> =
            Arc::new(|_: &str, port| Ok(vec![SocketAddr::new("10.1.2.3".parse().unwrap(), port)]));
        let lookups = Lookups::with(lookup, 1, LOOKUP_TIMEOUT);
        for _ in 0..3 {
            let refused = lookups.guard(&target("inside.example.com"), false);
            let Err(TargetRefusal::Refused(reason)) = refused else {
                panic!("{refused:?}");
            };
            assert_eq!(
                reason,
                "inside.example.com resolves to 10.1.2.3, a private address"
            );
            let until = Instant::now() + Duration::from_secs(5);
            while lookups.alive() > 0 {
                assert!(Instant::now() < until);
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}
