// fp8q — the CUDA adapter: the only file that names the CUDA runtime, CUB or libcu++.
// Everything above it (dispatch, tile skeleton, kernels) is toolchain-neutral.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "fp8q/arch.hpp"
#include "fp8q/status.hpp"

namespace fp8q {

inline status device_count(int* count) {
  if (count == nullptr) return status::null_pointer;
  *count = 0;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // a machine without a driver: clear the sticky error
    return status::no_device;
  }
  *count = n;
  return n > 0 ? status::success : status::no_device;
}

inline status query_device(int device, device_info* info) {
  if (info == nullptr) return status::null_pointer;
  int n = 0;
  if (device_count(&n) != status::success || device < 0 || device >= n) return status::no_device;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return status::device_error;
  *info = device_info{};
  info->index = device;
  std::strncpy(info->name, p.name, sizeof(info->name) - 1);
  std::snprintf(info->arch_name, sizeof(info->arch_name), "sm_%d%d", p.major, p.minor);
  info->arch = nvidia_arch(p.major, p.minor);
  info->multiprocessors = p.multiProcessorCount;
  info->l2_bytes = p.l2CacheSize;
  info->shared_bytes_per_block = static_cast<long long>(p.sharedMemPerBlockOptin);
  info->global_bytes = static_cast<long long>(p.totalGlobalMem);
  return status::success;
}

}  // namespace fp8q
