//! Read access to a parsed JSON value, whatever holds it: a `serde_json::Value` or a node of a
//! [`Tape`](super::Tape). Code that only reads (the trace patterns) is written once against
//! [`JsonView`] and answers the same for both.

use serde_json::Value;

/// The six kinds of JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonKind {
    /// `null` (also a number literal that overflows a double, as in [`parse`](super::parse)).
    Null,
    /// `true` or `false`.
    Bool,
    /// A finite double.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// Reads a JSON value. `'a` is how long what it returns (strings, members) lives.
pub trait JsonView<'a>: Copy {
    /// The kind of value.
    fn kind(self) -> JsonKind;
    /// The string, if it is one.
    fn as_str(self) -> Option<&'a str>;
    /// The number as a double, if it is one.
    fn as_f64(self) -> Option<f64>;
    /// The boolean, if it is one.
    fn as_bool(self) -> Option<bool>;
    /// An object's member (the last value of a duplicated key); `None` when absent or not an object.
    fn get(self, key: &str) -> Option<Self>;
    /// Members of an object (distinct keys) or elements of an array; 0 otherwise.
    fn len(self) -> usize;
    /// Whether [`JsonView::len`] is 0.
    fn is_empty(self) -> bool {
        self.len() == 0
    }
    /// An array's elements in order (nothing when not an array).
    fn elements(self) -> impl Iterator<Item = Self>;
    /// An object's members in order, as `(key, value)` (nothing when not an object): each key
    /// once, at its first position, with its last value.
    fn members(self) -> impl Iterator<Item = (&'a str, Self)>;
    /// The number as an `i64`, if it is one that [`parse`](super::parse)'s `Value` holds as an
    /// integer in `i64` range (`Value::as_i64`).
    fn as_i64(self) -> Option<i64> {
        self.as_f64().and_then(|f| super::number_value(f).as_i64())
    }
    /// The number as a `u64`, likewise (`Value::as_u64`).
    fn as_u64(self) -> Option<u64> {
        self.as_f64().and_then(|f| super::number_value(f).as_u64())
    }
    /// The value as a `serde_json::Value` (what [`parse`](super::parse) gives for its text).
    fn to_value(self) -> Value;
}

impl<'a> JsonView<'a> for &'a Value {
    fn kind(self) -> JsonKind {
        match self {
            Value::Null => JsonKind::Null,
            Value::Bool(_) => JsonKind::Bool,
            Value::Number(_) => JsonKind::Number,
            Value::String(_) => JsonKind::String,
            Value::Array(_) => JsonKind::Array,
            Value::Object(_) => JsonKind::Object,
        }
    }

    fn as_str(self) -> Option<&'a str> {
        Value::as_str(self)
    }

    fn as_f64(self) -> Option<f64> {
        Value::as_f64(self)
    }

    fn as_bool(self) -> Option<bool> {
        Value::as_bool(self)
    }

    fn get(self, key: &str) -> Option<Self> {
        self.as_object()?.get(key)
    }

    fn len(self) -> usize {
        match self {
            Value::Array(a) => a.len(),
            Value::Object(m) => m.len(),
            _ => 0,
        }
    }

    fn elements(self) -> impl Iterator<Item = Self> {
        self.as_array().into_iter().flatten()
    }

    fn members(self) -> impl Iterator<Item = (&'a str, Self)> {
        self.as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
    }

    fn as_i64(self) -> Option<i64> {
        Value::as_i64(self)
    }

    fn as_u64(self) -> Option<u64> {
        Value::as_u64(self)
    }

    fn to_value(self) -> Value {
        self.clone()
    }
}
