//! The mutants of a session's event stream: events dropped, held back, replayed or renumbered,
//! and the turns and idle status they report.

use super::super::frames::{is_prompt_receipt, is_response, s, session_event, status_idle_session};
use super::super::history_file;
use super::Rewriter;
use crate::mutants::MutantKind::{self, self as M};
use crate::wire::json;
use serde_json::{json, Value};

impl Rewriter {
    /// Rewrites frame `v` in place as `kind` does; returns the lines that replace it when it is
    /// not written once, here (dropped, held back, or written with others).
    pub(super) fn events(&mut self, kind: MutantKind, v: &mut Value) -> Option<Vec<String>> {
        match kind {
            M::NoTurnEnd if matches!(session_event(v), Some((_, "turn/end", _))) => {
                return Some(Vec::new());
            }
            M::NoReceipt if is_prompt_receipt(v) => return Some(Vec::new()),
            M::ResponseBeforeReceipt => {
                if is_prompt_receipt(v) {
                    self.held_receipts.push(s(v));
                    return Some(Vec::new());
                }
                if v.pointer("/result/messageId").is_some() {
                    let mut out = vec![s(v)];
                    out.append(&mut self.held_receipts);
                    return Some(out);
                }
            }
            M::FrozenTurn => {
                if let Some(t) = v.pointer_mut("/params/event/data/turn") {
                    *t = json!(1);
                }
            }
            M::SharedTurnCounter => self.shared_turn_counter(v),
            M::FirstSessionOnly => {
                // One event boundary for the whole process: the first session to stream owns it.
                if let Some((sid, _, _)) = session_event(v) {
                    if *self.first_session.get_or_insert_with(|| sid.to_owned()) != sid {
                        return Some(Vec::new());
                    }
                }
            }
            M::ReplaysOldEvents => return self.replays_old_events(v),
            M::IdleBeforeTurnEnd => return self.idle_before_turn_end(v),
            M::WaitOnlyAtNextIdle => return self.wait_only_at_next_idle(v),
            M::ResumeReplaysHistory => return self.resume_replays_history(v),
            M::ResumeRestartsSeq => self.resume_restarts_seq(v),
            M::TrailingEmptyMessage => return self.trailing_empty_message(v),
            M::FinishedBeforeTurnEnd => return self.finished_before_turn_end(v),
            M::CreationNotShared => return self.creations.rewrite(v),
            M::NoIdle if status_idle_session(v).is_some() => return Some(Vec::new()),
            M::NoEventTime => {
                if let Some(Value::Object(ev)) = v.pointer_mut("/params/event") {
                    ev.shift_remove("time");
                }
            }
            M::OwnModel => {
                if let Some(Value::Array(blocks)) =
                    v.pointer_mut("/params/event/data/message/content")
                {
                    for b in blocks.iter_mut() {
                        if b.get("type") == Some(&json!("text")) {
                            b["text"] = json!("Hello! I am a real model and I ignore scripts.");
                        }
                    }
                }
            }
            M::UntypedToolCalls => {
                if let Some(Value::Array(blocks)) =
                    v.pointer_mut("/params/event/data/message/content")
                {
                    for b in blocks.iter_mut() {
                        if let Some(Value::Object(block)) =
                            Some(b).filter(|b| b["type"] == "tool-call")
                        {
                            block.shift_remove("type");
                        }
                    }
                }
            }
            M::SeqGap => {
                if let Some((sid, _, _)) = session_event(v) {
                    let n = self.event_count.entry(sid.to_owned()).or_default();
                    *n += 1;
                    if *n > 3 {
                        if let Some(seq) = v.pointer_mut("/params/event/seq") {
                            *seq = json!(seq.as_u64().unwrap_or(0) + 1);
                        }
                    }
                }
            }
            _ => {}
        }
        None
    }

    /// Turn numbers counted across all sessions: each `turn/start` takes the next, and the
    /// session's later events report it.
    fn shared_turn_counter(&mut self, v: &mut Value) {
        let sid = v
            .pointer("/params/sessionId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let is_start = session_event(v).is_some_and(|(_, t, _)| t == "turn/start");
        if let (Some(sid), Some(t)) = (sid, v.pointer_mut("/params/event/data/turn")) {
            if is_start {
                self.global_turn += 1;
                self.turn_map.insert(sid.clone(), self.global_turn);
            }
            if let Some(g) = self.turn_map.get(&sid) {
                *t = json!(g);
            }
        }
    }

    /// A prompt's receipt comes after the session's earlier events, sent again.
    fn replays_old_events(&mut self, v: &Value) -> Option<Vec<String>> {
        let (sid, _, _) = session_event(v)?;
        let sid = sid.to_owned();
        let line = s(v);
        let mut out = Vec::new();
        if is_prompt_receipt(v) {
            out.extend(self.history.get(&sid).cloned().unwrap_or_default());
        }
        self.history.entry(sid).or_default().push(line.clone());
        out.push(line);
        Some(out)
    }

    /// A `turn/end` held back until its session's idle status is out (or its next frame).
    fn idle_before_turn_end(&mut self, v: &Value) -> Option<Vec<String>> {
        if let Some((sid, "turn/end", _)) = session_event(v) {
            self.held_turn_end.insert(sid.to_owned(), s(v));
            return Some(Vec::new());
        }
        if let Some(sid) = status_idle_session(v) {
            let held = self.held_turn_end.remove(sid);
            return Some(std::iter::once(s(v)).chain(held).collect());
        }
        let sid = v.pointer("/params/sessionId").and_then(Value::as_str)?;
        let held = self.held_turn_end.remove(sid)?;
        Some(vec![held, s(v)])
    }

    /// The answer to a `session/wait` read while its session was idle is held back until the
    /// session's next idle status (a runtime that only ever settles waits on an idle transition).
    fn wait_only_at_next_idle(&mut self, v: &Value) -> Option<Vec<String>> {
        if let Some(sid) = status_idle_session(v) {
            let held = self.held_waits.remove(sid).unwrap_or_default();
            return Some(std::iter::once(s(v)).chain(held).collect());
        }
        if !is_response(v) {
            return None;
        }
        let sid = self.idle_waits.remove(&json::to_string(&v["id"]))?;
        self.held_waits.entry(sid).or_default().push(s(v));
        Some(Vec::new())
    }

    /// A session's turn/end, and what the session streams after it, is held until its legacy
    /// `session.finished` has been written.
    fn finished_before_turn_end(&mut self, v: &Value) -> Option<Vec<String>> {
        if v["method"] == "session.finished" {
            let sid = v.pointer("/params/sessionId").and_then(Value::as_str)?;
            let held = self.held_until_finished.remove(sid).unwrap_or_default();
            return Some(std::iter::once(s(v)).chain(held).collect());
        }
        let sid = v.pointer("/params/sessionId").and_then(Value::as_str)?;
        let ends = matches!(session_event(v), Some((_, "turn/end", _)));
        if !ends && !self.held_until_finished.contains_key(sid) {
            return None;
        }
        self.held_until_finished
            .entry(sid.to_owned())
            .or_default()
            .push(s(v));
        Some(Vec::new())
    }

    /// Each turn/end comes after one more assistant/message of its session, with no content (a
    /// model's closing chunk written as a message of its own); the seq is renumbered.
    fn trailing_empty_message(&mut self, v: &Value) -> Option<Vec<String>> {
        let (sid, ty, _) = session_event(v)?;
        match ty {
            "assistant/message" => {
                let mut empty = v.clone();
                if let Some(m) = empty.pointer_mut("/params/event/data/message") {
                    m["content"] = json!([]);
                    m["id"] = json!(uuid::Uuid::new_v4().to_string());
                }
                self.closing_messages.insert(sid.to_owned(), s(&empty));
                None
            }
            "turn/end" => {
                let closing = self.closing_messages.remove(sid)?;
                Some(vec![closing, s(v)])
            }
            _ => None,
        }
    }

    /// A session resumed numbers its events from 0 again (its seq counter lived in the process
    /// that stored its log).
    fn resume_restarts_seq(&mut self, v: &mut Value) {
        if is_response(v) && v.get("result").is_some() {
            if let Some(sid) = self.resumes.remove(&json::to_string(&v["id"])) {
                self.next_seq.insert(sid, 0);
            }
            return;
        }
        let Some(sid) = session_event(v).map(|(sid, _, _)| sid.to_owned()) else {
            return;
        };
        if let Some(n) = self.next_seq.get_mut(&sid) {
            v["params"]["event"]["seq"] = json!(*n);
            *n += 1;
        }
    }

    /// Every session event is stored; a resume's answer comes after the stored history.
    fn resume_replays_history(&mut self, v: &Value) -> Option<Vec<String>> {
        if let Some((sid, _, _)) = session_event(v) {
            history_file::append(sid, &s(v));
            self.history.entry(sid.to_owned()).or_default().push(s(v));
        }
        if !(is_response(v) && v.get("result").is_some()) {
            return None;
        }
        let sid = self.resumes.remove(&json::to_string(&v["id"]))?;
        // The stored history; without DSH_HOME, this process's.
        let mut out = history_file::read(&sid)
            .unwrap_or_else(|| self.history.get(&sid).cloned().unwrap_or_default());
        out.push(s(v));
        Some(out)
    }
}
