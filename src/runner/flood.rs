//! Bounds on what a runtime may write on stdout: a runtime that floods its stdout (`yes a`, a
//! log loop, an echo storm) is stopped, killed and reported, and the kit's memory stays bounded
//! whatever the shape of the output (many tiny lines cost as much as few large ones: each stored
//! line is counted with its bookkeeping overhead).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::wire::output::Output;

/// What one stored line costs beyond its text: its [`Output`] slot (the kit keeps every line of a
/// case, parsed once) and the smallest heap chunk the allocator gives its text (glibc's is 32
/// bytes). At 48, a flood of 1-byte lines held 2.5 times what the bounds counted.
pub const LINE_OVERHEAD: usize = std::mem::size_of::<Output>() + 32;

/// Default bound for one process: lines.
pub const CASE_LINES: usize = 250_000;
/// Default bound for one process: bytes (text plus [`LINE_OVERHEAD`] per line).
pub const CASE_BYTES: usize = 24 << 20;
/// Default bound for a whole run (every process it starts): lines.
pub const RUN_LINES: usize = 500_000;
/// Default bound for a whole run: bytes (text plus [`LINE_OVERHEAD`] per line).
pub const RUN_BYTES: usize = 48 << 20;

/// The stdout bounds a child is started with: one for the process, and optionally one shared by
/// every process of a run (clones share it).
#[derive(Debug, Clone)]
pub struct StdoutLimit {
    lines: usize,
    bytes: usize,
    run: Option<Arc<RunTotals>>,
}

#[derive(Debug)]
struct RunTotals {
    max_lines: usize,
    max_bytes: usize,
    lines: AtomicUsize,
    bytes: AtomicUsize,
}

impl Default for StdoutLimit {
    /// The per-process defaults and a fresh run bound (clone it to share it).
    fn default() -> Self {
        StdoutLimit::per_process(CASE_LINES, CASE_BYTES).with_run(RUN_LINES, RUN_BYTES)
    }
}

impl StdoutLimit {
    /// At most `lines` lines and `bytes` bytes (text plus [`LINE_OVERHEAD`] each) per process.
    pub fn per_process(lines: usize, bytes: usize) -> Self {
        StdoutLimit {
            lines,
            bytes,
            run: None,
        }
    }

    /// No bound (for a consumer that stores nothing, such as the throughput benchmark).
    pub fn unbounded() -> Self {
        StdoutLimit::per_process(usize::MAX, usize::MAX)
    }

    /// Adds a bound shared by every process started with this limit or a clone of it.
    pub fn with_run(mut self, lines: usize, bytes: usize) -> Self {
        self.run = Some(Arc::new(RunTotals {
            max_lines: lines,
            max_bytes: bytes,
            lines: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        }));
        self
    }

    /// The same bounds with the run's counters at zero (a new run).
    pub fn fresh(&self) -> Self {
        let mut s = StdoutLimit::per_process(self.lines, self.bytes);
        if let Some(r) = &self.run {
            s = s.with_run(r.max_lines, r.max_bytes);
        }
        s
    }

    /// A counter for one process under this limit.
    pub(crate) fn meter(&self) -> Meter {
        Meter {
            limit: self.clone(),
            lines: 0,
            bytes: 0,
        }
    }

    /// Lines and bytes counted so far by every process of the run (zero without a run bound).
    pub fn run_totals(&self) -> (usize, usize) {
        self.run.as_ref().map_or((0, 0), |r| {
            (
                r.lines.load(Ordering::Relaxed),
                r.bytes.load(Ordering::Relaxed),
            )
        })
    }
}

/// Counts one process's stdout against its [`StdoutLimit`].
#[derive(Debug)]
pub(crate) struct Meter {
    limit: StdoutLimit,
    lines: usize,
    bytes: usize,
}

impl Meter {
    /// Counts one line of `len` bytes; `Some(scope)` once a bound is passed.
    pub(crate) fn count(&mut self, len: usize) -> Option<FloodScope> {
        let cost = len.saturating_add(LINE_OVERHEAD);
        self.lines += 1;
        self.bytes = self.bytes.saturating_add(cost);
        let mut over = None;
        if let Some(r) = &self.limit.run {
            let l = r.lines.fetch_add(1, Ordering::Relaxed) + 1;
            let b = r
                .bytes
                .fetch_add(cost, Ordering::Relaxed)
                .saturating_add(cost);
            if l > r.max_lines || b > r.max_bytes {
                over = Some(FloodScope::Run);
            }
        }
        if self.lines > self.limit.lines || self.bytes > self.limit.bytes {
            over = Some(FloodScope::Process);
        }
        over
    }

    /// Lines and bytes counted for this process.
    pub(crate) fn totals(&self) -> (usize, usize) {
        (self.lines, self.bytes)
    }
}

/// Which bound a flood passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloodScope {
    /// The bound of one process.
    Process,
    /// The bound shared by every process of the run.
    Run,
}

/// A runtime wrote more on stdout than the kit stores: it was killed at that point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flood {
    /// Lines the process wrote before it was stopped.
    pub lines: usize,
    /// Bytes counted for them (text plus [`LINE_OVERHEAD`] per line).
    pub bytes: usize,
    /// Time from the start of the process.
    pub after: Duration,
    /// The bound passed.
    pub scope: FloodScope,
}

impl std::fmt::Display for Flood {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "flooded stdout ({} lines / {} bytes in {:.1} s){}; the runtime was killed there",
            self.lines,
            self.bytes,
            self.after.as_secs_f64(),
            match self.scope {
                FloodScope::Process => "",
                // The process may have written little: the bound counts every process of the
                // run, and a case that failed early still had its runtime's output counted.
                FloodScope::Run => {
                    ", passing the bound of the whole run (shared by every process it started, \
                     the output of earlier cases counted too)"
                }
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_bound_is_per_process_and_the_run_bound_is_shared() {
        let limit = StdoutLimit::per_process(3, usize::MAX).with_run(5, usize::MAX);
        let mut a = limit.meter();
        assert_eq!(a.count(1), None);
        assert_eq!(a.count(1), None);
        assert_eq!(a.count(1), None);
        assert_eq!(a.count(1), Some(FloodScope::Process));
        let mut b = limit.clone().meter();
        assert_eq!(b.count(1), None, "4 + 1 lines are within the run's 5");
        assert_eq!(
            b.count(1),
            Some(FloodScope::Run),
            "4 + 2 lines pass the run's 5"
        );
        assert_eq!(limit.run_totals().0, 6);
    }

    #[test]
    fn tiny_lines_are_counted_with_their_overhead() {
        let mut m = StdoutLimit::per_process(usize::MAX, 10 * (LINE_OVERHEAD + 1)).meter();
        for _ in 0..10 {
            assert_eq!(m.count(1), None);
        }
        assert_eq!(m.count(1), Some(FloodScope::Process));
        assert_eq!(StdoutLimit::unbounded().meter().count(usize::MAX), None);
    }
}
