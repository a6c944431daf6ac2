//! The mutants of the runtime's responses: what they answer (server name, message ids, error
//! codes) and whether they answer at all, or twice.

use super::super::frames::{is_response, s, LITERAL_ID};
use super::Rewriter;
use crate::mutants::MutantKind::{self, self as M};
use crate::wire::json;
use serde_json::{json, Value};

impl Rewriter {
    /// Rewrites response `v` in place as `kind` does; returns the lines that replace it when it
    /// is not written once (dropped, sent twice).
    pub(super) fn answers(&mut self, kind: MutantKind, v: &mut Value) -> Option<Vec<String>> {
        let message = v.pointer("/error/message").and_then(Value::as_str);
        match kind {
            M::WrongServerName => {
                if let Some(name) = v.pointer_mut("/result/serverInfo/name") {
                    *name = json!("my-runtime");
                }
            }
            M::UnknownMethod32000
                if message.is_some_and(|m| {
                    m.starts_with("unknown DeepSeek Harness SDK runtime method")
                }) =>
            {
                v["error"]["code"] = json!(-32000);
            }
            // Only the code changes: the message stays upstream's, which the check accepts with
            // -32601 unless --strict-upstream.
            M::UnknownMethod32601
                if message.is_some_and(|m| {
                    m.starts_with("unknown DeepSeek Harness SDK runtime method: ")
                }) =>
            {
                v["error"]["code"] = json!(-32601);
            }
            M::InvalidParams32602
                if message.is_some_and(|m| !m.starts_with(crate::rules::UNKNOWN_METHOD)) =>
            {
                v["error"]["code"] = json!(-32602);
            }
            M::MethodNotFound
                if message.is_some_and(|m| m.starts_with(crate::rules::UNKNOWN_METHOD)) =>
            {
                v["error"] = json!({"code": -32601, "message": "Method not found"});
            }
            M::FloatIdsUnanswered
                if is_response(v)
                    && v.get("id")
                        .and_then(Value::as_f64)
                        .is_some_and(|f| f.fract() != 0.0) =>
            {
                return Some(Vec::new());
            }
            M::SilentAfterInitialize => {
                if self.answered_once {
                    return Some(Vec::new());
                }
                self.answered_once = is_response(v);
            }
            M::NoMessageId => {
                if let Some(Value::Object(r)) = v.get_mut("result") {
                    r.shift_remove("messageId");
                }
            }
            M::MessageIdMismatch => {
                if let Some(m) = v.pointer_mut("/result/messageId") {
                    *m = json!(uuid::Uuid::new_v4().to_string());
                }
            }
            M::StringIds if is_response(v) => {
                if let Some(n) = v.get("id").and_then(Value::as_f64) {
                    v["id"] = json!(json::js_number(n));
                }
            }
            M::LiteralIdsServed if is_response(v) => {
                v["id"].as_str()?.strip_prefix(LITERAL_ID)?;
                v["id"] = Value::Null;
            }
            M::LongMethodClipped => {
                let m = message?
                    .strip_prefix(crate::rules::UNKNOWN_METHOD)?
                    .to_owned();
                if m.chars().count() > 1024 {
                    let clipped: String = m.chars().take(1024).collect();
                    v["error"]["message"] =
                        json!(format!("{}{clipped}…", crate::rules::UNKNOWN_METHOD));
                }
            }
            M::DuplicateResponse if is_response(v) => return Some(vec![s(v), s(v)]),
            _ => {}
        }
        None
    }
}
