//! The writer: `JSON.stringify`, compact and iterative.

use super::held;
use super::number::push_js_number;
use serde_json::{Number, Value};

/// Appends `JSON.stringify(v)` to `out`. Iterative: depth is bounded only by memory.
pub fn write_value(v: &Value, out: &mut Vec<u8>) {
    write_value_inline(v, out);
}

/// [`write_value`], compiled into the crate that calls it (see the wire layer's note on
/// `#[inline]`): for the rule checker.
#[doc(hidden)]
#[inline]
pub fn write_value_inline(v: &Value, out: &mut Vec<u8>) {
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
    to_string_inline(v)
}

/// [`to_string`], compiled into the crate that calls it (as [`write_value_inline`]).
#[doc(hidden)]
#[inline]
pub fn to_string_inline(v: &Value) -> String {
    let mut out = Vec::new();
    write_value_inline(v, &mut out);
    String::from_utf8(out).expect("writer emits UTF-8")
}

/// Appends a number as JavaScript prints it.
#[inline]
pub fn write_number(n: &Number, out: &mut Vec<u8>) {
    if let Some(i) = n.as_i64() {
        write_int(i, out);
    } else if let Some(u) = n.as_u64() {
        write_uint(u, out);
    } else {
        let mut s = String::new();
        push_js_number(n.as_f64().unwrap_or(f64::NAN), &mut s);
        out.extend_from_slice(s.as_bytes());
    }
}

/// Appends `Number.prototype.toString()` of a double, as `JSON.stringify` writes it (`null`
/// when not finite): [`js_number`](super::js_number) without the `String`.
#[inline]
pub fn write_js_number(f: f64, out: &mut Vec<u8>) {
    // Integers up to 2^53 print as their digits (`-0` as `0`; NaN and ±Infinity fail `i == f`).
    let i = f as i64;
    if i as f64 == f && i.unsigned_abs() <= 1 << 53 {
        write_int(i, out);
    } else {
        let mut s = String::new();
        push_js_number(f, &mut s);
        out.extend_from_slice(s.as_bytes());
    }
}

/// Appends an integer's decimal digits (no `core::fmt`: ids and codes are written per frame).
#[inline]
pub(crate) fn write_int(i: i64, out: &mut Vec<u8>) {
    if i < 0 {
        out.push(b'-');
    }
    write_uint(i.unsigned_abs(), out);
}

/// Appends an unsigned integer's decimal digits.
#[inline]
fn write_uint(mut n: u64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[at..]);
}

/// Whether any of the 8 bytes of `w` must be looked at: `"`, `\\`, a control character, or the
/// lead byte `0xF4` that held text's reserved characters start with ([`held`]).
#[inline]
fn word_needs_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    // A byte below 0x20 (bytes ≥ 0x80 are excluded by `!w`), a quote or a backslash.
    let below = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    below
        | zero_in(w ^ (ONES * b'"' as u64))
        | zero_in(w ^ (ONES * b'\\' as u64))
        | zero_in(w ^ (ONES * 0xF4))
        != 0
}

/// The first index from `i` on, in steps of 8 bytes, whose word may hold a byte that string
/// scanners stop at (the bytes of [`word_needs_escape`]); `b.len()` rounded down past the last
/// whole word otherwise. Every byte in `i..` the result is plain: the writer copies it, the
/// parsers take it as itself. One comparison per 8 bytes instead of four per byte.
#[inline]
pub(crate) fn plain_words(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = b.get(i..i + 8) {
        if word_needs_escape(u64::from_le_bytes(w.try_into().expect("8 bytes"))) {
            break;
        }
        i += 8;
    }
    i
}

/// Appends a JSON string literal escaped as `JSON.stringify` does.
#[inline]
pub fn write_str(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    write_str_body(s, out);
    out.push(b'"');
}

/// Appends `s` escaped as inside a JSON string literal, without the quotes (a literal can be
/// written in parts: `"` + body(a) + body(b) + `"` is the literal of `a + b`).
///
/// `s` is held text ([`held`]): a lone surrogate is written as its lowercase `\udXXX` escape and
/// a tagged character as itself, as ES2019's `JSON.stringify` writes the JavaScript string.
#[inline]
pub(crate) fn write_str_body(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    // Fast path: skip whole words that need no escape (most strings have none at all).
    let mut i = plain_words(b, 0);
    let mut run = 0;
    while i < b.len() {
        let c = b[i];
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ if held::may_be_reserved(c)
                && s[i..].chars().next().is_some_and(held::is_reserved) =>
            {
                out.extend_from_slice(&b[run..i]);
                let mut p = held::pieces(&s[i..]);
                match p.next().expect("a reserved character") {
                    held::Piece::Lone(u) => {
                        let u = u as usize;
                        out.extend_from_slice(&[
                            b'\\',
                            b'u',
                            HEX[u >> 12],
                            HEX[(u >> 8) & 15],
                            HEX[(u >> 4) & 15],
                            HEX[u & 15],
                        ]);
                    }
                    held::Piece::Pair(ch) => {
                        out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    // A tagged character (without its tag), or a lone tag.
                    held::Piece::Text(t) => out.extend_from_slice(t.as_bytes()),
                }
                i = s.len() - p.as_str().len();
                run = i;
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
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
        i += 1;
        run = i;
    }
    out.extend_from_slice(&b[run..]);
}
#[cfg(test)]
mod tests {
    use super::super::tests::rt;
    use super::*;
    use proptest::prelude::*;

    /// The byte-at-a-time escaping `write_str` did before its word-at-a-time scan, on the
    /// characters held text stands for (a lone surrogate as its escape).
    fn escaped(s: &str) -> String {
        let mut r = String::from("\"");
        for p in held::pieces(s) {
            match p {
                held::Piece::Text(t) => t.chars().for_each(|c| escape_char(c, &mut r)),
                held::Piece::Pair(c) => r.push(c),
                held::Piece::Lone(u) => r.push_str(&format!("\\u{u:04x}")),
            }
        }
        r.push('"');
        r
    }

    fn escape_char(c: char, r: &mut String) {
        match c {
            '"' => r.push_str("\\\""),
            '\\' => r.push_str("\\\\"),
            '\n' => r.push_str("\\n"),
            '\r' => r.push_str("\\r"),
            '\t' => r.push_str("\\t"),
            '\u{8}' => r.push_str("\\b"),
            '\u{c}' => r.push_str("\\f"),
            c if (c as u32) < 0x20 => r.push_str(&format!("\\u{:04x}", c as u32)),
            c => r.push(c),
        }
    }

    fn js(f: f64) -> String {
        let mut out = Vec::new();
        write_js_number(f, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn numbers_written_without_fmt_match_js_number() {
        for f in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            7.5,
            9_007_199_254_740_992.0,
            -9_007_199_254_740_992.0,
            9_007_199_254_740_994.0,
            1e21,
            1e-7,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            i64::MAX as f64,
        ] {
            assert_eq!(js(f), crate::wire::json::js_number(f), "{f}");
        }
        let mut out = Vec::new();
        write_int(i64::MIN, &mut out);
        write_uint(u64::MAX, &mut out);
        assert_eq!(out, b"-922337203685477580818446744073709551615");
    }

    #[test]
    fn plain_words_stop_at_the_word_of_every_byte_a_scanner_stops_at() {
        let stops = |b: u8| b == b'"' || b == b'\\' || b < 0x20 || held::may_be_reserved(b);
        for stop in 0..=255u8 {
            for at in 0..20 {
                let mut b = vec![b'a'; 20];
                b[at] = stop;
                let end = plain_words(&b, 0);
                // Everything skipped is plain; what is left starts in the stop byte's word (or
                // in the last, partial word).
                assert!(b[..end].iter().all(|c| !stops(*c)), "{stop:#x} at {at}");
                let want = if stops(stop) { at / 8 * 8 } else { 16 };
                assert_eq!(end, want, "{stop:#x} at {at}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn write_str_escapes_as_the_byte_loop_did(
            s in any::<String>(),
            t in "[ -~\\x00-\\x1f\\x7f-\\u{7ff}]{0,40}",
            u in "[a\"\\\\\\x01\u{fffd}\u{10f7fe}-\u{10ffff}]{0,40}",
        ) {
            for s in [s, t, u] {
                let mut out = Vec::new();
                write_str(&s, &mut out);
                prop_assert_eq!(String::from_utf8(out).unwrap(), escaped(&s));
            }
        }

        #[test]
        fn write_js_number_is_js_number(f in any::<f64>(), i in any::<i64>()) {
            prop_assert_eq!(js(f), crate::wire::json::js_number(f));
            prop_assert_eq!(js(i as f64), crate::wire::json::js_number(i as f64));
        }
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        assert_eq!(
            rt(r#""a\u0001\b\f\n\r\t\"\\\/\u2028é""#),
            "\"a\\u0001\\b\\f\\n\\r\\t\\\"\\\\/\u{2028}é\""
        );
    }
}
