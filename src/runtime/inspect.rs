//! Node's `util.inspect` of a string, as the release's error messages quote values with it
//! (`ERR_INVALID_ARG_VALUE`: "The argument 'path' must be … Received '\<inspected\>'").
//!
//! What Node 20 does, and so this module: the quote is `'`, or `"` when the text holds a `'` but
//! no `"`, or a backtick when it holds both but no backtick and no `${`; otherwise `'` with each `'`
//! escaped. Escaped: the chosen quote, `\`, C0 controls (`\b \t \n \f \r`, else `\xHH` in upper
//! case), U+007F–U+009F (`\xHH`) and lone surrogates (`\udXXX`, lower case). A text longer than
//! 124 UTF-16 units (`breakLength` 128 − 4) is cut after each `\n` into lines quoted on their
//! own, joined by ` +\n  `. `ERR_INVALID_ARG_VALUE` then keeps the first 128 UTF-16 units of that
//! and appends `...`.

use crate::wire::json::held;

/// `util.inspect(s)` at the top level; `s` and the result are held text
/// ([`crate::wire::json::held`]).
#[cfg(test)]
pub fn inspect_str(s: &str) -> String {
    held::from_utf16(&inspect16(&held::to_utf16(s)))
}

/// The message of Node's `ERR_INVALID_ARG_VALUE` for argument `name` holding `value` (held text).
pub fn invalid_arg_value(name: &str, reason: &str, value: &str) -> String {
    let mut inspected = inspect16(&held::to_utf16(value));
    if inspected.len() > 128 {
        // JavaScript's slice: by code unit, so a pair may be cut in two.
        inspected.truncate(128);
        inspected.extend("...".encode_utf16());
    }
    let mut out = format!("The argument '{name}' {reason}. Received ");
    out.push_str(&held::from_utf16(&inspected));
    out
}

/// `util.inspect` of the JavaScript string `s` (UTF-16 code units).
fn inspect16(s: &[u16]) -> Vec<u16> {
    const NL: u16 = b'\n' as u16;
    if s.len() > 124 && s.contains(&NL) {
        let mut out = Vec::with_capacity(s.len() + 16);
        for (i, line) in s.split_inclusive(|&u| u == NL).enumerate() {
            if i > 0 {
                out.extend(" +\n  ".encode_utf16());
            }
            quote(line, &mut out);
        }
        out
    } else {
        let mut out = Vec::with_capacity(s.len() + 2);
        quote(s, &mut out);
        out
    }
}

/// One line quoted and escaped as Node's `strEscape` does.
fn quote(s: &[u16], out: &mut Vec<u16>) {
    let has = |c: u8| s.contains(&(c as u16));
    let has_interpolation = s.windows(2).any(|w| w == [b'$' as u16, b'{' as u16]);
    let (open, escape_single) = if has(b'\'') {
        if !has(b'"') {
            (b'"', false)
        } else if !has(b'`') && !has_interpolation {
            (b'`', false)
        } else {
            (b'\'', true)
        }
    } else {
        (b'\'', false)
    };
    let ascii = |out: &mut Vec<u16>, t: &str| out.extend(t.encode_utf16());
    out.push(open as u16);
    let mut i = 0;
    while i < s.len() {
        let u = s[i];
        match u {
            0x27 if escape_single => ascii(out, "\\'"),
            0x5c => ascii(out, "\\\\"),
            0x08 => ascii(out, "\\b"),
            0x09 => ascii(out, "\\t"),
            0x0a => ascii(out, "\\n"),
            0x0c => ascii(out, "\\f"),
            0x0d => ascii(out, "\\r"),
            0..0x20 | 0x7f..0xa0 => ascii(out, &format!("\\x{u:02X}")),
            0xd800..0xdc00 if s.get(i + 1).is_some_and(|n| (0xdc00..0xe000).contains(n)) => {
                out.extend_from_slice(&s[i..i + 2]);
                i += 1;
            }
            0xd800..0xe000 => ascii(out, &format!("\\u{u:x}")),
            u => out.push(u),
        }
        i += 1;
    }
    out.push(open as u16);
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHY: &str = "must be a string, Uint8Array, or URL without null bytes";

    /// Recorded from the release (Node 20): path, then the message's `Received …` part.
    #[test]
    fn strings_are_quoted_escaped_split_and_cut_as_node_does() {
        let cases: &[(&str, &str)] = &[
            ("/tmp/c/a\0b", "'/tmp/c/a\\x00b'"),
            (
                "/x\0'y\"\\z\n\t\u{1b}\u{7f}\u{85}é中",
                "`/x\\x00'y\"\\\\z\\n\\t\\x1B\\x7F\\x85é中`",
            ),
            ("/x'y\0", "\"/x'y\\x00\""),
            ("/\u{1F600}", "'/\u{1F600}'"),
            ("/x'\"`\0", "'/x\\'\"`\\x00'"),
        ];
        for (path, received) in cases {
            assert_eq!(
                invalid_arg_value("path", WHY, path),
                format!("The argument 'path' {WHY}. Received {received}")
            );
        }
        let long = format!("/{}\0", "a".repeat(144));
        assert_eq!(
            invalid_arg_value("path", WHY, &long),
            format!(
                "The argument 'path' {WHY}. Received '/{}...",
                "a".repeat(126)
            )
        );
        // A lone surrogate (held text) is escaped in lower case.
        let mut lone = "/a".to_owned();
        held::push_lone(&mut lone, 0xd800);
        assert_eq!(inspect_str(&lone), "'/a\\ud800'");
        let lines = format!("/{}\n{}\0", "a".repeat(73), "a".repeat(83));
        assert_eq!(
            invalid_arg_value("path", WHY, &lines),
            format!(
                "The argument 'path' {WHY}. Received '/{}\\n' +\n  '{}...",
                "a".repeat(73),
                "a".repeat(44)
            )
        );
    }
}
