//! Judging one check: run its traces, turn the first failure into a structured [`Failure`], and
//! hand every transcript to the rule engine so stream rules are blamed on their own checks.

use super::cases::CheckCase;
use super::run::Options;
use super::stream;
use super::verdict::{Failure, FailureKind, Verdict};
use crate::check::CheckId;
use crate::runner::{self, CaseDirs, CaseReport, CommandSpec, Outcome};
use crate::wire::json::{self, JsonView};
use crate::wire::output::{Frame, Output};
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

/// Whether the runtime's model follows the stub's directives (`reply: X` answers X).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelCapability {
    /// It does.
    Follows,
    /// It does not, or could not be told: why.
    Ignores(String),
}

/// The runner settings of the suite: tolerant matching, the suite's deadlines and environment.
pub fn runner_opts(opts: &Options) -> runner::Options {
    runner::Options {
        frame_timeout: opts.frame_timeout,
        case_timeout: Duration::from_secs(300),
        env: opts.env.clone(),
        tolerant: true,
        stdout: opts.stdout.clone(),
        cancel: opts.cancel.clone(),
        ..runner::Options::default()
    }
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
        details.push_str("last frames received:");
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
    }
}

/// The failure's first line; for an expectation that never arrived, with the frame closest to it
/// (how it differs, or the frame itself), so a frame of the wrong shape shows without `-v`.
fn one_line_reason(f: &crate::trace::matcher::Failure) -> String {
    let reason = f.reason.lines().next().unwrap_or("");
    if f.kind != FailureKind::Timeout || !reason.contains("never arrived") {
        return reason.to_owned();
    }
    let clip = |s: &str| crate::trace::explain::clip(s, 160);
    match (&f.diff, &f.closest) {
        // Another response or notification altogether says nothing about the frame's shape.
        (Some(d), _) if d.starts_with("/id:") || d.starts_with("/method:") => reason.to_owned(),
        (Some(d), _) => format!("{reason}; the closest frame differs at {}", clip(d)),
        (None, Some(c)) => format!("{reason}; the closest frame: {}", clip(c)),
        (None, None) => reason.to_owned(),
    }
}

fn stream_blames(r: &CaseReport, own: CheckId, opts: &Options, out: &mut Vec<Blame>) {
    if r.transcript.truncated {
        return;
    }
    for f in stream::judge(&r.transcript, Some(own), opts.edition, opts.strict_upstream) {
        let mut failure = Failure::new(FailureKind::Rule, f.message);
        failure.case = Some(r.file.clone());
        failure.closest = f.line;
        failure.stdout_line = f.stdout_line;
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
    if !r.stderr_tail.trim().is_empty() {
        f.details = format!(
            "stderr tail: {}",
            r.stderr_tail.trim().lines().last().unwrap_or("")
        );
    }
    Some(f)
}

/// Runs one check's cases; returns its own verdict (before baselines and stream findings) and
/// what its transcripts showed about other rules.
pub fn judge(
    id: crate::check::CheckId,
    cases: &[&CheckCase],
    cmd: &CommandSpec,
    opts: &Options,
    model: &dyn Fn() -> ModelCapability,
) -> (Verdict, Vec<Blame>) {
    let mut blames = Vec::new();
    if cases.iter().any(|c| c.needs_model) {
        if let ModelCapability::Ignores(why) = model() {
            return (Verdict::NotTestable { reason: why }, blames);
        }
    }
    let mut kept: HashMap<String, CaseDirs> = HashMap::new();
    for case in cases {
        let trace = match case.trace(opts.strict_upstream) {
            Ok(mut t) => {
                t.frames_only = false;
                scale_deadlines(&mut t, opts.frame_timeout);
                t
            }
            Err(e) => {
                let f = Failure::new(
                    FailureKind::Harness,
                    format!("the check's trace is invalid: {e}"),
                );
                return (Verdict::Fail(Box::new(f)), blames);
            }
        };
        // Exact repeats of a frame are skipped by every trace but the one whose rule they break:
        // a doubled response is response.exactly-once's, a replayed event turn.no-replay's.
        let mut ro = runner_opts(opts);
        ro.skip_repeats = (
            id != CheckId::ResponseExactlyOnce,
            id != CheckId::TurnNoReplay,
        );
        let stub_before = opts.model_stub.as_ref().map_or(0, |l| l.lines().len());
        let r = match &trace.meta.continues {
            Some(prev) => match kept.get(prev) {
                Some(d) => runner::replay_in(&trace, cmd, &ro, d),
                None => {
                    let reason = format!("it continues case `{prev}`, which did not run");
                    return (Verdict::NotTestable { reason }, blames);
                }
            },
            None => {
                let d = match CaseDirs::new(false) {
                    Ok(d) => d,
                    Err(e) => {
                        let reason = format!("cannot create the case directories: {e}");
                        return (Verdict::NotTestable { reason }, blames);
                    }
                };
                let r = runner::replay_in(&trace, cmd, &ro, &d);
                kept.insert(trace.meta.case.clone(), d);
                r
            }
        };
        // A half-run case proves nothing, for this rule or any other.
        if !matches!(r.outcome, Outcome::Halted(_)) {
            stream_blames(&r, id, opts, &mut blames);
        }
        match &r.outcome {
            Outcome::Halted(h) => return (Verdict::NotRun(*h), blames),
            Outcome::Pass => {}
            Outcome::Broken(m) => {
                if let Some(f) = died_on_input(case, &trace, &r) {
                    return (Verdict::Fail(Box::new(f)), blames);
                }
                let mut reason = m.clone();
                if !r.stderr_tail.trim().is_empty() {
                    reason.push_str("; stderr tail: ");
                    reason.push_str(r.stderr_tail.trim().lines().last().unwrap_or(""));
                }
                return (Verdict::NotTestable { reason }, blames);
            }
            Outcome::Fail(f) => {
                let mut failure = from_case(&r, f);
                if let Some(log) = &opts.model_stub {
                    failure.model_log = log.lines().split_off(stub_before.min(log.lines().len()));
                }
                let in_setup =
                    matches!((case.setup_until, f.trace_line), (Some(s), Some(l)) if l < s);
                if in_setup {
                    let reason = format!(
                        "its setup failed before the rule could be exercised: {}",
                        failure.reason
                    );
                    return (Verdict::NotTestable { reason }, blames);
                }
                // A request the runtime, still serving, never answered is
                // response.exactly-once's (MUST), whatever this check wanted of the answer.
                if let Some(mut blame) = never_answered(id, &r, f) {
                    blame.failure.model_log = failure.model_log;
                    blames.push(blame);
                    let by = vec![CheckId::ResponseExactlyOnce];
                    return (Verdict::Blocked { by }, blames);
                }
                return (Verdict::Fail(Box::new(failure)), blames);
            }
        }
        if r.transcript.truncated {
            continue;
        }
        for o in &case.oracles {
            if let Err(e) = o.judge(&r.transcript.sent, &r.transcript.stdout) {
                let mut failure = Failure::new(FailureKind::Rule, e);
                failure.case = Some(r.file.clone());
                failure.stderr_tail = r.stderr_tail.clone();
                let owner = o.rule();
                if owner == id {
                    return (Verdict::Fail(Box::new(failure)), blames);
                }
                blames.push(Blame {
                    check: owner,
                    failure,
                });
            }
        }
    }
    (Verdict::Pass, blames)
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
    Some(Blame {
        check: CheckId::ResponseExactlyOnce,
        failure,
    })
}

/// The model probe: one prompt `reply: dsh-model-probe-ok`, awaiting the session's first
/// assistant/message.
pub const MODEL_PROBE: &str = r#"# case: model-probe
ignore {"method":"session.event"}
ignore {"method":"session.status"}
ignore {"method":"session.finished"}
ignore {"id":"{{string}}"}
>> {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
>> {"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"model-probe","contentBlocks":[{"type":"text","text":"reply: dsh-model-probe-ok"}]}}
<<? {"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"model-probe","event":{"type":"assistant/message"}}}
<< {"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"model-probe","event":{"type":"turn/end"}}} within 30s
"#;

/// Runs [`MODEL_PROBE`]. The model ignores the directives when an assistant/message arrived
/// without the text asked for. When none arrived, and the runtime talks to the model stub
/// ([`Options::model_stub`]), the stub's log says whether the runtime's model can be reached at
/// all: no request at all, or every request refused for its path or method (an API the stub
/// does not speak), and it cannot ([`stub_unreachable`]). Otherwise the capability is not in
/// doubt, the event stream is, and the checks themselves say so.
pub fn probe_model(cmd: &CommandSpec, opts: &Options) -> ModelCapability {
    let trace = match crate::trace::Trace::parse(MODEL_PROBE, "model-probe") {
        Ok(mut t) => {
            t.frames_only = false;
            t
        }
        Err(e) => return ModelCapability::Ignores(format!("the model probe is invalid: {e}")),
    };
    let r = runner::replay(&trace, cmd, &runner_opts(opts));
    if matches!(r.outcome, Outcome::Halted(_)) {
        return ModelCapability::Follows;
    }
    // The texts of the session's first assistant/message (data.message.content[] text blocks).
    let texts = r.transcript.stdout.iter().find_map(|l| {
        let v = l.json()?.to_value();
        let ev = v.pointer("/params/event")?;
        if v.pointer("/params/sessionId")?.as_str()? != "model-probe"
            || ev.get("type")?.as_str()? != "assistant/message"
        {
            return None;
        }
        let blocks = ev.pointer("/data/message/content")?.as_array()?;
        Some(
            blocks
                .iter()
                .filter_map(|b| b.get("text")?.as_str().map(str::to_owned))
                .collect::<Vec<_>>()
                .join(""),
        )
    });
    match texts {
        Some(t) if t == "dsh-model-probe-ok" => ModelCapability::Follows,
        Some(t) => ModelCapability::Ignores(format!(
            "its model does not follow the stub's directives: `reply: dsh-model-probe-ok` was answered {:?}; use --model-stub for a runtime that calls a model",
            crate::trace::explain::clip(&t, 120)
        )),
        None => match opts.model_stub.as_ref().and_then(|l| stub_unreachable(&l.requests())) {
            Some(why) => ModelCapability::Ignores(why),
            None => ModelCapability::Follows,
        },
    }
}

/// Why the model stub cannot drive the runtime's model, from its request log: no request
/// reached it, or it refused every one for its path or method (404, 405: the runtime speaks
/// another API). `None` when some request was served (or refused for another reason).
pub fn stub_unreachable(log: &[super::run::StubRequest]) -> Option<String> {
    const SPEAKS: &str = "it speaks Anthropic Messages (POST /v1/messages)";
    if log.is_empty() {
        return Some(format!(
            "no request reached the model stub while a prompt ran: the runtime's model is not the stub (it reads DEEPSEEK_BASE_URL and DEEPSEEK_API_KEY; {SPEAKS})"
        ));
    }
    if !log.iter().all(|r| matches!(r.status, Some(404 | 405))) {
        return None;
    }
    let mut statuses: Vec<u16> = log.iter().filter_map(|r| r.status).collect();
    statuses.sort_unstable();
    statuses.dedup();
    let mut targets: Vec<String> = Vec::new();
    for r in log {
        let t = format!("{} {}", r.method, r.path);
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    let statuses: Vec<String> = statuses.iter().map(u16::to_string).collect();
    Some(format!(
        "the model stub received {} request(s), all answered {}: {}; {SPEAKS}",
        log.len(),
        statuses.join("/"),
        targets.join(", ")
    ))
}

/// The method-surface probe: does the runtime know the 0.2.x-only methods? On a runtime that
/// has them, `session/working-directory/get` opens the session and answers `{cwd}`, and
/// `session/wait` on that idle session answers `{}`: both results. `dsh/surface-probe` is a method
/// no edition has: its error is what this runtime answers an unknown method.
const SURFACE_PROBE: &str = r#"# case: surface-probe
ignore {"method":"{{string}}"}
>> {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
<< {"jsonrpc":"2.0","id":"init"} within 30s
>> {"jsonrpc":"2.0","id":"unknown","method":"dsh/surface-probe","params":{"sessionId":"dsh-surface-probe"}}
>> {"jsonrpc":"2.0","id":"wd","method":"session/working-directory/get","params":{"sessionId":"dsh-surface-probe"}}
<<unordered
<< {"jsonrpc":"2.0","id":"unknown"}
<< {"jsonrpc":"2.0","id":"wd"}
<<end
>> {"jsonrpc":"2.0","id":"wait","method":"session/wait","params":{"sessionId":"dsh-surface-probe"}}
<< {"jsonrpc":"2.0","id":"wait"}
"#;

/// The answer a response gave: its result, or its error.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Result,
    Error(serde_json::Value),
}

/// The edition the runtime's method surface looks like, when it differs from `opts.edition`:
/// a runtime that answers `session/working-directory/get` and `session/wait` with errors has the
/// 2026-08 surface, whatever its unknown-method error looks like; one that answers both with
/// results has the current one. `None` when undecided.
pub fn probe_surface(cmd: &CommandSpec, opts: &Options) -> Option<crate::edition::Edition> {
    use crate::edition::Edition;
    if opts.edition == Edition::Legacy {
        return None;
    }
    let mut trace = crate::trace::Trace::parse(SURFACE_PROBE, "surface-probe").ok()?;
    trace.frames_only = false;
    let r = runner::replay(&trace, cmd, &runner_opts(opts));
    if !r.passed() {
        return None;
    }
    surface_of(&r.transcript.stdout).filter(|e| *e != opts.edition)
}

/// [`probe_surface`]'s decision from the probe's stdout.
fn surface_of(stdout: &[Output]) -> Option<crate::edition::Edition> {
    use crate::edition::Edition;
    let answer = |id: &str| {
        let echo = json::to_string(&serde_json::Value::from(id));
        stdout.iter().find_map(|l| {
            let Frame::Response { id: got, ok } = l.frame() else {
                return None;
            };
            if *got != echo {
                return None;
            }
            match ok {
                false => Some(Answer::Error(l.json()?.get("error")?.to_value())),
                true => Some(Answer::Result),
            }
        })
    };
    let (wd, wait) = (answer("wd")?, answer("wait")?);
    // `session/wait` on a session working-directory/get did not open fails on any edition (an
    // unknown session): then only an error like the unknown method's says it is missing.
    let wait_missing = match (&wd, &wait) {
        (_, Answer::Result) => false,
        (Answer::Result, Answer::Error(_)) => true,
        (Answer::Error(_), Answer::Error(e)) => {
            let unknown = match answer("unknown") {
                Some(Answer::Error(u)) => u,
                _ => return None,
            };
            let norm = |e: &serde_json::Value, method: &str| {
                let mut e = e.clone();
                if let Some(m) = e.get("message").and_then(serde_json::Value::as_str) {
                    e["message"] = m.replace(method, "<method>").into();
                }
                e
            };
            norm(e, "session/wait") == norm(&unknown, "dsh/surface-probe")
        }
    };
    match (&wd, wait_missing) {
        (Answer::Error(_), true) => Some(Edition::Aug2026),
        (Answer::Result, false) => Some(Edition::Current),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edition::Edition;

    #[test]
    fn a_frame_that_never_arrived_names_how_the_closest_one_differs() {
        let mut f = crate::trace::matcher::Failure::new(
            FailureKind::Timeout,
            "<< {turn/end} never arrived (waited 30.0s)\nmore",
        );
        assert_eq!(
            one_line_reason(&f),
            "<< {turn/end} never arrived (waited 30.0s)"
        );
        f.diff = Some(
            r#"/params/event/data/reason: expected {"kind":"{{string}}"}, got "completed""#.into(),
        );
        assert_eq!(
            one_line_reason(&f),
            r#"<< {turn/end} never arrived (waited 30.0s); the closest frame differs at /params/event/data/reason: expected {"kind":"{{string}}"}, got "completed""#
        );
        f.diff = Some(r#"/id: expected "big", got "init""#.into());
        assert_eq!(
            one_line_reason(&f),
            "<< {turn/end} never arrived (waited 30.0s)",
            "another response altogether is no hint"
        );
        f.kind = FailureKind::Mismatch;
        f.reason = "stdout line 3 differs".into();
        assert_eq!(one_line_reason(&f), "stdout line 3 differs");
    }

    fn lines(v: &[&str]) -> Vec<Output> {
        (v.iter().enumerate())
            .map(|(i, s)| Output::parse(i + 1, s.to_string()))
            .collect()
    }

    #[test]
    fn the_surface_is_judged_on_errors_whatever_their_message() {
        let aug = lines(&[
            r#"{"jsonrpc":"2.0","id":"init","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"unknown","error":{"code":-32601,"message":"Method not found"}}"#,
            r#"{"jsonrpc":"2.0","id":"wd","error":{"code":-32601,"message":"Method not found"}}"#,
            r#"{"jsonrpc":"2.0","id":"wait","error":{"code":-32601,"message":"Method not found"}}"#,
        ]);
        assert_eq!(surface_of(&aug), Some(Edition::Aug2026));
        let named = lines(&[
            r#"{"jsonrpc":"2.0","id":"unknown","error":{"code":-32000,"message":"no handler for dsh/surface-probe"}}"#,
            r#"{"jsonrpc":"2.0","id":"wd","error":{"code":-32000,"message":"no handler for session/working-directory/get"}}"#,
            r#"{"jsonrpc":"2.0","id":"wait","error":{"code":-32000,"message":"no handler for session/wait"}}"#,
        ]);
        assert_eq!(surface_of(&named), Some(Edition::Aug2026));
        let current = lines(&[
            r#"{"jsonrpc":"2.0","id":"unknown","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: dsh/surface-probe"}}"#,
            r#"{"jsonrpc":"2.0","id":"wd","result":{"cwd":"/"}}"#,
            r#"{"jsonrpc":"2.0","id":"wait","result":{}}"#,
        ]);
        assert_eq!(surface_of(&current), Some(Edition::Current));
        // Without working-directory, wait's unknown-session error is no sign wait is missing.
        let no_wd = lines(&[
            r#"{"jsonrpc":"2.0","id":"unknown","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: dsh/surface-probe"}}"#,
            r#"{"jsonrpc":"2.0","id":"wd","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: session/working-directory/get"}}"#,
            r#"{"jsonrpc":"2.0","id":"wait","error":{"code":-32603,"message":"unknown SDK session: dsh-surface-probe"}}"#,
        ]);
        assert_eq!(surface_of(&no_wd), None);
    }

    #[test]
    fn an_unreachable_model_is_told_by_the_stub_log() {
        use super::super::run::StubRequest;
        assert!(stub_unreachable(&[])
            .unwrap()
            .contains("no request reached the model stub"));
        let req = |path: &str, status| StubRequest {
            summary: String::new(),
            method: "POST".into(),
            path: path.into(),
            status: Some(status),
        };
        let why = stub_unreachable(&[
            req("/v1/chat/completions", 404),
            req("/v1/chat/completions", 404),
        ])
        .unwrap();
        assert!(
            why.contains("2 request(s), all answered 404: POST /v1/chat/completions"),
            "{why}"
        );
        assert_eq!(
            stub_unreachable(&[req("/v1/chat/completions", 404), req("/v1/messages", 200)]),
            None
        );
    }
}
