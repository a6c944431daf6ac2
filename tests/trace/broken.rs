//! Deliberately broken runtimes must make the relevant trace fail, naming the broken expectation.

use super::{fixture, mock, quick};
use dsh_conformance::runner::replay;

const SECOND_PROMPT: &str = "session/second-prompt-reuses-session.trace";

fn fails(mode: &str) -> String {
    let r = replay(&fixture(SECOND_PROMPT), &mock(mode), &quick());
    assert!(!r.passed(), "mode {mode} should fail:\n{r}");
    println!("{r}");
    r.to_string()
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
    let msg = fails("messageid");
    assert!(
        msg.contains("second-prompt-reuses-session.trace:11"),
        "{msg}"
    );
    assert!(
        msg.contains("/result/messageId: expected \"{{$m1}}\" = "),
        "{msg}"
    );
}

#[test]
fn replayed_turn_one_events_fail_on_the_second_prompt() {
    let msg = fails("replay");
    assert!(msg.contains("\"type\":\"turn/start\""), "{msg}");
    assert!(
        msg.contains("second-prompt-reuses-session.trace:18"),
        "{msg}"
    );
}

#[test]
fn a_frozen_turn_counter_fails_naming_the_turn_expectation() {
    let msg = fails("frozen-turn");
    assert!(
        msg.contains("second-prompt-reuses-session.trace:21"),
        "{msg}"
    );
    assert!(
        msg.contains("/params/event/data/turn: expected 2, got 1"),
        "{msg}"
    );
}

#[test]
fn idle_before_turn_end_fails_as_out_of_order() {
    let msg = fails("early-idle");
    assert!(msg.contains("\"status\":\"idle\""), "{msg}");
    assert!(msg.contains("arrived out of order"), "{msg}");
    assert!(
        msg.contains("second-prompt-reuses-session.trace:15"),
        "{msg}"
    );
}

#[test]
fn a_non_json_stdout_line_fails_the_frames_only_rule() {
    let msg = fails("garbage");
    assert!(
        msg.contains("stdout carries something other than JSON-RPC frames"),
        "{msg}"
    );
    assert!(msg.contains("is not JSON"), "{msg}");
    assert!(msg.contains("debug: model call starting"), "{msg}");
}
