//! What the rewriters ask of a frame: which kind it is, whom it is about, and how to write it.

use crate::wire::json::{self, held};
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

/// Whether a string of `v`, a member name included, holds a lone surrogate.
pub(super) fn has_lone_surrogate(v: &Value) -> bool {
    match v {
        Value::String(t) => held::has_lone(t),
        Value::Array(a) => a.iter().any(has_lone_surrogate),
        Value::Object(m) => m
            .iter()
            .any(|(k, x)| held::has_lone(k) || has_lone_surrogate(x)),
        _ => false,
    }
}

/// `v` with every lone surrogate, in member names too, turned into U+FFFD, as Go's
/// `encoding/json` decodes one.
pub(super) fn replace_lone_surrogates(v: &Value) -> Value {
    let text = |t: &str| held::to_utf8_lossy(t).into_owned();
    match v {
        Value::String(t) => Value::String(text(t)),
        Value::Array(a) => Value::Array(a.iter().map(replace_lone_surrogates).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (text(k), replace_lone_surrogates(x)))
                .collect(),
        ),
        x => x.clone(),
    }
}

/// The literals Python's `json.loads` takes.
pub(super) const PYTHON_LITERALS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
/// The string a literal id is forwarded as (`literal-ids-served`), the literal after it; the
/// answer's id is written null.
pub(super) const LITERAL_ID: &str = "kit-literal-id:";
/// The other spellings a lenient (JSON5-like) reader takes, which `json.loads` refuses.
pub(super) const LENIENT_LITERALS: [&str; 4] = ["-NaN", "+Infinity", "nan", "infinity"];

/// `text` with `literals` outside strings read as `null`, as a decoder that takes them serves
/// such a line; `None` when it has none.
pub(super) fn literals_as_null(text: &str, literals: &[&str]) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped, mut changed) = (false, false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(lit) = literals.iter().find(|l| rest.starts_with(**l)) {
            out.push_str("null");
            rest = &rest[lit.len()..];
            changed = true;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    changed.then_some(out)
}
