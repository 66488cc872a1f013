//! The HTTP client every probe uses: one ureq agent per scanned endpoint, configured once with
//! the transport decided by `transport`, the operator's proxy (and no other), caps on header and
//! body sizes, a deadline per request, and no redirect following at all: a probe sees the 3xx
//! itself and a server can never send us off the target.
//!
//! The agent keeps its connections alive in one pool, shared by every clone of the client and
//! so by every probe of the endpoint. Its HTTPS connections come from the endpoint's
//! [`EndpointTls`] (see `connector`): the first is the TLS inspection's own, the others resume
//! its session.

use super::tls::{EndpointTls, Requirement, Roots, Route, TrustedBy};
use std::io::Read;
use std::time::Duration;

/// Bodies the scanner needs are small JSON and HTML documents; anything beyond is cut.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Header block cap; a real instance sends about 2 KiB.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Schemes are the target's: the transport picks one of the two for every endpoint.
pub use crate::target::Scheme;

/// How the agent treats the server's certificate.
#[derive(Clone, Debug)]
pub enum Verification {
    /// Verify against the public roots.
    PublicRoots,
    /// Verify against the operator's private CA certificates (DER).
    PrivateCa(Vec<Vec<u8>>),
    /// Transport selection already recorded that the chain does not verify.
    Disabled,
}

impl Verification {
    /// What the endpoint's handshakes must show under this verification.
    pub fn requirement(&self) -> Requirement {
        match self {
            Verification::PublicRoots => Requirement::Trusted(TrustedBy::PublicRoots),
            Verification::PrivateCa(_) => Requirement::Trusted(TrustedBy::PrivateCa),
            Verification::Disabled => Requirement::Anything,
        }
    }

    fn roots(&self) -> Roots {
        match self {
            Verification::PrivateCa(ders) => Roots::with_private_der(ders),
            Verification::PublicRoots | Verification::Disabled => Roots::public(),
        }
    }
}

/// Where one endpoint lives: scheme, host (for the URL, Host header and SNI), port, path prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub scheme: Scheme,
    /// As it goes into a URL: `example.com`, `127.0.0.1`, `[::1]`.
    pub url_host: String,
    pub port: u16,
    /// Path prefix without a trailing slash (`""` or `/cloud`).
    pub base_path: String,
}

impl Endpoint {
    pub fn base_url(&self) -> String {
        format!(
            "{}://{}:{}{}",
            self.scheme.as_str(),
            self.url_host,
            self.port,
            self.base_path
        )
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url(), path)
    }
}

/// One answer, with headers in order (repeated names kept) and the body cut at the cap.
#[derive(Clone, Debug, Default)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The server sent more than `MAX_BODY_BYTES`.
    pub truncated: bool,
}

impl Response {
    /// First value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Why a request got no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchError {
    /// Timeouts, resets, refused or failed connections: the scan may succeed on a retry.
    Transient(String),
    /// TLS failed (certificate rejected by a verifying agent, handshake error).
    Tls(String),
    /// The server broke HTTP (oversized headers, garbage): retrying will not help.
    Protocol(String),
}

impl FetchError {
    pub fn message(&self) -> &str {
        match self {
            FetchError::Transient(m) | FetchError::Tls(m) | FetchError::Protocol(m) => m,
        }
    }
}

/// Settings of the client that do not depend on the endpoint.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub timeout: Duration,
    /// Connect to this address whatever the name resolves to (`--all-addresses`).
    pub pin: Option<std::net::IpAddr>,
    pub proxy: Option<String>,
    pub user_agent: String,
}

/// A client bound to one endpoint.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    pub endpoint: Endpoint,
}

impl Client {
    /// A client for an endpoint whose verification is known without an inspection (debug
    /// ports, plain HTTP, a node of `--all-addresses` judged by the scan's transport).
    pub fn new(
        endpoint: Endpoint,
        verification: &Verification,
        options: &ClientOptions,
    ) -> Result<Client, String> {
        let tls = match endpoint.scheme {
            Scheme::Http => None,
            Scheme::Https => {
                let host = endpoint
                    .url_host
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                let route = match (options.pin, &options.proxy) {
                    (Some(ip), _) => Route::Address(std::net::SocketAddr::new(ip, endpoint.port)),
                    (None, Some(url)) => Route::Proxy(
                        super::proxy::Proxy::parse(url.trim())
                            .map_err(|e| format!("--proxy {url:?} is not usable: {e}"))?,
                    ),
                    (None, None) => Route::Direct,
                };
                let tls = EndpointTls::new(
                    host,
                    endpoint.port,
                    &verification.roots(),
                    route,
                    options.timeout,
                )
                .map_err(|e| format!("TLS to {}: {e:?}", endpoint.base_url()))?;
                tls.require(verification.requirement());
                Some(tls)
            }
        };
        Client::with_tls(endpoint, tls, options)
    }

    /// A client whose HTTPS connections come from `tls`: the scan's endpoint after transport
    /// selection, with the inspected connection for its first request.
    pub fn with_tls(
        endpoint: Endpoint,
        tls: Option<EndpointTls>,
        options: &ClientOptions,
    ) -> Result<Client, String> {
        Ok(Client {
            agent: agent(tls, options)?,
            endpoint,
        })
    }

    pub fn get(&self, path: &str) -> Result<Response, FetchError> {
        self.request("GET", path, &[], None)
    }

    /// Sends one request to a path of the endpoint and reads the answer within the caps.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Response, FetchError> {
        let url = self.endpoint.url(path);
        let mut builder = ureq::http::Request::builder().method(method).uri(&url);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let built = |e: ureq::http::Error| {
            FetchError::Protocol(format!("cannot build request for {url}: {e}"))
        };
        let response = match body {
            Some(bytes) => self.agent.run(builder.body(bytes).map_err(built)?),
            None => self.agent.run(builder.body(()).map_err(built)?),
        }
        .map_err(|e| classify(&e, &url))?;
        let (parts, body) = response.into_parts();
        let headers = parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let mut bytes = Vec::new();
        let mut reader = body.into_reader().take(MAX_BODY_BYTES as u64 + 1);
        if let Err(e) = reader.read_to_end(&mut bytes) {
            return Err(classify_io(&e, &url));
        }
        let truncated = bytes.len() > MAX_BODY_BYTES;
        bytes.truncate(MAX_BODY_BYTES);
        Ok(Response {
            status: parts.status.as_u16(),
            headers,
            body: bytes,
            truncated,
        })
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Client({})", self.endpoint.base_url())
    }
}

fn agent(tls: Option<EndpointTls>, options: &ClientOptions) -> Result<ureq::Agent, String> {
    use ureq::unversioned::transport::{ConnectProxyConnector, Connector, TcpConnector};
    // Set explicitly: ureq would otherwise read HTTP_PROXY / HTTPS_PROXY / ALL_PROXY.
    let proxy = match &options.proxy {
        Some(url) => Some(ureq::Proxy::new(url).map_err(|e| {
            format!(
                "--proxy {:?} is not usable: {e}",
                super::proxy::redacted(url)
            )
        })?),
        None => None,
    };
    let config = ureq::config::Config::builder()
        .proxy(proxy)
        .http_status_as_error(false)
        .max_redirects(0)
        .max_response_header_size(MAX_HEADER_BYTES)
        .timeout_global(Some(options.timeout))
        .allow_non_standard_methods(true)
        .user_agent(options.user_agent.as_str())
        // Room for every connection the probes keep alive, so none is closed for want of it.
        .max_idle_connections_per_host(4)
        .build();
    let resolver = super::resolve::ScanResolver { pin: options.pin };
    // HTTPS connections come from the endpoint's TLS; plain HTTP ones from ureq (through the
    // operator's proxy when there is one). Each connector passes on what an earlier one made.
    let connector =
        ().chain(super::connector::EndpointConnector::new(tls))
            .chain(ConnectProxyConnector::default())
            .chain(TcpConnector::default());
    Ok(ureq::Agent::with_parts(config, connector, resolver))
}

fn classify(e: &ureq::Error, url: &str) -> FetchError {
    use ureq::Error as E;
    match e {
        E::Timeout(_) => FetchError::Transient(format!("{url}: timed out")),
        E::Io(io) => classify_io(io, url),
        E::ConnectionFailed => FetchError::Transient(format!("{url}: connection failed")),
        E::HostNotFound => FetchError::Transient(format!("{url}: host not found")),
        E::Tls(m) => FetchError::Tls(format!("{url}: {m}")),
        E::Rustls(r) => FetchError::Tls(format!("{url}: {r}")),
        E::LargeResponseHeader(_, _) => {
            FetchError::Protocol(format!("{url}: response headers exceed 64 KiB"))
        }
        other => FetchError::Protocol(format!("{url}: {other}")),
    }
}

fn classify_io(e: &std::io::Error, url: &str) -> FetchError {
    use std::io::ErrorKind as K;
    if let Some(inner) = e.get_ref()
        && let Some(rustls_err) = inner.downcast_ref::<rustls::Error>()
    {
        return FetchError::Tls(format!("{url}: {rustls_err}"));
    }
    match e.kind() {
        K::InvalidData => FetchError::Protocol(format!("{url}: {e}")),
        _ => FetchError::Transient(format!("{url}: {e}")),
    }
}
