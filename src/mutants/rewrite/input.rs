//! The mutants of client lines: how a line is framed and read ([`framing`]), and how the
//! methods it calls are served ([`methods`]). Each returns the line's [`InputAction`] when its
//! mutant changes it, `None` when the line goes to the runtime as it came.

use super::super::frames::{
    has_lone_surrogate, literals_as_null, replace_lone_surrogates, s, LENIENT_LITERALS, LITERAL_ID,
    PYTHON_LITERALS,
};
use super::{error_line, InputAction};
use crate::mutants::MutantKind::{self, self as M};
use crate::wire::{json, trim_js, Classified, Id, Ignored, Kind, Request};
use serde_json::{json, Value};

/// A line forwarded as it is, with these answers written to the client.
fn answered_and_forwarded(raw: &[u8], answer: &str) -> InputAction {
    InputAction {
        forward: vec![raw.to_vec()],
        answer: vec![answer.to_owned()],
        crash: None,
    }
}

/// Only these answers, nothing forwarded.
fn answered(answer: String) -> InputAction {
    InputAction {
        answer: vec![answer],
        ..InputAction::default()
    }
}

/// Only these lines forwarded.
fn forwarded(lines: Vec<Vec<u8>>) -> InputAction {
    InputAction {
        forward: lines,
        ..InputAction::default()
    }
}

/// A line whose `"id"` member is one of the literals NaN, Infinity, -Infinity, with that id
/// written as the string [`LITERAL_ID`] + the literal; `None` when it has no such id or is still
/// no JSON (`literal-ids-served` answers it with id null, as `JSON.stringify` writes them).
fn literal_id_as_string(text: &str) -> Option<String> {
    let lit = PYTHON_LITERALS
        .iter()
        .find(|l| text.contains(&format!("\"id\":{l}")))?;
    let line = text.replacen(
        &format!("\"id\":{lit}"),
        &format!("\"id\":\"{LITERAL_ID}{lit}\""),
        1,
    );
    json::parse(&line).is_ok().then_some(line)
}

/// The mutants of how a line is split, decoded and classified (`raw`, `text` its lossy text).
pub(super) fn framing(
    kind: MutantKind,
    class: &Classified,
    raw: &[u8],
    text: &str,
) -> Option<InputAction> {
    match (kind, class) {
        (M::AnswersNotifications, Classified::Notification(n)) if n.id_kind == Kind::Absent => {
            Some(answered_and_forwarded(
                raw,
                r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            ))
        }
        (M::RepliesToMalformed, Classified::Ignored(Ignored::Malformed(_))) => {
            Some(answered_and_forwarded(
                raw,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            ))
        }
        (M::NullIdAnswered, Classified::Notification(n)) if n.id_kind == Kind::Null => {
            let m = format!("unknown DeepSeek Harness SDK runtime method: {}", n.method);
            Some(answered(error_line(&Id::Num(f64::INFINITY), &m)))
        }
        (M::BatchSupported, Classified::Ignored(Ignored::Batch { .. })) => {
            match json::parse(trim_js(text)).ok()?.value {
                Value::Array(items) => {
                    Some(forwarded(items.iter().map(|i| s(i).into_bytes()).collect()))
                }
                _ => None,
            }
        }
        (M::CrAsSeparator, _) if raw.contains(&b'\r') => Some(forwarded(
            raw.split(|b| *b == b'\r')
                .filter(|p| !p.is_empty())
                .map(<[u8]>::to_vec)
                .collect(),
        )),
        (M::BomRejected, _) if raw.starts_with("\u{feff}".as_bytes()) => {
            Some(InputAction::default())
        }
        (
            M::NonJsonLiteralsServed | M::LenientLiteralsServed,
            Classified::Ignored(Ignored::Malformed(_)),
        ) => {
            let literals: &[&str] = if kind == M::NonJsonLiteralsServed {
                &PYTHON_LITERALS
            } else {
                &LENIENT_LITERALS
            };
            let served =
                literals_as_null(trim_js(text), literals).filter(|l| json::parse(l).is_ok());
            served.map(|line| forwarded(vec![line.into_bytes()]))
        }
        (M::LiteralIdsServed, Classified::Ignored(Ignored::Malformed(_))) => {
            literal_id_as_string(trim_js(text)).map(|line| forwarded(vec![line.into_bytes()]))
        }
        (M::AnswersIdlessObjects, Classified::Ignored(Ignored::NoIdNoMethod { .. })) => {
            Some(answered(
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#
                    .to_owned(),
            ))
        }
        (M::SurrogatesReplaced, _) => {
            let parsed = json::parse(trim_js(text)).ok();
            let v = parsed.map(|p| p.value).filter(has_lone_surrogate)?;
            Some(forwarded(
                vec![s(&replace_lone_surrogates(&v)).into_bytes()],
            ))
        }
        (M::RejectsNoJsonrpc, Classified::Request(r)) => {
            let jsonrpc = json::parse(trim_js(text))
                .ok()
                .and_then(|p| p.value.get("jsonrpc").cloned());
            (jsonrpc != Some(json!("2.0"))).then(|| {
                answered(error_line(
                    &r.id,
                    "invalid request: jsonrpc must be \"2.0\"",
                ))
            })
        }
        (M::CrashOnArrayParams, Classified::Request(r)) if r.method == "initialize" => {
            let params = json::parse(trim_js(text))
                .ok()
                .and_then(|p| p.value.get("params").cloned());
            // As `const { cwd } = params` on an array would not, but `params.cwd.trim()` does.
            matches!(params, Some(Value::Array(_))).then(|| InputAction {
                crash: Some(
                    "TypeError: Cannot read properties of undefined (reading 'trim')\n    at initialize (runtime.js:1:1)".to_owned(),
                ),
                ..InputAction::default()
            })
        }
        _ => None,
    }
}

/// The mutants of how a request's method is served (`initialized`: an `initialize` has been
/// answered with a result).
pub(super) fn methods(
    kind: MutantKind,
    class: &Classified,
    text: &str,
    initialized: bool,
) -> Option<InputAction> {
    let Classified::Request(r) = class else {
        return None;
    };
    match kind {
        M::WdRelativeToProcess if r.method == "session/working-directory/set" => {
            wd_relative_to_process(text)
        }
        M::PrototypeMethods => prototype_method(r),
        M::RefusesReinitialize if r.method == "initialize" && initialized => {
            Some(answered(error_line(&r.id, "already initialized")))
        }
        M::NoWorkingDirectory | M::NoSessionWait | M::NoResume if lacks(kind, &r.method) => {
            let m = format!("{}{}", crate::rules::UNKNOWN_METHOD, r.method);
            Some(answered(error_line(&r.id, &m)))
        }
        M::DefaultsInitialize if r.method == "initialize" => defaults_initialize(text),
        _ => None,
    }
}

/// Whether the runtime `kind` stands for has no `method` (it answers it as unknown).
fn lacks(kind: MutantKind, method: &str) -> bool {
    match kind {
        M::NoWorkingDirectory => {
            method == "session/working-directory/get" || method == "session/working-directory/set"
        }
        M::NoSessionWait => method == "session/wait",
        M::NoResume => method == "session/resume",
        _ => false,
    }
}

/// A relative working-directory path resolved as `path.resolve(p.path)` does: against the
/// process's directory, which the runtime behind the proxy shares.
fn wd_relative_to_process(text: &str) -> Option<InputAction> {
    let mut v = json::parse(trim_js(text)).ok()?.value;
    let cwd = std::env::current_dir().ok()?;
    let rel = v.pointer("/params/path").and_then(Value::as_str);
    let rel = rel.filter(|p| !p.is_empty() && !p.starts_with('/'))?;
    let abs = cwd.join(rel).to_string_lossy().into_owned();
    v["params"]["path"] = json!(abs);
    Some(forwarded(vec![s(&v).into_bytes()]))
}

/// What `handlers[method](params)` answers in JavaScript for the names an object inherits.
fn prototype_method(r: &Request) -> Option<InputAction> {
    let answer = match r.method.as_str() {
        "constructor" => Ok(json!({})),
        "toString" => Ok(json!("[object Undefined]")),
        "__proto__" => Err("handler is not a function"),
        "hasOwnProperty" => Err("Cannot convert undefined or null to object"),
        _ => return None,
    };
    Some(answered(match answer {
        Ok(v) => {
            let id = json::to_string(&r.id.to_value());
            let result = json::to_string(&v);
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
        }
        Err(m) => error_line(&r.id, m),
    }))
}

/// An initialize with what it leaves out defaulted: params that are not an object are {}
/// (§2.2); cwd (the process's directory), provider and model are filled in.
fn defaults_initialize(text: &str) -> Option<InputAction> {
    let mut v = json::parse(trim_js(text)).ok()?.value;
    if !v.get("params").is_some_and(Value::is_object) {
        v["params"] = json!({});
    }
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".to_owned());
    for (k, d) in [
        ("cwd", cwd.as_str()),
        ("provider", "deepseek-official"),
        ("model", "deepseek-v4-flash"),
    ] {
        if v["params"].get(k).is_none() {
            v["params"][k] = json!(d);
        }
    }
    Some(forwarded(vec![s(&v).into_bytes()]))
}
