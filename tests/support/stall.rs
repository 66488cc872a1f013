//! Targets that never finish answering, for the time budget's tests and `make bench`: each
//! accepts connections on loopback and then stalls in its own way, over plain TCP or after a
//! completed TLS handshake (the private CA's `localhost` certificate, [`super::certs`]).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::certs::{TlsMode, server_config};

/// How often a dripping target sends a byte of its answer's head.
pub const DRIP_EVERY: Duration = Duration::from_millis(500);

/// How a target stalls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stall {
    /// Accepts, then reads nothing and sends nothing.
    Silent,
    /// Reads the first bytes of the request, then sends its answer's head one byte every
    /// [`DRIP_EVERY`], forever (the head never ends). Over TLS the head goes in one record of
    /// 8 KiB, dripped a byte of the record at a time (over an hour).
    Dripping,
    /// Reads the ClientHello and sends its answer (ServerHello, certificate, ...) one byte
    /// every [`DRIP_EVERY`]: the TLS handshake never ends (TLS whatever `tls` says).
    DrippingHandshake,
    /// Reads the first bytes of the request, sends a head announcing a 1000-byte body and the
    /// first bytes of it, then nothing: the connection stays open mid-body.
    HalfOpen,
}

/// A stalling target; stops accepting and closes what it holds on drop.
pub struct StallingTarget {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
}

impl StallingTarget {
    /// Starts the target on an ephemeral loopback port; `tls` completes a handshake on each
    /// connection before stalling.
    pub fn start(stall: Stall, tls: bool) -> StallingTarget {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let held: Arc<Mutex<Vec<Box<dyn Send>>>> = Arc::default();
        let (stop_, accepted_) = (stop.clone(), accepted.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop_.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                accepted_.fetch_add(1, Ordering::SeqCst);
                let (stop, held) = (stop_.clone(), held.clone());
                std::thread::spawn(move || serve(stream, stall, tls, &stop, &held));
            }
            // Dropping what is held closes it.
            held.lock().unwrap_or_else(|e| e.into_inner()).clear();
        });
        StallingTarget {
            addr,
            stop,
            accepted,
        }
    }

    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for StallingTarget {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// Serves one connection the way the target stalls; what must stay open is handed to `held`.
fn serve(
    tcp: TcpStream,
    stall: Stall,
    tls: bool,
    stop: &AtomicBool,
    held: &Mutex<Vec<Box<dyn Send>>>,
) {
    if stall == Stall::Silent {
        held.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Box::new(tcp));
        return;
    }
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
    if (tls && stall == Stall::Dripping) || stall == Stall::DrippingHandshake {
        return drip_one_record(tcp, stall, stop);
    }
    let mut stream: Box<dyn ReadWrite> = if tls {
        let Ok(conn) = rustls::ServerConnection::new(server_config(TlsMode::PrivateCa)) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        while tls.conn.is_handshaking() {
            if tls.conn.complete_io(&mut tls.sock).is_err() {
                return;
            }
        }
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    // The first bytes of whatever the client sends: a request, or a ClientHello over plain
    // TCP, which the head below answers as a plain HTTP server would.
    let mut first = [0u8; 1024];
    if !matches!(stream.read(&mut first), Ok(n) if n > 0) {
        return;
    }
    match stall {
        Stall::Silent | Stall::DrippingHandshake => {}
        Stall::Dripping => {
            let head = b"HTTP/1.1 200 OK\r\nX-Drip: "
                .iter()
                .chain(std::iter::repeat(&b'a'));
            drip(head.copied(), &mut stream, stop);
        }
        Stall::HalfOpen => {
            let answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"installed\":";
            if stream
                .write_all(answer)
                .and_then(|()| stream.flush())
                .is_ok()
            {
                // Kept open, never written to again, until the target stops.
                held.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(Box::new(stream));
            }
        }
    }
}

/// Writes `bytes` one every [`DRIP_EVERY`] until they end, the client goes or the target stops.
fn drip(bytes: impl Iterator<Item = u8>, to: &mut dyn Write, stop: &AtomicBool) {
    for byte in bytes {
        if stop.load(Ordering::SeqCst) || to.write_all(&[byte]).and_then(|()| to.flush()).is_err() {
            return;
        }
        std::thread::sleep(DRIP_EVERY);
    }
}

/// Over TLS: completes the handshake, reads the request, then sends a head of a few KiB in one
/// TLS record, one byte of the record at a time (`Stall::Dripping`); or drips the server's
/// handshake flight the same way (`Stall::DrippingHandshake`). The client gets nothing out of
/// a record before the whole record is in, so only a deadline over all of its reads ends the
/// wait.
fn drip_one_record(mut tcp: TcpStream, stall: Stall, stop: &AtomicBool) {
    let Ok(mut conn) = rustls::ServerConnection::new(server_config(TlsMode::PrivateCa)) else {
        return;
    };
    if stall == Stall::DrippingHandshake {
        let mut flight = Vec::new();
        while !conn.wants_write() {
            if conn.read_tls(&mut tcp).is_err() || conn.process_new_packets().is_err() {
                return;
            }
        }
        if conn.write_tls(&mut flight).is_ok() {
            drip(flight.into_iter(), &mut tcp, stop);
        }
        return;
    }
    while conn.is_handshaking() {
        if conn.complete_io(&mut tcp).is_err() {
            return;
        }
    }
    let mut request = [0u8; 1024];
    if !matches!(rustls::Stream::new(&mut conn, &mut tcp).read(&mut request), Ok(n) if n > 0) {
        return;
    }
    let mut head = b"HTTP/1.1 200 OK\r\nX-Drip: ".to_vec();
    head.resize(8 * 1024, b'a');
    let mut record = Vec::new();
    if conn.writer().write_all(&head).is_err() || conn.write_tls(&mut record).is_err() {
        return;
    }
    drip(record.into_iter(), &mut tcp, stop);
}

trait ReadWrite: Read + Write + Send {}
impl<T: Read + Write + Send> ReadWrite for T {}
