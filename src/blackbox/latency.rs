//! How long the runtime under test takes, as observed: the windows the fuzzer waits out in vain
//! (a runtime that never exits after `shutdown`, a request never answered) scale with it, so that
//! a fast runtime is not waited on for the full `--timeout` each time it breaks a rule that way.
//!
//! A window is the slowest latency of its kind seen so far (by any run of the same runtime, in any
//! lane) times [`Adapt::factor`], at least [`Adapt::floor`] and at most the ceiling (the
//! `--timeout` deadline). Until a latency of its kind was seen, a window is the ceiling.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a wait waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// An answer to a request (from its write; the first `initialize` includes the boot).
    Answer,
    /// A session's turn, from `running` back to `idle`.
    Turn,
    /// The process's exit, from `shutdown`'s answer or EOF.
    Exit,
    /// A fresh process's first `initialize` answer, from its write at the start (its boot;
    /// noted as an [`Wait::Answer`] too). No wait uses it: `--processes auto` does.
    Boot,
}

/// How windows scale with the observed latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adapt {
    /// A window is this many times the slowest latency of its kind.
    pub factor: u32,
    /// And at least this long (never longer than its ceiling).
    pub floor: Duration,
}

impl Default for Adapt {
    fn default() -> Self {
        Adapt {
            factor: 5,
            floor: Duration::from_secs(1),
        }
    }
}

/// The slowest latencies of one runtime seen so far, in microseconds (0: none yet).
#[derive(Debug, Default)]
pub struct Latency {
    answer: AtomicU64,
    turn: AtomicU64,
    exit: AtomicU64,
    boot: AtomicU64,
}

impl Latency {
    fn slot(&self, w: Wait) -> &AtomicU64 {
        match w {
            Wait::Answer => &self.answer,
            Wait::Turn => &self.turn,
            Wait::Exit => &self.exit,
            Wait::Boot => &self.boot,
        }
    }

    /// Notes one latency of kind `w`.
    pub fn saw(&self, w: Wait, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1);
        self.slot(w).fetch_max(us, Ordering::Relaxed);
    }

    /// The slowest latency of kind `w` seen so far.
    pub fn slowest(&self, w: Wait) -> Option<Duration> {
        match self.slot(w).load(Ordering::Relaxed) {
            0 => None,
            us => Some(Duration::from_micros(us)),
        }
    }

    /// How long to wait for `w`: `adapt.factor` times the slowest latency of its kind, clamped
    /// to `adapt.floor` and `ceiling`; the ceiling while none of its kind was seen.
    pub fn window(&self, w: Wait, adapt: Adapt, ceiling: Duration) -> Duration {
        self.window_of(&[w], adapt, ceiling)
    }

    /// [`Latency::window`] for a wait for any of `ws` (the settling: answers and turns), by the
    /// slowest of those seen.
    pub fn window_of(&self, ws: &[Wait], adapt: Adapt, ceiling: Duration) -> Duration {
        match ws.iter().filter_map(|w| self.slowest(*w)).max() {
            None => ceiling,
            Some(slowest) => (slowest * adapt.factor).clamp(adapt.floor.min(ceiling), ceiling),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_scale_with_the_slowest_latency_between_floor_and_ceiling() {
        let l = Latency::default();
        let a = Adapt::default();
        let ten = Duration::from_secs(10);
        assert_eq!(
            l.window(Wait::Exit, a, ten),
            ten,
            "nothing seen: the ceiling"
        );
        l.saw(Wait::Answer, Duration::from_millis(30));
        assert_eq!(l.window(Wait::Answer, a, ten), Duration::from_secs(1));
        assert_eq!(l.window(Wait::Exit, a, ten), ten, "no exit seen yet");
        l.saw(Wait::Exit, Duration::from_millis(900));
        l.saw(Wait::Exit, Duration::from_millis(100));
        assert_eq!(l.window(Wait::Exit, a, ten), Duration::from_millis(4500));
        l.saw(Wait::Answer, Duration::from_secs(3));
        assert_eq!(l.window(Wait::Answer, a, ten), ten);
        assert_eq!(
            l.window(Wait::Answer, a, Duration::from_secs(1)),
            Duration::from_secs(1),
            "a ceiling below the floor wins"
        );
    }
}
