//! Webhook notifications (`--webhook-url`) and the destination guard.
//!
//! One notification per host whose state reaches `--webhook-on` (spec "Events"): a JSON body
//! in one of five formats (`body`), POSTed once plus `--retries` retries on transport errors
//! and 5xx, never following a redirect, each attempt within `--webhook-timeout`. Before every
//! attempt the receiver's name is resolved and checked by the guard (`net::guard`, the one
//! the public scan API checks targets with); the connection goes to exactly the address that
//! passed. A failed delivery never changes the exit state.

pub mod body;

use crate::budget::{Attempt, Budget, GaveUp, StepTimeout};
use crate::net::guard;

use crate::report::{ScanResult, State};
use std::time::{Duration, Instant};

crate::vocabulary::vocabulary! {
    /// `--webhook-on`: from which state a host is notified.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum NotifyOn {
        Critical = "critical",
        Warning = "warning",
        Unknown = "unknown",
        Always = "always",
    }
}

crate::vocabulary::vocabulary! {
    /// `--webhook-format`: the body a receiver reads.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum BodyFormat {
        Generic = "generic",
        ChatBlocks = "chatblocks",
        ChatEmbed = "chatembed",
        PushTopic = "pushtopic",
        PushServer = "pushserver",
    }
}

#[derive(Clone, Debug)]
pub struct WebhookSettings {
    /// The receiver's URL. Never printed: chat and push services put their token in the path
    /// or the query, so messages name it by `url_reference` or by scheme, host and port.
    pub url: String,
    /// The secret reference the URL was read from (`env://HOOK`), if any: messages name it
    /// instead of any part of the URL.
    pub url_reference: Option<String>,
    pub on: NotifyOn,
    pub format: BodyFormat,
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
    pub allow_private: bool,
    pub retries: u32,
    pub backoff_factor: f64,
    pub proxy: Option<String>,
}

impl WebhookSettings {
    /// Validates the settings at start: the URL is an http(s) address with a host, the extra
    /// headers are valid HTTP headers, and a `pushtopic` URL names its topic.
    pub fn validate(&self) -> Result<(), String> {
        Destination::of(self)?;
        // Entries are named by position: a header carries the receiver's credentials.
        for (n, (name, value)) in self.headers.iter().enumerate() {
            if ureq::http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(format!(
                    "--webhook-header entry {} has no valid header name; give 'Name: value', \
                     e.g. 'Authorization: Bearer xyz'",
                    n + 1
                ));
            }
            if ureq::http::HeaderValue::from_str(value).is_err() {
                return Err(format!(
                    "--webhook-header entry {} has a value with control characters; give \
                     'Name: value' on one line",
                    n + 1
                ));
            }
        }
        Ok(())
    }
}

/// How messages name the URL, which they never quote (chat and push services put their token
/// in it): `--webhook-url`, plus the reference it came from.
pub fn url_named(reference: Option<&str>) -> String {
    reference.map_or("--webhook-url".to_string(), |r| {
        format!("--webhook-url (from {r})")
    })
}

/// Where a notification goes, parsed from `--webhook-url`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Destination {
    /// The address POSTed to: the URL as given, or the server root for `pushtopic`.
    pub url: String,
    /// Host name or address literal, without brackets.
    pub host: String,
    pub port: u16,
    /// `pushtopic` only: the topic named by the URL path.
    pub topic: Option<String>,
    /// How messages name the receiver: the URL's reference when it came from one, otherwise
    /// `scheme://host:port/` with `…` for a path (user information, path and query may hold
    /// tokens: a chat webhook's path is its secret).
    pub display: String,
}

impl Destination {
    pub fn of(settings: &WebhookSettings) -> Result<Destination, String> {
        let given = settings.url.trim();
        let named = url_named(settings.url_reference.as_deref());
        let bad = |why: &str| format!("{named} {why}; give the receiver's http(s) URL");
        let uri: ureq::http::Uri = given.parse().map_err(|_| bad("is not a valid URL"))?;
        let scheme = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
            Some("http") => "http",
            Some("https") => "https",
            _ => return Err(bad("is not an http(s) address")),
        };
        let authority = uri.authority().ok_or_else(|| bad("has no host"))?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        if host.is_empty() {
            return Err(bad("has no host"));
        }
        let port = authority
            .port_u16()
            .unwrap_or(if scheme == "https" { 443 } else { 80 });
        // The authority without user information, as it goes into messages.
        let host_port = match authority.port() {
            Some(p) => format!("{}:{}", authority.host(), p.as_str()),
            None => authority.host().to_string(),
        };
        let path = uri.path();
        let (url, topic) = match settings.format {
            BodyFormat::PushTopic => {
                let topic = topic_of(path).map_err(|why| {
                    format!(
                        "{named} {why}; the pushtopic format reads the topic from the URL \
                         path, e.g. https://ntfy.example/alerts"
                    )
                })?;
                let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
                (
                    format!("{scheme}://{}/{query}", authority.as_str()),
                    Some(topic),
                )
            }
            _ => (given.to_string(), None),
        };
        let shown_path = match topic {
            None if !path.is_empty() && path != "/" => "/…",
            _ => "/",
        };
        let display = match &settings.url_reference {
            Some(reference) => reference.clone(),
            None => format!("{scheme}://{host_port}{shown_path}"),
        };
        Ok(Destination {
            url,
            host,
            port,
            topic,
            display,
        })
    }

    /// A message fit to print: whatever a transport error quoted of the URL (the URL, its path
    /// or query, and for a URL from a reference its host too) is replaced by `display`.
    fn hide(&self, settings: &WebhookSettings, message: &str) -> String {
        let mut out = message.to_string();
        let given = settings.url.trim();
        let mut secrets = vec![given.to_string(), self.url.clone()];
        if let Ok(uri) = given.parse::<ureq::http::Uri>() {
            if let Some(pq) = uri.path_and_query().map(|p| p.as_str())
                && pq.len() > 1
            {
                secrets.push(pq.to_string());
            }
            if settings.url_reference.is_some() && !self.host.is_empty() {
                secrets.push(self.host.clone());
            }
        }
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for secret in secrets.iter().filter(|s| !s.is_empty()) {
            out = out.replace(secret.as_str(), &self.display);
        }
        out
    }
}

/// The topic of a `pushtopic` URL: its one path segment, 1-64 letters, digits, `-` or `_`.
fn topic_of(path: &str) -> Result<String, String> {
    let topic = path.trim_matches('/');
    if topic.is_empty() {
        return Err("names no topic".into());
    }
    let valid = topic.len() <= 64
        && topic
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        // The topic is not quoted: on a public push server it is the only secret.
        return Err(
            "has no valid topic (the path must be one segment of 1-64 letters, digits, - or _)"
                .to_string(),
        );
    }
    Ok(topic.to_string())
}

/// Whether a host's result is to be notified: `critical` CRITICAL; `warning` WARNING and
/// CRITICAL; `unknown` UNKNOWN, WARNING and CRITICAL; `always` every run. A failed scan is
/// UNKNOWN.
pub fn wanted(settings: &WebhookSettings, result: &ScanResult) -> bool {
    let state = body::state(result);
    match settings.on {
        NotifyOn::Critical => state == State::Critical,
        NotifyOn::Warning => matches!(state, State::Warning | State::Critical),
        NotifyOn::Unknown => matches!(state, State::Unknown | State::Warning | State::Critical),
        NotifyOn::Always => true,
    }
}

/// Delivers one host's notification, retrying within what is left of the run's time budget;
/// `Err` says why it failed in the end.
pub fn deliver(
    settings: &WebhookSettings,
    result: &ScanResult,
    budget: &Budget,
) -> Result<(), String> {
    let destination = Destination::of(settings)?;
    let value = body::build(&settings.format, result, destination.topic.as_deref());
    let body =
        serde_json::to_vec(&value).map_err(|e| format!("cannot encode the notification: {e}"))?;
    post_to(settings, &destination, &body, budget).inspect(|()| {
        crate::diagnostics::debug_log(&format!("webhook for {} delivered", result.host));
    })
}

/// POSTs a JSON body to the destination of `settings` (the server root for `pushtopic`): once,
/// plus `retries` retries after transport errors and 5xx with `backoff_factor * 2^n` seconds
/// before retry n; 4xx, a redirect or a refused destination end it at once. `Err` names the
/// destination (without user information or query) and why.
pub fn post(settings: &WebhookSettings, body: &[u8]) -> Result<(), String> {
    let destination = Destination::of(settings)?;
    post_to(settings, &destination, body, &Budget::unlimited())
}

/// [`post`] within `budget`: each attempt is cut to what is left of it, and a retry starts
/// only if it could end within it (`Budget::retry`).
fn post_to(
    settings: &WebhookSettings,
    destination: &Destination,
    body: &[u8],
    budget: &Budget,
) -> Result<(), String> {
    let attempts = settings.retries.saturating_add(1);
    let timeout = budget.step_timeout(settings.timeout);
    budget
        .retry(
            settings.retries,
            settings.backoff_factor,
            |attempt| match attempt_once(settings, destination, body, timeout) {
                Ok(()) => Attempt::Done(()),
                Err(Failure::Final(message)) => Attempt::Failed(message),
                Err(Failure::Retry(message)) => {
                    crate::diagnostics::debug_log(&format!(
                        "webhook attempt {attempt} of {attempts} to {} failed: {message}",
                        destination.display
                    ));
                    Attempt::Transient(message)
                }
            },
        )
        .map_err(|gave_up| match gave_up {
            GaveUp::Failed(message) | GaveUp::Exhausted { message, .. } => {
                let message = format!("{}: {message}", destination.display);
                destination.hide(settings, &message)
            }
        })
}

enum Failure {
    /// A transport error or 5xx: worth another attempt.
    Retry(String),
    /// Refused by the guard, 4xx, a redirect: the same request would fail the same way.
    Final(String),
}

fn attempt_once(
    settings: &WebhookSettings,
    destination: &Destination,
    body: &[u8],
    timeout: StepTimeout,
) -> Result<(), Failure> {
    let started = Instant::now();
    // The attempt's limit (`--webhook-timeout`), cut to what is left of the budget now.
    let limit = timeout.now();
    let (pin, proxy) = match &settings.proxy {
        Some(proxy) => {
            if !settings.allow_private {
                return Err(Failure::Final(
                    "not sent through --proxy: validated addresses are pinned, so a resolving \
                     proxy cannot be used without --allow-private-webhooks; pass it to deliver \
                     through the proxy"
                        .into(),
                ));
            }
            let proxy = ureq::Proxy::new(proxy).map_err(|e| {
                Failure::Final(format!(
                    "--proxy {} is not usable: {e}",
                    crate::net::proxy::redacted(proxy)
                ))
            })?;
            (None, Some(proxy))
        }
        None => {
            let addresses = guard::resolve(&destination.host, destination.port, limit)
                .map_err(Failure::Retry)?;
            let ip = guard::choose(&destination.host, &addresses, settings.allow_private)
                .map_err(Failure::Final)?;
            (Some(guard::Pins::new(&destination.host, vec![ip])), None)
        }
    };
    let remaining = limit.saturating_sub(started.elapsed());
    if remaining.is_zero() {
        return Err(Failure::Retry("timed out".into()));
    }
    let agent = agent(remaining, pin, proxy);
    let mut request = ureq::http::Request::builder()
        .method("POST")
        .uri(&destination.url);
    if !settings
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        request = request.header("Content-Type", "application/json");
    }
    for (name, value) in &settings.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request
        .body(body)
        .map_err(|e| Failure::Final(format!("cannot build the request: {e}")))?;
    let response = agent
        .run(request)
        .map_err(|e| Failure::Retry(describe(&e)))?;
    let status = response.status().as_u16();
    match status {
        200..=299 => Ok(()),
        300..=399 => Err(Failure::Final(format!(
            "answered HTTP {status}, a redirect, which is not followed; give the final URL"
        ))),
        500..=599 => Err(Failure::Retry(format!("answered HTTP {status}"))),
        _ => Err(Failure::Final(format!("answered HTTP {status}"))),
    }
}

/// A one-off agent (`net::agent`): no redirects, no proxy but the operator's, public roots
/// (ureq's default), the attempt's time limit, and a resolver that returns exactly the
/// validated address.
fn agent(timeout: Duration, pin: Option<guard::Pins>, proxy: Option<ureq::Proxy>) -> ureq::Agent {
    let resolver = crate::net::resolve::ScanResolver { pin };
    crate::net::agent(proxy, resolver, &crate::program::user_agent(), |config| {
        config.max_redirects(0).timeout_global(Some(timeout))
    })
}

fn describe(e: &ureq::Error) -> String {
    use ureq::Error as E;
    match e {
        E::Timeout(_) => "timed out".into(),
        E::ConnectionFailed => "connection failed".into(),
        E::HostNotFound => "host not found".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::backoff;
    use crate::output::metrics::testing::{failed, scanned};

    fn settings(url: &str, format: BodyFormat) -> WebhookSettings {
        WebhookSettings {
            url: url.into(),
            url_reference: None,
            on: NotifyOn::Critical,
            format,
            headers: Vec::new(),
            timeout: Duration::from_secs(10),
            allow_private: false,
            retries: 2,
            backoff_factor: 0.5,
            proxy: None,
        }
    }

    #[test]
    fn pushtopic_reads_the_topic_and_posts_to_the_root() {
        let s = settings("https://ntfy.example/alerts", BodyFormat::PushTopic);
        assert_eq!(s.validate(), Ok(()));
        let d = Destination::of(&s).unwrap();
        assert_eq!(d.topic.as_deref(), Some("alerts"));
        assert_eq!(d.url, "https://ntfy.example/");
        assert_eq!((d.host.as_str(), d.port), ("ntfy.example", 443));

        let s = settings(
            "http://user:pw@[2001:db8::5]:8080/ops_alerts/?auth=tok",
            BodyFormat::PushTopic,
        );
        let d = Destination::of(&s).unwrap();
        assert_eq!(d.topic.as_deref(), Some("ops_alerts"));
        assert_eq!(d.url, "http://user:pw@[2001:db8::5]:8080/?auth=tok");
        assert_eq!((d.host.as_str(), d.port), ("2001:db8::5", 8080));
        assert_eq!(d.display, "http://[2001:db8::5]:8080/");
    }

    #[test]
    fn pushtopic_without_a_topic_is_refused_in_one_line_naming_the_fix() {
        for url in [
            "https://ntfy.example",
            "https://ntfy.example/",
            "https://ntfy.example//?x=1",
        ] {
            let error = settings(url, BodyFormat::PushTopic).validate().unwrap_err();
            assert!(error.contains("names no topic"), "{error}");
            assert!(
                error.contains("e.g. https://ntfy.example/alerts"),
                "{error}"
            );
            assert!(!error.contains('\n'), "{error}");
        }
        let error = settings("https://ntfy.example/a/b", BodyFormat::PushTopic)
            .validate()
            .unwrap_err();
        assert!(error.contains("no valid topic"), "{error}");
        // Other formats take the URL as given, root or not.
        assert_eq!(
            settings("https://hooks.example/", BodyFormat::Generic).validate(),
            Ok(())
        );
    }

    #[test]
    fn other_formats_post_to_the_url_as_given_and_hide_the_query_in_messages() {
        let s = settings(
            "https://push.example:8443/message?token=secret",
            BodyFormat::PushServer,
        );
        let d = Destination::of(&s).unwrap();
        assert_eq!(d.url, "https://push.example:8443/message?token=secret");
        assert_eq!(d.display, "https://push.example:8443/…");
        assert_eq!(d.port, 8443);
        assert_eq!(d.topic, None);
    }

    #[test]
    fn bad_urls_and_headers_are_refused() {
        for url in ["ftp://x.example/", "https://", "not a url", "//x.example/"] {
            assert!(
                settings(url, BodyFormat::Generic).validate().is_err(),
                "{url}"
            );
        }
        let mut s = settings("https://hooks.example/x", BodyFormat::Generic);
        s.headers = vec![("Bad Name".into(), "v".into())];
        assert!(
            s.validate()
                .unwrap_err()
                .contains("entry 1 has no valid header name")
        );
        s.headers = vec![("X-Ok".into(), "line\nbreak".into())];
        assert!(s.validate().unwrap_err().contains("control characters"));
        s.headers = vec![("Authorization".into(), "Bearer xyz".into())];
        assert_eq!(s.validate(), Ok(()));
    }

    #[test]
    fn levels_select_states() {
        let mut s = settings("https://hooks.example/x", BodyFormat::Generic);
        let mut r = scanned("cloud.example", "8.1.0", Some(100));
        let down = failed("down.example");
        let table = [
            (NotifyOn::Critical, [false, false, true, false]),
            (NotifyOn::Warning, [false, true, true, false]),
            (NotifyOn::Unknown, [false, true, true, true]),
            (NotifyOn::Always, [true, true, true, true]),
        ];
        for (on, expected) in table {
            s.on = on;
            let got: Vec<bool> = [State::Ok, State::Warning, State::Critical, State::Unknown]
                .into_iter()
                .map(|state| {
                    r.state = state;
                    wanted(&s, &r)
                })
                .collect();
            assert_eq!(got, expected, "{on:?}");
            // A failed scan counts as UNKNOWN.
            assert_eq!(wanted(&s, &down), expected[3], "{on:?}");
        }
    }

    #[test]
    fn backoff_doubles_from_the_first_retry() {
        assert_eq!(backoff(0.5, 1), Duration::from_secs(1));
        assert_eq!(backoff(0.5, 2), Duration::from_secs(2));
        assert_eq!(backoff(0.0, 3), Duration::ZERO);
        assert_eq!(backoff(f64::NAN, 1), Duration::ZERO);
    }

    #[test]
    fn a_proxy_without_the_opt_out_is_refused_before_any_traffic() {
        let mut s = settings("https://hooks.example/x", BodyFormat::Generic);
        s.proxy = Some("http://proxy.invalid:3128".into());
        s.retries = 5;
        s.backoff_factor = 60.0;
        // Final at once: no retries, no waiting, nothing resolved or connected.
        let error = deliver(
            &s,
            &scanned("cloud.example", "8.1.0", None),
            &Budget::unlimited(),
        )
        .unwrap_err();
        assert!(
            error.contains("validated addresses are pinned, so a resolving proxy cannot be used without --allow-private-webhooks"),
            "{error}"
        );
    }

    #[test]
    fn a_blocked_literal_is_refused_before_any_traffic() {
        let mut s = settings("http://169.254.169.254/latest", BodyFormat::Generic);
        s.backoff_factor = 60.0;
        let error = deliver(
            &s,
            &scanned("cloud.example", "8.1.0", None),
            &Budget::unlimited(),
        )
        .unwrap_err();
        assert_eq!(
            error,
            "http://169.254.169.254/…: destination 169.254.169.254 refused: 169.254.169.254 \
             is a link-local address; pass --allow-private-webhooks to deliver to private, \
             loopback or link-local receivers"
        );
    }
}
