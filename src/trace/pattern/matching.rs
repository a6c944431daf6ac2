//! Matching a compiled [`Pat`] against a frame: a `Value` or any [`JsonView`] (a borrowed tape),
//! recording captures and `{{seq}}` in an [`Attempt`].

use super::{Attempt, Pat, Seg, TypeReq};
use crate::wire::json::{JsonKind, JsonView};
use serde_json::{Map, Value};

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
            return match self {
                Pat::Absent => true,
                Pat::MaybeCapture(name) => {
                    if at.bound_absent(name) {
                        true
                    } else if at.lookup(name).is_some() {
                        false
                    } else {
                        at.new_absent.push(name.clone());
                        true
                    }
                }
                _ => false,
            };
        };
        match self {
            Pat::Absent => false,
            Pat::Type(t) => t.accepts_view(v),
            Pat::Lit(l) => lit_eq(l, v),
            Pat::Alt(alts) => alts.iter().any(|l| lit_eq(l, v)),
            Pat::Not(alts) => !alts.iter().any(|l| lit_eq(l, v)),
            Pat::MaybeCapture(name) => {
                if at.bound_absent(name) {
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
            Pat::Capture(name, ty) => {
                if !ty.accepts_view(v) || at.bound_absent(name) {
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
                let present = |(k, p): &&(String, Pat)| match p {
                    Pat::Absent => false,
                    Pat::MaybeCapture(_) => v.get(k).is_some(),
                    _ => true,
                };
                if *exact && v.len() != members.iter().filter(present).count() {
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
            Pat::Alt(a) => Value::String(format!("{{{{{}}}}}", alternatives_text(a))),
            Pat::Not(a) => Value::String(format!("{{{{not:{}}}}}", alternatives_text(a))),
            Pat::Capture(n, TypeReq::Any) => Value::String(format!("{{{{${n}}}}}")),
            Pat::Capture(n, t) => Value::String(format!("{{{{${n}:{}}}}}", t.name())),
            Pat::MaybeCapture(n) => Value::String(format!("{{{{${n}?}}}}")),
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

/// Alternatives written back as `a|b|…`.
fn alternatives_text(a: &[Value]) -> String {
    a.iter()
        .map(|v| match v {
            // Raw only when it reads back as this string (an alternative is JSON-parsed first):
            // `"1"` must stay quoted, or it comes back a number.
            Value::String(s) if s.trim() == s && crate::wire::json::parse(s).is_err() => s.clone(),
            o => crate::wire::json::to_string(o),
        })
        .collect::<Vec<_>>()
        .join("|")
}
