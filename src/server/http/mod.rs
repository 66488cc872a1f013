//! The one place that reads an HTTP request, for every server of the crate (scan service,
//! exporter): a small HTTP/1.1 server on blocking threads. Every connection carries one
//! request (`Connection: close`), read within caps and deadlines, handled by a route table
//! above this module, answered, logged in one line on stderr.
//!
//! Why not `tiny_http` (the design card's choice, still used by the test fakes): its 0.12 reads
//! a request's header lines without any size limit or deadline (a client that sends header
//! bytes without a line end grows one buffer until memory runs out, and one that drips them
//! holds a thread forever), and a server of ours must cap every request. What a server here
//! needs is small: a request line, headers, a body with `Content-Length`, one answer.
//!
//! A connection goes from the accept loop to a reader, which reads its request whole, then to
//! a worker, which handles it: reading a head never holds a worker, however slowly it comes.
//!
//! Limits (a hostile client can cost at most these):
//! - the request head (request line and headers) at most 16 KiB and 100 headers, read within
//!   5 s in all;
//! - a body only with `Content-Length` (no chunked uploads: 411), one of them, digits only
//!   (RFC 9112: two, equal or not, or a sign are 400), at most the route table's cap (8 KiB
//!   for the scan service), read within 10 s;
//! - at most [`Limits::readers`] (64) requests are read at once; past that, every new
//!   connection evicts the read that has gone on longest (`server::reading`), so dripping
//!   connections from any number of addresses cannot keep a request sent whole (a health
//!   check) from being read at once;
//! - requests read wait for a worker in a bounded queue (four places a worker); a full queue
//!   is answered 503 with `Retry-After`;
//! - with [`Server::cap_connections`], one client (an IPv4 address, an IPv6 /64) and one
//!   network (IPv4 /24, IPv6 /56) hold at most so many connections (reading, queued or
//!   served); one more is answered 429 with `Retry-After` at once, by a thread of its own that
//!   also waits (at most [`TURN_AWAY_TIME`]) for the client to close: closing a socket with a
//!   request unread in it makes the kernel reset the connection, and the client sees a reset,
//!   not the 429;
//! - out of file descriptors, the accept loop gives up the longest reads and waits a moment
//!   instead of spinning on the error, and says so once.
//!
//! A HEAD request reaches the routes as it is and is answered with the head of their answer,
//! `Content-Length` included, without the body.
//!
//! Rooms: this file holds the messages (`Request`, `Response`, `Limits`); `route` the route
//! table; `serve` the accept loop, readers, workers and connection caps; `wire` the bytes
//! read and written; `same_host` whether a request names this server.

use super::occupancy::{Occupancy, Seat};
use super::reading::{Reading, Ticket, Waiting};
use serde_json::Value;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Caps and deadlines of one request.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_head_bytes: usize,
    pub max_headers: usize,
    pub max_body_bytes: usize,
    /// The whole request head must arrive within this.
    pub head_deadline: Duration,
    /// Requests read at once (each by a thread of its own, never a worker's): past it, a new
    /// connection evicts the longest read.
    pub readers: usize,
    /// The whole body must arrive within this.
    pub body_deadline: Duration,
    /// Each read and write on the socket.
    pub io_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_head_bytes: 16 * 1024,
            max_headers: 100,
            max_body_bytes: 8 * 1024,
            // A request head is a few hundred bytes: sent whole, it arrives at once.
            head_deadline: Duration::from_secs(5),
            readers: 64,
            body_deadline: Duration::from_secs(10),
            io_timeout: Duration::from_secs(5),
        }
    }
}

/// One request, read whole.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The path without the query, percent-decoding left to the routes.
    pub path: String,
    /// Query parameters, percent-decoded (`+` is a space), in order.
    pub query: Vec<(String, String)>,
    /// Header names in lower case, values trimmed, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub peer: SocketAddr,
}

impl Request {
    /// A request of unit tests: no query, headers or body, from a loopback peer.
    #[cfg(test)]
    pub fn local(method: &str, path: &str) -> Request {
        Request {
            method: method.into(),
            path: path.into(),
            query: Vec::new(),
            headers: Vec::new(),
            body: Vec::new(),
            peer: "127.0.0.1:1".parse().unwrap(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        crate::net::http::values(&self.headers, name).next()
    }

    /// Every line of a header, in the order received: a proxy may add a line of its own
    /// (HAProxy's `option forwardfor`) where another appends to the line (nginx, Caddy).
    pub fn header_lines(&self, name: &str) -> Vec<&str> {
        crate::net::http::values(&self.headers, name).collect()
    }

    /// The media type the body is declared as (`type/subtype`, lower case), parameters such as
    /// `; charset=utf-8` aside; empty when none is.
    pub fn media_type(&self) -> String {
        let declared = self.header("content-type").unwrap_or_default();
        let (media, _parameters) = declared.split_once(';').unwrap_or((declared, ""));
        media.trim().to_ascii_lowercase()
    }

    /// What the browser says of where the request comes from (`origin::BrowserSays`).
    pub fn browser(&self) -> super::origin::BrowserSays<'_> {
        super::origin::BrowserSays {
            origin: self.header("origin"),
            host: self.header("host"),
            fetch_site: self.header("sec-fetch-site"),
        }
    }

    /// Whether `Authorization: Bearer <token>` carries `token`, compared in constant time.
    pub fn bearer_matches(&self, token: &str) -> bool {
        let presented = self
            .header("authorization")
            .and_then(|v| {
                v.split_once(' ')
                    .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            })
            .map(|(_, t)| t.trim())
            .unwrap_or("");
        constant_time_eq(presented.as_bytes(), token.as_bytes())
    }
}

/// Equal contents, in a time that depends only on the lengths (a token's length is no secret
/// worth hiding: the minimum is documented).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// One answer.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// A body written as it is produced (after `body`, which is then usually empty): the
    /// answer has no Content-Length and ends when the connection closes.
    pub stream: Option<Stream>,
}

/// Writes a streamed body on the worker that serves the request, after the head has been
/// sent. Every write is bounded by the server's I/O deadline; an `Err` (the client went
/// away) ends the answer.
pub struct Stream(Box<Produce>);

/// What a [`Stream`] runs: it writes the body to the connection.
pub type Produce = dyn FnOnce(&mut dyn Write) -> io::Result<()> + Send;

impl Stream {
    /// The same body, keeping `held` (a client's seat) until it is written.
    pub fn holding<T: Send + 'static>(self, held: T) -> Stream {
        let Stream(produce) = self;
        Stream(Box::new(move |out: &mut dyn Write| {
            let _held = held;
            produce(out)
        }))
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stream")
    }
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            stream: None,
        }
    }

    /// An answer whose body `produce` writes as it goes (server-sent events): the head is
    /// sent first, then `produce` runs on the worker that serves the request.
    pub fn streaming(
        status: u16,
        content_type: &str,
        produce: impl FnOnce(&mut dyn Write) -> io::Result<()> + Send + 'static,
    ) -> Response {
        Response {
            stream: Some(Stream(Box::new(produce))),
            ..Response::new(status, content_type, Vec::new())
        }
    }

    pub fn json(status: u16, value: &Value) -> Response {
        let mut body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
        body.push(b'\n');
        Response::new(status, "application/json", body)
    }

    /// An error as every server of the crate answers one: `{"error": {"code", "message"}}`.
    pub fn error(status: u16, code: &str, message: &str) -> Response {
        Response::json(
            status,
            &serde_json::json!({"error": {"code": code, "message": message}}),
        )
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// A route's handler: the server, the request, and the values of the path's `{parameters}`
/// in their order.
pub type Handler<S> = fn(&S, &Request, &[&str]) -> Response;

mod route;
mod same_host;
mod serve;
mod wire;

pub use route::*;
pub use same_host::*;
pub use serve::*;
pub use wire::*;

#[cfg(test)]
mod tests;
