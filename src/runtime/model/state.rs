//! The tools that act on a session's state: its background jobs and its goal.

use super::{Answer, Next};
use crate::runtime::events::Events;
use crate::runtime::Session;
use serde_json::{json, Value};

/// `job_list`, `job_output` or `job_kill`: the session's jobs answer it ([`crate::runtime::jobs`]), a
/// job it finds or makes settled streamed around it.
pub(super) fn job_call(
    a: &mut Answer<'_>,
    s: &mut Session,
    ev: &mut Events<'_>,
    name: &str,
    input: &Value,
    call_seq: u64,
) -> Next {
    let r = s.jobs.run(name, input, a.now);
    for data in &r.ended {
        crate::runtime::reaper::ended_in_turn(s, ev, data);
    }
    for data in &r.before {
        ev.event(s, "job/settled", data);
    }
    let tr = a.tool_result(&r.text, r.is_error);
    ev.answer(s, "tool/result", &tr, &[call_seq]);
    a.step_end(s, ev);
    // A killed job settles after the step that killed it ends.
    if let Some(data) = &r.after {
        ev.event(s, "job/settled", data);
    }
    Next::Step(format!("tool result: {}", r.text))
}

/// `get_goal`, `create_goal` or `update_goal`: the session's goal answers it
/// ([`crate::runtime::goals`]), its `goal/change` streamed before the result.
pub(super) fn goal_call(
    a: &mut Answer<'_>,
    s: &mut Session,
    ev: &mut Events<'_>,
    name: &str,
    input: &Value,
    call_seq: u64,
) -> Next {
    // A direct human turn: a root session's turn that claimed the user's prompt.
    let human = s.parent.is_none()
        && s.turn
            .as_ref()
            .and_then(|t| t.msg.as_ref())
            .is_some_and(|m| m.value["source"]["kind"] == "user");
    let r = crate::runtime::goals::run(&mut s.goal, name, input, human, a.now);
    if let Some(change) = &r.change {
        ev.event(s, "goal/change", change);
    }
    let mut tr = a.tool_result(&r.text, r.error.is_some());
    if let Some((class, code)) = r.error {
        tr["error"] = json!({"name": class,"code": code});
    }
    a.tool_answered(s, ev, &tr, call_seq, &r.text)
}
