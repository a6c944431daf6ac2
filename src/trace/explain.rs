//! Failure explanations: how close a frame is to a pattern, and the smallest part where they differ.

use super::pattern::{Attempt, Bindings, Env, Pat};
use crate::rules::evidence::Difference;
use crate::wire::json::to_string as json_text;
use serde_json::Value;

/// Shortens text to about `max` bytes (on a character boundary), marking the cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…(+{} bytes)", &s[..end], s.len() - end)
}

fn leaf_ok(p: &Pat, v: Option<&Value>, b: &Bindings, env: &Env) -> bool {
    let mut at = Attempt::new(b, env, None);
    // `{{seq}}` depends on history; for closeness any integer will do.
    if let Pat::Seq = p {
        return v.and_then(Value::as_f64).is_some_and(|f| f.fract() == 0.0);
    }
    p.matches(v, &mut at)
}

/// Fraction of the pattern's leaves that `v` satisfies (1.0 = every leaf).
pub fn score(p: &Pat, v: &Value, b: &Bindings, env: &Env) -> f64 {
    let (ok, total) = count(p, Some(v), b, env);
    if total == 0 {
        1.0
    } else {
        ok as f64 / total as f64
    }
}

fn count(p: &Pat, v: Option<&Value>, b: &Bindings, env: &Env) -> (usize, usize) {
    match p {
        Pat::Obj(members, _) => {
            let m = v.and_then(Value::as_object);
            let mut ok = 0;
            let mut total = 0;
            for (k, p) in members {
                // Discriminating members weigh more: a frame of the right kind is "closer".
                let w = if matches!(k.as_str(), "method" | "id" | "type") {
                    3
                } else {
                    1
                };
                let (o, t) = count(p, m.and_then(|m| m.get(k)), b, env);
                ok += o * w;
                total += t * w;
            }
            (ok, total.max(1))
        }
        Pat::Arr(items, _) => {
            let a = v.and_then(Value::as_array);
            let mut ok = 0;
            let mut total = 0;
            for (i, p) in items.iter().enumerate() {
                let (o, t) = count(p, a.and_then(|a| a.get(i)), b, env);
                ok += o;
                total += t;
            }
            (ok, total.max(1))
        }
        leaf => (usize::from(leaf_ok(leaf, v, b, env)), 1),
    }
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(v) => clip(&crate::wire::json::to_string(v), 200),
    }
}

fn ptr_escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

/// Two strings that differ: the character offset where they part, with a little context.
fn string_difference(at: &str, e: &str, g: &str) -> Difference {
    let common = e
        .char_indices()
        .zip(g.chars())
        .find(|((_, a), b)| a != b)
        .map_or(e.len().min(g.len()), |((i, _), _)| i);
    let start = e[..common]
        .char_indices()
        .rev()
        .nth(20)
        .map_or(0, |(i, _)| i);
    let piece = |s: &str| {
        let s = &s[start.min(s.len())..];
        let end = s.char_indices().nth(60).map_or(s.len(), |(i, _)| i);
        format!("…{}…", Value::String(s[..end].to_owned()))
    };
    Difference {
        note: Some(format!(
            "strings part at byte {common} (lengths {} and {})",
            e.len(),
            g.len()
        )),
        value: Some(json_text(&Value::String(g.to_owned()))),
        ..Difference::at(at, piece(e), piece(g))
    }
}

/// The first (depth-first) place where `v` fails `p` (rendered `/json/pointer: expected X, got Y`).
pub fn first_difference(p: &Pat, v: &Value, b: &Bindings, env: &Env) -> Option<Difference> {
    fn go(
        p: &Pat,
        v: Option<&Value>,
        path: &mut String,
        (b, env, last_seq): (&Bindings, &Env, Option<f64>),
    ) -> Option<Difference> {
        match (p, v) {
            (Pat::Obj(members, exact), Some(Value::Object(m))) => {
                for (k, p) in members {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&ptr_escape(k));
                    if let Some(d) = go(p, m.get(k), path, (b, env, last_seq)) {
                        // A response with an error where a result was expected (or the other
                        // way round): what it answered is the difference, not "(absent)".
                        let other = match path.as_str() {
                            "/result" => Some("error"),
                            "/error" => Some("result"),
                            _ => None,
                        };
                        return Some(match (other, m.get(k)) {
                            (Some(o), None) if m.contains_key(o) => Difference {
                                value: m.get(o).map(json_text),
                                member: Some(o.to_owned()),
                                ..Difference::at(
                                    path.as_str(),
                                    clip(&json_text(&p.to_value()), 200),
                                    format!("the {o} {}", show(m.get(o))),
                                )
                            },
                            _ => d,
                        });
                    }
                    path.truncate(len);
                }
                if *exact {
                    if let Some(extra) = m.keys().find(|k| !members.iter().any(|(mk, _)| mk == *k))
                    {
                        let at = format!("{path}/{}", ptr_escape(extra));
                        return Some(Difference {
                            value: m.get(extra).map(json_text),
                            ..Difference::at(at, "no such member (exact)", show(m.get(extra)))
                        });
                    }
                }
                None
            }
            (Pat::Arr(items, rest), Some(Value::Array(a))) => {
                for (i, p) in items.iter().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    if let Some(d) = go(p, a.get(i), path, (b, env, last_seq)) {
                        return Some(d);
                    }
                    path.truncate(len);
                }
                if !rest && a.len() != items.len() {
                    let at = if path.is_empty() { "/" } else { path };
                    return Some(Difference {
                        value: None,
                        member: None,
                        ..Difference::at(
                            at,
                            format!("{} elements", items.len()),
                            a.len().to_string(),
                        )
                    });
                }
                None
            }
            (Pat::Seq, Some(got)) if got.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                // An integer that is no `{{seq}}` here: not above the session's last.
                let last = last_seq.filter(|l| got.as_f64().is_some_and(|f| f <= *l))?;
                let at = if path.is_empty() { "/" } else { path };
                Some(Difference {
                    value: Some(json_text(got)),
                    ..Difference::at(
                        at,
                        format!("a seq above {last}, the session's last"),
                        json_text(got),
                    )
                })
            }
            (p, v) => {
                if leaf_ok(p, v, b, env) {
                    return None;
                }
                let mut exp = crate::wire::json::to_string(&p.to_value());
                if let Pat::Capture(n, _) | Pat::MaybeCapture(n) = p {
                    if let Some(bound) = b.vars.get(n) {
                        exp = format!("{exp} = {}", show(Some(bound)));
                    } else if b.absent.contains(n) {
                        exp = format!("{exp} = (absent)");
                    }
                }
                if matches!(p, Pat::Template(_)) && exp.contains("{{cwd}}") {
                    exp = format!("{exp} (cwd = {:?})", env.cwd);
                }
                let at = if path.is_empty() { "/" } else { path };
                // Long strings that share a prefix: show where they part, not two equal openings.
                if let (Pat::Lit(Value::String(e)), Some(Value::String(g))) = (p, v) {
                    if e.len() > 60 || g.len() > 60 {
                        return Some(string_difference(at, e, g));
                    }
                }
                Some(Difference {
                    value: v.map(json_text),
                    ..Difference::at(at, clip(&exp, 200), show(v))
                })
            }
        }
    }
    let mut path = String::new();
    // The frame's session, for `{{seq}}` (`subagent.*` frames carry no seq).
    let sid = v.pointer("/params/sessionId").and_then(Value::as_str);
    let last_seq = sid.and_then(|s| b.seqs.get(s).copied());
    go(p, Some(v), &mut path, (b, env, last_seq))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::pattern::compile;
    use serde_json::json;

    #[test]
    fn the_smallest_differing_part_is_named_by_json_pointer() {
        let p = compile(
            &json!({"params":{"event":{"type":"turn/end","data":{"turn":2}}}}),
            false,
        )
        .unwrap();
        let v = json!({"params":{"event":{"type":"turn/end","data":{"turn":1}}}});
        let d = first_difference(&p, &v, &Bindings::default(), &Env::default())
            .unwrap()
            .to_string();
        assert_eq!(d, "/params/event/data/turn: expected 2, got 1");
    }

    #[test]
    fn a_seq_not_above_the_sessions_last_is_named() {
        let p = compile(&json!({"params":{"event":{"seq":"{{seq}}"}}}), false).unwrap();
        let v = json!({"params":{"sessionId":"s","event":{"seq":0}}});
        let mut b = Bindings::default();
        let d = first_difference(&p, &v, &b, &Env::default());
        assert_eq!(d, None, "no seq before: any integer is one");
        b.seqs.insert("s".into(), 17.0);
        let d = first_difference(&p, &v, &b, &Env::default()).unwrap();
        assert_eq!(
            d.to_string(),
            "/params/event/seq: expected a seq above 17, the session's last, got 0"
        );
    }

    #[test]
    fn a_response_of_the_other_kind_shows_what_it_answered() {
        let p = compile(
            &json!({"id":"a","result":{"serverInfo":"{{object}}"}}),
            false,
        )
        .unwrap();
        let v = json!({"id":"a","error":{"code":-32603,"message":"already initialized"}});
        let d = first_difference(&p, &v, &Bindings::default(), &Env::default())
            .unwrap()
            .to_string();
        assert_eq!(
            d,
            "/result: expected {\"serverInfo\":\"{{object}}\"}, got the error {\"code\":-32603,\"message\":\"already initialized\"}"
        );
        let p = compile(&json!({"id":"a","error":"{{object}}"}), false).unwrap();
        let v = json!({"id":"a","result":{}});
        let d = first_difference(&p, &v, &Bindings::default(), &Env::default())
            .unwrap()
            .to_string();
        assert_eq!(d, "/error: expected \"{{object}}\", got the result {}");
    }

    #[test]
    fn a_bound_capture_shows_its_value_in_the_difference() {
        let p = compile(&json!({"result":{"messageId":"{{$m}}"}}), false).unwrap();
        let mut b = Bindings::default();
        b.vars.insert("m".into(), json!("a"));
        let d = first_difference(
            &p,
            &json!({"result":{"messageId":"b"}}),
            &b,
            &Env::default(),
        )
        .unwrap()
        .to_string();
        assert_eq!(
            d,
            "/result/messageId: expected \"{{$m}}\" = \"a\", got \"b\""
        );
    }

    #[test]
    fn frames_of_the_right_kind_score_closer() {
        let p = compile(
            &json!({"method":"session.status","params":{"status":"idle"}}),
            false,
        )
        .unwrap();
        let b = Bindings::default();
        let e = Env::default();
        let near = score(
            &p,
            &json!({"method":"session.status","params":{"status":"running"}}),
            &b,
            &e,
        );
        let far = score(
            &p,
            &json!({"method":"session.event","params":{"status":"idle"}}),
            &b,
            &e,
        );
        assert!(near > far);
    }

    #[test]
    fn long_strings_show_where_they_part() {
        let e = format!("{}expected tail", "x".repeat(100));
        let g = format!("{}actual tail", "x".repeat(100));
        let p = compile(&json!({ "t": e }), false).unwrap();
        let d = first_difference(
            &p,
            &json!({ "t": g }),
            &Bindings::default(),
            &Env::default(),
        )
        .unwrap();
        assert_eq!((d.pointer.as_str(), d.member.as_deref()), ("/t", Some("t")));
        assert_eq!(d.value, Some(serde_json::Value::String(g).to_string()));
        assert_eq!(
            d.to_string(),
            "/t: strings part at byte 100 (lengths 113 and 111): expected …\"xxxxxxxxxxxxxxxxxxxxxexpected tail\"…, got …\"xxxxxxxxxxxxxxxxxxxxxactual tail\"…"
        );
    }

    #[test]
    fn clipping_respects_character_boundaries() {
        assert_eq!(clip("ééé", 3), "é…(+4 bytes)");
    }
}
