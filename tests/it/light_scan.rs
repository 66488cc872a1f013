//! What a scan costs the instance, from the fake instance's own counters: a healthy scan opens
//! at most `CONNECTIONS_PER_SCAN` connections to the scanned port (at once and in all), does
//! one full TLS handshake and resumes the rest, and the demo sign-ins run beside each other
//! and beside the other probes instead of after them.

use crate::support::plugin::{Run, healthy, scan};
use crate::support::{FakeInstance, InstanceConfig, RecordedRequest, TlsMode, Traffic};
use std::time::Duration;
use storage_security::family::ProductFamily;
use storage_security::net::http::{Client, ClientOptions, Endpoint, Keep, Scheme};
use storage_security::net::tls::{EndpointTls, Requirement, Roots, Route, TrustedBy};
use storage_security::probe::{CONNECTIONS_PER_SCAN, HTTP_CONNECTIONS, plan};

/// How long a finished scan's connections may take to be seen closed by the fake. The
/// plugin has exited by then, so this only waits for the fake's threads to notice.
const SETTLE: Duration = Duration::from_secs(20);

/// Scans `fake` once and returns what the scan cost it, once every connection has closed.
fn counted_scan(fake: &FakeInstance, name: &str, extra: &[&str]) -> (Run, Traffic) {
    fake.reset_traffic();
    let run = scan(name, &fake.host_port(), fake, extra);
    assert!(
        fake.wait_idle(SETTLE),
        "a connection of the scan was still open {SETTLE:?} after it ended"
    );
    (run, fake.traffic())
}

fn is_sign_in(r: &RecordedRequest) -> bool {
    r.method == "POST" && r.path() == plan::LOGON_PATH
}

/// The fake's TLS ClientHello refusals are the legacy-TLS probe's; every other connection is
/// the HTTP client's, and all but its first must have resumed the first one's session.
fn assert_light(traffic: &Traffic, what: &str) {
    assert!(
        traffic.connections <= CONNECTIONS_PER_SCAN,
        "{what} opened {} connections (at most {CONNECTIONS_PER_SCAN}): {traffic:?}",
        traffic.connections
    );
    assert!(
        traffic.peak_open <= CONNECTIONS_PER_SCAN,
        "{what} had {} connections open at once (at most {CONNECTIONS_PER_SCAN}): {traffic:?}",
        traffic.peak_open
    );
    assert_eq!(
        traffic.full_handshakes, 1,
        "{what}: one full TLS handshake (the inspection's), the others resumed: {traffic:?}"
    );
    assert_eq!(
        traffic.resumed_handshakes + traffic.full_handshakes + traffic.failed_handshakes,
        traffic.connections,
        "{what}: every connection is the inspected one, a resumed one or the legacy-TLS \
         ClientHello: {traffic:?}"
    );
}

#[test]
fn a_healthy_scan_opens_at_most_four_connections_and_resumes_tls() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let (run, traffic) = counted_scan(&fake, "light-healthy", &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_light(&traffic, "a healthy scan");
    // Everything the scan asks still reaches the instance, over those few connections.
    assert_eq!(traffic.requests, fake.request_count(), "{traffic:?}");
    assert!(fake.requests().iter().filter(|r| is_sign_in(r)).count() == 5);
    // The legacy-TLS probe settles a server that refuses TLS 1.0 and 1.1 with one hello.
    assert_eq!(traffic.failed_handshakes, 1, "{traffic:?}");
}

#[test]
fn a_remediation_check_keeps_to_the_same_budget() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let (run, traffic) = counted_scan(
        &fake,
        "light-verify",
        &[
            "--verify-remediation",
            "exposed,demoUsersDisabled,tlsDeprecatedProtocol",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_light(&traffic, "a remediation check");
}

#[test]
fn demo_sign_ins_run_beside_each_other_and_beside_the_other_probes() {
    // Each sign-in is held until as many are in flight as the scan has HTTP connections: a
    // scan that signs in fewer at a time never gets there, and the fake records the wait.
    let accounts = ProductFamily::OpenCloud.describe().demo_accounts.len();
    let fake = FakeInstance::start(healthy("8.1.0").logon_gate(HTTP_CONNECTIONS, accounts));
    let (run, traffic) = counted_scan(&fake, "light-sign-ins", &["--timeout", "30"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let sign_ins = fake.sign_ins();
    assert!(
        !sign_ins.gate_timed_out,
        "a sign-in waited in vain for {HTTP_CONNECTIONS} in flight at once: {sign_ins:?}"
    );
    assert_eq!(sign_ins.count, accounts);
    assert!(sign_ins.peak_in_flight >= HTTP_CONNECTIONS, "{sign_ins:?}");
    // They follow the discovery document at once instead of waiting for every other probe:
    // the last sign-in reaches the instance before the last exposed-file probe.
    let requests = fake.requests();
    let last = |wanted: &dyn Fn(&RecordedRequest) -> bool| {
        requests.iter().filter(|r| wanted(r)).map(|r| r.index).max()
    };
    let last_sign_in = last(&is_sign_in).expect("sign-ins were sent");
    let last_exposed =
        last(&|r| plan::exposed_files().contains(&r.path())).expect("exposed files were probed");
    assert!(
        last_sign_in < last_exposed,
        "the sign-ins came after the other probes (last sign-in #{last_sign_in}, last \
         exposed-file probe #{last_exposed})"
    );
    assert_light(&traffic, "a scan with slow sign-ins");
}

#[test]
fn the_fake_counts_connections_requests_and_the_peak() {
    // The counters the tests above rely on, checked with a client that is not the scan: two
    // connections, each answered once while both are open.
    use std::io::{Read, Write};
    let fake = FakeInstance::start(InstanceConfig::default().plain());
    let open = |_| {
        let mut stream = std::net::TcpStream::connect(fake.addr()).unwrap();
        stream.set_read_timeout(Some(SETTLE)).unwrap();
        stream
            .write_all(b"GET /status.php HTTP/1.1\r\nHost: fake\r\n\r\n")
            .unwrap();
        let mut first = [0u8; 12];
        stream.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        stream
    };
    let streams: Vec<_> = (0..2).map(open).collect();
    drop(streams);
    assert!(fake.wait_idle(SETTLE));
    let traffic = fake.traffic();
    assert_eq!(
        (traffic.connections, traffic.peak_open, traffic.requests),
        (2, 2, 2),
        "{traffic:?}"
    );
    fake.reset_traffic();
    assert_eq!(fake.traffic(), Traffic::default());
}

/// The endpoint's TLS for `fake`, its first connection inspected.
fn inspected(fake: &FakeInstance) -> (EndpointTls, storage_security::net::tls::Handshake) {
    // Judged at the tests' pinned clock, as a scan judges them.
    let pinned: jiff::Timestamp = crate::support::PINNED_NOW.parse().unwrap();
    let roots = Roots::new(Some(&fake.ca_file())).unwrap().judged_at(pinned);
    let tls = EndpointTls::new(
        "localhost",
        fake.port(),
        &roots,
        Route::Direct,
        SETTLE.into(),
    )
    .unwrap();
    let handshake = tls.inspect().unwrap();
    (tls, handshake)
}

/// Full and resumed handshakes of the connections `exchange` makes, from the fake's counters.
fn handshakes_of(fake: &FakeInstance, exchange: impl FnOnce()) -> Traffic {
    fake.reset_traffic();
    exchange();
    assert!(fake.wait_idle(SETTLE));
    fake.traffic()
}

#[test]
fn the_inspected_connection_carries_the_first_request_and_later_ones_resume_its_session() {
    for (tls_version, config) in [
        ("TLS 1.3", InstanceConfig::default()),
        ("TLS 1.2", InstanceConfig::default().tls12_only()),
    ] {
        let fake = FakeInstance::start(config);
        let traffic = handshakes_of(&fake, || {
            let (tls, handshake) = inspected(&fake);
            assert_eq!(handshake.trust, Ok(TrustedBy::PrivateCa), "{tls_version}");
            tls.require(Requirement::Trusted(TrustedBy::PrivateCa));
            let endpoint = Endpoint {
                scheme: Scheme::Https,
                url_host: "localhost".into(),
                port: fake.port(),
                base_path: String::new(),
            };
            let options = ClientOptions {
                timeout: SETTLE.into(),
                pin: None,
                proxy: None,
                user_agent: "light-scan-test".into(),
            };
            let client = Client::with_tls(endpoint, Some(tls.clone()), &options).unwrap();
            // On the inspected connection: no new one, and its answer brings the tickets.
            assert_eq!(
                client.get("/status.php", Keep::DigestOnly).unwrap().status,
                200
            );
            assert_eq!(fake.traffic().connections, 1, "{tls_version}");
            // The inspected connection is the client's now; the next one is new and resumes.
            let second = tls.connection(None).unwrap();
            assert!(second.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed));
        });
        assert_eq!(
            (
                traffic.connections,
                traffic.full_handshakes,
                traffic.resumed_handshakes
            ),
            (2, 1, 1),
            "{tls_version}: {traffic:?}"
        );
    }
}

#[test]
fn a_session_is_never_resumed_past_a_requirement_its_certificate_fails() {
    // A node of --all-addresses whose certificate the scan's verification refuses: its
    // inspected session must not let a later connection skip the certificate check. TLS 1.2
    // stores the session during the handshake itself, so it is the case that matters.
    for (tls_version, config) in [
        (
            "TLS 1.3",
            InstanceConfig::default().tls(TlsMode::SelfSigned),
        ),
        (
            "TLS 1.2",
            InstanceConfig::default()
                .tls(TlsMode::SelfSigned)
                .tls12_only(),
        ),
    ] {
        let fake = FakeInstance::start(config);
        let traffic = handshakes_of(&fake, || {
            let (tls, handshake) = inspected(&fake);
            assert!(handshake.trust.is_err(), "{tls_version}: {handshake:?}");
            tls.require(Requirement::Trusted(TrustedBy::PrivateCa));
            let refused = tls.connection(None);
            assert!(
                refused.is_err(),
                "{tls_version}: the certificate was accepted"
            );
        });
        assert_eq!(
            (
                traffic.connections,
                traffic.full_handshakes,
                traffic.resumed_handshakes,
                traffic.failed_handshakes
            ),
            (2, 1, 0, 1),
            "{tls_version}: {traffic:?}"
        );
    }
}
