//! (import: to be built)
