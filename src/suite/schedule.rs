//! The scheduler: checks on `--jobs` workers in prerequisite order, each on fresh processes; a
//! check whose prerequisite failed is `BLOCKED`, a run that stops leaves the rest `NOT RUN`; then
//! what the rule engine found in every transcript and the baseline are applied.

use super::cases::CheckCase;
use super::judge::{self, Blame};
use super::methods::{self, MissingMethod};
use super::options::Options;
use super::probe::ModelCapability;
use super::share::RanIn;
use super::verdict::{CheckResult, Verdict};
use super::warm::Procs;
use crate::check::{CheckId, CheckInfo};
use crate::runner::{CommandSpec, Halt};
use std::io::Write;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The scheduler's shared state: a verdict slot per selected check.
pub(super) struct Board {
    pub(super) verdicts: Vec<Option<Verdict>>,
    pub(super) started: Vec<bool>,
    pub(super) durations: Vec<Duration>,
    pub(super) blames: Vec<Blame>,
    /// Where each check's cases ran.
    pub(super) ran_in: Vec<Vec<RanIn>>,
    pub(super) transcripts: usize,
    /// The methods of the edition the runtime lacks (decided before the checks run).
    pub(super) missing: Vec<MissingMethod>,
    /// The checks may start: what they rely on (the preflight, [`Board::missing`]) is known.
    pub(super) open: bool,
}

impl Board {
    /// Checks decided so far.
    fn done(&self) -> usize {
        self.verdicts.iter().filter(|v| v.is_some()).count()
    }
}

pub(super) fn skip(c: &CheckInfo) -> Verdict {
    Verdict::Skip {
        reason: format!("applies to editions {}", c.editions.names()),
    }
}

/// Every selected check `NOT RUN` (or skipped for another edition).
pub(super) fn not_run(sel: &[&'static CheckInfo], board: &Mutex<Board>, opts: &Options, why: Halt) {
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

/// What a worker should do next.
enum Next {
    Run(usize),
    Wait,
    Stop,
}

pub(super) fn applies(c: &CheckInfo, opts: &Options) -> bool {
    c.editions.contains(opts.edition)
}

/// The failing checks at the root of what blocks check `i`, or `None` when it may run (or must
/// wait: `Some(vec![])`).
fn blockers(
    i: usize,
    sel: &[&'static CheckInfo],
    b: &Board,
    opts: &Options,
) -> Option<Vec<CheckId>> {
    let mut roots: Vec<CheckId> = Vec::new();
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

pub(super) fn worker(
    sel: &[&'static CheckInfo],
    cases: &[CheckCase],
    cmd: &CommandSpec,
    opts: &Options,
    (board, ready): &(Mutex<Board>, Condvar),
    model: &dyn Fn() -> ModelCapability,
    mut procs: Procs,
) {
    let lock = || board.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = lock();
    while !b.open {
        b = ready.wait(b).unwrap_or_else(|e| e.into_inner());
    }
    drop(b);
    // Not before: a runtime that floods the methods probe spends the run's shared stdout bound,
    // and a spare alive meanwhile would be stopped by that flood, not by one of its own.
    procs.spares.fill();
    loop {
        let (i, missing) = {
            let mut b = lock();
            loop {
                match next(sel, &mut b, opts) {
                    Next::Run(i) => break (i, b.missing.clone()),
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
        let n = mine.len();
        let runnable = methods::runnable(mine, &missing, sel);
        let mine = runnable.as_deref().unwrap_or_default();
        let (verdict, blames, ran) = if let Err(v) = &runnable {
            (v.clone(), Vec::new(), Vec::new())
        } else if mine.is_empty() {
            // A stream rule without a trace of its own: judged over the others' transcripts.
            (Verdict::Pass, Vec::new(), Vec::new())
        } else {
            judge::judge(info.id, mine, cmd, opts, model, &mut procs)
        };
        let mut b = lock();
        b.transcripts += mine.len();
        b.blames.extend(blames);
        b.ran_in[i] = ran;
        b.verdicts[i] = Some(verdict);
        b.durations[i] = started.elapsed();
        // A rule judged over the others' transcripts is decided only when they all ran
        // (`finish`): a progress line now would show a verdict the report may not keep.
        if opts.progress && n > 0 {
            progress(b.done(), sel.len(), info.id, b.verdicts[i].as_ref());
        }
        ready.notify_all();
    }
}

/// One progress line on stderr per finished check: rewritten in place on a terminal, one line
/// each otherwise (CI logs).
fn progress(done: usize, total: usize, id: CheckId, v: Option<&Verdict>) {
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
pub(super) fn finish(
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
        // A stream rule's violation, seen in any transcript, is evidence of its own: it fails the
        // check also when the check's own trace was BLOCKED or UNTESTABLE, since neither says the
        // rule holds, and the violation does not rest on the prerequisite or the setup that
        // stopped the trace (each stream rule is written so that another rule's breakage does not
        // trip it: `suite::stream`). A trace rule's blames come from its own trace only, so it
        // has none unless that trace ran.
        let judged_elsewhere = info.is_stream()
            && matches!(
                verdict,
                Verdict::Blocked { .. } | Verdict::NotTestable { .. }
            );
        if verdict == Verdict::Pass || (judged_elsewhere && !found.is_empty()) {
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
            } else if info.is_stream()
                && b.transcripts == 0
                && !cases.iter().any(|c| c.check.id == info.id)
            {
                verdict = Verdict::NotTestable {
                    reason: "it is judged over the other checks' transcripts and none ran (select it with checks that have traces, e.g. --filter frame. --filter stdout.)".into(),
                };
            }
        }
        let verdict = match (verdict, opts.baseline.reason(info.id.as_str())) {
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
            ran_in: b.ran_in[i].clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn check(id: CheckId, requires: &'static [CheckId]) -> CheckInfo {
        CheckInfo {
            id,
            section: "",
            severity: crate::check::Severity::Must,
            editions: crate::edition::Editions::ALL,
            rule: "",
            requires,
            judge: crate::check::Judge::Trace,
        }
    }

    /// A stream rule seen broken in another check's transcript fails its check even when its own
    /// trace was BLOCKED or UNTESTABLE; a trace rule's BLOCKED verdict stands (it has no evidence).
    #[test]
    fn a_stream_blame_fails_a_blocked_or_untestable_stream_check_only() {
        use crate::suite::verdict::Failure;
        let seq = CheckId::SessionSeqContiguous.info();
        let time = CheckId::EventTime.info();
        let counts = CheckId::TurnCountsPerSession.info();
        assert!(seq.is_stream() && time.is_stream() && !counts.is_stream());
        let sel: Vec<&'static CheckInfo> = vec![seq, time, counts];
        let blocked = Verdict::Blocked {
            by: vec![CheckId::TurnEndReason],
        };
        let untestable = Verdict::NotTestable {
            reason: "setup".into(),
        };
        let blame = |check| Blame {
            check,
            failure: Failure::new(crate::trace::FailureKind::Rule, "broken"),
        };
        let b = Board {
            verdicts: vec![
                Some(blocked.clone()),
                Some(untestable),
                Some(blocked.clone()),
            ],
            started: vec![true; 3],
            durations: vec![Duration::ZERO; 3],
            blames: vec![
                blame(CheckId::SessionSeqContiguous),
                blame(CheckId::EventTime),
                blame(CheckId::TurnCountsPerSession),
            ],
            ran_in: vec![Vec::new(); 3],
            transcripts: 1,
            missing: Vec::new(),
            open: true,
        };
        let out = finish(&sel, &[], b, &Options::default());
        let words: Vec<&str> = out.iter().map(|r| r.verdict.word()).collect();
        assert_eq!(words, ["FAIL", "FAIL", "BLOCKED"]);
    }

    /// A check listed before the prerequisite that a failure blocks is decided in the same call,
    /// not left waiting for a notification (this hung a run against a flooding runtime).
    #[test]
    fn a_check_waiting_on_a_later_blocked_one_is_blocked_too() {
        use CheckId::{FrameBatchIgnored as A_, FrameCrlfAccepted as B_, FrameDeepNesting as C_};
        static A: CheckInfo = check(A_, &[B_]);
        static B: CheckInfo = check(B_, &[C_]);
        static C: CheckInfo = check(C_, &[]);
        let sel: Vec<&'static CheckInfo> = vec![&A, &B, &C];
        let mut b = Board {
            verdicts: vec![None; 3],
            started: vec![false; 3],
            durations: vec![Duration::ZERO; 3],
            blames: Vec::new(),
            ran_in: vec![Vec::new(); 3],
            transcripts: 0,
            missing: Vec::new(),
            open: true,
        };
        let opts = Options::default();
        assert!(matches!(next(&sel, &mut b, &opts), Next::Run(2)));
        b.verdicts[2] = Some(Verdict::Fail(Box::new(
            crate::suite::verdict::Failure::new(crate::trace::FailureKind::Mismatch, "broken"),
        )));
        assert!(matches!(next(&sel, &mut b, &opts), Next::Stop));
        for v in &b.verdicts[..2] {
            assert!(
                matches!(v, Some(Verdict::Blocked { by }) if by == &vec![C_]),
                "{v:?}"
            );
        }
    }
}
