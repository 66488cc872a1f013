//! Fix snippets checked by the real tools: a scan's result document is saved, `check-storage-
//! scanner snippets --result FILE --for FORM` prints the snippets, and each is put where its
//! file says and tested with the program that reads that file. Nothing is started: only the
//! configuration tests run.
//!
//! - nginx (Debian's 1.22): `nginx -t` on a configuration holding the server-block snippet in
//!   a TLS server and the http-block snippet beside it;
//! - Caddy (2.6): `caddy validate` on a Caddyfile holding the site-block snippet in a TLS site
//!   and the top-level snippet beside it;
//! - Apache (2.4): `apache2 -t` on a configuration loading mod_headers, mod_ssl, mod_alias,
//!   mod_authz_core and mod_proxy, the VirtualHost snippet in a TLS VirtualHost and the
//!   server-level snippet outside it;
//! - zone: `named-checkzone -D` on a zone with SOA and NS, the record in its dump;
//! - env: sourced by `sh` (`set -a; . FILE`), every `KEY=value` exported as written;
//! - Traefik has no Debian package: its labels are read as the YAML of a Compose service and
//!   every key is held to Traefik's documented router, headers and redirectScheme options,
//!   every rule to its matchers, every middleware a router names to a label defining it.
//!
//! The tools come from `make deps` (packaging/ci-deps.sh). The instance's certificate for the
//! TLS listeners is made here with rcgen.

use crate::support::plugin::{NOW, scratch};
use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const NGINX: &str = "/usr/sbin/nginx";
const APACHE: &str = "/usr/sbin/apache2";
const APACHE_MODULES: &str = "/usr/lib/apache2/modules";
const CADDY: &str = "/usr/bin/caddy";
const NAMED_CHECKZONE: &str = "/usr/bin/named-checkzone";

fn require(tool: &str, package: &str) {
    assert!(
        Path::new(tool).is_file(),
        "{tool} is missing: install Debian's {package} package with `make deps` \
         (packaging/ci-deps.sh)"
    );
}

struct Out {
    stdout: String,
    stderr: String,
    code: i32,
}

fn scanner(dir: &Path, args: &[&str]) -> Out {
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-scanner"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("COS_NOW", NOW)
        .current_dir(dir)
        .output()
        .expect("run the scanner");
    Out {
        stdout: String::from_utf8(output.stdout).expect("UTF-8"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().expect("exit code"),
    }
}

/// Runs a tool with a cleared environment; `(success, stdout and stderr)`.
fn tool(program: &str, args: &[&str], dir: &Path) -> (bool, String) {
    let output = Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("xdg-data"))
        .env("XDG_CONFIG_HOME", dir.join("xdg-config"))
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

/// One section of `snippets`' output.
#[derive(Debug, PartialEq)]
struct Section {
    host: String,
    form: String,
    file: String,
    text: String,
}

/// Splits `snippets`' output at its header lines (`# == HOST (PRODUCT): FORM, FILE ==`).
fn sections(stdout: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for line in stdout.lines() {
        let header = line
            .strip_prefix("# == ")
            .or_else(|| line.strip_prefix("; == "))
            .and_then(|l| l.strip_suffix(" =="));
        match header {
            Some(h) => {
                let (host, rest) = h.split_once(" (").expect("host (product)");
                let (_, rest) = rest.split_once("): ").expect("): form, file");
                let (form, file) = rest.split_once(", ").expect("form, file");
                out.push(Section {
                    host: host.to_string(),
                    form: form.to_string(),
                    file: file.to_string(),
                    text: String::new(),
                });
            }
            // A host with nothing to paste: one comment line, before any header here.
            None if out.is_empty() && line.starts_with("# ") => {}
            None => {
                let last = out
                    .last_mut()
                    .unwrap_or_else(|| panic!("text before a header: {line}"));
                last.text.push_str(line);
                last.text.push('\n');
            }
        }
    }
    for s in &mut out {
        // Sections are separated by one empty line.
        s.text = s.text.trim_end_matches('\n').to_string();
    }
    out
}

/// The section of `form` whose file description starts with `file`.
fn section<'a>(all: &'a [Section], form: &str, file: &str) -> Option<&'a Section> {
    let found: Vec<&Section> = all
        .iter()
        .filter(|s| s.form == form && s.file.starts_with(file))
        .collect();
    assert!(found.len() <= 1, "one {form} snippet per file: {found:#?}");
    found.first().copied()
}

/// A self-signed certificate and key for the TLS listeners, written to `dir`.
fn certificate(dir: &Path) -> (PathBuf, PathBuf) {
    let made = rcgen::generate_simple_self_signed(vec!["cloud.example.com".to_string()])
        .expect("a test certificate");
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    (cert, key)
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| format!("{by}{l}\n"))
        .collect::<String>()
}

/// `nginx -t` with the server-block snippet in the instance's TLS server and the http-block
/// snippet beside it.
fn check_nginx(dir: &Path, server: &str, http: &str) {
    require(NGINX, "nginx");
    let (cert, key) = certificate(dir);
    std::fs::write(dir.join("server.conf"), server).unwrap();
    std::fs::write(dir.join("http.conf"), http).unwrap();
    let d = dir.display();
    let conf = format!(
        "daemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n    \
         access_log off;\n    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n    \
         include {d}/http.conf;\n    server {{\n        listen 127.0.0.1:8443 ssl;\n        \
         server_name cloud.example.com;\n        ssl_certificate {};\n        \
         ssl_certificate_key {};\n        include {d}/server.conf;\n        location / {{\n            \
         proxy_pass http://127.0.0.1:9;\n        }}\n    }}\n}}\n",
        cert.display(),
        key.display()
    );
    let file = dir.join("nginx.conf");
    std::fs::write(&file, conf).unwrap();
    let (ok, output) = tool(
        NGINX,
        &[
            "-t",
            "-q",
            "-e",
            &format!("{d}/error.log"),
            "-p",
            &format!("{d}/"),
            "-c",
            &file.display().to_string(),
        ],
        dir,
    );
    assert!(
        ok,
        "nginx -t refused the snippets:\n{output}\n--- server block\n{server}\n--- http block\n{http}"
    );
}

/// `caddy validate` with the site-block snippet in the instance's TLS site and the top-level
/// snippet beside it.
fn check_caddy(dir: &Path, site: &str, top: &str) {
    require(CADDY, "caddy");
    let (cert, key) = certificate(dir);
    let caddyfile = format!(
        "{{\n\tadmin off\n\tstorage file_system {}\n}}\n\n{top}\n\nhttps://cloud.example.com:8443 {{\n\t\
         tls {} {}\n{}\treverse_proxy 127.0.0.1:9\n}}\n",
        dir.join("caddy-data").display(),
        cert.display(),
        key.display(),
        indent(site, "\t")
    );
    let file = dir.join("Caddyfile");
    std::fs::write(&file, &caddyfile).unwrap();
    let (ok, output) = tool(
        CADDY,
        &[
            "validate",
            "--config",
            &file.display().to_string(),
            "--adapter",
            "caddyfile",
        ],
        dir,
    );
    assert!(
        ok && output.contains("Valid configuration"),
        "caddy validate refused the snippets:\n{output}\n--- Caddyfile\n{caddyfile}"
    );
}

/// `apache2 -t` with the VirtualHost snippet in the instance's TLS VirtualHost and the
/// server-level snippet outside it.
fn check_apache(dir: &Path, vhost: &str, server: &str) {
    require(APACHE, "apache2");
    let (cert, key) = certificate(dir);
    std::fs::write(dir.join("vhost.conf"), vhost).unwrap();
    std::fs::write(dir.join("server.conf"), server).unwrap();
    let d = dir.display();
    let mut conf = format!(
        "ServerRoot {d}\nServerName cloud.example.com\nPidFile {d}/apache.pid\nErrorLog \
         {d}/error.log\nListen 127.0.0.1:8444\n"
    );
    for (name, file) in [
        ("mpm_event", "mod_mpm_event.so"),
        ("authz_core", "mod_authz_core.so"),
        ("headers", "mod_headers.so"),
        ("alias", "mod_alias.so"),
        ("ssl", "mod_ssl.so"),
        ("proxy", "mod_proxy.so"),
        ("proxy_http", "mod_proxy_http.so"),
    ] {
        conf.push_str(&format!(
            "LoadModule {name}_module {APACHE_MODULES}/{file}\n"
        ));
    }
    conf.push_str(&format!(
        "Include {d}/server.conf\n<VirtualHost 127.0.0.1:8444>\n    ServerName \
         cloud.example.com\n    SSLEngine on\n    SSLCertificateFile {}\n    \
         SSLCertificateKeyFile {}\n    Include {d}/vhost.conf\n    ProxyPass / \
         http://127.0.0.1:9/\n</VirtualHost>\n",
        cert.display(),
        key.display()
    ));
    let file = dir.join("apache2.conf");
    std::fs::write(&file, conf).unwrap();
    let (ok, output) = tool(APACHE, &["-t", "-f", &file.display().to_string()], dir);
    assert!(
        ok && output.contains("Syntax OK"),
        "apache2 -t refused the snippets:\n{output}\n--- VirtualHost\n{vhost}\n--- server\n{server}"
    );
}

/// `named-checkzone -D` on `zone` (SOA, NS and the snippet); the records it must hold.
fn check_zone(dir: &Path, zone: &str, snippet: &str, records: &[&str]) {
    require(NAMED_CHECKZONE, "bind9-utils");
    let text = format!(
        "$TTL 3600\n@ IN SOA ns1.{zone}. hostmaster.{zone}. 1 7200 3600 1209600 3600\n@ IN NS \
         ns1.{zone}.\nns1 IN A 192.0.2.1\n{snippet}\n"
    );
    let file = dir.join("zone.db");
    std::fs::write(&file, &text).unwrap();
    let (ok, output) = tool(
        NAMED_CHECKZONE,
        &["-D", zone, &file.display().to_string()],
        dir,
    );
    assert!(
        ok && !output.contains("ignoring"),
        "named-checkzone refused the snippet:\n{output}\n--- zone\n{text}"
    );
    for record in records {
        let words: Vec<&str> = record.split_whitespace().collect();
        assert!(
            output.lines().any(|l| l
                .split_whitespace()
                .filter(|w| *w != "3600")
                .collect::<Vec<_>>()
                == words),
            "{record} is not in the zone:\n{output}"
        );
    }
}

/// Sources the env snippet with `sh` (`set -a; . FILE; env`): every `KEY=value` comes out
/// exported as written. Returns the lines.
fn check_env(dir: &Path, snippet: &str) -> Vec<(String, String)> {
    let file = dir.join("snippet.env");
    std::fs::write(&file, snippet).unwrap();
    let (ok, output) = tool(
        "/bin/sh",
        &[
            "-e",
            "-c",
            "set -a; . \"$1\"; env",
            "sh",
            &file.display().to_string(),
        ],
        dir,
    );
    assert!(
        ok,
        "sh could not read the env snippet:\n{output}\n---\n{snippet}"
    );
    let mut lines = Vec::new();
    for line in snippet.lines().filter(|l| !l.starts_with('#')) {
        let (key, value) = line.split_once('=').expect("KEY=value");
        assert!(
            output.lines().any(|l| l == line),
            "{key} is not exported as written:\n{output}"
        );
        lines.push((key.to_string(), value.to_string()));
    }
    lines
}

/// Traefik's documented option names the labels may use (routers, and the headers and
/// redirectScheme middlewares). Keys are case-insensitive in Traefik; the snippets use the
/// documented spelling.
const ROUTER_OPTIONS: &[&str] = &[
    "rule",
    "entrypoints",
    "middlewares",
    "service",
    "priority",
    "tls",
];
const HEADERS_OPTIONS: &[&str] = &[
    "stsSeconds",
    "stsIncludeSubdomains",
    "stsPreload",
    "contentTypeNosniff",
    "customFrameOptionsValue",
    "referrerPolicy",
    "permissionsPolicy",
];

fn name_ok(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A router rule of the matchers the snippets use, joined by `&&`.
fn rule_ok(rule: &str) -> bool {
    rule.split(" && ").all(|matcher| {
        let Some((name, rest)) = matcher.split_once("(`") else {
            return false;
        };
        let Some(arg) = rest.strip_suffix("`)") else {
            return false;
        };
        ["Host", "Path", "PathPrefix", "Method"].contains(&name)
            && !arg.is_empty()
            && !arg.contains(['`', '(', ')', ' '])
            && (name != "Path" && name != "PathPrefix" || arg.starts_with('/'))
    })
}

/// The labels as a Compose service's `labels:` list, every key and value held to Traefik's
/// documented options. Returns the `key=value` pairs.
fn check_traefik_labels(snippet: &str) -> Vec<(String, String)> {
    let compose = format!(
        "services:\n  opencloud:\n    labels:\n{}",
        indent(snippet, "      ")
    );
    let doc: Value = serde_saphyr::from_str(&compose)
        .unwrap_or_else(|e| panic!("the labels are not YAML: {e}\n{compose}"));
    let labels = doc["services"]["opencloud"]["labels"]
        .as_array()
        .unwrap_or_else(|| panic!("labels: is a list\n{compose}"));
    let mut pairs = Vec::new();
    let mut defined_middlewares = Vec::new();
    let mut used_middlewares = Vec::new();
    for label in labels {
        let label = label.as_str().expect("a label is a string");
        let (key, value) = label.split_once('=').expect("key=value");
        let parts: Vec<&str> = key.split('.').collect();
        assert_eq!(&parts[..2], ["traefik", "http"], "{label}");
        assert!(name_ok(parts[3]), "{label}: router or middleware name");
        match (parts[2], &parts[4..]) {
            ("routers", [option]) => {
                assert!(
                    ROUTER_OPTIONS.contains(option),
                    "{label}: not a router option"
                );
                match *option {
                    "rule" => assert!(rule_ok(value), "{label}: not a rule"),
                    "priority" => assert!(value.parse::<u32>().is_ok(), "{label}"),
                    "tls" => assert_eq!(value, "true", "{label}"),
                    "service" => assert_eq!(value, "noop@internal", "{label}"),
                    "entrypoints" => assert!(name_ok(value), "{label}"),
                    "middlewares" => {
                        for m in value.split(',') {
                            assert!(name_ok(m), "{label}");
                            used_middlewares.push(m.to_string());
                        }
                    }
                    _ => unreachable!(),
                }
            }
            ("middlewares", ["headers", option]) => {
                assert!(
                    HEADERS_OPTIONS.contains(option),
                    "{label}: not a headers option"
                );
                match *option {
                    "stsSeconds" => assert!(value.parse::<u32>().is_ok(), "{label}"),
                    "stsIncludeSubdomains" | "stsPreload" | "contentTypeNosniff" => {
                        assert_eq!(value, "true", "{label}")
                    }
                    _ => assert!(!value.is_empty() && !value.contains('"'), "{label}"),
                }
                defined_middlewares.push(parts[3].to_string());
            }
            ("middlewares", ["headers", "customResponseHeaders", header]) => {
                assert!(
                    header
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-'),
                    "{label}"
                );
                // An empty value removes the header from the response.
                assert_eq!(value, "", "{label}");
                defined_middlewares.push(parts[3].to_string());
            }
            ("middlewares", ["redirectscheme", "scheme"]) => {
                assert_eq!(value, "https", "{label}");
                defined_middlewares.push(parts[3].to_string());
            }
            ("middlewares", ["redirectscheme", "permanent"]) => {
                assert_eq!(value, "true", "{label}");
                defined_middlewares.push(parts[3].to_string());
            }
            _ => panic!("{label}: not a documented Traefik option"),
        }
        pairs.push((key.to_string(), value.to_string()));
    }
    for m in used_middlewares {
        assert!(
            defined_middlewares.contains(&m),
            "the router names {m}, which no label defines:\n{snippet}"
        );
    }
    pairs
}

/// The dynamic configuration file: YAML with Traefik's `tls.options` names.
fn check_traefik_dynamic(snippet: &str) {
    let doc: Value =
        serde_saphyr::from_str(snippet).unwrap_or_else(|e| panic!("not YAML: {e}\n{snippet}"));
    let options = doc["tls"]["options"].as_object().expect("tls.options");
    for (name, option) in options {
        assert!(name_ok(name), "{name}");
        for (key, value) in option.as_object().expect("an option is a map") {
            match key.as_str() {
                "minVersion" => assert!(
                    ["VersionTLS12", "VersionTLS13"].contains(&value.as_str().unwrap_or("")),
                    "{value}"
                ),
                other => panic!("{other}: not a TLS option the snippets use"),
            }
        }
    }
}

/// Runs `snippets --result FILE --for FORM` for every form, checks each with its tool, and
/// returns every section (with all forms at once, the same sections).
fn check_every_form(name: &str, result: &Path) -> Vec<Section> {
    let dir = scratch(name);
    let file = result.display().to_string();
    let all = scanner(&dir, &["snippets", "--result", &file]);
    assert_eq!(all.code, 0, "{}{}", all.stdout, all.stderr);
    let everything = sections(&all.stdout);
    let mut joined = Vec::new();
    for form in ["nginx", "caddy", "apache", "traefik", "env", "zone"] {
        let out = scanner(&dir, &["snippets", "--result", &file, "--for", form]);
        assert_eq!(out.code, 0, "{form}: {}{}", out.stdout, out.stderr);
        let found = sections(&out.stdout);
        assert!(found.iter().all(|s| s.form == form), "{form}: {found:#?}");
        let work = dir.join(form);
        std::fs::create_dir_all(&work).unwrap();
        let text =
            |file: &str| section(&found, form, file).map_or(String::new(), |s| s.text.clone());
        match form {
            "nginx" if !found.is_empty() => check_nginx(
                &work,
                &text("server block of the instance"),
                &text("http block"),
            ),
            "caddy" if !found.is_empty() => check_caddy(
                &work,
                &text("Caddyfile, the instance's site block"),
                &text("Caddyfile, top level"),
            ),
            "apache" if !found.is_empty() => check_apache(
                &work,
                &text("the instance's <VirtualHost"),
                &text("server configuration outside"),
            ),
            "traefik" => {
                if let Some(s) = section(&found, form, "docker-compose.yml, labels:") {
                    check_traefik_labels(&s.text);
                }
                if let Some(s) = section(&found, form, "a dynamic configuration file") {
                    check_traefik_dynamic(&s.text);
                }
            }
            "env" => {
                if let Some(s) = section(&found, form, ".env") {
                    check_env(&work, &s.text);
                }
            }
            _ => {}
        }
        joined.extend(found);
    }
    // `--for` picks from what every form prints: the same sections, in the same order.
    assert_eq!(joined, everything);
    everything
}

/// Scans `fake` with hardening and saves the JSON array; returns the saved file and the
/// document of the one host.
fn saved_scan(name: &str, fake: &FakeInstance) -> (PathBuf, Value) {
    let run = crate::support::plugin::scan(
        name,
        &fake.host_port(),
        fake,
        &["--check-hardening", "--format", "json"],
    );
    assert!(run.code <= 2, "{}", run.stdout);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let file = scratch(&format!("{name}-saved")).join("result.json");
    std::fs::write(&file, &run.stdout).unwrap();
    (file, doc[0].clone())
}

#[test]
fn a_default_instances_fixes_pass_the_real_servers_config_tests() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let (file, doc) = saved_scan("snippets-default", &fake);
    let plan = &doc["remediationPlan"];
    // Each step carries its own forms: the version headers' step all four proxies.
    let step = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["resolves"][0] == "versionDisclosure:X-Graph-Version")
        .expect("the version headers' step");
    let forms: Vec<&str> = step["snippets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["for"].as_str().unwrap())
        .collect();
    assert_eq!(forms, ["nginx", "caddy", "apache", "traefik"]);
    // The upgrade has none.
    assert_eq!(plan["steps"][0]["snippets"], Value::Array(Vec::new()));

    let sections = check_every_form("snippets-default-forms", &file);
    // What the subcommand prints is the document's merged view, file for file.
    let merged: Vec<(String, String, String)> = plan["snippets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["for"].as_str().unwrap().to_string(),
                s["file"].as_str().unwrap().to_string(),
                s["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let printed: Vec<(String, String, String)> = sections
        .iter()
        .map(|s| (s.form.clone(), s.file.clone(), s.text.clone()))
        .collect();
    assert_eq!(printed, merged);
    assert!(sections.iter().all(|s| s.host == fake.host_port()));
    let env = sections
        .iter()
        .find(|s| s.form == "env")
        .expect("env lines");
    for line in [
        "IDM_CREATE_DEMO_USERS=false",
        "PROXY_CSP_CONFIG_FILE_OVERRIDE_LOCATION=/etc/opencloud/csp.yaml",
    ] {
        assert!(env.text.lines().any(|l| l == line), "{line}\n{}", env.text);
    }
    let nginx = sections.iter().find(|s| s.form == "nginx").unwrap();
    for line in [
        "proxy_hide_header X-Web-Version;",
        "add_header Permissions-Policy \"camera=(), microphone=(), geolocation=(), payment=(), usb=()\" always;",
        "add_header Strict-Transport-Security \"max-age=31536000; includeSubDomains; preload\" always;",
    ] {
        assert!(
            nginx.text.lines().any(|l| l == line),
            "{line}\n{}",
            nginx.text
        );
    }
}

/// Every finding id the table knows, with the members of each family root the scans produce.
const EVERY_FIX: &[&str] = &[
    "httpsEnforced",
    "tlsDeprecatedProtocol",
    "tlsProtocol",
    "Strict-Transport-Security",
    "hstsPreload",
    "Content-Security-Policy",
    "cspWithoutUnsafeInline",
    "X-Content-Type-Options",
    "X-Frame-Options",
    "Referrer-Policy",
    "Permissions-Policy",
    "exposed:/.env",
    "exposed:/.git/config",
    "exposed:/opencloud.yaml",
    "exposed:/.ocis/config/ocis.yaml",
    "exposed:/proxy/server.key",
    "exposed:/idm/idm.boltdb",
    "directoryListing",
    "traceMethodDisabled",
    "corsOriginRestricted",
    "versionDisclosure:X-Web-Version",
    "versionDisclosure:Server",
    "versionDisclosure:X-Powered-By",
    "cookieSecure",
    "cookieHttpOnly",
    "cookieSameSite",
    "debugPort:9205",
    "debugPort:9239",
    "debugEndpoint:9205/config",
    "debugEndpoint:9141/debug/pprof/",
    "debugEndpoint:9124/metrics",
    "debugEndpoint:/metrics",
    "debugEndpoint:/config",
    "debugEndpoint:/debug/pprof/",
    "demoUsersDisabled",
    "basicAuthDisabled",
    "identityProviderConsistent",
    "publicLinkPasswordEnforced",
    "passwordPolicyEnforced",
    "caaRecord",
];

/// The saved scan rewritten: a DNS name for the host, the family, a Let's Encrypt
/// certificate, and one step resolving every fix the table knows (plus ids it does not).
fn every_fix_document(doc: &Value, family: &str) -> Value {
    let mut doc = doc.clone();
    doc["host"] = Value::from("cloud.example.com");
    doc["product"]["family"] = Value::from(family);
    doc["tls"]["certificateIssuer"] = Value::from("CN=R11, O=Let's Encrypt, C=US");
    let mut ids: Vec<&str> = EVERY_FIX.to_vec();
    ids.extend([
        "eol",
        "tlsTrusted",
        "dnssec",
        "vulnerability:GHSA-x",
        "aCheckFromTheFuture",
    ]);
    doc["remediationPlan"]["steps"] = serde_json::json!([{
        "order": 1, "action": "everything", "resolves": ids, "fixedIn": "reverse proxy",
        "snippets": []
    }]);
    doc
}

#[test]
fn every_fix_of_the_table_passes_the_real_tools_for_both_families() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let (_, doc) = saved_scan("snippets-every", &fake);
    for (family, prefix, other) in [("opencloud", "OC_", "OCIS_"), ("ocis", "OCIS_", "OC_")] {
        let dir = scratch(&format!("snippets-every-{family}-doc"));
        let file = dir.join("result.json");
        // A document, not an array: what `check-storage-scanner scan` prints.
        std::fs::write(&file, every_fix_document(&doc, family).to_string()).unwrap();
        let sections = check_every_form(&format!("snippets-every-{family}"), &file);
        let find = |form: &str, file: &str| {
            section(&sections, form, file)
                .unwrap_or_else(|| panic!("{family}: no {form} snippet for {file}: {sections:#?}"))
        };
        // Every file of every form is there.
        for (form, file) in [
            ("nginx", "server block of the instance"),
            ("nginx", "http block"),
            ("caddy", "Caddyfile, the instance's site block"),
            ("caddy", "Caddyfile, top level"),
            ("apache", "the instance's <VirtualHost"),
            ("apache", "server configuration outside"),
            ("traefik", "docker-compose.yml, labels:"),
            ("traefik", "a dynamic configuration file"),
            ("env", ".env"),
            (
                "zone",
                "zone file of the DNS zone holding cloud.example.com",
            ),
        ] {
            find(form, file);
        }
        // The zone: the record for the scanned name, naming the certificate's CA.
        let zone = find("zone", "zone file");
        check_zone(
            &scratch(&format!("snippets-every-{family}-zone")),
            "example.com",
            &zone.text,
            &["cloud.example.com. IN CAA 0 issue \"letsencrypt.org\""],
        );
        // The environment lines: the family's prefix, never the other's.
        let env = &find("env", ".env").text;
        let keys: Vec<&str> = env
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split('=').next().unwrap())
            .collect();
        for key in [
            "URL",
            "SHARING_PUBLIC_SHARE_MUST_HAVE_PASSWORD",
            "PASSWORD_POLICY_MIN_CHARACTERS",
        ] {
            assert!(
                keys.contains(&format!("{prefix}{key}").as_str()),
                "{family}: {key}\n{env}"
            );
        }
        assert!(
            keys.iter().all(|k| !k.starts_with(other)),
            "{family}:\n{env}"
        );
        assert!(!env.contains(other), "{family}:\n{env}");
        assert!(
            env.lines()
                .any(|l| l == format!("{prefix}URL=https://cloud.example.com")),
            "{env}"
        );
        // The redirect names the host; the exposed files are refused at every proxy.
        assert!(
            find("nginx", "http block")
                .text
                .contains("server_name cloud.example.com;")
        );
        let labels = check_traefik_labels(&find("traefik", "docker-compose.yml").text);
        assert!(labels.contains(&(
            format!("traefik.http.routers.{family}-deny-env.rule"),
            "Host(`cloud.example.com`) && Path(`/.env`)".to_string()
        )));
        for (form, line) in [
            ("nginx", "location = /proxy/server.key { deny all; }"),
            ("caddy", "respond /proxy/server.key 403"),
            ("apache", "<Location \"/proxy/server.key\">"),
        ] {
            assert!(
                sections
                    .iter()
                    .any(|s| s.form == form && s.text.lines().any(|l| l == line)),
                "{family} {form}: {line}"
            );
        }
    }
}

#[test]
fn snippets_says_when_there_is_nothing_to_paste_and_refuses_wrong_input_in_one_line() {
    let dir = scratch("snippets-usage");
    let fake = FakeInstance::start(crate::support::plugin::healthy("8.1.0"));
    let (file, doc) = saved_scan("snippets-usage-scan", &fake);
    let file = file.display().to_string();
    let host = fake.host_port();

    // A plan of version headers only: no env lines, no zone records; said so, exit 0.
    assert!(
        !doc["remediationPlan"]["steps"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let out = scanner(&dir, &["snippets", "--result", &file, "--for", "zone"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        out.stdout,
        format!(
            "# {host} (OpenCloud): no zone snippet: the remediation plan's fixes are for \
             nginx, caddy, apache, traefik, env\n"
        )
    );

    // Nothing to fix at all.
    let mut clean = doc.clone();
    clean["remediationPlan"]["steps"] = Value::Array(Vec::new());
    let clean_file = dir.join("clean.json");
    std::fs::write(&clean_file, Value::Array(vec![clean]).to_string()).unwrap();
    let out = scanner(
        &dir,
        &["snippets", "--result", &clean_file.display().to_string()],
    );
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        format!("# {host} (OpenCloud): nothing to fix (the remediation plan is empty)\n")
    );

    // Usage errors: exit 3, one line naming the fix.
    let one_line = |args: &[&str], expected: &str| {
        let out = scanner(&dir, args);
        assert_eq!(out.code, 3, "{args:?}: {}", out.stdout);
        assert_eq!(out.stdout.lines().count(), 1, "{args:?}: {}", out.stdout);
        assert!(
            out.stdout.starts_with(expected),
            "{args:?}:\n{}\nexpected: {expected}",
            out.stdout
        );
    };
    one_line(
        &["snippets", "--result", &file, "--for", "iis"],
        "UNKNOWN: --for \"iis\" is not a snippet form; use one of nginx, caddy, apache, traefik, env, zone",
    );
    one_line(
        &["snippets"],
        "UNKNOWN: snippets needs --result FILE: what check-storage-security --format json",
    );
    one_line(
        &["snippets", "--result", "/nonexistent/result.json"],
        "UNKNOWN: result file /nonexistent/result.json does not exist",
    );
    let bad = dir.join("not-a-result.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    one_line(
        &["snippets", "--result", &bad.display().to_string()],
        &format!(
            "UNKNOWN: result file {} is not a result document (missing field",
            bad.display()
        ),
    );
    std::fs::write(&bad, "not json").unwrap();
    one_line(
        &["snippets", "--result", &bad.display().to_string()],
        &format!("UNKNOWN: result file {} is not JSON (", bad.display()),
    );
    one_line(
        &["snippets", &file],
        "UNKNOWN: snippets takes its files with --result FILE, not as",
    );
    one_line(
        &["review-waivers", "--result", &file, "--for", "nginx"],
        "UNKNOWN: --for is an option of snippets, not of review-waivers",
    );
    let plugin = crate::support::plugin::run(
        "snippets-plugin-for",
        &["-H", "x.example", "--for", "nginx"],
        &[],
    );
    assert_eq!(plugin.code, 3);
    assert!(
        plugin
            .line(0)
            .starts_with("UNKNOWN: --for is an option of check-storage-scanner"),
        "{}",
        plugin.stdout
    );
}

#[test]
fn debug_prints_the_merged_snippets_after_the_plan_indented() {
    let fake = FakeInstance::start(InstanceConfig::default());
    let run = crate::support::plugin::scan(
        "snippets-debug",
        &fake.host_port(),
        &fake,
        &["--check-hardening", "--debug"],
    );
    let lines: Vec<&str> = run.stdout.lines().collect();
    let at = |line: &str| {
        lines
            .iter()
            .position(|l| *l == line)
            .unwrap_or_else(|| panic!("no line {line:?}:\n{}", run.stdout))
    };
    let (plan, snippets, findings) = (
        at("Remediation plan:"),
        at("Fix snippets (one per file):"),
        at("Findings:"),
    );
    assert!(plan < snippets && snippets < findings, "{}", run.stdout);
    let block = &lines[snippets + 1..findings];
    for line in [
        "  nginx, server block of the instance (server { listen 443 ssl; ... }):",
        "    proxy_hide_header X-Web-Version;",
        "  caddy, Caddyfile, the instance's site block:",
        "    header {",
        "  env, .env, or environment: of the instance's service in docker-compose.yml:",
        "    IDM_CREATE_DEMO_USERS=false",
    ] {
        assert!(block.contains(&line), "{line}\n{}", block.join("\n"));
    }
    assert!(
        block
            .iter()
            .all(|l| l.starts_with("  ") && !l.contains('|'))
    );
    // The performance data still closes the output, alone after its `|`.
    assert_eq!(
        run.stdout.matches('|').count(),
        1,
        "only the performance data starts with |"
    );
}
