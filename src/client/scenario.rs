//! The scenarios: for each, the peer's layers, the operations the driver is given, and the
//! judge of the checks it decides (sans-IO: an [`Observation`] in, verdicts out; the judges are
//! in `judges.rs`, `runs.rs` and the modules of their layers).

use super::after::After;
use super::driver::{Op, Outcome};
use super::judges::{
    completes, drains_stderr, exit_on_request, forward_compatible, graceful_shutdown,
    ids_out_of_order, runtime_exit, typed_errors, waits_for_initialize,
};
use super::layers::{self, Stack};
use super::log::PeerLog;
use super::{backlog, closing, grandchild, runs, turns};
use crate::check::CheckId;
use crate::suite::verdict::Verdict;
use std::time::Duration;

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
}

impl Scenario {
    /// The operations the driver is given: the scenario's own, then the follow-up runs before
    /// its close.
    pub fn all_ops(&self) -> Vec<Op> {
        super::after::with_runs((self.ops)(), self.after)
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

/// Every scenario, in report order of their checks (a check several scenarios decide gets the
/// worst of their verdicts).
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "handshake",
        checks: &[
            CheckId::ClientWaitsForInitialize,
            CheckId::ClientGracefulShutdown,
        ],
        layers: || Stack(vec![Box::new(layers::SlowInit::new(1500))]),
        ops: || vec![Op::Start, run("s1", "reply: hello"), Op::Close],
        judge: |o| vec![waits_for_initialize(o), graceful_shutdown(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "out-of-order",
        checks: &[CheckId::ClientIdsOutOfOrder],
        layers: || Stack(vec![Box::new(layers::Reorder::new(3000))]),
        ops: || {
            let get = |s: &str| Op::CwdGet { session: s.into() };
            vec![
                Op::Start,
                Op::CwdSet {
                    session: "s1".into(),
                    path: "a".into(),
                },
                Op::CwdSet {
                    session: "s2".into(),
                    path: "b".into(),
                },
                Op::Concurrent(vec![get("s1"), get("s2")]),
                Op::Close,
            ]
        },
        judge: |o| vec![ids_out_of_order(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "foreign-sessions",
        checks: &[CheckId::ClientRootIdle],
        layers: || Stack(vec![Box::new(layers::Foreign::default())]),
        ops: || vec![Op::Start, run("s1", "reply: the root's reply"), Op::Close],
        judge: |o| {
            vec![completes(
                o,
                1,
                "the root's reply",
                "a turn of another session was interleaved",
            )]
        },
        after: After::Recover,
    },
    Scenario {
        name: "unknown-events",
        checks: &[CheckId::ClientForwardCompatible],
        layers: || Stack(vec![Box::new(layers::UnknownEvents::default())]),
        ops: || vec![Op::Start, run("s1", "reply: still here"), Op::Close],
        judge: |o| vec![forward_compatible(o)],
        after: After::Recover,
    },
    Scenario {
        name: "long-lines",
        checks: &[CheckId::ClientLongLines, CheckId::ClientLineMemory],
        layers: || Stack(vec![Box::new(layers::LongLines { bytes: 48 << 20 })]),
        ops: long_lines_ops,
        judge: |o| {
            let read = completes(
                o,
                1,
                "after a long line",
                "the reply's frame was a 48 MiB line",
            );
            let memory = super::line_memory::judge(&o.peers, &o.rss, &read);
            vec![read, memory]
        },
        after: After::Nothing,
    },
    Scenario {
        name: "backlog",
        checks: &[CheckId::ClientBoundedBacklog],
        layers: || Stack(vec![Box::new(backlog::Backlog::default())]),
        ops: || vec![Op::Start, run("s1", backlog::PROMPT), Op::Close],
        judge: |o| vec![backlog::bounded_backlog(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "exit-mid-turn",
        checks: &[CheckId::ClientRuntimeExit],
        layers: || Stack(vec![Box::new(layers::ExitMidTurn::default())]),
        ops: || vec![Op::Start, run("s1", "reply: never finished"), Op::Close],
        judge: |o| vec![runtime_exit(o)],
        // Not yet: after an exit the official Python SDK's next run hung in 2 of
        // about 30 runs on a loaded machine, never alone, for a cause not found.
        after: After::Nothing,
    },
    Scenario {
        name: "exit-on-request",
        checks: &[CheckId::ClientRuntimeExit],
        layers: || Stack(vec![Box::new(layers::ExitOnRequest::default())]),
        ops: || {
            let get = Op::CwdGet {
                session: "s1".into(),
            };
            vec![Op::Start, get, Op::Close]
        },
        judge: |o| vec![exit_on_request(o)],
        // Not yet: after an exit the official Python SDK's next run hung in 2 of
        // about 30 runs on a loaded machine, never alone, for a cause not found.
        after: After::Nothing,
    },
    Scenario {
        name: "stderr-flood",
        checks: &[CheckId::ClientDrainsStderr],
        layers: || Stack(vec![Box::new(layers::StderrFlood { bytes: 256 * 1024 })]),
        ops: || vec![Op::Start, run("s1", "reply: after much stderr"), Op::Close],
        judge: |o| vec![drains_stderr(o)],
        after: After::Recover,
    },
    Scenario {
        name: "typed-errors",
        checks: &[CheckId::ClientTypedErrors],
        layers: Stack::default,
        ops: || {
            vec![
                Op::Start,
                Op::Resume {
                    session: "kit-no-such-session".into(),
                },
                Op::Close,
            ]
        },
        judge: |o| vec![typed_errors(o)],
        after: After::Recover,
    },
    Scenario {
        name: "receipts",
        checks: &[CheckId::ClientReceiptCorrelation],
        layers: || Stack(vec![Box::new(turns::LateTail::default())]),
        ops: runs::receipts_ops,
        judge: |o| vec![runs::receipt_correlation(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "subagent-trees",
        checks: &[CheckId::ClientSubagentTrees],
        layers: || Stack(vec![Box::new(turns::ChildSeq::default())]),
        ops: || vec![Op::Start, run("s1", runs::SUBAGENT_PROMPT), Op::Close],
        judge: |o| vec![runs::subagent_trees(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "grandchild",
        checks: &[CheckId::ClientSubagentTrees],
        layers: || Stack(vec![Box::new(grandchild::Grandchild::default())]),
        ops: || vec![Op::Start, run("s1", runs::SUBAGENT_PROMPT), Op::Close],
        judge: |o| vec![runs::descendant_subagents(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "chatty-sessions",
        checks: &[CheckId::ClientChattySessions],
        layers: || Stack(vec![Box::new(runs::CHATTY)]),
        ops: || vec![Op::Start, run("s1", runs::CHATTY_PROMPT), Op::Close],
        judge: |o| vec![runs::chatty_sessions(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "idle-never-comes",
        checks: &[CheckId::ClientIdleNeverComes],
        layers: || Stack(vec![Box::new(turns::NoIdle::default())]),
        ops: runs::no_idle_ops,
        judge: |o| vec![runs::idle_never_comes(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "slow-shutdown",
        checks: &[CheckId::ClientGracefulShutdown],
        layers: || Stack(vec![Box::new(closing::SlowShutdown::new(2500))]),
        ops: || {
            vec![
                Op::Start,
                run("s1", "reply: before a slow shutdown"),
                Op::Close,
            ]
        },
        judge: |o| vec![graceful_shutdown(o)],
        after: After::Nothing,
    },
    Scenario {
        name: "refused-shutdown",
        checks: &[CheckId::ClientGracefulShutdown],
        layers: || Stack(vec![Box::new(closing::RefusedShutdown)]),
        ops: || {
            vec![
                Op::Start,
                run("s1", "reply: before a refused shutdown"),
                Op::Close,
            ]
        },
        judge: |o| vec![graceful_shutdown(o)],
        after: After::Nothing,
    },
];
