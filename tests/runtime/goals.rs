//! A goal's automatic rounds through the in-memory runtime (docs/CONTRACT.md#s13.4, *Goals*):
//! one turn per round once the session is idle, the block at the limit, and a prompt that
//! arrives before the round is admitted running first. The byte-exact comparison with the
//! release is the fidelity test's (`sdk_tool_goals`, `sdk_tool_goal_updates`).

use super::harness::{cfg, events, prompt, H};
use dsh_conformance::runtime::Edition;
use serde_json::Value;

fn sources(ev: &[Value]) -> Vec<String> {
    ev.iter()
        .filter(|e| e["type"] == "user/message")
        .map(|e| {
            e["data"]["source"]["kind"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .filter(|k| k != "runtime-context")
        .collect()
}

fn changes(ev: &[Value]) -> Vec<String> {
    ev.iter()
        .filter(|e| e["type"] == "goal/change")
        .map(|e| e["data"]["operation"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn a_goal_runs_its_rounds_as_turns_then_blocks_at_its_limit() {
    let mut h = H::with(cfg(Edition::Current));
    h.init();
    let create = r#"call: create_goal {"objective":"ship","max_goal_rounds":2}"#;
    let mut f = h.send(prompt(2, "s", create));
    f.extend(h.settle());
    let ev = events(&f, "s");
    assert_eq!(
        sources(&ev),
        ["user", "goal", "goal"],
        "two rounds of their own"
    );
    assert_eq!(changes(&ev), ["create", "block"]);
    let block = ev
        .iter()
        .rev()
        .find(|e| e["type"] == "goal/change")
        .unwrap();
    assert_eq!(
        block["data"]["goal"]["blockedReason"]["message"],
        "Goal reached its configured limit of 2 rounds."
    );
    let turns = ev.iter().filter(|e| e["type"] == "turn/end").count();
    assert_eq!(turns, 3);
    let reasons: Vec<&Value> = ev
        .iter()
        .filter(|e| e["type"] == "request/header")
        .map(|e| &e["data"]["reason"])
        .collect();
    assert_eq!(reasons, ["initial", "series", "series"]);
}

#[test]
fn a_prompt_sent_at_the_idle_runs_before_the_next_round() {
    let mut h = H::with(cfg(Edition::Current));
    h.init();
    let create = r#"call: create_goal {"objective":"ship","max_goal_rounds":1}"#;
    let mut f = h.send(prompt(2, "s", create));
    // The prompt comes in the same instant as the idle, before the round's checkpoint.
    f.extend(h.send(prompt(3, "s", "reply: first")));
    f.extend(h.settle());
    let ev = events(&f, "s");
    assert_eq!(sources(&ev), ["user", "user", "goal"]);
    assert_eq!(changes(&ev), ["create", "block"]);
}
