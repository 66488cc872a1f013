//! The exposure checks judged against real answers of ownCloud Infinite Scale 7.0.0
//! (`tests/fixtures/ocis-7.0.0`): the web service's catch-all (`404 page not found`), the
//! deployment files, folder listings, the API paths' challenges to anonymous callers, TRACE,
//! CORS and the version headers. The measurements come from `checks::ocis_tests`.

use super::*;
use crate::checks::ocis_tests::{
    CATCH_ALL, get, ocis, ocis_anonymous_capture, ocis_bare, ocis_basic, ocis_default_run,
    ocis_exposed_capture,
};

/// The four `exposed-*.txt` captures, `root-GET.txt`, `TRACE-root.txt` and the baseline
/// (`index.html-GET.txt`) are one page, the web service's `404 page not found`; none is taken
/// for a deployment file. The API's 401s and the status document are other answers.
#[test]
fn ocis_catch_all_is_the_web_services_404() {
    let baseline = ocis(CATCH_ALL);
    assert_eq!(baseline.status, 404);
    assert_eq!(baseline.text(), "404 page not found\n");
    for (path, file) in [
        ("/ocis.yaml", "exposed-ocis.yaml.txt"),
        ("/.env", "exposed-dotenv.txt"),
        ("/proxy/server.key", "exposed-proxy-server.key.txt"),
        ("/.git/config", "exposed-git-config.txt"),
    ] {
        let answer = ocis(file);
        assert!(is_catch_all(&answer, Some(&baseline)), "{file}");
        assert!(!looks_like(path, &answer.body), "{file}");
    }
    for file in ["root-GET.txt", "TRACE-root.txt"] {
        assert!(is_catch_all(&ocis(file), Some(&baseline)), "{file}");
    }
    for file in [
        "graph-me-unauth.txt",
        "dav-files-unauth-PROPFIND.txt",
        "status.php.txt",
    ] {
        assert!(!is_catch_all(&ocis(file), Some(&baseline)), "{file}");
    }
}

/// Every deployment file of every family, the oCIS ones included, answered 404
/// (`exposed-*.txt`, the catch-all for paths without a capture): passed, saying so.
#[test]
fn ocis_exposed_files_pass_on_404() {
    let findings = evaluate(&ocis_default_run());
    let files = plan::exposed_files();
    for path in crate::family::ProductFamily::InfiniteScale
        .describe()
        .deployment_files
    {
        assert!(files.contains(path), "{path} is not probed");
    }
    for path in files {
        let f = get(&findings, &format!("exposed:{path}"));
        assert_eq!(
            (f.status, f.detail.as_str()),
            (Status::Passed, "answered HTTP 404"),
            "{path} ({})",
            ocis_exposed_capture(path)
        );
    }
}

/// The listing candidates answered with the catch-all (`index.html-GET.txt`): no listing.
#[test]
fn ocis_serves_no_folder_listing() {
    let f = get(&evaluate(&ocis_default_run()), "directoryListing").clone();
    assert_eq!(
        (f.status, f.detail.as_str()),
        (Status::Passed, "no folder listing is served")
    );
}

/// Default run: every API path answers anonymous callers 401 with a Bearer challenge
/// (`*-unauth*.txt`, see `ocis_anonymous_capture`): passed; lists and files critical, the
/// caller's own profile high.
#[test]
fn ocis_api_paths_refuse_anonymous_callers() {
    let m = ocis_default_run();
    for (key, _, _, _) in plan::AUTHENTICATION {
        let answer = m.answer(key).unwrap();
        assert_eq!(answer.status, 401, "{}", ocis_anonymous_capture(key));
        assert!(
            answer
                .header("www-authenticate")
                .is_some_and(|c| c.starts_with("Bearer ")),
            "{key}"
        );
    }
    let findings = evaluate(&m);
    for (path, severity) in [
        ("/remote.php/dav/files/", Severity::Critical),
        ("/remote.php/webdav/", Severity::Critical),
        ("/graph/v1.0/users", Severity::Critical),
        ("/graph/v1.0/me", Severity::High),
        ("/ocs/v1.php/cloud/users", Severity::Critical),
        ("/ocs/v1.php/cloud/user", Severity::High),
    ] {
        let f = get(&findings, &format!("authentication:{path}"));
        assert_eq!(
            (f.status, f.severity, f.detail.clone()),
            (
                Status::Passed,
                severity,
                format!("{path} refuses anonymous callers")
            ),
            "{path}"
        );
    }
}

/// `basic-auth-enabled/`: the anonymous answers carry a Basic challenge next to the Bearer
/// one (`dav-files-unauth-*.txt`, `graph-me-unauth.txt`, `ocs-v1-users-unauth.txt`) and are
/// still refusals.
#[test]
fn ocis_api_paths_refuse_anonymous_callers_with_basic_auth_enabled() {
    let mut m = ocis_bare();
    for (key, file) in [
        (
            "auth:GET /remote.php/dav/files/",
            "dav-files-unauth-GET.txt",
        ),
        (
            "auth:PROPFIND /remote.php/dav/files/",
            "dav-files-unauth-PROPFIND.txt",
        ),
        ("auth:GET /graph/v1.0/me", "graph-me-unauth.txt"),
        (
            "auth:GET /ocs/v1.php/cloud/users",
            "ocs-v1-users-unauth.txt",
        ),
    ] {
        let answer = ocis_basic(file);
        let challenges = answer.header_values("www-authenticate");
        assert!(
            challenges.iter().any(|c| c.starts_with("Basic ")),
            "{file}: {challenges:?}"
        );
        m.http.insert(key.into(), Ok(answer));
    }
    let findings: Vec<Finding> = evaluate(&m)
        .into_iter()
        .filter(|f| f.id.starts_with("authentication:"))
        .collect();
    assert_eq!(findings.len(), 3, "{findings:?}");
    for f in &findings {
        assert_eq!(f.status, Status::Passed, "{} {}", f.id, f.detail);
    }
}

/// What oCIS serves with a working credential (`basic-auth-enabled/`: einstein's PROPFIND, 207,
/// and his OCS profile, 200 JSON) fails the check were it served anonymously: the check tells
/// real oCIS answers apart.
#[test]
fn ocis_api_answers_served_without_sign_in_would_fail() {
    let mut m = ocis_default_run();
    m.http.insert(
        "auth:PROPFIND /remote.php/dav/files/".into(),
        Ok(ocis_basic("dav-files-basic-einstein-PROPFIND.txt")),
    );
    m.http.insert(
        "auth:GET /ocs/v1.php/cloud/user".into(),
        Ok(ocis_basic("ocs-v1-user-basic-einstein.txt")),
    );
    let findings = evaluate(&m);
    let dav = get(&findings, "authentication:/remote.php/dav/files/");
    assert_eq!(
        (dav.status, dav.severity, dav.detail.as_str()),
        (
            Status::Failed,
            Severity::Critical,
            "/remote.php/dav/files/: PROPFIND answered HTTP 207 without sign-in"
        )
    );
    let user = get(&findings, "authentication:/ocs/v1.php/cloud/user");
    assert_eq!(
        (user.status, user.severity),
        (Status::Failed, Severity::High)
    );
}

/// `TRACE-root.txt` (the web service's 404) and `TRACE-dav.txt` (401): no echo, passed.
#[test]
fn ocis_trace_is_not_echoed() {
    for (file, status) in [("TRACE-root.txt", 404), ("TRACE-dav.txt", 401)] {
        let mut m = ocis_default_run();
        m.http.insert(plan::TRACE.into(), Ok(ocis(file)));
        let f = get(&evaluate(&m), "traceMethodDisabled").clone();
        assert_eq!(
            (f.status, f.detail),
            (
                Status::Passed,
                format!("TRACE / answered HTTP {status} without an echo")
            ),
            "{file}"
        );
    }
}

/// The probe's preflight as browsers send it (`cors-preflight-evil-graph-me-lcheaders.txt`:
/// `Access-Control-Allow-Origin: *` with `Allow-Credentials: true`, Graph's default) and the
/// anonymous GET (`cors-GET-evil-graph-me.txt`, 401 without CORS headers): `*` is public
/// access, passed.
#[test]
fn ocis_graph_cors_wildcard_passes_as_public_access() {
    let m = ocis_default_run();
    let preflight = m.answer(plan::CORS_PREFLIGHT).unwrap();
    assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        preflight.header("access-control-allow-credentials"),
        Some("true")
    );
    let f = get(&evaluate(&m), "corsOriginRestricted").clone();
    assert_eq!(f.status, Status::Passed, "{}", f.detail);
    assert!(
        f.detail.contains("Access-Control-Allow-Origin: *")
            && f.detail.contains("never send credentials"),
        "{}",
        f.detail
    );
}

/// Every other real CORS answer: the wildcard ones (no request headers, the instance's own
/// origin, a signed-in GET by Bearer token or basic auth) pass as public access; those that
/// grant a foreign origin nothing (capitalised `Authorization`, DAV, OCS, `/`, status.php,
/// the allowed origin with basic auth on) pass as such.
#[test]
fn ocis_cors_answers_grant_no_foreign_origin() {
    let wildcard = [
        ocis("cors-preflight-evil-graph-me-noreqheaders.txt"),
        ocis("cors-preflight-allowed-origin-graph-me-lcheaders.txt"),
        ocis("cors-GET-evil-graph-me-bearer.txt"),
        ocis_basic("cors-GET-evil-graph-me-basic.txt"),
    ];
    let nothing = [
        ocis("cors-preflight-evil-graph-me.txt"),
        ocis("cors-preflight-evil-dav.txt"),
        ocis("cors-preflight-evil-dav-lcheaders.txt"),
        ocis("cors-preflight-evil-ocs-capabilities.txt"),
        ocis("cors-preflight-evil-ocs-capabilities-lcheaders.txt"),
        ocis("cors-preflight-evil-ocs-users-lcheaders.txt"),
        ocis("cors-preflight-evil-root.txt"),
        ocis("cors-preflight-evil-root-lcheaders.txt"),
        ocis("cors-GET-evil-ocs-capabilities.txt"),
        ocis("cors-GET-evil-status.php.txt"),
        ocis_basic("cors-preflight-allowed-origin-graph-me.txt"),
    ];
    let judged = |answer: &Response| {
        let mut m = ocis_default_run();
        m.http
            .insert(plan::CORS_PREFLIGHT.into(), Ok(answer.clone()));
        get(&evaluate(&m), "corsOriginRestricted").clone()
    };
    for answer in &wildcard {
        let f = judged(answer);
        assert_eq!(f.status, Status::Passed, "{}", f.detail);
        assert!(f.detail.contains("allows any origin"), "{}", f.detail);
    }
    for answer in &nothing {
        assert_eq!(answer.header("access-control-allow-origin"), None);
        let f = judged(answer);
        assert_eq!(
            (f.status, f.detail.as_str()),
            (Status::Passed, "a foreign origin gets no CORS permission")
        );
    }
}

/// The web, Graph and IDP services each name the release in a header (`root-GET.txt`,
/// `cors-preflight-evil-graph-me-lcheaders.txt`, `login-idp-logon-einstein-demo.txt`): one
/// low failure each, and no other.
#[test]
fn ocis_discloses_its_version_in_headers() {
    let findings = evaluate(&ocis_default_run());
    let disclosed: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.id.starts_with("versionDisclosure"))
        .collect();
    assert_eq!(disclosed.len(), 3, "{disclosed:?}");
    for name in ["X-Graph-Version", "X-Idp-Version", "X-Web-Version"] {
        let f = get(&findings, &format!("versionDisclosure:{name}"));
        assert_eq!(
            (f.status, f.severity, f.detail.clone()),
            (
                Status::Failed,
                Severity::Low,
                format!("{name}: 7.0.0+860e1ad9")
            )
        );
    }
}
