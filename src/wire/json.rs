//! A `JSON.parse`/`JSON.stringify`-compatible JSON layer.
//!
//! The upstream runtime is JavaScript, so what a line *means* is whatever `JSON.parse` makes of it.
//! `serde_json` differs from it in ways a conformance kit must not: it caps nesting at 128 levels,
//! rejects lone surrogate escapes and rejects number literals that overflow a double (JS gives
//! `Infinity`). This parser follows `JSON.parse`: no depth limit (it is iterative), every number is a
//! double, a lone surrogate becomes U+FFFD (a Rust `String` cannot hold one; `JSON.stringify` would
//! echo the escape — the one documented difference), duplicate keys keep the first position and the
//! last value. It builds `serde_json::Value`s so the rest of the kit can use the usual API.
//!
//! The writer is `JSON.stringify`: compact, numbers formatted as JavaScript prints doubles
//! (`1e21` → `1e+21`, `-0` → `0`), only `"`, `\` and control characters escaped, iterative.

use serde_json::{Map, Number, Value};
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

/// Nesting depth above which values are torn down iteratively instead of by `Drop` recursion.
pub const DEEP: usize = 512;

enum Open {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    last_number: Option<f64>,
}

/// Parses one JSON text exactly as `JSON.parse` accepts it.
pub fn parse(text: &str) -> Result<Parsed, JsonError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        pos: 0,
        last_number: None,
    };
    let mut stack: Vec<Open> = Vec::new();
    let mut depth = 0usize;
    let mut top_id_number: Option<f64> = None;
    let result = (|| -> Result<Value, JsonError> {
        'value: loop {
            p.ws();
            p.last_number = None;
            let mut value = match p.peek() {
                Some(b'{') => {
                    p.pos += 1;
                    p.ws();
                    if p.peek() == Some(b'}') {
                        p.pos += 1;
                        depth = depth.max(stack.len() + 1);
                        Value::Object(Map::new())
                    } else {
                        let key = p.key()?;
                        stack.push(Open::Object(Map::new(), key));
                        depth = depth.max(stack.len());
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    p.pos += 1;
                    p.ws();
                    if p.peek() == Some(b']') {
                        p.pos += 1;
                        depth = depth.max(stack.len() + 1);
                        Value::Array(Vec::new())
                    } else {
                        stack.push(Open::Array(Vec::new()));
                        depth = depth.max(stack.len());
                        continue 'value;
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

impl Parser<'_> {
    fn err(&self, what: &'static str) -> JsonError {
        JsonError {
            offset: self.pos,
            what,
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    /// `JSON.parse` whitespace: tab, LF, CR, space only.
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &'static str, v: Value) -> Result<Value, JsonError> {
        if self.s[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

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

    fn string(&mut self) -> Result<String, JsonError> {
        self.pos += 1; // opening quote
        let start = self.pos;
        // Fast path: no escapes.
        while let Some(&b) = self.s.get(self.pos) {
            match b {
                b'"' => {
                    let out = self.text[start..self.pos].to_owned();
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => break,
                0..=0x1f => return Err(self.err("control character in string")),
                _ => self.pos += 1,
            }
        }
        let mut out = String::with_capacity(self.pos - start + 16);
        out.push_str(&self.text[start..self.pos]);
        loop {
            let run = self.pos;
            while let Some(&b) = self.s.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[run..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
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
                                    out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                                } else {
                                    out.push('\u{FFFD}');
                                    self.pos = save;
                                }
                            } else {
                                out.push(char::from_u32(hi).unwrap_or('\u{FFFD}'));
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

    fn number(&mut self) -> Result<Value, JsonError> {
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
            return Ok(Value::Number(n.into()));
        }
        let f: f64 = lit.parse().map_err(|_| self.err("invalid number"))?;
        self.last_number = Some(f);
        Ok(number_value(f))
    }

    #[inline]
    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}

/// The `serde_json::Value` for a JavaScript double: integers as JavaScript prints them (so that
/// `9007199254740993` holds `9007199254740992` and `12345678901234567890` holds
/// `12345678901234567000`), other finite values as floats, non-finite values as `null` (which is
/// what `JSON.stringify` writes for them).
pub fn number_value(f: f64) -> Value {
    if !f.is_finite() {
        return Value::Null;
    }
    if f == f.trunc() {
        if f.abs() <= 9_007_199_254_740_992.0 {
            return Value::Number((f as i64).into());
        }
        if f.abs() < 1e21 {
            let s = js_number(f);
            if let Ok(i) = s.parse::<i64>() {
                return Value::Number(i.into());
            }
            if let Ok(u) = s.parse::<u64>() {
                return Value::Number(u.into());
            }
        }
    }
    Number::from_f64(f)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// `Number.prototype.toString()` for a double, as `JSON.stringify` writes it (`null` when not finite).
pub fn js_number(f: f64) -> String {
    let mut s = String::new();
    push_js_number(f, &mut s);
    s
}

fn push_js_number(f: f64, out: &mut String) {
    use std::fmt::Write;
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    if f == 0.0 {
        out.push('0');
        return;
    }
    if f == f.trunc() && f.abs() <= 9_007_199_254_740_992.0 {
        let _ = write!(out, "{}", f as i64);
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as ECMAScript requires.
    let sci = format!("{:e}", f.abs());
    let (mant, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let e: i32 = exp.parse().expect("exponent is an integer");
    let k = digits.len() as i32;
    let n = e + 1;
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{}", if n > 0 { '+' } else { '-' }, (n - 1).abs());
    }
}

/// Drops a value without recursion, so a 100 000-deep value cannot overflow the stack.
pub fn dispose(v: Value) {
    match v {
        Value::Array(a) if a.iter().any(is_container) => {
            let mut stack: Vec<Value> = a;
            while let Some(v) = stack.pop() {
                match v {
                    Value::Array(a) => stack.extend(a),
                    Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
                    _ => {}
                }
            }
        }
        Value::Object(m) if m.values().any(is_container) => {
            let mut stack: Vec<Value> = m.into_iter().map(|(_, v)| v).collect();
            while let Some(v) = stack.pop() {
                match v {
                    Value::Array(a) => stack.extend(a),
                    Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn is_container(v: &Value) -> bool {
    matches!(v, Value::Array(_) | Value::Object(_))
}

/// Appends `JSON.stringify(v)` to `out`. Iterative: depth is bounded only by memory.
pub fn write_value(v: &Value, out: &mut Vec<u8>) {
    enum Frame<'a> {
        Arr(std::slice::Iter<'a, Value>, bool),
        Obj(serde_json::map::Iter<'a>, bool),
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next: Option<&Value> = Some(v);
    loop {
        if let Some(v) = next.take() {
            match v {
                Value::Null => out.extend_from_slice(b"null"),
                Value::Bool(true) => out.extend_from_slice(b"true"),
                Value::Bool(false) => out.extend_from_slice(b"false"),
                Value::Number(n) => write_number(n, out),
                Value::String(s) => write_str(s, out),
                Value::Array(a) => {
                    out.push(b'[');
                    stack.push(Frame::Arr(a.iter(), true));
                }
                Value::Object(m) => {
                    out.push(b'{');
                    stack.push(Frame::Obj(m.iter(), true));
                }
            }
        }
        let Some(top) = stack.last_mut() else { return };
        match top {
            Frame::Arr(it, first) => match it.next() {
                Some(v) => {
                    if !std::mem::take(first) {
                        out.push(b',');
                    }
                    next = Some(v);
                }
                None => {
                    out.push(b']');
                    stack.pop();
                }
            },
            Frame::Obj(it, first) => match it.next() {
                Some((k, v)) => {
                    if !std::mem::take(first) {
                        out.push(b',');
                    }
                    write_str(k, out);
                    out.push(b':');
                    next = Some(v);
                }
                None => {
                    out.push(b'}');
                    stack.pop();
                }
            },
        }
    }
}

/// `JSON.stringify(v)` as a `String`.
pub fn to_string(v: &Value) -> String {
    let mut out = Vec::new();
    write_value(v, &mut out);
    String::from_utf8(out).expect("writer emits UTF-8")
}

/// Appends a number as JavaScript prints it.
pub fn write_number(n: &Number, out: &mut Vec<u8>) {
    use std::io::Write;
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else {
        let mut s = String::new();
        push_js_number(n.as_f64().unwrap_or(f64::NAN), &mut s);
        out.extend_from_slice(s.as_bytes());
    }
}

/// Appends a JSON string literal escaped as `JSON.stringify` does.
pub fn write_str(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let b = s.as_bytes();
    let mut run = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&b[run..i]);
        if esc.is_empty() {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(c >> 4) as usize],
                HEX[(c & 15) as usize],
            ]);
        } else {
            out.extend_from_slice(esc);
        }
        run = i + 1;
    }
    out.extend_from_slice(&b[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rt(s: &str) -> String {
        to_string(&parse(s).unwrap().value)
    }

    #[test]
    fn numbers_are_printed_as_javascript_prints_doubles() {
        assert_eq!(rt("1e3"), "1000");
        assert_eq!(rt("1.0"), "1");
        assert_eq!(rt("-0"), "0");
        assert_eq!(rt("1.5"), "1.5");
        assert_eq!(rt("9007199254740993"), "9007199254740992");
        assert_eq!(rt("12345678901234567890"), "12345678901234567000");
        assert_eq!(
            rt("123456789012345678901234567890"),
            "1.2345678901234568e+29"
        );
        assert_eq!(rt("1e21"), "1e+21");
        assert_eq!(rt("1e-7"), "1e-7");
        assert_eq!(rt("0.000001"), "0.000001");
        assert_eq!(rt("1e400"), "null");
        assert_eq!(rt("-1e400"), "null");
        assert_eq!(rt("[1e20]"), "[100000000000000000000]");
    }

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
    fn lone_surrogates_become_replacement_characters_and_pairs_combine() {
        assert_eq!(parse(r#""\ud800""#).unwrap().value, json!("\u{FFFD}"));
        assert_eq!(parse(r#""\udc00x""#).unwrap().value, json!("\u{FFFD}x"));
        assert_eq!(parse(r#""\ud83d\ude00""#).unwrap().value, json!("😀"));
        assert_eq!(
            parse(r#""\ud83d\u0041""#).unwrap().value,
            json!("\u{FFFD}A")
        );
    }

    #[test]
    fn deep_nesting_parses_writes_and_drops_without_recursion() {
        let n = 200_000;
        let text = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let p = parse(&text).unwrap();
        assert_eq!(p.depth, n);
        let mut out = Vec::new();
        write_value(&p.value, &mut out);
        assert_eq!(out.len(), 2 * n);
        dispose(p.value);
        // A deep but malformed text is torn down too.
        assert!(parse(&"[{\"a\":".repeat(n)).is_err());
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        assert_eq!(
            rt(r#""a\u0001\b\f\n\r\t\"\\\/\u2028é""#),
            "\"a\\u0001\\b\\f\\n\\r\\t\\\"\\\\/\u{2028}é\""
        );
    }

    #[test]
    fn whitespace_is_only_the_four_json_characters() {
        assert!(parse(" \t\r\n{}\n ").is_ok());
        assert!(parse("\u{a0}{}").is_err());
        assert!(parse("\u{feff}{}").is_err());
    }
}
