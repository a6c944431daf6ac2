//! dsh-conductor's JSON-RPC client (`conductor.dsh.DshClient`, PyPI) under `client --suite all`,
//! through drivers/conductor/dsh_driver.py, with its baseline: every entry a confirmed bug of
//! it, and nothing else fails. It needs Python 3.13; the venv is made with that interpreter.

use super::client;
use crate::support::pypi::{need_venv_with, python313};
use dsh_conformance::check::CheckId;
use std::collections::BTreeSet;

const CONDUCTOR: &str = "dsh-conductor==0.7.2";

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI")]
fn dsh_conductor_fails_only_its_known_bugs() {
    let env = need_venv_with(
        &python313(),
        "dsh_conductor_fails_only_its_known_bugs",
        "client-conductor",
        &[CONDUCTOR],
    );
    let root = env!("CARGO_MANIFEST_DIR");
    let baseline = format!("{root}/fixtures/clients/dsh-conductor-0.7.2.known-failing");
    let driver = format!("{root}/drivers/conductor/dsh_driver.py");
    let python = env.python.display().to_string();
    let (code, report) = client(
        &["--suite", "all", "--known-failing", &baseline],
        &[&python, &driver],
    );
    let known = BTreeSet::from([
        CheckId::ClientRootIdle,
        CheckId::ClientLongLines,
        CheckId::ClientTypedErrors,
        CheckId::ClientRobustNonFrameLines,
        CheckId::ClientRobustStdoutClosed,
        CheckId::ClientGracefulShutdown,
        CheckId::ClientSubagentTrees,
        CheckId::ClientBoundedBacklog,
        CheckId::ClientReceiptCorrelation,
        CheckId::ClientForwardCompatible,
    ]);
    assert_eq!(report.with("XFAIL"), known, "{}", report);
    // It never has two requests in flight, though its driver makes them at once: the rule cannot
    // apply to it, said as such, never a pass nor a finding (issue 37, item 5).
    assert_eq!(
        report.with("SKIP"),
        BTreeSet::from([CheckId::ClientIdsOutOfOrder]),
        "{}",
        report
    );
    assert!(report.with("UNTESTABLE").is_empty(), "{}", report);
    let reason = report.check(CheckId::ClientIdsOutOfOrder)["reason"].to_string();
    assert!(reason.contains("not applicable to this client"), "{reason}");
    // Its memory on the long line cannot be judged: it refuses the line.
    assert_eq!(
        report.with("BLOCKED"),
        BTreeSet::from([CheckId::ClientLineMemory]),
        "{}",
        report
    );
    assert_eq!(
        report.verdicts().len(),
        report.with("PASS").len() + known.len() + 2,
        "{}",
        report
    );
    // Its known failures are baselined and nothing else is a finding.
    assert_eq!(report.0["summary"]["fatal"], 0, "{}", report);
    assert_eq!(code, 0, "{}", report);
}
