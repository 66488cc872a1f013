//! A loopback feed server (release feed, advisory feed): answers every request with the next
//! configured response (the last one repeats) and records the requests it saw. A [`Reply`]
//! can carry `ETag` / `Last-Modified` and answer `304 Not Modified` to a request that names
//! its `ETag` in `If-None-Match`, as GitHub's API does.

use std::sync::{Arc, Mutex};
use std::thread;

#[derive(Clone, Debug)]
pub struct FeedRequest {
    pub path: String,
    pub authorization: Option<String>,
    pub if_none_match: Option<String>,
    pub if_modified_since: Option<String>,
}

/// One configured answer.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl Reply {
    pub fn new(status: u16, body: impl Into<String>) -> Reply {
        Reply {
            status,
            body: body.into(),
            etag: None,
            last_modified: None,
        }
    }

    /// A `200` carrying this `ETag`, answered with `304` and no body when the request names it.
    pub fn etag(mut self, etag: &str) -> Reply {
        self.etag = Some(etag.to_string());
        self
    }

    pub fn last_modified(mut self, date: &str) -> Reply {
        self.last_modified = Some(date.to_string());
        self
    }
}

/// A GitHub-releases-shaped feed body listing these tags.
pub fn releases_body(tags: &[&str]) -> String {
    let items: Vec<String> = tags
        .iter()
        .map(|t| format!(r#"{{"tag_name": "{t}", "draft": false, "prerelease": false}}"#))
        .collect();
    format!("[{}]", items.join(","))
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
        FeedServer::replies(
            responses
                .into_iter()
                .map(|(status, body)| Reply::new(status, body))
                .collect(),
        )
    }

    /// `replies` answered in order; the last repeats.
    pub fn replies(replies: Vec<Reply>) -> FeedServer {
        assert!(!replies.is_empty());
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind feed server"));
        let port = server.server_addr().to_ip().expect("ip listener").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (srv, seen) = (server.clone(), requests.clone());
        let worker = thread::spawn(move || {
            for (index, request) in srv.incoming_requests().enumerate() {
                let header = |name: &'static str| {
                    request
                        .headers()
                        .iter()
                        .find(|h| h.field.equiv(name))
                        .map(|h| h.value.to_string())
                };
                let seen_request = FeedRequest {
                    path: request.url().to_string(),
                    authorization: header("Authorization"),
                    if_none_match: header("If-None-Match"),
                    if_modified_since: header("If-Modified-Since"),
                };
                let reply = &replies[index.min(replies.len() - 1)];
                let not_modified = reply.etag.is_some() && seen_request.if_none_match == reply.etag;
                seen.lock().unwrap().push(seen_request);
                let (status, body) = if not_modified {
                    (304, "")
                } else {
                    (reply.status, reply.body.as_str())
                };
                let mut response = tiny_http::Response::from_string(body)
                    .with_status_code(status)
                    .with_header(
                        tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap(),
                    );
                if let Some(etag) = &reply.etag {
                    response
                        .add_header(tiny_http::Header::from_bytes("ETag", etag.as_str()).unwrap());
                }
                if let Some(date) = &reply.last_modified {
                    response.add_header(
                        tiny_http::Header::from_bytes("Last-Modified", date.as_str()).unwrap(),
                    );
                }
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
        FeedServer::start(vec![(200, releases_body(tags))])
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
