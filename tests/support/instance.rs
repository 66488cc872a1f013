//! The fake OpenCloud / Infinite Scale instance: configuration, routing and the captured
//! answers it replays.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::certs::{self, TlsMode};
use super::fixtures::{
    RawResponse, base64_decode, http_date, http_date_now, query_param, replace_version,
};
use super::http::RecordedRequest;
use super::server::{Action, Handler, Reply, Server, Traffic};

/// Which server the fake plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Product {
    /// OpenCloud, fixtures `tests/fixtures/opencloud-4.0.0` (+ `opencloud-3.7.0-variant`).
    OpenCloud,
    /// ownCloud Infinite Scale, fixtures `tests/fixtures/ocis-7.0.0`.
    InfiniteScale,
}

impl Product {
    /// Version string found in the captures (what `version` rewrites).
    pub fn captured_version(self) -> &'static str {
        match self {
            Product::OpenCloud => "4.0.0",
            Product::InfiniteScale => "7.0.0+860e1ad9",
        }
    }

    /// Demo accounts the captured instance had (`IDM_CREATE_DEMO_USERS=true`).
    pub fn demo_accounts(self) -> &'static [DemoAccount] {
        match self {
            Product::OpenCloud => OPENCLOUD_ACCOUNTS,
            Product::InfiniteScale => OCIS_ACCOUNTS,
        }
    }

    /// A demo account that works for logon and (with `basic_auth`) Basic credentials.
    pub fn demo_account(self) -> &'static DemoAccount {
        match self {
            Product::OpenCloud => &OPENCLOUD_ACCOUNTS[3],
            Product::InfiniteScale => &OCIS_ACCOUNTS[0],
        }
    }
}

/// A demo user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoAccount {
    pub username: &'static str,
    pub password: &'static str,
    pub display_name: &'static str,
    pub email: &'static str,
    /// Only dennis' (OpenCloud) and einstein's/admin's (oCIS) ids are captured ones.
    pub id: &'static str,
}

const fn acct(
    username: &'static str,
    password: &'static str,
    display_name: &'static str,
    email: &'static str,
    id: &'static str,
) -> DemoAccount {
    DemoAccount {
        username,
        password,
        display_name,
        email,
        id,
    }
}

/// OpenCloud demo users, all with password `demo`.
pub const OPENCLOUD_ACCOUNTS: &[DemoAccount] = &[
    acct(
        "alan",
        "demo",
        "Alan Turing",
        "alan@example.org",
        "b1f74ec4-dd7e-11ef-a543-03775734d0f7",
    ),
    acct(
        "mary",
        "demo",
        "Mary Kenneth Keller",
        "mary@example.org",
        "056fc874-dd7f-11ef-ba84-af6fca4b7289",
    ),
    acct(
        "margaret",
        "demo",
        "Margaret Hamilton",
        "margaret@example.org",
        "801abee4-dd7f-11ef-a324-83f55a754b62",
    ),
    acct(
        "dennis",
        "demo",
        "Dennis Ritchie",
        "dennis@example.org",
        "cd88bf9a-dd7f-11ef-a609-7f78deb2345f",
    ),
    acct(
        "lynn",
        "demo",
        "Lynn Conway",
        "lynn@example.org",
        "19cf8b38-dd80-11ef-8c7e-8b6ad4e0c6c3",
    ),
];

/// oCIS demo users (their well-known passwords) plus `admin:admin` as initialised for the capture.
pub const OCIS_ACCOUNTS: &[DemoAccount] = &[
    acct(
        "einstein",
        "relativity",
        "Albert Einstein",
        "einstein@example.org",
        "4c510ada-c86b-4815-8820-42cdf82c3d51",
    ),
    acct(
        "marie",
        "radioactivity",
        "Marie Curie",
        "marie@example.org",
        "f7fbf8c8-139b-4376-b307-cf0a8c2d0d9c",
    ),
    acct(
        "richard",
        "superfluidity",
        "Richard Feynman",
        "richard@example.org",
        "932b4540-8d16-481e-8ef4-588e4b6b151c",
    ),
    acct(
        "katherine",
        "gemini",
        "Katherine Johnson",
        "katherine@example.org",
        "534bb038-6f9d-4093-946f-133be61fa4e7",
    ),
    acct(
        "moss",
        "vista",
        "Maurice Moss",
        "moss@example.org",
        "058bff95-6708-4fe5-91e4-9ea3d377588b",
    ),
    acct(
        "admin",
        "admin",
        "Admin",
        "admin@example.org",
        "35bdc93c-b2b9-49c6-862d-05463a4d83a0",
    ),
];

/// What a fault does to a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Answer with this status (`text/plain` body with the reason phrase).
    Status(u16),
    /// Read the request, then close the connection without answering.
    Reset,
}

/// A fault applied to the first `first_n` requests (counted across all connections), or to
/// every request when `first_n` is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub first_n: Option<usize>,
}

/// Edit applied to every response of the instance (after it is built, before sending).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderEdit {
    /// Remove every header of that name.
    Remove(String),
    /// Replace all headers of that name by one (in place of the first; appended if absent).
    Set(String, String),
    /// Append a header (repeats allowed).
    Add(String, String),
    /// Append a header whose value is sent byte for byte (need not be UTF-8).
    AddRaw(String, Vec<u8>),
}

/// An extra or overriding answer.
#[derive(Clone, Debug)]
pub struct Route {
    /// Method (case-insensitive) or `*` for any.
    pub method: String,
    /// Exact path; with a `?` the whole target (path+query) must match; a trailing `*`
    /// matches by prefix.
    pub path: String,
    pub response: RawResponse,
}

impl Route {
    fn matches(&self, method: &str, target: &str) -> bool {
        if self.method != "*" && !self.method.eq_ignore_ascii_case(method) {
            return false;
        }
        let subject = if self.path.contains('?') {
            target
        } else {
            target.split('?').next().unwrap_or_default()
        };
        match self.path.strip_suffix('*') {
            Some(prefix) => subject.starts_with(prefix),
            None => subject == self.path,
        }
    }
}

/// Configuration of a [`FakeInstance`]; `Default` is the captured OpenCloud 4.0.0 over HTTPS
/// with a certificate from the private CA, demo users on, basic auth off.
#[derive(Clone, Debug)]
pub struct InstanceConfig {
    pub product: Product,
    /// Version to report; `None` = the captured one ([`Product::captured_version`]).
    pub version: Option<String>,
    /// Raw body for `/status.php` (and `/status`), sent with the captured headers.
    pub status_override: Option<String>,
    pub tls: TlsMode,
    pub header_edits: Vec<HeaderEdit>,
    /// Checked before the built-in routes, first match wins.
    pub routes: Vec<Route>,
    pub fault: Option<Fault>,
    /// Wait before answering (with `slow_drip`: the pause before each body byte instead).
    pub delay: Option<Duration>,
    /// Send bodies one byte per `delay` (100 ms when `delay` is unset); headers go out at once.
    pub slow_drip: bool,
    /// Add a 1 MiB `X-Huge-Header` to every response.
    pub huge_header: bool,
    /// Stream every body forever (chunked) until the client goes away.
    pub endless_body: bool,
    /// Answer every path but the status document (`/status.php`, `/status`) with a body of
    /// this many bytes (`Content-Length`), made as it is sent and never held in memory.
    pub huge_body: Option<u64>,
    /// Answer every request with `302 Found` to this location.
    pub redirect_to: Option<String>,
    pub demo_users: bool,
    /// `PROXY_ENABLE_BASIC_AUTH=true`: demo credentials work as Basic auth on graph/ocs/dav.
    pub basic_auth: bool,
    /// Public URL written into bodies in place of the captured `https://localhost:9200`
    /// (OpenID discovery, config.json, webfinger, IDP continue_uri, ocs config host).
    /// `None` = `https://localhost:<port>` (`http://` for Plain).
    pub public_url: Option<String>,
    /// Hold sign-ins at the identity provider until they are in flight together
    /// ([`LogonGate`]).
    pub logon_gate: Option<LogonGate>,
    /// Speak TLS 1.2 only (session-id resumption instead of TLS 1.3 tickets).
    pub tls12_only: bool,
}

/// Holds each sign-in call until `together` of them are in flight at once, or until `total`
/// have arrived (the last ones have nobody left to wait for). A client that signs in one at a
/// time never gets `together` in flight: its first sign-in waits [`LOGON_GATE_LIMIT`] and the
/// instance records that the gate timed out ([`SignIns::gate_timed_out`]). No test waits on
/// that limit to pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogonGate {
    pub together: usize,
    pub total: usize,
}

/// How long a gated sign-in waits for company before it answers anyway.
pub const LOGON_GATE_LIMIT: Duration = Duration::from_secs(10);

/// What the identity provider saw of the sign-in calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignIns {
    /// Sign-in calls received.
    pub count: usize,
    /// The most sign-in calls in flight at the same moment.
    pub peak_in_flight: usize,
    /// A gated sign-in waited [`LOGON_GATE_LIMIT`] without company.
    pub gate_timed_out: bool,
}

/// Counts a sign-in out when dropped: the fake drops it once the answer has left.
struct LogonInFlight(Arc<Logons>);

impl Drop for LogonInFlight {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// Sign-ins in flight at the fake identity provider, and the gate that holds them.
#[derive(Default)]
struct Logons {
    gate: Option<LogonGate>,
    state: Mutex<LogonState>,
    changed: Condvar,
}

#[derive(Default)]
struct LogonState {
    seen: SignIns,
    in_flight: usize,
    /// Sign-ins waiting at the gate, and how many batches the gate has let through.
    waiting: usize,
    batches: usize,
}

impl Logons {
    /// Counts one sign-in in, holding it at the gate; [`Logons::leave`] counts it out.
    fn enter(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.seen.count += 1;
        state.in_flight += 1;
        state.seen.peak_in_flight = state.seen.peak_in_flight.max(state.in_flight);
        let Some(gate) = self.gate else { return };
        state.waiting += 1;
        if state.waiting >= gate.together || state.seen.count >= gate.total {
            state.waiting = 0;
            state.batches += 1;
            self.changed.notify_all();
            return;
        }
        let batch = state.batches;
        let deadline = Instant::now() + LOGON_GATE_LIMIT;
        while state.batches == batch {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                state.seen.gate_timed_out = true;
                state.waiting = state.waiting.saturating_sub(1);
                return;
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Counts a sign-in out (see [`LogonInFlight`]).
    fn leave(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.in_flight = state.in_flight.saturating_sub(1);
    }

    fn seen(&self) -> SignIns {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).seen
    }

    fn reset(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).seen = SignIns::default();
    }
}

impl Default for InstanceConfig {
    fn default() -> Self {
        InstanceConfig {
            product: Product::OpenCloud,
            version: None,
            status_override: None,
            tls: TlsMode::PrivateCa,
            header_edits: Vec::new(),
            routes: Vec::new(),
            fault: None,
            delay: None,
            slow_drip: false,
            huge_header: false,
            endless_body: false,
            huge_body: None,
            redirect_to: None,
            demo_users: true,
            basic_auth: false,
            public_url: None,
            logon_gate: None,
            tls12_only: false,
        }
    }
}

impl InstanceConfig {
    pub fn new() -> InstanceConfig {
        InstanceConfig::default()
    }

    /// Infinite Scale 7.0.0 defaults (its fixtures and captured version).
    pub fn ocis() -> InstanceConfig {
        InstanceConfig::default().product(Product::InfiniteScale)
    }

    pub fn product(mut self, product: Product) -> Self {
        self.product = product;
        self
    }

    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The version the instance reports.
    pub fn effective_version(&self) -> String {
        self.version
            .clone()
            .unwrap_or_else(|| self.product.captured_version().to_string())
    }

    pub fn status_override(mut self, body: impl Into<String>) -> Self {
        self.status_override = Some(body.into());
        self
    }

    pub fn tls(mut self, mode: TlsMode) -> Self {
        self.tls = mode;
        self
    }

    pub fn plain(self) -> Self {
        self.tls(TlsMode::Plain)
    }

    pub fn remove_header(mut self, name: impl Into<String>) -> Self {
        self.header_edits.push(HeaderEdit::Remove(name.into()));
        self
    }

    pub fn set_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.header_edits
            .push(HeaderEdit::Set(name.into(), value.into()));
        self
    }

    pub fn add_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.header_edits
            .push(HeaderEdit::Add(name.into(), value.into()));
        self
    }

    /// Appends a header sent byte for byte, e.g. a value that is not UTF-8.
    pub fn add_raw_header(mut self, name: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.header_edits
            .push(HeaderEdit::AddRaw(name.into(), value.into()));
        self
    }

    pub fn header_edit(mut self, edit: HeaderEdit) -> Self {
        self.header_edits.push(edit);
        self
    }

    /// Extra/overriding answer from `curl -i` style text (`\n` or `\r\n` line ends). The
    /// `Content-Length` is corrected and `Date` (when present) set to now.
    pub fn route(mut self, method: &str, path: &str, raw_response: &str) -> Self {
        self.routes.push(Route {
            method: method.to_string(),
            path: path.to_string(),
            response: RawResponse::parse(raw_response.as_bytes()),
        });
        self
    }

    pub fn route_response(mut self, method: &str, path: &str, response: RawResponse) -> Self {
        self.routes.push(Route {
            method: method.to_string(),
            path: path.to_string(),
            response,
        });
        self
    }

    pub fn fail_first_n(mut self, n: usize, kind: FaultKind) -> Self {
        self.fault = Some(Fault {
            kind,
            first_n: Some(n),
        });
        self
    }

    pub fn always(mut self, kind: FaultKind) -> Self {
        self.fault = Some(Fault {
            kind,
            first_n: None,
        });
        self
    }

    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = Some(d);
        self
    }

    /// Bodies trickle one byte per `per_byte`.
    pub fn slow_drip(mut self, per_byte: Duration) -> Self {
        self.slow_drip = true;
        self.delay = Some(per_byte);
        self
    }

    pub fn huge_header(mut self) -> Self {
        self.huge_header = true;
        self
    }

    pub fn endless_body(mut self) -> Self {
        self.endless_body = true;
        self
    }

    /// A hostile instance: a valid status document, and `bytes` of filler on every other path.
    pub fn huge_body(mut self, bytes: u64) -> Self {
        self.huge_body = Some(bytes);
        self
    }

    pub fn redirect_to(mut self, location: impl Into<String>) -> Self {
        self.redirect_to = Some(location.into());
        self
    }

    pub fn demo_users(mut self, on: bool) -> Self {
        self.demo_users = on;
        self
    }

    pub fn basic_auth(mut self, on: bool) -> Self {
        self.basic_auth = on;
        self
    }

    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = Some(url.into());
        self
    }

    /// TLS 1.2 only.
    pub fn tls12_only(mut self) -> Self {
        self.tls12_only = true;
        self
    }

    /// Sign-ins wait until `together` are in flight at once (or all `total` have arrived).
    pub fn logon_gate(mut self, together: usize, total: usize) -> Self {
        self.logon_gate = Some(LogonGate { together, total });
        self
    }
}

/// A running fake instance on loopback; stops accepting on drop.
pub struct FakeInstance {
    server: Server,
    config: InstanceConfig,
    public_url: String,
    logons: Arc<Logons>,
}

impl FakeInstance {
    /// Starts on `127.0.0.1:0` (ephemeral port). Panics when that fails.
    pub fn start(config: InstanceConfig) -> FakeInstance {
        FakeInstance::start_at(config, SocketAddr::from(([127, 0, 0, 1], 0)))
            .expect("start fake instance")
    }

    /// Starts on a given address (the example binary's `--port`).
    pub fn start_at(config: InstanceConfig, bind: SocketAddr) -> std::io::Result<FakeInstance> {
        // Reserve the port first: the public URL (written into bodies) needs it.
        let listener = std::net::TcpListener::bind(bind)?;
        let addr = listener.local_addr()?;
        drop(listener);
        let scheme = if config.tls.is_tls() { "https" } else { "http" };
        let public_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("{scheme}://localhost:{}", addr.port()))
            .trim_end_matches('/')
            .to_string();
        let logons = Arc::new(Logons {
            gate: config.logon_gate,
            ..Logons::default()
        });
        let app = Arc::new(App::new(config.clone(), &public_url, logons.clone()));
        let handler: Handler = Arc::new(move |req| app.handle(req));
        let tls = config.tls.is_tls().then(|| match config.tls12_only {
            true => certs::server_config_for(config.tls, &[&rustls::version::TLS12]),
            false => certs::server_config(config.tls),
        });
        let _ = certs::ca_file();
        let server = Server::start(addr, tls, handler)?;
        Ok(FakeInstance {
            server,
            config,
            public_url,
            logons,
        })
    }

    pub fn port(&self) -> u16 {
        self.server.addr().port()
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// `127.0.0.1:PORT`, or the address it was started on ([`FakeInstance::start_at`]).
    pub fn host_port(&self) -> String {
        super::server::reachable(self.addr())
    }

    /// `https://127.0.0.1:PORT` (`http://` for [`TlsMode::Plain`]).
    pub fn base_url(&self) -> String {
        let scheme = if self.config.tls.is_tls() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.host_port())
    }

    /// `https://localhost:PORT` (the name is in the certificate too).
    pub fn localhost_url(&self) -> String {
        let scheme = if self.config.tls.is_tls() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://localhost:{}", self.port())
    }

    /// `base_url() + path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url(), path)
    }

    /// URL written into bodies (issuer, config.json server, ...).
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// PEM file of the private CA (exists in every TLS mode, also for Plain/SelfSigned).
    pub fn ca_file(&self) -> PathBuf {
        certs::ca_file()
    }

    /// PEM of the certificate this instance serves (empty for Plain).
    pub fn cert_pem(&self) -> String {
        if self.config.tls.is_tls() {
            certs::server_cert(self.config.tls).cert_pem.clone()
        } else {
            String::new()
        }
    }

    pub fn config(&self) -> &InstanceConfig {
        &self.config
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    pub fn request_count(&self) -> usize {
        self.server.request_count()
    }

    /// Forgets the recorded requests; fault counting (`fail_first_n`) is not reset.
    pub fn clear_requests(&self) {
        self.server.clear_requests()
    }

    /// Requests received since start, including cleared ones.
    pub fn total_requests(&self) -> usize {
        self.server.total_requests()
    }

    /// Connections, the most open at once, requests and TLS handshakes so far.
    pub fn traffic(&self) -> Traffic {
        self.server.traffic()
    }

    /// Starts counting [`FakeInstance::traffic`] and [`FakeInstance::sign_ins`] anew.
    pub fn reset_traffic(&self) {
        self.server.reset_traffic();
        self.logons.reset();
    }

    /// Waits until every client connection has closed (at most `limit`): the handshake and
    /// connection counts are final then.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        self.server.wait_idle(limit)
    }

    /// What the identity provider saw of the sign-in calls.
    pub fn sign_ins(&self) -> SignIns {
        self.logons.seen()
    }
}

/// A handler answering as an instance of `config` whose public URL (written into bodies) is
/// `public_url`: one for many listeners that answer alike (a fleet), its templates held once.
pub fn shared_handler(config: InstanceConfig, public_url: &str) -> Handler {
    let logons = Arc::new(Logons {
        gate: config.logon_gate,
        ..Logons::default()
    });
    let app = Arc::new(App::new(config, public_url, logons));
    Arc::new(move |req| app.handle(req))
}

/// The request handler with all templates prepared.
struct App {
    config: InstanceConfig,
    tpl: HashMap<&'static str, RawResponse>,
    template_user: &'static DemoAccount,
    started: jiff::Timestamp,
    logons: Arc<Logons>,
}

/// Logical templates: (key, OpenCloud file, Infinite Scale file).
const TEMPLATES: &[(&str, &str, &str)] = &[
    ("status", "status.php.txt", "status.php.txt"),
    ("status_alt", "status.txt", "status.php.txt"),
    (
        "caps_json",
        "ocs-v1-capabilities.txt",
        "ocs-v1-capabilities-unauth.txt",
    ),
    (
        "caps_xml",
        "ocs-v1-capabilities-xml.txt",
        "ocs-v1-capabilities-xml-unauth.txt",
    ),
    ("ocs_config", "ocs-v1-config.txt", ""),
    ("root", "root-GET.txt", "root-GET.txt"),
    ("spa", "random-nonexistent-path.txt", "exposed-dotenv.txt"),
    ("spa_head", "root-HEAD.txt", "root-HEAD.txt"),
    (
        "oidc",
        "well-known-openid-configuration.txt",
        "openid-configuration.txt",
    ),
    (
        "webfinger",
        "well-known-webfinger.txt",
        "webfinger-unauth.txt",
    ),
    ("unauth", "graph-me-unauth.txt", "graph-me-unauth.txt"),
    (
        "unauth_dav",
        "dav-files-unauth-PROPFIND.txt",
        "dav-files-unauth-PROPFIND.txt",
    ),
    ("unauth_xhr", "graph-me-unauth-xhr.txt", ""),
    ("app_list", "app-list.txt", "app-list.txt"),
    ("jwks", "idp-jwks.txt", "idp-jwks.txt"),
    (
        "signin",
        "idp-signin-identifier-GET.txt",
        "idp-signin-identifier-GET.txt",
    ),
    ("web_config", "web-config.json.txt", "config.json.txt"),
    (
        "preflight_graph",
        "cors-preflight-evil-graph-me.txt",
        "cors-preflight-evil-graph-me-lcheaders.txt",
    ),
    (
        "preflight_api",
        "cors-preflight-evil-dav.txt",
        "cors-preflight-evil-dav-lcheaders.txt",
    ),
    (
        "preflight_web",
        "cors-preflight-evil-root.txt",
        "cors-preflight-evil-root-lcheaders.txt",
    ),
    (
        "logon_ok",
        "login-idp-logon-dennis-demo.txt",
        "login-idp-logon-einstein-demo.txt",
    ),
    (
        "logon_fail",
        "login-idp-logon-dennis-wrong.txt",
        "login-idp-logon-einstein-wrong.txt",
    ),
    (
        "logon_bad",
        "login-idp-logon-no-xsrf-header.txt",
        "login-idp-logon-no-xsrf-header.txt",
    ),
    (
        "basic_graph_me",
        "../opencloud-3.7.0-variant/login-basic-dennis-graph-me.txt",
        "basic-auth-enabled/cors-GET-evil-graph-me-basic.txt",
    ),
    (
        "basic_dav",
        "../opencloud-3.7.0-variant/login-basic-dennis-dav.txt",
        "basic-auth-enabled/dav-files-basic-einstein-PROPFIND.txt",
    ),
    (
        "basic_ocs_user",
        "../opencloud-3.7.0-variant/ocs-v1-cloud-user-basic-dennis.txt",
        "basic-auth-enabled/ocs-v1-user-basic-einstein.txt",
    ),
];

/// Same-named oCIS templates replaced when basic auth is enabled (that run sends a second,
/// Basic challenge; OpenCloud sends both challenges either way).
const OCIS_BASIC_OVERLAY: &[(&str, &str)] = &[
    ("unauth", "basic-auth-enabled/graph-me-unauth.txt"),
    (
        "unauth_dav",
        "basic-auth-enabled/dav-files-unauth-PROPFIND.txt",
    ),
];

const WEBDAV_METHODS: &[&str] = &[
    "PROPFIND",
    "PROPPATCH",
    "MKCOL",
    "COPY",
    "MOVE",
    "LOCK",
    "UNLOCK",
    "REPORT",
    "SEARCH",
];

/// Path prefixes the proxy routes to authenticated backends (everything else is the web
/// service's SPA catch-all or a public endpoint).
const API_PREFIXES: &[&str] = &[
    "/graph",
    "/ocs",
    "/remote.php",
    "/dav",
    "/webdav",
    "/app",
    "/api",
    "/archiver",
    "/data",
];

/// CORS settings of the graph service (rs/cors): methods and lower-case headers allowed.
const GRAPH_CORS_METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const GRAPH_CORS_HEADERS: &[&str] = &[
    "authorization",
    "origin",
    "content-type",
    "accept",
    "x-requested-with",
    "x-request-id",
    "ocs-apirequest",
    "cache-control",
];

fn under(path: &str, prefix: &str) -> bool {
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn is_api_path(path: &str) -> bool {
    API_PREFIXES.iter().any(|p| under(path, p))
}

/// Standard reason phrase.
pub fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        207 => "Multi-Status",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// Host part of an `Origin`/`Referer` URL (`https://host:port/path` -> `host:port`).
fn url_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    Some(host.rsplit_once('@').map(|(_, h)| h).unwrap_or(host))
}

/// Replaces the value of the first `"key": "..."` string in a JSON text.
fn replace_first_json_string(text: &str, key: &str, value: &str) -> String {
    let encoded = serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_string());
    for pattern in [format!("\"{key}\": \""), format!("\"{key}\":\"")] {
        if let Some(start) = text.find(&pattern) {
            let value_start = start + pattern.len() - 1;
            if let Some(len) = text[value_start + 1..].find('"') {
                let value_end = value_start + 1 + len + 1;
                return format!("{}{}{}", &text[..value_start], encoded, &text[value_end..]);
            }
        }
    }
    text.to_string()
}

impl App {
    fn new(config: InstanceConfig, public_url: &str, logons: Arc<Logons>) -> App {
        let product = config.product;
        let version = config.effective_version();
        let (dir, captured) = match product {
            Product::OpenCloud => ("opencloud-4.0.0", "4.0.0"),
            Product::InfiniteScale => ("ocis-7.0.0", "7.0.0+860e1ad9"),
        };
        let mut tpl = HashMap::new();
        let mut load = |key: &'static str, file: &str| {
            if file.is_empty() {
                return;
            }
            let from_variant = file.starts_with("../opencloud-3.7.0-variant/");
            let mut resp = RawResponse::load(&format!("{dir}/{file}"));
            let tpl_version = if from_variant { "3.7.0" } else { captured };
            rewrite_version(&mut resp, tpl_version, &version);
            rewrite_public_url(&mut resp, public_url);
            tpl.insert(key, resp);
        };
        for (key, oc, ocis) in TEMPLATES {
            let file = match product {
                Product::OpenCloud => oc,
                Product::InfiniteScale => ocis,
            };
            load(key, file);
        }
        if product == Product::InfiniteScale && config.basic_auth {
            for (key, file) in OCIS_BASIC_OVERLAY {
                load(key, file);
            }
        }
        // The 3.7.0 basic-auth captures carry 3.7.0's CSP: use the product's current one.
        let csp = tpl["status"]
            .header("Content-Security-Policy")
            .unwrap_or_default()
            .to_string();
        for key in ["basic_graph_me", "basic_dav", "basic_ocs_user"] {
            if let Some(r) = tpl.get_mut(key) {
                r.replace_header_values("Content-Security-Policy", |_| csp.clone());
                // The oCIS graph template was captured with an evil Origin: strip its CORS answer.
                r.remove_header("Access-Control-Allow-Origin");
                r.remove_header("Access-Control-Allow-Credentials");
            }
        }
        if !tpl.contains_key("unauth_xhr") {
            let mut xhr = tpl["unauth"].clone();
            xhr.remove_header("Www-Authenticate");
            tpl.insert("unauth_xhr", xhr);
        }
        App {
            template_user: product.demo_account(),
            config,
            tpl,
            started: jiff::Timestamp::now(),
            logons,
        }
    }

    fn t(&self, key: &str) -> RawResponse {
        self.tpl
            .get(key)
            .unwrap_or_else(|| panic!("no template {key} for {:?}", self.config.product))
            .clone()
    }

    fn handle(&self, req: &RecordedRequest) -> Action {
        // A sign-in is in flight from its arrival until its answer has left.
        let signing_in = (req.path() == "/signin/v1/identifier/_/logon").then(|| {
            self.logons.enter();
            LogonInFlight(self.logons.clone())
        });
        let mut action = self.answer(req);
        if let (Action::Respond(reply), Some(signing_in)) = (&mut action, signing_in) {
            reply.until_sent = Some(Box::new(signing_in));
        }
        action
    }

    fn answer(&self, req: &RecordedRequest) -> Action {
        let method = req.method.to_ascii_uppercase();
        let head_only = method == "HEAD";
        if let Some(fault) = self.config.fault {
            if fault.first_n.is_none_or(|n| req.index < n) {
                match fault.kind {
                    FaultKind::Reset => return Action::Reset,
                    FaultKind::Status(code) => {
                        let mut resp = RawResponse::new(code, reason_phrase(code));
                        resp.add_header("Content-Type", "text/plain; charset=utf-8");
                        resp.add_header("X-Content-Type-Options", "nosniff");
                        resp.add_header("Date", &http_date_now());
                        resp.set_body(format!("{}\n", reason_phrase(code)));
                        return self.finish(req, resp, head_only);
                    }
                }
            }
        }
        if let Some(location) = &self.config.redirect_to {
            let mut resp = RawResponse::new(302, "Found");
            resp.add_header("Content-Type", "text/html; charset=utf-8");
            resp.add_header("Location", location);
            resp.add_header("Date", &http_date_now());
            resp.set_body(format!("<a href=\"{location}\">Found</a>.\n\n"));
            return self.finish(req, resp, head_only);
        }
        if let Some(route) = self
            .config
            .routes
            .iter()
            .find(|r| r.matches(&method, &req.target))
        {
            let mut resp = route.response.clone();
            if resp.has_header("Date") {
                resp.set_header("Date", &http_date_now());
            }
            return self.finish(req, resp, head_only);
        }
        let resp = self.route(req, &method);
        let resp = self.dynamic(req, resp);
        self.finish(req, resp, head_only)
    }

    /// Header edits, fault knobs, length; builds the reply.
    fn finish(&self, req: &RecordedRequest, mut resp: RawResponse, head_only: bool) -> Action {
        if req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
        {
            resp.set_header("Connection", "close");
        }
        for edit in &self.config.header_edits {
            match edit {
                HeaderEdit::Remove(n) => resp.remove_header(n),
                HeaderEdit::Set(n, v) => resp.set_header(n, v),
                HeaderEdit::Add(n, v) => resp.add_header(n, v),
                HeaderEdit::AddRaw(n, v) => resp.add_raw_header(n, v),
            }
        }
        resp.finalize_length();
        if self.config.huge_header {
            resp.add_header("X-Huge-Header", &"a".repeat(1024 * 1024));
        }
        let body_allowed = resp.status >= 200 && resp.status != 204 && resp.status != 304;
        let endless = self.config.endless_body && body_allowed;
        if endless {
            resp.remove_header("Content-Length");
            resp.add_header("Transfer-Encoding", "chunked");
        }
        let status_document = matches!(req.path(), "/status.php" | "/status");
        let huge = self
            .config
            .huge_body
            .filter(|_| body_allowed && !endless && !status_document);
        if let Some(bytes) = huge {
            resp.set_header("Content-Length", &bytes.to_string());
        }
        let drip = self
            .config
            .slow_drip
            .then(|| self.config.delay.unwrap_or(Duration::from_millis(100)));
        let mut reply = Reply::new(resp);
        reply.head_only = head_only;
        reply.endless = endless;
        reply.huge = huge;
        reply.drip = drip;
        reply.delay = if self.config.slow_drip {
            None
        } else {
            self.config.delay
        };
        Action::Respond(reply)
    }

    /// Date, Last-Modified, Expires, X-Request-Id, realm from Host.
    fn dynamic(&self, req: &RecordedRequest, mut resp: RawResponse) -> RawResponse {
        let now = jiff::Timestamp::now();
        let now_s = http_date(now);
        if resp.has_header("Date") {
            resp.set_header("Date", &now_s);
        } else {
            resp.add_header("Date", &now_s);
        }
        let no_cache = resp
            .header("Expires")
            .is_some_and(|v| v.contains("01 Jan 1970"));
        if resp.has_header("Last-Modified") {
            let lm = if no_cache {
                now_s.clone()
            } else {
                http_date(self.started)
            };
            resp.set_header("Last-Modified", &lm);
        }
        if resp.has_header("Expires") && !no_cache {
            let week = self
                .started
                .checked_add(jiff::SignedDuration::from_secs(604_800))
                .unwrap_or(self.started);
            resp.set_header("Expires", &http_date(week));
        }
        let id = format!("{:06}", req.index + 23);
        resp.replace_header_values("X-Request-Id", |v| match v.rsplit_once('-') {
            Some((prefix, _)) => format!("{prefix}-{id}"),
            None => v.to_string(),
        });
        if let Some(host) = req.header("host") {
            resp.replace_header_values("Www-Authenticate", |v| match v.split_once("realm=\"") {
                Some((before, rest)) => {
                    let after = rest.split_once('"').map(|(_, a)| a).unwrap_or_default();
                    format!("{before}realm=\"{host}\"{after}")
                }
                None => v.to_string(),
            });
        }
        resp
    }

    fn route(&self, req: &RecordedRequest, method: &str) -> RawResponse {
        let path = req.path();
        let query = req.query();
        if method == "OPTIONS"
            && req.has_header("origin")
            && req.has_header("access-control-request-method")
        {
            return self.preflight(req, path);
        }
        match path {
            "/status.php" | "/status" => {
                let mut r = self.t(if path == "/status" {
                    "status_alt"
                } else {
                    "status"
                });
                if let Some(body) = &self.config.status_override {
                    r.set_body(body.clone());
                }
                return r;
            }
            "/ocs/v1.php/cloud/capabilities" => {
                let json = query_param(query, "format").is_some_and(|f| f == "json");
                return self.t(if json { "caps_json" } else { "caps_xml" });
            }
            "/ocs/v1.php/config" if self.tpl.contains_key("ocs_config") => {
                return self.t("ocs_config");
            }
            "/.well-known/openid-configuration" => return self.t("oidc"),
            "/.well-known/webfinger" => {
                let mut r = self.t("webfinger");
                if let Some(resource) = query_param(query, "resource") {
                    r.map_body(|b| replace_first_json_string(b, "subject", &resource));
                }
                return r;
            }
            "/konnect/v1/jwks.json" => return self.t("jwks"),
            "/config.json" => return self.t("web_config"),
            "/app/list" => return self.t("app_list"),
            "/signin/v1/identifier/_/logon" => return self.logon(req, method),
            _ => {}
        }
        if under(path, "/signin/v1/identifier") {
            return self.t("signin");
        }
        if is_api_path(path) {
            if let Some(user) = self.basic_user(req) {
                return self.authorized(req, method, path, user);
            }
            return self.unauthorized(req, method);
        }
        // The web service's catch-all: index.html for every other path and method.
        if method == "HEAD" {
            let mut r = self.t("spa_head");
            r.body = self.t(if path == "/" { "root" } else { "spa" }).body;
            return r;
        }
        self.t(if path == "/" { "root" } else { "spa" })
    }

    fn basic_user(&self, req: &RecordedRequest) -> Option<&'static DemoAccount> {
        if !self.config.basic_auth || !self.config.demo_users {
            return None;
        }
        let auth = req.header("authorization")?;
        let (scheme, b64) = auth.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return None;
        }
        let decoded = String::from_utf8(base64_decode(b64)?).ok()?;
        let (user, pass) = decoded.split_once(':')?;
        self.account(user, pass)
    }

    fn account(&self, user: &str, pass: &str) -> Option<&'static DemoAccount> {
        if !self.config.demo_users {
            return None;
        }
        self.config
            .product
            .demo_accounts()
            .iter()
            .find(|a| a.username == user && a.password == pass)
    }

    fn is_webdav(req: &RecordedRequest, method: &str) -> bool {
        req.has_header("depth") || WEBDAV_METHODS.contains(&method)
    }

    fn unauthorized(&self, req: &RecordedRequest, method: &str) -> RawResponse {
        let xhr = req
            .header("x-requested-with")
            .is_some_and(|v| v.eq_ignore_ascii_case("XMLHttpRequest"));
        if App::is_webdav(req, method) {
            let mut r = self.t("unauth_dav");
            if xhr {
                r.remove_header("Www-Authenticate");
            }
            r
        } else if xhr {
            self.t("unauth_xhr")
        } else {
            self.t("unauth")
        }
    }

    /// Puts another demo user into a template captured for the template user.
    fn personalize(&self, text: &str, user: &DemoAccount) -> String {
        let t = self.template_user;
        text.replace(t.id, user.id)
            .replace(t.email, user.email)
            .replace(t.display_name, user.display_name)
            .replace(t.username, user.username)
    }

    fn authorized(
        &self,
        req: &RecordedRequest,
        method: &str,
        path: &str,
        user: &'static DemoAccount,
    ) -> RawResponse {
        // Go's http.NotFound on top of the proxy headers: length first (sorted), and a
        // second nosniff header.
        let not_found_from = |mut r: RawResponse| {
            r.set_status(404, "Not Found");
            r.remove_header("Content-Length");
            r.remove_header("Transfer-Encoding");
            r.insert_sorted("Content-Length", "0");
            r.set_header("Content-Type", "text/plain; charset=utf-8");
            if r.has_header("X-Content-Type-Options") {
                r.insert_sorted("X-Content-Type-Options", "nosniff");
            }
            r.set_body("404 page not found\n");
            r
        };
        if under(path, "/graph") {
            let mut r = self.t("basic_graph_me");
            if req.has_header("origin") {
                r.insert_sorted("Access-Control-Allow-Origin", "*");
                r.insert_sorted("Access-Control-Allow-Credentials", "true");
            }
            match path.trim_end_matches('/') {
                "/graph/v1.0/me" => r.map_body(|b| self.personalize(b, user)),
                "/graph/v1.0/users" => {
                    r.set_status(403, "Forbidden");
                    let date = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ");
                    r.set_body(format!(
                        "{{\"error\":{{\"code\":\"accessDenied\",\"innererror\":{{\"date\":\"{date}\",\"request-id\":\"vm/fake-{:06}\"}},\"message\":\"search term too short\"}}}}\n",
                        req.index + 24
                    ));
                }
                _ => return not_found_from(r),
            }
            return r;
        }
        if under(path, "/ocs") {
            let json = query_param(req.query(), "format").is_some_and(|f| f == "json");
            let v2 = path.starts_with("/ocs/v2.php/");
            let mut r = match path.trim_end_matches('/') {
                "/ocs/v1.php/cloud/user" | "/ocs/v2.php/cloud/user" => {
                    let mut r = self.t("basic_ocs_user");
                    r.map_body(|b| self.personalize(b, user));
                    r
                }
                "/ocs/v2.php/cloud/capabilities" => {
                    self.t(if json { "caps_json" } else { "caps_xml" })
                }
                _ => return not_found_from(self.t("basic_ocs_user")),
            };
            if v2 {
                r.replace_header_values("Ocs-Api-Version", |_| "2".to_string());
                r.map_body(|b| {
                    b.replacen("\"statuscode\":100", "\"statuscode\":200", 1)
                        .replacen(
                            "<statuscode>100</statuscode>",
                            "<statuscode>200</statuscode>",
                            1,
                        )
                });
            }
            return r;
        }
        let own_dav = [
            format!("/remote.php/dav/files/{}", user.username),
            format!("/dav/files/{}", user.username),
            "/remote.php/webdav".to_string(),
            "/webdav".to_string(),
        ];
        if own_dav.iter().any(|p| under(path, p)) {
            let mut r = self.t("basic_dav");
            if method != "PROPFIND" {
                r.set_status(405, "Method Not Allowed");
                r.set_body(Vec::new());
                r.remove_header("Content-Type");
                return r;
            }
            let template_href = format!("/remote.php/dav/files/{}/", self.template_user.username);
            let href = format!("{}/", path.trim_end_matches('/'));
            r.map_body(|b| self.personalize(&b.replace(&template_href, &href), user));
            return r;
        }
        if under(path, "/remote.php") || under(path, "/dav") {
            let mut r = self.t("unauth_dav");
            r.set_status(404, "Not Found");
            r.remove_header("Www-Authenticate");
            r.set_body(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<d:error xmlns:d=\"DAV\" xmlns:s=\"http://sabredav.org/ns\"><s:Exception>Sabre\\DAV\\Exception\\NotFound</s:Exception><s:Message>Resource not found</s:Message></d:error>",
            );
            return r;
        }
        not_found_from(self.t("app_list"))
    }

    fn preflight(&self, req: &RecordedRequest, path: &str) -> RawResponse {
        if under(path, "/graph") {
            let mut r = self.t("preflight_graph");
            let method = req
                .header("access-control-request-method")
                .unwrap_or_default()
                .to_ascii_uppercase();
            let headers = req.header("access-control-request-headers");
            // rs/cors >= 1.11: request headers must be the lower-case names browsers send.
            let headers_ok = headers.is_none_or(|h| {
                h.split(',')
                    .map(str::trim)
                    .filter(|h| !h.is_empty())
                    .all(|h| GRAPH_CORS_HEADERS.contains(&h))
            });
            if GRAPH_CORS_METHODS.contains(&method.as_str()) && headers_ok {
                r.set_header("Access-Control-Allow-Methods", &method);
                match headers {
                    Some(h) => r.set_header("Access-Control-Allow-Headers", h),
                    None => r.remove_header("Access-Control-Allow-Headers"),
                }
            } else {
                for h in [
                    "Access-Control-Allow-Credentials",
                    "Access-Control-Allow-Headers",
                    "Access-Control-Allow-Methods",
                    "Access-Control-Allow-Origin",
                ] {
                    r.remove_header(h);
                }
            }
            return r;
        }
        if is_api_path(path) {
            return self.t("preflight_api");
        }
        self.t("preflight_web")
    }

    fn logon(&self, req: &RecordedRequest, method: &str) -> RawResponse {
        if method != "POST" {
            let mut r = self.t("logon_bad");
            r.set_status(405, "Method Not Allowed");
            r.set_body("405 method not allowed\n");
            return r;
        }
        let host = req.header("host").unwrap_or_default();
        let xsrf_ok = req.header("kopano-konnect-xsrf") == Some("1");
        let origin_ok = match (req.header("origin"), req.header("referer")) {
            (Some(o), _) if !o.is_empty() => url_host(o) == Some(host),
            (_, Some(r)) if !r.is_empty() => url_host(r) == Some(host),
            _ => false,
        };
        if !xsrf_ok || !origin_ok {
            return self.t("logon_bad");
        }
        let Ok(body) = serde_json::from_slice::<serde_json::Value>(&req.body) else {
            return self.t("logon_bad");
        };
        let state = body
            .get("state")
            .and_then(|s| s.as_str())
            .unwrap_or_default()
            .to_string();
        let params: Vec<&str> = body
            .get("params")
            .and_then(|p| p.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        if params.len() < 2 {
            return self.t("logon_bad");
        }
        match self.account(params[0], params[1]) {
            Some(user) => {
                let mut r = self.t("logon_ok");
                r.map_body(|b| {
                    let b = replace_first_json_string(b, "state", &state);
                    self.personalize(&b, user)
                });
                r.replace_header_values("Set-Cookie", |v| {
                    v.replace("<redacted>", &fake_token(req.index))
                });
                r
            }
            None => {
                let mut r = self.t("logon_fail");
                r.set_header("Kopano-Konnect-State", &state);
                r
            }
        }
    }
}

/// A cookie-safe pseudo token.
fn fake_token(seed: usize) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{seed}-{}", jiff::Timestamp::now()).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Rewrites the captured version in the body and in every `X-*-Version` header.
fn rewrite_version(resp: &mut RawResponse, from: &str, to: &str) {
    if from == to {
        return;
    }
    for (n, v) in &mut resp.headers {
        let lower = n.to_ascii_lowercase();
        if lower.starts_with("x-") && lower.ends_with("-version") {
            *v = replace_version(v, from, to);
        }
    }
    if resp.body_str().contains(from) {
        resp.map_body(|b| replace_version(b, from, to));
    }
}

/// Replaces the captured public URL (`https://localhost:9200`) in the body.
fn rewrite_public_url(resp: &mut RawResponse, public_url: &str) {
    const CAPTURED: &str = "https://localhost:9200";
    if public_url == CAPTURED || !resp.body_str().contains("localhost:9200") {
        return;
    }
    let host = url_host(public_url).unwrap_or("localhost");
    resp.map_body(|b| {
        b.replace(CAPTURED, public_url)
            .replace("localhost:9200", host)
    });
}
