//! A case's wire log: what was sent and received, in order, with the time of each line from the
//! case's start, as `tap` records a session. Bounded for a report: the last lines, within a byte
//! budget, each line clipped, what was dropped counted.

use super::Transcript;
use std::time::Duration;

/// When one transcript entry happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Time from the case's start.
    pub at: Duration,
    /// What it was.
    pub what: Wire,
}

/// One transcript entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// A write to the runtime's stdin: `sent[from..to]`.
    Sent {
        /// First byte.
        from: usize,
        /// One past the last byte.
        to: usize,
    },
    /// The runtime's stdout line `stdout[n]`.
    Received(usize),
}

/// Which way a line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Written to the runtime.
    Sent,
    /// Read from its stdout.
    Received,
    /// Not a line: what happened to the runtime's process (in a client report: a peer's launch,
    /// exit, signal, stderr or closed stdin).
    Event,
}

impl Dir {
    /// `sent` or `received`.
    pub fn name(self) -> &'static str {
        match self {
            Dir::Sent => "sent",
            Dir::Received => "received",
            Dir::Event => "event",
        }
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireLine {
    /// Time from the case's start.
    pub at: Duration,
    /// Which way.
    pub dir: Dir,
    /// In a client report, the launch of the runtime (1-based) it belongs to.
    pub peer: Option<usize>,
    /// The line (lossy UTF-8 for what was sent), clipped to [`LINE_BYTES`].
    pub text: String,
    /// The line was longer and was clipped.
    pub clipped: bool,
}

/// A bounded wire log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireLog {
    /// The last lines, oldest first.
    pub lines: Vec<WireLine>,
    /// Lines before them that were left out.
    pub dropped_lines: usize,
    /// Their bytes.
    pub dropped_bytes: usize,
    /// The transcript itself stopped recording (its bound was reached): later traffic is missing.
    pub incomplete: bool,
}

/// Lines a report keeps per case.
pub const MAX_LINES: usize = 200;
/// Bytes (of line text) a report keeps per case.
pub const MAX_BYTES: usize = 64 << 10;
/// Bytes kept of one line.
pub const LINE_BYTES: usize = 4 << 10;

impl Transcript {
    /// The log's last `max_lines` lines within `max_bytes` of text (clipped lines count their
    /// clipped length).
    pub fn wire_log(&self, max_lines: usize, max_bytes: usize) -> WireLog {
        let mut all = Vec::new();
        let entry = |at, dir, text| Entry {
            at,
            dir,
            peer: None,
            text,
        };
        for s in &self.stamps {
            match s.what {
                Wire::Sent { from, to } => {
                    let Some(b) = self.sent.get(from..to) else {
                        continue;
                    };
                    for l in b.split(|&c| c == b'\n') {
                        let l = l.strip_suffix(b"\r").unwrap_or(l);
                        if !l.is_empty() {
                            all.push(entry(s.at, Dir::Sent, l));
                        }
                    }
                }
                Wire::Received(n) => {
                    if let Some(o) = self.stdout.get(n) {
                        all.push(entry(s.at, Dir::Received, o.text().as_bytes()));
                    }
                }
            }
        }
        let mut log = bounded(&all, max_lines, max_bytes);
        log.incomplete = self.truncated;
        // The ring's dropped stamps count one line each (a dropped write may have held more).
        log.dropped_lines += self.stamps_dropped;
        log
    }
}

/// One line of a log before it is bounded.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// Time from the case's start.
    pub at: Duration,
    /// Which way.
    pub dir: Dir,
    /// In a client report, the runtime's launch.
    pub peer: Option<usize>,
    /// The whole line.
    pub text: &'a [u8],
}

/// The last `max_lines` of `all` within `max_bytes` of text (clipped lines count their clipped
/// length), each clipped to [`LINE_BYTES`], what was left out counted.
pub fn bounded(all: &[Entry], max_lines: usize, max_bytes: usize) -> WireLog {
    let mut used = 0;
    let mut keep = all.len();
    while keep > 0 && all.len() - keep < max_lines {
        let n = all[keep - 1].text.len().min(LINE_BYTES);
        if used + n > max_bytes {
            break;
        }
        used += n;
        keep -= 1;
    }
    let mut log = WireLog {
        dropped_lines: keep,
        dropped_bytes: all[..keep].iter().map(|l| l.text.len()).sum(),
        ..WireLog::default()
    };
    for e in &all[keep..] {
        let b = e.text;
        let clipped = b.len() > LINE_BYTES;
        let mut text = String::from_utf8_lossy(&b[..b.len().min(LINE_BYTES)]).into_owned();
        if clipped {
            // Cut at a character boundary (a lossy cut may have left a U+FFFD at the end).
            text = text.trim_end_matches('\u{fffd}').to_owned();
        }
        log.lines.push(WireLine {
            at: e.at,
            dir: e.dir,
            peer: e.peer,
            text,
            clipped,
        });
    }
    log
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::output::Output;

    fn t() -> Transcript {
        let mut t = Transcript::default();
        t.wrote(b"{\"id\":1}\n{\"id\":2}\n", Duration::from_millis(1));
        t.read(
            Output::parse(1, "{\"id\":1,\"result\":{}}".into()),
            Duration::from_millis(3),
        );
        t.wrote(b"partial", Duration::from_millis(5));
        t
    }

    #[test]
    fn lines_come_in_order_with_their_time_and_direction() {
        let log = t().wire_log(MAX_LINES, MAX_BYTES);
        let got: Vec<(u128, &str, &str)> = log
            .lines
            .iter()
            .map(|l| (l.at.as_millis(), l.dir.name(), l.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, "sent", "{\"id\":1}"),
                (1, "sent", "{\"id\":2}"),
                (3, "received", "{\"id\":1,\"result\":{}}"),
                (5, "sent", "partial"),
            ]
        );
        assert_eq!((log.dropped_lines, log.incomplete), (0, false));
    }

    #[test]
    fn the_last_lines_are_kept_within_both_bounds_and_long_lines_clipped() {
        let log = t().wire_log(2, MAX_BYTES);
        assert_eq!(log.lines.len(), 2);
        assert_eq!(log.lines[0].dir, Dir::Received);
        assert_eq!((log.dropped_lines, log.dropped_bytes), (2, 16));
        let log = t().wire_log(MAX_LINES, 10);
        assert_eq!(log.lines.len(), 1, "{log:?}");
        assert_eq!(log.dropped_lines, 3);
        let mut t = Transcript::default();
        t.wrote(&vec![b'x'; LINE_BYTES * 3], Duration::ZERO);
        let log = t.wire_log(MAX_LINES, MAX_BYTES);
        assert!(log.lines[0].clipped);
        assert_eq!(log.lines[0].text.len(), LINE_BYTES);
    }
}
