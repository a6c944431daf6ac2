//! Golden traces: the runner against mock runtimes (failure paths, broken variants), the fixture
//! set against real runtimes, and import of raw transcripts.

mod broken;
mod clean_start;
mod fixtures;
mod hostile;
mod import;
mod record;
mod tap;
mod tape;

use dsh_conformance::runner::{replay, CaseReport, CommandSpec, Options};
use dsh_conformance::trace::{Failure, Trace};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The crate root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture by path relative to fixtures/.
pub fn fixture(rel: &str) -> Trace {
    let p = root().join("fixtures").join(rel);
    Trace::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// Every `.trace` under `dir` (sorted).
pub fn traces_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "trace") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The python mock runtime in `mode`.
pub fn mock(mode: &str) -> CommandSpec {
    CommandSpec::new("python3")
        .arg(
            root()
                .join("tests/trace/mock_runtime.py")
                .to_string_lossy()
                .into_owned(),
        )
        .arg(mode)
}

/// Short deadlines: mock runtimes answer at once; these only bound a hang.
pub fn quick() -> Options {
    Options {
        frame_timeout: Duration::from_secs(3),
        case_timeout: Duration::from_secs(60),
        ..Options::default()
    }
}

/// Replays a trace text against a command.
pub fn run_text(text: &str, cmd: &CommandSpec, opts: &Options) -> CaseReport {
    let t = Trace::parse(text, "inline.trace").unwrap_or_else(|e| panic!("{e}"));
    replay(&t, cmd, opts)
}

/// The frame a failure quotes as the closest (or offending) one, parsed.
pub fn closest(f: &Failure) -> serde_json::Value {
    let text = f
        .closest
        .as_deref()
        .unwrap_or_else(|| panic!("no frame: {f}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The JSON pointer of a failure's smallest difference.
pub fn differs_at(f: &Failure) -> &str {
    let d = f
        .diff
        .as_ref()
        .unwrap_or_else(|| panic!("no difference: {f}"));
    &d.pointer
}

/// The frames a trace sends (`>>` lines), parsed (placeholders left as written).
pub fn sent(t: &Trace) -> Vec<serde_json::Value> {
    t.steps
        .iter()
        .filter_map(|s| match &s.kind {
            dsh_conformance::trace::StepKind::Send(dsh_conformance::trace::Send::Frame {
                text,
                ..
            }) => Some(serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))),
            _ => None,
        })
        .collect()
}
