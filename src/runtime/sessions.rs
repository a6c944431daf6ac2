//! Sessions in this process: opening (creation events), storing, and settling when they go idle
//! (parked `session/wait`s and legacy prompts answered). Below both the request methods
//! ([`super::methods`]) and the turn engine ([`super::turn`]), which use it and not each other's
//! internals.

use super::events::{write_status, Events};
use super::{persist, Edition, Runtime, Session};
use crate::wire::write;
use serde_json::{json, Value};

pub(super) const SHUTTING_DOWN: &str = "SDK server is shutting down";

impl Runtime {
    /// Opens `sid` in this process, creating it when it is new (docs/CONTRACT.md#s3.2).
    pub(super) fn open_session(
        &mut self,
        sid: &str,
        now: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if self.sessions.contains_key(sid) {
            return Ok(());
        }
        if self.shutting_down {
            return Err(SHUTTING_DOWN.into());
        }
        if let Some(store) = self.store.as_mut() {
            // A session another process is creating right now is as good as stored.
            if store.load(sid).is_some() || (!sid.is_empty() && store.claim(sid).is_err()) {
                return Err(format!("session \"{sid}\" already exists"));
            }
        }
        let mut s = Session::new(self.route.clone());
        if self.cfg.edition == Edition::Current
            && super::profile::announces_policies(self.cfg.profile)
        {
            let mut ev = Events::new(out, sid, now);
            ev.event(
                &mut s,
                "permission/preset",
                &json!({"preset":"workspace-write"}),
            );
            ev.event(&mut s, "sandbox/mode", &json!({"mode":"workspace-write"}));
            ev.event(&mut s, "approval/policy", &json!({"policy":"ask"}));
        }
        let stored = s.stored();
        self.adopt(sid, s);
        self.save(sid, stored);
        Ok(())
    }

    /// Keeps `s` as the session `sid` of this process, the last one opened so far.
    pub(super) fn adopt(&mut self, sid: &str, mut s: Session) {
        s.born = self.opened;
        self.opened += 1;
        self.sessions.insert(Box::from(sid), s);
    }

    /// End of input: the release disposes its sessions, newest first, canceling what waits in
    /// each inbox — the working-directory notes for the next step, then the prompts queued for
    /// the next turn — with one splice each (`outcome: canceled`; probed against 0.2.1rc2).
    pub(super) fn cancel_pending(&mut self, now: u64, out: &mut Vec<u8>) {
        let mut order: Vec<(u64, Box<str>)> = self
            .sessions
            .iter()
            .filter(|(_, s)| !s.next_step.is_empty() || !s.inbox.is_empty())
            .map(|(sid, s)| (s.born, sid.clone()))
            .collect();
        order.sort_unstable_by_key(|o| std::cmp::Reverse(o.0));
        for (_, sid) in order {
            let Some(s) = self.sessions.get_mut(&sid) else {
                continue;
            };
            let pending = [
                ("next-step", s.next_step.len()),
                ("next-turn", s.inbox.len()),
            ];
            s.next_step.clear();
            s.inbox.clear();
            let mut ev = Events::new(out, &sid, now);
            for (target, n) in pending.into_iter().filter(|(_, n)| *n > 0) {
                let d = json!({"target": target,"start":0,"removedCount": n,"inserted":[],"outcome":"canceled"});
                ev.event(s, "agent/inbox/spliced", &d);
            }
        }
    }

    pub(super) fn save(&mut self, sid: &str, st: persist::Stored) {
        if let Some(store) = self.store.as_mut() {
            if sid.is_empty() {
                return; // "" cannot be stored; its turns fail like the real runtime's (see turn.rs)
            }
            if let Err(e) = store.save(sid, st) {
                eprintln!("dsh-reference-runtime: cannot persist session {sid:?}: {e}");
            }
        }
    }

    /// Answers the parked `session/wait`s and legacy prompts of a session that just went idle.
    pub(super) fn settle(&mut self, sid: &str, out: &mut Vec<u8>) {
        let mtas = self.cfg.max_tokens_as_success();
        let legacy = self.cfg.edition == Edition::Legacy;
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        if !legacy {
            write_status(out, sid, false);
        }
        if s.busy() {
            return;
        }
        for id in std::mem::take(&mut s.waiters) {
            write::result(out, &id, &json!({}));
        }
        let pending = std::mem::take(&mut s.legacy_pending);
        if !pending.is_empty() {
            let reason = s.last_end.clone();
            let status = if ok_status(reason.as_ref(), mtas) {
                "ok"
            } else {
                "error"
            };
            for id in pending {
                let mut params = json!({"sessionId": sid, "status": status});
                if let Some(r) = &reason {
                    params["reason"] = r.clone();
                }
                write::notification(out, "session.finished", Some(&params));
                write::result(out, &id, &json!({"accepted": true}));
            }
        }
    }
}

/// `status` of `subagent.finished` / `session.finished` for a `turn/end` reason.
/// Moves session `s` to the directory `target` (absolute, existing, not its current one):
/// `working-directory/change`, then the note to the model spliced for its next step (which
/// claims and reads it; see the turn's steps).
pub(super) fn change_directory(s: &mut Session, ev: &mut Events<'_>, target: &str) {
    ev.event(s, "working-directory/change", &json!({"cwd": target}));
    let text = format!(
        "The working directory changed from {} to {}.",
        super::events::js_quote(&s.cwd),
        super::events::js_quote(target)
    );
    let notice = super::events::user_message(
        json!([{"type":"text","text": text}]),
        json!({"kind":"working-directory"}),
        super::events::new_id(),
    );
    // Queued behind the notes still waiting for the next step.
    let splice = json!({"target":"next-step","start": s.next_step.len(),"inserted":[&notice]});
    ev.event(s, "agent/inbox/spliced", &splice);
    s.next_step.push(notice);
    s.cwd = std::rc::Rc::from(target);
}

pub(super) fn ok_status(reason: Option<&Value>, max_tokens_as_success: bool) -> bool {
    match reason.and_then(|r| r.get("kind")).and_then(Value::as_str) {
        Some("completed") => true,
        Some("max-tokens") => max_tokens_as_success,
        _ => false,
    }
}
