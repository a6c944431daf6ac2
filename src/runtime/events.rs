//! Payloads of the session events and notifications, shaped like the released runtime's.
//! Where the real payload is huge (system prompt, tool schemas) a short deterministic stand-in is
//! used; the fidelity allowlist names those fields.
//!
//! [`Events`] writes a handler's session events ([`write_event`] is their wire format): it
//! numbers them in their session's log and stamps them with a time that never goes backwards.

use super::Session;
use crate::wire::json::{write_str, write_value};
use serde_json::{json, Value};

/// The stand-in system prompt (the real one is ~10 kB of agent instructions).
pub const SYSTEM_PROMPT: &str = "You are an AI agent powered by DeepSeek Harness. (dsh-conformance reference runtime: scripted model, no tools are run.)";

/// The sandbox refusal the real runtime answers every bash call with on a host without a sandbox.
pub const SANDBOX_REFUSAL: &str = "sandbox mode \"workspace-write\" is requested but no sandbox backend is usable on this host; refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL restricted-token runner can start (Windows) — otherwise switch the consumer to danger-full-access.";

/// Retry policy key of the DeepSeek adapter.
pub const RETRY_POLICY: &str = "[\"normal\",5,[\"EMPTY_RESPONSE\",\"RATE_LIMIT\",\"SERVER\",\"TIMEOUT\",\"TRANSPORT\"],500,10000,0.1]";

/// Nominal retry delays (ms) of the real policy, reported but not waited (see the module docs of `model`).
pub const RETRY_DELAYS: [f64; 5] = [500.0, 1000.0, 2000.0, 4000.0, 7500.0];

/// The envelope of one `session.event` frame: everything but its `data`.
pub struct Head<'a> {
    /// The session the event belongs to.
    pub session: &'a str,
    /// The event type (`turn/start`, `user/message`…).
    pub ty: &'a str,
    /// Its position in the session log.
    pub seq: u64,
    /// Its time (epoch milliseconds).
    pub time: u64,
    /// `sourceEventSeqs`: the events it answers, when any.
    pub source_seqs: Option<&'a [u64]>,
    /// Whether it carries `"surfaceOp":"append"`.
    pub append: bool,
}

/// Appends one `session.event` notification frame.
pub fn write_event(out: &mut Vec<u8>, head: &Head<'_>, data: &Value) {
    write_event_with(out, head, |o| write_value(data, o));
}

/// Appends one `session.event` frame whose `data` is written by `data` (raw JSON, no `Value`).
pub fn write_event_with(out: &mut Vec<u8>, head: &Head<'_>, data: impl FnOnce(&mut Vec<u8>)) {
    use std::io::Write as _;
    out.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"session.event\",\"params\":{\"sessionId\":",
    );
    write_str(head.session, out);
    out.extend_from_slice(b",\"event\":{\"type\":");
    write_str(head.ty, out);
    let _ = write!(
        out,
        ",\"seq\":{},\"time\":{},\"data\":",
        head.seq, head.time
    );
    data(out);
    if let Some(s) = head.source_seqs {
        out.extend_from_slice(b",\"sourceEventSeqs\":");
        write_value(&json!(s), out);
    }
    if head.append {
        out.extend_from_slice(b",\"surfaceOp\":\"append\"");
    }
    out.extend_from_slice(b"}}}\n");
}

/// How an event shows on the client's surface.
#[derive(Clone, Copy)]
enum Surface<'a> {
    /// Not as an item of its own (no `surfaceOp`).
    Silent,
    /// Appended (`"surfaceOp":"append"`): messages.
    Append,
    /// Appended, answering earlier events (`sourceEventSeqs`): tool results.
    Answer(&'a [u64]),
}

/// The writer of one handler's session events: the output, the session id and the clock are
/// fixed once; each call names the session (its log position and clock) and the event.
pub(super) struct Events<'a> {
    out: &'a mut Vec<u8>,
    sid: &'a str,
    now: u64,
}

impl<'a> Events<'a> {
    /// Events of session `sid`, stamped `now`, appended to `out`.
    pub(super) fn new(out: &'a mut Vec<u8>, sid: &'a str, now: u64) -> Self {
        Events { out, sid, now }
    }

    /// The output itself, for the frames between events (status, notifications).
    pub(super) fn out(&mut self) -> &mut Vec<u8> {
        self.out
    }

    /// An event with no `surfaceOp`; returns its seq.
    pub(super) fn event(&mut self, s: &mut Session, ty: &str, data: &Value) -> u64 {
        let head = self.next(s, ty, Surface::Silent);
        write_event(self.out, &head, data);
        head.seq
    }

    /// An event appended to the surface (a message); returns its seq.
    pub(super) fn appended(&mut self, s: &mut Session, ty: &str, data: &Value) -> u64 {
        let head = self.next(s, ty, Surface::Append);
        write_event(self.out, &head, data);
        head.seq
    }

    /// Like [`Events::appended`], with `data` written as raw JSON by a closure.
    pub(super) fn appended_with(
        &mut self,
        s: &mut Session,
        ty: &str,
        data: impl FnOnce(&mut Vec<u8>),
    ) -> u64 {
        let head = self.next(s, ty, Surface::Append);
        write_event_with(self.out, &head, data);
        head.seq
    }

    /// An appended event answering the events `sources` (a tool result); returns its seq.
    pub(super) fn answer(
        &mut self,
        s: &mut Session,
        ty: &str,
        data: &Value,
        sources: &[u64],
    ) -> u64 {
        let head = self.next(s, ty, Surface::Answer(sources));
        write_event(self.out, &head, data);
        head.seq
    }

    /// Takes the next place in `s`'s log: its seq, and a time that never goes backwards.
    fn next<'h>(&self, s: &mut Session, ty: &'h str, surface: Surface<'h>) -> Head<'h>
    where
        'a: 'h,
    {
        let (source_seqs, append) = match surface {
            Surface::Silent => (None, false),
            Surface::Append => (None, true),
            Surface::Answer(sources) => (Some(sources), true),
        };
        s.last_time = s.last_time.max(self.now);
        let head = Head {
            session: self.sid,
            ty,
            seq: s.seq,
            time: s.last_time,
            source_seqs,
            append,
        };
        s.seq += 1;
        head
    }
}

/// Appends a `session.status` notification.
pub fn write_status(out: &mut Vec<u8>, session: &str, running: bool) {
    out.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"session.status\",\"params\":{\"sessionId\":",
    );
    write_str(session, out);
    out.extend_from_slice(if running {
        b",\"status\":\"running\"}}\n"
    } else {
        b",\"status\":\"idle\"}}\n"
    });
}

thread_local! {
    /// The next id of this thread's deterministic ids ([`seed_ids`]), if they are on.
    static SEEDED: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Draws this thread's ids from `seed` on instead of the OS's randomness (`None`: random again),
/// so that one input writes the same bytes every time: for fuzz targets, whose runs are then
/// reproducible and whose exploration no random id steers. The ids keep the v4 form.
pub fn seed_ids(seed: Option<u64>) {
    SEEDED.with(|s| s.set(seed));
}

/// A fresh message / event id (hyphenated uuid v4, as the real runtime uses).
pub fn new_id() -> String {
    let seeded = SEEDED.with(|s| {
        let n = s.get();
        s.set(n.map(|n| n.wrapping_add(1)));
        n
    });
    let id = match seeded {
        Some(n) => {
            // splitmix64: well-spread bits from a counter.
            let mix = |mut z: u64| {
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
                z ^ (z >> 31)
            };
            let (a, b) = (mix(2 * n + 1), mix(2 * n + 2));
            let bytes = (u128::from(a) << 64 | u128::from(b)).to_le_bytes();
            uuid::Builder::from_random_bytes(bytes).into_uuid()
        }
        None => uuid::Uuid::new_v4(),
    };
    id.hyphenated().to_string()
}

/// A user message object (`{content, source, role, id}`, the real member order). Built by
/// moving `content` in: `json!` would serialize it recursively, and prompt content may be deep.
pub fn user_message(content: Value, source: Value, id: String) -> Value {
    let mut m = serde_json::Map::with_capacity(4);
    m.insert("content".into(), content);
    m.insert("source".into(), source);
    m.insert("role".into(), Value::String("user".into()));
    m.insert("id".into(), Value::String(id));
    Value::Object(m)
}

/// The runtime-context snapshot message a session sees on its first step.
pub fn runtime_context(cwd: &str, workspace: &str, child_of: Option<()>) -> Value {
    let wd = format!("Current working directory: {}.", js_quote(cwd));
    let sandbox = format!("Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may modify files under the session workspace: {}. Some platform temporary areas may also be writable.", js_quote(workspace));
    let mut sections = vec![
        ("working-directory:current", wd),
        ("sandbox:policy", sandbox),
    ];
    match child_of {
        None => sections.push(("approval:policy", "Approval policy: ask. Operations that require approval may ask through the configured answerers; without an available answerer, the request fails closed.".into())),
        Some(()) => {
            sections.push(("approval:policy", "Approval prompts are disabled in this session: actions that require approval are rejected automatically — do not request sandbox escalation (do not set `sandbox_permissions`).".into()));
            sections.push(("tool:subagent:depth", "Delegation depth for `subagent`: current 1, maximum 1, remaining levels 0. Do not call `subagent` at this depth; carry out the work directly.".into()));
            sections.push(("tool:subagent_fork:depth", "Delegation depth for `subagent_fork`: current 1, maximum 1, remaining levels 0. Do not call `subagent_fork` at this depth; carry out the work directly.".into()));
            sections.push(("subagent:delegation", "You are a delegated subagent: your permission scope was fixed when you were started and cannot be widened from inside this session — operations that require approval are rejected automatically. When the task needs access beyond that scope, do not retry the denied operation; state the limitation in your reply so the delegating agent can handle it.".into()));
        }
    }
    let mut text = String::from(
        "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.",
    );
    for (_, t) in &sections {
        text.push_str("\n\n");
        text.push_str(t);
    }
    let sections: Vec<Value> = sections
        .into_iter()
        .map(|(n, t)| json!({"name": n, "text": t}))
        .collect();
    user_message(
        json!([{"type":"text","text": text}]),
        json!({"kind":"runtime-context","form":"snapshot","sections": sections}),
        new_id(),
    )
}

/// `JSON.stringify` of a string, as the runtime quotes paths in its texts.
pub fn js_quote(s: &str) -> String {
    let mut v = Vec::new();
    write_str(s, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

/// `assistant/attempt` data for a failed model request.
pub fn attempt(turn: u32, step: u32, failure: &Value, partial: Option<&str>, now: u64) -> Value {
    let mut stream = Vec::new();
    if let Some(t) = partial {
        stream.push(json!({"type":"chunk","time": now,"chunk":{"type":"block-start","index":0,"blockType":"text"}}));
        stream.push(json!({"type":"text-chunks","time0": now,"index":0,"dt":[],"texts":[t]}));
    }
    stream.push(json!({"type":"chunk","time": now,"chunk":{"type":"finish","reason":{"kind":"error","failure": failure}}}));
    json!({"turn": turn, "step": step, "stream": stream})
}

/// `request/header` data (tool schemas abbreviated to names). `resumed`: the first header of a
/// session this process reopened from the store (`"reason":"resume"`, else `"initial"`).
/// `child`: a subagent's session, whose route names the effort it inherited (so it is not an
/// adapter default, and comes before `maxTokens`).
pub fn request_header(model: &str, max_tokens: Option<f64>, reason: &str, child: bool) -> Value {
    let max = max_tokens
        .map(crate::wire::json::number_value)
        .unwrap_or(json!(256000));
    // `adapterDefaults` names the settings the adapter filled in: a client's maxTokens is not one.
    let mut defaults = serde_json::Map::new();
    if !child {
        defaults.insert("reasoningEffort".into(), json!(true));
    }
    if max_tokens.is_none() {
        defaults.insert("maxTokens".into(), json!(true));
    }
    let config = if child {
        json!({"provider":"deepseek-official","model": model,"reasoningEffort":"high","maxTokens": max})
    } else {
        json!({"provider":"deepseek-official","model": model,"maxTokens": max,"reasoningEffort":"high"})
    };
    json!({"header":{"config": config,
        "adapterDefaults": defaults,
        "tools":[{"name":"bash"},{"name":"subagent"}]},
        "reason": reason})
}
