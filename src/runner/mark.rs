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
/// only the process group is reached).
pub(super) fn sweep(mark: &str) {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    let needle = format!("{MARK_VAR}={mark}\0").into_bytes();
    let me = std::process::id() as i32;
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
        if env.windows(needle.len()).any(|w| w == needle.as_slice()) {
            // SAFETY: kill(2) on a process that carries our mark; no memory is involved.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}
