//! Layers on a run's notifications (docs/CONTRACT.md#s15.7 to #s15.10), sans-IO like
//! `layers.rs`: look-alike receipts, subagent trees, chatty sessions, an idle that never comes.

use super::layers::{event_of, frame, parse, status, Action, Layer};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The session the look-alike splice of the client's message is written on.
pub const FORK: &str = "kit-fork-session";

/// Whether `v` is a prompt's receipt (§5): a `next-turn` splice that inserts a message.
pub fn is_receipt(v: &Value) -> bool {
    let data = &v["params"]["event"]["data"];
    matches!(event_of(v), Some(("agent/inbox/spliced", _)))
        && data["target"] == "next-turn"
        && data["inserted"].as_array().is_some_and(|a| !a.is_empty())
}

/// The first prompt's turn is written late: from its response on, notifications are held until
/// the runtime writes the receipt of a later prompt (a runtime that reads its input only when a
/// turn is done), so the first turn's tail — its text, its `turn/end`, its root idle — comes
/// after the client sent the later prompt and before that prompt's receipt. Ahead of them all
/// comes a splice of the later prompt's message on another session ([`FORK`]: a forked agent
/// carries its parent's messages, ids and all).
#[derive(Default)]
pub struct LateTail {
    prompts: usize,
    holding: bool,
    done: bool,
    held: Vec<String>,
}

impl Layer for LateTail {
    fn input(&mut self, f: &Value, _now: u64) {
        if f["method"] == "session/prompt" {
            self.prompts += 1;
        }
    }
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        if self.done {
            return vec![Action::Frame(line)];
        }
        let v = parse(&line);
        if v.get("method").is_none() {
            self.holding |= v["result"].get("messageId").is_some();
            return vec![Action::Frame(line)];
        }
        if !self.holding {
            return vec![Action::Frame(line)];
        }
        if !(self.prompts >= 2 && is_receipt(&v)) {
            self.held.push(line);
            return Vec::new();
        }
        self.done = true;
        let mut ev = v["params"]["event"].clone();
        ev["seq"] = json!(0);
        let mut out = vec![frame(
            json!({"method": "session.event", "params": {"sessionId": FORK, "event": ev}}),
        )];
        out.extend(self.held.drain(..).map(Action::Frame));
        out.push(Action::Frame(line));
        out
    }
}

/// A child session's events are renumbered to start where its parent's next `seq` is (a child
/// continued from an earlier log: §5 numbers each session's own log), so the two sessions' `seq`
/// overlap; the rest (the root idle before the child's result, running again when it comes, the
/// child's idle in between) is what the reference runtime does for `subagent: P`.
/// After a parent's idle with a child still running, what follows waits a moment, so that a
/// client reads that idle alone (in its own read), as it would from a runtime whose child takes
/// its time: whether a client ends its run there must not depend on how writes batch into reads.
#[derive(Default)]
pub struct ChildSeq {
    parent: HashMap<String, String>,
    last: HashMap<String, u64>,
    shift: HashMap<String, i64>,
    finished: std::collections::HashSet<String>,
    hold_until: Option<u64>,
    held: Vec<String>,
}

/// How long the frames after a parent's idle wait while its child runs.
const CHILD_PAUSE_MS: u64 = 1000;

impl Layer for ChildSeq {
    fn output(&mut self, line: String, now: u64) -> Vec<Action> {
        if self.hold_until.is_some() {
            self.held.push(line);
            return Vec::new();
        }
        let v = parse(&line);
        let idle = v["method"] == "session.status" && v["params"]["status"] == "idle";
        let session = v["params"]["sessionId"].as_str().unwrap_or("");
        if v["method"] == "subagent.finished" {
            if let Some(c) = v["params"]["childSessionId"].as_str() {
                self.finished.insert(c.to_owned());
            }
        }
        // A parent goes idle while a child it started has not finished.
        let waiting = self
            .parent
            .iter()
            .any(|(c, p)| p == session && !self.finished.contains(c));
        if idle && waiting {
            self.hold_until = Some(now + CHILD_PAUSE_MS);
        }
        self.renumber(line, v)
    }
    fn tick(&mut self, _now: u64) -> Vec<Action> {
        self.hold_until = None;
        let held = std::mem::take(&mut self.held);
        held.into_iter()
            .flat_map(|l| {
                let v = parse(&l);
                self.renumber(l, v)
            })
            .collect()
    }
    fn deadline(&self) -> Option<u64> {
        self.hold_until
    }
}

impl ChildSeq {
    /// A frame with its child's `seq` renumbered.
    fn renumber(&mut self, line: String, mut v: Value) -> Vec<Action> {
        if v["method"] == "subagent.started" {
            let p = &v["params"];
            if let (Some(c), Some(par)) =
                (p["childSessionId"].as_str(), p["parentSessionId"].as_str())
            {
                self.parent.insert(c.to_owned(), par.to_owned());
            }
        }
        let Some((_, s)) = event_of(&v).map(|(t, s)| (t.to_owned(), s.to_owned())) else {
            return vec![Action::Frame(line)];
        };
        let seq = v["params"]["event"]["seq"].as_u64().unwrap_or(0);
        let Some(par) = self.parent.get(&s) else {
            self.last.insert(s, seq);
            return vec![Action::Frame(line)];
        };
        let next = self.last.get(par).map_or(1, |l| l + 1) as i64;
        let shift = *self.shift.entry(s).or_insert(next - seq as i64);
        v["params"]["event"]["seq"] = json!((seq as i64 + shift).max(0));
        vec![Action::Frame(v.to_string())]
    }
}

/// The prefix of every chatty session's id.
pub const CHATTY: &str = "kit-chatty-";

/// After each `turn/start` of the client's sessions, `sessions` other sessions go running and
/// each stream `chunks` events, interleaved one frame at a time (§4: the runtime reports every
/// session it runs). They stay running: their idle would be `client.root-idle`'s business.
pub struct Chatty {
    /// How many other sessions.
    pub sessions: usize,
    /// Events in each one's turn.
    pub chunks: usize,
}

fn ev(session: &str, seq: usize, ty: &str, data: Value) -> Action {
    let ev = json!({"type": ty, "seq": seq, "time": 1_700_000_000_000u64, "data": data});
    frame(json!({"method": "session.event", "params": {"sessionId": session, "event": ev}}))
}

impl Chatty {
    fn burst(&self) -> Vec<Action> {
        let ids: Vec<String> = (0..self.sessions).map(|k| format!("{CHATTY}{k}")).collect();
        let mut out: Vec<Action> = ids.iter().map(|s| status(s, "running")).collect();
        for i in 0..self.chunks {
            for s in &ids {
                let delta = format!("kit: chatter {i} of another session");
                out.push(ev(
                    s,
                    i,
                    "assistant/chunk",
                    json!({"turn": 1, "step": 1, "delta": delta}),
                ));
            }
        }
        out
    }
}

impl Layer for Chatty {
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        let v = parse(&line);
        let mine = matches!(event_of(&v), Some(("turn/start", s)) if !s.starts_with(CHATTY));
        let mut out = vec![Action::Frame(line)];
        if mine {
            out.extend(self.burst());
        }
        out
    }
}

/// The client's sessions never go idle: their `session.status` idle is not written (the turn
/// ends, `turn/end` and all; a runtime whose status report is lost).
#[derive(Default)]
pub struct NoIdle {
    sessions: Vec<Value>,
}

impl Layer for NoIdle {
    fn input(&mut self, f: &Value, _now: u64) {
        if f["method"] == "session/prompt" {
            self.sessions.push(f["params"]["sessionId"].clone());
        }
    }
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        let v = parse(&line);
        let p = &v["params"];
        if v["method"] == "session.status"
            && p["status"] == "idle"
            && self.sessions.contains(&p["sessionId"])
        {
            return Vec::new();
        }
        vec![Action::Frame(line)]
    }
}

#[cfg(test)]
mod tests;
