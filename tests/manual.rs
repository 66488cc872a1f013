//! The checked-in man page is generated from the option table; this fails when it is stale.
//! Regenerate with `make man`.

#[test]
fn man_page_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/man/check-storage-security.1");
    let generated = storage_security::settings::manual::man_page();
    if std::env::var_os("COS_BLESS_MAN").is_some() {
        std::fs::write(path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "man/check-storage-security.1 is stale; run `make man` and commit the result"
    );
}

#[test]
fn check_inventory_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/checks.md");
    let generated = storage_security::checks::inventory_markdown();
    if std::env::var_os("COS_BLESS_MAN").is_some() {
        std::fs::create_dir_all(concat!(env!("CARGO_MANIFEST_DIR"), "/docs")).unwrap();
        std::fs::write(path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "docs/checks.md is stale; run `make man` and commit the result"
    );
}
