//! App mode (`client --app`): the reference app passes every check app mode judges, and the
//! scenarios an app cannot meet are left out (named, with why, in the report's hint); each mutant
//! of it fails exactly its check.

use super::{client, KIT};
use dsh_conformance::check::CheckId;
use dsh_conformance::client::app::{left_out, not_judged, scenarios};
use dsh_conformance::client::reference::BUGS;
use std::collections::BTreeSet;

fn judged() -> BTreeSet<CheckId> {
    scenarios()
        .iter()
        .flat_map(|s| s.checks.iter().copied())
        .collect()
}

#[test]
fn the_reference_app_passes_what_app_mode_judges_and_the_rest_is_left_out() {
    let (code, report) = client(&["--app", "--suite", "all"], &[KIT, "client-app"]);
    assert_eq!(report.with("PASS"), judged(), "{}", report);
    assert_eq!(report.verdicts().len(), judged().len(), "{}", report);
    let hint = report.0["hint"].as_str().unwrap_or("");
    for id in not_judged() {
        assert!(
            !judged().contains(&id) && hint.contains(id.as_str()),
            "{hint}"
        );
    }
    for (name, why) in left_out() {
        assert!(hint.contains(&format!("{name} ({why})")), "{hint}");
    }
    assert_eq!(code, 0);
}

/// docs/CLIENT-DRIVERS.md's table of the scenarios app mode leaves out is the code's.
#[test]
fn the_docs_list_the_scenarios_app_mode_leaves_out_as_the_table_does() {
    let doc = include_str!("../../docs/CLIENT-DRIVERS.md");
    let table = doc
        .split("| scenario left out | why |")
        .nth(1)
        .unwrap_or("");
    let rows: Vec<&str> = (table.lines().skip(2))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let expected: Vec<String> = (left_out().iter())
        .map(|(name, why)| format!("| `{name}` | {why} |"))
        .collect();
    assert_eq!(rows, expected);
}

/// Naming a scenario app mode leaves out is a usage error that says why.
#[test]
fn a_scenario_app_mode_leaves_out_is_refused_with_why() {
    let out = std::process::Command::new(KIT)
        .args(["client", "--app", "--scenario", "receipts", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let why = left_out()
        .into_iter()
        .find(|l| l.0 == "receipts")
        .unwrap()
        .1;
    assert!(String::from_utf8_lossy(&out.stderr).contains(why));
}

/// Client mutants whose bug an app cannot show: `exit-hangs-requests` mishandles a request
/// pending at the runtime's exit, and an app sends none but its run's prompt (app mode runs no
/// `exit-on-request` scenario).
const DRIVER_ONLY: &[&str] = &["exit-hangs-requests"];

#[test]
fn each_app_mutant_fails_exactly_its_check() {
    let bugs: Vec<_> = (BUGS.iter())
        .filter(|b| judged().contains(&b.2) && !DRIVER_ONLY.contains(&b.1))
        .collect();
    let caught: BTreeSet<CheckId> = bugs.iter().map(|b| b.2).collect();
    assert_eq!(caught, judged(), "every judged check has a mutant");
    let runs = super::mutant_runs(&["--app"], &bugs, |name| {
        [KIT, "client-app", "--bug", name]
            .map(String::from)
            .to_vec()
    });
    for m in runs {
        super::assert_fails_only(m.name, m.check, &m.report, &judged());
    }
}

#[test]
fn an_app_that_reads_stdin_passes_and_one_that_never_prompts_is_untestable() {
    // The reference app reads stdin when DSH_CONFORMANCE_PROMPT is unset.
    let stdin = ["env", "-u", "DSH_CONFORMANCE_PROMPT", KIT, "client-app"];
    let (_, report) = client(&["--app", "--scenario", "unknown-events"], &stdin);
    let check = BTreeSet::from([CheckId::ClientForwardCompatible]);
    assert_eq!(report.with("PASS"), check, "{}", report);
    // Printing the expected reply from the `{prompt}` argument, without a runtime, is no pass.
    let echo = ["sh", "-c", "echo \"$0\" | sed 's/^reply: //'", "{prompt}"];
    let (_, report) = client(&["--app", "--scenario", "unknown-events"], &echo);
    assert_eq!(report.with("UNTESTABLE"), check, "{}", report);
}

/// dsh-openai (PyPI), the bridge the runtime tests already drive, as a one-prompt app, on the
/// `sdk` profile (its `DSH_OPENAI_PROFILE`; its default, `sdk-minimal`, offers no subagent tool,
/// so the subagent scenarios could not arise): the SDK's bugs it inherits are its failures.
#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI")]
fn dsh_openai_as_an_app_fails_only_the_sdks_bugs() {
    use crate::support::pypi::need_venv;
    let test = "dsh_openai_as_an_app_fails_only_the_sdks_bugs";
    let env = need_venv(test, "dsh-openai", &["dsh-openai"]);
    let root = env!("CARGO_MANIFEST_DIR");
    let baseline = format!("{root}/fixtures/clients/dsh-openai-0.1.1.app.known-failing");
    let app = format!("{root}/drivers/apps/dsh_openai_app.py");
    let python = env.python.display().to_string();
    let args = ["--app", "--suite", "all", "--known-failing", &baseline];
    let profile = ["env", "DSH_OPENAI_PROFILE=sdk", &python, &app];
    let (code, report) = client(&args, &profile);
    let known = BTreeSet::from([
        CheckId::ClientDrainsStderr,
        CheckId::ClientGracefulShutdown,
        CheckId::ClientSubagentTrees,
        CheckId::ClientBoundedBacklog,
        CheckId::ClientIdleNeverComes,
    ]);
    assert_eq!(report.with("XFAIL"), known, "{}", report);
    assert_eq!(
        report.with("PASS").len() + known.len(),
        judged().len(),
        "{}",
        report
    );
    assert_eq!(code, 0, "{}", report);
}
