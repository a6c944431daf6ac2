//! Recording a script, replaying the recording, blessing a stale trace; the CLI's exit codes.

use super::{differs_at, mock, quick, root, sent};
use dsh_conformance::runner::record::header_of;
use dsh_conformance::runner::{record, replay, CommandSpec, RecordOptions};
use dsh_conformance::trace::{FailureKind, StepKind, Trace};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// Runs `dsh-conformance <subcommand> <args>` and returns its exit code (its output is printed,
/// for a failing test's log).
fn kit(subcommand: &str, args: &[String]) -> i32 {
    let out = Command::new(env!("CARGO_BIN_EXE_dsh-conformance"))
        .arg(subcommand)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("dsh-conformance {subcommand}: {e}"));
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    out.status
        .code()
        .expect("dsh-conformance exits with a code")
}

const SCRIPT: &str = "\
# case: recorded.prompt
>> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"cwd\":\"{{cwd}}\",\"provider\":\"deepseek-official\",\"model\":\"deepseek-v4-flash\"}}
<< {\"id\":1}
>> {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"contentBlocks\":[{\"type\":\"text\",\"text\":\"reply: hi\"}]}}
<< {\"id\":2}
>> {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"shutdown\"}
== exit 0
";

/// The patterns of a trace's expectations, as trace JSON.
fn expected(t: &Trace) -> Vec<Value> {
    t.steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Expect(e) => Some(e.pat.to_value()),
            _ => None,
        })
        .collect()
}

/// The one expectation of `t` that `is` picks out.
fn the_expected(t: &Trace, is: impl Fn(&Value) -> bool) -> Value {
    let mut found: Vec<Value> = expected(t).into_iter().filter(|v| is(v)).collect();
    assert_eq!(found.len(), 1, "one expectation is meant: {found:?}");
    found.remove(0)
}

fn reference() -> CommandSpec {
    CommandSpec::new(env!("CARGO_BIN_EXE_dsh-reference-runtime"))
        .arg("--profile")
        .arg("sdk")
}

#[test]
fn a_recorded_script_replays_green_against_the_runtime_it_was_recorded_from() {
    let script = Trace::parse(SCRIPT, "script.trace").unwrap();
    for cmd in [mock("ok"), reference()] {
        let rec =
            record(&script, &cmd, &RecordOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let text = rec.to_trace("recorded.prompt", "test", None);
        println!("{text}");
        let t = Trace::parse(&text, "recorded.trace").unwrap_or_else(|e| panic!("{e}\n{text}"));
        // Identity-preserving redaction: the messageId is one capture used by receipt and response.
        let response = the_expected(&t, |v| v["id"] == 2);
        assert_eq!(response["result"]["messageId"], "{{$m1}}", "{text}");
        let receipt = the_expected(&t, |v| {
            v["params"]["event"]["type"] == "agent/inbox/spliced"
                && v["params"]["event"]["data"]["inserted"][0]["role"] == "user"
        });
        let event = &receipt["params"]["event"];
        assert_eq!(event["data"]["inserted"][0]["id"], "{{$m1}}", "{text}");
        assert_eq!(event["seq"], "{{seq}}", "{text}");
        assert_eq!(sent(&t)[0]["params"]["cwd"], "{{cwd}}", "{text}");
        let last = t.steps.last().expect("steps");
        assert_eq!(
            (&last.kind, last.within),
            (
                &StepKind::Exit(Some(vec![0])),
                Some(Duration::from_secs(15))
            ),
            "{text}"
        );
        let r = replay(&t, &cmd, &quick());
        assert!(r.passed(), "{r}\n{text}");
    }
}

#[test]
fn a_recorded_trace_fails_against_a_runtime_that_breaks_it() {
    let script = Trace::parse(SCRIPT, "script.trace").unwrap();
    let rec = record(&script, &mock("ok"), &RecordOptions::default()).unwrap();
    let t = Trace::parse(
        &rec.to_trace("recorded.prompt", "test", None),
        "recorded.trace",
    )
    .unwrap();
    let r = replay(&t, &mock("messageid"), &quick());
    let f = r.failure().unwrap_or_else(|| panic!("a failure: {r}"));
    assert_eq!(f.kind, FailureKind::Mismatch, "{r}");
    assert_eq!(differs_at(f), "/result/messageId", "{r}");
}

/// `replay --bless PATH -- <the ok mock runtime>`.
fn bless_args(path: &std::path::Path) -> Vec<String> {
    ["--bless", path.to_str().unwrap(), "--"]
        .iter()
        .map(|s| s.to_string())
        .chain(mock("ok").program.to_str().map(str::to_owned))
        .chain(
            mock("ok")
                .args
                .into_iter()
                .map(|a| a.into_string().unwrap()),
        )
        .collect()
}

#[test]
fn bless_rewrites_a_stale_trace_and_prints_the_diff() {
    let dir = std::env::temp_dir().join(format!("dsh-bless-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stale.trace");
    let stale = "# case: stale\n# contract: kept by bless\n>> {\"jsonrpc\":\"2.0\",\"id\":\"u\",\"method\":\"nope\"}\n<< {\"jsonrpc\":\"2.0\",\"id\":\"u\",\"error\":{\"code\":-32601,\"message\":\"method not found: nope\"}}\n";
    std::fs::write(&path, stale).unwrap();
    let args = bless_args(&path);
    assert_eq!(kit("replay", &args), 0);
    let blessed = std::fs::read_to_string(&path).unwrap();
    assert!(
        blessed.starts_with("# case: stale\n# contract: kept by bless\n"),
        "{blessed}"
    );
    let t = Trace::parse(&blessed, "blessed.trace").unwrap_or_else(|e| panic!("{e}\n{blessed}"));
    assert_eq!(
        the_expected(&t, |v| v["id"] == "u")["error"],
        serde_json::json!({"code": -32603, "message": "unknown DeepSeek Harness SDK runtime method: nope"}),
        "{blessed}"
    );
    // The blessed trace now passes.
    let args: Vec<String> = [path.to_str().unwrap(), "--"]
        .iter()
        .map(|s| s.to_string())
        .chain(mock("ok").program.to_str().map(str::to_owned))
        .chain(
            mock("ok")
                .args
                .into_iter()
                .map(|a| a.into_string().unwrap()),
        )
        .collect();
    assert_eq!(kit("replay", &args), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bless_leaves_a_passing_trace_and_its_patterns_as_written() {
    let dir = std::env::temp_dir().join(format!("dsh-bless-pass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("passing.trace");
    let passing = "# case: passing\n>> {\"jsonrpc\":\"2.0\",\"id\":\"u\",\"method\":\"nope\"}\n<< {\"jsonrpc\":\"2.0\",\"id\":\"u\",\"error\":{\"code\":\"{{-32601|-32603}}\",\"message\":\"{{any}}\"}}\n";
    std::fs::write(&path, passing).unwrap();
    let args = bless_args(&path);
    assert_eq!(kit("replay", &args), 0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), passing);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_replay_command_exits_0_1_or_2() {
    let argv = |extra: &[&str], cmd: &CommandSpec| -> Vec<String> {
        extra
            .iter()
            .map(|s| s.to_string())
            .chain(["--".to_string(), cmd.program.to_string_lossy().into_owned()])
            .chain(cmd.args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect()
    };
    let fixture = root().join("fixtures/errors/unknown-methods-answer-internal-error.trace");
    let f = fixture.to_str().unwrap();
    assert_eq!(kit("replay", &argv(&[f], &mock("ok"))), 0);
    assert_eq!(
        kit(
            "replay",
            &argv(&[f, "--frame-timeout", "1s"], &mock("hang"))
        ),
        1
    );
    assert_eq!(
        kit(
            "replay",
            &argv(&[f], &CommandSpec::new("/nonexistent/runtime"))
        ),
        2
    );
    assert_eq!(kit("replay", &[f.to_string()]), 2, "no command");
    assert_eq!(
        kit("replay", &argv(&["/nonexistent.trace"], &mock("ok"))),
        2
    );
    // A model-requiring case is skipped (named) unless the capability is provided: when that
    // leaves nothing tested, the replay exits 5 (as pytest's "no tests collected"), not 0.
    let session = root().join("fixtures/session/second-prompt-reuses-session.trace");
    assert_eq!(
        kit("replay", &argv(&[session.to_str().unwrap()], &mock("ok"))),
        dsh_conformance::suite::report::NOTHING_TESTED
    );
    assert_eq!(
        kit(
            "replay",
            &argv(
                &[session.to_str().unwrap(), "--provides", "model"],
                &mock("ok")
            )
        ),
        0
    );
    assert_eq!(
        kit(
            "replay",
            &argv(
                &[session.to_str().unwrap(), "--provides", "model"],
                &mock("frozen-turn")
            )
        ),
        1
    );
}

#[test]
fn import_writes_traces_and_rejects_truncated_sends() {
    let dir = std::env::temp_dir().join(format!("dsh-import-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let raw = root().join("fixtures/real-0.2.1rc2/raw");
    let ok = raw.join("sigint_idle.jsonl");
    let bad = raw.join("bytes_10mb_line.jsonl");
    assert_eq!(
        kit(
            "import",
            &[
                ok.to_string_lossy().into_owned(),
                "-o".into(),
                dir.to_string_lossy().into_owned()
            ]
        ),
        0
    );
    let written = std::fs::read_to_string(dir.join("sigint_idle.trace")).unwrap();
    let committed =
        std::fs::read_to_string(root().join("fixtures/real-0.2.1rc2/sigint_idle.trace")).unwrap();
    let body = |t: &str| t[header_of(t).len()..].to_owned();
    assert_eq!(body(&written), body(&committed));
    assert!(
        written.contains("# source: raw/sigint_idle.jsonl\n"),
        "{written}"
    );
    assert_eq!(
        kit(
            "import",
            &[
                bad.to_string_lossy().into_owned(),
                "-o".into(),
                dir.to_string_lossy().into_owned()
            ]
        ),
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}
