//! The guard of the public scan API end to end, on loopback only: a target that is (or
//! resolves to) a non-public address is refused before any connection; with the opt-out a
//! guarded scan reaches its target only at the addresses the guard resolved, once, for every
//! connection (HTTPS, the legacy-TLS handshake, debug ports, `--all-addresses`), which the
//! fakes' own request counts show. Resolution is injected: no test asks real DNS anything.

use crate::support::plugin::{NOW, healthy, hermetic, hermetic_with_debug_ports};
use crate::support::{FakeInstance, start_debug_listener};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use storage_security::budget::Budget;
use storage_security::clock::Now;
use storage_security::net::guard::{self, Blocked, Pins, Refusal};
use storage_security::report::{ScanResult, Status};
use storage_security::settings::Settings;

const TIMEOUT: Duration = Duration::from_secs(5);

/// A made-up name (`.test` is reserved: it exists in no DNS), so a connection that looked it
/// up instead of taking the pins would fail.
const PINNED: &str = "pinned.test";

/// A lookup that answers `addresses` for any name and counts its calls.
fn injected(
    addresses: &[&str],
    calls: &Arc<AtomicUsize>,
) -> impl FnOnce(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + 'static {
    let addresses: Vec<IpAddr> = addresses.iter().map(|a| a.parse().unwrap()).collect();
    let calls = calls.clone();
    move |_: &str, port| {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok(addresses
            .iter()
            .map(|ip| SocketAddr::new(*ip, port))
            .collect())
    }
}

fn never() -> impl FnOnce(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + 'static {
    |name: &str, _| panic!("{name} was looked up")
}

/// The settings of a hermetic scan of `host` (as `-H` takes it) with `extra` flags, probing
/// the debug ports `debug_ports` (none when empty).
fn settings(name: &str, host: &str, ca: &Path, debug_ports: &str, extra: &[&str]) -> Settings {
    let flags = if debug_ports.is_empty() {
        hermetic(ca)
    } else {
        hermetic_with_debug_ports(ca)
    };
    let mut args = vec!["-H", host, "--timeout", "5"];
    args.extend(flags.iter().map(String::as_str));
    args.extend(extra);
    crate::support::plugin::settings(
        &format!("guard-{name}"),
        &args,
        &[("COS_SCANNER_DEBUG_PORTS", debug_ports)],
    )
}

/// Scans the first target of `settings` with a scanner pinned to `pins`.
fn guarded_scan(settings: &Settings, pins: Pins) -> Result<ScanResult, String> {
    let now = Now(NOW.parse().unwrap());
    let budget = Budget::new(Instant::now(), settings.time_budget);
    settings
        .scanner(now, budget)?
        .with_pins(pins)
        .scan(&settings.targets[0])
}

fn status_of(result: &ScanResult, id: &str) -> Option<Status> {
    result
        .findings
        .iter()
        .find(|f| f.id == id)
        .map(|f| f.status)
}

#[test]
fn a_loopback_instance_is_refused_before_any_connection() {
    let fake = FakeInstance::start(healthy("4.0.0"));
    let port = fake.port();
    for literal in ["127.0.0.1", "[::1]", "::ffff:127.0.0.1", "::ffff:7f00:1"] {
        let refusal = guard::guarded_with(literal, port, TIMEOUT, false, never()).unwrap_err();
        assert!(
            matches!(
                refusal,
                Refusal::Blocked {
                    class: Blocked::Loopback,
                    ..
                }
            ),
            "{literal}: {refusal:?}"
        );
        assert!(
            refusal.to_string().ends_with("is a loopback address"),
            "{refusal}"
        );
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let refusal = guard::guarded_with(
        PINNED,
        port,
        TIMEOUT,
        false,
        injected(&["127.0.0.1"], &calls),
    )
    .unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "pinned.test resolves to 127.0.0.1, a loopback address"
    );
    assert!(matches!(refusal, Refusal::Blocked { .. }), "{refusal:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(fake.request_count(), 0, "{:#?}", fake.requests());
}

#[test]
fn one_private_address_among_public_ones_refuses_the_name() {
    let calls = Arc::new(AtomicUsize::new(0));
    for answer in [
        &["8.8.8.8", "2606:4700:4700::1111", "10.0.0.5"][..],
        &["10.0.0.5", "8.8.8.8"][..],
        &[
            "2a00:1450::1",
            "1.1.1.1",
            "10.0.0.5",
            "2606:4700:4700::1111",
        ][..],
    ] {
        let refusal = guard::guarded_with(
            "cloud.example.com",
            443,
            TIMEOUT,
            false,
            injected(answer, &calls),
        )
        .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "cloud.example.com resolves to 10.0.0.5, a private address",
            "{answer:?}"
        );
    }
    // Other encodings of non-public addresses among public ones refuse the name as well.
    for (hidden, class) in [
        ("64:ff9b::a00:1", "a private address"),
        ("2002:c0a8:0101::1", "a private address"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "a private address"),
        ("::ffff:169.254.169.254", "a link-local address"),
        ("fd00::1", "a unique-local address (fc00::/7)"),
    ] {
        let refusal = guard::guarded_with(
            "cloud.example.com",
            443,
            TIMEOUT,
            false,
            injected(&["8.8.8.8", hidden], &calls),
        )
        .unwrap_err();
        let message = refusal.to_string();
        assert!(
            message.starts_with("cloud.example.com resolves to ") && message.ends_with(class),
            "{hidden}: {message}"
        );
    }
    // Public only: pinned, all of them.
    let pins = guard::guarded_with(
        "cloud.example.com",
        443,
        TIMEOUT,
        false,
        injected(&["8.8.8.8", "2606:4700:4700::1111"], &calls),
    )
    .unwrap();
    assert_eq!(pins.addresses().len(), 2);
    // The opt-out lets the private address through.
    let pins = guard::guarded_with(
        "cloud.example.com",
        443,
        TIMEOUT,
        true,
        injected(&["8.8.8.8", "10.0.0.5"], &calls),
    )
    .unwrap();
    assert_eq!(pins.addresses().len(), 2);
}

#[test]
fn a_guarded_scan_connects_only_to_the_pinned_addresses() {
    let config = healthy("4.0.0");
    let fake = FakeInstance::start(config.clone());
    let port = fake.port();
    // A second node of the name on another loopback address, same port (`--all-addresses`).
    let node = FakeInstance::start_at(config.clone(), SocketAddr::from(([127, 0, 0, 2], port)))
        .expect("a fake node on 127.0.0.2");
    let debug = start_debug_listener(&config);
    let calls = Arc::new(AtomicUsize::new(0));
    let pins = guard::guarded_with(
        PINNED,
        port,
        TIMEOUT,
        true,
        injected(&["127.0.0.1", "127.0.0.2"], &calls),
    )
    .unwrap();
    let debug_port = debug.port().to_string();
    let settings = settings(
        "pinned",
        &format!("{PINNED}:{port}"),
        &fake.ca_file(),
        &debug_port,
        &["--all-addresses"],
    );
    let result = guarded_scan(&settings, pins).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1, "resolved exactly once");
    assert!(
        result.error.is_none(),
        "{PINNED} does not exist in DNS, yet the pinned scan reached the fake: {:#?}",
        result.error
    );
    assert_eq!(
        result.product.as_ref().map(|p| p.name.as_str()),
        Some("OpenCloud")
    );
    // HTTPS: the probes reached the fake, asking for the pinned name.
    let requests = fake.requests();
    assert!(requests.iter().any(|r| r.path() == "/status.php"));
    let host = format!("{PINNED}:{port}");
    for request in requests.iter().chain(node.requests().iter()) {
        assert_eq!(request.header("Host"), Some(host.as_str()), "{request:?}");
        if request.tls {
            assert_eq!(request.sni.as_deref(), Some(PINNED), "{request:?}");
        }
    }
    // The legacy-TLS handshake was decided on the pinned address (refused by the fake's
    // rustls), not lost to a failed lookup.
    assert_eq!(
        status_of(&result, "tlsDeprecatedProtocol"),
        Some(Status::Passed),
        "{:#?}",
        result.findings
    );
    // Debug ports: the listener on the pinned address was found and asked.
    assert!(
        debug.request_count() > 0,
        "the debug listener was not reached"
    );
    // --all-addresses: the second pinned address was probed as a node.
    assert!(
        node.requests().iter().any(|r| r.path() == "/status.php"),
        "the second node was not reached"
    );
    // The DNS check reports the pinned addresses (nothing looked up again).
    let addresses = result
        .findings
        .iter()
        .find(|f| f.id == "dnsAddresses")
        .expect("a dnsAddresses finding");
    assert!(
        addresses.detail.contains("127.0.0.1") && addresses.detail.contains("127.0.0.2"),
        "{}",
        addresses.detail
    );
}

#[test]
fn a_scanner_guarded_for_one_name_refuses_another_target() {
    let fake = FakeInstance::start(healthy("4.0.0"));
    let pins = Pins::new(PINNED, vec!["127.0.0.2".parse().unwrap()]);
    let settings = settings("other", &fake.host_port(), &fake.ca_file(), "", &[]);
    let error = guarded_scan(&settings, pins).unwrap_err();
    assert!(error.contains("not the target"), "{error}");
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn an_address_literal_target_is_scanned_at_itself() {
    let fake = FakeInstance::start(healthy("4.0.0"));
    let pins = guard::guarded_with("127.0.0.1", fake.port(), TIMEOUT, true, never()).unwrap();
    let settings = settings("literal", &fake.host_port(), &fake.ca_file(), "", &[]);
    let result = guarded_scan(&settings, pins).unwrap();
    assert!(result.error.is_none(), "{:#?}", result.error);
    assert!(fake.request_count() > 0);
}
