//! Import of raw transcripts (both layouts of the real runtime's recordings in
//! `fixtures/real-0.2.1rc2/raw/`, and what `record` writes) into traces, with identity-preserving
//! redaction:
//! - each distinct UUID (and model tool-use id `toolu_…`) becomes one capture (`{{$m1}}` for
//!   message ids, `{{$s1}}` child sessions, `{{$tool1}}`, `{{$id1}}` …), bound where it first
//!   appears and substituted into later sends;
//! - retry back-off (`delayMs`, jittered) becomes `{{number}}`; wall-clock stamps (`…At`, any
//!   epoch-millisecond integer) become `{{int}}`; random job ids (`bash-<hex>`) become captures;
//! - `time`/`time0` become `{{int}}`; an event's `seq` becomes `{{seq}}` (increasing per session)
//!   and values derived from seq or stream timing (`throughSeq`, `sourceEventSeqs`, `messageSeqs`,
//!   `dt`, the chunking `texts`) wildcards;
//! - paths of the recording machine's case directory become `{{cwd}}`.
//!
//! Orderings the contract leaves open stay open by construction of the matcher (sessions are
//! separate lanes, responses match by id); a prompt response is written right after the receipt
//! that bound its messageId, so it is ordered after the receipt only (docs/CONTRACT.md#s5).

use super::pattern::is_uuid;
use super::syntax::escape_raw;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Why a transcript cannot be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// 1-based line in the transcript.
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "transcript line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ImportError {}

/// One event of a transcript, layout-independent.
#[derive(Debug, Clone, PartialEq)]
pub enum RawEvent {
    /// Bytes written to stdin.
    In {
        /// Seconds since spawn.
        t: f64,
        /// Exact bytes.
        bytes: Vec<u8>,
    },
    /// One stdout line; `truncated` holds the full length when only a prefix was stored.
    Out {
        /// Seconds since spawn.
        t: f64,
        /// The line (or its stored prefix).
        line: String,
        /// Full length, when the stored line is a prefix.
        truncated: Option<usize>,
    },
    /// stdin closed.
    Eof {
        /// Seconds since spawn.
        t: f64,
    },
    /// A signal sent (`TERM`, `INT` …).
    Signal {
        /// Seconds since spawn.
        t: f64,
        /// Name without SIG.
        name: String,
    },
    /// The process ended.
    Exit {
        /// Seconds since spawn.
        t: f64,
        /// Exit code (None: unknown).
        code: Option<i32>,
    },
}

/// Parses either transcript layout (`{"t","dir","line"…}` lines with a final `{"exit"…}`, or a
/// `{scenario…}` header followed by `{"t","dir","raw"}` lines).
pub fn parse_transcript(text: &str) -> Result<(Vec<RawEvent>, Option<String>), ImportError> {
    let mut out = Vec::new();
    let mut description = None;
    let mut header_exit: Option<i32> = None;
    for (i, l) in text.lines().enumerate() {
        let err = |msg: String| ImportError { line: i + 1, msg };
        if l.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(l).map_err(|e| err(format!("not JSON: {e}")))?;
        let o = v
            .as_object()
            .ok_or_else(|| err("not a JSON object".into()))?;
        let t = o.get("t").and_then(Value::as_f64).unwrap_or(0.0);
        if o.contains_key("scenario") {
            description = o
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            header_exit = o.get("exit_code").and_then(Value::as_i64).map(|c| c as i32);
            continue;
        }
        if o.contains_key("exit") {
            out.push(RawEvent::Exit {
                t,
                code: o.get("exit").and_then(Value::as_i64).map(|c| c as i32),
            });
            continue;
        }
        let dir = o.get("dir").and_then(Value::as_str).unwrap_or("");
        let truncated = o
            .get("truncated")
            .and_then(Value::as_bool)
            .filter(|b| *b)
            .and(o.get("len").and_then(Value::as_u64).map(|n| n as usize));
        match dir {
            "in" => {
                if let Some(note) = o.get("note").and_then(Value::as_str) {
                    if note.starts_with("EOF") {
                        out.push(RawEvent::Eof { t });
                    } else if let Some(sig) = note.strip_prefix("SIG") {
                        out.push(RawEvent::Signal {
                            t,
                            name: sig.to_owned(),
                        });
                    } else {
                        return Err(err(format!("unknown note {note:?}")));
                    }
                    continue;
                }
                if let Some(n) = truncated {
                    return Err(err(format!(
                        "a {n}-byte send is stored truncated; it cannot be replayed"
                    )));
                }
                let bytes = if let Some(raw) = o.get("raw").and_then(Value::as_str) {
                    if raw.contains("chars truncated>") {
                        return Err(err(
                            "a send is stored truncated; it cannot be replayed".into()
                        ));
                    }
                    raw.as_bytes().to_vec()
                } else {
                    let mut b = match o.get("b64").and_then(Value::as_str) {
                        Some(b64) => base64_decode(b64).ok_or_else(|| err("bad base64".into()))?,
                        None => o
                            .get("line")
                            .and_then(Value::as_str)
                            .ok_or_else(|| err("an `in` line without `line`".into()))?
                            .as_bytes()
                            .to_vec(),
                    };
                    let partial = o.get("partial").and_then(Value::as_bool).unwrap_or(false)
                        || o.get("nonl").and_then(Value::as_bool).unwrap_or(false);
                    if !partial {
                        b.push(b'\n');
                    }
                    b
                };
                out.push(RawEvent::In { t, bytes });
            }
            "out" => {
                let line = o
                    .get("line")
                    .or_else(|| o.get("raw"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| err("an `out` line without `line`".into()))?;
                out.push(RawEvent::Out {
                    t,
                    line: line.to_owned(),
                    truncated,
                });
            }
            other => return Err(err(format!("unknown dir {other:?}"))),
        }
    }
    if let Some(code) = header_exit {
        // The contract layout records no EOF; its runs ended by shutdown or by closing stdin.
        let t = out.iter().map(event_t).fold(0.0, f64::max);
        out.push(RawEvent::Eof { t });
        out.push(RawEvent::Exit {
            t,
            code: Some(code),
        });
    }
    Ok((out, description))
}

fn event_t(e: &RawEvent) -> f64 {
    match e {
        RawEvent::In { t, .. }
        | RawEvent::Out { t, .. }
        | RawEvent::Eof { t }
        | RawEvent::Signal { t, .. }
        | RawEvent::Exit { t, .. } => *t,
    }
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            b'\n' | b'\r' => continue,
            _ => return None,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

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
    let mut red = Redactor {
        dirs: info.dirs.clone(),
        ..Redactor::default()
    };
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
                                super::explain::clip(line, 80)
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
                            && super::syntax::Trace::parse(&format!(">> {s}"), "x").is_ok()
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

/// Imports a transcript file's text into trace text.
pub fn import(text: &str, case: &str, source: &str) -> Result<String, ImportError> {
    let (events, description) = parse_transcript(text)?;
    Ok(to_trace(
        &events,
        &ImportInfo {
            case: case.to_owned(),
            source: source.to_owned(),
            description,
            ..ImportInfo::default()
        },
    ))
}

#[cfg(test)]
mod tests {
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
        super::super::syntax::Trace::parse(&out, "imported").unwrap();
    }

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

    #[test]
    fn machine_paths_become_cwd() {
        assert_eq!(
            redact_paths(b"\"/tmp/probe-bytes_bom-mtn6lydn/cwd\""),
            b"\"{{cwd}}\""
        );
        assert_eq!(redact_paths(b"/tmp/probe-x/cwd/sub"), b"{{cwd}}/sub");
    }

    #[test]
    fn a_truncated_send_is_an_error_naming_its_line() {
        let t = "{\"t\":0.0,\"dir\":\"in\",\"line\":\"{\\\"pad\",\"len\":9000,\"sha256\":\"x\",\"truncated\":true}\n";
        let e = import(t, "c", "s").unwrap_err();
        assert_eq!(
            e.to_string(),
            "transcript line 1: a 9000-byte send is stored truncated; it cannot be replayed"
        );
    }
}
