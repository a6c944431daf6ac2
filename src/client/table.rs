//! The one table of client scenarios: for each, the peer's layers ([`super::layers`] and the
//! modules of the run scenarios), the operations, the judge of its checks in driver mode (written
//! once, in `judges.rs`, `runs.rs`, `robust.rs` and the layers' modules), what the client must do
//! after the fault ([`super::after`]), its suite, and whether app mode runs it or why it leaves
//! it out ([`App`]; app mode reads the app's run as a driver's: `app_judge.rs`).

use super::after::After;
use super::driver::Op;
use super::judges::{
    completes, drains_stderr, exit_on_request, forward_compatible, graceful_shutdown,
    ids_out_of_order, runtime_exit, typed_errors, waits_for_initialize,
};
use super::layers::{self, Stack};
use super::run::Suite;
use super::scenario::{long_lines_ops, run, App, Scenario};
use super::{backlog, closing, grandchild, robust, runs, turns};
use crate::check::CheckId;

/// Every scenario, in report order of their checks (a check several scenarios decide gets the
/// worst of their verdicts): the contract suite's, then the robustness suite's.
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
        suite: Suite::Contract,
        app: App::AsRun,
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
        suite: Suite::Contract,
        app: App::LeftOut("it needs two requests in flight at once; an app sends one prompt"),
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
        suite: Suite::Contract,
        app: App::AsRun,
    },
    Scenario {
        name: "unknown-events",
        checks: &[CheckId::ClientForwardCompatible],
        layers: || Stack(vec![Box::new(layers::UnknownEvents::default())]),
        ops: || vec![Op::Start, run("s1", "reply: still here"), Op::Close],
        judge: |o| vec![forward_compatible(o)],
        after: After::Recover,
        suite: Suite::Contract,
        app: App::AsRun,
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
        suite: Suite::Contract,
        app: App::AsRun,
    },
    Scenario {
        name: "backlog",
        checks: &[CheckId::ClientBoundedBacklog],
        layers: || Stack(vec![Box::new(backlog::Backlog::default())]),
        ops: || vec![Op::Start, run("s1", backlog::PROMPT), Op::Close],
        judge: |o| vec![backlog::bounded_backlog(o)],
        after: After::Nothing,
        suite: Suite::Contract,
        app: App::AsRun,
    },
    Scenario {
        name: "exit-mid-turn",
        checks: &[CheckId::ClientRuntimeExit],
        layers: || Stack(vec![Box::new(layers::ExitMidTurn::default())]),
        ops: || vec![Op::Start, run("s1", "reply: never finished"), Op::Close],
        judge: |o| vec![runtime_exit(o)],
        // None after an exit: why is in `after.rs`.
        after: After::Nothing,
        suite: Suite::Contract,
        app: App::AsRun,
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
        // None after an exit: why is in `after.rs`.
        after: After::Nothing,
        suite: Suite::Contract,
        app: App::LeftOut(
            "it needs a working-directory request; an app sends only its run's prompt (client.runtime-exit is judged by exit-mid-turn)",
        ),
    },
    Scenario {
        name: "stderr-flood",
        checks: &[CheckId::ClientDrainsStderr],
        layers: || Stack(vec![Box::new(layers::StderrFlood { bytes: 256 * 1024 })]),
        ops: || vec![Op::Start, run("s1", "reply: after much stderr"), Op::Close],
        judge: |o| vec![drains_stderr(o)],
        after: After::Recover,
        suite: Suite::Contract,
        app: App::AsRun,
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
        suite: Suite::Contract,
        app: App::LeftOut(
            "it needs an error response's code as the client reports it to its caller; an app prints a reply or exits with an error",
        ),
    },
    Scenario {
        name: "receipts",
        checks: &[CheckId::ClientReceiptCorrelation],
        layers: || Stack(vec![Box::new(turns::LateTail::default())]),
        ops: runs::receipts_ops,
        judge: |o| vec![runs::receipt_correlation(o)],
        after: After::Nothing,
        suite: Suite::Contract,
        app: App::LeftOut(
            "it needs two prompts on one session, the first not waited for; an app runs one prompt",
        ),
    },
    Scenario {
        name: "subagent-trees",
        checks: &[CheckId::ClientSubagentTrees],
        layers: || Stack(vec![Box::new(turns::ChildSeq::default())]),
        ops: || vec![Op::Start, run("s1", runs::SUBAGENT_PROMPT), Op::Close],
        judge: |o| vec![runs::subagent_trees(o)],
        after: After::Nothing,
        suite: Suite::Contract,
        app: App::AsRun,
    },
    Scenario {
        name: "grandchild",
        checks: &[CheckId::ClientSubagentTrees],
        layers: || Stack(vec![Box::new(grandchild::Grandchild::default())]),
        ops: || vec![Op::Start, run("s1", runs::SUBAGENT_PROMPT), Op::Close],
        judge: |o| vec![runs::descendant_subagents(o)],
        after: After::Nothing,
        suite: Suite::Contract,
        app: App::AsRun,
    },
    Scenario {
        name: "chatty-sessions",
        checks: &[CheckId::ClientChattySessions],
        layers: || Stack(vec![Box::new(runs::CHATTY)]),
        ops: || vec![Op::Start, run("s1", runs::CHATTY_PROMPT), Op::Close],
        judge: |o| vec![runs::chatty_sessions(o)],
        after: After::Nothing,
        suite: Suite::Contract,
        app: App::AsRun,
    },
    Scenario {
        name: "idle-never-comes",
        checks: &[CheckId::ClientIdleNeverComes],
        layers: || Stack(vec![Box::new(turns::NoIdle::default())]),
        ops: runs::no_idle_ops,
        judge: |o| vec![runs::idle_never_comes(o)],
        after: After::Nothing,
        suite: Suite::Contract,
        app: App::AsRun,
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
        suite: Suite::Contract,
        app: App::AsRun,
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
        suite: Suite::Contract,
        app: App::AsRun,
    },
    Scenario {
        name: "non-frame-lines",
        checks: &[CheckId::ClientRobustNonFrameLines],
        layers: || Stack(vec![Box::new(robust::NonFrameLines)]),
        ops: || robust::run("reply: after non-frame lines"),
        judge: |o| vec![robust::non_frame_lines(o)],
        after: After::Recover,
        suite: Suite::Robustness,
        app: App::AsRun,
    },
    Scenario {
        name: "stdout-closed",
        checks: &[CheckId::ClientRobustStdoutClosed],
        layers: || Stack(vec![Box::new(robust::StdoutClosed::default())]),
        ops: || robust::run("reply: never read"),
        judge: |o| vec![robust::stdout_closed(o)],
        after: After::EndPromptly,
        suite: Suite::Robustness,
        app: App::AsRun,
    },
];
