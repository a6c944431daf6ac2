use super::*;

const RECEIPT: &str = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"agent/inbox/spliced","seq":0,"time":1,"data":{"target":"next-turn","start":0,"inserted":[{"content":[],"source":{"kind":"user"},"role":"user","id":"m1"}]}}}}"#;
const RESPONSE: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"messageId":"m1"}}"#;

const PROMPT_S3_A: &str = r#"{"id":20,"method":"session/prompt","params":{"sessionId":"s3"}}"#;
const PROMPT_S3_B: &str = r#"{"id":21,"method":"session/prompt","params":{"sessionId":"s3"}}"#;
const PRESET_S3: &str = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s3","event":{"type":"permission/preset","seq":0,"time":7,"data":{"preset":"workspace-write"}}}}"#;

#[test]
fn every_mutant_changes_something_somewhere() {
    // Each mutant must differ from the identity on at least one probe; otherwise it cannot be caught.
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":3,"error":{{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: {}"}}}}"#,
        "m".repeat(2000)
    );
    let probes_out = [
        RECEIPT,
        RESPONSE,
        r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"assistant/message","seq":1,"time":1,"data":{"message":{"id":"a","content":[{"type":"tool-call","id":"t","name":"x"}]}}}}}"#,
        &long,
        r#"{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: x"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"SDK server is not initialized"}}"#,
        r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/start","seq":1,"time":1,"data":{"turn":2}}}}"#,
        r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/end","seq":2,"time":1,"data":{"turn":2,"reason":{"kind":"completed"}}}}}"#,
        r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s1","status":"idle"}}"#,
        RECEIPT,
        r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"x","seq":4,"time":1,"data":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":"\ud800","error":{"code":-32603,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"error":{"code":-32603,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s2","event":{"type":"x","seq":0,"time":1,"data":{}}}}"#,
    ];
    let probes_in: [&[u8]; 13] = [
        br#"{"id":NaN,"method":"m"}"#,
        b"{}",
        br#"{"id":"n","method":"m","params":{"x":NaN}}"#,
        br#"{"id":"l","method":"m","params":{"x":nan}}"#,
        br#"{"id":"\ud800","method":"m"}"#,
        br#"{"id":10,"method":"initialize","params":[]}"#,
        br#"{"id":11,"method":"session/wait","params":{"sessionId":"s"}}"#,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}",
        b"{not json",
        b"{\"id\":null,\"method\":\"m\"}",
        b"[{\"id\":1,\"method\":\"m\"}]",
        b"{\"id\":1,\"method\":\"a\"}\r{\"id\":2,\"method\":\"b\"}",
        "\u{feff}{\"id\":1,\"method\":\"m\"}".as_bytes(),
    ];
    for m in super::super::ALL {
        let mut r = Rewriter::new(m.kind);
        let mut id = Rewriter::identity();
        let mut differs = !r.startup().is_empty()
            || r.ignores_eof()
            || r.drops_at_eof().is_some()
            || r.waits_for_turns_at_eof()
            || r.tail(b"x") != id.tail(b"x");
        r.input(b"{\"id\":9,\"method\":\"shutdown\"}");
        id.input(b"{\"id\":9,\"method\":\"shutdown\"}");
        // The first frame (a BOM before it).
        differs |= r.output(RECEIPT) != id.output(RECEIPT);
        let resume = br#"{"id":5,"method":"session/resume","params":{"sessionId":"s1"}}"#;
        differs |= r.input(resume) != id.input(resume);
        let resumed = r#"{"jsonrpc":"2.0","id":5,"result":{}}"#;
        differs |= r.output(resumed) != id.output(resumed);
        let wd = br#"{"id":6,"method":"session/working-directory/set","params":{"sessionId":"s","path":"x"}}"#;
        differs |= r.input(wd) != id.input(wd);
        differs |= r.input(b"{\"id\":7,\"method\":\"constructor\"}")
            != id.input(b"{\"id\":7,\"method\":\"constructor\"}");
        for w in [&mut r, &mut id] {
            w.output(probes_out[4]);
        }
        differs |= r.input(b"{\"id\":8,\"method\":\"initialize\"}")
            != id.input(b"{\"id\":8,\"method\":\"initialize\"}");
        for p in probes_in {
            differs |= r.input(p) != id.input(p);
        }
        for p in probes_out {
            differs |= r.output(p) != id.output(p);
        }
        // Two prompts pipelined to a new session, then its creation event and its next event.
        for p in [PROMPT_S3_A, PROMPT_S3_B] {
            differs |= r.input(p.as_bytes()) != id.input(p.as_bytes());
        }
        for o in [PRESET_S3, RECEIPT.replace("s1", "s3").as_str()] {
            differs |= r.output(o) != id.output(o);
        }
        // A turn in progress, then a shutdown.
        let start = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s9","event":{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}}}"#;
        differs |= r.output(start) != id.output(start);
        let bye = br#"{"id":30,"method":"shutdown"}"#;
        differs |= r.input(bye) != id.input(bye);
        // A wait read on a session whose last status was idle (probes_out[9]), then its answer.
        let wait = br#"{"id":12,"method":"session/wait","params":{"sessionId":"s1"}}"#;
        differs |= r.input(wait) != id.input(wait);
        let waited = r#"{"jsonrpc":"2.0","id":12,"result":{}}"#;
        differs |= r.output(waited) != id.output(waited);
        r.output(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
        differs |= r.exit_code(0) != Some(0);
        assert!(differs, "mutant {} is the identity on every probe", m.name);
    }
}

#[test]
fn a_wait_on_an_idle_session_is_answered_at_its_next_idle() {
    let mut r = Rewriter::new(MutantKind::WaitOnlyAtNextIdle);
    let status = |st: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session.status","params":{{"sessionId":"s1","status":"{st}"}}}}"#
        )
    };
    // A wait while the session runs is answered when it comes.
    r.output(&status("running"));
    r.input(br#"{"id":1,"method":"session/wait","params":{"sessionId":"s1"}}"#);
    r.output(&status("idle"));
    let first = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    assert_eq!(r.output(first), [first]);
    // A wait on the idle session is held until the next idle, then follows it.
    r.input(br#"{"id":2,"method":"session/wait","params":{"sessionId":"s1"}}"#);
    let second = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
    assert!(r.output(second).is_empty());
    r.output(&status("running"));
    assert_eq!(
        r.output(&status("idle")),
        [status("idle"), second.to_owned()]
    );
}

#[test]
fn the_identity_rewriter_passes_frames_through_unchanged() {
    let mut id = Rewriter::identity();
    assert_eq!(id.output(RECEIPT), vec![RECEIPT.to_owned()]);
    assert_eq!(id.input(b"{not json").forward, vec![b"{not json".to_vec()]);
}

#[test]
fn first_session_only_drops_the_events_of_every_later_session() {
    let mut r = Rewriter::new(M::FirstSessionOnly);
    let s2 = RECEIPT.replace("\"s1\"", "\"s2\"");
    assert_eq!(r.output(RECEIPT), vec![RECEIPT.to_owned()]);
    assert!(r.output(&s2).is_empty());
    assert_eq!(r.output(RECEIPT), vec![RECEIPT.to_owned()]);
    // Responses and statuses of any session pass.
    assert_eq!(r.output(RESPONSE), vec![RESPONSE.to_owned()]);
}

#[test]
fn response_before_receipt_moves_the_receipt_after_the_response() {
    let mut r = Rewriter::new(M::ResponseBeforeReceipt);
    assert!(r.output(RECEIPT).is_empty());
    assert_eq!(
        r.output(RESPONSE),
        vec![RESPONSE.to_owned(), RECEIPT.to_owned()]
    );
}

#[test]
fn non_json_literals_served_reads_them_as_null_outside_strings() {
    let mut r = Rewriter::new(M::NonJsonLiteralsServed);
    let line = br#"{"id":"n","method":"m","params":{"x":NaN,"y":[Infinity,-Infinity],"s":"NaN \" Infinity"}}"#;
    assert_eq!(
        r.input(line).forward,
        vec![
            br#"{"id":"n","method":"m","params":{"x":null,"y":[null,null],"s":"NaN \" Infinity"}}"#
                .to_vec()
        ]
    );
    // Other malformed lines, and valid ones, pass as they are.
    assert_eq!(r.input(b"{not json").forward, vec![b"{not json".to_vec()]);
    let ok = br#"{"id":1,"method":"NaN"}"#;
    assert_eq!(r.input(ok).forward, vec![ok.to_vec()]);
}

#[test]
fn surrogates_replaced_decodes_lone_surrogates_as_u_fffd() {
    let mut r = Rewriter::new(M::SurrogatesReplaced);
    let line = br#"{"id":"\ud800","method":"p/\udc00","params":{"\udbff":"\ud83d\ude00"}}"#;
    assert_eq!(
        r.input(line).forward,
        vec![r#"{"id":"�","method":"p/�","params":{"�":"😀"}}"#.as_bytes().to_vec()]
    );
    let pair = br#"{"id":"\ud83d\ude00","method":"m"}"#;
    assert_eq!(r.input(pair).forward, vec![pair.to_vec()]);
}

#[test]
fn writer_dies_on_surrogate_writes_nothing_from_the_first_lone_surrogate_on() {
    let mut r = Rewriter::new(M::WriterDiesOnSurrogate);
    assert_eq!(r.output(RESPONSE), vec![RESPONSE.to_owned()]);
    let pair = r#"{"jsonrpc":"2.0","id":"😀","result":{}}"#;
    assert_eq!(r.output(pair), vec![pair.to_owned()]);
    let lone = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m: \udfff"}}"#;
    assert!(r.output(lone).is_empty());
    assert!(r.output(RESPONSE).is_empty());
}

#[test]
fn creation_not_shared_creates_a_session_twice_only_for_a_prompt_read_during_its_creation() {
    let mut r = Rewriter::new(M::CreationNotShared);
    let receipt = RECEIPT.replace("s1", "s3");
    r.input(PROMPT_S3_A.as_bytes());
    r.input(PROMPT_S3_B.as_bytes());
    assert_eq!(r.output(PRESET_S3), [PRESET_S3]);
    // The second creation's event (the first creation's seq, a later time) before the next event,
    // which comes no earlier.
    let again = PRESET_S3.replace(r#""time":7"#, r#""time":8"#);
    let next = receipt.replace(r#""time":1"#, r#""time":8"#);
    assert_eq!(r.output(&receipt), [again, next.clone()]);
    assert_eq!(r.output(&receipt), [next]);
    // Once a prompt of the session is answered, a later prompt finds it created.
    let mut r = Rewriter::new(M::CreationNotShared);
    let s4 = |t: &str| t.replace("s3", "s4");
    r.input(s4(PROMPT_S3_A).as_bytes());
    r.output(&s4(PRESET_S3));
    r.output(r#"{"jsonrpc":"2.0","id":20,"result":{"messageId":"m"}}"#);
    r.input(s4(PROMPT_S3_B).as_bytes());
    assert_eq!(r.output(&s4(&receipt)), [s4(&receipt)]);
}

#[test]
fn shutdown_ends_turns_reports_the_turn_in_progress_over_before_serving_the_shutdown() {
    let mut r = Rewriter::new(M::ShutdownEndsTurns);
    let start = r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/start","seq":4,"time":9,"data":{"turn":1}}}}"#;
    r.output(start);
    let act = r.input(br#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#);
    assert_eq!(
        act.forward,
        [br#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#.to_vec()]
    );
    assert_eq!(
        act.answer,
        [
            r#"{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s1","event":{"type":"turn/end","seq":5,"time":9,"data":{"turn":1,"reason":{"kind":"cancelled"}}}}}"#,
            r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s1","status":"idle"}}"#,
        ]
    );
    // With no turn in progress, a shutdown is served as it is.
    assert!(r
        .input(br#"{"id":2,"method":"shutdown"}"#)
        .answer
        .is_empty());
}
