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
//! Same meaning as [`wire::classify`], rule for rule: the line is classified by
//! [`wire::envelope`], which the rule checker uses too. [`Runtime::handle_line_full`] is the
//! classifying path, kept for the differential tests and the benchmarks.

use super::Runtime;
use crate::wire::json::{JsonKind, JsonView, Tape};
use crate::wire::{self, Classified, Envelope, Params, Request};
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
    let Envelope::Request { id, method, params } = wire::envelope(tape, line) else {
        return None;
    };
    let params = match params {
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
