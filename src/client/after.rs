//! What a client does after a scenario's fault (docs/CONTRACT.md#s15, issue 37): the kit asks
//! for two more runs, one on the session the scenario used and one on a new session, before it
//! closes the client, and judges them with the fault's check (sans-IO). A client that survives
//! the fault itself but is broken for what comes next (its next run hangs, or raises the old
//! error again) fails that check, with every distinct problem named, not only the first.
//!
//! The exit scenarios run none. A runtime's exit closes its stdout, so what a client does with
//! later requests is what `stdout-closed`'s runs judge, where the runtime stays alive and
//! reading and the outcome is the same every time. After an exit it hangs on a race: a request
//! written before the process is gone reaches a pipe still open, one written after fails to
//! write. A client that forgets the end of stdout (the official Python SDK: its reader fails the
//! requests pending when stdout ends, and no later one) hung there in 2 of about 30 runs on a
//! loaded machine: the same bug as `stdout-closed`'s, found a second time, and only by chance.

use super::driver::{Op, Outcome};
use super::judges::fail;
use super::scenario::{run, Observation};
use crate::suite::verdict::Verdict;

/// What a client must do with the runs that follow a scenario's fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// No runs follow: the scenario's situation is no fault (or costs too much to repeat).
    Nothing,
    /// The fault left the runtime serving (an error response, events or lines it had to skip):
    /// each later run completes with its own text.
    Recover,
    /// The fault took the runtime away (it exited, or closed its stdout): each later run ends
    /// promptly, with its text (a client that launched a new runtime) or with an error that is
    /// not its own bound expiring; it never hangs.
    EndPromptly,
}

/// The runs that follow the fault: (session, prompt, the reply it must return).
pub const RUNS: [(&str, &str, &str); 2] = [
    (
        "s1",
        "reply: after the fault, on the same session",
        "after the fault, on the same session",
    ),
    (
        "kit-after",
        "reply: after the fault, on a new session",
        "after the fault, on a new session",
    ),
];

/// `ops` with the follow-up runs before its closing `Close` (at the end when there is none).
pub fn with_runs(mut ops: Vec<Op>, after: After) -> Vec<Op> {
    if after == After::Nothing {
        return ops;
    }
    let at = match ops.last() {
        Some(Op::Close) => ops.len() - 1,
        _ => ops.len(),
    };
    let runs = RUNS.iter().map(|(s, text, _)| run(s, text));
    ops.splice(at..at, runs);
    ops
}

/// What went wrong in the follow-up runs of `o`, one sentence each, in order.
pub fn problems(o: &Observation, after: After) -> Vec<String> {
    if after == After::Nothing {
        return Vec::new();
    }
    let mut found = Vec::new();
    // What the last run's problem was, apart from which run had it: a repeat says so briefly.
    let mut last: Option<String> = None;
    for (session, prompt, reply) in RUNS {
        let Some((_, out, took)) = o.ops.iter().find(|(op, _, _)| *op == run(session, prompt))
        else {
            // Not reached: an earlier operation never answered, and says so itself.
            continue;
        };
        let which = if session == RUNS[0].0 {
            "the next run on the same session"
        } else {
            "a run on a new session"
        };
        let problem = match (out, after) {
            (Outcome::Ok(v), _) if v["text"] == reply => None,
            (Outcome::Ok(v), _) => Some(format!("returned {} instead of {reply:?}", v["text"])),
            (Outcome::TimedOut, _) => Some(format!(
                "never ended (no result in {took:.0?}): the client hangs"
            )),
            (Outcome::Err(e), After::EndPromptly) if e.class == "timeout" => Some(format!(
                "failed only when the client's own bound expired ({})",
                e.message
            )),
            (Outcome::Err(_), After::EndPromptly) => None,
            (other, _) => Some(format!("failed: {}", other.describe())),
        };
        let Some(problem) = problem else {
            last = None;
            continue;
        };
        match &last {
            Some(l) if *l == problem => found.push(format!("{which} too, the same way")),
            _ => found.push(format!("{which} {problem}")),
        }
        last = Some(problem);
    }
    found
}

/// The fault's verdict `v` with the follow-up `problems` added: a pass with problems fails, a
/// failure names them after its own reason; a check that was not exercised stays so (the runs
/// after a fault that never happened say nothing about it).
pub fn merge(v: Verdict, problems: &[String]) -> Verdict {
    if problems.is_empty() {
        return v;
    }
    let after = format!("after the fault, {}", problems.join("; "));
    match v {
        Verdict::Pass => fail(after),
        Verdict::Fail(mut f) => {
            f.reason = format!("{}; and {after}", f.reason);
            Verdict::Fail(f)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::driver::DriverError;
    use serde_json::json;
    use std::time::Duration;

    fn observed(outcomes: [Outcome; 2]) -> Observation {
        let ops = with_runs(vec![Op::Start, Op::Close], After::Recover);
        let mut outs = vec![Outcome::Ok(json!({}))];
        outs.extend(outcomes);
        outs.push(Outcome::Ok(json!({})));
        Observation {
            ops: (ops.into_iter().zip(outs))
                .map(|(op, out)| (op, out, Duration::from_secs(15)))
                .collect(),
            ..Default::default()
        }
    }

    fn error(class: &str) -> Outcome {
        Outcome::Err(DriverError {
            class: class.into(),
            code: Some(-32603),
            message: "session \"kit-no-such-session\" not found".into(),
        })
    }

    fn replied(i: usize) -> Outcome {
        Outcome::Ok(json!({"text": RUNS[i].2}))
    }

    #[test]
    fn the_runs_go_before_the_close() {
        let ops = with_runs(vec![Op::Start, Op::Close], After::EndPromptly);
        assert_eq!(ops.len(), 4);
        assert_eq!(ops[3], Op::Close);
        assert_eq!(ops[1], run(RUNS[0].0, RUNS[0].1));
        assert_eq!(with_runs(vec![Op::Start], After::Nothing), vec![Op::Start]);
    }

    #[test]
    fn a_client_poisoned_by_an_error_has_two_problems_after_it() {
        let o = observed([error("rpc"), error("rpc")]);
        let p = problems(&o, After::Recover);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(
            p[0].starts_with("the next run on the same session failed: error class \"rpc\""),
            "{p:?}"
        );
        assert_eq!(p[1], "a run on a new session too, the same way", "{p:?}");
        assert!(problems(&observed([replied(0), replied(1)]), After::Recover).is_empty());
    }

    #[test]
    fn after_the_runtime_went_away_an_error_is_an_end_a_hang_or_own_bound_is_not() {
        let ended = observed([error("transport"), replied(1)]);
        assert!(problems(&ended, After::EndPromptly).is_empty());
        let p = problems(
            &observed([Outcome::TimedOut, error("timeout")]),
            After::EndPromptly,
        );
        assert!(
            p[0].contains("never ended (no result in 15s): the client hangs"),
            "{p:?}"
        );
        assert!(
            p[1].contains("only when the client's own bound expired"),
            "{p:?}"
        );
        // A wrong text is wrong whatever the fault.
        let p = problems(&observed([replied(1), replied(1)]), After::EndPromptly);
        assert_eq!(p.len(), 1, "{p:?}");
    }

    #[test]
    fn problems_fail_a_pass_extend_a_failure_and_leave_an_untestable_check() {
        let p = vec!["x hung".to_owned(), "y failed".to_owned()];
        let Verdict::Fail(f) = merge(Verdict::Pass, &p) else {
            panic!()
        };
        assert_eq!(f.reason, "after the fault, x hung; y failed");
        let Verdict::Fail(f) = merge(fail("the code was missing"), &p) else {
            panic!()
        };
        assert_eq!(
            f.reason,
            "the code was missing; and after the fault, x hung; y failed"
        );
        let u = Verdict::NotTestable {
            reason: "no fault".into(),
        };
        assert_eq!(merge(u.clone(), &p), u);
        assert_eq!(merge(Verdict::Pass, &[]), Verdict::Pass);
    }
}
