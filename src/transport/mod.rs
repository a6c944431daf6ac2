//! A synchronous JSON-RPC line transport, usable by a client and by a server (docs/CONTRACT.md#s2,
//! #s12.1).
//!
//! It mirrors upstream `JsonRpcLineTransport`: requests get `req_` + 32 hex ids; a pending request is
//! settled only by a response with its id (unknown ids are ignored); error responses keep
//! (code, message, data) verbatim; with no request handler a request is answered
//! `-32601 method not found: <m>`, a handler failure `-32603 <message>`; notifications with no
//! handler are dropped; input end or error rejects everything pending; `close()` rejects pending
//! without closing the stream; `flush()` is a barrier.
//!
//! One deliberate difference: after `close()` this transport refuses writes
//! ([`TransportError::Closed`]). Upstream's class still writes; both official clients refuse at
//! their own level, and a kit that keeps writing into a closed peer hides bugs.
//!
//! Input is pushed in with [`Transport::receive`] (bytes, any chunking) by whoever owns the reader,
//! so the transport itself spawns no threads and is deterministic under test.

mod abort;
mod pending;

pub use abort::{AbortReason, AbortSignal};
pub use pending::{PendingRequest, RequestError};

use crate::wire::{self, classify, Classified, ErrorCode, Id, LineDecoder, LineEvent};
use pending::Slot;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Why a request handler failed; becomes a `-32603` error with `message` verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerError {
    /// The message written into the error frame.
    pub message: String,
}

impl<T: Into<String>> From<T> for HandlerError {
    fn from(m: T) -> Self {
        HandlerError { message: m.into() }
    }
}

/// Answers a request: `Ok(result)` or a failure.
pub type RequestHandler =
    Box<dyn FnMut(&str, &Map<String, Value>) -> Result<Value, HandlerError> + Send>;
/// Receives a notification (method, normalised params).
pub type NotificationHandler = Box<dyn FnMut(&str, &Map<String, Value>) + Send>;

/// A failure to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The transport was closed; nothing more is written.
    Closed,
    /// The output refused the bytes.
    Write(String),
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Closed => f.write_str("JSON-RPC transport closed"),
            TransportError::Write(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for TransportError {}

struct Inner {
    out: Box<dyn Write + Send>,
    decoder: LineDecoder,
    pending: HashMap<Id, Arc<Slot>>,
    request_handler: Option<RequestHandler>,
    notification_handler: Option<NotificationHandler>,
    closed: bool,
    scratch: Vec<u8>,
}

/// The transport. Cheap to clone: clones share one connection.
#[derive(Clone)]
pub struct Transport {
    inner: Arc<Mutex<Inner>>,
}

impl Transport {
    /// A transport writing frames to `out`.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        Transport {
            inner: Arc::new(Mutex::new(Inner {
                out: Box::new(out),
                decoder: LineDecoder::default(),
                pending: HashMap::new(),
                request_handler: None,
                notification_handler: None,
                closed: false,
                scratch: Vec::new(),
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Installs the request handler (without one, requests get `-32601 method not found: <m>`).
    pub fn set_request_handler(&self, h: RequestHandler) {
        self.lock().request_handler = Some(h);
    }

    /// Installs the notification handler (without one, notifications are dropped).
    pub fn set_notification_handler(&self, h: NotificationHandler) {
        self.lock().notification_handler = Some(h);
    }

    /// Sends a request with a fresh `req_<32 hex>` id; returns its pending handle.
    pub fn request(
        &self,
        method: &str,
        params: Option<&Value>,
    ) -> Result<PendingRequest, RequestError> {
        self.request_with_signal(method, params, None)
    }

    /// Sends a request that `signal` can abort (a pre-aborted signal rejects at once, nothing is sent).
    pub fn request_with_signal(
        &self,
        method: &str,
        params: Option<&Value>,
        signal: Option<&AbortSignal>,
    ) -> Result<PendingRequest, RequestError> {
        if let Some(reason) = signal.and_then(AbortSignal::reason) {
            return Err(RequestError::Aborted(reason.message()));
        }
        let id = Id::Str(format!("req_{}", uuid::Uuid::new_v4().simple()));
        let slot = Arc::new(Slot::default());
        {
            let mut g = self.lock();
            if g.closed {
                return Err(RequestError::Closed);
            }
            g.pending.insert(id.clone(), slot.clone());
            let inner = &mut *g;
            inner.scratch.clear();
            wire::write::request(
                &mut inner.scratch,
                &id,
                method,
                params.or(Some(&Value::Object(Map::new()))),
            );
            if let Err(e) = inner.out.write_all(&inner.scratch) {
                inner.pending.remove(&id);
                return Err(RequestError::Write(e.to_string()));
            }
        }
        if let Some(signal) = signal {
            let this = self.clone();
            let sid = id.clone();
            signal.on_abort(Box::new(move |reason: &AbortReason| {
                if let Some(slot) = this.lock().pending.remove(&sid) {
                    slot.settle(Err(RequestError::Aborted(reason.message())));
                }
            }));
        }
        Ok(PendingRequest::new(id, slot))
    }

    /// Sends a notification; `params` is omitted from the frame when `None`.
    pub fn notify(&self, method: &str, params: Option<&Value>) -> Result<(), TransportError> {
        let mut g = self.lock();
        if g.closed {
            return Err(TransportError::Closed);
        }
        let inner = &mut *g;
        inner.scratch.clear();
        wire::write::notification(&mut inner.scratch, method, params);
        inner
            .out
            .write_all(&inner.scratch)
            .map_err(|e| TransportError::Write(e.to_string()))
    }

    /// A barrier: returns once everything written before it has been handed to the output.
    pub fn flush(&self) -> Result<(), TransportError> {
        self.lock()
            .out
            .flush()
            .map_err(|e| TransportError::Write(e.to_string()))
    }

    /// Feeds received bytes (any chunking); dispatches every complete line.
    pub fn receive(&self, bytes: &[u8]) {
        let mut lines: Vec<String> = Vec::new();
        {
            let mut g = self.lock();
            g.decoder.push(bytes, &mut |e| {
                if let LineEvent::Line(l) = e {
                    lines.push(l.to_owned());
                }
            });
        }
        for line in lines {
            self.handle_line(&line);
        }
    }

    /// Input ended: an unterminated tail is dropped, every pending request is rejected.
    pub fn receive_end(&self) {
        let mut g = self.lock();
        g.decoder.finish();
        fail_pending(&mut g, RequestError::InputClosed);
    }

    /// Input failed: every pending request is rejected with that error.
    pub fn receive_error(&self, message: &str) {
        fail_pending(&mut self.lock(), RequestError::Input(message.to_owned()));
    }

    /// Rejects every pending request with `JSON-RPC transport closed` and refuses later writes.
    /// The output stream itself is left open (its owner closes it).
    pub fn close(&self) {
        let mut g = self.lock();
        g.closed = true;
        fail_pending(&mut g, RequestError::Closed);
    }

    /// Whether [`Transport::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// How many requests await a response.
    pub fn pending_count(&self) -> usize {
        self.lock().pending.len()
    }

    fn handle_line(&self, line: &str) {
        match classify(line) {
            Classified::Request(req) => {
                // The handler runs outside the lock so it may use the transport itself.
                let handler = self.lock().request_handler.take();
                let answer = match handler {
                    None => Err((
                        ErrorCode::METHOD_NOT_FOUND,
                        format!("method not found: {}", req.method),
                    )),
                    Some(mut h) => {
                        let r = h(&req.method, req.params.object())
                            .map_err(|e| (ErrorCode::INTERNAL_ERROR, e.message));
                        self.lock().request_handler.get_or_insert(h);
                        r
                    }
                };
                let mut g = self.lock();
                if g.closed {
                    return;
                }
                let inner = &mut *g;
                inner.scratch.clear();
                match answer {
                    Ok(v) => wire::write::result(&mut inner.scratch, &req.id, &v),
                    Err((code, msg)) => wire::write::error(&mut inner.scratch, &req.id, code, &msg),
                }
                let _ = inner.out.write_all(&inner.scratch);
            }
            Classified::Response(resp) => {
                let slot = self.lock().pending.remove(&resp.id);
                if let Some(slot) = slot {
                    slot.settle(match resp.outcome {
                        wire::Outcome::Result(v) => Ok(v.map(wire::json::Deep::into_inner)),
                        wire::Outcome::Error(e) => Err(RequestError::Response(e)),
                    });
                }
            }
            Classified::Notification(n) => {
                let handler = self.lock().notification_handler.take();
                if let Some(mut h) = handler {
                    h(&n.method, n.params.object());
                    self.lock().notification_handler.get_or_insert(h);
                }
            }
            Classified::Ignored(_) => {}
        }
    }
}

fn fail_pending(inner: &mut Inner, err: RequestError) {
    for (_, slot) in inner.pending.drain() {
        slot.settle(Err(err.clone()));
    }
}
