//! The real upstream runtime (PyPI `deepseek-harness-runtime-bin` 0.2.1rc2) through the kit's CLI,
//! with the model stub: it passes every check but the ones its baseline lists, each with a reason,
//! with the same verdicts on shared processes as on fresh ones.

use super::KIT;
use crate::support::pypi;
use crate::support::report::JsonReport;
use assert_cmd::Command;
use dsh_conformance::check::CheckId;
use dsh_conformance::suite::Baseline;
use std::collections::BTreeSet;

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn the_real_runtime_passes_the_suite_apart_from_its_justified_baseline() {
    let exe = pypi::need_real_runtime("the real runtime passes the suite");
    let baseline = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real-0.2.1rc2.known-failing");
    // The default (`--processes auto`: its boot shares processes) and every case on a fresh
    // process: the same verdict for every check (issue 38).
    let check = |processes: &str| {
        let out = Command::new(KIT)
            .args(["check", "--format", "json", "--model-stub", "--edition"])
            .args(["current", "--jobs", "2", "--processes", processes])
            .arg("--known-failing")
            .arg(&baseline)
            .arg("--")
            .arg(&exe)
            .args(["--profile", "sdk"])
            .timeout(std::time::Duration::from_secs(900))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "--processes {processes}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        JsonReport::parse(&text)
    };
    let (report, fresh) = (check("auto"), check("fresh"));
    assert_eq!(report.verdicts(), fresh.verdicts());
    let ran_in = |r: &JsonReport, how: &str| {
        let checks = r.0["checks"].as_array().unwrap().iter();
        let ran = checks.flat_map(|c| c["ran_in"].as_array().cloned().unwrap_or_default());
        ran.filter(|w| w.as_str().unwrap().starts_with(how)).count()
    };
    assert!(ran_in(&report, "shared") >= 34, "{report}");
    // The id rules and ids that cannot be renamed share as written, and pass there.
    for id in [
        "frame.id-number-echo",
        "response.id-type-preserved",
        "frame.split-writes",
    ] {
        let check = (report.0["checks"].as_array().unwrap().iter()).find(|c| c["id"] == id);
        let ran = check.map(|c| c["ran_in"].to_string()).unwrap_or_default();
        assert!(ran.starts_with("[\"shared process"), "{id}: {ran}");
    }
    assert_eq!(ran_in(&fresh, "shared"), 0, "{fresh}");
    let subject = dsh_conformance::check::Subject::Runtime;
    let listed = Baseline::parse(
        &std::fs::read_to_string(&baseline).unwrap(),
        "baseline",
        subject,
    )
    .expect("the baseline parses");
    let listed: BTreeSet<CheckId> = listed
        .0
        .keys()
        .filter_map(|id| CheckId::parse(id))
        .collect();
    assert!(
        listed.contains(&CheckId::LifecycleShutdownAfterEmptySessionId),
        "{listed:?}"
    );
    assert_eq!(report.with("XFAIL"), listed, "{report}");
    assert_eq!(report.with("FAIL"), BTreeSet::new(), "{report}");
}
