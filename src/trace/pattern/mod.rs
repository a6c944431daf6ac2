//! Frame patterns: JSON with `{{…}}` placeholders, compiled once and matched against parsed frames
//! without re-serialising them.
//!
//! A pattern is written as JSON. A string that is exactly `"{{…}}"` is a placeholder; a string that
//! contains `{{…}}` among other text is a template. Objects match as subsets unless the expectation
//! is exact; arrays match element by element, with a trailing `"{{...}}"` allowing more elements.

//!
//! Compiling the written form is [`compile`] (compile.rs); matching a frame, as a `Value` or a
//! borrowed tape, is [`Pat::matches_view`] (matching.rs).

mod compile;
mod matching;

pub use compile::compile;
pub use matching::{scalar_eq, value_eq};

use crate::wire::json::{JsonKind, JsonView};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;

/// A value type a placeholder can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeReq {
    /// Any value, but present.
    Any,
    /// A string.
    String,
    /// A number.
    Number,
    /// An integral number.
    Int,
    /// A hyphenated UUID string.
    Uuid,
    /// `true`/`false`.
    Bool,
    /// `null`.
    Null,
    /// An object.
    Object,
    /// An array.
    Array,
}

impl TypeReq {
    fn parse(s: &str) -> Option<TypeReq> {
        Some(match s {
            "any" => TypeReq::Any,
            "string" => TypeReq::String,
            "number" => TypeReq::Number,
            "int" => TypeReq::Int,
            "uuid" => TypeReq::Uuid,
            "bool" => TypeReq::Bool,
            "null" => TypeReq::Null,
            "object" => TypeReq::Object,
            "array" => TypeReq::Array,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            TypeReq::Any => "any",
            TypeReq::String => "string",
            TypeReq::Number => "number",
            TypeReq::Int => "int",
            TypeReq::Uuid => "uuid",
            TypeReq::Bool => "bool",
            TypeReq::Null => "null",
            TypeReq::Object => "object",
            TypeReq::Array => "array",
        }
    }

    /// Whether `v` has this type.
    pub fn accepts(self, v: &Value) -> bool {
        self.accepts_view(v)
    }

    /// Whether `v` (any [`JsonView`]) has this type.
    pub fn accepts_view<'v>(self, v: impl JsonView<'v>) -> bool {
        match self {
            TypeReq::Any => true,
            TypeReq::String => v.kind() == JsonKind::String,
            TypeReq::Number => v.kind() == JsonKind::Number,
            TypeReq::Int => v.as_f64().is_some_and(|f| f.fract() == 0.0),
            TypeReq::Uuid => v.as_str().is_some_and(is_uuid),
            TypeReq::Bool => v.kind() == JsonKind::Bool,
            TypeReq::Null => v.kind() == JsonKind::Null,
            TypeReq::Object => v.kind() == JsonKind::Object,
            TypeReq::Array => v.kind() == JsonKind::Array,
        }
    }
}

/// Whether `s` is a hyphenated UUID (any version, either case).
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// One piece of a string template.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    /// Literal text.
    Lit(String),
    /// Any text (`{{any}}`/`{{string}}` inside a longer string).
    Star,
    /// The case's working directory.
    Cwd,
    /// The case's DSH_HOME.
    Home,
    /// A captured substring.
    Capture(String),
}

/// A compiled pattern node.
#[derive(Debug, Clone, PartialEq)]
pub enum Pat {
    /// The member must be absent (`{{absent}}`).
    Absent,
    /// A value of a type.
    Type(TypeReq),
    /// A literal scalar (numbers compare as doubles).
    Lit(Value),
    /// One of several literals (`{{-32601|-32603}}`).
    Alt(Vec<Value>),
    /// A value that is none of these literals (`{{not:assistant/message}}`).
    Not(Vec<Value>),
    /// Bind on first sight, equal on every later use (`{{$name}}`, `{{$name:uuid}}`).
    Capture(String, TypeReq),
    /// A capture of a member that may be absent (`{{$name?}}`): binds the member's value, or its
    /// absence, on first sight; at every later use the member must be present with an equal value,
    /// or absent, alike.
    MaybeCapture(String),
    /// An integer strictly greater than the last `{{seq}}` seen in the same session.
    Seq,
    /// A string with placeholders inside.
    Template(Vec<Seg>),
    /// An object: listed members must match; others are allowed unless `exact`.
    Obj(Vec<(String, Pat)>, bool),
    /// An array: element-wise; `rest` allows more elements after the listed ones.
    Arr(Vec<Pat>, bool),
}

/// The per-case values placeholders refer to.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `{{cwd}}`.
    pub cwd: String,
    /// `{{home}}`.
    pub home: String,
}

/// Captured values and `{{seq}}` state, shared by all expectations of a case.
#[derive(Debug, Default, Clone)]
pub struct Bindings {
    /// Committed captures.
    pub vars: HashMap<String, Value>,
    /// Captures (`{{$name?}}`) bound to an absent member.
    pub absent: std::collections::HashSet<String>,
    /// Last `{{seq}}` per session.
    pub seqs: Seqs,
}

/// The last `{{seq}}` matched per session.
pub type Seqs = HashMap<String, f64>;

/// A tentative match: bindings made while matching, committed only if the whole frame matches.
pub struct Attempt<'a> {
    /// Committed state.
    pub base: &'a Bindings,
    /// Per-case values.
    pub env: &'a Env,
    /// The session the frame belongs to (for `{{seq}}`).
    pub session: Option<&'a str>,
    /// New captures made by this attempt.
    pub new_vars: Vec<(String, Value)>,
    /// New captures of an absent member made by this attempt.
    pub new_absent: Vec<String>,
    /// New `{{seq}}` value for the session.
    pub new_seq: Option<f64>,
}

impl<'a> Attempt<'a> {
    /// A fresh attempt.
    pub fn new(base: &'a Bindings, env: &'a Env, session: Option<&'a str>) -> Self {
        Attempt {
            base,
            env,
            session,
            new_vars: Vec::new(),
            new_absent: Vec::new(),
            new_seq: None,
        }
    }

    /// Whether capture `name` is bound to an absent member, before or during this attempt.
    pub fn bound_absent(&self, name: &str) -> bool {
        self.new_absent.iter().any(|n| n == name) || self.base.absent.contains(name)
    }

    /// The value of a capture, bound before or during this attempt.
    pub fn lookup(&self, name: &str) -> Option<&Value> {
        self.new_vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .or_else(|| self.base.vars.get(name))
    }

    /// Applies the attempt's bindings.
    pub fn commit(self, into: &mut Bindings) {
        for (n, v) in self.new_vars {
            into.vars.insert(n, v);
        }
        into.absent.extend(self.new_absent);
        if let (Some(s), Some(q)) = (self.session, self.new_seq) {
            into.seqs.insert(s.to_owned(), q);
        }
    }

    fn last_seq(&self) -> Option<f64> {
        self.new_seq
            .or_else(|| self.session.and_then(|s| self.base.seqs.get(s).copied()))
    }
}

impl fmt::Display for Pat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::wire::json::to_string(&self.to_value()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pat(v: Value) -> Pat {
        compile(&v, false).unwrap()
    }

    fn try_match(p: &Pat, v: &Value, b: &mut Bindings) -> bool {
        let env = Env {
            cwd: "/w/c".into(),
            home: "/w/h".into(),
        };
        let mut at = Attempt::new(b, &env, Some("s1"));
        if p.matches(Some(v), &mut at) {
            let mut nb = b.clone();
            at.commit(&mut nb);
            *b = nb;
            true
        } else {
            false
        }
    }

    #[test]
    fn objects_match_as_subsets_and_exact_objects_do_not() {
        let mut b = Bindings::default();
        let v = json!({"jsonrpc":"2.0","id":1,"result":{}});
        assert!(try_match(&pat(json!({"id":1})), &v, &mut b));
        assert!(!try_match(
            &compile(&json!({"id":1}), true).unwrap(),
            &v,
            &mut b
        ));
        assert!(try_match(
            &compile(&json!({"jsonrpc":"2.0","id":1,"result":{}}), true).unwrap(),
            &v,
            &mut b
        ));
    }

    #[test]
    fn numbers_compare_as_doubles_and_alternatives_accept_either() {
        let mut b = Bindings::default();
        assert!(try_match(&pat(json!(1.0)), &json!(1), &mut b));
        let p = pat(json!({"code":"{{-32601|-32603}}"}));
        assert!(try_match(&p, &json!({"code":-32603}), &mut b));
        assert!(try_match(&p, &json!({"code":-32601}), &mut b));
        assert!(!try_match(&p, &json!({"code":-32600}), &mut b));
        assert!(!try_match(&p, &json!({"code":"-32603"}), &mut b));
    }

    #[test]
    fn not_accepts_any_present_value_but_the_listed_ones_and_prints_back() {
        let mut b = Bindings::default();
        let p = pat(json!({"type":"{{not:assistant/message|turn/end}}"}));
        assert!(try_match(&p, &json!({"type":"turn/start"}), &mut b));
        assert!(try_match(&p, &json!({"type":7}), &mut b));
        assert!(!try_match(&p, &json!({"type":"assistant/message"}), &mut b));
        assert!(!try_match(&p, &json!({"type":"turn/end"}), &mut b));
        assert!(!try_match(&p, &json!({}), &mut b), "absent is not a value");
        let written = json!({"type":"{{not:assistant/message|turn/end}}"});
        assert_eq!(p.to_value(), written);
        assert!(
            compile(&json!("x{{not:a}}"), false).is_err(),
            "a whole value only"
        );
    }

    #[test]
    fn a_capture_binds_once_and_must_be_equal_later() {
        let mut b = Bindings::default();
        let p = pat(json!({"id":"{{$m:uuid}}"}));
        assert!(!try_match(&p, &json!({"id":"nope"}), &mut b));
        assert!(b.vars.is_empty(), "a failed attempt binds nothing");
        assert!(try_match(
            &p,
            &json!({"id":"5ed663b5-b9d0-46b4-a8c7-1720220cb789"}),
            &mut b
        ));
        assert!(!try_match(
            &p,
            &json!({"id":"5ed663b5-b9d0-46b4-a8c7-1720220cb780"}),
            &mut b
        ));
        assert!(try_match(
            &p,
            &json!({"id":"5ed663b5-b9d0-46b4-a8c7-1720220cb789"}),
            &mut b
        ));
    }

    #[test]
    fn seq_must_increase_per_session() {
        let mut b = Bindings::default();
        let p = pat(json!({"seq":"{{seq}}"}));
        assert!(try_match(&p, &json!({"seq":0}), &mut b));
        assert!(try_match(&p, &json!({"seq":3}), &mut b));
        assert!(!try_match(&p, &json!({"seq":3}), &mut b));
        assert!(!try_match(&p, &json!({"seq":2}), &mut b));
    }

    #[test]
    fn templates_match_cwd_stars_and_capture_substrings() {
        let mut b = Bindings::default();
        let p = pat(json!("dir \"{{cwd}}\" now"));
        assert!(try_match(&p, &json!("dir \"/w/c\" now"), &mut b));
        assert!(!try_match(&p, &json!("dir \"/w/x\" now"), &mut b));
        let p = pat(json!("unknown SDK session: {{$s}}"));
        assert!(try_match(&p, &json!("unknown SDK session: abc"), &mut b));
        assert_eq!(b.vars["s"], json!("abc"));
        let p = pat(json!("a{{any}}b{{any}}c"));
        assert!(try_match(&p, &json!("axxbyybc"), &mut b));
        assert!(!try_match(&p, &json!("axxbyy"), &mut b));
        let p = pat(json!("{{any}}.txt"));
        assert!(try_match(&p, &json!("a.txt.txt"), &mut b));
    }

    #[test]
    fn a_maybe_capture_binds_a_value_or_its_absence() {
        // `{{$r?}}`/`{{$e?}}`: the same kind of answer as the first, result or error.
        let p = pat(json!({"result":"{{$r?}}","error":"{{$e?}}"}));
        let mut b = Bindings::default();
        assert!(try_match(&p, &json!({"error":{"code":1}}), &mut b));
        assert!(try_match(&p, &json!({"error":{"code":1}}), &mut b));
        assert!(!try_match(&p, &json!({"error":{"code":2}}), &mut b));
        assert!(!try_match(&p, &json!({"result":{}}), &mut b));
        let mut b = Bindings::default();
        assert!(try_match(&p, &json!({"result":{"a":1}}), &mut b));
        assert!(try_match(&p, &json!({"result":{"a":1}}), &mut b));
        assert!(!try_match(&p, &json!({"error":{"code":1}}), &mut b));
        assert!(!try_match(&p, &json!({"result":{"a":2}}), &mut b));
        assert_eq!(p.to_value(), json!({"result":"{{$r?}}","error":"{{$e?}}"}));
        assert!(compile(&json!("x{{$r?}}"), false).is_err());
        // Exact: a member the capture found absent is not counted.
        let p = compile(&json!({"id":1,"result":"{{$r?}}"}), true).unwrap();
        let mut b = Bindings::default();
        assert!(try_match(&p, &json!({"id":1}), &mut b));
        assert!(!try_match(&p, &json!({"id":1,"x":2}), &mut b));
    }

    #[test]
    fn absent_members_and_open_arrays() {
        let mut b = Bindings::default();
        let p = pat(json!({"error":{"code":-32603,"data":"{{absent}}"}}));
        assert!(try_match(
            &p,
            &json!({"error":{"code":-32603,"message":"m"}}),
            &mut b
        ));
        assert!(!try_match(
            &p,
            &json!({"error":{"code":-32603,"data":1}}),
            &mut b
        ));
        let p = pat(json!([1, "{{...}}"]));
        assert!(try_match(&p, &json!([1, 2, 3]), &mut b));
        assert!(!try_match(&pat(json!([1])), &json!([1, 2]), &mut b));
    }

    #[test]
    fn unknown_placeholders_are_errors() {
        assert!(compile(&json!("{{strnig}}"), false)
            .unwrap_err()
            .contains("unknown placeholder"));
        assert!(compile(&json!("x{{seq}}"), false).is_err());
    }

    #[test]
    fn patterns_print_back_as_written() {
        let v = json!({"a":"{{$m:uuid}}","b":["{{seq}}","{{...}}"],"c":"x{{cwd}}y","d":"{{-32601|-32603}}"});
        assert_eq!(pat(v.clone()).to_value(), v);
    }
}
