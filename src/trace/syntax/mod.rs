//! The trace text format (docs/TRACES.md): the parsed form ([`Trace`] and its steps), parsed by
//! `parse` with errors that name file:line:column and what was expected (never panics on any
//! input); `lex` holds the line-level pieces (JSON extent, quoted raw bytes and their escapes).

mod lex;
mod parse;

pub use super::error::ParseError;
pub use lex::escape_raw;

/// The longest duration the kit reads (a trace's deadline or a flag): about 115 days, so that
/// an instant plus it never overflows.
pub const MAX_DURATION: Duration = Duration::from_secs(10_000_000);

/// A duration as traces and the command line's flags write it: a number with a unit, `ms`, `s`,
/// `m` or `h` (`500ms`, `1.5s`, `2m`, `1h`); `None` for anything else, a negative or non-finite
/// number, or more than [`MAX_DURATION`]. The one duration syntax of the kit.
pub fn duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (num, unit) = [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .into_iter()
        .find_map(|(suffix, unit)| Some((s.strip_suffix(suffix)?, unit)))?;
    let secs = num.trim().parse::<f64>().ok()? * unit;
    (secs >= 0.0 && secs <= MAX_DURATION.as_secs_f64()).then(|| Duration::from_secs_f64(secs))
}

use super::pattern::Pat;
use std::time::Duration;

/// How many frames one expectation stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mult {
    /// Exactly one (`<<`).
    One,
    /// Zero or one (`<<?`).
    Optional,
    /// Zero or more (`<<*`).
    Star,
}

/// What to write to the runtime.
#[derive(Debug, Clone, PartialEq)]
pub enum Send {
    /// A frame template, sent verbatim (placeholders substituted) plus `\n`.
    Frame {
        /// The text as written.
        text: String,
        /// Its `id`, as JSON text, when it has one (used to order its response).
        id: Option<String>,
        /// Its `params.sessionId` pattern, when it has one.
        session: Option<Pat>,
    },
    /// Raw bytes (from `>>raw "…"` or `>>bytes hex`); `{{…}}` placeholders are substituted.
    Raw(Vec<u8>),
    /// Wait before the next send (frames are still read meanwhile).
    Pause(Duration),
    /// Close the runtime's stdin.
    Eof,
    /// Send a signal to the runtime (`TERM`, `INT`, `KILL`, `HUP`).
    Signal(i32),
}

/// An expected frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectFrame {
    /// The compiled pattern.
    pub pat: Pat,
    /// `<<`, `<<?` or `<<*`.
    pub mult: Mult,
    /// Index of its unordered group, if any.
    pub group: Option<usize>,
    /// Source text of the line (for failure output).
    pub text: String,
}

/// One step of a trace, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum StepKind {
    /// Write something.
    Send(Send),
    /// Expect a frame.
    Expect(ExpectFrame),
    /// Expect the process to exit with one of these codes (`None` = any code).
    Exit(Option<Vec<i32>>),
}

/// A step and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What it does.
    pub kind: StepKind,
    /// 1-based line in the trace file.
    pub line: usize,
    /// `within` deadline override.
    pub within: Option<Duration>,
}

/// Per-case metadata (`# key: value` lines).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    /// `# case:` (defaults to the file stem).
    pub case: String,
    /// `# contract:` sections and rule text.
    pub contract: Vec<String>,
    /// `# editions:` (empty = all).
    pub editions: Vec<crate::edition::Edition>,
    /// `# severity:` MUST (default) or SHOULD.
    pub severity: String,
    /// `# timeout:` default deadline of each expectation in this case.
    pub timeout: Option<Duration>,
    /// `# requires:` capabilities the runner must provide (e.g. `model-stub`).
    pub requires: Vec<String>,
    /// `# env: K=V` extra environment variables.
    pub env: Vec<(String, String)>,
    /// `# source:` where an imported trace came from.
    pub source: Option<String>,
    /// `# continues:` a case whose cwd and DSH_HOME this one reuses (a later process).
    pub continues: Option<String>,
    /// `# class:` the fuzz finding class a trace reproduces (`dsh-conformance fuzz` writes it):
    /// when it names a check, `replay` judges that rule over the conversation too, as `check`
    /// judges a check's own rule over its trace.
    pub class: Option<String>,
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// File name used in messages.
    pub file: String,
    /// Metadata.
    pub meta: Meta,
    /// Steps in order.
    pub steps: Vec<Step>,
    /// `ignore` rules (whole case).
    pub ignores: Vec<(Pat, usize)>,
    /// `== stdout frames-only` (default) or `== stdout any`.
    pub frames_only: bool,
}

impl Trace {
    /// Parses trace text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Trace, ParseError> {
        let expanded = super::repeat::expand(text, file)?;
        let r = parse::Parser::new(file).run(&expanded);
        match (r, &expanded) {
            (Err(mut e), std::borrow::Cow::Owned(_)) => {
                e.col = super::repeat::source_col(text, e.line, e.col);
                Err(e)
            }
            (r, _) => r,
        }
    }

    /// Reads and parses a trace file.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<Trace, ParseError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ParseError {
            file: file.clone(),
            line: 0,
            col: 0,
            msg: format!("cannot read trace: {e}"),
        })?;
        let mut t = Trace::parse(&text, &file)?;
        if t.meta.case.is_empty() {
            t.meta.case = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        Ok(t)
    }

    /// Whether the case applies to an edition (no `# editions:` = all).
    pub fn applies_to(&self, edition: crate::edition::Edition) -> bool {
        self.meta.editions.is_empty() || self.meta.editions.contains(&edition)
    }
}
