//! Sequences in parallel lanes: lane `w` of `J` runs cases `w`, `w + J`, `w + 2J`, … in order, so
//! that a seed and a lane count always give the same sequences on the same processes. With
//! shared processes ([`ProcessMode::Shared`]) a lane keeps one runtime process (and, in
//! differential mode, one reference process beside it) for as long as its sequences allow
//! ([`super::exec::continues`]). Results go to the caller over a channel; the caller sees them
//! in case order. Shrinking runs beside the lanes ([`super::shrinker`]); in the reserve at the
//! end of the time budget a lane starts no sequence while a class is still shrinking.

use super::exec::{self, continues, run_on, Live, Plan, RunResult};
use super::gen;
use super::latency::{Latency, Wait};
use super::sequence::Sequence;
use super::FindingClass;
use super::Options;
use crate::rules::Profile;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sequences one shared process serves at most (a long-lived process accumulates state the
/// contract does not isolate: memory, files, timers).
pub const MAX_RUNS_PER_PROCESS: usize = 64;

/// How sequences use runtime processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessMode {
    /// A fresh process for every sequence.
    Fresh,
    /// Sequences the contract isolates share a process; lifecycle sequences get their own.
    Shared,
    /// `Fresh` until a fresh process of the runtime under test took [`SHARE_FROM`] or more to
    /// answer its first `initialize` (a slow boot, paid by every sequence), `Shared` from then
    /// on (issue 38, item 4).
    Auto,
}

/// The boot from which [`ProcessMode::Auto`] shares processes: ten times what a Python runtime
/// takes to answer its first `initialize` here, so that a loaded machine does not flip the mode
/// (and with it the processes a seed's sequences run on) for the runtimes that start in a blink;
/// the release takes 1.1–2.5 s. On the reference a sequence takes ~20 ms.
pub const SHARE_FROM: Duration = Duration::from_secs(1);

impl ProcessMode {
    /// `Fresh` or `Shared`: what `Auto` is now, given the runtime's latencies so far.
    fn now(self, latency: &Latency) -> ProcessMode {
        match self {
            ProcessMode::Auto if latency.slowest(Wait::Boot).is_some_and(|b| b >= SHARE_FROM) => {
                ProcessMode::Shared
            }
            ProcessMode::Auto => ProcessMode::Fresh,
            m => m,
        }
    }
}

/// One sequence's runs.
#[derive(Debug)]
pub struct Ran {
    /// Case number.
    pub case: u64,
    /// The sequence.
    pub seq: Sequence,
    /// Its run on the runtime under test.
    pub subject: RunResult,
    /// Its run on the reference runtime (differential mode).
    pub reference: Option<RunResult>,
}

/// What the caller and the lanes share.
#[derive(Debug, Default)]
pub struct Control {
    /// Set by the caller: lanes start no further sequence.
    pub stop: AtomicBool,
    /// The shrinking trials' slots (as many as lanes), shared by every class that shrinks.
    pub trials: super::shrinker::Permits,
    /// The classes still shrinking.
    pub unshrunk: super::shrinker::Unshrunk,
    /// Where the reserve at the end of the time budget begins ([`super::shrinker::reserve`]).
    pub reserve_from: Option<Instant>,
    /// The runtime under test's observed latencies (every lane's runs, and the shrinking's).
    pub subject_latency: Arc<Latency>,
    /// The reference runtime's.
    pub reference_latency: Arc<Latency>,
    /// [`ProcessMode::Auto`] turned to sharing (and said so).
    pub shares: AtomicBool,
}

/// The generated session prefix of a case in shared mode.
fn prefix(mode: ProcessMode, case: u64) -> String {
    match mode {
        ProcessMode::Shared => format!("q{case}-"),
        _ => String::new(),
    }
}

/// Work for a lane's reference thread.
enum Job {
    /// Run this sequence as planned, on the shared process (`true`) or a fresh one of its own;
    /// answer with its result and whether the shared process lives on.
    Run(Sequence, Plan, bool),
    /// Kill the shared process.
    Reset,
}

/// What every lane of one fuzzing run shares.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    /// The fuzzer's settings.
    pub opts: &'a Options,
    /// The stream rules runs are judged by.
    pub rules: &'a Profile,
    /// The time budget's end: no sequence starts after it, and every wait ends there.
    pub end: Option<Instant>,
    /// Stop flag, latencies and shrinking, shared with the caller.
    pub control: &'a Control,
}

/// Runs lane `lane` of `lanes` until the case or time budget is spent or `control.stop` is set,
/// sending each sequence's runs to `tx`.
///
/// Each runtime's processes are started by one thread for the lane's whole life (the subject's
/// by the lane, the reference's by a thread of its own): a child started with a parent-death
/// signal dies with the thread that started it, so no process may outlive its starter.
pub fn lane(run: Run<'_>, lane: u64, lanes: u64, tx: &Sender<Ran>) {
    let Run {
        opts, rules, end, ..
    } = run;
    if !opts.differential {
        return run_lane(run, lane, lanes, tx, None);
    }
    std::thread::scope(|sc| {
        let (job_tx, job_rx) = std::sync::mpsc::channel::<Job>();
        let (res_tx, res_rx) = std::sync::mpsc::channel::<(RunResult, bool)>();
        sc.spawn(move || {
            let mut reference: Option<Live> = None;
            for job in job_rx {
                match job {
                    Job::Run(seq, plan, on_shared) => {
                        let dl = opts.deadlines;
                        let plan = Plan {
                            latency: Some(run.control.reference_latency.clone()),
                            ..plan
                        };
                        let mut own = None;
                        let live = if on_shared { &mut reference } else { &mut own };
                        let r = run_on(live, &seq, &opts.reference, rules, dl, end, &plan);
                        if res_tx.send((r, reference.is_some())).is_err() {
                            return;
                        }
                    }
                    Job::Reset => reference = None,
                }
            }
        });
        run_lane(run, lane, lanes, tx, Some((job_tx, res_rx)));
    });
}

/// A lane's reference thread, as the lane sees it.
type ReferenceThread = (Sender<Job>, std::sync::mpsc::Receiver<(RunResult, bool)>);

fn run_lane(
    run: Run<'_>,
    lane: u64,
    lanes: u64,
    tx: &Sender<Ran>,
    reference: Option<ReferenceThread>,
) {
    let Run {
        opts,
        rules,
        end,
        control,
    } = run;
    // The lane's shared process; a sequence that cannot share runs on a fresh one of its own
    // and leaves the shared one be.
    let mut subject: Option<Live> = None;
    // The lane's cases are its share of the shard's (`Shard::case` of lane, lane + lanes, …).
    let mut i = lane;
    let mut case = opts.shard.case(i);
    let mut seq = gen::generate_for(opts.seed, case, opts.tools);
    loop {
        let may_start = super::shrinker::may_start(control.reserve_from, end, &control.unshrunk);
        if !may_start
            || control.stop.load(Ordering::Relaxed)
            || opts.cases.is_some_and(|n| case >= n)
            || end.is_some_and(|e| Instant::now() >= e)
        {
            return;
        }
        let next_case = opts.shard.case(i + lanes);
        let next = gen::generate_for(opts.seed, next_case, opts.tools);
        let mode = opts.processes.now(&control.subject_latency);
        let turned = opts.processes == ProcessMode::Auto && mode == ProcessMode::Shared;
        if turned && !control.shares.swap(true, Ordering::Relaxed) && opts.progress {
            let boot = control
                .subject_latency
                .slowest(Wait::Boot)
                .unwrap_or_default();
            eprintln!(
                "fuzz: the runtime took {:.1} s to answer its first initialize: from here the \
                 sequences the contract isolates share processes (--processes fresh keeps one per \
                 sequence)",
                boot.as_secs_f64()
            );
        }
        let on_shared = mode == ProcessMode::Shared && seq.reusable();
        let plan = Plan {
            // A sequence on a process of its own runs as written, as its shrinking and its
            // trace do: only a shared process needs its sessions kept apart.
            prefix: match on_shared {
                true => prefix(mode, case),
                false => String::new(),
            },
            latency: Some(control.subject_latency.clone()),
            until: None,
            last: !on_shared
                || !next_shared(opts, i, lanes).is_some_and(|(c, n)| {
                    continues(
                        subject.as_ref(),
                        &seq,
                        &prefix(mode, case),
                        &n,
                        &prefix(mode, c),
                        MAX_RUNS_PER_PROCESS,
                    )
                }),
        };
        let run = |subject: &mut Option<Live>, on_shared: bool, plan: &Plan| {
            if let Some((jobs, _)) = &reference {
                let _ = jobs.send(Job::Run(seq.clone(), plan.clone(), on_shared));
            }
            let mut own = None;
            let live = if on_shared { subject } else { &mut own };
            let s = run_on(live, &seq, &opts.subject, rules, opts.deadlines, end, plan);
            let r = reference
                .as_ref()
                .map(|(_, results)| results.recv().unwrap_or_default());
            (s, r)
        };
        let (mut s, mut r) = run(&mut subject, on_shared, &plan);
        if s.straggler || r.as_ref().is_some_and(|(r, _)| r.straggler) {
            // Void on the shared processes: again on fresh ones, and the lane starts over.
            subject = None;
            if let Some((jobs, _)) = &reference {
                let _ = jobs.send(Job::Reset);
            }
            let alone = Plan {
                last: true,
                prefix: String::new(),
                ..plan.clone()
            };
            (s, r) = run(&mut subject, false, &alone);
        }
        // Both runtimes go on sharing their processes, or neither does.
        if let (Some((jobs, _)), Some((_, alive))) = (&reference, &r) {
            if subject.is_some() != *alive {
                subject = None;
                let _ = jobs.send(Job::Reset);
            }
        }
        let ran = Ran {
            case,
            seq,
            subject: s,
            reference: r.map(|(r, _)| r),
        };
        if tx.send(ran).is_err() {
            return;
        }
        i += lanes;
        case = next_case;
        seq = next;
    }
}

/// The lane's next case after its `i`-th of the shard (within the case budget, looking
/// [`LOOKAHEAD`] cases ahead) whose sequence can run on a shared process.
fn next_shared(opts: &Options, i: u64, lanes: u64) -> Option<(u64, Sequence)> {
    (1..=LOOKAHEAD)
        .map(|k| opts.shard.case(i + k * lanes))
        .take_while(|c| opts.cases.is_none_or(|n| *c < n))
        .map(|c| (c, gen::generate_for(opts.seed, c, opts.tools)))
        .find(|(_, s)| s.reusable())
}

/// How far a lane looks for the next sequence its shared process can serve.
const LOOKAHEAD: u64 = 16;

/// Runs one sequence on fresh processes of both runtimes (differential mode) or of the subject
/// alone, each stopped at `stop` (shrinking and trace verification) or, given `until`, as soon
/// as the subject shows that class.
pub fn run_fresh(
    opts: &Options,
    rules: &Profile,
    seq: &Sequence,
    stop: Option<Instant>,
    control: &Control,
    until: Option<&FindingClass>,
) -> (RunResult, Option<RunResult>) {
    let dl = opts.deadlines;
    let run = |t, latency: &Arc<Latency>, until: Option<&FindingClass>| {
        let plan = Plan {
            last: true,
            latency: Some(latency.clone()),
            until: until.cloned(),
            ..Plan::default()
        };
        exec::run_on(&mut None, seq, t, rules, dl, stop, &plan)
    };
    let subject = || run(&opts.subject, &control.subject_latency, until);
    if !opts.differential {
        return (subject(), None);
    }
    std::thread::scope(|s| {
        let h = s.spawn(|| run(&opts.reference, &control.reference_latency, None));
        let a = subject();
        (a, Some(h.join().unwrap_or_default()))
    })
}
