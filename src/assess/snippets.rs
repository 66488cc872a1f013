//! Fix snippets: every remediation step as the lines to put into the file that has to change,
//! in that file's own syntax. Reverse-proxy fixes come in four forms (nginx server block,
//! Caddyfile site block, Apache `<VirtualHost>`, Traefik Docker labels), instance fixes as
//! environment lines with the family's setting names (`OC_*` for OpenCloud, `OCIS_*` for
//! ownCloud Infinite Scale), DNS fixes as zone-file lines for the scanned name.
//!
//! Pure: finding ids, the product family and the scanned host in, snippets out. Which check is
//! fixed how is its registry row's `fix` (`checks::Fix`); a check without one gets no snippet,
//! never a guessed one. Where no configuration line can express the fix (a CORS rule to
//! remove, a Set-Cookie Traefik cannot edit) the snippet is a comment saying what to do.
//! Snippets for the same file merge into one (`merge`): the header lines of several steps
//! become one nginx block, one Caddy `header` block, one Traefik middleware.
//!
//! Every form is checked by the real tool in `tests/it/snippets.rs` (`nginx -t`, `caddy
//! validate`, `apache2 -t`, `named-checkzone`, `sh` for the environment lines); Traefik has no
//! Debian package, so its labels are checked against its documented option names there.

use crate::checks::{self, CheckSpec, CookieAttribute, Fix};
use crate::family::{Family, ProductFamily};
use crate::report::ScanResult;

pub use crate::report::{Form, Snippet};

/// What the snippets are written for.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    pub family: ProductFamily,
    /// The scanned target as the result names it (`cloud.example.com`, `10.0.0.5:9200`,
    /// `https://cloud.example.com:8443`).
    pub host: &'a str,
    /// The issuer of the instance's certificate, when known: names the CA in a CAA record.
    pub certificate_issuer: Option<&'a str>,
}

/// The snippets that fix `ids` (finding ids, as in a remediation step's `resolves`), merged
/// into one per file, in the order of [`Form::ALL`].
pub fn for_findings<S: AsRef<str>>(ids: &[S], subject: &Subject) -> Vec<Snippet> {
    let ctx = Ctx::new(subject);
    let parts: Vec<Part> = ids.iter().flat_map(|id| fixes(id.as_ref(), &ctx)).collect();
    merge(parts, &ctx)
}

// ---------------------------------------------------------------------------------------------
// Where a snippet goes

/// A file, and where in it, that snippets are written for. The order is the output's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    NginxServer,
    NginxHttp,
    CaddySite,
    CaddyTop,
    ApacheVhost,
    ApacheServer,
    TraefikLabels,
    TraefikDynamic,
    Env,
    Zone,
}

impl Place {
    fn form(self) -> Form {
        match self {
            Place::NginxServer | Place::NginxHttp => Form::Nginx,
            Place::CaddySite | Place::CaddyTop => Form::Caddy,
            Place::ApacheVhost | Place::ApacheServer => Form::Apache,
            Place::TraefikLabels | Place::TraefikDynamic => Form::Traefik,
            Place::Env => Form::Env,
            Place::Zone => Form::Zone,
        }
    }

    fn file(self, ctx: &Ctx) -> String {
        let file = match self {
            Place::NginxServer => "server block of the instance (server { listen 443 ssl; ... })",
            Place::NginxHttp => "http block, beside the instance's server block",
            Place::CaddySite => "Caddyfile, the instance's site block",
            Place::CaddyTop => "Caddyfile, top level beside the instance's site block",
            Place::ApacheVhost => "the instance's <VirtualHost *:443>",
            Place::ApacheServer => {
                "server configuration outside any <VirtualHost> (apache2.conf, or a file in \
                 sites-enabled/ or conf-enabled/)"
            }
            Place::TraefikLabels => {
                "docker-compose.yml, labels: of the instance's service (Docker provider)"
            }
            Place::TraefikDynamic => "a dynamic configuration file (file provider)",
            Place::Env => ".env, or environment: of the instance's service in docker-compose.yml",
            Place::Zone => match &ctx.host {
                Some(h) => return format!("zone file of the DNS zone holding {}", h.name),
                None => "zone file of the DNS zone holding the name",
            },
        };
        file.to_string()
    }
}

/// Lines rendered together, wherever their first member stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// One `header { defer ... }` block of a Caddy site.
    CaddyHeaders,
    /// One `proxy_cookie_flags ~ ...;` line: nginx applies the first that matches a cookie.
    NginxCookieFlags,
}

/// One line (or block) of a snippet.
#[derive(Clone, Debug)]
struct Entry {
    text: String,
    /// Entries of one slot replace each other; the highest rank stays (HSTS with preload
    /// replaces HSTS without it).
    slot: Option<&'static str>,
    rank: u8,
    group: Option<Group>,
    /// Rendered after every other entry of the file (the line attaching a middleware).
    last: bool,
}

fn line(text: impl Into<String>) -> Entry {
    Entry {
        text: text.into(),
        slot: None,
        rank: 0,
        group: None,
        last: false,
    }
}

impl Entry {
    fn slot(mut self, slot: &'static str, rank: u8) -> Entry {
        self.slot = Some(slot);
        self.rank = rank;
        self
    }

    fn group(mut self, group: Group) -> Entry {
        self.group = Some(group);
        self
    }

    fn last(mut self) -> Entry {
        self.last = true;
        self
    }
}

/// What one finding adds to one file.
struct Part {
    place: Place,
    entries: Vec<Entry>,
}

fn part(place: Place, entries: Vec<Entry>) -> Part {
    Part { place, entries }
}

fn part_line(place: Place, text: impl Into<String>) -> Part {
    part(place, vec![line(text)])
}

/// One line for each reverse proxy, where its fixes of the instance's site go.
fn proxy_lines(lines: [String; 4]) -> Vec<Part> {
    let places = [
        Place::NginxServer,
        Place::CaddySite,
        Place::ApacheVhost,
        Place::TraefikLabels,
    ];
    places
        .into_iter()
        .zip(lines)
        .map(|(place, text)| part_line(place, text))
        .collect()
}

/// The parts, one snippet per file.
fn merge(parts: Vec<Part>, ctx: &Ctx) -> Vec<Snippet> {
    let places: std::collections::BTreeSet<Place> = parts.iter().map(|p| p.place).collect();
    let mut out = Vec::new();
    for place in places {
        let mut entries: Vec<Entry> = Vec::new();
        let here = parts.iter().filter(|p| p.place == place);
        for e in here.flat_map(|p| &p.entries) {
            if entries
                .iter()
                .any(|have| have.text == e.text && have.group == e.group)
            {
                continue;
            }
            match e
                .slot
                .and_then(|s| entries.iter().position(|have| have.slot == Some(s)))
            {
                Some(at) if entries[at].rank < e.rank => entries[at] = e.clone(),
                Some(_) => {}
                None => entries.push(e.clone()),
            }
        }
        let mut blocks: Vec<String> = Vec::new();
        let mut rendered: Vec<Group> = Vec::new();
        let ordered = entries
            .iter()
            .filter(|e| !e.last)
            .chain(entries.iter().filter(|e| e.last));
        for e in ordered {
            match e.group {
                None => blocks.push(e.text.clone()),
                Some(g) if rendered.contains(&g) => {}
                Some(g) => {
                    rendered.push(g);
                    let items: Vec<&str> = entries
                        .iter()
                        .filter(|m| m.group == Some(g))
                        .map(|m| m.text.as_str())
                        .collect();
                    blocks.push(render_group(g, &items));
                }
            }
        }
        out.push(Snippet {
            form: place.form(),
            file: place.file(ctx),
            text: blocks.join("\n"),
        });
    }
    out
}

fn render_group(group: Group, items: &[&str]) -> String {
    match group {
        Group::CaddyHeaders => {
            let lines: String = items.iter().map(|item| format!("\t{item}\n")).collect();
            format!("header {{\n\tdefer\n{lines}}}")
        }
        Group::NginxCookieFlags => format!("proxy_cookie_flags ~ {};", items.join(" ")),
    }
}

// ---------------------------------------------------------------------------------------------
// The scanned name

/// The scanned name and port, as they go into configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Host {
    /// Lower case, without brackets or trailing dot.
    name: String,
    port: Option<u16>,
    /// An IP address rather than a DNS name.
    address: bool,
}

impl Host {
    /// Parses the result's `host`; `None` for anything that is not a plain name or address
    /// (it would go into configuration files as written).
    fn parse(target: &str) -> Option<Host> {
        let mut rest = target.trim();
        for scheme in ["https://", "http://"] {
            // `get`: a byte count that cuts a character is no scheme, and no panic.
            if rest
                .get(..scheme.len())
                .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
            {
                rest = &rest[scheme.len()..];
            }
        }
        let rest = rest.split(['/', '?', '#']).next().unwrap_or("");
        let (name, port) = if let Some(inner) = rest.strip_prefix('[') {
            let (inside, after) = inner.split_once(']')?;
            let inside = inside.split('%').next().unwrap_or("");
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?.parse::<u16>().ok()?),
            };
            inside.parse::<std::net::Ipv6Addr>().ok()?;
            (inside.to_ascii_lowercase(), port)
        } else {
            match rest.split_once(':') {
                Some((name, port)) => (name.to_string(), Some(port.parse::<u16>().ok()?)),
                None => (rest.to_string(), None),
            }
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if name.is_empty() || name.len() > 253 {
            return None;
        }
        let address = name.parse::<std::net::IpAddr>().is_ok();
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        if !address && !name.split('.').all(label_ok) {
            return None;
        }
        Some(Host {
            name,
            port,
            address,
        })
    }

    /// The name as a URL writes it (IPv6 bracketed).
    fn url_name(&self) -> String {
        if self.name.contains(':') {
            format!("[{}]", self.name)
        } else {
            self.name.clone()
        }
    }

    /// `https://name`, with the port unless it is 443.
    fn https_origin(&self) -> String {
        match self.port {
            Some(p) if p != 443 => format!("https://{}:{p}", self.url_name()),
            _ => format!("https://{}", self.url_name()),
        }
    }
}

struct Ctx {
    family: &'static Family,
    host: Option<Host>,
    issuer: Option<String>,
}

impl Ctx {
    fn new(subject: &Subject) -> Ctx {
        Ctx {
            family: subject.family.describe(),
            host: Host::parse(subject.host),
            issuer: subject.certificate_issuer.map(str::to_string),
        }
    }

    /// The product-wide setting `name` (`URL` -> `OC_URL` / `OCIS_URL`).
    fn setting(&self, name: &str) -> String {
        format!("{}{name}", self.family.settings_prefix)
    }

    /// The name routers and middlewares carry in Traefik labels (`opencloud`, `ocis`).
    fn router(&self) -> &'static str {
        self.family.id
    }

    /// `Host(`name`) && ` for a Traefik rule, or nothing without a usable name.
    fn traefik_host(&self) -> String {
        match &self.host {
            Some(h) => format!("Host(`{}`) && ", h.url_name()),
            None => String::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Each check's fix (its row's `fix`), written

/// The registry row of `id` and the member's detail (after `root:`, empty for a plain id),
/// when the check has a fix. A family's root alone (`exposed`) names no member to fix.
fn fixable(id: &str) -> Option<(&'static CheckSpec, &str)> {
    let check = checks::spec(id).filter(|c| c.fix != Fix::None)?;
    match check.family {
        None => Some((check, "")),
        Some(_) => id
            .split_once(':')
            .map(|(_, detail)| detail)
            .filter(|detail| !detail.is_empty())
            .map(|detail| (check, detail)),
    }
}

fn fixes(id: &str, ctx: &Ctx) -> Vec<Part> {
    let Some((check, detail)) = fixable(id) else {
        return Vec::new();
    };
    match check.fix {
        Fix::None => Vec::new(),
        Fix::HttpsRedirect => https_redirect(ctx),
        Fix::TlsMinimum => tls_minimum(),
        Fix::Hsts { preload } => hsts(ctx, preload),
        Fix::Header {
            name,
            value,
            traefik,
        } => set_header(ctx, name, value, None, &[traefik]),
        Fix::CspPassthrough => csp_passthrough(),
        Fix::CspWithoutInline => csp_without_inline(ctx),
        Fix::DenyPath => exposed_file(ctx, detail),
        Fix::DirectoryListing => directory_listing(),
        Fix::TraceDisabled => trace_disabled(ctx),
        Fix::CorsReflection => cors_reflection(ctx),
        Fix::StripVersionHeader => version_header(ctx, detail),
        Fix::Cookie(attribute) => cookie_attribute(attribute),
        Fix::DebugPort => debug_port(detail),
        Fix::DebugEndpoint => debug_endpoint(ctx, detail),
        Fix::DemoUsers => demo_users(ctx),
        Fix::BasicAuthOff => vec![part_line(Place::Env, "PROXY_ENABLE_BASIC_AUTH=false")],
        Fix::PublicUrl => public_url(ctx),
        Fix::PublicLinkPassword => product_settings(
            ctx,
            &[
                ("SHARING_PUBLIC_SHARE_MUST_HAVE_PASSWORD", "true"),
                ("SHARING_PUBLIC_WRITEABLE_SHARE_MUST_HAVE_PASSWORD", "true"),
            ],
        ),
        Fix::PasswordPolicy => product_settings(
            ctx,
            &[
                ("PASSWORD_POLICY_DISABLED", "false"),
                ("PASSWORD_POLICY_MIN_CHARACTERS", "8"),
                ("PASSWORD_POLICY_MIN_LOWERCASE_CHARACTERS", "1"),
                ("PASSWORD_POLICY_MIN_UPPERCASE_CHARACTERS", "1"),
                ("PASSWORD_POLICY_MIN_DIGITS", "1"),
                ("PASSWORD_POLICY_MIN_SPECIAL_CHARACTERS", "1"),
            ],
        ),
        Fix::CaaRecord => caa_record(ctx),
    }
}

// ---------------------------------------------------------------------------------------------
// Reverse-proxy fixes

/// A header name as it may go into configuration: a token of letters, digits and dashes.
fn header_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
}

/// One Traefik label (`traefik.http.<key>`), as a Compose `labels:` list item.
fn label(key: String) -> Entry {
    line(format!("- \"traefik.http.{key}\""))
}

/// A setting of the instance's security-headers middleware.
fn middleware(ctx: &Ctx, option: &str) -> Entry {
    label(format!(
        "middlewares.{}-security.headers.{option}",
        ctx.router()
    ))
}

/// Attaching the security-headers middleware to the instance's router.
fn attach(ctx: &Ctx) -> Vec<Entry> {
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

const NGINX_HEADER_NOTE: &str = "# a location with add_header lines of its own needs the \
                                 add_header lines below there too";

/// Sends `name: value` in place of whatever the instance sends.
fn set_header(
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

fn hsts(ctx: &Ctx, preload: bool) -> Vec<Part> {
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
fn add_to_each(parts: &mut [Part], text: &str) {
    for p in parts {
        let comment = p.place.form().comment();
        p.entries.push(line(format!("{comment} {text}")));
    }
}

fn csp_passthrough() -> Vec<Part> {
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

fn https_redirect(ctx: &Ctx) -> Vec<Part> {
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

fn tls_minimum() -> Vec<Part> {
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
fn refusing_router(router: &str, rule: String) -> Vec<Entry> {
    vec![
        label(format!("routers.{router}.rule={rule}")),
        label(format!("routers.{router}.priority=10000")),
        label(format!("routers.{router}.tls=true")),
        label(format!("routers.{router}.service=noop@internal")),
    ]
}

/// Refuses `path` (exact, or everything below a path ending in `/`) at the proxy; `slug`
/// names the Traefik router.
fn deny_path(ctx: &Ctx, path: &str, slug: &str) -> Vec<Part> {
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
fn safe_path(path: &str) -> bool {
    path.starts_with('/')
        && path.len() <= 200
        && !path.contains("//")
        && !path.split('/').any(|s| s == ".." || s == ".")
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'-' | b'_' | b'~'))
}

/// `/.git/config` -> `git-config`: a router name part.
fn slug(path: &str) -> String {
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

fn exposed_file(ctx: &Ctx, path: &str) -> Vec<Part> {
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

fn directory_listing() -> Vec<Part> {
    proxy_lines([
        "autoindex off;".into(),
        "# folder listings: remove browse from every file_server directive".into(),
        "Options -Indexes".into(),
        "# folder listings: Traefik lists none itself; turn them off in the server behind this \
         router (nginx autoindex off, Apache Options -Indexes)"
            .into(),
    ])
}

fn trace_disabled(ctx: &Ctx) -> Vec<Part> {
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

fn cors_reflection(ctx: &Ctx) -> Vec<Part> {
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

fn version_header(ctx: &Ctx, name: &str) -> Vec<Part> {
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

fn cookie_attribute(cookie: CookieAttribute) -> Vec<Part> {
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

// ---------------------------------------------------------------------------------------------
// Instance fixes

/// The services' default debug ports (both families use the same): `<SERVICE>_DEBUG_ADDR`
/// binds each (opencloud-facts.md 2.3, ocis-facts.md 4).
const DEBUG_SERVICES: &[(u16, &str)] = &[
    (9104, "WEB"),
    (9114, "OCS"),
    (9119, "WEBDAV"),
    (9124, "GRAPH"),
    (9129, "POLICIES"),
    (9134, "IDP"),
    (9139, "SSE"),
    (9141, "FRONTEND"),
    (9143, "GATEWAY"),
    (9145, "USERS"),
    (9147, "AUTH_BASIC"),
    (9149, "AUTH_BEARER"),
    (9151, "SHARING"),
    (9156, "STORAGE_SHARES"),
    (9159, "STORAGE_USERS"),
    (9161, "GROUPS"),
    (9163, "OCDAV"),
    (9165, "APP_PROVIDER"),
    (9167, "AUTH_MACHINE"),
    (9174, "NOTIFICATIONS"),
    (9179, "STORAGE_PUBLICLINK"),
    (9189, "THUMBNAILS"),
    (9194, "SETTINGS"),
    (9197, "ACTIVITYLOG"),
    (9198, "AUTH_SERVICE"),
    (9205, "PROXY"),
    (9214, "USERLOG"),
    (9217, "STORAGE_SYSTEM"),
    (9224, "SEARCH"),
    (9229, "AUDIT"),
    (9234, "NATS"),
    (9239, "IDM"),
    (9243, "APP_REGISTRY"),
    (9245, "AUTH_APP"),
    (9255, "POSTPROCESSING"),
    (9260, "CLIENTLOG"),
    (9269, "INVITATIONS"),
    (9270, "EVENTHISTORY"),
    (9277, "ANTIVIRUS"),
    (9279, "WEBFINGER"),
    (9281, "OCM"),
    (9304, "COLLABORATION"),
];

fn debug_service(port: u16) -> Option<&'static str> {
    DEBUG_SERVICES
        .iter()
        .find(|(p, _)| *p == port)
        .map(|(_, s)| *s)
}

/// Binding the debug listener of `port` to loopback, and not publishing it.
fn loopback_entries(port: u16) -> Vec<Entry> {
    vec![
        match debug_service(port) {
            Some(service) => line(format!("{service}_DEBUG_ADDR=127.0.0.1:{port}")),
            None => line(format!(
                "# bind the debug listener on port {port} to 127.0.0.1 (its \
                 <SERVICE>_DEBUG_ADDR)"
            )),
        },
        line("# and publish no debug port (take it out of ports: in docker-compose.yml)").last(),
    ]
}

fn debug_port(port: &str) -> Vec<Part> {
    match port.parse::<u16>() {
        Ok(port) if port > 0 => vec![part(Place::Env, loopback_entries(port))],
        _ => Vec::new(),
    }
}

/// `debugEndpoint:/config` (the public address) or `debugEndpoint:9205/config` (a debug
/// port).
fn debug_endpoint(ctx: &Ctx, detail: &str) -> Vec<Part> {
    let digits = detail.bytes().take_while(u8::is_ascii_digit).count();
    let (port, path) = detail.split_at(digits);
    if !safe_path(path) {
        return Vec::new();
    }
    let rotate = line(format!(
        "# /config was reachable: set {} anew, and every other secret it showed",
        ctx.setting("SERVICE_ACCOUNT_SECRET")
    ));
    if port.is_empty() {
        let mut parts = deny_path(ctx, path, &format!("debug-{}", slug(path)));
        if path == "/config" {
            parts.push(part(Place::Env, vec![rotate]));
        }
        return parts;
    }
    let Some(port) = port.parse::<u16>().ok().filter(|p| *p > 0) else {
        return Vec::new();
    };
    let mut entries = loopback_entries(port);
    let service = debug_service(port);
    match (path, service) {
        ("/config", _) => entries.push(rotate),
        ("/debug/pprof/", Some(service)) => {
            entries.push(line(format!("{service}_DEBUG_PPROF=false")));
        }
        ("/metrics", Some(service)) => entries.push(line(format!(
            "# {service}_DEBUG_TOKEN=<a long random token> asks for it on /metrics"
        ))),
        _ => {}
    }
    vec![part(Place::Env, entries)]
}

fn demo_users(ctx: &Ctx) -> Vec<Part> {
    let names: Vec<&str> = ctx.family.demo_accounts.iter().map(|a| a.user).collect();
    vec![part(
        Place::Env,
        vec![
            line("IDM_CREATE_DEMO_USERS=false"),
            line(format!(
                "# and delete the accounts {}: switching the setting off removes none",
                names.join(", ")
            )),
        ],
    )]
}

fn public_url(ctx: &Ctx) -> Vec<Part> {
    let Some(host) = &ctx.host else {
        return Vec::new();
    };
    vec![part_line(
        Place::Env,
        format!("{}={}", ctx.setting("URL"), host.https_origin()),
    )]
}

/// Product-wide settings (`URL` is `OC_URL` or `OCIS_URL`) as environment lines.
fn product_settings(ctx: &Ctx, settings: &[(&str, &str)]) -> Vec<Part> {
    let lines = settings
        .iter()
        .map(|(name, value)| line(format!("{}={value}", ctx.setting(name))));
    vec![part(Place::Env, lines.collect())]
}

fn csp_without_inline(ctx: &Ctx) -> Vec<Part> {
    vec![part(
        Place::Env,
        vec![
            line(
                "# a policy file (YAML, as the built-in one) whose script-src has no \
                 'unsafe-inline' or 'unsafe-eval'; nonces or hashes where inline code is needed",
            ),
            line(format!(
                "{}={}/csp.yaml",
                ctx.family.csp_replace_setting, ctx.family.config_dir
            )),
        ],
    )]
}

// ---------------------------------------------------------------------------------------------
// DNS fixes

/// CAA domains of well-known CAs, by a word of the certificate issuer.
const CAA_DOMAINS: &[(&str, &str)] = &[
    ("let's encrypt", "letsencrypt.org"),
    ("zerossl", "sectigo.com"),
    ("sectigo", "sectigo.com"),
    ("digicert", "digicert.com"),
    ("globalsign", "globalsign.com"),
    ("google trust services", "pki.goog"),
    ("amazon", "amazon.com"),
    ("buypass", "buypass.com"),
];

fn caa_record(ctx: &Ctx) -> Vec<Part> {
    let Some(host) = ctx.host.as_ref().filter(|h| !h.address) else {
        return Vec::new();
    };
    let issuer = ctx.issuer.as_deref().unwrap_or("").to_ascii_lowercase();
    let known = CAA_DOMAINS
        .iter()
        .find(|(word, _)| issuer.contains(word))
        .map(|(_, domain)| *domain);
    let mut entries = vec![line(match known {
        Some(_) => "; only the CA that issues the instance's certificate may issue for the name",
        None => {
            "; letsencrypt.org is Let's Encrypt: name the CAA domain of the CA that issues \
                 the instance's certificate instead"
        }
    })];
    entries.push(line(format!(
        "{}. IN CAA 0 issue \"{}\"",
        host.name,
        known.unwrap_or("letsencrypt.org")
    )));
    if let Some((_, parent)) = host.name.split_once('.')
        && parent.contains('.')
    {
        entries.push(line(format!(
            "; or the same record on {parent}. covers every name below it"
        )));
    }
    vec![part(Place::Zone, entries)]
}

// ---------------------------------------------------------------------------------------------
// Saved result documents (`check-storage-scanner snippets`)

/// The snippets of every host of saved result documents (what `--format json` or `scan`
/// printed), ready to paste: each under a comment line naming the host, the form and the file
/// (`# == cloud.example.com (OpenCloud): nginx, ... ==`); `only` keeps one form. A host with
/// nothing to paste gets one comment line saying why. The snippets are worked out again from
/// the finding ids of each remediation plan, so a document saved before snippets existed gets
/// them too.
pub fn saved_text(documents: &[ScanResult], only: Option<Form>) -> String {
    let mut blocks: Vec<String> = Vec::new();
    for doc in documents {
        let host: String = doc
            .host
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .take(200)
            .collect();
        let family = doc.product.as_ref().map(|p| p.family);
        let product = family.map_or("unknown product", |f| f.display_name());
        let steps = &doc.remediation_plan.steps;
        let ids: Vec<&String> = steps.iter().flat_map(|s| &s.resolves).collect();
        let snippets = for_findings(
            &ids,
            &Subject {
                family: family.unwrap_or(ProductFamily::OpenCloud),
                host: &doc.host,
                certificate_issuer: doc
                    .tls
                    .as_ref()
                    .and_then(|t| t.certificate_issuer.as_deref()),
            },
        );
        let shown: Vec<&Snippet> = snippets
            .iter()
            .filter(|s| only.is_none_or(|form| s.form == form))
            .collect();
        if shown.is_empty() {
            let why = if doc.error.is_some() {
                "the scan failed, so its result has nothing to fix; scan again".to_string()
            } else if steps.is_empty() {
                "nothing to fix (the remediation plan is empty)".to_string()
            } else if snippets.is_empty() {
                format!(
                    "no snippet: the remediation plan's {} step(s) change no configuration file \
                     (an upgrade, a certificate, ...); see the plan",
                    steps.len()
                )
            } else {
                let mut forms: Vec<&str> = snippets.iter().map(|s| s.form.name()).collect();
                forms.dedup();
                format!(
                    "no {} snippet: the remediation plan's fixes are for {}",
                    only.map_or("", Form::name),
                    forms.join(", ")
                )
            };
            blocks.push(format!("# {host} ({product}): {why}\n"));
            continue;
        }
        for s in shown {
            blocks.push(format!(
                "{c} == {host} ({product}): {}, {} ==\n{}\n",
                s.form.name(),
                s.file,
                s.text,
                c = s.form.comment()
            ));
        }
    }
    blocks.join("\n")
}

#[cfg(test)]
mod tests;
