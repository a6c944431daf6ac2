//! Running the suite against a runtime command: preflight, checks in parallel on fresh processes
//! in prerequisite order, the rule engine over every transcript, the baseline, the report.

use super::cases::{self, CheckCase};
use super::methods;
pub use super::options::{Options, RunError, StubLog, StubRequest, DEFAULT_BUDGET};
use super::plan::{self, Plan, Workers};
pub use super::preflight::{preflight, Boot, Preflight};
use super::probe::{self, ModelCapability};
use super::report::{Report, Start, Stopped};
use super::schedule::{applies, finish, not_run, skip, worker, Board};
use super::share;
use super::spares;
use super::verdict::{CheckResult, Failure, FailureKind, Verdict};
use super::warm::{Procs, Shared};
use crate::check::{CheckId, CheckInfo};
use crate::edition::Edition;
use crate::runner::{CommandSpec, Halt};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

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
    let selected: Vec<&'static CheckInfo> = crate::check::of(crate::check::Subject::Runtime)
        .filter(|c| opts.select.selects(c.id))
        .collect();
    if selected.is_empty() {
        return Err(RunError::NoMatch {
            selection: opts.select.to_string(),
        });
    }
    let (done, finished) = std::sync::mpsc::channel::<()>();
    // The budget, in ms from the start: the plan may move it once the boot is known.
    let limit = AtomicU64::new(u64::MAX);
    std::thread::scope(|s| {
        if let Some(budget) = opts.budget.before_plan() {
            limit.store(budget.as_millis() as u64, Relaxed);
            let (cancel, limit) = (opts.cancel.clone(), &limit);
            s.spawn(move || loop {
                let until = Duration::from_millis(limit.load(Relaxed));
                let left = until.saturating_sub(started.elapsed());
                match finished.recv_timeout(left.min(Duration::from_millis(200))) {
                    Err(RecvTimeoutError::Timeout) if started.elapsed() >= until => {
                        cancel.halt(Halt::Budget(until));
                        break;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
            });
        }
        let report = run_checks(cmd, label, opts, &selected, &cases, (started, &limit));
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
    (started, limit): (Instant, &AtomicU64),
) -> Result<Report, RunError> {
    let (pre, boot) = preflight(cmd, opts)?;
    let spares = match pre {
        Preflight::Answered => opts.prespawn.unwrap_or_else(|| spares::default_depth(boot)),
        _ => 0,
    };
    let shares = pre == Preflight::Answered && opts.processes.shares(boot.wall);
    // Which cases may share: only worked out when the run shares (it parses every trace).
    let eligible: Option<share::Eligible> = shares.then(|| {
        let continued = share::continued(cases);
        (cases.iter())
            .filter_map(|c| Some((c.file, share::shareable(c, &continued)?)))
            .collect()
    });
    let plan = make_plan(selected, cases, opts, (boot, spares), eligible.as_ref());
    if let Some(b) = plan.budget {
        limit.store(b.as_millis() as u64, Relaxed);
    }
    if let Some(hook) = opts.on_plan {
        hook(&plan);
    }
    let n = selected.len();
    let shared = (
        Mutex::new(Board {
            verdicts: vec![None; n],
            started: vec![false; n],
            durations: vec![Duration::ZERO; n],
            blames: Vec::new(),
            ran_in: vec![Vec::new(); n],
            transcripts: 0,
            missing: Vec::new(),
            open: false,
        }),
        Condvar::new(),
    );
    let board = &shared.0;
    let mut stopped = preflight_onto_board(&pre, selected, board, opts, started);
    let model: OnceLock<ModelCapability> = OnceLock::new();
    let model_fn = || model.get_or_init(|| probe::probe_model(cmd, opts)).clone();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, 64) {
            s.spawn(|| {
                let procs = Procs {
                    spares: spares::Spares::new(cmd, opts, spares),
                    shared: Shared::new(cmd, opts, eligible.as_ref(), boot.wall),
                };
                worker(selected, cases, cmd, opts, &shared, &model_fn, procs)
            });
        }
        if pre == Preflight::Answered {
            // On a slow boot (spares), the model probe too, when a selected check needs the model:
            // those checks would otherwise wait for it one boot later. On a quick one it waits for
            // the first check that needs it, as the checks' own processes do (a runtime that
            // floods is then blamed by that check, not stopped by a probe that judges nothing).
            let needs_model = (cases.iter())
                .any(|c| c.needs_model && selected.iter().any(|s| s.id == c.check.id));
            if needs_model && spares > 0 {
                s.spawn(|| drop(model_fn()));
            }
            lacks(cmd, opts, selected, cases, board);
        }
        board.lock().unwrap_or_else(|e| e.into_inner()).open = true;
        shared.1.notify_all();
    });
    if opts.progress && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[2K");
    }
    let b = (shared.0.into_inner()).unwrap_or_else(|e| e.into_inner());
    let results = finish(selected, cases, b, opts);
    if stopped.is_none() {
        if let Some(h) = opts.cancel.halted() {
            stopped = Some(stop(h, halt_cause(h, &results), "", started));
        }
    }
    // Another edition's runtime answers, just differently: a runtime whose every failure is a
    // silence would only make the probe wait out its own timeout.
    let failed = results.iter().any(|r| r.verdict.blocks_dependents())
        && results.iter().any(|r| {
            r.verdict
                .failure()
                .is_some_and(|f| !matches!(f.kind, FailureKind::Timeout | FailureKind::Missing))
        });
    let hint = if failed && pre == Preflight::Answered && stopped.is_none() {
        probe::probe_surface(cmd, opts).map(|e| {
            format!("the runtime's methods look like edition {e}'s (session/wait and working-directory/get are {}known): try --edition {e}",
                if e == Edition::Current { "" } else { "un" })
        })
    } else {
        None
    };
    Ok(Report {
        should_fail: opts.should_fail,
        runtime: label.to_owned(),
        edition: opts.edition,
        results,
        duration: started.elapsed(),
        hint,
        stopped,
        start: Some(Start {
            boot,
            spares_per_job: spares,
            shares_processes: shares,
            plan,
        }),
    })
}

/// What the preflight's outcome decides before any check runs: nothing when the runtime
/// answered; else every selected check's verdict on the board, and why the run stopped.
fn preflight_onto_board(
    pre: &Preflight,
    selected: &[&'static CheckInfo],
    board: &Mutex<Board>,
    opts: &Options,
    started: Instant,
) -> Option<Stopped> {
    match pre {
        Preflight::Answered => None,
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
                } else if c.id == CheckId::StdoutFramesOnly {
                    let mut f = Failure::new(FailureKind::NotAFrame, why.clone());
                    f.closest = Some(first_line.clone());
                    f.stdout_line = Some(1);
                    f.stderr_tail = stderr_tail.clone();
                    Verdict::Fail(Box::new(f))
                } else {
                    Verdict::Blocked {
                        by: vec![CheckId::StdoutFramesOnly],
                    }
                });
            }
            let cause = format!("{why}; its first line: {first_line}");
            Some(stop(Halt::Unusable, cause, stderr_tail, started))
        }
        Preflight::Unusable { cause, stderr_tail } => {
            let st = stop(Halt::Unusable, cause.clone(), stderr_tail, started);
            not_run(selected, board, opts, Halt::Unusable);
            Some(st)
        }
        Preflight::Halted(h) => {
            let st = stop(*h, String::new(), "", started);
            not_run(selected, board, opts, *h);
            Some(st)
        }
    }
}

/// Why the run stopped, `started` being its start.
fn stop(halt: Halt, cause: String, stderr_tail: &str, started: Instant) -> Stopped {
    Stopped {
        halt,
        cause,
        stderr_tail: stderr_tail.to_owned(),
        after: started.elapsed(),
    }
}

/// The run's plan ([`super::plan`]): one process per case of the selected checks that apply.
fn make_plan(
    selected: &[&'static CheckInfo],
    cases: &[CheckCase],
    opts: &Options,
    (boot, spares): (Boot, usize),
    eligible: Option<&share::Eligible>,
) -> Plan {
    let runs = |c: &CheckCase| {
        selected
            .iter()
            .any(|s| s.id == c.check.id && applies(s, opts))
            && c.applies_to(opts.edition)
    };
    let jobs = opts.jobs.clamp(1, 64);
    let workers = Workers {
        jobs,
        spares,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let shares = |c: &CheckCase| eligible.is_some_and(|e| e.contains_key(c.file));
    let (shared, fresh): (Vec<&CheckCase>, Vec<&CheckCase>) =
        cases.iter().filter(|c| runs(c)).partition(|c| shares(c));
    plan::plan(
        fresh.len() + share::processes_for(shared.len(), jobs),
        boot,
        workers,
        opts.budget,
    )
}

/// The methods of the edition the runtime lacks, among those the selected checks call, onto the
/// board; each owner's verdict is decided here, before the checks run (its failure is the root cause, and
/// a check blocked by it is decided when the scheduler reaches it).
fn lacks(
    cmd: &CommandSpec,
    opts: &Options,
    selected: &[&'static CheckInfo],
    cases: &[CheckCase],
    board: &Mutex<Board>,
) {
    let missing = methods::probe(cmd, opts, &methods::probed_methods(selected, cases, opts));
    let mut b = board.lock().unwrap_or_else(|e| e.into_inner());
    for (owner, verdict) in methods::owner_verdicts(&missing, opts) {
        if let Some(i) = selected.iter().position(|c| c.id == owner) {
            b.started[i] = true;
            b.verdicts[i] = Some(verdict);
        }
    }
    b.missing = missing;
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
