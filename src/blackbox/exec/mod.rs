//! Runs one generated sequence against a runtime process over stdio, judging its real output
//! with the stream rules ([`crate::rules`]), with a deadline on every wait.
//!
//! Phases: write the ops (pausing for `Advance`), terminate any partial line, write a barrier
//! request and wait for its answer; settle (every request answered, every running session idle);
//! then `shutdown` or EOF and wait for exit 0. A broken rule does not end the run: every class is
//! reported once per run, and the ids and sessions whose frames broke a rule are marked so that the
//! differential comparison does not repeat them. Only a fatal finding (a hang, stdout closing
//! early, an unreadable line) ends it; the process group is killed on every path.

use super::class::{FindingClass, HangAt, OutputFault};
use super::latency::{Adapt, Wait};
pub use super::observed::{method_label, Flagged, Observed, Outcome};
use super::observed::{normalise, normalise_value};
use super::sequence::{End, Sequence, BARRIER_ID, BARRIER_METHOD, SHUTDOWN_ID};
use super::Finding;
mod activity;
mod live;
mod state;
use crate::ops::{Op, Renderer};
use crate::rules::{CheckId, Conversation, Profile, Received, Sent, Unsettled, Unsolicited};
use crate::runner::{CaseDirs, Child, CommandSpec, Event, StdoutLimit};
use crate::trace::ExitInfo;
use crate::wire::{json, LineDecoder, LineEvent};
pub use live::{continues, run_on, Live, Plan};
use serde_json::Value;
use state::{list, Phase, State};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the settle waits, once everything is idle, for the work a runtime does on its own
/// (a subagent's end reported, a goal's rounds) to begin.
const OWN_WORK_GRACE: Duration = Duration::from_secs(2);
/// Longest stdout line accepted.
const MAX_LINE: usize = 16 << 20;
/// Longest `Advance` pause, in milliseconds (ops carry up to 65 s; real time is precious).
pub const MAX_PAUSE_MS: u64 = 40;

/// The real pause of an `Advance(ms)` op: one in four is up to [`MAX_PAUSE_MS`], the rest under
/// 5 ms (a sequence averages ~8 ms of pauses instead of ~40, and long pauses stay reachable).
pub fn pause_ms(ms: u16) -> u64 {
    let ms = u64::from(ms);
    if ms % 4 == 0 {
        (ms / 4) % MAX_PAUSE_MS
    } else {
        ms % 5
    }
}

/// A runtime to run sequences against.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its command line.
    pub cmd: CommandSpec,
    /// Extra environment (the model stub's, when used).
    pub env: Vec<(String, String)>,
    /// The model stub the runtime talks to, if any: its requests show what the runtime is still
    /// doing, and waits grow with them (docs/BLACKBOX.md, "One sequence").
    pub model: Option<Arc<crate::model_stub::ModelStub>>,
}

impl Target {
    /// A runtime started as `cmd`, with no extra environment and no model stub.
    pub fn new(cmd: CommandSpec) -> Target {
        Target {
            cmd,
            env: Vec::new(),
            model: None,
        }
    }

    /// A runtime started as `cmd` talking to `stub`: the stub's environment, and its requests
    /// watched.
    pub fn with_stub(cmd: CommandSpec, stub: Arc<crate::model_stub::ModelStub>) -> Target {
        Target {
            cmd,
            env: stub.env(),
            model: Some(stub),
        }
    }
}

/// How long each phase may take.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// From the last write to the barrier's answer.
    pub barrier: Duration,
    /// From the barrier's answer until every request is answered and every session idle
    /// (plus the sequence's `slow` seconds).
    pub settle: Duration,
    /// From `shutdown`/EOF to the process's exit.
    pub exit: Duration,
    /// Scale the waits that run out (a hang, no exit, a request never answered) with the
    /// runtime's observed latency, the deadlines above being their ceilings
    /// ([`super::latency`]); `None`: always the full deadline.
    pub adapt: Option<Adapt>,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            barrier: Duration::from_secs(10),
            settle: Duration::from_secs(10),
            exit: Duration::from_secs(10),
            adapt: None,
        }
    }
}

/// How long to wait for `w` in this run: its deadline `ceiling`, or less ([`Deadlines::adapt`]).
fn window(st: &State<'_>, dl: &Deadlines, w: &[Wait], ceiling: Duration) -> Duration {
    match (dl.adapt, &st.latency) {
        (Some(a), Some(l)) => l.window_of(w, a, ceiling),
        _ => ceiling,
    }
}

/// The result of one run.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    /// Every finding class the run showed (its first occurrence each).
    pub findings: Vec<Finding>,
    /// A fatal finding ended the run early: its observations are incomplete.
    pub fatal: bool,
    /// What was seen.
    pub observed: Observed,
    /// The process could not be started at all.
    pub broken: Option<String>,
    /// The run was stopped at the caller's hard deadline before it was done (what it was
    /// waiting for, with the runtime's stderr tail): its observations are incomplete, and no
    /// wait it cut short is a finding.
    pub cut: Option<String>,
    /// The run started a runtime process (rather than continuing a shared one).
    pub fresh: bool,
    /// On a shared process, a notification about an earlier sequence's session arrived: the run
    /// is void (nothing else in it is set) and must be repeated on a fresh process.
    pub straggler: bool,
}

/// Runs `seq` against `target` in fresh directories under the rules of the runtime's edition.
pub fn run_sequence(seq: &Sequence, target: &Target, rules: &Profile, dl: Deadlines) -> RunResult {
    run_sequence_until(seq, target, rules, dl, None)
}

/// Like [`run_sequence`], but every wait also ends at `stop` (the fuzzer's time budget): a run
/// that reaches it is stopped there and marked [`RunResult::cut`].
pub fn run_sequence_until(
    seq: &Sequence,
    target: &Target,
    rules: &Profile,
    dl: Deadlines,
    stop: Option<Instant>,
) -> RunResult {
    let mut live = None;
    let plan = Plan {
        prefix: String::new(),
        last: true,
        ..Plan::default()
    };
    run_on(&mut live, seq, target, rules, dl, stop, &plan)
}

/// The result of a run from its state, once the process is done with it (`ended`: the process
/// was ended or killed, so its exit status belongs to this run).
fn finish(st: State<'_>, child: &mut Child, started: Instant, ended: bool) -> RunResult {
    let mut obs = st.obs;
    obs.ended = ended;
    if ended {
        obs.exit = obs.exit.or_else(|| child.try_exit());
    }
    obs.unanswered = st
        .ck
        .checker()
        .pending()
        .into_iter()
        .filter(|(k, _)| k != &json::to_string(&Value::from(SHUTDOWN_ID)))
        .map(|(k, _)| k)
        .collect();
    let mut findings = st.findings;
    let (tail, _) = child.stderr_tail();
    let tail: Vec<&str> = tail.lines().collect();
    let tail = (!tail.is_empty()).then(|| {
        format!(
            "\n  stderr tail: {}",
            tail[tail.len().saturating_sub(3)..].join("\n    ")
        )
    });
    if let Some(t) = &tail {
        for f in &mut findings {
            f.detail.push_str(t);
        }
    }
    let cut = st.cut.then(|| {
        let waiting = if st.phase == Phase::Ending {
            "the ending (shutdown or EOF, then the exit)"
        } else if !st.barrier_answered {
            "the barrier's answer"
        } else {
            "every request to be answered and every session idle"
        };
        format!(
            "stopped after {:.1} s while waiting for {waiting}{}",
            started.elapsed().as_secs_f64(),
            tail.as_deref().unwrap_or("")
        )
    });
    RunResult {
        findings,
        fatal: st.fatal,
        observed: obs,
        broken: None,
        cut,
        fresh: false,
        straggler: false,
    }
}

/// Writes the ops (all but the first when `skip_first`: an `initialize` the shared process has
/// answered already), then the barrier, and waits until everything settled. Returns `None` when
/// the run cannot go on to its ending (a fatal finding, or cut short), else whether its process
/// may serve the next sequence (every request answered, every session idle, stdout open).
fn drive_ops(
    seq: &Sequence,
    child: &mut Child,
    st: &mut State<'_>,
    dl: Deadlines,
    r: &mut Renderer,
    skip_first: bool,
) -> Option<bool> {
    let mut dec = LineDecoder::new(MAX_LINE);
    let mut bytes = Vec::new();
    let awaited = seq.awaited_inits();
    for (i, op) in seq.ops.iter().enumerate().skip(usize::from(skip_first)) {
        let before = awaited
            .iter()
            .find(|(at, _)| i == at + 1 && (*at > 0 || !skip_first));
        if let Some((_, init)) = before {
            await_initialize(child, st, dl, init);
        }
        if let Op::Advance(ms) = op {
            let until = Instant::now() + Duration::from_millis(pause_ms(*ms));
            pump(child, st, until, |_| false);
        } else {
            bytes.clear();
            r.render(op, &mut bytes);
            let bytes = super::toolcall::fill_cwd(&bytes, &st.dirs.cwd);
            send(child, st, &mut dec, &bytes);
            pump(child, st, Instant::now(), |_| false);
        }
        if st.fatal || st.cut {
            return None;
        }
    }
    // A partial line from a raw op must not swallow the barrier.
    let barrier = format!(
        "\n{{\"jsonrpc\":\"2.0\",\"id\":\"{BARRIER_ID}\",\"method\":\"{BARRIER_METHOD}\"}}\n"
    );
    send(child, st, &mut dec, barrier.as_bytes());
    let w = window(st, &dl, &[Wait::Answer], dl.barrier);
    let (ok, w) = pump_while_busy(child, st, w, dl.barrier, |s| s.barrier_answered);
    if !ok {
        if !st.fatal {
            let what = if st.closed {
                "the runtime closed stdout"
            } else {
                "no answer"
            };
            st.fail(
                FindingClass::Hang(HangAt::Barrier),
                format!("{what}: the barrier request was not answered within {w:?}"),
            );
        }
        return None;
    }
    let may_hang = seq.may_hang();
    // The release's retries are seen as model requests when a stub is watched; else allowed for.
    let (slow, retries) = seq.slow_secs_split();
    let slow = Duration::from_secs_f64(slow + if st.model.is_some() { 0.0 } else { retries });
    let settle = window(st, &dl, &[Wait::Answer, Wait::Turn], dl.settle) + slow;
    let quiet = |s: &State<'_>| s.ck.unsettled(&[]) == Unsettled::Settled;
    let (mut settled, waited) = pump_while_busy(child, st, settle, dl.settle + slow, quiet);
    // Work a runtime does on its own once idle: a subagent's end reaches its parent (a notice
    // turn, or the parent's next step), an active goal runs its rounds until blocked. Wait for
    // `subagent.finished` and the goal's change (a while only: not every runtime sends them),
    // then for those turns. Without this, the ending would race them.
    let owed = |s: &State<'_>| !s.children.is_empty() || !s.goals.is_empty();
    if settled && owed(st) {
        let grace = settle.min(OWN_WORK_GRACE);
        if pump(child, st, Instant::now() + grace, |s| !owed(s)) {
            settled = pump(child, st, Instant::now() + settle, quiet);
        }
    }
    if st.cut {
        return None;
    }
    if !settled && !may_hang && !st.fatal {
        unsettled(st, waited.max(settle));
    }
    if st.fatal {
        return None;
    }
    Some(settled && !st.closed)
}

/// The settle-time finding of a run that did not settle within `settle` (the conversation's
/// [`Conversation::unsettled`]), its ids or sessions kept out of the comparison.
fn unsettled(st: &mut State<'_>, settle: Duration) {
    let owed = st.ck.unsettled(&[]);
    let Some(rule) = owed.rule() else {
        return;
    };
    let detail = match owed {
        Unsettled::Settled => return,
        Unsettled::Unanswered(pending) => {
            let what = list(pending.iter().map(|(k, m)| format!("{m} {k}")));
            st.obs
                .flagged
                .ids
                .extend(pending.into_iter().map(|(k, _)| k));
            format!("requests still unanswered {settle:?} after the barrier: {what}")
        }
        Unsettled::Running(busy) => {
            for sid in &busy {
                let label = st.session_label(sid);
                st.obs.flagged.sessions.insert(label);
            }
            let what = list(busy.iter().map(|s| format!("{s:?}")));
            format!("sessions never went idle within {settle:?}: {what}")
        }
    };
    st.fail(FindingClass::Rule(rule), detail);
}

/// Ends the process the sequence's way (`shutdown`, or EOF) and judges the ending: an answer to
/// `shutdown`, stdout closing, exit status 0.
fn drive_end(end: End, child: &mut Child, st: &mut State<'_>, dl: Deadlines) {
    let mut dec = LineDecoder::new(MAX_LINE);
    st.phase = Phase::Ending;
    let w = window(st, &dl, &[Wait::Exit, Wait::Answer], dl.exit);
    let until = st.clip(Instant::now() + w);
    match end {
        End::Shutdown => {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":\"{SHUTDOWN_ID}\",\"method\":\"shutdown\"}}\n"
            );
            send(child, st, &mut dec, line.as_bytes());
            if !pump(child, st, until, |s| s.shutdown_answered) {
                if !st.fatal && !st.cut {
                    st.obs.flagged.exit = true;
                    st.fail(
                        FindingClass::Rule(CheckId::LifecycleShutdownResponds),
                        format!("shutdown was not answered within {w:?}"),
                    );
                }
                return;
            }
        }
        End::Eof => {
            dec.finish();
            child.close_stdin();
        }
    }
    if st.until.as_ref().is_some_and(|c| !c.shows_at_exit()) {
        // A shrinking trial for a class the exit cannot show: what was written is read, the
        // exit is not waited for (the caller kills the process).
        pump(child, st, Instant::now(), |_| false);
        return;
    }
    // Read to the end of stdout, then wait for the exit status.
    let asked = Instant::now();
    pump(child, st, until, |s| s.closed);
    let exit = loop {
        if let Some(e) = child.try_exit() {
            if let Some(l) = &st.latency {
                l.saw(Wait::Exit, asked.elapsed());
            }
            break Some(e);
        }
        if Instant::now() >= until {
            st.cut |= st.stop.is_some_and(|s| Instant::now() >= s);
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    st.obs.exit = exit;
    if st.fatal || st.cut {
        return;
    }
    let (how, rule) = match end {
        End::Shutdown => ("shutdown", CheckId::LifecycleShutdownExits0),
        End::Eof => ("EOF", CheckId::LifecycleEofExits0),
    };
    let answer = st
        .obs
        .responses
        .get(&json::to_string(&Value::from(SHUTDOWN_ID)))
        .and_then(|l| l.first())
        .map(|o| match o {
            Outcome::Result(r) => format!(" (shutdown answered {r})"),
            Outcome::Error { code, message } => {
                format!(" (shutdown answered error {code} {message:?})")
            }
        })
        .unwrap_or_default();
    if exit != Some(ExitInfo::Code(0)) {
        st.obs.flagged.exit = true;
    }
    match exit {
        None => st.fail(
            FindingClass::Rule(rule),
            format!("the process did not exit within {w:?} of {how}{answer}"),
        ),
        Some(ExitInfo::Code(0)) => {}
        Some(e) => st.fail(
            FindingClass::Rule(rule),
            format!("after {how} the process ended with {e}"),
        ),
    }
}

/// Writes bytes, telling the checker about every complete line in them.
fn send(child: &mut Child, st: &mut State<'_>, dec: &mut LineDecoder, bytes: &[u8]) {
    let ck = &mut st.ck;
    let obs = &mut st.obs;
    let sent_at = &mut st.sent_at;
    let now = Instant::now();
    dec.push(bytes, &mut |e| {
        if let LineEvent::Line(l) = e {
            obs.frames_in += 1;
            if let Sent::Request {
                key,
                method,
                session,
            } = ck.sent(l)
            {
                // `session/wait` answers when its session is idle: a turn's latency, not an answer's.
                if method != "session/wait" {
                    sent_at.entry(key.clone()).or_insert(now);
                }
                if let Some(sid) = session {
                    obs.request_sessions
                        .entry(key.clone())
                        .or_default()
                        .insert(sid);
                }
                let m = method_label(&method);
                let label = obs.methods.entry(key).or_default();
                if !label.split('+').any(|x| x == m) {
                    let mut all: Vec<&str> = label.split('+').filter(|x| !x.is_empty()).collect();
                    all.push(m);
                    all.sort_unstable();
                    *label = all.join("+");
                }
            }
        }
    });
    child.write(bytes.to_vec());
}

/// Waits for the answer to the `initialize` of id echo `init` (a hang when none comes).
fn await_initialize(child: &mut Child, st: &mut State<'_>, dl: Deadlines, init: &str) {
    // An error that another request of the same id may have earned does not count
    // (`1e400` for both a wait and the initialize: both answers echo null).
    let answered = |s: &State<'_>| !s.ck.checker().may_await(init, "initialize");
    let w = window(st, &dl, &[Wait::Answer], dl.barrier);
    let (ok, w) = pump_while_busy(child, st, w, dl.barrier, answered);
    if !ok && !st.fatal {
        st.fail(
            FindingClass::Hang(HangAt::Initialize),
            format!("initialize was not answered within {w:?}"),
        );
    }
}

/// [`pump`] for `w` (a window adapted to the runtime's latency), extended by `w` at a time up to
/// `ceiling` while the runtime keeps writing: a runtime still busy on stdout (a long stream, or a
/// flood on a loaded machine, which then reaches its bound) is not a hang. A runtime still asking
/// the watched model stub holds it longer, up to [`activity::STRETCH`] past `ceiling`
/// ([`activity::held_until`]). Returns whether `done` held and how long was waited.
fn pump_while_busy(
    child: &mut Child,
    st: &mut State<'_>,
    w: Duration,
    ceiling: Duration,
    done: impl Fn(&State<'_>) -> bool,
) -> (bool, Duration) {
    let start = Instant::now();
    let hard = start + ceiling.max(w);
    let mut until = start + w;
    loop {
        let written = st.obs.frames_out;
        if pump(child, st, until, &done) {
            return (true, start.elapsed());
        }
        if st.fatal || st.closed || st.cut {
            return (false, until - start);
        }
        let held = st.model_held(w).filter(|&h| h > until);
        until = if st.obs.frames_out != written && until < hard {
            (until + w).min(hard)
        } else if let Some(h) = held.filter(|_| until < hard + activity::STRETCH) {
            h.min(hard + activity::STRETCH)
        } else {
            return (false, until - start);
        };
    }
}

/// Reads output until `done` holds (true), the deadline passes, stdout closes or a rule breaks
/// (false unless `done` holds).
fn pump(
    child: &mut Child,
    st: &mut State<'_>,
    until: Instant,
    done: impl Fn(&State<'_>) -> bool,
) -> bool {
    loop {
        if done(st) {
            return true;
        }
        if st.fatal || st.closed || st.cut {
            return false;
        }
        let now = Instant::now();
        if st.stop.is_some_and(|s| now >= s) {
            st.cut = true;
            return false;
        }
        // The caller's hard deadline comes first: what it cuts short is not a finding.
        let by_stop = st.stop.is_some_and(|s| s <= until);
        let wait = st.clip(until).saturating_duration_since(now);
        let ev = if wait.is_zero() {
            match child.events.try_recv() {
                Ok(ev) => ev,
                Err(_) => return done(st),
            }
        } else {
            match child.events.recv_timeout(wait) {
                Ok(ev) => ev,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if by_stop => {
                    st.cut = true;
                    return false;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return done(st),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    st.closed = true;
                    return done(st);
                }
            }
        };
        child.consumed(&ev);
        st.on_event(ev, child);
    }
}
