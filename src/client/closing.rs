//! Layers on `shutdown` (docs/CONTRACT.md#s15.6), sans-IO like `layers.rs`: the runtime answers
//! it late, or never; either way it exits as soon as its stdin ends (§7).

use super::layers::{Action, Layer};
use serde_json::{json, Value};

/// How long after its (late) answer the runtime exits, as the release does (§3.6).
const EXIT_AFTER_MS: u64 = 64;

/// `shutdown` is kept from the runtime and answered by the layer `delay_ms` late (a runtime
/// flushing a large session store), the exit following; stdin's end exits it at once.
pub struct SlowShutdown {
    /// How late the answer comes.
    pub delay_ms: u64,
    pending: Option<(Value, u64)>,
    exit_at: Option<u64>,
}

impl SlowShutdown {
    /// Answers `shutdown` `delay_ms` late.
    pub fn new(delay_ms: u64) -> SlowShutdown {
        SlowShutdown {
            delay_ms,
            pending: None,
            exit_at: None,
        }
    }
}

impl Layer for SlowShutdown {
    fn exit_delay_ms(&self) -> u64 {
        EXIT_DELAY_MS
    }
    fn intercept(&mut self, f: &Value, now: u64) -> bool {
        let shutdown = f["method"] == "shutdown" && f.get("id").is_some();
        if shutdown && self.pending.is_none() && self.exit_at.is_none() {
            self.pending = Some((f["id"].clone(), now + self.delay_ms));
        }
        shutdown
    }
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        vec![Action::Frame(line)]
    }
    fn tick(&mut self, now: u64) -> Vec<Action> {
        if let Some((id, _)) = self.pending.take() {
            self.exit_at = Some(now + EXIT_AFTER_MS);
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {}});
            return vec![Action::Frame(answer.to_string())];
        }
        self.exit_at = None;
        vec![Action::Exit(0)]
    }
    fn deadline(&self) -> Option<u64> {
        self.pending.as_ref().map(|p| p.1).or(self.exit_at)
    }
}

/// `shutdown` is kept from the runtime and never answered; the runtime exits when its stdin
/// ends (a runtime whose shutdown handler failed: §11.4).
#[derive(Default)]
pub struct RefusedShutdown;

/// How long the runtimes of the shutdown scenarios take to exit once stdin ends: within the
/// official clients' grace (1 s, §8.6), but long enough that a client signalling at once is
/// seen to (a runtime that exited in the same millisecond would hide it).
pub const EXIT_DELAY_MS: u64 = 300;

impl Layer for RefusedShutdown {
    fn intercept(&mut self, f: &Value, _now: u64) -> bool {
        f["method"] == "shutdown"
    }
    fn exit_delay_ms(&self) -> u64 {
        EXIT_DELAY_MS
    }
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        vec![Action::Frame(line)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::layers::Stack;

    #[test]
    fn a_slow_shutdown_is_answered_late_then_exits() {
        let mut s = Stack(vec![Box::new(SlowShutdown::new(100))]);
        let req = json!({"jsonrpc": "2.0", "id": "x", "method": "shutdown"});
        assert!(s.intercept(&req, 10));
        assert_eq!(s.deadline(), Some(110));
        let acts = s.tick(110);
        assert!(matches!(&acts[..], [Action::Frame(f)] if f.contains("\"x\"")));
        assert_eq!(s.deadline(), Some(174));
        assert_eq!(s.tick(174), vec![Action::Exit(0)]);
        assert_eq!(s.deadline(), None);
    }

    #[test]
    fn a_refused_shutdown_never_reaches_the_runtime_and_nothing_else_is_kept() {
        let mut s = Stack(vec![Box::new(RefusedShutdown)]);
        assert!(s.intercept(&json!({"id": 1, "method": "shutdown"}), 0));
        assert!(!s.intercept(&json!({"id": 2, "method": "session/prompt"}), 0));
        assert_eq!(s.deadline(), None);
    }
}
