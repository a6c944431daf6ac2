//! A request awaiting its response.

use crate::wire::{ErrorObject, Id};
use serde_json::Value;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Why a request did not resolve.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    /// The peer answered with an error object (code, message, data verbatim).
    Response(ErrorObject),
    /// `close()` was called: `JSON-RPC transport closed`.
    Closed,
    /// The input ended: `JSON-RPC input closed`.
    InputClosed,
    /// The input failed with this error.
    Input(String),
    /// Aborted by its signal, with the reason's message.
    Aborted(String),
    /// Writing the request failed; it was never pending.
    Write(String),
    /// No response within the wait's bound (the request stays pending).
    Timeout,
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Response(e) => match e.code {
                Some(c) => write!(f, "{} ({})", e.message, crate::wire::json::js_number(c)),
                None => f.write_str(&e.message),
            },
            RequestError::Closed => f.write_str("JSON-RPC transport closed"),
            RequestError::InputClosed => f.write_str("JSON-RPC input closed"),
            RequestError::Input(m) | RequestError::Aborted(m) | RequestError::Write(m) => {
                f.write_str(m)
            }
            RequestError::Timeout => f.write_str("timed out waiting for the response"),
        }
    }
}

impl std::error::Error for RequestError {}

/// The settled outcome: `Ok(None)` is a response without `result` (JavaScript `undefined`).
pub type Settled = Result<Option<Value>, RequestError>;

#[derive(Default)]
pub(crate) struct Slot {
    state: Mutex<Option<Settled>>,
    ready: Condvar,
}

impl Slot {
    pub(crate) fn settle(&self, v: Settled) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = Some(v);
            self.ready.notify_all();
        }
    }
}

/// Handle on a sent request.
pub struct PendingRequest {
    id: Id,
    slot: std::sync::Arc<Slot>,
}

impl PendingRequest {
    pub(crate) fn new(id: Id, slot: std::sync::Arc<Slot>) -> Self {
        PendingRequest { id, slot }
    }

    /// The id the request was sent with.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// The outcome if it has settled, without waiting.
    pub fn try_result(&self) -> Option<Settled> {
        self.slot
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Waits up to `timeout` for the outcome.
    pub fn wait(&self, timeout: Duration) -> Settled {
        let deadline = Instant::now() + timeout;
        let mut s = self.slot.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(v) = s.as_ref() {
                return v.clone();
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(RequestError::Timeout);
            }
            s = self
                .slot
                .ready
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}
