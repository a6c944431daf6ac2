//! Helpers shared by the integration tests.

pub mod pypi;
pub mod report;
pub mod sandbox;
