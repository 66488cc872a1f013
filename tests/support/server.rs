//! Accept loop shared by the fake instance and the fake debug listener: one thread per
//! connection, every request recorded, the handler decides what to send. The listener also
//! meters the load its clients put on it ([`Traffic`]): connections, the most open at once,
//! requests, and full against resumed TLS handshakes.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::fixtures::RawResponse;
use super::http::{
    Conn, PLAIN_HTTP_TO_TLS_PORT, ReadOutcome, RecordedRequest, Stream, complete_handshake,
    keep_alive, peek_first_byte,
};

/// What to do with one request.
pub enum Action {
    /// Close the connection without answering (no TLS close_notify).
    Reset,
    Respond(Reply),
}

/// A response plus how to send it.
pub struct Reply {
    pub resp: RawResponse,
    /// Send headers only (HEAD).
    pub head_only: bool,
    /// Wait this long before the status line.
    pub delay: Option<Duration>,
    /// Send the body one byte per this interval.
    pub drip: Option<Duration>,
    /// After the head (which must announce chunked encoding), stream chunks forever.
    pub endless: bool,
    /// Instead of the response's body, send this many bytes of filler (the head must announce
    /// them in `Content-Length`).
    pub huge: Option<u64>,
    /// Close the connection after this response.
    pub close: bool,
    /// Dropped once the response is sent (or the connection ends): lets a handler count a
    /// request as in flight until its answer has left.
    pub until_sent: Option<Box<dyn Send>>,
}

impl Reply {
    pub fn new(resp: RawResponse) -> Reply {
        Reply {
            resp,
            head_only: false,
            delay: None,
            drip: None,
            endless: false,
            huge: None,
            close: false,
            until_sent: None,
        }
    }
}

pub type Handler = Arc<dyn Fn(&RecordedRequest) -> Action + Send + Sync>;

/// What a listener's clients cost it since it started (or since [`Server::reset_traffic`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// TCP connections accepted.
    pub connections: usize,
    /// The most connections open at the same moment.
    pub peak_open: usize,
    /// HTTP requests read.
    pub requests: usize,
    /// TLS handshakes completed in full (certificate sent, key exchange signed).
    pub full_handshakes: usize,
    /// TLS handshakes that resumed an earlier session (no certificate, no signature).
    pub resumed_handshakes: usize,
    /// TLS connections whose handshake never completed (a refused TLS 1.0 ClientHello, a
    /// client that rejected the certificate, a client that went away).
    pub failed_handshakes: usize,
}

/// The counters behind [`Traffic`], with the number of connections open now.
#[derive(Default)]
struct Meter {
    state: Mutex<(Traffic, usize)>,
    /// Signalled whenever a connection closes.
    closed: Condvar,
}

impl Meter {
    fn update(&self, change: impl FnOnce(&mut Traffic, &mut usize)) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (traffic, open) = &mut *state;
        change(traffic, open);
    }

    fn opened(&self) {
        self.update(|t, open| {
            *open += 1;
            t.connections += 1;
            t.peak_open = t.peak_open.max(*open);
        });
    }

    fn closed(&self) {
        self.update(|_, open| *open = open.saturating_sub(1));
        self.closed.notify_all();
    }
}

/// Counts a connection as open for as long as its thread serves it.
struct OpenConnection(Arc<Meter>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.closed();
    }
}

/// A running listener; stops accepting on drop (open connections end on their own).
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    /// Requests seen since start (not reset by `clear_requests`; faults count with it).
    total: Arc<AtomicUsize>,
    /// Whether requests are kept for [`Server::requests`] (a fleet of thousands only counts).
    recording: Arc<AtomicBool>,
    meter: Arc<Meter>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(
        bind: SocketAddr,
        tls: Option<Arc<rustls::ServerConfig>>,
        handler: Handler,
    ) -> std::io::Result<Server> {
        let listener = TcpListener::bind(bind)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let total = Arc::new(AtomicUsize::new(0));
        let meter = Arc::new(Meter::default());
        let recording = Arc::new(AtomicBool::new(true));
        let thread = {
            let stop = stop.clone();
            let requests = requests.clone();
            let total = total.clone();
            let recording = recording.clone();
            let meter = meter.clone();
            std::thread::Builder::new()
                .name(format!("fake-accept-{}", addr.port()))
                .spawn(move || {
                    for stream in listener.incoming() {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let Ok(tcp) = stream else { continue };
                        // Counted here, before the thread starts, so the peak is what the
                        // client really had open at once.
                        meter.opened();
                        let shared = Shared {
                            stop: stop.clone(),
                            requests: requests.clone(),
                            total: total.clone(),
                            recording: recording.clone(),
                            handler: handler.clone(),
                            open: OpenConnection(meter.clone()),
                        };
                        let tls = tls.clone();
                        let _ = std::thread::Builder::new()
                            .name("fake-conn".to_string())
                            .spawn(move || serve_connection(tcp, tls, shared));
                    }
                })?
        };
        Ok(Server {
            addr,
            stop,
            requests,
            total,
            recording,
            meter,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn request_count(&self) -> usize {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// Counts requests from now on without keeping them (or keeps them again).
    pub fn set_recording(&self, on: bool) {
        self.recording.store(on, Ordering::SeqCst);
    }

    /// Requests seen since start, including cleared ones.
    pub fn total_requests(&self) -> usize {
        self.total.load(Ordering::SeqCst)
    }

    /// Forgets the recorded requests (fault counting goes on).
    pub fn clear_requests(&self) {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// What the clients cost the listener so far.
    pub fn traffic(&self) -> Traffic {
        self.meter.state.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    /// Starts counting anew; the peak starts at the connections open now.
    pub fn reset_traffic(&self) {
        self.meter.update(|t, open| {
            *t = Traffic {
                peak_open: *open,
                ..Traffic::default()
            }
        });
    }

    /// Waits until no connection is open (every client hung up and its thread saw it), at
    /// most `limit`; false when some connection is still open then.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut state = self.meter.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.1 > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self
                .meter
                .closed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Stops accepting and waits for the accept thread.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            // Wake the blocking accept.
            if TcpStream::connect_timeout(&self.addr, Duration::from_secs(2)).is_ok() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What every connection thread shares with the listener.
struct Shared {
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    total: Arc<AtomicUsize>,
    recording: Arc<AtomicBool>,
    handler: Handler,
    /// Held until the connection is served to its end.
    open: OpenConnection,
}

fn serve_connection(tcp: TcpStream, tls: Option<Arc<rustls::ServerConfig>>, shared: Shared) {
    let Shared {
        stop,
        requests,
        total,
        recording,
        handler,
        open,
    } = shared;
    let meter = open.0.clone();
    if stop.load(Ordering::SeqCst) {
        return;
    }
    let Ok(peer) = tcp.peer_addr() else { return };
    let stream = match tls {
        Some(config) => {
            match peek_first_byte(&tcp, &stop) {
                None => return,
                Some(0x16) => {}
                Some(_) => {
                    // Plain HTTP on the TLS port: answer like Go's net/http does.
                    let mut tcp = tcp;
                    let _ = tcp.write_all(PLAIN_HTTP_TO_TLS_PORT);
                    let _ = tcp.shutdown(std::net::Shutdown::Write);
                    return;
                }
            }
            let Ok(mut server) = rustls::ServerConnection::new(config) else {
                return;
            };
            let mut tcp = tcp;
            match complete_handshake(&mut server, &mut tcp, &stop) {
                Some(rustls::HandshakeKind::Resumed) => {
                    meter.update(|t, _| t.resumed_handshakes += 1)
                }
                Some(_) => meter.update(|t, _| t.full_handshakes += 1),
                None => {
                    meter.update(|t, _| t.failed_handshakes += 1);
                    return;
                }
            }
            Stream::Tls(Box::new(rustls::StreamOwned::new(server, tcp)))
        }
        None => {
            // A TLS ClientHello on the plain port: Go's net/http reads a malformed request line
            // and answers 400 at once; it does not wait for a header block that never comes.
            if peek_first_byte(&tcp, &stop) == Some(0x16) {
                let mut tcp = tcp;
                let _ = tcp.write_all(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request",
                );
                let _ = tcp.shutdown(std::net::Shutdown::Write);
                return;
            }
            Stream::Plain(tcp)
        }
    };
    let mut conn = Conn::new(stream, stop, peer);
    loop {
        let mut req = match conn.read_request(0) {
            ReadOutcome::Closed => break,
            ReadOutcome::Bad => {
                let _ = conn
                    .stream
                    .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request");
                break;
            }
            ReadOutcome::Request(r) => r,
        };
        if recording.load(Ordering::SeqCst) {
            let mut all = requests.lock().unwrap_or_else(|e| e.into_inner());
            req.index = total.fetch_add(1, Ordering::SeqCst);
            all.push(req.clone());
        } else {
            req.index = total.fetch_add(1, Ordering::SeqCst);
        }
        meter.update(|t, _| t.requests += 1);
        let reply = match handler(&req) {
            Action::Reset => {
                conn.stream.abort();
                return;
            }
            Action::Respond(r) => r,
        };
        let close = reply.close || !keep_alive(&req);
        if let Some(d) = reply.delay {
            if !conn.pause(d) {
                break;
            }
        }
        if reply.endless && !reply.head_only {
            let _ = conn.write_endless(&reply.resp, reply.drip);
            conn.stream.abort();
            return;
        }
        if let Some(bytes) = reply.huge.filter(|_| !reply.head_only) {
            if conn.write_filler(&reply.resp, bytes).is_err() {
                conn.stream.abort();
                return;
            }
        } else if conn
            .write_response(&reply.resp, reply.head_only, reply.drip)
            .is_err()
        {
            conn.stream.abort();
            return;
        }
        if close {
            break;
        }
    }
    conn.stream.close();
}

/// `HOST:PORT` a client on this machine reaches `addr` at: a wildcard address is reached on
/// loopback (`127.0.0.1`, `[::1]`), any other as it is.
pub fn reachable(addr: SocketAddr) -> String {
    match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => format!("127.0.0.1:{}", addr.port()),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => format!("[::1]:{}", addr.port()),
        _ => addr.to_string(),
    }
}
