//! What a component's settings must meet together before it starts, past what each value's
//! own type checks: the rules of a server's token (the scan service's `--token`, the public
//! API's MCP token), a random value long enough not to be guessed, never the placeholder a
//! sample file ships, never anything an `Authorization` header cannot carry, and required
//! beyond loopback. Every rule broken is named at once, and no message carries a token.

use std::net::IpAddr;

use super::{ServeSettings, WebSettings, options::Id};

/// Every rule the scan service's settings break, each with the row whose value breaks it.
pub(super) fn serve(settings: &ServeSettings) -> Vec<(Id, String)> {
    let refused = check_token(settings.listen, settings.token.as_deref()).err();
    refused.map(|r| (Id::token, r)).into_iter().collect()
}

/// Every rule the public API's settings break.
pub(super) fn web(settings: &WebSettings) -> Vec<(Id, String)> {
    let refused = settings
        .mcp_token
        .as_deref()
        .and_then(|t| check_mcp_token(t).err());
    refused.map(|r| (Id::mcp_token, r)).into_iter().collect()
}

/// The token shipped in `packaging/check-storage-scanner.sample.yml`: never accepted.
pub const PLACEHOLDER_TOKEN: &str = "replace-me-with-a-random-scanner-token";
/// The shortest token the service starts with.
pub const MIN_TOKEN_CHARS: usize = 32;

/// Why the service must not start with this listen address and token. The message never
/// carries the token.
fn check_token(listen: IpAddr, token: Option<&str>) -> Result<(), String> {
    const GIVE: &str = "give --token (COS_SERVICE_TOKEN, service.token) a random value of at \
                        least 32 characters (openssl rand -hex 32) as a secret reference such \
                        as secret://scanner-token or with the _file suffix";
    match token {
        None if !listen.is_loopback() => Err(format!(
            "refusing to listen on {listen} without a token: any address but loopback needs \
             one; {GIVE}"
        )),
        None => Ok(()),
        Some(t) if t == PLACEHOLDER_TOKEN => Err(format!(
            "refusing to start: the token is the placeholder shipped in \
             check-storage-scanner.sample.yml; {GIVE}"
        )),
        Some(t) if t.chars().count() < MIN_TOKEN_CHARS => Err(format!(
            "refusing to start: the token is shorter than {MIN_TOKEN_CHARS} characters; {GIVE}"
        )),
        Some(t) if t.chars().any(|c| c.is_whitespace() || c.is_control()) => Err(format!(
            "refusing to start: the token holds white space or control characters, which an \
             Authorization header cannot carry; {GIVE}"
        )),
        Some(_) => Ok(()),
    }
}

/// Why `web` must not start with this `--mcp-token` (never naming the token).
fn check_mcp_token(token: &str) -> Result<(), String> {
    const GIVE: &str = "give --mcp-token (COS_WEB_MCP_TOKEN, web.mcp_token) a random value of at \
                        least 32 characters (openssl rand -hex 32) as a secret reference such as \
                        secret://mcp-token";
    if token.chars().count() < MIN_TOKEN_CHARS {
        return Err(format!(
            "refusing to start: the MCP token is shorter than {MIN_TOKEN_CHARS} characters; {GIVE}"
        ));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "refusing to start: the MCP token holds white space or control characters, which an \
             Authorization header cannot carry; {GIVE}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_rules() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let v6_loopback: IpAddr = "::1".parse().unwrap();
        let any: IpAddr = "0.0.0.0".parse().unwrap();
        let good = "0123456789abcdef0123456789abcdef";
        assert!(check_token(loopback, None).is_ok());
        assert!(check_token(v6_loopback, None).is_ok());
        assert!(check_token(any, Some(good)).is_ok());
        let e = check_token(any, None).unwrap_err();
        assert!(
            e.starts_with("refusing to listen on 0.0.0.0 without a token"),
            "{e}"
        );
        for (token, says) in [
            (&good[1..], "shorter than 32 characters"),
            (PLACEHOLDER_TOKEN, "placeholder"),
            ("0123456789abcdef 0123456789abcdef", "white space"),
        ] {
            for listen in [loopback, any] {
                let e = check_token(listen, Some(token)).unwrap_err();
                assert!(e.contains(says), "{e}");
                assert!(!e.contains(token), "the token is never printed: {e}");
            }
        }
    }
}
