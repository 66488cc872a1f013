//! The HTTP client's HTTPS connections. ureq speaks HTTP over them; they come from the
//! endpoint's [`EndpointTls`]: the inspected connection for the first request, then new ones
//! with the same rustls configuration, which resume the inspected session. ureq keeps them
//! alive in its pool like its own. A plain HTTP client may likewise be handed the TCP
//! connection a probe already opened ([`OwnConnections`]), so asking a port that was just
//! found open costs no second connect.

use super::WAIT_SLICE;
use super::tls::{self, EndpointTls, TlsStream, Until};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport,
};

/// The connections the client brings itself: HTTPS ones from the endpoint's TLS, and the plain
/// TCP connection a probe opened ([`Client::over`](super::http::Client::over)), handed over
/// once: the agent's first plain request goes over it, later ones over the kept-alive
/// connection or new ones from the next connectors, as usual. The agent is bound to one
/// endpoint and never follows a redirect, so an HTTPS request is always for the endpoint this
/// TLS belongs to, and the handed connection (opened to the endpoint's address and port)
/// always goes where the request does.
#[derive(Debug)]
pub struct OwnConnections {
    pub tls: Option<EndpointTls>,
    pub handed: Mutex<Option<TcpStream>>,
}

impl<In: Transport> Connector<In> for OwnConnections {
    type Out = Either<In, Wire>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        if let Some(transport) = chained {
            return Ok(Some(Either::A(transport)));
        }
        let carried = if details.needs_tls() {
            let Some(tls) = &self.tls else {
                return Err(ureq::Error::Tls("no TLS configured for this endpoint"));
            };
            let stream = tls
                .connection(time_left(&details.timeout)?)
                .map_err(ureq::Error::Io)?;
            Carried::Tls(Box::new(stream))
        } else {
            let handed = self
                .handed
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            // A server that closed it while it waited (or spoke first) gets a new connection.
            let Some(stream) = handed.filter(still_quiet) else {
                return Ok(None);
            };
            let _ = stream.set_nodelay(true);
            Carried::Plain(stream)
        };
        let buffers = LazyBuffers::new(
            details.config.input_buffer_size(),
            details.config.output_buffer_size(),
        );
        Ok(Some(Either::B(Wire {
            buffers,
            stream: carried,
        })))
    }
}

/// A connection ureq speaks HTTP over (ureq does not export its own transport): a plain TCP
/// connection a probe handed over, or TLS over TCP.
pub struct Wire {
    buffers: LazyBuffers,
    stream: Carried,
}

enum Carried {
    Plain(TcpStream),
    // Boxed: rustls's connection state is a kilobyte, a TCP stream a file descriptor.
    Tls(Box<TlsStream>),
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, sock) = match &self.stream {
            Carried::Plain(sock) => ("Plain", sock),
            Carried::Tls(stream) => ("Tls", &stream.sock),
        };
        write!(f, "Wire({kind}, {:?})", sock.peer_addr().ok())
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

impl Carried {
    /// Runs `f` on the stream, its every read and write ending by `deadline`.
    fn within<R>(
        &mut self,
        deadline: Option<Instant>,
        f: impl FnOnce(&mut dyn ReadWrite) -> io::Result<R>,
    ) -> io::Result<R> {
        match self {
            Carried::Plain(sock) => f(&mut Until::new(sock, deadline)),
            Carried::Tls(stream) => {
                let mut sock = Until::new(&mut stream.sock, deadline);
                f(&mut rustls::Stream::new(&mut stream.conn, &mut sock))
            }
        }
    }
}

/// The connection is open and the server has sent nothing on it since its last answer: a
/// request can go over it.
fn still_quiet(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return false;
    }
    let quiet = matches!(
        stream.peek(&mut [0u8; 1]),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock
    );
    stream.set_nonblocking(false).is_ok() && quiet
}

/// The time left before `timeout`, `None` when it never comes; an expired one is an error.
fn time_left(timeout: &NextTimeout) -> Result<Option<Duration>, ureq::Error> {
    if timeout.after.is_not_happening() {
        return Ok(None);
    }
    let left = *timeout.after;
    if left.is_zero() {
        return Err(ureq::Error::Timeout(timeout.reason));
    }
    Ok(Some(left))
}

/// A socket timeout is ureq's timeout (with its reason); anything else stays an I/O error,
/// with rustls' error inside when TLS failed.
fn failure(e: io::Error, timeout: &NextTimeout) -> ureq::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ureq::Error::Timeout(timeout.reason),
        _ => ureq::Error::Io(e),
    }
}

impl Transport for Wire {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let timeout = timeout.for_write();
        let deadline = time_left(&timeout)?.map(|left| Instant::now() + left);
        let output = &self.buffers.output()[..amount];
        self.stream
            .within(deadline, |s| s.write_all(output).and_then(|()| s.flush()))
            .map_err(|e| failure(e, &timeout))
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let timeout = timeout.for_read();
        // One deadline for the whole read: a TLS record may come in many small pieces.
        let deadline = time_left(&timeout)?.map(|left| Instant::now() + left);
        let input = self.buffers.input_append_buf();
        let amount = self
            .stream
            .within(deadline, |s| s.read(input))
            .map_err(|e| failure(e, &timeout))?;
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        match &mut self.stream {
            Carried::Plain(sock) => still_quiet(sock),
            Carried::Tls(stream) => tls::is_alive(stream),
        }
    }

    fn is_tls(&self) -> bool {
        matches!(self.stream, Carried::Tls(_))
    }
}

/// The last connector of every agent: wraps the connection the others made (plain TCP, TLS,
/// through a proxy or not) so that no wait for the server is longer than [`WAIT_SLICE`] in
/// one call. ureq sets all the time a request has left as the socket's timeout, and Linux ends
/// a long socket timeout late (see `WAIT_SLICE`): a request cut to the end of the budget
/// would end up to 2 s after it.
#[derive(Debug)]
pub struct SlicedWaits;

impl<In: Transport> Connector<In> for SlicedWaits {
    type Out = Sliced<In>;

    fn connect(
        &self,
        _details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        Ok(chained.map(Sliced))
    }
}

/// A connection whose waits for input are [`WAIT_SLICE`] at most, repeated until its timeout.
#[derive(Debug)]
pub struct Sliced<T>(T);

impl<T: Transport> Transport for Sliced<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.0.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.0.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let Some(left) = time_left(&timeout)? else {
            return self.0.await_input(timeout);
        };
        let deadline = Instant::now() + left;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ureq::Error::Timeout(timeout.reason));
            }
            let slice = NextTimeout {
                after: left.min(WAIT_SLICE).into(),
                ..timeout
            };
            match self.0.await_input(slice) {
                // Its slice ended, not its timeout: wait again.
                Err(ureq::Error::Timeout(reason)) if reason == timeout.reason => {}
                done => return done,
            }
        }
    }

    fn is_open(&mut self) -> bool {
        self.0.is_open()
    }

    fn is_tls(&self) -> bool {
        self.0.is_tls()
    }
}
