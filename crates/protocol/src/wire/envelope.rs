//! A line the runtime reads, classified on a reused [`Tape`]: what [`classify`](super::classify)
//! says of it, without building its params or any `Value` (issue 13 item 3, issue 20).
//!
//! The reference runtime's fast path reads requests through it, and the rule checker records
//! what the runtime read through it (its copy compiled into the checker's crate: see the wire
//! layer's note on `#[inline]`). It is `classify`, rule for rule: the tape has `JSON.parse`'s
//! grammar and errors and keeps the last value of a duplicated key; an id is a string or a
//! number literal, `1e400` included (the tape reads an overflowing literal as null, so the
//! literal is read again), and `-0` stays `-0`. The `classify_line` fuzz target compares the two
//! on every line it runs (and so does its corpus under `cargo test`).

use super::frame::{Id, Ignored, Kind};
use super::json::{JsonKind, JsonView, Tape, TapeRef};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Lines parsed by [`envelope`] in this process (see [`envelopes_parsed`]).
static PARSED: AtomicUsize = AtomicUsize::new(0);

/// How many lines (the runtime's input) this process has parsed into a tape through [`envelope`]:
/// with [`json::tape_parses`](super::json::tape_parses) and
/// [`output::lines_parsed`](super::output::lines_parsed), the proof that nothing parses a line
/// twice.
pub fn envelopes_parsed() -> usize {
    PARSED.load(Ordering::Relaxed)
}

/// The class of one line, as [`classify`](super::classify) gives it.
#[derive(Debug)]
pub enum Envelope<'a> {
    /// An id and a string method.
    Request {
        /// The id.
        id: Id,
        /// The method.
        method: &'a str,
        /// The `params` member as it is (`classify` keeps an object, and of any other shape
        /// only its kind).
        params: Option<TapeRef<'a>>,
    },
    /// An id and no string method.
    Response {
        /// What the `method` member was.
        method_kind: Kind,
    },
    /// A string method and no usable id.
    Notification {
        /// What the `id` member was, as [`Notification::id_kind`](super::Notification) says.
        id_kind: Kind,
    },
    /// Dropped: no output is due.
    Ignored(Ignored),
}

/// Classifies one trimmed line on `tape` (its buffers reused from the last line).
#[inline]
pub fn envelope<'a>(tape: &'a mut Tape, line: &'a str) -> Envelope<'a> {
    if line.is_empty() {
        return Envelope::Ignored(Ignored::Blank);
    }
    PARSED.fetch_add(1, Ordering::Relaxed);
    if let Err(e) = tape.parse(line) {
        return Envelope::Ignored(Ignored::Malformed(e));
    }
    let root = tape.root(line);
    match root.kind() {
        JsonKind::Object => {}
        JsonKind::Array => return Envelope::Ignored(Ignored::Batch { len: root.len() }),
        k => return Envelope::Ignored(Ignored::NotAnObject(kind(Some(k)))),
    }
    let (id, method) = (root.get("id"), root.get("method"));
    let id_kind = kind(id.map(TapeRef::kind));
    let method_kind = kind(method.map(TapeRef::kind));
    match (id.and_then(id_of), method.and_then(TapeRef::as_str)) {
        (Some(id), Some(method)) => Envelope::Request {
            id,
            method,
            params: root.get("params"),
        },
        (Some(_), None) => Envelope::Response { method_kind },
        // A number id is always usable; `classify` says null for one that is not.
        (None, Some(_)) => Envelope::Notification {
            id_kind: if id_kind == Kind::Number {
                Kind::Null
            } else {
                id_kind
            },
        },
        (None, None) => Envelope::Ignored(Ignored::NoIdNoMethod {
            id: id_kind,
            method: method_kind,
        }),
    }
}

/// A member's kind as [`Kind::of`] gives it (`Absent` when there is none).
#[inline]
fn kind(k: Option<JsonKind>) -> Kind {
    match k {
        None => Kind::Absent,
        Some(JsonKind::Null) => Kind::Null,
        Some(JsonKind::Bool) => Kind::Bool,
        Some(JsonKind::Number) => Kind::Number,
        Some(JsonKind::String) => Kind::String,
        Some(JsonKind::Array) => Kind::Array,
        Some(JsonKind::Object) => Kind::Object,
    }
}

/// An id as `classify` reads it: a string, or the double of a number literal.
#[inline]
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
