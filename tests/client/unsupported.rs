//! Issue 37, items 2 and 3: verdicts from what the client did, never from its driver's words. A
//! client with no bound on a run is seen hanging (its driver runs the bounded run unbounded); a
//! driver's `unsupported` is "not supported by this client" (SKIP, the run not failed), or, for
//! a bound it refused and so never ran, UNTESTABLE with its words: never a FAIL.

use super::{client, KIT};
use dsh_conformance::check::CheckId;
use std::collections::BTreeSet;

/// A driver in sh: answers the start and the close, and each other operation of its scenario
/// with `answer` (`{"ok":false,…}` members after the id).
fn scripted(answer: &str) -> Vec<String> {
    let script = format!(
        r#"while read -r l; do id=$(printf '%s' "$l" | sed 's/.*"id":\([0-9]*\).*/\1/'); case "$l" in *'"start"'*|*'"close"'*) printf '{{"id":%s,"ok":true}}\n' "$id";; *) printf '{{"id":%s,{answer}}}\n' "$id";; esac; done"#
    );
    vec!["sh".into(), "-c".into(), script]
}

#[test]
fn a_client_with_no_bound_on_a_run_is_seen_hanging_and_the_reference_client_passes() {
    let args = ["--scenario", "idle-never-comes"];
    let t = std::time::Instant::now();
    let (code, bad) = client(&args, &[KIT, "client-driver", "--bug", "unbounded-run"]);
    let waited = t.elapsed();
    assert_eq!(
        bad.with("FAIL"),
        BTreeSet::from([CheckId::ClientIdleNeverComes]),
        "{bad}"
    );
    let reason = bad.check(CheckId::ClientIdleNeverComes)["reason"].to_string();
    assert!(
        reason.contains("the run never ended") && reason.contains("the client hangs"),
        "{reason}"
    );
    // The kit waits the bound it gave (3 s) and 5 s more, not its 60 s operation bound.
    assert!(waited.as_secs() < 40, "{waited:?}");
    // A SHOULD: reported, not failing the run.
    assert_eq!(code, 0, "{bad}");
    // Nothing else fails for the mutant: every other scenario of both suites passes it (the
    // measuring ones, which bound no run, left out for the machine's sake).
    let mut all = vec!["--suite", "all"];
    use dsh_conformance::client::run::Suite;
    let names: Vec<&str> = (Suite::All.scenarios().iter())
        .map(|s| s.name)
        .filter(|n| !["backlog", "long-lines"].contains(n))
        .collect();
    for n in &names {
        all.extend(["--scenario", n]);
    }
    let (_, whole) = client(&all, &[KIT, "client-driver", "--bug", "unbounded-run"]);
    assert_eq!(
        whole.with("FAIL"),
        BTreeSet::from([CheckId::ClientIdleNeverComes]),
        "{whole}"
    );
    assert_eq!(
        whole.with("PASS").len() + 1,
        whole.verdicts().len(),
        "{whole}"
    );
    let (code, good) = client(&args, &[KIT, "client-driver"]);
    assert_eq!(
        good.with("PASS"),
        BTreeSet::from([CheckId::ClientIdleNeverComes]),
        "{good}"
    );
    assert_eq!(code, 0, "{good}");
}

#[test]
fn a_driver_that_refuses_a_bound_leaves_the_check_untestable_with_its_words() {
    let driver = scripted(
        r#""ok":false,"error":{"class":"unsupported","code":null,"message":"run has no timeout"}"#,
    );
    let argv: Vec<&str> = driver.iter().map(String::as_str).collect();
    let (_, report) = client(&["--scenario", "idle-never-comes"], &argv);
    assert_eq!(
        report.with("UNTESTABLE"),
        BTreeSet::from([CheckId::ClientIdleNeverComes]),
        "{report}"
    );
    let reason = report.check(CheckId::ClientIdleNeverComes)["reason"].to_string();
    assert!(reason.contains("(run has no timeout)"), "{reason}");
}

#[test]
fn an_operation_the_client_lacks_is_not_supported_and_fails_nothing() {
    let driver = scripted(
        r#""ok":false,"error":{"class":"unsupported","code":null,"message":"no resume_session"}"#,
    );
    let argv: Vec<&str> = driver.iter().map(String::as_str).collect();
    let (code, report) = client(&["--scenario", "typed-errors"], &argv);
    assert_eq!(
        report.with("SKIP"),
        BTreeSet::from([CheckId::ClientTypedErrors]),
        "{report}"
    );
    let reason = report.check(CheckId::ClientTypedErrors)["reason"].to_string();
    assert!(
        reason.contains("not supported by this client: it cannot resume a stored session (its driver says: no resume_session)"),
        "{reason}"
    );
    // No finding: the run's only check was not supported, so nothing was tested (exit 5), and
    // nothing counts against the client.
    assert_eq!(report.0["summary"]["fatal"], 0, "{report}");
    assert_eq!(code, 5, "{report}");
}
