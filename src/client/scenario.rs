//! The scenarios: for each, the peer's layers, the operations the driver is given, and the
//! judge of the checks it decides (sans-IO: an [`Observation`] in, verdicts out).

use super::driver::{Op, Outcome};
use super::layers::{self, Stack};
use super::log::{PeerEvent, PeerLog};
use super::{backlog, closing, runs, turns};
use crate::check::CheckId;
use crate::suite::verdict::{Failure, FailureKind, Verdict};
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
}

pub(super) fn run(session: &str, text: &str) -> Op {
    Op::Run {
        session: session.into(),
        text: text.into(),
    }
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
    },
    Scenario {
        name: "unknown-events",
        checks: &[CheckId::ClientForwardCompatible],
        layers: || Stack(vec![Box::new(layers::UnknownEvents::default())]),
        ops: || vec![Op::Start, run("s1", "reply: still here"), Op::Close],
        judge: |o| vec![forward_compatible(o)],
    },
    Scenario {
        name: "long-lines",
        checks: &[CheckId::ClientLongLines, CheckId::ClientLineMemory],
        layers: || Stack(vec![Box::new(layers::LongLines { bytes: 48 << 20 })]),
        ops: || vec![Op::Start, run("s1", "reply: after a long line"), Op::Close],
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
    },
    Scenario {
        name: "backlog",
        checks: &[CheckId::ClientBoundedBacklog],
        layers: || Stack(vec![Box::new(backlog::Backlog::default())]),
        ops: || vec![Op::Start, run("s1", backlog::PROMPT), Op::Close],
        judge: |o| vec![backlog::bounded_backlog(o)],
    },
    Scenario {
        name: "exit-mid-turn",
        checks: &[CheckId::ClientRuntimeExit],
        layers: || Stack(vec![Box::new(layers::ExitMidTurn::default())]),
        ops: || vec![Op::Start, run("s1", "reply: never finished"), Op::Close],
        judge: |o| vec![runtime_exit(o)],
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
    },
    Scenario {
        name: "stderr-flood",
        checks: &[CheckId::ClientDrainsStderr],
        layers: || Stack(vec![Box::new(layers::StderrFlood { bytes: 256 * 1024 })]),
        ops: || vec![Op::Start, run("s1", "reply: after much stderr"), Op::Close],
        judge: |o| vec![drains_stderr(o)],
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
                run("s1", "reply: after the error"),
                Op::Close,
            ]
        },
        judge: |o| vec![typed_errors(o)],
    },
    Scenario {
        name: "receipts",
        checks: &[CheckId::ClientReceiptCorrelation],
        layers: || Stack(vec![Box::new(turns::LateTail::default())]),
        ops: runs::receipts_ops,
        judge: |o| vec![runs::receipt_correlation(o)],
    },
    Scenario {
        name: "subagent-trees",
        checks: &[CheckId::ClientSubagentTrees],
        layers: || Stack(vec![Box::new(turns::ChildSeq::default())]),
        ops: || vec![Op::Start, run("s1", runs::SUBAGENT_PROMPT), Op::Close],
        judge: |o| vec![runs::subagent_trees(o)],
    },
    Scenario {
        name: "chatty-sessions",
        checks: &[CheckId::ClientChattySessions],
        layers: || Stack(vec![Box::new(runs::CHATTY)]),
        ops: || vec![Op::Start, run("s1", runs::CHATTY_PROMPT), Op::Close],
        judge: |o| vec![runs::chatty_sessions(o)],
    },
    Scenario {
        name: "idle-never-comes",
        checks: &[CheckId::ClientIdleNeverComes],
        layers: || Stack(vec![Box::new(turns::NoIdle::default())]),
        ops: runs::no_idle_ops,
        judge: |o| vec![runs::idle_never_comes(o)],
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
    },
];

pub(crate) fn fail(reason: impl Into<String>) -> Verdict {
    Verdict::Fail(Box::new(Failure::new(FailureKind::Rule, reason)))
}

pub(crate) fn untestable(reason: impl Into<String>) -> Verdict {
    Verdict::NotTestable {
        reason: reason.into(),
    }
}

pub(crate) fn outcome(o: &Observation, i: usize) -> Option<&Outcome> {
    o.ops.get(i).map(|x| &x.1)
}

/// The request's and the other frames' times on the first peer that got an `initialize`.
pub(crate) fn waits_for_initialize(o: &Observation) -> Verdict {
    let Some(p) = o.peers.iter().find(|p| !p.requests().is_empty()) else {
        return untestable("the client sent no request");
    };
    let reqs = p.requests();
    let Some((_, init)) = reqs.iter().find(|(_, r)| r["method"] == "initialize") else {
        return fail(format!(
            "sent {} without ever sending initialize",
            reqs[0].1["method"]
        ));
    };
    let answered = p
        .written()
        .into_iter()
        .find(|(_, f)| f.get("method").is_none() && f["id"] == init["id"])
        .map(|(t, _)| t);
    let early = reqs
        .iter()
        .find(|(t, r)| r["method"] != "initialize" && answered.is_none_or(|a| *t < a));
    match (early, answered) {
        (Some((t, r)), a) => fail(format!(
            "sent {} at {:.0?}, before the initialize answer{}",
            r["method"],
            t,
            a.map_or(" (never written)".into(), |a| format!(
                " (written at {a:.0?})"
            ))
        )),
        (None, None) => untestable("the initialize answer was never written"),
        (None, Some(_)) if reqs.len() < 2 => untestable("the client sent nothing after initialize"),
        (None, Some(_)) => Verdict::Pass,
    }
}

pub(super) fn graceful_shutdown(o: &Observation) -> Verdict {
    let Some(close) = o.ops.iter().position(|(op, _, _)| *op == Op::Close) else {
        return untestable("the close operation was never reached");
    };
    if matches!(o.ops[close].1, Outcome::TimedOut) {
        return fail("the close operation never ended: the client hangs closing the runtime");
    }
    shutdown_of(&o.peers)
}

/// How the last peer ended: shutdown or stdin's end first, then its own exit.
/// The shortest grace the official clients give a runtime to exit after its stdin ends (1 s,
/// §8.6), less what the relay's own reports of the two events may differ by on a loaded machine.
const GRACE: Duration = Duration::from_millis(800);

pub(crate) fn shutdown_of(peers: &[PeerLog]) -> Verdict {
    let Some(p) = peers.last() else {
        return untestable("the client launched no runtime");
    };
    let (mut asked, mut eof) = (false, None);
    for (at, e) in &p.events {
        match e {
            PeerEvent::Received(l) if l.contains("\"shutdown\"") => asked = true,
            PeerEvent::StdinEof => {
                asked = true;
                eof = Some(*at);
            }
            PeerEvent::Exit(_) if asked => return Verdict::Pass,
            // Stdin ended and the grace the official clients give (§8.6) passed: the client did
            // its part; a runtime slower to exit than that (a loaded machine) is not its fault.
            PeerEvent::Signal(_) if eof.is_some_and(|t| *at >= t + GRACE) => return Verdict::Pass,
            PeerEvent::Signal(s) if !asked => {
                return fail(format!(
                    "sent {} without shutdown or closing stdin first",
                    crate::sys::signal_name(*s)
                ))
            }
            PeerEvent::Signal(s) => {
                return fail(format!(
                    "sent {} before the runtime could exit by itself",
                    crate::sys::signal_name(*s)
                ))
            }
            PeerEvent::Gone => {
                return fail(if asked {
                    "killed the runtime (SIGKILL) before it could exit"
                } else {
                    "killed the runtime (SIGKILL) without shutdown or closing stdin"
                })
            }
            _ => {}
        }
    }
    if asked {
        untestable("the runtime was still running when the scenario ended")
    } else {
        fail("closed without sending shutdown or closing the runtime's stdin")
    }
}

fn ids_out_of_order(o: &Observation) -> Verdict {
    let swapped = o.peers.iter().any(|p| {
        let order: Vec<serde_json::Value> = p
            .requests()
            .into_iter()
            .map(|(_, r)| r["id"].clone())
            .collect();
        let answered: Vec<usize> = p
            .written()
            .iter()
            .filter(|(_, f)| f.get("method").is_none())
            .filter_map(|(_, f)| order.iter().position(|i| *i == f["id"]))
            .collect();
        answered.windows(2).any(|w| w[1] < w[0])
    });
    if !swapped {
        return untestable(
            "the client never had two requests in flight, so no response could overtake another",
        );
    }
    match outcome(o, 3) {
        Some(Outcome::Ok(v)) => {
            let r = &v["results"];
            let cwd = |i: usize| r[i]["cwd"].as_str().unwrap_or("").to_owned();
            if cwd(0).ends_with("/a") && cwd(1).ends_with("/b") {
                Verdict::Pass
            } else {
                fail(format!("answers went to the wrong requests: s1's cwd {:?} (expected …/a), s2's {:?} (expected …/b)", cwd(0), cwd(1)))
            }
        }
        Some(other) => fail(format!(
            "two concurrent requests answered out of order: {}",
            other.describe()
        )),
        None => untestable("the concurrent operation was never reached"),
    }
}

/// The run of operation `i` completed with `text`.
pub(crate) fn completes(o: &Observation, i: usize, text: &str, what: &str) -> Verdict {
    match outcome(o, i) {
        None => untestable("the run was never reached (the client did not start)"),
        Some(Outcome::Ok(v)) if v["text"] == text => Verdict::Pass,
        Some(Outcome::Ok(v)) => fail(format!(
            "{what}; the run returned {} instead of {text:?}",
            v["text"]
        )),
        Some(other) => fail(format!("{what}; the run failed: {}", other.describe())),
    }
}

fn forward_compatible(o: &Observation) -> Verdict {
    let v = completes(
        o,
        1,
        "still here",
        "events of an unknown type were streamed",
    );
    let Some(Outcome::Ok(r)) = outcome(o, 1).filter(|_| v == Verdict::Pass) else {
        return v;
    };
    let kind = layers::UNKNOWN_KIND;
    match (r["events"].as_array(), r.get("finish")) {
        (Some(evs), _) if !evs.iter().any(|e| e == layers::UNKNOWN_EVENT) => fail(format!(
            "the run dropped the {} events it did not know",
            layers::UNKNOWN_EVENT
        )),
        // A driver without `finish` reports no reason kind to judge.
        (_, Some(f)) if f != kind => fail(format!(
            "the run's turn/end had the reason kind {kind:?}, and its finish was reported as {f}"
        )),
        _ => Verdict::Pass,
    }
}

fn runtime_exit(o: &Observation) -> Verdict {
    let exited = o
        .peers
        .iter()
        .any(|p| p.events.iter().any(|(_, e)| *e == PeerEvent::Exit(1)));
    if !exited {
        return untestable("the client never prompted, so the runtime never exited mid-turn");
    }
    match outcome(o, 1) {
        // Its own bound expiring is no notice of the exit (§15.4): the client waited it out.
        Some(Outcome::Err(e)) if e.class == "timeout" => fail(format!(
            "the runtime exited mid-turn (code 1) and the run failed only when the client's own bound expired ({})",
            e.message
        )),
        Some(Outcome::Err(_)) => Verdict::Pass,
        Some(Outcome::Ok(v)) => fail(format!(
            "the runtime exited mid-turn (code 1) and the run reported success: {v}"
        )),
        Some(Outcome::TimedOut) => {
            fail("the runtime exited mid-turn (code 1) and the run never ended: the client hangs")
        }
        Some(other) => fail(format!("the runtime exited mid-turn: {}", other.describe())),
        None => untestable("the run was never reached"),
    }
}

/// The runtime exited (code 1) on reading the working-directory request: the request must fail,
/// with an error that is not the client's own bound expiring (docs/CONTRACT.md#r15.4-exit-fails-request).
fn exit_on_request(o: &Observation) -> Verdict {
    let what = "the runtime exited (code 1) with the working-directory request unanswered";
    match outcome(o, 1) {
        None => untestable("the request was never reached (the client did not start)"),
        Some(Outcome::Err(e)) if e.class == "unsupported" => untestable(format!(
            "the client cannot get a session's working directory ({})",
            e.message
        )),
        Some(Outcome::Err(e)) if e.class == "timeout" => fail(format!(
            "{what}, and the request failed only when the client's own bound expired ({})",
            e.message
        )),
        Some(Outcome::Err(_)) => Verdict::Pass,
        Some(Outcome::Ok(v)) => fail(format!("{what}, and the request reported success: {v}")),
        Some(Outcome::TimedOut) => fail(format!(
            "{what}, and the request never ended: the client hangs"
        )),
        Some(other) => fail(format!("{what}: {}", other.describe())),
    }
}

/// What the flood did to the run.
pub(crate) const FLOOD: &str =
    "the runtime wrote 256 KiB of stderr (not UTF-8) at launch and in the turn";

fn drains_stderr(o: &Observation) -> Verdict {
    stderr_blocked(&o.peers, completes(o, 1, "after much stderr", FLOOD))
}

/// `v` (the run's verdict), or why the runtime blocked when the run did not pass.
pub(crate) fn stderr_blocked(peers: &[PeerLog], v: Verdict) -> Verdict {
    let blocked = peers.iter().find(|p| p.unwritten() > 0);
    match (v, blocked) {
        (Verdict::Pass, _) => Verdict::Pass,
        (_, Some(p)) => {
            let sent: usize = p
                .events
                .iter()
                .filter_map(|(_, e)| match e {
                    PeerEvent::Stderr(n) => Some(*n),
                    _ => None,
                })
                .sum();
            fail(format!("the runtime blocked writing stderr: the client stopped reading it ({sent} bytes sent, {} writes pending)", p.unwritten()))
        }
        (v, None) => v,
    }
}

fn typed_errors(o: &Observation) -> Verdict {
    match outcome(o, 1) {
        None => untestable("the resume was never reached (the client did not start)"),
        Some(Outcome::Err(e))
            if e.class == "rpc" && e.code == Some(-32603) && e.message.contains("not found") =>
        {
            completes(o, 2, "after the error", "after an error response")
        }
        Some(Outcome::Err(e)) => fail(format!(
            "the error response -32603 `session \"kit-no-such-session\" not found` was reported as {}",
            Outcome::Err(e.clone()).describe()
        )),
        Some(other) => fail(format!("an error response was reported as {}", other.describe())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn peer(events: Vec<PeerEvent>) -> PeerLog {
        let events = events
            .into_iter()
            .enumerate()
            .map(|(i, e)| (Duration::from_millis(i as u64), e))
            .collect();
        PeerLog {
            n: 1,
            argv: Vec::new(),
            events,
        }
    }

    fn req(id: &str, method: &str) -> PeerEvent {
        PeerEvent::Received(json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string())
    }

    fn resp(id: &str) -> PeerEvent {
        PeerEvent::Wrote(json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string())
    }

    #[test]
    fn out_of_order_needs_two_requests_in_flight_and_their_answers_swapped() {
        let in_order = peer(vec![req("1", "a"), resp("1"), req("2", "b"), resp("2")]);
        let o = Observation {
            peers: vec![in_order],
            ops: Vec::new(),
            ..Default::default()
        };
        assert!(matches!(ids_out_of_order(&o), Verdict::NotTestable { .. }));
        let swapped = || peer(vec![req("1", "a"), req("2", "b"), resp("2"), resp("1")]);
        let ops = |a: &str, b: &str| {
            let r =
                json!({"ok": true, "results": [{"ok": true, "cwd": a}, {"ok": true, "cwd": b}]});
            let mut ops = vec![(Op::Start, Outcome::Ok(json!({})), Duration::ZERO); 3];
            ops.push((Op::Concurrent(Vec::new()), Outcome::Ok(r), Duration::ZERO));
            ops
        };
        let o = Observation {
            peers: vec![swapped()],
            ops: ops("/w/a", "/w/b"),
            ..Default::default()
        };
        assert_eq!(ids_out_of_order(&o), Verdict::Pass);
        let o = Observation {
            peers: vec![swapped()],
            ops: ops("/w/b", "/w/a"),
            ..Default::default()
        };
        assert!(matches!(ids_out_of_order(&o), Verdict::Fail(_)));
    }

    #[test]
    fn a_request_before_the_initialize_answer_fails_and_none_after_it_is_untestable() {
        let early = peer(vec![
            req("1", "initialize"),
            req("2", "session/prompt"),
            resp("1"),
        ]);
        let o = Observation {
            peers: vec![early],
            ops: Vec::new(),
            ..Default::default()
        };
        assert!(matches!(waits_for_initialize(&o), Verdict::Fail(_)));
        let alone = peer(vec![req("1", "initialize"), resp("1")]);
        let o = Observation {
            peers: vec![alone],
            ops: Vec::new(),
            ..Default::default()
        };
        assert!(matches!(
            waits_for_initialize(&o),
            Verdict::NotTestable { .. }
        ));
        let good = peer(vec![
            req("1", "initialize"),
            resp("1"),
            req("2", "session/prompt"),
        ]);
        let o = Observation {
            peers: vec![good],
            ops: Vec::new(),
            ..Default::default()
        };
        assert_eq!(waits_for_initialize(&o), Verdict::Pass);
    }

    #[test]
    fn a_kill_without_shutdown_fails_graceful_shutdown() {
        let ops = vec![(Op::Close, Outcome::Ok(json!({})), Duration::ZERO)];
        let killed = peer(vec![req("1", "initialize"), PeerEvent::Gone]);
        let o = Observation {
            peers: vec![killed],
            ops: ops.clone(),
            ..Default::default()
        };
        assert!(matches!(graceful_shutdown(&o), Verdict::Fail(_)));
        let hung = vec![(Op::Close, Outcome::TimedOut, Duration::ZERO)];
        let o = Observation {
            peers: vec![peer(vec![req("9", "shutdown")])],
            ops: hung,
            ..Default::default()
        };
        assert!(matches!(graceful_shutdown(&o), Verdict::Fail(_)));
        let clean = peer(vec![req("9", "shutdown"), resp("9"), PeerEvent::Exit(0)]);
        let o = Observation {
            peers: vec![clean],
            ops,
            ..Default::default()
        };
        assert_eq!(graceful_shutdown(&o), Verdict::Pass);
    }

    fn error(class: &str, code: Option<i64>, message: &str) -> Outcome {
        Outcome::Err(crate::client::driver::DriverError {
            class: class.into(),
            code,
            message: message.into(),
        })
    }

    fn ops(second: Outcome, third: Outcome) -> Vec<(Op, Outcome, Duration)> {
        let ok = Outcome::Ok(json!({"ok": true}));
        vec![
            (Op::Start, ok, Duration::ZERO),
            (Op::Close, second, Duration::ZERO),
            (Op::Close, third, Duration::ZERO),
        ]
    }

    #[test]
    fn an_error_response_must_be_reported_as_class_rpc_with_its_code() {
        let done = Outcome::Ok(json!({"ok": true, "text": "after the error"}));
        let judged = |class| {
            let missing = "session \"kit-no-such-session\" not found";
            let o = Observation {
                ops: ops(error(class, Some(-32603), missing), done.clone()),
                ..Default::default()
            };
            typed_errors(&o)
        };
        assert_eq!(judged("rpc"), Verdict::Pass);
        assert!(matches!(judged("transport"), Verdict::Fail(_)));
        assert!(matches!(judged("other"), Verdict::Fail(_)));
    }

    #[test]
    fn a_runtime_exit_noticed_only_by_the_clients_own_bound_fails() {
        let judged = |class| {
            let o = Observation {
                peers: vec![peer(vec![req("1", "initialize"), PeerEvent::Exit(1)])],
                ops: ops(error(class, None, "gone"), Outcome::TimedOut),
                ..Default::default()
            };
            runtime_exit(&o)
        };
        assert_eq!(judged("transport"), Verdict::Pass);
        assert!(matches!(judged("timeout"), Verdict::Fail(_)));
    }
}
