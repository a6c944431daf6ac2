//! Bad input: whatever arrives, in every edition, the runtime never panics and writes only
//! well-formed JSON-RPC frames.

use dsh_conformance::runtime::{Config, Edition, Runtime};
use dsh_conformance::wire::{LineDecoder, LineEvent};
use proptest::prelude::*;
use serde_json::Value;

fn frame() -> impl Strategy<Value = String> {
    let method = prop_oneof![
        Just("initialize"),
        Just("session/prompt"),
        Just("session/resume"),
        Just("session/wait"),
        Just("session/working-directory/get"),
        Just("session/working-directory/set"),
        Just("probe/x"),
        Just(""),
    ];
    let scalar = prop_oneof![
        Just("null".to_string()),
        Just("5".to_string()),
        Just("\"\"".to_string()),
        Just("\"s1\"".to_string()),
        Just("\"..\"".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("1e400".to_string()),
        Just("[{\"type\":\"text\",\"text\":\"hang\"}]".to_string()),
        Just("[{\"type\":\"text\",\"text\":\"subagent: tool\"}]".to_string()),
        Just("[{\"type\":\"text\",\"text\":\"slow:0.01 reply: x\"}]".to_string()),
        Just("\"deepseek-official\"".to_string()),
        "\"[a-z./]{0,6}\"",
    ];
    let key = prop_oneof![
        Just("sessionId"),
        Just("contentBlocks"),
        Just("cwd"),
        Just("provider"),
        Just("model"),
        Just("maxTokens"),
        Just("reasoningEffort"),
        Just("path"),
    ];
    let params = proptest::collection::vec((key, scalar.clone()), 0..6).prop_map(|kv| {
        let body: Vec<String> = kv
            .into_iter()
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        format!("{{{}}}", body.join(","))
    });
    let id = prop_oneof![
        Just("1"),
        Just("\"a\""),
        Just("null"),
        Just("true"),
        Just("1.5")
    ];
    prop_oneof![
        (id, method, prop_oneof![params, scalar]).prop_map(|(i, m, p)| format!("{{\"id\":{i},\"method\":\"{m}\",\"params\":{p}}}")),
        "[ -~]{0,40}",
        Just("{\"id\":9,\"method\":\"shutdown\"}".to_string()),
        Just("{\"id\":8,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"p\",\"contentBlocks\":[{\"type\":\"text\",\"text\":\"subagent: reply: c\"}]}}".to_string()),
    ]
}

fn check_output(out: &[u8]) {
    let text = std::str::from_utf8(out).expect("UTF-8 output");
    for l in text.lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert!(v.is_object() && v["jsonrpc"] == "2.0", "{l}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_frames_gives_only_well_formed_frames(frames in proptest::collection::vec(frame(), 1..25), ed in 0usize..3) {
        let mut rt = Runtime::new(Config::new(Edition::ALL[ed]));
        let mut out = Vec::new();
        let mut now = 1_000;
        for f in &frames {
            rt.handle_line(f, now, &mut out);
            now += 7;
            rt.poll(now, &mut out);
        }
        for _ in 0..100 {
            match rt.next_deadline() {
                Some(d) => { now = now.max(d); rt.poll(now, &mut out); }
                None => break,
            }
        }
        check_output(&out);
    }

    #[test]
    fn arbitrary_bytes_never_break_the_runtime(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let mut rt = Runtime::new(Config::default());
        let mut dec = LineDecoder::new(4096);
        let mut out = Vec::new();
        dec.push(&bytes, &mut |e| if let LineEvent::Line(l) = e { rt.handle_line(l, 0, &mut out) });
        rt.poll(u64::MAX, &mut out); // also proves no clock arithmetic overflows
        check_output(&out);
    }
}

#[test]
fn scheduling_at_the_end_of_time_does_not_overflow() {
    let mut rt = Runtime::new(Config::new(Edition::Aug2026));
    let mut out = Vec::new();
    let p = r#"{"id":1,"method":"session/prompt","params":{"sessionId":"p","contentBlocks":[{"type":"text","text":"subagent: slow:9 reply: c"}]}}"#;
    rt.handle_line(p, u64::MAX - 5, &mut out);
    for _ in 0..20 {
        rt.poll(u64::MAX, &mut out);
    }
    check_output(&out);
    assert!(String::from_utf8_lossy(&out).contains("subagent.finished"));
}
