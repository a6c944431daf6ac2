//! `dsh-conformance tap`: a transparent stdio proxy to put where a client expects its runtime
//! binary. It runs the real runtime with the client's arguments, environment and working
//! directory, forwards stdin, stdout and signals unchanged (stderr is the runtime's own), and when
//! the runtime ends writes the live session as a redacted golden trace that `replay` accepts
//! (the same redaction as `import`), optionally with the raw transcript beside it. Every line is
//! recorded before it is forwarded, in both directions, so the trace's order is causal: what a
//! side did in reaction to a line comes after that line.
//!
//! A client that takes a binary path (the SDK's `dsh_bin`) gets a two-line wrapper:
//!
//! ```sh
//! #!/bin/sh
//! exec dsh-conformance tap --out /tmp/session.trace -- /path/to/real-runtime "$@"
//! ```

use crate::trace::import::RawEvent;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where the tap writes what it saw.
#[derive(Debug, Clone)]
pub struct TapOptions {
    /// The golden trace.
    pub out: PathBuf,
    /// The raw transcript (`{"t","dir","line"}` lines, the layout `import` reads), if wanted.
    pub raw: Option<PathBuf>,
    /// The trace's `# case:` name.
    pub case: String,
}

/// Bytes of traffic the tap keeps for the trace; beyond it, traffic is still forwarded but no
/// longer recorded (the trace says so).
pub const TAP_BYTES: usize = 64 << 20;

/// What the tap recorded.
#[derive(Default)]
struct Log {
    events: Vec<RawEvent>,
    bytes: usize,
    truncated: bool,
}

impl Log {
    fn push(&mut self, ev: RawEvent, size: usize) {
        if self.bytes + size > TAP_BYTES {
            self.truncated = true;
        }
        if !self.truncated {
            self.bytes += size;
            self.events.push(ev);
        }
    }
}

/// Why the tap could not do its job.
#[derive(Debug)]
pub enum TapError {
    /// The runtime command is empty.
    NoCommand,
    /// The runtime could not be started.
    Start(std::io::Error),
    /// The trace could not be written.
    Write(PathBuf, std::io::Error),
}

impl std::fmt::Display for TapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TapError::NoCommand => f.write_str("no runtime command after --"),
            TapError::Start(e) => write!(f, "cannot start the runtime: {e}"),
            TapError::Write(p, e) => write!(f, "cannot write {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for TapError {}

static FORWARD_TO: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = FORWARD_TO.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe {
            libc::kill(pid, sig);
        }
    }
    crate::sys::record(sig);
}

/// Runs `argv` behind the tap; returns the runtime's exit code (128 + N if a signal killed it).
pub fn tap<S: AsRef<std::ffi::OsStr>>(argv: &[S], opts: &TapOptions) -> Result<i32, TapError> {
    let (program, args) = argv.split_first().ok_or(TapError::NoCommand)?;
    let (program, args) = (program.as_ref(), args.iter().map(AsRef::as_ref));
    // Found before the session, not after it: what it recorded must have somewhere to go.
    for p in std::iter::once(&opts.out).chain(&opts.raw) {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .map_err(|e| TapError::Write(p.clone(), e))?;
    }
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(TapError::Start)?;
    let rec = Recorder {
        log: Arc::default(),
        started: Instant::now(),
    };
    FORWARD_TO.store(child.id() as i32, Ordering::SeqCst);
    // Best effort: a tap that cannot forward signals still forwards the session.
    let _ = crate::sys::catch(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP], forward, false);
    let to_child = child.stdin.take().expect("piped stdin");
    let from_child = child.stdout.take().expect("piped stdout");
    let r = rec.clone();
    std::thread::spawn(move || r.client_to_runtime(to_child));
    let r = rec.clone();
    let out_thread = std::thread::spawn(move || r.runtime_to_client(from_child));
    let status = rec.wait(&mut child)?;
    // The runtime's stdout may stay open in a grandchild: wait a moment, not forever.
    let until = Instant::now() + Duration::from_secs(2);
    while !out_thread.is_finished() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    let exit = RawEvent::Exit {
        t: rec.t(),
        code: status.code(),
    };
    rec.push(exit, 0);
    let log = std::mem::take(&mut *rec.lock());
    write_outputs(&log, argv, opts)?;
    Ok(code)
}

/// The log both directions record into, and the clock its events are timed by.
#[derive(Clone)]
struct Recorder {
    log: Arc<Mutex<Log>>,
    started: Instant,
}

impl Recorder {
    /// Seconds since the runtime started.
    fn t(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, ev: RawEvent, size: usize) {
        self.lock().push(ev, size);
    }

    /// Client → runtime: forwarded as it comes, recorded line by line (an unterminated last
    /// line too), then the EOF.
    fn client_to_runtime(&self, mut to_child: ChildStdin) {
        let mut stdin = std::io::stdin();
        let mut buf = vec![0u8; 64 * 1024];
        let mut pending: Vec<u8> = Vec::new();
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            // Recorded before it is forwarded: an answer must never be recorded before the
            // request it answers.
            pending.extend_from_slice(&buf[..n]);
            take_lines(&mut pending, |line| self.sent(line));
            if to_child
                .write_all(&buf[..n])
                .and_then(|_| to_child.flush())
                .is_err()
            {
                break;
            }
        }
        if !pending.is_empty() {
            self.sent(pending);
        }
        self.push(RawEvent::Eof { t: self.t() }, 0);
        drop(to_child);
    }

    fn sent(&self, bytes: Vec<u8>) {
        let size = bytes.len();
        self.push(RawEvent::In { t: self.t(), bytes }, size);
    }

    /// Runtime → client: forwarded as it comes, recorded line by line (JS-trimmed, blank
    /// lines left out).
    fn runtime_to_client(&self, mut from_child: ChildStdout) {
        let mut stdout = std::io::stdout();
        let mut buf = vec![0u8; 64 * 1024];
        let mut pending: Vec<u8> = Vec::new();
        loop {
            let n = match from_child.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            // Recorded before it is forwarded, as in the other direction: whatever the client
            // does in reaction to a line is then recorded after that line.
            pending.extend_from_slice(&buf[..n]);
            take_lines(&mut pending, |raw| {
                let text = String::from_utf8_lossy(&raw[..raw.len() - 1]);
                let line = crate::wire::trim_js(&text).to_owned();
                let size = line.len();
                if !line.is_empty() {
                    let out = RawEvent::Out {
                        t: self.t(),
                        line,
                        truncated: None,
                    };
                    self.push(out, size);
                }
            });
            let _ = stdout.write_all(&buf[..n]).and_then(|_| stdout.flush());
        }
    }

    /// Waits for the runtime to exit, recording the signals the tap forwards meanwhile.
    fn wait(&self, child: &mut Child) -> Result<ExitStatus, TapError> {
        loop {
            if let Some(sig) = crate::sys::take_caught() {
                let name = crate::sys::signal_name(sig);
                let ev = RawEvent::Signal {
                    t: self.t(),
                    name: name.trim_start_matches("SIG").to_owned(),
                };
                self.push(ev, 0);
            }
            match child.try_wait() {
                Ok(Some(st)) => return Ok(st),
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => return child.wait().map_err(TapError::Start),
            }
        }
    }
}

/// Takes each complete line (with its newline) out of `pending`, in order.
fn take_lines(pending: &mut Vec<u8>, mut each: impl FnMut(Vec<u8>)) {
    while let Some(i) = memchr::memchr(b'\n', pending) {
        each(pending.drain(..=i).collect());
    }
}

fn write_outputs<S: AsRef<std::ffi::OsStr>>(
    log: &Log,
    argv: &[S],
    opts: &TapOptions,
) -> Result<(), TapError> {
    let mut dirs = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push((cwd.to_string_lossy().into_owned(), "{{cwd}}"));
    }
    if let Some(home) = std::env::var_os("DSH_HOME").filter(|h| !h.is_empty()) {
        dirs.push((home.to_string_lossy().into_owned(), "{{home}}"));
    }
    let rec = super::Recording {
        events: log.events.clone(),
        dirs,
        stderr_tail: String::new(),
    };
    let words: Vec<String> = argv
        .iter()
        .map(|a| super::lossless_display(a.as_ref()))
        .collect();
    let mut source = format!("dsh-conformance tap -- {}", words.join(" "));
    if log.truncated {
        source.push_str(&format!(" (recording stopped at {TAP_BYTES} bytes)"));
    }
    let text = rec.to_trace(&opts.case, &source, None);
    std::fs::write(&opts.out, text).map_err(|e| TapError::Write(opts.out.clone(), e))?;
    if let Some(raw) = &opts.raw {
        let mut out = String::new();
        for ev in &log.events {
            let v = match ev {
                RawEvent::In { t, bytes } => {
                    serde_json::json!({"t": t, "dir": "in", "raw": String::from_utf8_lossy(bytes)})
                }
                RawEvent::Out { t, line, .. } => {
                    serde_json::json!({"t": t, "dir": "out", "line": line})
                }
                RawEvent::Eof { t } => serde_json::json!({"t": t, "dir": "in", "note": "EOF"}),
                RawEvent::Signal { t, name } => {
                    serde_json::json!({"t": t, "dir": "in", "note": format!("SIG{name}")})
                }
                RawEvent::Exit { t, code } => serde_json::json!({"t": t, "exit": code}),
            };
            out.push_str(&v.to_string());
            out.push('\n');
        }
        std::fs::write(raw, out).map_err(|e| TapError::Write(raw.clone(), e))?;
    }
    Ok(())
}
