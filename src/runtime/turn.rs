//! Turns: claim → steps (request-building events in [`super::step`], then the scripted model's
//! answer in [`super::model`]) → `turn/end`, then the next queued message or idle. Subagents run
//! as child sessions.

use super::events::{self, new_id, write_status, Events};
use super::sessions::ok_status;
use super::{Edition, Msg, Phase, Runtime, Turn};
use crate::wire::json::Deep;
use crate::wire::write;
use serde_json::{json, Value};

impl Runtime {
    /// Puts a message in a session's inbox (with its receipt) and starts a turn if it is idle.
    pub(super) fn deliver(&mut self, sid: &str, mut msg: Msg, now: u64, out: &mut Vec<u8>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let start = s.inbox.len();
        // Moved in, not `json!`-interpolated: the message content may be arbitrarily deep.
        let mut data = Deep::new(json!({"target":"next-turn","start": start,"inserted":[]}));
        data["inserted"] = Value::Array(vec![std::mem::take(&mut *msg.value)]);
        Events::new(out, sid, now).event(s, "agent/inbox/spliced", &data);
        *msg.value = data["inserted"]
            .as_array_mut()
            .and_then(Vec::pop)
            .unwrap_or(Value::Null);
        s.inbox.push_back(msg);
        s.stalled = false;
        if s.turn.is_none() {
            self.start_turn(sid, now, out);
        }
    }

    /// Claims the next inbox message as a new turn (`running`, `turn/start`, claim splice).
    pub(super) fn start_turn(&mut self, sid: &str, now: u64, out: &mut Vec<u8>) {
        let Some(msg) = self.sessions.get_mut(sid).and_then(|s| s.inbox.pop_front()) else {
            return;
        };
        let step = msg.step.clone();
        self.open_turn(sid, Some(msg), step, now, out);
    }

    /// A turn of the notes waiting for the next step alone (a relayed message to an idle
    /// session), answered with `step`: no inbox message is claimed.
    pub(super) fn wake(
        &mut self,
        sid: &str,
        step: super::script::Step,
        now: u64,
        out: &mut Vec<u8>,
    ) {
        self.open_turn(sid, None, step, now, out);
    }

    /// `running`, `turn/start`, the claims (the notes for the next step first, which its first
    /// step reads, then `msg`), and the turn's first step scheduled.
    fn open_turn(
        &mut self,
        sid: &str,
        msg: Option<Msg>,
        step: super::script::Step,
        now: u64,
        out: &mut Vec<u8>,
    ) {
        let legacy = self.cfg.edition == Edition::Legacy;
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        s.turns += 1;
        let n = s.turns;
        if !s.running {
            s.running = true;
            if !legacy {
                write_status(out, sid, true);
            }
        }
        let mut ev = Events::new(out, sid, now);
        ev.event(s, "turn/start", &json!({"turn": n}));
        let claimed = std::mem::take(&mut s.next_step);
        if !claimed.is_empty() {
            let claim =
                json!({"target":"next-step","start":0,"removedCount": claimed.len(),"inserted":[]});
            ev.event(s, "agent/inbox/spliced", &claim);
        }
        if let Some(m) = &msg {
            let claim = json!({"target":"next-turn","start":0,"removedCount":1,"inserted":[]});
            ev.event(s, "agent/inbox/spliced", &claim);
            if let Some(f) = &m.finished {
                write::notification(ev.out(), "subagent.finished", Some(f));
            }
        }
        s.turn = Some(Turn {
            n,
            step: 1,
            script: step.script,
            delay_ms: step.delay_ms,
            msg,
            phase: Phase::Pre,
            through: 0,
            retry: None,
            claimed,
        });
        // The release checks the directory as the turn starts, before it reads another line:
        // a `working-directory/set` right behind the prompt comes too late to save it (found by
        // the tool-call fuzzer, seed 207).
        if self.cfg.cwd_must_exist && super::cd::must_exist(&s.cwd).is_err() {
            self.doomed.push(Box::from(sid));
        }
        self.schedule(sid, now);
    }

    /// Ends the turns that started in a directory that is gone (see [`Runtime::open_turn`]):
    /// still before their first step, they fail as it would have.
    pub(super) fn end_doomed(&mut self, now: u64, out: &mut Vec<u8>) {
        for sid in std::mem::take(&mut self.doomed) {
            let waiting = self.sessions.get(&*sid).and_then(|s| s.turn.as_ref());
            if !waiting.is_some_and(|t| t.step == 1 && t.phase == Phase::Pre) {
                continue;
            }
            if let Some(reason) = self.fails_before_step(&sid) {
                self.end_turn(&sid, reason, now, out);
            }
        }
    }

    pub(super) fn run_phase(&mut self, sid: &str, now: u64, out: &mut Vec<u8>) {
        let phase = match self.sessions.get(sid).and_then(|s| s.turn.as_ref()) {
            Some(t) => t.phase,
            // Idle: what was scheduled is the goal's next round (see `goal_rounds`).
            None => return self.drive_goal(sid, now, out),
        };
        match phase {
            Phase::Pre => {
                if let Some(reason) = self.pre_step(sid, now, out) {
                    self.end_turn(sid, reason, now, out);
                }
            }
            Phase::Model => self.model_step(sid, now, out),
            Phase::Hung => {}
        }
    }

    /// `turn/end`, then the next queued message or idle.
    pub(super) fn end_turn(&mut self, sid: &str, reason: Value, now: u64, out: &mut Vec<u8>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(t) = s.turn.take() else {
            return;
        };
        let end = json!({"turn": t.n, "reason": reason});
        Events::new(out, sid, now).event(s, "turn/end", &end);
        s.last_end = Some(reason);
        s.sched = 0;
        let stored = s.stored();
        // A turn that ended in error stops the queue: the session goes idle with the prompts
        // queued meanwhile left in its inbox, and the next prompt's turn takes the oldest
        // (probed against 0.2.1rc2; docs/CONTRACT.md#s4).
        let failed = s.last_end.as_ref().is_some_and(|r| r["kind"] == "error");
        s.stalled = failed && !s.inbox.is_empty();
        let more = !s.inbox.is_empty() && !failed;
        s.seed = super::Seed {
            next_seq: s.seq,
            pending: s.inbox.len(),
        };
        drop(t);
        self.save(sid, stored);
        if more {
            self.start_turn(sid, now, out);
        } else {
            self.go_idle(sid, now, out);
        }
    }

    fn go_idle(&mut self, sid: &str, now: u64, out: &mut Vec<u8>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        s.running = false;
        let parent = s.parent.clone();
        self.settle(sid, out);
        if let Some(p) = parent {
            self.child_settled(&p, sid, now, out);
        }
        self.goal_idle(sid, now);
    }

    /// Starts a child session for `subagent: P`, in `cwd` (else its parent's directory);
    /// returns its id.
    pub(super) fn spawn_child(
        &mut self,
        parent: &str,
        prompt: &str,
        fork: bool,
        cwd: Option<String>,
        now: u64,
        out: &mut Vec<u8>,
    ) -> String {
        let child = new_id();
        subagent_started(out, parent, &child);
        let route = self.route.clone();
        let mut s = super::Session::new(route);
        if let Some(p) = self.sessions.get_mut(parent) {
            s.cwd = p.cwd.clone();
            s.route = p.route.clone();
            p.children += 1;
            // The child's setup events (seq 0..2) are not streamed by the real runtime.
            s.seq = 3;
            // A fork continues the parent's log up to the request that forked it: its first
            // turn is the parent's current one, and the system prompt, request context and
            // title are already in it (its request header is a `resume`).
            s.turns = if fork { p.turns.saturating_sub(1) } else { 0 };
            // A fork in the parent's first turn has nothing to continue: it starts afresh.
            if fork && p.turns > 1 {
                // Its seq goes on from the seed's, past 4 events the release logs but does not
                // stream (`session/end-seed`, `subagent/descriptor`, `sandbox/mode`,
                // `approval/policy`; read in its session log).
                s.seq = p.seed.next_seq + 4;
                (s.primed, s.titled) = (true, true);
                s.inbox = inherited_inbox(p);
            }
        }
        // A `cwd` moves the child there before its prompt, as a directory change (its events
        // logged, not streamed, like the rest of its setup; its note read at its first step).
        if let Some(dir) = cwd.filter(|d| **d != *s.cwd) {
            let mut unstreamed = Vec::new();
            let mut ev = events::Events::new(&mut unstreamed, &child, now);
            super::sessions::change_directory(&mut s, &mut ev, &dir);
        }
        s.forked = fork;
        s.parent = Some(Box::from(parent));
        self.adopt(&child, s);
        let note = format!("Your parent agent id is {}. Before you finish, send your result to that agent with send_message({{ agent_id: {}, message: \"<self-contained result>\" }}). The parent shares your workspace but does not automatically receive your transcript, tool output, or reasoning. Send earlier messages as well when a finding changes what the parent should do next; sending a message does not end your turn.", events::js_quote(parent), events::js_quote(parent));
        let content = json!([{"type":"text","text": prompt},{"type":"text","text": note}]);
        let step = super::script::for_content(&content);
        let msg = Msg {
            value: Deep::new(events::user_message(
                content,
                json!({"kind":"user"}),
                new_id(),
            )),
            step,
            finished: None,
        };
        self.deliver(&child, msg, now, out);
        // The child's first request goes out after the parent's next one, as in the recording.
        self.schedule(&child, now.saturating_add(1));
        child
    }

    /// A child went idle: its closing message becomes a notice turn of the parent.
    fn child_settled(&mut self, parent: &str, child: &str, now: u64, out: &mut Vec<u8>) {
        let mtas = self.cfg.max_tokens_as_success();
        let Some(c) = self.sessions.get(child) else {
            return;
        };
        let reason = c.last_end.clone();
        let last = c.last_reply.clone();
        let forked = c.forked;
        let Some(p) = self.sessions.get_mut(parent) else {
            return;
        };
        p.children = p.children.saturating_sub(1);
        let summary = format!("Background subagent {child} finished and will do no further work unless you send it more.");
        let mut content = vec![json!({"type":"text","text": summary})];
        if let Some(Value::Array(blocks)) = &last {
            content.push(json!({"type":"text","text":"Its closing message:"}));
            content.extend(blocks.iter().filter(|b| b["type"] == "text").cloned());
        }
        let content = Value::Array(content);
        let stop = reason
            .as_ref()
            .and_then(|r| r.get("kind"))
            .cloned()
            .unwrap_or(json!("error"));
        let provider = if forked { "fork" } else { "spawn" };
        let mut finished = json!({"provider": provider,"agentId": child,"parentSessionId": parent,"childSessionId": child,
            "status": if ok_status(reason.as_ref(), mtas) { "ok" } else { "error" },"stopReason": stop});
        if let Some(l) = last.filter(|l| l.as_array().is_some_and(|a| !a.is_empty())) {
            finished["lastAssistantMessage"] = l;
        }
        let step = super::script::for_content(&content);
        let source = json!({"kind":"subagent-settled","form":"notice","summary": summary,"senderSessionId": child});
        let notice = events::user_message(content, source, new_id());
        if p.turn.is_some() {
            // A busy parent reads it at its next step, told at once (recorded: a fork whose
            // parent had a prompt queued).
            let mut ev = Events::new(out, parent, now);
            super::reaper::inject(p, &mut ev, notice);
            write::notification(ev.out(), "subagent.finished", Some(&finished));
            return;
        }
        let msg = Msg {
            value: Deep::new(notice),
            step,
            finished: Some(finished),
        };
        self.deliver(parent, msg, now, out);
    }
}

/// What a fork child of `p` finds in its inbox: the fork's seed is `p`'s log through its last
/// completed turn (the release's "latest completed-turn prefix"), so it inherits the messages
/// `p`'s inbox held then: the one `p`'s current turn claimed since, and those still queued behind
/// it. Each runs as a turn of the child before its own task (recorded: `sdk_tool_fork_queued`).
fn inherited_inbox(p: &super::Session) -> std::collections::VecDeque<Msg> {
    if p.seed.pending == 0 {
        return Default::default();
    }
    let current = p.turn.as_ref().and_then(|t| t.msg.as_ref());
    let queued = p.inbox.iter().take(p.seed.pending - 1);
    current
        .into_iter()
        .chain(queued)
        .map(Msg::fork_copy)
        .collect()
}

/// `subagent.started`: `child` of `parent` starts (spawned, or a finished child sent a message).
pub(super) fn subagent_started(out: &mut Vec<u8>, parent: &str, child: &str) {
    let params = json!({"parentSessionId": parent, "childSessionId": child});
    write::notification(out, "subagent.started", Some(&params));
}
