//! Reading a [`Tape`]: [`TapeRef`], a node, answers as [`JsonView`] what the `Value` that
//! [`parse`](crate::wire::json::parse) builds for its text would.

use super::{resolve, str_len, Kind, Str, Tape, NONE};
#[cfg(doc)]
use crate::wire::json::write_value;
use crate::wire::json::{number_value, write_number, write_str, JsonKind, JsonView};
use serde_json::Value;

/// A value on a [`Tape`].
#[derive(Debug, Clone, Copy)]
pub struct TapeRef<'a> {
    tape: &'a Tape,
    text: &'a str,
    i: usize,
}

impl<'a> TapeRef<'a> {
    #[inline]
    pub(super) fn new(tape: &'a Tape, text: &'a str, i: usize) -> Self {
        TapeRef { tape, text, i }
    }

    #[inline]
    fn at(self, i: usize) -> Self {
        TapeRef { i, ..self }
    }

    #[inline]
    fn str_of(self, s: Str) -> &'a str {
        resolve(self.text, &self.tape.decoded, s)
    }

    /// The value's source text.
    #[inline]
    pub fn text(self) -> &'a str {
        let n = &self.tape.nodes[self.i];
        &self.text[n.start..n.end]
    }

    /// Appends `JSON.stringify` of the value: exactly what [`write_value`] writes for
    /// [`JsonView::to_value`], without building it. Iterative: depth is bounded only by memory.
    #[inline]
    pub fn write(self, out: &mut Vec<u8>) {
        let nodes = &self.tape.nodes;
        // Per open container: whether it is an object, its next child (element or member) to
        // write, and whether none was written yet.
        let mut stack: Vec<(bool, usize, bool)> = Vec::new();
        let mut next = Some(self.i);
        loop {
            if let Some(i) = next.take() {
                match nodes[i].kind {
                    Kind::Null => out.extend_from_slice(b"null"),
                    Kind::Bool(true) => out.extend_from_slice(b"true"),
                    Kind::Bool(false) => out.extend_from_slice(b"false"),
                    Kind::Num(f) => match number_value(f) {
                        Value::Number(n) => write_number(&n, out),
                        _ => out.extend_from_slice(b"null"),
                    },
                    Kind::Str(s) => self.write_string(s, out),
                    Kind::Arr { first, .. } => {
                        out.push(b'[');
                        stack.push((false, first, true));
                    }
                    Kind::Obj { first, .. } => {
                        out.push(b'{');
                        stack.push((true, first, true));
                    }
                    Kind::Member { .. } => unreachable!("a member is written by its object"),
                }
            }
            let Some((object, child, first)) = stack.last_mut() else {
                return;
            };
            if *child == NONE {
                out.push(if *object { b'}' } else { b']' });
                stack.pop();
                continue;
            }
            if !std::mem::take(first) {
                out.push(b',');
            }
            let c = std::mem::replace(child, nodes[*child].next);
            match nodes[c].kind {
                Kind::Member { key, value } if *object => {
                    self.write_string(key, out);
                    out.push(b':');
                    next = Some(value);
                }
                _ => next = Some(c),
            }
        }
    }

    /// Appends a string as `JSON.stringify` writes it.
    #[inline]
    fn write_string(self, s: Str, out: &mut Vec<u8>) {
        match s {
            // A string borrowed from the text has no escape, no control character and no
            // character of held text's reserved block (else the scanner decoded it): the writer
            // would copy it unchanged.
            Str::Src(a, b) => {
                out.push(b'"');
                out.extend_from_slice(&self.text.as_bytes()[a..b]);
                out.push(b'"');
            }
            Str::Dec(..) => write_str(self.str_of(s), out),
        }
    }
}

impl<'a> JsonView<'a> for TapeRef<'a> {
    #[inline]
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

    #[inline]
    fn as_str(self) -> Option<&'a str> {
        match self.tape.nodes[self.i].kind {
            Kind::Str(s) => Some(self.str_of(s)),
            _ => None,
        }
    }

    #[inline]
    fn as_f64(self) -> Option<f64> {
        match self.tape.nodes[self.i].kind {
            Kind::Num(f) => Some(f),
            _ => None,
        }
    }

    #[inline]
    fn as_bool(self) -> Option<bool> {
        match self.tape.nodes[self.i].kind {
            Kind::Bool(b) => Some(b),
            _ => None,
        }
    }

    #[inline]
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

    #[inline]
    fn len(self) -> usize {
        match self.tape.nodes[self.i].kind {
            Kind::Arr { len, .. } | Kind::Obj { len, .. } => len,
            _ => 0,
        }
    }

    #[inline]
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

    #[inline]
    fn members(self) -> impl Iterator<Item = (&'a str, Self)> {
        let mut m = match self.tape.nodes[self.i].kind {
            Kind::Obj { first, .. } => first,
            _ => NONE,
        };
        std::iter::from_fn(move || loop {
            if m == NONE {
                return None;
            }
            let node = self.tape.nodes[m];
            m = node.next;
            if let Kind::Member { key, value } = node.kind {
                return Some((self.str_of(key), self.at(value)));
            }
        })
    }

    #[inline]
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
