//! The result document's JSON Schema, derived from its types: `schemars` reads the serde
//! attributes (renames, skipped and optional members, enums) as serde writes them, so the
//! published contract cannot drift from the document. `docs/result.schema.json` is
//! [`document`] written out (`tests/it/json_schema.rs` fails when the file differs, and
//! validates every JSON output against it); the OpenAPI document's `Result` is
//! [`openapi_components`].

use super::{GRADES, ScanResult};
use schemars::Schema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::transform::RecursiveTransform;
use serde_json::{Map, Value, json};

pub const ID: &str =
    "https://github.com/storage-security/check-storage-security/docs/result.schema.json";

/// The generator of what the program writes: members it always writes are required, an
/// object has no member its type does not name, and no member states the default a reader
/// would take (every member is written).
fn generator(definitions_path: &'static str) -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|s| s.definitions_path = definitions_path.into())
        .with_transform(RecursiveTransform(written))
        .into_generator()
}

fn written(schema: &mut Schema) {
    schema.remove("default");
    if schema.get("properties").is_some() {
        schema.insert("additionalProperties".into(), false.into());
    }
}

/// A grade: one of [`GRADES`], or `U` for an unknown rating.
pub(super) fn grade(schema: &mut Schema) {
    let mut grades: Vec<&str> = GRADES.iter().rev().copied().collect();
    grades.push("U");
    schema.insert("enum".into(), json!(grades));
}

/// The grade of a known rating.
pub(super) fn known_grade(schema: &mut Schema) {
    let grades: Vec<&str> = GRADES.iter().rev().copied().collect();
    schema.insert("enum".into(), json!(grades));
}

/// A map of names to SHA-256 digests in hex.
pub(super) fn digests(schema: &mut Schema) {
    let digest = json!({"type": "string", "pattern": "^[0-9a-f]{64}$"});
    schema.insert("additionalProperties".into(), digest);
}

/// `--format json`: one array, one result document per host.
pub fn document() -> Value {
    let mut schema = generator("/$defs/")
        .into_root_schema_for::<Vec<ScanResult>>()
        .to_value();
    let header = json!({
        "$id": ID,
        "title": "check-storage-security result (--format json)",
        "description": "One array, one result document per host, even for a single host. \
                        Generated from the types of src/report.rs (make man writes it); \
                        tests/it/json_schema.rs validates every JSON output against it.",
    });
    if let (Some(schema), Value::Object(header)) = (schema.as_object_mut(), header) {
        schema.extend(header);
    }
    schema
}

/// The result document and every type it names, as OpenAPI `components/schemas` (the
/// document is `Result`).
pub fn openapi_components() -> Map<String, Value> {
    let mut generator = generator("/components/schemas/");
    let result = generator.subschema_for::<ScanResult>().to_value();
    let mut components = generator.take_definitions(true);
    // `ScanResult` is named `Result` in the API's documents.
    if let Some(reference) = result.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or_default().to_string();
        if let Some(schema) = components.remove(&name) {
            components.insert("Result".into(), schema);
        }
    }
    components
}
