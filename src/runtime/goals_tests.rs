//! The goal tools' answers (recorded texts: `sdk_tool_goals`, `sdk_tool_goal_updates`).

use super::*;

fn call(goal: &mut Option<Goal>, tool: &str, args: Value) -> Answer {
    run(goal, tool, &args, true, 1000)
}

fn update(goal: &mut Option<Goal>, action: &str, more: Value) -> Answer {
    let g = goal.clone().unwrap();
    let mut args = json!({"goal_id": g.id,"revision": g.revision,"action": action});
    args.as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    call(goal, "update_goal", args)
}

#[test]
fn a_goal_is_created_read_and_moved_through_its_phases_as_the_release_answers() {
    let mut goal = None;
    assert_eq!(
        call(&mut goal, "get_goal", json!({})).text,
        r#"{"goal":null}"#
    );
    let a = call(
        &mut goal,
        "create_goal",
        json!({"objective":" ship ","max_goal_rounds":1}),
    );
    let id = goal.as_ref().unwrap().id.clone();
    assert_eq!(
        a.text,
        format!(
            r#"{{"goal":{{"id":"{id}","revision":1,"objective":"ship","phase":"active","roundsStarted":0,"maxGoalRounds":1}},"activation":"armed"}}"#
        )
    );
    assert_eq!(a.change.unwrap()["operation"], "create");
    let again = call(&mut goal, "create_goal", json!({"objective":"x"}));
    assert_eq!(again.error, Some(("GoalError", "GOAL_ALREADY_EXISTS")));
    assert_eq!(
        again.text,
        format!("Error: goal \"{id}\" already exists with phase \"active\"")
    );
    let p = update(&mut goal, "pause", json!({}));
    assert!(
        p.text.contains(r#""phase":"paused""#) && p.text.ends_with(r#""activation":"disarmed"}"#),
        "{}",
        p.text
    );
    let r = update(&mut goal, "resume", json!({}));
    assert_eq!(r.error, Some(("HarnessError", "GOAL_TOOL_RESUME_PAUSED")));
    let c = update(&mut goal, "complete", json!({}));
    assert!(
        c.text
            .contains(r#""revision":3,"objective":"ship","phase":"complete""#),
        "{}",
        c.text
    );
    let b = update(&mut goal, "blocked", json!({"blocked_reason":"stuck"}));
    assert_eq!(
        b.text,
        format!("Error: cannot block goal \"{id}\" from phase \"complete\"; expected active")
    );
    // A completed goal may be replaced.
    assert!(call(&mut goal, "create_goal", json!({"objective":"next"}))
        .error
        .is_none());
}

#[test]
fn refs_and_arguments_are_checked_before_the_goal_changes() {
    let mut goal = None;
    let none = call(
        &mut goal,
        "update_goal",
        json!({"goal_id":"g","revision":1,"action":"pause"}),
    );
    assert_eq!(
        (none.text.as_str(), none.error),
        (
            "Error: no current goal",
            Some(("GoalError", "GOAL_NOT_FOUND"))
        )
    );
    call(&mut goal, "create_goal", json!({"objective":"o"}));
    let id = goal.as_ref().unwrap().id.clone();
    let stale = call(
        &mut goal,
        "update_goal",
        json!({"goal_id": id,"revision":9,"action":"pause"}),
    );
    assert_eq!(
        stale.text,
        format!("Error: stale goal ref \"{id}\" revision 9; current is \"{id}\" revision 1")
    );
    let bad = call(
        &mut goal,
        "update_goal",
        json!({"goal_id":" g","revision":1,"action":"pause"}),
    );
    assert_eq!(
        bad.error,
        Some(("HarnessError", "GOAL_TOOL_INVALID_UPDATE"))
    );
    let edit = update(&mut goal, "edit", json!({}));
    assert_eq!(
        edit.text,
        "Error: goal edit requires objective and/or maxGoalRounds"
    );
    let cap = update(&mut goal, "edit", json!({"max_goal_rounds": 1.5}));
    assert_eq!(cap.error, Some(("GoalError", "GOAL_INVALID_MAX_ROUNDS")));
    let blocked = update(&mut goal, "blocked", json!({"blocked_reason":"  "}));
    assert_eq!(
        blocked.text,
        "Error: blocked_reason is required with action blocked"
    );
    assert_eq!(goal.as_ref().unwrap().revision, 1, "nothing changed");
    let not_human = run(
        &mut goal,
        "create_goal",
        &json!({"objective":"o"}),
        false,
        1,
    );
    assert_eq!(
        not_human.error,
        Some(("HarnessError", "GOAL_TOOL_AUTHORITY_REQUIRED"))
    );
}

#[test]
fn the_round_prompt_quotes_the_objective_as_json() {
    let mut goal = None;
    call(
        &mut goal,
        "create_goal",
        json!({"objective":"say \"hi\"","max_goal_rounds":3}),
    );
    let text = round_prompt(goal.as_ref().unwrap(), 2);
    assert!(
        text.starts_with("<goal_round>\nObjective: \"say \\\"hi\\\"\"\nRound: 2/3\n\n"),
        "{text}"
    );
    assert!(text.ends_with(".\n</goal_round>"));
}

#[test]
fn a_stored_goal_comes_back_as_it_was_but_disarmed() {
    let mut goal = None;
    call(
        &mut goal,
        "create_goal",
        json!({"objective":"keep","max_goal_rounds":2}),
    );
    let blocked = goal
        .as_ref()
        .unwrap()
        .blocked(("round-limit".into(), "limit".into()), 2000);
    for g in [goal.clone().unwrap(), blocked] {
        let back = Goal::restore(&g.durable()).unwrap();
        assert!(!back.armed, "activation is the process's own");
        assert_eq!(back, Goal { armed: false, ..g });
    }
    // The release resumes a resumed session's goal only when asked: `get_goal` says so.
    let mut restored = Some(Goal::restore(&goal.unwrap().durable()).unwrap());
    let text = call(&mut restored, "get_goal", json!({})).text;
    assert!(text.ends_with(r#""activation":"disarmed"}"#), "{text}");
    assert_eq!(Goal::restore(&json!({"goal": {"phase": "gone"}})), None);
    assert_eq!(Goal::restore(&Value::Null), None);
}
