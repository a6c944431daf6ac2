//! `client.line-memory` (docs/CONTRACT.md#s15.2): the `long-lines` scenario's 48 MiB line,
//! with the client's resident size sampled ([`super::memory`]). A client must hold the line to
//! read it, and its language may hold it several times over (bytes, a decoded string, a parsed
//! value); one that copies it at every stage it passes grows by many times its length.

use super::judges::{fail, untestable};
use super::layers::PADDING;
use super::log::{PeerEvent, PeerLog};
use crate::check::CheckId;
use crate::suite::verdict::Verdict;
use std::time::Duration;

/// The growth allowed, in lines: the peak after the line reached the client over the peak
/// before it.
pub const FACTOR: u64 = 8;

/// The verdict on the peers' logs and the samples; `read` is `client.long-lines`' verdict (the
/// line read and the run completed), without which the memory tells nothing.
pub fn judge(peers: &[PeerLog], rss: &[(Duration, u64)], read: &Verdict) -> Verdict {
    if *read != Verdict::Pass {
        return Verdict::Blocked {
            by: CheckId::ClientLineMemory.info().requires.to_vec(),
        };
    }
    let Some((peer, at, bytes)) = peers.iter().find_map(|p| {
        let (at, len) = p.events.iter().enumerate().find_map(long_line)?;
        Some((p, at, len as u64))
    }) else {
        return untestable("no long line was written (the run's reply never came)");
    };
    let Some(split) = peer.delivered(at) else {
        return untestable("what came before the long line never reached the client");
    };
    let Some((before, after)) = super::memory::peaks(rss, split) else {
        return untestable("the client's memory could not be read (/proc)");
    };
    let grew = after.saturating_sub(before);
    if grew > FACTOR * bytes {
        return fail(format!(
            "the reply's frame was a {} MiB line; the client's resident size grew by {} MiB (from {} MiB to {} MiB) while it read the line and finished the run: {:.1} times the line, over the {FACTOR} allowed",
            bytes >> 20,
            grew >> 20,
            before >> 20,
            after >> 20,
            grew as f64 / bytes as f64
        ));
    }
    Verdict::Pass
}

/// Event `i`'s length when it is the long line's writing.
fn long_line((i, (_, e)): (usize, &(Duration, PeerEvent))) -> Option<(usize, usize)> {
    match e {
        PeerEvent::Wrote(l) if l.contains(PADDING) => Some((i, l.len())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer that writes a 1 MiB padded line at 100 ms, which reaches the client once the frame
    /// before it is written, at 300 ms.
    fn peers() -> Vec<PeerLog> {
        let ms = Duration::from_millis;
        let long = format!("{{{PADDING}{}\"}}", "x".repeat(1 << 20));
        vec![PeerLog {
            n: 1,
            argv: Vec::new(),
            events: vec![
                (ms(50), PeerEvent::Wrote("{}".into())),
                (ms(51), PeerEvent::Chunk),
                (ms(100), PeerEvent::Wrote(long)),
                (ms(101), PeerEvent::Chunk),
                (ms(300), PeerEvent::Written),
                (ms(900), PeerEvent::Written),
            ],
        }]
    }

    fn judged(rss: &[(u64, u64)]) -> Verdict {
        let rss: Vec<_> = (rss.iter())
            .map(|&(t, mib)| (Duration::from_millis(t), mib << 20))
            .collect();
        judge(&peers(), &rss, &Verdict::Pass)
    }

    #[test]
    fn growth_from_the_peak_before_the_line_beyond_eight_lines_fails() {
        // The peak before the line (at 250 ms, before the 300 ms delivery) is the base.
        assert_eq!(
            judged(&[(10, 5), (250, 20), (400, 28), (800, 10)]),
            Verdict::Pass
        );
        let Verdict::Fail(f) = judged(&[(10, 5), (250, 20), (400, 29)]) else {
            panic!("9 MiB over a 1 MiB line passed")
        };
        assert!(
            f.reason.contains("grew by 9 MiB (from 20 MiB to 29 MiB)"),
            "{}",
            f.reason
        );
        assert!(matches!(judged(&[(10, 5)]), Verdict::NotTestable { .. }));
    }

    #[test]
    fn a_line_not_read_blocks_the_check_and_no_line_leaves_it_untestable() {
        let unread = crate::client::judges::fail("the run timed out");
        assert_eq!(
            judge(&peers(), &[], &unread),
            Verdict::Blocked {
                by: vec![CheckId::ClientLongLines]
            }
        );
        let quiet = [PeerLog::default()];
        assert!(matches!(
            judge(&quiet, &[], &Verdict::Pass),
            Verdict::NotTestable { .. }
        ));
    }
}
