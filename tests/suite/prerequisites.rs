//! Every prerequisite edge A → B between runtime checks is needed: a runtime that breaks B (a mutant, or a
//! stack of them) makes A, run alone (its prerequisites filtered out, so assumed to hold), fail or
//! be untestable. Without the edge, that runtime would fail A as a second root cause of B's bug;
//! an edge no such runtime justifies only hides A's own bugs, and goes.
//!
//! The edges between client checks are proved with client mutants instead (tests/client:
//! a mutant that fails B leaves exactly the checks requiring B `BLOCKED`).

use super::{KIT, RUNTIME};
use dsh_conformance::check::{self, CheckId, Subject};
use dsh_conformance::edition::Edition;
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::suite::run::{run, Options};
use dsh_conformance::suite::Verdict;
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;
use CheckId::*;

/// (A, B, the mutants that break B): A requires B.
const EDGES: &[(CheckId, CheckId, &str)] = &[
    (
        FrameNonJsonLiteralsIgnored,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameNonJsonLiteralsIgnored,
        FrameMalformedIgnored,
        "replies-to-malformed",
    ),
    (
        FrameLoneSurrogatesSurvived,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameLoneSurrogatesSurvived,
        ResponseIdTypePreserved,
        "string-ids",
    ),
    (
        FrameLoneSurrogatesEchoed,
        ResponseIdTypePreserved,
        "string-ids",
    ),
    (
        FrameLoneSurrogatesEchoed,
        ErrorUnknownMethod,
        "method-not-found",
    ),
    (
        FrameLoneSurrogatesEchoed,
        FrameLoneSurrogatesSurvived,
        "writer-dies-on-surrogate",
    ),
    (
        FrameParamsNormalised,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        InitializeRepeatable,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        InitializeMaxTokensValidated,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (TurnEndReason, ResponseAnswered, "silent-after-initialize"),
    (TurnFinalText, ResponseAnswered, "silent-after-initialize"),
    (TurnFinalText, ReceiptIdMatchesInserted, "no-receipt"),
    (TurnFinalText, StatusIdleAfterTurn, "no-idle"),
    (
        LegacySessionFinished,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        SubagentNotifications,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        ResponseExactlyOnce,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        ResponseIdTypePreserved,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameMalformedIgnored,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameNonObjectIgnored,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameBatchIgnored,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameIdInvalidIsNotification,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameNonStringMethodIgnored,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameNotificationsIgnored,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameUnknownResponseIgnored,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameJsonrpcMemberNotChecked,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameIdNumberEcho,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (FrameIdNumberEcho, ResponseIdTypePreserved, "string-ids"),
    (
        FrameCrlfAccepted,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameCrNotSeparator,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameWhitespaceTrimmed,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameSplitWrites,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameUnterminatedTailDropped,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        FrameUnterminatedTailDropped,
        LifecycleEofExits0,
        "ignores-eof",
    ),
    (
        FrameInvalidUtf8Replaced,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (FrameLargeLine, ResponseAnswered, "silent-after-initialize"),
    (
        FrameDeepNesting,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        ErrorUnknownMethod,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        ErrorLongMethodQuoted,
        ErrorUnknownMethod,
        "method-not-found",
    ),
    (
        ErrorNoReservedCodes,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        InitializeGatesRequests,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (PromptMessageId, ResponseAnswered, "silent-after-initialize"),
    (ReceiptIdMatchesInserted, PromptMessageId, "no-message-id"),
    (ReceiptIdMatchesInserted, TurnEndReason, "no-turn-end"),
    (
        ReceiptPrecedesResponse,
        ReceiptIdMatchesInserted,
        "no-receipt",
    ),
    (
        TurnUserMessageId,
        ReceiptIdMatchesInserted,
        "message-id-mismatch",
    ),
    (
        TurnEndBeforeIdle,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (TurnEndBeforeIdle, TurnEndReason, "no-turn-end"),
    (
        StatusIdleAfterTurn,
        TurnEndBeforeIdle,
        "idle-before-turn-end",
    ),
    (TurnCountsPerSession, TurnEndReason, "no-turn-end"),
    (TurnNoReplay, TurnEndReason, "no-turn-end"),
    (TurnNoReplay, ReceiptIdMatchesInserted, "no-receipt"),
    (
        TurnNoReplay,
        ReceiptPrecedesResponse,
        "response-before-receipt",
    ),
    (
        ReceiptPrecedesResponse,
        TurnSessionsIsolated,
        "first-session-only",
    ),
    (
        SessionSeqContiguous,
        TurnSessionsIsolated,
        "first-session-only",
    ),
    (
        SessionIdsAreData,
        TurnSessionsIsolated,
        "first-session-only",
    ),
    (TurnSessionsIsolated, TurnEndReason, "no-turn-end"),
    (TurnSessionsIsolated, TurnCountsPerSession, "frozen-turn"),
    (SessionSeqContiguous, TurnEndReason, "no-turn-end"),
    (
        TurnOverlapQueued,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (TurnOverlapQueued, TurnEndReason, "no-turn-end"),
    (
        TurnOverlapRejected,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (SessionIdsAreData, PromptMessageId, "no-message-id"),
    (SessionIdsAreData, TurnEndReason, "no-turn-end"),
    (
        ResumeValidation,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (ResumeAcrossProcesses, TurnEndReason, "no-turn-end"),
    (
        ResumeAcrossProcesses,
        LifecycleShutdownExits0,
        "shutdown-no-exit",
    ),
    (ResumeAcrossProcesses, TurnCountsPerSession, "frozen-turn"),
    (
        ResumeAcrossProcesses,
        TurnSessionsIsolated,
        "shared-turn-counter",
    ),
    (ResumeNoReplay, ResumeAcrossProcesses, "no-resume"),
    (
        ResumeNoReplay,
        ReceiptPrecedesResponse,
        "response-before-receipt",
    ),
    (WaitSettlesAfterIdle, StatusIdleAfterTurn, "no-idle"),
    (
        WorkingDirectoryGetSet,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        WorkingDirectoryValidation,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        WorkingDirectoryValidation,
        WorkingDirectoryGetSet,
        "no-working-directory",
    ),
    (
        LifecycleShutdownResponds,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        LifecycleShutdownAfterEmptySessionId,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        LifecycleShutdownCutsTurn,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        LifecycleShutdownCutsTurn,
        LifecycleShutdownExits0,
        "shutdown-no-exit",
    ),
    (
        LifecycleShutdownAfterEmptySessionId,
        LifecycleShutdownExits0,
        "shutdown-no-exit",
    ),
    (
        LifecycleEofExits0,
        ResponseAnswered,
        "silent-after-initialize",
    ),
    (
        LifecycleEofDuringTurnExits0,
        LifecycleEofExits0,
        "ignores-eof",
    ),
];

#[test]
fn the_edge_table_is_the_registry() {
    let listed: BTreeSet<(CheckId, CheckId)> = EDGES.iter().map(|(a, b, _)| (*a, *b)).collect();
    assert_eq!(listed.len(), EDGES.len(), "an edge listed twice");
    let registry: BTreeSet<(CheckId, CheckId)> = check::of(Subject::Runtime)
        .flat_map(|c| c.requires.iter().map(move |r| (c.id, *r)))
        .collect();
    assert_eq!(listed, registry);
    for (_, _, list) in EDGES {
        dsh_conformance::mutants::find_all(list).unwrap();
    }
}

/// The edition A is run under: its first.
fn edition_of(a: CheckId) -> Edition {
    a.info().editions.iter().next().unwrap()
}

#[test]
fn every_prerequisite_is_needed_a_runtime_breaking_it_breaks_its_dependent() {
    // Each (A, mutant) once: A alone against the mutant of B must not pass; and each (B, mutant)
    // once: B alone must fail (the mutant does break B).
    let runs: BTreeSet<(CheckId, &str, bool)> = EDGES
        .iter()
        .flat_map(|(a, b, m)| [(*a, *m, false), (*b, *m, true)])
        .collect();
    let runs: Vec<_> = runs.into_iter().collect();
    let next = Mutex::new(runs.iter());
    let wrong = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let Some((a, list, breaks)) = next.lock().unwrap().next() else {
                    return;
                };
                let edition = edition_of(*a);
                let cmd = CommandSpec::new(KIT)
                    .arg("mutant")
                    .arg(*list)
                    .arg("--")
                    .arg(RUNTIME)
                    .arg("--edition")
                    .arg(edition.name());
                let opts = Options {
                    edition,
                    select: dsh_conformance::suite::select::Selection::only(a.as_str()),
                    frame_timeout: Duration::from_secs(3),
                    ..Options::default()
                };
                let report = run(&cmd, list, &opts).expect("a report");
                let v = &report
                    .results
                    .iter()
                    .find(|c| c.info.id == *a)
                    .expect("the filter selects A")
                    .verdict;
                if *breaks && !matches!(v, Verdict::Fail(_)) {
                    let v = format!("{} {}", v.word(), v.summary());
                    wrong
                        .lock()
                        .unwrap()
                        .push(format!("{list} does not break {a}: {v}"));
                } else if matches!(v, Verdict::Pass) {
                    wrong
                        .lock()
                        .unwrap()
                        .push(format!("{a} passes against {list}"));
                }
            });
        }
    });
    let wrong = wrong.into_inner().unwrap();
    assert!(
        wrong.is_empty(),
        "prerequisites no runtime justifies:\n{}",
        wrong.join("\n")
    );
}
