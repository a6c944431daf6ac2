//! Fuzz target `trace_parse`: arbitrary text through the golden-trace parser.
//!
//! - [`Trace::parse`] returns a trace or an error, never panics;
//! - an error names a position inside the text (1-based line and column, at most one past the end);
//! - every compiled pattern of a parsed trace (expectations and `ignore` rules) prints back as
//!   trace JSON ([`Pat::to_value`]) that compiles to the same pattern, and printing is a fixed point.

use dsh_conformance::trace::syntax::StepKind;
use dsh_conformance::trace::{pattern, Pat, Trace};

/// Runs the check; panics with a description on failure (the fuzz entry point).
pub fn run(data: &[u8]) {
    if let Err(e) = check(data) {
        panic!("trace_parse: {e}");
    }
}

/// Runs the check on one input.
pub fn check(data: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(data);
    match Trace::parse(&text, "fuzz.trace") {
        Err(e) => {
            let lines: Vec<&str> = text.split('\n').collect();
            if e.line == 0 || e.line > lines.len() + 1 {
                return Err(format!(
                    "error line {} outside 1..={}: {e}",
                    e.line,
                    lines.len()
                ));
            }
            let width = lines.get(e.line - 1).map_or(0, |l| l.chars().count());
            if e.col == 0 || e.col > width + 1 {
                return Err(format!(
                    "error column {} outside 1..={} of line {}: {e}",
                    e.col,
                    width + 1,
                    e.line
                ));
            }
            Ok(())
        }
        Ok(t) => {
            for step in &t.steps {
                if let StepKind::Expect(x) = &step.kind {
                    pattern_round_trips(&x.pat)
                        .map_err(|e| format!("line {} ({}): {e}", step.line, x.text))?;
                }
            }
            for (p, line) in &t.ignores {
                pattern_round_trips(p).map_err(|e| format!("ignore on line {line}: {e}"))?;
            }
            Ok(())
        }
    }
}

/// `compile(print(p)) == p`, and printing that again gives the same text.
pub fn pattern_round_trips(p: &Pat) -> Result<(), String> {
    let exact = matches!(p, Pat::Obj(_, true));
    let printed = p.to_value();
    let again = pattern::compile(&printed, exact)
        .map_err(|e| format!("printed pattern {printed} does not compile: {e}"))?;
    if again != *p {
        return Err(format!(
            "printed pattern {printed} compiles to something else:\n  was   {p:?}\n  now   {again:?}"
        ));
    }
    if again.to_value() != printed {
        return Err(format!("printing is not a fixed point: {printed}"));
    }
    Ok(())
}
