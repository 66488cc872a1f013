//! Validating JUnit documents against Jenkins' `junit-10.xsd` (the xunit plugin's schema,
//! vendored in `tests/fixtures/xsd/`) with a real XSD validator: `xmllint --schema` from
//! Debian's `libxml2-utils`, installed by `make deps`. A missing xmllint fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The vendored schema.
pub fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/xsd/junit-10.xsd")
}

/// What `xmllint --noout --schema junit-10.xsd <file>` said about `xml`: `Ok` with its
/// message when the document is valid, `Err` with it when not. The document is written to
/// `<target tmp>/junit-xsd/<label>-<pid>-<n>.xml` first (kept, for looking at a failure).
pub fn validate(label: &str, xml: &str) -> Result<String, String> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("junit-xsd");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!(
        "{label}-{}-{}.xml",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, xml).unwrap();
    let output = match Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema())
        .arg(&file)
        .output()
    {
        Ok(output) => output,
        Err(e) => panic!(
            "cannot run xmllint ({e}): run `make deps` (installs Debian's libxml2-utils), \
             the JUnit output is validated against junit-10.xsd with it"
        ),
    };
    let message = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() {
        Ok(message)
    } else {
        Err(format!(
            "xmllint --noout --schema {} {} (exit {:?}):\n{message}",
            schema().display(),
            file.display(),
            output.status.code()
        ))
    }
}

/// Panics with xmllint's message and the numbered document unless `xml` is valid.
pub fn assert_valid(label: &str, xml: &str) {
    if let Err(message) = validate(label, xml) {
        let numbered: String = xml
            .lines()
            .enumerate()
            .map(|(i, line)| format!("{:>4} {line}\n", i + 1))
            .collect();
        panic!("JUnit output does not validate against junit-10.xsd: {message}\n{numbered}");
    }
}
