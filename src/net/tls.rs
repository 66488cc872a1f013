//! TLS inspection: one handshake that records what a verified client would have concluded
//! (trusted or not, and why) while still completing, so a single connection yields the chain,
//! the protocol and the trust verdict. Transport selection is decided from this observation.

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// Why no handshake could be observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TlsFailure {
    /// Nothing accepted the TCP connection (refused, unreachable, name does not resolve).
    Connect(String),
    /// The connection timed out or was reset: possibly transient.
    Transient(String),
    /// A peer answered but no TLS handshake completed even without verification
    /// (plain HTTP on the port, protocol mismatch).
    Handshake(String),
}

/// Root sets to verify against: the public web PKI and, when given, the operator's private CA.
#[derive(Clone)]
pub struct Roots {
    public: Arc<RootCertStore>,
    private: Option<Arc<RootCertStore>>,
    /// DER of the private CA certificates, for building the HTTP client's root set.
    pub private_der: Vec<Vec<u8>>,
}

impl Roots {
    pub fn new(ca_file: Option<&std::path::Path>) -> Result<Roots, String> {
        let public = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let mut private_der = Vec::new();
        let private = match ca_file {
            None => None,
            Some(path) => {
                // A regular file within the cap of a CA bundle (`crate::files`), never read
                // whole whatever it is.
                let pem = crate::files::read(path, crate::files::Kind::CaBundle)
                    .map_err(|refusal| refusal.line(&path.display().to_string()))?;
                let mut store = RootCertStore::empty();
                for item in ureq::tls::parse_pem(&pem) {
                    if let Ok(ureq::tls::PemItem::Certificate(cert)) = item {
                        let der = cert.der().to_vec();
                        store.add(CertificateDer::from(der.clone())).map_err(|e| {
                            format!("--ca-file {}: unusable certificate ({e})", path.display())
                        })?;
                        private_der.push(der);
                    }
                }
                if store.is_empty() {
                    return Err(format!(
                        "--ca-file {} holds no PEM certificate; give a PEM bundle of the CA",
                        path.display()
                    ));
                }
                Some(Arc::new(store))
            }
        };
        Ok(Roots {
            public: Arc::new(public),
            private,
            private_der,
        })
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Completes every handshake but records whether a verifying client would have accepted it.
#[derive(Debug)]
struct RecordingVerifier {
    public: Arc<WebPkiServerVerifier>,
    private: Option<Arc<WebPkiServerVerifier>>,
    outcome: Mutex<Option<Result<TrustedBy, String>>>,
}

impl ServerCertVerifier for RecordingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let public = self.public.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        let outcome = match public {
            Ok(_) => Ok(TrustedBy::PublicRoots),
            Err(public_err) => match &self.private {
                Some(private) => private
                    .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
                    .map(|_| TrustedBy::PrivateCa)
                    .map_err(|e| describe_cert_error(&e)),
                None => Err(describe_cert_error(&public_err)),
            },
        };
        if let Ok(mut slot) = self.outcome.lock() {
            *slot = Some(outcome);
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.public.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.public.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.public.supported_verify_schemes()
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

/// How a handshake reaches the server.
#[derive(Clone, Copy, Debug)]
pub enum Route<'a> {
    /// Resolve the name (honouring `scanner.resolve`) and connect directly.
    Direct,
    /// Tunnel through the operator's proxy.
    Proxy(&'a super::proxy::Proxy),
    /// Connect to this address while the name stays the SNI and the checked name.
    Address(SocketAddr),
}

/// Connects to `host:port` (`host` is also the name checked and sent as SNI), through the
/// operator's proxy when there is one, and performs one handshake, bounded by `timeout`.
pub fn inspect(
    host: &str,
    port: u16,
    roots: &Roots,
    proxy: Option<&super::proxy::Proxy>,
    timeout: Duration,
) -> Result<Handshake, TlsFailure> {
    let route = match proxy {
        Some(p) => Route::Proxy(p),
        None => Route::Direct,
    };
    inspect_via(host, port, roots, route, timeout)
}

/// [`inspect`] with an explicit route.
pub fn inspect_via(
    host: &str,
    port: u16,
    roots: &Roots,
    route: Route,
    timeout: Duration,
) -> Result<Handshake, TlsFailure> {
    let deadline = Instant::now() + timeout;
    let provider = provider();
    let build = |store: &Arc<RootCertStore>| {
        WebPkiServerVerifier::builder_with_provider(store.clone(), provider.clone())
            .build()
            .map_err(|e| TlsFailure::Handshake(format!("cannot build verifier: {e}")))
    };
    let verifier = Arc::new(RecordingVerifier {
        public: build(&roots.public)?,
        private: roots.private.as_ref().map(build).transpose()?,
        outcome: Mutex::new(None),
    });
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsFailure::Handshake(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    let name = ServerName::try_from(host.to_string())
        .map_err(|_| TlsFailure::Connect(format!("{host} is not a valid TLS server name")))?;
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name)
        .map_err(|e| TlsFailure::Handshake(e.to_string()))?;

    let mut tcp = match route {
        Route::Proxy(proxy) => proxy.tunnel(host, port, deadline)?,
        Route::Direct => connect(host, port, deadline)?,
        Route::Address(addr) => {
            let remaining = deadline.saturating_duration_since(Instant::now());
            TcpStream::connect_timeout(&addr, remaining)
                .map_err(|e| classify_io(&e, &format!("connecting to {addr}")))?
        }
    };
    while conn.is_handshaking() {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(TlsFailure::Transient("TLS handshake timed out".into()));
        }
        let _ = tcp.set_read_timeout(Some(remaining));
        let _ = tcp.set_write_timeout(Some(remaining));
        match conn.complete_io(&mut tcp) {
            Ok(_) => {}
            Err(e) => return Err(classify_io(&e, "TLS handshake")),
        }
    }
    // Leave politely; a failure here changes nothing.
    conn.send_close_notify();
    let _ = conn.write_tls(&mut tcp);
    let _ = tcp.flush();
    let mut sink = [0u8; 1];
    let _ = tcp.set_read_timeout(Some(Duration::from_millis(1)));
    let _ = tcp.read(&mut sink);

    let chain = conn
        .peer_certificates()
        .map(|certs| certs.iter().map(|c| c.as_ref().to_vec()).collect())
        .unwrap_or_default();
    let trust = verifier
        .outcome
        .lock()
        .ok()
        .and_then(|mut o| o.take())
        .unwrap_or_else(|| Err("server sent no certificate".into()));
    Ok(Handshake {
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
        chain,
        trust,
    })
}

/// Connects to the first address of `host` that answers within the deadline.
pub fn connect(host: &str, port: u16, deadline: Instant) -> Result<TcpStream, TlsFailure> {
    let addrs: Vec<SocketAddr> = super::resolve::lookup(host, port)
        .map_err(|e| TlsFailure::Connect(format!("cannot resolve {host}: {e}")))?;
    let mut last = TlsFailure::Connect(format!("{host} resolves to no address"));
    for addr in addrs {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(TlsFailure::Transient(format!(
                "connecting to {addr} timed out"
            )));
        }
        match TcpStream::connect_timeout(&addr, remaining) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = classify_io(&e, &format!("connecting to {addr}")),
        }
    }
    Err(last)
}

fn classify_io(e: &std::io::Error, what: &str) -> TlsFailure {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::TimedOut | K::WouldBlock => TlsFailure::Transient(format!("{what} timed out")),
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            TlsFailure::Transient(format!("{what}: connection reset"))
        }
        K::ConnectionRefused => TlsFailure::Connect(format!("{what}: connection refused")),
        K::InvalidData => TlsFailure::Handshake(format!("{what}: {e}")),
        _ if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) => {
            TlsFailure::Handshake(format!("{what}: {e}"))
        }
        _ => TlsFailure::Connect(format!("{what}: {e}")),
    }
}

/// Days from `now` until the leaf certificate expires, rounded down (negative once expired).
pub fn leaf_days_left(chain: &[Vec<u8>], now: jiff::Timestamp) -> Option<i64> {
    let leaf = chain.first()?;
    let (_, cert) = x509_parser::parse_x509_certificate(leaf).ok()?;
    let not_after = cert.validity().not_after.timestamp();
    Some((not_after - now.as_second()).div_euclid(86_400))
}
