//! README.md's sample report is real output: this test makes it from a run of the kit against a
//! runtime with two bugs (the reference behind the `spaced-output` and `no-idle` mutants) and
//! fails when README shows anything else. `DSH_BLESS_README=1 cargo test readme` rewrites it.
//! README's count of mutants is held to `src/mutants/` too.

use super::{KIT, RUNTIME};
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::{check, CheckOptions};

const START: &str = "<!-- sample: check, made by tests/suite/readme.rs -->\n```\n";

/// The report as README shows it: the header and root causes whole, the table with its passes
/// elided, no failure details (their frames carry times), the summary.
fn sample() -> String {
    let cmd = CommandSpec::new(KIT)
        .arg("mutant")
        .arg("spaced-output,no-idle")
        .arg("--")
        .arg(RUNTIME);
    let report = check(
        &cmd,
        "./my-runtime --profile sdk",
        &CheckOptions::new().jobs(2),
    )
    .expect("the kit runs");
    let human = report.human(false);
    let (head, rest) = human.split_once("\n\n").expect("a header");
    let (causes, rest) = rest.split_once("\n\n").expect("root causes");
    let table = rest.split("\n\n").next().unwrap_or("");
    let mut out = format!("{head}\n\n{causes}\n\n");
    let mut elided = false;
    for (i, row) in table.lines().enumerate() {
        if i < 2 || !row.starts_with("PASS") {
            out.push_str(row);
            out.push('\n');
            elided = false;
        } else if !elided {
            out.push_str("…\n");
            elided = true;
        }
    }
    if !elided {
        out.push_str("…\n");
    }
    out.push_str(&format!("{}\n", report.summary_line()));
    out
}

#[test]
fn the_readme_sample_report_is_the_kit_s_real_output() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let at = readme.find(START).expect("README has the sample's marker") + START.len();
    let end = at + readme[at..].find("```\n").expect("the sample's block ends");
    let fresh = sample();
    if std::env::var_os("DSH_BLESS_README").is_some() {
        std::fs::write(&path, format!("{}{fresh}{}", &readme[..at], &readme[end..])).unwrap();
        return;
    }
    assert_eq!(
        readme[at..end],
        fresh,
        "README.md's sample report is stale: DSH_BLESS_README=1 cargo test readme rewrites it"
    );
}

#[test]
fn the_readme_counts_the_mutants_there_are() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let said = format!(
        "each of the {} mutants of `src/mutants/`",
        dsh_conformance::mutants::ALL.len()
    );
    assert!(readme.contains(&said), "README.md should say: {said}");
}
