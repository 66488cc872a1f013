//! Captured HTTP responses (`curl -i` output) and small helpers to edit them.
//!
//! A fixture file is a status line, header lines, an empty line and the body. Line ends may be
//! CRLF or LF (a few captures were saved with LF only). The captures are already de-chunked,
//! so `Transfer-Encoding: chunked` is dropped when a response is sent and a correct
//! `Content-Length` is written instead (see [`RawResponse::finalize_length`]).

use std::path::{Path, PathBuf};

/// Folder holding all captures: `<crate>/tests/fixtures`.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
}

/// One HTTP response: status, ordered headers (repeats allowed) and body bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawResponse {
    /// Protocol of the status line, e.g. `HTTP/1.1` (always sent as captured).
    pub version: String,
    pub status: u16,
    pub reason: String,
    /// Headers in wire order; names keep their captured spelling (`Www-Authenticate`).
    pub headers: Vec<(String, String)>,
    /// Headers whose value is bytes rather than text (obs-text, invalid UTF-8), sent after
    /// `headers`.
    pub raw_headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    /// A response with no headers and an empty body.
    pub fn new(status: u16, reason: &str) -> RawResponse {
        RawResponse {
            version: "HTTP/1.1".to_string(),
            status,
            reason: reason.to_string(),
            headers: Vec::new(),
            raw_headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Parses `curl -i` style text. Panics on text without a status line (test data bug).
    pub fn parse(raw: &[u8]) -> RawResponse {
        let (head_end, body_start) = find_head_end(raw).unwrap_or((raw.len(), raw.len()));
        let head = String::from_utf8_lossy(&raw[..head_end]);
        let mut lines = head.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
        let status_line = lines.next().unwrap_or_default();
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default().to_string();
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("fixture without a status line: {status_line:?}"));
        let reason = parts.next().unwrap_or_default().to_string();
        let mut headers = Vec::new();
        for line in lines {
            if line.is_empty() {
                continue;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_string(), value.trim_start().to_string()));
            }
        }
        RawResponse {
            version,
            status,
            reason,
            headers,
            raw_headers: Vec::new(),
            body: raw[body_start..].to_vec(),
        }
    }

    /// Loads `tests/fixtures/<rel>` and parses it. Panics when the file is missing.
    pub fn load(rel: &str) -> RawResponse {
        let path = fixtures_dir().join(rel);
        let raw = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()));
        RawResponse::parse(&raw)
    }

    /// First value of a header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All values of a header, in order.
    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn has_header(&self, name: &str) -> bool {
        self.header(name).is_some()
    }

    /// Removes every header with that name.
    pub fn remove_header(&mut self, name: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.raw_headers
            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    /// Sets a header to one value: replaces the first occurrence in place (keeping the
    /// captured position), drops further occurrences, or appends when absent.
    pub fn set_header(&mut self, name: &str, value: &str) {
        let mut seen = false;
        self.headers.retain_mut(|(n, v)| {
            if !n.eq_ignore_ascii_case(name) {
                return true;
            }
            if seen {
                return false;
            }
            seen = true;
            *v = value.to_string();
            true
        });
        if !seen {
            self.headers.push((name.to_string(), value.to_string()));
        }
    }

    /// Changes a header only when it is present (first occurrence and repeats alike).
    pub fn replace_header_values(&mut self, name: &str, f: impl Fn(&str) -> String) {
        for (n, v) in &mut self.headers {
            if n.eq_ignore_ascii_case(name) {
                *v = f(v);
            }
        }
    }

    /// Appends a header (repeats allowed).
    pub fn add_header(&mut self, name: &str, value: &str) {
        self.headers.push((name.to_string(), value.to_string()));
    }

    /// Appends a header whose value is sent byte for byte (need not be UTF-8).
    pub fn add_raw_header(&mut self, name: &str, value: &[u8]) {
        self.raw_headers.push((name.to_string(), value.to_vec()));
    }

    /// Inserts a header keeping Go's alphabetical order among the leading sorted block.
    pub fn insert_sorted(&mut self, name: &str, value: &str) {
        let key = name.to_ascii_lowercase();
        let pos = self
            .headers
            .iter()
            .position(|(n, _)| n.to_ascii_lowercase() > key)
            .unwrap_or(self.headers.len());
        self.headers
            .insert(pos, (name.to_string(), value.to_string()));
    }

    pub fn body_str(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn set_body(&mut self, body: impl Into<Vec<u8>>) {
        self.body = body.into();
    }

    /// Applies a text edit to the body (bodies are all UTF-8 text here).
    pub fn map_body(&mut self, f: impl FnOnce(&str) -> String) {
        let text = self.body_str();
        self.body = f(&text).into_bytes();
    }

    /// Sets the status line.
    pub fn set_status(&mut self, status: u16, reason: &str) {
        self.status = status;
        self.reason = reason.to_string();
    }

    /// Drops `Transfer-Encoding` and writes a `Content-Length` matching the body (at the
    /// position of the old length or transfer-encoding header, else at the end). Responses
    /// that must not carry a length (1xx, 204, 304) get none.
    pub fn finalize_length(&mut self) {
        let no_body_status = self.status < 200 || self.status == 204 || self.status == 304;
        let len = self.body.len().to_string();
        let pos = self.headers.iter().position(|(n, _)| {
            n.eq_ignore_ascii_case("content-length") || n.eq_ignore_ascii_case("transfer-encoding")
        });
        self.headers.retain(|(n, _)| {
            !n.eq_ignore_ascii_case("content-length")
                && !n.eq_ignore_ascii_case("transfer-encoding")
        });
        if no_body_status {
            return;
        }
        let pos = pos.unwrap_or(self.headers.len()).min(self.headers.len());
        self.headers
            .insert(pos, ("Content-Length".to_string(), len));
    }

    /// Serializes status line and headers (with the final empty line).
    pub fn head_bytes(&self) -> Vec<u8> {
        let mut out = format!("{} {} {}\r\n", self.version, self.status, self.reason);
        for (n, v) in &self.headers {
            out.push_str(n);
            out.push_str(": ");
            out.push_str(v);
            out.push_str("\r\n");
        }
        let mut out = out.into_bytes();
        for (n, v) in &self.raw_headers {
            out.extend_from_slice(n.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }

    /// Status line, headers and body as sent on the wire.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.head_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

/// Returns (end of head, start of body) for `\r\n\r\n` or `\n\n`, whichever comes first.
fn find_head_end(raw: &[u8]) -> Option<(usize, usize)> {
    let crlf = raw.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = raw.windows(2).position(|w| w == b"\n\n");
    match (crlf, lf) {
        (Some(a), Some(b)) if b < a => Some((b, b + 2)),
        (Some(a), _) => Some((a, a + 4)),
        (None, Some(b)) => Some((b, b + 2)),
        (None, None) => None,
    }
}

/// Replaces `from` by `to` wherever `from` is not glued to other version characters (digits,
/// dots, `+`), so `4.0.0` is rewritten in `"productversion":"4.0.0"` and `opencloud-4.0.0`
/// but `7.0.0` is left alone inside `127.0.0.1`.
pub fn replace_version(text: &str, from: &str, to: &str) -> String {
    if from.is_empty() || from == to || !text.contains(from) {
        return text.to_string();
    }
    let glued = |c: char| c.is_ascii_digit() || c == '.' || c == '+';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(from) {
        let before = if i > 0 {
            rest[..i].chars().last()
        } else {
            out.chars().last()
        };
        let after = rest[i + from.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(glued) || after.is_some_and(glued) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// HTTP date (`Sun, 22 Nov 2026 03:06:48 GMT`) of a timestamp.
pub fn http_date(ts: jiff::Timestamp) -> String {
    ts.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// Current time as an HTTP date.
pub fn http_date_now() -> String {
    http_date(jiff::Timestamp::now())
}

/// Minimal standard base64 decoder (for `Authorization: Basic`); `None` on bad input.
pub fn base64_decode(input: &str) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    }
    let bytes: Vec<u8> = input
        .trim()
        .bytes()
        .filter(|b| *b != b'=' && !b.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut acc = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            acc |= val(*c)? << (18 - 6 * i);
        }
        out.push((acc >> 16) as u8);
        if chunk.len() > 2 {
            out.push((acc >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(acc as u8);
        }
    }
    Some(out)
}

/// Standard base64 encoder (padding included), handy for building Basic credentials.
pub fn base64_encode(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(ALPHABET[(n >> 18) as usize & 63] as char);
        out.push(ALPHABET[(n >> 12) as usize & 63] as char);
        if chunk.len() > 1 {
            out.push(ALPHABET[(n >> 6) as usize & 63] as char);
        } else {
            out.push('=');
        }
        if chunk.len() > 2 {
            out.push(ALPHABET[n as usize & 63] as char);
        } else {
            out.push('=');
        }
    }
    out
}

/// Percent-decoding for query values (`+` stays `+`).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Value of a query parameter in `a=b&c=d` (percent-decoded).
pub fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then(|| percent_decode(v))
    })
}
