//! The reference client: a small, correct client of the protocol (docs/CONTRACT.md#s15), driven
//! through the driver protocol (`dsh-conformance client-driver [--bug NAME]`). Each [`Bug`] is a
//! mutant that breaks exactly one client rule, to prove its check catches it.

mod drive;
mod lines;

use super::collect::{Run, Step};
use super::driver::DriverError;
pub use drive::{app, drive};
use lines::{pooled_lines, quadratic_lines};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Read, Write};
use std::process::{Child, ChildStderr, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

macro_rules! bugs {
    ($($v:ident = $name:literal $check:ident: $what:literal;)*) => {
        /// One deliberate client bug.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Bug { $(#[doc = $what] $v,)* }
        /// Every bug: its name, the check it must fail, what it does.
        pub const BUGS: &[(Bug, &str, crate::check::CheckId, &str)] =
            &[$((Bug::$v, $name, crate::check::CheckId::$check, $what),)*];
    };
}

bugs! {
    EagerPrompt = "eager-prompt" ClientWaitsForInitialize: "sends initialize and does not wait for its answer";
    FifoIds = "fifo-ids" ClientIdsOutOfOrder: "takes the next response for the oldest request, whatever its id";
    AnyIdle = "any-idle" ClientRootIdle: "ends a run at any session's idle";
    StrictEvents = "strict-events" ClientForwardCompatible: "fails a run on an event type it does not know";
    StrictKinds = "strict-kinds" ClientForwardCompatible: "fails a run whose turn/end has a reason kind it has no name for (an enum without an open case)";
    ShortLines = "short-lines" ClientLongLines: "drops stdout lines longer than 1 MiB";
    QuadraticLines = "quadratic-lines" ClientLongLines: "appends each read to a copy of its buffer and searches the whole buffer for a newline after every read (the TypeScript client's line reading)";
    PooledReads = "pooled-reads" ClientLineMemory: "keeps each read (4 KiB at most) of a line in a 64 KiB buffer of its own until the line ends, as slices of pooled read buffers keep their pools alive";
    IgnoreExit = "ignore-exit" ClientRuntimeExit: "does not notice the runtime's exit while it waits for a response or a run, and waits on";
    ExitHangsRequests = "exit-hangs-requests" ClientRuntimeExit: "notices the runtime's exit while it collects a run, not while it waits for a response: a request pending at the exit waits on";
    NoDrainStderr = "no-drain-stderr" ClientDrainsStderr: "pipes the runtime's stderr and never reads it";
    UntypedErrors = "untyped-errors" ClientTypedErrors: "reports error responses without their code";
    PoisonedByError = "poisoned-by-error" ClientTypedErrors: "keeps the first error response it reads and fails every later request with it (dsh-conductor's client)";
    KillOnClose = "kill-on-close" ClientGracefulShutdown: "kills the runtime (SIGKILL) on close";
    LooseReceipt = "loose-receipt" ClientReceiptCorrelation: "takes any splice that inserts a message for the run's receipt, whatever its id and session";
    ReceiptAnySession = "receipt-any-session" ClientReceiptCorrelation: "matches the run's receipt by message id on any session";
    BatchedNoReceipt = "batched-no-receipt" ClientReceiptCorrelation: "ignores receipts, collecting the run from its prompt's response, and reads in batches: an idle of its session ends the run only when no frame was read after it (one that came with later frames is taken as stale)";
    FirstIdle = "first-idle" ClientSubagentTrees: "ends a run at the root's first idle, with a subagent of its tree still running";
    RootChildrenOnly = "root-children-only" ClientSubagentTrees: "counts only the subagents the root started, so a grandchild still running when the root goes idle does not keep the run open";
    ChildIdle = "child-idle" ClientSubagentTrees: "waits past the root's idle while a subagent runs, then ends the run at the next idle of its tree, the child's";
    Hoard = "hoard" ClientBoundedBacklog: "keeps every event of the sessions it did not prompt";
    Rescan = "rescan" ClientChattySessions: "drops repeated events of sessions it did not prompt by comparing each one's JSON text with that of every such event seen so far";
    UnboundedRun = "unbounded-run" ClientIdleNeverComes: "has no bound on a run: as the driver protocol asks of such a client, its driver runs a bounded run unbounded (saying so on stderr), and it waits for the idle forever";
    NoGrace = "no-grace" ClientGracefulShutdown: "sends SIGTERM as soon as shutdown goes unanswered for a second, and waits for the exit with stdin still open";
    StrictLines = "strict-lines" ClientRobustNonFrameLines: "stops reading stdout at a line that is not JSON, as if the runtime had gone";
    WaitForExit = "wait-for-exit" ClientRobustStdoutClosed: "at the end of stdout waits for the runtime's exit, however long, before failing what is pending";
    DeadAfterClose = "dead-after-close" ClientRobustStdoutClosed: "fails what is pending when stdout ends, then forgets that it ended: a later request waits for an answer that cannot come";
}

impl Bug {
    /// The bug called `name`.
    pub fn parse(name: &str) -> Option<Bug> {
        BUGS.iter().find(|b| b.1 == name).map(|b| b.0)
    }
}

const WAIT: Duration = Duration::from_secs(60);

/// The queue length up to which a response's wait keeps other sessions' notifications.
const FOREIGN_NOTES: usize = 256;

fn answer(v: Value, bug: Option<Bug>) -> Result<Value, DriverError> {
    match v.get("error") {
        Some(e) => {
            let code = if bug == Some(Bug::UntypedErrors) {
                None
            } else {
                e["code"].as_i64()
            };
            Err(err(
                "rpc",
                code,
                e["message"].as_str().unwrap_or("JSON-RPC error"),
            ))
        }
        None => Ok(v["result"].clone()),
    }
}

fn err(class: &str, code: Option<i64>, message: impl Into<String>) -> DriverError {
    DriverError {
        class: class.into(),
        code,
        message: message.into(),
    }
}

/// A runtime the client launched, and what it read from it.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Option<Value>>,
    notes: VecDeque<Value>,
    stash: HashMap<String, Value>,
    next: u64,
    bug: Option<Bug>,
    /// Every event of other sessions read (the `rescan` mutant).
    history: Vec<Value>,
    /// The sessions the client prompted.
    prompted: std::collections::HashSet<String>,
    /// The subagents of those sessions (`subagent.started`), whose events a run reads too.
    children: std::collections::HashSet<String>,
    /// Whether it is collecting a run (not waiting for a response): `exit-hangs-requests`.
    collecting: bool,
    /// Stdout's end was reported once (`dead-after-close` then waits on).
    ended: bool,
    /// The first error response read (`poisoned-by-error` fails every later request with it).
    poison: Option<DriverError>,
    _stderr: Option<ChildStderr>,
}

impl Client {
    fn start(bug: Option<Bug>) -> Result<Client, DriverError> {
        let bin = std::env::var("DSH_BIN").map_err(|_| err("other", None, "DSH_BIN is not set"))?;
        let mut child = Command::new(&bin)
            .args(["--profile", "sdk"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| err("transport", None, format!("cannot launch {bin}: {e}")))?;
        let stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take();
        if bug != Some(Bug::NoDrainStderr) {
            let mut e = stderr.take().expect("piped");
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while matches!(e.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
        // Bounded: a reader that runs ahead of the client would hold what it read in memory.
        let (tx, rx) = mpsc::sync_channel(256);
        std::thread::spawn(move || {
            let lines: Box<dyn Iterator<Item = std::io::Result<Vec<u8>>>> = match bug {
                Some(Bug::QuadraticLines) => Box::new(quadratic_lines(stdout)),
                Some(Bug::PooledReads) => Box::new(pooled_lines(stdout)),
                _ => Box::new(std::io::BufReader::new(stdout).split(b'\n')),
            };
            for line in lines {
                let Ok(line) = line else { break };
                if bug == Some(Bug::ShortLines) && line.len() > 1 << 20 {
                    continue;
                }
                match serde_json::from_slice::<Value>(&line) {
                    Ok(v) => {
                        if tx.send(Some(v)).is_err() {
                            return;
                        }
                    }
                    Err(_) if bug == Some(Bug::StrictLines) => break,
                    Err(_) => {}
                }
            }
            let _ = tx.send(None);
        });
        let stdin = child.stdin.take();
        let mut c = Client {
            child,
            stdin,
            rx,
            notes: VecDeque::new(),
            stash: HashMap::new(),
            next: 0,
            bug,
            history: Vec::new(),
            prompted: Default::default(),
            children: Default::default(),
            collecting: false,
            ended: false,
            poison: None,
            _stderr: stderr,
        };
        let cwd = std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let id = c.send(
            "initialize",
            json!({"cwd": cwd, "provider": "deepseek-official", "model": "deepseek-v4-flash"}),
        )?;
        if bug != Some(Bug::EagerPrompt) {
            c.response(&id, WAIT)?;
        }
        Ok(c)
    }

    fn send(&mut self, method: &str, params: Value) -> Result<String, DriverError> {
        self.next += 1;
        let id = format!("ref-{}", self.next);
        if method == "session/prompt" {
            let s = params["sessionId"].as_str().unwrap_or("");
            self.prompted.insert(s.to_owned());
        }
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let w = self
            .stdin
            .as_mut()
            .ok_or_else(|| err("transport", None, "stdin closed"))?;
        writeln!(w, "{line}")
            .and_then(|_| w.flush())
            .map_err(|e| err("transport", None, format!("write: {e}")))?;
        Ok(id)
    }

    fn read(&mut self, wait: Duration) -> Result<Value, DriverError> {
        loop {
            let v = self.read_any(wait)?;
            if v["method"] == "subagent.started" {
                if let Some(c) = v["params"]["childSessionId"].as_str() {
                    self.children.insert(c.to_owned());
                }
            }
            let session = v["params"]["sessionId"].as_str().unwrap_or("");
            let others = v["method"] == "session.event" && !self.prompted.contains(session);
            if self.bug == Some(Bug::Hoard) && others {
                self.history.push(v.clone());
            }
            if self.bug != Some(Bug::Rescan) || !others {
                return Ok(v);
            }
            let text = v.to_string();
            if !self
                .history
                .iter()
                .any(|h| serde_json::to_string(h).is_ok_and(|t| t == text))
            {
                self.history.push(v.clone());
                return Ok(v);
            }
        }
    }

    fn read_any(&mut self, wait: Duration) -> Result<Value, DriverError> {
        match self.rx.recv_timeout(wait) {
            Ok(Some(v)) => Ok(v),
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                if self.ended && self.bug == Some(Bug::DeadAfterClose) {
                    // The mutant waits on: forever, as far as any bound of the kit goes.
                    loop {
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                }
                self.ended = true;
                Err(self.gone())
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                Err(err("timeout", None, "no answer from the runtime"))
            }
        }
    }

    /// Stdout ended: the runtime's exit (waited for a moment), or its stdout closed while it lives.
    fn gone(&mut self) -> DriverError {
        if self.bug == Some(Bug::WaitForExit) {
            let code = self.child.wait().ok().and_then(|s| s.code());
            return err(
                "transport",
                None,
                format!("the runtime exited (code {code:?})"),
            );
        }
        for _ in 0..100 {
            if let Ok(Some(s)) = self.child.try_wait() {
                let hangs = match self.bug {
                    Some(Bug::IgnoreExit) => true,
                    Some(Bug::ExitHangsRequests) => !self.collecting,
                    _ => false,
                };
                if hangs {
                    // The mutant waits on: forever, as far as any bound of the kit goes.
                    loop {
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                }
                let code = s.code();
                return err(
                    "transport",
                    None,
                    format!("the runtime exited (code {code:?})"),
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        err("transport", None, "the runtime closed its stdout")
    }

    /// The response to `id` (notifications meanwhile are kept for runs).
    fn response(&mut self, id: &str, wait: Duration) -> Result<Value, DriverError> {
        loop {
            if let Some(v) = self.stash.remove(id) {
                return answer(v, self.bug);
            }
            let v = self.read(wait)?;
            if v.get("method").is_some() {
                if self.wanted(&v) {
                    self.notes.push_back(v);
                }
            } else if self.bug == Some(Bug::FifoIds) || v["id"] == id {
                return answer(v, self.bug);
            } else {
                self.stash
                    .insert(v["id"].as_str().unwrap_or("").to_owned(), v);
            }
        }
    }

    /// Whether a notification read while waiting for a response is kept for a later run: always
    /// for the sessions the client prompted and their subagents; another session's event or
    /// status only while the queue is short ([`FOREIGN_NOTES`]), so that a chatty runtime does
    /// not fill it (a run still sees look-alikes, as a receipt's splice on another session).
    fn wanted(&self, v: &Value) -> bool {
        let per_session = v["method"] == "session.event" || v["method"] == "session.status";
        let session = v["params"]["sessionId"].as_str().unwrap_or("");
        !per_session
            || self.prompted.contains(session)
            || self.children.contains(session)
            || self.notes.len() < FOREIGN_NOTES
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, DriverError> {
        self.collecting = false;
        let id = self.send(method, params)?;
        if let Some(e) = &self.poison {
            return Err(e.clone());
        }
        let r = self.response(&id, WAIT);
        if let Err(e) = &r {
            if e.class == "rpc" && self.bug == Some(Bug::PoisonedByError) {
                self.poison = Some(e.clone());
            }
        }
        r
    }

    fn note(&mut self, wait: Duration) -> Result<Value, DriverError> {
        if let Some(v) = self.notes.pop_front() {
            return Ok(v);
        }
        loop {
            let v = self.read(wait)?;
            if v.get("method").is_none() {
                continue;
            }
            return Ok(v);
        }
    }

    /// Runs one prompt to its end; with `bound`, fails (class `timeout`) when it takes longer.
    fn run(
        &mut self,
        session: &str,
        text: &str,
        bound: Option<Duration>,
    ) -> Result<Value, DriverError> {
        if bound.is_some() && self.bug == Some(Bug::UnboundedRun) {
            // What a driver says of a client with no bound (docs/CLIENT-DRIVERS.md).
            eprintln!("client-driver: this client has no bound on a run: the run is unbounded");
        }
        let until = bound.map(|b| Instant::now() + b);
        let r = self.request(
            "session/prompt",
            json!({"sessionId": session, "contentBlocks": [{"type": "text", "text": text}]}),
        )?;
        let mut run = Run::new(session, r["messageId"].clone(), self.bug);
        self.collecting = true;
        loop {
            let wait = match until {
                _ if self.bug == Some(Bug::UnboundedRun) => Duration::MAX,
                Some(u) => u.saturating_duration_since(Instant::now()),
                None => WAIT,
            };
            let n = match self.note(wait) {
                Err(e) if e.class == "timeout" && until.is_some() => {
                    return Err(err(
                        "timeout",
                        None,
                        "the run's idle did not come within its bound",
                    ))
                }
                other => other?,
            };
            match run.on(&n) {
                Step::More => {}
                Step::Done(_) if self.bug == Some(Bug::BatchedNoReceipt) && self.batched() => {}
                Step::Done(v) => return Ok(v),
                Step::Fail(e) => return Err(e),
            }
        }
    }

    /// The `batched-no-receipt` mutant's batch: whether another frame came with the last one
    /// (within a few milliseconds); one that did is kept for the run or its request.
    fn batched(&mut self) -> bool {
        if !self.notes.is_empty() {
            return true;
        }
        match self.read(Duration::from_millis(20)) {
            Ok(v) if v.get("method").is_some() => self.notes.push_back(v),
            Ok(v) => {
                let id = v["id"].as_str().unwrap_or("").to_owned();
                self.stash.insert(id, v);
            }
            Err(_) => return false,
        }
        true
    }

    fn close(&mut self) {
        // The mutant misses an exit while it waits for a run, not while it closes.
        if self.bug == Some(Bug::IgnoreExit) {
            self.bug = None;
        }
        if self.bug == Some(Bug::KillOnClose) {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return;
        }
        if let Ok(id) = self.send("shutdown", json!({})) {
            let bound = if self.bug == Some(Bug::NoGrace) { 1 } else { 2 };
            let answered = self.response(&id, Duration::from_secs(bound)).is_ok();
            if !answered && self.bug == Some(Bug::NoGrace) {
                // SAFETY: kill(2) on the child we spawned and have not reaped.
                unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
                for _ in 0..200 {
                    if matches!(self.child.try_wait(), Ok(Some(_))) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        self.stdin = None;
        let pid = self.child.id() as i32;
        for (sig, wait) in [(0, 3000), (libc::SIGTERM, 2000)] {
            if sig != 0 {
                // SAFETY: kill(2) on the child we spawned and have not reaped.
                unsafe { libc::kill(pid, sig) };
            }
            for _ in 0..wait / 10 {
                if matches!(self.child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
