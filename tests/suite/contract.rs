//! The contract is in the repository and everything cites it there: every check's sections exist
//! in `docs/CONTRACT.md` and have text, every `§` in a trace's `# contract:` line and every
//! `docs/CONTRACT.md#s…` in a comment resolves, nothing points at notes outside the repository, and
//! `explain` quotes the sections.

use super::KIT;
use assert_cmd::Command;
use dsh_conformance::contract::{cited_numbers, Contract, DOCUMENT};
use dsh_conformance::suite::CHECKS;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` (relative to the crate root), skipping fuzz corpora and crashers: they
/// are inputs, not prose.
fn files_under(dir: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root().join(dir)];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() {
                if !matches!(name.to_str(), Some("corpus" | "regressions" | "target")) {
                    todo.push(p);
                }
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The files whose words the rules below govern: the sources (the workspace's crates under
/// `crates/` included), docs, fixtures, tests, fuzz crate, examples and benches, and the top-level
/// documents.
fn project_files() -> Vec<PathBuf> {
    let mut files: Vec<_> = [
        "src", "crates", "docs", "fixtures", "tests", "fuzz", "examples", "benches",
    ]
    .iter()
    .flat_map(|d| files_under(d))
    .collect();
    for f in ["README.md", "BENCHMARKS.md", "build.rs", "Cargo.toml"] {
        files.push(root().join(f));
    }
    files
}

fn text_of(p: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned()
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[test]
fn every_check_cites_anchors_that_exist_and_each_has_text() {
    let on_disk = std::fs::read_to_string(root().join("docs/CONTRACT.md")).unwrap();
    assert_eq!(on_disk, DOCUMENT, "the built-in contract is stale: rebuild");
    let contract = Contract::builtin();
    for c in CHECKS {
        let sections = contract
            .resolve(c.section)
            .unwrap_or_else(|e| panic!("{}: {e}", c.id));
        for s in sections {
            // The anchor itself, as a reader's browser finds it, not only as the parser read it.
            let anchor = format!("<a id=\"{}\"></a>", s.anchor());
            assert!(on_disk.contains(&anchor), "{}: no {anchor}", c.id);
            assert!(
                s.body.split_whitespace().count() >= 10,
                "{}: §{} has (almost) no text",
                c.id,
                s.number
            );
        }
    }
}

/// `(file:line, number)` of every contract citation in the project: the `§N` of `# contract:`
/// lines, and the `#sN` on lines that say `CONTRACT.md#`.
fn citations() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in project_files() {
        let text = text_of(&p);
        for (i, line) in text.lines().enumerate() {
            let at = || format!("{}:{}", relative(&p), i + 1);
            if let Some(meta) = line.trim_start().strip_prefix("# contract:") {
                out.extend(
                    cited_numbers(meta)
                        .into_iter()
                        .map(|n| (at(), n.to_owned())),
                );
            }
            if line.contains("CONTRACT.md#") {
                for (j, _) in line.match_indices("#s") {
                    let rest = &line[j + 2..];
                    let len = rest
                        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                        .unwrap_or(rest.len());
                    let number = rest[..len].trim_end_matches('.');
                    if !number.is_empty() {
                        out.push((at(), number.to_owned()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_citation_in_traces_and_comments_names_a_section_of_the_contract() {
    let contract = Contract::builtin();
    let all = citations();
    assert!(
        all.len() > 150,
        "only {} citations found: is the scan broken?",
        all.len()
    );
    let dangling: Vec<_> = all
        .iter()
        .filter(|(_, n)| contract.section(n).is_none())
        .map(|(at, n)| format!("{at}: §{n}"))
        .collect();
    assert!(
        dangling.is_empty(),
        "citations of sections docs/CONTRACT.md does not have:\n{}",
        dangling.join("\n")
    );
}

/// What in `text` (the file `path`, relative to the crate root) points outside the repository: the
/// research notes the contract was first written from, or the folder they live in.
fn outside_references(path: &str, text: &str) -> Vec<String> {
    const FORBIDDEN: [&str; 7] = [
        "shared/",
        "shared `traces",
        "shared traces",
        "RUNTIME-BEHAVIOUR",
        "DESIGN.md",
        "DESIGN §",
        "CONTRACT §",
    ];
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for f in FORBIDDEN.iter().filter(|f| line.contains(**f)) {
            out.push(format!("{path}:{}: {f:?}", i + 1));
        }
        // Outside docs/, the contract is `docs/CONTRACT.md`; a bare `CONTRACT.md` is another file.
        // (The matrix's reader reads docs/REQUIREMENTS.md's links, relative to docs/.)
        if !path.starts_with("docs/") && !path.starts_with("src/requirements/") {
            for (j, _) in line.match_indices("CONTRACT.md") {
                if !line[..j].ends_with("docs/") {
                    out.push(format!("{path}:{}: CONTRACT.md without docs/", i + 1));
                }
            }
        }
    }
    out
}

#[test]
fn the_reference_scan_catches_each_kind_of_outside_reference() {
    for (path, line) in [
        ("src/x.rs", "// see ../shared/traces/a.jsonl"),
        ("src/x.rs", "//! as RUNTIME-BEHAVIOUR §8 says"),
        ("fixtures/a.trace", "# contract: §5 (DESIGN §4)"),
        ("README.md", "the project's `CONTRACT.md`"),
        ("src/x.rs", "/// (CONTRACT §2.3)"),
        ("docs/TRACES.md", "reads the shared `traces/` folder"),
    ] {
        assert!(
            !outside_references(path, line).is_empty(),
            "{path}: {line:?} passed the scan"
        );
    }
    for (path, line) in [
        ("src/x.rs", "// (docs/CONTRACT.md#s2.3, #s9)"),
        ("docs/TRACES.md", "([§5](CONTRACT.md#s5))"),
        (
            "fixtures/a.trace",
            "# contract: §3.6 shutdown answers {} (§11.4)",
        ),
    ] {
        assert_eq!(outside_references(path, line), Vec::<String>::new());
    }
}

#[test]
fn nothing_points_at_notes_outside_the_repository() {
    let mut found = Vec::new();
    let mut scanned = 0;
    for p in project_files() {
        // This file names what it forbids.
        if p.ends_with("tests/suite/contract.rs") {
            continue;
        }
        scanned += 1;
        found.extend(outside_references(&relative(&p), &text_of(&p)));
    }
    assert!(scanned > 300, "only {scanned} files scanned");
    assert!(
        found.is_empty(),
        "references to files outside the repository (cite docs/CONTRACT.md#sN instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn explain_prints_the_text_of_each_cited_section() {
    let check = CHECKS
        .iter()
        .find(|c| c.id == dsh_conformance::check::CheckId::StdoutFramesOnly)
        .unwrap();
    let out = Command::new(KIT)
        .args(["explain", check.id.as_str()])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let sections = Contract::builtin().resolve(check.section).unwrap();
    assert_eq!(sections.len(), 2, "stdout.frames-only cites §2.4 §7");
    for s in sections {
        let header = format!("=== §{} {} ({}) ===", s.number, s.title, s.link());
        assert!(text.contains(&header), "{header} missing:\n{text}");
        assert!(
            text.contains(&s.text()),
            "§{}'s text missing:\n{text}",
            s.number
        );
        assert!(s.body.contains("<a id=\"r") && !s.text().contains("<a id=\"r"));
    }
    assert!(text.contains("stdout carries JSON-RPC frames and nothing else"));
}

#[test]
fn explain_of_an_unknown_check_exits_2_and_says_so() {
    let out = Command::new(KIT)
        .args(["explain", "no.such-check"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no check \"no.such-check\""), "{err}");
}
