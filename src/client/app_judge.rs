//! App mode's scenarios and their judges (sans-IO: an [`AppObservation`] in, verdicts out).

use super::app::AppObservation;
use super::driver::{DriverError, Op, Outcome};
use super::judges::{self as sc, fail, untestable};
use super::layers::{self, Stack};
use super::log::PeerEvent;
use super::run::Suite;
use super::scenario::Observation;
use super::{backlog, closing, grandchild, robust, runs, turns};
use crate::check::CheckId;
use crate::suite::Verdict;
use std::time::Duration;

/// One app scenario: a driver-mode scenario's layers, a prompt, its checks' judges.
pub struct AppScenario {
    /// Its name (`--scenario`), as in driver mode.
    pub name: &'static str,
    /// The checks it decides.
    pub checks: &'static [CheckId],
    /// The peer's layers.
    pub layers: fn() -> Stack,
    /// The prompt the app is given.
    pub prompt: &'static str,
    /// Its verdicts, one per check.
    pub judge: fn(&AppObservation) -> Vec<Verdict>,
    /// Its suite.
    pub suite: Suite,
    /// The bound the app is asked to set on its run (`DSH_CONFORMANCE_RUN_TIMEOUT_MS`), as a
    /// driver's bounded run is.
    pub run_bound_ms: Option<u64>,
}

/// The driver-mode scenarios app mode leaves out, with why: what they need an app that runs
/// one prompt never does.
pub const LEFT_OUT: &[(&str, &str)] = &[
    ("out-of-order", "it needs two requests in flight at once; an app sends one prompt"),
    (
        "typed-errors",
        "it needs an error response's code as the client reports it to its caller; an app prints a reply or exits with an error",
    ),
    (
        "receipts",
        "it needs two prompts on one session, the first not waited for; an app runs one prompt",
    ),
    (
        "exit-on-request",
        "it needs a working-directory request; an app sends only its run's prompt (client.runtime-exit is judged by exit-mid-turn)",
    ),
];

/// The checks no app scenario decides (each decided only by scenarios in [`LEFT_OUT`]).
pub fn not_judged() -> Vec<CheckId> {
    let all = super::scenario::SCENARIOS.iter().chain(robust::SCENARIOS);
    let mut ids: Vec<CheckId> = all
        .flat_map(|s| s.checks.iter().copied())
        .filter(|id| !APP_SCENARIOS.iter().any(|a| a.checks.contains(id)))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The report's note on what app mode leaves out and why, from [`LEFT_OUT`].
pub fn left_out_note() -> String {
    let scenarios: Vec<String> = (LEFT_OUT.iter())
        .map(|(name, why)| format!("{name} ({why})"))
        .collect();
    let checks: Vec<&str> = not_judged().iter().map(|id| id.as_str()).collect();
    format!(
        "app mode leaves out the scenarios {}; so it does not judge {}",
        scenarios.join("; "),
        checks.join(", ")
    )
}

/// What the app did, as a driver would report its run: start, the run (the reply it printed and
/// its exit 0; its non-zero exit and stderr as an error; no exit within the bound as no result),
/// close; so that the driver-mode judges of the run scenarios judge apps too.
fn as_run(o: &AppObservation, prompt: &str) -> Observation {
    let mut w = wire(o);
    let outcome = match o.exit {
        None => Outcome::TimedOut,
        Some(0) => Outcome::Ok(serde_json::json!({"text": o.stdout.join("\n").trim_end()})),
        Some(c) => Outcome::Err(DriverError {
            class: "other".into(),
            code: None,
            message: format!("the app exited {c}; stderr {:?}", o.stderr.trim_end()),
        }),
    };
    let run = Op::Run {
        session: runs::root(&w),
        text: prompt.into(),
    };
    let ok = || Outcome::Ok(serde_json::json!({}));
    w.ops = vec![
        (Op::Start, ok(), Duration::ZERO),
        (run, outcome, Duration::ZERO),
        (Op::Close, ok(), Duration::ZERO),
    ];
    w
}

fn wire(o: &AppObservation) -> Observation {
    Observation {
        peers: o.peers.clone(),
        ops: Vec::new(),
        rss: Vec::new(),
    }
}

/// The app printed `text` and exited 0.
fn completes(o: &AppObservation, text: &str, what: &str) -> Verdict {
    if !prompted(o) {
        let how = o.exit.map_or("was still running at the bound".into(), |c| {
            format!("exited {c}")
        });
        return untestable(format!(
            "the app never sent a prompt to the runtime (it {how})"
        ));
    }
    let printed = o.stdout.iter().any(|l| l.contains(text));
    match o.exit {
        None => fail(format!("{what}; the app never exited: it hangs")),
        Some(0) if printed => Verdict::Pass,
        Some(c) => fail(format!(
            "{what}; the app exited {c} without printing {text:?} (stdout {:?}, stderr {:?})",
            o.stdout.join("\n"),
            o.stderr.trim_end()
        )),
    }
}

/// The banner comes before the `initialize` answer: an app that launched the runtime met it,
/// prompt or not.
fn non_frame_lines(o: &AppObservation) -> Verdict {
    let launched = o.peers.iter().any(|p| {
        p.requests()
            .iter()
            .any(|(_, r)| r["method"] == "initialize")
    });
    match (launched, prompted(o)) {
        (true, false) => fail(format!(
            "{}; the app never prompted: it {} (stderr {:?})",
            robust::NON_FRAME,
            o.exit.map_or("hangs".into(), |c| format!("exited {c}")),
            o.stderr.trim_end()
        )),
        _ => completes(o, "after non-frame lines", robust::NON_FRAME),
    }
}

fn prompted(o: &AppObservation) -> bool {
    o.peers.iter().any(|p| {
        p.requests()
            .iter()
            .any(|(_, r)| r["method"] == "session/prompt")
    })
}

/// The app failed: a non-zero exit and a word on stderr, within the bound.
fn fails(o: &AppObservation, happened: PeerEvent, what: &str) -> Verdict {
    if !o
        .peers
        .iter()
        .any(|p| p.events.iter().any(|(_, e)| *e == happened))
    {
        return untestable(format!("the app never prompted, so {what} never happened"));
    }
    match o.exit {
        None => fail(format!("{what}; the app never exited: it hangs")),
        Some(0) => fail(format!(
            "{what}; the app exited 0 as if the run had succeeded"
        )),
        Some(c) if o.stderr.trim().is_empty() => {
            fail(format!("{what}; the app exited {c} with nothing on stderr"))
        }
        Some(_) => Verdict::Pass,
    }
}

fn shutdown(o: &AppObservation) -> Verdict {
    match o.exit {
        None => untestable("the app did not exit by itself within the bound"),
        Some(_) => sc::shutdown_of(&o.peers),
    }
}

/// Every app scenario.
pub const APP_SCENARIOS: &[AppScenario] = &[
    AppScenario {
        name: "handshake",
        checks: &[
            CheckId::ClientWaitsForInitialize,
            CheckId::ClientGracefulShutdown,
        ],
        layers: || Stack(vec![Box::new(layers::SlowInit::new(1500))]),
        prompt: "reply: hello",
        judge: |o| vec![sc::waits_for_initialize(&wire(o)), shutdown(o)],
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "foreign-sessions",
        checks: &[CheckId::ClientRootIdle],
        layers: || Stack(vec![Box::new(layers::Foreign::default())]),
        prompt: "reply: the root's reply",
        judge: |o| {
            vec![completes(
                o,
                "the root's reply",
                "a turn of another session was interleaved",
            )]
        },
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "unknown-events",
        checks: &[CheckId::ClientForwardCompatible],
        layers: || Stack(vec![Box::new(layers::UnknownEvents::default())]),
        prompt: "reply: still here",
        judge: |o| {
            vec![completes(
                o,
                "still here",
                "events of an unknown type were streamed",
            )]
        },
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "long-lines",
        checks: &[CheckId::ClientLongLines, CheckId::ClientLineMemory],
        layers: || Stack(vec![Box::new(layers::LongLines { bytes: 48 << 20 })]),
        prompt: "reply: after a long line",
        judge: |o| {
            let read = completes(
                o,
                "after a long line",
                "the reply's frame was a 48 MiB line",
            );
            let memory = super::line_memory::judge(&o.peers, &o.rss, &read);
            vec![read, memory]
        },
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "backlog",
        checks: &[CheckId::ClientBoundedBacklog],
        layers: || Stack(vec![Box::new(backlog::Backlog::default())]),
        prompt: backlog::PROMPT,
        judge: |o| {
            let text = backlog::PROMPT.trim_start_matches("reply: ");
            vec![backlog::judge(&o.peers, &o.rss, &|what| {
                completes(o, text, what)
            })]
        },
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "exit-mid-turn",
        checks: &[CheckId::ClientRuntimeExit],
        layers: || Stack(vec![Box::new(layers::ExitMidTurn::default())]),
        prompt: "reply: never finished",
        judge: |o| {
            vec![fails(
                o,
                PeerEvent::Exit(1),
                "the runtime exited mid-turn (code 1)",
            )]
        },
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "stderr-flood",
        checks: &[CheckId::ClientDrainsStderr],
        layers: || Stack(vec![Box::new(layers::StderrFlood { bytes: 256 * 1024 })]),
        prompt: "reply: after much stderr",
        judge: |o| {
            vec![sc::stderr_blocked(
                &o.peers,
                completes(o, "after much stderr", sc::FLOOD),
            )]
        },
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "subagent-trees",
        checks: &[CheckId::ClientSubagentTrees],
        layers: || Stack(vec![Box::new(turns::ChildSeq::default())]),
        prompt: runs::SUBAGENT_PROMPT,
        judge: |o| vec![runs::subagent_trees(&as_run(o, runs::SUBAGENT_PROMPT))],
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "grandchild",
        checks: &[CheckId::ClientSubagentTrees],
        layers: || Stack(vec![Box::new(grandchild::Grandchild::default())]),
        prompt: runs::SUBAGENT_PROMPT,
        judge: |o| {
            vec![runs::descendant_subagents(&as_run(
                o,
                runs::SUBAGENT_PROMPT,
            ))]
        },
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "chatty-sessions",
        checks: &[CheckId::ClientChattySessions],
        layers: || Stack(vec![Box::new(runs::CHATTY)]),
        prompt: runs::CHATTY_PROMPT,
        judge: |o| vec![runs::chatty_sessions(&as_run(o, runs::CHATTY_PROMPT))],
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "idle-never-comes",
        checks: &[CheckId::ClientIdleNeverComes],
        layers: || Stack(vec![Box::new(turns::NoIdle::default())]),
        prompt: runs::NO_IDLE_PROMPT,
        judge: |o| vec![runs::idle_never_comes(&as_run(o, runs::NO_IDLE_PROMPT))],
        suite: Suite::Contract,
        run_bound_ms: Some(runs::RUN_BOUND_MS),
    },
    AppScenario {
        name: "slow-shutdown",
        checks: &[CheckId::ClientGracefulShutdown],
        layers: || Stack(vec![Box::new(closing::SlowShutdown::new(2500))]),
        prompt: "reply: before a slow shutdown",
        judge: |o| vec![shutdown(o)],
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "refused-shutdown",
        checks: &[CheckId::ClientGracefulShutdown],
        layers: || Stack(vec![Box::new(closing::RefusedShutdown)]),
        prompt: "reply: before a refused shutdown",
        judge: |o| vec![shutdown(o)],
        suite: Suite::Contract,
        run_bound_ms: None,
    },
    AppScenario {
        name: "non-frame-lines",
        checks: &[CheckId::ClientRobustNonFrameLines],
        layers: || Stack(vec![Box::new(robust::NonFrameLines)]),
        prompt: "reply: after non-frame lines",
        judge: |o| vec![non_frame_lines(o)],
        suite: Suite::Robustness,
        run_bound_ms: None,
    },
    AppScenario {
        name: "stdout-closed",
        checks: &[CheckId::ClientRobustStdoutClosed],
        layers: || Stack(vec![Box::new(robust::StdoutClosed::default())]),
        prompt: "reply: never read",
        judge: |o| vec![fails(o, PeerEvent::StdoutClosed, robust::CLOSED)],
        suite: Suite::Robustness,
        run_bound_ms: None,
    },
];
#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::log::PeerLog;
    use std::time::Duration;

    fn exited(code: Option<i32>, stderr: &str) -> AppObservation {
        let peer = PeerLog {
            n: 1,
            argv: Vec::new(),
            events: vec![(Duration::ZERO, PeerEvent::Exit(1))],
        };
        AppObservation {
            peers: vec![peer],
            exit: code,
            stdout: Vec::new(),
            stderr: stderr.into(),
            rss: Vec::new(),
        }
    }

    #[test]
    fn every_driver_scenario_runs_in_app_mode_or_is_left_out_with_why() {
        let driver = super::super::scenario::SCENARIOS
            .iter()
            .chain(robust::SCENARIOS);
        for d in driver {
            let app = APP_SCENARIOS.iter().filter(|a| a.name == d.name).count();
            let out = LEFT_OUT.iter().filter(|l| l.0 == d.name).count();
            assert_eq!(app + out, 1, "{}", d.name);
        }
        for a in APP_SCENARIOS {
            let d = super::super::scenario::SCENARIOS
                .iter()
                .chain(robust::SCENARIOS);
            assert!(
                d.clone().any(|d| d.name == a.name && d.checks == a.checks),
                "{}",
                a.name
            );
        }
        let note = left_out_note();
        let left = [
            CheckId::ClientIdsOutOfOrder,
            CheckId::ClientTypedErrors,
            CheckId::ClientReceiptCorrelation,
        ];
        assert_eq!(not_judged(), left);
        assert!(left.iter().all(|id| note.contains(id.as_str())), "{note}");
    }

    #[test]
    fn an_app_run_is_judged_as_a_driver_run_on_the_session_it_prompted() {
        let prompt =
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"mine"}}"#;
        let mut o = exited(Some(0), "");
        o.peers[0]
            .events
            .push((Duration::ZERO, PeerEvent::Received(prompt.into())));
        o.stdout = vec!["two".into(), "lines".into(), String::new()];
        let r = as_run(&o, "reply: x");
        assert_eq!(
            r.ops[1].0,
            Op::Run {
                session: "mine".into(),
                text: "reply: x".into()
            }
        );
        assert!(matches!(&r.ops[1].1, Outcome::Ok(v) if v["text"] == "two\nlines"));
        o.exit = Some(2);
        assert!(
            matches!(&as_run(&o, "p").ops[1].1, Outcome::Err(e) if e.message.contains("exited 2"))
        );
        o.exit = None;
        assert_eq!(as_run(&o, "p").ops[1].1, Outcome::TimedOut);
    }

    #[test]
    fn a_runtime_exit_must_end_the_app_non_zero_with_an_error() {
        let judge = |o: &AppObservation| fails(o, PeerEvent::Exit(1), "exit");
        assert_eq!(judge(&exited(Some(1), "app: gone")), Verdict::Pass);
        assert!(matches!(judge(&exited(Some(0), "")), Verdict::Fail(_)));
        assert!(matches!(judge(&exited(Some(1), "")), Verdict::Fail(_)));
        assert!(matches!(judge(&exited(None, "")), Verdict::Fail(_)));
        let mut quiet = exited(Some(1), "x");
        quiet.peers[0].events.clear();
        assert!(matches!(judge(&quiet), Verdict::NotTestable { .. }));
    }

    #[test]
    fn a_printed_reply_without_a_prompt_to_the_runtime_is_untestable() {
        let mut o = exited(Some(0), "");
        o.stdout = vec!["hello".into()];
        assert!(matches!(
            completes(&o, "hello", "w"),
            Verdict::NotTestable { .. }
        ));
        let prompt = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}"#;
        o.peers[0]
            .events
            .push((Duration::ZERO, PeerEvent::Received(prompt.into())));
        assert_eq!(completes(&o, "hello", "w"), Verdict::Pass);
        o.exit = Some(3);
        assert!(matches!(completes(&o, "hello", "w"), Verdict::Fail(_)));
    }
}
