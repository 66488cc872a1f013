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
use crate::budget::StepTimeout;
use sha2::{Digest, Sha256};
use std::io::Read;

/// The most of a body any probe reads: past it the server is not listened to (the connection
/// is closed rather than kept alive) and the answer is `truncated`. What a probe keeps of the
/// bytes read is its [`Keep`]; the rest is counted and digested as it streams, then dropped.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Header block cap; a real instance sends about 2 KiB.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// A connection's buffer for what the server sends: a header block at its cap, and more.
const INPUT_BUFFER_BYTES: usize = MAX_HEADER_BYTES + 8 * 1024;
/// A connection's buffer for what we send: a request head and a sign-in body fit many times.
const OUTPUT_BUFFER_BYTES: usize = 16 * 1024;

/// What a probe keeps of a body as it streams in. Whatever it keeps, every body is read up to
/// [`MAX_BODY_BYTES`] and its length and SHA-256 are taken over the bytes read
/// ([`Response::same_body`]), so any two answers compare like with like; bytes beyond the keep
/// never stay in memory. The probe plan states the keep of every probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// A document read whole (JSON): kept when it has at most this many bytes, dropped when
    /// longer, since a cut document is of no use ([`Response::is_whole`] says which).
    Document(usize),
    /// The first bytes, at most this many: what a check sniffs (HTML, a PEM block, a listing).
    Prefix(usize),
    /// No bytes: status, headers, length and digest are all the checks read.
    DigestOnly,
}

impl Keep {
    /// The most bytes kept.
    pub fn budget(self) -> usize {
        match self {
            Keep::Document(n) | Keep::Prefix(n) => n.min(MAX_BODY_BYTES),
            Keep::DigestOnly => 0,
        }
    }
}

/// Length and SHA-256 of a body as read (at most [`MAX_BODY_BYTES`]), taken as it streamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyDigest {
    pub length: u64,
    pub sha256: [u8; 32],
}

impl BodyDigest {
    pub fn of(bytes: &[u8]) -> BodyDigest {
        BodyDigest {
            length: bytes.len() as u64,
            sha256: Sha256::digest(bytes).into(),
        }
    }
}

/// Schemes are the target's: the transport picks one of the two for every endpoint.
pub use crate::target::Scheme;

/// How the agent treats the server's certificate.
#[derive(Clone, Debug)]
pub enum Verification {
    /// Verify against the public roots of these roots.
    PublicRoots(Roots),
    /// Verify against the operator's private CA of these roots.
    PrivateCa(Roots),
    /// Transport selection already recorded that the chain does not verify.
    Disabled,
}

impl Verification {
    /// What the endpoint's handshakes must show under this verification.
    pub fn requirement(&self) -> Requirement {
        match self {
            Verification::PublicRoots(_) => Requirement::Trusted(TrustedBy::PublicRoots),
            Verification::PrivateCa(_) => Requirement::Trusted(TrustedBy::PrivateCa),
            Verification::Disabled => Requirement::Anything,
        }
    }

    fn roots(&self) -> Roots {
        match self {
            Verification::PublicRoots(roots) | Verification::PrivateCa(roots) => roots.clone(),
            Verification::Disabled => Roots::public(),
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

/// One answer, with headers in order (repeated names kept) and what the probe kept of the body.
#[derive(Clone, Debug, Default)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// What the probe kept of the body ([`Keep`]): all of it when it fits, else its first bytes
    /// (`Keep::Prefix`) or nothing (`Keep::Document`, `Keep::DigestOnly`).
    pub body: Vec<u8>,
    /// The server sent more than [`MAX_BODY_BYTES`]; reading stopped there.
    pub truncated: bool,
    /// Length and SHA-256 of the body as read, up to [`MAX_BODY_BYTES`]. `None` for an answer
    /// built by hand, whose `body` is all there is.
    pub digest: Option<BodyDigest>,
}

impl Response {
    /// First value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        values(&self.headers, name).next()
    }

    pub fn header_values(&self, name: &str) -> Vec<&str> {
        values(&self.headers, name).collect()
    }

    #[cfg(test)]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Length and digest of the body as read.
    pub fn body_digest(&self) -> BodyDigest {
        self.digest.unwrap_or_else(|| BodyDigest::of(&self.body))
    }

    /// Bytes of the body read (all of it unless `truncated`), kept or not.
    pub fn length(&self) -> u64 {
        self.digest
            .map_or(self.body.len() as u64, |digest| digest.length)
    }

    /// `body` is the whole body: neither cut by the probe's keep nor by the read cap.
    pub fn is_whole(&self) -> bool {
        !self.truncated && self.body.len() as u64 == self.length()
    }

    /// The same body as `other`: the same bytes read (length and SHA-256), and either both
    /// were cut at [`MAX_BODY_BYTES`] or neither was. Two bodies longer than the cap are the
    /// same when their first [`MAX_BODY_BYTES`] are.
    pub fn same_body(&self, other: &Response) -> bool {
        self.truncated == other.truncated && self.body_digest() == other.body_digest()
    }
}

/// The values of the header `name` (any case) among `headers`, in their order: a header may
/// come in several lines.
pub fn values<'a>(headers: &'a [(String, String)], name: &str) -> impl Iterator<Item = &'a str> {
    headers
        .iter()
        .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A header name as findings and ids spell it, whatever case the server sent:
/// `x-WEB-version` -> `X-Web-Version`.
pub fn canonical_header_name(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let first = part.chars().next().map_or(0, char::len_utf8);
            part[..first].to_ascii_uppercase() + &part[first..].to_ascii_lowercase()
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// Why a request got no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchError {
    /// Timeouts, resets, failed connections: the scan may succeed on a retry.
    Transient(String),
    /// Nothing listens on the port (the connection was refused): a definite answer, so a
    /// scan is not retried for it (the spec retries timeouts, resets and 5xx), and a dead
    /// target costs one connect, not the backoff of every retry.
    Refused(String),
    /// TLS failed (certificate rejected by a verifying agent, handshake error).
    Tls(String),
    /// The server broke HTTP (oversized headers, garbage): retrying will not help.
    Protocol(String),
}

impl FetchError {
    pub fn message(&self) -> &str {
        match self {
            FetchError::Transient(m)
            | FetchError::Refused(m)
            | FetchError::Tls(m)
            | FetchError::Protocol(m) => m,
        }
    }
}

/// Settings of the client that do not depend on the endpoint.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Each request's limit, connect to last body byte, cut to what is left of the run's
    /// time budget when the request starts.
    pub timeout: StepTimeout,
    /// Where the endpoint's name may be reached, nothing looked up: a guarded scan's validated
    /// addresses, or one address of the name (`--all-addresses`). Pinned connections never go
    /// through the proxy.
    pub pin: Option<super::guard::Pins>,
    pub proxy: Option<String>,
    pub user_agent: String,
}

/// A client bound to one endpoint.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    pub endpoint: Endpoint,
    /// The pins of its connections (`ClientOptions::pin`): the scan's other connections to
    /// the endpoint's host (debug ports, legacy TLS) take their addresses from them.
    pins: Option<super::guard::Pins>,
    timeout: StepTimeout,
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
                let route = match (&options.pin, &options.proxy) {
                    (Some(pins), _) => Route::Pinned(pins.clone()),
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
        Client::build(endpoint, tls, None, options)
    }

    /// A plain HTTP client whose first request goes over `connection`, already connected to
    /// the endpoint's address and port (a debug port found open by its connect).
    pub fn over(
        endpoint: Endpoint,
        connection: std::net::TcpStream,
        options: &ClientOptions,
    ) -> Result<Client, String> {
        Client::build(endpoint, None, Some(connection), options)
    }

    fn build(
        endpoint: Endpoint,
        tls: Option<EndpointTls>,
        handed: Option<std::net::TcpStream>,
        options: &ClientOptions,
    ) -> Result<Client, String> {
        Ok(Client {
            agent: agent(tls, handed, options)?,
            endpoint,
            pins: options.pin.clone(),
            timeout: options.timeout,
        })
    }

    /// Where the endpoint's host may be reached when the client is pinned (a guarded scan).
    pub fn pins(&self) -> Option<&super::guard::Pins> {
        self.pins.as_ref()
    }

    /// The run's time budget is spent: no request of this client is sent any more.
    pub fn budget_spent(&self) -> bool {
        self.timeout.is_spent()
    }

    pub fn get(&self, path: &str, keep: Keep) -> Result<Response, FetchError> {
        self.request("GET", path, &[], None, keep)
    }

    /// Sends one request to a path of the endpoint and reads the answer within the caps,
    /// keeping of its body what `keep` says.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        keep: Keep,
    ) -> Result<Response, FetchError> {
        let url = self.endpoint.url(path);
        if self.timeout.is_spent() {
            return Err(FetchError::Transient(format!(
                "{url}: not sent: the time budget (--time-budget) was spent"
            )));
        }
        let mut builder = ureq::http::Request::builder().method(method).uri(&url);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let built = |e: ureq::http::Error| {
            FetchError::Protocol(format!("cannot build request for {url}: {e}"))
        };
        let response = match body {
            Some(bytes) => self.run(builder.body(bytes).map_err(built)?),
            None => self.run(builder.body(()).map_err(built)?),
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
        // Dropping the reader of a body not read to its end closes the connection: ureq
        // keeps a connection alive only once its body has been read whole.
        let streamed = read_body(body.into_reader(), keep).map_err(|e| classify_io(&e, &url))?;
        Ok(Response {
            status: parts.status.as_u16(),
            headers,
            body: streamed.kept,
            truncated: streamed.truncated,
            digest: Some(streamed.digest),
        })
    }

    /// Runs one request within its limit, cut to what is left of the budget now: connect,
    /// TLS handshake, head and body all count against it.
    fn run<S: ureq::AsSendBody>(
        &self,
        request: ureq::http::Request<S>,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let limit = Some(self.timeout.now());
        let request = self.agent.configure_request(request).timeout_global(limit);
        self.agent.run(request.build())
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Client({})", self.endpoint.base_url())
    }
}

/// What [`read_body`] made of a body.
#[derive(Debug)]
struct Streamed {
    kept: Vec<u8>,
    digest: BodyDigest,
    truncated: bool,
}

/// Reads a body up to [`MAX_BODY_BYTES`] (and one byte more, to know whether there is more),
/// counting and digesting every byte and keeping what `keep` says. Memory: the kept bytes and
/// a 16 KiB buffer, however long the body.
fn read_body(mut reader: impl Read, keep: Keep) -> std::io::Result<Streamed> {
    let cap = MAX_BODY_BYTES as u64;
    let budget = keep.budget();
    let mut kept: Vec<u8> = Vec::new();
    let mut hasher = Sha256::new();
    let mut length: u64 = 0;
    let mut truncated = false;
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let room = (cap + 1 - length).min(chunk.len() as u64) as usize;
        let n = match reader.read(&mut chunk[..room]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let within = n.min((cap - length) as usize);
        let read = &chunk[..within];
        hasher.update(read);
        let wanted = budget.saturating_sub(kept.len()).min(read.len());
        // Grown by doubling but never past the budget.
        if kept.capacity() - kept.len() < wanted {
            // At least what is needed (wanted <= budget - len), at most the budget.
            let target = (kept.capacity() * 2).max(kept.len() + wanted).min(budget);
            kept.reserve_exact(target - kept.len());
        }
        kept.extend_from_slice(&read[..wanted]);
        length += within as u64;
        if n > within {
            truncated = true;
            break;
        }
    }
    if let Keep::Document(_) = keep
        && (truncated || kept.len() as u64 != length)
    {
        // A cut document is of no use: keep nothing rather than its first bytes.
        kept = Vec::new();
    }
    // Held until the host's checks ran: no spare capacity.
    kept.shrink_to_fit();
    Ok(Streamed {
        kept,
        digest: BodyDigest {
            length,
            sha256: hasher.finalize().into(),
        },
        truncated,
    })
}

fn agent(
    tls: Option<EndpointTls>,
    handed: Option<std::net::TcpStream>,
    options: &ClientOptions,
) -> Result<ureq::Agent, String> {
    use ureq::unversioned::transport::{ConnectProxyConnector, Connector, TcpConnector};
    // Set explicitly: ureq would otherwise read HTTP_PROXY / HTTPS_PROXY / ALL_PROXY.
    // Pinned connections go to the pinned addresses, never to a proxy that would resolve the
    // name itself.
    let proxy = options.proxy.as_deref().filter(|_| options.pin.is_none());
    let proxy = proxy.map(super::proxy::for_ureq).transpose()?;
    let config = ureq::config::Config::builder()
        .proxy(proxy)
        .http_status_as_error(false)
        .max_redirects(0)
        .max_response_header_size(MAX_HEADER_BYTES)
        // Every connection holds both buffers, zeroed, while it is open or kept alive (ureq's
        // default is 128 KiB each). The input buffer must hold more than a header block at
        // its cap, so a longer one is refused as such; our requests are a few hundred bytes.
        .input_buffer_size(INPUT_BUFFER_BYTES)
        .output_buffer_size(OUTPUT_BUFFER_BYTES)
        // Set per request (`Client::request`), cut to what is left of the budget.
        .timeout_global(Some(options.timeout.each))
        .allow_non_standard_methods(true)
        .user_agent(options.user_agent.as_str())
        // Room for every connection the probes keep alive, so none is closed for want of it.
        .max_idle_connections_per_host(4)
        .build();
    let resolver = super::resolve::ScanResolver {
        pin: options.pin.clone(),
    };
    // HTTPS connections come from the endpoint's TLS; plain HTTP ones from ureq (through the
    // operator's proxy when there is one). Each connector passes on what an earlier one made.
    let connector = ()
        .chain(super::connector::OwnConnections {
            tls,
            handed: std::sync::Mutex::new(handed),
        })
        .chain(ConnectProxyConnector::default())
        .chain(TcpConnector::default())
        .chain(super::connector::SlicedWaits);
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
        K::ConnectionRefused => FetchError::Refused(format!("{url}: {e}")),
        _ => FetchError::Transient(format!("{url}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_are_capitalised_per_word_whatever_their_case() {
        assert_eq!(canonical_header_name("x-WEB-version"), "X-Web-Version");
        assert_eq!(canonical_header_name("x-proxy-version"), "X-Proxy-Version");
        assert_eq!(canonical_header_name("SERVER"), "Server");
        assert_eq!(canonical_header_name("x--a-"), "X--A-");
    }

    /// A body of `len` bytes that differ from one position to the next.
    fn body(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    /// Hands out its bytes a few at a time, with an interruption between reads, as a slow
    /// socket does.
    struct Trickle {
        bytes: Vec<u8>,
        at: usize,
        interrupted: bool,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.interrupted = !self.interrupted;
            if self.interrupted {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(7).min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn read(bytes: &[u8], keep: Keep) -> Streamed {
        read_body(bytes, keep).unwrap()
    }

    fn response(streamed: Streamed) -> Response {
        Response {
            status: 200,
            headers: Vec::new(),
            body: streamed.kept,
            truncated: streamed.truncated,
            digest: Some(streamed.digest),
        }
    }

    #[test]
    fn a_body_longer_than_the_prefix_keeps_the_prefix_and_digests_all_of_it() {
        let whole = body(100_000);
        let streamed = read(&whole, Keep::Prefix(4096));
        assert_eq!(streamed.kept, &whole[..4096]);
        assert_eq!(streamed.kept.capacity(), 4096, "no spare capacity is held");
        assert_eq!(streamed.digest, BodyDigest::of(&whole));
        assert_eq!(streamed.digest.length, 100_000);
        assert!(!streamed.truncated);
        let r = response(streamed);
        assert!(!r.is_whole());
        assert_eq!(r.length(), 100_000);
    }

    #[test]
    fn a_body_past_the_read_cap_is_digested_up_to_the_cap_and_marked_truncated() {
        let whole = body(MAX_BODY_BYTES + 10_000);
        let streamed = read(&whole, Keep::Prefix(512));
        assert_eq!(streamed.kept, &whole[..512]);
        assert_eq!(streamed.digest, BodyDigest::of(&whole[..MAX_BODY_BYTES]));
        assert!(streamed.truncated);
        // A body that never ends is read to the cap and no further.
        let endless = read_body(std::io::repeat(b'x'), Keep::DigestOnly).unwrap();
        assert!(endless.truncated && endless.kept.is_empty());
        assert_eq!(endless.digest.length, MAX_BODY_BYTES as u64);
        // Exactly the cap is not truncated: there is nothing more.
        let exact = read(&whole[..MAX_BODY_BYTES], Keep::DigestOnly);
        assert!(!exact.truncated);
        assert_eq!(exact.digest, BodyDigest::of(&whole[..MAX_BODY_BYTES]));
    }

    #[test]
    fn a_document_is_kept_whole_or_not_at_all() {
        let small = body(3000);
        let kept = read(&small, Keep::Document(4096));
        assert_eq!(kept.kept, small);
        assert!(response(kept).is_whole());
        let long = body(5000);
        let dropped = read(&long, Keep::Document(4096));
        assert!(dropped.kept.is_empty() && dropped.kept.capacity() == 0);
        assert_eq!(dropped.digest, BodyDigest::of(&long));
        let r = response(dropped);
        assert!(!r.is_whole() && !r.truncated);
        assert_eq!(r.length(), 5000);
    }

    #[test]
    fn digest_only_keeps_nothing_and_small_reads_add_up() {
        let whole = body(50_000);
        let trickled = read_body(
            Trickle {
                bytes: whole.clone(),
                at: 0,
                interrupted: false,
            },
            Keep::Prefix(1000),
        )
        .unwrap();
        assert_eq!(trickled.kept, &whole[..1000]);
        assert_eq!(trickled.digest, BodyDigest::of(&whole));
        let nothing = read(&whole, Keep::DigestOnly);
        assert!(nothing.kept.is_empty());
        assert_eq!(nothing.digest, trickled.digest);
        assert!(read(b"", Keep::Prefix(10)).kept.is_empty());
    }

    #[test]
    fn answers_compare_by_what_was_read_whatever_each_kept() {
        let page = body(20_000);
        let catch_all = response(read(&page, Keep::DigestOnly));
        let sniffed = response(read(&page, Keep::Prefix(512)));
        assert!(sniffed.same_body(&catch_all));
        // A hand-built answer holds its whole body and compares the same way.
        let by_hand = Response {
            body: page.clone(),
            ..Response::default()
        };
        assert!(by_hand.same_body(&catch_all) && by_hand.is_whole());
        // Same first 512 bytes, different rest: not the same body.
        let mut other = page.clone();
        other[15_000] ^= 1;
        assert!(!response(read(&other, Keep::Prefix(512))).same_body(&catch_all));
        // Same first MiB, one cut at the cap and one not: not the same either.
        let long = body(MAX_BODY_BYTES + 1);
        let cut = response(read(&long, Keep::DigestOnly));
        let exact = response(read(&long[..MAX_BODY_BYTES], Keep::DigestOnly));
        assert!(!cut.same_body(&exact));
        assert!(cut.same_body(&response(read(&body(MAX_BODY_BYTES + 5), Keep::DigestOnly))));
    }

    #[test]
    fn budgets_never_exceed_the_read_cap() {
        assert_eq!(Keep::Prefix(usize::MAX).budget(), MAX_BODY_BYTES);
        assert_eq!(Keep::Document(10).budget(), 10);
        assert_eq!(Keep::DigestOnly.budget(), 0);
    }
}
