//! The client's memory (`client.bounded-backlog`, `client.line-memory`): the resident size of its
//! processes, sampled while a scenario runs. Linux only (`/proc`); elsewhere nothing is sampled
//! and the checks that need it cannot be judged.

use crate::check::CheckId;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The checks judged on the client's memory: a scenario deciding one samples it, and a failure
/// of one stands only when a second run of the scenario confirms it.
pub const CHECKS: &[CheckId] = &[CheckId::ClientBoundedBacklog, CheckId::ClientLineMemory];

/// Whether a scenario deciding `checks` samples the client's memory.
pub fn sampled(checks: &[CheckId]) -> bool {
    checks.iter().any(|c| CHECKS.contains(c))
}

/// How often the client's resident size is read.
pub const EVERY: Duration = Duration::from_millis(40);

/// The peak resident size up to `split` and the peak after it, from samples (time, bytes);
/// `None` when either side has no sample (`/proc` could not be read).
pub fn peaks(rss: &[(Duration, u64)], split: Duration) -> Option<(u64, u64)> {
    let peak = |after: bool| {
        (rss.iter())
            .filter(|(t, _)| (*t > split) == after)
            .map(|s| s.1)
            .max()
    };
    Some((peak(false)?, peak(true)?))
}

/// Samples the resident size of a process group until stopped.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Vec<(Duration, u64)>>,
}

impl Sampler {
    /// Starts sampling group `pgid`, with times from `t0` (the scenario's start, as the peers'
    /// logs have them).
    pub fn start(pgid: i32, t0: Instant) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut out = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                if let Some(b) = resident(pgid) {
                    out.push((t0.elapsed(), b));
                }
                std::thread::sleep(EVERY);
            }
            out
        });
        Sampler { stop, handle }
    }

    /// Stops; the samples (time, bytes), in order.
    pub fn finish(self) -> Vec<(Duration, u64)> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

/// Resident bytes of the processes of group `pgid`, the kit's peers (`client-peer`) left out:
/// the client's memory, not the runtime's. `None` when `/proc` cannot be read or the group has
/// no process.
pub fn resident(pgid: i32) -> Option<u64> {
    // SAFETY: sysconf has no memory effects.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let mut total = None;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Some((group, pages)) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| group_and_rss(&s))
        else {
            continue;
        };
        if group != pgid || is_peer(pid) {
            continue;
        }
        *total.get_or_insert(0) += pages * page;
    }
    total
}

/// The process group and resident pages from a `/proc/PID/stat` line (fields 5 and 24; the
/// command name, field 2, may hold spaces and parentheses).
fn group_and_rss(stat: &str) -> Option<(i32, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((f.get(2)?.parse().ok()?, f.get(21)?.parse().ok()?))
}

fn is_peer(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"client-peer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_its_group_and_resident_pages_whatever_the_command_name() {
        let stat = "42 (a (b) c) S 1 77 77 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 5 100 2500 18446744073709551615";
        assert_eq!(group_and_rss(stat), Some((77, 2500)));
        assert_eq!(group_and_rss("42 (x) S 1"), None);
    }

    #[test]
    fn this_process_group_has_a_resident_size() {
        // SAFETY: getpgrp has no memory effects.
        let me = unsafe { libc::getpgrp() };
        assert!(resident(me).is_some_and(|b| b > 0));
    }
}
