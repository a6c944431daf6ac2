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
//! Hence the rule ([`analyse`]): take the last run of messages with role `user` (older releases
//! send their context note as a user message of its own after the prompt's). If it holds a
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
    let is_user = |m: &Value| m.get("role").and_then(Value::as_str) == Some("user");
    let run = last_run(messages, is_user);
    if run.is_empty() {
        return Err("`messages` holds no message with role \"user\"".into());
    }
    let prompt = prompt_of(run)?;
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

/// The request's last run of messages that `keep`: the consecutive ones ending with the last
/// such message. A runtime may lay its request out as it likes; some send the prompt and their
/// context notes as user messages of their own (`[user "reply: hi", user "Current runtime
/// context…"]`, seen from older releases), so the directive is looked for in the whole run.
fn last_run(messages: &[Value], keep: impl Fn(&Value) -> bool) -> &[Value] {
    let end = messages.iter().rposition(&keep).map_or(0, |i| i + 1);
    let start = messages[..end]
        .iter()
        .rposition(|m| !keep(m))
        .map_or(0, |i| i + 1);
    &messages[start..end]
}

/// The prompt of the last user run. Its last message that is not all runtime-authored text (a
/// context note sent as a message of its own) decides the kind: a tool result, a runtime notice,
/// or a text prompt, whose directive is then looked for in the texts of the whole run.
fn prompt_of(run: &[Value]) -> Result<Prompt, String> {
    let anchor = run
        .iter()
        .rposition(|m| {
            let texts = message_texts(m);
            texts.is_empty() || !texts.iter().all(|t| is_runtime_text(t))
        })
        .unwrap_or(run.len() - 1);
    match prompt_of_message(&run[anchor])? {
        Prompt::Text(_) => {}
        other => return Ok(other),
    }
    let texts: Vec<&str> = run[..=anchor].iter().flat_map(message_texts).collect();
    Ok(text_prompt(texts))
}

/// A message's texts: its string content, or its text blocks' texts.
fn message_texts(message: &Value) -> Vec<&str> {
    match message.get("content") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

fn prompt_of_message(message: &Value) -> Result<Prompt, String> {
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
    let texts = message_texts(message);
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
    let run = last_run(messages, |m| {
        matches!(role(m).as_deref(), Some("user" | "tool"))
    });
    if run.is_empty() {
        return Err("`messages` holds no message with role \"user\" or \"tool\"".into());
    }
    let prompt = chat_prompt(run)?;
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

/// The prompt of a chat request's last run of `user` and `tool` messages, by the rule of
/// [`prompt_of`]: its last message that is not all runtime-authored text decides; a `tool` one is
/// the tool result, a `user` one a text prompt read over the whole run's user texts.
fn chat_prompt(run: &[Value]) -> Result<Prompt, String> {
    let is_tool = |m: &Value| m.get("role").and_then(Value::as_str) == Some("tool");
    fn texts_of(m: &Value) -> Vec<&str> {
        match m.get("content") {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(parts)) => text_parts(parts),
            _ => Vec::new(),
        }
    }
    let anchor = run
        .iter()
        .rposition(|m| {
            let texts = texts_of(m);
            is_tool(m) || texts.is_empty() || !texts.iter().all(|t| is_runtime_text(t))
        })
        .unwrap_or(run.len() - 1);
    if is_tool(&run[anchor]) {
        return Ok(Prompt::ToolResult(texts_of(&run[anchor]).join("\n")));
    }
    if !matches!(
        run[anchor].get("content"),
        Some(Value::String(_) | Value::Array(_))
    ) {
        return Err("the last user message has no `content` string or array".into());
    }
    let texts: Vec<&str> = run[..=anchor]
        .iter()
        .filter(|m| !is_tool(m))
        .flat_map(texts_of)
        .collect();
    if texts.is_empty() {
        return Err("the last user message has no text part".into());
    }
    Ok(text_prompt(texts))
}

/// The texts of `{type:"text", text}` parts, in order.
fn text_parts(parts: &[Value]) -> Vec<&str> {
    parts
        .iter()
        .filter(|p| block_type(p) == Some("text"))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Older releases send `[system, user prompt, user "Current runtime context…"]`: the
    /// directive is in the run's first message, not its last.
    #[test]
    fn the_directive_is_found_in_any_message_of_the_last_user_run() {
        let body = json!({"messages": [
            {"role": "system", "content": "you are"},
            {"role": "user", "content": [{"type": "text", "text": "reply: hello world"}]},
            {"role": "user", "content": [{"type": "text", "text": "Current runtime context. cwd"}]},
        ]});
        let want = Prompt::Text("reply: hello world".into());
        assert_eq!(analyse(&body).unwrap().prompt, want);
        let chat = json!({"messages": [
            {"role": "system", "content": "you are"},
            {"role": "user", "content": "reply: hello world"},
            {"role": "user", "content": "Current runtime context. cwd"},
        ]});
        assert_eq!(analyse_chat(&chat).unwrap().prompt, want);
        // An earlier run (before the assistant's answer) is history, not the prompt.
        let later = json!({"messages": [
            {"role": "user", "content": "reply: first"},
            {"role": "assistant", "content": "first"},
            {"role": "user", "content": "second"},
            {"role": "user", "content": "Current runtime context. cwd"},
        ]});
        assert_eq!(
            analyse(&later).unwrap().prompt,
            Prompt::Text("second".into())
        );
        assert_eq!(
            analyse_chat(&later).unwrap().prompt,
            Prompt::Text("second".into())
        );
    }

    #[test]
    fn a_tool_result_in_the_run_is_answered_even_with_a_note_after_it() {
        let body = json!({"messages": [
            {"role": "user", "content": "tool"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "hi"}]},
            {"role": "user", "content": "Current runtime context. cwd"},
        ]});
        assert_eq!(
            analyse(&body).unwrap().prompt,
            Prompt::ToolResult("hi".into())
        );
        let chat = json!({"messages": [
            {"role": "user", "content": "tool"},
            {"role": "tool", "tool_call_id": "t", "content": "hi"},
            {"role": "user", "content": "Current runtime context. cwd"},
        ]});
        assert_eq!(
            analyse_chat(&chat).unwrap().prompt,
            Prompt::ToolResult("hi".into())
        );
        assert!(analyse(&json!({"messages": [{"role": "assistant", "content": "x"}]})).is_err());
    }
}
