//! Compiling a trace into the matcher's shape: segments (cut at each run of sends), lanes of
//! notification expectations (by session), responses indexed by id, and deadlines.

use super::{EKind, Exp, Lane, LaneKey, Matcher, Segment, Stats};
use crate::trace::failure::ExitInfo;
use crate::trace::pattern::{Bindings, Env, Pat};
use crate::trace::syntax::{Mult, Send, StepKind, Trace};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

fn lane_key_of(pat: &Pat) -> LaneKey {
    let params = pat.member("params");
    let s = params.and_then(|p| {
        p.member("sessionId")
            .or_else(|| p.member("parentSessionId"))
    });
    match s {
        Some(Pat::Lit(Value::String(s))) => LaneKey::Session(s.clone()),
        Some(Pat::Capture(n, _)) => LaneKey::Capture(n.clone()),
        _ => LaneKey::Global,
    }
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
        let default_within = trace.meta.timeout.unwrap_or(frame_timeout);
        let mut m = Matcher {
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
            segs: vec![Segment {
                sends: Vec::new(),
                required_left: 0,
                active_since: None,
                open: Default::default(),
            }],
            active: 0,
            pending: VecDeque::new(),
            pause_until: None,
            ignores: trace.ignores.clone(),
            frames_only: trace.frames_only,
            tolerant: false,
            skip_repeats: (true, true),
            matched_texts: Default::default(),
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
        };
        // Which lane each request id's response waits on: the lane of the request's sessionId.
        let mut request_lane: HashMap<String, LaneKey> = HashMap::new();
        let mut last_group: Option<(usize, usize, usize)> = None; // (group, lane, unit)
        let mut prev_was_send = false;
        for (i, step) in trace.steps.iter().enumerate() {
            match &step.kind {
                StepKind::Send(s) => {
                    if !(prev_was_send || m.segs.len() == 1 && m.exps.is_empty()) {
                        m.segs.push(Segment {
                            sends: Vec::new(),
                            required_left: 0,
                            active_since: None,
                            open: Default::default(),
                        });
                    }
                    prev_was_send = true;
                    if let Send::Frame {
                        id: Some(id),
                        session: Some(p),
                        ..
                    } = s
                    {
                        let key = match p {
                            Pat::Lit(Value::String(s)) => Some(LaneKey::Session(s.clone())),
                            Pat::Capture(n, _) => Some(LaneKey::Capture(n.clone())),
                            _ => None,
                        };
                        match key {
                            Some(k) => request_lane.insert(id.clone(), k),
                            None => request_lane.remove(id),
                        };
                    }
                    m.segs
                        .last_mut()
                        .expect("one segment")
                        .sends
                        .push((s.clone(), step.line));
                }
                StepKind::Expect(e) => {
                    prev_was_send = false;
                    let seg = m.segs.len() - 1;
                    let idx = m.exps.len();
                    let response = is_response_pattern(&e.pat);
                    let mut not_before = None;
                    let mut lane_pos = None;
                    if response {
                        let id_lit = match e.pat.member("id") {
                            Some(Pat::Lit(v @ (Value::String(_) | Value::Number(_)))) => {
                                Some(crate::wire::json::to_string(v))
                            }
                            _ => None,
                        };
                        match &id_lit {
                            Some(k) => {
                                m.responses_by_id
                                    .entry(k.clone().into_bytes())
                                    .or_default()
                                    .push(idx);
                                if let Some(lk) = request_lane.get(k) {
                                    let lane = m.lane(lk.clone());
                                    not_before = Some((lane, m.lanes[lane].units.len()));
                                }
                            }
                            None => m.responses_wild.push(idx),
                        }
                    } else {
                        let lane = m.lane(lane_key_of(&e.pat));
                        match (e.group, last_group) {
                            (Some(g), Some((lg, ll, lu))) if g == lg && ll == lane => {
                                m.lanes[lane].units[lu].push(idx);
                                lane_pos = Some((lane, lu));
                            }
                            (g, _) => {
                                m.lanes[lane].units.push(vec![idx]);
                                let lu = m.lanes[lane].units.len() - 1;
                                last_group = g.map(|g| (g, lane, lu));
                                lane_pos = Some((lane, lu));
                            }
                        }
                    }
                    if e.mult == Mult::One {
                        m.segs[seg].required_left += 1;
                        m.segs[seg]
                            .open
                            .insert((step.within.unwrap_or(default_within), idx));
                    }
                    m.exps.push(Exp {
                        step: i,
                        line: step.line,
                        seg,
                        deadline_after: step.within.unwrap_or(default_within),
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
                StepKind::Exit(codes) => {
                    prev_was_send = false;
                    let seg = m.segs.len() - 1;
                    m.segs[seg].required_left += 1;
                    let after = step.within.unwrap_or(default_within);
                    m.segs[seg].open.insert((after, m.exps.len()));
                    m.exps.push(Exp {
                        step: i,
                        line: step.line,
                        seg,
                        deadline_after: step.within.unwrap_or(default_within),
                        kind: EKind::Exit(codes.clone()),
                        done: false,
                        matched_by: 0,
                        lane_pos: None,
                    });
                }
            }
        }
        m
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
