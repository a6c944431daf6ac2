//! The `dsh-reference-runtime` binary: arguments, lifecycle, signals, EOF, stdout purity,
//! resume across processes. Deadlines are generous and only guard against hangs.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_dsh-reference-runtime");
const LONG: Duration = Duration::from_secs(20);

struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    seen: Vec<Value>,
}

fn spawn(args: &[&str], home: Option<&Path>) -> Proc {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.env_remove("DSH_HOME")
        .env_remove("DSH_MAX_TOKENS_AS_SUCCESS");
    if let Some(h) = home {
        cmd.env("DSH_HOME", h);
    }
    let mut child = cmd.spawn().expect("spawn runtime");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines() {
            let Ok(l) = l else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    Proc {
        stdin: child.stdin.take(),
        child,
        lines: rx,
        seen: Vec::new(),
    }
}

impl Proc {
    fn write(&mut self, s: &str) {
        let w = self.stdin.as_mut().unwrap();
        w.write_all(s.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Reads frames until `pred` matches one; every stdout line must be a JSON-RPC object.
    fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + LONG;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let l = self
                .lines
                .recv_timeout(left)
                .expect("expected frame did not arrive");
            let v: Value = serde_json::from_str(&l)
                .unwrap_or_else(|_| panic!("stdout carries only frames: {l}"));
            assert!(v.is_object() && v["jsonrpc"] == "2.0", "{l}");
            self.seen.push(v.clone());
            if pred(&v) {
                return v;
            }
        }
    }

    fn response(&mut self, id: Value) -> Value {
        self.until(|v| v.get("method").is_none() && v["id"] == id)
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Exit code within the deadline; the rest of stdout must be frames too.
    fn exit(mut self) -> (i32, Vec<Value>) {
        let end = Instant::now() + LONG;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                let mut rest = self.seen;
                while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(500)) {
                    let v: Value = serde_json::from_str(&l)
                        .unwrap_or_else(|_| panic!("stdout carries only frames: {l}"));
                    rest.push(v);
                }
                return (st.code().unwrap_or(-1), rest);
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!("the runtime did not exit");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }
}

fn line(v: Value) -> String {
    format!("{v}\n")
}

fn init() -> String {
    line(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":".","provider":"deepseek-official","model":"deepseek-v4-flash"}}),
    )
}

fn prompt(id: u64, sid: &str, text: &str) -> String {
    line(
        json!({"jsonrpc":"2.0","id":id,"method":"session/prompt","params":{"sessionId":sid,"contentBlocks":[{"type":"text","text":text}]}}),
    )
}

#[test]
fn help_prints_usage_and_unknown_flags_are_usage_errors() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--profile sdk|sdk-minimal"));
    let out = Command::new(BIN)
        .arg("--bogus")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage:"));
    let out = Command::new(BIN)
        .args(["--edition", "1999"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_invalid_max_tokens_as_success_fails_to_load_with_empty_stdout() {
    let out = Command::new(BIN)
        .args(["--profile", "sdk"])
        .env("DSH_MAX_TOKENS_AS_SUCCESS", "sometimes")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("plugin tree failed to load"));
}

#[test]
fn shutdown_answers_every_pipelined_shutdown_and_exits_zero() {
    let mut p = spawn(&["--profile", "sdk"], None);
    p.write(&init());
    p.response(json!(1));
    p.write(&format!(
        "{}{}",
        line(json!({"jsonrpc":"2.0","id":"a","method":"shutdown"})),
        line(json!({"jsonrpc":"2.0","id":"b","method":"shutdown","params":{}}))
    ));
    let (code, frames) = p.exit();
    assert_eq!(code, 0);
    for id in ["a", "b"] {
        assert!(
            frames
                .iter()
                .any(|f| f["id"] == id && f["result"] == json!({})),
            "{id} answered: {frames:?}"
        );
    }
}

#[test]
fn eof_answers_what_was_read_drops_an_unterminated_tail_and_exits_zero() {
    let mut p = spawn(&[], None);
    p.write(&format!(
        "{}{}{}",
        init(),
        line(json!({"jsonrpc":"2.0","id":"u","method":"probe/u"})),
        "{\"jsonrpc\":\"2.0\",\"id\":\"tail\",\"method\":\"probe/t\"}"
    ));
    p.close_stdin();
    let (code, frames) = p.exit();
    assert_eq!(code, 0);
    assert!(frames
        .iter()
        .any(|f| f["id"] == 1 && f["result"]["serverInfo"].is_object()));
    assert!(frames.iter().any(|f| f["id"] == "u"));
    assert!(
        frames.iter().all(|f| f["id"] != "tail"),
        "the unterminated last line is dropped"
    );
}

#[test]
fn eof_during_a_hung_turn_exits_zero_without_turn_end() {
    let mut p = spawn(&[], None);
    p.write(&format!("{}{}", init(), prompt(2, "s1", "hang")));
    p.response(json!(2));
    p.close_stdin();
    let (code, frames) = p.exit();
    assert_eq!(code, 0);
    assert!(frames
        .iter()
        .all(|f| f["params"]["event"]["type"] != "turn/end" && f["params"]["status"] != "idle"));
}

#[test]
fn sigterm_exits_zero_and_sigint_exits_130() {
    for (sig, want) in [(libc::SIGTERM, 0), (libc::SIGINT, 130)] {
        let mut p = spawn(&["--profile", "sdk"], None);
        p.write(&format!("{}{}", init(), prompt(2, "s1", "hang")));
        p.response(json!(2));
        p.signal(sig);
        let (code, frames) = p.exit();
        assert_eq!(code, want, "signal {sig}");
        assert!(frames
            .iter()
            .all(|f| f["params"]["event"]["type"] != "turn/end"));
    }
}

#[test]
fn two_prompts_in_one_write_queue_as_two_turns_with_one_idle() {
    let mut p = spawn(&[], None);
    p.write(&init());
    p.response(json!(1));
    p.write(&format!(
        "{}{}",
        prompt(2, "s1", "reply: first"),
        prompt(3, "s1", "reply: second")
    ));
    p.until(|v| v["method"] == "session.status" && v["params"]["status"] == "idle");
    p.write(&line(json!({"jsonrpc":"2.0","id":9,"method":"shutdown"})));
    let (code, frames) = p.exit();
    assert_eq!(code, 0);
    let receipts: Vec<u64> = frames
        .iter()
        .filter(|f| {
            f["params"]["event"]["type"] == "agent/inbox/spliced"
                && f["params"]["event"]["data"]["inserted"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty())
        })
        .map(|f| f["params"]["event"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(
        receipts,
        [3, 6],
        "the second receipt lands before the first step, as in the real back_to_back trace"
    );
    let idles = frames
        .iter()
        .filter(|f| f["params"]["status"] == "idle")
        .count();
    assert_eq!(idles, 1);
}

#[test]
fn a_session_resumes_in_a_second_process_sharing_dsh_home() {
    let home = std::env::temp_dir().join(format!("dsh-rt-proc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let mut a = spawn(&["--profile", "sdk"], Some(&home));
    a.write(&format!(
        "{}{}",
        init(),
        prompt(2, "persist1", "reply: remember me")
    ));
    a.until(|v| v["params"]["status"] == "idle");
    a.write(&line(json!({"jsonrpc":"2.0","id":99,"method":"shutdown"})));
    assert_eq!(a.exit().0, 0);
    let mut b = spawn(&["--profile", "sdk"], Some(&home));
    b.write(&init());
    b.response(json!(1));
    b.write(&prompt(2, "persist1", "reply: no"));
    assert_eq!(
        b.response(json!(2))["error"]["message"],
        "session \"persist1\" already exists"
    );
    b.write(&line(json!({"jsonrpc":"2.0","id":"r1","method":"session/resume","params":{"sessionId":"persist1"}})));
    assert_eq!(b.response(json!("r1"))["result"], json!({}));
    b.write(&prompt(3, "persist1", "reply: after resume"));
    let end = b.until(|v| v["params"]["event"]["type"] == "turn/end");
    assert_eq!(end["params"]["event"]["data"]["turn"], 2);
    assert_eq!(end["params"]["event"]["seq"], 27);
    b.close_stdin();
    assert_eq!(b.exit().0, 0);
    let _ = std::fs::remove_dir_all(&home);
}

/// A session open in a live process is owned by it (the release's write handle): a second
/// process sharing `DSH_HOME` is refused its resume until the owner exits, cleanly or killed
/// (docs/CONTRACT.md#s3.3; recorded: `persistence_owned_by_live_process`).
#[test]
fn a_session_is_owned_by_its_live_process_until_it_exits_or_is_killed() {
    let home = std::env::temp_dir().join(format!("dsh-rt-owned-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let resume = |id: &str, sid: &str| {
        line(json!({"jsonrpc":"2.0","id":id,"method":"session/resume","params":{"sessionId":sid}}))
    };
    for end in ["shutdown", "SIGKILL"] {
        let sid = format!("owned-{end}");
        let mut a = spawn(&["--profile", "sdk"], Some(&home));
        a.write(&format!("{}{}", init(), prompt(2, &sid, "reply: mine")));
        a.until(|v| v["params"]["status"] == "idle");
        let mut b = spawn(&["--profile", "sdk"], Some(&home));
        b.write(&init());
        b.response(json!(1));
        b.write(&resume("r1", &sid));
        assert_eq!(
            b.response(json!("r1"))["error"]["message"],
            format!("session \"{sid}\" is already owned by an active write handle"),
            "{end}"
        );
        b.write(&prompt(3, &sid, "reply: no"));
        assert_eq!(
            b.response(json!(3))["error"]["message"],
            format!("session \"{sid}\" already exists")
        );
        if end == "shutdown" {
            a.write(&line(json!({"jsonrpc":"2.0","id":99,"method":"shutdown"})));
            assert_eq!(a.exit().0, 0);
        } else {
            a.signal(libc::SIGKILL);
            assert_eq!(a.exit().0, -1);
        }
        b.write(&resume("r2", &sid));
        assert_eq!(b.response(json!("r2"))["result"], json!({}), "{end}");
        b.write(&prompt(4, &sid, "reply: mine now"));
        let turn_end = b.until(|v| v["params"]["event"]["type"] == "turn/end");
        assert_eq!(turn_end["params"]["event"]["data"]["turn"], 2, "{end}");
        b.close_stdin();
        assert_eq!(b.exit().0, 0);
    }
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn the_legacy_edition_and_minimal_profile_are_served_by_the_binary() {
    let mut p = spawn(&["--edition", "legacy", "--profile", "sdk-minimal"], None);
    p.write(&format!("{}{}", init(), prompt(2, "s1", "maxtokens")));
    let fin = p.until(|v| v["method"] == "session.finished");
    // sdk-minimal: max-tokens does not count as success.
    assert_eq!(fin["params"]["status"], "error");
    assert_eq!(p.response(json!(2))["result"], json!({"accepted": true}));
    p.close_stdin();
    assert_eq!(p.exit().0, 0);
}
