//! Unit tests of `debug`.

use super::*;
use crate::net::HttpsObservation;
use crate::net::http::{Endpoint, FetchError, Scheme};
use crate::probe::fixture;
use std::net::SocketAddr;
use std::time::Duration;

const DEBUG_4: &str = "opencloud-4.0.0/debug";
const VARIANT_37: &str = "opencloud-3.7.0-variant";

fn measurements() -> Measurements {
    let endpoint = Endpoint {
        scheme: Scheme::Https,
        url_host: "cloud.example".into(),
        port: 443,
        base_path: String::new(),
    };
    Measurements::empty(endpoint, HttpsObservation::Unavailable("x".into()))
}

fn answer(path: &str, response: Response) -> DebugAnswer {
    DebugAnswer {
        path: path.into(),
        answer: Ok(response),
        transient: false,
    }
}

fn failure(path: &str, message: &str, transient: bool) -> DebugAnswer {
    DebugAnswer {
        path: path.into(),
        answer: Err(message.into()),
        transient,
    }
}

fn port(n: u16, state: PortState, endpoints: Vec<DebugAnswer>) -> DebugPort {
    let open = state == PortState::Open;
    DebugPort {
        port: n,
        state,
        endpoints,
        address: open.then(|| SocketAddr::from(([192, 0, 2, 10], n))),
        connect_timeout: Duration::from_secs(3),
    }
}

/// The real proxy debug listener of OpenCloud 4.0.0 (9205), pprof off.
fn proxy_4_0_0() -> DebugPort {
    port(
        9205,
        PortState::Open,
        vec![
            answer("/healthz", fixture(&format!("{DEBUG_4}/9205-healthz.txt"))),
            answer("/readyz", fixture(&format!("{DEBUG_4}/9205-readyz.txt"))),
            answer(
                "/metrics",
                fixture(&format!("{DEBUG_4}/9205-metrics-head50.txt")),
            ),
            answer("/config", fixture(&format!("{DEBUG_4}/9205-config.txt"))),
            answer(
                "/debug/pprof/",
                fixture(&format!("{DEBUG_4}/9205-debug-pprof.txt")),
            ),
        ],
    )
}

/// The real 3.7.0 proxy debug listener with a debug token and pprof on.
fn proxy_3_7_0_token_pprof() -> DebugPort {
    port(
        9205,
        PortState::Open,
        vec![
            answer(
                "/healthz",
                fixture(&format!("{VARIANT_37}/9205-healthz.txt")),
            ),
            answer(
                "/metrics",
                fixture(&format!("{VARIANT_37}/9205-metrics-no-token.txt")),
            ),
            answer(
                "/config",
                fixture(&format!("{VARIANT_37}/9205-config-no-token-first1500B.txt")),
            ),
            answer(
                "/debug/pprof/",
                fixture(&format!("{VARIANT_37}/9205-debug-pprof-no-token.txt")),
            ),
        ],
    )
}

/// The web service's own HTTP port (9100): the web app page for every path.
fn web_port_9100() -> DebugPort {
    let paths = [
        ("/healthz", "9100-healthz.txt"),
        ("/readyz", "9100-readyz.txt"),
        ("/metrics", "9100-metrics-head50.txt"),
        ("/config", "9100-config.txt"),
        ("/debug/pprof/", "9100-debug-pprof.txt"),
    ];
    port(
        9100,
        PortState::Open,
        paths
            .iter()
            .map(|(p, f)| answer(p, fixture(&format!("{DEBUG_4}/{f}"))))
            .collect(),
    )
}

fn with_ports(ports: Vec<DebugPort>) -> Measurements {
    let mut m = measurements();
    m.debug_ports = Some(ports);
    m
}

fn get<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no finding {id} in {findings:#?}"))
}

#[test]
fn registry_rows_resolve_the_families() {
    let port = super::super::spec("debugPort:9205").unwrap();
    assert_eq!(port.id, "debugPort");
    assert_eq!(port.severity, Severity::High);
    assert_eq!(port.category, crate::report::Category::Exposure);
    assert!(port.remediation.contains("PROXY_DEBUG_ADDR=127.0.0.1:9205"));
    let endpoint = super::super::spec("debugEndpoint:9205/config").unwrap();
    assert_eq!(endpoint.id, "debugEndpoint");
    assert_eq!(
        super::super::spec("debugEndpoint:/metrics").unwrap().id,
        "debugEndpoint"
    );
    assert!(endpoint.remediation.contains("OC_SERVICE_ACCOUNT_SECRET"));
    for row in ROWS {
        assert_eq!(row.fixed_in, INSTANCE);
        assert!(row.verifiable());
        assert_eq!(row.documentation, PROXY_DOCS);
        assert_eq!(row.role, Role::Check);
    }
}

#[test]
fn the_real_proxy_debug_listener_fails() {
    let findings = evaluate(&with_ports(vec![proxy_4_0_0()]));
    let port = get(&findings, "debugPort:9205");
    assert_eq!(port.status, Status::Failed);
    assert_eq!(port.severity, Severity::High);
    assert!(port.detail.contains("(proxy 4.0.0)"), "{}", port.detail);
    assert!(port.detail.contains("/healthz 200 OK"), "{}", port.detail);
    assert!(
        port.detail.contains("/metrics Prometheus text"),
        "{}",
        port.detail
    );
    assert!(port.detail.contains("192.0.2.10:9205"), "{}", port.detail);
    assert!(
        port.detail.contains("X-Proxy-Version: 4.0.0 on /healthz"),
        "{}",
        port.detail
    );

    let config = get(&findings, "debugEndpoint:9205/config");
    assert_eq!(config.status, Status::Failed);
    assert_eq!(config.severity, Severity::Critical);
    assert!(
        config
            .detail
            .contains("ServiceAccount.ServiceAccountSecret"),
        "{}",
        config.detail
    );
    // URLSigningSecret is in clear text in the capture too.
    assert!(
        config.detail.contains("Commons.URLSigningSecret"),
        "{}",
        config.detail
    );
    assert!(
        !config.detail.contains("JWTSecret"),
        "masked: {}",
        config.detail
    );
    assert!(
        !config.detail.contains("TLSKey"),
        "a file path: {}",
        config.detail
    );
    // Never the values themselves.
    assert!(!config.detail.contains("REDACTED"), "{}", config.detail);
    assert!(!config.detail.contains("e@YVL"), "{}", config.detail);

    let metrics = get(&findings, "debugEndpoint:9205/metrics");
    assert_eq!(metrics.status, Status::Failed);
    assert_eq!(metrics.severity, Severity::Medium);

    let pprof = get(&findings, "debugEndpoint:9205/debug/pprof/");
    assert_eq!(pprof.status, Status::Passed, "pprof is off: 404");
    assert_eq!(pprof.severity, Severity::High);
    assert!(pprof.detail.contains("answers 404"), "{}", pprof.detail);

    let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "debugPort:9205",
            "debugEndpoint:9205/config",
            "debugEndpoint:9205/metrics",
            "debugEndpoint:9205/debug/pprof/"
        ]
    );
    assert!(findings.iter().all(|f| f.role == Role::Check && f.counts));
}

#[test]
fn a_debug_token_protects_only_metrics() {
    let findings = evaluate(&with_ports(vec![proxy_3_7_0_token_pprof()]));
    assert_eq!(get(&findings, "debugPort:9205").status, Status::Failed);
    let metrics = get(&findings, "debugEndpoint:9205/metrics");
    assert_eq!(metrics.status, Status::Passed);
    assert_eq!(metrics.severity, Severity::Medium);
    assert!(
        metrics.detail.contains("requires authentication (401)"),
        "{}",
        metrics.detail
    );
    // The capture is cut at 1500 bytes and shows masked secrets only.
    let config = get(&findings, "debugEndpoint:9205/config");
    assert_eq!(config.status, Status::Failed);
    assert_eq!(config.severity, Severity::High);
    assert!(
        config.detail.contains("in the part that could be read"),
        "{}",
        config.detail
    );
    let pprof = get(&findings, "debugEndpoint:9205/debug/pprof/");
    assert_eq!(pprof.status, Status::Failed);
    assert_eq!(pprof.severity, Severity::High);
}

#[test]
fn the_ocis_proxy_debug_listener_leaks_too() {
    let dir = "ocis-7.0.0/debug";
    let p = port(
        9205,
        PortState::Open,
        vec![
            answer(
                "/healthz",
                fixture(&format!("{dir}/proxy-9205-healthz.txt")),
            ),
            answer("/config", fixture(&format!("{dir}/proxy-9205-config.txt"))),
        ],
    );
    let findings = evaluate(&with_ports(vec![p]));
    assert!(
        get(&findings, "debugPort:9205")
            .detail
            .contains("proxy 7.0.0")
    );
    let config = get(&findings, "debugEndpoint:9205/config");
    assert_eq!(config.severity, Severity::Critical);
    assert!(
        config
            .detail
            .contains("ServiceAccount.ServiceAccountSecret")
    );
    assert!(!config.detail.contains("FAKE-cleartext"));
}

#[test]
fn another_service_on_the_port_is_not_a_finding() {
    // The web service's port sends X-Web-Version, but on its HTML page.
    let findings = evaluate(&with_ports(vec![web_port_9100()]));
    let port = get(&findings, "debugPort:9100");
    assert_eq!(port.status, Status::Passed);
    assert!(
        port.detail
            .contains("does not answer like a debug listener (another service may use it)"),
        "{}",
        port.detail
    );
    for path in JUDGED_PATHS {
        let f = get(&findings, &format!("debugEndpoint:9100{path}"));
        assert_eq!(f.status, Status::Passed, "{}", f.detail);
    }
}

#[test]
fn a_port_that_speaks_no_http_passes_and_a_silent_one_is_network_limited() {
    let garbage = port(
        9234,
        PortState::Open,
        crate::probe::debug_ports::DEBUG_PATHS
            .iter()
            .map(|p| failure(p, "invalid HTTP status line", false))
            .collect(),
    );
    let silent = port(
        9239,
        PortState::Open,
        crate::probe::debug_ports::DEBUG_PATHS
            .iter()
            .map(|p| failure(p, "timed out", true))
            .collect(),
    );
    let findings = evaluate(&with_ports(vec![garbage, silent]));
    let f = get(&findings, "debugPort:9234");
    assert_eq!(f.status, Status::Passed);
    assert!(f.detail.contains("does not speak HTTP"), "{}", f.detail);
    assert_eq!(
        get(&findings, "debugEndpoint:9234/config").status,
        Status::Passed
    );
    assert_eq!(
        get(&findings, "debugPort:9239").status,
        Status::NetworkLimited
    );
    assert_eq!(
        get(&findings, "debugEndpoint:9239/config").status,
        Status::NetworkLimited
    );
}

#[test]
fn closed_filtered_and_failed_ports() {
    let mut short = port(9124, PortState::Filtered, Vec::new());
    short.connect_timeout = Duration::from_millis(500);
    let findings = evaluate(&with_ports(vec![
        port(9205, PortState::Closed, Vec::new()),
        port(9141, PortState::Filtered, Vec::new()),
        short,
        port(
            9134,
            PortState::Error("network unreachable".into()),
            Vec::new(),
        ),
    ]));
    // Closed and filtered ports get no endpoint findings: nothing could be asked.
    assert_eq!(findings.len(), 4, "{findings:#?}");
    let closed = get(&findings, "debugPort:9205");
    assert_eq!(closed.status, Status::Passed);
    assert_eq!(closed.detail, "port 9205 refuses connections (closed)");
    let filtered = get(&findings, "debugPort:9141");
    assert_eq!(filtered.status, Status::Passed);
    assert_eq!(filtered.detail, "no answer within 3s (filtered)");
    assert_eq!(
        get(&findings, "debugPort:9124").detail,
        "no answer within 0.5s (filtered)"
    );
    let error = get(&findings, "debugPort:9134");
    assert_eq!(error.status, Status::Indeterminate);
    assert!(error.detail.contains("network unreachable"));
}

#[test]
fn no_probe_no_findings() {
    assert!(evaluate(&measurements()).is_empty());
}

fn public(answers: &[(&str, Result<Response, FetchError>)]) -> Measurements {
    let mut m = measurements();
    m.http.insert(
        plan::BASELINE.into(),
        Ok(fixture("opencloud-4.0.0/random-nonexistent-path.txt")),
    );
    for (path, answer) in answers {
        m.http
            .insert(format!("{}{path}", plan::PUBLIC_DEBUG), answer.clone());
    }
    m
}

#[test]
fn the_default_instance_answers_the_web_app_on_public_debug_paths() {
    let m = public(&[
        (
            "/metrics",
            Ok(fixture("opencloud-4.0.0/public-metrics.txt")),
        ),
        ("/config", Ok(fixture("opencloud-4.0.0/public-config.txt"))),
        (
            "/debug/pprof/",
            Ok(fixture("opencloud-4.0.0/public-debug-pprof.txt")),
        ),
    ]);
    let findings = evaluate(&m);
    assert_eq!(findings.len(), 3);
    for f in &findings {
        assert_eq!(f.status, Status::Passed, "{}: {}", f.id, f.detail);
        assert!(
            f.detail.contains("the page every unknown path gets (200)"),
            "{}",
            f.detail
        );
    }
    assert_eq!(
        get(&findings, "debugEndpoint:/metrics").severity,
        Severity::Medium
    );
    assert_eq!(
        get(&findings, "debugEndpoint:/config").severity,
        Severity::High
    );
}

#[test]
fn public_debug_handlers_fail_when_they_differ_from_the_baseline_and_are_real() {
    let m = public(&[
        (
            "/metrics",
            Ok(fixture(&format!("{DEBUG_4}/9205-metrics-head50.txt"))),
        ),
        (
            "/config",
            Ok(fixture(&format!("{DEBUG_4}/9205-config.txt"))),
        ),
        (
            "/debug/pprof/",
            Ok(fixture(&format!(
                "{VARIANT_37}/9205-debug-pprof-no-token.txt"
            ))),
        ),
    ]);
    let findings = evaluate(&m);
    let metrics = get(&findings, "debugEndpoint:/metrics");
    assert_eq!(
        (metrics.status, metrics.severity),
        (Status::Failed, Severity::Medium)
    );
    assert!(
        metrics
            .detail
            .starts_with("/metrics on the public address answers Prometheus")
    );
    let config = get(&findings, "debugEndpoint:/config");
    assert_eq!(
        (config.status, config.severity),
        (Status::Failed, Severity::Critical)
    );
    let pprof = get(&findings, "debugEndpoint:/debug/pprof/");
    assert_eq!(
        (pprof.status, pprof.severity),
        (Status::Failed, Severity::High)
    );
}

#[test]
fn an_answer_equal_to_the_baseline_is_never_a_finding() {
    // A server that answers Prometheus text for every path: the catch-all, not a leak.
    let metrics = fixture(&format!("{DEBUG_4}/9205-metrics-head50.txt"));
    let mut m = public(&[("/metrics", Ok(metrics.clone()))]);
    m.http.insert(plan::BASELINE.into(), Ok(metrics.clone()));
    let f = &evaluate(&m)[0];
    assert_eq!(f.status, Status::Passed, "{}", f.detail);
    // Same body, other status: not the catch-all; judged by content.
    let mut other = metrics.clone();
    other.status = 404;
    m.http.insert(plan::BASELINE.into(), Ok(other));
    assert_eq!(evaluate(&m)[0].status, Status::Failed);
    // Differs from the baseline but is no debug handler: passed.
    let m = public(&[(
        "/config",
        Ok(fixture(&format!("{DEBUG_4}/9205-debug-pprof.txt"))),
    )]);
    let f = &evaluate(&m)[0];
    assert_eq!(f.status, Status::Passed);
    assert!(f.detail.ends_with("answers 404"), "{}", f.detail);
}

#[test]
fn without_a_baseline_the_content_decides() {
    let mut m = measurements();
    m.http.insert(
        format!("{}/metrics", plan::PUBLIC_DEBUG),
        Ok(fixture("opencloud-4.0.0/public-metrics.txt")),
    );
    m.http.insert(
        format!("{}/config", plan::PUBLIC_DEBUG),
        Ok(fixture(&format!("{DEBUG_4}/9205-config.txt"))),
    );
    let findings = evaluate(&m);
    assert_eq!(
        get(&findings, "debugEndpoint:/metrics").status,
        Status::Passed
    );
    assert_eq!(
        get(&findings, "debugEndpoint:/config").status,
        Status::Failed
    );
}

#[test]
fn public_paths_without_an_answer_are_network_limited() {
    let m = public(&[(
        "/config",
        Err(FetchError::Transient(
            "https://cloud.example/config: timed out".into(),
        )),
    )]);
    let f = &evaluate(&m)[0];
    assert_eq!(f.id, "debugEndpoint:/config");
    assert_eq!(f.status, Status::NetworkLimited);
    assert!(f.detail.contains("timed out"));
}

fn config(body: &str) -> Option<ConfigDump> {
    config_dump(&Response {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
        truncated: false,
        digest: None,
    })
}

#[test]
fn the_secret_detector_tells_masked_from_clear() {
    let masked = config(
        r#"{"TokenManager":{"JWTSecret":"************"},"MachineAuthAPIKey":"************",
            "Debug":{"Token":""},"HTTP":{"TLSKey":"/var/lib/x/proxy/server.key"},
            "GRPCServiceTLS":{"Key":""},"Oidc":{"AccessTokenVerifyMethod":"jwt"},
            "ServiceAccount":{"ServiceAccountID":"abc","ServiceAccountSecret":"*****"}}"#,
    )
    .unwrap();
    assert!(masked.leaked.is_empty(), "{:?}", masked.leaked);
    assert!(masked.complete);

    let clear = config(
        r#"{"ServiceAccount":{"ServiceAccountID":"abc","ServiceAccountSecret":"s3cr3t"},
            "Policies":[{"Name":"x","Auth":{"Password":"hunter2"}}],
            "Placeholder":{"ClientSecret":"<REDACTED-BY-CAPTURER: value was present>"}}"#,
    )
    .unwrap();
    assert_eq!(
        clear.leaked,
        [
            "Placeholder.ClientSecret",
            "Policies[0].Auth.Password",
            "ServiceAccount.ServiceAccountSecret"
        ]
    );
}

#[test]
fn cut_documents_are_read_as_far_as_they_go() {
    let dump =
        config(r#"{"A":{"JWTSecret":"************","ServiceAccountSecret":"abc"},"B":"#).unwrap();
    assert!(!dump.complete);
    assert_eq!(dump.leaked, ["ServiceAccountSecret"]);
    let escaped = string_pairs(r#"{"a\"b":"c\\d","n":1,"k":"v"}"#);
    assert_eq!(
        escaped,
        [
            ("a\"b".to_string(), "c\\d".to_string()),
            ("k".to_string(), "v".to_string())
        ]
    );
}

/// How a whole `/config` document was read before it was read as it is parsed: as a tree.
fn scan_config_as_a_tree(text: &str) -> Result<Option<Vec<String>>, ()> {
    fn clear_secrets(value: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, v) in map {
                    let here = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    if let serde_json::Value::String(s) = v
                        && is_secret_name(key)
                        && is_clear_value(s)
                    {
                        out.push(here.clone());
                    }
                    clear_secrets(v, &here, out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    clear_secrets(v, &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => {
            if map.is_empty() || map.keys().all(|k| ERROR_KEYS.contains(&k.as_str())) {
                return Ok(None);
            }
            let mut leaked = Vec::new();
            clear_secrets(&serde_json::Value::Object(map), "", &mut leaked);
            leaked.dedup();
            Ok(Some(leaked))
        }
        Ok(_) => Ok(None),
        Err(_) => Err(()),
    }
}

#[test]
fn config_documents_read_as_parsed_find_what_the_tree_found() {
    let mut texts: Vec<String> = Vec::new();
    for dir in [
        "opencloud-4.0.0/debug",
        "ocis-7.0.0/debug",
        "opencloud-3.7.0-variant",
    ] {
        let path = format!("{}/tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
        for entry in std::fs::read_dir(&path).unwrap() {
            let file = entry.unwrap().file_name().to_string_lossy().into_owned();
            if file.contains("config") {
                texts.push(fixture(&format!("{dir}/{file}")).text());
            }
        }
    }
    assert!(texts.len() > 20, "{}", texts.len());
    texts.extend(
        [
            r#"{"B": {"Password": "p", "a": [{"Token": "t"}, ["x", {"JWTSecret": "s"}]]},
                "A": {"APIKey": "k", "PublicKey": "pk", "TLSKey": "/etc/x.key"},
                "": {"Secret": "empty key"}, "Z": {"Secret": "***"}, "A1": {"Secret": " "}}"#,
            r#"{"a": {"b": {"c": {"Secret": "1"}}, "Secret": "2"}, "a.b": {"Secret": "3"}}"#,
            r#"{"Tokens": ["in a list"], "Token": 5, "Token2": null, "Secret": {"x": "y"}}"#,
            r#"{"error": {"Secret": "s"}, "message": "x"}"#,
            r#"{"Secret": "s"} trailing"#,
            r#"{"Secret": "\u00e9", "k": [1, 2.5, -3, true, null, {}, []]}"#,
            "[1, 2]",
            "{}",
            "\"text\"",
            "{",
        ]
        .iter()
        .map(|t| t.to_string()),
    );
    texts.push(format!("{}{}", "{\"a\":".repeat(200), "}".repeat(200)));
    for text in &texts {
        let text = text.trim_start();
        assert_eq!(scan_config(text), scan_config_as_a_tree(text), "{text}");
    }
    // The real dump's secret is found; its other members are not leaks.
    let real = fixture(&format!("{DEBUG_4}/9205-config.txt")).text();
    let leaked = scan_config(real.trim_start()).unwrap().unwrap();
    assert!(leaked.contains(&"ServiceAccount.ServiceAccountSecret".to_string()));
}

#[test]
fn json_that_is_no_configuration() {
    assert!(config(r#"{"error":{"code":"x","message":"y"}}"#).is_none());
    assert!(config("[1,2]").is_none());
    assert!(config("{}").is_none());
    assert!(config("OK").is_none());
    let mut not_ok = fixture(&format!("{DEBUG_4}/9205-config.txt"));
    not_ok.status = 401;
    assert!(config_dump(&not_ok).is_none());
}

#[test]
fn detectors_on_the_captures() {
    assert!(is_prometheus(&fixture(&format!(
        "{DEBUG_4}/9205-metrics-head50.txt"
    ))));
    assert!(!is_prometheus(&fixture(
        "opencloud-4.0.0/public-metrics.txt"
    )));
    assert!(!is_prometheus(&fixture(&format!(
        "{VARIANT_37}/9205-metrics-no-token.txt"
    ))));
    assert!(is_pprof_index(&fixture(&format!(
        "{VARIANT_37}/9205-debug-pprof-no-token.txt"
    ))));
    assert!(!is_pprof_index(&fixture(&format!(
        "{DEBUG_4}/9205-debug-pprof.txt"
    ))));
    assert!(!is_pprof_index(&fixture(
        "opencloud-4.0.0/public-debug-pprof.txt"
    )));
    assert!(is_ok_body(b"OK"));
    assert!(is_ok_body(b"ok\n"));
    assert!(!is_ok_body(b"<html>OK</html>"));
    assert_eq!(seconds(Duration::from_secs(3)), "3s");
    assert_eq!(seconds(Duration::from_millis(300)), "0.3s");
    assert_eq!(printable("a\nb\x1b[31m"), "a b [31m");
}
