//! The parser: `JSON.parse`'s grammar, iterative, building `serde_json::Value`s.

use super::{dispose, held, number_value, plain_words};
use serde_json::{Map, Value};
use std::fmt;

/// Where and why a line is not JSON (`JSON.parse` would throw).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset of the offending input.
    pub offset: usize,
    /// What was expected or found there.
    pub what: &'static str,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

impl std::error::Error for JsonError {}

/// A parsed JSON text plus the facts about it that a `serde_json::Value` cannot carry.
#[derive(Debug)]
pub struct Parsed {
    /// The value, with numbers as JavaScript would hold them.
    pub value: Value,
    /// The double behind the top-level object's (last) `id` member, when that member is a number
    /// literal. Needed because `1e400` is a number (`Infinity`) to JavaScript but `null` here.
    pub top_id_number: Option<f64>,
    /// Deepest nesting seen (a scalar is depth 0).
    pub depth: usize,
}

/// Members a non-empty object is allocated for at its first key: frames' objects mostly hold a
/// handful, and growing an index map from one slot rehashes it at 3 and 7 (not observable:
/// capacity only).
const OBJECT_CAPACITY: usize = 4;

enum Open {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

/// The scanner both [`parse`] and the [`Tape`](super::Tape) use: one grammar, one set of errors.
pub(super) struct Parser<'a> {
    pub(super) s: &'a [u8],
    pub(super) text: &'a str,
    pub(super) pos: usize,
    last_number: Option<f64>,
    /// Whether whitespace was skipped anywhere (the tape's [`Tape::plain`](super::Tape)).
    pub(super) spaced: bool,
}

/// Parses one JSON text exactly as `JSON.parse` accepts it.
pub fn parse(text: &str) -> Result<Parsed, JsonError> {
    parse_inline(text)
}

/// [`parse`], compiled into the crate that calls it (see the wire layer's note on `#[inline]`):
/// for the rule checker, whose copy fuzz builds leave uninstrumented.
#[doc(hidden)]
#[inline]
pub fn parse_inline(text: &str) -> Result<Parsed, JsonError> {
    let mut p = Parser::new(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut depth = 0usize;
    let mut top_id_number: Option<f64> = None;
    let result = (|| -> Result<Value, JsonError> {
        'value: loop {
            p.ws();
            p.last_number = None;
            let Some(mut value) = begin_value(&mut p, &mut stack, &mut depth)? else {
                continue 'value;
            };
            // Attach the finished value to its parent, closing containers as they end.
            loop {
                let at_top = stack.len() == 1;
                match stack.last_mut() {
                    None => {
                        p.ws();
                        if p.pos != p.s.len() {
                            dispose(value);
                            return Err(p.err("unexpected data after the JSON value"));
                        }
                        return Ok(value);
                    }
                    Some(Open::Array(items)) => {
                        items.push(value);
                        p.ws();
                        match p.peek() {
                            Some(b',') => {
                                p.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                p.pos += 1;
                                let Some(Open::Array(items)) = stack.pop() else {
                                    unreachable!()
                                };
                                value = Value::Array(items);
                                p.last_number = None;
                            }
                            _ => return Err(p.err("expected ',' or ']' in array")),
                        }
                    }
                    Some(Open::Object(map, key)) => {
                        let key = std::mem::take(key);
                        if at_top && key == "id" {
                            top_id_number = p.last_number;
                        }
                        if let Some(old) = map.insert(key, value) {
                            dispose(old);
                        }
                        p.ws();
                        match p.peek() {
                            Some(b',') => {
                                p.pos += 1;
                                p.ws();
                                let next = p.key()?;
                                if let Some(Open::Object(_, k)) = stack.last_mut() {
                                    *k = next;
                                }
                                continue 'value;
                            }
                            Some(b'}') => {
                                p.pos += 1;
                                let Some(Open::Object(map, _)) = stack.pop() else {
                                    unreachable!()
                                };
                                value = Value::Object(map);
                                p.last_number = None;
                            }
                            _ => return Err(p.err("expected ',' or '}' in object")),
                        }
                    }
                }
            }
        }
    })();
    for open in stack.drain(..) {
        match open {
            Open::Array(items) => dispose(Value::Array(items)),
            Open::Object(map, _) => dispose(Value::Object(map)),
        }
    }
    result.map(|value| Parsed {
        value,
        top_id_number,
        depth,
    })
}

/// Reads a scalar, or an empty container, at `p`: the value. `None` when a non-empty container
/// opened instead (pushed on `stack`, `depth` raised): its first value comes next.
#[inline]
fn begin_value(
    p: &mut Parser<'_>,
    stack: &mut Vec<Open>,
    depth: &mut usize,
) -> Result<Option<Value>, JsonError> {
    let value = match p.peek() {
        Some(b'{') => {
            p.pos += 1;
            p.ws();
            if p.peek() == Some(b'}') {
                p.pos += 1;
                *depth = (*depth).max(stack.len() + 1);
                Value::Object(Map::new())
            } else {
                let key = p.key()?;
                stack.push(Open::Object(Map::with_capacity(OBJECT_CAPACITY), key));
                *depth = (*depth).max(stack.len());
                return Ok(None);
            }
        }
        Some(b'[') => {
            p.pos += 1;
            p.ws();
            if p.peek() == Some(b']') {
                p.pos += 1;
                *depth = (*depth).max(stack.len() + 1);
                Value::Array(Vec::new())
            } else {
                stack.push(Open::Array(Vec::new()));
                *depth = (*depth).max(stack.len());
                return Ok(None);
            }
        }
        Some(b'"') => Value::String(p.string()?),
        Some(b't') => p.literal("true", Value::Bool(true))?,
        Some(b'f') => p.literal("false", Value::Bool(false))?,
        Some(b'n') => p.literal("null", Value::Null)?,
        Some(b'-' | b'0'..=b'9') => p.number()?,
        Some(_) => return Err(p.err("expected a JSON value")),
        None => return Err(p.err("unexpected end of input, expected a JSON value")),
    };
    Ok(Some(value))
}

impl<'a> Parser<'a> {
    /// A scanner at the start of `text`.
    #[inline]
    pub(super) fn new(text: &'a str) -> Self {
        Parser {
            s: text.as_bytes(),
            text,
            pos: 0,
            last_number: None,
            spaced: false,
        }
    }

    /// An error at the current position.
    #[inline]
    pub(super) fn err(&self, what: &'static str) -> JsonError {
        JsonError {
            offset: self.pos,
            what,
        }
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    /// `JSON.parse` whitespace: tab, LF, CR, space only.
    #[inline]
    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
            self.spaced = true;
        }
    }

    /// Consumes `word` (`true`, `false`, `null`), giving `v`.
    #[inline]
    pub(super) fn literal(&mut self, word: &'static str, v: Value) -> Result<Value, JsonError> {
        if self.s[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    #[inline]
    fn key(&mut self) -> Result<String, JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.err("expected a string key"));
        }
        let k = self.string()?;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.err("expected ':' after object key"));
        }
        self.pos += 1;
        Ok(k)
    }

    #[inline]
    fn string(&mut self) -> Result<String, JsonError> {
        self.pos += 1; // opening quote
        let start = self.pos;
        // Fast path: no escapes (whole plain words skipped first).
        self.pos = plain_words(self.s, self.pos);
        while let Some(&b) = self.s.get(self.pos) {
            match b {
                b'"' => {
                    let out = self.text[start..self.pos].to_owned();
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => break,
                0..=0x1f => return Err(self.err("control character in string")),
                b if held::may_be_reserved(b) => break,
                _ => self.pos += 1,
            }
        }
        let mut out = String::with_capacity(self.pos - start + 16);
        out.push_str(&self.text[start..self.pos]);
        self.string_rest(&mut out)?;
        Ok(out)
    }

    /// Decodes the rest of a string, from `self.pos` (inside it, at an escape or the end of a
    /// plain run already copied) through its closing quote, appending to `out` as held text
    /// ([`held`]): a lone surrogate escape is kept, a genuine reserved character tagged.
    #[inline]
    pub(super) fn string_rest(&mut self, out: &mut String) -> Result<(), JsonError> {
        loop {
            let run = self.pos;
            self.pos = plain_words(self.s, self.pos);
            while let Some(&b) = self.s.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 || held::may_be_reserved(b) {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[run..self.pos]);
            match self.peek() {
                Some(b) if held::may_be_reserved(b) => {
                    let c = self.text[self.pos..].chars().next().expect("a character");
                    held::push_char(out, c);
                    self.pos += c.len_utf8();
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.err("unterminated escape"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi)
                                && self.s[self.pos..].starts_with(b"\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                    held::push_char(out, char::from_u32(c).expect("a pair"));
                                } else {
                                    held::push_lone(out, hi as u16);
                                    self.pos = save;
                                }
                            } else {
                                match char::from_u32(hi) {
                                    Some(c) => out.push(c),
                                    None => held::push_lone(out, hi as u16),
                                }
                            }
                        }
                        _ => {
                            self.pos -= 1;
                            return Err(self.err("invalid escape"));
                        }
                    }
                }
                Some(_) => return Err(self.err("control character in string")),
                None => return Err(self.err("unterminated string")),
            }
        }
    }

    #[inline]
    fn hex4(&mut self) -> Result<u32, JsonError> {
        let Some(h) = self.s.get(self.pos..self.pos + 4) else {
            return Err(self.err("truncated \\u escape"));
        };
        let mut v = 0u32;
        for &c in h {
            let d = (c as char)
                .to_digit(16)
                .ok_or_else(|| self.err("invalid \\u escape"))?;
            v = v * 16 + d;
        }
        self.pos += 4;
        Ok(v)
    }

    #[inline]
    fn number(&mut self) -> Result<Value, JsonError> {
        Ok(match self.number_f64()? {
            (_, Some(n)) => Value::Number(n.into()),
            (f, None) => number_value(f),
        })
    }

    /// Scans a number: its double, and the integer itself when it has at most 15 digits (exact
    /// as both; [`number_value`] of the double gives the same `Value`, only slower).
    #[inline]
    pub(super) fn number_f64(&mut self) -> Result<(f64, Option<i64>), JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("invalid number")),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("expected a digit after '.'"));
            }
            self.digits();
            integral = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("expected a digit in exponent"));
            }
            self.digits();
            integral = false;
        }
        let lit = &self.text[start..self.pos];
        // Fast path: up to 15 digits is exact as a double and as an i64.
        if integral && lit.len() <= 15 && lit != "-0" {
            let n: i64 = lit.parse().map_err(|_| self.err("invalid number"))?;
            self.last_number = Some(n as f64);
            return Ok((n as f64, Some(n)));
        }
        let f: f64 = lit.parse().map_err(|_| self.err("invalid number"))?;
        self.last_number = Some(f);
        Ok((f, None))
    }

    #[inline]
    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}
#[cfg(test)]
mod tests {
    use super::super::tests::rt;
    use super::*;
    use serde_json::json;

    #[test]
    fn overflowing_id_is_still_a_number_to_the_classifier() {
        let p = parse(r#"{"id":1e400,"method":"x"}"#).unwrap();
        assert_eq!(p.top_id_number, Some(f64::INFINITY));
        assert_eq!(p.value["id"], Value::Null);
        let p = parse(r#"{"id":1,"id":"s"}"#).unwrap();
        assert_eq!(p.top_id_number, None);
        assert_eq!(p.value["id"], json!("s"));
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        assert_eq!(rt(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for bad in [
            "",
            "{",
            "}{",
            "nul",
            "{not json",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "+1",
            "NaN",
            "\"a\tb\"",
            "'a'",
            "[1] x",
            "{\"a\" 1}",
            "\"\\x\"",
            "\"\\u12\"",
            "tru",
            "-",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} must be rejected");
        }
    }

    #[test]
    fn lone_surrogates_are_held_and_pairs_combine() {
        use super::held::{from_utf16, TAG};
        assert_eq!(
            parse(r#""\ud800""#).unwrap().value,
            json!(from_utf16(&[0xD800]))
        );
        assert_eq!(
            parse(r#""\udc00x""#).unwrap().value,
            json!(from_utf16(&[0xDC00, 0x78]))
        );
        assert_eq!(parse(r#""\ud83d\ude00""#).unwrap().value, json!("😀"));
        assert_eq!(
            parse(r#""\ud83d\u0041""#).unwrap().value,
            json!(from_utf16(&[0xD83D, 0x41]))
        );
        // A genuine character of the reserved block, raw or as an escaped pair, is tagged.
        let tagged = format!("{TAG}\u{10F800}");
        assert_eq!(parse("\"\u{10F800}\"").unwrap().value, json!(tagged));
        assert_eq!(parse(r#""\udbfe\udc00""#).unwrap().value, json!(tagged));
        // Keys that differ only in lone surrogates are distinct members.
        let v = parse(r#"{"\ud800":1,"\ud801":2,"\ud800":3}"#)
            .unwrap()
            .value;
        assert_eq!(v.as_object().unwrap().len(), 2);
        assert_eq!(
            rt(r#"{"\ud800":1,"\ud801":2,"\ud800":3}"#),
            r#"{"\ud800":3,"\ud801":2}"#
        );
    }

    #[test]
    fn whitespace_is_only_the_four_json_characters() {
        assert!(parse(" \t\r\n{}\n ").is_ok());
        assert!(parse("\u{a0}{}").is_err());
        assert!(parse("\u{feff}{}").is_err());
    }
}
