//! The stream rules: rules judged over every transcript the suite collects, whatever check's trace
//! produced it, and blamed on their own check. Each rule is written so that another rule's breakage
//! does not trip it (an unsolicited response is left to the frame checks, a replayed event to
//! `turn.no-replay`), which keeps one bug from failing several checks.

use super::oracles::sent_requests;
use crate::runner::Transcript;
use crate::wire::{json, Id};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// One broken stream rule in one transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The check id of the rule.
    pub check: &'static str,
    /// 1-based stdout line of the first offending frame, when there is one.
    pub stdout_line: Option<usize>,
    /// The offending line, clipped.
    pub line: Option<String>,
    /// What broke, in one sentence.
    pub message: String,
}

/// The rules this module judges (the registry marks them `stream`).
pub const RULES: &[&str] = &[
    "stdout.frames-only",
    "stdout.compact",
    "stdout.lf-only",
    "response.exactly-once",
    "response.id-type-preserved",
    "event.time",
    "error.no-reserved-codes",
    "session.seq-contiguous",
];

/// Judges every stream rule over one transcript; at most one finding per rule (the first).
pub fn judge(t: &Transcript) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut push = |f: Finding| {
        if !out.iter().any(|o| o.check == f.check) {
            out.push(f);
        }
    };
    let clip = |l: &str| crate::trace::explain::clip(l, 200);
    if t.crlf_lines > 0 {
        push(Finding {
            check: "stdout.lf-only",
            stdout_line: None,
            line: None,
            message: format!("{} stdout line(s) ended in \\r\\n", t.crlf_lines),
        });
    }
    let sent: Vec<Id> = sent_requests(&t.sent).into_iter().map(|(id, _)| id).collect();
    let mut want: HashMap<String, usize> = HashMap::new();
    for id in &sent {
        *want.entry(id.to_json()).or_default() += 1;
    }
    let mut got: HashMap<String, usize> = HashMap::new();
    let mut seen_events: HashSet<&str> = HashSet::new();
    let mut next_seq: HashMap<String, u64> = HashMap::new();
    for (i, l) in t.stdout.iter().enumerate() {
        let n = Some(i + 1);
        let Some(v) = json::parse(l).ok().map(|p| p.value) else {
            push(Finding {
                check: "stdout.frames-only",
                stdout_line: n,
                line: Some(clip(l)),
                message: format!("stdout line {} is not JSON", i + 1),
            });
            continue;
        };
        let Some(obj) = v.as_object() else {
            push(Finding {
                check: "stdout.frames-only",
                stdout_line: n,
                line: Some(clip(l)),
                message: format!("stdout line {} is JSON but not an object", i + 1),
            });
            continue;
        };
        if !is_compact(l) {
            push(Finding {
                check: "stdout.compact",
                stdout_line: n,
                line: Some(clip(l)),
                message: format!(
                    "stdout line {} has whitespace between tokens, which JSON.stringify never writes",
                    i + 1
                ),
            });
        }
        let method = obj.get("method").and_then(Value::as_str);
        if method.is_none() && obj.contains_key("id") {
            let key = obj.get("id").map(json::to_string).unwrap_or_default();
            let solicited = want.get(&key).copied().unwrap_or(0);
            let count = got.entry(key.clone()).or_default();
            *count += 1;
            if solicited > 0 && *count > solicited {
                push(Finding {
                    check: "response.exactly-once",
                    stdout_line: n,
                    line: Some(clip(l)),
                    message: format!(
                        "id {key} was sent {solicited} time(s) but answered {count} times (stdout line {})",
                        i + 1
                    ),
                });
            }
            if solicited == 0 {
                if let Some(m) = id_type_swap(obj.get("id"), &want) {
                    push(Finding {
                        check: "response.id-type-preserved",
                        stdout_line: n,
                        line: Some(clip(l)),
                        message: m,
                    });
                }
            } else if let Some(e) = obj.get("error") {
                let code = e.get("code").and_then(Value::as_f64);
                if matches!(code, Some(c) if c == -32700.0 || c == -32600.0 || c == -32602.0)
                    || e.get("data").is_some()
                {
                    push(Finding {
                        check: "error.no-reserved-codes",
                        stdout_line: n,
                        line: Some(clip(l)),
                        message: format!(
                            "the error answering id {key} uses a reserved code or carries data (stdout line {})",
                            i + 1
                        ),
                    });
                }
            }
        }
        if method == Some("session.event") {
            let Some(ev) = v.pointer("/params/event") else {
                continue;
            };
            if !ev.get("time").is_some_and(Value::is_number) {
                push(Finding {
                    check: "event.time",
                    stdout_line: n,
                    line: Some(clip(l)),
                    message: format!(
                        "the session.event on stdout line {} has no numeric time in its envelope",
                        i + 1
                    ),
                });
            }
            // A frame identical to an earlier one is a replay: turn.no-replay's business.
            if !seen_events.insert(l.as_str()) {
                continue;
            }
            let sid = v
                .pointer("/params/sessionId")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            match ev.get("seq").and_then(Value::as_u64) {
                None => push(Finding {
                    check: "session.seq-contiguous",
                    stdout_line: n,
                    line: Some(clip(l)),
                    message: format!(
                        "the session.event on stdout line {} has no integer seq",
                        i + 1
                    ),
                }),
                Some(seq) => {
                    if let Some(want) = next_seq.get(&sid) {
                        if seq != *want {
                            push(Finding {
                                check: "session.seq-contiguous",
                                stdout_line: n,
                                line: Some(clip(l)),
                                message: format!(
                                    "session {sid:?}: seq {seq} on stdout line {} follows seq {}",
                                    i + 1,
                                    want - 1
                                ),
                            });
                        }
                    }
                    next_seq.insert(sid, seq + 1);
                }
            }
        }
    }
    out
}

/// A response id that no request carried, but whose other JSON type a request did carry.
fn id_type_swap(id: Option<&Value>, want: &HashMap<String, usize>) -> Option<String> {
    match id? {
        Value::String(s) => {
            let as_num = json::parse(s).ok()?.value;
            (as_num.is_number() && want.contains_key(&json::to_string(&as_num))).then(|| {
                format!("numeric request id {s} was echoed as the string \"{s}\"")
            })
        }
        v @ Value::Number(_) => {
            let text = json::to_string(v);
            want.contains_key(&json::to_string(&Value::String(text.clone())))
                .then(|| format!("string request id \"{text}\" was echoed as the number {text}"))
        }
        _ => None,
    }
}

/// Whether a JSON text has no whitespace outside its strings (as `JSON.stringify` writes it).
pub fn is_compact(text: &str) -> bool {
    let mut in_str = false;
    let mut esc = false;
    for b in text.bytes() {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_str = true,
                b' ' | b'\t' | b'\n' | b'\r' => return false,
                _ => {}
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(sent: &str, lines: &[&str]) -> Transcript {
        let mut t = Transcript::default();
        t.sent = sent.as_bytes().to_vec();
        t.stdout = lines.iter().map(|s| s.to_string()).collect();
        t
    }

    fn rules(f: &[Finding]) -> Vec<&'static str> {
        f.iter().map(|f| f.check).collect()
    }

    #[test]
    fn a_clean_transcript_breaks_no_rule() {
        let tr = t(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n",
            &[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"a b"}}"#,
                r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":0,"time":1,"data":{}}}}"#,
                r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":1,"time":1,"data":{}}}}"#,
            ],
        );
        assert_eq!(judge(&tr), vec![]);
    }

    #[test]
    fn each_rule_is_blamed_once_on_its_own_check() {
        let mut tr = t(
            "{\"id\":1,\"method\":\"x\"}\n{\"id\":2,\"method\":\"y\"}\n",
            &[
                "booting",
                r#"{"jsonrpc": "2.0", "id": 1, "result": {}}"#,
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                r#"{"jsonrpc":"2.0","id":"2","result":{}}"#,
                r#"{"jsonrpc":"2.0","id":"nobody","error":{"code":-32700,"message":"x"}}"#,
                r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":0,"data":{}}}}"#,
                r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":2,"time":1,"data":{}}}}"#,
            ],
        );
        tr.crlf_lines = 2;
        assert_eq!(
            rules(&judge(&tr)),
            [
                "stdout.lf-only",
                "stdout.frames-only",
                "stdout.compact",
                "response.exactly-once",
                "response.id-type-preserved",
                "event.time",
                "session.seq-contiguous"
            ],
            "the unsolicited -32700 error is left to the frame checks"
        );
    }

    #[test]
    fn replayed_events_and_reserved_codes_on_requests() {
        let ev = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"t","seq":0,"time":1,"data":{}}}}"#;
        let tr = t(
            "{\"id\":\"a\",\"method\":\"x\"}\n",
            &[
                ev,
                ev,
                r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"x"}}"#,
            ],
        );
        assert_eq!(rules(&judge(&tr)), ["error.no-reserved-codes"]);
    }

    #[test]
    fn compactness_ignores_whitespace_inside_strings() {
        assert!(is_compact(r#"{"a":"x y","b":"\" z"}"#));
        assert!(!is_compact(r#"{"a":1, "b":2}"#));
        assert!(!is_compact("{\"a\":\"\\\\\" }"));
    }
}
