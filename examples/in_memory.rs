//! What a client author puts in their own tests: the reference runtime in-process (no binary,
//! no process), driven over an in-memory pipe pair, with its scripted model (`reply: <text>`).
//!
//! `cargo run --example in_memory`

use dsh_conformance::{Connection, RuntimeConfig};
use serde_json::json;
use std::time::Duration;

fn main() {
    let t = Duration::from_secs(10);
    let mut rt = Connection::memory(RuntimeConfig::default()).expect("start it");
    let init = json!({"cwd": "/", "provider": "deepseek-official", "model": "deepseek-v4-flash"});
    rt.request(json!("init"), "initialize", init, t)
        .expect("initialize");
    let prompt =
        json!({"sessionId": "s1", "contentBlocks": [{"type": "text", "text": "reply: hello"}]});
    rt.request(json!("p1"), "session/prompt", prompt, t)
        .expect("prompt accepted");
    let frames = rt
        .recv_until(t, |f| {
            f["method"] == "session.status" && f["params"]["status"] == "idle"
        })
        .expect("the turn ends");
    let said_hello = frames.iter().any(|f| f.to_string().contains("hello"));
    assert!(
        said_hello,
        "the scripted model's reply is in the turn's events: {frames:#?}"
    );
    println!("{} frames; the model said hello", frames.len());
    assert_eq!(rt.close(t).expect("it ends on EOF"), 0);
}
