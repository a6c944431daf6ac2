//! Runs one generated sequence against a runtime process over stdio, applying the
//! `runtime_session` invariants to its real output, with a deadline on every wait.
//!
//! Phases: write the ops (pausing for `Advance`), terminate any partial line, write a barrier
//! request and wait for its answer; settle (every request answered, every running session idle);
//! then `shutdown` or EOF and wait for exit 0. The first broken rule ends the run (later checks
//! would only echo it); the process group is killed on every path.

use super::gen::{End, Sequence};
use super::Finding;
use crate::fuzzing::invariants::{Checker, Received, Rules, Sent};
use crate::fuzzing::ops::{Op, Renderer};
use crate::runner::{CaseDirs, Child, CommandSpec, Event};
use crate::trace::ExitInfo;
use crate::wire::{json, LineDecoder, LineEvent};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Id of the barrier request (an unknown method: answered at once with an error).
pub const BARRIER_ID: &str = "dsh-fuzz-barrier";
/// Method of the barrier request.
pub const BARRIER_METHOD: &str = "dsh-fuzz/barrier";
/// Id of the closing `shutdown` request.
pub const SHUTDOWN_ID: &str = "dsh-fuzz-shutdown";
/// Longest stdout line accepted.
const MAX_LINE: usize = 16 << 20;
/// Longest `Advance` pause, in milliseconds (ops carry up to 65 s; real time is precious).
pub const MAX_PAUSE_MS: u64 = 40;

/// A runtime to run sequences against.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its command line.
    pub cmd: CommandSpec,
    /// Extra environment (the model stub's, when used).
    pub env: Vec<(String, String)>,
}

/// How long each phase may take.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// From the last write to the barrier's answer.
    pub barrier: Duration,
    /// From the barrier's answer until every request is answered and every session idle
    /// (plus the sequence's `slow` seconds).
    pub settle: Duration,
    /// From `shutdown`/EOF to the process's exit.
    pub exit: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            barrier: Duration::from_secs(10),
            settle: Duration::from_secs(10),
            exit: Duration::from_secs(10),
        }
    }
}

/// How a request was answered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// With a result (normalised JSON text: uuids as `{{uuid}}`, case directories as
    /// `{{cwd}}`/`{{home}}`, `serverInfo.version` as `{{string}}`: versions legitimately differ).
    Result(String),
    /// With an error (message normalised: case directories, uuids and the method name replaced).
    Error {
        /// `error.code`.
        code: i64,
        /// Normalised `error.message`.
        message: String,
    },
}

/// What a run showed, normalised for comparison with another runtime.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Answers by id echo (duplicate ids share an entry: which answer is whose is not observable).
    pub responses: BTreeMap<String, Vec<Outcome>>,
    /// The methods of the requests sent with each id echo (`+`-joined protocol methods, or `<other>`).
    pub methods: BTreeMap<String, String>,
    /// Id echoes of requests never answered.
    pub unanswered: Vec<String>,
    /// Per session (uuids numbered by first appearance): event types and status changes, with
    /// consecutive repeats collapsed (streaming chunk counts are not behaviour).
    pub events: BTreeMap<String, Vec<String>>,
    /// How the process ended.
    pub exit: Option<ExitInfo>,
    /// Lines the runtime read.
    pub frames_in: usize,
    /// Lines it wrote.
    pub frames_out: usize,
}

/// The result of one run.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    /// The first broken rule, if any.
    pub finding: Option<Finding>,
    /// What was seen.
    pub observed: Observed,
    /// The process could not be started at all.
    pub broken: Option<String>,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Phase {
    Ops,
    Ending,
}

struct State<'a> {
    ck: Checker,
    dirs: &'a CaseDirs,
    obs: Observed,
    finding: Option<Finding>,
    phase: Phase,
    closed: bool,
    barrier_answered: bool,
    shutdown_answered: bool,
    running: HashMap<String, bool>,
    uuids: HashMap<String, String>,
}

/// Runs `seq` against `target` in fresh directories under the rules of the runtime's edition.
pub fn run_sequence(seq: &Sequence, target: &Target, rules: &Rules, dl: Deadlines) -> RunResult {
    let dirs = match CaseDirs::new(false) {
        Ok(d) => d,
        Err(e) => {
            return RunResult {
                broken: Some(format!("cannot create the case directories: {e}")),
                ..RunResult::default()
            }
        }
    };
    let mut child = match Child::spawn(&target.cmd, &dirs, &target.env, MAX_LINE) {
        Ok(c) => c,
        Err(e) => {
            return RunResult {
                broken: Some(format!("cannot start `{}`: {e}", target.cmd)),
                ..RunResult::default()
            }
        }
    };
    let mut st = State {
        ck: Checker::new(rules.clone()),
        dirs: &dirs,
        obs: Observed::default(),
        finding: None,
        phase: Phase::Ops,
        closed: false,
        barrier_answered: false,
        shutdown_answered: false,
        running: HashMap::new(),
        uuids: HashMap::new(),
    };
    drive(seq, &mut child, &mut st, dl);
    child.kill();
    let mut obs = st.obs;
    obs.exit = obs.exit.or_else(|| child.try_exit());
    obs.unanswered = st
        .ck
        .pending()
        .into_iter()
        .filter(|(k, _)| k != &json::to_string(&Value::from(SHUTDOWN_ID)))
        .map(|(k, _)| k)
        .collect();
    let mut finding = st.finding;
    if let Some(f) = &mut finding {
        let (tail, _) = child.stderr_tail();
        let tail: Vec<&str> = tail.lines().collect();
        if !tail.is_empty() {
            f.detail.push_str("\n  stderr tail: ");
            f.detail
                .push_str(&tail[tail.len().saturating_sub(3)..].join("\n    "));
        }
    }
    RunResult {
        finding,
        observed: obs,
        broken: None,
    }
}

fn drive(seq: &Sequence, child: &mut Child, st: &mut State<'_>, dl: Deadlines) {
    let mut dec = LineDecoder::new(MAX_LINE);
    let mut r = Renderer::default();
    let mut bytes = Vec::new();
    for (i, op) in seq.ops.iter().enumerate() {
        if let Some(init) = seq
            .awaited_init()
            .filter(|(at, _)| i == at + 1)
            .map(|(_, k)| k)
        {
            let answered = |s: &State<'_>| s.obs.responses.contains_key(&init);
            if !pump(child, st, Instant::now() + dl.barrier, answered) && st.finding.is_none() {
                st.fail(
                    "hang:initialize",
                    format!("initialize was not answered within {:?}", dl.barrier),
                );
            }
        }
        if let Op::Advance(ms) = op {
            let until = Instant::now() + Duration::from_millis(u64::from(*ms) % MAX_PAUSE_MS);
            pump(child, st, until, |_| false);
        } else {
            bytes.clear();
            r.render(op, &mut bytes);
            send(child, st, &mut dec, &bytes);
            pump(child, st, Instant::now(), |_| false);
        }
        if st.finding.is_some() {
            return;
        }
    }
    // A partial line from a raw op must not swallow the barrier.
    let barrier = format!(
        "\n{{\"jsonrpc\":\"2.0\",\"id\":\"{BARRIER_ID}\",\"method\":\"{BARRIER_METHOD}\"}}\n"
    );
    send(child, st, &mut dec, barrier.as_bytes());
    if !pump(child, st, Instant::now() + dl.barrier, |s| {
        s.barrier_answered
    }) {
        if st.finding.is_none() {
            let what = if st.closed {
                "the runtime closed stdout"
            } else {
                "no answer"
            };
            st.fail(
                "hang:barrier",
                format!(
                    "{what}: the barrier request was not answered within {:?}",
                    dl.barrier
                ),
            );
        }
        return;
    }
    let may_hang = seq.may_hang();
    let settle = dl.settle + Duration::from_secs_f64(seq.slow_secs());
    let settled = pump(child, st, Instant::now() + settle, |s| {
        s.ck.pending().is_empty() && !s.running.values().any(|r| *r)
    });
    if !settled && !may_hang && st.finding.is_none() {
        let pending = st.ck.pending();
        if !pending.is_empty() {
            st.fail(
                "unanswered",
                format!(
                    "requests still unanswered {settle:?} after the barrier: {}",
                    list(pending.iter().map(|(k, m)| format!("{m} {k}")))
                ),
            );
        } else {
            let busy: Vec<String> = st
                .running
                .iter()
                .filter(|(_, r)| **r)
                .map(|(s, _)| s.clone())
                .collect();
            st.fail(
                "not-idle",
                format!(
                    "sessions never went idle within {settle:?}: {}",
                    list(busy.iter().map(|s| format!("{s:?}")))
                ),
            );
        }
    }
    if st.finding.is_some() {
        return;
    }
    st.phase = Phase::Ending;
    let until = Instant::now() + dl.exit;
    match seq.end {
        End::Shutdown => {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":\"{SHUTDOWN_ID}\",\"method\":\"shutdown\"}}\n"
            );
            send(child, st, &mut dec, line.as_bytes());
            if !pump(child, st, until, |s| s.shutdown_answered) {
                if st.finding.is_none() {
                    st.fail(
                        "hang:shutdown",
                        format!("shutdown was not answered within {:?}", dl.exit),
                    );
                }
                return;
            }
        }
        End::Eof => {
            dec.finish();
            child.close_stdin();
        }
    }
    // Read to the end of stdout, then wait for the exit status.
    pump(child, st, until, |s| s.closed);
    let exit = loop {
        if let Some(e) = child.try_exit() {
            break Some(e);
        }
        if Instant::now() >= until {
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    st.obs.exit = exit;
    if st.finding.is_some() {
        return;
    }
    let how = match seq.end {
        End::Shutdown => "shutdown",
        End::Eof => "EOF",
    };
    let answer = st
        .obs
        .responses
        .get(&json::to_string(&Value::from(SHUTDOWN_ID)))
        .and_then(|l| l.first())
        .map(|o| match o {
            Outcome::Result(r) => format!(" (shutdown answered {r})"),
            Outcome::Error { code, message } => {
                format!(" (shutdown answered error {code} {message:?})")
            }
        })
        .unwrap_or_default();
    match exit {
        None => st.fail(
            "hang:exit",
            format!(
                "the process did not exit within {:?} of {how}{answer}",
                dl.exit
            ),
        ),
        Some(ExitInfo::Code(0)) => {}
        Some(e) => st.fail(
            "exit:code",
            format!("after {how} the process ended with {e}"),
        ),
    }
}

/// Writes bytes, telling the checker about every complete line in them.
fn send(child: &mut Child, st: &mut State<'_>, dec: &mut LineDecoder, bytes: &[u8]) {
    let ck = &mut st.ck;
    let obs = &mut st.obs;
    dec.push(bytes, &mut |e| {
        if let LineEvent::Line(l) = e {
            obs.frames_in += 1;
            if let Sent::Request { key, method } = ck.sent(l) {
                let m = method_label(&method);
                let label = obs.methods.entry(key).or_default();
                if !label.split('+').any(|x| x == m) {
                    let mut all: Vec<&str> = label.split('+').filter(|x| !x.is_empty()).collect();
                    all.push(m);
                    all.sort_unstable();
                    *label = all.join("+");
                }
            }
        }
    });
    child.write(bytes.to_vec());
}

/// Reads output until `done` holds (true), the deadline passes, stdout closes or a rule breaks
/// (false unless `done` holds).
fn pump(
    child: &mut Child,
    st: &mut State<'_>,
    until: Instant,
    done: impl Fn(&State<'_>) -> bool,
) -> bool {
    loop {
        if done(st) {
            return true;
        }
        if st.finding.is_some() || st.closed {
            return false;
        }
        let now = Instant::now();
        let wait = until.saturating_duration_since(now);
        let ev = if wait.is_zero() {
            match child.events.try_recv() {
                Ok(ev) => ev,
                Err(_) => return done(st),
            }
        } else {
            match child.events.recv_timeout(wait) {
                Ok(ev) => ev,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return done(st),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    st.closed = true;
                    return done(st);
                }
            }
        };
        child.consumed(&ev);
        st.on_event(ev, child);
    }
}

impl State<'_> {
    fn fail(&mut self, class: &str, detail: String) {
        if self.finding.is_none() {
            self.finding = Some(Finding {
                class: class.to_owned(),
                detail,
            });
        }
    }

    fn on_event(&mut self, ev: Event, child: &mut Child) {
        match ev {
            Event::Text(line) => self.on_line(&line),
            Event::NotUtf8 { at, len } => self.fail(
                "output:not-utf8",
                format!("a stdout line of {len} bytes is not UTF-8 at byte {at}"),
            ),
            Event::TooLong(n) => self.fail(
                "output:too-long",
                format!("a stdout line of {n} bytes exceeds the bound"),
            ),
            Event::Closed(tail) => {
                self.closed = true;
                if let Some(n) = tail {
                    self.fail(
                        "output:unterminated",
                        format!("stdout ended inside a line of {n} bytes"),
                    );
                }
                if self.phase == Phase::Ops {
                    let deadline = Instant::now() + Duration::from_secs(2);
                    let mut exit = child.try_exit();
                    while exit.is_none() && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(5));
                        exit = child.try_exit();
                    }
                    self.obs.exit = exit;
                    let how = exit.map_or("(still running)".to_owned(), |e| e.to_string());
                    self.fail(
                        "exit:early",
                        format!("stdout closed before shutdown or EOF was sent; {how}"),
                    );
                }
            }
        }
    }

    fn on_line(&mut self, line: &str) {
        self.obs.frames_out += 1;
        match self.ck.received(line) {
            Ok(Received::Response { key, method, .. }) => {
                // An error may answer any same-id request: it names no method.
                let method = method.unwrap_or_default();
                if key == json::to_string(&Value::from(BARRIER_ID)) {
                    self.barrier_answered = true;
                } else if key == json::to_string(&Value::from(SHUTDOWN_ID)) && method == "shutdown"
                {
                    self.shutdown_answered = true;
                }
                let outcome = self.outcome(line, &method);
                self.obs.responses.entry(key).or_default().push(outcome);
            }
            Ok(Received::Notification(_)) => self.note(line),
            Err(e) => {
                let class = classify(&e);
                self.fail(class, e);
            }
        }
    }

    fn outcome(&self, line: &str, method: &str) -> Outcome {
        let v = json::parse(line).map(|p| p.value).unwrap_or(Value::Null);
        match v.get("error") {
            None => {
                let mut r = v.get("result").cloned().unwrap_or(Value::Null);
                if let Some(ver) = r.pointer_mut("/serverInfo/version") {
                    *ver = "{{string}}".into();
                }
                normalise_value(&mut r, self.dirs);
                Outcome::Result(json::to_string(&r))
            }
            Some(e) => Outcome::Error {
                code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: normalise(
                    e.get("message").and_then(Value::as_str).unwrap_or(""),
                    self.dirs,
                    method,
                ),
            },
        }
    }

    /// Records a (valid) notification for the comparison.
    fn note(&mut self, line: &str) {
        let Ok(p) = json::parse(line) else { return };
        let v = p.value;
        let params = &v["params"];
        let (sid, what) = match v["method"].as_str() {
            Some("session.event") => (
                params["sessionId"].as_str().unwrap_or(""),
                params["event"]["type"].as_str().unwrap_or("").to_owned(),
            ),
            Some("session.status") => {
                let sid = params["sessionId"].as_str().unwrap_or("");
                let running = params["status"] == "running";
                self.running.insert(sid.to_owned(), running);
                (
                    sid,
                    format!("status:{}", params["status"].as_str().unwrap_or("")),
                )
            }
            Some(m @ ("subagent.started" | "subagent.finished")) => (
                params["parentSessionId"].as_str().unwrap_or(""),
                m.to_owned(),
            ),
            Some(m) => ("", m.to_owned()),
            None => return,
        };
        let sid = self.session_label(sid);
        let list = self.obs.events.entry(sid).or_default();
        if list.last() != Some(&what) {
            list.push(what);
        }
    }

    fn session_label(&mut self, sid: &str) -> String {
        if !crate::trace::pattern::is_uuid(sid) {
            return sid.to_owned();
        }
        let n = self.uuids.len();
        self.uuids
            .entry(sid.to_owned())
            .or_insert_with(|| format!("{{{{uuid#{}}}}}", n + 1))
            .clone()
    }
}

/// The method as comparisons name it: protocol methods by name, anything else as `<other>`.
pub fn method_label(m: &str) -> &str {
    const KNOWN: [&str; 8] = [
        "initialize",
        "session/prompt",
        "session/resume",
        "session/wait",
        "session/working-directory/get",
        "session/working-directory/set",
        "shutdown",
        BARRIER_METHOD,
    ];
    if KNOWN.contains(&m) {
        m
    } else {
        "<other>"
    }
}

/// Replaces uuids and case directories in every string of `v`.
fn normalise_value(v: &mut Value, dirs: &CaseDirs) {
    match v {
        Value::String(s) if crate::trace::pattern::is_uuid(s) => *s = "{{uuid}}".into(),
        Value::String(s) => *s = normalise(s, dirs, ""),
        Value::Array(a) => a.iter_mut().for_each(|x| normalise_value(x, dirs)),
        Value::Object(o) => o.values_mut().for_each(|x| normalise_value(x, dirs)),
        _ => {}
    }
}

/// An error message with the case's directories, uuids and the request's method name replaced.
fn normalise(msg: &str, dirs: &CaseDirs, method: &str) -> String {
    let mut s = msg
        .replace(&*dirs.cwd.to_string_lossy(), "{{cwd}}")
        .replace(&*dirs.home.to_string_lossy(), "{{home}}");
    // The case root (the parent of cwd, reached by `..`): canonical, and as created.
    if let Some(root) = dirs.cwd.parent() {
        s = s.replace(&*root.to_string_lossy(), "{{cwd}}/..");
    }
    s = s.replace(&*dirs.root().to_string_lossy(), "{{cwd}}/..");
    const UNKNOWN: &str = "unknown DeepSeek Harness SDK runtime method: ";
    if s.starts_with(UNKNOWN) {
        // Which of several requests sharing an id an error belongs to is not observable.
        s = format!("{UNKNOWN}{{{{method}}}}");
    } else if !method.is_empty() {
        if let Some(rest) = s.strip_suffix(method) {
            s = format!("{rest}{{{{method}}}}");
        }
    }
    // uuids: 36 chars, hyphens at 8/13/18/23.
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if i + 36 <= s.len()
            && s.is_char_boundary(i + 36)
            && crate::trace::pattern::is_uuid(&s[i..i + 36])
        {
            out.push_str("{{uuid}}");
            i += 36;
        } else {
            let c = s[i..].chars().next().unwrap_or('\0');
            out.push(c);
            i += c.len_utf8().max(1);
        }
    }
    out
}

/// The finding class of a broken frame invariant (from the checker's message).
pub fn classify(msg: &str) -> &'static str {
    let first = msg.lines().next().unwrap_or("");
    let has = |s: &str| first.contains(s);
    if has("which no unanswered request carries") {
        "invariant:unexpected-response"
    } else if has("not JSON")
        || has("compact")
        || has("not a JSON object")
        || has("raw CR")
        || has("jsonrpc")
        || has("output members")
    {
        "invariant:frame-shape"
    } else if has("error code") {
        "invariant:error-code"
    } else if has("error members") || has("error is not") || has("error message") {
        "invariant:error-shape"
    } else if has("unknown method") {
        "invariant:unknown-method-answer"
    } else if has("receipt") {
        "invariant:receipt-order"
    } else if has("seq") {
        "invariant:seq"
    } else if has("turn") {
        "invariant:turn"
    } else if has("session.status") {
        "invariant:status"
    } else if has("result") {
        "invariant:result-shape"
    } else if has("notification") || has("subagent") || has("event") {
        "invariant:notification"
    } else {
        "invariant:other"
    }
}

fn list(items: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = items.take(8).collect();
    v.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_and_unsolicited_responses_are_one_class() {
        assert_eq!(
            classify("response to id 3, which no unanswered request carries\n  output line: x"),
            "invariant:unexpected-response"
        );
        assert_eq!(classify("\"s0\": event seq 5, expected 4"), "invariant:seq");
    }
}
