//! dsh-protocol: the low layers of dsh-conformance, the wire-conformance kit for the DeepSeek
//! Harness SDK runtime protocol (newline-delimited JSON-RPC 2.0 over a child process's stdio).
//!
//! Bottom up: [`edition`] (the protocol's editions), [`mod@check`] (the typed check model: every
//! check's id, sections, severity, editions, prerequisites and the judge that owns it, on
//! [`edition`] only) and [`wire`] (bytes to lines, a `JSON.parse`/`JSON.stringify`-faithful JSON
//! layer, what a runtime reads and what it writes). Nothing here knows the rule checker, the
//! reference runtime or the suite: they are crates above this one (`dsh-rules`,
//! `dsh-conformance`), and `dsh-conformance` re-exports these modules under the same paths
//! (`dsh_conformance::wire`, `dsh_conformance::check`, `dsh_conformance::edition`).

pub mod check;
pub mod edition;
pub mod wire;
