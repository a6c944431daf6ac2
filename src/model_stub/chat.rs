//! Writing the answer ([`super::answer`]) as OpenAI chat-completions: an SSE stream of
//! `chat.completion.chunk`s (`stream: true`) or one `chat.completion` object, or an OpenAI error.
//!
//! Pure: no I/O. The same texts as the Messages side: a text streams as two `delta.content`
//! pieces split at the middle character; reasoning is DeepSeek's `reasoning_content`; a tool call's
//! `function.arguments` is the same JSON text the Messages side sends as its `input_json_delta`.
//!
//! Every chunk is `data: <json>\n\n`: `{id:"chatcmpl-stub-N", object:"chat.completion.chunk",
//! created:0, model:<request's>, choices:[{index:0, delta, logprobs:null, finish_reason}]}`; the
//! first delta carries `role:"assistant"`, the last has an empty delta, the `finish_reason` and
//! `usage:{prompt_tokens:10, completion_tokens:5, total_tokens:15}`; then `data: [DONE]\n\n`.

use super::answer::{self, Answer, Stop, THINKING_REASONING, THINKING_TEXT, TRUNCATE_TEXT};
use super::reply::{Action, Plan};
use super::request::RequestFacts;
use crate::wire::json;
use serde_json::{json, Value};

/// The line that ends a complete stream.
pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// Decides the answer to a chat-completions request ([`answer::decide`]) and writes it: streamed
/// when `stream`, else as one `chat.completion`. `call_id` numbers completions and tool calls.
pub fn plan(facts: &RequestFacts, call_id: u64, stream: bool) -> Plan {
    let model = facts.model.as_deref().unwrap_or("deepseek-v4-flash");
    let decision = answer::decide(facts);
    let c = Completion {
        model,
        id: call_id,
        stream,
    };
    let action = match decision.answer {
        Answer::Text { text, stop } => c.message(None, Some(&text), None, finish(stop)),
        Answer::Thinking => c.message(Some(THINKING_REASONING), Some(THINKING_TEXT), None, "stop"),
        Answer::Empty => c.message(None, None, None, "stop"),
        Answer::ToolCall { tool, arguments } => {
            c.message(None, None, Some((&tool, &arguments)), "tool_calls")
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
        Answer::StreamError { kind, message } => {
            let body = error_value(kind, message);
            if stream {
                let mut out = Vec::new();
                data(&mut out, &body);
                Action::Stream(out)
            } else {
                // Not streamed: a 200 whose body is the error object, as the stream's only event.
                Action::Json(json::to_string(&body).into_bytes())
            }
        }
        Answer::Truncate => c.truncated(),
        Answer::Hang => Action::Hang,
    };
    Plan {
        directive: decision.directive,
        delay: decision.delay,
        action,
    }
}

/// `stop` or `length`.
fn finish(stop: Stop) -> &'static str {
    match stop {
        Stop::End => "stop",
        Stop::MaxTokens => "length",
    }
}

/// OpenAI's `type` and `code` for an error of `kind` (Anthropic's words, as [`Action::Error`]
/// carries them).
pub fn error_kind(kind: &str) -> (&str, &str) {
    match kind {
        "invalid_request_error" => ("invalid_request_error", "invalid_request_error"),
        "authentication_error" => ("authentication_error", "invalid_api_key"),
        "not_found_error" => ("invalid_request_error", "unknown_url"),
        "api_error" => ("server_error", "internal_error"),
        "overloaded_error" => ("server_error", "overloaded"),
        other => (other, other),
    }
}

fn error_value(kind: &str, message: &str) -> Value {
    let (kind, code) = error_kind(kind);
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// The body of an OpenAI error response: `{"error":{message, type, param:null, code}}`.
pub fn error_body(kind: &str, message: &str) -> Vec<u8> {
    json::to_string(&error_value(kind, message)).into_bytes()
}

/// One `data: <json>\n\n` line pair; the wire's writer, so a lone surrogate of the prompt is
/// echoed as its escape.
fn data(out: &mut Vec<u8>, v: &Value) {
    out.extend_from_slice(b"data: ");
    json::write_value(v, out);
    out.extend_from_slice(b"\n\n");
}

fn usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
}

struct Completion<'a> {
    model: &'a str,
    id: u64,
    stream: bool,
}

impl Completion<'_> {
    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        let mut v = json!({
            "id": format!("chatcmpl-stub-{}", self.id), "object": "chat.completion.chunk",
            "created": 0, "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]
        });
        if finish_reason.is_some() {
            v["usage"] = usage();
        }
        v
    }

    fn tool_call(&self, tool: &str, arguments: &str) -> Value {
        json!({"id": format!("call_stub_{}", self.id), "type": "function",
               "function": {"name": tool, "arguments": arguments}})
    }

    /// A whole answer: `reasoning` then `content`, or one tool call, then `finish_reason`.
    fn message(
        &self,
        reasoning: Option<&str>,
        content: Option<&str>,
        tool: Option<(&str, &str)>,
        finish_reason: &str,
    ) -> Action {
        if !self.stream {
            let mut message = json!({"role": "assistant", "content": content.unwrap_or("")});
            if let Some(r) = reasoning {
                message["reasoning_content"] = Value::from(r);
            }
            if let Some((t, a)) = tool {
                message["content"] = Value::Null;
                message["tool_calls"] = json!([self.tool_call(t, a)]);
            }
            let v = json!({
                "id": format!("chatcmpl-stub-{}", self.id), "object": "chat.completion",
                "created": 0, "model": self.model,
                "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
                "usage": usage()
            });
            return Action::Json(json::to_string(&v).into_bytes());
        }
        let mut out = Vec::with_capacity(1024);
        match (reasoning, tool) {
            (_, Some((t, a))) => {
                let call = json!({"index": 0, "id": format!("call_stub_{}", self.id),
                                  "type": "function", "function": {"name": t, "arguments": ""}});
                let first = json!({"role": "assistant", "content": null, "tool_calls": [call]});
                data(&mut out, &self.chunk(first, None));
                let args = json!({"tool_calls": [{"index": 0, "function": {"arguments": a}}]});
                data(&mut out, &self.chunk(args, None));
            }
            (Some(r), None) => {
                let first = json!({"role": "assistant", "content": null, "reasoning_content": ""});
                data(&mut out, &self.chunk(first, None));
                data(&mut out, &self.chunk(json!({"reasoning_content": r}), None));
            }
            (None, None) => {
                let first = match content {
                    Some(_) => json!({"role": "assistant", "content": ""}),
                    None => json!({"role": "assistant"}),
                };
                data(&mut out, &self.chunk(first, None));
            }
        }
        if let Some(text) = content {
            for part in answer::halves(text).into_iter().filter(|p| !p.is_empty()) {
                data(&mut out, &self.chunk(json!({"content": part}), None));
            }
        }
        data(&mut out, &self.chunk(json!({}), Some(finish_reason)));
        out.extend_from_slice(DONE);
        Action::Stream(out)
    }

    /// The start of a text answer, then nothing: no finish, no `[DONE]` (streamed), or a
    /// `chat.completion` cut in the middle of its text (not streamed).
    fn truncated(&self) -> Action {
        if self.stream {
            let mut out = Vec::new();
            data(
                &mut out,
                &self.chunk(json!({"role": "assistant", "content": ""}), None),
            );
            data(
                &mut out,
                &self.chunk(json!({"content": TRUNCATE_TEXT}), None),
            );
            return Action::Stream(out);
        }
        let Action::Json(whole) = self.message(None, Some(TRUNCATE_TEXT), None, "stop") else {
            unreachable!("not streamed")
        };
        let cut = whole
            .windows(TRUNCATE_TEXT.len())
            .position(|w| w == TRUNCATE_TEXT.as_bytes())
            .map_or(whole.len() / 2, |at| at + 2);
        Action::Json(whole[..cut].to_vec())
    }
}
