//! Self-test of the fake OpenCloud instance in `tests/support/`: it answers like the captured
//! real OpenCloud 4.0.0, and every knob does what it claims. Loopback only, ephemeral ports,
//! no test waits for a delay to elapse.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use rustls::pki_types::CertificateDer;

use crate::support::certs::ca_der;
use crate::support::{
    FakeInstance, FaultKind, InstanceConfig, RawResponse, TlsMode, closed_port,
    start_debug_listener,
};

// ---------------------------------------------------------------------------------------------
// Clients

/// ureq agent for the fake's answers: no proxy, no redirects, statuses not errors, WebDAV
/// methods allowed (ureq refuses PROPFIND without `allow_non_standard_methods`). Its TLS carries
/// the exchange without judging the certificate: ureq would judge its dates by the machine's
/// clock, while the certificates are dated around the tests' pinned one. What each TLS mode
/// presents is judged at the pinned clock by [`handshake`].
fn agent_for(_fake: &FakeInstance) -> ureq::Agent {
    agent_with_timeout(Duration::from_secs(20))
}

/// [`agent_for`] with a short overall timeout (for delay/drip faults).
fn impatient_agent(_fake: &FakeInstance, timeout: Duration) -> ureq::Agent {
    agent_with_timeout(timeout)
}

fn agent_with_timeout(timeout: Duration) -> ureq::Agent {
    let tls = ureq::tls::TlsConfig::builder()
        .disable_verification(true)
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .proxy(None)
        .http_status_as_error(false)
        .max_redirects(0)
        .allow_non_standard_methods(true)
        .timeout_global(Some(timeout))
        .build()
        .new_agent()
}

/// A TLS handshake with `fake` for `name`, trusting `trusted` and judging dates at the pinned
/// clock, over `versions`; the connection, or the handshake's error as text.
fn handshake(
    fake: &FakeInstance,
    name: &str,
    trusted: &[CertificateDer<'static>],
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Result<rustls::ClientConnection, String> {
    let config = crate::support::certs::client_config(trusted, versions);
    let name = rustls::pki_types::ServerName::try_from(name.to_string()).expect("name");
    let mut conn = rustls::ClientConnection::new(config, name).expect("client");
    let mut tcp = TcpStream::connect(fake.addr()).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(20))).ok();
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).map_err(|e| format!("{e:?}"))?;
    }
    Ok(conn)
}

const ALL_VERSIONS: &[&rustls::SupportedProtocolVersion] =
    &[&rustls::version::TLS13, &rustls::version::TLS12];

fn header_all(resp: &ureq::http::Response<ureq::Body>, name: &str) -> Vec<String> {
    resp.headers()
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap_or_default().to_string())
        .collect()
}

fn header(resp: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .map(|v| v.to_str().unwrap_or_default().to_string())
}

fn body(resp: &mut ureq::http::Response<ureq::Body>) -> String {
    resp.body_mut().read_to_string().expect("read body")
}

/// Sends raw request bytes (TLS trusting the private CA, SNI `localhost`, or plain) and reads
/// the whole answer (the request should carry `Connection: close`).
fn raw_exchange(fake: &FakeInstance, request: &str) -> Vec<u8> {
    let mut tcp = TcpStream::connect(fake.addr()).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(20))).ok();
    let mut out = Vec::new();
    if fake.config().tls == TlsMode::Plain {
        tcp.write_all(request.as_bytes()).expect("write");
        let _ = tcp.read_to_end(&mut out);
        return out;
    }
    let config = crate::support::certs::client_config(&[ca_der()], ALL_VERSIONS);
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let conn = rustls::ClientConnection::new(config, name).expect("client");
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    tls.write_all(request.as_bytes()).expect("write");
    let mut buf = [0u8; 8192];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => break,
        }
    }
    out
}

fn raw_request(
    fake: &FakeInstance,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> RawResponse {
    raw_request_host(fake, "localhost:9200", method, target, headers, body)
}

/// Like curl: `Host`, `User-Agent`, `Accept`, the given headers, `Content-Length` for a body.
fn raw_request_host(
    fake: &FakeInstance,
    host: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> RawResponse {
    let mut req = format!(
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n"
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    if !body.is_empty() {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("Connection: close\r\n\r\n");
    req.push_str(body);
    RawResponse::parse(&raw_exchange(fake, &req))
}

// ---------------------------------------------------------------------------------------------
// Fidelity: every captured request answered exactly as captured

/// Headers whose values legitimately differ from the capture (names and order must not).
/// `Expires` derives from the start time on the SPA/404 pages (`max-age=604800` on oCIS).
const VOLATILE: &[&str] = &[
    "date",
    "x-request-id",
    "last-modified",
    "expires",
    "connection",
];

fn assert_like_fixture(got: &RawResponse, fixture: &str, what: &str) {
    let mut want = RawResponse::load(fixture);
    if !what.starts_with("HEAD") {
        // Captures are de-chunked: the fake sends a Content-Length instead.
        want.finalize_length();
    }
    let mut got = got.clone();
    got.remove_header("Connection");
    assert_eq!(
        (got.status, got.reason.as_str()),
        (want.status, want.reason.as_str()),
        "{what}: status"
    );
    let names =
        |r: &RawResponse| -> Vec<String> { r.headers.iter().map(|(n, _)| n.clone()).collect() };
    assert_eq!(names(&got), names(&want), "{what}: header names/order");
    for ((n, gv), (_, wv)) in got.headers.iter().zip(&want.headers) {
        if !VOLATILE.contains(&n.to_ascii_lowercase().as_str()) {
            assert_eq!(gv, wv, "{what}: header {n}");
        }
    }
    if got.status != 204 && !what.starts_with("HEAD") {
        assert_eq!(got.body_str(), want.body_str(), "{what}: body");
    }
    if let (Some(g), Some(w)) = (got.header("Date"), want.header("Date")) {
        assert_ne!(
            g, w,
            "{what}: Date is the current time, not the captured one"
        );
    }
}

/// (method, target, extra headers, body, fixture file)
type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, String, &'a str);

#[test]
fn answers_exactly_like_captured_opencloud_4_0_0() {
    // Keep the captured public URL so bodies match byte for byte.
    let fake = FakeInstance::start(InstanceConfig::default().public_url("https://localhost:9200"));
    let dir = "opencloud-4.0.0";
    let evil = ("Origin", "https://evil.example");
    let xhr = ("X-Requested-With", "XMLHttpRequest");
    let basic = ("Authorization", "Basic ZGVubmlzOmRlbW8="); // dennis:demo
    let logon = |pw: &str, state: &str| {
        format!(
            "{{\"params\":[\"dennis\",\"{pw}\",\"1\"],\"hello\":{{\"scope\":\"openid profile email\",\"client_id\":\"web\",\"redirect_uri\":\"https://localhost:9200/oidc-callback.html\",\"flow\":\"oidc\"}},\"state\":\"{state}\"}}"
        )
    };
    let logon_headers: &[(&str, &str)] = &[
        ("Content-Type", "application/json"),
        ("Kopano-Konnect-XSRF", "1"),
        ("Origin", "https://localhost:9200"),
        ("Referer", "https://localhost:9200/signin/v1/identifier"),
    ];
    let cases: Vec<Case> = vec![
        (
            "GET",
            "/status.php",
            vec![],
            String::new(),
            "status.php.txt",
        ),
        ("GET", "/status", vec![], String::new(), "status.txt"),
        (
            "GET",
            "/ocs/v1.php/cloud/capabilities?format=json",
            vec![],
            String::new(),
            "ocs-v1-capabilities.txt",
        ),
        (
            "GET",
            "/ocs/v1.php/cloud/capabilities",
            vec![],
            String::new(),
            "ocs-v1-capabilities-xml.txt",
        ),
        (
            "GET",
            "/ocs/v2.php/cloud/capabilities?format=json",
            vec![],
            String::new(),
            "ocs-v2-capabilities.txt",
        ),
        (
            "GET",
            "/ocs/v1.php/config?format=json",
            vec![],
            String::new(),
            "ocs-v1-config.txt",
        ),
        ("GET", "/", vec![], String::new(), "root-GET.txt"),
        ("HEAD", "/", vec![], String::new(), "root-HEAD.txt"),
        (
            "GET",
            "/.well-known/openid-configuration",
            vec![],
            String::new(),
            "well-known-openid-configuration.txt",
        ),
        (
            "GET",
            "/.well-known/webfinger?resource=acct:admin@localhost",
            vec![],
            String::new(),
            "well-known-webfinger.txt",
        ),
        (
            "GET",
            "/.well-known/security.txt",
            vec![],
            String::new(),
            "well-known-security.txt",
        ),
        (
            "GET",
            "/.well-known/caldav",
            vec![],
            String::new(),
            "well-known-caldav.txt",
        ),
        (
            "GET",
            "/remote.php/dav/files/",
            vec![],
            String::new(),
            "dav-files-unauth-GET.txt",
        ),
        (
            "PROPFIND",
            "/remote.php/dav/files/",
            vec![],
            String::new(),
            "dav-files-unauth-PROPFIND.txt",
        ),
        (
            "GET",
            "/remote.php/webdav/",
            vec![],
            String::new(),
            "webdav-unauth-GET.txt",
        ),
        (
            "GET",
            "/graph/v1.0/me",
            vec![],
            String::new(),
            "graph-me-unauth.txt",
        ),
        (
            "GET",
            "/graph/v1.0/me",
            vec![xhr],
            String::new(),
            "graph-me-unauth-xhr.txt",
        ),
        (
            "GET",
            "/graph/v1.0/users",
            vec![],
            String::new(),
            "graph-users-unauth.txt",
        ),
        (
            "GET",
            "/ocs/v1.php/cloud/users",
            vec![],
            String::new(),
            "ocs-v1-cloud-users-unauth.txt",
        ),
        (
            "GET",
            "/ocs/v1.php/cloud/user",
            vec![],
            String::new(),
            "ocs-v1-cloud-user-unauth.txt",
        ),
        ("GET", "/app/list", vec![], String::new(), "app-list.txt"),
        ("OPTIONS", "/", vec![], String::new(), "OPTIONS-root.txt"),
        ("TRACE", "/", vec![], String::new(), "TRACE-root.txt"),
        (
            "OPTIONS",
            "/graph/v1.0/me",
            vec![
                evil,
                ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", "authorization"),
            ],
            String::new(),
            "cors-preflight-evil-graph-me.txt",
        ),
        (
            "OPTIONS",
            "/remote.php/dav/files/",
            vec![
                evil,
                ("Access-Control-Request-Method", "PROPFIND"),
                ("Access-Control-Request-Headers", "authorization,depth"),
            ],
            String::new(),
            "cors-preflight-evil-dav.txt",
        ),
        (
            "OPTIONS",
            "/",
            vec![evil, ("Access-Control-Request-Method", "GET")],
            String::new(),
            "cors-preflight-evil-root.txt",
        ),
        (
            "GET",
            "/graph/v1.0/me",
            vec![evil],
            String::new(),
            "cors-GET-evil-graph-me.txt",
        ),
        (
            "GET",
            "/ocs/v1.php/cloud/capabilities?format=json",
            vec![evil],
            String::new(),
            "cors-GET-evil-ocs-capabilities.txt",
        ),
        (
            "GET",
            "/opencloud.yaml",
            vec![],
            String::new(),
            "exposed-opencloud.yaml.txt",
        ),
        ("GET", "/.env", vec![], String::new(), "exposed-dotenv.txt"),
        (
            "GET",
            "/proxy/server.key",
            vec![],
            String::new(),
            "exposed-proxy-server.key.txt",
        ),
        (
            "GET",
            "/.git/config",
            vec![],
            String::new(),
            "exposed-git-config.txt",
        ),
        (
            "GET",
            "/this-path-does-not-exist-7f3c9a",
            vec![],
            String::new(),
            "random-nonexistent-path.txt",
        ),
        (
            "GET",
            "/metrics",
            vec![],
            String::new(),
            "public-metrics.txt",
        ),
        ("GET", "/config", vec![], String::new(), "public-config.txt"),
        (
            "GET",
            "/debug/pprof/",
            vec![],
            String::new(),
            "public-debug-pprof.txt",
        ),
        (
            "GET",
            "/signin/v1/identifier",
            vec![],
            String::new(),
            "idp-signin-identifier-GET.txt",
        ),
        (
            "GET",
            "/konnect/v1/jwks.json",
            vec![],
            String::new(),
            "idp-jwks.txt",
        ),
        (
            "GET",
            "/config.json",
            vec![],
            String::new(),
            "web-config.json.txt",
        ),
        (
            "GET",
            "/graph/v1.0/me",
            vec![basic],
            String::new(),
            "login-basic-dennis-graph-me.txt",
        ),
        (
            "PROPFIND",
            "/remote.php/dav/files/dennis/",
            vec![basic, ("Depth", "0")],
            String::new(),
            "login-basic-dennis-dav.txt",
        ),
        (
            "POST",
            "/signin/v1/identifier/_/logon",
            logon_headers.to_vec(),
            logon("demo", "abc123"),
            "login-idp-logon-dennis-demo.txt",
        ),
        (
            "POST",
            "/signin/v1/identifier/_/logon",
            logon_headers.to_vec(),
            logon("wrong-password", "abc124"),
            "login-idp-logon-dennis-wrong.txt",
        ),
        (
            "POST",
            "/signin/v1/identifier/_/logon",
            vec![("Content-Type", "application/json")],
            logon("demo", "abc125"),
            "login-idp-logon-no-xsrf-header.txt",
        ),
    ];
    for (method, target, headers, body, file) in &cases {
        let got = raw_request(&fake, method, target, headers, body);
        assert_like_fixture(
            &got,
            &format!("{dir}/{file}"),
            &format!("{method} {target}"),
        );
    }
    assert_eq!(fake.request_count(), cases.len());
}

/// (host, method, target, extra headers, body, fixture file)
type HostCase<'a> = (
    &'a str,
    &'a str,
    &'a str,
    Vec<(&'a str, &'a str)>,
    String,
    &'a str,
);

fn check_cases(fake: &FakeInstance, dir: &str, cases: &[HostCase]) {
    for (host, method, target, headers, body, file) in cases {
        let mut got = raw_request_host(fake, host, method, target, headers, body);
        let fixture = RawResponse::load(&format!("{dir}/{file}"));
        if fixture
            .header_all("Set-Cookie")
            .iter()
            .any(|c| c.contains("<redacted>"))
        {
            got.replace_header_values("Set-Cookie", |v| match v.split_once(';') {
                Some((kv, rest)) if kv.starts_with("__Secure-KKT=") => {
                    format!("__Secure-KKT=<redacted>;{rest}")
                }
                _ => v.to_string(),
            });
        }
        assert_like_fixture(
            &got,
            &format!("{dir}/{file}"),
            &format!("{method} {target}"),
        );
    }
}

#[test]
fn answers_exactly_like_captured_ocis_7_0_0() {
    let fake = FakeInstance::start(InstanceConfig::ocis().public_url("https://localhost:9200"));
    let ip = "127.0.0.1:9200";
    let lh = "localhost:9200";
    let evil = ("Origin", "https://evil.example");
    let acrm = ("Access-Control-Request-Method", "GET");
    let admin = ("Authorization", "Basic YWRtaW46YWRtaW4="); // admin:admin
    let einstein = ("Authorization", "Basic ZWluc3RlaW46cmVsYXRpdml0eQ=="); // einstein:relativity
    let logon = |pw: &str| {
        format!(
            "{{\"params\":[\"einstein\",\"{pw}\",\"1\"],\"hello\":{{\"scope\":\"openid profile email\",\"client_id\":\"web\",\"redirect_uri\":\"https://localhost:9200/oidc-callback.html\",\"flow\":\"oidc\"}}}}"
        )
    };
    let json = ("Content-Type", "application/json");
    let xsrf = ("Kopano-Konnect-XSRF", "1");
    let same = ("Origin", "https://localhost:9200");
    let e = String::new;
    let cases: Vec<HostCase> = vec![
        (ip, "GET", "/status.php", vec![], e(), "status.php.txt"),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/capabilities?format=json",
            vec![],
            e(),
            "ocs-v1-capabilities-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v2.php/cloud/capabilities?format=json",
            vec![],
            e(),
            "ocs-v2-capabilities-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/capabilities",
            vec![],
            e(),
            "ocs-v1-capabilities-xml-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/capabilities?format=json",
            vec![admin],
            e(),
            "ocs-v1-capabilities-basic-admin.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v2.php/cloud/capabilities?format=json",
            vec![admin],
            e(),
            "ocs-v2-capabilities-basic-admin.txt",
        ),
        (ip, "GET", "/", vec![], e(), "root-GET.txt"),
        (ip, "HEAD", "/", vec![], e(), "root-HEAD.txt"),
        (ip, "GET", "/index.html", vec![], e(), "index.html-GET.txt"),
        (ip, "GET", "/config.json", vec![], e(), "config.json.txt"),
        (
            ip,
            "GET",
            "/.well-known/openid-configuration",
            vec![],
            e(),
            "openid-configuration.txt",
        ),
        (
            ip,
            "GET",
            "/.well-known/webfinger?resource=acct:einstein@localhost",
            vec![],
            e(),
            "webfinger-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/.well-known/webfinger?resource=acct:nosuchuser@localhost",
            vec![],
            e(),
            "webfinger-unauth-nonexistent-user.txt",
        ),
        (
            ip,
            "GET",
            "/konnect/v1/jwks.json",
            vec![],
            e(),
            "idp-jwks.txt",
        ),
        (
            ip,
            "GET",
            "/signin/v1/identifier",
            vec![],
            e(),
            "idp-signin-identifier-GET.txt",
        ),
        (
            ip,
            "GET",
            "/remote.php/dav/files/",
            vec![],
            e(),
            "dav-files-unauth-GET.txt",
        ),
        (
            ip,
            "PROPFIND",
            "/remote.php/dav/files/",
            vec![("Depth", "0")],
            e(),
            "dav-files-unauth-PROPFIND.txt",
        ),
        (
            ip,
            "PROPFIND",
            "/remote.php/webdav/",
            vec![("Depth", "0")],
            e(),
            "webdav-legacy-unauth-PROPFIND.txt",
        ),
        (
            ip,
            "GET",
            "/graph/v1.0/users",
            vec![],
            e(),
            "graph-users-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/graph/v1.0/me",
            vec![],
            e(),
            "graph-me-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/graph/v1.0/me",
            vec![admin],
            e(),
            "graph-me-basic-admin.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/users",
            vec![],
            e(),
            "ocs-v1-users-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/user?format=json",
            vec![einstein],
            e(),
            "ocs-v1-user-basic-einstein.txt",
        ),
        (
            ip,
            "PROPFIND",
            "/remote.php/dav/files/einstein/",
            vec![("Depth", "0"), einstein],
            e(),
            "dav-files-basic-einstein.txt",
        ),
        (ip, "GET", "/app/list", vec![], e(), "app-list.txt"),
        (ip, "OPTIONS", "/", vec![], e(), "OPTIONS-root.txt"),
        (ip, "TRACE", "/", vec![], e(), "TRACE-root.txt"),
        (
            ip,
            "TRACE",
            "/remote.php/dav/files/",
            vec![],
            e(),
            "TRACE-dav.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/",
            vec![
                evil,
                acrm,
                ("Access-Control-Request-Headers", "Authorization"),
            ],
            e(),
            "cors-preflight-evil-root.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/graph/v1.0/me",
            vec![
                evil,
                acrm,
                ("Access-Control-Request-Headers", "Authorization"),
            ],
            e(),
            "cors-preflight-evil-graph-me.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/ocs/v1.php/cloud/capabilities",
            vec![
                evil,
                acrm,
                ("Access-Control-Request-Headers", "Authorization"),
            ],
            e(),
            "cors-preflight-evil-ocs-capabilities.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/remote.php/dav/files/",
            vec![
                evil,
                ("Access-Control-Request-Method", "PROPFIND"),
                ("Access-Control-Request-Headers", "Authorization,Depth"),
            ],
            e(),
            "cors-preflight-evil-dav.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/graph/v1.0/me",
            vec![
                evil,
                acrm,
                ("Access-Control-Request-Headers", "authorization"),
            ],
            e(),
            "cors-preflight-evil-graph-me-lcheaders.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/ocs/v1.php/cloud/capabilities",
            vec![
                evil,
                acrm,
                ("Access-Control-Request-Headers", "authorization"),
            ],
            e(),
            "cors-preflight-evil-ocs-capabilities-lcheaders.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/ocs/v1.php/cloud/users",
            vec![
                evil,
                acrm,
                ("Access-Control-Request-Headers", "authorization"),
            ],
            e(),
            "cors-preflight-evil-ocs-users-lcheaders.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/remote.php/dav/files/",
            vec![
                evil,
                ("Access-Control-Request-Method", "PROPFIND"),
                ("Access-Control-Request-Headers", "authorization,depth"),
            ],
            e(),
            "cors-preflight-evil-dav-lcheaders.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/",
            vec![
                evil,
                acrm,
                ("Access-Control-Request-Headers", "authorization"),
            ],
            e(),
            "cors-preflight-evil-root-lcheaders.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/graph/v1.0/me",
            vec![evil, acrm],
            e(),
            "cors-preflight-evil-graph-me-noreqheaders.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/graph/v1.0/me",
            vec![
                ("Origin", "https://localhost:9200"),
                acrm,
                ("Access-Control-Request-Headers", "authorization"),
            ],
            e(),
            "cors-preflight-allowed-origin-graph-me-lcheaders.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/capabilities?format=json",
            vec![evil],
            e(),
            "cors-GET-evil-ocs-capabilities.txt",
        ),
        (
            ip,
            "GET",
            "/graph/v1.0/me",
            vec![evil],
            e(),
            "cors-GET-evil-graph-me.txt",
        ),
        (
            ip,
            "GET",
            "/status.php",
            vec![evil],
            e(),
            "cors-GET-evil-status.php.txt",
        ),
        (
            ip,
            "GET",
            "/ocis.yaml",
            vec![],
            e(),
            "exposed-ocis.yaml.txt",
        ),
        (ip, "GET", "/.env", vec![], e(), "exposed-dotenv.txt"),
        (
            ip,
            "GET",
            "/proxy/server.key",
            vec![],
            e(),
            "exposed-proxy-server.key.txt",
        ),
        (
            ip,
            "GET",
            "/.git/config",
            vec![],
            e(),
            "exposed-git-config.txt",
        ),
        (
            lh,
            "POST",
            "/signin/v1/identifier/_/logon",
            vec![json, same],
            logon("relativity"),
            "login-idp-logon-no-xsrf-header.txt",
        ),
        (
            lh,
            "POST",
            "/signin/v1/identifier/_/logon",
            vec![json, xsrf, same],
            logon("wrongpass"),
            "login-idp-logon-einstein-wrong.txt",
        ),
        (
            lh,
            "POST",
            "/signin/v1/identifier/_/logon",
            vec![json, xsrf, evil],
            logon("relativity"),
            "login-idp-logon-evil-origin.txt",
        ),
        (
            lh,
            "POST",
            "/signin/v1/identifier/_/logon",
            vec![json, xsrf, same],
            logon("relativity"),
            "login-idp-logon-einstein-demo.txt",
        ),
    ];
    check_cases(&fake, "ocis-7.0.0", &cases);
}

#[test]
fn answers_exactly_like_captured_ocis_7_0_0_with_basic_auth() {
    let fake = FakeInstance::start(
        InstanceConfig::ocis()
            .basic_auth(true)
            .public_url("https://localhost:9200"),
    );
    let ip = "127.0.0.1:9200";
    let admin = ("Authorization", "Basic YWRtaW46YWRtaW4=");
    let einstein = ("Authorization", "Basic ZWluc3RlaW46cmVsYXRpdml0eQ==");
    let wrong = ("Authorization", "Basic ZWluc3RlaW46d3Jvbmc="); // einstein:wrong
    let e = String::new;
    let cases: Vec<HostCase> = vec![
        (ip, "GET", "/status.php", vec![], e(), "status.php.txt"),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/capabilities?format=json",
            vec![],
            e(),
            "ocs-v1-capabilities-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/capabilities?format=json",
            vec![admin],
            e(),
            "ocs-v1-capabilities-basic-admin.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v2.php/cloud/capabilities?format=json",
            vec![admin],
            e(),
            "ocs-v2-capabilities-basic-admin.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/user?format=json",
            vec![admin],
            e(),
            "ocs-v1-user-basic-admin.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/user?format=json",
            vec![einstein],
            e(),
            "ocs-v1-user-basic-einstein.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/user?format=json",
            vec![wrong],
            e(),
            "ocs-v1-user-basic-einstein-wrongpw.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/users?format=json",
            vec![admin],
            e(),
            "ocs-v1-users-basic-admin.txt",
        ),
        (
            ip,
            "GET",
            "/ocs/v1.php/cloud/users",
            vec![],
            e(),
            "ocs-v1-users-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/graph/v1.0/me",
            vec![admin],
            e(),
            "graph-me-basic-admin.txt",
        ),
        (
            ip,
            "GET",
            "/graph/v1.0/me",
            vec![],
            e(),
            "graph-me-unauth.txt",
        ),
        (
            ip,
            "GET",
            "/remote.php/dav/files/",
            vec![],
            e(),
            "dav-files-unauth-GET.txt",
        ),
        (
            ip,
            "PROPFIND",
            "/remote.php/dav/files/",
            vec![("Depth", "0")],
            e(),
            "dav-files-unauth-PROPFIND.txt",
        ),
        (
            ip,
            "GET",
            "/graph/v1.0/me",
            vec![("Origin", "https://evil.example"), einstein],
            e(),
            "cors-GET-evil-graph-me-basic.txt",
        ),
        (
            ip,
            "OPTIONS",
            "/graph/v1.0/me",
            vec![
                ("Origin", "https://localhost:9200"),
                ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", "Authorization"),
            ],
            e(),
            "cors-preflight-allowed-origin-graph-me.txt",
        ),
    ];
    check_cases(&fake, "ocis-7.0.0/basic-auth-enabled", &cases);
}

#[test]
fn status_php_body_equals_fixture_with_a_fresh_date() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let mut resp = agent_for(&fake)
        .get(fake.url("/status.php"))
        .call()
        .expect("GET /status.php");
    assert_eq!(resp.status(), 200);
    let fixture = RawResponse::load("opencloud-4.0.0/status.php.txt");
    let date = header(&resp, "date").expect("Date header");
    assert_ne!(Some(date.as_str()), fixture.header("Date"));
    let parsed = jiff::fmt::rfc2822::parse(&date).expect("RFC 2822 date");
    let age = jiff::Timestamp::now().duration_since(parsed.timestamp());
    assert!(age.as_secs().abs() < 120, "Date is current: {date}");
    assert_eq!(body(&mut resp), fixture.body_str());
}

#[test]
fn capabilities_public_on_v1_but_not_v2() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let agent = agent_for(&fake);
    let mut v1 = agent
        .get(fake.url("/ocs/v1.php/cloud/capabilities?format=json"))
        .call()
        .unwrap();
    assert_eq!(v1.status(), 200);
    let json: serde_json::Value = serde_json::from_str(&body(&mut v1)).unwrap();
    assert_eq!(
        json["ocs"]["data"]["capabilities"]["core"]["status"]["productversion"],
        "4.0.0"
    );
    let xml = agent
        .get(fake.url("/ocs/v1.php/cloud/capabilities"))
        .call()
        .unwrap();
    assert_eq!(
        header(&xml, "content-type").unwrap(),
        "text/xml; charset=utf-8"
    );
    let v2 = agent
        .get(fake.url("/ocs/v2.php/cloud/capabilities?format=json"))
        .call()
        .unwrap();
    assert_eq!(v2.status(), 401);
}

#[test]
fn graph_me_challenges_bearer_and_basic_with_the_host_as_realm() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let agent = agent_for(&fake);
    let resp = agent.get(fake.url("/graph/v1.0/me")).call().unwrap();
    assert_eq!(resp.status(), 401);
    let challenges = header_all(&resp, "www-authenticate");
    let host = fake.host_port();
    assert_eq!(
        challenges,
        vec![
            format!("Bearer realm=\"{host}\", charset=\"UTF-8\""),
            format!("Basic realm=\"{host}\", charset=\"UTF-8\""),
        ]
    );
    let xhr = agent
        .get(fake.url("/graph/v1.0/users"))
        .header("X-Requested-With", "XMLHttpRequest")
        .call()
        .unwrap();
    assert_eq!(xhr.status(), 401);
    assert!(header_all(&xhr, "www-authenticate").is_empty());
}

#[test]
fn every_other_path_is_the_spa_page() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let agent = agent_for(&fake);
    let spa = RawResponse::load("opencloud-4.0.0/random-nonexistent-path.txt").body_str();
    for path in [
        "/opencloud.yaml",
        "/.env",
        "/.git/config",
        "/proxy/server.key",
        "/metrics",
        "/x/y/z?q=1",
    ] {
        let mut resp = agent.get(fake.url(path)).call().unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_eq!(
            header_all(&resp, "vary"),
            vec!["Origin", "Accept-Encoding"],
            "{path}"
        );
        assert_eq!(body(&mut resp), spa, "{path}");
    }
}

fn logon(
    fake: &FakeInstance,
    user: &str,
    password: &str,
    state: &str,
    xsrf: bool,
    origin: Option<&str>,
) -> ureq::http::Response<ureq::Body> {
    let body = serde_json::json!({
        "params": [user, password, "1"],
        "hello": {"scope": "openid profile email", "client_id": "web", "flow": "oidc",
                  "redirect_uri": format!("{}/oidc-callback.html", fake.base_url())},
        "state": state,
    });
    let mut req = agent_for(fake)
        .post(fake.url("/signin/v1/identifier/_/logon"))
        .header("Content-Type", "application/json");
    if xsrf {
        req = req.header("Kopano-Konnect-XSRF", "1");
    }
    if let Some(o) = origin {
        req = req.header("Origin", o);
    }
    req.send(body.to_string()).unwrap()
}

#[test]
fn idp_logon_success_wrong_password_and_csrf_refusal() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let me = fake.base_url();
    let mut ok = logon(&fake, "alan", "demo", "s-1", true, Some(&me));
    assert_eq!(ok.status(), 200);
    let cookies = header_all(&ok, "set-cookie");
    assert!(cookies[0].starts_with("__Secure-KKT="), "{cookies:?}");
    assert!(cookies[0].contains("HttpOnly; Secure; SameSite=Strict"));
    let json: serde_json::Value = serde_json::from_str(&body(&mut ok)).unwrap();
    assert_eq!(json["success"], true);
    assert_eq!(json["state"], "s-1");
    assert_eq!(json["hello"]["username"], "alan");
    assert_eq!(json["hello"]["displayName"], "Alan Turing");

    let wrong = logon(&fake, "alan", "nope", "s-2", true, Some(&me));
    assert_eq!(wrong.status(), 204);
    assert_eq!(
        header(&wrong, "kopano-konnect-state").as_deref(),
        Some("s-2")
    );

    assert_eq!(
        logon(&fake, "alan", "demo", "s-3", false, Some(&me)).status(),
        400
    );
    assert_eq!(
        logon(&fake, "alan", "demo", "s-4", true, None).status(),
        400
    );
    assert_eq!(
        logon(
            &fake,
            "alan",
            "demo",
            "s-5",
            true,
            Some("https://evil.example")
        )
        .status(),
        400
    );
    // The Host header is 127.0.0.1:PORT here, so a localhost origin is cross-origin.
    assert_eq!(
        logon(
            &fake,
            "alan",
            "demo",
            "s-6",
            true,
            Some(&fake.localhost_url())
        )
        .status(),
        400
    );

    let no_users = FakeInstance::start(InstanceConfig::default().demo_users(false));
    let me = no_users.base_url();
    assert_eq!(
        logon(&no_users, "alan", "demo", "s", true, Some(&me)).status(),
        204
    );
}

#[test]
fn version_is_rewritten_everywhere() {
    let fake = FakeInstance::start(InstanceConfig::default().version("7.2.4"));
    let agent = agent_for(&fake);
    let mut status = agent.get(fake.url("/status.php")).call().unwrap();
    let json: serde_json::Value = serde_json::from_str(&body(&mut status)).unwrap();
    assert_eq!(json["productversion"], "7.2.4");
    let root = agent.get(fake.url("/")).call().unwrap();
    assert_eq!(header(&root, "x-web-version").as_deref(), Some("7.2.4"));
    let mut caps = agent
        .get(fake.url("/ocs/v1.php/cloud/capabilities?format=json"))
        .call()
        .unwrap();
    let caps: serde_json::Value = serde_json::from_str(&body(&mut caps)).unwrap();
    assert_eq!(caps["ocs"]["data"]["version"]["productversion"], "7.2.4");
    assert_eq!(
        caps["ocs"]["data"]["capabilities"]["core"]["status"]["productversion"],
        "7.2.4"
    );
    let mut xml = agent
        .get(fake.url("/ocs/v1.php/cloud/capabilities"))
        .call()
        .unwrap();
    let xml = body(&mut xml);
    assert!(
        xml.contains("<productversion>7.2.4</productversion>"),
        "{xml}"
    );
    assert!(!xml.contains("4.0.0"));
    let jwks = agent.get(fake.url("/konnect/v1/jwks.json")).call().unwrap();
    assert_eq!(header(&jwks, "x-idp-version").as_deref(), Some("7.2.4"));

    let debug = start_debug_listener(fake.config());
    let mut metrics = ureq::get(format!("{}/metrics", debug.base_url()))
        .config()
        .proxy(None)
        .build()
        .call()
        .unwrap();
    assert_eq!(
        header(&metrics, "x-proxy-version").as_deref(),
        Some("7.2.4")
    );
    let metrics = body(&mut metrics);
    assert!(metrics.contains("opencloud_proxy_build_info{version=\"7.2.4\"} 1"));
}

#[test]
fn status_override_replaces_the_body() {
    let fake = FakeInstance::start(InstanceConfig::default().status_override("<html>nope</html>"));
    let mut resp = agent_for(&fake)
        .get(fake.url("/status.php"))
        .call()
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(body(&mut resp), "<html>nope</html>");
}

/// Why a client trusting the private CA refuses the certificate of `mode`.
fn tls_error(mode: TlsMode) -> String {
    let fake = FakeInstance::start(InstanceConfig::default().tls(mode));
    match handshake(&fake, "localhost", &[ca_der()], ALL_VERSIONS) {
        Ok(_) => panic!("{mode:?}: verification passed"),
        Err(e) => {
            assert_eq!(
                fake.request_count(),
                0,
                "{mode:?}: no request after a failed handshake"
            );
            e
        }
    }
}

#[test]
fn each_tls_mode_presents_the_certificate_it_claims() {
    // Private CA passes, by IP and by name.
    let fake = FakeInstance::start(InstanceConfig::default());
    for name in ["127.0.0.1", "localhost"] {
        handshake(&fake, name, &[ca_der()], ALL_VERSIONS).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let expired = tls_error(TlsMode::Expired);
    assert!(expired.to_lowercase().contains("expired"), "{expired}");
    let wrong = tls_error(TlsMode::WrongName);
    assert!(wrong.contains("NotValidForName"), "{wrong}");
    let self_signed = tls_error(TlsMode::SelfSigned);
    assert!(self_signed.contains("UnknownIssuer"), "{self_signed}");

    // The self-signed one is otherwise sound: trusting the leaf itself works.
    let ss = FakeInstance::start(InstanceConfig::default().tls(TlsMode::SelfSigned));
    let leaf = crate::support::certs::server_cert(TlsMode::SelfSigned).chain[0].clone();
    handshake(&ss, "localhost", &[leaf], ALL_VERSIONS).expect("the leaf trusted itself");
}

#[test]
fn tls_1_2_and_1_3_are_both_accepted() {
    let fake = FakeInstance::start(InstanceConfig::default());
    for version in [&rustls::version::TLS12, &rustls::version::TLS13] {
        let conn = handshake(&fake, "localhost", &[ca_der()], &[version]).expect("handshake");
        assert_eq!(conn.protocol_version(), Some(version.version));
        assert_eq!(conn.alpn_protocol(), None, "no ALPN, like the real proxy");
    }
}

#[test]
fn plain_mode_speaks_http_and_tls_port_rejects_plain_http() {
    let plain = FakeInstance::start(InstanceConfig::default().tls(TlsMode::Plain));
    assert!(plain.base_url().starts_with("http://"));
    let mut resp = ureq::get(plain.url("/status.php"))
        .config()
        .proxy(None)
        .build()
        .call()
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(body(&mut resp).contains("\"productversion\": \"4.0.0\""));
    assert!(plain.ca_file().exists(), "CA file exists in every mode");

    let tls = FakeInstance::start(InstanceConfig::default());
    let mut tcp = TcpStream::connect(tls.addr()).unwrap();
    tcp.write_all(b"GET /status.php HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).unwrap();
    assert_eq!(
        out,
        "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
    );
}

#[test]
fn fail_first_n_with_503_then_normal() {
    let fake =
        FakeInstance::start(InstanceConfig::default().fail_first_n(2, FaultKind::Status(503)));
    let agent = agent_for(&fake);
    let codes: Vec<u16> = (0..4)
        .map(|_| {
            agent
                .get(fake.url("/status.php"))
                .call()
                .unwrap()
                .status()
                .as_u16()
        })
        .collect();
    assert_eq!(codes, vec![503, 503, 200, 200]);
    assert_eq!(fake.request_count(), 4);
}

#[test]
fn reset_fault_closes_without_answer() {
    let fake = FakeInstance::start(InstanceConfig::default().fail_first_n(1, FaultKind::Reset));
    // A fresh agent per call, so no pooled connection is involved.
    let first = agent_for(&fake).get(fake.url("/status.php")).call();
    assert!(first.is_err(), "first request is reset");
    let second = agent_for(&fake)
        .get(fake.url("/status.php"))
        .call()
        .unwrap();
    assert_eq!(second.status(), 200);
    assert!(fake.request_count() >= 2);

    let always = FakeInstance::start(InstanceConfig::default().always(FaultKind::Reset));
    assert!(agent_for(&always).get(always.url("/")).call().is_err());
    let always503 = FakeInstance::start(InstanceConfig::default().always(FaultKind::Status(502)));
    assert_eq!(
        agent_for(&always503)
            .get(always503.url("/"))
            .call()
            .unwrap()
            .status(),
        502
    );
}

#[test]
fn header_edits_apply_to_every_response() {
    let csp = "default-src 'none'; script-src 'self'";
    let fake = FakeInstance::start(
        InstanceConfig::default()
            .remove_header("Strict-Transport-Security")
            .set_header("Content-Security-Policy", csp)
            .add_header("Server", "nginx")
            .add_header("Vary", "Cookie"),
    );
    let agent = agent_for(&fake);
    for path in ["/status.php", "/", "/graph/v1.0/me"] {
        let resp = agent.get(fake.url(path)).call().unwrap();
        assert!(
            header(&resp, "strict-transport-security").is_none(),
            "{path}"
        );
        assert_eq!(
            header_all(&resp, "content-security-policy"),
            vec![csp],
            "{path}"
        );
        assert_eq!(header(&resp, "server").as_deref(), Some("nginx"), "{path}");
    }
    let root = agent.get(fake.url("/")).call().unwrap();
    assert_eq!(
        header_all(&root, "vary"),
        vec!["Origin", "Accept-Encoding", "Cookie"]
    );
}

#[test]
fn routes_override_and_extend() {
    let fake = FakeInstance::start(
        InstanceConfig::default()
            .route(
                "GET",
                "/status.php",
                "HTTP/1.1 500 Internal Server Error\nContent-Type: text/plain\n\nboom",
            )
            .route(
                "*",
                "/extra/*",
                "HTTP/1.1 418 I'm a teapot\nContent-Length: 999\n\nshort",
            ),
    );
    let agent = agent_for(&fake);
    let mut s = agent.get(fake.url("/status.php")).call().unwrap();
    assert_eq!(s.status(), 500);
    assert_eq!(body(&mut s), "boom");
    let mut e = agent.get(fake.url("/extra/anything")).call().unwrap();
    assert_eq!(e.status(), 418);
    assert_eq!(header(&e, "content-length").as_deref(), Some("5"));
    assert_eq!(body(&mut e), "short");
}

#[test]
fn basic_auth_enabled_accepts_demo_credentials() {
    let off = FakeInstance::start(InstanceConfig::default());
    let agent = agent_for(&off);
    let basic = |u: &str, p: &str| {
        format!(
            "Basic {}",
            crate::support::fixtures::base64_encode(format!("{u}:{p}").as_bytes())
        )
    };
    let r = agent
        .get(off.url("/graph/v1.0/me"))
        .header("Authorization", basic("dennis", "demo"))
        .call()
        .unwrap();
    assert_eq!(r.status(), 401, "basic auth off by default");

    let on = FakeInstance::start(InstanceConfig::default().basic_auth(true));
    let agent = agent_for(&on);
    let mut me = agent
        .get(on.url("/graph/v1.0/me"))
        .header("Authorization", basic("lynn", "demo"))
        .call()
        .unwrap();
    assert_eq!(me.status(), 200);
    assert!(
        header(&me, "content-security-policy")
            .unwrap()
            .contains("update.opencloud.eu")
    );
    assert_eq!(header(&me, "x-graph-version").as_deref(), Some("4.0.0"));
    let me: serde_json::Value = serde_json::from_str(&body(&mut me)).unwrap();
    assert_eq!(me["onPremisesSamAccountName"], "lynn");
    assert_eq!(me["displayName"], "Lynn Conway");

    let wrong = agent
        .get(on.url("/graph/v1.0/me"))
        .header("Authorization", basic("lynn", "wrong"))
        .call()
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(header_all(&wrong, "www-authenticate").len(), 2);

    let mut caps = agent
        .get(on.url("/ocs/v2.php/cloud/capabilities?format=json"))
        .header("Authorization", basic("dennis", "demo"))
        .call()
        .unwrap();
    assert_eq!(caps.status(), 200);
    assert_eq!(header(&caps, "ocs-api-version").as_deref(), Some("2"));
    let caps: serde_json::Value = serde_json::from_str(&body(&mut caps)).unwrap();
    assert_eq!(caps["ocs"]["meta"]["statuscode"], 200);

    let mut user = agent
        .get(on.url("/ocs/v1.php/cloud/user?format=json"))
        .header("Authorization", basic("mary", "demo"))
        .call()
        .unwrap();
    assert_eq!(user.status(), 200);
    assert!(body(&mut user).contains("\"id\":\"mary\""));

    let auth = basic("dennis", "demo");
    let propfind = ureq::http::Request::builder()
        .method("PROPFIND")
        .uri(on.url("/remote.php/dav/files/dennis/"))
        .header("Authorization", auth.as_str())
        .header("Depth", "0")
        .body(())
        .unwrap();
    let mut dav = agent.run(propfind).unwrap();
    assert_eq!(dav.status(), 207);
    assert!(body(&mut dav).contains("<d:href>/remote.php/dav/files/dennis/</d:href>"));
    let other = raw_request(
        &on,
        "PROPFIND",
        "/remote.php/dav/files/alan/",
        &[("Authorization", auth.as_str()), ("Depth", "0")],
        "",
    );
    assert_eq!(other.status, 404);
}

#[test]
fn cors_preflights_differ_between_graph_and_the_rest() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let agent = agent_for(&fake);
    let preflight = |path: &str, headers: &str| {
        agent
            .options(fake.url(path))
            .header("Origin", "https://evil.example")
            .header("Access-Control-Request-Method", "GET")
            .header("Access-Control-Request-Headers", headers)
            .call()
            .unwrap()
    };
    let graph = preflight("/graph/v1.0/users", "authorization");
    assert_eq!(graph.status(), 204);
    assert_eq!(
        header(&graph, "access-control-allow-origin").as_deref(),
        Some("*")
    );
    assert_eq!(
        header(&graph, "access-control-allow-credentials").as_deref(),
        Some("true")
    );
    for path in ["/", "/remote.php/dav/files/", "/ocs/v1.php/cloud/users"] {
        let r = preflight(path, "authorization");
        assert_eq!(r.status(), 204, "{path}");
        assert!(
            header(&r, "access-control-allow-origin").is_none(),
            "{path}"
        );
    }
    // rs/cors >= 1.11 only matches the lower-case header names browsers send.
    let upper = preflight("/graph/v1.0/me", "Authorization");
    assert!(header(&upper, "access-control-allow-origin").is_none());
    let get = agent
        .get(fake.url("/graph/v1.0/me"))
        .header("Origin", "https://evil.example")
        .call()
        .unwrap();
    assert!(header(&get, "access-control-allow-origin").is_none());
}

#[test]
fn records_requests_with_host_and_sni() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let agent = agent_for(&fake);
    agent.get(fake.url("/status.php?x=1")).call().unwrap();
    agent
        .get(format!("{}/status.php", fake.localhost_url()))
        .header("X-Probe", "yes")
        .call()
        .unwrap();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].method, "GET");
    assert_eq!(reqs[0].target, "/status.php?x=1");
    assert_eq!(reqs[0].path(), "/status.php");
    assert_eq!(reqs[0].header("host"), Some(fake.host_port().as_str()));
    assert_eq!(reqs[0].sni, None, "no SNI for an IP address");
    assert!(reqs[0].tls);
    assert_eq!(reqs[1].sni.as_deref(), Some("localhost"));
    assert_eq!(reqs[1].header("x-probe"), Some("yes"));
    assert!(
        reqs.iter()
            .all(|r| r.header("proxy-authorization").is_none())
    );
    assert!(reqs.iter().all(|r| r.header("authorization").is_none()));
}

#[test]
fn slow_faults_trip_short_client_timeouts() {
    let fake = FakeInstance::start(InstanceConfig::default().delay(Duration::from_secs(30)));
    let r = impatient_agent(&fake, Duration::from_millis(300))
        .get(fake.url("/status.php"))
        .call();
    assert!(r.is_err(), "delayed answer times out");

    let drip = FakeInstance::start(InstanceConfig::default().slow_drip(Duration::from_secs(5)));
    let mut resp = impatient_agent(&drip, Duration::from_millis(500))
        .get(drip.url("/status.php"))
        .call()
        .expect("headers arrive at once");
    assert_eq!(resp.status(), 200);
    assert!(resp.body_mut().read_to_string().is_err(), "body trickles");
}

#[test]
fn huge_header_endless_body_and_redirect() {
    let huge = FakeInstance::start(InstanceConfig::default().huge_header());
    assert!(
        agent_for(&huge)
            .get(huge.url("/status.php"))
            .call()
            .is_err()
    );

    let endless = FakeInstance::start(InstanceConfig::default().endless_body());
    let mut resp = agent_for(&endless)
        .get(endless.url("/status.php"))
        .call()
        .unwrap();
    let read = resp
        .body_mut()
        .with_config()
        .limit(256 * 1024)
        .read_to_vec();
    assert!(read.is_err(), "body never ends");

    let redirect =
        FakeInstance::start(InstanceConfig::default().redirect_to("https://elsewhere.example/"));
    let r = agent_for(&redirect)
        .get(redirect.url("/status.php"))
        .call()
        .unwrap();
    assert_eq!(r.status(), 302);
    assert_eq!(
        header(&r, "location").as_deref(),
        Some("https://elsewhere.example/")
    );
}

#[test]
fn infinite_scale_profile() {
    let fake = FakeInstance::start(InstanceConfig::ocis());
    let agent = agent_for(&fake);
    let mut status = agent.get(fake.url("/status.php")).call().unwrap();
    let json: serde_json::Value = serde_json::from_str(&body(&mut status)).unwrap();
    assert_eq!(json["productname"], "Infinite Scale");
    assert_eq!(json["productversion"], "7.0.0+860e1ad9");
    let me = agent.get(fake.url("/graph/v1.0/me")).call().unwrap();
    assert_eq!(
        header_all(&me, "www-authenticate").len(),
        1,
        "oCIS: Bearer only"
    );
    assert_eq!(agent.get(fake.url("/.env")).call().unwrap().status(), 404);
    let me_url = fake.base_url();
    let ok = logon(&fake, "einstein", "relativity", "x", true, Some(&me_url));
    assert_eq!(ok.status(), 200);

    let basic = FakeInstance::start(InstanceConfig::ocis().basic_auth(true).version("7.1.3"));
    let agent = agent_for(&basic);
    let unauth = agent.get(basic.url("/graph/v1.0/me")).call().unwrap();
    assert_eq!(header_all(&unauth, "www-authenticate").len(), 2);
    let mut me = agent
        .get(basic.url("/graph/v1.0/me"))
        .header("Authorization", "Basic ZWluc3RlaW46cmVsYXRpdml0eQ==")
        .call()
        .unwrap();
    assert_eq!(me.status(), 200);
    assert_eq!(header(&me, "x-graph-version").as_deref(), Some("7.1.3"));
    assert!(body(&mut me).contains("Albert Einstein"));
}

#[test]
fn debug_listener_serves_the_captured_answers() {
    let debug = start_debug_listener(&InstanceConfig::default());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .proxy(None)
        .http_status_as_error(false)
        .build()
        .new_agent();
    let get = |p: &str| {
        agent
            .get(format!("{}{p}", debug.base_url()))
            .call()
            .unwrap()
    };
    let mut health = get("/healthz");
    assert_eq!(health.status(), 200);
    assert_eq!(body(&mut health), "OK");
    assert_eq!(get("/readyz").status(), 200);
    assert_eq!(get("/debug/pprof/").status(), 404);
    let mut config = get("/config");
    assert_eq!(config.status(), 200);
    let config: serde_json::Value = serde_json::from_str(&body(&mut config)).unwrap();
    assert!(config.get("Commons").is_some());
    let mut metrics = get("/metrics");
    assert!(body(&mut metrics).contains("opencloud_proxy_build_info{version=\"4.0.0\"} 1"));
    assert_eq!(debug.request_count(), 5);
}

#[test]
fn closed_port_refuses_connections() {
    let port = closed_port();
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn fixture_lengths_are_consistent() {
    // Every capture with a Content-Length header has exactly that many body bytes.
    for dir in ["opencloud-4.0.0", "opencloud-3.7.0-variant", "ocis-7.0.0"] {
        let path = crate::support::fixtures::fixtures_dir().join(dir);
        for entry in std::fs::read_dir(&path).unwrap() {
            let file = entry.unwrap().path();
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".txt")
                || name.contains("HEAD")
                || name.starts_with("tls")
                || name.starts_with("ss-")
                || name.starts_with("listening")
            {
                continue;
            }
            let raw = std::fs::read(&file).unwrap();
            if !raw.starts_with(b"HTTP/") {
                continue;
            }
            let resp = RawResponse::parse(&raw);
            if let Some(len) = resp.header("Content-Length") {
                assert_eq!(
                    len.parse::<usize>().unwrap(),
                    resp.body.len(),
                    "{dir}/{name}"
                );
            }
        }
    }
}

/// `make demo`'s fake instance leaves nothing behind: with `--ca-out` the CA goes only there;
/// without, to a file of its own in the temporary directory, removed when SIGTERM or SIGINT
/// stops it.
#[test]
fn the_example_writes_its_ca_only_where_asked_and_cleans_up_on_stop() {
    let example = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples/fake-instance");
    // nextest builds no examples: `make test` builds them first. A stale one is said so.
    let built = std::fs::metadata(&example)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| {
            panic!(
                "{} is missing: run `cargo build --examples` (make test does)",
                example.display()
            )
        });
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fake_instance_main.rs");
    assert!(
        std::fs::metadata(&source).unwrap().modified().unwrap() <= built,
        "{} is older than its source: run `cargo build --examples` (make test does)",
        example.display()
    );
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fake-instance-example");
    let _ = std::fs::remove_dir_all(&base);
    for (name, signal, ca_out) in [("ca-out", "TERM", true), ("own-ca", "INT", false)] {
        let tmp = base.join(format!("{name}-tmp"));
        let out = base.join(format!("{name}-out"));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let ready = out.join("ready");
        let ca = out.join("ca.pem");
        let mut command = std::process::Command::new(&example);
        command.env("TMPDIR", &tmp).arg("--ready-file").arg(&ready);
        if ca_out {
            command.arg("--ca-out").arg(&ca);
        }
        let mut child = command
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run the example");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !ready.is_file() {
            assert!(std::time::Instant::now() < deadline, "{name}: never ready");
            std::thread::sleep(Duration::from_millis(20));
        }
        let in_tmp = || std::fs::read_dir(&tmp).unwrap().count();
        assert_eq!(in_tmp(), usize::from(!ca_out), "{name}: while it runs");
        assert_eq!(ca.is_file(), ca_out, "{name}");
        let status = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
        let status = child.wait().unwrap();
        assert!(status.success(), "{name}: {status}");
        assert_eq!(in_tmp(), 0, "{name}: the temporary directory is left clean");
        assert_eq!(
            ca.is_file(),
            ca_out,
            "{name}: --ca-out's file is the caller's"
        );
    }
}

/// A port a test holds closed refuses connections, and no other process can listen on it
/// (on its address or on the wildcard address) while the test holds it: a scan's debug ports
/// in the tests are these, never the machine's.
#[test]
fn a_held_closed_port_refuses_and_cannot_be_taken() {
    let held = crate::support::HeldClosedPort::new();
    let port = held.port();
    let refused = TcpStream::connect(("127.0.0.1", port)).unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    for address in ["127.0.0.1", "0.0.0.0"] {
        assert!(
            std::net::TcpListener::bind((address, port)).is_err(),
            "another listener took {address}:{port}"
        );
    }
    drop(held);
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
}
