//! Whether a case that needs the model exercised its check's rule at all, judged from the case's
//! own transcript and the model stub's requests while it ran (sans-IO). A model may ignore a
//! directive, offer no subagent tool, or fail: the contract allows all three, and then the
//! situation the rule is about never arose, so the case proves nothing either way (UNTESTABLE,
//! with the reason), where its trace alone would FAIL it or, worse, PASS it.

use super::options::StubRequest;
use crate::check::CheckId;
use crate::runner::wire_log::Wire;
use crate::runner::{GiveUp, Transcript};
use crate::wire::json::{JsonView, TapeRef};
use crate::wire::output::{Frame, Output};
use serde_json::Value;
use std::time::Duration;

/// Why the case did not exercise `check`'s rule, or `None` when it did (or nothing says it did
/// not). `stub`: the stub's requests while the case ran (empty without the stub).
pub fn unexercised(check: CheckId, t: &Transcript, stub: &[StubRequest]) -> Option<String> {
    match check {
        CheckId::TurnOverlapQueued => overlap(t).or_else(|| model_error(&t.stdout)),
        CheckId::SubagentNotifications => {
            subagent(&t.stdout, stub).or_else(|| model_error(&t.stdout))
        }
        CheckId::LifecycleEofDuringTurnExits0 => model_error(&t.stdout).or_else(|| eof_mid_turn(t)),
        CheckId::LifecycleShutdownCutsTurn => {
            model_error(&t.stdout).or_else(|| ended_before_shutdown(t))
        }
        _ => model_error(&t.stdout),
    }
}

/// What ends a case of `check` early, when its transcript shows that the frames it still awaits
/// will not come. For every case that needs the model: a turn that ended in an error (the model
/// failed, so the case is UNTESTABLE whatever else comes: [`unexercised`]), instead of waiting
/// out the deadline of a reply that will never be written. For `subagent.notifications`: the
/// prompt's turn ending with no subagent started (a subagent starts within its parent's turn:
/// `subagent.started` precedes the parent's `turn/end`, as the release writes them), instead of a
/// 30 s wait for `subagent.started`.
pub fn give_up(check: CheckId, needs_model: bool) -> Option<GiveUp> {
    let own = match check {
        CheckId::SubagentNotifications => Some(subagent_give_up()),
        CheckId::TurnUserMessageId => Some(user_message_give_up()),
        _ => None,
    };
    let model = needs_model.then(model_error_give_up);
    match (model, own) {
        (Some(a), Some(b)) => Some(either(a, b)),
        (a, b) => a.or(b),
    }
}

/// A rule that gives up when either `a` or `b` does, with `a`'s reason first; both see every
/// line (they keep state).
fn either(a: GiveUp, b: GiveUp) -> GiveUp {
    GiveUp(std::sync::Arc::new(move |o: &Output| {
        let first = (a.0)(o);
        let second = (b.0)(o);
        first.or(second)
    }))
}

/// See [`give_up`]: the reason is [`model_error`]'s, the one the case's verdict gives.
fn model_error_give_up() -> GiveUp {
    GiveUp(std::sync::Arc::new(error_turn))
}

/// `turn.user-message-id` awaits the turn's user/message with the prompt's id: once the turn has
/// ended, it will not come, and the user/message the turn did carry says how it differs.
fn user_message_give_up() -> GiveUp {
    let seen: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    GiveUp(std::sync::Arc::new(move |o: &Output| {
        let (sid, e) = event(o)?;
        let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
        if sid == "s1" && is_type(e, "user/message") {
            *seen = Some(crate::trace::explain::clip(o.text(), 300));
        }
        if sid != "s1" || !is_type(e, "turn/end") {
            return None;
        }
        Some(match seen.as_deref() {
            Some(u) => format!("the turn ended, and its user/message does not carry the prompt's messageId as data.id: {u}"),
            None => "the turn ended without a user/message event".to_owned(),
        })
    }))
}

/// See [`give_up`].
fn subagent_give_up() -> GiveUp {
    let ran = std::sync::atomic::AtomicBool::new(false);
    GiveUp(std::sync::Arc::new(move |o: &Output| {
        use std::sync::atomic::Ordering::Relaxed;
        if notification_method(o) == Some("subagent.started")
            || event(o).is_some_and(|(sid, _)| sid != "s1")
        {
            ran.store(true, Relaxed);
        }
        let ended = event(o).is_some_and(|(sid, e)| sid == "s1" && is_type(e, "turn/end"));
        (ended && !ran.load(Relaxed)).then(|| {
            "the `subagent:` prompt's turn ended and no subagent started in it, so subagent.started will not come".to_owned()
        })
    }))
}

/// The method of a notification frame (the frame's typed method: no parse).
fn notification_method(o: &Output) -> Option<&str> {
    match o.frame() {
        Frame::Notification { method, .. } => Some(method),
        _ => None,
    }
}

/// A session.event frame's session id and event, read off the line's frame and tape: the
/// give-up rules call it on every stdout line, so nothing is converted to a `Value` here.
fn event(o: &Output) -> Option<(&str, TapeRef<'_>)> {
    let Frame::Notification {
        session: Some(sid), ..
    } = o.frame()
    else {
        return None;
    };
    Some((sid, o.params_of("session.event")?.get("event")?))
}

/// Whether event `e` is of type `ty`.
fn is_type(e: TapeRef<'_>, ty: &str) -> bool {
    e.get("type").and_then(JsonView::as_str) == Some(ty)
}

/// The first turn that ended in an error (`turn/end` reason `error`): the model failed, so a rule
/// about what a completed turn shows was not exercised.
fn model_error(stdout: &[Output]) -> Option<String> {
    stdout.iter().find_map(error_turn)
}

/// Why line `o` shows the model failed: a `turn/end` with reason `error`.
fn error_turn(o: &Output) -> Option<String> {
    let (sid, e) = event(o)?;
    if !is_type(e, "turn/end") {
        return None;
    }
    let reason = e.get("data")?.get("reason")?.to_value();
    if reason.get("kind")?.as_str()? != "error" {
        return None;
    }
    let msg = reason
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("");
    let code = reason.pointer("/error/code").map(|c| match c {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    Some(format!(
        "the turn on session {sid:?} ended in an error ({}{}), so the model never completed it: the rule needs a turn the model completes (a runtime whose model cannot be reached needs --model-stub)",
        code.map(|c| format!("{c}: ")).unwrap_or_default(),
        crate::trace::explain::clip(msg, 160)
    ))
}

/// A directive the model does not follow shows as a first turn shorter than its `slow:1`; a
/// queued prompt then never met a running turn when the runtime answered it after that turn's
/// end. (A runtime that serves prompts only between turns answers late too, but its first turn
/// lasts the full second: that is the rule broken, and stays a failure.)
fn overlap(t: &Transcript) -> Option<String> {
    let (end, lasted) = first_turn(t)?;
    let answered = t
        .stdout
        .iter()
        .position(|o| matches!(o.frame(), Frame::Response { id, .. } if id == "\"p2\""));
    if answered.is_some_and(|a| a < end) {
        return None;
    }
    if lasted >= Duration::from_millis(900) {
        return None;
    }
    Some(format!(
        "the first turn ended {} ms after it started, before the runtime answered the second prompt: the model did not follow `slow:1`, so no prompt reached a running turn",
        lasted.as_millis()
    ))
}

/// Session `s1`'s first turn: the stdout index of its `turn/end`, and how long after its
/// `turn/start` that came.
fn first_turn(t: &Transcript) -> Option<(usize, Duration)> {
    let at = |idx: usize| {
        t.stamps
            .iter()
            .find(|s| s.what == Wire::Received(idx))
            .map(|s| s.at)
    };
    let first = |ty: &str| {
        (t.stdout.iter().enumerate())
            .find(|(_, o)| event(o).is_some_and(|(sid, e)| sid == "s1" && is_type(e, ty)))
            .map(|(i, _)| i)
    };
    let (start, end) = (first("turn/start")?, first("turn/end")?);
    Some((end, at(end)?.checked_sub(at(start)?)?))
}

/// `lifecycle.eof-during-turn-exits-0`'s turn in progress at EOF is held by `slow:30`: a turn that ended well
/// before that (the model did not follow the directive) was over before the EOF, so the exit
/// was never asked of a runtime with a turn in progress. (A runtime that lets the turn finish
/// before it exits ends it at the full 30 s: that is the rule broken, and stays a failure.)
fn eof_mid_turn(t: &Transcript) -> Option<String> {
    let (_, lasted) = first_turn(t)?;
    if lasted >= Duration::from_secs(25) {
        return None;
    }
    Some(format!(
        "the turn ended {} ms after it started, before the EOF: the model did not follow `slow:30`, so no turn was in progress at the end of input",
        lasted.as_millis()
    ))
}

/// `lifecycle.shutdown-cuts-turn`'s turn is held by `slow:30`: a turn that ended before the
/// shutdown was written, or that completed well before 30 s (the model did not follow the
/// directive; the kit may read its turn/end only after it wrote the shutdown), was not in
/// progress at the shutdown. A turn ended otherwise after the shutdown (cancelled, say) is the
/// rule broken, however soon it came; so is one completed at the full 30 s (waited for).
fn ended_before_shutdown(t: &Transcript) -> Option<String> {
    let (end, lasted) = first_turn(t)?;
    let is_shutdown = |from: usize, to: usize| {
        let sent = String::from_utf8_lossy(t.sent.get(from..to).unwrap_or_default());
        sent.contains("\"method\":\"shutdown\"")
    };
    let shutdown = t.stamps.iter().find_map(|s| match s.what {
        Wire::Sent { from, to } if is_shutdown(from, to) => Some(s.at),
        _ => None,
    });
    let ended = t.stamps.iter().find(|s| s.what == Wire::Received(end))?.at;
    let completed = event(&t.stdout[end]).is_some_and(|(_, e)| {
        e.get("data")
            .and_then(|d| d.get("reason"))
            .and_then(|r| r.get("kind"))
            .and_then(JsonView::as_str)
            == Some("completed")
    });
    let early = completed && lasted < Duration::from_secs(25);
    // A turn/end before the shutdown was written stops the case there: it is never written.
    (early || shutdown.is_none_or(|at| ended < at)).then(|| {
        format!(
            "the turn ended {} ms after it started, before the shutdown: the model did not follow `slow:30`, so no turn was in progress at the shutdown",
            lasted.as_millis()
        )
    })
}

/// A `subagent:` prompt whose turn ended with no subagent started: the model was not offered a
/// subagent tool (the stub refused the directive for it), or did not follow the directive.
fn subagent(stdout: &[Output], stub: &[StubRequest]) -> Option<String> {
    let started = (stdout.iter()).any(|o| notification_method(o) == Some("subagent.started"));
    // Events of a session other than the prompt's: a child ran, announced or not.
    let child = stdout.iter().filter_map(event).any(|(sid, _)| sid != "s1");
    if started || child {
        return None;
    }
    let unoffered = |r: &&StubRequest| {
        r.directive
            .as_deref()
            .is_some_and(|d| d.ends_with("subagent"))
            && r.tools
                .as_ref()
                .is_some_and(|t| !t.iter().any(|t| t == "subagent"))
    };
    if let Some(r) = stub.iter().find(unoffered) {
        let tools = r.tools.as_deref().unwrap_or_default();
        return Some(format!(
            "the runtime offers its model no subagent tool: its request for the `subagent:` prompt offered {} ({})",
            if tools.is_empty() { "no tool at all".to_owned() } else { tools.join(", ") },
            crate::trace::explain::clip(&r.summary, 160)
        ));
    }
    if let Some(why) = model_error(stdout) {
        return Some(why);
    }
    let ended = stdout
        .iter()
        .filter_map(event)
        .any(|(sid, e)| sid == "s1" && is_type(e, "turn/end"));
    ended.then(|| {
        "the turn of the `subagent:` prompt ended and no subagent ran: the runtime's model has no subagent tool or does not follow `subagent:`".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::wire_log::Stamp;

    fn transcript(lines: &[(u64, &str)]) -> Transcript {
        let mut t = Transcript::default();
        for (i, (ms, l)) in lines.iter().enumerate() {
            t.stdout.push(Output::parse(i + 1, l.to_string()));
            t.stamps.push_back(Stamp {
                at: Duration::from_millis(*ms),
                what: Wire::Received(i),
            });
        }
        t
    }

    const START: &str = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/start","data":{"turn":1}}}}"#;
    const END: &str = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}}}"#;
    const P2: &str = r#"{"jsonrpc":"2.0","id":"p2","result":{"messageId":"m2"}}"#;

    #[test]
    fn a_quick_first_turn_answered_before_the_queued_prompt_is_unexercised_a_slow_one_is_not() {
        let quick = transcript(&[(0, START), (5, END), (6, P2)]);
        let why = unexercised(CheckId::TurnOverlapQueued, &quick, &[]).unwrap();
        assert!(why.contains("did not follow `slow:1`"), "{why}");
        // The slow turn ran a full second: a runtime that answered the prompt only after it broke
        // the rule, and fails.
        let serial = transcript(&[(0, START), (1000, END), (1001, P2)]);
        assert_eq!(unexercised(CheckId::TurnOverlapQueued, &serial, &[]), None);
        // Answered while the turn ran: exercised, however short the turn.
        let queued = transcript(&[(0, START), (1, P2), (5, END)]);
        assert_eq!(unexercised(CheckId::TurnOverlapQueued, &queued, &[]), None);
    }

    /// `lines`, with a shutdown written at `at` ms.
    fn with_shutdown(lines: &[(u64, &str)], at: u64) -> Transcript {
        let mut t = transcript(lines);
        let bye = br#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#;
        t.sent.extend_from_slice(bye);
        let what = Wire::Sent {
            from: 0,
            to: bye.len(),
        };
        let i = t.stamps.iter().position(|s| s.at.as_millis() as u64 > at);
        t.stamps.insert(
            i.unwrap_or(t.stamps.len()),
            Stamp {
                at: Duration::from_millis(at),
                what,
            },
        );
        t
    }

    #[test]
    fn a_turn_over_before_the_shutdown_is_unexercised_one_ended_by_it_is_not() {
        let id = CheckId::LifecycleShutdownCutsTurn;
        // Completed at once (slow:30 not followed), read before or after the shutdown was written.
        for at in [2, 10] {
            let quick = with_shutdown(&[(0, START), (5, END)], at);
            let why = unexercised(id, &quick, &[]).unwrap();
            assert!(why.contains("did not follow `slow:30`"), "{why}");
        }
        // Never written: the turn/end stopped the case before it.
        assert!(unexercised(id, &transcript(&[(0, START), (5, END)]), &[]).is_some());
        // Cut off: no turn/end at all.
        assert_eq!(
            unexercised(id, &with_shutdown(&[(0, START)], 10), &[]),
            None
        );
        // Ended by the shutdown (cancelled), or completed at the full 30 s: the rule broken.
        let cancelled = END.replace("completed", "cancelled");
        let wound_down = with_shutdown(&[(0, START), (11, &cancelled)], 10);
        assert_eq!(unexercised(id, &wound_down, &[]), None);
        let waited = with_shutdown(&[(0, START), (30_000, END)], 10);
        assert_eq!(unexercised(id, &waited, &[]), None);
    }

    #[test]
    fn a_turn_over_before_the_eof_is_unexercised_one_that_ran_its_30_s_is_not() {
        let quick = transcript(&[(0, START), (3, END)]);
        let why = unexercised(CheckId::LifecycleEofDuringTurnExits0, &quick, &[]).unwrap();
        assert!(why.contains("did not follow `slow:30`"), "{why}");
        // No turn/end at all: the turn was cut off at the EOF, as it should be.
        let cut = transcript(&[(0, START)]);
        assert_eq!(
            unexercised(CheckId::LifecycleEofDuringTurnExits0, &cut, &[]),
            None
        );
        // The full 30 s: a runtime that let the turn finish before exiting broke the rule.
        let drained = transcript(&[(0, START), (30_000, END)]);
        assert_eq!(
            unexercised(CheckId::LifecycleEofDuringTurnExits0, &drained, &[]),
            None
        );
    }

    #[test]
    fn a_turn_ending_in_a_model_error_is_unexercised_naming_the_error() {
        let err = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/end","data":{"turn":1,"reason":{"kind":"error","error":{"message":"connect ECONNREFUSED","code":"NETWORK"}}}}}}"#;
        let t = transcript(&[(0, START), (5, err)]);
        let why = unexercised(CheckId::TurnFinalText, &t, &[]).unwrap();
        assert!(why.contains("NETWORK: connect ECONNREFUSED"), "{why}");
        assert_eq!(
            unexercised(
                CheckId::TurnFinalText,
                &transcript(&[(0, START), (5, END)]),
                &[]
            ),
            None
        );
    }

    #[test]
    fn a_subagent_prompt_without_a_subagent_tool_is_unexercised_a_missing_notification_is_not() {
        let refused = StubRequest {
            summary: "#1 conn1 POST /v1/messages → 400 (subagent)".into(),
            method: "POST".into(),
            path: "/v1/messages".into(),
            status: Some(400),
            tag: None,
            directive: Some("subagent".into()),
            tools: Some(vec!["bash".into()]),
        };
        let t = transcript(&[(0, START)]);
        let why = unexercised(CheckId::SubagentNotifications, &t, &[refused]).unwrap();
        assert!(
            why.contains("no subagent tool") && why.contains("offered bash"),
            "{why}"
        );
        let ended = transcript(&[(0, START), (5, END)]);
        assert!(unexercised(CheckId::SubagentNotifications, &ended, &[]).is_some());
        // A child session streamed: a subagent ran, and its missing notification is a failure.
        let child = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"child-1","event":{"type":"turn/start","data":{"turn":1}}}}"#;
        let ran = transcript(&[(0, START), (3, child), (5, END)]);
        assert_eq!(unexercised(CheckId::SubagentNotifications, &ran, &[]), None);
    }

    #[test]
    fn the_subagent_wait_ends_at_the_turn_end_only_when_no_subagent_ran() {
        let line = |s: &str| Output::parse(1, s.to_owned());
        let g = give_up(CheckId::SubagentNotifications, false).unwrap();
        assert_eq!((g.0)(&line(START)), None);
        assert!((g.0)(&line(END)).unwrap().contains("will not come"));
        let started = r#"{"jsonrpc":"2.0","method":"subagent.started","params":{"parentSessionId":"s1","childSessionId":"c"}}"#;
        let g = give_up(CheckId::SubagentNotifications, false).unwrap();
        assert_eq!((g.0)(&line(started)), None);
        assert_eq!((g.0)(&line(END)), None);
        assert!(give_up(CheckId::TurnFinalText, false).is_none());
    }

    #[test]
    fn the_user_message_wait_ends_at_the_turn_end_showing_the_user_message() {
        let line = |s: &str| Output::parse(1, s.to_owned());
        let g = give_up(CheckId::TurnUserMessageId, false).unwrap();
        let user = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"user/message","data":{"message":{"id":"m1"}}}}}"#;
        assert_eq!((g.0)(&line(user)), None);
        let why = (g.0)(&line(END)).unwrap();
        assert!(why.contains(r#""message":{"id":"m1"}"#), "{why}");
    }
}
