//! A small in-memory driver for the reference runtime: virtual clock, frames parsed back to JSON.

use dsh_conformance::runtime::{Config, Edition, Runtime};
use serde_json::{json, Value};
use std::path::PathBuf;

pub const T0: u64 = 1_800_000_000_000;

pub struct H {
    pub rt: Runtime,
    pub now: u64,
}

pub fn cfg(edition: Edition) -> Config {
    let mut c = Config::new(edition);
    // A made-up directory: turns must not fail for its absence.
    c.process_cwd = PathBuf::from("/work-dir");
    c.cwd_must_exist = false;
    c
}

impl H {
    pub fn new(edition: Edition) -> H {
        H::with(cfg(edition))
    }

    pub fn with(c: Config) -> H {
        H {
            rt: Runtime::new(c),
            now: T0,
        }
    }

    /// Feeds lines (one batch), without running model work.
    pub fn lines(&mut self, lines: &[&str]) -> Vec<Value> {
        let mut out = Vec::new();
        for l in lines {
            self.rt.handle_line(l, self.now, &mut out);
        }
        parse(&out)
    }

    /// Feeds one request and runs all due work (but not future `slow` work).
    pub fn send(&mut self, v: Value) -> Vec<Value> {
        let mut f = self.lines(&[&v.to_string()]);
        f.extend(self.poll());
        f
    }

    pub fn poll(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        self.rt.poll(self.now, &mut out);
        parse(&out)
    }

    /// Advances the clock through every scheduled deadline.
    pub fn settle(&mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(d) = self.rt.next_deadline() {
            self.now = self.now.max(d);
            all.extend(self.poll());
        }
        all
    }

    pub fn init(&mut self) -> Vec<Value> {
        self.send(json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"/work-dir","provider":"deepseek-official","model":"deepseek-v4-flash"}}))
    }
}

pub fn parse(out: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(out).expect("output is UTF-8");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "frames end with \\n"
    );
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("every output line is JSON");
            assert!(v.is_object() && v["jsonrpc"] == "2.0", "frame: {l}");
            v
        })
        .collect()
}

pub fn prompt(id: impl Into<Value>, sid: &str, text: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id.into(),"method":"session/prompt","params":{"sessionId":sid,"contentBlocks":[{"type":"text","text":text}]}})
}

pub fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id.into(),"method":method,"params":params})
}

/// The response to `id` among frames.
pub fn response<'a>(frames: &'a [Value], id: &Value) -> &'a Value {
    frames
        .iter()
        .find(|f| f.get("method").is_none() && &f["id"] == id)
        .unwrap_or_else(|| panic!("no response {id} in {frames:#?}"))
}

pub fn error_message(frames: &[Value], id: impl Into<Value>) -> String {
    let r = response(frames, &id.into());
    assert_eq!(r["error"]["code"], -32603, "{r}");
    r["error"]["message"].as_str().unwrap().to_string()
}

/// `type` of every session.event of `sid`, in order.
pub fn types(frames: &[Value], sid: &str) -> Vec<String> {
    events(frames, sid)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

pub fn events(frames: &[Value], sid: &str) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| f["method"] == "session.event" && f["params"]["sessionId"] == sid)
        .map(|f| f["params"]["event"].clone())
        .collect()
}

pub fn statuses(frames: &[Value], sid: &str) -> Vec<String> {
    frames
        .iter()
        .filter(|f| f["method"] == "session.status" && f["params"]["sessionId"] == sid)
        .map(|f| f["params"]["status"].as_str().unwrap().to_string())
        .collect()
}

pub fn turn_end(frames: &[Value], sid: &str) -> Vec<Value> {
    events(frames, sid)
        .into_iter()
        .filter(|e| e["type"] == "turn/end")
        .map(|e| e["data"].clone())
        .collect()
}
