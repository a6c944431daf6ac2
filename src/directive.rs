//! The scripted-model directive language, defined once, below both of its users: the model stub
//! ([`crate::model_stub`]) and the reference runtime's scripted model ([`crate::runtime::script`]),
//! so that one golden trace drives a real runtime (through the stub) and the reference alike.
//! Also here: which text blocks the runtime writes itself (never a prompt).
//!
//! A directive is read from the **start** of one prompt text (which text is the caller's business:
//! the stub uses the last user-authored text block holding a directive, see [`crate::model_stub::request`]).
//! Leading whitespace is ignored; keywords are case-sensitive; a bare keyword must end at the end
//! of the text, at whitespace or at `:`. The grammar is exactly the reference runtime's
//! (`runtime::script::parse`, a test checks they agree) so one golden trace drives both:
//!
//! | text | [`Directive`] |
//! |---|---|
//! | `reply:X` | [`Directive::Reply`] — X is the rest of the text with leading whitespace removed |
//! | `maxtokens` | [`Directive::MaxTokens`] |
//! | `thinking` | [`Directive::Thinking`] |
//! | `empty` | [`Directive::Empty`] |
//! | `slow <d>` / `slow:N <d>` | [`Directive::Slow`] — wait N seconds (digits and dots; default [`DEFAULT_SLOW_SECS`] when absent or unreadable), then act as `<d>`; a `<d>` holding no directive is a reply with that (trimmed) text |
//! | `tool` / `tool: CMD` | [`Directive::Tool`] — a bash tool call running CMD (default [`DEFAULT_TOOL_COMMAND`]) |
//! | `subagent:P` | [`Directive::Subagent`] — a subagent tool call with prompt P (leading whitespace removed) |
//! | `call: NAME {JSON}` | [`Directive::Call`] — a call of the tool NAME with the JSON object as its input (`{}` when absent); NAME not offered by the request: HTTP 400 naming it; JSON not an object: no directive (echo) |
//! | `error500`, `error400`, `sseerror`, `truncate`, `hang` | the variant of the same name |
//! | anything else | [`Directive::Echo`] of the whole text (untrimmed) |
//!
//! [`parse_directive`] is total and pure: every text maps to exactly one directive;
//! [`directive_in`] tells texts holding a directive from the rest.

/// Prefixes of text blocks the runtime writes itself (never the user's prompt).
pub const RUNTIME_TEXT_PREFIXES: [&str; 3] = [
    "Current runtime context",
    "Your parent agent id is ",
    "The working directory changed from ",
];
/// The first text of the user message a settled subagent sends to its parent.
pub const SUBAGENT_NOTICE_PREFIX: &str = "Background subagent ";

/// True when a text block was written by the runtime, not by the user.
pub fn is_runtime_text(text: &str) -> bool {
    RUNTIME_TEXT_PREFIXES.iter().any(|p| text.starts_with(p))
}

/// What both scripted models answer to a request with no user text (a runtime notice).
pub const NOTICE_REPLY: &str = "ok";

/// The user text a model request's directive is read from, among the texts of its last user
/// message in order: runtime-written texts left out, the last one holding a directive, else the
/// last one. `None` when no user text is left (a runtime notice). The one choice both scripted
/// models make: the stub over HTTP, and the reference runtime (which first drops empty texts, as
/// the release does when it builds the request).
pub fn chosen_text<'a>(texts: &[&'a str]) -> Option<&'a str> {
    let user: Vec<&'a str> = texts
        .iter()
        .copied()
        .filter(|t| !is_runtime_text(t))
        .collect();
    user.iter()
        .rev()
        .find(|t| directive_in(t).is_some())
        .or(user.last())
        .copied()
}

/// The HTTP 400 message of a directive that calls a tool the request does not offer.
pub fn unoffered_tool_message(tool: &str, offered: &[String]) -> String {
    format!(
        "model-stub: the directive calls the `{tool}` tool but the request offers no tool of that name (offered: {})",
        offered.join(", ")
    )
}

/// Seconds `slow` waits when no `:N` is given.
pub const DEFAULT_SLOW_SECS: f64 = 2.0;
/// The command `tool` runs when none is given.
pub const DEFAULT_TOOL_COMMAND: &str = "echo hi";
/// Upper bound for `slow:N` (one day), as the reference runtime clamps it.
pub const MAX_SLOW_SECS: f64 = 86_400.0;

/// What the scripted model does for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    /// Answer with this text and stop reason `end_turn`.
    Reply(String),
    /// Answer with a partial text (`partial...`) and stop reason `max_tokens`.
    MaxTokens,
    /// Answer with a reasoning block (`let me think`) then a text block (`thought done`).
    Thinking,
    /// Answer with a message holding no content block at all (`end_turn`).
    Empty,
    /// Wait `secs` seconds, then do `then`.
    Slow {
        /// Delay in seconds (0..=[`MAX_SLOW_SECS`]).
        secs: f64,
        /// What to do after the delay.
        then: Box<Directive>,
    },
    /// Call the bash tool with this command; the next request (carrying the tool result) is answered
    /// with `tool result: <result text>`.
    Tool {
        /// The shell command.
        command: String,
    },
    /// Call any tool the request offers, with this input; the next request (carrying the tool
    /// result) is answered with `tool result: <result text>`.
    Call {
        /// The tool's name.
        tool: String,
        /// Its input: a JSON object, as written (compact).
        input: String,
    },
    /// `call!: NAME {JSON}`: call the tool even when the request does not offer it (to see what
    /// a runtime does with a call of a tool it did not offer); otherwise as [`Directive::Call`].
    CallAny {
        /// The tool's name.
        tool: String,
        /// Its input: a JSON object, as written (compact).
        input: String,
    },
    /// Call the subagent tool with this prompt for the child.
    Subagent {
        /// The child's prompt (itself usually a directive).
        prompt: String,
    },
    /// Answer HTTP 500 (retried by runtimes).
    Error500,
    /// Answer HTTP 400 (not retried).
    Error400,
    /// Answer a stream holding only an SSE `error` event (retried).
    SseError,
    /// Start a stream and end it before `message_stop`.
    Truncate,
    /// Never answer (until the client goes away or the model is shut down).
    Hang,
    /// No directive: answer with the prompt text itself.
    Echo(String),
}

impl Directive {
    /// A short label for logs (`reply`, `slow:2+reply`, `echo`, …).
    pub fn label(&self) -> String {
        match self {
            Directive::Reply(_) => "reply".into(),
            Directive::MaxTokens => "maxtokens".into(),
            Directive::Thinking => "thinking".into(),
            Directive::Empty => "empty".into(),
            Directive::Slow { secs, then } => format!("slow:{secs}+{}", then.label()),
            Directive::Tool { .. } => "tool".into(),
            Directive::Subagent { .. } => "subagent".into(),
            Directive::Call { .. } => "call".into(),
            Directive::CallAny { .. } => "call!".into(),
            Directive::Error500 => "error500".into(),
            Directive::Error400 => "error400".into(),
            Directive::SseError => "sseerror".into(),
            Directive::Truncate => "truncate".into(),
            Directive::Hang => "hang".into(),
            Directive::Echo(_) => "echo".into(),
        }
    }
}

impl std::fmt::Display for Directive {
    /// The directive's text: what a prompt says to get it. The inverse of [`parse_directive`]
    /// for every directive in its canonical form (a [`Directive::Reply`] or
    /// [`Directive::Subagent`] text without leading whitespace, a [`Directive::Tool`] command
    /// without surrounding whitespace, a compact JSON object as [`Directive::Call`] input, an
    /// [`Directive::Echo`] text holding no directive, never as the tail of a [`Directive::Slow`]);
    /// a test checks the round trip.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Directive::Reply(text) => write!(f, "reply: {text}"),
            Directive::MaxTokens => f.write_str("maxtokens"),
            Directive::Thinking => f.write_str("thinking"),
            Directive::Empty => f.write_str("empty"),
            Directive::Slow { secs, then } => write!(f, "slow:{secs} {then}"),
            Directive::Tool { command } => write!(f, "tool: {command}"),
            Directive::Call { tool, input } => write!(f, "call: {tool} {input}"),
            Directive::CallAny { tool, input } => write!(f, "call!: {tool} {input}"),
            Directive::Subagent { prompt } => write!(f, "subagent: {prompt}"),
            Directive::Error500 => f.write_str("error500"),
            Directive::Error400 => f.write_str("error400"),
            Directive::SseError => f.write_str("sseerror"),
            Directive::Truncate => f.write_str("truncate"),
            Directive::Hang => f.write_str("hang"),
            Directive::Echo(text) => f.write_str(text),
        }
    }
}

/// Reads the directive at the start of `text` (see the module docs for the grammar).
pub fn parse_directive(text: &str) -> Directive {
    directive_in(text).unwrap_or_else(|| Directive::Echo(text.to_owned()))
}

/// The directive at the start of `text`, or `None` when it holds none (the echo case).
pub fn directive_in(text: &str) -> Option<Directive> {
    let body = text.trim_start();
    if let Some(rest) = word(body, "slow") {
        let (secs, rest) = match rest.strip_prefix(':') {
            Some(r) => {
                let end = r
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .unwrap_or(r.len());
                (
                    r[..end].parse::<f64>().unwrap_or(DEFAULT_SLOW_SECS),
                    &r[end..],
                )
            }
            None => (DEFAULT_SLOW_SECS, rest),
        };
        let then =
            directive_in(rest).unwrap_or_else(|| Directive::Reply(rest.trim_start().to_owned()));
        return Some(Directive::Slow {
            secs: secs.clamp(0.0, MAX_SLOW_SECS),
            then: Box::new(then),
        });
    }
    if let Some(rest) = body.strip_prefix("reply:") {
        return Some(Directive::Reply(rest.trim_start().to_owned()));
    }
    if let Some(rest) = word(body, "tool") {
        let command = rest
            .strip_prefix(':')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .unwrap_or(DEFAULT_TOOL_COMMAND);
        return Some(Directive::Tool {
            command: command.to_owned(),
        });
    }
    let call = [("call:", false), ("call!:", true)]
        .into_iter()
        .find_map(|(p, any)| body.strip_prefix(p).map(|rest| (rest, any)));
    if let Some((rest, any)) = call {
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '{')
            .unwrap_or(rest.len());
        let (tool, input) = (&rest[..end], rest[end..].trim());
        // `JSON.parse`/`JSON.stringify`, as a JavaScript model endpoint would read and send it
        // (a lone surrogate escape inside stays one).
        let input: serde_json::Value = if input.is_empty() {
            serde_json::json!({})
        } else {
            crate::wire::json::parse(input).ok()?.value
        };
        if tool.is_empty() || !input.is_object() {
            return None;
        }
        let (tool, input) = (tool.to_owned(), crate::wire::json::to_string(&input));
        return Some(if any {
            Directive::CallAny { tool, input }
        } else {
            Directive::Call { tool, input }
        });
    }
    if let Some(rest) = body.strip_prefix("subagent:") {
        return Some(Directive::Subagent {
            prompt: rest.trim_start().to_owned(),
        });
    }
    let simple: [(&str, Directive); 8] = [
        ("maxtokens", Directive::MaxTokens),
        ("thinking", Directive::Thinking),
        ("empty", Directive::Empty),
        ("error500", Directive::Error500),
        ("error400", Directive::Error400),
        ("sseerror", Directive::SseError),
        ("truncate", Directive::Truncate),
        ("hang", Directive::Hang),
    ];
    simple
        .into_iter()
        .find(|(w, _)| word(body, w).is_some())
        .map(|(_, d)| d)
}

/// `w` at the start of `s`, followed by the end, whitespace or `:`; returns the rest.
fn word<'a>(s: &'a str, w: &str) -> Option<&'a str> {
    let rest = s.strip_prefix(w)?;
    match rest.chars().next() {
        None => Some(rest),
        Some(c) if c.is_whitespace() || c == ':' => Some(rest),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_canonical_directive_survives_display_and_parse() {
        let reply = Directive::Reply("hello there".into());
        let all = [
            reply.clone(),
            Directive::MaxTokens,
            Directive::Thinking,
            Directive::Empty,
            Directive::Slow {
                secs: 0.3,
                then: Box::new(reply.clone()),
            },
            Directive::Slow {
                secs: 2.0,
                then: Box::new(Directive::Hang),
            },
            Directive::Tool {
                command: "ls -l".into(),
            },
            Directive::Call {
                tool: "read_image".into(),
                input: r#"{"path":"a.png"}"#.into(),
            },
            Directive::Call {
                tool: "bash".into(),
                input: "{}".into(),
            },
            Directive::CallAny {
                tool: "subagent".into(),
                input: r#"{"prompt":"p"}"#.into(),
            },
            Directive::Subagent {
                prompt: "slow:0.1 reply: child".into(),
            },
            Directive::Error500,
            Directive::Error400,
            Directive::SseError,
            Directive::Truncate,
            Directive::Hang,
            Directive::Echo("just words".into()),
        ];
        for d in all {
            assert_eq!(parse_directive(&d.to_string()), d, "{d}");
        }
    }

    #[test]
    fn the_chosen_text_is_the_last_with_a_directive_else_the_last() {
        assert_eq!(chosen_text(&["reply: a", "plain"]), Some("reply: a"));
        assert_eq!(chosen_text(&["one", "two"]), Some("two"));
        assert_eq!(chosen_text(&["reply: a", "tool"]), Some("tool"));
        let ctx =
            "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.";
        assert!(is_runtime_text(ctx));
        assert_eq!(chosen_text(&["hi", ctx]), Some("hi"));
        assert_eq!(chosen_text(&[ctx]), None);
        assert_eq!(chosen_text(&[]), None);
    }
}
