//! A subagent of a subagent (docs/CONTRACT.md#r15.8-descendant-subagents), sans-IO like
//! `layers.rs`: the run's tree grows a grandchild that outlives its parent.
//!
//! The reference runtime refuses a subagent at depth 2 (as the release does: `maxDepth 1`), so the
//! layer writes the grandchild itself. When the root's child starts, the child starts
//! [`GRANDCHILD`]. The child finishes as the runtime has it, the root runs on its result and goes
//! idle: with the grandchild still running, that idle does not end the run. A moment later the
//! grandchild says its reply, goes idle and finishes, and the root runs once more (a turn built
//! from the root's own last one) and says [`AFTER_GRANDCHILD`] before its next idle, which ends
//! the run. A client that counts only the root's own children ends at the earlier idle.

use super::layers::{event_of, parse, status, Action, Layer};
use serde_json::{json, Value};

/// The grandchild's session id.
pub const GRANDCHILD: &str = "kit-grandchild";
/// The root's last reply, once its grandchild finished: the run's text.
pub const AFTER_GRANDCHILD: &str = "kit: the root's reply once its grandchild finished";
/// How long the root's idle with the grandchild running stands alone before the rest comes.
const PAUSE_MS: u64 = 1000;

/// The layer (see the module's note).
#[derive(Default)]
pub struct Grandchild {
    root: Option<String>,
    child: Option<String>,
    /// The child's `subagent.finished`, once written (the grandchild's is made from it).
    child_finished: Option<Value>,
    /// The root's last `turn/start`, `assistant/message` and `turn/end` (the last turn is made
    /// from them), and its last seq.
    turn: [Option<Value>; 3],
    seq: u64,
    hold_until: Option<u64>,
    held: Vec<String>,
    done: bool,
}

impl Layer for Grandchild {
    fn input(&mut self, f: &Value, _now: u64) {
        if f["method"] == "session/prompt" && self.root.is_none() {
            self.root = f["params"]["sessionId"].as_str().map(str::to_owned);
        }
    }
    fn output(&mut self, line: String, now: u64) -> Vec<Action> {
        if self.hold_until.is_some() {
            self.held.push(line);
            return Vec::new();
        }
        let v = parse(&line);
        let root = self.root.clone().unwrap_or_default();
        if self.done || root.is_empty() {
            return vec![Action::Frame(line)];
        }
        let mut out = vec![Action::Frame(line)];
        let p = &v["params"];
        match v["method"].as_str().unwrap_or("") {
            "subagent.started" if p["parentSessionId"] == root.as_str() && self.child.is_none() => {
                let child = p["childSessionId"].as_str().unwrap_or("").to_owned();
                out.push(Action::Frame(renamed(&v, &child, &root).to_string()));
                out.push(status(GRANDCHILD, "running"));
                self.child = Some(child);
            }
            "subagent.finished" if self.child.as_deref() == p["childSessionId"].as_str() => {
                self.child_finished = Some(v.clone());
            }
            "session.status" if p["sessionId"] == root.as_str() && p["status"] == "idle" => {
                if self.child_finished.is_some() {
                    self.hold_until = Some(now + PAUSE_MS);
                }
            }
            _ => self.remember(&v, &root),
        }
        out
    }
    fn tick(&mut self, _now: u64) -> Vec<Action> {
        self.hold_until = None;
        self.done = true;
        let mut out = self.finish();
        out.extend(
            std::mem::take(&mut self.held)
                .into_iter()
                .map(Action::Frame),
        );
        out
    }
    fn deadline(&self) -> Option<u64> {
        self.hold_until
    }
}

/// `v` (a frame of the child's) as the grandchild's: the child in the parent's place, the
/// grandchild in the child's.
fn renamed(v: &Value, child: &str, parent: &str) -> Value {
    let text = v.to_string();
    let text = text.replace(&format!("\"{child}\""), &format!("\"{GRANDCHILD}\""));
    let text = text.replace(&format!("\"{parent}\""), &format!("\"{child}\""));
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

impl Grandchild {
    /// Keeps the root's events the last turn is made from.
    fn remember(&mut self, v: &Value, root: &str) {
        let Some((ty, s)) = event_of(v) else { return };
        if s != root {
            return;
        }
        self.seq = self
            .seq
            .max(v["params"]["event"]["seq"].as_u64().unwrap_or(0));
        let slot = match ty {
            "turn/start" => 0,
            "assistant/message" => 1,
            "turn/end" => 2,
            _ => return,
        };
        self.turn[slot] = Some(v.clone());
    }

    /// The grandchild's reply, idle and end, then the root's last turn and idle.
    fn finish(&mut self) -> Vec<Action> {
        let (Some(child), Some(fin), [Some(start), Some(msg), Some(end)]) = (
            self.child.clone(),
            self.child_finished.clone(),
            self.turn.clone(),
        ) else {
            return Vec::new();
        };
        let root = self.root.clone().unwrap_or_default();
        let mut reply = msg.clone();
        reply["params"]["sessionId"] = json!(GRANDCHILD);
        reply["params"]["event"]["seq"] = json!(0);
        set_text(&mut reply, "kit: the grandchild's reply");
        let mut out = vec![
            Action::Frame(reply.to_string()),
            status(GRANDCHILD, "idle"),
            Action::Frame(renamed(&fin, &child, &root).to_string()),
            status(&root, "running"),
        ];
        let turn = start["params"]["event"]["data"]["turn"]
            .as_u64()
            .unwrap_or(1)
            + 1;
        let time = end["params"]["event"]["time"].clone();
        for mut e in [start, msg, end] {
            self.seq += 1;
            e["params"]["event"]["seq"] = json!(self.seq);
            e["params"]["event"]["time"] = time.clone();
            e["params"]["event"]["data"]["turn"] = json!(turn);
            set_text(&mut e, AFTER_GRANDCHILD);
            out.push(Action::Frame(e.to_string()));
        }
        out.push(status(&root, "idle"));
        out
    }
}

/// Sets an `assistant/message`'s text blocks to `text` (other events are left alone).
fn set_text(v: &mut Value, text: &str) {
    if let Some(Value::Array(blocks)) = v.pointer_mut("/params/event/data/message/content") {
        blocks.retain(|b| b["type"] == "text");
        match blocks.first_mut() {
            Some(b) => b["text"] = json!(text),
            None => blocks.push(json!({"type": "text", "text": text})),
        }
        blocks.truncate(1);
    }
}

#[cfg(test)]
mod tests;
