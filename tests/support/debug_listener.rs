//! A fake proxy debug listener (the real one is `127.0.0.1:9205`): plain HTTP on its own
//! ephemeral port, replaying the captured `/healthz`, `/readyz`, `/metrics`, `/config` and the
//! 404 for `/debug/pprof/` (pprof off by default).

use std::net::SocketAddr;
use std::sync::Arc;

use super::fixtures::{RawResponse, http_date_now, replace_version};
use super::http::RecordedRequest;
use super::instance::{InstanceConfig, Product};
use super::server::{Action, Handler, Reply, Server};

/// A running debug listener; stops accepting on drop.
pub struct DebugListener {
    server: Server,
}

impl DebugListener {
    pub fn port(&self) -> u16 {
        self.server.addr().port()
    }

    /// `127.0.0.1:PORT`, or the address it was started on.
    pub fn host_port(&self) -> String {
        super::server::reachable(self.server.addr())
    }

    /// `http://127.0.0.1:PORT`
    pub fn base_url(&self) -> String {
        format!("http://{}", self.host_port())
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// Connections accepted and requests read so far.
    pub fn traffic(&self) -> super::server::Traffic {
        self.server.traffic()
    }

    pub fn request_count(&self) -> usize {
        self.server.request_count()
    }
}

/// Starts a debug listener for the product and version of `config` on `127.0.0.1:0`.
/// Only `product` and `version` of the config are used.
pub fn start_debug_listener(config: &InstanceConfig) -> DebugListener {
    start_debug_listener_at(config, SocketAddr::from(([127, 0, 0, 1], 0)))
        .expect("start debug listener")
}

/// [`start_debug_listener`] on `bind` (the example's `--debug-port`, a real debug port).
pub fn start_debug_listener_at(
    config: &InstanceConfig,
    bind: SocketAddr,
) -> std::io::Result<DebugListener> {
    let version = config.effective_version();
    let captured = config.product.captured_version();
    let files: [(&str, &str); 5] = match config.product {
        Product::OpenCloud => [
            ("/healthz", "opencloud-4.0.0/debug/9205-healthz.txt"),
            ("/readyz", "opencloud-4.0.0/debug/9205-readyz.txt"),
            ("/metrics", "opencloud-4.0.0/debug/9205-metrics-head50.txt"),
            ("/config", "opencloud-4.0.0/debug/9205-config.txt"),
            ("404", "opencloud-4.0.0/debug/9205-debug-pprof.txt"),
        ],
        Product::InfiniteScale => [
            ("/healthz", "ocis-7.0.0/debug/proxy-9205-healthz.txt"),
            ("/readyz", "ocis-7.0.0/debug/proxy-9205-readyz.txt"),
            ("/metrics", "ocis-7.0.0/debug/proxy-9205-metrics.txt"),
            ("/config", "ocis-7.0.0/debug/proxy-9205-config.txt"),
            ("404", "ocis-7.0.0/debug/proxy-9205-debug_pprof.txt"),
        ],
    };
    let mut table: Vec<(&'static str, RawResponse)> = Vec::new();
    for (path, file) in files {
        let mut resp = RawResponse::load(file);
        if path == "/metrics" && config.product == Product::OpenCloud {
            // The capture is the first 50 lines; append the captured build_info series.
            let extra = std::fs::read_to_string(
                super::fixtures::fixtures_dir()
                    .join("opencloud-4.0.0/debug/9205-metrics-build_info-lines.txt"),
            )
            .unwrap_or_default();
            let mut body = resp.body_str();
            if !body.ends_with('\n') {
                body.push('\n');
            }
            body.push_str(&extra);
            resp.set_body(body);
        }
        for (n, v) in &mut resp.headers {
            let lower = n.to_ascii_lowercase();
            if lower.starts_with("x-") && lower.ends_with("-version") {
                *v = replace_version(v, captured, &version);
            }
        }
        resp.map_body(|b| replace_version(b, captured, &version));
        table.push((path, resp));
    }
    let table = Arc::new(table);
    let handler: Handler = Arc::new(move |req: &RecordedRequest| {
        let path = req.path();
        let mut resp = table
            .iter()
            .find(|(p, _)| *p == path)
            .or_else(|| table.iter().find(|(p, _)| *p == "404"))
            .map(|(_, r)| r.clone())
            .expect("404 template");
        let now = http_date_now();
        resp.set_header("Date", &now);
        resp.replace_header_values("Last-Modified", |_| now.clone());
        resp.finalize_length();
        let mut reply = Reply::new(resp);
        reply.head_only = req.method.eq_ignore_ascii_case("HEAD");
        Action::Respond(reply)
    });
    let server = Server::start(bind, None, handler)?;
    Ok(DebugListener { server })
}
