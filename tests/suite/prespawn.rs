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
