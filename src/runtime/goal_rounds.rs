//! A goal's automatic rounds (`@deepseek-ai/dsh-goal-round-driver`, read in the 0.2.1rc2
//! executable; recorded: `sdk_tool_goals`, `sdk_tool_goal_updates`). Whenever a session with an
//! active, armed goal goes idle with nothing queued and no subagent running, the next round
//! starts as a turn of its own, its user message the round's prompt (source `goal`); once the
//! goal has started `maxGoalRounds` rounds, it is blocked (`round-limit`) instead.

use super::events::{new_id, user_message, Events};
use super::{goals, script, Msg, Runtime};
use crate::wire::json::Deep;
use serde_json::json;

/// How long after the idle a round is admitted: the release first flushes the session log
/// (its `drive` awaits a checkpoint; 3–14 ms in the recordings), so a prompt sent at the idle can
/// still run first.
const CHECKPOINT_MS: u64 = 5;

impl Runtime {
    /// Session `sid` just went idle: its goal is driven after the checkpoint, unless a turn
    /// starts meanwhile (its schedule replaces this one).
    pub(super) fn goal_idle(&mut self, sid: &str, now: u64) {
        let armed = self.sessions.get(sid).and_then(|s| s.goal.as_ref());
        if armed.is_some_and(|g| g.armed && g.phase == "active") {
            self.schedule(sid, now.saturating_add(CHECKPOINT_MS));
        }
    }

    /// The goal's next round, or the block at its limit, when the session is still idle.
    pub(super) fn drive_goal(&mut self, sid: &str, now: u64, out: &mut Vec<u8>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let ready = !s.running && s.inbox.is_empty() && s.children == 0;
        let Some(g) = s
            .goal
            .as_mut()
            .filter(|g| ready && g.armed && g.phase == "active")
        else {
            return;
        };
        if g.rounds_started >= g.max_rounds {
            let reason = format!(
                "Goal reached its configured limit of {} rounds.",
                g.max_rounds
            );
            *g = g.blocked(("round-limit".into(), reason), now);
            let change = g.change("block");
            Events::new(out, sid, now).event(s, "goal/change", &change);
            // After the turn's end, which saved the session: the block is kept too.
            let stored = s.stored();
            self.save(sid, stored);
            return;
        }
        g.rounds_started += 1;
        let round = g.rounds_started;
        let content = json!([{"type":"text","text": goals::round_prompt(g, round)}]);
        let source = json!({"kind":"goal","goalId": g.id,"revision": g.revision,"round": round});
        let msg = Msg {
            step: script::for_content(&content),
            value: Deep::new(user_message(content, source, new_id())),
            finished: None,
        };
        self.deliver(sid, msg, now, out);
    }
}

/// Whether a turn's message is a goal's automatic round (its first step sends the request
/// header again, as the release's round driver does).
pub(super) fn is_round(msg: &serde_json::Value) -> bool {
    msg["source"]["kind"] == "goal"
}
