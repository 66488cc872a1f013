//! The metrics exporter (`check-storage-security --prometheus-listen-port 0`) as a child
//! process: started with a cleared environment, found by its `listening on ADDR` line,
//! scraped over plain HTTP, stopped with SIGTERM. Used by `tests/it/exporter.rs` and by
//! `make bench`, which name the binary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long the exporter may take to print where it listens.
const START_LIMIT: Duration = Duration::from_secs(30);

/// A running exporter; killed on drop if still running.
pub struct ExporterProcess {
    child: Child,
    pub addr: SocketAddr,
    /// Everything it wrote on stderr so far, the `listening on` line included.
    stderr: Arc<Mutex<String>>,
}

/// One HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// From connecting to the last byte.
    pub took: Duration,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }

    /// The value of a series, written as it appears before the value:
    /// `storage_security_scrape_success{host="a:1"}`.
    pub fn sample(&self, series: &str) -> Option<f64> {
        self.body.lines().find_map(|line| {
            line.strip_prefix(series)?
                .strip_prefix(' ')?
                .parse::<f64>()
                .ok()
        })
    }
}

impl ExporterProcess {
    /// Starts `bin` with `args` (which must contain `--prometheus-listen-port`), `env` added to
    /// a cleared environment (PATH kept), HOME and the working directory set to `home`.
    /// Panics with what the process printed when it does not say where it listens.
    pub fn start(bin: &Path, args: &[String], env: &[(&str, &str)], home: &Path) -> Self {
        let mut command = Command::new(bin);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .current_dir(home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("start the exporter");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (found, listening) = mpsc::channel();
        {
            let pipe = child.stderr.take().expect("stderr");
            let stderr = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    if let Some(addr) = line.strip_prefix("listening on ") {
                        let _ = found.send(addr.to_string());
                    }
                    let mut all = stderr.lock().unwrap();
                    all.push_str(&line);
                    all.push('\n');
                }
            });
        }
        let addr = match listening.recv_timeout(START_LIMIT) {
            Ok(addr) => addr
                .parse()
                .unwrap_or_else(|_| panic!("listening on {addr:?}: not an address")),
            Err(_) => {
                let _ = child.kill();
                let mut stdout = String::new();
                if let Some(mut out) = child.stdout.take() {
                    let _ = out.read_to_string(&mut stdout);
                }
                let _ = child.wait();
                panic!(
                    "the exporter did not print `listening on ADDR`\nstdout: {stdout}\nstderr: {}",
                    stderr.lock().unwrap()
                );
            }
        };
        ExporterProcess {
            child,
            addr,
            stderr,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until stderr holds `needle` (at most `limit`); what it holds then.
    pub fn wait_stderr(&self, needle: &str, limit: Duration) -> String {
        let until = Instant::now() + limit;
        loop {
            let all = self.stderr();
            if all.contains(needle) || Instant::now() > until {
                return all;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Answer {
        self.request("GET", path)
    }

    /// One request with `Connection: close`; the answer read to its end (30 s at most).
    pub fn request(&self, method: &str, path: &str) -> Answer {
        request(self.addr, method, path)
    }

    /// [`ExporterProcess::request`] with `headers` added.
    pub fn request_with(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
        request_with(self.addr, method, path, headers)
    }

    /// SIGTERM, then waits for the exit (at most `limit`): the exit code, and stdout.
    pub fn terminate(&mut self, limit: Duration) -> (Option<i32>, String) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let until = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the exporter") {
                break Some(status);
            }
            if Instant::now() > until {
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stdout = String::new();
        if status.is_some()
            && let Some(mut out) = self.child.stdout.take()
        {
            let _ = out.read_to_string(&mut stdout);
        }
        (status.and_then(|s| s.code()), stdout)
    }
}

impl Drop for ExporterProcess {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One plain HTTP/1.1 request to `addr` with `Connection: close`, read to its end.
pub fn request(addr: SocketAddr, method: &str, path: &str) -> Answer {
    request_with(addr, method, path, &[])
}

/// [`request`] with `headers` added.
pub fn request_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Answer {
    let started = Instant::now();
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // One write, sent at once: latencies measured here are the server's, not Nagle's.
    let _ = stream.set_nodelay(true);
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let head =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let took = started.elapsed();
    let text = String::from_utf8(raw).expect("a UTF-8 answer");
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of head: {text:?}"));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_string(),
        took,
    }
}
