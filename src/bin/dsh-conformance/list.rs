//! The `--list` forms of `check` and `client`: one text, human or JSON, written to `--output` or
//! stdout.

use crate::args::Format;
use std::path::Path;

/// Writes the list `what` (`check --list`, say) in `format` to `output` or stdout; returns the
/// exit code. Only the form asked for is made.
pub(crate) fn emit(
    what: &str,
    format: Format,
    output: Option<&Path>,
    human: impl FnOnce() -> String,
    json: impl FnOnce() -> serde_json::Value,
) -> i32 {
    let text = match format {
        Format::Human => human(),
        Format::Json => format!("{:#}\n", json()),
        Format::Junit | Format::Html => {
            eprintln!(
                "dsh-conformance {what}: --format junit and html have no list form (use human or json)"
            );
            return 2;
        }
    };
    match output {
        Some(p) => match std::fs::write(p, text) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("dsh-conformance {what}: --output {}: {e}", p.display());
                2
            }
        },
        None => {
            dsh_conformance::out!("{text}");
            0
        }
    }
}
