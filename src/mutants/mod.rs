//! Deliberately broken runtimes, to prove that every conformance check can fail.
//!
//! A mutant is a stdio proxy in front of a good runtime (normally ours) that breaks exactly one
//! rule of the contract: it rewrites, drops, adds or reorders frames, or misbehaves at exit. Because
//! it works on the wire, the same mutant can wrap any runtime. `dsh-conformance mutant <name> -- <cmd>`
//! runs one, and `mutant a,b,c -- <cmd>` stacks several (a runtime with several independent bugs);
//! the test suite asserts that each is caught by the check named in [`Mutant::catches`]
//! while the unwrapped runtime passes everything.

mod chain;
mod frames;
mod history_file;
mod proxy;
mod rewrite;

pub use proxy::run;

/// One way of breaking the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mutant {
    /// Stable name (the CLI argument).
    pub name: &'static str,
    /// What it breaks, in one line.
    pub breaks: &'static str,
    /// The id of the check that must catch it.
    pub catches: &'static str,
    /// Caught only with `--strict-upstream` (it breaks upstream fidelity, not what clients need).
    pub strict: bool,
}

macro_rules! mutants {
    ($($name:literal => $catches:literal $(($strict:ident))? : $breaks:literal,)*) => {
        /// Every mutant, in a stable order.
        pub const ALL: &[Mutant] = &[$(Mutant {
            name: $name, breaks: $breaks, catches: $catches, strict: mutants!(@strict $($strict)?),
        },)*];
    };
    (@strict strict) => { true };
    (@strict) => { false };
}

mutants! {
    "wrong-server-name" => "initialize.server-info": "initialize answers serverInfo.name \"my-runtime\"",
    "unknown-method-32000" => "error.unknown-method": "unknown methods answer code -32000 instead of -32603",
    "unknown-method-32601" => "error.unknown-method" (strict): "unknown methods answer the transport's code -32601 (with upstream's message)",
    "answers-notifications" => "frame.notifications-ignored": "a client notification gets a response frame",
    "replies-to-malformed" => "frame.malformed-ignored": "a malformed line gets a -32700 error frame",
    "message-id-mismatch" => "receipt.id-matches-inserted": "the prompt response carries a messageId the receipt never had",
    "no-receipt" => "receipt.id-matches-inserted": "the agent/inbox/spliced receipt of a prompt is never sent",
    "response-before-receipt" => "receipt.precedes-response": "the prompt response is sent before its receipt",
    "frozen-turn" => "turn.counts-per-session": "every turn is numbered 1",
    "shared-turn-counter" => "turn.sessions-isolated": "turn numbers count across all sessions, not per session",
    "replays-old-events" => "turn.no-replay": "a later prompt re-sends the session's earlier events first",
    "idle-before-turn-end" => "turn.end-before-idle": "session.status idle is sent before the turn/end event",
    "no-idle" => "status.idle-after-turn": "session.status idle is never sent",
    "seq-gap" => "session.seq-contiguous": "event seq skips a number after the third event",
    "stdout-log-line" => "stdout.frames-only": "a plain-text log line is written to stdout",
    "pretty-printed" => "stdout.frames-only": "frames are pretty-printed over several lines",
    "string-ids" => "response.id-type-preserved": "numeric request ids are echoed as strings",
    "duplicate-response" => "response.exactly-once": "every response is sent twice",
    "null-id-answered" => "frame.id-invalid-is-notification": "a request with id null is answered",
    "batch-supported" => "frame.batch-ignored": "a JSON array of requests is unpacked and served",
    "cr-as-separator" => "frame.cr-not-separator": "a lone \\r ends a frame",
    "bom-rejected" => "frame.whitespace-trimmed": "a line starting with a BOM is dropped",
    "tail-processed" => "frame.unterminated-tail-dropped": "an unterminated last line is served at EOF",
    "shutdown-no-exit" => "lifecycle.shutdown-exits-0": "the process stays alive after answering shutdown",
    "shutdown-exit-1" => "lifecycle.shutdown-exits-0": "the process exits 1 after shutdown",
    "ignores-eof" => "lifecycle.eof-exits-0": "stdin EOF is ignored; the process never exits",
    "eof-drops-pending" => "lifecycle.eof-exits-0": "at stdin EOF, lines read in the last 150 ms are dropped unanswered (a runtime that exits before its pending handlers finish)",
    "crlf-output" => "stdout.lf-only": "every frame ends in \\r\\n",
    "spaced-output" => "stdout.compact": "frames have a space after \"jsonrpc\":, as a pretty encoder writes",
    "reordered-members" => "stdout.compact" (strict): "every object's members come in reverse order (no client cares; upstream's bytes differ, so only --strict-upstream fails it)",
    "no-event-time" => "event.time": "session.event envelopes carry no time",
    "resume-replays-history" => "resume.no-replay": "session/resume re-sends the session's stored events (kept under DSH_HOME) before its answer",
    "wd-relative-to-process" => "working-directory.get-set": "a relative working-directory path is resolved against the process's directory, not the session's",
    "prototype-methods" => "error.unknown-method": "method names an object inherits (`constructor`, `toString` …) are served from Object.prototype, as `handlers[method]` would",
    "refuses-reinitialize" => "initialize.repeatable": "an initialize after one succeeded is refused with -32603 `already initialized`",
    "invalid-params-32602" => "error.no-reserved-codes": "a known method's errors carry JSON-RPC's -32602 (Invalid params) instead of -32603, messages unchanged",
    "non-json-literals-served" => "frame.non-json-literals-ignored": "NaN, Infinity and -Infinity outside strings are read as null, not refused, so lines holding them are served (as a runtime on Python's json.loads serves them)",
    "surrogates-replaced" => "frame.lone-surrogates-echoed": "lone surrogate escapes are decoded as U+FFFD (as Go's encoding/json decodes them), so ids, methods and session ids holding one come back changed",
    "writer-dies-on-surrogate" => "frame.lone-surrogates-survived": "the first frame holding a lone surrogate kills the writer (as Python's strict UTF-8 stdout raises on it): it and every later frame are lost",
    "rejects-no-jsonrpc" => "frame.jsonrpc-member-not-checked": "a request without \"jsonrpc\":\"2.0\" is rejected (-32603 `invalid request: jsonrpc must be \"2.0\"`)",
}

/// A runtime with a model of its own: every assistant text is replaced, so the stub's `reply:`
/// directives are not followed. It breaks no rule; the checks that need a scripted model must be
/// UNTESTABLE on it (`dsh-conformance mutant own-model -- <cmd>`), not FAIL.
pub const OWN_MODEL: Mutant = Mutant {
    name: "own-model",
    breaks: "assistant texts come from a model of its own, not from the stub's directives",
    catches: "",
    strict: false,
};

/// A runtime whose output reaches the client in pieces: every frame is written in three parts a
/// few milliseconds apart, cut inside its first multi-byte character when it has one, with the
/// newline alone last (`dsh-conformance mutant fragmented-output -- <cmd>`). It breaks no rule
/// (a pipe may deliver any runtime's writes so); every check must pass on it.
pub const FRAGMENTED_OUTPUT: Mutant = Mutant {
    name: "fragmented-output",
    breaks: "nothing: each frame arrives in three writes a few ms apart, the newline last",
    catches: "",
    strict: false,
};

/// A runtime that answers pipelined requests out of order: of two responses written one after
/// the other, the second goes out first (a response waits up to 20 ms for a second one; it never
/// moves past a notification). The contract lets responses come back in any order (§2.3) and
/// clients match them by id, so every check must pass on it.
pub const SWAPPED_RESPONSES: Mutant = Mutant {
    name: "swapped-responses",
    breaks: "nothing: of two adjacent responses the second comes first (any order is allowed)",
    catches: "",
    strict: false,
};

/// The proxies that break no rule, beside [`ALL`].
pub const BENIGN: &[Mutant] = &[OWN_MODEL, FRAGMENTED_OUTPUT, SWAPPED_RESPONSES];

/// Looks a mutant up by name.
pub fn find(name: &str) -> Option<&'static Mutant> {
    ALL.iter().chain(BENIGN).find(|m| m.name == name)
}

/// Looks up a comma-separated list of mutant names (`a,b,c`), in order. The mutants are stacked
/// like nested proxies, `a` closest to the client (see `chain.rs`). An empty list, an unknown name
/// or a name given twice is an error.
pub fn find_all(spec: &str) -> Result<Vec<&'static Mutant>, String> {
    let mut out: Vec<&'static Mutant> = Vec::new();
    for name in spec.split(',').map(str::trim) {
        let m = find(name).ok_or_else(|| format!("unknown mutant {name:?}"))?;
        if out.contains(&m) {
            return Err(format!("mutant {name:?} is listed twice"));
        }
        out.push(m);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutant_lists_are_comma_separated_names() {
        let ms = find_all("seq-gap, string-ids").unwrap();
        assert_eq!(
            ms.iter().map(|m| m.name).collect::<Vec<_>>(),
            ["seq-gap", "string-ids"]
        );
        assert_eq!(find_all("no-idle").unwrap(), [find("no-idle").unwrap()]);
        assert!(find_all("").is_err());
        assert!(find_all("no-idle,nope").unwrap_err().contains("nope"));
        assert!(find_all("no-idle,no-idle").is_err());
    }

    #[test]
    fn mutant_names_are_unique_and_each_names_a_check() {
        let mut names: Vec<_> = ALL.iter().map(|m| m.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for m in ALL {
            assert!(m.catches.contains('.'), "{} catches {}", m.name, m.catches);
            assert_eq!(find(m.name), Some(m));
        }
    }
}
