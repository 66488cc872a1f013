//! Every route of the public scan API (`check-storage-scanner web`), in one table of
//! `server::http`: the JSON API (`api`), MCP (`mcp`), the discovery documents (`discovery`) and
//! the pages (`pages`). The table is the only place that knows them all; the modules it names
//! do not name each other to route.

use super::api::Api;
use super::discovery::{self, Mcp};
use super::{mcp, pages, store};
use crate::server::http::{self, Request, Response, Route};

/// GET, and HEAD answered with the head of the GET answer.
const GET: &[&str] = &["GET", "HEAD"];

/// Whether `/mcp` (and the WebMCP script) is served: not with `--no-mcp`.
fn mcp_served(api: &Api) -> bool {
    api.config.mcp
}

/// The table. A path with routes but not for the method is answered 405 with `Allow`.
pub const ROUTES: &[Route<Api>] = &[
    Route::new(&["POST"], "/api/scans", Api::submit)
        .starts_work()
        .doc(discovery::SUBMIT_SCAN),
    Route::new(&["GET"], "/api/scans/{uuid}", Api::poll).doc(discovery::GET_SCAN),
    Route::new(&["DELETE"], "/api/scans/{uuid}", Api::erase).doc(discovery::ERASE_SCAN),
    Route::new(&["GET"], "/api/scans/{uuid}/export/{format}", Api::export)
        .doc(discovery::EXPORT_SCAN),
    Route::new(GET, "/healthz", Api::health).doc(discovery::GET_HEALTH),
    Route::new(&["POST"], mcp::PATH, mcp::handle)
        .when(mcp_served)
        .doc(discovery::CALL_MCP),
    Route::new(&["DELETE"], mcp::PATH, mcp::handle)
        .when(mcp_served)
        .doc(discovery::END_MCP_SESSION),
    // Any other method: MCP says why (GET opens no event stream here).
    Route::new(&[], mcp::PATH, mcp::handle).when(mcp_served),
    Route::new(GET, discovery::AI_PATH, |api, _, _| {
        discovery::answer(discovery::ai(base(api), Mcp::of(&api.config)))
    })
    .doc(discovery::GET_AI),
    Route::new(GET, discovery::OPENAPI_PATH, |api, _, _| {
        let served = ROUTES.iter().filter(|route| route.is_served(api));
        discovery::answer(discovery::openapi(base(api), Mcp::of(&api.config), served))
    })
    .doc(discovery::GET_OPENAPI),
    Route::new(GET, discovery::ARAZZO_PATH, |api, _, _| {
        discovery::answer(discovery::arazzo(base(api)))
    })
    .doc(discovery::GET_ARAZZO),
    Route::new(GET, "/", Api::landing_page).doc(discovery::GET_LANDING_PAGE),
    Route::new(&["POST"], "/scans", Api::form_submission).doc(discovery::SUBMIT_SCAN_FORM),
    Route::new(GET, "/scans/{uuid}", Api::result_page).doc(discovery::GET_RESULT_PAGE),
    Route::new(GET, "/static/style.css", |_, _, _| {
        pages::static_file("text/css; charset=utf-8", pages::STYLE)
    })
    .doc(discovery::GET_STYLESHEET),
    Route::new(GET, "/static/app.js", |_, _, _| {
        pages::static_file("text/javascript; charset=utf-8", pages::SCRIPT)
    })
    .doc(discovery::GET_PAGE_SCRIPT),
    Route::new(GET, "/static/webmcp.js", |_, _, _| {
        pages::static_file("text/javascript; charset=utf-8", pages::WEBMCP)
    })
    .when(mcp_served)
    .doc(discovery::GET_WEBMCP_SCRIPT),
];

/// The base URL as the documents name it, without a trailing slash.
fn base(api: &Api) -> &str {
    api.config.base_url.trim_end_matches('/')
}

impl Api {
    /// Answers one request from [`ROUTES`], its store calls sharing one deadline.
    pub fn handle(&self, request: &Request) -> Response {
        store::sharing_deadline(self.config.store_timeout, || {
            http::route(
                ROUTES,
                self,
                request,
                "no such route; see /openapi.json",
                &self.config.base_url,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documents are generated from the table: every route the server answers (the API,
    /// MCP, the documents, the pages and their files) is described, and each description names
    /// an operation of its own. Only `/mcp`'s answer to any other method is not an operation.
    #[test]
    fn every_route_is_described_once() {
        let mut ids = Vec::new();
        for route in ROUTES.iter().filter(|r| !r.methods.is_empty()) {
            assert!(route.doc.is_some(), "{:?} {}", route.methods, route.path);
            ids.extend(route.doc.as_ref().map(|doc| doc.id));
        }
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
        let openapi = discovery::openapi("https://scan.example.com", discovery::Mcp::Open, ROUTES);
        for route in ROUTES {
            if let (Some(doc), Some(method)) = (&route.doc, route.methods.first()) {
                let operation = &openapi["paths"][route.path][method.to_ascii_lowercase()];
                assert_eq!(operation["operationId"], doc.id, "{}", route.path);
            }
        }
    }
}
