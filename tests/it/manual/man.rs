//! The man pages, `man/<program>.1`, rendered in roff from the same [`Page`]s and option rows as
//! `-h`; `make man` writes them and `tests/it/manual.rs` fails when a checked-in one is stale.

use storage_security::settings::manual::{PLUGIN, Page, facts, flag_forms, rows};
use storage_security::settings::options::{self, OPTIONS, Program};

fn roff_escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('-', "\\-");
    // A line starting with a dot or quote would be read as a request.
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// The man page of `page`, `man/<program>.1`.
pub fn man_page(page: &Page) -> String {
    let name = page.program.name();
    let mut out = format!(
        ".TH {} 1 \"\" \"{name} {}\" \"User Commands\"\n.SH NAME\n{} \\- {}\n.SH SYNOPSIS\n",
        roff_escape(&name.to_uppercase()),
        env!("CARGO_PKG_VERSION"),
        roff_escape(name),
        roff_escape(page.summary)
    );
    let synopses: Vec<String> = page
        .usage
        .iter()
        .map(|(form, _)| {
            format!(
                ".B {}\n{} [\\fIoptions\\fR]\n",
                roff_escape(name),
                roff_form(form)
            )
        })
        .collect();
    out.push_str(&synopses.join(".br\n"));
    out.push_str(".SH DESCRIPTION\n");
    for paragraph in page.description {
        out.push_str(&format!(".PP\n{}\n", roff_escape(paragraph)));
    }
    for (title, paragraphs) in page.topics {
        out.push_str(&format!(".SS {}\n", roff_escape(title)));
        for paragraph in *paragraphs {
            out.push_str(&format!(".PP\n{}\n", roff_escape(paragraph)));
        }
    }
    out.push_str(".SH OPTIONS\n");
    for section in options::sections() {
        if rows(page.program, section).next().is_none() {
            continue;
        }
        out.push_str(&format!(".SS {}\n", roff_escape(section)));
        for o in rows(page.program, section) {
            out.push_str(".TP\n");
            if o.long.is_some() {
                out.push_str(&format!("\\fB{}\\fR\n", roff_escape(&flag_forms(o))));
            } else {
                out.push_str(&format!(
                    "\\fB{}\\fR (\\fB{}\\fR)\n",
                    roff_escape(o.config_key.unwrap_or(o.id)),
                    roff_escape(&o.env.join(", "))
                ));
            }
            out.push_str(&roff_escape(o.help));
            let facts = facts(o);
            if !facts.is_empty() {
                out.push_str(&format!(" [{}]", roff_escape(&facts.join("; "))));
            }
            out.push('\n');
        }
    }
    out.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in page.exit_status {
        out.push_str(&format!(".TP\n.B {code}\n{}\n", roff_escape(meaning)));
    }
    out.push_str(".SH EXAMPLES\n");
    for (what, command) in page.examples {
        out.push_str(&format!(
            ".PP\n{}\n.IP\n.nf\n{}\n.fi\n",
            roff_escape(what),
            roff_escape(command)
        ));
    }
    out.push_str(&format!(
        ".SH FILES\n.TP\n{}\nConfiguration files, first match wins, unless --config or \
         COS_CONFIG_FILE names one.\n",
        roff_escape(
            "./.env.json, ./check-storage-security.yml, \
             ~/.config/check-storage-security/.env.json, \
             /etc/check-storage-security/config.{json,yml,yaml}",
        )
    ));
    if !page.see_also.is_empty() {
        out.push_str(".SH \"SEE ALSO\"\n");
        let pages: Vec<String> = page
            .see_also
            .iter()
            .map(|other| match other.split_once('(') {
                Some((name, section)) => {
                    format!(".BR {} ({}", roff_escape(name), section)
                }
                None => format!(".B {}", roff_escape(other)),
            })
            .collect();
        out.push_str(&pages.join(",\n"));
        out.push('\n');
    }
    out
}

/// A usage form in roff: `<host>` and upper-case words are what to fill in (italic), the rest
/// is written as is (bold): `scan <host>`, `-H TARGETS`.
fn roff_form(form: &str) -> String {
    form.split(' ')
        .map(|word| {
            if let Some(inner) = word.strip_prefix('<').and_then(|w| w.strip_suffix('>')) {
                format!("\\fI{}\\fR", roff_escape(inner))
            } else if word.chars().any(|c| c.is_ascii_uppercase())
                && !word.chars().any(|c| c.is_ascii_lowercase())
                && !word.starts_with('-')
            {
                format!("\\fI{}\\fR", roff_escape(word))
            } else {
                format!("\\fB{}\\fR", roff_escape(word))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn man_page_escapes_dashes_and_names_every_flag() {
    let man = man_page(&PLUGIN);
    let plugin = OPTIONS
        .iter()
        .filter(|o| o.programs.contains(&Program::Plugin));
    for o in plugin.filter_map(|o| o.long) {
        assert!(
            man.contains(&format!("\\-\\-{}", o.replace('-', "\\-"))),
            "{o}"
        );
    }
    assert!(man.lines().all(|l| !l.starts_with('\'')));
}
