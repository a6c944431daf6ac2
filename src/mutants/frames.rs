//! What the rewriters ask of a frame: which kind it is, whom it is about, and how to write it.

use crate::wire::json;
use serde_json::{json, Value};

/// A `session.event` notification's session id, event type and event.
pub(super) fn session_event(v: &Value) -> Option<(&str, &str, &Value)> {
    if v.get("method")?.as_str()? != "session.event" {
        return None;
    }
    let p = v.get("params")?;
    let ev = p.get("event")?;
    Some((p.get("sessionId")?.as_str()?, ev.get("type")?.as_str()?, ev))
}

/// Whether `v` is the `agent/inbox/spliced` receipt of a user prompt.
pub(super) fn is_prompt_receipt(v: &Value) -> bool {
    matches!(session_event(v), Some((_, "agent/inbox/spliced", ev))
        if ev.pointer("/data/inserted").and_then(Value::as_array).is_some_and(|a| !a.is_empty()
            && a.iter().any(|m| m.pointer("/source/kind") == Some(&json!("user")))))
}

/// The session a `session.status` idle notification is about.
pub(super) fn status_idle_session(v: &Value) -> Option<&str> {
    if v.get("method")?.as_str()? == "session.status"
        && v.pointer("/params/status")?.as_str()? == "idle"
    {
        return v.pointer("/params/sessionId")?.as_str();
    }
    None
}

/// Whether `v` is a response (an id and no method).
pub(super) fn is_response(v: &Value) -> bool {
    v.get("id").is_some() && v.get("method").is_none()
}

/// `v` written compactly, as the runtime writes frames.
pub(super) fn s(v: &Value) -> String {
    json::to_string(v)
}

/// Reverses the member order of every object in `v`, at every depth.
pub(super) fn reverse_members(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let members: Vec<(String, Value)> = std::mem::take(m).into_iter().rev().collect();
            for (k, mut x) in members {
                reverse_members(&mut x);
                m.insert(k, x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(reverse_members),
        _ => {}
    }
}
