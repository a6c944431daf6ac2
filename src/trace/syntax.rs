//! The trace text format (docs/TRACES.md): parsing into [`Trace`], with errors that name
//! file:line:column and what was expected. Never panics on any input.

use super::pattern::{self, Pat};
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// A parse error: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// File name (or the name given to [`Trace::parse`]).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub col: usize,
    /// What was wrong or expected.
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.msg)
    }
}

impl std::error::Error for ParseError {}

/// How many frames one expectation stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mult {
    /// Exactly one (`<<`).
    One,
    /// Zero or one (`<<?`).
    Optional,
    /// Zero or more (`<<*`).
    Star,
}

/// What to write to the runtime.
#[derive(Debug, Clone, PartialEq)]
pub enum Send {
    /// A frame template, sent verbatim (placeholders substituted) plus `\n`.
    Frame {
        /// The text as written.
        text: String,
        /// Its `id`, as JSON text, when it has one (used to order its response).
        id: Option<String>,
        /// Its `params.sessionId` pattern, when it has one.
        session: Option<Pat>,
    },
    /// Raw bytes (from `>>raw "…"` or `>>bytes hex`); `{{…}}` placeholders are substituted.
    Raw(Vec<u8>),
    /// Wait before the next send (frames are still read meanwhile).
    Pause(Duration),
    /// Close the runtime's stdin.
    Eof,
    /// Send a signal to the runtime (`TERM`, `INT`, `KILL`, `HUP`).
    Signal(i32),
}

/// An expected frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectFrame {
    /// The compiled pattern.
    pub pat: Pat,
    /// `<<`, `<<?` or `<<*`.
    pub mult: Mult,
    /// Index of its unordered group, if any.
    pub group: Option<usize>,
    /// Source text of the line (for failure output).
    pub text: String,
}

/// One step of a trace, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum StepKind {
    /// Write something.
    Send(Send),
    /// Expect a frame.
    Expect(ExpectFrame),
    /// Expect the process to exit with one of these codes (`None` = any code).
    Exit(Option<Vec<i32>>),
}

/// A step and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What it does.
    pub kind: StepKind,
    /// 1-based line in the trace file.
    pub line: usize,
    /// `within` deadline override.
    pub within: Option<Duration>,
}

/// Per-case metadata (`# key: value` lines).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    /// `# case:` (defaults to the file stem).
    pub case: String,
    /// `# contract:` sections and rule text.
    pub contract: Vec<String>,
    /// `# editions:` (empty = all).
    pub editions: Vec<crate::edition::Edition>,
    /// `# severity:` MUST (default) or SHOULD.
    pub severity: String,
    /// `# timeout:` default deadline of each expectation in this case.
    pub timeout: Option<Duration>,
    /// `# requires:` capabilities the runner must provide (e.g. `model-stub`).
    pub requires: Vec<String>,
    /// `# env: K=V` extra environment variables.
    pub env: Vec<(String, String)>,
    /// `# source:` where an imported trace came from.
    pub source: Option<String>,
    /// `# continues:` a case whose cwd and DSH_HOME this one reuses (a later process).
    pub continues: Option<String>,
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// File name used in messages.
    pub file: String,
    /// Metadata.
    pub meta: Meta,
    /// Steps in order.
    pub steps: Vec<Step>,
    /// `ignore` rules (whole case).
    pub ignores: Vec<(Pat, usize)>,
    /// `== stdout frames-only` (default) or `== stdout any`.
    pub frames_only: bool,
}

impl Trace {
    /// Parses trace text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Trace, ParseError> {
        let expanded = super::repeat::expand(text, file)?;
        let r = Parser::new(file).run(&expanded);
        match (r, &expanded) {
            (Err(mut e), std::borrow::Cow::Owned(_)) => {
                e.col = super::repeat::source_col(text, e.line, e.col);
                Err(e)
            }
            (r, _) => r,
        }
    }

    /// Reads and parses a trace file.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<Trace, ParseError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ParseError {
            file: file.clone(),
            line: 0,
            col: 0,
            msg: format!("cannot read trace: {e}"),
        })?;
        let mut t = Trace::parse(&text, &file)?;
        if t.meta.case.is_empty() {
            t.meta.case = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        Ok(t)
    }

    /// Whether the case applies to an edition (no `# editions:` = all).
    pub fn applies_to(&self, edition: crate::edition::Edition) -> bool {
        self.meta.editions.is_empty() || self.meta.editions.contains(&edition)
    }
}

struct Parser {
    file: String,
    line: usize,
    group: Option<usize>,
    groups: usize,
    group_line: usize,
}

fn col_of(line: &str, byte: usize) -> usize {
    line[..byte.min(line.len())].chars().count() + 1
}

impl Parser {
    fn new(file: &str) -> Self {
        Parser {
            file: file.to_owned(),
            line: 0,
            group: None,
            groups: 0,
            group_line: 0,
        }
    }

    fn err(&self, src: &str, at: usize, msg: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.clone(),
            line: self.line,
            col: col_of(src, at),
            msg: msg.into(),
        }
    }

    fn run(mut self, text: &str) -> Result<Trace, ParseError> {
        let mut t = Trace {
            file: self.file.clone(),
            meta: Meta {
                severity: "MUST".into(),
                ..Meta::default()
            },
            steps: Vec::new(),
            ignores: Vec::new(),
            frames_only: true,
        };
        for (i, raw) in text.split('\n').enumerate() {
            self.line = i + 1;
            let src = raw.strip_suffix('\r').unwrap_or(raw);
            let lead = src.len() - src.trim_start().len();
            let body = src.trim();
            if body.is_empty() {
                continue;
            }
            if let Some(c) = body.strip_prefix('#') {
                self.meta(&mut t.meta, src, lead, c)?;
            } else if let Some(r) = body.strip_prefix(">>") {
                let send = self.send(src, lead + 2, r)?;
                t.steps.push(Step {
                    kind: StepKind::Send(send),
                    line: self.line,
                    within: None,
                });
            } else if let Some(r) = body.strip_prefix("<<") {
                if let Some(step) = self.expect(src, lead + 2, r)? {
                    t.steps.push(step);
                }
            } else if let Some(r) = body.strip_prefix("==") {
                self.process(&mut t, src, lead + 2, r)?;
            } else if let Some(r) = body.strip_prefix("ignore") {
                let at = lead + 6;
                let (v, within, _) = self.json_then_tail(src, at, r)?;
                if within.is_some() {
                    return Err(self.err(src, at, "`within` does not apply to ignore rules"));
                }
                let p = pattern::compile(&v, false).map_err(|m| self.err(src, at, m))?;
                t.ignores.push((p, self.line));
            } else {
                return Err(self.err(
                    src,
                    lead,
                    "expected `>>` (send), `<<` (expect), `==` (process expectation), `ignore` or `#` (comment/metadata)",
                ));
            }
        }
        if self.group.is_some() {
            self.line = self.group_line;
            return Err(self.err("", 0, "`<<unordered` group is never closed with `<<end`"));
        }
        Ok(t)
    }

    fn meta(&self, m: &mut Meta, src: &str, lead: usize, c: &str) -> Result<(), ParseError> {
        let c = c.trim_start();
        let Some((key, val)) = c.split_once(':') else {
            return Ok(());
        };
        let val = val.trim();
        let at = lead + 1 + src[lead + 1..].find(':').unwrap_or(0) + 1;
        match key.trim() {
            "case" => m.case = val.to_owned(),
            "contract" => m.contract.push(val.to_owned()),
            "editions" => {
                for e in val.split([' ', ',']).filter(|e| !e.is_empty()) {
                    match e.parse() {
                        Ok(ed) => m.editions.push(ed),
                        Err(err) => return Err(self.err(src, at, err.to_string())),
                    }
                }
            }
            "severity" => {
                if !matches!(val, "MUST" | "SHOULD") {
                    return Err(self.err(src, at, "expected severity MUST or SHOULD"));
                }
                m.severity = val.to_owned();
            }
            "timeout" => m.timeout = Some(self.duration(src, at, val)?),
            "requires" => m.requires.extend(val.split_whitespace().map(str::to_owned)),
            "env" => {
                let Some((k, v)) = val.split_once('=') else {
                    return Err(self.err(src, at, "expected `# env: NAME=value`"));
                };
                m.env.push((k.trim().to_owned(), v.trim().to_owned()));
            }
            "source" => m.source = Some(val.to_owned()),
            "continues" => m.continues = Some(val.to_owned()),
            _ => {} // any other `# word: text` is a comment
        }
        Ok(())
    }

    fn duration(&self, src: &str, at: usize, s: &str) -> Result<Duration, ParseError> {
        let s = s.trim();
        let (num, mul) = if let Some(n) = s.strip_suffix("ms") {
            (n, 0.001)
        } else if let Some(n) = s.strip_suffix('s') {
            (n, 1.0)
        } else if let Some(n) = s.strip_suffix('m') {
            (n, 60.0)
        } else {
            return Err(self.err(
                src,
                at,
                format!("expected a duration such as 5s or 500ms, found `{s}`"),
            ));
        };
        match num.trim().parse::<f64>() {
            Ok(f) if f >= 0.0 && f.is_finite() && f * mul < 1e7 => {
                Ok(Duration::from_secs_f64(f * mul))
            }
            _ => Err(self.err(
                src,
                at,
                format!("expected a duration such as 5s or 500ms, found `{s}`"),
            )),
        }
    }

    /// Parses `JSON [within D] [# comment]` starting at byte `at` of `src` (`r` is the rest).
    fn json_then_tail(
        &self,
        src: &str,
        at: usize,
        r: &str,
    ) -> Result<(Value, Option<Duration>, String), ParseError> {
        let ws = r.len() - r.trim_start().len();
        let start = at + ws;
        let r = r.trim_start();
        if r.is_empty() {
            return Err(self.err(src, start, "expected a JSON value"));
        }
        let end = json_extent(r).map_err(|(off, m)| self.err(src, start + off, m))?;
        let text = &r[..end];
        let v = crate::wire::json::parse(text)
            .map_err(|e| self.err(src, start + e.offset, format!("invalid JSON: {}", e.what)))?
            .value;
        let within = self.tail(src, start + end, &r[end..])?;
        Ok((v, within, text.to_owned()))
    }

    fn tail(&self, src: &str, at: usize, rest: &str) -> Result<Option<Duration>, ParseError> {
        let t = rest.trim_start();
        let at = at + (rest.len() - t.len());
        if t.is_empty() || t.starts_with('#') {
            return Ok(None);
        }
        if let Some(d) = t.strip_prefix("within") {
            let d = d.split('#').next().unwrap_or("");
            return Ok(Some(self.duration(src, at + 6, d)?));
        }
        Err(self.err(
            src,
            at,
            "expected `within <duration>` or `# comment` after the JSON value",
        ))
    }

    fn send(&self, src: &str, at: usize, r: &str) -> Result<Send, ParseError> {
        let word_len = r.find(|c: char| c.is_whitespace()).unwrap_or(r.len());
        let (word, rest) = r.split_at(word_len);
        let rest_at = at + word_len;
        Ok(match word {
            "" => {
                let (v, within, text) = self.json_then_tail(src, rest_at, rest)?;
                if within.is_some() {
                    return Err(self.err(src, at, "`within` applies to expectations, not sends"));
                }
                let id = match v.get("id") {
                    Some(id @ (Value::String(_) | Value::Number(_))) => {
                        Some(crate::wire::json::to_string(id))
                    }
                    _ => None,
                };
                let session = match v.get("params").and_then(|p| p.get("sessionId")) {
                    Some(s @ Value::String(_)) => pattern::compile(s, false).ok(),
                    _ => None,
                };
                Send::Frame { text, id, session }
            }
            "raw" => {
                let t = rest.trim_start();
                let a = rest_at + (rest.len() - t.len());
                let (bytes, used) = unescape(t).map_err(|(off, m)| self.err(src, a + off, m))?;
                self.tail_none(src, a + used, &t[used..])?;
                Send::Raw(bytes)
            }
            "bytes" => {
                let t = rest.split('#').next().unwrap_or("");
                let hex: String = t.chars().filter(|c| !c.is_whitespace()).collect();
                if !hex.len().is_multiple_of(2) || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Err(self.err(src, rest_at, "expected an even number of hex digits after `>>bytes`"));
                }
                Send::Raw(
                    (0..hex.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0))
                        .collect(),
                )
            }
            "pause" => Send::Pause(self.duration(src, rest_at, rest.split('#').next().unwrap_or(""))?),
            "eof" => {
                self.tail_none(src, rest_at, rest)?;
                Send::Eof
            }
            "signal" => {
                let s = rest.split('#').next().unwrap_or("").trim();
                let sig = match s.trim_start_matches("SIG") {
                    "TERM" => libc::SIGTERM,
                    "INT" => libc::SIGINT,
                    "KILL" => libc::SIGKILL,
                    "HUP" => libc::SIGHUP,
                    _ => return Err(self.err(src, rest_at, "expected TERM, INT, KILL or HUP after `>>signal`")),
                };
                Send::Signal(sig)
            }
            other => {
                return Err(self.err(
                    src,
                    at,
                    format!("unknown send `>>{other}` (expected `>> <json>`, `>>raw \"…\"`, `>>bytes <hex>`, `>>pause <duration>`, `>>eof` or `>>signal TERM|INT`)"),
                ))
            }
        })
    }

    fn tail_none(&self, src: &str, at: usize, rest: &str) -> Result<(), ParseError> {
        let t = rest.trim_start();
        if t.is_empty() || t.starts_with('#') {
            Ok(())
        } else {
            Err(self.err(
                src,
                at + (rest.len() - t.len()),
                "expected end of line or `# comment`",
            ))
        }
    }

    fn expect(&mut self, src: &str, at: usize, r: &str) -> Result<Option<Step>, ParseError> {
        let word_len = r.find(|c: char| c.is_whitespace()).unwrap_or(r.len());
        let (word, rest) = r.split_at(word_len);
        let (mult, exact) = match word {
            "" => (Mult::One, false),
            "*" => (Mult::Star, false),
            "?" => (Mult::Optional, false),
            "exact" | "=" => (Mult::One, true),
            "?exact" => (Mult::Optional, true),
            "*exact" => (Mult::Star, true),
            "unordered" => {
                self.tail_none(src, at + word_len, rest)?;
                if self.group.is_some() {
                    return Err(self.err(src, at, "unordered groups do not nest"));
                }
                self.group = Some(self.groups);
                self.groups += 1;
                self.group_line = self.line;
                return Ok(None);
            }
            "end" => {
                self.tail_none(src, at + word_len, rest)?;
                if self.group.take().is_none() {
                    return Err(self.err(src, at, "`<<end` without an open `<<unordered`"));
                }
                return Ok(None);
            }
            other => {
                return Err(self.err(
                    src,
                    at,
                    format!("unknown expectation `<<{other}` (expected `<<`, `<<?`, `<<*`, `<<exact`, `<<unordered` or `<<end`)"),
                ))
            }
        };
        let (v, within, text) = self.json_then_tail(src, at + word_len, rest)?;
        if !v.is_object() {
            return Err(self.err(
                src,
                at + word_len,
                "an expected frame must be a JSON object pattern",
            ));
        }
        let pat = pattern::compile(&v, exact).map_err(|m| self.err(src, at + word_len, m))?;
        let _ = text;
        Ok(Some(Step {
            kind: StepKind::Expect(ExpectFrame {
                pat,
                mult,
                group: self.group,
                text: src.trim().to_owned(),
            }),
            line: self.line,
            within,
        }))
    }

    fn process(&mut self, t: &mut Trace, src: &str, at: usize, r: &str) -> Result<(), ParseError> {
        let body = r.split('#').next().unwrap_or("");
        let mut words = body.split_whitespace();
        match words.next() {
            Some("exit") => {
                let codes = match words.next() {
                    Some("any") => None,
                    Some(c) => {
                        let mut v = Vec::new();
                        for p in c.split('|') {
                            v.push(p.parse::<i32>().map_err(|_| {
                                self.err(src, at, format!("expected an exit code such as 0, 0|130 or any, found `{c}`"))
                            })?);
                        }
                        Some(v)
                    }
                    None => {
                        return Err(self.err(
                            src,
                            at,
                            "expected `== exit <code>|any [within <duration>]`",
                        ))
                    }
                };
                let within = match words.next() {
                    None => None,
                    Some("within") => {
                        let d = words.next().unwrap_or("");
                        Some(self.duration(src, at, d)?)
                    }
                    Some(w) => {
                        return Err(self.err(
                            src,
                            at,
                            format!("expected `within <duration>`, found `{w}`"),
                        ))
                    }
                };
                t.steps.push(Step {
                    kind: StepKind::Exit(codes),
                    line: self.line,
                    within,
                });
            }
            Some("stdout") => match words.next() {
                Some("frames-only") => t.frames_only = true,
                Some("any") => t.frames_only = false,
                _ => {
                    return Err(self.err(
                        src,
                        at,
                        "expected `== stdout frames-only` or `== stdout any`",
                    ))
                }
            },
            _ => {
                return Err(self.err(
                    src,
                    at,
                    "expected `== exit <code> [within <duration>]` or `== stdout frames-only|any`",
                ))
            }
        }
        Ok(())
    }
}

/// Length of the JSON value at the start of `s` (strings and nesting respected), or where it
/// fails to end.
fn json_extent(s: &str) -> Result<usize, (usize, String)> {
    let b = s.as_bytes();
    match b.first() {
        Some(b'{' | b'[') => {}
        Some(b'"') => {
            let mut i = 1;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => return Ok(i + 1),
                    _ => i += 1,
                }
            }
            return Err((s.len(), "unterminated string: expected `\"`".into()));
        }
        _ => return Ok(s.find(|c: char| c.is_whitespace()).unwrap_or(s.len())),
    }
    let mut stack: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            c @ (b'}' | b']') => {
                if stack.pop() != Some(c) {
                    return Err((i, format!("unexpected `{}`", c as char)));
                }
                if stack.is_empty() {
                    return Ok(i + 1);
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return Err((s.len(), "unterminated string: expected `\"`".into()));
                }
            }
            _ => {}
        }
        i += 1;
    }
    let want = stack.last().copied().unwrap_or(b'}') as char;
    Err((
        s.len(),
        format!("unterminated JSON: expected `{want}` before the end of the line"),
    ))
}

/// Decodes `"…"` with escapes `\n \r \t \0 \\ \" \xNN \uXXXX \u{…}`; returns bytes and length used.
fn unescape(s: &str) -> Result<(Vec<u8>, usize), (usize, String)> {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') {
        return Err((0, "expected a quoted string after `>>raw`".into()));
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => return Ok((out, i + 1)),
            b'\\' => {
                let e = *b.get(i + 1).ok_or((i, "unfinished escape".to_string()))?;
                i += 2;
                match e {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'0' => out.push(0),
                    b'\\' => out.push(b'\\'),
                    b'"' => out.push(b'"'),
                    b'x' => {
                        let h = s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok());
                        out.push(h.ok_or((i, "expected two hex digits after \\x".to_string()))?);
                        i += 2;
                    }
                    b'u' => {
                        let (cp, used) = if b.get(i) == Some(&b'{') {
                            let close = s[i..]
                                .find('}')
                                .ok_or((i, "expected `}` closing \\u{…}".to_string()))?;
                            (
                                u32::from_str_radix(&s[i + 1..i + close], 16).ok(),
                                close + 1,
                            )
                        } else {
                            (
                                s.get(i..i + 4)
                                    .and_then(|h| u32::from_str_radix(h, 16).ok()),
                                4,
                            )
                        };
                        let c = cp
                            .and_then(char::from_u32)
                            .ok_or((i, "expected a Unicode scalar value after \\u".to_string()))?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        i += used;
                    }
                    _ => return Err((i - 1, format!("unknown escape `\\{}`", e as char))),
                }
            }
            _ => {
                let c = s[i..].chars().next().unwrap_or('\0');
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += c.len_utf8();
            }
        }
    }
    Err((s.len(), "unterminated string: expected `\"`".into()))
}

/// Escapes bytes for `>>raw "…"` (printable ASCII and UTF-8 kept, the rest escaped).
pub fn escape_raw(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}' || c == '\u{a0}' => {
                    out.push_str(&format!("\\u{{{:x}}}", c as u32))
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Trace::parse(text, "t.trace").unwrap_err().to_string()
    }

    #[test]
    fn a_small_trace_parses_into_steps() {
        let t = Trace::parse(
            "# case: x\n# editions: current 2026-08\n# timeout: 2s\n>> {\"id\":1,\"method\":\"m\",\"params\":{\"sessionId\":\"s\"}}\n<< {\"id\":1} within 3s # c\n<<* {\"method\":\"a\"}\n>>raw \"{not\\xff\\n\"\n>>bytes ff 0a\n>>pause 20ms\n>>eof\n== exit 0|130 within 5s\n",
            "t",
        )
        .unwrap();
        assert_eq!(t.meta.case, "x");
        use crate::edition::Edition;
        assert_eq!(t.meta.editions, vec![Edition::Current, Edition::Aug2026]);
        assert_eq!(t.meta.timeout, Some(Duration::from_secs(2)));
        assert_eq!(t.steps.len(), 8);
        assert_eq!(t.steps[1].within, Some(Duration::from_secs(3)));
        assert_eq!(
            t.steps[3].kind,
            StepKind::Send(Send::Raw(b"{not\xff\n".to_vec()))
        );
        assert_eq!(t.steps[4].kind, StepKind::Send(Send::Raw(vec![0xff, 0x0a])));
        assert_eq!(t.steps[7].kind, StepKind::Exit(Some(vec![0, 130])));
        match &t.steps[0].kind {
            StepKind::Send(Send::Frame { id, session, .. }) => {
                assert_eq!(id.as_deref(), Some("1"));
                assert!(session.is_some());
            }
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn malformed_traces_name_file_line_column_and_what_was_expected() {
        assert_eq!(
            err("# ok\n<< {\"id\":1,}\n"),
            "t.trace:2:12: invalid JSON: expected a string key"
                .replace("expected a string key", &err_json("{\"id\":1,}"))
        );
        assert!(err("<< {\"id\":1").starts_with("t.trace:1:11: unterminated JSON: expected `}`"));
        assert!(err("foo").starts_with("t.trace:1:1: expected `>>`"));
        assert!(err(">>pause 5x").contains("expected a duration"));
        assert!(err("<< {\"a\":\"{{strig}}\"}").contains("unknown placeholder"));
        assert!(err("<< {} trailing").starts_with("t.trace:1:7: expected `within"));
        assert!(err("<<unordered\n<< {}\n").contains("never closed"));
        assert!(err(">>raw \"abc").contains("unterminated string"));
        assert!(err("# editions: future").contains("unknown edition"));
        assert!(err("== exit zero").contains("exit code"));
    }

    fn err_json(t: &str) -> String {
        crate::wire::json::parse(t).unwrap_err().what.to_owned()
    }

    #[test]
    fn raw_escapes_round_trip() {
        let bytes = b"a\"\\\n\r\t\x00\xff\xef\xbb\xbf{}\xe2\x82\xac".to_vec();
        let esc = escape_raw(&bytes);
        assert_eq!(unescape(&esc).unwrap().0, bytes);
    }
}
