//! The model stub on its own: directive grammar, request reading, exact SSE bytes, HTTP handling.
//! `real` drives the real upstream runtime through it.

mod chat;
mod http;
mod real;
mod serve;

use dsh_conformance::model_stub::directive::{parse_directive, Directive};
use dsh_conformance::model_stub::reply::{self, Action};
use dsh_conformance::model_stub::request::{analyse, Prompt, RequestFacts};
use serde_json::{json, Value};
use std::time::Duration;

const CONTEXT: &str = "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\nCurrent working directory: \"/w\".";

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn body(messages: Value) -> Value {
    json!({"model": "deepseek-v4-flash", "stream": true, "messages": messages, "max_tokens": 256000,
           "tools": [{"name": "bash"}, {"name": "subagent"}]})
}

fn prompt_of(messages: Value) -> Prompt {
    analyse(&body(messages)).expect("a readable request").prompt
}

#[test]
fn directives_are_read_from_the_start_of_the_text() {
    let slow = |secs: f64, then: Directive| Directive::Slow {
        secs,
        then: Box::new(then),
    };
    let cases: Vec<(&str, Directive)> = vec![
        ("reply: hello world", Directive::Reply("hello world".into())),
        ("reply:tight", Directive::Reply("tight".into())),
        ("reply:  two spaces", Directive::Reply("two spaces".into())),
        ("reply:", Directive::Reply(String::new())),
        ("  reply: indented", Directive::Reply("indented".into())),
        ("reply: multi\nline", Directive::Reply("multi\nline".into())),
        ("maxtokens", Directive::MaxTokens),
        ("maxtokens please", Directive::MaxTokens),
        ("thinking", Directive::Thinking),
        ("empty", Directive::Empty),
        ("error500", Directive::Error500),
        ("error400", Directive::Error400),
        ("sseerror", Directive::SseError),
        ("truncate", Directive::Truncate),
        ("hang", Directive::Hang),
        ("hang: now", Directive::Hang),
        (
            "tool",
            Directive::Tool {
                command: "echo hi".into(),
            },
        ),
        (
            "tool: ls -la",
            Directive::Tool {
                command: "ls -la".into(),
            },
        ),
        (
            "tool ls",
            Directive::Tool {
                command: "echo hi".into(),
            },
        ),
        (
            "subagent: reply: from child",
            Directive::Subagent {
                prompt: "reply: from child".into(),
            },
        ),
        (
            "slow:2 reply: from A",
            slow(2.0, Directive::Reply("from A".into())),
        ),
        ("slow:0.5 hang", slow(0.5, Directive::Hang)),
        ("slow reply: x", slow(2.0, Directive::Reply("x".into()))),
        (
            "slow:1 slow:2 empty",
            slow(1.0, slow(2.0, Directive::Empty)),
        ),
        (
            "slow:3 just words",
            slow(3.0, Directive::Reply("just words".into())),
        ),
        ("slow:abc x", slow(2.0, Directive::Reply("abc x".into()))),
    ];
    for (input, expected) in cases {
        assert_eq!(parse_directive(input), expected, "{input:?}");
    }
}

#[test]
fn texts_that_only_resemble_directives_are_echoed() {
    for input in [
        "",
        "hello",
        "Reply: x",
        "replying",
        "reply",
        "reply x",
        "subagent",
        "emptyish",
        "hang-glider",
        "tools",
        "x reply: y",
    ] {
        assert_eq!(
            parse_directive(input),
            Directive::Echo(input.into()),
            "{input:?}"
        );
    }
}

/// The reference runtime's script reader, flattened to (delay ms, answer) for comparison.
fn reference(text: &str) -> Option<(u64, String)> {
    use dsh_conformance::runtime::script::{for_content, offered, Script};
    // The reference runtime reads the prompt's content blocks; texts without a directive are echoed.
    dsh_conformance::model_stub::directive::directive_in(text)?;
    let step = for_content(&serde_json::json!([{"type": "text", "text": text}]));
    // As the `sdk` profile answers: its roster is bash and subagent.
    let answer = match offered(step.script, &["bash", "subagent"]) {
        Script::Reply(t) => format!("reply {t}"),
        Script::Tool(c) => format!("tool {c}"),
        // `call:` inputs reach the tool verbatim; flattened as the stub side reads them.
        Script::Call { tool, input, .. } if tool == "bash" || tool == "subagent" => {
            let v: Value = serde_json::from_str(&input).unwrap();
            match tool.as_str() {
                "bash" => format!("tool {}", v["command"].as_str().unwrap_or("")),
                _ => format!("subagent {}", v["prompt"].as_str().unwrap_or("")),
            }
        }
        // `call!:` of a tool not offered: called all the same.
        Script::Call {
            tool,
            input,
            any: true,
        } => format!("call {tool} {input}"),
        Script::Subagent(p) => format!("subagent {p}"),
        Script::Error400(m) if m != "fake bad request" => format!("refused {m}"),
        other => format!("{other:?}").to_lowercase(),
    };
    Some((step.delay_ms, answer))
}

fn stub(text: &str) -> Option<(u64, String)> {
    let mut d = dsh_conformance::model_stub::directive::directive_in(text)?;
    let mut delay = 0.0;
    while let Directive::Slow { secs, then } = d {
        delay += secs * 1000.0;
        d = *then;
    }
    let answer = match d {
        Directive::Reply(t) | Directive::Echo(t) => format!("reply {t}"),
        Directive::Tool { command } => format!("tool {command}"),
        Directive::Subagent { prompt } => format!("subagent {prompt}"),
        // The reference offers bash and subagent: a call of either is that directive.
        Directive::Call { tool, input } => {
            let v: Value = serde_json::from_str(&input).unwrap();
            match tool.as_str() {
                "bash" => format!("tool {}", v["command"].as_str().unwrap_or("")),
                "subagent" => format!("subagent {}", v["prompt"].as_str().unwrap_or("")),
                _ => format!(
                    "refused {}",
                    dsh_conformance::directive::unoffered_tool_message(
                        &tool,
                        &["bash".into(), "subagent".into()]
                    )
                ),
            }
        }
        Directive::CallAny { tool, input } => {
            let v: Value = serde_json::from_str(&input).unwrap();
            match tool.as_str() {
                "bash" => format!("tool {}", v["command"].as_str().unwrap_or("")),
                "subagent" => format!("subagent {}", v["prompt"].as_str().unwrap_or("")),
                _ => format!("call {tool} {input}"),
            }
        }
        Directive::Error400 => "error400(\"fake bad request\")".into(),
        other => other.label(),
    };
    Some((delay as u64, answer))
}

#[test]
fn the_stub_and_the_reference_runtime_read_directives_alike() {
    let corpus = [
        "reply: hello world",
        "reply:x",
        "reply:   y",
        "reply",
        "replying",
        "maxtokens",
        "maxtokens x",
        "thinking",
        "thinking:",
        "empty",
        "emptyish",
        "error500",
        "error400",
        "sseerror",
        "truncate",
        "hang",
        "hang now",
        "hangover",
        "tool",
        "tool: ls -l",
        "call!: nosuch_tool {\"a\": 1}",
        "call!: bash {\"command\":\"x\"}",
        "tool:",
        "tool ls",
        "tools",
        "subagent: reply: x",
        "subagent:",
        "subagent",
        "slow",
        "slow:3 reply: first",
        "slow reply: x",
        "slow:0.5 hang",
        "slow:abc x",
        "slow:1 slow:2 empty",
        "slow:2",
        "slow:4 words",
        "  reply: indented",
        "",
        "hello",
        "Reply: x",
        "x reply: y",
        r#"call: bash {"command": "ls -l"}"#,
        r#"call: subagent {"prompt": "reply: x"}"#,
        r#"call:web_search{"query": "rust"}"#,
        "call: read_image",
        "call: bash [1]",
        "call: bash {not json",
        "call:",
        "call",
    ];
    for text in corpus {
        assert_eq!(stub(text), reference(text), "{text:?}");
    }
}

#[test]
fn the_first_prompt_is_read_before_the_runtime_context_block() {
    assert_eq!(
        prompt_of(json!([{"role": "user", "content": [text("reply: hi"), text(CONTEXT)]}])),
        Prompt::Text("reply: hi".into())
    );
}

#[test]
fn a_prompt_merged_after_a_failed_turn_is_read_from_its_last_user_text() {
    // Observed: after an error400 turn the next prompt joins the same user message.
    let m = json!([{"role": "user", "content": [text("error400"), text(CONTEXT), text("reply: recovered")]}]);
    assert_eq!(prompt_of(m), Prompt::Text("reply: recovered".into()));
}

#[test]
fn a_subagent_child_prompt_is_read_before_the_parent_note_and_context() {
    let note = "Your parent agent id is \"s1\". Before you finish, send your result to that agent.";
    let m = json!([{"role": "user", "content": [text("reply: from child"), text(note), text(CONTEXT)]}]);
    assert_eq!(prompt_of(m), Prompt::Text("reply: from child".into()));
}

#[test]
fn the_last_user_block_holding_a_directive_wins_and_otherwise_the_last_is_echoed() {
    // The reference runtime's rule for contentBlocks, with the runtime's own blocks skipped.
    let m =
        json!([{"role": "user", "content": [text("reply: a"), text("not one"), text(CONTEXT)]}]);
    assert_eq!(prompt_of(m), Prompt::Text("reply: a".into()));
    let m = json!([{"role": "user", "content": [text("hi"), text("there"), text(CONTEXT)]}]);
    assert_eq!(prompt_of(m), Prompt::Text("there".into()));
}

#[test]
fn a_subagent_settled_notice_is_a_runtime_notice() {
    let m = json!([
        {"role": "user", "content": [text("subagent: reply: x"), text(CONTEXT)]},
        {"role": "assistant", "content": [text("tool result: started subagent c1")]},
        {"role": "user", "content": [text("Background subagent c1 finished and will do no further work unless you send it more."), text("Its closing message:"), text("reply: trap")]}
    ]);
    assert_eq!(prompt_of(m), Prompt::Notice);
}

#[test]
fn a_tool_result_is_answered_whatever_the_earlier_prompt() {
    let m = json!([
        {"role": "user", "content": [text("tool: echo hi")]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [text("line 1"), text("line 2")], "is_error": false}]}
    ]);
    assert_eq!(prompt_of(m), Prompt::ToolResult("line 1\nline 2".into()));
    let string_content = json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "plain"}]}]);
    assert_eq!(
        prompt_of(string_content),
        Prompt::ToolResult("plain".into())
    );
}

#[test]
fn requests_without_a_readable_user_message_are_refused_with_a_reason() {
    let cases = [
        (json!([1]), "not a JSON object"),
        (json!({"model": "m"}), "no `messages`"),
        (json!({"messages": {}}), "not an array"),
        (
            json!({"messages": [{"role": "assistant", "content": [text("x")]}]}),
            "no message with role \"user\"",
        ),
        (json!({"messages": [{"role": "user"}]}), "no `content`"),
        (
            json!({"messages": [{"role": "user", "content": [{"type": "image"}]}]}),
            "neither a text nor a tool_result",
        ),
    ];
    for (b, why) in cases {
        let err = analyse(&b).expect_err(&b.to_string());
        assert!(err.contains(why), "{b}: {err}");
    }
}

fn facts(text_: &str) -> RequestFacts {
    analyse(&body(json!([{"role": "user", "content": [text(text_)]}]))).unwrap()
}

fn stream_of(text_: &str) -> String {
    match reply::plan(&facts(text_), 7).action {
        Action::Stream(b) => String::from_utf8(b).unwrap(),
        other => panic!("{text_}: not a stream: {other:?}"),
    }
}

/// `(event name, data)` pairs of an SSE body, checking the framing on the way.
fn events(sse: &str) -> Vec<(String, Value)> {
    assert!(sse.ends_with("\n\n"), "{sse:?}");
    sse.trim_end_matches('\n')
        .split("\n\n")
        .map(|ev| {
            let (name, data) = ev.split_once('\n').expect("event + data lines");
            let name = name.strip_prefix("event: ").expect("event line").to_owned();
            let data: Value =
                serde_json::from_str(data.strip_prefix("data: ").expect("data line")).unwrap();
            assert_eq!(data["type"], json!(name), "event name matches data.type");
            (name, data)
        })
        .collect()
}

fn names(sse: &str) -> Vec<String> {
    events(sse).into_iter().map(|(n, _)| n).collect()
}

#[test]
fn a_reply_streams_its_text_in_two_halves_with_end_turn() {
    let expected = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_stub_7\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"deepseek-v4-flash\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":0}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" world\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":5}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    assert_eq!(stream_of("reply: hello world"), expected);
}

#[test]
fn halves_split_at_the_middle_character_not_byte() {
    let ev = events(&stream_of("reply: ééé€"));
    let deltas: Vec<&str> = ev
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(deltas, ["éé", "é€"]);
    let one = events(&stream_of("reply: x"));
    let deltas: Vec<&str> = one
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(deltas, ["x"]);
}

#[test]
fn maxtokens_stops_with_max_tokens_after_a_partial_text() {
    let ev = events(&stream_of("maxtokens"));
    assert_eq!(ev[5].1["delta"]["stop_reason"], "max_tokens");
    let text: String = ev
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "partial...");
}

#[test]
fn thinking_sends_a_signed_thinking_block_then_text() {
    let sse = stream_of("thinking");
    let ev = events(&sse);
    assert_eq!(
        names(&sse),
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(
        ev[1].1["content_block"],
        json!({"type": "thinking", "thinking": ""})
    );
    assert_eq!(
        ev[2].1["delta"],
        json!({"type": "thinking_delta", "thinking": "let me think"})
    );
    assert_eq!(
        ev[3].1["delta"],
        json!({"type": "signature_delta", "signature": "fakesig"})
    );
    assert_eq!(ev[5].1["index"], 1);
}

#[test]
fn empty_sends_a_message_without_blocks() {
    assert_eq!(
        names(&stream_of("empty")),
        ["message_start", "message_delta", "message_stop"]
    );
}

#[test]
fn tool_sends_a_bash_tool_use_with_python_spaced_arguments() {
    let sse = stream_of("tool: echo \"hi\"");
    let ev = events(&sse);
    assert_eq!(
        ev[1].1["content_block"],
        json!({"type": "tool_use", "id": "toolu_stub_7", "name": "bash", "input": {}})
    );
    assert_eq!(
        ev[2].1["delta"],
        json!({"type": "input_json_delta", "partial_json": "{\"description\": \"probe command\", \"command\": \"echo \\\"hi\\\"\"}"})
    );
    assert_eq!(ev[4].1["delta"]["stop_reason"], "tool_use");
}

#[test]
fn call_sends_any_offered_tool_with_its_json_input_and_refuses_others() {
    let ev = events(&stream_of(
        r#"call: bash {"command": "echo hi", "timeout": 5}"#,
    ));
    assert_eq!(ev[1].1["content_block"]["name"], "bash");
    assert_eq!(
        ev[2].1["delta"]["partial_json"],
        r#"{"command":"echo hi","timeout":5}"#
    );
    assert_eq!(ev[4].1["delta"]["stop_reason"], "tool_use");
    match reply::plan(&facts("call: web_search {}"), 1).action {
        Action::Error {
            status, message, ..
        } => {
            assert_eq!(status, 400);
            assert!(
                message.contains("`web_search`") && message.contains("offered: bash, subagent"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn subagent_calls_the_subagent_tool_with_the_child_prompt() {
    let ev = events(&stream_of("subagent: reply: from child"));
    assert_eq!(ev[1].1["content_block"]["name"], "subagent");
    assert_eq!(
        ev[2].1["delta"]["partial_json"],
        "{\"description\": \"probe child\", \"prompt\": \"reply: from child\"}"
    );
}

#[test]
fn a_tool_directive_whose_tool_is_not_offered_is_a_clear_400() {
    let mut f = facts("subagent: x");
    f.tool_names = vec!["bash".into()];
    match reply::plan(&f, 1).action {
        Action::Error {
            status: 400,
            message,
            ..
        } => assert!(message.contains("no tool of that name"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn failures_are_scripted_as_the_recorded_stub_sent_them() {
    let p = |t: &str| reply::plan(&facts(t), 1).action;
    assert_eq!(
        p("error500"),
        Action::Error {
            status: 500,
            kind: "api_error",
            message: "fake internal error".into()
        }
    );
    assert_eq!(
        p("error400"),
        Action::Error {
            status: 400,
            kind: "invalid_request_error",
            message: "fake bad request".into()
        }
    );
    assert_eq!(p("hang"), Action::Hang);
    let sse = stream_of("sseerror");
    assert_eq!(
        events(&sse),
        vec![(
            "error".to_owned(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "fake overloaded"}})
        )]
    );
    let truncated = stream_of("truncate");
    assert_eq!(
        names(&truncated),
        [
            "message_start",
            "content_block_start",
            "content_block_delta"
        ]
    );
}

#[test]
fn slow_delays_are_summed_and_the_inner_directive_answers() {
    let plan = reply::plan(&facts("slow:1 slow:0.5 reply: late"), 1);
    assert_eq!(plan.delay, Duration::from_millis(1500));
    assert!(matches!(plan.action, Action::Stream(_)));
}

#[test]
fn tool_results_and_notices_get_fixed_replies() {
    let mut f = facts("x");
    f.prompt = Prompt::ToolResult("done".into());
    let Action::Stream(b) = reply::plan(&f, 1).action else {
        panic!()
    };
    let text: String = events(std::str::from_utf8(&b).unwrap())
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "tool result: done");
    f.prompt = Prompt::Notice;
    let Action::Stream(b) = reply::plan(&f, 1).action else {
        panic!()
    };
    let text: String = events(std::str::from_utf8(&b).unwrap())
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "ok");
}
