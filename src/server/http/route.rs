//! The route table: which handler answers a method and a path, and what each route states.

use super::*;

/// One row of a server's route table: the methods it answers, its path and its handler.
pub struct Route<S: 'static> {
    /// What `Allow` lists for the path: HEAD only where a route says so (the layer then
    /// answers the head of the GET answer). None: every method no other route of the path
    /// takes (a handler that answers its own 405).
    pub methods: &'static [&'static str],
    /// `/api/scans/{uuid}`: each `{name}` stands for one non-empty segment.
    pub path: &'static str,
    pub handle: Handler<S>,
    /// Whether the server serves the route at all (`--no-mcp` turns routes off): `None` always.
    pub served: Option<fn(&S) -> bool>,
    /// The route starts work (a scan, a session, a round): what a browser marks as another
    /// site's request is refused before its handler runs ([`Route::starts_work`]).
    pub starts_work: bool,
    /// How a server's API documents describe it (`None`: they do not).
    pub doc: Option<Operation>,
}

/// A route as an API document describes it (an OpenAPI operation): the documents are
/// generated from the route table, so a route cannot be served undescribed or described
/// unserved.
pub struct Operation {
    pub id: &'static str,
    pub summary: &'static str,
    pub tag: &'static str,
    /// The rest of the operation: its description, parameters, body and answers.
    pub describe: fn() -> Value,
}

impl<S> Route<S> {
    pub const fn new(
        methods: &'static [&'static str],
        path: &'static str,
        handle: Handler<S>,
    ) -> Route<S> {
        Route {
            methods,
            path,
            handle,
            served: None,
            starts_work: false,
            doc: None,
        }
    }

    /// The route starts work: a request a browser sends for another site's page (`Origin`
    /// foreign or `null`, `Sec-Fetch-Site: cross-site` or `same-site`: `origin::BrowserSays`)
    /// is answered 403 `forbidden_origin` and the handler never runs. An `<img src>`, a
    /// sandboxed iframe's form or a fetch of any page the operator opens cannot make the
    /// server scan, rescan or open sessions.
    pub const fn starts_work(self) -> Route<S> {
        Route {
            starts_work: true,
            ..self
        }
    }

    /// The route, described as `doc`.
    pub const fn doc(self, doc: Operation) -> Route<S> {
        Route {
            doc: Some(doc),
            ..self
        }
    }

    /// The route, served only when `served` says so.
    pub const fn when(self, served: fn(&S) -> bool) -> Route<S> {
        Route {
            served: Some(served),
            ..self
        }
    }

    /// Whether `server` serves the route (see [`Route::when`]).
    pub fn is_served(&self, server: &S) -> bool {
        self.served.is_none_or(|served| served(server))
    }

    /// The values of the path's parameters when `path` is this route's.
    pub(super) fn capture<'p>(&self, path: &'p str) -> Option<Vec<&'p str>> {
        let mut values = Vec::new();
        let mut given = path.split('/');
        for pattern in self.path.split('/') {
            let segment = given.next()?;
            if pattern.starts_with('{') {
                if segment.is_empty() {
                    return None;
                }
                values.push(segment);
            } else if pattern != segment {
                return None;
            }
        }
        given.next().is_none().then_some(values)
    }
}

/// Answers `request` from `routes`: the route of its path and method (or the path's route for
/// any method); 405 with `Allow` (the methods of the path's routes) for another method; 404 with `not_found` for a path no
/// route has. A trailing slash does not count (`/healthz/` is `/healthz`). A route that
/// [starts work](Route::starts_work) refuses another site's request (403); `base_url` is the
/// server's `--base-url`, whose origin is its own (empty: only its loopback address is).
pub fn route<S>(
    routes: &[Route<S>],
    server: &S,
    request: &Request,
    not_found: &str,
    base_url: &str,
) -> Response {
    let path = match request.path.trim_end_matches('/') {
        "" => "/",
        path => path,
    };
    let mut allowed: Vec<&str> = Vec::new();
    let mut any_method = None;
    for route in routes {
        if !route.is_served(server) {
            continue;
        }
        let Some(values) = route.capture(path) else {
            continue;
        };
        if route.methods.contains(&request.method.as_str()) {
            if route.starts_work && request.browser().another_site(base_url) {
                return Response::error(
                    403,
                    "forbidden_origin",
                    "this starts work, and another site's page may not ask for it (the \
                     browser said so: Origin or Sec-Fetch-Site); call it from a program or \
                     this server's own pages",
                );
            }
            return (route.handle)(server, request, &values);
        }
        if route.methods.is_empty() {
            any_method = any_method.or(Some((route.handle, values)));
        }
        allowed.extend(route.methods);
    }
    if let Some((handle, values)) = any_method {
        return handle(server, request, &values);
    }
    if allowed.is_empty() {
        return Response::error(404, "not_found", not_found);
    }
    let allow = allowed.join(", ");
    Response::error(405, "method_not_allowed", &format!("{path} takes {allow}"))
        .with_header("Allow", &allow)
}
