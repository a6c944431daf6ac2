//! A step's tool calls: the `tool/call` event and its reply, the tool result that ends the step,
//! the checked calls of the offered tools, and bash with its `job/*` events.

use super::{Answer, Next, Written, TOOL_CALL_ID};
use crate::runtime::assistant::Block;
use crate::runtime::events::{self, new_id, Events};
use crate::runtime::sandbox::{self, Sandbox};
use crate::runtime::script::Script;
use crate::runtime::{profile, tool_args, Session};
use serde_json::{json, Value};

impl Answer<'_> {
    /// A tool_use reply and its `tool/call` event; returns the event's seq.
    pub(super) fn tool_call(
        &mut self,
        s: &mut Session,
        ev: &mut Events<'_>,
        name: &str,
        args: &str,
    ) -> u64 {
        self.delivery(s, ev);
        let block = Block::ToolCall {
            id: TOOL_CALL_ID,
            name,
            args,
        };
        self.reply(s, ev, &[block], "tool-calls");
        let call = json!({"turn": self.turn,"step": self.step,"callId": TOOL_CALL_ID,"name": name,"arguments": args});
        ev.event(s, "tool/call", &call)
    }

    /// The `tool/result` data of the call's result `text`.
    pub(super) fn tool_result(&self, text: &str, is_error: bool) -> Value {
        json!({"turn": self.turn,"step": self.step,"message":{"role":"tool","source":{"kind":"tool","callId": TOOL_CALL_ID},
            "toolCallId": TOOL_CALL_ID,"content":[{"type":"text","text": text}],"isError": is_error,"id": new_id()}})
    }

    /// The tool result answering the call `call_seq`, ending the step: the next step's request
    /// carries its `text`.
    pub(super) fn tool_answered(
        &self,
        s: &mut Session,
        ev: &mut Events<'_>,
        result: &Value,
        call_seq: u64,
        text: &str,
    ) -> Next {
        ev.answer(s, "tool/result", result, &[call_seq]);
        self.step_end(s, ev);
        Next::Step(format!("tool result: {text}"))
    }

    /// A `call:` of the `sdk` profile's bash or subagent: the arguments reach the tool as the
    /// model wrote them, checked against its schema as the release checks them. Invalid
    /// arguments, and any `read_image` call, end the step with the tool's refusal (`Err`);
    /// otherwise the call runs as the bash or subagent script it names.
    pub(super) fn checked_call(
        &mut self,
        s: &mut Session,
        ev: &mut Events<'_>,
        tool: String,
        input: String,
    ) -> Result<(Script, Written), Next> {
        let parsed = crate::wire::json::parse(&input).ok().map(|p| p.value);
        let args = parsed
            .as_ref()
            .map_or_else(|| input.clone(), crate::wire::json::to_string);
        if let Err(problems) = tool_args::check(&tool, parsed.as_ref()) {
            let call_seq = self.tool_call(s, ev, &tool, &args);
            let text = format!("Error: invalid arguments: {problems}");
            let mut tr = self.tool_result(&text, true);
            tr["error"] = json!({"name":"ToolArgsError","code":"INVALID_ARGS"});
            return Err(self.tool_answered(s, ev, &tr, call_seq, &text));
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
            let call_seq = self.tool_call(s, ev, &tool, &args);
            let text = profile::read_image_answer(&field("file_path"), &self.model);
            let tr = self.tool_result(&text, true);
            return Err(self.tool_answered(s, ev, &tr, call_seq, &text));
        }
        let label = field("description");
        let script = if tool == "bash" {
            Script::Tool(field("command"))
        } else {
            Script::Subagent(field("prompt"))
        };
        let cwd = parsed
            .as_ref()
            .and_then(|v| v["cwd"].as_str())
            .map(str::to_owned);
        Ok((script, Written { args, label, cwd }))
    }

    /// A bash call under the `sdk` profile: a job, run through the sandbox backend (refused
    /// without one: [`super::sandbox`]) in its `workdir`, waited on up to its `timeoutMs` (then
    /// promoted to a background job) or not at all (`run_in_background`).
    pub(super) fn bash(
        &mut self,
        s: &mut Session,
        ev: &mut Events<'_>,
        cmd: &str,
        args: &str,
        (sb, env): (&Sandbox, &[(String, String)]),
    ) -> Next {
        let call_seq = self.tool_call(s, ev, "bash", args);
        let parsed = crate::wire::json::parse(args).map_or(Value::Null, |p| p.value);
        if let Some(o) = crate::runtime::files::escalation("bash", &parsed, TOOL_CALL_ID) {
            for (ty, data) in &o.events {
                ev.event(s, ty, data);
            }
            let tr = self.tool_result(&o.text, true);
            return self.tool_answered(s, ev, &tr, call_seq, &o.text);
        }
        let input = crate::runtime::bash_input::BashInput::of(args, &s.cwd);
        if let Err(text) = &input.timeout {
            let tr = self.tool_result(text, true);
            return self.tool_answered(s, ev, &tr, call_seq, text);
        }
        let job_id = format!("bash-{}", &super::events::new_id().replace('-', "")[..16]);
        let now = self.now;
        let job = json!({"jobId": job_id,"owner": self.sid,"kind":"bash","label": cmd,"startedAt": now,
            "toolCall":{"callId": TOOL_CALL_ID,"rootCallId": TOOL_CALL_ID}});
        ev.event(s, "job/registered", &job);
        // The writable root is the session's workspace (the directory it opened in), not the
        // one it is in now: the release binds its policy's `workspaceRoot` (`bwrapProfileArgs`).
        let workspace = std::path::PathBuf::from(&*s.route.cwd);
        let workdir = std::path::PathBuf::from(&input.workdir);
        let req = sandbox::Request {
            command: cmd,
            cwd: &workdir,
            workspace: &workspace,
            env,
        };
        let started = sb.start(&req);
        let meta = json!({"cwd": &input.workdir});
        let promoted = |text: String, is_error| (text, is_error, Some(meta.clone()));
        let (text, is_error, meta) = match started {
            Ok(p) if input.background => {
                s.jobs.push(crate::runtime::jobs::Job::new(job, p, (0, 0)));
                promoted(format!("started background job {job_id}"), false)
            }
            Ok(mut p) => match p.wait(input.wait()) {
                Some(ran) => {
                    let (text, is_error, ran) =
                        self.settled(s, ev, job, sandbox::Confined::Ran(ran));
                    (text, is_error, ran.then_some(meta))
                }
                None => {
                    let (out, err) = p.output();
                    let seen = (out.len(), err.len());
                    let so_far = sandbox::streams(
                        &String::from_utf8_lossy(&out),
                        &String::from_utf8_lossy(&err),
                    );
                    let text =
                        crate::runtime::jobs::promoted(&so_far, &input.timeout_text(), &job_id);
                    s.jobs.push(crate::runtime::jobs::Job::new(job, p, seen));
                    promoted(text, false)
                }
            },
            Err(c) if input.background => {
                // It settles at once, and the model is told at its next step.
                let settled = sandbox::settle(c);
                let data = self.settled_data(job.clone(), &settled);
                ev.event(s, "job/settled", &data);
                crate::runtime::reaper::inject(s, ev, crate::runtime::jobs::notice(&data));
                let (status, detail) = (settled.status.to_string(), settled.detail);
                s.jobs
                    .push(crate::runtime::jobs::Job::finished(job, (status, detail)));
                promoted(format!("started background job {job_id}"), false)
            }
            Err(c) => {
                let (text, is_error, ran) = self.settled(s, ev, job, c);
                (text, is_error, ran.then_some(meta))
            }
        };
        let mut tr = self.tool_result(&text, is_error);
        if let Some(m) = meta {
            tr["meta"] = m;
        }
        self.tool_answered(s, ev, &tr, call_seq, &text)
    }

    /// Streams a foreground call's `job/settled` for `c`: its result text, whether it is an
    /// error, and whether the command ran (its result then carries `meta.cwd`).
    pub(super) fn settled(
        &self,
        s: &mut Session,
        ev: &mut Events<'_>,
        job: Value,
        c: sandbox::Confined,
    ) -> (String, bool, bool) {
        let settled = sandbox::settle(c);
        let data = self.settled_data(job, &settled);
        ev.event(s, "job/settled", &data);
        (settled.text, settled.is_error, settled.ran)
    }

    /// The `job/settled` data of the job registered as `job`, settled by its producer.
    pub(super) fn settled_data(&self, mut job: Value, settled: &sandbox::Settled) -> Value {
        job["finishedAt"] = json!(self.now);
        job["status"] = json!(settled.status);
        job["cause"] = json!("producer");
        job["producerReported"] = json!(true);
        job["detail"] = json!(settled.detail);
        job
    }
}

/// The arguments the scripted model writes for a bash call of `cmd`.
pub(super) fn bash_args(cmd: &str) -> String {
    format!(
        "{{\"description\": \"probe command\", \"command\": {}}}",
        events::js_quote(cmd)
    )
}
