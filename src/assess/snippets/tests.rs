use super::*;

const HOST: &str = "cloud.example.com";

/// The reverse proxies a proxy fix is written for.
const PROXIES: [Form; 4] = [Form::Nginx, Form::Caddy, Form::Apache, Form::Traefik];

fn subject(family: ProductFamily) -> Subject<'static> {
    Subject {
        family,
        host: HOST,
        certificate_issuer: None,
    }
}

fn snippets(ids: &[&str], family: ProductFamily) -> Vec<Snippet> {
    for_findings(ids, &subject(family))
}

/// The checks whose rows carry a fix.
fn fixed_checks() -> impl Iterator<Item = &'static CheckSpec> {
    crate::checks::registry().filter(|c| c.fix != Fix::None)
}

/// A member id for each row: family roots need a detail.
fn sample_id(row: &CheckSpec) -> String {
    if row.family.is_none() {
        return row.id.to_string();
    }
    match row.id {
        "exposed" => "exposed:/.env".into(),
        "versionDisclosure" => "versionDisclosure:X-Web-Version".into(),
        "debugEndpoint" => "debugEndpoint:/metrics".into(),
        "debugPort" => "debugPort:9205".into(),
        other => panic!("no sample member for the root {other}"),
    }
}

fn forms(snippets: &[Snippet]) -> Vec<Form> {
    let mut forms: Vec<Form> = snippets.iter().map(|s| s.form).collect();
    forms.dedup();
    forms
}

#[test]
fn every_fix_is_known_for_a_member_and_none_for_a_bare_root() {
    for row in fixed_checks() {
        assert!(fixable(&sample_id(row)).is_some(), "{}", row.id);
        if row.family.is_some() {
            assert!(fixable(row.id).is_none(), "{} names no member", row.id);
            assert!(snippets(&[row.id], ProductFamily::OpenCloud).is_empty());
        }
    }
    assert_eq!(fixed_checks().count(), 27);
}

#[test]
fn every_proxy_fix_comes_in_all_four_proxy_forms() {
    let mut proxy_rows = 0;
    for row in fixed_checks() {
        for family in ProductFamily::ALL {
            let id = sample_id(row);
            let out = snippets(&[id.as_str()], family);
            assert!(!out.is_empty(), "{id} has no snippet");
            let found = forms(&out);
            if found.iter().any(|f| PROXIES.contains(f)) {
                for form in PROXIES {
                    assert!(found.contains(&form), "{id}: no {} form", form.as_str());
                }
                proxy_rows += 1;
            }
        }
    }
    assert!(proxy_rows >= 2 * 18, "{proxy_rows}");
    // The checks an operator fixes at the proxy, by the registry, each have the four forms.
    for id in [
        "httpsEnforced",
        "Strict-Transport-Security",
        "hstsPreload",
        "Permissions-Policy",
        "X-Content-Type-Options",
        "X-Frame-Options",
        "Referrer-Policy",
        "Content-Security-Policy",
        "versionDisclosure:Server",
        "exposed:/opencloud.yaml",
        "debugEndpoint:/debug/pprof/",
        "traceMethodDisabled",
        "corsOriginRestricted",
        "cookieSecure",
        "tlsDeprecatedProtocol",
        "directoryListing",
    ] {
        let found = forms(&snippets(&[id], ProductFamily::OpenCloud));
        for form in PROXIES {
            assert!(found.contains(&form), "{id}: no {}", form.as_str());
        }
    }
}

#[test]
fn no_snippet_holds_a_vertical_bar() {
    // `--debug` prints the snippets in the monitoring output, where `|` starts performance
    // data: a snippet must do without one (the Apache cookie edits use `\b`, not `(?:;|$)`).
    let ids: Vec<String> = fixed_checks().map(sample_id).collect();
    for family in ProductFamily::ALL {
        for s in for_findings(&ids, &subject(family)) {
            assert!(!s.text.contains('|') && !s.file.contains('|'), "{s:?}");
        }
    }
}

#[test]
fn ids_without_a_known_fix_get_no_snippet() {
    for id in [
        "eol",
        "vulnerability:GHSA-vf5j-r2hw-2hrw",
        "tlsTrusted",
        "tlsCertificate",
        "httpsAvailable",
        "dnssec",
        "addressParity",
        "publicLinkExpirationEnforced",
        "userEnumerationRestricted",
        "authentication:/graph/v1.0/me",
        "somethingNew",
        "exposed",
        "exposed:",
        "exposed:/../etc/passwd",
        "exposed:/a b",
        "exposed:relative",
        "versionDisclosure:X Web",
        "versionDisclosure:X-Web-Version\nadd_header",
        "debugPort:port",
        "debugPort:0",
        "debugEndpoint:9205/con fig",
        "debugEndpoint:99999/config",
    ] {
        assert_eq!(
            snippets(&[id], ProductFamily::OpenCloud),
            Vec::<Snippet>::new(),
            "{id:?}"
        );
    }
}

/// Every environment line of a snippet: `KEY=value` or a comment.
fn env_lines(out: &[Snippet]) -> Vec<String> {
    let mut lines = Vec::new();
    for s in out.iter().filter(|s| s.form == Form::Env) {
        for line in s.text.lines() {
            if line.starts_with('#') {
                continue;
            }
            let (key, value) = line.split_once('=').expect("KEY=value");
            assert!(
                !key.is_empty()
                    && key
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
                "{line}"
            );
            assert!(!value.contains(char::is_whitespace), "{line}");
            lines.push(line.to_string());
        }
    }
    lines
}

#[test]
fn environment_lines_use_the_familys_prefix() {
    let ids: Vec<String> = fixed_checks()
        .map(sample_id)
        .chain([
            "debugEndpoint:/config".to_string(),
            "debugEndpoint:9205/config".to_string(),
        ])
        .collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let opencloud = snippets(&ids, ProductFamily::OpenCloud);
    let ocis = snippets(&ids, ProductFamily::InfiniteScale);
    let text = |out: &[Snippet]| -> String {
        out.iter()
            .filter(|s| s.form == Form::Env)
            .map(|s| s.text.clone())
            .collect()
    };
    let (oc, is) = (text(&opencloud), text(&ocis));
    for (name, oc_line, ocis_line) in [
        (
            "URL",
            "OC_URL=https://cloud.example.com",
            "OCIS_URL=https://cloud.example.com",
        ),
        (
            "share password",
            "OC_SHARING_PUBLIC_SHARE_MUST_HAVE_PASSWORD=true",
            "OCIS_SHARING_PUBLIC_SHARE_MUST_HAVE_PASSWORD=true",
        ),
        (
            "password policy",
            "OC_PASSWORD_POLICY_MIN_CHARACTERS=8",
            "OCIS_PASSWORD_POLICY_MIN_CHARACTERS=8",
        ),
        (
            "CSP",
            "PROXY_CSP_CONFIG_FILE_OVERRIDE_LOCATION=/etc/opencloud/csp.yaml",
            "PROXY_CSP_CONFIG_FILE_LOCATION=/etc/ocis/csp.yaml",
        ),
    ] {
        assert!(oc.lines().any(|l| l == oc_line), "{name}:\n{oc}");
        assert!(is.lines().any(|l| l == ocis_line), "{name}:\n{is}");
    }
    assert!(oc.contains("OC_SERVICE_ACCOUNT_SECRET") && oc.contains("OC_CORS_ALLOW_ORIGINS"));
    assert!(is.contains("OCIS_SERVICE_ACCOUNT_SECRET") && is.contains("OCIS_CORS_ALLOW_ORIGINS"));
    assert!(!oc.contains("OCIS_"), "{oc}");
    assert!(!is.contains("OC_"), "{is}");
    // Service settings carry no product prefix; demo accounts are the family's own.
    for text in [&oc, &is] {
        for line in [
            "PROXY_ENABLE_BASIC_AUTH=false",
            "IDM_CREATE_DEMO_USERS=false",
            "PROXY_DEBUG_ADDR=127.0.0.1:9205",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}:\n{text}");
        }
    }
    assert!(oc.contains("dennis") && !oc.contains("einstein"));
    assert!(is.contains("einstein") && !is.contains("dennis"));
    // Every line is KEY=value without white space in the value.
    assert!(env_lines(&opencloud).len() >= 10);
    env_lines(&ocis);
}

#[test]
fn one_file_gets_one_snippet_with_every_steps_lines() {
    let out = snippets(
        &[
            "versionDisclosure:X-Web-Version",
            "Strict-Transport-Security",
            "versionDisclosure:X-Idp-Version",
            "hstsPreload",
            "X-Frame-Options",
            "cookieSecure",
            "cookieHttpOnly",
            "cookieSameSite",
            "exposed:/.env",
            "exposed:/.git/config",
        ],
        ProductFamily::OpenCloud,
    );
    let one = |place: &str| -> &Snippet {
        let matching: Vec<&Snippet> = out.iter().filter(|s| s.file.starts_with(place)).collect();
        assert_eq!(matching.len(), 1, "{place}: {out:#?}");
        matching[0]
    };
    let nginx = &one("server block of the instance").text;
    let count = |text: &str, needle: &str| text.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(
        count(nginx, "add_header Strict-Transport-Security"),
        1,
        "{nginx}"
    );
    assert!(
        nginx.contains("max-age=31536000; includeSubDomains; preload"),
        "{nginx}"
    );
    assert_eq!(count(nginx, "proxy_hide_header X-Web-Version;"), 1);
    assert_eq!(count(nginx, "proxy_hide_header X-Idp-Version;"), 1);
    assert_eq!(count(nginx, "add_header X-Frame-Options"), 1);
    assert_eq!(count(nginx, "# a location with add_header"), 1);
    // nginx takes the first proxy_cookie_flags that matches a cookie: one line for all flags.
    assert_eq!(
        nginx
            .lines()
            .filter(|l| l.starts_with("proxy_cookie_flags"))
            .collect::<Vec<_>>(),
        ["proxy_cookie_flags ~ secure httponly samesite=lax;"]
    );
    assert!(nginx.contains("location = /.env { deny all; }"));
    assert!(nginx.contains("location = /.git/config { deny all; }"));
    assert_eq!(count(nginx, "rotate every secret"), 1);

    let caddy = &one("Caddyfile, the instance's site block").text;
    assert_eq!(count(caddy, "header {"), 1, "{caddy}");
    assert!(caddy.contains("\tdefer\n"));
    assert!(caddy.contains("\t-X-Web-Version\n") && caddy.contains("\t-X-Idp-Version\n"));
    assert_eq!(count(caddy, "Strict-Transport-Security"), 1);

    let apache = &one("the instance's <VirtualHost").text;
    assert_eq!(
        count(apache, "Header always set Strict-Transport-Security"),
        1
    );
    assert_eq!(count(apache, "Header edit Set-Cookie"), 3);

    let traefik = &one("docker-compose.yml, labels:").text;
    let attach = "- \"traefik.http.routers.opencloud.middlewares=opencloud-security\"";
    assert_eq!(count(traefik, attach), 1, "{traefik}");
    assert_eq!(
        traefik.lines().last(),
        Some(attach),
        "attached last:\n{traefik}"
    );
    for option in [
        "stsSeconds=31536000",
        "stsIncludeSubdomains=true",
        "stsPreload=true",
        "customResponseHeaders.X-Web-Version=",
        "customFrameOptionsValue=SAMEORIGIN",
    ] {
        assert_eq!(count(traefik, option), 1, "{option}\n{traefik}");
    }
    // The order of the forms is fixed.
    assert_eq!(
        forms(&out),
        [Form::Nginx, Form::Caddy, Form::Apache, Form::Traefik]
    );
}

#[test]
fn hsts_without_preload_alone_keeps_its_own_value() {
    let out = snippets(&["Strict-Transport-Security"], ProductFamily::OpenCloud);
    assert!(
        out[0].text.contains(
            "add_header Strict-Transport-Security \"max-age=31536000; includeSubDomains\" always;"
        ),
        "{}",
        out[0].text
    );
    assert!(!out[0].text.contains("preload"));
}

#[test]
fn the_caa_record_is_for_the_scanned_name_and_its_ca() {
    let caa = |host: &str, issuer: Option<&str>| -> Vec<Snippet> {
        for_findings(
            &["caaRecord"],
            &Subject {
                family: ProductFamily::OpenCloud,
                host,
                certificate_issuer: issuer,
            },
        )
    };
    let out = caa("https://Cloud.Example.com:8443/", None);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].form, Form::Zone);
    assert_eq!(
        out[0].file,
        "zone file of the DNS zone holding cloud.example.com"
    );
    let records: Vec<&str> = out[0]
        .text
        .lines()
        .filter(|l| !l.starts_with(';'))
        .collect();
    assert_eq!(
        records,
        ["cloud.example.com. IN CAA 0 issue \"letsencrypt.org\""]
    );
    assert!(
        out[0]
            .text
            .contains("; or the same record on example.com. covers")
    );
    assert!(
        out[0].text.contains("name the CAA domain"),
        "unknown CA: said so"
    );

    let out = caa("cloud.example.com", Some("CN=R11, O=Let's Encrypt, C=US"));
    assert!(out[0].text.contains("issue \"letsencrypt.org\""));
    assert!(!out[0].text.contains("name the CAA domain"));
    let out = caa(
        "files.example.org",
        Some("CN=DigiCert Global G2 TLS RSA SHA256 2020 CA1"),
    );
    assert!(
        out[0]
            .text
            .contains("files.example.org. IN CAA 0 issue \"digicert.com\"")
    );
    // A two-label name has no parent domain to suggest; an address has no CAA.
    assert!(
        !caa("example.com", None)[0]
            .text
            .contains("or the same record")
    );
    assert!(caa("10.0.0.5:9200", None).is_empty());
    assert!(caa("[2001:db8::1]:443", None).is_empty());
    assert!(caa("bad name;", None).is_empty());
}

#[test]
fn host_dependent_fixes_use_the_scanned_name() {
    let for_host = |host: &str, id: &str| -> Vec<Snippet> {
        for_findings(
            &[id],
            &Subject {
                family: ProductFamily::InfiniteScale,
                host,
                certificate_issuer: None,
            },
        )
    };
    let out = for_host(
        "https://files.example.org:9200",
        "identityProviderConsistent",
    );
    assert_eq!(out[0].text, "OCIS_URL=https://files.example.org:9200");
    let out = for_host("files.example.org", "httpsEnforced");
    let nginx = &out.iter().find(|s| s.form == Form::Nginx).unwrap();
    assert_eq!(nginx.file, "http block, beside the instance's server block");
    assert!(nginx.text.contains("server_name files.example.org;"));
    assert!(nginx.text.contains("return 301 https://$host$request_uri;"));
    let apache = &out.iter().find(|s| s.form == Form::Apache).unwrap();
    assert!(
        apache
            .text
            .contains("Redirect permanent / https://files.example.org/")
    );
    let traefik = &out.iter().find(|s| s.form == Form::Traefik).unwrap();
    assert!(
        traefik
            .text
            .contains("ocis-http.rule=Host(`files.example.org`)")
    );
    // Nothing host-dependent without a usable name.
    assert!(for_host("files example", "httpsEnforced").is_empty());
    assert!(for_host("", "identityProviderConsistent").is_empty());
    // A deny rule without a name still blocks the path, on every host.
    let out = for_host("bad host", "exposed:/ocis.yaml");
    let traefik = &out.iter().find(|s| s.form == Form::Traefik).unwrap();
    assert!(
        traefik.text.contains(".rule=Path(`/ocis.yaml`)"),
        "{}",
        traefik.text
    );
}

#[test]
fn debug_fixes_bind_the_service_and_rotate_what_config_showed() {
    let out = snippets(
        &[
            "debugEndpoint:9205/config",
            "debugEndpoint:9141/debug/pprof/",
            "debugPort:9239",
            "debugPort:9999",
        ],
        ProductFamily::OpenCloud,
    );
    assert_eq!(forms(&out), [Form::Env]);
    let text = &out[0].text;
    for line in [
        "PROXY_DEBUG_ADDR=127.0.0.1:9205",
        "FRONTEND_DEBUG_ADDR=127.0.0.1:9141",
        "FRONTEND_DEBUG_PPROF=false",
        "IDM_DEBUG_ADDR=127.0.0.1:9239",
        "# /config was reachable: set OC_SERVICE_ACCOUNT_SECRET anew, and every other secret it showed",
        "# bind the debug listener on port 9999 to 127.0.0.1 (its <SERVICE>_DEBUG_ADDR)",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    assert!(
        text.ends_with("# and publish no debug port (take it out of ports: in docker-compose.yml)")
    );
    // On the public address the proxy refuses the path.
    let out = snippets(&["debugEndpoint:/debug/pprof/"], ProductFamily::OpenCloud);
    assert!(
        out[0]
            .text
            .contains("location ^~ /debug/pprof/ { deny all; }")
    );
    assert!(out[1].text.contains("respond /debug/pprof/* 403"));
    assert!(out[3].text.contains("PathPrefix(`/debug/pprof/`)"));
}

#[test]
fn hosts_are_read_as_results_name_them() {
    let parsed = |t: &str| Host::parse(t).map(|h| (h.name, h.port, h.address));
    assert_eq!(
        parsed("cloud.example.com"),
        Some(("cloud.example.com".into(), None, false))
    );
    assert_eq!(
        parsed("127.0.0.1:9200"),
        Some(("127.0.0.1".into(), Some(9200), true))
    );
    assert_eq!(
        parsed("HTTPS://Cloud.Example.com.:8443/base"),
        Some(("cloud.example.com".into(), Some(8443), false))
    );
    assert_eq!(
        parsed("[fe80::1%25eth0]:9200"),
        Some(("fe80::1".into(), Some(9200), true))
    );
    for bad in [
        "",
        "a b",
        "x:notaport",
        "[zz]:1",
        "-x.example",
        "a_b.example",
        "[::1]x",
    ] {
        assert_eq!(parsed(bad), None, "{bad:?}");
    }
    assert_eq!(
        Host::parse("[::1]:9200").unwrap().https_origin(),
        "https://[::1]:9200"
    );
    assert_eq!(
        Host::parse("cloud.example.com:443").unwrap().https_origin(),
        "https://cloud.example.com"
    );
}

#[test]
fn forms_serialise_by_name_and_snippets_name_their_form_for() {
    let s = Snippet {
        form: Form::Traefik,
        file: "f".into(),
        text: "t".into(),
    };
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        serde_json::json!({"for": "traefik", "file": "f", "text": "t"})
    );
    for &form in Form::ALL {
        assert_eq!(
            <Form as crate::vocabulary::Vocabulary>::from_name(form.as_str()),
            Some(form)
        );
        assert_eq!(serde_json::to_value(form).unwrap(), form.as_str());
    }
    assert_eq!(
        <Form as crate::vocabulary::Vocabulary>::from_name("Nginx"),
        None
    );
}
