use super::*;
use crate::client::layers::{frames, Stack};

fn event(s: &str, ty: &str, seq: u64, data: Value) -> String {
    json!({"jsonrpc": "2.0", "method": "session.event",
        "params": {"sessionId": s, "event": {"type": ty, "seq": seq, "time": seq, "data": data}}})
    .to_string()
}

fn said(s: &str, seq: u64, text: &str) -> String {
    let message = json!({"role": "assistant", "content": [{"type": "text", "text": text}]});
    event(
        s,
        "assistant/message",
        seq,
        json!({"turn": 2, "message": message}),
    )
}

fn status(s: &str, st: &str) -> String {
    json!({"jsonrpc": "2.0", "method": "session.status", "params": {"sessionId": s, "status": st}})
        .to_string()
}

fn subagent(what: &str) -> String {
    json!({"jsonrpc": "2.0", "method": format!("subagent.{what}"),
        "params": {"parentSessionId": "r", "childSessionId": "c", "agentId": "c"}})
    .to_string()
}

#[test]
fn the_root_goes_idle_once_more_after_a_grandchild_that_outlives_its_parent() {
    let mut s = Stack(vec![Box::new(Grandchild::default())]);
    s.input(
        &json!({"id": 1, "method": "session/prompt", "params": {"sessionId": "r"}}),
        0,
    );
    // The child starts, and starts the grandchild.
    let out = frames(&s.output(subagent("started"), 0));
    assert_eq!(out.len(), 3);
    assert_eq!(out[1]["params"]["parentSessionId"], "c");
    assert_eq!(out[1]["params"]["childSessionId"], GRANDCHILD);
    assert_eq!(out[2]["params"]["status"], "running");
    // The root's first idle (its child running) and the child's end pass as they are.
    assert_eq!(frames(&s.output(status("r", "idle"), 0)).len(), 1);
    assert_eq!(frames(&s.output(subagent("finished"), 0)).len(), 1);
    for line in [
        event("r", "turn/start", 7, json!({"turn": 2})),
        said("r", 8, "the root's second reply"),
        event(
            "r",
            "turn/end",
            9,
            json!({"turn": 2, "reason": {"kind": "completed"}}),
        ),
    ] {
        assert_eq!(frames(&s.output(line, 5)).len(), 1);
    }
    // The root's idle with the grandchild running passes alone; what follows waits.
    assert_eq!(frames(&s.output(status("r", "idle"), 10)).len(), 1);
    assert!(s.output(status("r", "other"), 11).is_empty());
    assert_eq!(s.deadline(), Some(10 + PAUSE_MS));
    let rest = frames(&s.tick(10 + PAUSE_MS));
    let kinds: Vec<String> = rest
        .iter()
        .map(|v| {
            let p = &v["params"];
            let what = p["event"]["type"].as_str().or(p["status"].as_str());
            format!(
                "{} {}",
                p["sessionId"].as_str().unwrap_or(""),
                what.unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "kit-grandchild assistant/message",
            "kit-grandchild idle",
            " ",
            "r running",
            "r turn/start",
            "r assistant/message",
            "r turn/end",
            "r idle",
            "r other",
        ]
    );
    assert_eq!(rest[2]["method"], "subagent.finished");
    assert_eq!(rest[2]["params"]["parentSessionId"], "c");
    assert_eq!(rest[2]["params"]["childSessionId"], GRANDCHILD);
    let turn: Vec<_> = rest[4..7].iter().map(|v| &v["params"]["event"]).collect();
    assert_eq!(
        turn.iter().map(|e| e["seq"].clone()).collect::<Vec<_>>(),
        [10, 11, 12]
    );
    assert!(turn
        .iter()
        .all(|e| e["data"]["turn"] == 3 && e["time"] == 9));
    assert_eq!(
        turn[1]["data"]["message"]["content"][0]["text"],
        AFTER_GRANDCHILD
    );
    // Then the layer lets everything pass.
    assert_eq!(frames(&s.output(status("r", "idle"), 2000)).len(), 1);
    assert_eq!(s.deadline(), None);
}
