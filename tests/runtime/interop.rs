//! SDK interop (issue item 5): the official Python SDK from PyPI drives `dsh-reference-runtime`
//! through `DeepSeekHarness`/`Session.run`, launched via its `dsh_bin` setting and via
//! `_launch_args`. Needs PyPI (see tests/support/pypi.rs for running offline).

use crate::support::pypi::{need_venv, SDK};
use serde_json::Value;
use std::process::Command;

fn drive(mode: &str) -> Value {
    let env = need_venv(
        "the_official_python_sdk_drives_the_reference_runtime",
        "sdk",
        &[SDK],
    );
    let home = std::env::temp_dir().join(format!("dsh-interop-{}-{mode}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/runtime/interop.py");
    let out = Command::new(&env.python)
        .args([
            script,
            env!("CARGO_BIN_EXE_dsh-reference-runtime"),
            home.to_str().unwrap(),
            mode,
        ])
        .output()
        .expect("run python");
    let _ = std::fs::remove_dir_all(&home);
    assert!(
        out.status.success(),
        "interop script failed ({mode}):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

fn check(r: &Value) {
    assert_eq!(r["handshake"], true);
    let run1 = &r["run1"];
    assert_eq!(run1["final"], "hello from the reference runtime");
    assert_eq!(run1["finish"], "completed");
    assert_eq!(run1["turns"], serde_json::json!([1]));
    // The run starts at the receipt (seq 3, after the creation events) and sees the whole turn.
    assert_eq!(run1["seqs"][0], 3);
    assert_eq!(run1["types"][0], "agent/inbox/spliced");
    let run2 = &r["run2"];
    assert_eq!(run2["final"], "second");
    assert_eq!(
        run2["turns"],
        serde_json::json!([2]),
        "second run is turn 2"
    );
    let last1 = run1["seqs"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_u64()
        .unwrap();
    assert!(
        run2["seqs"][0].as_u64().unwrap() > last1,
        "second run replays no events: {run2}"
    );
    assert_eq!(r["parallel"]["a"]["final"], "from A");
    assert_eq!(r["parallel"]["b"]["final"], "from B");
    assert_eq!(r["unknown"]["code"], -32603);
    assert_eq!(
        r["unknown"]["message"],
        "unknown DeepSeek Harness SDK runtime method: probe/unknown"
    );
    assert_eq!(r["exit"], 0);
    // The SDK's own close waits up to 1 s for a voluntary exit before terminating; a generous
    // bound here only guards against hangs (machines are noisy), the exit code proves the path.
    assert!(
        r["close_seconds"].as_f64().unwrap() < 5.0,
        "close took {}",
        r["close_seconds"]
    );
    eprintln!(
        "interop {}: close {:.3}s, exit {}",
        r["mode"],
        r["close_seconds"].as_f64().unwrap(),
        r["exit"]
    );
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn the_official_python_sdk_drives_the_reference_runtime_via_dsh_bin() {
    check(&drive("dsh_bin"));
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn the_official_python_sdk_drives_the_reference_runtime_via_launch_args() {
    check(&drive("launch_args"));
}
