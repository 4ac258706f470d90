#!/usr/bin/env bash
# Runs ON the GPU machine (through the device tool), from the repo root, with .deps carried:
#   scripts/h200.sh build    configure + build the GPU tests, demo and benchmark (build-gpu/)
#   scripts/h200.sh test     run the GPU tests (+ compute-sanitizer memcheck/racecheck, quick mode)
#   scripts/h200.sh full     the full GPU suite: test_quantize_gpu's 13 parts (format/input, rest)
#                            as 13 processes and every other GPU test beside them, one log each
#                            (TIMEOUT s each), then one line per log
#   scripts/h200.sh bench    run the benchmarks (JSON, Markdown table, PNG)
#   scripts/h200.sh demo     run the CUDA demo
#   scripts/h200.sh compare  OLD_BENCH=<old fp8q_bench> [MID_BENCH=<another>]: old, mid and this
#                            build's benchmarks in one call, compared by bench/compare.py
# BIN=<dir> runs binaries built elsewhere (nvcc here, carried) instead of build-gpu/.
# Logs and results leave as one tarball, $OUT/h200_logs.tgz: the device tool brings back at most
# 8 files from $OUT.
set -uo pipefail
dest=${OUT:-/tmp/fp8q-out}
OUT=$(mktemp -d)
mkdir -p "$dest"
trap 'tar czf "$dest/h200_logs.tgz" -C "$OUT" .' EXIT
source .deps/unpack.sh
build=build-gpu
bin_tests=$build/tests/gpu
bench_bin=$build/bench/fp8q_bench
demo_bin=$build/examples/fp8q_demo_cuda
if [ -n "${BIN:-}" ]; then bin_tests=$BIN; bench_bin=$BIN/fp8q_bench; demo_bin=$BIN/fp8q_demo_cuda; fi
case "${1:-all}" in
  build)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
    cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DFP8Q_BUILD_BENCH=ON -DFP8Q_ISA_CHECKS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DFP8Q_GPU_TESTS_LINEINFO=ON > "$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; exit 1; }
    targets=$(cmake --build $build --target help | awk '/test_.*gpu|fp8q_bench|fp8q_demo/ {print $2}' | tr '\n' ' ')
    echo "targets: $targets"
    cmake --build $build -j16 --target $targets > "$OUT/build.log" 2>&1 || { grep -E "error" -A5 "$OUT/build.log" | head -60; exit 1; }
    echo "build ok"
    ;;
  test)
    rc=0
    for t in $bin_tests/test_*_gpu; do
      [ -x "$t" ] || continue
      echo "== $t"; "$t" 2>&1 | tee "$OUT/$(basename $t).log" | tail -25; [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    done
    if [ -x $bin_tests/test_quantize_gpu ]; then
      for tool in memcheck racecheck; do
        echo "== compute-sanitizer --tool $tool test_quantize_gpu --quick"
        compute-sanitizer --tool $tool --error-exitcode 9 $bin_tests/test_quantize_gpu --quick \
          > "$OUT/sanitizer_$tool.log" 2>&1; echo "sanitizer $tool rc=$?"; tail -4 "$OUT/sanitizer_$tool.log"
      done
    fi
    if [ -x $bin_tests/test_grouped_gpu ]; then
      for tool in memcheck racecheck; do
        echo "== compute-sanitizer --tool $tool test_grouped_gpu"
        timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $bin_tests/test_grouped_gpu \
          >> "$OUT/sanitizer_$tool.log" 2>&1; echo "sanitizer $tool rc=$?"; tail -3 "$OUT/sanitizer_$tool.log"
      done
    fi
    exit $rc
    ;;
  full)
    pids=()
    for part in rest {e4m3fn,e4m3fnuz,e5m2,e5m2fnuz}/{bf16,f16,f32}; do
      timeout "${TIMEOUT:-400}" stdbuf -oL $bin_tests/test_quantize_gpu --only $part > "$OUT/full_${part/\//_}.log" 2>&1 &
      pids+=($!)
    done
    for t in $bin_tests/test_*_gpu; do
      [ -x "$t" ] && [ "$(basename $t)" != test_quantize_gpu ] || continue
      timeout "${TIMEOUT:-400}" stdbuf -oL "$t" > "$OUT/$(basename $t).log" 2>&1 &
      pids+=($!)
    done
    rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    for f in "$OUT"/full_*.log "$OUT"/test_*_gpu.log; do echo "== $(basename $f): $(grep -E 'checks|failing|FAIL' "$f" | tail -3 | tr '\n' ' ')"; done
    exit $rc
    ;;
  bench)
    OUT=$OUT BENCH=$bench_bin bash bench/run_h200.sh
    ;;
  demo)
    "$demo_bin" 2>&1 | tee "$OUT/demo.log"
    ;;
  compare)
    # OLD_BENCH (and optionally MID_BENCH, e.g. a build between the two) against this build's
    # bench, in one call: new (every benchmark), old and mid (default tunings only), new again
    # (default tunings only; old also its sw/hw variants: a drift of the card over the run shows as new vs new again).
    : "${OLD_BENCH:?set OLD_BENCH to the old fp8q_bench}"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,temperature.gpu \
      --format=csv > "$OUT/gpu.txt" 2>&1 || true
    flags=(--benchmark_repetitions="${REPS:-10}" --benchmark_report_aggregates_only=true
           --benchmark_min_time="${MIN_TIME:-0.05}" --benchmark_out_format=json)
    defaults='^[a-z_0-9]+/[a-z0-9]+/bf16/[0-9x]+/manual_time$'
    "$bench_bin" "${flags[@]}" --benchmark_out="$OUT/new.json" > /dev/null 2>&1 || echo "new bench exit $?"
    "$OLD_BENCH" "${flags[@]}" --benchmark_filter='^[a-z_0-9]+/[a-z0-9]+/bf16/[0-9x]+(/sw|/hw)?/manual_time$' --benchmark_out="$OUT/old.json" > /dev/null 2>&1 || echo "old bench exit $?"
    if [ -n "${MID_BENCH:-}" ]; then
      "$MID_BENCH" "${flags[@]}" --benchmark_filter="$defaults" --benchmark_out="$OUT/mid.json" > /dev/null 2>&1 || echo "mid bench exit $?"
    fi
    "$bench_bin" "${flags[@]}" --benchmark_filter="$defaults" --benchmark_out="$OUT/new2.json" > /dev/null 2>&1 || echo "new bench (again) exit $?"
    {
      echo "## old vs new"; python3 bench/compare.py "$OUT/old.json" "$OUT/new.json"
      if [ -n "${MID_BENCH:-}" ]; then
        echo; echo "## old vs mid"; python3 bench/compare.py "$OUT/old.json" "$OUT/mid.json"
        echo; echo "## mid vs new"; python3 bench/compare.py "$OUT/mid.json" "$OUT/new.json"
      fi
      echo; echo "## new vs new again"; python3 bench/compare.py "$OUT/new.json" "$OUT/new2.json"
    } > "$OUT/compare.md"
    grep -E "default-tuning|^## " "$OUT/compare.md"
    python3 bench/report.py "$OUT/new.json" --md "$OUT/bench.md" --png "$OUT/bench.png" | \
      grep -E "^\| (rowwise|colwise|tensorwise|group)" | grep -vE "/(tile|threads|direct|staged|relaxed|acq_rel|seq_cst)" || true
    ;;
esac
