//! The scripted model (docs/CONTRACT.md#s13.5): what the "model" answers, read from the prompt's
//! text blocks.
//!
//! The directive language is [`crate::directive`], shared with the model stub, and so is the
//! choice of text (the stub's request analysis follows the same rule): the last text block the
//! runtime did not write itself; a subagent-settled notice (or runtime text only) is answered
//! `ok`; no directive echoes the text. So one golden trace drives the reference runtime and a real runtime alike.

use crate::directive::{parse_directive, Directive, NOTICE_REPLY, SUBAGENT_NOTICE_PREFIX};
use serde_json::Value;

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
    /// `call: NAME {JSON}` of a tool other than bash and subagent (the profile's roster decides:
    /// see [`offered`]).
    Call {
        /// The tool.
        tool: String,
        /// Its input (a JSON object's text).
        input: String,
        /// `call!:`: the model calls it even when the request does not offer it.
        any: bool,
    },
    /// `error500`: HTTP 500 (retried, then `SERVER`/500).
    Error500,
    /// `error400`: HTTP 400 (not retried, `INVALID_REQUEST`) with this message.
    Error400(String),
    /// `sseerror`: an SSE `error` event (retried, then `SERVER`).
    SseError,
    /// `truncate`: the stream ends before `message_stop` (`STREAM_CLOSED`).
    Truncate,
    /// `hang`: the model never answers.
    Hang,
    /// The prompt content cannot be sent to the model (message, code), as the real adapter fails.
    BadContent(String, &'static str),
    /// A text block whose `text` is not a string: the real runtime fails the turn before any
    /// step starts, with JavaScript's words for calling `text.matchAll` ([`text_not_string`]).
    TextNotString(String),
}

/// The error of a turn whose prompt holds a text block with this `text` (not a string; `None`:
/// absent), as JavaScript words calling `text.matchAll` on it.
pub fn text_not_string(text: Option<&Value>) -> String {
    match text {
        None => "Cannot read properties of undefined (reading 'matchAll')".into(),
        Some(Value::Null) => "Cannot read properties of null (reading 'matchAll')".into(),
        Some(_) => {
            "block.text.matchAll is not a function or its return value is not iterable".into()
        }
    }
}

/// `String(v)` in JavaScript for a JSON value: arrays are joined with `,` (null elements empty),
/// objects are `[object Object]`. Arrays nested deeper than [`JS_STRING_DEPTH`] print as empty
/// (JavaScript itself runs out of stack somewhere past that; the wire allows any depth).
pub(super) fn js_string(v: &Value) -> String {
    let mut out = String::new();
    push_js_string(v, 0, &mut out);
    out
}

/// Nesting [`js_string`] follows.
const JS_STRING_DEPTH: usize = 256;

fn push_js_string(v: &Value, depth: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64() {
            Some(f) => out.push_str(&crate::wire::json::js_number(f)),
            None => out.push_str(&n.to_string()),
        },
        Value::String(s) => out.push_str(s),
        Value::Array(a) if depth < JS_STRING_DEPTH => {
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !x.is_null() {
                    push_js_string(x, depth + 1, out);
                }
            }
        }
        Value::Array(_) => {}
        Value::Object(_) => out.push_str("[object Object]"),
    }
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
    // A text block whose text is no string fails the turn before its first step, whatever
    // blocks come before it; the rest fail in the step, the first in order.
    let text_block = |b: &&Value| b.get("type").and_then(Value::as_str) == Some("text");
    if let Some(b) = blocks
        .iter()
        .filter(text_block)
        .find(|b| !b.get("text").is_some_and(Value::is_string))
    {
        return plain(Script::TextNotString(text_not_string(b.get("text"))));
    }
    // The DeepSeek adapter rejects what it cannot represent before any request is made.
    for b in blocks {
        let ty = b.get("type");
        match ty.and_then(Value::as_str) {
            Some("text") => {
                if !b.get("text").is_some_and(Value::is_string) {
                    return plain(Script::TextNotString(text_not_string(b.get("text"))));
                }
            }
            // One carrying `data` became an attachment when the prompt was accepted; one without
            // (a `url`, say) has none for the adapter to read.
            Some("image") if b.get("data").is_none() => {
                return plain(Script::BadContent(
                    "Cannot read properties of undefined (reading 'attachmentId')".into(),
                    "UNKNOWN",
                ))
            }
            Some("image") => {}
            Some(t) => {
                return plain(Script::BadContent(
                    format!("DeepSeek Messages cannot represent user/tool-result content {t}"),
                    "UNSUPPORTED_CONTENT",
                ))
            }
            None => {
                // The adapter prints the type as JavaScript's String() does.
                let t = ty.map_or("undefined".to_owned(), js_string);
                return plain(Script::BadContent(
                    format!("DeepSeek Messages cannot represent user/tool-result content {t}"),
                    "UNSUPPORTED_CONTENT",
                ));
            }
        }
    }
    // The release leaves empty texts out of the model request.
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .collect();
    let notice = texts
        .first()
        .is_some_and(|t| t.starts_with(SUBAGENT_NOTICE_PREFIX));
    match crate::directive::chosen_text(&texts) {
        Some(t) if !notice => from_directive(parse_directive(t)),
        _ => plain(Script::Reply(NOTICE_REPLY.into())),
    }
}

/// What the scripted model answers to a notice the runtime wrote (`content`, its blocks) when it
/// is the request's last user message: `ok` to a runtime text, else what [`for_content`] says
/// (a job's completion notice is echoed, as the model stand-in echoes it).
pub fn notice_reply(content: &Value) -> String {
    match for_content(content).script {
        Script::Reply(t) => t,
        _ => NOTICE_REPLY.into(),
    }
}

/// Maps a stub directive to the runtime's step (nested `slow`s add up).
fn from_directive(d: Directive) -> Step {
    let script = match d {
        Directive::Reply(t) | Directive::Echo(t) => Script::Reply(t),
        Directive::MaxTokens => Script::MaxTokens,
        Directive::Thinking => Script::Thinking,
        Directive::Empty => Script::Empty,
        Directive::Slow { secs, then } => {
            let inner = from_directive(*then);
            let delay = (secs.clamp(0.0, 86_400.0) * 1000.0) as u64;
            return Step {
                delay_ms: delay.saturating_add(inner.delay_ms),
                script: inner.script,
            };
        }
        Directive::Tool { command } => Script::Tool(command),
        Directive::Subagent { prompt } => Script::Subagent(prompt),
        Directive::Error500 => Script::Error500,
        Directive::Error400 => Script::Error400("fake bad request".into()),
        // A call keeps the model's input as written: the runtime checks it against the tool's
        // schema (`tool_args`), and a tool the request does not offer is refused ([`offered`]).
        Directive::Call { tool, input } => Script::Call {
            tool,
            input,
            any: false,
        },
        Directive::CallAny { tool, input } => Script::Call {
            tool,
            input,
            any: true,
        },
        Directive::SseError => Script::SseError,
        Directive::Truncate => Script::Truncate,
        Directive::Hang => Script::Hang,
    };
    plain(script)
}

impl Script {
    /// A bash call's command: `tool: CMD`, or `call: bash {"command": CMD}`.
    pub fn tool_command(&self) -> Option<String> {
        match self {
            Script::Tool(c) => Some(c.clone()),
            Script::Call { tool, input, .. } if tool == "bash" => Some(
                crate::wire::json::parse(input)
                    .ok()
                    .and_then(|p| {
                        p.value
                            .get("command")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .unwrap_or_default(),
            ),
            _ => None,
        }
    }
}

/// The step as the model answers when the request offers the tools `roster`: a call of a tool
/// it does not offer is refused as the model stub refuses it (HTTP 400 naming it).
pub fn offered(script: Script, roster: &[&str]) -> Script {
    let tool = match &script {
        Script::Tool(_) => "bash",
        Script::Subagent(_) => "subagent",
        Script::Call { any: true, .. } => return script,
        Script::Call { tool, .. } => tool.as_str(),
        _ => return script,
    };
    if roster.contains(&tool) {
        return script;
    }
    let offered: Vec<String> = roster.iter().map(|t| t.to_string()).collect();
    Script::Error400(crate::directive::unoffered_tool_message(tool, &offered))
}

fn plain(script: Script) -> Step {
    Step {
        delay_ms: 0,
        script,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(text: &str) -> Step {
        for_content(&json!([{"type":"text","text": text}]))
    }

    #[test]
    fn directives_map_to_steps_with_their_delays() {
        assert_eq!(
            step("reply: hello world").script,
            Script::Reply("hello world".into())
        );
        let s = step("slow:3 reply: first");
        assert_eq!(
            (s.delay_ms, s.script),
            (3000, Script::Reply("first".into()))
        );
        assert_eq!(step("tool: ls -l").script, Script::Tool("ls -l".into()));
        assert_eq!(
            step("subagent: reply: x").script,
            Script::Subagent("reply: x".into())
        );
        assert_eq!(step("hangover").script, Script::Reply("hangover".into()));
    }

    #[test]
    fn calls_of_tools_the_roster_lacks_are_refused_like_the_stub() {
        let sdk = ["bash", "subagent"];
        let minimal = ["bash", "read_image", "working_directory"];
        assert!(
            matches!(offered(step("call: edit {}").script, &sdk), Script::Error400(m) if m.contains("(offered: bash, subagent)"))
        );
        assert!(
            matches!(offered(step("subagent: x").script, &minimal), Script::Error400(m) if m.contains("`subagent`") && m.contains("(offered: bash, read_image, working_directory)"))
        );
        let wd = step("call: working_directory {\"cd\": \"/tmp\"}").script;
        assert_eq!(offered(wd.clone(), &minimal), wd);
        assert_eq!(
            offered(step("tool: ls").script, &minimal),
            Script::Tool("ls".into())
        );
    }

    #[test]
    fn runtime_text_is_skipped_and_notices_are_answered_ok() {
        let c = json!([{"type":"text","text":"reply: a"},{"type":"text","text":"Your parent agent id is \"s\"."}]);
        assert_eq!(for_content(&c).script, Script::Reply("a".into()));
        let c = json!([{"type":"text","text":"hi"},{"type":"text","text":"there"}]);
        assert_eq!(for_content(&c).script, Script::Reply("there".into()));
        let c = json!([{"type":"text","text":"Background subagent x finished."},{"type":"text","text":"reply: no"}]);
        assert_eq!(for_content(&c).script, Script::Reply("ok".into()));
        assert_eq!(for_content(&json!([])).script, Script::Reply("ok".into()));
    }

    #[test]
    fn unrepresentable_content_fails_like_the_real_adapter() {
        assert!(
            matches!(for_content(&json!(["x"])).script, Script::BadContent(m, "UNSUPPORTED_CONTENT") if m.ends_with("undefined"))
        );
        assert!(
            matches!(for_content(&json!([{"type":"bogus"}])).script, Script::BadContent(m, _) if m.ends_with("content bogus"))
        );
        let bad = |b: Value| for_content(&json!([b])).script;
        assert_eq!(
            bad(json!({"type":"text","text":5})),
            Script::TextNotString(
                "block.text.matchAll is not a function or its return value is not iterable".into()
            )
        );
        assert_eq!(
            bad(json!({"type":"text","text":null})),
            Script::TextNotString("Cannot read properties of null (reading 'matchAll')".into())
        );
        assert_eq!(
            bad(json!({"type":"text"})),
            Script::TextNotString(
                "Cannot read properties of undefined (reading 'matchAll')".into()
            )
        );
    }

    #[test]
    fn a_block_type_prints_as_javascripts_string_does() {
        let t = |v: Value| js_string(&v);
        assert_eq!(t(json!(null)), "null");
        assert_eq!(t(json!(5)), "5");
        assert_eq!(t(json!(1e21)), "1e+21");
        assert_eq!(t(json!(true)), "true");
        assert_eq!(t(json!([1, null, [2, "a"]])), "1,,2,a");
        assert_eq!(t(json!({"a": 1})), "[object Object]");
        let mut deep = json!([]);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep, Value::from(1)]);
        }
        // The wire allows any depth; printing stops at JS_STRING_DEPTH (and the value is dropped
        // without recursion).
        let deep = crate::wire::json::Deep::new(deep);
        let printed = js_string(&deep);
        assert_eq!(printed, ",1".repeat(JS_STRING_DEPTH));
    }

    #[test]
    fn the_directive_is_chosen_as_the_stub_chooses_it_and_empty_texts_are_left_out() {
        let text = |t: &str| json!({"type": "text", "text": t});
        let c = json!([text("reply: a"), text("plain")]);
        assert_eq!(for_content(&c).script, Script::Reply("a".into()));
        let c = json!([text("reply: a"), text("")]);
        assert_eq!(for_content(&c).script, Script::Reply("a".into()));
        let c = json!([text("")]);
        assert_eq!(for_content(&c).script, Script::Reply(NOTICE_REPLY.into()));
    }
}
