//! The mark every process a runtime starts carries in its environment, and the sweep that kills
//! them by it: what [`super::child`] (a runtime's own kill) and [`super::cleanup`] (an abrupt
//! stop) both need.

/// The environment variable that marks every process a runtime starts, so that descendants
/// outside its process group (a `setsid` grandchild) can be found and killed with it. A process
/// that clears its environment, or another user's, is out of reach.
pub const MARK_VAR: &str = "DSH_CONFORMANCE_CHILD";

/// A fresh mark: this process's id and a counter.
pub(super) fn next_mark() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Kills every process whose environment holds `MARK_VAR=mark` (Linux: through /proc; elsewhere
/// only the process group is reached). One look at /proc can miss a process: one forked after
/// the directory was listed, or one in the middle of an `execve` (its environment reads empty
/// for that instant: a `setsid sleep` grandchild between its `setsid()` and its `sleep`). So the
/// sweep looks again, 5 ms later, until a look after the first finds none (a bounded number of
/// times).
pub(super) fn sweep(mark: &str) {
    let needle = format!("{MARK_VAR}={mark}\0").into_bytes();
    for look in 0..SWEEP_LOOKS {
        if kill_marked(&needle) == 0 && look > 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// How many looks at /proc one sweep makes at most (5 ms apart).
const SWEEP_LOOKS: usize = 20;

/// One look at /proc: kills the processes that carry `needle`; returns how many it found.
fn kill_marked(needle: &[u8]) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let me = std::process::id() as i32;
    let mut found = 0;
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.windows(needle.len()).any(|w| w == needle) {
            found += 1;
            // SAFETY: kill(2) on a process that carries our mark; no memory is involved.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    found
}
