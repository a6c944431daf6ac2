//! A scenario: the peer's layers, the operations the driver is given, the judge of the checks it
//! decides (sans-IO: an [`Observation`] in, verdicts out; the judges are in `judges.rs`,
//! `runs.rs` and the modules of their layers), its suite and whether app mode runs it. Every
//! scenario is in one table, [`SCENARIOS`] (`table.rs`).

use super::after::After;
use super::driver::{Op, Outcome};
use super::layers::Stack;
use super::log::PeerLog;
use super::run::Suite;
use crate::check::CheckId;
use crate::suite::verdict::Verdict;
use std::time::Duration;

pub use super::table::SCENARIOS;

/// What a scenario saw: every peer's log and each operation's outcome (those sent).
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// The peers, in launch order.
    pub peers: Vec<PeerLog>,
    /// Each operation sent, with its outcome and the time it took.
    pub ops: Vec<(Op, Outcome, Duration)>,
    /// The client's resident size (time, bytes), sampled in the scenarios that judge it.
    pub rss: Vec<(Duration, u64)>,
}

/// One scenario.
pub struct Scenario {
    /// Its name (`--scenario`).
    pub name: &'static str,
    /// The checks it decides.
    pub checks: &'static [CheckId],
    /// The peer's layers.
    pub layers: fn() -> Stack,
    /// The operations, in order (the kit stops at the first that does not answer).
    pub ops: fn() -> Vec<Op>,
    /// Its verdicts, one per check of [`Scenario::checks`].
    pub judge: fn(&Observation) -> Vec<Verdict>,
    /// What the client must do in the runs that follow the fault ([`super::after`]), judged
    /// with the scenario's first check.
    pub after: After,
    /// Its suite: [`Suite::Contract`] or [`Suite::Robustness`].
    pub suite: Suite,
    /// How app mode judges it, or why it leaves it out.
    pub app: App,
}

/// Whether app mode runs a scenario (docs/CLIENT-DRIVERS.md, "App mode"). The app is given the
/// prompt of the scenario's run ([`Scenario::prompt`]) and, for a bounded run, its bound.
#[derive(Clone, Copy)]
pub enum App {
    /// It runs it, judged by the scenario's own [`Scenario::judge`], the app's run read as a
    /// driver's (the reply it printed, its exit: `app_judge::as_run`).
    AsRun,
    /// Left out: why an app, which runs one prompt, cannot meet the scenario.
    LeftOut(&'static str),
}

impl Scenario {
    /// The operations the driver is given: the scenario's own, then the follow-up runs before
    /// its close.
    pub fn all_ops(&self) -> Vec<Op> {
        super::after::with_runs((self.ops)(), self.after)
    }

    /// The prompt of its (first) run: what an app is given.
    pub fn prompt(&self) -> Option<String> {
        (self.ops)().into_iter().find_map(|op| match op {
            Op::Run { text, .. } | Op::RunBounded { text, .. } => Some(text),
            _ => None,
        })
    }

    /// The bound its run is given, if it is bounded (an app gets it as
    /// `DSH_CONFORMANCE_RUN_TIMEOUT_MS`).
    pub fn run_bound_ms(&self) -> Option<u64> {
        (self.ops)().into_iter().find_map(|op| match op {
            Op::RunBounded { timeout_ms, .. } => Some(timeout_ms),
            _ => None,
        })
    }

    /// Whether app mode runs it.
    pub fn in_app_mode(&self) -> bool {
        !matches!(self.app, App::LeftOut(_))
    }

    /// Its verdicts on `o`: the judge's, the first with the follow-up runs' problems.
    pub fn verdicts(&self, o: &Observation) -> Vec<Verdict> {
        let mut v = (self.judge)(o);
        let problems = super::after::problems(o, self.after);
        if let Some(first) = v.first_mut() {
            *first = super::after::merge(std::mem::replace(first, Verdict::Pass), &problems);
        }
        v
    }
}

pub(super) fn run(session: &str, text: &str) -> Op {
    Op::Run {
        session: session.into(),
        text: text.into(),
    }
}

/// The long-lines scenario's operations (its growth probes run them too: `growth.rs`).
pub(super) fn long_lines_ops() -> Vec<Op> {
    vec![Op::Start, run("s1", "reply: after a long line"), Op::Close]
}
