//! The stream rule engine: contract rules judged frame by frame over one client↔runtime
//! conversation, each violation named by the [`CheckId`] it breaks.
//!
//! Feed a [`Checker`] every line the runtime *read* ([`Checker::sent`]) and every line it *wrote*
//! ([`Checker::received`]). It never stops at a violation: each line gives its frame (when the line
//! is one) and every [`Violation`] it shows, and the checker's state stays usable, so one broken
//! rule does not hide another. What is checked ([`stream`] and its private parts: `framing`,
//! `response`, `shape` and `notify`):
//! - every output line is one JSON-RPC 2.0 object frame (`stdout.frames-only`), written exactly as
//!   `JSON.stringify` writes it with upstream's member order (`stdout.compact`), ending in `\n`
//!   alone (`stdout.lf-only`) (docs/CONTRACT.md#s2.4);
//! - a response answers a request that was read and not yet answered (`response.exactly-once`),
//!   echoing its id's type (`response.id-type-preserved`); errors are `{code, message}` with code
//!   -32603 (`error.no-reserved-codes`), unknown methods get -32603 (or -32601 where allowed) and
//!   upstream's message naming them (`error.unknown-method`); results have the method's shape
//!   (§3: the method's own check), a prompt's `{messageId}` follows its receipt
//!   (`receipt.precedes-response`: judged when a receipt comes after its response; one that never
//!   comes is `receipt.id-matches-inserted`'s);
//! - notifications are the four (five in legacy) the runtime sends, well-formed; `seq` is
//!   contiguous per session (`session.seq-contiguous`; from 0, except a subagent child, whose
//!   creation events the real runtime does not stream, and, when sessions persist, one the
//!   conversation resumed), every event carries a `time` in epoch milliseconds
//!   (`event.time`), turns count up by one per session (`turn.counts-per-session`) and
//!   `session.status` alternates starting with `running` (`status.idle-after-turn`) (§4–§6).
//!
//! Nothing here knows which runtime produced the lines: the suite (`dsh_conformance::suite`), the
//! in-memory fuzz target (`runtime_session` in the `dsh-conformance-fuzzing` crate) and the
//! black-box fuzzer (`dsh_conformance::blackbox`) share it.
//!
//! This crate is `dsh-rules`, on `dsh-protocol` only (its wire layer, editions and check ids), so
//! the compiler keeps it below the runtime and the suite; `dsh-conformance` re-exports it as
//! `dsh_conformance::rules`.

pub mod conversation;
#[cfg(test)]
mod conversation_tests;
pub mod evidence;
mod framing;
mod notify;
pub mod replay;
mod response;
mod shape;
mod sink;
pub mod stream;
#[cfg(test)]
mod tests;
pub mod transcript;

pub use conversation::{Conversation, Unsettled, Unsolicited};
pub use stream::Checker;

use dsh_protocol::edition::Edition;
use std::fmt;

/// The message every runtime of this protocol gives unknown methods (docs/CONTRACT.md#s2.3, #s9).
pub const UNKNOWN_METHOD: &str = "unknown DeepSeek Harness SDK runtime method: ";

pub use dsh_protocol::check::CheckId;

/// One broken rule, seen in one output line (or at the end of the conversation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule broken.
    pub rule: CheckId,
    /// The 1-based number of the stdout line that showed it (`None`: judged at the end).
    pub stdout_line: Option<usize>,
    /// What exactly was seen.
    pub message: String,
    /// What kind of violation it is, where a consumer needs more than its rule.
    pub kind: ViolationKind,
    /// Where the line differs from what the rule wants, when one part of it does.
    pub difference: Option<evidence::Difference>,
}

/// What kind of violation a [`Violation`] is, for consumers that classify findings beyond their
/// rule (the black-box fuzzer tells a repeated answer from other breaks of the same rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationKind {
    /// A response to an id no unanswered request carries (a second answer, or an answer to a line
    /// that must get none).
    Unrequested,
    /// A request that was never answered (judged at the end).
    Unanswered,
    /// Any other.
    Other,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stdout_line {
            Some(n) => write!(f, "{}: {} (stdout line {n})", self.rule, self.message),
            None => write!(f, "{}: {}", self.rule, self.message),
        }
    }
}

/// What the checker is told about the runtime under test.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Methods that answer with a result (anything else must be an error).
    pub methods: Vec<String>,
    /// Whether `session/prompt` answers `{accepted: true}` (legacy) instead of `{messageId}`.
    pub legacy_prompt: bool,
    /// Whether `-32601` (with upstream's message) is acceptable for unknown methods.
    pub allow_method_not_found: bool,
    /// Whether object members must come in upstream's order (`--strict-upstream`; the reference
    /// runtime keeps it). JSON objects are unordered to every client, so otherwise another order
    /// is no finding.
    pub member_order: bool,
    /// Whether `session.finished` may be sent (legacy).
    pub session_finished: bool,
    /// Whether sessions are new (seq from 0, turns from 1); false once persistence can resume them.
    pub fresh_sessions: bool,
    /// Methods answered later rather than at once (`session/wait`; legacy `session/prompt`).
    pub deferred: Vec<String>,
    /// Methods that never answer with an error (`shutdown` is memoized and always `{}`, §3.6).
    pub never_fail: Vec<String>,
}

impl Profile {
    /// The profile of a runtime of `edition`; `persistent` when sessions may be resumed (seq
    /// and turns then need not start at 0 and 1).
    pub fn for_edition(edition: Edition, persistent: bool) -> Profile {
        let mut methods = vec!["initialize", "session/prompt", "shutdown"];
        if edition == Edition::Current {
            methods.extend([
                "session/resume",
                "session/wait",
                "session/working-directory/get",
                "session/working-directory/set",
            ]);
        }
        Profile {
            methods: methods.into_iter().map(String::from).collect(),
            legacy_prompt: edition == Edition::Legacy,
            allow_method_not_found: false,
            member_order: true,
            session_finished: edition == Edition::Legacy,
            fresh_sessions: !persistent,
            deferred: match edition {
                Edition::Current => vec!["session/wait".into()],
                Edition::Legacy => vec!["session/prompt".into()],
                Edition::Aug2026 => Vec::new(),
            },
            never_fail: vec!["shutdown".into()],
        }
    }
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
        /// The string `sessionId` of its params, if it names one.
        session: Option<String>,
    },
    /// Anything else: nothing may be written for it.
    Nothing,
}

/// What one output frame was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// A response, credited to the pending request with this id echo (after a changed id type,
    /// the request's echo; after an unsolicited answer, its own).
    Response {
        /// Id echo.
        key: String,
        /// Method of the request it answered; `None` for an error that may answer any of the
        /// known-method requests with this id, or an answer to no request.
        method: Option<String>,
        /// A result (not an error).
        ok: bool,
    },
    /// A notification of this method.
    Notification(String),
}

/// The verdict on one output line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Judged {
    /// The frame, when the line is a response or notification at all.
    pub frame: Option<Received>,
    /// Every rule the line breaks.
    pub violations: Vec<Violation>,
}

impl Judged {
    /// The frame if the line broke nothing, else the first violation (with the line), for drivers
    /// that stop at the first broken rule.
    pub fn into_result(self, line: &str) -> Result<Received, String> {
        match (self.violations.into_iter().next(), self.frame) {
            (None, Some(f)) => Ok(f),
            (Some(v), _) => Err(format!("{v}\n  output line: {}", clip(line))),
            (None, None) => Err(format!("not a frame\n  output line: {}", clip(line))),
        }
    }
}

/// At most 400 bytes of `s`, on a character boundary: how a violation quotes a line (the black-box
/// fuzzer quotes lines the same way).
pub fn clip(s: &str) -> String {
    if s.len() <= 400 {
        return s.to_owned();
    }
    let end = (0..=400)
        .rev()
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &s[..end], s.len())
}
