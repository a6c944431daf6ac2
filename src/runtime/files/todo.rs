//! `todo_write`: the session's todo list, replaced whole; a `todo/write` event carries it and
//! the result counts its states.

use super::{Outcome, State};
use serde_json::{json, Value};

/// Runs `todo_write` (its arguments already checked against the schema).
pub fn run(args: &Value, state: &mut State) -> Outcome {
    let todos = args.get("todos").cloned().unwrap_or_else(|| json!([]));
    let count = |s: &str| {
        todos
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t.get("status").and_then(Value::as_str) == Some(s))
            .count()
    };
    let text = format!(
        "Updated todo list: {} pending, {} in progress, {} completed.",
        count("pending"),
        count("in_progress"),
        count("completed")
    );
    let todos: Vec<Value> = todos
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| json!({"content": t["content"],"status": t["status"]}))
        .collect();
    state.todos = Value::Array(todos.clone());
    Outcome {
        events: vec![("todo/write", json!({"todos": todos}))],
        ..Outcome::ok(text, None)
    }
}
