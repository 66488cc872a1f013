//! Instance fixes: environment lines with the family's own setting names.

use super::*;

/// The services' default debug ports (both families use the same): `<SERVICE>_DEBUG_ADDR`
/// binds each (opencloud-facts.md 2.3, ocis-facts.md 4).
pub(super) const DEBUG_SERVICES: &[(u16, &str)] = &[
    (9104, "WEB"),
    (9114, "OCS"),
    (9119, "WEBDAV"),
    (9124, "GRAPH"),
    (9129, "POLICIES"),
    (9134, "IDP"),
    (9139, "SSE"),
    (9141, "FRONTEND"),
    (9143, "GATEWAY"),
    (9145, "USERS"),
    (9147, "AUTH_BASIC"),
    (9149, "AUTH_BEARER"),
    (9151, "SHARING"),
    (9156, "STORAGE_SHARES"),
    (9159, "STORAGE_USERS"),
    (9161, "GROUPS"),
    (9163, "OCDAV"),
    (9165, "APP_PROVIDER"),
    (9167, "AUTH_MACHINE"),
    (9174, "NOTIFICATIONS"),
    (9179, "STORAGE_PUBLICLINK"),
    (9189, "THUMBNAILS"),
    (9194, "SETTINGS"),
    (9197, "ACTIVITYLOG"),
    (9198, "AUTH_SERVICE"),
    (9205, "PROXY"),
    (9214, "USERLOG"),
    (9217, "STORAGE_SYSTEM"),
    (9224, "SEARCH"),
    (9229, "AUDIT"),
    (9234, "NATS"),
    (9239, "IDM"),
    (9243, "APP_REGISTRY"),
    (9245, "AUTH_APP"),
    (9255, "POSTPROCESSING"),
    (9260, "CLIENTLOG"),
    (9269, "INVITATIONS"),
    (9270, "EVENTHISTORY"),
    (9277, "ANTIVIRUS"),
    (9279, "WEBFINGER"),
    (9281, "OCM"),
    (9304, "COLLABORATION"),
];

pub(super) fn debug_service(port: u16) -> Option<&'static str> {
    DEBUG_SERVICES
        .iter()
        .find(|(p, _)| *p == port)
        .map(|(_, s)| *s)
}

/// Binding the debug listener of `port` to loopback, and not publishing it.
pub(super) fn loopback_entries(port: u16) -> Vec<Entry> {
    vec![
        match debug_service(port) {
            Some(service) => line(format!("{service}_DEBUG_ADDR=127.0.0.1:{port}")),
            None => line(format!(
                "# bind the debug listener on port {port} to 127.0.0.1 (its \
                 <SERVICE>_DEBUG_ADDR)"
            )),
        },
        line("# and publish no debug port (take it out of ports: in docker-compose.yml)").last(),
    ]
}

pub(super) fn debug_port(port: &str) -> Vec<Part> {
    match port.parse::<u16>() {
        Ok(port) if port > 0 => vec![part(Place::Env, loopback_entries(port))],
        _ => Vec::new(),
    }
}

/// `debugEndpoint:/config` (the public address) or `debugEndpoint:9205/config` (a debug
/// port).
pub(super) fn debug_endpoint(ctx: &Ctx, detail: &str) -> Vec<Part> {
    let digits = detail.bytes().take_while(u8::is_ascii_digit).count();
    let (port, path) = detail.split_at(digits);
    if !safe_path(path) {
        return Vec::new();
    }
    let rotate = line(format!(
        "# /config was reachable: set {} anew, and every other secret it showed",
        ctx.setting("SERVICE_ACCOUNT_SECRET")
    ));
    if port.is_empty() {
        let mut parts = deny_path(ctx, path, &format!("debug-{}", slug(path)));
        if path == "/config" {
            parts.push(part(Place::Env, vec![rotate]));
        }
        return parts;
    }
    let Some(port) = port.parse::<u16>().ok().filter(|p| *p > 0) else {
        return Vec::new();
    };
    let mut entries = loopback_entries(port);
    let service = debug_service(port);
    match (path, service) {
        ("/config", _) => entries.push(rotate),
        ("/debug/pprof/", Some(service)) => {
            entries.push(line(format!("{service}_DEBUG_PPROF=false")));
        }
        ("/metrics", Some(service)) => entries.push(line(format!(
            "# {service}_DEBUG_TOKEN=<a long random token> asks for it on /metrics"
        ))),
        _ => {}
    }
    vec![part(Place::Env, entries)]
}

pub(super) fn demo_users(ctx: &Ctx) -> Vec<Part> {
    let names: Vec<&str> = ctx.family.demo_accounts.iter().map(|a| a.user).collect();
    vec![part(
        Place::Env,
        vec![
            line("IDM_CREATE_DEMO_USERS=false"),
            line(format!(
                "# and delete the accounts {}: switching the setting off removes none",
                names.join(", ")
            )),
        ],
    )]
}

pub(super) fn public_url(ctx: &Ctx) -> Vec<Part> {
    let Some(host) = &ctx.host else {
        return Vec::new();
    };
    vec![part_line(
        Place::Env,
        format!("{}={}", ctx.setting("URL"), host.https_origin()),
    )]
}

/// Product-wide settings (`URL` is `OC_URL` or `OCIS_URL`) as environment lines.
pub(super) fn product_settings(ctx: &Ctx, settings: &[(&str, &str)]) -> Vec<Part> {
    let lines = settings
        .iter()
        .map(|(name, value)| line(format!("{}={value}", ctx.setting(name))));
    vec![part(Place::Env, lines.collect())]
}

pub(super) fn csp_without_inline(ctx: &Ctx) -> Vec<Part> {
    vec![part(
        Place::Env,
        vec![
            line(
                "# a policy file (YAML, as the built-in one) whose script-src has no \
                 'unsafe-inline' or 'unsafe-eval'; nonces or hashes where inline code is needed",
            ),
            line(format!(
                "{}={}/csp.yaml",
                ctx.family.csp_replace_setting, ctx.family.config_dir
            )),
        ],
    )]
}
