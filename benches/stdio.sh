#!/usr/bin/env bash
# The stdio comparison of issue 6 in one command: builds release, installs the real runtime
# (PyPI deepseek-harness-runtime-bin) into the venv the tests use (target/dsh-pyenv/real-runtime),
# then measures the built-in reference runtime and the real one in one run and prints ratios.
# Usage: bash benches/stdio.sh [--quick] [--cheap-only]   (BENCH_NO_REAL=1 measures ours only;
# --cheap-only: cold start and cheap frames only)
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --bins --example stdio_compare
pkg=deepseek-harness-runtime-bin
venv="$target/dsh-pyenv/real-runtime"
real=""
if [ -z "${BENCH_NO_REAL:-}" ]; then
  # Same layout and stamp as tests/support/pypi.rs, so the tests and this script share the venv.
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.installed" 2>/dev/null)" != "$pkg" ]; then
    rm -rf "$venv"
    if python3 -m venv "$venv" && "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q "$pkg"; then
      printf '%s' "$pkg" >"$venv/.installed"
    else
      echo "stdio.sh: could not install $pkg from PyPI (unreachable?): measuring the built-in runtime only" >&2
    fi
  fi
  if [ -f "$venv/.installed" ]; then
    real="$("$venv/bin/python" -c 'import deepseek_harness_runtime, os; print(os.path.join(os.path.dirname(deepseek_harness_runtime.__file__), "runtime", "deepseek-harness-sdk-runtime-linux-x64"))')"
    [ -x "$real" ] || { echo "stdio.sh: no runtime executable at $real: measuring ours only" >&2; real=""; }
  fi
fi
exec "$target/release/examples/stdio_compare" --ours "$target/release/dsh-conformance" --real "$real" "$@"
