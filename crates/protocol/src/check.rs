//! The checks: one typed model of every rule of the contract the kit judges.
//!
//! Each check is a [`CheckId`] (its id, as users see it, is [`CheckId::as_str`]) with a
//! [`CheckInfo`] row: the contract sections it enforces, its [`Severity`], the [`Editions`] it
//! applies to, the checks it needs to have passed, and the [`Judge`] that owns its rule. Every
//! layer names a check by its `CheckId`: the rule engine's violations, the suite's verdicts and
//! root causes, the mutants' `catches`. Text enters only at the edges (`# check:` headers of
//! traces, `--filter`, baselines) and is parsed there with [`CheckId::parse`].
//!
//! This module sits on the low floor ([`crate::edition`] only), so the rule engine (the
//! `dsh-rules` crate) can use it.

use crate::edition::Editions;
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
        f.pad(match self {
            Severity::Must => "MUST",
            Severity::Should => "SHOULD",
        })
    }
}

/// Which judge owns a check's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Judge {
    /// The check's own traces (`fixtures/checks/<id>*.trace`) exercise and judge it.
    Trace,
    /// The rule engine (`dsh_rules::Checker`) judges it over every transcript of the run,
    /// whatever check's trace produced it; the check's own traces (if any) exercise it.
    Stream,
    /// A client check: `dsh-conformance client` plays the runtime and judges the client under
    /// test from the peer's wire log and the client's results (`dsh_conformance::client`).
    /// `check` never runs it.
    Client,
}

/// What a check judges: a runtime (`dsh-conformance check`) or a client (`dsh-conformance
/// client`). Each command runs the checks of its subject only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    /// The runtime under test (a trace or a stream rule).
    Runtime,
    /// The client under test (docs/CONTRACT.md#s15).
    Client,
}

/// One check's identity and rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckInfo {
    /// The check.
    pub id: CheckId,
    /// The sections of the contract it enforces, `§N.M` separated by spaces: each one is
    /// `docs/CONTRACT.md#sN.M` (`dsh_conformance::contract`).
    pub section: &'static str,
    /// MUST or SHOULD.
    pub severity: Severity,
    /// Where it applies.
    pub editions: Editions,
    /// The rule in one line.
    pub rule: &'static str,
    /// Checks without whose pass this one cannot be judged: when one of them fails (or is itself
    /// blocked), this check is `BLOCKED` and not run.
    pub requires: &'static [CheckId],
    /// The judge that owns the rule.
    pub judge: Judge,
}

impl CheckInfo {
    /// Whether the rule engine judges this rule over every transcript ([`Judge::Stream`]).
    pub fn is_stream(&self) -> bool {
        self.judge == Judge::Stream
    }

    /// What the check judges: [`Subject::Client`] for [`Judge::Client`] rows, else the runtime.
    pub fn subject(&self) -> Subject {
        match self.judge {
            Judge::Client => Subject::Client,
            Judge::Trace | Judge::Stream => Subject::Runtime,
        }
    }
}

/// The checks of one subject, in report order.
pub fn of(subject: Subject) -> impl Iterator<Item = &'static CheckInfo> {
    CHECKS.iter().filter(move |c| c.subject() == subject)
}

/// The methods an edition may have that a runtime can lack, each with the checks that own its
/// presence: the first of them that applies to the edition under test fails, as the one root
/// cause, when the runtime answers the method as it answers an unknown one; every other check
/// that needs the method is blocked by it. `initialize` is the preflight's.
pub const METHOD_OWNERS: &[(&str, &[CheckId])] = &[
    (
        "session/prompt",
        &[CheckId::PromptMessageId, CheckId::TurnEndReason],
    ),
    ("session/resume", &[CheckId::ResumeAcrossProcesses]),
    ("session/wait", &[CheckId::WaitSettlesAfterIdle]),
    (
        "session/working-directory/get",
        &[CheckId::WorkingDirectoryGetSet],
    ),
    (
        "session/working-directory/set",
        &[CheckId::WorkingDirectoryGetSet],
    ),
    ("shutdown", &[CheckId::LifecycleShutdownResponds]),
];

/// The check that owns `method`'s presence on `edition` ([`METHOD_OWNERS`]); `None` for a method
/// the edition does not have (or one no check owns).
pub fn method_owner(method: &str, edition: crate::edition::Edition) -> Option<CheckId> {
    let (_, owners) = METHOD_OWNERS.iter().find(|(m, _)| *m == method)?;
    owners
        .iter()
        .copied()
        .find(|c| c.info().editions.contains(edition))
}

macro_rules! checks {
    ($($(#[$doc:meta])* $v:ident = $id:literal $sec:literal $sev:ident $ed:ident [$($req:ident)*] $judge:ident : $rule:literal;)*) => {
        /// A check of the suite, by its stable id (`area.rule`, [`CheckId::as_str`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum CheckId {
            $($(#[$doc])* #[doc = concat!("`", $id, "`: see its [`CheckInfo::rule`].")] $v,)*
        }

        /// Every check, in report order (the order of [`CheckId`]).
        pub const CHECKS: &[CheckInfo] = &[$(CheckInfo {
            id: CheckId::$v, section: $sec, severity: Severity::$sev, editions: Editions::$ed,
            rule: $rule, requires: &[$(CheckId::$req),*], judge: Judge::$judge,
        },)*];

        impl CheckId {
            /// The stable id users see: `area.rule`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(CheckId::$v => $id,)*
                }
            }
        }
    };
}

impl CheckId {
    /// The check's row.
    pub fn info(self) -> &'static CheckInfo {
        // CHECKS is in declaration order, so a variant's discriminant is its index.
        &CHECKS[self as usize]
    }

    /// The check whose id is `id`, if one is registered.
    pub fn parse(id: &str) -> Option<CheckId> {
        CHECKS.iter().map(|c| c.id).find(|c| c.as_str() == id)
    }

    /// Every check, in report order.
    pub fn all() -> impl Iterator<Item = CheckId> {
        CHECKS.iter().map(|c| c.id)
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl serde::Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// `ids` as text, `, `-separated.
pub fn list(ids: &[CheckId]) -> String {
    ids.iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Looks a check up by its id as text.
pub fn find(id: &str) -> Option<&'static CheckInfo> {
    CheckId::parse(id).map(CheckId::info)
}

checks! {
    // Variant = "id" "sections" severity editions [prerequisites] judge: "rule";
    // A prerequisite is a check without whose pass this one cannot be judged. `Stream` marks a
    // rule the rule engine (`dsh_rules`) judges over every transcript of the run, besides
    // the check's own traces; `Trace` a rule judged by its traces alone.
    // Process and output discipline.
    StdoutFramesOnly = "stdout.frames-only" "§2.4 §7" Must ALL [] Stream: "every stdout line is one JSON-RPC 2.0 object frame; nothing else is written to stdout";
    StdoutCompact = "stdout.compact" "§2.4" Should ALL [] Stream: "every frame is written compactly, as JSON.stringify writes it: no whitespace between tokens (with --strict-upstream, upstream's exact bytes: escapes, number forms and member order too)";
    StdoutLfOnly = "stdout.lf-only" "§2.4" Should ALL [] Stream: "every frame ends in \\n alone, not \\r\\n";
    ResponseAnswered = "response.answered" "§2.3" Must ALL [] Trace: "a request sent after initialize is answered (an unknown method gets an error response at once)";
    ResponseExactlyOnce = "response.exactly-once" "§2.3" Must ALL [ResponseAnswered] Stream: "every request with a valid id gets exactly one response carrying that id; no response is sent twice";
    ResponseIdTypePreserved = "response.id-type-preserved" "§2.2" Must ALL [ResponseAnswered] Stream: "a numeric id is echoed as a number and a string id as a string, \"\" and 0 included";
    EventTime = "event.time" "§5" Must ALL [] Stream: "every session.event envelope carries time, epoch milliseconds as a number";
    // Framing and classification.
    FrameMalformedIgnored = "frame.malformed-ignored" "§2.2" Must ALL [ResponseAnswered] Trace: "a line that is not JSON gets no output and the runtime keeps serving";
    FrameNonObjectIgnored = "frame.non-object-ignored" "§2.2" Must ALL [ResponseAnswered] Trace: "JSON scalars (42, \"s\", null, true) get no output";
    FrameBatchIgnored = "frame.batch-ignored" "§2.2" Must ALL [ResponseAnswered] Trace: "a JSON array, even of valid requests, is dropped whole with no output";
    FrameIdInvalidIsNotification = "frame.id-invalid-is-notification" "§2.2" Must ALL [ResponseAnswered] Trace: "a request whose id is null, boolean, object or array gets no response";
    FrameNonStringMethodIgnored = "frame.non-string-method-ignored" "§2.2" Must ALL [ResponseAnswered] Trace: "an object without a string method is no request: with an id it is a response to nobody, without one ({}, id null) it is dropped; no output either way";
    FrameNotificationsIgnored = "frame.notifications-ignored" "§2.3" Must ALL [ResponseAnswered] Trace: "client notifications (even initialize or shutdown without id) produce no output and no effect";
    FrameUnknownResponseIgnored = "frame.unknown-response-ignored" "§2.4" Must ALL [ResponseAnswered] Trace: "responses to ids the runtime never used are ignored";
    FrameJsonrpcMemberNotChecked = "frame.jsonrpc-member-not-checked" "§2.2" Should ALL [ResponseAnswered] Trace: "frames without \"jsonrpc\" or with another value are served normally";
    FrameIdNumberEcho = "frame.id-number-echo" "§2.2" Should ALL [ResponseAnswered ResponseIdTypePreserved] Stream: "numeric ids echo as JavaScript prints the double (1e3 → 1000, 1.5 → 1.5)";
    FrameParamsNormalised = "frame.params-normalised" "§2.2" Should ALL [ResponseAnswered] Trace: "non-object params (array, string, number, null) are treated as {}";
    FrameCrlfAccepted = "frame.crlf-accepted" "§2.1" Must ALL [ResponseAnswered] Trace: "frames ending in \\r\\n are served";
    FrameCrNotSeparator = "frame.cr-not-separator" "§2.1" Should ALL [ResponseAnswered] Trace: "a lone \\r does not end a frame (A\\rB\\n is one malformed line)";
    FrameWhitespaceTrimmed = "frame.whitespace-trimmed" "§2.1" Should ALL [ResponseAnswered] Trace: "blank lines are skipped; padding, a BOM and U+00A0 around a frame are trimmed";
    FrameSplitWrites = "frame.split-writes" "§2.1" Must ALL [ResponseAnswered] Trace: "a frame split across writes, even inside a UTF-8 character, is served once complete";
    FrameUnterminatedTailDropped = "frame.unterminated-tail-dropped" "§2.1" Should ALL [ResponseAnswered LifecycleEofExits0] Trace: "an unterminated last line at EOF is not served";
    FrameInvalidUtf8Replaced = "frame.invalid-utf8-replaced" "§2.1" Should ALL [ResponseAnswered] Trace: "invalid UTF-8 inside a string becomes U+FFFD and the frame is served";
    FrameNonJsonLiteralsIgnored = "frame.non-json-literals-ignored" "§2.2" Must ALL [ResponseAnswered FrameMalformedIgnored] Trace: "a line holding NaN, Infinity or -Infinity outside a string (an id, a params value, any member) is not JSON: no output, and the runtime keeps serving";
    FrameLoneSurrogatesSurvived = "frame.lone-surrogates-survived" "§2.4" Must ALL [ResponseAnswered ResponseIdTypePreserved] Trace: "lines holding lone surrogate escapes (\\ud800) in an id, a method, a params key or prompt text are served, and the runtime keeps serving";
    FrameLoneSurrogatesEchoed = "frame.lone-surrogates-echoed" "§2.4" Should ALL [ResponseIdTypePreserved ErrorUnknownMethod FrameLoneSurrogatesSurvived] Trace: "lone surrogate escapes in ids, methods and session ids come back as JSON.stringify writes them (\"\\ud800\"), never as U+FFFD or ?";
    FrameLargeLine = "frame.large-line" "§2.1" Should ALL [ResponseAnswered] Trace: "a 10 MB request line is answered";
    FrameDeepNesting = "frame.deep-nesting" "§2.1" Should ALL [ResponseAnswered] Trace: "params nested 1000 deep are answered";
    // Errors.
    ErrorUnknownMethod = "error.unknown-method" "§2.3 §9" Must ALL [ResponseAnswered] Trace: "an unknown method gets -32603 with the message `unknown DeepSeek Harness SDK runtime method: <m>` verbatim (code -32601 accepted unless --strict-upstream; the message never relaxed)";
    ErrorLongMethodQuoted = "error.long-method-quoted" "§2.3" Must ALL [ErrorUnknownMethod] Trace: "an unknown method's name of 1 MiB is quoted whole in the unknown-method message, never clipped";
    ErrorNoReservedCodes = "error.no-reserved-codes" "§2.3" Should ALL [ResponseAnswered] Stream: "a known method's errors are -32603 (never -32700, -32600, -32602 or another code) and no error carries a data member; the other checks judge error messages only";
    // initialize.
    InitializeServerInfo = "initialize.server-info" "§3.1" Must ALL [] Trace: "initialize answers {serverInfo:{name:\"deepseek-harness-sdk-runtime\", version:<string>}}";
    InitializeMaxTokensValidated = "initialize.max-tokens-validated" "§3.1 §9" Should ALL [ResponseAnswered] Trace: "maxTokens 0, -1, 1.5 and \"5\" fail with `initialize maxTokens must be a positive safe integer`";
    InitializeUnknownProvider = "initialize.unknown-provider" "§3.1 §9" Should ALL [] Trace: "an unknown provider fails with `no adapter registered for provider \"<p>\"`";
    InitializeRepeatable = "initialize.repeatable" "§3.1" Should QUEUED [ResponseAnswered] Trace: "a second initialize succeeds with the same serverInfo";
    InitializeGatesRequests = "initialize.gates-requests" "§3.2 §9" Must CURRENT [ResponseAnswered] Trace: "session requests before initialize fail with `SDK server is not initialized`";
    // session/prompt and its receipt.
    PromptMessageId = "prompt.message-id" "§3.2" Must QUEUED [ResponseAnswered] Trace: "session/prompt answers {messageId: <non-empty string>}";
    ReceiptIdMatchesInserted = "receipt.id-matches-inserted" "§5 §8.4" Must QUEUED [PromptMessageId TurnEndReason] Trace: "an agent/inbox/spliced receipt whose inserted[].id equals the messageId is sent for every prompt";
    ReceiptPrecedesResponse = "receipt.precedes-response" "§5" Must QUEUED [ReceiptIdMatchesInserted TurnSessionsIsolated] Stream: "the prompt's receipt is written before the prompt's response, also for a prompt to a running session";
    TurnEndReason = "turn.end-reason" "§5 §8.4" Must ALL [ResponseAnswered] Trace: "turn/end carries {turn: <int>, reason: {kind: <string>}}";
    TurnUserMessageId = "turn.user-message-id" "§5" Should QUEUED [ReceiptIdMatchesInserted] Trace: "the turn's user/message event carries data.id == messageId";
    TurnEndBeforeIdle = "turn.end-before-idle" "§5 §8.4" Must QUEUED [ResponseAnswered TurnEndReason] Trace: "turn/end of a prompt's turn comes before the session's idle status";
    StatusIdleAfterTurn = "status.idle-after-turn" "§4 §8.4" Must QUEUED [TurnEndBeforeIdle] Stream: "a prompted session reports session.status running, then idle when its turns end";
    TurnFinalText = "turn.final-text" "§5 §8.4" Must ALL [ResponseAnswered ReceiptIdMatchesInserted StatusIdleAfterTurn] Trace: "the turn's assistant/message has data.message.content[] text blocks holding the reply, and it is the root's last message between the prompt's receipt and its idle";
    TurnCountsPerSession = "turn.counts-per-session" "§5 §6" Must ALL [TurnEndReason] Trace: "turns of a session are numbered 1, 2, 3 … across prompts";
    TurnNoReplay = "turn.no-replay" "§6" Must ALL [TurnEndReason ReceiptIdMatchesInserted ReceiptPrecedesResponse] Stream: "a second prompt on a session streams only new events";
    TurnSessionsIsolated = "turn.sessions-isolated" "§4 §6" Must ALL [TurnEndReason TurnCountsPerSession] Trace: "two sessions have their own turn numbers and seq, and their events carry their own sessionId";
    SessionSeqContiguous = "session.seq-contiguous" "§5" Must ALL [TurnEndReason TurnSessionsIsolated] Stream: "each session's event seq runs 0, 1, 2 … without gaps or repeats, also for a session two pipelined prompts create (§3.2: they share one creation)";
    TurnOverlapQueued = "turn.overlap-queued" "§6" Must QUEUED [ResponseAnswered TurnEndReason] Trace: "a prompt to a running session is accepted and runs as the next turn; one idle after both";
    TurnOverlapRejected = "turn.overlap-rejected" "§6" Must LEGACY [ResponseAnswered] Trace: "a prompt to a session with a prompt in flight fails with `session already has an active prompt: <id>`";
    LegacySessionFinished = "legacy.session-finished" "§4" Must LEGACY [ResponseAnswered] Trace: "session.finished {sessionId, status, reason} precedes the {accepted:true} prompt response";
    SubagentNotifications = "subagent.notifications" "§4" Should QUEUED [ResponseAnswered] Trace: "a subagent run is bracketed by subagent.started and subagent.finished naming parent and child";
    SessionIdsAreData = "session.ids-are-data" "§3.2" Should QUEUED [PromptMessageId TurnEndReason TurnSessionsIsolated] Trace: "session ids such as ../x, a/b, . and .. are plain data: prompts on them complete like any other";
    // Methods of the 0.2.x release.
    ResumeValidation = "resume.validation" "§3.3 §9" Should CURRENT [ResponseAnswered] Trace: "session/resume rejects a missing or empty sessionId and unknown or already-open sessions with the contract's messages";
    ResumeAcrossProcesses = "resume.across-processes" "§3.3" Must CURRENT [TurnEndReason LifecycleShutdownExits0 TurnCountsPerSession TurnSessionsIsolated] Trace: "a session resumed in a new process continues its turn numbers and seq";
    ResumeNoReplay = "resume.no-replay" "§3.3" Should CURRENT [ResumeAcrossProcesses ReceiptPrecedesResponse] Trace: "session/resume streams none of the stored history: the resumed session's next event is the next prompt's receipt";
    WaitSettlesAfterIdle = "wait.settles-after-idle" "§3.4" Must CURRENT [StatusIdleAfterTurn] Trace: "session/wait answers {} after the session's idle status, and rejects unknown sessions";
    WorkingDirectoryGetSet = "working-directory.get-set" "§3.5" Must CURRENT [ResponseAnswered] Trace: "working-directory get/set answer {cwd}; set (a path absolute or relative to the session's directory) streams working-directory/change first";
    WorkingDirectoryValidation = "working-directory.validation" "§3.5 §9" Should CURRENT [ResponseAnswered WorkingDirectoryGetSet] Trace: "working-directory requests reject a missing sessionId, a missing path and a missing directory";
    // Lifecycle.
    LifecycleShutdownResponds = "lifecycle.shutdown-responds" "§3.6" Must ALL [ResponseAnswered] Trace: "shutdown answers {} (also twice in one write)";
    LifecycleShutdownExits0 = "lifecycle.shutdown-exits-0" "§3.6 §7" Must ALL [] Trace: "after answering shutdown the process exits 0 by itself, stdin still open";
    LifecycleShutdownCutsTurn = "lifecycle.shutdown-cuts-turn" "§3.6" Should QUEUED [ResponseAnswered LifecycleShutdownExits0] Trace: "a turn in progress at shutdown is cut short: shutdown answers {} and the process exits 0 without writing the turn's turn/end or an idle status";
    LifecycleShutdownAfterEmptySessionId = "lifecycle.shutdown-after-empty-session-id" "§3.2 §3.6" Should QUEUED [ResponseAnswered LifecycleShutdownExits0] Trace: "after a prompt on session id \"\", shutdown still answers {} and the process exits 0";
    LifecycleEofExits0 = "lifecycle.eof-exits-0" "§7" Must ALL [ResponseAnswered] Trace: "stdin EOF makes the process exit 0 promptly, answering what it had read";
    LifecycleEofDuringTurnExits0 = "lifecycle.eof-during-turn-exits-0" "§7" Must QUEUED [LifecycleEofExits0] Trace: "stdin EOF with a turn in progress still makes the process exit 0 within the bounded shutdown, without waiting for the turn";
    LifecycleSigtermExits0 = "lifecycle.sigterm-exits-0" "§7" Should ALL [] Trace: "SIGTERM makes the process exit 0";
    LifecycleSigintExits130 = "lifecycle.sigint-exits-130" "§7" Should ALL [] Trace: "SIGINT makes the process exit 130";
    // Clients (`dsh-conformance client`): the kit plays the runtime (docs/CONTRACT.md#s15).
    ClientWaitsForInitialize = "client.waits-for-initialize" "§15.1" Must CURRENT [] Client: "the client sends no other request before the initialize answer, however late it comes";
    ClientIdsOutOfOrder = "client.ids-out-of-order" "§15.2" Must CURRENT [] Client: "responses are matched to requests by id, also when they come out of request order";
    ClientRootIdle = "client.root-idle" "§15.3" Must CURRENT [] Client: "a run ends at its root session's idle, not at another session's, and returns the root's final text";
    ClientForwardCompatible = "client.forward-compatible" "§15.3" Must CURRENT [] Client: "unknown event types and turn/end kinds are passed through: the run completes with its text";
    ClientLongLines = "client.long-lines" "§15.2" Must CURRENT [] Client: "a frame of tens of megabytes on one line is read whole: the run completes with its text";
    ClientLineMemory = "client.line-memory" "§15.2" Should CURRENT [ClientLongLines] Client: "a long line costs memory in proportion to its length: reading the kit's 48 MiB line grows the client's resident size by at most 8 times the line";
    ClientRuntimeExit = "client.runtime-exit" "§15.4" Must CURRENT [] Client: "a runtime that exits in the middle of a turn, or with a request unanswered, fails the run or the request with an error within a bound, never a hang";
    ClientDrainsStderr = "client.drains-stderr" "§15.4" Must CURRENT [] Client: "the runtime's stderr is read as it comes, much of it and bytes that are not UTF-8 included, so the runtime never blocks on it";
    ClientTypedErrors = "client.typed-errors" "§15.5" Must CURRENT [] Client: "an error response is reported with its code and message, and the client stays usable after it";
    ClientGracefulShutdown = "client.graceful-shutdown" "§15.6" Should CURRENT [] Client: "closing sends shutdown or ends stdin and gives the runtime time to exit before any signal";
    ClientReceiptCorrelation = "client.receipt-correlation" "§15.7" Must CURRENT [] Client: "a run starts at its own prompt's receipt, matched by message id and root session: not at another prompt's receipt, nor at another session's splice of the same message";
    ClientSubagentTrees = "client.subagent-trees" "§15.8" Must CURRENT [] Client: "a run whose model spawns a subagent waits for the subagent's result: not ended by the root's first idle nor by the child's idle, whatever the child's seq, nor while a subagent the child started runs; its text is the root's";
    ClientChattySessions = "client.chatty-sessions" "§15.9" Must CURRENT [] Client: "other sessions' notifications in volume, interleaved with the run, cost time and memory in proportion: the run completes with its text within the bound";
    ClientBoundedBacklog = "client.bounded-backlog" "§15.9" Should CURRENT [] Client: "what no one subscribed to (other sessions' events) is dropped or kept in a bounded queue: the client's memory does not grow with it";
    ClientIdleNeverComes = "client.idle-never-comes" "§15.10" Should CURRENT [] Client: "a run whose root idle never comes is bounded: the client reports an error within its own bound; it never hangs";
    // Client robustness (`client --suite robustness`): what the contract forbids but clients meet; never MUST.
    ClientRobustNonFrameLines = "client.robust-non-frame-lines" "§15.11" Should CURRENT [] Client: "lines on stdout that are not frames (a banner, a blank line, a log line) are skipped: the run completes with its text";
    ClientRobustStdoutClosed = "client.robust-stdout-closed" "§15.11" Should CURRENT [] Client: "a runtime that closes stdout while its process lives fails the pending run with an error, never a hang, nor only by the client's own timeout";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_ids_are_unique_well_formed_and_indexed_by_variant() {
        let mut ids: Vec<_> = CHECKS.iter().map(|c| c.id.as_str()).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate check id");
        for (i, c) in CHECKS.iter().enumerate() {
            assert_eq!(c.id as usize, i);
            assert_eq!(c.id.info(), c);
            assert_eq!(CheckId::parse(c.id.as_str()), Some(c.id));
            let id = c.id.as_str();
            assert!(
                id.split_once('.')
                    .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty()),
                "{id}"
            );
            assert!(c.section.starts_with('§'), "{id}");
            assert!(c.editions.0 != 0 && c.editions.0 <= 7, "{id}");
        }
        assert_eq!(CheckId::parse("no.such-check"), None);
    }

    #[test]
    fn client_checks_are_the_client_subject_and_only_they() {
        for c in CHECKS {
            let client = c.id.as_str().starts_with("client.");
            assert_eq!(c.subject() == Subject::Client, client, "{}", c.id);
            assert!(
                !client
                    || c.requires
                        .iter()
                        .all(|r| r.info().subject() == Subject::Client)
            );
        }
        assert!(of(Subject::Client).count() >= 8);
        assert!(of(Subject::Runtime).all(|c| c.judge != Judge::Client));
    }

    #[test]
    fn every_owned_method_has_an_owner_on_the_editions_that_have_it() {
        use crate::edition::Edition;
        for e in Edition::ALL {
            assert!(method_owner("session/prompt", e).is_some(), "{e}");
            assert_eq!(
                method_owner("shutdown", e),
                Some(CheckId::LifecycleShutdownResponds)
            );
            let current = e == Edition::Current;
            for m in [
                "session/resume",
                "session/wait",
                "session/working-directory/set",
            ] {
                assert_eq!(method_owner(m, e).is_some(), current, "{m} on {e}");
            }
        }
        assert_eq!(
            method_owner("session/prompt", Edition::Legacy),
            Some(CheckId::TurnEndReason)
        );
        assert_eq!(method_owner("initialize", Edition::Current), None);
    }

    #[test]
    fn prerequisites_form_no_cycle() {
        fn reaches(from: CheckId, to: CheckId, depth: usize) -> bool {
            depth < CHECKS.len()
                && from
                    .info()
                    .requires
                    .iter()
                    .any(|r| *r == to || reaches(*r, to, depth + 1))
        }
        for c in CHECKS {
            assert!(!reaches(c.id, c.id, 0), "{} requires itself", c.id);
        }
    }
}
