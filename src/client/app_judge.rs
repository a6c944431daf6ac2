//! How app mode judges the table's scenarios, sans-IO: an [`AppObservation`] in, verdicts out.
//! Every scenario app mode runs is judged by its one judge, the driver mode's, on the app's run
//! read as a driver would report it ([`as_run`]): the client judge is written once.

use super::app::AppObservation;
use super::driver::{DriverError, Op, Outcome};
use super::judges::untestable;
use super::runs;
use super::scenario::{App, Observation, Scenario, SCENARIOS};
use crate::check::CheckId;
use crate::suite::Verdict;
use std::time::Duration;

/// How app mode judges scenario `s` on what the app did: its judge on the app's run read as a
/// driver's; every check untestable when the app never launched the runtime (nothing of the
/// scenario happened); nothing for a scenario it leaves out.
pub(super) fn verdicts(s: &Scenario, o: &AppObservation) -> Vec<Verdict> {
    match s.app {
        App::AsRun if o.peers.is_empty() => {
            let why = format!("the app never launched the runtime (it {})", ended(o));
            s.checks.iter().map(|_| untestable(why.clone())).collect()
        }
        App::AsRun => s.verdicts(&as_run(o, &s.prompt().unwrap_or_default())),
        App::LeftOut(_) => Vec::new(),
    }
}

/// How the app's run ended, as a clause: "exited 1", "was still running at the bound".
fn ended(o: &AppObservation) -> String {
    o.exit.map_or("was still running at the bound".into(), |c| {
        format!("exited {c}")
    })
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
/// and close once it exited. An app that launched the runtime but never prompted it failed its
/// start (a banner it could not read past, say); the run was never reached.
pub(super) fn as_run(o: &AppObservation, prompt: &str) -> Observation {
    let mut w = Observation {
        peers: o.peers.clone(),
        ops: Vec::new(),
        rss: o.rss.clone(),
    };
    let ok = || Outcome::Ok(serde_json::json!({}));
    let error = |message: String| {
        Outcome::Err(DriverError {
            class: "other".into(),
            code: None,
            message,
        })
    };
    let stderr = o.stderr.trim_end();
    if !prompted(o) {
        let why = format!(
            "the app launched the runtime and never prompted it: it {}; stderr {stderr:?}",
            ended(o)
        );
        w.ops = vec![(Op::Start, error(why), o.wall)];
        return w;
    }
    let printed = o.stdout.join("\n");
    let outcome = match o.exit {
        None => Outcome::TimedOut,
        Some(0) => {
            let mut said = said(&w);
            // A `reply:` prompt's text, which the runtime wrote although its frame may be too
            // long for the peer's log to keep (`long-lines`).
            said.extend(prompt.strip_prefix("reply: ").map(str::to_owned));
            Outcome::Ok(serde_json::json!({"text": reply(printed.trim_end(), &said)}))
        }
        Some(c) => error(format!("the app exited {c}; stderr {stderr:?}")),
    };
    let run = Op::Run {
        session: runs::root(&w),
        text: prompt.into(),
    };
    w.ops = vec![(Op::Start, ok(), Duration::ZERO), (run, outcome, o.wall)];
    if o.exit.is_some() {
        w.ops.push((Op::Close, ok(), Duration::ZERO));
    }
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

fn prompted(o: &AppObservation) -> bool {
    o.peers.iter().any(|p| {
        p.requests()
            .iter()
            .any(|(_, r)| r["method"] == "session/prompt")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::log::{PeerEvent, PeerLog};
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
    fn a_reply_prompt_s_text_ends_the_printed_reply_though_its_frame_was_too_long_to_keep() {
        let mut o = prompted(exited(Some(0), ""));
        o.stdout = vec!["session_id:x".into(), "after a long line".into()];
        let r = as_run(&o, "reply: after a long line");
        assert!(matches!(&r.ops[1].1, Outcome::Ok(v) if v["text"] == "after a long line"));
        let r = as_run(&o, "subagent: after a long line");
        assert!(
            matches!(&r.ops[1].1, Outcome::Ok(v) if v["text"] == "session_id:x\nafter a long line")
        );
    }

    #[test]
    fn the_reply_is_what_was_printed_or_its_last_lines_that_the_runtime_said() {
        let said = ["ok".to_owned(), "tool result: x".to_owned()];
        assert_eq!(reply("id: 1\nok", &said), "ok");
        assert_eq!(reply("ok", &said), "ok");
        assert_eq!(reply("id: 1\ntool result: x", &said), "tool result: x");
        assert_eq!(reply("not ok", &said), "not ok");
    }

    fn scenario(name: &str) -> &'static Scenario {
        SCENARIOS.iter().find(|s| s.name == name).unwrap()
    }

    fn prompted(mut o: AppObservation) -> AppObservation {
        let prompt =
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s"}}"#;
        o.peers[0]
            .events
            .push((Duration::ZERO, PeerEvent::Received(prompt.into())));
        o
    }

    fn words(v: &[Verdict]) -> Vec<&'static str> {
        v.iter().map(Verdict::word).collect()
    }

    #[test]
    fn a_runtime_exit_must_end_the_app_non_zero() {
        let judge = |o: &AppObservation| words(&verdicts(scenario("exit-mid-turn"), o));
        assert_eq!(judge(&prompted(exited(Some(1), "app: gone"))), ["PASS"]);
        // The exit code is the app's error, as a driver's error class is.
        assert_eq!(judge(&prompted(exited(Some(1), ""))), ["PASS"]);
        assert_eq!(judge(&prompted(exited(Some(0), ""))), ["FAIL"]);
        assert_eq!(judge(&prompted(exited(None, ""))), ["FAIL"]);
        let mut quiet = prompted(exited(Some(1), "x"));
        quiet.peers[0].events.retain(|e| e.1 != PeerEvent::Exit(1));
        assert_eq!(judge(&quiet), ["UNTESTABLE"]);
    }

    #[test]
    fn an_app_that_never_prompted_is_untestable_unless_the_scenario_stopped_its_start() {
        let mut o = exited(Some(0), "");
        o.stdout = vec!["still here".into()];
        let unknown = scenario("unknown-events");
        assert_eq!(words(&verdicts(unknown, &o)), ["UNTESTABLE"]);
        let mut alone = o.clone();
        alone.peers.clear();
        let v = verdicts(unknown, &alone);
        assert!(
            v[0].summary()
                .contains("never launched the runtime (it exited 0)"),
            "{v:?}"
        );
        assert_eq!(words(&verdicts(unknown, &prompted(o.clone()))), ["PASS"]);
        o.exit = Some(3);
        assert_eq!(words(&verdicts(unknown, &prompted(o.clone()))), ["FAIL"]);
        // Launched and never prompted: the banner stopped it.
        let v = verdicts(scenario("non-frame-lines"), &o);
        assert_eq!(words(&v), ["FAIL"]);
        assert!(
            v[0].summary().contains("never prompted it: it exited 3"),
            "{v:?}"
        );
    }
}
