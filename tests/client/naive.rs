//! Naive clients in other languages (`fixtures/clients/naive_client.mjs`, Node, and
//! `fixtures/clients/naive_client.rb`, Ruby: hand-rolled JSON-RPC clients with several documented
//! bugs at once) read as their authors read the report: each bug is one root cause, and nothing
//! else fails.

use super::client;
use dsh_conformance::check::CheckId;
use std::collections::BTreeSet;

/// Runs the naive client `file` (in `interpreter`) on every client check: exactly `bugs` fail,
/// each its own root cause, and every other check passes.
fn naive(interpreter: &str, file: &str, bugs: &[CheckId]) {
    let root = env!("CARGO_MANIFEST_DIR");
    let naive = format!("{root}/fixtures/clients/{file}");
    let found = std::process::Command::new(interpreter)
        .arg("--version")
        .output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "{interpreter} is needed for the naive client test (.ci/run installs it)"
    );
    let (code, report) = client(&["--suite", "all"], &[interpreter, &naive]);
    let bugs: BTreeSet<CheckId> = bugs.iter().copied().collect();
    assert_eq!(report.with("FAIL"), bugs, "{}", report);
    let causes: BTreeSet<CheckId> = report.root_causes().into_iter().collect();
    assert_eq!(causes, bugs, "{}", report);
    assert_eq!(
        report.with("PASS").len() + bugs.len(),
        report.verdicts().len(),
        "{}",
        report
    );
    assert_eq!(code, 1, "{}", report);
    // Under the same flags the kit's reference client passes every check
    // (the_reference_client_passes_every_client_check_and_runs_no_runtime_check).
}

#[test]
fn a_naive_client_with_six_bugs_gets_six_root_causes_and_nothing_else_fails() {
    // Its header lists these, one per bug.
    let bugs = [
        CheckId::ClientDrainsStderr,
        CheckId::ClientReceiptCorrelation,
        CheckId::ClientSubagentTrees,
        CheckId::ClientTypedErrors,
        CheckId::ClientGracefulShutdown,
        CheckId::ClientIdleNeverComes,
    ];
    naive("node", "naive_client.mjs", &bugs);
}

#[test]
fn a_naive_ruby_client_with_five_bugs_gets_five_root_causes_and_nothing_else_fails() {
    // Its header lists these, one per bug.
    let bugs = [
        CheckId::ClientWaitsForInitialize,
        CheckId::ClientIdsOutOfOrder,
        CheckId::ClientForwardCompatible,
        CheckId::ClientRobustNonFrameLines,
        CheckId::ClientBoundedBacklog,
    ];
    naive("ruby", "naive_client.rb", &bugs);
}
