//! Framing: every output line is one JSON-RPC 2.0 object frame, written compactly, ending in `\n`
//! alone (docs/CONTRACT.md#s2.4); a frame that is one goes on to `response` or `notify`.

use super::sink::Sink;
use super::stream::Checker;
use super::{clip, CheckId, Received};
use dsh_protocol::wire::json::{JsonKind, JsonView};
use dsh_protocol::wire::output::{Frame, NotAFrame, Output};

/// The byte offset of the first whitespace between two tokens of a JSON text, if any (whitespace
/// inside strings is text).
fn whitespace_between_tokens(line: &str) -> Option<usize> {
    let (mut in_str, mut esc) = (false, false);
    for (i, b) in line.bytes().enumerate() {
        match (in_str, esc, b) {
            (true, true, _) => esc = false,
            (true, false, b'\\') => esc = true,
            (true, false, b'"') | (false, _, b'"') => in_str = !in_str,
            (false, _, b' ' | b'\t' | b'\n' | b'\r') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Whether two keys of at most 8 bytes are the same, compared as words (this crate builds
/// against the published dsh-protocol, so the tape's own comparison is not used).
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let word = |s: &[u8]| s.iter().fold(0u64, |w, &c| w << 8 | u64::from(c));
    a.len() == b.len() && a.len() <= 8 && word(a) == word(b)
}

/// The member order upstream writes for a frame with these three keys, and whether it is a
/// response; `None` when they are no frame's. Keys are compared as words ([`same`]): sorting
/// them compared with `memcmp`, which libFuzzer builds intercept, and every frame paid for it.
fn frame_keys(keys: [&str; 3]) -> Option<([&'static str; 3], bool)> {
    const NAMES: [&str; 6] = ["jsonrpc", "id", "result", "error", "method", "params"];
    let bit = |k: &str| {
        NAMES
            .iter()
            .position(|n| same(n, k))
            .map_or(0, |i| 1u8 << i)
    };
    Some(match keys.map(bit).iter().fold(0, |a, b| a | b) {
        0b000111 => (["jsonrpc", "id", "result"], true),
        0b001011 => (["jsonrpc", "id", "error"], true),
        0b110001 => (["jsonrpc", "method", "params"], false),
        _ => return None,
    })
}

impl Checker {
    /// Judges one output line's framing, then its response or notification.
    pub(super) fn judge(&mut self, out: &Output, sink: &mut Sink) -> Option<Received> {
        if out.crlf {
            sink.add(CheckId::StdoutLfOnly, "the line ends in \\r\\n");
        }
        let line = out.text();
        let frame = match (out.json(), out.frame()) {
            (Some(v), _) => v,
            (None, Frame::NotAFrame(NotAFrame::NotJson(e))) => {
                sink.add(
                    CheckId::StdoutFramesOnly,
                    format!("output is not JSON: {e}"),
                );
                return None;
            }
            (None, f) => {
                let why = match f {
                    Frame::NotAFrame(w) => w.to_string(),
                    _ => "not JSON".to_owned(),
                };
                sink.add(CheckId::StdoutFramesOnly, format!("output is {why}"));
                return None;
            }
        };
        if let Some((c, start)) = out.foreign_padding {
            let place = if start { "begins" } else { "ends" };
            sink.add(
                CheckId::StdoutFramesOnly,
                format!("the line {place} with U+{:04X}: JavaScript's reader trims it, but Python's json.loads refuses the line, so the Python SDK loses the frame", c as u32),
            );
        }
        // Clients see values, not bytes: `stdout.compact` is whitespace between tokens, and
        // upstream's exact bytes (escapes, number forms, member order) only under
        // `--strict-upstream`; how an id echoes is the id rule's (`frame.id-number-echo`).
        if self.profile.member_order {
            // Compared as it would be written (frames are checked by the thousand); written out
            // only to say what was expected.
            if !frame.writes(line.as_bytes()) {
                let mut text = Vec::new();
                frame.write(&mut text);
                sink.add(
                    CheckId::StdoutCompact,
                    format!(
                        "output is not written as JSON.stringify writes it (expected {})",
                        clip(&String::from_utf8_lossy(&text))
                    ),
                );
            }
        } else if let Some(at) = whitespace_between_tokens(line) {
            sink.add(
                CheckId::StdoutCompact,
                format!(
                    "output has whitespace between tokens at byte {at}: JSON.stringify writes none"
                ),
            );
        }
        if frame.kind() != JsonKind::Object {
            sink.add(CheckId::StdoutFramesOnly, "output is not a JSON object");
            return None;
        }
        if frame.get("jsonrpc").and_then(JsonView::as_str) != Some("2.0") {
            sink.add(
                CheckId::StdoutFramesOnly,
                "output lacks \"jsonrpc\":\"2.0\"",
            );
        }
        // The keys of the three members a frame has, on the stack (the list of all of them is
        // built only to report another count).
        let (mut keys, mut count) = ([""; 3], 0);
        for (k, _) in frame.members() {
            if let Some(slot) = keys.get_mut(count) {
                *slot = k;
            }
            count += 1;
        }
        let (order, response) = match (count, frame_keys(keys)) {
            (3, Some(found)) => found,
            _ => {
                let keys: Vec<&str> = frame.members().map(|(k, _)| k).collect();
                sink.add(
                    CheckId::StdoutFramesOnly,
                    format!("output members are {keys:?}, neither a response nor a notification"),
                );
                return None;
            }
        };
        if keys != order && self.profile.member_order {
            sink.add(
                CheckId::StdoutCompact,
                format!("output members are in the order {keys:?}, upstream writes {order:?}"),
            );
        }
        if response {
            // A response identical to an earlier one is a repeat: never an answer to a line that
            // must get none, whatever its id.
            let repeat = !self.responses_seen.insert(line.to_owned());
            Some(self.response(frame, repeat, sink))
        } else {
            self.notification(frame, sink)
        }
    }
}
