//! Seeded sequences of client operations for the black-box fuzzer.
//!
//! A case is `arbitrary` [`Op`]s decoded from a byte buffer that a seeded PRNG fills, so one
//! `(seed, case)` pair always gives the same sequence. The ops are then made safe and bounded for a
//! real process: no mid-sequence shutdown/EOF/restart (the fuzzer ends every sequence itself with a
//! barrier and then `shutdown` or EOF), tool calls only run the default harmless command, `slow`
//! waits at most half a second and `hang` is rare.

use crate::directive::{directive_in, parse_directive, DEFAULT_TOOL_COMMAND};
use crate::ops::{
    BlockGen, BlocksGen, Directive, IdGen, KnownMethod, MethodGen, Op, PathGen, ProviderGen,
    RawGen, Renderer, SessionGen, Small,
};
use arbitrary::{Arbitrary, Unstructured};

/// Ops decoded for one case at most.
const MAX_OPS: usize = 40;
/// One sequence in this many keeps its lifecycle operations.
const LIFECYCLE_ONE_IN: u64 = 8;
/// One sequence in this many keeps the directives the real runtime retries with a back-off of
/// ≈ 15 s (`empty`, `error500`, `sseerror`); the others answer `reply:` instead.
const RETRIES_ONE_IN: u64 = 4;
/// The release's retry back-off for one failing turn (seconds: 0.5 + 1 + 2 + 4 + 7.5), plus a
/// margin for the attempts themselves.
const RETRY_SECS: f64 = 17.0;
/// One sequence in this many keeps empty and path-like session ids, and ids with characters
/// outside printable ASCII (controls, non-ASCII): a runtime that mishandles them (the real 0.2.1rc2
/// one cannot send them in an HTTP header and retries its model requests for ~16 s) would
/// otherwise spend most sequences on that one bug.
const SPECIAL_SESSIONS_ONE_IN: u64 = 4;

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

/// SplitMix64: small, fast, and good enough to fill fuzz buffers reproducibly.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for one seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The sequence of case number `case` under `seed`.
pub fn generate(seed: u64, case: u64) -> Sequence {
    let mut rng = Rng::new(seed ^ case.wrapping_mul(0xa076_1d64_78bd_642f));
    let len = 32 + rng.below(992) as usize;
    let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
    let mut u = Unstructured::new(&bytes);
    let mut ops = Vec::new();
    // Most real clients initialize first; sometimes the fuzzer does not.
    if rng.below(10) != 0 {
        ops.push(initialize());
    }
    // One sequence in LIFECYCLE_ONE_IN keeps its lifecycle operations (a repeated `initialize`,
    // a batch holding `shutdown`); the rest drop them, so that they can share a process.
    let lifecycle = rng.below(LIFECYCLE_ONE_IN) == 0;
    // Likewise the session ids no prefix can make a sequence's own (empty, path-like), and
    // those with unusual characters.
    let special = rng.below(SPECIAL_SESSIONS_ONE_IN) == 0;
    // And the directives that make a real runtime wait out its retry back-off (drawn from a
    // stream of its own, so that the sequences of a seed stay what they were before the knob).
    let retries = Rng::new(seed ^ case.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5e77)
        .below(RETRIES_ONE_IN)
        == 0;
    while !u.is_empty() && ops.len() < MAX_OPS {
        match Op::arbitrary(&mut u) {
            Ok(op) => {
                if let Some(op) = tame(op, lifecycle, retries, &mut rng) {
                    let op = if special { op } else { ordinary_sessions(op) };
                    ops.push(op);
                }
            }
            Err(_) => break,
        }
    }
    let end = if rng.below(10) < 7 {
        End::Shutdown
    } else {
        End::Eof
    };
    Sequence { ops, end }
}

/// One sequence in this many makes no tool calls when a profile's tools are called.
const NO_TOOLS_ONE_IN: u64 = 4;

/// The sequence of case number `case` under `seed` ([`generate`]), with calls of the tools
/// profile `tools` offers inserted (`fuzz --profile`; [`super::toolcall`]) in all but one
/// sequence in four. Without a profile, exactly [`generate`]'s sequence.
pub fn generate_for(seed: u64, case: u64, tools: Option<crate::runtime::Profile>) -> Sequence {
    let mut seq = generate(seed, case);
    if let Some(profile) = tools {
        // A stream of its own: the other ops stay what `generate` makes of the seed.
        let mut rng = Rng::new(seed ^ case.wrapping_mul(0x9e6c_63d0_676a_9a99) ^ 0x7001);
        if rng.below(NO_TOOLS_ONE_IN) != 0 {
            let offered = super::toolcall::offered(profile);
            super::toolcall::insert(&mut seq.ops, &offered, case, &mut rng);
        }
    }
    seq
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

/// Makes an op safe and bounded for a real process, or drops it; drops lifecycle operations
/// unless `lifecycle`, and retried directives unless `retries`.
fn tame(op: Op, lifecycle: bool, retries: bool, rng: &mut Rng) -> Option<Op> {
    Some(match op {
        // The fuzzer ends sequences itself; a process restart is out of scope here.
        Op::Eof | Op::Restart | Op::Shutdown { .. } => return None,
        Op::Request {
            method: MethodGen::Known(KnownMethod::Shutdown),
            ..
        } => return None,
        Op::Initialize { .. }
        | Op::Raw(RawGen::Batch)
        | Op::Request {
            method: MethodGen::Known(KnownMethod::Initialize),
            ..
        }
        | Op::Notification {
            method: MethodGen::Known(KnownMethod::Initialize | KnownMethod::Shutdown),
            ..
        } if !lifecycle => return None,
        Op::Prompt {
            id,
            session,
            blocks,
        } => Op::Prompt {
            id,
            session,
            blocks: match blocks {
                BlocksGen::List(list) => BlocksGen::List(
                    list.into_iter()
                        .map(|b| match b {
                            BlockGen::Text(d) => BlockGen::Text(tame_directive(d, retries, rng)),
                            b => b,
                        })
                        .collect(),
                ),
                b => b,
            },
        },
        op => op,
    })
}

/// The op with empty and path-like session ids replaced by generated ones, and characters
/// outside printable ASCII in other ids replaced by `_`.
fn ordinary_sessions(op: Op) -> Op {
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

fn tame_directive(d: Directive, retries: bool, rng: &mut Rng) -> Directive {
    match d {
        Directive::Empty | Directive::Error500 | Directive::SseError if !retries => {
            Directive::Reply("not retried".into())
        }
        // Never run a fuzzed shell command: the default one is harmless.
        Directive::Tool { .. } => Directive::Tool {
            command: DEFAULT_TOOL_COMMAND.to_owned(),
        },
        // Nor a fuzzed tool input: an empty one is refused or harmless for every tool.
        Directive::Call { tool, .. } => Directive::Call {
            tool,
            input: "{}".to_owned(),
        },
        // Up to half a second, in tenths.
        Directive::Slow { secs, then } => Directive::Slow {
            secs: ((secs * 10.0).round() as u64 % 6) as f64 / 10.0,
            then: Box::new(tame_directive(*then, retries, rng)),
        },
        Directive::Subagent { prompt } => Directive::Subagent {
            prompt: tame_directive(parse_directive(&prompt), retries, rng).to_string(),
        },
        Directive::Hang if rng.below(8) != 0 => Directive::Reply("not hanging".into()),
        // Plain text that happens to spell a directive stays plain text.
        Directive::Echo(s) if directive_in(&s).is_some() => Directive::Echo(format!("x {s}")),
        d => d,
    }
}

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
    let wordless = list.iter().all(|b| match b {
        BlockGen::Text(Directive::Echo(t)) => t.trim().is_empty(),
        BlockGen::Text(_) => false,
        _ => true,
    });
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
        let wordless = list.iter().all(|b| match b {
            BlockGen::Text(Directive::Echo(t)) => t.trim().is_empty(),
            BlockGen::Text(_) => false,
            _ => true,
        });
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

    fn no_fuzzed_tool(d: &Directive) -> bool {
        match d {
            Directive::Tool { command } => command == DEFAULT_TOOL_COMMAND,
            Directive::Call { input, .. } => input == "{}",
            Directive::Slow { then, .. } => no_fuzzed_tool(then),
            Directive::Subagent { prompt } => no_fuzzed_tool(&parse_directive(prompt)),
            _ => true,
        }
    }

    #[test]
    fn the_same_seed_and_case_give_the_same_sequence() {
        for case in 0..20 {
            let a = format!("{:?}", generate(7, case));
            let b = format!("{:?}", generate(7, case));
            assert_eq!(a, b);
        }
        assert_ne!(
            format!("{:?}", generate(7, 1)),
            format!("{:?}", generate(8, 1))
        );
    }

    #[test]
    fn sequences_never_shut_down_early_nor_run_fuzzed_commands() {
        for case in 0..300 {
            let s = generate(1, case);
            for op in &s.ops {
                assert!(!matches!(op, Op::Eof | Op::Restart | Op::Shutdown { .. }));
                if let Op::Prompt {
                    blocks: BlocksGen::List(list),
                    ..
                } = op
                {
                    for b in list {
                        if let BlockGen::Text(d) = b {
                            assert!(no_fuzzed_tool(d), "{d:?}");
                        }
                    }
                }
            }
            assert!(s.slow_secs() < (0.6 + RETRY_SECS) * s.ops.len() as f64 + 0.01);
        }
    }

    /// The session ids of the lines of `seq`, as the fuzzer writes them.
    fn session_ids(seq: &Sequence) -> Vec<String> {
        seq.sessions("").named.into_iter().collect()
    }

    #[test]
    fn every_well_formed_initialize_is_awaited() {
        let seq = Sequence {
            ops: vec![
                initialize(),
                Op::Advance(3),
                initialize(),
                Op::Request {
                    id: IdGen::Num(7),
                    method: MethodGen::Known(KnownMethod::Initialize),
                    params: None,
                },
            ],
            end: End::Eof,
        };
        let init = crate::wire::json::to_string(&serde_json::Value::from(INIT_ID));
        assert_eq!(seq.awaited_inits(), [(0, init.clone()), (2, init)]);
        assert_eq!(seq.awaited_init().map(|(i, _)| i), Some(0));
    }

    #[test]
    fn retried_directives_are_rare_and_their_back_off_is_waited_for() {
        let retried = |d: &Directive| {
            matches!(
                d,
                Directive::Empty | Directive::Error500 | Directive::SseError
            )
        };
        let (mut with, mut prompting) = (0, 0);
        for case in 0..400 {
            let seq = generate(5, case);
            let texts: Vec<Directive> = seq
                .ops
                .iter()
                .flat_map(|op| match op {
                    Op::Prompt {
                        blocks: BlocksGen::List(list),
                        ..
                    } => list.clone(),
                    _ => Vec::new(),
                })
                .filter_map(|b| match b {
                    BlockGen::Text(d) => Some(d),
                    _ => None,
                })
                .collect();
            if texts.is_empty() {
                continue;
            }
            prompting += 1;
            if texts.iter().any(retried) {
                with += 1;
                assert!(seq.slow_secs() >= RETRY_SECS, "case {case}");
            }
        }
        assert!(with > 0 && with * 3 < prompting, "{with} of {prompting}");
    }

    #[test]
    fn unusual_session_ids_are_kept_in_special_sequences_only() {
        let unusual = |id: &String| !id.chars().all(|c| c.is_ascii_graphic() || c == ' ');
        let (mut with, mut without) = (0, 0);
        for case in 0..400 {
            let seq = generate(3, case);
            let ids = session_ids(&seq);
            if ids.iter().any(unusual) {
                with += 1;
            } else if !ids.is_empty() {
                without += 1;
            }
        }
        // Special sequences are one in SPECIAL_SESSIONS_ONE_IN; not all of them draw such an id.
        assert!(with > 0, "no sequence kept an unusual session id");
        assert!(
            with * (SPECIAL_SESSIONS_ONE_IN as usize) < (with + without) * 3 / 2,
            "{with} of {} sequences with session ids had unusual ones",
            with + without
        );
    }
}
