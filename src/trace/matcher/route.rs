//! Routing a stdout line to the expectation it meets: responses by id, notifications by lane
//! (the latest candidate in the lane's window), `ignore` rules, tolerant mode's skipped repeats.

use super::{EKind, LaneKey, Matcher, Seen, Tentative, KEEP_VALUE_BELOW, RECENT};
use crate::rules::replay::Replay;
use crate::trace::explain;
use crate::trace::failure::{Failure, FailureKind};
use crate::trace::pattern::Attempt;
use crate::trace::syntax::Mult;
use crate::wire::json::{Deep, JsonView, TapeRef};
use crate::wire::output::{Frame, NotAFrame, Output};
use serde_json::Value;
use std::time::Duration;

impl Matcher {
    /// Judges one stdout line received at `now`, as the reader parsed it.
    pub fn on_output(&mut self, out: &Output, now: Duration) {
        if self.done {
            return;
        }
        self.stats.lines += 1;
        let text = out.text();
        match (out.frame(), out.json()) {
            // An object of neither kind is still matched against patterns (as a response when
            // it has an id and no string method): `stdout.frames-only` judges its members.
            (Frame::NotAFrame(NotAFrame::Neither(_)), Some(v)) => {
                let method = v.get("method").and_then(JsonView::as_str).is_some();
                self.on_frame(text, v, v.get("id").is_some() && !method, now)
            }
            (Frame::NotAFrame(why), _) => {
                let text = match why {
                    NotAFrame::NotUtf8 { .. } | NotAFrame::TooLong(_) => None,
                    _ => Some(text),
                };
                let reason = format!("stdout line {} is {why}", self.stats.lines);
                self.not_a_frame(reason, text)
            }
            (f, Some(v)) => {
                let is_response = matches!(f, Frame::Response { .. });
                self.on_frame(text, v, is_response, now)
            }
            (_, None) => unreachable!("a frame is parsed JSON"),
        }
    }

    fn not_a_frame(&mut self, reason: String, text: Option<&str>) {
        if !self.frames_only || self.tolerant {
            return;
        }
        self.fail(Failure {
            closest: text.map(|t| explain::clip(t, 300)),
            stdout_line: Some(self.stats.lines),
            ..Failure::new(
                FailureKind::NotAFrame,
                format!("stdout carries something other than JSON-RPC frames: {reason}"),
            )
        });
    }

    /// Keeps a matched frame's text for failure output (the oldest entry's buffer is reused).
    fn remember(&mut self, text: &str, session: Option<&str>) {
        let mut seen = if self.recent.len() == RECENT {
            self.recent.pop_front().expect("the ring is full")
        } else {
            Seen {
                text: String::new(),
                session: None,
                whole: false,
            }
        };
        seen.session = session.map(str::to_owned);
        seen.whole = text.len() < KEEP_VALUE_BELOW;
        seen.text.clear();
        if seen.whole {
            seen.text.push_str(text);
        } else {
            seen.text.push_str(&explain::clip(text, 4096));
        }
        self.recent.push_back(seen);
    }

    fn on_frame(&mut self, text: &str, frame: TapeRef<'_>, is_response: bool, _now: Duration) {
        let session = frame
            .get("params")
            .and_then(|p| p.get("sessionId").or_else(|| p.get("parentSessionId")))
            .and_then(|s| s.as_str());
        // Tolerant: an exact repeat of a frame already matched (a response sent twice, an event
        // replayed) is another rule's business (the conversation's: response.exactly-once,
        // turn.no-replay); it matches no later expectation, but for an answer's own.
        let skip = if is_response {
            self.skip_repeats.0
        } else {
            self.skip_repeats.1
        };
        let repeat =
            self.tolerant && skip && (self.matched_texts.contains(text) || self.replayed(frame));
        // A repeated answer still meets an open expectation of its own: two requests that share
        // an id may get the same answer text (response.exactly-once's trace sends them).
        let hit = if repeat {
            is_response && self.match_response(frame, session)
        } else if is_response {
            self.match_response(frame, session)
        } else {
            self.match_notification(frame, session)
        };
        if repeat && !hit {
            self.stats.ignored += 1;
            return;
        }
        if hit {
            if self.tolerant {
                self.matched_texts.insert(text.to_owned());
            }
            self.stats.matched += 1;
            self.remember(text, session);
            return;
        }
        let ignored = self.ignores.iter().any(|(p, _)| {
            let mut at = Attempt::new(&self.bindings, &self.env, session);
            p.matches_view(Some(frame), &mut at)
        });
        if ignored {
            self.stats.ignored += 1;
            return;
        }
        // Unexpected: the case fails here, and the explanations work on the frame's `Value`
        // (the tape accepted the text, so `parse` does: same grammar).
        let value = Deep::new(frame.to_value());
        // If an open expectation accepts it, it came too early: name what it overtook.
        let f = match self.out_of_order(text, &value, session) {
            Some(f) => f,
            None => self.unexpected(text, &value, is_response),
        };
        self.fail(f);
    }

    /// Whether `frame` is an event of a replay that renumbers a session's history.
    fn replayed(&mut self, frame: TapeRef<'_>) -> bool {
        if frame.get("method").and_then(|m| m.as_str()) != Some("session.event") {
            return false;
        }
        let params = frame.get("params");
        let session = params
            .and_then(|p| p.get("sessionId"))
            .and_then(|s| s.as_str());
        match (session, params.and_then(|p| p.get("event"))) {
            (Some(sid), Some(ev)) => self.replays.event(sid, ev) != Replay::New,
            _ => false,
        }
    }

    /// Tries expectation `i` on a frame: the captures and `{{seq}}` it would commit, if it matches.
    pub(super) fn try_exp<'v>(
        &self,
        i: usize,
        v: impl JsonView<'v>,
        session: Option<&str>,
    ) -> Option<Tentative> {
        let EKind::Frame { pat, .. } = &self.exps[i].kind else {
            return None;
        };
        let mut at = Attempt::new(&self.bindings, &self.env, session);
        if pat.matches_view(Some(v), &mut at) {
            Some((at.new_vars, at.new_seq))
        } else {
            None
        }
    }

    /// Commits a match of expectation `i`: its bindings, its count, and its segment's progress.
    pub(super) fn accept(&mut self, i: usize, b: Tentative, session: Option<&str>) {
        for (n, v) in b.0 {
            self.bindings.vars.insert(n, v);
        }
        if let (Some(s), Some(q)) = (session, b.1) {
            match self.bindings.seqs.get_mut(s) {
                Some(last) => *last = q,
                None => {
                    self.bindings.seqs.insert(s.to_owned(), q);
                }
            }
        }
        let e = &mut self.exps[i];
        e.matched_by += 1;
        let required = e.required();
        if !e.done
            && !matches!(
                &e.kind,
                EKind::Frame {
                    mult: Mult::Star,
                    ..
                }
            )
        {
            e.done = true;
            if required {
                self.segs[e.seg].required_left -= 1;
                self.segs[e.seg].open.remove(&(e.deadline_after, i));
            }
        }
    }

    /// Matches a response: expectations with its literal id and those with none, in trace order.
    fn match_response(&mut self, v: TapeRef<'_>, session: Option<&str>) -> bool {
        // The key is the id's JSON text, written into a reused buffer.
        self.id_key.clear();
        if let Some(id) = v.get("id") {
            match id.as_str() {
                Some(s) => crate::wire::json::write_str(s, &mut self.id_key),
                None => crate::wire::json::write_value(&id.to_value(), &mut self.id_key),
            }
        }
        let by_id = self
            .responses_by_id
            .get(self.id_key.as_slice())
            .map_or(&[][..], Vec::as_slice);
        // Both lists are in trace order: merge them.
        let wild = self.responses_wild.as_slice();
        let (mut x, mut y) = (0, 0);
        let mut found = None;
        while x < by_id.len() || y < wild.len() {
            let i = if y == wild.len() || (x < by_id.len() && by_id[x] < wild[y]) {
                x += 1;
                by_id[x - 1]
            } else {
                y += 1;
                wild[y - 1]
            };
            let e = &self.exps[i];
            if e.done || e.seg >= self.active {
                continue;
            }
            if let EKind::Frame {
                not_before: Some((lane, pos)),
                ..
            } = &e.kind
            {
                if !self.lane_clear_before(*lane, *pos) {
                    continue;
                }
            }
            if let Some(b) = self.try_exp(i, v, session) {
                found = Some((i, b));
                break;
            }
        }
        match found {
            Some((i, b)) => {
                self.accept(i, b, session);
                true
            }
            None => false,
        }
    }

    /// Whether every required unit of `lane` before unit `pos` is satisfied.
    fn lane_clear_before(&self, lane: usize, pos: usize) -> bool {
        let l = &self.lanes[lane];
        (l.cursor..pos.min(l.units.len())).all(|u| {
            l.units[u]
                .iter()
                .all(|&i| self.exps[i].done || !self.exps[i].required())
        })
    }

    /// Whether capture lane `l` is bound to session `s` (`Some(true)`), unbound (`Some(false)`),
    /// or bound to something else (`None`).
    fn capture_bound_to(&self, l: usize, s: &str) -> Option<bool> {
        let LaneKey::Capture(n) = &self.lanes[l].key else {
            return None;
        };
        match self.bindings.vars.get(n) {
            Some(Value::String(b)) if b == s => Some(true),
            None => Some(false),
            _ => None,
        }
    }

    fn match_notification(&mut self, v: TapeRef<'_>, session: Option<&str>) -> bool {
        // Candidate lanes, in order: the literal session, captures bound to it, unbound
        // captures, global. The first with a candidate takes the frame.
        let mut found = None;
        if let Some(s) = session {
            if let Some(&l) = self.session_lanes.get(s) {
                found = self.lane_candidate(l, v, session).map(|c| (l, c));
            }
            for bound in [true, false] {
                for &l in &self.capture_lanes {
                    if found.is_some() {
                        break;
                    }
                    if self.capture_bound_to(l, s) == Some(bound) {
                        found = self.lane_candidate(l, v, session).map(|c| (l, c));
                    }
                }
            }
        }
        if let (None, Some(g)) = (&found, self.global_lane) {
            found = self.lane_candidate(g, v, session).map(|c| (g, c));
        }
        match found {
            Some((l, (unit, i, b))) => {
                self.accept(i, b, session);
                self.advance(l, unit);
                true
            }
            None => false,
        }
    }

    /// The latest unit in the lane's window (cursor up to the first unsatisfied required unit)
    /// that accepts the frame.
    fn lane_candidate(
        &self,
        l: usize,
        v: TapeRef<'_>,
        session: Option<&str>,
    ) -> Option<(usize, usize, Tentative)> {
        let lane = &self.lanes[l];
        let mut found = None;
        for u in lane.cursor..lane.units.len() {
            // Lane windows cross segment boundaries: a notification written after a send may
            // legitimately arrive before it is written (the runtime keeps working meanwhile).
            let unit = &lane.units[u];
            for &i in unit {
                let e = &self.exps[i];
                if e.done {
                    continue;
                }
                if let Some(b) = self.try_exp(i, v, session) {
                    found = Some((u, i, b));
                    break;
                }
            }
            let blocking = unit
                .iter()
                .any(|&i| self.exps[i].required() && !self.exps[i].done);
            if blocking {
                break;
            }
        }
        found
    }

    fn advance(&mut self, l: usize, unit: usize) {
        let complete = self.lanes[l].units[unit]
            .iter()
            .all(|&i| self.exps[i].done || !self.exps[i].required());
        let has_star = self.lanes[l].units[unit].iter().any(|&i| {
            matches!(
                &self.exps[i].kind,
                EKind::Frame {
                    mult: Mult::Star,
                    ..
                }
            )
        });
        let single = self.lanes[l].units[unit].len() == 1;
        let lane = &mut self.lanes[l];
        lane.cursor = if complete && !(single && has_star) {
            unit + 1
        } else {
            unit
        };
        // A group stays open while it has unmatched members; skip fully used units.
        let _ = &lane.key;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::super::*;
    use crate::wire::output::Output;

    #[test]
    fn responses_match_by_id_in_any_order() {
        let mut x = m(">> {\"id\":1,\"method\":\"a\"}\n>> {\"id\":2,\"method\":\"b\"}\n<< {\"id\":1}\n<< {\"id\":2}\n");
        let (w, _) = drain(&mut x, T);
        // Consecutive sends go out as one write.
        assert_eq!(
            w,
            vec!["{\"id\":1,\"method\":\"a\"}\n{\"id\":2,\"method\":\"b\"}\n"]
        );
        feed(
            &mut x,
            &["{\"id\":2,\"result\":{}}", "{\"id\":1,\"result\":{}}"],
        );
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
    }

    #[test]
    fn sessions_interleave_but_keep_their_own_order() {
        let t = ">> {\"id\":1,\"method\":\"go\"}\n<< {\"params\":{\"sessionId\":\"a\",\"n\":1}}\n<< {\"params\":{\"sessionId\":\"a\",\"n\":2}}\n<< {\"params\":{\"sessionId\":\"b\",\"n\":1}}\n";
        let mut x = m(t);
        drain(&mut x, T);
        feed(
            &mut x,
            &[
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"b\",\"n\":1}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":1}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":2}}",
            ],
        );
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        let mut y = m(t);
        drain(&mut y, T);
        feed(
            &mut y,
            &["{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":2}}"],
        );
        let f = y.failure().expect("out of order");
        assert_eq!(f.kind, FailureKind::Missing, "{f}");
        assert!(
            f.reason.contains("never arrived before stdout line 1"),
            "{f}"
        );
        assert_eq!(f.at.as_deref(), Some("t:2"));
        assert_eq!((f.trace_line, f.stdout_line), (Some(2), Some(1)));
        // Missing stays missing while other frames come; the frame itself makes it late.
        assert!(y.wants_late_lines());
        assert!(!y.on_late_output(&Output::parse(
            0,
            "{\"method\":\"e\",\"params\":{\"sessionId\":\"b\",\"n\":1}}".to_owned()
        )));
        assert_eq!(y.failure().unwrap().kind, FailureKind::Missing);
        assert!(y.on_late_output(&Output::parse(
            0,
            "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":1}}".to_owned()
        )));
        let f = y.failure().unwrap();
        assert_eq!(f.kind, FailureKind::OutOfOrder, "{f}");
        assert!(
            f.reason
                .contains("arrived out of order: at stdout line 3, after stdout line 1"),
            "{f}"
        );
    }

    #[test]
    fn a_star_does_not_swallow_the_frame_that_ends_it() {
        let mut x = m(">> {\"id\":1,\"method\":\"go\"}\n<<* {\"params\":{\"sessionId\":\"a\"}}\n<< {\"params\":{\"sessionId\":\"a\",\"end\":true}}\n<< {\"id\":1}\n");
        drain(&mut x, T);
        feed(
            &mut x,
            &[
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\"}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\"}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"end\":true}}",
                "{\"id\":1,\"result\":{}}",
            ],
        );
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        assert_eq!(x.stats.matched, 4);
    }

    #[test]
    fn unordered_groups_and_ignore_rules() {
        let mut x = m("ignore {\"method\":\"noise\"}\n>> {\"id\":1,\"method\":\"go\"}\n<<unordered\n<< {\"params\":{\"sessionId\":\"a\",\"k\":1}}\n<< {\"params\":{\"sessionId\":\"a\",\"k\":2}}\n<<end\n");
        drain(&mut x, T);
        feed(
            &mut x,
            &[
                "{\"method\":\"noise\"}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"k\":2}}",
                "{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"k\":1}}",
            ],
        );
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        assert_eq!(x.stats.ignored, 1);
    }

    #[test]
    fn long_traces_match_in_linear_time() {
        // 20 000 expected frames in one lane with stars between: each frame looks at a short window.
        let mut t = String::from(">> {\"id\":0,\"method\":\"go\"}\n");
        for i in 0..20_000 {
            t.push_str(&format!("<<* {{\"params\":{{\"sessionId\":\"s\",\"noise\":true}}}}\n<< {{\"params\":{{\"sessionId\":\"s\",\"i\":{i}}}}}\n"));
        }
        let mut x = m(&t);
        drain(&mut x, T);
        for i in 0..20_000 {
            let line = format!("{{\"method\":\"e\",\"params\":{{\"sessionId\":\"s\",\"i\":{i}}}}}");
            x.on_output(&Output::parse(i + 1, line), T);
            // The runner polls after every frame: polling must not rescan the trace.
            assert!(matches!(x.poll(T), Action::WaitUntil(_) | Action::Done));
        }
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        // Not a wall-clock assertion: the matched count proves every frame was judged.
        assert_eq!(x.stats.matched, 20_000);
    }
}
