//! What one run saw, judged as it arrives: every line the runtime writes goes through the stream
//! rules and is noted for the differential comparison; every finding is kept once per class.

use super::*;
use crate::blackbox::events;
use crate::wire::output::{Frame, NotAFrame, Output};

#[derive(PartialEq, Eq, Clone, Copy)]
pub(super) enum Phase {
    Ops,
    Ending,
}

pub(super) struct State<'a> {
    pub(super) ck: Conversation,
    pub(super) dirs: &'a CaseDirs,
    pub(super) obs: Observed,
    pub(super) findings: Vec<Finding>,
    pub(super) fatal: bool,
    pub(super) phase: Phase,
    pub(super) closed: bool,
    pub(super) barrier_answered: bool,
    pub(super) shutdown_answered: bool,
    pub(super) uuids: HashMap<String, String>,
    /// The caller's hard deadline: every wait ends there.
    pub(super) stop: Option<Instant>,
    /// A wait was cut short by `stop`.
    pub(super) cut: bool,
    /// The id echo whose answering line to keep (a process's first `initialize`).
    pub(super) watch: Option<String>,
    /// That line, once seen.
    pub(super) watched: Option<String>,
    /// Sessions of earlier sequences on a shared process: a notification naming one is theirs.
    pub(super) foreign: std::collections::BTreeSet<String>,
    /// Ids of earlier sequences' requests on a shared process: a response echoing one that this
    /// sequence did not write (yet) is theirs (a late or repeated answer).
    pub(super) foreign_ids: std::collections::BTreeSet<String>,
    /// Such a notification arrived: the shared process did not keep the sequences apart.
    pub(super) straggler: bool,
    /// When each request still unanswered was written (by id echo): its answer's latency.
    pub(super) sent_at: HashMap<String, Instant>,
    /// When each running session went `running`.
    pub(super) turn_at: HashMap<String, Instant>,
    /// The runtime's latencies, shared by every run of it ([`super::super::latency`]).
    pub(super) latency: Option<std::sync::Arc<super::super::latency::Latency>>,
    /// Stop the run as soon as this class shows (shrinking asks only whether it does).
    pub(super) until: Option<FindingClass>,
    /// The tool each `tool/call` id named.
    pub(super) tool_names: HashMap<String, String>,
    /// Subagents started (`subagent.started`) and not yet reported finished: each one's end
    /// still reaches its parent, as a notice turn or at its next step.
    pub(super) children: std::collections::HashSet<String>,
    /// Sessions whose goal is active (`goal/change`): once idle, each runs a round or has its
    /// goal blocked.
    pub(super) goals: std::collections::HashSet<String>,
    /// The model stub the runtime talks to, watched from this run's start.
    pub(super) model: Option<super::activity::ModelWatch>,
}

impl<'a> State<'a> {
    /// The state of a run starting now, under `rules`, in `dirs`, with the hard deadline `stop`.
    pub(super) fn new(rules: &Profile, dirs: &'a CaseDirs, stop: Option<Instant>) -> State<'a> {
        State {
            ck: Conversation::new(rules.clone(), Unsolicited::Judged),
            dirs,
            obs: Observed::default(),
            findings: Vec::new(),
            fatal: false,
            phase: Phase::Ops,
            closed: false,
            barrier_answered: false,
            shutdown_answered: false,
            uuids: HashMap::new(),
            stop,
            cut: false,
            watch: None,
            watched: None,
            foreign: Default::default(),
            foreign_ids: Default::default(),
            straggler: false,
            sent_at: HashMap::new(),
            turn_at: HashMap::new(),
            latency: None,
            until: None,
            tool_names: HashMap::new(),
            children: Default::default(),
            goals: Default::default(),
            model: None,
        }
    }

    /// `until`, or the caller's hard deadline when that comes first.
    pub(super) fn clip(&self, until: Instant) -> Instant {
        self.stop.map_or(until, |s| until.min(s))
    }

    /// Records a finding (the first of its class in this run); a fatal one ends the run. After
    /// the hard deadline cut a wait short, nothing more is: a cut wait is no hang.
    pub(super) fn fail(&mut self, class: FindingClass, detail: String) {
        if self.fatal || self.cut {
            return;
        }
        self.fatal = class.is_fatal() || self.until.as_ref() == Some(&class);
        if !self.findings.iter().any(|f| f.class == class) {
            self.findings.push(Finding { class, detail });
        }
    }

    pub(super) fn on_event(&mut self, ev: Event, child: &mut Child) {
        match ev {
            Event::Line(o) => match o.frame() {
                Frame::NotAFrame(NotAFrame::NotUtf8 { at, len }) => self.fail(
                    FindingClass::Output(OutputFault::NotUtf8),
                    format!("a stdout line of {len} bytes is not UTF-8 at byte {at}"),
                ),
                Frame::NotAFrame(NotAFrame::TooLong(n)) => self.fail(
                    FindingClass::Output(OutputFault::TooLong),
                    format!("a stdout line of {n} bytes exceeds the bound"),
                ),
                _ => self.on_output(&o),
            },
            Event::Flooded(f) => {
                self.closed = true;
                self.fail(FindingClass::Output(OutputFault::Flooded), f.to_string());
            }
            Event::Closed(tail) => {
                self.closed = true;
                if let Some(n) = tail {
                    self.fail(
                        FindingClass::Output(OutputFault::Unterminated),
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
                        FindingClass::ExitEarly,
                        format!("stdout closed before shutdown or EOF was sent; {how}"),
                    );
                }
            }
        }
    }

    /// A line given as text (an in-process answer): parsed, then judged as the reader's are.
    pub(super) fn on_line(&mut self, raw: &str) {
        let o = Output::parse(self.obs.frames_out + 1, raw.to_owned());
        self.on_output(&o);
    }

    pub(super) fn on_output(&mut self, o: &Output) {
        let raw = o.text();
        if !(self.foreign.is_empty() && self.foreign_ids.is_empty()) && self.is_foreign(raw) {
            self.straggler = true;
            return;
        }
        self.obs.frames_out += 1;
        let judged = self.ck.received(o);
        let broke = judged
            .violations
            .iter()
            .any(|v| shows_in_comparison(v.rule));
        // What the stream rules already judged (line ending, whitespace) is not compared.
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        for v in &judged.violations {
            let d = format!("{}\n  output line: {}", v, crate::rules::clip(raw));
            self.fail(FindingClass::Rule(v.rule), d);
        }
        match judged.frame {
            Some(Received::Response { key, method, .. }) => {
                // An error may answer any same-id request: it names no method.
                let method = method.unwrap_or_default();
                if let (Some(t), Some(l)) = (self.sent_at.remove(&key), &self.latency) {
                    l.saw(Wait::Answer, t.elapsed());
                    if self.watch.as_ref() == Some(&key) {
                        l.saw(Wait::Boot, t.elapsed());
                    }
                }
                if key == json::to_string(&Value::from(BARRIER_ID)) {
                    self.barrier_answered = true;
                } else if key == json::to_string(&Value::from(SHUTDOWN_ID)) && method == "shutdown"
                {
                    self.shutdown_answered = true;
                }
                if broke {
                    self.obs.flagged.ids.insert(key.clone());
                }
                if self.watched.is_none() && self.watch.as_ref() == Some(&key) {
                    self.watched = Some(line.to_owned());
                }
                let outcome = self.outcome(line, &method);
                self.obs.responses.entry(key).or_default().push(outcome);
            }
            Some(Received::Notification(_)) => {
                if let Some(sid) = self.note(line) {
                    if broke {
                        self.obs.flagged.sessions.insert(sid);
                    }
                }
            }
            None => {}
        }
    }

    pub(super) fn outcome(&self, line: &str, method: &str) -> Outcome {
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
                code: match e.get("code").and_then(Value::as_i64).unwrap_or(0) {
                    // Accepted for unknown methods (upstream's message is judged by the rules).
                    -32601
                        if self.ck.checker().profile().allow_method_not_found
                            && !self.known(method) =>
                    {
                        -32603
                    }
                    c => c,
                },
                message: normalise(
                    e.get("message").and_then(Value::as_str).unwrap_or(""),
                    self.dirs,
                    method,
                ),
            },
        }
    }

    pub(super) fn known(&self, method: &str) -> bool {
        !method.is_empty()
            && self
                .ck
                .checker()
                .profile()
                .methods
                .iter()
                .any(|m| m == method)
    }

    /// Records a notification for the comparison; returns its session label.
    pub(super) fn note(&mut self, line: &str) -> Option<String> {
        let Ok(p) = json::parse(line) else {
            return None;
        };
        let v = p.value;
        let params = &v["params"];
        let (sid, what) = match v["method"].as_str() {
            Some("session.event") => {
                let sid = params["sessionId"].as_str().unwrap_or("");
                let (ty, data) = (&params["event"]["type"], &params["event"]["data"]);
                if ty == "goal/change" && data["goal"]["phase"] == "active" {
                    self.goals.insert(sid.to_owned());
                } else if ty == "goal/change" {
                    self.goals.remove(sid);
                }
                (sid, events::label(ty.as_str().unwrap_or(""), data))
            }
            Some("session.status") => {
                let sid = params["sessionId"].as_str().unwrap_or("");
                let running = params["status"] == "running";
                if running {
                    self.turn_at
                        .entry(sid.to_owned())
                        .or_insert_with(Instant::now);
                } else if let (Some(t), Some(l)) = (self.turn_at.remove(sid), &self.latency) {
                    l.saw(Wait::Turn, t.elapsed());
                }
                (
                    sid,
                    format!("status:{}", params["status"].as_str().unwrap_or("")),
                )
            }
            Some(m @ ("subagent.started" | "subagent.finished")) => {
                let child = params["childSessionId"].as_str().unwrap_or("").to_owned();
                if m == "subagent.started" {
                    let parent = params["parentSessionId"].as_str().unwrap_or("");
                    let (c, p) = (self.session_label(&child), self.session_label(parent));
                    self.obs.parents.insert(c, p);
                    self.children.insert(child);
                } else {
                    self.children.remove(&child);
                }
                (
                    params["parentSessionId"].as_str().unwrap_or(""),
                    m.to_owned(),
                )
            }
            Some(m) => ("", m.to_owned()),
            None => return None,
        };
        let sid = self.session_label(sid);
        self.note_tool(&sid, &what, &params["event"]["data"]);
        let list = self.obs.events.entry(sid.clone()).or_default();
        // Repeats collapse (streaming counts are not behaviour), but for splices: the comparison
        // counts the messages queued and claims them in order (`events::normal_form`).
        if list.last() != Some(&what) || !events::collapses(&what) {
            list.push(what);
        }
        Some(sid)
    }

    /// Notes a `tool/call`'s tool (by call id) and a `tool/result`'s text, for the comparison.
    fn note_tool(&mut self, sid: &str, what: &str, data: &Value) {
        let call = data["callId"].as_str().unwrap_or("").to_owned();
        match what {
            "tool/call" => {
                let name = data["name"].as_str().unwrap_or("").to_owned();
                self.tool_names.insert(call, name);
            }
            "tool/result" => {
                let m = &data["message"];
                let call = m["toolCallId"].as_str().unwrap_or(&call);
                let tool = self.tool_names.get(call).cloned().unwrap_or_default();
                let mut text = String::new();
                if m["isError"] == true {
                    text.push_str("[error] ");
                }
                for b in m["content"].as_array().into_iter().flatten() {
                    text.push_str(b["text"].as_str().unwrap_or("[non-text block]"));
                }
                let text = normalise(&text, self.dirs, "");
                let list = self.obs.tool_results.entry(sid.to_owned()).or_default();
                list.push((tool, text));
            }
            _ => {}
        }
    }

    /// Whether a line is a notification about a session of an earlier sequence, or a response
    /// to an earlier sequence's request that this one did not write.
    fn is_foreign(&self, raw: &str) -> bool {
        let Ok(p) = json::parse(raw) else {
            return false;
        };
        let v = &p.value;
        if let Some(id) = v.get("id").filter(|_| v.get("method").is_none()) {
            let key = json::to_string(id);
            return self.foreign_ids.contains(&key) && !self.obs.methods.contains_key(&key);
        }
        v.get("id").is_none()
            && ["sessionId", "parentSessionId"].iter().any(|k| {
                v["params"][*k]
                    .as_str()
                    .is_some_and(|sid| self.foreign.contains(sid))
            })
    }

    /// Until when a wait of window `w` holds for the run's model requests
    /// ([`super::activity::held_until`]): those of its running sessions and subagents.
    pub(super) fn model_held(&self, w: Duration) -> Option<Instant> {
        let mine = |sid: &str| self.turn_at.contains_key(sid) || self.children.contains(sid);
        let arrivals = self.model.as_ref()?.arrivals(mine);
        super::activity::held_until(&arrivals, w)
    }

    pub(super) fn session_label(&mut self, sid: &str) -> String {
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

/// Whether a broken rule also shows in the differential comparison (which would then repeat it).
/// How a frame is written (whitespace, line ending, member order) and the numbering the
/// comparison does not look at (seq, time, turn numbers) do not: frames that broke only those are
/// still compared, so a runtime that has such a class everywhere is compared all the same.
fn shows_in_comparison(rule: CheckId) -> bool {
    !matches!(
        rule,
        CheckId::StdoutCompact
            | CheckId::StdoutLfOnly
            | CheckId::SessionSeqContiguous
            | CheckId::EventTime
            | CheckId::TurnCountsPerSession
            | CheckId::TurnEndReason
    )
}

pub(super) fn list(items: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = items.take(8).collect();
    v.join(", ")
}
