//! The checks judged against real answers of ownCloud Infinite Scale 7.0.0
//! (`tests/fixtures/ocis-7.0.0`, see its README): the family from the status document, the
//! demo sign-ins and basic auth, the discovery document, the start page's headers, the sign-in
//! cookies, the capabilities and the transport extras, then every check at once over a whole
//! default run. The builders here are shared with `exposure::ocis_tests`.

use super::{Context, cookies, evaluate, headers, identity, sharing, tls_extra, transport};
use crate::family::ProductFamily;
use crate::net::HttpsObservation;
use crate::net::http::{Endpoint, Response, Scheme};
use crate::net::legacy_tls::LegacyTls;
use crate::net::tls::Handshake;
use crate::probe::status::{self, StatusReport};
use crate::probe::{Measurements, fixture, plan};
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

/// The default run (basic auth disabled, demo users created).
pub(crate) const OCIS: &str = "ocis-7.0.0";
/// The same instance restarted with `PROXY_ENABLE_BASIC_AUTH=true`.
pub(crate) const OCIS_BASIC: &str = "ocis-7.0.0/basic-auth-enabled";
/// The web service's answer to a path it does not serve (`404 page not found`): the capture
/// has no web bundle, so `/index.html` is such a path, answered like every `exposed-*.txt`.
pub(crate) const CATCH_ALL: &str = "index.html-GET.txt";
/// When the default run was captured (`Date:` of `status.php.txt`).
const CAPTURED_AT: &str = "2026-11-22T03:02:51Z";

/// A captured answer of the default run.
pub(crate) fn ocis(file: &str) -> Response {
    fixture(&format!("{OCIS}/{file}"))
}

/// A captured answer of the run with basic auth enabled.
pub(crate) fn ocis_basic(file: &str) -> Response {
    fixture(&format!("{OCIS_BASIC}/{file}"))
}

/// A capture that is tool output rather than an HTTP answer (`tls-*.txt`).
fn tool_output(file: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/{OCIS}/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The status document of a run (`<dir>/status.php.txt`), read as the status probe reads it.
pub(crate) fn ocis_status(dir: &str) -> StatusReport {
    let answer = fixture(&format!("{dir}/status.php.txt"));
    assert_eq!(answer.status, 200, "{dir}/status.php.txt");
    status::parse_status(&answer.body).expect("a status document")
}

/// The address the capture's `OCIS_URL` names.
pub(crate) fn ocis_endpoint() -> Endpoint {
    Endpoint {
        scheme: Scheme::Https,
        url_host: "localhost".into(),
        port: 9200,
        base_path: String::new(),
    }
}

/// The certificate the proxy sent (`tls-s_client-default.txt`), DER.
fn ocis_certificate() -> Vec<u8> {
    let text = tool_output("tls-s_client-default.txt");
    let start = text
        .find("-----BEGIN CERTIFICATE-----")
        .expect("a PEM block");
    let (_, pem) = x509_parser::pem::parse_x509_pem(&text.as_bytes()[start..]).expect("PEM");
    pem.contents
}

/// The scan's own handshake with the proxy: the protocol and suite curl negotiated
/// (`tls-curl-verbose.txt`) and the self-signed certificate (`tls-s_client-default.txt`,
/// "verify error:num=18:self-signed certificate"), which no public root verifies.
pub(crate) fn ocis_handshake() -> Handshake {
    let curl = tool_output("tls-curl-verbose.txt");
    let negotiated = curl
        .lines()
        .find_map(|l| l.strip_prefix("* SSL connection using "))
        .expect("curl names the negotiated protocol");
    let (protocol, suite) = negotiated.split_once(" / ").expect("protocol / suite");
    Handshake {
        protocol: protocol.trim().into(),
        cipher_suite: suite.trim().into(),
        chain: vec![ocis_certificate()],
        trust: Err(
            "certificate is not signed by a trusted CA (self-signed or private CA; pass \
                    --ca-file to trust a private CA)"
                .into(),
        ),
    }
}

/// TLS 1.0 and 1.1 as `tls-versions.txt` found them (`tls1: rejected`, `tls1_1: rejected`).
fn ocis_legacy_tls() -> LegacyTls {
    let text = tool_output("tls-versions.txt");
    let accepted = |version: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{version}: ")))
            .map(|rest| rest.starts_with("accepted"))
    };
    LegacyTls {
        tls1_0: accepted("tls1"),
        tls1_1: accepted("tls1_1"),
        error: None,
    }
}

/// Measurements carrying the default run's status document and handshake, nothing else.
pub(crate) fn ocis_bare() -> Measurements {
    let mut m = Measurements::empty(
        ocis_endpoint(),
        HttpsObservation::Unverified(ocis_handshake()),
    );
    m.status = ocis_status(OCIS);
    m
}

/// The capture that answers an anonymous API probe (`plan::AUTHENTICATION`). Two probes have
/// no capture of their own: `GET /remote.php/webdav/` takes the anonymous PROPFIND of the same
/// path, and `GET /ocs/v1.php/cloud/user` the same path with a wrong password, which the
/// proxy treats as anonymous while basic auth is off (the same 401 and Bearer challenge).
pub(crate) fn ocis_anonymous_capture(key: &str) -> &'static str {
    match key {
        "auth:GET /remote.php/dav/files/" => "dav-files-unauth-GET.txt",
        "auth:PROPFIND /remote.php/dav/files/" => "dav-files-unauth-PROPFIND.txt",
        "auth:GET /remote.php/webdav/" => "webdav-legacy-unauth-PROPFIND.txt",
        "auth:GET /graph/v1.0/users" => "graph-users-unauth.txt",
        "auth:GET /graph/v1.0/me" => "graph-me-unauth.txt",
        "auth:GET /ocs/v1.php/cloud/users" => "ocs-v1-users-unauth.txt",
        "auth:GET /ocs/v1.php/cloud/user" => "ocs-v1-user-basic-einstein-wrongpw.txt",
        other => panic!("no capture for {other}"),
    }
}

/// The capture that answers `exposed:<path>`: the four files probed in the capture, the
/// catch-all for the rest.
pub(crate) fn ocis_exposed_capture(path: &str) -> &'static str {
    match path {
        "/ocis.yaml" => "exposed-ocis.yaml.txt",
        "/.env" => "exposed-dotenv.txt",
        "/proxy/server.key" => "exposed-proxy-server.key.txt",
        "/.git/config" => "exposed-git-config.txt",
        _ => CATCH_ALL,
    }
}

/// Every probe of a scan as the default oCIS 7.0.0 answered it: the capture of each request
/// (see the README's table), einstein's demo sign-in (the only one captured) and his password
/// over basic auth on `/graph/v1.0/me` (`graph-me-basic-admin.txt`: with basic auth off the
/// proxy answers any credential with the same 401).
pub(crate) fn ocis_default_run() -> Measurements {
    let mut m = ocis_bare();
    let capabilities = ocis("ocs-v1-capabilities-unauth.txt");
    m.capabilities = (capabilities.status == 200 && capabilities.is_whole())
        .then(|| status::parse_capabilities(&capabilities.body))
        .flatten();
    assert!(m.capabilities.is_some());
    m.root = Some(ocis("root-GET.txt"));
    let mut answer = |key: &str, file: &str| {
        m.http.insert(key.to_string(), Ok(ocis(file)));
    };
    answer(plan::OIDC, "openid-configuration.txt");
    answer(plan::BASELINE, CATCH_ALL);
    answer(plan::TRACE, "TRACE-root.txt");
    // The probe sends `Access-Control-Request-Headers: authorization`, as browsers do.
    answer(
        plan::CORS_PREFLIGHT,
        "cors-preflight-evil-graph-me-lcheaders.txt",
    );
    answer(plan::CORS_GET, "cors-GET-evil-graph-me.txt");
    for (key, _, _, _) in plan::AUTHENTICATION {
        answer(key, ocis_anonymous_capture(key));
    }
    for path in plan::exposed_files() {
        answer(
            &format!("{}{path}", plan::EXPOSED),
            ocis_exposed_capture(path),
        );
    }
    for path in plan::LISTING_CANDIDATES {
        answer(&format!("listing:{path}"), CATCH_ALL);
    }
    answer("demo:einstein", "login-idp-logon-einstein-demo.txt");
    answer("basic:einstein", "graph-me-basic-admin.txt");
    m.plain_http = Some(Ok(ocis("http-plain-to-tls-port.txt")));
    m.legacy_tls = Some(ocis_legacy_tls());
    m
}

/// The one finding with `id`.
pub(crate) fn get<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    let matching: Vec<&Finding> = findings.iter().filter(|f| f.id == id).collect();
    assert_eq!(
        matching.len(),
        1,
        "{id} in {:?}",
        findings.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
    matching[0]
}

fn context() -> Context {
    Context {
        now: CAPTURED_AT.parse().unwrap(),
        tls_min_days: 30,
        insecure: false,
        check_hardening: true,
        extra_checks_rating: true,
        waived: Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// The family

/// `status.php.txt` of both runs, and the same document fetched with a foreign Origin
/// (`cors-GET-evil-status.php.txt`), name Infinite Scale; measurements carrying it judge as
/// oCIS, measurements without a status document as OpenCloud.
#[test]
fn ocis_status_documents_give_the_infinite_scale_family() {
    for dir in [OCIS, OCIS_BASIC] {
        let report = ocis_status(dir);
        assert_eq!(report.family(), ProductFamily::InfiniteScale, "{dir}");
        assert_eq!(report.edition.as_deref(), Some("Community"), "{dir}");
    }
    let cors = status::parse_status(&ocis("cors-GET-evil-status.php.txt").body).unwrap();
    assert_eq!(cors.family(), ProductFamily::InfiniteScale);
    assert_eq!(ocis_bare().family(), ProductFamily::InfiniteScale);
    let unknown = Measurements::empty(
        ocis_endpoint(),
        HttpsObservation::Unverified(ocis_handshake()),
    );
    assert_eq!(unknown.family(), ProductFamily::OpenCloud);
    // The capabilities carry the same release as the status document.
    let caps = ocis_default_run().capabilities.unwrap();
    assert_eq!(
        status::capabilities_version(&caps).as_deref(),
        ocis_status(OCIS).product_version.as_deref()
    );
}

// ---------------------------------------------------------------------------------------------
// Sign-in

/// `openid-configuration.txt` names the built-in identity provider, so an oCIS scan sends the
/// five oCIS demo sign-ins and einstein's password over basic auth, under the keys the tests
/// here fill.
#[test]
fn ocis_discovery_plans_the_ocis_demo_sign_ins() {
    let oidc = Ok(ocis("openid-configuration.txt"));
    assert!(plan::builtin_identity_provider(Some(&oidc)));
    let probes = plan::dependent(&ocis_endpoint(), Some(&oidc), ProductFamily::InfiniteScale);
    let keys: Vec<&str> = probes.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "demo:einstein",
            "demo:marie",
            "demo:moss",
            "demo:richard",
            "demo:katherine",
            "basic:einstein",
        ]
    );
    let einstein = &probes[0];
    assert_eq!(einstein.path, plan::LOGON_PATH);
    let body = String::from_utf8(einstein.body.clone().unwrap()).unwrap();
    assert!(body.contains(r#"["einstein","relativity","1"]"#), "{body}");
}

/// `login-idp-logon-einstein-demo.txt` (200, `success: true`) fails demoUsersDisabled, naming
/// einstein; the family decides which accounts are read, so without the oCIS status document
/// the same answer is never looked at.
#[test]
fn ocis_einstein_demo_sign_in_fails_demo_users_disabled() {
    let mut m = ocis_bare();
    m.http
        .insert(plan::OIDC.into(), Ok(ocis("openid-configuration.txt")));
    m.http.insert(
        "demo:einstein".into(),
        Ok(ocis("login-idp-logon-einstein-demo.txt")),
    );
    let findings = identity::evaluate(&m);
    let demo = get(&findings, "demoUsersDisabled");
    assert_eq!(
        (demo.status, demo.severity),
        (Status::Failed, Severity::Critical)
    );
    assert_eq!(
        demo.detail,
        "demo accounts sign in with their published password: einstein"
    );

    m.status = StatusReport::default();
    assert_eq!(m.family(), ProductFamily::OpenCloud);
    let demo = get(&identity::evaluate(&m), "demoUsersDisabled").clone();
    assert_eq!(demo.status, Status::Skipped, "{}", demo.detail);
}

/// `login-idp-logon-einstein-wrong.txt` (204 No Content, the real refusal) for every oCIS demo
/// account passes demoUsersDisabled; basic auth stays undecided, since no account is known to
/// exist.
#[test]
fn ocis_refused_demo_sign_ins_pass_demo_users_disabled() {
    let mut m = ocis_bare();
    for account in ProductFamily::InfiniteScale.describe().demo_accounts {
        m.http.insert(
            format!("demo:{}", account.user),
            Ok(ocis("login-idp-logon-einstein-wrong.txt")),
        );
    }
    m.http.insert(
        "basic:einstein".into(),
        Ok(ocis("graph-me-basic-admin.txt")),
    );
    let findings = identity::evaluate(&m);
    let demo = get(&findings, "demoUsersDisabled");
    assert_eq!(demo.status, Status::Passed, "{}", demo.detail);
    assert_eq!(demo.detail, "no published demo account signs in");
    assert_eq!(
        get(&findings, "basicAuthDisabled").status,
        Status::Indeterminate
    );
}

/// Default run: einstein signs in through the IDP (`login-idp-logon-einstein-demo.txt`) but his
/// password over basic auth gets 401 (`graph-me-basic-admin.txt` on the probe's path, and his
/// own credential on OCS, `ocs-v1-user-basic-einstein.txt`): basicAuthDisabled passes.
#[test]
fn ocis_basic_auth_off_by_default_passes() {
    for refusal in ["graph-me-basic-admin.txt", "ocs-v1-user-basic-einstein.txt"] {
        let mut m = ocis_bare();
        m.http.insert(
            "demo:einstein".into(),
            Ok(ocis("login-idp-logon-einstein-demo.txt")),
        );
        m.http.insert("basic:einstein".into(), Ok(ocis(refusal)));
        let basic = get(&identity::evaluate(&m), "basicAuthDisabled").clone();
        assert_eq!(basic.status, Status::Passed, "{refusal}: {}", basic.detail);
        assert_eq!(
            basic.detail,
            "einstein signs in through the identity provider but not over basic auth"
        );
    }
}

/// `basic-auth-enabled/`: einstein's password on `/graph/v1.0/me`
/// (`cors-GET-evil-graph-me-basic.txt`, 200 JSON) and the admin's (`graph-me-basic-admin.txt`)
/// are accepted over basic auth: basicAuthDisabled fails, medium.
#[test]
fn ocis_basic_auth_enabled_fails_basic_auth_disabled() {
    for accepted in [
        "cors-GET-evil-graph-me-basic.txt",
        "graph-me-basic-admin.txt",
    ] {
        let mut m = ocis_bare();
        m.status = ocis_status(OCIS_BASIC);
        m.http.insert(
            "demo:einstein".into(),
            Ok(ocis("login-idp-logon-einstein-demo.txt")),
        );
        m.http
            .insert("basic:einstein".into(), Ok(ocis_basic(accepted)));
        let basic = get(&identity::evaluate(&m), "basicAuthDisabled").clone();
        assert_eq!(
            (basic.status, basic.severity),
            (Status::Failed, Severity::Medium),
            "{accepted}: {}",
            basic.detail
        );
        assert_eq!(
            basic.detail,
            "the password of einstein is accepted over basic auth on /graph/v1.0/me"
        );
    }
}

/// `openid-configuration.txt`: every endpoint on the issuer's https origin.
#[test]
fn ocis_discovery_document_is_consistent() {
    let mut m = ocis_bare();
    m.http
        .insert(plan::OIDC.into(), Ok(ocis("openid-configuration.txt")));
    let f = get(&identity::evaluate(&m), "identityProviderConsistent").clone();
    assert_eq!(f.status, Status::Passed, "{}", f.detail);
    assert_eq!(f.detail, "issuer https://localhost:9200");
}

// ---------------------------------------------------------------------------------------------
// Headers of the start page

/// `root-GET.txt` (the proxy's security headers on the web service's answer): HSTS without
/// includeSubDomains, a CSP whose script-src allows 'unsafe-inline' (a real weakness),
/// nosniff (sent twice), framing limited by CSP frame-ancestors, a strict referrer policy
/// and no Permissions-Policy.
#[test]
fn ocis_start_page_headers() {
    let mut m = ocis_bare();
    m.root = Some(ocis("root-GET.txt"));
    let findings = headers::evaluate(&m);
    let expected = [
        (
            "Strict-Transport-Security",
            Status::Passed,
            "Strict-Transport-Security: max-age=315360000; preload",
        ),
        (
            "hstsPreload",
            Status::Failed,
            "HSTS lacks includeSubDomains",
        ),
        (
            "Content-Security-Policy",
            Status::Passed,
            "a Content-Security-Policy is sent",
        ),
        (
            "cspWithoutUnsafeInline",
            Status::Failed,
            "script-src allows 'unsafe-inline'",
        ),
        (
            "X-Content-Type-Options",
            Status::Passed,
            "X-Content-Type-Options: nosniff",
        ),
        (
            "X-Frame-Options",
            Status::Passed,
            "CSP frame-ancestors 'self'",
        ),
        (
            "Referrer-Policy",
            Status::Passed,
            "Referrer-Policy: strict-origin-when-cross-origin",
        ),
        (
            "Permissions-Policy",
            Status::Failed,
            "no Permissions-Policy header",
        ),
    ];
    assert_eq!(findings.len(), expected.len());
    for (id, status, detail) in expected {
        let f = get(&findings, id);
        assert_eq!((f.status, f.detail.as_str()), (status, detail), "{id}");
        assert_eq!(f.role, Role::Hardening, "{id}");
    }
}

/// The same proxy headers come with every answer, so the start page of a stock release (200,
/// the web UI) is judged the same: `status.php.txt` carries them too.
#[test]
fn ocis_headers_are_the_proxys_on_every_answer() {
    let judged = |root: Response| {
        let mut m = ocis_bare();
        m.root = Some(root);
        headers::evaluate(&m)
            .into_iter()
            .map(|f| (f.id, f.status))
            .collect::<Vec<_>>()
    };
    assert_eq!(judged(ocis("status.php.txt")), judged(ocis("root-GET.txt")));
}

// ---------------------------------------------------------------------------------------------
// Cookies

/// `login-idp-logon-einstein-demo.txt`: `__Secure-KKT` (HttpOnly, Secure, SameSite=Strict) and
/// two deletions of `__Secure-KKBS`: every cookie check passes.
#[test]
fn ocis_sign_in_cookies_pass() {
    let mut m = ocis_bare();
    m.http.insert(
        "demo:einstein".into(),
        Ok(ocis("login-idp-logon-einstein-demo.txt")),
    );
    let findings = cookies::evaluate(&m);
    assert_eq!(findings.len(), 4, "{findings:?}");
    for (id, detail) in [
        (
            "cookieSecure",
            "every cookie is Secure (1 cookie(s): __Secure-KKT)",
        ),
        (
            "cookieHttpOnly",
            "every cookie is HttpOnly (1 cookie(s): __Secure-KKT)",
        ),
        (
            "cookieSameSite",
            "every cookie declares SameSite (1 cookie(s): __Secure-KKT)",
        ),
        (
            "cookiePrefix",
            "prefixed cookies meet their rules: __Secure-KKBS, __Secure-KKT",
        ),
    ] {
        let f = get(&findings, id);
        assert_eq!(
            (f.status, f.detail.as_str()),
            (Status::Passed, detail),
            "{id}"
        );
    }
}

/// `root-GET.txt` sends a `Samesite: Strict` response header but no cookie, and the refused
/// sign-in (`login-idp-logon-einstein-wrong.txt`) none either: no cookie finding at all.
#[test]
fn ocis_answers_without_set_cookie_give_no_cookie_finding() {
    let mut m = ocis_bare();
    m.root = Some(ocis("root-GET.txt"));
    assert_eq!(m.root.as_ref().unwrap().header("samesite"), Some("Strict"));
    m.http.insert(
        "demo:einstein".into(),
        Ok(ocis("login-idp-logon-einstein-wrong.txt")),
    );
    assert!(cookies::evaluate(&m).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Capabilities

/// `ocs-v1-capabilities-unauth.txt` of both runs: public-link passwords enforced for every
/// kind of link, no expiry setting reported (`expire_date: {enabled: false}` only), user
/// search limited to group members, a policy of 8 characters with every class. (The
/// `user_enumeration` and `expire_date` members are literals in oCIS's frontend
/// configuration, not settings: userEnumerationRestricted passes on every oCIS.)
#[test]
fn ocis_capabilities_sharing_measures() {
    for dir in [OCIS, OCIS_BASIC] {
        let answer = fixture(&format!("{dir}/ocs-v1-capabilities-unauth.txt"));
        let mut m = ocis_bare();
        m.capabilities = status::parse_capabilities(&answer.body);
        assert!(m.capabilities.is_some(), "{dir}");
        let findings = sharing::evaluate(&m);
        for (id, status, detail) in [
            (
                "publicLinkPasswordEnforced",
                Status::Passed,
                "passwords are enforced on every kind of public link",
            ),
            (
                "publicLinkExpirationEnforced",
                Status::Indeterminate,
                "the instance reports no setting for enforcing link expiry",
            ),
            (
                "userEnumerationRestricted",
                Status::Passed,
                "the instance reports user search limited to group members (a value both \
                 products report as fixed in their code; not tried by a search)",
            ),
            (
                "passwordPolicyEnforced",
                Status::Passed,
                "8 or more characters with every character class",
            ),
        ] {
            let f = get(&findings, id);
            assert_eq!(
                (f.status, f.detail.as_str()),
                (status, detail),
                "{dir} {id}"
            );
        }
    }
}

/// `ocs-v2-capabilities-unauth.txt` (401, empty) is no capabilities document: were it the
/// answer, every sharing measure would be indeterminate, none passed.
#[test]
fn ocis_v2_capabilities_need_a_sign_in() {
    let answer = ocis("ocs-v2-capabilities-unauth.txt");
    assert_eq!(answer.status, 401);
    let mut m = ocis_bare();
    m.capabilities = status::parse_capabilities(&answer.body);
    let findings = sharing::evaluate(&m);
    assert_eq!(findings.len(), 4);
    assert!(
        findings.iter().all(|f| f.status == Status::Indeterminate),
        "{findings:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Transport

/// `http-plain-to-tls-port.txt` (Go's `400 Client sent an HTTP request to an HTTPS server.`),
/// `tls-versions.txt` (TLS 1.0 and 1.1 rejected) and `tls-curl-verbose.txt` (TLS 1.3
/// negotiated): every transport extra passes.
#[test]
fn ocis_transport_extras_pass() {
    let mut m = ocis_bare();
    m.plain_http = Some(Ok(ocis("http-plain-to-tls-port.txt")));
    m.legacy_tls = Some(ocis_legacy_tls());
    assert_eq!(
        m.legacy_tls.as_ref().map(|l| (l.tls1_0, l.tls1_1)),
        Some((Some(false), Some(false)))
    );
    let findings = tls_extra::evaluate(&m);
    assert_eq!(findings.len(), 3, "{findings:?}");
    for (id, detail) in [
        ("tlsDeprecatedProtocol", "TLS 1.0 and TLS 1.1 are refused"),
        ("tlsProtocol", "the scan negotiated TLSv1.3"),
        (
            "httpsEnforced",
            "port 80 speaks only HTTPS (plain HTTP is answered 400)",
        ),
    ] {
        let f = get(&findings, id);
        assert_eq!(
            (f.status, f.detail.as_str()),
            (Status::Passed, detail),
            "{id}"
        );
    }
}

/// The certificate of `tls-s_client-default.txt`, valid for one year from the capture: at the
/// capture it has 364 days left; the self-signed chain fails tlsTrusted.
#[test]
fn ocis_certificate_is_fresh_but_untrusted() {
    let findings = transport::evaluate(&ocis_bare(), &context());
    assert_eq!(get(&findings, "httpsAvailable").status, Status::Passed);
    let certificate = get(&findings, "tlsCertificate");
    assert_eq!(
        (certificate.status, certificate.detail.as_str()),
        (
            Status::Passed,
            "the certificate is valid for 364 more day(s)"
        )
    );
    let trusted = get(&findings, "tlsTrusted");
    assert_eq!(trusted.status, Status::Failed);
    assert!(trusted.detail.contains("self-signed"), "{}", trusted.detail);
    let mut soon = context();
    soon.tls_min_days = 365;
    let certificate = get(&transport::evaluate(&ocis_bare(), &soon), "tlsCertificate").clone();
    assert_eq!(
        (certificate.status, certificate.severity),
        (Status::Failed, Severity::Medium)
    );
}

// ---------------------------------------------------------------------------------------------
// Everything at once

/// Every check over the whole default run (`ocis_default_run`), hardening included: exactly
/// these findings, with these statuses.
#[test]
fn every_check_judges_the_default_ocis_run() {
    let findings = evaluate(&ocis_default_run(), &context());
    let mut expected: Vec<(String, Status)> = [
        ("httpsAvailable", Status::Passed),
        ("tlsTrusted", Status::Failed),
        ("tlsCertificate", Status::Passed),
        ("directoryListing", Status::Passed),
        ("authentication:/remote.php/dav/files/", Status::Passed),
        ("authentication:/remote.php/webdav/", Status::Passed),
        ("authentication:/graph/v1.0/users", Status::Passed),
        ("authentication:/graph/v1.0/me", Status::Passed),
        ("authentication:/ocs/v1.php/cloud/users", Status::Passed),
        ("authentication:/ocs/v1.php/cloud/user", Status::Passed),
        ("traceMethodDisabled", Status::Passed),
        ("corsOriginRestricted", Status::Passed),
        ("versionDisclosure:X-Graph-Version", Status::Failed),
        ("versionDisclosure:X-Idp-Version", Status::Failed),
        ("versionDisclosure:X-Web-Version", Status::Failed),
        ("demoUsersDisabled", Status::Failed),
        ("basicAuthDisabled", Status::Passed),
        ("identityProviderConsistent", Status::Passed),
        ("tlsDeprecatedProtocol", Status::Passed),
        ("tlsProtocol", Status::Passed),
        ("httpsEnforced", Status::Passed),
        ("cookieSecure", Status::Passed),
        ("cookieHttpOnly", Status::Passed),
        ("cookieSameSite", Status::Passed),
        ("cookiePrefix", Status::Passed),
        ("Strict-Transport-Security", Status::Passed),
        ("hstsPreload", Status::Failed),
        ("Content-Security-Policy", Status::Passed),
        ("cspWithoutUnsafeInline", Status::Failed),
        ("X-Content-Type-Options", Status::Passed),
        ("X-Frame-Options", Status::Passed),
        ("Referrer-Policy", Status::Passed),
        ("Permissions-Policy", Status::Failed),
        ("publicLinkPasswordEnforced", Status::Passed),
        ("publicLinkExpirationEnforced", Status::Indeterminate),
        ("userEnumerationRestricted", Status::Passed),
        ("passwordPolicyEnforced", Status::Passed),
    ]
    .into_iter()
    .map(|(id, status)| (id.to_string(), status))
    .collect();
    expected.extend(
        plan::exposed_files()
            .into_iter()
            .map(|path| (format!("exposed:{path}"), Status::Passed)),
    );
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    let mut got: Vec<(String, Status)> =
        findings.iter().map(|f| (f.id.clone(), f.status)).collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, expected);
    // The oCIS deployment files are among those probed.
    for path in ProductFamily::InfiniteScale.describe().deployment_files {
        get(&findings, &format!("exposed:{path}"));
    }
}
