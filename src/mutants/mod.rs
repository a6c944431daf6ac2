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

use crate::check::CheckId;

pub use proxy::run;

/// One way of breaking the contract (or, for [`BENIGN`], of keeping it unusually).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mutant {
    /// Which mutant.
    pub kind: MutantKind,
    /// Stable name (the CLI argument).
    pub name: &'static str,
    /// What it breaks, in one line.
    pub breaks: &'static str,
    /// The check that must catch it; `None` for a benign proxy, which every check must pass.
    pub catches: Option<CheckId>,
    /// Caught only with `--strict-upstream` (it breaks upstream fidelity, not what clients need).
    pub strict: bool,
}

macro_rules! mutants {
    (breaking { $($v:ident = $name:literal => $catches:ident $(($strict:ident))? : $breaks:literal,)* }
     benign { $($bv:ident = $bname:literal : $bbreaks:literal,)* }) => {
        /// Every mutant and benign proxy, by name ([`Mutant::name`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum MutantKind {
            $(#[doc = $breaks] $v,)*
            $(#[doc = $bbreaks] $bv,)*
        }

        /// Every mutant, in a stable order.
        pub const ALL: &[Mutant] = &[$(Mutant {
            kind: MutantKind::$v, name: $name, breaks: $breaks, catches: Some(CheckId::$catches),
            strict: mutants!(@strict $($strict)?),
        },)*];

        /// The proxies that break no rule, beside [`ALL`]: every check must pass on each.
        pub const BENIGN: &[Mutant] = &[$(Mutant {
            kind: MutantKind::$bv, name: $bname, breaks: $bbreaks, catches: None, strict: false,
        },)*];
    };
    (@strict strict) => { true };
    (@strict) => { false };
}

mutants! {
breaking {
    WrongServerName = "wrong-server-name" => InitializeServerInfo: "initialize answers serverInfo.name \"my-runtime\"",
    UnknownMethod32000 = "unknown-method-32000" => ErrorUnknownMethod: "unknown methods answer code -32000 instead of -32603",
    UnknownMethod32601 = "unknown-method-32601" => ErrorUnknownMethod (strict): "unknown methods answer the transport's code -32601 (with upstream's message)",
    AnswersNotifications = "answers-notifications" => FrameNotificationsIgnored: "a client notification gets a response frame",
    RepliesToMalformed = "replies-to-malformed" => FrameMalformedIgnored: "a malformed line gets a -32700 error frame",
    MessageIdMismatch = "message-id-mismatch" => ReceiptIdMatchesInserted: "the prompt response carries a messageId the receipt never had",
    NoReceipt = "no-receipt" => ReceiptIdMatchesInserted: "the agent/inbox/spliced receipt of a prompt is never sent",
    ResponseBeforeReceipt = "response-before-receipt" => ReceiptPrecedesResponse: "the prompt response is sent before its receipt",
    FrozenTurn = "frozen-turn" => TurnCountsPerSession: "every turn is numbered 1",
    SharedTurnCounter = "shared-turn-counter" => TurnSessionsIsolated: "turn numbers count across all sessions, not per session",
    FirstSessionOnly = "first-session-only" => TurnSessionsIsolated: "only the first session to stream gets its session.event frames; every later session streams none (one event boundary shared by the whole process)",
    ReplaysOldEvents = "replays-old-events" => TurnNoReplay: "a later prompt re-sends the session's earlier events first",
    IdleBeforeTurnEnd = "idle-before-turn-end" => TurnEndBeforeIdle: "session.status idle is sent before the turn/end event",
    NoIdle = "no-idle" => StatusIdleAfterTurn: "session.status idle is never sent",
    SeqGap = "seq-gap" => SessionSeqContiguous: "event seq skips a number after the third event",
    StdoutLogLine = "stdout-log-line" => StdoutFramesOnly: "a plain-text log line is written to stdout",
    PrettyPrinted = "pretty-printed" => StdoutFramesOnly: "frames are pretty-printed over several lines",
    StringIds = "string-ids" => ResponseIdTypePreserved: "numeric request ids are echoed as strings",
    DuplicateResponse = "duplicate-response" => ResponseExactlyOnce: "every response is sent twice",
    NullIdAnswered = "null-id-answered" => FrameIdInvalidIsNotification: "a request with id null is answered",
    BatchSupported = "batch-supported" => FrameBatchIgnored: "a JSON array of requests is unpacked and served",
    CrAsSeparator = "cr-as-separator" => FrameCrNotSeparator: "a lone \\r ends a frame",
    BomRejected = "bom-rejected" => FrameWhitespaceTrimmed: "a line starting with a BOM is dropped",
    TailProcessed = "tail-processed" => FrameUnterminatedTailDropped: "an unterminated last line is served at EOF",
    ShutdownNoExit = "shutdown-no-exit" => LifecycleShutdownExits0: "the process stays alive after answering shutdown",
    ShutdownExit1 = "shutdown-exit-1" => LifecycleShutdownExits0: "the process exits 1 after shutdown",
    IgnoresEof = "ignores-eof" => LifecycleEofExits0: "stdin EOF is ignored; the process never exits",
    EofWaitsForTurns = "eof-waits-for-turns" => LifecycleEofDuringTurnExits0: "at stdin EOF the runtime first lets its running turns finish (its stdin closes only once every session is idle), so a long turn delays the exit past the bounded shutdown",
    EofDropsPending = "eof-drops-pending" => LifecycleEofExits0: "at stdin EOF, lines read in the last 150 ms are dropped unanswered (a runtime that exits before its pending handlers finish)",
    CrlfOutput = "crlf-output" => StdoutLfOnly: "every frame ends in \\r\\n",
    SpacedOutput = "spaced-output" => StdoutCompact: "frames have a space after \"jsonrpc\":, as a pretty encoder writes",
    ReorderedMembers = "reordered-members" => StdoutCompact (strict): "every object's members come in reverse order (no client cares; upstream's bytes differ, so only --strict-upstream fails it)",
    NoEventTime = "no-event-time" => EventTime: "session.event envelopes carry no time",
    ResumeReplaysHistory = "resume-replays-history" => ResumeNoReplay: "session/resume re-sends the session's stored events (kept under DSH_HOME) before its answer",
    WdRelativeToProcess = "wd-relative-to-process" => WorkingDirectoryGetSet: "a relative working-directory path is resolved against the process's directory, not the session's",
    PrototypeMethods = "prototype-methods" => ErrorUnknownMethod: "method names an object inherits (`constructor`, `toString` …) are served from Object.prototype, as `handlers[method]` would",
    RefusesReinitialize = "refuses-reinitialize" => InitializeRepeatable: "an initialize after one succeeded is refused with -32603 `already initialized`",
    InvalidParams32602 = "invalid-params-32602" => ErrorNoReservedCodes: "a known method's errors carry JSON-RPC's -32602 (Invalid params) instead of -32603, messages unchanged",
    NonJsonLiteralsServed = "non-json-literals-served" => FrameNonJsonLiteralsIgnored: "NaN, Infinity and -Infinity outside strings are read as null, not refused, so lines holding them are served (as a runtime on Python's json.loads serves them)",
    LenientLiteralsServed = "lenient-literals-served" => FrameNonJsonLiteralsIgnored: "-NaN, +Infinity, nan and infinity outside strings are read as null (as a lenient, JSON5-like reader takes them), so lines holding them are served",
    SurrogatesReplaced = "surrogates-replaced" => FrameLoneSurrogatesEchoed: "lone surrogate escapes are decoded as U+FFFD (as Go's encoding/json decodes them), so ids, methods and session ids holding one come back changed",
    WriterDiesOnSurrogate = "writer-dies-on-surrogate" => FrameLoneSurrogatesSurvived: "the first frame holding a lone surrogate kills the writer (as Python's strict UTF-8 stdout raises on it): it and every later frame are lost",
    RejectsNoJsonrpc = "rejects-no-jsonrpc" => FrameJsonrpcMemberNotChecked: "a request without \"jsonrpc\":\"2.0\" is rejected (-32603 `invalid request: jsonrpc must be \"2.0\"`)",
    CrashOnArrayParams = "crash-on-array-params" => FrameParamsNormalised: "an initialize whose params is a JSON array crashes the process (exit 1, a TypeError on stderr) before anything is answered",
    NoWorkingDirectory = "no-working-directory" => WorkingDirectoryGetSet: "session/working-directory/get and /set are answered as unknown methods (a runtime without them)",
    WaitOnlyAtNextIdle = "wait-only-at-next-idle" => WaitSettlesAfterIdle: "a session/wait on a session already idle is answered only at the session's next idle status (a client waiting on a settled session hangs)",
    NoSessionWait = "no-session-wait" => WaitSettlesAfterIdle: "session/wait is answered as an unknown method (a runtime without it)",
    NoResume = "no-resume" => ResumeAcrossProcesses: "session/resume is answered as an unknown method (a runtime without it)",
    AnswersIdlessObjects = "answers-idless-objects" => FrameNonStringMethodIgnored: "an object with neither a string method nor a usable id ({}, {\"id\":null,\"result\":1}) is answered -32600 `Invalid Request` with id null, as a strict JSON-RPC 2.0 library answers it",
    LiteralIdsServed = "literal-ids-served" => FrameNonJsonLiteralsIgnored: "a request whose id is NaN, Infinity or -Infinity is served, answered with id null (as a JavaScript runtime reading lines with JSON5.parse does: JSON.stringify writes those numbers as null)",
    BomBeforeFirstFrame = "bom-before-first-frame" => StdoutFramesOnly: "the first frame is written after a UTF-8 BOM (as a writer whose encoding emits a preamble): Python's json.loads refuses that line, so the SDK loses the frame",
    LongMethodClipped = "long-method-clipped" => ErrorLongMethodQuoted: "the unknown-method message clips a method name longer than 1,024 characters, ending it in an ellipsis",
    UntypedToolCalls = "untyped-tool-calls" => StdoutFramesOnly: "an assistant/message's tool-call content blocks carry no type (only id, name and arguments, as copied from the model's tool call): the TypeScript SDK fails the run on such a message",
    ResumeRestartsSeq = "resume-restarts-seq" => ResumeAcrossProcesses: "a session resumed in a new process numbers its events from seq 0 again instead of going on from its stored log",
    TrailingEmptyMessage = "trailing-empty-message" => TurnFinalText: "each turn/end follows one more assistant/message with no content (a model's closing chunk written as a message): clients, reading the root's last message before its idle, return \"\"",
    FinishedBeforeTurnEnd = "finished-before-turn-end" => LegacySessionFinished: "legacy: session.finished is written before the turn's turn/end (the turn/end and what follows it are held until it), so it reports a session that has not settled",
    ShutdownEndsTurns = "shutdown-ends-turns" => LifecycleShutdownCutsTurn: "at shutdown, each turn in progress is reported over before the answer (a turn/end with reason cancelled, then idle), as a runtime that winds its turns down would; the contract cuts them off with neither",
    CreationNotShared = "creation-not-shared" => SessionSeqContiguous: "two prompts to a new session id, the second read before the first is answered, each create the session (a get-or-create that does not share its attempt): the second creation streams the creation events again from their first seq",
    MethodNotFound = "method-not-found" => ErrorUnknownMethod: "unknown methods answer JSON-RPC's -32601 `Method not found`, without the method's name",
    FloatIdsUnanswered = "float-ids-unanswered" => ResponseExactlyOnce: "a request whose id is a number with a fraction (1.5) is never answered, while the runtime keeps serving",
    SilentAfterInitialize = "silent-after-initialize" => ResponseAnswered: "after its first response (the first initialize's answer) the runtime writes nothing more: it goes silent",
    NoMessageId = "no-message-id" => PromptMessageId: "the session/prompt response is {} without messageId",
    NoTurnEnd = "no-turn-end" => TurnEndReason: "turn/end events are never sent (the session still goes idle)",
}
benign {
    // A runtime with a model of its own: every assistant text is replaced, so the stub's `reply:`
    // directives are not followed. The checks that need a scripted model must be UNTESTABLE on
    // it, not FAIL.
    OwnModel = "own-model": "assistant texts come from a model of its own, not from the stub's directives",
    // A runtime whose output reaches the client in pieces: every frame is written in three parts
    // a few milliseconds apart, cut inside its first multi-byte character when it has one, with
    // the newline alone last (a pipe may deliver any runtime's writes so).
    FragmentedOutput = "fragmented-output": "nothing: each frame arrives in three writes a few ms apart, the newline last",
    // A runtime that answers pipelined requests out of order: of two responses written one after
    // the other, the second goes out first (a response waits up to 20 ms for a second one; it
    // never moves past a notification). Responses may come back in any order (§2.3).
    SwappedResponses = "swapped-responses": "nothing: of two adjacent responses the second comes first (any order is allowed)",
    // A runtime that defaults what initialize leaves out (cwd: its own directory, provider
    // deepseek-official, model deepseek-v4-flash), so `initialize {}` succeeds. Whether {} must
    // fail is no rule: frame.params-normalised only asks that non-object params get {}'s answer.
    DefaultsInitialize = "defaults-initialize": "nothing: initialize without cwd, provider or model defaults them, so initialize {} succeeds",
}
}

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
            assert_eq!(find(m.name), Some(m));
        }
    }
}
