//! What happened to one check: the verdict enum, the structured failure it carries, and the
//! check's result (its verdict and the time it took).

use crate::check::CheckInfo;
use crate::runner::Halt;
use std::fmt;
use std::time::Duration;

pub use crate::trace::matcher::FailureKind;

/// A broken rule, with everything a runtime author needs to act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong.
    pub kind: FailureKind,
    /// One line: what broke.
    pub reason: String,
    /// The trace (file) it happened in, when it came from a trace.
    pub case: Option<String>,
    /// The expectation concerned, as written in the trace, with its `file:line`.
    pub expected: Option<String>,
    /// The received frame closest to it, or the offending frame.
    pub closest: Option<String>,
    /// The smallest difference between them: `pointer: expected …, got …`.
    pub difference: Option<crate::rules::evidence::Difference>,
    /// 1-based stdout line of the offending frame, when one is known.
    pub stdout_line: Option<usize>,
    /// The last lines of the runtime's stderr.
    pub stderr_tail: String,
    /// Everything else, rendered (last frames received, oracle output).
    pub details: String,
    /// The model stub's requests of the case's own runtime process (its key's tag).
    pub model_log: Vec<String>,
    /// The case's wire log, bounded (the JSON and HTML reports show it).
    pub wire_log: Option<crate::runner::WireLog>,
}

impl Failure {
    /// A failure with just a kind and a reason.
    pub fn new(kind: FailureKind, reason: impl Into<String>) -> Failure {
        Failure {
            kind,
            reason: reason.into(),
            case: None,
            expected: None,
            closest: None,
            difference: None,
            stdout_line: None,
            stderr_tail: String::new(),
            details: String::new(),
            model_log: Vec::new(),
            wire_log: None,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.reason)?;
        if let Some(c) = &self.case {
            writeln!(f, "  in {c}")?;
        }
        if let Some(e) = &self.expected {
            writeln!(f, "  expected {e}")?;
        }
        if let Some(c) = &self.closest {
            match self.stdout_line {
                Some(n) => writeln!(f, "  got (stdout line {n}): {c}")?,
                None => writeln!(f, "  closest frame: {c}")?,
            }
        }
        if let Some(d) = &self.difference {
            writeln!(f, "  differs at {d}")?;
        }
        for l in self.details.lines() {
            writeln!(f, "  {l}")?;
        }
        if !self.model_log.is_empty() {
            writeln!(f, "  model stub requests of this case:")?;
            for l in &self.model_log {
                writeln!(f, "    {l}")?;
            }
        }
        if !self.stderr_tail.trim().is_empty() {
            writeln!(f, "  runtime stderr (tail):")?;
            let lines: Vec<&str> = self.stderr_tail.lines().collect();
            for l in &lines[lines.len().saturating_sub(12)..] {
                writeln!(f, "    {l}")?;
            }
        }
        Ok(())
    }
}

/// What happened to one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The rule held.
    Pass,
    /// The rule was broken.
    Fail(Box<Failure>),
    /// Not run: a prerequisite check failed. Names the failed checks at the root of the chain.
    Blocked {
        /// The failing checks that block this one.
        by: Vec<crate::check::CheckId>,
    },
    /// The rule could not be exercised on this runtime; never counted as a pass.
    NotTestable {
        /// Why.
        reason: String,
    },
    /// The check does not apply to the edition under test.
    Skip {
        /// Why.
        reason: String,
    },
    /// Failed, and listed in the known-failing baseline with this reason.
    KnownFailing {
        /// The failure.
        failure: Box<Failure>,
        /// The baseline's justification.
        baseline: String,
    },
    /// Listed in the baseline but passed: the baseline is stale (fails the run).
    StaleBaseline {
        /// The baseline's justification.
        baseline: String,
    },
    /// Not run, or not finished: the run was stopped first (a signal, its budget, a flood, a
    /// runtime the preflight found unusable). Never counted as a pass.
    NotRun(Halt),
}

impl Verdict {
    /// The short word for tables.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail(_) => "FAIL",
            Verdict::Blocked { .. } => "BLOCKED",
            Verdict::NotTestable { .. } => "UNTESTABLE",
            Verdict::Skip { .. } => "SKIP",
            Verdict::KnownFailing { .. } => "XFAIL",
            Verdict::StaleBaseline { .. } => "STALE",
            Verdict::NotRun(_) => "NOT RUN",
        }
    }

    /// The failure, for `Fail` and `KnownFailing`.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            Verdict::Fail(f) | Verdict::KnownFailing { failure: f, .. } => Some(f),
            _ => None,
        }
    }

    /// Whether this verdict keeps a check's dependents from running.
    pub fn blocks_dependents(&self) -> bool {
        matches!(
            self,
            Verdict::Fail(_)
                | Verdict::Blocked { .. }
                | Verdict::NotTestable { .. }
                | Verdict::KnownFailing { .. }
        )
    }

    /// One line for the table.
    pub fn summary(&self) -> String {
        match self {
            Verdict::Pass => String::new(),
            Verdict::Fail(f) => f.reason.clone(),
            Verdict::Blocked { by } => format!("blocked by {}", crate::check::list(by)),
            Verdict::NotTestable { reason } => format!("not testable: {reason}"),
            Verdict::Skip { reason } => reason.clone(),
            Verdict::KnownFailing { failure, baseline } => {
                format!("{} (baseline: {baseline})", failure.reason)
            }
            Verdict::StaleBaseline { baseline } => format!(
                "passes but is listed as known-failing ({baseline}): remove it from the baseline"
            ),
            Verdict::NotRun(h) => format!("not run: {h}"),
        }
    }
}

/// One check's result.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// The check.
    pub info: CheckInfo,
    /// Its verdict.
    pub verdict: Verdict,
    /// Wall time spent on it.
    pub duration: Duration,
    /// Where its cases ran, in order: fresh processes, or a shared one (`check --processes`).
    pub ran_in: Vec<super::share::RanIn>,
}
