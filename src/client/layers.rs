//! What the peer does to the reference runtime's output, sans-IO: frames in, actions out, time
//! as milliseconds since the launch. Each layer keeps the contract (§2–§7) and exercises what it
//! allows a runtime to do; the client must cope with every one of them (docs/CONTRACT.md#s15).

use serde_json::{json, Value};

/// What the peer does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write this frame (a line without its `\n`) on stdout.
    Frame(String),
    /// Write these bytes on stderr.
    Stderr(Vec<u8>),
    /// Exit with this code.
    Exit(i32),
    /// Close stdout and live on (forbidden by §7; the robustness suite).
    CloseStdout,
}

/// One transformation of the runtime's output.
pub trait Layer: Send {
    /// Bytes to write before the runtime serves (a launch banner on stderr, say).
    fn boot(&mut self) -> Vec<Action> {
        Vec::new()
    }
    /// A frame the client sent (already parsed), at `now`.
    fn input(&mut self, _frame: &Value, _now: u64) {}
    /// Whether the layer keeps this frame the client sent from the runtime (it answers it
    /// itself, or never does); called after [`Layer::input`].
    fn intercept(&mut self, _frame: &Value, _now: u64) -> bool {
        false
    }
    /// How long the runtime takes to exit once its stdin ends (flushing its store, say).
    fn exit_delay_ms(&self) -> u64 {
        0
    }
    /// A frame the runtime (or the layer below) wrote, at `now`: what to do instead.
    fn output(&mut self, line: String, now: u64) -> Vec<Action>;
    /// Time passed: frames held until now.
    fn tick(&mut self, _now: u64) -> Vec<Action> {
        Vec::new()
    }
    /// When [`Layer::tick`] wants to run next.
    fn deadline(&self) -> Option<u64> {
        None
    }
}

/// Layers applied in order: each one's frames go through the next.
#[derive(Default)]
pub struct Stack(pub Vec<Box<dyn Layer>>);

impl Stack {
    /// The boot actions of every layer.
    pub fn boot(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        for i in 0..self.0.len() {
            let acts = self.0[i].boot();
            out.extend(self.pass(i + 1, acts, 0));
        }
        out
    }

    /// A frame the client sent.
    pub fn input(&mut self, frame: &Value, now: u64) {
        for l in &mut self.0 {
            l.input(frame, now);
        }
    }

    /// The longest exit delay of any layer.
    pub fn exit_delay_ms(&self) -> u64 {
        self.0.iter().map(|l| l.exit_delay_ms()).max().unwrap_or(0)
    }

    /// Whether some layer keeps this frame the client sent from the runtime.
    pub fn intercept(&mut self, frame: &Value, now: u64) -> bool {
        self.0.iter_mut().any(|l| l.intercept(frame, now))
    }

    /// A frame the runtime wrote.
    pub fn output(&mut self, line: String, now: u64) -> Vec<Action> {
        self.pass(0, vec![Action::Frame(line)], now)
    }

    /// Time passed.
    pub fn tick(&mut self, now: u64) -> Vec<Action> {
        let mut out = Vec::new();
        for i in 0..self.0.len() {
            if self.0[i].deadline().is_some_and(|d| d <= now) {
                let acts = self.0[i].tick(now);
                out.extend(self.pass(i + 1, acts, now));
            }
        }
        out
    }

    /// The earliest deadline of any layer.
    pub fn deadline(&self) -> Option<u64> {
        self.0.iter().filter_map(|l| l.deadline()).min()
    }

    fn pass(&mut self, from: usize, mut acts: Vec<Action>, now: u64) -> Vec<Action> {
        for l in self.0.iter_mut().skip(from) {
            let mut next = Vec::new();
            for a in acts {
                match a {
                    Action::Frame(f) => next.extend(l.output(f, now)),
                    other => next.push(other),
                }
            }
            acts = next;
        }
        acts
    }
}

pub(super) fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or(Value::Null)
}

/// The event type of a `session.event` frame, and its session.
pub(super) fn event_of(v: &Value) -> Option<(&str, &str)> {
    (v["method"] == "session.event").then_some(())?;
    Some((
        v["params"]["event"]["type"].as_str()?,
        v["params"]["sessionId"].as_str()?,
    ))
}

/// Answers `initialize` late (as the release does after booting, and later under load): its
/// response and everything after it are held for `delay_ms`.
pub struct SlowInit {
    /// How long the answer is held.
    pub delay_ms: u64,
    init_ids: Vec<Value>,
    until: Option<u64>,
    held: Vec<String>,
}

impl SlowInit {
    /// Holds the `initialize` answer `delay_ms`.
    pub fn new(delay_ms: u64) -> SlowInit {
        SlowInit {
            delay_ms,
            init_ids: Vec::new(),
            until: None,
            held: Vec::new(),
        }
    }
}

impl Layer for SlowInit {
    fn input(&mut self, f: &Value, _now: u64) {
        if f["method"] == "initialize" {
            self.init_ids.push(f["id"].clone());
        }
    }
    fn output(&mut self, line: String, now: u64) -> Vec<Action> {
        let v = parse(&line);
        if self.until.is_none() && v.get("method").is_none() && self.init_ids.contains(&v["id"]) {
            self.until = Some(now + self.delay_ms);
        }
        if self.until.is_some_and(|u| now < u) {
            self.held.push(line);
            return Vec::new();
        }
        vec![Action::Frame(line)]
    }
    fn tick(&mut self, _now: u64) -> Vec<Action> {
        self.held.drain(..).map(Action::Frame).collect()
    }
    fn deadline(&self) -> Option<u64> {
        self.until.filter(|_| !self.held.is_empty())
    }
}

/// Answers requests out of order: a response waits (up to `hold_ms`) for the next response,
/// which is then written first. Notifications pass.
pub struct Reorder {
    /// The longest a response waits for a later one.
    pub hold_ms: u64,
    held: Option<(String, u64)>,
}

impl Reorder {
    /// Holds each lone response up to `hold_ms`.
    pub fn new(hold_ms: u64) -> Reorder {
        Reorder {
            hold_ms,
            held: None,
        }
    }
}

impl Layer for Reorder {
    fn output(&mut self, line: String, now: u64) -> Vec<Action> {
        let v = parse(&line);
        let is_response = v.get("method").is_none() && v.get("id").is_some();
        let initialize = v["result"].get("serverInfo").is_some();
        if !is_response || initialize {
            return vec![Action::Frame(line)];
        }
        match self.held.take() {
            Some((first, _)) => vec![Action::Frame(line), Action::Frame(first)],
            None => {
                self.held = Some((line, now + self.hold_ms));
                Vec::new()
            }
        }
    }
    fn tick(&mut self, _now: u64) -> Vec<Action> {
        self.held
            .take()
            .map(|(l, _)| Action::Frame(l))
            .into_iter()
            .collect()
    }
    fn deadline(&self) -> Option<u64> {
        self.held.as_ref().map(|(_, d)| *d)
    }
}

/// The id of the session the kit invents beside the client's.
pub const FOREIGN: &str = "kit-foreign-session";
/// The text the foreign session's model "replies".
pub const FOREIGN_TEXT: &str = "kit: another session's reply";

/// Another session's whole turn, interleaved right after each prompt's receipt (the response
/// holding its `messageId`), while the client's run is under way: its events, its reply, its
/// `turn/end` and its idle (§4: the runtime reports every session it runs). After the receipt,
/// not before it: a client that resets its run's state when it sends the prompt, and reads
/// whatever turn/end and idle come next, is caught every time, whether or not it reads the
/// receipt and the root's turn in one read.
#[derive(Default)]
pub struct Foreign {
    seq: u64,
    turn: u64,
    /// The root's frames after the other session's idle are held until then, so that a client
    /// reads that idle alone (in its own read) before the root goes on.
    hold_until: Option<u64>,
    held: Vec<String>,
}

/// How long the root's frames wait after the other session's idle.
const FOREIGN_PAUSE_MS: u64 = 1000;

impl Foreign {
    fn event(&mut self, ty: &str, data: Value) -> Action {
        let seq = self.seq;
        self.seq += 1;
        let ev = json!({"type": ty, "seq": seq, "time": 1_700_000_000_000u64 + seq, "data": data});
        frame(json!({"method": "session.event", "params": {"sessionId": FOREIGN, "event": ev}}))
    }
}

pub(super) fn frame(mut v: Value) -> Action {
    if let Some(o) = v.as_object_mut() {
        o.insert("jsonrpc".into(), json!("2.0"));
    }
    Action::Frame(v.to_string())
}

pub(super) fn status(session: &str, status: &str) -> Action {
    frame(json!({"method": "session.status", "params": {"sessionId": session, "status": status}}))
}

impl Layer for Foreign {
    fn output(&mut self, line: String, now: u64) -> Vec<Action> {
        if self.hold_until.is_some() {
            self.held.push(line);
            return Vec::new();
        }
        let v = parse(&line);
        let mut out = vec![Action::Frame(line.clone())];
        if !v["result"]["messageId"].is_string() {
            return out;
        }
        self.turn += 1;
        let turn = self.turn;
        let msg = json!({"role": "assistant", "content": [{"type": "text", "text": FOREIGN_TEXT}],
            "source": {"kind": "model", "provider": "deepseek-official", "model": "kit"}, "id": "kit-foreign-msg"});
        out.push(status(FOREIGN, "running"));
        out.push(self.event("turn/start", json!({"turn": turn})));
        out.push(self.event(
            "assistant/message",
            json!({"turn": turn, "step": 1, "message": msg}),
        ));
        out.push(self.event(
            "turn/end",
            json!({"turn": turn, "reason": {"kind": "completed"}}),
        ));
        out.push(status(FOREIGN, "idle"));
        self.hold_until = Some(now + FOREIGN_PAUSE_MS);
        out
    }
    fn tick(&mut self, _now: u64) -> Vec<Action> {
        self.hold_until = None;
        self.held.drain(..).map(Action::Frame).collect()
    }
    fn deadline(&self) -> Option<u64> {
        self.hold_until
    }
}

/// The event type a future release might stream.
pub const UNKNOWN_EVENT: &str = "kit/forward-compatible";

/// The `turn/end` reason kind a future release might send.
pub const UNKNOWN_KIND: &str = "kit-future-kind";

/// Events of types no client knows, before each `assistant/message` and each `turn/end`, with
/// members no client expects; the session's later events are renumbered so `seq` stays
/// contiguous (§5). Each `turn/end` of kind `completed` gets a kind no client has a name for,
/// [`UNKNOWN_KIND`] (§15.3).
#[derive(Default)]
pub struct UnknownEvents {
    shift: std::collections::HashMap<String, u64>,
}

impl Layer for UnknownEvents {
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        let mut v = parse(&line);
        let Some((ty, session)) = event_of(&v).map(|(t, s)| (t.to_owned(), s.to_owned())) else {
            return vec![Action::Frame(line)];
        };
        let shift = self.shift.entry(session.clone()).or_default();
        let seq = v["params"]["event"]["seq"].as_u64().unwrap_or(0) + *shift;
        let mut out = Vec::new();
        let mut seq_now = seq;
        if ty == "assistant/message" || ty == "turn/end" {
            let time = v["params"]["event"]["time"].clone();
            let ev = json!({"type": UNKNOWN_EVENT, "seq": seq, "time": time,
                "data": {"note": "an event type from a future release"}, "kitFuture": true});
            out.push(frame(
                json!({"method": "session.event", "params": {"sessionId": session, "event": ev}}),
            ));
            *shift += 1;
            seq_now += 1;
        }
        v["params"]["event"]["seq"] = json!(seq_now);
        let kind = v.pointer_mut("/params/event/data/reason/kind");
        if let Some(k) = kind.filter(|k| ty == "turn/end" && *k == "completed") {
            *k = json!(UNKNOWN_KIND);
        }
        out.push(Action::Frame(v.to_string()));
        out
    }
}

/// Exits (code 1, a last word on stderr) right after the first prompt's response, in the
/// middle of its turn (§7 allows any exit; clients must survive it).
#[derive(Default)]
pub struct ExitMidTurn {
    done: bool,
}

impl Layer for ExitMidTurn {
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        if self.done {
            return Vec::new();
        }
        let v = parse(&line);
        let mut out = vec![Action::Frame(line)];
        if v["result"].get("messageId").is_some() {
            self.done = true;
            out.push(Action::Stderr(
                b"kit: the runtime exits in the middle of a turn\n".to_vec(),
            ));
            out.push(Action::Exit(1));
        }
        out
    }
}

/// The runtime exits (code 1) on reading a `session/working-directory/get`, before answering it.
#[derive(Default)]
pub struct ExitOnRequest {
    /// When the request was read, until the exit.
    due: Option<u64>,
    exited: bool,
}

/// The method whose request the runtime dies on.
pub const EXIT_ON: &str = "session/working-directory/get";

impl Layer for ExitOnRequest {
    fn intercept(&mut self, frame: &Value, now: u64) -> bool {
        let dies = frame["method"] == EXIT_ON && !self.exited;
        if dies {
            self.due = Some(now);
        }
        dies
    }
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        vec![Action::Frame(line)]
    }
    fn tick(&mut self, _now: u64) -> Vec<Action> {
        (self.due, self.exited) = (None, true);
        vec![
            Action::Stderr(b"kit: the runtime exits with a request unanswered\n".to_vec()),
            Action::Exit(1),
        ]
    }
    fn deadline(&self) -> Option<u64> {
        self.due
    }
}

/// Much stderr, with bytes that are not UTF-8, at launch and before each `turn/end`: more than
/// a pipe holds, so a client that does not read stderr blocks the runtime.
pub struct StderrFlood {
    /// Bytes per burst.
    pub bytes: usize,
}

impl StderrFlood {
    fn burst(&self) -> Action {
        let mut out = Vec::with_capacity(self.bytes + 100);
        let mut n = 0;
        while out.len() < self.bytes {
            n += 1;
            out.extend_from_slice(
                format!("kit: log line {n} with bytes that are not UTF-8: ").as_bytes(),
            );
            out.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28, b'\n']);
        }
        Action::Stderr(out)
    }
}

impl Layer for StderrFlood {
    fn boot(&mut self) -> Vec<Action> {
        vec![self.burst()]
    }
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        let v = parse(&line);
        let mut out = Vec::new();
        if matches!(event_of(&v), Some(("turn/end", _))) {
            out.push(self.burst());
        }
        out.push(Action::Frame(line));
        out
    }
}

/// The member [`LongLines`] pads a frame with (its start, as written).
pub const PADDING: &str = "\"kitPadding\":\"";

/// Pads each `assistant/message` event with a member of `bytes` bytes (the release writes 30 MB
/// lines: a tool result, a long reply), so the frame is one very long line.
pub struct LongLines {
    /// The padding's length.
    pub bytes: usize,
}

impl Layer for LongLines {
    fn output(&mut self, line: String, _now: u64) -> Vec<Action> {
        if !matches!(event_of(&parse(&line)), Some(("assistant/message", _))) {
            return vec![Action::Frame(line)];
        }
        // A splice, not a re-serialisation: the padding is a member of the envelope.
        let Some(at) = line.find("\"event\":{") else {
            return vec![Action::Frame(line)];
        };
        let at = at + "\"event\":{".len();
        let mut out = String::with_capacity(line.len() + self.bytes + 16);
        out.push_str(&line[..at]);
        out.push_str(PADDING);
        out.extend(std::iter::repeat_n('x', self.bytes));
        out.push_str("\",");
        out.push_str(&line[at..]);
        vec![Action::Frame(out)]
    }
}

/// The frames among `acts`, parsed (for the layers' tests).
#[cfg(test)]
pub(super) fn frames(acts: &[Action]) -> Vec<Value> {
    acts.iter()
        .filter_map(|a| match a {
            Action::Frame(f) => Some(parse(f)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reorder_writes_the_second_response_first_and_releases_a_lone_one_later() {
        let mut s = Stack(vec![Box::new(Reorder::new(100))]);
        assert!(s
            .output(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into(), 0)
            .is_empty());
        let out = frames(&s.output(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#.into(), 5));
        assert_eq!(
            out.iter().map(|v| v["id"].clone()).collect::<Vec<_>>(),
            [json!(2), json!(1)]
        );
        assert!(s
            .output(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#.into(), 10)
            .is_empty());
        assert_eq!(s.deadline(), Some(110));
        assert_eq!(frames(&s.tick(110))[0]["id"], 3);
    }

    #[test]
    fn unknown_events_keep_seq_contiguous() {
        let mut s = Stack(vec![Box::new(UnknownEvents::default())]);
        let ev = |t: &str, seq: u64| {
            json!({"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":t,"seq":seq,"time":1,"data":{}}}}).to_string()
        };
        let mut seqs = Vec::new();
        for (i, t) in ["step/start", "assistant/message", "turn/end"]
            .iter()
            .enumerate()
        {
            for f in frames(&s.output(ev(t, i as u64), 0)) {
                seqs.push((
                    f["params"]["event"]["type"].as_str().unwrap().to_owned(),
                    f["params"]["event"]["seq"].as_u64().unwrap(),
                ));
            }
        }
        let n: Vec<u64> = seqs.iter().map(|x| x.1).collect();
        assert_eq!(n, [0, 1, 2, 3, 4]);
        assert_eq!(seqs[1].0, UNKNOWN_EVENT);
    }

    #[test]
    fn unknown_events_give_a_completed_turn_end_an_unknown_kind_and_touch_nothing_else() {
        let mut s = Stack(vec![Box::new(UnknownEvents::default())]);
        let ev = |t: &str, data: Value| {
            json!({"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":t,"seq":0,"time":1,"data":data}}}).to_string()
        };
        let mut last = |line| frames(&s.output(line, 0)).pop().unwrap()["params"]["event"].clone();
        let end = last(ev(
            "turn/end",
            json!({"turn": 1, "reason": {"kind": "completed"}}),
        ));
        assert_eq!(
            end["data"],
            json!({"turn": 1, "reason": {"kind": UNKNOWN_KIND}})
        );
        let aborted = last(ev(
            "turn/end",
            json!({"turn": 2, "reason": {"kind": "aborted"}}),
        ));
        assert_eq!(aborted["data"]["reason"]["kind"], "aborted");
        assert_eq!(last(ev("step/start", json!({})))["data"], json!({}));
    }

    #[test]
    fn slow_init_holds_the_answer_and_what_follows() {
        let mut s = Stack(vec![Box::new(SlowInit::new(50))]);
        s.input(&json!({"id": 7, "method": "initialize"}), 0);
        assert!(s
            .output(
                r#"{"jsonrpc":"2.0","id":7,"result":{"serverInfo":{}}}"#.into(),
                1
            )
            .is_empty());
        assert!(s
            .output(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#.into(), 2)
            .is_empty());
        assert!(s.tick(20).is_empty());
        assert_eq!(frames(&s.tick(51)).len(), 2);
    }

    #[test]
    fn foreign_turns_come_after_each_prompt_s_receipt() {
        let mut s = Stack(vec![Box::new(Foreign::default())]);
        let start = json!({"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"turn/start","seq":4,"time":1,"data":{"turn":1}}}});
        assert_eq!(frames(&s.output(start.to_string(), 0)).len(), 1);
        let receipt = json!({"jsonrpc":"2.0","id":2,"result":{"messageId":"m1"}});
        let out = frames(&s.output(receipt.to_string(), 0));
        assert_eq!(out.len(), 6);
        assert_eq!(out[0], receipt);
        assert_eq!(out[2]["params"]["event"]["type"], "turn/start");
        assert_eq!(
            out[5]["params"],
            json!({"sessionId": FOREIGN, "status": "idle"})
        );
        // The root goes on only after the pause: its next frame is held until the tick.
        assert!(s.output(start.to_string(), 5).is_empty());
        assert_eq!(s.deadline(), Some(FOREIGN_PAUSE_MS));
        assert_eq!(frames(&s.tick(FOREIGN_PAUSE_MS)).len(), 1);
        assert_eq!(s.deadline(), None);
    }
}
