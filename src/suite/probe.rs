//! What the suite asks of a runtime before its checks: whether its model follows the model
//! stub's directives ([`probe_model`]), and which edition its method surface looks like
//! ([`probe_surface`]).

use super::options::{runner_opts, Options, StubLog, StubRequest};
use crate::runner::{self, CommandSpec, Outcome};
use crate::trace::FailureKind;
use crate::wire::json::{self, JsonView};
use crate::wire::output::{Frame, Output};

/// Whether the runtime's model follows the stub's directives (`reply: X` answers X).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelCapability {
    /// It does.
    Follows,
    /// It does not, or could not be told: why.
    Ignores(String),
}

/// The model probe: one prompt `reply: dsh-model-probe-ok`, awaiting the session's first
/// assistant/message.
pub const MODEL_PROBE: &str = r#"# case: model-probe
ignore {"method":"session.event"}
ignore {"method":"session.status"}
ignore {"method":"session.finished"}
ignore {"id":"p"}
>> {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
<< {"jsonrpc":"2.0","id":"init"} within 30s
>> {"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"model-probe","contentBlocks":[{"type":"text","text":"reply: dsh-model-probe-ok"}]}}
<<? {"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"model-probe","event":{"type":"assistant/message"}}}
<< {"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"model-probe","event":{"type":"turn/end"}}} within 30s
"#;

/// Runs [`MODEL_PROBE`]. The model ignores the directives when an assistant/message arrived
/// without the text asked for. When none arrived, and the runtime talks to the model stub
/// ([`Options::model_stub`]), the stub's log says whether the runtime's model can be reached at
/// all: no request at all, or every request refused for its path or method (an API the stub
/// does not speak), and it cannot ([`stub_unreachable`]). Otherwise the capability is not in
/// doubt, the event stream is, and the checks themselves say so.
pub fn probe_model(cmd: &CommandSpec, opts: &Options) -> ModelCapability {
    let trace = match crate::trace::Trace::parse(MODEL_PROBE, "model-probe") {
        Ok(mut t) => {
            t.frames_only = false;
            t
        }
        Err(e) => return ModelCapability::Ignores(format!("the model probe is invalid: {e}")),
    };
    let tag = StubLog::new_tag("model-probe-");
    let mut ro = runner_opts(opts);
    StubLog::tag_env(&mut ro.env, &tag);
    // As the methods probe: no check, so a flood here does not stop the run; the checks find it.
    ro.flood_halts_run = false;
    let r = runner::replay(&trace, cmd, &ro);
    let flooded = matches!(&r.outcome, Outcome::Fail(f) if f.kind == FailureKind::Flooded);
    if flooded || matches!(r.outcome, Outcome::Halted(_)) {
        return ModelCapability::Follows;
    }
    // The texts of the session's first assistant/message (data.message.content[] text blocks).
    let texts = r.transcript.stdout.iter().find_map(|l| {
        let v = l.json()?.to_value();
        let ev = v.pointer("/params/event")?;
        if v.pointer("/params/sessionId")?.as_str()? != "model-probe"
            || ev.get("type")?.as_str()? != "assistant/message"
        {
            return None;
        }
        let blocks = ev.pointer("/data/message/content")?.as_array()?;
        Some(
            blocks
                .iter()
                .filter_map(|b| b.get("text")?.as_str().map(str::to_owned))
                .collect::<Vec<_>>()
                .join(""),
        )
    });
    match texts {
        Some(t) if t == "dsh-model-probe-ok" => ModelCapability::Follows,
        Some(t) => ModelCapability::Ignores(format!(
            "its model does not follow the stub's directives: `reply: dsh-model-probe-ok` was answered {:?}; use --model-stub for a runtime that calls a model",
            crate::trace::explain::clip(&t, 120)
        )),
        // The stub's requests of the probe's own process (its key's tag).
        None => match opts.model_stub.as_ref().and_then(|l| stub_unreachable(&l.tagged(&tag))) {
            Some(why) => ModelCapability::Ignores(why),
            None => ModelCapability::Follows,
        },
    }
}

/// Why the model stub cannot drive the runtime's model, from its request log: no request
/// reached it, or it refused every one for its path or method (404, 405: the runtime speaks
/// another API). `None` when some request was served (or refused for another reason).
pub fn stub_unreachable(log: &[StubRequest]) -> Option<String> {
    const SPEAKS: &str = "it speaks Anthropic Messages (POST /v1/messages) and OpenAI chat-completions (POST /v1/chat/completions or /chat/completions)";
    if log.is_empty() {
        return Some(format!(
            "no request reached the model stub while a prompt ran: the runtime's model is not the stub (it reads DEEPSEEK_BASE_URL and DEEPSEEK_API_KEY, or OPENAI_BASE_URL and OPENAI_API_KEY; {SPEAKS})"
        ));
    }
    if !log.iter().all(|r| matches!(r.status, Some(404 | 405))) {
        return None;
    }
    let mut statuses: Vec<u16> = log.iter().filter_map(|r| r.status).collect();
    statuses.sort_unstable();
    statuses.dedup();
    let mut targets: Vec<String> = Vec::new();
    for r in log {
        let t = format!("{} {}", r.method, r.path);
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    let statuses: Vec<String> = statuses.iter().map(u16::to_string).collect();
    Some(format!(
        "the model stub received {} request(s), all answered {}: {}; {SPEAKS}",
        log.len(),
        statuses.join("/"),
        targets.join(", ")
    ))
}

/// The method-surface probe: does the runtime know the 0.2.x-only methods? On a runtime that
/// has them, `session/working-directory/get` opens the session and answers `{cwd}`, and
/// `session/wait` on that idle session answers `{}`: both results. `dsh/surface-probe` is a method
/// no edition has: its error is what this runtime answers an unknown method.
const SURFACE_PROBE: &str = r#"# case: surface-probe
ignore {"method":"{{string}}"}
>> {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"cwd":"{{cwd}}","provider":"deepseek-official","model":"deepseek-v4-flash"}}
<< {"jsonrpc":"2.0","id":"init"} within 30s
>> {"jsonrpc":"2.0","id":"unknown","method":"dsh/surface-probe","params":{"sessionId":"dsh-surface-probe"}}
>> {"jsonrpc":"2.0","id":"wd","method":"session/working-directory/get","params":{"sessionId":"dsh-surface-probe"}}
<<unordered
<< {"jsonrpc":"2.0","id":"unknown"}
<< {"jsonrpc":"2.0","id":"wd"}
<<end
>> {"jsonrpc":"2.0","id":"wait","method":"session/wait","params":{"sessionId":"dsh-surface-probe"}}
<< {"jsonrpc":"2.0","id":"wait"}
"#;

/// The answer a response gave: its result, or its error.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Answer {
    Result,
    Error(serde_json::Value),
}

/// The answer to the request whose id is the string `id`, if `stdout` holds one (read off the
/// typed frame; only an error is parsed).
pub(super) fn answer_to(stdout: &[Output], id: &str) -> Option<Answer> {
    let echo = json::to_string(&serde_json::Value::from(id));
    stdout.iter().find_map(|l| match l.frame() {
        Frame::Response { id: got, ok: true } if *got == echo => Some(Answer::Result),
        Frame::Response { id: got, ok: false } if *got == echo => {
            Some(Answer::Error(l.json()?.get("error")?.to_value()))
        }
        _ => None,
    })
}

/// The edition the runtime's method surface looks like, when it differs from `opts.edition`:
/// a runtime that answers `session/working-directory/get` and `session/wait` with errors has the
/// 2026-08 surface, whatever its unknown-method error looks like; one that answers both with
/// results has the current one. `None` when undecided.
pub fn probe_surface(cmd: &CommandSpec, opts: &Options) -> Option<crate::edition::Edition> {
    use crate::edition::Edition;
    if opts.edition == Edition::Legacy {
        return None;
    }
    let mut trace = crate::trace::Trace::parse(SURFACE_PROBE, "surface-probe").ok()?;
    trace.frames_only = false;
    let r = runner::replay(&trace, cmd, &runner_opts(opts));
    if !r.passed() {
        return None;
    }
    surface_of(&r.transcript.stdout).filter(|e| *e != opts.edition)
}

/// [`probe_surface`]'s decision from the probe's stdout.
fn surface_of(stdout: &[Output]) -> Option<crate::edition::Edition> {
    use crate::edition::Edition;
    let answer = |id: &str| answer_to(stdout, id);
    let (wd, wait) = (answer("wd")?, answer("wait")?);
    // `session/wait` on a session working-directory/get did not open fails on any edition (an
    // unknown session): then only an error like the unknown method's says it is missing.
    let wait_missing = match (&wd, &wait) {
        (_, Answer::Result) => false,
        (Answer::Result, Answer::Error(_)) => true,
        (Answer::Error(_), Answer::Error(e)) => {
            let unknown = match answer("unknown") {
                Some(Answer::Error(u)) => u,
                _ => return None,
            };
            let norm = |e: &serde_json::Value, method: &str| {
                let mut e = e.clone();
                if let Some(m) = e.get("message").and_then(serde_json::Value::as_str) {
                    e["message"] = m.replace(method, "<method>").into();
                }
                e
            };
            norm(e, "session/wait") == norm(&unknown, "dsh/surface-probe")
        }
    };
    match (&wd, wait_missing) {
        (Answer::Error(_), true) => Some(Edition::Aug2026),
        (Answer::Result, false) => Some(Edition::Current),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edition::Edition;

    fn lines(v: &[&str]) -> Vec<Output> {
        (v.iter().enumerate())
            .map(|(i, s)| Output::parse(i + 1, s.to_string()))
            .collect()
    }

    #[test]
    fn the_surface_is_judged_on_errors_whatever_their_message() {
        let aug = lines(&[
            r#"{"jsonrpc":"2.0","id":"init","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"unknown","error":{"code":-32601,"message":"Method not found"}}"#,
            r#"{"jsonrpc":"2.0","id":"wd","error":{"code":-32601,"message":"Method not found"}}"#,
            r#"{"jsonrpc":"2.0","id":"wait","error":{"code":-32601,"message":"Method not found"}}"#,
        ]);
        assert_eq!(surface_of(&aug), Some(Edition::Aug2026));
        let named = lines(&[
            r#"{"jsonrpc":"2.0","id":"unknown","error":{"code":-32000,"message":"no handler for dsh/surface-probe"}}"#,
            r#"{"jsonrpc":"2.0","id":"wd","error":{"code":-32000,"message":"no handler for session/working-directory/get"}}"#,
            r#"{"jsonrpc":"2.0","id":"wait","error":{"code":-32000,"message":"no handler for session/wait"}}"#,
        ]);
        assert_eq!(surface_of(&named), Some(Edition::Aug2026));
        let current = lines(&[
            r#"{"jsonrpc":"2.0","id":"unknown","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: dsh/surface-probe"}}"#,
            r#"{"jsonrpc":"2.0","id":"wd","result":{"cwd":"/"}}"#,
            r#"{"jsonrpc":"2.0","id":"wait","result":{}}"#,
        ]);
        assert_eq!(surface_of(&current), Some(Edition::Current));
        // Without working-directory, wait's unknown-session error is no sign wait is missing.
        let no_wd = lines(&[
            r#"{"jsonrpc":"2.0","id":"unknown","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: dsh/surface-probe"}}"#,
            r#"{"jsonrpc":"2.0","id":"wd","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: session/working-directory/get"}}"#,
            r#"{"jsonrpc":"2.0","id":"wait","error":{"code":-32603,"message":"unknown SDK session: dsh-surface-probe"}}"#,
        ]);
        assert_eq!(surface_of(&no_wd), None);
    }

    #[test]
    fn an_unreachable_model_is_told_by_the_stub_log() {
        assert!(stub_unreachable(&[])
            .unwrap()
            .contains("no request reached the model stub"));
        let req = |path: &str, status| StubRequest {
            summary: String::new(),
            method: "POST".into(),
            path: path.into(),
            status: Some(status),
            tag: None,
            directive: None,
            tools: None,
        };
        let why =
            stub_unreachable(&[req("/v1/responses", 404), req("/v1/responses", 404)]).unwrap();
        assert!(
            why.contains("2 request(s), all answered 404: POST /v1/responses"),
            "{why}"
        );
        assert_eq!(
            stub_unreachable(&[req("/v1/responses", 404), req("/v1/messages", 200)]),
            None
        );
        // A chat-completions runtime the stub answered is reachable.
        assert_eq!(stub_unreachable(&[req("/v1/chat/completions", 200)]), None);
    }
}
