//! Seeded sequences of client operations for the black-box fuzzer.
//!
//! A case is `arbitrary` [`Op`]s decoded from a byte buffer that a seeded PRNG fills, so one
//! `(seed, case)` pair always gives the same sequence. The ops are then made safe and bounded for a
//! real process: no mid-sequence shutdown/EOF/restart (the fuzzer ends every sequence itself with a
//! barrier and then `shutdown` or EOF), tool calls only run the default harmless command, `slow`
//! waits at most half a second and `hang` is rare.

use crate::directive::{directive_in, parse_directive, DEFAULT_TOOL_COMMAND};
use crate::ops::{
    BlockGen, BlocksGen, Directive, IdGen, KnownMethod, MethodGen, Op, PathGen, ProviderGen, Small,
};
use arbitrary::{Arbitrary, Unstructured};

/// Ops decoded for one case at most.
const MAX_OPS: usize = 40;

/// How a sequence ends after its barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// A `shutdown` request: answered, then exit 0.
    Shutdown,
    /// Stdin closes: exit 0.
    Eof,
}

/// One generated case.
#[derive(Debug, Clone)]
pub struct Sequence {
    /// The ops, in order (the first is usually an `initialize`).
    pub ops: Vec<Op>,
    /// How it ends.
    pub end: End,
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
        crate::ops::Renderer::default().render(op, &mut bytes);
        let line = std::str::from_utf8(&bytes).ok()?;
        match crate::wire::classify(crate::wire::trim_js(line)) {
            crate::wire::Classified::Request(r) => Some((i, r.id.to_json())),
            _ => None,
        }
    }

    /// Whether some prompt asks the model to `hang` (its turn, and waits on it, never end).
    pub fn may_hang(&self) -> bool {
        self.ops.iter().any(|op| prompt_text(op).contains("hang"))
    }

    /// Whether some op prompts a session (a runtime that calls a model needs the stub).
    pub fn has_prompts(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, Op::Prompt { .. }))
    }

    /// Upper bound of the seconds `slow` directives make turns wait.
    pub fn slow_secs(&self) -> f64 {
        self.ops.iter().map(slow_of_op).sum()
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
    while !u.is_empty() && ops.len() < MAX_OPS {
        match Op::arbitrary(&mut u) {
            Ok(op) => {
                if let Some(op) = tame(op, &mut rng) {
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

/// Makes an op safe and bounded for a real process, or drops it.
fn tame(op: Op, rng: &mut Rng) -> Option<Op> {
    Some(match op {
        // The fuzzer ends sequences itself; a process restart is out of scope here.
        Op::Eof | Op::Restart | Op::Shutdown { .. } => return None,
        Op::Request {
            method: MethodGen::Known(KnownMethod::Shutdown),
            ..
        } => return None,
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
                            BlockGen::Text(d) => BlockGen::Text(tame_directive(d, rng)),
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

fn tame_directive(d: Directive, rng: &mut Rng) -> Directive {
    match d {
        // Never run a fuzzed shell command: the default one is harmless.
        Directive::Tool { .. } => Directive::Tool {
            command: DEFAULT_TOOL_COMMAND.to_owned(),
        },
        // Nor a fuzzed tool input: an empty one is refused or harmless for every tool.
        Directive::Call { tool, .. } => Directive::Call {
            tool,
            input: "{}".to_owned(),
        },
        Directive::Slow { secs, then } => Directive::Slow {
            secs: secs.min(0.5),
            then: Box::new(tame_directive(*then, rng)),
        },
        Directive::Subagent { prompt } => Directive::Subagent {
            prompt: tame_directive(parse_directive(&prompt), rng).to_string(),
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
    }
    total
}

fn slow_of(d: &Directive) -> f64 {
    match d {
        Directive::Slow { secs, then } => secs + slow_of(then),
        Directive::Subagent { prompt } => slow_of(&parse_directive(prompt)),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(s.slow_secs() < 0.6 * s.ops.len() as f64 + 0.01);
        }
    }
}
