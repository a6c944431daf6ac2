//! Verdicts and the three report formats: a human table, JSON ([`Report::json`]; schema in `docs/report.schema.json`)
//! and JUnit XML ([`Report::junit`]).

mod json;
mod junit;

use super::causes::{root_causes, RootCause};
use super::verdict::{CheckResult, Verdict};
use crate::check::Severity;
use crate::edition::Edition;
use crate::runner::Halt;
use std::fmt::Write as _;
use std::time::Duration;

/// The exit code of a run where nothing was tested (pytest's "no tests collected").
pub const NOTHING_TESTED: i32 = 5;

/// A whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The runtime command line, or `built-in reference runtime`.
    pub runtime: String,
    /// The edition checked.
    pub edition: Edition,
    /// Per-check results, in registry order.
    pub results: Vec<CheckResult>,
    /// Wall time of the run.
    pub duration: Duration,
    /// A note on the runtime as a whole, e.g. that its methods look like another edition's.
    pub hint: Option<String>,
    /// Set when the run stopped before every check was decided.
    pub stopped: Option<Stopped>,
    /// SHOULD failures fail the run too (`check --should-fail`); the JUnit report follows the
    /// same choice (a SHOULD failure that does not fail the run is `<skipped>` there, so a CI
    /// dashboard does not turn a green run unstable).
    pub should_fail: bool,
    /// How the runtime's processes were started: what its start cost in the preflight, and the
    /// spares each job kept booting ahead (`check --prespawn`). `None` when no preflight ran.
    pub start: Option<Start>,
}

/// How a run started the runtime's processes ([`Report::start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// The preflight's start: wall and CPU time to its `initialize` answer.
    pub boot: super::preflight::Boot,
    /// Processes each job started ahead of its next cases.
    pub spares_per_job: usize,
    /// Whether the shareable cases ran on shared warm processes (`check --processes`).
    pub shares_processes: bool,
    /// The run's plan, made from the boot ([`super::plan`]).
    pub plan: super::plan::Plan,
}

/// What a run amounts to, worst first: what a CI job decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The run stopped before every check was decided (the report is partial).
    Stopped(Halt),
    /// A check that fails the run failed: a MUST check (or, under `should_fail`, any check)
    /// failed or was untestable, or a baseline entry is stale.
    Findings,
    /// Nothing was tested: every selected check was skipped, blocked or untestable (SHOULD).
    NothingTested,
    /// Every check that was run conforms.
    Conforms,
}

impl Outcome {
    /// Its name in the JSON report: `stopped`, `findings`, `nothing-tested`, `conforms`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Stopped(_) => "stopped",
            Outcome::Findings => "findings",
            Outcome::NothingTested => "nothing-tested",
            Outcome::Conforms => "conforms",
        }
    }
}

/// Why and when a run stopped early: the report is partial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// What stopped it.
    pub halt: Halt,
    /// The one cause to act on, in words (for an unusable runtime, what the preflight saw).
    pub cause: String,
    /// The last lines of the runtime's stderr, when they explain it.
    pub stderr_tail: String,
    /// Time from the start of the run.
    pub after: Duration,
}

impl Stopped {
    /// The reason's name in JSON and JUnit: `signal`, `budget`, `flooded`, `unusable`.
    pub fn reason(&self) -> &'static str {
        match self.halt {
            Halt::Signal(_) => "signal",
            Halt::Budget(_) => "budget",
            Halt::Flooded => "flooded",
            Halt::Unusable => "unusable",
        }
    }
}

/// Counts over a report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Passed.
    pub passed: usize,
    /// Failed (any severity) plus stale baseline entries.
    pub failed: usize,
    /// Not run because a prerequisite failed.
    pub blocked: usize,
    /// Could not be exercised on this runtime.
    pub not_testable: usize,
    /// Not applicable to the edition.
    pub skipped: usize,
    /// Failed but listed in the baseline.
    pub known_failing: usize,
    /// Not run, or not finished, because the run stopped early.
    pub not_run: usize,
    /// What fails the run: MUST failures, untestable MUST checks and stale baseline entries.
    pub fatal: usize,
}

impl Report {
    /// Counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for r in &self.results {
            let must = r.info.severity == Severity::Must;
            match &r.verdict {
                Verdict::Pass => s.passed += 1,
                Verdict::Skip { .. } => s.skipped += 1,
                Verdict::KnownFailing { .. } => s.known_failing += 1,
                Verdict::Blocked { .. } => s.blocked += 1,
                Verdict::NotTestable { .. } => {
                    s.not_testable += 1;
                    s.fatal += usize::from(must);
                }
                Verdict::Fail(_) => {
                    s.failed += 1;
                    s.fatal += usize::from(must || self.should_fail);
                }
                Verdict::StaleBaseline { .. } => {
                    s.failed += 1;
                    s.fatal += 1;
                }
                Verdict::NotRun(_) => s.not_run += 1,
            }
        }
        s
    }

    /// What the run amounts to. A stopped run is [`Outcome::Stopped`] whatever it found; else
    /// findings come before "nothing tested".
    pub fn outcome(&self) -> Outcome {
        let s = self.summary();
        if let Some(st) = &self.stopped {
            Outcome::Stopped(st.halt)
        } else if s.fatal != 0 {
            Outcome::Findings
        } else if s.passed + s.failed + s.known_failing == 0 {
            Outcome::NothingTested
        } else {
            Outcome::Conforms
        }
    }

    /// True when the runtime conforms: every check that fails a run was run and passed.
    pub fn is_success(&self) -> bool {
        self.outcome() == Outcome::Conforms
    }

    /// Panics with the human report unless [`is_success`](Self::is_success): for a runtime
    /// author's `#[test]`.
    #[track_caller]
    pub fn assert_conforms(&self) {
        assert!(self.is_success(), "{}", self.human(false));
    }

    /// The command line's exit code for this report: 0 conforms, 1 findings, 5 nothing tested
    /// (as pytest's 5); a stopped run exits with [`Halt::exit_code`] (2 for an unusable runtime,
    /// 128 + N for signal N, else 1), or 1 when that is lower and it had findings.
    pub fn exit_code(&self) -> i32 {
        match self.outcome() {
            Outcome::Stopped(h) => h.exit_code().max(i32::from(self.summary().fatal != 0)),
            Outcome::Findings => 1,
            Outcome::NothingTested => NOTHING_TESTED,
            Outcome::Conforms => 0,
        }
    }

    /// The root causes: failing checks, those blocking most first.
    pub fn root_causes(&self) -> Vec<RootCause> {
        root_causes(&self.results)
    }

    /// The closing line: `N passed, N failed` (`, N blocked`, `, N not testable`, `, N skipped`,
    /// `, N known failing`).
    pub fn summary_line(&self) -> String {
        let s = self.summary();
        let mut line = format!("{} passed, {} failed", s.passed, s.failed);
        for (n, what) in [
            (s.blocked, "blocked"),
            (s.not_testable, "not testable"),
            (s.skipped, "skipped"),
            (s.known_failing, "known failing"),
            (s.not_run, "not run"),
        ] {
            if n > 0 {
                let _ = write!(line, ", {n} {what}");
            }
        }
        line
    }

    /// The human report: root causes first, then one line per check, failure details, summary.
    pub fn human(&self, verbose: bool) -> String {
        self.human_styled(verbose, false)
    }

    /// [`human`](Self::human), its verdict words in colour when `color` (ANSI: PASS green,
    /// FAIL and STALE red, others yellow, SKIP plain).
    pub fn human_styled(&self, verbose: bool, color: bool) -> String {
        let mut out = String::new();
        let client = !self.results.is_empty()
            && (self.results.iter()).all(|r| r.info.subject() == crate::check::Subject::Client);
        let _ = writeln!(
            out,
            "dsh-conformance {}: {} (edition {})",
            if client { "client" } else { "check" },
            self.runtime,
            self.edition
        );
        if let Some(st) = &self.stopped {
            let _ = writeln!(
                out,
                "\nSTOPPED after {:.1} s: {}. {}",
                st.after.as_secs_f64(),
                st.halt,
                st.cause
            );
            let lines: Vec<&str> = st.stderr_tail.lines().collect();
            if !lines.is_empty() {
                let _ = writeln!(out, "  runtime stderr (tail):");
                for l in &lines[lines.len().saturating_sub(12)..] {
                    let _ = writeln!(out, "    {l}");
                }
            }
        }
        if let Some(h) = &self.hint {
            let _ = writeln!(out, "\nnote: {h}");
        }
        let causes = self.root_causes();
        if !causes.is_empty() {
            let _ = writeln!(out, "\nRoot causes ({}), fix these first:", causes.len());
            for (i, c) in causes.iter().enumerate() {
                let _ = writeln!(out, "  {}. {}", i + 1, c.line());
            }
            out.push('\n');
        }
        let w = self
            .results
            .iter()
            .map(|r| r.info.id.as_str().len())
            .max()
            .unwrap_or(10);
        // The verdict column is as wide as its widest word in this report (UNTESTABLE is 10).
        let vw = self
            .results
            .iter()
            .filter(|r| !matches!(r.verdict, Verdict::NotRun(_)))
            .map(|r| r.verdict.word().len())
            .max()
            .unwrap_or(4);
        let mut not_run = Vec::new();
        for r in &self.results {
            if matches!(r.verdict, Verdict::NotRun(_)) {
                // One line for them all: a stopped run is not fifty lines of "not run".
                not_run.push(r.info.id);
                continue;
            }
            let sev =
                if matches!(r.verdict, Verdict::Fail(_)) && r.info.severity == Severity::Should {
                    " (SHOULD)"
                } else {
                    ""
                };
            let line = format!(
                "{} {:<w$}  {}{}",
                paint(&format!("{:<vw$}", r.verdict.word()), &r.verdict, color),
                r.info.id,
                r.verdict.summary(),
                sev
            );
            let _ = writeln!(out, "{}", line.trim_end());
        }
        if !not_run.is_empty() {
            let shown = not_run.len().min(8);
            let more = not_run.len() - shown;
            let _ = writeln!(
                out,
                "NOT RUN ({}): {}{}",
                not_run.len(),
                crate::check::list(&not_run[..shown]),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
        for r in &self.results {
            let Some(f) = r.verdict.failure() else {
                continue;
            };
            if matches!(r.verdict, Verdict::KnownFailing { .. }) && !verbose {
                continue;
            }
            let _ = writeln!(
                out,
                "\n--- {} [{} {}] {}",
                r.info.id, r.info.severity, r.info.section, r.info.rule
            );
            let _ = write!(out, "{f}");
        }
        if let Some(l) = self.processes_line() {
            let _ = writeln!(out, "\n{l}");
        }
        let _ = writeln!(out, "\n{}", self.summary_line());
        out
    }

    /// Where the cases ran, when some shared a process (the JSON report's `ran_in` per check).
    fn processes_line(&self) -> Option<String> {
        use super::share::RanIn;
        let ran = || self.results.iter().flat_map(|r| &r.ran_in);
        let shared = ran().filter(|r| matches!(r, RanIn::Shared { .. })).count();
        let again = ran()
            .filter(|r| matches!(r, RanIn::FreshAgain { .. }))
            .count();
        let fresh = ran().filter(|r| matches!(r, RanIn::Fresh)).count();
        (shared + again > 0).then(|| {
            format!(
                "processes: {shared} case(s) passed on shared warm processes, {again} ran again alone after not passing cleanly there, {fresh} ran alone (--processes fresh runs every case alone)"
            )
        })
    }
}

/// `word` in the verdict's colour when `color`.
fn paint(word: &str, v: &Verdict, color: bool) -> String {
    let code = match v {
        _ if !color => return word.to_owned(),
        Verdict::Pass => "32",
        Verdict::Fail(_) | Verdict::StaleBaseline { .. } => "31",
        Verdict::Skip { .. } => return word.to_owned(),
        _ => "33",
    };
    format!("\x1b[{code}m{word}\x1b[0m")
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::check::find;
    use crate::suite::verdict::Failure;

    /// A small report: a pass, a SHOULD failure, a skip and a known failure.
    pub(in crate::suite) fn report() -> Report {
        let r = |id: &str, verdict: Verdict| CheckResult {
            info: *find(id).unwrap(),
            verdict,
            duration: Duration::from_millis(3),
            ran_in: Vec::new(),
        };
        Report {
            runtime: "./rt --profile sdk".into(),
            edition: Edition::Current,
            duration: Duration::from_millis(40),
            hint: None,
            stopped: None,
            should_fail: false,
            start: None,
            results: vec![
                r("stdout.frames-only", Verdict::Pass),
                r(
                    "frame.cr-not-separator",
                    Verdict::Fail(Box::new(Failure {
                        details: "got <x> & \u{1}".into(),
                        ..Failure::new(super::super::FailureKind::Unexpected, "A\\rB answered")
                    })),
                ),
                r(
                    "turn.overlap-rejected",
                    Verdict::Skip {
                        reason: "not in edition current".into(),
                    },
                ),
                r(
                    "error.unknown-method",
                    Verdict::KnownFailing {
                        failure: Box::new(Failure::new(
                            super::super::FailureKind::Mismatch,
                            "-32000",
                        )),
                        baseline: "ours".into(),
                    },
                ),
            ],
        }
    }

    #[test]
    fn the_human_report_says_where_cases_ran_only_when_some_shared() {
        use crate::suite::share::RanIn;
        let mut r = report();
        assert!(!r.human(false).contains("processes:"));
        r.results[0].ran_in = vec![RanIn::Shared { process: 1, nth: 2 }, RanIn::Fresh];
        r.results[1].ran_in = vec![RanIn::FreshAgain { process: 1 }];
        let h = r.human(false);
        let line = h.lines().find(|l| l.starts_with("processes:")).expect(&h);
        assert!(
            line.starts_with("processes: 1 case(s) passed on shared warm processes, 1 ran again alone after not passing cleanly there, 1 ran alone"),
            "{line}"
        );
    }

    #[test]
    fn the_json_report_says_which_requirements_the_run_judged_and_broke() {
        use crate::check::CheckId as C;
        use crate::requirements::{of_check, render};
        let q = report().json()["requirements"].clone();
        let reqs = |ids: &[C]| -> std::collections::BTreeSet<&str> {
            let of_current =
                |r: &&crate::requirements::Requirement| r.editions.contains(Edition::Current);
            ids.iter()
                .flat_map(|c| of_check(*c).filter(of_current).map(|r| r.id))
                .collect()
        };
        // The skipped check judged nothing; the failing and the known-failing broke theirs.
        let judged = reqs(&[
            C::StdoutFramesOnly,
            C::FrameCrNotSeparator,
            C::ErrorUnknownMethod,
        ]);
        let broken = reqs(&[C::FrameCrNotSeparator, C::ErrorUnknownMethod]);
        assert_eq!(q["judged"], judged.len(), "{q}");
        assert_eq!(q["broken"], broken.len(), "{q}");
        assert!(q["in_run"].as_u64() >= q["judged"].as_u64(), "{q}");
        let (_, total) = render::coverage(Edition::Current);
        assert_eq!(q["total"], total.total());
        assert_eq!(q["open_must"], total.open_must);
    }

    #[test]
    fn the_summary_counts_and_only_must_failures_are_fatal() {
        let rep = report();
        assert_eq!(
            rep.summary_line(),
            "1 passed, 1 failed, 1 skipped, 1 known failing"
        );
        assert_eq!(rep.exit_code(), 0, "a SHOULD failure does not fail the run");
        let mut rep = report();
        rep.results[0].verdict =
            Verdict::Fail(Box::new(Failure::new(super::super::FailureKind::Rule, "x")));
        assert_eq!(rep.exit_code(), 1);
        let mut rep = report();
        rep.results[3].verdict = Verdict::StaleBaseline {
            baseline: "ours".into(),
        };
        assert_eq!(rep.exit_code(), 1, "a stale baseline fails the run");
    }

    /// [`report`] with printable failure details (its control character is for JUnit's escaping).
    fn printable() -> Report {
        let mut rep = report();
        if let Verdict::Fail(f) = &mut rep.results[1].verdict {
            f.details = "got <x> & y".into();
        }
        rep
    }

    #[test]
    fn outcomes_order_stopped_findings_nothing_tested_conforms() {
        let mut rep = report();
        assert_eq!(rep.outcome(), Outcome::Conforms);
        assert!(rep.is_success());
        rep.should_fail = true;
        assert_eq!(
            rep.outcome(),
            Outcome::Findings,
            "--should-fail: the SHOULD failure counts"
        );
        assert_eq!(rep.exit_code(), 1);
        let mut rep = report();
        for r in &mut rep.results {
            r.verdict = Verdict::Skip {
                reason: "not in edition".into(),
            };
        }
        assert_eq!(rep.outcome(), Outcome::NothingTested);
        assert_eq!(rep.exit_code(), NOTHING_TESTED);
        rep.stopped = Some(Stopped {
            halt: Halt::Unusable,
            cause: "exit 127".into(),
            stderr_tail: String::new(),
            after: Duration::ZERO,
        });
        assert_eq!(rep.outcome(), Outcome::Stopped(Halt::Unusable));
        assert_eq!(rep.exit_code(), 2);
        assert_eq!(rep.json()["outcome"], "stopped");
    }

    #[test]
    fn colour_is_only_on_the_verdict_words_and_only_when_asked() {
        let rep = report();
        assert!(!rep.human(false).contains('\x1b'));
        let c = rep.human_styled(false, true);
        assert!(c.contains("\x1b[32mPASS"), "{c}");
        assert!(c.contains("\x1b[31mFAIL"), "{c}");
        let plain: String = c
            .replace("\x1b[32m", "")
            .replace("\x1b[31m", "")
            .replace("\x1b[33m", "");
        assert_eq!(plain.replace("\x1b[0m", ""), rep.human(false));
    }

    /// The human report is text for a person: pinned whole (root causes first, a row per check
    /// with its SHOULD mark, failure details, the summary last), as `cargo insta review` shows it.
    #[test]
    fn the_human_report() {
        let mut rep = printable();
        rep.hint = Some("its methods look like edition 2026-08's: try --edition 2026-08".into());
        insta::assert_snapshot!(rep.human(false));
    }

    /// A stopped run: the stop and the runtime's words first, the checks not run on one line.
    #[test]
    fn the_human_report_of_a_stopped_run() {
        let mut rep = printable();
        let halt = Halt::Budget(Duration::from_secs(4));
        rep.stopped = Some(Stopped {
            halt,
            cause: "frame.cr-not-separator was still running".into(),
            stderr_tail: "booting\nstill booting\n".into(),
            after: Duration::from_millis(4100),
        });
        rep.results[2].verdict = Verdict::NotRun(halt);
        rep.results[3].verdict = Verdict::NotRun(halt);
        insta::assert_snapshot!(rep.human(false));
    }
}
