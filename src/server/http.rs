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

use super::occupancy::{Occupancy, Seat};
use super::reading::{Reading, Ticket, Waiting};
use serde_json::Value;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Connections turned away (503) wait here for [`turn_away`]; beyond this many, one is answered
/// at once and closed, which may reset it.
const TURN_AWAY_QUEUE: usize = 256;

/// How long a turned-away connection may take to close after its 503.
const TURN_AWAY_TIME: Duration = Duration::from_secs(1);

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

/// One row of a server's route table: the methods it answers, its path and its handler.
pub struct Route<S: 'static> {
    /// What `Allow` lists for the path: HEAD only where a route says so (the layer then
    /// answers the head of the GET answer). None: every method no other route of the path
    /// takes (a handler that answers its own 405).
    pub methods: &'static [&'static str],
    /// `/api/scans/{uuid}`: each `{name}` stands for one non-empty segment.
    pub path: &'static str,
    pub handle: Handler<S>,
    /// Whether the server serves the route at all (`--no-mcp` turns routes off): `None` always.
    pub served: Option<fn(&S) -> bool>,
    /// The route starts work (a scan, a session, a round): what a browser marks as another
    /// site's request is refused before its handler runs ([`Route::starts_work`]).
    pub starts_work: bool,
    /// How a server's API documents describe it (`None`: they do not).
    pub doc: Option<Operation>,
}

/// A route as an API document describes it (an OpenAPI operation): the documents are
/// generated from the route table, so a route cannot be served undescribed or described
/// unserved.
pub struct Operation {
    pub id: &'static str,
    pub summary: &'static str,
    pub tag: &'static str,
    /// The rest of the operation: its description, parameters, body and answers.
    pub describe: fn() -> Value,
}

impl<S> Route<S> {
    pub const fn new(
        methods: &'static [&'static str],
        path: &'static str,
        handle: Handler<S>,
    ) -> Route<S> {
        Route {
            methods,
            path,
            handle,
            served: None,
            starts_work: false,
            doc: None,
        }
    }

    /// The route starts work: a request a browser sends for another site's page (`Origin`
    /// foreign or `null`, `Sec-Fetch-Site: cross-site` or `same-site`: `origin::BrowserSays`)
    /// is answered 403 `forbidden_origin` and the handler never runs. An `<img src>`, a
    /// sandboxed iframe's form or a fetch of any page the operator opens cannot make the
    /// server scan, rescan or open sessions.
    pub const fn starts_work(self) -> Route<S> {
        Route {
            starts_work: true,
            ..self
        }
    }

    /// The route, described as `doc`.
    pub const fn doc(self, doc: Operation) -> Route<S> {
        Route {
            doc: Some(doc),
            ..self
        }
    }

    /// The route, served only when `served` says so.
    pub const fn when(self, served: fn(&S) -> bool) -> Route<S> {
        Route {
            served: Some(served),
            ..self
        }
    }

    /// Whether `server` serves the route (see [`Route::when`]).
    pub fn is_served(&self, server: &S) -> bool {
        self.served.is_none_or(|served| served(server))
    }

    /// The values of the path's parameters when `path` is this route's.
    fn capture<'p>(&self, path: &'p str) -> Option<Vec<&'p str>> {
        let mut values = Vec::new();
        let mut given = path.split('/');
        for pattern in self.path.split('/') {
            let segment = given.next()?;
            if pattern.starts_with('{') {
                if segment.is_empty() {
                    return None;
                }
                values.push(segment);
            } else if pattern != segment {
                return None;
            }
        }
        given.next().is_none().then_some(values)
    }
}

/// Answers `request` from `routes`: the route of its path and method (or the path's route for
/// any method); 405 with `Allow` (the methods of the path's routes) for another method; 404 with `not_found` for a path no
/// route has. A trailing slash does not count (`/healthz/` is `/healthz`). A route that
/// [starts work](Route::starts_work) refuses another site's request (403); `base_url` is the
/// server's `--base-url`, whose origin is its own (empty: only its loopback address is).
pub fn route<S>(
    routes: &[Route<S>],
    server: &S,
    request: &Request,
    not_found: &str,
    base_url: &str,
) -> Response {
    let path = match request.path.trim_end_matches('/') {
        "" => "/",
        path => path,
    };
    let mut allowed: Vec<&str> = Vec::new();
    let mut any_method = None;
    for route in routes {
        if !route.is_served(server) {
            continue;
        }
        let Some(values) = route.capture(path) else {
            continue;
        };
        if route.methods.contains(&request.method.as_str()) {
            if route.starts_work && request.browser().another_site(base_url) {
                return Response::error(
                    403,
                    "forbidden_origin",
                    "this starts work, and another site's page may not ask for it (the \
                     browser said so: Origin or Sec-Fetch-Site); call it from a program or \
                     this server's own pages",
                );
            }
            return (route.handle)(server, request, &values);
        }
        if route.methods.is_empty() {
            any_method = any_method.or(Some((route.handle, values)));
        }
        allowed.extend(route.methods);
    }
    if let Some((handle, values)) = any_method {
        return handle(server, request, &values);
    }
    if allowed.is_empty() {
        return Response::error(404, "not_found", not_found);
    }
    let allow = allowed.join(", ");
    Response::error(405, "method_not_allowed", &format!("{path} takes {allow}"))
        .with_header("Allow", &allow)
}

/// A bound listener, not yet serving.
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    cap: Option<ConnectionCap>,
}

/// How many connections one client, and one network, may hold at once
/// ([`Server::cap_connections`]).
#[derive(Clone)]
pub struct ConnectionCap {
    clients: Arc<Occupancy>,
    networks: Arc<Occupancy>,
    /// The client and the network a peer address counts as (`server::clients`), `None` for a
    /// peer that is not capped (a trusted reverse proxy carries many clients).
    key: Arc<dyn Fn(IpAddr) -> Option<(String, String)> + Send + Sync>,
}

/// The seats a connection holds: its client's and its network's, freed when it is closed.
type Seats = Vec<Seat>;

impl ConnectionCap {
    /// `per_client` connections of one client and `per_network` of one network at once; `key`
    /// names the client and the network of a peer (`None`: not capped).
    pub fn new(
        per_client: usize,
        per_network: usize,
        key: impl Fn(IpAddr) -> Option<(String, String)> + Send + Sync + 'static,
    ) -> ConnectionCap {
        ConnectionCap {
            clients: Occupancy::new(per_client, None),
            networks: Occupancy::new(per_network, None),
            key: Arc::new(key),
        }
    }

    /// The cap of a server whose every peer is a client: an IPv4 address or an IPv6 /64, in its
    /// IPv4 /24 or IPv6 /56.
    pub fn by_address(per_client: usize, per_network: usize) -> ConnectionCap {
        ConnectionCap::new(per_client, per_network, |ip| {
            Some((
                super::clients::address_key(ip),
                super::clients::network_key(ip),
            ))
        })
    }

    /// The seats of a connection from `peer`: none when the peer is not capped, `Err` when its
    /// network or its client holds its share.
    fn admit(&self, peer: Option<SocketAddr>) -> Result<Seats, Refusal> {
        let Some((client, network)) = peer.and_then(|peer| (self.key)(peer.ip())) else {
            return Ok(Vec::new());
        };
        let network = self.networks.take(&network).ok_or(Refusal::NetworkCap)?;
        let client = self.clients.take(&client).ok_or(Refusal::ClientCap)?;
        Ok(vec![network, client])
    }
}

impl Server {
    pub fn bind(addr: impl ToSocketAddrs) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        Ok(Server {
            listener,
            addr,
            cap: None,
        })
    }

    /// Caps the connections each client and each network hold at once (see the module
    /// comment).
    pub fn cap_connections(self, cap: ConnectionCap) -> Server {
        Server {
            cap: Some(cap),
            ..self
        }
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until `stop` is set. `limits.readers` threads read requests (at most that many
    /// at once: past it, a new connection evicts the longest read, `server::reading`), and
    /// `workers` threads handle the requests read, which queue up to `4 * workers`; beyond,
    /// a request is answered 503. After `stop`, no connection is accepted; what was accepted
    /// is read, handled and answered, then this returns.
    pub fn run<H>(self, workers: usize, limits: Limits, handler: H, stop: Arc<AtomicBool>)
    where
        H: Fn(&Request) -> Response + Send + Sync + 'static,
    {
        let workers = workers.max(1);
        let reading = Reading::new(limits.readers);
        let accepted = Arc::new(Waiting::<Accepted>::new(limits.readers.max(1) * 2));
        let (to_workers, jobs) = mpsc::sync_channel::<Job>(workers * 4);
        let jobs = Arc::new(Mutex::new(jobs));
        let handler = Arc::new(handler);
        let readers: Vec<_> = (0..limits.readers.max(1))
            .map(|i| {
                let (accepted, to_workers) = (accepted.clone(), to_workers.clone());
                std::thread::Builder::new()
                    .name(format!("http-reader-{i}"))
                    .spawn(move || read(&accepted, &to_workers, limits))
                    .expect("start an HTTP reader")
            })
            .collect();
        // The readers hold the senders: once they are gone, the workers end.
        drop(to_workers);
        let pool: Vec<_> = (0..workers)
            .map(|i| {
                let jobs = jobs.clone();
                let handler = handler.clone();
                std::thread::Builder::new()
                    .name(format!("http-worker-{i}"))
                    .spawn(move || work(&jobs, &*handler, limits))
                    .expect("start an HTTP worker")
            })
            .collect();
        // A blocking accept cannot see the flag: a watcher wakes it with a connection of its own.
        let watcher = {
            let stop = stop.clone();
            let addr = self.addr;
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = TcpStream::connect_timeout(&wake_address(addr), Duration::from_secs(1));
            })
        };
        let (refuse, refused) = mpsc::sync_channel::<(TcpStream, Refusal)>(TURN_AWAY_QUEUE);
        let turner = std::thread::Builder::new()
            .name("http-turn-away".into())
            .spawn(move || {
                for (stream, why) in refused {
                    turn_away(stream, why, limits);
                }
            })
            .expect("start the HTTP turn-away thread");
        Accepting {
            listener: &self.listener,
            cap: self.cap.as_ref(),
            reading: &reading,
            to_readers: &accepted,
            refuse: &refuse,
            limits,
            stop: &stop,
        }
        .run();
        accepted.close();
        drop(refuse);
        for thread in readers.into_iter().chain(pool) {
            let _ = thread.join();
        }
        let _ = turner.join();
        let _ = watcher.join();
    }
}

/// Where to connect to wake the accept loop: the listener, or loopback for a wildcard address.
fn wake_address(mut addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    addr
}

/// An accepted connection waiting for a reader, with the seats its client and network hold
/// for it and its place among the reads.
struct Accepted {
    stream: TcpStream,
    seats: Seats,
    ticket: Ticket,
    at: Instant,
}

/// A request read whole, waiting for a worker; the seats go with it until it is answered.
struct Job {
    stream: TcpStream,
    request: Request,
    _seats: Seats,
    at: Instant,
}

/// Why a connection is answered at once without reaching a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// Every worker is busy and the queue is full.
    Busy,
    /// The client holds its share of connections.
    ClientCap,
    /// The client's network holds its share of connections.
    NetworkCap,
}

impl Refusal {
    fn answer(self) -> Response {
        match self {
            Refusal::Busy => Response::error(
                503,
                "busy",
                "every worker is busy and the queue is full; retry shortly",
            ),
            Refusal::ClientCap => Response::error(
                429,
                "too_many_connections",
                "your address holds as many open connections as one client may; close one \
                 and retry",
            ),
            Refusal::NetworkCap => Response::error(
                429,
                "too_many_connections",
                "your network holds as many open connections as one network may; close one \
                 and retry",
            ),
        }
        .with_header("Retry-After", "1")
    }

    /// Writes the answer (a failure to write is the client's loss) and logs it.
    fn send(self, stream: &mut TcpStream) {
        let answer = self.answer();
        let status = answer.status;
        let _ = write_response(stream, answer, false);
        log_line("-", "-", status, Duration::ZERO);
    }
}

/// How the accept loop tells an operator it is out of file descriptors (or of another
/// resource), and backs off, instead of spinning on the same error.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
/// The same accept error is logged again after this long at the soonest.
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(60);
/// Reads given up at once when the accept failed for want of a file descriptor: enough that a
/// backlog of connections drains in a few rounds, not one a round.
const EVICT_WHEN_EXHAUSTED: usize = 8;

/// The accept loop and what it hands connections to.
struct Accepting<'a> {
    listener: &'a TcpListener,
    cap: Option<&'a ConnectionCap>,
    reading: &'a Arc<Reading>,
    to_readers: &'a Waiting<Accepted>,
    refuse: &'a SyncSender<(TcpStream, Refusal)>,
    limits: Limits,
    stop: &'a AtomicBool,
}

impl Accepting<'_> {
    /// Accepts connections until `stop`: each goes to the readers with its seats and its place
    /// among the reads, or, refused, to the turn-away thread's queue; when that queue is full
    /// too, it is answered here, without waiting for the client. Ends when a queue's receiver
    /// is gone.
    fn run(&self) {
        let mut last_logged: Option<(Option<i32>, Instant)> = None;
        for stream in self.listener.incoming() {
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            let stream = match stream {
                Ok(stream) => stream,
                Err(e) => {
                    self.failed(&e, &mut last_logged);
                    continue;
                }
            };
            let admitted = self
                .cap
                .map_or(Ok(Vec::new()), |cap| cap.admit(stream.peer_addr().ok()));
            let refused = match admitted {
                Err(why) => (stream, why),
                Ok(seats) => {
                    let accepted = Accepted {
                        stream,
                        seats,
                        ticket: self.reading.enter(),
                        at: Instant::now(),
                    };
                    // Never the new connection: the evicted ones waiting, then the oldest.
                    self.to_readers
                        .push(accepted, |waiting| waiting.ticket.evicted());
                    continue;
                }
            };
            match self.refuse.try_send(refused) {
                Ok(()) => {}
                Err(TrySendError::Full((mut stream, why))) => {
                    let _ = stream.set_write_timeout(Some(self.limits.io_timeout));
                    why.send(&mut stream);
                }
                Err(TrySendError::Disconnected(_)) => break,
            }
        }
    }

    /// An accept that failed. Out of file descriptors (`EMFILE`, `ENFILE`) or memory, the
    /// longest reads give up their sockets and the loop waits a moment: retrying at once would
    /// spin on the same error while nothing frees a descriptor. Logged once a minute at most.
    fn failed(&self, error: &io::Error, last_logged: &mut Option<(Option<i32>, Instant)>) {
        // EMFILE 24, ENFILE 23, ENOBUFS 105, ENOMEM 12 (Linux): resources, not a client's fault.
        let exhausted = matches!(error.raw_os_error(), Some(23 | 24 | 105 | 12));
        if !exhausted {
            return; // a connection that went away before it was accepted
        }
        let repeated = last_logged.is_some_and(|(code, at)| {
            code == error.raw_os_error() && at.elapsed() < ACCEPT_LOG_EVERY
        });
        if !repeated {
            // The layer serves both programs: the line names itself, not one of them.
            eprintln!(
                "http: cannot accept connections ({error}); dropping the longest unfinished \
                 requests and retrying"
            );
            *last_logged = Some((error.raw_os_error(), Instant::now()));
        }
        for _ in 0..EVICT_WHEN_EXHAUSTED {
            if !self.reading.evict_oldest() {
                break;
            }
        }
        std::thread::sleep(ACCEPT_BACKOFF);
    }
}

/// Answers a refused connection (503 busy, 429 over its client's share) and closes it
/// without a reset: the answer, the end of our side, then whatever the client still sends
/// (its request) is read and dropped until it closes, at most [`TURN_AWAY_TIME`] in all.
fn turn_away(mut stream: TcpStream, why: Refusal, limits: Limits) {
    let until = Instant::now() + TURN_AWAY_TIME;
    let _ = stream.set_write_timeout(Some(limits.io_timeout.min(TURN_AWAY_TIME)));
    why.send(&mut stream);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 4096];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// A reader: takes accepted connections and reads their requests (a read that was evicted is
/// dropped), handing each request read whole to the workers; a request that cannot be read
/// is answered here (400, 408, 413, ...), and one the workers have no room for is answered
/// 503, its request read, so closing it resets nothing.
fn read(accepted: &Waiting<Accepted>, to_workers: &SyncSender<Job>, limits: Limits) {
    while let Some(Accepted {
        mut stream,
        seats,
        ticket,
        at,
    }) = accepted.pop()
    {
        if ticket.evicted() {
            continue;
        }
        let _ = stream.set_write_timeout(Some(limits.io_timeout));
        let _ = stream.set_nodelay(true);
        let read = read_request(&stream, limits, &|| ticket.evicted());
        drop(ticket);
        match read {
            Ok(request) => {
                let job = Job {
                    stream,
                    request,
                    _seats: seats,
                    at,
                };
                match to_workers.try_send(job) {
                    Ok(()) => {}
                    Err(TrySendError::Full(mut job)) => {
                        let busy = Refusal::Busy.answer();
                        let (method, path) = (job.request.method.clone(), job.request.path.clone());
                        answer(&mut job.stream, &method, &path, busy, job.at);
                    }
                    Err(TrySendError::Disconnected(_)) => return,
                }
            }
            Err(Some(response)) => answer(&mut stream, "-", "-", response, at),
            Err(None) => {}
        }
    }
}

/// A worker: handles the requests read, one at a time.
fn work<H>(jobs: &Mutex<Receiver<Job>>, handler: &H, limits: Limits)
where
    H: Fn(&Request) -> Response,
{
    loop {
        // The queue's lock is held for the wait only; the seats until the answer is written.
        let Ok(Ok(mut job)) = jobs.lock().map(|receiver| receiver.recv()) else {
            return;
        };
        let _ = job.stream.set_write_timeout(Some(limits.io_timeout));
        // A handler that panics answers 500 and keeps the worker.
        let response =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&job.request)))
                .unwrap_or_else(|_| {
                    Response::error(500, "internal", "the request could not be handled")
                });
        answer(
            &mut job.stream,
            &job.request.method,
            &job.request.path,
            response,
            job.at,
        );
    }
}

/// Writes `response` to a request of `method` (HEAD: the head GET would get, without its
/// body, RFC 9110 9.3.2) and logs it with the time since the connection was accepted.
fn answer(stream: &mut TcpStream, method: &str, path: &str, response: Response, at: Instant) {
    let status = response.status;
    let _ = write_response(stream, response, method == "HEAD");
    let _ = stream.flush();
    log_line(method, path, status, at.elapsed());
}

/// One line per request on stderr: method, path (never the query: it may carry a host or a
/// token), status, duration.
fn log_line(method: &str, path: &str, status: u16, took: Duration) {
    let printable = |s: &str| -> String {
        s.chars()
            .take(200)
            .map(|c| if c.is_control() { '?' } else { c })
            .collect()
    };
    eprintln!(
        "{} {} {status} {:.1}ms",
        printable(method),
        printable(path),
        took.as_secs_f64() * 1000.0
    );
}

/// How long one read of a request waits before the reader looks at its deadline and whether
/// it was evicted: the time a reader takes to give up a dripping connection for a new one.
const READ_POLL: Duration = Duration::from_millis(25);

/// The socket a request is read from: every read waits [`READ_POLL`] at a time, and ends with
/// `TimedOut` once `until` has passed or `ConnectionAborted` once the read was evicted.
struct Watched<'a> {
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
fn read_request(
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
fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

fn bad(status: u16, code: &str, message: &str) -> Option<Response> {
    Some(Response::error(status, code, message))
}

/// Reads one line (through `\n`) of at most `max` bytes, before `until`. Returns the bytes
/// read; a line longer than `max` returns `max` bytes without its end.
fn read_line<R: BufRead>(
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

fn percent_decode(bytes: &[u8]) -> String {
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

fn write_response(stream: &mut TcpStream, response: Response, head_only: bool) -> io::Result<()> {
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

    fn allows(&self, host: &str) -> bool {
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
fn host_name(host: &str) -> String {
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
fn url_host(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    Some(host_name(authority))
}

/// The reason phrase of a status (RFC 9110's); another gets an empty one, which RFC 9112
/// allows, rather than a made-up word.
fn reason(status: u16) -> &'static str {
    ureq::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|status| status.canonical_reason())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Running {
        addr: SocketAddr,
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    impl Drop for Running {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    fn start(limits: Limits, workers: usize) -> Running {
        let server = Server::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            server.run(
                workers,
                limits,
                |r: &Request| match r.path.as_str() {
                    "/panic" => panic!("a handler bug"),
                    "/slow" => {
                        std::thread::sleep(Duration::from_millis(300));
                        Response::json(200, &serde_json::json!({"slow": true}))
                    }
                    _ => Response::json(
                        200,
                        &serde_json::json!({
                            "method": r.method, "path": r.path,
                            "q": r.query.iter().find(|(n, _)| n == "url").map(|(_, v)| v),
                            "body": String::from_utf8_lossy(&r.body),
                            "bearer": r.bearer_matches("s3cret-token"),
                        }),
                    ),
                },
                flag,
            )
        });
        Running {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    /// Issue 31, item 1: four addresses of one network hold no more than the network's share
    /// (IPv4 /24), nor do four /64s of one IPv6 /56; another network keeps its own.
    #[test]
    fn the_addresses_of_one_network_share_its_cap() {
        let cap = ConnectionCap::by_address(8, 32);
        let peer = |ip: &str| Some(SocketAddr::new(ip.parse().unwrap(), 40_000));
        let mut held = Vec::new();
        for (first, fifth, elsewhere) in [
            ("192.0.2.{}", "192.0.2.5", "198.51.100.1"),
            ("2001:db8:0:{}::1", "2001:db8:0:5::1", "2001:db8:1:100::1"),
        ] {
            for a in 1..=4 {
                let address = first.replace("{}", &a.to_string());
                for _ in 0..8 {
                    held.push(cap.admit(peer(&address)).expect("within the shares"));
                }
                // Its own share first; the fourth fills the network's too.
                let full = if a < 4 {
                    Refusal::ClientCap
                } else {
                    Refusal::NetworkCap
                };
                assert_eq!(cap.admit(peer(&address)).unwrap_err(), full, "{address}");
            }
            assert_eq!(
                cap.admit(peer(fifth)).unwrap_err(),
                Refusal::NetworkCap,
                "{fifth}"
            );
            held.push(cap.admit(peer(elsewhere)).expect("another network"));
        }
        // Seats go with their connections.
        held.clear();
        assert!(cap.admit(peer("192.0.2.5")).is_ok());
    }

    /// Sends raw bytes and returns the whole answer.
    fn exchange(addr: SocketAddr, raw: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = s.write_all(raw);
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    fn status(answer: &str) -> u16 {
        answer
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }

    #[test]
    fn requests_are_read_and_answered_as_json() {
        let s = start(Limits::default(), 2);
        let a = exchange(
            s.addr,
            b"POST /api/queue?url=cloud%2Eexample+x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\nContent-Length: 5\r\n\r\nhello",
        );
        assert_eq!(status(&a), 200, "{a}");
        assert!(a.contains("Connection: close\r\n"), "{a}");
        let body: Value = serde_json::from_str(a.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(body["q"], "cloud.example x");
        assert_eq!(body["body"], "hello");
        assert_eq!(body["bearer"], true);
        let a = exchange(
            s.addr,
            b"GET / HTTP/1.1\r\nAuthorization: Bearer s3cret-tokeN\r\n\r\n",
        );
        assert!(a.contains("\"bearer\":false"), "{a}");
        // HEAD: the head GET would get, its Content-Length included, and no body.
        let head = exchange(s.addr, b"HEAD /x HTTP/1.1\r\n\r\n");
        assert_eq!(status(&head), 200, "{head}");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|n| n.parse::<usize>().ok());
        assert!(length.is_some_and(|n| n > 20), "{head}");
    }

    #[test]
    fn hostile_requests_get_json_errors() {
        let limits = Limits {
            head_deadline: Duration::from_millis(300),
            body_deadline: Duration::from_millis(300),
            io_timeout: Duration::from_millis(200),
            ..Limits::default()
        };
        let s = start(limits, 2);
        let big_body = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            limits.max_body_bytes + 1
        );
        let head_flood = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000));
        let no_line_end = "a".repeat(40_000);
        for (raw, expected, code) in [
            (big_body.as_str(), 413, "body_too_large"),
            (head_flood.as_str(), 431, "head_too_large"),
            (no_line_end.as_str(), 431, "head_too_large"),
            (
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                411,
                "length_required",
            ),
            ("GET /\r\n\r\n", 400, "bad_request_line"),
            ("GET / HTTP/2.0\r\n\r\n", 505, "version"),
            (
                "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                400,
                "bad_length",
            ),
            // Strict framing: a sign, two lengths (equal or not, two lines or a list).
            (
                "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc",
                400,
                "bad_length",
            ),
            (
                "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
                400,
                "bad_length",
            ),
            (
                "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
                400,
                "bad_length",
            ),
            (
                "POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\nabc",
                400,
                "bad_length",
            ),
            (
                "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
                413,
                "body_too_large",
            ),
            ("GET /panic HTTP/1.1\r\n\r\n", 500, "internal"),
            // Head started, never finished: the deadline answers.
            ("GET / HTTP/1.1\r\nX-Slow: ", 408, "timeout"),
            // Body promised, never sent.
            (
                "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
                408,
                "timeout",
            ),
        ] {
            let a = exchange(s.addr, raw.as_bytes());
            assert_eq!(status(&a), expected, "{raw:.60}: {a}");
            assert!(
                a.contains(&format!("\"code\":\"{code}\"")),
                "{raw:.60}: {a}"
            );
            assert!(a.contains("Content-Type: application/json"), "{a}");
        }
    }

    #[test]
    fn a_dripping_client_is_cut_at_the_head_deadline() {
        let limits = Limits {
            head_deadline: Duration::from_millis(400),
            io_timeout: Duration::from_millis(150),
            ..Limits::default()
        };
        let s = start(limits, 1);
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let started = Instant::now();
        c.write_all(b"GET / HTTP/1.1\r\n").unwrap();
        // One header byte every 100 ms: each read arrives in time, the whole head does not.
        let mut answer = String::new();
        for _ in 0..50 {
            if c.write_all(b"X").is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            if started.elapsed() > Duration::from_secs(2) {
                break;
            }
        }
        let _ = c.read_to_string(&mut answer);
        assert_eq!(status(&answer), 408, "{answer}");
        // The one worker is free again.
        let a = exchange(s.addr, b"GET /x HTTP/1.1\r\n\r\n");
        assert_eq!(status(&a), 200, "{a}");
    }

    #[test]
    fn a_full_queue_answers_503_with_retry_after() {
        let s = start(Limits::default(), 1);
        // One worker and four queue places: slow requests fill them.
        let clients: Vec<_> = (0..8)
            .map(|_| {
                let addr = s.addr;
                std::thread::spawn(move || exchange(addr, b"GET /slow HTTP/1.1\r\n\r\n"))
            })
            .collect();
        let answers: Vec<String> = clients.into_iter().map(|c| c.join().unwrap()).collect();
        let busy: Vec<&String> = answers.iter().filter(|a| status(a) == 503).collect();
        assert!(!busy.is_empty(), "{answers:?}");
        assert!(
            busy.iter().all(|a| a.contains("Retry-After: 1")),
            "{busy:?}"
        );
        assert!(answers.iter().any(|a| status(a) == 200));
    }

    #[test]
    fn connections_beyond_the_queue_get_a_503_never_a_reset() {
        // Closing a socket with the client's request unread in it resets the connection: the
        // client gets an error instead of the 503 (`ab -c 50` against the exporter did).
        let (release, gate) = mpsc::channel::<()>();
        let gate = Arc::new(Mutex::new(gate));
        let server = Server::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            server.run(
                1,
                Limits::default(),
                move |_: &Request| {
                    // Holds the one worker until the test lets it go.
                    let _ = gate.lock().unwrap().recv();
                    Response::json(200, &serde_json::json!({}))
                },
                flag,
            )
        });
        let (finished, answers) = mpsc::channel();
        let clients: Vec<_> = (0..25)
            .map(|_| {
                let finished = finished.clone();
                std::thread::spawn(move || {
                    let mut s = TcpStream::connect(addr).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    let sent = s.write_all(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
                    let mut out = String::new();
                    let read = s.read_to_string(&mut out);
                    let _ = finished.send((sent.is_ok() && read.is_ok(), out));
                })
            })
            .collect();
        // One worker and four queue places: at least twenty are turned away while it is held.
        let turned_away: Vec<(bool, String)> = answers.iter().take(20).collect();
        for _ in 0..25 {
            let _ = release.send(());
        }
        for client in clients {
            client.join().unwrap();
        }
        drop(finished);
        let served: Vec<(bool, String)> = answers.iter().collect();
        for (ok, answer) in turned_away.iter().chain(&served) {
            assert!(ok, "reset: {answer:?}");
            match status(answer) {
                503 => assert!(answer.contains("Retry-After: 1\r\n"), "{answer}"),
                other => assert_eq!(other, 200, "{answer}"),
            }
        }
        assert!(turned_away.iter().all(|(_, a)| status(a) == 503));
        stop.store(true, Ordering::SeqCst);
        thread.join().unwrap();
    }

    #[test]
    fn stopping_finishes_the_request_in_flight() {
        let s = start(Limits::default(), 2);
        let addr = s.addr;
        let in_flight = std::thread::spawn(move || exchange(addr, b"GET /slow HTTP/1.1\r\n\r\n"));
        std::thread::sleep(Duration::from_millis(50));
        drop(s); // sets the flag and waits for the server to return
        assert_eq!(status(&in_flight.join().unwrap()), 200);
        assert!(TcpStream::connect(addr).is_err(), "no longer listening");
    }

    /// A streamed body reaches the client part by part: the head (no Content-Length) and the
    /// first part arrive while the producer still waits for the test to let it go on; the
    /// answer ends when the connection closes. A producer that panics keeps the worker.
    #[test]
    fn a_streamed_body_is_written_as_it_is_produced() {
        let (go_on, wait) = mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(Some(wait)));
        let server = Server::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            server.run(
                1,
                Limits::default(),
                move |r: &Request| {
                    if r.path == "/panic" {
                        return Response::streaming(200, "text/plain", |out| {
                            out.write_all(b"half")?;
                            panic!("a producer bug")
                        });
                    }
                    let wait = wait.lock().unwrap().take();
                    Response::streaming(200, "text/event-stream", move |out| {
                        out.write_all(b"data: first\n\n")?;
                        out.flush()?;
                        if let Some(wait) = wait {
                            let _ = wait.recv();
                        }
                        out.write_all(b"data: last\n\n")
                    })
                },
                flag,
            )
        });
        let mut client = TcpStream::connect(addr).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        client.write_all(b"GET /events HTTP/1.1\r\n\r\n").unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains("data: first\n\n") {
            let n = client.read(&mut buf).unwrap();
            assert!(n > 0, "closed early: {:?}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
        }
        let head = String::from_utf8_lossy(&seen).into_owned();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(
            head.contains("Content-Type: text/event-stream\r\n"),
            "{head}"
        );
        assert!(!head.contains("Content-Length"), "{head}");
        assert!(!head.contains("data: last"), "{head}");
        go_on.send(()).unwrap();
        let mut rest = String::new();
        client.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "data: last\n\n");

        let half = exchange(addr, b"GET /panic HTTP/1.1\r\n\r\n");
        assert!(half.ends_with("\r\n\r\nhalf"), "{half}");
        // The one worker survived the panic.
        let again = exchange(addr, b"GET /panic HTTP/1.1\r\n\r\n");
        assert_eq!(status(&again), 200, "{again}");
        stop.store(true, Ordering::SeqCst);
        thread.join().unwrap();
    }

    /// The statuses the servers' sources construct (`Response::json(404, ...)`, `status: 409`,
    /// `rpc_error(400, ...)`, ...), read from the files under `dir`.
    fn statuses_in(dir: &std::path::Path, found: &mut std::collections::BTreeSet<u16>) {
        const BEFORE: [&str; 8] = [
            "Response::new(",
            "Response::json(",
            "Response::error(",
            "Response::streaming(",
            "status: ",
            "rpc_error(",
            "plain_error(",
            "bad(",
        ];
        let paths: Vec<std::path::PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => entries.map(|entry| entry.unwrap().path()).collect(),
            // A file of its own.
            Err(_) => vec![dir.to_path_buf()],
        };
        for path in paths {
            if path.is_dir() {
                statuses_in(&path, found);
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            for before in BEFORE {
                for (at, _) in source.match_indices(before) {
                    let rest = source[at + before.len()..].trim_start();
                    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    if let Ok(status @ 100..=599) = digits.parse::<u16>() {
                        found.insert(status);
                    }
                }
            }
        }
    }

    #[test]
    fn every_status_the_servers_answer_has_its_reason_phrase() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut statuses = std::collections::BTreeSet::new();
        for servers in ["server", "service.rs", "exporter.rs", "web"] {
            statuses_in(&src.join(servers), &mut statuses);
        }
        // The scan found what it must (the form's redirect, an export not ready, a busy queue).
        for known in [202, 303, 409, 503] {
            assert!(statuses.contains(&known), "{known} not found: {statuses:?}");
        }
        for status in statuses {
            assert!(!reason(status).is_empty(), "{status} has no reason phrase");
        }
        assert_eq!(reason(303), "See Other");
    }

    /// The one way every server routes: parameters, trailing slashes, 405 with the path's
    /// methods, a route for any other method, a route turned off, 404.
    #[test]
    fn routes_match_path_then_method() {
        fn echo(on: &bool, r: &Request, values: &[&str]) -> Response {
            Response::json(
                200,
                &serde_json::json!({"on": on, "method": r.method, "values": values}),
            )
        }
        const ROUTES: &[Route<bool>] = &[
            Route::new(&["GET", "HEAD"], "/", echo),
            Route::new(&["GET"], "/a/{x}/b/{y}", echo),
            Route::new(&["DELETE"], "/a/{x}/b/{y}", echo),
            Route::new(&["POST"], "/any", echo),
            Route::new(&[], "/any", |_, _, _| {
                Response::error(405, "own", "its own")
            }),
            Route::new(&["GET"], "/off", echo).when(|on| *on),
        ];
        let ask = |on: bool, method: &str, path: &str| {
            let response = route(
                ROUTES,
                &on,
                &Request::local(method, path),
                "nothing here",
                "",
            );
            let body: Value = serde_json::from_slice(&response.body).unwrap();
            let allow = response.headers.iter().find(|(n, _)| n == "Allow");
            (response.status, body, allow.map(|(_, v)| v.clone()))
        };
        let (status, body, _) = ask(false, "GET", "/a/1/b/two/");
        assert_eq!(
            (status, &body["values"]),
            (200, &serde_json::json!(["1", "two"]))
        );
        assert_eq!(ask(false, "HEAD", "/").0, 200);
        assert_eq!(ask(false, "GET", "//").0, 200);
        let (status, body, allow) = ask(false, "PUT", "/a/1/b/2");
        assert_eq!((status, allow.as_deref()), (405, Some("GET, DELETE")));
        assert_eq!(body["error"]["code"], "method_not_allowed");
        assert_eq!(ask(false, "POST", "/any").0, 200);
        assert_eq!(ask(false, "GET", "/any").1["error"]["code"], "own");
        assert_eq!(ask(true, "GET", "/off").0, 200);
        for path in ["/off", "/a//b/2", "/a/1/b", "/a/1/b/2/c", "/x"] {
            let (status, body, _) = ask(false, "GET", path);
            assert_eq!(
                (status, &body["error"]["message"]),
                (404, &serde_json::json!("nothing here")),
                "{path}"
            );
        }
    }

    #[test]
    fn forms_decode_percent_and_plus() {
        assert_eq!(
            parse_form(b"url=https%3A%2F%2Fa.example%3A9200%2F&x=a+b&bad=%zz&&empty="),
            vec![
                ("url".into(), "https://a.example:9200/".into()),
                ("x".into(), "a b".into()),
                ("bad".into(), "%zz".into()),
                ("empty".into(), String::new()),
            ]
        );
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"abc", b"ab"));
    }
}
