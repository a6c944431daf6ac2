//! The `sdk` profile's sandboxed bash (docs/CONTRACT.md#s13.6): the core through a scripted
//! backend (the job events, the result and its `meta.cwd`, what the backend is asked), and the
//! binary on this host, under bubblewrap (the workspace writable, the rest read-only) and with
//! bwrap hidden from its PATH (refused). The byte-exact comparison with the release is the
//! fidelity test's (`sandbox_bash`, `sandbox_bash_no_backend`).

use super::harness::{cfg, events, prompt, turn_end, H};
use crate::support::sandbox::{bwrap_usable, path_without_bwrap};
use dsh_conformance::runtime::sandbox::{Backend, Confined, Ran, Request, Sandbox};
use dsh_conformance::runtime::Edition;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

const BIN: &str = env!("CARGO_BIN_EXE_dsh-reference-runtime");

/// A backend that answers every request with one run and keeps what it was asked.
#[derive(Default)]
struct Scripted {
    asked: Mutex<Vec<(String, String, String)>>,
}

impl Backend for Scripted {
    fn run(&self, req: &Request<'_>) -> Confined {
        let show = |p: &Path| p.to_string_lossy().into_owned();
        self.asked.lock().unwrap().push((
            req.command.to_owned(),
            show(req.cwd),
            show(req.workspace),
        ));
        Confined::Ran(Ran {
            stdout: "out".into(),
            stderr: "err\n".into(),
            exit_code: Some(3),
            signal: None,
        })
    }
}

#[test]
fn a_backend_runs_each_call_in_the_session_directory_and_its_job_completes() {
    let backend = Arc::new(Scripted::default());
    let mut c = cfg(Edition::Current);
    c.sandbox = Sandbox::with(backend.clone());
    let mut h = H::with(c);
    h.init();
    let mut f = h.send(prompt(2, "s", "tool: echo out; echo err >&2; exit 3"));
    f.extend(h.settle());
    assert_eq!(turn_end(&f, "s")[0]["reason"], json!({"kind": "completed"}));
    let cwd = "/work-dir";
    assert_eq!(
        *backend.asked.lock().unwrap(),
        [(
            "echo out; echo err >&2; exit 3".to_owned(),
            cwd.to_owned(),
            cwd.to_owned()
        )]
    );
    let ev = events(&f, "s");
    let of = |t: &str| ev.iter().find(|e| e["type"] == t).unwrap()["data"].clone();
    let settled = of("job/settled");
    assert_eq!(settled["status"], "completed");
    assert_eq!(settled["detail"], "exit code: 3");
    assert_eq!(settled["jobId"], of("job/registered")["jobId"]);
    let result = of("tool/result");
    assert_eq!(result["message"]["isError"], false);
    assert_eq!(
        result["message"]["content"][0]["text"],
        "out\n[stderr]\nerr\n[exit code: 3]"
    );
    assert_eq!(result["meta"], json!({"cwd": cwd}));
}

/// The reference binary under `--profile sdk` in `cwd` (PATH `path`), sent `initialize` and the
/// prompt `text` for session `s`: the process and its stdin.
fn sdk_binary(
    cwd: &Path,
    path: &str,
    text: &str,
) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = Command::new(BIN)
        .args(["--profile", "sdk"])
        .current_dir(cwd)
        .env("PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the reference runtime");
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd": cwd,
        "provider":"deepseek-official","model":"deepseek-v4-flash"}});
    writeln!(stdin, "{init}\n{}", prompt(2, "s", text)).unwrap();
    (child, stdin)
}

/// Runs `command` as the `sdk` bash of the reference binary in `cwd` (PATH `path`); returns the
/// tool result text.
fn binary_bash(cwd: &Path, path: &str, command: &str) -> String {
    let (mut child, stdin) = sdk_binary(cwd, path, &format!("tool: {command}"));
    let mut result = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        assert!(v.get("error").is_none(), "{v}");
        let ev = &v["params"]["event"];
        if ev["type"] == "tool/result" {
            result = ev["data"]["message"]["content"][0]["text"]
                .as_str()
                .map(str::to_owned);
        }
        if ev["type"] == "turn/end" {
            break;
        }
    }
    shut_down(child, stdin);
    result.expect("a tool result")
}

/// Sends `shutdown`, closes stdin and waits for the process.
fn shut_down(mut child: std::process::Child, mut stdin: std::process::ChildStdin) {
    let shutdown = json!({"jsonrpc":"2.0","id":3,"method":"shutdown"});
    writeln!(stdin, "{shutdown}").unwrap();
    drop(stdin);
    child.wait().unwrap();
}

fn workspace(name: &str) -> std::path::PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sandbox-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_binary_runs_bash_under_bubblewrap_where_the_host_has_it() {
    if !bwrap_usable("the reference binary's sandboxed bash") {
        return;
    }
    let ws = workspace("bwrap");
    let path = std::env::var("PATH").unwrap_or_default();
    let text = binary_bash(&ws, &path, "touch made.txt && ls; touch /usr/dsh-denied");
    assert!(
        text.starts_with("made.txt\n[stderr]\ntouch: cannot touch '/usr/dsh-denied': Read-only file system\n[sandbox: file access denied under workspace-write mode]\n"),
        "{text}"
    );
    assert!(text.ends_with("\n[exit code: 1]"), "{text}");
    assert!(ws.join("made.txt").is_file(), "the workspace is writable");
    assert!(!Path::new("/usr/dsh-denied").exists());
    let _ = std::fs::remove_dir_all(&ws);
}

#[test]
fn the_binary_refuses_bash_on_a_host_without_a_sandbox_backend() {
    let ws = workspace("none");
    let text = binary_bash(&ws, &path_without_bwrap(), "touch made.txt");
    assert!(
        text.starts_with("Error: sandbox mode \"workspace-write\" is requested but no sandbox backend is usable on this host"),
        "{text}"
    );
    assert!(!ws.join("made.txt").exists(), "nothing ran");
    let _ = std::fs::remove_dir_all(&ws);
}

#[test]
fn the_binary_wakes_an_idle_session_when_its_background_job_ends() {
    if !bwrap_usable("the reference binary's background job that ends on its own") {
        return;
    }
    let ws = workspace("wakeup");
    let call = r#"call: bash {"description":"d","command":"sleep 0.3; echo late","run_in_background":true}"#;
    let path = std::env::var("PATH").unwrap_or_default();
    let (mut child, stdin) = sdk_binary(&ws, &path, call);
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    // Nothing is sent after the prompt: the second turn is the runtime's own.
    let mut ev = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !ev
        .iter()
        .any(|e: &Value| e["type"] == "turn/end" && e["data"]["turn"] == 2)
    {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx.recv_timeout(left).expect("the wake-up turn within 30 s");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["method"] == "session.event" {
            ev.push(v["params"]["event"].clone());
        }
    }
    let types: Vec<&str> = ev.iter().filter_map(|e| e["type"].as_str()).collect();
    let settled = types.iter().position(|t| *t == "job/settled").unwrap();
    assert_eq!(types[settled + 2], "turn/start", "{types:?}");
    let notice = ev
        .iter()
        .rev()
        .find(|e| e["type"] == "user/message")
        .unwrap();
    assert_eq!(notice["data"]["source"]["kind"], "tool-jobs");
    let text = notice["data"]["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with("(bash: sleep 0.3; echo late) finished [status: completed, exit code: 0]. Read its output with job_output."), "{text}");
    shut_down(child, stdin);
    let _ = std::fs::remove_dir_all(&ws);
}
