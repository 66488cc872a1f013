//! Scan targets: what the operator wrote in `-H`/`--host`/`COS_HOST`, parsed once.
//!
//! An entry is a hostname, an IPv4 address, a bracketed IPv6 address or an `http(s)://` URL,
//! each with an optional port; a URL may also carry a base path. Anything ambiguous or
//! unsafe (bare IPv6, credentials, query strings, stray whitespace) is refused with a message
//! that says what to write instead, because the message ends up in a monitoring system.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// What every refusal suggests writing instead.
const ACCEPTED_FORMS: &str = "give a hostname, IPv4, [IPv6] or URL";
/// RFC 1035 limits on DNS names (without the trailing root dot).
const MAX_NAME_LEN: usize = 253;
const MAX_LABEL_LEN: usize = 63;

crate::vocabulary::vocabulary! {
    /// The scheme the operator wrote, if any, and the one a scan reached the instance over
    /// (the result document's `tls.scheme`).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum Scheme {
        #[default]
        Https = "https",
        Http = "http",
    }
}

/// The host part of a target: a DNS name (lowercase, no trailing dot) or an address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostName {
    Domain(String),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
}

/// One parsed scan target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The entry as written, trimmed.
    pub input: String,
    pub host: HostName,
    /// The port, when one was written.
    pub port: Option<u16>,
    /// The scheme, when the entry was a URL.
    pub scheme: Option<Scheme>,
    /// URL path prefix without trailing slash; `""` for none.
    pub base_path: String,
    /// The zone of a link-local IPv6 address (`[fe80::1%25eth0]`, RFC 6874): the interface
    /// to reach it through. Never sent on the wire (URLs, Host headers) and never to DNS.
    pub zone: Option<String>,
}

/// A target that cannot be scanned, with a one-line message naming the problem and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetError(pub String);

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Target {
    /// Parses one entry (surrounding whitespace is ignored).
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        let input = text.trim();
        let shown = shorten(input);
        let fail = |problem: &str, fix: &str| {
            TargetError(format!("invalid target \"{shown}\": {problem}; {fix}"))
        };

        if input.is_empty() {
            return Err(TargetError(format!("empty target; {ACCEPTED_FORMS}")));
        }
        if input.chars().any(char::is_whitespace) {
            return Err(fail(
                "contains whitespace",
                "remove it, and separate several targets with commas",
            ));
        }
        if input.chars().any(char::is_control) {
            return Err(fail("contains control characters", "remove them"));
        }

        let (scheme, authority, base_path) = match input.find("://") {
            Some(at) => {
                let scheme = match input[..at].to_ascii_lowercase().as_str() {
                    "https" => Scheme::Https,
                    "http" => Scheme::Http,
                    _ => {
                        return Err(fail(
                            &format!("unsupported scheme \"{}\"", &input[..at]),
                            "use https:// or http://, or give the host without a scheme",
                        ));
                    }
                };
                let rest = &input[at + 3..];
                let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                let (authority, tail) = rest.split_at(authority_end);
                if let Some(at_sign) = authority.rfind('@') {
                    // The message must not carry the password on to the monitoring system.
                    let redacted = shorten(&format!(
                        "{}://***@{}{tail}",
                        &input[..at],
                        &authority[at_sign + 1..]
                    ));
                    return Err(TargetError(format!(
                        "invalid target \"{redacted}\": contains user credentials; \
                         credentials must not be given in the target, remove the \"user:password@\" part"
                    )));
                }
                if tail.contains(['?', '#']) {
                    return Err(fail(
                        "contains a query or fragment",
                        "remove everything from the \"?\" or \"#\"",
                    ));
                }
                if !tail.is_ascii() {
                    return Err(fail(
                        "the URL path contains non-ASCII characters",
                        "percent-encode them",
                    ));
                }
                (
                    Some(scheme),
                    authority,
                    tail.trim_end_matches('/').to_string(),
                )
            }
            None => {
                if let Some(at_sign) = input.rfind('@') {
                    let redacted = shorten(&format!("***@{}", &input[at_sign + 1..]));
                    return Err(TargetError(format!(
                        "invalid target \"{redacted}\": contains user credentials; \
                         credentials must not be given in the target, remove the \"user@\" part"
                    )));
                }
                if input.contains(['?', '#']) {
                    return Err(fail(
                        "contains a query or fragment",
                        "remove everything from the \"?\" or \"#\"",
                    ));
                }
                // `host:port/` is the instance root, as a person means it (a copied address
                // bar); any other path needs a scheme so it is read as a URL on purpose.
                let authority = input.trim_end_matches('/');
                if authority.contains('/') {
                    return Err(fail(
                        "a path needs a scheme",
                        "write it as a URL, e.g. https://host/path",
                    ));
                }
                (None, authority, String::new())
            }
        };

        let (host, zone, port) = parse_authority(authority, &fail)?;
        Ok(Target {
            input: input.to_string(),
            host,
            port,
            scheme,
            base_path,
            zone,
        })
    }

    /// The host without brackets or port: `example.com`, `192.0.2.1`, `::1` (for SNI and DNS).
    pub fn host_str(&self) -> String {
        match &self.host {
            HostName::Domain(name) => name.clone(),
            HostName::Ipv4(addr) => addr.to_string(),
            HostName::Ipv6(addr) => addr.to_string(),
        }
    }

    /// Host and the given port, IPv6 bracketed: `example.com:8443`, `[::1]:9200`
    /// (for the Host header and display).
    pub fn authority(&self, port: u16) -> String {
        match &self.host {
            HostName::Ipv6(addr) => format!("[{addr}]:{port}"),
            _ => format!("{}:{port}", self.host_str()),
        }
    }

    /// What decides a scan of the target, as the scan service's cache and single flight and
    /// the public API's records key it: names are lower-cased by the parser; the port counts as
    /// written (a written port is used for HTTPS and plain HTTP alike, none means 443 then
    /// 80); the scheme does not count, since transport selection decides it either way.
    pub fn scan_key(&self) -> String {
        format!("{}{}", self.display_name(), self.base_path)
    }

    /// What outputs call the host: the host, plus `:port` only when a port was given
    /// (IPv6 is bracketed only then), and an IPv6 zone as `%zone`.
    pub fn display_name(&self) -> String {
        let zone = self
            .zone
            .as_ref()
            .map(|z| format!("%{z}"))
            .unwrap_or_default();
        match (self.port, &self.host) {
            (Some(port), HostName::Ipv6(addr)) => format!("[{addr}{zone}]:{port}"),
            (Some(port), _) => self.authority(port),
            (None, _) => format!("{}{zone}", self.host_str()),
        }
    }
}

/// The longest target quoted whole in a message; a longer one is cut with `…` (a pasted
/// document must not fill the monitoring output).
const SHOWN_TARGET_CHARS: usize = 80;

fn shorten(input: &str) -> String {
    if input.chars().count() <= SHOWN_TARGET_CHARS {
        input.to_string()
    } else {
        let head: String = input.chars().take(SHOWN_TARGET_CHARS - 1).collect();
        format!("{head}…")
    }
}

/// Parses a comma-separated list of targets; entries are trimmed and empty entries dropped.
/// At least one target is required.
pub fn parse_list(text: &str) -> Result<Vec<Target>, TargetError> {
    let targets = text
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(Target::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if targets.is_empty() {
        return Err(TargetError(
            "no target given; pass -H/--host or COS_HOST".to_string(),
        ));
    }
    Ok(targets)
}

/// Splits `host[:port]` or `[v6][:port]` into the host, the IPv6 zone and the port, and
/// validates them.
fn parse_authority(
    authority: &str,
    fail: &dyn Fn(&str, &str) -> TargetError,
) -> Result<(HostName, Option<String>, Option<u16>), TargetError> {
    if authority.is_empty() {
        return Err(fail("no host name", ACCEPTED_FORMS));
    }

    if let Some(bracketed) = authority.strip_prefix('[') {
        let Some(close) = bracketed.find(']') else {
            return Err(fail(
                "missing \"]\" after the IPv6 address",
                "write [2001:db8::1] or [2001:db8::1]:443",
            ));
        };
        let inside = &bracketed[..close];
        // RFC 6874 writes the zone `%25<zone>`; a bare `%<zone>` is what people type.
        let (address, zone) = match inside.split_once('%') {
            Some((address, zone)) => (address, Some(zone.strip_prefix("25").unwrap_or(zone))),
            None => (inside, None),
        };
        let addr: Ipv6Addr = address.parse().map_err(|_| {
            fail(
                &format!("\"{address}\" is not an IPv6 address"),
                "brackets are only for IPv6 addresses, e.g. [2001:db8::1] or [fe80::1%25eth0]",
            )
        })?;
        let interface = |z: &str| {
            let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-');
            !z.is_empty() && z.len() <= 64 && z.chars().all(allowed)
        };
        if zone.is_some_and(|z| !interface(z)) {
            return Err(fail(
                "the IPv6 zone is not an interface name or number",
                "write [fe80::1%25eth0] (the interface after %25)",
            ));
        }
        let after = &bracketed[close + 1..];
        let port = match after.strip_prefix(':') {
            Some(port) => Some(parse_port(port, fail)?),
            None if after.is_empty() => None,
            None => {
                return Err(fail(
                    &format!("unexpected \"{after}\" after the IPv6 address"),
                    "write [address] or [address]:port",
                ));
            }
        };
        return Ok((HostName::Ipv6(addr), zone.map(str::to_string), port));
    }

    let (host, port) = match authority.matches(':').count() {
        0 => (authority, None),
        1 => {
            let (host, port) = authority.split_once(':').unwrap_or((authority, ""));
            (host, Some(parse_port(port, fail)?))
        }
        _ => {
            return Err(if authority.parse::<Ipv6Addr>().is_ok() {
                fail(
                    "IPv6 addresses must be bracketed",
                    &format!("write [{authority}], or [{authority}]:port with a port"),
                )
            } else {
                fail(
                    "too many \":\"",
                    "write host:port, or bracket an IPv6 address as [2001:db8::1]:port",
                )
            });
        }
    };

    if host.is_empty() {
        return Err(fail("no host name", ACCEPTED_FORMS));
    }
    if !host.is_ascii() {
        return Err(fail(
            "internationalized host names are not accepted as written",
            "give the punycode (xn--) form of the name",
        ));
    }
    Ok((parse_host(host, fail)?, None, port))
}

fn parse_port(text: &str, fail: &dyn Fn(&str, &str) -> TargetError) -> Result<u16, TargetError> {
    const FIX: &str = "give a port number from 1 to 65535";
    if text.is_empty() {
        return Err(fail("empty port after \":\"", FIX));
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail(&format!("port \"{text}\" is not a number"), FIX));
    }
    match text.parse::<u16>() {
        Ok(0) => Err(fail("port 0 is not usable", FIX)),
        Ok(port) => Ok(port),
        Err(_) => Err(fail(&format!("port {text} is out of range"), FIX)),
    }
}

/// Validates a host that is not bracketed: an IPv4 address or a DNS name (lowercased, one
/// trailing root dot removed).
fn parse_host(
    host: &str,
    fail: &dyn Fn(&str, &str) -> TargetError,
) -> Result<HostName, TargetError> {
    let name = host.to_ascii_lowercase();
    let name = name.strip_suffix('.').unwrap_or(&name);
    if name.is_empty() {
        return Err(fail("no host name", ACCEPTED_FORMS));
    }
    if let Ok(addr) = name.parse::<Ipv4Addr>() {
        return Ok(HostName::Ipv4(addr));
    }
    // No top-level domain is all digits, so a numeric last label means a mistyped address.
    let last_label = name.rsplit('.').next().unwrap_or(name);
    if !last_label.is_empty() && last_label.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail(
            &format!("\"{name}\" is not a valid IPv4 address"),
            "give four numbers 0-255 separated by dots, e.g. 192.0.2.10",
        ));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(fail(
            &format!("host name is {} characters long", name.len()),
            "DNS names are at most 253 characters",
        ));
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err(fail(
                "host name has an empty label (\"..\" or a leading dot)",
                "remove the extra dot",
            ));
        }
        if label.len() > MAX_LABEL_LEN {
            return Err(fail(
                &format!(
                    "host name label \"{label}\" is {} characters long",
                    label.len()
                ),
                "each dot-separated part of a DNS name is at most 63 characters",
            ));
        }
        if let Some(bad) = label
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
        {
            return Err(fail(
                &format!("host name contains \"{bad}\""),
                "DNS names use only letters, digits, \"-\" and \"_\"",
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(fail(
                &format!("host name label \"{label}\" starts or ends with \"-\""),
                "fix the host name",
            ));
        }
    }
    Ok(HostName::Domain(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Target {
        Target::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
    }

    fn err(text: &str) -> String {
        match Target::parse(text) {
            Ok(t) => panic!("{text:?} should be refused, got {t:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn domain(name: &str) -> HostName {
        HostName::Domain(name.to_string())
    }

    #[test]
    fn plain_hostname() {
        let t = ok("cloud.example.com");
        assert_eq!(t.input, "cloud.example.com");
        assert_eq!(t.host, domain("cloud.example.com"));
        assert_eq!(t.port, None);
        assert_eq!(t.scheme, None);
        assert_eq!(t.base_path, "");
        assert_eq!(t.host_str(), "cloud.example.com");
        assert_eq!(t.display_name(), "cloud.example.com");
        assert_eq!(t.authority(443), "cloud.example.com:443");
    }

    #[test]
    fn single_label_and_underscore_names() {
        assert_eq!(ok("localhost").host, domain("localhost"));
        assert_eq!(ok("_svc.example.com").host, domain("_svc.example.com"));
        assert_eq!(ok("a-b.example.com").host, domain("a-b.example.com"));
    }

    #[test]
    fn hostname_with_port() {
        let t = ok("cloud.example.com:9200");
        assert_eq!(t.host, domain("cloud.example.com"));
        assert_eq!(t.port, Some(9200));
        assert_eq!(t.display_name(), "cloud.example.com:9200");
        assert_eq!(t.authority(9200), "cloud.example.com:9200");
    }

    #[test]
    fn ipv4() {
        let t = ok("192.0.2.10");
        assert_eq!(t.host, HostName::Ipv4(Ipv4Addr::new(192, 0, 2, 10)));
        assert_eq!(t.port, None);
        assert_eq!(t.host_str(), "192.0.2.10");
        assert_eq!(t.display_name(), "192.0.2.10");
    }

    #[test]
    fn ipv4_with_port() {
        let t = ok("192.0.2.10:443");
        assert_eq!(t.host, HostName::Ipv4(Ipv4Addr::new(192, 0, 2, 10)));
        assert_eq!(t.port, Some(443));
        assert_eq!(t.display_name(), "192.0.2.10:443");
    }

    #[test]
    fn bracketed_ipv6() {
        let t = ok("[2001:db8::1]");
        let addr: Ipv6Addr = "2001:db8::1".parse().unwrap();
        assert_eq!(t.host, HostName::Ipv6(addr));
        assert_eq!(t.port, None);
        assert_eq!(t.host_str(), "2001:db8::1");
        assert_eq!(t.display_name(), "2001:db8::1");
        assert_eq!(t.authority(443), "[2001:db8::1]:443");
    }

    #[test]
    fn bracketed_ipv6_with_port() {
        let t = ok("[2001:db8::1]:9200");
        assert_eq!(t.host, HostName::Ipv6("2001:db8::1".parse().unwrap()));
        assert_eq!(t.port, Some(9200));
        assert_eq!(t.host_str(), "2001:db8::1");
        assert_eq!(t.display_name(), "[2001:db8::1]:9200");
        assert_eq!(ok("[::1]").authority(9200), "[::1]:9200");
    }

    #[test]
    fn https_url() {
        let t = ok("https://cloud.example.com");
        assert_eq!(t.scheme, Some(Scheme::Https));
        assert_eq!(t.host, domain("cloud.example.com"));
        assert_eq!(t.port, None);
        assert_eq!(t.base_path, "");
        assert_eq!(ok("https://cloud.example.com/").base_path, "");
    }

    #[test]
    fn http_url_with_port_and_path() {
        let t = ok("http://cloud.example.com:8080/sub/path/");
        assert_eq!(t.scheme, Some(Scheme::Http));
        assert_eq!(t.host, domain("cloud.example.com"));
        assert_eq!(t.port, Some(8080));
        assert_eq!(t.base_path, "/sub/path");
        assert_eq!(t.display_name(), "cloud.example.com:8080");
        assert_eq!(ok("https://example.com/sub").base_path, "/sub");
    }

    #[test]
    fn url_with_ipv6_and_ipv4() {
        let t = ok("https://[2001:db8::1]:9200/base");
        assert_eq!(t.host, HostName::Ipv6("2001:db8::1".parse().unwrap()));
        assert_eq!(t.port, Some(9200));
        assert_eq!(t.base_path, "/base");
        let t = ok("http://192.0.2.10");
        assert_eq!(t.host, HostName::Ipv4(Ipv4Addr::new(192, 0, 2, 10)));
        assert_eq!(t.scheme, Some(Scheme::Http));
    }

    #[test]
    fn uppercase_scheme_and_host_are_lowercased() {
        let t = ok("HTTPS://Cloud.Example.COM");
        assert_eq!(t.scheme, Some(Scheme::Https));
        assert_eq!(t.host, domain("cloud.example.com"));
        assert_eq!(t.input, "HTTPS://Cloud.Example.COM");
        assert_eq!(ok("Cloud.Example.COM").host, domain("cloud.example.com"));
        assert_eq!(Scheme::Https.as_str(), "https");
        assert_eq!(Scheme::Http.as_str(), "http");
    }

    #[test]
    fn trailing_dot_is_stripped() {
        assert_eq!(ok("cloud.example.com.").host, domain("cloud.example.com"));
        let t = ok("cloud.example.com.:8443");
        assert_eq!(t.host, domain("cloud.example.com"));
        assert_eq!(t.display_name(), "cloud.example.com:8443");
        assert_eq!(
            ok("https://cloud.example.com./x").host,
            domain("cloud.example.com")
        );
    }

    #[test]
    fn punycode_is_accepted_and_unicode_refused() {
        assert_eq!(
            ok("xn--bcher-kva.example").host,
            domain("xn--bcher-kva.example")
        );
        let e = err("bücher.example");
        assert!(e.contains("punycode (xn--)"), "{e}");
        assert!(e.starts_with("invalid target \"bücher.example\""), "{e}");
        assert!(err("https://bücher.example/").contains("xn--"));
    }

    #[test]
    fn surrounding_whitespace_is_trimmed() {
        let t = ok("  cloud.example.com:9200 \t");
        assert_eq!(t.input, "cloud.example.com:9200");
        assert_eq!(t.port, Some(9200));
    }

    #[test]
    fn bare_ipv6_is_refused_with_bracketed_suggestion() {
        let e = err("2001:db8::1");
        assert!(e.contains("write [2001:db8::1]"), "{e}");
        assert!(err("::1").contains("[::1]"));
        assert!(err("https://2001:db8::1/").contains("[2001:db8::1]"));
        assert!(err("a:b:c").contains("too many"));
    }

    #[test]
    fn unknown_scheme_is_refused() {
        let e = err("ftp://cloud.example.com");
        assert!(e.contains("unsupported scheme \"ftp\""), "{e}");
        assert!(e.contains("https://"), "{e}");
        assert!(err("://cloud.example.com").contains("unsupported scheme"));
    }

    #[test]
    fn userinfo_is_refused_without_echoing_the_password() {
        let e = err("https://user:s3cret@cloud.example.com/x");
        assert!(
            e.contains("credentials must not be given in the target"),
            "{e}"
        );
        assert!(!e.contains("s3cret"), "{e}");
        assert!(e.contains("https://***@cloud.example.com/x"), "{e}");
        assert!(!err("admin:hunter2@cloud.example.com:443").contains("hunter2"));
        assert!(err("https://user@cloud.example.com/").contains("credentials"));
        assert!(err("user@cloud.example.com").contains("credentials"));
    }

    #[test]
    fn bad_ports_are_refused() {
        assert!(err("cloud.example.com:0").contains("port 0"));
        assert!(err("cloud.example.com:65536").contains("out of range"));
        assert!(err("cloud.example.com:99999999999999999999").contains("out of range"));
        assert!(err("cloud.example.com:https").contains("not a number"));
        assert!(err("cloud.example.com:-1").contains("not a number"));
        assert!(err("cloud.example.com:").contains("empty port"));
        assert!(err("[2001:db8::1]:").contains("empty port"));
        assert!(err("[2001:db8::1]:70000").contains("out of range"));
        assert!(err("https://cloud.example.com:0/").contains("port 0"));
        assert!(err("192.0.2.10:x").contains("1 to 65535"));
        assert_eq!(ok("cloud.example.com:65535").port, Some(65535));
        assert_eq!(ok("cloud.example.com:1").port, Some(1));
    }

    #[test]
    fn empty_host_is_refused() {
        assert_eq!(
            err("https://"),
            "invalid target \"https://\": no host name; give a hostname, IPv4, [IPv6] or URL"
        );
        assert!(err("https:///path").contains("no host name"));
        assert!(err(":443").contains("no host name"));
        assert!(err(".").contains("no host name"));
        assert!(err("").contains("empty target"));
        assert!(err("   ").contains("empty target"));
    }

    #[test]
    fn invalid_dns_names_are_refused() {
        let long_label = "a".repeat(64);
        assert!(err(&format!("{long_label}.example.com")).contains("at most 63"));
        assert_eq!(ok(&format!("{}.example.com", "a".repeat(63))).port, None);
        let long_name = vec!["a".repeat(50); 6].join(".");
        assert_eq!(long_name.len(), 305);
        assert!(err(&long_name).contains("at most 253"));
        let max_name = format!("{}.{}", vec!["a".repeat(63); 3].join("."), "a".repeat(61));
        assert_eq!(max_name.len(), 253);
        assert!(Target::parse(&max_name).is_ok());
        assert!(err("clo*ud.example.com").contains("\"*\""));
        assert!(err("cloud!.example.com").contains("letters, digits"));
        assert!(err("-cloud.example.com").contains("starts or ends with \"-\""));
        assert!(err("cloud-.example.com").contains("starts or ends with \"-\""));
        assert!(err("cloud..example.com").contains("empty label"));
        assert!(err(".cloud.example.com").contains("empty label"));
        assert!(err("cloud.example.com..").contains("empty label"));
    }

    #[test]
    fn mistyped_ipv4_is_refused() {
        assert!(err("192.0.2.256").contains("not a valid IPv4 address"));
        assert!(err("192.0.2").contains("not a valid IPv4 address"));
        assert!(err("[192.0.2.10]").contains("not an IPv6 address"));
    }

    #[test]
    fn malformed_brackets_are_refused() {
        assert!(err("[2001:db8::1").contains("missing \"]\""));
        assert!(err("[2001:db8::1]9200").contains("unexpected"));
        assert!(err("[cloud.example.com]").contains("not an IPv6 address"));
        assert!(err("[fe80::zz%25eth0]").contains("not an IPv6 address"));
    }

    #[test]
    fn query_or_fragment_is_refused() {
        let e = err("https://cloud.example.com/?a=b");
        assert!(e.contains("query or fragment"), "{e}");
        assert!(e.contains("remove"), "{e}");
        assert!(err("https://cloud.example.com#top").contains("query or fragment"));
        assert!(err("https://cloud.example.com/x?y").contains("query or fragment"));
        assert!(err("cloud.example.com?x").contains("query or fragment"));
    }

    #[test]
    fn a_trailing_slash_without_scheme_is_the_instance_root() {
        let t = ok("cloud.example.com:9200/");
        assert_eq!(t.host, HostName::Domain("cloud.example.com".into()));
        assert_eq!(
            (t.port, t.scheme, t.base_path.as_str()),
            (Some(9200), None, "")
        );
        let t = ok("192.0.2.10/");
        assert_eq!((t.host_str(), t.port), ("192.0.2.10".to_string(), None));
        let t = ok("[2001:db8::1]:443//");
        assert_eq!(
            (t.display_name(), t.base_path.as_str()),
            ("[2001:db8::1]:443".to_string(), "")
        );
        let list = parse_list("a.example/, b.example:8443/").unwrap();
        assert_eq!(list[1].display_name(), "b.example:8443");
        assert!(err("/").contains("no host name"), "{}", err("/"));
    }

    #[test]
    fn an_ipv6_zone_is_parsed_as_part_of_the_address() {
        let t = ok("[fe80::1%25lo]");
        assert_eq!(t.host, HostName::Ipv6("fe80::1".parse().unwrap()));
        assert_eq!(t.zone.as_deref(), Some("lo"));
        assert_eq!(
            (t.host_str(), t.display_name()),
            ("fe80::1".into(), "fe80::1%lo".into())
        );
        let t = ok("https://[fe80::1%252]:9200/cloud");
        assert_eq!(t.zone.as_deref(), Some("2"));
        assert_eq!(t.display_name(), "[fe80::1%2]:9200");
        assert_eq!(t.authority(9200), "[fe80::1]:9200", "never on the wire");
        // The bare form people type.
        assert_eq!(ok("[fe80::1%eth0]:443").zone.as_deref(), Some("eth0"));
        assert_eq!(ok("[2001:db8::1]").zone, None);
        for bad in [
            "[fe80::1%25]",
            "[fe80::1%]",
            "[fe80::1%25a/b]",
            "[fe80::1%25a b]",
        ] {
            assert!(err(bad).contains("invalid target"), "{bad}: {}", err(bad));
        }
    }

    #[test]
    fn an_over_long_target_is_shortened_in_the_message() {
        let long = format!("{}.example", "a".repeat(300));
        let e = err(&long);
        assert!(e.contains("host name is 308 characters long"), "{e}");
        assert!(e.len() < 200, "{e}");
        assert!(e.contains(&format!("\"{}…\"", "a".repeat(79))), "{e}");
    }

    #[test]
    fn path_without_scheme_is_refused() {
        assert!(err("cloud.example.com/sub").contains("https://host/path"));
        assert!(err("cloud.example.com:9200/sub/").contains("https://host/path"));
        assert!(err("cloud.example.com//sub").contains("https://host/path"));
        assert!(err("https://cloud.example.com/ä").contains("percent-encode"));
    }

    #[test]
    fn whitespace_inside_is_refused() {
        let e = err("cloud.example.com other.example.com");
        assert!(e.contains("whitespace"), "{e}");
        assert!(e.contains("commas"), "{e}");
        assert!(err("cloud .example.com").contains("whitespace"));
        assert!(err("https://cloud.example.com/a\tb").contains("whitespace"));
    }

    #[test]
    fn errors_are_one_line() {
        for bad in [
            "2001:db8::1",
            "ftp://x",
            "https://u:p@x",
            "x:0",
            "",
            "a b",
            "bücher.de",
        ] {
            let e = err(bad);
            assert!(!e.contains('\n'), "{e}");
            assert!(e.contains("; "), "names a fix: {e}");
        }
    }

    #[test]
    fn list_trims_and_drops_empty_entries() {
        let list = parse_list(" cloud.example.com , ,[2001:db8::1]:9200,, https://b.example/x/ ,")
            .unwrap();
        let names: Vec<String> = list.iter().map(Target::display_name).collect();
        assert_eq!(
            names,
            ["cloud.example.com", "[2001:db8::1]:9200", "b.example"]
        );
        assert_eq!(list[2].base_path, "/x");
        assert_eq!(list[0].input, "cloud.example.com");
    }

    #[test]
    fn list_requires_a_target() {
        for empty in ["", "   ", ",", " , ,"] {
            assert_eq!(
                parse_list(empty).unwrap_err().to_string(),
                "no target given; pass -H/--host or COS_HOST"
            );
        }
    }

    #[test]
    fn list_reports_the_bad_entry() {
        let e = parse_list("cloud.example.com,2001:db8::1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"2001:db8::1\""), "{e}");
    }
}
