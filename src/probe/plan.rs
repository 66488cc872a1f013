//! The probe plan: every HTTP request a scan sends, keyed so the pure checks can find the
//! answers. The keys are the probes' own: the checks name the findings.

use super::Observation;
use crate::capped;
use crate::family::{DemoAccount, ProductFamily};
use crate::net::http::{Endpoint, Keep, Scheme};

pub const CAPABILITIES: &str = "capabilities";
pub const ROOT: &str = "root";
/// A path that cannot exist: what the server answers for it is the catch-all page that every
/// "exposed" answer is compared against.
pub const BASELINE: &str = "baseline";
pub const OIDC: &str = "oidc";
pub const TRACE: &str = "trace";
pub const CORS_PREFLIGHT: &str = "cors:preflight";
pub const CORS_GET: &str = "cors:get";

/// Key prefixes of the probes sent once per item: `<prefix><item>` (`file:/.env`,
/// `debugPath:/config`).
pub const EXPOSED: &str = "file:";
pub const LISTING: &str = "listing:";
/// The anonymous API calls of [`AUTHENTICATION`] (`auth:<method> <path>`).
pub const AUTH: &str = "auth:";
/// Debug handlers on the public address.
pub const PUBLIC_DEBUG: &str = "debugPath:";
/// The family's demo accounts' sign-ins (`demo:<user>`).
pub const DEMO: &str = "demo:";
/// The first demo account's credentials over basic auth (`basic:<user>`).
pub const BASIC: &str = "basic:";
/// The failed sign-ins of `--login-throttling` (`throttle:1` ..).
pub const THROTTLE: &str = "throttle:";

/// The origin the CORS probes claim; `.invalid` can never resolve (RFC 2606).
pub const FOREIGN_ORIGIN: &str = "https://cos-probe.invalid";
/// Sent with TRACE so an echo can be told from a catch-all page.
pub const TRACE_MARKER_HEADER: &str = "X-Cos-Trace-Probe";

/// The anonymous API calls as (key, method, path sent, path judged): `($method, $path)`, or
/// with a query sent but not part of the key and the judged path. The key is
/// `auth:<method> <path>`, derived so key and path cannot disagree.
macro_rules! anonymous_calls {
    ($(($method:literal, $path:literal $(, $query:literal)?)),* $(,)?) => {
        &[$((
            concat!("auth:", $method, " ", $path),
            $method,
            concat!($path $(, $query)?),
            $path,
        )),*]
    };
}

/// Endpoints that must refuse anonymous callers: (key, method, path sent, path judged).
pub const AUTHENTICATION: &[(&str, &str, &str, &str)] = anonymous_calls![
    ("GET", "/remote.php/dav/files/"),
    ("PROPFIND", "/remote.php/dav/files/"),
    ("GET", "/remote.php/webdav/"),
    ("GET", "/graph/v1.0/users"),
    ("GET", "/graph/v1.0/me"),
    ("GET", "/ocs/v1.php/cloud/users", "?format=json"),
    ("GET", "/ocs/v1.php/cloud/user", "?format=json"),
];

/// Files of any deployment that must never be served, besides the families' own
/// (`Family::deployment_files`).
pub const COMMON_EXPOSED_FILES: &[&str] = &[
    "/proxy/server.key",
    "/.env",
    "/docker-compose.yml",
    "/.git/config",
];

/// Files that must never be served: every family's deployment files (an instance migrated
/// from one family keeps the other's file), then the common ones. Their probe key is the
/// finding id `exposed:<path>`.
pub fn exposed_files() -> Vec<&'static str> {
    let mut files = ProductFamily::all_deployment_files();
    files.extend_from_slice(COMMON_EXPOSED_FILES);
    files
}

/// Folders a misconfigured web server might list.
pub const LISTING_CANDIDATES: &[&str] = &["/data/", "/storage/users/", "/idm/", "/proxy/"];

/// Debug handlers that must not be reachable on the public address: key `debugEndpoint:<path>`.
pub const PUBLIC_DEBUG_PATHS: &[&str] = &["/metrics", "/config", "/debug/pprof/"];

/// The built-in identity provider's sign-in call.
pub const LOGON_PATH: &str = "/signin/v1/identifier/_/logon";

// What each probe keeps of its answer's body (`Keep`). Every body is read up to 1 MiB for its
// length and SHA-256 whatever the keep, so answers compare like with like; only the kept bytes
// stay in memory, and a scan holds the answers of about 40 probes until its checks ran. The
// budgets are many times the real OpenCloud 4.0.0 answers (`tests/fixtures/opencloud-4.0.0`,
// `shared/fixtures/opencloud-real/4.0.0`), given in brackets, and at least what the checks read.

/// `/status.php`: its own probe's (`status`).
pub use super::status::KEEP_STATUS;
/// The v1 capabilities document, parsed whole and kept as a tree [3.3 KiB].
pub const KEEP_CAPABILITIES: Keep = Keep::Document(64 * 1024);
/// The identity provider's discovery document, parsed whole [1.8 KiB; Keycloak's about 7 KiB].
pub const KEEP_DISCOVERY: Keep = Keep::Document(64 * 1024);
/// A sign-in answer or `/graph/v1.0/me` with credentials: JSON read whole for `success` or
/// its validity [335 bytes; `/me` about 500].
pub const KEEP_SIGN_IN: Keep = Keep::Document(16 * 1024);
/// A deployment file, recognised by its first lines (a PEM block, `KEY=value`, `[core]`, a YAML
/// key, a NUL byte of a bolt database's first page) [files a few KiB].
pub const KEEP_EXPOSED_FILE: Keep = Keep::Prefix(16 * 1024);
/// A folder listing, recognised by its title or first heading.
pub const KEEP_LISTING: Keep = Keep::Prefix(8 * 1024);
/// An API answer judged by its status, and by whether it is an HTML page (its first 512 bytes).
pub const KEEP_HTML_SNIFF: Keep = Keep::Prefix(512);
/// An answer to TRACE: an echo names our marker header among the request's headers.
pub const KEEP_TRACE: Keep = Keep::Prefix(16 * 1024);
/// Plain HTTP on `/`: Go's and nginx's "HTTP request to an HTTPS port" text (its first 4 KiB).
pub const KEEP_PLAIN_HTTP: Keep = Keep::Prefix(4096);
/// `/config` of a debug listener: JSON, parsed whole when it fits, else its key/value pairs
/// read from the part kept [11 KiB, the clear-text secret at 10 KiB].
pub const KEEP_CONFIG_DUMP: Keep = Keep::Prefix(128 * 1024);
/// `/metrics` (Prometheus text: `# HELP` / `# TYPE` lines) and the pprof index [2.8 KiB for
/// the first 50 lines of metrics; the index 1 KiB].
pub const KEEP_DEBUG_TEXT: Keep = Keep::Prefix(16 * 1024);

/// The keep of a debug handler's answer, on a debug port or the public address.
pub fn debug_path_keep(path: &str) -> Keep {
    match path {
        "/config" => KEEP_CONFIG_DUMP,
        "/metrics" | "/debug/pprof/" => KEEP_DEBUG_TEXT,
        // `/healthz`, `/readyz`: `OK`, or an HTML page that is not a debug handler.
        _ => KEEP_HTML_SNIFF,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpProbe {
    pub key: String,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// What the probe keeps of the answer's body: what its checks read, no more.
    pub keep: Keep,
}

impl HttpProbe {
    fn new(key: &str, method: &str, path: &str, keep: Keep) -> HttpProbe {
        HttpProbe {
            key: key.to_string(),
            method: method.to_string(),
            path: path.to_string(),
            headers: Vec::new(),
            body: None,
            keep,
        }
    }

    fn header(mut self, name: &str, value: &str) -> HttpProbe {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// A path no instance serves, different on every scan so no cache answers it.
pub fn baseline_path() -> String {
    use sha2::Digest;
    let seed = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
    let digest = sha2::Sha256::digest(seed.as_bytes());
    format!("/cos-baseline-{}", crate::text::hex(&digest[..8]))
}

/// Probes that need nothing but the transport, in the order they are sent.
pub fn independent(extra_checks: bool) -> Vec<HttpProbe> {
    let core = [
        HttpProbe::new(
            CAPABILITIES,
            "GET",
            super::status::CAPABILITIES_PATH,
            KEEP_CAPABILITIES,
        ),
        // Its headers are what a browser gets; no check reads its page.
        HttpProbe::new(ROOT, "GET", "/", Keep::DigestOnly),
    ];
    if !extra_checks {
        return core.to_vec();
    }
    // The discovery document first: the demo sign-ins wait for its answer.
    let mut probes = vec![HttpProbe::new(
        OIDC,
        "GET",
        "/.well-known/openid-configuration",
        KEEP_DISCOVERY,
    )];
    probes.extend(core);
    probes.extend([
        // Compared with other answers by length and digest only.
        HttpProbe::new(BASELINE, "GET", &baseline_path(), Keep::DigestOnly),
        HttpProbe::new(TRACE, "TRACE", "/", KEEP_TRACE)
            .header(TRACE_MARKER_HEADER, "cos-trace-echo"),
        // CORS is in the headers.
        HttpProbe::new(
            CORS_PREFLIGHT,
            "OPTIONS",
            "/graph/v1.0/me",
            Keep::DigestOnly,
        )
        .header("Origin", FOREIGN_ORIGIN)
        .header("Access-Control-Request-Method", "GET")
        .header("Access-Control-Request-Headers", "authorization"),
        HttpProbe::new(CORS_GET, "GET", "/graph/v1.0/me", Keep::DigestOnly)
            .header("Origin", FOREIGN_ORIGIN),
    ]);
    for (key, method, path, _) in AUTHENTICATION {
        let mut probe = HttpProbe::new(key, method, path, KEEP_HTML_SNIFF);
        if *method == "PROPFIND" {
            probe = probe.header("Depth", "0");
        }
        probes.push(probe);
    }
    // One GET per path, keyed `<prefix><path>`.
    let per_path = |prefix: &str, paths: &[&str], keep: fn(&str) -> Keep| {
        paths
            .iter()
            .map(|path| HttpProbe::new(&format!("{prefix}{path}"), "GET", path, keep(path)))
            .collect::<Vec<_>>()
    };
    probes.extend(per_path(EXPOSED, &exposed_files(), |_| KEEP_EXPOSED_FILE));
    probes.extend(per_path(LISTING, LISTING_CANDIDATES, |_| KEEP_LISTING));
    probes.extend(per_path(PUBLIC_DEBUG, PUBLIC_DEBUG_PATHS, debug_path_keep));
    probes
}

/// The members of the discovery document the checks read: the issuer, then the endpoints that
/// must share its origin.
const DISCOVERY_MEMBERS: [&str; 6] = [
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "userinfo_endpoint",
    "jwks_uri",
    "end_session_endpoint",
];

/// What the checks read of the identity provider's discovery document: its issuer and
/// endpoints, each a string or absent (any other JSON type reads as absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discovery {
    pub issuer: Option<String>,
    /// In the order of `DISCOVERY_MEMBERS`.
    endpoints: [Option<String>; 5],
}

impl Discovery {
    /// The endpoints that must share the issuer's origin, by member name.
    pub fn endpoints(&self) -> impl Iterator<Item = (&'static str, Option<&str>)> {
        let values = self.endpoints.iter().map(Option::as_deref);
        DISCOVERY_MEMBERS[1..].iter().copied().zip(values)
    }

    fn authorization_endpoint(&self) -> Option<&str> {
        self.endpoints[0].as_deref()
    }
}

/// Reads a discovery document member by member, skipping what no check reads, so a hostile
/// one never becomes a tree. `None` when the body is not JSON; all members absent when it is
/// JSON but not an object.
pub fn parse_discovery(body: &[u8]) -> Option<Discovery> {
    let [issuer, endpoints @ ..] =
        capped::json_members::<capped::Text, 6>(body, DISCOVERY_MEMBERS)?;
    Some(Discovery {
        issuer: issuer.0,
        endpoints: endpoints.map(|e| e.0),
    })
}

/// Whether the discovery document names the instance's built-in identity provider (lico under
/// `/signin/v1/`), the only one demo accounts are tried against.
pub fn builtin_identity_provider(oidc: Option<&Observation>) -> bool {
    let Some(Ok(response)) = oidc else {
        return false;
    };
    if response.status != 200 {
        return false;
    }
    parse_discovery(&response.body).is_some_and(|d| {
        d.authorization_endpoint()
            .is_some_and(|e| e.contains("/signin/v1/identifier/"))
    })
}

/// Probes that depend on the discovery document's answer: the family's demo sign-ins (built-in
/// identity provider only) and the first account's credentials over basic auth, which
/// decides `basicAuthDisabled` for real.
pub fn dependent(
    endpoint: &Endpoint,
    discovery: Option<&Observation>,
    family: ProductFamily,
) -> Vec<HttpProbe> {
    if !builtin_identity_provider(discovery) {
        return Vec::new();
    }
    let mut probes = demo_sign_ins(endpoint, family);
    let DemoAccount { user, password, .. } = family.describe().demo_accounts[0];
    let credentials = crate::text::base64(format!("{user}:{password}").as_bytes());
    probes.push(
        HttpProbe::new(
            &format!("{BASIC}{user}"),
            "GET",
            "/graph/v1.0/me",
            KEEP_SIGN_IN,
        )
        .header("Authorization", &format!("Basic {credentials}")),
    );
    probes
}

/// One sign-in call to the built-in identity provider, as its web login sends it.
fn sign_in(
    key: &str,
    endpoint: &Endpoint,
    user: &str,
    password: &str,
    state: &str,
    keep: Keep,
) -> HttpProbe {
    let origin = endpoint.origin();
    let body = serde_json::json!({
        "params": [user, password, "1"],
        "hello": {
            "scope": "openid profile email",
            "client_id": "web",
            "redirect_uri": format!("{origin}/oidc-callback.html"),
            "flow": "oidc",
        },
        "state": state,
    });
    let mut probe = HttpProbe::new(key, "POST", LOGON_PATH, keep)
        .header("Content-Type", "application/json")
        .header("Kopano-Konnect-XSRF", "1")
        .header("Origin", &origin)
        .header("Referer", &format!("{origin}/signin/v1/identifier"));
    probe.body = Some(body.to_string().into_bytes());
    probe
}

/// The family's published demo accounts' sign-ins, keyed `demo:<user>`.
pub fn demo_sign_ins(endpoint: &Endpoint, family: ProductFamily) -> Vec<HttpProbe> {
    family
        .describe()
        .demo_accounts
        .iter()
        .map(|DemoAccount { user, password, .. }| {
            sign_in(
                &format!("{DEMO}{user}"),
                endpoint,
                user,
                password,
                "cos-demo-check",
                KEEP_SIGN_IN,
            )
        })
        .collect()
}

/// The keys of each family's first demo account's sign-in: the account whose credentials
/// [`dependent`] tries over basic auth.
pub fn first_demo_sign_ins() -> Vec<String> {
    ProductFamily::ALL
        .iter()
        .map(|f| format!("{DEMO}{}", f.describe().demo_accounts[0].user))
        .collect()
}

/// Whether an answer of the sign-in call is a successful sign-in (200 with `success: true`).
pub fn is_successful_sign_in(response: &crate::net::http::Response) -> bool {
    response.status == 200
        && capped::json_members::<capped::Flag, 1>(&response.body, ["success"])
            .is_some_and(|[success]| success.0 == Some(true))
}

/// How many failed sign-ins `--login-throttling` sends.
pub const THROTTLING_ATTEMPTS: usize = 6;

/// Six failed sign-ins for an account that cannot exist, keyed `throttle:1` .. `throttle:6`.
pub fn throttling(endpoint: &Endpoint) -> Vec<HttpProbe> {
    let user = format!(
        "cos-no-such-user{}",
        &baseline_path()["/cos-baseline-".len()..]
    );
    (1..=THROTTLING_ATTEMPTS)
        .map(|n| {
            sign_in(
                &format!("{THROTTLE}{n}"),
                endpoint,
                &user,
                "cos-wrong-password",
                &format!("cos-throttle-{n}"),
                // Throttling shows in the status and headers.
                Keep::DigestOnly,
            )
        })
        .collect()
}

impl Endpoint {
    /// The browser origin of the endpoint (default ports left out, as browsers do).
    pub fn origin(&self) -> String {
        let default = matches!(
            (self.scheme, self.port),
            (Scheme::Https, 443) | (Scheme::Http, 80)
        );
        if default {
            format!("{}://{}", self.scheme.as_str(), self.url_host)
        } else {
            format!("{}://{}:{}", self.scheme.as_str(), self.url_host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_paths_differ_and_look_random() {
        let a = baseline_path();
        assert!(a.starts_with("/cos-baseline-") && a.len() == "/cos-baseline-".len() + 16);
    }

    #[test]
    fn origins_leave_default_ports_out() {
        let mut e = Endpoint {
            scheme: Scheme::Https,
            url_host: "c.example".into(),
            port: 443,
            base_path: String::new(),
        };
        assert_eq!(e.origin(), "https://c.example");
        e.port = 9200;
        assert_eq!(e.origin(), "https://c.example:9200");
    }

    /// The keep of the probe a captured answer answers, by the capture's file name; `None`
    /// for captures no probe asks for, or whose probe keeps no byte.
    fn keep_of_capture(name: &str) -> Option<Keep> {
        let debug = |what: &str| name.contains("debug/") && name.contains(what);
        let keep = if debug("config") {
            debug_path_keep("/config")
        } else if debug("metrics") {
            debug_path_keep("/metrics")
        } else if debug("pprof") {
            debug_path_keep("/debug/pprof/")
        } else if debug("healthz") || debug("readyz") {
            debug_path_keep("/healthz")
        } else if name.ends_with("status.php.txt") {
            KEEP_STATUS
        } else if name.contains("ocs-v1-capabilities") && !name.contains("xml") {
            KEEP_CAPABILITIES
        } else if name.contains("openid-configuration") {
            KEEP_DISCOVERY
        } else if name.contains("login-idp-logon") || name.contains("graph-me-basic") {
            KEEP_SIGN_IN
        } else if name.contains("exposed-") {
            KEEP_EXPOSED_FILE
        } else if name.contains("TRACE-") {
            KEEP_TRACE
        } else if name.contains("http-plain-to-tls-port") {
            KEEP_PLAIN_HTTP
        } else if let Some(path) = name.split("public-").nth(1) {
            debug_path_keep(&format!("/{}", path.replace(".txt", "")))
        } else if (name.contains("-unauth") && !name.contains("capabilities"))
            || name.contains("PROPFIND")
        {
            // The anonymous API calls: judged by status and an HTML sniff.
            KEEP_HTML_SNIFF
        } else {
            return None;
        };
        Some(keep)
    }

    #[test]
    fn real_answers_fit_the_keep_of_their_probe() {
        // Captured answers of real OpenCloud and oCIS instances, each whole within what its
        // probe keeps: the checks see them exactly as they did when every body was kept.
        let mut names: Vec<String> = Vec::new();
        for dir in [
            "opencloud-4.0.0",
            "opencloud-4.0.0/debug",
            "ocis-7.0.0",
            "ocis-7.0.0/debug",
        ] {
            let path = format!("{}/tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
            for entry in std::fs::read_dir(&path).unwrap() {
                let file = entry.unwrap().file_name().to_string_lossy().into_owned();
                if file.ends_with(".txt") && !file.starts_with("tls") && !file.starts_with("ss-") {
                    names.push(format!("{dir}/{file}"));
                }
            }
        }
        assert!(names.len() > 100, "{}", names.len());
        let mut checked = 0;
        for name in &names {
            let Some(keep) = keep_of_capture(name) else {
                continue;
            };
            checked += 1;
            let body = super::super::fixture(name).body;
            assert!(
                body.len() <= keep.budget(),
                "{name}: {} bytes, but its probe keeps {keep:?}",
                body.len()
            );
        }
        assert!(checked > 150, "{checked} captures checked");
    }

    #[test]
    fn every_probe_states_its_keep() {
        let endpoint = Endpoint {
            scheme: Scheme::Https,
            url_host: "c.example".into(),
            port: 443,
            base_path: String::new(),
        };
        let mut probes = independent(true);
        for family in ProductFamily::ALL {
            probes.extend(demo_sign_ins(&endpoint, family));
        }
        probes.extend(throttling(&endpoint));
        for probe in &probes {
            let expected = match probe.key.split(':').next().unwrap_or("") {
                "capabilities" => KEEP_CAPABILITIES,
                "oidc" => KEEP_DISCOVERY,
                "root" | "baseline" | "cors" | "throttle" => Keep::DigestOnly,
                "trace" => KEEP_TRACE,
                "auth" => KEEP_HTML_SNIFF,
                "file" => KEEP_EXPOSED_FILE,
                "listing" => KEEP_LISTING,
                "debugPath" => debug_path_keep(&probe.path),
                "demo" => KEEP_SIGN_IN,
                other => panic!("probe {other} not covered here: state its keep"),
            };
            assert_eq!(probe.keep, expected, "{}", probe.key);
        }
    }

    #[test]
    fn documents_read_member_by_member_as_they_were_read_whole() {
        let tree = |body: &[u8]| serde_json::from_slice::<serde_json::Value>(body).ok();
        let mut bodies: Vec<Vec<u8>> = [
            "opencloud-4.0.0/well-known-openid-configuration.txt",
            "ocis-7.0.0/openid-configuration.txt",
            "opencloud-4.0.0/login-idp-logon-dennis-demo.txt",
            "opencloud-4.0.0/login-idp-logon-dennis-wrong.txt",
            "ocis-7.0.0/login-idp-logon-einstein-demo.txt",
            "opencloud-4.0.0/random-nonexistent-path.txt",
        ]
        .iter()
        .map(|name| super::super::fixture(name).body)
        .collect();
        bodies.extend(
            [
                r#"{"issuer": "https://a", "issuer": "https://b", "jwks_uri": 5}"#,
                r#"{"issuer": ["https://a"], "authorization_endpoint": "/signin/v1/identifier/x"}"#,
                r#"{"success": true, "success": false}"#,
                r#"{"success": false, "success": true, "x": [[{"y": {}}]]}"#,
                r#"{"success": "true"}"#,
                r#"[{"success": true}]"#,
                r#"{"success": true} x"#,
                r#"null"#,
                "",
            ]
            .iter()
            .map(|t| t.as_bytes().to_vec()),
        );
        for body in &bodies {
            let text = String::from_utf8_lossy(body);
            let whole = tree(body);
            let member = |key: &str| {
                whole
                    .as_ref()
                    .and_then(|d| d[key].as_str().map(str::to_string))
            };
            let discovery = parse_discovery(body);
            assert_eq!(discovery.is_some(), whole.is_some(), "{text}");
            if let Some(d) = &discovery {
                assert_eq!(d.issuer, member("issuer"), "{text}");
                for (key, value) in d.endpoints() {
                    assert_eq!(value.map(str::to_string), member(key), "{text}");
                }
            }
            let answer = crate::net::http::Response {
                status: 200,
                body: body.clone(),
                ..Default::default()
            };
            assert_eq!(
                is_successful_sign_in(&answer),
                whole.is_some_and(|d| d["success"].as_bool() == Some(true)),
                "{text}"
            );
        }
    }

    #[test]
    fn authentication_keys_carry_their_prefix() {
        for (key, method, path, _) in AUTHENTICATION {
            let path = path.split('?').next().unwrap_or_default();
            assert_eq!(*key, format!("{AUTH}{method} {path}"));
        }
    }

    #[test]
    fn keys_are_unique() {
        let probes = independent(true);
        let mut keys: Vec<&str> = probes.iter().map(|p| p.key.as_str()).collect();
        keys.sort();
        let before = keys.len();
        keys.dedup();
        assert_eq!(before, keys.len());
    }
}
