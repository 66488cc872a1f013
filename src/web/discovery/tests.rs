//! Unit tests of `discovery`.

use super::*;
use crate::web::api::{RELEASE_TRACKS, parse_submission, statuses};
use crate::web::routes::ROUTES;

const BASE: &str = "https://scan.example.com";

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn every_field_of_the_handler_is_a_typed_property_and_nothing_else() {
    let schema = submission_schema();
    let properties = schema["properties"].as_object().unwrap();
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    let mut fields = ScanRequest::FIELDS.to_vec();
    fields.sort_unstable();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, fields);
    for (name, property) in properties {
        assert!(
            property["type"].is_string(),
            "{name} has no type: {property}"
        );
    }
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["target_url"]));
    assert_eq!(schema["properties"]["waive"]["type"], "array");
    assert_eq!(schema["properties"]["waive"]["items"]["type"], "string");
    // The record type the handler fills has exactly these fields too.
    let record = serde_json::to_value(crate::web::store::ScanRequest::default()).unwrap();
    let mut record_fields: Vec<&str> = record
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    record_fields.sort_unstable();
    assert_eq!(record_fields, fields);
}

#[test]
fn the_enums_are_the_handlers_constants_and_the_handler_agrees() {
    let schema = submission_schema();
    let tracks = strings(&schema["properties"]["release_track"]["enum"]);
    assert_eq!(tracks, RELEASE_TRACKS);
    let formats = strings(&schema["properties"]["format"]["enum"]);
    assert_eq!(formats, EXPORT_FORMATS);
    for track in tracks {
        let body = json!({"target_url": "a.example", "release_track": track});
        assert!(
            parse_submission(body.to_string().as_bytes()).is_ok(),
            "{track}"
        );
    }
    for format in &formats {
        let body = json!({"target_url": "a.example", "format": format});
        assert!(
            parse_submission(body.to_string().as_bytes()).is_ok(),
            "{format}"
        );
    }
    // What the schema refuses, the handler refuses.
    for body in [
        json!({}),
        json!({"target_url": "a.example", "release_track": "nightly"}),
        json!({"target_url": "a.example", "format": "xml"}),
        json!({"target_url": "a.example", "waive": [1]}),
        json!({"target_url": "a.example", "another": true}),
    ] {
        assert!(
            parse_submission(body.to_string().as_bytes()).is_err(),
            "{body}"
        );
    }
    // The schema's examples pass the handler.
    for example in schema["examples"].as_array().unwrap() {
        assert!(
            parse_submission(example.to_string().as_bytes()).is_ok(),
            "{example}"
        );
    }
    // Every export has its path value, its media type and its link.
    let doc = openapi(BASE, Mcp::Open, ROUTES);
    let export = &doc["paths"]["/api/scans/{uuid}/export/{format}"];
    assert_eq!(
        strings(&export["parameters"][1]["schema"]["enum"]),
        EXPORT_FORMATS
    );
    let content = export["get"]["responses"]["200"]["content"]
        .as_object()
        .unwrap();
    assert_eq!(content.len(), EXPORT_FORMATS.len());
    for format in formats {
        let media = crate::web::export::media_type(format)
            .split(';')
            .next()
            .unwrap();
        assert!(content.contains_key(media), "{media}");
        let links = &doc["components"]["schemas"]["Links"]["properties"]["exports"];
        assert!(links["properties"][format].is_object(), "{format}");
    }
}

#[test]
fn the_states_are_the_stores_status_enum() {
    let all = statuses();
    assert_eq!(all.len(), 3);
    for status in &all {
        // As the handler writes it, and as serde writes it.
        assert_eq!(
            serde_json::to_value(status).unwrap(),
            json!(status.as_str())
        );
    }
    let schemas = &openapi(BASE, Mcp::Open, ROUTES)["components"]["schemas"];
    let mut named = strings(&schemas["ScanPending"]["properties"]["status"]["enum"]);
    named.push(
        schemas["ScanCompleted"]["properties"]["status"]["const"]
            .as_str()
            .unwrap(),
    );
    let expected: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
    assert_eq!(named, expected);
    assert_eq!(
        schemas["ScanAccepted"]["properties"]["status"]["const"],
        Status::Queued.as_str()
    );
    assert_eq!(
        schemas["ScanCompleted"]["properties"]["result"]["$ref"],
        "#/components/schemas/Result"
    );
    assert_eq!(schemas["Result"]["type"], "object");
}

#[test]
fn ai_json_names_every_document_and_the_mcp_client_configuration() {
    let doc = ai(BASE, Mcp::Open);
    assert_eq!(doc["authentication"], "none");
    assert_eq!(doc["mcp"]["authentication"], "none");
    assert!(ai(BASE, Mcp::Off).get("mcp").is_none());
    assert_eq!(doc["documents"]["openapi"], format!("{BASE}/openapi.json"));
    assert_eq!(doc["documents"]["arazzo"], format!("{BASE}/arazzo.json"));
    assert_eq!(
        doc["mcp"]["client_configuration"],
        json!({"type": "http", "url": format!("{BASE}/mcp")})
    );
    let workflows = arazzo(BASE);
    let ids: Vec<&str> = workflows["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["workflowId"].as_str().unwrap())
        .collect();
    assert_eq!(strings(&doc["workflows"]["ids"]), ids);
}

#[test]
fn the_workflow_uses_operations_the_openapi_document_has() {
    let api = openapi(BASE, Mcp::Open, ROUTES);
    let mut operations = Vec::new();
    for item in api["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            if let Some(id) = operation.get("operationId").and_then(Value::as_str) {
                operations.push(id);
            }
        }
    }
    let workflow = arazzo(BASE);
    assert_eq!(
        workflow["sourceDescriptions"][0]["url"],
        format!("{BASE}/openapi.json")
    );
    for step in workflow["workflows"][0]["steps"].as_array().unwrap() {
        let id = step["operationId"].as_str().unwrap();
        assert!(operations.contains(&id), "{id} not in {operations:?}");
    }
    // The workflow's inputs are the submission plus the default export.
    let inputs = &workflow["workflows"][0]["inputs"];
    assert_eq!(inputs["properties"]["format"]["default"], "json");
    assert_eq!(inputs["additionalProperties"], false);
}
