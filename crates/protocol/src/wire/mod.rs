//! The wire layer: bytes in, frames out; frames in, bytes out. Pure: no I/O, no processes.
//!
//! - [`lines`]: splitting a byte stream into trimmed lines with the upstream decoder's rules;
//! - [`json`]: a `JSON.parse`/`JSON.stringify`-compatible parser and writer;
//! - [`frame`]: classifying a line the runtime reads into request / response / notification /
//!   ignored;
//! - [`output`]: a line the runtime writes, parsed once into response / notification / not a
//!   frame;
//! - [`codes`]: JSON-RPC error codes;
//! - [`write`](mod@write): writing response, error and notification frames.

pub mod codes;
pub mod frame;
pub mod json;
pub mod lines;
pub mod output;
pub mod write;

pub use codes::ErrorCode;
pub use frame::{
    classify, classify_parsed, Classified, ErrorObject, Id, Ignored, Kind, Notification, Outcome,
    Params, Request, Response,
};
pub use lines::{trim_js, DroppedTail, LineDecoder, LineEvent};
