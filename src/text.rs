//! Text from elsewhere (a scanned server, a document, the operating system) made fit for one
//! line of our output. Two rules, one per kind of output:
//!
//! - [`one_line`]: a message or report line. Control characters (newlines, tabs, escapes)
//!   cannot break the line or reach a terminal, and white space is folded.
//! - [`monitoring_line`]: the same for monitoring-plugin output, where a `|` would start the
//!   performance data, so it becomes `/`.

/// One printable line: every control character becomes a space, then each run of white space
/// one space, with none at either end.
pub fn one_line(text: &str) -> String {
    fold(text, |c| if c.is_control() { ' ' } else { c })
}

/// [`one_line`] for monitoring output: a `|` becomes `/` as well, since the monitoring core
/// reads what follows one as performance data.
pub fn monitoring_line(text: &str) -> String {
    fold(text, |c| match c {
        '|' => '/',
        c if c.is_control() => ' ',
        c => c,
    })
}

fn fold(text: &str, map: impl Fn(char) -> char) -> String {
    let mapped: String = text.chars().map(map).collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_single_spaces_and_the_ends_are_trimmed() {
        assert_eq!(
            one_line("  a\r\nb\t\tc \u{1b}[31m d\0e  "),
            "a b c [31m d e"
        );
        // Unicode line and paragraph separators are white space, not control characters.
        assert_eq!(one_line("a\u{2028}b\u{2029}c\u{85}d"), "a b c d");
        assert_eq!(one_line(""), "");
        assert_eq!(one_line("\n\t "), "");
    }

    #[test]
    fn only_the_monitoring_line_replaces_the_perfdata_bar() {
        assert_eq!(one_line("1|2 <b>"), "1|2 <b>");
        assert_eq!(monitoring_line("1|2 <b>"), "1/2 <b>");
        assert_eq!(
            monitoring_line("rating=0;4;3 |\nnext\u{7}line"),
            "rating=0;4;3 / next line"
        );
    }
}
