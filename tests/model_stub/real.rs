//! The model stub drives the REAL upstream runtime (PyPI `deepseek-harness-runtime-bin`) through
//! complete turns; every expectation below was checked against traces/real-0.2.1rc2 (the recording
//! of the same runtime against the stub the directives come from).
//!
//! Only one test exercises a retried failure (`error500`, ≈ 15 s of upstream back-off); `empty` and
//! `sseerror` behave the same way upstream and are covered by the stub's own tests.

use crate::support::pypi::need_real_runtime;
use dsh_conformance::model_stub::ModelStub;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// Generous: only there so a broken runtime cannot hang the test run.
const DEADLINE: Duration = Duration::from_secs(60);

/// A fresh directory removed on drop.
fn temp_dir(tag: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("dsh-stub-{tag}-"))
        .tempdir()
        .expect("create temp dir")
}

/// The real runtime on stdio, pointed at a stub.
pub struct Real {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    /// Every frame received so far.
    pub frames: Vec<Value>,
    next_id: u64,
    cwd: TempDir,
    _home: TempDir,
}

impl Real {
    /// Launches `<exe> --profile sdk` against `stub` and initializes it.
    pub fn start(exe: &Path, stub: &ModelStub) -> Real {
        Real::start_with(exe, stub, &[])
    }

    /// Like [`Real::start`], with environment variables overriding the stub's.
    pub fn start_with(exe: &Path, stub: &ModelStub, env: &[(&str, String)]) -> Real {
        let home = temp_dir("home");
        let cwd = temp_dir("cwd");
        let mut cmd = Command::new(exe);
        cmd.arg("--profile").arg("sdk");
        stub.configure(&mut cmd, home.path(), cwd.path());
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the real runtime");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("non-JSON stdout line {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut real = Real {
            child,
            stdin,
            rx,
            frames: Vec::new(),
            next_id: 1,
            cwd,
            _home: home,
        };
        let cwd = real.cwd.path().to_string_lossy().into_owned();
        let init = real.request(
            "initialize",
            json!({"cwd": cwd, "provider": "deepseek-official", "model": "deepseek-v4-flash"}),
        );
        assert_eq!(
            init["result"]["serverInfo"]["name"], "deepseek-harness-sdk-runtime",
            "{init}"
        );
        real
    }

    fn send(&mut self, frame: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{frame}").expect("write to the runtime");
        stdin.flush().expect("flush");
    }

    /// Receives frames until `done(frames)` holds.
    pub fn wait_until(&mut self, what: &str, done: impl Fn(&[Value]) -> bool) {
        let deadline = Instant::now() + DEADLINE;
        while !done(&self.frames) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(v) => self.frames.push(v),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("timed out waiting for {what}; frames: {:#?}", self.frames)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("runtime stdout closed waiting for {what}")
                }
            }
        }
    }

    /// The first frame received (so far or from now on) matching `pred`.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_until(what, |fs| fs.iter().any(&pred));
        self.frames
            .iter()
            .find(|f| pred(f))
            .cloned()
            .expect("found")
    }

    /// Sends a request and waits for its response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(&format!("the response to {method} #{id}"), |f| {
            f.get("id") == Some(&json!(id))
        })
    }

    /// Prompts `session` with `text`; returns once the response arrived (the turn runs on).
    pub fn prompt(&mut self, session: &str, text: &str) -> Value {
        let r = self.request(
            "session/prompt",
            json!({"sessionId": session, "contentBlocks": [{"type": "text", "text": text}]}),
        );
        assert!(r["result"]["messageId"].is_string(), "prompt refused: {r}");
        r
    }

    /// The `turn/end` data of `turn` in `session`.
    pub fn turn_end(&mut self, session: &str, turn: u64) -> Value {
        let f = self.wait_for(&format!("turn/end {turn} of {session}"), |f| {
            event_of(f, session, "turn/end").is_some_and(|e| e["data"]["turn"] == json!(turn))
        });
        f["params"]["event"]["data"].clone()
    }

    /// Waits for the `n`th `session.status idle` of `session`.
    pub fn idle(&mut self, session: &str, n: usize) {
        self.wait_until(&format!("idle #{n} of {session}"), |fs| {
            fs.iter().filter(|f| is_idle(f, session)).count() >= n
        });
    }

    /// Events of `type` in `session`, in order.
    pub fn events(&self, session: &str, kind: &str) -> Vec<Value> {
        self.frames
            .iter()
            .filter_map(|f| event_of(f, session, kind))
            .cloned()
            .collect()
    }

    /// `shutdown`, then the exit status (killing the process if it does not exit).
    pub fn shutdown(mut self) -> Option<i32> {
        let r = self.request("shutdown", json!({}));
        assert_eq!(r["result"], json!({}), "{r}");
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Real {
    fn drop(&mut self) {
        self.stdin.take();
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn event_of<'a>(f: &'a Value, session: &str, kind: &str) -> Option<&'a Value> {
    (f["method"] == "session.event"
        && f["params"]["sessionId"] == session
        && f["params"]["event"]["type"] == kind)
        .then(|| &f["params"]["event"])
}

fn is_idle(f: &Value, session: &str) -> bool {
    f["method"] == "session.status"
        && f["params"]["sessionId"] == session
        && f["params"]["status"] == "idle"
}

/// The content of every `assistant/message` of `session`.
fn assistant_contents(real: &Real, session: &str) -> Vec<Value> {
    real.events(session, "assistant/message")
        .iter()
        .map(|e| e["data"]["message"]["content"].clone())
        .collect()
}

fn setup(test: &str) -> (PathBuf, ModelStub) {
    let exe = need_real_runtime(test);
    (exe, ModelStub::start().expect("start the model stub"))
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_completes_a_reply_turn_through_the_stub() {
    let (exe, stub) = setup("real_runtime_completes_a_reply_turn_through_the_stub");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "reply: hello world");
    let end = real.turn_end("s1", 1);
    assert_eq!(
        end["reason"],
        json!({"kind": "completed"}),
        "{}",
        stub.log_text()
    );
    assert_eq!(
        assistant_contents(&real, "s1"),
        vec![json!([{"type": "text", "text": "hello world"}])]
    );
    // Streamed in the two halves the recorded stub sent (traces/real-0.2.1rc2/happy_basic).
    let stream = &real.events("s1", "assistant/message")[0]["data"]["stream"];
    let chunks: Vec<&Value> = stream
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "text-chunks")
        .collect();
    assert_eq!(chunks.len(), 1, "{stream}");
    assert_eq!(chunks[0]["texts"], json!(["hello", " world"]));
    real.idle("s1", 1);
    assert_eq!(real.shutdown(), Some(0));

    let log = stub.requests();
    assert_eq!(log.len(), 1, "{}", stub.log_text());
    let r = &log[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str(), r.status),
        ("POST", "/v1/messages", Some(200))
    );
    assert_eq!(r.header("x-api-key"), Some(stub.api_key()));
    assert_eq!(r.header("accept"), Some("text/event-stream"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("x-deepseek-harness-session-id"), Some("s1"));
    let facts = r.facts.as_ref().expect("a readable Messages body");
    for key in [
        "model",
        "stream",
        "messages",
        "max_tokens",
        "system",
        "tools",
    ] {
        assert!(
            facts.keys.iter().any(|k| k == key),
            "body keys {:?} lack {key}",
            facts.keys
        );
    }
    assert_eq!(facts.model.as_deref(), Some("deepseek-v4-flash"));
    assert!(
        facts.tool_names.iter().any(|t| t == "bash")
            && facts.tool_names.iter().any(|t| t == "subagent")
    );
    assert_eq!(r.directive.as_deref(), Some("reply"));
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_ends_a_maxtokens_turn_with_reason_max_tokens() {
    let (exe, stub) = setup("real_runtime_ends_a_maxtokens_turn_with_reason_max_tokens");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "maxtokens");
    assert_eq!(
        real.turn_end("s1", 1)["reason"],
        json!({"kind": "max-tokens"}),
        "{}",
        stub.log_text()
    );
    assert_eq!(
        assistant_contents(&real, "s1"),
        vec![json!([{"type": "text", "text": "partial..."}])]
    );
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_turns_a_thinking_block_into_reasoning_content() {
    let (exe, stub) = setup("real_runtime_turns_a_thinking_block_into_reasoning_content");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "thinking");
    assert_eq!(
        real.turn_end("s1", 1)["reason"],
        json!({"kind": "completed"}),
        "{}",
        stub.log_text()
    );
    let expected = json!([{"type": "reasoning", "text": "let me think"}, {"type": "text", "text": "thought done"}]);
    assert_eq!(assistant_contents(&real, "s1"), vec![expected]);
    let message = &real.events("s1", "assistant/message")[0]["data"]["message"];
    assert_eq!(
        message["source"]["replayState"]["blocks"][0],
        json!({"type": "reasoning", "signature": "fakesig"})
    );
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_fails_an_error400_turn_without_retry_and_recovers_on_the_next_prompt() {
    let (exe, stub) =
        setup("real_runtime_fails_an_error400_turn_without_retry_and_recovers_on_the_next_prompt");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "error400");
    let end = real.turn_end("s1", 1);
    let expected = json!({"kind": "error", "error": {"message": "fake bad request", "code": "INVALID_REQUEST", "status": 400}});
    assert_eq!(end["reason"], expected);
    real.idle("s1", 1);
    assert_eq!(
        stub.requests().len(),
        1,
        "a 400 is not retried:\n{}",
        stub.log_text()
    );
    // The next prompt is merged into the same user message after the runtime context:
    // [error400, runtime context, reply: recovered]; the stub must read the last user text.
    real.prompt("s1", "reply: recovered");
    assert_eq!(
        real.turn_end("s1", 2)["reason"],
        json!({"kind": "completed"}),
        "{}",
        stub.log_text()
    );
    assert_eq!(
        assistant_contents(&real, "s1"),
        vec![json!([{"type": "text", "text": "recovered"}])]
    );
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_reports_a_truncated_stream_as_stream_closed() {
    let (exe, stub) = setup("real_runtime_reports_a_truncated_stream_as_stream_closed");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "truncate");
    let expected = json!({"kind": "error", "error": {"message": "DeepSeek Messages stream ended before message_stop", "code": "STREAM_CLOSED"}});
    assert_eq!(
        real.turn_end("s1", 1)["reason"],
        expected,
        "{}",
        stub.log_text()
    );
    assert_eq!(
        stub.requests().len(),
        1,
        "a truncated stream is not retried:\n{}",
        stub.log_text()
    );
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_runs_the_bash_tool_call_and_completes_on_the_tool_result() {
    let (exe, stub) =
        setup("real_runtime_runs_the_bash_tool_call_and_completes_on_the_tool_result");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "tool: echo hi");
    assert_eq!(
        real.turn_end("s1", 1)["reason"],
        json!({"kind": "completed"}),
        "{}",
        stub.log_text()
    );
    let calls = real.events("s1", "tool/call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["data"]["name"], "bash");
    assert_eq!(
        calls[0]["data"]["arguments"],
        r#"{"description": "probe command", "command": "echo hi"}"#
    );
    let result = &real.events("s1", "tool/result")[0]["data"]["message"]["content"][0]["text"];
    let contents = assistant_contents(&real, "s1");
    assert_eq!(contents.len(), 2);
    assert_eq!(
        contents[1][0]["text"],
        json!(format!("tool result: {}", result.as_str().unwrap()))
    );
    let log = stub.requests();
    let labels: Vec<_> = log
        .iter()
        .map(|r| r.directive.clone().unwrap_or_default())
        .collect();
    assert_eq!(labels, ["tool", "tool-result"], "{}", stub.log_text());
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_spawns_a_subagent_whose_prompt_is_the_directive_argument() {
    let (exe, stub) =
        setup("real_runtime_spawns_a_subagent_whose_prompt_is_the_directive_argument");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "subagent: reply: from child");
    let finished = real.wait_for("subagent.finished", |f| f["method"] == "subagent.finished");
    let p = &finished["params"];
    assert_eq!(
        (p["parentSessionId"].as_str(), p["status"].as_str()),
        (Some("s1"), Some("ok")),
        "{finished}"
    );
    assert_eq!(
        p["lastAssistantMessage"],
        json!([{"type": "text", "text": "from child"}])
    );
    let child = p["childSessionId"].as_str().unwrap().to_owned();
    assert_eq!(
        real.turn_end(&child, 1)["reason"],
        json!({"kind": "completed"})
    );
    // The child's closing message wakes the parent (turn 2); the stub answers the notice with "ok".
    assert_eq!(
        real.turn_end("s1", 2)["reason"],
        json!({"kind": "completed"}),
        "{}",
        stub.log_text()
    );
    assert_eq!(
        assistant_contents(&real, "s1").last().unwrap(),
        &json!([{"type": "text", "text": "ok"}])
    );
    let log = stub.requests();
    let child_request = log
        .iter()
        .find(|r| r.header("x-deepseek-harness-session-id") == Some(child.as_str()));
    assert_eq!(
        child_request.and_then(|r| r.directive.as_deref()),
        Some("reply"),
        "{}",
        stub.log_text()
    );
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_waits_for_a_slow_reply() {
    let (exe, stub) = setup("real_runtime_waits_for_a_slow_reply");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "slow:1 reply: waited");
    assert_eq!(
        real.turn_end("s1", 1)["reason"],
        json!({"kind": "completed"}),
        "{}",
        stub.log_text()
    );
    assert_eq!(
        assistant_contents(&real, "s1"),
        vec![json!([{"type": "text", "text": "waited"}])]
    );
    assert_eq!(
        stub.requests()[0].directive.as_deref(),
        Some("slow:1+reply")
    );
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_echoes_a_prompt_without_directive() {
    let (exe, stub) = setup("real_runtime_echoes_a_prompt_without_directive");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "just some words");
    assert_eq!(
        real.turn_end("s1", 1)["reason"],
        json!({"kind": "completed"}),
        "{}",
        stub.log_text()
    );
    assert_eq!(
        assistant_contents(&real, "s1"),
        vec![json!([{"type": "text", "text": "just some words"}])]
    );
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_keeps_a_hanging_turn_open_until_shutdown() {
    let (exe, stub) = setup("real_runtime_keeps_a_hanging_turn_open_until_shutdown");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "hang");
    assert!(
        stub.wait_for_requests(1, DEADLINE),
        "the runtime never called the model"
    );
    assert_eq!(stub.requests()[0].status, None, "a hang is never answered");
    // A barrier request proves the runtime is alive and the turn still open.
    let barrier = real.request("probe/barrier", json!({}));
    assert_eq!(barrier["error"]["code"], -32603);
    assert!(real.events("s1", "turn/end").is_empty());
    assert_eq!(real.shutdown(), Some(0));
    // The stub closes the abandoned connection when the stub itself is dropped.
    drop(stub);
}

/// The one retried-failure test (upstream backs off ≈ 0.5+1+2+4+7.5 s before giving up).
#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_retries_an_error500_five_times_then_ends_with_server_error() {
    let (exe, stub) =
        setup("real_runtime_retries_an_error500_five_times_then_ends_with_server_error");
    let mut real = Real::start(&exe, &stub);
    real.prompt("s1", "error500");
    let expected = json!({"kind": "error", "error": {"message": "fake internal error", "code": "SERVER", "status": 500}});
    assert_eq!(real.turn_end("s1", 1)["reason"], expected);
    let log = stub.requests();
    assert_eq!(
        log.len(),
        6,
        "one attempt and five retries:\n{}",
        stub.log_text()
    );
    assert!(log
        .iter()
        .all(|r| r.status == Some(500) && r.directive.as_deref() == Some("error500")));
    assert_eq!(real.events("s1", "llm/retry").len(), 5);
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn real_runtime_reaches_the_stub_when_the_base_url_already_ends_in_v1() {
    let (exe, stub) = setup("real_runtime_reaches_the_stub_when_the_base_url_already_ends_in_v1");
    let base = format!("{}/v1", stub.base_url());
    let mut real = Real::start_with(&exe, &stub, &[("DEEPSEEK_BASE_URL", base)]);
    real.prompt("s1", "reply: x");
    assert_eq!(
        real.turn_end("s1", 1)["reason"],
        json!({"kind": "completed"}),
        "{}",
        stub.log_text()
    );
    assert_eq!(stub.requests()[0].path, "/v1/messages");
}

#[test]
#[cfg_attr(dsh_offline, ignore = "needs PyPI (DSH_ALLOW_OFFLINE=1 was set)")]
fn a_refused_request_surfaces_the_stubs_reason_in_turn_end() {
    let (exe, stub) = setup("a_refused_request_surfaces_the_stubs_reason_in_turn_end");
    let mut real = Real::start_with(&exe, &stub, &[("DEEPSEEK_API_KEY", "wrong".to_owned())]);
    real.prompt("s1", "reply: x");
    let expected = json!({"kind": "error", "error": {"message": "model-stub: x-api-key does not match the stub's key", "code": "AUTH", "status": 401}});
    assert_eq!(real.turn_end("s1", 1)["reason"], expected);
    let log = stub.requests();
    assert_eq!(log.len(), 1, "a 401 is not retried:\n{}", stub.log_text());
    assert_eq!(
        log[0].refusal.as_deref(),
        Some("x-api-key does not match the stub's key")
    );
}
