//! Command-line parsing with lexopt, driven by the option table.

use super::options::{self, Kind, OptionSpec, Program};
use std::ffi::OsString;

/// What the command line asks for.
#[derive(Debug)]
pub enum Invocation {
    Help,
    Version,
    Scan(CommandLine),
}

/// Flag values in the order given; a repeated single-value flag keeps its last value.
#[derive(Debug, Default)]
pub struct CommandLine {
    pub values: Vec<(&'static OptionSpec, String)>,
}

impl CommandLine {
    /// All values given for a row, in order.
    pub fn all(&self, id: options::Id) -> Vec<&str> {
        self.values
            .iter()
            .filter(|(spec, _)| spec.option == id)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn last(&self, id: options::Id) -> Option<&str> {
        self.all(id).last().copied()
    }

    /// Binds every flag to the row `component` reads it as (`--listen` is the scan service's
    /// address under `serve` and the public API's under `web`). A flag of another component is
    /// refused by name with the components that take it, never silently ignored: `web --token`
    /// would otherwise leave the API open while the operator believes it guarded.
    pub fn bind_to(
        &mut self,
        component: options::Component,
        program: Program,
    ) -> Result<(), String> {
        for (spec, _) in &mut self.values {
            if spec.read_by(component) {
                continue;
            }
            let Some(long) = spec.long else {
                continue;
            };
            if let Some(own) = options::by_long_for(long, program, component) {
                *spec = own;
                continue;
            }
            // The other program's, then each component's of this program.
            let rows = || options::OPTIONS.iter().filter(|o| o.long == Some(long));
            let owners: Vec<&str> = rows()
                .filter(|o| !o.programs.contains(&program))
                .flat_map(|o| o.programs.iter().map(|p| p.name()))
                .chain(rows().flat_map(|o| o.components.iter().map(|c| c.name())))
                .collect();
            return Err(format!(
                "--{long} is an option of {}, not of {}; see {} -h",
                and_list(&owners),
                component.name(),
                program.name()
            ));
        }
        Ok(())
    }
}

/// The plugin's command line: flags only (targets are given with `-H`).
pub fn parse<I>(args: I) -> Result<Invocation, String>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let (invocation, words) = parse_for(Program::Plugin, args)?;
    if let Some(word) = words.first() {
        return Err(format!(
            "unexpected argument {word:?}; targets are given with -H/--host"
        ));
    }
    Ok(invocation)
}

/// A command line of `program`: its flags, and the words that are not flags, in order (the
/// scanner's subcommand and its target). A flag of the other program is refused by name.
pub fn parse_for<I>(program: Program, args: I) -> Result<(Invocation, Vec<String>), String>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    use lexopt::Arg;
    let mut parser = lexopt::Parser::from_args(args);
    let mut line = CommandLine::default();
    let mut words = Vec::new();
    let mut help = false;
    let mut version = false;
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        let (spec, written) = match &arg {
            Arg::Short(c) => (
                options::by_short(*c).ok_or_else(|| unknown_flag(&format!("-{c}")))?,
                format!("-{c}"),
            ),
            Arg::Long(name) => (
                options::by_long_in(name, program)
                    .ok_or_else(|| unknown_flag(&format!("--{name}")))?,
                format!("--{name}"),
            ),
            Arg::Value(v) => {
                words.push(v.to_string_lossy().into_owned());
                continue;
            }
        };
        if !spec.programs.contains(&program) {
            let owner = spec
                .programs
                .first()
                .map_or("another program", |p| p.name());
            return Err(format!(
                "{written} is an option of {owner}, not of {}; see {} -h",
                program.name(),
                program.name()
            ));
        }
        help |= spec.id == "help";
        version |= spec.id == "version";
        // `--upgrade-self check` (or `--upgrade-self=check`) is its check-only form.
        if spec.id == "upgrade_self" && check_word(&mut parser, &written)? {
            line.values
                .push((options::spec(options::Id::check_only), "true".to_string()));
        }
        let value = match spec.kind {
            Kind::Switch => {
                // `--insecure=yes` is almost certainly a mistake in a service definition.
                if let Some(v) = parser.optional_value() {
                    return Err(format!(
                        "{written} takes no value (got {:?}); remove the value",
                        v.to_string_lossy()
                    ));
                }
                "true".to_string()
            }
            // `--prometheus-listen-port` alone is its row's default port; a value is taken
            // only when it is attached or the next word is a number.
            Kind::Value(..) if spec.bare.is_some() && !next_is_value(&mut parser) => {
                spec.bare.unwrap_or_default().to_string()
            }
            Kind::Value(meta, _) | Kind::Repeatable(meta, _) => {
                let missing = || format!("{written} needs a value ({meta})");
                // `--warning=` is attached; `--warning -H host` would take `-H` as the value.
                let (v, attached) = match parser.optional_value() {
                    Some(v) => (v, true),
                    None => (parser.value().map_err(|_| missing())?, false),
                };
                let v = v.into_string().map_err(|v| {
                    format!(
                        "{written} value {:?} is not valid UTF-8",
                        v.to_string_lossy()
                    )
                })?;
                if !attached && looks_like_option(&v) {
                    return Err(format!(
                        "{written} needs a value ({meta}) but is followed by the option {v}; give \
                         the value right after {written}"
                    ));
                }
                // An empty value never means "the default": it is a mistake in a definition.
                if v.trim().is_empty() {
                    return Err(format!(
                        "{written} has an empty value; give a value ({meta}) or leave the option out"
                    ));
                }
                v
            }
        };
        line.values.push((spec, value));
    }
    let invocation = if help {
        Invocation::Help
    } else if version {
        Invocation::Version
    } else {
        Invocation::Scan(line)
    };
    Ok((invocation, words))
}

/// The word `check` right after `--upgrade-self`, attached or as the next argument.
fn check_word(parser: &mut lexopt::Parser, written: &str) -> Result<bool, String> {
    if let Some(v) = parser.optional_value() {
        return match v.to_str() {
            Some("check") => Ok(true),
            _ => Err(format!(
                "{written} takes no value but check (got {:?}); write {written} or {written} check",
                v.to_string_lossy()
            )),
        };
    }
    Ok(parser
        .try_raw_args()
        .and_then(|mut raw| raw.next_if(|word| word == "check"))
        .is_some())
}

/// Whether a value follows a flag that may stand alone: attached (`--flag=9102`; lexopt gives it
/// to the next `value()`), or the next word a number.
fn next_is_value(parser: &mut lexopt::Parser) -> bool {
    let Some(raw) = parser.try_raw_args() else {
        // An attached value is pending: raw arguments are refused until it is taken.
        return true;
    };
    raw.peek()
        .and_then(|word| word.to_str())
        .is_some_and(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()))
}

/// A word that names one of our options (`-H`, `--warning`, `--warning=3`): never a value.
fn looks_like_option(word: &str) -> bool {
    if let Some(long) = word.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or_default();
        return options::by_long(name).is_some();
    }
    let mut chars = word.chars();
    chars.next() == Some('-') && chars.next().is_some_and(|c| options::by_short(c).is_some())
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn unknown_flag(written: &str) -> String {
    // Offer the closest known flag: a typo in a service definition should be a one-look fix.
    let name = written.trim_start_matches('-');
    let suggestion = options::OPTIONS
        .iter()
        .filter_map(|o| o.long)
        .map(|l| (edit_distance(name, l), l))
        .filter(|(d, _)| *d <= 2)
        .min();
    match suggestion {
        Some((_, l)) => format!("unknown option {written}; did you mean --{l}? (see -h)"),
        None => format!("unknown option {written}; see -h for the options"),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(args: &[&str]) -> Result<CommandLine, String> {
        match parse(args.iter().copied())? {
            Invocation::Scan(line) => Ok(line),
            other => panic!("expected a scan, got {other:?}"),
        }
    }

    #[test]
    fn short_long_and_attached_values() {
        let line = scan(&["-H", "a.example", "--warning=4", "-c2", "--insecure"]).unwrap();
        assert_eq!(
            line.last(crate::settings::options::Id::host),
            Some("a.example")
        );
        assert_eq!(line.last(crate::settings::options::Id::warning), Some("4"));
        assert_eq!(line.last(crate::settings::options::Id::critical), Some("2"));
        assert_eq!(
            line.last(crate::settings::options::Id::insecure),
            Some("true")
        );
    }

    #[test]
    fn repeatable_flags_keep_every_value() {
        let line = scan(&["--waive-until", "a|b|c", "--waive-until", "d|e|f"]).unwrap();
        assert_eq!(
            line.all(crate::settings::options::Id::waive_until),
            vec!["a|b|c", "d|e|f"]
        );
    }

    #[test]
    fn help_and_version_win_over_everything_else() {
        assert!(matches!(parse(["-H", "x", "-h"]), Ok(Invocation::Help)));
        assert!(matches!(parse(["--version"]), Ok(Invocation::Version)));
    }

    #[test]
    fn upgrade_self_takes_the_word_check() {
        for args in [
            &["--upgrade-self", "check"][..],
            &["--upgrade-self=check"],
            &["--upgrade-self", "--check-only"],
        ] {
            let line = scan(args).unwrap();
            assert_eq!(
                line.last(crate::settings::options::Id::upgrade_self),
                Some("true"),
                "{args:?}"
            );
            assert_eq!(
                line.last(crate::settings::options::Id::check_only),
                Some("true"),
                "{args:?}"
            );
        }
        let line = scan(&["--upgrade-self"]).unwrap();
        assert_eq!(line.last(crate::settings::options::Id::check_only), None);
        assert!(
            scan(&["--upgrade-self", "now"])
                .unwrap_err()
                .contains("\"now\"")
        );
        assert!(
            scan(&["--upgrade-self=now"])
                .unwrap_err()
                .contains("but check")
        );
        // Only right after --upgrade-self.
        assert!(scan(&["--insecure", "check"]).is_err());
    }

    #[test]
    fn mistakes_get_a_one_line_fix() {
        let err = scan(&["--critcal", "2"]).unwrap_err();
        assert_eq!(
            err,
            "unknown option --critcal; did you mean --critical? (see -h)"
        );
        let err = scan(&["--timeout"]).unwrap_err();
        assert_eq!(err, "--timeout needs a value (SECONDS)");
        let err = scan(&["--insecure=yes"]).unwrap_err();
        assert!(err.contains("takes no value"), "{err}");
        let err = scan(&["cloud.example.com"]).unwrap_err();
        assert!(err.contains("-H/--host"), "{err}");
    }
}
