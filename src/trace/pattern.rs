//! Frame patterns: JSON with `{{…}}` placeholders, compiled once and matched against parsed frames
//! without re-serialising them.
//!
//! A pattern is written as JSON. A string that is exactly `"{{…}}"` is a placeholder; a string that
//! contains `{{…}}` among other text is a template. Objects match as subsets unless the expectation
//! is exact; arrays match element by element, with a trailing `"{{...}}"` allowing more elements.

use crate::wire::json::{JsonKind, JsonView};
use serde_json::{Map, Value};
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
    /// Bind on first sight, equal on every later use (`{{$name}}`, `{{$name:uuid}}`).
    Capture(String, TypeReq),
    /// An integer strictly greater than the last `{{seq}}` seen in the same session.
    Seq,
    /// A string with placeholders inside.
    Template(Vec<Seg>),
    /// An object: listed members must match; others are allowed unless `exact`.
    Obj(Vec<(String, Pat)>, bool),
    /// An array: element-wise; `rest` allows more elements after the listed ones.
    Arr(Vec<Pat>, bool),
}

/// What a placeholder body denotes, before it is placed in a tree.
fn placeholder(body: &str, whole: bool) -> Result<Pat, String> {
    let body = body.trim();
    if let Some(name) = body.strip_prefix('$') {
        let (name, ty) = match name.split_once(':') {
            Some((n, t)) => (
                n,
                TypeReq::parse(t).ok_or_else(|| format!("unknown capture type `{t}`"))?,
            ),
            None => (name, TypeReq::Any),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "capture name `{name}` must be letters, digits or `_`"
            ));
        }
        return Ok(Pat::Capture(name.to_owned(), ty));
    }
    match body {
        "absent" if whole => return Ok(Pat::Absent),
        "seq" if whole => return Ok(Pat::Seq),
        "cwd" => return Ok(Pat::Template(vec![Seg::Cwd])),
        "home" => return Ok(Pat::Template(vec![Seg::Home])),
        _ => {}
    }
    if let Some(t) = TypeReq::parse(body) {
        return Ok(Pat::Type(t));
    }
    if body.contains('|') || body.starts_with('-') || body.starts_with('"') {
        let mut alts = Vec::new();
        for a in body.split('|') {
            let a = a.trim();
            let v = match crate::wire::json::parse(a) {
                Ok(p) => p.value,
                Err(_) => Value::String(a.to_owned()),
            };
            alts.push(v);
        }
        return Ok(if alts.len() == 1 {
            Pat::Lit(alts.pop().unwrap())
        } else {
            Pat::Alt(alts)
        });
    }
    Err(format!(
        "unknown placeholder `{{{{{body}}}}}` (expected any, string, number, int, uuid, bool, null, object, array, absent, seq, cwd, home, $name or a|b alternatives)"
    ))
}

/// Compiles a JSON value written in a trace into a pattern.
pub fn compile(v: &Value, exact: bool) -> Result<Pat, String> {
    Ok(match v {
        Value::String(s) => compile_str(s)?,
        Value::Object(m) => {
            let mut members = Vec::with_capacity(m.len());
            for (k, v) in m {
                members.push((k.clone(), compile(v, exact)?));
            }
            Pat::Obj(members, exact)
        }
        Value::Array(a) => {
            let rest = matches!(a.last(), Some(Value::String(s)) if s == "{{...}}");
            let n = if rest { a.len() - 1 } else { a.len() };
            let items = a[..n]
                .iter()
                .map(|v| compile(v, exact))
                .collect::<Result<_, _>>()?;
            Pat::Arr(items, rest)
        }
        other => Pat::Lit(other.clone()),
    })
}

fn compile_str(s: &str) -> Result<Pat, String> {
    if !s.contains("{{") {
        return Ok(Pat::Lit(Value::String(s.to_owned())));
    }
    if let Some(body) = s.strip_prefix("{{").and_then(|r| r.strip_suffix("}}")) {
        if !body.contains("{{") && !body.contains("}}") {
            return placeholder(body, true);
        }
    }
    let mut segs = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("{{") {
        if i > 0 {
            segs.push(Seg::Lit(rest[..i].to_owned()));
        }
        let after = &rest[i + 2..];
        let j = after
            .find("}}")
            .ok_or_else(|| format!("unclosed `{{{{` in string {s:?}"))?;
        let seg = match placeholder(&after[..j], false)? {
            Pat::Type(TypeReq::Any | TypeReq::String) => Seg::Star,
            Pat::Template(mut t) if t.len() == 1 => t.pop().unwrap(),
            Pat::Capture(n, _) => Seg::Capture(n),
            _ => {
                return Err(format!(
                    "`{{{{{}}}}}` cannot stand inside a longer string (only any, string, cwd, home and $captures can)",
                    &after[..j]
                ))
            }
        };
        segs.push(seg);
        rest = &after[j + 2..];
    }
    if !rest.is_empty() {
        segs.push(Seg::Lit(rest.to_owned()));
    }
    Ok(Pat::Template(segs))
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
    /// Last `{{seq}}` per session.
    pub seqs: HashMap<String, f64>,
}

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
            new_seq: None,
        }
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
        if let (Some(s), Some(q)) = (self.session, self.new_seq) {
            into.seqs.insert(s.to_owned(), q);
        }
    }

    fn last_seq(&self) -> Option<f64> {
        self.new_seq
            .or_else(|| self.session.and_then(|s| self.base.seqs.get(s).copied()))
    }
}

/// Loose equality of scalars as JavaScript's `===` on parsed JSON (numbers as doubles).
pub fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Deep equality with numbers compared as doubles.
pub fn value_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| value_eq(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| value_eq(a, b))
        }
        _ => scalar_eq(a, b),
    }
}

/// [`scalar_eq`] of a literal and any [`JsonView`]: the same answer as on `v.to_value()`.
fn lit_eq<'v>(l: &Value, v: impl JsonView<'v>) -> bool {
    match (l, v.kind()) {
        (Value::Number(x), JsonKind::Number) => x.as_f64() == v.as_f64(),
        (Value::Null, JsonKind::Null) => true,
        (Value::Bool(a), JsonKind::Bool) => v.as_bool() == Some(*a),
        (Value::String(a), JsonKind::String) => v.as_str() == Some(a.as_str()),
        // A container literal (an alternative written as `[…]` or `{…}`): rare, compared whole.
        (Value::Array(_), JsonKind::Array) | (Value::Object(_), JsonKind::Object) => {
            *l == v.to_value()
        }
        _ => false,
    }
}

/// [`value_eq`] of a bound value and any [`JsonView`].
fn value_eq_view<'v>(a: &Value, b: impl JsonView<'v>) -> bool {
    match (a, b.kind()) {
        (Value::Object(x), JsonKind::Object) => {
            x.len() == b.len()
                && x.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| value_eq_view(v, w)))
        }
        (Value::Array(x), JsonKind::Array) => {
            x.len() == b.len() && x.iter().zip(b.elements()).all(|(a, w)| value_eq_view(a, w))
        }
        _ => lit_eq(a, b),
    }
}

impl Pat {
    /// Matches `v` (`None` = member absent), recording bindings in `at`.
    pub fn matches(&self, v: Option<&Value>, at: &mut Attempt<'_>) -> bool {
        self.matches_view(v, at)
    }

    /// [`Pat::matches`] on any [`JsonView`] (a [`Tape`](crate::wire::json::Tape) node: no
    /// `Value` built for the frame).
    pub fn matches_view<'v, V: JsonView<'v>>(&self, v: Option<V>, at: &mut Attempt<'_>) -> bool {
        let Some(v) = v else {
            return matches!(self, Pat::Absent);
        };
        match self {
            Pat::Absent => false,
            Pat::Type(t) => t.accepts_view(v),
            Pat::Lit(l) => lit_eq(l, v),
            Pat::Alt(alts) => alts.iter().any(|l| lit_eq(l, v)),
            Pat::Capture(name, ty) => {
                if !ty.accepts_view(v) {
                    return false;
                }
                match at.lookup(name) {
                    Some(b) => value_eq_view(b, v),
                    None => {
                        at.new_vars.push((name.clone(), v.to_value()));
                        true
                    }
                }
            }
            Pat::Seq => {
                let Some(f) = v.as_f64().filter(|f| f.fract() == 0.0) else {
                    return false;
                };
                if at.last_seq().is_some_and(|last| f <= last) {
                    return false;
                }
                at.new_seq = Some(f);
                true
            }
            Pat::Template(segs) => v.as_str().is_some_and(|s| match_template(segs, s, at)),
            Pat::Obj(members, exact) => {
                if v.kind() != JsonKind::Object {
                    return false;
                }
                if *exact && v.len() != members.iter().filter(|(_, p)| *p != Pat::Absent).count() {
                    return false;
                }
                members.iter().all(|(k, p)| p.matches_view(v.get(k), at))
            }
            Pat::Arr(items, rest) => {
                if v.kind() != JsonKind::Array {
                    return false;
                }
                let n = v.len();
                if n < items.len() || (!rest && n != items.len()) {
                    return false;
                }
                items
                    .iter()
                    .zip(v.elements())
                    .all(|(p, v)| p.matches_view(Some(v), at))
            }
        }
    }

    /// A member of an object pattern.
    pub fn member(&self, key: &str) -> Option<&Pat> {
        match self {
            Pat::Obj(m, _) => m.iter().find(|(k, _)| k == key).map(|(_, p)| p),
            _ => None,
        }
    }

    /// Writes the pattern back as trace JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Pat::Absent => Value::String("{{absent}}".into()),
            Pat::Type(t) => Value::String(format!("{{{{{}}}}}", t.name())),
            Pat::Lit(v) => v.clone(),
            Pat::Alt(a) => Value::String(format!(
                "{{{{{}}}}}",
                a.iter()
                    .map(|v| match v {
                        // Raw only when it reads back as this string (an alternative is
                        // JSON-parsed first): `"1"` must stay quoted, or it comes back a number.
                        Value::String(s)
                            if s.trim() == s && crate::wire::json::parse(s).is_err() =>
                        {
                            s.clone()
                        }
                        o => crate::wire::json::to_string(o),
                    })
                    .collect::<Vec<_>>()
                    .join("|")
            )),
            Pat::Capture(n, TypeReq::Any) => Value::String(format!("{{{{${n}}}}}")),
            Pat::Capture(n, t) => Value::String(format!("{{{{${n}:{}}}}}", t.name())),
            Pat::Seq => Value::String("{{seq}}".into()),
            Pat::Template(segs) => {
                let mut s = String::new();
                for seg in segs {
                    match seg {
                        Seg::Lit(l) => s.push_str(l),
                        Seg::Star => s.push_str("{{any}}"),
                        Seg::Cwd => s.push_str("{{cwd}}"),
                        Seg::Home => s.push_str("{{home}}"),
                        Seg::Capture(n) => {
                            s.push_str("{{$");
                            s.push_str(n);
                            s.push_str("}}");
                        }
                    }
                }
                Value::String(s)
            }
            Pat::Obj(m, _) => {
                let mut o = Map::new();
                for (k, p) in m {
                    o.insert(k.clone(), p.to_value());
                }
                Value::Object(o)
            }
            Pat::Arr(items, rest) => {
                let mut a: Vec<Value> = items.iter().map(Pat::to_value).collect();
                if *rest {
                    a.push(Value::String("{{...}}".into()));
                }
                Value::Array(a)
            }
        }
    }
}

impl fmt::Display for Pat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::wire::json::to_string(&self.to_value()))
    }
}

/// Matches a string template: literals in order, stars and unbound captures between them (the
/// shortest extent that lets the rest match), bound captures as literals.
fn match_template(segs: &[Seg], s: &str, at: &mut Attempt<'_>) -> bool {
    /// A literal to find, or a stretch to skip (the index of its capture segment, if any).
    enum R<'x> {
        Lit(&'x str),
        Star(Option<usize>),
    }
    let mut rs: Vec<R<'_>> = Vec::with_capacity(segs.len());
    for (j, seg) in segs.iter().enumerate() {
        rs.push(match seg {
            Seg::Lit(l) => R::Lit(l),
            Seg::Cwd => R::Lit(&at.env.cwd),
            Seg::Home => R::Lit(&at.env.home),
            Seg::Star => R::Star(None),
            Seg::Capture(n) => match at.lookup(n) {
                Some(Value::String(v)) => R::Lit(v),
                Some(_) => return false,
                None => R::Star(Some(j)),
            },
        });
    }
    fn go(
        rs: &[R],
        s: &str,
        pos: usize,
        spans: &mut Vec<(usize, usize)>,
        budget: &mut u32,
    ) -> bool {
        *budget = budget.saturating_sub(1);
        if *budget == 0 {
            return false;
        }
        let Some(first) = rs.first() else {
            return pos == s.len();
        };
        match first {
            R::Lit(l) => s[pos..].starts_with(*l) && go(&rs[1..], s, pos + l.len(), spans, budget),
            R::Star(_) => {
                // Candidate ends: where the next literal occurs, or anywhere when none follows.
                let mut end = pos;
                loop {
                    let cand = match rs.get(1) {
                        Some(R::Lit(l)) => match s[end..].find(*l) {
                            Some(off) => end + off,
                            None => return false,
                        },
                        _ if rs.len() == 1 => s.len(),
                        _ => end,
                    };
                    spans.push((pos, cand));
                    if go(&rs[1..], s, cand, spans, budget) {
                        return true;
                    }
                    spans.pop();
                    if cand >= s.len() {
                        return false;
                    }
                    end = cand + s[cand..].chars().next().map_or(1, char::len_utf8);
                }
            }
        }
    }
    let mut spans = Vec::new();
    // A bound on backtracking keeps pathological templates linear-ish; real ones use a few steps.
    let mut budget = 100_000u32;
    if !go(&rs, s, 0, &mut spans, &mut budget) {
        return false;
    }
    let mut k = 0;
    let mut binds: Vec<(usize, (usize, usize))> = Vec::new();
    for r in &rs {
        if let R::Star(seg) = r {
            if let Some(j) = seg {
                binds.push((*j, spans[k]));
            }
            k += 1;
        }
    }
    for (j, (a, b)) in binds {
        if let Seg::Capture(name) = &segs[j] {
            at.new_vars
                .push((name.clone(), Value::String(s[a..b].to_owned())));
        }
    }
    true
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
