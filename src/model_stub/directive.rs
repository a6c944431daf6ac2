//! The scripted-model directive language, shared by the model stub and (so that one golden trace can
//! drive both) the reference runtime's scripted model.
//!
//! A directive is read from the **start** of one prompt text (which text is the caller's business:
//! the stub uses the last user-authored text block of the request, see [`super::request`]). Leading
//! whitespace is ignored; keywords are case-sensitive and must end at the end of the text, at
//! whitespace, or (where an argument is allowed) at `:`:
//!
//! | text | [`Directive`] |
//! |---|---|
//! | `reply: X` (also `reply:X`) | [`Directive::Reply`]`(X)` — X is the rest of the text, verbatim after one optional space |
//! | `maxtokens` | [`Directive::MaxTokens`] |
//! | `thinking` | [`Directive::Thinking`] |
//! | `empty` | [`Directive::Empty`] |
//! | `slow <d>` / `slow:N <d>` | [`Directive::Slow`] — wait N seconds (default [`DEFAULT_SLOW_SECS`], N may be a decimal), then act as `<d>` (parsed recursively; an empty `<d>` means echo of the empty text) |
//! | `tool` / `tool: CMD` | [`Directive::Tool`] — a bash tool call running CMD (default [`DEFAULT_TOOL_COMMAND`]) |
//! | `subagent: P` / `subagent` | [`Directive::Subagent`] — a subagent tool call with prompt P (default [`DEFAULT_SUBAGENT_PROMPT`]) |
//! | `error500`, `error400`, `sseerror`, `truncate`, `hang` | the variant of the same name |
//! | anything else | [`Directive::Echo`] of the whole text (untrimmed) |
//!
//! `parse_directive` is total and pure: every text maps to exactly one directive.

/// Seconds `slow` waits when no `:N` is given.
pub const DEFAULT_SLOW_SECS: f64 = 1.0;
/// The command `tool` runs when none is given.
pub const DEFAULT_TOOL_COMMAND: &str = "echo hi";
/// The prompt `subagent` gives its child when none is given.
pub const DEFAULT_SUBAGENT_PROMPT: &str = "reply: ok";
/// Upper bound for `slow:N`, so a typo cannot park a test for hours.
pub const MAX_SLOW_SECS: f64 = 600.0;

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
            Directive::Error500 => "error500".into(),
            Directive::Error400 => "error400".into(),
            Directive::SseError => "sseerror".into(),
            Directive::Truncate => "truncate".into(),
            Directive::Hang => "hang".into(),
            Directive::Echo(_) => "echo".into(),
        }
    }
}

/// Reads the directive at the start of `text` (see the module docs for the grammar).
pub fn parse_directive(text: &str) -> Directive {
    let body = text.trim_start();
    if let Some(rest) = keyword_arg(body, "reply") {
        return Directive::Reply(rest.unwrap_or("").to_owned());
    }
    if let Some(rest) = keyword_arg(body, "tool") {
        let command = rest
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .unwrap_or(DEFAULT_TOOL_COMMAND);
        return Directive::Tool {
            command: command.to_owned(),
        };
    }
    if let Some(rest) = keyword_arg(body, "subagent") {
        let prompt = rest
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .unwrap_or(DEFAULT_SUBAGENT_PROMPT);
        return Directive::Subagent {
            prompt: prompt.to_owned(),
        };
    }
    if let Some(d) = parse_slow(body) {
        return d;
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
    for (word, d) in simple {
        if let Some(after) = body.strip_prefix(word) {
            if ends_word(after) {
                return d;
            }
        }
    }
    Directive::Echo(text.to_owned())
}

/// `word` alone (→ `Some(None)`), or `word: arg` / `word:arg` (→ `Some(Some(arg))`, one leading
/// space removed), or not this keyword (→ `None`).
fn keyword_arg<'a>(body: &'a str, word: &str) -> Option<Option<&'a str>> {
    let after = body.strip_prefix(word)?;
    if let Some(arg) = after.strip_prefix(':') {
        return Some(Some(arg.strip_prefix(' ').unwrap_or(arg)));
    }
    if after.trim().is_empty() {
        return Some(None);
    }
    None
}

/// True when a keyword ends here: end of text or whitespace.
fn ends_word(after: &str) -> bool {
    after.chars().next().is_none_or(char::is_whitespace)
}

/// `slow <d>`, `slow:N <d>`, `slow`, `slow:N`.
fn parse_slow(body: &str) -> Option<Directive> {
    let after = body.strip_prefix("slow")?;
    let (secs, rest) = if let Some(arg) = after.strip_prefix(':') {
        let end = arg.find(char::is_whitespace).unwrap_or(arg.len());
        let secs: f64 = arg[..end]
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)?;
        (secs.min(MAX_SLOW_SECS), &arg[end..])
    } else if ends_word(after) {
        (DEFAULT_SLOW_SECS, after)
    } else {
        return None;
    };
    let rest = rest.trim_start();
    Some(Directive::Slow {
        secs,
        then: Box::new(parse_directive(rest)),
    })
}
