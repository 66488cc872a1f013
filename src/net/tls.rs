//! TLS to a scanned endpoint. The first handshake is the inspection: it completes whatever the
//! certificate, and the chain is then judged as a verifying client would have judged it
//! (trusted or not, and why), so one connection yields the chain, the protocol and the trust
//! verdict. Transport selection is decided from that observation.
//!
//! Every TLS connection to the endpoint in one scan attempt comes from one [`EndpointTls`]:
//! one rustls configuration, so one certificate verifier and one session cache. The
//! inspected connection stays open for the first HTTP request, and the HTTP client's other
//! connections resume its session (rustls resumes a session only under the verifier that
//! accepted it, so a configuration of their own could not). A resumed handshake costs the
//! instance neither a certificate nor a signature.

/// Why no handshake could be observed, and a socket whose I/O ends by a deadline: connecting
/// sits below TLS (`net::dial`), which the operator's proxy uses too.
pub use super::dial::{TlsFailure, Until};
use super::dial::{classify_io, connect, connect_to};
use crate::budget::StepTimeout;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Resumption, WebPkiServerVerifier,
};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A TLS connection to the endpoint, handshake done.
pub type TlsStream = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// Which root set vouched for the server's certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustedBy {
    PublicRoots,
    PrivateCa,
}

/// What one handshake showed.
#[derive(Clone, Debug)]
pub struct Handshake {
    /// `TLSv1.3`, `TLSv1.2`.
    pub protocol: String,
    pub cipher_suite: String,
    /// DER certificates as the server sent them, leaf first.
    pub chain: Vec<Vec<u8>>,
    /// `Ok` with the root set that verified the chain for the scanned name, or why none did.
    pub trust: Result<TrustedBy, String>,
}

/// Root sets to verify against: the public web PKI and, when given, the operator's private CA;
/// and the instant a certificate's dates are judged at.
#[derive(Clone, Debug)]
pub struct Roots {
    public: Arc<RootCertStore>,
    private: Option<Arc<RootCertStore>>,
    /// The run's clock ([`Roots::judged_at`]): a scan judges a certificate's dates at the
    /// instant it treats as now, as it judges everything else, so a pinned clock (`COS_NOW`)
    /// and the machine's never disagree about one certificate. `None`: each handshake's time.
    at: Option<UnixTime>,
}

/// The public web PKI, built once per process.
fn public_roots() -> Arc<RootCertStore> {
    static PUBLIC: OnceLock<Arc<RootCertStore>> = OnceLock::new();
    PUBLIC
        .get_or_init(|| {
            Arc::new(RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            })
        })
        .clone()
}

impl Roots {
    /// The public roots only.
    pub fn public() -> Roots {
        Roots {
            public: public_roots(),
            private: None,
            at: None,
        }
    }

    /// These roots, judging every certificate's dates at `now` instead of the machine's clock.
    pub fn judged_at(self, now: jiff::Timestamp) -> Roots {
        let seconds = u64::try_from(now.as_second()).unwrap_or(0);
        Roots {
            at: Some(UnixTime::since_unix_epoch(Duration::from_secs(seconds))),
            ..self
        }
    }

    pub fn new(ca_file: Option<&std::path::Path>) -> Result<Roots, String> {
        let Some(path) = ca_file else {
            return Ok(Roots::public());
        };
        // A regular file within the cap of a CA bundle (`crate::files`), never read whole
        // whatever it is.
        let pem = crate::files::read(path, crate::files::Kind::CaBundle)
            .map_err(|refusal| refusal.line(&path.display().to_string()))?;
        let mut store = RootCertStore::empty();
        for item in ureq::tls::parse_pem(&pem) {
            if let Ok(ureq::tls::PemItem::Certificate(cert)) = item {
                store
                    .add(CertificateDer::from(cert.der().to_vec()))
                    .map_err(|e| {
                        format!("--ca-file {}: unusable certificate ({e})", path.display())
                    })?;
            }
        }
        if store.is_empty() {
            return Err(format!(
                "--ca-file {} holds no PEM certificate; give a PEM bundle of the CA",
                path.display()
            ));
        }
        Ok(Roots {
            public: public_roots(),
            private: Some(Arc::new(store)),
            at: None,
        })
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// What every handshake with an endpoint after the inspected first one must show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// A chain that verifies for the scanned name against this root set.
    Trusted(TrustedBy),
    /// Any chain: the transport already records the endpoint as unverified (`tlsTrusted`
    /// failed, or `--insecure`).
    Anything,
}

/// The one certificate verifier of an endpoint's connections. Until transport selection sets
/// the [`Requirement`], any chain completes the handshake (the inspection judges it
/// afterwards); from then on every full handshake must meet it. Signatures are always checked.
#[derive(Debug)]
struct EndpointVerifier {
    public: Arc<WebPkiServerVerifier>,
    private: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
    required: OnceLock<Requirement>,
    /// [`Roots::judged_at`]'s instant, when the roots have one.
    at: Option<UnixTime>,
}

impl EndpointVerifier {
    fn new(
        roots: &Roots,
        provider: &Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<EndpointVerifier, String> {
        let build = |store: &Arc<RootCertStore>| {
            WebPkiServerVerifier::builder_with_provider(store.clone(), provider.clone())
                .build()
                .map_err(|e| format!("cannot build verifier: {e}"))
        };
        Ok(EndpointVerifier {
            public: build(&roots.public)?,
            private: roots.private.as_ref().map(build).transpose()?,
            algorithms: provider.signature_verification_algorithms,
            required: OnceLock::new(),
            at: roots.at,
        })
    }

    /// Which root set verifies `chain` for `name`, or why none does: what a verifying client
    /// would have concluded.
    fn judge(
        &self,
        chain: &[CertificateDer<'_>],
        name: &ServerName<'_>,
    ) -> Result<TrustedBy, String> {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Err("server sent no certificate".into());
        };
        let now = self.at.unwrap_or_else(UnixTime::now);
        match self
            .public
            .verify_server_cert(leaf, intermediates, name, &[], now)
        {
            Ok(_) => Ok(TrustedBy::PublicRoots),
            Err(public_err) => match &self.private {
                Some(private) => private
                    .verify_server_cert(leaf, intermediates, name, &[], now)
                    .map(|_| TrustedBy::PrivateCa)
                    .map_err(|e| describe_cert_error(&e)),
                None => Err(describe_cert_error(&public_err)),
            },
        }
    }
}

impl ServerCertVerifier for EndpointVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verifier = match self.required.get() {
            None | Some(Requirement::Anything) => return Ok(ServerCertVerified::assertion()),
            Some(Requirement::Trusted(TrustedBy::PublicRoots)) => &self.public,
            Some(Requirement::Trusted(TrustedBy::PrivateCa)) => {
                self.private
                    .as_ref()
                    .ok_or(rustls::Error::InvalidCertificate(
                        rustls::CertificateError::UnknownIssuer,
                    ))?
            }
        };
        let now = self.at.unwrap_or(now);
        verifier.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Says what an operator needs to know in the words they know.
fn describe_cert_error(err: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    match err {
        rustls::Error::InvalidCertificate(cert) => match cert {
            C::Expired | C::ExpiredContext { .. } => "certificate has expired".into(),
            C::NotValidYet | C::NotValidYetContext { .. } => "certificate is not valid yet".into(),
            C::UnknownIssuer => {
                "certificate is not signed by a trusted CA (self-signed or private CA; pass \
                 --ca-file to trust a private CA)"
                    .into()
            }
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                "certificate is not valid for the scanned name".into()
            }
            C::Revoked => "certificate is revoked".into(),
            C::BadSignature => "certificate signature is invalid".into(),
            other => format!("certificate rejected: {other:?}"),
        },
        other => format!("certificate rejected: {other}"),
    }
}

/// How a connection reaches the server.
#[derive(Clone, Debug)]
pub enum Route {
    /// Resolve the name (honouring `scanner.resolve`) and connect directly.
    Direct,
    /// Tunnel through the operator's proxy.
    Proxy(super::proxy::Proxy),
    /// Connect to this address while the name stays the SNI and the checked name.
    Address(SocketAddr),
    /// Connect to the addresses the guard validated for the name (a guarded scan), in turn;
    /// nothing is looked up.
    Pinned(super::guard::Pins),
}

impl Route {
    /// Through the operator's proxy when there is one, else directly.
    pub fn via(proxy: Option<&super::proxy::Proxy>) -> Route {
        proxy.cloned().map_or(Route::Direct, Route::Proxy)
    }

    /// A TCP connection to `host:port` over this route within the deadline.
    pub fn dial(&self, host: &str, port: u16, deadline: Instant) -> Result<TcpStream, TlsFailure> {
        match self {
            Route::Proxy(proxy) => proxy.tunnel(host, port, deadline),
            Route::Direct => connect(host, port, deadline),
            Route::Address(addr) => {
                let remaining = deadline.saturating_duration_since(Instant::now());
                TcpStream::connect_timeout(addr, remaining)
                    .map_err(|e| classify_io(&e, &format!("connecting to {addr}")))
            }
            Route::Pinned(pins) => {
                let addrs = pins
                    .lookup(host, port)
                    .map_err(|e| TlsFailure::Connect(e.to_string()))?;
                connect_to(host, addrs, deadline)
            }
        }
    }
}

/// The TLS side of one endpoint for one scan attempt: where and how to connect, the one
/// rustls configuration every connection shares, and the inspected first connection until
/// the HTTP client takes it. Cloning shares all of it.
#[derive(Clone)]
pub struct EndpointTls(Arc<Shared>);

struct Shared {
    /// Name or address connected to (and checked, and sent as SNI when a name).
    host: String,
    port: u16,
    route: Route,
    name: ServerName<'static>,
    /// One verifier and one session cache for every connection.
    config: Arc<rustls::ClientConfig>,
    verifier: Arc<EndpointVerifier>,
    sessions: Arc<ClientSessionMemoryCache>,
    /// Bounds the connect and the handshake of each connection, never past the budget.
    timeout: StepTimeout,
    /// The inspected connection and the verdict on its chain, kept for the first HTTP request.
    kept: Mutex<Option<(TlsStream, Result<TrustedBy, String>)>>,
}

impl std::fmt::Debug for EndpointTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EndpointTls({}:{})", self.0.host, self.0.port)
    }
}

impl Drop for Shared {
    /// An inspected connection nobody used is closed politely.
    fn drop(&mut self) {
        if let Some((mut stream, _)) = self.kept.get_mut().ok().and_then(Option::take) {
            stream.conn.send_close_notify();
            let _ = stream.conn.write_tls(&mut stream.sock);
        }
    }
}

impl EndpointTls {
    /// TLS to `host:port` (`host` is also the name checked and sent as SNI) over `route`,
    /// verified against `roots` once a [`Requirement`] is set; each connection's connect and
    /// handshake are bounded by `timeout`.
    pub fn new(
        host: &str,
        port: u16,
        roots: &Roots,
        route: Route,
        timeout: StepTimeout,
    ) -> Result<EndpointTls, TlsFailure> {
        let provider = provider();
        let verifier =
            Arc::new(EndpointVerifier::new(roots, &provider).map_err(TlsFailure::Handshake)?);
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsFailure::Handshake(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone())
            .with_no_client_auth();
        // A few sessions of one name are all an endpoint's connections ever use.
        let sessions = Arc::new(ClientSessionMemoryCache::new(16));
        config.resumption = Resumption::store(sessions.clone());
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| TlsFailure::Connect(format!("{host} is not a valid TLS server name")))?;
        Ok(EndpointTls(Arc::new(Shared {
            host: host.to_string(),
            port,
            route,
            name,
            config: Arc::new(config),
            verifier,
            sessions,
            timeout,
            kept: Mutex::new(None),
        })))
    }

    /// The first connection: one handshake that completes whatever the certificate, judged
    /// afterwards. The connection stays open for the first HTTP request.
    pub fn inspect(&self) -> Result<Handshake, TlsFailure> {
        let deadline = self.0.timeout.deadline();
        let tcp = self.dial(deadline)?;
        let stream = self
            .handshake(tcp, deadline)
            .map_err(|e| classify_io(&e, "TLS handshake"))?;
        let conn = &stream.conn;
        let peer = conn.peer_certificates().unwrap_or_default();
        let handshake = Handshake {
            protocol: conn
                .protocol_version()
                .map(|v| match v {
                    rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
                    rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
                    other => format!("{other:?}"),
                })
                .unwrap_or_default(),
            cipher_suite: conn
                .negotiated_cipher_suite()
                .map(|s| format!("{:?}", s.suite()))
                .unwrap_or_default(),
            chain: peer.iter().map(|c| c.as_ref().to_vec()).collect(),
            trust: self.0.verifier.judge(peer, &self.0.name),
        };
        if let Ok(mut kept) = self.0.kept.lock() {
            *kept = Some((stream, handshake.trust.clone()));
        }
        Ok(handshake)
    }

    /// Sets what every later handshake must show; the first setting stays. When the inspected
    /// chain does not meet it (a node of `--all-addresses` judged by the scan's verification),
    /// the inspected connection is closed and its session forgotten: a resumed handshake shows
    /// no certificate, so a session may only be resumed under the verdict that admitted it.
    pub fn require(&self, requirement: Requirement) {
        let required = self.0.verifier.required.get_or_init(|| requirement);
        let Ok(mut kept) = self.0.kept.lock() else {
            return;
        };
        let meets = match (required, kept.as_ref()) {
            (_, None) | (Requirement::Anything, _) => return,
            (Requirement::Trusted(by), Some((_, trust))) => trust.as_ref() == Ok(by),
        };
        if !meets {
            if let Some((mut stream, _)) = kept.take() {
                stream.conn.send_close_notify();
                let _ = stream.conn.write_tls(&mut stream.sock);
            }
            self.0.sessions.remove_tls12_session(&self.0.name);
            while self.0.sessions.take_tls13_ticket(&self.0.name).is_some() {}
        }
    }

    /// A connection for the HTTP client: the inspected one while nobody has taken it and it
    /// is still open, else a new one, which resumes the session of an earlier connection when
    /// the server issued one. Refused until a [`Requirement`] is set, so no connection but
    /// the inspected one ever completes with a certificate nobody judged. A new connection's
    /// connect and handshake end within `within` (what is left of the request that asked for
    /// it) when that comes before the endpoint's own limit.
    pub fn connection(&self, within: Option<Duration>) -> io::Result<TlsStream> {
        if self.0.verifier.required.get().is_none() {
            return Err(io::Error::other(format!(
                "TLS to {}:{}: the certificate requirement is not decided yet",
                self.0.host, self.0.port
            )));
        }
        let kept = self.0.kept.lock().ok().and_then(|mut k| k.take());
        if let Some((mut stream, _)) = kept
            && is_alive(&mut stream)
        {
            return Ok(stream);
        }
        let limit = self.0.timeout.deadline();
        let deadline = within.map_or(limit, |left| limit.min(Instant::now() + left));
        let tcp = self.dial(deadline).map_err(|failure| match failure {
            TlsFailure::Connect(m) => io::Error::new(io::ErrorKind::ConnectionRefused, m),
            TlsFailure::Transient(m) => io::Error::new(io::ErrorKind::TimedOut, m),
            TlsFailure::Handshake(m) => io::Error::new(io::ErrorKind::InvalidData, m),
        })?;
        self.handshake(tcp, deadline)
    }

    fn dial(&self, deadline: Instant) -> Result<TcpStream, TlsFailure> {
        let tcp = self.0.route.dial(&self.0.host, self.0.port, deadline)?;
        // Requests go out in more than one write (head, body): never wait for an ACK between.
        let _ = tcp.set_nodelay(true);
        Ok(tcp)
    }

    /// One handshake on `tcp` within the deadline; an error keeps rustls' own error inside.
    fn handshake(&self, mut tcp: TcpStream, deadline: Instant) -> io::Result<TlsStream> {
        let mut conn = rustls::ClientConnection::new(self.0.config.clone(), self.0.name.clone())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        {
            let mut io = Until::new(&mut tcp, Some(deadline));
            while conn.is_handshaking() {
                conn.complete_io(&mut io).map_err(|e| match e.kind() {
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                        io::Error::new(io::ErrorKind::TimedOut, "TLS handshake timed out")
                    }
                    _ => e,
                })?;
            }
            // The last flight (the client's Finished) may still be queued.
            while conn.wants_write() {
                conn.write_tls(&mut io)?;
            }
        }
        let _ = tcp.set_read_timeout(None);
        let _ = tcp.set_write_timeout(None);
        Ok(rustls::StreamOwned::new(conn, tcp))
    }
}

/// Whether a kept-alive connection can carry another request. Takes in, without waiting,
/// what the server sent since the last answer (TLS 1.3 session tickets are expected; they
/// are stored for resumption), and says no after a close, an error, or bytes of an answer
/// nobody asked for.
pub fn is_alive(stream: &mut TlsStream) -> bool {
    if stream.sock.set_nonblocking(true).is_err() {
        return false;
    }
    let alive = loop {
        match stream.conn.read_tls(&mut stream.sock) {
            Ok(0) => break false,
            Ok(_) => match stream.conn.process_new_packets() {
                Ok(state) if state.peer_has_closed() || state.plaintext_bytes_to_read() > 0 => {
                    break false;
                }
                Ok(_) => {}
                Err(_) => break false,
            },
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break false,
        }
    };
    stream.sock.set_nonblocking(false).is_ok() && alive
}

/// Days from `now` until the leaf certificate expires, rounded down (negative once expired).
pub fn leaf_days_left(chain: &[Vec<u8>], now: jiff::Timestamp) -> Option<i64> {
    let leaf = chain.first()?;
    let (_, cert) = x509_parser::parse_x509_certificate(leaf).ok()?;
    let not_after = cert.validity().not_after.timestamp();
    Some((not_after - now.as_second()).div_euclid(86_400))
}
