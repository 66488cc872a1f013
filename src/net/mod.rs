//! Everything that touches the network: the HTTP client, TLS inspection, transport selection
//! and fetching the release and advisory feeds.

mod connector;
pub(crate) use connector::SlicedWaits;
pub mod dial;
pub mod dns;
pub mod download;
pub mod feed;
pub mod guard;
pub mod http;
pub mod legacy_tls;
pub mod proxy;
pub mod resolve;
pub mod tls;

use crate::budget::StepTimeout;
use http::{Client, ClientOptions, Endpoint, Scheme, Verification};
use std::time::Duration;
use ureq::config::ConfigBuilder;
use ureq::typestate::AgentScope;

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

    /// The certificate chains to a publicly trusted root (webpki-roots) for the name, whether
    /// or not the scan then verified it (`--insecure`): a CA the CA/Browser Forum rules bind,
    /// not an operator's own.
    pub fn trusted_by_public_roots(&self) -> bool {
        self.handshake()
            .is_some_and(|h| matches!(h.trust, Ok(tls::TrustedBy::PublicRoots)))
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

impl Destination {
    /// A client for the plain-HTTP port, where the redirect to HTTPS is checked: only when it
    /// differs from the HTTPS port (an instance on its own port speaks one protocol there).
    pub fn plain_http_client(&self, options: &http::ClientOptions) -> Option<http::Client> {
        if self.http_port == self.https_port {
            return None;
        }
        http::Client::new(
            self.endpoint(Scheme::Http),
            &Verification::Disabled,
            options,
        )
        .ok()
    }

    /// The endpoint of `scheme` on its port.
    fn endpoint(&self, scheme: Scheme) -> Endpoint {
        Endpoint {
            scheme,
            url_host: self.url_host.clone(),
            port: match scheme {
                Scheme::Https => self.https_port,
                Scheme::Http => self.http_port,
            },
            base_path: self.base_path.clone(),
        }
    }
}

/// Walks the three steps: verified HTTPS, unverified HTTPS, plain HTTP. A failed handshake
/// never ends the scan here: plain HTTP is tried by the probes that follow, and if that fails
/// too the scan fails as unreachable. Over HTTPS the inspected connection stays open for the
/// first request, and the verdict becomes what every later handshake must show. TLS is
/// inspected over `route`: the operator's proxy, or a guarded scan's pinned addresses.
pub fn select_transport(
    dest: &Destination,
    roots: &tls::Roots,
    route: tls::Route,
    insecure: bool,
    timeout: StepTimeout,
) -> Transport {
    let inspected = tls::EndpointTls::new(&dest.host, dest.https_port, roots, route, timeout)
        .and_then(|endpoint_tls| endpoint_tls.inspect().map(|h| (endpoint_tls, h)));
    match inspected {
        Ok((endpoint_tls, handshake)) => {
            let verification = match (&handshake.trust, insecure) {
                (Ok(tls::TrustedBy::PublicRoots), false) => {
                    Verification::PublicRoots(roots.clone())
                }
                (Ok(tls::TrustedBy::PrivateCa), false) => Verification::PrivateCa(roots.clone()),
                _ => Verification::Disabled,
            };
            let https = match verification {
                Verification::Disabled => HttpsObservation::Unverified(handshake),
                _ => HttpsObservation::Verified(handshake),
            };
            endpoint_tls.require(verification.requirement());
            Transport {
                endpoint: dest.endpoint(Scheme::Https),
                verification,
                https,
                tls: Some(endpoint_tls),
            }
        }
        Err(failure) => Transport {
            endpoint: dest.endpoint(Scheme::Http),
            verification: Verification::Disabled,
            https: HttpsObservation::Unavailable(failure.message()),
            tls: None,
        },
    }
}

/// The longest one blocking read on a socket waits. Linux runs socket timeouts on its timer
/// wheel, whose granularity grows with the timeout (256 ms at 8 s, 2 s at 20 s with HZ=250):
/// one long wait may end late by that much, and a run past its budget. Waits of at most this
/// long, repeated until the deadline, end within a few milliseconds of it.
pub const WAIT_SLICE: Duration = Duration::from_millis(500);

/// Reads what `sock` has into `buf`, waiting for it until `deadline` at most, in waits of at
/// most [`WAIT_SLICE`]; `TimedOut` when nothing came by then. Waits without end when the
/// deadline is `None`.
pub fn read_before(
    sock: &mut std::net::TcpStream,
    buf: &mut [u8],
    deadline: Option<std::time::Instant>,
) -> std::io::Result<usize> {
    use std::io::{ErrorKind, Read};
    let Some(deadline) = deadline else {
        sock.set_read_timeout(None)?;
        return sock.read(buf);
    };
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        sock.set_read_timeout(Some(left.min(WAIT_SLICE)))?;
        match sock.read(buf) {
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            done => return done,
        }
    }
}

/// The agent of a fetch outside a scan (a feed document, a release asset): through the
/// operator's proxy only (set explicitly: ureq would otherwise read HTTP_PROXY / HTTPS_PROXY /
/// ALL_PROXY), every status an answer, header blocks capped, our user agent, and no wait on
/// the server longer than a slice ([`SlicedWaits`]). `tune` sets what the fetch decides
/// itself: the redirects it follows and its timeouts.
pub(crate) fn fetch_agent(
    proxy: Option<&str>,
    user_agent: &str,
    tune: impl FnOnce(ConfigBuilder<AgentScope>) -> ConfigBuilder<AgentScope>,
) -> Result<ureq::Agent, String> {
    let proxy = proxy.map(proxy::for_ureq).transpose()?;
    let resolver = ureq::unversioned::resolver::DefaultResolver::default();
    Ok(agent(proxy, resolver, user_agent, tune))
}

/// [`fetch_agent`] with the proxy parsed and the resolver given (a webhook's resolves to the
/// address the guard chose).
pub(crate) fn agent(
    proxy: Option<ureq::Proxy>,
    resolver: impl ureq::unversioned::resolver::Resolver,
    user_agent: &str,
    tune: impl FnOnce(ConfigBuilder<AgentScope>) -> ConfigBuilder<AgentScope>,
) -> ureq::Agent {
    use ureq::unversioned::transport::{Connector, DefaultConnector};
    let config = tune(
        ureq::Agent::config_builder()
            .proxy(proxy)
            .http_status_as_error(false)
            .max_response_header_size(http::MAX_HEADER_BYTES)
            .user_agent(user_agent),
    )
    .build();
    let connector = DefaultConnector::default().chain(SlicedWaits);
    ureq::Agent::with_parts(config, connector, resolver)
}
