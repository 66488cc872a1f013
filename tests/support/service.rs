//! Running `check-storage-scanner serve` as a real process on loopback, and a small HTTP/1.1
//! client for it (one request per connection, as the service answers). Used by
//! `tests/it/service.rs` and by `make bench`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long the service may take to say where it listens, or to exit.
const START_LIMIT: Duration = Duration::from_secs(30);

/// A running service; killed on drop unless it already exited.
pub struct ScannerService {
    child: Child,
    pub addr: SocketAddr,
    stderr: Arc<(Mutex<Vec<String>>, Condvar)>,
}

/// What a service that did not start printed, and its exit code.
#[derive(Debug)]
pub struct Refused {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl ScannerService {
    /// Starts `bin serve --port 0 <args>` with a cleared environment (plus `env`) in `dir`, and
    /// waits for its `listening on` line. `Err` when it exits first.
    pub fn start(
        bin: &Path,
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<ScannerService, Refused> {
        let mut all = vec!["serve", "--port", "0"];
        all.extend_from_slice(args);
        ScannerService::start_with(bin, dir, &all, env)
    }

    /// Starts `bin <args>` (a subcommand and its flags; it must listen on a free port) as
    /// [`ScannerService::start`] does.
    pub fn start_with(
        bin: &Path,
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<ScannerService, Refused> {
        let mut command = Command::new(bin);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", dir)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("run check-storage-scanner serve");
        let stderr = Arc::new((Mutex::new(Vec::<String>::new()), Condvar::new()));
        let pipe = child.stderr.take().expect("stderr");
        {
            let stderr = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    let (lines, changed) = &*stderr;
                    lines.lock().unwrap().push(line);
                    changed.notify_all();
                }
                // End of stderr: the process is gone; wake the waiters for good.
                let (lines, changed) = &*stderr;
                lines.lock().unwrap().push(String::from("\u{0}eof"));
                changed.notify_all();
            });
        }
        let listening = wait_for(&stderr, START_LIMIT, |l| {
            l.contains(": listening on http://")
        });
        let addr = listening.and_then(|l| {
            l.rsplit("http://")
                .next()
                .and_then(|a| a.trim().parse::<SocketAddr>().ok())
        });
        match addr {
            Some(addr) => Ok(ScannerService {
                child,
                addr,
                stderr,
            }),
            None => {
                let status = child.wait().expect("wait for the service");
                let mut stdout = String::new();
                if let Some(mut out) = child.stdout.take() {
                    let _ = out.read_to_string(&mut stdout);
                }
                let _ = wait_for(&stderr, START_LIMIT, |l| l == "\u{0}eof");
                let lines = stderr.0.lock().unwrap();
                Err(Refused {
                    code: status.code(),
                    stdout,
                    stderr: lines
                        .iter()
                        .filter(|l| *l != "\u{0}eof")
                        .map(|l| format!("{l}\n"))
                        .collect(),
                })
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every stderr line so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|l| *l != "\u{0}eof")
            .cloned()
            .collect()
    }

    /// Waits (at most `limit`) for a stderr line that `wanted` accepts.
    pub fn wait_for_line(&self, limit: Duration, wanted: impl Fn(&str) -> bool) -> Option<String> {
        wait_for(&self.stderr, limit, wanted)
    }

    /// Sends SIGTERM (through `kill`, as a service manager would).
    /// SIGKILL: the process ends at once, finishing nothing.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits for the process to exit (at most `limit`); its exit code.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let until = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the service") {
                // The reader thread may not have taken the last lines off the pipe yet: wait
                // for its end-of-file mark, so `stderr_lines` after an exit is complete.
                let eof = |line: &str| line == "\u{0}eof";
                wait_for(
                    &self.stderr,
                    until.saturating_duration_since(Instant::now()),
                    eof,
                );
                return status.code();
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// `VmHWM` (peak resident memory) of the running service in KiB, where `/proc` tells.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    }

    /// One request to the service.
    pub fn request(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Answer {
        request(self.addr, method, target, headers, body)
    }

    pub fn get(&self, target: &str, headers: &[(&str, &str)]) -> Answer {
        self.request("GET", target, headers, b"")
    }
}

impl Drop for ScannerService {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn wait_for(
    stderr: &(Mutex<Vec<String>>, Condvar),
    limit: Duration,
    wanted: impl Fn(&str) -> bool,
) -> Option<String> {
    let until = Instant::now() + limit;
    let (lines, changed) = stderr;
    let mut seen = lines.lock().unwrap();
    loop {
        if let Some(line) = seen.iter().find(|l| wanted(l)) {
            return Some(line.clone());
        }
        if seen.last().is_some_and(|l| l == "\u{0}eof") {
            return None;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        seen = changed.wait_timeout(seen, left).unwrap().0;
    }
}

/// One answer, read whole.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.text()))
    }
}

/// Sends one request (`Content-Length` added for a body) and reads the answer to its end.
pub fn request(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    exchange(addr, &raw_request(addr, method, target, headers, body))
}

/// The bytes of one request: `Content-Length` added for a body (and for any POST) unless
/// `headers` name one.
fn raw_request(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Vec<u8> {
    let mut raw = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\n");
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    let has_length = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-length"));
    if !has_length && (!body.is_empty() || method == "POST") {
        raw.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    raw.push_str("\r\n");
    let mut bytes = raw.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Like [`request`], from the loopback address `source` (127.0.0.2, 127.0.0.3, ...: a client
/// of another address, or of another /24 network, to the server).
pub fn request_from(
    source: &str,
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let bytes = raw_request(addr, method, target, headers, body);
    exchange_on(connect_from(source, addr), &bytes)
}

/// A connection to `to` from the loopback address `source`.
pub fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
    try_connect_from(source, to).expect("connect to the service from the source address")
}

/// [`connect_from`], failing with the error (a benchmark counts it instead of stopping).
pub fn try_connect_from(source: &str, to: SocketAddr) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    let from: SocketAddr = format!("{source}:0")
        .parse()
        .map_err(|_| std::io::Error::other("not an IPv4 source address"))?;
    socket.bind(&from.into())?;
    socket.connect_timeout(&to.into(), Duration::from_secs(5))?;
    Ok(socket.into())
}

/// Sends raw bytes and parses the answer.
pub fn exchange(addr: SocketAddr, raw: &[u8]) -> Answer {
    exchange_on(
        TcpStream::connect(addr).expect("connect to the service"),
        raw,
    )
}

fn exchange_on(mut stream: TcpStream, raw: &[u8]) -> Answer {
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("read timeout");
    let _ = stream.write_all(raw);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    parse_answer(&answer)
}

fn parse_answer(answer: &[u8]) -> Answer {
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(answer.len());
    let head = String::from_utf8_lossy(&answer[..split]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: answer.get(split + 4..).unwrap_or_default().to_vec(),
    }
}

/// `application/x-www-form-urlencoded` of one value.
pub fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
