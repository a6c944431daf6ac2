//! Lexing the pieces of a trace line: where a JSON value ends, and `>>raw "…"` strings with their
//! escapes (decoding, and [`escape_raw`] for writing them back).

/// Length of the JSON value at the start of `s` (strings and nesting respected), or where it
/// fails to end.
pub(super) fn json_extent(s: &str) -> Result<usize, (usize, String)> {
    let b = s.as_bytes();
    match b.first() {
        Some(b'{' | b'[') => {}
        Some(b'"') => {
            let mut i = 1;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => return Ok(i + 1),
                    _ => i += 1,
                }
            }
            return Err((s.len(), "unterminated string: expected `\"`".into()));
        }
        _ => return Ok(s.find(|c: char| c.is_whitespace()).unwrap_or(s.len())),
    }
    let mut stack: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            c @ (b'}' | b']') => {
                if stack.pop() != Some(c) {
                    return Err((i, format!("unexpected `{}`", c as char)));
                }
                if stack.is_empty() {
                    return Ok(i + 1);
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return Err((s.len(), "unterminated string: expected `\"`".into()));
                }
            }
            _ => {}
        }
        i += 1;
    }
    let want = stack.last().copied().unwrap_or(b'}') as char;
    Err((
        s.len(),
        format!("unterminated JSON: expected `{want}` before the end of the line"),
    ))
}

/// Decodes `"…"` with escapes `\n \r \t \0 \\ \" \xNN \uXXXX \u{…}`; returns bytes and length used.
pub(super) fn unescape(s: &str) -> Result<(Vec<u8>, usize), (usize, String)> {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') {
        return Err((0, "expected a quoted string after `>>raw`".into()));
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => return Ok((out, i + 1)),
            b'\\' => {
                let e = *b.get(i + 1).ok_or((i, "unfinished escape".to_string()))?;
                i += 2;
                match e {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'0' => out.push(0),
                    b'\\' => out.push(b'\\'),
                    b'"' => out.push(b'"'),
                    b'x' => {
                        let h = s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok());
                        out.push(h.ok_or((i, "expected two hex digits after \\x".to_string()))?);
                        i += 2;
                    }
                    b'u' => {
                        let (cp, used) = if b.get(i) == Some(&b'{') {
                            let close = s[i..]
                                .find('}')
                                .ok_or((i, "expected `}` closing \\u{…}".to_string()))?;
                            (
                                u32::from_str_radix(&s[i + 1..i + close], 16).ok(),
                                close + 1,
                            )
                        } else {
                            (
                                s.get(i..i + 4)
                                    .and_then(|h| u32::from_str_radix(h, 16).ok()),
                                4,
                            )
                        };
                        let c = cp
                            .and_then(char::from_u32)
                            .ok_or((i, "expected a Unicode scalar value after \\u".to_string()))?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        i += used;
                    }
                    _ => return Err((i - 1, format!("unknown escape `\\{}`", e as char))),
                }
            }
            _ => {
                let c = s[i..].chars().next().unwrap_or('\0');
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += c.len_utf8();
            }
        }
    }
    Err((s.len(), "unterminated string: expected `\"`".into()))
}

/// Escapes bytes for `>>raw "…"` (printable ASCII and UTF-8 kept, the rest escaped).
pub fn escape_raw(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}' || c == '\u{a0}' => {
                    out.push_str(&format!("\\u{{{:x}}}", c as u32))
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_escapes_round_trip() {
        let bytes = b"a\"\\\n\r\t\x00\xff\xef\xbb\xbf{}\xe2\x82\xac".to_vec();
        let esc = escape_raw(&bytes);
        assert_eq!(unescape(&esc).unwrap().0, bytes);
    }
}
