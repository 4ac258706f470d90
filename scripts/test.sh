#!/usr/bin/env bash
# Builds everything and runs every ctest label (host, slow, isa, package, gpu); GPU tests report
# themselves skipped where no GPU or no CUDA toolchain is present. Installs what a fresh Debian 12
# lacks. Exits non-zero on any failure.
#
#   FP8Q_CTEST_JOBS   parallel tests (default 2)
#   FP8Q_CTEST_ARGS   extra ctest arguments, e.g. "-L gpu" or "-LE slow"
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

start=$SECONDS
fp8q_setup
fp8q_configure -DFP8Q_BUILD_TESTS=ON -DFP8Q_BUILD_EXAMPLES=ON
cmake --build "$fp8q_build" -j"$(fp8q_jobs)"
fp8q_log "build done after $((SECONDS - start)) s"

cd "$fp8q_build"
set +e
# shellcheck disable=SC2086  # FP8Q_CTEST_ARGS is a list of words on purpose
ctest --output-on-failure --no-tests=error -j"${FP8Q_CTEST_JOBS:-2}" ${FP8Q_CTEST_ARGS:-}
rc=$?
set -e
fp8q_log "ctest exit $rc; total $((SECONDS - start)) s"
exit $rc
