//! The MCP transport, sessions, tools and prompts, unit by unit.

use super::schemas::*;
use super::tools::*;
use super::*;

#[test]
fn versions_are_echoed_when_spoken_else_the_newest() {
    assert_eq!(negotiate("2025-03-26"), "2025-03-26");
    assert_eq!(negotiate("2025-06-18"), "2025-06-18");
    assert_eq!(negotiate("2024-11-05"), "2025-11-25");
    assert_eq!(negotiate("nonsense"), "2025-11-25");
}

/// Each tool's arguments are the typed request its handler reads, and nothing else: the
/// input schema is that type's, so a member the handler reads is in it.
#[test]
fn every_tool_takes_exactly_its_typed_request() {
    let requests: [(&str, &[&str]); 6] = [
        ("scan_instance", ScanRequest::FIELDS),
        ("scan_instances", ScanTargets::FIELDS),
        ("get_scan_result", ScanRef::FIELDS),
        ("plan_remediation", ScanRef::FIELDS),
        ("export_scan", ExportRequest::FIELDS),
        ("erase_instance_data", EraseRequest::FIELDS),
    ];
    let tools = tools();
    assert_eq!(tools.len(), requests.len());
    for (tool, (name, fields)) in tools.iter().zip(requests) {
        assert_eq!(tool["name"], name);
        let schema = &tool["inputSchema"];
        let properties: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = fields.to_vec();
        expected.sort_unstable();
        assert_eq!(properties, expected, "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
    }
    // Arguments of every member the schema names are read as the handler's type.
    let all = json!({"uuid": "u", "format": "json", "erase_key": "k",
                     "target_urls": ["a.example"], "waive": ["hstsPreload"],
                     "release_track": "lts"});
    let only = |fields: &[&str]| Arguments {
        tool: "t",
        members: fields
            .iter()
            .map(|f| (f.to_string(), all[*f].clone()))
            .collect(),
    };
    assert!(only(ScanTargets::FIELDS).read::<ScanTargets>().is_ok());
    assert!(only(ScanRef::FIELDS).read::<ScanRef>().is_ok());
    assert!(only(ExportRequest::FIELDS).read::<ExportRequest>().is_ok());
    assert!(only(EraseRequest::FIELDS).read::<EraseRequest>().is_ok());
}

/// Each tool's structured content is its answer type, written as its output schema says
/// (every entry of scan_instances: a full one and a refused one).
#[test]
fn every_answer_is_written_as_its_output_schema_says() {
    use super::super::schema::assert_written_as_described;
    let text = || "x".to_string();
    assert_written_as_described(ScanState {
        uuid: text(),
        status: "queued",
        result: Value::Null,
    });
    assert_written_as_described(SubmittedScan {
        uuid: text(),
        status: "completed",
        result: json!({}),
        erase_key: text(),
    });
    let refused = TargetEntry {
        target_url: text(),
        status: "refused",
        error: Some(text()),
        ..TargetEntry::default()
    };
    assert_written_as_described(refused);
    let scanned = TargetEntry {
        target_url: text(),
        uuid: Some(text()),
        status: "completed",
        grade: Some(text()),
        state: Some(State::Ok),
        submitter_grade: Some(text()),
        error: Some(text()),
        retry_after: Some(1),
        erase_key: Some(text()),
        same_as: Some(0),
    };
    assert_eq!(json!(&scanned)["state"], "OK");
    assert_written_as_described(scanned);
    assert_written_as_described(TargetEntries { results: vec![] });
    assert_written_as_described(PlanAnswer {
        uuid: text(),
        host: text(),
        grade: text(),
        remediation_plan: RemediationPlan::default(),
    });
    assert_written_as_described(RemediationPlan::default());
    assert_written_as_described(ExportAnswer {
        uuid: text(),
        format: text(),
        mime_type: "text/csv",
        filename: text(),
        bytes: 1,
    });
}

#[test]
fn every_tool_has_both_schemas() {
    for tool in tools() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
    }
}
