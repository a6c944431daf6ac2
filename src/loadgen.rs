//! A stdio load generator: how fast a runtime answers through its pipes (issue 6).
//!
//! Workloads, each on a fresh process:
//! - **cold start**: spawn, write `initialize` at once, time to its response;
//! - **cheap frames**: after `initialize`, pipe N `probe/x` requests (unknown method → one error
//!   response each) and time from the first write to the last response;
//! - **echo prompts**: pipe P prompts (`reply: ok`) round-robin over S sessions and time until P
//!   `turn/end` events arrived (so every prompt's full event stream was produced and read);
//! - **sessions**: open N sessions with one prompt each, wait for all turns, read the process's RSS.
//!
//! Writing happens on its own thread so a runtime that answers while reading never deadlocks on a
//! full pipe. Every wait has the workload's deadline, and a runtime that writes nothing for
//! [`STALL`] while answers are due is given up on sooner. The reader stores nothing but is
//! bounded all the same: batches wait in a bounded queue (the runtime waits on its pipe), lines
//! are bounded in length, and a runtime that writes far more lines than the workload asks for is
//! killed as flooding ([`crate::runner::Flood`]). The runtime runs in its own process group,
//! killed on every exit path; a failure carries its stderr tail ([`Error`]).

use crate::runner::{CommandSpec, Flood, StdoutLimit};
use crate::trace::ExitInfo;
use crate::wire::{LineDecoder, LineEvent};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How to start the runtime under load.
#[derive(Debug, Clone)]
pub struct Target {
    /// Program and arguments.
    pub cmd: CommandSpec,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// Deadline for any one workload.
    pub timeout: Duration,
}

/// A workload gives up on a runtime that writes nothing for this long while answers are due
/// (or for the workload's deadline, when that is shorter).
pub const STALL: Duration = Duration::from_secs(30);
/// Batches of lines read but not yet looked at (each at most one read, 256 KiB).
const QUEUE_BATCHES: usize = 16;
/// Longest stdout line kept (longer ones are counted and skipped).
const MAX_LINE: usize = 16 << 20;
/// Stdout lines a workload allows beyond [`LINES_PER_REQUEST`] per request it sends.
const SPARE_LINES: usize = 100_000;
/// Stdout lines a workload allows per request it sends (a turn's whole event stream).
const LINES_PER_REQUEST: usize = 64;
const STDERR_TAIL: usize = 64 * 1024;

/// Where in a workload a failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the answer to `initialize`.
    Initialize,
    /// Waiting for the workload's answers.
    Work,
}

/// What went wrong in a workload.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The runtime could not be started (the operating system's reason).
    Spawn(String),
    /// The runtime closed its stdout (how it ended; unknown: still running).
    Ended(ExitInfo),
    /// The workload's deadline passed.
    TimedOut {
        /// The deadline.
        after: Duration,
        /// Time since the runtime last wrote.
        quiet: Duration,
    },
    /// The runtime wrote nothing for this long while answers were due.
    Stalled(Duration),
    /// The runtime wrote far more than the workload asks for and was killed.
    Flooded(Flood),
    /// Its RSS could not be read from /proc.
    NoRss,
}

/// A failed workload: what went wrong, where, and the runtime's own words.
#[derive(Debug, Clone)]
pub struct Error {
    /// What went wrong.
    pub failure: Failure,
    /// Where.
    pub phase: Phase,
    /// Stdout lines read in that phase.
    pub lines: usize,
    /// What the workload was waiting for.
    pub waiting_for: String,
    /// The last bytes of the runtime's stderr.
    pub stderr_tail: String,
    /// Total stderr bytes.
    pub stderr_len: usize,
}

impl Error {
    /// Whether the runtime could not be started: it did not run, or it never answered
    /// `initialize` and wrote nothing at all.
    pub fn cannot_start(&self) -> bool {
        match self.failure {
            Failure::Spawn(_) => true,
            Failure::Ended(_) | Failure::TimedOut { .. } | Failure::Stalled(_) => {
                self.phase == Phase::Initialize && self.lines == 0
            }
            Failure::Flooded(_) | Failure::NoRss => false,
        }
    }

    /// Whether the runtime answered `initialize` and then nothing at all: later workloads would
    /// only wait for it again.
    pub fn hung(&self) -> bool {
        matches!(self.failure, Failure::TimedOut { .. } | Failure::Stalled(_))
            && self.phase == Phase::Work
            && self.lines == 0
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let w = &self.waiting_for;
        match &self.failure {
            Failure::Spawn(e) => write!(f, "cannot start the runtime: {e}")?,
            Failure::Ended(ExitInfo::Unknown) => write!(
                f,
                "the runtime closed its stdout while the kit waited for {w} ({} lines read)",
                self.lines
            )?,
            Failure::Ended(e) => write!(
                f,
                "the runtime ended ({e}) while the kit waited for {w} ({} lines read)",
                self.lines
            )?,
            Failure::TimedOut { after, quiet } => write!(
                f,
                "timed out after {:.1} s waiting for {w} ({} lines read, the last {:.1} s before)",
                after.as_secs_f64(),
                self.lines,
                quiet.as_secs_f64()
            )?,
            Failure::Stalled(q) => write!(
                f,
                "no output for {:.1} s while waiting for {w} ({} lines read): the runtime seems hung",
                q.as_secs_f64(),
                self.lines
            )?,
            Failure::Flooded(fl) => write!(f, "the runtime {fl} (waiting for {w})")?,
            Failure::NoRss => write!(f, "cannot read the runtime's RSS from /proc")?,
        }
        let block = crate::runner::child::stderr_block(&self.stderr_tail, self.stderr_len, 10);
        if !block.is_empty() {
            write!(f, "\n{}", block.trim_end())?;
        } else if !matches!(self.failure, Failure::Spawn(_)) {
            write!(f, " (nothing on stderr)")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// What the stdout reader sends.
enum Msg {
    /// When a read returned and its complete lines, each ended by `\n` (one buffer per read, not
    /// one allocation per line: the reader must cost less than the runtime).
    Batch(Instant, String),
    /// The runtime passed the workload's allowance and was killed.
    Flooded(Flood),
}

/// A running runtime with a line reader.
struct Proc {
    child: Child,
    msgs: mpsc::Receiver<Msg>,
    stdin: Option<std::process::ChildStdin>,
    /// The thread writing the workload's requests (it returns stdin, held open).
    writer: Option<std::thread::JoinHandle<std::process::ChildStdin>>,
    stderr: Arc<Mutex<(VecDeque<u8>, usize)>>,
    stderr_done: Arc<AtomicBool>,
    timeout: Duration,
    phase: Phase,
    /// Lines read in the current phase.
    lines: usize,
    last_out: Instant,
    home: TempDir,
}

/// A directory removed on drop, and by the runner's cleanup when `bench` is stopped by a
/// signal (registered as it is made: a signal cannot fall between the two).
struct TempDir(PathBuf, u64);

impl TempDir {
    fn new(tag: &str) -> std::io::Result<TempDir> {
        let prefix = format!("dsh-loadgen-{tag}-");
        let (p, (), ticket) = crate::runner::cleanup::make_dir(|| {
            crate::runner::cleanup::fresh_dir(&std::env::temp_dir(), &prefix, |_| Ok(()))
        })?;
        Ok(TempDir(p, ticket))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        crate::runner::cleanup::done(self.1);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
        let _ = self.child.wait();
    }
}

fn spawn_error(e: impl std::fmt::Display) -> Error {
    Error {
        failure: Failure::Spawn(e.to_string()),
        phase: Phase::Initialize,
        lines: 0,
        waiting_for: "the process to start".into(),
        stderr_tail: String::new(),
        stderr_len: 0,
    }
}

impl Proc {
    /// Starts the runtime; it may write `requests × LINES_PER_REQUEST + SPARE_LINES` lines.
    fn start(t: &Target, requests: usize) -> Result<Proc, Error> {
        let home = TempDir::new("home").map_err(spawn_error)?;
        let mut child = Command::new(&t.cmd.program)
            .args(&t.cmd.args)
            .envs(t.env.iter().map(|(k, v)| (k, v)))
            .env("DSH_HOME", &home.0)
            .current_dir(&home.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| spawn_error(format!("`{}`: {e}", t.cmd)))?;
        let pgid = child.id() as i32;
        let lines = requests
            .saturating_mul(LINES_PER_REQUEST)
            .saturating_add(SPARE_LINES);
        let limit = StdoutLimit::per_process(lines, lines.saturating_mul(4096));
        let mut meter = limit.meter();
        let mut out = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::sync_channel(QUEUE_BATCHES);
        let started = Instant::now();
        std::thread::spawn(move || {
            let mut d = LineDecoder::new(MAX_LINE);
            let mut buf = vec![0u8; 256 * 1024];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut batch = String::with_capacity(n);
                let mut over = None;
                d.push(&buf[..n], &mut |e| {
                    let len = match e {
                        LineEvent::Line(l) => {
                            batch.push_str(l);
                            batch.push('\n');
                            l.len()
                        }
                        LineEvent::TooLong(n) => n,
                    };
                    over = over.or(meter.count(len));
                });
                if let Some(scope) = over {
                    // SAFETY: kill(2) on the process group we created; no memory is involved.
                    unsafe {
                        libc::kill(-pgid, libc::SIGKILL);
                    }
                    let (lines, bytes) = meter.totals();
                    let _ = tx.send(Msg::Flooded(Flood {
                        lines,
                        bytes,
                        after: started.elapsed(),
                        scope,
                    }));
                    return;
                }
                if tx.send(Msg::Batch(Instant::now(), batch)).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new((VecDeque::new(), 0usize)));
        let stderr_done = Arc::new(AtomicBool::new(false));
        let (tail, done) = (stderr.clone(), stderr_done.clone());
        let mut err = child.stderr.take().expect("piped");
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                t.1 += n;
                t.0.extend(&buf[..n]);
                let over = t.0.len().saturating_sub(STDERR_TAIL);
                t.0.drain(..over);
            }
            done.store(true, Ordering::Release);
        });
        let stdin = child.stdin.take();
        Ok(Proc {
            child,
            msgs: rx,
            stdin,
            writer: None,
            stderr,
            stderr_done,
            timeout: t.timeout,
            phase: Phase::Initialize,
            lines: 0,
            last_out: Instant::now(),
            home,
        })
    }

    fn kill(&mut self) {
        // SAFETY: kill(2) on the process group we created; no memory is involved.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
    }

    /// A failure of the current phase, with the runtime's stderr tail.
    fn fail(&mut self, failure: Failure, waiting_for: &str) -> Error {
        let ended = matches!(failure, Failure::Ended(_) | Failure::Flooded(_));
        if ended {
            // Its last words: the stderr reader reaches the end of the pipe soon after the exit.
            let until = Instant::now() + Duration::from_millis(300);
            while !self.stderr_done.load(Ordering::Acquire) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let v: Vec<u8> = t.0.iter().copied().collect();
        Error {
            failure,
            phase: self.phase,
            lines: self.lines,
            waiting_for: waiting_for.to_owned(),
            stderr_tail: String::from_utf8_lossy(&v).into_owned(),
            stderr_len: t.1,
        }
    }

    /// How the process ended, after its stdout closed (given a moment to finish).
    fn exit_status(&mut self) -> ExitInfo {
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            if let Ok(Some(st)) = self.child.try_wait() {
                return match (st.code(), st.signal()) {
                    (Some(c), _) => ExitInfo::Code(c),
                    (None, Some(s)) => ExitInfo::Signal(s),
                    _ => ExitInfo::Unknown,
                };
            }
            if Instant::now() >= until {
                return ExitInfo::Unknown;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Writes `data` from a separate thread (so reading never waits on writing). The writer's
    /// handle, kept with the process, holds stdin open once written: EOF would end the runtime
    /// before it answered (or before its RSS is read).
    fn write_async(&mut self, data: Vec<u8>) {
        let mut stdin = self.stdin.take().expect("stdin");
        self.writer = Some(std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
            let _ = stdin.flush();
            stdin
        }));
    }

    fn write(&mut self, data: &[u8]) {
        // A runtime that is gone shows as its stdout closing.
        if let Some(s) = self.stdin.as_mut() {
            let _ = s.write_all(data).and_then(|_| s.flush());
        }
    }

    /// Reads lines until `done` says so; returns the time of the last line read. Fails at
    /// `deadline`, after [`STALL`] without output, when stdout closes or on a flood.
    fn read_until(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
        mut done: impl FnMut(&str) -> bool,
    ) -> Result<Instant, Error> {
        let stall = STALL.min(self.timeout);
        self.last_out = Instant::now();
        loop {
            let now = Instant::now();
            let quiet = now.duration_since(self.last_out);
            if quiet >= stall && now < deadline {
                return Err(self.fail(Failure::Stalled(quiet), waiting_for));
            }
            let left = deadline.saturating_duration_since(now).min(stall - quiet);
            match self.msgs.recv_timeout(left) {
                Ok(Msg::Batch(at, batch)) => {
                    self.last_out = at;
                    for l in batch.lines() {
                        self.lines += 1;
                        if done(l) {
                            return Ok(at);
                        }
                    }
                }
                Ok(Msg::Flooded(f)) => return Err(self.fail(Failure::Flooded(f), waiting_for)),
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() >= deadline => {
                    let failure = Failure::TimedOut {
                        after: self.timeout,
                        quiet: self.last_out.elapsed(),
                    };
                    return Err(self.fail(failure, waiting_for));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let st = self.exit_status();
                    return Err(self.fail(Failure::Ended(st), waiting_for));
                }
            }
        }
    }

    fn initialize(&mut self, deadline: Instant) -> Result<Instant, Error> {
        let cwd = self.home.0.display().to_string();
        let init = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{{\"cwd\":{},\"provider\":\"deepseek-official\",\"model\":\"deepseek-v4-flash\"}}}}\n",
            serde_json::Value::String(cwd)
        );
        self.write(init.as_bytes());
        let at = self.read_until(deadline, "the initialize response", |l| {
            l.contains("\"id\":\"init\"")
        })?;
        self.phase = Phase::Work;
        self.lines = 0;
        Ok(at)
    }

    fn rss_kib(&mut self) -> Result<u64, Error> {
        let read = || -> Option<u64> {
            let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        };
        match read() {
            Some(k) => Ok(k),
            None => Err(self.fail(Failure::NoRss, "its RSS")),
        }
    }
}

/// Median time from spawn to the initialize response over `runs` processes.
pub fn cold_start(t: &Target, runs: usize) -> Result<Duration, Error> {
    let mut v = Vec::new();
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let mut p = Proc::start(t, 1)?;
        let at = p.initialize(t0 + t.timeout)?;
        v.push(at - t0);
    }
    v.sort();
    Ok(v[v.len() / 2])
}

/// Cheap frames per second: N unknown-method requests piped after initialize.
pub fn cheap_frames(t: &Target, n: usize) -> Result<f64, Error> {
    let mut p = Proc::start(t, n + 1)?;
    let deadline = Instant::now() + t.timeout;
    p.initialize(deadline)?;
    let mut data = Vec::with_capacity(n * 48);
    for i in 0..n {
        data.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"probe/x\"}}\n").as_bytes(),
        );
    }
    let t0 = Instant::now();
    p.write_async(data);
    let mut got = 0;
    let what = format!("the answers to {n} probe/x requests");
    let end = p.read_until(deadline, &what, |l| {
        if l.contains("\"error\"") {
            got += 1;
        }
        got == n
    })?;
    Ok(n as f64 / (end - t0).as_secs_f64())
}

fn prompt(id: usize, session: usize, text: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"load-{session}\",\"contentBlocks\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n"
    )
}

/// Echo prompts per second (full event streams read), `n` prompts over `sessions` sessions.
/// Returns (prompts/s, output lines read).
pub fn echo_prompts(t: &Target, n: usize, sessions: usize) -> Result<(f64, usize), Error> {
    let mut p = Proc::start(t, n + 1)?;
    let deadline = Instant::now() + t.timeout;
    p.initialize(deadline)?;
    let mut data = Vec::with_capacity(n * 160);
    for i in 0..n {
        data.extend_from_slice(prompt(i, i % sessions.max(1), "reply: ok").as_bytes());
    }
    let t0 = Instant::now();
    p.write_async(data);
    let (mut ends, mut lines) = (0, 0);
    let what = format!("the turn/end events of {n} prompts");
    let end = p.read_until(deadline, &what, |l| {
        lines += 1;
        if l.contains("\"type\":\"turn/end\"") {
            ends += 1;
        }
        ends == n
    })?;
    Ok((n as f64 / (end - t0).as_secs_f64(), lines))
}

/// RSS in KiB after opening `n` sessions with one echo turn each.
pub fn sessions_rss(t: &Target, n: usize) -> Result<u64, Error> {
    let mut p = Proc::start(t, n + 1)?;
    p.initialize(Instant::now() + t.timeout)?;
    open_sessions(&mut p, n, Instant::now() + t.timeout, &mut 0)?;
    std::thread::sleep(Duration::from_millis(200));
    p.rss_kib()
}

/// Like [`sessions_rss`], but gives up after `budget` (or a stall) and reads the RSS anyway:
/// returns (RSS in KiB, turns ended), for runtimes too slow to open `n` sessions in the time
/// allowed.
pub fn sessions_rss_bounded(t: &Target, n: usize, budget: Duration) -> Result<(u64, usize), Error> {
    let mut p = Proc::start(t, n + 1)?;
    p.initialize(Instant::now() + t.timeout)?;
    let mut ends = 0;
    match open_sessions(&mut p, n, Instant::now() + budget, &mut ends) {
        Ok(()) => std::thread::sleep(Duration::from_millis(200)),
        Err(e) if matches!(e.failure, Failure::TimedOut { .. } | Failure::Stalled(_)) => {}
        Err(e) => return Err(e),
    }
    Ok((p.rss_kib()?, ends))
}

/// Opens `n` sessions with one echo turn each, counting the turns that end in `ends`.
fn open_sessions(p: &mut Proc, n: usize, deadline: Instant, ends: &mut usize) -> Result<(), Error> {
    let mut data = Vec::with_capacity(n * 160);
    for i in 0..n {
        data.extend_from_slice(prompt(i, i, "reply: ok").as_bytes());
    }
    p.write_async(data);
    let what = format!("the turn/end events of {n} sessions' prompts");
    p.read_until(deadline, &what, |l| {
        if l.contains("\"type\":\"turn/end\"") {
            *ends += 1;
        }
        *ends == n
    })?;
    Ok(())
}
