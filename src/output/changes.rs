//! `--diff-format`: what changed since the baseline and why, per host, as plain text, Markdown
//! (for a ticket or a pull request) or a chat block-kit message. The causes come from
//! `assess::baseline` (the instance, our knowledge, the scanner, a waiver). Text the server
//! sent (in finding details) never becomes markup: Markdown cells are escaped, chat blocks
//! hold plain text only.

use super::DiffFormat;
use crate::assess::baseline::{BaselineComparison, Change};
use crate::notify::body::clip;
use crate::report::ScanResult;
use crate::text::one_line;
use serde_json::{Value, json};

pub fn render(format: DiffFormat, results: &[ScanResult]) -> String {
    match format {
        DiffFormat::Text => text(results),
        DiffFormat::Markdown => markdown(results),
        // `{:#}`: serde_json's pretty print of a `Value` (which cannot fail).
        DiffFormat::ChatBlocks => format!("{:#}\n", chat_blocks(results)),
    }
}

/// What one host's report says before its changes.
fn heading(result: &ScanResult) -> String {
    match (&result.error, &result.baseline) {
        (Some(e), _) => format!(
            "{}: the scan failed ({}); nothing compared",
            result.host, e.message
        ),
        (None, None) => format!("{}: not compared", result.host),
        (None, Some(c)) if c.recorded => format!(
            "{}: baseline recorded on this run; nothing to compare yet",
            result.host
        ),
        (None, Some(c)) => format!(
            "{} (baseline of {}): {}",
            result.host,
            c.recorded_on
                .map_or_else(|| "an unknown date".into(), |d| d.to_string()),
            summary(c)
        ),
    }
}

fn summary(c: &BaselineComparison) -> String {
    let mut parts = vec![match c.changes.len() {
        0 => "nothing new or worse".to_string(),
        1 => "1 change".to_string(),
        n => format!("{n} changes"),
    }];
    if c.fingerprint_drift {
        parts.push("the configuration fingerprint changed".into());
    }
    if !c.inconclusive_now.is_empty() {
        parts.push(format!(
            "inconclusive now: {}",
            c.inconclusive_now.join(", ")
        ));
    }
    parts.join("; ")
}

fn changes(result: &ScanResult) -> &[Change] {
    result.baseline.as_ref().map_or(&[], |c| &c.changes)
}

fn text(results: &[ScanResult]) -> String {
    let mut out = String::from("Changes since the baseline\n");
    for r in results {
        out.push_str(&format!("{}\n", one_line(&heading(r))));
        for c in changes(r) {
            out.push_str(&format!(
                "  {} [{}]: {}\n",
                one_line(&c.id),
                c.cause.as_str(),
                one_line(&c.detail)
            ));
        }
    }
    out
}

/// A Markdown table cell: one line, `|` and backticks escaped, HTML's `<` neutralised.
fn cell(text: &str) -> String {
    one_line(text)
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('`', "\\`")
        .replace('<', "&lt;")
}

fn markdown(results: &[ScanResult]) -> String {
    let mut out = String::from("## Changes since the baseline\n");
    for r in results {
        out.push_str(&format!("\n### {}\n\n", cell(&heading(r))));
        let list = changes(r);
        if list.is_empty() {
            continue;
        }
        out.push_str("| Finding | Cause | Why |\n|---|---|---|\n");
        for c in list {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                cell(&c.id),
                c.cause.as_str(),
                cell(&c.detail)
            ));
        }
    }
    out
}

/// A block-kit message: a header, then one plain-text section per host (at most 49 hosts; a
/// last section says how many were left out, as chat receivers take 50 blocks).
fn chat_blocks(results: &[ScanResult]) -> Value {
    const MAX_HOSTS: usize = 48;
    let mut blocks = vec![json!({
        "type": "header",
        "text": {"type": "plain_text", "text": "Changes since the baseline", "emoji": false},
    })];
    for r in results.iter().take(MAX_HOSTS) {
        let mut text = heading(r);
        for c in changes(r) {
            text.push_str(&format!(
                "\n• {} ({}): {}",
                c.id,
                c.cause.as_str(),
                c.detail
            ));
        }
        blocks.push(json!({
            "type": "section",
            "text": {"type": "plain_text", "text": clip(&text, 3000), "emoji": false},
        }));
    }
    if results.len() > MAX_HOSTS {
        blocks.push(json!({
            "type": "context",
            "elements": [{
                "type": "plain_text",
                "text": format!("{} more host(s) not shown", results.len() - MAX_HOSTS),
                "emoji": false,
            }],
        }));
    }
    let total: usize = results.iter().map(|r| changes(r).len()).sum();
    json!({
        "text": format!("Changes since the baseline: {total} change(s) on {} host(s)", results.len()),
        "blocks": blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assess::baseline::Cause;

    fn result(host: &str, changes: Vec<Change>) -> ScanResult {
        let mut r = crate::output::sarif::tests::result(host, Vec::new());
        r.error = None;
        r.baseline = Some(BaselineComparison {
            changes,
            recorded_on: Some(jiff::civil::date(2026, 11, 1)),
            ..BaselineComparison::default()
        });
        r
    }

    fn hostile() -> Vec<Change> {
        vec![
            Change {
                id: "vulnerability:GHSA-x".into(),
                cause: Cause::Knowledge,
                detail: "GHSA-x became known after the baseline".into(),
            },
            Change {
                id: "versionDisclosure:X-Web-Version".into(),
                cause: Cause::Instance,
                detail: "the instance changed: X-Web-Version: 1|2 <b>`x`</b>\nnext".into(),
            },
        ]
    }

    #[test]
    fn text_lists_each_change_with_its_cause() {
        let out = render(DiffFormat::Text, &[result("cloud.example", hostile())]);
        assert_eq!(
            out,
            "Changes since the baseline\n\
             cloud.example (baseline of 2026-11-01): 2 changes\n  \
             vulnerability:GHSA-x [knowledge]: GHSA-x became known after the baseline\n  \
             versionDisclosure:X-Web-Version [instance]: the instance changed: X-Web-Version: \
             1|2 <b>`x`</b> next\n"
        );
        let quiet = render(DiffFormat::Text, &[result("quiet.example", Vec::new())]);
        assert!(quiet.contains("quiet.example (baseline of 2026-11-01): nothing new or worse"));
    }

    #[test]
    fn markdown_escapes_what_the_server_sent() {
        let out = render(DiffFormat::Markdown, &[result("cloud.example", hostile())]);
        assert!(out.starts_with("## Changes since the baseline\n\n### cloud.example"));
        assert!(out.contains("| Finding | Cause | Why |\n|---|---|---|\n"));
        assert!(out.contains(
            "| versionDisclosure:X-Web-Version | instance | the instance changed: X-Web-Version: \
             1\\|2 &lt;b>\\`x\\`&lt;/b> next |"
        ), "{out}");
        // Every table row has exactly four unescaped pipes.
        for row in out
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| Finding"))
        {
            let bare = row.replace("\\|", "");
            assert_eq!(bare.matches('|').count(), 4, "{row}");
        }
    }

    #[test]
    fn chat_blocks_are_plain_text_and_bounded() {
        let out = render(
            DiffFormat::ChatBlocks,
            &[result("cloud.example", hostile())],
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["blocks"][0]["type"], "header");
        let section = &v["blocks"][1]["text"];
        assert_eq!(section["type"], "plain_text");
        assert!(
            section["text"]
                .as_str()
                .unwrap()
                .contains("• vulnerability:GHSA-x (knowledge)")
        );
        assert_eq!(
            v["text"],
            "Changes since the baseline: 2 change(s) on 1 host(s)"
        );
        let many: Vec<ScanResult> = (0..60)
            .map(|i| result(&format!("h{i}"), Vec::new()))
            .collect();
        let v: Value = serde_json::from_str(&render(DiffFormat::ChatBlocks, &many)).unwrap();
        let blocks = v["blocks"].as_array().unwrap();
        assert!(blocks.len() <= 50);
        assert_eq!(
            blocks.last().unwrap()["elements"][0]["text"],
            "12 more host(s) not shown"
        );
    }
}
