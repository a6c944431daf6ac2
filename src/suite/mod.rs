//! The conformance suite: a registry of checks, each enforcing one rule of CONTRACT.md, run against
//! any runtime command; verdicts reported as a table, JSON or JUnit.

pub mod baseline;
pub mod cases;
pub mod oracles;
pub mod registry;
pub mod report;
pub mod run;

pub use baseline::Baseline;
pub use registry::{CheckInfo, Editions, Severity, CHECKS};
pub use report::{CheckResult, Report, Summary, Verdict};
