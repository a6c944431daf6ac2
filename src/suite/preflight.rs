//! The preflight: one start of the runtime before the suite, to stop a runtime that cannot be
//! checked (it does not start, dies, never answers `initialize`, or writes no JSON object) with one
//! cause instead of fifty failures.

use super::options::{runner_opts, Options, RunError};
use crate::runner::{self, CommandSpec, Halt, Outcome};
use crate::trace::Trace;
use crate::wire::json::JsonView;
use crate::wire::output::Frame;
use std::time::Duration;

// Tolerant of non-frame lines: a runtime that also logs to stdout must still reach the checks.
const PREFLIGHT: &str = r#"# case: preflight
== stdout any
>> {"jsonrpc":"2.0","id":"dsh-conformance-preflight","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
<< {"id":"dsh-conformance-preflight"}
"#;

/// How long the preflight reads lines that are not JSON objects before it gives up on a runtime
/// that writes no frames.
const NO_FRAMES_FOR: Duration = Duration::from_secs(5);

/// What the runtime's start cost in the preflight: the time to its answer, and the CPU time its
/// process used meanwhile (when the system tells it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boot {
    /// Wall time from the start to the answer.
    pub wall: Duration,
    /// CPU time used by then.
    pub cpu: Option<Duration>,
}

/// What the preflight learnt about the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preflight {
    /// It answered initialize.
    Answered,
    /// It wrote lines, none of them a JSON object: nothing else can be judged. Holds the first.
    NoFrames {
        /// The first stdout line, clipped.
        first_line: String,
        /// Lines written.
        lines: usize,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
    /// It cannot be checked: it did not start, ended, or never answered `initialize`.
    Unusable {
        /// What happened, in one sentence.
        cause: String,
        /// The last lines of its stderr (its own words on why).
        stderr_tail: String,
    },
    /// The run was stopped while the preflight ran.
    Halted(Halt),
}

/// Starts the runtime once and waits for an answer to `initialize`: a runtime that cannot start,
/// never answers, or writes no frame is reported once, not fifty times. Also gives what the start
/// cost (to the answer, or to the end of the attempt).
pub fn preflight(cmd: &CommandSpec, opts: &Options) -> Result<(Preflight, Boot), RunError> {
    let trace = Trace::parse(PREFLIGHT, "preflight").map_err(RunError::Preflight)?;
    let mut ro = runner_opts(opts);
    // One start, with the whole start budget: a slow boot is waited for once (its time is the
    // boot the suite plans with), while a runtime that keeps writing lines none of which is a
    // JSON object is given up on after a few seconds of them.
    ro.frame_timeout = opts.start_timeout;
    ro.give_up = Some(no_frames_after(NO_FRAMES_FOR));
    let r = runner::replay(&trace, cmd, &ro);
    let stdout = &r.transcript.stdout;
    let any_object = stdout.iter().any(|l| {
        l.json()
            .is_some_and(|v| v.kind() == crate::wire::json::JsonKind::Object)
    });
    let stderr_tail = r.stderr_tail.trim_end().to_owned();
    // The expectation matches any object with the id: a program that echoes its input (`cat`)
    // meets it with the request itself, and would then fail every check on its deadline.
    let answered = stdout.iter().any(|l| {
        matches!(l.frame(), Frame::Response { id, .. } if id == "\"dsh-conformance-preflight\"")
    });
    let any_frame = stdout
        .iter()
        .any(|l| !matches!(l.frame(), Frame::NotAFrame(_)));
    let verdict = match &r.outcome {
        Outcome::Pass if !answered => Preflight::Unusable {
            cause: format!(
                "`{cmd}` wrote the initialize request back instead of answering it (a program \
                 that echoes its input, not a runtime)"
            ),
            stderr_tail,
        },
        Outcome::Pass => Preflight::Answered,
        Outcome::Halted(h) => Preflight::Halted(*h),
        // The runtime's own words explain a runtime that cannot start or dies at once.
        Outcome::Broken(m) => Preflight::Unusable {
            cause: m.clone(),
            stderr_tail,
        },
        Outcome::Fail(_) if !stdout.is_empty() && !any_object => Preflight::NoFrames {
            first_line: crate::trace::explain::clip(stdout[0].text(), 200),
            lines: stdout.len(),
            stderr_tail,
        },
        // It wrote frames, just not the answer: the checks will say what is wrong.
        Outcome::Fail(_) if any_frame => Preflight::Answered,
        Outcome::Fail(_) if !stdout.is_empty() => Preflight::Unusable {
            cause: format!(
                "`{cmd}` wrote JSON objects but no response and no notification (the first: {}); \
                 a program that echoes its input writes the requests back",
                crate::trace::explain::clip(stdout[0].text(), 200)
            ),
            stderr_tail,
        },
        Outcome::Fail(f) => Preflight::Unusable {
            cause: format!("`{cmd}` did not answer initialize: {}", f.reason),
            stderr_tail,
        },
    };
    // The boot ends with the answer (what the runtime did after it, before it was killed, is no
    // part of its start); without one, with the attempt.
    let answer = stdout.iter().position(|l| {
        matches!(l.frame(), Frame::Response { id, .. } if id == "\"dsh-conformance-preflight\"")
    });
    let at = |i: usize| {
        (r.transcript.stamps.iter())
            .find(|s| s.what == crate::runner::Wire::Received(i))
            .map(|s| s.at)
    };
    let boot = Boot {
        wall: answer.and_then(at).unwrap_or(r.wall),
        cpu: r.cpu,
    };
    Ok((verdict, boot))
}

/// Gives up at a line read `after` the start when no line so far was a JSON object.
fn no_frames_after(after: Duration) -> runner::GiveUp {
    use std::sync::atomic::{AtomicBool, Ordering};
    let start = std::time::Instant::now();
    let object = AtomicBool::new(false);
    runner::GiveUp(std::sync::Arc::new(
        move |o: &crate::wire::output::Output| {
            if o.json()
                .is_some_and(|v| v.kind() == crate::wire::json::JsonKind::Object)
            {
                object.store(true, Ordering::Relaxed);
            }
            let none = !object.load(Ordering::Relaxed) && start.elapsed() >= after;
            none.then(|| {
                format!(
                    "none of the lines it wrote in {} s is a JSON object",
                    after.as_secs()
                )
            })
        },
    ))
}
