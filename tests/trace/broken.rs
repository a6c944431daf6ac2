//! Deliberately broken runtimes must make the relevant trace fail, naming the broken expectation.

use super::{closest, differs_at, fixture, mock, quick};
use dsh_conformance::runner::replay;
use dsh_conformance::trace::{Failure, FailureKind, StepKind, Trace};
use serde_json::Value;

const SECOND_PROMPT: &str = "session/second-prompt-reuses-session.trace";

/// The failure of the session trace against the mock in `mode`.
fn fails(mode: &str) -> Failure {
    let r = replay(&fixture(SECOND_PROMPT), &mock(mode), &quick());
    println!("{r}");
    match r.failure() {
        Some(f) => f.clone(),
        None => panic!("mode {mode} should fail:\n{r}"),
    }
}

/// The trace line of the one expectation of the session trace that `is` picks out by its frame
/// pattern: where a failure must point, found in the fixture rather than written down.
fn line_of(is: impl Fn(&Value) -> bool) -> usize {
    let t: Trace = fixture(SECOND_PROMPT);
    let lines: Vec<usize> = t
        .steps
        .iter()
        .filter(|s| match &s.kind {
            StepKind::Expect(e) => is(&e.pat.to_value()),
            _ => false,
        })
        .map(|s| s.line)
        .collect();
    assert_eq!(lines.len(), 1, "one expectation is meant: {lines:?}");
    lines[0]
}

/// The event of a `session.event` frame (or pattern).
fn event(v: &Value) -> &Value {
    &v["params"]["event"]
}

#[test]
fn the_well_behaved_mock_passes_the_session_trace() {
    let r = replay(&fixture(SECOND_PROMPT), &mock("ok"), &quick());
    assert!(r.passed(), "{r}");
    assert_eq!(
        r.stats.matched, r.stats.lines,
        "every frame is matched: {:?}",
        r.stats
    );
}

#[test]
fn a_message_id_that_differs_from_the_receipt_fails_naming_the_response() {
    let f = fails("messageid");
    let response = line_of(|v| v["id"] == 2 && v["result"]["messageId"].is_string());
    assert_eq!(
        (f.kind, f.trace_line),
        (FailureKind::Mismatch, Some(response)),
        "{f}"
    );
    assert_eq!(differs_at(&f), "/result/messageId", "{f}");
}

#[test]
fn replayed_turn_one_events_fail_on_the_second_prompt() {
    let f = fails("replay");
    let second_receipt = line_of(|v| {
        event(v)["type"] == "agent/inbox/spliced"
            && event(v)["data"]["inserted"][0]["content"][0]["text"] == "reply: two"
    });
    assert_eq!(f.trace_line, Some(second_receipt), "{f}");
    assert_eq!(event(&closest(&f))["type"], "turn/start", "{f}");
}

#[test]
fn a_frozen_turn_counter_fails_naming_the_turn_expectation() {
    let f = fails("frozen-turn");
    let second_start =
        line_of(|v| event(v)["type"] == "turn/start" && event(v)["data"]["turn"] == 2);
    assert_eq!(
        (f.kind, f.trace_line),
        (FailureKind::Missing, Some(second_start)),
        "{f}"
    );
    assert_eq!(differs_at(&f), "/params/event/data/turn", "{f}");
    assert_eq!(event(&closest(&f))["data"]["turn"], 1, "{f}");
}

#[test]
fn idle_before_turn_end_fails_as_out_of_order() {
    let f = fails("early-idle");
    let first_end = line_of(|v| event(v)["type"] == "turn/end" && event(v)["data"]["turn"] == 1);
    assert_eq!(
        (f.kind, f.trace_line),
        (FailureKind::OutOfOrder, Some(first_end)),
        "{f}"
    );
    assert_eq!(closest(&f)["params"]["status"], "idle", "{f}");
}

#[test]
fn a_non_json_stdout_line_fails_the_frames_only_rule() {
    let f = fails("garbage");
    assert_eq!(f.kind, FailureKind::NotAFrame, "{f}");
    assert_eq!(
        f.closest.as_deref(),
        Some("debug: model call starting"),
        "{f}"
    );
    assert!(f.stdout_line.is_some(), "{f}");
}
