//! The reference runtime (docs/CONTRACT.md#s2 to #s9; its own choices #s13.4, its model #s13.5):
//! an in-memory, deterministic, single-threaded implementation of the DeepSeek Harness SDK runtime
//! protocol, in three editions.
//!
//! Time is virtual: every call takes `now_ms` (epoch milliseconds in the stdio loop), so tests and
//! fuzzers are deterministic. Model work is scheduled and runs from [`Runtime::poll`]. The only
//! I/O is the session store under `DSH_HOME` ([`persist`]), `sdk-minimal`'s real bash (behind
//! [`shell::PersistentShell`]) and the `sdk` profile's bash, which goes through
//! [`Config::sandbox`] ([`sandbox`]: none in memory, the host's bubblewrap in a process).
//! [`serve_stdio`] wraps it in a process.
//!
//! Decisions where the recordings and the contract leave room (each is in the fidelity allowlist
//! when it shows on the wire):
//! - large payloads (system prompt, tool schemas in `request/header`) are short stand-ins;
//! - failing directives emit the real retry events but do not wait the ≈ 15 s back-off, and the
//!   process answers at once, unless launched with `--realistic-timing` ([`Timing`]);
//! - `sdk` bash runs under the host's bubblewrap as the release's does, or is refused without a
//!   backend ([`sandbox`]); a running command holds the runtime until it ends;
//! - `sdk-minimal`'s bash is a real persistent bash ([`shell`]), or with `--shell emulated` an
//!   emulation that runs no program; a command holds the runtime until it ends (the release serves
//!   other requests meanwhile); its launch (profiles, patch layers, stderr) is [`launch`]'s
//!   (docs/CONTRACT.md#s13.6);
//! - session id `""`: the turn fails as in the real runtime (`cannot encode an empty path
//!   segment`), the id is never stored, and — unlike the real runtime — `shutdown` still works;
//! - a session id the release cannot send in its model request's header (a control character or
//!   a code unit above U+00FF, a lone surrogate included: docs/CONTRACT.md#s11.4) works here;
//! - strings are held text ([`wire::json::held`]): lone surrogates are echoed as the release
//!   echoes them, and cross to the file system as Node encodes them (U+FFFD);
//! - sessions are created synchronously, so a `session/wait` pipelined with a session's first
//!   prompt waits for it instead of racing to `unknown SDK session`;
//! - the scripted model answers `ok` to runtime notices (a settled subagent) like the recording
//!   stub, and echoes user text that holds no directive.

pub mod activation;
mod assistant;
mod bash;
pub mod bash_text;
mod cd;
mod config;
pub mod editor;
mod events;
pub use events::seed_ids;
mod bash_input;
mod fast;
pub mod files;
mod goal_rounds;
mod goals;
pub(crate) mod image;
mod inspect;
mod jobs;
pub mod launch;
pub mod memory;
mod methods;
mod model;
pub mod patch;
pub mod persist;
pub mod profile;
mod reaper;
mod relay;
pub mod sandbox;
pub mod sandbox_io;
mod sandbox_job;
pub mod script;
mod sessions;
pub mod shell;
mod stdio;
mod step;
mod tool_args;
mod tools;
mod turn;
pub mod yaml;

pub use config::{Config, Edition, Env, Profile, Timing};
pub use stdio::{serve, serve_stdio, USAGE};

use crate::wire;
use crate::wire::json::Deep;
use serde_json::Value;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::rc::Rc;

/// The route `initialize` committed: what new sessions are created with.
#[derive(Debug, Clone)]
struct Route {
    model: String,
    max_tokens: Option<f64>,
    cwd: Rc<str>,
}

/// A user message waiting in (or claimed from) a session's inbox.
struct Msg {
    /// The full message object `{content, source, role, id}`: its content may be arbitrarily deep.
    value: Deep,
    /// What the scripted model answers to it.
    step: script::Step,
    /// `subagent.finished` params to send when this (notice) message is claimed.
    finished: Option<Value>,
}

impl Msg {
    /// A copy for a fork child's inbox, without recursing (the content may be arbitrarily deep):
    /// the same message, its notice (if any) left to the parent.
    fn fork_copy(&self) -> Msg {
        let mut text = Vec::new();
        wire::json::write_value(&self.value, &mut text);
        let text = String::from_utf8(text).unwrap_or_default();
        let value = wire::json::parse(&text).map_or(Value::Null, |p| p.value);
        Msg {
            value: Deep::new(value),
            step: self.step.clone(),
            finished: None,
        }
    }
}

/// A session's log through its last completed turn: what the release's `subagent_fork` seeds
/// a child with ("the latest completed-turn prefix").
#[derive(Debug, Clone, Copy, Default)]
struct Seed {
    /// The seq after that turn's `turn/end`.
    next_seq: u64,
    /// How many messages the inbox held then.
    pending: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Next: `step/start` and the request-building events.
    Pre,
    /// Next: the model's answer.
    Model,
    /// The model never answers (`hang`).
    Hung,
}

struct Turn {
    n: u32,
    step: u32,
    msg: Option<Msg>,
    script: script::Script,
    delay_ms: u64,
    phase: Phase,
    /// Last seq the model request carried (`delivery-accepted.throughSeq`).
    through: u64,
    /// A failing request waiting out its back-off (`--realistic-timing`): the retry id and the
    /// next attempt's index.
    retry: Option<(String, usize)>,
    /// Working-directory notices the turn claimed when it started, read in its first step.
    claimed: Vec<Value>,
}

struct Session {
    seq: u64,
    turns: u32,
    /// System prompt, runtime context and request context already emitted.
    primed: bool,
    /// `session/title` already emitted (or the session was reopened from the store).
    titled: bool,
    /// `request/header` already emitted by this process.
    header_sent: bool,
    cwd: Rc<str>,
    route: Rc<Route>,
    inbox: VecDeque<Msg>,
    /// Its log as its last completed turn left it: the seed of a fork made now.
    seed: Seed,
    /// The inbox holds prompts a failed turn left queued: nothing runs them until the next
    /// prompt (and the session counts as idle).
    stalled: bool,
    turn: Option<Turn>,
    running: bool,
    parent: Option<Box<str>>,
    /// A `subagent_fork` child (`subagent.finished.provider` `fork`).
    forked: bool,
    children: u32,
    /// Content of the last assistant message (for `subagent.finished`).
    last_reply: Option<Value>,
    /// Reason of the last `turn/end`.
    last_end: Option<Value>,
    waiters: Vec<wire::Id>,
    legacy_pending: Vec<wire::Id>,
    /// Token of the scheduled phase (0 = none).
    sched: u64,
    /// The `sdk-minimal` persistent shell, once a bash call started it.
    shell: Option<Box<dyn shell::PersistentShell>>,
    /// The `sdk` profile's file-tool state (observations, todo list).
    files: files::State,
    /// The `sdk` profile's background jobs (promoted or `run_in_background` bash calls).
    jobs: jobs::Jobs,
    /// Its current goal (the `sdk` profile's goal tools; [`goals`]).
    goal: Option<goals::Goal>,
    /// Notices a tool spliced with target `next-step` (a `working_directory` change), claimed
    /// by the turn's next step.
    next_step: Vec<Value>,
    /// The working directory of the last runtime context sent (a step sends a new one when the
    /// directory changed since).
    context_cwd: Option<Rc<str>>,
    /// Its place in the order this process opened sessions (see [`Runtime::adopt`]).
    born: u64,
    /// Latest event time written: a session's `time` never goes backwards, even when a late
    /// poll runs work stamped with its (earlier) due time after a line stamped with the clock.
    last_time: u64,
}

impl Session {
    /// What the session store keeps of it now.
    fn stored(&self) -> persist::Stored {
        persist::Stored {
            seq: self.seq,
            turns: self.turns,
            goal: self.goal.as_ref().map(goals::Goal::durable),
        }
    }

    fn new(route: Rc<Route>) -> Session {
        Session {
            seq: 0,
            turns: 0,
            primed: false,
            titled: false,
            header_sent: false,
            cwd: route.cwd.clone(),
            route,
            inbox: VecDeque::new(),
            seed: Seed::default(),
            stalled: false,
            turn: None,
            running: false,
            parent: None,
            forked: false,
            children: 0,
            last_reply: None,
            last_end: None,
            waiters: Vec::new(),
            legacy_pending: Vec::new(),
            sched: 0,
            shell: None,
            files: files::State::default(),
            jobs: jobs::Jobs::default(),
            goal: None,
            next_step: Vec::new(),
            context_cwd: None,
            last_time: 0,
            born: 0,
        }
    }

    fn busy(&self) -> bool {
        self.turn.is_some() || (!self.inbox.is_empty() && !self.stalled) || self.children > 0
    }
}

/// The reference runtime. Feed it lines; it appends output frames.
pub struct Runtime {
    cfg: Config,
    initialized: bool,
    shutting_down: bool,
    exit: Option<i32>,
    route: Rc<Route>,
    sessions: HashMap<Box<str>, Session>,
    heap: BinaryHeap<Reverse<(u64, u64, Box<str>)>>,
    next_token: u64,
    store: Option<persist::Store>,
    /// Sessions opened so far (their [`Session::born`] order).
    opened: u64,
    /// Sessions opened so far for prompts without `sessionId` (see [`Runtime::anonymous_open`]).
    anonymous: u32,
    /// Reused by [`Runtime::handle_line`] to read each line's envelope (`fast`).
    tape: wire::json::Tape,
    /// Cancels a running `sdk-minimal` command when the process is going away.
    cancel: shell::Cancel,
    /// Sessions with a background job that may still be running ([`reaper`]).
    job_sessions: BTreeSet<Box<str>>,
    /// Sessions whose turn just started in a working directory that is gone: the turn fails as
    /// soon as the line that started it is handled ([`Runtime::handle_line`]).
    doomed: Vec<Box<str>>,
}

/// How often a driver should poll while [`Runtime::watching_jobs`]: a job's end is seen at most
/// this late.
pub const JOB_POLL_MS: u64 = 50;

impl Runtime {
    /// A runtime with no sessions, not yet initialized.
    pub fn new(cfg: Config) -> Runtime {
        let cwd: Rc<str> = Rc::from(cfg.process_cwd.to_string_lossy().as_ref());
        let model = match cfg.edition {
            Edition::Current => "deepseek-v4-flash",
            _ => "deepseek-official",
        };
        let store = cfg.home.clone().map(persist::Store::new);
        Runtime {
            route: Rc::new(Route {
                model: model.into(),
                max_tokens: None,
                cwd,
            }),
            cfg,
            initialized: false,
            shutting_down: false,
            exit: None,
            sessions: HashMap::new(),
            heap: BinaryHeap::new(),
            next_token: 1,
            store,
            opened: 0,
            anonymous: 0,
            tape: Default::default(),
            cancel: shell::Cancel::default(),
            job_sessions: BTreeSet::new(),
            doomed: Vec::new(),
        }
    }

    /// The handle that cancels a running (and any later) `sdk-minimal` command: the stdio loop
    /// fires it when stdin ends or a signal arrives, so a command never outlives the process's
    /// reason to run.
    pub fn shell_cancel(&self) -> shell::Cancel {
        self.cancel.clone()
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Handles one decoded, trimmed line (see [`wire::LineDecoder`]); appends output frames.
    /// Only requests produce output; responses, notifications and ignored lines produce nothing
    /// (docs/CONTRACT.md#s2.2, #s2.3). The envelope is read without building the frame: see
    /// [`Runtime::handle_line_full`] for the classifying path it equals.
    pub fn handle_line(&mut self, line: &str, now_ms: u64, out: &mut Vec<u8>) {
        self.handle_line_fast(line, now_ms, out);
        self.end_doomed(now_ms, out);
    }

    /// Runs all scheduled work due at or before `now_ms`.
    pub fn poll(&mut self, now_ms: u64, out: &mut Vec<u8>) {
        self.poll_bounded(now_ms, out, usize::MAX);
    }

    /// Like [`Runtime::poll`], but returns once `out` holds at least `budget` bytes, so a caller
    /// can write them out before continuing (bounded memory with thousands of busy sessions).
    /// Returns whether due work is left.
    pub fn poll_bounded(&mut self, now_ms: u64, out: &mut Vec<u8>, budget: usize) -> bool {
        self.reap_jobs(now_ms, out);
        while let Some(Reverse((due, _, _))) = self.heap.peek() {
            if *due > now_ms {
                break;
            }
            if out.len() >= budget {
                return true;
            }
            // Virtual time advances to the task's due time, so a late poll does not shift later work.
            let Some(Reverse((due, token, sid))) = self.heap.pop() else {
                break;
            };
            let live = self.sessions.get(&sid).is_some_and(|s| s.sched == token);
            if live {
                if let Some(s) = self.sessions.get_mut(&sid) {
                    s.sched = 0;
                }
                self.run_phase(&sid, due, out);
                self.watch_jobs(&sid);
            }
        }
        false
    }

    /// When [`Runtime::poll`] next has work; `None` when nothing is scheduled (hung turns included).
    pub fn next_deadline(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((due, _, _))| *due)
    }

    /// `Some(code)` once the process should exit (after `shutdown` was answered, or EOF).
    pub fn exit_code(&self) -> Option<i32> {
        self.exit
    }

    /// Stdin ended: everything read has been answered; turns in flight are abandoned (no
    /// `turn/end`, no idle), as the real runtime does. Returns the exit code (0).
    pub fn on_eof(&mut self, now_ms: u64, out: &mut Vec<u8>) -> i32 {
        self.exit = Some(0);
        if self.cfg.edition == Edition::Current {
            self.cancel_pending(now_ms, out);
        }
        self.release_sessions();
        0
    }

    /// The process is exiting: the sessions it owns may be resumed elsewhere (a process that
    /// exits releases them anyway; an in-memory runtime that is kept must do it here).
    fn release_sessions(&mut self) {
        if let Some(store) = self.store.as_mut() {
            store.release_all();
        }
    }

    /// The number the release gives the session it opens for a prompt without `sessionId`
    /// (`session-N` in its error): each such open takes the next number (docs/CONTRACT.md#s3.2).
    /// On the release, prompts arriving while one is still opening join it and share its number;
    /// the reference opens at once, so each prompt takes its own (§13.4).
    fn anonymous_open(&mut self) -> u32 {
        self.anonymous += 1;
        self.anonymous
    }

    /// Number of sessions open in this process.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    fn schedule(&mut self, sid: &str, due: u64) {
        let token = self.next_token;
        self.next_token += 1;
        if let Some(s) = self.sessions.get_mut(sid) {
            s.sched = token;
            self.heap.push(Reverse((due, token, Box::from(sid))));
        }
    }
}
