//! Judging one check: run its traces, turn the first failure into a structured [`Failure`], and
//! hand every transcript to the rule engine so stream rules are blamed on their own checks.

use super::cases::CheckCase;
use super::exercised;
use super::options::{runner_opts, Options, StubLog};
use super::probe::ModelCapability;
use super::share::RanIn;
use super::spares::Spares;
use super::stream;
use super::verdict::{Failure, FailureKind, Verdict};
use super::warm::Procs;
use crate::check::CheckId;
use crate::runner::{self, CaseDirs, CaseReport, CommandSpec, Outcome};
use crate::trace::pattern::Seqs;
use crate::wire::json;
use crate::wire::output::Frame;
use std::collections::HashMap;
use std::time::Duration;

/// A finding about some check, made while judging another one (stream rules, oracles).
#[derive(Debug, Clone)]
pub struct Blame {
    /// The check whose rule broke.
    pub check: crate::check::CheckId,
    /// What broke.
    pub failure: Failure,
}

/// The frame timeout the traces' `within` deadlines are written for.
pub const NOMINAL_FRAME_TIMEOUT: Duration = Duration::from_secs(10);

/// Scales a trace's own `within` and `# timeout:` deadlines by `--timeout` / 10 s, so that
/// `--timeout` bounds every wait of a check, not only the ones that use the default.
pub fn scale_deadlines(t: &mut crate::trace::Trace, frame_timeout: Duration) {
    let k = frame_timeout.as_secs_f64() / NOMINAL_FRAME_TIMEOUT.as_secs_f64();
    let scale = |d: Duration| Duration::from_secs_f64(d.as_secs_f64() * k);
    for s in &mut t.steps {
        s.within = s.within.map(scale);
    }
    t.meta.timeout = t.meta.timeout.map(scale);
}

fn from_case(r: &CaseReport, f: &crate::trace::matcher::Failure) -> Failure {
    let mut details = String::new();
    if !f.recent.is_empty() {
        details.push_str(&crate::trace::failure::recent_heading(
            f.recent_session.as_deref(),
        ));
        details.push(':');
        for l in &f.recent {
            details.push_str("\n  ");
            details.push_str(l);
        }
    }
    Failure {
        kind: f.kind,
        reason: one_line_reason(f),
        case: Some(r.file.clone()),
        expected: f.expected.clone().map(|e| match &f.at {
            Some(at) => format!("({at}): {e}"),
            None => e,
        }),
        closest: f.closest.clone(),
        difference: f.diff.clone(),
        stdout_line: f.stdout_line,
        stderr_tail: r.stderr_tail.clone(),
        details,
        model_log: Vec::new(),
        wire_log: Some(wire_log(r)),
    }
}

/// A failed case's failure as a check's report renders it (its trace, the expected frame and
/// its line, the frame received and its stdout line, the difference, the last frames, the
/// stderr tail and the wire log): `replay -v` prints it as `check` does. `None` unless the case
/// failed.
pub fn case_failure(r: &CaseReport) -> Option<Failure> {
    match &r.outcome {
        Outcome::Fail(f) => Some(from_case(r, f)),
        _ => None,
    }
}

/// The failure's first line; for an expectation that never arrived, with the frame closest to it
/// (how it differs, or the frame itself), so a frame of the wrong shape shows without `-v`.
fn one_line_reason(f: &crate::trace::matcher::Failure) -> String {
    let reason = f.reason.lines().next().unwrap_or("");
    // A timeout with an expectation is one that never arrived (the case's own timeout has none).
    if f.kind != FailureKind::Timeout || f.expected.is_none() {
        return reason.to_owned();
    }
    let clip = |s: &str| crate::trace::explain::clip(s, 160);
    match (&f.diff, &f.closest) {
        // Another response or notification altogether says nothing about the frame's shape.
        (Some(d), _) if d.is_other_frame() => reason.to_owned(),
        (Some(d), _) => format!(
            "{reason}; the closest frame differs at {}",
            clip(&d.to_string())
        ),
        (None, Some(c)) => format!("{reason}; the closest frame: {}", clip(c)),
        (None, None) => reason.to_owned(),
    }
}

/// The case's wire log as a report keeps it.
fn wire_log(r: &CaseReport) -> runner::WireLog {
    use runner::wire_log::{MAX_BYTES, MAX_LINES};
    r.transcript.wire_log(MAX_LINES, MAX_BYTES)
}

fn stream_blames(r: &CaseReport, own: CheckId, opts: &Options, out: &mut Vec<Blame>) {
    if r.transcript.truncated {
        return;
    }
    for f in stream::judge(&r.transcript, Some(own), opts.edition, opts.strict_upstream) {
        let mut failure = Failure::new(FailureKind::Rule, f.message);
        failure.case = Some(r.file.clone());
        failure.closest = f.line;
        failure.difference = f.difference;
        failure.stdout_line = f.stdout_line;
        failure.wire_log = Some(wire_log(r));
        out.push(Blame {
            check: f.check,
            failure,
        });
    }
}

/// A runtime that died on the check's own input: the case ended with nothing on stdout (the
/// runner's `Broken`) although the runtime started and answered the preflight, and the first
/// expectation it missed is below the `# ---- check ----` marker, so what it had read when it
/// died was the check's input (setup sends without expectations are initialize-like requests the
/// preflight proved it answers). That is the check's failure, not "could not be exercised".
fn died_on_input(case: &CheckCase, trace: &crate::trace::Trace, r: &CaseReport) -> Option<Failure> {
    use crate::trace::{ExitInfo, StepKind};
    if !matches!(r.exit, ExitInfo::Code(_) | ExitInfo::Signal(_)) || !r.transcript.stdout.is_empty()
    {
        return None;
    }
    let first_expect = trace
        .steps
        .iter()
        .find(|s| matches!(s.kind, StepKind::Expect(_)))?;
    if first_expect.line <= case.setup_until.unwrap_or(0) {
        return None;
    }
    let sent = String::from_utf8_lossy(&r.transcript.sent).into_owned();
    let lines: Vec<&str> = sent.lines().filter(|l| !l.trim().is_empty()).collect();
    let clip = |l: &str| crate::trace::explain::clip(l, 160);
    let what = match lines.as_slice() {
        [] => "before anything was sent".to_owned(),
        [one] => format!("after the line `{}`", clip(one)),
        [first, .., last] => format!(
            "after the {} lines it was sent (the first `{}`, the last `{}`)",
            lines.len(),
            clip(first),
            clip(last)
        ),
    };
    let mut f = Failure::new(
        FailureKind::Exit,
        format!(
            "the runtime ended ({}) {what}, without answering it: the check's input crashed it",
            r.exit
        ),
    );
    f.case = Some(r.file.clone());
    f.stderr_tail = r.stderr_tail.clone();
    f.wire_log = Some(wire_log(r));
    if !r.stderr_tail.trim().is_empty() {
        f.details = format!(
            "stderr tail: {}",
            r.stderr_tail.trim().lines().last().unwrap_or("")
        );
    }
    Some(f)
}

/// What judging one check gave: its own verdict (before baselines and stream findings), what
/// its transcripts showed about other rules, and where each case ran.
pub(super) type Judged = (Verdict, Vec<Blame>, Vec<RanIn>);

/// Runs one check's cases, on the job's processes `procs`.
pub(super) fn judge(
    id: crate::check::CheckId,
    cases: &[&CheckCase],
    cmd: &CommandSpec,
    opts: &Options,
    model: &dyn Fn() -> ModelCapability,
    procs: &mut Procs,
) -> Judged {
    if cases.iter().any(|c| c.needs_model) {
        if let ModelCapability::Ignores(why) = model() {
            return (Verdict::NotTestable { reason: why }, Vec::new(), Vec::new());
        }
    }
    let mut j = Judging {
        id,
        cmd,
        opts,
        kept: HashMap::new(),
        blames: Vec::new(),
        procs,
        ran: Vec::new(),
    };
    // A case that cannot exercise the rule here (its setup needs what the runtime lacks) does not
    // stop the others: the rule is judged by those that can, and is untestable only when none can.
    let mut untestable = None;
    let mut judged = false;
    for case in cases {
        match j.case(case) {
            // A case that is all setup exercises nothing: its pass is no verdict on the rule.
            None => judged |= !case.setup_only,
            Some(Verdict::NotTestable { reason }) => {
                untestable.get_or_insert(reason);
            }
            Some(verdict) => return (verdict, j.blames, j.ran),
        }
    }
    let verdict = match untestable {
        _ if judged => Verdict::Pass,
        Some(reason) => Verdict::NotTestable { reason },
        None => {
            let reason = "no case of it got past its setup, so the rule was never exercised".into();
            Verdict::NotTestable { reason }
        }
    };
    (verdict, j.blames, j.ran)
}

/// One check being judged, case by case.
struct Judging<'a, 'b> {
    id: CheckId,
    cmd: &'a CommandSpec,
    opts: &'a Options,
    /// The directories of the cases run so far and their last `{{seq}}` per session, by case
    /// name (a later case may continue one).
    kept: HashMap<String, (CaseDirs, Seqs)>,
    /// What the transcripts showed about other rules.
    blames: Vec<Blame>,
    /// The job's processes: spares started ahead, the shared one.
    procs: &'a mut Procs<'b>,
    /// Where each case ran, in order.
    ran: Vec<RanIn>,
}

impl Judging<'_, '_> {
    /// Runs `case`; returns its verdict unless it passed. An untestable case's directories are
    /// dropped: a case that continues it is untestable too, never run on a half-made state.
    fn case(&mut self, case: &CheckCase) -> Option<Verdict> {
        let verdict = self.run_case(case);
        if let Some(Verdict::NotTestable { .. }) = verdict {
            if let Ok(t) = case.trace(false) {
                self.kept.remove(&t.meta.case);
            }
        }
        verdict
    }

    fn run_case(&mut self, case: &CheckCase) -> Option<Verdict> {
        let trace = match case.trace(self.opts.strict_upstream) {
            Ok(mut t) => {
                t.frames_only = false;
                scale_deadlines(&mut t, self.opts.frame_timeout);
                t
            }
            Err(e) => {
                let f = Failure::new(
                    FailureKind::Harness,
                    format!("the check's trace is invalid: {e}"),
                );
                return Some(Verdict::Fail(Box::new(f)));
            }
        };
        let mut ran = RanIn::Fresh;
        if let Some(shared) = self.shared(case, &trace) {
            match shared {
                Ok(in_shared) => {
                    self.ran.push(in_shared);
                    return None;
                }
                Err(process) => ran = RanIn::FreshAgain { process },
            }
        }
        self.ran.push(ran);
        let (r, tag) = match self.replay(&trace, case.needs_model) {
            Ok(r) => r,
            Err(verdict) => return Some(verdict),
        };
        self.verdict_of(case, &trace, &r, &tag)
    }

    /// Runs a shareable case on the job's shared process: `Ok(where)` when it passed cleanly
    /// there (no failure, no finding about another rule, no line of another case), `Err(the
    /// process)` when it did not (it must run again on a fresh process: nothing of that run is
    /// kept), `None` when it did not run shared.
    fn shared(
        &mut self,
        case: &CheckCase,
        trace: &crate::trace::Trace,
    ) -> Option<Result<RanIn, u64>> {
        let mut ro = runner_opts(self.opts);
        ro.give_up = exercised::give_up(self.id, case.needs_model);
        let procs = &mut *self.procs;
        let run = procs.shared.run(case, trace, &ro, &mut procs.spares)?;
        let before = self.blames.len();
        let verdict = self.verdict_of(case, &run.trace, &run.report, &run.tag);
        let clean = verdict.is_none() && self.blames.len() == before && run.own_lines;
        self.blames.truncate(before);
        self.procs.shared.after(&run, clean);
        Some(if clean {
            Ok(run.ran())
        } else {
            Err(run.process)
        })
    }

    /// The verdict of case `case` from its run `r` (`None`: it passed), with what the run
    /// showed about other rules added to the blames.
    fn verdict_of(
        &mut self,
        case: &CheckCase,
        trace: &crate::trace::Trace,
        r: &CaseReport,
        tag: &str,
    ) -> Option<Verdict> {
        // A half-run case proves nothing, for this rule or any other.
        if !matches!(r.outcome, Outcome::Halted(_)) {
            stream_blames(r, self.id, self.opts, &mut self.blames);
        }
        if let Some(mut reason) = self.unexercised(case, r, tag) {
            // Say what ended the wait early, when it did (the same reason, or another).
            match &r.gave_up {
                Some(why) if *why == reason => {
                    reason.push_str(" (seen as it happened: the case stopped waiting there)")
                }
                Some(why) => reason.push_str(&format!("; the case stopped waiting when {why}")),
                None => {}
            }
            return Some(Verdict::NotTestable { reason });
        }
        match &r.outcome {
            Outcome::Halted(h) => return Some(Verdict::NotRun(*h)),
            Outcome::Pass => {}
            Outcome::Broken(m) => return Some(broken(case, trace, r, m)),
            Outcome::Fail(f) => return Some(self.failed(case, r, f, tag)),
        }
        if r.transcript.truncated {
            return None;
        }
        self.oracles(case, r)
    }

    /// Why a case that needs the model, run to its end, did not exercise the rule
    /// ([`exercised::unexercised`], from its transcript and the stub's requests meanwhile).
    fn unexercised(&self, case: &CheckCase, r: &CaseReport, tag: &str) -> Option<String> {
        if !case.needs_model || !matches!(r.outcome, Outcome::Pass | Outcome::Fail(_)) {
            return None;
        }
        let stub = (self.opts.model_stub.as_ref()).map_or_else(Vec::new, |l| l.tagged(tag));
        exercised::unexercised(self.id, &r.transcript, &stub)
    }

    /// Runs `trace` in fresh case directories (on a spare process when one fits), or in those of
    /// the case it continues; gives the report and the stub key's tag of the case's runtime (its
    /// requests, and no other case's); `Err`: the verdict when it cannot run.
    fn replay(
        &mut self,
        trace: &crate::trace::Trace,
        needs_model: bool,
    ) -> Result<(CaseReport, String), Verdict> {
        // Exact repeats of a frame (a doubled response, a replayed event) are skipped by every
        // trace (the runner's default): they are response.exactly-once's and turn.no-replay's,
        // stream rules the conversation judges (`stream::judge`), never a trace's line order.
        let mut ro = runner_opts(self.opts);
        ro.give_up = exercised::give_up(self.id, needs_model);
        if Spares::fits(trace) {
            if let Some(s) = self.procs.spares.take() {
                let r = runner::replay_child(trace, self.cmd, &ro, &s.dirs, &Seqs::new(), s.child);
                self.kept
                    .insert(trace.meta.case.clone(), (s.dirs, r.seqs.clone()));
                return Ok((r, s.tag));
            }
        }
        let tag = StubLog::new_tag("case-");
        if self.opts.model_stub.is_some() {
            StubLog::tag_env(&mut ro.env, &tag);
        }
        if let Some(prev) = &trace.meta.continues {
            return match self.kept.get(prev) {
                Some((d, seqs)) => Ok((runner::replay_in(trace, self.cmd, &ro, d, seqs), tag)),
                None => {
                    let reason = format!("it continues case `{prev}`, which did not run");
                    Err(Verdict::NotTestable { reason })
                }
            };
        }
        let d = CaseDirs::new(false).map_err(|e| {
            let reason = format!("cannot create the case directories: {e}");
            Verdict::NotTestable { reason }
        })?;
        let r = runner::replay_in(trace, self.cmd, &ro, &d, &Seqs::new());
        self.kept
            .insert(trace.meta.case.clone(), (d, r.seqs.clone()));
        Ok((r, tag))
    }

    /// The verdict of a case that failed `f`: untestable when its setup failed, blocked by
    /// `response.exactly-once` when a request was never answered, else the check's failure.
    fn failed(
        &mut self,
        case: &CheckCase,
        r: &CaseReport,
        f: &crate::trace::matcher::Failure,
        tag: &str,
    ) -> Verdict {
        let mut failure = from_case(r, f);
        if let Some(log) = &self.opts.model_stub {
            failure.model_log = log.tagged(tag).into_iter().map(|r| r.summary).collect();
        }
        let in_setup = matches!((case.setup_until, f.trace_line), (Some(s), Some(l)) if l < s);
        if in_setup {
            let reason = format!(
                "its setup failed before the rule could be exercised: {}",
                failure.reason
            );
            return Verdict::NotTestable { reason };
        }
        // A request the runtime, still serving, never answered is
        // response.exactly-once's (MUST), whatever this check wanted of the answer.
        if let Some(mut blame) = never_answered(self.id, r, f) {
            blame.failure.model_log = failure.model_log;
            self.blames.push(blame);
            let by = vec![CheckId::ResponseExactlyOnce];
            return Verdict::Blocked { by };
        }
        Verdict::Fail(Box::new(failure))
    }

    /// The case's oracles over its whole transcript: a broken one of this check's rule is its
    /// verdict; another rule's is blamed on its check.
    fn oracles(&mut self, case: &CheckCase, r: &CaseReport) -> Option<Verdict> {
        for o in &case.oracles {
            if let Err(e) = o.judge(&r.transcript.sent, &r.transcript.stdout) {
                let mut failure = Failure::new(FailureKind::Rule, e);
                failure.case = Some(r.file.clone());
                failure.stderr_tail = r.stderr_tail.clone();
                failure.wire_log = Some(wire_log(r));
                let owner = o.rule();
                if owner == self.id {
                    return Some(Verdict::Fail(Box::new(failure)));
                }
                self.blames.push(Blame {
                    check: owner,
                    failure,
                });
            }
        }
        None
    }
}

/// The verdict of a case the runner could not complete (`m`): the check's failure when the
/// runtime died on the check's input, else untestable.
fn broken(case: &CheckCase, trace: &crate::trace::Trace, r: &CaseReport, m: &str) -> Verdict {
    if let Some(f) = died_on_input(case, trace, r) {
        return Verdict::Fail(Box::new(f));
    }
    let mut reason = m.to_owned();
    if !r.stderr_tail.trim().is_empty() {
        reason.push_str("; stderr tail: ");
        reason.push_str(r.stderr_tail.trim().lines().last().unwrap_or(""));
    }
    Verdict::NotTestable { reason }
}

/// The blame on `response.exactly-once` when check `id` failed waiting for the answer to a
/// request that the runtime, still serving (its stdout open), never answered at all: the
/// answer's content, this check's rule, cannot be judged. Only for the id rules: for every other
/// check the missing answer is its own finding.
fn never_answered(
    id: CheckId,
    r: &CaseReport,
    f: &crate::trace::matcher::Failure,
) -> Option<Blame> {
    use crate::trace::matcher::FailureKind as K;
    // The id rules judge how an answer echoes its request's id; a request with no answer at
    // all is not theirs. Every other check that waits for an answer owns its absence (a line
    // the runtime must serve, a line it must survive, the answer itself).
    let id_rules = [CheckId::FrameIdNumberEcho, CheckId::ResponseIdTypePreserved];
    if !id_rules.contains(&id) || !matches!(f.kind, K::Missing | K::Timeout) {
        return None;
    }
    let expected = f.expected.as_deref()?;
    // An answer whose id changed type (`"7"` for 7) still answers: that is the id rule's.
    let mut answered: std::collections::HashSet<String> = std::collections::HashSet::new();
    for o in &r.transcript.stdout {
        if let Frame::Response { id, .. } = o.frame() {
            answered.insert(id.clone());
            match json::parse(id).map(|p| p.value) {
                Ok(serde_json::Value::String(t)) => {
                    answered.insert(t);
                }
                Ok(v @ serde_json::Value::Number(_)) => {
                    answered.insert(json::to_string(&serde_json::Value::String(
                        json::to_string(&v),
                    )));
                }
                _ => {}
            }
        }
    }
    let (rid, method, _) = crate::rules::transcript::sent_session_requests(&r.transcript.sent)
        .into_iter()
        .find(|(rid, _, _)| {
            let key = rid.to_json();
            !answered.contains(&key) && expected.contains(&format!("\"id\":{key}"))
        })?;
    let mut failure = Failure::new(
        FailureKind::Rule,
        format!(
            "the {method} request with id {} was never answered, though the runtime kept serving",
            rid.to_json()
        ),
    );
    failure.case = Some(r.file.clone());
    failure.expected = Some(expected.to_owned());
    failure.stderr_tail = r.stderr_tail.clone();
    failure.wire_log = Some(wire_log(r));
    Some(Blame {
        check: CheckId::ResponseExactlyOnce,
        failure,
    })
}
