//! Downloading a release asset (`--upgrade-self`): streamed to the caller's file while it is
//! hashed, never more than a cap, through the operator's proxy only.
//!
//! Release assets are served by a redirect (GitHub sends a download to its storage host), so
//! redirects are followed here, and only here: scans never follow one. At most
//! [`MAX_REDIRECTS`], each checked like the first address: `https`, or plain `http` to a
//! loopback address (a local mirror, the tests); never from `https` down to `http`. No
//! credentials are sent anywhere.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::IpAddr;
use std::time::Duration;

/// Redirects followed for one download.
pub const MAX_REDIRECTS: usize = 5;

/// How the download connects.
#[derive(Clone, Debug)]
pub struct Options {
    pub proxy: Option<String>,
    /// Connecting, waiting for the answer, and any pause while reading it.
    pub timeout: Duration,
    /// The whole download.
    pub total: Duration,
    pub user_agent: String,
}

/// What was downloaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Downloaded {
    pub bytes: u64,
    pub sha256: [u8; 32],
}

/// Whether a download may use `url`: `https`, or `http` to a loopback address. Names the
/// problem otherwise.
pub fn allowed(url: &str) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        return Ok(());
    }
    if lower.starts_with("http://") {
        return if host(url).is_some_and(is_loopback) {
            Ok(())
        } else {
            Err(format!(
                "{} is plain http; release downloads need https (plain http only on loopback)",
                shown(url)
            ))
        };
    }
    Err(format!("{} is not an http(s) address", shown(url)))
}

/// An address for messages: scheme, host and path, never user information or a query (which
/// may carry a signed token).
pub fn shown(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let authority = authority.rsplit('@').next().unwrap_or("");
    if scheme.is_empty() {
        format!("{authority}{path}")
    } else {
        format!("{scheme}://{authority}{path}")
    }
}

/// The host of an absolute URL (brackets of an IPv6 literal removed).
fn host(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next();
    }
    authority.split(':').next()
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The target of a `Location` header, resolved against the address that sent it.
fn resolve(base: &str, location: &str) -> Option<String> {
    let location = location.trim();
    if location.contains("://") {
        return Some(location.to_string());
    }
    let (scheme, rest) = base.split_once("://")?;
    if let Some(network_path) = location.strip_prefix("//") {
        return Some(format!("{scheme}://{network_path}"));
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let origin = format!("{scheme}://{}", &rest[..authority_end]);
    if location.starts_with('/') {
        return Some(format!("{origin}{location}"));
    }
    let path = rest[authority_end..].split(['?', '#']).next().unwrap_or("");
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    Some(format!("{origin}{dir}{location}"))
}

/// Downloads `url` into `out`, at most `cap` bytes, hashing what it writes.
pub fn download(
    url: &str,
    cap: u64,
    out: &mut dyn Write,
    options: &Options,
) -> Result<Downloaded, String> {
    let agent = super::fetch_agent(options.proxy.as_deref(), &options.user_agent, |config| {
        config
            .max_redirects(0)
            .timeout_global(Some(options.total))
            .timeout_connect(Some(options.timeout))
            .timeout_recv_response(Some(options.timeout))
            .timeout_per_read(Some(options.timeout))
    })?;
    let mut current = url.to_string();
    allowed(&current)?;
    for _ in 0..=MAX_REDIRECTS {
        let response = agent
            .get(&current)
            .header("Accept", "application/octet-stream")
            .call()
            .map_err(|e| format!("{}: {e}", shown(&current)))?;
        let status = response.status().as_u16();
        if matches!(status, 301 | 302 | 303 | 307 | 308) {
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| format!("{} redirects nowhere", shown(&current)))?;
            let next = resolve(&current, location)
                .ok_or_else(|| format!("{} redirects to an unusable address", shown(&current)))?;
            allowed(&next)?;
            if current.to_ascii_lowercase().starts_with("https://")
                && !next.to_ascii_lowercase().starts_with("https://")
            {
                return Err(format!(
                    "{} redirects from https to plain http; refused",
                    shown(&current)
                ));
            }
            current = next;
            continue;
        }
        if status != 200 {
            return Err(format!("{} answered HTTP {status}", shown(&current)));
        }
        let body = response.into_body();
        if body.content_length().is_some_and(|n| n > cap) {
            return Err(too_long(&current, cap));
        }
        return copy(body.into_reader(), out, cap).map_err(|e| match e {
            Copy::TooLong => too_long(&current, cap),
            Copy::Read(e) => format!("{}: {e}", shown(&current)),
            Copy::Write(e) => format!("cannot write the download ({e})"),
        });
    }
    Err(format!(
        "{} redirects more than {MAX_REDIRECTS} times",
        shown(url)
    ))
}

enum Copy {
    TooLong,
    Read(std::io::Error),
    Write(std::io::Error),
}

fn copy(mut from: impl Read, out: &mut dyn Write, cap: u64) -> Result<Downloaded, Copy> {
    let mut hash = Sha256::new();
    let mut bytes = 0u64;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Copy::Read(e)),
        };
        bytes += n as u64;
        if bytes > cap {
            return Err(Copy::TooLong);
        }
        hash.update(&buffer[..n]);
        out.write_all(&buffer[..n]).map_err(Copy::Write)?;
    }
    Ok(Downloaded {
        bytes,
        sha256: hash.finalize().into(),
    })
}

fn too_long(url: &str, cap: u64) -> String {
    format!(
        "{} is larger than {}, the most downloaded",
        shown(url),
        crate::files::size_text(cap)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_anywhere_and_http_only_on_loopback() {
        assert!(allowed("https://objects.example.net/x").is_ok());
        for ok in [
            "http://127.0.0.1:8080/a",
            "http://localhost/a",
            "http://[::1]:9/a",
            "HTTP://127.0.0.2/a",
        ] {
            assert!(allowed(ok).is_ok(), "{ok}");
        }
        for refused in [
            "http://mirror.example/a",
            "http://127.0.0.1.example/a",
            "http://user@10.0.0.1/a",
            "ftp://127.0.0.1/a",
            "file:///etc/passwd",
        ] {
            assert!(allowed(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn locations_resolve_against_their_base() {
        let base = "https://a.example/releases/download/v1/x.tar.gz?sig=1";
        assert_eq!(
            resolve(base, "https://cdn.example/o/1").as_deref(),
            Some("https://cdn.example/o/1")
        );
        assert_eq!(
            resolve(base, "//cdn.example/o").as_deref(),
            Some("https://cdn.example/o")
        );
        assert_eq!(
            resolve(base, "/o/2").as_deref(),
            Some("https://a.example/o/2")
        );
        assert_eq!(
            resolve(base, "y.tar.gz").as_deref(),
            Some("https://a.example/releases/download/v1/y.tar.gz")
        );
        assert_eq!(
            resolve("http://127.0.0.1:8/", "z").as_deref(),
            Some("http://127.0.0.1:8/z")
        );
    }

    #[test]
    fn addresses_are_shown_without_credentials_or_queries() {
        assert_eq!(
            shown("https://user:pw@cdn.example/o/1?X-Signature=abc#f"),
            "https://cdn.example/o/1"
        );
    }

    #[test]
    fn copies_are_capped_and_hashed() {
        let mut out = Vec::new();
        let done = copy(&b"abc"[..], &mut out, 3).ok().unwrap();
        assert_eq!(done.bytes, 3);
        assert_eq!(
            crate::text::hex(&done.sha256),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(matches!(
            copy(&b"abcd"[..], &mut out, 3),
            Err(Copy::TooLong)
        ));
    }
}
