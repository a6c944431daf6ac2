//! The judges of the run scenarios (docs/CONTRACT.md#s15.7 to #s15.10), sans-IO: what the peer
//! wrote (`turns.rs` layers) and the run's outcome in, a verdict out. Each verdict is
//! UNTESTABLE when the situation it judges never arose on the wire.

use super::driver::{Op, Outcome};
use super::grandchild::{AFTER_GRANDCHILD, GRANDCHILD};
use super::judges::{completes, fail, outcome, untestable};
use super::log::PeerEvent;
use super::scenario::{run, Observation};
use super::turns::{self, is_receipt, Chatty, FORK};
use crate::suite::verdict::Verdict;
use serde_json::Value;

/// The receipts scenario's first prompt (not waited for) and its run's prompt.
const FIRST: &str = "the first prompt's reply";
const RIGHT: &str = "the right run";

/// Start, a prompt not waited for, a run on the same session, close.
pub fn receipts_ops() -> Vec<Op> {
    let first = Op::Prompt {
        session: "s1".into(),
        text: format!("reply: {FIRST}"),
    };
    vec![
        Op::Start,
        first,
        run("s1", &format!("reply: {RIGHT}")),
        Op::Close,
    ]
}

/// Frames written on the peers, parsed, in order.
fn written(o: &Observation) -> Vec<Value> {
    o.peers
        .iter()
        .flat_map(|p| p.written().into_iter().map(|(_, v)| v))
        .collect()
}

fn session_is(v: &Value, s: &str) -> bool {
    v["params"]["sessionId"] == s
}

fn idle(v: &Value, s: &str) -> bool {
    v["method"] == "session.status" && v["params"]["status"] == "idle" && session_is(v, s)
}

/// The run's root session: that of the first prompt the client sent (`s1` in driver mode; an
/// app names its own), `s1` when none was sent.
pub(crate) fn root(o: &Observation) -> String {
    let prompt =
        (o.peers.iter().flat_map(|p| p.requests())).find(|(_, r)| r["method"] == "session/prompt");
    let id = prompt.and_then(|(_, r)| r["params"]["sessionId"].as_str().map(str::to_owned));
    id.unwrap_or_else(|| "s1".into())
}

/// The look-alikes came first, then the first prompt's idle, then the run's own receipt.
pub fn receipt_correlation(o: &Observation) -> Verdict {
    let w = written(o);
    let Some(fork) = w.iter().position(|v| is_receipt(v) && session_is(v, FORK)) else {
        return untestable("the client never sent a second prompt, so no look-alike receipt came");
    };
    let own = w[fork..]
        .iter()
        .position(|v| is_receipt(v) && session_is(v, "s1"));
    if !own.is_some_and(|r| w[fork..fork + r].iter().any(|v| idle(v, "s1"))) {
        return untestable(
            "no idle of the first prompt came between the look-alike and the run's receipt",
        );
    }
    match outcome(o, 2) {
        // The text can come out right by luck of batching (an idle read with later frames passed
        // over): the run's events say where it started, when the driver reports them.
        Some(Outcome::Ok(v)) if ends(v) > 1 => fail(format!(
            "the run's events hold {} turn/end events: it collected the first prompt's turn too, \
             so it did not start at its own receipt (its text, {}, is right only because of how \
             the frames were read)",
            ends(v),
            v["text"]
        )),
        Some(Outcome::Ok(v)) if v["text"] == FIRST => fail(format!(
            "the run returned {FIRST:?}, the first prompt's text, instead of {RIGHT:?}: it took \
             another prompt's receipt (or {FORK}'s splice of its message) for its own and ended \
             at that prompt's idle"
        )),
        _ => completes(
            o,
            2,
            RIGHT,
            "another prompt's receipt and idle, and another session's splice of the same message, came before the run's receipt",
        ),
    }
}

/// The `turn/end` events among a run result's `events` (0 when the driver reports none).
fn ends(v: &Value) -> usize {
    let evs = v["events"].as_array();
    evs.into_iter()
        .flatten()
        .filter(|e| *e == "turn/end")
        .count()
}

/// Why a subagent scenario's situation did not arise.
const NO_SUBAGENT: &str = "no subagent was spawned: the client never prompted, or the runtime it \
     launched offers no subagent tool (a profile without one, such as sdk-minimal)";

/// The subagent scenario's prompt: the root spawns a child, goes idle, runs again on its result.
pub const SUBAGENT_PROMPT: &str = "subagent: reply: the child's reply";

fn texts(w: &[Value], s: &str) -> Vec<(usize, String)> {
    w.iter()
        .enumerate()
        .filter(|(_, v)| session_is(v, s) && v["params"]["event"]["type"] == "assistant/message")
        .map(|(i, v)| {
            let c = v["params"]["event"]["data"]["message"]["content"].as_array();
            let t = c.into_iter().flatten().filter_map(|b| b["text"].as_str());
            (i, t.collect())
        })
        .collect()
}

/// The run's text is the root's last, after the subagent's result; not its first turn's.
pub fn subagent_trees(o: &Observation) -> Verdict {
    let w = written(o);
    let Some(child) = w.iter().find(|v| v["method"] == "subagent.started") else {
        return untestable(NO_SUBAGENT);
    };
    let child = child["params"]["childSessionId"].as_str().unwrap_or("");
    let s1 = root(o);
    let idles: Vec<usize> = (0..w.len()).filter(|i| idle(&w[*i], &s1)).collect();
    let (Some(&first), Some(&last)) = (idles.first(), idles.last()) else {
        return untestable("the root never went idle");
    };
    let root = texts(&w, &s1);
    let before = |at: usize| {
        root.iter()
            .rev()
            .find(|(i, _)| *i < at)
            .map(|t| t.1.clone())
    };
    let (Some(early), Some(right)) = (before(first), before(last)) else {
        return untestable("the root said nothing before its idles");
    };
    if first == last {
        // The subagent was still running at that idle (its result runs the root again, §15.8):
        // a run that ended there, before the rest was written, ended too early.
        return match outcome(o, 1) {
            Some(Outcome::Ok(v)) if v["text"] == early.as_str() => fail(format!(
                "the run ended at the root's first idle, with its subagent still running: it \
                 returned the first turn's {early:?}"
            )),
            _ => untestable("the root went idle once: it never ran again on the subagent's result"),
        };
    }
    let child_text = texts(&w, child).pop().map(|t| t.1);
    match outcome(o, 1) {
        Some(Outcome::Ok(v)) if v["text"] == early.as_str() => fail(format!(
            "the run ended before the subagent's result (at the root's first idle, or at the \
             child's): it returned the first turn's {early:?} instead of {right:?}"
        )),
        Some(Outcome::Ok(v)) if child_text.as_deref().is_some_and(|c| v["text"] == c) => {
            fail(format!(
                "the run returned the child's text {} instead of the root's {right:?}",
                v["text"]
            ))
        }
        _ => completes(
            o,
            1,
            &right,
            "the root went idle, then ran again on its subagent's result",
        ),
    }
}

/// The grandchild scenario: the root went idle with its child finished and the grandchild the
/// child started still running; the run must go on to the root's idle after the grandchild's end.
pub fn descendant_subagents(o: &Observation) -> Verdict {
    let w = written(o);
    let started = |v: &Value| {
        v["method"] == "subagent.started" && v["params"]["childSessionId"] == GRANDCHILD
    };
    if !w.iter().any(started) {
        return untestable(NO_SUBAGENT);
    }
    let s1 = root(o);
    let child_done = (w.iter()).position(|v| {
        v["method"] == "subagent.finished" && v["params"]["parentSessionId"] == s1.as_str()
    });
    let Some(done) = child_done.filter(|&i| w[i..].iter().any(|v| idle(v, &s1))) else {
        return untestable(
            "the root never went idle with its child finished, so the grandchild was never the \
             last subagent running",
        );
    };
    let root = texts(&w, &s1);
    let returned = match outcome(o, 1) {
        Some(Outcome::Ok(v)) => v["text"].as_str().unwrap_or("").to_owned(),
        _ => String::new(),
    };
    let at = root
        .iter()
        .find(|(_, t)| *t == returned && t != AFTER_GRANDCHILD);
    match at {
        Some((i, _)) if *i > done => fail(format!(
            "the run ended at the root's idle after its child finished, with the child's own \
             subagent ({GRANDCHILD}) still running: it returned {returned:?} instead of \
             {AFTER_GRANDCHILD:?}"
        )),
        Some(_) => fail(format!(
            "the run ended before the root's child finished (at the root's first idle, or at \
             the child's): it returned {returned:?} instead of {AFTER_GRANDCHILD:?}"
        )),
        None => completes(
            o,
            1,
            AFTER_GRANDCHILD,
            "the root went idle with its child finished and the child's own subagent running",
        ),
    }
}

/// The chatty scenario's other sessions: 16, each streaming 1,000 events during the run.
pub const CHATTY: Chatty = Chatty {
    sessions: 16,
    chunks: 1000,
};
/// The chatty scenario's prompt.
pub const CHATTY_PROMPT: &str = "reply: through the chatter";

/// The run completes with its text; the frames of other sessions were written.
pub fn chatty_sessions(o: &Observation) -> Verdict {
    let needle = format!("\"sessionId\":\"{}", turns::CHATTY);
    let chatter = o
        .peers
        .iter()
        .flat_map(|p| &p.events)
        .filter(|(_, e)| matches!(e, PeerEvent::Wrote(l) if l.contains(&needle)))
        .count();
    if chatter == 0 {
        return untestable("the client never prompted, so no other session chattered");
    }
    let text = CHATTY_PROMPT.trim_start_matches("reply: ");
    let what = format!(
        "{chatter} notifications of {} other sessions were interleaved with the run",
        CHATTY.sessions
    );
    completes(o, 1, text, &what)
}

/// The idle scenario's bound on the run, in milliseconds.
pub const RUN_BOUND_MS: u64 = 3000;

/// The idle scenario's prompt.
pub const NO_IDLE_PROMPT: &str = "reply: no idle follows";

/// Start, a run with a bound whose idle never comes, close.
pub fn no_idle_ops() -> Vec<Op> {
    let run = Op::RunBounded {
        session: "s1".into(),
        text: NO_IDLE_PROMPT.into(),
        timeout_ms: RUN_BOUND_MS,
    };
    vec![Op::Start, run, Op::Close]
}

/// How much longer than the bound it gave the kit waits for a bounded run's result before it
/// takes the run for hung (whatever `--timeout`): a client that keeps its bound answers well
/// within it, and a client with no bound (its driver runs the run unbounded) is seen hanging.
pub const RUN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The run ends in an error within the kit's bound (the bound it was given and [`RUN_GRACE`]);
/// a run still waiting then hangs its caller: judged from what the kit observed, never from
/// the driver's words (a driver's `unsupported` is judged by `judges::unsupported`).
pub fn idle_never_comes(o: &Observation) -> Verdict {
    let s1 = root(o);
    let ended = written(o)
        .iter()
        .any(|v| session_is(v, &s1) && v["params"]["event"]["type"] == "turn/end");
    if !ended {
        return untestable("the client's turn never ended, so no idle was missing");
    }
    match outcome(o, 1) {
        Some(Outcome::Err(_)) => Verdict::Pass,
        Some(Outcome::Ok(_)) => {
            untestable("the run ended without its idle (at turn/end?), so no wait for it arose")
        }
        Some(Outcome::TimedOut) => {
            let waited = o.ops.get(1).map_or(std::time::Duration::ZERO, |x| x.2);
            fail(format!(
                "the run never ended: its turn ended (turn/end written) and its idle never came, \
                 and {:.1} s later, though the run was given a bound of {RUN_BOUND_MS} ms, it had \
                 not returned (the kit stopped waiting): the client hangs",
                waited.as_secs_f64()
            ))
        }
        Some(other) => fail(format!(
            "the run whose idle never came: {}",
            other.describe()
        )),
        None => untestable("the run was never reached"),
    }
}

#[cfg(test)]
mod tests;
