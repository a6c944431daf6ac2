//! The reference client's two faces: driven on stdin by the driver protocol ([`drive`]), and
//! the reference app that runs one prompt ([`app`]).

use super::{err, Bug, Client, WAIT};
use crate::client::driver::{DriverError, Op};
use serde_json::{json, Value};
use std::io::BufRead;
use std::time::Duration;

fn simple(op: &Op) -> Option<(&'static str, Value)> {
    Some(match op {
        Op::Resume { session } => ("session/resume", json!({"sessionId": session})),
        Op::CwdGet { session } => (
            "session/working-directory/get",
            json!({"sessionId": session}),
        ),
        Op::CwdSet { session, path } => (
            "session/working-directory/set",
            json!({"sessionId": session, "path": path}),
        ),
        Op::Prompt { session, text } => (
            "session/prompt",
            json!({"sessionId": session, "contentBlocks": [{"type": "text", "text": text}]}),
        ),
        _ => return None,
    })
}

/// The reference app (app mode): runs the prompt in `DSH_CONFORMANCE_PROMPT` (else stdin's
/// first line) on one session, bounded by `DSH_CONFORMANCE_RUN_TIMEOUT_MS` when set, prints the
/// reply and exits 0; prints the error on stderr and exits 1 when the run fails. Returns the
/// exit code.
pub fn app(bug: Option<Bug>) -> i32 {
    let prompt = std::env::var("DSH_CONFORMANCE_PROMPT").unwrap_or_else(|_| {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        line.trim_end().to_owned()
    });
    let mut c = match Client::start(bug) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("app: cannot start the runtime: {}", e.message);
            return 1;
        }
    };
    let bound = std::env::var("DSH_CONFORMANCE_RUN_TIMEOUT_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis);
    let run = c.run("app", &prompt, bound);
    c.close();
    match run {
        Ok(r) => {
            crate::outln!("{}", r["text"].as_str().unwrap_or(""));
            0
        }
        Err(e) => {
            eprintln!("app: the run failed ({}): {}", e.class, e.message);
            1
        }
    }
}

/// The driver: one client, operations on stdin, results on stdout. Returns the exit code.
pub fn drive(bug: Option<Bug>) -> i32 {
    let mut client: Option<Client> = None;
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let result = Op::from_json(&v)
            .map_err(|e| err("other", None, e))
            .and_then(|op| perform(&mut client, &op, bug));
        let mut out = match result {
            Ok(r) => {
                let mut r = if r.is_object() { r } else { json!({}) };
                r["ok"] = json!(true);
                r
            }
            Err(e) => {
                json!({"ok": false, "error": {"class": e.class, "code": e.code, "message": e.message}})
            }
        };
        out["id"] = v["id"].clone();
        crate::outln!("{out}");
    }
    if let Some(mut c) = client {
        c.close();
    }
    0
}

fn perform(client: &mut Option<Client>, op: &Op, bug: Option<Bug>) -> Result<Value, DriverError> {
    if *op == Op::Start {
        *client = Some(Client::start(bug)?);
        return Ok(json!({}));
    }
    let c = client
        .as_mut()
        .ok_or_else(|| err("other", None, "not started"))?;
    match op {
        Op::Close => {
            c.close();
            *client = None;
            Ok(json!({}))
        }
        Op::Run { session, text } => c.run(session, text, None),
        Op::RunBounded {
            session,
            text,
            timeout_ms,
        } => c.run(session, text, Some(Duration::from_millis(*timeout_ms))),
        Op::Concurrent(ops) => {
            let ids: Vec<_> = ops
                .iter()
                .map(|o| {
                    simple(o)
                        .ok_or_else(|| err("other", None, "only requests run concurrently"))
                        .and_then(|(m, p)| c.send(m, p))
                })
                .collect::<Result<_, _>>()?;
            let results: Vec<Value> = ids
                .iter()
                .map(|id| match c.response(id, WAIT) {
                    Ok(mut r) => {
                        r["ok"] = json!(true);
                        r
                    }
                    Err(e) => json!({"ok": false, "error": {"class": e.class, "code": e.code, "message": e.message}}),
                })
                .collect();
            Ok(json!({ "results": results }))
        }
        other => {
            let (m, p) = simple(other).ok_or_else(|| err("other", None, "unsupported"))?;
            c.request(m, p)
        }
    }
}
