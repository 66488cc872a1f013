//! Fetching a feed document (the release feed, an advisory feed): verified HTTPS or plain HTTP,
//! through the operator's proxy only, the answer read up to a cap and never further, and, when
//! an earlier answer is at hand, as a conditional request (`If-None-Match` /
//! `If-Modified-Since`) so that an unchanged feed answers `304 Not Modified` with no body.

use super::http::ClientOptions;
use std::io::Read;

/// What identifies an answer to the server: its `ETag` and `Last-Modified` headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// The longest validator kept; real ones are a few dozen characters.
const MAX_VALIDATOR: usize = 256;

impl Validators {
    /// A header value fit to store and to send back: printable ASCII, not too long.
    pub fn clean(value: Option<&str>) -> Option<String> {
        let value = value?.trim();
        (!value.is_empty()
            && value.len() <= MAX_VALIDATOR
            && value.bytes().all(|b| (0x20..0x7f).contains(&b)))
        .then(|| value.to_string())
    }

    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// How a feed answered.
#[derive(Debug)]
pub enum Fetched {
    /// `200`: the document and its validators.
    Document {
        body: Vec<u8>,
        validators: Validators,
    },
    /// `304`: the answer given with `validators` still holds.
    NotModified { validators: Validators },
}

/// Fetches `url`, sending `validators` as a conditional request when given. Anything but
/// `200` (or `304` to a conditional request) is an error naming the status, and so is an
/// answer longer than `cap` bytes: it is not read past the cap.
pub fn fetch(
    url: &str,
    bearer_token: Option<&str>,
    validators: Option<&Validators>,
    cap: u64,
    options: &ClientOptions,
) -> Result<Fetched, String> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(format!("{url} is not an http(s) address"));
    }
    let agent = super::fetch_agent(options.proxy.as_deref(), &options.user_agent, |config| {
        config
            .max_redirects(3)
            .timeout_global(Some(options.timeout.now()))
    })?;
    let mut request = agent.get(url).header("Accept", "application/json");
    if let Some(token) = bearer_token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    let conditional = validators.filter(|v| !v.is_empty());
    if let Some(etag) = conditional.and_then(|v| v.etag.as_ref()) {
        request = request.header("If-None-Match", etag.as_str());
    }
    if let Some(date) = conditional.and_then(|v| v.last_modified.as_ref()) {
        request = request.header("If-Modified-Since", date.as_str());
    }
    let response = request.call().map_err(|e| format!("{url}: {e}"))?;
    let status = response.status().as_u16();
    let header =
        |name: &str| Validators::clean(response.headers().get(name).and_then(|v| v.to_str().ok()));
    let answered = Validators {
        etag: header("etag"),
        last_modified: header("last-modified"),
    };
    match status {
        200 => {}
        304 if conditional.is_some() => {
            return Ok(Fetched::NotModified {
                validators: answered,
            });
        }
        _ => return Err(format!("{url} answered HTTP {status}")),
    }
    let body = response.into_body();
    let declared = body.content_length();
    if declared.is_some_and(|n| n > cap) {
        return Err(too_long(url, cap));
    }
    // Room for what the server says it sends (never more than the cap); one byte past the cap
    // tells an answer that is too long.
    let mut buffer = Vec::with_capacity(declared.unwrap_or(0).min(cap) as usize);
    body.into_reader()
        .take(cap + 1)
        .read_to_end(&mut buffer)
        .map_err(|e| format!("{url}: {e}"))?;
    if buffer.len() as u64 > cap {
        return Err(too_long(url, cap));
    }
    Ok(Fetched::Document {
        body: buffer,
        validators: answered,
    })
}

fn too_long(url: &str, cap: u64) -> String {
    format!(
        "{url} answered more than {} KiB, the most read from this feed",
        cap / 1024
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators_are_kept_only_when_fit_to_send_back() {
        assert_eq!(
            Validators::clean(Some(" W/\"abc\" ")),
            Some("W/\"abc\"".into())
        );
        assert_eq!(Validators::clean(Some("")), None);
        assert_eq!(Validators::clean(Some("a\r\nSet-Cookie: x")), None);
        assert_eq!(Validators::clean(Some(&"x".repeat(300))), None);
        assert_eq!(Validators::clean(None), None);
    }
}
