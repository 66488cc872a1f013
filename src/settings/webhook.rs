//! Where a run's results are posted: the webhook's settings.

use super::*;

pub(super) fn webhook_settings(
    l: &Layers,
    retries: u32,
    backoff_factor: f64,
    proxy: Option<String>,
) -> Result<Option<crate::notify::WebhookSettings>, SettingsError> {
    use crate::notify::{BodyFormat, NotifyOn, WebhookSettings};
    let Some(url) = l.given(Id::webhook_url)? else {
        return Ok(None);
    };
    let named = crate::notify::url_named(url.reference.as_deref());
    let lower = url.text.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(SettingsError(format!(
            "{named} is not an http(s) address; give the receiver's URL"
        )));
    }
    let on: Option<NotifyOn> = l.chosen(Id::webhook_on)?;
    let format: Option<BodyFormat> = l.chosen(Id::webhook_format)?;
    let mut headers = Vec::new();
    for (n, entry) in l.given_list(Id::webhook_header)?.iter().enumerate() {
        // Entries are named by position, never quoted: a header carries credentials.
        let (name, value) = entry
            .text
            .split_once(':')
            .filter(|(n, _)| !n.trim().is_empty() && !n.contains(char::is_whitespace))
            .ok_or_else(|| {
                let from = entry
                    .reference
                    .as_ref()
                    .map(|r| format!(" (from {r})"))
                    .unwrap_or_default();
                SettingsError(format!(
                    "--webhook-header entry {}{from} must be 'Name: value', e.g. \
                     'Authorization: Bearer xyz'",
                    n + 1
                ))
            })?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let settings = WebhookSettings {
        url: url.text,
        url_reference: url.reference,
        on: on.unwrap_or(NotifyOn::Critical),
        format: format.unwrap_or(BodyFormat::Generic),
        headers,
        timeout: l.value(Id::webhook_timeout)?,
        allow_private: l.switch(Id::allow_private_webhooks)?,
        retries,
        backoff_factor,
        proxy,
    };
    settings.validate()?;
    Ok(Some(settings))
}
