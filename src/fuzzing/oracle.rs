//! An independent model of docs/CONTRACT.md#s2.1 and #s2.2, used only as a test oracle for the
//! wire layer.
//!
//! Written from the contract's JavaScript (`drainLines`, `JSON.parse`, `handleLine`, `objectParams`,
//! `JSON.stringify`) and ECMA-262, deliberately *without* calling into `crate::wire`: where the two
//! disagree, one of them is wrong. It favours obviousness over speed: a recursive-descent parser
//! into JavaScript-shaped values (UTF-16 strings, every number a double, objects as ordered member
//! lists), the classification `if` chain verbatim, and `Number::toString` from the spec's steps.
//!
//! Recursion is capped at [`MAX_DEPTH`]; deeper containers are validated by an iterative scanner and
//! kept only as their kind ([`J::Deep`]), so a hostile input cannot overflow the oracle's stack.

/// Nesting depth the recursive parser handles itself.
pub const MAX_DEPTH: usize = 96;

/// A JavaScript value as `JSON.parse` builds it.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A double; a literal too large for a double is `Infinity`.
    Num(f64),
    /// A UTF-16 string; may hold lone surrogates, as JavaScript strings can.
    Str(Vec<u16>),
    /// An array.
    Arr(Vec<J>),
    /// An object: members in first-insertion order, duplicates already merged (last value wins).
    Obj(Vec<(Vec<u16>, J)>),
    /// A container nested deeper than [`MAX_DEPTH`]: valid, but only its kind is known.
    Deep(JKind),
}

/// `typeof`-like kinds, with `null` and arrays told apart (and "absent" for `undefined`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JKind {
    /// `undefined`: the member is not there.
    Absent,
    /// `null`.
    Null,
    /// A boolean.
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

impl J {
    /// The kind of this value.
    pub fn kind(&self) -> JKind {
        match self {
            J::Null => JKind::Null,
            J::Bool(_) => JKind::Bool,
            J::Num(_) => JKind::Number,
            J::Str(_) => JKind::String,
            J::Arr(_) => JKind::Array,
            J::Obj(_) => JKind::Object,
            J::Deep(k) => *k,
        }
    }

    /// Property lookup on an object (`undefined` → `None`); arrays and scalars have no such members.
    pub fn get(&self, key: &str) -> Option<&J> {
        let J::Obj(members) = self else { return None };
        let key: Vec<u16> = key.encode_utf16().collect();
        members.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Whether a [`J::Deep`] is anywhere inside (then the exact text cannot be modelled).
    pub fn has_deep(&self) -> bool {
        match self {
            J::Deep(_) => true,
            J::Arr(a) => a.iter().any(J::has_deep),
            J::Obj(m) => m.iter().any(|(_, v)| v.has_deep()),
            _ => false,
        }
    }
}

/// `JSON.parse(text)`: the value, or `None` where it would throw.
pub fn json_parse(text: &str) -> Option<J> {
    let mut p = P {
        t: text,
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

struct P<'a> {
    t: &'a str,
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek() == Some(b)).then(|| self.i += 1)
    }

    /// ECMA-404 whitespace: exactly these four.
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<J> {
        self.ws();
        match self.peek()? {
            b'[' | b'{' if depth >= MAX_DEPTH => self.skip_container(),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat(b']').is_some() {
                    return Some(J::Arr(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(J::Arr(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut members: Vec<(Vec<u16>, J)> = Vec::new();
                self.ws();
                if self.eat(b'}').is_some() {
                    return Some(J::Obj(members));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.ws();
                    self.eat(b':')?;
                    let v = self.value(depth + 1)?;
                    // CreateDataProperty on an existing key: the value changes, the position does not.
                    match members.iter_mut().find(|(mk, _)| *mk == k) {
                        Some(slot) => slot.1 = v,
                        None => members.push((k, v)),
                    }
                    self.ws();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(J::Obj(members));
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(J::Str),
            b't' => self.word(b"true", J::Bool(true)),
            b'f' => self.word(b"false", J::Bool(false)),
            b'n' => self.word(b"null", J::Null),
            _ => self.number().map(J::Num),
        }
    }

    fn word(&mut self, w: &[u8], v: J) -> Option<J> {
        self.s[self.i..].starts_with(w).then(|| {
            self.i += w.len();
            v
        })
    }

    fn string(&mut self) -> Option<Vec<u16>> {
        self.eat(b'"')?;
        let mut out = Vec::new();
        loop {
            // `i` only ever advances by whole characters, so it is a char boundary here.
            let c = self.t.get(self.i..)?.chars().next()?;
            self.i += c.len_utf8();
            match c {
                '"' => return Some(out),
                '\u{0}'..='\u{1f}' => return None,
                '\\' => {
                    let e = self.peek()?;
                    self.i += 1;
                    let unit = match e {
                        b'"' => 0x22,
                        b'\\' => 0x5c,
                        b'/' => 0x2f,
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => 0x0a,
                        b'r' => 0x0d,
                        b't' => 0x09,
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4)?;
                            let hex = std::str::from_utf8(hex).ok()?;
                            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                                return None;
                            }
                            self.i += 4;
                            u16::from_str_radix(hex, 16).ok()?
                        }
                        _ => return None,
                    };
                    // Surrogate escapes are kept as single code units: a pair combines by itself.
                    out.push(unit);
                }
                c => {
                    let mut buf = [0u16; 2];
                    out.extend_from_slice(c.encode_utf16(&mut buf));
                }
            }
        }
    }

    fn number(&mut self) -> Option<f64> {
        let start = self.i;
        self.eat(b'-');
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.').is_some() {
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        // Rust's float parsing rounds correctly, as ECMAScript's StringToNumber does; too large → inf.
        std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .parse()
            .ok()
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
    }

    /// Validates a container without recursion; returns only its kind.
    fn skip_container(&mut self) -> Option<J> {
        #[derive(PartialEq)]
        enum St {
            Value,
            ValueOrClose,
            KeyOrClose,
            AfterValue,
        }
        let kind = if self.peek()? == b'[' {
            JKind::Array
        } else {
            JKind::Object
        };
        let mut open: Vec<u8> = Vec::new();
        let mut st = St::Value;
        loop {
            self.ws();
            let b = self.peek()?;
            let closes = match st {
                St::ValueOrClose => b == b']',
                St::KeyOrClose => b == b'}',
                St::AfterValue => {
                    let top = *open.last()?;
                    if b == b',' {
                        self.i += 1;
                        if top == b'{' {
                            self.member_key()?;
                        }
                        st = St::Value;
                        continue;
                    }
                    if (top, b) != (b'[', b']') && (top, b) != (b'{', b'}') {
                        return None;
                    }
                    true
                }
                St::Value => false,
            };
            if closes {
                self.i += 1;
                open.pop();
                if open.is_empty() {
                    return Some(J::Deep(kind));
                }
                st = St::AfterValue;
                continue;
            }
            if st == St::KeyOrClose {
                self.member_key()?;
                st = St::Value;
                continue;
            }
            match b {
                b'[' => {
                    self.i += 1;
                    open.push(b);
                    st = St::ValueOrClose;
                }
                b'{' => {
                    self.i += 1;
                    open.push(b);
                    st = St::KeyOrClose;
                }
                _ => {
                    self.scalar()?;
                    st = St::AfterValue;
                }
            }
        }
    }

    /// A string, literal or number, discarded.
    fn scalar(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b't' => self.word(b"true", J::Null).map(drop),
            b'f' => self.word(b"false", J::Null).map(drop),
            b'n' => self.word(b"null", J::Null).map(drop),
            _ => self.number().map(drop),
        }
    }

    fn member_key(&mut self) -> Option<()> {
        self.ws();
        self.string()?;
        self.ws();
        self.eat(b':')
    }
}

/// ECMAScript WhiteSpace and LineTerminator: what `String.prototype.trim()` strips.
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{b}'
            | '\u{c}'
            | '\r'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'
            | '\u{2001}'
            | '\u{2002}'
            | '\u{2003}'
            | '\u{2004}'
            | '\u{2005}'
            | '\u{2006}'
            | '\u{2007}'
            | '\u{2008}'
            | '\u{2009}'
            | '\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// One event of the line model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineModel {
    /// A complete, non-blank line after decoding and trimming.
    Line(String),
    /// A complete line of this many bytes, over the bound.
    TooLong(usize),
}

/// The unterminated tail of a stream: `(bytes, whether it was blank)`; an over-long tail is never
/// called blank (its bytes were not kept to look at).
pub type TailModel = Option<(usize, bool)>;

/// `drainLines` over a whole stream, plus the kit's line bound: only `\n` ends a line, each line is
/// decoded (invalid UTF-8 → U+FFFD) and trimmed, blank lines vanish, the tail is not a line.
pub fn split_lines(bytes: &[u8], max_line: usize) -> (Vec<LineModel>, TailModel) {
    let mut parts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let tail = parts.pop().unwrap_or(&[]);
    let mut lines = Vec::new();
    for p in parts {
        if p.len() > max_line {
            lines.push(LineModel::TooLong(p.len()));
        } else {
            let text = String::from_utf8_lossy(p);
            let t = text.trim_matches(is_js_space);
            if !t.is_empty() {
                lines.push(LineModel::Line(t.to_owned()));
            }
        }
    }
    let tail = match tail.len() {
        0 => None,
        n if n > max_line => Some((n, false)),
        n => Some((
            n,
            String::from_utf8_lossy(tail)
                .trim_matches(is_js_space)
                .is_empty(),
        )),
    };
    (lines, tail)
}

/// A request/response id as `handleLine` accepts it.
#[derive(Debug, Clone, PartialEq)]
pub enum MId {
    /// `typeof id === 'string'`.
    Str(Vec<u16>),
    /// `typeof id === 'number'` (may be ±Infinity).
    Num(f64),
}

/// What `handleLine` does with one line. Members are kept as sent (`None` = undefined) so that a
/// caller can compare kinds under its own rules.
#[derive(Debug, Clone, PartialEq)]
pub enum Model {
    /// `JSON.parse` threw (`blank` when the line was empty).
    Malformed {
        /// The line was empty.
        blank: bool,
    },
    /// Parsed, but `!message || typeof message !== 'object'`: the scalar.
    NotAnObject(J),
    /// An array: `.id`/`.method` are undefined, so nothing happens. Holds its length.
    Batch(usize),
    /// An object with neither a usable id nor a string method.
    Dropped {
        /// `frame.id`.
        id: Option<J>,
        /// `frame.method`.
        method: Option<J>,
    },
    /// `request(id, method, objectParams(params))`.
    Request {
        /// The id.
        id: MId,
        /// The method.
        method: Vec<u16>,
        /// `objectParams(frame.params)`: the object, or `{}`.
        params: J,
        /// `frame.params` as sent.
        params_sent: Option<J>,
    },
    /// `response(id, frame)`.
    Response {
        /// The id.
        id: MId,
        /// `frame.error && typeof frame.error === 'object'`: `Some((code if a number, message if a
        /// string, data))`; otherwise `None` and the frame resolves with `result`.
        error: Option<ErrorModel>,
        /// `frame.result` (`None` = undefined).
        result: Option<J>,
        /// `frame.method` (not a string, or absent).
        method: Option<J>,
    },
    /// `notificationHandler(method, objectParams(params))`.
    Notification {
        /// The method.
        method: Vec<u16>,
        /// `objectParams(frame.params)`.
        params: J,
        /// `frame.params` as sent.
        params_sent: Option<J>,
        /// `frame.id` (absent, or not a string/number).
        id: Option<J>,
    },
}

/// A rejecting error member: `code` when a number, `message` when a string, `data` verbatim.
pub type ErrorModel = (Option<f64>, Option<Vec<u16>>, Option<J>);

/// `handleLine(line)` (docs/CONTRACT.md#s2.2), on a line that was already trimmed (or not:
/// `JSON.parse` decides).
pub fn handle_line(line: &str) -> Model {
    handle_parsed(line, json_parse(line).as_ref())
}

/// [`handle_line`] on `message`, the line's [`json_parse`] (`None` = `JSON.parse` threw), for a
/// caller that needs the parsed value too and should not parse the line twice.
pub fn handle_parsed(line: &str, message: Option<&J>) -> Model {
    let Some(message) = message else {
        return Model::Malformed {
            blank: line.is_empty(),
        };
    };
    match message {
        J::Arr(a) => return Model::Batch(a.len()),
        J::Obj(_) => {}
        // The top level is always parsed recursively, so it is never `Deep`.
        other => return Model::NotAnObject(other.clone()),
    }
    let id = match message.get("id") {
        Some(J::Str(s)) => Some(MId::Str(s.clone())),
        Some(J::Num(n)) => Some(MId::Num(*n)),
        _ => None,
    };
    let method = match message.get("method") {
        Some(J::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let member = |k: &str| message.get(k).cloned();
    let object_params = || match message.get("params") {
        Some(p @ (J::Obj(_) | J::Deep(JKind::Object))) => p.clone(),
        _ => J::Obj(Vec::new()),
    };
    match (id, method) {
        (Some(id), Some(method)) => Model::Request {
            id,
            method,
            params: object_params(),
            params_sent: member("params"),
        },
        (Some(id), None) => {
            let error = match message.get("error") {
                Some(e @ (J::Obj(_) | J::Arr(_) | J::Deep(_))) => Some((
                    match e.get("code") {
                        Some(J::Num(c)) => Some(*c),
                        _ => None,
                    },
                    match e.get("message") {
                        Some(J::Str(s)) => Some(s.clone()),
                        _ => None,
                    },
                    e.get("data").cloned(),
                )),
                _ => None,
            };
            Model::Response {
                id,
                error,
                result: member("result"),
                method: member("method"),
            }
        }
        (None, Some(method)) => Model::Notification {
            method,
            params: object_params(),
            params_sent: member("params"),
            id: member("id"),
        },
        (None, None) => Model::Dropped {
            id: member("id"),
            method: member("method"),
        },
    }
}

/// `JSON.stringify(v)` (ES2019 well-formed: lone surrogates are written as `\uXXXX` escapes), or
/// `None` for values holding a [`J::Deep`].
pub fn stringify(v: &J) -> Option<String> {
    let mut out = String::new();
    fn go(v: &J, out: &mut String) -> Option<()> {
        match v {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(n) => out.push_str(&number_to_string(*n)),
            J::Str(s) => quote(s, out),
            J::Arr(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    go(x, out)?;
                }
                out.push(']');
            }
            J::Obj(members) => {
                out.push('{');
                for (i, (k, x)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quote(k, out);
                    out.push(':');
                    go(x, out)?;
                }
                out.push('}');
            }
            J::Deep(_) => return None,
        }
        Some(())
    }
    go(v, &mut out)?;
    Some(out)
}

/// QuoteJSONString.
fn quote(s: &[u16], out: &mut String) {
    out.push('"');
    for r in char::decode_utf16(s.iter().copied()) {
        match r {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok('\u{8}') => out.push_str("\\b"),
            Ok('\u{c}') => out.push_str("\\f"),
            Ok('\n') => out.push_str("\\n"),
            Ok('\r') => out.push_str("\\r"),
            Ok('\t') => out.push_str("\\t"),
            Ok(c) if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            Ok(c) => out.push(c),
            Err(e) => out.push_str(&format!("\\u{:04x}", e.unpaired_surrogate())),
        }
    }
    out.push('"');
}

/// `Number::toString(x)` (ECMA-262 §6.1.6.1.20), and `null` for non-finite values as
/// `JSON.stringify` writes them.
pub fn number_to_string(x: f64) -> String {
    if !x.is_finite() {
        return "null".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    if x < 0.0 {
        return format!("-{}", number_to_string(-x));
    }
    // k digits `s` and exponent n with s × 10^(n−k) = x, k as small as possible: Rust's `{:e}`
    // prints exactly the shortest round-tripping digits.
    let e = format!("{x:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let s: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = s.len() as i64;
    let n = exp.parse::<i64>().unwrap_or(0) + 1;
    if k <= n && n <= 21 {
        format!("{s}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &s[..n as usize], &s[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{s}", "0".repeat((-n) as usize))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let exp = (n - 1).abs();
        if k == 1 {
            format!("{s}e{sign}{exp}")
        } else {
            format!("{}.{}e{sign}{exp}", &s[..1], &s[1..])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn the_oracle_parses_what_json_parse_accepts_and_nothing_else() {
        assert_eq!(json_parse(" [1, \"a\" ,{}] "), {
            Some(J::Arr(vec![J::Num(1.0), J::Str(u("a")), J::Obj(vec![])]))
        });
        assert_eq!(json_parse("1e400"), Some(J::Num(f64::INFINITY)));
        assert_eq!(json_parse(r#""\ud800""#), Some(J::Str(vec![0xd800])));
        for bad in [
            "",
            "01",
            "1.",
            "[1,]",
            "{\"a\":1,}",
            "\u{a0}1",
            "\"\t\"",
            "[1 2]",
        ] {
            assert_eq!(json_parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_oracle_keeps_deep_containers_as_their_kind() {
        let valid = |t: &str| json_parse(t).is_some_and(|j| j.has_deep());
        assert!(valid(&format!("{}{}", "[".repeat(1000), "]".repeat(1000))));
        assert!(valid(&format!(
            "{}1{}",
            "{\"a\":".repeat(500),
            "}".repeat(500)
        )));
        assert!(valid(&format!(
            "{}{{\"k\":[1,{{}},[]],\"z\":null}}{}",
            "[".repeat(200),
            "]".repeat(200)
        )));
        for bad in [
            format!("{}1,{}", "{\"a\":".repeat(500), "}".repeat(500)),
            format!("{}]", "[".repeat(200)),
            format!("{}}}{}", "[".repeat(200), "]".repeat(199)),
            format!("{}{{\"a\"}}{}", "[".repeat(200), "]".repeat(200)),
            format!("{}1 2{}", "[".repeat(200), "]".repeat(200)),
            format!("{}[,]{}", "[".repeat(200), "]".repeat(200)),
        ] {
            assert_eq!(json_parse(&bad), None);
        }
        assert!(json_parse(&"[".repeat(100_000)).is_none());
    }

    #[test]
    fn the_oracle_classifies_like_handle_line() {
        assert!(matches!(
            handle_line(r#"{"id":0,"method":""}"#),
            Model::Request { .. }
        ));
        assert!(matches!(
            handle_line(r#"{"id":1e400,"method":"m"}"#),
            Model::Request { id: MId::Num(f), .. } if f.is_infinite()
        ));
        assert!(matches!(
            handle_line(r#"{"id":1,"method":5}"#),
            Model::Response { .. }
        ));
        assert!(matches!(
            handle_line(r#"{"id":null,"method":"m"}"#),
            Model::Notification { .. }
        ));
        assert_eq!(handle_line("[]"), Model::Batch(0));
        assert_eq!(handle_line("null"), Model::NotAnObject(J::Null));
    }

    #[test]
    fn number_to_string_follows_the_spec_cases() {
        for (x, s) in [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5, "1.5"),
            (-0.0, "0"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (123e-20, "1.23e-18"),
            (f64::INFINITY, "null"),
        ] {
            assert_eq!(number_to_string(x), s);
        }
    }

    #[test]
    fn line_model_drops_the_tail_and_trims_js_whitespace() {
        let (lines, tail) = split_lines(b"\xef\xbb\xbf{}\r\n \n\xff\nab", 100);
        assert_eq!(
            lines,
            vec![
                LineModel::Line("{}".into()),
                LineModel::Line("\u{fffd}".into())
            ]
        );
        assert_eq!(tail, Some((2, false)));
    }
}
