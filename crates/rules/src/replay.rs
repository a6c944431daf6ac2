//! Telling a session's replayed history from new events when the replay gives the old events new
//! `seq` and `time` (`turn.no-replay`, docs/CONTRACT.md#s6). An exact replay repeats whole frames
//! and is told by its text; a renumbered one only by what the events carry.
//!
//! A replay starts at a message the session already streamed: a `user/message` whose `data.id`,
//! or an `agent/inbox/spliced` whose inserted message's `id`, an earlier event of the same type
//! in that session carried (message ids are minted once per message: 200 recordings of the
//! release, 3106 events, repeat none). It goes on while the session's events repeat earlier
//! events but for `seq` and `time` (their `type` and `data`); the first event that does not
//! ends it. Sans-IO: the matcher (to skip replayed events as it skips exact repeats) and the
//! suite's stream judge (to blame the replay once, on its rule) feed it the events they read.

use dsh_protocol::wire::json::JsonView;
use std::collections::{HashMap, HashSet};

/// What an event is, as far as replays go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// A new event.
    New,
    /// The first event of a replay: it re-streams a message (the id) the session already had.
    Starts,
    /// A later event of a replay: the repeat of an earlier event but for its seq and time.
    Continues,
}

/// One session's history, as replays are told from it.
#[derive(Debug, Default)]
struct History {
    /// `(event type, message id)` of every message streamed.
    messages: HashSet<(String, String)>,
    /// Every event's `type` and `data`, as JSON text.
    events: HashSet<String>,
    replaying: bool,
}

/// Replays per session, over the events of one conversation in the order written.
#[derive(Debug, Default)]
pub struct Replays {
    sessions: HashMap<String, History>,
}

impl Replays {
    /// Reads the `event` (a `session.event`'s `params.event`) of `session`.
    pub fn event<'a>(&mut self, session: &str, event: impl JsonView<'a>) -> Replay {
        let h = self.sessions.entry(session.to_owned()).or_default();
        let ty = event.get("type").and_then(JsonView::as_str).unwrap_or("");
        let data = event.get("data");
        let mut again = false;
        for id in message_ids(ty, data) {
            again |= !h.messages.insert((ty.to_owned(), id.to_owned()));
        }
        let key = format!(
            "{ty}\0{}",
            data.map_or(String::new(), |d| d.to_value().to_string())
        );
        let repeat = !h.events.insert(key);
        let verdict = match (again, h.replaying && repeat) {
            (true, _) if !h.replaying => Replay::Starts,
            (true, _) | (false, true) => Replay::Continues,
            (false, false) => Replay::New,
        };
        h.replaying = verdict != Replay::New;
        verdict
    }
}

/// The message ids an event of type `ty` streams.
fn message_ids<'a, V: JsonView<'a>>(ty: &str, data: Option<V>) -> Vec<&'a str> {
    let Some(d) = data else {
        return Vec::new();
    };
    match ty {
        "user/message" => d.get("id").and_then(JsonView::as_str).into_iter().collect(),
        "agent/inbox/spliced" => d
            .get("inserted")
            .into_iter()
            .flat_map(|i| i.elements())
            .filter_map(|m| m.get("id").and_then(JsonView::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn ev(ty: &str, data: Value) -> Value {
        json!({"type": ty, "seq": 0, "time": 0, "data": data})
    }

    fn turn(n: u64, msg: &str) -> Vec<Value> {
        vec![
            ev("agent/inbox/spliced", json!({"inserted": [{"id": msg}]})),
            ev("turn/start", json!({"turn": n})),
            ev("user/message", json!({"id": msg, "content": []})),
            ev("turn/end", json!({"turn": n})),
        ]
    }

    fn read(r: &mut Replays, sid: &str, evs: &[Value]) -> Vec<Replay> {
        evs.iter().map(|e| r.event(sid, e)).collect()
    }

    #[test]
    fn a_renumbered_replay_starts_at_its_repeated_message_and_ends_at_a_new_event() {
        use Replay::*;
        let mut r = Replays::default();
        assert_eq!(read(&mut r, "s", &turn(1, "m1")), [New; 4]);
        let mut second = turn(1, "m1");
        second.extend(turn(2, "m2"));
        assert_eq!(
            read(&mut r, "s", &second),
            [Starts, Continues, Continues, Continues, New, New, New, New]
        );
    }

    #[test]
    fn new_messages_with_repeated_data_and_other_sessions_are_no_replay() {
        let mut r = Replays::default();
        read(&mut r, "s", &turn(1, "m1"));
        // A stuck turn counter repeats turn/start 1, but with a new message: no replay.
        assert!(read(&mut r, "s", &turn(1, "m2"))
            .iter()
            .all(|v| *v == Replay::New));
        assert!(read(&mut r, "t", &turn(1, "m1"))
            .iter()
            .all(|v| *v == Replay::New));
    }
}
