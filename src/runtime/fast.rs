//! The fast path of [`Runtime::handle_line`] (issue 13 item 3): a line is read through a reused
//! [`Tape`] (nodes borrowing from the line, no `Value` tree, no allocation once its buffers have
//! grown) instead of being classified into owned frames by [`wire::classify`].
//!
//! Only a request produces output or changes state (responses, notifications and ignored lines
//! are dropped: docs/CONTRACT.md#s2.2, #s2.3), so everything but a request costs one tape parse
//! and two member lookups. A request is handed to the same dispatch as before
//! ([`Runtime::request`]) with its id and method read from the tape and its params built as a
//! `Value` only when they are an object (the only shape a handler reads; any other shape is kept
//! as its [`Kind`](crate::wire::Kind) with an empty object, as [`Params`] normalises it).
//!
//! Same meaning as [`wire::classify`], rule for rule: the tape has `JSON.parse`'s grammar and
//! errors (so malformed lines are dropped alike) and keeps the last value of a duplicated key;
//! an id is a string or a number literal, `1e400` included (the tape reads an overflowing
//! literal as null, so the literal is read again), and `-0` stays `-0`. [`Runtime::handle_line_full`]
//! is the classifying path, kept for the differential tests and the benchmarks.

use super::Runtime;
use crate::wire::json::{JsonKind, JsonView, Tape, TapeRef};
use crate::wire::{self, Classified, Id, Params, Request};
use serde_json::Value;

impl Runtime {
    /// The classifying path: [`wire::classify`] into owned frames, then the same dispatch as
    /// [`Runtime::handle_line`]. Its output and effects equal `handle_line`'s for every line (the
    /// differential tests compare the two); it is slower, and kept as the reference.
    pub fn handle_line_full(&mut self, line: &str, now_ms: u64, out: &mut Vec<u8>) {
        if let Classified::Request(req) = wire::classify(line) {
            self.request(req, now_ms, out);
        }
    }

    /// [`Runtime::handle_line`]'s body: the envelope read from the tape, params built only for a
    /// request.
    pub(super) fn handle_line_fast(&mut self, line: &str, now_ms: u64, out: &mut Vec<u8>) {
        if let Some(req) = envelope(&mut self.tape, line) {
            self.request(req, now_ms, out);
        }
    }
}

/// The request on `line`, if it is one: what [`wire::classify`] gives as
/// [`Classified::Request`], and `None` for everything it classifies otherwise.
fn envelope(tape: &mut Tape, line: &str) -> Option<Request> {
    if line.is_empty() || tape.parse(line).is_err() {
        return None;
    }
    let root = tape.root(line);
    if root.kind() != JsonKind::Object {
        return None;
    }
    // A string method and a usable id make a request; without either, no output is due.
    let method = root.get("method")?.as_str()?;
    let id = id_of(root.get("id")?)?;
    let params = match root.get("params") {
        None => Params::empty(),
        Some(p) => Params::from_value(Some(match p.kind() {
            JsonKind::Object => p.to_value(),
            // The handlers never read a non-object: its kind is all that is kept.
            k => stand_in(k),
        })),
    };
    Some(Request {
        id,
        method: method.to_owned(),
        params,
    })
}

/// An id as `classify` reads it: a string, or the double of a number literal.
fn id_of(v: TapeRef<'_>) -> Option<Id> {
    match v.kind() {
        JsonKind::String => v.as_str().map(|s| Id::Str(s.to_owned())),
        JsonKind::Number => {
            let f = v.as_f64()?;
            // The tape holds `-0` as 0 (as a `Value` does); the literal's double is `-0`.
            Some(Id::Num(if f == 0.0 && v.text().starts_with('-') {
                -0.0
            } else {
                f
            }))
        }
        // A number literal that overflows a double reads as null; JavaScript holds ±Infinity.
        JsonKind::Null => {
            let t = v.text();
            if t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
                t.parse().ok().map(Id::Num)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A value of kind `k` with nothing in it: for [`Params`], which keeps only the kind of a
/// non-object.
fn stand_in(k: JsonKind) -> Value {
    match k {
        JsonKind::Null => Value::Null,
        JsonKind::Bool => Value::Bool(false),
        JsonKind::Number => Value::from(0),
        JsonKind::String => Value::String(String::new()),
        JsonKind::Array => Value::Array(Vec::new()),
        JsonKind::Object => Value::Object(Default::default()),
    }
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
