//! A step's answer: what the scripted model replies to the request [`super::step`] built, the
//! events the runtime writes for it (delivery, the assistant message or failed attempts, tool
//! calls and their results, `step/end`), and what comes next ([`Next`]).
//!
//! Timing decision: only `slow:N` delays are waited (virtually). The real runtime's retry back-off
//! (≈ 15.5 s for 5 retries) is reported in `llm/retry.delayMs` but not waited, so failing
//! directives settle at once with the same events and `turn/end` error kinds and codes; with
//! `Config::realistic_timing` each attempt waits its `delayMs` (virtually) as the release does.
//!
//! Under `sdk-minimal` the roster is the profile's ([`super::profile::roster`]): a call of a tool
//! it does not offer is refused as the model stub refuses it, and bash, `working_directory` and
//! `read_image` run as [`super::tools`] says (no `job/*` events).
//!
//! Under `sdk`, `call:`s of the file tools and the profile's other tools run as
//! [`super::files`] says (docs/CONTRACT.md#s13.4).

use super::assistant::{self, Block};
use super::events::{self, new_id, Events};
use super::script::Script;
use super::{profile, tool_args, Phase, Profile, Runtime, Session};
use serde_json::{json, Value};

mod message;
mod state;
mod tools;
use tools::bash_args;

/// The tool-use id of the scripted model's tool calls (the recording stub's).
const TOOL_CALL_ID: &str = "toolu_fake_1";

/// What follows a model step.
enum Next {
    /// The turn ends, for this reason.
    End(Value),
    /// The turn's next step, whose request the model answers with this text (a tool result).
    Step(String),
    /// The failing request's next attempt, at this time (`--realistic-timing`'s back-off).
    Retry(u64),
    /// Nothing: the model never answers (or the session is gone).
    Nothing,
}

/// A tool call as the model wrote it (`call:` of the `sdk` profile): its arguments' text, its
/// `description` and, for a subagent, its `cwd`.
struct Written {
    args: String,
    label: String,
    cwd: Option<String>,
}

/// One model step: the session, turn and step every event it writes names, the model and the
/// clock.
struct Answer<'a> {
    sid: &'a str,
    turn: u32,
    step: u32,
    model: String,
    now: u64,
    /// The `throughSeq` of the request's first delivery: the log as it was when the request was
    /// built (a prompt queued meanwhile comes after it). `None` once delivered: retries cover
    /// everything before them.
    first_through: Option<u64>,
}

impl Runtime {
    /// The scripted model's answer to one request.
    pub(super) fn model_step(&mut self, sid: &str, now: u64, out: &mut Vec<u8>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(t) = s.turn.as_mut() else {
            return;
        };
        let resumed = t.retry.take();
        let script = super::script::offered(t.script.clone(), &profile::roster(&self.cfg));
        let mut a = Answer {
            sid,
            turn: t.n,
            step: t.step,
            model: s.route.model.clone(),
            now,
            first_through: resumed.is_none().then_some(t.through),
        };
        let mut ev = Events::new(out, sid, now);
        match self.answer(&mut a, &mut ev, script, resumed) {
            Next::End(reason) => self.end_turn(sid, reason, now, out),
            Next::Step(text) => self.next_step(sid, text, now),
            Next::Retry(due) => self.schedule(sid, due),
            Next::Nothing => {}
        }
    }

    /// The events of the model's answer `script` (`resumed`: the retry a back-off interrupted).
    fn answer(
        &mut self,
        a: &mut Answer<'_>,
        ev: &mut Events<'_>,
        script: Script,
        resumed: Option<(String, usize)>,
    ) -> Next {
        let minimal = self.cfg.profile == Profile::SdkMinimal;
        let realistic = self.cfg.realistic_timing;
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        let (script, written) = match script {
            // `call!:` of a tool the request does not offer: the release answers it as unknown.
            Script::Call {
                tool,
                input,
                any: true,
            } if !minimal && !profile::roster(&self.cfg).contains(&tool.as_str()) => {
                let v = crate::wire::json::parse(&input).map_or(json!({}), |p| p.value);
                return self.minimal_call(a, ev, tool, input, v);
            }
            Script::Call { tool, input, .. } if !minimal && tool_args::schema(&tool).is_some() => {
                match a.checked_call(s, ev, tool, input) {
                    Ok((script, written)) => (script, Some(written)),
                    Err(next) => return next,
                }
            }
            script => (script, None),
        };
        match script {
            Script::Reply(text) => {
                a.replied(s, ev, &[Block::Text(&text)], "stop");
                if let Some(last) = s.next_step.last() {
                    // A notice waits for the next step: the model reads it there, the last one
                    // as the request's last user message (the scripted model answers a runtime
                    // notice `ok`, and echoes a job's completion notice).
                    return Next::Step(super::script::notice_reply(&last["content"]));
                }
                Next::End(json!({"kind":"completed"}))
            }
            Script::MaxTokens => {
                a.replied(s, ev, &[Block::Text("partial...")], "max-tokens");
                Next::End(json!({"kind":"max-tokens"}))
            }
            Script::Thinking => {
                let blocks = [
                    Block::Reasoning("let me think"),
                    Block::Text("thought done"),
                ];
                a.replied(s, ev, &blocks, "stop");
                Next::End(json!({"kind":"completed"}))
            }
            Script::Empty | Script::Error500 | Script::SseError => {
                a.retried(s, ev, &script, resumed, realistic)
            }
            Script::Error400(message) => {
                let failure = json!({"message": message,"code":"INVALID_REQUEST","status":400});
                a.failed(s, ev, failure, None)
            }
            Script::Truncate => {
                let failure = json!({"message":"DeepSeek Messages stream ended before message_stop","code":"STREAM_CLOSED"});
                a.delivery(s, ev);
                a.failed(s, ev, failure, Some("trunc"))
            }
            // The adapter fails the request before sending it: an attempt with no stream.
            Script::BadContent(message, code) => {
                a.failed(s, ev, json!({"message": message,"code": code}), None)
            }
            // Ended before the step (see `pre_step`); a later step never has this script.
            Script::TextNotString(message) => {
                a.step_end(s, ev);
                Next::End(json!({"kind":"error","error":{"message": message,"code":"UNKNOWN"}}))
            }
            Script::Hang => Next::Nothing,
            Script::Tool(cmd) if minimal => {
                let input = json!({"command": cmd});
                self.minimal_call(a, ev, "bash".into(), bash_args(&cmd), input)
            }
            Script::Call { tool, input, .. } if minimal => {
                let v = crate::wire::json::parse(&input).map_or(json!({}), |p| p.value);
                self.minimal_call(a, ev, tool, input, v)
            }
            Script::Call { tool, input, .. } => self.sdk_call(a, ev, tool, input),
            Script::Tool(cmd) => {
                let args = written.map_or_else(|| bash_args(&cmd), |w| w.args);
                let env = super::sandbox::command_env(
                    &self.cfg.harness_home(),
                    &self.cfg.profile.to_string(),
                    a.sid,
                );
                a.bash(s, ev, &cmd, &args, (&self.cfg.sandbox, &env))
            }
            Script::Subagent(prompt) => self.subagent_call(a, ev, &prompt, written, false),
        }
    }

    /// A call of an `sdk` tool other than `bash`, `subagent` and `read_image`: whoever runs it
    /// answers (its arguments checked first where the release checks them first).
    fn sdk_call(
        &mut self,
        a: &mut Answer<'_>,
        ev: &mut Events<'_>,
        tool: String,
        input: String,
    ) -> Next {
        let v = crate::wire::json::parse(&input).map_or(Value::Null, |p| p.value);
        let valid = super::files::schema::check(&tool, &v).is_ok();
        match tool.as_str() {
            // As under `sdk-minimal` (its arguments checked first).
            "working_directory" if valid => {
                let args = crate::wire::json::to_string(&v);
                self.minimal_call(a, ev, tool, args, v)
            }
            // The session's jobs or goal answer a call whose arguments are valid.
            t if stateful(t) && valid => self.state_call(a, ev, tool, v),
            // A valid fork: a subagent that continues its parent's log and numbering.
            "subagent_fork" if valid => {
                let field = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
                let written = Written {
                    args: crate::wire::json::to_string(&v),
                    label: field("description"),
                    cwd: v["cwd"].as_str().map(str::to_owned),
                };
                self.subagent_call(a, ev, &field("prompt"), Some(written), true)
            }
            "send_message" if valid => self.message_call(a, ev, v),
            t if super::files::answers(t, &input) || stateful(t) || t == "working_directory" => {
                self.file_call(a, ev, tool, input)
            }
            _ => {
                // Only reachable with a roster that offers a tool the reference does not run.
                let Some(s) = self.sessions.get_mut(a.sid) else {
                    return Next::Nothing;
                };
                let failure = json!({"message": format!("model-stub: the reference runtime does not run the `{tool}` tool"),"code":"INVALID_REQUEST","status":400});
                a.failed(s, ev, failure, None)
            }
        }
    }

    /// A tool call under `sdk-minimal`, or of a tool the request does not offer (either
    /// profile): the tool runs as [`super::tools`] says.
    fn minimal_call(
        &mut self,
        a: &mut Answer<'_>,
        ev: &mut Events<'_>,
        name: String,
        args: String,
        input: Value,
    ) -> Next {
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        let call_seq = a.tool_call(s, ev, &name, &args);
        let call = (a.turn, TOOL_CALL_ID);
        let o = self.minimal_tool(a.sid, &name, &input, call, a.now, ev.out());
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        if let Some(p) = &o.presented {
            ev.event(s, "deliverables/presented", p);
        }
        let mut tr = a.tool_result(&o.text, o.is_error);
        if let Some(e) = o.error {
            tr["error"] = e;
        }
        a.tool_answered(s, ev, &tr, call_seq, &o.text)
    }

    /// A call of a job or goal tool (its arguments valid), on the session's state.
    fn state_call(
        &mut self,
        a: &mut Answer<'_>,
        ev: &mut Events<'_>,
        name: String,
        input: Value,
    ) -> Next {
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        let args = crate::wire::json::to_string(&input);
        let call_seq = a.tool_call(s, ev, &name, &args);
        if super::jobs::TOOLS.contains(&name.as_str()) {
            state::job_call(a, s, ev, &name, &input, call_seq)
        } else {
            state::goal_call(a, s, ev, &name, &input, call_seq)
        }
    }

    /// A call of one of the `sdk` profile's file tools: it runs as [`super::files`] says.
    fn file_call(
        &mut self,
        a: &mut Answer<'_>,
        ev: &mut Events<'_>,
        name: String,
        input: String,
    ) -> Next {
        let parsed = crate::wire::json::parse(&input).ok().map(|p| p.value);
        let args = parsed
            .as_ref()
            .map_or_else(|| input.clone(), crate::wire::json::to_string);
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        let call_seq = a.tool_call(s, ev, &name, &args);
        let cwd = s.cwd.clone();
        let root = s.route.cwd.clone();
        let mut call = super::files::Call {
            cwd: &cwd,
            root: &root,
            state: &mut s.files,
            call_id: TOOL_CALL_ID,
            fs: &super::files::fs::Disk,
            model: &a.model,
            sid: a.sid,
        };
        let o = super::files::run(&name, parsed.as_ref(), &mut call);
        for (ty, data) in &o.events {
            ev.event(s, ty, data);
        }
        let mut tr = a.tool_result(&o.text, o.is_error);
        if let Some(e) = o.error {
            tr["error"] = e;
        }
        if let Some(m) = o.meta {
            tr["meta"] = m;
        }
        a.tool_answered(s, ev, &tr, call_seq, &o.text)
    }

    /// A subagent call: a child session runs `prompt` (a subagent's own call is refused).
    fn subagent_call(
        &mut self,
        a: &mut Answer<'_>,
        ev: &mut Events<'_>,
        prompt: &str,
        written: Option<Written>,
        fork: bool,
    ) -> Next {
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        let (args, label, cwd) = match written {
            Some(w) => (w.args, w.label, w.cwd),
            None => {
                let args = format!(
                    "{{\"description\": \"probe child\", \"prompt\": {}}}",
                    events::js_quote(prompt)
                );
                (args, "probe child".into(), None)
            }
        };
        let tool = if fork { "subagent_fork" } else { "subagent" };
        let call_seq = a.tool_call(s, ev, tool, &args);
        if s.parent.is_some() {
            // A subagent's own subagent call: the release allows one level.
            let tr = a.tool_result(tool_args::DEPTH_REFUSAL, true);
            return a.tool_answered(s, ev, &tr, call_seq, tool_args::DEPTH_REFUSAL);
        }
        // The child's first directory: `cwd` resolved against the parent's, which must exist
        // (recorded: `sdk_tool_subagent_cwd`; the release's text, no error class).
        let dir = cwd.map(|c| super::cd::resolve(&s.cwd, &c));
        if let Some(Err(e)) = dir.as_deref().map(super::cd::must_exist) {
            let text = format!("Error: {e}");
            let tr = a.tool_result(&text, true);
            return a.tool_answered(s, ev, &tr, call_seq, &text);
        }
        let child = self.spawn_child(a.sid, prompt, fork, dir, a.now, ev.out());
        let Some(s) = self.sessions.get_mut(a.sid) else {
            return Next::Nothing;
        };
        s.files.spawned(&child, &label);
        let cat = json!({"version":0,"childId": child,"childCreatedAt": a.now,"mode":"continuable","label": label});
        ev.event(s, "subagent/catalog", &cat);
        let text = format!("started subagent {child}");
        let tr = a.tool_result(&text, false);
        a.tool_answered(s, ev, &tr, call_seq, &text)
    }

    /// After a tool result: the next model request answers with `text`.
    fn next_step(&mut self, sid: &str, text: String, now: u64) {
        if let Some(t) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) {
            t.step += 1;
            t.script = Script::Reply(text);
            t.phase = Phase::Pre;
        }
        self.schedule(sid, now);
    }
}

impl Answer<'_> {
    /// `delivery-accepted`: the request reached the model.
    fn delivery(&mut self, s: &mut Session, ev: &mut Events<'_>) {
        let through = self
            .first_through
            .take()
            .unwrap_or_else(|| s.seq.saturating_sub(1));
        let d = json!({"sessionId": self.sid,"sessionFormatVersion":4,"throughSeq": through});
        ev.event(s, "session-log-deepseek/delivery-accepted", &d);
    }

    /// The `assistant/message` of these blocks.
    fn reply(&self, s: &mut Session, ev: &mut Events<'_>, blocks: &[Block<'_>], finish: &str) {
        if s.parent.is_some() {
            // Only a subagent's last reply is ever reported (subagent.finished).
            s.last_reply = Some(assistant::content(blocks));
        }
        let (turn, step, now) = (self.turn, self.step, self.now);
        ev.appended_with(s, "assistant/message", |o| {
            assistant::write_message(o, turn, step, &self.model, blocks, finish, now)
        });
    }

    fn step_end(&self, s: &mut Session, ev: &mut Events<'_>) {
        ev.event(
            s,
            "step/end",
            &json!({"turn": self.turn, "step": self.step}),
        );
    }

    /// A delivered reply of these blocks, ending the step.
    fn replied(&mut self, s: &mut Session, ev: &mut Events<'_>, blocks: &[Block<'_>], fin: &str) {
        self.delivery(s, ev);
        self.reply(s, ev, blocks, fin);
        self.step_end(s, ev);
    }

    /// A failed attempt ending the step, and the turn with `failure`.
    fn failed(
        &self,
        s: &mut Session,
        ev: &mut Events<'_>,
        failure: Value,
        partial: Option<&str>,
    ) -> Next {
        let a = events::attempt(self.turn, self.step, &failure, partial, self.now);
        ev.event(s, "assistant/attempt", &a);
        self.step_end(s, ev);
        Next::End(json!({"kind":"error","error": failure}))
    }

    /// A request the adapter retries (`empty`, `error500`, `sseerror`): an attempt and an
    /// `llm/retry` each until the policy gives up, from the retry `resumed` names; with
    /// `realistic` timing each back-off is waited.
    fn retried(
        &mut self,
        s: &mut Session,
        ev: &mut Events<'_>,
        script: &Script,
        resumed: Option<(String, usize)>,
        realistic: bool,
    ) -> Next {
        let (failure, delivered) = retried_failure(script);
        let (turn, step) = (self.turn, self.step);
        let (retry_id, from) = resumed.unwrap_or_else(|| (new_id(), 0));
        for i in from..=events::RETRY_DELAYS.len() {
            if i > 0 {
                let d = json!({"retryId": retry_id,"turn": turn,"step": step,"retry": i});
                ev.event(s, "llm/retry-started", &d);
            }
            if delivered {
                self.delivery(s, ev);
            }
            let a = events::attempt(turn, step, &failure, None, self.now);
            ev.event(s, "assistant/attempt", &a);
            if let Some(delay) = events::RETRY_DELAYS.get(i) {
                let d = json!({"retryId": retry_id,"turn": turn,"step": step,"provider":"deepseek-official",
                    "mode":"normal","policyKey": events::RETRY_POLICY,"retry": i + 1,"maxRetries":5,
                    "delayMs": delay,"failure": failure});
                ev.event(s, "llm/retry", &d);
                if realistic {
                    // Wait the back-off before the next attempt, as the release does.
                    if let Some(t) = s.turn.as_mut() {
                        t.retry = Some((retry_id, i + 1));
                    }
                    return Next::Retry(self.now.saturating_add(*delay as u64));
                }
            }
        }
        self.step_end(s, ev);
        Next::End(json!({"kind":"error","error": failure}))
    }
}

/// The failure a retried script ends in, and whether each of its attempts is delivered.
fn retried_failure(script: &Script) -> (Value, bool) {
    match script {
        Script::Empty => (
            json!({"message":"DeepSeek Messages returned no content","code":"EMPTY_RESPONSE"}),
            true,
        ),
        Script::Error500 => (
            json!({"message":"fake internal error","code":"SERVER","status":500}),
            false,
        ),
        _ => (json!({"message":"fake overloaded","code":"SERVER"}), true),
    }
}

/// Whether `tool` acts on a session's state: its jobs or its goal.
fn stateful(tool: &str) -> bool {
    super::jobs::TOOLS.contains(&tool) || super::goals::TOOLS.contains(&tool)
}
