//! Routing a stdout line to the expectation it meets: responses by id, notifications by lane
//! (the latest candidate in the lane's window), `ignore` rules, tolerant mode's skipped repeats.

use super::{EKind, LaneKey, Line, Matcher, Seen, Tentative, KEEP_VALUE_BELOW, RECENT};
use crate::trace::explain;
use crate::trace::failure::{Failure, FailureKind};
use crate::trace::pattern::Attempt;
use crate::trace::syntax::Mult;
use serde_json::Value;
use std::time::Duration;

impl Matcher {
    /// Judges one stdout line received at `now`.
    pub fn on_line(&mut self, line: Line<'_>, now: Duration) {
        if self.done {
            return;
        }
        self.stats.lines += 1;
        let text = match line {
            Line::Text(t) => t,
            Line::NotUtf8 { at, len } => {
                return self.not_a_frame(format!(
                    "stdout line {} is not valid UTF-8 (first invalid byte at offset {at} of {len})",
                    self.stats.lines
                ), None)
            }
            Line::TooLong(n) => {
                return self.not_a_frame(format!(
                    "stdout line {} is {n} bytes long, over the reader's line bound",
                    self.stats.lines
                ), None)
            }
        };
        let value = match crate::wire::json::parse(text) {
            Ok(p) => p.value,
            Err(e) => {
                return self.not_a_frame(
                    format!("stdout line {} is not JSON ({e})", self.stats.lines),
                    Some(text),
                )
            }
        };
        if !value.is_object() {
            let what = match &value {
                Value::Array(_) => "a JSON array",
                Value::String(_) => "a JSON string",
                Value::Number(_) => "a JSON number",
                Value::Bool(_) => "a JSON boolean",
                _ => "JSON null",
            };
            crate::wire::json::dispose(value);
            return self.not_a_frame(
                format!(
                    "stdout line {} is {what}, not a frame object",
                    self.stats.lines
                ),
                Some(text),
            );
        }
        self.on_frame(text, value, now);
    }

    fn not_a_frame(&mut self, reason: String, text: Option<&str>) {
        if !self.frames_only || self.tolerant {
            return;
        }
        self.fail(Failure {
            reason: format!("stdout carries something other than JSON-RPC frames: {reason}"),
            at: None,
            expected: None,
            closest: text.map(|t| explain::clip(t, 300)),
            diff: None,
            recent: Vec::new(),
            kind: FailureKind::NotAFrame,
            trace_line: None,
            stdout_line: Some(self.stats.lines),
        });
    }

    fn remember(&mut self, text: &str, value: Value) {
        if self.recent.len() == RECENT {
            if let Some(old) = self.recent.pop_front() {
                if let Some(v) = old.value {
                    crate::wire::json::dispose(v);
                }
            }
        }
        let keep = text.len() < KEEP_VALUE_BELOW;
        self.recent.push_back(Seen {
            text: if keep {
                text.to_owned()
            } else {
                explain::clip(text, 4096)
            },
            value: if keep {
                Some(value)
            } else {
                crate::wire::json::dispose(value);
                None
            },
        });
    }

    fn on_frame(&mut self, text: &str, value: Value, _now: Duration) {
        let obj = value.as_object().expect("checked object");
        let is_response =
            !obj.get("method").is_some_and(Value::is_string) && obj.contains_key("id");
        let session = obj
            .get("params")
            .and_then(|p| p.get("sessionId").or_else(|| p.get("parentSessionId")))
            .and_then(Value::as_str)
            .map(str::to_owned);
        // Tolerant: an exact repeat of a frame already matched (a response sent twice, an event
        // replayed) is another rule's business; it must not match a later expectation either.
        let skip = if is_response {
            self.skip_repeats.0
        } else {
            self.skip_repeats.1
        };
        if self.tolerant && skip && self.matched_texts.contains(text) {
            self.stats.ignored += 1;
            crate::wire::json::dispose(value);
            return;
        }
        let hit = if is_response {
            self.match_response(&value, session.as_deref())
        } else {
            self.match_notification(&value, session.as_deref())
        };
        if hit {
            if self.tolerant {
                self.matched_texts.insert(text.to_owned());
            }
            self.stats.matched += 1;
            self.remember(text, value);
            return;
        }
        let ignored = self.ignores.iter().any(|(p, _)| {
            let mut at = Attempt::new(&self.bindings, &self.env, session.as_deref());
            p.matches(Some(&value), &mut at)
        });
        if ignored {
            self.stats.ignored += 1;
            crate::wire::json::dispose(value);
            return;
        }
        // Unexpected. If an open expectation accepts it, it came too early: name what it overtook.
        if let Some(f) = self.out_of_order(text, &value, session.as_deref()) {
            crate::wire::json::dispose(value);
            self.fail(f);
            return;
        }
        let f = self.unexpected(text, &value, is_response);
        crate::wire::json::dispose(value);
        self.fail(f);
    }

    /// Tries expectation `i` on a frame: the captures and `{{seq}}` it would commit, if it matches.
    pub(super) fn try_exp(&self, i: usize, v: &Value, session: Option<&str>) -> Option<Tentative> {
        let EKind::Frame { pat, .. } = &self.exps[i].kind else {
            return None;
        };
        let mut at = Attempt::new(&self.bindings, &self.env, session);
        if pat.matches(Some(v), &mut at) {
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
            self.bindings.seqs.insert(s.to_owned(), q);
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

    fn match_response(&mut self, v: &Value, session: Option<&str>) -> bool {
        let key = v
            .get("id")
            .map(crate::wire::json::to_string)
            .unwrap_or_default();
        let mut cands: Vec<usize> = self.responses_by_id.get(&key).cloned().unwrap_or_default();
        cands.extend(self.responses_wild.iter().copied());
        cands.sort_unstable();
        for i in cands {
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
                self.accept(i, b, session);
                return true;
            }
        }
        false
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

    fn match_notification(&mut self, v: &Value, session: Option<&str>) -> bool {
        // Candidate lanes: the literal session, captures bound to it, unbound captures, global.
        let mut lanes: Vec<usize> = Vec::new();
        if let Some(s) = session {
            if let Some(&l) = self.lane_index.get(&LaneKey::Session(s.to_owned())) {
                lanes.push(l);
            }
            let mut unbound = Vec::new();
            for (li, lane) in self.lanes.iter().enumerate() {
                if let LaneKey::Capture(n) = &lane.key {
                    match self.bindings.vars.get(n) {
                        Some(Value::String(b)) if b == s => lanes.push(li),
                        None => unbound.push(li),
                        _ => {}
                    }
                }
            }
            lanes.extend(unbound);
        }
        if let Some(&g) = self.lane_index.get(&LaneKey::Global) {
            lanes.push(g);
        }
        for l in lanes {
            if let Some((unit, i, b)) = self.lane_candidate(l, v, session) {
                self.accept(i, b, session);
                self.advance(l, unit);
                return true;
            }
        }
        false
    }

    /// The latest unit in the lane's window (cursor up to the first unsatisfied required unit)
    /// that accepts the frame.
    fn lane_candidate(
        &self,
        l: usize,
        v: &Value,
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
        assert!(!y.on_late_line("{\"method\":\"e\",\"params\":{\"sessionId\":\"b\",\"n\":1}}"));
        assert_eq!(y.failure().unwrap().kind, FailureKind::Missing);
        assert!(y.on_late_line("{\"method\":\"e\",\"params\":{\"sessionId\":\"a\",\"n\":1}}"));
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
            x.on_line(
                Line::Text(&format!(
                    "{{\"method\":\"e\",\"params\":{{\"sessionId\":\"s\",\"i\":{i}}}}}"
                )),
                T,
            );
            // The runner polls after every frame: polling must not rescan the trace.
            assert!(matches!(x.poll(T), Action::WaitUntil(_) | Action::Done));
        }
        assert_eq!(drain(&mut x, T).1, Action::Done);
        assert!(x.failure().is_none(), "{:?}", x.failure());
        // Not a wall-clock assertion: the matched count proves every frame was judged.
        assert_eq!(x.stats.matched, 20_000);
    }
}
