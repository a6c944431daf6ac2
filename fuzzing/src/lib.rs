//! Fuzzing: the logic behind the cargo-fuzz targets in `fuzz/`, kept in the library so that plain
//! `cargo test` replays every committed corpus file and crasher through the very same code.
//!
//! Each target module has `run(data)` (panics on a finding: the fuzz entry point) and
//! `check(data) -> Result<(), String>` (what tests call). The frame rules live in [`dsh_conformance::rules`]. [`oracle`] is an independent model of the
//! contract's framing and classification, written without calling into [`dsh_conformance::wire`].

pub mod classify_line;
pub mod line_stream;
pub mod runtime_session;
pub mod trace_parse;

/// The independent model of the contract's framing and classification (its own crate, built
/// without coverage instrumentation in fuzz builds: see `fuzz/rustc-wrapper`).
pub use dsh_conformance_oracle as oracle;

/// A target's check: `Err` describes the first broken invariant.
pub type Check = fn(&[u8]) -> Result<(), String>;

/// The fuzz targets, by name, with their check functions (corpus replay walks this list).
pub const TARGETS: &[(&str, Check)] = &[
    ("classify_line", classify_line::check),
    ("line_stream", line_stream::check),
    ("runtime_session", runtime_session::check),
    ("trace_parse", trace_parse::check),
];
