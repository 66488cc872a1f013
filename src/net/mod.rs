//! Everything that touches the network: the HTTP client, TLS inspection, transport selection
//! and fetching the release and advisory feeds.

mod connector;
pub mod dns;
pub mod feed;
pub mod http;
pub mod legacy_tls;
pub mod proxy;
pub mod resolve;
pub mod tls;

use http::{Client, ClientOptions, Endpoint, Scheme, Verification};
use std::time::Duration;

/// What the HTTPS step of transport selection observed (spec "Transport selection").
#[derive(Clone, Debug)]
pub enum HttpsObservation {
    /// Step 1: verified HTTPS works.
    Verified(tls::Handshake),
    /// Step 2: HTTPS works but the chain does not verify (or `--insecure` skipped step 1).
    Unverified(tls::Handshake),
    /// Step 3: no TLS handshake at all; the scan runs over plain HTTP.
    Unavailable(String),
}

impl HttpsObservation {
    pub fn handshake(&self) -> Option<&tls::Handshake> {
        match self {
            HttpsObservation::Verified(h) | HttpsObservation::Unverified(h) => Some(h),
            HttpsObservation::Unavailable(_) => None,
        }
    }
}

/// The transport a scan uses, decided once per attempt.
#[derive(Clone, Debug)]
pub struct Transport {
    pub endpoint: Endpoint,
    pub verification: Verification,
    pub https: HttpsObservation,
    /// The endpoint's TLS, holding the inspected connection for the first request (HTTPS only).
    pub tls: Option<tls::EndpointTls>,
}

impl Transport {
    /// The HTTP client of the attempt: every probe of the endpoint goes through it (clones
    /// share its pool), starting on the inspected connection.
    pub fn client(&self, options: &ClientOptions) -> Result<Client, String> {
        match &self.tls {
            Some(tls) => Client::with_tls(self.endpoint.clone(), Some(tls.clone()), options),
            None => Client::new(self.endpoint.clone(), &self.verification, options),
        }
    }
}

/// Where to connect: the host as used in URLs and for SNI, ports for HTTPS and plain HTTP.
#[derive(Clone, Debug)]
pub struct Destination {
    /// Name or address checked against the certificate and sent as SNI (no brackets).
    pub host: String,
    /// The same host as written in a URL (IPv6 bracketed).
    pub url_host: String,
    pub https_port: u16,
    pub http_port: u16,
    pub base_path: String,
}

/// Walks the three steps: verified HTTPS, unverified HTTPS, plain HTTP. A failed handshake
/// never ends the scan here: plain HTTP is tried by the probes that follow, and if that fails
/// too the scan fails as unreachable. Over HTTPS the inspected connection stays open for the
/// first request, and the verdict becomes what every later handshake must show.
pub fn select_transport(
    dest: &Destination,
    roots: &tls::Roots,
    proxy: Option<&proxy::Proxy>,
    insecure: bool,
    timeout: Duration,
) -> Transport {
    let https_endpoint = Endpoint {
        scheme: Scheme::Https,
        url_host: dest.url_host.clone(),
        port: dest.https_port,
        base_path: dest.base_path.clone(),
    };
    let inspected = tls::EndpointTls::new(
        &dest.host,
        dest.https_port,
        roots,
        tls::Route::via(proxy),
        timeout,
    )
    .and_then(|endpoint_tls| endpoint_tls.inspect().map(|h| (endpoint_tls, h)));
    match inspected {
        Ok((endpoint_tls, handshake)) => {
            let (verification, https) = match (&handshake.trust, insecure) {
                (Ok(by), false) => (
                    match by {
                        tls::TrustedBy::PublicRoots => Verification::PublicRoots,
                        tls::TrustedBy::PrivateCa => {
                            Verification::PrivateCa(roots.private_der.clone())
                        }
                    },
                    HttpsObservation::Verified(handshake),
                ),
                _ => (
                    Verification::Disabled,
                    HttpsObservation::Unverified(handshake),
                ),
            };
            endpoint_tls.require(verification.requirement());
            Transport {
                endpoint: https_endpoint,
                verification,
                https,
                tls: Some(endpoint_tls),
            }
        }
        Err(failure) => {
            let reason = match failure {
                tls::TlsFailure::Connect(m)
                | tls::TlsFailure::Transient(m)
                | tls::TlsFailure::Handshake(m) => m,
            };
            Transport {
                endpoint: Endpoint {
                    scheme: Scheme::Http,
                    url_host: dest.url_host.clone(),
                    port: dest.http_port,
                    base_path: dest.base_path.clone(),
                },
                verification: Verification::Disabled,
                https: HttpsObservation::Unavailable(reason),
                tls: None,
            }
        }
    }
}

/// The wait before retry `n` (1, 2, ...): `factor * 2^n` seconds, as `--backoff-factor`
/// documents. Scans, remediation checks and webhook deliveries all retry with it.
pub fn backoff(factor: f64, n: u32) -> Duration {
    let seconds = factor * 2f64.powi(n.min(30) as i32);
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)
}

/// Fetches a feed document (release feed, advisory feed) over verified HTTPS or plain HTTP,
/// through the operator's proxy only, capped like every other read.
pub fn fetch_document(
    url: &str,
    bearer_token: Option<&str>,
    options: &ClientOptions,
) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(format!("{url} is not an http(s) address"));
    }
    let proxy = match &options.proxy {
        Some(p) => Some(ureq::Proxy::new(p).map_err(|e| format!("proxy {p}: {e}"))?),
        None => None,
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .proxy(proxy)
        .http_status_as_error(false)
        .max_redirects(3)
        .max_response_header_size(http::MAX_HEADER_BYTES)
        .timeout_global(Some(options.timeout))
        .user_agent(options.user_agent.as_str())
        .build()
        .into();
    let mut request = agent.get(url).header("Accept", "application/json");
    if let Some(token) = bearer_token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    let response = request.call().map_err(|e| format!("{url}: {e}"))?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(format!("{url} answered HTTP {status}"));
    }
    let mut body = Vec::new();
    response
        .into_body()
        .into_reader()
        .take(8 * 1024 * 1024)
        .read_to_end(&mut body)
        .map_err(|e| format!("{url}: {e}"))?;
    Ok(body)
}
