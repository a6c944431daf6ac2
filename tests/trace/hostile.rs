//! Runtimes that hang, crash, close stdout, flood, write a 100 MB line or garbage bytes: each is a
//! failed case with a precise reason, in bounded time and memory; the kit itself carries on.

use super::{mock, quick, run_text};
use dsh_conformance::runner::{CommandSpec, Options, Outcome};
use std::time::Duration;

const PROBE: &str = ">> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"probe/x\"}\n<< {\"id\":1}\n";

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
        Outcome::Broken(m) => {
            assert!(m.contains("without writing anything on stdout"), "{m}");
            assert!(m.contains("exit code 3"), "{m}");
        }
        o => panic!("{o:?}"),
    }
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
    let msg = r.message();
    assert!(
        msg.contains("<< {\"id\":1} (inline.trace:2) never arrived (waited 0.5s)"),
        "{msg}"
    );
    assert!(msg.contains("inline.trace:2"), "{msg}");
}

#[test]
fn a_runtime_that_closes_stdout_early_fails_fast() {
    let r = run_text(PROBE, &mock("close-stdout"), &quick());
    let msg = r.message();
    assert!(msg.contains("closed stdout"), "{msg}");
    assert!(msg.contains("inline.trace:2"), "{msg}");
}

#[test]
fn a_flood_of_unexpected_frames_fails_at_the_first_one() {
    let r = run_text(PROBE, &mock("flood"), &quick());
    let msg = r.message();
    assert!(msg.contains("unexpected frame (stdout line 1)"), "{msg}");
    assert!(msg.contains("\"method\": \"noise\""), "{msg}");
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
    assert!(r.message().contains("flooded stdout ("), "{r}");
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
    let msg = r.message();
    assert!(
        msg.contains("stdout line 1 is 104857610 bytes long, over the reader's line bound"),
        "{msg}"
    );
}

#[test]
fn invalid_utf8_on_stdout_is_reported_with_its_offset() {
    let r = run_text(PROBE, &mock("badbytes"), &quick());
    let msg = r.message();
    assert!(
        msg.contains("stdout line 1 is not valid UTF-8 (first invalid byte at offset 45 of 50)"),
        "{msg}"
    );
}

#[test]
fn a_shell_runtime_writing_a_scalar_fails_the_frames_only_rule() {
    let sh = CommandSpec::new("sh").arg("-c").arg("echo 42; sleep 5");
    let r = run_text(PROBE, &sh, &quick());
    assert!(
        r.message()
            .contains("stdout line 1 is a JSON number, not a frame object"),
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
