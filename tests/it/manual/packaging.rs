//! Files the package ships that describe the command line to other programs: shell
//! completions and the Icinga 2 `CheckCommand`. Like the man pages they are generated from the
//! option table and checked in (`make man` rewrites them; `tests/it/manual.rs` fails when one is
//! stale), so a new flag reaches the shells and Icinga in the same edit as the parser.

pub mod completions;
pub mod icinga2;

use storage_security::settings::options::{OPTIONS, OptionSpec, Program};

/// The flags `program` takes on its command line, in manual order, each once: a flag that
/// names a row of each of several components (`--listen` of serve and of web) is offered as
/// its first row.
fn flags(program: Program) -> impl Iterator<Item = &'static OptionSpec> {
    OPTIONS.iter().enumerate().filter_map(move |(i, o)| {
        let first = !OPTIONS[..i]
            .iter()
            .any(|earlier| earlier.long == o.long && earlier.programs.contains(&program));
        (o.long.is_some() && o.programs.contains(&program) && first).then_some(o)
    })
}

/// The first sentence of a help text, for the one-line descriptions shells show.
fn first_sentence(help: &str) -> String {
    let mut sentence = String::new();
    let mut chars = help.chars().peekable();
    while let Some(c) = chars.next() {
        let at_end = chars.peek().is_none_or(|n| n.is_whitespace());
        let abbreviation = ["e.g", "i.e", "etc"].iter().any(|a| sentence.ends_with(a));
        if (c == '.' || c == ';' || c == ':') && at_end && !abbreviation {
            break;
        }
        sentence.push(c);
    }
    // One line, and short enough for a completion menu.
    let sentence = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    match sentence.char_indices().nth(72) {
        Some((cut, _)) => {
            let kept = &sentence[..cut];
            let end = kept.rfind(' ').unwrap_or(cut);
            format!("{}...", kept[..end].trim_end_matches([',', ' ']))
        }
        None => sentence,
    }
}

/// What a value placeholder asks the shell to offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValueHint {
    File,
    Directory,
    Choices,
    Free,
}

fn value_hint(o: &OptionSpec, meta: &str) -> ValueHint {
    if !o.choices.is_empty() {
        ValueHint::Choices
    } else if meta.starts_with("FILE") {
        ValueHint::File
    } else if meta == "DIR" {
        ValueHint::Directory
    } else {
        ValueHint::Free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentences_stop_at_the_first_full_stop_and_stay_short() {
        assert_eq!(
            first_sentence("Do not probe the debug ports."),
            "Do not probe the debug ports"
        );
        assert_eq!(
            first_sentence("Web proxy (e.g. x) for scans. More."),
            "Web proxy (e.g. x) for scans"
        );
        let long = first_sentence(&"word ".repeat(40));
        assert!(long.len() <= 76 && long.ends_with("..."), "{long}");
    }
}
