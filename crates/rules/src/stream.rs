//! The checker: framing and responses (docs/CONTRACT.md#s2, #s3); notifications are in `notify`.

use super::{clip, shape, CheckId, Judged, Profile, Received, Sent, Violation, UNKNOWN_METHOD};
use dsh_protocol::wire::json::{self, JsonKind, JsonView, TapeRef};
use dsh_protocol::wire::output::{Frame, NotAFrame, Output};
use dsh_protocol::wire::{classify, Classified};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Error codes JSON-RPC reserves that the runtime never uses (docs/CONTRACT.md#s2.3).
const RESERVED: [i64; 3] = [-32700, -32600, -32602];

/// Requests of one id echo not yet answered. Error answers to known methods say nothing about
/// which of several same-id requests they answer, so they stay "floating" and are assigned only
/// when a question needs it (preferring requests that must be answered at once).
#[derive(Debug, Default)]
struct Open {
    methods: Vec<String>,
    floating: usize,
    /// The floating answers' `(code, message)`: the same error again is a second answer.
    floated: Vec<(i64, String)>,
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

/// Collects the violations of one line.
pub(super) struct Sink {
    line: Option<usize>,
    pub list: Vec<Violation>,
}

impl Sink {
    /// Records a violation of `rule`.
    pub fn add(&mut self, rule: CheckId, message: impl Into<String>) {
        self.list.push(Violation {
            rule,
            stdout_line: self.line,
            message: message.into(),
        });
    }
}

/// The rule checker for one conversation.
#[derive(Debug)]
pub struct Checker {
    pub(super) profile: Profile,
    pending: HashMap<String, Open>,
    pub(super) sessions: HashMap<String, Track>,
    pub(super) receipts: HashSet<String>,
    lines: usize,
    /// The rules of the lines read that must get no answer, oldest first, not yet "answered":
    /// an answer to no request is blamed on the oldest (a notification answered is
    /// `frame.notifications-ignored`, not a duplicate), as `check`'s frame checks blame it.
    ignored: Vec<(usize, CheckId)>,
    /// How many lines were read, and the send index of each request id echo's requests.
    sent_lines: usize,
    sent_at: HashMap<String, std::collections::VecDeque<usize>>,
    /// The latest send index of a request answered so far.
    last_answered: usize,
    /// Every request id echo read so far (a second answer to one of them is no silence rule's).
    requested: HashSet<String>,
    /// Every response line written so far.
    responses_seen: HashSet<String>,
    /// Scratch for the compactness rule: the line as `JSON.stringify` writes it.
    written: Vec<u8>,
}

/// The scratch buffer of the compactness rule is dropped rather than kept past this capacity.
const WRITTEN_KEPT: usize = 1 << 20;

/// The byte offset of the first whitespace between two tokens of a JSON text, if any (whitespace
/// inside strings is text).
fn whitespace_between_tokens(line: &str) -> Option<usize> {
    let (mut in_str, mut esc) = (false, false);
    for (i, b) in line.bytes().enumerate() {
        match (in_str, esc, b) {
            (true, true, _) => esc = false,
            (true, false, b'\\') => esc = true,
            (true, false, b'"') | (false, _, b'"') => in_str = !in_str,
            (false, _, b' ' | b'\t' | b'\n' | b'\r') => return Some(i),
            _ => {}
        }
    }
    None
}

/// The requests an answer may be for, as a report names them: `the "initialize" request`, or
/// `one of the ["a", "b"] requests` when several pending requests share its id.
fn requests_of(methods: &[String]) -> String {
    match methods {
        [m] => format!("the {m:?} request"),
        ms => format!("one of the {ms:?} requests"),
    }
}

/// The rule that says a line the runtime read gets no answer, for lines that are not requests.
fn silence_rule(c: &Classified, line: &str) -> Option<CheckId> {
    use dsh_protocol::wire::{Ignored, Kind};
    Some(match c {
        Classified::Request(_) => return None,
        Classified::Notification(n) if n.id_kind == Kind::Absent => {
            CheckId::FrameNotificationsIgnored
        }
        Classified::Notification(_) => CheckId::FrameIdInvalidIsNotification,
        Classified::Response(r) if r.method_kind != Kind::Absent => {
            CheckId::FrameNonStringMethodIgnored
        }
        Classified::Response(_) => CheckId::FrameUnknownResponseIgnored,
        Classified::Ignored(Ignored::Malformed(_)) => CheckId::FrameMalformedIgnored,
        Classified::Ignored(Ignored::NotAnObject(_)) => CheckId::FrameNonObjectIgnored,
        Classified::Ignored(Ignored::Batch { .. }) => CheckId::FrameBatchIgnored,
        Classified::Ignored(Ignored::NoIdNoMethod { .. }) if line.contains("\"id\"") => {
            CheckId::FrameIdInvalidIsNotification
        }
        Classified::Ignored(_) => return None,
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
            ignored: Vec::new(),
            sent_lines: 0,
            sent_at: HashMap::new(),
            last_answered: 0,
            requested: HashSet::new(),
            responses_seen: HashSet::new(),
            written: Vec::new(),
            lines: 0,
        }
    }

    /// The profile in force.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Records a (decoded, trimmed) line the runtime read.
    pub fn sent(&mut self, line: &str) -> Sent {
        let c = classify(line);
        self.sent_lines += 1;
        if let Some(rule) = silence_rule(&c, line) {
            self.ignored.push((self.sent_lines, rule));
        }
        match c {
            Classified::Request(r) => {
                let key = r.id.to_json();
                self.requested.insert(key.clone());
                self.sent_at
                    .entry(key.clone())
                    .or_default()
                    .push_back(self.sent_lines);
                self.pending
                    .entry(key.clone())
                    .or_default()
                    .methods
                    .push(r.method.clone());
                Sent::Request {
                    key,
                    session: r
                        .params
                        .get("sessionId")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    method: r.method,
                }
            }
            _ => Sent::Nothing,
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
            })
            .collect()
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
        let out = Output::parse(self.lines + 1, line.to_owned());
        self.received(&out)
    }

    fn known(&self, m: &str) -> bool {
        self.profile.methods.iter().any(|k| k == m)
    }

    fn may_fail(&self, m: &str) -> bool {
        self.known(m) && !self.profile.never_fail.iter().any(|k| k == m)
    }

    fn judge(&mut self, out: &Output, sink: &mut Sink) -> Option<Received> {
        if out.crlf {
            sink.add(CheckId::StdoutLfOnly, "the line ends in \\r\\n");
        }
        let line = out.text();
        let frame = match (out.json(), out.frame()) {
            (Some(v), _) => v,
            (None, Frame::NotAFrame(NotAFrame::NotJson(e))) => {
                sink.add(
                    CheckId::StdoutFramesOnly,
                    format!("output is not JSON: {e}"),
                );
                return None;
            }
            (None, f) => {
                let why = match f {
                    Frame::NotAFrame(w) => w.to_string(),
                    _ => "not JSON".to_owned(),
                };
                sink.add(CheckId::StdoutFramesOnly, format!("output is {why}"));
                return None;
            }
        };
        // Clients see values, not bytes: `stdout.compact` is whitespace between tokens, and
        // upstream's exact bytes (escapes, number forms, member order) only under
        // `--strict-upstream`; how an id echoes is the id rule's (`frame.id-number-echo`).
        if self.profile.member_order {
            // Written into a buffer kept between lines: frames are checked by the thousand.
            let mut text = std::mem::take(&mut self.written);
            text.clear();
            frame.write(&mut text);
            if text != line.as_bytes() {
                sink.add(
                    CheckId::StdoutCompact,
                    format!(
                        "output is not written as JSON.stringify writes it (expected {})",
                        clip(&String::from_utf8_lossy(&text))
                    ),
                );
            }
            if text.capacity() <= WRITTEN_KEPT {
                self.written = text;
            }
        } else if let Some(at) = whitespace_between_tokens(line) {
            sink.add(
                CheckId::StdoutCompact,
                format!(
                    "output has whitespace between tokens at byte {at}: JSON.stringify writes none"
                ),
            );
        }
        if frame.kind() != JsonKind::Object {
            sink.add(CheckId::StdoutFramesOnly, "output is not a JSON object");
            return None;
        }
        if frame.get("jsonrpc").and_then(JsonView::as_str) != Some("2.0") {
            sink.add(
                CheckId::StdoutFramesOnly,
                "output lacks \"jsonrpc\":\"2.0\"",
            );
        }
        let keys: Vec<&str> = frame.members().map(|(k, _)| k).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        let (order, response) = match sorted.as_slice() {
            ["id", "jsonrpc", "result"] => (["jsonrpc", "id", "result"], true),
            ["error", "id", "jsonrpc"] => (["jsonrpc", "id", "error"], true),
            ["jsonrpc", "method", "params"] => (["jsonrpc", "method", "params"], false),
            _ => {
                sink.add(
                    CheckId::StdoutFramesOnly,
                    format!("output members are {keys:?}, neither a response nor a notification"),
                );
                return None;
            }
        };
        if keys != order && self.profile.member_order {
            sink.add(
                CheckId::StdoutCompact,
                format!("output members are in the order {keys:?}, upstream writes {order:?}"),
            );
        }
        if response {
            // A response identical to an earlier one is a repeat: never an answer to a line that
            // must get none, whatever its id.
            let repeat = !self.responses_seen.insert(line.to_owned());
            Some(self.response(frame, repeat, sink))
        } else {
            self.notification(frame, sink)
        }
    }

    /// The pending id echo a response id answers after changing its type (`"7"` for 7, `7` for
    /// `"7"`), if any.
    fn retyped(&self, id: &Value) -> Option<String> {
        let alt = match id {
            Value::String(s) => json::parse(s)
                .ok()
                .filter(|p| p.value.is_number())
                .map(|_| s.clone())?,
            Value::Number(_) => json::to_string(&Value::String(json::to_string(id))),
            _ => return None,
        };
        self.pending.contains_key(&alt).then_some(alt)
    }

    fn response(&mut self, frame: TapeRef<'_>, repeat: bool, sink: &mut Sink) -> Received {
        let ok = frame.get("result").is_some();
        // The id as a `Value` (a scalar, nearly always: cheap), for its echo and its retyping.
        let id = frame.get("id").map_or(Value::Null, JsonView::to_value);
        let mut key = json::to_string(&id);
        // A numeric id is echoed as JSON.stringify writes the double it parsed to (a client
        // compares the text: `1000.0` is not the `1000` it expects).
        let written = frame.get("id").map_or("", TapeRef::text);
        if id.is_number() && written != key {
            sink.add(
                CheckId::FrameIdNumberEcho,
                format!(
                    "response id written {written}: JSON.stringify writes the parsed id as {key}"
                ),
            );
        }
        if !self.pending.contains_key(&key) {
            match self.retyped(&id) {
                Some(alt) => {
                    sink.add(
                        CheckId::ResponseIdTypePreserved,
                        format!("response id {key} answers the request with id {alt}: the id changed type"),
                    );
                    key = alt;
                }
                // An answer to a line without a usable id echoes null (or that line's own id).
                // Two such answers may be the same bytes (two notifications answered alike): a
                // repeated null-id answer is another ignored line's, not a second answer — unless
                // a request's id echoes null (`1e400`), whose answer it may repeat.
                None if (!repeat || (key == "null" && !self.requested.contains("null")))
                    && !self.ignored.is_empty()
                    && (key == "null" || !self.requested.contains(&key)) =>
                {
                    // Runtimes answer in the order they read: the line answered was read after
                    // the last request answered so far, when there is such a line. Among those,
                    // the answer tells its kind: a parse error (-32700) answers a line that is no
                    // JSON object, anything else a line that names a method.
                    let parse_error = frame
                        .get("error")
                        .and_then(|e| e.get("code"))
                        .and_then(JsonView::as_i64)
                        == Some(-32700);
                    let fits = |rule: &CheckId| {
                        let unparsed = matches!(
                            rule,
                            CheckId::FrameMalformedIgnored | CheckId::FrameNonObjectIgnored
                        );
                        let named = matches!(
                            rule,
                            CheckId::FrameNotificationsIgnored
                                | CheckId::FrameIdInvalidIsNotification
                                | CheckId::FrameNonStringMethodIgnored
                        );
                        if parse_error {
                            unparsed
                        } else {
                            // An answer echoing an id of its own comes from a line that carried
                            // one (a batch element, a response): no kind is preferred then.
                            named || key != "null"
                        }
                    };
                    let after = |i: &usize| *i > self.last_answered;
                    let at = (self.ignored.iter())
                        .position(|(i, r)| after(i) && fits(r))
                        .or_else(|| self.ignored.iter().position(|(i, _)| after(i)))
                        .unwrap_or(0);
                    let (_, rule) = self.ignored.remove(at);
                    sink.add(
                        rule,
                        format!("response to id {key}, which no request carries: it answers a line that must get no answer"),
                    );
                    return Received::Response {
                        key,
                        method: None,
                        ok,
                    };
                }
                None => {
                    sink.add(
                        CheckId::ResponseExactlyOnce,
                        format!("response to id {key}, which no unanswered request carries"),
                    );
                    return Received::Response {
                        key,
                        method: None,
                        ok,
                    };
                }
            }
        }
        let method = match frame.get("error") {
            Some(e) => self.error_answer(&key, e, sink),
            None => Some(self.result_answer(&key, frame, sink)),
        };
        if let Some(i) = self.sent_at.get_mut(&key).and_then(|q| q.pop_front()) {
            self.last_answered = self.last_answered.max(i);
        }
        let open = &self.pending[&key];
        if open.methods.len() <= open.floating {
            self.pending.remove(&key);
        }
        Received::Response { key, method, ok }
    }

    /// Credits an error answer to one of the requests pending under `key`.
    fn error_answer(&mut self, key: &str, e: TapeRef<'_>, sink: &mut Sink) -> Option<String> {
        let (code, message) = shape::error_member(e, self.profile.member_order, sink);
        let methods = self.pending[key].methods.clone();
        if RESERVED.contains(&code) {
            sink.add(
                CheckId::ErrorNoReservedCodes,
                format!(
                    "error code {code} (reserved by JSON-RPC, never written upstream) answers {} {message:?}: the runtime's errors are -32603",
                    requests_of(&methods)
                ),
            );
        }
        let unknown: Vec<bool> = methods.iter().map(|m| !self.known(m)).collect();
        let may_fail: Vec<bool> = methods.iter().map(|m| self.may_fail(m)).collect();
        let last_unknown = unknown.iter().rposition(|u| *u);
        let named = message.strip_prefix(UNKNOWN_METHOD);
        let allow = self.profile.allow_method_not_found;
        let allowed = code == -32603 || (code == -32601 && allow);
        let codes = if allow {
            "-32603 (or -32601)"
        } else {
            "-32603"
        };
        let room = may_fail.iter().filter(|f| **f).count();
        let open_floating = self.pending[key].floating;
        let take =
            |this: &mut Checker, i: usize| this.pending.get_mut(key).map(|o| o.methods.remove(i));
        // An unknown method's answer names it.
        if let Some(i) = (0..methods.len())
            .rev()
            .find(|i| unknown[*i] && named == Some(methods[*i].as_str()))
        {
            if !allowed {
                sink.add(
                    CheckId::ErrorUnknownMethod,
                    format!(
                        "unknown method {:?} answered with code {code}, expected {codes}",
                        methods[i]
                    ),
                );
            }
            return take(self, i);
        }
        // The last unknown method's answer, misworded: reported, and credited to it.
        let misworded = |this: &mut Checker, sink: &mut Sink, i: usize| {
            let m = &methods[i];
            sink.add(
                CheckId::ErrorUnknownMethod,
                format!(
                    "unknown method {m:?} answered {code} {message:?}, expected {codes} `{UNKNOWN_METHOD}{m}`"
                ),
            );
            take(this, i)
        };
        // Another code than a known method's failure: an unknown method's answer, misworded.
        if code != -32603 {
            if let Some(i) = last_unknown {
                return misworded(self, sink, i);
            }
            if !RESERVED.contains(&code) {
                sink.add(
                    CheckId::ErrorNoReservedCodes,
                    format!(
                        "error code {code} answers {} {message:?}: the runtime's errors are -32603",
                        requests_of(&methods)
                    ),
                );
            }
        }
        // A known method's failure: floating until a question needs it.
        if open_floating < room {
            let open = self.pending.get_mut(key)?;
            open.floating += 1;
            open.floated.push((code, message));
            return None;
        }
        if self.pending[key].floated.contains(&(code, message.clone())) {
            sink.add(
                CheckId::ResponseExactlyOnce,
                format!("error {code} {message:?} answers id {key} a second time"),
            );
            return None;
        }
        if let Some(i) = last_unknown {
            return misworded(self, sink, i);
        }
        if let Some(i) = may_fail.iter().rposition(|f| !*f) {
            sink.add(
                shape::rule_of(&methods[i]),
                format!(
                    "{:?} answered with the error {code} {message:?}; it never fails",
                    methods[i]
                ),
            );
            return take(self, i);
        }
        sink.add(
            CheckId::ResponseExactlyOnce,
            format!("more answers than requests with id {key}"),
        );
        None
    }

    /// Credits a result to the most recent request under `key` whose shape it fits (else the most
    /// recent one, with the violation of the first shape it missed).
    fn result_answer(&mut self, key: &str, frame: TapeRef<'_>, sink: &mut Sink) -> String {
        let methods = &self.pending[key].methods;
        let mut first_err = None;
        let mut hit = None;
        for (i, m) in methods.iter().enumerate().rev() {
            match shape::result_fits(&self.profile, &self.receipts, m, frame) {
                Ok(()) => {
                    hit = Some(i);
                    break;
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        let i = match hit {
            Some(i) => i,
            None => {
                if let Some((rule, msg)) = first_err {
                    sink.add(rule, msg);
                }
                methods.len() - 1
            }
        };
        let open = self.pending.get_mut(key).expect("pending");
        let m = open.methods.remove(i);
        let p = &self.profile;
        let room = open
            .methods
            .iter()
            .filter(|m| p.methods.contains(m) && !p.never_fail.contains(m))
            .count();
        if open.floating > room {
            open.floating = room;
            open.floated.truncate(room);
            sink.add(
                CheckId::ResponseExactlyOnce,
                format!(
                    "more answers than requests with id {key} (an error answered {m:?} earlier?)"
                ),
            );
        }
        m
    }
}
