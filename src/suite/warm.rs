//! A job's runtime processes: the spares started ahead ([`super::spares`]) and the shared warm
//! process its shareable cases run on ([`super::share`]).

use super::options::Options;
use super::share::{self, Eligible, RanIn, Sharing, Used, MAX_CASES_PER_PROCESS};
use super::spares::{self, Spares};
use crate::runner::{self, CaseReport, CommandSpec, Unsettled, Warm};
use crate::trace::Trace;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// A job's processes.
pub(super) struct Procs<'a> {
    /// Started ahead, each for one case.
    pub spares: Spares<'a>,
    /// The shared process, when the run shares.
    pub shared: Shared<'a>,
}

/// The barrier requests a shared process left unanswered before the job stops sharing (a
/// runtime that does not answer unknown methods would cost a wait per case).
const MISSES_BEFORE_FRESH: usize = 2;

/// Shared runs in a row that did not pass cleanly before the job stops sharing: a runtime that
/// breaks a rule judged over every transcript (a doubled response, spaced output) fails every
/// shared run, and each then costs a fresh run too.
const UNCLEAN_BEFORE_FRESH: usize = 4;

/// A job's shared process, and whether the job still shares.
pub(super) struct Shared<'a> {
    cmd: &'a CommandSpec,
    opts: &'a Options,
    /// The shareable cases ([`share::shareable`]), while the job shares.
    eligible: Option<&'a Eligible>,
    /// The process, while there is one.
    live: Option<Live>,
    misses: usize,
    /// Shared runs in a row that did not pass cleanly.
    unclean: usize,
    /// How long a process may take to settle between cases ([`settle_bound`]).
    settle: Duration,
}

/// A shared process.
struct Live {
    warm: Warm,
    /// Its number in the run.
    process: u64,
    /// Its stub key's tag.
    tag: String,
    /// The names its cases and lines used.
    used: Used,
}

/// A case's run on a shared process.
pub(super) struct SharedRun {
    /// The case's trace as it ran: renamed ([`share::renamed`]) or as written
    /// ([`Sharing::Literal`]).
    pub trace: Trace,
    /// Its report: the transcript starts with the process's initialize exchange.
    pub report: CaseReport,
    /// The stub key's tag of the process (its requests, this case's among them).
    pub tag: String,
    /// The shared process's number.
    pub process: u64,
    /// Which of the process's cases it was.
    nth: usize,
    /// Its prefix: of its names when renamed, of its barrier either way.
    prefix: String,
    /// Whether its lines named only its own ids and sessions ([`share::only_own_lines`],
    /// [`Used::own_lines`]).
    pub own_lines: bool,
}

impl SharedRun {
    /// Where it ran.
    pub fn ran(&self) -> RanIn {
        RanIn::Shared {
            process: self.process,
            nth: self.nth,
        }
    }

    /// The sessions its `session/prompt` requests named.
    fn prompted(&self) -> Vec<String> {
        let sent = crate::rules::transcript::sent_session_requests(&self.report.transcript.sent);
        (sent.into_iter())
            .filter(|(_, method, _)| method == "session/prompt")
            .filter_map(|(_, _, session)| session)
            .collect()
    }
}

/// Numbers the shared processes of the kit's process.
static PROCESSES: AtomicU64 = AtomicU64::new(1);

impl<'a> Shared<'a> {
    /// Sharing `eligible`'s cases, or none, on a runtime whose boot took `boot`.
    pub(super) fn new(
        cmd: &'a CommandSpec,
        opts: &'a Options,
        eligible: Option<&'a Eligible>,
        boot: Duration,
    ) -> Self {
        Shared {
            settle: settle_bound(boot, opts.frame_timeout),
            cmd,
            opts,
            eligible,
            live: None,
            misses: 0,
            unclean: 0,
        }
    }

    /// Runs a shareable case, whose trace as written is `original`, on the shared process
    /// (started and initialized first when there is none, on a spare when one is ready). `None`:
    /// not shared (sharing is off, the case's trace does not parse renamed, a name it keeps as
    /// written was used on the process, or no process could be made ready); run it fresh.
    pub(super) fn run(
        &mut self,
        case: &super::cases::CheckCase,
        original: &Trace,
        ro: &runner::Options,
        spares: &mut Spares,
    ) -> Option<SharedRun> {
        let sharing = *self.eligible?.get(case.file)?;
        if self.opts.cancel.halted().is_some() {
            return None;
        }
        let nth = self.live.as_ref().map_or(1, |l| l.warm.served + 1);
        let prefix = format!("k{}-", nth);
        let trace = match sharing {
            Sharing::Renamed => {
                let names = share::names(original);
                let mut t =
                    (case.trace_renamed(self.opts.strict_upstream, &names, &prefix)).ok()?;
                t.frames_only = false;
                super::judge::scale_deadlines(&mut t, self.opts.frame_timeout);
                t
            }
            Sharing::Literal => original.clone(),
        };
        if self.live.is_none() {
            self.live = Some(self.open(&trace, ro, spares)?);
        }
        let live = self.live.as_mut()?;
        // The initialize exchange was the process's: the case goes on from its third step.
        let mut body = trace.clone();
        body.steps.drain(..2);
        if sharing == Sharing::Literal && !live.used.free(&body) {
            return None;
        }
        let head = live.warm.head_lines();
        let report = live.warm.run(&body, self.cmd, &shared_opts(ro));
        let out = &report.transcript.stdout;
        let own_lines = match sharing {
            Sharing::Renamed => share::only_own_lines(out, head, &prefix),
            Sharing::Literal => live.used.own_lines(out, head),
        };
        live.used.record(&body, out, head);
        Some(SharedRun {
            trace,
            tag: live.tag.clone(),
            process: live.process,
            nth: live.warm.served,
            prefix,
            own_lines,
            report,
        })
    }

    /// After a shared run: a clean one waits for the process to settle before the next case; any
    /// other ends the process (the next shareable case starts another).
    pub(super) fn after(&mut self, run: &SharedRun, clean: bool) {
        self.unclean = if clean { 0 } else { self.unclean + 1 };
        if self.unclean >= UNCLEAN_BEFORE_FRESH {
            self.eligible = None;
        }
        let Some(Live { warm, .. }) = self.live.as_mut() else {
            return;
        };
        if !clean || !warm.fit(&run.report) || warm.served >= MAX_CASES_PER_PROCESS {
            self.live = None;
            return;
        }
        let barrier = format!("{}barrier", run.prefix);
        match warm.settle(
            &run.report.transcript,
            run.prompted(),
            &barrier,
            self.settle,
        ) {
            Ok(()) => {}
            Err(why) => {
                if why == Unsettled::Unanswered {
                    self.misses += 1;
                    if self.misses >= MISSES_BEFORE_FRESH {
                        self.eligible = None;
                    }
                }
                self.live = None;
            }
        }
    }

    /// A ready process: a spare or a new one, initialized by the head of `trace`.
    fn open(&mut self, trace: &Trace, ro: &runner::Options, spares: &mut Spares) -> Option<Live> {
        let s = spares
            .take()
            .or_else(|| spares::start(self.cmd, self.opts, "shared-"))?;
        let (child, dirs, tag) = (s.child, s.dirs, s.tag);
        let mut head = trace.clone();
        head.steps.truncate(2);
        head.ignores.clear();
        match Warm::open(&head, self.cmd, &shared_opts(ro), dirs, child) {
            Ok(warm) => {
                let mut used = Used::default();
                used.record(&head, &[], 0);
                let process = PROCESSES.fetch_add(1, Relaxed);
                Some(Live {
                    warm,
                    process,
                    tag,
                    used,
                })
            }
            Err(_) => {
                // It will not initialize here: the case runs fresh and says why; so do the rest.
                self.eligible = None;
                None
            }
        }
    }
}

/// How long a shared process may take to settle between cases: about a boot (a process that
/// takes longer is better replaced by a new one: its boot is all sharing saves), at least 250 ms
/// and at most the frame timeout.
fn settle_bound(boot: Duration, frame_timeout: Duration) -> Duration {
    (boot * 2).clamp(
        Duration::from_millis(250),
        frame_timeout.max(Duration::from_millis(250)),
    )
}

/// A shared run's runner options: a flood there does not stop the run (the case runs again on a
/// fresh process, whose flood does).
fn shared_opts(ro: &runner::Options) -> runner::Options {
    runner::Options {
        flood_halts_run: false,
        watch_after_failure: Duration::ZERO,
        ..ro.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_settles_within_about_a_boot_bounded_by_the_frame_timeout() {
        let ms = Duration::from_millis;
        let ten = Duration::from_secs(10);
        assert_eq!(settle_bound(ms(3), ten), ms(250));
        assert_eq!(settle_bound(ms(1200), ten), ms(2400));
        assert_eq!(settle_bound(ms(13_000), ten), ten);
        assert_eq!(settle_bound(ms(1200), ms(100)), ms(250));
    }
}
