//! How app mode judges the table's scenarios ([`App`]), sans-IO: an [`AppObservation`] in,
//! verdicts out. The run scenarios are judged by their driver-mode judges on the app's run read
//! as a driver's ([`as_run`]); the others by the judges here of what the app printed and how it
//! exited.

use super::app::AppObservation;
use super::driver::{DriverError, Op, Outcome};
use super::judges::{self as sc, fail, untestable};
use super::log::PeerEvent;
use super::scenario::{App, Observation, Scenario, SCENARIOS};
use super::{backlog, robust, runs};
use crate::check::CheckId;
use crate::suite::Verdict;
use std::time::Duration;

/// How app mode judges scenario `s` on what the app did: its app judge, or its driver-mode judge
/// on the app's run read as a driver's; nothing for a scenario it leaves out.
pub(super) fn verdicts(s: &Scenario, o: &AppObservation) -> Vec<Verdict> {
    match s.app {
        App::Judge(judge) => judge(o),
        App::AsRun => (s.judge)(&as_run(o, &s.prompt().unwrap_or_default())),
        App::LeftOut(_) => Vec::new(),
    }
}

/// The scenarios app mode leaves out, with why (from the table: [`App::LeftOut`]).
pub fn left_out() -> Vec<(&'static str, &'static str)> {
    (SCENARIOS.iter())
        .filter_map(|s| match s.app {
            App::LeftOut(why) => Some((s.name, why)),
            _ => None,
        })
        .collect()
}

/// The checks no scenario app mode runs decides (each decided only by scenarios it leaves out).
pub fn not_judged() -> Vec<CheckId> {
    let judged =
        |id: &CheckId| (SCENARIOS.iter()).any(|a| a.in_app_mode() && a.checks.contains(id));
    let mut ids: Vec<CheckId> = (SCENARIOS.iter())
        .flat_map(|s| s.checks.iter().copied())
        .filter(|id| !judged(id))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The report's note on what app mode leaves out and why, from the table.
pub fn left_out_note() -> String {
    let scenarios: Vec<String> = (left_out().iter())
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
pub(super) fn as_run(o: &AppObservation, prompt: &str) -> Observation {
    let mut w = wire(o);
    let printed = o.stdout.join("\n");
    let outcome = match o.exit {
        None => Outcome::TimedOut,
        Some(0) => Outcome::Ok(serde_json::json!({"text": reply(printed.trim_end(), &said(&w))})),
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
        (run, outcome, o.wall),
        (Op::Close, ok(), Duration::ZERO),
    ];
    w
}

/// The reply in what the app printed: all of it, or its last lines when they are a text the
/// runtime wrote (an app may print lines of its own before the reply: dsh-openai's bridge prints
/// `session_id:…, found_files=…` on its stdout).
fn reply(printed: &str, said: &[String]) -> String {
    let ends = |t: &&String| printed == t.as_str() || printed.ends_with(&format!("\n{t}"));
    (said.iter().filter(|t| !t.is_empty()))
        .filter(ends)
        .max_by_key(|t| t.len())
        .cloned()
        .unwrap_or_else(|| printed.to_owned())
}

/// The text of every `assistant/message` written, of any session.
fn said(w: &Observation) -> Vec<String> {
    let frames = w.peers.iter().flat_map(|p| p.written());
    frames
        .filter(|(_, v)| v["params"]["event"]["type"] == "assistant/message")
        .map(|(_, v)| {
            let c = v["params"]["event"]["data"]["message"]["content"].as_array();
            let t = c.into_iter().flatten().filter_map(|b| b["text"].as_str());
            t.collect()
        })
        .collect()
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
fn banner_then_reply(o: &AppObservation) -> Verdict {
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

fn exits_then_shutdown(o: &AppObservation) -> Verdict {
    match o.exit {
        None => untestable("the app did not exit by itself within the bound"),
        Some(_) => sc::shutdown_of(&o.peers),
    }
}

/// `handshake`: the wire's order, then how the runtime was closed.
pub(super) fn handshake(o: &AppObservation) -> Vec<Verdict> {
    vec![sc::waits_for_initialize(&wire(o)), exits_then_shutdown(o)]
}

/// `foreign-sessions`: the root's reply printed.
pub(super) fn foreign_sessions(o: &AppObservation) -> Vec<Verdict> {
    vec![completes(
        o,
        "the root's reply",
        "a turn of another session was interleaved",
    )]
}

/// `unknown-events`: the reply printed.
pub(super) fn unknown_events(o: &AppObservation) -> Vec<Verdict> {
    vec![completes(
        o,
        "still here",
        "events of an unknown type were streamed",
    )]
}

/// `long-lines`: the reply printed, and the app's memory while it read the line.
pub(super) fn long_lines(o: &AppObservation) -> Vec<Verdict> {
    let read = completes(
        o,
        "after a long line",
        "the reply's frame was a 48 MiB line",
    );
    let memory = super::line_memory::judge(&o.peers, &o.rss, &read);
    vec![read, memory]
}

/// `backlog`: the reply printed, and the app's memory under other sessions' events.
pub(super) fn backlog(o: &AppObservation) -> Vec<Verdict> {
    let text = backlog::PROMPT.trim_start_matches("reply: ");
    vec![backlog::judge(&o.peers, &o.rss, &|what| {
        completes(o, text, what)
    })]
}

/// `exit-mid-turn`: a non-zero exit with an error.
pub(super) fn exit_mid_turn(o: &AppObservation) -> Vec<Verdict> {
    vec![fails(
        o,
        PeerEvent::Exit(1),
        "the runtime exited mid-turn (code 1)",
    )]
}

/// `stderr-flood`: the reply printed, the runtime never blocked on its stderr.
pub(super) fn stderr_flood(o: &AppObservation) -> Vec<Verdict> {
    vec![sc::stderr_blocked(
        &o.peers,
        completes(o, "after much stderr", sc::FLOOD),
    )]
}

/// `slow-shutdown`, `refused-shutdown`: how the runtime was closed.
pub(super) fn shutdown(o: &AppObservation) -> Vec<Verdict> {
    vec![exits_then_shutdown(o)]
}

/// `non-frame-lines`: launched past the banner, the reply printed.
pub(super) fn non_frame_lines(o: &AppObservation) -> Vec<Verdict> {
    vec![banner_then_reply(o)]
}

/// `stdout-closed`: a non-zero exit with an error.
pub(super) fn stdout_closed(o: &AppObservation) -> Vec<Verdict> {
    vec![fails(o, PeerEvent::StdoutClosed, robust::CLOSED)]
}

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
            ..AppObservation::default()
        }
    }

    #[test]
    fn app_mode_runs_every_scenario_but_those_left_out_each_on_its_run_s_prompt() {
        for s in SCENARIOS {
            assert!(s.prompt().is_some() || !s.in_app_mode(), "{}", s.name);
        }
        let out: Vec<&str> = left_out().iter().map(|l| l.0).collect();
        let expected = [
            "out-of-order",
            "exit-on-request",
            "typed-errors",
            "receipts",
        ];
        assert_eq!(out, expected);
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
    fn the_reply_is_what_was_printed_or_its_last_lines_that_the_runtime_said() {
        let said = ["ok".to_owned(), "tool result: x".to_owned()];
        assert_eq!(reply("id: 1\nok", &said), "ok");
        assert_eq!(reply("ok", &said), "ok");
        assert_eq!(reply("id: 1\ntool result: x", &said), "tool result: x");
        assert_eq!(reply("not ok", &said), "not ok");
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
