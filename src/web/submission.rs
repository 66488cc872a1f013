//! What a submitter asks for (`POST /api/scans`, the page's form, MCP `scan_instance`), as the
//! API validates it (`api::parse_submission`) and the store keeps it, declared with its schema
//! (`ScanSubmission` of `/openapi.json`, `scan_instance`'s `inputSchema`).

use super::schema::described;
use serde::{Deserialize, Serialize};
use serde_json::json;

pub const RELEASE_TRACKS: [&str; 4] = crate::family::TRACK_CHOICES;
pub const EXPORT_FORMATS: [&str; 4] = ["json", "csv", "sarif", "pdf"];
/// A target longer than this is no instance address.
pub const MAX_TARGET_CHARS: usize = 2048;
/// Waiver patterns per submission, and the length of one.
pub const MAX_WAIVERS: usize = 50;
pub const MAX_WAIVER_CHARS: usize = 200;

described! {
    /// What the submitter asked for, as validated by the API.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    pub struct ScanRequest {
        /// The target as submitted (`cloud.example.com`, `https://cloud.example.com:8443/`).
        pub target_url: String => json!({
            "minLength": 1,
            "maxLength": MAX_TARGET_CHARS,
            "description": "The instance to scan: a hostname, an address or an https/http URL, \
                            with an optional port (one instance: no commas).",
            "examples": ["cloud.example.com", "cloud.example.com:8443"],
        }),
        /// Waiver patterns (the plugin's syntax).
        pub waive: Vec<String> = default => json!({
            "maxItems": MAX_WAIVERS,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_WAIVER_CHARS},
            "description": "Check id patterns to waive, in the plugin's waiver syntax \
                            (hstsPreload, versionDisclosure:X-*). The result's grade, state and \
                            findings stay those without them; result.submitterWaivers holds the \
                            grade and state with them and the findings they hide.",
            "examples": [["hstsPreload"]],
        }),
        /// One of [`RELEASE_TRACKS`].
        pub release_track: Option<String> => json!({
            "enum": RELEASE_TRACKS,
            "description": "The release track the instance follows; auto detects it.",
        }),
        /// The preferred export, one of [`EXPORT_FORMATS`].
        pub format: Option<String> => json!({
            "enum": EXPORT_FORMATS,
            "description": "The preferred export.",
        }),
    }
}
