//! `send_message`, its arguments valid: the session relays it ([`crate::runtime::relay`]).

use super::{Answer, Next};
use crate::runtime::events::Events;
use crate::runtime::Runtime;
use serde_json::{json, Value};

impl Runtime {
    /// The call, the relay (the target's events first), then the result.
    pub(super) fn message_call(
        &mut self,
        a: &mut Answer<'_>,
        ev: &mut Events<'_>,
        v: Value,
    ) -> Next {
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        let call_seq = a.tool_call(s, ev, "send_message", &crate::wire::json::to_string(&v));
        let field = |k: &str| v[k].as_str().unwrap_or_default();
        let relayed = self.relay(a.sid, field("agent_id"), field("message"), a.now, ev.out());
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        let (text, error) = match relayed {
            Ok(text) => (text, None),
            Err((message, code)) => (format!("Error: {message}"), Some(code)),
        };
        let mut tr = a.tool_result(&text, error.is_some());
        if let Some(code) = error {
            tr["error"] = json!({"name":"SubagentError","code": code});
        }
        a.tool_answered(s, ev, &tr, call_seq, &text)
    }
}
