//! A `JSON.parse`/`JSON.stringify`-compatible JSON layer.
//!
//! The upstream runtime is JavaScript, so what a line *means* is whatever `JSON.parse` makes of it.
//! `serde_json` differs from it in ways a conformance kit must not: it caps nesting at 128 levels,
//! rejects lone surrogate escapes and rejects number literals that overflow a double (JS gives
//! `Infinity`). This parser follows `JSON.parse`: no depth limit (it is iterative), every number is a
//! double, duplicate keys keep the first position and the last value. It builds
//! `serde_json::Value`s so the rest of the kit can use the usual API.
//!
//! Every string it builds (values and keys) is *held text* ([`held`]): a Rust `String` cannot hold
//! a lone surrogate, so each one is kept as a character of a reserved block at the end of plane 16
//! (and a genuine character of that block is tagged), injectively: `"\ud800"` and `"\ud801"` stay
//! distinct, as keys too.
//!
//! The writer is `JSON.stringify`: compact, numbers formatted as JavaScript prints doubles
//! (`1e21` → `1e+21`, `-0` → `0`), only `"`, `\` and control characters escaped, a held lone
//! surrogate written as its lowercase `\udXXX` escape (ES2019 well-formed stringify), iterative.
//! So `to_string(parse(s))` is `JSON.stringify(JSON.parse(s))` for every text `JSON.parse` takes.
//!
//! Layout: `parse` (the parser, [`parse`]), `held` (the held-text encoding, the one place that
//! knows it), `number` (doubles as JavaScript holds and prints them), `write` (the writer,
//! [`write_value`]); a parsed value is held as a [`Deep`], which is dropped without recursion
//! (`deep`).
//! `tape` parses into a [`Tape`] instead (same grammar, no `Value` built, for readers on a hot
//! path) and `view` reads either through [`JsonView`].

mod deep;
pub mod held;
mod number;
mod parse;
mod tape;
mod view;
mod write;

pub use deep::Deep;
pub use number::{js_number, number_value};
pub use parse::{parse, parse_inline, JsonError, Parsed};
pub use tape::{tape_parses, Tape, TapeRef};
pub use view::{JsonKind, JsonView};
pub(crate) use write::{plain_words, write_int, write_str_body};
pub use write::{to_string, write_js_number, write_number, write_str, write_value};
#[doc(hidden)]
pub use write::{to_string_inline, write_value_inline};

use deep::dispose;

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses and writes back: what `JSON.stringify(JSON.parse(s))` gives.
    pub(super) fn rt(s: &str) -> String {
        to_string(&parse(s).unwrap().value)
    }

    #[test]
    fn lone_surrogates_round_trip_as_json_stringify_writes_them() {
        for (text, written) in [
            (r#""\ud800""#, r#""\ud800""#),
            (r#""\uDC00x""#, r#""\udc00x""#),
            (r#""a\udfffb""#, r#""a\udfffb""#),
            (r#""\udbff\ud800z""#, r#""\udbff\ud800z""#),
            (r#""\ud83d\ude00""#, "\"😀\""),
            (r#""\ud83d\ud83d\ude00\ude00""#, "\"\\ud83d😀\\ude00\""),
            // Genuine characters of the reserved block, raw or escaped, are written raw.
            (
                "\"\u{10F7FF}\u{10F800}\u{10FFFF}\"",
                "\"\u{10F7FF}\u{10F800}\u{10FFFF}\"",
            ),
            (r#""\udbfd\udfff\udbff\udfff""#, "\"\u{10F7FF}\u{10FFFF}\""),
            // Mixed: a genuine U+10F800 beside the lone surrogate it is not.
            ("\"\u{10F800}\\ud800\"", "\"\u{10F800}\\ud800\""),
            (r#"{"\ud800":"\ud801"}"#, r#"{"\ud800":"\ud801"}"#),
        ] {
            assert_eq!(rt(text), written, "{text}");
            assert_eq!(rt(written), written, "a fixed point: {written}");
        }
    }

    #[test]
    fn deep_nesting_parses_writes_and_drops_without_recursion() {
        let n = 200_000;
        let text = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let p = parse(&text).unwrap();
        assert_eq!(p.depth, n);
        let mut out = Vec::new();
        write_value(&p.value, &mut out);
        assert_eq!(out.len(), 2 * n);
        drop(Deep::new(p.value));
        // A deep but malformed text is torn down too.
        assert!(parse(&"[{\"a\":".repeat(n)).is_err());
    }
}
