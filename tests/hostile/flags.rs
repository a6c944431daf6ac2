//! Every value flag of every subcommand, read off its `--help`, with hostile values: huge,
//! negative, NaN, empty, not UTF-8. Whatever the value, the kit ends within a bound with its own
//! exit code and a message, never a panic (exit 101); a value a number or duration flag cannot
//! take is exit 2 with a message naming the flag.
//!
//! Each command also names a runtime that cannot start (or none is needed), so that a value the
//! kit accepts ends the command at once instead of running a suite.

use super::KIT;
use proptest::prelude::*;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What no runtime is: every command that starts one fails at once.
const NO_RUNTIME: &str = "/nonexistent/dsh-hostile-flags-runtime";

/// The arguments that make `sub` end quickly, the flag under test going before them.
fn base(sub: &str, scratch: &std::path::Path) -> Vec<OsString> {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/checks/frame.whitespace-trimmed.trace"
    );
    let out = scratch.join("out").into_os_string();
    let v: Vec<OsString> = match sub {
        "check" => vec![
            "--budget".into(),
            "5".into(),
            "--".into(),
            NO_RUNTIME.into(),
        ],
        "replay" => vec![trace.into(), "--".into(), NO_RUNTIME.into()],
        "record" => vec![
            "--script".into(),
            trace.into(),
            "--".into(),
            NO_RUNTIME.into(),
        ],
        "import" => vec![NO_RUNTIME.into()],
        "tap" => vec!["--output".into(), out, "--".into(), NO_RUNTIME.into()],
        "model-stub" => vec!["--seconds".into(), "0.2".into()],
        "bench" => [
            "--frames",
            "1",
            "--prompts",
            "1",
            "--cold-runs",
            "1",
            "--sessions",
            "1",
        ]
        .into_iter()
        .map(OsString::from)
        .chain([OsString::from("--"), NO_RUNTIME.into()])
        .collect(),
        "fuzz" => ["--cases", "1", "--timeout", "2s", "--", NO_RUNTIME]
            .into_iter()
            .map(OsString::from)
            .collect(),
        "fuzz merge" => vec!["--out".into(), out, NO_RUNTIME.into()],
        "client" => ["--timeout", "2s", "--", NO_RUNTIME]
            .into_iter()
            .map(OsString::from)
            .collect(),
        "report" => vec!["--html".into(), out, "/nonexistent/dsh-report.json".into()],
        other => panic!("no base arguments for {other}"),
    };
    v
}

const SUBCOMMANDS: &[&str] = &[
    "check",
    "replay",
    "record",
    "import",
    "tap",
    "model-stub",
    "bench",
    "fuzz",
    "fuzz merge",
    "client",
    "report",
];

/// `(flag, value name)` of every flag that takes a value, from `dsh-conformance SUB --help`.
fn value_flags(sub: &str) -> Vec<(String, String)> {
    let out = Command::new(KIT)
        .args(sub.split(' '))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{sub} --help");
    let re = regex::Regex::new(r"^\s+(?:-\w, )?(--[a-z-]+) <([A-Z][A-Za-z_=.]*)>").unwrap();
    let flags: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| re.captures(l))
        .map(|c| (c[1].to_owned(), c[2].to_owned()))
        .collect();
    assert!(
        !flags.is_empty() || sub == "import",
        "{sub}: no value flag found"
    );
    flags
}

/// Value names of the flags that take a number or a duration.
fn numeric(value_name: &str) -> bool {
    let names = [
        "D", "JOBS", "BYTES", "PORT", "SEED", "CASES", "FRAMES", "PROMPTS",
    ];
    names.contains(&value_name)
        || ["PROMPT_SESSIONS", "SESSIONS", "COLD_RUNS", "SHRINK_TRIALS"].contains(&value_name)
}

struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    wall: Duration,
}

/// Runs the kit with `args` in `dir`, killed after `bound`.
fn run(args: &[OsString], dir: &std::path::Path, bound: Duration) -> Ended {
    let err = dir.join("stderr");
    let started = Instant::now();
    let mut child = Command::new(KIT)
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if started.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ended {
        code,
        stdout: std::fs::read_to_string(dir.join("stdout")).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
        wall: started.elapsed(),
    }
}

fn shown(args: &[OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `sub FLAG VALUE base…` and asserts what every hostile value must give.
fn judge(sub: &str, flag: &str, value_name: &str, value: &OsStr, must_reject: bool) {
    let dir = tempdir();
    let mut args: Vec<OsString> = sub.split(' ').map(OsString::from).collect();
    args.extend([flag.into(), value.into()]);
    let mut rest = base(sub, &dir);
    // The flag under test replaces the base's own use of it.
    if let Some(i) = rest.iter().position(|a| a == flag) {
        rest.drain(i..i + 2);
    }
    args.extend(rest);
    let e = run(&args, &dir, Duration::from_secs(60));
    let what = format!(
        "{} (exit {:?} in {:?})\n{}",
        shown(&args),
        e.code,
        e.wall,
        e.stderr
    );
    assert!(e.code.is_some(), "hung or killed: {what}");
    assert_ne!(e.code, Some(101), "panicked: {what}");
    assert!(!e.stderr.contains("panicked at"), "panicked: {what}");
    if e.code == Some(2) {
        let said = !(e.stderr.trim().is_empty() && e.stdout.trim().is_empty());
        assert!(said, "exit 2 without a message: {what}");
    }
    if must_reject && numeric(value_name) {
        assert_eq!(e.code, Some(2), "accepted: {what}");
        // The message names the flag or quotes the value (clap's "unexpected argument '-1'");
        // clap's for an argument that is not UTF-8 does neither.
        let quoted = format!("'{}'", value.to_string_lossy());
        let named = e.stderr.contains(flag)
            || (!value.is_empty() && e.stderr.contains(&quoted))
            || e.stderr.contains("invalid UTF-8");
        assert!(named, "the message does not name {flag}: {what}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir() -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-flags-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_value_flag_rejects_hostile_values_with_exit_2_and_never_panics() {
    let not_utf8 = OsStr::from_bytes(b"\xff\xfe10").to_owned();
    // (value, whether a number or duration flag must reject it)
    let values: Vec<(OsString, bool)> = vec![
        ("1e30".into(), true),
        ("-1".into(), true),
        ("NaN".into(), true),
        ("".into(), true),
        ("18446744073709551616".into(), true),
        ("inf".into(), true),
        (not_utf8, true),
        ("0".into(), false),
    ];
    let mut runs = 0;
    for sub in SUBCOMMANDS {
        for (flag, value_name) in value_flags(sub) {
            for (v, reject) in &values {
                judge(sub, &flag, &value_name, v, *reject);
                runs += 1;
            }
        }
    }
    assert!(runs > 200, "only {runs} runs: the flags were not found");
}

#[test]
fn the_reference_runtime_rejects_bad_arguments_with_exit_2_and_never_panics() {
    let dir = tempdir();
    let bad: [OsString; 5] = [
        OsStr::from_bytes(b"\xff").to_owned(),
        "--bogus".into(),
        "--edition".into(),
        "--patch".into(),
        "".into(),
    ];
    for arg in bad {
        for (bin, pre) in [(KIT, Some("runtime")), (super::RUNTIME_BIN, None)] {
            let args: Vec<OsString> = pre
                .map(OsString::from)
                .into_iter()
                .chain([arg.clone()])
                .collect();
            let mut child = Command::new(bin);
            child.args(&args).current_dir(&dir).stdin(Stdio::null());
            let out = child.output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let what = format!("{bin} {}: {:?}\n{stderr}", shown(&args), out.status);
            assert_eq!(out.status.code(), Some(2), "{what}");
            assert!(
                !stderr.contains("panicked at") && !stderr.trim().is_empty(),
                "{what}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Arbitrary bytes (no NUL: argv cannot carry one) for `check --timeout` and `fuzz --seconds`: exit 2 or a run, never 101.
    #[test]
    fn arbitrary_bytes_for_a_duration_flag_never_panic(
        bytes in proptest::collection::vec(1u8..=255, 0..24),
        fuzz in any::<bool>(),
    ) {
        let (sub, flag) = if fuzz { ("fuzz", "--seconds") } else { ("check", "--timeout") };
        judge(sub, flag, "D", OsStr::from_bytes(&bytes), false);
    }
}
