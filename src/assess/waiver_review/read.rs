//! Reading result documents for the review: the result document's reader, then what the
//! review keeps of each document. Passed findings are never stored, ids and waivers are
//! interned, and every name has a length cap, so what many files take in memory and in
//! matching work stays small whatever they hold; past a cap the file is refused.

use super::{
    Document, Documents, MAX_DOCUMENTS, MAX_IDS, MAX_NAME_BYTES, MAX_REASON_BYTES, MAX_WAIVERS,
    Waiver,
};
use crate::files::{self, Kind};
use crate::report::{ScanResult, Status, WaiverReport};
use std::path::Path;

impl Documents {
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
        let documents = crate::report::read_documents(bytes).map_err(|e| e.to_string())?;
        let (docs, waivers, ids) = (self.docs.len(), self.waivers.len(), self.ids.len());
        match documents.iter().try_for_each(|d| self.add(d)) {
            Ok(()) => {
                self.files += 1;
                Ok(documents.len())
            }
            Err(problem) => {
                self.docs.truncate(docs);
                self.waivers.truncate(waivers);
                self.ids.truncate(ids);
                self.id_index.retain(|_, i| (*i as usize) < ids);
                Err(problem)
            }
        }
    }

    /// Keeps what the review needs of one document.
    fn add(&mut self, document: &ScanResult) -> Result<(), String> {
        if self.docs.len() >= MAX_DOCUMENTS {
            return Err(format!(
                "holds more than {MAX_DOCUMENTS} result documents (with the files before it); \
                 review fewer hosts at once"
            ));
        }
        let mut doc = Document {
            host: bounded(&document.host, MAX_NAME_BYTES, "the host")?,
            scan_failed: document.error.is_some(),
            ..Document::default()
        };
        for finding in &document.findings {
            let list = match finding.status {
                Status::Failed => &mut doc.failed,
                Status::Indeterminate | Status::NetworkLimited => &mut doc.undecided,
                Status::Passed | Status::Skipped => continue,
            };
            list.push(self.intern_id(&finding.id)?);
        }
        for listed in &document.waivers {
            doc.listed.push(self.intern_waiver(waiver(listed)?)?);
        }
        for list in [&mut doc.failed, &mut doc.undecided, &mut doc.listed] {
            list.sort_unstable();
            list.dedup();
        }
        self.docs.push(doc);
        Ok(())
    }

    fn intern_id(&mut self, id: &str) -> Result<u32, String> {
        if let Some(i) = self.id_index.get(id) {
            return Ok(*i);
        }
        if id.is_empty() || id.len() > MAX_NAME_BYTES {
            return Err(not_a_document(format!(
                "a finding id that is empty or longer than {MAX_NAME_BYTES} bytes"
            )));
        }
        if self.ids.len() >= MAX_IDS {
            return Err(format!(
                "holds more than {MAX_IDS} distinct failing finding ids (with the files before \
                 it); review fewer hosts at once"
            ));
        }
        let i = self.ids.len() as u32;
        self.ids.push(id.to_string());
        self.id_index.insert(id.to_string(), i);
        Ok(i)
    }

    fn intern_waiver(&mut self, waiver: Waiver) -> Result<u32, String> {
        if let Some(i) = self.waivers.iter().position(|w| *w == waiver) {
            return Ok(i as u32);
        }
        if self.waivers.len() >= MAX_WAIVERS {
            return Err(format!(
                "holds more than {MAX_WAIVERS} distinct waivers (with the files before it); \
                 review fewer result documents at once"
            ));
        }
        self.waivers.push(waiver);
        Ok(self.waivers.len() as u32 - 1)
    }
}

fn not_a_document(why: String) -> String {
    format!("is not a result document ({why})")
}

/// A name of at most `max` bytes.
fn bounded(text: &str, max: usize, what: &str) -> Result<String, String> {
    if text.len() > max {
        return Err(not_a_document(format!("{what} is longer than {max} bytes")));
    }
    Ok(text.to_string())
}

/// One entry of `waivers`, checked: its state, days left and matches are the plugin's view
/// at scan time and are worked out again at the review's clock.
fn waiver(listed: &WaiverReport) -> Result<Waiver, String> {
    if listed.pattern.is_empty() {
        return Err(not_a_document("a waiver with an empty pattern".into()));
    }
    Ok(Waiver {
        pattern: bounded(&listed.pattern, MAX_NAME_BYTES, "a waiver pattern")?,
        source: bounded(&listed.source, MAX_NAME_BYTES, "a waiver source")?,
        expires: listed.expires,
        reason: match &listed.reason {
            Some(reason) => Some(bounded(reason, MAX_REASON_BYTES, "a waiver reason")?),
            None => None,
        },
    })
}
