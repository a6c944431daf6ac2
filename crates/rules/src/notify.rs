//! Notifications: which ones the runtime sends and their params; per session, event `seq`,
//! `time`, turn numbers and status alternation (docs/CONTRACT.md#s4 to #s6).

use super::evidence::Difference;
use super::shape::object;
use super::sink::Sink;
use super::stream::{Checker, Track};
use super::{CheckId, Received};
use dsh_protocol::wire::json::{JsonKind, JsonView};

/// The least `event.time` that is epoch milliseconds: 1e12 ms is 2001-09-09. No correct
/// runtime's clock reads earlier, while epoch *seconds* stay below it until the year 33658 (now
/// they are about 1.8e9), so a time below it is seconds (or a counter), never milliseconds.
const EPOCH_MS_MIN: f64 = 1e12;
/// The bound above: 1e15 ms is the year 33658, while epoch microseconds passed 1e15 in 2001 (and
/// nanoseconds long before), so a time at or above it is a finer unit than milliseconds.
const EPOCH_MS_MAX: f64 = 1e15;

impl Checker {
    /// Judges a notification frame (its members are already known to be `jsonrpc, method, params`).
    pub(super) fn notification<'a>(
        &mut self,
        frame: impl JsonView<'a>,
        sink: &mut Sink,
    ) -> Option<Received> {
        let Some(method) = frame.get("method").and_then(JsonView::as_str) else {
            sink.add(
                CheckId::StdoutFramesOnly,
                "notification method is not a string",
            );
            return None;
        };
        let done = Some(Received::Notification(method.to_owned()));
        let Some(p) = object(frame.get("params")) else {
            sink.add(
                CheckId::StdoutFramesOnly,
                format!("{method}: params is not an object"),
            );
            return done;
        };
        match method {
            "session.event" => {
                if let Some(sid) = string(p, "sessionId", CheckId::StdoutFramesOnly, sink) {
                    self.event(sid, p, sink);
                }
            }
            "session.status" => {
                let rule = CheckId::StatusIdleAfterTurn;
                let (Some(sid), Some(status)) = (
                    string(p, "sessionId", rule, sink),
                    string(p, "status", rule, sink),
                ) else {
                    return done;
                };
                let running = match status {
                    "running" => true,
                    "idle" => false,
                    s => {
                        sink.add(rule, format!("session.status {s:?}"));
                        return done;
                    }
                };
                let t = self.sessions.entry(sid.to_owned()).or_default();
                if t.running == Some(running) || (t.running.is_none() && !running) {
                    sink.add(
                        rule,
                        format!("session.status {status} for {sid:?} is no change of status"),
                    );
                }
                t.running = Some(running);
            }
            "subagent.started" => {
                let rule = CheckId::SubagentNotifications;
                string(p, "parentSessionId", rule, sink);
                if let Some(child) = string(p, "childSessionId", rule, sink) {
                    self.sessions.entry(child.to_owned()).or_default().child = true;
                }
            }
            "subagent.finished" => subagent_finished(p, self.profile.member_order, sink),
            "session.finished" if self.profile.session_finished => {
                let rule = CheckId::LegacySessionFinished;
                let open = (string(p, "sessionId", rule, sink))
                    .and_then(|sid| Some((sid, self.sessions.get(sid)?.open_turn?)));
                if let Some((sid, turn)) = open {
                    // docs/CONTRACT.md#r4-legacy-finished-after-settle
                    sink.add(
                        rule,
                        format!("session.finished for {sid:?} while its turn {turn} is open: it comes only once the session settled, after its turn/end"),
                    );
                }
                if let Some(s) = string(p, "status", rule, sink) {
                    if !["ok", "error"].contains(&s) {
                        sink.add(rule, format!("session.finished status {s:?}"));
                    }
                }
            }
            m => sink.add(
                CheckId::StdoutFramesOnly,
                format!("notification method {m:?} is not one the runtime sends"),
            ),
        }
        done
    }

    fn event<'a>(&mut self, sid: &str, p: impl JsonView<'a>, sink: &mut Sink) {
        let Some(e) = object(p.get("event")) else {
            sink.add(
                CheckId::StdoutFramesOnly,
                "session.event without an event object",
            );
            return;
        };
        let ty = e.get("type").and_then(JsonView::as_str);
        if ty.is_none() {
            sink.add(CheckId::StdoutFramesOnly, "event.type is not a string");
        }
        let data = e.get("data");
        if data.is_none() {
            sink.add(CheckId::StdoutFramesOnly, "event without data");
        }
        let time = event_time(e.get("time").and_then(JsonView::as_f64), sink);
        // A session this conversation did not resume was created in it (a prompt or a
        // working-directory request creates it; only session/resume attaches a stored one, §3.3),
        // so its log starts here: seq from 0 and turns from 1, persistence or not.
        let created = self.profile.fresh_sessions || !self.resumed.contains(sid);
        let t = self.sessions.entry(sid.to_owned()).or_default();
        sequence(
            sid,
            e.get("seq").and_then(JsonView::as_u64),
            time,
            created,
            t,
            sink,
        );
        let turn = data.and_then(|d| d.get("turn")).and_then(JsonView::as_u64);
        match ty.unwrap_or("") {
            "turn/start" => turn_start(sid, turn, created, t, sink),
            "turn/end" => {
                let kind = (data.and_then(|d| d.get("reason")))
                    .and_then(|r| r.get("kind"))
                    .and_then(JsonView::as_str);
                turn_end(sid, turn, kind.is_some(), t, sink);
            }
            "agent/inbox/spliced" => self.spliced(data.and_then(|d| d.get("inserted")), sink),
            "assistant/message" if !self.profile.session_finished => content_blocks(data, sink),
            _ => {}
        }
    }

    /// A splice's inserted messages: each id is a receipt, after the prompt's response or not.
    fn spliced<'a>(&mut self, inserted: Option<impl JsonView<'a>>, sink: &mut Sink) {
        let Some(inserted) = inserted.filter(|i| i.kind() == JsonKind::Array) else {
            sink.add(
                CheckId::ReceiptIdMatchesInserted,
                "agent/inbox/spliced without an inserted array",
            );
            return;
        };
        for m in inserted.elements() {
            if let Some(id) = m.get("id").and_then(JsonView::as_str) {
                if self.early_responses.remove(id) {
                    sink.add(
                        CheckId::ReceiptPrecedesResponse,
                        format!("the receipt of {id} came after the prompt's response"),
                    );
                }
                self.receipts.insert(id.to_owned());
            }
        }
    }
}

/// An assistant/message's `data.message.content` is an array of blocks, each with a string
/// `type` (docs/CONTRACT.md#r8.4-content-blocks-typed): the TypeScript SDK fails the run on
/// anything else. Not for the legacy edition, which these clients cannot drive (§8.3).
fn content_blocks<'a>(data: Option<impl JsonView<'a>>, sink: &mut Sink) {
    let content = (data.and_then(|d| d.get("message"))).and_then(|m| m.get("content"));
    let ok = (content.filter(|c| c.kind() == JsonKind::Array)).is_some_and(|c| {
        c.elements()
            .all(|b| b.get("type").and_then(JsonView::as_str).is_some())
    });
    if !ok {
        sink.add(
            CheckId::StdoutFramesOnly,
            "assistant/message data.message.content is not an array of blocks each with a string type: the TypeScript SDK fails the run on it",
        );
    }
}

/// `event.time`: a number of epoch milliseconds. The time, when a number.
fn event_time(time: Option<f64>, sink: &mut Sink) -> Option<f64> {
    match time {
        None => sink.differs(
            CheckId::EventTime,
            "event.time is not a number",
            Difference {
                value: None,
                ..Difference::at("/params/event/time", "epoch milliseconds", "no number")
            },
        ),
        Some(ms) if !(EPOCH_MS_MIN..EPOCH_MS_MAX).contains(&ms) => {
            let unit = if ms < EPOCH_MS_MIN {
                "seconds"
            } else {
                "micro- or nanoseconds"
            };
            sink.differs(
                CheckId::EventTime,
                format!(
                    "event.time {ms} is not epoch milliseconds (those are 1e12 to 1e15 for any \
                     date after 2001): it looks like {unit}"
                ),
                Difference {
                    value: Some(ms.to_string()),
                    ..Difference::at(
                        "/params/event/time",
                        "epoch milliseconds",
                        format!("{ms} ({unit})"),
                    )
                },
            );
        }
        Some(_) => {}
    }
    time
}

/// A session's event `seq` runs on without gaps (from 0 in a session `created` here), and its
/// `time` never goes backwards.
fn sequence(
    sid: &str,
    seq: Option<u64>,
    time: Option<f64>,
    created: bool,
    t: &mut Track,
    sink: &mut Sink,
) {
    match seq {
        None => sink.add(
            CheckId::SessionSeqContiguous,
            "event.seq is not a non-negative integer",
        ),
        Some(seq) => {
            let want = t
                .next_seq
                .unwrap_or(if created && !t.child { 0 } else { seq });
            if seq != want {
                sink.differs(
                    CheckId::SessionSeqContiguous,
                    format!("{sid:?}: event seq {seq}, expected {want}"),
                    Difference::at("/params/event/seq", want.to_string(), seq.to_string()),
                );
            }
            // Resynchronise: one gap is one violation.
            t.next_seq = Some(seq + 1);
        }
    }
    if let Some(time) = time {
        if t.last_time.is_some_and(|last| time < last) {
            sink.add(
                CheckId::EventTime,
                format!("{sid:?}: event time went backwards"),
            );
        }
        t.last_time = Some(time);
    }
}

/// `turn/start`: numbered on from the last turn (from 1 in a session `created` here), none open.
fn turn_start(sid: &str, turn: Option<u64>, created: bool, t: &mut Track, sink: &mut Sink) {
    let counts = CheckId::TurnCountsPerSession;
    let Some(n) = turn else {
        sink.add(counts, "turn/start without an integer data.turn");
        return;
    };
    if let Some(open) = t.open_turn {
        sink.add(
            counts,
            format!("{sid:?}: turn/start {n} while turn {open} is open"),
        );
    }
    // A child's first turn may continue its parent's numbering (a fork's does).
    let first = (created && !t.child).then_some(1);
    let want = t.last_turn.map(|l| l + 1).or(first);
    if want.is_some_and(|w| w != n) {
        let want = want.unwrap_or(n);
        sink.differs(
            counts,
            format!("{sid:?}: turn/start {n}, expected {want}"),
            Difference::at("/params/event/data/turn", want.to_string(), n.to_string()),
        );
    }
    t.last_turn = Some(n);
    t.open_turn = Some(n);
}

/// `turn/end`: of the open turn, with a string `reason.kind` (`has_kind`).
fn turn_end(sid: &str, turn: Option<u64>, has_kind: bool, t: &mut Track, sink: &mut Sink) {
    let reason = CheckId::TurnEndReason;
    match turn {
        None => sink.add(reason, "turn/end without an integer data.turn"),
        Some(n) if t.open_turn != Some(n) => sink.add(
            CheckId::TurnCountsPerSession,
            format!(
                "{sid:?}: turn/end {n}, but the open turn is {:?}",
                t.open_turn
            ),
        ),
        Some(_) => {}
    }
    t.open_turn = None;
    if !has_kind {
        sink.add(reason, "turn/end without a string reason.kind");
    }
}

/// `subagent.finished` names parent and child (the check's rule); the members upstream adds
/// (provider, agentId, status, stopReason) are judged when present, and demanded only under
/// `--strict-upstream` (`strict`).
fn subagent_finished<'a>(p: impl JsonView<'a>, strict: bool, sink: &mut Sink) {
    let rule = CheckId::SubagentNotifications;
    string(p, "parentSessionId", rule, sink);
    let child = string(p, "childSessionId", rule, sink);
    let upstream = |k: &str, sink: &mut Sink| match p.get(k) {
        None if !strict => None,
        _ => string(p, k, rule, sink),
    };
    upstream("provider", sink);
    let agent = upstream("agentId", sink);
    let status = upstream("status", sink);
    let reason = upstream("stopReason", sink);
    if agent.is_some() && child.is_some() && agent != child {
        sink.add(
            rule,
            "subagent.finished agentId differs from childSessionId",
        );
    }
    let bad_status = status.is_some_and(|s| !["ok", "error"].contains(&s));
    let reasons = ["completed", "aborted", "error", "max-tokens", "refusal"];
    let bad_reason = reason.is_some_and(|r| !reasons.contains(&r));
    if bad_status || bad_reason {
        sink.add(
            rule,
            format!("subagent.finished status {status:?} / stopReason {reason:?}"),
        );
    }
    if let Some(m) = p.get("lastAssistantMessage") {
        if m.kind() != JsonKind::Array || m.is_empty() {
            sink.add(
                rule,
                "lastAssistantMessage present but not a non-empty array",
            );
        }
    }
}

/// A string member of notification params, reporting its absence against `rule`.
fn string<'a>(p: impl JsonView<'a>, k: &str, rule: CheckId, sink: &mut Sink) -> Option<&'a str> {
    let s = p.get(k).and_then(JsonView::as_str);
    if s.is_none() {
        sink.add(rule, format!("params.{k} is not a string"));
    }
    s
}
