//! The wire layer: bytes in, frames out; frames in, bytes out. Pure: no I/O, no processes.
//!
//! - [`lines`]: splitting a byte stream into trimmed lines with the upstream decoder's rules;
//! - [`json`]: a `JSON.parse`/`JSON.stringify`-compatible parser and writer;
//! - [`frame`]: classifying a line the runtime reads into request / response / notification /
//!   ignored; [`envelope`](mod@envelope): the same classification read off a reused tape, for
//!   callers that need only the class, the id and the method;
//! - [`output`]: a line the runtime writes, parsed once into response / notification / not a
//!   frame;
//! - [`codes`]: JSON-RPC error codes;
//! - [`write`](mod@write): writing response, error and notification frames.
//!
//! # `#[inline]` and fuzz builds
//!
//! Some functions here are `#[inline]` for where they are compiled rather than for speed: an
//! `#[inline]` function is compiled into each crate that calls it. Fuzz builds
//! (`fuzz/rustc-wrapper`) instrument the crates under test for coverage and leave the rule
//! checker (`dsh-rules`) uninstrumented; the checker parses and judges every frame the runtime
//! writes, on this layer. So the functions of the checker's path are `#[inline]`: the tape
//! ([`json::Tape`], [`json::TapeRef`]) and its scanner, [`output::Output`], the writer's string
//! and number helpers. The runtime's calls are then compiled (and instrumented) in the runtime's
//! crate, the checker's in its own (uninstrumented), from the same source. The entry points the
//! fuzz harness calls as code under test ([`classify`], [`classify_parsed`], [`json::parse`],
//! [`json::to_string`], [`json::write_value`], [`Id::to_json`], [`Id::write_json`]) are not
//! `#[inline]`: each is a plain function over an `#[inline]` twin of the same name with `_inline`
//! (`classify_inline`, …) that only the checker calls. The checker reaching no instrumented code
//! also keeps a fuzzing run's coverage the same with the checker and without it.

pub mod codes;
pub mod envelope;
pub mod frame;
pub mod json;
pub mod lines;
pub mod output;
pub mod write;

pub use codes::ErrorCode;
pub use envelope::{envelope, Envelope};
pub use frame::{
    classify, classify_parsed, Classified, ErrorObject, Id, Ignored, Kind, Notification, Outcome,
    Params, Request, Response,
};
#[doc(hidden)]
pub use frame::{classify_inline, classify_parsed_inline};
pub use lines::{foreign_padding, trim_js, DroppedTail, LineDecoder, LineEvent};
