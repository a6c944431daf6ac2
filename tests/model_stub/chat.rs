//! The stub's OpenAI chat-completions side: request reading, the exact chunks and objects of each
//! directive (streamed and not), and the HTTP routes, keys and error bodies, next to the
//! Anthropic side on the same stub.

use dsh_conformance::model_stub::chat;
use dsh_conformance::model_stub::reply::Action;
use dsh_conformance::model_stub::request::{analyse_chat, Prompt, RequestFacts};
use dsh_conformance::model_stub::{Api, ModelStub};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "bash", "parameters": {}}},
           {"type": "function", "function": {"name": "subagent", "parameters": {}}}])
}

fn body(messages: Value, stream: bool) -> Value {
    json!({"model": "deepseek-v4-flash", "stream": stream, "messages": messages, "tools": tools()})
}

fn facts(prompt: &str) -> RequestFacts {
    analyse_chat(&body(json!([{"role": "user", "content": prompt}]), true)).unwrap()
}

fn action(prompt: &str, stream: bool) -> Action {
    chat::plan(&facts(prompt), 7, stream).action
}

/// The chunks of a streamed answer, checking the framing; `true` when it ended with `[DONE]`.
fn chunks(prompt: &str) -> (Vec<Value>, bool) {
    let Action::Stream(b) = action(prompt, true) else {
        panic!("{prompt}: not a stream")
    };
    let sse = String::from_utf8(b).unwrap();
    assert!(sse.ends_with("\n\n"), "{sse:?}");
    let mut done = false;
    let mut out = Vec::new();
    for ev in sse.trim_end_matches('\n').split("\n\n") {
        let data = ev.strip_prefix("data: ").expect("a data line");
        assert!(!done, "nothing after [DONE]: {sse:?}");
        if data == "[DONE]" {
            done = true;
        } else {
            out.push(serde_json::from_str(data).unwrap());
        }
    }
    (out, done)
}

fn deltas(prompt: &str) -> Vec<Value> {
    let (c, done) = chunks(prompt);
    assert!(done, "{prompt}: ends with [DONE]");
    c.iter().map(|c| c["choices"][0]["delta"].clone()).collect()
}

fn finish_reason(prompt: &str) -> Value {
    let (c, _) = chunks(prompt);
    c.last().unwrap()["choices"][0]["finish_reason"].clone()
}

fn completion(prompt: &str) -> Value {
    match action(prompt, false) {
        Action::Json(b) => serde_json::from_slice(&b).unwrap(),
        other => panic!("{prompt}: not a JSON answer: {other:?}"),
    }
}

#[test]
fn a_streamed_reply_is_these_exact_chunks_then_done() {
    let Action::Stream(b) = action("reply: hello world", true) else {
        panic!()
    };
    let expected = concat!(
        "data: {\"id\":\"chatcmpl-stub-7\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-stub-7\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-stub-7\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-stub-7\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(String::from_utf8(b).unwrap(), expected);
}

#[test]
fn a_reply_not_streamed_is_one_chat_completion() {
    let Action::Json(b) = action("reply: hello world", false) else {
        panic!()
    };
    assert_eq!(
        String::from_utf8(b).unwrap(),
        "{\"id\":\"chatcmpl-stub-7\",\"object\":\"chat.completion\",\"created\":0,\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello world\"},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}"
    );
}

#[test]
fn echo_and_maxtokens_answer_their_text_with_stop_and_length() {
    let text = |p: &str| -> String {
        deltas(p)
            .iter()
            .filter_map(|d| d["content"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(text("just words"), "just words");
    assert_eq!(finish_reason("just words"), "stop");
    assert_eq!(text("maxtokens"), "partial...");
    assert_eq!(finish_reason("maxtokens"), "length");
    let c = completion("maxtokens");
    assert_eq!(c["choices"][0]["message"]["content"], "partial...");
    assert_eq!(c["choices"][0]["finish_reason"], "length");
    // One character: one piece; the middle character, not byte.
    assert_eq!(deltas("reply: x").len(), 3);
    let pieces: Vec<Value> = deltas("reply: ééé€")
        .into_iter()
        .filter_map(|d| d.get("content").cloned())
        .collect();
    assert_eq!(pieces, [json!(""), json!("éé"), json!("é€")]);
}

#[test]
fn thinking_sends_reasoning_content_then_thought_done() {
    assert_eq!(
        deltas("thinking"),
        [
            json!({"role": "assistant", "content": null, "reasoning_content": ""}),
            json!({"reasoning_content": "let me think"}),
            json!({"content": "though"}),
            json!({"content": "t done"}),
            json!({}),
        ]
    );
    assert_eq!(finish_reason("thinking"), "stop");
    assert_eq!(
        completion("thinking")["choices"][0]["message"],
        json!({"role": "assistant", "content": "thought done", "reasoning_content": "let me think"})
    );
}

#[test]
fn empty_has_no_content() {
    assert_eq!(deltas("empty"), [json!({"role": "assistant"}), json!({})]);
    assert_eq!(finish_reason("empty"), "stop");
    assert_eq!(completion("empty")["choices"][0]["message"]["content"], "");
}

#[test]
fn tool_subagent_and_call_are_tool_calls_with_arguments_as_a_json_string() {
    assert_eq!(
        deltas("tool: echo \"hi\""),
        [
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_stub_7", "type": "function", "function": {"name": "bash", "arguments": ""}}]}),
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"description\": \"probe command\", \"command\": \"echo \\\"hi\\\"\"}"}}]}),
            json!({}),
        ]
    );
    assert_eq!(finish_reason("tool"), "tool_calls");
    let d = deltas("subagent: reply: from child");
    assert_eq!(d[0]["tool_calls"][0]["function"]["name"], "subagent");
    assert_eq!(
        d[1]["tool_calls"][0]["function"]["arguments"],
        "{\"description\": \"probe child\", \"prompt\": \"reply: from child\"}"
    );
    let c = completion(r#"call: bash {"command": "ls", "timeout": 5}"#);
    assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        c["choices"][0]["message"],
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_stub_7", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\",\"timeout\":5}"}}]})
    );
}

#[test]
fn a_tool_not_offered_is_a_400_naming_it() {
    for (prompt, tool) in [
        ("call: web_search {}", "web_search"),
        ("subagent: x", "subagent"),
    ] {
        let mut f = facts(prompt);
        f.tool_names.retain(|t| t == "bash");
        match chat::plan(&f, 1, true).action {
            Action::Error {
                status: 400,
                message,
                ..
            } => assert!(
                message.contains(&format!("`{tool}`")) && message.contains("offered: bash"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn failures_are_openai_errors_and_cut_streams() {
    for stream in [true, false] {
        assert_eq!(
            action("error500", stream),
            Action::Error {
                status: 500,
                kind: "api_error",
                message: "fake internal error".into()
            }
        );
        assert!(matches!(
            action("error400", stream),
            Action::Error { status: 400, .. }
        ));
        assert_eq!(action("hang", stream), Action::Hang);
    }
    let err: Value =
        serde_json::from_slice(&chat::error_body("api_error", "fake internal error")).unwrap();
    assert_eq!(
        err,
        json!({"error": {"message": "fake internal error", "type": "server_error", "param": null, "code": "internal_error"}})
    );
    let (c, done) = chunks("sseerror");
    assert!(!done);
    assert_eq!(
        c,
        [
            json!({"error": {"message": "fake overloaded", "type": "server_error", "param": null, "code": "overloaded"}})
        ]
    );
    let Action::Json(b) = action("sseerror", false) else {
        panic!()
    };
    assert_eq!(serde_json::from_slice::<Value>(&b).unwrap(), c[0]);
    let (c, done) = chunks("truncate");
    assert!(!done, "a cut stream has no [DONE]");
    assert_eq!(c.len(), 2);
    assert_eq!(c[1]["choices"][0]["delta"]["content"], "trunc");
    assert!(c.iter().all(|c| c["choices"][0]["finish_reason"].is_null()));
    let Action::Json(b) = action("truncate", false) else {
        panic!()
    };
    let cut = String::from_utf8(b).unwrap();
    assert!(cut.ends_with("\"content\":\"tr"), "{cut}");
    assert!(serde_json::from_str::<Value>(&cut).is_err());
}

#[test]
fn slow_waits_then_answers_its_directive() {
    let plan = chat::plan(&facts("slow:1 slow:0.5 reply: late"), 1, true);
    assert_eq!(plan.delay, Duration::from_millis(1500));
    assert!(matches!(plan.action, Action::Stream(_)));
}

#[test]
fn the_prompt_is_the_last_user_text_and_a_tool_message_is_the_tool_result() {
    let read = |messages: Value| analyse_chat(&body(messages, true)).unwrap().prompt;
    let context =
        "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.";
    assert_eq!(
        read(
            json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "reply: hi"}])
        ),
        Prompt::Text("reply: hi".into())
    );
    assert_eq!(
        read(
            json!([{"role": "user", "content": [{"type": "text", "text": "reply: a"}, {"type": "text", "text": context}]}])
        ),
        Prompt::Text("reply: a".into())
    );
    let tool_turn = json!([
        {"role": "user", "content": "tool: echo hi"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "hi\n"}
    ]);
    assert_eq!(read(tool_turn), Prompt::ToolResult("hi\n".into()));
    let parts = json!([{"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]);
    assert_eq!(read(parts), Prompt::ToolResult("a\nb".into()));
    let notice = json!([{"role": "user", "content": "Background subagent c1 finished and will do no further work unless you send it more."}]);
    assert_eq!(read(notice), Prompt::Notice);
    let f = analyse_chat(&json!({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 9, "max_tokens": 3})).unwrap();
    assert_eq!(f.max_tokens, Some(9.0));
    for (b, why) in [
        (json!([]), "not a JSON object"),
        (json!({"model": "m"}), "no `messages`"),
        (
            json!({"messages": [{"role": "system", "content": "x"}]}),
            "no message with role \"user\" or \"tool\"",
        ),
        (
            json!({"messages": [{"role": "user", "content": null}]}),
            "no `content`",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}),
            "no text part",
        ),
    ] {
        let err = analyse_chat(&b).expect_err(&b.to_string());
        assert!(err.contains(why), "{b}: {err}");
    }
}

// ---- over HTTP ----------------------------------------------------------------------------------

/// Sends one request (`connection: close`) and reads the whole answer: (status, content-type,
/// body).
fn send(stub: &ModelStub, path: &str, headers: &str, body: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(stub.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n{headers}connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        stub.addr(),
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let ctype = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_owned)
        })
        .unwrap_or_default();
    (status, ctype, body.to_owned())
}

fn bearer(stub: &ModelStub) -> String {
    format!("authorization: Bearer {}\r\n", stub.api_key())
}

fn chat_body(prompt: &str, stream: bool) -> String {
    body(json!([{"role": "user", "content": prompt}]), stream).to_string()
}

#[test]
fn one_stub_serves_both_apis_by_path() {
    let stub = ModelStub::start().unwrap();
    for path in ["/v1/chat/completions", "/chat/completions"] {
        let (status, ctype, sse) = send(&stub, path, &bearer(&stub), &chat_body("reply: hi", true));
        assert_eq!(
            (status, ctype.as_str()),
            (200, "text/event-stream"),
            "{sse}"
        );
        assert!(sse.ends_with("data: [DONE]\n\n"), "{sse}");
        let (status, ctype, obj) =
            send(&stub, path, &bearer(&stub), &chat_body("reply: hi", false));
        assert_eq!((status, ctype.as_str()), (200, "application/json"), "{obj}");
        let v: Value = serde_json::from_str(&obj).unwrap();
        assert_eq!(v["choices"][0]["message"]["content"], "hi");
    }
    let anthropic = json!({"model": "m", "stream": true,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "reply: hi"}]}]})
    .to_string();
    let key = format!("x-api-key: {}\r\n", stub.api_key());
    let (status, _, sse) = send(&stub, "/v1/messages", &key, &anthropic);
    assert_eq!(status, 200);
    assert!(sse.starts_with("event: message_start\n"), "{sse}");
    let log = stub.requests();
    let apis: Vec<Option<Api>> = log.iter().map(|r| r.api).collect();
    let chat = Some(Api::ChatCompletions);
    assert_eq!(apis, [chat, chat, chat, chat, Some(Api::Messages)]);
    assert!(
        log.iter().all(|r| r.status == Some(200)),
        "{}",
        stub.log_text()
    );
    assert!(log[0].facts.is_some());
}

#[test]
fn refusals_on_the_chat_side_are_openai_error_bodies() {
    let stub = ModelStub::start().unwrap();
    let p = "/v1/chat/completions";
    let message = |body: &str| -> String {
        let v: Value = serde_json::from_str(body).expect("a JSON error body");
        assert!(
            v["error"]["type"].is_string() && v["error"]["code"].is_string(),
            "{v}"
        );
        v["error"]["message"].as_str().unwrap().to_owned()
    };
    let key = format!("x-api-key: {}\r\n", stub.api_key());
    let cases: Vec<(String, String, u16, &str)> = vec![
        (String::new(), chat_body("reply: x", true), 401, "no Authorization header"),
        (
            "authorization: Bearer wrong\r\n".into(),
            chat_body("reply: x", true),
            401,
            "not `Bearer <the stub's key>`",
        ),
        // The Anthropic header is not the chat side's.
        (key, chat_body("reply: x", true), 401, "no Authorization header"),
        (bearer(&stub), "{".into(), 400, "not JSON"),
        (bearer(&stub), json!({"stream": "yes", "messages": [{"role": "user", "content": "x"}]}).to_string(), 400, "`stream` is not a boolean"),
        (bearer(&stub), chat_body("error400", true), 400, "fake bad request"),
        (bearer(&stub), chat_body("error500", false), 500, "fake internal error"),
        (
            bearer(&stub),
            json!({"stream": true, "messages": [{"role": "user", "content": "call: read {}"}], "tools": tools()}).to_string(),
            400,
            "the `read` tool",
        ),
    ];
    for (headers, body, status, said) in cases {
        let (got, _, answer) = send(&stub, p, &headers, &body);
        assert_eq!(got, status, "{body}: {answer}");
        let m = message(&answer);
        assert!(m.contains(said), "{body}: {m}");
        if status == 401 {
            assert!(m.starts_with("model-stub: "), "{m}");
        }
    }
    // A path neither API has: 404 naming both.
    let (got, _, answer) = send(&stub, "/v1/responses", &bearer(&stub), "{}");
    assert_eq!(got, 404);
    assert!(answer.contains("POST /v1/chat/completions"), "{answer}");
}

#[test]
fn env_gives_the_openai_conventions_too() {
    let stub = ModelStub::start().unwrap();
    let env: std::collections::HashMap<_, _> = stub.env().into_iter().collect();
    assert_eq!(
        env["OPENAI_BASE_URL"],
        format!("http://127.0.0.1:{}/v1", stub.addr().port())
    );
    assert_eq!(env["OPENAI_API_KEY"], stub.api_key());
    assert_eq!(env["OPENAI_API_KEY"], env["DEEPSEEK_API_KEY"]);
}
