//! The conformance suite judged by its own standard: the reference runtime passes every check in
//! every edition, every mutant is caught by the check it names, and the CLI's outputs load in
//! standard tools.

mod capabilities;
mod chat_completions;
mod cli;
mod contract;
mod html;
mod os_args;
mod precision;
mod prerequisites;
mod prespawn;
mod readme;
mod real;
mod requirements;
mod subcommands;
mod verdicts;

use dsh_conformance::edition::Edition;
use dsh_conformance::runner::{CommandSpec, Halt};
use dsh_conformance::suite::run::{run, Options};
use dsh_conformance::suite::{Report, Verdict};

pub const RUNTIME: &str = env!("CARGO_BIN_EXE_dsh-reference-runtime");
pub const KIT: &str = env!("CARGO_BIN_EXE_dsh-conformance");

/// Every verdict that is not PASS or SKIP, rendered.
pub fn failures(r: &Report) -> String {
    r.results
        .iter()
        .filter(|c| !matches!(c.verdict, Verdict::Pass | Verdict::Skip { .. }))
        .map(|c| match &c.verdict {
            Verdict::Fail(f) => format!("{}: {f}", c.info.id),
            v => format!("{}: {} {}", c.info.id, v.word(), v.summary()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_reference_runtime_passes_every_check_in_every_edition_strict_or_not() {
    for edition in Edition::ALL {
        for strict_upstream in [false, true] {
            let cmd = CommandSpec::new(RUNTIME)
                .arg("--edition")
                .arg(edition.name());
            let opts = Options {
                edition,
                strict_upstream,
                jobs: 2,
                ..Options::default()
            };
            let report = run(&cmd, "reference", &opts).expect("preflight");
            let s = report.summary();
            let what = format!("edition {edition}, strict {strict_upstream}");
            assert_eq!(
                (s.failed, s.blocked, s.not_testable),
                (0, 0, 0),
                "{what}:\n{}",
                failures(&report)
            );
            assert!(s.passed >= 35, "{what}: only {} checks ran", s.passed);
            assert_eq!(report.exit_code(), 0);
            assert!(report.root_causes().is_empty());
        }
    }
}

/// The report of a runtime the preflight stopped: every applicable check `NOT RUN`, exit 2, and
/// the cause and stderr tail in `stopped`.
fn stopped_report(cmd: &CommandSpec, opts: &Options) -> (String, String) {
    let report = run(cmd, "unusable", opts).expect("a report, not a kit error");
    let st = report.stopped.clone().expect("stopped by the preflight");
    assert_eq!(st.halt, Halt::Unusable);
    assert_eq!(report.exit_code(), 2);
    let s = report.summary();
    assert_eq!((s.passed, s.failed, s.blocked), (0, 0, 0), "nothing judged");
    assert!(s.not_run > 50, "{s:?}");
    (st.cause, st.stderr_tail)
}

#[test]
fn a_runtime_that_cannot_start_is_stopped_by_the_preflight_not_a_wall_of_failures() {
    let (cause, _) = stopped_report(
        &CommandSpec::new("/nonexistent/dsh-runtime"),
        &Options::default(),
    );
    assert!(cause.contains("/nonexistent/dsh-runtime"), "{cause}");
    let cmd = CommandSpec::new("sh")
        .arg("-c")
        .arg("echo booting >&2; exit 3");
    let (cause, tail) = stopped_report(&cmd, &Options::default());
    assert!(
        cause.contains("exit code 3") && tail.contains("booting"),
        "the exit and the runtime's own words: {cause} / {tail}"
    );
}

#[test]
fn a_runtime_that_never_answers_fails_preflight_within_its_deadline() {
    let cmd = CommandSpec::new("sleep").arg("30");
    let opts = Options {
        start_timeout: std::time::Duration::from_millis(500),
        ..Options::default()
    };
    let started = std::time::Instant::now();
    let (cause, _) = stopped_report(&cmd, &opts);
    assert!(cause.contains("did not answer initialize"), "{cause}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "the preflight deadline was not honoured"
    );
}

#[test]
fn a_runtime_of_another_edition_is_told_which_edition_it_looks_like() {
    // The 2026-08 runtime checked as `current`: its missing methods fail checks, and the report
    // says why; checked as its own edition, no hint.
    let cmd = CommandSpec::new(RUNTIME).arg("--edition").arg("2026-08");
    let opts = Options {
        jobs: 2,
        frame_timeout: std::time::Duration::from_secs(3),
        ..Options::default()
    };
    let report = run(&cmd, "2026-08 as current", &opts).expect("preflight");
    assert!(report.exit_code() != 0);
    let hint = report.hint.clone().unwrap_or_default();
    assert!(hint.contains("try --edition 2026-08"), "{hint:?}");
    let opts = Options {
        edition: Edition::Aug2026,
        ..opts
    };
    let report = run(&cmd, "2026-08", &opts).expect("preflight");
    assert_eq!(report.exit_code(), 0, "{}", failures(&report));
    assert_eq!(report.hint, None);
}
