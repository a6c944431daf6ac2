//! `replay`, `record`, `import`, `fuzz` and `bench` pointed at hostile runtimes (issue 10): each
//! fails loudly with the runtime's own words, in bounded time and memory, with the exit code a
//! CI job can act on (1 a finding, 2 a runtime that cannot start).

use super::{KIT, RUNTIME};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A hostile test runtime (tests/hostile/runtimes/).
fn hostile(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile/runtimes")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A fresh directory for one test's files.
fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "dsh-subcommands-{tag}-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A script the hostile runtimes answer the first request of: initialize, a probe, shutdown.
const SCRIPT: &str = "\
# case: hostile.probe
>> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"cwd\":\"{{cwd}}\",\"provider\":\"deepseek-official\",\"model\":\"deepseek-v4-flash\"}}
<< {\"id\":1}
>> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"probe/x\"}
<< {\"id\":2}
>> {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"shutdown\"}
<< {\"id\":3}
== exit 0
";

fn script(dir: &Path) -> String {
    let p = dir.join("script.trace");
    std::fs::write(&p, SCRIPT).unwrap();
    p.to_string_lossy().into_owned()
}

/// What one run of the kit did.
struct Ran {
    code: Option<i32>,
    /// Stdout and stderr together.
    out: String,
    wall: Duration,
    /// Peak RSS of the kit process (VmHWM, sampled until it exits), in KiB.
    peak_kib: u64,
}

/// Runs the kit with `args` in `cwd`, sampling its peak RSS; kills it after `limit`.
fn run_kit(args: &[&str], cwd: &Path, limit: Duration) -> Ran {
    let started = Instant::now();
    let dir = temp_dir("out");
    let (o, e) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new(KIT)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    let code = loop {
        if let Some(kib) = std::fs::read_to_string(&status).ok().and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            l.split_whitespace().nth(1)?.parse::<u64>().ok()
        }) {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`dsh-conformance {}` still ran after {limit:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = std::fs::read_to_string(&o).unwrap() + &std::fs::read_to_string(&e).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Ran {
        code,
        out,
        wall: started.elapsed(),
        peak_kib,
    }
}

/// The rest of `bench`'s table row for `workload`, whatever the column padding before it.
fn bench_row<'a>(out: &'a str, workload: &str) -> Option<&'a str> {
    out.lines()
        .find_map(|l| l.strip_prefix(workload))
        .map(str::trim_start)
}

fn with_cmd<'a>(args: &[&'a str], cmd: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    v.push("--");
    v.extend_from_slice(cmd);
    v
}

#[test]
fn each_of_replay_record_and_import_has_its_own_help() {
    let help = |sub: &str| run_kit(&[sub, "--help"], Path::new("."), Duration::from_secs(30));
    let (r, c, i) = (help("replay"), help("record"), help("import"));
    for (h, own) in [(&r, "--bless"), (&c, "--script"), (&i, "<RAW>")] {
        assert_eq!(h.code, Some(0), "{}", h.out);
        assert!(h.out.contains(own), "{}", h.out);
    }
    assert!(!r.out.contains("--script") && !c.out.contains("--bless"));
    assert!(r.out.contains("dsh-conformance replay"), "{}", r.out);
    assert!(c.out.contains("dsh-conformance record"), "{}", c.out);
    assert!(i.out.contains("dsh-conformance import"), "{}", i.out);
}

#[test]
fn import_creates_a_missing_output_directory() {
    let dir = temp_dir("import").join("fresh/nested");
    let raw =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/real-0.2.1rc2/raw/sigint_idle.jsonl");
    let r = run_kit(
        &["import", raw.to_str().unwrap(), "-o", dir.to_str().unwrap()],
        Path::new("."),
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(dir.join("sigint_idle.trace").is_file());
}

#[test]
fn record_fails_with_exit_1_and_the_runtimes_words_when_it_exits_early() {
    let dir = temp_dir("record-exit3");
    let out = dir.join("out.trace");
    let s = script(&dir);
    let args = ["record", "--script", &s, "-o", out.to_str().unwrap()];
    let r = run_kit(
        &with_cmd(&args, &[&hostile("init_then.py"), "exit3"]),
        &dir,
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(r.out.contains("exit code 3"), "{}", r.out);
    assert!(r.out.contains("before the script was done"), "{}", r.out);
    assert!(
        r.out.contains("hostile: initialized, now exit3"),
        "{}",
        r.out
    );
    assert!(
        !out.exists(),
        "a failed recording is not written as a trace"
    );
    let partial = std::fs::read_to_string(dir.join("out.trace.partial")).unwrap();
    assert!(partial.starts_with("# INCOMPLETE RECORDING"), "{partial}");
    assert!(partial.contains("\"serverInfo\""), "{partial}");
}

#[test]
fn record_fails_with_exit_1_when_a_request_is_never_answered() {
    let dir = temp_dir("record-silent");
    let s = script(&dir);
    let args = ["record", "--script", &s, "--max-wait", "1s"];
    let r = run_kit(
        &with_cmd(&args, &[&hostile("init_then.py"), "silent"]),
        &dir,
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(r.out.contains("never answered request(s) 2"), "{}", r.out);
    assert!(
        r.out.contains("hostile: initialized, now silent"),
        "{}",
        r.out
    );
    assert!(!r.out.contains(">> {"), "no trace on stdout: {}", r.out);
}

#[test]
fn record_holds_the_runtime_to_the_scripts_exit_code() {
    let dir = temp_dir("record-exit-code");
    let p = dir.join("script.trace");
    std::fs::write(&p, SCRIPT.replace("== exit 0", "== exit 7")).unwrap();
    let args = ["record", "--script", p.to_str().unwrap()];
    let r = run_kit(&with_cmd(&args, &[RUNTIME]), &dir, Duration::from_secs(60));
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out
            .contains("ended with exit code 0; the script expects `== exit 7`"),
        "{}",
        r.out
    );
    // The same script with the right code records.
    std::fs::write(&p, SCRIPT).unwrap();
    let r = run_kit(&with_cmd(&args, &[RUNTIME]), &dir, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(r.out.contains("== exit 0"), "{}", r.out);
}

#[test]
fn record_exits_2_with_the_fatal_line_when_the_runtime_cannot_start() {
    let dir = temp_dir("record-fatal");
    let s = script(&dir);
    let args = ["record", "--script", &s];
    let r = run_kit(
        &with_cmd(&args, &[&hostile("fatal.sh")]),
        &dir,
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(2), "{}", r.out);
    assert!(
        r.out.contains("without writing anything on stdout"),
        "{}",
        r.out
    );
    assert!(r.out.contains("FATAL: config file"), "{}", r.out);
    let r = run_kit(
        &with_cmd(&args, &["/nonexistent/runtime"]),
        &dir,
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(2), "{}", r.out);
    assert!(
        r.out.contains("cannot start `/nonexistent/runtime`"),
        "{}",
        r.out
    );
}

#[test]
fn replay_shows_the_runtimes_words_when_it_exits_or_goes_silent() {
    let dir = temp_dir("replay-words");
    let s = script(&dir);
    let args = ["replay", &s, "--frame-timeout", "1s"];
    for (mode, what) in [("exit3", "exit code 3"), ("silent", "never arrived")] {
        let r = run_kit(
            &with_cmd(&args, &[&hostile("init_then.py"), mode]),
            &dir,
            Duration::from_secs(30),
        );
        assert_eq!(r.code, Some(1), "{}", r.out);
        assert!(r.out.contains(what), "{}", r.out);
        assert!(
            r.out.contains(&format!("hostile: initialized, now {mode}")),
            "{}",
            r.out
        );
    }
    let r = run_kit(
        &with_cmd(&args, &[&hostile("fatal.sh")]),
        &dir,
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(2), "{}", r.out);
    assert!(r.out.contains("FATAL: config file"), "{}", r.out);
}

/// Peak RSS any subcommand may reach against a flooding runtime.
const RSS_BOUND_KIB: u64 = 128 * 1024;

/// The arguments of `sub` against a runtime, quick settings for hostile ones.
fn sub_args(sub: &str, script: &str) -> Vec<String> {
    let v: &[&str] = match sub {
        "record" => &["record", "--script", script, "--max-wait", "5s"],
        "replay" => &["replay", script, "--frame-timeout", "5s"],
        "fuzz" => &[
            "fuzz",
            "--seconds",
            "4",
            "--timeout",
            "2",
            "--seed",
            "1",
            "--no-verify",
            // One lane: a flooding process then has the CPU to reach the per-process bound
            // before its first deadline (lanes that share a loaded CPU each see a slower flood,
            // reported as non-JSON output and hangs instead).
            "--jobs",
            "1",
        ],
        "bench" => &[
            "bench",
            "--frames",
            "100",
            "--prompts",
            "10",
            "--prompt-sessions",
            "2",
            "--sessions",
            "10",
            "--cold-runs",
            "1",
            "--timeout",
            "5",
        ],
        _ => unreachable!("{sub}"),
    };
    v.iter().map(|s| s.to_string()).collect()
}

/// Runs `sub` (with [`sub_args`]) against the runtime `rt` in `dir`.
fn run_sub(sub: &str, script: &str, rt: &[String], dir: &Path) -> Ran {
    run_sub_with(sub_args(sub, script), rt, dir)
}

/// [`sub_args`] with a fuzz deadline that leaves a flood the time to reach its bound on a loaded
/// machine (the fuzzer's waits grow while a runtime writes, up to this ceiling; the run still
/// ends at `--seconds`).
fn flood_args(sub: &str, script: &str) -> Vec<String> {
    let mut args = sub_args(sub, script);
    if sub == "fuzz" {
        let at = args
            .iter()
            .position(|a| a == "--timeout")
            .expect("--timeout");
        args[at + 1] = "10".into();
    }
    args
}

/// Runs the subcommand `args` against the runtime `rt` in `dir`.
fn run_sub_with(mut args: Vec<String>, rt: &[String], dir: &Path) -> Ran {
    let sub = args[0].clone();
    if sub == "fuzz" {
        args.extend([
            "--out".into(),
            dir.join("findings").to_string_lossy().into_owned(),
        ]);
    }
    args.push("--".into());
    args.extend(rt.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_kit(&args, dir, Duration::from_secs(60))
}

#[test]
fn every_subcommand_bounds_a_flood_in_time_and_memory() {
    let dir = temp_dir("flood");
    let s = script(&dir);
    for sub in ["record", "replay", "fuzz", "bench"] {
        for rt in [
            vec![hostile("yes_a.sh")],
            vec![hostile("init_then.py"), "flood".into()],
        ] {
            let r = run_sub_with(flood_args(sub, &s), &rt, &dir);
            let what = format!("{sub} against {}", rt.join(" "));
            assert_eq!(r.code, Some(1), "{what}: {}", r.out);
            assert!(r.out.contains("flooded stdout"), "{what}: {}", r.out);
            assert!(r.wall < Duration::from_secs(30), "{what}: {:?}", r.wall);
            assert!(
                r.peak_kib < RSS_BOUND_KIB,
                "{what}: peak RSS {} KiB",
                r.peak_kib
            );
        }
    }
}

#[test]
fn every_subcommand_shows_the_words_of_a_runtime_that_cannot_start() {
    let dir = temp_dir("fatal");
    let s = script(&dir);
    for sub in ["record", "replay", "fuzz", "bench"] {
        let r = run_sub(sub, &s, &[hostile("fatal.sh")], &dir);
        assert_eq!(r.code, Some(2), "{sub}: {}", r.out);
        assert!(
            r.out
                .contains("FATAL: config file /nonexistent/dsh.toml not found"),
            "{sub}: {}",
            r.out
        );
    }
}

#[test]
fn bench_keeps_its_deadline_per_workload_says_what_it_runs_and_gives_up_on_a_silent_runtime() {
    let dir = temp_dir("bench-silent");
    let rt = [hostile("init_then.py"), "silent".into()];
    let r = run_sub("bench", "", &rt, &dir);
    assert_eq!(r.code, Some(1), "{}", r.out);
    // Cold start passes; cheap frames times out at its 5 s deadline with the runtime's words;
    // the rest are skipped, not waited for again.
    assert!(r.wall < Duration::from_secs(20), "{:?}\n{}", r.wall, r.out);
    assert!(r.out.contains("bench: 1/4 cold start"), "{}", r.out);
    assert!(r.out.contains("bench: 2/4 cheap frames"), "{}", r.out);
    assert!(
        r.out
            .contains("FAILED: timed out after 5.0 s waiting for the answers to 100 probe/x"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("hostile: initialized, now silent"),
        "{}",
        r.out
    );
    assert_eq!(
        bench_row(&r.out, "echo prompts"),
        Some("skipped: the runtime answered nothing in `cheap frames`"),
        "{}",
        r.out
    );
    // A runtime that dies mid-workload: its exit and its words.
    let rt = [hostile("init_then.py"), "exit3".into()];
    let r = run_sub("bench", "", &rt, &dir);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(r.out.contains("ended (exit code 3)"), "{}", r.out);
    assert!(
        r.out.contains("hostile: initialized, now exit3"),
        "{}",
        r.out
    );
}

#[test]
fn bench_starts_a_relative_program_from_the_callers_directory_and_exits_2_when_it_cannot() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/runtimes");
    let r = run_sub("bench", "", &["./fatal.sh".into()], &dir);
    assert_eq!(r.code, Some(2), "{}", r.out);
    assert!(
        r.out.contains("FATAL: config file"),
        "found and started: {}",
        r.out
    );
    let r = run_sub("bench", "", &["/nonexistent/runtime".into()], &dir);
    assert_eq!(r.code, Some(2), "{}", r.out);
    assert!(r.out.contains("cannot start the runtime"), "{}", r.out);
    assert!(
        bench_row(&r.out, "cheap frames").is_some_and(|r| r.starts_with("skipped: ")),
        "{}",
        r.out
    );
}

#[test]
fn fuzz_keeps_its_time_budget_against_silent_and_flooding_runtimes() {
    let dir = temp_dir("fuzz-budget");
    for mode in ["silent", "flood"] {
        let rt = [hostile("init_then.py"), mode.into()];
        // --seconds 4, --timeout 2: shrinking and the traces' checks included.
        let mut args = sub_args("fuzz", "");
        args.extend([
            "--out".into(),
            dir.join("findings").to_string_lossy().into_owned(),
        ]);
        args.retain(|a| a != "--no-verify");
        args.push("--".into());
        args.extend(rt.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run_kit(&args, &dir, Duration::from_secs(60));
        assert_eq!(r.code, Some(1), "{mode}: {}", r.out);
        assert!(
            r.wall < Duration::from_secs(7),
            "{mode}: {:?}\n{}",
            r.wall,
            r.out
        );
        assert!(
            r.out.contains(&format!("hostile: initialized, now {mode}")),
            "{mode}: {}",
            r.out
        );
    }
    // With less time than one sequence needs, nothing is tested: exit 2, and it says why.
    let rt = [hostile("init_then.py"), "silent".into()];
    let mut args = vec![
        "fuzz",
        "--seconds",
        "1",
        "--timeout",
        "5",
        "--seed",
        "1",
        "--",
    ];
    args.extend(rt.iter().map(String::as_str));
    let r = run_kit(&args, &dir, Duration::from_secs(60));
    assert!(r.wall < Duration::from_secs(4), "{:?}\n{}", r.wall, r.out);
    assert!(r.out.contains("cut short by the time budget"), "{}", r.out);
    assert!(
        r.out.contains("waiting for the barrier's answer"),
        "{}",
        r.out
    );
}

#[test]
fn record_waits_for_answers_to_requests_only() {
    // A client's response sent to the runtime is owed no answer: recording on is no failure.
    let dir = temp_dir("record-client-response");
    let p = dir.join("script.trace");
    let text = SCRIPT.replace(
        ">> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"probe/x\"}\n<< {\"id\":2}\n",
        ">> {\"jsonrpc\":\"2.0\",\"id\":\"c\",\"result\":{}}\n>> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"probe/x\"}\n<< {\"id\":2}\n",
    );
    assert_ne!(text, SCRIPT);
    std::fs::write(&p, text).unwrap();
    let args = [
        "record",
        "--script",
        p.to_str().unwrap(),
        "--max-wait",
        "2s",
    ];
    let r = run_kit(&with_cmd(&args, &[RUNTIME]), &dir, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(r.out.contains("\"id\":\"c\""), "{}", r.out);
}

/// `replay` judges the stream rules over each conversation with the judge `check` uses: a trace
/// that matches still FAILs, naming the rule, when what the runtime wrote breaks one; the
/// reference passes under the same flags, and `--trace-only` judges the expectations alone.
#[test]
fn replay_judges_the_stream_rules_of_each_conversation() {
    let dir = temp_dir("replay-stream");
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/checks/prompt.message-id.trace");
    let trace = trace.to_str().unwrap();
    let args = ["replay", trace, "--model-stub"];
    let limit = Duration::from_secs(60);
    let good = run_kit(&with_cmd(&args, &[RUNTIME]), &dir, limit);
    assert_eq!(good.code, Some(0), "{}", good.out);
    assert!(good.out.contains("1 passed, 0 failed"), "{}", good.out);
    let mutant = [KIT, "mutant", "seq-gap", "--", RUNTIME];
    let bad = run_kit(&with_cmd(&args, &mutant), &dir, limit);
    assert_eq!(bad.code, Some(1), "{}", bad.out);
    assert!(bad.out.contains("the trace matched, but"), "{}", bad.out);
    assert!(bad.out.contains("session.seq-contiguous: "), "{}", bad.out);
    assert!(
        !bad.out.contains("event.time"),
        "one rule, one finding: {}",
        bad.out
    );
    let only = ["replay", trace, "--model-stub", "--trace-only"];
    let lenient = run_kit(&with_cmd(&only, &mutant), &dir, limit);
    assert_eq!(lenient.code, Some(0), "{}", lenient.out);
}

/// A script whose last send is `shutdown` records the runtime's exit 0 without an `== exit 0`
/// line of its own (the contract's §3.6 implies it); one that exits otherwise fails, saying so.
#[test]
fn record_takes_a_last_shutdown_request_as_an_exit_0() {
    let dir = temp_dir("record-shutdown");
    let p = dir.join("script.trace");
    let text = SCRIPT.replace("== exit 0\n", "");
    assert_ne!(text, SCRIPT);
    std::fs::write(&p, text).unwrap();
    let args = ["record", "--script", p.to_str().unwrap()];
    let r = run_kit(&with_cmd(&args, &[RUNTIME]), &dir, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(
        r.out.contains("== exit 0"),
        "the exit is recorded: {}",
        r.out
    );
    // A runtime that exits 1 after answering shutdown breaks the implied exit.
    let mutant = [KIT, "mutant", "shutdown-exit-1", "--", RUNTIME];
    let r = run_kit(&with_cmd(&args, &mutant), &dir, Duration::from_secs(60));
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out
            .contains("a `shutdown` request, which implies `== exit 0`"),
        "{}",
        r.out
    );
}

/// A failed recording keeps what it recorded as FILE.partial; a later recording to FILE that
/// succeeds removes it, so a `.partial` beside a trace is always that trace's failure.
#[test]
fn a_good_recording_removes_the_partial_file_a_failed_one_left() {
    let dir = temp_dir("record-stale-partial");
    let out = dir.join("out.trace");
    let partial = dir.join("out.trace.partial");
    let s = script(&dir);
    let args = ["record", "--script", &s, "-o", out.to_str().unwrap()];
    let r = run_kit(
        &with_cmd(&args, &[&hostile("init_then.py"), "exit3"]),
        &dir,
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(partial.is_file() && !out.exists());
    let r = run_kit(&with_cmd(&args, &[RUNTIME]), &dir, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(out.is_file());
    assert!(!partial.exists(), "the stale partial is left: {}", r.out);
    assert!(r.out.contains("out.trace.partial"), "it says so: {}", r.out);
}

/// `replay -v` prints a failed case's details as `check` does: the frame received by its stdout
/// line, the trace, the expected frame and the difference.
#[test]
fn replay_verbose_prints_the_failure_as_check_does() {
    let dir = temp_dir("replay-verbose");
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/checks/frame.cr-not-separator.trace");
    let trace = trace.to_str().unwrap();
    let mutant = [KIT, "mutant", "cr-as-separator", "--", RUNTIME];
    let limit = Duration::from_secs(60);
    let plain = run_kit(&with_cmd(&["replay", trace], &mutant), &dir, limit);
    assert_eq!(plain.code, Some(1), "{}", plain.out);
    assert!(!plain.out.contains("got (stdout line"), "{}", plain.out);
    for v in ["-v", "--verbose"] {
        let r = run_kit(&with_cmd(&["replay", v, trace], &mutant), &dir, limit);
        assert_eq!(r.code, Some(1), "{}", r.out);
        for part in [
            "FAIL frame.cr-not-separator (",
            "    in ",
            "    expected (",
            "frame.cr-not-separator.trace:",
            "    got (stdout line 2): {\"jsonrpc\":\"2.0\",\"id\":\"cr1\"",
            "    differs at /id",
            "0 passed, 1 failed",
        ] {
            assert!(r.out.contains(part), "{part} not in {}", r.out);
        }
    }
}
