//! Recording: run the sends of a script (or of an existing trace, for `--bless`) against a
//! runtime, keep a raw transcript, and turn it into a trace with the importer's redaction.
//!
//! Pacing: a run of sends is written once every request sent so far has its response and the
//! runtime has been quiet for `settle` (or after `max_wait`), so a recording follows the
//! runtime's pace rather than a fixed clock. `>>pause` steps are honoured as written.

mod fault;

pub use fault::{Fault, RecordError};

use super::child::{CaseDirs, Child, CommandSpec, Event};
use crate::trace::import::{self, RawEvent, Redactor};
use crate::trace::{ExitInfo, Send, StepKind, Trace};
use crate::wire::json::JsonView;
use crate::wire::output::{Frame, NotAFrame};
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
    /// Stdout lines read.
    lines: usize,
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
                    Event::Line(o)
                        if o.json().is_some()
                            || !matches!(
                                o.frame(),
                                Frame::NotAFrame(NotAFrame::NotUtf8 { .. } | NotAFrame::TooLong(_))
                            ) =>
                    {
                        self.lines += 1;
                        if let Some(json) = o.json() {
                            let mut v: Value = json.to_value();
                            if v.get("method").is_none() {
                                if let Some(id) = v.get("id") {
                                    self.pending.remove(&crate::wire::json::to_string(id));
                                }
                            }
                            self.red.redact(&mut v);
                        }
                        self.events.push(RawEvent::Out {
                            t,
                            line: o.text().to_owned(),
                            truncated: None,
                        });
                    }
                    Event::Line(o) => {
                        let len = match o.frame() {
                            Frame::NotAFrame(NotAFrame::NotUtf8 { len, .. }) => *len,
                            Frame::NotAFrame(NotAFrame::TooLong(len)) => *len,
                            _ => unreachable!("the arm above takes the readable lines"),
                        };
                        self.lines += 1;
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

    /// Waits until every request sent so far is answered and the runtime has been quiet for
    /// `settle`, or until it closes stdout. Requests still unanswered after `max_wait` are a fault
    /// (a runtime that keeps writing but has nothing pending is waited for no longer).
    fn settle(&mut self, opts: &RecordOptions) -> Result<(), Fault> {
        let until = Instant::now() + opts.max_wait;
        self.last_out = Instant::now();
        while !self.closed {
            let quiet = self.last_out.elapsed() >= opts.settle;
            if quiet && self.pending.is_empty() {
                return Ok(());
            }
            if Instant::now() >= until {
                if self.pending.is_empty() {
                    return Ok(());
                }
                let mut ids: Vec<String> = self.pending.iter().cloned().collect();
                ids.sort();
                return Err(Fault::Unanswered {
                    ids,
                    waited: opts.max_wait,
                });
            }
            self.pump(Duration::from_millis(20));
        }
        Ok(())
    }

    /// How the runtime ended, once its stdout closed (it is given a moment to finish).
    fn ended(&mut self) -> ExitInfo {
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            if let Some(st) = self.child.try_exit() {
                self.note_exit(st);
                return st;
            }
            if Instant::now() >= until {
                return ExitInfo::Unknown;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits up to `wait` for the process to exit (its stdout read to the end, or for a second
    /// after the exit when something else holds it open).
    fn wait_exit(&mut self, wait: Duration) -> Option<ExitInfo> {
        let until = Instant::now() + wait;
        let mut exited_at: Option<Instant> = None;
        loop {
            self.pump(Duration::from_millis(20));
            if let Some(st) = self.child.try_exit() {
                let at = *exited_at.get_or_insert_with(Instant::now);
                if self.closed || at.elapsed() > Duration::from_secs(1) {
                    self.note_exit(st);
                    return Some(st);
                }
            }
            if Instant::now() >= until {
                return None;
            }
        }
    }

    fn note_exit(&mut self, st: ExitInfo) {
        // After a flood the kit killed it: that is no exit of the runtime's own.
        if self.flood.is_some()
            || self
                .events
                .iter()
                .any(|e| matches!(e, RawEvent::Exit { .. }))
        {
            return;
        }
        let code = match st {
            ExitInfo::Code(c) => Some(c),
            _ => None,
        };
        let t = self.t();
        self.events.push(RawEvent::Exit { t, code });
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

    /// Runs the script's steps; the first fault stops it.
    fn play(
        &mut self,
        script: &Trace,
        opts: &RecordOptions,
        cwd: &str,
        home: &str,
    ) -> Result<(), Fault> {
        let writes = |s: &Send| !matches!(s, Send::Pause(_));
        let total = script
            .steps
            .iter()
            .filter(|s| matches!(&s.kind, StepKind::Send(x) if writes(x)))
            .count();
        let mut written = 0;
        let mut after_expect = false;
        let mut exit: Option<&Option<Vec<i32>>> = None;
        // A script whose last send is a `shutdown` request and that has no `== exit` line
        // expects the exit the contract gives it (§3.6: answer, flush, exit 0), as if it ended
        // with `== exit 0`: the user need not write the line the protocol implies.
        let shutdown_exit = Some(vec![0]);
        let implied = ends_with_shutdown(script);
        for step in &script.steps {
            let s = match &step.kind {
                StepKind::Expect(_) => {
                    after_expect = true;
                    continue;
                }
                StepKind::Exit(codes) => {
                    exit.get_or_insert(codes);
                    continue;
                }
                StepKind::Send(s) => s,
            };
            if after_expect {
                self.settle(opts)?;
                after_expect = false;
            }
            if writes(s) {
                if self.closed {
                    return Err(Fault::Ended {
                        exit: self.ended(),
                        unsent: total - written,
                    });
                }
                written += 1;
            }
            self.send(s, cwd, home)?;
        }
        if exit.is_none() && implied {
            exit = Some(&shutdown_exit);
        }
        self.end(exit, implied, opts)
    }

    /// Writes one send of the script (a pause pumps the output meanwhile) and logs it.
    fn send(&mut self, s: &Send, cwd: &str, home: &str) -> Result<(), Fault> {
        let t = self.t();
        match s {
            Send::Frame { text, id, .. } => {
                let mut b = self
                    .resolve(text.as_bytes(), cwd, home)
                    .map_err(Fault::Harness)?;
                // Only a request is owed an answer (a client's response to the runtime is not).
                let request = crate::wire::json::parse(&String::from_utf8_lossy(&b))
                    .is_ok_and(|p| p.value.get("method").is_some_and(Value::is_string));
                b.push(b'\n');
                if let (Some(id), true) = (id, request) {
                    self.pending.insert(id.clone());
                }
                self.child.write(b.clone());
                self.events.push(RawEvent::In { t, bytes: b });
            }
            Send::Raw(bytes) => {
                let b = self.resolve(bytes, cwd, home).map_err(Fault::Harness)?;
                self.child.write(b.clone());
                self.events.push(RawEvent::In { t, bytes: b });
            }
            Send::Pause(d) => {
                let until = Instant::now() + *d;
                while Instant::now() < until {
                    self.pump(until.saturating_duration_since(Instant::now()));
                }
            }
            Send::Eof => {
                self.child.close_stdin();
                self.events.push(RawEvent::Eof { t });
            }
            Send::Signal(sig) => {
                self.child.signal(*sig);
                let name = crate::sys::signal_name(*sig);
                self.events.push(RawEvent::Signal {
                    t,
                    name: name.trim_start_matches("SIG").to_owned(),
                });
            }
        }
        Ok(())
    }

    /// How the script's run ends: the exit it expects (`== exit`, or implied by a closing
    /// `shutdown`), or a runtime still serving once the output settled.
    fn end(
        &mut self,
        exit: Option<&Option<Vec<i32>>>,
        implied: bool,
        opts: &RecordOptions,
    ) -> Result<(), Fault> {
        match exit {
            Some(codes) => match self.wait_exit(opts.exit_wait) {
                None => Err(Fault::NoExit {
                    waited: opts.exit_wait,
                    implied,
                }),
                Some(got) => {
                    let ok = match (codes, got) {
                        (None, _) => true,
                        (Some(c), ExitInfo::Code(x)) => c.contains(&x),
                        _ => false,
                    };
                    if ok {
                        Ok(())
                    } else {
                        Err(Fault::WrongExit {
                            expected: codes.clone(),
                            got,
                            implied,
                        })
                    }
                }
            },
            None => {
                self.settle(opts)?;
                if self.closed {
                    Err(Fault::Ended {
                        exit: self.ended(),
                        unsent: 0,
                    })
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// Whether the last send `script` writes (pauses aside) is a `shutdown` request and it has no
/// `== exit` line: the runtime is then expected to exit 0, as if the script said so.
pub fn ends_with_shutdown(script: &Trace) -> bool {
    if script
        .steps
        .iter()
        .any(|s| matches!(s.kind, StepKind::Exit(_)))
    {
        return false;
    }
    let last = script.steps.iter().rev().find_map(|s| match &s.kind {
        StepKind::Send(Send::Pause(_)) | StepKind::Expect(_) | StepKind::Exit(_) => None,
        StepKind::Send(send) => Some(send),
    });
    let Some(Send::Frame {
        text, id: Some(_), ..
    }) = last
    else {
        return false;
    };
    crate::wire::json::parse(text)
        .is_ok_and(|p| p.value.get("method").and_then(Value::as_str) == Some("shutdown"))
}

/// Runs the sends of `script` against `cmd` and returns the transcript. The recording fails
/// when the runtime cannot start, ends before the script is done (or with a status its
/// `== exit` line does not allow, or not at all when it expects one), leaves a request
/// unanswered for `max_wait`, or floods its stdout; the error keeps what was recorded so far.
pub fn record(
    script: &Trace,
    cmd: &CommandSpec,
    opts: &RecordOptions,
) -> Result<Recording, RecordError> {
    let dirs = CaseDirs::new(false).map_err(|e| {
        RecordError::new(
            cmd,
            Fault::Harness(format!("cannot create the case directories: {e}")),
        )
    })?;
    let mut env = opts.env.clone();
    env.extend(script.meta.env.iter().cloned());
    let mut child = Child::spawn(cmd, &dirs, &env, opts.max_line, &opts.stdout)
        .map_err(|e| RecordError::new(cmd, Fault::Spawn(e.to_string())))?;
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
        lines: 0,
        flood: None,
    };
    let played = rec.play(script, opts, &cwd, &home);
    let fault = match (rec.flood, played) {
        (Some(f), _) => Some(Fault::Flooded(f)),
        (None, r) => r.err(),
    };
    let lines = rec.lines;
    let events = std::mem::take(&mut rec.events);
    child.kill();
    let (stderr_tail, stderr_len) = child.stderr_tail();
    let recording = Recording {
        events,
        dirs: vec![(cwd, "{{cwd}}"), (home, "{{home}}")],
        stderr_tail,
    };
    match fault {
        None => Ok(recording),
        Some(fault) => Err(RecordError {
            cmd: cmd.to_string(),
            fault,
            lines,
            stderr_tail: recording.stderr_tail.clone(),
            stderr_len,
            partial: Some(Box::new(recording)),
        }),
    }
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

    fn trace(text: &str) -> Trace {
        Trace::parse(text, "t.trace").unwrap()
    }

    #[test]
    fn a_script_whose_last_send_is_a_shutdown_request_implies_exit_0() {
        let init = ">> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n<< {\"id\":1}\n";
        let shutdown = ">> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"shutdown\"}\n";
        let s = format!("{init}{shutdown}<< {{\"id\":2}}\n");
        assert!(ends_with_shutdown(&trace(&s)));
        // A pause after it changes nothing; its answer need not be expected.
        assert!(ends_with_shutdown(&trace(&format!(
            "{init}{shutdown}>>pause 100ms\n"
        ))));
        // An `== exit` line of the script's own wins.
        assert!(!ends_with_shutdown(&trace(&format!("{s}== exit any\n"))));
        // A notification named shutdown is no request (§2.3), and a later send is the last.
        let note = ">> {\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n";
        assert!(!ends_with_shutdown(&trace(&format!("{init}{note}"))));
        assert!(!ends_with_shutdown(&trace(&format!(
            "{init}{shutdown}>>eof\n"
        ))));
        assert!(!ends_with_shutdown(&trace(init)));
    }

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
