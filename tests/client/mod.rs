//! `dsh-conformance client`: the reference client passes every client check, each mutant of it
//! fails exactly its own check, the shim is found every way a client looks for it, the peer
//! launches like the release, and the official Python SDK runs with its baseline.

mod app;
mod conductor;
mod naive;
mod python;
mod typescript;
mod unsupported;

use crate::support::report::JsonReport;
use dsh_conformance::check::{self, CheckId, Subject};
use dsh_conformance::client::reference::{Bug, BUGS};
use std::collections::BTreeSet;
use std::process::Command;

pub const KIT: &str = env!("CARGO_BIN_EXE_dsh-conformance");

/// Runs `client --format json` with `args` before `--` and `driver` after; (exit code, report).
/// Each operation may take a minute (a busy machine streaming a 48 MiB line): only a hanging
/// client waits that long.
pub fn client(args: &[&str], driver: &[&str]) -> (i32, JsonReport) {
    let timeout: &[&str] = if args.contains(&"--timeout") {
        &[]
    } else {
        &["--timeout", "60s"]
    };
    let out = Command::new(KIT)
        .arg("client")
        .args(["--format", "json"])
        .args(timeout)
        .args(args)
        .arg("--")
        .args(driver)
        .output()
        .expect("run the kit");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !text.is_empty(),
        "no report; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), JsonReport::parse(&text))
}

fn client_checks() -> BTreeSet<CheckId> {
    check::of(Subject::Client).map(|c| c.id).collect()
}

#[test]
fn the_reference_client_passes_every_client_check_and_runs_no_runtime_check() {
    let (code, report) = client(&["--suite", "all"], &[KIT, "client-driver"]);
    let all: BTreeSet<CheckId> = report.verdicts().into_iter().map(|(id, _)| id).collect();
    assert_eq!(all, client_checks(), "{}", report);
    assert_eq!(report.with("PASS"), client_checks(), "{}", report);
    assert_eq!(code, 0);
}

/// Mutants whose bug leaves another check with nothing to judge, never a failure: `rescan`'s
/// quadratic cost per event never finishes the backlog scenario's run, so its memory tells nothing.
const UNJUDGEABLE: &[(&str, CheckId)] = &[("rescan", CheckId::ClientBoundedBacklog)];

/// Mutant `name` failed exactly `check`, left only its [`UNJUDGEABLE`] checks untestable,
/// blocked only the checks that require `check`, and passed every other check of `judged`.
fn assert_fails_only(name: &str, check: CheckId, report: &JsonReport, judged: &BTreeSet<CheckId>) {
    assert_eq!(
        report.with("FAIL"),
        BTreeSet::from([check]),
        "{name}: {}",
        report
    );
    let untestable: BTreeSet<CheckId> = UNJUDGEABLE
        .iter()
        .filter(|u| u.0 == name)
        .map(|u| u.1)
        .collect();
    assert_eq!(report.with("UNTESTABLE"), untestable, "{name}: {}", report);
    let blocked: BTreeSet<CheckId> = judged
        .iter()
        .copied()
        .filter(|c| c.info().requires.contains(&check))
        .collect();
    assert_eq!(report.with("BLOCKED"), blocked, "{name}: {}", report);
    let rest: BTreeSet<CheckId> = judged
        .iter()
        .copied()
        .filter(|c| *c != check && !untestable.contains(c) && !blocked.contains(c))
        .collect();
    assert_eq!(report.with("PASS"), rest, "{name}: {}", report);
}

/// The scenarios that measure the client (its memory; its time on a 48 MiB line, and on shorter
/// ones when it is slow): run apart from the others, a few mutants at a time, since 27 clients
/// at once each streaming a 48 MiB line on 2 cores make resident sizes and times say more about
/// the machine than about the client (a correct but memory-hungry mutant timed out there).
const MEASURED: [&str; 2] = ["backlog", "long-lines"];

/// The checks [`MEASURED`] decides.
const MEASURED_CHECKS: [CheckId; 3] = [
    CheckId::ClientBoundedBacklog,
    CheckId::ClientLongLines,
    CheckId::ClientLineMemory,
];

/// Mutant `name` under `--suite all`: every scenario but [`MEASURED`] in `rest`, those in
/// `measured`; the report of both, the measured checks' entries taken from the second.
fn merged(rest: JsonReport, measured: JsonReport) -> JsonReport {
    let mut v = rest.0;
    if let Some(checks) = v["checks"].as_array_mut() {
        for id in MEASURED_CHECKS {
            checks.retain(|c| c["id"] != id.as_str());
            checks.push(measured.check(id).clone());
        }
    }
    JsonReport(v)
}

/// One mutant's runs under `--suite all`: its name and check, the exit code of the run of every
/// scenario but [`MEASURED`], that of the run of those, and the two reports [`merged`].
pub struct MutantRun {
    pub name: &'static str,
    pub check: CheckId,
    pub rest: i32,
    pub measured: i32,
    pub report: JsonReport,
}

/// Every mutant of `bugs` under `--suite all` (`mode` before it: `--app`, or nothing), run as
/// `command(name)`: the scenarios but [`MEASURED`] for all mutants at once, [`MEASURED`] three
/// mutants at a time.
pub fn mutant_runs(
    mode: &[&str],
    bugs: &[&'static (Bug, &'static str, CheckId, &'static str)],
    command: fn(&str) -> Vec<String>,
) -> Vec<MutantRun> {
    let others = dsh_conformance::client::run::Suite::All
        .scenarios()
        .into_iter()
        .filter(|s| !MEASURED.contains(&s.name) && (mode.is_empty() || s.in_app_mode()))
        .map(|s| s.name);
    let mut args = mode.to_vec();
    args.extend(["--suite", "all"]);
    for n in others {
        args.extend(["--scenario", n]);
    }
    let mut measured_args = mode.to_vec();
    measured_args.extend(["--scenario", MEASURED[0], "--scenario", MEASURED[1]]);
    let run = |args: &[&str], name: &str| client(args, &argv(&command(name)));
    let rest: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = (bugs.iter()).map(|b| s.spawn(|| run(&args, b.1))).collect();
        runs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut measured = Vec::new();
    for chunk in bugs.chunks(3) {
        measured.extend(std::thread::scope(|s| {
            let runs: Vec<_> = (chunk.iter())
                .map(|b| s.spawn(|| run(&measured_args, b.1)))
                .collect();
            runs.into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        }));
    }
    (bugs.iter().zip(rest).zip(measured))
        .map(|((b, (rest, report)), (measured, apart))| MutantRun {
            name: b.1,
            check: b.2,
            rest,
            measured,
            report: merged(report, apart),
        })
        .collect()
}

fn argv(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

#[test]
fn each_client_mutant_fails_exactly_its_check() {
    let bugs: Vec<_> = BUGS.iter().collect();
    let runs = mutant_runs(&[], &bugs, |name| {
        [KIT, "client-driver", "--bug", name]
            .map(String::from)
            .to_vec()
    });
    let caught: BTreeSet<CheckId> = BUGS.iter().map(|b| b.2).collect();
    assert_eq!(caught, client_checks(), "every client check has a mutant");
    for m in runs {
        assert_fails_only(m.name, m.check, &m.report, &client_checks());
        // The run that holds the mutant's check gives the exit code; the other passes.
        let must = m.check.info().severity == check::Severity::Must;
        let (own, other) = match MEASURED_CHECKS.contains(&m.check) {
            true => (m.measured, m.rest),
            false => (m.rest, m.measured),
        };
        assert_eq!(own, if must { 1 } else { 0 }, "{}", m.name);
        assert_eq!(other, 0, "{}", m.name);
    }
}

#[test]
fn the_shim_is_the_runtime_placeholder_dsh_bin_and_dsh_on_path() {
    // Each driver unsets DSH_BIN and finds the shim another way.
    let placeholder = [
        "env",
        "-u",
        "DSH_BIN",
        "sh",
        "-c",
        "DSH_BIN=\"$1\" exec \"$0\" client-driver",
        KIT,
        "{runtime}",
    ];
    let path = [
        "env",
        "-u",
        "DSH_BIN",
        "sh",
        "-c",
        "DSH_BIN=$(command -v dsh) exec \"$0\" client-driver",
        KIT,
    ];
    for driver in [&placeholder[..], &path[..]] {
        let (code, report) = client(&["--scenario", "typed-errors"], driver);
        assert_eq!(
            report.with("PASS"),
            BTreeSet::from([CheckId::ClientTypedErrors]),
            "{driver:?}: {}",
            report
        );
        assert_eq!(code, 0);
    }
}

#[test]
fn a_driver_that_never_answers_is_stopped_and_one_that_only_starts_never_passes() {
    let out = Command::new(KIT)
        .args(["client", "--timeout", "2s", "--scenario", "handshake", "--"])
        .args(["sleep", "30"])
        .output()
        .expect("run the kit");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the start took longer than 2s"), "{stderr}");
    // Answers the start (operation 1), then nothing.
    let start_only = [
        "sh",
        "-c",
        "read line; echo '{\"id\":1,\"ok\":true}'; sleep 30",
    ];
    let (code, report) = client(&["--timeout", "2s", "--scenario", "handshake"], &start_only);
    assert!(report.with("PASS").is_empty(), "{}", report);
    assert_eq!(report.verdicts().len(), 2, "{}", report);
    assert_eq!(code, 1);
}

#[test]
fn an_unknown_scenario_is_a_usage_error() {
    let out = Command::new(KIT)
        .args(["client", "--scenario", "nope", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no scenario \"nope\""));
}

#[test]
fn client_help_names_every_scenario_of_every_suite_and_mode() {
    use dsh_conformance::client::{app, run::Suite};
    let out = Command::new(KIT)
        .args(["client", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let names = Suite::All.scenarios().into_iter().map(|s| s.name);
    for name in names.chain(app::scenarios().iter().map(|s| s.name)) {
        assert!(help.contains(name), "`client --help` omits {name}:\n{help}");
    }
}

#[test]
fn the_peer_answers_version_and_help_as_the_release_does() {
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let peers = Arc::new(Mutex::new(Vec::new()));
    dsh_conformance::client::peer::serve(
        listener,
        peers.clone(),
        Default::default,
        std::time::Instant::now(),
    );
    let run = |arg: &str| {
        Command::new(KIT)
            .args(["client-peer", "--port", &port, "--", arg])
            .output()
            .unwrap()
    };
    let v = run("--version");
    assert_eq!(
        (
            v.status.code(),
            String::from_utf8_lossy(&v.stdout).into_owned()
        ),
        (Some(0), "0.2.1-rc.2\n".to_owned())
    );
    let h = run("--help");
    assert_eq!(h.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&h.stdout).contains("--profile"));
    let numbers: Vec<usize> = peers.lock().unwrap().iter().map(|p| p.n).collect();
    assert_eq!(numbers.len(), 2);
    assert!(numbers.contains(&1) && numbers.contains(&2), "{numbers:?}");
}

#[test]
fn a_driver_that_answers_without_a_runtime_leaves_the_new_checks_untestable() {
    // Every operation "succeeds" with an empty text, and no runtime is ever launched.
    let echo = r#"while read -r l; do id=$(printf '%s' "$l" | sed 's/.*"id":\([0-9]*\).*/\1/'); printf '{"id":%s,"ok":true,"text":"","messageId":"m"}\n' "$id"; done"#;
    let scenarios = [
        "receipts",
        "subagent-trees",
        "chatty-sessions",
        "idle-never-comes",
        "slow-shutdown",
        "refused-shutdown",
    ];
    let mut args = vec!["--timeout", "10s"];
    for s in scenarios {
        args.extend(["--scenario", s]);
    }
    let (code, report) = client(&args, &["sh", "-c", echo]);
    let all: BTreeSet<CheckId> = report.verdicts().into_iter().map(|(id, _)| id).collect();
    assert_eq!(all.len(), 5, "{}", report);
    assert_eq!(report.with("UNTESTABLE"), all, "{}", report);
    assert_ne!(code, 0, "nothing was tested: {}", report);
}

#[test]
fn a_driver_whose_path_is_not_utf8_runs() {
    use std::os::unix::ffi::OsStrExt;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("client-not-utf8-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join(std::ffi::OsStr::from_bytes(b"kit-\xff"));
    std::os::unix::fs::symlink(KIT, &link).unwrap();
    let out = Command::new(KIT)
        .args([
            "client",
            "--format",
            "json",
            "--scenario",
            "handshake",
            "--",
        ])
        .arg(&link)
        .arg("client-driver")
        .output()
        .unwrap();
    let report = JsonReport::parse(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(out.status.code(), Some(0), "{}", report);
    assert!(report
        .with("PASS")
        .contains(&CheckId::ClientWaitsForInitialize));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client that cannot start a session against a runtime that keeps every rule is stopped by
/// the preflight with exit 2 and its driver's own words: never a report of checks all
/// untestable for one unnamed reason.
#[test]
fn a_driver_that_cannot_start_is_stopped_with_its_own_words() {
    let missing = [
        "sh",
        "-c",
        "echo 'ModuleNotFoundError: No module named deepseek_harness_sdk' >&2; exit 1",
    ];
    let unknown_bug = [KIT, "client-driver", "--bug", "no-such-bug"];
    for (driver, words) in [
        (&missing[..], "ModuleNotFoundError: No module named"),
        (&unknown_bug[..], "no-such-bug"),
    ] {
        let out = Command::new(KIT)
            .args(["client", "--scenario", "typed-errors", "--"])
            .args(driver)
            .output()
            .expect("run the kit");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{driver:?}: {stderr}");
        assert!(
            stderr.contains("did not start a session")
                && stderr.contains(words)
                && stderr.contains("its stdout ended (exit code "),
            "{driver:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "no report: {driver:?}");
    }
}

/// `client --list` gives every client check with the scenarios that decide it (from the scenario
/// tables) and whether app mode judges it; a baseline of the other kind is a usage error, for
/// `client` and for `check` alike.
#[test]
fn client_list_names_every_client_check_and_a_baseline_of_the_other_kind_is_refused() {
    use dsh_conformance::client::app;
    let out = Command::new(KIT)
        .args(["client", "--list", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let ids: BTreeSet<CheckId> = (rows.iter())
        .map(|r| CheckId::parse(r["id"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(ids, client_checks());
    for r in &rows {
        let id = CheckId::parse(r["id"].as_str().unwrap()).unwrap();
        let scenarios = r["scenarios"].as_array().unwrap();
        assert!(!scenarios.is_empty(), "{r}");
        let app = app::scenarios().iter().any(|s| s.checks.contains(&id));
        assert_eq!(r["app"], app, "{r}");
        // A check app mode does not judge says why: the scenarios it leaves out.
        let left_out = r["app_left_out"].as_array().unwrap();
        assert!(app || left_out.len() == scenarios.len(), "{r}");
    }
    let exit = rows
        .iter()
        .find(|r| r["id"] == "client.runtime-exit")
        .unwrap();
    let names: Vec<&str> = (exit["scenarios"].as_array().unwrap().iter())
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["exit-mid-turn", "exit-on-request"]);
    let human = Command::new(KIT)
        .args(["client", "--list"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        client_checks().iter().all(|c| text.contains(c.as_str())),
        "{text}"
    );

    let dir = std::env::temp_dir().join(format!("dsh-client-baseline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let runtime_ids = dir.join("runtime.known-failing");
    std::fs::write(&runtime_ids, "error.unknown-method  # answers -32601\n").unwrap();
    let client_ids = dir.join("client.known-failing");
    std::fs::write(&client_ids, "client.root-idle  # ends at any idle\n").unwrap();
    let refused = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(KIT).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = refused(&[
        "client".as_ref(),
        "--known-failing".as_ref(),
        runtime_ids.as_os_str(),
        "--".as_ref(),
        KIT.as_ref(),
        "client-driver".as_ref(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("error.unknown-method is a runtime check"),
        "{err}"
    );
    let (code, err) = refused(&[
        "check".as_ref(),
        "--known-failing".as_ref(),
        client_ids.as_os_str(),
        "--".as_ref(),
        "true".as_ref(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("client.root-idle is a client check"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 37, item 7: a client slow on the 48 MiB line is measured on shorter lines and its
/// failure says how its time grows, not only that the run timed out; the reference client, under
/// the same flags, passes without being measured.
#[test]
fn a_client_slow_on_a_long_line_is_reported_with_its_growth() {
    let args = ["--scenario", "long-lines", "--timeout", "15s"];
    let (_, report) = client(&args, &[KIT, "client-driver", "--bug", "quadratic-lines"]);
    assert_eq!(
        report.with("FAIL"),
        BTreeSet::from([CheckId::ClientLongLines]),
        "{report}"
    );
    let reason = report.check(CheckId::ClientLongLines)["reason"].to_string();
    assert!(
        reason.contains("no result (timed out); measured on shorter lines, a line of 256 KiB")
            && reason.contains("512 KiB")
            && reason.contains("the time grows"),
        "{reason}"
    );
    let (code, good) = client(&args, &[KIT, "client-driver"]);
    assert_eq!(good.with("PASS").len(), 2, "{good}");
    assert_eq!(code, 0, "{good}");
}
