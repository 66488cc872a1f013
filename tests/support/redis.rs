//! A real `redis-server` (Debian's package, installed by `make deps`) for a test: on a free
//! loopback port, in the foreground, without persistence; killed and reaped on drop (also on a
//! panic). Used by `tests/it/store_redis.rs`, `tests/it/web_redis.rs` and `make bench`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REDIS_SERVER: &str = "/usr/bin/redis-server";

/// A `redis-server` run by the test: killed and reaped on drop.
pub struct RedisServer {
    pub child: Child,
    pub addr: SocketAddr,
    dir: PathBuf,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl RedisServer {
    /// Starts Debian's redis-server on a free loopback port, its files in a fresh directory
    /// named after the test, and waits until it answers PING.
    #[cfg(test)]
    pub fn start(name: &str) -> RedisServer {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("store-redis-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        RedisServer::start_in(&dir).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts it with its files in `dir` (created), and waits until it answers PING; `Err`
    /// says why not (`make bench` reports it, a test panics with it).
    pub fn start_in(dir: &Path) -> Result<RedisServer, String> {
        if !Path::new(REDIS_SERVER).is_file() {
            return Err(format!(
                "{REDIS_SERVER} is missing: install Debian's redis-server package with `make \
                 deps` (packaging/ci-deps.sh)"
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|probe| probe.local_addr())
            .map_err(|e| format!("no free loopback port: {e}"))?;
        let log = std::fs::File::create(dir.join("redis.log")).map_err(|e| e.to_string())?;
        let child = super::on_the_real_clock(&mut Command::new(REDIS_SERVER))
            .args(["--port", &addr.port().to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--daemonize", "no"])
            .arg("--dir")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run {REDIS_SERVER}: {e}"))?;
        let mut server = RedisServer {
            child,
            addr,
            dir: dir.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.answers_ping() {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("redis-server ended ({status}): {}", server.log()));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "redis-server does not answer PING: {}",
                    server.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    pub fn answers_ping(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut answer = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut answer).is_ok()
            && &answer == b"+PONG\r\n"
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }

    pub fn url(&self, db: u8) -> String {
        format!("redis://{}/{db}", self.addr)
    }

    /// Sends a signal with kill(1) (std can only SIGKILL).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal}");
    }
}
