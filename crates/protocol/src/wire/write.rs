//! Writing frames as the upstream transport does (docs/CONTRACT.md#s2.4):
//! `JSON.stringify(message) + "\n"`, compact, members in the order `jsonrpc`, `id`,
//! `result`/`error`, or `jsonrpc`, `method`, `params`.

use super::codes::ErrorCode;
use super::frame::Id;
use super::json::{write_int, write_str, write_str_body, write_value};
use serde_json::Value;

/// Appends `{"jsonrpc":"2.0","id":…,"result":…}\n`.
pub fn result(out: &mut Vec<u8>, id: &Id, result: &Value) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write_json(out);
    out.extend_from_slice(b",\"result\":");
    write_value(result, out);
    out.extend_from_slice(b"}\n");
}

/// Appends `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}\n` (never a `data` member).
pub fn error(out: &mut Vec<u8>, id: &Id, code: ErrorCode, message: &str) {
    error_frame(out, id, code, message, None);
}

/// Appends an error response whose message is `parts` joined: the same bytes as [`error`] with
/// `parts.concat()`, without building that `String` (the runtime's per-request errors).
pub fn error_parts(out: &mut Vec<u8>, id: &Id, code: ErrorCode, parts: &[&str]) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write_json(out);
    out.extend_from_slice(b",\"error\":{\"code\":");
    write_int(code.0, out);
    out.extend_from_slice(b",\"message\":\"");
    for p in parts {
        write_str_body(p, out);
    }
    out.extend_from_slice(b"\"}}\n");
}

/// Appends an error response that carries `data` (clients and tests; the runtime never sends it).
pub fn error_with_data(out: &mut Vec<u8>, id: &Id, code: ErrorCode, message: &str, data: &Value) {
    error_frame(out, id, code, message, Some(data));
}

fn error_frame(out: &mut Vec<u8>, id: &Id, code: ErrorCode, message: &str, data: Option<&Value>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write_json(out);
    out.extend_from_slice(b",\"error\":{\"code\":");
    write_int(code.0, out);
    out.extend_from_slice(b",\"message\":");
    write_str(message, out);
    if let Some(d) = data {
        out.extend_from_slice(b",\"data\":");
        write_value(d, out);
    }
    out.extend_from_slice(b"}}\n");
}

/// Appends `{"jsonrpc":"2.0","method":…,"params":…}\n`; `params` is omitted when `None`.
pub fn notification(out: &mut Vec<u8>, method: &str, params: Option<&Value>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    write_str(method, out);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        write_value(p, out);
    }
    out.extend_from_slice(b"}\n");
}

/// Appends `{"jsonrpc":"2.0","id":…,"method":…,"params":…}\n` (an outbound request).
pub fn request(out: &mut Vec<u8>, id: &Id, method: &str, params: Option<&Value>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write_json(out);
    out.extend_from_slice(b",\"method\":");
    write_str(method, out);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        write_value(p, out);
    }
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn s(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut v = Vec::new();
        f(&mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn frames_are_compact_with_upstream_member_order() {
        let init = json!({"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}});
        assert_eq!(
            s(|o| result(o, &Id::from("init-1"), &init)),
            "{\"jsonrpc\":\"2.0\",\"id\":\"init-1\",\"result\":{\"serverInfo\":{\"name\":\"deepseek-harness-sdk-runtime\",\"version\":\"0.0.1\"}}}\n"
        );
        assert_eq!(
            s(|o| error(o, &Id::Num(f64::INFINITY), ErrorCode::INTERNAL_ERROR, "unknown DeepSeek Harness SDK runtime method: x")),
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"unknown DeepSeek Harness SDK runtime method: x\"}}\n"
        );
        assert_eq!(
            s(|o| notification(o, "heartbeat", None)),
            "{\"jsonrpc\":\"2.0\",\"method\":\"heartbeat\"}\n"
        );
        assert_eq!(
            s(|o| notification(o, "session.status", Some(&json!({"sessionId":"s","status":"idle"})))),
            "{\"jsonrpc\":\"2.0\",\"method\":\"session.status\",\"params\":{\"sessionId\":\"s\",\"status\":\"idle\"}}\n"
        );
    }

    #[test]
    fn an_error_message_in_parts_is_the_error_of_the_joined_message() {
        for parts in [
            &["unknown method: ", "probe/x"][..],
            &["a\"b", "\\", "\n\u{1}é", ""],
            &[],
        ] {
            let id = Id::Num(-0.0);
            assert_eq!(
                s(|o| error_parts(o, &id, ErrorCode::INTERNAL_ERROR, parts)),
                s(|o| error(o, &id, ErrorCode::INTERNAL_ERROR, &parts.concat()))
            );
        }
    }

    #[test]
    fn non_ascii_is_written_raw() {
        assert_eq!(
            s(|o| result(o, &Id::from("u\u{e9}"), &json!({}))),
            "{\"jsonrpc\":\"2.0\",\"id\":\"ué\",\"result\":{}}\n"
        );
    }
}
