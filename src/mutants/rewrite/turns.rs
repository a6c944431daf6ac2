//! `shutdown-ends-turns`: at shutdown, each turn in progress is reported over (a `turn/end` with
//! reason `cancelled`, then the session's idle) before the shutdown is served, where the contract
//! cuts the turn off with neither (docs/CONTRACT.md#r3.6-turn-cut-short).

use super::super::frames::{s, session_event};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// One session's stream, as far as its turn in progress goes.
#[derive(Debug, Default)]
struct Stream {
    next_seq: u64,
    time: u64,
    /// The turn in progress (its `turn/start`'s `data.turn`), if one is.
    open: Option<Value>,
}

/// The sessions' turns, from the frames the runtime wrote.
#[derive(Debug, Default)]
pub(super) struct Turns(BTreeMap<String, Stream>);

impl Turns {
    /// Reads runtime frame `v`.
    pub(super) fn track(&mut self, v: &Value) {
        let Some((sid, ty, ev)) = session_event(v) else {
            return;
        };
        let st = self.0.entry(sid.to_owned()).or_default();
        st.next_seq = ev["seq"].as_u64().map_or(st.next_seq, |n| n + 1);
        st.time = ev["time"].as_u64().unwrap_or(st.time);
        match ty {
            "turn/start" => st.open = Some(ev["data"]["turn"].clone()),
            "turn/end" => st.open = None,
            _ => {}
        }
    }

    /// The frames that report every turn in progress over: its `turn/end`, then the idle.
    pub(super) fn wind_down(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for (sid, st) in &mut self.0 {
            let Some(turn) = st.open.take() else { continue };
            let data = json!({"turn": turn, "reason": {"kind": "cancelled"}});
            let ev = json!({"type": "turn/end", "seq": st.next_seq, "time": st.time, "data": data});
            st.next_seq += 1;
            out.push(s(&json!({"jsonrpc": "2.0", "method": "session.event",
                "params": {"sessionId": sid, "event": ev}})));
            out.push(s(&json!({"jsonrpc": "2.0", "method": "session.status",
                "params": {"sessionId": sid, "status": "idle"}})));
        }
        out
    }
}
