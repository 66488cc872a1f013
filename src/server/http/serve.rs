//! The server: the accept loop, the readers, the workers and the caps on connections.

use super::*;

/// Connections turned away (503) wait here for [`turn_away`]; beyond this many, one is answered
/// at once and closed, which may reset it.
pub(super) const TURN_AWAY_QUEUE: usize = 256;

/// How long a turned-away connection may take to close after its 503.
pub(super) const TURN_AWAY_TIME: Duration = Duration::from_secs(1);

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
                crate::server::clients::address_key(ip),
                crate::server::clients::network_key(ip),
            ))
        })
    }

    /// The seats of a connection from `peer`: none when the peer is not capped, `Err` when its
    /// network or its client holds its share.
    pub(super) fn admit(&self, peer: Option<SocketAddr>) -> Result<Seats, Refusal> {
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
pub(super) fn wake_address(mut addr: SocketAddr) -> SocketAddr {
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
pub(super) struct Accepted {
    stream: TcpStream,
    seats: Seats,
    ticket: Ticket,
    at: Instant,
}

/// A request read whole, waiting for a worker; the seats go with it until it is answered.
pub(super) struct Job {
    stream: TcpStream,
    request: Request,
    _seats: Seats,
    at: Instant,
}

/// Why a connection is answered at once without reaching a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Every worker is busy and the queue is full.
    Busy,
    /// The client holds its share of connections.
    ClientCap,
    /// The client's network holds its share of connections.
    NetworkCap,
}

impl Refusal {
    pub(super) fn answer(self) -> Response {
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
    pub(super) fn send(self, stream: &mut TcpStream) {
        let answer = self.answer();
        let status = answer.status;
        let _ = write_response(stream, answer, false);
        log_line("-", "-", status, Duration::ZERO);
    }
}

/// How the accept loop tells an operator it is out of file descriptors (or of another
/// resource), and backs off, instead of spinning on the same error.
pub(super) const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
/// The same accept error is logged again after this long at the soonest.
pub(super) const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(60);
/// Reads given up at once when the accept failed for want of a file descriptor: enough that a
/// backlog of connections drains in a few rounds, not one a round.
pub(super) const EVICT_WHEN_EXHAUSTED: usize = 8;

/// The accept loop and what it hands connections to.
pub(super) struct Accepting<'a> {
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
    pub(super) fn run(&self) {
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
    pub(super) fn failed(
        &self,
        error: &io::Error,
        last_logged: &mut Option<(Option<i32>, Instant)>,
    ) {
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
pub(super) fn turn_away(mut stream: TcpStream, why: Refusal, limits: Limits) {
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
pub(super) fn read(accepted: &Waiting<Accepted>, to_workers: &SyncSender<Job>, limits: Limits) {
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
pub(super) fn work<H>(jobs: &Mutex<Receiver<Job>>, handler: &H, limits: Limits)
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
pub(super) fn answer(
    stream: &mut TcpStream,
    method: &str,
    path: &str,
    response: Response,
    at: Instant,
) {
    let status = response.status;
    let _ = write_response(stream, response, method == "HEAD");
    let _ = stream.flush();
    log_line(method, path, status, at.elapsed());
}

/// One line per request on stderr: method, path (never the query: it may carry a host or a
/// token), status, duration.
pub(super) fn log_line(method: &str, path: &str, status: u16, took: Duration) {
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
