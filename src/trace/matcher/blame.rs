//! Explaining a frame nothing accepts: the frame it overtook (out of order, missing), else the
//! closest open expectation and the first difference from it.

use super::{EKind, Matcher, Seen};
use crate::trace::explain;
use crate::trace::failure::{Failure, FailureKind};
use crate::trace::pattern::Pat;
use crate::trace::syntax::Mult;
use crate::wire::json::Deep;
use serde_json::Value;

impl Matcher {
    /// Fills the closest recent frame to `pat` and its first difference into `f`. Recent frames
    /// are kept as text; the whole ones are parsed again here, on the way to a failure.
    pub(super) fn explain_closest(&self, pat: &Pat, f: &mut Failure) {
        let mut best: Option<(f64, &Seen, Deep)> = None;
        for s in self.recent.iter().filter(|s| s.whole) {
            let Ok(p) = crate::wire::json::parse(&s.text) else {
                continue;
            };
            let v = Deep::new(p.value);
            let score = explain::score(pat, &v, &self.bindings, &self.env);
            if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
                best = Some((score, s, v));
            }
        }
        if let Some((_, s, v)) = best {
            f.closest = Some(explain::clip(&s.text, 600));
            f.diff = explain::first_difference(pat, &v, &self.bindings, &self.env);
        }
    }

    /// The failure for a frame no expectation, `ignore` rule or later expectation accepts: a
    /// mismatch against the closest open expectation of its kind, or unexpected when none is open.
    pub(super) fn unexpected(&self, text: &str, value: &Value, is_response: bool) -> Failure {
        let mut best: Option<(f64, usize)> = None;
        for (i, e) in self.exps.iter().enumerate() {
            if e.seg >= self.active
                || (e.done
                    && !matches!(
                        &e.kind,
                        EKind::Frame {
                            mult: Mult::Star,
                            ..
                        }
                    ))
            {
                continue;
            }
            if let EKind::Frame { pat, response, .. } = &e.kind {
                if *response != is_response {
                    continue;
                }
                let s = explain::score(pat, value, &self.bindings, &self.env);
                if best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, i));
                }
            }
        }
        let mut f = Failure {
            stdout_line: Some(self.stats.lines),
            ..Failure::new(
                FailureKind::Unexpected,
                format!(
                    "unexpected frame (stdout line {}): {}",
                    self.stats.lines,
                    explain::clip(text, 300)
                ),
            )
        };
        if let Some((_, i)) = best {
            let e = &self.exps[i];
            f.kind = FailureKind::Mismatch;
            f.trace_line = Some(e.line);
            f.at = Some(self.at(e.line));
            f.expected = Some(self.exp_text(e));
            if let EKind::Frame { pat, .. } = &e.kind {
                f.diff = explain::first_difference(pat, value, &self.bindings, &self.env);
            }
            f.closest = Some(explain::clip(text, 300));
            // A response with id null answers no request (the kit never sends one): name that,
            // not its id's difference from the expectation it happened to be closest to.
            let no_request = is_response && value.get("id").is_some_and(Value::is_null);
            f.reason = match &f.diff {
                Some(_) if no_request => format!(
                    "stdout line {} is a response with id null, an answer to no request (a line the contract says gets no output), where {} expects the next frame",
                    self.stats.lines,
                    self.at(e.line)
                ),
                Some(d) => format!(
                    "stdout line {} differs from the expectation at {}: {d}",
                    self.stats.lines,
                    self.at(e.line)
                ),
                // No difference: the frame matches the pattern, so it came out of its place (a
                // `<<*` the lane had gone beyond).
                None => format!(
                    "stdout line {} matches the pattern at {}, but out of its place: it came after the expectations below that one had been met",
                    self.stats.lines,
                    self.at(e.line)
                ),
            };
        }
        f
    }

    /// If an open expectation accepts the frame, it came too early: names what it overtook.
    pub(super) fn out_of_order(
        &self,
        text: &str,
        v: &Value,
        session: Option<&str>,
    ) -> Option<Failure> {
        for (i, e) in self.exps.iter().enumerate() {
            if e.done
                || !matches!(e.kind, EKind::Frame { .. })
                || self.try_exp(i, v, session).is_none()
            {
                continue;
            }
            let (lane, upto) = match (&e.kind, e.lane_pos) {
                (
                    EKind::Frame {
                        not_before: Some(nb),
                        ..
                    },
                    _,
                ) => *nb,
                (_, Some(lp)) => lp,
                _ => continue,
            };
            let l = &self.lanes[lane];
            let blocker = (l.cursor..upto.min(l.units.len()))
                .flat_map(|u| l.units[u].iter().copied())
                .find(|&j| self.exps[j].required() && !self.exps[j].done);
            let (why, at) = match blocker {
                Some(j) => {
                    return Some(self.missing_before(j, i, text, v));
                }
                None if e.seg >= self.active => (
                    "it arrived before the sends it follows in the trace were due".to_owned(),
                    i,
                ),
                None => continue,
            };
            let diff = match &self.exps[at].kind {
                EKind::Frame { pat, .. } if at != i => {
                    explain::first_difference(pat, v, &self.bindings, &self.env)
                }
                _ => None,
            };
            let reason = format!(
                "frame out of order (stdout line {}): it matches {} but {why}",
                self.stats.lines,
                self.at(e.line)
            );
            return Some(Failure {
                closest: Some(explain::clip(text, 300)),
                diff,
                stdout_line: Some(self.stats.lines),
                ..self.failure_at(&self.exps[at], FailureKind::Missing, reason)
            });
        }
        None
    }

    /// Expectation `j` had not arrived when a frame matching `i`, which the trace orders after
    /// it, came: from the client's side `j` is missing, whether or not it would come later.
    fn missing_before(&self, j: usize, i: usize, text: &str, v: &Value) -> Failure {
        let diff = match &self.exps[j].kind {
            EKind::Frame { pat, .. } => {
                explain::first_difference(pat, v, &self.bindings, &self.env)
            }
            _ => None,
        };
        let reason = format!(
            "{} ({}) never arrived before stdout line {}, which matches {} written after it",
            self.exp_text(&self.exps[j]),
            self.at(self.exps[j].line),
            self.stats.lines,
            self.at(self.exps[i].line)
        );
        Failure {
            closest: Some(explain::clip(text, 300)),
            diff,
            stdout_line: Some(self.stats.lines),
            ..self.failure_at(&self.exps[j], FailureKind::Missing, reason)
        }
    }
}
