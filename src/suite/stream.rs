//! The stream rules (the registry's `stream` checks): judged over every transcript the suite collects, whatever check's trace
//! produced it, and blamed on their own check. Each rule is written so that another rule's breakage
//! does not trip it (an unsolicited response is left to the frame checks, a replayed event to
//! `turn.no-replay`), which keeps one bug from failing several checks.

use crate::edition::Edition;
use crate::rules::replay::{Replay, Replays};
use crate::rules::Profile;
use crate::rules::{CheckId, Checker, Sent};
use crate::runner::Transcript;
use crate::wire::json::JsonView;
use crate::wire::output::{Frame, Output};
use crate::wire::{json, LineDecoder, LineEvent};
use serde_json::Value;
use std::collections::HashSet;

/// One broken stream rule in one transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The check id of the rule.
    pub check: CheckId,
    /// 1-based stdout line of the first offending frame, when there is one.
    pub stdout_line: Option<usize>,
    /// The offending line, clipped.
    pub line: Option<String>,
    /// What broke, in one sentence.
    pub message: String,
}

/// Judges every stream rule (and the rule of `own`, the check whose trace produced it) over one
/// transcript with the shared rule engine ([`crate::rules`],
/// the one the fuzzer uses), keeping its findings on the rules above; at most one finding per
/// rule (the first). The transcript holds what was written and what was read but not how they
/// interleaved, so every sent line is fed first.
pub fn judge(t: &Transcript, own: Option<CheckId>, edition: Edition, strict: bool) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut push = |f: Finding| {
        if !out.iter().any(|o| o.check == f.check) {
            out.push(f);
        }
    };
    // Persistence may resume sessions in these transcripts: a resumed session's seq and turns
    // continue its stored log; every other session was created in the transcript (the checker
    // tells them apart by the session/resume requests it read), so its seq starts at 0.
    let mut profile = Profile::for_edition(edition, true);
    profile.allow_method_not_found = !strict;
    profile.member_order = strict;
    let mut checker = Checker::new(profile);
    let mut keys: HashSet<String> = HashSet::new();
    let mut decoder = LineDecoder::default();
    decoder.push(&t.sent, &mut |e| {
        if let LineEvent::Line(l) = e {
            if let Sent::Request { key, .. } = checker.sent(l) {
                keys.insert(key);
            }
        }
    });
    let mut seen_events: HashSet<&str> = HashSet::new();
    let mut replays = Replays::default();
    for o in &t.stdout {
        let finding = |check, message| Finding {
            check,
            stdout_line: Some(o.line),
            line: Some(crate::trace::explain::clip(o.text(), 200)),
            message,
        };
        // A frame identical to an earlier event is a replay, `turn.no-replay`'s: judged once,
        // there, and not again as a seq or turn the session already had.
        if matches!(o.frame(), Frame::Notification { method, .. } if method == "session.event")
            && !seen_events.insert(o.text())
        {
            let m =
                "an event already streamed is streamed again (a replay of the session's history)";
            push(finding(CheckId::TurnNoReplay, m.to_owned()));
            continue;
        }
        // A replay that renumbers the old events is told by the messages it streams again:
        // `turn.no-replay`'s too. Its events still reach the checker (their seq is new), but
        // what they break (a turn counted again) is the replay's, not another rule's.
        let replay = replayed(&mut replays, o);
        if replay == Replay::Starts {
            let m = "a message already streamed is streamed again with a new seq (a replay of the session's history, renumbered)";
            push(finding(CheckId::TurnNoReplay, m.to_owned()));
        }
        // An answer to no request is judged by the check that sent what it answers (a
        // notification, a malformed line, an invalid id), not here.
        if unsolicited(o, &keys) {
            continue;
        }
        let judged = checker.received(o);
        if replay != Replay::New {
            continue;
        }
        for v in judged.violations {
            // The stream rules are judged over every transcript; a rule the trace check `own`
            // owns, over its own trace's.
            if v.rule.info().is_stream() || Some(v.rule) == own {
                push(finding(v.rule, v.message));
            }
        }
    }
    out
}

/// What a line is to the session's replays: [`Replay::New`] unless it is an event.
fn replayed(replays: &mut Replays, o: &Output) -> Replay {
    let Some(p) = o.params_of("session.event") else {
        return Replay::New;
    };
    match (p.get("sessionId").and_then(|s| s.as_str()), p.get("event")) {
        (Some(sid), Some(ev)) => replays.event(sid, ev),
        _ => Replay::New,
    }
}

/// Whether a line is a response whose id no request carried (in either JSON type).
fn unsolicited(o: &Output, keys: &HashSet<String>) -> bool {
    let Frame::Response { id: key, .. } = o.frame() else {
        return false;
    };
    if keys.contains(key) {
        return false;
    }
    // The same id in the other JSON type (`7` for `"7"`) answers its request: a type change.
    let swapped = match json::parse(key).map(|p| p.value) {
        Ok(Value::String(s)) => json::parse(&s)
            .ok()
            .filter(|p| p.value.is_number())
            .map(|p| json::to_string(&p.value)),
        Ok(Value::Number(_)) => Some(json::to_string(&Value::String(key.clone()))),
        _ => None,
    };
    !swapped.is_some_and(|k| keys.contains(&k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(sent: &str, lines: &[&str]) -> Transcript {
        let mut t = Transcript::default();
        t.sent = sent.as_bytes().to_vec();
        t.stdout = (lines.iter().enumerate())
            .map(|(i, s)| Output::parse(i + 1, s.to_string()))
            .collect();
        t
    }

    fn rules(f: &[Finding]) -> Vec<&'static str> {
        f.iter().map(|f| f.check.as_str()).collect()
    }

    #[test]
    fn a_clean_transcript_breaks_no_rule() {
        let tr = t(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n",
            &[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"a b"}}"#,
                r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":0,"time":1795984000000,"data":{}}}}"#,
                r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":1,"time":1795984000000,"data":{}}}}"#,
            ],
        );
        assert_eq!(judge(&tr, None, Edition::Current, false), vec![]);
    }

    #[test]
    fn each_rule_is_blamed_once_on_its_own_check() {
        let tr = t(
            "{\"id\":1,\"method\":\"x\"}\n{\"id\":2,\"method\":\"y\"}\n",
            &[
                "booting\r",
                r#"{"jsonrpc": "2.0", "id": 1, "result": {}}"#,
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                r#"{"jsonrpc":"2.0","id":"2","result":{}}"#,
                r#"{"jsonrpc":"2.0","id":"nobody","error":{"code":-32700,"message":"x"}}"#,
                r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":0,"data":{}}}}"#,
                r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":2,"time":1795984000000,"data":{}}}}"#,
            ],
        );
        assert_eq!(
            rules(&judge(&tr, None, Edition::Current, false)),
            [
                "stdout.lf-only",
                "stdout.frames-only",
                "stdout.compact",
                "response.exactly-once",
                "response.id-type-preserved",
                "event.time",
                "session.seq-contiguous"
            ],
            "the unsolicited -32700 error is left to the frame checks"
        );
    }

    #[test]
    fn replayed_events_and_reserved_codes_on_requests() {
        let ev = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":0,"time":1795984000000,"data":{}}}}"#;
        let tr = t(
            "{\"id\":\"a\",\"method\":\"x\"}\n",
            &[
                ev,
                ev,
                r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"x"}}"#,
            ],
        );
        assert_eq!(
            rules(&judge(&tr, None, Edition::Current, false)),
            ["turn.no-replay", "error.no-reserved-codes"],
            "the replay is judged once, as a replay"
        );
    }
}
