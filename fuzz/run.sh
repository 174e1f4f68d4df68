#!/usr/bin/env bash
# Runs a libFuzzer target for SECONDS (default 60) on its corpus (kept between runs, not
# committed), seeded each run:
#   build-asan/hapmoe_fuzz          the JSON API (fuzz/corpus/): each example once per entry point
#                                   (first byte 0 validate, 1 evaluate, 2 plan);
#                                   tests/wasm/fuzz_identity.test.mjs replays this corpus natively
#                                   and in wasm
#   build-asan/hapmoe_nccl_fuzz     nccl-tests outputs (fuzz/corpus-nccl/): tests/profile/nccl-*.txt,
#                                   alone and two joined (a 0xff byte splits two files)
#   build-asan/hapmoe_log_fuzz      Megatron-LM logs (fuzz/corpus-log/): tests/profile/*.log
#   build-asan/hapmoe_profile_fuzz  profile sections (fuzz/corpus-profile/): fuzz/seeds/profile/*.json
#                                   (first byte 0: evaluate and timeline; 1: a search too)
# Findings (crash-*, timeout-*, oom-* files) go to fuzz/findings/; the exit status is libFuzzer's.
#   fuzz/run.sh build-asan/hapmoe_fuzz [SECONDS] [extra libFuzzer flags, e.g. -jobs=2]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
name=$(basename "$bin")
mkdir -p fuzz/findings
case "$name" in
  hapmoe_fuzz)
    corpus=fuzz/corpus
    mkdir -p "$corpus"
    for f in examples/*.json; do
      for b in 0 1 2; do
        { printf "\\x0$b"; cat "$f"; } > "$corpus/seed-$b-$(basename "$f")"
      done
    done
    ;;
  hapmoe_nccl_fuzz)
    corpus=fuzz/corpus-nccl
    mkdir -p "$corpus"
    cp tests/profile/nccl-*.txt "$corpus/"
    { cat tests/profile/nccl-alltoall-h100-2x8.txt; printf '\xff'; cat tests/profile/nccl-all-reduce-h100-1x8.txt; } > "$corpus/seed-two-files"
    cat tests/profile/nccl-alltoall-h100-2x8.txt tests/profile/nccl-all-reduce-h100-1x8.txt > "$corpus/seed-joined"
    ;;
  hapmoe_log_fuzz)
    corpus=fuzz/corpus-log
    mkdir -p "$corpus"
    cp tests/profile/*.log "$corpus/"
    ;;
  hapmoe_profile_fuzz)
    corpus=fuzz/corpus-profile
    mkdir -p "$corpus"
    for f in fuzz/seeds/profile/*.json; do
      for b in 0 1; do
        { printf "\\x0$b"; cat "$f"; } > "$corpus/seed-$b-$(basename "$f")"
      done
    done
    ;;
  *) echo "fuzz/run.sh: unknown target $name" >&2; exit 2 ;;
esac
# -rss_limit_mb: 2 GB per input (the acceptance memory limit); -timeout: one input at most 60 s.
"$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=60 -max_len=65536 \
  -artifact_prefix=fuzz/findings/ -print_final_stats=1 "$@" "$corpus"
