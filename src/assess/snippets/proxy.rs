//! Reverse-proxy fixes, in the four forms: nginx, Caddy, Apache and Traefik labels.

use super::*;

/// A header name as it may go into configuration: a token of letters, digits and dashes.
pub(super) fn header_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
}

/// One Traefik label (`traefik.http.<key>`), as a Compose `labels:` list item.
pub(super) fn label(key: String) -> Entry {
    line(format!("- \"traefik.http.{key}\""))
}

/// A setting of the instance's security-headers middleware.
pub(super) fn middleware(ctx: &Ctx, option: &str) -> Entry {
    label(format!(
        "middlewares.{}-security.headers.{option}",
        ctx.router()
    ))
}

/// Attaching the security-headers middleware to the instance's router.
pub(super) fn attach(ctx: &Ctx) -> Vec<Entry> {
    let r = ctx.router();
    vec![
        line(format!(
            "# \"{r}\" stands for the instance's router: keep its other middlewares in the \
             list, comma-separated"
        ))
        .last(),
        label(format!("routers.{r}.middlewares={r}-security")).last(),
    ]
}

pub(super) const NGINX_HEADER_NOTE: &str = "# a location with add_header lines of its own needs the \
                                 add_header lines below there too";

/// Sends `name: value` in place of whatever the instance sends.
pub(super) fn set_header(
    ctx: &Ctx,
    name: &str,
    value: &str,
    slot: Option<(&'static str, u8)>,
    traefik: &[&str],
) -> Vec<Part> {
    let slotted = |e: Entry| match slot {
        Some((s, rank)) => e.slot(s, rank),
        None => e,
    };
    let mut labels: Vec<Entry> = traefik.iter().map(|o| middleware(ctx, o)).collect();
    labels.extend(attach(ctx));
    vec![
        part(
            Place::NginxServer,
            vec![
                line(NGINX_HEADER_NOTE),
                line(format!("proxy_hide_header {name};")),
                slotted(line(format!("add_header {name} \"{value}\" always;"))),
            ],
        ),
        part(
            Place::CaddySite,
            vec![slotted(
                line(format!("{name} \"{value}\"")).group(Group::CaddyHeaders),
            )],
        ),
        part(
            Place::ApacheVhost,
            vec![
                line(format!("Header unset {name}")),
                slotted(line(format!("Header always set {name} \"{value}\""))),
            ],
        ),
        part(Place::TraefikLabels, labels),
    ]
}

pub(super) fn hsts(ctx: &Ctx, preload: bool) -> Vec<Part> {
    let (value, rank) = if preload {
        ("max-age=31536000; includeSubDomains; preload", 2)
    } else {
        ("max-age=31536000; includeSubDomains", 1)
    };
    let mut traefik = vec!["stsSeconds=31536000", "stsIncludeSubdomains=true"];
    if preload {
        traefik.push("stsPreload=true");
    }
    let mut parts = set_header(
        ctx,
        checks::headers::STRICT_TRANSPORT_SECURITY.id,
        value,
        Some(("hsts", rank)),
        &traefik,
    );
    if preload {
        add_to_each(
            &mut parts,
            "then submit the domain at https://hstspreload.org/",
        );
    }
    parts
}

/// Adds the comment `text` to every part, in each form's comment syntax.
pub(super) fn add_to_each(parts: &mut [Part], text: &str) {
    for p in parts {
        let comment = p.place.form().comment();
        p.entries.push(line(format!("{comment} {text}")));
    }
}

pub(super) fn csp_passthrough() -> Vec<Part> {
    let keep = "keep the instance's Content-Security-Policy:";
    proxy_lines([
        format!(
            "# {keep} remove any proxy_hide_header Content-Security-Policy; and any \
             add_header Content-Security-Policy that replaces it"
        ),
        format!(
            "# {keep} remove any header -Content-Security-Policy (or a header line that \
             replaces it)"
        ),
        format!(
            "# {keep} remove any Header unset Content-Security-Policy (or a Header set that \
             replaces it)"
        ),
        format!(
            "# {keep} remove a customResponseHeaders.Content-Security-Policy= label (empty \
             removes it) and any contentSecurityPolicy that replaces it"
        ),
    ])
}

pub(super) fn https_redirect(ctx: &Ctx) -> Vec<Part> {
    let Some(host) = &ctx.host else {
        return Vec::new();
    };
    let name = host.url_name();
    let target = host.https_origin();
    let r = ctx.router();
    let redirect = format!("middlewares.{r}-https-redirect.redirectscheme");
    vec![
        part_line(
            Place::NginxHttp,
            format!(
                "# the server for plain HTTP: every request moves to https://\n\
                 server {{\n    listen 80;\n    listen [::]:80;\n    server_name {name};\n    \
                 return 301 {}$request_uri;\n}}",
                target.replacen(&name, "$host", 1)
            ),
        ),
        part_line(
            Place::CaddyTop,
            format!(
                "http://{name} {{\n\tredir {}{{uri}} permanent\n}}",
                target.replacen(&name, "{host}", 1)
            ),
        ),
        part_line(
            Place::ApacheServer,
            format!(
                "<VirtualHost *:80>\n    ServerName {name}\n    Redirect permanent / {target}/\n\
                 </VirtualHost>"
            ),
        ),
        part(
            Place::TraefikLabels,
            vec![
                line("# \"web\" stands for the entry point on port 80"),
                label(format!("routers.{r}-http.rule=Host(`{name}`)")),
                label(format!("routers.{r}-http.entrypoints=web")),
                label(format!("routers.{r}-http.middlewares={r}-https-redirect")),
                label(format!("routers.{r}-http.service=noop@internal")),
                label(format!("{redirect}.scheme=https")),
                label(format!("{redirect}.permanent=true")),
            ],
        ),
    ]
}

pub(super) fn tls_minimum() -> Vec<Part> {
    vec![
        part_line(Place::NginxServer, "ssl_protocols TLSv1.2 TLSv1.3;"),
        part_line(Place::CaddySite, "tls {\n\tprotocols tls1.2 tls1.3\n}"),
        part_line(Place::ApacheVhost, "SSLProtocol -all +TLSv1.2 +TLSv1.3"),
        part_line(
            Place::TraefikDynamic,
            "# the default TLS options; set the same in any tls.options entry a router \
             names\ntls:\n  options:\n    default:\n      minVersion: VersionTLS12",
        ),
    ]
}

/// A Traefik router that answers the requests `rule` matches itself, before the instance's
/// router, with nothing (`noop@internal`).
pub(super) fn refusing_router(router: &str, rule: String) -> Vec<Entry> {
    vec![
        label(format!("routers.{router}.rule={rule}")),
        label(format!("routers.{router}.priority=10000")),
        label(format!("routers.{router}.tls=true")),
        label(format!("routers.{router}.service=noop@internal")),
    ]
}

/// Refuses `path` (exact, or everything below a path ending in `/`) at the proxy; `slug`
/// names the Traefik router.
pub(super) fn deny_path(ctx: &Ctx, path: &str, slug: &str) -> Vec<Part> {
    // Everything below a directory, or the one file.
    let (nginx_match, caddy_glob, traefik_rule) = if path.ends_with('/') {
        ("^~", "*", "PathPrefix")
    } else {
        ("=", "", "Path")
    };
    let router = format!("{}-deny-{slug}", ctx.router());
    let rule = format!("{}{traefik_rule}(`{path}`)", ctx.traefik_host());
    vec![
        part_line(
            Place::NginxServer,
            format!("location {nginx_match} {path} {{ deny all; }}"),
        ),
        part_line(Place::CaddySite, format!("respond {path}{caddy_glob} 403")),
        part_line(
            Place::ApacheVhost,
            format!("<Location \"{path}\">\n    Require all denied\n</Location>"),
        ),
        part(Place::TraefikLabels, refusing_router(&router, rule)),
    ]
}

/// A path as it may go into configuration: absolute, plain characters, no `..`.
pub(super) fn safe_path(path: &str) -> bool {
    path.starts_with('/')
        && path.len() <= 200
        && !path.contains("//")
        && !path.split('/').any(|s| s == ".." || s == ".")
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'-' | b'_' | b'~'))
}

/// `/.git/config` -> `git-config`: a router name part.
pub(super) fn slug(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() { "root".into() } else { out }
}

pub(super) fn exposed_file(ctx: &Ctx, path: &str) -> Vec<Part> {
    if !safe_path(path) {
        return Vec::new();
    }
    let mut parts = deny_path(ctx, path, &slug(path));
    add_to_each(
        &mut parts,
        "and take the files out of what the web server publishes; rotate every secret they held",
    );
    parts
}

pub(super) fn directory_listing() -> Vec<Part> {
    proxy_lines([
        "autoindex off;".into(),
        "# folder listings: remove browse from every file_server directive".into(),
        "Options -Indexes".into(),
        "# folder listings: Traefik lists none itself; turn them off in the server behind this \
         router (nginx autoindex off, Apache Options -Indexes)"
            .into(),
    ])
}

pub(super) fn trace_disabled(ctx: &Ctx) -> Vec<Part> {
    let router = format!("{}-deny-trace", ctx.router());
    vec![
        part_line(
            Place::NginxServer,
            "if ($request_method = TRACE) {\n    return 405;\n}",
        ),
        part_line(
            Place::CaddySite,
            "@trace_method method TRACE\nrespond @trace_method 405",
        ),
        part_line(Place::ApacheVhost, "TraceEnable off"),
        part(
            Place::TraefikLabels,
            refusing_router(&router, format!("{}Method(`TRACE`)", ctx.traefik_host())),
        ),
    ]
}

pub(super) fn cors_reflection(ctx: &Ctx) -> Vec<Part> {
    let what = "stop echoing the request's Origin (or allowing null):";
    let mut parts = proxy_lines([
        format!(
            "# {what} remove add_header Access-Control-Allow-Origin $http_origin (and the \
             Access-Control-Allow-Credentials line with it); the instance answers CORS itself"
        ),
        format!(
            "# {what} remove header Access-Control-Allow-Origin {{http.request.header.Origin}} \
             (and Access-Control-Allow-Credentials with it); the instance answers CORS itself"
        ),
        format!(
            "# {what} remove Header set Access-Control-Allow-Origin \"%{{HTTP_ORIGIN}}e\" (and \
             the SetEnvIf Origin and Access-Control-Allow-Credentials lines with it)"
        ),
        format!(
            "# {what} remove accessControlAllowOriginListRegex matching any origin and \
             accessControlAllowCredentials=true from the headers middleware"
        ),
    ]);
    parts.push(part_line(
        Place::Env,
        format!(
            "# only when browser apps of other origins need the API, list them (the default \
             * is safe), e.g.\n# {}=https://app.example.com",
            ctx.setting("CORS_ALLOW_ORIGINS")
        ),
    ));
    parts
}

pub(super) fn version_header(ctx: &Ctx, name: &str) -> Vec<Part> {
    if !header_name(name) {
        return Vec::new();
    }
    let server = name.eq_ignore_ascii_case("server");
    let name = if server { "Server" } else { name };
    let mut labels = vec![middleware(ctx, &format!("customResponseHeaders.{name}="))];
    labels.extend(attach(ctx));
    let mut parts = vec![
        part_line(
            Place::NginxServer,
            if server {
                "server_tokens off;".to_string()
            } else {
                format!("proxy_hide_header {name};")
            },
        ),
        part(
            Place::CaddySite,
            vec![line(format!("-{name}")).group(Group::CaddyHeaders)],
        ),
        part_line(Place::ApacheVhost, format!("Header unset {name}")),
        part(Place::TraefikLabels, labels),
    ];
    if server {
        parts.push(part_line(Place::ApacheServer, "ServerTokens Prod"));
    }
    parts
}

pub(super) fn cookie_attribute(cookie: CookieAttribute) -> Vec<Part> {
    let (nginx, apache, caddy, attribute) = match cookie {
        CookieAttribute::Secure => (
            "secure",
            r#"Header edit Set-Cookie "(?i)^((?:(?!;\s*secure\b).)+)$" "$1; Secure""#,
            Some(r#"Set-Cookie "^(.+)$" "$1; Secure""#),
            "Secure",
        ),
        CookieAttribute::HttpOnly => (
            "httponly",
            r#"Header edit Set-Cookie "(?i)^((?:(?!;\s*httponly\b).)+)$" "$1; HttpOnly""#,
            Some(r#"Set-Cookie "^(.+)$" "$1; HttpOnly""#),
            "HttpOnly",
        ),
        CookieAttribute::SameSite => (
            "samesite=lax",
            r#"Header edit Set-Cookie "(?i)^((?:(?!;\s*samesite=).)+)$" "$1; SameSite=Lax""#,
            None,
            "SameSite=Lax",
        ),
    };
    let caddy = match caddy {
        // A second Secure or HttpOnly on a cookie that had one is harmless.
        Some(edit) => vec![
            line(
                "# the header block's Set-Cookie lines add the attribute to every cookie (one that \
                 had it names it twice, which browsers accept)",
            ),
            line(edit).group(Group::CaddyHeaders),
        ],
        // A second SameSite would override the first: add it where the cookie is made.
        None => vec![line(format!(
            "# Caddy cannot add {attribute} only where it is missing: set it where the cookie \
             is made"
        ))],
    };
    vec![
        part(
            Place::NginxServer,
            vec![line(nginx).group(Group::NginxCookieFlags)],
        ),
        part(Place::CaddySite, caddy),
        part_line(Place::ApacheVhost, apache),
        part_line(
            Place::TraefikLabels,
            format!(
                "# Traefik's headers middleware cannot edit Set-Cookie: set {attribute} where \
                 the cookie is made"
            ),
        ),
    ]
}
