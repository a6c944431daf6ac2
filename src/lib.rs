//! dsh-conformance: a wire-conformance test kit, reference runtime and fuzzer for the DeepSeek
//! Harness SDK runtime protocol (newline-delimited JSON-RPC 2.0 over a child process's stdio).
//!
//! Layers, bottom up (nothing below knows about anything above): [`sys`] (signals), [`edition`],
//! [`mod@check`] (the typed check model: every check's id, severity and owning judge),
//! [`wire`] → [`directive`] → [`runtime`] / [`model_stub`] → [`trace`] → [`runner`] → [`suite`].
//! [`rules`] (the contract's rule engine: frame-by-frame stream rules and whole-transcript oracles,
//! on [`wire`], [`edition`] and [`mod@check`] only) serves [`suite`], the fuzz targets and
//! [`blackbox`] alike. [`ops`] (generated client operations, on [`wire`] and [`directive`]) feeds
//! the fuzz targets (the `dsh-conformance-fuzzing` crate in `fuzzing/`, which drives [`runtime`]
//! in memory) and the black-box fuzzer ([`blackbox`], which drives any runtime through
//! [`runner`]). [`contract`] is the protocol those rules come from, `docs/CONTRACT.md`, built in
//! and read by numbered section; [`requirements`] is its matrix (`docs/REQUIREMENTS.md`): every
//! normative statement with the checks that cover it, or why none does.
//!
//! The lowest layers are crates of their own, so the compiler keeps them one-way (see
//! `docs/ARCHITECTURE.md`): [`edition`], [`mod@check`] and [`wire`] are the `dsh-protocol` crate,
//! [`rules`] is the `dsh-rules` crate (on `dsh-protocol` only). This crate re-exports them under
//! the paths they always had (`dsh_conformance::wire::…`, `dsh_conformance::rules::Checker`), so a
//! user of the kit depends on `dsh-conformance` alone.

//!
//! # Using it from your own tests
//!
//! The entry points are re-exported here: [`check()`] runs the conformance suite against a runtime
//! command and returns a [`Report`]; [`replay`] replays one golden [`Trace`]; [`Connection`] is
//! the reference runtime in-process, for a client's tests; [`ModelStub`] is the scripted model
//! endpoint a real runtime can be pointed at.
//!
//! A runtime author's `tests/conformance.rs` (see `examples/check_my_runtime.rs`):
//!
//! ```no_run
//! use dsh_conformance::{check, CheckOptions, CommandSpec};
//!
//! let cmd = CommandSpec::new("target/debug/my-runtime").arg("--profile").arg("sdk");
//! let report = check(&cmd, "my runtime", &CheckOptions::new().jobs(2))
//!     .expect("the kit itself runs");
//! report.assert_conforms(); // panics with the human report, root causes first
//! ```
//!
//! A client author's test against the in-process reference runtime (see `examples/in_memory.rs`):
//!
//! ```
//! use dsh_conformance::{Connection, RuntimeConfig};
//! use serde_json::json;
//! use std::time::Duration;
//!
//! let mut rt = Connection::memory(RuntimeConfig::default()).unwrap();
//! let init = json!({"cwd": "/", "provider": "deepseek-official", "model": "deepseek-v4-flash"});
//! let a = rt.request(json!(1), "initialize", init, Duration::from_secs(5)).unwrap();
//! assert!(a.response["result"]["serverInfo"]["version"].is_string());
//! ```
//!
//! Internal modules ([`ops`], [`mutants`], [`loadgen`], [`blackbox`]) are public for the kit's
//! binaries and fuzz targets; they are not a stable API.
//!
//! # Features
//!
//! `cli` (default) builds the binaries, `dsh-conformance` and `dsh-reference-runtime`: their
//! argument parsing, exit codes and printing live in `src/bin/`, and only they need an argument
//! parser. A crate that only uses the library depends on it with `default-features = false`.

#[doc(hidden)]
pub mod blackbox;
pub mod client;
pub mod contract;
pub mod directive;
mod facade;
#[doc(hidden)]
pub mod loadgen;
pub mod model_stub;
#[doc(hidden)]
pub mod mutants;
#[doc(hidden)]
pub mod ops;
pub mod out;
pub mod requirements;
pub mod runner;
pub mod runtime;
pub mod suite;
pub mod sys;
pub mod trace;

// The facade over the low-layer crates: their modules at the paths the kit has always used
// (`dsh-protocol`: editions, the check model, the wire layer; `dsh-rules`: the rule checker).
#[doc(inline)]
pub use dsh_protocol::{check, edition, wire};
#[doc(inline)]
pub use dsh_rules as rules;

pub use edition::Edition;
pub use facade::{check, CheckOptions};
pub use model_stub::ModelStub;
pub use runner::{replay, CaseReport, CommandSpec, Options as ReplayOptions};
pub use runtime::memory::Connection;
pub use runtime::Config as RuntimeConfig;
pub use suite::run::RunError;
pub use suite::{Report, Verdict};
pub use trace::Trace;
