//! The violations of one output line, as the judging parts find them: each part adds to the
//! line's [`Sink`], and the checker hands the list out ([`crate::Judged`]). Its own module, on
//! the floor under every part, so that no part imports the checker's state for it.

use super::evidence::Difference;
use super::{CheckId, Violation, ViolationKind};

/// Collects the violations of one line.
pub(super) struct Sink {
    pub(super) line: Option<usize>,
    pub list: Vec<Violation>,
}

impl Sink {
    /// Records a violation of `rule`.
    pub fn add(&mut self, rule: CheckId, message: impl Into<String>) {
        self.add_kind(rule, ViolationKind::Other, message);
    }

    /// Records a violation of `rule` of a `kind` consumers tell apart.
    pub fn add_kind(&mut self, rule: CheckId, kind: ViolationKind, message: impl Into<String>) {
        self.list.push(Violation {
            rule,
            stdout_line: self.line,
            message: message.into(),
            kind,
            difference: None,
        });
    }

    /// Records a violation of `rule` with the part of the line that shows it.
    pub fn differs(&mut self, rule: CheckId, message: impl Into<String>, d: Difference) {
        self.add(rule, message);
        if let Some(v) = self.list.last_mut() {
            v.difference = Some(d);
        }
    }
}
