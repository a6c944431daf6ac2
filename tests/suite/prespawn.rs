//! Processes started ahead (`check --prespawn`): a runtime slow to boot gets spares, and every
//! check's verdict is the one it gets with each process started as its case begins.

use super::{KIT, RUNTIME};
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::suite::run::{run, Options};
use dsh_conformance::suite::{CheckResult, Report};
use std::time::Duration;

/// The reference behind two mutants (two bugs), started after a 0.6 s sleep: an idle boot.
fn slow_buggy() -> CommandSpec {
    let script = "sleep 0.6; exec \"$0\" \"$@\"";
    let argv = [
        "sh",
        "-c",
        script,
        KIT,
        "mutant",
        "spaced-output,no-idle",
        "--",
        RUNTIME,
    ];
    CommandSpec::from_argv(&argv).unwrap()
}

fn judge(prespawn: Option<usize>) -> Report {
    let opts = Options {
        jobs: 2,
        frame_timeout: Duration::from_secs(5),
        prespawn,
        ..Options::default()
    };
    run(&slow_buggy(), "slow buggy", &opts).unwrap()
}

fn words(r: &Report) -> Vec<(String, &'static str)> {
    let w = |c: &CheckResult| (c.info.id.to_string(), c.verdict.word());
    r.results.iter().map(w).collect()
}

#[test]
fn a_slow_boot_gets_spares_and_every_verdict_is_the_one_without() {
    let (ahead, fresh) = std::thread::scope(|s| {
        let ahead = s.spawn(|| judge(None));
        let fresh = s.spawn(|| judge(Some(0)));
        (ahead.join().unwrap(), fresh.join().unwrap())
    });
    let start = ahead.start.expect("the preflight ran");
    assert!(start.boot.wall >= Duration::from_millis(600), "{start:?}");
    assert!(start.spares_per_job >= 1, "{start:?}");
    assert_eq!(fresh.start.map(|s| s.spares_per_job), Some(0));
    assert_eq!(words(&ahead), words(&fresh));
    // The two bugs are found, and only they.
    let failed: Vec<String> = (words(&ahead).into_iter())
        .filter(|(_, w)| *w == "FAIL")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(failed, ["stdout.compact", "status.idle-after-turn"]);
}

/// Issue 38, item 3: the plan is made from the preflight's boot. A budget the boots alone exceed
/// is said on stderr before the first check's verdict, and the run stops at it; left out, the
/// budget is 300 s plus the boots. On shared processes the plan counts one boot per shared
/// process, not per case.
#[test]
fn a_budget_the_boots_exceed_is_said_at_the_start_the_default_grows_by_them() {
    let argv = |budget: Option<&str>, processes: &'static str| {
        let mut a = vec![
            "check",
            "--filter",
            "frame.*",
            "--jobs",
            "2",
            "--prespawn",
            "0",
            "--processes",
            processes,
        ];
        a.extend(["--progress", "always", "--format", "json"]);
        if let Some(b) = budget {
            a.extend(["--budget", b]);
        }
        let cmd = slow_buggy();
        let mut rest = vec!["--".to_owned(), cmd.program.to_string_lossy().into_owned()];
        rest.extend(cmd.args.iter().map(|s| s.to_string_lossy().into_owned()));
        (a.into_iter().map(str::to_owned).chain(rest)).collect::<Vec<_>>()
    };
    let run_in = |budget, processes| {
        let out = assert_cmd::Command::new(KIT)
            .args(argv(budget, processes))
            .timeout(Duration::from_secs(600))
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (String::from_utf8_lossy(&out.stderr).into_owned(), report)
    };
    let run = |budget| run_in(budget, "fresh");
    let (stderr, report) = run(Some("2s"));
    let start = &report["start"];
    let processes = start["processes"].as_u64().unwrap();
    // Each frame.* case boots 0.6 s, two at a time (no spares): the floor is at least 0.3 s each.
    assert!(processes >= 20, "{start}");
    assert!(
        start["boots_ms"].as_u64().unwrap() >= processes * 300,
        "{start}"
    );
    assert_eq!(start["budget_ms"], 2000, "{start}");
    let warning = stderr
        .find("this run cannot finish in its budget")
        .expect(&stderr);
    let first_verdict = stderr.find("] PASS").or(stderr.find("] FAIL"));
    assert!(first_verdict.is_none_or(|v| warning < v), "{stderr}");
    assert_eq!(report["stopped"]["reason"], "budget", "{stderr}");
    // Left out: 300 s plus the boots, no warning, and the run finishes.
    let (stderr, report) = run(None);
    let start = &report["start"];
    let grown = 300_000 + start["boots_ms"].as_u64().unwrap();
    assert_eq!(start["budget_ms"].as_u64(), Some(grown), "{start}");
    assert!(!stderr.contains("cannot finish"), "{stderr}");
    assert!(report["stopped"].is_null(), "{stderr}");
    // Shared: the frame.* cases that share start one process per job, not one each.
    let (_, shared) = run_in(Some("2s"), "shared");
    let fewer = shared["start"]["processes"].as_u64().unwrap();
    assert!(fewer + 10 < processes, "{fewer} of {processes}");
}
