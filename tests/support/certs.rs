//! Test certificates generated with rcgen at run time (cached per process).
//!
//! One private CA signs the `PrivateCa`, `Expired` and `WrongName` leaves; `SelfSigned` is
//! its own issuer, like the certificate OpenCloud generates itself (`O=Acme Corp,
//! CN=OpenCloud`). Keys are ECDSA P-256: ring can sign with RSA but cannot generate RSA keys,
//! so the real instance's RSA-2048 key is not reproduced.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use jiff::ToSpan;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// How the fake instance presents itself on its port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlsMode {
    /// Leaf for [`LEAF_NAMES`] signed by the private CA ([`ca_file`]).
    PrivateCa,
    /// Self-signed leaf (`O=Acme Corp, CN=OpenCloud`, SAN [`LEAF_NAMES`]).
    SelfSigned,
    /// Signed by the private CA for the right names, but notAfter lies in the past.
    Expired,
    /// Signed by the private CA, valid dates, but only for `wrong.example`.
    WrongName,
    /// No TLS: plain HTTP on the port.
    Plain,
}

impl TlsMode {
    pub fn is_tls(self) -> bool {
        self != TlsMode::Plain
    }
}

/// Names every good leaf is valid for. `cloud.example.net` is a name public DNS could know,
/// for the DNS tests, which pin it to the fake with `scanner.resolve`.
pub const LEAF_NAMES: [&str; 4] = ["localhost", "127.0.0.1", "::1", "cloud.example.net"];

struct Ca {
    cert_der: CertificateDer<'static>,
    pem: String,
    params: CertificateParams,
    key_pem: String,
}

/// The day every certificate is dated around ([`set_validity`]).
static ANCHOR: OnceLock<jiff::civil::Date> = OnceLock::new();

/// The day certificates are dated around: the day of the clock the scans judge them by. Tests
/// pin that clock (`COS_NOW`) to [`super::PINNED_NOW`], so by default the certificates are
/// dated around it and a scan judges them the same on any day the suite runs, under any
/// machine clock. A program whose scans run on the real clock (`make demo`'s example, `make
/// bench`) calls [`date_around_today`] first.
fn anchor() -> jiff::civil::Date {
    *ANCHOR.get_or_init(|| {
        let pinned: jiff::Timestamp = super::PINNED_NOW.parse().expect("PINNED_NOW");
        pinned.to_zoned(jiff::tz::TimeZone::UTC).date()
    })
}

/// Dates every certificate of this process around the machine's today, for scans on the real
/// clock; `false` when certificates were dated already (call it before anything asks for one).
pub fn date_around_today() -> bool {
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    ANCHOR.set(today).is_ok()
}

/// Sets notBefore/notAfter to `anchor - before_days` and `anchor + after_days` (midnight UTC).
fn set_validity(params: &mut CertificateParams, before_days: i64, after_days: i64) {
    let t = anchor();
    let from = t.checked_sub(before_days.days()).expect("date");
    let to = t.checked_add(after_days.days()).expect("date");
    params.not_before =
        rcgen::date_time_ymd(i32::from(from.year()), from.month() as u8, from.day() as u8);
    params.not_after = rcgen::date_time_ymd(i32::from(to.year()), to.month() as u8, to.day() as u8);
}

fn ca() -> &'static Ca {
    static CA: OnceLock<Ca> = OnceLock::new();
    CA.get_or_init(|| {
        let key = KeyPair::generate().expect("generate CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        let mut dn = DistinguishedName::new();
        dn.push(DnType::OrganizationName, "check-storage-security tests");
        dn.push(DnType::CommonName, "Fake OpenCloud Test CA");
        params.distinguished_name = dn;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        set_validity(&mut params, 2, 3650);
        let cert = params.self_signed(&key).expect("self-sign CA");
        Ca {
            cert_der: cert.der().clone(),
            pem: cert.pem(),
            params,
            key_pem: key.serialize_pem(),
        }
    })
}

/// PEM of the private CA certificate.
pub fn ca_pem() -> &'static str {
    &ca().pem
}

/// DER of the private CA certificate.
pub fn ca_der() -> CertificateDer<'static> {
    ca().cert_der.clone()
}

static CA_FILE: OnceLock<PathBuf> = OnceLock::new();

/// Makes `path` the file holding the private CA PEM for this process (the `fake-instance`
/// example's `--ca-out`), writing it there; `false` when another path was chosen first.
pub fn use_ca_file(path: &Path) -> std::io::Result<bool> {
    write_ca_pem(path)?;
    Ok(CA_FILE.set(path.to_path_buf()).is_ok())
}

/// Path of a file holding the private CA PEM (written once per process, in cargo's
/// `target/tmp` for integration tests, else the system temp dir).
pub fn ca_file() -> PathBuf {
    CA_FILE
        .get_or_init(|| {
            let dir = option_env!("CARGO_TARGET_TMPDIR")
                .map(PathBuf::from)
                .filter(|d| d.is_dir())
                .unwrap_or_else(std::env::temp_dir);
            let path = dir.join(format!(
                "fake-opencloud-ca-{}-{}.pem",
                std::process::id(),
                jiff::Timestamp::now().as_nanosecond()
            ));
            std::fs::write(&path, ca_pem()).expect("write CA PEM");
            path
        })
        .clone()
}

/// Certificate chain and key served in one TLS mode.
pub struct ServerCert {
    pub chain: Vec<CertificateDer<'static>>,
    pub cert_pem: String,
    key_der: Vec<u8>,
}

impl ServerCert {
    pub fn key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()))
    }
}

fn leaf_params(names: &[&str], org: &str, cn: &str) -> CertificateParams {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(names).expect("leaf params");
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, org);
    dn.push(DnType::CommonName, cn);
    params.distinguished_name = dn;
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    set_validity(&mut params, 1, 365);
    params
}

fn make_cert(mode: TlsMode) -> ServerCert {
    let key = KeyPair::generate().expect("generate leaf key");
    let ca = ca();
    let ca_key = KeyPair::from_pem(&ca.key_pem).expect("CA key");
    let issuer = Issuer::from_params(&ca.params, &ca_key);
    let cert = match mode {
        TlsMode::PrivateCa | TlsMode::Plain => {
            let params = leaf_params(&LEAF_NAMES, "check-storage-security tests", "localhost");
            params.signed_by(&key, &issuer)
        }
        TlsMode::SelfSigned => {
            let params = leaf_params(&LEAF_NAMES, "Acme Corp", "OpenCloud");
            params.self_signed(&key)
        }
        TlsMode::Expired => {
            let mut params = leaf_params(&LEAF_NAMES, "check-storage-security tests", "localhost");
            set_validity(&mut params, 400, -35);
            params.signed_by(&key, &issuer)
        }
        TlsMode::WrongName => {
            let params = leaf_params(
                &["wrong.example"],
                "check-storage-security tests",
                "wrong.example",
            );
            params.signed_by(&key, &issuer)
        }
    }
    .expect("sign leaf");
    ServerCert {
        chain: vec![cert.der().clone()],
        cert_pem: cert.pem(),
        key_der: key.serialize_der(),
    }
}

/// The (cached) certificate of a TLS mode.
pub fn server_cert(mode: TlsMode) -> &'static ServerCert {
    static CERTS: [OnceLock<ServerCert>; 5] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let i = match mode {
        TlsMode::PrivateCa => 0,
        TlsMode::SelfSigned => 1,
        TlsMode::Expired => 2,
        TlsMode::WrongName => 3,
        TlsMode::Plain => 4,
    };
    CERTS[i].get_or_init(|| make_cert(mode))
}

/// rustls server configuration (ring provider, TLS 1.3 and 1.2, no ALPN like the real proxy).
pub fn server_config(mode: TlsMode) -> Arc<rustls::ServerConfig> {
    server_config_for(mode, &[&rustls::version::TLS13, &rustls::version::TLS12])
}

/// [`server_config`] speaking only the given protocol versions.
pub fn server_config_for(
    mode: TlsMode,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ServerConfig> {
    let cert = server_cert(mode);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(cert.chain.clone(), cert.key())
        .expect("server certificate");
    Arc::new(config)
}

/// Copies the CA PEM to `dest` (for `--ca-out`).
pub fn write_ca_pem(dest: &Path) -> std::io::Result<()> {
    std::fs::write(dest, ca_pem())
}

/// A test's own TLS client: trusts `trusted` (DER) and judges certificate dates at noon of the
/// [`anchor`] day, as a scan on the pinned clock does, whatever the machine's clock says.
pub fn client_config(
    trusted: &[CertificateDer<'static>],
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for der in trusted {
        roots.add(der.clone()).expect("a trusted certificate");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .expect("verifier");
    let noon = anchor()
        .at(12, 0, 0, 0)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .expect("noon")
        .timestamp()
        .as_second();
    let at = rustls::pki_types::UnixTime::since_unix_epoch(std::time::Duration::from_secs(
        u64::try_from(noon).expect("after 1970"),
    ));
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(JudgedAt { verifier, at }))
        .with_no_client_auth();
    Arc::new(config)
}

/// A verifier judging every certificate's dates at `at` instead of the handshake's time.
#[derive(Debug)]
struct JudgedAt {
    verifier: Arc<rustls::client::WebPkiServerVerifier>,
    at: rustls::pki_types::UnixTime,
}

impl rustls::client::danger::ServerCertVerifier for JudgedAt {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        self.verifier.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            self.at,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.verifier.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.verifier.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.verifier.supported_verify_schemes()
    }
}
