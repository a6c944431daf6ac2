//! Sessions persisted under DSH_HOME: resume from a new runtime, hostile ids stay data.

use super::harness::*;
use dsh_conformance::runtime::Edition;
use serde_json::json;
use std::path::{Path, PathBuf};

fn home(name: &str) -> PathBuf {
    let h = std::env::temp_dir().join(format!("dsh-rt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&h);
    std::fs::create_dir_all(&h).unwrap();
    h
}

fn with_home(h: &Path) -> H {
    let mut c = cfg(Edition::Current);
    c.home = Some(h.to_path_buf());
    let mut r = H::with(c);
    r.init();
    r
}

#[test]
fn a_new_runtime_resumes_a_persisted_session_with_turns_and_seq_continuing() {
    let dir = home("resume");
    let mut a = with_home(&dir);
    let f = a.send(prompt(2, "persist1", "reply: remember me"));
    assert_eq!(events(&f, "persist1").last().unwrap()["seq"], 16);
    drop(a);
    let mut b = with_home(&dir);
    let f = b.send(prompt(3, "persist1", "reply: no"));
    assert_eq!(error_message(&f, 3), "session \"persist1\" already exists");
    let f = b.send(req("r1", "session/resume", json!({"sessionId":"persist1"})));
    assert_eq!(
        f,
        vec![json!({"jsonrpc":"2.0","id":"r1","result":{}})],
        "resume streams nothing"
    );
    let f = b.send(req("r2", "session/resume", json!({"sessionId":"persist1"})));
    assert_eq!(
        error_message(&f, "r2"),
        "SDK session is already open or opening: persist1"
    );
    let f = b.send(req(
        "r3",
        "session/resume",
        json!({"sessionId":"never-existed"}),
    ));
    assert_eq!(
        error_message(&f, "r3"),
        "session \"never-existed\" not found"
    );
    let f = b.send(prompt(4, "persist1", "reply: after resume"));
    let ev = events(&f, "persist1");
    assert_eq!(
        ev[0]["seq"], 18,
        "one unstreamed resume event, as the real runtime"
    );
    assert_eq!(
        types(&f, "persist1"),
        [
            "agent/inbox/spliced",
            "turn/start",
            "agent/inbox/spliced",
            "step/start",
            "user/message",
            "request/header",
            "session-log-deepseek/delivery-accepted",
            "assistant/message",
            "step/end",
            "turn/end"
        ]
    );
    assert_eq!(turn_end(&f, "persist1")[0]["turn"], 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hostile_session_ids_are_stored_as_data_inside_the_home() {
    let dir = home("hostile");
    let ids = [
        "../x",
        "../../escaped",
        "a/b",
        ".",
        "..",
        "~",
        "%2E",
        "con",
        "é\u{0}\n",
        &"z".repeat(5000),
    ];
    let mut a = with_home(&dir);
    for (i, id) in ids.iter().enumerate() {
        let f = a.send(prompt(i as u64, id, "reply: ok"));
        assert_eq!(turn_end(&f, id)[0]["reason"]["kind"], "completed", "{id:?}");
    }
    // Ids are data: all that is written is the store's one log file, and a lock file per session
    // named by the id's hex (or a hash of a long id), never by the id.
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p)
            } else {
                files.push(p)
            }
        }
    }
    let log = dir.join("dsh-reference").join("sessions.jsonl");
    let locks = dir.join("dsh-reference").join("locks");
    assert!(files.contains(&log), "{files:?}");
    for f in files.iter().filter(|f| **f != log) {
        let name = f.file_name().unwrap().to_str().unwrap();
        let stem = name.strip_suffix(".lock").unwrap_or("");
        assert!(
            f.parent() == Some(locks.as_path())
                && stem.len() > 1
                && stem.starts_with(['x', 'h'])
                && stem[1..].bytes().all(|b| b.is_ascii_hexdigit()),
            "{}",
            f.display()
        );
    }
    assert_eq!(files.len(), 1 + ids.len());
    // The first process owns its sessions until it exits.
    drop(a);
    let mut b = with_home(&dir);
    for (i, id) in ids.iter().enumerate() {
        let f = b.send(req(i as u64, "session/resume", json!({"sessionId": id})));
        assert_eq!(
            response(&f, &json!(i as u64))["result"],
            json!({}),
            "{id:?}"
        );
        let f = b.send(prompt(100 + i as u64, id, "reply: again"));
        assert_eq!(turn_end(&f, id)[0]["turn"], 2, "{id:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_empty_session_id_is_never_stored_and_never_blocks_shutdown() {
    let dir = home("empty");
    let mut a = with_home(&dir);
    a.send(prompt(1, "", "reply: c"));
    let f = a.send(req(2, "shutdown", json!({})));
    assert_eq!(response(&f, &json!(2))["result"], json!({}));
    let sessions = dir.join("dsh-reference").join("sessions");
    assert_eq!(
        std::fs::read_dir(&sessions).map(|d| d.count()).unwrap_or(0),
        0
    );
    let _ = std::fs::remove_dir_all(&dir);
}
