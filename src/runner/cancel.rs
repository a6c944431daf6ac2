//! Stopping a run before its end: a switch shared by every case of a run (clones share it), set
//! once with the reason, seen by the runner's I/O loop within one poll interval (the case's
//! runtime is then killed and its directories removed as on any other exit path).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Why a run stopped before it was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halt {
    /// The kit received this signal (SIGINT, SIGTERM).
    Signal(i32),
    /// The whole-run budget (this long) was spent.
    Budget(Duration),
    /// The runtime flooded its stdout: every further case would too.
    Flooded,
    /// The preflight found a runtime that cannot be checked: it did not start, died, never
    /// answered `initialize`, or wrote no JSON-RPC frame.
    Unusable,
}

impl Halt {
    /// The process exit code a command line reports for a run stopped this way, when nothing
    /// worse decides it: 128 + the signal number for a signal, 2 for an unusable runtime, 1
    /// otherwise (a run that did not finish never passes).
    pub fn exit_code(self) -> i32 {
        match self {
            Halt::Signal(s) => 128 + s,
            Halt::Unusable => 2,
            Halt::Budget(_) | Halt::Flooded => 1,
        }
    }
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Halt::Signal(s) => write!(f, "interrupted by {}", signal_name(*s)),
            Halt::Budget(d) => write!(f, "the run's budget of {} s was spent", d.as_secs_f64()),
            Halt::Flooded => f.write_str("the runtime flooded its stdout"),
            Halt::Unusable => f.write_str("the runtime cannot be checked"),
        }
    }
}

pub use crate::sys::signal_name;

/// The shared stop switch of a run. The first reason set wins.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<OnceLock<Halt>>);

impl Cancel {
    /// A switch that is not set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Stops the run for `why`; `false` when it was already stopped (the first reason stays).
    pub fn halt(&self, why: Halt) -> bool {
        self.0.set(why).is_ok()
    }

    /// Why the run was stopped, if it was.
    pub fn halted(&self) -> Option<Halt> {
        self.0.get().copied()
    }
}

impl Cancel {
    /// Makes `signals` (e.g. SIGINT, SIGTERM) stop the run through this switch instead of killing
    /// the process, so the caller can still kill its runtimes, remove its directories and write a
    /// partial report. The handler is one-shot: the same signal again kills the process at once
    /// (its runtimes still die with it: they are started with a parent-death signal; directories
    /// of cases then running are left behind). `notice` is printed on stderr when one arrives.
    /// A process-wide setting: call it once, from a command line's `main`.
    pub fn on_signals(&self, signals: &[i32], notice: &'static str) -> std::io::Result<()> {
        crate::sys::catch(signals, crate::sys::record, true)?;
        let cancel = self.clone();
        std::thread::Builder::new()
            .name("signal-watch".into())
            .spawn(move || loop {
                if let Some(sig) = crate::sys::take_caught() {
                    eprintln!("\n{}: {notice}", signal_name(sig));
                    cancel.halt(Halt::Signal(sig));
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_wins_and_clones_share_it() {
        let c = Cancel::new();
        let d = c.clone();
        assert_eq!(d.halted(), None);
        assert!(c.halt(Halt::Signal(libc::SIGINT)));
        assert!(!d.halt(Halt::Flooded));
        assert_eq!(d.halted(), Some(Halt::Signal(libc::SIGINT)));
        assert_eq!(Halt::Signal(libc::SIGTERM).exit_code(), 143);
        assert_eq!(Halt::Unusable.exit_code(), 2);
        assert_eq!(
            Halt::Budget(Duration::from_secs(300)).to_string(),
            "the run's budget of 300 s was spent"
        );
        assert_eq!(
            Halt::Budget(Duration::from_millis(300)).to_string(),
            "the run's budget of 0.3 s was spent"
        );
    }
}
