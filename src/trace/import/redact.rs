//! Identity-preserving redaction: distinct UUIDs, tool-use ids and job ids become captures,
//! stamps and timing-derived values become wildcards, machine paths become `{{cwd}}`.

use super::RawEvent;
use crate::trace::pattern::is_uuid;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Replaces the recording machine's case directory (`/tmp/probe-<case>/cwd` and the like) with
/// `{{cwd}}`.
fn redact_paths(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"/tmp/probe-") {
            let rest = &bytes[i + 11..];
            let end = rest
                .iter()
                .position(|c| matches!(c, b'"' | b'\\' | b' ' | b'\n'))
                .unwrap_or(rest.len());
            let seg = &rest[..end];
            if let Some(p) = memchr::memmem::find(seg, b"/cwd") {
                out.extend_from_slice(b"{{cwd}}");
                i += 11 + p + 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Redaction state: distinct UUIDs and their capture names.
#[derive(Debug, Default)]
pub struct Redactor {
    names: HashMap<String, String>,
    counters: HashMap<&'static str, usize>,
    /// Exact directories to write as `{{cwd}}` / `{{home}}` (a recording's own case dirs).
    pub dirs: Vec<(String, &'static str)>,
    /// Names chosen ahead of first sight (message ids are named `m…` wherever they appear first).
    prenamed: HashMap<String, String>,
}

impl Redactor {
    /// Names the message ids (`result.messageId`) and child sessions (`subagent.started`) of a
    /// transcript ahead of time, so that captures read `{{$m1}}`/`{{$s1}}` where they first appear.
    pub fn prename(&mut self, events: &[RawEvent]) {
        let (mut m, mut c) = (0, 0);
        for e in events {
            let RawEvent::Out {
                line,
                truncated: None,
                ..
            } = e
            else {
                continue;
            };
            let Ok(p) = crate::wire::json::parse(line) else {
                continue;
            };
            let v = p.value;
            let (key, prefix) = if let Some(id) = v.get("result").and_then(|r| r.get("messageId")) {
                (id.as_str().map(str::to_owned), "m")
            } else if v.get("method").and_then(Value::as_str) == Some("subagent.started") {
                (
                    v.get("params")
                        .and_then(|p| p.get("childSessionId"))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    "s",
                )
            } else {
                (None, "")
            };
            if let Some(k) = key.filter(|k| is_uuid(k) && !self.prenamed.contains_key(k)) {
                let n = if prefix == "m" {
                    m += 1;
                    m
                } else {
                    c += 1;
                    c
                };
                self.prenamed.insert(k, format!("{prefix}{n}"));
            }
        }
        self.counters.insert("m", m);
        self.counters.insert("s", c);
    }

    /// The UUID a capture name was given to.
    pub fn value_of(&self, name: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(u, _)| u.as_str())
    }

    fn paths(&self, bytes: &[u8]) -> Vec<u8> {
        let mut b = redact_paths(bytes);
        for (dir, ph) in &self.dirs {
            if dir.is_empty() {
                continue;
            }
            let mut out = Vec::with_capacity(b.len());
            let mut i = 0;
            while let Some(off) = memchr::memmem::find(&b[i..], dir.as_bytes()) {
                out.extend_from_slice(&b[i..i + off]);
                out.extend_from_slice(ph.as_bytes());
                i += off + dir.len();
            }
            out.extend_from_slice(&b[i..]);
            b = out;
        }
        b
    }

    fn name_for(&mut self, uuid: &str, key: &str) -> (String, bool) {
        if let Some(n) = self.names.get(uuid) {
            return (n.clone(), false);
        }
        if let Some(n) = self.prenamed.get(uuid) {
            self.names.insert(uuid.to_owned(), n.clone());
            return (n.clone(), true);
        }
        let prefix = match key {
            "messageId" => "m",
            "toolu" => "tool",
            "job" => "job",
            "childSessionId" | "agentId" | "sessionId" | "parentSessionId" => "s",
            _ => "id",
        };
        let c = self.counters.entry(prefix).or_insert(0);
        *c += 1;
        let n = format!("{prefix}{c}");
        self.names.insert(uuid.to_owned(), n.clone());
        (n, true)
    }

    /// Redacts a parsed stdout frame in place; returns the captures it binds first.
    pub fn redact(&mut self, v: &mut Value) -> Vec<String> {
        let mut first = Vec::new();
        self.walk(v, "", &mut first);
        first
    }

    fn walk(&mut self, v: &mut Value, key: &str, first: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                let is_event = key == "event";
                for (k, child) in m.iter_mut() {
                    match (k.as_str(), &*child) {
                        ("time" | "time0", Value::Number(_)) => {
                            *child = Value::String("{{int}}".into())
                        }
                        ("seq", Value::Number(_)) if is_event => {
                            *child = Value::String("{{seq}}".into())
                        }
                        ("throughSeq", Value::Number(_)) => {
                            *child = Value::String("{{int}}".into())
                        }
                        // Retry back-off carries jitter.
                        ("delayMs", Value::Number(_)) => {
                            *child = Value::String("{{number}}".into())
                        }
                        // Wall-clock stamps under any name (`startedAt`, `childCreatedAt` …).
                        (k, Value::Number(n))
                            if k.ends_with("At")
                                || n.as_f64().is_some_and(|f| {
                                    (1e12..1e13).contains(&f) && f.fract() == 0.0
                                }) =>
                        {
                            *child = Value::String("{{int}}".into())
                        }
                        // `texts`: how the model's stream was chunked (a captured id can be split across chunks).
                        ("sourceEventSeqs" | "messageSeqs" | "dt" | "texts", Value::Array(_)) => {
                            *child = Value::String("{{array}}".into())
                        }
                        _ => self.walk(child, k, first),
                    }
                }
            }
            Value::Array(a) => {
                for x in a {
                    self.walk(x, key, first);
                }
            }
            Value::String(s) => {
                let red = self.redact_str(s, key, first);
                if let Some(r) = red {
                    *s = r;
                }
            }
            _ => {}
        }
    }

    fn redact_str(&mut self, orig: &str, key: &str, first: &mut Vec<String>) -> Option<String> {
        let paths = String::from_utf8(self.paths(orig.as_bytes())).ok()?;
        let s = paths.as_str();
        // Tool-use ids come from the model (stub) and job ids (`bash-<hex>`) from the runtime:
        // opaque, but the same id recurs in later events.
        let toolu = s.starts_with("toolu_") && !s.contains(char::is_whitespace);
        if is_uuid(s) || toolu || is_job_id(s) {
            let key = if is_uuid(s) {
                key
            } else if toolu {
                "toolu"
            } else {
                "job"
            };
            let (n, new) = self.name_for(s, key);
            if new {
                first.push(n.clone());
            }
            return Some(format!("{{{{${n}}}}}"));
        }
        // UUIDs embedded in longer text.
        let b = s.as_bytes();
        let mut out = String::new();
        let mut last = 0;
        let mut i = 0;
        let mut any = false;
        while i + 36 <= b.len() {
            if s.is_char_boundary(i) && s.is_char_boundary(i + 36) && is_uuid(&s[i..i + 36]) {
                let (n, new) = self.name_for(&s[i..i + 36], key);
                if new {
                    first.push(n.clone());
                }
                out.push_str(&s[last..i]);
                let _ = write!(out, "{{{{${n}}}}}");
                i += 36;
                last = i;
                any = true;
            } else {
                i += 1;
            }
        }
        if any {
            out.push_str(&s[last..]);
            return Some(out);
        }
        (paths != orig).then_some(paths)
    }

    /// Replaces known UUIDs in a send with their captures (a client echoing a runtime's id).
    pub fn redact_send(&self, bytes: &[u8]) -> Vec<u8> {
        let b = self.paths(bytes);
        let Ok(s) = std::str::from_utf8(&b) else {
            return b;
        };
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        let mut i = 0;
        while i + 36 <= s.len() {
            if s.is_char_boundary(i) && s.is_char_boundary(i + 36) {
                if let Some(n) = self.names.get(&s[i..i + 36]) {
                    out.push_str(&s[last..i]);
                    let _ = write!(out, "{{{{${n}}}}}");
                    i += 36;
                    last = i;
                    continue;
                }
            }
            i += 1;
        }
        out.push_str(&s[last..]);
        out.into_bytes()
    }
}

/// `<word>-<16+ hex digits>`: a random runtime id such as a job id.
fn is_job_id(s: &str) -> bool {
    match s.split_once('-') {
        Some((w, hex)) => {
            !w.is_empty()
                && w.bytes().all(|c| c.is_ascii_lowercase())
                && hex.len() >= 16
                && hex.bytes().all(|c| c.is_ascii_hexdigit())
        }
        None => false,
    }
}
#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    #[test]
    fn each_distinct_uuid_becomes_one_capture_and_later_sends_use_it() {
        let t = r#"{"t":0.01,"dir":"in","line":"{\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\"}}"}
{"t":0.2,"dir":"out","line":"{\"jsonrpc\":\"2.0\",\"method\":\"session.event\",\"params\":{\"sessionId\":\"s1\",\"event\":{\"type\":\"agent/inbox/spliced\",\"seq\":3,\"time\":17,\"data\":{\"inserted\":[{\"id\":\"5ed663b5-b9d0-46b4-a8c7-1720220cb789\"}]}}}}"}
{"t":0.21,"dir":"out","line":"{\"jsonrpc\":\"2.0\",\"method\":\"session.status\",\"params\":{\"sessionId\":\"s1\",\"status\":\"running\"}}"}
{"t":0.3,"dir":"out","line":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"messageId\":\"5ed663b5-b9d0-46b4-a8c7-1720220cb789\"}}"}
{"t":0.4,"dir":"in","line":"{\"id\":3,\"method\":\"x\",\"params\":{\"m\":\"5ed663b5-b9d0-46b4-a8c7-1720220cb789\"}}"}
{"t":0.45,"dir":"in","line":"","note":"EOF (stdin closed)"}
{"exit":0,"t":0.6,"how":"self"}
"#;
        let out = import(t, "c", "src").unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[4..].to_vec(),
            vec![
                r#">> {"id":2,"method":"session/prompt","params":{"sessionId":"s1"}}"#,
                r#"<< {"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"agent/inbox/spliced","seq":"{{seq}}","time":"{{int}}","data":{"inserted":[{"id":"{{$m1}}"}]}}}}"#,
                r#"<< {"jsonrpc":"2.0","id":2,"result":{"messageId":"{{$m1}}"}}"#,
                r#"<< {"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s1","status":"running"}}"#,
                r#">> {"id":3,"method":"x","params":{"m":"{{$m1}}"}}"#,
                ">>eof",
                "== exit 0 within 15s",
            ]
        );
        crate::trace::syntax::Trace::parse(&out, "imported").unwrap();
    }

    #[test]
    fn machine_paths_become_cwd() {
        assert_eq!(
            redact_paths(b"\"/tmp/probe-bytes_bom-mtn6lydn/cwd\""),
            b"\"{{cwd}}\""
        );
        assert_eq!(redact_paths(b"/tmp/probe-x/cwd/sub"), b"{{cwd}}/sub");
    }
}
