//! The checks: stable ids, the contract section each enforces, severity, editions, and the rule.

use std::fmt;

/// How much a failed check matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The official clients break without it: a failure fails the run (exit 1).
    Must,
    /// Upstream behaviour clients do not strictly need: a failure is reported, the run still passes.
    Should,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Must => "MUST",
            Severity::Should => "SHOULD",
        })
    }
}

pub use crate::edition::{Edition, Editions};

/// One check's identity and rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckInfo {
    /// Stable id, `area.rule`.
    pub id: &'static str,
    /// The sections of the contract it enforces, `§N.M` separated by spaces: each one is
    /// `docs/CONTRACT.md#sN.M` ([`crate::contract`]).
    pub section: &'static str,
    /// MUST or SHOULD.
    pub severity: Severity,
    /// Where it applies.
    pub editions: Editions,
    /// The rule in one line.
    pub rule: &'static str,
    /// Checks this one needs to have passed to be meaningful: when one of them fails (or is
    /// itself blocked), this check is `BLOCKED` and not run.
    pub requires: &'static [&'static str],
    /// Whether the rule engine judges this rule over every transcript of the run
    /// ([`crate::suite::stream`]), besides the check's own traces (if any).
    pub stream: bool,
}

macro_rules! checks {
    ($($id:literal $sec:literal $sev:ident $ed:ident $([$($req:literal)*])? $($flag:ident)? : $rule:literal;)*) => {
        /// Every check, in report order.
        pub const CHECKS: &[CheckInfo] = &[$(CheckInfo {
            id: $id, section: $sec, severity: Severity::$sev, editions: Editions::$ed, rule: $rule,
            requires: &[$($($req),*)?], stream: checks!(@stream $($flag)?),
        },)*];
    };
    (@stream stream) => { true };
    (@stream) => { false };
}

checks! {
    // `[ids]` lists a check's prerequisites; `stream` marks a rule the engine judges over every
    // transcript of the run (src/suite/stream.rs).
    // Process and output discipline.
    "stdout.frames-only" "§2.4 §7" Must ALL stream: "every stdout line is one JSON-RPC 2.0 object frame; nothing else is written to stdout";
    "stdout.compact" "§2.4" Should ALL stream: "every frame is written as JSON.stringify writes it: no whitespace between tokens (with --strict-upstream, members in upstream's order too)";
    "stdout.lf-only" "§2.4" Should ALL stream: "every frame ends in \\n alone, not \\r\\n";
    "response.answered" "§2.3" Must ALL: "a request sent after initialize is answered (an unknown method gets an error response at once)";
    "response.exactly-once" "§2.3" Must ALL ["response.answered" "response.id-type-preserved"] stream: "every request with a valid id gets exactly one response carrying that id; no response is sent twice";
    "response.id-type-preserved" "§2.2" Must ALL ["response.answered"] stream: "a numeric id is echoed as a number and a string id as a string, \"\" and 0 included";
    "event.time" "§5" Must ALL stream: "every session.event envelope carries time, epoch milliseconds as a number";
    // Framing and classification.
    "frame.malformed-ignored" "§2.2" Must ALL ["response.answered"]: "a line that is not JSON gets no output and the runtime keeps serving";
    "frame.non-object-ignored" "§2.2" Must ALL ["response.answered"]: "JSON scalars (42, \"s\", null, true) get no output";
    "frame.batch-ignored" "§2.2" Must ALL ["response.answered"]: "a JSON array, even of valid requests, is dropped whole with no output";
    "frame.id-invalid-is-notification" "§2.2" Must ALL ["response.answered"]: "a request whose id is null, boolean, object or array gets no response";
    "frame.non-string-method-ignored" "§2.2" Must ALL ["response.answered"]: "an id with a non-string method is a response to nobody: no output";
    "frame.notifications-ignored" "§2.3" Must ALL ["response.answered"]: "client notifications (even initialize or shutdown without id) produce no output and no effect";
    "frame.unknown-response-ignored" "§2.4" Must ALL ["response.answered"]: "responses to ids the runtime never used are ignored";
    "frame.jsonrpc-member-not-checked" "§2.2" Should ALL ["response.answered"]: "frames without \"jsonrpc\" or with another value are served normally";
    "frame.id-number-echo" "§2.2" Should ALL ["response.answered" "response.id-type-preserved"]: "numeric ids echo as JavaScript prints the double (1e3 → 1000, 1.5 → 1.5)";
    "frame.params-normalised" "§2.2" Should ALL ["response.answered"]: "non-object params (array, string, number, null) are treated as {}";
    "frame.crlf-accepted" "§2.1" Must ALL ["response.answered"]: "frames ending in \\r\\n are served";
    "frame.cr-not-separator" "§2.1" Should ALL ["response.answered" "frame.malformed-ignored"]: "a lone \\r does not end a frame (A\\rB\\n is one malformed line)";
    "frame.whitespace-trimmed" "§2.1" Should ALL ["response.answered"]: "blank lines are skipped; padding, a BOM and U+00A0 around a frame are trimmed";
    "frame.split-writes" "§2.1" Must ALL ["response.answered"]: "a frame split across writes, even inside a UTF-8 character, is served once complete";
    "frame.unterminated-tail-dropped" "§2.1" Should ALL ["response.answered" "lifecycle.eof-exits-0"]: "an unterminated last line at EOF is not served";
    "frame.invalid-utf8-replaced" "§2.1" Should ALL ["response.answered"]: "invalid UTF-8 inside a string becomes U+FFFD and the frame is served";
    "frame.non-json-literals-ignored" "§2.2" Must ALL ["response.answered" "frame.malformed-ignored"]: "a line holding NaN, Infinity or -Infinity outside a string (an id, a params value, any member) is not JSON: no output, and the runtime keeps serving";
    "frame.lone-surrogates-survived" "§2.4" Must ALL ["response.answered" "response.id-type-preserved"]: "lines holding lone surrogate escapes (\\ud800) in an id, a method, a params key or prompt text are served, and the runtime keeps serving";
    "frame.lone-surrogates-echoed" "§2.4" Should ALL ["response.id-type-preserved" "error.unknown-method" "frame.lone-surrogates-survived"]: "lone surrogate escapes in ids, methods and session ids come back as JSON.stringify writes them (\"\\ud800\"), never as U+FFFD or ?";
    "frame.large-line" "§2.1" Should ALL ["response.answered"]: "a 10 MB request line is answered";
    "frame.deep-nesting" "§2.1" Should ALL ["response.answered"]: "params nested 1000 deep are answered";
    // Errors.
    "error.unknown-method" "§2.3 §9" Must ALL ["response.answered"]: "an unknown method gets -32603 with the message `unknown DeepSeek Harness SDK runtime method: <m>` verbatim (code -32601 accepted unless --strict-upstream; the message never relaxed)";
    "error.no-reserved-codes" "§2.3" Should ALL ["response.answered"] stream: "a known method's errors are -32603 (never -32700, -32600, -32602 or another code) and no error carries a data member; the other checks judge error messages only";
    // initialize.
    "initialize.server-info" "§3.1" Must ALL: "initialize answers {serverInfo:{name:\"deepseek-harness-sdk-runtime\", version:<string>}}";
    "initialize.max-tokens-validated" "§3.1 §9" Should ALL ["response.answered"]: "maxTokens 0, -1, 1.5 and \"5\" fail with `initialize maxTokens must be a positive safe integer`";
    "initialize.unknown-provider" "§3.1 §9" Should ALL ["response.answered"]: "an unknown provider fails with `no adapter registered for provider \"<p>\"`";
    "initialize.repeatable" "§3.1" Should QUEUED ["response.answered"]: "a second initialize succeeds with the same serverInfo";
    "initialize.gates-requests" "§3.2 §9" Must CURRENT ["response.answered"]: "session requests before initialize fail with `SDK server is not initialized`";
    // session/prompt and its receipt.
    "prompt.message-id" "§3.2" Must QUEUED ["response.answered"]: "session/prompt answers {messageId: <non-empty string>}";
    "receipt.id-matches-inserted" "§5 §8.4" Must QUEUED ["prompt.message-id" "turn.end-reason"]: "an agent/inbox/spliced receipt whose inserted[].id equals the messageId is sent for every prompt";
    "receipt.precedes-response" "§5" Must QUEUED ["receipt.id-matches-inserted"]: "the prompt's receipt is written before the prompt's response";
    "turn.end-reason" "§5 §8.4" Must ALL ["response.answered" "prompt.message-id"]: "turn/end carries {turn: <int>, reason: {kind: <string>}}";
    "turn.user-message-id" "§5" Should QUEUED ["receipt.id-matches-inserted" "turn.end-reason"]: "the turn's user/message event carries data.id == messageId";
    "turn.end-before-idle" "§5 §8.4" Must QUEUED ["turn.end-reason"]: "turn/end of a prompt's turn comes before the session's idle status";
    "status.idle-after-turn" "§4 §8.4" Must QUEUED ["prompt.message-id" "turn.end-before-idle"]: "a prompted session reports session.status running, then idle when its turns end";
    "turn.final-text" "§5 §8.4" Must ALL ["turn.end-reason"]: "the turn's assistant/message has data.message.content[] text blocks holding the reply";
    "turn.counts-per-session" "§5 §6" Must ALL ["turn.end-reason"]: "turns of a session are numbered 1, 2, 3 … across prompts";
    "turn.no-replay" "§6" Must ALL ["turn.end-reason" "receipt.id-matches-inserted" "receipt.precedes-response"]: "a second prompt on a session streams only new events";
    "turn.sessions-isolated" "§4 §6" Must ALL ["turn.end-reason" "turn.counts-per-session"]: "two sessions have their own turn numbers and seq, and their events carry their own sessionId";
    "session.seq-contiguous" "§5" Must ALL ["turn.end-reason"] stream: "each session's event seq runs 0, 1, 2 … without gaps or repeats";
    "turn.overlap-queued" "§6" Must QUEUED ["turn.end-reason" "status.idle-after-turn"]: "a prompt to a running session is accepted and runs as the next turn; one idle after both";
    "turn.overlap-rejected" "§6" Must LEGACY ["response.answered"]: "a prompt to a session with a prompt in flight fails with `session already has an active prompt: <id>`";
    "legacy.session-finished" "§4" Must LEGACY ["turn.end-reason"]: "session.finished {sessionId, status, reason} precedes the {accepted:true} prompt response";
    "subagent.notifications" "§4" Should QUEUED ["turn.end-reason"]: "a subagent run is bracketed by subagent.started and subagent.finished naming parent and child";
    "session.ids-are-data" "§3.2" Should QUEUED ["turn.end-reason"]: "session ids such as ../x, a/b, . and .. are plain data: prompts on them complete like any other";
    // Methods of the 0.2.x release.
    "resume.validation" "§3.3 §9" Should CURRENT ["response.answered" "prompt.message-id"]: "session/resume rejects a missing or empty sessionId and unknown or already-open sessions with the contract's messages";
    "resume.across-processes" "§3.3" Must CURRENT ["turn.end-reason" "lifecycle.shutdown-exits-0" "turn.counts-per-session" "turn.sessions-isolated"]: "a session resumed in a new process continues its turn numbers and seq";
    "resume.no-replay" "§3.3" Should CURRENT ["resume.across-processes" "receipt.precedes-response"]: "session/resume streams none of the stored history: the resumed session's next event is the next prompt's receipt";
    "wait.settles-after-idle" "§3.4" Must CURRENT ["status.idle-after-turn"]: "session/wait answers {} after the session's idle status, and rejects unknown sessions";
    "working-directory.get-set" "§3.5" Must CURRENT ["response.answered"]: "working-directory get/set answer {cwd}; set (a path absolute or relative to the session's directory) streams working-directory/change first";
    "working-directory.validation" "§3.5 §9" Should CURRENT ["response.answered"]: "working-directory requests reject a missing sessionId, a missing path and a missing directory";
    // Lifecycle.
    "lifecycle.shutdown-responds" "§3.6" Must ALL ["response.answered"]: "shutdown answers {} (also twice in one write)";
    "lifecycle.shutdown-exits-0" "§3.6 §7" Must ALL ["lifecycle.shutdown-responds"]: "after answering shutdown the process exits 0 by itself, stdin still open";
    "lifecycle.shutdown-after-empty-session-id" "§3.2 §3.6" Should QUEUED ["lifecycle.shutdown-exits-0"]: "after a prompt on session id \"\", shutdown still answers {} and the process exits 0";
    "lifecycle.eof-exits-0" "§7" Must ALL ["response.answered"]: "stdin EOF makes the process exit 0 promptly, answering what it had read";
    "lifecycle.sigterm-exits-0" "§7" Should ALL ["response.answered"]: "SIGTERM makes the process exit 0";
    "lifecycle.sigint-exits-130" "§7" Should ALL ["response.answered"]: "SIGINT makes the process exit 130";
}

/// Looks a check up by id.
pub fn find(id: &str) -> Option<&'static CheckInfo> {
    CHECKS.iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_ids_are_unique_and_well_formed() {
        let mut ids: Vec<_> = CHECKS.iter().map(|c| c.id).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate check id");
        for c in CHECKS {
            assert!(
                c.id.split_once('.')
                    .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty()),
                "{}",
                c.id
            );
            assert!(c.section.starts_with('§'), "{}", c.id);
            assert!(c.editions.0 != 0 && c.editions.0 <= 7, "{}", c.id);
        }
    }

    #[test]
    fn every_mutant_names_a_registered_check() {
        for m in crate::mutants::ALL {
            assert!(
                find(m.catches).is_some(),
                "mutant {} catches unknown check {}",
                m.name,
                m.catches
            );
        }
    }

    #[test]
    fn prerequisites_name_registered_checks_and_form_no_cycle() {
        for c in CHECKS {
            for r in c.requires {
                assert!(find(r).is_some(), "{} requires unknown check {r}", c.id);
                assert_ne!(*r, c.id, "{} requires itself", c.id);
            }
        }
        // No cycle: following prerequisites from any check never comes back to it.
        fn reaches(from: &str, to: &str, depth: usize) -> bool {
            depth < CHECKS.len()
                && find(from).is_some_and(|c| {
                    c.requires
                        .iter()
                        .any(|r| *r == to || reaches(r, to, depth + 1))
                })
        }
        for c in CHECKS {
            assert!(
                !reaches(c.id, c.id, 0),
                "{} requires itself through others",
                c.id
            );
        }
    }
}
