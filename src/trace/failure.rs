//! How a replayed case failed or how its process ended: the matcher's verdict types, shared with
//! the runner and the suite (which never parse the reason text: [`FailureKind`] says what it is).

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitInfo {
    /// Exited with a code.
    Code(i32),
    /// Killed by a signal.
    Signal(i32),
    /// Still running, or unknown.
    Unknown,
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitInfo::Code(c) => write!(f, "exit code {c}"),
            ExitInfo::Signal(s) => write!(f, "killed by signal {s}"),
            ExitInfo::Unknown => f.write_str("exit status unknown"),
        }
    }
}

/// Why a case failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// One-line reason.
    pub reason: String,
    /// The trace line of the expectation concerned (`file:line`), if any.
    pub at: Option<String>,
    /// The expectation as written.
    pub expected: Option<String>,
    /// The received frame closest to it, or the offending frame.
    pub closest: Option<String>,
    /// The smallest differing part (JSON pointer: expected vs got).
    pub diff: Option<crate::rules::evidence::Difference>,
    /// The last frames received before the failure (of one session: `recent_session`).
    pub recent: Vec<String>,
    /// The session the expectation is about, when `recent` holds its frames only.
    pub recent_session: Option<String>,
    /// What kind of failure it is.
    pub kind: FailureKind,
    /// 1-based line of the trace file of the expectation concerned.
    pub trace_line: Option<usize>,
    /// 1-based stdout line of the offending frame.
    pub stdout_line: Option<usize>,
}

/// What kind of thing went wrong, so reports and tests never parse reason text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// An expected frame arrived with a different value (the closest open expectation differs).
    Mismatch,
    /// An expected frame had not arrived when a frame the trace orders after it came (and did
    /// not come in the short grace the runner gives it afterwards).
    Missing,
    /// An expected frame arrived, but after a frame the trace orders after it.
    OutOfOrder,
    /// A frame arrived that the trace does not allow.
    Unexpected,
    /// The deadline of the expectation blocking progress passed.
    Timeout,
    /// The process ended, or did not end, against the trace.
    Exit,
    /// A stdout line is not a JSON object.
    NotAFrame,
    /// The rule engine found the rule broken in a transcript (used above the matcher).
    Rule,
    /// The kit itself could not run the case (invalid trace, directories, a bad send).
    Harness,
    /// The runtime wrote more on stdout than the kit stores and was killed there.
    Flooded,
    /// The runtime lacks a method of the edition: it answers it as an unknown method (the
    /// method probe, `suite::methods`, above the matcher).
    MissingMethod,
}

impl FailureKind {
    /// Lower-case name for JSON reports.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Mismatch => "mismatch",
            FailureKind::Missing => "missing",
            FailureKind::OutOfOrder => "out-of-order",
            FailureKind::Unexpected => "unexpected",
            FailureKind::Timeout => "timeout",
            FailureKind::Exit => "exit",
            FailureKind::NotAFrame => "not-a-frame",
            FailureKind::Rule => "rule",
            FailureKind::Harness => "harness",
            FailureKind::Flooded => "flooded",
            FailureKind::MissingMethod => "missing-method",
        }
    }
}

impl Failure {
    /// A failure with only a kind and a reason (the other fields empty).
    pub fn new(kind: FailureKind, reason: impl Into<String>) -> Failure {
        Failure {
            reason: reason.into(),
            at: None,
            expected: None,
            closest: None,
            diff: None,
            recent: Vec::new(),
            recent_session: None,
            kind,
            trace_line: None,
            stdout_line: None,
        }
    }
}

/// The heading of a failure's last frames: of the session `about`, or of all.
pub fn recent_heading(about: Option<&str>) -> String {
    match about {
        Some(sid) => format!("last frames received about session {sid:?}"),
        None => "last frames received".to_owned(),
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.reason)?;
        if let (Some(at), Some(e)) = (&self.at, &self.expected) {
            writeln!(f, "  expected ({at}): {e}")?;
        }
        if let Some(c) = &self.closest {
            writeln!(f, "  closest frame: {c}")?;
        }
        if let Some(d) = &self.diff {
            writeln!(f, "  differs at {d}")?;
        }
        if !self.recent.is_empty() {
            writeln!(f, "  {}:", recent_heading(self.recent_session.as_deref()))?;
            for r in &self.recent {
                writeln!(f, "    {r}")?;
            }
        }
        Ok(())
    }
}
