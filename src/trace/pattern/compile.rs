//! The written form of a pattern (JSON with `{{…}}` placeholders) compiled into a [`Pat`].

use super::{Pat, Seg, TypeReq};
use serde_json::Value;

/// What a placeholder body denotes, before it is placed in a tree.
fn placeholder(body: &str, whole: bool) -> Result<Pat, String> {
    let body = body.trim();
    if let Some(name) = body.strip_prefix('$') {
        if let Some(name) = name.strip_suffix('?') {
            if !whole {
                return Err(format!(
                    "`{{{{${name}?}}}}` captures a whole member (it may be absent), not part of a string"
                ));
            }
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "capture name `{name}` must be letters, digits or `_`"
                ));
            }
            return Ok(Pat::MaybeCapture(name.to_owned()));
        }
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
    if let Some(rest) = body.strip_prefix("not:").filter(|_| whole) {
        return Ok(Pat::Not(alternatives(rest)));
    }
    if body.contains('|') || body.starts_with('-') || body.starts_with('"') {
        let mut alts = alternatives(body);
        return Ok(if alts.len() == 1 {
            Pat::Lit(alts.pop().unwrap())
        } else {
            Pat::Alt(alts)
        });
    }
    Err(format!(
        "unknown placeholder `{{{{{body}}}}}` (expected any, string, number, int, uuid, bool, null, object, array, absent, seq, cwd, home, $name, a|b alternatives or not:a|b)"
    ))
}

/// `a|b|…`: each alternative JSON if it parses, else a string.
fn alternatives(body: &str) -> Vec<Value> {
    body.split('|')
        .map(|a| {
            let a = a.trim();
            match crate::wire::json::parse(a) {
                Ok(p) => p.value,
                Err(_) => Value::String(a.to_owned()),
            }
        })
        .collect()
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
