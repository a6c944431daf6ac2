//! The conversation's own findings: replays, repeated answers, unsolicited answers, settling.

use super::conversation::{Conversation, Unsettled, Unsolicited};
use super::{CheckId, Profile};
use dsh_protocol::edition::Edition;

fn conv(u: Unsolicited) -> Conversation {
    let mut p = Profile::for_edition(Edition::Current, false);
    p.allow_method_not_found = true;
    Conversation::new(p, u)
}

fn rules(c: &mut Conversation, lines: &[&str]) -> Vec<Vec<&'static str>> {
    (lines.iter())
        .map(|l| {
            let j = c.received_text(l);
            j.violations.iter().map(|v| v.rule.as_str()).collect()
        })
        .collect()
}

const EV0: &str = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"user/message","seq":0,"time":1795984000000,"data":{"id":"m1","content":"hi"}}}}"#;
const EV0_AGAIN: &str = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"user/message","seq":1,"time":1795984000001,"data":{"id":"m1","content":"hi"}}}}"#;

#[test]
fn a_replay_is_one_finding_on_its_own_rule() {
    let mut c = conv(Unsolicited::Judged);
    // The exact line again, then renumbered: each a replay, and neither breaks seq or turns.
    assert_eq!(
        rules(&mut c, &[EV0, EV0, EV0_AGAIN]),
        [vec![], vec!["turn.no-replay"], vec!["turn.no-replay"]]
    );
}

#[test]
fn a_repeated_answer_is_response_exactly_once_whatever_else_it_breaks() {
    let unknown = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: x"}}"#;
    let mut c = conv(Unsolicited::Judged);
    c.sent(r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#);
    c.sent(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#);
    // The checker credits the second copy to the shutdown (which never fails); the
    // conversation sees the same line twice: one repeated answer.
    let got = rules(&mut c, &[unknown, unknown]);
    let mut ck = super::Checker::new(Profile::for_edition(Edition::Current, false));
    ck.sent(r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#);
    ck.sent(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#);
    ck.received_text(unknown);
    let alone: Vec<CheckId> = ck
        .received_text(unknown)
        .violations
        .iter()
        .map(|v| v.rule)
        .collect();
    assert!(
        !alone.is_empty() && !alone.contains(&CheckId::ResponseExactlyOnce),
        "{alone:?}"
    );
    assert_eq!(got[0], Vec::<&str>::new());
    assert_eq!(got[1], ["response.exactly-once"], "{got:?}");
}

#[test]
fn an_unsolicited_answer_is_left_to_the_driver_or_judged() {
    let stray = r#"{"jsonrpc":"2.0","id":"nobody","result":{}}"#;
    let mut left = conv(Unsolicited::Left);
    let j = left.received_text(stray);
    assert!(j.frame.is_none() && j.violations.is_empty(), "{j:?}");
    let mut judged = conv(Unsolicited::Judged);
    assert_eq!(rules(&mut judged, &[stray]), [["response.exactly-once"]]);
    // An answer whose id changed type answers its request: not unsolicited.
    let mut left = conv(Unsolicited::Left);
    left.sent(r#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#);
    let typed = r#"{"jsonrpc":"2.0","id":"7","result":{}}"#;
    assert_eq!(rules(&mut left, &[typed]), [["response.id-type-preserved"]]);
    // An answer with an id no JSON has (Python's json.dumps writes NaN) answers a line that was
    // no request: left too, whereas other output that is no JSON stays stdout.frames-only's.
    let mut left = conv(Unsolicited::Left);
    let nan = r#"{"jsonrpc": "2.0", "id": NaN, "error": {"code": -32603, "message": "x"}}"#;
    let j = left.received_text(nan);
    assert!(j.frame.is_none() && j.violations.is_empty(), "{j:?}");
    let usage = r#"{"jsonrpc":"2.0","method":"session.event","params":{"n":NaN,"id":NaN}}"#;
    assert_eq!(rules(&mut left, &[usage]), [["stdout.frames-only"]]);
}

#[test]
fn settling_owes_answers_first_then_idle_sessions() {
    let mut c = conv(Unsolicited::Judged);
    c.sent(r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#);
    let running = r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"running"}}"#;
    c.received_text(running);
    let owed = c.unsettled(&[]);
    assert_eq!(
        owed,
        Unsettled::Unanswered(vec![("3".into(), "shutdown".into())])
    );
    assert_eq!(owed.rule(), Some(CheckId::ResponseExactlyOnce));
    let owed = c.unsettled(&["3".into()]);
    assert_eq!(owed, Unsettled::Running(vec!["s".into()]));
    assert_eq!(owed.rule(), Some(CheckId::StatusIdleAfterTurn));
    c.received_text(
        r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}"#,
    );
    c.received_text(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
    assert_eq!(c.unsettled(&[]), Unsettled::Settled);
}

#[test]
fn violations_name_the_part_of_the_line_that_shows_them() {
    let mut c = conv(Unsolicited::Judged);
    c.sent(r#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#);
    c.sent(r#"{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{"sessionId":"s"}}"#);
    let at = |j: super::Judged| {
        let d = j.violations[0].difference.clone().expect("a difference");
        (d.pointer, d.expected, d.got)
    };
    let retyped = c.received_text(r#"{"jsonrpc":"2.0","id":"7","result":{}}"#);
    assert_eq!(at(retyped), ("/id".into(), "7".into(), "\"7\"".into()));
    let reserved =
        c.received_text(r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"x"}}"#);
    assert_eq!(
        at(reserved),
        ("/error/code".into(), "-32603".into(), "-32602".into())
    );
    let seconds = c.received_text(r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":0,"time":1795984000,"data":{}}}}"#);
    let (ptr, _, got) = at(seconds);
    assert_eq!(
        (ptr.as_str(), got.as_str()),
        ("/params/event/time", "1795984000 (seconds)")
    );
}
