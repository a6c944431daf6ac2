use super::*;
use crate::client::layers::{frames, Stack};

fn event(s: &str, ty: &str, seq: u64, data: Value) -> String {
    json!({"jsonrpc": "2.0", "method": "session.event",
        "params": {"sessionId": s, "event": {"type": ty, "seq": seq, "time": 1, "data": data}}})
    .to_string()
}

fn receipt(s: &str, id: &str, seq: u64) -> String {
    let m = json!({"id": id, "role": "user", "content": [], "source": {"kind": "user"}});
    event(
        s,
        "agent/inbox/spliced",
        seq,
        json!({"target": "next-turn", "start": 0, "inserted": [m]}),
    )
}

fn idle(s: &str) -> String {
    json!({"jsonrpc": "2.0", "method": "session.status", "params": {"sessionId": s, "status": "idle"}})
        .to_string()
}

#[test]
fn the_first_turns_tail_comes_after_the_second_prompt_behind_a_look_alike() {
    let mut s = Stack(vec![Box::new(LateTail::default())]);
    let prompt = json!({"id": 1, "method": "session/prompt", "params": {"sessionId": "s1"}});
    s.input(&prompt, 0);
    assert_eq!(frames(&s.output(receipt("s1", "A", 3), 0)).len(), 1);
    let resp = json!({"jsonrpc": "2.0", "id": 1, "result": {"messageId": "A"}}).to_string();
    assert_eq!(frames(&s.output(resp, 0)).len(), 1);
    assert!(s
        .output(event("s1", "turn/end", 9, json!({})), 1)
        .is_empty());
    assert!(s.output(idle("s1"), 1).is_empty());
    s.input(&prompt, 2);
    let out = frames(&s.output(receipt("s1", "B", 10), 3));
    let who: Vec<_> = out
        .iter()
        .map(|v| v["params"]["sessionId"].clone())
        .collect();
    assert_eq!(who, [json!(FORK), json!("s1"), json!("s1"), json!("s1")]);
    assert_eq!(out[0]["params"]["event"]["data"]["inserted"][0]["id"], "B");
    assert_eq!(out[2]["params"]["status"], "idle");
    assert!(is_receipt(&out[3]) && !is_receipt(&out[2]));
    assert_eq!(
        frames(&s.output(idle("s1"), 4)).len(),
        1,
        "nothing held after"
    );
}

#[test]
fn a_childs_seq_continues_from_its_parents_next() {
    let mut s = Stack(vec![Box::new(ChildSeq::default())]);
    s.output(event("r", "tool/call", 15, json!({})), 0);
    let started = json!({"jsonrpc": "2.0", "method": "subagent.started",
        "params": {"parentSessionId": "r", "childSessionId": "c"}});
    s.output(started.to_string(), 0);
    let seq = |s: &mut Stack, sess: &str, n: u64| {
        frames(&s.output(event(sess, "x", n, json!({})), 0))[0]["params"]["event"]["seq"].clone()
    };
    assert_eq!(seq(&mut s, "c", 3), 16);
    assert_eq!(seq(&mut s, "c", 4), 17);
    assert_eq!(seq(&mut s, "r", 16), 16, "the root keeps its own");
}

#[test]
fn chatter_comes_after_the_clients_turn_start_and_never_idles() {
    let mut s = Stack(vec![Box::new(Chatty {
        sessions: 3,
        chunks: 4,
    })]);
    let out = frames(&s.output(event("s1", "turn/start", 4, json!({"turn": 1})), 0));
    assert_eq!(out.len(), 1 + 3 + 3 * 4);
    assert!(out.iter().all(|v| v["params"]["status"] != "idle"));
    assert_eq!(out[4]["params"]["sessionId"], "kit-chatty-0");
    assert_eq!(out[5]["params"]["sessionId"], "kit-chatty-1");
    assert_eq!(
        frames(&s.output(event("s1", "step/start", 5, json!({})), 0)).len(),
        1
    );
}

#[test]
fn no_idle_drops_only_the_prompted_sessions_idle() {
    let mut s = Stack(vec![Box::new(NoIdle::default())]);
    s.input(
        &json!({"id": 1, "method": "session/prompt", "params": {"sessionId": "s1"}}),
        0,
    );
    assert!(s.output(idle("s1"), 0).is_empty());
    assert_eq!(frames(&s.output(idle("other"), 0)).len(), 1);
    assert_eq!(
        frames(&s.output(event("s1", "turn/end", 9, json!({})), 0)).len(),
        1
    );
}
