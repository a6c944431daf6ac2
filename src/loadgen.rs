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
//! full pipe; every wait has a deadline; the child is killed on every exit path.

use crate::wire::{LineDecoder, LineEvent};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How to start the runtime under load.
#[derive(Debug, Clone)]
pub struct Target {
    /// Program and arguments.
    pub cmd: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// Deadline for any one workload.
    pub timeout: Duration,
}

/// A running runtime with a line reader.
struct Proc {
    child: Child,
    /// Per read: when it returned and its complete lines, each ended by `\n` (one buffer per
    /// read, not one allocation per line: the reader must cost less than the runtime).
    lines: mpsc::Receiver<(Instant, String)>,
    stdin: Option<std::process::ChildStdin>,
    _home: TempDir,
}

/// A directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> std::io::Result<TempDir> {
        let p = std::env::temp_dir().join(format!(
            "dsh-loadgen-{tag}-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&p)?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proc {
    fn start(t: &Target) -> std::io::Result<Proc> {
        let home = TempDir::new("home")?;
        let (prog, args) = t
            .cmd
            .split_first()
            .ok_or_else(|| std::io::Error::other("empty command"))?;
        let mut child = Command::new(prog)
            .args(args)
            .envs(t.env.iter().map(|(k, v)| (k, v)))
            .env("DSH_HOME", &home.0)
            .current_dir(&home.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut out = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut d = LineDecoder::default();
            let mut buf = vec![0u8; 256 * 1024];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                // One message per read, not per line: the reader must cost less than the runtime.
                let mut batch = String::with_capacity(n);
                d.push(&buf[..n], &mut |e| {
                    if let LineEvent::Line(l) = e {
                        batch.push_str(l);
                        batch.push('\n');
                    }
                });
                if tx.send((Instant::now(), batch)).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Ok(Proc {
            child,
            lines: rx,
            stdin,
            _home: home,
        })
    }

    /// Writes `data` from a separate thread (so reading never waits on writing). The handle
    /// holds stdin open once written: EOF would end the runtime before it answered.
    fn write_async(&mut self, data: Vec<u8>) -> std::thread::JoinHandle<std::process::ChildStdin> {
        let mut stdin = self.stdin.take().expect("stdin");
        std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
            let _ = stdin.flush();
            stdin
        })
    }

    fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        let s = self.stdin.as_mut().expect("stdin");
        s.write_all(data)?;
        s.flush()
    }

    /// Reads lines until `done` says so; returns the time of the last line read.
    fn read_until(
        &self,
        deadline: Instant,
        mut done: impl FnMut(&str) -> bool,
    ) -> Result<Instant, String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((at, batch)) => {
                    if batch.lines().any(&mut done) {
                        return Ok(at);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => return Err(TIMED_OUT.into()),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err("the runtime closed stdout".into())
                }
            }
        }
    }

    fn initialize(&mut self, deadline: Instant) -> Result<Instant, String> {
        let cwd = self._home.0.display().to_string();
        let init = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{{\"cwd\":{},\"provider\":\"deepseek-official\",\"model\":\"deepseek-v4-flash\"}}}}\n",
            serde_json::Value::String(cwd)
        );
        self.write(init.as_bytes()).map_err(|e| e.to_string())?;
        self.read_until(deadline, |l| l.contains("\"id\":\"init\""))
    }

    fn rss_kib(&self) -> Option<u64> {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
}

/// Median time from spawn to the initialize response over `runs` processes.
pub fn cold_start(t: &Target, runs: usize) -> Result<Duration, String> {
    let mut v = Vec::new();
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let mut p = Proc::start(t).map_err(|e| format!("cannot start {:?}: {e}", t.cmd))?;
        let at = p.initialize(t0 + t.timeout)?;
        v.push(at - t0);
    }
    v.sort();
    Ok(v[v.len() / 2])
}

/// Cheap frames per second: N unknown-method requests piped after initialize.
pub fn cheap_frames(t: &Target, n: usize) -> Result<f64, String> {
    let mut p = Proc::start(t).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + t.timeout;
    p.initialize(deadline)?;
    let mut data = Vec::with_capacity(n * 48);
    for i in 0..n {
        data.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"probe/x\"}}\n").as_bytes(),
        );
    }
    let t0 = Instant::now();
    let _w = p.write_async(data);
    let mut got = 0;
    let end = p.read_until(deadline, |l| {
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
pub fn echo_prompts(t: &Target, n: usize, sessions: usize) -> Result<(f64, usize), String> {
    let mut p = Proc::start(t).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + t.timeout;
    p.initialize(deadline)?;
    let mut data = Vec::with_capacity(n * 160);
    for i in 0..n {
        data.extend_from_slice(prompt(i, i % sessions.max(1), "reply: ok").as_bytes());
    }
    let t0 = Instant::now();
    let _w = p.write_async(data);
    let (mut ends, mut lines) = (0, 0);
    let end = p.read_until(deadline, |l| {
        lines += 1;
        if l.contains("\"type\":\"turn/end\"") {
            ends += 1;
        }
        ends == n
    })?;
    Ok((n as f64 / (end - t0).as_secs_f64(), lines))
}

/// RSS in KiB after opening `n` sessions with one echo turn each.
pub fn sessions_rss(t: &Target, n: usize) -> Result<u64, String> {
    match sessions_rss_bounded(t, n, t.timeout)? {
        (kib, ended) if ended == n => Ok(kib),
        (_, ended) => Err(format!("timed out after {ended} of {n} turns ended")),
    }
}

/// Like [`sessions_rss`], but gives up after `budget` and reads the RSS anyway: returns
/// (RSS in KiB, turns ended), for runtimes too slow to open `n` sessions in the time allowed.
pub fn sessions_rss_bounded(
    t: &Target,
    n: usize,
    budget: Duration,
) -> Result<(u64, usize), String> {
    let mut p = Proc::start(t).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + t.timeout;
    p.initialize(deadline)?;
    let mut data = Vec::with_capacity(n * 160);
    for i in 0..n {
        data.extend_from_slice(prompt(i, i, "reply: ok").as_bytes());
    }
    let _w = p.write_async(data);
    let mut ends = 0;
    match p.read_until(Instant::now() + budget, |l| {
        if l.contains("\"type\":\"turn/end\"") {
            ends += 1;
        }
        ends == n
    }) {
        Ok(_) => std::thread::sleep(Duration::from_millis(200)),
        Err(e) if e == TIMED_OUT => {}
        Err(e) => return Err(e),
    }
    let kib = p
        .rss_kib()
        .ok_or_else(|| "cannot read the runtime's RSS from /proc".to_owned())?;
    Ok((kib, ends))
}

const TIMED_OUT: &str = "timed out";
