//! Text we write: what came from elsewhere (a scanned server, a document, the operating system)
//! made fit for one line of our output, and bytes as base64.
//!
//! One line, two rules, one per kind of output:
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

/// Bytes as lower-case hexadecimal (digests in file names, fingerprints).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Standard base64 with padding (RFC 4648): Basic credentials, a PDF in an MCP resource.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            // A chunk of k bytes gives k + 1 digits, then padding.
            let digit = ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char;
            out.push(if i <= chunk.len() { digit } else { '=' });
        }
    }
    out
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

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }
}
