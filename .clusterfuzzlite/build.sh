#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build of the cargo-fuzz targets in fuzz/: each target's binary, the
# shared dictionary (fuzz/dsh.dict) as <target>.dict, its committed corpus as
# <target>_seed_corpus.zip and a <target>.options with the limits the fuzz smoke uses.
#
# In the base-builder-rust image $SRC, $OUT and $SANITIZER are set. `.ci/run` runs this same script
# without Docker: PROJECT_DIR=<checkout> OUT=<dir> SANITIZER=none bash .clusterfuzzlite/build.sh
project="${PROJECT_DIR:-$SRC/dsh-conformance}"
sanitizer="${SANITIZER:-address}"
cd "$project"
# .cargo/config.toml (copied with the checkout) runs rustc through fuzz/rustc-wrapper: the oracle,
# harness and rule checker crates are built without coverage instrumentation, every other crate as
# cargo-fuzz asks.
# cargo-fuzz passes nightly-only flags; harmless on the image's nightly, needed on stable.
export RUSTC_BOOTSTRAP=1
cargo fuzz build --sanitizer "$sanitizer"
bin_dir=fuzz/target/x86_64-unknown-linux-gnu/release
mkdir -p "$OUT"
for target in $(cargo fuzz list); do
    # bare_* targets are the fuzz-bench's yardsticks, not fuzzers.
    case "$target" in bare_*) continue ;; esac
    cp "$bin_dir/$target" "$OUT/$target"
    cp fuzz/dsh.dict "$OUT/$target.dict"
    printf '[libfuzzer]\nmax_len = 8192\ntimeout = 10\n' > "$OUT/$target.options"
    rm -f "$OUT/${target}_seed_corpus.zip"
    (cd "fuzz/corpus/$target" && python3 -m zipfile -c "$OUT/${target}_seed_corpus.zip" .)
done
echo "build.sh: $(cargo fuzz list | grep -vc '^bare_') targets in $OUT"
