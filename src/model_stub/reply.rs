//! Writing the answer ([`super::answer`]) as the exact HTTP answer of Anthropic Messages (an SSE
//! stream or an error).
//!
//! Pure: no I/O. Texts and tool arguments reproduce the stub the real runtime was recorded against
//! (traces/real-0.2.1rc2), so a runtime driven by this stub emits the same assistant content:
//! texts are streamed as two `text_delta`s split at the middle character (`hello world` →
//! `hello` + ` world`); tool arguments are one `input_json_delta` written with `", "`/`": "`
//! separators (`{"description": "probe command", "command": "echo hi"}`); usage is 10 in, 5 out.

use super::answer::{self, Answer, Stop};
use super::request::RequestFacts;
use crate::directive::Directive;
use crate::wire::json;
use serde_json::{json, Value};
use std::time::Duration;

pub use super::answer::{
    spaced_object, BASH_TOOL, MAXTOKENS_TEXT, SUBAGENT_DESCRIPTION, SUBAGENT_TOOL,
    THINKING_REASONING, THINKING_TEXT, TOOL_DESCRIPTION, TOOL_RESULT_PREFIX, TRUNCATE_TEXT,
};
/// Reply to a runtime notice (no user text in the last user message).
pub use crate::directive::NOTICE_REPLY;
/// Signature of the `thinking` reply's reasoning block.
pub const THINKING_SIGNATURE: &str = "fakesig";

/// The answer to one request, on the wire.
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
    /// `200 application/json` with this body (a chat-completions answer not streamed).
    Json(Vec<u8>),
    /// An error status with the protocol's error body (Anthropic:
    /// `{"type":"error","error":{type,message}}`, OpenAI: [`super::chat::error_body`]).
    Error {
        /// HTTP status.
        status: u16,
        /// Error type, in Anthropic's words (`api_error`, `invalid_request_error`, …).
        kind: &'static str,
        /// Human-readable message (ends up in the runtime's `turn/end` error).
        message: String,
    },
    /// Send nothing until the client leaves or the stub stops.
    Hang,
}

/// Decides the answer to a Messages request ([`answer::decide`]) and writes it as an Anthropic
/// SSE stream. `call_id` numbers tool calls and messages (unique per stub).
pub fn plan(facts: &RequestFacts, call_id: u64) -> Plan {
    let model = facts.model.as_deref().unwrap_or("deepseek-v4-flash");
    let decision = answer::decide(facts);
    let mut sse = Sse::new(model, call_id);
    let action = match decision.answer {
        Answer::Text { text, stop } => {
            let reason = match stop {
                Stop::End => "end_turn",
                Stop::MaxTokens => "max_tokens",
            };
            Action::Stream(sse.text_message(&text, reason))
        }
        Answer::Thinking => Action::Stream(sse.thinking_message()),
        Answer::Empty => Action::Stream(sse.empty_message()),
        Answer::ToolCall { tool, arguments } => {
            Action::Stream(sse.tool_use_message(&tool, &arguments))
        }
        Answer::Error {
            status,
            kind,
            message,
        } => Action::Error {
            status,
            kind,
            message,
        },
        Answer::StreamError { kind, message } => Action::Stream(sse.error_only(kind, message)),
        Answer::Truncate => Action::Stream(sse.truncated()),
        Answer::Hang => Action::Hang,
    };
    Plan {
        directive: decision.directive,
        delay: decision.delay,
        action,
    }
}

/// The body of an Anthropic error response.
pub fn error_body(kind: &str, message: &str) -> Vec<u8> {
    json::to_string(&json!({"type": "error", "error": {"type": kind, "message": message}}))
        .into_bytes()
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
        for part in answer::halves(text).into_iter().filter(|p| !p.is_empty()) {
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
