//! The JSON Schemas the tools state for their arguments and answers.

use super::*;

pub(super) fn uuid_keywords() -> Value {
    json!({"description": "the scan's uuid, as scan_instance answered it"})
}

/// The erase key as the submitting tools answer it and erase_instance_data takes it.
pub(super) fn erase_key_keywords() -> Value {
    json!({
        "pattern": "^[0-9a-f]{64}$",
        "description": "the scan's erase key, answered to its submitter only (by scan_instance \
            or scan_instances, never by get_scan_result); erase_instance_data needs it",
    })
}

/// The schema of the submission's member `name`, with the description `description`.
pub(super) fn submission_member(name: &str, description: &str) -> Value {
    let mut schema = ScanRequest::schema()["properties"][name].take();
    schema["description"] = json!(description);
    schema
}

described! {
    /// `scan_instances`' arguments: the targets, each read with the rest as `scan_instance`
    /// reads its arguments (a target that is no string is refused in its place).
    #[derive(Deserialize)]
    pub(super) struct ScanTargets {
        pub(super) target_urls: Value => json!({
            "type": "array",
            "items": {"type": "string", "description": "an instance's hostname, address or URL"},
            "minItems": 1,
            "maxItems": MAX_TARGETS,
            "description": "the instances, e.g. [\"cloud.example.com\", \"files.example.org\"]",
        }),
        pub(super) waive: Option<Value> => submission_member("waive", "check id patterns to waive on \
            every target; each grade stays the one without them (submitter_grade is with them)"),
        pub(super) release_track: Option<Value> => submission_member("release_track", "the release \
            track the instances follow; auto detects it"),
    }
}

described! {
    /// The arguments of the tools that read one scan.
    #[derive(Deserialize)]
    pub(super) struct ScanRef {
        pub(super) uuid: String => uuid_keywords(),
    }
}

described! {
    #[derive(Deserialize)]
    pub(super) struct ExportRequest {
        pub(super) uuid: String => uuid_keywords(),
        pub(super) format: String => json!({"enum": EXPORT_FORMATS}),
    }
}

described! {
    #[derive(Deserialize)]
    pub(super) struct EraseRequest {
        pub(super) uuid: String => uuid_keywords(),
        pub(super) erase_key: String => erase_key_keywords(),
    }
}

/// The states of a scan, as its answers name them.
pub(super) fn status_names() -> Vec<&'static str> {
    statuses().into_iter().map(Status::as_str).collect()
}

pub(super) fn status_keywords() -> Value {
    json!({"enum": status_names()})
}

pub(super) fn result_keywords() -> Value {
    json!({
        "type": ["object", "null"],
        "description": "the result document once completed (grade, state, findings, \
            remediationPlan), else null",
    })
}

described! {
    /// `get_scan_result`'s answer.
    #[derive(Serialize)]
    pub(super) struct ScanState {
        pub(super) uuid: String => json!({}),
        pub(super) status: &'static str => status_keywords(),
        pub(super) result: Value => result_keywords(),
    }
}

described! {
    /// `scan_instance`'s answer: the scan's state, with the erase key of the new submission.
    #[derive(Serialize)]
    pub(super) struct SubmittedScan {
        pub(super) uuid: String => json!({}),
        pub(super) status: &'static str => status_keywords(),
        pub(super) result: Value => result_keywords(),
        pub(super) erase_key: String => erase_key_keywords(),
    }
}

described! {
    /// One target of `scan_instances`: its scan as it stands after the wait, or why not.
    #[derive(Default, Serialize)]
    pub(super) struct TargetEntry {
        pub(super) target_url: String => json!({}),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) uuid: Option<String> => json!({}),
        pub(super) status: &'static str =>
            json!({"enum": ([status_names(), vec!["refused", "error"]].concat())}),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) grade: Option<String> => json!({"description": "the grade without the submitter's waivers"}),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) state: Option<State> => json!({}),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) submitter_grade: Option<String> => json!({
            "description": "the grade with the call's waive patterns (only when it named any)",
        }),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) error: Option<String> => json!({}),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) retry_after: Option<i64> => json!({}),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) erase_key: Option<String> => erase_key_keywords(),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) same_as: Option<usize> => json!({
            "description": "this target is the same instance as the entry at this index \
                (0-based), and answers with its scan",
        }),
    }
}

described! {
    /// `scan_instances`' answer: one entry per target, in the order named.
    #[derive(Serialize)]
    pub(super) struct TargetEntries {
        pub(super) results: Vec<TargetEntry> => json!({}),
    }
}

/// A finding's monitoring state, as the answers write it.
impl Schema for State {
    fn schema() -> Value {
        json!({"type": "string"})
    }
}

described! {
    /// `plan_remediation`'s answer.
    #[derive(Serialize)]
    pub(super) struct PlanAnswer {
        pub(super) uuid: String => json!({}),
        pub(super) host: String => json!({}),
        pub(super) grade: String => json!({}),
        pub(super) remediation_plan as "remediationPlan": RemediationPlan => json!({}),
    }
}

/// The report's plan, as `plan_remediation` writes it (every member, always).
impl Schema for RemediationPlan {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "steps": {"type": "array", "items": {"type": "object"}},
                "groups": {"type": "array", "items": {"type": "object"}},
                "groupSummary": {"type": "array", "items": {"type": "string"}},
                "snippets": {
                    "type": "array",
                    "items": {"type": "object"},
                    "description": "the steps' configuration snippets, one per file and form",
                },
            },
            "required": ["steps", "groups", "groupSummary", "snippets"],
        })
    }
}

described! {
    /// `export_scan`'s answer besides the file itself (in the content).
    #[derive(Serialize)]
    pub(super) struct ExportAnswer {
        pub(super) uuid: String => json!({}),
        pub(super) format: String => json!({"enum": EXPORT_FORMATS}),
        pub(super) mime_type as "mimeType": &'static str => json!({}),
        pub(super) filename: String => json!({}),
        pub(super) bytes: usize => json!({}),
    }
}
