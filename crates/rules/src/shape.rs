//! Shapes of error members and of each method's result (docs/CONTRACT.md#s2.3, #s3).

use super::sink::Sink;
use super::{CheckId, Profile};
use dsh_protocol::wire::json::{JsonKind, JsonView};

/// The check a method's result shape belongs to.
pub(super) fn rule_of(method: &str) -> CheckId {
    match method {
        "initialize" => CheckId::InitializeServerInfo,
        "session/prompt" => CheckId::PromptMessageId,
        "shutdown" => CheckId::LifecycleShutdownResponds,
        "session/resume" => CheckId::ResumeValidation,
        "session/wait" => CheckId::WaitSettlesAfterIdle,
        "session/working-directory/get" | "session/working-directory/set" => {
            CheckId::WorkingDirectoryGetSet
        }
        _ => CheckId::ErrorUnknownMethod,
    }
}

/// An error member's code and message (0 and "" where missing), reporting members other than
/// exactly `code` and `message`, and (when `member_order`, as `stdout.compact`) another order.
pub(super) fn error_member<'a>(
    e: impl JsonView<'a>,
    member_order: bool,
    sink: &mut Sink,
) -> (i64, String) {
    if e.kind() != JsonKind::Object {
        sink.add(CheckId::StdoutFramesOnly, "error is not an object");
        return (0, String::new());
    }
    let keys: Vec<&str> = e.members().map(|(k, _)| k).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    if sorted != ["code", "message"] {
        sink.add(
            CheckId::ErrorNoReservedCodes,
            format!("error members are {keys:?}, not [code, message]"),
        );
    } else if member_order && keys != sorted {
        sink.add(
            CheckId::StdoutCompact,
            format!(
                "error members are in the order {keys:?}, upstream writes [\"code\", \"message\"]"
            ),
        );
    }
    let code = e.get("code").and_then(JsonView::as_i64);
    if code.is_none() {
        sink.add(CheckId::StdoutFramesOnly, "error code is not an integer");
    }
    let message = e.get("message").and_then(JsonView::as_str);
    if message.is_none() {
        sink.add(CheckId::StdoutFramesOnly, "error message is not a string");
    }
    (code.unwrap_or(0), message.unwrap_or("").to_owned())
}

/// `v` when it is an object.
pub(super) fn object<'a, V: JsonView<'a>>(v: Option<V>) -> Option<V> {
    v.filter(|v| v.kind() == JsonKind::Object)
}

/// Whether a result `frame` is an acceptable answer to a `method` request; if not, the rule it
/// breaks and how.
pub(super) fn result_fits<'a>(
    profile: &Profile,
    method: &str,
    frame: impl JsonView<'a>,
) -> Result<(), (CheckId, String)> {
    let rule = rule_of(method);
    let fail = |m: String| Err((rule, m));
    if !profile.methods.iter().any(|m| m == method) {
        return fail(format!("unknown method {method:?} answered with a result"));
    }
    let Some(r) = object(frame.get("result")) else {
        return fail(format!("{method} result is not an object"));
    };
    match method {
        "initialize" => {
            let info = object(r.get("serverInfo"));
            let ok = info.is_some_and(|i| {
                i.get("name").and_then(JsonView::as_str) == Some("deepseek-harness-sdk-runtime")
                    && i.get("version")
                        .is_some_and(|v| v.kind() == JsonKind::String)
            });
            if !ok {
                return fail("initialize result lacks serverInfo {name, version}".into());
            }
        }
        "session/prompt"
            if profile.legacy_prompt
                && (r.len() != 1
                    || r.get("accepted").and_then(JsonView::as_bool) != Some(true)) =>
        {
            return Err((
                CheckId::LegacySessionFinished,
                "legacy prompt result is not {accepted: true}".into(),
            ));
        }
        "session/prompt" if profile.legacy_prompt => {}
        // Whether its receipt came first is judged by the checker, once the receipt comes.
        "session/prompt" if r.get("messageId").and_then(JsonView::as_str).is_none() => {
            return fail("prompt result lacks a string messageId".into());
        }
        "shutdown" | "session/resume" | "session/wait" if !r.is_empty() => {
            return fail(format!("{method} result is not {{}}"));
        }
        "session/working-directory/get" | "session/working-directory/set" => {
            let cwd = r.get("cwd").and_then(JsonView::as_str);
            if r.len() != 1 || !cwd.is_some_and(|c| c.starts_with('/')) {
                return fail(format!("{method} result is not {{cwd: <absolute path>}}"));
            }
        }
        _ => {}
    }
    Ok(())
}
