//! The line-by-line parser: metadata, sends, expectations, process expectations and `ignore`
//! rules, `<<unordered` groups and `within` tails.

use super::lex::{json_extent, unescape};
use super::{ExpectFrame, Meta, Mult, ParseError, Send, Step, StepKind, Trace};
use crate::trace::pattern;
use serde_json::Value;
use std::time::Duration;

/// Parser state across lines: where it is, and the open `<<unordered` group.
pub(super) struct Parser {
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
    pub(super) fn new(file: &str) -> Self {
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

    /// Parses the (already `{{repeat:…}}`-expanded) text of a whole trace.
    pub(super) fn run(mut self, text: &str) -> Result<Trace, ParseError> {
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
            "class" => m.class = Some(val.to_owned()),
            _ => {} // any other `# word: text` is a comment
        }
        Ok(())
    }

    fn duration(&self, src: &str, at: usize, s: &str) -> Result<Duration, ParseError> {
        super::duration(s).ok_or_else(|| {
            let s = s.trim();
            self.err(
                src,
                at,
                format!("expected a duration such as 5s or 500ms, found `{s}`"),
            )
        })
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

#[cfg(test)]
mod tests {
    use super::super::*;

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
}
