//! Methods × editions × error messages (docs/CONTRACT.md#s3, #s9), in-memory.

use super::harness::*;
use dsh_conformance::runtime::Edition;
use serde_json::json;

#[test]
fn unknown_methods_answer_internal_error_in_every_edition() {
    for ed in Edition::ALL {
        let mut h = H::new(ed);
        for m in [
            "probe/x",
            "",
            "Initialize",
            "session/prompt ",
            "session.event",
        ] {
            let f = h.send(req(1, m, json!({})));
            assert_eq!(f.len(), 1);
            assert_eq!(
                error_message(&f, 1),
                format!("unknown DeepSeek Harness SDK runtime method: {m}")
            );
        }
    }
}

#[test]
fn the_extra_methods_exist_only_in_the_current_edition() {
    for m in [
        "session/resume",
        "session/wait",
        "session/working-directory/get",
        "session/working-directory/set",
    ] {
        for ed in [Edition::Aug2026, Edition::Legacy] {
            let mut h = H::new(ed);
            h.init();
            let f = h.send(req(1, m, json!({"sessionId":"s"})));
            assert_eq!(
                error_message(&f, 1),
                format!("unknown DeepSeek Harness SDK runtime method: {m}"),
                "{ed}"
            );
        }
        let mut h = H::new(Edition::Current);
        let f = h.send(req(1, m, json!({"sessionId":"s","path":"/"})));
        assert_eq!(error_message(&f, 1), "SDK server is not initialized", "{m}");
    }
}

#[test]
fn the_current_edition_gates_session_methods_until_initialize_in_the_documented_order() {
    let mut h = H::new(Edition::Current);
    let f = h.send(prompt(1, "s1", "hi"));
    assert_eq!(error_message(&f, 1), "SDK server is not initialized");
    assert_eq!(f.len(), 1, "no session was created: {f:?}");
    // resume's non-empty check and wait's string check come before the initialized check.
    let f = h.send(req(2, "session/resume", json!({"sessionId":""})));
    assert_eq!(
        error_message(&f, 2),
        "session/resume requires a non-empty sessionId string"
    );
    let f = h.send(req(3, "session/wait", json!({})));
    assert_eq!(
        error_message(&f, 3),
        "session/wait requires a sessionId string"
    );
    let f = h.send(req(
        4,
        "session/working-directory/get",
        json!({"sessionId":""}),
    ));
    assert_eq!(
        error_message(&f, 4),
        "working-directory requests require a non-empty sessionId"
    );
    let f = h.send(req(
        5,
        "session/working-directory/set",
        json!({"sessionId":"s"}),
    ));
    assert_eq!(
        error_message(&f, 5),
        "working-directory set requires a path string"
    );
    let f = h.send(req(6, "session/wait", json!({"sessionId":""})));
    assert_eq!(error_message(&f, 6), "SDK server is not initialized");
    let f = h.send(req(7, "shutdown", json!(null)));
    assert_eq!(response(&f, &json!(7))["result"], json!({}));
}

#[test]
fn the_2026_08_edition_serves_prompts_without_initialize_and_has_no_setup_events() {
    let mut h = H::new(Edition::Aug2026);
    let f = h.send(prompt(1, "s1", "reply: early"));
    let ev = events(&f, "s1");
    assert_eq!(ev[0]["type"], "agent/inbox/spliced");
    assert_eq!(ev[0]["seq"], 0);
    assert!(response(&f, &json!(1))["result"]["messageId"].is_string());
    assert_eq!(statuses(&f, "s1"), ["running", "idle"]);
}

#[test]
fn initialize_validates_in_the_released_order_with_exact_messages() {
    let mut h = H::new(Edition::Current);
    let base = json!({"cwd":"/x","provider":"deepseek-official","model":"deepseek-v4-flash"});
    let with = |k: &str, v: serde_json::Value| {
        let mut p = base.clone();
        p[k] = v;
        p
    };
    let cases = vec![
        (json!({"reasoningEffort":"","maxTokens":0}), "initialize reasoningEffort must be a non-empty string"),
        (with("maxTokens", json!(0)), "initialize maxTokens must be a positive safe integer"),
        (with("maxTokens", json!(-1)), "initialize maxTokens must be a positive safe integer"),
        (with("maxTokens", json!(1.5)), "initialize maxTokens must be a positive safe integer"),
        (with("maxTokens", json!("5")), "initialize maxTokens must be a positive safe integer"),
        (with("maxTokens", json!(null)), "initialize maxTokens must be a positive safe integer"),
        (with("maxTokens", json!(9007199254740992u64)), "initialize maxTokens must be a positive safe integer"),
        (json!({"provider":"nope"}), "The \"paths[0]\" argument must be of type string. Received undefined"),
        (json!({"cwd":5}), "The \"paths[0]\" argument must be of type string. Received type number (5)"),
        (with("provider", json!("openai")), "no adapter registered for provider \"openai\""),
        (json!({"cwd":"/x"}), "no adapter registered for provider \"undefined\""),
        (json!({"cwd":"/x","provider":"deepseek-official"}), "adapter returned invalid exact model metadata for provider \"deepseek-official\" model \"undefined\""),
        (with("reasoningEffort", json!("bogus")), "provider \"deepseek-official\" model \"deepseek-v4-flash\" does not support reasoning effort \"bogus\""),
    ];
    for (i, (params, msg)) in cases.into_iter().enumerate() {
        let f = h.send(req(i as u64, "initialize", params.clone()));
        assert_eq!(error_message(&f, i as u64), msg, "params {params}");
    }
    let f = h.send(req(
        "ok",
        "initialize",
        with("maxTokens", json!(9007199254740991u64)),
    ));
    assert_eq!(
        serde_json::to_string(&f[0]).unwrap(),
        r#"{"jsonrpc":"2.0","id":"ok","result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}"#
    );
    // Re-initialize is allowed and a failed one keeps the earlier route.
    assert!(response(&h.init(), &json!("init"))["result"].is_object());
    let f = h.send(req("bad", "initialize", with("provider", json!("nope"))));
    assert_eq!(
        error_message(&f, "bad"),
        "no adapter registered for provider \"nope\""
    );
    let f = h.send(prompt(1, "s1", "reply: still works"));
    assert!(response(&f, &json!(1))["result"]["messageId"].is_string());
}

/// A prompt without `sessionId` makes the release open a session `session-N` (and fail): each
/// open takes the next N (prompts arriving while one opens join it there); other sessions and
/// the ones refused earlier (`sessionId` not a string) take no number (probed against 0.2.1rc2).
#[test]
fn prompts_without_a_session_id_number_the_sessions_they_open() {
    let mut h = H::new(Edition::Current);
    h.init();
    let anonymous = |h: &mut H, id: u64| {
        let f = h.send(req(id, "session/prompt", json!({})));
        let m = error_message(&f, id);
        m.strip_prefix("agent id \"undefined\" does not match session id \"session-")
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{m}"))
            .parse::<u32>()
            .unwrap()
    };
    assert_eq!(anonymous(&mut h, 1), 1);
    let f = h.send(req(3, "session/prompt", json!({"sessionId": null})));
    assert_eq!(error_message(&f, 3), "format v4 header id must be a string");
    h.send(prompt(4, "named", "reply: x"));
    h.settle();
    assert_eq!(anonymous(&mut h, 5), 2);
    // On the release a prompt pipelined with another joins its open (the same N); the reference
    // opens at once, so each takes the next (docs/CONTRACT.md#s13.4).
    let both = h.lines(&[
        &req(6, "session/prompt", json!({})).to_string(),
        &req(7, "session/prompt", json!({})).to_string(),
    ]);
    assert!(error_message(&both, 6).ends_with("\"session-3\""));
    assert!(error_message(&both, 7).ends_with("\"session-4\""));
}

/// A null content block fails the prompt once its session is open (the release reads each
/// block's `type`); a block whose `type` is not a string ends the turn naming the type as
/// JavaScript prints it (probed against 0.2.1rc2).
#[test]
fn null_blocks_and_odd_block_types_fail_as_released() {
    let mut h = H::new(Edition::Current);
    h.init();
    for (i, blocks) in [
        json!([null]),
        json!([{"type":"text","text":"reply: x"}, null]),
    ]
    .into_iter()
    .enumerate()
    {
        let sid = format!("n{i}");
        let f = h.send(req(
            i as u64,
            "session/prompt",
            json!({"sessionId": sid, "contentBlocks": blocks}),
        ));
        assert_eq!(
            error_message(&f, i as u64),
            "Cannot read properties of null (reading 'type')"
        );
        assert_eq!(
            types(&f, &sid),
            ["permission/preset", "sandbox/mode", "approval/policy"]
        );
    }
    for (i, (block, printed)) in [
        (json!({"type": null}), "null"),
        (json!({}), "undefined"),
        (json!([]), "undefined"),
        (json!("hello"), "undefined"),
        (json!({"type": 5}), "5"),
        (json!({"type": {"a": 1}}), "[object Object]"),
    ]
    .into_iter()
    .enumerate()
    {
        let sid = format!("t{i}");
        let f = h.send(req(
            10 + i as u64,
            "session/prompt",
            json!({"sessionId": sid, "contentBlocks": [block]}),
        ));
        let end = &turn_end(&f, &sid)[0];
        assert_eq!(
            end["reason"]["error"]["message"],
            format!("DeepSeek Messages cannot represent user/tool-result content {printed}")
        );
    }
}

#[test]
fn prompt_parameter_errors_follow_the_released_order() {
    let mut h = H::new(Edition::Current);
    h.init();
    let f = h.send(req(1, "session/prompt", json!({"contentBlocks":[]})));
    assert_eq!(
        error_message(&f, 1),
        "agent id \"undefined\" does not match session id \"session-1\""
    );
    let f = h.send(req(
        2,
        "session/prompt",
        json!({"sessionId":5,"contentBlocks":[]}),
    ));
    assert_eq!(error_message(&f, 2), "format v4 header id must be a string");
    // Missing contentBlocks: the session is created (its setup events stream) and then it fails.
    let f = h.send(req(3, "session/prompt", json!({"sessionId":"made"})));
    assert_eq!(
        types(&f, "made"),
        ["permission/preset", "sandbox/mode", "approval/policy"]
    );
    assert_eq!(
        error_message(&f, 3),
        "Cannot read properties of undefined (reading 'filter')"
    );
    let f = h.send(req(
        4,
        "session/prompt",
        json!({"sessionId":"made","contentBlocks":{}}),
    ));
    assert_eq!(error_message(&f, 4), "blocks.filter is not a function");
    assert!(events(&f, "made").is_empty(), "no second creation");
    // Unrepresentable content is accepted and fails the turn like the real adapter.
    let f = h.send(req(
        5,
        "session/prompt",
        json!({"sessionId":"made","contentBlocks":[{"type":"bogus"}]}),
    ));
    assert!(response(&f, &json!(5))["result"]["messageId"].is_string());
    let end = &turn_end(&f, "made")[0];
    assert_eq!(end["reason"]["error"]["code"], "UNSUPPORTED_CONTENT");
    assert_eq!(
        end["reason"]["error"]["message"],
        "DeepSeek Messages cannot represent user/tool-result content bogus"
    );
}

#[test]
fn session_wait_answers_unknown_idle_and_running_sessions_as_released() {
    let mut h = H::new(Edition::Current);
    h.init();
    let f = h.send(req(1, "session/wait", json!({"sessionId":"nope"})));
    assert_eq!(error_message(&f, 1), "unknown SDK session: nope");
    let f = h.send(prompt(2, "s1", "slow:2 reply: waited"));
    assert!(turn_end(&f, "s1").is_empty());
    let f = h.send(req(3, "session/wait", json!({"sessionId":"s1"})));
    assert!(f.is_empty(), "parked while running: {f:?}");
    let f = h.settle();
    let idle = f
        .iter()
        .position(|x| x["method"] == "session.status" && x["params"]["status"] == "idle")
        .unwrap();
    let resp = f.iter().position(|x| x["id"] == 3).unwrap();
    assert!(idle < resp, "the wait answers after the idle");
    assert_eq!(f[resp]["result"], json!({}));
    let f = h.send(req(4, "session/wait", json!({"sessionId":"s1"})));
    assert_eq!(response(&f, &json!(4))["result"], json!({}));
}

#[test]
fn working_directory_get_creates_and_set_changes_with_a_notice() {
    let mut h = H::new(Edition::Current);
    h.init();
    let f = h.send(req(
        1,
        "session/working-directory/get",
        json!({"sessionId":"w"}),
    ));
    assert_eq!(
        types(&f, "w"),
        ["permission/preset", "sandbox/mode", "approval/policy"]
    );
    // The harness's cwd does not exist on disk: get says so, as upstream does (the session was
    // still created first).
    assert_eq!(
        error_message(&f, 1),
        "working-directory: directory does not exist: \"/work-dir\""
    );
    let f = h.send(req(
        2,
        "session/working-directory/set",
        json!({"sessionId":"w","path":"/"}),
    ));
    assert_eq!(
        types(&f, "w"),
        ["working-directory/change", "agent/inbox/spliced"]
    );
    let ev = events(&f, "w");
    assert_eq!(ev[0]["data"], json!({"cwd":"/"}));
    assert_eq!(ev[1]["data"]["target"], "next-step");
    assert_eq!(
        ev[1]["data"]["inserted"][0]["source"]["kind"],
        "working-directory"
    );
    assert_eq!(response(&f, &json!(2))["result"], json!({"cwd":"/"}));
    let f = h.send(req(
        3,
        "session/working-directory/set",
        json!({"sessionId":"w","path":"."}),
    ));
    assert_eq!(f.len(), 1, "same directory: no event");
    assert_eq!(response(&f, &json!(3))["result"], json!({"cwd":"/"}));
    let f = h.send(req(
        31,
        "session/working-directory/get",
        json!({"sessionId":"w"}),
    ));
    assert_eq!(response(&f, &json!(31))["result"], json!({"cwd":"/"}));
    let f = h.send(req(
        32,
        "session/working-directory/set",
        json!({"sessionId":"w","path":"no-such-dir"}),
    ));
    assert_eq!(
        error_message(&f, 32),
        "working-directory: directory does not exist: \"no-such-dir\"",
        "the path is quoted as sent, not resolved"
    );
    let f = h.send(req(
        4,
        "session/working-directory/set",
        json!({"sessionId":"w","path":"/nonexistent/zzz"}),
    ));
    assert_eq!(
        error_message(&f, 4),
        "working-directory: directory does not exist: \"/nonexistent/zzz\""
    );
    let f = h.send(req(
        5,
        "session/working-directory/set",
        json!({"sessionId":"w","path":""}),
    ));
    assert_eq!(
        error_message(&f, 5),
        "working-directory: cd must not be empty"
    );
}

#[test]
fn resume_without_persistence_or_for_open_sessions_fails_with_the_released_messages() {
    let mut h = H::new(Edition::Current);
    h.init();
    let f = h.send(req(1, "session/resume", json!({"sessionId":"x"})));
    assert_eq!(
        error_message(&f, 1),
        "cannot resume: session persistence is not configured (load a dsh-session-persistence backend)"
    );
    h.send(prompt(2, "s1", "reply: x"));
    let f = h.send(req(3, "session/resume", json!({"sessionId":"s1"})));
    assert_eq!(
        error_message(&f, 3),
        "SDK session is already open or opening: s1"
    );
}

#[test]
fn shutdown_is_answered_every_time_and_later_creation_fails() {
    let mut h = H::new(Edition::Current);
    h.init();
    let f = h.lines(&[
        &req(1, "shutdown", json!({})).to_string(),
        &req(2, "shutdown", json!({})).to_string(),
        &req(3, "probe/after", json!({})).to_string(),
        &prompt(4, "late", "hi").to_string(),
    ]);
    assert_eq!(response(&f, &json!(1))["result"], json!({}));
    assert_eq!(response(&f, &json!(2))["result"], json!({}));
    assert_eq!(
        error_message(&f, 3),
        "unknown DeepSeek Harness SDK runtime method: probe/after"
    );
    assert_eq!(error_message(&f, 4), "SDK server is shutting down");
    assert_eq!(h.rt.exit_code(), Some(0));
}

#[test]
fn client_notifications_responses_and_garbage_produce_nothing() {
    let mut h = H::new(Edition::Current);
    let f = h.lines(&[
        r#"{"jsonrpc":"2.0","method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","method":"initialize","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        r#"{"id":null,"method":"foo"}"#,
        "[{\"id\":5,\"method\":\"probe/x\"}]",
        "{not json",
        "42",
        r#"{"id":1,"method":5}"#,
    ]);
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(h.rt.exit_code(), None);
    let f = h.send(prompt(1, "s", "hi"));
    assert_eq!(error_message(&f, 1), "SDK server is not initialized");
}
