//! `dsh-conformance check` as a user and a CI job see it: exit codes, formats, baseline, explain.

use super::{KIT, RUNTIME};
use crate::support::pypi;
use crate::support::report::{listed, JsonReport};
use assert_cmd::Command;
use dsh_conformance::check::{CheckId, Subject};
use dsh_conformance::edition::Edition;
use dsh_conformance::suite::CHECKS;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn kit() -> Command {
    Command::new(KIT)
}

fn temp_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "dsh-suite-cli-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs the kit with `args`, asserts its exit code and returns its stdout.
fn stdout_of(args: &[&str], code: i32) -> String {
    let out = kit()
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// Runs `check` with `args` and `--format json`, asserts its exit code and returns the report.
fn report_of(args: &[&str], code: i32) -> JsonReport {
    let (check, rest) = args.split_first().expect("a subcommand");
    assert_eq!(*check, "check");
    let args = [&[*check, "--format", "json"][..], rest].concat();
    JsonReport::parse(&stdout_of(&args, code))
}

#[test]
fn list_names_every_check_of_the_edition_with_severity_and_editions() {
    for e in Edition::ALL {
        let text = stdout_of(
            &["check", "--list", "--edition", e.name(), "--format", "json"],
            0,
        );
        let listed = listed(&text);
        let ids: Vec<CheckId> = listed.iter().map(|(id, _)| *id).collect();
        let of_edition: Vec<CheckId> = CHECKS
            .iter()
            .filter(|c| c.editions.contains(e) && c.subject() == Subject::Runtime)
            .map(|c| c.id)
            .collect();
        assert_eq!(ids, of_edition, "edition {e}");
        for (c, l) in &listed {
            let info = c.info();
            assert_eq!(l["severity"], info.severity.to_string(), "{c}");
            assert_eq!(l["rule"], info.rule, "{c}");
            let editions: Vec<&str> = info.editions.iter().map(Edition::name).collect();
            assert_eq!(l["editions"], serde_json::json!(editions), "{c}");
        }
    }
}

#[test]
fn the_built_in_runtime_passes_every_frame_check() {
    let report = report_of(&["check", "--filter", "frame.*"], 0);
    let frame: BTreeSet<CheckId> = CHECKS
        .iter()
        .filter(|c| c.id.as_str().starts_with("frame.") && c.editions.contains(Edition::Current))
        .map(|c| c.id)
        .collect();
    assert!(frame.len() >= 15, "{frame:?}");
    assert_eq!(report.with("PASS"), frame, "{report}");
    assert_eq!(report.0["summary"]["failed"], 0, "{report}");
}

/// `check` of one rule against a mutant that breaks it (exit 1).
const BATCH_MUTANT_CHECK: [&str; 9] = [
    "check",
    "--filter",
    "frame.batch-ignored",
    "--",
    KIT,
    "mutant",
    "batch-supported",
    "--",
    RUNTIME,
];

#[test]
fn a_mutant_fails_the_run_with_exit_1_and_names_the_broken_check() {
    let report = report_of(&BATCH_MUTANT_CHECK, 1);
    assert_eq!(
        report.verdicts(),
        [(CheckId::FrameBatchIgnored, "FAIL")],
        "{report}"
    );
    assert_eq!(report.root_causes(), [CheckId::FrameBatchIgnored]);
}

#[test]
fn a_should_failure_is_reported_but_does_not_fail_the_run() {
    let report = report_of(
        &[
            "check",
            "--filter",
            "frame.cr-not-separator",
            "--",
            KIT,
            "mutant",
            "cr-as-separator",
            "--",
            RUNTIME,
        ],
        0,
    );
    let c = report.check(CheckId::FrameCrNotSeparator);
    assert_eq!(
        (&c["verdict"], &c["severity"]),
        (&"FAIL".into(), &"SHOULD".into()),
        "{report}"
    );
    assert_eq!(report.0["summary"]["fatal"], 0, "{report}");
}

#[test]
fn a_runtime_that_does_not_exist_is_exit_2_with_a_clear_message() {
    let out = kit()
        .args(["check", "--", "/nonexistent/runtime", "--profile", "sdk"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("/nonexistent/runtime"), "{err}");
    kit().args(["check", "--edition", "2027"]).assert().code(2);
    kit()
        .args(["check", "--filter", "no-such-check-anywhere"])
        .assert()
        .code(2);
}

/// A CI job whose `$RUNTIME` is empty runs `check -- $RUNTIME`: that names no runtime, and must
/// not check (and pass) the built-in one. Without `--` the built-in runtime is checked as ever.
#[test]
fn check_with_nothing_after_the_dashes_is_a_usage_error() {
    let out = kit()
        .args(["check", "--filter", "initialize.server-info", "--"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("`--` is followed by no runtime command"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no report for a usage error");
    kit()
        .args(["check", "--filter", "initialize.server-info"])
        .assert()
        .code(0);
}

#[test]
fn the_baseline_turns_a_known_failure_into_xfail_and_flags_stale_entries() {
    let base = temp_file("baseline.txt");
    std::fs::write(
        &base,
        "frame.batch-ignored  # this mutant unpacks batches on purpose\n",
    )
    .unwrap();
    let b = base.to_str().unwrap();
    let report = report_of(
        &[
            &BATCH_MUTANT_CHECK[..3],
            &["--known-failing", b],
            &BATCH_MUTANT_CHECK[3..],
        ]
        .concat(),
        0,
    );
    assert_eq!(
        report.verdicts(),
        [(CheckId::FrameBatchIgnored, "XFAIL")],
        "{report}"
    );
    // Against a runtime that passes, the entry is stale and fails the run.
    let report = report_of(
        &[
            "check",
            "--filter",
            "frame.batch-ignored",
            "--known-failing",
            b,
        ],
        1,
    );
    assert_eq!(
        report.verdicts(),
        [(CheckId::FrameBatchIgnored, "STALE")],
        "{report}"
    );
    // An entry without a reason is a usage error.
    std::fs::write(&base, "frame.batch-ignored\n").unwrap();
    kit().args(["check", "--known-failing", b]).assert().code(2);
}

#[test]
fn explain_prints_the_rule_the_section_and_the_trace() {
    let text = stdout_of(&["explain", "receipt.precedes-response"], 0);
    assert!(
        text.contains("§5")
            && text.contains("receipt")
            && text.contains("# check: receipt.precedes-response"),
        "{text}"
    );
    kit().args(["explain", "no.such"]).assert().code(2);
}

/// Runs the kit with its stdout a pipe whose reader is already gone (as `| head` leaves it).
fn with_closed_stdout(args: &[&str]) -> std::process::Output {
    let mut child = std::process::Command::new(KIT)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_reader_that_goes_away_early_ends_the_output_quietly_with_the_commands_own_exit_code() {
    for (args, code) in [
        (&["explain", "receipt.precedes-response"][..], 0),
        (&["check", "--list"][..], 0),
        (
            &["check", "--filter", "stdout.*", "--format", "json"][..],
            0,
        ),
        (&BATCH_MUTANT_CHECK[..], 1),
        (&["mutant", "list"][..], 0),
    ] {
        let out = with_closed_stdout(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("cannot write"),
            "{args:?}: {stderr}"
        );
    }
    // The same commands with a reader see their output (the test above is not vacuous).
    assert!(stdout_of(&["check", "--list"], 0).contains("receipt.precedes-response"));
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn json_reports_validate_against_the_schema_and_junit_loads_in_a_junit_parser() {
    let py = pypi::need_venv(
        "report formats",
        "report-tools",
        &["jsonschema==4.23.0", "junitparser==3.2.0"],
    );
    let json = temp_file("report.json");
    let xml = temp_file("report.xml");
    // A mutant gives a report with passes, a failure and skips.
    let mutant = [KIT, "mutant", "batch-supported", "--", RUNTIME];
    for (format, file) in [("json", &json), ("junit", &xml)] {
        let out = file.to_str().unwrap();
        kit()
            .args([
                "check", "--filter", "frame.*", "--format", format, "--output", out, "--",
            ])
            .args(mutant)
            .assert()
            .code(1);
    }
    // A client report, whose failure's wire log has peers and events, is of the same schema.
    let client = temp_file("client.json");
    kit()
        .args(["client", "--format", "json", "--scenario", "subagent-trees"])
        .arg("--output")
        .arg(&client)
        .args(["--", KIT, "client-driver", "--bug", "first-idle"])
        .assert()
        .code(1);
    let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json");
    let script = r#"
import json, sys, jsonschema, junitparser
schema = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
client = json.load(open(sys.argv[4]))
jsonschema.validate(client, schema, cls=jsonschema.Draft202012Validator)
lines = [l for c in client["checks"] if c.get("failure") for l in c["failure"]["wire_log"]["lines"]]
assert {l["dir"] for l in lines} == {"sent", "received", "event"}, lines
assert all(l["peer"] == 1 for l in lines), lines
xml = junitparser.JUnitXml.fromfile(sys.argv[3])
cases = [c for s in xml for c in s]
failed = [c.name for c in cases if any(isinstance(r, junitparser.Failure) for r in c.result)]
print(len(report["checks"]), report["summary"]["failed"], len(cases), ",".join(failed))
"#;
    let validate = || {
        std::process::Command::new(&py.python)
            .args(["-c", script])
            .arg(&schema)
            .arg(&json)
            .arg(&xml)
            .arg(&client)
            .output()
            .unwrap()
    };
    let out = validate();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let f: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(f[0], f[2], "JSON checks and JUnit testcases differ: {text}");
    assert_eq!(f[1], "1", "{text}");
    assert_eq!(f[3], "frame.batch-ignored", "{text}");
    // And a broken report is rejected by the same schema: the test can fail.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v["checks"][0]["verdict"] = "MAYBE".into();
    std::fs::write(&json, v.to_string()).unwrap();
    assert!(
        !validate().status.success(),
        "the schema accepted verdict MAYBE"
    );
}

#[test]
fn a_relative_runtime_path_is_resolved_against_the_kit_s_working_directory() {
    let rt = std::path::Path::new(RUNTIME);
    let (dir, name) = (
        rt.parent().unwrap(),
        rt.file_name().unwrap().to_str().unwrap(),
    );
    kit()
        .current_dir(dir)
        .args(["check", "--filter", "frame.crlf-accepted", "--"])
        .arg(format!("./{name}"))
        .assert()
        .code(0);
}

#[test]
fn a_relative_script_argument_is_resolved_against_the_kit_s_working_directory() {
    // `check -- python3 fixtures/runtimes/x.py`: the script is an argument, not the program.
    let dir = std::env::temp_dir().join(format!("dsh-relative-arg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("rt.sh");
    std::fs::write(&script, format!("#!/bin/sh\nexec {RUNTIME} \"$@\"\n")).unwrap();
    kit()
        .current_dir(&dir)
        .args([
            "check",
            "--filter",
            "frame.crlf-accepted",
            "--",
            "sh",
            "rt.sh",
        ])
        .assert()
        .code(0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn strict_upstream_demands_32603_where_the_default_accepts_32601() {
    let mutant = [KIT, "mutant", "unknown-method-32601", "--", RUNTIME];
    kit()
        .args(["check", "--filter", "error.unknown-method", "--"])
        .args(mutant)
        .assert()
        .code(0);
    let strict = [
        &[
            "check",
            "--strict-upstream",
            "--filter",
            "error.unknown-method",
            "--",
        ][..],
        &mutant,
    ]
    .concat();
    let report = report_of(&strict, 1);
    assert_eq!(
        report.verdicts(),
        [(CheckId::ErrorUnknownMethod, "FAIL")],
        "{report}"
    );
}

#[test]
fn an_edition_typo_is_a_usage_error_everywhere_it_enters() {
    // A typo once selected no trace and exited 0; it must name the value and exit 2.
    for args in [
        vec!["check", "--edition", "curent"],
        vec![
            "replay",
            "--edition",
            "curent",
            "fixtures/frame",
            "--",
            RUNTIME,
        ],
    ] {
        let out = kit()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8_lossy(&out);
        assert!(
            err.contains("unknown edition \"curent\""),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_rule_judged_over_other_transcripts_alone_is_untestable_with_a_hint_and_no_progress_verdict() {
    let alone = kit()
        .args(["check", "--format", "json", "--progress", "always"])
        .args(["--filter", "stdout.compact"])
        .assert()
        .code(5)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&alone.stderr);
    assert!(!stderr.contains("PASS stdout.compact"), "{stderr}");
    let report = JsonReport::parse(&String::from_utf8_lossy(&alone.stdout));
    assert_eq!(
        report.with("UNTESTABLE"),
        BTreeSet::from([CheckId::StdoutCompact])
    );
    assert!(
        report.0.to_string().contains("--filter frame."),
        "{}",
        report.0
    );
    // With a check that has a trace, the same rule is judged over its transcript.
    let args = [
        "--filter",
        "stdout.compact",
        "--filter",
        "frame.whitespace-trimmed",
    ];
    let both = report_of(&[&["check"][..], &args].concat(), 0);
    assert!(
        both.with("PASS").contains(&CheckId::StdoutCompact),
        "{}",
        both.0
    );
}

#[test]
fn color_is_on_only_when_asked_or_on_a_terminal_and_list_writes_to_output() {
    let args = |c: &'static str| {
        [
            "check",
            "--filter",
            "frame.whitespace-trimmed",
            "--color",
            c,
        ]
    };
    let has_escape = |s: String| s.contains("\x1b[");
    assert!(has_escape(stdout_of(&args("always"), 0)));
    assert!(!has_escape(stdout_of(&args("never"), 0)));
    // Piped stdout: `auto` is off.
    assert!(!has_escape(stdout_of(&args("auto"), 0)));
    let file = temp_file("list.txt");
    let to_file = ["check", "--list", "--output", file.to_str().unwrap()];
    assert_eq!(stdout_of(&to_file, 0), "");
    let listed = std::fs::read_to_string(&file).unwrap();
    assert_eq!(listed, stdout_of(&["check", "--list"], 0));
    assert!(listed.contains("receipt.precedes-response"));
}

#[test]
fn the_reference_runtime_answers_version_as_the_release_does() {
    let out = Command::new(RUNTIME).arg("--version").assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // The release prints its bare version (fixtures/real-0.2.1rc2); clients parse it.
    assert_eq!(text, "0.2.1-rc.2\n");
}
