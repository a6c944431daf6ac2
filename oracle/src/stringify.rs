//! The oracle's `JSON.stringify` and `Number::toString`, from the spec's steps.

use super::J;

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
