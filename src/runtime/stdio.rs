//! The process around the runtime: argument parsing, the stdio loop, signals, exit codes.
//!
//! A reader thread moves stdin chunks into a channel; the main thread drains every chunk already
//! available before running due model work, so two prompts in one write queue like the real
//! runtime's. SIGTERM/SIGINT are caught with `sigaction` and a self-pipe read by a third thread.
//! stdout carries only frames; diagnostics go to stderr.

use super::{Config, Runtime};
use crate::wire::{LineDecoder, LineEvent};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The usage text of `--help`.
pub const USAGE: &str = "\
usage: dsh-reference-runtime [--profile sdk|sdk-minimal|NAME] [--edition current|2026-08|legacy]
                             [--patch FILE]... [--shell real|emulated] [--realistic-timing]
                             [--version]

The dsh-conformance reference runtime: the DeepSeek Harness SDK runtime protocol (newline-delimited
JSON-RPC 2.0 on stdin/stdout) with a scripted model (docs/CONTRACT.md#s13.5). Sessions persist
under $DSH_HOME when it is set. NAME is a user profile under $DSH_HOME/profiles/; patch layers
($DSH_HOME/profiles/<profile>/cordis.patch.yml, $DSH_HOME/cordis.patch.yml, each --patch FILE) disable
or insert plugin rows as the release's do (docs/CONTRACT.md#s13.6). DSH_SYSTEM_PROMPT replaces the
sdk-minimal system prompt. --shell emulated runs sdk-minimal's bash calls in a deterministic
emulation that runs no program (default: a real persistent bash per session, as the release).
--realistic-timing waits the release's boot latency and model retry
back-off instead of settling at once. --version (-V) prints the release version it stands in for,
as the release prints its own. Exit: 0 after shutdown, EOF or SIGTERM; 130 on SIGINT; 1 when
a patch layer or the profile cannot be read (before serving); 2 on a usage error.
";

enum Input {
    /// A read's bytes: the first `.1` of the buffer (handed back through [`Recycle`] once used).
    Chunk(Vec<u8>, usize),
    Eof,
    Signal(i32),
}

/// Output is written out once this much is buffered (bounded memory, big writes).
const FLUSH_AT: usize = 1 << 20;

/// The size of a read (a pipe gives at most its capacity, 64 KiB by default, per read).
const CHUNK: usize = 256 * 1024;

/// Read buffers going back to the reader: each is allocated and zeroed once, not once per read.
type Recycle = mpsc::Sender<Vec<u8>>;

static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; the buffer is a local byte.
        unsafe {
            libc::write(fd, &b as *const u8 as *const libc::c_void, 1);
        }
    }
}

fn install_signals(tx: mpsc::SyncSender<Input>, cancel: Option<super::shell::Cancel>) {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe(2) fills two descriptors we own from here on.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    SIGNAL_PIPE.store(fds[1], Ordering::Relaxed);
    if crate::sys::catch(&[libc::SIGTERM, libc::SIGINT], on_signal, false).is_err() {
        return;
    }
    let rfd = fds[0];
    std::thread::spawn(move || loop {
        let mut b = 0u8;
        // SAFETY: reads one byte into a local from the pipe we created.
        let n = unsafe { libc::read(rfd, &mut b as *mut u8 as *mut libc::c_void, 1) };
        if n == 1 {
            if let Some(c) = &cancel {
                c.cancel();
            }
            if tx.send(Input::Signal(b as i32)).is_err() {
                return;
            }
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        } else {
            return;
        }
    });
}

fn epoch_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The whole `main` of `dsh-reference-runtime` (and of `dsh-conformance runtime`): parses
/// `args` (without the program name), serves stdio, returns the exit code. The caller should exit
/// the process with it at once (the stdin reader thread may still be blocked in `read`).
pub fn serve_stdio(args: &[String]) -> i32 {
    let started = std::time::Instant::now();
    let args = match super::launch::parse_args(args) {
        Ok(Some(a)) if a.version => {
            crate::outln!("{}", super::launch::RELEASE_VERSION);
            return 0;
        }
        Ok(Some(a)) => a,
        Ok(None) => {
            crate::out!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprintln!("dsh-reference-runtime: {e}\n{USAGE}");
            return 2;
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let launch = match super::launch::launch(&args, &|k| std::env::var(k).ok(), &cwd) {
        Ok(l) => l,
        Err(f) => {
            eprint!("{}", f.stderr);
            return f.code;
        }
    };
    if !launch.stderr.is_empty() {
        eprint!("{}", launch.stderr);
    }
    let (tx, rx) = channel();
    match launch.boot {
        super::launch::Boot::Serve => {}
        super::launch::Boot::Exit(code) => return code,
        super::launch::Boot::Hold => {
            // Nothing reads stdin; only a signal ends the process.
            install_signals(tx, None);
            while let Ok(m) = rx.recv() {
                if let Input::Signal(s) = m {
                    return if s == libc::SIGINT { 130 } else { 0 };
                }
            }
            return 0;
        }
    }
    let mut cfg = launch.cfg;
    // A process runs `sdk` bash under the host's sandbox backend, when it has one.
    cfg.sandbox = super::sandbox::Sandbox::host();
    let rt = Runtime::new(cfg);
    let cancel = rt.shell_cancel();
    install_signals(tx.clone(), Some(cancel.clone()));
    let recycle = spawn_reader(std::io::stdin(), tx, cancel);
    if rt.config().realistic_timing {
        // The release answers nothing before its plugin tree has booted.
        let boot = Duration::from_millis(super::Timing::boot_ms(rt.config().profile));
        std::thread::sleep(boot.saturating_sub(started.elapsed()));
    }
    run_loop(rt, rx, recycle, std::io::stdout().lock())
}

/// Serves the runtime over any byte streams, until EOF on `input`, `shutdown`, or a failed write:
/// the in-process form of [`serve_stdio`] (no argument parsing, no signal handlers, nothing
/// process-wide). Returns the exit code the process would have. `input` is read on a thread of
/// its own; see [`super::memory::Connection`] for a ready-made in-memory pair.
pub fn serve<R, W>(cfg: Config, input: R, output: W) -> i32
where
    R: Read + Send + 'static,
    W: Write,
{
    let (tx, rx) = channel();
    let rt = Runtime::new(cfg);
    let recycle = spawn_reader(input, tx, rt.shell_cancel());
    run_loop(rt, rx, recycle, output)
}

/// Bounded: a client that writes faster than we answer is held back by the pipe, not by our
/// memory (at most 16 chunks of 256 KB wait here).
fn channel() -> (mpsc::SyncSender<Input>, mpsc::Receiver<Input>) {
    mpsc::sync_channel::<Input>(16)
}

/// Reads `input` into the channel; at its end, cancels a running `sdk-minimal` command first
/// (the runtime exits at EOF, so the command's result would never be read).
fn spawn_reader<R: Read + Send + 'static>(
    mut input: R,
    tx: mpsc::SyncSender<Input>,
    cancel: super::shell::Cancel,
) -> Recycle {
    let (recycle, returned) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        loop {
            let mut buf = returned.try_recv().unwrap_or_else(|_| vec![0u8; CHUNK]);
            match input.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(Input::Chunk(buf, n)).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        cancel.cancel();
        let _ = tx.send(Input::Eof);
    });
    recycle
}

fn run_loop(
    mut rt: Runtime,
    rx: mpsc::Receiver<Input>,
    recycle: Recycle,
    mut stdout: impl Write,
) -> i32 {
    let mut decoder = LineDecoder::default();
    let mut out: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut write_out = |out: &mut Vec<u8>| -> bool {
        if out.is_empty() {
            return true;
        }
        let ok = stdout.write_all(out).and_then(|_| stdout.flush()).is_ok();
        out.clear();
        ok
    };
    loop {
        // A background job's end is seen by polling (the core has no clock of its own).
        let watch = rt.watching_jobs().then(|| epoch_ms() + super::JOB_POLL_MS);
        let msg = match rt.next_deadline().into_iter().chain(watch).min() {
            Some(due) => {
                let now = epoch_ms();
                if due <= now {
                    Err(mpsc::RecvTimeoutError::Timeout)
                } else {
                    rx.recv_timeout(Duration::from_millis(due - now))
                }
            }
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        let mut next = match msg {
            Ok(m) => Some(m),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => Some(Input::Eof),
        };
        // Drain everything already available before running model work.
        while let Some(m) = next.take() {
            match m {
                Input::Chunk(c, n) => {
                    let now = epoch_ms();
                    decoder.push(&c[..n], &mut |ev| {
                        if let LineEvent::Line(l) = ev {
                            rt.handle_line(l, now, &mut out);
                        }
                    });
                    let _ = recycle.send(c);
                    if rt.exit_code().is_some() {
                        break;
                    }
                    if out.len() >= FLUSH_AT && !write_out(&mut out) {
                        return 1;
                    }
                    next = rx.try_recv().ok();
                }
                Input::Eof => {
                    decoder.finish();
                    let code = rt.on_eof(epoch_ms(), &mut out);
                    write_out(&mut out);
                    return code;
                }
                Input::Signal(s) => {
                    write_out(&mut out);
                    return if s == libc::SIGINT { 130 } else { 0 };
                }
            }
        }
        if let Some(code) = rt.exit_code() {
            write_out(&mut out);
            return code;
        }
        let now = epoch_ms();
        while rt.poll_bounded(now, &mut out, FLUSH_AT) {
            if !write_out(&mut out) {
                return 1;
            }
        }
        if !write_out(&mut out) {
            eprintln!("dsh-reference-runtime: stdout closed");
            return 1;
        }
    }
}
