//! The configuration file: where it is looked for, how it is read (JSON for a `.json` suffix,
//! YAML otherwise) and how its nested keys become the dotted keys of the option table.

use super::options::{self, OptionSpec};
use super::secrets::Environment;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Configuration files are small; a larger one is a mistake (or not a configuration file).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A value as written in the file, before typing.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigValue {
    Scalar(String),
    List(Vec<String>),
}

#[derive(Debug, Default)]
pub struct ConfigFile {
    pub path: PathBuf,
    /// Dotted key (`scanner.tls_min_days`) to value; `_file` keys are kept as written.
    pub values: BTreeMap<String, ConfigValue>,
}

/// Where the file comes from: an explicit path must exist; the search list is best effort.
pub fn locate(explicit: Option<&str>, env: &dyn Environment) -> Result<Option<PathBuf>, String> {
    if let Some(path) = explicit {
        let path = PathBuf::from(path);
        if !path.is_file() {
            return Err(format!(
                "configuration file {} does not exist or is not a file; fix the path given to \
                 --config or COS_CONFIG_FILE",
                path.display()
            ));
        }
        return Ok(Some(path));
    }
    Ok(search_list(env).into_iter().find(|p| p.is_file()))
}

/// The spec's search order after `--config` and `COS_CONFIG_FILE`. The last entry is a
/// directory; we look for the usual file names inside it.
pub fn search_list(env: &dyn Environment) -> Vec<PathBuf> {
    let mut list = vec![
        PathBuf::from("./.env.json"),
        PathBuf::from("./check-storage-security.yml"),
    ];
    if let Some(home) = env.var("HOME").filter(|h| !h.is_empty()) {
        list.push(Path::new(&home).join(".config/check-storage-security/.env.json"));
    }
    let etc = Path::new("/etc/check-storage-security");
    for name in ["config.json", "config.yml", "config.yaml"] {
        list.push(etc.join(name));
    }
    list
}

pub fn load(path: &Path) -> Result<ConfigFile, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("cannot read configuration file {shown}: {e}"))?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(format!(
            "configuration file {shown} is larger than 1 MiB; point --config at the right file"
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read configuration file {shown}: {e}"))?;
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    parse(&text, is_json, path)
}

/// Parses file text; `origin` only names the file in messages.
pub fn parse(text: &str, is_json: bool, origin: &Path) -> Result<ConfigFile, String> {
    let shown = origin.display();
    let document: serde_json::Value = if is_json {
        serde_json::from_str(text).map_err(|e| {
            format!("configuration file {shown} is not valid JSON ({e}); fix the syntax")
        })?
    } else if text.trim().is_empty() {
        serde_json::Value::Object(Default::default())
    } else {
        serde_saphyr::from_str(text).map_err(|e| {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("syntax error").to_string();
            format!("configuration file {shown} is not valid YAML ({first}); fix the syntax")
        })?
    };
    let serde_json::Value::Object(map) = document else {
        return Err(format!(
            "configuration file {shown} must hold a mapping of keys to values at the top level"
        ));
    };
    let mut values = BTreeMap::new();
    flatten("", &serde_json::Value::Object(map), &mut values, origin)?;
    for key in values.keys() {
        known_key(key).ok_or_else(|| {
            format!(
                "configuration file {shown}: unknown key {key:?}; see the CONFIGURATION section \
                 of check-storage-security -h for the known keys"
            )
        })?;
    }
    Ok(ConfigFile {
        path: origin.to_path_buf(),
        values,
    })
}

/// The table row a file key belongs to, accepting the `_file` suffix convention.
pub fn known_key(key: &str) -> Option<&'static OptionSpec> {
    options::by_config_key(key)
        .or_else(|| key.strip_suffix("_file").and_then(options::by_config_key))
}

fn flatten(
    prefix: &str,
    value: &serde_json::Value,
    out: &mut BTreeMap<String, ConfigValue>,
    origin: &Path,
) -> Result<(), String> {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            // A mapping under a known leaf key (e.g. `host: {a: b}`) is a mistake, not nesting.
            if !prefix.is_empty() && known_key(prefix).is_some() {
                return Err(format!(
                    "configuration file {}: key {prefix:?} takes a value, not a mapping",
                    origin.display()
                ));
            }
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out, origin)?;
            }
        }
        Value::Array(items) => {
            let mut list = Vec::with_capacity(items.len());
            for item in items {
                list.push(scalar(item).ok_or_else(|| {
                    format!(
                        "configuration file {}: key {prefix:?} must be a list of plain values",
                        origin.display()
                    )
                })?);
            }
            out.insert(prefix.to_string(), ConfigValue::List(list));
        }
        Value::Null => {} // `key:` with nothing after it means "not set"
        other => {
            let text = scalar(other).unwrap_or_default();
            out.insert(prefix.to_string(), ConfigValue::Scalar(text));
        }
    }
    Ok(())
}

fn scalar(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Result<ConfigFile, String> {
        parse(text, false, Path::new("test.yml"))
    }

    #[test]
    fn nested_yaml_keys_become_dotted_keys() {
        let file = yaml(
            "host: cloud.example.com\nscanner:\n  tls_min_days: 21\n  debug_ports: [9205, 9141]\n  verify_tls: false\nreleases:\n  token_file: /run/token\n",
        )
        .unwrap();
        assert_eq!(
            file.values["host"],
            ConfigValue::Scalar("cloud.example.com".into())
        );
        assert_eq!(
            file.values["scanner.tls_min_days"],
            ConfigValue::Scalar("21".into())
        );
        assert_eq!(
            file.values["scanner.debug_ports"],
            ConfigValue::List(vec!["9205".into(), "9141".into()])
        );
        assert_eq!(
            file.values["scanner.verify_tls"],
            ConfigValue::Scalar("false".into())
        );
        assert_eq!(
            file.values["releases.token_file"],
            ConfigValue::Scalar("/run/token".into())
        );
    }

    #[test]
    fn json_is_read_as_json() {
        let file = parse(
            r#"{"host": "a.example", "scanner": {"concurrency": 4}}"#,
            true,
            Path::new("c.json"),
        )
        .unwrap();
        assert_eq!(
            file.values["scanner.concurrency"],
            ConfigValue::Scalar("4".into())
        );
    }

    #[test]
    fn unknown_keys_are_refused_by_name() {
        let err = yaml("scanner:\n  tls_min_dayz: 3\n").unwrap_err();
        assert!(
            err.contains("unknown key \"scanner.tls_min_dayz\""),
            "{err}"
        );
    }

    #[test]
    fn syntax_errors_name_the_file() {
        let err = parse("{not json", true, Path::new("x.json")).unwrap_err();
        assert!(err.contains("x.json is not valid JSON"), "{err}");
        let err = yaml("host: [unclosed").unwrap_err();
        assert!(err.contains("test.yml is not valid YAML"), "{err}");
        let err = yaml("- a\n- b\n").unwrap_err();
        assert!(err.contains("mapping"), "{err}");
    }

    #[test]
    fn empty_file_and_null_values_set_nothing() {
        assert!(yaml("").unwrap().values.is_empty());
        assert!(yaml("host:\n").unwrap().values.is_empty());
    }
}
