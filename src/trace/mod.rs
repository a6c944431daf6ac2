//! Golden traces: the text format ([`syntax`]), patterns with captures ([`pattern`]), the pure
//! matcher that judges a runtime's output ([`matcher`]) and its verdict types ([`failure`]), failure explanations ([`explain`]) and
//! import of raw transcripts ([`import`]). The format is documented in docs/TRACES.md.

mod error;
pub mod explain;
pub mod failure;
pub mod import;
pub mod matcher;
pub mod pattern;
pub mod repeat;
pub mod syntax;

pub use failure::{ExitInfo, Failure, FailureKind};
pub use matcher::{Action, Matcher};
pub use pattern::{Env, Pat};
pub use syntax::{Meta, Mult, ParseError, Send, Step, StepKind, Trace};
