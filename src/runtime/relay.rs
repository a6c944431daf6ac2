//! `send_message` between a session and its subagents, as the 0.2.1rc2 release relays it
//! (recorded: `sdk_tool_send_message`; docs/CONTRACT.md#s13.4). A parent writes to its direct
//! children and a child to its parent; the message reaches the target as a `next-step` note
//! (`Agent FROM sent a message: `, then the text; source `agent-message`, form `relay`). A
//! working target reads it at its next step; an idle one starts a turn of its own that claims
//! it; an idle child is started again (`subagent.started`, reopened: its next request a
//! `resume`), and its end is told to its parent as its first was.

use super::events::{new_id, user_message, Events};
use super::{reaper, script, Runtime};
use serde_json::json;

/// Why a message was refused: the release's message and `SubagentError` code.
pub(super) type Refusal = (String, &'static str);

impl Runtime {
    /// Relays `message` from session `from` to the agent `to`: the tool's result text.
    pub(super) fn relay(
        &mut self,
        from: &str,
        to: &str,
        message: &str,
        now: u64,
        out: &mut Vec<u8>,
    ) -> Result<String, Refusal> {
        let unavailable = || (format!("subagent \"{to}\" is unavailable"), "NOT_RESUMABLE");
        let Some(target) = self.sessions.get(to) else {
            return Err(unavailable());
        };
        let to_child = target.parent.as_deref() == Some(from);
        let to_parent = self
            .sessions
            .get(from)
            .is_some_and(|s| s.parent.as_deref() == Some(to));
        if !to_child && !to_parent {
            let text = format!("subagent \"{to}\" belongs to another parent session");
            return Err((text, "UNAUTHORIZED"));
        }
        let idle = target.turn.is_none() && !target.running;
        if to_child && idle {
            super::turn::subagent_started(out, from, to);
            if let Some(p) = self.sessions.get_mut(from) {
                p.children += 1;
            }
            // The release reopens the finished child from its log: one event logged, not
            // streamed, and its next request is a `resume` (its header sent again).
            if let Some(c) = self.sessions.get_mut(to) {
                c.seq += 1;
                c.header_sent = false;
            }
        }
        let content = json!([{"type":"text","text": format!("Agent {from} sent a message: ")},
            {"type":"text","text": message}]);
        let step = script::for_content(&content);
        let source = json!({"kind":"agent-message","form":"relay","senderSessionId": from});
        let Some(s) = self.sessions.get_mut(to) else {
            return Err(unavailable());
        };
        let mut ev = Events::new(out, to, now);
        reaper::inject(s, &mut ev, user_message(content, source, new_id()));
        if idle {
            self.wake(to, step, now, out);
            if to_child {
                // Its request goes out after its parent's next one, as a new child's does.
                self.schedule(to, now.saturating_add(1));
            }
        }
        Ok(format!("message delivered to agent {to}"))
    }
}
