//! Black-box fuzzing of any runtime over stdio (`dsh-conformance fuzz`).
//!
//! Seeded sequences of client operations ([`gen`]) run against a fresh runtime process each
//! ([`exec`]), judged by the stream rule engine ([`crate::rules`], the same rules and check ids as
//! `dsh-conformance check`) with deadlines on every wait (a hang is a finding). A broken rule does
//! not stop the sequence: every finding class it shows is reported ([`class`]). In differential
//! mode the same sequence also runs on the built-in reference runtime and every normalised
//! difference the rules did not already report is classified ([`diff`]); an [`allowlist`]
//! suppresses known, justified ones. The first occurrence of each class is shrunk ([`shrink`]),
//! in a thread of its own beside the lanes ([`shrinker`]), and, when a trace can pin it, written
//! as a golden trace verified to fail for it ([`repro`]).

pub mod allowlist;
pub mod class;
pub mod diff;
pub mod events;
pub mod exec;
pub mod gen;
pub mod latency;
pub mod merge;
pub mod observed;
pub mod pool;
pub mod repro;
pub mod sequence;
pub mod shard;
pub mod shrink;
pub mod shrinker;
pub mod toolcall;

pub use allowlist::Allowlist;
pub use class::{FindingClass, Pin};
pub use exec::{Deadlines, Target};
pub use pool::ProcessMode;
pub use shard::Shard;

use crate::rules::Profile;
use crate::runtime::Edition;
use sequence::Sequence;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One broken rule or difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Its class: one cause, one class (`session.seq-contiguous`, `hang:barrier`,
    /// `diff:outcome:shutdown`…).
    pub class: FindingClass,
    /// What exactly was seen.
    pub detail: String,
}

/// Fuzzer settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Seed of the sequence generator.
    pub seed: u64,
    /// Stop after this many sequences.
    pub cases: Option<u64>,
    /// Stop once this much time has passed (checked between sequences).
    pub seconds: Option<f64>,
    /// Protocol edition the runtime speaks.
    pub edition: Edition,
    /// The runtime under test.
    pub subject: Target,
    /// The built-in reference runtime (differential runs, and the expectations of written traces).
    pub reference: Target,
    /// Compare every sequence's outcome with the reference runtime's.
    pub differential: bool,
    /// Known, justified differences.
    pub allowlist: Allowlist,
    /// Where reproducing traces are written (`None`: not written).
    pub out: Option<PathBuf>,
    /// Deadlines of each run.
    pub deadlines: Deadlines,
    /// Runs spent shrinking one finding at most.
    pub shrink_trials: usize,
    /// Wall time spent shrinking one finding at most.
    pub shrink_time: Duration,
    /// Replay each written trace against both runtimes and note whether it reproduces.
    pub verify: bool,
    /// Print each new finding to stderr as it is found.
    pub progress: bool,
    /// Hold the runtime to upstream's bytes: reject -32601 for unknown methods (upstream answers
    /// -32603; by default it is accepted with upstream's message, as `check` does) and judge
    /// member order.
    pub strict_upstream: bool,
    /// Sequences run at once ([`pool`]'s lanes; at least 1).
    pub jobs: usize,
    /// Whether sequences share runtime processes.
    pub processes: ProcessMode,
    /// Which share of the seed's cases this run runs (`--shard K/N`).
    pub shard: Shard,
    /// The profile whose tools the sequences call (`--profile`; [`toolcall`]); `None`: no
    /// generated tool calls.
    pub tools: Option<crate::runtime::Profile>,
    /// The runtime under test was given the kit's model stub (`--model-stub`): traces with
    /// prompts say `# requires: model-stub`.
    pub model_stub: bool,
    /// Stops the run early (SIGINT, SIGTERM): the lanes start no further sequence, shrinking
    /// stops, every class found gets its trace unverified, and the summary is returned.
    pub cancel: crate::runner::Cancel,
}

/// A reported finding class.
#[derive(Debug, Clone)]
pub struct Report {
    /// The first occurrence, as found.
    pub finding: Finding,
    /// Sequences that showed this class.
    pub count: u64,
    /// The case number of the first occurrence.
    pub case: u64,
    /// Ops before and after shrinking.
    pub ops: (usize, usize),
    /// Whether the shrunk sequence still showed the class (timing-dependent findings may not).
    pub reproduced: bool,
    /// Shrinking was cut short by the time budget (`--seconds`, the shrink time).
    pub out_of_time: bool,
    /// The shrunk, reproducing sequence.
    pub sequence: Sequence,
    /// The trace file written (only one verified to fail for this class, unless not verified).
    pub trace: Option<PathBuf>,
    /// Why no trace was written, or why it is not verified.
    pub trace_note: Option<String>,
    /// Replay verdicts: (fails against the runtime for this class, passes against the reference).
    pub replay: Option<(bool, bool)>,
    /// The verified trace could not be written (the run then exits 2).
    pub write_error: Option<String>,
}

/// What a fuzzing run did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Seed used.
    pub seed: u64,
    /// Sequences run.
    pub sequences: u64,
    /// Lines written to the runtime.
    pub frames_in: u64,
    /// Lines the runtime wrote.
    pub frames_out: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Processes of the runtime under test started for the sequences (shrinking aside).
    pub processes: u64,
    /// Lanes the sequences ran in.
    pub jobs: usize,
    /// Reported classes, in order of discovery.
    pub findings: Vec<Report>,
    /// Suppressed differences: class → (count, reason).
    pub suppressed: BTreeMap<String, (u64, String)>,
    /// The runtime could not be started.
    pub broken: Option<String>,
    /// The time budget ended a sequence before it was done: which case, and where it stopped.
    pub cut: Option<String>,
    /// Wall time spent shrinking (and writing traces), added up over the classes (which shrink
    /// concurrently).
    pub shrinking: Duration,
    /// The case numbers judged, in order (a shard's share of the seed's cases).
    pub cases: Vec<u64>,
    /// The shard run.
    pub shard: Shard,
    /// The run was stopped early ([`Options::cancel`]): why.
    pub interrupted: Option<crate::runner::Halt>,
}

pub use shrinker::SHRINK_SHARE_EACH;

/// Whether traces can be written to `dir`: it is created if missing, and a probe file is written
/// and removed there (checked before a run, so that no reproducer is lost at its end).
pub fn check_out_dir(dir: &std::path::Path) -> Result<(), String> {
    let probe = dir.join(format!(".dsh-conformance-probe-{}", std::process::id()));
    std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&probe, b"probe\n"))
        .map_err(|e| format!("cannot write to {}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

impl Summary {
    /// 0 no findings, 1 findings, 2 the runtime cannot be started (or no sequence finished
    /// within the time budget, and none showed a finding: nothing was tested).
    pub fn exit_code(&self) -> i32 {
        if self.broken.is_some() || self.write_errors().next().is_some() {
            2
        } else if let Some(h) = self.interrupted {
            h.exit_code()
        } else if !self.findings.is_empty() {
            1
        } else if self.sequences == 0 && self.cut.is_some() {
            2
        } else {
            0
        }
    }

    /// Every trace that could not be written.
    pub fn write_errors(&self) -> impl Iterator<Item = &str> {
        self.findings
            .iter()
            .filter_map(|r| r.write_error.as_deref())
    }

    /// The human summary.
    pub fn human(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let secs = self.elapsed.as_secs_f64();
        let _ = writeln!(
            s,
            "fuzz: seed {}: {} sequences in {secs:.1} s ({:.2}/s) on {} lane(s) and {} runtime process(es), {} frames written, {} read",
            self.seed,
            self.sequences,
            self.sequences as f64 / secs.max(1e-9),
            self.jobs,
            self.processes,
            self.frames_in,
            self.frames_out
        );
        if let Some(b) = &self.broken {
            let _ = writeln!(s, "ERROR: {b}");
        }
        if let Some(h) = &self.interrupted {
            let _ = writeln!(
                s,
                "{h}: the run stopped early; every class found so far is below (traces unverified)"
            );
        }
        if let Some(c) = &self.cut {
            if self.sequences == 0 && self.findings.is_empty() {
                let _ = writeln!(
                    s,
                    "ERROR: no sequence finished within the time budget (--seconds); raise it above --timeout"
                );
            }
            let _ = writeln!(s, "cut short by the time budget: {c}");
        }
        let _ = writeln!(s, "findings: {} class(es)", self.findings.len());
        for r in &self.findings {
            let _ = writeln!(
                s,
                "  {} ×{} (first in case {}; shrunk {} → {} ops{})",
                r.finding.class,
                r.count,
                r.case,
                r.ops.0,
                r.ops.1,
                match (r.reproduced, r.out_of_time) {
                    (true, false) => "",
                    (true, true) => "; shrinking stopped at its share of the time budget",
                    (false, true) => "; not shrunk: shrinking ran out of time (its trace is the sequence as found)",
                    (false, false) => "; did not recur while shrinking",
                }
            );
            for l in r.finding.detail.lines().take(6) {
                let _ = writeln!(s, "      {}", crate::trace::explain::clip(l, 300));
            }
            if let Some(p) = &r.trace {
                let verdict = match r.replay {
                    Some((true, true)) => {
                        " (replay: fails against the runtime, passes against the reference)"
                    }
                    _ => " (not verified)",
                };
                let _ = writeln!(s, "      trace: {}{verdict}", p.display());
            } else if let Some(e) = &r.write_error {
                let _ = writeln!(s, "      ERROR: trace lost: {e}");
            } else if let Some(n) = &r.trace_note {
                let _ = writeln!(s, "      no trace: {n}");
            }
        }
        if !self.suppressed.is_empty() {
            let _ = writeln!(s, "suppressed by the allowlist:");
            for (c, (n, why)) in &self.suppressed {
                let _ = writeln!(s, "  {c} ×{n}  # {why}");
            }
        }
        s
    }
}

/// Runs the fuzzer until its case or time budget is spent.
pub fn run(opts: &Options) -> Summary {
    let started = Instant::now();
    let mut rules = Profile::for_edition(opts.edition, false);
    rules.allow_method_not_found = !opts.strict_upstream;
    rules.member_order = opts.strict_upstream;
    let jobs = opts.jobs.max(1);
    let mut sum = Summary {
        seed: opts.seed,
        jobs,
        shard: opts.shard,
        ..Summary::default()
    };
    let seconds = match (opts.cases, opts.seconds) {
        (None, None) => Some(60.0),
        (_, s) => s,
    };
    // `--seconds` bounds shrinking too: a finding found late is shrunk only while time is left.
    let budget_end = seconds.map(|s| started + Duration::from_secs_f64(s));
    let control = pool::Control {
        trials: shrinker::Permits::new(jobs),
        reserve_from: shrinker::reserve_from(started, opts.shrink_time, seconds),
        ..pool::Control::default()
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // An interruption (SIGINT) stops the lanes after their current sequence; shrinking sees
        // it itself ([`shrinker`]).
        scope.spawn(|| {
            use std::sync::atomic::Ordering;
            while !done.load(Ordering::Relaxed) {
                if opts.cancel.halted().is_some() {
                    control.stop.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let (tx, rx) = std::sync::mpsc::channel();
        for w in 0..jobs as u64 {
            let tx = tx.clone();
            let run = pool::Run {
                opts,
                rules: &rules,
                end: budget_end,
                control: &control,
            };
            scope.spawn(move || pool::lane(run, w, jobs as u64, &tx));
        }
        drop(tx);
        // Each new class shrinks in a thread of its own: its report's index, and the thread.
        let mut shrinking = Vec::new();
        // Results are judged in case order, whatever order the lanes finish them in.
        let mut waiting: BTreeMap<u64, pool::Ran> = BTreeMap::new();
        let mut next = 0u64;
        let mut judge = |ran: pool::Ran, sum: &mut Summary| {
            if sum.broken.is_some() {
                return;
            }
            sum.cases.push(ran.case);
            let seq = ran.seq.clone();
            for (at, finding) in judge_one(opts, ran, sum) {
                let began = Instant::now();
                let allowed = began + shrinker::allowance(opts.shrink_time, seconds);
                let job = shrinker::Job {
                    opts,
                    rules: &rules,
                    seq: seq.clone(),
                    case: sum.findings[at].case,
                    finding,
                    ends: (budget_end.map_or(allowed, |e| e.min(allowed)), budget_end),
                    control: &control,
                };
                let counted = control.unshrunk.begin();
                shrinking.push((
                    at,
                    scope.spawn(move || {
                        let _counted = counted;
                        shrinker::shrink(job)
                    }),
                ));
            }
            if sum.broken.is_some() {
                control
                    .stop
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
        };
        for ran in rx {
            waiting.insert(ran.case, ran);
            while let Some(ran) = waiting.remove(&opts.shard.case(next)) {
                judge(ran, &mut sum);
                next += 1;
            }
        }
        // Cases after a lane that stopped early (the time budget) are judged all the same.
        for (_, ran) in std::mem::take(&mut waiting) {
            judge(ran, &mut sum);
        }
        for (at, h) in shrinking {
            let (report, took) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            let count = sum.findings[at].count;
            sum.findings[at] = Report { count, ..report };
            sum.shrinking += took;
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    sum.interrupted = opts.cancel.halted();
    sum.elapsed = started.elapsed();
    sum
}

/// Counts one sequence's runs and its findings: a new class gets a report (unshrunk, as found)
/// and is returned with that report's index, to be shrunk.
fn judge_one(opts: &Options, ran: pool::Ran, sum: &mut Summary) -> Vec<(usize, Finding)> {
    let case = ran.case;
    let found = evaluate(opts, ran.subject, ran.reference, case, sum);
    let mut new = Vec::new();
    for f in found {
        if let Some(e) = opts.allowlist.allows(&f) {
            let slot = sum
                .suppressed
                .entry(f.class.to_string())
                .or_insert((0, e.reason.clone()));
            slot.0 += 1;
            continue;
        }
        if let Some(r) = sum.findings.iter_mut().find(|r| r.finding.class == f.class) {
            r.count += 1;
            continue;
        }
        if opts.progress {
            eprintln!(
                "fuzz: case {case}: new finding {}: {}",
                f.class,
                first_line(&f.detail)
            );
        }
        new.push((sum.findings.len(), f.clone()));
        sum.findings.push(as_found(f, case, &ran.seq));
    }
    new
}

/// The report of a class as found, before its shrinking.
fn as_found(finding: Finding, case: u64, seq: &Sequence) -> Report {
    Report {
        finding,
        count: 1,
        case,
        ops: (seq.ops.len(), seq.ops.len()),
        reproduced: false,
        out_of_time: false,
        sequence: seq.clone(),
        trace: None,
        trace_note: None,
        replay: None,
        write_error: None,
    }
}

/// Counts one sequence's runs (a run the budget cut short is not counted, and its findings are
/// only those seen before the cut) and returns its findings.
fn evaluate(
    opts: &Options,
    subject: exec::RunResult,
    reference: Option<exec::RunResult>,
    case: u64,
    sum: &mut Summary,
) -> Vec<Finding> {
    let first = sum.sequences == 0;
    if let Some(c) = &subject.cut {
        if sum.cut.is_none() {
            sum.cut = Some(format!("case {case}: {c}"));
        }
    } else {
        sum.sequences += 1;
    }
    sum.processes += u64::from(subject.fresh);
    sum.frames_in += subject.observed.frames_in as u64;
    sum.frames_out += subject.observed.frames_out as u64;
    if let Some(b) = subject.broken {
        sum.broken = Some(b);
        return Vec::new();
    }
    if first && subject.observed.frames_out == 0 {
        if let Some(f) = (subject.findings.iter()).find(|f| f.class == FindingClass::ExitEarly) {
            sum.broken = Some(format!(
                "the runtime `{}` ended without writing anything: {}",
                opts.subject.cmd, f.detail
            ));
            return Vec::new();
        }
    }
    findings_of(subject, reference, &opts.allowlist)
}

/// Every finding of a run: the subject's own, the reference's (as `reference:` classes), and the
/// differences the subject's findings do not already account for.
pub(super) fn findings_of(
    subject: exec::RunResult,
    reference: Option<exec::RunResult>,
    allowlist: &Allowlist,
) -> Vec<Finding> {
    let mut out = subject.findings;
    if let Some(r) = reference {
        // The reference runtime broke a rule itself: a bug on our side.
        out.extend(r.findings.iter().map(|f| Finding {
            class: FindingClass::Reference(Box::new(f.class.clone())),
            detail: f.detail.clone(),
        }));
        let complete = !subject.fatal && subject.cut.is_none() && r.cut.is_none();
        if complete && r.findings.is_empty() && r.broken.is_none() {
            let explained = |f: &Finding| allowlist.allows(f).is_some();
            out.extend(diff::compare_explained(
                &subject.observed,
                &r.observed,
                &explained,
            ));
        }
    }
    out
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
