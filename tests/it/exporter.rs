//! The metrics exporter end to end: the real binary with `--prometheus-listen-port 0` against
//! fake instances on loopback (their private CA trusted), scraped over HTTP, checked by
//! `promtool check metrics`, and scraped by a real Prometheus server whose query API must give
//! the rating back. The shipped alerting rules (`packaging/prometheus/`) pass `promtool check
//! rules`, and `promtool test rules` over series built from a live scrape: each alert fires for
//! its condition, and none for a healthy host.
//!
//! Time: the rounds are real, so intervals are short (`--scrape-interval 1`) and fakes fast;
//! one test waits the fixed 8 s of the first scrape, since only a round that outlasts it can
//! show the first scrape answering without it.

use crate::support::exporter::ExporterProcess;
use crate::support::plugin::{NOW, healthy, hermetic, scratch};
use crate::support::{FakeInstance, InstanceConfig};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `NOW` in Unix seconds.
const NOW_SECONDS: f64 = 1_795_316_400.0;

/// The eight families of the spec, in the order they are served.
const FAMILIES: [&str; 8] = [
    "storage_security_rating_score",
    "storage_security_vulnerabilities_total",
    "storage_security_hardenings_missing_total",
    "storage_security_failed_extra_checks_total",
    "storage_security_support_days_remaining",
    "storage_security_update_available",
    "storage_security_scan_duration_seconds",
    "storage_security_scrape_success",
];

/// Starts the exporter on a free loopback port, scanning `hosts` hermetically (the fakes' CA
/// trusted, bundled update data, no retries, no debug ports) with `extra` flags.
fn start(name: &str, hosts: &str, ca: &Path, extra: &[&str]) -> ExporterProcess {
    let mut args: Vec<String> = vec!["-H".into(), hosts.into()];
    args.extend(hermetic(ca));
    args.extend(["--prometheus-listen-port".into(), "0".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    ExporterProcess::start(
        Path::new(env!("CARGO_BIN_EXE_check-storage-security")),
        &args,
        &[("COS_NOW", NOW)],
        &scratch(&format!("exporter-{name}")),
    )
}

fn success(host: &str) -> String {
    format!("storage_security_scrape_success{{host=\"{host}\"}}")
}

/// One sample of a scrape.
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Every sample of a scrape, in order (label values as the exporter serves them: no escapes
/// in these tests' hosts).
fn all_samples(body: &str) -> Vec<Sample> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (name, labels) = series.split_once('{').unwrap_or((series, "}"));
            let labels = labels
                .trim_end_matches('}')
                .split("\",")
                .filter(|l| !l.is_empty())
                .filter_map(|l| l.split_once("=\""))
                .map(|(k, v)| (k.to_string(), v.trim_end_matches('"').to_string()))
                .collect();
            Some(Sample {
                name: name.to_string(),
                labels,
                value: value.parse().ok()?,
            })
        })
        .collect()
}

/// The samples of a family: labels and value.
fn samples(body: &str, family: &str) -> Vec<(BTreeMap<String, String>, f64)> {
    all_samples(body)
        .into_iter()
        .filter(|s| s.name == family)
        .map(|s| (s.labels, s.value))
        .collect()
}

/// Lint findings `promtool check metrics` reports for names the spec fixes (the same four as
/// in `tests/it/format_metrics.rs`); nothing else is accepted.
const SPEC_NAME_LINTS: [&str; 4] = [
    r#"storage_security_vulnerabilities_total non-counter metrics should not have "_total" suffix"#,
    r#"storage_security_hardenings_missing_total non-counter metrics should not have "_total" suffix"#,
    r#"storage_security_failed_extra_checks_total non-counter metrics should not have "_total" suffix"#,
    r#"storage_security_support_days_remaining use base unit "seconds" instead of "days""#,
];

/// A Debian binary of the `prometheus` package; the test fails, never skips, without it.
fn debian_binary(name: &str) -> PathBuf {
    let path = PathBuf::from("/usr/bin").join(name);
    assert!(
        path.is_file(),
        "{} is missing: install Debian's prometheus package with `make deps` \
         (packaging/ci-deps.sh)",
        path.display()
    );
    path
}

#[test]
fn the_first_scrape_serves_the_eight_metrics_of_every_target() {
    let lts = FakeInstance::start(healthy("4.0.8"));
    let current = FakeInstance::start(healthy("8.1.0"));
    let closed = format!("127.0.0.1:{}", crate::support::closed_port());
    let hosts = format!("{},{},{closed}", lts.host_port(), current.host_port());
    let exporter = start("eight", &hosts, &lts.ca_file(), &["--check-hardening"]);

    // Nothing but /metrics starts a round.
    let index = exporter.get("/");
    assert_eq!(index.status, 200);
    assert!(
        index.body.contains("<a href=\"/metrics\">"),
        "{}",
        index.body
    );
    assert_eq!(exporter.get("/healthz").status, 200);
    let missing = exporter.get("/metrics/x");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("content-type"), Some("application/json"));
    assert!(
        missing.body.contains("\"code\":\"not_found\""),
        "{}",
        missing.body
    );
    let post = exporter.request("POST", "/metrics");
    assert_eq!(
        (post.status, post.header("allow")),
        (405, Some("GET, HEAD"))
    );
    assert_eq!(lts.total_requests() + current.total_requests(), 0);

    let scrape = exporter.get("/metrics");
    assert_eq!(scrape.status, 200, "a failed scan is a value, not an error");
    assert_eq!(
        scrape.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let body = &scrape.body;
    for family in FAMILIES {
        assert!(
            body.contains(&format!("# HELP {family} ")),
            "{family}\n{body}"
        );
        assert!(
            body.contains(&format!("# TYPE {family} gauge\n")),
            "{family}"
        );
        for fake in [&lts, &current] {
            let host = fake.host_port();
            // 8.1.0's line has no support end in the bundled schedule: no value, as in perfdata.
            if family.ends_with("support_days_remaining") && fake.port() == current.port() {
                continue;
            }
            assert!(
                samples(body, family)
                    .iter()
                    .any(|(labels, _)| labels.get("host") == Some(&host)),
                "{family} of {host}\n{body}"
            );
        }
    }
    let ratings = samples(body, "storage_security_rating_score");
    let (labels, rating) = ratings
        .iter()
        .find(|(l, _)| l.get("host") == Some(&lts.host_port()))
        .unwrap();
    assert_eq!(
        labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect::<Vec<_>>(),
        [
            ("domain", "127.0.0.1"),
            ("host", lts.host_port().as_str()),
            ("product", "OpenCloud"),
            ("version", "4.0.8"),
        ]
    );
    assert!((0.0..=5.0).contains(rating));
    // Only the rating carries more than the host.
    for family in &FAMILIES[1..] {
        assert!(
            samples(body, family).iter().all(|(l, _)| l.len() == 1),
            "{family}\n{body}"
        );
    }
    assert_eq!(scrape.sample(&success(&lts.host_port())), Some(1.0));
    assert_eq!(scrape.sample(&success(&current.host_port())), Some(1.0));
    // The closed port: its scrape success, its duration, nothing else.
    assert_eq!(scrape.sample(&success(&closed)), Some(0.0));
    let of_closed: Vec<&str> = body
        .lines()
        .filter(|l| l.contains(&format!("host=\"{closed}\"")))
        .collect();
    assert_eq!(of_closed.len(), 2, "{of_closed:?}");
    // The exporter's own families.
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        scrape.sample(&format!(
            "storage_security_exporter_build_info{{version=\"{version}\"}}"
        )),
        Some(1.0)
    );
    assert_eq!(
        scrape.sample("storage_security_exporter_targets"),
        Some(3.0)
    );
    assert_eq!(
        scrape.sample("storage_security_exporter_rounds_total"),
        Some(1.0)
    );
    assert_eq!(
        scrape.sample("storage_security_exporter_last_round_timestamp_seconds"),
        Some(NOW_SECONDS),
        "the report clock is pinned"
    );
    assert!(body.contains("# TYPE storage_security_exporter_rounds_total counter\n"));

    // HEAD: the same head, no body, no second round.
    let head = exporter.request("HEAD", "/metrics");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert!(head.header("content-length").is_some_and(|n| n != "0"));
    let stderr = exporter.wait_stderr("GET /metrics 200 ", Duration::from_secs(5));
    assert!(
        stderr.contains("exporter: round 1: 3 target(s) in "),
        "{stderr}"
    );
    assert!(!stderr.contains("round 2"), "{stderr}");
    assert!(
        stderr.contains("GET /metrics 200 "),
        "one log line per request: {stderr}"
    );
}

#[test]
fn promtool_accepts_a_live_scrape() {
    let lts = FakeInstance::start(healthy("4.0.8"));
    let old = FakeInstance::start(InstanceConfig::default().version("4.0.0"));
    let closed = format!("127.0.0.1:{}", crate::support::closed_port());
    let hosts = format!("{},{},{closed}", lts.host_port(), old.host_port());
    let exporter = start("promtool", &hosts, &lts.ca_file(), &["--check-hardening"]);
    let scrape = exporter.get("/metrics");
    assert_eq!(scrape.status, 200);
    let mut child = Command::new(debian_binary("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(scrape.body.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let report = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => {}
        // 3: lint findings only, the exposition itself parsed.
        Some(3) => {
            for finding in report.lines().filter(|l| !l.trim().is_empty()) {
                assert!(
                    SPEC_NAME_LINTS.contains(&finding),
                    "promtool: {finding}\n{}",
                    scrape.body
                );
            }
        }
        other => panic!(
            "promtool check metrics failed ({other:?}): {report}\n{}",
            scrape.body
        ),
    }
}

#[test]
fn later_scrapes_answer_at_once_while_rounds_follow_the_interval_one_at_a_time() {
    let status_requests = |fake: &FakeInstance| {
        fake.requests()
            .iter()
            .filter(|r| r.path() == "/status.php")
            .count()
    };
    // What one scan asks of /status.php, learnt from a single run.
    let reference = FakeInstance::start(healthy("8.1.0"));
    let once = crate::support::plugin::scan(
        "exporter-rounds-once",
        &reference.host_port(),
        &reference,
        &[],
    );
    assert_eq!(once.code, 0, "{}", once.stdout);
    let per_round = status_requests(&reference);
    assert!(per_round > 0);
    // Every answer 20 ms late: a scan takes a good part of the 1 s interval.
    let fake = FakeInstance::start(healthy("8.1.0").delay(Duration::from_millis(20)));
    let exporter = start(
        "rounds",
        &fake.host_port(),
        &fake.ca_file(),
        &["--scrape-interval", "1"],
    );
    let first_asked = Instant::now();
    let first = exporter.get("/metrics");
    assert_eq!(
        first.sample("storage_security_exporter_rounds_total"),
        Some(1.0)
    );
    let scan = first
        .sample(&format!(
            "storage_security_scan_duration_seconds{{host=\"{}\"}}",
            fake.host_port()
        ))
        .expect("the scan's duration");
    assert!(scan > 0.1, "a scan took {scan} s: retune the delay");
    let mut took = Vec::new();
    let (rounds, counted) = loop {
        // Counted first: a round completed after the count is not in it.
        let counted = status_requests(&fake);
        let scrape = exporter.get("/metrics");
        took.push(scrape.took);
        let rounds = scrape
            .sample("storage_security_exporter_rounds_total")
            .unwrap() as usize;
        // The completed rounds, and at most one in flight.
        assert!(
            counted <= per_round * (rounds + 1),
            "{counted} status requests after {rounds} rounds of {per_round}"
        );
        if rounds >= 3 {
            break (rounds, counted);
        }
        assert!(
            first_asked.elapsed() < Duration::from_secs(20),
            "rounds stalled"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Three rounds started at 0, 1 and 2 s: not sooner.
    let elapsed = first_asked.elapsed();
    assert!(elapsed >= Duration::from_millis(1900), "{elapsed:?}");
    assert!(
        counted >= per_round * rounds,
        "{counted} of {per_round} a round"
    );
    // Scrapes while scans ran answered from the last round, not after the scan.
    took.sort();
    let median = took[took.len() / 2];
    assert!(took.len() > 20, "{took:?}");
    assert!(
        median < Duration::from_secs_f64(scan / 4.0),
        "median scrape {median:?}, a scan {scan} s"
    );
    let stderr = exporter.wait_stderr("exporter: round 3: ", Duration::from_secs(5));
    assert!(
        stderr.contains("exporter: round 3: 1 target(s) in "),
        "{stderr}"
    );
}

#[test]
fn fifty_scrapers_at_once_all_get_the_metrics_and_none_a_reset() {
    // `ab -c 50 -n 1000` saw connection resets after 15 requests: four HTTP workers and
    // sixteen queue places, and each connection beyond them closed with its request unread,
    // which resets it. Answers from memory are cheap: fifty scrapers at once all get them.
    let fake = FakeInstance::start(healthy("8.1.0"));
    let exporter = start("load", &fake.host_port(), &fake.ca_file(), &[]);
    // The first round is done: from now on every scrape answers from memory.
    assert_eq!(exporter.get("/metrics").status, 200);
    let addr = exporter.addr;
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let scrapers: Vec<_> = (0..50)
            .map(|_| {
                scope.spawn(move || {
                    // `request` panics on a reset.
                    (0..20)
                        .map(|_| crate::support::exporter::request(addr, "GET", "/metrics").status)
                        .collect::<Vec<u16>>()
                })
            })
            .collect();
        scrapers
            .into_iter()
            .flat_map(|s| s.join().expect("a scraper saw its connection reset"))
            .collect()
    });
    assert_eq!(statuses.len(), 1000);
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    // The operator's tool, where it is installed (apache2-utils).
    if let Ok(out) = Command::new("ab")
        .args(["-q", "-c", "50", "-n", "1000"])
        .arg(format!("http://{addr}/metrics"))
        .output()
    {
        let report = String::from_utf8_lossy(&out.stdout);
        let errors = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{report}{errors}");
        assert!(report.contains("Complete requests:      1000"), "{report}");
        assert!(report.contains("Failed requests:        0"), "{report}");
        assert!(!report.contains("Non-2xx"), "{report}");
    }
}

#[test]
fn a_dead_target_costs_its_round_one_connect() {
    // Nothing listens: a refused connection is not retried (the spec retries timeouts, resets
    // and 5xx), so the round does not wait 1 s + 2 s of backoff at the defaults.
    let dead = format!("127.0.0.1:{}", crate::support::closed_port());
    let exporter = start(
        "dead",
        &dead,
        &crate::support::certs::ca_file(),
        &["--retries", "2", "--backoff-factor", "0.5"],
    );
    let scrape = exporter.get("/metrics");
    assert_eq!(scrape.sample(&success(&dead)), Some(0.0), "{}", scrape.body);
    let took = scrape
        .sample("storage_security_exporter_last_round_duration_seconds")
        .expect("the first round completed");
    assert!(took < 1.0, "the round took {took} s");
}

/// Issue 31, item 3: the first scrape starts the first round, so what a browser marks as
/// another site's request (an `<img src>`: `Sec-Fetch-Site: cross-site`; a sandboxed frame:
/// `Origin: null`) is refused with 403 and starts nothing; Prometheus (no such header) and the
/// operator's own navigation scrape as before.
#[test]
fn another_sites_page_cannot_start_a_round() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let exporter = start("cross-site", &fake.host_port(), &fake.ca_file(), &[]);
    for marks in [
        &[("Sec-Fetch-Site", "cross-site")][..],
        &[("Sec-Fetch-Site", "same-site")][..],
        &[("Origin", "null")][..],
    ] {
        let refused = exporter.request_with("GET", "/metrics", marks);
        assert_eq!(refused.status, 403, "{marks:?}: {}", refused.body);
    }
    assert_eq!(fake.request_count(), 0, "no round started");
    let own = exporter.request_with("GET", "/metrics", &[("Sec-Fetch-Site", "none")]);
    assert_eq!(own.status, 200);
    assert_eq!(
        own.sample(&success(&fake.host_port())),
        Some(1.0),
        "{}",
        own.body
    );
    // The page and the health check start nothing: another site may link to them.
    let linked = exporter.request_with("GET", "/healthz", &[("Sec-Fetch-Site", "cross-site")]);
    assert_eq!(linked.status, 200);
}

#[test]
fn the_first_scrape_answers_after_8_s_with_what_is_done_and_sigterm_stops_it() {
    let fast = FakeInstance::start(healthy("8.1.0"));
    // Accepts and never answers within the test: its scan outlasts the first scrape's wait.
    let silent = FakeInstance::start(InstanceConfig::default().delay(Duration::from_secs(60)));
    let hosts = format!("{},{}", fast.host_port(), silent.host_port());
    let mut exporter = start(
        "first-wait",
        &hosts,
        &fast.ca_file(),
        &["--timeout", "20", "--scrape-interval", "1"],
    );
    let first = exporter.get("/metrics");
    assert!(
        first.took >= Duration::from_millis(7900) && first.took < Duration::from_millis(9900),
        "the first scrape took {:?}",
        first.took
    );
    assert_eq!(first.status, 200);
    assert_eq!(first.sample(&success(&fast.host_port())), Some(1.0));
    assert!(
        first.body.contains(&format!(
            "storage_security_rating_score{{host=\"{}\"",
            fast.host_port()
        )),
        "{}",
        first.body
    );
    assert_eq!(first.sample(&success(&silent.host_port())), Some(0.0));
    assert_eq!(
        first.sample("storage_security_exporter_rounds_total"),
        Some(0.0)
    );
    assert!(!first.body.contains("last_round_timestamp"));
    // The next scrape does not wait again.
    let second = exporter.get("/metrics");
    assert!(second.took < Duration::from_secs(2), "{:?}", second.took);
    assert_eq!(second.sample(&success(&silent.host_port())), Some(0.0));
    // SIGTERM while the round is still in flight: exit 0 at once, nothing on stdout.
    let asked = Instant::now();
    let (code, stdout) = exporter.terminate(Duration::from_secs(10));
    assert_eq!(code, Some(0), "stdout: {stdout}\n{}", exporter.stderr());
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(stdout, "");
    let stderr = exporter.wait_stderr("exporter: stopped\n", Duration::from_secs(5));
    assert!(stderr.ends_with("exporter: stopped\n"), "{stderr}");
}

#[test]
fn a_non_loopback_address_is_announced_and_a_taken_port_refused() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let exporter = start(
        "wildcard",
        &fake.host_port(),
        &fake.ca_file(),
        &["--prometheus-listen-addr", "0.0.0.0"],
    );
    assert!(exporter.addr.ip().is_unspecified());
    let warning = format!(
        "exporter: warning: {} is reachable from other hosts; anyone who can connect reads the \
         targets' names, versions and ratings",
        exporter.addr
    );
    let stderr = exporter.wait_stderr(&warning, Duration::from_secs(10));
    assert!(stderr.contains(&warning), "{stderr}");
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], exporter.addr.port()));
    assert_eq!(
        crate::support::exporter::request(loopback, "GET", "/healthz").status,
        200
    );
    // The port is taken now: the exporter does not start, and says what to change.
    let taken = exporter.addr.port().to_string();
    let run = crate::support::plugin::run(
        "exporter-taken",
        &[
            "-H",
            &fake.host_port(),
            "--prometheus-listen-addr",
            "0.0.0.0",
            "--prometheus-listen-port",
            &taken,
        ],
        &[],
    );
    assert_eq!(run.code, 3);
    assert!(
        run.stdout.starts_with(&format!(
            "UNKNOWN: the metrics exporter cannot listen on 0.0.0.0:{taken}: "
        )) && run
            .stdout
            .ends_with("; choose another --prometheus-listen-port or --prometheus-listen-addr\n"),
        "{}",
        run.stdout
    );
}

/// A Prometheus server run by the test: killed and reaped on drop.
struct Prometheus {
    child: Child,
    log: PathBuf,
    addr: std::net::SocketAddr,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Starts Debian's `/usr/bin/prometheus` on a free loopback port, scraping `target` every
    /// second, its data and log in `dir`.
    fn start(dir: &Path, target: std::net::SocketAddr) -> Prometheus {
        let binary = debian_binary("prometheus");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: storage_security\n    scrape_interval: 1s\n    \
                 scrape_timeout: 1s\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let addr = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap()
        };
        let log = dir.join("prometheus.log");
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("prometheus.out")).unwrap())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start prometheus");
        Prometheus { child, log, addr }
    }

    /// An instant query through the HTTP API, or why there is no answer yet.
    fn query(&self, query: &str) -> Result<serde_json::Value, String> {
        let stream = std::net::TcpStream::connect_timeout(&self.addr, Duration::from_secs(1))
            .map_err(|e| format!("connect: {e}"))?;
        drop(stream);
        let answer = crate::support::exporter::request(
            self.addr,
            "GET",
            &format!("/api/v1/query?query={query}"),
        );
        if answer.status != 200 {
            return Err(format!("HTTP {}: {}", answer.status, answer.body));
        }
        serde_json::from_str(&answer.body).map_err(|e| format!("{e}: {}", answer.body))
    }

    fn diagnosis(&self) -> String {
        let targets = crate::support::exporter::request(self.addr, "GET", "/api/v1/targets").body;
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        format!("targets: {targets}\nlog (last lines first): {tail:#?}")
    }
}

#[test]
fn a_real_prometheus_server_reads_the_rating_back_through_its_query_api() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let exporter = start(
        "prometheus",
        &fake.host_port(),
        &fake.ca_file(),
        &["--scrape-interval", "1"],
    );
    let dir = scratch("exporter-prometheus-server");
    let prometheus = Prometheus::start(&dir, exporter.addr);
    let until = Instant::now() + Duration::from_secs(30);
    let sample = loop {
        match prometheus.query("storage_security_rating_score") {
            Ok(doc)
                if doc["data"]["result"]
                    .as_array()
                    .is_some_and(|r| !r.is_empty()) =>
            {
                break doc["data"]["result"][0].clone();
            }
            Ok(_) | Err(_) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(250));
            }
            Ok(doc) => panic!(
                "no rating in Prometheus after 30 s: {doc}\n{}",
                prometheus.diagnosis()
            ),
            Err(e) => panic!(
                "Prometheus did not answer in 30 s: {e}\n{}",
                prometheus.diagnosis()
            ),
        }
    };
    let metric = &sample["metric"];
    assert_eq!(metric["__name__"], "storage_security_rating_score");
    assert_eq!(metric["host"], fake.host_port().as_str());
    assert_eq!(metric["domain"], "127.0.0.1");
    assert_eq!(metric["product"], "OpenCloud");
    assert_eq!(metric["version"], "8.1.0");
    assert_eq!(metric["job"], "storage_security");
    assert_eq!(metric["instance"], exporter.addr.to_string().as_str());
    // The value Prometheus stored is the one the exporter serves.
    let served = exporter
        .get("/metrics")
        .sample(&format!(
            "storage_security_rating_score{{host=\"{0}\",domain=\"127.0.0.1\",product=\"OpenCloud\",version=\"8.1.0\"}}",
            fake.host_port()
        ))
        .expect("the served rating");
    assert_eq!(sample["value"][1], served.to_string().as_str());
    assert_eq!(served, 5.0, "a healthy 8.1.0 is rated A+");
}

#[test]
fn rounds_share_what_they_learn_so_the_release_feed_is_asked_once_per_window() {
    let fake = FakeInstance::start(healthy("8.1.0"));
    let feed = crate::support::FeedServer::github_releases(&["v8.1.0", "v7.2.4"]);
    let url = feed.url("/releases");
    let mut args: Vec<String> = vec!["-H".into(), fake.host_port()];
    args.extend(hermetic(&fake.ca_file()));
    args.extend(
        [
            "--prometheus-listen-port",
            "0",
            "--scrape-interval",
            "0.2",
            "--update-source",
            "feed",
            // No usable state directory: only the rounds' shared memory can spare the feed.
            "--state-dir",
            "/proc/no-such-state-dir",
        ]
        .map(String::from),
    );
    let exporter = ExporterProcess::start(
        Path::new(env!("CARGO_BIN_EXE_check-storage-security")),
        &args,
        &[("COS_NOW", NOW), ("COS_RELEASES_URL", url.as_str())],
        &scratch("exporter-memory"),
    );
    let limit = Instant::now() + Duration::from_secs(30);
    let rounds = loop {
        let rounds = exporter
            .get("/metrics")
            .sample("storage_security_exporter_rounds_total")
            .unwrap_or(0.0);
        if rounds >= 3.0 || Instant::now() > limit {
            break rounds;
        }
    };
    assert!(rounds >= 3.0, "only {rounds} rounds in 30 s");
    assert_eq!(feed.requests().len(), 1, "{:?}", feed.requests());
}

// --- The shipped alerting rules ----------------------------------------------------------

/// The alerting rules the package ships, in the repository.
const ALERT_RULES: &str = "packaging/prometheus/storage-security.rules.yml";

/// The job name the rules expect the exporter to be scraped under (the scrape config in
/// docs/service-and-exporter.md).
const JOB: &str = "storage_security";

/// The alerts of the rules file, in its order.
const ALERTS: [&str; 7] = [
    "StorageSecurityExporterDown",
    "StorageSecurityScanFailing",
    "StorageSecurityRatingLow",
    "StorageSecurityRatingCritical",
    "StorageSecurityNewVulnerability",
    "StorageSecuritySupportEndingSoon",
    "StorageSecurityEndOfLife",
];

fn alert_rules_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(ALERT_RULES)
}

/// The rules of the shipped file, as parsed YAML.
fn alert_rules() -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(alert_rules_path()).unwrap();
    let doc: serde_json::Value =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{ALERT_RULES}: {e}"));
    doc["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .flat_map(|group| group["rules"].as_array().expect("rules").clone())
        .collect()
}

/// The template forms the annotations may use: what [`render_annotation`] renders as
/// Prometheus does. Anything else in `{{ }}` is refused by the test of the file.
fn template_forms(text: &str) -> Vec<&str> {
    text.match_indices("{{")
        .map(|(at, _)| {
            let rest = &text[at..];
            &rest[..rest.find("}}").map_or(rest.len(), |end| end + 2)]
        })
        .collect()
}

/// An annotation as Prometheus renders it for an alert of a series with `labels` and `value`:
/// `{{ $labels.NAME }}` is the label, `{{ $value }}` the value as Go's `%v` prints it (`3`,
/// `-3`, `0.5`, as Rust does for these values).
fn render_annotation(template: &str, labels: &BTreeMap<String, String>, value: f64) -> String {
    let mut text = template.replace("{{ $value }}", &value.to_string());
    for (name, label) in labels {
        text = text.replace(&format!("{{{{ $labels.{name} }}}}"), label);
    }
    text
}

#[test]
fn promtool_checks_the_shipped_alerting_rules() {
    let output = Command::new(debian_binary("promtool"))
        .args(["check", "rules"])
        .arg(alert_rules_path())
        .output()
        .expect("run promtool");
    let report = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success()
            && report.contains(&format!("SUCCESS: {} rules found", ALERTS.len())),
        "promtool check rules: {report}"
    );
    let rules = alert_rules();
    let names: Vec<&str> = rules.iter().filter_map(|r| r["alert"].as_str()).collect();
    assert_eq!(names, ALERTS, "only alerts, each tested below");
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/service-and-exporter.md"),
    )
    .unwrap();
    for alert in ALERTS {
        assert!(
            guide.contains(&format!("| `{alert}` |")),
            "the alerts table of docs/service-and-exporter.md lacks {alert}"
        );
    }
    for rule in &rules {
        let name = rule["alert"].as_str().unwrap();
        assert!(
            rule["for"].as_str().is_some_and(|d| !d.is_empty()),
            "{name} has no for:"
        );
        assert!(
            matches!(
                rule["labels"]["severity"].as_str(),
                Some("warning" | "critical")
            ),
            "{name}: {}",
            rule["labels"]
        );
        // Each names what it is about: the host, or the exporter's address when it is down.
        let subject = if name == "StorageSecurityExporterDown" {
            "{{ $labels.instance }}"
        } else {
            "{{ $labels.host }}"
        };
        let annotations = rule["annotations"].as_object().expect("annotations");
        assert_eq!(
            annotations.keys().collect::<Vec<_>>(),
            ["description", "summary"],
            "{name}"
        );
        for (key, text) in annotations {
            let text = text.as_str().unwrap();
            assert!(text.contains(subject), "{name} {key}: {text}");
            for form in template_forms(text) {
                let label = form
                    .strip_prefix("{{ $labels.")
                    .and_then(|f| f.strip_suffix(" }}"));
                assert!(
                    form == "{{ $value }}"
                        || label.is_some_and(|l| l.bytes().all(|b| b.is_ascii_lowercase())),
                    "{name} {key}: {form}"
                );
            }
        }
    }
}

/// A series as Prometheus stores a sample of the exporter: its labels and the scrape's `job`
/// and `instance`.
fn stored_labels(sample: &Sample, instance: &str) -> BTreeMap<String, String> {
    let mut labels = sample.labels.clone();
    labels.insert("job".into(), JOB.into());
    labels.insert("instance".into(), instance.into());
    labels
}

/// A series selector in the notation of `promtool test rules`' input series.
fn selector(name: &str, labels: &BTreeMap<String, String>) -> String {
    let labels: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    format!("{name}{{{}}}", labels.join(","))
}

/// An alert a scenario expects to fire: its rule, the labels of the series that fires it, and
/// the value.
struct Firing {
    alert: &'static str,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A scenario of `promtool test rules`: input series (selector, values every minute) and, at
/// each evaluation minute, the alerts that fire; every other alert must not.
struct Scenario {
    name: &'static str,
    series: Vec<(String, String)>,
    evals: Vec<(u32, Vec<Firing>)>,
}

impl Firing {
    /// The alert as promtool expects it: the series' labels and the rule's, its annotations
    /// rendered.
    fn expected(&self, rules: &[serde_json::Value]) -> serde_json::Value {
        let rule = rules
            .iter()
            .find(|r| r["alert"] == self.alert)
            .unwrap_or_else(|| panic!("no alert {}", self.alert));
        let mut labels = self.labels.clone();
        for (name, value) in rule["labels"].as_object().unwrap() {
            labels.insert(name.clone(), value.as_str().unwrap().to_string());
        }
        let annotations: BTreeMap<&String, String> = rule["annotations"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(key, text)| {
                let text = render_annotation(text.as_str().unwrap(), &self.labels, self.value);
                (key, text)
            })
            .collect();
        serde_json::json!({"exp_labels": labels, "exp_annotations": annotations})
    }
}

/// The unit-test file of `promtool test rules` (JSON, which is YAML) for the shipped rules.
fn promtool_unit_tests(scenarios: &[Scenario]) -> serde_json::Value {
    let rules = alert_rules();
    let rules = rules.as_slice();
    let tests: Vec<serde_json::Value> = scenarios
        .iter()
        .map(|scenario| {
            let input: Vec<serde_json::Value> = scenario
                .series
                .iter()
                .map(|(series, values)| serde_json::json!({"series": series, "values": values}))
                .collect();
            let checks: Vec<serde_json::Value> = scenario
                .evals
                .iter()
                .flat_map(|(minute, firing)| {
                    ALERTS.iter().map(move |alert| {
                        let expected: Vec<serde_json::Value> = firing
                            .iter()
                            .filter(|f| f.alert == *alert)
                            .map(|f| f.expected(rules))
                            .collect();
                        serde_json::json!({
                            "eval_time": format!("{minute}m"),
                            "alertname": alert,
                            "exp_alerts": expected,
                        })
                    })
                })
                .collect();
            serde_json::json!({
                "name": scenario.name,
                "interval": "1m",
                "input_series": input,
                "alert_rule_test": checks,
            })
        })
        .collect();
    serde_json::json!({
        "rule_files": [alert_rules_path()],
        "evaluation_interval": "1m",
        "tests": tests,
    })
}

#[test]
fn the_shipped_alerts_fire_on_the_series_of_a_live_scrape_and_only_then() {
    // A healthy LTS instance, one whose line ended (3.7, 2025-12-15), and a closed port.
    let supported = FakeInstance::start(healthy("4.0.8"));
    let ended = FakeInstance::start(healthy("3.7.0"));
    let closed = format!("127.0.0.1:{}", crate::support::closed_port());
    let hosts = format!("{},{},{closed}", supported.host_port(), ended.host_port());
    let exporter = start("alerts", &hosts, &supported.ca_file(), &[]);
    let scrape = exporter.get("/metrics");
    assert_eq!(scrape.status, 200);
    let samples = all_samples(&scrape.body);
    let instance = exporter.addr.to_string();
    let of = |host: &str| -> Vec<&Sample> {
        samples
            .iter()
            .filter(|s| s.labels.get("host").map(String::as_str) == Some(host))
            .collect()
    };
    let find = |host: &str, family: &str| -> &Sample {
        samples
            .iter()
            .find(|s| s.name == family && s.labels.get("host").map(String::as_str) == Some(host))
            .unwrap_or_else(|| panic!("no {family} of {host}\n{}", scrape.body))
    };
    let firing = |alert: &'static str, sample: &Sample, value: f64| Firing {
        alert,
        labels: stored_labels(sample, &instance),
        value,
    };
    // Prometheus' own series of the scrape.
    let up_labels = BTreeMap::from([
        ("instance".to_string(), instance.clone()),
        ("job".to_string(), JOB.to_string()),
    ]);
    let up = |values: &str| (selector("up", &up_labels), values.to_string());
    // A host's series as served, every minute for `minutes`, but for the `scripted` families.
    let held = |host: &str, minutes: u32, scripted: &[(&str, &str)]| {
        of(host)
            .into_iter()
            .map(|s| {
                let values = scripted
                    .iter()
                    .find(|(family, _)| *family == s.name)
                    .map_or_else(|| format!("{}x{minutes}", s.value), |(_, v)| v.to_string());
                (selector(&s.name, &stored_labels(s, &instance)), values)
            })
            .collect::<Vec<_>>()
    };

    // What the scrape says, which the scenarios rest on.
    let (good, eol) = (supported.host_port(), ended.host_port());
    let rating = "storage_security_rating_score";
    let vulnerabilities = "storage_security_vulnerabilities_total";
    let days = "storage_security_support_days_remaining";
    let success = "storage_security_scrape_success";
    assert_eq!(find(&good, rating).value, 5.0, "{}", scrape.body);
    assert_eq!(find(&good, vulnerabilities).value, 0.0);
    assert!(find(&good, days).value > 30.0, "{}", scrape.body);
    assert_eq!(find(&eol, rating).value, 0.0, "{}", scrape.body);
    assert!(find(&eol, days).value < 0.0, "{}", scrape.body);
    assert_eq!(find(&closed, success).value, 0.0);
    assert_eq!(of(&closed).len(), 2, "success and duration only");

    let two_days = 2 * 24 * 60;
    let (good_rating, eol_rating) = (find(&good, rating), find(&eol, rating));
    let (good_days, eol_days) = (find(&good, days), find(&eol, days));
    let good_vulnerabilities = find(&good, vulnerabilities);
    let scenarios = [
        Scenario {
            // Every series of the scrape, the exporter's own too, held as served: the healthy
            // host never alerts, the others once their for: has passed.
            name: "a live scrape held for two days",
            series: samples
                .iter()
                .map(|s| {
                    let values = format!("{}x{two_days}", s.value);
                    (selector(&s.name, &stored_labels(s, &instance)), values)
                })
                .chain([up(&format!("1x{two_days}"))])
                .collect(),
            evals: vec![
                (10, vec![]),
                (
                    30,
                    vec![firing("StorageSecurityRatingCritical", eol_rating, 0.0)],
                ),
                (
                    24 * 60,
                    vec![
                        firing("StorageSecurityRatingCritical", eol_rating, 0.0),
                        firing("StorageSecurityEndOfLife", eol_days, eol_days.value),
                        firing("StorageSecurityScanFailing", find(&closed, success), 0.0),
                    ],
                ),
            ],
        },
        Scenario {
            // The exporter stops answering: its series end, Prometheus records up 0.
            name: "the exporter goes down",
            series: held(&good, 29, &[])
                .into_iter()
                .map(|(series, values)| (series, values + " _x30"))
                .chain([up("1x29 0x30")])
                .collect(),
            evals: vec![
                (35, vec![]),
                (
                    45,
                    vec![Firing {
                        alert: "StorageSecurityExporterDown",
                        labels: up_labels.clone(),
                        value: 0.0,
                    }],
                ),
            ],
        },
        Scenario {
            // 4 (A) for two hours, 3 (C) for two, then 1 (E).
            name: "the rating falls to the warning, then to the critical level",
            series: held(&good, 300, &[(rating, "4x119 3x119 1x60")])
                .into_iter()
                .chain([up("1x300")])
                .collect(),
            evals: vec![
                (110, vec![]),
                (170, vec![]),
                (
                    190,
                    vec![firing("StorageSecurityRatingLow", good_rating, 3.0)],
                ),
                (245, vec![]),
                (
                    255,
                    vec![firing("StorageSecurityRatingCritical", good_rating, 1.0)],
                ),
            ],
        },
        Scenario {
            // Two advisories published for the running version at minute 120.
            name: "new vulnerabilities",
            series: held(&good, 1680, &[(vulnerabilities, "0x119 2x1560")])
                .into_iter()
                .chain([up("1x1680")])
                .collect(),
            evals: vec![
                (110, vec![]),
                (122, vec![]),
                (
                    126,
                    vec![firing(
                        "StorageSecurityNewVulnerability",
                        good_vulnerabilities,
                        2.0,
                    )],
                ),
                (
                    1500,
                    vec![firing(
                        "StorageSecurityNewVulnerability",
                        good_vulnerabilities,
                        2.0,
                    )],
                ),
                // A day after the rise, the higher count is the day's lowest.
                (1570, vec![]),
            ],
        },
        Scenario {
            // Upgrades fix some advisories, then all.
            name: "fewer vulnerabilities",
            series: held(&good, 360, &[(vulnerabilities, "3x119 1x119 0x120")])
                .into_iter()
                .chain([up("1x360")])
                .collect(),
            evals: vec![(130, vec![]), (250, vec![]), (355, vec![])],
        },
        Scenario {
            // Days left, two hours each: 45, 30, 1, the end-of-life day 0, then 3 days past.
            name: "support runs out",
            series: held(&good, 600, &[(days, "45x119 30x119 1x119 0x119 -3x120")])
                .into_iter()
                .chain([up("1x600")])
                .collect(),
            evals: vec![
                (100, vec![]),
                (170, vec![]),
                (
                    230,
                    vec![firing("StorageSecuritySupportEndingSoon", good_days, 30.0)],
                ),
                (
                    350,
                    vec![firing("StorageSecuritySupportEndingSoon", good_days, 1.0)],
                ),
                (400, vec![]),
                (
                    430,
                    vec![firing("StorageSecurityEndOfLife", good_days, 0.0)],
                ),
                (
                    590,
                    vec![firing("StorageSecurityEndOfLife", good_days, -3.0)],
                ),
            ],
        },
    ];
    let dir = scratch("exporter-alert-rules");
    let file = dir.join("storage-security.rules.test.yml");
    let tests = promtool_unit_tests(&scenarios);
    std::fs::write(&file, serde_json::to_string_pretty(&tests).unwrap()).unwrap();
    let output = Command::new(debian_binary("promtool"))
        .args(["test", "rules"])
        .arg(&file)
        .output()
        .expect("run promtool");
    assert!(
        output.status.success(),
        "promtool test rules {}:\n{}{}",
        file.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
