//! Each violation kind on a violating and a clean input, and the ids against the registry.

use super::*;
use crate::Profile;
use dsh_protocol::edition::Edition;

fn checker() -> Checker {
    Checker::new(Profile::for_edition(Edition::Current, false))
}

/// The rules `lines` break after `sent` was read (in order, one entry per violation).
fn broken(ck: &mut Checker, sent: &[&str], lines: &[&str]) -> Vec<CheckId> {
    for l in sent {
        ck.sent(l);
    }
    lines
        .iter()
        .flat_map(|l| ck.received_text(l).violations)
        .map(|v| v.rule)
        .collect()
}

fn check(sent: &[&str], lines: &[&str]) -> Vec<CheckId> {
    broken(&mut checker(), sent, lines)
}

const SHUTDOWN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
const OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

fn event(sid: &str, seq: u64, ty: &str, data: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session.event","params":{{"sessionId":"{sid}","event":{{"type":"{ty}","seq":{seq},"time":1795984000000,"data":{data}}}}}}}"#
    )
}

fn status(sid: &str, s: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session.status","params":{{"sessionId":"{sid}","status":"{s}"}}}}"#
    )
}

#[test]
fn frames_only() {
    assert_eq!(check(&[], &["hello"]), [CheckId::StdoutFramesOnly]);
    assert_eq!(check(&[], &["[1]"]), [CheckId::StdoutFramesOnly]);
    assert_eq!(
        check(&[], &[r#"{"jsonrpc":"2.0","x":1}"#]),
        [CheckId::StdoutFramesOnly]
    );
    assert_eq!(
        check(&[SHUTDOWN], &[r#"{"jsonrpc":"1.0","id":1,"result":{}}"#]),
        [CheckId::StdoutFramesOnly]
    );
    assert_eq!(
        check(&[], &[r#"{"jsonrpc":"2.0","method":"log","params":{}}"#]),
        [CheckId::StdoutFramesOnly]
    );
    assert!(check(&[SHUTDOWN], &[OK]).is_empty());
}

#[test]
fn assistant_messages_carry_typed_content_blocks() {
    let message = |content: &str| {
        event(
            "s",
            0,
            "assistant/message",
            &format!(r#"{{"message":{{"role":"assistant","content":{content}}}}}"#),
        )
    };
    for good in [
        r#"[]"#,
        r#"[{"type":"text","text":"hi"},{"type":"tool-call","id":"t"}]"#,
    ] {
        assert!(check(&[], &[&message(good)]).is_empty(), "{good}");
    }
    for bad in [
        r#""hi""#,
        r#"null"#,
        r#"[{"text":"hi"}]"#,
        r#"[{"type":1}]"#,
        r#"["hi"]"#,
    ] {
        assert_eq!(
            check(&[], &[&message(bad)]),
            [CheckId::StdoutFramesOnly],
            "{bad}"
        );
    }
    let bare = event("s", 0, "assistant/message", "{}");
    assert_eq!(check(&[], &[&bare]), [CheckId::StdoutFramesOnly]);
}

#[test]
fn a_frame_padded_with_whitespace_python_refuses_is_lost_to_the_python_sdk() {
    for padded in [
        format!("\u{feff}{OK}"),
        format!("\u{a0}{OK}"),
        format!("{OK}\u{2028}"),
        format!("{OK}\u{3000}"),
    ] {
        assert_eq!(
            check(&[SHUTDOWN], &[&padded]),
            [CheckId::StdoutFramesOnly],
            "{padded:?}"
        );
    }
    // ASCII whitespace is JSON's own: json.loads takes it (its space is stdout.compact's).
    assert_eq!(
        check(&[SHUTDOWN], &[&format!("{OK}\t")]),
        [CheckId::StdoutCompact]
    );
    // Non-ASCII text inside the frame is no padding.
    let inside =
        r#"{"jsonrpc":"2.0","id":1,"result":{"t":"\u00a0 ok"}}"#.replace("\\u00a0", "\u{a0}");
    let found = check(&[SHUTDOWN], &[&inside]);
    assert!(!found.contains(&CheckId::StdoutFramesOnly), "{found:?}");
}

#[test]
fn compact_and_member_order() {
    let mut ck = checker();
    let j = ck.received_text(r#"{"jsonrpc": "2.0","method":"session.status","params":{"sessionId":"s","status":"running"}}"#);
    assert_eq!(j.violations.len(), 1, "{j:?}");
    assert_eq!(j.violations[0].rule, CheckId::StdoutCompact);
    assert_eq!(j.violations[0].stdout_line, Some(1));
    // The frame is still judged: the status change counted.
    assert_eq!(
        j.frame,
        Some(Received::Notification("session.status".into()))
    );
    assert!(broken(&mut ck, &[], &[&status("s", "idle")]).is_empty());
    assert_eq!(
        check(&[SHUTDOWN], &[r#"{"id":1,"jsonrpc":"2.0","result":{}}"#]),
        [CheckId::StdoutCompact]
    );
}

#[test]
fn member_order_is_judged_only_when_the_profile_asks() {
    const UNKNOWN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#;
    let reordered = [
        r#"{"id":1,"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"message":"unknown DeepSeek Harness SDK runtime method: no/such","code":-32603}}"#,
    ];
    let mut lenient = Profile::for_edition(Edition::Current, false);
    lenient.member_order = false;
    assert!(broken(
        &mut Checker::new(lenient.clone()),
        &[SHUTDOWN],
        &reordered[..1]
    )
    .is_empty());
    assert!(broken(
        &mut Checker::new(lenient.clone()),
        &[UNKNOWN],
        &reordered[1..]
    )
    .is_empty());
    // Upstream's order, strictly: both are one rule, the frame's bytes.
    assert_eq!(
        check(&[SHUTDOWN], &reordered[..1]),
        [CheckId::StdoutCompact]
    );
    assert_eq!(check(&[UNKNOWN], &reordered[1..]), [CheckId::StdoutCompact]);
    // A member the error must not carry is another rule's, in any order and either profile.
    let with_data = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: no/such","data":1}}"#;
    for p in [lenient, Profile::for_edition(Edition::Current, false)] {
        assert_eq!(
            broken(&mut Checker::new(p), &[UNKNOWN], &[with_data]),
            [CheckId::ErrorNoReservedCodes]
        );
    }
}

#[test]
fn lf_only() {
    let crlf = format!("{OK}\r");
    assert_eq!(check(&[SHUTDOWN], &[&crlf]), [CheckId::StdoutLfOnly]);
    // A raw CR inside a string is not JSON; outside, it is whitespace.
    assert_eq!(
        check(&[], &["{\"a\":\"x\ry\"}"]),
        [CheckId::StdoutFramesOnly]
    );
}

#[test]
fn exactly_once() {
    assert_eq!(
        check(&[SHUTDOWN], &[OK, OK]),
        [CheckId::ResponseExactlyOnce]
    );
    assert_eq!(check(&[], &[OK]), [CheckId::ResponseExactlyOnce]);
    let mut ck = checker();
    ck.sent(SHUTDOWN);
    assert_eq!(ck.unanswered()[0].rule, CheckId::ResponseExactlyOnce);
    ck.received_text(OK);
    assert!(ck.unanswered().is_empty());
}

#[test]
fn id_type_preserved() {
    let mut ck = checker();
    let got = broken(
        &mut ck,
        &[SHUTDOWN],
        &[r#"{"jsonrpc":"2.0","id":"1","result":{}}"#],
    );
    assert_eq!(got, [CheckId::ResponseIdTypePreserved]);
    assert!(ck.pending().is_empty(), "the request counts as answered");
    let s = r#"{"jsonrpc":"2.0","id":"2","method":"shutdown"}"#;
    assert_eq!(
        check(&[s], &[r#"{"jsonrpc":"2.0","id":2,"result":{}}"#]),
        [CheckId::ResponseIdTypePreserved]
    );
    assert!(check(&[s], &[r#"{"jsonrpc":"2.0","id":"2","result":{}}"#]).is_empty());
}

#[test]
fn seq_contiguous_reports_one_gap_once() {
    let lines = [
        event("s", 0, "x", "{}"),
        event("s", 2, "x", "{}"),
        event("s", 3, "x", "{}"),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(check(&[], &lines), [CheckId::SessionSeqContiguous]);
    assert!(check(&[], &[&event("s", 0, "x", "{}"), &event("s", 1, "x", "{}")]).is_empty());
}

#[test]
fn event_time() {
    let no_time = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"x","seq":0,"data":{}}}}"#;
    assert_eq!(check(&[], &[no_time]), [CheckId::EventTime]);
    let text_time = no_time.replace(r#""seq":0"#, r#""seq":0,"time":"1""#);
    assert_eq!(check(&[], &[&text_time]), [CheckId::EventTime]);
    assert!(check(&[], &[&event("s", 0, "x", "{}")]).is_empty());
    // The unit: epoch seconds (float or integer, as time.time() and Unix() give them) and
    // microseconds are numbers, but not milliseconds; milliseconds with a fraction are.
    let at = |t: &str| event("s", 0, "x", "{}").replace("1795984000000", t);
    for wrong in ["1795984000.123", "1795984000", "1795984000000000", "0"] {
        assert_eq!(check(&[], &[&at(wrong)]), [CheckId::EventTime], "{wrong}");
    }
    for right in ["1000000000000", "1795984000000.5", "999999999999999"] {
        assert!(check(&[], &[&at(right)]).is_empty(), "{right}");
    }
}

#[test]
fn seq_starts_at_0_in_a_session_created_here_even_with_persistence() {
    let persistent = || Checker::new(Profile::for_edition(Edition::Current, true));
    let from_1 = [event("s", 1, "x", "{}"), event("s", 2, "x", "{}")];
    let from_1: Vec<&str> = from_1.iter().map(String::as_str).collect();
    assert_eq!(
        broken(&mut persistent(), &[], &from_1),
        [CheckId::SessionSeqContiguous],
        "a session no session/resume named was created in this conversation"
    );
    let resume = r#"{"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"s"}}"#;
    assert_eq!(
        broken(&mut persistent(), &[resume], &from_1),
        [],
        "a resumed session continues its stored log"
    );
    assert_eq!(
        check(&[resume], &from_1),
        [CheckId::SessionSeqContiguous],
        "without persistence nothing is resumed"
    );
}

#[test]
fn turn_counts_and_end_reason() {
    let end = |n: u64| format!(r#"{{"turn":{n},"reason":{{"kind":"completed"}}}}"#);
    let good = [
        event("s", 0, "turn/start", r#"{"turn":1}"#),
        event("s", 1, "turn/end", &end(1)),
        event("s", 2, "turn/start", r#"{"turn":2}"#),
        event("s", 3, "turn/end", &end(2)),
    ];
    let good: Vec<&str> = good.iter().map(String::as_str).collect();
    assert!(check(&[], &good).is_empty());
    let skip = [
        event("s", 0, "turn/start", r#"{"turn":1}"#),
        event("s", 1, "turn/end", &end(1)),
        event("s", 2, "turn/start", r#"{"turn":3}"#),
        event("s", 3, "turn/end", &end(3)),
    ];
    let skip: Vec<&str> = skip.iter().map(String::as_str).collect();
    assert_eq!(check(&[], &skip), [CheckId::TurnCountsPerSession]);
    let no_reason = [
        event("s", 0, "turn/start", r#"{"turn":1}"#),
        event("s", 1, "turn/end", r#"{"turn":1}"#),
    ];
    let no_reason: Vec<&str> = no_reason.iter().map(String::as_str).collect();
    assert_eq!(check(&[], &no_reason), [CheckId::TurnEndReason]);
    // A forked child continues its parent's numbering; later turns still count up by one.
    let started = r#"{"jsonrpc":"2.0","method":"subagent.started","params":{"parentSessionId":"s","childSessionId":"c"}}"#.to_owned();
    let fork = |second: u64| {
        vec![
            started.clone(),
            event("c", 27, "turn/start", r#"{"turn":4}"#),
            event("c", 28, "turn/end", &end(4)),
            event("c", 29, "turn/start", &format!(r#"{{"turn":{second}}}"#)),
            event("c", 30, "turn/end", &end(second)),
        ]
    };
    let (ok, bad) = (fork(5), fork(7));
    let ok: Vec<&str> = ok.iter().map(String::as_str).collect();
    assert!(check(&[], &ok).is_empty(), "{:?}", check(&[], &ok));
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    assert_eq!(check(&[], &bad), [CheckId::TurnCountsPerSession]);
}

#[test]
fn status_alternates() {
    let idle = status("s", "idle");
    assert_eq!(check(&[], &[&idle]), [CheckId::StatusIdleAfterTurn]);
    assert!(check(&[], &[&status("s", "running"), &idle]).is_empty());
}

#[test]
fn error_codes_and_members() {
    let p = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#;
    let err = |e: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"error":{e}}}"#);
    assert_eq!(
        check(&[p], &[&err(r#"{"code":-32602,"message":"x"}"#)]),
        [CheckId::ErrorNoReservedCodes]
    );
    assert_eq!(
        check(&[p], &[&err(r#"{"code":-32603,"message":"x","data":1}"#)]),
        [CheckId::ErrorNoReservedCodes]
    );
    assert!(check(&[p], &[&err(r#"{"code":-32603,"message":"x"}"#)]).is_empty());
}

#[test]
fn unknown_method_code_and_message() {
    let q = r#"{"jsonrpc":"2.0","id":1,"method":"x/y"}"#;
    let err = |code: i64, msg: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"{msg}"}}}}"#)
    };
    let upstream = format!("{UNKNOWN_METHOD}x/y");
    assert!(check(&[q], &[&err(-32603, &upstream)]).is_empty());
    assert_eq!(
        check(&[q], &[&err(-32603, "no such method")]),
        [CheckId::ErrorUnknownMethod]
    );
    assert_eq!(
        check(&[q], &[&err(-32601, "method not found: x/y")]),
        [CheckId::ErrorUnknownMethod]
    );
    assert_eq!(
        check(&[q], &[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]),
        [CheckId::ErrorUnknownMethod]
    );
    // -32601 with upstream's message: accepted only where the profile allows it.
    assert_eq!(
        check(&[q], &[&err(-32601, &upstream)]),
        [CheckId::ErrorUnknownMethod]
    );
    let mut lenient = Profile::for_edition(Edition::Current, false);
    lenient.allow_method_not_found = true;
    let mut ck = Checker::new(lenient);
    assert!(broken(&mut ck, &[q], &[&err(-32601, &upstream)]).is_empty());
    assert!(ck.pending().is_empty());
}

#[test]
fn receipt_precedes_response_and_result_shapes() {
    let p = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}"#;
    let answer = r#"{"jsonrpc":"2.0","id":2,"result":{"messageId":"m1"}}"#;
    let receipt = event(
        "s",
        0,
        "agent/inbox/spliced",
        r#"{"inserted":[{"id":"m1"}]}"#,
    );
    assert_eq!(
        check(&[p], &[answer, &receipt]),
        [CheckId::ReceiptPrecedesResponse]
    );
    assert!(check(&[p], &[&receipt, answer]).is_empty());
    // A receipt that never comes, or carries another id, is receipt.id-matches-inserted's rule:
    // no response was written before it.
    assert!(check(&[p], &[answer]).is_empty());
    let other = receipt.replace("m1", "m2");
    assert!(check(&[p], &[answer, &other]).is_empty());
    assert_eq!(
        check(&[p], &[r#"{"jsonrpc":"2.0","id":2,"result":{}}"#]),
        [CheckId::PromptMessageId]
    );
    let init = r#"{"jsonrpc":"2.0","id":3,"method":"initialize"}"#;
    assert_eq!(
        check(&[init], &[r#"{"jsonrpc":"2.0","id":3,"result":{}}"#]),
        [CheckId::InitializeServerInfo]
    );
    assert_eq!(
        check(
            &[SHUTDOWN],
            &[r#"{"jsonrpc":"2.0","id":1,"result":{"bye":1}}"#]
        ),
        [CheckId::LifecycleShutdownResponds]
    );
    assert_eq!(
        check(
            &[SHUTDOWN],
            &[r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no"}}"#]
        ),
        [CheckId::LifecycleShutdownResponds]
    );
    let wd = r#"{"jsonrpc":"2.0","id":4,"method":"session/working-directory/get","params":{}}"#;
    assert_eq!(
        check(
            &[wd],
            &[r#"{"jsonrpc":"2.0","id":4,"result":{"cwd":"rel"}}"#]
        ),
        [CheckId::WorkingDirectoryGetSet]
    );
    assert!(check(
        &[wd],
        &[r#"{"jsonrpc":"2.0","id":4,"result":{"cwd":"/abs"}}"#]
    )
    .is_empty());
}

#[test]
fn the_checker_goes_on_after_a_violation() {
    // Non-compact, a seq gap and a duplicate answer in one conversation: each is reported once.
    let mut ck = checker();
    ck.sent(SHUTDOWN);
    let spaced = event("s", 0, "x", "{}").replace(r#""seq":"#, r#""seq": "#);
    let lines = [spaced, event("s", 2, "x", "{}"), event("s", 3, "x", "{}")];
    let mut all: Vec<Violation> = lines
        .iter()
        .flat_map(|l| ck.received_text(l).violations)
        .collect();
    all.extend(ck.received_text(OK).violations);
    all.extend(ck.received_text(OK).violations);
    let rules: Vec<CheckId> = all.iter().map(|v| v.rule).collect();
    assert_eq!(
        rules,
        [
            CheckId::StdoutCompact,
            CheckId::SessionSeqContiguous,
            CheckId::ResponseExactlyOnce
        ]
    );
    assert_eq!(all[1].stdout_line, Some(2));
    assert_eq!(all[2].stdout_line, Some(5));
}

#[test]
fn an_answer_to_a_line_that_must_get_none_is_blamed_on_that_lines_rule() {
    let err = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"x"}}"#;
    let cases: [(&str, CheckId); 6] = [
        (
            r#"{"jsonrpc":"2.0","method":"n"}"#,
            CheckId::FrameNotificationsIgnored,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"n"}"#,
            CheckId::FrameIdInvalidIsNotification,
        ),
        ("{not json", CheckId::FrameMalformedIgnored),
        ("42", CheckId::FrameNonObjectIgnored),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
            CheckId::FrameBatchIgnored,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
            CheckId::FrameUnknownResponseIgnored,
        ),
    ];
    for (line, rule) in cases {
        assert_eq!(check(&[line], &[err]), [rule], "after {line}");
    }
    // Lines of several kinds wait for no answer: an answer naming a method's outcome is the
    // notification's, a parse error the malformed line's, whichever was read first.
    let malformed = "{not json";
    assert_eq!(
        check(&[malformed, r#"{"jsonrpc":"2.0","method":"n"}"#], &[err]),
        [CheckId::FrameNotificationsIgnored]
    );
    let parse = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    assert_eq!(
        check(&[r#"{"jsonrpc":"2.0","method":"n"}"#, malformed], &[parse]),
        [CheckId::FrameMalformedIgnored]
    );
    // Two notifications answered alike: the same bytes twice are two answers, not a repeat.
    let n = r#"{"jsonrpc":"2.0","method":"n"}"#;
    assert_eq!(
        check(&[n, n], &[err, err]),
        [
            CheckId::FrameNotificationsIgnored,
            CheckId::FrameNotificationsIgnored
        ]
    );
    // With nothing of the kind sent, an answer to nobody is response.exactly-once's; so is a
    // second answer to a request, even when a notification was sent too.
    assert_eq!(check(&[], &[err]), [CheckId::ResponseExactlyOnce]);
    let a = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: x"}}"#;
    assert_eq!(
        check(
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#,
                r#"{"method":"n"}"#
            ],
            &[a, a]
        ),
        [CheckId::ResponseExactlyOnce]
    );
}

#[test]
fn an_error_two_requests_of_one_id_may_have_earned_leaves_each_awaited() {
    let wait = r#"{"jsonrpc":"2.0","id":7,"method":"session/wait","params":{"sessionId":"x"}}"#;
    let init = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"cwd":"/","provider":"deepseek-official","model":"deepseek-v4-flash"}}"#;
    let error =
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"unknown SDK session: x"}}"#;
    let mut ck = checker();
    assert!(broken(&mut ck, &[wait, init], &[error]).is_empty());
    // The error could be the initialize's: still awaited.
    assert!(ck.may_await("7", "initialize"));
    let result = r#"{"jsonrpc":"2.0","id":7,"result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"1"}}}"#;
    assert!(broken(&mut ck, &[], &[result]).is_empty());
    assert!(!ck.may_await("7", "initialize"));
    // Two errors answer both requests.
    let mut ck = checker();
    let refused = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"initialize requires a cwd string"}}"#;
    assert!(broken(&mut ck, &[wait, init], &[error, refused]).is_empty());
    assert!(!ck.may_await("7", "initialize"));
    // A method nobody sent is never awaited.
    assert!(!checker().may_await("7", "initialize"));
}

#[test]
fn answers_to_no_request_and_requests_never_answered_carry_their_kind() {
    let mut ck = checker();
    ck.sent(SHUTDOWN);
    let kinds = |j: Judged| j.violations.iter().map(|v| v.kind).collect::<Vec<_>>();
    assert_eq!(kinds(ck.received_text(OK)), []);
    assert_eq!(kinds(ck.received_text(OK)), [ViolationKind::Unrequested]);
    ck.sent(r#"{"jsonrpc":"2.0","method":"shutdown"}"#);
    assert_eq!(
        kinds(ck.received_text(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#)),
        [ViolationKind::Unrequested]
    );
    ck.sent(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#);
    let never: Vec<_> = ck.unanswered().iter().map(|v| v.kind).collect();
    assert_eq!(never, [ViolationKind::Unanswered]);
    let other = ck.received_text("hello").violations;
    assert_eq!(other[0].kind, ViolationKind::Other);
}

#[test]
fn a_null_answer_comes_in_read_order_even_after_the_kit_sent_a_null_id_request() {
    let note = r#"{"jsonrpc":"2.0","method":"session/working-directory/set","params":true}"#;
    let get = r#"{"jsonrpc":"2.0","id":2,"method":"session/working-directory/get","params":{"sessionId":""}}"#;
    let wait = r#"{"jsonrpc":"2.0","id":2,"method":"session/wait","params":{"sessionId":""}}"#;
    let cancel = r#"{"jsonrpc":"2.0","id":1e400,"method":"session/cancel"}"#;
    let wd =
        r#""code":-32603,"message":"working-directory requests require a non-empty sessionId"}}"#;
    let note_answer = format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{{wd}"#);
    let get_answer = format!(r#"{{"jsonrpc":"2.0","id":2,"error":{{{wd}"#);
    let cancel_answer = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: session/cancel"}}"#;
    let answers = [note_answer.as_str(), get_answer.as_str(), cancel_answer];
    // A slow runtime: everything was sent before its first answer came. The null answer that
    // comes while the request read before the cancel waits is the notification's.
    assert_eq!(
        check(&[note, get, cancel], &answers),
        [CheckId::FrameNotificationsIgnored]
    );
    // The same as a fast runtime's, the cancel sent after the first answers: the same blame.
    let mut ck = checker();
    let mut got = broken(&mut ck, &[note, get], &answers[..2]);
    got.extend(broken(&mut ck, &[cancel], &answers[2..]));
    assert_eq!(got, [CheckId::FrameNotificationsIgnored]);
    // Nothing read between them waits (or only a deferred request): the null answer is the
    // request's, in order, and nothing is blamed.
    assert_eq!(check(&[note, cancel], &[cancel_answer]), []);
    assert_eq!(check(&[note, wait, cancel], &[cancel_answer]), []);
    // A runtime that answers as it can (the release): an unknown method's error comes while a
    // request read before it still waits; it names the method, so it is that request's.
    let invalid = r#"{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}"#;
    let prompt = r#"{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"s"}}"#;
    let unknown = r#"{"jsonrpc":"2.0","id":1e400,"method":"x"}"#;
    let named = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: x"}}"#;
    assert_eq!(check(&[invalid, prompt, unknown], &[named]), []);
}

#[test]
fn legacy_session_finished_comes_only_after_the_turn_end() {
    let legacy = || Checker::new(Profile::for_edition(Edition::Legacy, false));
    let finished = r#"{"jsonrpc":"2.0","method":"session.finished","params":{"sessionId":"s","status":"ok","reason":{"kind":"completed"}}}"#;
    let start = event("s", 0, "turn/start", r#"{"turn":1}"#);
    let end = event(
        "s",
        1,
        "turn/end",
        r#"{"turn":1,"reason":{"kind":"completed"}}"#,
    );
    assert!(broken(&mut legacy(), &[], &[&start, &end, finished]).is_empty());
    assert_eq!(
        broken(&mut legacy(), &[], &[&start, finished]),
        [CheckId::LegacySessionFinished]
    );
}
