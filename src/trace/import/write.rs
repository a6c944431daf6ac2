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

/// Converts transcript events into trace text.
pub fn to_trace(events: &[RawEvent], info: &ImportInfo) -> String {
    let mut red = Redactor::default();
    red.dirs = info.dirs.clone();
    red.prename(events);
    let mut c = Collect {
        red,
        items: Vec::new(),
        seg_start: 0.0,
        last_in: None,
        last_any: 0.0,
        needs_model: false,
    };
    for e in events {
        c.event(e);
    }
    let mut items = c.items;
    responses_after_binders(&mut items);
    let mut out = header(info, c.needs_model);
    for it in &items {
        write_item(&mut out, it);
    }
    out
}

/// The items of a transcript, collected event by event, and the times they are timed by.
struct Collect {
    red: Redactor,
    items: Vec<Item>,
    /// When the current segment (what the runtime writes after the last input) started.
    seg_start: f64,
    /// The last input's time (a write, EOF or signal).
    last_in: Option<f64>,
    /// The last event's time.
    last_any: f64,
    /// A response carries a `messageId`: the trace needs the model (`# requires: model`).
    needs_model: bool,
}

impl Collect {
    fn event(&mut self, e: &RawEvent) {
        match e {
            RawEvent::In { t, bytes } => {
                let send = Item::Send(self.red.redact_send(bytes));
                self.input(*t, send);
            }
            RawEvent::Eof { t } => self.input(*t, Item::Eof),
            RawEvent::Signal { t, name } => self.input(*t, Item::Signal(name.clone())),
            RawEvent::Out { t, line, truncated } => self.output(*t, line, *truncated),
            RawEvent::Exit { t, code } => {
                let gap = t - self.last_in.unwrap_or(0.0).max(self.last_any);
                let within = ((gap * 3.0 + 5.0).ceil() as u64).max(15);
                self.items.push(Item::Exit(*code, within));
            }
        }
        self.last_any = self.last_any.max(event_t(e));
    }

    /// An input at `t`, after the pause before it; it starts a segment.
    fn input(&mut self, t: f64, item: Item) {
        self.pause_before(t);
        self.items.push(item);
        self.last_in = Some(t);
        self.seg_start = t;
    }

    /// A recorded gap between two writes with no output between them (or before the first
    /// write) is kept as `>>pause`: it can matter (a signal before the runtime installed its
    /// handlers, a frame split across writes).
    fn pause_before(&mut self, t: f64) {
        let sendish = matches!(
            self.items.last(),
            None | Some(Item::Send(_) | Item::Pause(_) | Item::Eof | Item::Signal(_))
        );
        if !sendish {
            return;
        }
        let gap = ((t - self.last_in.unwrap_or(0.0)) * 1000.0).round() as u64;
        if gap >= 100 {
            self.items.push(Item::Pause(gap));
        }
    }

    /// The expectation of stdout line `line` at `t`, given twice the time its segment took to
    /// come (and 5 s) when that is over the default 10 s.
    fn output(&mut self, t: f64, line: &str, truncated: Option<usize>) {
        let gap = t - self.seg_start;
        let within = (gap * 2.0 + 5.0 > 10.0).then(|| (gap * 2.0 + 5.0).ceil() as u64);
        let (pat, note, binds) = self.pattern(line, truncated);
        let mut uses = Vec::new();
        if pat.get("method").is_none() {
            captures_in(&pat, &mut uses);
        }
        self.items.push(Item::Expect {
            pat,
            note,
            within,
            binds,
            response_uses: uses,
        });
        self.last_any = self.last_any.max(t);
    }

    /// The redacted pattern of a stdout line, a note on it, and the captures it binds first.
    fn pattern(
        &mut self,
        line: &str,
        truncated: Option<usize>,
    ) -> (Value, Option<String>, Vec<String>) {
        if let Some(n) = truncated {
            // What the prefix reveals, redacted like any frame (a child session's id).
            let mut p = truncated_pattern(line);
            let binds = self.red.redact(&mut p);
            let note = format!("recorded line of {n} bytes, stored truncated");
            return (p, Some(note), binds);
        }
        match crate::wire::json::parse(line) {
            Ok(p) => {
                let mut v = p.value;
                if v.get("result").and_then(|r| r.get("messageId")).is_some() {
                    self.needs_model = true;
                }
                let binds = self.red.redact(&mut v);
                (v, None, binds)
            }
            Err(e) => {
                let clipped = crate::trace::explain::clip(line, 80);
                let note = format!("recorded line was not JSON ({e}): {clipped}");
                (Value::Object(Map::new()), Some(note), Vec::new())
            }
        }
    }
}

/// Responses move right after the frame that first bound a capture they use (same segment).
fn responses_after_binders(items: &mut Vec<Item>) {
    let mut i = 0;
    while i < items.len() {
        let target = match &items[i] {
            Item::Expect { response_uses, .. } => binder_of(&items[..i], response_uses),
            _ => None,
        };
        if let Some(t) = target.filter(|t| *t < i) {
            let it = items.remove(i);
            items.insert(t, it);
        }
        i += 1;
    }
}

/// Where a response using `uses` goes among the expectations `before` it (of its segment):
/// right after the last one that binds one of them.
fn binder_of(before: &[Item], uses: &[String]) -> Option<usize> {
    for (j, item) in before.iter().enumerate().rev() {
        match item {
            Item::Expect { binds, .. } if uses.iter().any(|u| binds.contains(u)) => {
                return Some(j + 1)
            }
            Item::Expect { .. } => {}
            _ => return None,
        }
    }
    None
}

/// The trace's header: `info`'s own, or the generated `# case/source/editions`.
fn header(info: &ImportInfo, needs_model: bool) -> String {
    let mut out = String::new();
    if let Some(h) = &info.header {
        out.push_str(h);
        return out;
    }
    let _ = writeln!(out, "# case: {}", info.case);
    let _ = writeln!(out, "# source: {}", info.source);
    if let Some(d) = &info.description {
        let _ = writeln!(out, "# description: {d}");
    }
    let _ = writeln!(out, "# editions: current");
    if needs_model {
        let _ = writeln!(out, "# requires: model");
    }
    out
}

/// One item's trace line.
fn write_item(out: &mut String, it: &Item) {
    match it {
        Item::Send(b) => match complete_frame(b) {
            Some(s) => {
                let _ = writeln!(out, ">> {s}");
            }
            None => {
                let _ = writeln!(out, ">>raw {}", escape_raw(b));
            }
        },
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
        Item::Exit(Some(c), within) => {
            let _ = writeln!(out, "== exit {c} within {within}s");
        }
        Item::Exit(None, within) => {
            let _ = writeln!(out, "== exit any within {within}s");
        }
    }
}

/// The frame a write holds when it is one whole JSON object line a `>>` line can say (else it
/// is written `>>raw`).
fn complete_frame(b: &[u8]) -> Option<&str> {
    let body = b.strip_suffix(b"\n")?;
    if body.iter().any(|c| *c == b'\n' || *c == b'\r') {
        return None;
    }
    let s = std::str::from_utf8(body).ok()?;
    let frame = s.starts_with('{')
        && s.ends_with('}')
        && crate::wire::json::parse(s).is_ok()
        && crate::trace::syntax::Trace::parse(&format!(">> {s}"), "x").is_ok();
    frame.then_some(s)
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
