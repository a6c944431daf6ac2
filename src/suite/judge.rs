//! Judging one check: run its traces, turn the first failure into a structured [`Failure`], and
//! hand every transcript to the rule engine so stream rules are blamed on their own checks.

use super::cases::CheckCase;
use super::run::Options;
use super::stream;
use super::verdict::{Failure, FailureKind, Verdict};
use crate::check::CheckId;
use crate::runner::{self, CaseDirs, CaseReport, CommandSpec, Outcome};
use crate::wire::json::{self, JsonView};
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
        reason: f.reason.lines().next().unwrap_or("").to_owned(),
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

/// The model probe: one prompt `reply: dsh-model-probe-ok`, awaiting the session's first
/// assistant/message.
pub const MODEL_PROBE: &str = r#"# case: model-probe
ignore {"method":"session.event"}
ignore {"method":"session.status"}
ignore {"method":"session.finished"}
ignore {"id":"{{string}}"}
>> {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
>> {"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"model-probe","contentBlocks":[{"type":"text","text":"reply: dsh-model-probe-ok"}]}}
<< {"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"model-probe","event":{"type":"assistant/message"}}} within 30s
"#;

/// Runs [`MODEL_PROBE`]. The model ignores the directives when an assistant/message arrived
/// without the text asked for; when none arrived at all, the capability is not in doubt, the
/// event stream is, and the checks themselves say so.
pub fn probe_model(cmd: &CommandSpec, opts: &Options) -> ModelCapability {
    let trace = match crate::trace::Trace::parse(MODEL_PROBE, "model-probe") {
        Ok(mut t) => {
            t.frames_only = false;
            t
        }
        Err(e) => return ModelCapability::Ignores(format!("the model probe is invalid: {e}")),
    };
    let r = runner::replay(&trace, cmd, &runner_opts(opts));
    if !r.passed() {
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
        None => ModelCapability::Follows,
    }
}

/// The method-surface probe: does the runtime know the 0.2.x-only methods?
const SURFACE_PROBE: &str = r#"# case: surface-probe
ignore {"method":"{{string}}"}
>> {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
<< {"jsonrpc":"2.0","id":"init"} within 30s
>> {"jsonrpc":"2.0","id":"wait","method":"session/wait","params":{"sessionId":"dsh-surface-probe"}}
>> {"jsonrpc":"2.0","id":"wd","method":"working-directory/get","params":{"sessionId":"dsh-surface-probe"}}
<<unordered
<< {"jsonrpc":"2.0","id":"wait"}
<< {"jsonrpc":"2.0","id":"wd"}
<<end
"#;

/// The edition the runtime's method surface looks like, when it differs from `opts.edition`:
/// a runtime that answers `session/wait` and `working-directory/get` as unknown methods has the
/// 2026-08 surface; one that knows them has the current one. `None` when undecided.
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
    let unknown = |id: &str| {
        r.transcript.stdout.iter().any(|l| {
            matches!(l.frame(), Frame::Response { id: got, ok: false } if *got == json::to_string(&id.into()))
                && l.json()
                    .and_then(|v| v.get("error"))
                    .and_then(|e| e.get("message"))
                    .and_then(JsonView::as_str)
                    .is_some_and(|m| m.starts_with(crate::rules::UNKNOWN_METHOD))
        })
    };
    let looks = if unknown("wait") && unknown("wd") {
        Edition::Aug2026
    } else if !unknown("wait") && !unknown("wd") {
        Edition::Current
    } else {
        return None;
    };
    (looks != opts.edition).then_some(looks)
}
