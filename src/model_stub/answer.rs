//! Which answer a request gets, whatever the protocol: the one source of truth both encoders
//! ([`super::reply`] for Anthropic Messages, [`super::chat`] for OpenAI chat-completions) share.
//!
//! Pure: no I/O, no wire format. [`decide`] reads the directive of the request's prompt
//! ([`crate::directive`]), unwraps `slow` into a delay, checks that a tool directive's tool is
//! offered, and says what the model answers ([`Answer`]); an encoder only writes it down.

use super::request::{Prompt, RequestFacts};
use crate::directive::{Directive, NOTICE_REPLY};
use std::time::Duration;

/// Text of the `maxtokens` reply.
pub const MAXTOKENS_TEXT: &str = "partial...";
/// Reasoning text of the `thinking` reply.
pub const THINKING_REASONING: &str = "let me think";
/// Final text of the `thinking` reply.
pub const THINKING_TEXT: &str = "thought done";
/// The only text sent by `truncate` before the stream ends.
pub const TRUNCATE_TEXT: &str = "trunc";
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

/// Why a text answer stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The model finished (`end_turn`, `stop`).
    End,
    /// The token limit cut it (`max_tokens`, `length`).
    MaxTokens,
}

/// What the scripted model answers, before any protocol writes it down.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A text (possibly empty), then a stop.
    Text {
        /// The text.
        text: String,
        /// Why it stopped.
        stop: Stop,
    },
    /// Reasoning [`THINKING_REASONING`], then the text [`THINKING_TEXT`].
    Thinking,
    /// A message with no content at all.
    Empty,
    /// One call of `tool` with `arguments` (a JSON object's text), stopping for the tool.
    ToolCall {
        /// The tool's name (offered by the request).
        tool: String,
        /// Its arguments, as the text sent.
        arguments: String,
    },
    /// An HTTP error status with an error body.
    Error {
        /// HTTP status.
        status: u16,
        /// Error type, in Anthropic's words (`api_error`, `invalid_request_error`, …); each
        /// encoder maps it to its own.
        kind: &'static str,
        /// Human-readable message (ends up in the runtime's `turn/end` error).
        message: String,
    },
    /// A `200` stream whose only event is an error of `kind` saying `message`.
    StreamError {
        /// Error type, in Anthropic's words.
        kind: &'static str,
        /// The message.
        message: &'static str,
    },
    /// A `200` answer cut after [`TRUNCATE_TEXT`] began: no end.
    Truncate,
    /// Nothing, until the client leaves or the stub stops.
    Hang,
}

/// The protocol-independent answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The directive read from the prompt (`None` for tool results and notices).
    pub directive: Option<Directive>,
    /// Wait this long before answering (`slow`).
    pub delay: Duration,
    /// What the model answers after the delay.
    pub answer: Answer,
}

/// Decides the answer to a request (the directive table of [`super`]).
pub fn decide(facts: &RequestFacts) -> Decision {
    let text = |text: String| Answer::Text {
        text,
        stop: Stop::End,
    };
    let (directive, mut d) = match &facts.prompt {
        Prompt::ToolResult(result) => {
            return Decision {
                directive: None,
                delay: Duration::ZERO,
                answer: text(format!("{TOOL_RESULT_PREFIX}{result}")),
            }
        }
        Prompt::Notice => {
            return Decision {
                directive: None,
                delay: Duration::ZERO,
                answer: text(NOTICE_REPLY.into()),
            }
        }
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
    let answer = match d {
        Directive::Reply(t) | Directive::Echo(t) => text(t),
        Directive::MaxTokens => Answer::Text {
            text: MAXTOKENS_TEXT.into(),
            stop: Stop::MaxTokens,
        },
        Directive::Thinking => Answer::Thinking,
        Directive::Empty => Answer::Empty,
        Directive::Tool { command } => tool_call(
            facts,
            BASH_TOOL,
            spaced_object(&[("description", TOOL_DESCRIPTION), ("command", &command)]),
        ),
        Directive::Subagent { prompt } => tool_call(
            facts,
            SUBAGENT_TOOL,
            spaced_object(&[("description", SUBAGENT_DESCRIPTION), ("prompt", &prompt)]),
        ),
        Directive::Call { tool, input } => tool_call(facts, &tool, input),
        Directive::CallAny { tool, input } => Answer::ToolCall {
            tool,
            arguments: input,
        },
        Directive::Error500 => Answer::Error {
            status: 500,
            kind: "api_error",
            message: "fake internal error".into(),
        },
        Directive::Error400 => Answer::Error {
            status: 400,
            kind: "invalid_request_error",
            message: "fake bad request".into(),
        },
        Directive::SseError => Answer::StreamError {
            kind: "overloaded_error",
            message: "fake overloaded",
        },
        Directive::Truncate => Answer::Truncate,
        Directive::Hang => Answer::Hang,
        Directive::Slow { .. } => unreachable!("unwrapped above"),
    };
    Decision {
        directive: Some(directive),
        delay,
        answer,
    }
}

/// A call of `tool` when the request offers it; else the refusal: a clear, non-retried failure
/// the runtime surfaces in turn/end, instead of a tool call it would reject less tellingly.
fn tool_call(facts: &RequestFacts, tool: &str, arguments: String) -> Answer {
    if facts.tool_names.iter().any(|t| t == tool) {
        return Answer::ToolCall {
            tool: tool.to_owned(),
            arguments,
        };
    }
    Answer::Error {
        status: 400,
        kind: "invalid_request_error",
        message: crate::directive::unoffered_tool_message(tool, &facts.tool_names),
    }
}

/// `{"k": "v", "k2": "v2"}`: JSON with Python's default separators, as the recorded stub wrote them.
pub fn spaced_object(pairs: &[(&str, &str)]) -> String {
    use crate::wire::json;
    use serde_json::Value;
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

/// Splits at the middle character (`len / 2` code points, a lone surrogate one), as the
/// recorded stub (Python) did: the two pieces a text is streamed in.
pub fn halves(text: &str) -> [&str; 2] {
    use crate::wire::json;
    let at = json::held::nth_char(text, json::held::char_count(text) / 2);
    [&text[..at], &text[at..]]
}
