//! JSON Schemas of the typed requests and answers of the API and MCP, written once with their
//! struct: [`described!`] declares a struct and, per field, what the JSON
//! Schema says beyond the field's type, and implements [`Schema`] and `FIELDS` from the same
//! field list. `/openapi.json`, `/arazzo.json` and the MCP tools' `inputSchema` are built from
//! these, so a field a handler reads is in the documents by construction.
//! Use it as `use super::schema::described;` (a path through `crate::` would read as a module
//! to `tests/it/layering.rs`).
//!
//! A field's name is its JSON name, or the one after `as` (`poll as "self"`: the macro writes
//! the serde rename, so there is no other); its schema is its type's ([`Schema`]: strings,
//! integers, arrays, objects) with the field's own keywords laid over it; keywords with a
//! `$ref` replace it. A member is required unless its type is an `Option` or the field is
//! written `= default` (the macro writes `#[serde(default)]`: a request may leave it out).

use serde_json::{Map, Value, json};

/// A type whose JSON shape the documents describe.
pub trait Schema {
    fn schema() -> Value;
    /// Whether an object must carry a member of this type (`Option` and lists may be left out).
    const REQUIRED: bool = true;
}

/// Implements [`Schema`] for each type of a row as the row's schema.
macro_rules! schemas {
    ($($($type:ty),+ => $schema:tt;)*) => {$($(
        impl Schema for $type {
            fn schema() -> Value {
                json!($schema)
            }
        }
    )+)*};
}

schemas! {
    String, &str => {"type": "string"};
    u8, i64, usize => {"type": "integer"};
    // An object: the field's keywords say which members.
    Map<String, Value> => {"type": "object"};
    // Any JSON: the field's keywords say what.
    Value => {};
}

impl<T: Schema> Schema for Option<T> {
    fn schema() -> Value {
        T::schema()
    }
    const REQUIRED: bool = false;
}

impl<T: Schema> Schema for Vec<T> {
    fn schema() -> Value {
        json!({"type": "array", "items": T::schema()})
    }
}

/// The schema of a member: its type's, with the field's keywords over it (a `$ref` alone).
pub fn member(typed: Value, keywords: Value) -> Value {
    match (typed, keywords) {
        (_, keywords) if keywords.get("$ref").is_some() => keywords,
        (Value::Object(mut typed), Value::Object(keywords)) => {
            typed.extend(keywords);
            Value::Object(typed)
        }
        (typed, _) => typed,
    }
}

/// An object of `members` (name, required, schema).
pub fn object(members: &[(&str, bool, Value)]) -> Value {
    let mut schema = json!({"type": "object", "properties": {}});
    let mut required = Vec::new();
    for (name, needed, member) in members {
        schema["properties"][*name] = member.clone();
        if *needed {
            required.push(*name);
        }
    }
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The schema of a request: `T`'s, refusing any other member (as the handlers do).
pub fn input<T: Schema>() -> Value {
    let mut schema = T::schema();
    schema["additionalProperties"] = json!(false);
    schema
}

/// Declares a struct and its [`Schema`](crate::web::schema::Schema): each field
/// `name: Type => keywords` (a `serde_json::Value` of what the schema says beyond the type),
/// optionally `name as "json name"` and `Type = default`, and `FIELDS`, the members in order.
macro_rules! described {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $field_vis:vis $field:ident $(as $json:literal)? : $type:ty $(= $default:ident)?
                => $keywords:expr
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$field_meta])* $(#[serde(rename = $json)])? $(#[serde($default)])?
                $field_vis $field: $type
            ),*
        }

        impl $name {
            /// The members, as the schema names them.
            #[allow(dead_code)]
            pub const FIELDS: &[&str] = &[$([$($json,)? stringify!($field)][0]),*];
        }

        impl $crate::web::schema::Schema for $name {
            fn schema() -> serde_json::Value {
                use $crate::web::schema::{Schema, member, object};
                object(&[$((
                    [$($json,)? stringify!($field)][0],
                    <$type as Schema>::REQUIRED $(&& stringify!($default).is_empty())?,
                    member(<$type as Schema>::schema(), $keywords),
                )),*])
            }
        }
    };
}
pub(crate) use described;

/// The members a value serializes to are its schema's properties: every required one, and
/// nothing the schema does not name (a serde rename or skip would break this).
#[cfg(test)]
pub fn assert_written_as_described<T: serde::Serialize + Schema>(value: T) {
    let written = serde_json::to_value(value).unwrap();
    let schema = T::schema();
    let properties = schema["properties"].as_object().unwrap();
    for name in written.as_object().unwrap().keys() {
        assert!(properties.contains_key(name), "{name} is not in {schema}");
    }
    for name in schema["required"].as_array().into_iter().flatten() {
        assert!(
            written.get(name.as_str().unwrap()).is_some(),
            "{name}: {written}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::api::{
        EXPORT_FORMATS, Erased, ErrorBody, ErrorDetail, Health, Links, ScanAccepted, ScanCompleted,
        ScanPending,
    };
    use crate::web::store::ScanRequest;
    use serde::{Deserialize, Serialize};

    described! {
        #[derive(Serialize, Deserialize, Default)]
        struct Example {
            name: String => json!({"minLength": 1}),
            tags: Vec<String> = default => json!({"maxItems": 2}),
            count: Option<u8> => json!({"$ref": "#/elsewhere"}),
            same as "self": Vec<u8> => json!({}),
        }
    }

    #[test]
    fn a_described_struct_is_its_fields_types_and_keywords() {
        assert_eq!(Example::FIELDS, ["name", "tags", "count", "self"]);
        assert_eq!(
            Example::schema(),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                    "count": {"$ref": "#/elsewhere"},
                    "self": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["name", "self"],
            })
        );
        assert_eq!(input::<Example>()["additionalProperties"], false);
        // `as` and `= default` are serde's too: the JSON name, and a member left out.
        let read: Example = serde_json::from_value(json!({"name": "n", "self": [1]})).unwrap();
        assert_eq!((read.tags.len(), &read.same), (0, &vec![1]));
        assert_eq!(serde_json::to_value(&read).unwrap()["self"], json!([1]));
    }

    #[test]
    fn every_typed_answer_and_request_is_written_as_its_schema_says() {
        let text = || "x".to_string();
        assert_written_as_described(ScanRequest {
            target_url: text(),
            waive: vec![text()],
            release_track: Some(text()),
            format: Some(text()),
        });
        let links = || Links {
            poll: text(),
            page: text(),
            export: None,
            exports: EXPORT_FORMATS
                .iter()
                .map(|f| (f.to_string(), json!(text())))
                .collect(),
        };
        assert_written_as_described(links());
        assert_written_as_described(Links {
            export: Some(text()),
            ..links()
        });
        assert_written_as_described(Health { status: "ok" });
        assert_written_as_described(ScanAccepted {
            uuid: text(),
            status: "queued",
            links: links(),
            erase_key: text(),
        });
        assert_written_as_described(ScanPending {
            uuid: text(),
            status: "queued",
            links: links(),
        });
        assert_written_as_described(ScanCompleted {
            uuid: text(),
            status: "completed",
            result: json!({}),
        });
        assert_written_as_described(Erased { erased: 1 });
        let detail = || ErrorDetail {
            code: "c",
            message: text(),
            field: Some("f"),
        };
        assert_written_as_described(detail());
        assert_written_as_described(ErrorBody { error: detail() });
        assert_eq!(
            ErrorBody::schema()["properties"]["error"]["required"],
            json!(["code", "message"])
        );
    }
}
