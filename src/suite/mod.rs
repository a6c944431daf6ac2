//! The conformance suite: a registry of checks, each enforcing one rule of the contract, run
//! against any runtime command in prerequisite order; stream rules judged over every transcript;
//! verdicts reported as a table, JSON or JUnit, led by their root causes.

pub mod baseline;
pub mod cases;
pub mod causes;
pub mod exercised;
pub mod explain;
pub mod html;
pub mod judge;
pub mod methods;
pub mod options;
pub mod plan;
pub mod preflight;
pub mod probe;
pub mod report;
pub mod run;
mod schedule;
pub mod select;
pub mod share;
mod spares;
pub mod stream;
pub mod verdict;
mod warm;

pub use crate::check::{CheckId, CheckInfo, Severity, CHECKS};
pub use crate::edition::{Edition, Editions};
pub use baseline::Baseline;
pub use report::{Report, Start, Summary};
pub use verdict::{CheckResult, Failure, FailureKind, Verdict};
