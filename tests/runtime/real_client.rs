//! A real client of the official SDK on our runtime (issue 11 item 7): `dsh-openai` (PyPI), an
//! OpenAI-compatible HTTP bridge, run through its own hooks (its session manager's harness
//! factory; the SDK's `dsh_bin` pointed at the runtime), launched as it launches in production
//! (`--profile sdk-minimal`, its shipped `--patch`, `DSH_SYSTEM_PROMPT`) and driven over
//! 127.0.0.1 by `real_client.py`. The same script then runs on the real runtime with the model
//! stub, and what a client of the bridge sees must be the same. Needs PyPI (see
//! tests/support/pypi.rs for running offline).

use crate::support::pypi::{need_real_runtime, need_venv};
use serde_json::{json, Value};
use std::process::Command;

const TEST: &str = "dsh_openai_sees_the_same_answers_from_our_runtime_and_the_real_one";

/// Runs the client script on `runtime` (with the stub's URL and key, if any); returns its JSON.
fn drive(python: &std::path::Path, runtime: &str, stub: Option<(String, String)>) -> Value {
    let work = std::env::temp_dir().join(format!(
        "dsh-real-client-{}-{}",
        std::process::id(),
        stub.is_some()
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/runtime/real_client.py");
    let mut cmd = Command::new(python);
    cmd.args([script, runtime, work.to_str().unwrap()]);
    if let Some((url, key)) = &stub {
        cmd.args([url, key]);
    }
    let out = cmd.output().expect("run python");
    let _ = std::fs::remove_dir_all(&work);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the client script failed on {runtime}:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("no JSON from the client script ({e}):\n{stdout}"))
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn dsh_openai_sees_the_same_answers_from_our_runtime_and_the_real_one() {
    let env = need_venv(TEST, "dsh-openai", &["dsh-openai"]);
    let ours = drive(
        &env.python,
        env!("CARGO_BIN_EXE_dsh-reference-runtime"),
        None,
    );
    // What the bridge's client sees from our runtime: the scripted model's answer, the same text
    // streamed in chunks, `maxtokens` as finish_reason `length`, a refused model request as an
    // empty answer (the bridge logs the turn's error), a bash call's result.
    let expected = json!({
        "reply": {"status": 200, "content": "hello from the bridge", "finish": "stop"},
        "stream": {"status": 200, "content": "streamed words", "finish": "stop", "chunks": 5},
        "maxtokens": {"status": 200, "content": "partial...", "finish": "length"},
        "error400": {"status": 200, "content": "", "finish": "stop"},
        // sdk-minimal's bash: a persistent shell, its result as the release words it.
        "tool": {
            "status": 200,
            "content": "tool result: bridged\n[Command finished with exit code 0]",
            "finish": "stop"
        },
        // A file the model wrote, listed and read by real programs (ls, tr).
        "files": {
            "status": 200,
            "content": "tool result: note.txt\nFROM THE MODEL\n[Command finished with exit code 0]",
            "finish": "stop"
        },
    });
    assert_eq!(ours, expected, "our runtime under dsh-openai");

    let real = need_real_runtime(TEST);
    let stub = dsh_conformance::ModelStub::start().expect("start the model stub");
    let theirs = drive(
        &env.python,
        real.to_str().unwrap(),
        Some((stub.base_url(), stub.api_key().to_owned())),
    );
    println!("client-visible results under dsh-openai (ours | real runtime + model stub):");
    for case in ["reply", "stream", "maxtokens", "error400", "tool", "files"] {
        println!("  {case:<10} {} | {}", ours[case], theirs[case]);
    }
    assert_eq!(
        ours, theirs,
        "dsh-openai sees our runtime as it sees the real one"
    );
}
