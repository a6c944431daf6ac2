//! Process signals, once for the whole kit: installing a handler, and the one handler most
//! callers need (it records the signal for a thread to act on). Below every other module.

use std::sync::atomic::{AtomicI32, Ordering};

/// `SIGINT`, `SIGTERM`, … or `signal N`.
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGKILL => "SIGKILL".into(),
        s => format!("signal {s}"),
    }
}

/// The signal [`record`] caught and nobody has taken yet (0: none).
static CAUGHT: AtomicI32 = AtomicI32::new(0);

/// A handler that only records the signal (async-signal-safe): read it with [`caught`] or
/// [`take_caught`].
pub extern "C" fn record(sig: libc::c_int) {
    CAUGHT.store(sig, Ordering::SeqCst);
}

/// The signal [`record`] caught, if any (it stays).
pub fn caught() -> Option<i32> {
    Some(CAUGHT.load(Ordering::SeqCst)).filter(|s| *s != 0)
}

/// The signal [`record`] caught, if any, clearing it.
pub fn take_caught() -> Option<i32> {
    Some(CAUGHT.swap(0, Ordering::SeqCst)).filter(|s| *s != 0)
}

/// Installs `handler` for each of `signals`, restarting interrupted system calls. With
/// `one_shot`, the handler runs once and the same signal again takes its default action (a
/// second Ctrl-C quits at once). `handler` must be async-signal-safe.
pub fn catch(
    signals: &[i32],
    handler: extern "C" fn(libc::c_int),
    one_shot: bool,
) -> std::io::Result<()> {
    for &sig in signals {
        // SAFETY: a zeroed sigaction with a plain handler and an empty mask is valid; the
        // handler's safety is the caller's promise.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler as *const () as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART | if one_shot { libc::SA_RESETHAND } else { 0 };
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}
