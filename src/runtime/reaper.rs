//! Background jobs that end on their own (docs/CONTRACT.md#s13.6). The release's
//! `@deepseek-ai/dsh-tool-jobs` settles a job when its process ends and tells the owning session:
//! an idle one gets the completion notice as a new turn (its `wakeup` delivery), a busy one has it
//! injected for its next step. Not for a job killed by the model or one a `job_output` waited
//! for (`awaited`): those get no notice.
//!
//! The core has no clock of its own: whoever drives it polls ([`Runtime::poll`]), and each poll
//! first looks at the jobs of the sessions this module watches.

use super::events::Events;
use super::{jobs, script, Msg, Runtime, Session};
use crate::wire::json::Deep;
use serde_json::{json, Value};

impl Runtime {
    /// Whether a background job may still be running: the driver should poll within
    /// [`super::JOB_POLL_MS`] to see it end.
    pub fn watching_jobs(&self) -> bool {
        !self.job_sessions.is_empty()
    }

    /// Watches session `sid`'s jobs when it has one running.
    pub(super) fn watch_jobs(&mut self, sid: &str) {
        if self.sessions.get(sid).is_some_and(|s| s.jobs.running()) {
            self.job_sessions.insert(Box::from(sid));
        }
    }

    /// Settles the watched jobs that ended, each with its completion notice.
    pub(super) fn reap_jobs(&mut self, now: u64, out: &mut Vec<u8>) {
        if self.job_sessions.is_empty() {
            return;
        }
        for sid in std::mem::take(&mut self.job_sessions) {
            let Some(s) = self.sessions.get_mut(&sid) else {
                continue;
            };
            let ended = s.jobs.reap(now);
            if s.jobs.running() {
                self.job_sessions.insert(sid.clone());
            }
            for data in ended {
                self.job_ended(&sid, &data, now, out);
            }
        }
    }

    /// Job `data` (its `job/settled` data) ended on its own: settled, and its owner told.
    fn job_ended(&mut self, sid: &str, data: &Value, now: u64, out: &mut Vec<u8>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let mut ev = Events::new(out, sid, now);
        ev.event(s, "job/settled", data);
        if s.turn.is_some() || s.running {
            inject(s, &mut ev, jobs::notice(data));
            return;
        }
        let notice = jobs::notice(data);
        let msg = Msg {
            step: script::for_content(&notice["content"]),
            value: Deep::new(notice),
            finished: None,
        };
        self.deliver(sid, msg, now, out);
    }
}

/// Job `data` ended during session `s`'s turn (a job tool saw it): settled, and the notice
/// injected for the next step.
pub(super) fn ended_in_turn(s: &mut Session, ev: &mut Events<'_>, data: &Value) {
    ev.event(s, "job/settled", data);
    inject(s, ev, jobs::notice(data));
}

/// The notice queued for the session's next step (`next-step`, behind what waits there).
pub(super) fn inject(s: &mut Session, ev: &mut Events<'_>, notice: Value) {
    let splice = json!({"target":"next-step","start": s.next_step.len(),"inserted":[&notice]});
    ev.event(s, "agent/inbox/spliced", &splice);
    s.next_step.push(notice);
}
