//! Recording: run the sends of a script (or of an existing trace, for `--bless`) against a
//! runtime, keep a raw transcript, and turn it into a trace with the importer's redaction.
//!
//! Pacing: a run of sends is written once every request sent so far has its response and the
//! runtime has been quiet for `settle` (or after `max_wait`), so a recording follows the
//! runtime's pace rather than a fixed clock. `>>pause` steps are honoured as written.

use super::child::{CaseDirs, Child, CommandSpec, Event};
use crate::trace::import::{self, RawEvent, Redactor};
use crate::trace::{ExitInfo, Send, StepKind, Trace};
use serde_json::Value;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Recording settings.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Bounds on the runtime's stdout.
    pub stdout: crate::runner::StdoutLimit,
    /// Quiet time after which the next sends go out.
    pub settle: Duration,
    /// Longest wait before the next sends go out regardless.
    pub max_wait: Duration,
    /// Longest wait for an expected exit.
    pub exit_wait: Duration,
    /// Longest stdout line kept.
    pub max_line: usize,
    /// Extra environment.
    pub env: Vec<(String, String)>,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            settle: Duration::from_millis(500),
            max_wait: Duration::from_secs(30),
            exit_wait: Duration::from_secs(15),
            max_line: crate::wire::lines::DEFAULT_MAX_LINE,
            env: Vec::new(),
            stdout: crate::runner::StdoutLimit::default(),
        }
    }
}

/// A finished recording.
#[derive(Debug, Clone)]
pub struct Recording {
    /// What happened, in order.
    pub events: Vec<RawEvent>,
    /// The case's cwd and DSH_HOME (to redact them back to placeholders).
    pub dirs: Vec<(String, &'static str)>,
    /// Runtime stderr tail.
    pub stderr_tail: String,
}

impl Recording {
    /// The recording as a trace; `header` replaces the generated metadata lines when given.
    pub fn to_trace(&self, case: &str, source: &str, header: Option<String>) -> String {
        import::to_trace(
            &self.events,
            &import::ImportInfo {
                case: case.to_owned(),
                source: source.to_owned(),
                description: None,
                dirs: self.dirs.clone(),
                header,
            },
        )
    }
}

struct Rec<'a> {
    child: &'a mut Child,
    start: Instant,
    events: Vec<RawEvent>,
    pending: HashSet<String>,
    red: Redactor,
    last_out: Instant,
    closed: bool,
    /// The runtime flooded its stdout and was killed.
    flood: Option<crate::runner::Flood>,
}

impl Rec<'_> {
    fn t(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn pump(&mut self, timeout: Duration) -> bool {
        if self.closed {
            std::thread::sleep(timeout.min(Duration::from_millis(20)));
            return false;
        }
        match self.child.events.recv_timeout(timeout) {
            Ok(ev) => {
                self.child.consumed(&ev);
                let t = self.t();
                self.last_out = Instant::now();
                match ev {
                    Event::Text(line) => {
                        if let Ok(p) = crate::wire::json::parse(&line) {
                            let mut v: Value = p.value;
                            if v.get("method").is_none() {
                                if let Some(id) = v.get("id") {
                                    self.pending.remove(&crate::wire::json::to_string(id));
                                }
                            }
                            self.red.redact(&mut v);
                        }
                        self.events.push(RawEvent::Out {
                            t,
                            line,
                            truncated: None,
                        });
                    }
                    Event::NotUtf8 { len, .. } | Event::TooLong(len) => {
                        self.events.push(RawEvent::Out {
                            t,
                            line: String::new(),
                            truncated: Some(len),
                        })
                    }
                    Event::Closed(_) => self.closed = true,
                    Event::Flooded(f) => {
                        self.closed = true;
                        self.flood = Some(f);
                    }
                }
                true
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => false,
            Err(_) => {
                self.closed = true;
                false
            }
        }
    }

    fn settle(&mut self, opts: &RecordOptions) {
        let until = Instant::now() + opts.max_wait;
        self.last_out = Instant::now();
        while Instant::now() < until && !self.closed {
            let quiet = self.last_out.elapsed() >= opts.settle;
            if quiet && self.pending.is_empty() {
                return;
            }
            self.pump(Duration::from_millis(20));
        }
    }

    /// Substitutes placeholders in a send; captures resolve to what the importer names them.
    fn resolve(&self, bytes: &[u8], cwd: &str, home: &str) -> Result<Vec<u8>, String> {
        let s = String::from_utf8_lossy(bytes);
        if !s.contains("{{") {
            return Ok(bytes.to_vec());
        }
        let mut out = s.replace("{{cwd}}", cwd).replace("{{home}}", home);
        while let Some(i) = out.find("{{$") {
            let j = out[i..].find("}}").ok_or("unclosed {{$")? + i;
            let name = out[i + 3..j].split(':').next().unwrap_or("").to_owned();
            let v = self
                .red
                .value_of(&name)
                .ok_or_else(|| {
                    format!("the send uses {{{{${name}}}}}, which nothing recorded so far bound")
                })?
                .to_owned();
            out.replace_range(i..j + 2, &v);
        }
        Ok(out.into_bytes())
    }
}

/// Runs the sends of `script` against `cmd` and returns the transcript.
pub fn record(
    script: &Trace,
    cmd: &CommandSpec,
    opts: &RecordOptions,
) -> Result<Recording, String> {
    let dirs =
        CaseDirs::new(false).map_err(|e| format!("cannot create the case directories: {e}"))?;
    let mut env = opts.env.clone();
    env.extend(script.meta.env.iter().cloned());
    let mut child = Child::spawn(cmd, &dirs, &env, opts.max_line, &opts.stdout)
        .map_err(|e| format!("cannot start `{cmd}`: {e}"))?;
    let cwd = dirs.cwd.to_string_lossy().into_owned();
    let home = dirs.home.to_string_lossy().into_owned();
    let mut rec = Rec {
        child: &mut child,
        start: Instant::now(),
        events: Vec::new(),
        pending: HashSet::new(),
        red: Redactor::default(),
        last_out: Instant::now(),
        closed: false,
        flood: None,
    };
    let mut after_expect = false;
    let mut wants_exit = false;
    for step in &script.steps {
        match &step.kind {
            StepKind::Expect(_) => after_expect = true,
            StepKind::Exit(_) => wants_exit = true,
            StepKind::Send(s) => {
                if after_expect {
                    rec.settle(opts);
                    after_expect = false;
                }
                let t = rec.t();
                match s {
                    Send::Frame { text, id, .. } => {
                        let mut b = rec.resolve(text.as_bytes(), &cwd, &home)?;
                        b.push(b'\n');
                        if let Some(id) = id {
                            rec.pending.insert(id.clone());
                        }
                        rec.child.write(b.clone());
                        rec.events.push(RawEvent::In { t, bytes: b });
                    }
                    Send::Raw(bytes) => {
                        let b = rec.resolve(bytes, &cwd, &home)?;
                        rec.child.write(b.clone());
                        rec.events.push(RawEvent::In { t, bytes: b });
                    }
                    Send::Pause(d) => {
                        let until = Instant::now() + *d;
                        while Instant::now() < until {
                            rec.pump(until.saturating_duration_since(Instant::now()));
                        }
                    }
                    Send::Eof => {
                        rec.child.close_stdin();
                        rec.events.push(RawEvent::Eof { t });
                    }
                    Send::Signal(sig) => {
                        rec.child.signal(*sig);
                        let name = match *sig {
                            libc::SIGTERM => "TERM",
                            libc::SIGINT => "INT",
                            libc::SIGKILL => "KILL",
                            _ => "HUP",
                        };
                        rec.events.push(RawEvent::Signal {
                            t,
                            name: name.into(),
                        });
                    }
                }
            }
        }
    }
    if wants_exit {
        let until = Instant::now() + opts.exit_wait;
        while Instant::now() < until {
            rec.pump(Duration::from_millis(20));
            if rec.closed {
                if let Some(st) = rec.child.try_exit() {
                    let code = match st {
                        ExitInfo::Code(c) => Some(c),
                        _ => None,
                    };
                    let t = rec.t();
                    rec.events.push(RawEvent::Exit { t, code });
                    break;
                }
            }
        }
    } else {
        rec.settle(opts);
    }
    let flood = rec.flood;
    let events = std::mem::take(&mut rec.events);
    let (stderr_tail, _) = child.stderr_tail();
    if let Some(f) = flood {
        child.kill();
        return Err(format!("`{cmd}` {f}"));
    }
    child.kill();
    Ok(Recording {
        events,
        dirs: vec![(cwd, "{{cwd}}"), (home, "{{home}}")],
        stderr_tail,
    })
}

/// A minimal line diff (LCS) in unified style without context folding: `-` old, `+` new.
pub fn diff_lines(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("-{}:{}\n", i + 1, a[i]));
            i += 1;
        } else {
            out.push_str(&format!("+{}:{}\n", j + 1, b[j]));
            j += 1;
        }
    }
    out
}

/// The leading comment block of a trace file (kept by `--bless`).
pub fn header_of(text: &str) -> String {
    let mut h = String::new();
    for l in text.lines() {
        if l.trim_start().starts_with('#') || l.trim().is_empty() {
            h.push_str(l);
            h.push('\n');
        } else {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_marks_removed_and_added_lines() {
        assert_eq!(diff_lines("a\nb\nc\n", "a\nx\nc\n"), "-2:b\n+2:x\n");
        assert_eq!(diff_lines("a\n", "a\n"), "");
    }

    #[test]
    fn the_header_is_the_leading_comment_block() {
        assert_eq!(header_of("# a\n# b\n>> {}\n# c\n"), "# a\n# b\n");
    }
}
