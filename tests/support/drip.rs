//! An attacker that drips request heads: connections from chosen loopback source addresses
//! that send the start of a request and then one byte every so often, never finishing it. A
//! connection the server drops (evicted, timed out, refused) is opened again from the same
//! address, so the pressure stays while the attack runs. One thread does it all.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What every dripping connection sends first: a request line and the start of a header.
const HEAD_START: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ";

/// A running attack; stopped (and its connections closed) on drop.
pub struct Drippers {
    stop: Arc<AtomicBool>,
    /// Connections opened so far, reopenings included.
    pub opened: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl Drippers {
    /// `per_source` connections from each of `sources` (IPv4 loopback addresses) to `to`, each
    /// sending one more byte every `every`. Returns once every first connection was opened
    /// (or failed to open).
    pub fn start(to: SocketAddr, sources: &[String], per_source: usize, every: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicUsize::new(0));
        let slots: Vec<String> = sources
            .iter()
            .flat_map(|source| std::iter::repeat_n(source.clone(), per_source))
            .collect();
        let open = {
            let opened = opened.clone();
            move |source: &str| -> Option<TcpStream> {
                let mut stream = super::service::try_connect_from(source, to).ok()?;
                opened.fetch_add(1, Ordering::SeqCst);
                stream.write_all(HEAD_START).ok()?;
                Some(stream)
            }
        };
        let mut streams: Vec<Option<TcpStream>> = slots.iter().map(|s| open(s)).collect();
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut next = Instant::now() + every;
                while !stop.load(Ordering::SeqCst) {
                    if Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    next = Instant::now() + every;
                    for (source, stream) in slots.iter().zip(streams.iter_mut()) {
                        let alive = stream.as_mut().is_some_and(|s| s.write_all(b"a").is_ok());
                        if !alive {
                            *stream = open(source);
                        }
                    }
                }
            })
        };
        Drippers {
            stop,
            opened,
            thread: Some(thread),
        }
    }
}

impl Drop for Drippers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `n` loopback addresses of one /24: `127.<a>.<b>.1` to `127.<a>.<b>.<n>`.
pub fn one_network(a: u8, b: u8, n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("127.{a}.{b}.{i}")).collect()
}

/// `n` loopback addresses each in a /24 of its own, from `127.<a>.0.1` on.
pub fn spread(a: u8, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("127.{}.{}.1", a as usize + i / 256, i % 256))
        .collect()
}
