//! The reference runtime in-process, over an in-memory pipe pair: a fast, deterministic peer for
//! a client's tests (in the spirit of `lsp-server`'s `Connection::memory()`). The runtime runs
//! on a thread of its own exactly as [`serve_stdio`](super::serve_stdio) runs it in a process —
//! same framing, same scheduling, same exit codes — without a process, argv or signal handlers.
//!
//! ```
//! use dsh_conformance::runtime::{memory::Connection, Config};
//! use serde_json::json;
//! use std::time::Duration;
//!
//! let mut conn = Connection::memory(Config::default()).unwrap();
//! let answer = conn
//!     .request(json!("init"), "initialize", json!({"cwd": "/", "provider": "deepseek-official",
//!         "model": "deepseek-v4-flash"}), Duration::from_secs(5))
//!     .unwrap();
//! assert_eq!(answer.response["result"]["serverInfo"]["name"], "deepseek-harness-sdk-runtime");
//! assert_eq!(conn.close(Duration::from_secs(5)).unwrap(), 0); // EOF: exit 0
//! ```

use super::Config;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A client's end of an in-process reference runtime.
pub struct Connection {
    to_runtime: Option<std::io::PipeWriter>,
    lines: Receiver<String>,
    runtime: Option<JoinHandle<i32>>,
}

/// What went wrong on a [`Connection`].
#[derive(Debug)]
pub enum ConnectionError {
    /// Creating the pipes or the threads failed.
    Io(std::io::Error),
    /// Nothing came within the deadline.
    Timeout,
    /// The runtime ended (its output closed).
    Closed,
    /// The runtime wrote a line that is not JSON.
    NotJson(String),
}

impl std::fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectionError::Io(e) => write!(f, "in-memory runtime: {e}"),
            ConnectionError::Timeout => f.write_str("in-memory runtime: nothing arrived in time"),
            ConnectionError::Closed => f.write_str("in-memory runtime: it ended"),
            ConnectionError::NotJson(l) => {
                write!(f, "in-memory runtime wrote a non-JSON line: {l}")
            }
        }
    }
}

impl std::error::Error for ConnectionError {}

impl From<std::io::Error> for ConnectionError {
    fn from(e: std::io::Error) -> Self {
        ConnectionError::Io(e)
    }
}

/// The response to a request and the notifications that arrived before it, in order.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The response frame (`result` or `error`).
    pub response: Value,
    /// Every other frame read while waiting for it.
    pub before: Vec<Value>,
}

impl Connection {
    /// Starts the reference runtime with `cfg` on a thread, connected by in-memory pipes.
    pub fn memory(cfg: Config) -> Result<Connection, ConnectionError> {
        let (runtime_in, to_runtime) = std::io::pipe()?;
        let (from_runtime, runtime_out) = std::io::pipe()?;
        let runtime = std::thread::Builder::new()
            .name("dsh-reference-runtime".into())
            .spawn(move || super::serve(cfg, runtime_in, runtime_out))?;
        let (tx, lines) = mpsc::channel();
        std::thread::Builder::new()
            .name("dsh-runtime-output".into())
            .spawn(move || {
                for line in BufReader::new(from_runtime).lines() {
                    let Ok(l) = line else { return };
                    if tx.send(l).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Connection {
            to_runtime: Some(to_runtime),
            lines,
            runtime: Some(runtime),
        })
    }

    /// Writes one line (a newline is added): any bytes, valid frame or not.
    pub fn send_line(&mut self, line: &str) -> Result<(), ConnectionError> {
        let w = self.to_runtime.as_mut().ok_or(ConnectionError::Closed)?;
        let mut b = Vec::with_capacity(line.len() + 1);
        b.extend_from_slice(line.as_bytes());
        b.push(b'\n');
        w.write_all(&b).map_err(|_| ConnectionError::Closed)
    }

    /// Writes one frame.
    pub fn send(&mut self, frame: &Value) -> Result<(), ConnectionError> {
        self.send_line(&frame.to_string())
    }

    /// The next line the runtime writes, as written.
    pub fn recv_line(&self, timeout: Duration) -> Result<String, ConnectionError> {
        self.lines.recv_timeout(timeout).map_err(|e| match e {
            RecvTimeoutError::Timeout => ConnectionError::Timeout,
            RecvTimeoutError::Disconnected => ConnectionError::Closed,
        })
    }

    /// The next frame the runtime writes.
    pub fn recv(&self, timeout: Duration) -> Result<Value, ConnectionError> {
        let l = self.recv_line(timeout)?;
        serde_json::from_str(&l).map_err(|_| ConnectionError::NotJson(l))
    }

    /// Sends a request and reads until its response (matched by `id`), within `timeout`.
    pub fn request(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Answer, ConnectionError> {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )?;
        let until = Instant::now() + timeout;
        let mut before = Vec::new();
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let f = self.recv(left)?;
            let is_response = f.get("method").is_none()
                && (f.get("result").is_some() || f.get("error").is_some());
            if is_response && f.get("id") == Some(&id) {
                return Ok(Answer {
                    response: f,
                    before,
                });
            }
            before.push(f);
        }
    }

    /// Reads frames until `done` accepts one (returned last), within `timeout`.
    pub fn recv_until(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&Value) -> bool,
    ) -> Result<Vec<Value>, ConnectionError> {
        let until = Instant::now() + timeout;
        let mut out = Vec::new();
        loop {
            let f = self.recv(until.saturating_duration_since(Instant::now()))?;
            let stop = done(&f);
            out.push(f);
            if stop {
                return Ok(out);
            }
        }
    }

    /// Closes the runtime's input (EOF) and waits for it to end: its exit code (0 after EOF).
    pub fn close(mut self, timeout: Duration) -> Result<i32, ConnectionError> {
        self.to_runtime = None;
        let until = Instant::now() + timeout;
        let handle = self.runtime.take().ok_or(ConnectionError::Closed)?;
        while !handle.is_finished() {
            if Instant::now() >= until {
                return Err(ConnectionError::Timeout);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        handle.join().map_err(|_| ConnectionError::Closed)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // EOF ends the runtime's thread; it is not joined (a test that drops a connection
        // mid-turn must not wait for the turn).
        self.to_runtime = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T: Duration = Duration::from_secs(10);

    fn init(c: &mut Connection) {
        let a = c
            .request(
                json!(1),
                "initialize",
                json!({"cwd": "/", "provider": "deepseek-official", "model": "deepseek-v4-flash"}),
                T,
            )
            .unwrap();
        assert!(a.response["result"]["serverInfo"].is_object(), "{a:?}");
    }

    #[test]
    fn a_prompt_runs_a_turn_to_idle_and_shutdown_exits_0() {
        let mut c = Connection::memory(Config::default()).unwrap();
        init(&mut c);
        let a = c
            .request(
                json!("p"),
                "session/prompt",
                json!({"sessionId": "s1", "contentBlocks": [{"type": "text", "text": "reply: hi"}]}),
                T,
            )
            .unwrap();
        assert!(a.response.get("result").is_some(), "{a:?}");
        let frames = c
            .recv_until(T, |f| {
                f["method"] == "session.status" && f["params"]["status"] == "idle"
            })
            .unwrap();
        assert!(
            frames
                .iter()
                .any(|f| f["params"]["event"]["type"] == "turn/end"),
            "{frames:?}"
        );
        let unknown = c.request(json!(2), "probe/x", json!({}), T).unwrap();
        assert!(unknown.response["error"]["code"].is_i64(), "{unknown:?}");
        c.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
            .unwrap();
        assert_eq!(c.recv(T).unwrap()["id"], 3);
        assert_eq!(c.close(T).unwrap(), 0);
    }

    #[test]
    fn malformed_lines_get_no_answer_and_eof_ends_it() {
        let mut c = Connection::memory(Config::default()).unwrap();
        c.send_line("{not json").unwrap();
        init(&mut c);
        assert!(matches!(
            c.recv(Duration::from_millis(50)),
            Err(ConnectionError::Timeout)
        ));
        assert_eq!(c.close(T).unwrap(), 0);
    }
}
