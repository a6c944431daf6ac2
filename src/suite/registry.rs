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

/// A set of protocol editions (CONTRACT §1, DESIGN §3), as a bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Editions(pub u8);

impl Editions {
    /// The 0.2.x release.
    pub const CURRENT: Editions = Editions(1);
    /// The 2026-08 repository state.
    pub const AUG2026: Editions = Editions(2);
    /// The run-to-settlement era.
    pub const LEGACY: Editions = Editions(4);
    /// All three.
    pub const ALL: Editions = Editions(7);
    /// `current` and `2026-08` (queued prompts, session.status).
    pub const QUEUED: Editions = Editions(3);

    /// Whether `name` ("current", "2026-08", "legacy") is in the set.
    pub fn contains_name(self, name: &str) -> bool {
        Editions::from_name(name).is_some_and(|e| self.0 & e.0 != 0)
    }

    /// The single-edition set for a name.
    pub fn from_name(name: &str) -> Option<Editions> {
        match name {
            "current" => Some(Editions::CURRENT),
            "2026-08" => Some(Editions::AUG2026),
            "legacy" => Some(Editions::LEGACY),
            _ => None,
        }
    }

    /// The names in the set, space-separated.
    pub fn names(self) -> String {
        [("current", 1u8), ("2026-08", 2), ("legacy", 4)]
            .iter()
            .filter(|(_, b)| self.0 & b != 0)
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One check's identity and rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckInfo {
    /// Stable id, `area.rule`.
    pub id: &'static str,
    /// The CONTRACT.md section it enforces.
    pub section: &'static str,
    /// MUST or SHOULD.
    pub severity: Severity,
    /// Where it applies.
    pub editions: Editions,
    /// The rule in one line.
    pub rule: &'static str,
}

macro_rules! checks {
    ($($id:literal $sec:literal $sev:ident $ed:ident : $rule:literal;)*) => {
        /// Every check, in report order.
        pub const CHECKS: &[CheckInfo] = &[$(CheckInfo {
            id: $id, section: $sec, severity: Severity::$sev, editions: Editions::$ed, rule: $rule,
        },)*];
    };
}

checks! {
    // Process and output discipline.
    "stdout.frames-only" "§2.4 §7" Must ALL: "every stdout line is one compact JSON-RPC 2.0 object frame; nothing else is written to stdout";
    "stdout.compact" "§2.4" Should ALL: "every frame is written exactly as JSON.stringify writes it: no whitespace between tokens";
    "stdout.lf-only" "§2.4" Should ALL: "every frame ends in \\n alone, not \\r\\n";
    "event.time" "§5" Must ALL: "every session.event envelope carries time, epoch milliseconds as a number";
    "response.exactly-once" "§2.3" Must ALL: "every request with a valid id gets exactly one response carrying that id";
    "response.id-type-preserved" "§2.2" Must ALL: "a numeric id is echoed as a number and a string id as a string, \"\" and 0 included";
    // Framing and classification.
    "frame.malformed-ignored" "§2.2" Must ALL: "a line that is not JSON gets no output and the runtime keeps serving";
    "frame.non-object-ignored" "§2.2" Must ALL: "JSON scalars (42, \"s\", null, true) get no output";
    "frame.batch-ignored" "§2.2" Must ALL: "a JSON array, even of valid requests, is dropped whole with no output";
    "frame.id-invalid-is-notification" "§2.2" Must ALL: "a request whose id is null, boolean, object or array gets no response";
    "frame.non-string-method-ignored" "§2.2" Must ALL: "an id with a non-string method is a response to nobody: no output";
    "frame.notifications-ignored" "§2.3" Must ALL: "client notifications (even initialize or shutdown without id) produce no output and no effect";
    "frame.unknown-response-ignored" "§2.4" Must ALL: "responses to ids the runtime never used are ignored";
    "frame.jsonrpc-member-not-checked" "§2.2" Should ALL: "frames without \"jsonrpc\" or with another value are served normally";
    "frame.id-number-echo" "§2.2" Should ALL: "numeric ids echo as JavaScript prints the double (1e3 → 1000, 1.5 → 1.5)";
    "frame.params-normalised" "§2.2" Should ALL: "non-object params (array, string, number, null) are treated as {}";
    "frame.crlf-accepted" "§2.1" Must ALL: "frames ending in \\r\\n are served";
    "frame.cr-not-separator" "§2.1" Should ALL: "a lone \\r does not end a frame (A\\rB\\n is one malformed line)";
    "frame.whitespace-trimmed" "§2.1" Should ALL: "blank lines are skipped; padding, a BOM and U+00A0 around a frame are trimmed";
    "frame.split-writes" "§2.1" Must ALL: "a frame split across writes, even inside a UTF-8 character, is served once complete";
    "frame.unterminated-tail-dropped" "§2.1" Should ALL: "an unterminated last line at EOF is not served";
    "frame.invalid-utf8-replaced" "§2.1" Should ALL: "invalid UTF-8 inside a string becomes U+FFFD and the frame is served";
    "frame.large-line" "§2.1" Should ALL: "a 10 MB request line is answered";
    "frame.deep-nesting" "§2.1" Should ALL: "params nested 1000 deep are answered";
    // Errors.
    "error.unknown-method" "§2.3 §9" Must ALL: "an unknown method gets -32603 `unknown DeepSeek Harness SDK runtime method: <m>` (-32601 accepted unless --strict-upstream)";
    "error.no-reserved-codes" "§2.3" Should ALL: "errors never use -32700, -32600 or -32602 and carry no data member";
    // initialize.
    "initialize.server-info" "§3.1" Must ALL: "initialize answers {serverInfo:{name:\"deepseek-harness-sdk-runtime\", version:<string>}}";
    "initialize.max-tokens-validated" "§3.1 §9" Should ALL: "maxTokens 0, -1, 1.5 and \"5\" fail with `initialize maxTokens must be a positive safe integer`";
    "initialize.unknown-provider" "§3.1 §9" Should ALL: "an unknown provider fails with `no adapter registered for provider \"<p>\"`";
    "initialize.repeatable" "§3.1" Should QUEUED: "a second initialize succeeds with the same serverInfo";
    "initialize.gates-requests" "§3.2 §9" Must CURRENT: "session requests before initialize fail with `SDK server is not initialized`";
    // session/prompt and its receipt.
    "prompt.message-id" "§3.2" Must QUEUED: "session/prompt answers {messageId: <non-empty string>}";
    "receipt.id-matches-inserted" "§5 §8.4" Must QUEUED: "an agent/inbox/spliced receipt whose inserted[].id equals the messageId is sent for every prompt";
    "receipt.precedes-response" "§5" Must QUEUED: "the prompt's receipt is written before the prompt's response";
    "turn.user-message-id" "§5" Should QUEUED: "the turn's user/message event carries data.id == messageId";
    "turn.end-before-idle" "§5 §8.4" Must QUEUED: "turn/end of a prompt's turn comes before the session's idle status";
    "status.idle-after-turn" "§4 §8.4" Must QUEUED: "a prompted session reports session.status running, then idle when its turns end";
    "turn.end-reason" "§5 §8.4" Must ALL: "turn/end carries {turn: <int>, reason: {kind: <string>}}";
    "turn.final-text" "§5 §8.4" Must ALL: "the turn's assistant/message has data.message.content[] text blocks holding the reply";
    "turn.counts-per-session" "§5 §6" Must ALL: "turns of a session are numbered 1, 2, 3 … across prompts";
    "turn.no-replay" "§6" Must ALL: "a second prompt on a session streams only new events";
    "turn.sessions-isolated" "§4 §6" Must ALL: "two sessions have their own turn numbers and seq, and their events carry their own sessionId";
    "session.seq-contiguous" "§5" Must ALL: "each session's event seq runs 0, 1, 2 … without gaps or repeats";
    "turn.overlap-queued" "§6" Must QUEUED: "a prompt to a running session is accepted and runs as the next turn; one idle after both";
    "turn.overlap-rejected" "§6" Must LEGACY: "a prompt to a session with a prompt in flight fails with `session already has an active prompt: <id>`";
    "legacy.session-finished" "§4" Must LEGACY: "session.finished {sessionId, status, reason} precedes the {accepted:true} prompt response";
    "subagent.notifications" "§4" Should QUEUED: "a subagent run is bracketed by subagent.started and subagent.finished naming parent and child";
    "session.ids-are-data" "§3.2" Should QUEUED: "session ids such as ../x, a/b, . and .. are plain data: prompts on them complete like any other";
    // Methods of the 0.2.x release.
    "resume.validation" "§3.3 §9" Should CURRENT: "session/resume rejects a missing or empty sessionId and unknown or already-open sessions with the contract's messages";
    "resume.across-processes" "§3.3" Must CURRENT: "a session resumed in a new process continues its turn numbers and seq";
    "wait.settles-after-idle" "§3.4" Must CURRENT: "session/wait answers {} after the session's idle status, and rejects unknown sessions";
    "working-directory.get-set" "§3.5" Must CURRENT: "working-directory get/set answer {cwd}; set streams working-directory/change first";
    "working-directory.validation" "§3.5 §9" Should CURRENT: "working-directory requests reject a missing sessionId, a missing path and a missing directory";
    // Lifecycle.
    "lifecycle.shutdown-responds" "§3.6" Must ALL: "shutdown answers {} (also twice in one write)";
    "lifecycle.shutdown-exits-0" "§3.6 §7" Must ALL: "after answering shutdown the process exits 0 by itself, stdin still open";
    "lifecycle.shutdown-after-empty-session-id" "§3.2 §3.6" Should QUEUED: "after a prompt on session id \"\", shutdown still answers {} and the process exits 0";
    "lifecycle.eof-exits-0" "§7" Must ALL: "stdin EOF makes the process exit 0 promptly, answering what it had read";
    "lifecycle.sigterm-exits-0" "§7" Should ALL: "SIGTERM makes the process exit 0";
    "lifecycle.sigint-exits-130" "§7" Should ALL: "SIGINT makes the process exit 130";
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
    fn edition_sets_name_their_members() {
        assert_eq!(Editions::QUEUED.names(), "current 2026-08");
        assert!(Editions::LEGACY.contains_name("legacy"));
        assert!(!Editions::LEGACY.contains_name("current"));
        assert!(!Editions::ALL.contains_name("2027"));
    }
}
