//! An independent model of docs/CONTRACT.md#s2.1 and #s2.2, used only as a test oracle for the
//! wire layer.
//!
//! Written from the contract's JavaScript (`drainLines`, `JSON.parse`, `handleLine`, `objectParams`,
//! `JSON.stringify`) and ECMA-262, deliberately *without* calling into `dsh_conformance::wire`: where the two
//! disagree, one of them is wrong. It favours obviousness over speed: a recursive-descent parser
//! into JavaScript-shaped values (UTF-16 strings, every number a double, objects as ordered member
//! lists), the classification `if` chain verbatim, and `Number::toString` from the spec's steps.
//!
//! Recursion is capped at [`MAX_DEPTH`]; deeper containers are validated by an iterative scanner and
//! kept only as their kind ([`J::Deep`]), so a hostile input cannot overflow the oracle's stack.
//!
//! A crate of its own (re-exported as `dsh_conformance_fuzzing::oracle`) so that the fuzz builds
//! can compile it without coverage instrumentation (`fuzz/rustc-wrapper`): libFuzzer's feedback
//! then comes from the code under test, and the model's byte loops carry no comparison hooks.

/// Nesting depth the recursive parser handles itself.
pub const MAX_DEPTH: usize = 96;

/// A JavaScript value as `JSON.parse` builds it.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A double; a literal too large for a double is `Infinity`.
    Num(f64),
    /// A UTF-16 string; may hold lone surrogates, as JavaScript strings can.
    Str(Vec<u16>),
    /// An array.
    Arr(Vec<J>),
    /// An object: members in first-insertion order, duplicates already merged (last value wins).
    Obj(Vec<(Vec<u16>, J)>),
    /// A container nested deeper than [`MAX_DEPTH`]: valid, but only its kind is known.
    Deep(JKind),
}

/// `typeof`-like kinds, with `null` and arrays told apart (and "absent" for `undefined`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JKind {
    /// `undefined`: the member is not there.
    Absent,
    /// `null`.
    Null,
    /// A boolean.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl J {
    /// The kind of this value.
    pub fn kind(&self) -> JKind {
        match self {
            J::Null => JKind::Null,
            J::Bool(_) => JKind::Bool,
            J::Num(_) => JKind::Number,
            J::Str(_) => JKind::String,
            J::Arr(_) => JKind::Array,
            J::Obj(_) => JKind::Object,
            J::Deep(k) => *k,
        }
    }

    /// Property lookup on an object (`undefined` → `None`); arrays and scalars have no such members.
    pub fn get(&self, key: &str) -> Option<&J> {
        let J::Obj(members) = self else { return None };
        members
            .iter()
            .find(|(k, _)| k.iter().copied().eq(key.encode_utf16()))
            .map(|(_, v)| v)
    }

    /// Whether a [`J::Deep`] is anywhere inside (then the exact text cannot be modelled).
    pub fn has_deep(&self) -> bool {
        match self {
            J::Deep(_) => true,
            J::Arr(a) => a.iter().any(J::has_deep),
            J::Obj(m) => m.iter().any(|(_, v)| v.has_deep()),
            _ => false,
        }
    }
}

mod lines;
mod parse;
mod stringify;

pub use lines::*;
pub use parse::*;
pub use stringify::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn the_oracle_parses_what_json_parse_accepts_and_nothing_else() {
        assert_eq!(json_parse(" [1, \"a\" ,{}] "), {
            Some(J::Arr(vec![J::Num(1.0), J::Str(u("a")), J::Obj(vec![])]))
        });
        assert_eq!(json_parse("1e400"), Some(J::Num(f64::INFINITY)));
        assert_eq!(json_parse(r#""\ud800""#), Some(J::Str(vec![0xd800])));
        for bad in [
            "",
            "01",
            "1.",
            "[1,]",
            "{\"a\":1,}",
            "\u{a0}1",
            "\"\t\"",
            "[1 2]",
        ] {
            assert_eq!(json_parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_oracle_keeps_deep_containers_as_their_kind() {
        let valid = |t: &str| json_parse(t).is_some_and(|j| j.has_deep());
        assert!(valid(&format!("{}{}", "[".repeat(1000), "]".repeat(1000))));
        assert!(valid(&format!(
            "{}1{}",
            "{\"a\":".repeat(500),
            "}".repeat(500)
        )));
        assert!(valid(&format!(
            "{}{{\"k\":[1,{{}},[]],\"z\":null}}{}",
            "[".repeat(200),
            "]".repeat(200)
        )));
        for bad in [
            format!("{}1,{}", "{\"a\":".repeat(500), "}".repeat(500)),
            format!("{}]", "[".repeat(200)),
            format!("{}}}{}", "[".repeat(200), "]".repeat(199)),
            format!("{}{{\"a\"}}{}", "[".repeat(200), "]".repeat(200)),
            format!("{}1 2{}", "[".repeat(200), "]".repeat(200)),
            format!("{}[,]{}", "[".repeat(200), "]".repeat(200)),
        ] {
            assert_eq!(json_parse(&bad), None);
        }
        assert!(json_parse(&"[".repeat(100_000)).is_none());
    }

    #[test]
    fn the_oracle_classifies_like_handle_line() {
        assert!(matches!(
            handle_line(r#"{"id":0,"method":""}"#),
            Model::Request { .. }
        ));
        assert!(matches!(
            handle_line(r#"{"id":1e400,"method":"m"}"#),
            Model::Request { id: MId::Num(f), .. } if f.is_infinite()
        ));
        assert!(matches!(
            handle_line(r#"{"id":1,"method":5}"#),
            Model::Response { .. }
        ));
        assert!(matches!(
            handle_line(r#"{"id":null,"method":"m"}"#),
            Model::Notification { .. }
        ));
        assert_eq!(handle_line("[]"), Model::Batch(0));
        assert_eq!(handle_line("null"), Model::NotAnObject(J::Null));
    }

    #[test]
    fn number_to_string_follows_the_spec_cases() {
        for (x, s) in [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5, "1.5"),
            (-0.0, "0"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (123e-20, "1.23e-18"),
            (f64::INFINITY, "null"),
        ] {
            assert_eq!(number_to_string(x), s);
        }
    }

    #[test]
    fn line_model_drops_the_tail_and_trims_js_whitespace() {
        let (lines, tail) = split_lines(b"\xef\xbb\xbf{}\r\n \n\xff\nab", 100);
        assert_eq!(
            lines,
            vec![
                LineModel::Line("{}".into()),
                LineModel::Line("\u{fffd}".into())
            ]
        );
        assert_eq!(tail, Some((2, false)));
    }
}
