//! One client↔runtime conversation judged as a whole: the one judge `check`, `replay` and `fuzz`
//! share. It feeds the [`Checker`] (the rules judged frame by frame) and adds what only the
//! conversation shows, so that one bug is one finding, on its own rule:
//! - a session's history streamed again (`turn.no-replay`, docs/CONTRACT.md#s6): an event line
//!   written before, or a renumbered replay ([`crate::replay`]). The replayed events break no
//!   other rule (their seq and turns are the replay's, not the counting's);
//! - an answer repeated (`response.exactly-once`): a response line written before, whatever
//!   other rule the checker saw the repeat break (the other request of a shared id, a
//!   notification of id null …), unless the first copy broke that rule too. How a line is
//!   written keeps its own rule;
//! - settling: every request answered and every session idle, once the driver has given the
//!   runtime its time ([`Conversation::unsettled`]).
//!
//! An answer to no request at all may be left to whoever sent what it answers
//! ([`Unsolicited::Left`]): the suite's frame checks own the probes they send.

use super::replay::{Replay, Replays};
use super::{CheckId, Checker, Judged, Profile, Received, Sent, Violation, ViolationKind};
use dsh_protocol::wire::json::{self, JsonView};
use dsh_protocol::wire::output::{Frame, NotAFrame, Output};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Who judges an answer whose id no request read carries (in either JSON type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsolicited {
    /// The conversation: the checker's rules (`response.exactly-once`, the silence rules).
    Judged,
    /// The driver, which knows what it sent (the suite's frame checks): the line is skipped.
    Left,
}

/// The conversation's judge. Feed it every line read ([`Conversation::sent`]) and written
/// ([`Conversation::received`]), in the order they happened where that is known.
#[derive(Debug)]
pub struct Conversation {
    ck: Checker,
    unsolicited: Unsolicited,
    /// Every request id echo read.
    keys: HashSet<String>,
    /// Every event line written.
    events: HashSet<String>,
    replays: Replays,
    /// Every response line written (as the same JSON, however spaced), with the rules its first
    /// copy broke.
    answers: HashMap<String, Vec<CheckId>>,
    /// Ids a repeated answer was taken for.
    repeated_ids: HashSet<String>,
    /// The number of the last line written.
    written: usize,
}

impl Conversation {
    /// A conversation with no history under `profile`.
    pub fn new(profile: Profile, unsolicited: Unsolicited) -> Conversation {
        Conversation {
            ck: Checker::new(profile),
            unsolicited,
            keys: HashSet::new(),
            events: HashSet::new(),
            replays: Replays::default(),
            answers: HashMap::new(),
            repeated_ids: HashSet::new(),
            written: 0,
        }
    }

    /// The frame-by-frame checker (its pending requests, its profile).
    pub fn checker(&self) -> &Checker {
        &self.ck
    }

    /// Records a (decoded, trimmed) line the runtime read.
    pub fn sent(&mut self, line: &str) -> Sent {
        let sent = self.ck.sent(line);
        if let Sent::Request { key, .. } = &sent {
            self.keys.insert(key.clone());
        }
        sent
    }

    /// Judges one line the runtime wrote: its frame, and every rule it breaks.
    pub fn received(&mut self, o: &Output) -> Judged {
        self.written = self.written.max(o.line);
        let event =
            matches!(o.frame(), Frame::Notification { method, .. } if method == "session.event");
        if event && !self.events.insert(o.text().to_owned()) {
            let m =
                "an event already streamed is streamed again (a replay of the session's history)";
            return Judged {
                frame: Some(Received::Notification("session.event".into())),
                violations: vec![violation(CheckId::TurnNoReplay, o, m.into())],
            };
        }
        let replay = self.replayed(o);
        let mut violations = Vec::new();
        if replay == Replay::Starts {
            let m = "a message already streamed is streamed again with a new seq (a replay of the session's history, renumbered)";
            violations.push(violation(CheckId::TurnNoReplay, o, m.into()));
        }
        if self.unsolicited == Unsolicited::Left && self.unsolicited(o) {
            return Judged {
                frame: None,
                violations,
            };
        }
        let judged = self.ck.received(o);
        if replay == Replay::New {
            violations.extend(self.repeats(o, judged.violations));
        }
        Judged {
            frame: judged.frame,
            violations,
        }
    }

    /// Judges one line given as text (without its `\n`), numbered after the lines judged so
    /// far, for drivers that hold text (the in-memory fuzz target, tests).
    pub fn received_text(&mut self, line: &str) -> Judged {
        let o = Output::parse(self.written + 1, line.to_owned());
        self.received(&o)
    }

    /// What is still owed once the runtime had its time (the driver knows when that is):
    /// requests unanswered (but those under the id echoes in `exempt`), else sessions running.
    pub fn unsettled(&self, exempt: &[String]) -> Unsettled {
        let owed: Vec<(String, String)> = (self.ck.pending().into_iter())
            .filter(|(k, _)| !exempt.contains(k))
            .collect();
        if !owed.is_empty() {
            return Unsettled::Unanswered(owed);
        }
        match self.ck.busy_sessions() {
            busy if busy.is_empty() => Unsettled::Settled,
            busy => Unsettled::Running(busy),
        }
    }

    /// What a line is to the session's replays: [`Replay::New`] unless it is an event.
    fn replayed(&mut self, o: &Output) -> Replay {
        let Some(p) = o.params_of("session.event") else {
            return Replay::New;
        };
        match (p.get("sessionId").and_then(|s| s.as_str()), p.get("event")) {
            (Some(sid), Some(ev)) => self.replays.event(sid, ev),
            _ => Replay::New,
        }
    }

    /// Whether a line is a response whose id no request carried (in either JSON type), or one
    /// whose id is a literal JSON has not ([`answers_a_literal_id`]).
    fn unsolicited(&self, o: &Output) -> bool {
        let Frame::Response { id: key, .. } = o.frame() else {
            return matches!(o.frame(), Frame::NotAFrame(NotAFrame::NotJson(_)))
                && answers_a_literal_id(o.text());
        };
        if self.keys.contains(key) {
            return false;
        }
        // The same id in the other JSON type (`7` for `"7"`) answers its request: a type change.
        let swapped = match json::parse(key).map(|p| p.value) {
            Ok(Value::String(s)) => json::parse(&s)
                .ok()
                .filter(|p| p.value.is_number())
                .map(|p| json::to_string(&p.value)),
            Ok(Value::Number(_)) => Some(json::to_string(&Value::String(key.clone()))),
            _ => None,
        };
        !swapped.is_some_and(|k| self.keys.contains(&k))
    }

    /// A response line's violations, a repeated answer's relabelled `response.exactly-once` (one
    /// cause, one finding). So is an answer no request waits for on an id a repeat was already
    /// taken for (the repeat took the slot of the other request of that id).
    fn repeats(&mut self, o: &Output, found: Vec<Violation>) -> Vec<Violation> {
        let Frame::Response { id, .. } = o.frame() else {
            return found;
        };
        let raw = o.text();
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let same =
            json::parse(line).map_or_else(|_| line.to_owned(), |p| json::to_string(&p.value));
        let earlier = self.answers.get(&same).cloned();
        let taken = self.repeated_ids.contains(id);
        let mut broken = Vec::new();
        let out = (found.into_iter())
            .map(|v| {
                broken.push(v.rule);
                let repeat = !is_how_written(v.rule)
                    && (earlier.as_ref().is_some_and(|e| !e.contains(&v.rule))
                        || (taken && v.kind == ViolationKind::Unrequested));
                if !repeat {
                    return v;
                }
                Violation {
                    rule: CheckId::ResponseExactlyOnce,
                    message: format!("an answer repeated (the checker saw: {v})"),
                    kind: ViolationKind::Unrequested,
                    ..v
                }
            })
            .collect();
        if earlier.is_some() {
            self.repeated_ids.insert(id.clone());
        }
        self.answers.entry(same).or_default().extend(broken);
        out
    }
}

/// What a conversation still owes ([`Conversation::unsettled`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsettled {
    /// Nothing.
    Settled,
    /// Requests never answered, as `(id echo, method)`: `response.exactly-once`.
    Unanswered(Vec<(String, String)>),
    /// Sessions whose last status is `running`: `status.idle-after-turn`.
    Running(Vec<String>),
}

impl Unsettled {
    /// The rule broken, if any.
    pub fn rule(&self) -> Option<CheckId> {
        match self {
            Unsettled::Settled => None,
            Unsettled::Unanswered(_) => Some(CheckId::ResponseExactlyOnce),
            Unsettled::Running(_) => Some(CheckId::StatusIdleAfterTurn),
        }
    }
}

fn violation(rule: CheckId, o: &Output, message: String) -> Violation {
    Violation {
        rule,
        stdout_line: Some(o.line),
        message,
        kind: ViolationKind::Other,
        difference: None,
    }
}

/// Whether a rule judges only how a line is written (not what it answers).
fn is_how_written(rule: CheckId) -> bool {
    matches!(rule, CheckId::StdoutCompact | CheckId::StdoutLfOnly)
}

/// Whether a line that is no JSON is an answer whose id is `NaN`, `Infinity` or `-Infinity`, as
/// Python's `json.dumps` writes the id of a request `json.loads` took from a line JSON.parse
/// refuses: no request can carry such an id (its line is malformed), so the line answers none,
/// and serving that line is the bug (`frame.non-json-literals-ignored`), not how it is answered.
fn answers_a_literal_id(text: &str) -> bool {
    let Some(at) = text.find("\"id\"") else {
        return false;
    };
    let rest = text[at + 4..].trim_start();
    let Some(value) = rest.strip_prefix(':').map(str::trim_start) else {
        return false;
    };
    let literal = ["NaN", "Infinity", "-Infinity"]
        .iter()
        .any(|l| value.starts_with(l));
    literal && (text.contains("\"result\"") || text.contains("\"error\""))
}
