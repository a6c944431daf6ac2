//! Turning a directive into the exact HTTP answer (an Anthropic-Messages SSE stream or an error).
//!
//! Pure: no I/O. Texts and tool arguments reproduce the stub the real runtime was recorded against
//! (traces/real-0.2.1rc2), so a runtime driven by this stub emits the same assistant content:
//! texts are streamed as two `text_delta`s split at the middle character (`hello world` →
//! `hello` + ` world`); tool arguments are one `input_json_delta` written with `", "`/`": "`
//! separators (`{"description": "probe command", "command": "echo hi"}`); usage is 10 in, 5 out.

use super::request::{Prompt, RequestFacts};
use crate::directive::Directive;
use crate::wire::json;
use serde_json::{json, Value};
use std::time::Duration;

/// Text of the `maxtokens` reply.
pub const MAXTOKENS_TEXT: &str = "partial...";
/// Reasoning text of the `thinking` reply.
pub const THINKING_REASONING: &str = "let me think";
/// Signature of the `thinking` reply's reasoning block.
pub const THINKING_SIGNATURE: &str = "fakesig";
/// Final text of the `thinking` reply.
pub const THINKING_TEXT: &str = "thought done";
/// The only text sent by `truncate` before the stream ends.
pub const TRUNCATE_TEXT: &str = "trunc";
/// Reply to a runtime notice (no user text in the last user message).
pub use crate::directive::NOTICE_REPLY;
/// Prefix of the reply to a request carrying a tool result.
pub const TOOL_RESULT_PREFIX: &str = "tool result: ";
/// `description` argument of scripted tool calls (bash refuses calls without one).
pub const TOOL_DESCRIPTION: &str = "probe command";
/// `description` argument of scripted subagent calls.
pub const SUBAGENT_DESCRIPTION: &str = "probe child";
/// Name of the tool `tool` calls.
pub const BASH_TOOL: &str = "bash";
/// Name of the tool `subagent` calls.
pub const SUBAGENT_TOOL: &str = "subagent";

/// The answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The directive read from the prompt (`None` for tool results and notices).
    pub directive: Option<Directive>,
    /// Wait this long before answering (`slow`).
    pub delay: Duration,
    /// What to send after the delay.
    pub action: Action,
}

/// What goes on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `200 text/event-stream` with this body.
    Stream(Vec<u8>),
    /// An error status with an Anthropic error body `{"type":"error","error":{type,message}}`.
    Error {
        /// HTTP status.
        status: u16,
        /// Anthropic error type (`api_error`, `invalid_request_error`, …).
        kind: &'static str,
        /// Human-readable message (ends up in the runtime's `turn/end` error).
        message: String,
    },
    /// Send nothing until the client leaves or the stub stops.
    Hang,
}

/// Decides the answer to a request. `call_id` numbers tool calls and messages (unique per stub).
pub fn plan(facts: &RequestFacts, call_id: u64) -> Plan {
    let model = facts.model.as_deref().unwrap_or("deepseek-v4-flash");
    let mut sse = Sse::new(model, call_id);
    let (directive, mut d) = match &facts.prompt {
        Prompt::ToolResult(text) => {
            return stream_plan(
                None,
                sse.text_message(&format!("{TOOL_RESULT_PREFIX}{text}"), "end_turn"),
            )
        }
        Prompt::Notice => return stream_plan(None, sse.text_message(NOTICE_REPLY, "end_turn")),
        Prompt::Text(t) => {
            let d = crate::directive::parse_directive(t);
            (d.clone(), d)
        }
    };
    let mut delay = Duration::ZERO;
    while let Directive::Slow { secs, then } = d {
        delay += Duration::from_secs_f64(secs);
        d = *then;
    }
    let action = match d {
        Directive::Reply(text) | Directive::Echo(text) => {
            Action::Stream(sse.text_message(&text, "end_turn"))
        }
        Directive::MaxTokens => Action::Stream(sse.text_message(MAXTOKENS_TEXT, "max_tokens")),
        Directive::Thinking => Action::Stream(sse.thinking_message()),
        Directive::Empty => Action::Stream(sse.empty_message()),
        Directive::Tool { command } => tool_call(
            &mut sse,
            facts,
            BASH_TOOL,
            &[("description", TOOL_DESCRIPTION), ("command", &command)],
        ),
        Directive::Subagent { prompt } => tool_call(
            &mut sse,
            facts,
            SUBAGENT_TOOL,
            &[("description", SUBAGENT_DESCRIPTION), ("prompt", &prompt)],
        ),
        Directive::Call { tool, input } => match offered(facts, &tool) {
            Some(refused) => refused,
            None => Action::Stream(sse.tool_use_message(&tool, &input)),
        },
        Directive::Error500 => Action::Error {
            status: 500,
            kind: "api_error",
            message: "fake internal error".into(),
        },
        Directive::Error400 => Action::Error {
            status: 400,
            kind: "invalid_request_error",
            message: "fake bad request".into(),
        },
        Directive::SseError => {
            Action::Stream(sse.error_only("overloaded_error", "fake overloaded"))
        }
        Directive::Truncate => Action::Stream(sse.truncated()),
        Directive::Hang => Action::Hang,
        Directive::Slow { .. } => unreachable!("unwrapped above"),
    };
    Plan {
        directive: Some(directive),
        delay,
        action,
    }
}

fn stream_plan(directive: Option<Directive>, body: Vec<u8>) -> Plan {
    Plan {
        directive,
        delay: Duration::ZERO,
        action: Action::Stream(body),
    }
}

fn tool_call(sse: &mut Sse, facts: &RequestFacts, tool: &str, args: &[(&str, &str)]) -> Action {
    match offered(facts, tool) {
        Some(refused) => refused,
        None => Action::Stream(sse.tool_use_message(tool, &spaced_object(args))),
    }
}

/// `None` when the request offers `tool`; else the refusal: a clear, non-retried failure the
/// runtime surfaces in turn/end, instead of a tool call it would reject less tellingly.
fn offered(facts: &RequestFacts, tool: &str) -> Option<Action> {
    if facts.tool_names.iter().any(|t| t == tool) {
        return None;
    }
    Some(Action::Error {
        status: 400,
        kind: "invalid_request_error",
        message: crate::directive::unoffered_tool_message(tool, &facts.tool_names),
    })
}

/// `{"k": "v", "k2": "v2"}`: JSON with Python's default separators, as the recorded stub wrote them.
pub fn spaced_object(pairs: &[(&str, &str)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&json::to_string(&Value::from(*k)));
        out.push_str(": ");
        out.push_str(&json::to_string(&Value::from(*v)));
    }
    out.push('}');
    out
}

/// The body of an Anthropic error response.
pub fn error_body(kind: &str, message: &str) -> Vec<u8> {
    json::to_string(&json!({"type": "error", "error": {"type": kind, "message": message}}))
        .into_bytes()
}

/// Splits at the middle character (`len / 2` code points, a lone surrogate one), as the
/// recorded stub (Python) did.
fn halves(text: &str) -> [&str; 2] {
    let at = json::held::nth_char(text, json::held::char_count(text) / 2);
    [&text[..at], &text[at..]]
}

/// An SSE body under construction.
struct Sse {
    out: Vec<u8>,
    model: String,
    id: u64,
}

impl Sse {
    fn new(model: &str, id: u64) -> Sse {
        Sse {
            out: Vec::with_capacity(1024),
            model: model.to_owned(),
            id,
        }
    }

    fn event(&mut self, data: Value) {
        let kind = data["type"].as_str().unwrap_or("message").to_owned();
        self.out.extend_from_slice(b"event: ");
        self.out.extend_from_slice(kind.as_bytes());
        self.out.extend_from_slice(b"\ndata: ");
        // The wire's writer: a lone surrogate of the prompt is echoed as its escape, as a
        // JavaScript (or Python) endpoint would write the string it parsed.
        json::write_value(&data, &mut self.out);
        self.out.extend_from_slice(b"\n\n");
    }

    fn start(&mut self) {
        let message = json!({
            "id": format!("msg_stub_{}", self.id), "type": "message", "role": "assistant",
            "model": self.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 0}
        });
        self.event(json!({"type": "message_start", "message": message}));
    }

    fn block_start(&mut self, index: usize, block: Value) {
        self.event(json!({"type": "content_block_start", "index": index, "content_block": block}));
    }

    fn delta(&mut self, index: usize, delta: Value) {
        self.event(json!({"type": "content_block_delta", "index": index, "delta": delta}));
    }

    fn block_stop(&mut self, index: usize) {
        self.event(json!({"type": "content_block_stop", "index": index}));
    }

    fn text_block(&mut self, index: usize, text: &str) {
        self.block_start(index, json!({"type": "text", "text": ""}));
        for part in halves(text).into_iter().filter(|p| !p.is_empty()) {
            self.delta(index, json!({"type": "text_delta", "text": part}));
        }
        self.block_stop(index);
    }

    fn finish(&mut self, stop_reason: &str) -> Vec<u8> {
        self.event(json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": 5}
        }));
        self.event(json!({"type": "message_stop"}));
        std::mem::take(&mut self.out)
    }

    fn text_message(&mut self, text: &str, stop_reason: &str) -> Vec<u8> {
        self.start();
        self.text_block(0, text);
        self.finish(stop_reason)
    }

    fn thinking_message(&mut self) -> Vec<u8> {
        self.start();
        self.block_start(0, json!({"type": "thinking", "thinking": ""}));
        self.delta(
            0,
            json!({"type": "thinking_delta", "thinking": THINKING_REASONING}),
        );
        self.delta(
            0,
            json!({"type": "signature_delta", "signature": THINKING_SIGNATURE}),
        );
        self.block_stop(0);
        self.text_block(1, THINKING_TEXT);
        self.finish("end_turn")
    }

    fn empty_message(&mut self) -> Vec<u8> {
        self.start();
        self.finish("end_turn")
    }

    fn tool_use_message(&mut self, tool: &str, args: &str) -> Vec<u8> {
        self.start();
        let id = format!("toolu_stub_{}", self.id);
        self.block_start(
            0,
            json!({"type": "tool_use", "id": id, "name": tool, "input": {}}),
        );
        self.delta(0, json!({"type": "input_json_delta", "partial_json": args}));
        self.block_stop(0);
        self.finish("tool_use")
    }

    fn error_only(&mut self, kind: &str, message: &str) -> Vec<u8> {
        self.event(json!({"type": "error", "error": {"type": kind, "message": message}}));
        std::mem::take(&mut self.out)
    }

    fn truncated(&mut self) -> Vec<u8> {
        self.start();
        self.block_start(0, json!({"type": "text", "text": ""}));
        self.delta(0, json!({"type": "text_delta", "text": TRUNCATE_TEXT}));
        std::mem::take(&mut self.out)
    }
}
