//! Node's `util.inspect` of a string, as the release's error messages quote values with it
//! (`ERR_INVALID_ARG_VALUE`: "The argument 'path' must be … Received '<inspected>'").
//!
//! What Node 20 does, and so this module: the quote is `'`, or `"` when the text holds a `'` but
//! no `"`, or a backtick when it holds both but no backtick and no `${`; otherwise `'` with each `'`
//! escaped. Escaped: the chosen quote, `\`, C0 controls (`\b \t \n \f \r`, else `\xHH` in upper
//! case), U+007F–U+009F (`\xHH`) and lone surrogates (`\udXXX`, lower case). A text longer than
//! 124 UTF-16 units (`breakLength` 128 − 4) is cut after each `\n` into lines quoted on their
//! own, joined by ` +\n  `. `ERR_INVALID_ARG_VALUE` then keeps the first 128 UTF-16 units of that
//! and appends `...`.

/// `util.inspect(s)` at the top level.
pub fn inspect_str(s: &str) -> String {
    if utf16_len(s) > 124 && s.contains('\n') {
        let mut parts = Vec::new();
        let mut rest = s;
        while let Some(i) = rest.find('\n') {
            parts.push(quote(&rest[..=i]));
            rest = &rest[i + 1..];
        }
        if !rest.is_empty() {
            parts.push(quote(rest));
        }
        parts.join(" +\n  ")
    } else {
        quote(s)
    }
}

/// The message of Node's `ERR_INVALID_ARG_VALUE` for argument `name` holding `value`.
pub fn invalid_arg_value(name: &str, reason: &str, value: &str) -> String {
    let mut inspected = inspect_str(value);
    if utf16_len(&inspected) > 128 {
        inspected = utf16_prefix(&inspected, 128);
        inspected.push_str("...");
    }
    format!("The argument '{name}' {reason}. Received {inspected}")
}

/// One line quoted and escaped as `strEscape` does.
fn quote(s: &str) -> String {
    let (open, escape_single) = if s.contains('\'') {
        if !s.contains('"') {
            ('"', false)
        } else if !s.contains('`') && !s.contains("${") {
            ('`', false)
        } else {
            ('\'', true)
        }
    } else {
        ('\'', false)
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(open);
    for c in s.chars() {
        match c {
            '\'' if escape_single => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(open);
    out
}

/// Length in UTF-16 code units (JavaScript's `length`).
fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The first `n` UTF-16 units of `s` (a character that would be cut in half is left out).
fn utf16_prefix(s: &str, n: usize) -> String {
    let mut units = 0;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        if units + c.len_utf16() > n {
            break;
        }
        units += c.len_utf16();
        end = i + c.len_utf8();
    }
    s[..end].to_owned()
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
