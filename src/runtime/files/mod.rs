//! The `sdk` profile's file tools as the 0.2.1rc2 release runs them (`@deepseek-ai/dsh-tool-fs`
//! and `dsh-tool-fs-search`, read in its executable and recorded in
//! `fixtures/real-0.2.1rc2/raw/sdk_tool_*`; docs/CONTRACT.md#s13.4): `read`, `write`, `edit`,
//! `glob`, `grep` and `todo_write`, each in its own module, over the [`fs::Fs`] seam; and the
//! profile's other tools as the release answers them in an SDK session (`others.rs`).
//!
//! A session remembers what it observed of each file (read, written, or found absent): the
//! release's `fs-observation-policy` lets `write` replace and `edit` change only a file the
//! session observed, at the version it observed.

mod edit;
pub mod fs;
mod ignore;
mod lang;
mod others;
mod policy;
mod read;
pub mod schema;
mod search;
mod todo;
mod write;

use fs::{Fs, Version};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;

/// The file tools this module runs.
pub const TOOLS: &[&str] = &["read", "write", "edit", "glob", "grep", "todo_write"];

/// Whether this module answers a call of `tool` with `input` (its text): a file tool, one of
/// `others::TOOLS`, or another tool with a schema whose arguments break it (`create_goal`,
/// `subagent_fork` and `workflow` calls that pass their check are not run).
pub fn answers(tool: &str, input: &str) -> bool {
    if TOOLS.contains(&tool) || others::TOOLS.contains(&tool) {
        return true;
    }
    let v = crate::wire::json::parse(input).map_or(Value::Null, |p| p.value);
    schema::of(tool).is_some() && schema::check(tool, &v).is_err()
}

/// What a session observed of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Absent (a read found nothing).
    Absent,
    /// Present at this version.
    Present(Version),
}

/// A session's tool state: its observations (by canonical path), its todo list and the
/// subagents it spawned (id, label).
#[derive(Debug, Clone, Default)]
pub struct State {
    seen: HashMap<PathBuf, Seen>,
    todos: Value,
    children: Vec<(String, String)>,
}

impl State {
    /// Records a subagent this session spawned (`list_agents` lists it).
    pub fn spawned(&mut self, id: &str, label: &str) {
        self.children.push((id.to_owned(), label.to_owned()));
    }
}

/// What a file-tool call produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The result text.
    pub text: String,
    /// Whether the result is an error.
    pub is_error: bool,
    /// The `error` member beside an error result (`{name, code}`).
    pub error: Option<Value>,
    /// The result's `meta` member.
    pub meta: Option<Value>,
    /// Events written before the result (type, data).
    pub events: Vec<(&'static str, Value)>,
}

impl Outcome {
    fn ok(text: String, meta: Option<Value>) -> Self {
        Outcome {
            text,
            meta,
            ..Self::default()
        }
    }
    /// A plain error (`Error: <message>`, no `error` member).
    fn plain(message: &str) -> Self {
        Outcome {
            text: format!("Error: {message}"),
            is_error: true,
            ..Self::default()
        }
    }
    /// An error of class `name` with `code`.
    fn coded(message: &str, name: &str, code: &str) -> Self {
        Outcome {
            error: Some(json!({"name": name,"code": code})),
            ..Self::plain(message)
        }
    }
    /// An `FsError`.
    fn fs(message: &str, code: &str) -> Self {
        Self::coded(message, "FsError", code)
    }
}

/// One call's surroundings: the session's directory, state and call id.
pub struct Call<'a> {
    /// The session's working directory.
    pub cwd: &'a str,
    /// The workspace the session opened in (`initialize`'s `cwd` then): writable under
    /// `workspace-write` wherever the session's directory moved since.
    pub root: &'a str,
    /// The session's file-tool state.
    pub state: &'a mut State,
    /// The tool call's id (approval events name it).
    pub call_id: &'a str,
    /// The file system.
    pub fs: &'a dyn Fs,
    /// The session's model (`web_search` names it).
    pub model: &'a str,
    /// The session's id (`list_agents` names it as its subagents' parent).
    pub sid: &'a str,
}

/// Runs file tool `tool` with the call's arguments `args` (`None`: not JSON).
pub fn run(tool: &str, args: Option<&Value>, c: &mut Call<'_>) -> Outcome {
    let args = args.cloned().unwrap_or(Value::Null);
    if let Err(p) = schema::check(tool, &args) {
        return Outcome::coded(
            &format!("invalid arguments: {p}"),
            "ToolArgsError",
            "INVALID_ARGS",
        );
    }
    match tool {
        "read" => read::run(&args, c),
        "write" => write::run(&args, c),
        "edit" => edit::run(&args, c),
        "glob" => search::glob(&args, c),
        "grep" => search::grep(&args, c),
        "todo_write" => todo::run(&args, c.state),
        _ => others::run(tool, &args, c),
    }
}

/// A string argument (`""` when absent).
fn arg<'v>(args: &'v Value, key: &str) -> &'v str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The outcome of a call's escalation request, when it makes one (write, edit).
fn escalated(tool: &str, args: &Value, c: &Call<'_>) -> Option<Outcome> {
    escalation(tool, args, c.call_id)
}

/// The outcome of call `call_id`'s escalation request (`sandbox_permissions`, `justification`)
/// when it makes one: the release's error, after the approval nobody could answer (write,
/// edit, and the `sdk` bash).
pub fn escalation(tool: &str, args: &Value, call_id: &str) -> Option<Outcome> {
    let (message, asked) = policy::escalation(args)?;
    let mut o = Outcome::plain(&message);
    if let Some(reason) = asked {
        o.events = policy::unanswered(tool, call_id, &reason).into();
    }
    Some(o)
}

/// The message of an observation failure as the tool layer rewrites it.
fn not_observed(display: &str) -> Outcome {
    Outcome::fs(
        &format!("cannot modify \"{display}\": file has not been read \u{2014} read the file, then retry"),
        "FS_NOT_OBSERVED",
    )
}

/// A stale-version failure as the tool layer rewrites it.
fn stale(message: &str) -> Outcome {
    Outcome::fs(
        &format!("{message} \u{2014} re-read the file, then retry"),
        "FS_STALE_VERSION",
    )
}

#[cfg(test)]
mod tests;
