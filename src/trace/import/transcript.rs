//! Reading a transcript, in either layout, into layout-independent [`RawEvent`]s.

use super::ImportError;
use serde_json::Value;

/// One event of a transcript, layout-independent.
#[derive(Debug, Clone, PartialEq)]
pub enum RawEvent {
    /// Bytes written to stdin.
    In {
        /// Seconds since spawn.
        t: f64,
        /// Exact bytes.
        bytes: Vec<u8>,
    },
    /// One stdout line; `truncated` holds the full length when only a prefix was stored.
    Out {
        /// Seconds since spawn.
        t: f64,
        /// The line (or its stored prefix).
        line: String,
        /// Full length, when the stored line is a prefix.
        truncated: Option<usize>,
    },
    /// stdin closed.
    Eof {
        /// Seconds since spawn.
        t: f64,
    },
    /// A signal sent (`TERM`, `INT` …).
    Signal {
        /// Seconds since spawn.
        t: f64,
        /// Name without SIG.
        name: String,
    },
    /// The process ended.
    Exit {
        /// Seconds since spawn.
        t: f64,
        /// Exit code (None: unknown).
        code: Option<i32>,
    },
}

/// The launch a `{"meta":{argv, env, files, home_files}}` first line records (the recorder's
/// layout for launch-profile recordings), in words for the trace's description: a trace holds
/// no runtime arguments or files, so whoever replays it passes the same arguments and restores
/// the files.
fn launch_note(meta: &Value) -> String {
    let argv: Vec<&str> = (meta["argv"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let mut note = format!("recorded with runtime arguments `{}`", argv.join(" "));
    if let Some(env) = meta["env"].as_object().filter(|e| !e.is_empty()) {
        let pairs: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
            .collect();
        note.push_str(&format!(", environment {}", pairs.join(" ")));
    }
    let files = ["files", "home_files"]
        .iter()
        .filter_map(|k| meta[*k].as_object())
        .map(|f| f.len())
        .sum::<usize>();
    if files > 0 {
        note.push_str(&format!(", and {files} file(s) the recording wrote first"));
    }
    note
}

/// Parses either transcript layout (`{"t","dir","line"…}` lines with a final `{"exit"…}`, or a
/// `{scenario…}` header followed by `{"t","dir","raw"}` lines).
pub fn parse_transcript(text: &str) -> Result<(Vec<RawEvent>, Option<String>), ImportError> {
    let mut out = Vec::new();
    let mut description = None;
    let mut header_exit: Option<i32> = None;
    let mut launch = None;
    for (i, l) in text.lines().enumerate() {
        let err = |msg: String| ImportError { line: i + 1, msg };
        if l.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(l).map_err(|e| err(format!("not JSON: {e}")))?;
        let o = v
            .as_object()
            .ok_or_else(|| err("not a JSON object".into()))?;
        let t = o.get("t").and_then(Value::as_f64).unwrap_or(0.0);
        if let Some(meta) = o.get("meta") {
            launch = Some(launch_note(meta));
            continue;
        }
        if o.contains_key("scenario") {
            description = o
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            header_exit = o.get("exit_code").and_then(Value::as_i64).map(|c| c as i32);
            continue;
        }
        if o.contains_key("exit") {
            out.push(RawEvent::Exit {
                t,
                code: o.get("exit").and_then(Value::as_i64).map(|c| c as i32),
            });
            continue;
        }
        let dir = o.get("dir").and_then(Value::as_str).unwrap_or("");
        let truncated = o
            .get("truncated")
            .and_then(Value::as_bool)
            .filter(|b| *b)
            .and(o.get("len").and_then(Value::as_u64).map(|n| n as usize));
        match dir {
            "in" => {
                if let Some(note) = o.get("note").and_then(Value::as_str) {
                    if note.starts_with("EOF") {
                        out.push(RawEvent::Eof { t });
                    } else if let Some(sig) = note.strip_prefix("SIG") {
                        out.push(RawEvent::Signal {
                            t,
                            name: sig.to_owned(),
                        });
                    } else {
                        return Err(err(format!("unknown note {note:?}")));
                    }
                    continue;
                }
                if let Some(n) = truncated {
                    return Err(err(format!(
                        "a {n}-byte send is stored truncated; it cannot be replayed"
                    )));
                }
                let bytes = if let Some(raw) = o.get("raw").and_then(Value::as_str) {
                    if raw.contains("chars truncated>") {
                        return Err(err(
                            "a send is stored truncated; it cannot be replayed".into()
                        ));
                    }
                    raw.as_bytes().to_vec()
                } else {
                    let mut b = match o.get("b64").and_then(Value::as_str) {
                        Some(b64) => base64_decode(b64).ok_or_else(|| err("bad base64".into()))?,
                        None => o
                            .get("line")
                            .and_then(Value::as_str)
                            .ok_or_else(|| err("an `in` line without `line`".into()))?
                            .as_bytes()
                            .to_vec(),
                    };
                    let partial = o.get("partial").and_then(Value::as_bool).unwrap_or(false)
                        || o.get("nonl").and_then(Value::as_bool).unwrap_or(false);
                    if !partial {
                        b.push(b'\n');
                    }
                    b
                };
                out.push(RawEvent::In { t, bytes });
            }
            "out" => {
                let line = o
                    .get("line")
                    .or_else(|| o.get("raw"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| err("an `out` line without `line`".into()))?;
                out.push(RawEvent::Out {
                    t,
                    line: line.to_owned(),
                    truncated,
                });
            }
            other => return Err(err(format!("unknown dir {other:?}"))),
        }
    }
    if let Some(code) = header_exit {
        // The contract layout records no EOF; its runs ended by shutdown or by closing stdin.
        let t = out.iter().map(event_t).fold(0.0, f64::max);
        out.push(RawEvent::Eof { t });
        out.push(RawEvent::Exit {
            t,
            code: Some(code),
        });
    }
    let description = match (description, launch) {
        (Some(d), Some(l)) => Some(format!("{d} ({l})")),
        (d, l) => d.or(l),
    };
    Ok((out, description))
}

pub(super) fn event_t(e: &RawEvent) -> f64 {
    match e {
        RawEvent::In { t, .. }
        | RawEvent::Out { t, .. }
        | RawEvent::Eof { t }
        | RawEvent::Signal { t, .. }
        | RawEvent::Exit { t, .. } => *t,
    }
}

/// A binary send's bytes: the recorder's base64 (line breaks allowed, as Python wraps it);
/// anything after the padding is an error, not ignored.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    crate::runtime::image::decode_base64(&s.replace(['\n', '\r'], ""))
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn a_truncated_send_is_an_error_naming_its_line() {
        let t = "{\"t\":0.0,\"dir\":\"in\",\"line\":\"{\\\"pad\",\"len\":9000,\"sha256\":\"x\",\"truncated\":true}\n";
        let e = import(t, "c", "s").unwrap_err();
        assert_eq!(
            e.to_string(),
            "transcript line 1: a 9000-byte send is stored truncated; it cannot be replayed"
        );
    }
}
