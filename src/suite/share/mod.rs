//! Which cases may share a warm runtime process, and how their ids are kept apart (issue 38).
//!
//! A runtime slow to boot pays its boot once per case on fresh processes. A case whose rule does
//! not depend on the process's state may instead run on a process that earlier cases of the same
//! job used ([`crate::runner::Warm`]). Verdicts must not change, so sharing is only ever a faster
//! way to a PASS: a case that does not pass cleanly on a shared process (any failure, any finding
//! about another rule, any line of another case in its transcript) is run again, alone, on a
//! fresh process, and that run is the one judged.
//!
//! What a case needs in order to share (computed from its trace, [`shareable`]):
//! - its check is not about the process itself ([`about_the_process`]);
//! - its first two steps are the initialize request and its answer (the process's, run once),
//!   and it sends no other initialize request;
//! - no end of input, signal or exit; its bytes end on a line's end (the next case's first
//!   line is a line of its own);
//! - literal session ids only, plain ones;
//! - nothing of its own: no `# env:`, no `# continues:`, not continued by another case, not
//!   setup-only.
//!
//! Its names are kept apart from the other cases' of the process in one of two ways
//! ([`Sharing`]): renamed with a prefix of its own ([`renamed`]), or, when renaming would change
//! what it tests or cannot reach every name (numeric, null or odd ids, ids split over writes or
//! of invalid bytes), kept as written on a process where none of them was used ([`Used`]).

mod names;

use names::plain;
pub use names::{names, only_own_lines, renamed, Names, Used};

use super::cases::CheckCase;
use crate::check::CheckId;
use crate::trace::{Send, StepKind, Trace};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

/// Checks that always get a fresh process: rules about the process's start, life and end,
/// about resuming across processes, about subagents (judged from the model stub's log, which is
/// per process), and about session ids as data (the runtime's storage, per process).
const PROCESS_RULES: &[&str] = &[
    "initialize.",
    "lifecycle.",
    "resume.",
    "subagent.",
    "session.ids-are-data",
];

/// Checks about how ids are echoed or treated: renaming would change what they test, so they
/// share as written ([`Sharing::Literal`]).
const ID_RULES: &[&str] = &[
    "frame.id-",
    "frame.lone-surrogates-",
    "response.id-type-preserved",
];

/// The boot (the preflight's `initialize`) from which `--processes auto` shares processes: over
/// three times what the test bed's Python runtimes take, so that a loaded machine does not turn
/// sharing on for runtimes that start in a blink (the release takes 1.1–1.5 s, the reference a
/// few ms).
pub const SHARE_FROM: Duration = Duration::from_millis(500);

/// Cases one shared process serves at most (a long-lived process accumulates state).
pub const MAX_CASES_PER_PROCESS: usize = 32;

/// The shared processes `cases` shareable cases start over `jobs` jobs, when each passes
/// cleanly (a plan's least: one per job that gets one, and one per [`MAX_CASES_PER_PROCESS`]).
pub fn processes_for(cases: usize, jobs: usize) -> usize {
    cases
        .min(jobs.max(1))
        .max(cases.div_ceil(MAX_CASES_PER_PROCESS))
}

/// How checks use runtime processes (`check --processes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Processes {
    /// Every case on a fresh process of its own (the behaviour before issue 38).
    Fresh,
    /// The cases that may share a process do ([`shareable`]); the rest get fresh ones.
    Shared,
    /// `Shared` for a runtime whose boot took [`SHARE_FROM`] or more, else `Fresh`.
    #[default]
    Auto,
}

impl Processes {
    /// Whether cases share processes, given the preflight's boot.
    pub fn shares(self, boot: Duration) -> bool {
        match self {
            Processes::Fresh => false,
            Processes::Shared => true,
            Processes::Auto => boot >= SHARE_FROM,
        }
    }
}

/// The cases that may share a process (by file), and how ([`shareable`]).
pub type Eligible = std::collections::HashMap<&'static str, Sharing>;

/// How a case's names are kept apart from those of the other cases of its process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Its request ids and session ids renamed with a prefix of its own ([`renamed`]).
    Renamed,
    /// As written, on a process where none of its names was used before ([`Used::free`]), its
    /// lines then naming none used before it ([`Used::own_lines`]).
    Literal,
}

/// Where a case ran (the JSON report's `ran_in`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RanIn {
    /// On a fresh process of its own.
    Fresh,
    /// On shared process `process` (numbered in the run), its `nth` case.
    Shared {
        /// The process's number.
        process: u64,
        /// Which of its cases (1-based, after its initialize).
        nth: usize,
    },
    /// On a fresh process, after a run on shared process `process` that did not pass cleanly
    /// (that run is not judged).
    FreshAgain {
        /// The shared process's number.
        process: u64,
    },
}

impl std::fmt::Display for RanIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RanIn::Fresh => f.write_str("fresh"),
            RanIn::Shared { process, nth } => write!(f, "shared process {process}, case {nth}"),
            RanIn::FreshAgain { process } => write!(
                f,
                "fresh, after not passing cleanly on shared process {process}"
            ),
        }
    }
}

/// How `case` may run on a shared process, if it may (see the module's doc). `continued`: the
/// cases that another continues (they need directories of their own: [`continued`]).
pub fn shareable(case: &CheckCase, continued: &BTreeSet<String>) -> Option<Sharing> {
    if about_the_process(case.check.id) || case.setup_only {
        return None;
    }
    let t = case.trace(false).ok()?;
    let alone = continued.contains(&t.meta.case) || t.meta.continues.is_some();
    if alone || !t.meta.env.is_empty() {
        return None;
    }
    let (ids, sessions) = names(&t);
    let fits = starts_with_initialize(&t)
        && t.steps[2..].iter().all(|s| step_fits(&s.kind))
        && ends_on_a_line(&t)
        && sessions.iter().all(|n| plain(n));
    if !fits {
        return None;
    }
    let id_rule = ID_RULES
        .iter()
        .any(|p| case.check.id.as_str().starts_with(p));
    if !id_rule && renameable(&t) && ids.iter().all(|n| plain(n)) {
        return Some(Sharing::Renamed);
    }
    // As written: its names must not look like another case's renamed ones.
    (!ids.iter().chain(&sessions).any(|n| looks_renamed(n))).then_some(Sharing::Literal)
}

/// The cases of `all` that another case continues (`# continues:`).
pub fn continued(all: &[CheckCase]) -> BTreeSet<String> {
    (all.iter().filter_map(|c| c.trace(false).ok()))
        .filter_map(|t| t.meta.continues)
        .collect()
}

/// The trace's first step sends the `initialize` request and its second expects the answer; no
/// later step sends another `initialize` request (a notification of that name is data).
fn starts_with_initialize(t: &Trace) -> bool {
    let init = |k: &StepKind, request: bool| match k {
        StepKind::Send(Send::Frame { text, id, .. }) => {
            (id.is_some() || !request)
                && sent_json(text)
                    .is_some_and(|v| v.get("method").and_then(Value::as_str) == Some("initialize"))
        }
        _ => false,
    };
    t.steps.len() > 2
        && init(&t.steps[0].kind, true)
        && matches!(t.steps[1].kind, StepKind::Expect(_))
        && !t.steps[2..].iter().any(|s| init(&s.kind, true))
}

/// A step a shared process may be given: frames (literal session ids only), raw bytes, pauses,
/// expectations.
fn step_fits(k: &StepKind) -> bool {
    match k {
        StepKind::Send(Send::Frame { text, .. }) => match sent_json(text) {
            Some(v) => {
                let sid = v.pointer("/params/sessionId");
                sid.is_none_or(|s| s.as_str().is_some_and(|s| !s.contains("{{")))
            }
            None => false,
        },
        StepKind::Send(Send::Raw(_) | Send::Pause(_)) | StepKind::Expect(_) => true,
        StepKind::Send(Send::Eof | Send::Signal(_)) | StepKind::Exit(_) => false,
    }
}

/// The case's last bytes end a line (a frame is sent with its `\n`), so the next case's first
/// line is not joined to its last.
fn ends_on_a_line(t: &Trace) -> bool {
    let last = (t.steps.iter().rev()).find_map(|s| match &s.kind {
        StepKind::Send(Send::Frame { .. }) => Some(true),
        StepKind::Send(Send::Raw(b)) => Some(b.ends_with(b"\n")),
        _ => None,
    });
    last.unwrap_or(true)
}

/// Whether [`renamed`] reaches every name the trace's sends give: string ids only, raw bytes
/// of UTF-8 whose every `"id":"` string is closed in the same send (a name split over writes,
/// or of invalid bytes, is not found).
fn renameable(t: &Trace) -> bool {
    t.steps.iter().all(|s| match &s.kind {
        StepKind::Send(Send::Frame { id, .. }) => id.as_ref().is_none_or(|i| i.starts_with('"')),
        StepKind::Send(Send::Raw(b)) => std::str::from_utf8(b)
            .is_ok_and(|text| text.split(r#""id":""#).skip(1).all(|p| p.contains('"'))),
        _ => true,
    })
}

/// Whether `name` has the shape of a renamed one (`k3-…`).
fn looks_renamed(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('k') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].starts_with('-')
}

/// A sent frame's JSON (the kit's parser: some sends hold lone surrogates on purpose).
pub(super) fn sent_json(text: &str) -> Option<Value> {
    crate::wire::json::parse(text).ok().map(|p| p.value)
}

/// Whether check `id` is about the process itself (never shared).
pub fn about_the_process(id: CheckId) -> bool {
    PROCESS_RULES.iter().any(|p| id.as_str().starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_cases_start_a_process_per_job_and_per_thirty_two() {
        assert_eq!(processes_for(0, 2), 0);
        assert_eq!(processes_for(1, 2), 1);
        assert_eq!(processes_for(38, 2), 2);
        assert_eq!(processes_for(100, 2), 4);
    }

    #[test]
    fn auto_shares_from_half_a_second_of_boot() {
        let ms = Duration::from_millis;
        assert!(!Processes::Auto.shares(ms(150)) && Processes::Auto.shares(ms(500)));
        assert!(Processes::Shared.shares(ms(1)) && !Processes::Fresh.shares(ms(60_000)));
    }

    #[test]
    fn process_rules_and_odd_traces_never_share_and_plain_ones_do() {
        let all = super::super::cases::all().unwrap();
        let continued = continued(&all);
        assert!(continued.contains("resume-setup"), "{continued:?}");
        let how = |f: &str| {
            let c = all.iter().find(|c| c.file == f).unwrap();
            shareable(c, &continued)
        };
        // About the process, sent before initialize, an empty or odd session id, an end of
        // input: fresh.
        for f in [
            "frame.lone-surrogates-echoed.trace",
            "initialize.repeatable.trace",
            "error.unknown-method.trace",
            "frame.params-normalised.trace",
            "working-directory.validation.trace",
            "frame.unterminated-tail-dropped.trace",
            "session.ids-are-data.trace",
        ] {
            assert_eq!(how(f), None, "{f}");
        }
        // Ids that are what the check tests, numbers, bytes split over writes or not UTF-8:
        // as written.
        for f in [
            "frame.id-number-echo.trace",
            "response.id-type-preserved.trace",
            "frame.lone-surrogates-survived.trace",
            "frame.unknown-response-ignored.trace",
            "frame.split-writes.trace",
            "frame.invalid-utf8-replaced.trace",
        ] {
            assert_eq!(how(f), Some(Sharing::Literal), "{f}");
        }
        // Plain names, raw lines joined by a later frame, a later initialize notification:
        // renamed.
        for f in [
            "frame.cr-not-separator.trace",
            "frame.notifications-ignored.trace",
            "working-directory.get-set.trace",
        ] {
            assert_eq!(how(f), Some(Sharing::Renamed), "{f}");
        }
        // The model's cases (most of a slow runtime's boots) share; the process's never do.
        for c in &all {
            let id = c.check.id.as_str();
            if ["turn.", "receipt.", "prompt.", "wait."]
                .iter()
                .any(|p| id.starts_with(p))
            {
                assert_eq!(
                    shareable(c, &continued),
                    Some(Sharing::Renamed),
                    "{}",
                    c.file
                );
            }
            if ["initialize.", "lifecycle.", "resume.", "subagent."]
                .iter()
                .any(|p| id.starts_with(p))
            {
                assert_eq!(shareable(c, &continued), None, "{}", c.file);
            }
        }
        assert!(looks_renamed("k3-s1") && !looks_renamed("k-s1") && !looks_renamed("keys"));
    }

    #[test]
    fn the_cases_kept_as_written_can_all_share_one_process() {
        // A name two of them send would send the second to a fresh process of its own.
        let all = super::super::cases::all().unwrap();
        let continued = continued(&all);
        let mut used = Used::default();
        let mut literal = 0;
        for c in &all {
            if shareable(c, &continued) != Some(Sharing::Literal) {
                continue;
            }
            let mut body = c.trace(false).unwrap();
            body.steps.drain(..2);
            assert!(used.free(&body), "{} reuses a name of another", c.file);
            used.record(&body, &[], 0);
            literal += 1;
        }
        assert!(literal >= 7, "{literal}");
    }
}
