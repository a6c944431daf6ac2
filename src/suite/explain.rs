//! `dsh-conformance explain <check>`: what the kit knows about one check — its rule, severity and
//! editions, the contract sections it cites quoted from `docs/CONTRACT.md`, its prerequisites and
//! its traces.

use super::cases::{self, CheckCase};
use crate::check::CheckInfo;
use crate::contract::{CitationError, Contract, Section};
use std::fmt;

/// One check, explained.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The check.
    pub check: &'static CheckInfo,
    /// The contract sections its `section` cites, in citation order.
    pub sections: Vec<&'static Section<'static>>,
    /// Its traces under `fixtures/checks/` (none for a stream rule judged over every transcript).
    pub cases: Vec<CheckCase>,
}

/// Why a check cannot be explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExplainError {
    /// No check has this id.
    UnknownCheck(String),
    /// The check cites a section the built-in contract does not have.
    Citation {
        /// The check.
        check: crate::check::CheckId,
        /// What is wrong with its citation.
        error: CitationError,
    },
    /// The built-in check traces did not load.
    Cases(super::cases::CaseError),
}

impl fmt::Display for ExplainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExplainError::UnknownCheck(id) => {
                write!(f, "no check {id:?}")?;
                match suggest(id).as_slice() {
                    [] => f.write_str(
                        " (see `dsh-conformance check --list` and, for client checks, `client --list`)",
                    ),
                    near => write!(f, "; did you mean {}?", crate::check::list(near)),
                }
            }
            ExplainError::Citation { check, error } => write!(f, "{check}: {error}"),
            ExplainError::Cases(e) => write!(f, "the built-in check traces: {e}"),
        }
    }
}

impl std::error::Error for ExplainError {}

/// The check ids `id` may have meant, closest first (at most three): those containing it, else
/// those within a few edits of it (strsim's Damerau-Levenshtein, as clap's suggestions).
pub fn suggest(id: &str) -> Vec<crate::check::CheckId> {
    let all: Vec<crate::check::CheckId> = crate::check::CheckId::all().collect();
    let containing: Vec<_> = all
        .iter()
        .copied()
        .filter(|c| !id.is_empty() && c.as_str().contains(id))
        .collect();
    if !containing.is_empty() {
        return containing.into_iter().take(3).collect();
    }
    let mut near: Vec<(usize, crate::check::CheckId)> = all
        .iter()
        .map(|c| (strsim::damerau_levenshtein(id, c.as_str()), *c))
        .filter(|(d, _)| *d <= 3.max(id.len() / 4))
        .collect();
    near.sort();
    near.into_iter().take(3).map(|(_, c)| c).collect()
}

/// Explains the check `id`.
pub fn explain(id: &str) -> Result<Explanation, ExplainError> {
    let check = crate::check::find(id).ok_or_else(|| ExplainError::UnknownCheck(id.to_owned()))?;
    let sections = Contract::builtin()
        .resolve(check.section)
        .map_err(|error| ExplainError::Citation {
            check: check.id,
            error,
        })?;
    let cases = cases::all()
        .map_err(ExplainError::Cases)?
        .into_iter()
        .filter(|c| c.check.id == check.id)
        .collect();
    Ok(Explanation {
        check,
        sections,
        cases,
    })
}

/// The text `explain` prints: the check's line, rule and prerequisites, each cited section under a
/// `=== §N Title (docs/CONTRACT.md#sN) ===` rule, then each trace under `--- fixtures/checks/… ---`.
impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.check;
        writeln!(
            f,
            "{}  [{} {}; editions: {}]",
            info.id,
            info.severity,
            info.section,
            info.editions.names()
        )?;
        writeln!(f, "rule: {}", info.rule)?;
        if !info.requires.is_empty() {
            writeln!(
                f,
                "requires: {} (when one fails, this check is BLOCKED, not run)",
                crate::check::list(info.requires)
            )?;
        }
        if info.is_stream() {
            writeln!(
                f,
                "judged by the rule engine over every transcript of the run, whichever check produced it"
            )?;
        }
        let reqs: Vec<_> = crate::requirements::of_check(info.id).collect();
        if !reqs.is_empty() {
            writeln!(f, "requirements it covers (docs/REQUIREMENTS.md):")?;
            for r in reqs {
                writeln!(f, "  {} [{}] {}", r.id, r.level, r.text)?;
            }
        }
        for s in &self.sections {
            writeln!(
                f,
                "\n=== §{} {} ({}) ===\n{}",
                s.number,
                s.title,
                s.link(),
                s.text()
            )?;
        }
        for c in &self.cases {
            writeln!(
                f,
                "\n--- fixtures/checks/{} ---\n{}",
                c.file,
                c.text.trim_end()
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod suggest_tests {
    use super::*;

    #[test]
    fn an_unknown_id_gets_the_nearest_ones() {
        let e = explain("turn.final-txt").unwrap_err().to_string();
        assert!(e.contains("did you mean turn.final-text?"), "{e}");
        let e = explain("no-replay").unwrap_err().to_string();
        assert!(e.contains("turn.no-replay"), "{e}");
        let e = explain("zzzzzzzzzzzzzzzz").unwrap_err().to_string();
        assert!(e.contains("check --list"), "{e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_explains_with_the_sections_it_cites() {
        for c in crate::check::CHECKS {
            let e = explain(c.id.as_str()).unwrap_or_else(|e| panic!("{e}"));
            let cited: Vec<_> = e
                .sections
                .iter()
                .map(|s| format!("§{}", s.number))
                .collect();
            assert_eq!(cited.join(" "), c.section, "{}", c.id);
            assert!(
                c.is_stream() || c.judge == crate::check::Judge::Client || !e.cases.is_empty(),
                "{} has no trace",
                c.id
            );
        }
    }

    #[test]
    fn the_text_quotes_each_cited_section_and_an_unknown_id_is_its_own_error() {
        let text = explain("error.unknown-method").unwrap().to_string();
        assert!(
            text.starts_with("error.unknown-method  [MUST §2.3 §9;"),
            "{text}"
        );
        assert!(text.contains("=== §2.3 Answering requests (docs/CONTRACT.md#s2.3) ==="));
        assert!(text.contains("=== §9 Error messages (docs/CONTRACT.md#s9) ==="));
        assert!(text.contains("`initialize maxTokens must be a positive safe integer`"));
        assert!(text.contains("--- fixtures/checks/error.unknown-method.trace ---"));
        // The requirements it covers, by id; the quoted sections without their anchors.
        assert!(
            text.contains("requirements it covers (docs/REQUIREMENTS.md):\n  r"),
            "{text}"
        );
        for r in crate::requirements::of_check(crate::check::CheckId::ErrorUnknownMethod) {
            assert!(
                text.contains(&format!("  {} [{}] ", r.id, r.level)),
                "{}",
                r.id
            );
        }
        assert!(!text.contains("<a id=\"r"), "{text}");
        assert_eq!(
            explain("no.such").unwrap_err(),
            ExplainError::UnknownCheck("no.such".into())
        );
    }
}
