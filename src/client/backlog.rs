//! `client.bounded-backlog` (docs/CONTRACT.md#s15.9): during a run, other sessions stream big
//! events in two halves a pause apart, and the client's resident size is sampled
//! ([`super::memory`]). The first half lets the client reach its working size (a garbage
//! collector's young space, buffers); a client that keeps what no one subscribed to grows by
//! about the second half's size again, one that drops it does not.

use super::judges::{completes, fail, untestable};
use super::layers::{event_of, parse, status, Action, Layer};
use super::log::{PeerEvent, PeerLog};
use super::scenario::Observation;
use crate::suite::verdict::Verdict;
use std::time::Duration;

/// The sessions that stream the backlog.
pub const BACKLOG: &str = "kit-backlog-";
/// The scenario's prompt.
pub const PROMPT: &str = "reply: through the backlog";
const SESSIONS: usize = 8;
const EVENTS: usize = 256;
/// Each event's text: 8 × 256 × 16 KiB = 32 MiB a half.
const DELTA: usize = 16 << 10;
/// Between the halves, and between the second half and the rest of the run.
const PAUSE_MS: u64 = 1500;

/// Writes the first half in place of the run's reply, holds the reply and what follows, writes
/// the second half 1.5 s later and the held frames 1.5 s after that.
#[derive(Default)]
pub struct Backlog {
    half: usize,
    until: Option<u64>,
    held: Vec<String>,
}

/// The marker of half `h`'s events (the judge finds the second half by it).
fn marker(h: usize) -> String {
    format!("kit: backlog {h} ")
}

fn half(h: usize) -> Vec<Action> {
    let ids: Vec<String> = (0..SESSIONS).map(|k| format!("{BACKLOG}{k}")).collect();
    let mut out: Vec<Action> = match h {
        1 => ids.iter().map(|s| status(s, "running")).collect(),
        _ => Vec::new(),
    };
    // Written out rather than serialised: 32 MiB through serde's escaping is seconds in a debug
    // build; the text needs none.
    let (pad, mark) = ("x".repeat(DELTA), marker(h));
    for i in 0..EVENTS {
        for s in &ids {
            let seq = (h - 1) * EVENTS + i;
            out.push(Action::Frame(format!(
                r#"{{"jsonrpc":"2.0","method":"session.event","params":{{"sessionId":"{s}","event":{{"type":"assistant/chunk","seq":{seq},"time":1700000000000,"data":{{"turn":1,"step":1,"delta":"{mark}{i} {pad}"}}}}}}}}"#
            )));
        }
    }
    out
}

impl Layer for Backlog {
    fn output(&mut self, line: String, now: u64) -> Vec<Action> {
        if self.half > 0 && self.half < 3 {
            self.held.push(line);
            return Vec::new();
        }
        // The run's reply: its prompt was answered, so the client is collecting the run (not
        // waiting for a response, when it may have to keep what comes).
        let reply = matches!(event_of(&parse(&line)), Some(("assistant/message", s)) if !s.starts_with(BACKLOG));
        if !reply || self.half > 0 {
            return vec![Action::Frame(line)];
        }
        self.half = 1;
        self.until = Some(now + PAUSE_MS);
        self.held.push(line);
        half(1)
    }
    fn tick(&mut self, now: u64) -> Vec<Action> {
        self.half += 1;
        if self.half == 2 {
            self.until = Some(now + PAUSE_MS);
            return half(2);
        }
        self.until = None;
        self.held.drain(..).map(Action::Frame).collect()
    }
    fn deadline(&self) -> Option<u64> {
        self.until
    }
}

/// Growth of the resident size over the second half (its peak over the peak until the first
/// half was in the client's hands) against the second half's size: more than half of it is a
/// FAIL.
pub fn bounded_backlog(o: &Observation) -> Verdict {
    let done = |what: &str| completes(o, 1, PROMPT.trim_start_matches("reply: "), what);
    judge(&o.peers, &o.rss, &done)
}

/// [`bounded_backlog`] on the peers' logs and the samples, `done` judging whether the run
/// completed (driver mode and app mode say it their ways).
pub fn judge(
    peers: &[PeerLog],
    rss: &[(Duration, u64)],
    done: &dyn Fn(&str) -> Verdict,
) -> Verdict {
    let second = marker(2);
    let Some((peer, at)) = peers.iter().find_map(|p| {
        let at = p
            .events
            .iter()
            .position(|(_, e)| matches!(e, PeerEvent::Wrote(l) if l.contains(&second)))?;
        Some((p, at))
    }) else {
        let first = marker(1);
        let began = peers
            .iter()
            .flat_map(|p| &p.events)
            .any(|(_, e)| matches!(e, PeerEvent::Wrote(l) if l.contains(&first)));
        return untestable(match began {
            true => "the client did not read the backlog's first half within the bound, so the second was never written",
            false => "the client never prompted, so no backlog was written",
        });
    };
    let bytes: usize = peer.events[at..]
        .iter()
        .filter_map(|(_, e)| match e {
            PeerEvent::Wrote(l) if l.contains(&second) => Some(l.len()),
            _ => None,
        })
        .sum();
    let Some(split) = peer.delivered(at) else {
        return untestable("the first half never reached the client");
    };
    let Some((before, after)) = super::memory::peaks(rss, split) else {
        return untestable("the client's memory could not be read (/proc)");
    };
    let what = format!(
        "{} MiB of other sessions' events were written during the run",
        (2 * bytes) >> 20
    );
    if let v @ Verdict::Fail(_) = done(&what) {
        return untestable(format!(
            "the run did not complete, so its memory tells nothing: {}",
            reason(&v)
        ));
    }
    let grew = after.saturating_sub(before);
    if grew as usize > bytes / 2 {
        return fail(format!(
            "{what}; the client's resident size grew by {} MiB (from {} MiB to {} MiB) while the second {} MiB were written: it keeps what no one subscribed to",
            grew >> 20,
            before >> 20,
            after >> 20,
            bytes >> 20
        ));
    }
    Verdict::Pass
}

fn reason(v: &Verdict) -> String {
    match v {
        Verdict::Fail(f) => f.reason.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::driver::{Op, Outcome};
    use serde_json::json;

    fn line(session: &str, ty: &str) -> String {
        json!({"jsonrpc": "2.0", "method": "session.event", "params": {"sessionId": session, "event": {"type": ty, "seq": 0, "data": {}}}}).to_string()
    }

    fn count(acts: &[Action], what: &str) -> usize {
        acts.iter()
            .filter(|a| matches!(a, Action::Frame(f) if f.contains(what)))
            .count()
    }

    #[test]
    fn the_halves_come_in_place_of_the_reply_which_follows_them_a_pause_apart() {
        let mut b = Backlog::default();
        assert_eq!(
            count(&b.output(line("s1", "turn/start"), 0), "turn/start"),
            1
        );
        let first = b.output(line("s1", "assistant/message"), 10);
        assert_eq!(count(&first, &marker(1)), SESSIONS * EVENTS);
        assert_eq!(count(&first, "assistant/message"), 0);
        assert!(b.output(line("s1", "turn/end"), 20).is_empty());
        assert_eq!(b.deadline(), Some(10 + PAUSE_MS));
        let second = b.tick(10 + PAUSE_MS);
        assert_eq!(count(&second, &marker(2)), SESSIONS * EVENTS);
        let Some(Action::Frame(f)) = second.last() else {
            panic!()
        };
        let v = parse(f);
        assert_eq!(
            v["params"]["sessionId"],
            format!("{BACKLOG}{}", SESSIONS - 1)
        );
        assert_eq!(v["params"]["event"]["seq"], 2 * EVENTS - 1);
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(
            v["params"]["event"]["data"]["delta"]
                .as_str()
                .unwrap()
                .len()
                > DELTA
        );
        let rest = b.tick(10 + 2 * PAUSE_MS);
        assert_eq!(
            count(&rest, "assistant/message") + count(&rest, "turn/end"),
            2
        );
        assert_eq!(b.deadline(), None);
        assert_eq!(
            count(
                &b.output(line("s1", "assistant/message"), 9999),
                "assistant"
            ),
            1
        );
    }

    fn observed(rss: &[(u64, u64)], ran: bool) -> Observation {
        let ms = Duration::from_millis;
        let wrote = |t: u64, h: usize| {
            (
                ms(t),
                PeerEvent::Wrote(format!("{}{}", marker(h), "x".repeat(8 << 20))),
            )
        };
        let peer = PeerLog {
            n: 1,
            argv: Vec::new(),
            events: vec![
                wrote(100, 1),
                (ms(101), PeerEvent::Chunk),
                wrote(1500, 2),
                wrote(1501, 2),
                // The first half reaches the client late: at 2000 ms.
                (ms(2000), PeerEvent::Written),
                (ms(2001), PeerEvent::Chunk),
                (ms(2500), PeerEvent::Written),
            ],
        };
        let result = Outcome::Ok(json!({"ok": true, "text": "through the backlog"}));
        let run = (
            Op::Run {
                session: "s1".into(),
                text: PROMPT.into(),
            },
            result,
            ms(1),
        );
        Observation {
            peers: if ran { vec![peer] } else { Vec::new() },
            ops: vec![(Op::Start, Outcome::Ok(json!({"ok": true})), ms(1)), run],
            rss: rss.iter().map(|&(t, mib)| (ms(t), mib << 20)).collect(),
        }
    }

    #[test]
    fn growth_over_the_second_half_beyond_half_its_size_fails() {
        // The second half is 16 MiB here: 8 MiB of growth is the limit.
        let flat = observed(
            &[(50, 40), (1000, 50), (1900, 60), (2500, 66), (3000, 60)],
            true,
        );
        assert_eq!(bounded_backlog(&flat), Verdict::Pass);
        let hoard = observed(
            &[(50, 40), (1000, 50), (1900, 60), (2500, 70), (3000, 77)],
            true,
        );
        let Verdict::Fail(f) = bounded_backlog(&hoard) else {
            panic!("{:?}", bounded_backlog(&hoard))
        };
        assert!(
            f.reason.contains("grew by 17 MiB (from 60 MiB to 77 MiB)"),
            "{}",
            f.reason
        );
        let unread = observed(&[], true);
        assert!(matches!(
            bounded_backlog(&unread),
            Verdict::NotTestable { .. }
        ));
        let never = observed(&[(50, 40)], false);
        assert!(matches!(
            bounded_backlog(&never),
            Verdict::NotTestable { .. }
        ));
    }
}
