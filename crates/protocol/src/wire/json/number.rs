//! Numbers: every JSON number is a JavaScript double, held and printed as JavaScript does.

use serde_json::{Number, Value};

/// The `serde_json::Value` for a JavaScript double: integers as JavaScript prints them (so that
/// `9007199254740993` holds `9007199254740992` and `12345678901234567890` holds
/// `12345678901234567000`), other finite values as floats, non-finite values as `null` (which is
/// what `JSON.stringify` writes for them).
#[inline]
pub fn number_value(f: f64) -> Value {
    if !f.is_finite() {
        return Value::Null;
    }
    if f == f.trunc() {
        if f.abs() <= 9_007_199_254_740_992.0 {
            return Value::Number((f as i64).into());
        }
        if f.abs() < 1e21 {
            let s = js_number(f);
            if let Ok(i) = s.parse::<i64>() {
                return Value::Number(i.into());
            }
            if let Ok(u) = s.parse::<u64>() {
                return Value::Number(u.into());
            }
        }
    }
    Number::from_f64(f)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// `Number.prototype.toString()` for a double, as `JSON.stringify` writes it (`null` when not finite).
#[inline]
pub fn js_number(f: f64) -> String {
    let mut s = String::new();
    push_js_number(f, &mut s);
    s
}

/// Appends `Number.prototype.toString()` of `f` to `out` (`null` when not finite).
#[inline]
pub(super) fn push_js_number(f: f64, out: &mut String) {
    use std::fmt::Write;
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    if f == 0.0 {
        out.push('0');
        return;
    }
    if f == f.trunc() && f.abs() <= 9_007_199_254_740_992.0 {
        let _ = write!(out, "{}", f as i64);
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as ECMAScript requires.
    let sci = format!("{:e}", f.abs());
    let (mant, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let e: i32 = exp.parse().expect("exponent is an integer");
    let k = digits.len() as i32;
    let n = e + 1;
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{}", if n > 0 { '+' } else { '-' }, (n - 1).abs());
    }
}
#[cfg(test)]
mod tests {
    use super::super::tests::rt;

    #[test]
    fn numbers_are_printed_as_javascript_prints_doubles() {
        assert_eq!(rt("1e3"), "1000");
        assert_eq!(rt("1.0"), "1");
        assert_eq!(rt("-0"), "0");
        assert_eq!(rt("1.5"), "1.5");
        assert_eq!(rt("9007199254740993"), "9007199254740992");
        assert_eq!(rt("12345678901234567890"), "12345678901234567000");
        assert_eq!(
            rt("123456789012345678901234567890"),
            "1.2345678901234568e+29"
        );
        assert_eq!(rt("1e21"), "1e+21");
        assert_eq!(rt("1e-7"), "1e-7");
        assert_eq!(rt("0.000001"), "0.000001");
        assert_eq!(rt("1e400"), "null");
        assert_eq!(rt("-1e400"), "null");
        assert_eq!(rt("[1e20]"), "[100000000000000000000]");
    }
}
