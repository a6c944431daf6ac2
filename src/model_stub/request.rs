//! Reading an Anthropic-Messages request body ([`analyse`]) or an OpenAI chat-completions one
//! ([`analyse_chat`]) the way the scripted model needs it: which text the directive comes from,
//! whether the request carries a tool result, which tools are offered. Both give the same
//! [`RequestFacts`], and both read user texts by the same rule.
//!
//! What the real 0.2.1rc2 runtime sends (observed): the body keys `model, stream, messages,
//! max_tokens, thinking, output_config, system, tools, dsh_session_log, dsh_plugin_packages`; every
//! message's `content` is an array of blocks. The runtime adds text blocks of its own to user
//! messages, and the user's prompt is not always the last block:
//! - the first user message of a session is `[prompt…, "Current runtime context. …"]` (a snapshot,
//!   re-sent when it changes; a cleared one reads `Current runtime context: none. …`);
//! - a subagent child's first message is `[prompt, "Your parent agent id is …", runtime context]`;
//! - after a failed turn the next prompt is merged into the same user message:
//!   `[error400, runtime context, reply: recovered]`;
//! - a settled subagent wakes its parent with a user message of its own:
//!   `["Background subagent <id> finished …", "Its closing message:", <child's last text>]`;
//! - a working-directory change adds `The working directory changed from "…" to "…".`;
//! - a tool call's result comes back as a user message of `tool_result` blocks.
//!
//! Hence the rule ([`analyse`]): take the last message with role `user`. If it holds a
//! `tool_result`, the model answers the tool result. If its first text is a subagent-settled notice,
//! or every text block is runtime-authored, it is a runtime notice. Otherwise, among the text blocks
//! that are not runtime-authored, the last one holding a directive is the prompt; when none holds
//! one, the last of them is (and is echoed). This is the reference runtime's rule for the prompt's
//! `contentBlocks`, with the runtime's own additions skipped.

use serde_json::Value;

pub use crate::directive::{is_runtime_text, RUNTIME_TEXT_PREFIXES, SUBAGENT_NOTICE_PREFIX};

/// What the last user message asks the scripted model to answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// A user-authored text: the directive is read from its start.
    Text(String),
    /// The last user message carries a tool result (its text blocks joined by `\n`).
    ToolResult(String),
    /// Only runtime-authored content (e.g. a subagent-settled notice): answered with `ok`.
    Notice,
}

/// The facts of one request body the stub acts on and logs.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFacts {
    /// Top-level keys, in the order sent.
    pub keys: Vec<String>,
    /// `model`, when a string.
    pub model: Option<String>,
    /// `stream`, when a boolean.
    pub stream: Option<bool>,
    /// `max_tokens`, when a number.
    pub max_tokens: Option<f64>,
    /// Number of `messages`.
    pub message_count: usize,
    /// Names of the offered `tools`, in order.
    pub tool_names: Vec<String>,
    /// What the scripted model answers.
    pub prompt: Prompt,
}

/// Extracts [`RequestFacts`] from a parsed body, or says in one sentence why the body is not a
/// Messages request the stub can answer.
pub fn analyse(body: &Value) -> Result<RequestFacts, String> {
    let obj = body
        .as_object()
        .ok_or("the request body is not a JSON object")?;
    let messages = match obj.get("messages") {
        Some(Value::Array(m)) => m,
        Some(_) => return Err("`messages` is not an array".into()),
        None => return Err("the request has no `messages`".into()),
    };
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .ok_or("`messages` holds no message with role \"user\"")?;
    let prompt = prompt_of(last_user)?;
    let tool_names = match obj.get("tools") {
        Some(Value::Array(tools)) => tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    Ok(RequestFacts {
        keys: obj.keys().cloned().collect(),
        model: obj.get("model").and_then(Value::as_str).map(str::to_owned),
        stream: obj.get("stream").and_then(Value::as_bool),
        max_tokens: obj.get("max_tokens").and_then(Value::as_f64),
        message_count: messages.len(),
        tool_names,
        prompt,
    })
}

fn prompt_of(message: &Value) -> Result<Prompt, String> {
    let blocks: Vec<&Value> = match message.get("content") {
        // The API also allows a plain string as the content of a message.
        Some(Value::String(s)) => return Ok(text_prompt(vec![s.as_str()])),
        Some(Value::Array(blocks)) => blocks.iter().collect(),
        _ => return Err("the last user message has no `content` string or array".into()),
    };
    if let Some(result) = blocks
        .iter()
        .rev()
        .find(|b| block_type(b) == Some("tool_result"))
    {
        return Ok(Prompt::ToolResult(tool_result_text(result)));
    }
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| block_type(b) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    if texts.is_empty() {
        return Err("the last user message has neither a text nor a tool_result block".into());
    }
    Ok(text_prompt(texts))
}

fn text_prompt(texts: Vec<&str>) -> Prompt {
    if texts
        .first()
        .is_some_and(|t| t.starts_with(SUBAGENT_NOTICE_PREFIX))
    {
        return Prompt::Notice;
    }
    match crate::directive::chosen_text(&texts) {
        Some(t) => Prompt::Text(t.to_owned()),
        None => Prompt::Notice,
    }
}

fn block_type(b: &Value) -> Option<&str> {
    b.get("type").and_then(Value::as_str)
}

fn tool_result_text(block: &Value) -> String {
    match block.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| block_type(p) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Extracts [`RequestFacts`] from a parsed OpenAI chat-completions body, or says in one sentence
/// why the stub cannot answer it.
///
/// The prompt comes from the last message whose role is `user` or `tool`: a `tool` message (the
/// result of the assistant's `tool_calls`) is the tool result, its `content` a string or an array
/// of `{type:"text", text}` parts (joined by `\n`); a `user` message's `content` is a string or an
/// array of parts, read by the same rule as a Messages request's text blocks (runtime-authored
/// texts skipped, a subagent-settled notice is a notice). Offered tools are
/// `tools[].function.name` (`[{type:"function", function:{name, …}}]`); the token limit is
/// `max_completion_tokens` or, failing that, `max_tokens`.
pub fn analyse_chat(body: &Value) -> Result<RequestFacts, String> {
    let obj = body
        .as_object()
        .ok_or("the request body is not a JSON object")?;
    let messages = match obj.get("messages") {
        Some(Value::Array(m)) => m,
        Some(_) => return Err("`messages` is not an array".into()),
        None => return Err("the request has no `messages`".into()),
    };
    let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_owned);
    let last = messages
        .iter()
        .rev()
        .find(|m| matches!(role(m).as_deref(), Some("user" | "tool")))
        .ok_or("`messages` holds no message with role \"user\" or \"tool\"")?;
    let prompt = if role(last).as_deref() == Some("tool") {
        Prompt::ToolResult(match last.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => text_parts(parts).join("\n"),
            _ => String::new(),
        })
    } else {
        match last.get("content") {
            Some(Value::String(s)) => text_prompt(vec![s.as_str()]),
            Some(Value::Array(parts)) => {
                let texts = text_parts(parts);
                if texts.is_empty() {
                    return Err("the last user message has no text part".into());
                }
                text_prompt(texts)
            }
            _ => return Err("the last user message has no `content` string or array".into()),
        }
    };
    let tool_names = match obj.get("tools") {
        Some(Value::Array(tools)) => tools
            .iter()
            .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    Ok(RequestFacts {
        keys: obj.keys().cloned().collect(),
        model: obj.get("model").and_then(Value::as_str).map(str::to_owned),
        stream: obj.get("stream").and_then(Value::as_bool),
        max_tokens: obj
            .get("max_completion_tokens")
            .or_else(|| obj.get("max_tokens"))
            .and_then(Value::as_f64),
        message_count: messages.len(),
        tool_names,
        prompt,
    })
}

/// The texts of `{type:"text", text}` parts, in order.
fn text_parts(parts: &[Value]) -> Vec<&str> {
    parts
        .iter()
        .filter(|p| block_type(p) == Some("text"))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect()
}
