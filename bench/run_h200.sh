#!/usr/bin/env bash
# Run fp8q_bench on the GPU machine and turn its JSON into bench.md + bench.png.
#
#   OUT=/some/dir bench/run_h200.sh
#
# from the repository root, after building with
#   cmake -B build -DFP8Q_BUILD_BENCH=ON && cmake --build build --target fp8q_bench
#
# Environment: OUT (required) output folder; BENCH (default build/bench/fp8q_bench);
# MIN_TIME (default 0.05 s of GPU time per repetition); REPS (default 10). Extra arguments go
# to fp8q_bench (e.g. --benchmark_filter='^rowwise/').
# About 1-2 minutes on an H200: 49 benchmarks x 10 repetitions x 0.05 s of GPU time, plus the
# per-iteration hold/synchronize overhead (largest, relatively, for the 5 us 128x5120 calls).
set -euo pipefail

: "${OUT:?set OUT to the output folder}"
BENCH="${BENCH:-build/bench/fp8q_bench}"
MIN_TIME="${MIN_TIME:-0.05}"
REPS="${REPS:-10}"

if [[ ! -x "$BENCH" ]]; then
  echo "run_h200.sh: $BENCH not found; build with -DFP8Q_BUILD_BENCH=ON first" >&2
  exit 2
fi
mkdir -p "$OUT"

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,temperature.gpu \
  --format=csv > "$OUT/gpu.txt" 2>&1 || true

status=0
"$BENCH" \
  --benchmark_repetitions="$REPS" \
  --benchmark_report_aggregates_only=true \
  --benchmark_min_time="$MIN_TIME" \
  --benchmark_out="$OUT/bench.json" \
  --benchmark_out_format=json \
  "$@" 2>&1 | tee "$OUT/bench.txt" || status=$?
# (with pipefail, status is fp8q_bench's: 1 when a benchmark failed; the JSON is still written)

if [[ -s "$OUT/bench.json" ]]; then
  python3 bench/report.py "$OUT/bench.json" --png "$OUT/bench.png" --md "$OUT/bench.md" || status=$?
else
  echo "run_h200.sh: no JSON written" >&2
  status=1
fi
exit "$status"
