//! A black-box fuzz sequence ([`Sequence`]): its ops and how it ends, and what the fuzzer asks
//! of one before running it — the `initialize` answers it awaits, whether it may share a process,
//! its session ids, the seconds its directives may make turns wait. The sequences themselves are
//! made in [`super::gen`].

use crate::directive::parse_directive;
use crate::ops::{
    BlockGen, BlocksGen, Directive, IdGen, Op, PathGen, ProviderGen, Renderer, SessionGen, Small,
};

/// How a sequence ends after its barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// A `shutdown` request: answered, then exit 0.
    Shutdown,
    /// Stdin closes: exit 0.
    Eof,
}

/// Id of the barrier request every sequence ends with before its [`End`] (an unknown method:
/// answered at once with an error).
pub const BARRIER_ID: &str = "dsh-fuzz-barrier";
/// Method of the barrier request.
pub const BARRIER_METHOD: &str = "dsh-fuzz/barrier";
/// Id of the closing `shutdown` request ([`End::Shutdown`]).
pub const SHUTDOWN_ID: &str = "dsh-fuzz-shutdown";

/// One generated case.
#[derive(Debug, Clone)]
pub struct Sequence {
    /// The ops, in order (the first is usually an `initialize`).
    pub ops: Vec<Op>,
    /// How it ends.
    pub end: End,
}

/// The session ids of a sequence ([`Sequence::sessions`]).
#[derive(Debug, Clone, Default)]
pub struct Sessions {
    /// Every id its lines name.
    pub named: std::collections::BTreeSet<String>,
    /// The ids it may create.
    pub created: std::collections::BTreeSet<String>,
}

/// Id of the well-formed `initialize` most sequences start with.
pub const INIT_ID: &str = "init";

impl Sequence {
    /// The id echo of a leading `initialize` request, whose answer the fuzzer awaits before
    /// writing on (as SDK clients do: the real runtime answers requests that overtake a 1 s
    /// initialization with `SDK server is not initialized`, a race of timing, not of protocol).
    /// Returns the op's index with the id echo.
    pub fn awaited_init(&self) -> Option<(usize, String)> {
        let i = self
            .ops
            .iter()
            .position(|op| !matches!(op, Op::Advance(_)))?;
        let op @ Op::Initialize { .. } = &self.ops[i] else {
            return None;
        };
        let mut bytes = Vec::new();
        Renderer::default().render(op, &mut bytes);
        let line = std::str::from_utf8(&bytes).ok()?;
        match crate::wire::classify(crate::wire::trim_js(line)) {
            crate::wire::Classified::Request(r) => Some((i, r.id.to_json())),
            _ => None,
        }
    }

    /// Every `initialize` request of the sequence whose answer the fuzzer awaits before writing
    /// on, as SDK clients await theirs: the leading one ([`Sequence::awaited_init`]) and any
    /// repeated one (the real runtime applies a repeated initialize asynchronously, so requests
    /// written with it race it, a race of timing, not of protocol). Op indexes with id echoes.
    pub fn awaited_inits(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut r = Renderer::default();
        let mut bytes = Vec::new();
        for (i, op) in self.ops.iter().enumerate() {
            bytes.clear();
            r.render(op, &mut bytes);
            if !matches!(op, Op::Initialize { .. }) {
                continue;
            }
            let Ok(line) = std::str::from_utf8(&bytes) else {
                continue;
            };
            if let crate::wire::Classified::Request(req) =
                crate::wire::classify(crate::wire::trim_js(line))
            {
                out.push((i, req.id.to_json()));
            }
        }
        out
    }

    /// Whether some prompt asks the model to `hang` (its turn, and waits on it, never end).
    pub fn may_hang(&self) -> bool {
        self.ops.iter().any(|op| prompt_text(op).contains("hang"))
    }

    /// Whether some op prompts a session (a runtime that calls a model needs the stub).
    pub fn has_prompts(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, Op::Prompt { .. }))
    }

    /// Whether the sequence can share a runtime process with the sequences before it (see
    /// [`super::exec::Live`]): it starts with the standard [`initialize`] (which a shared process
    /// has already answered) and then holds no lifecycle operation — no other `initialize`, no
    /// `shutdown` (nor raw text that might hold one), no turn that hangs, no subagent (whose
    /// notice reaches its parent session after everything looked settled).
    pub fn reusable(&self) -> bool {
        let mut standard = Vec::new();
        Renderer::default().render(&initialize(), &mut standard);
        let mut r = Renderer::default();
        let mut first = Vec::new();
        match self.ops.first() {
            Some(op) => r.render(op, &mut first),
            None => return false,
        }
        let subagents = self
            .ops
            .iter()
            .any(|op| prompt_text(op).contains("subagent"));
        // An empty, path-like or unusual session id stays on a process of its own: the release
        // fails every later shutdown after one (`cannot encode an empty path segment`) and
        // retries the model for ~16 s on one it cannot send in a header, which a shared process
        // would charge to the sequences after it.
        if first != standard || self.may_hang() || subagents || !self.ordinary() {
            return false;
        }
        self.ops[1..].iter().all(|op| {
            if matches!(
                op,
                Op::Initialize { .. } | Op::Shutdown { .. } | Op::Eof | Op::Restart
            ) {
                return false;
            }
            let mut bytes = Vec::new();
            r.render(op, &mut bytes);
            let text = String::from_utf8_lossy(&bytes);
            !(text.contains("initialize") || text.contains("shutdown"))
        })
    }

    /// Whether every session id the sequence names is an ordinary one: what
    /// [`ordinary_sessions`] leaves as it is, not empty, with no path separator (the release
    /// makes a path of it: `cannot encode an empty path segment`).
    fn ordinary(&self) -> bool {
        let plain = |s: &String| !s.is_empty() && !s.contains(['/', '\\']);
        if !self.sessions("").named.iter().all(plain) {
            return false;
        }
        let render = |ops: Vec<Op>| {
            let (mut r, mut bytes) = (Renderer::default(), Vec::new());
            ops.iter().for_each(|op| r.render(op, &mut bytes));
            bytes
        };
        let ordinary = self.ops.iter().cloned().map(ordinary_sessions).collect();
        render(self.ops.clone()) == render(ordinary)
    }

    /// The `sessionId` strings the sequence's lines name, and those of them it may create
    /// (named by any method but `session/resume`), with generated ids written
    /// under `prefix` (as [`Renderer::with_session_prefix`] writes them).
    pub fn sessions(&self, prefix: &str) -> Sessions {
        let mut r = Renderer::with_session_prefix(prefix);
        let mut bytes = Vec::new();
        for op in &self.ops {
            r.render(op, &mut bytes);
        }
        let mut out = Sessions::default();
        // The wire's own parser: ids like `1e400` are JSON that serde_json refuses.
        for v in bytes
            .split(|b| *b == b'\n')
            .filter_map(|l| crate::wire::json::parse(&String::from_utf8_lossy(l)).ok())
            .map(|p| p.value)
        {
            let Some(sid) = v.pointer("/params/sessionId").and_then(|s| s.as_str()) else {
                continue;
            };
            // Every session method but `session/resume` creates a session it does not find
            // (`working-directory/get` and `wait` too).
            if v["method"].as_str() != Some("session/resume") {
                out.created.insert(sid.to_owned());
            }
            out.named.insert(sid.to_owned());
        }
        out
    }

    /// Upper bound of the seconds the sequence's directives make turns wait: `slow`, and the
    /// release's retry back-off for each directive it retries (the reference does not wait it
    /// unless `--realistic-timing`).
    pub fn slow_secs(&self) -> f64 {
        self.ops.iter().map(slow_of_op).sum()
    }

    /// [`Sequence::slow_secs`] in its two parts: the `slow` directives' seconds, and the
    /// allowance for a release's retries.
    pub fn slow_secs_split(&self) -> (f64, f64) {
        let parts = self.ops.iter().map(slow_secs_of);
        parts.fold((0.0, 0.0), |(s, r), (s1, r1)| (s + s1, r + r1))
    }
}

/// The well-formed `initialize` most sequences start with.
pub fn initialize() -> Op {
    Op::Initialize {
        id: IdGen::Str(Small(INIT_ID.into())),
        cwd: PathGen::Root,
        provider: ProviderGen::Official,
        max_tokens: None,
        effort: None,
    }
}

/// The op with empty and path-like session ids replaced by generated ones, and characters
/// outside printable ASCII in other ids replaced by `_`.
pub(super) fn ordinary_sessions(op: Op) -> Op {
    let ordinary = |s: SessionGen| match s {
        SessionGen::Empty => SessionGen::Pick(0),
        SessionGen::Odd(o) => SessionGen::Pick(o as u8),
        SessionGen::Any(Small(s)) => SessionGen::Any(Small(
            s.chars()
                .map(|c| {
                    if c.is_ascii_graphic() || c == ' ' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect(),
        )),
        s => s,
    };
    match op {
        Op::Prompt {
            id,
            session,
            blocks,
        } => Op::Prompt {
            id,
            session: ordinary(session),
            blocks,
        },
        Op::Wait { id, session } => Op::Wait {
            id,
            session: ordinary(session),
        },
        Op::Resume { id, session } => Op::Resume {
            id,
            session: ordinary(session),
        },
        Op::WdGet { id, session } => Op::WdGet {
            id,
            session: ordinary(session),
        },
        Op::WdSet { id, session, path } => Op::WdSet {
            id,
            session: ordinary(session),
            path,
        },
        op => op,
    }
}

/// The text blocks of a prompt, one per line; empty for any other op.
fn prompt_text(op: &Op) -> String {
    let mut s = String::new();
    if let Op::Prompt {
        blocks: BlocksGen::List(list),
        ..
    } = op
    {
        for b in list {
            if let BlockGen::Text(d) = b {
                s.push_str(&d.to_string());
                s.push('\n');
            }
        }
    }
    s
}

/// The release's retry back-off for one failing turn (seconds: 0.5 + 1 + 2 + 4 + 7.5), plus a
/// margin for the attempts themselves.
pub(super) const RETRY_SECS: f64 = 17.0;

/// The seconds an op's prompt may take: its `slow` directives', and the allowance for the
/// retries a release makes ([`RETRY_SECS`] for each directive or wordless prompt it retries).
pub(crate) fn slow_secs_of(op: &Op) -> (f64, f64) {
    let all = slow_of_op(op);
    let retries = retry_secs_of(op);
    (all - retries, retries)
}

/// The part of [`slow_of_op`] that allows for a release's retries.
fn retry_secs_of(op: &Op) -> f64 {
    let Op::Prompt {
        blocks: BlocksGen::List(list),
        ..
    } = op
    else {
        return 0.0;
    };
    fn retries(d: &Directive) -> f64 {
        match d {
            Directive::Slow { then, .. } => retries(then),
            Directive::Empty | Directive::Error500 | Directive::SseError => RETRY_SECS,
            Directive::Subagent { prompt } => retries(&parse_directive(prompt)),
            _ => 0.0,
        }
    }
    let wordless = wordless(list);
    let mut total: f64 = list
        .iter()
        .map(|b| match b {
            BlockGen::Text(d) => retries(d),
            _ => 0.0,
        })
        .sum();
    if wordless {
        total += RETRY_SECS;
    }
    total
}

fn slow_of_op(op: &Op) -> f64 {
    let mut total = 0.0;
    if let Op::Prompt {
        blocks: BlocksGen::List(list),
        ..
    } = op
    {
        for b in list {
            if let BlockGen::Text(d) = b {
                total += slow_of(d);
            }
        }
        // A prompt with no text for the model (no text block, or only empty ones): the stub
        // echoes it as an empty reply, which a release retries with its back-off like `empty`.
        let wordless = wordless(list);
        if wordless {
            total += RETRY_SECS;
        }
    }
    total
}

fn slow_of(d: &Directive) -> f64 {
    match d {
        Directive::Slow { secs, then } => secs + slow_of(then),
        Directive::Empty | Directive::Error500 | Directive::SseError => RETRY_SECS,
        Directive::Subagent { prompt } => slow_of(&parse_directive(prompt)),
        _ => 0.0,
    }
}

/// A prompt with no text for the model (no text block, or only empty ones): the stub echoes it
/// as an empty reply, which a release retries with its back-off like `empty`.
fn wordless(list: &[BlockGen]) -> bool {
    list.iter().all(|b| match b {
        BlockGen::Text(Directive::Echo(t)) => t.trim().is_empty(),
        BlockGen::Text(_) => false,
        _ => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_prompt_waits_as_long_as_a_retried_model_reply() {
        // The release retries an empty model reply with its back-off (idle after ~16 s): not a
        // session that never goes idle.
        let prompt = |blocks| Op::Prompt {
            session: crate::ops::SessionGen::Pick(0),
            blocks: BlocksGen::List(blocks),
            id: crate::ops::IdGen::Num(1),
        };
        let empty = prompt(vec![BlockGen::Text(Directive::Echo(String::new()))]);
        assert!(slow_of_op(&empty) >= RETRY_SECS);
        assert!(slow_of_op(&prompt(Vec::new())) >= RETRY_SECS);
        let worded = prompt(vec![BlockGen::Text(Directive::Reply("hi".into()))]);
        assert_eq!(slow_of_op(&worded), 0.0);
        // A trace's settle pause counts the `slow` seconds, not the retry allowance.
        assert_eq!(slow_secs_of(&empty), (0.0, RETRY_SECS));
    }
}
