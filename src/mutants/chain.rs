//! Several mutants at once: their rewriters stacked like nested proxies.
//!
//! `a,b,c` behaves as `mutant a -- mutant b -- mutant c -- <runtime>`: client lines pass `a`, then
//! `b`, then `c` on their way to the runtime; runtime lines pass `c`, then `b`, then `a` on their way
//! to the client. So each rewriter sees the stream its own proxy would see, and a frame one of them
//! answers directly (e.g. `answers-notifications`) still passes the rewriters in front of it.

use super::rewrite::{InputAction, Rewriter};
use super::MutantKind;

/// The rewriters of a mutant list, outermost (closest to the client) first.
pub(crate) struct Chain {
    layers: Vec<Rewriter>,
}

impl Chain {
    /// A chain of the named mutants, outermost first.
    pub(crate) fn new(kinds: &[MutantKind]) -> Self {
        Chain {
            layers: kinds.iter().copied().map(Rewriter::new).collect(),
        }
    }

    /// Lines written to stdout before anything else: the innermost layer's first, then each outer
    /// layer's own, all passed through the layers in front of the one that wrote them.
    pub(crate) fn startup(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for k in (0..self.layers.len()).rev() {
            out.extend(self.layers[k].startup());
            out = self.outward(k, out);
        }
        out
    }

    /// Whether any layer keeps the runtime's stdin open after the client's EOF.
    pub(crate) fn ignores_eof(&self) -> bool {
        self.layers.iter().any(Rewriter::ignores_eof)
    }

    /// Whether a layer that lets its turns finish before the EOF reaches the runtime
    /// (`eof-waits-for-turns`) still sees a session running.
    pub(crate) fn holds_eof_for_turns(&self) -> bool {
        (self.layers.iter()).any(|l| l.waits_for_turns_at_eof() && l.busy())
    }

    /// Whether some layer swaps adjacent responses.
    pub(crate) fn swaps_responses(&self) -> bool {
        self.layers.iter().any(Rewriter::swaps_responses)
    }

    /// Whether some layer writes each frame to the client in pieces.
    pub(crate) fn fragments_output(&self) -> bool {
        self.layers.iter().any(Rewriter::fragments_output)
    }

    /// The longest hold of any layer that drops unserved input at EOF (see
    /// [`Rewriter::drops_at_eof`]).
    pub(crate) fn drops_at_eof(&self) -> Option<std::time::Duration> {
        self.layers.iter().filter_map(Rewriter::drops_at_eof).max()
    }

    /// The exit code the proxy reports, given the runtime's: each layer's rule, innermost first;
    /// `None` (never exit) as soon as one layer refuses to exit.
    pub(crate) fn exit_code(&self, runtime_code: i32) -> Option<i32> {
        self.layers
            .iter()
            .rev()
            .try_fold(runtime_code, |code, r| r.exit_code(code))
    }

    /// The bytes forwarded for an unterminated last line at EOF, through every layer.
    pub(crate) fn tail(&self, raw: &[u8]) -> Vec<u8> {
        self.layers.iter().fold(raw.to_vec(), |t, r| r.tail(&t))
    }

    /// One client line: lines for the runtime, and frames the layers answer directly.
    pub(crate) fn input(&mut self, raw: &[u8]) -> InputAction {
        let mut lines = vec![raw.to_vec()];
        let mut answer = Vec::new();
        for k in 0..self.layers.len() {
            let mut next = Vec::new();
            let mut answered = Vec::new();
            for l in &lines {
                let act = self.layers[k].input(l);
                if act.crash.is_some() {
                    // The process dies here: nothing further is forwarded or answered.
                    return InputAction {
                        forward: Vec::new(),
                        answer,
                        crash: act.crash,
                    };
                }
                next.extend(act.forward);
                answered.extend(act.answer);
            }
            answer.extend(self.outward(k, answered));
            lines = next;
        }
        InputAction {
            forward: lines,
            answer,
            crash: None,
        }
    }

    /// One runtime line → the lines the client sees.
    pub(crate) fn output(&mut self, line: &str) -> Vec<String> {
        self.outward(self.layers.len(), vec![line.to_owned()])
    }

    /// Passes `lines` through the layers in front of layer `k` (from `k - 1` out to `0`).
    fn outward(&mut self, k: usize, mut lines: Vec<String>) -> Vec<String> {
        for r in self.layers[..k].iter_mut().rev() {
            lines = lines.iter().flat_map(|l| r.output(l)).collect();
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: &str = r#"{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s1","status":"idle"}}"#;
    const UNKNOWN: &str = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: x"}}"#;

    #[test]
    fn a_chain_of_one_is_that_mutant() {
        let mut c = Chain::new(&[MutantKind::NoIdle]);
        let mut r = Rewriter::new(MutantKind::NoIdle);
        for l in [IDLE, UNKNOWN] {
            assert_eq!(c.output(l), r.output(l));
        }
        assert_eq!(c.exit_code(0), Some(0));
    }

    #[test]
    fn every_layer_rewrites_every_frame() {
        let mut c = Chain::new(&[
            MutantKind::NoIdle,
            MutantKind::UnknownMethod32000,
            MutantKind::StringIds,
        ]);
        assert!(c.output(IDLE).is_empty());
        assert_eq!(
            c.output(UNKNOWN),
            vec![r#"{"jsonrpc":"2.0","id":"3","error":{"code":-32000,"message":"unknown DeepSeek Harness SDK runtime method: x"}}"#.to_owned()]
        );
    }

    #[test]
    fn startup_lines_and_direct_answers_pass_the_outer_layers() {
        let mut c = Chain::new(&[
            MutantKind::DuplicateResponse,
            MutantKind::StdoutLogLine,
            MutantKind::AnswersNotifications,
        ]);
        assert_eq!(c.startup().len(), 1);
        let act = c.input(br#"{"jsonrpc":"2.0","method":"n"}"#);
        // answered by the innermost layer, then doubled by the outermost one
        assert_eq!(act.answer.len(), 2);
        assert_eq!(act.forward.len(), 1);
    }

    #[test]
    fn input_rewrites_feed_the_next_layer() {
        let mut c = Chain::new(&[MutantKind::CrAsSeparator, MutantKind::BomRejected]);
        let act = c.input("{\"id\":1,\"method\":\"a\"}\r\u{feff}{\"id\":2}".as_bytes());
        assert_eq!(act.forward, vec![b"{\"id\":1,\"method\":\"a\"}".to_vec()]);
    }

    #[test]
    fn exit_and_eof_behaviours_combine() {
        let mut c = Chain::new(&[
            MutantKind::SeqGap,
            MutantKind::ShutdownExit1,
            MutantKind::IgnoresEof,
        ]);
        assert!(c.ignores_eof());
        assert_eq!(c.exit_code(0), Some(0), "no shutdown answered yet");
        c.input(br#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#);
        c.output(r#"{"jsonrpc":"2.0","id":"bye","result":{}}"#);
        assert_eq!(c.exit_code(0), Some(1));
        assert_eq!(c.exit_code(130), Some(130));
        let mut c = Chain::new(&[MutantKind::ShutdownExit1, MutantKind::ShutdownNoExit]);
        c.input(br#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#);
        c.output(r#"{"jsonrpc":"2.0","id":"bye","result":{}}"#);
        assert_eq!(c.exit_code(0), None, "an inner layer that never exits wins");
        assert_eq!(
            Chain::new(&[MutantKind::TailProcessed, MutantKind::SeqGap]).tail(b"x"),
            b"x\n".to_vec()
        );
    }
}
