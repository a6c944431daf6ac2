//! The judges of the handshake, transport and error scenarios (docs/CONTRACT.md#s15.1 to
//! #s15.6), and the verdict helpers every scenario's judge uses, sans-IO: an [`Observation`] in,
//! a verdict out.

use super::driver::{Op, Outcome};
use super::layers;
use super::log::{PeerEvent, PeerLog};
use super::scenario::Observation;
use crate::suite::verdict::{Failure, FailureKind, Verdict};
use std::time::Duration;

pub(crate) fn fail(reason: impl Into<String>) -> Verdict {
    Verdict::Fail(Box::new(Failure::new(FailureKind::Rule, reason)))
}

pub(crate) fn untestable(reason: impl Into<String>) -> Verdict {
    Verdict::NotTestable {
        reason: reason.into(),
    }
}

/// SKIP, not applicable: the client structurally cannot meet the check's situation (issue 37,
/// item 5); it does not fail the run.
fn not_applicable(why: &str) -> Verdict {
    Verdict::Skip {
        reason: format!(
            "not applicable to this client: {why}, so no response can overtake another"
        ),
    }
}

/// The one verdict, for every check of a scenario, when its driver answered one of the
/// scenario's operations (or one of a `concurrent` operation's) with class `unsupported`: what
/// the client's API lacks is not a failure of the client, and words are never a failure by
/// themselves (docs/CLIENT-DRIVERS.md). `None` when no operation was answered so: the judges
/// decide from what was observed.
///
/// - `concurrent` itself: the client cannot have two requests in flight, so no response can
///   overtake another: SKIP, not applicable (`client.ids-out-of-order`).
/// - `run` with a bound: UNTESTABLE with the driver's words. The protocol has the driver run it
///   unbounded, so that the kit's own bound on the operation shows whether the client hangs; a
///   driver that ran nothing showed nothing.
/// - any other operation (an older SDK without `resume_session` or the working-directory
///   methods): SKIP, "not supported by this client", with the driver's words.
pub(crate) fn unsupported(o: &Observation) -> Option<Verdict> {
    let said = |out: &Outcome| match out {
        Outcome::Err(e) if e.class == "unsupported" => Some(e.message.clone()),
        _ => None,
    };
    let (op, words) = o.ops.iter().find_map(|(op, out, _)| {
        if let Some(w) = said(out) {
            return Some((op, w));
        }
        let (Op::Concurrent(subs), Outcome::Ok(v)) = (op, out) else {
            return None;
        };
        let results = v["results"].as_array()?;
        subs.iter().zip(results).find_map(|(sub, r)| {
            let e = &r["error"];
            (r["ok"] == false && e["class"] == "unsupported")
                .then(|| (sub, e["message"].as_str().unwrap_or("").to_owned()))
        })
    })?;
    let what = match op {
        Op::Concurrent(_) => {
            return Some(not_applicable(&format!(
                "its driver says the client cannot make two requests at once ({words}), and it never had two in flight"
            )))
        }
        Op::RunBounded { .. } => {
            return Some(untestable(format!(
                "its driver says the client cannot bound a run ({words}) and ran nothing, so \
                 no hang could be observed: a driver runs such a run unbounded \
                 (docs/CLIENT-DRIVERS.md), and the kit's own bound on it shows whether the \
                 client hangs"
            )))
        }
        Op::Start => "start a session",
        Op::Run { .. } => "run a prompt",
        Op::Prompt { .. } => "send a prompt without waiting for its run",
        Op::Resume { .. } => "resume a stored session",
        Op::CwdGet { .. } => "get a session's working directory",
        Op::CwdSet { .. } => "set a session's working directory",
        Op::Close => "close",
    };
    Some(Verdict::Skip {
        reason: format!(
            "not supported by this client: it cannot {what} (its driver says: {words})"
        ),
    })
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

pub(super) fn ids_out_of_order(o: &Observation) -> Verdict {
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
        // The driver made both requests at once and both were answered, or says the client's API
        // cannot: the client sends one request at a time, so the rule cannot apply to it (issue
        // 37, item 5). Any other end of the operation says nothing about the client's structure.
        let both = |v: &serde_json::Value| {
            v["results"]
                .as_array()
                .is_some_and(|r| r.len() == 2 && r.iter().all(|x| x["ok"] == true))
        };
        // (A driver's `unsupported` is judged in one place for every check: [`unsupported`].)
        if matches!(outcome(o, 3), Some(Outcome::Ok(v)) if both(v)) {
            return not_applicable("its driver made two requests at once and the client sent the second only after the first was answered (it sends one request at a time)");
        }
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

pub(super) fn forward_compatible(o: &Observation) -> Verdict {
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
        // `finish` is what the client returned to its caller (its status, its finish reason):
        // a kind it turned into another (a failure, say) was not passed through.
        (_, Some(f)) if f != kind => fail(format!(
            "the run's turn/end had the reason kind {kind:?}, and the client returned the run's end to its caller as {f}: a reason kind it does not know was not passed through"
        )),
        _ => Verdict::Pass,
    }
}

pub(super) fn runtime_exit(o: &Observation) -> Verdict {
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
pub(super) fn exit_on_request(o: &Observation) -> Verdict {
    let what = "the runtime exited (code 1) with the working-directory request unanswered";
    match outcome(o, 1) {
        None => untestable("the request was never reached (the client did not start)"),
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

pub(super) fn drains_stderr(o: &Observation) -> Verdict {
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

/// The error response's report; whether the client stays usable after it is judged by the
/// runs that follow ([`super::after`]).
pub(super) fn typed_errors(o: &Observation) -> Verdict {
    match outcome(o, 1) {
        None => untestable("the resume was never reached (the client did not start)"),
        Some(Outcome::Err(e))
            if e.class == "rpc" && e.code == Some(-32603) && e.message.contains("not found") =>
        {
            Verdict::Pass
        }
        Some(Outcome::Err(e)) => fail(format!(
            "the error response -32603 `session \"kit-no-such-session\" not found` was reported as {}",
            Outcome::Err(e.clone()).describe()
        )),
        Some(other) => fail(format!("an error response was reported as {}", other.describe())),
    }
}

#[cfg(test)]
mod tests;
