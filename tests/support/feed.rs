//! A loopback feed server (release feed, advisory feed): answers every request with the next
//! configured response (the last one repeats) and records the requests it saw.

use std::sync::{Arc, Mutex};
use std::thread;

#[derive(Clone, Debug)]
pub struct FeedRequest {
    pub path: String,
    pub authorization: Option<String>,
}

pub struct FeedServer {
    server: Arc<tiny_http::Server>,
    port: u16,
    requests: Arc<Mutex<Vec<FeedRequest>>>,
    worker: Option<thread::JoinHandle<()>>,
}

impl FeedServer {
    /// `responses`: (status, body) answered in order; the last repeats.
    pub fn start(responses: Vec<(u16, String)>) -> FeedServer {
        assert!(!responses.is_empty());
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind feed server"));
        let port = server.server_addr().to_ip().expect("ip listener").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (srv, seen) = (server.clone(), requests.clone());
        let worker = thread::spawn(move || {
            for (index, request) in srv.incoming_requests().enumerate() {
                let authorization = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Authorization"))
                    .map(|h| h.value.to_string());
                seen.lock().unwrap().push(FeedRequest {
                    path: request.url().to_string(),
                    authorization,
                });
                let (status, body) = &responses[index.min(responses.len() - 1)];
                let response = tiny_http::Response::from_string(body.clone())
                    .with_status_code(*status)
                    .with_header(
                        tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap(),
                    );
                let _ = request.respond(response);
            }
        });
        FeedServer {
            server,
            port,
            requests,
            worker: Some(worker),
        }
    }

    /// A GitHub-releases-shaped feed listing these tags.
    pub fn github_releases(tags: &[&str]) -> FeedServer {
        let items: Vec<String> = tags
            .iter()
            .map(|t| format!(r#"{{"tag_name": "{t}", "draft": false, "prerelease": false}}"#))
            .collect();
        FeedServer::start(vec![(200, format!("[{}]", items.join(",")))])
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn requests(&self) -> Vec<FeedRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FeedServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}
