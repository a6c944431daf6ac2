//! The matcher: a pure, deterministic state machine that judges a runtime's output against a
//! trace. Feed it stdout lines, stdout closure and the exit status with timestamps; ask it what to
//! do next ([`Matcher::poll`]). No I/O, no clocks: the runner supplies both.
//!
//! Ordering (docs/TRACES.md, "Ordering"): the trace is cut into *segments* at each run of sends.
//! A segment's expectations become active when every required expectation of earlier segments is
//! met, and its sends are written at that moment. Among active expectations:
//! - notifications are routed to a *lane* by `params.sessionId` (or `parentSessionId`); within a
//!   lane they match in trace order (`<<?`/`<<*` may be skipped; the latest candidate in the
//!   window up to the next required one wins, so `<<*` never swallows the frame that ends it);
//!   lanes interleave freely; patterns with no literal or captured session form one extra lane;
//! - responses match by id in any order, but not before the required notifications written above
//!   them in the lane of their request's `params.sessionId`;
//! - a frame no active expectation and no `ignore` rule accepts fails the case at once.
//!
//! Layout: [`Matcher`] and its state live here; `compile` turns a trace into segments, lanes and
//! expectations; `route` takes a line to the expectation it meets; `blame` explains a frame
//! nothing accepts; `send` writes sends with placeholders substituted; `deadlines` decides the
//! next action (poll), timeouts, the exit and late lines.
//!
//! Per frame nothing is copied: the line comes parsed by the reader ([`Output`](crate::wire::output::Output): a tape, no
//! `Value`), session and id lookups borrow from it, and only matched frames' texts are kept (in reused buffers) for
//! failure output; a `Value` is built only on the way to a failure.

mod blame;
mod compile;
mod deadlines;
mod route;
mod send;

use super::explain;
use super::pattern::{Bindings, Env, Pat, Seqs};
use super::syntax::{Mult, Send};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// How long an expectation waits by default.
pub const DEFAULT_FRAME_TIMEOUT: Duration = Duration::from_secs(10);

/// What the runner should do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Write these bytes to stdin.
    Write(Vec<u8>),
    /// Close stdin.
    CloseStdin,
    /// Send this signal to the runtime.
    Signal(i32),
    /// Wait for input until this instant (since start); call [`Matcher::poll`] again at the latest then.
    WaitUntil(Duration),
    /// The case is decided.
    Done,
}

pub use super::failure::{ExitInfo, Failure, FailureKind};

/// Counters for reports and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames matched by an expectation.
    pub matched: usize,
    /// Frames dropped by an `ignore` rule.
    pub ignored: usize,
    /// All stdout lines seen.
    pub lines: usize,
}

#[derive(Debug)]
struct Exp {
    step: usize,
    line: usize,
    seg: usize,
    deadline_after: Duration,
    kind: EKind,
    done: bool,
    matched_by: usize,
    /// (lane, unit) of a notification expectation.
    lane_pos: Option<(usize, usize)>,
}

#[derive(Debug)]
enum EKind {
    Frame {
        pat: Pat,
        mult: Mult,
        text: String,
        /// Response expectations: (lane, units before it in that lane).
        not_before: Option<(usize, usize)>,
        response: bool,
    },
    Exit(Option<Vec<i32>>),
}

impl Exp {
    fn required(&self) -> bool {
        match &self.kind {
            EKind::Frame { mult, .. } => *mult == Mult::One,
            EKind::Exit(_) => true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum LaneKey {
    Session(String),
    Capture(String),
    Global,
}

#[derive(Debug)]
struct Lane {
    key: LaneKey,
    /// Units: one expectation, or an unordered group of them.
    units: Vec<Vec<usize>>,
    cursor: usize,
}

#[derive(Debug, Default)]
struct Segment {
    sends: Vec<(Send, usize)>,
    required_left: usize,
    active_since: Option<Duration>,
    /// Unmet required expectations by (deadline, index): the earliest deadline in O(log n).
    open: std::collections::BTreeSet<(Duration, usize)>,
}

/// A recent frame, to explain a failure with.
struct Seen {
    text: String,
    /// The session the frame is about (`params.sessionId`, else `params.parentSessionId`).
    session: Option<String>,
    /// Whether `text` is the whole line (short enough to parse again for its value when a
    /// failure is explained; a longer one is kept clipped, without a value).
    whole: bool,
}

/// The matcher state for one case.
pub struct Matcher {
    file: String,
    env: Env,
    exps: Vec<Exp>,
    lanes: Vec<Lane>,
    /// Lanes by literal session id (looked up by `&str`, nothing copied per frame).
    session_lanes: HashMap<String, usize>,
    /// Lanes keyed by a capture, in lane order; and by capture name (for compiling).
    capture_lanes: Vec<usize>,
    capture_index: HashMap<String, usize>,
    global_lane: Option<usize>,
    /// Response expectations by the JSON text of their literal `id`.
    responses_by_id: HashMap<Vec<u8>, Vec<usize>>,
    responses_wild: Vec<usize>,
    segs: Vec<Segment>,
    /// Segments `0..active` are active (all before `active - 1` complete).
    active: usize,
    pending: VecDeque<(Send, usize)>,
    pause_until: Option<Duration>,
    ignores: Vec<(Pat, usize)>,
    frames_only: bool,
    /// Leave stream rules to the rule engine: skip non-frame lines and exact repeats of a frame
    /// already matched (a response sent twice, an event replayed), instead of failing on them.
    tolerant: bool,
    skip_repeats: (bool, bool),
    matched_texts: std::collections::HashSet<String>,
    /// The sessions' events, to skip a replay that renumbers them as exact repeats are skipped.
    replays: crate::rules::replay::Replays,
    /// Lines fed to [`Matcher::on_late_line`].
    late_lines: usize,
    bindings: Bindings,
    recent: VecDeque<Seen>,
    /// The current response's id as JSON text (reused).
    id_key: Vec<u8>,
    failure: Option<Failure>,
    done: bool,
    stdout_closed: bool,
    exit: ExitInfo,
    case_deadline: Duration,
    /// Counters.
    pub stats: Stats,
}

/// Captures and the `{{seq}}` value a successful attempt would commit.
type Tentative = (Vec<(String, Value)>, Option<f64>);

const RECENT: usize = 64;
const KEEP_VALUE_BELOW: usize = 256 * 1024;

impl Matcher {
    /// Tolerant mode (the suite's): lines that are not frames and exact repeats of a matched
    /// frame are skipped, not failures; the suite's rule engine and checks blame them on their
    /// rules (`stdout.frames-only`, `response.exactly-once`, `turn.no-replay`) so they do not fail
    /// every other check.
    pub fn set_tolerant(&mut self, on: bool) {
        self.tolerant = on;
    }

    /// In tolerant mode, whether exact repeats of responses and of notifications (and the events
    /// of a replay that renumbers them, [`crate::rules::replay`]) are skipped (default) or judged
    /// like any frame: off for the check whose rule is about them
    /// (`response.exactly-once`, `turn.no-replay`).
    pub fn set_skip_repeats(&mut self, responses: bool, notifications: bool) {
        self.skip_repeats = (responses, notifications);
    }

    /// The failure, if the case failed.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Whether the case is decided (passed or failed).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Starts from the last `{{seq}}` per session of the case this one continues (`# continues:`):
    /// a session resumed in a new process goes on numbering its events where its log ended.
    pub fn continue_seqs(&mut self, seqs: &Seqs) {
        self.bindings.seqs.clone_from(seqs);
    }

    /// The captured values so far.
    pub fn bindings(&self) -> &Bindings {
        &self.bindings
    }

    fn fail(&mut self, mut f: Failure) {
        if self.failure.is_none() {
            // The frames that explain it: the last of the session its expectation is about,
            // when it names one the runtime wrote about; else the last of all.
            let about = (f.trace_line.and_then(|l| self.session_expected_at(l)))
                .filter(|sid| self.recent.iter().any(|s| s.session.as_ref() == Some(sid)));
            let of = |s: &&Seen| about.is_none() || s.session == about;
            let last: Vec<&Seen> = self.recent.iter().rev().filter(of).take(8).collect();
            f.recent = (last.into_iter().rev())
                .map(|s| explain::clip(&s.text, 300))
                .collect();
            f.recent_session = about;
            self.failure = Some(f);
        }
        self.done = true;
    }

    /// The session the frame expectation on trace line `line` is about: its
    /// `params.sessionId` (or `parentSessionId`), written or bound.
    fn session_expected_at(&self, line: usize) -> Option<String> {
        use crate::trace::pattern::Pat;
        let e = self.exps.iter().find(|e| e.line == line)?;
        let EKind::Frame { pat, .. } = &e.kind else {
            return None;
        };
        let member = |p: &'_ Pat, k: &str| match p {
            Pat::Obj(members, _) => members.iter().find(|(m, _)| m == k).map(|(_, p)| p.clone()),
            _ => None,
        };
        let params = member(pat, "params")?;
        let sid = member(&params, "sessionId").or_else(|| member(&params, "parentSessionId"))?;
        let value = match sid {
            Pat::Lit(v) => v,
            Pat::Capture(n, _) | Pat::MaybeCapture(n) => self.bindings.vars.get(&n)?.clone(),
            _ => return None,
        };
        value.as_str().map(str::to_owned)
    }

    fn at(&self, line: usize) -> String {
        format!("{}:{}", self.file, line)
    }

    /// A failure about expectation `e`: its trace location and text filled in.
    fn failure_at(&self, e: &Exp, kind: FailureKind, reason: String) -> Failure {
        Failure {
            at: Some(self.at(e.line)),
            expected: Some(self.exp_text(e)),
            trace_line: Some(e.line),
            ..Failure::new(kind, reason)
        }
    }

    fn exp_text(&self, e: &Exp) -> String {
        match &e.kind {
            EKind::Frame { text, .. } => text.clone(),
            EKind::Exit(None) => "== exit any".into(),
            EKind::Exit(Some(c)) => format!(
                "== exit {}",
                c.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join("|")
            ),
        }
    }
    /// How many times each expectation matched, by trace line (for reports and `--bless`).
    pub fn coverage(&self) -> Vec<(usize, usize, usize)> {
        self.exps
            .iter()
            .map(|e| (e.step, e.line, e.matched_by))
            .collect()
    }
}

/// Helpers the matcher's unit tests share.
#[cfg(test)]
mod testkit {
    use super::*;
    use crate::trace::syntax::Trace;
    use crate::wire::output::Output;

    pub(super) fn m(text: &str) -> Matcher {
        let t = Trace::parse(text, "t").unwrap();
        let env = Env {
            cwd: "/c".into(),
            home: "/h".into(),
        };
        Matcher::new(&t, env, Duration::from_secs(5), Duration::from_secs(60))
    }

    /// Polls until the matcher waits, collecting what it writes.
    pub(super) fn drain(m: &mut Matcher, now: Duration) -> (Vec<String>, Action) {
        let mut w = Vec::new();
        loop {
            match m.poll(now) {
                Action::Write(b) => w.push(String::from_utf8_lossy(&b).into_owned()),
                a @ (Action::WaitUntil(_) | Action::Done) => return (w, a),
                _ => {}
            }
        }
    }

    pub(super) fn feed(m: &mut Matcher, lines: &[&str]) {
        for l in lines {
            let n = m.stats.lines + 1;
            m.on_output(&Output::parse(n, l.to_string()), Duration::from_millis(1));
        }
    }

    pub(super) const T: Duration = Duration::from_millis(1);
}
