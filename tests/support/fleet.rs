//! A fake fleet: thousands of fake instances in one process, each on an address of its own in
//! 127.0.0.0/8 (one port for all, plain HTTP), each answering like a real OpenCloud of the version its
//! [`Shape`] gives it (the fake instance's captured answers, `instance.rs`), and counting the
//! requests it received. What the fleet measurements run against (`make soak`, the fleet
//! tests); one fake instance stays the reference for how an instance answers.
//!
//! Instances of one shape share one handler (the templates are held once per shape, not per
//! instance) and keep no requests, only their count, so ten thousand cost tens of MiB. Each
//! listener has its accept thread, and each connection a thread of its own while it lasts.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use super::instance::shared_handler;
use super::server::Server;
use super::{InstanceConfig, TlsMode};

/// The public URL the instances write into their bodies (issuer, endpoints): one origin for
/// the whole fleet, as one proxy in front of many would.
const PUBLIC_URL: &str = "http://localhost";

/// The most instances of one fleet: addresses from 127.1.0.1 on, 250 to a /24.
pub const MAX_INSTANCES: usize = 100_000;

/// How long a slow instance waits before each answer.
pub const SLOW_DELAY: Duration = Duration::from_millis(500);

/// How one instance answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    /// The newest rolling release.
    Current,
    /// A patch behind on a supported line (production 7.2).
    Behind,
    /// A line out of support (rolling 7.1).
    EndOfLife,
    /// A release with a known advisory (4.0.2: GHSA-vf5j-r2hw-2hrw, fixed in 4.0.3).
    Advisory,
    /// The newest release, its demo accounts left in place.
    DemoAccounts,
    /// The newest release, every answer [`SLOW_DELAY`] late.
    Slow,
    /// Accepts and reads, never answers: each request costs the scanner its timeout.
    Silent,
}

impl Shape {
    pub const ALL: [Shape; 7] = [
        Shape::Current,
        Shape::Behind,
        Shape::EndOfLife,
        Shape::Advisory,
        Shape::DemoAccounts,
        Shape::Slow,
        Shape::Silent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Current => "current",
            Shape::Behind => "behind",
            Shape::EndOfLife => "eol",
            Shape::Advisory => "advisory",
            Shape::DemoAccounts => "demo",
            Shape::Slow => "slow",
            Shape::Silent => "silent",
        }
    }

    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The version it reports.
    pub fn version(self) -> &'static str {
        match self {
            Shape::Behind => "7.2.3",
            Shape::EndOfLife => "7.1.0",
            Shape::Advisory => "4.0.2",
            _ => "8.1.0",
        }
    }

    fn config(self) -> InstanceConfig {
        let config = InstanceConfig::default()
            .tls(TlsMode::Plain)
            .version(self.version());
        match self {
            Shape::DemoAccounts => config.demo_users(true),
            Shape::Slow => config.delay(SLOW_DELAY),
            // Longer than any scan waits: the client gives up first.
            Shape::Silent => config.delay(Duration::from_secs(3600)),
            _ => config,
        }
    }
}

/// How many of each shape, as weights: `current=60,behind=15,...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix(pub Vec<(Shape, usize)>);

impl Mix {
    /// A night's fleet: most current, some behind, a few out of support, with advisories,
    /// with demo accounts or slow, one in a hundred silent.
    pub fn night() -> Mix {
        Mix(vec![
            (Shape::Current, 60),
            (Shape::Behind, 15),
            (Shape::EndOfLife, 8),
            (Shape::Advisory, 8),
            (Shape::DemoAccounts, 4),
            (Shape::Slow, 4),
            (Shape::Silent, 1),
        ])
    }

    /// Every instance alike.
    pub fn only(shape: Shape) -> Mix {
        Mix(vec![(shape, 1)])
    }

    /// `current=60,silent=10`: the weights of the shapes named (the others none).
    pub fn parse(text: &str) -> Result<Mix, String> {
        let mut weights = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?} is not shape=weight"))?;
            let shape = Shape::from_name(name.trim()).ok_or_else(|| {
                let names: Vec<&str> = Shape::ALL.iter().map(|s| s.name()).collect();
                format!("{name:?} is no shape; use {}", names.join(", "))
            })?;
            let weight = weight
                .trim()
                .parse()
                .map_err(|_| format!("{weight:?} is no whole number"))?;
            weights.push((shape, weight));
        }
        if weights.iter().all(|(_, w)| *w == 0) {
            return Err("the mix has no weight".into());
        }
        Ok(Mix(weights))
    }

    /// The shape of each of `size` instances, the shapes spread evenly through the fleet (so
    /// any stretch of it, and any `--concurrency` window, holds the mix).
    pub fn assign(&self, size: usize) -> Vec<Shape> {
        let total: usize = self.0.iter().map(|(_, w)| w).sum();
        let mut placed: Vec<(f64, Shape)> = Vec::with_capacity(size);
        for &(shape, weight) in &self.0 {
            // This shape's share of the fleet, placed at even steps.
            let count = (size * weight + total / 2) / total;
            for j in 0..count {
                placed.push(((j as f64 + 0.5) / count as f64, shape));
            }
        }
        placed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut shapes: Vec<Shape> = placed.into_iter().map(|(_, s)| s).collect();
        // Rounding may leave a few more or fewer: the heaviest shape makes up the difference.
        let heaviest = self.0.iter().max_by_key(|(_, w)| *w).map(|(s, _)| *s);
        shapes.resize(size, heaviest.unwrap_or(Shape::Current));
        shapes
    }
}

/// The address of instance `n`: 127.1.0.1, ..., 127.1.0.250, 127.1.1.1, ...
pub fn address(n: usize) -> IpAddr {
    let subnet = n / 250;
    IpAddr::V4(Ipv4Addr::new(
        127,
        1 + (subnet / 256) as u8,
        (subnet % 256) as u8,
        (n % 250 + 1) as u8,
    ))
}

/// A running fleet; its listeners stop on drop.
pub struct FakeFleet {
    instances: Vec<(Shape, Server)>,
}

impl FakeFleet {
    /// Starts `size` instances shaped by `mix`. Plain HTTP: the fake's certificates name
    /// localhost and 127.0.0.1, not the fleet's addresses.
    pub fn start(size: usize, mix: &Mix) -> std::io::Result<FakeFleet> {
        FakeFleet::start_from(0, size, mix)
    }

    /// Like [`FakeFleet::start`], its instances numbered from `first` (their addresses
    /// [`address`]`(first)` on): several processes serve one larger fleet, each within its
    /// open-file limit.
    pub fn start_from(first: usize, size: usize, mix: &Mix) -> std::io::Result<FakeFleet> {
        assert!(
            first + size <= MAX_INSTANCES,
            "at most {MAX_INSTANCES} instances"
        );
        let shapes = mix.assign(size);
        let handlers: Vec<(Shape, super::server::Handler)> = Shape::ALL
            .into_iter()
            .map(|shape| (shape, shared_handler(shape.config(), PUBLIC_URL)))
            .collect();
        let mut instances = Vec::with_capacity(size);
        // One port for every address: the first listener's, else a free one of its own.
        let mut port = 0;
        for (n, shape) in (first..).zip(shapes) {
            let handler = handlers
                .iter()
                .find(|(s, _)| *s == shape)
                .map(|(_, h)| h.clone())
                .expect("a handler per shape");
            let at = |port| SocketAddr::new(address(n), port);
            let server = Server::start(at(port), None, handler.clone())
                .or_else(|_| Server::start(at(0), None, handler))
                .map_err(|e| {
                    std::io::Error::new(e.kind(), format!("instance {n} at {}: {e}", at(port)))
                })?;
            server.set_recording(false);
            if port == 0 {
                port = server.addr().port();
            }
            instances.push((shape, server));
        }
        Ok(FakeFleet { instances })
    }

    pub fn len(&self) -> usize {
        self.instances.len()
    }

    /// Each instance's target, in fleet order: `http://127.1.0.1:PORT`.
    pub fn targets(&self) -> Vec<String> {
        self.instances
            .iter()
            .map(|(_, s)| format!("http://{}", s.addr()))
            .collect()
    }

    pub fn shapes(&self) -> Vec<Shape> {
        self.instances.iter().map(|(shape, _)| *shape).collect()
    }

    /// The requests each instance received so far, in fleet order.
    pub fn request_counts(&self) -> Vec<usize> {
        self.instances
            .iter()
            .map(|(_, s)| s.total_requests())
            .collect()
    }

    /// Writes the targets, one a line, as `--host-list` reads them.
    pub fn write_host_list(&self, path: &std::path::Path) -> std::io::Result<()> {
        let mut text = format!(
            "# a fake fleet of {} instances (tests/support/fleet.rs)\n",
            self.len()
        );
        for target in self.targets() {
            text.push_str(&target);
            text.push('\n');
        }
        std::fs::write(path, text)
    }
}
