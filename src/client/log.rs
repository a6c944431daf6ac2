//! What the kit saw of each peer (each launch of the "runtime" by the client), timed from the
//! start of the scenario: the input the judge reads.

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One thing that happened on a peer.
#[derive(Debug, Clone, PartialEq)]
pub enum PeerEvent {
    /// The client wrote this line on the peer's stdin (without its `\n`).
    Received(String),
    /// The peer wrote this frame on stdout (the whole line was handed to the peer process).
    Wrote(String),
    /// The peer was sent this many bytes of stderr (one message).
    Stderr(usize),
    /// The peer was sent one write of stdout bytes.
    Chunk,
    /// The peer process wrote one stdout/stderr message in full.
    Written,
    /// The client closed the peer's stdin.
    StdinEof,
    /// The peer caught a signal (and exited).
    Signal(i32),
    /// The kit told the peer to exit with this code.
    Exit(i32),
    /// The kit told the peer to close its stdout (and live on).
    StdoutClosed,
    /// The link closed without an exit or a signal: the peer was killed (SIGKILL).
    Gone,
}

/// One peer: its number (1-based, in launch order), argv and events.
#[derive(Debug, Clone, Default)]
pub struct PeerLog {
    /// Launch number.
    pub n: usize,
    /// The arguments the client launched it with.
    pub argv: Vec<String>,
    /// What happened, in order, with times from the scenario's start.
    pub events: Vec<(Duration, PeerEvent)>,
}

impl PeerLog {
    /// The requests received, parsed, with their times.
    pub fn requests(&self) -> Vec<(Duration, serde_json::Value)> {
        self.events
            .iter()
            .filter_map(|(t, e)| match e {
                PeerEvent::Received(l) => serde_json::from_str::<serde_json::Value>(l)
                    .ok()
                    .filter(|v| v.get("method").is_some() && v.get("id").is_some())
                    .map(|v| (*t, v)),
                _ => None,
            })
            .collect()
    }

    /// The frames written, parsed, with their times.
    pub fn written(&self) -> Vec<(Duration, serde_json::Value)> {
        self.events
            .iter()
            .filter_map(|(t, e)| match e {
                // A padded frame (the long-lines layer) tells a judge nothing: not parsed again.
                PeerEvent::Wrote(l) if l.len() <= 1 << 20 => {
                    serde_json::from_str(l).ok().map(|v| (*t, v))
                }
                _ => None,
            })
            .collect()
    }

    /// Stdout/stderr messages sent to the peer process and not yet written by it.
    pub fn unwritten(&self) -> usize {
        let sent = self
            .events
            .iter()
            .filter(|(_, e)| matches!(e, PeerEvent::Stderr(_) | PeerEvent::Chunk))
            .count();
        let done = self
            .events
            .iter()
            .filter(|(_, e)| *e == PeerEvent::Written)
            .count();
        sent.saturating_sub(done)
    }
}

/// Every peer of a scenario, shared by their threads (partial logs stay when a client hangs).
pub type Peers = Arc<Mutex<Vec<PeerLog>>>;

/// Appends `ev` to peer `n`'s log.
pub fn note(peers: &Peers, n: usize, at: Duration, ev: PeerEvent) {
    let mut p = peers.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(l) = p.iter_mut().find(|l| l.n == n) {
        l.events.push((at, ev));
    }
}
