//! A `JSON.parse`/`JSON.stringify`-compatible JSON layer.
//!
//! The upstream runtime is JavaScript, so what a line *means* is whatever `JSON.parse` makes of it.
//! `serde_json` differs from it in ways a conformance kit must not: it caps nesting at 128 levels,
//! rejects lone surrogate escapes and rejects number literals that overflow a double (JS gives
//! `Infinity`). This parser follows `JSON.parse`: no depth limit (it is iterative), every number is a
//! double, a lone surrogate becomes U+FFFD (a Rust `String` cannot hold one; `JSON.stringify` would
//! echo the escape — the one documented difference), duplicate keys keep the first position and the
//! last value. It builds `serde_json::Value`s so the rest of the kit can use the usual API.
//!
//! The writer is `JSON.stringify`: compact, numbers formatted as JavaScript prints doubles
//! (`1e21` → `1e+21`, `-0` → `0`), only `"`, `\` and control characters escaped, iterative.
//!
//! Layout: `parse` (the parser, [`parse`]), `number` (doubles as JavaScript holds and prints
//! them), `write` (the writer, [`write_value`]); a parsed value is held as a [`Deep`], which is
//! dropped without recursion (`deep`).
//! `tape` parses into a [`Tape`] instead (same grammar, no `Value` built, for readers on a hot
//! path) and `view` reads either through [`JsonView`].

mod deep;
mod number;
mod parse;
mod tape;
mod view;
mod write;

pub use deep::Deep;
pub use number::{js_number, number_value};
pub use parse::{parse, JsonError, Parsed};
pub use tape::{Tape, TapeRef};
pub use view::{JsonKind, JsonView};
pub use write::{to_string, write_js_number, write_number, write_str, write_value};
pub(crate) use write::{write_int, write_str_body};

use deep::dispose;

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses and writes back: what `JSON.stringify(JSON.parse(s))` gives.
    pub(super) fn rt(s: &str) -> String {
        to_string(&parse(s).unwrap().value)
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
