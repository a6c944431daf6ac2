//! The frame rewriting of each mutant: pure, line in → lines out, so it is testable without processes.

use super::frames::{
    has_lone_surrogate, is_prompt_receipt, is_response, non_json_literals_as_null,
    replace_lone_surrogates, reverse_members, s, session_event, status_idle_session,
};
use super::history_file;
use super::MutantKind::{self, self as M};
use crate::wire::{classify, json, Classified, Id, Ignored, Kind};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// What to do with one client line.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct InputAction {
    /// Lines (without `\n`) to pass to the runtime.
    pub forward: Vec<Vec<u8>>,
    /// Frames (without `\n`) to write to the client directly.
    pub answer: Vec<String>,
    /// The process dies on this line: what it writes on stderr first (then it exits 1, its
    /// runtime killed, nothing of the line answered).
    pub crash: Option<String>,
}

/// An error response to request `id` (code -32603), as the runtime writes one.
fn error_line(id: &Id, message: &str) -> String {
    let mut out = Vec::new();
    crate::wire::write::error(
        &mut out,
        id,
        crate::wire::ErrorCode::INTERNAL_ERROR,
        message,
    );
    String::from_utf8_lossy(&out).trim_end().to_owned()
}

/// Per-mutant state.
pub(crate) struct Rewriter {
    kind: Option<MutantKind>,
    shutdown_ids: HashSet<Id>,
    /// A response has been written (the mutants that go silent after it).
    answered_once: bool,
    /// A shutdown request has been answered.
    pub shutdown_answered: bool,
    /// An `initialize` has been answered with a result.
    initialized: bool,
    /// `session/resume` requests not yet answered: id echo → session id.
    resumes: HashMap<String, String>,
    global_turn: u64,
    turn_map: HashMap<String, u64>,
    history: HashMap<String, Vec<String>>,
    held_turn_end: HashMap<String, String>,
    held_receipts: Vec<String>,
    event_count: HashMap<String, u64>,
    /// Next seq per session, for mutants that drop or move events (see [`Rewriter::output`]).
    next_seq: HashMap<String, u64>,
    /// The writer has died (`writer-dies-on-surrogate`): nothing more reaches the client.
    writer_dead: bool,
}

impl Rewriter {
    pub(crate) fn new(kind: MutantKind) -> Self {
        Rewriter::with(Some(kind))
    }

    /// A rewriter that changes nothing (tests compare mutants with it).
    #[cfg(test)]
    pub(crate) fn identity() -> Self {
        Rewriter::with(None)
    }

    fn with(kind: Option<MutantKind>) -> Self {
        Rewriter {
            kind,
            shutdown_ids: HashSet::new(),
            answered_once: false,
            shutdown_answered: false,
            initialized: false,
            resumes: HashMap::new(),
            global_turn: 0,
            turn_map: HashMap::new(),
            history: HashMap::new(),
            held_turn_end: HashMap::new(),
            held_receipts: Vec::new(),
            event_count: HashMap::new(),
            next_seq: HashMap::new(),
            writer_dead: false,
        }
    }

    /// Lines the mutant writes to stdout before anything else.
    pub(crate) fn startup(&self) -> Vec<String> {
        match self.kind {
            Some(M::StdoutLogLine) => vec!["[info] runtime starting, logging to stdout".to_owned()],
            _ => Vec::new(),
        }
    }

    /// Whether the mutant keeps the runtime's stdin open after the client's EOF.
    pub(crate) fn ignores_eof(&self) -> bool {
        self.kind == Some(M::IgnoresEof)
    }

    /// Whether adjacent responses are swapped ([`super::MutantKind::SwappedResponses`]).
    pub(crate) fn swaps_responses(&self) -> bool {
        self.kind == Some(M::SwappedResponses)
    }

    /// Whether every frame is written to the client in pieces ([`super::MutantKind::FragmentedOutput`]).
    pub(crate) fn fragments_output(&self) -> bool {
        self.kind == Some(M::FragmentedOutput)
    }

    /// How long the mutant holds what it read before serving it, dropping it unserved when the
    /// client's EOF comes first (as a runtime whose handlers are still pending when it exits at
    /// end of input).
    pub(crate) fn drops_at_eof(&self) -> Option<std::time::Duration> {
        (self.kind == Some(M::EofDropsPending)).then(|| std::time::Duration::from_millis(150))
    }

    /// The exit code the proxy reports, given the runtime's; `None` means never exit.
    pub(crate) fn exit_code(&self, runtime_code: i32) -> Option<i32> {
        match self.kind {
            Some(M::ShutdownNoExit) if self.shutdown_answered => None,
            Some(M::ShutdownExit1) if self.shutdown_answered && runtime_code == 0 => Some(1),
            _ => Some(runtime_code),
        }
    }

    /// What an unterminated last line at EOF becomes: `Some(bytes)` to forward as they are.
    pub(crate) fn tail(&self, raw: &[u8]) -> Vec<u8> {
        let mut t = raw.to_vec();
        if self.kind == Some(M::TailProcessed) {
            t.push(b'\n');
        }
        t
    }

    /// One client line (without its `\n`).
    pub(crate) fn input(&mut self, raw: &[u8]) -> InputAction {
        let mut act = InputAction::default();
        let text = String::from_utf8_lossy(raw);
        let class = classify(crate::wire::trim_js(&text));
        if let Classified::Request(r) = &class {
            if r.method == "shutdown" {
                self.shutdown_ids.insert(r.id.clone());
            }
            if let Some(sid) = r.params.get("sessionId").and_then(Value::as_str) {
                if r.method == "session/resume" {
                    self.resumes.insert(r.id.to_json(), sid.to_owned());
                }
            }
        }
        match (self.kind, &class) {
            (Some(M::AnswersNotifications), Classified::Notification(n))
                if n.id_kind == Kind::Absent =>
            {
                act.answer
                    .push(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#.to_owned());
            }
            (Some(M::RepliesToMalformed), Classified::Ignored(Ignored::Malformed(_))) => {
                act.answer.push(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#.to_owned());
            }
            (Some(M::NullIdAnswered), Classified::Notification(n)) if n.id_kind == Kind::Null => {
                let mut out = Vec::new();
                crate::wire::write::error(
                    &mut out,
                    &Id::Num(f64::INFINITY),
                    crate::wire::ErrorCode::INTERNAL_ERROR,
                    &format!("unknown DeepSeek Harness SDK runtime method: {}", n.method),
                );
                act.answer
                    .push(String::from_utf8_lossy(&out).trim_end().to_owned());
                return act;
            }
            (Some(M::BatchSupported), Classified::Ignored(Ignored::Batch { .. })) => {
                if let Ok(p) = json::parse(crate::wire::trim_js(&text)) {
                    if let Value::Array(items) = p.value {
                        act.forward.extend(items.iter().map(|i| s(i).into_bytes()));
                        return act;
                    }
                }
            }
            (Some(M::CrAsSeparator), _) if raw.contains(&b'\r') => {
                act.forward.extend(
                    raw.split(|b| *b == b'\r')
                        .filter(|p| !p.is_empty())
                        .map(<[u8]>::to_vec),
                );
                return act;
            }
            (Some(M::BomRejected), _) if raw.starts_with("\u{feff}".as_bytes()) => return act,
            (Some(M::NonJsonLiteralsServed), Classified::Ignored(Ignored::Malformed(_))) => {
                let served = non_json_literals_as_null(crate::wire::trim_js(&text))
                    .filter(|l| json::parse(l).is_ok());
                if let Some(line) = served {
                    act.forward.push(line.into_bytes());
                    return act;
                }
            }
            (Some(M::SurrogatesReplaced), _) => {
                let parsed = json::parse(crate::wire::trim_js(&text)).ok();
                if let Some(v) = parsed.map(|p| p.value).filter(has_lone_surrogate) {
                    act.forward
                        .push(s(&replace_lone_surrogates(&v)).into_bytes());
                    return act;
                }
            }
            (Some(M::WdRelativeToProcess), Classified::Request(r))
                if r.method == "session/working-directory/set" =>
            {
                // As `path.resolve(p.path)` does: against the process's directory, which the
                // runtime behind the proxy shares.
                let parsed = json::parse(crate::wire::trim_js(&text)).ok();
                let cwd = std::env::current_dir().ok();
                if let (Some(mut v), Some(cwd)) = (parsed.map(|p| p.value), cwd) {
                    let rel = v.pointer("/params/path").and_then(Value::as_str);
                    if let Some(rel) = rel.filter(|p| !p.is_empty() && !p.starts_with('/')) {
                        let abs = cwd.join(rel).to_string_lossy().into_owned();
                        v["params"]["path"] = json!(abs);
                        act.forward.push(s(&v).into_bytes());
                        return act;
                    }
                }
            }
            (Some(M::PrototypeMethods), Classified::Request(r)) => {
                // What `handlers[method](params)` answers in JavaScript for these names.
                let answer = match r.method.as_str() {
                    "constructor" => Ok(json!({})),
                    "toString" => Ok(json!("[object Undefined]")),
                    "__proto__" => Err("handler is not a function"),
                    "hasOwnProperty" => Err("Cannot convert undefined or null to object"),
                    _ => Err(""),
                };
                let id = json::to_string(&r.id.to_value());
                match answer {
                    Ok(v) => {
                        let result = json::to_string(&v);
                        act.answer.push(format!(
                            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
                        ));
                        return act;
                    }
                    Err(m) if !m.is_empty() => {
                        let mut out = Vec::new();
                        crate::wire::write::error(
                            &mut out,
                            &r.id,
                            crate::wire::ErrorCode::INTERNAL_ERROR,
                            m,
                        );
                        act.answer
                            .push(String::from_utf8_lossy(&out).trim_end().to_owned());
                        return act;
                    }
                    Err(_) => {}
                }
            }
            (Some(M::RefusesReinitialize), Classified::Request(r))
                if r.method == "initialize" && self.initialized =>
            {
                let mut out = Vec::new();
                crate::wire::write::error(
                    &mut out,
                    &r.id,
                    crate::wire::ErrorCode::INTERNAL_ERROR,
                    "already initialized",
                );
                act.answer
                    .push(String::from_utf8_lossy(&out).trim_end().to_owned());
                return act;
            }
            (Some(M::CrashOnArrayParams), Classified::Request(r)) if r.method == "initialize" => {
                let params = json::parse(crate::wire::trim_js(&text))
                    .ok()
                    .and_then(|p| p.value.get("params").cloned());
                if matches!(params, Some(Value::Array(_))) {
                    // As `const { cwd } = params` on an array would not, but `params.cwd.trim()` does.
                    act.crash = Some(
                        "TypeError: Cannot read properties of undefined (reading 'trim')\n    at initialize (runtime.js:1:1)".to_owned(),
                    );
                    return act;
                }
            }
            (Some(M::NoWorkingDirectory), Classified::Request(r))
                if r.method == "session/working-directory/get"
                    || r.method == "session/working-directory/set" =>
            {
                let m = format!("{}{}", crate::rules::UNKNOWN_METHOD, r.method);
                act.answer.push(error_line(&r.id, &m));
                return act;
            }
            (Some(M::NoSessionWait), Classified::Request(r)) if r.method == "session/wait" => {
                let m = format!("{}{}", crate::rules::UNKNOWN_METHOD, r.method);
                act.answer.push(error_line(&r.id, &m));
                return act;
            }
            (Some(M::NoResume), Classified::Request(r)) if r.method == "session/resume" => {
                let m = format!("{}{}", crate::rules::UNKNOWN_METHOD, r.method);
                act.answer.push(error_line(&r.id, &m));
                return act;
            }
            (Some(M::DefaultsInitialize), Classified::Request(r)) if r.method == "initialize" => {
                if let Ok(p) = json::parse(crate::wire::trim_js(&text)) {
                    let mut v = p.value;
                    // Params that are not an object are {} (§2.2); what is missing is defaulted.
                    if !v.get("params").is_some_and(Value::is_object) {
                        v["params"] = json!({});
                    }
                    let cwd = std::env::current_dir()
                        .map(|d| d.to_string_lossy().into_owned())
                        .unwrap_or_else(|_| "/".to_owned());
                    for (k, d) in [
                        ("cwd", cwd.as_str()),
                        ("provider", "deepseek-official"),
                        ("model", "deepseek-v4-flash"),
                    ] {
                        if v["params"].get(k).is_none() {
                            v["params"][k] = json!(d);
                        }
                    }
                    act.forward.push(s(&v).into_bytes());
                    return act;
                }
            }
            (Some(M::RejectsNoJsonrpc), Classified::Request(r)) => {
                let jsonrpc = json::parse(crate::wire::trim_js(&text))
                    .ok()
                    .and_then(|p| p.value.get("jsonrpc").cloned());
                if jsonrpc != Some(json!("2.0")) {
                    let mut out = Vec::new();
                    crate::wire::write::error(
                        &mut out,
                        &r.id,
                        crate::wire::ErrorCode::INTERNAL_ERROR,
                        "invalid request: jsonrpc must be \"2.0\"",
                    );
                    act.answer
                        .push(String::from_utf8_lossy(&out).trim_end().to_owned());
                    return act;
                }
            }
            _ => {}
        }
        act.forward.push(raw.to_vec());
        act
    }

    /// One runtime line (without its `\n`) → the lines the client sees. A mutant that drops,
    /// moves or replays events renumbers `seq` in the order it emits them, as a runtime with that
    /// bug would: it breaks its own rule, not seq contiguity too (a replay holds only the events
    /// that were streamed, while the stored log may hold more: the release skips a seq on resume).
    pub(crate) fn output(&mut self, line: &str) -> Vec<String> {
        let out = self.rewrite(line);
        if !matches!(
            self.kind,
            Some(M::NoReceipt | M::ResponseBeforeReceipt | M::ResumeReplaysHistory | M::NoTurnEnd)
        ) {
            return out;
        }
        out.into_iter().map(|l| self.renumber(l)).collect()
    }

    fn renumber(&mut self, line: String) -> String {
        let Ok(p) = json::parse(&line) else {
            return line;
        };
        let mut v = p.value;
        let Some((sid, _, ev)) = session_event(&v) else {
            return line;
        };
        let Some(seq) = ev.get("seq").and_then(Value::as_u64) else {
            return line;
        };
        let next = self.next_seq.entry(sid.to_owned()).or_insert(seq);
        let n = *next;
        *next += 1;
        if let Some(q) = v.pointer_mut("/params/event/seq") {
            *q = json!(n);
        }
        s(&v)
    }

    fn rewrite(&mut self, line: &str) -> Vec<String> {
        let Ok(parsed) = json::parse(line) else {
            return vec![line.to_owned()];
        };
        let mut v = parsed.value;
        if is_response(&v) {
            if let Ok(id) = serde_json::from_value::<Value>(v["id"].clone()) {
                let id = match id {
                    Value::String(s) => Some(Id::Str(s)),
                    Value::Number(n) => n.as_f64().map(Id::Num),
                    _ => None,
                };
                if id.is_some_and(|id| self.shutdown_ids.contains(&id)) {
                    self.shutdown_answered = true;
                }
            }
        }
        if v.pointer("/result/serverInfo").is_some() {
            self.initialized = true;
        }
        if self.kind == Some(M::WriterDiesOnSurrogate) {
            // Strict UTF-8 output raises on the first lone surrogate, and the writer is gone.
            self.writer_dead |= has_lone_surrogate(&v);
            if self.writer_dead {
                return Vec::new();
            }
        }
        match self.kind {
            Some(M::WrongServerName) => {
                if let Some(name) = v.pointer_mut("/result/serverInfo/name") {
                    *name = json!("my-runtime");
                }
            }
            Some(M::UnknownMethod32000)
                if v.pointer("/error/message")
                    .and_then(Value::as_str)
                    .is_some_and(|m| {
                        m.starts_with("unknown DeepSeek Harness SDK runtime method")
                    }) =>
            {
                v["error"]["code"] = json!(-32000);
            }
            // Only the code changes: the message stays upstream's, which the check accepts with
            // -32601 unless --strict-upstream.
            Some(M::UnknownMethod32601)
                if v.pointer("/error/message")
                    .and_then(Value::as_str)
                    .is_some_and(|m| {
                        m.starts_with("unknown DeepSeek Harness SDK runtime method: ")
                    }) =>
            {
                v["error"]["code"] = json!(-32601);
            }
            Some(M::InvalidParams32602)
                if v.pointer("/error/message")
                    .and_then(Value::as_str)
                    .is_some_and(|m| !m.starts_with(crate::rules::UNKNOWN_METHOD)) =>
            {
                v["error"]["code"] = json!(-32602);
            }
            Some(M::MethodNotFound)
                if v.pointer("/error/message")
                    .and_then(Value::as_str)
                    .is_some_and(|m| m.starts_with(crate::rules::UNKNOWN_METHOD)) =>
            {
                v["error"] = json!({"code": -32601, "message": "Method not found"});
            }
            Some(M::FloatIdsUnanswered)
                if is_response(&v)
                    && v.get("id")
                        .and_then(Value::as_f64)
                        .is_some_and(|f| f.fract() != 0.0) =>
            {
                return Vec::new();
            }
            Some(M::SilentAfterInitialize) => {
                if self.answered_once {
                    return Vec::new();
                }
                self.answered_once = is_response(&v);
            }
            Some(M::NoMessageId) => {
                if let Some(Value::Object(r)) = v.get_mut("result") {
                    r.shift_remove("messageId");
                }
            }
            Some(M::NoTurnEnd) if matches!(session_event(&v), Some((_, "turn/end", _))) => {
                return Vec::new();
            }
            Some(M::MessageIdMismatch) => {
                if let Some(m) = v.pointer_mut("/result/messageId") {
                    *m = json!(uuid::Uuid::new_v4().to_string());
                }
            }
            Some(M::NoReceipt) if is_prompt_receipt(&v) => return Vec::new(),
            Some(M::ResponseBeforeReceipt) => {
                if is_prompt_receipt(&v) {
                    self.held_receipts.push(s(&v));
                    return Vec::new();
                }
                if v.pointer("/result/messageId").is_some() {
                    let mut out = vec![s(&v)];
                    out.append(&mut self.held_receipts);
                    return out;
                }
            }
            Some(M::FrozenTurn) => {
                if let Some(t) = v.pointer_mut("/params/event/data/turn") {
                    *t = json!(1);
                }
            }
            Some(M::SharedTurnCounter) => {
                let sid = v
                    .pointer("/params/sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let is_start = session_event(&v).is_some_and(|(_, t, _)| t == "turn/start");
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
            Some(M::ReplaysOldEvents) => {
                if let Some((sid, _, _)) = session_event(&v) {
                    let sid = sid.to_owned();
                    let line = s(&v);
                    let mut out = Vec::new();
                    if is_prompt_receipt(&v) {
                        out.extend(self.history.get(&sid).cloned().unwrap_or_default());
                    }
                    self.history.entry(sid).or_default().push(line.clone());
                    out.push(line);
                    return out;
                }
            }
            Some(M::IdleBeforeTurnEnd) => {
                if let Some((sid, "turn/end", _)) = session_event(&v) {
                    self.held_turn_end.insert(sid.to_owned(), s(&v));
                    return Vec::new();
                }
                if let Some(sid) = status_idle_session(&v) {
                    let held = self.held_turn_end.remove(sid);
                    return std::iter::once(s(&v)).chain(held).collect();
                }
                if let Some(sid) = v.pointer("/params/sessionId").and_then(Value::as_str) {
                    if let Some(held) = self.held_turn_end.remove(sid) {
                        return vec![held, s(&v)];
                    }
                }
            }
            Some(M::ResumeReplaysHistory) => {
                if let Some((sid, _, _)) = session_event(&v) {
                    history_file::append(sid, &s(&v));
                    self.history.entry(sid.to_owned()).or_default().push(s(&v));
                }
                if is_response(&v) && v.get("result").is_some() {
                    let sid = self.resumes.remove(&json::to_string(&v["id"]));
                    if let Some(sid) = sid {
                        // The stored history; without DSH_HOME, this process's.
                        let mut out = history_file::read(&sid)
                            .unwrap_or_else(|| self.history.get(&sid).cloned().unwrap_or_default());
                        out.push(s(&v));
                        return out;
                    }
                }
            }
            Some(M::NoIdle) if status_idle_session(&v).is_some() => return Vec::new(),
            Some(M::CrlfOutput) => return vec![format!("{}\r", s(&v))],
            Some(M::SpacedOutput) => {
                return vec![s(&v).replacen("\"jsonrpc\":", "\"jsonrpc\": ", 1)]
            }
            Some(M::ReorderedMembers) => {
                let mut v = v;
                reverse_members(&mut v);
                return vec![s(&v)];
            }
            Some(M::NoEventTime) => {
                if let Some(Value::Object(ev)) = v.pointer_mut("/params/event") {
                    ev.shift_remove("time");
                }
            }
            Some(M::OwnModel) => {
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
            Some(M::SeqGap) => {
                if let Some((sid, _, _)) = session_event(&v) {
                    let n = self.event_count.entry(sid.to_owned()).or_default();
                    *n += 1;
                    if *n > 3 {
                        if let Some(seq) = v.pointer_mut("/params/event/seq") {
                            *seq = json!(seq.as_u64().unwrap_or(0) + 1);
                        }
                    }
                }
            }
            Some(M::PrettyPrinted) => {
                return serde_json::to_string_pretty(&v)
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_owned)
                    .collect()
            }
            Some(M::StringIds) if is_response(&v) => {
                if let Some(n) = v.get("id").and_then(Value::as_f64) {
                    v["id"] = json!(json::js_number(n));
                }
            }
            Some(M::DuplicateResponse) if is_response(&v) => return vec![s(&v), s(&v)],
            _ => {}
        }
        vec![s(&v)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECEIPT: &str = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"agent/inbox/spliced","seq":0,"time":1,"data":{"target":"next-turn","start":0,"inserted":[{"content":[],"source":{"kind":"user"},"role":"user","id":"m1"}]}}}}"#;
    const RESPONSE: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"messageId":"m1"}}"#;

    #[test]
    fn every_mutant_changes_something_somewhere() {
        // Each mutant must differ from the identity on at least one probe; otherwise it cannot be caught.
        let probes_out = [
            RECEIPT,
            RESPONSE,
            r#"{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: x"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"SDK server is not initialized"}}"#,
            r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/start","seq":1,"time":1,"data":{"turn":2}}}}"#,
            r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/end","seq":2,"time":1,"data":{"turn":2,"reason":{"kind":"completed"}}}}}"#,
            r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s1","status":"idle"}}"#,
            RECEIPT,
            r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"x","seq":4,"time":1,"data":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":"\ud800","error":{"code":-32603,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"error":{"code":-32603,"message":"m"}}"#,
        ];
        let probes_in: [&[u8]; 10] = [
            br#"{"id":"n","method":"m","params":{"x":NaN}}"#,
            br#"{"id":"\ud800","method":"m"}"#,
            br#"{"id":10,"method":"initialize","params":[]}"#,
            br#"{"id":11,"method":"session/wait","params":{"sessionId":"s"}}"#,
            b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}",
            b"{not json",
            b"{\"id\":null,\"method\":\"m\"}",
            b"[{\"id\":1,\"method\":\"m\"}]",
            b"{\"id\":1,\"method\":\"a\"}\r{\"id\":2,\"method\":\"b\"}",
            "\u{feff}{\"id\":1,\"method\":\"m\"}".as_bytes(),
        ];
        for m in super::super::ALL {
            let mut r = Rewriter::new(m.kind);
            let mut id = Rewriter::identity();
            let mut differs = !r.startup().is_empty()
                || r.ignores_eof()
                || r.drops_at_eof().is_some()
                || r.tail(b"x") != id.tail(b"x");
            r.input(b"{\"id\":9,\"method\":\"shutdown\"}");
            id.input(b"{\"id\":9,\"method\":\"shutdown\"}");
            r.output(RECEIPT);
            id.output(RECEIPT);
            let resume = br#"{"id":5,"method":"session/resume","params":{"sessionId":"s1"}}"#;
            differs |= r.input(resume) != id.input(resume);
            let resumed = r#"{"jsonrpc":"2.0","id":5,"result":{}}"#;
            differs |= r.output(resumed) != id.output(resumed);
            let wd = br#"{"id":6,"method":"session/working-directory/set","params":{"sessionId":"s","path":"x"}}"#;
            differs |= r.input(wd) != id.input(wd);
            differs |= r.input(b"{\"id\":7,\"method\":\"constructor\"}")
                != id.input(b"{\"id\":7,\"method\":\"constructor\"}");
            for w in [&mut r, &mut id] {
                w.output(probes_out[2]);
            }
            differs |= r.input(b"{\"id\":8,\"method\":\"initialize\"}")
                != id.input(b"{\"id\":8,\"method\":\"initialize\"}");
            for p in probes_in {
                differs |= r.input(p) != id.input(p);
            }
            for p in probes_out {
                differs |= r.output(p) != id.output(p);
            }
            r.output(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
            differs |= r.exit_code(0) != Some(0);
            assert!(differs, "mutant {} is the identity on every probe", m.name);
        }
    }

    #[test]
    fn the_identity_rewriter_passes_frames_through_unchanged() {
        let mut id = Rewriter::identity();
        assert_eq!(id.output(RECEIPT), vec![RECEIPT.to_owned()]);
        assert_eq!(id.input(b"{not json").forward, vec![b"{not json".to_vec()]);
    }

    #[test]
    fn response_before_receipt_moves_the_receipt_after_the_response() {
        let mut r = Rewriter::new(M::ResponseBeforeReceipt);
        assert!(r.output(RECEIPT).is_empty());
        assert_eq!(
            r.output(RESPONSE),
            vec![RESPONSE.to_owned(), RECEIPT.to_owned()]
        );
    }

    #[test]
    fn non_json_literals_served_reads_them_as_null_outside_strings() {
        let mut r = Rewriter::new(M::NonJsonLiteralsServed);
        let line = br#"{"id":"n","method":"m","params":{"x":NaN,"y":[Infinity,-Infinity],"s":"NaN \" Infinity"}}"#;
        assert_eq!(
            r.input(line).forward,
            vec![br#"{"id":"n","method":"m","params":{"x":null,"y":[null,null],"s":"NaN \" Infinity"}}"#.to_vec()]
        );
        // Other malformed lines, and valid ones, pass as they are.
        assert_eq!(r.input(b"{not json").forward, vec![b"{not json".to_vec()]);
        let ok = br#"{"id":1,"method":"NaN"}"#;
        assert_eq!(r.input(ok).forward, vec![ok.to_vec()]);
    }

    #[test]
    fn surrogates_replaced_decodes_lone_surrogates_as_u_fffd() {
        let mut r = Rewriter::new(M::SurrogatesReplaced);
        let line = br#"{"id":"\ud800","method":"p/\udc00","params":{"\udbff":"\ud83d\ude00"}}"#;
        assert_eq!(
            r.input(line).forward,
            vec![r#"{"id":"�","method":"p/�","params":{"�":"😀"}}"#.as_bytes().to_vec()]
        );
        let pair = br#"{"id":"\ud83d\ude00","method":"m"}"#;
        assert_eq!(r.input(pair).forward, vec![pair.to_vec()]);
    }

    #[test]
    fn writer_dies_on_surrogate_writes_nothing_from_the_first_lone_surrogate_on() {
        let mut r = Rewriter::new(M::WriterDiesOnSurrogate);
        assert_eq!(r.output(RESPONSE), vec![RESPONSE.to_owned()]);
        let pair = r#"{"jsonrpc":"2.0","id":"😀","result":{}}"#;
        assert_eq!(r.output(pair), vec![pair.to_owned()]);
        let lone = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m: \udfff"}}"#;
        assert!(r.output(lone).is_empty());
        assert!(r.output(RESPONSE).is_empty());
    }
}
