//! Whether a request names this server itself (`Host`, `Origin`).

use super::*;

/// The names a server on a loopback address answers for, against DNS rebinding: a page of
/// `rebind.attacker.example`, whose name the attacker points at 127.0.0.1, would otherwise drive
/// a local server from the browser of someone on this host, and read its answers. A `Host`
/// (and an `Origin`) must be an address, `localhost`, or the server's own base URL's host.
/// A server on another address is reached by whatever names the operator gives it, and is
/// guarded by its token (serve) or is public (web, the exporter): no name is refused there.
#[derive(Clone, Debug)]
pub struct SameHost {
    pub loopback: bool,
    /// The host of `--base-url`, lower-cased, when one is set.
    pub base_host: Option<String>,
    /// Refuse a foreign `Origin` here too; off where the handlers judge it themselves, with
    /// answers of their own (web's form page, its MCP endpoint).
    pub check_origin: bool,
}

impl SameHost {
    /// The rule of a server listening on `listen`, named `base_url` if it has one.
    pub fn of(listen: SocketAddr, base_url: Option<&str>) -> SameHost {
        SameHost {
            loopback: listen.ip().is_loopback(),
            base_host: base_url.and_then(url_host).map(|h| h.to_ascii_lowercase()),
            check_origin: true,
        }
    }

    pub(super) fn allows(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        host.parse::<std::net::IpAddr>().is_ok()
            || host == "localhost"
            || host.ends_with(".localhost")
            || self.base_host.as_deref() == Some(host.as_str())
    }

    /// The refusal of a request this server must not answer: 421 for a foreign `Host`, 403
    /// for a foreign `Origin`; `None` when it may be answered.
    pub fn refusal(&self, request: &Request) -> Option<Response> {
        if !self.loopback {
            return None;
        }
        if let Some(host) = request.header("host")
            && !self.allows(&host_name(host))
        {
            return Some(Response::error(
                421,
                "misdirected_request",
                "this server answers for its own address and localhost only (DNS rebinding \
                 protection); name it by address, or by the host of its --base-url",
            ));
        }
        // `null` (a sandboxed frame, a page that hides where it is) is foreign like any other.
        if self.check_origin
            && let Some(origin) = request.header("origin")
            && !url_host(origin).is_some_and(|h| self.allows(&h))
        {
            return Some(Response::error(
                403,
                "forbidden_origin",
                "requests from another site's pages are refused (DNS rebinding protection)",
            ));
        }
        None
    }

    /// `handler` behind this rule.
    pub fn guard<H>(self, handler: H) -> impl Fn(&Request) -> Response + Send + Sync + 'static
    where
        H: Fn(&Request) -> Response + Send + Sync + 'static,
    {
        move |request: &Request| self.refusal(request).unwrap_or_else(|| handler(request))
    }
}

/// The name of a `Host` header value without its port (`[::1]:8080` is `::1`).
pub(super) fn host_name(host: &str) -> String {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest).to_string();
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name.to_string(),
        _ => host.to_string(),
    }
}

/// The host of an absolute URL (`https://scan.example.com:8443/x` is `scan.example.com`).
pub(super) fn url_host(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    Some(host_name(authority))
}
