//! The documentation's relative links resolve: every `[text](target)` in README.md,
//! packaging/README.md and docs/*.md that is not a URL names a file or directory of the
//! repository, and every `#anchor` a heading of the file it points into, slugged as GitHub
//! slugs headings. Links in code (fenced blocks, inline code spans) are text, not links.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Markdown files whose links are checked, relative to the repository root (the Debian
/// package ships them all, see `deb_package.rs`).
pub(crate) fn documents() -> Vec<PathBuf> {
    let mut files = vec![
        PathBuf::from("README.md"),
        PathBuf::from("packaging/README.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| path.strip_prefix(ROOT).unwrap().to_path_buf())
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The text outside fenced code blocks: fence lines and their contents become empty lines, so
/// neither links nor headings are read from code.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<&str> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m => fence = None,
            (None, None) => out.push_str(line),
            _ => {}
        }
        out.push('\n');
    }
    out
}

/// `text` without its inline code spans: a run of n backticks opens a span that the next run
/// of exactly n closes (CommonMark); a run never closed is literal text.
fn without_code_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    close = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                out.push(' ');
                i = end;
            }
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// The targets of the inline links (and images) of `markdown`, in order.
pub(crate) fn link_targets(markdown: &str) -> Vec<String> {
    let text = without_code_spans(&prose(markdown));
    let mut targets = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        // The target runs to its closing parenthesis (balanced, as CommonMark allows).
        let mut depth = 0;
        let mut end = None;
        for (i, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                ')' => depth -= 1,
                '\n' | ' ' => break,
                _ => {}
            }
        }
        if let Some(end) = end {
            targets.push(after[..end].to_string());
        }
        rest = after;
    }
    targets
}

/// GitHub's anchor for a heading: the rendered text (a link is its text) lower-cased, every
/// character but letters, digits, spaces, `-` and `_` dropped, spaces turned into `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](target)` renders as `text`.
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a Markdown file: its headings' slugs, a repeated slug numbered `-1`, `-2`,
/// ... in order, as GitHub numbers them.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose(markdown).lines() {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let text = line[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(text);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// What is wrong with one link of `document` (a path relative to the root), if anything.
fn broken(document: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        Path::new(ROOT).join(document)
    } else {
        Path::new(ROOT)
            .join(document.parent().unwrap_or(Path::new("")))
            .join(path)
    };
    if !file.exists() {
        return Some(format!("{target}: {} does not exist", file.display()));
    }
    let anchor = anchor?;
    if file.extension().is_none_or(|e| e != "md") {
        return Some(format!(
            "{target}: an anchor into a file that is not Markdown"
        ));
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let known = anchors(&text);
    (!known.contains(anchor)).then(|| {
        format!(
            "{target}: {} has no heading #{anchor} (its anchors: {})",
            file.display(),
            known.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

#[test]
fn every_relative_link_and_anchor_of_the_documentation_resolves() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for document in documents() {
        let text = std::fs::read_to_string(Path::new(ROOT).join(&document)).unwrap();
        for target in link_targets(&text) {
            checked += 1;
            if let Some(problem) = broken(&document, &target) {
                problems.push(format!("{}: {problem}", document.display()));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser reading them?"
    );
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// The README is the way in: every guide of docs/ is linked from it.
#[test]
fn the_readme_links_every_guide() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let linked: BTreeSet<String> = link_targets(&readme)
        .into_iter()
        .map(|t| t.split('#').next().unwrap_or_default().to_string())
        .collect();
    for document in documents().into_iter().filter(|d| d.starts_with("docs")) {
        let name = document.to_str().unwrap();
        assert!(linked.contains(name), "README.md does not link {name}");
    }
}

#[test]
fn anchors_follow_the_slug_rules_and_links_in_code_are_text() {
    assert_eq!(
        slug("Public scan API (`check-storage-scanner web`)"),
        "public-scan-api-check-storage-scanner-web"
    );
    assert_eq!(slug("CI step (GitHub Actions)"), "ci-step-github-actions");
    assert_eq!(slug("Nagios / Naemon"), "nagios--naemon");
    assert_eq!(
        slug("MCP: the scanner as a tool for agents"),
        "mcp-the-scanner-as-a-tool-for-agents"
    );
    assert_eq!(slug("See [the guide](x.md) now"), "see-the-guide-now");
    let twice = anchors("# A\n\n## Usage\n\n```sh\n# not a heading\n```\n\n## Usage\n");
    assert_eq!(
        twice.into_iter().collect::<Vec<_>>(),
        ["a", "usage", "usage-1"]
    );
    assert_eq!(
        link_targets("[a](x.md) `[b](y.md)` [c\nd](z.md#e)\n```\n[f](g.md)\n```\n"),
        ["x.md", "z.md#e"]
    );
    assert!(broken(Path::new("README.md"), "docs/plugin.md#no-such-heading").is_some());
    assert!(broken(Path::new("README.md"), "docs/no-such-file.md").is_some());
    assert!(broken(Path::new("docs/plugin.md"), "../README.md#set-up").is_none());
}
