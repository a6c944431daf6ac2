//! The requirements matrix (`docs/REQUIREMENTS.md`) held to the contract and to the checks
//! (issue 40): every requirement anchored next to its statement in its own section, every anchor
//! a requirement, every check covering at least one, no MUST open beyond the ones still counted.

use super::KIT;
use dsh_conformance::check::{Severity, CHECKS};
use dsh_conformance::contract::{Contract, DOCUMENT};
use dsh_conformance::edition::Edition;
use dsh_conformance::requirements::{self, State};
use std::collections::BTreeSet;

/// Every requirement anchor in the contract: `<a id="r…"></a>`.
fn anchors() -> Vec<String> {
    let mut out = Vec::new();
    for piece in DOCUMENT.split("<a id=\"r").skip(1) {
        out.push(format!("r{}", piece.split('"').next().unwrap_or("")));
    }
    out
}

#[test]
fn every_requirement_is_anchored_in_its_own_section_and_every_anchor_is_one() {
    let all = requirements::all();
    let ids: BTreeSet<&str> = all.iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), all.len(), "requirement ids are unique");
    let anchored = anchors();
    let unique: BTreeSet<&str> = anchored.iter().map(String::as_str).collect();
    assert_eq!(
        unique.len(),
        anchored.len(),
        "each anchor once in the contract"
    );
    let without_row: Vec<_> = unique.difference(&ids).collect();
    let without_anchor: Vec<_> = ids.difference(&unique).collect();
    assert!(
        without_row.is_empty(),
        "anchors with no row: {without_row:?}"
    );
    assert!(
        without_anchor.is_empty(),
        "rows with no anchor: {without_anchor:?}"
    );
    let contract = Contract::builtin();
    for r in all {
        let sections = contract
            .resolve(&format!("§{}", r.section))
            .unwrap_or_else(|e| panic!("{}: {e}", r.id));
        let own = sections.iter().any(|s| {
            // The section's own text, its subsections left out.
            let body = s.body.split("\n<a id=\"s").next().unwrap_or("");
            body.contains(&format!("<a id=\"{}\"></a>", r.id))
        });
        assert!(own, "{} is not anchored in §{}", r.id, r.section);
    }
}

#[test]
fn every_check_covers_a_requirement_of_its_editions() {
    let mut idle = Vec::new();
    for c in CHECKS {
        let reqs: Vec<_> = requirements::of_check(c.id).collect();
        if reqs.is_empty() {
            idle.push(c.id.as_str());
        }
        for r in reqs {
            assert!(
                r.editions.iter().any(|e| c.editions.contains(e)),
                "{} covers {}, of editions it never runs in ({} vs {})",
                c.id,
                r.id,
                c.editions.names(),
                r.editions.names()
            );
        }
    }
    assert!(idle.is_empty(), "checks covering no requirement: {idle:?}");
}

#[test]
fn no_must_is_open() {
    let open: Vec<_> = (requirements::all().iter())
        .filter(|r| r.level == Severity::Must && matches!(r.state, State::Open(_)))
        .map(|r| r.id)
        .collect();
    assert!(
        open.is_empty(),
        "MUST requirements open (each needs a check, or an `excluded:` reason): {open:?}"
    );
}

#[test]
fn the_matrix_lists_with_its_coverage_as_text_and_json() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(KIT).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(&["check", "--list", "--requirements", "--edition", "legacy"]);
    assert!(text.contains("\n§2.1\n  r2.1-"), "{text}");
    assert!(
        text.contains("coverage of edition legacy:\n  §2    "),
        "{text}"
    );
    // A requirement of another edition only is not listed.
    let current_only = requirements::all()
        .iter()
        .find(|r| !r.editions.contains(Edition::Legacy))
        .expect("some requirement is not legacy's");
    assert!(!text.contains(&format!("  {} ", current_only.id)), "{text}");
    let json: serde_json::Value = serde_json::from_str(&run(&[
        "check",
        "--list",
        "--requirements",
        "--format",
        "json",
    ]))
    .unwrap();
    let reqs = json["requirements"].as_array().unwrap();
    let total = &json["coverage"]["total"];
    let sum = ["covered", "excluded", "open"]
        .iter()
        .map(|k| total[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(sum as usize, reqs.len());
    assert!(reqs.iter().all(|r| r["link"]
        .as_str()
        .unwrap()
        .starts_with("docs/CONTRACT.md#r")));
    // --requirements is a form of --list.
    let out = std::process::Command::new(KIT)
        .args(["check", "--requirements"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// README's coverage figure is the matrix's, for the default edition.
#[test]
fn the_readme_shows_the_matrix_coverage() {
    let readme = include_str!("../../README.md");
    let table = requirements::render::markdown(Edition::Current);
    assert!(
        readme.contains(&table),
        "README.md's coverage table (edition current) should read:\n{table}"
    );
}
