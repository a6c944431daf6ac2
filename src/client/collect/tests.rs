use super::*;

fn ev(s: &str, ty: &str, data: Value) -> Value {
    json!({"method": "session.event", "params": {"sessionId": s, "event": {"type": ty, "data": data}}})
}

fn receipt(s: &str, id: &str) -> Value {
    ev(
        s,
        "agent/inbox/spliced",
        json!({"target": "next-turn", "inserted": [{"id": id}]}),
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

fn sub(method: &str, child: &str) -> Value {
    json!({"method": method, "params": {"parentSessionId": "r", "childSessionId": child}})
}

/// The text the run ends with, fed `notes` (`None`: it never ended).
fn text(bug: Option<Bug>, notes: &[Value]) -> Option<String> {
    let mut run = Run::new("r", json!("M"), bug);
    notes.iter().find_map(|n| match run.on(n) {
        Step::Done(v) => Some(v["text"].as_str().unwrap_or("").to_owned()),
        _ => None,
    })
}

#[test]
fn a_run_starts_at_its_own_receipt_and_a_loose_one_at_any() {
    let notes = [
        receipt("r", "OTHER"),
        said("r", "other"),
        status("r", "idle"),
        receipt("fork", "M"),
        receipt("r", "M"),
        said("r", "mine"),
        status("r", "idle"),
    ];
    assert_eq!(text(None, &notes).as_deref(), Some("mine"));
    assert_eq!(
        text(Some(Bug::LooseReceipt), &notes).as_deref(),
        Some("other")
    );
    // The fork's splice of the same message, then the other prompt's tail.
    let fork_first = [
        receipt("fork", "M"),
        said("r", "other"),
        status("r", "idle"),
        receipt("r", "M"),
        said("r", "mine"),
        status("r", "idle"),
    ];
    assert_eq!(text(None, &fork_first).as_deref(), Some("mine"));
    let any = text(Some(Bug::ReceiptAnySession), &fork_first);
    assert_eq!(any.as_deref(), Some("other"));
}

#[test]
fn a_run_waits_for_its_subagents_result_past_both_idles() {
    let notes = [
        receipt("r", "M"),
        sub("subagent.started", "c"),
        said("r", "started"),
        status("r", "idle"),
        said("c", "child"),
        status("c", "idle"),
        status("r", "running"),
        sub("subagent.finished", "c"),
        said("r", "done"),
        status("r", "idle"),
    ];
    assert_eq!(text(None, &notes).as_deref(), Some("done"));
    assert_eq!(text(Some(Bug::AnyIdle), &notes).as_deref(), Some("done"));
    assert_eq!(
        text(Some(Bug::FirstIdle), &notes).as_deref(),
        Some("started")
    );
    let child = text(Some(Bug::ChildIdle), &notes);
    assert_eq!(child.as_deref(), Some("started"));
}

#[test]
fn another_sessions_idle_ends_only_the_any_idle_mutants_run() {
    let notes = [
        receipt("r", "M"),
        status("x", "idle"),
        said("r", "mine"),
        status("r", "idle"),
    ];
    assert_eq!(text(None, &notes).as_deref(), Some("mine"));
    assert_eq!(text(Some(Bug::AnyIdle), &notes).as_deref(), Some(""));
}
