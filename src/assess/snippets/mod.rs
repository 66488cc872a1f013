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
                let mut forms: Vec<&str> = snippets.iter().map(|s| s.form.as_str()).collect();
                forms.dedup();
                format!(
                    "no {} snippet: the remediation plan's fixes are for {}",
                    only.map_or("", Form::as_str),
                    forms.join(", ")
                )
            };
            blocks.push(format!("# {host} ({product}): {why}\n"));
            continue;
        }
        for s in shown {
            blocks.push(format!(
                "{c} == {host} ({product}): {}, {} ==\n{}\n",
                s.form.as_str(),
                s.file,
                s.text,
                c = s.form.comment()
            ));
        }
    }
    blocks.join("\n")
}

mod dns;
mod instance;
mod proxy;

use dns::*;
use instance::*;
use proxy::*;

#[cfg(test)]
mod tests;
