//! The scripted model (DESIGN §6): what the "model" answers, read from the prompt's text blocks.
//!
//! Like the model stub behind the recorded traces, the directive is the start of the last text
//! block that holds one (so a subagent's appended instructions do not hide its directive). With
//! no directive anywhere the model echoes the last text block (DESIGN §6; the recording stub
//! answered `ok` instead, see the fidelity allowlist).

use serde_json::Value;

/// Default delay of `slow` without `:N`, in seconds.
pub const DEFAULT_SLOW_SECS: f64 = 2.0;
/// Default command of `tool` without `: CMD`.
pub const DEFAULT_TOOL_CMD: &str = "echo hi";

/// What one model request answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Script {
    /// A text reply ending `completed` (`reply: X`, and the echo).
    Reply(String),
    /// `maxtokens`: text `partial...`, stop reason max tokens.
    MaxTokens,
    /// `thinking`: a reasoning block then a text block.
    Thinking,
    /// `empty`: no blocks (retried, then `EMPTY_RESPONSE`).
    Empty,
    /// `tool[: CMD]`: a bash tool call; the next step answers with the tool result.
    Tool(String),
    /// `subagent: P`: a subagent tool call running a child session on prompt P.
    Subagent(String),
    /// `error500`: HTTP 500 (retried, then `SERVER`/500).
    Error500,
    /// `error400`: HTTP 400 (not retried, `INVALID_REQUEST`).
    Error400,
    /// `sseerror`: an SSE `error` event (retried, then `SERVER`).
    SseError,
    /// `truncate`: the stream ends before `message_stop` (`STREAM_CLOSED`).
    Truncate,
    /// `hang`: the model never answers.
    Hang,
    /// The prompt content cannot be sent to the model (message, code), as the real adapter fails.
    BadContent(String, &'static str),
}

/// A directive with its delay (`slow:N`), in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Delay before the model answers.
    pub delay_ms: u64,
    /// The answer.
    pub script: Script,
}

/// Chooses the model's answer for a user message's content (the `contentBlocks` as sent).
pub fn for_content(content: &Value) -> Step {
    let blocks = match content {
        Value::Array(b) => b,
        _ => return plain(Script::Reply(String::new())),
    };
    // The DeepSeek adapter rejects what it cannot represent before any request is made.
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                if !b.get("text").is_some_and(Value::is_string) {
                    return plain(Script::BadContent(
                        "block.text.matchAll is not a function or its return value is not iterable"
                            .into(),
                        "UNKNOWN",
                    ));
                }
            }
            Some("image") => {}
            Some(t) => {
                return plain(Script::BadContent(
                    format!("DeepSeek Messages cannot represent user/tool-result content {t}"),
                    "UNSUPPORTED_CONTENT",
                ))
            }
            None => {
                return plain(Script::BadContent(
                    "DeepSeek Messages cannot represent user/tool-result content undefined".into(),
                    "UNSUPPORTED_CONTENT",
                ))
            }
        }
    }
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    for t in texts.iter().rev() {
        if let Some(step) = parse(t) {
            return step;
        }
    }
    plain(Script::Reply(
        texts.last().map(|s| s.to_string()).unwrap_or_default(),
    ))
}

fn plain(script: Script) -> Step {
    Step {
        delay_ms: 0,
        script,
    }
}

/// `word` at the start of `s`, followed by the end, whitespace or `:`; returns the rest.
fn word<'a>(s: &'a str, w: &str) -> Option<&'a str> {
    let rest = s.strip_prefix(w)?;
    match rest.chars().next() {
        None => Some(rest),
        Some(c) if c.is_whitespace() || c == ':' => Some(rest),
        _ => None,
    }
}

/// Parses a directive at the start of one text block; `None` when the block holds none.
pub fn parse(text: &str) -> Option<Step> {
    let t = text.trim_start();
    if let Some(rest) = word(t, "slow") {
        let (secs, rest) = match rest.strip_prefix(':') {
            Some(r) => {
                let end = r
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .unwrap_or(r.len());
                (
                    r[..end].parse::<f64>().unwrap_or(DEFAULT_SLOW_SECS),
                    &r[end..],
                )
            }
            None => (DEFAULT_SLOW_SECS, rest),
        };
        let inner = parse(rest).unwrap_or_else(|| {
            let r = rest.trim_start();
            plain(Script::Reply(r.to_string()))
        });
        let delay = (secs.clamp(0.0, 86_400.0) * 1000.0) as u64;
        return Some(Step {
            delay_ms: delay.saturating_add(inner.delay_ms),
            script: inner.script,
        });
    }
    if let Some(rest) = t.strip_prefix("reply:") {
        return Some(plain(Script::Reply(rest.trim_start().to_string())));
    }
    if let Some(rest) = word(t, "tool") {
        let cmd = rest
            .strip_prefix(':')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .unwrap_or(DEFAULT_TOOL_CMD);
        return Some(plain(Script::Tool(cmd.to_string())));
    }
    if let Some(rest) = t.strip_prefix("subagent:") {
        return Some(plain(Script::Subagent(rest.trim_start().to_string())));
    }
    let simple = [
        ("maxtokens", Script::MaxTokens),
        ("thinking", Script::Thinking),
        ("empty", Script::Empty),
        ("error500", Script::Error500),
        ("error400", Script::Error400),
        ("sseerror", Script::SseError),
        ("truncate", Script::Truncate),
        ("hang", Script::Hang),
    ];
    for (w, s) in simple {
        if word(t, w).is_some() {
            return Some(plain(s));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn directives_parse_with_their_arguments() {
        assert_eq!(
            parse("reply: hello world").unwrap().script,
            Script::Reply("hello world".into())
        );
        let s = parse("slow:3 reply: first").unwrap();
        assert_eq!(
            (s.delay_ms, s.script),
            (3000, Script::Reply("first".into()))
        );
        assert_eq!(parse("slow hang").unwrap().delay_ms, 2000);
        assert_eq!(
            parse("tool: ls -l").unwrap().script,
            Script::Tool("ls -l".into())
        );
        assert_eq!(
            parse("tool").unwrap().script,
            Script::Tool(DEFAULT_TOOL_CMD.into())
        );
        assert_eq!(
            parse("subagent: reply: x").unwrap().script,
            Script::Subagent("reply: x".into())
        );
        assert_eq!(parse("hangover"), None);
        assert_eq!(parse("hello"), None);
    }

    #[test]
    fn the_last_block_holding_a_directive_wins_and_otherwise_the_text_is_echoed() {
        let c = json!([{"type":"text","text":"reply: a"},{"type":"text","text":"not one"}]);
        assert_eq!(for_content(&c).script, Script::Reply("a".into()));
        let c = json!([{"type":"text","text":"hi"},{"type":"text","text":"there"}]);
        assert_eq!(for_content(&c).script, Script::Reply("there".into()));
    }

    #[test]
    fn unrepresentable_content_fails_like_the_real_adapter() {
        assert!(
            matches!(for_content(&json!(["x"])).script, Script::BadContent(m, "UNSUPPORTED_CONTENT") if m.ends_with("undefined"))
        );
        assert!(
            matches!(for_content(&json!([{"type":"bogus"}])).script, Script::BadContent(m, _) if m.ends_with("content bogus"))
        );
        assert!(matches!(
            for_content(&json!([{"type":"text","text":5}])).script,
            Script::BadContent(_, "UNKNOWN")
        ));
    }
}
