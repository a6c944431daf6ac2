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

    /// When everything sent to the peer process before event `at` was written by it (into the
    /// client's pipe), or event `at`'s time if later: the peer acknowledges each stdout or stderr
    /// message in order. `None` while some of it is unwritten.
    pub fn delivered(&self, at: usize) -> Option<Duration> {
        let sent = self.events[..at]
            .iter()
            .filter(|(_, e)| matches!(e, PeerEvent::Chunk | PeerEvent::Stderr(_)))
            .count();
        let last_ack = match sent {
            0 => Duration::ZERO,
            n => {
                (self.events.iter())
                    .filter(|(_, e)| matches!(e, PeerEvent::Written))
                    .nth(n - 1)?
                    .0
            }
        };
        Some(last_ack.max(self.events[at].0))
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

/// The scenario's wire log, as a report keeps it: every peer's lines and what happened to its
/// process, in time order, each tagged with its peer. `sent` is what the client wrote to the
/// peer's stdin, `received` what the peer wrote on its stdout; consecutive stderr writes are one
/// event; writes acknowledged are left out.
pub fn wire_log(peers: &[PeerLog]) -> crate::runner::WireLog {
    use crate::runner::wire_log::{bounded, Dir, Entry, MAX_BYTES, MAX_LINES};
    let mut all: Vec<(Duration, usize, Dir, String)> = Vec::new();
    for p in peers {
        let start = p.events.first().map_or(Duration::ZERO, |e| e.0);
        let launched = match p.argv.is_empty() {
            true => "launched with no arguments".to_owned(),
            false => format!("launched: {}", p.argv.join(" ")),
        };
        all.push((start, p.n, Dir::Event, launched));
        let mut stderr: Option<(Duration, usize, usize)> = None;
        for (at, e) in &p.events {
            if let PeerEvent::Stderr(n) = e {
                let s = stderr.get_or_insert((*at, 0, 0));
                (s.1, s.2) = (s.1 + n, s.2 + 1);
                continue;
            }
            if let Some((t, bytes, writes)) = stderr.take() {
                all.push((t, p.n, Dir::Event, stderr_text(bytes, writes)));
            }
            if let Some((dir, text)) = line(e) {
                all.push((*at, p.n, dir, text));
            }
        }
        if let Some((t, bytes, writes)) = stderr {
            all.push((t, p.n, Dir::Event, stderr_text(bytes, writes)));
        }
    }
    all.sort_by_key(|e| e.0);
    let entries: Vec<Entry> = all
        .iter()
        .map(|(at, n, dir, text)| Entry {
            at: *at,
            dir: *dir,
            peer: Some(*n),
            text: text.as_bytes(),
        })
        .collect();
    bounded(&entries, MAX_LINES, MAX_BYTES)
}

fn stderr_text(bytes: usize, writes: usize) -> String {
    format!("wrote {bytes} bytes of stderr in {writes} writes")
}

/// An event as a line of the log, if it is shown.
fn line(e: &PeerEvent) -> Option<(crate::runner::wire_log::Dir, String)> {
    use crate::runner::wire_log::Dir;
    let event = |s: &str| Some((Dir::Event, s.to_owned()));
    match e {
        PeerEvent::Received(l) => Some((Dir::Sent, l.clone())),
        PeerEvent::Wrote(l) => Some((Dir::Received, l.clone())),
        PeerEvent::Stderr(_) | PeerEvent::Chunk | PeerEvent::Written => None,
        PeerEvent::StdinEof => event("the client closed its stdin"),
        PeerEvent::Signal(s) => event(&format!(
            "caught {} and exited",
            crate::sys::signal_name(*s)
        )),
        PeerEvent::Exit(c) => event(&format!("exited with code {c}")),
        PeerEvent::StdoutClosed => event("closed its stdout and lives on (the scenario's close)"),
        PeerEvent::Gone => event("killed: its link closed without an exit or a signal"),
    }
}

/// A failure with what its reader needs to see it: the scenario it happened in, the scenario's
/// wire log and the end of the client's stderr. Other verdicts are returned as they are.
pub fn with_evidence(
    v: crate::suite::Verdict,
    scenario: &str,
    peers: &[PeerLog],
    stderr: &str,
) -> crate::suite::Verdict {
    let crate::suite::Verdict::Fail(mut f) = v else {
        return v;
    };
    f.case = Some(format!("scenario {scenario}"));
    f.wire_log = Some(wire_log(peers));
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if !lines.is_empty() {
        let tail = &lines[lines.len().saturating_sub(12)..];
        let mut d = std::mem::take(&mut f.details);
        if !d.is_empty() && !d.ends_with('\n') {
            d.push('\n');
        }
        d.push_str("client stderr (tail):\n");
        for l in tail {
            d.push_str("  ");
            d.push_str(l);
            d.push('\n');
        }
        f.details = d;
    }
    crate::suite::Verdict::Fail(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::wire_log::Dir;

    #[test]
    fn the_wire_log_merges_peers_in_time_order_with_their_events() {
        let ms = Duration::from_millis;
        let p1 = PeerLog {
            n: 1,
            argv: vec!["--profile".into(), "sdk".into()],
            events: vec![
                (ms(1), PeerEvent::Received("{\"id\":1}".into())),
                (ms(2), PeerEvent::Stderr(10)),
                (ms(3), PeerEvent::Stderr(5)),
                (ms(4), PeerEvent::Written),
                (ms(9), PeerEvent::Exit(1)),
            ],
        };
        let p2 = PeerLog {
            n: 2,
            argv: vec![],
            events: vec![(ms(5), PeerEvent::Wrote("{\"id\":1,\"result\":{}}".into()))],
        };
        let log = wire_log(&[p1, p2]);
        let got: Vec<(u128, Option<usize>, Dir, &str)> = log
            .lines
            .iter()
            .map(|l| (l.at.as_millis(), l.peer, l.dir, l.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, Some(1), Dir::Event, "launched: --profile sdk"),
                (1, Some(1), Dir::Sent, "{\"id\":1}"),
                (
                    2,
                    Some(1),
                    Dir::Event,
                    "wrote 15 bytes of stderr in 2 writes"
                ),
                (5, Some(2), Dir::Event, "launched with no arguments"),
                (5, Some(2), Dir::Received, "{\"id\":1,\"result\":{}}"),
                (9, Some(1), Dir::Event, "exited with code 1"),
            ]
        );
    }
}
