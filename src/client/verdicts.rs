//! How a client run's scenario verdicts become its report (sans-IO): each with its evidence, a
//! memory failure confirmed by a second run, the worst of the verdicts several scenarios give a
//! check, the baseline, and why the run stopped if it did.

use super::run::Options;
use crate::check::CheckId;
use crate::edition::Edition;
use crate::runner::Halt;
use crate::suite::report::Stopped;
use crate::suite::{Baseline, CheckResult, Report, Verdict};
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// A scenario's verdicts with their evidence; its observation printed under `DSH_CLIENT_DEBUG`.
pub(crate) fn evidenced(
    obs: &impl std::fmt::Debug,
    verdicts: Vec<Verdict>,
    name: &str,
    peers: &[super::log::PeerLog],
    stderr: &str,
) -> Vec<Verdict> {
    if std::env::var_os("DSH_CLIENT_DEBUG").is_some() {
        eprintln!("{obs:#?}");
    }
    (verdicts.into_iter())
        .map(|v| super::log::with_evidence(v, name, peers, stderr))
        .collect()
}

/// Adds a scenario's verdicts for `checks` ([`confirmed`]) to `verdicts`, timed from `t`, or
/// NOT RUN when the run was stopped.
pub(crate) fn judge_confirmed(
    verdicts: &mut Vec<(CheckId, Verdict, Duration)>,
    checks: &[CheckId],
    opts: &Options,
    t: Instant,
    judged: impl FnMut() -> Result<Option<Vec<Verdict>>, String>,
) -> Result<(), String> {
    match confirmed(checks, judged)? {
        Some(vs) => verdicts.extend(checks.iter().zip(vs).map(|(id, v)| (*id, v, t.elapsed()))),
        None => not_run(verdicts, checks, opts),
    }
    Ok(())
}

/// A scenario's verdicts (`None`: the run was stopped), `judged` once — twice when a memory
/// measurement failed ([`super::memory::CHECKS`]): a resident size read on a busy machine may grow
/// with what else runs there, so the failure stands only when a second run confirms it (or cannot
/// judge: then the first run's verdict is all there is). The second run decides the memory
/// checks only: the scenario's other checks keep the first run's verdicts (a rerun on a busy
/// machine judges them no better).
pub(crate) fn confirmed(
    checks: &[CheckId],
    mut judged: impl FnMut() -> Result<Option<Vec<Verdict>>, String>,
) -> Result<Option<Vec<Verdict>>, String> {
    let Some(first) = judged()? else {
        return Ok(None);
    };
    let memory_failed = checks
        .iter()
        .zip(&first)
        .any(|(id, v)| super::memory::CHECKS.contains(id) && matches!(v, Verdict::Fail(_)));
    if !memory_failed {
        return Ok(Some(first));
    }
    let Some(again) = judged()? else {
        return Ok(None);
    };
    let judged = |v: &Verdict| matches!(v, Verdict::Pass | Verdict::Fail(_));
    Ok(Some(
        (checks.iter().zip(first).zip(again))
            .map(
                |((id, one), two)| match super::memory::CHECKS.contains(id) && judged(&two) {
                    true => two,
                    false => one,
                },
            )
            .collect(),
    ))
}

/// A scenario that was not run, or not to its end, because the run was stopped: its checks NOT
/// RUN (a check another scenario passed is then NOT RUN too: it was not judged whole).
pub(crate) fn not_run(
    verdicts: &mut Vec<(CheckId, Verdict, Duration)>,
    checks: &[CheckId],
    opts: &Options,
) {
    let halt = opts.cancel.halted().unwrap_or(Halt::Signal(libc::SIGINT));
    for id in checks {
        verdicts.push((*id, Verdict::NotRun(halt), Duration::ZERO));
    }
}

/// The report of a client run: one verdict per check (the worst its scenarios gave), the
/// baseline applied, and why the run stopped if it did.
pub(crate) fn report(
    client: &[OsString],
    verdicts: Vec<(CheckId, Verdict, Duration)>,
    opts: &Options,
    started: Instant,
    hint: Option<String>,
) -> Report {
    let mut results: Vec<CheckResult> = worst(verdicts)
        .into_iter()
        .map(|(id, verdict, duration)| CheckResult {
            info: *id.info(),
            verdict: baseline(verdict, id.as_str(), &opts.baseline),
            duration,
            ran_in: Vec::new(),
        })
        .collect();
    results.sort_by_key(|r| r.info.id);
    let stopped = opts.cancel.halted().map(|halt| {
        let judged = results
            .iter()
            .filter(|r| !matches!(r.verdict, Verdict::NotRun(_)))
            .count();
        Stopped {
            halt,
            cause: format!(
                "The report holds the {judged} of {} checks judged before it.",
                results.len()
            ),
            stderr_tail: String::new(),
            after: started.elapsed(),
        }
    });
    Report {
        runtime: client
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        edition: Edition::Current,
        results,
        duration: started.elapsed(),
        hint,
        stopped,
        should_fail: opts.should_fail,
        start: None,
    }
}

/// One verdict per check: of those several scenarios decide, the first failure, else the first
/// UNTESTABLE (part of its situation never arose), else a pass, else a SKIP (a scenario whose
/// operation the client does not support, or whose situation it cannot meet, takes nothing from
/// what the others judged); their durations added.
pub(crate) fn worst(all: Vec<(CheckId, Verdict, Duration)>) -> Vec<(CheckId, Verdict, Duration)> {
    let rank = |v: &Verdict| match v {
        Verdict::Fail(_) => 0,
        Verdict::Pass => 2,
        Verdict::Skip { .. } => 3,
        _ => 1,
    };
    let mut out: Vec<(CheckId, Verdict, Duration)> = Vec::new();
    for (id, v, d) in all {
        match out.iter_mut().find(|x| x.0 == id) {
            Some(x) => {
                x.2 += d;
                if rank(&v) < rank(&x.1) {
                    x.1 = v;
                }
            }
            None => out.push((id, v, d)),
        }
    }
    out
}

pub(crate) fn baseline(v: Verdict, id: &str, b: &Baseline) -> Verdict {
    match (v, b.reason(id)) {
        (Verdict::Fail(failure), Some(r)) => Verdict::KnownFailing {
            failure,
            baseline: r.to_owned(),
        },
        (Verdict::Pass, Some(r)) => Verdict::StaleBaseline {
            baseline: r.to_owned(),
        },
        (v, _) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::verdict::{Failure, FailureKind};

    #[test]
    fn a_check_several_scenarios_decide_gets_the_worst_verdict() {
        let id = CheckId::ClientGracefulShutdown;
        let t = Duration::from_millis(1);
        let no = || Verdict::NotTestable { reason: "r".into() };
        let fail = || Verdict::Fail(Box::new(Failure::new(FailureKind::Rule, "f")));
        let one = |vs: Vec<Verdict>| worst(vs.into_iter().map(|v| (id, v, t)).collect());
        assert_eq!(one(vec![Verdict::Pass, Verdict::Pass])[0].1, Verdict::Pass);
        assert_eq!(one(vec![Verdict::Pass, no(), Verdict::Pass])[0].1, no());
        let merged = one(vec![no(), Verdict::Pass, fail()]);
        assert_eq!(merged.len(), 1);
        assert!(matches!(merged[0].1, Verdict::Fail(_)));
        assert_eq!(merged[0].2, 3 * t);
        // A scenario the client does not support takes nothing from another's verdict.
        let skip = || Verdict::Skip { reason: "s".into() };
        assert_eq!(one(vec![skip(), Verdict::Pass])[0].1, Verdict::Pass);
        assert_eq!(one(vec![Verdict::Pass, skip()])[0].1, Verdict::Pass);
        assert_eq!(one(vec![skip(), no()])[0].1, no());
        assert_eq!(one(vec![skip(), skip()])[0].1, skip());
    }

    #[test]
    fn a_failed_memory_measurement_stands_only_when_a_second_run_confirms_it() {
        let fail = |r: &str| Verdict::Fail(Box::new(Failure::new(FailureKind::Rule, r)));
        let no = || Verdict::NotTestable { reason: "r".into() };
        let memory = [CheckId::ClientBoundedBacklog];
        // Each run's verdicts in turn; the verdicts kept and how many runs it took.
        let runs = |checks: &[CheckId], seq: Vec<Vec<Verdict>>| {
            let mut seq = seq.into_iter();
            let mut n = 0;
            let got = confirmed(checks, || {
                n += 1;
                Ok(seq.next())
            });
            (got.unwrap(), n)
        };
        let (got, n) = runs(&memory, vec![vec![fail("busy")], vec![Verdict::Pass]]);
        assert_eq!((got, n), (Some(vec![Verdict::Pass]), 2));
        let (got, n) = runs(&memory, vec![vec![fail("a")], vec![fail("b")]]);
        assert_eq!((got, n), (Some(vec![fail("b")]), 2));
        let (got, n) = runs(&memory, vec![vec![fail("a")], vec![no()]]);
        assert_eq!((got, n), (Some(vec![fail("a")]), 2));
        let (got, n) = runs(&memory, vec![vec![Verdict::Pass], vec![fail("never run")]]);
        assert_eq!((got, n), (Some(vec![Verdict::Pass]), 1));
        // The second run decides the memory check only: a long line it failed to read (on a
        // busy machine) neither fails the check the first run passed nor confirms the memory.
        let blocked = Verdict::Blocked {
            by: vec![CheckId::ClientLongLines],
        };
        let line = [CheckId::ClientLongLines, CheckId::ClientLineMemory];
        let (got, n) = runs(
            &line,
            vec![
                vec![Verdict::Pass, fail("17x")],
                vec![fail("timed out"), blocked],
            ],
        );
        assert_eq!((got, n), (Some(vec![Verdict::Pass, fail("17x")]), 2));
        let (got, _) = runs(
            &line,
            vec![
                vec![Verdict::Pass, fail("busy")],
                vec![fail("timed out"), Verdict::Pass],
            ],
        );
        assert_eq!(got, Some(vec![Verdict::Pass, Verdict::Pass]));
        // Another check's failure is judged once.
        let other = [CheckId::ClientLongLines];
        let (got, n) = runs(&other, vec![vec![fail("a")], vec![Verdict::Pass]]);
        assert_eq!((got, n), (Some(vec![fail("a")]), 1));
        // Stopped during the second run: not run.
        let (got, n) = runs(&memory, vec![vec![fail("a")]]);
        assert_eq!((got, n), (None, 2));
    }
}
