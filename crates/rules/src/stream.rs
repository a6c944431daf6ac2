//! The checker's state: what it reads ([`Checker::sent`]), the requests still pending, and the
//! entry points for what the runtime writes ([`Checker::received`]). Each output line is judged by
//! the private parts: `framing` (one compact JSON-RPC object per line, docs/CONTRACT.md#s2.4),
//! `response` (answers and their ids, errors, result shapes; #s2, #s3) and `notify`
//! (notifications; #s4 to #s6).

use super::sink::Sink;
use super::{CheckId, Judged, Profile, Sent, Violation};
use dsh_protocol::wire::json::{JsonView, Tape};
use dsh_protocol::wire::output::Output;
use dsh_protocol::wire::{envelope, Envelope};
use std::collections::{HashMap, HashSet};

/// Requests of one id echo not yet answered. Error answers to known methods say nothing about
/// which of several same-id requests they answer, so they stay "floating" and are assigned only
/// when a question needs it (preferring requests that must be answered at once).
#[derive(Debug, Default)]
pub(super) struct Open {
    pub(super) methods: Vec<String>,
    pub(super) floating: usize,
    /// The floating answers' `(code, message)`: the same error again is a second answer.
    pub(super) floated: Vec<(i64, String)>,
}

/// Per-session state of the notification rules.
#[derive(Debug, Default)]
pub(super) struct Track {
    /// A subagent child: its creation events are not streamed, so its first seq is free.
    pub child: bool,
    pub next_seq: Option<u64>,
    pub last_turn: Option<u64>,
    pub open_turn: Option<u64>,
    pub running: Option<bool>,
    pub last_time: Option<f64>,
}

/// The rule checker for one conversation.
#[derive(Debug)]
pub struct Checker {
    pub(super) profile: Profile,
    pub(super) pending: HashMap<String, Open>,
    pub(super) sessions: HashMap<String, Track>,
    pub(super) receipts: HashSet<String>,
    /// Message ids of prompt responses written before any receipt carrying them: a receipt that
    /// comes later breaks `receipt.precedes-response` (one that never comes is
    /// `receipt.id-matches-inserted`'s, so it is no finding here).
    pub(super) early_responses: HashSet<String>,
    /// Sessions named by a `session/resume` read: the only requests that attach a stored session
    /// (§3.3), so any other session's log starts in this conversation.
    pub(super) resumed: HashSet<String>,
    pub(super) lines: usize,
    /// The rules of the lines read that must get no answer, oldest first, not yet "answered":
    /// an answer to no request is blamed on the oldest (a notification answered is
    /// `frame.notifications-ignored`, not a duplicate), as `check`'s frame checks blame it.
    pub(super) ignored: Vec<(usize, CheckId)>,
    /// How many lines were read, and the send index of each request id echo's requests.
    pub(super) sent_lines: usize,
    pub(super) sent_at: HashMap<String, std::collections::VecDeque<usize>>,
    /// The send index of every request not answered yet, and whether its method is deferred.
    pub(super) waiting: std::collections::BTreeMap<usize, bool>,
    /// The latest send index of a request answered so far.
    pub(super) last_answered: usize,
    /// Every request id echo read so far (a second answer to one of them is no silence rule's).
    pub(super) requested: HashSet<String>,
    /// Every response line written so far.
    pub(super) responses_seen: HashSet<String>,
    /// The line [`Checker::received_text`] judged last, its buffers reused for the next.
    scratch: Option<Output>,
    /// The tape of the line [`Checker::sent`] read last, its buffers reused for the next.
    input: Tape,
}

/// The scratch line of [`Checker::received_text`] (and the tape of [`Checker::sent`]) is dropped
/// rather than kept past this weight.
const SCRATCH_KEPT: usize = 1 << 20;

/// The rule that says a line the runtime read gets no answer, for lines that are not requests.
fn silence_rule(e: &Envelope<'_>, line: &str) -> Option<CheckId> {
    use dsh_protocol::wire::{Ignored, Kind};
    Some(match e {
        Envelope::Request { .. } => return None,
        Envelope::Notification {
            id_kind: Kind::Absent,
        } => CheckId::FrameNotificationsIgnored,
        Envelope::Notification { .. } => CheckId::FrameIdInvalidIsNotification,
        Envelope::Response { method_kind } if *method_kind != Kind::Absent => {
            CheckId::FrameNonStringMethodIgnored
        }
        Envelope::Response { .. } => CheckId::FrameUnknownResponseIgnored,
        Envelope::Ignored(Ignored::Malformed(_)) => CheckId::FrameMalformedIgnored,
        Envelope::Ignored(Ignored::NotAnObject(_)) => CheckId::FrameNonObjectIgnored,
        Envelope::Ignored(Ignored::Batch { .. }) => CheckId::FrameBatchIgnored,
        Envelope::Ignored(Ignored::NoIdNoMethod { .. }) if line.contains("\"id\"") => {
            CheckId::FrameIdInvalidIsNotification
        }
        Envelope::Ignored(_) => return None,
    })
}

impl Checker {
    /// A checker with no history.
    pub fn new(profile: Profile) -> Checker {
        Checker {
            profile,
            pending: HashMap::new(),
            sessions: HashMap::new(),
            receipts: HashSet::new(),
            early_responses: HashSet::new(),
            resumed: HashSet::new(),
            ignored: Vec::new(),
            sent_lines: 0,
            sent_at: HashMap::new(),
            waiting: Default::default(),
            last_answered: 0,
            requested: HashSet::new(),
            responses_seen: HashSet::new(),
            scratch: None,
            input: Tape::default(),
            lines: 0,
        }
    }

    /// The profile in force.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Records a (decoded, trimmed) line the runtime read.
    pub fn sent(&mut self, line: &str) -> Sent {
        // Classified on the checker's own tape, as `classify` classifies it (`wire::envelope`,
        // compiled here: see the wire layer's note on `#[inline]`).
        let mut tape = std::mem::take(&mut self.input);
        let sent = self.record(&envelope(&mut tape, line), line);
        if tape.weight() <= SCRATCH_KEPT {
            self.input = tape;
        }
        sent
    }

    /// [`Checker::sent`] of a classified line.
    fn record(&mut self, e: &Envelope<'_>, line: &str) -> Sent {
        self.sent_lines += 1;
        if let Some(rule) = silence_rule(e, line) {
            self.ignored.push((self.sent_lines, rule));
        }
        let Envelope::Request { id, method, params } = e else {
            return Sent::Nothing;
        };
        let key = id.to_json_inline();
        self.requested.insert(key.clone());
        self.sent_at
            .entry(key.clone())
            .or_default()
            .push_back(self.sent_lines);
        let deferred = self.profile.deferred.iter().any(|m| m == method);
        self.waiting.insert(self.sent_lines, deferred);
        self.pending
            .entry(key.clone())
            .or_default()
            .methods
            .push((*method).to_owned());
        let session = params
            .and_then(|p| p.get("sessionId"))
            .and_then(JsonView::as_str)
            .map(str::to_owned);
        if let (Some(sid), "session/resume") = (&session, *method) {
            self.resumed.insert(sid.clone());
        }
        Sent::Request {
            key,
            session,
            method: (*method).to_owned(),
        }
    }

    /// Requests read but not answered yet, as `(id echo, method)`. Floating error answers are
    /// credited to requests that are not deferred first.
    pub fn pending(&self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        for (k, open) in &self.pending {
            let mut methods = open.methods.clone();
            for _ in 0..open.floating {
                let i = methods
                    .iter()
                    .position(|m| self.may_fail(m) && !self.profile.deferred.contains(m))
                    .or_else(|| methods.iter().position(|m| self.may_fail(m)));
                if let Some(i) = i {
                    methods.remove(i);
                }
            }
            v.extend(methods.into_iter().map(|m| (k.clone(), m)));
        }
        v.sort();
        v
    }

    /// Whether a `method` request under id echo `key` may still be waiting for its answer: one is
    /// open and the error answers that could be its (they echo an id several requests share) do
    /// not cover every open request. [`Checker::pending`] credits such an error to one request of
    /// the id; a driver waiting for one method's answer must not take it for that method's.
    pub fn may_await(&self, key: &str, method: &str) -> bool {
        self.pending
            .get(key)
            .is_some_and(|o| o.methods.iter().any(|m| m == method) && o.floating < o.methods.len())
    }

    /// `response.exactly-once` for every request still unanswered: call it when the runtime has
    /// had its chance to answer (the driver knows when that is).
    pub fn unanswered(&self) -> Vec<Violation> {
        self.pending()
            .into_iter()
            .map(|(k, m)| Violation {
                rule: CheckId::ResponseExactlyOnce,
                stdout_line: None,
                message: format!("{m} request {k} was never answered"),
                kind: super::ViolationKind::Unanswered,
                difference: None,
            })
            .collect()
    }

    /// Sessions whose last status was `running`, sorted.
    pub fn busy_sessions(&self) -> Vec<String> {
        let mut v: Vec<String> = (self.sessions.iter())
            .filter(|(_, t)| t.running == Some(true))
            .map(|(s, _)| s.clone())
            .collect();
        v.sort();
        v
    }

    /// Judges one line the runtime wrote, parsed once by the reader ([`Output`]).
    pub fn received(&mut self, out: &Output) -> Judged {
        self.lines = self.lines.max(out.line);
        let mut sink = Sink {
            line: Some(out.line),
            list: Vec::new(),
        };
        let frame = self.judge(out, &mut sink);
        Judged {
            frame,
            violations: sink.list,
        }
    }

    /// Judges one line given as text (without its `\n`): parses it into an [`Output`] numbered
    /// after the lines judged so far, for drivers that hold text (the fuzz targets, tests).
    pub fn received_text(&mut self, line: &str) -> Judged {
        let n = self.lines + 1;
        // Parsed into the last line's buffers: frames are checked by the thousand.
        let out = match self.scratch.take() {
            Some(mut out) => {
                out.reparse(n, line);
                out
            }
            None => Output::parse(n, line.to_owned()),
        };
        let judged = self.received(&out);
        if out.weight() <= SCRATCH_KEPT {
            self.scratch = Some(out);
        }
        judged
    }

    pub(super) fn known(&self, m: &str) -> bool {
        self.profile.methods.iter().any(|k| k == m)
    }

    pub(super) fn may_fail(&self, m: &str) -> bool {
        self.known(m) && !self.profile.never_fail.iter().any(|k| k == m)
    }
}
