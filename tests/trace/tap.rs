//! `dsh-conformance tap`: a live session through the proxy becomes a golden trace that replays
//! green against the runtime it was taken from — driven by a shell pipe, and by the official SDK.

use super::sent;
use crate::support::pypi::{need_venv, SDK};
use dsh_conformance::runner::{replay, CommandSpec, Options};
use dsh_conformance::trace::Trace;
use std::path::PathBuf;
use std::process::Command;

const KIT: &str = env!("CARGO_BIN_EXE_dsh-conformance");
const RUNTIME: &str = env!("CARGO_BIN_EXE_dsh-reference-runtime");

fn scratch() -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tap-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The tapped trace replays green against the same runtime.
fn replays_green(trace: &std::path::Path) -> Trace {
    let text = std::fs::read_to_string(trace).expect("the tap wrote its trace");
    let t = Trace::parse(&text, &trace.display().to_string()).expect("a valid trace");
    let cmd = CommandSpec::new(RUNTIME).arg("--profile").arg("sdk");
    let r = replay(&t, &cmd, &Options::default());
    assert!(r.passed(), "{r}\n{text}");
    t
}

/// The methods a trace sends, in order.
fn methods(t: &Trace) -> Vec<String> {
    sent(t)
        .iter()
        .filter_map(|f| f["method"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_piped_session_through_the_tap_is_forwarded_unchanged_and_replays_green() {
    let dir = scratch();
    let out = dir.join("s.trace");
    let raw = dir.join("s.jsonl");
    let sends = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/","provider":"deepseek-official","model":"deepseek-v4-flash"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","contentBlocks":[{"type":"text","text":"reply: tapped"}]}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"method":"probe/unknown"}"#,
        "\n",
    );
    // Stdin stays open until the turn has settled (session/wait answers after idle): an EOF
    // racing the turn would make the tapped session itself nondeterministic.
    let sends = format!(
        "{sends}{}\n",
        r#"{"jsonrpc":"2.0","id":4,"method":"session/wait","params":{"sessionId":"s1"}}"#
    );
    let mut child = std::process::Command::new(KIT)
        .args([
            "tap",
            "--out",
            out.to_str().unwrap(),
            "--raw",
            raw.to_str().unwrap(),
            "--",
            RUNTIME,
            "--profile",
            "sdk",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, sends.as_bytes()).unwrap();
    let mut through = String::new();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    for l in lines.by_ref() {
        let l = l.unwrap();
        through.push_str(&l);
        through.push('\n');
        if l.contains(r#""id":4,"result""#) {
            break;
        }
    }
    drop(stdin);
    for l in lines {
        through.push_str(&l.unwrap());
        through.push('\n');
    }
    assert_eq!(child.wait().unwrap().code(), Some(0), "{through}");
    let text = through;
    assert!(text.contains(r#""id":1,"result":{"serverInfo""#), "{text}");
    assert!(text.contains(r#""id":3,"error""#), "{text}");
    let trace = replays_green(&out);
    assert!(sent(&trace).iter().any(|f| f["id"] == 3), "{trace:?}");
    // The raw transcript imports to a trace too.
    let imported = dsh_conformance::trace::import::import(
        &std::fs::read_to_string(&raw).unwrap(),
        "tapped",
        "raw",
    )
    .expect("the raw transcript imports");
    let imported = Trace::parse(&imported, "imported.trace").expect("a valid trace");
    assert!(
        methods(&imported).iter().any(|m| m == "probe/unknown"),
        "{imported:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn the_official_sdk_through_the_tap_gives_a_trace_that_replays_green() {
    let env = need_venv(
        "the_official_sdk_through_the_tap_gives_a_trace_that_replays_green",
        "sdk",
        &[SDK],
    );
    let dir = scratch();
    let out = dir.join("sdk.trace");
    let wrapper = dir.join("runtime-behind-tap");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec '{KIT}' tap --case sdk-session --out '{}' -- '{RUNTIME}' \"$@\"\n",
            out.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = r#"
import sys
from deepseek_harness import DeepSeekHarness, DeepSeekHarnessConfig
h = DeepSeekHarness(DeepSeekHarnessConfig(dsh_bin=sys.argv[1], dsh_home=sys.argv[2]))
h.start()
r = h.start_session("tapped").run("reply: hello through the tap")
print(r.final_response)
h.close()
"#;
    let run = Command::new(&env.python)
        .args([
            "-c",
            script,
            wrapper.to_str().unwrap(),
            home.to_str().unwrap(),
        ])
        .current_dir(&dir)
        .output()
        .expect("run python");
    assert!(
        run.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "hello through the tap",
        "the SDK saw the runtime's answer unchanged"
    );
    let trace = replays_green(&out);
    assert_eq!(trace.meta.case, "sdk-session");
    assert!(
        methods(&trace).iter().any(|m| m == "session/prompt"),
        "{trace:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
