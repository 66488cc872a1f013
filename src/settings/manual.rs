//! The manual, printed by `-h` and written as `man/check-storage-security.1`, both generated
//! from the option table so they cannot drift from what the parser accepts.

use super::options::{Availability, Group, Kind, OPTIONS, OptionSpec, Program};

pub const PROGRAM: &str = "check-storage-security";

const SUMMARY: &str = "outside-in security check for self-hosted file-sync and sharing servers";

const DESCRIPTION: &[&str] = &[
    "Scans an OpenCloud instance (ownCloud Infinite Scale is recognised and reported as not yet \
     supported) from the outside: the version and capabilities it reports, whether that release \
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
    "Settings are taken from, strongest first: the command line, COS_* environment variables, \
     the configuration file, the --profile, the built-in default. Every value may be a secret \
     reference: env://NAME (a variable), file://PATH (a file, one trailing newline removed), \
     secret://NAME (the systemd credential NAME from $CREDENTIALS_DIRECTORY, else the file NAME \
     in $COS_SECRETS_DIR, default /run/secrets), exec://COMMAND ARGS (the command's output, run \
     without a shell). A variable or key with a _FILE / _file suffix names a file holding the \
     value. Boolean variables accept 1, true, yes, on (any case); anything else disables. The \
     scan never reads .netrc, HTTP_PROXY, HTTPS_PROXY or CA-bundle variables.",
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
        "Serve the metrics of two instances to Prometheus on 127.0.0.1:9102, refreshed hourly:",
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
         option, variable or configuration file is wrong (the message names the fix).",
    ),
];

fn flag_forms(o: &OptionSpec) -> String {
    let mut forms = Vec::new();
    if let Some(c) = o.short {
        forms.push(format!("-{c}"));
    }
    if let Some(l) = o.long {
        forms.push(format!("--{l}"));
    }
    let mut text = forms.join(", ");
    if let Kind::Value(meta) | Kind::Repeatable(meta) = o.kind
        && o.long.is_some()
    {
        text.push(' ');
        text.push_str(meta);
    }
    text
}

/// The extra facts of a row: variable, key, default, choices, availability.
fn facts(o: &OptionSpec) -> Vec<String> {
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
    if !o.choices.is_empty() {
        facts.push(format!("one of {}", o.choices.join(", ")));
    }
    if o.availability == Availability::NotYet {
        facts.push("not available in this version yet (ends the run UNKNOWN)".to_string());
    }
    facts
}

/// The plugin's rows of a group (the scanner's own flags are on its page).
fn rows(group: Group) -> impl Iterator<Item = &'static OptionSpec> {
    OPTIONS
        .iter()
        .filter(move |o| o.group == group && o.programs.contains(&Program::Plugin))
}

fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            out.push_str(indent);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(indent);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The text printed by `-h`.
pub fn help_text() -> String {
    let mut out = format!(
        "{PROGRAM} {} - {SUMMARY}\n\nUsage: {PROGRAM} -H TARGETS [options]\n\n",
        env!("CARGO_PKG_VERSION")
    );
    for paragraph in DESCRIPTION {
        out.push_str(&wrap(paragraph, 78, ""));
        out.push('\n');
    }
    for group in Group::ORDER {
        if rows(group).next().is_none() {
            continue;
        }
        out.push_str(group.title());
        out.push_str(":\n");
        for o in rows(group) {
            let head = if o.long.is_some() {
                flag_forms(o)
            } else {
                format!("{} ({})", o.config_key.unwrap_or(o.id), o.env.join(", "))
            };
            out.push_str("  ");
            out.push_str(&head);
            out.push('\n');
            out.push_str(&wrap(o.help, 72, "      "));
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
    for (code, meaning) in EXIT_STATUS {
        out.push_str(&wrap(&format!("{code}  {meaning}"), 76, "  "));
    }
    out.push_str("\nExamples:\n");
    for (what, command) in EXAMPLES {
        out.push_str(&wrap(what, 76, "  "));
        out.push_str("    ");
        out.push_str(command);
        out.push('\n');
    }
    out.push_str("\nSee man check-storage-security(1) and README.md for the output format.\n");
    out
}

fn roff_escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('-', "\\-");
    // A line starting with a dot or quote would be read as a request.
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// The man page, `man/check-storage-security.1`.
pub fn man_page() -> String {
    let mut out = String::new();
    out.push_str(&format!(
        ".TH CHECK\\-STORAGE\\-SECURITY 1 \"\" \"{PROGRAM} {}\" \"User Commands\"\n",
        env!("CARGO_PKG_VERSION")
    ));
    out.push_str(".SH NAME\n");
    out.push_str(&format!(
        "{} \\- {}\n",
        roff_escape(PROGRAM),
        roff_escape(SUMMARY)
    ));
    out.push_str(".SH SYNOPSIS\n");
    out.push_str(&format!(
        ".B {}\n\\fB\\-H\\fR \\fITARGETS\\fR [\\fIoptions\\fR]\n",
        roff_escape(PROGRAM)
    ));
    out.push_str(".SH DESCRIPTION\n");
    for paragraph in DESCRIPTION {
        out.push_str(".PP\n");
        out.push_str(&roff_escape(paragraph));
        out.push('\n');
    }
    out.push_str(".SH OPTIONS\n");
    for group in Group::ORDER {
        if rows(group).next().is_none() {
            continue;
        }
        out.push_str(&format!(".SS {}\n", roff_escape(group.title())));
        for o in rows(group) {
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
    for (code, meaning) in EXIT_STATUS {
        out.push_str(&format!(".TP\n.B {code}\n{}\n", roff_escape(meaning)));
    }
    out.push_str(".SH EXAMPLES\n");
    for (what, command) in EXAMPLES {
        out.push_str(&format!(
            ".PP\n{}\n.IP\n.nf\n{}\n.fi\n",
            roff_escape(what),
            roff_escape(command)
        ));
    }
    out.push_str(".SH FILES\n.TP\n");
    out.push_str(&roff_escape(
        "./.env.json, ./check-storage-security.yml, ~/.config/check-storage-security/.env.json, \
         /etc/check-storage-security/config.{json,yml,yaml}",
    ));
    out.push_str(
        "\nConfiguration files, first match wins, unless --config or COS_CONFIG_FILE names one.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_names_every_flag_and_variable() {
        let help = help_text();
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

    #[test]
    fn man_page_escapes_dashes_and_names_every_flag() {
        let man = man_page();
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
}
