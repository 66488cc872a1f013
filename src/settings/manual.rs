//! The manuals, printed by `-h` and written as `man/<program>.1`, all generated from the option
//! table so they cannot drift from what the parser accepts. A [`Page`] says what a program's
//! manual tells besides its options (`PLUGIN` here, the scanner's beside its subcommands in
//! `scanner_cli`); this module renders every page as `-h` text, and `make man` renders the same
//! pages and rows as roff (its generator is test code: `tests/it/manual/man.rs`).

use super::options::{self, OPTIONS, OptionSpec, Program};

pub use crate::program::PROGRAM;

/// What a program's manual says besides the option rows its command line takes.
pub struct Page {
    pub program: Program,
    /// The NAME line after the dash.
    pub summary: &'static str,
    /// Ways to call it, after the program name (`-H TARGETS`, `scan <host>`), each with one
    /// line on what it does (none for a program called one way). `[options]` follows each.
    pub usage: &'static [(&'static str, &'static str)],
    pub description: &'static [&'static str],
    /// Titled parts of the description (the scanner's subcommands), paragraphs each.
    pub topics: &'static [(&'static str, &'static [&'static str])],
    pub exit_status: &'static [(&'static str, &'static str)],
    pub examples: &'static [(&'static str, &'static str)],
    /// Related pages, `name(section)`.
    pub see_also: &'static [&'static str],
    /// The last line of `-h`.
    pub help_footer: &'static str,
}

/// How settings are layered and what references they may be: true of every program.
pub const SETTINGS_SOURCES: &str = "Settings are taken from, strongest first: the command line, \
     COS_* environment variables, the configuration file, the --profile, the built-in default. \
     Every value may be a secret reference: env://NAME (a variable), file://PATH (a file, one \
     trailing newline removed), secret://NAME (the systemd credential NAME from \
     $CREDENTIALS_DIRECTORY, else the file NAME in $COS_SECRETS_DIR, default /run/secrets), \
     exec://COMMAND ARGS (the command's output, run without a shell). A variable or key with a \
     _FILE / _file suffix names a file holding the value. Boolean variables accept 1, true, yes, \
     on (any case); anything else disables. The scan never reads .netrc, HTTP_PROXY, HTTPS_PROXY \
     or CA-bundle variables.";

/// The monitoring plugin's page.
pub static PLUGIN: Page = Page {
    program: Program::Plugin,
    summary: "outside-in security check for self-hosted file-sync and sharing servers",
    usage: &[
        (
            "-H TARGETS",
            "scan the targets and report the monitoring verdict",
        ),
        (
            "--upgrade-self [check]",
            "upgrade this program to its newest release (check: only show what it would do); \
             scans nothing",
        ),
    ],
    description: DESCRIPTION,
    topics: &[],
    exit_status: EXIT_STATUS,
    examples: EXAMPLES,
    see_also: &["check-storage-scanner(1)"],
    help_footer: "See man check-storage-security(1) and docs/outputs.md for the output format.",
};

const DESCRIPTION: &[&str] = &[
    "Scans an OpenCloud or ownCloud Infinite Scale instance, each judged with its own releases, \
     advisories, demo accounts and settings, from the outside: the version and capabilities it reports, whether that release \
     has known advisories or has reached end of life, whether a newer release exists on its \
     track, how the connection is secured and which security headers it sends. It grades the \
     instance A+ (5) to F (0) and exits with a monitoring-plugin code: 0 OK, 1 WARNING, \
     2 CRITICAL, 3 UNKNOWN.",
    "The rating starts from version knowledge: 5 up to date, 4 a patch update pending, 3 a whole \
     release line behind, 2 known vulnerabilities, 1 critical or high vulnerabilities, 0 end of \
     life. Failed checks then cap it by severity: critical at 2, high at 3, medium at 4, low at 5.",
    "Transport: a verified HTTPS connection is tried first; if the certificate does not verify, \
     the scan continues over HTTPS without verification and reports tlsTrusted as failed; if \
     HTTPS is not available at all it falls back to plain HTTP and reports httpsAvailable \
     (critical). A target without a port is tried on 443, then on 80 for plain HTTP; a target \
     with a port is tried on that port only. Transient failures (timeouts, resets, 5xx answers) \
     re-run the whole scan up to --retries times before the result is UNKNOWN.",
    SETTINGS_SOURCES,
];

const EXAMPLES: &[(&str, &str)] = &[
    (
        "Scan one instance with the default thresholds:",
        "check-storage-security -H cloud.example.com",
    ),
    (
        "Page on a single critical finding and warn 30 days before end of support:",
        "check-storage-security -H cloud.example.com --critical 2 --eol-warning 30",
    ),
    (
        "An instance on a private CA, on its own port:",
        "check-storage-security -H https://cloud.internal:9200 --ca-file /etc/ssl/private-ca.pem",
    ),
    (
        "Strict profile, release feed token from a systemd credential:",
        "check-storage-security -H cloud.example.com --profile strict --release-token secret://github-token",
    ),
    (
        "No network besides the instance (air-gapped monitoring host):",
        "check-storage-security -H 10.0.0.5:9200 --update-source bundled",
    ),
    (
        "Name a newer release of the plugin in the output (one look at its releases a day):",
        "check-storage-security -H cloud.example.com --self-update-check",
    ),
    (
        "See what an upgrade of the plugin would do, then do it:",
        "check-storage-security --upgrade-self check && sudo check-storage-security --upgrade-self",
    ),
    (
        "Serve the metrics of two instances to Prometheus on 127.0.0.1:9102, refreshed hourly \
         (the Debian package's alerting rules for them: \
         /usr/share/check-storage-security/prometheus/storage-security.rules.yml):",
        "check-storage-security -H a.example.com,b.example.com --prometheus-listen-port 9102 --scrape-interval 3600",
    ),
];

const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "OK: the rating is above --warning and no rule raised the state.",
    ),
    (
        "1",
        "WARNING: the rating is at or below --warning, a known vulnerability matches, or a warning rule fired.",
    ),
    (
        "2",
        "CRITICAL: the rating is at or below --critical, or the release line is end of life.",
    ),
    (
        "3",
        "UNKNOWN: the scan failed after its retries, the server is not a supported product, or an \
         option, variable or configuration file is wrong (the message names the fix). \
         --upgrade-self ends 0 when done or already current and 3 when it refuses or fails.",
    ),
];

/// The flag as the manual heads its row: `-c, --critical RATING`.
pub fn flag_forms(o: &OptionSpec) -> String {
    let forms = o.forms().join(", ");
    match o.meta() {
        Some(meta) => format!("{forms} {meta}"),
        None => forms,
    }
}

/// The extra facts of a row: variable, key, default, bounds, choices.
pub fn facts(o: &OptionSpec) -> Vec<String> {
    let mut facts = Vec::new();
    if !o.env.is_empty() {
        facts.push(format!("variable {}", o.env.join(", ")));
    }
    if let Some(key) = o.config_key {
        facts.push(format!("key {key}"));
    }
    if let Some(default) = o.default {
        facts.push(format!("default {default}"));
    }
    facts.extend(o.ty().bounds());
    if !o.choices.is_empty() {
        facts.push(format!("one of {}", o.choices.join(", ")));
    }
    facts
}

/// The rows of a section whose flags `program` takes (settings without a flag belong to both).
pub fn rows(program: Program, section: &str) -> impl Iterator<Item = &'static OptionSpec> {
    OPTIONS
        .iter()
        .filter(move |o| o.section == section && o.programs.contains(&program))
}

/// `text` in lines of at most `width` characters (a longer word stands alone), each indented.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
        .iter()
        .map(|line| format!("{indent}{line}\n"))
        .collect()
}

impl Page {
    fn name(&self) -> &'static str {
        self.program.name()
    }

    /// The usage lines: one line for a program called one way, else each form with what it
    /// does.
    pub fn usage_text(&self) -> String {
        let name = self.name();
        match self.usage {
            [(form, "")] => format!("Usage: {name} {form} [options]\n"),
            forms => {
                let mut out = "Usage:\n".to_string();
                for (form, what) in forms {
                    out.push_str(&format!("  {name} {form} [options]\n"));
                    out.push_str(&wrap(what, 72, "      "));
                }
                out
            }
        }
    }

    /// The text printed by `-h`.
    pub fn help_text(&self) -> String {
        let mut out = format!(
            "{} {} - {}\n\n{}\n",
            self.name(),
            env!("CARGO_PKG_VERSION"),
            self.summary,
            self.usage_text()
        );
        for paragraph in self.description {
            out.push_str(&format!("{}\n", wrap(paragraph, 78, "")));
        }
        for (title, paragraphs) in self.topics {
            out.push_str(&format!("{title}:\n"));
            for paragraph in *paragraphs {
                out.push_str(&format!("{}\n", wrap(paragraph, 76, "  ")));
            }
        }
        for section in options::sections() {
            if rows(self.program, section).next().is_none() {
                continue;
            }
            out.push_str(&format!("{section}:\n"));
            for o in rows(self.program, section) {
                let head = if o.long.is_some() {
                    flag_forms(o)
                } else {
                    format!("{} ({})", o.config_key.unwrap_or(o.id), o.env.join(", "))
                };
                out.push_str(&format!("  {head}\n{}", wrap(o.help, 72, "      ")));
                let facts: Vec<String> = facts(o)
                    .into_iter()
                    .filter(|f| o.long.is_some() || !f.starts_with("variable"))
                    .collect();
                if !facts.is_empty() {
                    out.push_str(&wrap(&format!("[{}]", facts.join("; ")), 72, "      "));
                }
            }
            out.push('\n');
        }
        out.push_str("Exit status:\n");
        for (code, meaning) in self.exit_status {
            out.push_str(&wrap(&format!("{code}  {meaning}"), 76, "  "));
        }
        out.push_str("\nExamples:\n");
        for (what, command) in self.examples {
            out.push_str(&format!("{}    {command}\n", wrap(what, 76, "  ")));
        }
        out + "\n" + self.help_footer + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_names_every_flag_and_variable() {
        let help = PLUGIN.help_text();
        for o in OPTIONS
            .iter()
            .filter(|o| o.programs.contains(&Program::Plugin))
        {
            if let Some(l) = o.long {
                assert!(help.contains(&format!("--{l}")), "--{l} missing from -h");
            }
            for e in o.env {
                assert!(help.contains(e), "{e} missing from -h");
            }
        }
    }
}
