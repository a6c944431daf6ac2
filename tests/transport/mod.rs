//! The transport, case by case against upstream `transport.spec.ts` (docs/CONTRACT.md#s12.1).

use dsh_conformance::transport::{
    AbortReason, AbortSignal, HandlerError, RequestError, Transport, TransportError,
};
use dsh_conformance::wire::ErrorObject;
use serde_json::{json, Map, Value};
use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const NOW: Duration = Duration::from_millis(0);
const SOON: Duration = Duration::from_secs(5);

/// An in-memory output both sides can read.
#[derive(Clone, Default)]
struct Pipe(Arc<Mutex<Vec<u8>>>);

impl Pipe {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl Write for Pipe {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// An output that fails every write or flush with a message.
struct Broken(&'static str);

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::other(self.0))
    }
    fn flush(&mut self) -> io::Result<()> {
        Err(io::Error::other(self.0))
    }
}

fn pair() -> (Transport, Pipe, Transport, Pipe) {
    let (a_out, b_out) = (Pipe::default(), Pipe::default());
    (
        Transport::new(a_out.clone()),
        a_out,
        Transport::new(b_out.clone()),
        b_out,
    )
}

/// Moves bytes both ways until both sides are quiet.
fn pump(a: &Transport, a_out: &Pipe, b: &Transport, b_out: &Pipe) {
    loop {
        let (x, y) = (a_out.take(), b_out.take());
        if x.is_empty() && y.is_empty() {
            return;
        }
        b.receive(&x);
        a.receive(&y);
    }
}

fn echo_handler() -> dsh_conformance::transport::RequestHandler {
    Box::new(|method: &str, params: &Map<String, Value>| {
        Ok(json!({"method": method, "params": params}))
    })
}

#[test]
fn requests_responses_and_notifications_flow_both_ways_and_a_bare_notify_arrives_as_empty_params() {
    let (a, a_out, b, b_out) = pair();
    b.set_request_handler(echo_handler());
    a.set_request_handler(echo_handler());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    b.set_notification_handler(Box::new(move |m: &str, p: &Map<String, Value>| {
        s.lock()
            .unwrap()
            .push((m.to_owned(), Value::Object(p.clone())))
    }));
    let from_a = a.request("ping", Some(&json!({"n": 1}))).unwrap();
    let from_b = b.request("pong", None).unwrap();
    a.notify("heartbeat", None).unwrap();
    assert!(
        a_out
            .text()
            .contains(r#"{"jsonrpc":"2.0","method":"heartbeat"}"#),
        "no params member: {}",
        a_out.text()
    );
    pump(&a, &a_out, &b, &b_out);
    assert_eq!(
        from_a.wait(NOW),
        Ok(Some(json!({"method":"ping","params":{"n":1}})))
    );
    assert_eq!(
        from_b.wait(NOW),
        Ok(Some(json!({"method":"pong","params":{}})))
    );
    assert_eq!(
        *seen.lock().unwrap(),
        vec![("heartbeat".to_owned(), json!({}))]
    );
}

#[test]
fn request_ids_are_req_and_32_hex_digits() {
    let t = Transport::new(Pipe::default());
    let p = t.request("x", None).unwrap();
    let id = p.id().to_json();
    let hex = id
        .trim_matches('"')
        .strip_prefix("req_")
        .expect("req_ prefix");
    assert_eq!(hex.len(), 32);
    assert!(hex
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    assert_ne!(t.request("x", None).unwrap().id(), p.id());
}

#[test]
fn a_failing_handler_gives_internal_error_with_its_message_and_no_data() {
    let (a, a_out, b, b_out) = pair();
    b.set_request_handler(Box::new(|_: &str, _: &Map<String, Value>| {
        Err(HandlerError::from("handler boom"))
    }));
    let p = a.request("x", None).unwrap();
    pump(&a, &a_out, &b, &b_out);
    assert_eq!(
        p.wait(NOW),
        Err(RequestError::Response(ErrorObject {
            code: Some(-32603.0),
            message: "handler boom".into(),
            data: None
        }))
    );
}

#[test]
fn a_non_error_failure_is_stringified_into_the_message() {
    let (a, a_out, b, b_out) = pair();
    b.set_request_handler(Box::new(|_: &str, _: &Map<String, Value>| {
        Err(String::from("string boom").into())
    }));
    let p = a.request("x", None).unwrap();
    pump(&a, &a_out, &b, &b_out);
    match p.wait(NOW) {
        Err(RequestError::Response(e)) => assert_eq!(
            (e.code, e.message.as_str()),
            (Some(-32603.0), "string boom")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_pre_aborted_signal_rejects_at_once_and_registers_nothing() {
    let out = Pipe::default();
    let t = Transport::new(out.clone());
    let s = AbortSignal::new();
    s.abort(AbortReason::Error("stop now".into()));
    assert_eq!(
        t.request_with_signal("x", None, Some(&s)).err(),
        Some(RequestError::Aborted("stop now".into()))
    );
    assert_eq!(t.pending_count(), 0);
    assert!(out.text().is_empty(), "nothing is sent");
}

#[test]
fn aborting_a_pending_request_removes_it_and_wraps_a_plain_reason() {
    let t = Transport::new(Pipe::default());
    let s = AbortSignal::new();
    let p = t.request_with_signal("x", None, Some(&s)).unwrap();
    assert_eq!(t.pending_count(), 1);
    s.abort(AbortReason::Plain("plain-string-reason".into()));
    assert_eq!(t.pending_count(), 0);
    assert_eq!(
        p.wait(NOW),
        Err(RequestError::Aborted(
            "JSON-RPC request aborted: plain-string-reason".into()
        ))
    );
}

#[test]
fn an_error_response_keeps_code_message_and_data_verbatim() {
    let t = Transport::new(Pipe::default());
    let p = t.request("x", None).unwrap();
    let id = p.id().to_json();
    t.receive(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":7,"message":"structured","data":{{"detail":"x"}}}}}}"#).as_bytes());
    t.receive(b"\n");
    assert_eq!(
        p.wait(NOW),
        Err(RequestError::Response(ErrorObject {
            code: Some(7.0),
            message: "structured".into(),
            data: Some(json!({"detail":"x"}).into())
        }))
    );
}

#[test]
fn an_empty_error_object_rejects_with_the_fallback_message() {
    let t = Transport::new(Pipe::default());
    let p = t.request("x", None).unwrap();
    t.receive(format!("{{\"id\":{},\"error\":{{}}}}\n", p.id()).as_bytes());
    assert_eq!(
        p.wait(NOW),
        Err(RequestError::Response(ErrorObject {
            code: None,
            message: "JSON-RPC error".into(),
            data: None
        }))
    );
}

#[test]
fn without_a_request_handler_requests_get_method_not_found() {
    let out = Pipe::default();
    let t = Transport::new(out.clone());
    t.receive(b"{\"jsonrpc\":\"2.0\",\"id\":\"m1\",\"method\":\"missing\"}\n");
    assert_eq!(
        out.text(),
        "{\"jsonrpc\":\"2.0\",\"id\":\"m1\",\"error\":{\"code\":-32601,\"message\":\"method not found: missing\"}}\n"
    );
}

#[test]
fn notifications_without_a_handler_are_ignored_and_array_params_become_an_empty_object() {
    let out = Pipe::default();
    let t = Transport::new(out.clone());
    t.receive(b"{\"jsonrpc\":\"2.0\",\"method\":\"nobody\",\"params\":{\"a\":1}}\n");
    assert_eq!(out.text(), "");
    t.set_request_handler(Box::new(|_: &str, p: &Map<String, Value>| {
        Ok(json!({"got": p}))
    }));
    t.receive(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"m\",\"params\":[]}\n");
    assert_eq!(
        out.text(),
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"got\":{}}}\n"
    );
}

#[test]
fn junk_lines_are_ignored_and_a_method_only_frame_without_params_is_a_notification() {
    let out = Pipe::default();
    let t = Transport::new(out.clone());
    t.set_request_handler(echo_handler());
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    t.set_notification_handler(Box::new(move |m: &str, p: &Map<String, Value>| {
        g.lock().unwrap().push((m.to_owned(), p.len()))
    }));
    // String-sized chunks and odd splits both work.
    for chunk in [
        "not json\n",
        "\n",
        "null\n",
        "{\"jsonrpc\":\"2.0\",\"params\":{}}\n",
        "{\"jsonrpc\":\"2.0\",\"met",
        "hod\":\"tick\"}\n",
    ] {
        t.receive(chunk.as_bytes());
    }
    assert_eq!(out.text(), "");
    assert_eq!(*got.lock().unwrap(), vec![("tick".to_owned(), 0)]);
}

#[test]
fn a_multibyte_character_split_across_chunks_is_preserved() {
    let (a, a_out, b, b_out) = pair();
    b.set_request_handler(echo_handler());
    let p = a.request("say", Some(&json!({"text": "你好"}))).unwrap();
    let bytes = a_out.take();
    let cut = bytes.iter().position(|&c| c >= 0x80).unwrap() + 1;
    b.receive(&bytes[..cut]);
    b.receive(&bytes[cut..]);
    pump(&a, &a_out, &b, &b_out);
    assert_eq!(
        p.wait(NOW),
        Ok(Some(json!({"method":"say","params":{"text":"你好"}})))
    );
}

/// Records the order of writes and flushes.
#[derive(Clone, Default)]
struct Journal(Arc<Mutex<Vec<String>>>);

impl Write for Journal {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap()
            .push(format!("write {}", String::from_utf8_lossy(b).trim_end()));
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.lock().unwrap().push("flush".into());
        Ok(())
    }
}

#[test]
fn flush_is_a_barrier_after_every_earlier_write() {
    let j = Journal::default();
    let t = Transport::new(j.clone());
    t.notify("one", None).unwrap();
    t.notify("two", None).unwrap();
    t.flush().unwrap();
    let log = j.0.lock().unwrap().clone();
    assert_eq!(log.len(), 3);
    assert_eq!(log[2], "flush");
    assert!(log[0].contains("\"one\"") && log[1].contains("\"two\""));
}

#[test]
fn flush_fails_when_the_output_fails() {
    let t = Transport::new(Broken("flush exploded"));
    assert_eq!(
        t.flush(),
        Err(TransportError::Write("flush exploded".into()))
    );
}

#[test]
fn input_end_rejects_pending_requests_with_input_closed() {
    let t = Transport::new(Pipe::default());
    let p = t.request("x", None).unwrap();
    t.receive(b"{\"id\":\"partial");
    t.receive_end();
    assert_eq!(p.wait(NOW), Err(RequestError::InputClosed));
    assert_eq!(
        RequestError::InputClosed.to_string(),
        "JSON-RPC input closed"
    );
    assert_eq!(t.pending_count(), 0);
}

#[test]
fn an_input_error_rejects_pending_requests_with_that_error() {
    let t = Transport::new(Pipe::default());
    let p = t.request("x", None).unwrap();
    t.receive_error("stream broke");
    assert_eq!(p.wait(NOW), Err(RequestError::Input("stream broke".into())));
}

#[test]
fn close_rejects_pending_requests_keeps_the_stream_and_refuses_later_writes() {
    let out = Pipe::default();
    let t = Transport::new(out.clone());
    t.close(); // before anything was sent: harmless
    let t = Transport::new(out.clone());
    let p = t.request("x", None).unwrap();
    t.close();
    assert_eq!(p.wait(NOW), Err(RequestError::Closed));
    assert_eq!(
        RequestError::Closed.to_string(),
        "JSON-RPC transport closed"
    );
    let before = out.text();
    assert_eq!(t.notify("late", None), Err(TransportError::Closed));
    assert!(matches!(t.request("late", None), Err(RequestError::Closed)));
    t.receive(b"{\"id\":1,\"method\":\"late\"}\n");
    assert_eq!(out.text(), before, "nothing is written after close");
    // The stream itself was not closed: its owner can still use it.
    let mut raw = out.clone();
    raw.write_all(b"x").unwrap();
}

#[test]
fn a_write_failure_rejects_the_request_and_leaves_nothing_pending() {
    let t = Transport::new(Broken("write exploded"));
    assert_eq!(
        t.request("x", None).err(),
        Some(RequestError::Write("write exploded".into()))
    );
    assert_eq!(t.pending_count(), 0);
    let t = Transport::new(Broken("write string"));
    assert_eq!(
        t.notify("x", None),
        Err(TransportError::Write("write string".into()))
    );
}

#[test]
fn a_response_with_an_unknown_id_is_ignored_and_the_right_one_still_settles() {
    let out = Pipe::default();
    let t = Transport::new(out.clone());
    let p = t.request("x", None).unwrap();
    t.receive(b"{\"jsonrpc\":\"2.0\",\"id\":\"req_nobody\",\"result\":1}\n");
    assert_eq!(p.try_result(), None);
    // The same digits as a number are a different id.
    t.receive(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":1}\n");
    t.receive(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"ok\":true}}}}\n",
            p.id()
        )
        .as_bytes(),
    );
    assert_eq!(p.wait(SOON), Ok(Some(json!({"ok": true}))));
    assert_eq!(
        out.text().lines().count(),
        1,
        "only the request was written"
    );
}

#[test]
fn a_response_without_result_resolves_to_undefined() {
    let t = Transport::new(Pipe::default());
    let p = t.request("x", None).unwrap();
    t.receive(format!("{{\"id\":{},\"error\":null}}\n", p.id()).as_bytes());
    assert_eq!(p.wait(NOW), Ok(None));
}

#[test]
fn a_request_handler_may_use_the_transport_while_answering() {
    let out = Pipe::default();
    let t = Transport::new(out.clone());
    let t2 = t.clone();
    t.set_request_handler(Box::new(move |m: &str, _: &Map<String, Value>| {
        t2.notify("progress", Some(&json!({"for": m})))
            .map_err(|e| HandlerError::from(e.to_string()))?;
        Ok(json!({}))
    }));
    t.receive(b"{\"id\":1,\"method\":\"work\"}\n");
    let text = out.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("progress") && lines[1].contains("\"result\":{}"));
}
