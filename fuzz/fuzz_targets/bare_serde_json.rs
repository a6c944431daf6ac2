#![no_main]
// Yardstick, not a test: a bare serde_json parse, so `.ci/fuzz-bench` can express every target's
// exec/s as a ratio to the cheapest meaningful work per input. `.ci/fuzz-smoke` skips `bare_*`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = std::hint::black_box(serde_json::from_slice::<serde_json::Value>(data));
});
