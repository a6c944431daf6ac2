//! The black-box fuzzer against real processes: the reference runtime binary must survive a few
//! seeded runs without a finding, and a runtime that prints garbage must be caught.

use dsh_conformance::fuzzing::blackbox::{fuzz, run_once, Options};
use dsh_conformance::fuzzing::ops::Op;
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::runtime::Edition;
use std::time::Duration;

fn quick(edition: Edition, runs: usize) -> Options {
    Options {
        duration: Duration::from_secs(120),
        max_runs: Some(runs),
        max_ops: 16,
        edition,
        response_timeout: Duration::from_secs(20),
        exit_timeout: Duration::from_secs(20),
        shrink_runs: 10,
        ..Options::default()
    }
}

#[test]
fn the_reference_runtime_survives_seeded_black_box_runs_in_every_edition() {
    for edition in Edition::ALL {
        let cmd = CommandSpec::new(env!("CARGO_BIN_EXE_dsh-reference-runtime"))
            .arg("--edition")
            .arg(edition.to_string());
        let report = fuzz(&cmd, &quick(edition, 4));
        assert_eq!(report.runs, 4);
        assert!(report.lines > 0, "{edition}: no output was checked");
        assert!(
            report.findings.is_empty(),
            "{edition}: {:#?}",
            report.findings
        );
    }
}

#[test]
fn a_runtime_that_prints_non_frames_is_a_finding() {
    let cmd = CommandSpec::new("sh")
        .arg("-c")
        .arg("while read -r l; do echo 'not json'; done");
    let err = run_once(
        &cmd,
        &[Op::Shutdown {
            id: dsh_conformance::fuzzing::ops::IdGen::Num(1),
        }],
        &quick(Edition::Current, 1),
    )
    .expect_err("garbage on stdout must be reported");
    assert!(err.0.contains("output is not JSON"), "{}", err.0);
}

#[test]
fn a_runtime_that_never_exits_after_eof_is_a_finding() {
    // Answers nothing and ignores EOF: the request goes unanswered, then the exit never comes.
    let cmd = CommandSpec::new("sh").arg("-c").arg("exec sleep 600");
    let opts = Options {
        response_timeout: Duration::from_millis(300),
        exit_timeout: Duration::from_millis(300),
        ..quick(Edition::Current, 1)
    };
    let err = run_once(&cmd, &[Op::Eof], &opts).expect_err("a hang must be reported");
    assert!(err.0.contains("did not exit"), "{}", err.0);
}
