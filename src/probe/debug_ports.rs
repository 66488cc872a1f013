//! Debug listeners: one TCP connect per port, all ports at once, then the debug handlers of
//! every port that accepted.
//!
//! Every OpenCloud service runs its own debug HTTP server (`/healthz`, `/readyz`, `/metrics`,
//! `/config` on the proxy, `/debug/pprof/` when enabled), bound to `127.0.0.1` by default. A
//! deployment that binds one to `0.0.0.0` or publishes the port leaks metrics, the proxy's
//! configuration (with the service-account secret in clear text) and profiles.
//!
//! The connects run concurrently, one thread per port (and one per resolved address), so five
//! firewalled ports cost one connect timeout, not five. Each open port's handlers are fetched
//! right after its connect, without waiting for the slow ports, one after the other over the
//! connection that connect opened, kept alive: an open port costs one connection.
//!
//! Debug ports are probed directly, never through the operator's proxy: a forward proxy's
//! `CONNECT` to arbitrary ports is normally refused (Squid, for one, allows only 443 by
//! default), so through a proxy every port would look closed; and what matters is whether the
//! port is reachable from the network the scanner stands in, not from the proxy.

use crate::budget::StepTimeout;
use crate::net::guard::Pins;
use crate::net::http::{Client, ClientOptions, Endpoint, FetchError, Response, Scheme};
use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The handlers fetched from every open port, in this order.
pub const DEBUG_PATHS: &[&str] = &[
    "/healthz",
    "/readyz",
    "/metrics",
    "/config",
    "/debug/pprof/",
];

/// At most this many ports are connected to at once (a long configured list runs in waves).
const MAX_CONCURRENT_PORTS: usize = 64;

/// What a connect to one port showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortState {
    /// Accepted the connection.
    Open,
    /// Refused at once (nothing listens).
    Closed,
    /// No answer within the connect timeout (firewalled, or the host drops packets).
    Filtered,
    /// Any other failure (name does not resolve, ...).
    Error(String),
}

#[derive(Clone, Debug)]
pub struct DebugAnswer {
    pub path: String,
    pub answer: Result<Response, String>,
    /// The request failed on the network (timeout, reset), not because the port speaks
    /// something other than HTTP. Always false for an answer.
    pub transient: bool,
}

#[derive(Clone, Debug)]
pub struct DebugPort {
    pub port: u16,
    pub state: PortState,
    /// Answers of `/healthz`, `/readyz`, `/metrics`, `/config`, `/debug/pprof/` when open.
    pub endpoints: Vec<DebugAnswer>,
    /// The address that accepted, when open.
    pub address: Option<SocketAddr>,
    /// The connect timeout the port was given (a filtered port took that long).
    pub connect_timeout: Duration,
}

/// Probes every port concurrently; returns one entry per distinct port, in the order given.
///
/// `host` is a name or an address (IPv6 with or without brackets); every address it resolves
/// to is tried, IPv4 and IPv6 alike, or with `pins` (a guarded scan) the validated addresses
/// only, with no lookup. Each connect is bounded by `connect_timeout`, each request to an open
/// port by `request_timeout`, so the whole probe takes at most about `connect_timeout +
/// request_timeout` (plus name resolution), and never runs past the end of the run's budget
/// those limits carry.
pub fn probe_pinned(
    host: &str,
    pins: Option<&Pins>,
    ports: &[u16],
    connect_timeout: StepTimeout,
    request_timeout: StepTimeout,
) -> Vec<DebugPort> {
    let distinct = super::distinct(ports.iter().copied());
    let addresses = match pins {
        Some(pins) => super::pinned_addresses(pins, host),
        None => resolve(host, connect_timeout.deadline()),
    };
    let workers = distinct.len().min(MAX_CONCURRENT_PORTS);
    super::pool::run_all(&distinct, workers, |port| match &addresses {
        Ok(ips) => probe_port(ips, *port, connect_timeout, request_timeout),
        Err(reason) => DebugPort {
            port: *port,
            state: PortState::Error(reason.clone()),
            endpoints: Vec::new(),
            address: None,
            connect_timeout: connect_timeout.now(),
        },
    })
}

/// Every distinct address of the host, in resolver order, if the resolver answers before
/// `deadline`.
fn resolve(host: &str, deadline: Instant) -> Result<Vec<IpAddr>, String> {
    let name = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = name.parse::<IpAddr>() {
        return Ok(vec![ip]);
    }
    let resolved = crate::net::resolve::lookup_until(name, 0, deadline)
        .map_err(|e| format!("{name} does not resolve: {e}"))?;
    let ips = super::distinct(resolved.into_iter().map(|a| a.ip()));
    if ips.is_empty() {
        return Err(format!("{name} resolves to no address"));
    }
    Ok(ips)
}

/// What one connect to one address showed.
enum Connect {
    /// Accepted: the connection, for the handlers' requests.
    Open(SocketAddr, TcpStream),
    Refused,
    TimedOut,
    Failed(String),
}

fn connect(addr: SocketAddr, timeout: Duration) -> Connect {
    // `connect_timeout` rejects a zero duration; a step's limit is never zero.
    match TcpStream::connect_timeout(&addr, timeout) {
        Ok(stream) => Connect::Open(addr, stream),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => Connect::Refused,
        Err(e) if e.kind() == ErrorKind::TimedOut || e.kind() == ErrorKind::WouldBlock => {
            Connect::TimedOut
        }
        Err(e) => Connect::Failed(format!("{addr}: {e}")),
    }
}

fn probe_port(
    ips: &[IpAddr],
    port: u16,
    connect_timeout: StepTimeout,
    request_timeout: StepTimeout,
) -> DebugPort {
    // Cut to what is left of the budget as the connects start.
    let connect_timeout = connect_timeout.now();
    let addrs: Vec<SocketAddr> = ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect();
    // Every address at once: a filtered IPv6 address must not delay the IPv4 one.
    let mut outcomes =
        super::pool::run_all(&addrs, addrs.len(), |addr| connect(*addr, connect_timeout));
    // Open on any address wins (the other addresses' connections are closed); then refused,
    // then silent, then other failures.
    let open = outcomes
        .iter()
        .position(|o| matches!(o, Connect::Open(..)))
        .map(|at| match outcomes.swap_remove(at) {
            Connect::Open(addr, stream) => (addr, stream),
            _ => unreachable!("the position of an open connect"),
        });
    let state = if open.is_some() {
        PortState::Open
    } else if outcomes.iter().any(|o| matches!(o, Connect::Refused)) {
        PortState::Closed
    } else if outcomes.iter().any(|o| matches!(o, Connect::TimedOut)) {
        PortState::Filtered
    } else {
        let reasons: Vec<&str> = outcomes
            .iter()
            .filter_map(|o| match o {
                Connect::Failed(reason) => Some(reason.as_str()),
                _ => None,
            })
            .collect();
        PortState::Error(reasons.join("; "))
    };
    let address = open.as_ref().map(|(addr, _)| *addr);
    let endpoints = match open {
        Some((addr, stream)) => fetch_handlers(addr, stream, request_timeout),
        None => Vec::new(),
    };
    DebugPort {
        port,
        state,
        endpoints,
        address,
        connect_timeout,
    }
}

/// The address as it goes into a URL (IPv6 bracketed).
fn url_host(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// Fetches every debug path over plain HTTP from the address that accepted, one after the
/// other over `connection` (the connect's own), kept alive.
fn fetch_handlers(
    addr: SocketAddr,
    connection: TcpStream,
    request_timeout: StepTimeout,
) -> Vec<DebugAnswer> {
    let endpoint = Endpoint {
        scheme: Scheme::Http,
        // The address that accepted, not the name: a name with several addresses could
        // otherwise be fetched from one that refuses.
        url_host: url_host(addr.ip()),
        port: addr.port(),
        base_path: String::new(),
    };
    let options = ClientOptions {
        timeout: request_timeout,
        // Direct, never through the operator's proxy (see the module comment).
        proxy: None,
        pin: None,
        user_agent: crate::program::user_agent(),
    };
    let client = Client::over(endpoint, connection, &options);
    // The client reads at most `MAX_BODY_BYTES` (1 MiB) of a body and keeps what the handler's
    // checks read; every request is bounded by the timeout. One after the other, so the
    // agent's pool keeps the connect's connection alive for them all: a port costs one
    // connection, not six (the ports themselves are probed at once).
    DEBUG_PATHS
        .iter()
        .map(|path| {
            let (answer, transient) = match &client {
                // No HTTP over the connection: every handler says why.
                Err(reason) => (Err(reason.clone()), false),
                Ok(client) => match client.get(path, super::plan::debug_path_keep(path)) {
                    Ok(response) => (Ok(response), false),
                    Err(e) => {
                        let transient = matches!(e, FetchError::Transient(_));
                        (Err(e.message().to_string()), transient)
                    }
                },
            };
            DebugAnswer {
                path: path.to_string(),
                answer,
                transient,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Instant;

    /// The scan's probe without pins.
    fn probe(
        host: &str,
        ports: &[u16],
        connect_timeout: impl Into<StepTimeout>,
        request_timeout: impl Into<StepTimeout>,
    ) -> Vec<DebugPort> {
        let (connect, request) = (connect_timeout.into(), request_timeout.into());
        probe_pinned(host, None, ports, connect, request)
    }

    impl DebugPort {
        /// The answer to one of the debug paths, when it was fetched and answered.
        fn answer(&self, path: &str) -> Option<&Response> {
            self.endpoints
                .iter()
                .find(|e| e.path == path)
                .and_then(|e| e.answer.as_ref().ok())
        }
    }

    /// A loopback port nothing listens on.
    fn closed_port() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }

    /// A listener whose accept queue is full: Linux drops further SYNs, so connects time out
    /// as they do against a firewall that drops packets. `None` when the kernel never drops.
    pub(crate) fn filtered_listener() -> Option<(TcpListener, Vec<TcpStream>)> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut held = Vec::new();
        for _ in 0..5000 {
            match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                Ok(stream) => held.push(stream),
                Err(e) if e.kind() == ErrorKind::TimedOut => {
                    // Confirm: a second connect must time out too.
                    let again = TcpStream::connect_timeout(&addr, Duration::from_millis(200));
                    if again.is_err() {
                        return Some((listener, held));
                    }
                    held.push(again.unwrap());
                }
                Err(_) => return None,
            }
        }
        None
    }

    /// A minimal HTTP/1.1 server on `addr`, one thread per connection, `Connection: close`:
    /// answers `/healthz` like the proxy's debug listener and 404 otherwise. Serves until the
    /// test process ends. Returns the port, or `None` when `addr` cannot be bound.
    pub(crate) fn debug_like_server_on(addr: &str) -> Option<u16> {
        use std::io::{BufRead, BufReader, Write};
        let listener = TcpListener::bind(addr).ok()?;
        let port = listener.local_addr().ok()?.port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(&stream);
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).is_err() {
                        return;
                    }
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    let path = request_line.split(' ').nth(1).unwrap_or("");
                    let (status, body) = if path == "/healthz" {
                        ("200 OK", "OK")
                    } else {
                        ("404 Not Found", "404 page not found\n")
                    };
                    let _ = (&stream).write_all(
                        format!(
                            "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\n\
                             X-Proxy-Version: 4.0.0\r\nContent-Length: {}\r\n\
                             Connection: close\r\n\r\n{body}",
                            body.len()
                        )
                        .as_bytes(),
                    );
                });
            }
        });
        Some(port)
    }

    fn debug_like_server() -> u16 {
        debug_like_server_on("127.0.0.1:0").expect("bind 127.0.0.1:0")
    }

    #[test]
    fn closed_ports_are_refused() {
        let port = closed_port();
        let probed = probe(
            "127.0.0.1",
            &[port],
            Duration::from_secs(2),
            Duration::from_secs(2),
        );
        assert_eq!(probed.len(), 1);
        assert_eq!(probed[0].port, port);
        assert_eq!(probed[0].state, PortState::Closed);
        assert!(probed[0].endpoints.is_empty());
        assert!(probed[0].address.is_none());
    }

    #[test]
    fn open_ports_get_every_handler_fetched() {
        let port = debug_like_server();
        let closed = closed_port();
        let probed = probe(
            "127.0.0.1",
            &[port, closed, port],
            Duration::from_secs(2),
            Duration::from_secs(5),
        );
        assert_eq!(probed.len(), 2, "duplicates are probed once");
        let open = &probed[0];
        assert_eq!(open.state, PortState::Open);
        assert_eq!(open.address, Some(SocketAddr::from(([127, 0, 0, 1], port))));
        let paths: Vec<&str> = open.endpoints.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, DEBUG_PATHS);
        let healthz = open
            .answer("/healthz")
            .unwrap_or_else(|| panic!("{:?}", open.endpoints));
        assert_eq!(healthz.status, 200);
        assert_eq!(healthz.body, b"OK");
        assert_eq!(healthz.header("X-Proxy-Version"), Some("4.0.0"));
        assert_eq!(open.answer("/config").unwrap().status, 404);
        assert_eq!(probed[1].state, PortState::Closed);
    }

    /// A server that closed the probe's connection before any request came (an idle timeout
    /// shorter than the other addresses' connects) costs one more connect, not the answers.
    #[test]
    fn a_connection_closed_before_the_first_request_is_replaced() {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::mpsc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (closed, closed_rx) = mpsc::channel();
        let (accepted, accepted_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut incoming = listener.incoming().flatten();
            // The first connection is closed unasked.
            drop(incoming.next());
            closed.send(()).unwrap();
            for stream in incoming {
                accepted.send(()).unwrap();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(&stream);
                    let mut line = String::new();
                    while reader.read_line(&mut line).unwrap_or(0) > 0 {
                        if line == "\r\n" {
                            let _ = (&stream)
                                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK");
                        }
                        line.clear();
                    }
                });
            }
        });
        let connection = TcpStream::connect(addr).unwrap();
        closed_rx.recv().unwrap();
        let answers = fetch_handlers(addr, connection, Duration::from_secs(5).into());
        assert_eq!(answers.len(), DEBUG_PATHS.len());
        for answer in &answers {
            assert_eq!(
                answer.answer.as_ref().map(|r| r.status),
                Ok(200),
                "{answer:?}"
            );
        }
        // One new connection carried them all.
        assert_eq!(accepted_rx.try_iter().count(), 1);
    }

    #[test]
    fn names_try_every_address() {
        // `localhost` usually resolves to ::1 and 127.0.0.1; the listener is on IPv4 only.
        let port = debug_like_server();
        let probed = probe(
            "localhost",
            &[port],
            Duration::from_secs(2),
            Duration::from_secs(5),
        );
        assert_eq!(probed[0].state, PortState::Open);
        assert_eq!(probed[0].answer("/healthz").unwrap().status, 200);
    }

    #[test]
    fn ipv6_addresses_are_bracketed_in_urls() {
        let Some(port) = debug_like_server_on("[::1]:0") else {
            eprintln!("skipped: no IPv6 loopback");
            return;
        };
        for host in ["::1", "[::1]"] {
            let probed = probe(
                host,
                &[port],
                Duration::from_secs(2),
                Duration::from_secs(5),
            );
            assert_eq!(probed[0].state, PortState::Open, "{host}");
            assert_eq!(probed[0].answer("/healthz").unwrap().body, b"OK", "{host}");
            assert_eq!(
                probed[0].address.unwrap().ip(),
                "::1".parse::<IpAddr>().unwrap()
            );
        }
        assert_eq!(url_host("::1".parse().unwrap()), "[::1]");
        assert_eq!(url_host("10.0.0.1".parse().unwrap()), "10.0.0.1");
    }

    #[test]
    fn five_filtered_ports_cost_one_timeout() {
        // Filled at once: each fill ends with two short connect timeouts.
        let filled: Vec<_> = (0..5)
            .map(|_| std::thread::spawn(filtered_listener))
            .collect();
        let mut listeners = Vec::new();
        for handle in filled {
            match handle.join().ok().flatten() {
                Some(l) => listeners.push(l),
                None => {
                    eprintln!("skipped: the kernel never dropped a SYN on a full backlog");
                    return;
                }
            }
        }
        let ports: Vec<u16> = listeners
            .iter()
            .map(|(l, _)| l.local_addr().unwrap().port())
            .collect();
        let timeout = Duration::from_millis(300);
        let started = Instant::now();
        let probed = probe("127.0.0.1", &ports, timeout, Duration::from_secs(1));
        let elapsed = started.elapsed();
        for p in &probed {
            assert_eq!(p.state, PortState::Filtered, "port {}", p.port);
            assert_eq!(p.connect_timeout, timeout);
            assert!(p.endpoints.is_empty());
        }
        assert!(elapsed >= timeout, "{elapsed:?}");
        // Sequential connects would take 1.5 s.
        assert!(elapsed < Duration::from_millis(1200), "{elapsed:?}");
    }

    #[test]
    fn silent_http_servers_time_out_per_request() {
        // Accepts (the kernel completes the handshake) but never answers.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let started = Instant::now();
        let probed = probe(
            "127.0.0.1",
            &[port],
            Duration::from_secs(2),
            Duration::from_millis(300),
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(probed[0].state, PortState::Open);
        assert_eq!(probed[0].endpoints.len(), DEBUG_PATHS.len());
        for e in &probed[0].endpoints {
            assert!(e.answer.is_err(), "{}", e.path);
            assert!(e.transient, "{}", e.path);
        }
        drop(listener);
    }

    #[test]
    fn unresolvable_hosts_are_errors() {
        let probed = probe(
            "",
            &[9205, 9141],
            Duration::from_secs(1),
            Duration::from_secs(1),
        );
        assert_eq!(probed.len(), 2);
        for p in probed {
            assert!(matches!(p.state, PortState::Error(_)), "{:?}", p.state);
        }
    }
}
