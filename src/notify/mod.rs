//! Webhook notifications (`--webhook-url`) and the destination guard. (Being written.)

use crate::report::ScanResult;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotifyOn {
    Critical,
    Warning,
    Unknown,
    Always,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyFormat {
    Generic,
    ChatBlocks,
    ChatEmbed,
    PushTopic,
    PushServer,
}

#[derive(Clone, Debug)]
pub struct WebhookSettings {
    pub url: String,
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
    /// Validates the settings at start (a `pushtopic` URL without a topic is refused).
    pub fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Whether a host's result is to be notified.
pub fn wanted(_settings: &WebhookSettings, _result: &ScanResult) -> bool {
    false
}

/// Delivers one host's notification, retrying; `Err` says why it failed in the end.
pub fn deliver(_settings: &WebhookSettings, _result: &ScanResult) -> Result<(), String> {
    Ok(())
}
