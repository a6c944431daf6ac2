//! Finding classes: one cause, one class. A broken contract rule is named by its check id (the
//! stream rules of [`crate::rules`], and the settle and ending rules the driver judges), so the
//! fuzzer and `dsh-conformance check` speak of the same rules; what only the fuzzer can see
//! (hangs, broken stdout lines, differences from the reference runtime) has classes of its own.

use crate::rules::CheckId;
use std::fmt;

/// Where the fuzzer waited in vain for an answer it needs to go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HangAt {
    /// The leading `initialize`.
    Initialize,
    /// The barrier request after the ops.
    Barrier,
}

/// A stdout line the line reader could not hand over as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OutputFault {
    /// Not UTF-8.
    NotUtf8,
    /// Longer than the bound.
    TooLong,
    /// Stdout ended inside a line.
    Unterminated,
    /// More stdout than the kit stores: the runtime was killed.
    Flooded,
}

/// How a run differs from the reference runtime's run of the same sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiffKind {
    /// A request was answered a different number of times.
    ResponsePresence,
    /// A result against an error.
    Outcome,
    /// Different results.
    Result,
    /// Different error codes.
    ErrorCode,
    /// Different error messages.
    ErrorMessage,
    /// The per-session sequence of event types and status changes.
    Events,
    /// The text of a tool result (by tool: `diff:tool-result:<tool>`).
    ToolResult,
    /// Exit statuses.
    Exit,
}

impl DiffKind {
    fn name(self) -> &'static str {
        match self {
            DiffKind::ResponsePresence => "response-presence",
            DiffKind::Outcome => "outcome",
            DiffKind::Result => "result",
            DiffKind::ErrorCode => "error-code",
            DiffKind::ErrorMessage => "error-message",
            DiffKind::Events => "events",
            DiffKind::ToolResult => "tool-result",
            DiffKind::Exit => "exit",
        }
    }
}

/// A finding's class.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingClass {
    /// A contract rule, by its check id (shown as the id: `stdout.compact`).
    Rule(CheckId),
    /// No answer within the deadline (`hang:initialize`, `hang:barrier`).
    Hang(HangAt),
    /// Stdout closed before the fuzzer ended the sequence (`exit:early`).
    ExitEarly,
    /// A broken stdout line (`output:not-utf8`, …).
    Output(OutputFault),
    /// A difference from the reference runtime (`diff:<kind>[:<what>]`).
    Diff(DiffKind, String),
    /// The reference runtime itself broke a rule (`reference:<class>`): a bug on our side.
    Reference(Box<FindingClass>),
}

/// How a golden trace can pin a class (see [`FindingClass::pin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// By the answers to the requests: the trace expects the reference's answers and ends with
    /// the barrier (no ending, so an exit problem cannot make it fail).
    Responses,
    /// By the ending: the shutdown answer and `== exit 0` (a replay must fail there).
    Ending,
    /// By the stream rules `replay` judges over the whole conversation (notifications and how
    /// lines are written included): the trace ends with the barrier like [`Pin::Responses`], and
    /// a replay must report the class's check id among the stream rules broken.
    Stream,
    /// Not at all: the class lives where neither a trace nor the stream rules look.
    None(&'static str),
}

impl FindingClass {
    /// The check id the class is filed under, if it is a contract rule.
    pub fn check(&self) -> Option<CheckId> {
        match self {
            FindingClass::Rule(r) => Some(*r),
            _ => None,
        }
    }

    /// How a reproducing trace can pin this class.
    pub fn pin(&self) -> Pin {
        use CheckId as R;
        match self {
            FindingClass::Rule(r) => match r {
                R::LifecycleShutdownResponds | R::LifecycleShutdownExits0 | R::LifecycleEofExits0 => {
                    Pin::Ending
                }
                // Every other rule the stream checker judges: `replay` judges it over the
                // conversation (a fuzz trace names its class, whose rule is judged too).
                _ => Pin::Stream,
            },
            FindingClass::Hang(_) | FindingClass::ExitEarly => Pin::Responses,
            FindingClass::Output(_) => Pin::None("a trace does not pin how stdout lines are encoded"),
            FindingClass::Diff(DiffKind::Events | DiffKind::ToolResult, _) => {
                Pin::None("the difference lives in notifications, which the fuzzer's traces ignore")
            }
            FindingClass::Diff(DiffKind::Exit, _) => Pin::Ending,
            FindingClass::Diff(..) => Pin::Responses,
            FindingClass::Reference(_) => Pin::None(
                "the reference runtime broke the rule itself; its answers are the trace's expectations",
            ),
        }
    }

    /// Whether the class can show while the process ends (stdout closing, the exit status): a
    /// shrinking trial for any other class does not wait for the exit.
    pub fn shows_at_exit(&self) -> bool {
        match self {
            FindingClass::Reference(c) => c.shows_at_exit(),
            FindingClass::Output(_) => true,
            c => c.pin() == Pin::Ending,
        }
    }

    /// Whether the run cannot go on sensibly after it (its observations are incomplete).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            FindingClass::Hang(_) | FindingClass::ExitEarly | FindingClass::Output(_)
        )
    }
}

impl fmt::Display for FindingClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindingClass::Rule(r) => f.write_str(r.as_str()),
            FindingClass::Hang(HangAt::Initialize) => f.write_str("hang:initialize"),
            FindingClass::Hang(HangAt::Barrier) => f.write_str("hang:barrier"),
            FindingClass::ExitEarly => f.write_str("exit:early"),
            FindingClass::Output(o) => f.write_str(match o {
                OutputFault::NotUtf8 => "output:not-utf8",
                OutputFault::TooLong => "output:too-long",
                OutputFault::Flooded => "output:flooded",
                OutputFault::Unterminated => "output:unterminated",
            }),
            FindingClass::Diff(DiffKind::Exit, _) => f.write_str("diff:exit"),
            FindingClass::Diff(k, what) => write!(f, "diff:{}:{what}", k.name()),
            FindingClass::Reference(c) => write!(f, "reference:{c}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_classes_are_named_by_their_check_ids() {
        let c = FindingClass::Rule(CheckId::StdoutCompact);
        assert_eq!(c.to_string(), "stdout.compact");
        assert_eq!(c.check(), Some(CheckId::StdoutCompact));
        assert_eq!(
            FindingClass::Reference(Box::new(FindingClass::Rule(CheckId::EventTime))).to_string(),
            "reference:event.time"
        );
        let d = FindingClass::Diff(DiffKind::Events, "turn/end->status:idle".into());
        assert_eq!(d.to_string(), "diff:events:turn/end->status:idle");
        assert_eq!(c.pin(), Pin::Stream);
        // A response rule outside the list above is judged by the stream rules too: no note
        // about notifications.
        assert_eq!(FindingClass::Rule(CheckId::EventTime).pin(), Pin::Stream);
        assert_eq!(
            FindingClass::Rule(CheckId::ResponseExactlyOnce).pin(),
            Pin::Stream
        );
        assert_eq!(
            FindingClass::Rule(CheckId::FrameIdNumberEcho).pin(),
            Pin::Stream
        );
        assert_eq!(
            FindingClass::Rule(CheckId::LifecycleShutdownExits0).pin(),
            Pin::Ending
        );
        assert_eq!(FindingClass::Hang(HangAt::Barrier).pin(), Pin::Responses);
    }

    #[test]
    fn only_ending_and_output_classes_show_at_the_exit() {
        let exits = FindingClass::Rule(CheckId::LifecycleShutdownExits0);
        assert!(exits.shows_at_exit());
        assert!(FindingClass::Rule(CheckId::LifecycleEofExits0).shows_at_exit());
        assert!(FindingClass::Diff(DiffKind::Exit, String::new()).shows_at_exit());
        assert!(FindingClass::Output(OutputFault::Unterminated).shows_at_exit());
        assert!(FindingClass::Reference(Box::new(exits)).shows_at_exit());
        assert!(!FindingClass::Rule(CheckId::ResponseExactlyOnce).shows_at_exit());
        assert!(!FindingClass::Hang(HangAt::Barrier).shows_at_exit());
        assert!(!FindingClass::ExitEarly.shows_at_exit());
    }
}
