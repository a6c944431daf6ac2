//! The matcher reads frames through a `wire::json::Tape`, not a `serde_json::Value`: every pattern
//! must judge a frame the same either way (verdict, captures, `{{seq}}`), and as the matcher did
//! when it matched `Value`s only (`value_only`, that code kept here as the reference).

use dsh_conformance::trace::pattern::{
    compile, is_uuid, scalar_eq, value_eq, Attempt, Bindings, TypeReq,
};
use dsh_conformance::trace::{Env, Pat};
use dsh_conformance::wire::json::{self, JsonView, Tape, TapeRef};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Patterns covering every kind of node: types, literals, alternatives (one a container),
/// captures bound and unbound, `{{seq}}`, templates, exact and open objects and arrays.
fn patterns() -> Vec<Pat> {
    let loose = [
        json!({"a": 1}),
        json!({"a": "{{absent}}", "b": "{{any}}"}),
        json!({"a": "{{int}}", "b": "{{string}}"}),
        json!({"a": "{{number}}", "b": "{{bool}}", "c": "{{null}}"}),
        json!({"a": "{{object}}", "b": "{{array}}"}),
        json!({"a": "{{uuid}}"}),
        json!({"a": "{{-0|1|\"x\"}}"}),
        json!({"a": "{{[1]|{\"b\":1}|true}}"}),
        json!({"a": "{{$c}}"}),
        json!({"a": "{{$c}}", "b": "{{$c}}"}),
        json!({"a": "{{$u:uuid}}", "b": "{{$n:int}}"}),
        json!({"s": "{{seq}}"}),
        json!({"a": "x{{$t}}y"}),
        json!({"a": "dir {{cwd}} {{any}}"}),
        json!({"a": [1, "{{...}}"]}),
        json!({"a": []}),
        json!({"a": [{"b": "{{any}}"}, "{{$c}}"]}),
        json!({"a": {"b": null}}),
        json!({"a": "x", "a2": "é\n\"q\""}),
        json!("{{object}}"),
        json!([1, "{{...}}"]),
    ];
    let exact = [
        json!({"a": 1, "b": "{{any}}"}),
        json!({"a": {}}),
        json!({"a": "{{absent}}"}),
    ];
    loose
        .iter()
        .map(|v| compile(v, false).unwrap())
        .chain(exact.iter().map(|v| compile(v, true).unwrap()))
        .collect()
}

/// Frames made of the patterns' vocabulary, with duplicate keys, escapes and odd numbers.
fn frame() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "1",
        "1.0",
        "-0",
        "2",
        "1e400",
        "9007199254740993",
        "true",
        "false",
        "null",
        "\"x\"",
        "\"\\u0078\"",
        "\"xqy\"",
        "\"x\\u0071y\"",
        "\"dir /w/c now\"",
        "\"é\\n\\\"q\\\"\"",
        "\"\\ud800\"",
        "\"5ed663b5-b9d0-46b4-a8c7-1720220cb789\"",
        "[]",
        "{}",
        "[1]",
        "{\"b\":1}",
        "{\"b\":null}",
    ])
    .prop_map(str::to_owned);
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            members(inner),
        ]
    });
    members(value)
}

fn members(value: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop::sample::select(vec!["a", "b", "c", "s", "a2", "\\u0061"]),
            value,
        ),
        0..5,
    )
    .prop_map(|m| {
        let m: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", m.join(","))
    })
}

/// Committed state the attempt starts from: nothing, or captures and a `{{seq}}` already seen.
fn bindings(which: u8) -> Bindings {
    let mut b = Bindings::default();
    match which % 4 {
        0 => {}
        1 => {
            b.vars.insert("c".into(), json!(1));
            b.vars.insert("t".into(), json!("q"));
            b.seqs.insert("s1".into(), 1.0);
        }
        2 => {
            b.vars.insert("c".into(), json!({"b": [1]}));
            b.vars.insert("n".into(), json!(2.0));
        }
        _ => {
            b.vars.insert("c".into(), json!([1, {"b": 1}]));
            b.vars
                .insert("u".into(), json!("5ed663b5-b9d0-46b4-a8c7-1720220cb789"));
        }
    }
    b
}

/// `Pat::matches` as it was before patterns read through `JsonView` (templates aside: their
/// matching did not change, and its helper is private).
fn value_only(p: &Pat, v: Option<&Value>, at: &mut Attempt<'_>) -> bool {
    fn accepts(t: TypeReq, v: &Value) -> bool {
        match t {
            TypeReq::Any => true,
            TypeReq::String => v.is_string(),
            TypeReq::Number => v.is_number(),
            TypeReq::Int => v.as_f64().is_some_and(|f| f.fract() == 0.0),
            TypeReq::Uuid => v.as_str().is_some_and(is_uuid),
            TypeReq::Bool => v.is_boolean(),
            TypeReq::Null => v.is_null(),
            TypeReq::Object => v.is_object(),
            TypeReq::Array => v.is_array(),
        }
    }
    let Some(v) = v else {
        return match p {
            Pat::MaybeCapture(_) => p.matches(None, at),
            _ => matches!(p, Pat::Absent),
        };
    };
    match p {
        Pat::Absent => false,
        Pat::MaybeCapture(_) => p.matches(Some(v), at),
        Pat::Type(t) => accepts(*t, v),
        Pat::Lit(l) => scalar_eq(l, v),
        Pat::Alt(alts) => alts.iter().any(|l| scalar_eq(l, v)),
        Pat::Not(alts) => !alts.iter().any(|l| scalar_eq(l, v)),
        Pat::Capture(name, ty) => {
            if !accepts(*ty, v) {
                return false;
            }
            match at.lookup(name) {
                Some(b) => value_eq(b, v),
                None => {
                    at.new_vars.push((name.clone(), v.clone()));
                    true
                }
            }
        }
        Pat::Seq => {
            let Some(f) = v.as_f64().filter(|f| f.fract() == 0.0) else {
                return false;
            };
            let last = at
                .new_seq
                .or_else(|| at.session.and_then(|s| at.base.seqs.get(s).copied()));
            if last.is_some_and(|last| f <= last) {
                return false;
            }
            at.new_seq = Some(f);
            true
        }
        Pat::Template(_) => p.matches(Some(v), at),
        Pat::Obj(members, exact) => {
            let Value::Object(m) = v else { return false };
            let counted = |(k, p): &&(String, Pat)| match p {
                Pat::Absent => false,
                Pat::MaybeCapture(_) => m.contains_key(k),
                _ => true,
            };
            if *exact && m.len() != members.iter().filter(counted).count() {
                return false;
            }
            members.iter().all(|(k, p)| value_only(p, m.get(k), at))
        }
        Pat::Arr(items, rest) => {
            let Value::Array(a) = v else { return false };
            if a.len() < items.len() || (!rest && a.len() != items.len()) {
                return false;
            }
            items.iter().zip(a).all(|(p, v)| value_only(p, Some(v), at))
        }
    }
}

type Outcome = Option<(Vec<(String, Value)>, Option<f64>)>;

fn attempt(
    p: &Pat,
    b: &Bindings,
    env: &Env,
    f: impl FnOnce(&Pat, &mut Attempt<'_>) -> bool,
) -> Outcome {
    let mut at = Attempt::new(b, env, Some("s1"));
    if f(p, &mut at) {
        Some((at.new_vars, at.new_seq))
    } else {
        None
    }
}

/// Views agree all the way down (what patterns can observe of a frame).
fn same_view(a: &Value, b: TapeRef<'_>) -> Result<(), String> {
    let ok = a.kind() == b.kind()
        && JsonView::as_str(a) == b.as_str()
        && JsonView::as_f64(a).map(f64::to_bits) == b.as_f64().map(f64::to_bits)
        && JsonView::as_bool(a) == b.as_bool()
        && JsonView::len(a) == b.len()
        && b.to_value() == *a;
    if !ok {
        return Err(format!("{a} vs {}", b.text()));
    }
    match a {
        Value::Object(m) => m
            .iter()
            .try_for_each(|(k, v)| same_view(v, b.get(k).ok_or_else(|| format!("{k} missing"))?)),
        Value::Array(x) => x
            .iter()
            .zip(b.elements())
            .try_for_each(|(v, w)| same_view(v, w)),
        _ => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn patterns_judge_a_tape_as_they_judge_a_value(text in frame(), which in any::<u8>()) {
        let env = Env { cwd: "/w/c".into(), home: "/w/h".into() };
        let value = json::parse(&text).unwrap().value;
        let mut tape = Tape::default();
        tape.parse(&text).unwrap();
        let root = tape.root(&text);
        if let Err(e) = same_view(&value, root) {
            prop_assert!(false, "{}: {}", text, e);
        }
        let b = bindings(which);
        for p in patterns() {
            let before = attempt(&p, &b, &env, |p, at| value_only(p, Some(&value), at));
            let on_value = attempt(&p, &b, &env, |p, at| p.matches(Some(&value), at));
            let on_tape = attempt(&p, &b, &env, |p, at| p.matches_view(Some(root), at));
            prop_assert_eq!(&before, &on_value, "pattern {} on {}", p, text);
            prop_assert_eq!(&before, &on_tape, "pattern {} on {}", p, text);
        }
    }
}
