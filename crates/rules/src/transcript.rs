//! Order rules over a whole transcript, which no frame shows by itself: judged over what was
//! written to the runtime and what it wrote back (each line parsed once, by the reader). A check
//! trace names the ones it needs (`# oracle: finished-order`); each is blamed on its own rule
//! ([`Oracle::rule`]). Every other rule is the stream checker's ([`super::Checker`]), over every
//! transcript.

use dsh_protocol::wire::json::JsonView;
use dsh_protocol::wire::output::Output;
use dsh_protocol::wire::{classify, Classified, Id, LineDecoder, LineEvent};
use serde_json::Value;

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

/// The lines' values (no parse: each [`Output`] was parsed when it was read).
fn parsed(lines: &[Output]) -> Vec<Option<Value>> {
    lines
        .iter()
        .map(|l| l.json().map(|v| v.to_value()))
        .collect()
}

fn notification<'a>(f: &'a Option<Value>, method: &str) -> Option<&'a Value> {
    let v = f.as_ref()?;
    (v.get("method")?.as_str()? == method && v.get("id").is_none())
        .then(|| v.get("params"))
        .flatten()
}

/// `legacy.session-finished`: each successful prompt response is preceded by a `session.finished`
/// for its session, written after that session's previous prompt response.
pub fn finished_before_response(sent: &[u8], lines: &[Output]) -> Result<(), String> {
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
pub fn wait_after_idle(sent: &[u8], lines: &[Output]) -> Result<(), String> {
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

/// An order rule a check trace may ask for (`# oracle: <name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Oracle {
    /// `finished-order`: legacy `session.finished` precedes the prompt response
    /// ([`finished_before_response`]).
    FinishedOrder,
    /// `wait-after-idle`: `session/wait` answers after the idle status ([`wait_after_idle`]).
    WaitAfterIdle,
}

impl Oracle {
    /// Every oracle with its name in traces.
    pub const ALL: [(&'static str, Oracle); 2] = [
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
        match self {
            Oracle::FinishedOrder => super::CheckId::LegacySessionFinished,
            Oracle::WaitAfterIdle => super::CheckId::WaitSettlesAfterIdle,
        }
    }

    /// Judges the oracle over what was written (`sent`) and read (`stdout`).
    pub fn judge(self, sent: &[u8], stdout: &[Output]) -> Result<(), String> {
        match self {
            Oracle::FinishedOrder => finished_before_response(sent, stdout),
            Oracle::WaitAfterIdle => wait_after_idle(sent, stdout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<Output> {
        v.iter()
            .enumerate()
            .map(|(i, s)| Output::parse(i + 1, s.to_string()))
            .collect()
    }

    #[test]
    fn wait_is_judged_against_its_sessions_last_status() {
        let sent = b"{\"id\":\"w\",\"method\":\"session/wait\",\"params\":{\"sessionId\":\"s\"}}\n";
        let st = |s: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session.status","params":{{"sessionId":"s","status":"{s}"}}}}"#
            )
        };
        let w = r#"{"jsonrpc":"2.0","id":"w","result":{}}"#;
        assert!(wait_after_idle(sent, &lines(&[&st("running"), &st("idle"), w])).is_ok());
        assert!(wait_after_idle(sent, &lines(&[&st("running"), w]))
            .unwrap_err()
            .contains("running"));
    }

    #[test]
    fn a_legacy_prompt_answer_needs_its_session_finished_first() {
        let sent = b"{\"id\":1,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\"}}\n";
        let fin = r#"{"jsonrpc":"2.0","method":"session.finished","params":{"sessionId":"s","status":"idle","reason":"done"}}"#;
        let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"accepted":true}}"#;
        assert!(finished_before_response(sent, &lines(&[fin, ok])).is_ok());
        assert!(finished_before_response(sent, &lines(&[ok, fin])).is_err());
    }
}
