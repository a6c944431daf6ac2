#![no_main]
// Thin shim: the logic lives in the library so that `cargo test` replays the corpus through it.
libfuzzer_sys::fuzz_target!(|data: &[u8]| dsh_conformance_fuzzing::trace_parse::run(data));
