//! Responses: each answers a request that was read and not yet answered, echoing its id; errors
//! are `{code, message}` with the runtime's codes and messages; results have their method's shape
//! (docs/CONTRACT.md#s2, #s3).

use super::evidence::Difference;
use super::sink::Sink;
use super::stream::Checker;
use super::{shape, CheckId, Received, ViolationKind, UNKNOWN_METHOD};
use dsh_protocol::wire::json::{self, JsonView, TapeRef};
use serde_json::Value;

/// Error codes JSON-RPC reserves that the runtime never uses (docs/CONTRACT.md#s2.3).
const RESERVED: [i64; 3] = [-32700, -32600, -32602];

/// The requests an answer may be for, as a report names them: `the "initialize" request`, or
/// `one of the ["a", "b"] requests` when several pending requests share its id.
fn requests_of(methods: &[String]) -> String {
    match methods {
        [m] => format!("the {m:?} request"),
        ms => format!("one of the {ms:?} requests"),
    }
}

/// Whether an error answer is a parse error's (-32700).
fn is_parse_error(frame: TapeRef<'_>) -> bool {
    frame
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(JsonView::as_i64)
        == Some(-32700)
}

/// Whether an answer to no request may answer a line of the silence rule `rule`: a parse error
/// answers a line that is no JSON object, anything else a line that names a method — or, echoing
/// an id of its own, a line that carried one (a batch element, a response): no kind is preferred.
fn fits(parse_error: bool, key: &str, rule: &CheckId) -> bool {
    if parse_error {
        matches!(
            rule,
            CheckId::FrameMalformedIgnored | CheckId::FrameNonObjectIgnored
        )
    } else {
        key != "null"
            || matches!(
                rule,
                CheckId::FrameNotificationsIgnored
                    | CheckId::FrameIdInvalidIsNotification
                    | CheckId::FrameNonStringMethodIgnored
            )
    }
}

impl Checker {
    /// The pending id echo a response id answers after changing its type (`"7"` for 7, `7` for
    /// `"7"`), if any.
    fn retyped(&self, id: &Value) -> Option<String> {
        let alt = match id {
            Value::String(s) => json::parse_inline(s)
                .ok()
                .filter(|p| p.value.is_number())
                .map(|_| s.clone())?,
            Value::Number(_) => json::to_string_inline(&Value::String(json::to_string_inline(id))),
            _ => return None,
        };
        self.pending.contains_key(&alt).then_some(alt)
    }

    /// Whether an answer to id echo `key`, which a pending request carries, answers an earlier
    /// line that must get no answer instead. Runtimes answer in the order they read, and a slow
    /// runtime's answer may come after the kit has sent more: then the null answer of a
    /// notification read before that request, while a request read between them (answered at
    /// once, not deferred) still waits, is the notification's, not the later request's.
    fn answers_out_of_turn(&self, key: &str, frame: TapeRef<'_>) -> bool {
        let Some(&first) = (key == "null")
            .then(|| self.sent_at.get(key).and_then(|q| q.front()))
            .flatten()
        else {
            return false;
        };
        // Runtimes that answer as they can (the release: a prompt waits behind a slow
        // `initialize`, an unknown method's error does not) answer out of order too: only an
        // answer that cannot be the pending request's is taken for the earlier line's.
        if (self.pending.get(key).iter().flat_map(|o| &o.methods))
            .any(|m| self.may_answer(m, frame))
        {
            return false;
        }
        let parse_error = is_parse_error(frame);
        let waiting = |i: usize| self.waiting.range(i + 1..first).any(|(_, d)| !*d);
        self.ignored.iter().any(|(i, r)| {
            *i > self.last_answered && *i < first && fits(parse_error, key, r) && waiting(*i)
        })
    }

    /// Whether `frame` may answer a `method` request: any answer may be a known method's (its
    /// shape is judged later); an unknown method's is an error naming it, or `-32601`.
    fn may_answer(&self, method: &str, frame: TapeRef<'_>) -> bool {
        if self.known(method) {
            return true;
        }
        let Some(e) = frame.get("error") else {
            return false;
        };
        let code = e.get("code").and_then(JsonView::as_i64);
        let message = e.get("message").and_then(JsonView::as_str);
        code == Some(-32601) || message.and_then(|m| m.strip_prefix(UNKNOWN_METHOD)) == Some(method)
    }

    /// An answer no request waits for: blamed on a line read that must get no answer.
    fn unrequested(
        &mut self,
        key: String,
        frame: TapeRef<'_>,
        ok: bool,
        sink: &mut Sink,
    ) -> Received {
        // Runtimes answer in the order they read: the line answered was read after the last
        // request answered so far, when there is such a line. Among those, the answer tells its
        // kind (`fits`).
        let parse_error = is_parse_error(frame);
        let after = |i: &usize| *i > self.last_answered;
        let at = (self.ignored.iter())
            .position(|(i, r)| after(i) && fits(parse_error, &key, r))
            .or_else(|| self.ignored.iter().position(|(i, _)| after(i)))
            .unwrap_or(0);
        let (_, rule) = self.ignored.remove(at);
        let carried = if self.pending.contains_key(&key) {
            "which a request read later carries while earlier ones still wait"
        } else {
            "which no request carries"
        };
        sink.add_kind(
            rule,
            ViolationKind::Unrequested,
            format!("response to id {key}, {carried}: it answers a line that must get no answer"),
        );
        Received::Response {
            key,
            method: None,
            ok,
        }
    }

    pub(super) fn response(
        &mut self,
        frame: TapeRef<'_>,
        repeat: bool,
        sink: &mut Sink,
    ) -> Received {
        let ok = frame.get("result").is_some();
        // The id as a `Value` (a scalar, nearly always: cheap), for its echo and its retyping.
        let id = frame.get("id").map_or(Value::Null, JsonView::to_value);
        // (`_inline`: the wire layer's copy compiled here, uninstrumented in fuzz builds.)
        let mut key = json::to_string_inline(&id);
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
        if self.answers_out_of_turn(&key, frame) {
            return self.unrequested(key, frame, ok, sink);
        }
        if !self.pending.contains_key(&key) {
            match self.retyped(&id) {
                Some(alt) => {
                    sink.differs(
                        CheckId::ResponseIdTypePreserved,
                        format!("response id {key} answers the request with id {alt}: the id changed type"),
                        Difference::at("/id", alt.clone(), key.clone()),
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
                    return self.unrequested(key, frame, ok, sink);
                }
                None => {
                    sink.add_kind(
                        CheckId::ResponseExactlyOnce,
                        ViolationKind::Unrequested,
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
            self.waiting.remove(&i);
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
            sink.differs(
                CheckId::ErrorNoReservedCodes,
                format!(
                    "error code {code} (reserved by JSON-RPC, never written upstream) answers {} {message:?}: the runtime's errors are -32603",
                    requests_of(&methods)
                ),
                Difference::at("/error/code", "-32603", code.to_string()),
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
                sink.differs(
                    CheckId::ErrorUnknownMethod,
                    format!(
                        "unknown method {:?} answered with code {code}, expected {codes}",
                        methods[i]
                    ),
                    Difference::at("/error/code", codes, code.to_string()),
                );
            }
            return take(self, i);
        }
        // The last unknown method's answer, misworded: reported, and credited to it.
        let misworded = |this: &mut Checker, sink: &mut Sink, i: usize| {
            let m = &methods[i];
            let wanted = serde_json::Value::String(format!("{UNKNOWN_METHOD}{m}"));
            let got = serde_json::Value::String(message.to_owned());
            sink.differs(
                CheckId::ErrorUnknownMethod,
                format!(
                    "unknown method {m:?} answered {code} {message:?}, expected {codes} `{UNKNOWN_METHOD}{m}`"
                ),
                Difference::at("/error/message", wanted.to_string(), got.to_string()),
            );
            take(this, i)
        };
        // Another code than a known method's failure: an unknown method's answer, misworded.
        if code != -32603 {
            if let Some(i) = last_unknown {
                return misworded(self, sink, i);
            }
            if !RESERVED.contains(&code) {
                sink.differs(
                    CheckId::ErrorNoReservedCodes,
                    format!(
                        "error code {code} answers {} {message:?}: the runtime's errors are -32603",
                        requests_of(&methods)
                    ),
                    Difference::at("/error/code", "-32603", code.to_string()),
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
            match shape::result_fits(&self.profile, m, frame) {
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
        if m == "session/prompt" && !self.profile.legacy_prompt {
            // Its receipt must have been written already; whether it comes later is known only
            // when (if) it does (`notify`).
            let id = frame.get("result").and_then(|r| r.get("messageId"));
            if let Some(id) = id.and_then(JsonView::as_str) {
                if !self.receipts.contains(id) {
                    self.early_responses.insert(id.to_owned());
                }
            }
        }
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
