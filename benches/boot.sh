#!/usr/bin/env bash
# Issue 38: `check`'s wall time on runtimes slow to start, with processes started ahead (the
# default, `--prespawn` from the preflight's boot) and without (`--prespawn 0`, the old
# behaviour), taking turns in one run; each pair's verdicts are compared check by check.
# Runtimes: a wrapper that sleeps 5 s before exec'ing the reference runtime; the release 0.2.1rc2
# with --model-stub (installed into target/dsh-pyenv/real-runtime as benches/stdio.sh does;
# skipped when PyPI is unreachable); the test bed's slowest Python runtime.
# With KIT_OLD=<an older dsh-conformance>, each pair is instead the old build and the new one,
# both with default flags (the waits ended by evidence and the plan are in the build, not in a
# flag), and a fourth runtime joins: chat_completions_runtime.py with no model to reach.
# Usage: bash benches/boot.sh [rounds]   (KIT=<dsh-conformance> to measure a given build;
# BOOT_ONLY_SLOW=1 for the sleeping wrapper alone; BOOT_ONLY=name,name to pick runtimes;
# BOOT_OLDER=1 adds the older release 0.1.5rc1 as "older")
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-1}"
target="${CARGO_TARGET_DIR:-target}"
if [ -z "${KIT:-}" ]; then
  cargo build --release --bins
  KIT="$target/release/dsh-conformance"
fi
ref="$(cd "$(dirname "$KIT")" && pwd)/dsh-reference-runtime"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nsleep 5\nexec %s "$@"\n' "$ref" >"$tmp/slow.sh"
chmod +x "$tmp/slow.sh"
# A release of the runtime installed into its own venv: prints its executable, or nothing when
# PyPI is unreachable.
release_exe() { # venv package
  local venv="$1" pkg="$2"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.installed" 2>/dev/null)" != "$pkg" ]; then
    rm -rf "$venv"
    if python3 -m venv "$venv" && "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q "$pkg" >&2; then
      printf '%s' "$pkg" >"$venv/.installed"
    fi
  fi
  if [ -f "$venv/.installed" ]; then
    "$venv/bin/python" -c 'import deepseek_harness_runtime, os; print(os.path.join(os.path.dirname(deepseek_harness_runtime.__file__), "runtime", "deepseek-harness-sdk-runtime-linux-x64"))'
  fi
}
real="$(release_exe "$target/dsh-pyenv/real-runtime" deepseek-harness-runtime-bin)"
# An older release (BOOT_OLDER=1): 0.1.5rc1, edition 2026-08, launched as its own SDK does.
older=""
[ -z "${BOOT_OLDER:-}" ] || older="$(release_exe "$target/dsh-pyenv/runtime-0.1.5rc1" "deepseek-harness-runtime-bin==0.1.5rc1")"

# One run: its wall time, the report's start figures, and the verdicts (one line per check).
measure() { # name prespawn-args -- check args   (flags "old": KIT_OLD, default flags)
  local name="$1" flags="$2"; shift 3
  local out="$tmp/$name-${flags// /_}.json" t0 t1 kit="$KIT"
  if [ "$flags" = old ]; then kit="$KIT_OLD"; flags=""; fi
  t0=$(date +%s.%N)
  "$kit" check $flags --format json -o "$out" "$@" >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  python3 - "$out" "$name" "${flags:-default}" "$(echo "$t1 - $t0" | bc)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r.get("start") or {}
print(f"{sys.argv[2]:<10} {sys.argv[3]:<13} wall {float(sys.argv[4]):6.1f} s  boot {s.get('boot_ms')} ms "
      f"(cpu {s.get('boot_cpu_ms')} ms)  spares/job {s.get('spares_per_job')}  {r['summary']}")
open(sys.argv[1] + ".verdicts", "w").write("\n".join(f"{c['id']} {c['verdict']}" for c in r["checks"]))
PY
}

runtimes=("slow5s|$tmp/slow.sh")
[ -n "${BOOT_ONLY_SLOW:-}" ] || runtimes+=("python|python3 fixtures/runtimes/naive_runtime.py")
[ -n "$real" ] && [ -z "${BOOT_ONLY_SLOW:-}" ] && runtimes+=("release|--model-stub --known-failing fixtures/real-0.2.1rc2.known-failing -- $real --profile sdk")
[ -n "${KIT_OLD:-}" ] && [ -z "${BOOT_ONLY_SLOW:-}" ] && runtimes+=("nomodel|python3 fixtures/runtimes/chat_completions_runtime.py")
[ -n "$older" ] && runtimes+=("older|--edition 2026-08 --model-stub -- $older --profile sdk")
before="--prespawn 0"
[ -n "${KIT_OLD:-}" ] && before=old
for round in $(seq "$rounds"); do
  for r in "${runtimes[@]}"; do
    name="${r%%|*}"; cmd="${r#*|}"
    [ -z "${BOOT_ONLY:-}" ] || [[ ",$BOOT_ONLY," == *",$name,"* ]] || continue
    case "$cmd" in --*) args=($cmd) ;; *) args=(-- $cmd) ;; esac
    measure "$name" "$before" -- "${args[@]}"
    measure "$name" "" -- "${args[@]}"
    if diff -q "$tmp/$name-${before// /_}.json.verdicts" "$tmp/$name-.json.verdicts" >/dev/null; then
      echo "$name: the same verdict for every check"
    else
      echo "$name: verdicts differ:"; diff "$tmp/$name-${before// /_}.json.verdicts" "$tmp/$name-.json.verdicts" || true
    fi
  done
done
