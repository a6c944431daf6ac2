//! dsh-conformance: a wire-conformance test kit, reference runtime and fuzzer for the DeepSeek
//! Harness SDK runtime protocol (newline-delimited JSON-RPC 2.0 over a child process's stdio).
//!
//! Layers, bottom up (nothing below knows about anything above): [`wire`] → [`transport`] →
//! [`runtime`] / [`model_stub`] → [`trace`] → [`runner`] → [`suite`]. [`rules`] (the contract's
//! rule engine: frame-by-frame stream rules and whole-transcript oracles, on [`wire`] and
//! [`edition`] only) serves [`suite`], [`fuzzing`] and [`blackbox`] alike. [`contract`] is the
//! protocol those rules come from, `docs/CONTRACT.md`, built in and read by numbered section.

pub mod blackbox;
pub mod contract;
pub mod edition;
pub mod fuzzing;
pub mod loadgen;
pub mod model_stub;
pub mod mutants;
pub mod rules;
pub mod runner;
pub mod runtime;
pub mod suite;
pub mod trace;
pub mod transport;
pub mod wire;
