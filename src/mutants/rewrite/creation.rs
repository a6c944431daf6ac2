//! `creation-not-shared`: a get-or-create that does not share its attempt. Two prompts to a
//! session id not yet created, the second read before the first is answered, each create the
//! session; the second creation streams the session's creation events again, numbered from the
//! seq they had (two sessions of one id, one log each), before the session's next event and
//! at its time.

use super::super::frames::{s, session_event};
use crate::wire::json;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// The events a new session streams before its first prompt's receipt.
const CREATION: &[&str] = &["permission/preset", "sandbox/mode", "approval/policy"];

/// What the mutant remembers of sessions being created.
#[derive(Debug, Default)]
pub(super) struct Creations {
    /// Prompts read and not yet answered: id echo → session id.
    open_prompts: HashMap<String, String>,
    /// Sessions one of whose prompts has been answered: their creation is over.
    created: HashSet<String>,
    /// Sessions a second prompt reached while they were being created; their second creation is
    /// not yet written.
    doubled: HashSet<String>,
    /// Each session's creation events, as written.
    events: HashMap<String, Vec<Value>>,
    /// Sessions that streamed an event after their creation events.
    past_creation: HashSet<String>,
    /// The time of a session's second creation: its later events come no earlier.
    floor: HashMap<String, u64>,
}

impl Creations {
    /// A `session/prompt` with id echo `id` on session `sid` has been read.
    pub(super) fn prompt(&mut self, id: String, sid: &str) {
        let creating = !self.created.contains(sid) && self.open_prompts.values().any(|s| s == sid);
        if creating {
            self.doubled.insert(sid.to_owned());
        }
        self.open_prompts.insert(id, sid.to_owned());
    }

    /// A response with id echo `id` has been written.
    pub(super) fn answered(&mut self, id: &str) {
        if let Some(sid) = self.open_prompts.remove(id) {
            self.created.insert(sid);
        }
    }

    /// Frame `v` as the mutant writes it: `None` when it is written as it is (its time perhaps
    /// moved on).
    pub(super) fn rewrite(&mut self, v: &mut Value) -> Option<Vec<String>> {
        let (sid, ty, ev) = session_event(v)?;
        let (sid, ty, now) = (sid.to_owned(), ty.to_owned(), time(ev));
        if let (Some(&at), Some(t)) = (self.floor.get(&sid), v.pointer_mut("/params/event/time")) {
            *t = json!(now.max(at));
        }
        let ty = ty.as_str();
        if CREATION.contains(&ty) && !self.past_creation.contains(&sid) {
            self.events.entry(sid).or_default().push(v.clone());
            return None;
        }
        self.past_creation.insert(sid.clone());
        if !self.doubled.remove(&sid) {
            return None;
        }
        let first = self.events.get(&sid).cloned().unwrap_or_default();
        // The second creation comes later than the first, and the session's next event later still.
        let later = first.iter().map(|e| time(&e["params"]["event"]) + 1).max();
        let at = later.unwrap_or(0).max(now);
        self.floor.insert(sid, at);
        let mut out = Vec::new();
        for mut e in first.into_iter().chain([v.clone()]) {
            if let Some(t) = e.pointer_mut("/params/event/time") {
                *t = json!(at);
            }
            out.push(s(&e));
        }
        Some(out)
    }
}

/// An event's time (0 when it has none).
fn time(ev: &Value) -> u64 {
    ev.get("time").and_then(Value::as_u64).unwrap_or(0)
}

/// The id echo of a response, as [`Creations`] keys prompts.
pub(super) fn id_echo(v: &Value) -> String {
    json::to_string(&v["id"])
}
