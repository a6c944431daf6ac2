//! Replaying traces against any runtime executable: spawn it with a fresh cwd and DSH_HOME, drive
//! the [`Matcher`] with real I/O and a real clock, and report.
//!
//! ```no_run
//! use dsh_conformance::runner::{replay, CommandSpec, Options};
//! use dsh_conformance::trace::Trace;
//! let trace = Trace::load("fixtures/frame/unknown-method.trace").unwrap();
//! let cmd = CommandSpec::new("./my-runtime").arg("--profile").arg("sdk");
//! let report = replay(&trace, &cmd, &Options::default());
//! assert!(report.passed(), "{report}");
//! ```

pub mod cancel;
pub mod child;
pub mod cleanup;
mod command;
mod dirs;
mod drive;
pub mod flood;
mod mark;
pub mod record;
pub mod tap;
pub mod warm;
pub mod wire_log;

pub use cancel::{Cancel, Halt};
pub use child::{lossless_display, CaseDirs, Child, CommandSpec, Event};
pub use flood::{Flood, FloodScope, StdoutLimit};
pub use record::{record, RecordOptions, Recording};
pub use warm::{Unsettled, Warm};
pub use wire_log::{Stamp, Wire, WireLog};

use crate::trace::matcher::{ExitInfo, Failure, FailureKind, Matcher, Stats};
use crate::trace::pattern::{Env, Seqs};
use crate::trace::Trace;
use crate::wire::output::Output;
use drive::{drive, first_flood, watch_for_flood, End};
use std::time::{Duration, Instant};

/// Replay settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Default deadline of each expectation (a trace's `# timeout:` wins).
    pub frame_timeout: Duration,
    /// Bound on a whole case.
    pub case_timeout: Duration,
    /// Longest stdout line accepted, in bytes.
    pub max_line: usize,
    /// Extra environment for the runtime.
    pub env: Vec<(String, String)>,
    /// Keep the per-case directories (for debugging).
    pub keep_dirs: bool,
    /// Leave stream rules to the caller's rule engine ([`Matcher::set_tolerant`]).
    pub tolerant: bool,
    /// With `tolerant`, skip exact repeats of matched responses and notifications
    /// ([`Matcher::set_skip_repeats`]).
    pub skip_repeats: (bool, bool),
    /// Bounds on the runtime's stdout (clones share the run's bound).
    pub stdout: StdoutLimit,
    /// After a failure, how long stdout is still read (until it is quiet for a moment) to tell
    /// whether the runtime floods: the report then says so ([`CaseReport::flooded_after`]).
    /// Zero (the default): not read.
    pub watch_after_failure: Duration,
    /// The run's stop switch: when set, a running case kills its runtime and ends
    /// [`Outcome::Halted`] (clones share it).
    pub cancel: Cancel,
    /// A flood stops the whole run ([`Halt::Flooded`]) the moment it is seen: the first case to
    /// flood keeps its failure, and one that floods after it (the run's shared bound passed
    /// by a process that wrote little) ends [`Outcome::Halted`]. Off by default.
    pub flood_halts_run: bool,
    /// Evidence that ends a wait early: shown each stdout line, it says why the frames still
    /// awaited will not come (the case then fails at once with that reason), where a timeout
    /// would only say they did not.
    pub give_up: Option<GiveUp>,
}

/// A case's give-up rule ([`Options::give_up`]): each stdout line in; `Some(why)` when the line
/// shows that what the case still awaits will never come. A fresh one per case (it may keep state).
#[derive(Clone)]
pub struct GiveUp(pub std::sync::Arc<GiveUpFn>);

/// The function behind a [`GiveUp`].
pub type GiveUpFn = dyn Fn(&Output) -> Option<String> + Send + Sync;

impl std::fmt::Debug for GiveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GiveUp")
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            frame_timeout: crate::trace::matcher::DEFAULT_FRAME_TIMEOUT,
            case_timeout: Duration::from_secs(120),
            max_line: crate::wire::lines::DEFAULT_MAX_LINE,
            env: Vec::new(),
            keep_dirs: false,
            tolerant: false,
            skip_repeats: (true, true),
            stdout: StdoutLimit::default(),
            watch_after_failure: Duration::ZERO,
            flood_halts_run: false,
            cancel: Cancel::new(),
            give_up: None,
        }
    }
}

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every expectation was met.
    Pass,
    /// The runtime did something the trace does not allow.
    Fail(Box<Failure>),
    /// The case could not be run meaningfully: the command did not start, or it ended without
    /// writing anything while output was expected (the CLI maps this to exit 2).
    Broken(String),
    /// The run was stopped while the case ran ([`Options::cancel`]): no verdict.
    Halted(Halt),
}

/// What happened in one case.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// `# case:` name.
    pub case: String,
    /// Trace file.
    pub file: String,
    /// Verdict.
    pub outcome: Outcome,
    /// Last bytes of the runtime's stderr.
    pub stderr_tail: String,
    /// Total stderr bytes.
    pub stderr_len: usize,
    /// How the runtime ended (it is killed at the end of a case that does not expect an exit).
    pub exit: ExitInfo,
    /// Wall time of the case.
    pub wall: Duration,
    /// Frame counters.
    pub stats: Stats,
    /// What was written and read (for the suite's whole-run oracles).
    pub transcript: Transcript,
    /// The runtime flooded its stdout after the failure ([`Options::watch_after_failure`]).
    pub flooded_after: Option<Flood>,
    /// The last `{{seq}}` matched per session: where a case continuing this one starts.
    pub seqs: Seqs,
    /// The CPU time the runtime's process had used when the case ended ([`Child::cpu_time`]).
    pub cpu: Option<Duration>,
    /// Why the case stopped waiting before its deadline: its give-up rule's reason
    /// ([`Options::give_up`]), when evidence ended the wait.
    pub gave_up: Option<String>,
}

/// What was written to the runtime and what it wrote on stdout, bounded in size.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// Every byte written to the runtime's stdin, in order.
    pub sent: Vec<u8>,
    /// Every stdout line read, parsed once ([`Output`]: JS-trimmed text; non-UTF-8 and over-long
    /// lines as a `<…>` note).
    pub stdout: Vec<Output>,
    /// The bound was reached and later traffic was not recorded.
    pub truncated: bool,
    /// When the last [`STAMPS_KEPT`] writes and stdout lines happened, in order
    /// ([`Transcript::wire_log`], which reports only the last lines anyway): a ring, so a flood
    /// of lines costs no more than it did before the wire log existed.
    pub stamps: std::collections::VecDeque<Stamp>,
    /// Stamps the ring dropped (the oldest).
    pub stamps_dropped: usize,
    /// Bytes held so far (a running total: summing every line per line would be quadratic).
    used: usize,
}

use flood::LINE_OVERHEAD;

/// How many stamps a transcript keeps: enough for every wire log a report holds (its last 200
/// lines), whatever the writes in between.
pub const STAMPS_KEPT: usize = 4096;

/// Bytes a transcript keeps before it stops recording.
pub const TRANSCRIPT_BYTES: usize = 64 << 20;

impl Transcript {
    fn room(&mut self, n: usize) -> bool {
        if self.used + n > TRANSCRIPT_BYTES {
            self.truncated = true;
        }
        if !self.truncated {
            self.used += n;
        }
        !self.truncated
    }

    fn stamp(&mut self, s: Stamp) {
        if self.stamps.len() == STAMPS_KEPT {
            self.stamps.pop_front();
            self.stamps_dropped += 1;
        }
        self.stamps.push_back(s);
    }

    fn wrote(&mut self, b: &[u8], at: Duration) {
        if self.room(b.len()) {
            let from = self.sent.len();
            self.sent.extend_from_slice(b);
            let what = Wire::Sent {
                from,
                to: self.sent.len(),
            };
            self.stamp(Stamp { at, what });
        }
    }

    fn read(&mut self, line: Output, at: Duration) {
        // A stored line costs its text, its tape and the allocator's bookkeeping: counting only
        // the text let a flood of 2-byte lines take gigabytes under a 64 MiB bound.
        if self.room(line.weight() + LINE_OVERHEAD) {
            let what = Wire::Received(self.stdout.len());
            self.stdout.push(line);
            self.stamp(Stamp { at, what });
        }
    }
}

impl CaseReport {
    /// A report of a case that could not run, for `why`.
    pub fn broken(trace: &Trace, why: String) -> CaseReport {
        CaseReport {
            case: trace.meta.case.clone(),
            file: trace.file.clone(),
            outcome: Outcome::Broken(why),
            stderr_tail: String::new(),
            stderr_len: 0,
            exit: ExitInfo::Unknown,
            wall: Duration::ZERO,
            stats: Stats::default(),
            transcript: Transcript::default(),
            flooded_after: None,
            seqs: Seqs::new(),
            cpu: None,
            gave_up: None,
        }
    }

    /// Whether the case passed.
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Pass
    }

    /// The failure, if the case failed.
    pub fn failure(&self) -> Option<&Failure> {
        match &self.outcome {
            Outcome::Fail(f) => Some(f),
            _ => None,
        }
    }

    /// A one-line-per-fact rendering of the failure (empty on pass).
    pub fn message(&self) -> String {
        match &self.outcome {
            Outcome::Pass => String::new(),
            Outcome::Fail(f) => f.to_string(),
            Outcome::Broken(m) => m.clone(),
            Outcome::Halted(h) => format!("not finished: {h}"),
        }
    }
}

impl std::fmt::Display for CaseReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tag = match self.outcome {
            Outcome::Pass => "PASS",
            Outcome::Fail(_) => "FAIL",
            Outcome::Broken(_) => "ERROR",
            Outcome::Halted(_) => "STOPPED",
        };
        writeln!(
            f,
            "{tag} {} ({}) in {:.2}s",
            self.case,
            self.file,
            self.wall.as_secs_f64()
        )?;
        if !self.passed() {
            for l in self.message().lines() {
                writeln!(f, "  {l}")?;
            }
            if let Some(fl) = &self.flooded_after {
                writeln!(f, "  then the runtime {fl}")?;
            }
            if !self.stderr_tail.is_empty() {
                writeln!(f, "  stderr tail ({} bytes total):", self.stderr_len)?;
                let lines: Vec<&str> = self.stderr_tail.lines().collect();
                for l in &lines[lines.len().saturating_sub(20)..] {
                    writeln!(f, "    {}", crate::trace::explain::clip(l, 300))?;
                }
            }
        }
        Ok(())
    }
}

/// Replays one trace against `cmd` in fresh directories.
pub fn replay(trace: &Trace, cmd: &CommandSpec, opts: &Options) -> CaseReport {
    match CaseDirs::new(opts.keep_dirs) {
        Ok(d) => replay_in(trace, cmd, opts, &d, &Seqs::new()),
        Err(e) => CaseReport::broken(trace, format!("cannot create the case directories: {e}")),
    }
}

/// Replays one trace in given directories: cases that continue another process's work (resume
/// across processes) share one cwd and DSH_HOME, and go on from its last `{{seq}}` per session
/// (`seqs`, [`CaseReport::seqs`]).
pub fn replay_in(
    trace: &Trace,
    cmd: &CommandSpec,
    opts: &Options,
    dirs: &CaseDirs,
    seqs: &Seqs,
) -> CaseReport {
    // The trace's own `# env:` wins: a case may need a variable unset or pointed elsewhere.
    let mut env = opts.env.clone();
    env.extend(trace.meta.env.iter().cloned());
    match Child::spawn(cmd, dirs, &env, opts.max_line, &opts.stdout) {
        Ok(child) => replay_child(trace, cmd, opts, dirs, seqs, child),
        Err(e) => CaseReport::broken(trace, format!("cannot start `{cmd}`: {e}")),
    }
}

/// Replays one trace against `child`, a process of `cmd` already started in `dirs` (with the
/// environment the case needs: [`replay_in`] starts one as the case begins; the suite may start
/// one ahead, while earlier cases run, so that a slow boot overlaps them).
pub fn replay_child(
    trace: &Trace,
    cmd: &CommandSpec,
    opts: &Options,
    dirs: &CaseDirs,
    seqs: &Seqs,
    mut child: Child,
) -> CaseReport {
    let started = Instant::now();
    let (mut report, m, end) = play(trace, opts, dirs, seqs, &mut child, started);
    if matches!(end, End::Done) && m.failure().is_some() && !opts.watch_after_failure.is_zero() {
        report.flooded_after = watch_for_flood(&mut child, opts.watch_after_failure);
    }
    report.cpu = child.cpu_time();
    child.kill();
    report.exit = child.try_exit().unwrap_or(ExitInfo::Unknown);
    conclude(&mut report, &m, end, &child, cmd, started);
    report
}

/// Runs `trace` on `child` until its matcher is done (or the runtime floods, the run stops, the
/// frames awaited will not come): the report so far, the matcher, and how the loop ended. The
/// process is left as it is.
fn play(
    trace: &Trace,
    opts: &Options,
    dirs: &CaseDirs,
    seqs: &Seqs,
    child: &mut Child,
    started: Instant,
) -> (CaseReport, Matcher, End) {
    let mut report = CaseReport::broken(trace, String::new());
    report.outcome = Outcome::Pass;
    let penv = Env {
        cwd: dirs.cwd.to_string_lossy().into_owned(),
        home: dirs.home.to_string_lossy().into_owned(),
    };
    let mut m = Matcher::new(trace, penv, opts.frame_timeout, opts.case_timeout);
    m.set_tolerant(opts.tolerant);
    m.set_skip_repeats(opts.skip_repeats.0, opts.skip_repeats.1);
    m.continue_seqs(seqs);
    let end = first_flood(
        drive(
            &mut m,
            child,
            started,
            &mut report.transcript,
            &opts.cancel,
            opts.give_up.as_ref(),
        ),
        opts,
    );
    (report, m, end)
}

/// Fills in the rest of `report` once the loop ended (`end`) and the process's exit, if any, is
/// in it: stderr, counters, and the outcome.
fn conclude(
    report: &mut CaseReport,
    m: &Matcher,
    end: End,
    child: &Child,
    cmd: &CommandSpec,
    started: Instant,
) {
    let (tail, len) = child.stderr_tail();
    report.stderr_tail = tail;
    report.stderr_len = len;
    report.stats = m.stats;
    report.seqs.clone_from(&m.bindings().seqs);
    report.wall = started.elapsed();
    let recent = |t: &Transcript| {
        let n = t.stdout.len();
        (t.stdout[n.saturating_sub(3)..].iter())
            .map(|o| o.text().to_owned())
            .collect()
    };
    report.outcome = match (end, m.failure()) {
        (End::Halted(h), _) => Outcome::Halted(h),
        (End::GaveUp(why), _) => {
            report.gave_up = Some(why.clone());
            let mut failure = Failure::new(FailureKind::Missing, why);
            let n = report.transcript.stdout.len();
            failure.stdout_line = n.checked_sub(1).map(|i| report.transcript.stdout[i].line);
            failure.recent = recent(&report.transcript);
            Outcome::Fail(Box::new(failure))
        }
        (End::Flooded(f), _) => {
            let mut failure = Failure::new(FailureKind::Flooded, f.to_string());
            failure.stdout_line = Some(f.lines);
            failure.recent = recent(&report.transcript);
            Outcome::Fail(Box::new(failure))
        }
        (End::Done, None) => Outcome::Pass,
        // Dying before writing anything while a frame was expected is a harness-level error
        // (wrong command, missing setup), not a protocol finding; a wrong exit code stays a finding.
        (End::Done, Some(f))
            if m.stats.lines == 0
                && f.kind == FailureKind::Exit
                && f.expected.as_deref().is_some_and(|e| e.starts_with("<<")) =>
        {
            Outcome::Broken(format!(
                "`{cmd}` ended ({}) without writing anything on stdout; {}",
                report.exit, f.reason
            ))
        }
        (End::Done, Some(f)) => Outcome::Fail(Box::new(f.clone())),
    };
}

/// Replays traces in order. A trace with `# continues: <case>` runs in the directories of that
/// earlier case (which stay alive until the end); one that names a case not run before is an error.
pub fn replay_all(traces: &[Trace], cmd: &CommandSpec, opts: &Options) -> Vec<CaseReport> {
    use std::collections::HashMap;
    let wanted: Vec<&str> = traces
        .iter()
        .filter_map(|t| t.meta.continues.as_deref())
        .collect();
    let mut kept: HashMap<String, (CaseDirs, Seqs)> = HashMap::new();
    let mut out = Vec::new();
    for t in traces {
        let r = match &t.meta.continues {
            Some(prev) => match kept.get(prev) {
                Some((d, seqs)) => replay_in(t, cmd, opts, d, seqs),
                None => CaseReport::broken(
                    t,
                    format!("it continues case `{prev}`, which did not run before it"),
                ),
            },
            None if wanted.contains(&t.meta.case.as_str()) => match CaseDirs::new(opts.keep_dirs) {
                Ok(d) => {
                    let r = replay_in(t, cmd, opts, &d, &Seqs::new());
                    kept.insert(t.meta.case.clone(), (d, r.seqs.clone()));
                    r
                }
                Err(_) => replay(t, cmd, opts),
            },
            None => replay(t, cmd, opts),
        };
        out.push(r);
    }
    out
}
