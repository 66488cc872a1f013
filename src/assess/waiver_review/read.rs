//! Reading result documents for the review: typed and bounded. Members the review does not
//! need are skipped unread (however deep), passed findings are never stored, ids and waivers
//! are interned, and every name has a length cap, so what a file takes in memory and in
//! matching work stays small whatever it holds; past a cap the file is refused.

use super::{
    Document, Documents, MAX_DOCUMENTS, MAX_IDS, MAX_NAME_BYTES, MAX_REASON_BYTES, MAX_WAIVERS,
    Waiver,
};
use crate::files::{self, Kind};
use jiff::Timestamp;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

impl Documents {
    pub fn new() -> Documents {
        Documents::default()
    }

    /// Reads one `--result` file (`crate::files`: a regular file of at most 16 MiB) and adds
    /// its documents. `Err` is the whole line, naming the file as `shown`.
    pub fn load(&mut self, path: &Path, shown: &str) -> Result<(), String> {
        let bytes = files::read(path, Kind::ResultDocument).map_err(|r| r.line(shown))?;
        self.read(&bytes).map(|_| ()).map_err(|problem| {
            format!(
                "{} {shown} {problem}; {}",
                Kind::ResultDocument.noun(),
                Kind::ResultDocument.fix()
            )
        })
    }

    /// Adds the documents of one file's content: a result document, or a JSON array of
    /// them. Returns how many; `Err` says what is wrong, as the rest of a sentence about the
    /// file (`is not JSON (...)`), and adds nothing.
    pub fn read(&mut self, bytes: &[u8]) -> Result<usize, String> {
        let (docs, waivers, ids) = (self.docs.len(), self.waivers.len(), self.ids.len());
        self.exceeded = None;
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let parsed = FileSeed(self)
            .deserialize(&mut de)
            .and_then(|n| de.end().map(|()| n));
        match parsed {
            Ok(n) => {
                self.files += 1;
                Ok(n)
            }
            Err(e) => {
                self.docs.truncate(docs);
                self.waivers.truncate(waivers);
                self.ids.truncate(ids);
                self.id_index.retain(|_, i| (*i as usize) < ids);
                Err(self.exceeded.take().unwrap_or_else(|| problem(&e)))
            }
        }
    }

    fn exceed<E: de::Error>(&mut self, problem: String) -> E {
        self.exceeded = Some(problem);
        E::custom("over a cap")
    }

    fn intern_id<E: de::Error>(&mut self, id: &str) -> Result<u32, E> {
        if let Some(i) = self.id_index.get(id) {
            return Ok(*i);
        }
        if id.is_empty() || id.len() > MAX_NAME_BYTES {
            return Err(E::custom(format!(
                "a finding id that is empty or longer than {MAX_NAME_BYTES} bytes"
            )));
        }
        if self.ids.len() >= MAX_IDS {
            return Err(self.exceed(format!(
                "holds more than {MAX_IDS} distinct failing finding ids (with the files before \
                 it); review fewer hosts at once"
            )));
        }
        let i = self.ids.len() as u32;
        self.ids.push(id.to_string());
        self.id_index.insert(id.to_string(), i);
        Ok(i)
    }

    fn intern_waiver<E: de::Error>(&mut self, waiver: Waiver) -> Result<u32, E> {
        if let Some(i) = self.waivers.iter().position(|w| *w == waiver) {
            return Ok(i as u32);
        }
        if self.waivers.len() >= MAX_WAIVERS {
            return Err(self.exceed(format!(
                "holds more than {MAX_WAIVERS} distinct waivers (with the files before it); \
                 review fewer result documents at once"
            )));
        }
        self.waivers.push(waiver);
        Ok(self.waivers.len() as u32 - 1)
    }
}

/// What is wrong with a file serde_json could not read as result documents.
fn problem(e: &serde_json::Error) -> String {
    let text = clip(
        &e.to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    );
    match e.classify() {
        serde_json::error::Category::Data => format!("is not a result document ({text})"),
        _ => format!("is not JSON ({text})"),
    }
}

/// At most 160 characters of a message: serde_json quotes the values it did not expect.
fn clip(text: &str) -> String {
    match text.char_indices().nth(160) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

/// A string as written: borrowed from the file when it has no escapes.
struct Text<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text<'de>, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// A string member of at most `max` bytes.
fn bounded<E: de::Error>(text: Text, max: usize, what: &str) -> Result<String, E> {
    if text.0.len() > max {
        return Err(E::custom(format!("{what} is longer than {max} bytes")));
    }
    Ok(text.0.into_owned())
}

/// Refuses a member named twice: which of the two would count is anybody's guess.
fn once<E: de::Error>(seen: &mut bool, name: &str) -> Result<(), E> {
    if std::mem::replace(seen, true) {
        return Err(E::custom(format!("the member \"{name}\" appears twice")));
    }
    Ok(())
}

/// Scalars where an object was expected: named by their JSON type, never quoted.
macro_rules! not_an_object {
    ($what:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(E::custom(format!("a JSON boolean, not {}", $what)))
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(E::custom(format!("a JSON number, not {}", $what)))
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Err(E::custom(format!("a JSON number, not {}", $what)))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(E::custom(format!("a JSON number, not {}", $what)))
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Err(E::custom(format!("a JSON string, not {}", $what)))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Err(E::custom(format!("null, not {}", $what)))
        }
    };
}

/// A whole file: one document, or an array of them.
struct FileSeed<'a>(&'a mut Documents);

impl<'de> DeserializeSeed<'de> for FileSeed<'_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FileSeed<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a result document (a JSON object) or an array of them")
    }

    not_an_object!("a result document or an array of them");

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<usize, A::Error> {
        read_document(self.0, map, None)?;
        Ok(1)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let docs = self.0;
        let mut n = 0;
        while seq
            .next_element_seed(DocumentSeed(&mut *docs, n + 1))?
            .is_some()
        {
            n += 1;
        }
        if n == 0 {
            return Err(de::Error::custom("an empty array holds no result document"));
        }
        Ok(n)
    }
}

/// One element of an array file (numbered from 1, for messages).
struct DocumentSeed<'a>(&'a mut Documents, usize);

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "element {} to be a result document", self.1)
    }

    not_an_object!("a result document");

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(format!(
            "element {} is an array, not a result document",
            self.1
        )))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        read_document(self.0, map, Some(self.1))
    }
}

fn read_document<'de, A: MapAccess<'de>>(
    docs: &mut Documents,
    mut map: A,
    element: Option<usize>,
) -> Result<(), A::Error> {
    if docs.docs.len() >= MAX_DOCUMENTS {
        return Err(docs.exceed(format!(
            "holds more than {MAX_DOCUMENTS} result documents (with the files before it); \
             review fewer hosts at once"
        )));
    }
    let mut doc = Document::default();
    let (mut host, mut scanned_at, mut findings, mut waivers, mut error) =
        (false, false, false, false, false);
    while let Some(key) = map.next_key::<Text>()? {
        match key.0.as_ref() {
            "host" => {
                once(&mut host, "host")?;
                doc.host = bounded(map.next_value()?, MAX_NAME_BYTES, "the host")?;
            }
            // Never used, but every result document has it: a plain check of the shape.
            "scannedAt" => {
                once(&mut scanned_at, "scannedAt")?;
                map.next_value::<Text>()?;
            }
            "error" => {
                once(&mut error, "error")?;
                doc.scan_failed = map.next_value::<Option<IgnoredAny>>()?.is_some();
            }
            "findings" => {
                once(&mut findings, "findings")?;
                map.next_value_seed(FindingsSeed(docs, &mut doc))?;
            }
            "waivers" => {
                once(&mut waivers, "waivers")?;
                map.next_value_seed(WaiversSeed(docs, &mut doc))?;
            }
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    for (seen, name) in [
        (host, "host"),
        (scanned_at, "scannedAt"),
        (findings, "findings"),
        (waivers, "waivers"),
    ] {
        if !seen {
            return Err(de::Error::custom(match element {
                Some(n) => format!("element {n} has no \"{name}\" member"),
                None => format!("no \"{name}\" member"),
            }));
        }
    }
    for list in [&mut doc.failed, &mut doc.undecided, &mut doc.listed] {
        list.sort_unstable();
        list.dedup();
    }
    docs.docs.push(doc);
    Ok(())
}

/// The `findings` member: failing and undecided ids are kept, the rest is skipped.
struct FindingsSeed<'a>(&'a mut Documents, &'a mut Document);

impl<'de> DeserializeSeed<'de> for FindingsSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for FindingsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"findings\" to be a list of findings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let FindingsSeed(docs, doc) = self;
        while let Some(finding) = seq.next_element::<Finding>()? {
            let list = match finding.status.0.as_ref() {
                "failed" => &mut doc.failed,
                "indeterminate" | "network-limited" => &mut doc.undecided,
                "passed" | "skipped" => continue,
                other => {
                    return Err(de::Error::custom(format!(
                        "a finding with the unknown status {:?}",
                        clip(other)
                    )));
                }
            };
            list.push(docs.intern_id(&finding.id.0)?);
        }
        Ok(())
    }
}

/// Of a finding, what the review needs.
struct Finding<'de> {
    id: Text<'de>,
    status: Text<'de>,
}

impl<'de> de::Deserialize<'de> for Finding<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Finding<'de>, D::Error> {
        struct FindingVisitor;
        impl<'de> Visitor<'de> for FindingVisitor {
            type Value = Finding<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a finding (an object with \"id\" and \"status\")")
            }

            not_an_object!("a finding");

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Finding<'de>, A::Error> {
                let (mut id, mut status) = (None, None);
                let (mut id_seen, mut status_seen) = (false, false);
                while let Some(key) = map.next_key::<Text>()? {
                    match key.0.as_ref() {
                        "id" => {
                            once(&mut id_seen, "id")?;
                            id = Some(map.next_value::<Text>()?);
                        }
                        "status" => {
                            once(&mut status_seen, "status")?;
                            status = Some(map.next_value::<Text>()?);
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                match (id, status) {
                    (Some(id), Some(status)) => Ok(Finding { id, status }),
                    _ => Err(de::Error::custom("a finding without \"id\" or \"status\"")),
                }
            }
        }
        deserializer.deserialize_any(FindingVisitor)
    }
}

/// The `waivers` member.
struct WaiversSeed<'a>(&'a mut Documents, &'a mut Document);

impl<'de> DeserializeSeed<'de> for WaiversSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for WaiversSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"waivers\" to be a list of waivers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let WaiversSeed(docs, doc) = self;
        while let Some(waiver) = seq.next_element::<Listed>()? {
            doc.listed.push(docs.intern_waiver(waiver.0)?);
        }
        Ok(())
    }
}

/// One entry of `waivers`, checked: its state, days left and matches are the plugin's view
/// at scan time and are worked out again at the review's clock.
struct Listed(Waiver);

impl<'de> de::Deserialize<'de> for Listed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Listed, D::Error> {
        struct ListedVisitor;
        impl<'de> Visitor<'de> for ListedVisitor {
            type Value = Listed;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a waiver (an object with \"pattern\" and \"source\")")
            }

            not_an_object!("a waiver");

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Listed, A::Error> {
                let (mut pattern, mut source, mut expires, mut reason) = (None, None, None, None);
                let mut seen = [false; 4];
                while let Some(key) = map.next_key::<Text>()? {
                    match key.0.as_ref() {
                        "pattern" => {
                            once(&mut seen[0], "pattern")?;
                            pattern = Some(bounded(
                                map.next_value()?,
                                MAX_NAME_BYTES,
                                "a waiver pattern",
                            )?);
                        }
                        "source" => {
                            once(&mut seen[1], "source")?;
                            source = Some(bounded(
                                map.next_value()?,
                                MAX_NAME_BYTES,
                                "a waiver source",
                            )?);
                        }
                        "expires" => {
                            once(&mut seen[2], "expires")?;
                            expires = match map.next_value::<Option<Text>>()? {
                                None => None,
                                Some(text) => Some(text.0.parse::<Timestamp>().map_err(|_| {
                                    de::Error::custom(format!(
                                        "a waiver expiry {:?} that is no timestamp with a time \
                                         zone",
                                        clip(&text.0)
                                    ))
                                })?),
                            };
                        }
                        "reason" => {
                            once(&mut seen[3], "reason")?;
                            reason = match map.next_value::<Option<Text>>()? {
                                Some(text) => {
                                    Some(bounded(text, MAX_REASON_BYTES, "a waiver reason")?)
                                }
                                None => None,
                            };
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                match (pattern, source) {
                    (Some(pattern), Some(source)) if !pattern.is_empty() => Ok(Listed(Waiver {
                        pattern,
                        source,
                        expires,
                        reason,
                    })),
                    _ => Err(de::Error::custom(
                        "a waiver without \"pattern\" or \"source\"",
                    )),
                }
            }
        }
        deserializer.deserialize_any(ListedVisitor)
    }
}
