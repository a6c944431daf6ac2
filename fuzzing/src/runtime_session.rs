//! Fuzz target `runtime_session`: structure-aware op sequences ([`dsh_conformance::ops`]) against the
//! in-memory reference runtime, every output frame checked by [`dsh_conformance::rules`].
//!
//! On top of the frame invariants, the driver knows the runtime is synchronous and in-memory:
//! - a line that is no request produces no output at all;
//! - every request is answered during its own `handle_line`, except the methods the contract
//!   answers later (`session/wait` after idle; legacy `session/prompt` after settling);
//! - when the ops run out, virtual time is advanced until nothing is scheduled (bounded), after
//!   which a deferred request may stay unanswered only if some input could say `hang`;
//!   after `shutdown` or EOF, deferred requests may stay unanswered (the process is gone);
//! - `shutdown` and EOF exit with code 0; the output one op causes is bounded.
//!
//! Input layout: one byte selects the edition (and, with its two top bits set, persistence under a
//! scratch `DSH_HOME`), the rest are [`Op`]s via `arbitrary`.
//!
//! `DSH_FUZZ_CHECKER=off` in the environment (read once per process) runs the target without the
//! rule checker: the runtime, the ops, the clock, the output's UTF-8 and newline checks, the exit
//! codes and the output bounds stay; what needs the checker goes (every frame's rules, silence for
//! non-requests, answers owed). It measures what the checker costs (`.ci/fuzz-bench`); it is no
//! way to fuzz.

use super::line_stream::Recorded;
use super::oracle::LineRef;
use arbitrary::{Arbitrary, Unstructured};
use dsh_conformance::ops::{Op, Renderer};
use dsh_conformance::rules::{Conversation, Profile, Received, Sent, Unsolicited};
use dsh_conformance::runtime::{Config, Edition, Runtime};
use dsh_conformance::wire::{LineDecoder, LineEvent};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Epoch milliseconds the virtual clock starts at.
const START_MS: u64 = 1_795_984_000_000;
/// Polls allowed while draining scheduled work at the end.
const MAX_DRAIN_POLLS: usize = 100_000;
/// Output one op may cause, beyond 64 bytes per input byte: a prompt running the deepest
/// subagent chain the ops can express (7 levels) writes about 400 kB, because every level adds a
/// turn to each of its ancestors (frames grow with the square of the depth).
const MAX_OP_OUTPUT: usize = 1 << 20;
/// Ops taken from one input (keeps one execution short).
const MAX_OPS: usize = 200;
/// Line bound of the driver's decoder.
const MAX_LINE: usize = 1 << 20;

/// Whether the rule checker judges the runtime's output: unless `DSH_FUZZ_CHECKER` is `off`, read
/// once per process.
pub fn checker_on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("DSH_FUZZ_CHECKER").is_none_or(|v| v != "off"))
}

/// Runs the check; panics with a description on failure (the fuzz entry point).
pub fn run(data: &[u8]) {
    if let Err(e) = check(data) {
        panic!("runtime_session: {e}");
    }
}

/// How the runtime under test is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    /// Protocol edition.
    pub edition: Edition,
    /// Whether sessions persist under a scratch `DSH_HOME` (so resume and restarts matter).
    pub persistent: bool,
}

/// Decodes the input into a setup and ops.
pub fn decode(data: &[u8]) -> (Setup, Vec<Op>) {
    let mut u = Unstructured::new(data);
    let b = u.arbitrary::<u8>().unwrap_or(0);
    let edition = match b % 3 {
        0 => Edition::Current,
        1 => Edition::Aug2026,
        _ => Edition::Legacy,
    };
    let setup = Setup {
        edition,
        // One run in four: file I/O makes these runs several times slower.
        persistent: b & 0xc0 == 0xc0,
    };
    // Ops until the data runs out, keeping all decoded before one fails (no continuation bytes:
    // every byte shapes an op).
    let mut ops = Vec::new();
    while !u.is_empty() && ops.len() < MAX_OPS {
        match Op::arbitrary(&mut u) {
            Ok(op) => ops.push(op),
            Err(_) => break,
        }
    }
    (setup, ops)
}

/// Runs the check on one input.
pub fn check(data: &[u8]) -> Result<(), String> {
    let (setup, ops) = decode(data);
    run_ops(setup, &ops)
}

struct Driver {
    rt: Runtime,
    /// The rule checker; `None` when it is off ([`checker_on`]).
    ck: Option<Conversation>,
    out: Vec<u8>,
    in_bytes: usize,
    out_bytes: usize,
    in_mark: usize,
    out_mark: usize,
    /// The process exited (shutdown or EOF); ops wait for a restart.
    gone: bool,
}

impl Driver {
    /// Checks the output produced by one call; returns the responses in it. `what` names the call
    /// in an error (built only then: formatting it per line cost more than some lines' checks).
    fn drain_output(&mut self, what: impl Fn() -> String) -> Result<Vec<Received>, String> {
        self.out_bytes += self.out.len();
        let mut got = Vec::new();
        if self.out.is_empty() {
            return Ok(got);
        }
        let text = std::str::from_utf8(&self.out)
            .map_err(|e| format!("{}: output is not UTF-8: {e}", what()))?;
        let body = text
            .strip_suffix('\n')
            .ok_or_else(|| format!("{}: output does not end with a newline", what()))?;
        let Some(ck) = self.ck.as_mut() else {
            self.out.clear();
            return Ok(got);
        };
        for line in body.split('\n') {
            got.push(
                ck.received_text(line)
                    .into_result(line)
                    .map_err(|e| format!("{}: {e}", what()))?,
            );
        }
        self.out.clear();
        Ok(got)
    }

    fn line(&mut self, line: &str, now: u64) -> Result<(), String> {
        let sent = self.ck.as_mut().map(|ck| ck.sent(line));
        self.rt.handle_line(line, now, &mut self.out);
        let what = || format!("after reading {}", clip(line));
        let got = self.drain_output(what)?;
        let Some(ck) = &self.ck else {
            return Ok(());
        };
        if sent == Some(Sent::Nothing) && !got.is_empty() {
            return Err(format!(
                "{}: output for a line that is no request: {got:?}",
                what()
            ));
        }
        let deferred = &ck.checker().profile().deferred;
        if let Some((key, method)) = ck
            .checker()
            .pending()
            .into_iter()
            .find(|(_, m)| !deferred.contains(m))
        {
            return Err(format!(
                "{}: request {key} ({method}) was not answered while it was handled",
                what()
            ));
        }
        Ok(())
    }

    /// Bounded growth: what one op (with the work it scheduled) makes the runtime write is
    /// bounded; called between ops, it judges the previous one.
    fn check_growth(&mut self, next: &Op) -> Result<(), String> {
        let produced = self.out_bytes - self.out_mark;
        let allowed = MAX_OP_OUTPUT + 64 * (self.in_bytes - self.in_mark);
        if produced > allowed {
            return Err(format!(
                "one op made the runtime write {produced} bytes (bound {allowed}) before {next:?}"
            ));
        }
        self.out_mark = self.out_bytes;
        self.in_mark = self.in_bytes;
        Ok(())
    }

    fn poll(&mut self, now: u64) -> Result<(), String> {
        self.rt.poll(now, &mut self.out);
        self.drain_output(|| "while polling".into()).map(drop)
    }
}

/// A scratch `DSH_HOME`, unique per run (tests run in parallel threads), removed on drop.
struct Home(std::path::PathBuf);

impl Home {
    fn new() -> Home {
        static RUNS: AtomicU64 = AtomicU64::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        // Memory-backed where there is one: this directory is made and removed every run.
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        // The process id zero-padded: every process then writes paths of one length (a shorter
        // pid changed the runtime's output, and so the coverage, from one fuzzing run to the next).
        let dir = base.join(format!("dsh-fuzz-home-{:010}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Home(dir)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(setup: Setup, home: Option<&Home>, checked: bool) -> Driver {
    let mut cfg = Config::new(setup.edition);
    cfg.home = home.map(|h| h.0.clone());
    Driver {
        rt: Runtime::new(cfg),
        ck: checked.then(|| {
            let profile = Profile::for_edition(setup.edition, setup.persistent);
            Conversation::new(profile, Unsolicited::Judged)
        }),
        out: Vec::new(),
        in_bytes: 0,
        out_bytes: 0,
        in_mark: 0,
        out_mark: 0,
        gone: false,
    }
}

/// Ends the process by EOF unless it already exited; either way the exit code must be 0.
fn stop(d: &mut Driver, now: u64) -> Result<(), String> {
    if d.rt.exit_code().is_none() {
        let code = d.rt.on_eof(now, &mut d.out);
        d.drain_output(|| "at EOF".into())?;
        if code != 0 || d.rt.exit_code() != Some(0) {
            return Err(format!("EOF exited with {code}"));
        }
    }
    match d.rt.exit_code() {
        Some(0) => {
            d.gone = true;
            Ok(())
        }
        other => Err(format!("the process exited with {other:?}")),
    }
}

/// Runs `ops` against a fresh reference runtime, checking every invariant (those of the rule
/// checker only while it is on: [`checker_on`]).
pub fn run_ops(setup: Setup, ops: &[Op]) -> Result<(), String> {
    drive(setup, ops, checker_on())
}

/// [`run_ops`], with the rule checker (`checked`) or without.
fn drive(setup: Setup, ops: &[Op], checked: bool) -> Result<(), String> {
    // The same input writes the same ids: a run is reproducible, and the two runs of
    // `.ci/fuzz-bench` (with the checker and without) explore alike.
    dsh_conformance::runtime::seed_ids(Some(0));
    let home = setup.persistent.then(Home::new);
    let mut d = start(setup, home.as_ref(), checked);
    let mut dec = LineDecoder::new(MAX_LINE);
    let mut r = Renderer::default();
    let mut now = START_MS;
    let mut may_hang = false;
    let mut bytes = Vec::new();
    // The rendered lines, in one buffer (no `String` per line).
    let mut lines = Recorded::default();
    for op in ops {
        if d.rt.exit_code().is_some() {
            d.gone = true;
        }
        d.check_growth(op)?;
        match op {
            Op::Restart => {
                stop(&mut d, now)?;
                d = start(setup, home.as_ref(), checked);
                dec = LineDecoder::new(MAX_LINE);
                continue;
            }
            // The process is gone: nothing more reaches it until a restart.
            _ if d.gone => continue,
            Op::Advance(ms) => {
                now += u64::from(*ms);
                d.poll(now)?;
                continue;
            }
            Op::Eof => {
                dec.finish();
                stop(&mut d, now)?;
                continue;
            }
            _ => {}
        }
        bytes.clear();
        r.render(op, &mut bytes);
        d.in_bytes += bytes.len();
        may_hang |= bytes.windows(4).any(|w| w.eq_ignore_ascii_case(b"hang"));
        lines.clear();
        dec.push(&bytes, &mut |e| {
            if let LineEvent::Line(_) = e {
                super::line_stream::record(&mut lines, e);
            }
        });
        for l in lines.iter() {
            let LineRef::Line(l) = l else { continue };
            d.line(l, now)?;
            if d.rt.exit_code().is_some() {
                // `shutdown` was answered: the process stops reading.
                break;
            }
        }
        if d.rt.exit_code().is_none() {
            d.poll(now)?;
        }
    }
    d.check_growth(&Op::Eof)?;
    if !d.gone && d.rt.exit_code().is_none() {
        // Let every scheduled turn run to its end.
        let mut polls = 0;
        while let Some(due) = d.rt.next_deadline() {
            now = now.max(due);
            d.poll(now)?;
            polls += 1;
            if polls > MAX_DRAIN_POLLS {
                return Err("scheduled work never ends".into());
            }
        }
        let produced = d.out_bytes - d.out_mark;
        if produced > MAX_OP_OUTPUT * ops.len() {
            return Err(format!(
                "finishing the scheduled work wrote {produced} bytes for {} ops",
                ops.len()
            ));
        }
        let owed = (d.ck.as_ref()).and_then(|ck| ck.checker().pending().into_iter().next());
        if let Some((key, method)) = owed {
            if !may_hang {
                return Err(format!(
                    "request {key} ({method}) is still unanswered after all work settled"
                ));
            }
        }
    }
    stop(&mut d, now)
}

fn clip(s: &str) -> String {
    if s.len() <= 200 {
        return s.to_owned();
    }
    let end = (0..=200)
        .rev()
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &s[..end], s.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_conformance::ops::SessionGen;
    use dsh_conformance::ops::{BlockGen, BlocksGen, Directive, IdGen, PathGen, ProviderGen};

    fn prompt(id: u16, s: u8, d: Directive) -> Op {
        Op::Prompt {
            id: IdGen::Num(id),
            session: SessionGen::Pick(s),
            blocks: BlocksGen::List(vec![BlockGen::Text(d)]),
        }
    }

    fn init() -> Op {
        Op::Initialize {
            id: IdGen::Num(1),
            cwd: PathGen::Root,
            provider: ProviderGen::Official,
            max_tokens: None,
            effort: None,
        }
    }

    #[test]
    fn a_plain_conversation_keeps_every_invariant_in_every_edition() {
        for e in Edition::ALL {
            let ops = vec![
                init(),
                prompt(2, 0, Directive::Reply("hi".into())),
                prompt(
                    3,
                    0,
                    Directive::Slow {
                        secs: 0.5,
                        then: Box::new(Directive::Tool {
                            command: "echo hi".into(),
                        }),
                    },
                ),
                prompt(
                    4,
                    1,
                    Directive::Subagent {
                        prompt: "maxtokens".into(),
                    },
                ),
                Op::Wait {
                    id: IdGen::Num(5),
                    session: SessionGen::Pick(0),
                },
                Op::Advance(1000),
                prompt(6, 2, Directive::Error500),
                Op::Shutdown { id: IdGen::Num(9) },
            ];
            for persistent in [false, true] {
                let setup = Setup {
                    edition: e,
                    persistent,
                };
                run_ops(setup, &ops).unwrap_or_else(|err| panic!("{setup:?}: {err}"));
                // DSH_FUZZ_CHECKER=off: the same run without the rule checker.
                drive(setup, &ops, false)
                    .unwrap_or_else(|err| panic!("{setup:?}, no checker: {err}"));
            }
        }
    }

    #[test]
    fn a_session_resumed_after_a_restart_answers_every_request() {
        let ops = vec![
            init(),
            prompt(2, 0, Directive::Reply("one".into())),
            Op::Restart,
            init(),
            prompt(3, 0, Directive::Reply("refused: already exists".into())),
            Op::Resume {
                id: IdGen::Num(4),
                session: SessionGen::Pick(0),
            },
            prompt(5, 0, Directive::Reply("two".into())),
            Op::Wait {
                id: IdGen::Num(6),
                session: SessionGen::Pick(0),
            },
        ];
        let setup = Setup {
            edition: Edition::Current,
            persistent: true,
        };
        run_ops(setup, &ops).unwrap();
    }

    #[test]
    fn the_checker_notices_a_missing_answer() {
        // A hand-made runtime failure: feed a request line to a checker and never answer it.
        let mut ck =
            dsh_conformance::rules::Checker::new(Profile::for_edition(Edition::Current, false));
        ck.sent(r#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#);
        assert_eq!(ck.pending(), vec![("7".into(), "shutdown".into())]);
        let bad = ck.received_text(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#);
        assert!(!bad.violations.is_empty());
        assert_eq!(ck.pending(), vec![("7".into(), "shutdown".into())]);
        let good = ck.received_text(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        assert!(good.violations.is_empty(), "{good:?}");
        assert!(ck.pending().is_empty());
    }
}
