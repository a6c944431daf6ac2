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

use super::explain;
use super::pattern::{Attempt, Bindings, Env, Pat};
use super::syntax::{Mult, Send, StepKind, Trace};
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

/// One line the runtime wrote on stdout, as the reader saw it.
#[derive(Debug, Clone, Copy)]
pub enum Line<'a> {
    /// A complete line (without `\n`), valid UTF-8, JS-trimmed, non-blank.
    Text(&'a str),
    /// A complete line that is not valid UTF-8 (first bad byte offset, length).
    NotUtf8 {
        /// Offset of the first invalid byte.
        at: usize,
        /// Line length in bytes.
        len: usize,
    },
    /// A line longer than the reader's bound (length in bytes).
    TooLong(usize),
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

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

#[derive(Debug)]
struct Segment {
    sends: Vec<(Send, usize)>,
    required_left: usize,
    active_since: Option<Duration>,
    /// Unmet required expectations by (deadline, index): the earliest deadline in O(log n).
    open: std::collections::BTreeSet<(Duration, usize)>,
}

/// Everything recent enough to explain a failure.
struct Seen {
    text: String,
    value: Option<Value>,
}

/// The matcher state for one case.
pub struct Matcher {
    file: String,
    env: Env,
    exps: Vec<Exp>,
    lanes: Vec<Lane>,
    lane_index: HashMap<LaneKey, usize>,
    responses_by_id: HashMap<String, Vec<usize>>,
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
    /// Lines fed to [`Matcher::on_late_line`].
    late_lines: usize,
    bindings: Bindings,
    recent: VecDeque<Seen>,
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

fn lane_key_of(pat: &Pat) -> LaneKey {
    let params = pat.member("params");
    let s = params.and_then(|p| {
        p.member("sessionId")
            .or_else(|| p.member("parentSessionId"))
    });
    match s {
        Some(Pat::Lit(Value::String(s))) => LaneKey::Session(s.clone()),
        Some(Pat::Capture(n, _)) => LaneKey::Capture(n.clone()),
        _ => LaneKey::Global,
    }
}

fn is_response_pattern(pat: &Pat) -> bool {
    pat.member("method").is_none()
        && (pat.member("id").is_some()
            || pat.member("result").is_some()
            || pat.member("error").is_some())
}

impl Matcher {
    /// Builds the matcher for a trace. `frame_timeout` is the default deadline of each
    /// expectation (the trace's `# timeout:` wins); `case_timeout` bounds the whole case.
    pub fn new(
        trace: &Trace,
        env: Env,
        frame_timeout: Duration,
        case_timeout: Duration,
    ) -> Matcher {
        let default_within = trace.meta.timeout.unwrap_or(frame_timeout);
        let mut m = Matcher {
            file: trace.file.clone(),
            env,
            exps: Vec::new(),
            lanes: Vec::new(),
            lane_index: HashMap::new(),
            responses_by_id: HashMap::new(),
            responses_wild: Vec::new(),
            segs: vec![Segment {
                sends: Vec::new(),
                required_left: 0,
                active_since: None,
                open: Default::default(),
            }],
            active: 0,
            pending: VecDeque::new(),
            pause_until: None,
            ignores: trace.ignores.clone(),
            frames_only: trace.frames_only,
            tolerant: false,
            skip_repeats: (true, true),
            matched_texts: Default::default(),
            late_lines: 0,
            bindings: Bindings::default(),
            recent: VecDeque::new(),
            failure: None,
            done: false,
            stdout_closed: false,
            exit: ExitInfo::Unknown,
            case_deadline: case_timeout,
            stats: Stats::default(),
        };
        // Which lane each request id's response waits on: the lane of the request's sessionId.
        let mut request_lane: HashMap<String, LaneKey> = HashMap::new();
        let mut last_group: Option<(usize, usize, usize)> = None; // (group, lane, unit)
        let mut prev_was_send = false;
        for (i, step) in trace.steps.iter().enumerate() {
            match &step.kind {
                StepKind::Send(s) => {
                    if !(prev_was_send || m.segs.len() == 1 && m.exps.is_empty()) {
                        m.segs.push(Segment {
                            sends: Vec::new(),
                            required_left: 0,
                            active_since: None,
                            open: Default::default(),
                        });
                    }
                    prev_was_send = true;
                    if let Send::Frame {
                        id: Some(id),
                        session: Some(p),
                        ..
                    } = s
                    {
                        let key = match p {
                            Pat::Lit(Value::String(s)) => Some(LaneKey::Session(s.clone())),
                            Pat::Capture(n, _) => Some(LaneKey::Capture(n.clone())),
                            _ => None,
                        };
                        match key {
                            Some(k) => request_lane.insert(id.clone(), k),
                            None => request_lane.remove(id),
                        };
                    }
                    m.segs
                        .last_mut()
                        .expect("one segment")
                        .sends
                        .push((s.clone(), step.line));
                }
                StepKind::Expect(e) => {
                    prev_was_send = false;
                    let seg = m.segs.len() - 1;
                    let idx = m.exps.len();
                    let response = is_response_pattern(&e.pat);
                    let mut not_before = None;
                    let mut lane_pos = None;
                    if response {
                        let id_lit = match e.pat.member("id") {
                            Some(Pat::Lit(v @ (Value::String(_) | Value::Number(_)))) => {
                                Some(crate::wire::json::to_string(v))
                            }
                            _ => None,
                        };
                        match &id_lit {
                            Some(k) => {
                                m.responses_by_id.entry(k.clone()).or_default().push(idx);
                                if let Some(lk) = request_lane.get(k) {
                                    let lane = m.lane(lk.clone());
                                    not_before = Some((lane, m.lanes[lane].units.len()));
                                }
                            }
                            None => m.responses_wild.push(idx),
                        }
                    } else {
                        let lane = m.lane(lane_key_of(&e.pat));
                        match (e.group, last_group) {
                            (Some(g), Some((lg, ll, lu))) if g == lg && ll == lane => {
                                m.lanes[lane].units[lu].push(idx);
                                lane_pos = Some((lane, lu));
                            }
                            (g, _) => {
                                m.lanes[lane].units.push(vec![idx]);
                                let lu = m.lanes[lane].units.len() - 1;
                                last_group = g.map(|g| (g, lane, lu));
                                lane_pos = Some((lane, lu));
                            }
                        }
                    }
                    if e.mult == Mult::One {
                        m.segs[seg].required_left += 1;
                        m.segs[seg]
                            .open
                            .insert((step.within.unwrap_or(default_within), idx));
                    }
                    m.exps.push(Exp {
                        step: i,
                        line: step.line,
                        seg,
                        deadline_after: step.within.unwrap_or(default_within),
                        kind: EKind::Frame {
                            pat: e.pat.clone(),
                            mult: e.mult,
                            text: e.text.clone(),
                            not_before,
                            response,
                        },
                        done: false,
                        matched_by: 0,
                        lane_pos,
                    });
                }
                StepKind::Exit(codes) => {
                    prev_was_send = false;
                    let seg = m.segs.len() - 1;
                    m.segs[seg].required_left += 1;
                    let after = step.within.unwrap_or(default_within);
                    m.segs[seg].open.insert((after, m.exps.len()));
                    m.exps.push(Exp {
                        step: i,
                        line: step.line,
                        seg,
                        deadline_after: step.within.unwrap_or(default_within),
                        kind: EKind::Exit(codes.clone()),
                        done: false,
                        matched_by: 0,
                        lane_pos: None,
                    });
                }
            }
        }
        m
    }

    fn lane(&mut self, key: LaneKey) -> usize {
        if let Some(&i) = self.lane_index.get(&key) {
            return i;
        }
        self.lanes.push(Lane {
            key: key.clone(),
            units: Vec::new(),
            cursor: 0,
        });
        self.lane_index.insert(key, self.lanes.len() - 1);
        self.lanes.len() - 1
    }

    /// The failure, once the case has failed.
    /// After a [`FailureKind::Missing`] failure: whether the missing frame arrives late. The
    /// runner feeds the lines that follow the failure for a short grace; when one matches the
    /// missing expectation, the failure becomes [`FailureKind::OutOfOrder`], naming both lines.
    /// Returns true once decided (nothing more to feed).
    pub fn on_late_line(&mut self, text: &str) -> bool {
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
        let Ok(p) = crate::wire::json::parse(text) else {
            return false;
        };
        let session = p
            .value
            .get("params")
            .and_then(|x| x.get("sessionId").or_else(|| x.get("parentSessionId")))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if self.try_exp(j, &p.value, session.as_deref()).is_none() {
            crate::wire::json::dispose(p.value);
            return false;
        }
        crate::wire::json::dispose(p.value);
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

    /// Tolerant mode (the suite's): lines that are not frames and exact repeats of a matched
    /// frame are skipped, not failures; the suite's rule engine and checks blame them on their
    /// rules (`stdout.frames-only`, `response.exactly-once`, `turn.no-replay`) so they do not fail
    /// every other check.
    pub fn set_tolerant(&mut self, on: bool) {
        self.tolerant = on;
    }

    /// In tolerant mode, whether exact repeats of responses and of notifications are skipped
    /// (default) or judged like any frame: off for the check whose rule is about them
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

    /// The captured values so far.
    pub fn bindings(&self) -> &Bindings {
        &self.bindings
    }

    fn fail(&mut self, mut f: Failure) {
        if self.failure.is_none() {
            f.recent = self
                .recent
                .iter()
                .rev()
                .take(8)
                .rev()
                .map(|s| explain::clip(&s.text, 300))
                .collect();
            self.failure = Some(f);
        }
        self.done = true;
    }

    fn at(&self, line: usize) -> String {
        format!("{}:{}", self.file, line)
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

    fn send_error(&mut self, line: usize, name: &str) -> Action {
        self.fail(Failure {
            reason: format!(
                "the send at {} uses {{{{${name}}}}}, which no frame has bound yet",
                self.at(line)
            ),
            at: None,
            expected: None,
            closest: None,
            diff: None,
            recent: Vec::new(),
            kind: FailureKind::Harness,
            trace_line: Some(line),
            stdout_line: None,
        });
        Action::Done
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
            self.fail(Failure {
                reason: format!("case timed out after {:.1}s", now.as_secs_f64()),
                at: None,
                expected: None,
                closest: None,
                diff: None,
                recent: Vec::new(),
                kind: FailureKind::Timeout,
                trace_line: None,
                stdout_line: None,
            });
            return;
        };
        let exp = &self.exps[i];
        let what = match waited {
            None => format!("the case's {:.1}s ran out", now.as_secs_f64()),
            Some(w) => format!("waited {:.1}s", w.as_secs_f64()),
        };
        let mut f = Failure {
            reason: format!(
                "{} ({}) never arrived ({what})",
                self.exp_text(exp),
                self.at(exp.line)
            ),
            at: Some(self.at(exp.line)),
            expected: Some(self.exp_text(exp)),
            closest: None,
            diff: None,
            recent: Vec::new(),
            kind: FailureKind::Timeout,
            trace_line: Some(exp.line),
            stdout_line: None,
        };
        if let EKind::Frame { pat, .. } = &exp.kind {
            self.explain_closest(pat, &mut f);
        }
        self.fail(f);
    }

    fn explain_closest(&self, pat: &Pat, f: &mut Failure) {
        let mut best: Option<(f64, &Seen)> = None;
        for s in self.recent.iter() {
            if let Some(v) = &s.value {
                let score = explain::score(pat, v, &self.bindings, &self.env);
                if best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, s));
                }
            }
        }
        if let Some((_, s)) = best {
            f.closest = Some(explain::clip(&s.text, 600));
            if let Some(v) = &s.value {
                f.diff = explain::first_difference(pat, v, &self.bindings, &self.env);
            }
        }
    }

    /// Replaces `{{cwd}}`, `{{home}}` and bound `{{$name}}` in a send. In a frame, a string that
    /// is exactly `"{{$name}}"` becomes the captured JSON value; elsewhere values are inserted as
    /// string contents (JSON-escaped inside frames).
    fn substitute(&self, src: &[u8], json: bool) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(src.len());
        let mut i = 0;
        while i < src.len() {
            let Some(off) = memchr::memmem::find(&src[i..], b"{{") else {
                out.extend_from_slice(&src[i..]);
                break;
            };
            let start = i + off;
            let Some(end_off) = memchr::memmem::find(&src[start + 2..], b"}}") else {
                out.extend_from_slice(&src[i..]);
                break;
            };
            let body = &src[start + 2..start + 2 + end_off];
            let end = start + 2 + end_off + 2;
            let text: Option<Vec<u8>> = match body {
                b"cwd" => Some(self.env.cwd.as_bytes().to_vec()),
                b"home" => Some(self.env.home.as_bytes().to_vec()),
                _ if body.first() == Some(&b'$') => {
                    let name = String::from_utf8_lossy(&body[1..]).into_owned();
                    let name = name.split(':').next().unwrap_or("").to_owned();
                    let v = self.bindings.vars.get(&name).ok_or(name.clone())?;
                    let whole =
                        json && start > 0 && src[start - 1] == b'"' && src.get(end) == Some(&b'"');
                    if whole {
                        out.extend_from_slice(&src[i..start - 1]);
                        crate::wire::json::write_value(v, &mut out);
                        i = end + 1;
                        continue;
                    }
                    Some(match v {
                        Value::String(s) => s.as_bytes().to_vec(),
                        o => crate::wire::json::to_string(o).into_bytes(),
                    })
                }
                _ => None,
            };
            match text {
                Some(t) => {
                    out.extend_from_slice(&src[i..start]);
                    if json {
                        let mut q = Vec::new();
                        crate::wire::json::write_str(&String::from_utf8_lossy(&t), &mut q);
                        out.extend_from_slice(&q[1..q.len() - 1]);
                    } else {
                        out.extend_from_slice(&t);
                    }
                }
                None => out.extend_from_slice(&src[i..end]),
            }
            i = end;
        }
        Ok(out)
    }

    /// Judges one stdout line received at `now`.
    pub fn on_line(&mut self, line: Line<'_>, now: Duration) {
        if self.done {
            return;
        }
        self.stats.lines += 1;
        let text = match line {
            Line::Text(t) => t,
            Line::NotUtf8 { at, len } => {
                return self.not_a_frame(format!(
                    "stdout line {} is not valid UTF-8 (first invalid byte at offset {at} of {len})",
                    self.stats.lines
                ), None)
            }
            Line::TooLong(n) => {
                return self.not_a_frame(format!(
                    "stdout line {} is {n} bytes long, over the reader's line bound",
                    self.stats.lines
                ), None)
            }
        };
        let value = match crate::wire::json::parse(text) {
            Ok(p) => p.value,
            Err(e) => {
                return self.not_a_frame(
                    format!("stdout line {} is not JSON ({e})", self.stats.lines),
                    Some(text),
                )
            }
        };
        if !value.is_object() {
            let what = match &value {
                Value::Array(_) => "a JSON array",
                Value::String(_) => "a JSON string",
                Value::Number(_) => "a JSON number",
                Value::Bool(_) => "a JSON boolean",
                _ => "JSON null",
            };
            crate::wire::json::dispose(value);
            return self.not_a_frame(
                format!(
                    "stdout line {} is {what}, not a frame object",
                    self.stats.lines
                ),
                Some(text),
            );
        }
        self.on_frame(text, value, now);
    }

    fn not_a_frame(&mut self, reason: String, text: Option<&str>) {
        if !self.frames_only || self.tolerant {
            return;
        }
        self.fail(Failure {
            reason: format!("stdout carries something other than JSON-RPC frames: {reason}"),
            at: None,
            expected: None,
            closest: text.map(|t| explain::clip(t, 300)),
            diff: None,
            recent: Vec::new(),
            kind: FailureKind::NotAFrame,
            trace_line: None,
            stdout_line: Some(self.stats.lines),
        });
    }

    fn remember(&mut self, text: &str, value: Value) {
        if self.recent.len() == RECENT {
            if let Some(old) = self.recent.pop_front() {
                if let Some(v) = old.value {
                    crate::wire::json::dispose(v);
                }
            }
        }
        let keep = text.len() < KEEP_VALUE_BELOW;
        self.recent.push_back(Seen {
            text: if keep {
                text.to_owned()
            } else {
                explain::clip(text, 4096)
            },
            value: if keep {
                Some(value)
            } else {
                crate::wire::json::dispose(value);
                None
            },
        });
    }

    fn on_frame(&mut self, text: &str, value: Value, _now: Duration) {
        let obj = value.as_object().expect("checked object");
        let is_response =
            !obj.get("method").is_some_and(Value::is_string) && obj.contains_key("id");
        let session = obj
            .get("params")
            .and_then(|p| p.get("sessionId").or_else(|| p.get("parentSessionId")))
            .and_then(Value::as_str)
            .map(str::to_owned);
        // Tolerant: an exact repeat of a frame already matched (a response sent twice, an event
        // replayed) is another rule's business; it must not match a later expectation either.
        let skip = if is_response {
            self.skip_repeats.0
        } else {
            self.skip_repeats.1
        };
        if self.tolerant && skip && self.matched_texts.contains(text) {
            self.stats.ignored += 1;
            crate::wire::json::dispose(value);
            return;
        }
        let hit = if is_response {
            self.match_response(&value, session.as_deref())
        } else {
            self.match_notification(&value, session.as_deref())
        };
        if hit {
            if self.tolerant {
                self.matched_texts.insert(text.to_owned());
            }
            self.stats.matched += 1;
            self.remember(text, value);
            return;
        }
        let ignored = self.ignores.iter().any(|(p, _)| {
            let mut at = Attempt::new(&self.bindings, &self.env, session.as_deref());
            p.matches(Some(&value), &mut at)
        });
        if ignored {
            self.stats.ignored += 1;
            crate::wire::json::dispose(value);
            return;
        }
        // Unexpected. If an open expectation accepts it, it came too early: name what it overtook.
        if let Some(f) = self.out_of_order(text, &value, session.as_deref()) {
            crate::wire::json::dispose(value);
            self.fail(f);
            return;
        }
        let mut best: Option<(f64, usize)> = None;
        for (i, e) in self.exps.iter().enumerate() {
            if e.seg >= self.active
                || (e.done
                    && !matches!(
                        &e.kind,
                        EKind::Frame {
                            mult: Mult::Star,
                            ..
                        }
                    ))
            {
                continue;
            }
            if let EKind::Frame { pat, response, .. } = &e.kind {
                if *response != is_response {
                    continue;
                }
                let s = explain::score(pat, &value, &self.bindings, &self.env);
                if best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, i));
                }
            }
        }
        let mut f = Failure {
            reason: format!(
                "unexpected frame (stdout line {}): {}",
                self.stats.lines,
                explain::clip(text, 300)
            ),
            at: None,
            expected: None,
            closest: None,
            diff: None,
            recent: Vec::new(),
            kind: FailureKind::Unexpected,
            trace_line: None,
            stdout_line: Some(self.stats.lines),
        };
        if let Some((_, i)) = best {
            let e = &self.exps[i];
            f.kind = FailureKind::Mismatch;
            f.trace_line = Some(e.line);
            f.at = Some(self.at(e.line));
            f.expected = Some(self.exp_text(e));
            if let EKind::Frame { pat, .. } = &e.kind {
                f.diff = explain::first_difference(pat, &value, &self.bindings, &self.env);
            }
            f.closest = Some(explain::clip(text, 300));
            f.reason = match &f.diff {
                Some(d) => format!(
                    "stdout line {} differs from the expectation at {}: {d}",
                    self.stats.lines,
                    self.at(e.line)
                ),
                None => format!(
                    "stdout line {} is not what {} expects",
                    self.stats.lines,
                    self.at(e.line)
                ),
            };
        }
        crate::wire::json::dispose(value);
        self.fail(f);
    }

    fn out_of_order(&self, text: &str, v: &Value, session: Option<&str>) -> Option<Failure> {
        for (i, e) in self.exps.iter().enumerate() {
            if e.done
                || !matches!(e.kind, EKind::Frame { .. })
                || self.try_exp(i, v, session).is_none()
            {
                continue;
            }
            let (lane, upto) = match (&e.kind, e.lane_pos) {
                (
                    EKind::Frame {
                        not_before: Some(nb),
                        ..
                    },
                    _,
                ) => *nb,
                (_, Some(lp)) => lp,
                _ => continue,
            };
            let l = &self.lanes[lane];
            let blocker = (l.cursor..upto.min(l.units.len()))
                .flat_map(|u| l.units[u].iter().copied())
                .find(|&j| self.exps[j].required() && !self.exps[j].done);
            let (why, at) = match blocker {
                Some(j) => {
                    return Some(self.missing_before(j, i, text, v));
                }
                None if e.seg >= self.active => (
                    "it arrived before the sends it follows in the trace were due".to_owned(),
                    i,
                ),
                None => continue,
            };
            let diff = match &self.exps[at].kind {
                EKind::Frame { pat, .. } if at != i => {
                    explain::first_difference(pat, v, &self.bindings, &self.env)
                }
                _ => None,
            };
            return Some(Failure {
                reason: format!(
                    "frame out of order (stdout line {}): it matches {} but {why}",
                    self.stats.lines,
                    self.at(e.line)
                ),
                at: Some(self.at(self.exps[at].line)),
                expected: Some(self.exp_text(&self.exps[at])),
                closest: Some(explain::clip(text, 300)),
                diff,
                recent: Vec::new(),
                kind: FailureKind::Missing,
                trace_line: Some(self.exps[at].line),
                stdout_line: Some(self.stats.lines),
            });
        }
        None
    }

    /// Expectation `j` had not arrived when a frame matching `i`, which the trace orders after
    /// it, came: from the client's side `j` is missing, whether or not it would come later.
    fn missing_before(&self, j: usize, i: usize, text: &str, v: &Value) -> Failure {
        let diff = match &self.exps[j].kind {
            EKind::Frame { pat, .. } => {
                explain::first_difference(pat, v, &self.bindings, &self.env)
            }
            _ => None,
        };
        Failure {
            reason: format!(
                "{} ({}) never arrived before stdout line {}, which matches {} written after it",
                self.exp_text(&self.exps[j]),
                self.at(self.exps[j].line),
                self.stats.lines,
                self.at(self.exps[i].line)
            ),
            at: Some(self.at(self.exps[j].line)),
            expected: Some(self.exp_text(&self.exps[j])),
            closest: Some(explain::clip(text, 300)),
            diff,
            recent: Vec::new(),
            kind: FailureKind::Missing,
            trace_line: Some(self.exps[j].line),
            stdout_line: Some(self.stats.lines),
        }
    }

    fn try_exp(&self, i: usize, v: &Value, session: Option<&str>) -> Option<Tentative> {
        let EKind::Frame { pat, .. } = &self.exps[i].kind else {
            return None;
        };
        let mut at = Attempt::new(&self.bindings, &self.env, session);
        if pat.matches(Some(v), &mut at) {
            Some((at.new_vars, at.new_seq))
        } else {
            None
        }
    }

    fn accept(&mut self, i: usize, b: Tentative, session: Option<&str>) {
        for (n, v) in b.0 {
            self.bindings.vars.insert(n, v);
        }
        if let (Some(s), Some(q)) = (session, b.1) {
            self.bindings.seqs.insert(s.to_owned(), q);
        }
        let e = &mut self.exps[i];
        e.matched_by += 1;
        let required = e.required();
        if !e.done
            && !matches!(
                &e.kind,
                EKind::Frame {
                    mult: Mult::Star,
                    ..
                }
            )
        {
            e.done = true;
            if required {
                self.segs[e.seg].required_left -= 1;
                self.segs[e.seg].open.remove(&(e.deadline_after, i));
            }
        }
    }

    fn match_response(&mut self, v: &Value, session: Option<&str>) -> bool {
        let key = v
            .get("id")
            .map(crate::wire::json::to_string)
            .unwrap_or_default();
        let mut cands: Vec<usize> = self.responses_by_id.get(&key).cloned().unwrap_or_default();
        cands.extend(self.responses_wild.iter().copied());
        cands.sort_unstable();
        for i in cands {
            let e = &self.exps[i];
            if e.done || e.seg >= self.active {
                continue;
            }
            if let EKind::Frame {
                not_before: Some((lane, pos)),
                ..
            } = &e.kind
            {
                if !self.lane_clear_before(*lane, *pos) {
                    continue;
                }
            }
            if let Some(b) = self.try_exp(i, v, session) {
                self.accept(i, b, session);
                return true;
            }
        }
        false
    }

    /// Whether every required unit of `lane` before unit `pos` is satisfied.
    fn lane_clear_before(&self, lane: usize, pos: usize) -> bool {
        let l = &self.lanes[lane];
        (l.cursor..pos.min(l.units.len())).all(|u| {
            l.units[u]
                .iter()
                .all(|&i| self.exps[i].done || !self.exps[i].required())
        })
    }

    fn match_notification(&mut self, v: &Value, session: Option<&str>) -> bool {
        // Candidate lanes: the literal session, captures bound to it, unbound captures, global.
        let mut lanes: Vec<usize> = Vec::new();
        if let Some(s) = session {
            if let Some(&l) = self.lane_index.get(&LaneKey::Session(s.to_owned())) {
                lanes.push(l);
            }
            let mut unbound = Vec::new();
            for (li, lane) in self.lanes.iter().enumerate() {
                if let LaneKey::Capture(n) = &lane.key {
                    match self.bindings.vars.get(n) {
                        Some(Value::String(b)) if b == s => lanes.push(li),
                        None => unbound.push(li),
                        _ => {}
                    }
                }
            }
            lanes.extend(unbound);
        }
        if let Some(&g) = self.lane_index.get(&LaneKey::Global) {
            lanes.push(g);
        }
        for l in lanes {
            if let Some((unit, i, b)) = self.lane_candidate(l, v, session) {
                self.accept(i, b, session);
                self.advance(l, unit);
                return true;
            }
        }
        false
    }

    /// The latest unit in the lane's window (cursor up to the first unsatisfied required unit)
    /// that accepts the frame.
    fn lane_candidate(
        &self,
        l: usize,
        v: &Value,
        session: Option<&str>,
    ) -> Option<(usize, usize, Tentative)> {
        let lane = &self.lanes[l];
        let mut found = None;
        for u in lane.cursor..lane.units.len() {
            // Lane windows cross segment boundaries: a notification written after a send may
            // legitimately arrive before it is written (the runtime keeps working meanwhile).
            let unit = &lane.units[u];
            for &i in unit {
                let e = &self.exps[i];
                if e.done {
                    continue;
                }
                if let Some(b) = self.try_exp(i, v, session) {
                    found = Some((u, i, b));
                    break;
                }
            }
            let blocking = unit
                .iter()
                .any(|&i| self.exps[i].required() && !self.exps[i].done);
            if blocking {
                break;
            }
        }
        found
    }

    fn advance(&mut self, l: usize, unit: usize) {
        let complete = self.lanes[l].units[unit]
            .iter()
            .all(|&i| self.exps[i].done || !self.exps[i].required());
        let has_star = self.lanes[l].units[unit].iter().any(|&i| {
            matches!(
                &self.exps[i].kind,
                EKind::Frame {
                    mult: Mult::Star,
                    ..
                }
            )
        });
        let single = self.lanes[l].units[unit].len() == 1;
        let lane = &mut self.lanes[l];
        lane.cursor = if complete && !(single && has_star) {
            unit + 1
        } else {
            unit
        };
        // A group stays open while it has unmatched members; skip fully used units.
        let _ = &lane.key;
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
            let mut f = Failure {
                reason: format!(
                    "the runtime closed stdout ({}) while {} ({}) was still expected",
                    self.exit,
                    self.exp_text(e),
                    self.at(e.line)
                ),
                at: Some(self.at(e.line)),
                expected: Some(self.exp_text(e)),
                closest: None,
                diff: None,
                recent: Vec::new(),
                kind: FailureKind::Exit,
                trace_line: Some(e.line),
                stdout_line: None,
            };
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
                    self.fail(Failure {
                        reason: format!(
                            "the runtime ended with {exit}; {} ({}) expected otherwise",
                            self.exp_text(e),
                            self.at(e.line)
                        ),
                        at: Some(self.at(e.line)),
                        expected: Some(self.exp_text(e)),
                        closest: None,
                        diff: None,
                        recent: Vec::new(),
                        kind: FailureKind::Exit,
                        trace_line: Some(e.line),
                        stdout_line: None,
                    });
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
                    self.fail(Failure {
                        reason: format!("the runtime ended ({exit}) before {what}"),
                        at: open.map(|i| self.at(self.exps[i].line)),
                        expected: open.map(|i| self.exp_text(&self.exps[i])),
                        closest: None,
                        diff: None,
                        recent: Vec::new(),
                        kind: FailureKind::Exit,
                        trace_line: open.map(|i| self.exps[i].line),
                        stdout_line: None,
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

    /// How many times each expectation matched, by trace line (for reports and `--bless`).
    pub fn coverage(&self) -> Vec<(usize, usize, usize)> {
        self.exps
            .iter()
            .map(|e| (e.step, e.line, e.matched_by))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(text: &str) -> Matcher {
        let t = Trace::parse(text, "t").unwrap();
        let env = Env {
            cwd: "/c".into(),
            home: "/h".into(),
        };
        Matcher::new(&t, env, Duration::from_secs(5), Duration::from_secs(60))
    }

    /// Polls until the matcher waits, collecting what it writes.
    fn drain(m: &mut Matcher, now: Duration) -> (Vec<String>, Action) {
        let mut w = Vec::new();
        loop {
            match m.poll(now) {
                Action::Write(b) => w.push(String::from_utf8_lossy(&b).into_owned()),
                a @ (Action::WaitUntil(_) | Action::Done) => return (w, a),
                _ => {}
            }
        }
    }

    fn feed(m: &mut Matcher, lines: &[&str]) {
        for l in lines {
            m.on_line(Line::Text(l), Duration::from_millis(1));
        }
    }

    const T: Duration = Duration::from_millis(1);

    #[test]
    fn responses_match_by_id_in_any_order() {
        let mut x = m(">> {\"id\":1,\"method\":\"a\"}\n>> {\"id\":2,\"method\":\"b\"}\n<< {\"id\":1}\n<< {\"id\":2}\n");
        let (w, _) = drain(&mut x, T);
        // Consecutive sends go out as one write.
        assert_eq!(
            w,
            vec!["{\"id\":1,\"method\":\"a\"}\n{\"id\":2,\"method\":\"b\"}\n"]
        );
        feed(
            &mut x,
            &["{\"id\":2,\"result\":{}}", "{\"id\":1,\"result\":{}}"],
        );
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
    }

    #[test]
    fn sessions_interleave_but_keep_their_own_order() {
        let t = ">> {\"id\":1,\"method\":\"go\"}\n<< {\"params\":{\"sessionId\":\"a\",\"n\":1}}\n<< {\"params\":{\"sessionId\":\"a\",\"n\":2}}\n<< {\"params\":{\"sessionId\":\"b\",\"n\":1}}\n";
        let mut x = m(t);
        drain(&mut x, T);
        feed(
            &mut x,
            &[
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"b\",\"n\":1}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":1}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":2}}",
            ],
        );
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        let mut y = m(t);
        drain(&mut y, T);
        feed(
            &mut y,
            &["{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":2}}"],
        );
        let f = y.failure().expect("out of order");
        assert_eq!(f.kind, FailureKind::Missing, "{f}");
        assert!(
            f.reason.contains("never arrived before stdout line 1"),
            "{f}"
        );
        assert_eq!(f.at.as_deref(), Some("t:2"));
        assert_eq!((f.trace_line, f.stdout_line), (Some(2), Some(1)));
        // Missing stays missing while other frames come; the frame itself makes it late.
        assert!(y.wants_late_lines());
        assert!(!y.on_late_line("{\"method\":\"e\",\"params\":{\"sessionId\":\"b\",\"n\":1}}"));
        assert_eq!(y.failure().unwrap().kind, FailureKind::Missing);
        assert!(y.on_late_line("{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":1}}"));
        let f = y.failure().unwrap();
        assert_eq!(f.kind, FailureKind::OutOfOrder, "{f}");
        assert!(
            f.reason
                .contains("arrived out of order: at stdout line 3, after stdout line 1"),
            "{f}"
        );
    }

    #[test]
    fn a_star_does_not_swallow_the_frame_that_ends_it() {
        let mut x = m(">> {\"id\":1,\"method\":\"go\"}\n<<* {\"params\":{\"sessionId\":\"a\"}}\n<< {\"params\":{\"sessionId\":\"a\",\"end\":true}}\n<< {\"id\":1}\n");
        drain(&mut x, T);
        feed(
            &mut x,
            &[
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\"}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\"}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"end\":true}}",
                "{\"id\":1,\"result\":{}}",
            ],
        );
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        assert_eq!(x.stats.matched, 4);
    }

    #[test]
    fn captures_flow_into_later_sends_as_values() {
        let mut x = m(">> {\"id\":1,\"method\":\"a\"}\n<< {\"id\":1,\"result\":{\"n\":\"{{$n}}\",\"s\":\"{{$s}}\"}}\n>> {\"id\":2,\"method\":\"b\",\"params\":{\"n\":\"{{$n}}\",\"t\":\"x{{$s}}y {{cwd}}\"}}\n<< {\"id\":2}\n");
        drain(&mut x, T);
        feed(
            &mut x,
            &["{\"id\":1,\"result\":{\"n\":42,\"s\":\"q\\\"\"}}"],
        );
        let (w, _) = drain(&mut x, T);
        assert_eq!(
            w,
            vec!["{\"id\":2,\"method\":\"b\",\"params\":{\"n\":42,\"t\":\"xq\\\"y /c\"}}\n"]
        );
    }

    #[test]
    fn unordered_groups_and_ignore_rules() {
        let mut x = m("ignore {\"method\":\"noise\"}\n>> {\"id\":1,\"method\":\"go\"}\n<<unordered\n<< {\"params\":{\"sessionId\":\"a\",\"k\":1}}\n<< {\"params\":{\"sessionId\":\"a\",\"k\":2}}\n<<end\n");
        drain(&mut x, T);
        feed(
            &mut x,
            &[
                "{\"method\":\"noise\"}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"k\":2}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"k\":1}}",
            ],
        );
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        assert_eq!(x.stats.ignored, 1);
    }

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
        assert_eq!(f.diff.as_deref(), Some("/result/v: expected 2, got 1"));
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

    #[test]
    fn long_traces_match_in_linear_time() {
        // 20 000 expected frames in one lane with stars between: each frame looks at a short window.
        let mut t = String::from(">> {\"id\":0,\"method\":\"go\"}\n");
        for i in 0..20_000 {
            t.push_str(&format!("<<* {{\"params\":{{\"sessionId\":\"s\",\"noise\":true}}}}\n<< {{\"params\":{{\"sessionId\":\"s\",\"i\":{i}}}}}\n"));
        }
        let mut x = m(&t);
        drain(&mut x, T);
        for i in 0..20_000 {
            x.on_line(
                Line::Text(&format!(
                    "{{\"method\":\"e\",\"params\":{{\"sessionId\":\"s\",\"i\":{i}}}}}"
                )),
                T,
            );
            // The runner polls after every frame: polling must not rescan the trace.
            assert!(matches!(x.poll(T), Action::WaitUntil(_) | Action::Done));
        }
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        // Not a wall-clock assertion: the matched count proves every frame was judged.
        assert_eq!(x.stats.matched, 20_000);
    }
}
