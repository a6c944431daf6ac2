//! An `AbortController`-style signal for requests.

use std::sync::{Arc, Mutex};

/// Why a request was aborted: an error (its message is used verbatim) or any other value
/// (upstream wraps it: `JSON-RPC request aborted: <reason>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AbortReason {
    /// Like aborting with an `Error`.
    Error(String),
    /// Like aborting with a non-Error value.
    Plain(String),
}

impl AbortReason {
    /// The message the request is rejected with.
    pub fn message(&self) -> String {
        match self {
            AbortReason::Error(m) => m.clone(),
            AbortReason::Plain(r) => format!("JSON-RPC request aborted: {r}"),
        }
    }
}

type Listener = Box<dyn FnOnce(&AbortReason) + Send>;

#[derive(Default)]
struct State {
    reason: Option<AbortReason>,
    listeners: Vec<Listener>,
}

/// A shareable abort signal; aborting it rejects every request sent with it that is still pending.
#[derive(Clone, Default)]
pub struct AbortSignal {
    state: Arc<Mutex<State>>,
}

impl AbortSignal {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal (only the first call counts).
    pub fn abort(&self, reason: AbortReason) {
        let listeners = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.reason.is_some() {
                return;
            }
            s.reason = Some(reason.clone());
            std::mem::take(&mut s.listeners)
        };
        for l in listeners {
            l(&reason);
        }
    }

    /// The reason, once fired.
    pub fn reason(&self) -> Option<AbortReason> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reason
            .clone()
    }

    pub(crate) fn on_abort(&self, l: Listener) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match s.reason.clone() {
            Some(r) => {
                drop(s);
                l(&r)
            }
            None => s.listeners.push(l),
        }
    }
}
