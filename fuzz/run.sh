#!/usr/bin/env bash
# Runs the libFuzzer target for SECONDS (default 60) on fuzz/corpus/ (kept between runs, not
# committed), seeded from examples/: each example once per entry point (first byte 0 validate,
# 1 evaluate, 2 plan). tests/wasm/fuzz_identity.test.mjs replays that corpus natively and in wasm.
# Findings (crash-*, timeout-*, oom-* files) go to fuzz/findings/; the exit status is libFuzzer's.
#   fuzz/run.sh build-asan/hapmoe_fuzz [SECONDS] [extra libFuzzer flags, e.g. -jobs=2]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p fuzz/corpus fuzz/findings
for f in examples/*.json; do
  for b in 0 1 2; do
    { printf "\\x0$b"; cat "$f"; } > "fuzz/corpus/seed-$b-$(basename "$f")"
  done
done
# -rss_limit_mb: 2 GB per input (the acceptance memory limit); -timeout: one input at most 60 s.
"$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=60 -max_len=65536 \
  -artifact_prefix=fuzz/findings/ -print_final_stats=1 "$@" fuzz/corpus
