//! The operator's web proxy (`--proxy`): the HTTP client hands it to ureq, and the TLS
//! inspection opens its own CONNECT tunnel through it, so every byte of a scan takes the same
//! path. Only `http://` proxies are supported: CONNECT is what every corporate proxy speaks.

use super::dial::{TlsFailure, Until};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

/// A parsed `http://[user:password@]host:port` proxy address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proxy {
    pub host: String,
    pub port: u16,
    /// `Basic <base64>` for `Proxy-Authorization`, when the URL carries credentials.
    pub authorization: Option<String>,
}

/// `--proxy` as ureq takes it; a message naming the address (password hidden) when it will not.
pub fn for_ureq(url: &str) -> Result<ureq::Proxy, String> {
    ureq::Proxy::new(url).map_err(|e| format!("--proxy {:?} is not usable: {e}", redacted(url)))
}

/// The proxy address as messages show it: user information (the proxy's password) replaced
/// by `***`.
pub fn redacted(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_string(),
    };
    if scheme.is_empty() {
        format!("{authority}{tail}")
    } else {
        format!("{scheme}://{authority}{tail}")
    }
}

impl Proxy {
    /// Parses a literal proxy address; messages show it with its credentials masked.
    pub fn parse(url: &str) -> Result<Proxy, String> {
        Proxy::parse_shown(url, &format!("{:?}", redacted(url)))
    }

    /// Parses a proxy address; messages name it as `shown` (its reference, when it came from
    /// one).
    pub fn parse_shown(url: &str, shown: &str) -> Result<Proxy, String> {
        let bad = |why: &str| format!("--proxy {shown} {why}; give http://host:port");
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("HTTP://"))
            .ok_or_else(|| bad("is not an http:// proxy address"))?;
        let rest = rest.trim_end_matches('/');
        if rest.contains('/') || rest.contains('?') {
            return Err(bad("has a path"));
        }
        let (userinfo, hostport) = rest
            .rsplit_once('@')
            .map_or((None, rest), |(u, h)| (Some(u), h));
        let (host, port_text) = if let Some(bracketed) = hostport.strip_prefix('[') {
            let (host, after) = bracketed
                .split_once(']')
                .ok_or_else(|| bad("has an unclosed ["))?;
            (host, after.strip_prefix(':'))
        } else {
            hostport
                .rsplit_once(':')
                .map_or((hostport, None), |(h, p)| (h, Some(p)))
        };
        let port = match port_text {
            None => 8080,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad("has no valid port"))?,
        };
        if host.is_empty() {
            return Err(bad("has no host"));
        }
        Ok(Proxy {
            host: host.to_string(),
            port,
            authorization: userinfo.map(|u| format!("Basic {}", crate::text::base64(u.as_bytes()))),
        })
    }

    /// Opens a CONNECT tunnel to `host:port` through the proxy, within the deadline.
    pub fn tunnel(
        &self,
        host: &str,
        port: u16,
        deadline: Instant,
    ) -> Result<TcpStream, TlsFailure> {
        let mut stream = super::dial::connect(&self.host, self.port, deadline)?;
        if Instant::now() >= deadline {
            return Err(TlsFailure::Transient("proxy connection timed out".into()));
        }
        // Every read and write ends by the deadline, however slowly the proxy answers.
        let mut io = Until::new(&mut stream, Some(deadline));
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let mut request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
        if let Some(auth) = &self.authorization {
            request.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
        }
        request.push_str("\r\n");
        io.write_all(request.as_bytes())
            .map_err(|e| TlsFailure::Transient(format!("proxy: {e}")))?;
        // Read the proxy's answer head byte by byte: nothing of the tunnel may be consumed.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if head.len() > 16 * 1024 {
                return Err(TlsFailure::Connect(
                    "proxy answer head exceeds 16 KiB".into(),
                ));
            }
            match io.read(&mut byte) {
                Ok(0) => return Err(TlsFailure::Transient("proxy closed the connection".into())),
                Ok(_) => head.push(byte[0]),
                Err(e) => return Err(TlsFailure::Transient(format!("proxy: {e}"))),
            }
        }
        let status_line = String::from_utf8_lossy(&head);
        let status = status_line.split_whitespace().nth(1).unwrap_or("");
        if status != "200" {
            let line = status_line.lines().next().unwrap_or("").trim().to_string();
            return Err(TlsFailure::Connect(format!(
                "proxy refused CONNECT {authority}: {line}"
            )));
        }
        let _ = stream.set_read_timeout(None);
        let _ = stream.set_write_timeout(None);
        Ok(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proxy_addresses() {
        assert_eq!(
            Proxy::parse("http://proxy.example:3128").unwrap(),
            Proxy {
                host: "proxy.example".into(),
                port: 3128,
                authorization: None
            }
        );
        assert_eq!(Proxy::parse("http://proxy.example/").unwrap().port, 8080);
        let with_auth = Proxy::parse("http://user:pa:ss@10.0.0.1:8080").unwrap();
        assert_eq!(
            with_auth.authorization.as_deref(),
            Some("Basic dXNlcjpwYTpzcw==")
        );
        assert_eq!(Proxy::parse("http://[::1]:3128").unwrap().host, "::1");
        for bad in [
            "socks5://p:1080",
            "proxy:3128",
            "http://:3128",
            "http://p:0",
            "http://p:x",
            "http://p/path",
        ] {
            assert!(Proxy::parse(bad).is_err(), "{bad}");
        }
    }
}
