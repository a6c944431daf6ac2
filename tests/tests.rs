//! One integration-test binary, a module per area (ripgrep's layout): linking once keeps `cargo test` fast.

mod blackbox;
mod client;
mod fuzz_corpus;
mod fuzz_props;
mod hostile;
mod model_stub;
mod runtime;
mod shape;
mod suite;
mod support;
mod trace;
