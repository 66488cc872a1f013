//! A tiny blocking HTTP/1.1 server side: connection wrapper (plain or rustls), request
//! parser with keep-alive, and response writer with the fault knobs (delay, slow drip,
//! endless body).

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::fixtures::RawResponse;

/// Largest request head accepted (bytes).
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body read (bytes); larger bodies are read and discarded past this.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// Poll slice for blocking reads, so a stopped server ends its connections.
const POLL: Duration = Duration::from_millis(100);
/// Idle keep-alive connections are closed after this.
const IDLE: Duration = Duration::from_secs(30);

/// One request as the fake instance saw it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    /// Request target as sent: path plus query (or absolute form, if a proxy-style client sent it).
    pub target: String,
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub version: String,
    /// Headers in the order received, names as sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub peer: SocketAddr,
    /// True when the request came over TLS.
    pub tls: bool,
    /// SNI server name the client sent (TLS only; none for IP-address hosts).
    pub sni: Option<String>,
    /// 0-based index among all requests of this listener.
    pub index: usize,
}

impl RecordedRequest {
    /// First value of a header (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All values of a header.
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

    /// Path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// Query string without `?` (empty when none).
    pub fn query(&self) -> &str {
        self.target
            .split_once('?')
            .map(|(_, q)| q)
            .unwrap_or_default()
    }

    pub fn body_str(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Plain TCP or TLS stream.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
}

impl Stream {
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }

    pub fn sni(&self) -> Option<String> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(s) => s.conn.server_name().map(str::to_string),
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Closes without a TLS close_notify (abrupt end as seen by the client).
    pub fn abort(&self) {
        let _ = self.tcp().shutdown(Shutdown::Both);
    }

    /// Orderly close: TLS close_notify, then FIN.
    pub fn close(&mut self) {
        if let Stream::Tls(s) = self {
            s.conn.send_close_notify();
            let _ = s.flush();
        }
        let _ = self.tcp().shutdown(Shutdown::Write);
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// A connection with its read buffer (requests may be pipelined).
pub struct Conn {
    pub stream: Stream,
    buf: Vec<u8>,
    stop: Arc<AtomicBool>,
    pub peer: SocketAddr,
}

/// Outcome of reading one request.
pub enum ReadOutcome {
    Request(RecordedRequest),
    /// Clean end: client closed, idle timeout, server stopping, or a TLS handshake failure.
    Closed,
    /// Unparseable request: answer 400 and close.
    Bad,
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

impl Conn {
    pub fn new(stream: Stream, stop: Arc<AtomicBool>, peer: SocketAddr) -> Conn {
        let _ = stream.tcp().set_read_timeout(Some(POLL));
        let _ = stream.tcp().set_nodelay(true);
        Conn {
            stream,
            buf: Vec::new(),
            stop,
            peer,
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Reads more bytes into the buffer; Ok(false) on EOF/stop/idle.
    fn fill(&mut self, idle_since: Instant) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if self.stopped() || idle_since.elapsed() > IDLE {
                return Ok(false);
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(true);
                }
                Err(e) if is_timeout(&e) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads one request (head and body).
    pub fn read_request(&mut self, index_hint: usize) -> ReadOutcome {
        let start = Instant::now();
        let head_end = loop {
            if let Some(p) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p;
            }
            if self.buf.len() > MAX_HEAD {
                return ReadOutcome::Bad;
            }
            match self.fill(start) {
                Ok(true) => {}
                Ok(false) | Err(_) => return ReadOutcome::Closed,
            }
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).into_owned();
        self.buf.drain(..head_end + 4);
        let mut lines = head.split("\r\n");
        let request_line = lines.next().unwrap_or_default();
        let mut parts = request_line.split(' ');
        let (Some(method), Some(target), Some(version)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return ReadOutcome::Bad;
        };
        if method.is_empty() || !version.starts_with("HTTP/") {
            return ReadOutcome::Bad;
        }
        let mut headers = Vec::new();
        for line in lines {
            let Some((n, v)) = line.split_once(':') else {
                return ReadOutcome::Bad;
            };
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
        let get = |name: &str| {
            headers
                .iter()
                .find(|(n, _): &&(String, String)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let chunked =
            get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        let body = if chunked {
            match self.read_chunked(start) {
                Some(b) => b,
                None => return ReadOutcome::Closed,
            }
        } else {
            let len: usize = match get("content-length").map(|v| v.parse()) {
                None => 0,
                Some(Ok(n)) => n,
                Some(Err(_)) => return ReadOutcome::Bad,
            };
            match self.read_exact_body(len, start) {
                Some(b) => b,
                None => return ReadOutcome::Closed,
            }
        };
        ReadOutcome::Request(RecordedRequest {
            method: method.to_string(),
            target: target.to_string(),
            version: version.to_string(),
            headers,
            body,
            peer: self.peer,
            tls: self.stream.is_tls(),
            sni: self.stream.sni(),
            index: index_hint,
        })
    }

    fn read_exact_body(&mut self, len: usize, start: Instant) -> Option<Vec<u8>> {
        let mut body = Vec::new();
        let mut remaining = len;
        while remaining > 0 {
            if self.buf.is_empty() && !self.fill(start).ok()? {
                return None;
            }
            let take = remaining.min(self.buf.len());
            if body.len() < MAX_BODY {
                body.extend_from_slice(&self.buf[..take]);
            }
            self.buf.drain(..take);
            remaining -= take;
        }
        Some(body)
    }

    fn read_line(&mut self, start: Instant) -> Option<String> {
        loop {
            if let Some(p) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..p]).into_owned();
                self.buf.drain(..p + 2);
                return Some(line);
            }
            if self.buf.len() > MAX_HEAD || !self.fill(start).ok()? {
                return None;
            }
        }
    }

    fn read_chunked(&mut self, start: Instant) -> Option<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line(start)?;
            let size_hex = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size_hex, 16).ok()?;
            if size == 0 {
                // Trailers until the empty line.
                loop {
                    if self.read_line(start)?.is_empty() {
                        return Some(body);
                    }
                }
            }
            let chunk = self.read_exact_body(size, start)?;
            if body.len() < MAX_BODY {
                body.extend_from_slice(&chunk);
            }
            self.read_line(start)?;
        }
    }

    /// Sleeps `d` in small slices; false when the server stops meanwhile.
    pub fn pause(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        while Instant::now() < end {
            if self.stopped() {
                return false;
            }
            std::thread::sleep(POLL.min(end - Instant::now()));
        }
        !self.stopped()
    }

    /// Writes a response. `head_only` for HEAD requests (headers as for GET, no body).
    pub fn write_response(
        &mut self,
        resp: &RawResponse,
        head_only: bool,
        drip: Option<Duration>,
    ) -> io::Result<()> {
        self.stream.write_all(&resp.head_bytes())?;
        if head_only {
            return self.stream.flush();
        }
        match drip {
            Some(d) if !resp.body.is_empty() => {
                self.stream.flush()?;
                for b in &resp.body {
                    if !self.pause(d) {
                        return Err(io::Error::other("server stopped"));
                    }
                    self.stream.write_all(std::slice::from_ref(b))?;
                    self.stream.flush()?;
                }
                Ok(())
            }
            _ => {
                self.stream.write_all(&resp.body)?;
                self.stream.flush()
            }
        }
    }

    /// Sends the head of `resp` (whose `Content-Length` says `bytes`) and then `bytes` of
    /// filler, made as they are sent: a gigabyte costs the fake 8 KiB of memory. Stops when
    /// the client goes away or the server stops.
    pub fn write_filler(&mut self, resp: &RawResponse, bytes: u64) -> io::Result<()> {
        self.stream.write_all(&resp.head_bytes())?;
        let filler: Vec<u8> = b"hostile filler. "
            .iter()
            .copied()
            .cycle()
            .take(8 * 1024)
            .collect();
        let mut left = bytes;
        while left > 0 {
            if self.stopped() {
                return Err(io::Error::other("server stopped"));
            }
            let n = left.min(filler.len() as u64) as usize;
            self.stream.write_all(&filler[..n])?;
            left -= n as u64;
        }
        self.stream.flush()
    }

    /// Sends `resp` (whose head announces chunked encoding) and then chunks forever, until
    /// the client goes away or the server stops.
    pub fn write_endless(&mut self, resp: &RawResponse, drip: Option<Duration>) -> io::Result<()> {
        self.stream.write_all(&resp.head_bytes())?;
        if !resp.body.is_empty() {
            write!(self.stream, "{:x}\r\n", resp.body.len())?;
            self.stream.write_all(&resp.body)?;
            self.stream.write_all(b"\r\n")?;
        }
        let filler = vec![b' '; 8 * 1024];
        loop {
            if self.stopped() {
                return Err(io::Error::other("server stopped"));
            }
            match drip {
                Some(d) => {
                    if !self.pause(d) {
                        return Err(io::Error::other("server stopped"));
                    }
                    self.stream.write_all(b"1\r\n \r\n")?;
                }
                None => {
                    write!(self.stream, "{:x}\r\n", filler.len())?;
                    self.stream.write_all(&filler)?;
                    self.stream.write_all(b"\r\n")?;
                }
            }
            self.stream.flush()?;
        }
    }
}

/// Whether the connection stays open after this request.
pub fn keep_alive(req: &RecordedRequest) -> bool {
    let conn = req
        .header("connection")
        .map(|v| v.to_ascii_lowercase())
        .unwrap_or_default();
    if req.version == "HTTP/1.0" {
        conn.contains("keep-alive")
    } else {
        !conn.contains("close")
    }
}

/// The first byte of a TLS connection is a handshake record (0x16). Go's server answers a
/// plain-HTTP request on a TLS port with this text; so does the fake.
pub const PLAIN_HTTP_TO_TLS_PORT: &[u8] =
    b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/// Completes the server side of a TLS handshake (polling, so a stopped server gives up, and
/// giving up after `IDLE`), then sends what the handshake left to send (TLS 1.3 session
/// tickets). The kind of handshake, or `None` when it failed (an alert was sent if rustls had
/// one to send) or the client went away.
pub fn complete_handshake(
    server: &mut rustls::ServerConnection,
    tcp: &mut TcpStream,
    stop: &AtomicBool,
) -> Option<rustls::HandshakeKind> {
    let _ = tcp.set_read_timeout(Some(POLL));
    let start = Instant::now();
    while server.is_handshaking() {
        if stop.load(Ordering::SeqCst) || start.elapsed() > IDLE {
            return None;
        }
        match server.complete_io(tcp) {
            Ok(_) => {}
            Err(e) if is_timeout(&e) => continue,
            Err(_) => return None,
        }
    }
    while server.wants_write() {
        if server.write_tls(tcp).is_err() {
            return None;
        }
    }
    server.handshake_kind()
}

/// Peeks the first byte (waiting up to ~`IDLE`); `None` when the client sent nothing.
pub fn peek_first_byte(tcp: &TcpStream, stop: &AtomicBool) -> Option<u8> {
    let _ = tcp.set_read_timeout(Some(POLL));
    let start = Instant::now();
    let mut b = [0u8; 1];
    loop {
        if stop.load(Ordering::SeqCst) || start.elapsed() > IDLE {
            return None;
        }
        match tcp.peek(&mut b) {
            Ok(0) => return None,
            Ok(_) => return Some(b[0]),
            Err(e) if is_timeout(&e) => continue,
            Err(_) => return None,
        }
    }
}
