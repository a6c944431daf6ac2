//! The requirements matrix, `docs/REQUIREMENTS.md`, built into the library: every normative
//! statement of `docs/CONTRACT.md` (what a runtime, or a client, must or should do) with a stable
//! id, its level and editions, and its state: covered by checks, excluded with a reason, or open.
//!
//! Each id is also an anchor in the contract, next to the statement (`<a id="r2.1-…"></a>`), so
//! the matrix links to it; `tests/suite/requirements.rs` holds the two files to each other and
//! every check to at least one requirement. The matrix is the one place that says which check
//! covers which statement.
//!
//! A row of the matrix is a Markdown table row:
//! `| [r2.1-lone-cr](CONTRACT.md#r2.1-lone-cr) | MUST | all | The rule. | checks: a.b, c.d |`,
//! the state one of `checks: <ids>`, `excluded: <reason>` or `open: <what a check would do>`.

pub mod render;

use crate::check::{CheckId, Severity};
use crate::edition::{Edition, Editions};
use std::fmt;
use std::sync::OnceLock;

/// The text of `docs/REQUIREMENTS.md` as it was when the library was built.
pub const DOCUMENT: &str = include_str!("../../docs/REQUIREMENTS.md");

/// One normative statement of the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// Its stable id, also its anchor in the contract: `r2.1-lone-cr-not-separator`.
    pub id: &'static str,
    /// The contract section it is in, as cited without the `§`: `2.1`.
    pub section: &'static str,
    /// MUST or SHOULD.
    pub level: Severity,
    /// Where it applies.
    pub editions: Editions,
    /// The statement in one sentence.
    pub text: String,
    /// Whether a check judges it.
    pub state: State,
}

/// Whether a requirement is judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// By these checks.
    Covered(Vec<CheckId>),
    /// By none, for this reason.
    Excluded(String),
    /// By none yet: what a check would send and expect.
    Open(String),
}

impl State {
    /// `covered`, `excluded` or `open`.
    pub fn name(&self) -> &'static str {
        match self {
            State::Covered(_) => "covered",
            State::Excluded(_) => "excluded",
            State::Open(_) => "open",
        }
    }
}

impl Requirement {
    /// The statement's address in the repository: `docs/CONTRACT.md#r2.1-…`.
    pub fn link(&self) -> String {
        format!("{}#{}", crate::contract::PATH, self.id)
    }

    /// Whether `check` covers it.
    pub fn covered_by(&self, check: CheckId) -> bool {
        matches!(&self.state, State::Covered(c) if c.contains(&check))
    }
}

/// A row of the matrix that does not read (1-based line of `docs/REQUIREMENTS.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    /// The row's line.
    pub line: usize,
    /// What is wrong with it.
    pub what: String,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "docs/REQUIREMENTS.md:{}: {}", self.line, self.what)
    }
}

impl std::error::Error for RowError {}

/// Every requirement of the built-in matrix, in document order.
///
/// # Panics
/// When the built-in document has a malformed row: `tests/suite/requirements.rs` (and the unit
/// test below) keep that from being released.
pub fn all() -> &'static [Requirement] {
    static ALL: OnceLock<Vec<Requirement>> = OnceLock::new();
    ALL.get_or_init(|| parse(DOCUMENT).unwrap_or_else(|e| panic!("{e}")))
}

/// The requirements `check` covers.
pub fn of_check(check: CheckId) -> impl Iterator<Item = &'static Requirement> {
    all().iter().filter(move |r| r.covered_by(check))
}

/// The requirement of this id.
pub fn find(id: &str) -> Option<&'static Requirement> {
    all().iter().find(|r| r.id == id)
}

/// Parses a matrix: every table row whose first cell is a requirement link.
pub fn parse(doc: &'static str) -> Result<Vec<Requirement>, RowError> {
    let mut out = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with("| [r") {
            continue;
        }
        let err = |what: String| RowError { line: i + 1, what };
        out.push(row(line).map_err(err)?);
    }
    Ok(out)
}

/// One row: `| [id](CONTRACT.md#id) | LEVEL | editions | text | state |`.
fn row(line: &'static str) -> Result<Requirement, String> {
    let cells: Vec<&'static str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
    let [link, level, editions, text, state] = cells[..] else {
        return Err(format!("{} cells, expected 5: {line}", cells.len()));
    };
    let id = link
        .strip_prefix('[')
        .and_then(|l| l.split_once("](CONTRACT.md#"))
        .filter(|(id, rest)| rest.strip_suffix(')') == Some(*id))
        .map(|(id, _)| id)
        .ok_or_else(|| format!("the first cell is not `[id](CONTRACT.md#id)`: {link}"))?;
    let section = id
        .strip_prefix('r')
        .and_then(|s| s.split_once('-'))
        .map(|(s, _)| s)
        .filter(|s| !s.is_empty() && s.split('.').all(|n| n.parse::<u32>().is_ok()))
        .ok_or_else(|| format!("the id is not `r<section>-<slug>`: {id}"))?;
    Ok(Requirement {
        id,
        section,
        level: match level {
            "MUST" => Severity::Must,
            "SHOULD" => Severity::Should,
            l => return Err(format!("level {l:?}, expected MUST or SHOULD")),
        },
        editions: editions_of(editions)?,
        text: unescape(text),
        state: state_of(state)?,
    })
}

fn editions_of(cell: &str) -> Result<Editions, String> {
    if cell == "all" {
        return Ok(Editions::ALL);
    }
    let mut set = Editions(0);
    for name in cell.split_whitespace() {
        let e: Edition = name.parse().map_err(|e| format!("{e}"))?;
        set = Editions(set.0 | Editions::from(e).0);
    }
    if set.0 == 0 {
        return Err("no editions".into());
    }
    Ok(set)
}

/// A cell's text: `\|` is how a table cell writes `|`.
fn unescape(cell: &str) -> String {
    cell.replace("\\|", "|")
}

fn state_of(cell: &str) -> Result<State, String> {
    let nonempty = |s: &str, what: &str| {
        let s = s.trim();
        if s.is_empty() {
            Err(format!("{what} without its text"))
        } else {
            Ok(unescape(s))
        }
    };
    if let Some(list) = cell.strip_prefix("checks:") {
        let ids = (list.split(',').map(str::trim))
            .map(|c| c.trim_matches('`'))
            .map(|c| CheckId::parse(c).ok_or_else(|| format!("no check {c:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(State::Covered(ids));
    }
    if let Some(why) = cell.strip_prefix("excluded:") {
        return Ok(State::Excluded(nonempty(why, "excluded")?));
    }
    if let Some(what) = cell.strip_prefix("open:") {
        return Ok(State::Open(nonempty(what, "open")?));
    }
    Err(format!(
        "state {cell:?}: expected `checks: …`, `excluded: …` or `open: …`"
    ))
}

/// Covered, excluded and open requirements of one section (or of all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Covered by a check.
    pub covered: usize,
    /// Excluded with a reason.
    pub excluded: usize,
    /// Open.
    pub open: usize,
    /// Open MUSTs among them.
    pub open_must: usize,
}

impl Coverage {
    /// The coverage of `reqs`.
    pub fn of<'a>(reqs: impl IntoIterator<Item = &'a Requirement>) -> Coverage {
        reqs.into_iter().fold(Coverage::default(), |c, r| c.plus(r))
    }

    /// This coverage with `r` counted.
    pub fn plus(mut self, r: &Requirement) -> Coverage {
        match r.state {
            State::Covered(_) => self.covered += 1,
            State::Excluded(_) => self.excluded += 1,
            State::Open(_) => {
                self.open += 1;
                self.open_must += usize::from(r.level == Severity::Must);
            }
        }
        self
    }

    /// All requirements counted.
    pub fn total(&self) -> usize {
        self.covered + self.excluded + self.open
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requirements: {} covered, {} excluded, {} open ({} of them MUST)",
            self.total(),
            self.covered,
            self.excluded,
            self.open,
            self.open_must
        )
    }
}

/// What one check's verdict in a run says about the requirements it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// Judged, and held (the check passed).
    Held,
    /// Judged, and broken (the check failed, known or not).
    Broken,
    /// Not judged (blocked, untestable, skipped, not run).
    NotJudged,
}

/// How a run's verdicts bear on the requirements of its edition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunCoverage {
    /// The edition's matrix.
    pub matrix: Coverage,
    /// Covered requirements with a covering check in the run.
    pub in_run: usize,
    /// Of those, judged by at least one of them.
    pub judged: usize,
    /// Of those, broken (a covering check failed).
    pub broken: usize,
}

/// The coverage of a run of `edition` whose checks judged as `verdict` says (`None`: not in
/// the run).
pub fn of_run(edition: Edition, verdict: impl Fn(CheckId) -> Option<Judgement>) -> RunCoverage {
    let reqs = || all().iter().filter(|r| r.editions.contains(edition));
    let mut run = RunCoverage {
        matrix: Coverage::of(reqs()),
        ..RunCoverage::default()
    };
    for r in reqs() {
        let State::Covered(checks) = &r.state else {
            continue;
        };
        let got: Vec<Judgement> = checks.iter().filter_map(|c| verdict(*c)).collect();
        run.in_run += usize::from(!got.is_empty());
        run.judged += usize::from(got.iter().any(|j| *j != Judgement::NotJudged));
        run.broken += usize::from(got.contains(&Judgement::Broken));
    }
    run
}

/// The top-level section a requirement is in: `2` for `2.1`.
pub fn chapter(section: &str) -> &str {
    section.split('.').next().unwrap_or(section)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_matrix_reads() {
        let all = parse(DOCUMENT).unwrap_or_else(|e| panic!("{e}"));
        assert!(!all.is_empty());
        assert_eq!(all.len(), super::all().len());
    }

    #[test]
    fn rows_read_and_errors_name_their_line() {
        let doc = "# M\n\n| Id | Level |\n|---|---|\n\
| [r2.1-a-b](CONTRACT.md#r2.1-a-b) | MUST | all | A. | checks: frame.cr-not-separator, `stdout.lf-only` |\n\
| [r3-c](CONTRACT.md#r3-c) | SHOULD | current 2026-08 | C. | excluded: not on the wire |\n\
| [r9-d](CONTRACT.md#r9-d) | MUST | legacy | D \\| E. | open: send x, expect y |\n";
        let reqs = parse(doc).unwrap();
        assert_eq!(reqs.len(), 3);
        assert_eq!((reqs[0].id, reqs[0].section), ("r2.1-a-b", "2.1"));
        assert!(reqs[0].covered_by(CheckId::StdoutLfOnly));
        assert_eq!(reqs[1].editions, Editions::QUEUED);
        assert_eq!(reqs[2].text, "D | E.");
        assert_eq!(reqs[2].state, State::Open("send x, expect y".into()));
        let c = Coverage::of(&reqs);
        assert_eq!((c.covered, c.excluded, c.open, c.open_must), (1, 1, 1, 1));
        for (bad, what) in [
            (
                "| [r2-x](CONTRACT.md#r2-y) | MUST | all | A. | open: z |",
                "first cell",
            ),
            (
                "| [r2-x](CONTRACT.md#r2-x) | MAY | all | A. | open: z |",
                "level",
            ),
            (
                "| [r2-x](CONTRACT.md#r2-x) | MUST | 2025 | A. | open: z |",
                "edition",
            ),
            (
                "| [r2-x](CONTRACT.md#r2-x) | MUST | all | A. | checks: no.such |",
                "no check",
            ),
            (
                "| [r2-x](CONTRACT.md#r2-x) | MUST | all | A. | excluded: |",
                "without",
            ),
            (
                "| [rx-x](CONTRACT.md#rx-x) | MUST | all | A. | open: z |",
                "r<section>",
            ),
        ] {
            let doc: &'static str = Box::leak(format!("\n{bad}\n").into_boxed_str());
            let e = parse(doc).unwrap_err();
            assert_eq!(e.line, 2, "{e}");
            assert!(e.what.contains(what), "{bad}: {e}");
        }
    }
}
