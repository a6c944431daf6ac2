//! Reading a [`Tape`]: [`TapeRef`], a node, answers as [`JsonView`] what the `Value` that
//! [`parse`](crate::wire::json::parse) builds for its text would.

use super::{resolve, str_len, Kind, Str, Tape, NONE};
use crate::wire::json::{JsonKind, JsonView};
use serde_json::Value;

/// A value on a [`Tape`].
#[derive(Debug, Clone, Copy)]
pub struct TapeRef<'a> {
    tape: &'a Tape,
    text: &'a str,
    i: usize,
}

impl<'a> TapeRef<'a> {
    pub(super) fn new(tape: &'a Tape, text: &'a str, i: usize) -> Self {
        TapeRef { tape, text, i }
    }

    fn at(self, i: usize) -> Self {
        TapeRef { i, ..self }
    }

    fn str_of(self, s: Str) -> &'a str {
        resolve(self.text, &self.tape.decoded, s)
    }

    /// The value's source text.
    pub fn text(self) -> &'a str {
        let n = &self.tape.nodes[self.i];
        &self.text[n.start..n.end]
    }
}

impl<'a> JsonView<'a> for TapeRef<'a> {
    fn kind(self) -> JsonKind {
        match self.tape.nodes[self.i].kind {
            Kind::Null => JsonKind::Null,
            Kind::Bool(_) => JsonKind::Bool,
            Kind::Num(_) => JsonKind::Number,
            Kind::Str(_) => JsonKind::String,
            Kind::Arr { .. } => JsonKind::Array,
            Kind::Obj { .. } | Kind::Member { .. } => JsonKind::Object,
        }
    }

    fn as_str(self) -> Option<&'a str> {
        match self.tape.nodes[self.i].kind {
            Kind::Str(s) => Some(self.str_of(s)),
            _ => None,
        }
    }

    fn as_f64(self) -> Option<f64> {
        match self.tape.nodes[self.i].kind {
            Kind::Num(f) => Some(f),
            _ => None,
        }
    }

    fn as_bool(self) -> Option<bool> {
        match self.tape.nodes[self.i].kind {
            Kind::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn get(self, key: &str) -> Option<Self> {
        let Kind::Obj { first, index, .. } = self.tape.nodes[self.i].kind else {
            return None;
        };
        let member = if index != NONE {
            *self.tape.indexes[index].get(key)?
        } else {
            let mut m = first;
            loop {
                if m == NONE {
                    return None;
                }
                if let Kind::Member { key: k, .. } = self.tape.nodes[m].kind {
                    if str_len(k) == key.len() && self.str_of(k) == key {
                        break m;
                    }
                }
                m = self.tape.nodes[m].next;
            }
        };
        match self.tape.nodes[member].kind {
            Kind::Member { value, .. } => Some(self.at(value)),
            _ => None,
        }
    }

    fn len(self) -> usize {
        match self.tape.nodes[self.i].kind {
            Kind::Arr { len, .. } | Kind::Obj { len, .. } => len,
            _ => 0,
        }
    }

    fn elements(self) -> impl Iterator<Item = Self> {
        let mut i = match self.tape.nodes[self.i].kind {
            Kind::Arr { first, .. } => first,
            _ => NONE,
        };
        std::iter::from_fn(move || {
            if i == NONE {
                return None;
            }
            let r = self.at(i);
            i = self.tape.nodes[i].next;
            Some(r)
        })
    }

    fn to_value(self) -> Value {
        match self.tape.nodes[self.i].kind {
            Kind::Null => Value::Null,
            Kind::Bool(b) => Value::Bool(b),
            Kind::Num(f) => crate::wire::json::number_value(f),
            Kind::Str(s) => Value::String(self.str_of(s).to_owned()),
            // Containers: `parse` of their own text (iterative, and exactly its `Value`).
            _ => crate::wire::json::parse(self.text())
                .map(|p| p.value)
                .unwrap_or(Value::Null),
        }
    }
}
