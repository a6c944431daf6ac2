//! The fixture set against runtimes: the real 0.2.1rc2 executable (keyless subset) and, once it
//! serves, our reference runtime.

use super::{root, traces_under};
use crate::support::pypi::need_real_runtime;
use dsh_conformance::edition::Edition;
use dsh_conformance::runner::{CommandSpec, Options};
use dsh_conformance::trace::Trace;
use std::time::Duration;

/// Loads every fixture outside `real-0.2.1rc2/` that applies to `edition`, split into runnable
/// ones and those needing a capability the runner cannot give (`# requires:`).
fn hand_written(edition: Edition, have: &[&str]) -> (Vec<Trace>, Vec<String>) {
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    for p in traces_under(&root().join("fixtures")) {
        // blackbox/ holds fuzz findings: each fails against one runtime on purpose
        // (tests/blackbox checks which).
        if p.components()
            .any(|c| c.as_os_str() == "real-0.2.1rc2" || c.as_os_str() == "blackbox")
        {
            continue;
        }
        let t = Trace::load(&p).unwrap_or_else(|e| panic!("{e}"));
        if !t.applies_to(edition) {
            continue;
        }
        match t.meta.requires.iter().find(|r| !have.contains(&r.as_str())) {
            Some(r) => skipped.push(format!("{} (requires {r})", t.meta.case)),
            None => run.push(t),
        }
    }
    (run, skipped)
}

fn replay_all(traces: &[Trace], cmd: &CommandSpec, opts: &Options) -> Vec<String> {
    let mut failures = Vec::new();
    // The runner's replay_all keeps the directories of cases that others continue.
    for r in dsh_conformance::runner::replay_all(traces, cmd, opts) {
        println!("{}", r.to_string().trim_end());
        if !r.passed() {
            failures.push(r.to_string());
        }
    }
    failures
}

#[test]
fn every_fixture_file_parses() {
    let all = traces_under(&root().join("fixtures"));
    assert!(all.len() >= 25, "{} fixtures", all.len());
    for p in all {
        if let Err(e) = Trace::load(&p) {
            panic!("{e}");
        }
    }
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn fixtures_replay_green_against_the_real_runtime_with_the_model_stub() {
    let exe =
        need_real_runtime("fixtures_replay_green_against_the_real_runtime_with_the_model_stub");
    let stub = dsh_conformance::model_stub::ModelStub::start().expect("start the model stub");
    let cmd = CommandSpec::new(exe).arg("--profile").arg("sdk");
    let (traces, skipped) = hand_written(Edition::Current, &["model"]);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert!(traces.len() >= 30, "{} runnable fixtures", traces.len());
    let opts = Options {
        frame_timeout: Duration::from_secs(20),
        env: stub.env(),
        ..Options::default()
    };
    // Cases named in the real runtime's baseline are real upstream bugs: they must still fail.
    let baseline =
        std::fs::read_to_string(root().join("fixtures/real-0.2.1rc2.known-failing")).unwrap();
    let known = dsh_conformance::suite::Baseline::parse(
        &baseline,
        "real-0.2.1rc2.known-failing",
        dsh_conformance::check::Subject::Runtime,
    )
    .unwrap();
    let mut failures = Vec::new();
    for r in dsh_conformance::runner::replay_all(&traces, &cmd, &opts) {
        println!("{}", r.to_string().trim_end());
        match (r.passed(), known.reason(&r.case)) {
            (false, None) => failures.push(r.to_string()),
            (true, Some(why)) => failures.push(format!(
                "{} passes but is listed as known failing ({why})",
                r.case
            )),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        traces.len(),
        failures.join("\n")
    );
}

#[test]
fn every_fixture_replays_green_against_the_reference_runtime_in_each_edition() {
    let exe = env!("CARGO_BIN_EXE_dsh-reference-runtime");
    let opts = Options {
        frame_timeout: Duration::from_secs(20),
        ..Options::default()
    };
    let mut failures = Vec::new();
    let mut ran = 0;
    for edition in Edition::ALL {
        // The reference runtime's scripted model needs no stub.
        let (traces, skipped) = hand_written(edition, &["model"]);
        assert!(skipped.is_empty(), "{skipped:?}");
        let cmd = CommandSpec::new(exe)
            .arg("--profile")
            .arg("sdk")
            .arg("--edition")
            .arg(edition.name());
        ran += traces.len();
        failures.extend(
            replay_all(&traces, &cmd, &opts)
                .into_iter()
                .map(|f| format!("[{edition}] {f}")),
        );
    }
    assert!(ran >= 60, "{ran} case runs");
    assert!(
        failures.is_empty(),
        "{} of {ran} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
