//! What the kit must undo if it is stopped abruptly: the case directories that exist and the
//! runtimes that run. [`CaseDirs`](super::CaseDirs) and [`Child`](super::Child) register here
//! while they live; [`exit_on_signals`] makes SIGINT/SIGTERM kill the runtimes, remove the
//! directories and exit 128 + N, for the subcommands that do not stop gracefully through a
//! [`Cancel`](super::Cancel) (`check` does, and writes a partial report).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// What is alive, by registration number.
#[derive(Default)]
struct Live {
    /// [`undo_all`] ran: nothing may be created any more.
    stopped: bool,
    dirs: HashMap<u64, PathBuf>,
    /// Process group and environment mark of each running runtime.
    children: HashMap<u64, (i32, String)>,
}

fn live() -> &'static Mutex<Live> {
    static LIVE: OnceLock<Mutex<Live>> = OnceLock::new();
    LIVE.get_or_init(Mutex::default)
}

fn next() -> u64 {
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn lock() -> std::sync::MutexGuard<'static, Live> {
    live().lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes a directory tree with `make` (which gives its root and what else it made) and registers
/// the root for removal on an abrupt stop, as one step: a stop cannot fall between the two (it
/// would leave the tree behind), and after a stop nothing is made (`Interrupted`). `make` cleans
/// up after itself when it fails. Returns the root, what `make` gave and the ticket.
pub(crate) fn make_dir<T>(
    make: impl FnOnce() -> std::io::Result<(PathBuf, T)>,
) -> std::io::Result<(PathBuf, T, u64)> {
    let mut l = lock();
    if l.stopped {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "the kit is stopping",
        ));
    }
    let (root, made) = make()?;
    let n = next();
    l.dirs.insert(n, root.clone());
    Ok((root, made, n))
}

/// A fresh directory under `base` named `prefix` and random characters (tempfile's name and
/// exclusive creation), handed over to the caller to remove: `make` fills it, and on its error
/// the directory is removed.
pub(crate) fn fresh_dir<T>(
    base: &std::path::Path,
    prefix: &str,
    make: impl FnOnce(&std::path::Path) -> std::io::Result<T>,
) -> std::io::Result<(PathBuf, T)> {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(base)?;
    let made = make(dir.path())?;
    Ok((dir.keep(), made))
}

/// Registers a running runtime (its process group and mark); returns its ticket. A runtime
/// registered after [`undo_all`] ran (its spawn raced the stop) is killed at once, since nobody
/// would kill its escaped descendants later.
pub(crate) fn child(pgid: i32, mark: String) -> u64 {
    let n = next();
    let mut l = lock();
    if l.stopped {
        kill_runtime(pgid, &mark);
    }
    l.children.insert(n, (pgid, mark));
    n
}

/// Kills a runtime's process group and its marked descendants.
fn kill_runtime(pgid: i32, mark: &str) {
    // SAFETY: kill(2) on a process group the kit created; no memory is involved.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    super::mark::sweep(mark);
}

/// Forgets a ticket (the directory was removed, the runtime reaped).
pub(crate) fn done(ticket: u64) {
    let mut l = lock();
    l.dirs.remove(&ticket);
    l.children.remove(&ticket);
}

/// Kills every registered runtime (its group and its marked descendants) and removes every
/// registered directory.
pub fn undo_all() {
    let mut l = lock();
    l.stopped = true;
    for (pgid, mark) in l.children.values() {
        kill_runtime(*pgid, mark);
    }
    for d in l.dirs.values() {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Kills what runs, removes what exists and says so, once, whichever thread gets here first.
fn stop_now(sig: i32, what: &str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        undo_all();
        eprintln!(
            "\ndsh-conformance {what}: {}: stopped; runtimes killed, temp directories removed",
            super::cancel::signal_name(sig)
        );
    });
}

/// The exit code a command line should end with: `code`, or 128 + N when signal N arrived
/// (after the cleanup ran). Call it on the way out: a signal's cleanup kills the runtimes, and
/// the command may otherwise finish first with the failure that caused.
pub fn exit_code(code: i32, what: &str) -> i32 {
    match crate::sys::caught() {
        None => code,
        Some(sig) => {
            stop_now(sig, what);
            128 + sig
        }
    }
}

/// Makes SIGINT and SIGTERM end the process cleanly: runtimes killed, directories removed, a
/// line on stderr, exit 128 + N. A second signal during that kills the process at once. A
/// process-wide setting: call it once, from a command line's `main`.
pub fn exit_on_signals(what: &'static str) -> std::io::Result<()> {
    crate::sys::catch(&[libc::SIGINT, libc::SIGTERM], crate::sys::record, true)?;
    std::thread::Builder::new()
        .name("signal-exit".into())
        .spawn(move || loop {
            if let Some(sig) = crate::sys::caught() {
                stop_now(sig, what);
                std::process::exit(128 + sig);
            }
            std::thread::sleep(Duration::from_millis(20));
        })?;
    Ok(())
}
