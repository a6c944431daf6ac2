//! The traces behind the checks: `fixtures/checks/*.trace`, embedded at build time.
//!
//! Each file names its check (`# check: <id>`), may name oracles to run over the whole transcript
//! once its expectations held (`# oracle: exactly-once seq-contiguous`), and may mark where its
//! setup ends (`# ---- check ----`): a failure before that line means the check could not be tested.

use crate::check::CheckInfo;
use crate::edition::Edition;
use crate::rules::transcript::Oracle;
use crate::trace::{ParseError, Trace};

include!(concat!(env!("OUT_DIR"), "/check_traces.rs"));

/// A check trace of the kit that cannot be used: the kit itself is broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseError {
    /// `# check:` names no registered check.
    UnknownCheck {
        /// File name under `fixtures/checks/`.
        file: &'static str,
        /// 1-based line.
        line: usize,
        /// The id as written.
        id: String,
    },
    /// `# oracle:` names no known oracle.
    UnknownOracle {
        /// File name under `fixtures/checks/`.
        file: &'static str,
        /// 1-based line.
        line: usize,
        /// The oracle's name as written.
        name: String,
    },
    /// The file has no `# check: <id>` line.
    NoCheck {
        /// File name under `fixtures/checks/`.
        file: &'static str,
    },
    /// The trace does not parse.
    Trace(ParseError),
}

impl std::fmt::Display for CaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaseError::UnknownCheck { file, line, id } => {
                write!(f, "fixtures/checks/{file}:{line}: unknown check id {id:?}")
            }
            CaseError::UnknownOracle { file, line, name } => {
                write!(f, "fixtures/checks/{file}:{line}: unknown oracle {name:?}")
            }
            CaseError::NoCheck { file } => {
                write!(f, "fixtures/checks/{file}: no `# check: <id>` line")
            }
            CaseError::Trace(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CaseError {}

/// One trace of a check.
#[derive(Debug, Clone)]
pub struct CheckCase {
    /// File name under `fixtures/checks/`.
    pub file: &'static str,
    /// The trace text as written.
    pub text: &'static str,
    /// The check it belongs to.
    pub check: &'static CheckInfo,
    /// Oracles to run after the trace passed.
    pub oracles: Vec<Oracle>,
    /// 1-based line of the `# ---- check ----` marker: failures above it are prerequisites.
    pub setup_until: Option<usize>,
    /// Editions the trace applies to (empty: all of the check's editions).
    pub editions: Vec<Edition>,
    /// The trace needs a model that follows the stub's directives (`# requires: model`).
    pub needs_model: bool,
    /// Every step lies above the `# ---- check ----` marker: the case only prepares what a later
    /// case (`# continues:`) judges, so its passing never counts as the rule judged.
    pub setup_only: bool,
    /// The methods its requests call (a request: a send with a method and a valid id), in
    /// order of first use: a method the runtime lacks makes the case unable to run.
    pub methods: Vec<String>,
}

impl CheckCase {
    /// Parses the trace, with `-32601|-32603` narrowed to `-32603` when `strict` (`--strict-upstream`)
    pub fn trace(&self, strict: bool) -> Result<Trace, CaseError> {
        self.trace_of(self.text, strict)
    }

    /// The trace with its ids and session ids (`names`: [`super::share::names`]) renamed apart
    /// for a shared process ([`super::share::renamed`]), `prefix` before each.
    pub fn trace_renamed(
        &self,
        strict: bool,
        names: &super::share::Names,
        prefix: &str,
    ) -> Result<Trace, CaseError> {
        self.trace_of(&super::share::renamed(self.text, names, prefix), strict)
    }

    fn trace_of(&self, text: &str, strict: bool) -> Result<Trace, CaseError> {
        // The alternative is written as a quoted pattern; strict mode puts the bare number there.
        let text = if strict {
            text.replace("\"{{-32601|-32603}}\"", "-32603")
        } else {
            text.to_owned()
        };
        Trace::parse(&text, &format!("fixtures/checks/{}", self.file)).map_err(CaseError::Trace)
    }

    /// Whether the trace applies to `edition`.
    pub fn applies_to(&self, edition: Edition) -> bool {
        self.editions.is_empty() || self.editions.contains(&edition)
    }
}

/// Every check case, validated: a known check id, known oracles, a trace that parses.
pub fn all() -> Result<Vec<CheckCase>, CaseError> {
    let mut out = Vec::new();
    for (file, text) in CHECK_TRACES {
        let mut check = None;
        let mut oracles = Vec::new();
        let mut setup_until = None;
        let mut needs: Vec<String> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if let Some(v) = l.strip_prefix("# check:") {
                let id = v.trim();
                check = Some(
                    crate::check::find(id).ok_or_else(|| CaseError::UnknownCheck {
                        file,
                        line: i + 1,
                        id: id.to_owned(),
                    })?,
                );
            } else if let Some(v) = l.strip_prefix("# oracle:") {
                for o in v.split_whitespace() {
                    let known = Oracle::from_name(o).ok_or_else(|| CaseError::UnknownOracle {
                        file,
                        line: i + 1,
                        name: o.to_owned(),
                    })?;
                    oracles.push(known);
                }
            } else if l == "# ---- check ----" {
                setup_until = Some(i + 1);
            } else if let Some(v) = l.strip_prefix("# needs:") {
                // Methods the case needs although it calls them before initialize (the gate's
                // case: a runtime that lacks them answers them as unknown, gated or not).
                needs.extend(v.split_whitespace().map(str::to_owned));
            }
        }
        let check = check.ok_or(CaseError::NoCheck { file })?;
        let mut case = CheckCase {
            file,
            text,
            check,
            oracles,
            setup_until,
            editions: Vec::new(),
            needs_model: false,
            setup_only: false,
            methods: Vec::new(),
        };
        let trace = case.trace(false)?;
        case.editions = trace.meta.editions.clone();
        case.needs_model = trace.meta.requires.iter().any(|r| r == "model");
        case.setup_only = setup_until.is_some_and(|m| trace.steps.iter().all(|s| s.line < m));
        case.methods = requested_methods(text);
        for m in needs {
            if !case.methods.contains(&m) {
                case.methods.push(m);
            }
        }
        out.push(case);
    }
    Ok(out)
}

/// The methods the `>> {json}` sends of `text` call as requests (an id that is a string or a
/// number) once an `initialize` was sent, in order of first use. A request before initialize
/// exercises the gate (`initialize.gates-requests`), not its method.
fn requested_methods(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut initialized = false;
    for l in text.lines() {
        let Some(json) = l.strip_prefix(">> ") else {
            continue;
        };
        // The kit's JSON.parse-faithful parser: serde_json refuses the lone surrogates some
        // sends hold on purpose.
        let Ok(v) = crate::wire::json::parse(json).map(|p| p.value) else {
            continue;
        };
        let request = v.get("id").is_some_and(|i| i.is_string() || i.is_number());
        if let (true, Some(m)) = (request, v.get("method").and_then(|m| m.as_str())) {
            initialized |= m == "initialize";
            if initialized && !out.iter().any(|o| o == m) {
                out.push(m.to_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_all_above_its_marker_is_setup_only_and_methods_are_requests_only() {
        let cases = all().unwrap();
        let setup: Vec<&str> = cases
            .iter()
            .filter(|c| c.setup_only)
            .map(|c| c.file)
            .collect();
        assert_eq!(
            setup,
            [
                "resume.across-processes.1.trace",
                "resume.no-replay.1.trace"
            ]
        );
        let resume = cases
            .iter()
            .find(|c| c.file == "resume.across-processes.2.trace")
            .unwrap();
        assert_eq!(
            resume.methods,
            ["initialize", "session/prompt", "session/resume"]
        );
        // `{"method":"shutdown"}` without an id is a notification, not a use of shutdown.
        let n = cases
            .iter()
            .find(|c| c.file == "frame.notifications-ignored.trace")
            .unwrap();
        assert!(
            !n.methods.iter().any(|m| m == "shutdown"),
            "{:?}",
            n.methods
        );
    }

    #[test]
    fn every_check_trace_parses_and_names_a_registered_check() {
        let cases = all().unwrap();
        assert!(!cases.is_empty());
        for c in &cases {
            c.trace(true).unwrap();
            for e in &c.editions {
                assert!(
                    c.check.editions.contains(*e),
                    "{} applies to {e}, which its check does not",
                    c.file
                );
            }
        }
    }

    #[test]
    fn every_check_has_a_trace_for_each_of_its_editions() {
        let cases = all().unwrap();
        let mut missing = Vec::new();
        for info in crate::check::of(crate::check::Subject::Runtime).filter(|c| !c.is_stream()) {
            for ed in info.editions.iter() {
                if !cases
                    .iter()
                    .any(|c| c.check.id == info.id && c.applies_to(ed))
                {
                    missing.push(format!("{} ({ed})", info.id));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "checks that are no stream rule and have no trace: {}",
            missing.join(", ")
        );
    }
}

#[cfg(test)]
mod strict_tests {
    use super::*;

    #[test]
    fn strict_mode_demands_the_number_minus_32603_not_a_string() {
        let c = all()
            .unwrap()
            .into_iter()
            .find(|c| c.check.id == crate::check::CheckId::ErrorUnknownMethod)
            .unwrap();
        let text = format!("{:?}", c.trace(true).unwrap());
        assert!(!text.contains("\"-32603\""), "{text}");
        assert!(
            !c.text
                .replace("\"{{-32601|-32603}}\"", "")
                .contains("{{-32601|-32603}}"),
            "every alternative is written quoted, so strict mode replaces all of them"
        );
    }
}
