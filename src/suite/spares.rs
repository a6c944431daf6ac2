//! Runtime processes started ahead of the cases that will use them (`--prespawn`), so that a
//! runtime's boot overlaps the cases before it instead of adding to each one.
//!
//! A spare is exactly the process its case would start: a fresh cwd and DSH_HOME, the run's
//! environment and a stub key of its own; it is only started earlier, and never given to a case
//! that needs anything else (a `# env:` of its own, another case's directories). The kit writes
//! nothing to a spare before its case begins, so the runtime sees what it would have seen from a
//! kit that was slow to write its first line. Each worker keeps its own spares (a runtime dies
//! with the thread that started it: `runner::Child::spawn`).

use super::options::{runner_opts, Options, StubLog};
use super::preflight::Boot;
use crate::runner::{CaseDirs, Child, CommandSpec};
use crate::trace::Trace;
use std::collections::VecDeque;
use std::time::Duration;

/// A started runtime waiting for its case.
pub(super) struct Spare {
    /// Dropped after its directories' owner is done with them (field order: the process first).
    pub child: Child,
    pub dirs: CaseDirs,
    /// The stub key's tag of this process ([`StubLog::tag_env`]).
    pub tag: String,
}

/// One worker's spares, oldest (furthest booted) first.
pub(super) struct Spares<'a> {
    cmd: &'a CommandSpec,
    opts: &'a Options,
    depth: usize,
    queue: VecDeque<Spare>,
}

impl<'a> Spares<'a> {
    /// Up to `depth` spares of `cmd`; 0 keeps none (every case starts its own process).
    pub(super) fn new(cmd: &'a CommandSpec, opts: &'a Options, depth: usize) -> Self {
        Spares {
            cmd,
            opts,
            depth,
            queue: VecDeque::new(),
        }
    }

    /// Whether a case of `trace` may run on a spare: it needs only a fresh process.
    pub(super) fn fits(trace: &Trace) -> bool {
        trace.meta.env.is_empty() && trace.meta.continues.is_none()
    }

    /// The oldest spare, for a case that [`Spares::fits`]; the queue is topped up after it.
    pub(super) fn take(&mut self) -> Option<Spare> {
        self.fill();
        let spare = self.queue.pop_front();
        self.fill();
        spare
    }

    /// Starts spares until there are `depth` (none once the run is stopping).
    pub(super) fn fill(&mut self) {
        while self.queue.len() < self.depth && self.opts.cancel.halted().is_none() {
            match self.start() {
                Some(s) => self.queue.push_back(s),
                // The case will start its own, and report why it cannot.
                None => return,
            }
        }
    }

    fn start(&self) -> Option<Spare> {
        start(self.cmd, self.opts, "case-")
    }
}

/// A fresh process of `cmd` in fresh directories, as a case would start it, with a stub key
/// tagged `<what><n>` ([`StubLog::new_tag`]). `None` when it cannot start.
pub(super) fn start(cmd: &CommandSpec, opts: &Options, what: &str) -> Option<Spare> {
    let ro = runner_opts(opts);
    let mut env = ro.env.clone();
    let tag = StubLog::new_tag(what);
    if opts.model_stub.is_some() {
        StubLog::tag_env(&mut env, &tag);
    }
    let dirs = CaseDirs::new(false).ok()?;
    let child = Child::spawn(cmd, &dirs, &env, ro.max_line, &ro.stdout).ok()?;
    Some(Spare { child, dirs, tag })
}

/// The default number of spares per worker for a runtime whose start cost `boot` (the preflight's
/// `initialize`): none for a quick boot (nothing to gain), nor for a boot that keeps a core busy
/// most of its time (spares booting beside the cases would only slow them: the cores are the
/// bound, not the waiting); else one per 600 ms of boot, at most 8 (each is a live process).
pub(super) fn default_depth(boot: Boot) -> usize {
    let busy = boot.cpu.is_some_and(|cpu| cpu * 2 >= boot.wall);
    if boot.wall < Duration::from_millis(300) || busy {
        return 0;
    }
    (boot.wall.as_millis() / 600 + 1).min(8) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(ms: u64) -> Boot {
        let wall = Duration::from_millis(ms);
        Boot {
            wall,
            cpu: Some(wall / 10),
        }
    }

    #[test]
    fn quick_boots_get_no_spares_and_slow_idle_ones_up_to_eight() {
        assert_eq!(default_depth(idle(40)), 0);
        assert_eq!(default_depth(idle(400)), 1);
        assert_eq!(default_depth(idle(1300)), 3);
        assert_eq!(default_depth(idle(5000)), 8);
        assert_eq!(default_depth(idle(60_000)), 8);
        let unknown = Boot {
            cpu: None,
            ..idle(1300)
        };
        assert_eq!(default_depth(unknown), 3);
    }

    #[test]
    fn a_boot_that_keeps_a_core_busy_gets_no_spares() {
        let busy = Boot {
            wall: Duration::from_millis(1300),
            cpu: Some(Duration::from_millis(1500)),
        };
        assert_eq!(default_depth(busy), 0);
    }
}
