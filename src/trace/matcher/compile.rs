//! Compiling a trace into the matcher's shape: segments (cut at each run of sends), lanes of
//! notification expectations (by session), responses indexed by id, and deadlines.

use super::{EKind, Exp, Lane, LaneKey, Matcher, Segment, Stats};
use crate::trace::failure::ExitInfo;
use crate::trace::pattern::{Bindings, Env, Pat};
use crate::trace::syntax::{ExpectFrame, Mult, Send, Step, StepKind, Trace};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// The lane a session pattern names: a literal session id's, or a capture's.
fn session_lane(session: &Pat) -> Option<LaneKey> {
    match session {
        Pat::Lit(Value::String(s)) => Some(LaneKey::Session(s.clone())),
        Pat::Capture(n, _) => Some(LaneKey::Capture(n.clone())),
        _ => None,
    }
}

fn lane_key_of(pat: &Pat) -> LaneKey {
    let params = pat.member("params");
    let s = params.and_then(|p| {
        p.member("sessionId")
            .or_else(|| p.member("parentSessionId"))
    });
    s.and_then(session_lane).unwrap_or(LaneKey::Global)
}

fn is_response_pattern(pat: &Pat) -> bool {
    pat.member("method").is_none()
        && (pat.member("id").is_some()
            || pat.member("result").is_some()
            || pat.member("error").is_some())
}

impl Matcher {
    /// Builds the matcher for a trace. `frame_timeout` is the default deadline of each
    /// expectation (the trace's `# timeout:` wins); `case_timeout` bounds the whole case.
    pub fn new(
        trace: &Trace,
        env: Env,
        frame_timeout: Duration,
        case_timeout: Duration,
    ) -> Matcher {
        let mut m = Matcher::empty(trace, env, case_timeout);
        let mut c = Compile {
            default_within: trace.meta.timeout.unwrap_or(frame_timeout),
            request_lane: HashMap::new(),
            last_group: None,
            prev_was_send: false,
        };
        for (i, step) in trace.steps.iter().enumerate() {
            match &step.kind {
                StepKind::Send(s) => c.send(&mut m, s, step.line),
                StepKind::Expect(e) => c.expect(&mut m, i, step, e),
                StepKind::Exit(codes) => c.exit(&mut m, i, step, codes),
            }
        }
        m
    }

    /// A matcher with no expectations yet: one empty segment.
    fn empty(trace: &Trace, env: Env, case_timeout: Duration) -> Matcher {
        Matcher {
            file: trace.file.clone(),
            env,
            exps: Vec::new(),
            lanes: Vec::new(),
            session_lanes: HashMap::new(),
            capture_lanes: Vec::new(),
            capture_index: HashMap::new(),
            global_lane: None,
            responses_by_id: HashMap::new(),
            responses_wild: Vec::new(),
            segs: vec![Segment::default()],
            active: 0,
            pending: VecDeque::new(),
            pause_until: None,
            ignores: trace.ignores.clone(),
            frames_only: trace.frames_only,
            tolerant: false,
            skip_repeats: (true, true),
            matched_texts: Default::default(),
            replays: Default::default(),
            late_lines: 0,
            bindings: Bindings::default(),
            recent: VecDeque::new(),
            id_key: Vec::new(),
            failure: None,
            done: false,
            stdout_closed: false,
            exit: ExitInfo::Unknown,
            case_deadline: case_timeout,
            stats: Stats::default(),
        }
    }

    fn lane(&mut self, key: LaneKey) -> usize {
        let found = match &key {
            LaneKey::Session(s) => self.session_lanes.get(s).copied(),
            LaneKey::Capture(n) => self.capture_index.get(n).copied(),
            LaneKey::Global => self.global_lane,
        };
        if let Some(i) = found {
            return i;
        }
        let i = self.lanes.len();
        match &key {
            LaneKey::Session(s) => {
                self.session_lanes.insert(s.clone(), i);
            }
            LaneKey::Capture(n) => {
                self.capture_index.insert(n.clone(), i);
                self.capture_lanes.push(i);
            }
            LaneKey::Global => self.global_lane = Some(i),
        }
        self.lanes.push(Lane {
            key,
            units: Vec::new(),
            cursor: 0,
        });
        i
    }
}

/// What compiling a trace remembers from step to step.
struct Compile {
    /// Each expectation's deadline unless its step says `within`.
    default_within: Duration,
    /// Which lane each request id's response waits on: the lane of the request's sessionId.
    request_lane: HashMap<String, LaneKey>,
    /// The last unordered group's (group, lane, unit).
    last_group: Option<(usize, usize, usize)>,
    prev_was_send: bool,
}

impl Compile {
    /// A send: the first of a run starts a segment (unless nothing came before it).
    fn send(&mut self, m: &mut Matcher, s: &Send, line: usize) {
        if !(self.prev_was_send || m.segs.len() == 1 && m.exps.is_empty()) {
            m.segs.push(Segment::default());
        }
        self.prev_was_send = true;
        if let Send::Frame {
            id: Some(id),
            session: Some(p),
            ..
        } = s
        {
            match session_lane(p) {
                Some(k) => self.request_lane.insert(id.clone(), k),
                None => self.request_lane.remove(id),
            };
        }
        let seg = m.segs.last_mut().expect("one segment");
        seg.sends.push((s.clone(), line));
    }

    /// A frame expectation: a response is indexed by its id (and waits on its request's
    /// lane); a notification joins its lane, in its group's unit when it has one.
    fn expect(&mut self, m: &mut Matcher, i: usize, step: &Step, e: &ExpectFrame) {
        self.prev_was_send = false;
        let seg = m.segs.len() - 1;
        let idx = m.exps.len();
        let response = is_response_pattern(&e.pat);
        let (not_before, lane_pos) = if response {
            (self.index_response(m, &e.pat, idx), None)
        } else {
            (None, Some(self.lane_unit(m, e, idx)))
        };
        let after = step.within.unwrap_or(self.default_within);
        if e.mult == Mult::One {
            m.segs[seg].require(after, idx);
        }
        m.exps.push(Exp {
            step: i,
            line: step.line,
            seg,
            deadline_after: after,
            kind: EKind::Frame {
                pat: e.pat.clone(),
                mult: e.mult,
                text: e.text.clone(),
                not_before,
                response,
            },
            done: false,
            matched_by: 0,
            lane_pos,
        });
    }

    /// Indexes response expectation `idx` by its literal id (else among the wild ones); returns
    /// the (lane, units before it) its request's lane holds.
    fn index_response(&self, m: &mut Matcher, pat: &Pat, idx: usize) -> Option<(usize, usize)> {
        let id_lit = match pat.member("id") {
            Some(Pat::Lit(v @ (Value::String(_) | Value::Number(_)))) => {
                crate::wire::json::to_string(v)
            }
            _ => {
                m.responses_wild.push(idx);
                return None;
            }
        };
        let lane_key = self.request_lane.get(&id_lit).cloned();
        m.responses_by_id
            .entry(id_lit.into_bytes())
            .or_default()
            .push(idx);
        let lane = m.lane(lane_key?);
        Some((lane, m.lanes[lane].units.len()))
    }

    /// Puts notification expectation `idx` in its lane: in the unit of the group it continues,
    /// else in a unit of its own. Returns its (lane, unit).
    fn lane_unit(&mut self, m: &mut Matcher, e: &ExpectFrame, idx: usize) -> (usize, usize) {
        let lane = m.lane(lane_key_of(&e.pat));
        match (e.group, self.last_group) {
            (Some(g), Some((lg, ll, lu))) if g == lg && ll == lane => {
                m.lanes[lane].units[lu].push(idx);
                (lane, lu)
            }
            (g, _) => {
                m.lanes[lane].units.push(vec![idx]);
                let lu = m.lanes[lane].units.len() - 1;
                self.last_group = g.map(|g| (g, lane, lu));
                (lane, lu)
            }
        }
    }

    /// An exit expectation, required in its segment.
    fn exit(&mut self, m: &mut Matcher, i: usize, step: &Step, codes: &Option<Vec<i32>>) {
        self.prev_was_send = false;
        let seg = m.segs.len() - 1;
        let after = step.within.unwrap_or(self.default_within);
        m.segs[seg].require(after, m.exps.len());
        m.exps.push(Exp {
            step: i,
            line: step.line,
            seg,
            deadline_after: after,
            kind: EKind::Exit(codes.clone()),
            done: false,
            matched_by: 0,
            lane_pos: None,
        });
    }
}

impl Segment {
    /// Expectation `idx`, due `after` the segment starts, must be met before the next.
    fn require(&mut self, after: Duration, idx: usize) {
        self.required_left += 1;
        self.open.insert((after, idx));
    }
}
