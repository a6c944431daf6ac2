//! The robustness suite (`--suite robustness`, docs/CONTRACT.md#s15.11): what the contract forbids
//! a runtime but clients meet anyway, judged SHOULD at most. Its layers break §2.1 and §7 on
//! purpose; its judges are sans-IO like the contract suite's. Its scenarios are in the one table
//! (`table.rs`).

use super::driver::{Op, Outcome};
use super::judges::{completes, fail, outcome, untestable};
use super::layers::{Action, Layer};
use super::log::PeerEvent;
use super::scenario::Observation;
use crate::suite::verdict::Verdict;

/// The lines the [`NonFrameLines`] layer writes on stdout: a banner before the `initialize`
/// answer, a blank line, and a log line in the middle of each turn.
pub const NON_FRAMES: [&str; 3] = [
    "dsh: starting (a banner on stdout, not a frame)",
    "",
    "kit: a log line on stdout in the middle of a turn, not a frame",
];

/// Writes lines that are not frames on stdout (§2.1 forbids them; a debug print, a banner, a
/// wrapper script's echo put them there in practice).
#[derive(Default)]
pub struct NonFrameLines;

impl Layer for NonFrameLines {
    fn boot(&mut self) -> Vec<Action> {
        NON_FRAMES[..2]
            .iter()
            .map(|l| Action::Frame((*l).to_owned()))
            .collect()
    }
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        let mut out = Vec::new();
        if line.contains("\"assistant/message\"") {
            out.push(Action::Frame(NON_FRAMES[2].to_owned()));
        }
        out.push(Action::Frame(line));
        out
    }
}

/// Closes stdout right after the first prompt's response and lives on, reading stdin (§7 forbids
/// it; a runtime whose stdout was redirected by a plugin, or a wrapper that lost it, does it).
#[derive(Default)]
pub struct StdoutClosed {
    done: bool,
}

impl Layer for StdoutClosed {
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        if self.done {
            return Vec::new();
        }
        let receipt = serde_json::from_str::<serde_json::Value>(&line)
            .is_ok_and(|v| v["result"].get("messageId").is_some());
        self.done = receipt;
        let mut out = vec![Action::Frame(line)];
        if receipt {
            out.push(Action::CloseStdout);
        }
        out
    }
}

/// Start, one run of `text` on `s1`, close.
pub(super) fn run(text: &str) -> Vec<Op> {
    vec![
        Op::Start,
        Op::Run {
            session: "s1".into(),
            text: text.into(),
        },
        Op::Close,
    ]
}

/// What the non-frame lines scenario did.
pub const NON_FRAME: &str = "the runtime wrote lines that are not frames on stdout (a banner before the initialize answer, a blank line, a log line in the turn)";

pub(super) fn non_frame_lines(o: &Observation) -> Verdict {
    match outcome(o, 0) {
        Some(Outcome::Ok(_)) => completes(o, 1, "after non-frame lines", NON_FRAME),
        Some(other) => fail(format!(
            "{NON_FRAME}; the start failed: {}",
            other.describe()
        )),
        None => untestable("the start was never sent"),
    }
}

/// What the stdout-closed scenario did.
pub const CLOSED: &str = "the runtime closed its stdout after the prompt's response and lived on";

pub(super) fn stdout_closed(o: &Observation) -> Verdict {
    let closed = o
        .peers
        .iter()
        .any(|p| p.events.iter().any(|(_, e)| *e == PeerEvent::StdoutClosed));
    if !closed {
        return untestable("the client never prompted, so the runtime never closed its stdout");
    }
    match outcome(o, 1) {
        Some(Outcome::Err(e)) if e.class == "timeout" => fail(format!(
            "{CLOSED}; the client noticed only by its own timeout: {}",
            e.message
        )),
        Some(Outcome::Err(_)) => Verdict::Pass,
        Some(Outcome::Ok(v)) => fail(format!("{CLOSED}; the run reported success: {v}")),
        Some(Outcome::TimedOut) => fail(format!("{CLOSED}; the run never ended: the client hangs")),
        Some(other) => fail(format!("{CLOSED}: {}", other.describe())),
        None => untestable("the run was never reached"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::layers::Stack;
    use super::*;

    #[test]
    fn stdout_closes_after_the_receipt_and_nothing_is_written_after_it() {
        let mut s = Stack(vec![Box::new(StdoutClosed::default())]);
        let note = r#"{"jsonrpc":"2.0","method":"session.status","params":{}}"#;
        assert_eq!(s.output(note.into(), 0).len(), 1);
        let receipt = r#"{"jsonrpc":"2.0","id":2,"result":{"messageId":"m"}}"#;
        assert_eq!(s.output(receipt.into(), 1)[1], Action::CloseStdout);
        assert!(s.output(note.into(), 2).is_empty());
    }

    #[test]
    fn a_timeout_error_is_no_notice_of_the_closed_stdout() {
        use super::super::driver::DriverError;
        use super::super::log::PeerLog;
        use std::time::Duration;
        let peer = PeerLog {
            n: 1,
            argv: Vec::new(),
            events: vec![(Duration::ZERO, PeerEvent::StdoutClosed)],
        };
        let with = |class: &str| Observation {
            peers: vec![peer.clone()],
            ops: run("x")
                .into_iter()
                .map(|op| {
                    let e = DriverError {
                        class: class.into(),
                        code: None,
                        message: "m".into(),
                    };
                    (op, Outcome::Err(e), Duration::ZERO)
                })
                .collect(),
            ..Default::default()
        };
        assert_eq!(stdout_closed(&with("transport")), Verdict::Pass);
        assert!(matches!(stdout_closed(&with("timeout")), Verdict::Fail(_)));
    }
}
