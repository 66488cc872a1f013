//! Connecting: a TCP connection to a host (or to given addresses) within a deadline, why it
//! failed in words the scan reports, and a socket whose every read and write ends by a
//! deadline. Below TLS and the operator's proxy, which both connect this way.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::Instant;

/// Why no connection (or no handshake) could be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TlsFailure {
    /// Nothing accepted the TCP connection (refused, unreachable, name does not resolve).
    Connect(String),
    /// The connection timed out or was reset: possibly transient.
    Transient(String),
    /// A peer answered but no TLS handshake completed even without verification
    /// (plain HTTP on the port, protocol mismatch).
    Handshake(String),
}

impl TlsFailure {
    /// What went wrong, whatever the kind.
    pub fn message(self) -> String {
        match self {
            TlsFailure::Connect(m) | TlsFailure::Transient(m) | TlsFailure::Handshake(m) => m,
        }
    }
}

/// A socket whose every read and write ends by a deadline: rustls reads a record in as many
/// reads as the peer takes to send it, so a timeout set once would start again with each
/// byte of a peer that sends one now and then, and never end.
pub struct Until<'a> {
    sock: &'a mut TcpStream,
    deadline: Option<Instant>,
}

impl<'a> Until<'a> {
    /// `None`: no deadline, the socket blocks as it is.
    pub fn new(sock: &'a mut TcpStream, deadline: Option<Instant>) -> Until<'a> {
        Until { sock, deadline }
    }
}

impl io::Read for Until<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        super::read_before(self.sock, buf, self.deadline)
    }
}

impl io::Write for Until<'_> {
    /// What we send (a ClientHello, a request head, a sign-in form) fits in the socket's
    /// buffer: a write does not wait on the peer, so one timeout of what is left is enough.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let left = self
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()));
        if left.is_some_and(|left| left.is_zero()) {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.sock.set_write_timeout(left)?;
        self.sock.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sock.flush()
    }
}

/// Connects to the first address of `host` that answers within the deadline.
pub fn connect(host: &str, port: u16, deadline: Instant) -> Result<TcpStream, TlsFailure> {
    let addrs: Vec<SocketAddr> = super::resolve::lookup_until(host, port, deadline)
        .map_err(|e| TlsFailure::Connect(format!("cannot resolve {host}: {e}")))?;
    connect_to(host, addrs, deadline)
}

/// Connects to the first of `addrs` (the addresses of `host`) that answers within the deadline.
pub(super) fn connect_to(
    host: &str,
    addrs: Vec<SocketAddr>,
    deadline: Instant,
) -> Result<TcpStream, TlsFailure> {
    let mut last = TlsFailure::Connect(format!("{host} resolves to no address"));
    for addr in addrs {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(TlsFailure::Transient(format!(
                "connecting to {addr} timed out"
            )));
        }
        match TcpStream::connect_timeout(&addr, remaining) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = classify_io(&e, &format!("connecting to {addr}")),
        }
    }
    Err(last)
}

pub(super) fn classify_io(e: &std::io::Error, what: &str) -> TlsFailure {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::TimedOut | K::WouldBlock => TlsFailure::Transient(format!("{what} timed out")),
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            TlsFailure::Transient(format!("{what}: connection reset"))
        }
        K::ConnectionRefused => TlsFailure::Connect(format!("{what}: connection refused")),
        K::InvalidData => TlsFailure::Handshake(format!("{what}: {e}")),
        _ if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) => {
            TlsFailure::Handshake(format!("{what}: {e}"))
        }
        _ => TlsFailure::Connect(format!("{what}: {e}")),
    }
}
