//! The frame rewriting of each mutant: pure, line in → lines out, so it is testable without processes.
//! [`Rewriter`] keeps what the mutants remember and dispatches each line to its mutant's family:
//! client lines in [`input`]; runtime frames in [`answers`] (responses), [`events`] (session
//! event streams) and [`encoding`] (how frames are written).

mod answers;
mod creation;
mod encoding;
mod events;
mod input;
mod turns;

use super::frames::{has_lone_surrogate, is_response, s, session_event};
use super::MutantKind::{self, self as M};
use crate::wire::{classify, json, Classified, Id};
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
    /// The first session that streamed an event (`first-session-only`).
    first_session: Option<String>,
    /// Whether each session's last status was idle (`wait-only-at-next-idle`,
    /// `eof-waits-for-turns`).
    idle: HashMap<String, bool>,
    /// `session/wait` requests read while their session was idle: id echo → session id.
    idle_waits: HashMap<String, String>,
    /// Their answers, held until the session's next idle status.
    held_waits: HashMap<String, Vec<String>>,
    /// A frame has been written after a BOM (`bom-before-first-frame`).
    bom_written: bool,
    /// Each session's last assistant/message with no content, written before its turn/end
    /// (`trailing-empty-message`).
    closing_messages: HashMap<String, String>,
    /// Each session's frames from its turn/end on, until its `session.finished`
    /// (`finished-before-turn-end`).
    held_until_finished: HashMap<String, Vec<String>>,
    /// Sessions being created, and their creation events (`creation-not-shared`).
    creations: creation::Creations,
    /// Each session's turn in progress (`shutdown-ends-turns`).
    turns: turns::Turns,
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
            first_session: None,
            idle: HashMap::new(),
            idle_waits: HashMap::new(),
            held_waits: HashMap::new(),
            bom_written: false,
            closing_messages: HashMap::new(),
            held_until_finished: HashMap::new(),
            creations: creation::Creations::default(),
            turns: turns::Turns::default(),
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

    /// Whether the client's EOF reaches the runtime only once every session is idle
    /// ([`super::MutantKind::EofWaitsForTurns`]).
    pub(crate) fn waits_for_turns_at_eof(&self) -> bool {
        self.kind == Some(M::EofWaitsForTurns)
    }

    /// Whether a session's last status was `running`.
    pub(crate) fn busy(&self) -> bool {
        self.idle.values().any(|idle| !idle)
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
        let text = String::from_utf8_lossy(raw);
        let class = classify(crate::wire::trim_js(&text));
        if let Classified::Request(r) = &class {
            if r.method == "shutdown" {
                self.shutdown_ids.insert(r.id.clone());
                if self.kind == Some(M::ShutdownEndsTurns) {
                    return InputAction {
                        forward: vec![raw.to_vec()],
                        answer: self.turns.wind_down(),
                        ..InputAction::default()
                    };
                }
            }
            if let Some(sid) = r.params.get("sessionId").and_then(Value::as_str) {
                if r.method == "session/resume" {
                    self.resumes.insert(r.id.to_json(), sid.to_owned());
                }
                if r.method == "session/prompt" {
                    self.creations.prompt(r.id.to_json(), sid);
                }
                let idle = self.idle.get(sid) == Some(&true);
                if r.method == "session/wait" && idle {
                    self.idle_waits.insert(r.id.to_json(), sid.to_owned());
                }
            }
        }
        let rewritten = self.kind.and_then(|kind| {
            input::framing(kind, &class, raw, &text)
                .or_else(|| input::methods(kind, &class, &text, self.initialized))
        });
        rewritten.unwrap_or_else(|| InputAction {
            forward: vec![raw.to_vec()],
            ..InputAction::default()
        })
    }

    /// One runtime line (without its `\n`) → the lines the client sees. A mutant that drops,
    /// moves or replays events renumbers `seq` in the order it emits them, as a runtime with that
    /// bug would: it breaks its own rule, not seq contiguity too (a replay holds only the events
    /// that were streamed, while the stored log may hold more: the release skips a seq on resume).
    pub(crate) fn output(&mut self, line: &str) -> Vec<String> {
        let mut out = self.rewrite(line);
        if self.kind == Some(M::BomBeforeFirstFrame) && !self.bom_written {
            if let Some(first) = out.first_mut() {
                first.insert(0, '\u{feff}');
                self.bom_written = true;
            }
        }
        if !matches!(
            self.kind,
            Some(
                M::NoReceipt
                    | M::ResponseBeforeReceipt
                    | M::ResumeReplaysHistory
                    | M::NoTurnEnd
                    | M::TrailingEmptyMessage
            )
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

    /// Runtime frame `line` as the mutant writes it.
    fn rewrite(&mut self, line: &str) -> Vec<String> {
        let Ok(parsed) = json::parse(line) else {
            return vec![line.to_owned()];
        };
        let mut v = parsed.value;
        self.track(&v);
        if self.kind == Some(M::WriterDiesOnSurrogate) {
            // Strict UTF-8 output raises on the first lone surrogate, and the writer is gone.
            self.writer_dead |= has_lone_surrogate(&v);
            if self.writer_dead {
                return Vec::new();
            }
        }
        let Some(kind) = self.kind else {
            return vec![s(&v)];
        };
        if let Some(lines) = self.answers(kind, &mut v) {
            return lines;
        }
        if let Some(lines) = self.events(kind, &mut v) {
            return lines;
        }
        encoding::encoded(kind, &mut v).unwrap_or_else(|| vec![s(&v)])
    }

    /// What a runtime frame tells of the session: a shutdown answered, an initialize that
    /// succeeded, a session's status.
    fn track(&mut self, v: &Value) {
        self.turns.track(v);
        if is_response(v) {
            self.creations.answered(&creation::id_echo(v));
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
        if v["method"] == "session.status" {
            if let Some(sid) = v.pointer("/params/sessionId").and_then(Value::as_str) {
                self.idle
                    .insert(sid.to_owned(), v["params"]["status"] == "idle");
            }
        }
    }
}

#[cfg(test)]
mod tests;
