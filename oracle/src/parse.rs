//! The oracle's `JSON.parse`: recursive descent into JavaScript-shaped values, iterative past
//! [`MAX_DEPTH`].

use super::{JKind, J, MAX_DEPTH};

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
            // A run of plain characters (anything but `"`, `\\` and controls, all of which are
            // single ASCII bytes that never occur inside a multi-byte character) is copied whole.
            let rest = self.s.get(self.i..)?;
            let plain = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(rest.len());
            if plain > 0 {
                let run = &self.t[self.i..self.i + plain];
                if run.is_ascii() {
                    // One code unit per byte (and one reservation, not one per unit).
                    out.extend(run.bytes().map(u16::from));
                } else {
                    out.extend(run.encode_utf16());
                }
                self.i += plain;
            }
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
