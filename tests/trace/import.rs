//! Import of the real 0.2.1rc2 transcripts: the normalised forms are pinned with insta under
//! snapshots/, the committed fixtures/real-0.2.1rc2/*.trace are exactly those forms, and the
//! keyless ones replay green against the real executable.

use super::root;
use crate::support::pypi::real_runtime_or_skip;
use dsh_conformance::runner::{replay, CommandSpec, Options};
use dsh_conformance::trace::import::import;
use dsh_conformance::trace::Trace;
use std::path::PathBuf;
use std::time::Duration;

/// Transcripts whose sends were stored truncated (> 4096 bytes): they cannot be replayed.
const NOT_IMPORTABLE: &[&str] = &[
    "bytes_10mb_line",
    "bytes_10mb_prompt",
    "bytes_deep_nesting_100k",
    "contract-s6",
];

fn raw_dir() -> PathBuf {
    root().join("fixtures/real-0.2.1rc2/raw")
}

fn raws() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(raw_dir())
        .expect("raw transcripts")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn real_transcripts_import_to_their_pinned_normalised_traces() {
    let regenerate = std::env::var_os("DSH_REGENERATE_FIXTURES").is_some();
    let mut imported = 0;
    for (stem, text) in raws() {
        let source = format!(
            "traces/{}/{stem}.jsonl",
            if stem.starts_with("contract-") {
                "contract"
            } else {
                "real-0.2.1rc2"
            }
        );
        let source = source.replace("contract/contract-", "contract/");
        match import(&text, &stem, &source) {
            Ok(t) => {
                assert!(
                    !NOT_IMPORTABLE.contains(&stem.as_str()),
                    "{stem} imported unexpectedly"
                );
                Trace::parse(&t, &stem)
                    .unwrap_or_else(|e| panic!("imported {stem} does not parse: {e}"));
                insta::with_settings!({snapshot_path => root().join("snapshots"), prepend_module_to_snapshot => false, omit_expression => true}, {
                    insta::assert_snapshot!(format!("real-0.2.1rc2__{stem}"), t);
                });
                let path = root().join(format!("fixtures/real-0.2.1rc2/{stem}.trace"));
                if regenerate {
                    std::fs::write(&path, &t).unwrap();
                }
                let committed = std::fs::read_to_string(&path).unwrap_or_default();
                assert!(
                    committed == t,
                    "{} differs from its import; rerun with DSH_REGENERATE_FIXTURES=1",
                    path.display()
                );
                imported += 1;
            }
            Err(e) => {
                assert!(NOT_IMPORTABLE.contains(&stem.as_str()), "{stem}: {e}");
                assert!(e.msg.contains("stored truncated"), "{stem}: {e}");
            }
        }
    }
    assert_eq!(imported, 78 - NOT_IMPORTABLE.len());
}

#[test]
fn keyless_real_transcripts_replay_green_against_the_real_runtime() {
    let Some(exe) =
        real_runtime_or_skip("keyless_real_transcripts_replay_green_against_the_real_runtime")
    else {
        return;
    };
    let cmd = CommandSpec::new(exe).arg("--profile").arg("sdk");
    let opts = Options {
        frame_timeout: Duration::from_secs(20),
        ..Options::default()
    };
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut needs_model = Vec::new();
    for p in super::traces_under(&root().join("fixtures/real-0.2.1rc2")) {
        let t = Trace::load(&p).unwrap_or_else(|e| panic!("{e}"));
        if t.meta.requires.iter().any(|r| r == "model") {
            needs_model.push(t.meta.case.clone());
            continue;
        }
        let r = replay(&t, &cmd, &opts);
        println!("{}", r.to_string().trim_end());
        ran += 1;
        if !r.passed() {
            failures.push(r.to_string());
        }
    }
    println!("need the model stub (not run): {needs_model:?}");
    assert!(ran >= 30, "only {ran} keyless transcripts");
    assert!(
        failures.is_empty(),
        "{} of {ran} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
