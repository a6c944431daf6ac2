//! Protocol invariants over one client↔runtime conversation, checked frame by frame.
//!
//! Feed it every line the runtime *read* ([`Checker::sent`]) and every line it *wrote*
//! ([`Checker::received`]); it fails on the first frame that breaks the contract:
//! - every output line is one compact JSON object, exactly as `JSON.stringify` writes it, with the
//!   upstream member order (CONTRACT §2.4);
//! - a response answers a request that was read and not yet answered (by id echo; duplicates count),
//!   carries `result` xor an `error` of exactly `{code, message}` with code -32603 (or -32601 where
//!   allowed; an unknown method's error names it), a result of the method's shape (§3), and
//!   `shutdown` never fails (§3.6);
//! - a prompt's `{messageId}` follows its receipt (§5);
//! - notifications are of the four (five in legacy) methods with well-formed params; `seq` is
//!   contiguous per session (from 0, except a subagent child: the real runtime does not stream its
//!   creation events, so its first streamed seq is 3), `turn/start` counts up by one and `turn/end` closes the open turn, and
//!   `session.status` alternates starting with `running` (§4–§6).
//!
//! Nothing here knows which runtime produced the lines, so the black-box fuzzer can use it too.

use crate::wire::json;
use crate::wire::{classify, Classified};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// What the checker is told about the runtime under test.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Methods that answer with a result (anything else must be an error).
    pub methods: Vec<String>,
    /// Whether `session/prompt` answers `{accepted: true}` (legacy) instead of `{messageId}`.
    pub legacy_prompt: bool,
    /// Whether `-32601` is acceptable for unknown methods.
    pub allow_method_not_found: bool,
    /// Whether `session.finished` may be sent (legacy).
    pub session_finished: bool,
    /// Whether sessions are new (seq from 0, turns from 1); false once persistence can resume them.
    pub fresh_sessions: bool,
    /// Methods answered later rather than at once (`session/wait`; legacy `session/prompt`).
    pub deferred: Vec<String>,
    /// Methods that never answer with an error (`shutdown` is memoized and always `{}`, §3.6).
    pub never_fail: Vec<String>,
}

/// What a line the runtime read asks of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    /// A request: exactly one response with this id echo is due.
    Request {
        /// The id as the response must echo it (`JSON.stringify` of the parsed id).
        key: String,
        /// The method.
        method: String,
    },
    /// Anything else: nothing may be written for it.
    Nothing,
}

/// What one output line was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// A response to this request.
    Response {
        /// Id echo.
        key: String,
        /// Method of the request it answered; `None` for an error that may answer any of the
        /// known-method requests with this id.
        method: Option<String>,
        /// A result (not an error).
        ok: bool,
    },
    /// A notification of this method.
    Notification(String),
}

/// Requests of one id echo not yet answered. Error answers to known methods say nothing about
/// which of several same-id requests they answer, so they stay "floating" and are assigned only
/// when a question needs it (preferring requests that must be answered at once).
#[derive(Debug, Default)]
struct Open {
    methods: Vec<String>,
    floating: usize,
}

#[derive(Debug, Default)]
struct Track {
    /// A subagent child: its creation events are not streamed, so its first seq is free.
    child: bool,
    next_seq: Option<u64>,
    last_turn: Option<u64>,
    open_turn: Option<u64>,
    running: Option<bool>,
    last_time: Option<f64>,
}

/// The invariant checker for one conversation.
#[derive(Debug)]
pub struct Checker {
    rules: Rules,
    pending: HashMap<String, Open>,
    sessions: HashMap<String, Track>,
    receipts: HashSet<String>,
}

impl Checker {
    /// A checker with no history.
    pub fn new(rules: Rules) -> Checker {
        Checker {
            rules,
            pending: HashMap::new(),
            sessions: HashMap::new(),
            receipts: HashSet::new(),
        }
    }

    /// Records a (decoded, trimmed) line the runtime read.
    pub fn sent(&mut self, line: &str) -> Sent {
        match classify(line) {
            Classified::Request(r) => {
                let key = r.id.to_json();
                self.pending
                    .entry(key.clone())
                    .or_default()
                    .methods
                    .push(r.method.clone());
                Sent::Request {
                    key,
                    method: r.method,
                }
            }
            _ => Sent::Nothing,
        }
    }

    /// The rules in force.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Requests read but not answered yet, as `(id echo, method)`. Floating error answers are
    /// credited to requests that are not deferred first.
    pub fn pending(&self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        for (k, open) in &self.pending {
            let mut methods = open.methods.clone();
            for _ in 0..open.floating {
                let known = |m: &String| {
                    self.rules.methods.contains(m) && !self.rules.never_fail.contains(m)
                };
                let deferred = |m: &String| self.rules.deferred.contains(m);
                let i = methods
                    .iter()
                    .position(|m| known(m) && !deferred(m))
                    .or_else(|| methods.iter().position(known));
                if let Some(i) = i {
                    methods.remove(i);
                }
            }
            v.extend(methods.into_iter().map(|m| (k.clone(), m)));
        }
        v.sort();
        v
    }

    /// Checks one line the runtime wrote (without its `\n`).
    pub fn received(&mut self, line: &str) -> Result<Received, String> {
        self.received_inner(line)
            .map_err(|e| format!("{e}\n  output line: {}", clip(line)))
    }

    fn received_inner(&mut self, line: &str) -> Result<Received, String> {
        if line.contains('\r') {
            return Err("a raw CR inside an output line".into());
        }
        let parsed = json::parse(line).map_err(|e| format!("output is not JSON: {e}"))?;
        let text = json::to_string(&parsed.value);
        if text != line {
            return Err(format!(
                "output is not compact JSON.stringify text (expected {})",
                clip(&text)
            ));
        }
        let Value::Object(frame) = parsed.value else {
            return Err("output is not a JSON object".into());
        };
        let keys: Vec<&str> = frame.keys().map(String::as_str).collect();
        if frame.get("jsonrpc") != Some(&Value::String("2.0".into())) {
            return Err("output lacks \"jsonrpc\":\"2.0\"".into());
        }
        match keys.as_slice() {
            ["jsonrpc", "id", "result"] | ["jsonrpc", "id", "error"] => self.response(&frame),
            ["jsonrpc", "method", "params"] => self.notification(&frame),
            _ => Err(format!(
                "output members are {keys:?}, neither a response nor a notification"
            )),
        }
    }

    fn response(&mut self, frame: &Map<String, Value>) -> Result<Received, String> {
        let key = json::to_string(&frame["id"]);
        let Some(open) = self.pending.get_mut(&key) else {
            return Err(format!(
                "response to id {key}, which no unanswered request carries"
            ));
        };
        let known = |m: &String| self.rules.methods.contains(m);
        let ok = frame.contains_key("result");
        let method = if let Some(e) = frame.get("error") {
            let (code, message) = error_object(e)?;
            let unknown_msg = message.strip_prefix(UNKNOWN_METHOD);
            // An unknown method's answer names it; any other error may answer any known method.
            let named = open
                .methods
                .iter()
                .rposition(|m| !known(m) && unknown_msg == Some(m.as_str()) && code == -32603)
                .or_else(|| {
                    open.methods.iter().rposition(|m| {
                        !known(m) && code == -32601 && self.rules.allow_method_not_found
                    })
                });
            match named {
                Some(i) => Some(open.methods.remove(i)),
                None if code != -32603 => {
                    return Err(format!("error code {code} (answering {:?})", open.methods))
                }
                None => {
                    let may_fail = |m: &String| known(m) && !self.rules.never_fail.contains(m);
                    let room = open.methods.iter().filter(|m| may_fail(m)).count();
                    if room == 0 && open.methods.iter().any(known) {
                        return Err(format!(
                            "{:?} answered with the error {message:?}",
                            open.methods
                        ));
                    }
                    if open.floating >= room {
                        return Err(format!(
                            "error {message:?} answers none of the unanswered requests {:?} with id {key} (unknown methods must answer `{UNKNOWN_METHOD}<method>`)",
                            open.methods
                        ));
                    }
                    open.floating += 1;
                    None
                }
            }
        } else {
            // A result belongs to the most recent request whose shape it fits.
            let mut first_err = None;
            let mut hit = None;
            for (i, m) in open.methods.iter().enumerate().rev() {
                match result_fits(&self.rules, &self.receipts, m, frame) {
                    Ok(()) => {
                        hit = Some(i);
                        break;
                    }
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
            let Some(i) = hit else {
                return Err(first_err.unwrap_or_default());
            };
            let m = open.methods.remove(i);
            let may_fail = |m: &String| known(m) && !self.rules.never_fail.contains(m);
            if open.floating > open.methods.iter().filter(|m| may_fail(m)).count() {
                return Err(format!(
                    "more answers than requests with id {key} (an error answered {m:?} earlier?)"
                ));
            }
            Some(m)
        };
        if open.methods.len() == open.floating {
            self.pending.remove(&key);
        }
        Ok(Received::Response { key, method, ok })
    }

    fn notification(&mut self, frame: &Map<String, Value>) -> Result<Received, String> {
        let method = frame["method"]
            .as_str()
            .ok_or("notification method is not a string")?;
        let p = frame["params"]
            .as_object()
            .ok_or("notification params is not an object")?;
        let string = |k: &str| -> Result<&str, String> {
            p.get(k)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{method}: params.{k} is not a string"))
        };
        match method {
            "session.event" => self.event(string("sessionId")?, p)?,
            "session.status" => {
                let sid = string("sessionId")?;
                let running = match string("status")? {
                    "running" => true,
                    "idle" => false,
                    s => return Err(format!("session.status {s:?}")),
                };
                let t = self.sessions.entry(sid.to_owned()).or_default();
                if t.running == Some(running) || (t.running.is_none() && !running) {
                    return Err(format!(
                        "session.status {} for {sid:?} is no change of status",
                        if running { "running" } else { "idle" }
                    ));
                }
                t.running = Some(running);
            }
            "subagent.started" => {
                string("parentSessionId")?;
                let child = string("childSessionId")?;
                self.sessions.entry(child.to_owned()).or_default().child = true;
            }
            "subagent.finished" => {
                string("parentSessionId")?;
                let child = string("childSessionId")?;
                string("provider")?;
                if string("agentId")? != child {
                    return Err("subagent.finished agentId differs from childSessionId".into());
                }
                let status = string("status")?;
                let reason = string("stopReason")?;
                if !["ok", "error"].contains(&status)
                    || !["completed", "aborted", "error", "max-tokens", "refusal"].contains(&reason)
                {
                    return Err(format!(
                        "subagent.finished status {status:?} / stopReason {reason:?}"
                    ));
                }
                if let Some(m) = p.get("lastAssistantMessage") {
                    if m.as_array().is_none_or(Vec::is_empty) {
                        return Err("lastAssistantMessage present but not a non-empty array".into());
                    }
                }
            }
            "session.finished" if self.rules.session_finished => {
                string("sessionId")?;
                if !["ok", "error"].contains(&string("status")?) {
                    return Err("session.finished status".into());
                }
            }
            m => {
                return Err(format!(
                    "notification method {m:?} is not one the runtime sends"
                ))
            }
        }
        Ok(Received::Notification(method.to_owned()))
    }

    fn event(&mut self, sid: &str, p: &Map<String, Value>) -> Result<(), String> {
        let e = p
            .get("event")
            .and_then(Value::as_object)
            .ok_or("session.event without an event object")?;
        let ty = e
            .get("type")
            .and_then(Value::as_str)
            .ok_or("event.type is not a string")?;
        let seq = e
            .get("seq")
            .and_then(Value::as_u64)
            .ok_or("event.seq is not a non-negative integer")?;
        let time = e
            .get("time")
            .and_then(Value::as_f64)
            .ok_or("event.time is not a number")?;
        let data = e.get("data").ok_or("event without data")?;
        let fresh = self.rules.fresh_sessions;
        let t = self.sessions.entry(sid.to_owned()).or_default();
        let want = t
            .next_seq
            .unwrap_or(if fresh && !t.child { 0 } else { seq });
        if seq != want {
            return Err(format!("{sid:?}: event seq {seq}, expected {want}"));
        }
        t.next_seq = Some(seq + 1);
        if t.last_time.is_some_and(|last| time < last) {
            return Err(format!("{sid:?}: event time went backwards"));
        }
        t.last_time = Some(time);
        let turn = || data.get("turn").and_then(Value::as_u64);
        match ty {
            "turn/start" => {
                let n = turn().ok_or("turn/start without an integer data.turn")?;
                if let Some(open) = t.open_turn {
                    return Err(format!("{sid:?}: turn/start {n} while turn {open} is open"));
                }
                let want = t.last_turn.map(|l| l + 1).or(fresh.then_some(1));
                if want.is_some_and(|w| w != n) {
                    return Err(format!("{sid:?}: turn/start {n}, expected {want:?}"));
                }
                t.last_turn = Some(n);
                t.open_turn = Some(n);
            }
            "turn/end" => {
                let n = turn().ok_or("turn/end without an integer data.turn")?;
                if t.open_turn != Some(n) {
                    return Err(format!(
                        "{sid:?}: turn/end {n}, but the open turn is {:?}",
                        t.open_turn
                    ));
                }
                t.open_turn = None;
                let kind = data.pointer("/reason/kind").and_then(Value::as_str);
                if kind.is_none() {
                    return Err("turn/end without a string reason.kind".into());
                }
            }
            "agent/inbox/spliced" => {
                let inserted = data
                    .get("inserted")
                    .and_then(Value::as_array)
                    .ok_or("agent/inbox/spliced without an inserted array")?;
                for m in inserted {
                    if let Some(id) = m.get("id").and_then(Value::as_str) {
                        self.receipts.insert(id.to_owned());
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The message every runtime of this protocol gives unknown methods (CONTRACT §2.3, §9).
pub const UNKNOWN_METHOD: &str = "unknown DeepSeek Harness SDK runtime method: ";

/// An error member's code and message, checking its shape: exactly `{code, message}`.
fn error_object(e: &Value) -> Result<(i64, &str), String> {
    let e = e.as_object().ok_or("error is not an object")?;
    let keys: Vec<&str> = e.keys().map(String::as_str).collect();
    if keys != ["code", "message"] {
        return Err(format!("error members are {keys:?}, not [code, message]"));
    }
    let code = e["code"].as_i64().ok_or("error code is not an integer")?;
    let message = e["message"]
        .as_str()
        .ok_or("error message is not a string")?;
    Ok((code, message))
}

/// Whether a result `frame` is an acceptable answer to a `method` request.
fn result_fits(
    rules: &Rules,
    receipts: &HashSet<String>,
    method: &str,
    frame: &Map<String, Value>,
) -> Result<(), String> {
    if !rules.methods.iter().any(|m| m == method) {
        return Err(format!("unknown method {method:?} answered with a result"));
    }
    let r = frame["result"]
        .as_object()
        .ok_or_else(|| format!("{method} result is not an object"))?;
    let empty = |what: &str| -> Result<(), String> {
        if r.is_empty() {
            Ok(())
        } else {
            Err(format!("{what} result is not {{}}"))
        }
    };
    match method {
        "initialize" => {
            let info = r.get("serverInfo").and_then(Value::as_object);
            let ok = info.is_some_and(|i| {
                i.get("name").and_then(Value::as_str) == Some("deepseek-harness-sdk-runtime")
                    && i.get("version").is_some_and(Value::is_string)
            });
            if !ok {
                return Err("initialize result lacks serverInfo {name, version}".into());
            }
        }
        "session/prompt"
            if rules.legacy_prompt
                && (r.len() != 1 || r.get("accepted") != Some(&Value::Bool(true))) =>
        {
            return Err("legacy prompt result is not {accepted: true}".into());
        }
        "session/prompt" if rules.legacy_prompt => {}
        "session/prompt" => {
            let id = r
                .get("messageId")
                .and_then(Value::as_str)
                .ok_or("prompt result lacks a string messageId")?;
            if !receipts.contains(id) {
                return Err(format!("prompt response {id} came before its receipt"));
            }
        }
        "shutdown" | "session/resume" | "session/wait" => empty(method)?,
        "session/working-directory/get" | "session/working-directory/set" => {
            let cwd = r.get("cwd").and_then(Value::as_str);
            if r.len() != 1 || !cwd.is_some_and(|c| c.starts_with('/')) {
                return Err(format!("{method} result is not {{cwd: <absolute path>}}"));
            }
        }
        _ => {}
    }
    Ok(())
}

fn clip(s: &str) -> String {
    if s.len() <= 400 {
        return s.to_owned();
    }
    let end = (0..=400)
        .rev()
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &s[..end], s.len())
}
