//! Reading a [`Tape`]: [`TapeRef`], a node, answers as [`JsonView`] what the `Value` that
//! [`parse`](crate::wire::json::parse) builds for its text would.

use super::{form, resolve, str_len, Kind, Str, Tape, NONE};
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
        self.emit(out);
    }

    /// Whether `expected` is exactly what [`TapeRef::write`] appends for the value: compared as it
    /// would be written, stopping at the first difference, without writing it out.
    #[inline]
    pub fn writes(self, expected: &[u8]) -> bool {
        // The whole text a plain tape was read from (the same memory) is what it writes: the
        // rule checker asks this of every frame, and frames are checked by the thousand.
        if self.tape.plain
            && self.i == self.tape.root
            && std::ptr::eq(expected, self.text.as_bytes())
        {
            return true;
        }
        let mut c = Compare {
            expected,
            at: 0,
            same: true,
            scratch: Vec::new(),
        };
        self.emit(&mut c);
        c.same && c.at == expected.len()
    }

    /// `JSON.stringify` of the value, into `out` (the walk of [`TapeRef::write`]).
    #[inline]
    fn emit<S: Sink>(self, out: &mut S) {
        let nodes = &self.tape.nodes;
        // Per open container: whether it is an object, its next child (element or member) to
        // write, and whether none was written yet.
        let mut stack: Vec<(bool, usize, bool)> = Vec::new();
        let mut next = Some(self.i);
        loop {
            if out.failed() {
                return;
            }
            if let Some(i) = next.take() {
                match nodes[i].kind {
                    Kind::Null => out.put(b"null"),
                    Kind::Bool(true) => out.put(b"true"),
                    Kind::Bool(false) => out.put(b"false"),
                    Kind::Num(f) => {
                        out.number(f, &self.text.as_bytes()[nodes[i].start..nodes[i].end])
                    }
                    Kind::Str(s) => out.string(
                        self,
                        s,
                        Some(&self.text.as_bytes()[nodes[i].start..nodes[i].end]),
                    ),
                    Kind::Arr { first, .. } => {
                        out.byte(b'[');
                        stack.push((false, first, true));
                    }
                    Kind::Obj { first, .. } => {
                        out.byte(b'{');
                        stack.push((true, first, true));
                    }
                    Kind::Member { .. } => unreachable!("a member is written by its object"),
                }
            }
            let Some((object, child, first)) = stack.last_mut() else {
                return;
            };
            if *child == NONE {
                out.byte(if *object { b'}' } else { b']' });
                stack.pop();
                continue;
            }
            if !std::mem::take(first) {
                out.byte(b',');
            }
            let c = std::mem::replace(child, nodes[*child].next);
            match nodes[c].kind {
                Kind::Member { key, value } if *object => {
                    out.string(self, key, None);
                    out.byte(b':');
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

/// Appends a number node as `JSON.stringify` writes it.
#[inline]
fn write_num(f: f64, out: &mut Vec<u8>) {
    match number_value(f) {
        Value::Number(n) => write_number(&n, out),
        _ => out.extend_from_slice(b"null"),
    }
}

/// Where [`TapeRef::emit`] puts the text it writes.
trait Sink {
    fn byte(&mut self, b: u8);
    fn put(&mut self, bytes: &[u8]);
    /// A number: its value and its literal in the text.
    fn number(&mut self, f: f64, literal: &[u8]);
    /// A string: where it is, and its literal in the text when it is a value (not a key).
    fn string(&mut self, at: TapeRef<'_>, s: Str, literal: Option<&[u8]>);
    /// Whether the rest of the walk can be skipped.
    fn failed(&self) -> bool;
}

impl Sink for Vec<u8> {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.push(b);
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline]
    fn number(&mut self, f: f64, _: &[u8]) {
        write_num(f, self);
    }

    #[inline]
    fn string(&mut self, at: TapeRef<'_>, s: Str, _: Option<&[u8]>) {
        at.write_string(s, self);
    }

    #[inline]
    fn failed(&self) -> bool {
        false
    }
}

/// A sink that compares what is written with `expected` instead of keeping it.
struct Compare<'e> {
    expected: &'e [u8],
    /// How much of `expected` was matched.
    at: usize,
    same: bool,
    /// Numbers and decoded strings are written here, then compared.
    scratch: Vec<u8>,
}

impl Compare<'_> {
    #[inline]
    fn scratch(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        write(&mut s);
        self.put(&s);
        self.scratch = s;
    }
}

impl Sink for Compare<'_> {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.same &= self.expected.get(self.at) == Some(&b);
        self.at += 1;
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        let end = self.at + bytes.len();
        self.same &= self.expected.get(self.at..end) == Some(bytes);
        self.at = end;
    }

    #[inline]
    fn number(&mut self, f: f64, literal: &[u8]) {
        // Where `expected` is the text the tape was read from and all before matched, a literal
        // in the form `JSON.stringify` writes is its own bytes: nothing to write or compare.
        let end = self.at + literal.len();
        if self.same
            && end <= self.expected.len()
            && std::ptr::eq(self.expected[self.at..].as_ptr(), literal.as_ptr())
            && form::number(literal)
        {
            self.at = end;
        } else {
            self.scratch(|s| write_num(f, s));
        }
    }

    #[inline]
    fn string(&mut self, at: TapeRef<'_>, s: Str, literal: Option<&[u8]>) {
        match s {
            // Written unchanged (see `write_string`).
            Str::Src(a, b) => {
                self.byte(b'"');
                let raw = &at.text.as_bytes()[a..b];
                // Where `expected` is the text the tape was read from and all before matched, the
                // string is its own bytes (the same memory): nothing to compare.
                let end = self.at + raw.len();
                if self.same
                    && end <= self.expected.len()
                    && std::ptr::eq(self.expected[self.at..].as_ptr(), raw.as_ptr())
                {
                    self.at = end;
                } else {
                    self.put(raw);
                }
                self.byte(b'"');
            }
            Str::Dec(..) => match literal {
                // As a number literal: its own bytes, in the form `JSON.stringify` writes.
                Some(l)
                    if self.same
                        && self.at + l.len() <= self.expected.len()
                        && std::ptr::eq(self.expected[self.at..].as_ptr(), l.as_ptr())
                        && form::string(&l[1..l.len() - 1]) =>
                {
                    self.at += l.len();
                }
                _ => self.scratch(|out| write_str(at.str_of(s), out)),
            },
        }
    }

    #[inline]
    fn failed(&self) -> bool {
        !self.same
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

    // Always inlined: at a call site with a literal key the key comparison is then of a known
    // length, which the compiler makes a word comparison; out of line it is a `bcmp` call, which
    // libFuzzer builds intercept (the rule checker looks members up by the hundred thousand).
    #[inline(always)]
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
            _ => crate::wire::json::parse_inline(self.text())
                .map(|p| p.value)
                .unwrap_or(Value::Null),
        }
    }
}
