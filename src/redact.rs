//! The last guard for secrets: whatever the run prints (every output format, UNKNOWN lines,
//! `--debug` log lines) passes through [`apply`], which replaces every secret the settings
//! hold by a label naming where it came from.
//!
//! The messages themselves are written not to quote secrets (`Given::shown`, `Given::scrub`,
//! the webhook and proxy displays); this catches what a lower layer might still quote, such as
//! a transport error that repeats a URL or a file error that repeats a path read from a
//! reference.
//!
//! Which values are secrets:
//! - values read from a reference (`env://`, `file://`, `secret://`, `exec://`, `_file`) of the
//!   free-form settings: paths, URLs, tokens, headers ([`FREE_FORM`]). Enumerations, numbers and
//!   the targets are shown by design (`on the production track`, the host being scanned), so
//!   they are never replaced in the output; messages about a bad one name its reference;
//! - secrets by nature, however given: the release-feed token, webhook URLs and header values,
//!   and the user information of the proxy address.

use std::sync::OnceLock;

/// Settings whose values are free text that never needs to be shown back.
pub const FREE_FORM: &[&str] = &[
    "ca_file",
    "proxy",
    "policy",
    "baseline",
    "config",
    "release_schedule",
    "vulnerability_db",
    "vulnerability_feed",
    "releases_url",
    "self_update_url",
    "state_dir",
    "release_token",
    "webhook_url",
    "webhook_header",
    "token",
    "store",
    "base_url",
    "mcp_token",
];

/// Shorter values are not replaced: they would match ordinary text (a reference to a file
/// holding `1` must not blank every `1` of the output).
pub const MIN_SECRET_LEN: usize = 6;

/// One value never to print, and what to print instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Secret {
    pub value: String,
    pub label: String,
}

impl Secret {
    /// A value read from `reference`: shown as `(value of env://HOOK not shown)`.
    pub fn from_reference(value: &str, reference: &str) -> Secret {
        Secret {
            value: value.trim().to_string(),
            label: format!("(value of {} not shown)", safe_label(reference)),
        }
    }

    /// A secret written literally (a token, a password in a URL).
    pub fn literal(value: &str, what: &str) -> Secret {
        Secret {
            value: value.trim().to_string(),
            label: format!("({what} not shown)"),
        }
    }
}

/// The label goes into every format (JSON strings, XML attributes, perfdata-free lines): keep
/// it to characters none of them treats specially.
fn safe_label(reference: &str) -> String {
    reference
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '"' | '\\' | '<' | '>' | '&' | '|' | '\'') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// Replaces every secret in `text`, longest first (a token inside a URL is covered by the URL's
/// own entry before its own).
pub fn redact(text: &str, secrets: &[Secret]) -> String {
    let mut ordered: Vec<&Secret> = secrets
        .iter()
        .filter(|s| s.value.chars().count() >= MIN_SECRET_LEN)
        .collect();
    ordered.sort_by_key(|s| std::cmp::Reverse(s.value.len()));
    let mut out = text.to_string();
    for secret in ordered {
        out = out.replace(&secret.value, &secret.label);
        // JSON output escapes `"` and `\`; catch the escaped form too.
        let escaped = serde_json::to_string(&secret.value).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        if escaped != secret.value {
            out = out.replace(escaped, &secret.label);
        }
    }
    out
}

static INSTALLED: OnceLock<Vec<Secret>> = OnceLock::new();

/// Makes the secrets of this process's settings known to [`apply`] (first call wins: a process
/// runs with one set of settings).
pub fn install(secrets: Vec<Secret>) {
    let _ = INSTALLED.set(secrets);
}

/// [`redact`] with the installed secrets; text passes unchanged before [`install`].
pub fn apply(text: &str) -> String {
    INSTALLED
        .get()
        .map_or_else(|| text.to_string(), |secrets| redact(text, secrets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_replaced_by_their_reference_longest_first() {
        let secrets = [
            Secret::literal("XXXXSECRET", "token"),
            Secret::from_reference(
                "https://hooks.example.com/services/T000/XXXXSECRET",
                "env://HOOK",
            ),
        ];
        let text = "POST https://hooks.example.com/services/T000/XXXXSECRET failed; XXXXSECRET";
        assert_eq!(
            redact(text, &secrets),
            "POST (value of env://HOOK not shown) failed; (token not shown)"
        );
    }

    #[test]
    fn short_values_and_escaped_forms() {
        let secrets = [
            Secret::from_reference("3", "env://WARNING"),
            Secret::from_reference("pa\"ss\\word", "file:///run/p\"w"),
        ];
        let json = serde_json::to_string("rating 3, pa\"ss\\word").unwrap();
        assert_eq!(
            redact(&json, &secrets),
            "\"rating 3, (value of file:///run/p_w not shown)\""
        );
    }
}
