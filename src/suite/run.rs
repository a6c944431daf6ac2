//! Running the suite against a runtime command: preflight, checks in parallel on fresh processes
//! in prerequisite order, the rule engine over every transcript, the baseline, the report.

use super::cases::{self, CheckCase};
use super::judge::{self, Blame, ModelCapability};
use super::registry::{CheckInfo, Edition, CHECKS};
use super::report::{CheckResult, Report, Stopped};
use super::verdict::{Failure, FailureKind, Verdict};
use super::Baseline;
use crate::runner::{self, Cancel, CommandSpec, Halt, Outcome, StdoutLimit};
use crate::trace::Trace;
use std::io::Write;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct Options {
    /// The edition checked.
    pub edition: Edition,
    /// Only checks whose id matches (substring, or a glob with `*`). Prerequisites left out by the
    /// filter are assumed to hold.
    pub filter: Option<String>,
    /// Demand -32603 for unknown methods (no -32601).
    pub strict_upstream: bool,
    /// Default deadline per expected frame.
    pub frame_timeout: Duration,
    /// Deadline for the runtime's first answer (preflight).
    pub start_timeout: Duration,
    /// Checks run at once, each against its own process.
    pub jobs: usize,
    /// Extra environment for the runtime (e.g. the model stub's).
    pub env: Vec<(String, String)>,
    /// Known failures.
    pub baseline: Baseline,
    /// Print progress to stderr.
    pub progress: bool,
    /// The model stub the runtime talks to, if any: failures quote its requests.
    pub model_stub: Option<StubLog>,
    /// Bound on the whole run's wall time: when it is spent, the run stops and the report holds
    /// the checks decided so far (the rest `NOT RUN`). `None`: no bound.
    pub budget: Option<Duration>,
    /// The run's stop switch (for signals): set it to stop the run early with a partial report.
    pub cancel: Cancel,
    /// Bounds on what the runtime writes on stdout; each run starts with fresh counters.
    pub stdout: StdoutLimit,
}

/// The default whole-run budget of the command line.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(300);

/// Why the suite could not run at all: a problem of the kit or of its arguments, not of the
/// runtime (a runtime that cannot be checked still gets a report: [`Report::stopped`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// `--filter` selects no check.
    NoMatch {
        /// The pattern.
        filter: String,
    },
    /// The kit's own check traces are broken.
    Fixtures(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NoMatch { filter } => write!(f, "no check matches --filter {filter:?}"),
            RunError::Fixtures(e) => write!(f, "the kit's check traces are broken: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// Access to the model stub's request log (one summary line per request, in arrival order).
#[derive(Clone)]
pub struct StubLog(pub std::sync::Arc<dyn Fn() -> Vec<String> + Send + Sync>);

impl StubLog {
    /// The log of a running stub.
    pub fn of(stub: std::sync::Arc<crate::model_stub::ModelStub>) -> StubLog {
        StubLog(std::sync::Arc::new(move || {
            stub.requests().iter().map(|r| r.summary()).collect()
        }))
    }

    /// Every request line so far.
    pub fn lines(&self) -> Vec<String> {
        (self.0)()
    }
}

impl std::fmt::Debug for StubLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StubLog")
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            edition: Edition::Current,
            filter: None,
            strict_upstream: false,
            frame_timeout: Duration::from_secs(10),
            start_timeout: Duration::from_secs(30),
            jobs: 1,
            env: Vec::new(),
            baseline: Baseline::default(),
            progress: false,
            model_stub: None,
            budget: None,
            cancel: Cancel::new(),
            stdout: StdoutLimit::default(),
        }
    }
}

/// Whether a check id matches a `--filter` pattern: a glob when it has `*`, else a substring.
pub fn matches_filter(id: &str, pattern: &str) -> bool {
    if !pattern.contains('*') {
        return id.contains(pattern);
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = id;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(p) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            let Some(at) = rest.find(p) else { return false };
            rest = &rest[at + p.len()..];
        }
    }
    rest.is_empty()
}

// Tolerant of non-frame lines: a runtime that also logs to stdout must still reach the checks.
const PREFLIGHT: &str = r#"# case: preflight
== stdout any
>> {"jsonrpc":"2.0","id":"dsh-conformance-preflight","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
<< {"id":"dsh-conformance-preflight"}
"#;

/// How long the preflight's first attempt waits for the initialize answer.
const FIRST_ATTEMPT: Duration = Duration::from_secs(5);

/// What the preflight learnt about the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preflight {
    /// It answered initialize.
    Answered,
    /// It wrote lines, none of them a JSON object: nothing else can be judged. Holds the first.
    NoFrames {
        /// The first stdout line, clipped.
        first_line: String,
        /// Lines written.
        lines: usize,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
    /// It cannot be checked: it did not start, ended, or never answered `initialize`.
    Unusable {
        /// What happened, in one sentence.
        cause: String,
        /// The last lines of its stderr (its own words on why).
        stderr_tail: String,
    },
    /// The run was stopped while the preflight ran.
    Halted(Halt),
}

/// Starts the runtime once and waits for an answer to `initialize`: a runtime that cannot start,
/// never answers, or writes no frame is reported once, not fifty times.
pub fn preflight(cmd: &CommandSpec, opts: &Options) -> Result<Preflight, RunError> {
    let trace =
        Trace::parse(PREFLIGHT, "preflight").map_err(|e| RunError::Fixtures(e.to_string()))?;
    let mut ro = judge::runner_opts(opts);
    // A short first attempt decides at once for a runtime that writes lines but no frames; a
    // runtime that wrote nothing yet (a slow boot) gets a second one with the whole start budget.
    ro.frame_timeout = opts.start_timeout.min(FIRST_ATTEMPT);
    let mut r = runner::replay(&trace, cmd, &ro);
    if !r.passed()
        && r.transcript.stdout.is_empty()
        && opts.start_timeout > FIRST_ATTEMPT
        && matches!(r.outcome, Outcome::Fail(_))
    {
        ro.frame_timeout = opts.start_timeout;
        r = runner::replay(&trace, cmd, &ro);
    }
    let stdout = &r.transcript.stdout;
    let any_object = stdout.iter().any(|l| {
        crate::wire::json::parse(l)
            .ok()
            .is_some_and(|p| p.value.is_object())
    });
    let stderr_tail = r.stderr_tail.trim_end().to_owned();
    Ok(match &r.outcome {
        Outcome::Pass => Preflight::Answered,
        Outcome::Halted(h) => Preflight::Halted(*h),
        // The runtime's own words explain a runtime that cannot start or dies at once.
        Outcome::Broken(m) => Preflight::Unusable {
            cause: m.clone(),
            stderr_tail,
        },
        Outcome::Fail(_) if !stdout.is_empty() && !any_object => Preflight::NoFrames {
            first_line: crate::trace::explain::clip(&stdout[0], 200),
            lines: stdout.len(),
            stderr_tail,
        },
        // It wrote frames, just not the answer: the checks will say what is wrong.
        Outcome::Fail(_) if !stdout.is_empty() => Preflight::Answered,
        Outcome::Fail(f) => Preflight::Unusable {
            cause: format!("`{cmd}` did not answer initialize: {}", f.reason),
            stderr_tail,
        },
    })
}

/// The scheduler's shared state: a verdict slot per selected check.
struct Board {
    verdicts: Vec<Option<Verdict>>,
    started: Vec<bool>,
    durations: Vec<Duration>,
    blames: Vec<Blame>,
    transcripts: usize,
}

impl Board {
    /// Checks decided so far.
    fn done(&self) -> usize {
        self.verdicts.iter().filter(|v| v.is_some()).count()
    }
}

/// Runs every selected check against `cmd`, within [`Options::budget`]. A runtime that cannot be
/// checked, or a run stopped early (budget, [`Options::cancel`], a flood), still gives a report:
/// [`Report::stopped`] says why, and undecided checks are `NOT RUN`. `Err` is for the kit's own
/// problems (a filter that selects nothing, broken check traces).
pub fn run(cmd: &CommandSpec, label: &str, opts: &Options) -> Result<Report, RunError> {
    let started = Instant::now();
    let mut fresh = opts.clone();
    fresh.stdout = opts.stdout.fresh();
    let opts = &fresh;
    let cases = cases::all().map_err(RunError::Fixtures)?;
    let selected: Vec<&'static CheckInfo> = CHECKS
        .iter()
        .filter(|c| {
            opts.filter
                .as_deref()
                .is_none_or(|f| matches_filter(c.id, f))
        })
        .collect();
    if selected.is_empty() {
        return Err(RunError::NoMatch {
            filter: opts.filter.clone().unwrap_or_default(),
        });
    }
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        if let Some(budget) = opts.budget {
            let cancel = opts.cancel.clone();
            let left = budget.saturating_sub(started.elapsed());
            s.spawn(move || {
                if finished.recv_timeout(left) == Err(RecvTimeoutError::Timeout) {
                    cancel.halt(Halt::Budget(budget));
                }
            });
        }
        let report = run_checks(cmd, label, opts, &selected, &cases, started);
        drop(done);
        report
    })
}

fn run_checks(
    cmd: &CommandSpec,
    label: &str,
    opts: &Options,
    selected: &[&'static CheckInfo],
    cases: &[CheckCase],
    started: Instant,
) -> Result<Report, RunError> {
    let pre = preflight(cmd, opts)?;
    let n = selected.len();
    let board = Mutex::new(Board {
        verdicts: vec![None; n],
        started: vec![false; n],
        durations: vec![Duration::ZERO; n],
        blames: Vec::new(),
        transcripts: 0,
    });
    let mut stopped = None;
    let stop = |halt: Halt, cause: String, stderr_tail: &str| Stopped {
        halt,
        cause,
        stderr_tail: stderr_tail.to_owned(),
        after: started.elapsed(),
    };
    match &pre {
        Preflight::Answered => {}
        Preflight::NoFrames {
            first_line,
            lines,
            stderr_tail,
        } => {
            // Nothing on stdout is a frame: one root cause, everything else blocked by it.
            let why = format!("none of the {lines} line(s) the runtime wrote on stdout is a JSON object frame (pretty-printed or not JSON-RPC?)");
            let mut b = board.lock().unwrap_or_else(|e| e.into_inner());
            for (i, c) in selected.iter().enumerate() {
                b.started[i] = true;
                b.verdicts[i] = Some(if !applies(c, opts) {
                    skip(c)
                } else if c.id == "stdout.frames-only" {
                    let mut f = Failure::new(FailureKind::NotAFrame, why.clone());
                    f.closest = Some(first_line.clone());
                    f.stdout_line = Some(1);
                    f.stderr_tail = stderr_tail.clone();
                    Verdict::Fail(Box::new(f))
                } else {
                    Verdict::Blocked {
                        by: vec!["stdout.frames-only"],
                    }
                });
            }
            let cause = format!("{why}; its first line: {first_line}");
            stopped = Some(stop(Halt::Unusable, cause, stderr_tail));
        }
        Preflight::Unusable { cause, stderr_tail } => {
            stopped = Some(stop(Halt::Unusable, cause.clone(), stderr_tail));
            not_run(selected, &board, opts, Halt::Unusable);
        }
        Preflight::Halted(h) => {
            stopped = Some(stop(*h, String::new(), ""));
            not_run(selected, &board, opts, *h);
        }
    }
    let ready = Condvar::new();
    let model: OnceLock<ModelCapability> = OnceLock::new();
    let model_fn = || model.get_or_init(|| judge::probe_model(cmd, opts)).clone();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, 64) {
            s.spawn(|| worker(selected, cases, cmd, opts, &board, &ready, &model_fn));
        }
    });
    if opts.progress && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[2K");
    }
    let b = board.into_inner().unwrap_or_else(|e| e.into_inner());
    let results = finish(selected, cases, b, opts);
    if stopped.is_none() {
        if let Some(h) = opts.cancel.halted() {
            stopped = Some(stop(h, halt_cause(h, &results), ""));
        }
    }
    let failed = results.iter().any(|r| r.verdict.blocks_dependents());
    let hint = if failed && pre == Preflight::Answered && stopped.is_none() {
        judge::probe_surface(cmd, opts).map(|e| {
            format!("the runtime's methods look like edition {e}'s (session/wait and working-directory/get are {}known): try --edition {e}",
                if e == Edition::Current { "" } else { "un" })
        })
    } else {
        None
    };
    Ok(Report {
        runtime: label.to_owned(),
        edition: opts.edition,
        results,
        duration: started.elapsed(),
        hint,
        stopped,
    })
}

fn skip(c: &CheckInfo) -> Verdict {
    Verdict::Skip {
        reason: format!("applies to editions {}", c.editions.names()),
    }
}

/// Every selected check `NOT RUN` (or skipped for another edition).
fn not_run(sel: &[&'static CheckInfo], board: &Mutex<Board>, opts: &Options, why: Halt) {
    let mut b = board.lock().unwrap_or_else(|e| e.into_inner());
    for (i, c) in sel.iter().enumerate() {
        b.started[i] = true;
        b.verdicts[i] = Some(if applies(c, opts) {
            Verdict::NotRun(why)
        } else {
            skip(c)
        });
    }
}

/// The one thing to act on after a run stopped mid-way.
fn halt_cause(h: Halt, results: &[CheckResult]) -> String {
    let counted = || {
        results
            .iter()
            .filter(|r| !matches!(r.verdict, Verdict::Skip { .. }))
    };
    let decided = counted()
        .filter(|r| !matches!(r.verdict, Verdict::NotRun(_)))
        .count();
    let partial = format!(
        "The report holds the {decided} of {} checks decided before it.",
        counted().count()
    );
    match h {
        Halt::Flooded => {
            let by = results.iter().find(|r| {
                r.verdict
                    .failure()
                    .is_some_and(|f| f.kind == FailureKind::Flooded)
            });
            match by {
                Some(r) => format!("In {}: {}. {partial}", r.info.id, r.verdict.summary()),
                None => partial,
            }
        }
        Halt::Budget(_) => format!(
            "{partial} Raise --budget, or lower --timeout (each expected frame waits that long)."
        ),
        Halt::Signal(_) | Halt::Unusable => partial,
    }
}

/// What a worker should do next.
enum Next {
    Run(usize),
    Wait,
    Stop,
}

fn applies(c: &CheckInfo, opts: &Options) -> bool {
    c.editions.contains(opts.edition)
}

/// The failing checks at the root of what blocks check `i`, or `None` when it may run (or must
/// wait: `Some(vec![])`).
fn blockers(
    i: usize,
    sel: &[&'static CheckInfo],
    b: &Board,
    opts: &Options,
) -> Option<Vec<&'static str>> {
    let mut roots: Vec<&'static str> = Vec::new();
    for r in sel[i].requires {
        let Some(j) = sel.iter().position(|c| c.id == *r) else {
            continue; // filtered out: assumed to hold
        };
        if !applies(sel[j], opts) {
            continue;
        }
        match &b.verdicts[j] {
            None => return Some(Vec::new()),
            Some(Verdict::Blocked { by }) => roots.extend(by.iter().copied()),
            Some(v) if v.blocks_dependents() => roots.push(sel[j].id),
            Some(_) => {}
        }
    }
    roots.sort_unstable();
    roots.dedup();
    (!roots.is_empty()).then_some(roots)
}

fn next(sel: &[&'static CheckInfo], b: &mut Board, opts: &Options) -> Next {
    if opts.cancel.halted().is_some() {
        return Next::Stop;
    }
    // A check decided in this pass (skipped, blocked) may decide one met earlier in the pass
    // that waited for it: scan again until a pass decides nothing, or a worker that returned
    // `Wait` would wait for a notification nobody sends.
    loop {
        let mut waiting = false;
        let mut decided = false;
        for i in 0..sel.len() {
            if b.started[i] {
                continue;
            }
            if !applies(sel[i], opts) {
                b.started[i] = true;
                b.verdicts[i] = Some(Verdict::Skip {
                    reason: format!("applies to editions {}", sel[i].editions.names()),
                });
                decided = true;
                continue;
            }
            match blockers(i, sel, b, opts) {
                None => {
                    b.started[i] = true;
                    return Next::Run(i);
                }
                Some(by) if by.is_empty() => waiting = true,
                Some(by) => {
                    b.started[i] = true;
                    b.verdicts[i] = Some(Verdict::Blocked { by });
                    decided = true;
                }
            }
        }
        if waiting && decided {
            continue;
        }
        let running = b
            .verdicts
            .iter()
            .zip(&b.started)
            .any(|(v, s)| *s && v.is_none());
        // Waiting with nothing running cannot happen without a cycle (the registry has none,
        // a test proves it); stopping then beats waiting forever (the check is reported
        // undecided).
        return if running { Next::Wait } else { Next::Stop };
    }
}

fn worker(
    sel: &[&'static CheckInfo],
    cases: &[CheckCase],
    cmd: &CommandSpec,
    opts: &Options,
    board: &Mutex<Board>,
    ready: &Condvar,
    model: &dyn Fn() -> ModelCapability,
) {
    let lock = || board.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let i = {
            let mut b = lock();
            loop {
                match next(sel, &mut b, opts) {
                    Next::Run(i) => break i,
                    Next::Stop => {
                        ready.notify_all();
                        return;
                    }
                    Next::Wait => {
                        b = ready.wait(b).unwrap_or_else(|e| e.into_inner());
                    }
                }
            }
        };
        let info = sel[i];
        let started = Instant::now();
        let mine: Vec<&CheckCase> = cases
            .iter()
            .filter(|c| c.check.id == info.id && c.applies_to(opts.edition))
            .collect();
        let (mut verdict, blames) = if mine.is_empty() {
            // A stream rule without a trace of its own: judged over the others' transcripts.
            (Verdict::Pass, Vec::new())
        } else {
            judge::judge(info.id, &mine, cmd, opts, model)
        };
        if verdict
            .failure()
            .is_some_and(|f| f.kind == FailureKind::Flooded)
            && !opts.cancel.halt(Halt::Flooded)
        {
            // Every further case would flood too (and the run's memory bound is shared), so the
            // first flood stops the run; one that ran alongside it, or after the run stopped for
            // another reason, is not a second root cause.
            verdict = Verdict::NotRun(opts.cancel.halted().unwrap_or(Halt::Flooded));
        }
        let mut b = lock();
        b.transcripts += mine.len();
        b.blames.extend(blames);
        b.verdicts[i] = Some(verdict);
        b.durations[i] = started.elapsed();
        if opts.progress {
            progress(b.done(), sel.len(), info.id, b.verdicts[i].as_ref());
        }
        ready.notify_all();
    }
}

/// One progress line on stderr per finished check: rewritten in place on a terminal, one line
/// each otherwise (CI logs).
fn progress(done: usize, total: usize, id: &str, v: Option<&Verdict>) {
    let mut err = std::io::stderr().lock();
    let word = v.map_or("", Verdict::word);
    if std::io::IsTerminal::is_terminal(&err) {
        let _ = write!(err, "\r\x1b[2K[{done}/{total}] {word} {id}");
    } else {
        let _ = writeln!(err, "[{done}/{total}] {word} {id}");
    }
    let _ = err.flush();
}

/// Applies what the rule engine found in every transcript, then the baseline.
fn finish(
    sel: &[&'static CheckInfo],
    cases: &[CheckCase],
    b: Board,
    opts: &Options,
) -> Vec<CheckResult> {
    let mut out = Vec::with_capacity(sel.len());
    for (i, info) in sel.iter().enumerate() {
        let mut verdict = b.verdicts[i]
            .clone()
            .unwrap_or_else(|| match opts.cancel.halted() {
                _ if !applies(info, opts) => skip(info),
                Some(h) => Verdict::NotRun(h),
                None => Verdict::NotTestable {
                    reason: "the scheduler never reached it".into(),
                },
            });
        let found: Vec<&Blame> = b.blames.iter().filter(|x| x.check == info.id).collect();
        if verdict == Verdict::Pass {
            if let Some(first) = found.first() {
                let mut f = first.failure.clone();
                let cases: std::collections::BTreeSet<_> = found
                    .iter()
                    .filter_map(|x| x.failure.case.as_deref())
                    .collect();
                if cases.len() > 1 {
                    f.details = format!(
                        "seen in {} transcripts: {}",
                        cases.len(),
                        cases.into_iter().collect::<Vec<_>>().join(", ")
                    );
                }
                verdict = Verdict::Fail(Box::new(f));
            } else if let (Some(h), false) = (
                opts.cancel.halted(),
                cases.iter().any(|c| c.check.id == info.id),
            ) {
                // Judged only over others' transcripts, and those stopped short: no evidence.
                verdict = Verdict::NotRun(h);
            } else if info.stream
                && b.transcripts == 0
                && !cases.iter().any(|c| c.check.id == info.id)
            {
                verdict = Verdict::NotTestable {
                    reason: "no check ran, so no transcript could be judged".into(),
                };
            }
        }
        let verdict = match (verdict, opts.baseline.reason(info.id)) {
            (Verdict::Fail(failure), Some(bl)) => Verdict::KnownFailing {
                failure,
                baseline: bl.to_owned(),
            },
            (Verdict::Pass, Some(bl)) => Verdict::StaleBaseline {
                baseline: bl.to_owned(),
            },
            (v, _) => v,
        };
        out.push(CheckResult {
            info: **info,
            verdict,
            duration: b.durations[i],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_substrings_or_globs() {
        assert!(matches_filter("frame.batch-ignored", "batch"));
        assert!(matches_filter("frame.batch-ignored", "frame.*"));
        assert!(matches_filter("frame.batch-ignored", "*.batch-*"));
        assert!(!matches_filter("frame.batch-ignored", "turn.*"));
        assert!(matches_filter("frame.batch-ignored", "*"));
        assert!(matches_filter("frame.batch-ignored", "frame*"));
    }

    const fn check(id: &'static str, requires: &'static [&'static str]) -> CheckInfo {
        CheckInfo {
            id,
            section: "",
            severity: crate::suite::registry::Severity::Must,
            editions: crate::edition::Editions::ALL,
            rule: "",
            requires,
            stream: false,
        }
    }

    /// A check listed before the prerequisite that a failure blocks is decided in the same call,
    /// not left waiting for a notification (this hung a run against a flooding runtime).
    #[test]
    fn a_check_waiting_on_a_later_blocked_one_is_blocked_too() {
        static A: CheckInfo = check("a", &["b"]);
        static B: CheckInfo = check("b", &["c"]);
        static C: CheckInfo = check("c", &[]);
        let sel: Vec<&'static CheckInfo> = vec![&A, &B, &C];
        let mut b = Board {
            verdicts: vec![None; 3],
            started: vec![false; 3],
            durations: vec![Duration::ZERO; 3],
            blames: Vec::new(),
            transcripts: 0,
        };
        let opts = Options::default();
        assert!(matches!(next(&sel, &mut b, &opts), Next::Run(2)));
        b.verdicts[2] = Some(Verdict::Fail(Box::new(
            crate::suite::verdict::Failure::new(crate::trace::FailureKind::Mismatch, "broken"),
        )));
        assert!(matches!(next(&sel, &mut b, &opts), Next::Stop));
        for v in &b.verdicts[..2] {
            assert!(
                matches!(v, Some(Verdict::Blocked { by }) if by == &vec!["c"]),
                "{v:?}"
            );
        }
    }
}
