//! A JSON text parsed into a flat tape of nodes that borrow from the text: what the trace matcher
//! reads every frame through. Building a `serde_json::Value` costs a `String` and a SipHash insert
//! per member and a tree of allocations to free; a tape costs neither once its buffers have grown
//! (strings without escapes stay in the text, members are found by comparing keys).
//!
//! Same grammar, errors and meaning as [`parse`](super::parse), on the same scanner: duplicate
//! keys keep the first position and the last value, numbers are doubles and one that overflows
//! reads as null. Any node gives back exactly the `Value` that `parse` builds for its text, and
//! its strings are the same held text ([`held`]: lone surrogates kept).

mod form;
mod read;

pub use read::TapeRef;

use super::parse::Parser;
use super::JsonError;
use super::{held, plain_words};
use serde_json::Value;
use std::collections::HashMap;

/// Texts parsed into a tape in this process (see [`tape_parses`]).
static PARSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many texts this process has parsed into a [`Tape`] so far (one relaxed increment per
/// parse: what the test that each stdout line is parsed once counts).
pub fn tape_parses() -> usize {
    PARSES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Where a string's decoded text is: in the source text, or (when it had escapes) in the tape.
#[derive(Debug, Clone, Copy)]
enum Str {
    Src(usize, usize),
    Dec(usize, usize),
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Null,
    Bool(bool),
    Num(f64),
    Str(Str),
    Arr {
        first: usize,
        len: usize,
    },
    Obj {
        first: usize,
        len: usize,
        index: usize,
    },
    Member {
        key: Str,
        value: usize,
    },
}

/// A node: a value or an object member; siblings are linked by `next`.
#[derive(Debug, Clone, Copy)]
struct Node {
    kind: Kind,
    next: usize,
    /// The value's text is `text[start..end]`.
    start: usize,
    end: usize,
}

const NONE: usize = usize::MAX;
/// Objects with more members than this get a hash index (linear search stays linear overall).
const INDEX_ABOVE: usize = 16;
/// Buffers grown past these by one huge line are released rather than kept for the next.
const KEEP_NODES: usize = 1 << 16;
const KEEP_DECODED: usize = 1 << 20;

/// An open container while parsing: its node and its last child (array) or member (object).
#[derive(Debug, Clone, Copy)]
struct Open {
    node: usize,
    last: usize,
    member: usize,
    /// A bit per key seen in the object ([`key_bit`]): a key whose bit is clear is new.
    keys: u64,
}

/// A parsed JSON text; reuse one for many texts (see [`Tape::parse`]).
#[derive(Debug, Default, Clone)]
pub struct Tape {
    nodes: Vec<Node>,
    decoded: String,
    /// Key → member node, for objects with many members.
    indexes: Vec<HashMap<String, usize>>,
    stack: Vec<Open>,
    root: usize,
    /// Whether the text parsed is, byte for byte, what `JSON.stringify` writes for its value
    /// (as far as parsing tells: no whitespace, no escape, no repeated key, every number a short
    /// integer), so that [`TapeRef::writes`] need not compare it. `false` says only "compare".
    plain: bool,
}

#[inline]
fn resolve<'a>(text: &'a str, decoded: &'a str, s: Str) -> &'a str {
    match s {
        Str::Src(a, b) => &text[a..b],
        Str::Dec(a, b) => &decoded[a..b],
    }
}

/// Whether two keys of one length are the same: up to 8 bytes as one word. `==` on slices is a
/// `bcmp` call, which libFuzzer builds intercept even in uninstrumented code (about 100
/// instructions a call); the rule checker's parse compares keys of a length (`type`, `time`,
/// `turn`, `text`) for every object member of every frame.
#[inline]
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() > 8 || b.len() != a.len() {
        return a == b;
    }
    let word = |s: &[u8]| s.iter().fold(0u64, |w, &c| w << 8 | u64::from(c));
    word(a) == word(b)
}

/// One of 64 bits for a key, from its length and three of its bytes (so that `type` and `time`
/// differ): objects are read by the thousand, and most keys are new in theirs.
#[inline]
fn key_bit(k: &str) -> u64 {
    let b = k.as_bytes();
    let at = |i: usize| b.get(i).map_or(0, |&c| usize::from(c));
    let n = b.len();
    1 << ((n ^ (at(0) * 3) ^ (at(n / 2) * 5) ^ (at(n.wrapping_sub(1)) * 7)) & 63)
}

/// A string's length in bytes, without looking it up.
#[inline]
fn str_len(s: Str) -> usize {
    match s {
        Str::Src(a, b) | Str::Dec(a, b) => b - a,
    }
}

/// A string at the scanner (its opening quote): borrowed from the text when it has no escapes
/// (nor a plane-16 character, which may need a tag), else decoded by the scanner into `decoded`
/// as held text ([`held`]).
#[inline]
fn string(p: &mut Parser<'_>, decoded: &mut String) -> Result<Str, JsonError> {
    let start = p.pos + 1;
    // Whole plain words first (one comparison per 8 bytes), then byte by byte.
    let mut i = plain_words(p.s, start);
    while let Some(&b) = p.s.get(i) {
        match b {
            b'"' => {
                p.pos = i + 1;
                return Ok(Str::Src(start, i));
            }
            b'\\' => break,
            0..=0x1f => {
                p.pos = i;
                return Err(p.err("control character in string"));
            }
            // A character of held text's reserved block may start here: decoded, to be tagged.
            b if held::may_be_reserved(b) => break,
            _ => i += 1,
        }
    }
    p.pos = i;
    let from = decoded.len();
    decoded.push_str(&p.text[start..i]);
    p.string_rest(decoded)?;
    Ok(Str::Dec(from, decoded.len()))
}

#[inline]
fn key(p: &mut Parser<'_>, decoded: &mut String) -> Result<Str, JsonError> {
    if p.peek() != Some(b'"') {
        return Err(p.err("expected a string key"));
    }
    let k = string(p, decoded)?;
    p.ws();
    if p.peek() != Some(b':') {
        return Err(p.err("expected ':' after object key"));
    }
    p.pos += 1;
    Ok(k)
}

impl Tape {
    /// Bytes the tape's buffers hold (for memory bounds on stored lines).
    #[inline]
    pub fn weight(&self) -> usize {
        use std::mem::size_of;
        self.nodes.capacity() * size_of::<Node>()
            + self.decoded.capacity()
            + self.stack.capacity() * size_of::<Open>()
            + self
                .indexes
                .iter()
                .map(|i| i.capacity() * (size_of::<String>() + size_of::<usize>() + 8))
                .sum::<usize>()
    }

    /// Releases what parsing needed and reading does not (the open-container stack, spare
    /// capacity): for a tape kept with its line rather than reused.
    #[inline]
    pub fn shrink(&mut self) {
        self.stack = Vec::new();
        self.nodes.shrink_to_fit();
        self.decoded.shrink_to_fit();
        self.indexes.shrink_to_fit();
    }

    /// Parses `text` into this tape (replacing what it held). The error is the one
    /// [`parse`](super::parse) gives for the same text.
    #[inline]
    pub fn parse(&mut self, text: &str) -> Result<(), JsonError> {
        PARSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.nodes.capacity() > KEEP_NODES
            || self.stack.capacity() > KEEP_NODES
            || self.decoded.capacity() > KEEP_DECODED
        {
            *self = Tape::default();
        }
        self.nodes.clear();
        self.decoded.clear();
        self.indexes.clear();
        self.stack.clear();
        self.root = NONE;
        self.plain = true;
        let mut p = Parser::new(text);
        'value: loop {
            p.ws();
            let start = p.pos;
            let kind = match p.peek() {
                Some(b'{') => {
                    p.pos += 1;
                    p.ws();
                    let node = self.push(
                        Kind::Obj {
                            first: NONE,
                            len: 0,
                            index: NONE,
                        },
                        start,
                    );
                    if p.peek() == Some(b'}') {
                        p.pos += 1;
                        self.nodes[node].end = p.pos;
                        self.close(node, &mut p)?;
                        if self.root != NONE {
                            return Ok(());
                        }
                        continue 'value;
                    }
                    let k = key(&mut p, &mut self.decoded)?;
                    let mut open = Open {
                        node,
                        last: NONE,
                        member: NONE,
                        keys: 0,
                    };
                    open.member = self.member(&mut open, text, k);
                    self.stack.push(open);
                    continue 'value;
                }
                Some(b'[') => {
                    p.pos += 1;
                    p.ws();
                    let node = self.push(
                        Kind::Arr {
                            first: NONE,
                            len: 0,
                        },
                        start,
                    );
                    if p.peek() == Some(b']') {
                        p.pos += 1;
                        self.nodes[node].end = p.pos;
                        self.close(node, &mut p)?;
                        if self.root != NONE {
                            return Ok(());
                        }
                        continue 'value;
                    }
                    self.stack.push(Open {
                        node,
                        last: NONE,
                        member: NONE,
                        keys: 0,
                    });
                    continue 'value;
                }
                Some(b'"') => Kind::Str(string(&mut p, &mut self.decoded)?),
                Some(b't') => p.literal("true", Value::Null).map(|_| Kind::Bool(true))?,
                Some(b'f') => p.literal("false", Value::Null).map(|_| Kind::Bool(false))?,
                Some(b'n') => p.literal("null", Value::Null).map(|_| Kind::Null)?,
                Some(b'-' | b'0'..=b'9') => {
                    // `+ 0.0`: `-0` reads as 0, as `parse`'s `Value` does.
                    let (f, int) = p.number_f64()?;
                    // A short integer (no fraction, exponent or `-0`) is written as read.
                    self.plain &= int.is_some();
                    if f.is_finite() {
                        Kind::Num(f + 0.0)
                    } else {
                        Kind::Null
                    }
                }
                Some(_) => return Err(p.err("expected a JSON value")),
                None => return Err(p.err("unexpected end of input, expected a JSON value")),
            };
            let node = self.push(kind, start);
            self.nodes[node].end = p.pos;
            self.close(node, &mut p)?;
            if self.root != NONE {
                return Ok(());
            }
        }
    }

    #[inline]
    fn push(&mut self, kind: Kind, start: usize) -> usize {
        self.nodes.push(Node {
            kind,
            next: NONE,
            start,
            end: start,
        });
        self.nodes.len() - 1
    }

    /// Attaches a finished value to its parent and closes the containers that end after it;
    /// stops at the next value to parse (or sets `root` at the end of the text).
    #[inline]
    fn close(&mut self, mut node: usize, p: &mut Parser<'_>) -> Result<(), JsonError> {
        loop {
            let Some(open) = self.stack.last_mut() else {
                p.ws();
                if p.pos != p.s.len() {
                    return Err(p.err("unexpected data after the JSON value"));
                }
                self.root = node;
                // Strings are decoded into the tape only when they had escapes.
                self.plain &= !p.spaced && self.decoded.is_empty();
                return Ok(());
            };
            let parent = open.node;
            match self.nodes[parent].kind {
                Kind::Arr { .. } => {
                    let last = std::mem::replace(&mut open.last, node);
                    if let Kind::Arr { first, len } = &mut self.nodes[parent].kind {
                        if last == NONE {
                            *first = node;
                        }
                        *len += 1;
                    }
                    if last != NONE {
                        self.nodes[last].next = node;
                    }
                    p.ws();
                    match p.peek() {
                        Some(b',') => {
                            p.pos += 1;
                            return Ok(());
                        }
                        Some(b']') => p.pos += 1,
                        _ => return Err(p.err("expected ',' or ']' in array")),
                    }
                }
                _ => {
                    let member = open.member;
                    if let Kind::Member { value, .. } = &mut self.nodes[member].kind {
                        *value = node;
                    }
                    p.ws();
                    match p.peek() {
                        Some(b',') => {
                            p.pos += 1;
                            p.ws();
                            let k = key(p, &mut self.decoded)?;
                            let mut open = *self.stack.last().expect("open object");
                            open.member = self.member(&mut open, p.text, k);
                            *self.stack.last_mut().expect("open object") = open;
                            return Ok(());
                        }
                        Some(b'}') => p.pos += 1,
                        _ => return Err(p.err("expected ',' or '}' in object")),
                    }
                }
            }
            self.stack.pop();
            self.nodes[parent].end = p.pos;
            node = parent;
        }
    }

    /// The member node for key `k` of the open object: the existing one when the key repeats
    /// (its value will be replaced: first position, last value), else a new one at the end.
    #[inline]
    fn member(&mut self, open: &mut Open, text: &str, k: Str) -> usize {
        let Kind::Obj { first, len, index } = self.nodes[open.node].kind else {
            unreachable!("members belong to objects")
        };
        let ks = resolve(text, &self.decoded, k);
        let bit = key_bit(ks);
        let seen = open.keys & bit != 0;
        open.keys |= bit;
        let found = if index != NONE {
            self.indexes[index].get(ks).copied()
        } else if !seen {
            // No earlier key has this one's bit: it is new, without comparing it with each.
            None
        } else {
            let mut m = first;
            loop {
                if m == NONE {
                    break None;
                }
                if let Kind::Member { key, .. } = self.nodes[m].kind {
                    if str_len(key) == ks.len() && same(resolve(text, &self.decoded, key), ks) {
                        break Some(m);
                    }
                }
                m = self.nodes[m].next;
            }
        };
        if let Some(m) = found {
            self.plain = false;
            return m;
        }
        let m = self.push(
            Kind::Member {
                key: k,
                value: NONE,
            },
            0,
        );
        if open.last == NONE {
            if let Kind::Obj { first, .. } = &mut self.nodes[open.node].kind {
                *first = m;
            }
        } else {
            self.nodes[open.last].next = m;
        }
        open.last = m;
        let len = len + 1;
        let mut index = index;
        if index != NONE {
            let ks = resolve(text, &self.decoded, k).to_owned();
            self.indexes[index].insert(ks, m);
        } else if len > INDEX_ABOVE {
            let mut map = HashMap::with_capacity(len * 2);
            let mut i = first;
            while i != NONE {
                if let Kind::Member { key, .. } = self.nodes[i].kind {
                    map.insert(resolve(text, &self.decoded, key).to_owned(), i);
                }
                i = self.nodes[i].next;
            }
            self.indexes.push(map);
            index = self.indexes.len() - 1;
        }
        if let Kind::Obj {
            len: l, index: x, ..
        } = &mut self.nodes[open.node].kind
        {
            *l = len;
            *x = index;
        }
        m
    }

    /// The parsed value; `text` must be the text last parsed.
    ///
    /// # Panics
    /// When the last [`Tape::parse`] failed or none was made.
    #[inline]
    pub fn root<'a>(&'a self, text: &'a str) -> TapeRef<'a> {
        assert!(self.root != NONE, "no parsed value on the tape");
        TapeRef::new(self, text, self.root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json::{parse, to_string, JsonView};
    use proptest::prelude::*;

    /// Every answer the tape gives equals the one `parse`'s `Value` gives, all the way down.
    fn same(a: &Value, b: TapeRef<'_>) {
        assert_eq!(a.kind(), b.kind());
        assert_eq!(JsonView::as_str(a), b.as_str());
        assert_eq!(
            JsonView::as_f64(a).map(f64::to_bits),
            b.as_f64().map(f64::to_bits)
        );
        assert_eq!(JsonView::as_bool(a), b.as_bool());
        assert_eq!(JsonView::len(a), b.len());
        assert!(b.get("\u{0}no such key").is_none());
        assert_eq!(JsonView::as_i64(a), b.as_i64());
        assert_eq!(JsonView::as_u64(a), b.as_u64());
        let mut written = Vec::new();
        b.write(&mut written);
        // `writes` says whether a text is what `write` writes, for that text and near misses.
        assert!(b.writes(&written));
        let own = b.text().as_bytes();
        assert_eq!(b.writes(own), written == own, "{}", b.text());
        assert!(!b.writes(&written[..written.len() - 1]));
        assert!(!b.writes(&[&written[..], b" "].concat()));
        let mut changed = written.clone();
        changed[written.len() / 2] ^= 1;
        assert!(!b.writes(&changed));
        assert!(!b.writes(b""));
        assert_eq!(String::from_utf8(written).unwrap(), to_string(a));
        match a {
            Value::Object(m) => {
                for (k, v) in m {
                    same(v, b.get(k).expect("member present on the tape"));
                }
                assert!(m.keys().map(String::as_str).eq(b.members().map(|(k, _)| k)));
                for ((_, v), (_, w)) in m.iter().zip(b.members()) {
                    same(v, w);
                }
            }
            Value::Array(x) => {
                assert_eq!(x.len(), b.elements().count());
                for (v, w) in x.iter().zip(b.elements()) {
                    same(v, w);
                }
            }
            _ => assert_eq!(&b.to_value(), a),
        }
        assert_eq!(to_string(&b.to_value()), to_string(a));
    }

    fn check(t: &mut Tape, text: &str) {
        match (parse(text), t.parse(text)) {
            (Ok(p), Ok(())) => same(&p.value, t.root(text)),
            (Err(a), Err(b)) => assert_eq!(a, b, "{text:?}"),
            (a, b) => panic!("{text:?}: parse {a:?}, tape {b:?}"),
        }
    }

    /// A tape is plain exactly where its text is compact, unescaped, without repeated keys and
    /// with short integers only; a plain text is then what the tape writes, unwritten.
    #[test]
    fn a_plain_tape_is_one_whose_text_is_its_writing() {
        let mut t = Tape::default();
        for (text, plain) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"a":[true,null,-5,"x"]}}"#,
                true,
            ),
            (r#"{"a":[],"b":{},"c":0}"#, true),
            (r#"{"a":1, "b":2}"#, false),
            (" 1", false),
            ("1\n", false),
            (r#"{"a":1,"b":2,"a":3}"#, false),
            (r#""\u0061""#, false),
            (r#"{"\n":1}"#, false),
            ("1.5", false),
            ("-0", false),
            ("1e400", false),
            ("1234567890123456", false),
        ] {
            t.parse(text).unwrap();
            assert_eq!(t.plain, plain, "{text}");
            let mut written = Vec::new();
            t.root(text).write(&mut written);
            assert!(!plain || written == text.as_bytes(), "{text}");
            assert_eq!(
                t.root(text).writes(text.as_bytes()),
                written == text.as_bytes()
            );
        }
    }

    #[test]
    fn the_tape_reads_what_parse_builds_and_fails_where_it_fails() {
        let mut t = Tape::default();
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"sessionId":"s","x":[1,2.5,-0,1e400,true,null]}}"#,
            r#"{"a":1,"b":2,"a":3}"#,
            r#"{"a":1,"\u0061":2}"#,
            r#"{"a":{"x":1},"a":[2]}"#,
            r#""a\u0001\b\f\n\r\t\"\\\/\u2028é""#,
            r#"{"k\u0065y":"v\ud800","key":"w","\ud83d\ude00":"\ud83d\u0041"}"#,
            r#"{"\ud800":1,"\ud801":2,"\ud800":3}"#,
            "{\"\u{10F800}\":1,\"\\ud800\":2,\"\u{10F800}\":3}",
            "\"a\u{10F7FF}\u{10FFFF}\u{100000}b\"",
            "9007199254740993",
            "12345678901234567890",
            "-12345678901234567890e3",
            "[[],{},[[{}]],\"\"]",
            " \t\r\n{}\n ",
            "{\"id\":1e400,\"method\":\"x\"}",
            "",
            "{",
            "}{",
            "nul",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "-",
            "\"a\tb\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"abc",
            "\"ab\\",
            "[1] x",
            "{\"a\" 1}",
            "{1:2}",
            "\u{a0}{}",
        ] {
            check(&mut t, text);
        }
        // Many members: found through the index, duplicates included.
        let mut big = String::from("{");
        for i in 0..100 {
            big.push_str(&format!("\"k{}\":{i},", i % 60));
        }
        big.push_str("\"last\":[]}");
        check(&mut t, &big);
        // Deep nesting parses without recursion.
        let n = 100_000;
        let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
        t.parse(&deep).unwrap();
        assert_eq!(t.root(&deep).len(), 1);
    }

    fn token() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\"a\"",
            "\"b\"",
            "\"a\":",
            "\"\\n\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\udbfe\\udc00\"",
            "\"\u{10F800}\"",
            "\"\u{10F7FF}x\"",
            "\"\\u00e9x\"",
            "\"é\"",
            "1",
            "-0",
            "1e400",
            "2.5",
            "-3e-2",
            "true",
            "false",
            "null",
            "\"",
            "\\",
            "x",
            "\t",
        ])
    }

    fn tree() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec![
            "1",
            "-0",
            "0.5",
            "1e400",
            "9007199254740993",
            "true",
            "null",
            "\"s\"",
            "\"\\\"q\"",
            "\"\\ud800x\"",
            "[]",
            "{}",
        ])
        .prop_map(str::to_owned);
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(
                    (prop::sample::select(vec!["a", "b", "c", "\\u0061"]), inner),
                    0..6
                )
                .prop_map(|v| {
                    let m: Vec<String> = v.iter().map(|(k, v)| format!("\"{k}\" : {v}")).collect();
                    format!("{{{}}}", m.join(","))
                }),
            ]
        })
    }

    /// Number literals of every form near the plain ones `JSON.stringify` writes.
    fn number() -> impl Strategy<Value = String> {
        (
            prop::sample::select(vec!["", "-"]),
            "(0|[1-9][0-9]{0,17}|0[0-9]{1,3})",
            prop::option::of("0{0,8}[0-9]{0,12}"),
            prop::option::of("[eE][+-]?[0-9]{1,3}"),
        )
            .prop_map(|(sign, int, frac, exp)| {
                let frac = frac.map(|f| format!(".{f}")).unwrap_or_default();
                format!("{sign}{int}{frac}{}", exp.unwrap_or_default())
            })
    }

    /// String literals of escapes of every kind, canonical or not, and raw characters.
    fn string_literal() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            prop::sample::select(vec![
                "a",
                "é",
                "\u{2028}",
                "\u{7f}",
                "\u{10F800}",
                "\u{10F7FF}",
                "\\\"",
                "\\\\",
                "\\/",
                "\\b",
                "\\f",
                "\\n",
                "\\r",
                "\\t",
                "\\u0008",
                "\\u000a",
                "\\u0041",
                "\\u00e9",
                "\\u001b",
                "\\u001B",
                "\\u0000",
                "\\ud800",
                "\\uD800",
                "\\udbff",
                "\\udc00",
                "\\uDC00",
                "\\udfff",
                "\\ud83d\\ude00",
                "\\ud83d\\uDE00",
            ])
            .prop_map(str::to_owned),
            (0u32..0x10000).prop_map(|u| format!("\\u{u:04x}")),
        ];
        prop::collection::vec(piece, 0..8).prop_map(|p| format!("\"{}\"", p.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        /// `writes` decides a string as writing it out would, also where it skips the writing.
        #[test]
        fn a_string_is_compared_as_it_is_written(s in string_literal()) {
            let mut t = Tape::default();
            check(&mut t, &s);
            check(&mut t, &format!("{{{s}:[{s}]}}"));
        }

        /// `writes` decides a literal as writing it out would, also where it skips the writing.
        #[test]
        fn a_number_is_compared_as_it_is_written(n in number()) {
            let mut t = Tape::default();
            check(&mut t, &n);
            check(&mut t, &format!("[{n},{{\"a\":{n}}}]"));
        }

        #[test]
        fn token_soup_parses_alike(tokens in prop::collection::vec(token(), 0..24)) {
            check(&mut Tape::default(), &tokens.concat());
        }

        #[test]
        fn nested_values_with_duplicate_keys_read_alike(text in tree()) {
            let mut t = Tape::default();
            check(&mut t, &text);
            // A reused tape reads the next text as a fresh one would.
            check(&mut t, &format!("[{text},{text}]"));
        }
    }
}
