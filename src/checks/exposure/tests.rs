use super::*;
use crate::net::HttpsObservation;
use crate::net::http::{Endpoint, FetchError, Scheme};
use crate::probe::fixture;

const F: &str = "opencloud-4.0.0";

fn base() -> Measurements {
    let endpoint = Endpoint {
        scheme: Scheme::Https,
        url_host: "localhost".into(),
        port: 9200,
        base_path: String::new(),
    };
    let mut m = Measurements::empty(endpoint, HttpsObservation::Unavailable("x".into()));
    m.http.insert(
        plan::BASELINE.into(),
        Ok(fixture(&format!("{F}/random-nonexistent-path.txt"))),
    );
    m
}

/// Measurements as the real default OpenCloud 4.0.0 answered them.
fn real() -> Measurements {
    let mut m = base();
    let catch_all = fixture(&format!("{F}/random-nonexistent-path.txt"));
    for path in plan::exposed_files() {
        let file = match path {
            "/opencloud.yaml" => "exposed-opencloud.yaml.txt",
            "/.env" => "exposed-dotenv.txt",
            "/proxy/server.key" => "exposed-proxy-server.key.txt",
            "/.git/config" => "exposed-git-config.txt",
            _ => "random-nonexistent-path.txt",
        };
        m.http.insert(
            format!("{}{path}", plan::EXPOSED),
            Ok(fixture(&format!("{F}/{file}"))),
        );
    }
    for path in plan::LISTING_CANDIDATES {
        m.http
            .insert(format!("listing:{path}"), Ok(catch_all.clone()));
    }
    for (key, _, _, _) in plan::AUTHENTICATION {
        let file = match *key {
            "auth:GET /remote.php/dav/files/" => "dav-files-unauth-GET.txt",
            "auth:PROPFIND /remote.php/dav/files/" => "dav-files-unauth-PROPFIND.txt",
            "auth:GET /remote.php/webdav/" => "webdav-unauth-GET.txt",
            "auth:GET /graph/v1.0/users" => "graph-users-unauth.txt",
            "auth:GET /graph/v1.0/me" => "graph-me-unauth.txt",
            "auth:GET /ocs/v1.php/cloud/users" => "ocs-v1-cloud-users-unauth.txt",
            _ => "ocs-v1-cloud-user-unauth.txt",
        };
        m.http
            .insert(key.to_string(), Ok(fixture(&format!("{F}/{file}"))));
    }
    m.http.insert(
        plan::TRACE.into(),
        Ok(fixture(&format!("{F}/TRACE-root.txt"))),
    );
    m.http.insert(
        plan::CORS_PREFLIGHT.into(),
        Ok(fixture(&format!("{F}/cors-preflight-evil-graph-me.txt"))),
    );
    m.http.insert(
        plan::CORS_GET.into(),
        Ok(fixture(&format!("{F}/cors-GET-evil-graph-me.txt"))),
    );
    m.http.insert(
        plan::OIDC.into(),
        Ok(fixture(&format!("{F}/well-known-openid-configuration.txt"))),
    );
    m.root = Some(fixture(&format!("{F}/root-GET.txt")));
    m
}

fn get<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    findings.iter().find(|f| f.id == id).unwrap_or_else(|| {
        panic!(
            "no finding {id} in {:?}",
            findings.iter().map(|f| &f.id).collect::<Vec<_>>()
        )
    })
}

fn ok(body: &str) -> Observation {
    Ok(Response {
        status: 200,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        body: body.as_bytes().to_vec(),
        truncated: false,
        digest: None,
    })
}

#[test]
fn the_real_default_instance_exposes_nothing() {
    let findings = evaluate(&real());
    for f in &findings {
        if f.id.starts_with("exposed:")
            || f.id.starts_with("authentication:")
            || f.id == "directoryListing"
            || f.id == "traceMethodDisabled"
        {
            assert_eq!(f.status, Status::Passed, "{} {}", f.id, f.detail);
        }
    }
    assert_eq!(
        get(&findings, "exposed:/opencloud.yaml").detail,
        "answered the catch-all page"
    );
}

#[test]
fn the_real_default_cors_wildcard_passes_as_public_access() {
    // The real 4.0.0 answers its Graph preflight with `*` and `Allow-Credentials: true`:
    // browsers refuse that pair, so nothing of the signed-in user is reachable from elsewhere.
    let findings = evaluate(&real());
    let cors = get(&findings, "corsOriginRestricted");
    assert_eq!(cors.status, Status::Passed, "{}", cors.detail);
    assert!(
        cors.detail.contains("Access-Control-Allow-Origin: *")
            && cors.detail.contains("never send credentials"),
        "{}",
        cors.detail
    );
}

fn cors_answer(origin: &str, credentials: bool) -> Observation {
    let mut headers = vec![("Access-Control-Allow-Origin".into(), origin.to_string())];
    if credentials {
        headers.push(("Access-Control-Allow-Credentials".into(), "true".into()));
    }
    Ok(Response {
        status: 204,
        headers,
        body: vec![],
        truncated: false,
        digest: None,
    })
}

#[test]
fn cors_is_judged_as_browsers_enforce_it() {
    /// Access-Control-Allow-Origin, and whether Allow-Credentials is true.
    type Answer<'a> = Option<(&'a str, bool)>;
    // (preflight answer, GET answer) -> (status, severity when failed)
    let cases: [(Answer, Answer, Status, Severity); 8] = [
        (Some(("*", true)), None, Status::Passed, Severity::Critical),
        (Some(("*", false)), None, Status::Passed, Severity::Critical),
        (None, Some(("*", true)), Status::Passed, Severity::Critical),
        (
            Some((plan::FOREIGN_ORIGIN, true)),
            None,
            Status::Failed,
            Severity::Critical,
        ),
        (
            Some(("null", true)),
            None,
            Status::Failed,
            Severity::Critical,
        ),
        (
            Some((plan::FOREIGN_ORIGIN, false)),
            None,
            Status::Failed,
            Severity::Medium,
        ),
        (
            Some(("*", true)),
            Some((plan::FOREIGN_ORIGIN, false)),
            Status::Failed,
            Severity::Medium,
        ),
        (
            Some(("https://cloud.example.com", true)),
            None,
            Status::Passed,
            Severity::Critical,
        ),
    ];
    for (preflight, get_answer, status, severity) in cases {
        let mut m = real();
        m.http.remove(plan::CORS_PREFLIGHT);
        m.http.remove(plan::CORS_GET);
        if let Some((origin, credentials)) = preflight {
            m.http.insert(
                plan::CORS_PREFLIGHT.into(),
                cors_answer(origin, credentials),
            );
        }
        if let Some((origin, credentials)) = get_answer {
            m.http
                .insert(plan::CORS_GET.into(), cors_answer(origin, credentials));
        }
        let f = get(&evaluate(&m), "corsOriginRestricted").clone();
        assert_eq!(
            f.status, status,
            "{preflight:?} {get_answer:?}: {}",
            f.detail
        );
        if status == Status::Failed {
            assert_eq!(f.severity, severity, "{preflight:?} {get_answer:?}");
        }
    }
}

#[test]
fn the_real_default_discloses_its_version_in_headers() {
    let findings = evaluate(&real());
    let web = get(&findings, "versionDisclosure:X-Web-Version");
    assert_eq!((web.status, web.severity), (Status::Failed, Severity::Low));
    assert_eq!(web.detail, "X-Web-Version: 4.0.0");
    // Each fix names the header that was seen, and only it.
    let idp = get(&findings, "versionDisclosure:X-Idp-Version");
    assert_eq!(
        idp.remediation,
        "Strip the X-Idp-Version header at the reverse proxy (nginx: proxy_hide_header \
         X-Idp-Version; Caddy: header -X-Idp-Version; Apache: Header unset X-Idp-Version)."
    );
    assert!(!web.remediation.contains("Idp") && web.remediation.contains("X-Web-Version"));
    for f in findings
        .iter()
        .filter(|f| f.id.starts_with("versionDisclosure:"))
    {
        assert!(!f.remediation.contains(";."), "{}", f.remediation);
    }
}

#[test]
fn exposed_files_fail_by_content_and_severity() {
    let cases = [
        (
            "/opencloud.yaml",
            "token_manager:\n  jwt_secret: abc\nmachine_auth_api_key: x\n",
            Severity::High,
        ),
        (
            "/proxy/server.key",
            "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
            Severity::Critical,
        ),
        (
            "/.env",
            "OC_URL=https://cloud.example\nOC_JWT_SECRET=x\n",
            Severity::High,
        ),
        (
            "/.git/config",
            "[core]\n\trepositoryformatversion = 0\n",
            Severity::High,
        ),
        (
            "/docker-compose.yml",
            "services:\n  opencloud:\n    image: opencloudeu/opencloud\n",
            Severity::High,
        ),
    ];
    for (path, body, severity) in cases {
        let mut m = base();
        m.http.insert(format!("{}{path}", plan::EXPOSED), ok(body));
        let findings = evaluate(&m);
        let f = get(&findings, &format!("exposed:{path}"));
        assert_eq!((f.status, f.severity), (Status::Failed, severity), "{path}");
    }
    let mut m = base();
    m.http.insert(
        format!("{}/idm/idm.boltdb", plan::EXPOSED),
        ok("\0\0\0\0\u{ed}\u{da}\u{c}\u{ed}\0\0"),
    );
    assert_eq!(
        get(&evaluate(&m), "exposed:/idm/idm.boltdb").severity,
        Severity::Critical
    );
}

#[test]
fn a_200_that_is_not_the_file_is_not_a_finding() {
    let mut m = base();
    m.http.insert(
        format!("{}/proxy/server.key", plan::EXPOSED),
        ok("<!DOCTYPE html><html>custom page</html>"),
    );
    m.http
        .insert(format!("{}/.env", plan::EXPOSED), ok("nothing to see"));
    let findings = evaluate(&m);
    assert_eq!(
        get(&findings, "exposed:/proxy/server.key").status,
        Status::Passed
    );
    assert_eq!(get(&findings, "exposed:/.env").status, Status::Passed);
}

#[test]
fn unanswered_probes_are_network_limited() {
    let mut m = base();
    m.http.insert(
        format!("{}/.env", plan::EXPOSED),
        Err(FetchError::Transient("timed out".into())),
    );
    assert_eq!(
        get(&evaluate(&m), "exposed:/.env").status,
        Status::NetworkLimited
    );
}

#[test]
fn directory_listings() {
    let mut m = real();
    m.http.insert(
        "listing:/data/".into(),
        Ok(Response {
            status: 200,
            headers: vec![],
            body: b"<html><head><title>Index of /data/</title></head><body><h1>Index of /data/</h1></body></html>".to_vec(),
            truncated: false,
            digest: None,
        }),
    );
    let findings = evaluate(&m);
    let f = get(&findings, "directoryListing");
    assert_eq!(f.status, Status::Failed);
    assert!(f.detail.contains("/data/"));
}

#[test]
fn anonymous_api_answers() {
    let mut m = real();
    m.http.insert(
        "auth:PROPFIND /remote.php/dav/files/".into(),
        Ok(Response {
            status: 207,
            headers: vec![],
            body: b"<d:multistatus/>".to_vec(),
            truncated: false,
            digest: None,
        }),
    );
    m.http.insert(
        "auth:GET /ocs/v1.php/cloud/user".into(),
        ok(r#"{"ocs":{"data":{"id":"admin"}}}"#),
    );
    let findings = evaluate(&m);
    let dav = get(&findings, "authentication:/remote.php/dav/files/");
    assert_eq!(
        (dav.status, dav.severity),
        (Status::Failed, Severity::Critical)
    );
    assert!(
        dav.detail.contains("PROPFIND answered HTTP 207"),
        "{}",
        dav.detail
    );
    let user = get(&findings, "authentication:/ocs/v1.php/cloud/user");
    assert_eq!(
        (user.status, user.severity),
        (Status::Failed, Severity::High)
    );
}

#[test]
fn trace_echo_is_told_from_the_catch_all_page() {
    let mut m = real();
    assert_eq!(
        get(&evaluate(&m), "traceMethodDisabled").status,
        Status::Passed
    );
    m.http.insert(
        plan::TRACE.into(),
        Ok(Response {
            status: 200,
            headers: vec![("Content-Type".into(), "message/http".into())],
            body: b"TRACE / HTTP/1.1\r\nX-Cos-Trace-Probe: cos-trace-echo\r\n".to_vec(),
            truncated: false,
            digest: None,
        }),
    );
    assert_eq!(
        get(&evaluate(&m), "traceMethodDisabled").status,
        Status::Failed
    );
}

#[test]
fn reflected_origin_with_credentials_is_critical() {
    let mut m = real();
    m.http.insert(
        plan::CORS_GET.into(),
        Ok(Response {
            status: 200,
            headers: vec![
                (
                    "Access-Control-Allow-Origin".into(),
                    plan::FOREIGN_ORIGIN.into(),
                ),
                ("Access-Control-Allow-Credentials".into(), "true".into()),
            ],
            body: vec![],
            truncated: false,
            digest: None,
        }),
    );
    let f = get(&evaluate(&m), "corsOriginRestricted").clone();
    assert_eq!((f.status, f.severity), (Status::Failed, Severity::Critical));

    let mut m = real();
    m.http.remove(plan::CORS_PREFLIGHT);
    m.http.remove(plan::CORS_GET);
    m.http.insert(
        plan::CORS_GET.into(),
        Ok(fixture(&format!("{F}/cors-GET-evil-ocs-capabilities.txt"))),
    );
    assert_eq!(
        get(&evaluate(&m), "corsOriginRestricted").status,
        Status::Passed
    );
}

#[test]
fn version_like_values() {
    assert!(discloses_version("4.0.0"));
    assert!(discloses_version("nginx/1.25.3"));
    assert!(!discloses_version("nginx"));
    assert!(!discloses_version(""));
}
