//! Every route of the public scan API (`check-storage-scanner web`), in one table of
//! `serve::http`: the JSON API (`api`), MCP (`mcp`), the discovery documents (`discovery`) and
//! the pages (`pages`). The table is the only place that knows them all; the modules it names
//! do not name each other to route.

use super::api::{Api, ERASE_KEY_HEADER};
use super::{discovery, mcp, pages};
use crate::serve::http::{self, Request, Response, Route};

/// GET, and HEAD answered with the head of the GET answer.
const GET: &[&str] = &["GET", "HEAD"];

/// Whether `/mcp` (and the WebMCP script) is served: not with `--no-mcp`.
fn mcp_served(api: &Api) -> bool {
    api.config.mcp
}

/// The table. A path with routes but not for the method is answered 405 with `Allow`.
pub const ROUTES: &[Route<Api>] = &[
    Route::new(&["POST"], "/api/scans", |api, request, _| {
        api.submit(request)
    }),
    Route::new(&["GET"], "/api/scans/{uuid}", |api, _, path| {
        api.poll(path[0])
    }),
    Route::new(&["DELETE"], "/api/scans/{uuid}", |api, request, path| {
        api.erase(path[0], request.header(ERASE_KEY_HEADER))
    }),
    Route::new(
        &["GET"],
        "/api/scans/{uuid}/export/{format}",
        |api, _, path| api.export(path[0], path[1]),
    ),
    Route::new(GET, "/healthz", |api, _, _| api.health()),
    Route::new(&["POST", "DELETE"], mcp::PATH, mcp::handle).when(mcp_served),
    // Any other method: MCP says why (GET opens no event stream here).
    Route::new(&[], mcp::PATH, mcp::handle).when(mcp_served),
    Route::new(GET, discovery::AI_PATH, |api, _, _| {
        discovery::answer(discovery::ai(base(api), mcp_of(api)))
    }),
    Route::new(GET, discovery::OPENAPI_PATH, |api, _, _| {
        discovery::answer(discovery::openapi(base(api), mcp_of(api)))
    }),
    Route::new(GET, discovery::ARAZZO_PATH, |api, _, _| {
        discovery::answer(discovery::arazzo(base(api)))
    }),
    Route::new(GET, "/", |api, _, _| api.landing_page()),
    Route::new(&["POST"], "/scans", |api, request, _| {
        api.form_submission(request)
    }),
    Route::new(GET, "/scans/{uuid}", |api, _, path| {
        api.result_page(path[0])
    }),
    Route::new(GET, "/static/style.css", |_, _, _| {
        pages::static_file("text/css; charset=utf-8", pages::STYLE)
    }),
    Route::new(GET, "/static/app.js", |_, _, _| {
        pages::static_file("text/javascript; charset=utf-8", pages::SCRIPT)
    }),
    Route::new(GET, "/static/webmcp.js", |_, _, _| {
        pages::static_file("text/javascript; charset=utf-8", pages::WEBMCP)
    })
    .when(mcp_served),
];

/// The base URL as the documents name it, without a trailing slash.
fn base(api: &Api) -> &str {
    api.config.base_url.trim_end_matches('/')
}

fn mcp_of(api: &Api) -> discovery::Mcp {
    discovery::Mcp::of(api.config.mcp, api.config.mcp_token.as_deref())
}

impl Api {
    /// Answers one request from [`ROUTES`].
    pub fn handle(&self, request: &Request) -> Response {
        http::route(ROUTES, self, request, "no such route; see /openapi.json")
    }
}
