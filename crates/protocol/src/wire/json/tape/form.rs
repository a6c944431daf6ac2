//! Whether a literal is, from its text alone, what `JSON.stringify` writes for the value it
//! parses to: for [`TapeRef::writes`](super::TapeRef::writes), which then need not write the
//! value out to compare (the rule checker compares every frame the runtime writes). `false`
//! says only "write the value and compare".

/// Whether a number literal is, from its text alone, what `JSON.stringify` writes for its value
/// (`false` says only "format the value and compare"): no exponent, no leading zero, a fraction
/// with no trailing zero, at most 15 significant digits, not `-0`, and at least `0.000001` when
/// it is below one. A decimal of at most 15 significant digits is the only one of so few digits
/// that rounds to its double, so it is that double's shortest round-trip form, which
/// `Number.prototype.toString` writes in plain notation from 1e-6 up to 1e21.
#[inline]
pub(super) fn number(literal: &[u8]) -> bool {
    let (negative, t) = match literal.strip_prefix(b"-") {
        Some(t) => (true, t),
        None => (false, literal),
    };
    let (int, frac) = match t.iter().position(|&b| b == b'.') {
        Some(dot) => (&t[..dot], Some(&t[dot + 1..])),
        None => (t, None),
    };
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    if !digits(int) || (int.len() > 1 && int[0] == b'0') {
        return false;
    }
    let significant = match (int, frac) {
        (b"0", None) => return !negative,
        (_, None) => int.len(),
        (_, Some(f)) if !digits(f) || f.last() == Some(&b'0') => return false,
        (b"0", Some(f)) => {
            let zeros = f.iter().take_while(|&&b| b == b'0').count();
            if zeros > 5 {
                return false;
            }
            f.len() - zeros
        }
        (_, Some(f)) => int.len() + f.len(),
    };
    significant <= 15
}

/// Whether the text between a string literal's quotes is, escape by escape, what `JSON.stringify`
/// writes for the string: the short escapes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`),
/// `\u00xx` (lowercase) for the other control characters, `\udxxx` (lowercase) for a lone
/// surrogate, and every other character as itself (a raw control character, quote or backslash
/// cannot be in a literal that parsed).
#[inline]
pub(super) fn string(inner: &[u8]) -> bool {
    let mut i = 0;
    while let Some(at) = inner[i..].iter().position(|&b| b == b'\\') {
        i += at + 1;
        match inner.get(i) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 1,
            Some(b'u') => {
                let Some(unit) = unit(&inner[i + 1..]) else {
                    return false;
                };
                i += 5;
                let canonical = match unit {
                    0x08 | 0x09 | 0x0a | 0x0c | 0x0d => false,
                    0..=0x1f => true,
                    // Lone: not the first half of a pair (`JSON.parse` joins a pair of escapes
                    // into one character, which `JSON.stringify` writes as itself). A second
                    // half reached here had no first half before it: that one returned.
                    0xd800..=0xdbff => !matches!(
                        inner.get(i..i + 6),
                        Some([b'\\', b'u', ..]) if (0xdc00..=0xdfff).contains(&unit_any_case(&inner[i + 2..]))
                    ),
                    0xdc00..=0xdfff => true,
                    _ => false,
                };
                if !canonical {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// The code unit of a `\u` escape's four hex digits, when they are lowercase (as written).
#[inline]
fn unit(hex: &[u8]) -> Option<u32> {
    let digits = hex.get(..4)?;
    if digits.iter().any(u8::is_ascii_uppercase) {
        return None;
    }
    Some(unit_any_case(digits))
}

/// The code unit of four hex digits of either case (`u32::MAX` when they are not four).
#[inline]
fn unit_any_case(hex: &[u8]) -> u32 {
    let Some(digits) = hex.get(..4) else {
        return u32::MAX;
    };
    digits
        .iter()
        .try_fold(0, |u, &d| Some(u << 4 | (d as char).to_digit(16)?))
        .unwrap_or(u32::MAX)
}
