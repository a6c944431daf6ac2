//! The writer: `JSON.stringify`, compact and iterative.

use super::number::push_js_number;
use serde_json::{Number, Value};

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
    use super::super::tests::rt;

    #[test]
    fn strings_escape_like_json_stringify() {
        assert_eq!(
            rt(r#""a\u0001\b\f\n\r\t\"\\\/\u2028é""#),
            "\"a\\u0001\\b\\f\\n\\r\\t\\\"\\\\/\u{2028}é\""
        );
    }
}
