//! The server under hostile clients: caps, deadlines, framing, evictions.

use super::*;

struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A request of `/held` waits in its handler until the test releases it: in flight for as
/// long as the test needs, without waiting on the clock.
#[derive(Default)]
struct Held {
    state: Mutex<(bool, bool)>,
    changed: std::sync::Condvar,
}

impl Held {
    fn set(&self, change: impl FnOnce(&mut (bool, bool))) {
        change(&mut self.state.lock().unwrap());
        self.changed.notify_all();
    }

    fn wait_until(&self, done: impl Fn(&(bool, bool)) -> bool) {
        let state = self.state.lock().unwrap();
        let (_state, timeout) = self
            .changed
            .wait_timeout_while(state, Duration::from_secs(10), |s| !done(s))
            .unwrap();
        assert!(!timeout.timed_out(), "the held request never got that far");
    }
}

static HELD: std::sync::LazyLock<Held> = std::sync::LazyLock::new(Held::default);

fn start(limits: Limits, workers: usize) -> Running {
    let server = Server::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        server.run(
            workers,
            limits,
            |r: &Request| match r.path.as_str() {
                "/panic" => panic!("a handler bug"),
                "/held" => {
                    HELD.set(|(started, _)| *started = true);
                    HELD.wait_until(|(_, released)| *released);
                    Response::json(200, &serde_json::json!({"held": true}))
                }
                "/slow" => {
                    std::thread::sleep(Duration::from_millis(300));
                    Response::json(200, &serde_json::json!({"slow": true}))
                }
                _ => Response::json(
                    200,
                    &serde_json::json!({
                        "method": r.method, "path": r.path,
                        "q": r.query.iter().find(|(n, _)| n == "url").map(|(_, v)| v),
                        "body": String::from_utf8_lossy(&r.body),
                        "bearer": r.bearer_matches("s3cret-token"),
                    }),
                ),
            },
            flag,
        )
    });
    Running {
        addr,
        stop,
        thread: Some(thread),
    }
}

/// Issue 31, item 1: four addresses of one network hold no more than the network's share
/// (IPv4 /24), nor do four /64s of one IPv6 /56; another network keeps its own.
#[test]
fn the_addresses_of_one_network_share_its_cap() {
    let cap = ConnectionCap::by_address(8, 32);
    let peer = |ip: &str| Some(SocketAddr::new(ip.parse().unwrap(), 40_000));
    let mut held = Vec::new();
    for (first, fifth, elsewhere) in [
        ("192.0.2.{}", "192.0.2.5", "198.51.100.1"),
        ("2001:db8:0:{}::1", "2001:db8:0:5::1", "2001:db8:1:100::1"),
    ] {
        for a in 1..=4 {
            let address = first.replace("{}", &a.to_string());
            for _ in 0..8 {
                held.push(cap.admit(peer(&address)).expect("within the shares"));
            }
            // Its own share first; the fourth fills the network's too.
            let full = if a < 4 {
                Refusal::ClientCap
            } else {
                Refusal::NetworkCap
            };
            assert_eq!(cap.admit(peer(&address)).unwrap_err(), full, "{address}");
        }
        assert_eq!(
            cap.admit(peer(fifth)).unwrap_err(),
            Refusal::NetworkCap,
            "{fifth}"
        );
        held.push(cap.admit(peer(elsewhere)).expect("another network"));
    }
    // Seats go with their connections.
    held.clear();
    assert!(cap.admit(peer("192.0.2.5")).is_ok());
}

/// Sends raw bytes and returns the whole answer.
fn exchange(addr: SocketAddr, raw: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(raw);
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn status(answer: &str) -> u16 {
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn requests_are_read_and_answered_as_json() {
    let s = start(Limits::default(), 2);
    let a = exchange(
        s.addr,
        b"POST /api/queue?url=cloud%2Eexample+x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\nContent-Length: 5\r\n\r\nhello",
    );
    assert_eq!(status(&a), 200, "{a}");
    assert!(a.contains("Connection: close\r\n"), "{a}");
    let body: Value = serde_json::from_str(a.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["q"], "cloud.example x");
    assert_eq!(body["body"], "hello");
    assert_eq!(body["bearer"], true);
    let a = exchange(
        s.addr,
        b"GET / HTTP/1.1\r\nAuthorization: Bearer s3cret-tokeN\r\n\r\n",
    );
    assert!(a.contains("\"bearer\":false"), "{a}");
    // HEAD: the head GET would get, its Content-Length included, and no body.
    let head = exchange(s.addr, b"HEAD /x HTTP/1.1\r\n\r\n");
    assert_eq!(status(&head), 200, "{head}");
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|n| n.parse::<usize>().ok());
    assert!(length.is_some_and(|n| n > 20), "{head}");
}

#[test]
fn hostile_requests_get_json_errors() {
    let limits = Limits {
        head_deadline: Duration::from_millis(300),
        body_deadline: Duration::from_millis(300),
        io_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let s = start(limits, 2);
    let big_body = format!(
        "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        limits.max_body_bytes + 1
    );
    let head_flood = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000));
    let no_line_end = "a".repeat(40_000);
    for (raw, expected, code) in [
        (big_body.as_str(), 413, "body_too_large"),
        (head_flood.as_str(), 431, "head_too_large"),
        (no_line_end.as_str(), 431, "head_too_large"),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            411,
            "length_required",
        ),
        ("GET /\r\n\r\n", 400, "bad_request_line"),
        ("GET / HTTP/2.0\r\n\r\n", 505, "version"),
        (
            "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            400,
            "bad_length",
        ),
        // Strict framing: a sign, two lengths (equal or not, two lines or a list).
        (
            "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc",
            400,
            "bad_length",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
            400,
            "bad_length",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
            400,
            "bad_length",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\nabc",
            400,
            "bad_length",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            413,
            "body_too_large",
        ),
        ("GET /panic HTTP/1.1\r\n\r\n", 500, "internal"),
        // Head started, never finished: the deadline answers.
        ("GET / HTTP/1.1\r\nX-Slow: ", 408, "timeout"),
        // Body promised, never sent.
        (
            "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
            408,
            "timeout",
        ),
    ] {
        let a = exchange(s.addr, raw.as_bytes());
        assert_eq!(status(&a), expected, "{raw:.60}: {a}");
        assert!(
            a.contains(&format!("\"code\":\"{code}\"")),
            "{raw:.60}: {a}"
        );
        assert!(a.contains("Content-Type: application/json"), "{a}");
    }
}

#[test]
fn a_dripping_client_is_cut_at_the_head_deadline() {
    let limits = Limits {
        head_deadline: Duration::from_millis(400),
        io_timeout: Duration::from_millis(150),
        ..Limits::default()
    };
    let s = start(limits, 1);
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let started = Instant::now();
    c.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    // One header byte every 100 ms: each read arrives in time, the whole head does not.
    let mut answer = String::new();
    for _ in 0..50 {
        if c.write_all(b"X").is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        if started.elapsed() > Duration::from_secs(2) {
            break;
        }
    }
    let _ = c.read_to_string(&mut answer);
    assert_eq!(status(&answer), 408, "{answer}");
    // The one worker is free again.
    let a = exchange(s.addr, b"GET /x HTTP/1.1\r\n\r\n");
    assert_eq!(status(&a), 200, "{a}");
}

#[test]
fn a_full_queue_answers_503_with_retry_after() {
    let s = start(Limits::default(), 1);
    // One worker and four queue places: slow requests fill them.
    let clients: Vec<_> = (0..8)
        .map(|_| {
            let addr = s.addr;
            std::thread::spawn(move || exchange(addr, b"GET /slow HTTP/1.1\r\n\r\n"))
        })
        .collect();
    let answers: Vec<String> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let busy: Vec<&String> = answers.iter().filter(|a| status(a) == 503).collect();
    assert!(!busy.is_empty(), "{answers:?}");
    assert!(
        busy.iter().all(|a| a.contains("Retry-After: 1")),
        "{busy:?}"
    );
    assert!(answers.iter().any(|a| status(a) == 200));
}

#[test]
fn connections_beyond_the_queue_get_a_503_never_a_reset() {
    // Closing a socket with the client's request unread in it resets the connection: the
    // client gets an error instead of the 503 (`ab -c 50` against the exporter did).
    let (release, gate) = mpsc::channel::<()>();
    let gate = Arc::new(Mutex::new(gate));
    let server = Server::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        server.run(
            1,
            Limits::default(),
            move |_: &Request| {
                // Holds the one worker until the test lets it go.
                let _ = gate.lock().unwrap().recv();
                Response::json(200, &serde_json::json!({}))
            },
            flag,
        )
    });
    let (finished, answers) = mpsc::channel();
    let clients: Vec<_> = (0..25)
        .map(|_| {
            let finished = finished.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let sent = s.write_all(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
                let mut out = String::new();
                let read = s.read_to_string(&mut out);
                let _ = finished.send((sent.is_ok() && read.is_ok(), out));
            })
        })
        .collect();
    // One worker and four queue places: at least twenty are turned away while it is held.
    let turned_away: Vec<(bool, String)> = answers.iter().take(20).collect();
    for _ in 0..25 {
        let _ = release.send(());
    }
    for client in clients {
        client.join().unwrap();
    }
    drop(finished);
    let served: Vec<(bool, String)> = answers.iter().collect();
    for (ok, answer) in turned_away.iter().chain(&served) {
        assert!(ok, "reset: {answer:?}");
        match status(answer) {
            503 => assert!(answer.contains("Retry-After: 1\r\n"), "{answer}"),
            other => assert_eq!(other, 200, "{answer}"),
        }
    }
    assert!(turned_away.iter().all(|(_, a)| status(a) == 503));
    stop.store(true, Ordering::SeqCst);
    thread.join().unwrap();
}

#[test]
fn stopping_finishes_the_request_in_flight() {
    let s = start(Limits::default(), 2);
    let addr = s.addr;
    let in_flight = std::thread::spawn(move || exchange(addr, b"GET /held HTTP/1.1\r\n\r\n"));
    HELD.wait_until(|(started, _)| *started);
    // Stopped while the request is in its handler; then the handler finishes.
    s.stop.store(true, Ordering::SeqCst);
    HELD.set(|(_, released)| *released = true);
    drop(s); // waits for the server to return
    assert_eq!(status(&in_flight.join().unwrap()), 200);
    assert!(TcpStream::connect(addr).is_err(), "no longer listening");
}

/// A streamed body reaches the client part by part: the head (no Content-Length) and the
/// first part arrive while the producer still waits for the test to let it go on; the
/// answer ends when the connection closes. A producer that panics keeps the worker.
#[test]
fn a_streamed_body_is_written_as_it_is_produced() {
    let (go_on, wait) = mpsc::channel::<()>();
    let wait = Arc::new(Mutex::new(Some(wait)));
    let server = Server::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        server.run(
            1,
            Limits::default(),
            move |r: &Request| {
                if r.path == "/panic" {
                    return Response::streaming(200, "text/plain", |out| {
                        out.write_all(b"half")?;
                        panic!("a producer bug")
                    });
                }
                let wait = wait.lock().unwrap().take();
                Response::streaming(200, "text/event-stream", move |out| {
                    out.write_all(b"data: first\n\n")?;
                    out.flush()?;
                    if let Some(wait) = wait {
                        let _ = wait.recv();
                    }
                    out.write_all(b"data: last\n\n")
                })
            },
            flag,
        )
    });
    let mut client = TcpStream::connect(addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    client.write_all(b"GET /events HTTP/1.1\r\n\r\n").unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("data: first\n\n") {
        let n = client.read(&mut buf).unwrap();
        assert!(n > 0, "closed early: {:?}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&seen).into_owned();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(
        head.contains("Content-Type: text/event-stream\r\n"),
        "{head}"
    );
    assert!(!head.contains("Content-Length"), "{head}");
    assert!(!head.contains("data: last"), "{head}");
    go_on.send(()).unwrap();
    let mut rest = String::new();
    client.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "data: last\n\n");

    let half = exchange(addr, b"GET /panic HTTP/1.1\r\n\r\n");
    assert!(half.ends_with("\r\n\r\nhalf"), "{half}");
    // The one worker survived the panic.
    let again = exchange(addr, b"GET /panic HTTP/1.1\r\n\r\n");
    assert_eq!(status(&again), 200, "{again}");
    stop.store(true, Ordering::SeqCst);
    thread.join().unwrap();
}

/// The statuses the servers' sources construct (`Response::json(404, ...)`, `status: 409`,
/// `rpc_error(400, ...)`, ...), read from the files under `dir`.
fn statuses_in(dir: &std::path::Path, found: &mut std::collections::BTreeSet<u16>) {
    const BEFORE: [&str; 8] = [
        "Response::new(",
        "Response::json(",
        "Response::error(",
        "Response::streaming(",
        "status: ",
        "rpc_error(",
        "plain_error(",
        "bad(",
    ];
    let paths: Vec<std::path::PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|entry| entry.unwrap().path()).collect(),
        // A file of its own.
        Err(_) => vec![dir.to_path_buf()],
    };
    for path in paths {
        if path.is_dir() {
            statuses_in(&path, found);
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap_or_default();
        for before in BEFORE {
            for (at, _) in source.match_indices(before) {
                let rest = source[at + before.len()..].trim_start();
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(status @ 100..=599) = digits.parse::<u16>() {
                    found.insert(status);
                }
            }
        }
    }
}

#[test]
fn every_status_the_servers_answer_has_its_reason_phrase() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut statuses = std::collections::BTreeSet::new();
    for servers in ["server", "service.rs", "exporter.rs", "web"] {
        statuses_in(&src.join(servers), &mut statuses);
    }
    // The scan found what it must (the form's redirect, an export not ready, a busy queue).
    for known in [202, 303, 409, 503] {
        assert!(statuses.contains(&known), "{known} not found: {statuses:?}");
    }
    for status in statuses {
        assert!(!reason(status).is_empty(), "{status} has no reason phrase");
    }
    assert_eq!(reason(303), "See Other");
}

/// The one way every server routes: parameters, trailing slashes, 405 with the path's
/// methods, a route for any other method, a route turned off, 404.
#[test]
fn routes_match_path_then_method() {
    fn echo(on: &bool, r: &Request, values: &[&str]) -> Response {
        Response::json(
            200,
            &serde_json::json!({"on": on, "method": r.method, "values": values}),
        )
    }
    const ROUTES: &[Route<bool>] = &[
        Route::new(&["GET", "HEAD"], "/", echo),
        Route::new(&["GET"], "/a/{x}/b/{y}", echo),
        Route::new(&["DELETE"], "/a/{x}/b/{y}", echo),
        Route::new(&["POST"], "/any", echo),
        Route::new(&[], "/any", |_, _, _| {
            Response::error(405, "own", "its own")
        }),
        Route::new(&["GET"], "/off", echo).when(|on| *on),
    ];
    let ask = |on: bool, method: &str, path: &str| {
        let response = route(
            ROUTES,
            &on,
            &Request::local(method, path),
            "nothing here",
            "",
        );
        let body: Value = serde_json::from_slice(&response.body).unwrap();
        let allow = response.headers.iter().find(|(n, _)| n == "Allow");
        (response.status, body, allow.map(|(_, v)| v.clone()))
    };
    let (status, body, _) = ask(false, "GET", "/a/1/b/two/");
    assert_eq!(
        (status, &body["values"]),
        (200, &serde_json::json!(["1", "two"]))
    );
    assert_eq!(ask(false, "HEAD", "/").0, 200);
    assert_eq!(ask(false, "GET", "//").0, 200);
    let (status, body, allow) = ask(false, "PUT", "/a/1/b/2");
    assert_eq!((status, allow.as_deref()), (405, Some("GET, DELETE")));
    assert_eq!(body["error"]["code"], "method_not_allowed");
    assert_eq!(ask(false, "POST", "/any").0, 200);
    assert_eq!(ask(false, "GET", "/any").1["error"]["code"], "own");
    assert_eq!(ask(true, "GET", "/off").0, 200);
    for path in ["/off", "/a//b/2", "/a/1/b", "/a/1/b/2/c", "/x"] {
        let (status, body, _) = ask(false, "GET", path);
        assert_eq!(
            (status, &body["error"]["message"]),
            (404, &serde_json::json!("nothing here")),
            "{path}"
        );
    }
}

#[test]
fn forms_decode_percent_and_plus() {
    assert_eq!(
        parse_form(b"url=https%3A%2F%2Fa.example%3A9200%2F&x=a+b&bad=%zz&&empty="),
        vec![
            ("url".into(), "https://a.example:9200/".into()),
            ("x".into(), "a b".into()),
            ("bad".into(), "%zz".into()),
            ("empty".into(), String::new()),
        ]
    );
    assert!(constant_time_eq(b"abc", b"abc"));
    assert!(!constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"abc", b"ab"));
}
