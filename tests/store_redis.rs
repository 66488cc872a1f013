//! The Redis store (`--store redis://host:port/db`) against a real `redis-server` (Debian's
//! package, installed by `make deps`) that each test starts on a free loopback port, in the
//! foreground, without persistence, and kills when it ends (also on a panic): the store
//! conformance suite, two nodes on one server, and a dead or hung server answering with a
//! `StoreError` in bounded time.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use storage_security::web::store::conformance::{self, T0};
use storage_security::web::store::redis::RedisStore;
use storage_security::web::store::{self, Store};

const REDIS_SERVER: &str = "/usr/bin/redis-server";

/// A `redis-server` run by the test: killed and reaped on drop.
struct RedisServer {
    child: Child,
    addr: SocketAddr,
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
    fn start(name: &str) -> RedisServer {
        assert!(
            Path::new(REDIS_SERVER).is_file(),
            "{REDIS_SERVER} is missing: install Debian's redis-server package with `make deps` \
             (packaging/ci-deps.sh)"
        );
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("store-redis-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let addr = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap()
        };
        let child = Command::new(REDIS_SERVER)
            .args(["--port", &addr.port().to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("redis.log")).unwrap())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start redis-server");
        let mut server = RedisServer { child, addr, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.answers_ping() {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("redis-server ended ({status}): {}", server.log());
            }
            assert!(
                Instant::now() < deadline,
                "redis-server does not answer PING: {}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn answers_ping(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut answer = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut answer).is_ok()
            && &answer == b"+PONG\r\n"
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }

    fn url(&self, db: u8) -> String {
        format!("redis://{}/{db}", self.addr)
    }

    /// Sends a signal with kill(1) (std can only SIGKILL).
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal}");
    }
}

#[test]
fn the_redis_store_passes_the_conformance_suite() {
    let server = RedisServer::start("conformance");
    let url = server.url(0);
    // Each check gets keys of its own under a fresh prefix.
    let next = AtomicUsize::new(0);
    conformance::run_all(&|| {
        let n = next.fetch_add(1, Ordering::Relaxed);
        Box::new(
            RedisStore::open_with(&url, &format!("check{n}:"), Duration::from_secs(3)).unwrap(),
        )
    });
    // The same through `--store`'s parser, on another database with the default prefix.
    let store = store::open(&server.url(3)).unwrap();
    let (_, check) = conformance::CHECKS
        .iter()
        .find(|(name, _)| *name == "an_expired_lease_is_claimed_again")
        .unwrap();
    check(&*store);
}

#[test]
fn two_nodes_on_one_redis_behave_as_one() {
    let server = RedisServer::start("two-nodes");
    let a = RedisStore::open(&server.url(1)).unwrap();
    let b = RedisStore::open(&server.url(1)).unwrap();
    conformance::two_nodes(&a, &b);
    // Another database or prefix is another service: it sees none of it.
    let elsewhere = RedisStore::open(&server.url(2)).unwrap();
    assert_eq!(elsewhere.outcomes("net").unwrap(), Vec::<bool>::new());
    let other_prefix =
        RedisStore::open_with(&server.url(1), "other:", Duration::from_secs(3)).unwrap();
    assert_eq!(other_prefix.paused_until("net", T0).unwrap(), None);
}

#[test]
fn records_expire_in_redis_too() {
    let server = RedisServer::start("expiry");
    let store = RedisStore::open(&server.url(0)).unwrap();
    // A record that expired by the wall clock already: Redis drops it on its own.
    let old = conformance::queued("old", "x.example", "n", 1_000_000_000, 86_400);
    store.insert(&old).unwrap();
    let mut con = TcpStream::connect(server.addr).unwrap();
    con.write_all(b"EXISTS css:rec:old\r\n").unwrap();
    let mut answer = [0u8; 4];
    con.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b":0\r\n");
    // A live one carries its expiry time.
    let live = conformance::queued("live", "x.example", "n", T0, 86_400);
    store.insert(&live).unwrap();
    con.write_all(b"EXPIRETIME css:rec:live\r\n").unwrap();
    let expected = format!(":{}\r\n", T0 + 86_400);
    let mut answer = vec![0u8; expected.len()];
    con.read_exact(&mut answer).unwrap();
    assert_eq!(String::from_utf8(answer).unwrap(), expected);
}

#[test]
fn a_dead_redis_is_a_store_error_in_bounded_time() {
    let mut server = RedisServer::start("dead");
    let store = RedisStore::open_with(&server.url(0), "css:", Duration::from_secs(1)).unwrap();
    store
        .insert(&conformance::queued("d1", "x.example", "n", T0, 86_400))
        .unwrap();

    // Hung (stopped, its socket still open): the read times out.
    server.signal("STOP");
    let started = Instant::now();
    let error = store.get("d1", T0).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(error.0.contains(&server.url(0)), "{error}");
    server.signal("CONT");
    // Back: the next call connects again and finds everything.
    assert!(store.get("d1", T0).unwrap().is_some());

    // Killed: every call fails at once, none hangs.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let started = Instant::now();
    for _ in 0..3 {
        assert!(store.claim("w", T0, 60).is_err());
        assert!(store.hit("k", 1, 60, T0).is_err());
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // A new node cannot start on it, and its error hides the password.
    let url = format!("redis://:s3cret@{}/0", server.addr);
    let Err(error) = store::open(&url) else {
        panic!("nothing answers");
    };
    assert!(!error.0.contains("s3cret"), "{error}");
    assert!(
        error.0.contains(&format!("redis://:***@{}/0", server.addr)),
        "{error}"
    );
}
