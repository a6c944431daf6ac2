//! Turns, event sequences, queued overlap, legacy settlement and the scripted model, in-memory.

use super::harness::*;
use dsh_conformance::runtime::Edition;
use serde_json::{json, Value};

/// The event types of happy_basic in the real 0.2.1rc2 recording.
const HAPPY: [&str; 17] = [
    "permission/preset",
    "sandbox/mode",
    "approval/policy",
    "agent/inbox/spliced",
    "turn/start",
    "agent/inbox/spliced",
    "step/start",
    "system/message",
    "user/message",
    "user/message",
    "request/header",
    "request/context",
    "session/title",
    "session-log-deepseek/delivery-accepted",
    "assistant/message",
    "step/end",
    "turn/end",
];

fn is_uuid_v4(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok_and(|u| u.get_version_num() == 4) && s.len() == 36
}

#[test]
fn a_first_turn_emits_the_released_event_sequence_with_receipt_before_response() {
    let mut h = H::new(Edition::Current);
    h.init();
    let f = h.send(prompt(2, "s1", "reply: hello world"));
    assert_eq!(types(&f, "s1"), HAPPY);
    let ev = events(&f, "s1");
    for (i, e) in ev.iter().enumerate() {
        assert_eq!(e["seq"], i as u64);
        assert!(e["time"].as_u64().unwrap() >= T0);
    }
    let mid = response(&f, &json!(2))["result"]["messageId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(is_uuid_v4(&mid), "{mid}");
    assert_eq!(ev[3]["data"]["target"], "next-turn");
    assert_eq!(ev[3]["data"]["inserted"][0]["id"], mid.as_str());
    assert_eq!(
        ev[3]["data"]["inserted"][0]["source"],
        json!({"kind":"user"})
    );
    assert_eq!(
        ev[5]["data"],
        json!({"target":"next-turn","start":0,"removedCount":1,"inserted":[]})
    );
    assert_eq!(ev[8]["data"]["id"], mid.as_str());
    assert_eq!(ev[12]["data"]["messageSeqs"], json!([8]));
    assert_eq!(ev[13]["data"]["throughSeq"], 12);
    assert_eq!(
        ev[14]["data"]["message"]["content"],
        json!([{"type":"text","text":"hello world"}])
    );
    assert_eq!(
        ev[16]["data"],
        json!({"turn":1,"reason":{"kind":"completed"}})
    );
    // Frame order: receipt, running, turn/start, claim, response, …, idle last.
    let pos = |pred: &dyn Fn(&Value) -> bool| f.iter().position(pred).unwrap();
    let receipt = pos(&|x| x["params"]["event"]["seq"] == 3);
    let running = pos(&|x| x["params"]["status"] == "running");
    let resp = pos(&|x| x["id"] == 2);
    let claim = pos(&|x| x["params"]["event"]["seq"] == 5);
    assert!(receipt < running && running < claim && claim < resp);
    assert_eq!(f.last().unwrap()["params"]["status"], "idle");
    assert_eq!(statuses(&f, "s1"), ["running", "idle"]);
}

#[test]
fn a_second_prompt_pushes_only_new_events_as_turn_two() {
    let mut h = H::new(Edition::Current);
    h.init();
    h.send(prompt(2, "s1", "reply: first"));
    let f = h.send(prompt(3, "s1", "reply: second"));
    assert_eq!(
        types(&f, "s1"),
        [
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced",
            "step/start",
            "user/message",
            "session-log-deepseek/delivery-accepted",
            "assistant/message",
            "step/end",
            "turn/end"
        ]
    );
    assert_eq!(events(&f, "s1")[0]["seq"], 17);
    assert_eq!(turn_end(&f, "s1")[0]["turn"], 2);
}

#[test]
fn overlapping_prompts_queue_as_next_turns_with_one_idle() {
    let mut h = H::new(Edition::Current);
    h.init();
    // Two prompts in one write: both are answered before any model work runs.
    let f0 = h.lines(&[
        &prompt(2, "s1", "slow:3 reply: first").to_string(),
        &prompt(3, "s1", "reply: second").to_string(),
    ]);
    let m2 = response(&f0, &json!(2))["result"]["messageId"].clone();
    let m3 = response(&f0, &json!(3))["result"]["messageId"].clone();
    let ev = events(&f0, "s1");
    assert_eq!(
        ev[6]["data"]["inserted"][0]["id"], m3,
        "queued receipt after the claim"
    );
    let mut f = f0.clone();
    f.extend(h.settle());
    let ends = turn_end(&f, "s1");
    assert_eq!(
        ends.iter().map(|e| e["turn"].clone()).collect::<Vec<_>>(),
        [json!(1), json!(2)]
    );
    assert_eq!(
        statuses(&f, "s1"),
        ["running", "idle"],
        "no idle between queued turns"
    );
    assert_ne!(m2, m3);
    // A third session stays independent.
    let f = h.send(prompt(4, "other", "reply: x"));
    assert_eq!(events(&f, "other")[0]["seq"], 0);
}

#[test]
fn the_legacy_edition_rejects_overlap_and_settles_with_session_finished() {
    let mut h = H::new(Edition::Legacy);
    h.init();
    let f = h.lines(&[
        &prompt(2, "s1", "slow:1 reply: a").to_string(),
        &prompt(3, "s1", "reply: b").to_string(),
    ]);
    assert_eq!(
        error_message(&f, 3),
        "session already has an active prompt: s1"
    );
    assert!(
        f.iter().all(|x| x["id"] != 2),
        "no response before settlement"
    );
    assert!(statuses(&f, "s1").is_empty(), "no session.status in legacy");
    assert_eq!(events(&f, "s1")[0]["type"], "agent/inbox/spliced");
    let f = h.settle();
    let fin = f
        .iter()
        .position(|x| x["method"] == "session.finished")
        .unwrap();
    let resp = f.iter().position(|x| x["id"] == 2).unwrap();
    assert!(fin < resp);
    assert_eq!(
        f[fin]["params"],
        json!({"sessionId":"s1","status":"ok","reason":{"kind":"completed"}})
    );
    assert_eq!(f[resp]["result"], json!({"accepted": true}));
    // Settled: the session takes a new prompt.
    let f = h.send(prompt(4, "s1", "error400"));
    assert_eq!(response(&f, &json!(4))["result"], json!({"accepted": true}));
    let fin = f
        .iter()
        .find(|x| x["method"] == "session.finished")
        .unwrap();
    assert_eq!(fin["params"]["status"], "error");
}

fn run(text: &str) -> Vec<Value> {
    let mut h = H::new(Edition::Current);
    h.init();
    let mut f = h.send(prompt(2, "s", text));
    f.extend(h.settle());
    f
}

#[test]
fn scripted_directives_end_turns_like_the_real_runtime() {
    let kind = |f: &[Value]| turn_end(f, "s")[0]["reason"].clone();
    assert_eq!(kind(&run("maxtokens")), json!({"kind":"max-tokens"}));
    assert_eq!(kind(&run("thinking")), json!({"kind":"completed"}));
    let f = run("thinking");
    let msg = events(&f, "s")
        .into_iter()
        .find(|e| e["type"] == "assistant/message")
        .unwrap();
    assert_eq!(msg["data"]["message"]["content"][0]["type"], "reasoning");
    assert_eq!(
        kind(&run("error400")),
        json!({"kind":"error","error":{"message":"fake bad request","code":"INVALID_REQUEST","status":400}})
    );
    assert_eq!(
        kind(&run("error500")),
        json!({"kind":"error","error":{"message":"fake internal error","code":"SERVER","status":500}})
    );
    assert_eq!(
        kind(&run("sseerror")),
        json!({"kind":"error","error":{"message":"fake overloaded","code":"SERVER"}})
    );
    assert_eq!(
        kind(&run("truncate")),
        json!({"kind":"error","error":{"message":"DeepSeek Messages stream ended before message_stop","code":"STREAM_CLOSED"}})
    );
    let f = run("empty");
    assert_eq!(kind(&f)["error"]["code"], "EMPTY_RESPONSE");
    let t = types(&f, "s");
    assert_eq!(
        t.iter().filter(|x| *x == "assistant/attempt").count(),
        6,
        "5 retries"
    );
    assert_eq!(t.iter().filter(|x| *x == "llm/retry").count(), 5);
    let f = run("hello there");
    let msg = events(&f, "s")
        .into_iter()
        .find(|e| e["type"] == "assistant/message")
        .unwrap();
    assert_eq!(
        msg["data"]["message"]["content"],
        json!([{"type":"text","text":"hello there"}]),
        "echo"
    );
}

#[test]
fn slow_waits_virtual_time_and_hang_never_ends() {
    let mut h = H::new(Edition::Current);
    h.init();
    h.send(prompt(2, "s", "slow:4 reply: late"));
    assert_eq!(h.rt.next_deadline(), Some(T0 + 4000));
    h.now += 3999;
    assert!(turn_end(&h.poll(), "s").is_empty());
    h.now += 1;
    assert_eq!(turn_end(&h.poll(), "s").len(), 1);
    let f = h.send(prompt(3, "h", "hang"));
    assert!(turn_end(&f, "h").is_empty());
    // The stand-in never answers, not even its headers: the request is built, nothing delivered.
    assert_eq!(types(&f, "h").last().unwrap(), "session/title");
    assert_eq!(h.rt.next_deadline(), None, "a hung turn schedules nothing");
}

#[test]
fn a_tool_directive_runs_two_steps_with_the_sandbox_refusal() {
    let f = run("tool: echo hi");
    let t = types(&f, "s");
    let from = t.iter().position(|x| x == "tool/call").unwrap();
    assert_eq!(
        &t[from..],
        [
            "tool/call",
            "job/registered",
            "job/settled",
            "tool/result",
            "step/end",
            "step/start",
            "session-log-deepseek/delivery-accepted",
            "assistant/message",
            "step/end",
            "turn/end"
        ]
    );
    let ev = events(&f, "s");
    let call = ev.iter().find(|e| e["type"] == "tool/call").unwrap();
    assert_eq!(
        call["data"]["arguments"],
        "{\"description\": \"probe command\", \"command\": \"echo hi\"}"
    );
    let result = ev.iter().find(|e| e["type"] == "tool/result").unwrap();
    assert_eq!(result["data"]["message"]["isError"], true);
    assert_eq!(result["sourceEventSeqs"], json!([call["seq"]]));
}

#[test]
fn a_subagent_runs_a_child_session_and_reports_it_to_the_parent() {
    let f = run("subagent: reply: from child");
    let started = f
        .iter()
        .find(|x| x["method"] == "subagent.started")
        .unwrap();
    let child = started["params"]["childSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(started["params"]["parentSessionId"], "s");
    let cev = events(&f, &child);
    assert_eq!(cev[0]["seq"], 3);
    assert_eq!(
        cev[0]["data"]["inserted"][0]["content"][0]["text"],
        "reply: from child"
    );
    let creply = cev
        .iter()
        .find(|e| e["type"] == "assistant/message")
        .unwrap();
    assert_eq!(
        creply["data"]["message"]["content"],
        json!([{"type":"text","text":"from child"}])
    );
    let fin = f
        .iter()
        .find(|x| x["method"] == "subagent.finished")
        .unwrap();
    assert_eq!(
        fin["params"],
        json!({"provider":"spawn","agentId":child,"parentSessionId":"s","childSessionId":child,
        "status":"ok","stopReason":"completed","lastAssistantMessage":[{"type":"text","text":"from child"}]})
    );
    assert_eq!(
        statuses(&f, "s"),
        ["running", "idle", "running", "idle"],
        "the notice is a second parent turn"
    );
    assert_eq!(statuses(&f, &child), ["running", "idle"]);
    let ends = turn_end(&f, "s");
    assert_eq!(ends.len(), 2);
    let fin_at = f
        .iter()
        .position(|x| x["method"] == "subagent.finished")
        .unwrap();
    let child_idle = f
        .iter()
        .rposition(|x| {
            x["params"]["sessionId"] == child.as_str() && x["params"]["status"] == "idle"
        })
        .unwrap();
    assert!(child_idle < fin_at);
}

#[test]
fn an_empty_session_id_fails_its_turn_but_never_wedges_shutdown() {
    let mut h = H::new(Edition::Current);
    h.init();
    let f = h.send(prompt(2, "", "reply: c"));
    assert!(response(&f, &json!(2))["result"]["messageId"].is_string());
    assert_eq!(
        turn_end(&f, "")[0]["reason"],
        json!({"kind":"error","error":{"message":"cannot encode an empty path segment","code":"UNKNOWN"}})
    );
    assert_eq!(statuses(&f, ""), ["running", "idle"]);
    let f = h.send(req(10, "shutdown", json!({})));
    assert_eq!(response(&f, &json!(10))["result"], json!({}));
    assert_eq!(h.rt.exit_code(), Some(0));
}

#[test]
fn deep_and_huge_input_is_handled_without_crashing() {
    let mut h = H::new(Edition::Current);
    h.init();
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"probe/deep\",\"params\":{}1{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let f = h.lines(&[&deep]);
    assert_eq!(
        error_message(&f, 1),
        "unknown DeepSeek Harness SDK runtime method: probe/deep"
    );
    let deep_prompt = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"d\",\"contentBlocks\":[{{\"type\":\"text\",\"text\":\"reply: ok\",\"x\":{}1{}}}]}}}}",
        "[".repeat(100_000), "]".repeat(100_000));
    // Our receipt echoes the deep content (as the real one does): check the raw frames.
    let mut raw = Vec::new();
    h.rt.handle_line(&deep_prompt, h.now, &mut raw);
    h.rt.poll(h.now, &mut raw);
    let raw = String::from_utf8(raw).unwrap();
    assert!(raw.contains("\"id\":2,\"result\":{\"messageId\":"));
    assert!(raw.contains("\"type\":\"turn/end\",\"seq\":16,"));
    assert!(raw.contains("{\"turn\":1,\"reason\":{\"kind\":\"completed\"}}"));
    assert!(
        raw.len() > 400_000,
        "the receipt and user/message echo the content"
    );
    // A deep response (result, or error data) is ignored, and dropped without recursion.
    let nest = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let result = format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{nest}}}");
    let error =
        format!("{{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{{\"code\":1,\"data\":{nest}}}}}");
    assert!(h.lines(&[&result, &error]).is_empty());
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"{}\"}}",
        "m".repeat(1 << 20)
    );
    let f = h.lines(&[&big]);
    assert_eq!(
        error_message(&f, "big").len(),
        "unknown DeepSeek Harness SDK runtime method: ".len() + (1 << 20)
    );
    let text = "x".repeat(10 << 20);
    let mut f = h.send(prompt(3, "huge", &text));
    f.extend(h.settle());
    let reply = events(&f, "huge")
        .into_iter()
        .find(|e| e["type"] == "assistant/message")
        .unwrap();
    assert_eq!(
        reply["data"]["message"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .len(),
        10 << 20
    );
}

#[test]
fn a_session_s_event_times_never_go_backwards_when_a_poll_runs_late() {
    use dsh_conformance::runtime::{Config, Edition, Runtime};
    let mut rt = Runtime::new(Config::new(Edition::Current));
    let mut out = Vec::new();
    rt.handle_line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/","provider":"deepseek-official","model":"deepseek-v4-flash"}}"#, 1_000, &mut out);
    rt.handle_line(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","contentBlocks":[{"type":"text","text":"slow:1 reply: a"}]}}"#, 1_000, &mut out);
    // A line handled long after the turn's step was due, before the late poll runs it.
    rt.handle_line(r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","contentBlocks":[{"type":"text","text":"reply: b"}]}}"#, 9_000, &mut out);
    while let Some(t) = rt.next_deadline() {
        rt.poll(t.max(9_000), &mut out);
    }
    let mut last = 0;
    for l in String::from_utf8(out).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        if let Some(t) = v.pointer("/params/event/time").and_then(|t| t.as_u64()) {
            assert!(t >= last, "time went back from {last} to {t}: {l}");
            last = t;
        }
    }
    assert!(last >= 9_000);
}

#[test]
fn a_turn_whose_working_directory_is_gone_fails_before_its_first_step() {
    // As the release: initialize accepts any cwd; a turn checks it exists before any step.
    let dir = std::env::temp_dir().join(format!("dsh-gone-cwd-{}", std::process::id()));
    let gone = dir.join("c");
    std::fs::create_dir_all(&gone).unwrap();
    let mut c = cfg(Edition::Current);
    c.cwd_must_exist = true;
    c.process_cwd = dir.clone();
    let mut h = H::with(c);
    let cwd = gone.to_string_lossy().into_owned();
    h.send(req(
        "init",
        "initialize",
        json!({"cwd": cwd, "provider": "deepseek-official", "model": "deepseek-v4-flash"}),
    ));
    let f = h.send(prompt(1, "s1", "reply: here"));
    let mut f = [f, h.settle()].concat();
    assert_eq!(turn_end(&f, "s1")[0]["reason"]["kind"], "completed");
    std::fs::remove_dir_all(&gone).unwrap();
    f = [h.send(prompt(2, "s2", "reply: gone")), h.settle()].concat();
    let _ = std::fs::remove_dir_all(&dir);
    let t = types(&f, "s2");
    assert!(!t.iter().any(|t| t == "step/start"), "{t:?}");
    let end = &turn_end(&f, "s2")[0];
    assert_eq!(end["reason"]["kind"], "error", "{end}");
    assert_eq!(
        end["reason"]["error"]["message"],
        format!("working-directory: directory does not exist: \"{cwd}\"")
    );
    // The same prompt where the directory is not checked (made-up names in tests) completes.
    let mut h = H::new(Edition::Current);
    h.init();
    let f = [h.send(prompt(1, "s1", "reply: fine")), h.settle()].concat();
    assert_eq!(turn_end(&f, "s1")[0]["reason"]["kind"], "completed");
}

#[test]
fn a_text_block_that_is_not_a_string_fails_the_turn_before_its_first_step() {
    for (text, message) in [
        (
            json!(5),
            "block.text.matchAll is not a function or its return value is not iterable",
        ),
        (
            json!(null),
            "Cannot read properties of null (reading 'matchAll')",
        ),
    ] {
        let mut h = H::new(Edition::Current);
        h.init();
        let p = req(
            "p",
            "session/prompt",
            json!({"sessionId": "s1", "contentBlocks": [{"type": "text", "text": text}]}),
        );
        let f = [h.send(p), h.settle()].concat();
        let t = types(&f, "s1");
        assert!(!t.iter().any(|t| t == "step/start"), "{t:?}");
        assert_eq!(turn_end(&f, "s1")[0]["reason"]["error"]["message"], message);
    }
}

#[test]
fn a_working_directory_change_during_a_step_is_read_in_a_next_step() {
    // The change is spliced for the next step; the turn runs one more step, whose messages are
    // the notice and a new runtime context (the scripted model answers a notice `ok`).
    let mut h = H::new(Edition::Current);
    h.init();
    let mut f = h.send(prompt(1, "s1", "slow:1 reply: done"));
    f.extend(h.poll());
    f.extend(h.send(req(
        2,
        "session/working-directory/set",
        json!({"sessionId": "s1", "path": "/"}),
    )));
    f.extend(h.settle());
    let t = types(&f, "s1");
    let step2 = t.iter().position(|x| x == "step/end").expect("step 1 ends");
    let rest: Vec<&str> = t[step2 + 1..].iter().map(String::as_str).collect();
    assert_eq!(
        rest,
        [
            "agent/inbox/spliced",
            "step/start",
            "user/message",
            "user/message",
            "session-log-deepseek/delivery-accepted",
            "assistant/message",
            "step/end",
            "turn/end"
        ],
        "{t:?}"
    );
    assert_eq!(turn_end(&f, "s1")[0]["reason"]["kind"], "completed");
}

#[test]
fn a_subagent_that_ends_while_its_parent_is_busy_is_read_at_the_parents_next_step() {
    let mut h = H::new(Edition::Current);
    h.init();
    let mut f = h.send(prompt(2, "p", "subagent: reply: child"));
    // Queued behind the first turn: the parent is busy (5 s) when the child ends.
    f.extend(h.send(prompt(3, "p", "slow:5 reply: later")));
    f.extend(h.settle());
    let ev = events(&f, "p");
    let splice = ev
        .iter()
        .find(|e| e["type"] == "agent/inbox/spliced" && e["data"]["target"] == "next-step")
        .expect("the notice waits for the busy parent's next step");
    assert_eq!(
        splice["data"]["inserted"][0]["source"]["kind"],
        "subagent-settled"
    );
    let finished = f
        .iter()
        .filter(|m| m["method"] == "subagent.finished")
        .count();
    assert_eq!(finished, 1);
    let turns = ev.iter().filter(|e| e["type"] == "turn/start").count();
    assert_eq!(turns, 2, "no notice turn of its own");
    let replies: Vec<&str> = ev
        .iter()
        .filter(|e| e["type"] == "assistant/message")
        .filter_map(|e| e["data"]["message"]["content"][0]["text"].as_str())
        .collect();
    assert_eq!(replies.last(), Some(&"ok"), "{replies:?}");
}

/// The prompts of `sid`'s turns (their `user/message` texts, the first block), in order.
fn prompts_of(frames: &[Value], sid: &str) -> Vec<String> {
    events(frames, sid)
        .iter()
        .filter(|e| e["type"] == "user/message" && e["data"]["source"]["kind"] == "user")
        .filter_map(|e| e["data"]["content"][0]["text"].as_str().map(str::to_owned))
        .collect()
}

/// Runs `texts` in session `p`, all sent at once (`queued`) or each after the last settled;
/// returns the frames and the one fork child's id.
fn fork_run(texts: &[&str], queued: bool) -> (Vec<Value>, String) {
    let mut h = H::new(Edition::Current);
    h.init();
    let lines: Vec<String> = (0..texts.len())
        .map(|i| prompt(i + 2, "p", texts[i]).to_string())
        .collect();
    let mut f = Vec::new();
    if queued {
        let all: Vec<&str> = lines.iter().map(String::as_str).collect();
        f.extend(h.lines(&all));
    } else {
        for l in &lines {
            f.extend(h.lines(&[l]));
            f.extend(h.settle());
        }
    }
    f.extend(h.settle());
    let child = f
        .iter()
        .find(|m| m["method"] == "subagent.started")
        .expect("a fork child")["params"]["childSessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    (f, child)
}

#[test]
fn a_fork_child_first_runs_the_prompts_its_parent_had_queued_at_its_last_turn_end() {
    let fork = r#"call: subagent_fork {"description":"d","prompt":"reply: forked"}"#;
    let texts = ["reply: one", "reply: two", fork, "reply: four"];
    // Sent at once (recorded: sdk_tool_fork_queued): at the end of turn 2, the parent's inbox
    // held the forking prompt and the one behind it; the child runs both, then its task.
    let (f, child) = fork_run(&texts, true);
    assert_eq!(
        prompts_of(&f, &child),
        [fork, "reply: four", "reply: forked"]
    );
    let ev = events(&f, &child);
    assert_eq!(
        ev[0]["data"]["start"], 2,
        "its task queued behind the inherited two"
    );
    let turns: Vec<&Value> = ev
        .iter()
        .filter(|e| e["type"] == "turn/start")
        .map(|e| &e["data"]["turn"])
        .collect();
    assert_eq!(turns, [3, 4, 5]);
    // Its log goes on from the parent's through turn 2, past 4 unstreamed seed events.
    let end2 = events(&f, "p")
        .into_iter()
        .find(|e| e["type"] == "turn/end" && e["data"]["turn"] == 2)
        .unwrap();
    assert_eq!(ev[0]["seq"].as_u64(), end2["seq"].as_u64().map(|s| s + 5));
    // The same prompts sent one after another: nothing was queued, the child runs its task.
    let (f, child) = fork_run(&texts, false);
    assert_eq!(prompts_of(&f, &child), ["reply: forked"]);
    assert_eq!(events(&f, &child)[0]["data"]["start"], 0);
}
