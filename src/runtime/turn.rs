//! Turns: claim → steps (request-building events in [`super::step`], then the scripted model's answer) → `turn/end`,
//! then the next queued message or idle. Subagents run as child sessions.
//!
//! Timing decision: only `slow:N` delays are waited (virtually). The real runtime's retry back-off
//! (≈ 15.5 s for 5 retries) is reported in `llm/retry.delayMs` but not waited, so failing
//! directives settle at once with the same events and `turn/end` error kinds and codes; with
//! `Config::realistic_timing` each attempt waits its `delayMs` (virtually) as the release does.
//!
//! Under `sdk-minimal` the roster is the profile's ([`super::profile::roster`]): a call of a tool
//! it does not offer is refused as the model stub refuses it, and bash, `working_directory` and
//! `read_image` run as [`super::tools`] says (no `job/*` events).

use super::events::{self, new_id, write_status, Block, Events};
use super::script::Script;
use super::sessions::ok_status;
use super::tool_args;
use super::{persist, profile, Edition, Msg, Phase, Profile, Runtime, Turn};
use crate::wire::json::Deep;
use crate::wire::write;
use serde_json::{json, Value};

/// The tool-use id of the scripted model's tool calls (the recording stub's).
const TOOL_CALL_ID: &str = "toolu_fake_1";

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
        let legacy = self.cfg.edition == Edition::Legacy;
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(msg) = s.inbox.pop_front() else {
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
        // Working-directory notices spliced while idle are claimed first (the first step reads
        // them), then the prompt.
        let claimed = std::mem::take(&mut s.next_step);
        if !claimed.is_empty() {
            let claim =
                json!({"target":"next-step","start":0,"removedCount": claimed.len(),"inserted":[]});
            ev.event(s, "agent/inbox/spliced", &claim);
        }
        let claim = json!({"target":"next-turn","start":0,"removedCount":1,"inserted":[]});
        ev.event(s, "agent/inbox/spliced", &claim);
        if let Some(f) = &msg.finished {
            write::notification(ev.out(), "subagent.finished", Some(f));
        }
        s.turn = Some(Turn {
            n,
            step: 1,
            script: msg.step.script.clone(),
            delay_ms: msg.step.delay_ms,
            msg: Some(msg),
            phase: Phase::Pre,
            through: 0,
            retry: None,
            claimed,
        });
        self.schedule(sid, now);
    }

    pub(super) fn run_phase(&mut self, sid: &str, now: u64, out: &mut Vec<u8>) {
        let phase = match self.sessions.get(sid).and_then(|s| s.turn.as_ref()) {
            Some(t) => t.phase,
            None => return,
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

    /// The scripted model's answer to one request.
    fn model_step(&mut self, sid: &str, now: u64, out: &mut Vec<u8>) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(t) = s.turn.as_mut() else {
            return;
        };
        let (n, step, through) = (t.n, t.step, t.through);
        let resumed = t.retry.take();
        let minimal = self.cfg.profile == Profile::SdkMinimal;
        let script = super::script::offered(t.script.clone(), &profile::roster(&self.cfg));
        let realistic = self.cfg.realistic_timing;
        let model = s.route.model.clone();
        let mut ev = Events::new(out, sid, now);
        // The first delivery covers the log as it was when the request was built (a prompt
        // queued meanwhile comes after it); retries cover everything before them.
        let mut first = resumed.is_none();
        let mut delivery = |s: &mut super::Session, ev: &mut Events<'_>| {
            let through = if first {
                through
            } else {
                s.seq.saturating_sub(1)
            };
            first = false;
            let d = json!({"sessionId": sid,"sessionFormatVersion":4,"throughSeq": through});
            ev.event(s, "session-log-deepseek/delivery-accepted", &d);
        };
        let reply =
            |s: &mut super::Session, ev: &mut Events<'_>, blocks: &[Block<'_>], finish: &str| {
                if s.parent.is_some() {
                    // Only a subagent's last reply is ever reported (subagent.finished).
                    s.last_reply = Some(events::assistant_content(blocks));
                }
                ev.appended_with(s, "assistant/message", |o| {
                    events::write_assistant_message(o, n, step, &model, blocks, finish, now)
                });
            };
        let step_end = |s: &mut super::Session, ev: &mut Events<'_>| {
            ev.event(s, "step/end", &json!({"turn": n, "step": step}));
        };
        // A tool_use reply and its tool/call event; returns the event's seq.
        let mut tool_call = |s: &mut super::Session,
                             ev: &mut Events<'_>,
                             name: &str,
                             args: &str| {
            delivery(s, ev);
            let block = Block::ToolCall {
                id: TOOL_CALL_ID,
                name,
                args,
            };
            reply(s, ev, &[block], "tool-calls");
            let call = json!({"turn": n,"step": step,"callId": TOOL_CALL_ID,"name": name,"arguments": args});
            ev.event(s, "tool/call", &call)
        };
        let tool_result = |text: &str, is_error: bool| {
            json!({"turn": n,"step": step,"message":{"role":"tool","source":{"kind":"tool","callId": TOOL_CALL_ID},
                "toolCallId": TOOL_CALL_ID,"content":[{"type":"text","text": text}],"isError": is_error,"id": new_id()}})
        };
        // A `call:` of the `sdk` profile's bash or subagent: the arguments reach the tool as the
        // model wrote them, checked against its schema as the release checks them.
        let mut call_args: Option<String> = None;
        let mut call_label: Option<String> = None;
        let script = match script {
            Script::Call { tool, input } if !minimal && tool_args::schema(&tool).is_some() => {
                let parsed = crate::wire::json::parse(&input).ok().map(|p| p.value);
                let args = parsed
                    .as_ref()
                    .map_or_else(|| input.clone(), crate::wire::json::to_string);
                if let Err(problems) = tool_args::check(&tool, parsed.as_ref()) {
                    let call_seq = tool_call(s, &mut ev, &tool, &args);
                    let text = format!("Error: invalid arguments: {problems}");
                    let mut tr = tool_result(&text, true);
                    tr["error"] = json!({"name":"ToolArgsError","code":"INVALID_ARGS"});
                    ev.answer(s, "tool/result", &tr, &[call_seq]);
                    step_end(s, &mut ev);
                    return self.next_step(sid, format!("tool result: {text}"), now);
                }
                let field = |k: &str| {
                    parsed
                        .as_ref()
                        .and_then(|v| v.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                if tool == "read_image" {
                    // The sdk profile's model declares no image input.
                    let call_seq = tool_call(s, &mut ev, &tool, &args);
                    let text = profile::read_image_refusal(&field("file_path"), &model);
                    let tr = tool_result(&text, true);
                    ev.answer(s, "tool/result", &tr, &[call_seq]);
                    step_end(s, &mut ev);
                    return self.next_step(sid, format!("tool result: {text}"), now);
                }
                call_args = Some(args);
                call_label = Some(field("description"));
                if tool == "bash" {
                    Script::Tool(field("command"))
                } else {
                    Script::Subagent(field("prompt"))
                }
            }
            s => s,
        };
        let reason = match script {
            Script::Reply(text) => {
                delivery(s, &mut ev);
                reply(s, &mut ev, &[Block::Text(&text)], "stop");
                step_end(s, &mut ev);
                if !s.next_step.is_empty() {
                    // A working-directory notice waits for the next step: the model reads it
                    // there (the scripted model answers a runtime notice `ok`).
                    return self.next_step(sid, "ok".into(), now);
                }
                json!({"kind":"completed"})
            }
            Script::MaxTokens => {
                delivery(s, &mut ev);
                reply(s, &mut ev, &[Block::Text("partial...")], "max-tokens");
                step_end(s, &mut ev);
                json!({"kind":"max-tokens"})
            }
            Script::Thinking => {
                delivery(s, &mut ev);
                reply(
                    s,
                    &mut ev,
                    &[
                        Block::Reasoning("let me think"),
                        Block::Text("thought done"),
                    ],
                    "stop",
                );
                step_end(s, &mut ev);
                json!({"kind":"completed"})
            }
            Script::Empty | Script::Error500 | Script::SseError => {
                let (failure, delivered) = match script {
                    Script::Empty => (
                        json!({"message":"DeepSeek Messages returned no content","code":"EMPTY_RESPONSE"}),
                        true,
                    ),
                    Script::Error500 => (
                        json!({"message":"fake internal error","code":"SERVER","status":500}),
                        false,
                    ),
                    _ => (json!({"message":"fake overloaded","code":"SERVER"}), true),
                };
                let (retry_id, from) = resumed.unwrap_or_else(|| (new_id(), 0));
                for i in from..=events::RETRY_DELAYS.len() {
                    if i > 0 {
                        let d = json!({"retryId": retry_id,"turn": n,"step": step,"retry": i});
                        ev.event(s, "llm/retry-started", &d);
                    }
                    if delivered {
                        delivery(s, &mut ev);
                    }
                    let a = events::attempt(n, step, &failure, None, now);
                    ev.event(s, "assistant/attempt", &a);
                    if let Some(delay) = events::RETRY_DELAYS.get(i) {
                        let d = json!({"retryId": retry_id,"turn": n,"step": step,"provider":"deepseek-official",
                            "mode":"normal","policyKey": events::RETRY_POLICY,"retry": i + 1,"maxRetries":5,
                            "delayMs": delay,"failure": failure});
                        ev.event(s, "llm/retry", &d);
                        if realistic {
                            // Wait the back-off before the next attempt, as the release does.
                            if let Some(t) = s.turn.as_mut() {
                                t.retry = Some((retry_id, i + 1));
                            }
                            return self.schedule(sid, now.saturating_add(*delay as u64));
                        }
                    }
                }
                step_end(s, &mut ev);
                json!({"kind":"error","error": failure})
            }
            Script::Error400(message) => {
                let failure = json!({"message": message,"code":"INVALID_REQUEST","status":400});
                let a = events::attempt(n, step, &failure, None, now);
                ev.event(s, "assistant/attempt", &a);
                step_end(s, &mut ev);
                json!({"kind":"error","error": failure})
            }
            Script::Truncate => {
                let failure = json!({"message":"DeepSeek Messages stream ended before message_stop","code":"STREAM_CLOSED"});
                delivery(s, &mut ev);
                let a = events::attempt(n, step, &failure, Some("trunc"), now);
                ev.event(s, "assistant/attempt", &a);
                step_end(s, &mut ev);
                json!({"kind":"error","error": failure})
            }
            Script::BadContent(message, code) => {
                // The adapter fails the request before sending it: an attempt with no stream.
                let failure = json!({"message": message,"code": code});
                let a = events::attempt(n, step, &failure, None, now);
                ev.event(s, "assistant/attempt", &a);
                step_end(s, &mut ev);
                json!({"kind":"error","error": failure})
            }
            // Ended before the step (see `pre_step`); a later step never has this script.
            Script::TextNotString(message) => {
                step_end(s, &mut ev);
                json!({"kind":"error","error":{"message": message,"code":"UNKNOWN"}})
            }
            Script::Hang => return,
            Script::Tool(_) | Script::Call { .. } if minimal => {
                let (name, args, input) = match script {
                    Script::Tool(cmd) => (
                        "bash".to_owned(),
                        format!(
                            "{{\"description\": \"probe command\", \"command\": {}}}",
                            events::js_quote(&cmd)
                        ),
                        json!({"command": cmd}),
                    ),
                    Script::Call { tool, input } => {
                        let v = crate::wire::json::parse(&input).map_or(json!({}), |p| p.value);
                        (tool, input, v)
                    }
                    _ => return,
                };
                let call_seq = tool_call(s, &mut ev, &name, &args);
                let o = self.minimal_tool(sid, &name, &input, (n, TOOL_CALL_ID), now, ev.out());
                let Some(s) = self.sessions.get_mut(sid) else {
                    return;
                };
                if let Some(p) = &o.presented {
                    ev.event(s, "deliverables/presented", p);
                }
                let mut tr = tool_result(&o.text, o.is_error);
                if let Some(e) = o.error {
                    tr["error"] = e;
                }
                ev.answer(s, "tool/result", &tr, &[call_seq]);
                step_end(s, &mut ev);
                return self.next_step(sid, format!("tool result: {}", o.text), now);
            }
            Script::Call { tool, .. } => {
                // Only reachable with a roster that offers a tool the reference does not run.
                let failure = json!({"message": format!("model-stub: the reference runtime does not run the `{tool}` tool"),"code":"INVALID_REQUEST","status":400});
                let a = events::attempt(n, step, &failure, None, now);
                ev.event(s, "assistant/attempt", &a);
                step_end(s, &mut ev);
                json!({"kind":"error","error": failure})
            }
            Script::Tool(cmd) => {
                let args = call_args.unwrap_or_else(|| {
                    format!(
                        "{{\"description\": \"probe command\", \"command\": {}}}",
                        events::js_quote(&cmd)
                    )
                });
                let call_seq = tool_call(s, &mut ev, "bash", &args);
                let job_id = format!("bash-{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
                let mut job = json!({"jobId": job_id,"owner": sid,"kind":"bash","label": cmd,"startedAt": now,
                    "toolCall":{"callId": TOOL_CALL_ID,"rootCallId": TOOL_CALL_ID}});
                ev.event(s, "job/registered", &job);
                job["finishedAt"] = json!(now);
                job["status"] = json!("failed");
                job["cause"] = json!("producer");
                job["producerReported"] = json!(true);
                job["detail"] = json!(events::SANDBOX_REFUSAL);
                ev.event(s, "job/settled", &job);
                let result_text = format!("Error: {}", events::SANDBOX_REFUSAL);
                let tr = tool_result(&result_text, true);
                ev.answer(s, "tool/result", &tr, &[call_seq]);
                step_end(s, &mut ev);
                return self.next_step(sid, format!("tool result: {result_text}"), now);
            }
            Script::Subagent(prompt) => {
                let args = call_args.unwrap_or_else(|| {
                    format!(
                        "{{\"description\": \"probe child\", \"prompt\": {}}}",
                        events::js_quote(&prompt)
                    )
                });
                let call_seq = tool_call(s, &mut ev, "subagent", &args);
                if s.parent.is_some() {
                    // A subagent's own subagent call: the release allows one level.
                    let tr = tool_result(tool_args::DEPTH_REFUSAL, true);
                    ev.answer(s, "tool/result", &tr, &[call_seq]);
                    step_end(s, &mut ev);
                    let text = format!("tool result: {}", tool_args::DEPTH_REFUSAL);
                    return self.next_step(sid, text, now);
                }
                let child = self.spawn_child(sid, &prompt, now, ev.out());
                let Some(s) = self.sessions.get_mut(sid) else {
                    return;
                };
                let label = call_label.unwrap_or_else(|| "probe child".into());
                let cat = json!({"version":0,"childId": child,"childCreatedAt": now,"mode":"continuable","label": label});
                ev.event(s, "subagent/catalog", &cat);
                let text = format!("started subagent {child}");
                let tr = tool_result(&text, false);
                ev.answer(s, "tool/result", &tr, &[call_seq]);
                step_end(s, &mut ev);
                return self.next_step(sid, format!("tool result: {text}"), now);
            }
        };
        self.end_turn(sid, reason, now, out);
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
        let stored = persist::Stored {
            seq: s.seq,
            turns: s.turns,
        };
        // A turn that ended in error stops the queue: the session goes idle with the prompts
        // queued meanwhile left in its inbox, and the next prompt's turn takes the oldest
        // (probed against 0.2.1rc2; docs/CONTRACT.md#s4).
        let failed = s.last_end.as_ref().is_some_and(|r| r["kind"] == "error");
        s.stalled = failed && !s.inbox.is_empty();
        let more = !s.inbox.is_empty() && !failed;
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
    }

    /// Starts a child session for `subagent: P`; returns its id.
    fn spawn_child(&mut self, parent: &str, prompt: &str, now: u64, out: &mut Vec<u8>) -> String {
        let child = new_id();
        write::notification(
            out,
            "subagent.started",
            Some(&json!({"parentSessionId": parent, "childSessionId": child})),
        );
        let route = self.route.clone();
        let mut s = super::Session::new(route);
        if let Some(p) = self.sessions.get_mut(parent) {
            s.cwd = p.cwd.clone();
            s.route = p.route.clone();
            p.children += 1;
        }
        // The child's setup events (seq 0..2) are not streamed by the real runtime.
        s.seq = 3;
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
        let mut finished = json!({"provider":"spawn","agentId": child,"parentSessionId": parent,"childSessionId": child,
            "status": if ok_status(reason.as_ref(), mtas) { "ok" } else { "error" },"stopReason": stop});
        if let Some(l) = last.filter(|l| l.as_array().is_some_and(|a| !a.is_empty())) {
            finished["lastAssistantMessage"] = l;
        }
        let step = super::script::for_content(&content);
        let source = json!({"kind":"subagent-settled","form":"notice","summary": summary,"senderSessionId": child});
        let msg = Msg {
            value: Deep::new(events::user_message(content, source, new_id())),
            step,
            finished: Some(finished),
        };
        self.deliver(parent, msg, now, out);
    }
}
