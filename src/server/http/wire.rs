//! The bytes: reading a request within its caps and deadlines, writing an answer.

use super::*;

/// How long one read of a request waits before the reader looks at its deadline and whether
/// it was evicted: the time a reader takes to give up a dripping connection for a new one.
pub(super) const READ_POLL: Duration = Duration::from_millis(25);

/// The socket a request is read from: every read waits [`READ_POLL`] at a time, and ends with
/// `TimedOut` once `until` has passed or `ConnectionAborted` once the read was evicted.
pub(super) struct Watched<'a> {
    stream: &'a TcpStream,
    until: std::cell::Cell<Instant>,
    evicted: &'a dyn Fn() -> bool,
}

impl Read for Watched<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match (&*self.stream).read(buf) {
                Err(e) if timed_out(&e) => {
                    if (self.evicted)() {
                        return Err(io::ErrorKind::ConnectionAborted.into());
                    }
                    if Instant::now() >= self.until.get() {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}

/// The request on `stream`; `Err` when it could not be read, with the answer to send if the
/// client can still take one (`None`: it went away, sent nothing, or its read was evicted:
/// `evicted` says so).
pub(super) fn read_request(
    stream: &TcpStream,
    limits: Limits,
    evicted: &dyn Fn() -> bool,
) -> Result<Request, Option<Response>> {
    let peer = stream.peer_addr().map_err(|_| None)?;
    let head_until = Instant::now() + limits.head_deadline;
    stream.set_read_timeout(Some(READ_POLL)).map_err(|_| None)?;
    let watched = Watched {
        stream,
        until: std::cell::Cell::new(head_until),
        evicted,
    };
    let mut reader = BufReader::with_capacity(4096, watched);
    let mut head_bytes = 0usize;
    let mut line = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    loop {
        line.clear();
        let room = limits.max_head_bytes.saturating_sub(head_bytes);
        // A client that sent nothing before it left (or before the deadline) gets no answer;
        // a head that stops short of its end is answered below (400) or here (408).
        match read_line(&mut reader, &mut line, room + 1, head_until) {
            Ok(0) if lines.is_empty() => return Err(None),
            Ok(n) => head_bytes += n,
            Err(e) if timed_out(&e) && !(lines.is_empty() && line.is_empty()) => {
                return Err(bad(
                    408,
                    "timeout",
                    "the request head did not arrive in time",
                ));
            }
            Err(_) => return Err(None),
        }
        if head_bytes > limits.max_head_bytes {
            return Err(bad(
                431,
                "head_too_large",
                "the request head is larger than 16 KiB",
            ));
        }
        if !line.ends_with(b"\n") {
            return Err(bad(400, "incomplete", "the request head ended early"));
        }
        let text = String::from_utf8_lossy(&line)
            .trim_end_matches(['\r', '\n'])
            .to_string();
        if text.is_empty() {
            if lines.is_empty() {
                continue; // tolerated: a blank line before the request line
            }
            break;
        }
        if lines.len() > limits.max_headers {
            return Err(bad(
                431,
                "too_many_headers",
                "the request has more than 100 headers",
            ));
        }
        lines.push(text);
    }
    let mut parts = lines[0].split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(
            400,
            "bad_request_line",
            "the request line is not METHOD TARGET HTTP/1.x",
        ));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad(505, "version", "only HTTP/1.x is served"));
    }
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad(400, "bad_method", "the method is not a valid token"));
    }
    let mut headers = Vec::with_capacity(lines.len() - 1);
    for line in &lines[1..] {
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad(400, "bad_header", "a header line has no colon"));
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(bad(400, "bad_header", "a header name is not a token"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, parse_form(q.as_bytes())),
        None => (target, Vec::new()),
    };
    let mut request = Request {
        method: method.to_string(),
        path: path.to_string(),
        query,
        headers,
        body: Vec::new(),
        peer,
    };
    if request.header("transfer-encoding").is_some() {
        return Err(bad(
            411,
            "length_required",
            "send the body with Content-Length, not chunked",
        ));
    }
    // Strict framing (RFC 9112, 6.3): one Content-Length of digits only. Two of them (equal
    // or not, on two lines or as a list) or a sign are what request smuggling is made of.
    let length = match request.header_lines("content-length").as_slice() {
        [] => 0,
        [one] if !one.is_empty() && one.bytes().all(|b| b.is_ascii_digit()) => {
            // More digits than a usize holds is more than any cap.
            one.parse::<usize>().unwrap_or(usize::MAX)
        }
        [_] => {
            return Err(bad(
                400,
                "bad_length",
                "Content-Length is not a number (digits only)",
            ));
        }
        _ => {
            return Err(bad(
                400,
                "bad_length",
                "the request has more than one Content-Length",
            ));
        }
    };
    if length > limits.max_body_bytes {
        return Err(bad(
            413,
            "body_too_large",
            &format!("the body is larger than {} bytes", limits.max_body_bytes),
        ));
    }
    let expects = request.header("expect");
    if length > 0 && expects.is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        let mut raw: &TcpStream = reader.get_ref().stream;
        let _ = raw.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    let mut body = vec![0u8; length];
    let body_until = Instant::now() + limits.body_deadline;
    reader.get_ref().until.set(body_until);
    let late = || bad(408, "timeout", "the body did not arrive in time");
    let mut filled = 0;
    while filled < length {
        if Instant::now() >= body_until {
            return Err(late());
        }
        match reader.read(&mut body[filled..]) {
            Ok(0) => return Err(bad(400, "incomplete", "the body ended early")),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if timed_out(&e) => return Err(late()),
            Err(_) => return Err(None),
        }
    }
    if !request.path.starts_with('/') {
        return Err(bad(400, "bad_target", "the request target is not a path"));
    }
    request.body = body;
    Ok(request)
}

/// A socket read that waited out its timeout (Linux says `WouldBlock`).
pub(super) fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

pub(super) fn bad(status: u16, code: &str, message: &str) -> Option<Response> {
    Some(Response::error(status, code, message))
}

/// Reads one line (through `\n`) of at most `max` bytes, before `until`. Returns the bytes
/// read; a line longer than `max` returns `max` bytes without its end.
pub(super) fn read_line<R: BufRead>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
    until: Instant,
) -> io::Result<usize> {
    let mut total = 0;
    loop {
        if Instant::now() >= until {
            return Err(io::ErrorKind::TimedOut.into());
        }
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(total);
        }
        let room = max - total;
        let take = available.len().min(room);
        let (used, done) = match available[..take].iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (take, take == room),
        };
        line.extend_from_slice(&available[..used]);
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

/// `a=b&c=d` with percent-decoding and `+` as a space (query strings and form bodies).
pub fn parse_form(text: &[u8]) -> Vec<(String, String)> {
    text.split(|b| *b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let mut it = pair.splitn(2, |b| *b == b'=');
            let name = it.next().unwrap_or_default();
            let value = it.next().unwrap_or_default();
            (percent_decode(name), percent_decode(value))
        })
        .collect()
}

pub(super) fn percent_decode(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        // The byte two hex digits after `i` stand for, if they do.
        let escaped = bytes
            .get(i + 1..i + 3)
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match (bytes[i], escaped) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(b)) => {
                out.push(b);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn write_response(
    stream: &mut TcpStream,
    response: Response,
    head_only: bool,
) -> io::Result<()> {
    // Nothing is cached unless a route says how (the public API's discovery documents).
    let route_says = crate::net::http::values(&response.headers, "cache-control").count() > 0;
    let cache = if route_says {
        ""
    } else {
        "Cache-Control: no-store\r\n"
    };
    // A streamed body ends with the connection (RFC 9112, 6.3): no length to announce.
    let length = match response.stream {
        Some(_) => String::new(),
        None => format!("Content-Length: {}\r\n", response.body.len()),
    };
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n{length}Connection: close\r\n{cache}X-Content-Type-Options: nosniff\r\n",
        response.status,
        reason(response.status),
    );
    for (name, value) in &response.headers {
        // Header values come from our own code; line breaks would still split the response.
        if !name.contains(['\r', '\n', ':']) && !value.contains(['\r', '\n']) {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if head_only {
        return Ok(());
    }
    stream.write_all(&response.body)?;
    match response.stream {
        Some(Stream(produce)) => {
            stream.flush()?;
            // A producer that panics ends the answer early and keeps the worker.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| produce(stream)))
                .unwrap_or_else(|_| Err(io::Error::other("the streamed answer stopped")))
        }
        None => Ok(()),
    }
}

/// The reason phrase of a status (RFC 9110's); another gets an empty one, which RFC 9112
/// allows, rather than a made-up word.
pub(super) fn reason(status: u16) -> &'static str {
    ureq::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|status| status.canonical_reason())
        .unwrap_or("")
}
