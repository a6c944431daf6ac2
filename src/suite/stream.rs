//! The stream rules (the registry's `stream` checks): judged over every transcript the suite
//! collects, whatever check's trace produced it, and blamed on their own check. The judging is
//! the conversation's ([`crate::rules::Conversation`], the one `fuzz` uses): each rule is written
//! so that another rule's breakage does not trip it (an unsolicited response is left to the frame
//! checks, a replayed event to `turn.no-replay`), which keeps one bug from failing several checks.

use crate::edition::Edition;
use crate::rules::{CheckId, Conversation, Profile, Unsolicited};
use crate::runner::Transcript;
use crate::wire::{LineDecoder, LineEvent};

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
    /// The part of the line that shows it, where the rule names one.
    pub difference: Option<crate::rules::evidence::Difference>,
}

/// Judges every stream rule (and the rule of `own`, the check whose trace produced it) over one
/// transcript, keeping its findings on the rules above; at most one finding per rule (the
/// first). The transcript holds what was written and what was read but not how they
/// interleaved, so every sent line is fed first.
pub fn judge(t: &Transcript, own: Option<CheckId>, edition: Edition, strict: bool) -> Vec<Finding> {
    judge_with(t, own, edition, strict, Unsolicited::Left)
}

/// [`judge`] as the black-box fuzzer judges a conversation: lines that answer no request (an
/// answer to a notification, a second answer) are judged by the rules too, not left to a trace's
/// matcher. `replay` judges a fuzz finding's trace (`# class:`) so, whose matcher ignores the
/// answers the fuzzer's rules judge.
pub fn judge_as_fuzzed(
    t: &Transcript,
    own: Option<CheckId>,
    edition: Edition,
    strict: bool,
) -> Vec<Finding> {
    judge_with(t, own, edition, strict, Unsolicited::Judged)
}

fn judge_with(
    t: &Transcript,
    own: Option<CheckId>,
    edition: Edition,
    strict: bool,
    unsolicited: Unsolicited,
) -> Vec<Finding> {
    // Persistence may resume sessions in these transcripts: a resumed session's seq and turns
    // continue its stored log; every other session was created in the transcript (the checker
    // tells them apart by the session/resume requests it read), so its seq starts at 0.
    let mut profile = Profile::for_edition(edition, true);
    profile.allow_method_not_found = !strict;
    profile.member_order = strict;
    let mut conv = Conversation::new(profile, unsolicited);
    let mut decoder = LineDecoder::default();
    decoder.push(&t.sent, &mut |e| {
        if let LineEvent::Line(l) = e {
            conv.sent(l);
        }
    });
    let mut out: Vec<Finding> = Vec::new();
    for o in &t.stdout {
        for v in conv.received(o).violations {
            // The stream rules are judged over every transcript; a rule the trace check `own`
            // owns, over its own trace's.
            let judged_here = v.rule.info().is_stream() || Some(v.rule) == own;
            if judged_here && !out.iter().any(|f| f.check == v.rule) {
                out.push(Finding {
                    check: v.rule,
                    stdout_line: v.stdout_line,
                    line: Some(crate::trace::explain::clip(o.text(), 200)),
                    message: v.message,
                    difference: v.difference,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::output::Output;

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
        // The gap comes with its typed evidence: where, what was wanted, what was written.
        let found = judge(&tr, None, Edition::Current, false);
        let gap = found
            .iter()
            .find(|f| f.check == CheckId::SessionSeqContiguous);
        let d = gap
            .and_then(|f| f.difference.clone())
            .expect("a difference");
        assert_eq!(
            (d.pointer.as_str(), d.expected.as_str(), d.got.as_str()),
            ("/params/event/seq", "1", "2")
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
