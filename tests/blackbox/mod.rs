//! The black-box fuzzer (`dsh-conformance fuzz`) against the reference runtime, its mutants and a
//! runtime that never answers.

use dsh_conformance::blackbox::{self, Allowlist, Deadlines, Options, Summary, Target};
use dsh_conformance::runner::{self, CommandSpec};
use dsh_conformance::trace::Trace;
use std::time::Duration;

const KIT: &str = env!("CARGO_BIN_EXE_dsh-conformance");
const REFERENCE: &str = env!("CARGO_BIN_EXE_dsh-reference-runtime");

fn target(cmd: CommandSpec) -> Target {
    Target::new(cmd)
}

fn reference() -> CommandSpec {
    CommandSpec::new(REFERENCE)
}

fn mutant(name: &str) -> CommandSpec {
    CommandSpec::new(KIT)
        .arg("mutant")
        .arg(name)
        .arg("--")
        .arg(REFERENCE)
}

fn options(subject: CommandSpec, seed: u64, cases: u64) -> Options {
    Options {
        seed,
        cases: Some(cases),
        seconds: None,
        edition: Default::default(),
        subject: target(subject),
        // A different command line for the same runtime: the comparison must not depend on it.
        reference: target(
            CommandSpec::new(KIT)
                .arg("runtime")
                .arg("--edition")
                .arg("current"),
        ),
        differential: false,
        allowlist: Allowlist::default(),
        out: None,
        deadlines: Deadlines::default(),
        shrink_trials: 60,
        shrink_time: Duration::from_secs(120),
        verify: false,
        progress: false,
        strict_upstream: false,
        jobs: 1,
        processes: dsh_conformance::blackbox::ProcessMode::Fresh,
        shard: Default::default(),
        tools: None,
        model_stub: false,
        cancel: Default::default(),
    }
}

fn classes(s: &Summary) -> Vec<String> {
    s.findings
        .iter()
        .map(|r| r.finding.class.to_string())
        .collect()
}

#[test]
fn the_reference_runtime_gives_no_findings_for_a_fixed_seed() {
    let s = blackbox::run(&options(reference(), 11, 40));
    assert_eq!(s.sequences, 40);
    assert!(s.frames_in > 40 && s.frames_out > 40, "{}", s.human());
    assert!(s.findings.is_empty(), "{}", s.human());
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn a_duplicate_response_mutant_is_found_shrunk_and_its_trace_reproduces_it() {
    let out = tempdir("dup");
    let mut o = options(mutant("duplicate-response"), 5, 3);
    o.out = Some(out.clone());
    o.verify = true;
    let s = blackbox::run(&o);
    assert_eq!(s.exit_code(), 1);
    assert_eq!(classes(&s), ["response.exactly-once"], "{}", s.human());
    let r = &s.findings[0];
    assert_eq!(r.count, 3, "every sequence shows it");
    assert!(r.reproduced);
    assert!(r.ops.1 < r.ops.0 && r.ops.1 <= 1, "shrunk: {:?}", r.ops);
    assert_eq!(r.replay, Some((true, true)));
    // The written trace, replayed through the library: fails against the mutant (a second answer
    // nothing expects), passes against the reference runtime.
    let path = r.trace.as_ref().expect("a trace was written");
    let trace = Trace::load(path).expect("the written trace parses");
    let opts = runner::Options::default();
    let bad = runner::replay(&trace, &mutant("duplicate-response"), &opts);
    assert!(!bad.passed(), "{bad}");
    use dsh_conformance::trace::matcher::FailureKind;
    assert!(
        matches!(
            bad.failure().map(|f| f.kind),
            Some(FailureKind::Unexpected | FailureKind::Mismatch)
        ),
        "a second answer nothing expects: {bad}"
    );
    let good = runner::replay(&trace, &reference(), &opts);
    assert!(good.passed(), "{good}");
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn a_mutant_that_never_goes_idle_is_reported() {
    let mut o = options(mutant("no-idle"), 5, 2);
    o.deadlines.settle = Duration::from_secs(2);
    o.shrink_trials = 4;
    let s = blackbox::run(&o);
    assert!(
        classes(&s).contains(&"status.idle-after-turn".to_owned()),
        "{}",
        s.human()
    );
}

#[test]
fn a_runtime_that_never_answers_is_reported_as_hanging() {
    let mut o = options(CommandSpec::new("sleep").arg("100"), 1, 1);
    o.deadlines = Deadlines {
        barrier: Duration::from_secs(1),
        settle: Duration::from_secs(1),
        exit: Duration::from_secs(1),
        adapt: None,
    };
    o.shrink_trials = 2;
    let s = blackbox::run(&o);
    // The first request the fuzzer waits for (the leading initialize, else the barrier).
    assert_eq!(s.findings.len(), 1, "{}", s.human());
    let f = &s.findings[0].finding;
    assert!(
        ["hang:initialize", "hang:barrier"].contains(&f.class.to_string().as_str()),
        "{}",
        s.human()
    );
    assert!(f.detail.contains("not answered within 1s"), "{}", f.detail);
    assert_eq!(s.exit_code(), 1);
}

#[test]
fn a_runtime_that_cannot_start_is_a_usage_error() {
    let s = blackbox::run(&options(CommandSpec::new("/nonexistent/dsh-runtime"), 1, 3));
    assert!(s.broken.is_some());
    assert_eq!(s.exit_code(), 2);
    assert_eq!(s.sequences, 1, "the run stops at once");
}

#[test]
fn differential_mode_finds_no_difference_between_the_reference_and_itself() {
    let mut o = options(reference(), 21, 40);
    o.differential = true;
    let s = blackbox::run(&o);
    assert!(s.findings.is_empty(), "{}", s.human());
}

/// The reference compared with itself, on 2 lanes of shared processes as a night's run, over
/// seeds whose cases showed it differing from itself by what a message's arrival time decides
/// (docs/BLACKBOX.md): a second prompt queued behind a turn or reaching the idle session, its
/// receipt anywhere in the turn, a prompt stalled behind a turn that ended in error, a
/// directory change read by one more step or by the next turn. No difference; and under the
/// same flags, runtimes that break an order the contract fixes or leave an event out are
/// still reported, with the classes of the comparison alone.
#[test]
fn arrival_races_of_the_reference_with_itself_are_no_difference_but_mutants_still_are() {
    let run = |subject: CommandSpec, seed: u64, cases: u64| {
        let mut o = options(subject, seed, cases);
        o.differential = true;
        o.jobs = 2;
        o.processes = blackbox::ProcessMode::Shared;
        o.shrink_trials = 0;
        blackbox::run(&o)
    };
    let mut found = Vec::new();
    for (seed, cases) in [(3, 500), (12, 100), (1, 240), (16, 240)] {
        let s = run(reference(), seed, cases);
        assert_eq!(s.sequences, cases, "{}", s.human());
        if !s.findings.is_empty() {
            found.push(format!("seed {seed}: {}", s.human()));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    for (m, class) in [
        // Idle before the turn's end: an order §5 fixes.
        ("idle-before-turn-end", "diff:events:turn/end->status:idle"),
        // No receipt before a turn: a missing event.
        ("no-receipt", "diff:events:agent/inbox/spliced->turn/start"),
    ] {
        let s = run(mutant(m), 3, 40);
        assert_eq!(classes(&s), [class], "{m}: {}", s.human());
    }
}

#[test]
fn shared_processes_serve_many_sequences_and_find_nothing_in_the_reference() {
    // Sequences that the contract isolates share a process (per lane), on both runtimes; the
    // reference compared with itself must still show nothing.
    let mut o = options(reference(), 21, 60);
    o.differential = true;
    o.jobs = 3;
    o.processes = blackbox::ProcessMode::Shared;
    let s = blackbox::run(&o);
    assert!(s.findings.is_empty(), "{}", s.human());
    assert_eq!(s.sequences, 60, "{}", s.human());
    // Sequences with lifecycle operations, `hang`, subagents or unusual session ids keep a
    // process of their own (24 of these 60 share one).
    assert!(
        s.processes * 4 < s.sequences * 3,
        "processes were not shared: {}",
        s.human()
    );
    // Fresh processes under the same flags: one per sequence.
    o.processes = blackbox::ProcessMode::Fresh;
    let f = blackbox::run(&o);
    assert!(f.findings.is_empty(), "{}", f.human());
    assert_eq!(f.processes, 60, "{}", f.human());
}

#[test]
fn shared_processes_and_parallel_lanes_still_report_a_mutant() {
    // The same mutant as below, found the same way on shared processes in 4 lanes.
    let mut o = options(mutant("idle-before-turn-end"), 4, 24);
    o.differential = true;
    o.jobs = 4;
    o.processes = blackbox::ProcessMode::Shared;
    let s = blackbox::run(&o);
    assert_eq!(
        classes(&s),
        ["diff:events:turn/end->status:idle"],
        "{}",
        s.human()
    );
    assert!(s.processes < s.sequences, "{}", s.human());
    // The good runtime under the same flags: nothing.
    let mut good = options(reference(), 4, 24);
    good.differential = true;
    good.jobs = 4;
    good.processes = blackbox::ProcessMode::Shared;
    let g = blackbox::run(&good);
    assert!(g.findings.is_empty(), "{}", g.human());
}

#[test]
fn lanes_run_every_case_once_and_report_the_first_case_one_lane_reports() {
    // A mutant that answers batches: `frame.batch-ignored` shows in exactly the sequences that
    // write a batch (one in eight keeps its lifecycle ops), however the runs are timed, so its
    // first case is the same with 4 lanes (finishing in any order) as with 1.
    let class = "frame.batch-ignored";
    let first = |jobs: usize| {
        let mut o = options(mutant("batch-supported"), 5, 160);
        o.jobs = jobs;
        o.shrink_trials = 0;
        let s = blackbox::run(&o);
        assert_eq!(s.sequences, 160, "{}", s.human());
        let first = s
            .findings
            .iter()
            .find(|r| r.finding.class.to_string() == class)
            .map(|r| r.case);
        (first, s.human())
    };
    let (four, report) = first(4);
    let (one, _) = first(1);
    assert!(one.is_some_and(|c| c > 0), "{report}");
    assert_eq!(four, one, "{report}");
}

#[test]
fn differential_mode_reports_a_mutant_that_reorders_idle_and_turn_end() {
    // idle-before-turn-end keeps every frame invariant; only the comparison sees it.
    let mut o = options(mutant("idle-before-turn-end"), 4, 6);
    o.differential = true;
    o.shrink_trials = 10;
    let s = blackbox::run(&o);
    assert_eq!(
        classes(&s),
        ["diff:events:turn/end->status:idle"],
        "{}",
        s.human()
    );
    // An allowlist entry with its reason suppresses exactly that class.
    o.allowlist = Allowlist::parse(
        "diff:events:turn/end->status:idle  # known: this runtime reports idle first\n",
        "test",
    )
    .unwrap();
    o.shrink_trials = 0;
    let s = blackbox::run(&o);
    assert!(s.findings.is_empty(), "{}", s.human());
    assert!(s
        .suppressed
        .contains_key("diff:events:turn/end->status:idle"));
}

#[test]
fn the_fuzz_command_exits_0_for_the_reference_and_1_for_a_mutant() {
    let out = tempdir("cli");
    let run = |extra: &[&str]| {
        let mut c = std::process::Command::new(KIT);
        c.args(["fuzz", "--seed", "3", "--cases", "3", "--out"])
            .arg(&out)
            .args(extra);
        c.output().unwrap()
    };
    let ok = run(&[]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("3 sequences"));
    let bad = run(&["--", KIT, "mutant", "duplicate-response", "--", REFERENCE]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("response.exactly-once"));
    let usage = run(&["--allowlist", "/nonexistent/allowlist"]);
    assert_eq!(usage.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(out);
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dsh-blackbox-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The findings kept under fixtures/blackbox/: `<runtime>-bug.*.trace` documents a bug of that
/// runtime, so it must fail against it and pass against the other.
fn findings() -> Vec<(bool, Trace)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/blackbox");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            // open/: findings not yet attributed to one runtime.
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let real_bug = name.starts_with("real-bug.");
        assert!(
            real_bug || name.starts_with("reference-bug."),
            "{name}: expected real-bug.* or reference-bug.*"
        );
        out.push((real_bug, Trace::load(&p).unwrap_or_else(|e| panic!("{e}"))));
    }
    out.sort_by(|a, b| a.1.file.cmp(&b.1.file));
    assert!(
        out.len() >= 2,
        "the two recorded real-runtime bugs are gone"
    );
    out
}

#[test]
fn recorded_findings_hold_against_the_reference_runtime() {
    let opts = runner::Options {
        frame_timeout: Duration::from_secs(20),
        ..runner::Options::default()
    };
    for (real_bug, t) in findings() {
        let r = runner::replay(&t, &reference(), &opts);
        // A reference bug that passes has been fixed: move the trace into the fixtures proper.
        assert_eq!(r.passed(), real_bug, "{}: {r}", t.file);
    }
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn recorded_findings_hold_against_the_real_runtime() {
    let exe =
        crate::support::pypi::need_real_runtime("recorded_findings_hold_against_the_real_runtime");
    let stub = dsh_conformance::model_stub::ModelStub::start().unwrap();
    let opts = runner::Options {
        frame_timeout: Duration::from_secs(30),
        env: stub.env(),
        ..runner::Options::default()
    };
    let cmd = CommandSpec::new(exe).arg("--profile").arg("sdk");
    for (real_bug, t) in findings() {
        let r = runner::replay(&t, &cmd, &opts);
        // A real-runtime bug that passes has been fixed upstream: drop it from the allowlist too.
        assert_eq!(r.passed(), !real_bug, "{}: {r}", t.file);
    }
}

#[test]
fn the_real_runtime_allowlist_parses_and_gives_every_entry_a_reason() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/blackbox-allowlist.real-0.2.1rc2");
    let text = std::fs::read_to_string(&p).unwrap();
    let a = Allowlist::parse(&text, "blackbox-allowlist.real-0.2.1rc2").unwrap();
    assert!(!a.entries.is_empty());
    assert!(a.entries.iter().all(|e| e.reason.len() > 20));
    // The header bug's entry covers session ids with controls or non-Latin-1 characters, as the
    // fuzzer words the finding, and nothing else.
    let idle = |sid: &str| blackbox::Finding {
        class: blackbox::FindingClass::Rule(dsh_conformance::rules::CheckId::StatusIdleAfterTurn),
        detail: format!("sessions never went idle within 10s: {sid:?}"),
    };
    for sid in [
        "a\u{3}b",
        "q3-\u{fffd}-Vv}2\u{ae}",
        "中-wide",
        "tab\there",
        "nul\0",
    ] {
        assert!(a.allows(&idle(sid)).is_some(), "{sid:?} not allowed");
    }
    for sid in ["s1", "q7-s2", "é-latin1", "x y"] {
        assert!(a.allows(&idle(sid)).is_none(), "{sid:?} allowed");
    }
    // A child session missing on the real runtime is allowed for uuid sessions only, and only
    // when it is missing entirely.
    let missing = |sid: &str, item: usize| {
        blackbox::Finding {
        class: blackbox::FindingClass::Diff(
            blackbox::class::DiffKind::Events,
            "agent/inbox/spliced->(end)".into(),
        ),
        detail: format!(
            "session {sid:?}, item {item}: the runtime sent (end), the reference agent/inbox/spliced"
        ),
    }
    };
    assert!(a.allows(&missing("{{uuid#1}}", 0)).is_some());
    assert!(a.allows(&missing("{{uuid#1}}", 4)).is_none());
    assert!(a.allows(&missing("q7-s2", 0)).is_none());
    // A detail with JSON escapes is matched as written (seed 204).
    let said = |runtime: &str, reference: &str| blackbox::Finding {
        class: blackbox::FindingClass::Diff(
            blackbox::class::DiffKind::ToolResult,
            "create_goal".into(),
        ),
        detail: format!(
            r#"session "q4-tools", tool result 3 (create_goal): the runtime said "[error] Error: goal \"goal-{{{{uuid}}}}\" already exists with phase \"{runtime}\"", the reference "[error] Error: goal \"goal-{{{{uuid}}}}\" already exists with phase \"{reference}\"""#
        ),
    };
    assert!(a
        .allows(&said("active", "blocked"))
        .is_some_and(|e| e.reason.contains("still active")));
    assert!(a.allows(&said("blocked", "active")).is_none());
}

#[test]
fn a_written_trace_replays_through_the_replay_command() {
    // The CLI path of the same check: the duplicate-response finding's trace fails (exit 1)
    // against the mutant and passes (exit 0) against the reference.
    let out = tempdir("cli-replay");
    let mut o = options(mutant("duplicate-response"), 8, 1);
    o.out = Some(out.clone());
    let s = blackbox::run(&o);
    let path = s.findings[0].trace.clone().expect("a trace");
    let replay = |cmd: &[&str]| {
        std::process::Command::new(KIT)
            .arg("replay")
            .arg(&path)
            .arg("--")
            .args(cmd)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(replay(&[REFERENCE]), Some(0));
    assert_eq!(
        replay(&[KIT, "mutant", "duplicate-response", "--", REFERENCE]),
        Some(1)
    );
    let _ = std::fs::remove_dir_all(out);
}

/// A mutant of the reference runtime whose every frame is also written with a space after
/// `"jsonrpc":` (valid JSON, not as JSON.stringify writes it): `stdout.compact` everywhere.
fn spaced(name: &str) -> CommandSpec {
    let script = format!(
        "'{KIT}' mutant {name} -- '{REFERENCE}' | sed -u 's/^{{\"jsonrpc\":/{{\"jsonrpc\": /'"
    );
    CommandSpec::new("sh").arg("-c").arg(script)
}

#[test]
fn two_stream_rules_broken_at_once_are_both_reported_without_misleading_traces() {
    let out = tempdir("two-rules");
    let mut o = options(spaced("seq-gap"), 5, 4);
    o.differential = true;
    o.out = Some(out.clone());
    o.verify = true;
    o.shrink_trials = 6;
    let s = blackbox::run(&o);
    let mut got = classes(&s);
    got.sort();
    assert_eq!(
        got,
        ["session.seq-contiguous", "stdout.compact"],
        "{}",
        s.human()
    );
    for r in &s.findings {
        assert_eq!(
            r.finding.class.check().map(|c| c.as_str().to_owned()),
            Some(r.finding.class.to_string())
        );
        // Each gets a trace of the stream rules, which names its class: its replay fails for
        // that class (among the rules broken) and passes against the reference.
        let path = r.trace.as_ref().unwrap_or_else(|| panic!("{}", s.human()));
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.contains(&format!("# class: {}\n", r.finding.class)),
            "{text}"
        );
        assert_eq!(r.replay, Some((true, true)), "{}", s.human());
    }
    let _ = std::fs::remove_dir_all(out);
    // The reference runtime under the same flags: nothing.
    let mut o = options(reference(), 5, 4);
    o.differential = true;
    o.shrink_trials = 6;
    let s = blackbox::run(&o);
    assert!(s.findings.is_empty(), "{}", s.human());
}

#[test]
fn a_formatting_class_does_not_mask_the_differential_comparison() {
    // Every frame breaks stdout.compact; the idle/turn-end reorder is still found by comparison.
    let mut o = options(spaced("idle-before-turn-end"), 4, 6);
    o.differential = true;
    o.shrink_trials = 0;
    let s = blackbox::run(&o);
    let mut got = classes(&s);
    got.sort();
    assert_eq!(
        got,
        ["diff:events:turn/end->status:idle", "stdout.compact"],
        "{}",
        s.human()
    );
}

/// `dsh-conformance fuzz` itself: its exit code, stdout and stderr.
fn fuzz_cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(KIT)
        .arg("fuzz")
        .args(args)
        .output()
        .expect("the kit runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_runtime_that_doubles_its_responses_is_one_finding_class() {
    let dir = tempdir("one-class");
    let d = dir.to_str().unwrap();
    let common = ["--cases", "20", "--seed", "1", "--no-verify", "--jobs", "2"];
    let (code, out, err) = fuzz_cli(&[&common[..], &["--out", d, "--", KIT, "runtime"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("findings: 0 class(es)"), "{out}");
    // Before, the repeats were filed under whatever rule the checker saw each one break (the
    // other request of a shared id, a notification of id null …): five classes for one bug.
    let mutant = [KIT, "mutant", "duplicate-response", "--", KIT, "runtime"];
    let (code, out, err) = fuzz_cli(&[&common[..], &["--out", d, "--"], &mutant[..]].concat());
    assert_eq!(code, 1, "{out}{err}");
    // Every case is filed under the repeat's rule. Under a heavy load a late repeat can still
    // land in another phase of its case and show as a second class (seen in CI with the hostile
    // tests running beside it): the test asserts the class, and that it holds (nearly) every
    // case, rather than a count of classes a loaded machine can move.
    let count = out
        .split("response.exactly-once ×")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<u32>().ok());
    assert!(count.is_some_and(|n| n >= 18), "{out}");
    if !out.contains("findings: 1 class(es)") {
        eprintln!("the duplicate-response mutant gave more than one class under load:\n{out}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn shards_together_run_exactly_the_cases_of_an_unsharded_run() {
    let whole = blackbox::run(&options(reference(), 3, 9));
    let mut cases = Vec::new();
    for k in 1..=2 {
        let mut o = options(reference(), 3, 9);
        o.jobs = 2;
        o.shard = format!("{k}/2").parse().unwrap();
        let s = blackbox::run(&o);
        assert!(s.cases.iter().all(|c| c % 2 == k - 1), "{:?}", s.cases);
        cases.extend(s.cases);
    }
    cases.sort_unstable();
    assert_eq!(whole.cases, (0..9).collect::<Vec<u64>>());
    assert_eq!(cases, whole.cases);
    assert!("0/2".parse::<blackbox::Shard>().is_err());
    assert!("3/2".parse::<blackbox::Shard>().is_err());
}

#[test]
fn merge_joins_the_classes_and_reproducers_of_several_out_directories() {
    let dirs: Vec<_> = (1..=2).map(|k| tempdir(&format!("shard{k}"))).collect();
    for (k, dir) in (1..=2).zip(&dirs) {
        let mut o = options(mutant("duplicate-response"), 5, 4);
        o.shard = format!("{k}/2").parse().unwrap();
        o.out = Some(dir.clone());
        let s = blackbox::run(&o);
        assert_eq!(classes(&s), ["response.exactly-once"], "{}", s.human());
        blackbox::merge::write(&s, dir).unwrap();
    }
    let out = tempdir("merged");
    let from: Vec<&std::path::Path> = dirs.iter().map(|d| d.as_path()).collect();
    let m = blackbox::merge::merge(&from, &out).unwrap();
    assert_eq!((m.runs, m.sequences), (2, 4));
    assert_eq!(m.classes.len(), 1, "{}", m.human());
    let (count, trace) = &m.classes["response.exactly-once"];
    assert_eq!(*count, 4);
    let trace = trace.as_ref().expect("a reproducer is kept");
    assert!(out.join(trace).is_file());
    assert!(out.join(blackbox::merge::FINDINGS).is_file());
    // Merging the merged directory with a shard again adds counts, not classes.
    let again = blackbox::merge::merge(&[out.as_path(), from[0]], &out).unwrap();
    assert_eq!(again.classes.len(), 1);
    for d in dirs.iter().chain([&out]) {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn an_unwritable_out_directory_is_an_error_not_a_lost_reproducer() {
    // Checked before the run starts.
    let (code, out, err) = fuzz_cli(&["--cases", "1", "--out", "/proc/dsh-conformance-out"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--out: cannot write to /proc/dsh-conformance-out"),
        "{err}"
    );
    assert!(blackbox::check_out_dir(std::path::Path::new("/dev/full/x")).is_err());
    // A write that fails during the run (the library does not check beforehand): reported, exit 2.
    let mut o = options(mutant("duplicate-response"), 5, 1);
    o.out = Some("/proc/dsh-conformance-out".into());
    let s = blackbox::run(&o);
    assert_eq!(s.exit_code(), 2, "{}", s.human());
    assert_eq!(s.write_errors().count(), 1, "{}", s.human());
    assert!(
        s.human().contains("ERROR: trace lost: cannot write"),
        "{}",
        s.human()
    );
}

mod toolcalls;

/// Work a runtime does on its own once idle (a subagent's end reaching its parent, an active
/// goal's rounds) starts a few ms late on the release, and a `shutdown` sent before it begins
/// ends it unseen. The run waits for it before its ending: behind a proxy that starts it 300 ms
/// late (and drops it at a shutdown), the reference shows what it shows unproxied.
#[test]
fn a_run_waits_for_the_work_a_runtime_does_on_its_own_once_idle() {
    use dsh_conformance::blackbox::sequence::{initialize, End, Sequence};
    use dsh_conformance::blackbox::{diff, exec, toolcall};
    use dsh_conformance::directive::Directive;
    let proxy = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/runtimes/late_own_work.py"
    );
    let late = CommandSpec::new("python3")
        .arg(proxy)
        .arg("--")
        .arg(REFERENCE);
    let plain = CommandSpec::new(REFERENCE);
    let rules = dsh_conformance::rules::Profile::for_edition(Default::default(), false);
    // One prompt each: its receipt comes before any late work (the proxy holds notifications).
    // Each with the event its late work shows, and how often: the notice turn's end report, or
    // the goal's creation and its block after its round.
    let subagent = r#"{"description":"d","prompt":"reply: c"}"#;
    let goal = r#"{"objective":"o","max_goal_rounds":1}"#;
    for (tool, input, shows, times) in [
        ("subagent", subagent, "subagent.finished", 1),
        ("create_goal", goal, "goal/change", 2),
    ] {
        let call = Directive::Call {
            tool: tool.into(),
            input: input.into(),
        };
        let seq = Sequence {
            ops: vec![initialize(), toolcall::prompt(call, 0)],
            end: End::Shutdown,
        };
        let run = |c: &CommandSpec| {
            let sdk = c.clone().arg("--profile").arg("sdk");
            exec::run_sequence(&seq, &target(sdk), &rules, Deadlines::default())
        };
        let (late, plain) = (run(&late), run(&plain));
        assert!(late.findings.is_empty(), "{tool}: {:?}", late.findings);
        let events = &late.observed.events[toolcall::TOOL_SESSION];
        let seen = events.iter().filter(|e| *e == shows).count();
        assert_eq!(seen, times, "{tool}: {events:?}");
        let d = diff::compare(&late.observed, &plain.observed);
        assert!(d.is_empty(), "{tool}: {d:?}");
    }
}

/// `fixtures/runtimes/naive_runtime.py`, the Python runtime with one bug per rule it breaks.
const NAIVE_PY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/runtimes/naive_runtime.py"
);

/// `dsh-conformance replay <trace> -- <cmd>`: its exit code and stdout.
fn replay_cli(trace: &std::path::Path, cmd: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(KIT)
        .arg("replay")
        .arg(trace)
        .arg("--")
        .args(cmd)
        .output()
        .expect("the kit runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn every_class_a_fuzz_run_of_the_python_runtime_finds_gets_a_trace_that_replays_to_it() {
    // Issue 39, item 3: before, 1 of 12 classes got a trace, and that one SKIPped in replay
    // (`# requires: model` on a runtime fuzzed without the stub).
    let dir = tempdir("naive-py");
    let d = dir.to_str().unwrap();
    let args = [
        "--seed",
        "1",
        "--cases",
        "4",
        "--jobs",
        "2",
        "--shrink-trials",
        "8",
        "--timeout",
        "20s",
        "--out",
        d,
        "--",
        "python3",
        NAIVE_PY,
    ];
    let (code, out, err) = fuzz_cli(&args);
    assert_eq!(code, 1, "{out}{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("findings.json")).unwrap()).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    // Its first four cases show seven classes (stdout.compact, error.unknown-method, event.time,
    // frame.*, response.exactly-once, lifecycle.shutdown-exits-0 …).
    assert!(findings.len() >= 5, "{out}");
    for f in findings {
        let class = f["class"].as_str().unwrap();
        let Some(name) = f["trace"].as_str() else {
            panic!("{class}: no trace ({}):\n{out}", f["note"]);
        };
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        // Fuzzed without the stub, so replayed without it: nothing the replay would SKIP.
        assert!(!text.contains("# requires:"), "{text}");
        assert!(text.contains(&format!("# class: {class}\n")), "{text}");
        let (code, said) = replay_cli(&path, &["python3", NAIVE_PY]);
        assert_eq!(
            code,
            Some(1),
            "{class}: replay against the Python runtime:\n{said}"
        );
        // The class is named among the rules broken, or (an ending class) the exit fails.
        let named = said
            .lines()
            .any(|l| l.trim_start().starts_with(&format!("{class}:")));
        let ending = class.starts_with("lifecycle.") && said.contains("== exit 0");
        assert!(named || ending, "{class}: replay does not show it:\n{said}");
        let (code, said) = replay_cli(&path, &[REFERENCE]);
        assert_eq!(
            code,
            Some(0),
            "{class}: replay against the reference:\n{said}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_interrupted_fuzz_run_still_writes_its_summary_and_findings_json() {
    let dir = tempdir("sigint");
    let mut child = std::process::Command::new(KIT)
        .args([
            "fuzz",
            "--seed",
            "1",
            "--seconds",
            "300",
            "--jobs",
            "2",
            "--out",
        ])
        .arg(&dir)
        .args(["--", "python3", NAIVE_PY])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the kit runs");
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: a plain kill(2) of the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let began = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("the fuzz run did not end within 90 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stdout}{stderr}");
    assert!(stdout.contains("interrupted by SIGINT"), "{stdout}");
    assert!(stdout.contains("findings: "), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("findings.json")).unwrap()).unwrap();
    assert_eq!(
        doc["runs"][0]["interrupted"], "interrupted by SIGINT",
        "{doc}"
    );
    // Every class found by then is listed, each with its (unverified) trace.
    for f in doc["findings"].as_array().unwrap() {
        let name = f["trace"]
            .as_str()
            .unwrap_or_else(|| panic!("{f}\n{stdout}"));
        assert!(dir.join(name).is_file(), "{f}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn replay_starts_the_model_stub_for_a_trace_that_requires_it() {
    // A fuzz finding of a runtime fuzzed with --model-stub says `# requires: model-stub`: replay
    // runs it with the stub, where `# requires: model` would SKIP without --provides.
    let dir = tempdir("requires-stub");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("needs-stub.trace");
    std::fs::write(
        &path,
        "# case: needs-stub\n# requires: model-stub\n\
         >> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"cwd\":\"/\",\
         \"provider\":\"deepseek-official\",\"model\":\"deepseek-v4-flash\"}}\n\
         << {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"{{object}}\"}\n",
    )
    .unwrap();
    let out = std::process::Command::new(KIT)
        .arg("replay")
        .arg(&path)
        .args(["--", REFERENCE])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(stderr.contains("requires the model stub"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A turn that takes long while the runtime visibly asks its model (a release retrying an empty
/// reply with back-off) is not a hang: the settle wait grows with the model stub's requests. Without
/// the stub watched, the same runtime is a finding; and one that stops asking and never ends its
/// turn is still one, found within a bounded wait.
#[test]
fn waits_grow_with_the_model_requests_a_runtime_visibly_makes() {
    use dsh_conformance::blackbox::sequence::{initialize, End, Sequence};
    use dsh_conformance::blackbox::{exec, toolcall};
    use dsh_conformance::directive::Directive;
    use dsh_conformance::model_stub::ModelStub;
    use std::sync::Arc;
    use std::time::Instant;
    let runtime = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/runtimes/chat_completions_runtime.py"
    );
    let stub = Arc::new(ModelStub::start().expect("model stub"));
    let rules = dsh_conformance::rules::Profile::for_edition(Default::default(), false);
    let seq = Sequence {
        ops: vec![
            initialize(),
            toolcall::prompt(Directive::Reply("done".into()), 0),
        ],
        end: End::Shutdown,
    };
    let dl = Deadlines {
        settle: Duration::from_secs(1),
        ..Deadlines::default()
    };
    let run = |pacing: &str, watched: bool| {
        let mut env = stub.env();
        env.push(("DSH_MODEL_PACING".into(), pacing.into()));
        let t = Target {
            cmd: CommandSpec::new("python3").arg(runtime),
            env,
            model: watched.then(|| Arc::clone(&stub)),
        };
        let began = Instant::now();
        let r = exec::run_sequence(&seq, &t, &rules, dl);
        let idle = r
            .findings
            .iter()
            .any(|f| f.detail.contains("never went idle"));
        (r.findings, idle, began.elapsed())
    };
    // Requests 0.4, 0.8 and 1.6 s apart, then the answer: about 3 s of work, the settle 1 s.
    let (findings, _, took) = run("0.4,0.8,1.6", true);
    assert!(findings.is_empty(), "{findings:?}");
    assert!(took > Duration::from_millis(2500), "{took:?}");
    let (findings, idle, _) = run("0.4,0.8,1.6", false);
    assert!(idle && findings.len() == 1, "unwatched: {findings:?}");
    let (findings, idle, took) = run("0.4,hang", true);
    assert!(
        idle && findings.len() == 1,
        "a hang after asking: {findings:?}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// `--processes auto` measures the runtime's boot once: one slow to start (behind a wrapper
/// that sleeps 1.2 s) gets shared processes, and a mutant behind the same wrapper is still
/// found; the reference, quick to start, keeps a process per sequence.
#[test]
fn a_slow_starting_runtime_gets_shared_processes_and_its_bug_is_still_found() {
    let dir = tempdir("slow-boot");
    let d = dir.to_str().unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let slow = dir.join("slow.sh");
    std::fs::write(&slow, "#!/bin/sh\nsleep 1.2\nexec \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    let slow = slow.to_str().unwrap();
    let common = [
        "--cases",
        "8",
        "--seed",
        "3",
        "--no-verify",
        "--out",
        d,
        "--",
    ];
    let shared = "share processes";
    let (code, out, err) = fuzz_cli(&[&common[..], &[slow, REFERENCE]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains(shared), "{err}");
    let started = |out: &str| {
        let n = out.split(" runtime process(es)").next().unwrap_or("");
        n.rsplit(' ').next().and_then(|n| n.parse::<u32>().ok())
    };
    assert!(started(&out).is_some_and(|n| n < 8), "{out}");
    let mutant = [slow, KIT, "mutant", "duplicate-response", "--", REFERENCE];
    let (code, out, err) = fuzz_cli(&[&common[..], &mutant[..]].concat());
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("response.exactly-once"), "{out}");
    let (code, out, err) = fuzz_cli(&[&common[..], &[REFERENCE]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains(shared), "{err}");
    assert!(started(&out).is_some_and(|n| n >= 8), "{out}");
    let _ = std::fs::remove_dir_all(dir);
}
