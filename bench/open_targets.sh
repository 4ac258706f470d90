#!/usr/bin/env bash
# The open speed targets of issues 14 and 15 (README, "Where the open targets stand") in one call
# of the GPU machine: two builds, alternated pass by pass so that both see the same machine.
#
#   OUT=/some/dir BASE=dir/of/main NEW=dir/of/change bench/open_targets.sh
#
# BASE and NEW each hold fp8q_bench, fp8q_hold_probe and fp8q_group_row_probe (build here with
# -DFP8Q_BUILD_BENCH=ON, copy the three programs into a folder that `carry` names). NEW alone
# is enough for one build's figures (BASE empty). REQUIRE (default H200) must appear in the
# GPU's name, or the script stops before timing anything (exit 3): the targets are set on the
# H200, and an H100's fractions of copy differ (docs/benchmarks/h100-*). PASSES (default 2).
# About 6 minutes on an H200 for two builds.
set -uo pipefail

: "${OUT:?set OUT to the output folder}"
: "${NEW:?set NEW to the folder of the build to measure}"
BASE="${BASE:-}"
REQUIRE="${REQUIRE-H200}"
PASSES="${PASSES:-2}"
mkdir -p "$OUT"

gpu=$(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1)
echo "$gpu $(date -u +%FT%TZ)" | tee "$OUT/gpu.txt"
if [[ -n "$REQUIRE" && "$gpu" != *"$REQUIRE"* ]]; then
  echo "open_targets.sh: not an $REQUIRE; nothing timed" >&2
  exit 3
fi

builds=()
[[ -n "$BASE" ]] && builds+=("$BASE")
builds+=("$NEW")

# the rows of the open targets and their references: copy, colwise column-major (default and
# /sw), 3D colwise and transpose-rhs, per-group colwise, per-group rowwise with and without
# alignment 128
filter='^(copy|expert_colwise|expert_transpose_rhs|colwise_colmajor|group_colwise|group_rowwise_G|group_rowwise_align128_G64/e4m3fn/bf16/8192x16640/manual)'
# the held-tile families beside their no-math pipelines (docs/design.md, "Holding tiles on chip")
hold_cases="bound_held,rhs 128x5120x8192 pow2,col3d 128x5120x8192 col_hold,cm col_hold,col2d 16640x5120 cm col_hold"

for ((pass = 1; pass <= PASSES; ++pass)); do
  for b in "${builds[@]}"; do
    echo "=== fp8q_bench $b pass $pass $(date -u +%T)" | tee -a "$OUT/bench.txt"
    timeout 200 "$b/fp8q_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
      --benchmark_min_time=0.05 --benchmark_filter="$filter" 2>&1 |
      grep -v "_mean\|_stddev\|_cv" | tee -a "$OUT/bench.txt"
  done
done
for b in "${builds[@]}"; do
  echo "=== fp8q_hold_probe $b $(date -u +%T)" | tee -a "$OUT/hold.txt"
  timeout 150 "$b/fp8q_hold_probe" "$hold_cases" 2>&1 | tee -a "$OUT/hold.txt"
done
# the no-math padded per-group rowwise kernel (docs/design.md, "Bounds") and the output hashes
echo "=== fp8q_group_row_probe $NEW $(date -u +%T)" | tee -a "$OUT/group_row.txt"
timeout 90 "$NEW/fp8q_group_row_probe" 2>&1 | tee -a "$OUT/group_row.txt"
date -u | tee -a "$OUT/gpu.txt"
