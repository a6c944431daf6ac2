//! Runtimes that hang, crash, close stdout, flood, write a 100 MB line or garbage bytes: each is a
//! failed case with a precise reason, in bounded time and memory; the kit itself carries on.

use super::{mock, quick, run_text};
use dsh_conformance::runner::{CaseReport, CommandSpec, Options, Outcome};
use dsh_conformance::trace::{ExitInfo, Failure, FailureKind};
use dsh_conformance::wire::output::{Frame, NotAFrame};
use std::time::Duration;

const PROBE: &str = ">> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"probe/x\"}\n<< {\"id\":1}\n";

/// The line of [`PROBE`]'s expectation.
const PROBE_EXPECTATION: usize = 2;

/// The failure of a case that must fail.
fn failure(r: &CaseReport) -> &Failure {
    r.failure().unwrap_or_else(|| panic!("a failure: {r}"))
}

/// How the runtime's first stdout line was not a frame, with the failure pointing at it.
fn first_line_not_a_frame(r: &CaseReport) -> &NotAFrame {
    let f = failure(r);
    assert_eq!(
        (f.kind, f.stdout_line),
        (FailureKind::NotAFrame, Some(1)),
        "{r}"
    );
    match r.transcript.stdout.first().map(|o| o.frame()) {
        Some(Frame::NotAFrame(why)) => why,
        o => panic!("{o:?}: {r}"),
    }
}

#[test]
fn a_command_that_does_not_exist_is_a_harness_error() {
    let r = run_text(
        PROBE,
        &CommandSpec::new("/nonexistent/dsh-runtime"),
        &quick(),
    );
    match &r.outcome {
        Outcome::Broken(m) => assert!(m.contains("cannot start `/nonexistent/dsh-runtime`"), "{m}"),
        o => panic!("{o:?}"),
    }
}

#[test]
fn a_runtime_that_dies_before_answering_is_a_harness_error_with_its_stderr() {
    let r = run_text(PROBE, &mock("crash"), &quick());
    match &r.outcome {
        Outcome::Broken(_) => {}
        o => panic!("{o:?}"),
    }
    assert_eq!((r.exit, r.stats.lines), (ExitInfo::Code(3), 0), "{r}");
    assert!(
        r.stderr_tail.contains("mock: fatal error before answering"),
        "{}",
        r.stderr_tail
    );
}

#[test]
fn a_hanging_runtime_times_out_naming_the_expectation() {
    let opts = Options {
        frame_timeout: Duration::from_millis(500),
        ..quick()
    };
    let r = run_text(PROBE, &mock("hang"), &opts);
    let f = failure(&r);
    assert_eq!(
        (f.kind, f.trace_line),
        (FailureKind::Timeout, Some(PROBE_EXPECTATION)),
        "{r}"
    );
}

#[test]
fn a_runtime_that_closes_stdout_early_fails_fast() {
    let r = run_text(PROBE, &mock("close-stdout"), &quick());
    // Nothing on stdout: the case is broken, not failed, and the words say why.
    match &r.outcome {
        Outcome::Broken(m) => assert!(m.contains("closed stdout"), "{m}"),
        o => panic!("{o:?}"),
    }
    assert_eq!(r.stats.lines, 0, "{r}");
}

#[test]
fn a_flood_of_unexpected_frames_fails_at_the_first_one() {
    let r = run_text(PROBE, &mock("flood"), &quick());
    let f = failure(&r);
    assert_eq!(
        (f.kind, f.stdout_line),
        (FailureKind::Unexpected, Some(1)),
        "{r}"
    );
    assert!(
        matches!(r.transcript.stdout[0].frame(), Frame::Notification { method, .. } if method == "noise"),
        "{r}"
    );
}

#[test]
fn a_flood_of_ignored_frames_is_stopped_as_a_flood_before_the_deadline() {
    let text = format!("ignore {{\"method\": \"noise\"}}\n{PROBE}");
    let opts = Options {
        frame_timeout: Duration::from_secs(60),
        ..quick()
    };
    let started = std::time::Instant::now();
    let r = run_text(&text, &mock("flood"), &opts);
    assert_eq!(
        r.failure().map(|f| f.kind),
        Some(dsh_conformance::trace::matcher::FailureKind::Flooded),
        "{r}"
    );
    assert!(r.stats.ignored > 0, "{:?}", r.stats);
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "stopped at the bound, not at the deadline"
    );
}

#[test]
fn a_100_mb_line_is_reported_as_over_the_line_bound() {
    let opts = Options {
        max_line: 16 * 1024 * 1024,
        ..quick()
    };
    let r = run_text(PROBE, &mock("hugeline"), &opts);
    assert_eq!(
        first_line_not_a_frame(&r),
        &NotAFrame::TooLong(104857610),
        "{r}"
    );
}

#[test]
fn invalid_utf8_on_stdout_is_reported_with_its_offset() {
    let r = run_text(PROBE, &mock("badbytes"), &quick());
    assert_eq!(
        first_line_not_a_frame(&r),
        &NotAFrame::NotUtf8 { at: 45, len: 50 },
        "{r}"
    );
}

#[test]
fn a_shell_runtime_writing_a_scalar_fails_the_frames_only_rule() {
    let sh = CommandSpec::new("sh").arg("-c").arg("echo 42; sleep 5");
    let r = run_text(PROBE, &sh, &quick());
    assert_eq!(
        first_line_not_a_frame(&r),
        &NotAFrame::NotAnObject("a JSON number"),
        "{r}"
    );
}

#[test]
fn a_relative_command_path_is_resolved_from_the_callers_directory() {
    // `tests/trace/mock_runtime.py` is relative to the crate root, where cargo runs tests; the
    // case runs in a fresh cwd, so the path must be resolved before the child changes directory.
    let cmd = CommandSpec::new("tests/trace/mock_runtime.py").arg("ok");
    let r = run_text(PROBE, &cmd, &quick());
    assert!(r.passed(), "{r}");
}
