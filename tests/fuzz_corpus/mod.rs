//! Stable-Rust replay of the fuzz corpora: every committed seed (`fuzz/corpus/<target>/`) and every
//! minimised crasher (`fuzz/regressions/<target>/`) goes through the same library check as the
//! cargo-fuzz target, so `cargo test` alone keeps fixed crashes fixed.

use dsh_conformance_fuzzing::TARGETS;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Runs `check` on every file; returns one line per failure.
fn replay(check: fn(&[u8]) -> Result<(), String>, paths: &[PathBuf]) -> Vec<String> {
    let mut failures = Vec::new();
    for path in paths {
        let data = std::fs::read(path).expect("readable corpus file");
        match catch_unwind(AssertUnwindSafe(|| check(&data))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(format!("{}: {e}", path.display())),
            Err(_) => failures.push(format!("{}: panicked", path.display())),
        }
    }
    failures
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

#[test]
fn every_committed_corpus_file_passes_its_target() {
    let mut failures = Vec::new();
    for (name, check) in TARGETS {
        let seeds = files(&fuzz_dir().join("corpus").join(name));
        assert!(
            !seeds.is_empty(),
            "fuzz/corpus/{name} has no seeds: every target needs a committed corpus"
        );
        failures.extend(replay(*check, &seeds));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_minimised_crasher_stays_fixed() {
    let mut failures = Vec::new();
    for (name, check) in TARGETS {
        failures.extend(replay(
            *check,
            &files(&fuzz_dir().join("regressions").join(name)),
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_corpus_folder_belongs_to_a_known_target() {
    for dir in ["corpus", "regressions"] {
        for path in std::fs::read_dir(fuzz_dir().join(dir)).expect("fuzz folder") {
            let path = path.expect("entry").path();
            if path.is_dir() {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                assert!(
                    TARGETS.iter().any(|(t, _)| *t == name),
                    "fuzz/{dir}/{name} matches no target in fuzzing::TARGETS"
                );
            }
        }
    }
}
