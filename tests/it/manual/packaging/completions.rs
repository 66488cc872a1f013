//! Shell completions for bash, zsh and fish, one file per program and shell, generated from the
//! option table: every flag the program takes, the fixed choices of a value (`--profile
//! strict`), file and directory names where a value is a path, and the scanner's subcommands.

use super::{ValueHint, first_sentence, flags, value_hint};
use storage_security::settings::options::{Kind, OptionSpec, Program};

pub const PROGRAMS: [Program; 2] = [Program::Plugin, Program::Scanner];

/// The shells we write completions for, and where Debian's packages of them look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    pub const ALL: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

    /// The file name in `packaging/completions/` and in the shell's directory.
    pub fn file_name(self, program: Program) -> String {
        match self {
            Shell::Bash => program.name().to_string(),
            Shell::Zsh => format!("_{}", program.name()),
            Shell::Fish => format!("{}.fish", program.name()),
        }
    }

    pub fn script(self, program: Program) -> String {
        match self {
            Shell::Bash => bash(program),
            Shell::Zsh => zsh(program),
            Shell::Fish => fish(program),
        }
    }
}

/// The scanner's subcommands with their one-line descriptions.
fn subcommands(program: Program) -> Vec<(&'static str, &'static str)> {
    match program {
        Program::Plugin => Vec::new(),
        Program::Scanner => storage_security::scanner_cli::subcommands().collect(),
    }
}

/// The first comment line of every script (all three shells comment with `#`).
fn header(program: Program) -> String {
    format!(
        "# Completion for {}. Generated from the option table by `make man`; do not edit.\n",
        program.name()
    )
}

fn bash(program: Program) -> String {
    let function = format!("_{}", program.name().replace('-', "_"));
    let mut words: Vec<String> = flags(program).flat_map(OptionSpec::forms).collect();
    if program == Program::Plugin {
        // `--upgrade-self check`: the optional argument.
        words.push("check".into());
    }
    let mut cases = String::new();
    let mut free = Vec::new();
    for o in flags(program) {
        let Some(meta) = o.meta() else { continue };
        let pattern = o.forms().join("|");
        // What compgen offers, after the compopt line that names files as such.
        let filenames = "            compopt -o filenames 2>/dev/null\n";
        let (compopt, offer) = match value_hint(o, meta) {
            ValueHint::Choices => ("", format!("-W '{}'", o.choices.join(" "))),
            ValueHint::File => (filenames, "-f".to_string()),
            ValueHint::Directory => (filenames, "-d".to_string()),
            ValueHint::Free => {
                free.push(pattern);
                continue;
            }
        };
        cases.push_str(&format!(
            "        {pattern})\n{compopt}            mapfile -t COMPREPLY < <(compgen {offer} -- \"$cur\")\n            return ;;\n"
        ));
    }
    if !free.is_empty() {
        cases.push_str(&format!(
            "        {})\n            # A value of the operator's own: nothing to offer.\n            return ;;\n",
            free.join("|")
        ));
    }
    let subcommands = subcommands(program);
    let first_word = if subcommands.is_empty() {
        String::new()
    } else {
        format!(
            "    if [ \"$COMP_CWORD\" -eq 1 ] && [[ \"$cur\" != -* ]]; then\n        mapfile -t COMPREPLY < <(compgen -W '{}' -- \"$cur\")\n        return\n    fi\n",
            subcommands
                .iter()
                .map(|(name, _)| *name)
                .collect::<Vec<_>>()
                .join(" ")
        )
    };
    format!(
        "{header}# shellcheck shell=bash
{function}() {{
    local cur prev
    COMPREPLY=()
    cur=\"${{COMP_WORDS[COMP_CWORD]}}\"
    prev=\"${{COMP_WORDS[COMP_CWORD-1]}}\"
    case \"$prev\" in
{cases}    esac
{first_word}    mapfile -t COMPREPLY < <(compgen -W '{words}' -- \"$cur\")
}}
complete -F {function} {name}
",
        header = header(program),
        words = words.join(" "),
        name = program.name(),
    )
}

/// Text inside a zsh `_arguments` spec, single-quoted: brackets and colons are structure there.
fn zsh_text(text: &str) -> String {
    text.replace('\'', "'\\''")
        .replace('[', "(")
        .replace(']', ")")
        .replace(':', "\\:")
}

fn zsh(program: Program) -> String {
    let mut specs = Vec::new();
    for o in flags(program) {
        let description = zsh_text(&first_sentence(o.help));
        let repeat = matches!(o.kind, Kind::Repeatable(..));
        let forms = o.forms();
        let names = if forms.len() == 1 {
            forms[0].clone()
        } else {
            format!("{{{}}}", forms.join(","))
        };
        // Repeatable flags may come again; the others exclude themselves (and their twin form).
        let exclusion = if repeat {
            "'*'".to_string()
        } else if forms.len() > 1 {
            format!("'({})'", forms.join(" "))
        } else {
            String::new()
        };
        let action = match o.meta() {
            None if o.long == Some("upgrade-self") => ":: :(check)".to_string(),
            None => String::new(),
            Some(meta) => {
                let label = meta.to_lowercase();
                match value_hint(o, meta) {
                    ValueHint::Choices => format!(":{label}:({})", o.choices.join(" ")),
                    ValueHint::File => format!(":{label}:_files"),
                    ValueHint::Directory => format!(":{label}:_files -/"),
                    ValueHint::Free => format!(":{label}: "),
                }
            }
        };
        specs.push(format!("{exclusion}{names}'[{description}]{action}'"));
    }
    let subcommands = subcommands(program);
    if !subcommands.is_empty() {
        let described = subcommands
            .iter()
            .map(|(name, what)| format!("{name}\\:\"{}\"", zsh_text(what).replace('"', "")))
            .collect::<Vec<_>>()
            .join(" ");
        specs.push(format!("'1:subcommand:(({described}))'"));
        specs.push("'*::argument:_default'".to_string());
    }
    format!(
        "#compdef {name}\n{header}\n_arguments -s \\\n  {specs}\n",
        name = program.name(),
        header = header(program),
        specs = specs.join(" \\\n  "),
    )
}

/// A fish single-quoted string.
fn fish_text(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn fish(program: Program) -> String {
    let name = program.name();
    let subcommands = subcommands(program);
    let mut out = header(program);
    // Values are offered by each flag below; plain words are not file names.
    out.push_str(&format!("complete -c {name} -f\n"));
    for (sub, what) in &subcommands {
        out.push_str(&format!(
            "complete -c {name} -n __fish_use_subcommand -a {sub} -d {}\n",
            fish_text(&first_sentence(what))
        ));
    }
    for o in flags(program) {
        let mut line = format!("complete -c {name}");
        if let Some(c) = o.short {
            line.push_str(&format!(" -s {c}"));
        }
        if let Some(l) = o.long {
            line.push_str(&format!(" -l {l}"));
        }
        match o.meta() {
            None if o.long == Some("upgrade-self") => line.push_str(" -a check"),
            None => {}
            Some(meta) => match value_hint(o, meta) {
                ValueHint::Choices => {
                    line.push_str(&format!(" -x -a {}", fish_text(&o.choices.join(" "))))
                }
                ValueHint::File => line.push_str(" -r -F"),
                ValueHint::Directory => line.push_str(" -x -a '(__fish_complete_directories)'"),
                ValueHint::Free => line.push_str(" -x"),
            },
        }
        line.push_str(&format!(" -d {}\n", fish_text(&first_sentence(o.help))));
        out.push_str(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_of_a_program_is_offered_by_every_shell() {
        for program in PROGRAMS {
            for o in flags(program) {
                let long = format!("--{}", o.long.unwrap());
                let fish_long = format!(" -l {} ", o.long.unwrap());
                assert!(bash(program).contains(&long), "bash misses {long}");
                assert!(zsh(program).contains(&long), "zsh misses {long}");
                assert!(fish(program).contains(&fish_long), "fish misses {long}");
            }
        }
        // A flag of the other program is not offered.
        assert!(!bash(Program::Scanner).contains("--webhook-url"));
        assert!(!bash(Program::Plugin).contains("--token"));
    }

    #[test]
    fn choices_and_paths_are_completed_as_values() {
        let zsh = zsh(Program::Plugin);
        assert!(zsh.contains("'[Threshold profile"), "{zsh}");
        assert!(zsh.contains(":name:(strict ops lenient)'"), "{zsh}");
        assert!(
            zsh.contains("--ca-file'[") && zsh.contains(":file:_files'"),
            "{zsh}"
        );
        let plugin = fish(Program::Plugin);
        assert!(
            plugin.contains(" -l profile -x -a 'strict ops lenient'"),
            "{plugin}"
        );
        assert!(plugin.contains(" -l ca-file -r -F"), "{plugin}");
        let scanner = fish(Program::Scanner);
        assert!(scanner.contains("-n __fish_use_subcommand -a review-waivers"));
    }
}
