//! The fast path against the classifying one: the same request (or none) for every line, and
//! the same output bytes from a runtime fed through each, line by line.

use super::*;
use crate::runtime::{Config, Edition};
use proptest::prelude::*;

/// What `classify` makes of `line`, as the fast path must: `Some` for a request only.
fn classified(line: &str) -> Option<Request> {
    match wire::classify(line) {
        Classified::Request(r) => Some(r),
        _ => None,
    }
}

fn same_request(line: &str) {
    let fast = envelope(&mut Tape::default(), line);
    let full = classified(line);
    match (&fast, &full) {
        (None, None) => {}
        (Some(a), Some(b)) => {
            // Debug tells `-0` from `0`, which `==` (SameValueZero) does not.
            assert_eq!(format!("{:?}", a.id), format!("{:?}", b.id), "{line:?}");
            assert_eq!(a.method, b.method, "{line:?}");
            assert_eq!(a.params.shape, b.params.shape, "{line:?}");
            assert_eq!(text(&a.params), text(&b.params), "{line:?}");
        }
        _ => panic!("{line:?}: fast {fast:?}, classify {full:?}"),
    }
}

/// The params object as JSON text (iterative: params may be 100 000 levels deep).
fn text(p: &Params) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in p.object() {
        crate::wire::json::write_str(k, &mut out);
        crate::wire::json::write_value(v, &mut out);
    }
    out
}

/// Message ids are random UUIDs: shown as `<uuid>` so two runtimes' outputs compare.
fn mask_uuids(out: &[u8]) -> String {
    let s = String::from_utf8(out.to_vec()).expect("the runtime writes UTF-8");
    let b = s.as_bytes();
    let shape = |w: &[u8]| {
        w.len() == 36
            && w.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    let mut r = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if i + 36 <= b.len() && shape(&b[i..i + 36]) {
            r.push_str("<uuid>");
            i += 36;
        } else {
            let c = s[i..].chars().next().expect("in bounds");
            r.push(c);
            i += c.len_utf8();
        }
    }
    r
}

const T0: u64 = 1_800_000_000_000;

/// Feeds `lines` to two runtimes, one through each path, polling both after each line; every
/// output must be the same bytes (message ids aside).
fn same_output(edition: Edition, lines: &[String]) {
    let mut fast = Runtime::new(Config::new(edition));
    let mut full = Runtime::new(Config::new(edition));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut now = T0;
    for l in lines {
        fast.handle_line(l, now, &mut a);
        full.handle_line_full(l, now, &mut b);
        assert_eq!(mask_uuids(&a), mask_uuids(&b), "after {l:?}");
        now += 1_000;
        fast.poll(now, &mut a);
        full.poll(now, &mut b);
        assert_eq!(mask_uuids(&a), mask_uuids(&b), "polling after {l:?}");
        assert_eq!(fast.exit_code(), full.exit_code());
        assert_eq!(fast.session_count(), full.session_count());
        a.clear();
        b.clear();
    }
}

/// Lines for every rule the envelope follows (ids, methods, params, duplicates, malformed).
fn edge_lines() -> Vec<String> {
    let mut v: Vec<String> = [
        "",
        " ",
        "{",
        "}",
        "[]",
        "[{\"id\":5,\"method\":\"probe/x\"}]",
        "42",
        "null",
        "\"s\"",
        "{not json",
        "A\rB",
        "{}",
        r#"{"jsonrpc":"2.0","id":1,"method":"probe/x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"probe/x"} x"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"probe/x",}"#,
        r#"{"id":"","method":""}"#,
        r#"{"id":"dup","id":"dup2","method":"m"}"#,
        r#"{"id":1,"method":"initialize","method":"probe/dup"}"#,
        r#"{"id":4,"method":"m","id":null}"#,
        r#"{"id":null,"method":"m","id":4}"#,
        r#"{"\u0069d":7,"m\u0065thod":"probe/\u00e9"}"#,
        r#"{"id":1,"method":"m\u0000x"}"#,
        r#"{"id":"\ud800","method":"\ud83d\ude00"}"#,
        r#"{"id":"a\udfffb","method":"probe/\udbff\ud800z"}"#,
        r#"{"id":2,"method":"probe/\ud800","params":{"\ud800":1,"\ud801":2}}"#,
        "{\"id\":\"\u{10F800}\\ud800\",\"method\":\"probe/\u{10F7FF}\"}",
        r#"{"id":"\udbfe\udc00","method":"session/wait","params":{"sessionId":"s\ud800"}}"#,
        r#"{"id":"a\"b\\c\n","method":"probe/x"}"#,
        r#"{"id":"ué","method":"é"}"#,
        r#"{"__proto__":{"id":1},"id":2,"method":"probe/x"}"#,
        r#"{"id":1,"method":"__proto__"}"#,
        r#"{"id":1,"method":"constructor"}"#,
        r#"{"id":1,"method":"toString"}"#,
        r#"{"id":1,"method":5}"#,
        r#"{"id":1,"method":null}"#,
        r#"{"id":1,"method":{}}"#,
        r#"{"id":1,"result":{"a":1}}"#,
        r#"{"id":1,"error":{"code":1}}"#,
        r#"{"method":"probe/x"}"#,
        r#"{"method":"probe/x","params":{"a":1}}"#,
        r#"{"id":true,"method":"m"}"#,
        r#"{"id":{},"method":"m"}"#,
        r#"{"id":[1],"method":"m"}"#,
        "{\"id\" : 1 , \"method\" : \"probe/x\" }",
        "\t{\"id\":1,\"method\":\"probe/x\"}\r",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for id in [
        "0",
        "-0",
        "-0.0",
        "0e5",
        "-0e5",
        "1",
        "-7",
        "1.5",
        "1e3",
        "1.0",
        "1E+2",
        "9007199254740993",
        "12345678901234567890",
        "123456789012345678901234567890",
        "1e21",
        "1e-7",
        "1e400",
        "-1e400",
        "1e-400",
        "-1e-400",
        "01",
        "1.",
        "-",
        "+1",
        "\"7\"",
    ] {
        v.push(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"probe/x"}}"#
        ));
        v.push(format!(
            r#"{{"id":{id},"method":"session/wait","params":{{}}}}"#
        ));
    }
    for p in [
        "null",
        "[1,2]",
        "\"s\"",
        "5",
        "1e400",
        "true",
        "{}",
        r#"{"sessionId":"s"}"#,
        r#"{"sessionId":"s","sessionId":5}"#,
        r#"{"sessionId":""}"#,
        r#"{"sessionId":"s","path":"/"}"#,
        r#"{"sessionId":"s","path":"/no/such/dir"}"#,
        r#"{"a":[[[{"b":1e400}]]],"a":2}"#,
    ] {
        for m in [
            "probe/x",
            "session/wait",
            "session/working-directory/get",
            "session/working-directory/set",
            "session/resume",
        ] {
            v.push(format!(r#"{{"id":"p","method":"{m}","params":{p}}}"#));
        }
    }
    v
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"/","provider":"deepseek-official","model":"deepseek-v4-flash"}}"#;
const PROMPT: &str = r#"{"jsonrpc":"2.0","id":"pr","method":"session/prompt","params":{"sessionId":"s","contentBlocks":[{"type":"text","text":"reply: ok"}]}}"#;

#[test]
fn the_envelope_is_the_request_classify_finds() {
    for l in edge_lines() {
        same_request(&l);
    }
    same_request(INIT);
    same_request(PROMPT);
    let n = 100_000;
    let deep = format!(
        r#"{{"id":1,"method":"m","params":{{"a":{}{}}}}}"#,
        "[".repeat(n),
        "]".repeat(n)
    );
    same_request(&deep);
    same_request(&format!(
        r#"{{"id":1,"method":"m","params":{}{}}}"#,
        "[".repeat(n),
        "]".repeat(n)
    ));
}

#[test]
fn lone_surrogates_are_echoed_as_the_escapes_json_stringify_writes() {
    let mut rt = Runtime::new(Config::new(Edition::Current));
    let mut out = Vec::new();
    rt.handle_line(INIT, T0, &mut out);
    out.clear();
    rt.handle_line(
        r#"{"jsonrpc":"2.0","id":"a\udfffb","method":"probe/\ud800"}"#,
        T0,
        &mut out,
    );
    rt.handle_line(
        r#"{"id":"\ud83d\ude00","method":"probe/\uDBFF\ud800z"}"#,
        T0,
        &mut out,
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        concat!(
            r#"{"jsonrpc":"2.0","id":"a\udfffb","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: probe/\ud800"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"😀","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: probe/\udbff\ud800z"}}"#,
            "\n"
        )
    );
}

#[test]
fn both_paths_write_the_same_bytes_in_every_edition() {
    let lines = edge_lines();
    for edition in [Edition::Current, Edition::Aug2026, Edition::Legacy] {
        // Before initialize, after it, with a session open, and after shutdown.
        let mut seq = lines.clone();
        seq.push(INIT.into());
        seq.extend(lines.iter().cloned());
        seq.push(PROMPT.into());
        seq.extend(lines.iter().cloned());
        seq.push(r#"{"id":"bye","method":"shutdown"}"#.into());
        seq.extend(lines.iter().cloned());
        same_output(edition, &seq);
    }
}

/// Pieces of envelopes: members in any order, repeated, with odd spellings and values.
fn member() -> impl Strategy<Value = String> {
    let id = prop::sample::select(vec![
        "1",
        "-0",
        "0",
        "1e400",
        "-1e400",
        "1.5",
        "9007199254740993",
        "\"s\"",
        "\"\"",
        "null",
        "true",
        "{}",
        "[]",
        "\"\\u0041\"",
        "\"\\ud800\"",
        "\"\u{10F800}\"",
        "12345678901234567890",
        "-1e-400",
    ]);
    let method = prop::sample::select(vec![
        "\"probe/x\"",
        "\"initialize\"",
        "\"shutdown\"",
        "\"session/prompt\"",
        "\"session/wait\"",
        "\"session/resume\"",
        "\"session/working-directory/get\"",
        "\"session/working-directory/set\"",
        "\"\"",
        "\"\\u0070robe\"",
        "\"probe/\\udc00\"",
        "5",
        "null",
    ]);
    let params = prop::sample::select(vec![
        "{}",
        "{\"sessionId\":\"s\"}",
        "{\"sessionId\":\"t\",\"path\":\"/\"}",
        "{\"sessionId\":\"s\",\"contentBlocks\":[{\"type\":\"text\",\"text\":\"reply: ok\"}]}",
        "{\"cwd\":\"/\",\"provider\":\"deepseek-official\",\"model\":\"deepseek-v4-flash\"}",
        "[]",
        "null",
        "\"x\"",
        "5",
    ]);
    prop_oneof![
        id.prop_map(|v| format!("\"id\":{v}")),
        method.prop_map(|v| format!("\"method\":{v}")),
        params.prop_map(|v| format!("\"params\":{v}")),
        Just("\"jsonrpc\":\"2.0\"".to_string()),
        Just("\"\\u0069d\":3".to_string()),
        Just("\"__proto__\":{\"id\":9}".to_string()),
        Just("\"result\":1".to_string()),
        Just("\"error\":{\"code\":1}".to_string()),
    ]
}

fn line() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(member(), 0..6),
        prop::sample::select(vec!["", " ", "\t", "\r\n"]),
        prop::option::of((
            any::<prop::sample::Index>(),
            prop::sample::select(vec!["", "x", "}", ",", "\"", "\\"]),
        )),
    )
        .prop_map(|(members, ws, cut)| {
            let mut l = format!("{{{ws}{}}}", members.join(&format!(",{ws}")));
            // Sometimes broken: cut at some byte and something appended.
            if let Some((at, junk)) = cut {
                let mut i = at.index(l.len() + 1);
                while !l.is_char_boundary(i) {
                    i -= 1;
                }
                l.truncate(i);
                l.push_str(junk);
            }
            l
        })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn generated_lines_give_the_request_classify_gives(l in line()) {
        same_request(&l);
    }

    #[test]
    fn generated_sessions_write_the_same_bytes(
        lines in prop::collection::vec(line(), 1..24),
        edition in prop::sample::select(vec![Edition::Current, Edition::Aug2026, Edition::Legacy]),
        init_first in any::<bool>(),
    ) {
        let mut seq = Vec::new();
        if init_first {
            seq.push(INIT.to_string());
        }
        seq.extend(lines);
        same_output(edition, &seq);
    }
}
