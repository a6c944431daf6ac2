//! Cases on a shared runtime process (issue 38): a process started and initialized once serves
//! case after case, so that a runtime slow to boot pays its boot once, not once per case.
//!
//! The runner only runs what it is given: which cases may share a process, and how their ids are
//! kept apart, is the suite's (`suite::share`). Here: the initialize exchange run once
//! ([`Warm::open`]), each case's remaining steps on the live process ([`Warm::run`], whose
//! transcript begins with that exchange, so that rules over a whole conversation see one), and
//! the wait between cases ([`Warm::settle`]): until the sessions the case prompted are idle
//! again and a request sent after everything else is answered.

use super::drive::End;
use super::{conclude, play, CaseDirs, CaseReport, Child, CommandSpec, Event, Options, Outcome};
use super::{Stamp, Transcript, Wire};
use crate::trace::matcher::ExitInfo;
use crate::trace::pattern::Seqs;
use crate::trace::Trace;
use crate::wire::json::JsonView;
use crate::wire::output::{Frame, Output};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A live runtime process that serves one case after another.
pub struct Warm {
    /// Killed (dropped) before its directories are removed: field order.
    child: Child,
    dirs: CaseDirs,
    /// What was sent and read while it was initialized.
    head: Transcript,
    /// The cases it ran after its initialize.
    pub served: usize,
}

impl Warm {
    /// Initializes `child`, a fresh process of `cmd` started in `dirs`, with `head` (a trace of
    /// the initialize request and its answer). `Err`: the head's report when it did not pass.
    #[allow(clippy::result_large_err)] // once per process; the report is what the caller shows
    pub fn open(
        head: &Trace,
        cmd: &CommandSpec,
        opts: &Options,
        dirs: CaseDirs,
        mut child: Child,
    ) -> Result<Warm, CaseReport> {
        let started = Instant::now();
        let (mut report, m, end) = play(head, opts, &dirs, &Seqs::new(), &mut child, started);
        let passed = matches!(end, End::Done) && m.failure().is_none();
        if !passed {
            child.kill();
            report.exit = child.try_exit().unwrap_or(ExitInfo::Unknown);
            conclude(&mut report, &m, end, &child, cmd, started);
            return Err(report);
        }
        Ok(Warm {
            child,
            dirs,
            head: report.transcript,
            served: 0,
        })
    }

    /// How many stdout lines its initialize exchange took (the first of every case's transcript).
    pub fn head_lines(&self) -> usize {
        self.head.stdout.len()
    }

    /// The process's directories (its cwd and DSH_HOME: `{{cwd}}` and `{{home}}` of its cases).
    pub fn dirs(&self) -> &CaseDirs {
        &self.dirs
    }

    /// Runs `body` (a case's steps after its initialize) on the process. The report's transcript
    /// is the initialize exchange followed by the case's own traffic; the process is left
    /// running (drop the `Warm` to end it), and a report that did not pass leaves it unfit for
    /// another case ([`Warm::fit`]).
    pub fn run(&mut self, body: &Trace, cmd: &CommandSpec, opts: &Options) -> CaseReport {
        self.served += 1;
        let started = Instant::now();
        let (mut report, m, end) = play(
            body,
            opts,
            &self.dirs,
            &Seqs::new(),
            &mut self.child,
            started,
        );
        report.cpu = self.child.cpu_time();
        report.exit = self.child.try_exit().unwrap_or(ExitInfo::Unknown);
        conclude(&mut report, &m, end, &self.child, cmd, started);
        report.transcript = joined(&self.head, std::mem::take(&mut report.transcript));
        report
    }

    /// Whether the process may serve another case after `last`: it passed, and the process is
    /// still running.
    pub fn fit(&mut self, last: &CaseReport) -> bool {
        last.outcome == Outcome::Pass && self.child.try_exit().is_none()
    }

    /// Waits, after a case whose transcript is `last` and which prompted the sessions
    /// `prompted`, until each of them is idle again (its last `session.status` is `idle`, or
    /// `session.finished` came) and the request `barrier` (an id no case uses, for a method no
    /// runtime has) sent now is answered, within `within`. Lines read meanwhile belong to no
    /// case. `Err`: why the process cannot serve another case.
    pub fn settle(
        &mut self,
        last: &Transcript,
        prompted: impl IntoIterator<Item = String>,
        barrier: &str,
        within: Duration,
    ) -> Result<(), Unsettled> {
        let mut busy: BTreeMap<String, bool> = prompted.into_iter().map(|s| (s, true)).collect();
        let seg = &last.stdout[self.head.stdout.len().min(last.stdout.len())..];
        for o in seg {
            mark(&mut busy, o);
        }
        let id = crate::wire::json::to_string(&serde_json::Value::String(barrier.to_owned()));
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"dsh-conformance/barrier"}}"#);
        self.child.write(format!("{line}\n").into_bytes());
        let until = Instant::now() + within;
        let mut answered = false;
        while !answered || busy.values().any(|b| *b) {
            let Some(left) = until.checked_duration_since(Instant::now()) else {
                return Err(match answered {
                    false => Unsettled::Unanswered,
                    true => Unsettled::Busy,
                });
            };
            let Ok(ev) = self.child.events.recv_timeout(left) else {
                continue;
            };
            self.child.consumed(&ev);
            match ev {
                Event::Line(o) => {
                    mark(&mut busy, &o);
                    answered |= matches!(o.frame(), Frame::Response { id: i, .. } if *i == id);
                }
                Event::Flooded(_) | Event::Closed(_) => return Err(Unsettled::Ended),
            }
        }
        Ok(())
    }
}

/// Why a shared process cannot serve another case ([`Warm::settle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsettled {
    /// The barrier request was not answered in time (the runtime may not answer unknown
    /// methods at all).
    Unanswered,
    /// A session the case prompted was not idle again in time.
    Busy,
    /// The runtime flooded its stdout or closed it.
    Ended,
}

/// Marks a session busy or idle by its status line `o`.
fn mark(busy: &mut BTreeMap<String, bool>, o: &Output) {
    let Frame::Notification {
        method,
        session: Some(s),
    } = o.frame()
    else {
        return;
    };
    let Some(b) = busy.get_mut(s) else { return };
    match method.as_str() {
        "session.finished" => *b = false,
        "session.status" => {
            let status = o.params_of(method).and_then(|p| p.get("status")?.as_str());
            match status {
                Some("idle") => *b = false,
                Some("running") => *b = true,
                _ => {}
            }
        }
        _ => {}
    }
}

/// `head` then `seg`, as one transcript (the segment's stamps moved past the head's entries).
fn joined(head: &Transcript, seg: Transcript) -> Transcript {
    let (bytes, lines) = (head.sent.len(), head.stdout.len());
    let mut t = head.clone();
    t.sent.extend_from_slice(&seg.sent);
    t.stdout.extend(seg.stdout);
    t.truncated |= seg.truncated;
    t.used += seg.used;
    t.stamps_dropped += seg.stamps_dropped;
    for s in seg.stamps {
        let what = match s.what {
            Wire::Sent { from, to } => Wire::Sent {
                from: from + bytes,
                to: to + bytes,
            },
            Wire::Received(n) => Wire::Received(n + lines),
        };
        t.stamp(Stamp { at: s.at, what });
    }
    t
}
