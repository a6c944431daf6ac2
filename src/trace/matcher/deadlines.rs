//! Deciding what to do next ([`Matcher::poll`]): activating segments, deadlines and the case's
//! timeout, stdout closure and the exit status, and late lines after a missing frame.

use super::{Action, EKind, Matcher};
use crate::trace::failure::{ExitInfo, Failure, FailureKind};
use crate::trace::syntax::{Mult, Send};
use crate::wire::json::Deep;
use crate::wire::json::JsonView;
use crate::wire::output::Output;
use serde_json::Value;
use std::time::Duration;

impl Matcher {
    /// Decides the next action at time `now` (since the runtime was started).
    pub fn poll(&mut self, now: Duration) -> Action {
        if self.done {
            return Action::Done;
        }
        // Activate segments whose predecessors are complete.
        loop {
            if self.active < self.segs.len()
                && (self.active == 0 || self.segs[self.active - 1].required_left == 0)
            {
                let s = &mut self.segs[self.active];
                s.active_since = Some(now);
                self.pending.extend(s.sends.drain(..));
                self.active += 1;
                continue;
            }
            break;
        }
        // Sends, in order, honouring pauses.
        if let Some(until) = self.pause_until {
            if now < until {
                return self.wait(now, Some(until));
            }
            self.pause_until = None;
        }
        if let Some((send, line)) = self.pending.pop_front() {
            // Pauses count from when they are reached.
            return match send {
                Send::Pause(d) => {
                    self.pause_until = Some(now + d);
                    self.poll(now)
                }
                Send::Eof => Action::CloseStdin,
                Send::Signal(s) => Action::Signal(s),
                first @ (Send::Frame { .. } | Send::Raw(_)) => {
                    // Consecutive sends with no pause between go out as one write, as a client
                    // pipelining them would (the runtime may read them in one chunk).
                    let mut out = Vec::new();
                    let mut next = Some((first, line));
                    while let Some((send, line)) = next.take() {
                        let r = match &send {
                            Send::Frame { text, .. } => {
                                self.substitute(text.as_bytes(), true).map(|mut b| {
                                    b.push(b'\n');
                                    b
                                })
                            }
                            Send::Raw(bytes) => self.substitute(bytes, false),
                            _ => unreachable!("only frames and raw bytes are coalesced"),
                        };
                        match r {
                            Ok(b) => out.extend_from_slice(&b),
                            Err(name) => return self.send_error(line, &name),
                        }
                        if matches!(
                            self.pending.front(),
                            Some((Send::Frame { .. } | Send::Raw(_), _))
                        ) {
                            next = self.pending.pop_front();
                        }
                    }
                    Action::Write(out)
                }
            };
        }
        if self.active == self.segs.len() && self.segs.last().is_some_and(|s| s.required_left == 0)
        {
            self.done = true;
            return Action::Done;
        }
        // Deadlines.
        if now >= self.case_deadline {
            let e = self.first_open_required();
            self.timeout_failure(e, now, None);
            return Action::Done;
        }
        if let Some((i, d)) = self.earliest_deadline() {
            if now >= d {
                // Name the expectation that blocks progress (the first open one in trace order),
                // not whichever deadline happened to expire first.
                let blocker = self.first_open_required().unwrap_or(i);
                let waited = self.exps[i].deadline_after;
                self.timeout_failure(Some(blocker), now, Some(waited));
                return Action::Done;
            }
        }
        self.wait(now, None)
    }

    fn wait(&self, _now: Duration, extra: Option<Duration>) -> Action {
        let mut t = self.case_deadline;
        if let Some((_, d)) = self.earliest_deadline() {
            t = t.min(d);
        }
        if let Some(e) = extra {
            t = t.min(e);
        }
        Action::WaitUntil(t)
    }

    fn earliest_deadline(&self) -> Option<(usize, Duration)> {
        // A segment activates only once the one before it is complete, so only the last
        // active segment can have unmet required expectations.
        let s = self.segs.get(self.active.checked_sub(1)?)?;
        let since = s.active_since.unwrap_or_default();
        s.open.first().map(|&(after, i)| (i, since + after))
    }

    fn first_open_required(&self) -> Option<usize> {
        self.exps
            .iter()
            .position(|e| e.seg < self.active && e.required() && !e.done)
    }

    /// `waited`: the expectation deadline that expired (`None`: the whole case's).
    fn timeout_failure(&mut self, e: Option<usize>, now: Duration, waited: Option<Duration>) {
        let Some(i) = e else {
            self.fail(Failure::new(
                FailureKind::Timeout,
                format!("case timed out after {:.1}s", now.as_secs_f64()),
            ));
            return;
        };
        let exp = &self.exps[i];
        let what = match waited {
            None => format!("the case's {:.1}s ran out", now.as_secs_f64()),
            Some(w) => format!("waited {:.1}s", w.as_secs_f64()),
        };
        let mut f = self.failure_at(
            exp,
            FailureKind::Timeout,
            format!(
                "{} ({}) never arrived ({what})",
                self.exp_text(exp),
                self.at(exp.line)
            ),
        );
        if let EKind::Frame { pat, .. } = &exp.kind {
            self.explain_closest(pat, &mut f);
        }
        self.fail(f);
    }

    /// Stdout reached EOF. `exit` is the status if the process has already ended.
    pub fn on_stdout_closed(&mut self, exit: ExitInfo, now: Duration) {
        self.stdout_closed = true;
        if exit != ExitInfo::Unknown {
            self.exit = exit;
        }
        if self.done {
            return;
        }
        // A frame still required can no longer come: that is the failure to report first.
        if let Some(i) = self.first_open_required_frame() {
            let e = &self.exps[i];
            let mut f = self.failure_at(
                e,
                FailureKind::Exit,
                format!(
                    "the runtime closed stdout ({}) while {} ({}) was still expected",
                    self.exit,
                    self.exp_text(e),
                    self.at(e.line)
                ),
            );
            if let EKind::Frame { pat, .. } = &e.kind {
                self.explain_closest(pat, &mut f);
            }
            self.fail(f);
            return;
        }
        if exit != ExitInfo::Unknown {
            self.on_exit(exit, now);
        }
    }

    fn first_open_required_frame(&self) -> Option<usize> {
        // Any required frame expectation not yet met, in any segment: no more frames can come.
        self.exps.iter().position(|e| {
            !e.done
                && matches!(
                    &e.kind,
                    EKind::Frame {
                        mult: Mult::One,
                        ..
                    }
                )
        })
    }

    /// The process ended.
    pub fn on_exit(&mut self, exit: ExitInfo, _now: Duration) {
        self.exit = exit;
        if self.done {
            return;
        }
        // The first exit expectation that is active judges the status.
        let idx = self
            .exps
            .iter()
            .position(|e| !e.done && matches!(e.kind, EKind::Exit(_)));
        match idx {
            Some(i) if self.exps[i].seg < self.active => {
                let ok = match (&self.exps[i].kind, exit) {
                    (EKind::Exit(None), _) => true,
                    (EKind::Exit(Some(codes)), ExitInfo::Code(c)) => codes.contains(&c),
                    _ => false,
                };
                if ok {
                    self.accept(i, (Vec::new(), None), None);
                } else {
                    let e = &self.exps[i];
                    self.fail(self.failure_at(
                        e,
                        FailureKind::Exit,
                        format!(
                            "the runtime ended with {exit}; {} ({}) expected otherwise",
                            self.exp_text(e),
                            self.at(e.line)
                        ),
                    ));
                }
            }
            _ => {
                // No exit was expected yet: anything still to do can no longer happen.
                let open = self.exps.iter().position(|e| !e.done && e.required());
                if open.is_some() || !self.pending.is_empty() || self.active < self.segs.len() {
                    let what = match open {
                        Some(i) => format!(
                            "{} ({})",
                            self.exp_text(&self.exps[i]),
                            self.at(self.exps[i].line)
                        ),
                        None => "the rest of the trace".into(),
                    };
                    let reason = format!("the runtime ended ({exit}) before {what}");
                    self.fail(match open {
                        Some(i) => self.failure_at(&self.exps[i], FailureKind::Exit, reason),
                        None => Failure::new(FailureKind::Exit, reason),
                    });
                }
            }
        }
    }

    /// Whether an exit expectation is active and unmet (the runner then waits for the exit).
    pub fn awaiting_exit(&self) -> bool {
        self.exps
            .iter()
            .any(|e| !e.done && e.seg < self.active && matches!(e.kind, EKind::Exit(_)))
    }

    /// After a [`FailureKind::Missing`] failure: whether the missing frame arrives late. The
    /// runner feeds the lines that follow the failure for a short grace; when one matches the
    /// missing expectation, the failure becomes [`FailureKind::OutOfOrder`], naming both lines.
    /// Returns true once decided (nothing more to feed).
    pub fn on_late_output(&mut self, out: &Output) -> bool {
        self.late_lines += 1;
        let Some(f) = self.failure.as_ref() else {
            return true;
        };
        let (FailureKind::Missing, Some(line), overtaken) = (f.kind, f.trace_line, f.stdout_line)
        else {
            return true;
        };
        let Some(j) = self.exps.iter().position(|e| e.line == line) else {
            return true;
        };
        let Some(json) = out.json() else {
            return false;
        };
        let v = Deep::new(json.to_value());
        let session = v
            .get("params")
            .and_then(|x| x.get("sessionId").or_else(|| x.get("parentSessionId")))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if self.try_exp(j, &*v, session.as_deref()).is_none() {
            return false;
        }
        let at = self.stats.lines + self.late_lines;
        let overtaken = overtaken.unwrap_or(0);
        let exp = self.exp_text(&self.exps[j]);
        let f = self.failure.as_mut().expect("checked above");
        f.kind = FailureKind::OutOfOrder;
        f.reason = format!(
            "{exp} ({}) arrived out of order: at stdout line {at}, after stdout line {overtaken}, which the trace orders after it",
            f.at.clone().unwrap_or_default()
        );
        true
    }

    /// Whether the runner should give the missing frame of the failure a grace to arrive late.
    pub fn wants_late_lines(&self) -> bool {
        self.failure
            .as_ref()
            .is_some_and(|f| f.kind == FailureKind::Missing)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::super::*;

    #[test]
    fn deadlines_fail_with_the_expectation_and_its_closest_frame() {
        let mut x = m(">> {\"id\":1,\"method\":\"go\"}\n<< {\"id\":1,\"result\":{\"v\":2}} within 2s\n<<* {\"method\":\"x\"}\n");
        drain(&mut x, T);
        feed(
            &mut x,
            &["{\"method\":\"x\",\"id\":1,\"result\":{\"v\":1}}"],
        );
        assert_eq!(
            drain(&mut x, Duration::from_millis(500)).1,
            Action::WaitUntil(Duration::from_millis(2001))
        );
        assert_eq!(drain(&mut x, Duration::from_secs(3)).1, Action::Done);
        let f = x.failure().unwrap();
        assert_eq!(f.kind, FailureKind::Timeout);
        assert!(
            f.reason.starts_with("<< {\"id\":1")
                && f.reason.ends_with("never arrived (waited 2.0s)"),
            "{f}"
        );
        let d = f.diff.as_ref().map(ToString::to_string);
        assert_eq!(d.as_deref(), Some("/result/v: expected 2, got 1"));
    }

    #[test]
    fn a_timeout_shows_the_last_frames_of_the_session_it_is_about() {
        let ev = |sid: &str, ty: &str| {
            format!("{{\"method\":\"session.event\",\"params\":{{\"sessionId\":\"{sid}\",\"event\":{{\"type\":\"{ty}\"}}}}}}")
        };
        let trace = format!(
            ">> {{\"id\":1,\"method\":\"go\"}}\n<<* {}\n<<* {}\n<< {} within 2s\n",
            r#"{"method":"session.event","params":{"sessionId":"a"}}"#,
            r#"{"method":"session.event","params":{"sessionId":"b"}}"#,
            ev("a", "turn/end"),
        );
        let mut x = m(&trace);
        drain(&mut x, T);
        let mut lines = vec![ev("a", "turn/start"), ev("a", "agent/message")];
        lines.extend((0..10).map(|_| ev("b", "agent/message")));
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        feed(&mut x, &lines);
        drain(&mut x, Duration::from_secs(3));
        let f = x.failure().unwrap();
        assert_eq!(f.kind, FailureKind::Timeout);
        assert_eq!(f.recent_session.as_deref(), Some("a"), "{f}");
        assert_eq!(f.recent.len(), 2, "{f}");
        assert!(f.recent.iter().all(|l| l.contains("\"a\"")), "{f}");
        assert!(
            f.to_string()
                .contains("last frames received about session \"a\""),
            "{f}"
        );
    }

    #[test]
    fn exit_codes_are_judged_and_early_exits_fail() {
        let mut x = m(">> {\"id\":1,\"method\":\"shutdown\"}\n<< {\"id\":1}\n== exit 0\n");
        drain(&mut x, T);
        feed(&mut x, &["{\"id\":1,\"result\":{}}"]);
        x.on_stdout_closed(ExitInfo::Code(0), T);
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none());
        let mut y = m(">> {\"id\":1,\"method\":\"shutdown\"}\n<< {\"id\":1}\n== exit 0\n");
        drain(&mut y, T);
        y.on_stdout_closed(ExitInfo::Code(1), T);
        let f = y.failure().unwrap();
        assert!(f.reason.contains("closed stdout (exit code 1)"), "{f}");
    }
}
