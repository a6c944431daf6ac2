//! Running the suite against a runtime command: preflight, checks in parallel on fresh processes
//! in prerequisite order, the rule engine over every transcript, the baseline, the report.

use super::cases::{self, CheckCase};
use super::judge::{self, Blame, ModelCapability};
use super::registry::{CheckInfo, Edition, CHECKS};
use super::report::{CheckResult, Report};
use super::verdict::{Failure, FailureKind, Verdict};
use super::Baseline;
use crate::runner::{self, CommandSpec, Outcome};
use crate::trace::Trace;
use std::io::Write;
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
}

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

/// What the preflight learnt about a runtime that started and wrote something.
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
    },
}

/// Starts the runtime once and waits for an answer to `initialize`: a runtime that cannot start or
/// never answers is a usage problem (`Err`, exit 2), not fifty identical failures.
pub fn preflight(cmd: &CommandSpec, opts: &Options) -> Result<Preflight, String> {
    let trace = Trace::parse(PREFLIGHT, "preflight").map_err(|e| e.to_string())?;
    let mut ro = judge::runner_opts(opts);
    // A short first attempt decides at once for a runtime that writes lines but no frames; a
    // runtime that wrote nothing yet (a slow boot) gets a second one with the whole start budget.
    ro.frame_timeout = opts.start_timeout.min(FIRST_ATTEMPT);
    let mut r = runner::replay(&trace, cmd, &ro);
    if !r.passed() && r.transcript.stdout.is_empty() && opts.start_timeout > FIRST_ATTEMPT {
        ro.frame_timeout = opts.start_timeout;
        r = runner::replay(&trace, cmd, &ro);
    }
    let stdout = &r.transcript.stdout;
    let any_object = stdout.iter().any(|l| {
        crate::wire::json::parse(l)
            .ok()
            .is_some_and(|p| p.value.is_object())
    });
    let with_stderr = |mut m: String| {
        if !r.stderr_tail.trim().is_empty() {
            m.push_str("\nstderr tail:\n");
            m.push_str(r.stderr_tail.trim_end());
        }
        m
    };
    match &r.outcome {
        Outcome::Pass => Ok(Preflight::Answered),
        // The runtime's own words explain a runtime that cannot start or dies at once.
        Outcome::Broken(m) => Err(with_stderr(m.clone())),
        Outcome::Fail(_) if !stdout.is_empty() && !any_object => Ok(Preflight::NoFrames {
            first_line: crate::trace::explain::clip(&stdout[0], 200),
            lines: stdout.len(),
        }),
        // It wrote frames, just not the answer: the checks will say what is wrong.
        Outcome::Fail(_) if !stdout.is_empty() => Ok(Preflight::Answered),
        Outcome::Fail(f) => Err(with_stderr(format!(
            "`{cmd}` did not answer initialize: {}",
            f.reason
        ))),
    }
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

/// Runs every selected check against `cmd`. `Err` means the runtime could not be started or
/// answered nothing (preflight), or the kit's own checks are broken.
pub fn run(cmd: &CommandSpec, label: &str, opts: &Options) -> Result<Report, String> {
    let started = Instant::now();
    let cases = cases::all()?;
    let selected: Vec<&'static CheckInfo> = CHECKS
        .iter()
        .filter(|c| {
            opts.filter
                .as_deref()
                .is_none_or(|f| matches_filter(c.id, f))
        })
        .collect();
    if selected.is_empty() {
        return Err(format!(
            "no check matches --filter {:?}",
            opts.filter.as_deref().unwrap_or("")
        ));
    }
    let pre = preflight(cmd, opts)?;
    let n = selected.len();
    let board = Mutex::new(Board {
        verdicts: vec![None; n],
        started: vec![false; n],
        durations: vec![Duration::ZERO; n],
        blames: Vec::new(),
        transcripts: 0,
    });
    if let Preflight::NoFrames { first_line, lines } = &pre {
        // Nothing on stdout is a frame: one root cause, everything else blocked by it.
        let mut b = board.lock().unwrap_or_else(|e| e.into_inner());
        for (i, c) in selected.iter().enumerate() {
            b.started[i] = true;
            b.verdicts[i] = Some(if !applies(c, opts) {
                Verdict::Skip {
                    reason: format!("applies to editions {}", c.editions.names()),
                }
            } else if c.id == "stdout.frames-only" {
                let mut f = Failure::new(
                    FailureKind::NotAFrame,
                    format!("none of the {lines} line(s) the runtime wrote on stdout is a JSON object frame (pretty-printed or not JSON-RPC?)"),
                );
                f.closest = Some(first_line.clone());
                f.stdout_line = Some(1);
                Verdict::Fail(Box::new(f))
            } else {
                Verdict::Blocked {
                    by: vec!["stdout.frames-only"],
                }
            });
        }
    }
    let ready = Condvar::new();
    let model: OnceLock<ModelCapability> = OnceLock::new();
    let model_fn = || model.get_or_init(|| judge::probe_model(cmd, opts)).clone();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, 64) {
            s.spawn(|| worker(&selected, &cases, cmd, opts, &board, &ready, &model_fn));
        }
    });
    if opts.progress && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[2K");
    }
    let b = board.into_inner().unwrap_or_else(|e| e.into_inner());
    let results = finish(&selected, &cases, b, opts);
    let failed = results.iter().any(|r| r.verdict.blocks_dependents());
    let hint = if failed && pre == Preflight::Answered {
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
    })
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
        let (verdict, blames) = if mine.is_empty() {
            // A stream rule without a trace of its own: judged over the others' transcripts.
            (Verdict::Pass, Vec::new())
        } else {
            judge::judge(info.id, &mine, cmd, opts, model)
        };
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
        let mut verdict = b.verdicts[i].clone().unwrap_or(Verdict::NotTestable {
            reason: "the scheduler never reached it".into(),
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
        b.verdicts[2] = Some(Verdict::Fail(Box::new(crate::suite::verdict::Failure::new(
            crate::trace::FailureKind::Mismatch,
            "broken",
        ))));
        assert!(matches!(next(&sel, &mut b, &opts), Next::Stop));
        for v in &b.verdicts[..2] {
            assert!(
                matches!(v, Some(Verdict::Blocked { by }) if by == &vec!["c"]),
                "{v:?}"
            );
        }
    }
}
