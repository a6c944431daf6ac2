//! The driver protocol (docs/CLIENT-DRIVERS.md): JSON lines between the kit and a small program
//! that drives the client under test. The kit writes one operation at a time, `{"id":N,"op":…}`,
//! and waits for the line `{"id":N,"ok":true,…}` or `{"id":N,"ok":false,"error":{…}}`.

use serde_json::{json, Value};

/// One operation for the driver.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Launch the runtime and complete the handshake.
    Start,
    /// Run one prompt on a session to its end: `text`, `finish`, `events`.
    Run {
        /// The session id.
        session: String,
        /// The prompt's text.
        text: String,
    },
    /// [`Op::Run`] with a bound: the client's own bound on the run, if it has one, is set to
    /// `timeout_ms` (`"timeout"` on the wire); a client with none runs it unbounded, and the kit's
    /// own bound on the operation shows whether it hangs.
    RunBounded {
        /// The session id.
        session: String,
        /// The prompt's text.
        text: String,
        /// The bound, in milliseconds.
        timeout_ms: u64,
    },
    /// Queue a prompt without waiting for its run: `messageId`.
    Prompt {
        /// The session id.
        session: String,
        /// The prompt's text.
        text: String,
    },
    /// Resume a stored session.
    Resume {
        /// The session id.
        session: String,
    },
    /// Get a session's working directory: `cwd`.
    CwdGet {
        /// The session id.
        session: String,
    },
    /// Set a session's working directory: `cwd`.
    CwdSet {
        /// The session id.
        session: String,
        /// Absolute, or relative to the session's directory.
        path: String,
    },
    /// Several operations at once (each on its own thread or task): `results`, in order.
    Concurrent(Vec<Op>),
    /// Close the client (and so the runtime).
    Close,
}

impl Op {
    /// The operation as the driver reads it (without its `id`).
    pub fn to_json(&self) -> Value {
        match self {
            Op::Start => json!({"op": "start"}),
            Op::Run { session, text } => json!({"op": "run", "session": session, "text": text}),
            Op::RunBounded {
                session,
                text,
                timeout_ms,
            } => json!({"op": "run", "session": session, "text": text, "timeout": timeout_ms}),
            Op::Prompt { session, text } => {
                json!({"op": "prompt", "session": session, "text": text})
            }
            Op::Resume { session } => json!({"op": "resume", "session": session}),
            Op::CwdGet { session } => json!({"op": "cwd-get", "session": session}),
            Op::CwdSet { session, path } => {
                json!({"op": "cwd-set", "session": session, "path": path})
            }
            Op::Concurrent(ops) => {
                json!({"op": "concurrent", "ops": ops.iter().map(Op::to_json).collect::<Vec<_>>()})
            }
            Op::Close => json!({"op": "close"}),
        }
    }

    /// Parses an operation (the driver's side: the reference driver).
    pub fn from_json(v: &Value) -> Result<Op, String> {
        let s = |k: &str| {
            v[k].as_str()
                .map(String::from)
                .ok_or_else(|| format!("operation {v} has no string {k:?}"))
        };
        Ok(match v["op"].as_str().unwrap_or("") {
            "start" => Op::Start,
            "run" => match v["timeout"].as_u64() {
                Some(timeout_ms) => Op::RunBounded {
                    session: s("session")?,
                    text: s("text")?,
                    timeout_ms,
                },
                None => Op::Run {
                    session: s("session")?,
                    text: s("text")?,
                },
            },
            "prompt" => Op::Prompt {
                session: s("session")?,
                text: s("text")?,
            },
            "resume" => Op::Resume {
                session: s("session")?,
            },
            "cwd-get" => Op::CwdGet {
                session: s("session")?,
            },
            "cwd-set" => Op::CwdSet {
                session: s("session")?,
                path: s("path")?,
            },
            "concurrent" => Op::Concurrent(
                v["ops"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(Op::from_json)
                    .collect::<Result<_, _>>()?,
            ),
            "close" => Op::Close,
            other => return Err(format!("unknown operation {other:?}")),
        })
    }
}

/// An error as a driver reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    /// `rpc` (an error response), `transport` (the runtime went away), `timeout`, `protocol`
    /// (the runtime broke the protocol as the client sees it), `unsupported` (the client's API
    /// has no way to do what the operation asks), `other`.
    pub class: String,
    /// The JSON-RPC code, for `rpc`.
    pub code: Option<i64>,
    /// The message.
    pub message: String,
}

/// What one operation came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// `{"ok":true,…}`: the whole result line.
    Ok(Value),
    /// `{"ok":false,"error":…}`.
    Err(DriverError),
    /// No result within the bound.
    TimedOut,
    /// The driver ended (or wrote garbage) before answering.
    DriverEnded(String),
}

impl Outcome {
    /// Reads a result line.
    pub fn parse(v: &Value) -> Outcome {
        if v["ok"] == true {
            return Outcome::Ok(v.clone());
        }
        let e = &v["error"];
        Outcome::Err(DriverError {
            class: e["class"].as_str().unwrap_or("other").to_owned(),
            code: e["code"].as_i64(),
            message: e["message"].as_str().unwrap_or("").to_owned(),
        })
    }

    /// A short description for a failure's reason.
    pub fn describe(&self) -> String {
        match self {
            Outcome::Ok(v) => format!("ok {v}"),
            Outcome::Err(e) => format!(
                "error class {:?} code {} message {:?}",
                e.class,
                e.code.map_or("none".into(), |c| c.to_string()),
                e.message
            ),
            Outcome::TimedOut => "no result (timed out)".into(),
            Outcome::DriverEnded(why) => format!("the driver ended: {why}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_round_trip() {
        let op = Op::Concurrent(vec![
            Op::CwdGet {
                session: "a".into(),
            },
            Op::Run {
                session: "b".into(),
                text: "t".into(),
            },
            Op::RunBounded {
                session: "c".into(),
                text: "t".into(),
                timeout_ms: 5,
            },
        ]);
        assert_eq!(Op::from_json(&op.to_json()).unwrap(), op);
        assert!(Op::from_json(&json!({"op": "fly"})).is_err());
    }
}
