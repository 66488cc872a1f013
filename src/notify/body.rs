//! Notification bodies, all JSON built with serde_json from the host's result document: text
//! the scanned server provided (version, messages) only ever enters as a JSON string value.

use super::BodyFormat;
use crate::report::{ScanResult, State};
use serde_json::{Value, json};

/// The body of one host's notification in `format`; `topic` is the `pushtopic` topic.
pub fn build(format: &BodyFormat, result: &ScanResult, topic: Option<&str>) -> Value {
    match format {
        BodyFormat::Generic => generic(result),
        BodyFormat::ChatBlocks => chat_blocks(result),
        BodyFormat::ChatEmbed => chat_embed(result),
        BodyFormat::PushTopic => push_topic(result, topic.unwrap_or_default()),
        BodyFormat::PushServer => push_server(result),
    }
}

/// The per-host result document itself (with the policy verdict under `policy`).
pub fn generic(result: &ScanResult) -> Value {
    serde_json::to_value(result).unwrap_or_else(|e| json!({ "error": e.to_string() }))
}

/// The state a notification reports: a failed scan is UNKNOWN.
pub fn state(result: &ScanResult) -> State {
    if result.error.is_some() {
        State::Unknown
    } else {
        result.state
    }
}

/// `CRITICAL: cloud.example`.
fn title(result: &ScanResult) -> String {
    format!("{}: {}", state(result).label(), result.host)
}

/// `OpenCloud 8.1.0`, or `unknown` when the scan found no product.
fn version(result: &ScanResult) -> String {
    match &result.product {
        Some(p) => format!("{} {}", p.name, p.version),
        None => "unknown".to_string(),
    }
}

/// The second line of the default output: `<product> <version> on <host>, rating: <grade>`.
fn host_line(result: &ScanResult) -> String {
    match &result.product {
        Some(p) => format!(
            "{} {} on {}, rating: {}",
            p.name, p.version, result.host, result.grade
        ),
        None => format!("{}, rating: {}", result.host, result.grade),
    }
}

fn footer(result: &ScanResult) -> String {
    format!(
        "{} {}, scanned {}",
        crate::program::PROGRAM,
        env!("CARGO_PKG_VERSION"),
        result.scanned_at
    )
}

/// At most `max` characters, cut with an ellipsis (receivers reject over-long fields).
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Chat markup treats `&`, `<` and `>` as control characters (links, mentions).
fn escape_markup(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A block-kit chat message: header, a section with state, host, grade and version, and a
/// context line. Every block holds plain text, so nothing the server sent becomes markup.
pub fn chat_blocks(result: &ScanResult) -> Value {
    let field = |name: &str, value: &str| json!({ "type": "plain_text", "text": clip(&format!("{name}: {value}"), 2000), "emoji": false });
    json!({
        "text": clip(&escape_markup(&format!("{}: {}", title(result), result.message)), 3000),
        "blocks": [
            {
                "type": "header",
                "text": { "type": "plain_text", "text": clip(&title(result), 150), "emoji": false },
            },
            {
                "type": "section",
                "text": { "type": "plain_text", "text": clip(&result.message, 3000), "emoji": false },
                "fields": [
                    field("State", state(result).label()),
                    field("Host", &result.host),
                    field("Grade", &result.grade),
                    field("Version", &version(result)),
                ],
            },
            {
                "type": "context",
                "elements": [
                    { "type": "plain_text", "text": clip(&footer(result), 2000), "emoji": false },
                ],
            },
        ],
    })
}

/// How the receivers mark a state: the chat embed's colour (red, amber, grey, green), the
/// topic publication's priority and tag, and the push server's priority on its 0-10 scale
/// (8 is high).
fn marks(state: State) -> (u32, u8, &'static str, u8) {
    match state {
        State::Critical => (0xD3_2F2F, 5, "rotating_light", 8),
        State::Warning => (0xF9_A825, 4, "warning", 5),
        State::Unknown => (0x9E_9E9E, 3, "grey_question", 4),
        State::Ok => (0x2E_7D32, 3, "white_check_mark", 2),
    }
}

/// A chat embed: content line, one embed with title, description, colour by state and fields.
/// Mentions are switched off, so server text such as `@everyone` pings nobody.
pub fn chat_embed(result: &ScanResult) -> Value {
    let field = |name: &str, value: &str| {
        let value = if value.is_empty() { "-" } else { value };
        json!({ "name": name, "value": clip(value, 1024), "inline": true })
    };
    let (color, ..) = marks(state(result));
    let mut embed = json!({
        "title": clip(&title(result), 256),
        "description": clip(&format!("{}\n{}", result.message, host_line(result)), 4096),
        "color": color,
        "fields": [
            field("State", state(result).label()),
            field("Host", &result.host),
            field("Grade", &result.grade),
            field("Version", &version(result)),
        ],
        "footer": { "text": clip(&format!("{} {}", crate::program::PROGRAM, env!("CARGO_PKG_VERSION")), 2048) },
    });
    embed["timestamp"] = Value::String(result.scanned_at.to_string());
    json!({
        "content": clip(&format!("{}: {}", title(result), result.message), 2000),
        "allowed_mentions": { "parse": [] },
        "embeds": [embed],
    })
}

fn push_message(result: &ScanResult) -> String {
    clip(&format!("{}\n{}", result.message, host_line(result)), 3500)
}

/// A topic publication, sent as JSON to the server root.
pub fn push_topic(result: &ScanResult, topic: &str) -> Value {
    let (_, priority, tag, _) = marks(state(result));
    json!({
        "topic": topic,
        "title": clip(&title(result), 250),
        "message": push_message(result),
        "priority": priority,
        "tags": [tag, "storage-security"],
    })
}

pub fn push_server(result: &ScanResult) -> Value {
    let (.., priority) = marks(state(result));
    json!({
        "title": clip(&title(result), 250),
        "message": push_message(result),
        "priority": priority,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::metrics::testing::{failed, scanned};

    /// A scanned host whose server put markup, mentions and JSON breakers into its version.
    fn hostile() -> ScanResult {
        let mut r = scanned("cloud.example", "8.1.0\"}<!channel> @everyone", Some(100));
        r.state = State::Critical;
        r.message = "OpenCloud \"8.1.0\" <b>&</b>\n|x".into();
        r.policy = Some(crate::report::PolicyVerdict {
            met: false,
            unmet: Vec::new(),
        });
        r
    }

    #[test]
    fn generic_is_the_result_document_with_its_policy() {
        let r = hostile();
        let body = build(&BodyFormat::Generic, &r, None);
        assert_eq!(body, serde_json::to_value(&r).unwrap());
        assert_eq!(body["policy"], json!({ "met": false, "unmet": [] }));
        assert_eq!(body["host"], "cloud.example");
        assert_eq!(body["state"], "CRITICAL");
        let plain = build(&BodyFormat::Generic, &failed("down.example"), None);
        assert!(plain.as_object().unwrap().contains_key("policy"));
    }

    #[test]
    fn chat_blocks_hold_plain_text_only() {
        let r = hostile();
        let body = build(&BodyFormat::ChatBlocks, &r, None);
        assert_eq!(
            body["text"],
            "CRITICAL: cloud.example: OpenCloud \"8.1.0\" &lt;b&gt;&amp;&lt;/b&gt;\n|x"
        );
        let blocks = body["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0]["type"], "header");
        assert_eq!(blocks[0]["text"]["text"], "CRITICAL: cloud.example");
        assert_eq!(blocks[1]["type"], "section");
        let fields: Vec<&str> = blocks[1]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            fields,
            [
                "State: CRITICAL",
                "Host: cloud.example",
                "Grade: A+",
                "Version: OpenCloud 8.1.0\"}<!channel> @everyone",
            ]
        );
        assert_eq!(blocks[2]["type"], "context");
        let text = serde_json::to_string(&body).unwrap();
        assert!(!text.contains("mrkdwn"), "{text}");
        assert!(
            blocks[2]["elements"][0]["text"]
                .as_str()
                .unwrap()
                .ends_with("scanned 2026-11-22T03:00:00Z")
        );
    }

    #[test]
    fn chat_embed_colours_by_state_and_mentions_nobody() {
        let r = hostile();
        let body = build(&BodyFormat::ChatEmbed, &r, None);
        assert_eq!(body["allowed_mentions"], json!({ "parse": [] }));
        let embed = &body["embeds"][0];
        assert_eq!(embed["title"], "CRITICAL: cloud.example");
        assert_eq!(embed["color"], 0xD32F2F);
        assert_eq!(embed["timestamp"], "2026-11-22T03:00:00Z");
        assert_eq!(embed["fields"][0]["name"], "State");
        assert_eq!(embed["fields"][0]["value"], "CRITICAL");
        assert_eq!(embed["fields"][2]["value"], "A+");
        assert_eq!(
            embed["fields"][3]["value"],
            "OpenCloud 8.1.0\"}<!channel> @everyone"
        );
        let colours: Vec<u32> = [State::Critical, State::Warning, State::Unknown, State::Ok]
            .into_iter()
            .map(|state| marks(state).0)
            .collect();
        assert_eq!(colours, [0xD32F2F, 0xF9A825, 0x9E9E9E, 0x2E7D32]);
        let down = build(&BodyFormat::ChatEmbed, &failed("down.example"), None);
        assert_eq!(down["embeds"][0]["color"], 0x9E9E9E);
        assert_eq!(down["embeds"][0]["fields"][3]["value"], "unknown");
    }

    #[test]
    fn push_topic_carries_topic_priority_and_tags() {
        let mut r = scanned("cloud.example", "8.1.0", Some(100));
        let cases = [
            (State::Critical, 5, "rotating_light"),
            (State::Warning, 4, "warning"),
            (State::Unknown, 3, "grey_question"),
            (State::Ok, 3, "white_check_mark"),
        ];
        for (state, priority, tag) in cases {
            r.state = state;
            let body = build(&BodyFormat::PushTopic, &r, Some("alerts"));
            assert_eq!(body["topic"], "alerts");
            assert_eq!(body["priority"], priority);
            assert_eq!(body["tags"][0], tag);
            assert_eq!(body["title"], format!("{}: cloud.example", state.label()));
        }
        assert_eq!(
            build(&BodyFormat::PushTopic, &r, Some("alerts"))["message"],
            "OpenCloud 8.1.0 on cloud.example is up to date\nOpenCloud 8.1.0 on cloud.example, rating: A+"
        );
        // A failed scan is UNKNOWN whatever state it carries.
        let mut down = failed("down.example");
        down.state = State::Ok;
        let body = build(&BodyFormat::PushTopic, &down, Some("alerts"));
        assert_eq!(body["title"], "UNKNOWN: down.example");
        assert_eq!(
            body["message"],
            "cannot scan down.example: connection refused\ndown.example, rating: U"
        );
    }

    #[test]
    fn push_server_has_title_message_priority() {
        let mut r = hostile();
        let body = build(&BodyFormat::PushServer, &r, None);
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3, "{body}");
        assert_eq!(body["title"], "CRITICAL: cloud.example");
        assert_eq!(body["priority"], 8);
        r.state = State::Ok;
        assert_eq!(build(&BodyFormat::PushServer, &r, None)["priority"], 2);
    }

    #[test]
    fn long_server_text_is_clipped() {
        let mut r = hostile();
        r.host = "h".repeat(400);
        let body = build(&BodyFormat::ChatBlocks, &r, None);
        let header = body["blocks"][0]["text"]["text"].as_str().unwrap();
        assert_eq!(header.chars().count(), 150);
        assert!(header.ends_with('…'));
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("abcdef", 4), "abc…");
    }
}
