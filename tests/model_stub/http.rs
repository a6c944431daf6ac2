//! The stub as an HTTP server, spoken to with raw sockets.

use dsh_conformance::model_stub::{Config, ModelStub};
use serde_json::{json, Value};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

/// Only a guard against hangs, never an assertion about speed.
const GUARD: Duration = Duration::from_secs(30);

fn connect(stub: &ModelStub) -> TcpStream {
    let s = TcpStream::connect(stub.addr()).expect("connect to the stub");
    s.set_read_timeout(Some(GUARD)).unwrap();
    s
}

fn messages_body(prompt: &str) -> String {
    json!({"model": "deepseek-v4-flash", "stream": true, "max_tokens": 10,
           "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
           "tools": [{"name": "bash"}]})
    .to_string()
}

fn post(stub: &ModelStub, body: &str, extra_headers: &str) -> String {
    format!(
        "POST /v1/messages HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\nx-api-key: {}\r\n{extra_headers}content-length: {}\r\n\r\n{body}",
        stub.addr(),
        stub.api_key(),
        body.len()
    )
}

/// One response: (status, lower-case headers, body), read by its content-length.
fn read_response(s: &mut TcpStream) -> (u16, Vec<(String, String)>, String) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut byte).expect("read a response");
        assert_eq!(
            n,
            1,
            "connection closed mid-head: {:?}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .expect("content-length")
        .1
        .parse()
        .unwrap();
    let mut body = vec![0; len];
    s.read_exact(&mut body).unwrap();
    (status, headers, String::from_utf8(body).unwrap())
}

/// The concatenated `text_delta`s of an SSE body.
fn streamed_text(sse: &str) -> String {
    sse.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter_map(|v| v["delta"]["text"].as_str().map(str::to_owned))
        .collect()
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn error_message(body: &str) -> String {
    let v: Value = serde_json::from_str(body).expect("a JSON error body");
    assert_eq!(v["type"], "error");
    v["error"]["message"].as_str().unwrap().to_owned()
}

/// The server closed the connection (EOF or reset).
fn assert_closed(s: &mut TcpStream) {
    let mut buf = [0u8; 16];
    match s.read(&mut buf) {
        Ok(0) => {}
        Ok(n) => panic!(
            "expected a closed connection, got {:?}",
            String::from_utf8_lossy(&buf[..n])
        ),
        Err(e) => assert!(
            matches!(
                e.kind(),
                ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
            ),
            "{e}"
        ),
    }
}

#[test]
fn env_points_runtimes_at_the_stub() {
    let stub = ModelStub::start().unwrap();
    let env = stub.env();
    assert_eq!(
        env[0],
        (
            "DEEPSEEK_BASE_URL".to_owned(),
            format!("http://127.0.0.1:{}", stub.addr().port())
        )
    );
    assert_eq!(
        env[1],
        ("DEEPSEEK_API_KEY".to_owned(), stub.api_key().to_owned())
    );
    assert!(stub.addr().ip().is_loopback());
    let full = stub.runtime_env("/h".as_ref());
    assert!(full.contains(&("DSH_HOME".to_owned(), "/h".to_owned())));
}

#[test]
fn two_requests_share_one_keep_alive_connection() {
    let stub = ModelStub::start().unwrap();
    let mut s = connect(&stub);
    for text in ["reply: one", "reply: two"] {
        s.write_all(post(&stub, &messages_body(text), "").as_bytes())
            .unwrap();
        let (status, headers, body) = read_response(&mut s);
        assert_eq!(status, 200);
        assert_eq!(header(&headers, "content-type"), Some("text/event-stream"));
        assert_eq!(header(&headers, "connection"), Some("keep-alive"));
        assert_eq!(streamed_text(&body), &text[7..]);
        assert!(body.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
    }
    let log = stub.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].connection, log[1].connection);
    assert_eq!(log[1].directive.as_deref(), Some("reply"));
    assert_eq!(log[1].status, Some(200));
    assert_eq!(log[1].header("content-type"), Some("application/json"));
}

#[test]
fn a_lone_surrogate_in_the_prompt_comes_back_as_its_escape() {
    let stub = ModelStub::start().unwrap();
    let mut s = connect(&stub);
    // The body as JSON.stringify writes it: the lone surrogate as an escape.
    let body = messages_body("reply: x@y").replace('@', "\\ud800");
    s.write_all(post(&stub, &body, "").as_bytes()).unwrap();
    let (status, _, sse) = read_response(&mut s);
    assert_eq!(status, 200);
    // Split by code points (x | \ud800y), each delta written as JSON.stringify would.
    let deltas: Vec<&str> = sse.lines().filter(|l| l.contains("text_delta")).collect();
    assert_eq!(deltas.len(), 2, "{sse}");
    assert!(deltas[0].ends_with(r#""text":"x"}}"#), "{sse}");
    assert!(deltas[1].ends_with(r#""text":"\ud800y"}}"#), "{sse}");
}

#[test]
fn connection_close_is_honoured() {
    let stub = ModelStub::start().unwrap();
    let mut s = connect(&stub);
    s.write_all(post(&stub, &messages_body("reply: x"), "connection: close\r\n").as_bytes())
        .unwrap();
    let (status, headers, _) = read_response(&mut s);
    assert_eq!(
        (status, header(&headers, "connection")),
        (200, Some("close"))
    );
    assert_closed(&mut s);
}

#[test]
fn a_chunked_request_body_is_read() {
    let stub = ModelStub::start().unwrap();
    let body = messages_body("reply: chunked");
    let (a, b) = body.split_at(10);
    let req = format!(
        "POST /v1/messages HTTP/1.1\r\nx-api-key: {}\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x};ext=1\r\n{b}\r\n0\r\n\r\n",
        stub.api_key(),
        a.len(),
        b.len()
    );
    let mut s = connect(&stub);
    s.write_all(req.as_bytes()).unwrap();
    let (status, _, body) = read_response(&mut s);
    assert_eq!(status, 200);
    assert_eq!(streamed_text(&body), "chunked");
}

/// Sends `raw` and returns (status, error message, log refusal) of the stub's answer.
fn refused(stub: &ModelStub, raw: &str) -> (u16, String, String) {
    let mut s = connect(stub);
    s.write_all(raw.as_bytes()).unwrap();
    let (status, _, body) = read_response(&mut s);
    let refusal = stub
        .requests()
        .last()
        .and_then(|r| r.refusal.clone())
        .expect("a logged refusal");
    (status, error_message(&body), refusal)
}

#[test]
fn unexpected_requests_get_a_clear_http_error_and_a_log_entry() {
    let stub = ModelStub::start().unwrap();
    let key = stub.api_key().to_owned();
    let cases: Vec<(String, u16, &str)> = vec![
        (
            format!("GET /v1/models HTTP/1.1\r\nx-api-key: {key}\r\n\r\n"),
            404,
            "only POST /v1/messages",
        ),
        (
            format!("GET /v1/messages HTTP/1.1\r\nx-api-key: {key}\r\n\r\n"),
            405,
            "only POST",
        ),
        (
            "POST /v1/messages HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}".to_string(),
            401,
            "no x-api-key",
        ),
        (
            "POST /v1/messages HTTP/1.1\r\nx-api-key: wrong\r\ncontent-length: 2\r\n\r\n{}"
                .to_string(),
            401,
            "does not match",
        ),
        (
            format!(
                "POST /v1/messages HTTP/1.1\r\nx-api-key: {key}\r\ncontent-length: 4\r\n\r\n{{not"
            ),
            400,
            "not JSON",
        ),
        (
            format!(
                "POST /v1/messages HTTP/1.1\r\nx-api-key: {key}\r\ncontent-length: 2\r\n\r\n{{}}"
            ),
            400,
            "no `messages`",
        ),
        (
            post(
                &stub,
                &messages_body("x").replace("\"stream\":true", "\"stream\":false"),
                "",
            ),
            400,
            "stream",
        ),
        (
            "BREW /pot\r\n\r\n".to_owned(),
            400,
            "malformed request line",
        ),
        (
            "POST /v1/messages HTTP/1.1\r\nno colon here\r\n\r\n".to_string(),
            400,
            "malformed header line",
        ),
    ];
    for (raw, status, why) in cases {
        let (got, message, refusal) = refused(&stub, &raw);
        assert_eq!(got, status, "{raw:?} → {message}");
        assert!(
            message.starts_with("model-stub: ") && message.contains(why),
            "{raw:?} → {message}"
        );
        assert!(refusal.contains(why), "{refusal}");
    }
}

#[test]
fn oversized_requests_are_refused_before_the_body_is_read() {
    let mut config = Config::default();
    config.limits.max_body = 100;
    config.limits.max_line = 64;
    let stub = ModelStub::start_with(config).unwrap();
    let (status, message, _) = refused(
        &stub,
        &format!(
            "POST /v1/messages HTTP/1.1\r\nx-api-key: {}\r\ncontent-length: 101\r\n\r\n",
            stub.api_key()
        ),
    );
    assert_eq!(status, 413, "{message}");
    let (status, message, _) = refused(
        &stub,
        &format!(
            "POST /v1/messages HTTP/1.1\r\nx-long: {}\r\n\r\n",
            "a".repeat(100)
        ),
    );
    assert_eq!(status, 431, "{message}");
}

#[test]
fn a_stalled_request_is_dropped_after_the_read_timeout() {
    let config = Config {
        read_timeout: Duration::from_millis(200),
        ..Config::default()
    };
    let stub = ModelStub::start_with(config).unwrap();
    let mut s = connect(&stub);
    s.write_all(b"POST /v1/messages HTTP/1.1\r\ncontent-length: 10\r\n\r\n{")
        .unwrap();
    assert_closed(&mut s);
    assert!(stub.requests().is_empty(), "{}", stub.log_text());
}

#[test]
fn a_slow_reply_arrives_after_its_delay() {
    let stub = ModelStub::start().unwrap();
    let mut s = connect(&stub);
    let started = std::time::Instant::now();
    s.write_all(post(&stub, &messages_body("slow:0.3 reply: late"), "").as_bytes())
        .unwrap();
    let (status, _, body) = read_response(&mut s);
    assert_eq!(status, 200);
    assert!(
        body.contains("\"text\":\"la\"") && body.contains("\"text\":\"te\""),
        "{body}"
    );
    // A lower bound only: the stub must not answer early.
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        stub.requests()[0].directive.as_deref(),
        Some("slow:0.3+reply")
    );
}

#[test]
fn dropping_the_stub_ends_hanging_requests_and_closes_the_listener() {
    let stub = ModelStub::start().unwrap();
    let addr = stub.addr();
    let mut s = connect(&stub);
    s.write_all(post(&stub, &messages_body("hang"), "").as_bytes())
        .unwrap();
    assert!(stub.wait_for_requests(1, GUARD));
    assert_eq!(stub.requests()[0].status, None);
    let mut idle = connect(&stub);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        drop(stub);
        let _ = tx.send(());
    });
    rx.recv_timeout(GUARD)
        .expect("dropping the stub returned (threads joined)");
    assert_closed(&mut s);
    assert_closed(&mut idle);
    let err = TcpStream::connect(addr).expect_err("the listener is closed");
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
}

#[test]
fn a_client_leaving_a_hanging_request_frees_its_connection() {
    let stub = ModelStub::start().unwrap();
    let mut s = connect(&stub);
    s.write_all(post(&stub, &messages_body("hang"), "").as_bytes())
        .unwrap();
    assert!(stub.wait_for_requests(1, GUARD));
    // Another connection is served meanwhile.
    let mut other = connect(&stub);
    other
        .write_all(
            post(
                &stub,
                &messages_body("reply: next"),
                "connection: close\r\n",
            )
            .as_bytes(),
        )
        .unwrap();
    assert_eq!(read_response(&mut other).0, 200);
    drop(other);
    drop(s);
    let deadline = std::time::Instant::now() + GUARD;
    while stub.open_connections() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "connections still open: {}",
            stub.open_connections()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn expect_100_continue_is_answered_before_the_body_is_read() {
    let stub = ModelStub::start().unwrap();
    let body = messages_body("reply: after continue");
    let mut s = connect(&stub);
    let head = post(&stub, "", "expect: 100-continue\r\n").replace(
        "content-length: 0",
        &format!("content-length: {}", body.len()),
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut interim = [0u8; 25];
    s.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(body.as_bytes()).unwrap();
    let (status, _, sse) = read_response(&mut s);
    assert_eq!(
        (status, streamed_text(&sse)),
        (200, "after continue".to_owned())
    );
}

#[test]
fn connections_beyond_the_limit_are_refused_with_503() {
    let config = Config {
        max_connections: 1,
        ..Config::default()
    };
    let stub = ModelStub::start_with(config).unwrap();
    let mut first = connect(&stub);
    first
        .write_all(post(&stub, &messages_body("reply: a"), "").as_bytes())
        .unwrap();
    assert_eq!(read_response(&mut first).0, 200);
    let mut second = connect(&stub);
    let (status, _, body) = read_response(&mut second);
    assert_eq!(status, 503);
    assert!(
        error_message(&body).contains("more than 1 connections"),
        "{body}"
    );
    assert_closed(&mut second);
    drop(first);
}
