//! Seeded sequences of client operations for the black-box fuzzer.
//!
//! A case is `arbitrary` [`Op`]s decoded from a byte buffer that a seeded PRNG fills, so one
//! `(seed, case)` pair always gives the same sequence. The ops are then made safe and bounded for a
//! real process: no mid-sequence shutdown/EOF/restart (the fuzzer ends every sequence itself with a
//! barrier and then `shutdown` or EOF), tool calls only run the default harmless command, `slow`
//! waits at most half a second and `hang` is rare.

use super::sequence::{initialize, ordinary_sessions, End, Sequence};
use crate::directive::{directive_in, parse_directive, DEFAULT_TOOL_COMMAND};
use crate::ops::{BlockGen, BlocksGen, Directive, KnownMethod, MethodGen, Op, RawGen};
use arbitrary::{Arbitrary, Unstructured};

/// Ops decoded for one case at most.
const MAX_OPS: usize = 40;
/// One sequence in this many keeps its lifecycle operations.
const LIFECYCLE_ONE_IN: u64 = 8;
/// One sequence in this many keeps the directives the real runtime retries with a back-off of
/// ≈ 15 s (`empty`, `error500`, `sseerror`); the others answer `reply:` instead.
const RETRIES_ONE_IN: u64 = 4;
/// One sequence in this many keeps empty and path-like session ids, and ids with characters
/// outside printable ASCII (controls, non-ASCII): a runtime that mishandles them (the real 0.2.1rc2
/// one cannot send them in an HTTP header and retries its model requests for ~16 s) would
/// otherwise spend most sequences on that one bug.
const SPECIAL_SESSIONS_ONE_IN: u64 = 4;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blackbox::sequence::{INIT_ID, RETRY_SECS};
    use crate::ops::IdGen;

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
