//! `{{repeat:N:text}}`: N copies of `text` (16 MiB in all at most), expanded before a trace is parsed, so a trace can send
//! a 10 MB line or a 1000-deep array without holding it. `text` may not contain `}}`.

use super::error::ParseError;
use std::borrow::Cow;

/// The most one trace may expand to.
pub const MAX_EXPANSION: usize = 16 << 20;

/// Expands every `{{repeat:N:text}}` in `src`; errors name file:line:column.
pub fn expand<'a>(src: &'a str, file: &str) -> Result<Cow<'a, str>, ParseError> {
    if !src.contains("{{repeat:") {
        return Ok(Cow::Borrowed(src));
    }
    let mut out = String::with_capacity(src.len());
    let mut total = 0usize;
    for (i, line) in src.split_inclusive('\n').enumerate() {
        let err = |at: usize, msg: String| ParseError {
            file: file.to_owned(),
            line: i + 1,
            col: line[..at].chars().count() + 1,
            msg,
        };
        let mut rest = line;
        let mut base = 0;
        while let Some(k) = rest.find("{{repeat:") {
            out.push_str(&rest[..k]);
            let body = &rest[k + 9..];
            let at = base + k;
            let end = body
                .find("}}")
                .ok_or_else(|| err(at, "unclosed `{{repeat:`".into()))?;
            let (n, text) = body[..end]
                .split_once(':')
                .ok_or_else(|| err(at, "expected `{{repeat:N:text}}`".into()))?;
            let n: usize = n
                .parse()
                .map_err(|_| err(at, format!("expected a repeat count, found `{n}`")))?;
            total = total.saturating_add(n.saturating_mul(text.len()));
            if total > MAX_EXPANSION {
                return Err(err(
                    at,
                    format!("repeats may expand to {MAX_EXPANSION} bytes at most"),
                ));
            }
            out.push_str(&text.repeat(n));
            base = at + 9 + end + 2;
            rest = &body[end + 2..];
        }
        out.push_str(rest);
    }
    Ok(Cow::Owned(out))
}

/// Maps a 1-based column of line `line` of the expanded text back to the same line of `src`: a
/// column inside an expansion points at its `{{repeat:`, one after it is shifted by what the
/// expansions before it added (parse errors must name a place in the file as written).
pub fn source_col(src: &str, line: usize, col: usize) -> usize {
    let Some(l) = src.split_inclusive('\n').nth(line.wrapping_sub(1)) else {
        return col;
    };
    let target = col.saturating_sub(1);
    let (mut exp, mut from) = (0usize, 0usize);
    let mut rest = l;
    while let Some(k) = rest.find("{{repeat:") {
        let before = rest[..k].chars().count();
        if target < exp + before {
            break;
        }
        exp += before;
        from += before;
        let body = &rest[k + 9..];
        let Some(end) = body.find("}}") else { break };
        let Some((n, text)) = body[..end].split_once(':') else {
            break;
        };
        let Ok(n) = n.parse::<usize>() else { break };
        let grown = text.chars().count().saturating_mul(n);
        if target < exp.saturating_add(grown) {
            return from + 1;
        }
        exp += grown;
        from += 9 + body[..end].chars().count() + 2;
        rest = &body[end + 2..];
    }
    from + target.saturating_sub(exp) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_expand_in_place_and_errors_point_at_them() {
        assert_eq!(
            expand("a{{repeat:3:[}}b{{repeat:2:xy}}\nc", "t").unwrap(),
            "a[[[bxyxy\nc"
        );
        assert_eq!(expand("plain", "t").unwrap(), "plain");
        let e = expand("ok\n  {{repeat:x:y}}", "t.trace").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
        assert!(expand("{{repeat:99999999999:xx}}", "t")
            .unwrap_err()
            .msg
            .contains("at most"));
        assert!(expand("{{repeat:3:x", "t")
            .unwrap_err()
            .msg
            .contains("unclosed"));
    }

    #[test]
    fn columns_of_the_expanded_text_map_back_to_the_source() {
        let src = "x\nab{{repeat:4:é}}cd{{repeat:2:z}}e";
        // Expanded line 2: "abééééczzde" (chars 1-based: a1 b2 é3-6 c7 d8 z9-10 e11).
        assert_eq!(source_col(src, 2, 2), 2);
        assert_eq!(source_col(src, 2, 5), 3);
        // Source line 2: a1 b2 {{repeat:4:é}}3-16 c17 d18 {{repeat:2:z}}19-32 e33.
        assert_eq!(source_col(src, 2, 7), 17);
        assert_eq!(source_col(src, 2, 10), 19);
        assert_eq!(source_col(src, 2, 11), 33);
        assert_eq!(source_col(src, 2, 12), 34);
        assert_eq!(source_col(src, 1, 2), 2);
    }
}
