//! The real persistent bash of `sdk-minimal` (I/O), as the release runs it: `/bin/bash
//! --noprofile --norc -i` on a pseudo-terminal (40 rows, 160 columns), unconfined, started in
//! the session's working directory with the release's environment additions (`TERM=dumb`,
//! `PS1='dsh> '`, …), `stty -echo` sent first. Each call types the command wrapped between two
//! markers ([`super::bash_text`]) and waits for the end marker, the shell's exit, or the bound
//! (the release's 300 s unless configured), after which the shell is killed and reset.

use super::bash_text::{self as text, Markers};
use super::shell::{Cancel, PersistentShell};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Terminal output kept per call (the release's scrollback holds 4 MiB): beyond it the oldest
/// half is dropped and the result says its beginning was lost.
const KEEP_BYTES: usize = 4 << 20;
/// How long the shell may take to accept `stty -echo` (the release's terminal timeout, 30 s).
const START_MS: u64 = 30_000;
/// How often a quiet shell is checked for having exited (the release polls every 25 ms).
const POLL_MS: u64 = 25;
/// How long a shell being closed gets to pass SIGHUP on to its jobs before it is killed.
const HANGUP_GRACE_MS: u64 = 200;

/// One live shell.
pub struct Bash {
    child: Child,
    master: File,
    output: mpsc::Receiver<Vec<u8>>,
    timeout_ms: u64,
    nonce: u64,
    cancel: Cancel,
    /// The shell's status was collected: its pid (and group id) may belong to another process.
    reaped: bool,
}

impl Bash {
    /// Starts a shell in `cwd` for session `session`; each command is bounded by `timeout_ms`.
    pub fn spawn(
        cwd: &str,
        session: &str,
        timeout_ms: u64,
        cancel: Cancel,
    ) -> std::io::Result<Bash> {
        let (master, slave) = open_pty()?;
        let io = || slave.try_clone().map(Stdio::from);
        let mut cmd = Command::new("/bin/bash");
        cmd.args(["--noprofile", "--norc", "-i"])
            .current_dir(cwd)
            .envs([
                ("TERM", "dumb"),
                ("PAGER", "cat"),
                ("GIT_PAGER", "cat"),
                ("DSH_SHELL", "1"),
                ("DSH_SESSION_ID", session),
                ("PS1", text::PROMPT),
                (
                    "PROMPT_COMMAND",
                    "printf \"\\033]133;D;%s\\007\" \"$?\"; PS1='dsh> '",
                ),
                ("BASH_SILENCE_DEPRECATION_WARNING", "1"),
            ])
            .stdin(io()?)
            .stdout(io()?)
            .stderr(io()?);
        // SAFETY: setsid(2) and ioctl(2) are async-signal-safe; the child makes its own session
        // with the terminal (its stdin) as the controlling one, as a terminal emulator does.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        drop(slave);
        let master = File::from(master);
        let output = spawn_reader(master.try_clone()?);
        let mut bash = Bash {
            child,
            master,
            output,
            timeout_ms,
            nonce: 0,
            cancel,
            reaped: false,
        };
        bash.start()?;
        Ok(bash)
    }

    /// Sends `stty -echo` and waits for the prompt after it (the release's initialization).
    fn start(&mut self) -> std::io::Result<()> {
        self.master.write_all(b"stty -echo\r")?;
        let mut seen = String::new();
        let until = Instant::now() + Duration::from_millis(START_MS);
        while seen.matches(text::PROMPT_MARK).count() < 2 {
            match self.next_chunk(until) {
                Chunk::Data(d) => seen.push_str(&String::from_utf8_lossy(&d)),
                Chunk::Cancelled => return Err(std::io::Error::other("cancelled")),
                _ => {
                    return Err(std::io::Error::other(
                        "persistent bash shell did not accept initialization",
                    ))
                }
            }
        }
        Ok(())
    }

    /// The next output, or why there is none: the bound passed, or the shell is gone (its
    /// terminal closed, or the shell exited while a background job still holds the terminal).
    fn next_chunk(&mut self, until: Instant) -> Chunk {
        loop {
            if self.cancel.is_cancelled() {
                return Chunk::Cancelled;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Chunk::Timeout;
            }
            match self
                .output
                .recv_timeout(left.min(Duration::from_millis(POLL_MS)))
            {
                Ok(d) => return Chunk::Data(d),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Chunk::End,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if self.exited() {
                        // What the shell wrote before exiting is already in the channel.
                        return match self.output.try_recv() {
                            Ok(d) => Chunk::Data(d),
                            Err(_) => Chunk::End,
                        };
                    }
                }
            }
        }
    }

    fn markers(&mut self) -> Markers {
        self.nonce += 1;
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Markers::new(&format!("{:x}-{}-{t:x}", std::process::id(), self.nonce))
    }

    /// Whether the shell has exited, without collecting its status (so its pid stays its own).
    fn exited(&self) -> bool {
        if self.reaped {
            return true;
        }
        // SAFETY: waitid(2) with WNOWAIT on our own child fills a local siginfo and reaps nothing.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            libc::waitid(libc::P_PID, self.child.id(), &mut info, flags) == 0 && info.si_pid() != 0
        }
    }

    /// The shell's exit status (code, or signal name) once it is gone.
    fn wait_exit(&mut self) -> (Option<i32>, Option<String>) {
        use std::os::unix::process::ExitStatusExt;
        self.reaped = true;
        match self.child.wait() {
            Ok(s) => (s.code(), s.signal().map(signal_name)),
            Err(_) => (None, None),
        }
    }

    /// Closes the shell as a closed terminal does: SIGHUP (bash passes it on to its jobs,
    /// which have process groups of their own), then SIGKILL for its group; nothing once its
    /// status was collected.
    fn kill(&mut self) {
        if self.reaped {
            return;
        }
        let pid = self.child.id() as i32;
        if !self.exited() {
            // SAFETY: kill(2) on the shell we spawned, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGHUP) };
            let until = Instant::now() + Duration::from_millis(HANGUP_GRACE_MS);
            while Instant::now() < until && !self.exited() {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        // SAFETY: kill(2) on the process group the shell leads (it called setsid); the shell is
        // not reaped yet, so the group id is still its own.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        self.reaped = true;
        let _ = self.child.wait();
    }
}

enum Chunk {
    Data(Vec<u8>),
    Timeout,
    End,
    Cancelled,
}

impl PersistentShell for Bash {
    fn run(&mut self, command: &str) -> (String, bool) {
        let m = self.markers();
        let line = format!("{}\r", text::wrap(command, &m));
        if self.master.write_all(line.as_bytes()).is_err() {
            let (code, signal) = self.wait_exit();
            return (
                text::exited(&text::partial("", &m), code, signal.as_deref()),
                true,
            );
        }
        let until = Instant::now() + Duration::from_millis(self.timeout_ms);
        let mut raw: Vec<u8> = Vec::new();
        loop {
            match self.next_chunk(until) {
                Chunk::Data(d) => {
                    raw.extend_from_slice(&d);
                    if raw.len() > KEEP_BYTES {
                        raw.drain(..raw.len() - KEEP_BYTES / 2);
                    }
                    let screen = text::clean(&String::from_utf8_lossy(&raw));
                    if let Some(c) = text::finished(&screen, &m) {
                        return (text::render(&c), false);
                    }
                }
                Chunk::End => {
                    let screen = text::clean(&String::from_utf8_lossy(&raw));
                    let (code, signal) = self.wait_exit();
                    let c = text::partial(&screen, &m);
                    return (text::exited(&c, code, signal.as_deref()), true);
                }
                Chunk::Cancelled => {
                    self.kill();
                    return (String::new(), true);
                }
                Chunk::Timeout => {
                    self.kill();
                    let screen = text::clean(&String::from_utf8_lossy(&raw));
                    let c = text::partial(&screen, &m);
                    return (text::timed_out(&c, self.timeout_ms), true);
                }
            }
        }
    }
}

impl Drop for Bash {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A pseudo-terminal pair of the release's size; the master is close-on-exec.
fn open_pty() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (mut m, mut s) = (-1, -1);
    let size = libc::winsize {
        ws_row: 40,
        ws_col: 160,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty(3) fills two descriptors we own from here on; the name and termios
    // arguments may be null.
    let rc = unsafe {
        libc::openpty(
            &mut m,
            &mut s,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    let (m, s) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
    // SAFETY: fcntl(2) on a descriptor we own.
    unsafe { libc::fcntl(m.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
    Ok((m, s))
}

/// Moves the terminal's output into a channel until it ends (EIO once the shell and everything
/// holding the terminal are gone).
fn spawn_reader(mut master: File) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match master.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    });
    rx
}

/// Node's name of a signal (`SIGKILL`, …).
fn signal_name(sig: i32) -> String {
    let names = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGTERM, "SIGTERM"),
    ];
    names
        .iter()
        .find(|(n, _)| *n == sig)
        .map_or_else(|| format!("SIG{sig}"), |(_, s)| s.to_string())
}
