//! Writing trace text from transcript events: sends (raw where needed) and pauses, redacted
//! expectations in the order the matcher can check, process expectations.

use super::redact::Redactor;
use super::transcript::{event_t, RawEvent};
use crate::trace::syntax::escape_raw;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// A pattern for a stdout line that was stored truncated: what the prefix reveals.
fn truncated_pattern(prefix: &str) -> Value {
    fn grab(p: &str, key: &str) -> Option<String> {
        let k = format!("\"{key}\":\"");
        let i = p.find(&k)? + k.len();
        let rest = &p[i..];
        let end = rest.find('"')?;
        Some(rest[..end].to_owned())
    }
    let mut m = Map::new();
    if let Some(method) = grab(prefix, "method") {
        m.insert("method".into(), Value::String(method));
        let mut params = Map::new();
        if let Some(s) = grab(prefix, "sessionId") {
            params.insert("sessionId".into(), Value::String(s));
        }
        if let Some(t) = grab(prefix, "type") {
            let mut ev = Map::new();
            ev.insert("type".into(), Value::String(t));
            ev.insert("seq".into(), Value::String("{{seq}}".into()));
            params.insert("event".into(), Value::Object(ev));
        }
        m.insert("params".into(), Value::Object(params));
    } else if let Some(i) = prefix.find("\"id\":") {
        let rest = &prefix[i + 5..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        if let Ok(p) = crate::wire::json::parse(&rest[..end]) {
            m.insert("id".into(), p.value);
        }
    }
    Value::Object(m)
}

/// What the importer knows about a transcript beyond its events.
#[derive(Debug, Clone, Default)]
pub struct ImportInfo {
    /// `# case:` name.
    pub case: String,
    /// `# source:` text.
    pub source: String,
    /// A description to put in a comment.
    pub description: Option<String>,
    /// The recording's own cwd and DSH_HOME, written back as `{{cwd}}` and `{{home}}`.
    pub dirs: Vec<(String, &'static str)>,
    /// Header lines to use instead of the generated `# case/source/editions` (for `--bless`).
    pub header: Option<String>,
}

enum Item {
    Send(Vec<u8>),
    Pause(u64),
    Eof,
    Signal(String),
    Expect {
        pat: Value,
        note: Option<String>,
        within: Option<u64>,
        binds: Vec<String>,
        response_uses: Vec<String>,
    },
    Exit(Option<i32>, u64),
}

fn captures_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(i) = rest.find("{{$") {
                let after = &rest[i + 3..];
                let Some(j) = after.find("}}") else { break };
                out.push(after[..j].to_owned());
                rest = &after[j + 2..];
            }
        }
        Value::Array(a) => a.iter().for_each(|x| captures_in(x, out)),
        Value::Object(m) => m.values().for_each(|x| captures_in(x, out)),
        _ => {}
    }
}

/// A recorded gap between two writes with no output between them (or before the first write)
/// is kept as `>>pause`: it can matter (a signal before the runtime installed its handlers, a
/// frame split across writes).
fn pause_before(items: &mut Vec<Item>, last_in: Option<f64>, t: f64) {
    let sendish = matches!(
        items.last(),
        None | Some(Item::Send(_) | Item::Pause(_) | Item::Eof | Item::Signal(_))
    );
    if !sendish {
        return;
    }
    let gap = ((t - last_in.unwrap_or(0.0)) * 1000.0).round() as u64;
    if gap >= 100 {
        items.push(Item::Pause(gap));
    }
}

/// Converts transcript events into trace text.
pub fn to_trace(events: &[RawEvent], info: &ImportInfo) -> String {
    let mut red = Redactor::default();
    red.dirs = info.dirs.clone();
    red.prename(events);
    let mut items: Vec<Item> = Vec::new();
    let mut seg_start = 0.0f64;
    let mut last_in: Option<f64> = None;
    let mut last_any = 0.0f64;
    let mut needs_model = false;
    for e in events {
        match e {
            RawEvent::In { t, bytes } => {
                pause_before(&mut items, last_in, *t);
                items.push(Item::Send(red.redact_send(bytes)));
                last_in = Some(*t);
                seg_start = *t;
            }
            RawEvent::Eof { t } => {
                pause_before(&mut items, last_in, *t);
                items.push(Item::Eof);
                last_in = Some(*t);
                seg_start = *t;
            }
            RawEvent::Signal { t, name } => {
                pause_before(&mut items, last_in, *t);
                items.push(Item::Signal(name.clone()));
                last_in = Some(*t);
                seg_start = *t;
            }
            RawEvent::Out { t, line, truncated } => {
                let gap = t - seg_start;
                let within = (gap * 2.0 + 5.0 > 10.0).then(|| (gap * 2.0 + 5.0).ceil() as u64);
                let (pat, note, binds) = match truncated {
                    Some(n) => {
                        // What the prefix reveals, redacted like any frame (a child session's id).
                        let mut p = truncated_pattern(line);
                        let binds = red.redact(&mut p);
                        (
                            p,
                            Some(format!("recorded line of {n} bytes, stored truncated")),
                            binds,
                        )
                    }
                    None => match crate::wire::json::parse(line) {
                        Ok(p) => {
                            let mut v = p.value;
                            if v.get("result").and_then(|r| r.get("messageId")).is_some() {
                                needs_model = true;
                            }
                            let binds = red.redact(&mut v);
                            (v, None, binds)
                        }
                        Err(e) => (
                            Value::Object(Map::new()),
                            Some(format!(
                                "recorded line was not JSON ({e}): {}",
                                crate::trace::explain::clip(line, 80)
                            )),
                            Vec::new(),
                        ),
                    },
                };
                let mut uses = Vec::new();
                if pat.get("method").is_none() {
                    captures_in(&pat, &mut uses);
                }
                items.push(Item::Expect {
                    pat,
                    note,
                    within,
                    binds,
                    response_uses: uses,
                });
                last_any = last_any.max(*t);
            }
            RawEvent::Exit { t, code } => {
                let gap = t - last_in.unwrap_or(0.0).max(last_any);
                let within = ((gap * 3.0 + 5.0).ceil() as u64).max(15);
                items.push(Item::Exit(*code, within));
            }
        }
        last_any = last_any.max(event_t(e));
    }
    // Responses move right after the frame that first bound a capture they use (same segment).
    let mut i = 0;
    while i < items.len() {
        let target = if let Item::Expect { response_uses, .. } = &items[i] {
            let mut tgt = None;
            let mut j = i;
            while j > 0 {
                j -= 1;
                match &items[j] {
                    Item::Expect { binds, .. }
                        if response_uses.iter().any(|u| binds.contains(u)) =>
                    {
                        tgt = Some(j + 1);
                        break;
                    }
                    Item::Expect { .. } => {}
                    _ => break,
                }
            }
            tgt
        } else {
            None
        };
        if let Some(t) = target.filter(|t| *t < i) {
            let it = items.remove(i);
            items.insert(t, it);
        }
        i += 1;
    }
    let mut out = String::new();
    if let Some(h) = &info.header {
        out.push_str(h);
    } else {
        let _ = writeln!(out, "# case: {}", info.case);
        let _ = writeln!(out, "# source: {}", info.source);
        if let Some(d) = &info.description {
            let _ = writeln!(out, "# description: {d}");
        }
        let _ = writeln!(out, "# editions: current");
        if needs_model {
            let _ = writeln!(out, "# requires: model");
        }
    }
    for it in &items {
        match it {
            Item::Send(b) => {
                let complete_frame = b.last() == Some(&b'\n')
                    && b[..b.len() - 1].iter().all(|c| *c != b'\n' && *c != b'\r')
                    && std::str::from_utf8(&b[..b.len() - 1]).is_ok_and(|s| {
                        s.starts_with('{')
                            && s.ends_with('}')
                            && crate::wire::json::parse(s).is_ok()
                            && crate::trace::syntax::Trace::parse(&format!(">> {s}"), "x").is_ok()
                    });
                if complete_frame {
                    let s = std::str::from_utf8(&b[..b.len() - 1]).unwrap_or_default();
                    let _ = writeln!(out, ">> {s}");
                } else {
                    let _ = writeln!(out, ">>raw {}", escape_raw(b));
                }
            }
            Item::Pause(ms) => {
                let _ = writeln!(out, ">>pause {ms}ms");
            }
            Item::Eof => out.push_str(">>eof\n"),
            Item::Signal(s) => {
                let _ = writeln!(out, ">>signal {s}");
            }
            Item::Expect {
                pat, note, within, ..
            } => {
                out.push_str("<< ");
                out.push_str(&crate::wire::json::to_string(pat));
                if let Some(w) = within {
                    let _ = write!(out, " within {w}s");
                }
                if let Some(n) = note {
                    let _ = write!(out, " # {n}");
                }
                out.push('\n');
            }
            Item::Exit(code, within) => match code {
                Some(c) => {
                    let _ = writeln!(out, "== exit {c} within {within}s");
                }
                None => {
                    let _ = writeln!(out, "== exit any within {within}s");
                }
            },
        }
    }
    out
}
#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn partial_and_binary_sends_become_raw_with_pauses() {
        let t = r#"{"t":0.0,"dir":"in","line":"{\"id\":\"\\xe2\\x82","b64":"eyJpZCI6IuKC","partial":true}
{"t":0.5,"dir":"in","line":"x","b64":"rCJ9"}
"#;
        let out = import(t, "c", "src").unwrap();
        assert!(
            out.contains(
                ">>raw \"{\\\"id\\\":\\\"\\xe2\\x82\"\n>>pause 500ms\n>>raw \"\\xac\\\"}\\n\"\n"
            ),
            "{out}"
        );
    }
}
