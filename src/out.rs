//! The kit's reports on stdout. A reader that goes away early (`dsh-conformance explain … | head`)
//! ends the output quietly: the rest is dropped and the command still exits with its own verdict,
//! where `print!` would panic with exit 101. Use [`out!`](crate::out!) and
//! [`outln!`](crate::outln!) for everything written to stdout.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout could not be written: later output is dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Set when that was a real write error (a full disk, an I/O error), not a reader that left.
static FAILED: AtomicBool = AtomicBool::new(false);

/// True once a write to stdout failed for another reason than a closed pipe: the report was
/// lost, and the command must not exit as if it had been delivered (the binaries exit 2).
pub fn write_failed() -> bool {
    FAILED.load(Ordering::Relaxed)
}

/// Writes `args` to stdout and flushes. A closed pipe is not an error (the output stops there);
/// any other write error is said once on stderr, and the output stops too.
pub fn write(args: std::fmt::Arguments) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            FAILED.store(true, Ordering::Relaxed);
            eprintln!("dsh-conformance: cannot write to stdout: {e}");
        }
    }
}

/// `print!` that survives a closed stdout (see [`write`](crate::out::write)).
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::out::write(format_args!($($t)*)) };
}

/// `println!` that survives a closed stdout (see [`write`](crate::out::write)).
#[macro_export]
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($t)*))) };
}
