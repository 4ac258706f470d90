# scripts/setup.sh — shared setup for demo.sh and test.sh (sourced, not run). Everything a fresh
# Debian 12 machine lacks is installed here; nothing else on the machine is changed.
#
# Environment:
#   FP8Q_BUILD_DIR   build directory (default: build/ under the repository)
#   FP8Q_CMAKE_ARGS  extra configure arguments, e.g. "-DFP8Q_BUILD_HOST_TESTS=OFF" on a GPU box
#                    without Catch2, or "-DFP8Q_GPU_TESTS_LINEINFO=ON"
#   FP8Q_SKIP_APT=1  never call apt-get (offline machines: missing tools then skip or fail)

fp8q_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fp8q_build=${FP8Q_BUILD_DIR:-$fp8q_root/build}

fp8q_log() { printf '[fp8q] %s\n' "$*"; }

fp8q_as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    fp8q_log "need root (or sudo) to run: $*"
    return 1
  fi
}

# Debian packages the build and the full test run use. hipcc, librocprim-dev and clang-19 feed
# the AMD compile/ISA checks; without them those checks report themselves skipped.
fp8q_packages=(build-essential cmake catch2 libbenchmark-dev hipcc librocprim-dev clang-19 python3)

fp8q_install_packages() {
  local missing=() pkg
  if ! command -v dpkg-query >/dev/null 2>&1; then
    fp8q_log "not a Debian system (no dpkg-query): install ${fp8q_packages[*]} yourself"
    return 0
  fi
  for pkg in "${fp8q_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    fp8q_log "Debian packages: all present"
    return 0
  fi
  if [[ ${FP8Q_SKIP_APT:-0} == 1 ]]; then
    fp8q_log "FP8Q_SKIP_APT=1: not installing ${missing[*]}"
    return 0
  fi
  fp8q_log "installing: ${missing[*]}"
  # One update, only because something is missing; a failure (offline machine) is reported and
  # the run goes on: the configure step then says exactly what is absent.
  if ! fp8q_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
     ! fp8q_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; then
    fp8q_log "WARNING: apt-get could not install ${missing[*]}; continuing without them"
  fi
}

# nvcc lives outside PATH in a default CUDA install; CMake's CUDA detection looks on PATH.
fp8q_find_cuda() {
  if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  if command -v nvcc >/dev/null 2>&1; then
    fp8q_log "CUDA: $(command -v nvcc)"
  else
    fp8q_log "CUDA: no nvcc (CUDA targets off; GPU tests will report skipped)"
  fi
}

# fp8q_configure <extra cmake args...>
fp8q_configure() {
  # shellcheck disable=SC2086  # FP8Q_CMAKE_ARGS is a list of words on purpose
  cmake -S "$fp8q_root" -B "$fp8q_build" -DCMAKE_BUILD_TYPE=Release "$@" ${FP8Q_CMAKE_ARGS:-}
}

fp8q_jobs() { nproc 2>/dev/null || echo 2; }

fp8q_gpu_visible() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -q '^GPU '
  else
    [[ -e /dev/nvidia0 ]]
  fi
}

fp8q_setup() {
  fp8q_install_packages
  fp8q_find_cuda
}
