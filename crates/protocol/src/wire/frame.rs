//! Classifying one decoded line into a frame exactly as upstream `handleLine` does
//! (docs/CONTRACT.md#s2.2).

use super::codes::ErrorCode;
use super::json::{self, Deep, JsonError};
use serde_json::{Map, Value};
use std::fmt;
use std::hash::{Hash, Hasher};

/// A request id: a string or a number (a JavaScript double). Nothing else is an id.
#[derive(Debug, Clone)]
pub enum Id {
    /// A string id (`""` is valid).
    Str(String),
    /// A numeric id as the double JavaScript holds (may be infinite: `1e400`).
    Num(f64),
}

impl Id {
    /// The id as JSON text, as `JSON.stringify` echoes it (`1e3` → `1000`, `1e400` → `null`).
    pub fn to_json(&self) -> String {
        self.to_json_inline()
    }

    /// [`Id::to_json`], compiled into the crate that calls it (see the wire layer's note on
    /// `#[inline]`): for the rule checker.
    #[doc(hidden)]
    #[inline]
    pub fn to_json_inline(&self) -> String {
        let mut out = Vec::new();
        self.write_json_inline(&mut out);
        String::from_utf8(out).expect("utf-8")
    }

    /// Appends the id as `JSON.stringify` echoes it.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        self.write_json_inline(out);
    }

    /// [`Id::write_json`], compiled into the crate that calls it (as [`Id::to_json_inline`]).
    #[doc(hidden)]
    #[inline]
    pub fn write_json_inline(&self, out: &mut Vec<u8>) {
        match self {
            Id::Str(s) => json::write_str(s, out),
            Id::Num(f) => json::write_js_number(*f, out),
        }
    }

    /// The id as a JSON value (what a peer sees after parsing the echo).
    pub fn to_value(&self) -> Value {
        match self {
            Id::Str(s) => Value::String(s.clone()),
            Id::Num(f) => json::number_value(*f),
        }
    }
}

/// `92` and `"92"` are different ids, and print differently.
impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// SameValueZero, as a JavaScript `Map` compares keys: `"1" != 1`, `-0 == 0`.
impl PartialEq for Id {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Id::Str(a), Id::Str(b)) => a == b,
            (Id::Num(a), Id::Num(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => false,
        }
    }
}
impl Eq for Id {}

impl Hash for Id {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            Id::Str(s) => {
                0u8.hash(h);
                s.hash(h)
            }
            Id::Num(f) => {
                1u8.hash(h);
                let f = if *f == 0.0 { 0.0 } else { *f };
                f.to_bits().hash(h)
            }
        }
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::Str(s.to_owned())
    }
}
impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::Str(s)
    }
}
impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Num(n as f64)
    }
}

/// The JSON type of a value, for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The member is not there at all.
    Absent,
    /// `null`.
    Null,
    /// `true`/`false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl Kind {
    /// The kind of an optional value.
    #[inline]
    pub fn of(v: Option<&Value>) -> Kind {
        match v {
            None => Kind::Absent,
            Some(Value::Null) => Kind::Null,
            Some(Value::Bool(_)) => Kind::Bool,
            Some(Value::Number(_)) => Kind::Number,
            Some(Value::String(_)) => Kind::String,
            Some(Value::Array(_)) => Kind::Array,
            Some(Value::Object(_)) => Kind::Object,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Absent => "absent",
            Kind::Null => "null",
            Kind::Bool => "boolean",
            Kind::Number => "number",
            Kind::String => "string",
            Kind::Array => "array",
            Kind::Object => "object",
        })
    }
}

/// Request/notification params after `objectParams`: a non-array object is kept, anything else
/// becomes `{}`. What was actually sent (absent, `null`, an array…) is kept distinct in `shape`.
/// The object may be arbitrarily deep: it is held as a [`Deep`].
#[derive(Debug)]
pub struct Params {
    /// What the `params` member was on the wire.
    pub shape: Kind,
    object: Deep<Map<String, Value>>,
}

impl Params {
    /// Params normalised from the `params` member (`None` when absent), as [`classify`] does.
    pub fn from_value(v: Option<Value>) -> Self {
        Self::from_member(v)
    }

    #[inline]
    fn from_member(v: Option<Value>) -> Self {
        let shape = Kind::of(v.as_ref());
        let object = v.map(Deep::new).and_then(Deep::into_object);
        Params {
            shape,
            object: object.unwrap_or_default(),
        }
    }

    /// Empty params, as if the member were absent.
    pub fn empty() -> Self {
        Params {
            shape: Kind::Absent,
            object: Deep::default(),
        }
    }

    /// The normalised params object.
    pub fn object(&self) -> &Map<String, Value> {
        &self.object
    }

    /// One member of the normalised params.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.object.get(key)
    }

    /// Takes the normalised params object out (still dropped without recursion).
    pub fn take_object(&mut self) -> Deep<Map<String, Value>> {
        std::mem::take(&mut self.object)
    }
}

/// A request: a string or number `id` and a string `method`.
#[derive(Debug)]
pub struct Request {
    /// The id to echo.
    pub id: Id,
    /// The method name, verbatim (may be `""`).
    pub method: String,
    /// Normalised params.
    pub params: Params,
}

/// A notification: a string `method` and no usable id.
#[derive(Debug)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// Normalised params.
    pub params: Params,
    /// What the `id` member was (absent, or a kind that is not an id such as `null`).
    pub id_kind: Kind,
}

/// An error member that rejects a pending request: any non-null object, arrays included (TS rule).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorObject {
    /// `code` when it is a number.
    pub code: Option<f64>,
    /// `message` when it is a string, else `JSON-RPC error`.
    pub message: String,
    /// `data`, verbatim, when present (it may be arbitrarily deep: held as a [`Deep`]).
    pub data: Option<Deep>,
}

impl ErrorObject {
    /// The code as an integer error code, when it is one.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.code
            .filter(|c| c.fract() == 0.0 && c.abs() < 9.007e15)
            .map(|c| ErrorCode(c as i64))
    }
}

/// How a response settles its pending request.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Resolves with `result` (`None` when the member is absent: JavaScript `undefined`); it may
    /// be arbitrarily deep: held as a [`Deep`].
    Result(Option<Deep>),
    /// Rejects.
    Error(ErrorObject),
}

/// A response: a string or number `id` and no string `method`.
#[derive(Debug)]
pub struct Response {
    /// The id it answers.
    pub id: Id,
    /// Result or error.
    pub outcome: Outcome,
    /// A `method` member that was present but not a string (such a frame is a response upstream).
    pub method_kind: Kind,
}

/// Why a line produced no frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Ignored {
    /// Empty after trimming.
    Blank,
    /// `JSON.parse` would throw.
    Malformed(JsonError),
    /// Valid JSON but a scalar (`42`, `"s"`, `null`, `true`).
    NotAnObject(Kind),
    /// A JSON array: batches are not supported, they are dropped whole.
    Batch {
        /// Number of elements.
        len: usize,
    },
    /// An object with neither a string/number `id` nor a string `method`.
    NoIdNoMethod {
        /// What `id` was.
        id: Kind,
        /// What `method` was.
        method: Kind,
    },
    /// Longer than the line bound; not parsed.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ignored::Blank => f.write_str("blank line"),
            Ignored::Malformed(e) => write!(f, "malformed JSON: {e}"),
            Ignored::NotAnObject(k) => write!(f, "JSON {k}, not an object"),
            Ignored::Batch { len } => write!(f, "JSON array of {len} (batches are not supported)"),
            Ignored::NoIdNoMethod { id, method } => {
                write!(
                    f,
                    "object with no usable id ({id}) and no string method ({method})"
                )
            }
            Ignored::TooLong { len } => write!(f, "line of {len} bytes exceeds the line bound"),
        }
    }
}

/// The classification of one line.
#[derive(Debug)]
pub enum Classified {
    /// id + string method.
    Request(Request),
    /// id, no string method.
    Response(Response),
    /// string method, no usable id.
    Notification(Notification),
    /// Dropped; no output is due.
    Ignored(Ignored),
}

impl Classified {
    /// A short name of the class, for tables and logs.
    pub fn class_name(&self) -> &'static str {
        match self {
            Classified::Request(_) => "request",
            Classified::Response(_) => "response",
            Classified::Notification(_) => "notification",
            Classified::Ignored(_) => "ignored",
        }
    }
}

/// Classifies one trimmed line (as produced by [`super::lines::LineDecoder`]).
pub fn classify(line: &str) -> Classified {
    classify_inline(line)
}

/// [`classify`], compiled into the crate that calls it (see the wire layer's note on `#[inline]`):
/// for the rule checker, whose copy fuzz builds leave uninstrumented.
#[doc(hidden)]
#[inline]
pub fn classify_inline(line: &str) -> Classified {
    if line.is_empty() {
        return Classified::Ignored(Ignored::Blank);
    }
    match json::parse_inline(line) {
        Ok(p) => classify_parsed_inline(p),
        Err(e) => Classified::Ignored(Ignored::Malformed(e)),
    }
}

/// [`classify`] on a line already parsed with [`json::parse`] (for a caller that needs the parse
/// too and should not parse the line twice): `classify(line)` is `classify_parsed(parse(line)?)`
/// for a non-empty line.
pub fn classify_parsed(parsed: json::Parsed) -> Classified {
    classify_parsed_inline(parsed)
}

/// [`classify_parsed`], compiled into the crate that calls it (as [`classify_inline`]).
#[doc(hidden)]
#[inline]
pub fn classify_parsed_inline(parsed: json::Parsed) -> Classified {
    // Whatever is left of the frame is dropped without recursion when this returns.
    let mut value = Deep::new(parsed.value);
    let map = match &mut *value {
        Value::Object(m) => m,
        Value::Array(a) => return Classified::Ignored(Ignored::Batch { len: a.len() }),
        other => return Classified::Ignored(Ignored::NotAnObject(Kind::of(Some(other)))),
    };
    let id_kind = Kind::of(map.get("id"));
    let id = match map.get_mut("id") {
        Some(Value::String(s)) => Some(Id::Str(std::mem::take(s))),
        Some(Value::Number(n)) => Some(Id::Num(
            parsed.top_id_number.or(n.as_f64()).unwrap_or(f64::NAN),
        )),
        // `1e400` is held as null but is a number (Infinity) to JavaScript.
        Some(Value::Null) => parsed.top_id_number.map(Id::Num),
        _ => None,
    };
    let method_kind = Kind::of(map.get("method"));
    let method = match map.get_mut("method") {
        Some(Value::String(s)) => Some(std::mem::take(s)),
        _ => None,
    };
    match (id, method) {
        (Some(id), Some(method)) => {
            let params = Params::from_member(map.shift_remove("params"));
            Classified::Request(Request { id, method, params })
        }
        (Some(id), None) => {
            let outcome = match map.shift_remove("error").map(Deep::new) {
                Some(e) if e.is_object() || e.is_array() => Outcome::Error(error_object(e)),
                _ => Outcome::Result(map.shift_remove("result").map(Deep::new)),
            };
            Classified::Response(Response {
                id,
                outcome,
                method_kind,
            })
        }
        (None, Some(method)) => {
            let params = Params::from_member(map.shift_remove("params"));
            let id_kind = if id_kind == Kind::Number {
                Kind::Null
            } else {
                id_kind
            };
            Classified::Notification(Notification {
                method,
                params,
                id_kind,
            })
        }
        (None, None) => Classified::Ignored(Ignored::NoIdNoMethod {
            id: id_kind,
            method: method_kind,
        }),
    }
}

#[inline]
fn error_object(mut e: Deep) -> ErrorObject {
    let (code, message, data) = match &mut *e {
        Value::Object(m) => (
            m.get("code").and_then(Value::as_f64),
            match m.get("message") {
                Some(Value::String(s)) => s.clone(),
                _ => "JSON-RPC error".to_owned(),
            },
            m.shift_remove("data").map(Deep::new),
        ),
        _ => (None, "JSON-RPC error".to_owned(), None),
    };
    ErrorObject {
        code,
        message,
        data,
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
