//! Shrinking beside the sequences: each new finding class shrinks in a thread of its own while
//! the lanes go on. All shrinking trials together hold at most as many runtime runs at once as
//! there are lanes ([`Permits`], handed out first come, first served), so several classes shrink
//! concurrently and the lanes keep running. The last part of `--seconds` is a reserve ([`reserve`])
//! for classes found late: no sequence starts in it while a class is still shrinking
//! ([`Unshrunk`]).

use super::exec;
use super::pool;
use super::repro;
use super::sequence::Sequence;
use super::shrink;
use super::{findings_of, Finding, FindingClass, Options, Pin, Report};
use crate::ops::Op;
use crate::rules::Profile;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The share of `--seconds` the shrinking of one class may take, and the reserve at its end.
pub const SHRINK_SHARE_EACH: f64 = 0.25;

/// How long the shrinking of one class may take (from when it is found): `shrink_time`, and
/// [`SHRINK_SHARE_EACH`] of `--seconds`.
pub fn allowance(shrink_time: Duration, seconds: Option<f64>) -> Duration {
    seconds.map_or(shrink_time, |s| {
        shrink_time.min(Duration::try_from_secs_f64(s * SHRINK_SHARE_EACH).unwrap_or(Duration::MAX))
    })
}

/// The reserve at the end of `--seconds` (none without it): a class found as it begins still has
/// its whole [`allowance`], and the reserve is never more than a quarter of `--seconds`.
pub fn reserve(shrink_time: Duration, seconds: Option<f64>) -> Option<Duration> {
    seconds.map(|_| allowance(shrink_time, seconds))
}

/// When the reserve of a run that started at `started` begins.
pub fn reserve_from(
    started: Instant,
    shrink_time: Duration,
    seconds: Option<f64>,
) -> Option<Instant> {
    let total = Duration::try_from_secs_f64(seconds?).unwrap_or(Duration::MAX);
    let reserve = reserve(shrink_time, seconds)?;
    started.checked_add(total.saturating_sub(reserve))
}

/// Slots for runtime runs, handed out in the order they were asked for.
#[derive(Debug)]
pub struct Permits {
    total: usize,
    queue: Mutex<Queue>,
    freed: Condvar,
}

#[derive(Debug)]
struct Queue {
    free: usize,
    /// The next ticket to hand out, and the next one to serve.
    next: u64,
    serving: u64,
}

impl Default for Permits {
    fn default() -> Self {
        Permits::new(1)
    }
}

impl Permits {
    /// `n` slots (at least 1).
    pub fn new(n: usize) -> Permits {
        let n = n.max(1);
        Permits {
            total: n,
            queue: Mutex::new(Queue {
                free: n,
                next: 0,
                serving: 0,
            }),
            freed: Condvar::new(),
        }
    }

    /// The number of slots.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Slots free now.
    pub fn free(&self) -> usize {
        self.lock().free
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a slot, after everyone who asked before; it is freed when the permit is dropped.
    pub fn acquire(&self) -> Permit<'_> {
        let mut q = self.lock();
        let ticket = q.next;
        q.next += 1;
        while !(q.free > 0 && q.serving == ticket) {
            q = self.freed.wait(q).unwrap_or_else(|e| e.into_inner());
        }
        q.free -= 1;
        q.serving += 1;
        drop(q);
        // The next ticket may find a slot free too.
        self.freed.notify_all();
        Permit(self)
    }
}

/// One held slot of [`Permits`].
#[derive(Debug)]
pub struct Permit<'a>(&'a Permits);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.0.lock().free += 1;
        self.0.freed.notify_all();
    }
}

/// The classes found whose shrinking has not ended yet.
#[derive(Debug, Default)]
pub struct Unshrunk {
    count: Mutex<usize>,
    changed: Condvar,
}

impl Unshrunk {
    fn lock(&self) -> MutexGuard<'_, usize> {
        self.count.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One more class shrinks, until the returned guard is dropped.
    pub fn begin(&self) -> Shrinking<'_> {
        *self.lock() += 1;
        Shrinking(self)
    }

    /// Classes still shrinking.
    pub fn count(&self) -> usize {
        *self.lock()
    }

    /// Waits until no class is shrinking or `end` has come: whether none is.
    pub fn wait_none(&self, end: Instant) -> bool {
        let mut n = self.lock();
        while *n > 0 {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            n = (self.changed.wait_timeout(n, left))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

/// A class's shrinking, counted in [`Unshrunk`] until dropped (also when its thread panics).
#[derive(Debug)]
pub struct Shrinking<'a>(&'a Unshrunk);

impl Drop for Shrinking<'_> {
    fn drop(&mut self) {
        *self.0.lock() -= 1;
        self.0.changed.notify_all();
    }
}

/// Whether a lane may start a sequence now: before the reserve always; in it only once no class
/// is shrinking (it waits for that until the budget's `end`).
pub fn may_start(reserve_from: Option<Instant>, end: Option<Instant>, unshrunk: &Unshrunk) -> bool {
    match (reserve_from, end) {
        (Some(r), Some(e)) if Instant::now() >= r => unshrunk.wait_none(e),
        _ => true,
    }
}

/// One new class to shrink.
pub struct Job<'a> {
    /// The fuzzer's settings.
    pub opts: &'a Options,
    /// The stream rules runs are judged by.
    pub rules: &'a Profile,
    /// The sequence that showed it first.
    pub seq: Sequence,
    /// Its case number.
    pub case: u64,
    /// The finding.
    pub finding: Finding,
    /// The end of its shrinking, and the time budget's end.
    pub ends: (Instant, Option<Instant>),
    /// Latencies and the trial slots, shared with the lanes.
    pub control: &'a pool::Control,
}

/// Shrinks a new class's sequence (until the shrinking's end) and writes its trace (until the
/// budget's end, or `shrink_time` from now); also returns the wall time it took.
pub fn shrink(job: Job<'_>) -> (Report, Duration) {
    let began = Instant::now();
    let progress = job.opts.progress;
    let rep = report(job);
    if progress {
        if let Some(p) = &rep.trace {
            eprintln!("fuzz:   shrunk to {} ops → {}", rep.ops.1, p.display());
        }
    }
    (rep, began.elapsed())
}

fn report(job: Job<'_>) -> Report {
    let Job {
        opts,
        rules,
        seq,
        case,
        finding: f,
        ends: (shrink_end, budget_end),
        control,
    } = job;
    let class = f.class.clone();
    let env = TrialEnv {
        opts,
        rules,
        control,
    };
    let run =
        |ops: &[Op], stop: Instant, early: bool| trial(&env, &class, seq.end, ops, stop, early);
    let shows = |ops: &[Op]| -> bool {
        run(ops, shrink_end, true)
            .iter()
            .any(|g| g.class == class && opts.allowlist.allows(g).is_none())
    };
    let width = control.trials.total();
    let interrupted = || opts.cancel.halted();
    let (ops, _trials) = shrink::ddmin_par(seq.ops.clone(), opts.shrink_trials, width, shows);
    let reproduced = ops.len() < seq.ops.len() || (interrupted().is_none() && shows(&seq.ops));
    let out_of_time = Instant::now() > shrink_end || interrupted().is_some();
    // Shrinking that did not finish leaves the sequence as far as it got: as found when no
    // smaller one showed the class in time.
    let shrunk = Sequence { ops, end: seq.end };
    let mut rep = Report {
        finding: f,
        count: 1,
        case,
        ops: (seq.ops.len(), shrunk.ops.len()),
        reproduced,
        out_of_time,
        sequence: shrunk,
        trace: None,
        trace_note: None,
        replay: None,
        write_error: None,
    };
    let mut deadline = Instant::now() + opts.shrink_time;
    if let Some(end) = budget_end {
        deadline = deadline.min(end);
    }
    let Some(dir) = &opts.out else {
        return rep;
    };
    let pin = class.pin();
    if let Pin::None(why) = pin {
        rep.trace_note = Some(format!("a trace cannot pin {class}: {why}"));
        return rep;
    }
    let mut notes = Vec::new();
    match (rep.ops.1 < rep.ops.0, out_of_time) {
        (_, false) if reproduced => {
            notes.push(format!("shrunk: {} → {} ops", rep.ops.0, rep.ops.1))
        }
        (true, true) => notes.push(format!(
            "partly shrunk: {} → {} ops (shrinking ran out of time)",
            rep.ops.0, rep.ops.1
        )),
        (false, true) => notes.push(format!(
            "unshrunk: the sequence as found ({} ops); shrinking ran out of time",
            rep.ops.0
        )),
        _ => notes.push(format!(
            "unshrunk: the sequence as found ({} ops); the class did not recur while shrinking",
            rep.ops.0
        )),
    }
    // Past the time budget, or interrupted, the trace is still written (the reference runtime's
    // answers take one run of it), but not replayed to verify it.
    let late = budget_end.is_some_and(|end| Instant::now() >= end);
    let unverified = if let Some(h) = interrupted() {
        Some(format!("the run was {h}"))
    } else if late {
        Some("the time budget was spent".to_string())
    } else {
        None
    };
    if unverified.is_some() {
        let d = opts.deadlines;
        deadline = Instant::now() + d.barrier + d.settle;
    }
    // Other classes the same kind of trace pins would make a failing replay ambiguous; a rule
    // class is told apart by its check id among the rules the replay reports broken.
    if unverified.is_none() && class.check().is_none() && pin != Pin::Stream {
        let others: Vec<String> = run(&rep.sequence.ops, deadline, false)
            .iter()
            .filter(|g| g.class != class && g.class.pin() == pin)
            .map(|g| g.class.to_string())
            .collect();
        if !others.is_empty() {
            rep.trace_note = Some(format!(
                "the shrunk sequence also shows {}, so a failing replay would not show {class} alone",
                others.join(", ")
            ));
            return rep;
        }
    }
    let _slot = control.trials.acquire();
    repro::write(
        opts,
        rules,
        &mut rep,
        dir,
        deadline,
        &notes,
        unverified.as_deref(),
    );
    rep
}

/// What one trial needs.
struct TrialEnv<'a> {
    opts: &'a Options,
    rules: &'a Profile,
    control: &'a pool::Control,
}

/// Runs `ops` (with the sequence's ending `end`) once a trial slot is free, stopped at `stop`
/// (none is started after it) and, when `early`, as soon as `class` shows: its findings.
fn trial(
    env: &TrialEnv<'_>,
    class: &FindingClass,
    end: super::sequence::End,
    ops: &[Op],
    stop: Instant,
    early: bool,
) -> Vec<Finding> {
    let TrialEnv {
        opts,
        rules,
        control,
    } = *env;
    let _slot = control.trials.acquire();
    if Instant::now() > stop || opts.cancel.halted().is_some() {
        return Vec::new();
    }
    let cand = Sequence {
        ops: ops.to_vec(),
        end,
    };
    // A shrinking run stops as soon as the class shows, where a run's own finding shows it.
    let until = match class {
        FindingClass::Diff(..) => None,
        FindingClass::Reference(inner) => Some((**inner).clone()),
        c => Some(c.clone()),
    }
    .filter(|_| early);
    let (s, r) = if matches!(class, FindingClass::Reference(_)) {
        let plan = exec::Plan {
            last: true,
            latency: Some(control.reference_latency.clone()),
            until,
            ..exec::Plan::default()
        };
        let r = exec::run_on(
            &mut None,
            &cand,
            &opts.reference,
            rules,
            opts.deadlines,
            Some(stop),
            &plan,
        );
        (exec::RunResult::default(), Some(r))
    } else {
        pool::run_fresh(opts, rules, &cand, Some(stop), control, until.as_ref())
    };
    findings_of(s, r, &opts.allowlist)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_a_classes_allowance_and_at_most_a_quarter_of_the_budget() {
        let long = Duration::from_secs(120);
        assert_eq!(reserve(long, Some(60.0)), Some(Duration::from_secs(15)));
        assert_eq!(allowance(long, Some(60.0)), Duration::from_secs(15));
        let short = Duration::from_secs(5);
        assert_eq!(reserve(short, Some(60.0)), Some(short));
        assert_eq!(reserve(long, None), None);
        assert_eq!(allowance(long, None), long);
        assert_eq!(reserve(long, Some(1e30)), Some(long));
        for s in [0.0, 1.0, 7.5, 60.0, 3600.0] {
            let r = reserve(long, Some(s)).unwrap();
            assert!(r.as_secs_f64() <= s / 4.0 + 1e-9, "{s}: {r:?}");
        }
    }

    #[test]
    fn the_reserve_begins_a_quarter_before_the_end_of_the_budget() {
        let t0 = Instant::now();
        let long = Duration::from_secs(120);
        assert_eq!(
            reserve_from(t0, long, Some(60.0)),
            Some(t0 + Duration::from_secs(45))
        );
        assert_eq!(reserve_from(t0, long, None), None);
        assert!(reserve_from(t0, long, Some(1e30)).is_none_or(|r| r > t0));
    }

    #[test]
    fn permits_hand_out_as_many_slots_as_lanes_and_take_them_back() {
        let p = Permits::new(2);
        assert_eq!((p.total(), p.free()), (2, 2));
        let a = p.acquire();
        let b = p.acquire();
        assert_eq!(p.free(), 0);
        drop(a);
        assert_eq!(p.free(), 1);
        drop(b);
        assert_eq!(p.free(), 2);
        assert_eq!(Permits::new(0).total(), 1);
    }

    #[test]
    fn a_waiting_trial_gets_the_slot_another_frees() {
        let p = Permits::new(1);
        let held = p.acquire();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let _got = p.acquire();
                p.free()
            });
            // The waiter cannot finish while the slot is held; once freed it takes it.
            drop(held);
            assert_eq!(waiter.join().unwrap(), 0);
        });
        assert_eq!(p.free(), 1);
    }

    #[test]
    fn lanes_start_in_the_reserve_only_once_every_class_is_shrunk() {
        let u = Unshrunk::default();
        let now = Instant::now();
        let (past, future) = (
            now - Duration::from_millis(1),
            now + Duration::from_secs(3600),
        );
        // Before the reserve, or without a time budget: always.
        let shrinking = u.begin();
        assert!(may_start(Some(future), Some(future), &u));
        assert!(may_start(None, None, &u));
        // In the reserve, with a class shrinking and the budget spent: not.
        assert!(!may_start(Some(past), Some(now), &u));
        assert_eq!(u.count(), 1);
        drop(shrinking);
        assert_eq!(u.count(), 0);
        assert!(may_start(Some(past), Some(now), &u));
    }

    #[test]
    fn a_class_counts_as_shrinking_even_when_its_thread_panics() {
        let u = Unshrunk::default();
        let r = std::thread::scope(|s| {
            s.spawn(|| {
                let _g = u.begin();
                panic!("shrinking failed");
            })
            .join()
        });
        assert!(r.is_err());
        assert_eq!(u.count(), 0);
    }
}
