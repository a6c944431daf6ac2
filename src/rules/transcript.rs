//! Whole-transcript oracles: rules a trace cannot state frame by frame, judged over what was
//! written to the runtime and what it wrote back. A check trace names the ones it needs
//! (`# oracle: exactly-once`); each is blamed on its own rule ([`Oracle::rule`]), whichever
//! check's transcript it ran over.

use crate::wire::{classify, json, Classified, Id, LineDecoder, LineEvent};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// One stdout line as the runtime wrote it (without `\n`; not trimmed).
pub type Line = String;

/// The requests (ids, in order) that the bytes written to the runtime hold, as the upstream
/// decoder would see them (an unterminated tail holds none).
pub fn sent_requests(sent: &[u8]) -> Vec<(Id, String)> {
    let mut d = LineDecoder::default();
    let mut out = Vec::new();
    d.push(sent, &mut |e| {
        if let LineEvent::Line(l) = e {
            if let Classified::Request(r) = classify(l) {
                out.push((r.id, r.method));
            }
        }
    });
    out
}

/// The requests of the bytes written, with their `params.sessionId` when it is a string.
pub fn sent_session_requests(sent: &[u8]) -> Vec<(Id, String, Option<String>)> {
    let mut d = LineDecoder::default();
    let mut out = Vec::new();
    d.push(sent, &mut |e| {
        if let LineEvent::Line(l) = e {
            if let Classified::Request(r) = classify(l) {
                let sid = r
                    .params
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                out.push((r.id, r.method, sid));
            }
        }
    });
    out
}

fn index_of_response(frames: &[Option<Value>], id: &Id) -> Option<usize> {
    frames
        .iter()
        .position(|f| f.as_ref().and_then(response_id).as_ref() == Some(id))
}

fn parsed(lines: &[Line]) -> Vec<Option<Value>> {
    lines.iter().map(|l| parse(l)).collect()
}

fn notification<'a>(f: &'a Option<Value>, method: &str) -> Option<&'a Value> {
    let v = f.as_ref()?;
    (v.get("method")?.as_str()? == method && v.get("id").is_none())
        .then(|| v.get("params"))
        .flatten()
}

/// `receipt.precedes-response`: for every answered `session/prompt`, a receipt
/// (`agent/inbox/spliced` with `inserted[].id == messageId`) was written before the response.
pub fn receipt_before_response(sent: &[u8], lines: &[Line]) -> Result<(), String> {
    let frames = parsed(lines);
    for (id, method, _) in sent_session_requests(sent) {
        if method != "session/prompt" {
            continue;
        }
        let Some(r) = index_of_response(&frames, &id) else {
            continue;
        };
        let Some(mid) = frames[r]
            .as_ref()
            .and_then(|v| v.pointer("/result/messageId"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let receipt = frames.iter().position(|f| {
            notification(f, "session.event").is_some_and(|p| {
                p.pointer("/event/type").and_then(Value::as_str) == Some("agent/inbox/spliced")
                    && p.pointer("/event/data/inserted")
                        .and_then(Value::as_array)
                        .is_some_and(|a| {
                            a.iter()
                                .any(|m| m.get("id").and_then(Value::as_str) == Some(mid))
                        })
            })
        });
        match receipt {
            None => return Err(format!("prompt {id} was answered (stdout line {}) but no receipt carries messageId {mid:?}", r + 1)),
            Some(at) if at > r => {
                return Err(format!(
                    "prompt {id}: the response (stdout line {}) came before its receipt (stdout line {})",
                    r + 1,
                    at + 1
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `legacy.session-finished`: each successful prompt response is preceded by a `session.finished`
/// for its session, written after that session's previous prompt response.
pub fn finished_before_response(sent: &[u8], lines: &[Line]) -> Result<(), String> {
    let frames = parsed(lines);
    let mut last_response: std::collections::HashMap<String, usize> = Default::default();
    let mut prompts: Vec<(usize, Id, String)> = Vec::new();
    for (id, method, sid) in sent_session_requests(sent) {
        if let (true, Some(sid), Some(r)) = (
            method == "session/prompt",
            sid,
            index_of_response(&frames, &id),
        ) {
            if frames[r]
                .as_ref()
                .is_some_and(|v| v.get("result").is_some())
            {
                prompts.push((r, id, sid));
            }
        }
    }
    prompts.sort_by_key(|p| p.0);
    for (r, id, sid) in prompts {
        let from = last_response.get(&sid).map_or(0, |x| x + 1);
        let found = (from..r).any(|i| {
            notification(&frames[i], "session.finished")
                .is_some_and(|p| p.get("sessionId").and_then(Value::as_str) == Some(sid.as_str()))
        });
        if !found {
            return Err(format!(
                "prompt {id} on session {sid:?} was answered (stdout line {}) without a session.finished before it",
                r + 1
            ));
        }
        last_response.insert(sid, r);
    }
    Ok(())
}

/// `wait.settles-after-idle`: a successful `session/wait` response is written when its session's
/// last status is idle and no turn has started since.
pub fn wait_after_idle(sent: &[u8], lines: &[Line]) -> Result<(), String> {
    let frames = parsed(lines);
    for (id, method, sid) in sent_session_requests(sent) {
        let (true, Some(sid)) = (method == "session/wait", sid) else {
            continue;
        };
        let Some(w) = index_of_response(&frames, &id) else {
            continue;
        };
        if frames[w].as_ref().is_none_or(|v| v.get("result").is_none()) {
            continue;
        }
        let mine = |f: &Option<Value>| -> Option<(bool, String)> {
            let v = f.as_ref()?;
            let p = v.get("params")?;
            if p.get("sessionId")?.as_str()? != sid {
                return None;
            }
            match v.get("method")?.as_str()? {
                "session.status" => Some((true, p.get("status")?.as_str()?.to_owned())),
                "session.event" => Some((false, p.pointer("/event/type")?.as_str()?.to_owned())),
                _ => None,
            }
        };
        let last_status = (0..w)
            .rev()
            .find_map(|i| mine(&frames[i]).filter(|(st, _)| *st).map(|(_, s)| (i, s)));
        match last_status {
            Some((i, s)) if s == "idle" => {
                if let Some(j) = (i + 1..w).find(|j| mine(&frames[*j]).is_some_and(|(st, t)| !st && t == "turn/start")) {
                    return Err(format!(
                        "session/wait {id} was answered (stdout line {}) while a turn of {sid:?} that started at line {} was running",
                        w + 1,
                        j + 1
                    ));
                }
            }
            Some((i, s)) => {
                return Err(format!(
                    "session/wait {id} was answered (stdout line {}) while {sid:?} was {s} (status at line {})",
                    w + 1,
                    i + 1
                ))
            }
            None => {}
        }
    }
    Ok(())
}

/// A response's id as written (`None` when the frame is not a response).
fn response_id(v: &Value) -> Option<Id> {
    if v.get("method").is_some() || !(v.get("result").is_some() || v.get("error").is_some()) {
        return None;
    }
    match v.get("id")? {
        Value::String(s) => Some(Id::Str(s.clone())),
        Value::Number(n) => n.as_f64().map(Id::Num),
        _ => None,
    }
}

fn parse(line: &str) -> Option<Value> {
    json::parse(line).ok().map(|p| p.value)
}

/// `stdout.frames-only`: every line is one JSON object with `"jsonrpc":"2.0"`, shaped as a
/// response (`id` + `result`|`error`) or a notification (string `method`), with no padding.
pub fn frames_only(lines: &[Line]) -> Result<(), String> {
    for (i, l) in lines.iter().enumerate() {
        let n = i + 1;
        let show = preview(l);
        if l.trim_matches(|c: char| c.is_ascii_whitespace()) != l {
            return Err(format!(
                "stdout line {n} has leading or trailing whitespace: {show}"
            ));
        }
        let Some(v) = parse(l) else {
            return Err(format!("stdout line {n} is not JSON: {show}"));
        };
        let Some(obj) = v.as_object() else {
            return Err(format!("stdout line {n} is not a JSON object: {show}"));
        };
        if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
            return Err(format!("stdout line {n} lacks \"jsonrpc\":\"2.0\": {show}"));
        }
        let notification =
            obj.get("method").is_some_and(Value::is_string) && obj.get("id").is_none();
        let response =
            obj.contains_key("id") && (obj.contains_key("result") ^ obj.contains_key("error"));
        if !notification && !response {
            return Err(format!(
                "stdout line {n} is neither a response nor a notification: {show}"
            ));
        }
    }
    Ok(())
}

/// `response.exactly-once`: each request in `expected` is answered exactly once; nothing else is
/// answered. `expected` may list an id twice when it was sent twice.
pub fn exactly_once(expected: &[Id], lines: &[Line]) -> Result<(), String> {
    let mut want: HashMap<&Id, usize> = HashMap::new();
    for id in expected {
        *want.entry(id).or_default() += 1;
    }
    let mut got: HashMap<Id, usize> = HashMap::new();
    for l in lines {
        if let Some(id) = parse(l).as_ref().and_then(response_id) {
            // An id echoed with the other JSON type still answers its request: the type is
            // `response.id-type-preserved`'s rule, not this one.
            let id = if want.contains_key(&id) {
                id
            } else {
                match &id {
                    Id::Str(s) => s
                        .parse::<f64>()
                        .ok()
                        .map(Id::Num)
                        .filter(|n| want.contains_key(n) && n.to_json() == *s)
                        .unwrap_or(id),
                    Id::Num(n) => Some(Id::Str(json::js_number(*n)))
                        .filter(|s| want.contains_key(s))
                        .unwrap_or(id),
                }
            };
            *got.entry(id).or_default() += 1;
        }
    }
    for (id, n) in &want {
        let g = got.get(*id).copied().unwrap_or(0);
        if g != *n {
            return Err(format!(
                "request id {id} was sent {n} time(s) but answered {g} time(s)"
            ));
        }
    }
    for (id, g) in &got {
        if !want.contains_key(id) {
            return Err(format!(
                "{g} response(s) carry id {id}, which no request sent"
            ));
        }
    }
    Ok(())
}

/// `response.id-type-preserved`: responses to numeric ids carry numbers, to string ids strings.
pub fn id_types_preserved(expected: &[Id], lines: &[Line]) -> Result<(), String> {
    for l in lines {
        let Some(v) = parse(l) else { continue };
        let Some(raw) = v.get("id") else { continue };
        if v.get("method").is_some() {
            continue;
        }
        let as_str = raw.as_str().map(|s| Id::Str(s.to_owned()));
        let as_num = raw.as_f64();
        // A string response id that equals the *text* of a numeric request id (or the reverse).
        if let Some(Id::Str(s)) = &as_str {
            if !expected.contains(&Id::Str(s.clone()))
                && expected
                    .iter()
                    .any(|e| matches!(e, Id::Num(_)) && e.to_json() == *s)
            {
                return Err(format!(
                    "numeric request id {s} was echoed as the string {raw}"
                ));
            }
        }
        if let Some(n) = as_num {
            let text = json::js_number(n);
            if !expected.contains(&Id::Num(n)) && expected.contains(&Id::Str(text.clone())) {
                return Err(format!(
                    "string request id \"{text}\" was echoed as the number {text}"
                ));
            }
        }
    }
    Ok(())
}

/// The `session.event` frames of each session: (seq, type, event), in arrival order.
pub fn events_by_session(lines: &[Line]) -> BTreeMap<String, Vec<(Option<u64>, String, Value)>> {
    let mut m: BTreeMap<String, Vec<_>> = BTreeMap::new();
    // A frame identical to an earlier one is a replay: `turn.no-replay`'s rule, not seq's or turns'.
    let mut seen = std::collections::HashSet::new();
    for l in lines {
        if !seen.insert(l.as_str()) {
            continue;
        }
        let Some(v) = parse(l) else { continue };
        if v.get("method").and_then(Value::as_str) != Some("session.event") {
            continue;
        }
        let Some(sid) = v.pointer("/params/sessionId").and_then(Value::as_str) else {
            continue;
        };
        let Some(ev) = v.pointer("/params/event") else {
            continue;
        };
        let ty = ev
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        m.entry(sid.to_owned()).or_default().push((
            ev.get("seq").and_then(Value::as_u64),
            ty,
            ev.clone(),
        ));
    }
    m
}

/// `session.seq-contiguous`: per session, seq starts at `start(session)` (0 for a new session)
/// and grows by exactly one per event.
pub fn seq_contiguous(lines: &[Line], start: impl Fn(&str) -> Option<u64>) -> Result<(), String> {
    for (sid, evs) in events_by_session(lines) {
        let mut next = start(&sid);
        for (i, (seq, ty, _)) in evs.iter().enumerate() {
            let Some(seq) = *seq else {
                return Err(format!(
                    "session {sid:?}: event #{} ({ty}) has no integer seq",
                    i + 1
                ));
            };
            if let Some(want) = next {
                if seq != want {
                    return Err(format!(
                        "session {sid:?}: event #{} ({ty}) has seq {seq}, expected {want}",
                        i + 1
                    ));
                }
            }
            next = Some(seq + 1);
        }
    }
    Ok(())
}

/// The `turn/end` turn numbers of each session, in order.
pub fn turns_by_session(lines: &[Line]) -> BTreeMap<String, Vec<u64>> {
    events_by_session(lines)
        .into_iter()
        .map(|(sid, evs)| {
            let turns = evs
                .iter()
                .filter(|(_, ty, _)| ty == "turn/end")
                .filter_map(|(_, _, ev)| ev.pointer("/data/turn").and_then(Value::as_u64))
                .collect();
            (sid, turns)
        })
        .collect()
}

fn preview(l: &str) -> String {
    const MAX: usize = 160;
    if l.len() <= MAX {
        format!("{l:?}")
    } else {
        let mut end = MAX;
        while !l.is_char_boundary(end) {
            end -= 1;
        }
        format!("{:?}… ({} bytes)", &l[..end], l.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<Line> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn frames_only_rejects_logs_pretty_printing_and_missing_jsonrpc() {
        assert!(frames_only(&lines(&[
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"x"}"#
        ]))
        .is_ok());
        assert!(frames_only(&lines(&["[info] starting"]))
            .unwrap_err()
            .contains("not JSON"));
        assert!(frames_only(&lines(&["{", r#"  "jsonrpc": "2.0","#])).is_err());
        assert!(frames_only(&lines(&[r#"{"id":1,"result":{}}"#]))
            .unwrap_err()
            .contains("jsonrpc"));
        assert!(frames_only(&lines(&[r#"{"jsonrpc":"2.0","id":1}"#]))
            .unwrap_err()
            .contains("neither"));
        assert!(frames_only(&lines(&["42"])).is_err());
    }

    #[test]
    fn exactly_once_counts_duplicates_missing_and_strays() {
        let sent = sent_requests(b"{\"id\":1,\"method\":\"a\"}\n{\"id\":\"1\",\"method\":\"b\"}\n{\"id\":null,\"method\":\"n\"}\n{\"id\":2,\"method\":\"tail\"}");
        let ids: Vec<Id> = sent.iter().map(|(i, _)| i.clone()).collect();
        assert_eq!(
            ids,
            vec![Id::from(1), Id::from("1")],
            "null ids and the unterminated tail are not requests"
        );
        let ok = lines(&[
            r#"{"jsonrpc":"2.0","id":"1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}"#,
        ]);
        assert!(exactly_once(&ids, &ok).is_ok());
        let mut dup = ok.clone();
        dup.push(ok[0].clone());
        assert!(exactly_once(&ids, &dup).unwrap_err().contains("answered 2"));
        assert!(exactly_once(&ids, &ok[..1])
            .unwrap_err()
            .contains("answered 0"));
        let mut stray = ok.clone();
        stray.push(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#.into());
        assert!(
            exactly_once(&ids, &stray).is_ok(),
            "an id:null frame answers nothing countable"
        );
        stray.push(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#.into());
        assert!(exactly_once(&ids, &stray)
            .unwrap_err()
            .contains("no request sent"));
    }

    #[test]
    fn id_types_must_survive_the_round_trip() {
        let ids = vec![Id::from(7)];
        assert!(
            id_types_preserved(&ids, &lines(&[r#"{"jsonrpc":"2.0","id":7,"result":{}}"#])).is_ok()
        );
        assert!(
            id_types_preserved(&ids, &lines(&[r#"{"jsonrpc":"2.0","id":"7","result":{}}"#]))
                .is_err()
        );
        let ids = vec![Id::from("7")];
        assert!(
            id_types_preserved(&ids, &lines(&[r#"{"jsonrpc":"2.0","id":7,"result":{}}"#])).is_err()
        );
    }

    #[test]
    fn seq_must_be_contiguous_per_session() {
        let ev = |s: &str, seq: u64| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session.event","params":{{"sessionId":"{s}","event":{{"type":"t","seq":{seq},"time":0,"data":{{}}}}}}}}"#
            )
        };
        let ok = vec![ev("a", 0), ev("b", 0), ev("a", 1), ev("b", 1)];
        assert!(seq_contiguous(&ok, |_| Some(0)).is_ok());
        let gap = vec![ev("a", 0), ev("a", 2)];
        assert!(seq_contiguous(&gap, |_| Some(0))
            .unwrap_err()
            .contains("expected 1"));
        let late = vec![ev("a", 5), ev("a", 6)];
        assert!(seq_contiguous(&late, |_| Some(0)).is_err());
        assert!(
            seq_contiguous(&late, |_| None).is_ok(),
            "a resumed session may start anywhere"
        );
    }
}

/// An oracle a check trace may ask for (`# oracle: <name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Oracle {
    /// `exactly-once`: every request sent is answered exactly once ([`exactly_once`]).
    ExactlyOnce,
    /// `id-types`: ids echo with their JSON type ([`id_types_preserved`]).
    IdTypes,
    /// `seq-contiguous`: each session's seq runs from 0 without gaps ([`seq_contiguous`]).
    SeqContiguous,
    /// `turns-increase`: each session's turn/end numbers are 1, 2, 3 …
    TurnsIncrease,
    /// `frames-only`: every line is a JSON-RPC object frame ([`frames_only`]).
    FramesOnly,
    /// `receipt-order`: a prompt's receipt precedes its response ([`receipt_before_response`]).
    ReceiptOrder,
    /// `finished-order`: legacy `session.finished` precedes the prompt response
    /// ([`finished_before_response`]).
    FinishedOrder,
    /// `wait-after-idle`: `session/wait` answers after the idle status ([`wait_after_idle`]).
    WaitAfterIdle,
}

impl Oracle {
    /// Every oracle with its name in traces.
    pub const ALL: [(&'static str, Oracle); 8] = [
        ("exactly-once", Oracle::ExactlyOnce),
        ("id-types", Oracle::IdTypes),
        ("seq-contiguous", Oracle::SeqContiguous),
        ("turns-increase", Oracle::TurnsIncrease),
        ("frames-only", Oracle::FramesOnly),
        ("receipt-order", Oracle::ReceiptOrder),
        ("finished-order", Oracle::FinishedOrder),
        ("wait-after-idle", Oracle::WaitAfterIdle),
    ];

    /// The oracle named `name` in a trace.
    pub fn from_name(name: &str) -> Option<Oracle> {
        Oracle::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, o)| *o)
    }

    /// The rule it enforces: its findings are blamed on this check.
    pub fn rule(self) -> super::CheckId {
        use super::CheckId as R;
        match self {
            Oracle::ExactlyOnce => R::ResponseExactlyOnce,
            Oracle::IdTypes => R::ResponseIdTypePreserved,
            Oracle::SeqContiguous => R::SessionSeqContiguous,
            Oracle::TurnsIncrease => R::TurnCountsPerSession,
            Oracle::FramesOnly => R::StdoutFramesOnly,
            Oracle::ReceiptOrder => R::ReceiptPrecedesResponse,
            Oracle::FinishedOrder => R::LegacySessionFinished,
            Oracle::WaitAfterIdle => R::WaitSettlesAfterIdle,
        }
    }

    /// Judges the oracle over what was written (`sent`) and read (`stdout`, one line each).
    pub fn judge(self, sent: &[u8], stdout: &[Line]) -> Result<(), String> {
        let ids = || -> Vec<Id> { sent_requests(sent).into_iter().map(|(id, _)| id).collect() };
        match self {
            Oracle::ExactlyOnce => exactly_once(&ids(), stdout),
            Oracle::IdTypes => id_types_preserved(&ids(), stdout),
            Oracle::SeqContiguous => seq_contiguous(stdout, |_| Some(0)),
            Oracle::FramesOnly => frames_only(stdout),
            Oracle::ReceiptOrder => receipt_before_response(sent, stdout),
            Oracle::FinishedOrder => finished_before_response(sent, stdout),
            Oracle::WaitAfterIdle => wait_after_idle(sent, stdout),
            Oracle::TurnsIncrease => {
                for (sid, turns) in turns_by_session(stdout) {
                    for (i, n) in turns.iter().enumerate() {
                        if *n != i as u64 + 1 {
                            return Err(format!(
                                "session {sid:?}: turn/end #{} has turn {n}, expected {} (turns so far: {turns:?})",
                                i + 1,
                                i + 1
                            ));
                        }
                    }
                }
                Ok(())
            }
        }
    }
}
