//! CLI entry points (to be built).
