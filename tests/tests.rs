//! One integration-test binary, a module per area (ripgrep's layout): linking once keeps `cargo test` fast.

mod runtime;
mod support;
