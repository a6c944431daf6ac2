//! How the reference client collects a run (docs/CONTRACT.md#s15.3, #s15.7, #s15.8), sans-IO:
//! notifications in, the run's result out. [`Bug`]s that break collecting are applied here.

use super::driver::DriverError;
use super::reference::Bug;
use serde_json::{json, Value};
use std::collections::HashSet;

/// The event types the `strict-events` mutant knows.
/// The `turn/end` reason kinds of the contract (§5), for the strict-kinds mutant.
const KNOWN_KINDS: &[&str] = &["completed", "aborted", "blocked", "error"];

const KNOWN_EVENTS: &[&str] = &[
    "permission/preset",
    "sandbox/mode",
    "approval/policy",
    "agent/inbox/spliced",
    "turn/start",
    "step/start",
    "step/end",
    "user/message",
    "assistant/message",
    "turn/end",
    "system/message",
    "request/header",
    "request/context",
    "session/title",
    "session-log-deepseek/delivery-accepted",
    "tool/call",
    "tool/result",
    "subagent/catalog",
];

/// What the run does after a notification.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Read on.
    More,
    /// The run ended: `{text, finish, events}`.
    Done(Value),
    /// The run failed.
    Fail(DriverError),
}

/// One run being collected: the root session, its prompt's message id, the session tree.
pub struct Run {
    root: String,
    mid: Value,
    bug: Option<Bug>,
    seen: bool,
    tree: HashSet<String>,
    /// Subagents of the tree started and not yet finished.
    pending: HashSet<String>,
    /// The root went idle with a subagent pending (the `child-idle` mutant).
    root_idled: bool,
    events: Vec<String>,
    text: String,
    finish: Value,
}

impl Run {
    /// The run of the prompt `mid` on `root`.
    pub fn new(root: &str, mid: Value, bug: Option<Bug>) -> Run {
        Run {
            root: root.to_owned(),
            mid,
            bug,
            // The mutant takes every notification from the response on as the run's.
            seen: bug == Some(Bug::BatchedNoReceipt),
            tree: HashSet::from([root.to_owned()]),
            pending: HashSet::new(),
            root_idled: false,
            events: Vec::new(),
            text: String::new(),
            finish: Value::Null,
        }
    }

    fn is_receipt(&self, n: &Value) -> bool {
        let p = &n["params"];
        let ev = &p["event"];
        if n["method"] != "session.event" || ev["type"] != "agent/inbox/spliced" {
            return false;
        }
        let inserted = ev["data"]["inserted"].as_array();
        if self.bug == Some(Bug::LooseReceipt) {
            return inserted.is_some_and(|a| !a.is_empty());
        }
        let any_session = self.bug == Some(Bug::ReceiptAnySession);
        (any_session || p["sessionId"] == self.root.as_str())
            && inserted.is_some_and(|a| a.iter().any(|m| m["id"] == self.mid))
    }

    /// Whether a subagent started by `parent` belongs to the run's tree.
    fn grows_tree(&self, parent: &str) -> bool {
        match self.bug {
            Some(Bug::RootChildrenOnly) => parent == self.root,
            _ => self.tree.contains(parent),
        }
    }

    /// Takes one notification.
    pub fn on(&mut self, n: &Value) -> Step {
        if !self.seen {
            self.seen = self.is_receipt(n);
            if !self.seen {
                return Step::More;
            }
        }
        let p = &n["params"];
        let str_of = |k: &str| p[k].as_str().unwrap_or("").to_owned();
        match n["method"].as_str().unwrap_or("") {
            "subagent.started" if self.grows_tree(&str_of("parentSessionId")) => {
                self.tree.insert(str_of("childSessionId"));
                self.pending.insert(str_of("childSessionId"));
            }
            "subagent.finished" => {
                self.pending.remove(&str_of("childSessionId"));
            }
            "session.event" if p["sessionId"] == self.root.as_str() => {
                return self.event(&p["event"])
            }
            "session.status" if p["status"] == "idle" => {
                let mine = p["sessionId"] == self.root.as_str();
                let settled = self.pending.is_empty() || self.bug == Some(Bug::FirstIdle);
                let child = self.bug == Some(Bug::ChildIdle)
                    && self.root_idled
                    && self.tree.contains(&str_of("sessionId"));
                if ((mine || self.bug == Some(Bug::AnyIdle)) && settled) || child {
                    return Step::Done(
                        json!({"text": self.text, "finish": self.finish, "events": self.events}),
                    );
                }
                self.root_idled |= mine;
            }
            _ => {}
        }
        Step::More
    }

    fn event(&mut self, ev: &Value) -> Step {
        let ty = ev["type"].as_str().unwrap_or("").to_owned();
        if self.bug == Some(Bug::StrictEvents) && !KNOWN_EVENTS.contains(&ty.as_str()) {
            return Step::Fail(DriverError {
                class: "protocol".into(),
                code: None,
                message: format!("unknown event type {ty:?}"),
            });
        }
        if ty == "assistant/message" {
            self.text = text_of(&ev["data"]["message"]["content"]);
        }
        if ty == "turn/end" {
            let kind = &ev["data"]["reason"]["kind"];
            if self.bug == Some(Bug::StrictKinds) && !KNOWN_KINDS.iter().any(|k| kind == k) {
                return Step::Fail(DriverError {
                    class: "protocol".into(),
                    code: None,
                    message: format!("unknown turn/end reason kind {kind}"),
                });
            }
            self.finish = kind.clone();
        }
        self.events.push(ty);
        Step::More
    }
}

fn text_of(content: &Value) -> String {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect()
}

#[cfg(test)]
mod tests;
