//! The checked-in man pages are generated from the option table; this fails when one is stale.
//! Regenerate with `make man`.

mod man;
mod packaging;

use man::man_page;

/// Compares a checked-in page with what the option table generates (writes it first under
/// `COS_BLESS_MAN`, as `make man` does).
fn assert_current(file: &str, generated: &str) {
    let path = format!("{}/man/{file}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("COS_BLESS_MAN").is_some() {
        std::fs::write(&path, generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "man/{file} is stale; run `make man` and commit the result"
    );
}

#[test]
fn man_page_is_current() {
    assert_current(
        "check-storage-security.1",
        &man_page(&storage_security::settings::manual::PLUGIN),
    );
}

#[test]
fn scanner_man_page_is_current() {
    assert_current(
        "check-storage-scanner.1",
        &man_page(&storage_security::scanner_cli::PAGE),
    );
}

#[test]
fn check_inventory_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/checks.md");
    let generated = inventory_markdown();
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

/// The check inventory as Markdown (`docs/checks.md`), generated from the check registry so it
/// cannot drift.
fn inventory_markdown() -> String {
    let mut out = String::from(
        "# Check inventory\n\n\
         Generated from the check registry (`src/checks/`); regenerate with `make man`.\n\n\
         Role: `check` failures cap the rating by severity (critical 2, high 3, medium 4, low 5); \
         `hardening` measures are evaluated with `--check-hardening` and never cap the rating; \
         `version` findings set the starting rating. Ids with a family root (`exposed`, \
         `authentication`, `debugEndpoint`, `debugPort`, `versionDisclosure`, `vulnerability`) \
         stand for every member (`exposed:/.env`); a member may carry a different severity than \
         its root, as the table notes.\n\n\
         | Id | Role | Severity | Category | Fixed in | Verifiable | What it checks | Remediation |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for c in storage_security::checks::registry() {
        let id = match c.family {
            Some(root) if root == c.id => format!("`{}:...`", c.id),
            _ => format!("`{}`", c.id),
        };
        let role = c.role.as_str();
        out.push_str(&format!(
            "| {id} | {role} | {} | {} | {} | {} | {} | {} |\n",
            c.severity,
            c.category,
            c.fixed_in,
            if c.verifiable() { "yes" } else { "no" },
            c.title,
            c.remediation.replace('|', "\\|")
        ));
    }
    out
}

#[test]
fn the_scanner_page_has_its_subcommands_first_and_its_own_flags() {
    use storage_security::scanner_cli::{PAGE, SUBCOMMANDS};
    use storage_security::settings::options::{OPTIONS, Program};
    let help = PAGE.help_text();
    let lines: Vec<&str> = help.lines().collect();
    assert!(lines[0].starts_with("check-storage-scanner "), "{help}");
    assert_eq!(lines[2], "Usage:");
    let usage: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("  check-storage-scanner "))
        .collect();
    let expected: Vec<String> = SUBCOMMANDS
        .iter()
        .map(|(form, _)| format!("  check-storage-scanner {form} [options]"))
        .collect();
    assert_eq!(usage, expected);
    assert_eq!(lines[3], expected[0], "the subcommands come first");

    let man = man_page(&PAGE);
    let options =
        &man[man.find(".SH OPTIONS\n").unwrap()..man.find(".SH \"EXIT STATUS\"").unwrap()];
    for o in OPTIONS.iter() {
        let Some(long) = o.long else { continue };
        let flag = format!("--{long}").replace('-', "\\-");
        let listed = options.lines().any(|l| {
            l.starts_with("\\fB")
                && (l.contains(&format!("\\fB{flag}")) || l.contains(&format!(", {flag}")))
        });
        // A flag of several rows (--format: the plugin's and fleet's) is listed when the
        // scanner takes one of them.
        let taken = OPTIONS
            .iter()
            .any(|p| p.long == o.long && p.programs.contains(&Program::Scanner));
        assert_eq!(listed, taken, "--{long} on the scanner page");
    }
    for (section, text) in [
        (
            "SYNOPSIS",
            "\\fBreview\\-waivers\\fR \\fB\\-\\-result\\fR \\fIfile\\fR",
        ),
        ("DESCRIPTION", "/api/queue"),
        ("DESCRIPTION", "/api/result/<uuid>"),
        ("DESCRIPTION", "/api/requeue"),
        ("DESCRIPTION", "/api/scan"),
        ("DESCRIPTION", "/healthz"),
        ("DESCRIPTION", "Authorization: Bearer"),
        ("DESCRIPTION", "32 characters"),
        (
            "DESCRIPTION",
            "replace\\-me\\-with\\-a\\-random\\-scanner\\-token",
        ),
        ("DESCRIPTION", "service.cache_ttl"),
        ("\"EXIT STATUS\"", ".B 3"),
        ("FILES", "COS_CONFIG_FILE"),
        ("\"SEE ALSO\"", ".BR check\\-storage\\-security (1)"),
    ] {
        let start = man
            .find(&format!(".SH {section}\n"))
            .unwrap_or_else(|| panic!("no {section} section"));
        let end = man[start + 4..]
            .find("\n.SH ")
            .map_or(man.len(), |e| start + 4 + e);
        assert!(
            man[start..end].contains(text),
            "{text} missing from {section}"
        );
    }
}

/// A generated file of the package, checked in under `packaging/` (rewritten by `make man`).
fn assert_packaging_current(rel: &str, generated: &str) {
    let path = format!("{}/packaging/{rel}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("COS_BLESS_MAN").is_some() {
        if let Some(dir) = std::path::Path::new(&path).parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&path, generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "packaging/{rel} is stale; run `make man` and commit the result"
    );
}

#[test]
fn shell_completions_are_current() {
    use packaging::completions::{PROGRAMS, Shell};
    for program in PROGRAMS {
        for shell in Shell::ALL {
            assert_packaging_current(
                &format!("completions/{}", shell.file_name(program)),
                &shell.script(program),
            );
        }
    }
}

#[test]
fn icinga2_check_command_is_current() {
    assert_packaging_current(
        "icinga2/check-storage-security.conf",
        &packaging::icinga2::configuration(),
    );
}

/// The scanner's page names what `web` serves and how each server ends.
#[test]
fn the_scanner_page_names_what_web_serves() {
    let page = man_page(&storage_security::scanner_cli::PAGE);
    for served in [
        "/api/scans",
        "export/json|csv|sarif|pdf",
        "/scans/<uuid>",
        "/.well-known/ai.json",
        "/openapi.json",
        "/arazzo.json",
        "POST /mcp",
        "/healthz",
    ] {
        assert!(
            page.contains(&served.replace('-', "\\-")) || page.contains(served),
            "{served}"
        );
    }
    let exit = page.split(".SH \"EXIT STATUS\"").nth(1).unwrap();
    assert!(
        exit.contains("serve and web: stopped by SIGTERM or SIGINT"),
        "{exit}"
    );
    assert!(
        exit.contains("serve and web: it refused to start"),
        "{exit}"
    );
}
