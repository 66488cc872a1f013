//! Which pages may make a browser call us, for every server of the crate. A page of another
//! site can make its visitors' browsers send a form or a `text/plain` body to any address
//! without asking first (a CORS-simple request), or a `GET` with an `<img src>`: the JSON
//! routes refuse any body not declared `application/json` (which a browser sends across sites
//! only after a preflight we never grant), and every route that starts work (a scan, a
//! session, a round: `http::Route::starts_work`) refuses what the browser says comes from
//! another site, as the routes that answer with pages of their own (`web`'s form, `/mcp`) do
//! themselves.

/// What a browser says of where a request comes from: its `Origin`, `Host` and
/// `Sec-Fetch-Site` headers (`http::Request::browser` reads them).
#[derive(Clone, Copy, Debug, Default)]
pub struct BrowserSays<'a> {
    pub origin: Option<&'a str>,
    pub host: Option<&'a str>,
    pub fetch_site: Option<&'a str>,
}

impl BrowserSays<'_> {
    /// Whether the request comes from another site's page: an `Origin` that is not
    /// `--base-url`'s origin (when the server has one) nor our own loopback address (`null`
    /// included: a sandboxed or privacy-stripped page), or `Sec-Fetch-Site` saying
    /// `cross-site` or `same-site` (a sibling host is another origin). A request with neither
    /// header (curl, a program, an old browser) is nothing a browser was made to send, and
    /// passes.
    pub fn another_site(&self, base_url: &str) -> bool {
        if let Some(origin) = self.origin
            && !origin_allowed(origin, base_url, self.host)
        {
            return true;
        }
        self.fetch_site.is_some_and(|site| {
            ["cross-site", "same-site"].contains(&site.to_ascii_lowercase().as_str())
        })
    }
}

/// `scheme://host[:port]` → (scheme, host in lower case, port), the port defaulted by scheme.
fn authority_of(url: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (host, port) = split_host_port(authority, default)?;
    Some((scheme, host, port))
}

/// `host[:port]` (IPv6 in brackets) → (host in lower case, port).
fn split_host_port(authority: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default,
            None => return None,
        };
        (format!("[{host}]"), port)
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host.to_string(), port.parse().ok()?),
            None => (authority.to_string(), default),
        }
    };
    if host.is_empty() {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

fn is_loopback_host(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a page at `origin` may call us: the origin of `--base-url` (scheme, host and port;
/// its path aside), or a loopback origin naming the loopback address and port the request came
/// to (its `Host`: our own listen address).
pub fn origin_allowed(origin: &str, base_url: &str, host_header: Option<&str>) -> bool {
    let Some((scheme, host, port)) = authority_of(origin.trim()) else {
        return false;
    };
    if authority_of(base_url).is_some_and(|base| base == (scheme.clone(), host.clone(), port)) {
        return true;
    }
    let default = if scheme == "https" { 443 } else { 80 };
    is_loopback_host(&host)
        && host_header
            .and_then(|h| split_host_port(h.trim(), default))
            .is_some_and(|(h, p)| is_loopback_host(&h) && p == port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_of_the_base_url_or_our_own_loopback_address_pass() {
        let base = "https://scan.example.com/";
        let host = Some("127.0.0.1:8080");
        assert!(origin_allowed("https://scan.example.com", base, host));
        assert!(origin_allowed("https://SCAN.example.com:443", base, host));
        assert!(!origin_allowed("http://scan.example.com", base, host));
        assert!(!origin_allowed("https://evil.example", base, host));
        assert!(!origin_allowed("null", base, host));
        assert!(origin_allowed("http://127.0.0.1:8080", base, host));
        assert!(origin_allowed("http://localhost:8080", base, host));
        assert!(!origin_allowed("http://127.0.0.1:9999", base, host));
        // A rebound name reaches us with its own Host: refused.
        assert!(!origin_allowed(
            "http://127.0.0.1:8080",
            base,
            Some("evil.example:8080")
        ));
        assert!(origin_allowed(
            "http://[::1]:8080",
            "http://[::1]:8080",
            Some("[::1]:8080")
        ));
    }

    #[test]
    fn a_request_is_from_another_site_by_its_origin_or_its_fetch_metadata() {
        let base = "https://example.com/scanner";
        let from_another_site = |origin, fetch_site| {
            BrowserSays {
                origin,
                host: Some("127.0.0.1:40000"),
                fetch_site,
            }
            .another_site(base)
        };
        // curl, a program, an old browser: no header says anything.
        assert!(!from_another_site(None, None));
        assert!(!from_another_site(
            Some("https://example.com"),
            Some("same-origin")
        ));
        assert!(!from_another_site(None, Some("none")));
        assert!(from_another_site(Some("https://evil.example"), None));
        assert!(from_another_site(Some("null"), None));
        assert!(from_another_site(None, Some("cross-site")));
        assert!(from_another_site(None, Some("same-site")));
        assert!(from_another_site(
            Some("https://example.com"),
            Some("cross-site")
        ));
    }
}
