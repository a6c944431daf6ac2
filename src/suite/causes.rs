//! Root causes: the failures a runtime author should fix first, each with the checks it blocks.

use super::verdict::{CheckResult, Verdict};
use crate::check::{CheckId, Severity};

/// One failing check at the root of the report, with what it blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootCause {
    /// The failing (or untestable) check.
    pub check: CheckId,
    /// Its severity.
    pub severity: Severity,
    /// The contract section it enforces.
    pub section: &'static str,
    /// Its verdict word (`FAIL`, `UNTESTABLE`).
    pub verdict: &'static str,
    /// One line: what broke.
    pub reason: String,
    /// The checks that were not run because of it.
    pub blocks: Vec<CheckId>,
}

/// The root causes of a run: every FAIL and NOT TESTABLE check, those blocking most first, MUST
/// before SHOULD, then report order.
pub fn root_causes(results: &[CheckResult]) -> Vec<RootCause> {
    let mut out: Vec<(usize, RootCause)> = Vec::new();
    for (pos, r) in results.iter().enumerate() {
        let reason = match &r.verdict {
            Verdict::Fail(f) => f.reason.clone(),
            Verdict::NotTestable { reason } => reason.clone(),
            _ => continue,
        };
        let blocks = results
            .iter()
            .filter(|o| matches!(&o.verdict, Verdict::Blocked { by } if by.contains(&r.info.id)))
            .map(|o| o.info.id)
            .collect();
        out.push((
            pos,
            RootCause {
                check: r.info.id,
                severity: r.info.severity,
                section: r.info.section,
                verdict: r.verdict.word(),
                reason,
                blocks,
            },
        ));
    }
    out.sort_by(|(pa, a), (pb, b)| {
        b.blocks
            .len()
            .cmp(&a.blocks.len())
            .then(a.severity.cmp(&b.severity))
            .then(pa.cmp(pb))
    });
    out.into_iter().map(|(_, c)| c).collect()
}

impl RootCause {
    /// One line for the human report: `check [MUST §x]: reason → blocks N checks: …`.
    pub fn line(&self) -> String {
        let mut l = format!(
            "{} {} [{} {}]: {}",
            self.verdict, self.check, self.severity, self.section, self.reason
        );
        if !self.blocks.is_empty() {
            const SHOWN: usize = 8;
            let mut names = crate::check::list(&self.blocks[..self.blocks.len().min(SHOWN)]);
            if self.blocks.len() > SHOWN {
                names.push_str(&format!(" and {} more", self.blocks.len() - SHOWN));
            }
            l.push_str(&format!(
                "\n      → blocks {} check{}: {names}",
                self.blocks.len(),
                if self.blocks.len() == 1 { "" } else { "s" },
            ));
        }
        l
    }
}
