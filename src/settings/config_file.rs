//! The configuration file: where it is looked for, how it is read (JSON for a `.json` suffix,
//! YAML otherwise) and how its nested keys become the dotted keys of the option table.

use super::options::{self, OptionSpec};
use super::secrets::Environment;
use crate::capped::{self, Read, Reader, Shallow};
use crate::files::{self, Kind};
use serde::de::{self, MapAccess, SeqAccess};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Most list entries a configuration file may hold, all keys together: lists of hosts or
/// advisory files are far shorter, and the cap keeps what a file takes near its size.
pub const MAX_LIST_ENTRIES: usize = 10_000;

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
    /// The line each key is written on (1 for the first), for messages; empty for settings
    /// that were never a file's text (the wizard's answers).
    pub lines: BTreeMap<String, usize>,
}

impl ConfigFile {
    /// How messages name a key: `timeout (in /etc/.../config.yml, line 4)`.
    pub fn name_of(&self, key: &str) -> String {
        let path = self.path.display();
        match self.lines.get(key) {
            Some(line) => format!("{key} (in {path}, line {line})"),
            None => format!("{key} (in {path})"),
        }
    }
}

/// The line of each dotted key in the file's text: each segment is looked for as a key (`name:`,
/// `"name":`, `'name':`) at or after its parent's line. Our own reading of the text, since the
/// parsers say where a document is wrong but not where each value stood; a key not found is
/// left out (its messages name the file only).
fn key_lines<'a>(text: &str, keys: impl Iterator<Item = &'a String>) -> BTreeMap<String, usize> {
    let lines: Vec<&str> = text.lines().collect();
    // `segment` written as a key on `line`: bare, "quoted" or 'quoted', at the line's start or
    // after `{`, `,` or `- `, and followed by `:`.
    let declares = |line: &str, segment: &str| {
        [
            segment.to_string(),
            format!("\"{segment}\""),
            format!("'{segment}'"),
        ]
        .iter()
        .any(|written| {
            line.match_indices(written.as_str()).any(|(at, _)| {
                let before = line[..at].trim_end();
                let starts = before.is_empty() || before.ends_with(['{', ',', '-']);
                starts && line[at + written.len()..].trim_start().starts_with(':')
            })
        })
    };
    let mut found = BTreeMap::new();
    for key in keys {
        let mut from = 0;
        let mut line = None;
        for segment in key.split('.') {
            line = lines[from..]
                .iter()
                .position(|l| declares(l, segment))
                .map(|at| from + at);
            match line {
                Some(at) => from = at,
                None => break,
            }
        }
        if let Some(at) = line {
            found.insert(key.clone(), at + 1);
        }
    }
    found
}

/// Where the file comes from: an explicit path must exist; from the search list, the first
/// path where something exists is the file (a directory or a FIFO there is refused when it is
/// loaded, never skipped silently).
pub fn locate(explicit: Option<&str>, env: &dyn Environment) -> Result<Option<PathBuf>, String> {
    if let Some(path) = explicit {
        let path = PathBuf::from(path);
        files::check(&path, Kind::Configuration)
            .map_err(|refusal| refusal.line(&path.display().to_string()))?;
        return Ok(Some(path));
    }
    Ok(search_list(env).into_iter().find(
        |p| !matches!(std::fs::metadata(p), Err(e) if e.kind() == std::io::ErrorKind::NotFound),
    ))
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
    let etc = Path::new(SYSTEM_DIR);
    for name in ["config.json", "config.yml", "config.yaml"] {
        list.push(etc.join(name));
    }
    list
}

/// The system-wide directory of the search list, where the Debian package puts its sample.
const SYSTEM_DIR: &str = "/etc/check-storage-security";
/// The group the package lets read the files there.
const SYSTEM_GROUP: &str = "check-storage-security";

pub fn load(path: &Path) -> Result<ConfigFile, String> {
    let text = files::read_text(path, Kind::Configuration).map_err(|refusal| {
        let line = refusal.line(&path.display().to_string());
        match &refusal.problem {
            // The packaged file is root's and its group's: say how a monitoring user joins.
            files::Problem::Unreadable(e)
                if path.starts_with(SYSTEM_DIR) && e.contains("Permission denied") =>
            {
                format!(
                    "{line}, or let this user read it: adduser <user> {SYSTEM_GROUP} (the group \
                     the package gives it)"
                )
            }
            _ => line,
        }
    })?;
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    parse(&text, is_json, path)
}

/// Parses file text; `origin` only names the file in messages.
///
/// The document is read straight into the dotted keys of the option table: an unknown key
/// stops the parse where it stands, so nothing of a hostile file is kept beyond the known
/// keys' values (and at most [`MAX_LIST_ENTRIES`] list entries).
pub fn parse(text: &str, is_json: bool, origin: &Path) -> Result<ConfigFile, String> {
    let shown = origin.display();
    let reading = Reading {
        shown: shown.to_string(),
        values: RefCell::new(BTreeMap::new()),
        entries: Cell::new(0),
        problem: RefCell::new(None),
    };
    let top = Section {
        reading: &reading,
        prefix: String::new(),
    };
    let parsed = if is_json {
        let mut de = serde_json::Deserializer::from_str(text);
        capped::read(&mut de, top)
            .and_then(|()| de.end())
            .map_err(|e| format!("not valid JSON ({e}); fix the syntax"))
    } else if text.trim().is_empty() {
        Ok(())
    } else {
        serde_saphyr::with_deserializer_from_str_with_options(text, files::yaml_options(), |de| {
            capped::read(de, top)
        })
        .map_err(|e| files::yaml_problem(&e))
    };
    if let Some(problem) = reading.problem.take() {
        return Err(problem);
    }
    parsed.map_err(|problem| format!("configuration file {shown} is {problem}"))?;
    let values = reading.values.into_inner();
    Ok(ConfigFile {
        path: origin.to_path_buf(),
        lines: key_lines(text, values.keys()),
        values,
    })
}

/// The table row a file key belongs to, accepting the `_file` suffix convention.
pub fn known_key(key: &str) -> Option<&'static OptionSpec> {
    options::by_config_key(key)
        .or_else(|| key.strip_suffix("_file").and_then(options::by_config_key))
}

/// Whether keys of the table live below `prefix` (`scanner` holds `scanner.tls_min_days`).
fn is_section(prefix: &str) -> bool {
    options::OPTIONS.iter().any(|o| {
        o.config_key
            .and_then(|k| k.strip_prefix(prefix))
            .is_some_and(|rest| rest.starts_with('.'))
    })
}

/// One parse: what was read so far, and the problem that stopped it (in our words; the
/// parser's own error is then only the way out).
struct Reading {
    shown: String,
    values: RefCell<BTreeMap<String, ConfigValue>>,
    entries: Cell<usize>,
    problem: RefCell<Option<String>>,
}

impl Reading {
    /// Ends the parse with `configuration file <path>: <problem>`.
    fn stop<E: de::Error>(&self, problem: String) -> E {
        self.stop_line(format!("configuration file {}: {problem}", self.shown))
    }

    fn stop_line<E: de::Error>(&self, line: String) -> E {
        *self.problem.borrow_mut() = Some(line);
        E::custom("stopped")
    }
}

/// A mapping of keys: the top level, or a section such as `scanner`.
struct Section<'r> {
    reading: &'r Reading,
    prefix: String,
}

impl Section<'_> {
    fn not_a_mapping<E: de::Error>(&self) -> E {
        if self.prefix.is_empty() {
            self.reading.stop_line(format!(
                "configuration file {} must hold a mapping of keys to values at the top level",
                self.reading.shown
            ))
        } else {
            self.reading.stop(format!(
                "key {:?} takes a mapping of settings (such as {}), not a value",
                self.prefix,
                options::OPTIONS
                    .iter()
                    .filter_map(|o| o.config_key)
                    .find(|k| k.starts_with(&format!("{}.", self.prefix)))
                    .unwrap_or_default()
            ))
        }
    }
}

impl<'de> Reader<'de> for Section<'_> {
    type Value = ();

    /// `scanner:` with nothing after it sets nothing.
    fn shallow<E: de::Error>(self, value: Shallow) -> Result<(), E> {
        match value {
            Shallow::Null => Ok(()),
            _ => Err(self.not_a_mapping()),
        }
    }

    fn list<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self.not_a_mapping())
    }

    fn mapping<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let key = if self.prefix.is_empty() {
                key
            } else {
                format!("{}.{key}", self.prefix)
            };
            if known_key(&key).is_some() {
                map.next_value_seed(Read(Leaf {
                    reading: self.reading,
                    key,
                }))?;
            } else if is_section(&key) {
                map.next_value_seed(Read(Section {
                    reading: self.reading,
                    prefix: key,
                }))?;
            } else {
                return Err(self.reading.stop(format!(
                    "unknown key {key:?}; see the CONFIGURATION section of \
                     check-storage-security -h for the known keys"
                )));
            }
        }
        Ok(())
    }
}

/// The value of a known key: a plain value, a list of plain values, or nothing.
struct Leaf<'r> {
    reading: &'r Reading,
    key: String,
}

impl<'de> Reader<'de> for Leaf<'_> {
    type Value = ();

    /// `key:` with nothing after it means "not set".
    fn shallow<E: de::Error>(self, value: Shallow) -> Result<(), E> {
        let mut values = self.reading.values.borrow_mut();
        match value.into_plain() {
            Some(text) => values.insert(self.key, ConfigValue::Scalar(text)),
            None => values.remove(&self.key),
        };
        Ok(())
    }

    fn list<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut list = Vec::new();
        while let Some(item) = seq.next_element_seed(Read(Item {
            reading: self.reading,
            key: &self.key,
        }))? {
            let entries = self.reading.entries.get() + 1;
            if entries > MAX_LIST_ENTRIES {
                return Err(self.reading.stop(format!(
                    "holds more than {MAX_LIST_ENTRIES} list entries (at key {:?}); a \
                     configuration names far fewer hosts and files",
                    self.key
                )));
            }
            self.reading.entries.set(entries);
            list.push(item);
        }
        self.reading
            .values
            .borrow_mut()
            .insert(self.key, ConfigValue::List(list));
        Ok(())
    }

    /// A mapping under a known leaf key (e.g. `host: {a: b}`) is a mistake, not nesting.
    fn mapping<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self
            .reading
            .stop(format!("key {:?} takes a value, not a mapping", self.key)))
    }
}

/// One entry of a list: a plain value.
struct Item<'r, 'k> {
    reading: &'r Reading,
    key: &'k str,
}

impl Item<'_, '_> {
    fn not_plain<E: de::Error>(&self) -> E {
        self.reading
            .stop(format!("key {:?} must be a list of plain values", self.key))
    }
}

impl<'de> Reader<'de> for Item<'_, '_> {
    type Value = String;

    fn shallow<E: de::Error>(self, value: Shallow) -> Result<String, E> {
        value.into_plain().ok_or_else(|| self.not_plain())
    }

    fn list<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.not_plain())
    }

    fn mapping<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.not_plain())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each key's line, in YAML (nested, quoted, flow) and in JSON (one key a line, or several).
    #[test]
    fn every_key_is_found_on_its_line() {
        let lines = |text: &str, is_json: bool| parse(text, is_json, Path::new("c")).unwrap().lines;
        let yaml = "# comment\ntimeout: 5\nscanner:\n  # the debug ports\n  'tls_min_days': 3\n\
                    web: {store: \"sqlite:/x\"}\n";
        let found = lines(yaml, false);
        assert_eq!(found["timeout"], 2);
        assert_eq!(found["scanner.tls_min_days"], 5);
        assert_eq!(found["web.store"], 6);
        let json =
            "{\n  \"warning\": 4,\n  \"scanner\": {\"tls_min_days\": 3,\n  \"concurrency\": 2}\n}";
        let found = lines(json, true);
        assert_eq!(found["warning"], 2);
        assert_eq!(found["scanner.tls_min_days"], 3);
        assert_eq!(found["scanner.concurrency"], 4);
        // A key that ends another key's name is found on its own line.
        let found = lines("webhook_timeout: 3\ntimeout: 2\n", false);
        assert_eq!((found["webhook_timeout"], found["timeout"]), (1, 2));
    }

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
    fn values_keep_their_spelling_and_null_unsets() {
        let file = parse(
            r#"{"scanner": {"debug_port_timeout": 3.0, "concurrency": 4, "verify_tls": true},
                "host": "a.example", "host": null, "backoff_factor": 0.5}"#,
            true,
            Path::new("c.json"),
        )
        .unwrap();
        assert_eq!(
            file.values["scanner.debug_port_timeout"],
            ConfigValue::Scalar("3.0".into())
        );
        assert_eq!(
            file.values["scanner.verify_tls"],
            ConfigValue::Scalar("true".into())
        );
        assert_eq!(
            file.values["backoff_factor"],
            ConfigValue::Scalar("0.5".into())
        );
        assert!(!file.values.contains_key("host"));
    }

    #[test]
    fn shapes_that_are_no_settings_are_refused_by_key() {
        let err = yaml("scanner: 5\n").unwrap_err();
        assert!(
            err.contains("key \"scanner\" takes a mapping of settings (such as scanner."),
            "{err}"
        );
        let err = yaml("host:\n  a: b\n").unwrap_err();
        assert!(
            err.ends_with("key \"host\" takes a value, not a mapping"),
            "{err}"
        );
        let err = yaml("scanner:\n  debug_ports: [[9205]]\n").unwrap_err();
        assert!(
            err.ends_with("key \"scanner.debug_ports\" must be a list of plain values"),
            "{err}"
        );
        // The first unknown key ends the reading; nothing after it is looked at.
        let err = yaml("bogus: {deep: [1, 2, {x: y}]}\nhost: [unclosed\n").unwrap_err();
        assert!(err.contains("unknown key \"bogus\""), "{err}");
    }

    #[test]
    fn lists_are_capped_in_all() {
        let items = vec!["a"; MAX_LIST_ENTRIES / 2].join(", ");
        let half = format!("host: [{items}]\nscanner:\n  vulnerability_db: [{items}]\n");
        let file = yaml(&half).unwrap();
        assert_eq!(
            file.values["host"],
            ConfigValue::List(vec!["a".to_string(); MAX_LIST_ENTRIES / 2])
        );
        let err = yaml(&format!("{half}  debug_ports: [9205]\n")).unwrap_err();
        assert_eq!(
            err,
            "configuration file test.yml: holds more than 10000 list entries (at key \
             \"scanner.debug_ports\"); a configuration names far fewer hosts and files"
        );
    }

    #[test]
    fn yaml_aliases_have_a_small_budget() {
        let few = "host: &h a.example\nscanner:\n  dns_server: *h\n";
        assert_eq!(
            yaml(few).unwrap().values["scanner.dns_server"],
            ConfigValue::Scalar("a.example".into())
        );
        let many = format!(
            "host: &h a.example\nscanner:\n  vulnerability_db: [{}]\n",
            vec!["*h"; 100].join(", ")
        );
        assert_eq!(
            yaml(&many).unwrap_err(),
            "configuration file test.yml is over the YAML alias budget (64 aliases, 1024 nodes \
             repeated through them); write the values out instead of aliasing them"
        );
    }

    #[test]
    fn empty_file_and_null_values_set_nothing() {
        assert!(yaml("").unwrap().values.is_empty());
        assert!(yaml("host:\n").unwrap().values.is_empty());
    }
}
