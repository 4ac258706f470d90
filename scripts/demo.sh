#!/usr/bin/env bash
# Builds and runs the fp8q demo: the CUDA build (fp8q_demo_cuda) when CUDA is available and a
# GPU is visible, otherwise the host build (fp8q_demo). Installs what a fresh Debian 12 lacks.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

fp8q_setup
# The demo needs neither Catch2 nor the test tree; test.sh turns them back on.
fp8q_configure -DFP8Q_BUILD_TESTS=OFF -DFP8Q_BUILD_EXAMPLES=ON

targets=(fp8q_demo)
cuda_built=0
if grep -q '^FP8Q_ENABLE_CUDA:BOOL=ON' "$fp8q_build/CMakeCache.txt"; then
  targets+=(fp8q_demo_cuda)
  cuda_built=1
fi
cmake --build "$fp8q_build" -j"$(fp8q_jobs)" --target "${targets[@]}"

if [[ $cuda_built == 1 ]] && fp8q_gpu_visible; then
  fp8q_log "running the CUDA demo"
  exec "$fp8q_build/examples/fp8q_demo_cuda"
fi
if [[ $cuda_built == 1 ]]; then
  fp8q_log "CUDA demo built, but no GPU is visible: running the host demo"
else
  fp8q_log "no CUDA toolchain: running the host demo"
fi
exec "$fp8q_build/examples/fp8q_demo"
