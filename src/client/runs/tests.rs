use super::*;
use crate::client::driver::DriverError;
use crate::client::log::PeerLog;
use serde_json::json;
use std::time::Duration;

fn peer(frames: Vec<Value>) -> PeerLog {
    let events = frames
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            (
                Duration::from_millis(i as u64),
                PeerEvent::Wrote(f.to_string()),
            )
        })
        .collect();
    PeerLog {
        n: 1,
        argv: Vec::new(),
        events,
    }
}

fn obs(frames: Vec<Value>, ops: Vec<Outcome>) -> Observation {
    Observation {
        peers: vec![peer(frames)],
        ops: ops
            .into_iter()
            .map(|o| (Op::Start, o, Duration::ZERO))
            .collect(),
        ..Default::default()
    }
}

fn ok(text: &str) -> Outcome {
    Outcome::Ok(json!({"ok": true, "text": text}))
}

fn ev(s: &str, ty: &str, data: Value) -> Value {
    json!({"method": "session.event", "params": {"sessionId": s, "event": {"type": ty, "data": data}}})
}

fn receipt(s: &str) -> Value {
    ev(
        s,
        "agent/inbox/spliced",
        json!({"target": "next-turn", "inserted": [{"id": "M"}]}),
    )
}

fn said(s: &str, text: &str) -> Value {
    ev(
        s,
        "assistant/message",
        json!({"message": {"content": [{"type": "text", "text": text}]}}),
    )
}

fn status(s: &str, st: &str) -> Value {
    json!({"method": "session.status", "params": {"sessionId": s, "status": st}})
}

fn untestable(v: Verdict) -> bool {
    matches!(v, Verdict::NotTestable { .. })
}

fn failed(v: Verdict) -> bool {
    matches!(v, Verdict::Fail(_))
}

#[test]
fn receipt_correlation_needs_the_look_alike_and_an_idle_before_the_receipt() {
    let start = || vec![ok(""), ok(""), ok(RIGHT)];
    assert!(untestable(receipt_correlation(&obs(vec![], vec![ok("")]))));
    let no_idle = vec![receipt(FORK), receipt("s1")];
    assert!(untestable(receipt_correlation(&obs(no_idle, start()))));
    let wire = || {
        vec![
            receipt(FORK),
            said("s1", FIRST),
            status("s1", "idle"),
            receipt("s1"),
        ]
    };
    assert_eq!(receipt_correlation(&obs(wire(), start())), Verdict::Pass);
    let wrong = vec![ok(""), ok(""), ok(FIRST)];
    assert!(failed(receipt_correlation(&obs(wire(), wrong))));
}

#[test]
fn subagent_trees_needs_a_subagent_and_two_root_idles() {
    let started = json!({"method": "subagent.started",
        "params": {"parentSessionId": "s1", "childSessionId": "c"}});
    assert!(untestable(subagent_trees(&obs(vec![], vec![ok("")]))));
    // One root idle: a run that returned the first turn's text ended with its subagent running;
    // any other outcome cannot be judged (the root never ran again).
    let once = vec![started.clone(), said("s1", "early"), status("s1", "idle")];
    assert!(failed(subagent_trees(&obs(
        once.clone(),
        vec![ok(""), ok("early")]
    ))));
    assert!(untestable(subagent_trees(&obs(
        once,
        vec![ok(""), ok("other")]
    ))));
    let wire = vec![
        started,
        said("s1", "early"),
        status("s1", "idle"),
        said("c", "child"),
        status("c", "idle"),
        status("s1", "running"),
        said("s1", "late"),
        status("s1", "idle"),
    ];
    let judge = |t: &str| subagent_trees(&obs(wire.clone(), vec![ok(""), ok(t)]));
    assert_eq!(judge("late"), Verdict::Pass);
    assert!(failed(judge("early")));
    assert!(failed(judge("child")));
}

#[test]
fn chatty_sessions_needs_the_chatter_on_the_wire() {
    let text = CHATTY_PROMPT.trim_start_matches("reply: ");
    assert!(untestable(chatty_sessions(&obs(
        vec![],
        vec![ok(""), ok(text)]
    ))));
    let wire = || vec![status(&format!("{}0", turns::CHATTY), "running")];
    assert_eq!(
        chatty_sessions(&obs(wire(), vec![ok(""), ok(text)])),
        Verdict::Pass
    );
    assert!(failed(chatty_sessions(&obs(
        wire(),
        vec![ok(""), Outcome::TimedOut]
    ))));
}

#[test]
fn idle_never_comes_passes_a_bounded_run_and_fails_an_observed_hang() {
    let err = |class: &str| {
        Outcome::Err(DriverError {
            class: class.into(),
            code: None,
            message: "m".into(),
        })
    };
    let ended = || vec![ev("s1", "turn/end", json!({}))];
    assert!(untestable(idle_never_comes(&obs(
        vec![],
        vec![ok(""), err("timeout")]
    ))));
    assert!(untestable(idle_never_comes(&obs(
        ended(),
        vec![ok(""), ok("x")]
    ))));
    assert_eq!(
        idle_never_comes(&obs(ended(), vec![ok(""), err("timeout")])),
        Verdict::Pass
    );
    assert!(failed(idle_never_comes(&obs(
        ended(),
        vec![ok(""), Outcome::TimedOut]
    ))));
    // The driver's word that the client has no bound is no failure: its judge sees nothing run
    // (`judges::unsupported` gives the verdict); a hang it observed fails, with how long it waited.
    assert!(untestable(idle_never_comes(&obs(
        vec![],
        vec![ok(""), err("unsupported")]
    ))));
    let mut hung = obs(ended(), vec![ok(""), Outcome::TimedOut]);
    hung.ops[1].2 = Duration::from_millis(8000);
    let Verdict::Fail(f) = idle_never_comes(&hung) else {
        panic!("not a failure")
    };
    assert!(
        f.reason.starts_with("the run never ended")
            && f.reason.contains("8.0 s later")
            && f.reason.ends_with("the client hangs"),
        "{}",
        f.reason
    );
}
