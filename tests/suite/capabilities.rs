//! The capability-limited runtimes: runtimes that lack what the contract lets them lack (a
//! subagent tool, a model that follows `slow:`) or what their edition has (a method), beside the
//! bugs some of them have. `fixtures/runtimes/capabilities.txt` gives, for each, every check's
//! expected verdict; the suite must give exactly that: a missing method is one FAIL on the check
//! that owns it with its dependents BLOCKED, what the contract allows is UNTESTABLE, and no check
//! PASSes whose rule was never exercised. The table holds on fresh processes and on shared ones
//! (`check --processes`): sharing changes no verdict.

use super::{KIT, RUNTIME};
use dsh_conformance::check::{CheckId, Subject, METHOD_OWNERS};
use dsh_conformance::model_stub::ModelStub;
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::suite::cases;
use dsh_conformance::suite::run::{run, Options, StubLog};
use dsh_conformance::suite::share::Processes;
use dsh_conformance::suite::{Report, Verdict};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/runtimes")
}

/// One runtime of the table: its command line and the checks whose verdict is not PASS.
struct Limited {
    words: Vec<String>,
    /// Run with the model stub (`==stub`), as `check --model-stub`.
    stub: bool,
    verdicts: BTreeMap<CheckId, String>,
}

/// `capabilities.txt`: `== <command>` starts a runtime (`{fixtures}`, `{kit}`, `{reference}`
/// substituted; `==stub <command>` one run with the model stub), `<VERDICT> <check-id>` lines
/// follow; `#` starts a comment.
fn table() -> Vec<Limited> {
    let text = std::fs::read_to_string(fixtures().join("capabilities.txt")).unwrap();
    let mut out: Vec<Limited> = Vec::new();
    for line in text.lines().map(|l| l.split('#').next().unwrap().trim()) {
        let (stub, cmd) = match line.strip_prefix("==stub ") {
            Some(cmd) => (true, Some(cmd)),
            None => (false, line.strip_prefix("== ")),
        };
        if let Some(cmd) = cmd {
            let words = cmd
                .split_whitespace()
                .map(|w| {
                    w.replace("{fixtures}", &fixtures().to_string_lossy())
                        .replace("{kit}", KIT)
                        .replace("{reference}", RUNTIME)
                })
                .collect();
            out.push(Limited {
                words,
                stub,
                verdicts: BTreeMap::new(),
            });
        } else if let Some((verdict, id)) = line.split_once(' ') {
            let id = CheckId::parse(id.trim()).unwrap_or_else(|| panic!("no check {id:?}"));
            let last = out.last_mut().expect("a verdict before any `==` line");
            last.verdicts.insert(id, verdict.to_owned());
        }
    }
    out
}

fn judge(r: &Limited, processes: Processes) -> Result<Report, String> {
    let cmd = CommandSpec::from_argv(&r.words).unwrap();
    // Two processes started ahead per job (`check --prespawn 2`; these quick boots get none by
    // default, as every other suite test runs them): the table holds with spares too. The
    // default frame timeout: with 3 s, the 10 MiB lines' scaled wait (18 s) ran out on a loaded
    // CI machine, and since waits end on evidence the longer one costs this test about 4 s.
    let mut opts = Options {
        jobs: 2,
        frame_timeout: Duration::from_secs(10),
        prespawn: Some(2),
        processes,
        ..Options::default()
    };
    let stub = match r.stub {
        true => Some(Arc::new(ModelStub::start().map_err(|e| e.to_string())?)),
        false => None,
    };
    if let Some(stub) = &stub {
        opts.env = stub.env();
        opts.model_stub = Some(StubLog::of(stub.clone()));
    }
    run(&cmd, &r.words.join(" "), &opts).map_err(|e| e.to_string())
}

/// Every check's verdict against the table: the differences, one line each.
fn differences(r: &Limited, report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for c in &report.results {
        let want = match &c.verdict {
            Verdict::Skip { .. } => continue,
            _ => r.verdicts.get(&c.info.id).map_or("PASS", String::as_str),
        };
        if c.verdict.word() != want {
            out.push(format!(
                "  {}: expected {want}, got {} {}",
                c.info.id,
                c.verdict.word(),
                c.verdict.summary()
            ));
        }
    }
    out
}

#[test]
fn capability_limited_runtimes_get_exactly_their_table_of_verdicts() {
    let table = table();
    assert!(table.len() >= 5, "the table lists {} runtimes", table.len());
    let wrong = Mutex::new(Vec::new());
    let next = Mutex::new(table.iter());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(r) = next.lock().unwrap().next() else {
                    return;
                };
                // On fresh processes and on shared ones (issue 38: every verdict the same).
                let mut diff = Vec::new();
                for mode in [Processes::Fresh, Processes::Shared] {
                    match judge(r, mode) {
                        Ok(report) => diff.extend(
                            (differences(r, &report).into_iter())
                                .map(|d| format!("{d} (processes {mode:?})")),
                        ),
                        Err(e) => diff.push(format!("  the suite did not run: {e}")),
                    }
                }
                if !diff.is_empty() {
                    let m = format!("{}\n{}", r.words.join(" "), diff.join("\n"));
                    wrong.lock().unwrap().push(m);
                }
            });
        }
    });
    let wrong = wrong.into_inner().unwrap();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Against a runtime that answers initialize and then "unknown method" to everything, no check
/// that needs a method PASSes: every check whose cases all call one (after initialize) is
/// decided otherwise.
/// A method of the protocol a runtime may lack (not a made-up one a frame check probes with).
fn owned(method: &str) -> bool {
    METHOD_OWNERS.iter().any(|(m, _)| *m == method)
}

#[test]
fn no_check_that_needs_a_method_passes_on_a_runtime_that_has_none() {
    let words = ["node", "unknown_everything.mjs"].map(String::from);
    let r = Limited {
        stub: false,
        words: vec![
            words[0].clone(),
            fixtures().join(&words[1]).to_string_lossy().into_owned(),
        ],
        verdicts: BTreeMap::new(),
    };
    let report = judge(&r, Processes::Shared).unwrap();
    let all = cases::all().unwrap();
    let mut passed_without = Vec::new();
    for c in &report.results {
        let mine: Vec<_> = all.iter().filter(|k| k.check.id == c.info.id).collect();
        let needs = !mine.is_empty() && mine.iter().all(|k| k.methods.iter().any(|m| owned(m)));
        if needs && c.verdict == Verdict::Pass {
            passed_without.push(c.info.id.as_str());
        }
    }
    assert!(passed_without.is_empty(), "{passed_without:?}");
    // Not vacuous: most runtime checks need a method.
    let needing = dsh_conformance::check::of(Subject::Runtime)
        .filter(|c| {
            let mine = all.iter().filter(|k| k.check.id == c.id);
            mine.clone().count() > 0 && mine.clone().all(|k| k.methods.iter().any(|m| owned(m)))
        })
        .count();
    assert!(needing > 25, "{needing}");
}
