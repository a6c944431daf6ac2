//! A runtime under test as an untrusted child process: its own process group (killed on every
//! exit path by [`Child`]'s `Drop`), a writer thread (a runtime that stops reading cannot block
//! the kit), a bounded stdout reader and a bounded stderr tail.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

pub use super::command::{lossless_display, CommandSpec};
pub use super::dirs::CaseDirs;
use super::flood::{Flood, Meter, StdoutLimit, LINE_OVERHEAD};
pub use super::mark::MARK_VAR;
use super::mark::{next_mark, sweep};
use crate::trace::ExitInfo;
use crate::wire::output::{NotAFrame, Output};

/// What the stdout reader reports, in order.
#[derive(Debug)]
pub enum Event {
    /// A complete, non-blank line, parsed once ([`Output`]): its text JS-trimmed when it is
    /// valid UTF-8; a line that is not, or is over the bound (its bytes discarded), is an
    /// [`Output::unreadable`].
    Line(Output),
    /// Stdout ended; holds the length of an unterminated last line, if any.
    Closed(Option<usize>),
    /// The runtime passed its [`StdoutLimit`]: it was killed and nothing more is read. Last event.
    Flooded(Flood),
}

/// Limits memory held for lines the matcher has not consumed yet.
#[derive(Debug, Default)]
struct Budget {
    used: Mutex<usize>,
    freed: Condvar,
}

/// Bytes of lines read but not yet consumed (the reader waits beyond it: flow control).
const QUEUE_BYTES: usize = 8 << 20;
const STDERR_TAIL: usize = 64 * 1024;
/// How long [`Child::stderr_tail`] waits for the rest of an ended runtime's stderr (a grandchild
/// may hold the pipe open: then it is not waited for longer).
const STDERR_DRAIN: std::time::Duration = std::time::Duration::from_millis(300);

enum WriteMsg {
    Bytes(Vec<u8>),
    Close,
}

/// A running runtime. Dropping it kills its whole process group and reaps it.
pub struct Child {
    child: std::process::Child,
    pgid: i32,
    writer: Option<SyncSender<WriteMsg>>,
    /// Stdout events.
    pub events: Receiver<Event>,
    budget: Arc<Budget>,
    stderr: Arc<Mutex<(VecDeque<u8>, usize)>>,
    /// The stderr reader reached the end of the pipe.
    stderr_done: Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    exit: Option<ExitInfo>,
    /// The value of [`MARK_VAR`] in this runtime's environment.
    mark: String,
    swept: bool,
    /// Registration with [`super::cleanup`].
    ticket: u64,
}

/// Signal numbers to reset: every one up to the platform's last (real-time ones included).
#[cfg(target_os = "linux")]
const LAST_SIGNAL: libc::c_int = 64;
#[cfg(not(target_os = "linux"))]
const LAST_SIGNAL: libc::c_int = 31;

/// In the child, before exec: every catchable signal back to its default action and an empty
/// signal mask. Ignored signals and the mask survive exec, so without this a runtime started by
/// a kit that runs with SIGINT ignored (`nohup`, `trap "" INT`, some CI runners) or with signals
/// blocked would not get the SIGINT/SIGTERM the lifecycle checks send. Errors (SIGKILL, SIGSTOP,
/// the C library's reserved signals) are ignored: those cannot or need not be reset.
///
/// # Safety
/// Only for a freshly forked child: it calls async-signal-safe functions only.
unsafe fn start_clean() {
    let mut dfl: libc::sigaction = std::mem::zeroed();
    dfl.sa_sigaction = libc::SIG_DFL;
    libc::sigemptyset(&mut dfl.sa_mask);
    for sig in 1..=LAST_SIGNAL {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
    }
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
}

impl Child {
    /// Spawns `cmd` in `dirs.cwd` with DSH_HOME = `dirs.home` and the extra `env`, with every
    /// signal at its default action and none blocked, whatever the kit inherited. On Linux the
    /// runtime is killed if the spawning thread's process dies (keep the `Child` on that thread).
    /// Stdout lines longer than `max_line` are discarded (reported by length); past `limit` the
    /// runtime is killed and [`Event::Flooded`] ends the events.
    pub fn spawn(
        cmd: &CommandSpec,
        dirs: &CaseDirs,
        env: &[(String, String)],
        max_line: usize,
        limit: &StdoutLimit,
    ) -> std::io::Result<Child> {
        // A relative path with a slash (`./my-runtime`) means the caller's directory, not the
        // case's fresh cwd (where the child would otherwise look for it).
        let program = if cmd.program.is_relative() && cmd.program.components().count() > 1 {
            std::env::current_dir()?.join(&cmd.program)
        } else {
            cmd.program.clone()
        };
        let mut c = Command::new(&program);
        c.args(&cmd.args)
            .current_dir(&dirs.cwd)
            .env("DSH_HOME", &dirs.home)
            .env_remove("DEEPSEEK_API_KEY")
            .env_remove("DEEPSEEK_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for (k, v) in env {
            c.env(k, v);
        }
        let mark = next_mark();
        c.env(MARK_VAR, &mark);
        // SAFETY: between fork and exec the closure only calls async-signal-safe functions
        // (sigaction, sigprocmask, prctl) on its own stack; it touches no memory of the parent.
        unsafe {
            c.pre_exec(|| {
                start_clean();
                // If the kit itself is killed (no Drop runs), the runtime must not outlive it:
                // the kernel sends it SIGKILL when the spawning thread's process dies.
                #[cfg(target_os = "linux")]
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = c.spawn()?;
        let pgid = child.id() as i32;
        let ticket = super::cleanup::child(pgid, mark.clone());
        let mut stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let (wtx, wrx) = mpsc::sync_channel::<WriteMsg>(64);
        let (etx, erx) = mpsc::sync_channel::<Event>(1024);
        let budget = Arc::new(Budget::default());
        let tail = Arc::new(Mutex::new((VecDeque::new(), 0usize)));
        let mut threads = Vec::new();
        threads.push(std::thread::spawn(move || {
            while let Ok(m) = wrx.recv() {
                match m {
                    WriteMsg::Bytes(b) => {
                        if stdin.write_all(&b).and_then(|_| stdin.flush()).is_err() {
                            break;
                        }
                    }
                    WriteMsg::Close => break,
                }
            }
            drop(stdin);
        }));
        let b2 = budget.clone();
        let reader = Reader {
            max_line,
            meter: limit.meter(),
            pgid,
            started: std::time::Instant::now(),
        };
        threads.push(std::thread::spawn(move || {
            read_stdout(&mut stdout, reader, etx, b2)
        }));
        let t2 = tail.clone();
        let stderr_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let done2 = stderr_done.clone();
        threads.push(std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = t2.lock().unwrap_or_else(|e| e.into_inner());
                t.1 += n;
                t.0.extend(&buf[..n]);
                let over = t.0.len().saturating_sub(STDERR_TAIL);
                t.0.drain(..over);
            }
            done2.store(true, std::sync::atomic::Ordering::Release);
        }));
        Ok(Child {
            child,
            pgid,
            writer: Some(wtx),
            events: erx,
            budget,
            stderr: tail,
            stderr_done,
            threads,
            exit: None,
            ticket,
            mark,
            swept: false,
        })
    }

    /// The child's pid.
    pub fn pid(&self) -> i32 {
        self.pgid
    }

    /// The CPU time (user and system) the child's process has used so far, its threads and the
    /// children it waited for included; `None` where the system does not tell (no `/proc`).
    pub fn cpu_time(&self) -> Option<std::time::Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pgid)).ok()?;
        // Fields after the command (which may hold spaces), from field 3: utime is the 14th
        // field, stime, cutime and cstime follow.
        let rest = stat.rsplit_once(')')?.1;
        let f: Vec<u64> = (rest.split_whitespace().skip(11).take(4))
            .filter_map(|x| x.parse().ok())
            .collect();
        // SAFETY: sysconf only reads a system constant.
        let ticks = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
        (f.len() == 4 && ticks > 0)
            .then(|| std::time::Duration::from_millis(f.iter().sum::<u64>() * 1000 / ticks))
    }

    /// Queues bytes for stdin (never blocks on the child).
    pub fn write(&mut self, bytes: Vec<u8>) {
        if let Some(w) = &self.writer {
            let _ = w.send(WriteMsg::Bytes(bytes));
        }
    }

    /// Closes stdin once everything queued is written.
    pub fn close_stdin(&mut self) {
        if let Some(w) = self.writer.take() {
            let _ = w.send(WriteMsg::Close);
        }
    }

    /// Sends a signal to the runtime process itself.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) with a pid we spawned; no memory is involved.
        unsafe {
            libc::kill(self.pgid, sig);
        }
    }

    /// Marks an event's bytes as consumed (frees reader budget).
    pub fn consumed(&self, ev: &Event) {
        let n = match ev {
            Event::Line(o) => o.weight() + LINE_OVERHEAD,
            _ => 0,
        };
        if n > 0 {
            let mut u = self.budget.used.lock().unwrap_or_else(|e| e.into_inner());
            *u = u.saturating_sub(n);
            self.budget.freed.notify_all();
        }
    }

    /// The exit status, if the process has ended.
    pub fn try_exit(&mut self) -> Option<ExitInfo> {
        if self.exit.is_none() {
            if let Ok(Some(st)) = self.child.try_wait() {
                self.exit = Some(match (st.code(), st.signal()) {
                    (Some(c), _) => ExitInfo::Code(c),
                    (None, Some(s)) => ExitInfo::Signal(s),
                    _ => ExitInfo::Unknown,
                });
            }
        }
        self.exit
    }

    /// The last bytes written on stderr (lossy UTF-8) and the total written. Once the process
    /// has ended (seen by [`Child::try_exit`] or [`Child::kill`]), waits a moment for the reader
    /// to reach the end of the pipe, so that the runtime's last words are in it.
    pub fn stderr_tail(&self) -> (String, usize) {
        if self.exit.is_some() {
            let until = std::time::Instant::now() + STDERR_DRAIN;
            while !self.stderr_done.load(std::sync::atomic::Ordering::Acquire)
                && std::time::Instant::now() < until
            {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let v: Vec<u8> = t.0.iter().copied().collect();
        (String::from_utf8_lossy(&v).into_owned(), t.1)
    }

    /// Kills the process group and reaps the child; joins the I/O threads.
    pub fn kill(&mut self) {
        // SAFETY: kill(2) on the process group we created; no memory is involved.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
        // Descendants that left the group (`setsid`, a daemonising fork) still carry the mark.
        if !self.swept {
            self.swept = true;
            sweep(&self.mark);
            super::cleanup::done(self.ticket);
        }
        self.writer = None;
        let _ = self.child.wait();
        self.try_exit();
        // Unblock the reader if it waits for budget, then let it see EOF.
        {
            let mut u = self.budget.used.lock().unwrap_or_else(|e| e.into_inner());
            *u = 0;
            self.budget.freed.notify_all();
        }
        while self.events.try_recv().is_ok() {}
        for t in self.threads.drain(..) {
            // A grandchild outside the group could hold a pipe open; do not wait for it forever.
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What the stdout reader needs besides the pipe.
struct Reader {
    max_line: usize,
    meter: Meter,
    /// The runtime's process group, killed on a flood.
    pgid: i32,
    started: std::time::Instant,
}

impl Reader {
    /// Counts a complete line; on a flood, kills the runtime's group and returns the event.
    fn count(&mut self, len: usize) -> Option<Event> {
        let scope = self.meter.count(len)?;
        // SAFETY: kill(2) on the process group we created; no memory is involved.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
        let (lines, bytes) = self.meter.totals();
        Some(Event::Flooded(Flood {
            lines,
            bytes,
            after: self.started.elapsed(),
            scope,
        }))
    }
}

fn read_stdout(out: &mut impl Read, mut r: Reader, tx: SyncSender<Event>, budget: Arc<Budget>) {
    let max_line = r.max_line;
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut discarding: Option<usize> = None;
    // Lines numbered as the kit reports them: 1-based, blank lines (never judged) not counted.
    let mut numbered = 0;
    let send = |ev: Event| -> bool {
        if let Event::Line(o) = &ev {
            let mut u = budget.used.lock().unwrap_or_else(|e| e.into_inner());
            while *u > QUEUE_BYTES {
                u = budget.freed.wait(u).unwrap_or_else(|e| e.into_inner());
            }
            *u += o.weight() + LINE_OVERHEAD; // its allocations, not only the text
        }
        tx.send(ev).is_ok()
    };
    loop {
        let n = match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            let nl = memchr::memchr(b'\n', chunk);
            let seg = &chunk[..nl.unwrap_or(chunk.len())];
            if let Some(d) = discarding.as_mut() {
                *d += seg.len();
            } else if line.len() + seg.len() > max_line {
                discarding = Some(line.len() + seg.len());
                line = Vec::new();
            } else {
                line.extend_from_slice(seg);
            }
            match nl {
                Some(i) => {
                    // A line over the bound is discarded, not stored: it costs its bookkeeping.
                    if let Some(flood) = r.count(discarding.map_or(line.len(), |_| 0)) {
                        let _ = tx.send(flood);
                        return;
                    }
                    let ev = if let Some(d) = discarding.take() {
                        numbered += 1;
                        Some(Output::unreadable(numbered, NotAFrame::TooLong(d)))
                    } else {
                        let ev = match std::str::from_utf8(&line) {
                            Ok(s) => {
                                let t = crate::wire::trim_js(s);
                                (!t.is_empty()).then(|| {
                                    numbered += 1;
                                    let mut o = Output::parse(numbered, t.to_owned());
                                    o.crlf |= s.ends_with('\r');
                                    if t.len() != s.len() {
                                        // Parsed trimmed: the padding is in the line as written.
                                        o.foreign_padding = crate::wire::foreign_padding(s);
                                    }
                                    o
                                })
                            }
                            Err(e) => {
                                numbered += 1;
                                let why = NotAFrame::NotUtf8 {
                                    at: e.valid_up_to(),
                                    len: line.len(),
                                };
                                Some(Output::unreadable(numbered, why))
                            }
                        };
                        line.clear();
                        if line.capacity() > 1 << 20 {
                            line = Vec::new();
                        }
                        ev
                    };
                    if let Some(o) = ev {
                        if !send(Event::Line(o)) {
                            return;
                        }
                    }
                    chunk = &chunk[i + 1..];
                }
                None => break,
            }
        }
    }
    let tail = discarding.or((!line.is_empty()).then_some(line.len()));
    let _ = send(Event::Closed(tail));
}

/// The last `max` lines of a runtime's stderr tail ([`Child::stderr_tail`]), indented under a
/// heading that gives the total written (empty when the runtime wrote nothing on stderr): how a
/// failure shows what the runtime said.
pub(crate) fn stderr_block(tail: &str, total: usize, max: usize) -> String {
    use std::fmt::Write as _;
    let lines: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut s = format!("  stderr tail ({total} bytes total):\n");
    for l in &lines[lines.len().saturating_sub(max)..] {
        let _ = writeln!(s, "    {}", crate::trace::explain::clip(l, 300));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_block_keeps_the_last_lines_and_says_how_much_there_was() {
        assert_eq!(stderr_block("", 0, 5), "");
        let b = stderr_block("one\ntwo\n\nthree\n", 15, 2);
        assert_eq!(b, "  stderr tail (15 bytes total):\n    two\n    three\n");
    }
}
